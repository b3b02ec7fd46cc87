//! The control side of `twelve serve`: signals (SIGTERM/SIGINT stop, SIGUSR2 upgrades), the
//! control socket (`--control PATH`: one command line in, one answer line out), systemd's
//! socket activation, and what a draining generation answers.

use anyhow::{Context, bail};
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
pub(crate) enum Event {
    /// A signal: SIGUSR2 asks for an upgrade, SIGTERM/SIGINT for a stop.
    Signal(i32),
    /// A control connection, its command not read yet.
    Control(UnixStream),
    /// Every worker has drained and exited; their last counters.
    Drained(Box<twelve_engine::MetricsSnapshot>),
}

/// A command read from a control connection.
pub(crate) enum Control {
    /// `upgrade` or `restart`: the same path (the configured binary is exec'd either way;
    /// replacing the file first is what makes it an upgrade).
    Upgrade,
    /// `status`.
    Status,
    /// Anything else.
    Unknown(String),
}

/// The event threads of a generation.
pub(crate) struct Events {
    pub(crate) rx: Receiver<Event>,
    tx: Sender<Event>,
    stop: Arc<AtomicBool>,
    control: std::sync::Mutex<Option<JoinHandle<()>>>,
}

impl Events {
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
pub(crate) fn signals() -> anyhow::Result<signal_hook::iterator::Signals> {
    use signal_hook::consts::{SIGINT, SIGTERM, SIGUSR2};
    signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGUSR2])
        .context("installing the SIGTERM/SIGINT/SIGUSR2 handlers")
}

/// Starts the threads that turn signals and control connections into [`Event`]s.
pub(crate) fn start(
    mut signals: signal_hook::iterator::Signals,
    control: Option<&UnixListener>,
) -> anyhow::Result<Events> {
    let (tx, rx) = std::sync::mpsc::channel();
    let to_main = tx.clone();
    let keep = tx.clone();
    std::thread::Builder::new()
        .name("twelve-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                if to_main.send(Event::Signal(sig)).is_err() {
                    return;
                }
            }
        })
        .context("starting the signal thread")?;
    let stop = Arc::new(AtomicBool::new(false));
    let thread = match control {
        Some(l) => {
            let l = l.try_clone().context("--control: duplicating the socket")?;
            l.set_nonblocking(true).context("--control")?;
            let stop = stop.clone();
            let t = std::thread::Builder::new()
                .name("twelve-control".into())
                .spawn(move || accept_loop(&l, &stop, &tx))
                .context("starting the control thread")?;
            Some(t)
        }
        None => None,
    };
    Ok(Events {
        rx,
        tx: keep,
        stop,
        control: std::sync::Mutex::new(thread),
    })
}

/// Accepts control connections until told to stop. It polls rather than blocks in `accept`
/// because the successor shares the socket: a thread blocked in `accept` here would go on
/// taking connections meant for it.
fn accept_loop(l: &UnixListener, stop: &AtomicBool, tx: &Sender<Event>) {
    while !stop.load(Ordering::Acquire) {
        match twelve_engine::handover::wait_readable(l.as_fd(), CONTROL_POLL) {
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
                if tx.send(Event::Control(conn)).is_err() {
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
pub(crate) fn bind(path: &Path) -> anyhow::Result<UnixListener> {
    let shown = path.display();
    if path.exists() {
        if UnixStream::connect(path).is_ok() {
            bail!("--control {shown}: another server answers on it");
        }
        std::fs::remove_file(path).with_context(|| format!("--control {shown}: removing"))?;
    }
    UnixListener::bind(path).with_context(|| format!("--control {shown}"))
}

/// Reads one command line (bounded in time and length).
pub(crate) fn read_command(conn: &mut UnixStream) -> Control {
    let _ = conn.set_read_timeout(Some(COMMAND_WAIT));
    let mut line = String::new();
    let mut reader = BufReader::new(std::io::Read::take(&*conn, 256));
    let _ = reader.read_line(&mut line);
    match line.trim() {
        "upgrade" | "restart" => Control::Upgrade,
        "status" => Control::Status,
        other => Control::Unknown(other.to_owned()),
    }
}

/// Writes one answer line (a client that left is not an error).
pub(crate) fn reply(conn: &mut UnixStream, text: &str) {
    let _ = writeln!(conn, "{text}");
}

/// Drains: waits for the workers (on a thread of their own) while answering whatever
/// arrives meanwhile: every control connection and SIGUSR2 is refused with the reason; a
/// first SIGTERM/SIGINT after an upgrade changes nothing (a Ctrl-C that reached the whole
/// process group must not cut the drain short), any later one exits at once. Events queued
/// before the workers finished are all answered before this returns the last counters.
pub(crate) fn drain(
    events: Events,
    handle: twelve_engine::ServerHandle,
    generation: u64,
    successor: Option<(u64, u32)>,
) -> twelve_engine::MetricsSnapshot {
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
        let _ = tx.send(Event::Drained(Box::new(handle.join_with_metrics())));
    });
    let mut stops = u8::from(successor.is_none());
    loop {
        match events.rx.recv() {
            Ok(Event::Drained(last)) => return *last,
            Ok(Event::Control(mut conn)) => {
                let _ = read_command(&mut conn);
                reply(&mut conn, &why);
            }
            Ok(Event::Signal(sig)) if sig == signal_hook::consts::SIGUSR2 => {
                eprintln!("twelve serve: SIGUSR2 {why}");
            }
            Ok(Event::Signal(sig)) => {
                stops += 1;
                if stops >= 2 {
                    eprintln!("twelve serve: signal {sig} again, exiting without draining");
                    std::process::exit(128 + sig);
                }
            }
            // Cannot happen while the drain thread holds its sender; nothing to report then.
            Err(_) => return twelve_engine::MetricsSnapshot::default(),
        }
    }
}

/// The listeners systemd passed (`LISTEN_FDS`, `LISTEN_PID`, `LISTEN_FDNAMES`), if this
/// process was socket-activated.
pub(crate) fn systemd_listeners() -> anyhow::Result<Option<Vec<(String, std::os::fd::OwnedFd)>>> {
    if std::env::var_os("LISTEN_FDS").is_none() {
        return Ok(None);
    }
    let pid_matches = std::env::var("LISTEN_PID")
        .ok()
        .and_then(|p| p.parse::<u32>().ok())
        .is_some_and(|p| p == std::process::id());
    if !pid_matches {
        // Meant for another process (our parent's): not ours to take.
        return Ok(None);
    }
    let fds = sd_notify::listen_fds_with_names().context("LISTEN_FDS/LISTEN_FDNAMES")?;
    let mut named = Vec::new();
    for (fd, name) in fds {
        let owned = twelve_sys::inherit::take_inherited(fd)
            .with_context(|| format!("LISTEN_FDS: descriptor {fd} ({name})"))?;
        named.push((name, owned));
    }
    Ok(Some(named))
}
