//! `twelve upgrade`: ask a running `twelve serve` to start its next generation, through its
//! control socket (waits for the answer: ready, or why it failed) or with SIGUSR2.

use anyhow::{Context, bail};
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `twelve upgrade`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The server's control socket (`twelve serve --control PATH`): prints the answer, which
    /// comes once the new generation is ready (exit 0) or says why it failed (exit 1).
    #[arg(long, value_name = "PATH")]
    control: Option<PathBuf>,
    /// Send SIGUSR2 to this `twelve serve` process and return at once (no answer: the
    /// server's log says how it went; use --control to wait for it).
    #[arg(long, value_name = "PID", conflicts_with = "control")]
    pid: Option<i32>,
    /// Ask for the server's status instead (with --control).
    #[arg(long, requires = "control")]
    status: bool,
}

/// Runs `twelve upgrade`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(pid) = args.pid {
        twelve_sys::inherit::signal_upgrade(pid).with_context(|| format!("--pid {pid}"))?;
        println!("twelve upgrade: sent SIGUSR2 to {pid}");
        return Ok(ExitCode::SUCCESS);
    }
    let Some(path) = args.control else {
        bail!("give --control PATH or --pid PID");
    };
    let shown = path.display();
    let command = if args.status { "status" } else { "upgrade" };
    let answer = twelve_engine::restart::command(&path, command)
        .with_context(|| format!("--control {shown}"))?;
    if answer.is_empty() {
        bail!("--control {shown}: the server closed the connection without an answer");
    }
    println!("{answer}");
    let ok = answer.starts_with("ready") || answer.starts_with("serving");
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
