//! `twelve bench`: command-line flags and the glue to its library crate.
use std::process::ExitCode;

/// Flags of `twelve bench`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `twelve bench`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`twelve bench` is being built in this change")
}
