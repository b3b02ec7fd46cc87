//! `twelve serve`: command-line flags and the glue to its library crate.
use std::process::ExitCode;

/// Flags of `twelve serve`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `twelve serve`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`twelve serve` is being built in this change")
}
