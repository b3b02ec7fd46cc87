//! Starting the next generation (docs/restart.md, "Upgrade"): spawn the configured program
//! with its arguments, hand it every listener by name over an inherited socketpair, and wait
//! until it reports ready, or kill it and carry on (rollback).

use super::handover::{self, Channel, Message};
use super::{Error, Options};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::process::{Child, Command};
use std::time::Duration;

/// The variable naming a successor's end of the socketpair (a descriptor number).
pub const CHANNEL_ENV: &str = "TWELVE_UPGRADE_FD";
/// The variable giving a successor its generation number.
pub const GENERATION_ENV: &str = "TWELVE_GENERATION";
/// systemd's socket-activation variables: they describe this process's start, never the
/// successor's (whose listeners come over the socketpair).
const SYSTEMD_ENV: [&str; 3] = ["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"];

/// A successor that reported ready.
#[derive(Debug)]
pub(crate) struct Ready {
    pub(crate) pid: u32,
    pub(crate) generation: u64,
    /// Kept so that the successor is never reaped as someone else's child; dropping a
    /// `Child` neither waits for nor kills it.
    _child: Child,
}

/// Starts generation `generation` with `listeners` (name, descriptor) and waits for it.
/// Once it is ready, `on_ready` runs (this process stops taking control connections) and the
/// successor is told to go on. On any failure the successor is killed and reaped, and the
/// error says why; this process and its listeners are untouched.
pub(crate) fn start(
    options: &Options,
    generation: u64,
    listeners: &[(String, BorrowedFd<'_>)],
    on_ready: impl FnOnce(),
) -> Result<Ready, String> {
    let (channel, theirs) = handover::channel_pair().map_err(|e| format!("socketpair: {e}"))?;
    let mut child = spawn(options, generation, &theirs)?;
    // Our copy of their end must go, or their exit would never show as EOF here.
    drop(theirs);
    let outcome = hand_over(&channel, listeners).and_then(|()| await_ready(&channel, options));
    match outcome {
        Ok(()) => {
            on_ready();
            // If it died meanwhile, its own exit says so; nothing here can help any more.
            let _ = channel.send_text("go");
            Ok(Ready {
                pid: child.id(),
                generation,
                _child: child,
            })
        }
        Err(why) => {
            let _ = child.kill();
            let status = child
                .wait()
                .map_or_else(|e| e.to_string(), |s| s.to_string());
            Err(format!(
                "{why} (generation {generation}, pid {}: {status})",
                child.id()
            ))
        }
    }
}

fn spawn(options: &Options, generation: u64, theirs: &OwnedFd) -> Result<Child, String> {
    handover::inheritable(theirs).map_err(|e| format!("socketpair: {e}"))?;
    let mut cmd = Command::new(&options.program);
    cmd.args(&options.args)
        .env(CHANNEL_ENV, theirs.as_raw_fd().to_string())
        .env(GENERATION_ENV, generation.to_string());
    for name in SYSTEMD_ENV {
        cmd.env_remove(name);
    }
    cmd.spawn()
        .map_err(|e| format!("cannot start {}: {e}", options.program.display()))
}

fn hand_over(channel: &Channel, listeners: &[(String, BorrowedFd<'_>)]) -> Result<(), String> {
    // A successor that exits before reading makes this fail with EPIPE (or ECONNRESET): the
    // wait below then reports its exit, which says more.
    match channel.send_listeners(listeners) {
        Ok(()) => Ok(()),
        Err(e) => match channel.recv(Some(Duration::ZERO)) {
            Ok(Message::Closed) => Err("exited before it took the listeners".to_owned()),
            _ => Err(format!("handing over the listeners: {e}")),
        },
    }
}

fn await_ready(channel: &Channel, options: &Options) -> Result<(), String> {
    match channel.recv(Some(options.upgrade_timeout)) {
        Ok(Message::Text(t)) if t.starts_with("ready") => Ok(()),
        Ok(Message::Text(t)) => Err(t),
        Ok(Message::Closed) => Err("exited before it was ready".to_owned()),
        Ok(Message::TimedOut) => Err(format!(
            "not ready within the upgrade timeout ({}s)",
            options.upgrade_timeout.as_secs_f64()
        )),
        Ok(Message::Listener(name, _)) => Err(format!("sent a listener ({name}) instead of ready")),
        Err(e) => Err(format!("handover channel: {e}")),
    }
}

/// The successor's side: the channel its parent left it, if it was started as a successor.
pub(crate) fn inherited_channel() -> Result<Option<Channel>, Error> {
    let Some(value) = std::env::var_os(CHANNEL_ENV) else {
        return Ok(None);
    };
    let fd: i32 = value.to_str().and_then(|v| v.parse().ok()).ok_or_else(|| {
        Error::Inherited(format!("{CHANNEL_ENV}={value:?}: not a descriptor number"))
    })?;
    let fd = twelve_sys::inherit::take_inherited(fd)
        .map_err(|e| Error::Inherited(format!("{CHANNEL_ENV}={fd}: {e}")))?;
    Ok(Some(Channel::from_fd(fd)))
}

/// This process's generation: given by its parent, else 1.
pub(crate) fn generation() -> u64 {
    std::env::var(GENERATION_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

/// Borrows every named descriptor, for [`start`].
pub(crate) fn borrow_all(named: &[(String, OwnedFd)]) -> Vec<(String, BorrowedFd<'_>)> {
    named
        .iter()
        .map(|(n, fd)| (n.clone(), fd.as_fd()))
        .collect()
}
