//! `twelve compare A B`: two servers measured in interleaved rounds (A B A B …) with the same
//! bench settings; for each figure the median and min–max of each side and the ratio B/A
//! pair by pair. A side is a URL, or a shell command that starts a server: it is started
//! before each of its runs, its port polled until it answers, and stopped by PID after.
use crate::load_args::{DrainArgs, LoadArgs};
use anyhow::{Context, bail};
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};
use twelve_load::{Config, Target, parse_duration, parse_rate};
use twelve_report::Summary;
use twelve_report::visual::compare::{CompareDoc, SideJson, compare, round_line, table};
use twelve_sweep::{DrainPolicy, Side, interleave, wait_drained};

/// Flags of `twelve compare`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Side A (the baseline): a URL, or a command that starts a server (then see --url).
    #[arg(value_name = "A")]
    a: String,
    /// Side B (the candidate): a URL, or a command that starts a server.
    #[arg(value_name = "B")]
    b: String,
    /// Rounds; each round runs A then B.
    #[arg(long, value_name = "N", default_value_t = 5)]
    rounds: usize,
    /// The URL a command side serves (both sides, unless --a-url/--b-url).
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:8080/")]
    url: String,
    /// The URL side A's command serves.
    #[arg(long, value_name = "URL")]
    a_url: Option<String>,
    /// The URL side B's command serves.
    #[arg(long, value_name = "URL")]
    b_url: Option<String>,
    /// How long a command side may take until its port answers.
    #[arg(long, value_name = "DUR", default_value = "10s")]
    start_timeout: String,
    /// Open model at this rate (req/s) instead of the closed model.
    #[arg(short = 'R', long, value_name = "RATE")]
    rate: Option<String>,
    /// Write the comparison as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    #[command(flatten)]
    load: LoadArgs,
    #[command(flatten)]
    drain: DrainArgs,
}

/// One side: where to send load and, for a command, how to start it.
struct SideSpec {
    spec: String,
    url: String,
    command: Option<String>,
}

impl SideSpec {
    fn new(spec: &str, url: Option<&String>, default_url: &str) -> Self {
        if spec.starts_with("http://") || spec.starts_with("https://") {
            Self {
                spec: spec.into(),
                url: spec.into(),
                command: None,
            }
        } else {
            Self {
                spec: spec.into(),
                url: url.map_or(default_url, |u| u.as_str()).into(),
                command: Some(spec.into()),
            }
        }
    }
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
    fn start(command: &str, addr: SocketAddr, timeout: Duration) -> anyhow::Result<Self> {
        if answers(addr) {
            bail!("{addr} already answers before starting {command:?}: another server is running");
        }
        let child = Command::new("sh")
            .arg("-c")
            .arg(format!("exec {command}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .process_group(0)
            .spawn()
            .with_context(|| format!("starting {command:?}"))?;
        RUNNING.store(child.id() as i32, Ordering::Release);
        let mut server = Self { child, addr };
        let t0 = Instant::now();
        loop {
            if let Some(status) = server.child.try_wait()? {
                bail!("{command:?} exited ({status}) before {addr} answered");
            }
            if answers(addr) {
                return Ok(server);
            }
            if t0.elapsed() > timeout {
                bail!("{addr} did not answer within {timeout:?} of starting {command:?}");
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
/// none. Read by the signal thread, which has no other way to reach it.
static RUNNING: AtomicI32 = AtomicI32::new(0);

/// On SIGINT or SIGTERM, stops the running server's process group and exits 130: the group
/// does not see a terminal's Ctrl-C, so without this it would outlive twelve.
fn stop_server_on_signal() -> anyhow::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
        .context("installing the SIGINT/SIGTERM handler")?;
    std::thread::spawn(move || {
        if signals.forever().next().is_some() {
            let pid = RUNNING.swap(0, Ordering::AcqRel);
            if let Some(pgid) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::TERM);
            }
            std::process::exit(130);
        }
    });
    Ok(())
}

/// How long a stopped server may take to exit and free its port.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Whether something accepts connections at `addr`.
fn answers(addr: SocketAddr) -> bool {
    TcpStream::connect_timeout(&addr, Duration::from_millis(100)).is_ok()
}

/// Runs `twelve compare`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    let sides = [
        SideSpec::new(&args.a, args.a_url.as_ref(), &args.url),
        SideSpec::new(&args.b, args.b_url.as_ref(), &args.url),
    ];
    let worker_cpus = args.load.cpus(false)?.workers;
    let mut configs = Vec::new();
    for s in &sides {
        let mut c = args.load.config(std::slice::from_ref(&s.url), None)?;
        c.worker_cpus = worker_cpus.clone();
        if let Some(rate) = &args.rate {
            c.model = args.load.open(parse_rate(rate).context("-R/--rate")?);
        }
        configs.push(c);
    }
    let start_timeout = parse_duration(&args.start_timeout).context("--start-timeout")?;
    if sides.iter().any(|s| s.command.is_some()) {
        stop_server_on_signal()?;
    }
    let drain = args.drain.policy()?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "A: {}\nB: {}", sides[0].spec, sides[1].spec)?;
    let (a, b) = interleave(args.rounds, |side, round| {
        let i = usize::from(side == Side::B);
        let run = run_once(&sides[i], &configs[i], start_timeout, &drain)?;
        let _ = writeln!(out, "{}", round_line(round, &format!("{side:?}"), &run));
        Ok::<_, anyhow::Error>(run)
    })?;
    let figures = compare(&a, &b);
    write!(out, "\n{}", table(&figures, args.rounds))?;
    if let Some(p) = &args.json {
        let [a, b] = sides.map(|s| SideJson {
            spec: s.spec,
            url: s.url,
        });
        let doc = CompareDoc::new(crate::VERSION, args.rounds, a, b, &figures);
        std::fs::write(p, doc.to_json() + "\n")
            .with_context(|| format!("--json {}", p.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// One run of one side: drain, start its server if it is a command, measure, stop it, and
/// summarise the run once.
fn run_once(
    side: &SideSpec,
    config: &Config,
    start_timeout: Duration,
    drain: &DrainPolicy,
) -> anyhow::Result<Summary> {
    let target = Target::parse(&side.url)?;
    wait_drained(target.addr.port(), drain);
    let _server = match &side.command {
        Some(cmd) => Some(ServerProcess::start(cmd, target.addr, start_timeout)?),
        None => None,
    };
    let outcome =
        twelve_load::run(config, |_| {}).with_context(|| format!("measuring {}", side.spec))?;
    Ok(Summary::new(&outcome.result, &[]))
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
        let own = "http://127.0.0.1:9000/".to_string();
        assert_eq!(SideSpec::new("srv", Some(&own), "x").url, own);
    }
}
