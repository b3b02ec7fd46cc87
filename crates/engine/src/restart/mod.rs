//! Restarts and upgrades without losing a connection (docs/restart.md): one generation of a
//! server from its start to its exit.
//!
//! [`run`] takes the engine's [`Config`] and [`Router`](crate::Router), starts the server on the listeners it
//! finds (handed over by the previous generation, passed by systemd's socket activation, or
//! fresh), and serves until an upgrade hands every listener to a successor or a stop signal
//! arrives; either way it drains, then returns how it ended. What happens on the way is
//! reported to a callback as a [`Notice`]; nothing is printed.
//!
//! Requests reach a generation two ways, both handled here:
//! - signals: [`run`] installs handlers (through signal-hook) for SIGTERM and SIGINT (stop and
//!   drain) and SIGUSR2 (upgrade) before the workers start, so the embedding program neither
//!   handles these signals nor passes them on;
//! - the control socket ([`Options::control`]): one command line per connection (`upgrade`,
//!   `restart` or `status`), one answer line back, which for an upgrade comes once the
//!   successor is ready or says why it failed. [`command`] is the client's side.
//!
//! An upgrade starts [`Options::program`] with [`Options::args`] (the running program
//! re-executed: replace the file at the path first to upgrade, leave it to restart), hands it
//! every listener and the control socket by name over an inherited socketpair ([`handover`]),
//! and waits until it reports ready; then this generation stops accepting and drains while
//! the successor serves. A successor that exits or is not ready within
//! [`Options::upgrade_timeout`] is killed and this generation carries on (rollback). The
//! successor is the same program calling [`run`]: it finds its parent's socketpair in
//! [`CHANNEL_ENV`] and its generation number in [`GENERATION_ENV`].
//!
//! systemd: readiness, reloading, stopping and the main pid go to `NOTIFY_SOCKET` (set
//! `NotifyAccess=all`, since successors are the service's new main process), and the
//! listeners of a `.socket` unit are taken by name (see `activation`).
//!
//! crates/engine/examples/upgrade.rs is a whole program built on it.

mod activation;
mod control;
mod generation;
pub mod handover;
mod successor;

pub use control::command;
pub use generation::run;
pub use successor::{CHANNEL_ENV, GENERATION_ENV};

use crate::{Config, MetricsSnapshot, ServerHandle, StartError};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// How a generation upgrades: what it starts, how long it waits, where it listens for
/// commands.
#[derive(Clone, Debug)]
pub struct Options {
    /// The program an upgrade starts. Give the configured path, resolved at start, not
    /// `/proc/self/exe`, which keeps naming the old file once the one at the path has been
    /// replaced.
    pub program: PathBuf,
    /// Its arguments (after the program name): this process's own, usually.
    pub args: Vec<OsString>,
    /// How long the successor has to report ready before it is killed.
    pub upgrade_timeout: Duration,
    /// The control socket's path, if there is one; a stale socket file (nobody answers on it)
    /// is replaced, a live one is an error.
    pub control: Option<PathBuf>,
}

impl Options {
    /// This program (its path as resolved now) with this process's arguments, 10 s to get
    /// ready, no control socket.
    pub fn this_program() -> std::io::Result<Self> {
        Ok(Self {
            program: std::env::current_exe()?,
            args: std::env::args_os().skip(1).collect(),
            upgrade_timeout: Duration::from_secs(10),
            control: None,
        })
    }
}

/// The generation that took over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Successor {
    /// Its generation number (one more than this one's).
    pub generation: u64,
    /// Its process id.
    pub pid: u32,
}

/// Something a generation reports on its way, in this order: `Serving` (once), then any
/// number of `UpgradeFailed`, then `Upgraded` or `Stopping`, any number of `Refused`, and
/// `Drained`.
#[non_exhaustive]
pub enum Notice<'a> {
    /// The workers accept on their listeners (`config.generation` is this generation's); the
    /// predecessor, if any, has not yet been told to stop.
    Serving {
        /// The running server.
        server: &'a ServerHandle,
        /// Its configuration.
        config: &'a Config,
    },
    /// `net.ipv4.tcp_migrate_req` is 0 and several workers share each address: a per-CPU
    /// listener closed outside a handover (a crashed successor that had taken them, a start
    /// with fresh listeners) resets what is queued on it (docs/kernel-facts.md). Reported by
    /// the first generation only: its successors run in the same namespace.
    MigrateReqOff,
    /// An upgrade failed; this generation carries on serving.
    UpgradeFailed {
        /// This generation.
        generation: u64,
        /// Why, as the control client is told.
        why: &'a str,
    },
    /// The successor is ready and this generation has stopped accepting; it drains now.
    Upgraded {
        /// This generation.
        generation: u64,
        /// The one that serves now.
        successor: Successor,
        /// `false` when a worker was still accepting a second after the stop (a slow
        /// handler): it may answer a connection or two before the successor does.
        stopped_accepting: bool,
    },
    /// A stop signal (SIGTERM, SIGINT) arrived; this generation drains and exits.
    Stopping {
        /// The signal.
        signal: i32,
    },
    /// A SIGUSR2 arrived while this generation drains; it is refused.
    Refused {
        /// Why, naming the generation that serves now, if any.
        why: &'a str,
    },
    /// Every worker has drained and exited.
    Drained {
        /// This generation.
        generation: u64,
        /// The workers' last counters.
        last: &'a MetricsSnapshot,
    },
}

/// How a generation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// A successor took over; this generation has drained.
    Upgraded(Successor),
    /// A stop signal (0: no signal can arrive any more); this generation has drained.
    Stopped(i32),
    /// A second stop signal cut the drain short: the workers may still be answering. Exit the
    /// process at once.
    Abandoned(i32),
}

/// Why a generation could not start.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The server did not start.
    Start(StartError),
    /// The control socket at `path` cannot be used.
    Control {
        /// [`Options::control`].
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// Listeners handed over by the previous generation or passed by systemd cannot be used.
    Inherited(String),
    /// A signal handler, a thread or the previous generation's channel failed.
    Io {
        /// What was being done.
        what: &'static str,
        /// The failure.
        source: std::io::Error,
    },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Start(e) => write!(f, "{e}"),
            Self::Control { path, why } => {
                write!(f, "control socket {}: {why}", path.display())
            }
            Self::Inherited(why) => f.write_str(why),
            Self::Io { what, .. } => f.write_str(what),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Start(e) => std::error::Error::source(e),
            Self::Io { source, .. } => Some(source),
            Self::Control { .. } | Self::Inherited(_) => None,
        }
    }
}

impl From<StartError> for Error {
    fn from(e: StartError) -> Self {
        Self::Start(e)
    }
}
