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

#[cfg(test)]
mod tests {
    use super::*;

    fn options(program: &str, args: &[&str], timeout: Duration) -> Options {
        Options {
            program: program.into(),
            args: args.iter().map(Into::into).collect(),
            upgrade_timeout: timeout,
            control: None,
        }
    }

    macro_rules! ready_answer {
        ($($name:ident: $send:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                let (parent, child) = handover::channel_pair().unwrap();
                let child = Channel::from_fd(child);
                let send: Option<&str> = $send;
                match send {
                    Some(text) => child.send_text(text).unwrap(),
                    None => drop(child),
                }
                let got = await_ready(&parent, &options("x", &[], Duration::from_millis(1)));
                let want: Result<(), &str> = $want;
                match (got, want) {
                    (Ok(()), Ok(())) => {}
                    (Err(got), Err(want)) => assert!(got.contains(want), "{got}"),
                    (got, want) => panic!("{got:?}, expected {want:?}"),
                }
            }
        )*};
    }

    ready_answer! {
        ready_with_a_pid_is_ready: Some("ready 42") => Ok(());
        a_failure_is_passed_on_verbatim: Some("failed: cannot listen") => Err("failed: cannot listen");
        a_closed_channel_is_an_exit: None => Err("exited before it was ready");
    }

    #[test]
    fn silence_past_the_timeout_names_the_timeout() {
        let (parent, _child) = handover::channel_pair().unwrap();
        let got = await_ready(&parent, &options("x", &[], Duration::from_millis(1)));
        assert_eq!(
            got.unwrap_err(),
            "not ready within the upgrade timeout (0.001s)"
        );
    }

    #[test]
    fn a_successor_that_exits_or_hangs_is_killed_and_reported() {
        let never = || panic!("on_ready must not run for a failed successor");
        let exits = options("/bin/sh", &["-c", "exit 3"], Duration::from_secs(30));
        let err = start(&exits, 2, &[], never).unwrap_err();
        assert!(
            err.contains("exited before") && err.contains("exit status: 3"),
            "{err}"
        );
        let hangs = options(
            "/bin/sh",
            &["-c", "exec sleep 60"],
            Duration::from_millis(50),
        );
        let err = start(&hangs, 2, &[], never).unwrap_err();
        assert!(
            err.contains("not ready within") && err.contains("SIGKILL"),
            "{err}"
        );
        let missing = options("/nonexistent/twelve", &[], Duration::from_secs(1));
        let err = start(&missing, 2, &[], never).unwrap_err();
        assert!(err.starts_with("cannot start /nonexistent/twelve"), "{err}");
    }
}
