//! `twelve doctor`: command-line flags and the glue to its library crate.
use std::process::ExitCode;

/// Flags of `twelve doctor`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `twelve doctor`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`twelve doctor` is being built in this change")
}
