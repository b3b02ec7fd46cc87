//! The `twelve` command: parses the command line and hands each subcommand to its module.
#![forbid(unsafe_code)]

mod bench;
mod compare;
mod doctor;
mod flame;
mod limits;
mod live;
mod load_args;
mod load_tls;
mod measure;
mod merge;
mod outcome;
mod serve;
mod serve_tls;
mod server_cpus;
mod shard;
mod sweep;
mod upgrade;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Version line: crate version, git commit, and the CPU features the binary was built for.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("TWELVE_GIT_COMMIT"),
    ", built for ",
    env!("TWELVE_TARGET_FEATURES"),
    ")"
);

/// Serve and measure HTTP at the limits of Linux.
#[derive(Parser)]
#[command(name = "twelve", version = VERSION, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP/1.1 server: one pinned worker per CPU, per-CPU SO_REUSEPORT listeners.
    Serve(serve::Args),
    /// Generate load and measure latency (HDR, corrected for coordinated omission).
    Bench(bench::Args),
    /// Read this host and explain which of the study's tunings apply.
    Doctor(doctor::Args),
    /// Sweep concurrency or rate (one bench run per step), or find the highest rate that
    /// meets every SLO; CSV, JSON, SVG plots, HTML report.
    Sweep(sweep::Args),
    /// Measure two servers in interleaved rounds (A B A B …) and compare them figure by figure.
    Compare(compare::Args),
    /// Merge the shards of a run split across load generators (`bench --shard I/N --json`)
    /// into one report: histograms added exactly, counts summed, SLOs judged again.
    Merge(merge::Args),
    /// Start a running server's next generation (same listeners, zero failed requests) and
    /// drain the old one.
    Upgrade(upgrade::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::Sweep(args) => sweep::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Upgrade(args) => upgrade::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            // A closed pipe (`twelve bench | head`) is not an error (ripgrep's convention).
            if err
                .chain()
                .filter_map(|e| e.downcast_ref::<std::io::Error>())
                .any(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            {
                return ExitCode::SUCCESS;
            }
            eprintln!("twelve: {err:#}");
            ExitCode::from(2)
        }
    }
}
