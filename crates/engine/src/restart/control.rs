//! The control side of a generation: signals (SIGTERM/SIGINT stop, SIGUSR2 upgrades), the
//! control socket (one command line in, one answer line out), and what a draining
//! generation answers.

use super::{Error, Notice};
use crate::{MetricsSnapshot, ServerHandle};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

/// The control socket's name in a handover (and in `LISTEN_FDNAMES`).
pub(crate) const NAME: &str = "control";
/// How often the control thread looks at its stop flag while no one connects.
const CONTROL_POLL: Duration = Duration::from_millis(50);
/// How long a control client may take to send its command line.
const COMMAND_WAIT: Duration = Duration::from_secs(5);

/// Something the serving generation must act on.
pub(crate) enum Arrival {
    /// A signal: SIGUSR2 asks for an upgrade, SIGTERM/SIGINT for a stop.
    Signal(i32),
    /// A control connection, its command not read yet.
    Control(UnixStream),
    /// Every worker has drained and exited; their last counters.
    Drained(Box<MetricsSnapshot>),
}

/// A command read from a control connection.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Command {
    /// `upgrade` or `restart`: the same path (the configured program is exec'd either way;
    /// replacing the file first is what makes it an upgrade).
    Upgrade,
    /// `status`.
    Status,
    /// Anything else.
    Unknown(String),
}

/// The threads that collect what a generation must act on.
pub(crate) struct Arrivals {
    pub(crate) rx: Receiver<Arrival>,
    tx: Sender<Arrival>,
    stop: Arc<AtomicBool>,
    control: std::sync::Mutex<Option<JoinHandle<()>>>,
}

impl Arrivals {
    /// Stops taking control connections and waits until the thread has: from then on the
    /// socket's queue is the successor's alone.
    pub(crate) fn stop_control(&self) {
        // Release: the control thread's Acquire load sees it before its next accept.
        self.stop.store(true, Ordering::Release);
        let thread = self
            .control
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(t) = thread {
            let _ = t.join();
        }
    }
}

/// The signal handlers (installed before the engine starts, see `generation::run`).
pub(crate) fn signals() -> Result<signal_hook::iterator::Signals, Error> {
    use signal_hook::consts::{SIGINT, SIGTERM, SIGUSR2};
    signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGUSR2]).map_err(|source| Error::Io {
        what: "installing the SIGTERM/SIGINT/SIGUSR2 handlers",
        source,
    })
}

/// Starts the threads that turn signals and control connections into [`Arrival`]s.
pub(crate) fn start(
    mut signals: signal_hook::iterator::Signals,
    control: Option<&UnixListener>,
) -> Result<Arrivals, Error> {
    let io = |what| move |source| Error::Io { what, source };
    let (tx, rx) = std::sync::mpsc::channel();
    let to_main = tx.clone();
    let keep = tx.clone();
    std::thread::Builder::new()
        .name("twelve-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                if to_main.send(Arrival::Signal(sig)).is_err() {
                    return;
                }
            }
        })
        .map_err(io("starting the signal thread"))?;
    let stop = Arc::new(AtomicBool::new(false));
    let thread = match control {
        Some(l) => {
            let l = l
                .try_clone()
                .map_err(io("duplicating the control socket"))?;
            l.set_nonblocking(true)
                .map_err(io("making the control socket non-blocking"))?;
            let stop = stop.clone();
            let t = std::thread::Builder::new()
                .name("twelve-control".into())
                .spawn(move || accept_loop(&l, &stop, &tx))
                .map_err(io("starting the control thread"))?;
            Some(t)
        }
        None => None,
    };
    Ok(Arrivals {
        rx,
        tx: keep,
        stop,
        control: std::sync::Mutex::new(thread),
    })
}

/// Accepts control connections until told to stop. It polls rather than blocks in `accept`
/// because the successor shares the socket: a thread blocked in `accept` here would go on
/// taking connections meant for it.
fn accept_loop(l: &UnixListener, stop: &AtomicBool, tx: &Sender<Arrival>) {
    while !stop.load(Ordering::Acquire) {
        match super::handover::wait_readable(l.as_fd(), CONTROL_POLL) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(_) => return,
        }
        if stop.load(Ordering::Acquire) {
            return;
        }
        match l.accept() {
            Ok((conn, _)) => {
                let _ = conn.set_nonblocking(false);
                if tx.send(Arrival::Control(conn)).is_err() {
                    return;
                }
            }
            // EAGAIN: the successor (or a closed client) took it first.
            Err(_) => continue,
        }
    }
}

/// Binds a fresh control socket at `path`, replacing a stale one (nobody answers on it) but
/// never a live one.
pub(crate) fn bind(path: &Path) -> Result<UnixListener, Error> {
    let fail = |why: String| Error::Control {
        path: path.to_owned(),
        why,
    };
    if path.exists() {
        if UnixStream::connect(path).is_ok() {
            return Err(fail("another server answers on it".to_owned()));
        }
        std::fs::remove_file(path).map_err(|e| fail(format!("removing: {e}")))?;
    }
    UnixListener::bind(path).map_err(|e| fail(e.to_string()))
}

/// Reads one command line (bounded in time and length).
pub(crate) fn read_command(conn: &mut UnixStream) -> Command {
    let _ = conn.set_read_timeout(Some(COMMAND_WAIT));
    let mut line = String::new();
    let mut reader = BufReader::new(std::io::Read::take(&*conn, 256));
    let _ = reader.read_line(&mut line);
    match line.trim() {
        "upgrade" | "restart" => Command::Upgrade,
        "status" => Command::Status,
        other => Command::Unknown(other.to_owned()),
    }
}

/// Writes one answer line (a client that left is not an error).
pub(crate) fn reply(conn: &mut UnixStream, text: &str) {
    let _ = writeln!(conn, "{text}");
}

/// Drains: waits for the workers (on a thread of their own) while answering whatever
/// arrives meanwhile: every control connection and SIGUSR2 is refused with the reason; a
/// first SIGTERM/SIGINT after an upgrade changes nothing (a Ctrl-C that reached the whole
/// process group must not cut the drain short), any later one ends the wait at once
/// (`Err(signal)`). Arrivals queued before the workers finished are all answered before this
/// returns the last counters.
pub(crate) fn drain(
    events: Arrivals,
    handle: ServerHandle,
    generation: u64,
    successor: Option<(u64, u32)>,
    notice: &mut dyn FnMut(Notice<'_>),
) -> Result<MetricsSnapshot, i32> {
    // No new control connection from now on: after an upgrade the successor has the
    // socket; at a stop, clients are refused when it closes, not left without an answer.
    events.stop_control();
    let why = match successor {
        Some((g, pid)) => format!(
            "refused: generation {generation} is draining; generation {g} (pid {pid}) serves now"
        ),
        None => format!("refused: generation {generation} is shutting down"),
    };
    let tx = events.tx.clone();
    std::thread::spawn(move || {
        let _ = tx.send(Arrival::Drained(Box::new(handle.join_with_metrics())));
    });
    let mut stops = u8::from(successor.is_none());
    loop {
        match events.rx.recv() {
            Ok(Arrival::Drained(last)) => return Ok(*last),
            Ok(Arrival::Control(mut conn)) => {
                let _ = read_command(&mut conn);
                reply(&mut conn, &why);
            }
            Ok(Arrival::Signal(sig)) if sig == signal_hook::consts::SIGUSR2 => {
                notice(Notice::Refused { why: &why });
            }
            Ok(Arrival::Signal(sig)) => {
                stops += 1;
                if stops >= 2 {
                    return Err(sig);
                }
            }
            // Cannot happen while the drain thread holds its sender; nothing to report then.
            Err(_) => return Ok(MetricsSnapshot::default()),
        }
    }
}

/// Sends one command line (`upgrade`, `restart` or `status`) to the control socket at `path`
/// and returns the answer line, trimmed: `ready generation=G pid=P` once an upgrade's
/// successor is ready, `serving generation=G pid=P` for a status, else `failed: ...`,
/// `refused: ...` or `error: ...`. An empty answer means the server closed the connection
/// without one.
pub fn command(path: &Path, command: &str) -> std::io::Result<String> {
    let mut conn = UnixStream::connect(path)?;
    writeln!(conn, "{command}")?;
    let mut answer = String::new();
    BufReader::new(&conn).read_line(&mut answer)?;
    Ok(answer.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! parsed {
        ($($name:ident: $line:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                let (mut client, mut server) = UnixStream::pair().unwrap();
                client.write_all($line).unwrap();
                drop(client);
                assert_eq!(read_command(&mut server), $want);
            }
        )*};
    }

    parsed! {
        upgrade_is_an_upgrade: b"upgrade\n" => Command::Upgrade;
        restart_is_the_same_path: b"restart\n" => Command::Upgrade;
        status_without_a_newline: b"status" => Command::Status;
        spaces_around_are_trimmed: b"  status \r\n" => Command::Status;
        anything_else_is_unknown: b"reload\n" => Command::Unknown("reload".to_owned());
        only_the_first_line_counts: b"status\nupgrade\n" => Command::Status;
        an_empty_line_is_unknown: b"" => Command::Unknown(String::new());
    }

    fn scratch(tag: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("twelve-control-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn bind_replaces_a_stale_socket_but_never_a_live_one() {
        let dir = scratch("bind");
        let path = dir.join("control.sock");
        // Stale: bound, then its listener closed; the file stays.
        drop(UnixListener::bind(&path).unwrap());
        let live = bind(&path).unwrap();
        let err = bind(&path).unwrap_err();
        assert!(
            matches!(&err, Error::Control { path: p, why } if *p == path && why == "another server answers on it"),
            "{err:?}"
        );
        drop(live);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn command_sends_one_line_and_returns_the_answer_trimmed() {
        let dir = scratch("command");
        let path = dir.join("control.sock");
        let listener = bind(&path).unwrap();
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let got = read_command(&mut conn);
            reply(&mut conn, "serving generation=1 pid=7");
            got
        });
        assert_eq!(
            command(&path, "status").unwrap(),
            "serving generation=1 pid=7"
        );
        assert_eq!(server.join().unwrap(), Command::Status);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
