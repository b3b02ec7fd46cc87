//! One side of `twelve compare`: a URL, or a shell command that starts a server. A command
//! side is started before each of its runs, its port polled until it answers, and its whole
//! process group stopped after; then the run is summarised once.
use crate::drain::{DrainPolicy, wait_drained};
use std::fmt;
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};
use twelve_load::{Config, ConfigError, LoadError, Target};
use twelve_report::Summary;

/// One side: where to send load and, for a command, how to start it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SideSpec {
    /// The URL or command as given.
    pub spec: String,
    /// The URL measured.
    pub url: String,
    /// The command that starts the server, when the side is not a URL.
    pub command: Option<String>,
}

impl SideSpec {
    /// A side from its text: a URL (`http://…`) is measured as it is; anything else is a
    /// command serving `url`, or `default_url` when none is given.
    pub fn new(spec: &str, url: Option<&str>, default_url: &str) -> Self {
        if spec.starts_with("http://") || spec.starts_with("https://") {
            Self {
                spec: spec.into(),
                url: spec.into(),
                command: None,
            }
        } else {
            Self {
                spec: spec.into(),
                url: url.unwrap_or(default_url).into(),
                command: Some(spec.into()),
            }
        }
    }
}

/// Why a side could not be measured.
#[derive(Debug)]
pub enum SideError {
    /// The side's URL is not one twelve can load.
    Url(ConfigError),
    /// Something already answers where the command's server should: another server runs.
    AlreadyAnswers {
        /// The address.
        addr: SocketAddr,
        /// The command that would have started.
        command: String,
    },
    /// The command could not be started, or waited on.
    Spawn {
        /// The command.
        command: String,
        /// What failed.
        error: std::io::Error,
    },
    /// The command exited before its port answered.
    Exited {
        /// The command.
        command: String,
        /// How it exited.
        status: ExitStatus,
        /// The address that never answered.
        addr: SocketAddr,
    },
    /// The port did not answer within the start timeout.
    StartTimeout {
        /// The command.
        command: String,
        /// The address polled.
        addr: SocketAddr,
        /// How long it was given.
        timeout: Duration,
    },
    /// The run itself failed.
    Load {
        /// The side as given.
        spec: String,
        /// Why.
        error: LoadError,
    },
}

impl fmt::Display for SideError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SideError::Url(e) => write!(f, "{e}"),
            SideError::AlreadyAnswers { addr, command } => write!(
                f,
                "{addr} already answers before starting {command:?}: another server is running"
            ),
            SideError::Spawn { command, error } => write!(f, "starting {command:?}: {error}"),
            SideError::Exited {
                command,
                status,
                addr,
            } => write!(f, "{command:?} exited ({status}) before {addr} answered"),
            SideError::StartTimeout {
                command,
                addr,
                timeout,
            } => write!(
                f,
                "{addr} did not answer within {timeout:?} of starting {command:?}"
            ),
            SideError::Load { spec, error } => write!(f, "measuring {spec}: {error}"),
        }
    }
}

impl std::error::Error for SideError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SideError::Url(e) => Some(e),
            SideError::Spawn { error, .. } => Some(error),
            SideError::Load { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// One run of one side: drain, start its server if it is a command, measure, stop it, and
/// summarise the run.
pub fn run_side(
    side: &SideSpec,
    config: &Config,
    start_timeout: Duration,
    drain: &DrainPolicy,
) -> Result<Summary, SideError> {
    run_side_observed(side, config, start_timeout, drain, &mut ())
}

/// What watches a side's run from outside: `twelve compare --flame` samples each side's
/// server with perf while the load runs.
pub trait SideObserver {
    /// The server answers and the load is about to start; `pgid` is the process group a
    /// command side's server leads (`None` for a URL side).
    fn before(&mut self, pgid: Option<u32>);
    /// The load has ended (`summary` is `None` if it failed); the server still runs.
    fn after(&mut self, summary: Option<&Summary>);
}

/// Watching nothing.
impl SideObserver for () {
    fn before(&mut self, _: Option<u32>) {}
    fn after(&mut self, _: Option<&Summary>) {}
}

/// [`run_side`], telling `observer` when the load starts and ends.
pub fn run_side_observed(
    side: &SideSpec,
    config: &Config,
    start_timeout: Duration,
    drain: &DrainPolicy,
    observer: &mut dyn SideObserver,
) -> Result<Summary, SideError> {
    let target = Target::parse(&side.url).map_err(SideError::Url)?;
    wait_drained(target.addr.port(), drain);
    let server = match &side.command {
        Some(cmd) => Some(ServerProcess::start(cmd, target.addr, start_timeout)?),
        None => None,
    };
    observer.before(server.as_ref().map(|s| s.child.id()));
    let outcome = twelve_load::run(config, |_| {}).map_err(|error| SideError::Load {
        spec: side.spec.clone(),
        error,
    });
    // `after` runs even when the load failed, so whatever `before` started (perf) stops.
    let summary = outcome.map(|o| Summary::new(&o.result, &[]));
    observer.after(summary.as_ref().ok());
    drop(server);
    summary
}

/// A server started from a command, stopped by its PID (its process group) when dropped.
struct ServerProcess {
    child: Child,
    addr: SocketAddr,
}

impl ServerProcess {
    /// Starts `command` with `sh -c 'exec …'` (so the PID is the server's own, not a shell's)
    /// in its own process group (so the whole group can be stopped, and a terminal's Ctrl-C
    /// reaches only twelve, whose handler stops it), then polls `addr` until it accepts.
    fn start(command: &str, addr: SocketAddr, timeout: Duration) -> Result<Self, SideError> {
        let spawn_error = |error| SideError::Spawn {
            command: command.into(),
            error,
        };
        if answers(addr) {
            return Err(SideError::AlreadyAnswers {
                addr,
                command: command.into(),
            });
        }
        let child = Command::new("sh")
            .arg("-c")
            .arg(format!("exec {command}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log_file())
            .process_group(0)
            .spawn()
            .map_err(spawn_error)?;
        RUNNING.store(child.id() as i32, Ordering::Release);
        let mut server = Self { child, addr };
        let t0 = Instant::now();
        loop {
            if let Some(status) = server.child.try_wait().map_err(spawn_error)? {
                return Err(SideError::Exited {
                    command: command.into(),
                    status,
                    addr,
                });
            }
            if answers(addr) {
                return Ok(server);
            }
            if t0.elapsed() > timeout {
                return Err(SideError::StartTimeout {
                    command: command.into(),
                    addr,
                    timeout,
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // Stop the process group the server leads (its PGID is its PID, set at spawn): a
        // multi-process server such as nginx keeps its workers, and with them the listening
        // socket, alive when only the master's PID is killed. SIGTERM first (nginx's fast
        // shutdown), SIGKILL to the group after 5 s.
        RUNNING.store(0, Ordering::Release);
        let pgid = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::TERM);
        let t0 = Instant::now();
        let mut exited = false;
        while t0.elapsed() < STOP_GRACE {
            exited = exited || matches!(self.child.try_wait(), Ok(Some(_)));
            if exited && !answers(self.addr) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
        let _ = self.child.wait();
        let t0 = Instant::now();
        while answers(self.addr) && t0.elapsed() < STOP_GRACE {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// PID (= process group) of the server started from a command and not yet stopped; 0 when
/// none. Read by [`stop_running_server`], which a signal-handling thread calls and which has
/// no other way to reach it.
static RUNNING: AtomicI32 = AtomicI32::new(0);

/// Sends SIGTERM to the process group of the server a command side started, if one is
/// running: the group does not see a terminal's Ctrl-C, so without this it would outlive
/// twelve. For the caller's SIGINT/SIGTERM handler thread.
pub fn stop_running_server() {
    let pid = RUNNING.swap(0, Ordering::AcqRel);
    if let Some(pgid) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::TERM);
    }
}

/// How long a stopped server may take to exit and free its port.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Whether something accepts connections at `addr`.
fn answers(addr: SocketAddr) -> bool {
    TcpStream::connect_timeout(&addr, Duration::from_millis(100)).is_ok()
}

/// Where a command side's output goes: one file per `twelve compare` process, both sides
/// appended, so a server's startup lines never land inside the table on the terminal.
pub fn server_log() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("twelve-compare-{}.log", std::process::id()))
}

/// The log opened for appending; the terminal's stderr when it cannot be opened.
fn log_file() -> Stdio {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(server_log())
        .map_or_else(|_| Stdio::inherit(), Stdio::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_side_has_no_command() {
        let s = SideSpec::new("http://127.0.0.1:1/x", None, "http://127.0.0.1:8080/");
        assert_eq!((s.url.as_str(), s.command), ("http://127.0.0.1:1/x", None));
    }

    #[test]
    fn command_side_takes_its_url_or_the_default() {
        let s = SideSpec::new("nginx -g 'daemon off;'", None, "http://127.0.0.1:8080/");
        assert_eq!(s.url, "http://127.0.0.1:8080/");
        assert_eq!(s.command.as_deref(), Some("nginx -g 'daemon off;'"));
        let own = "http://127.0.0.1:9000/";
        assert_eq!(SideSpec::new("srv", Some(own), "x").url, own);
    }
}
