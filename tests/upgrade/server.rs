//! A server under test inside the namespace (`twelve serve` or the engine's example, see
//! `program`): started through `ip netns exec`, ready once it prints its listening line,
//! driven through its control socket.

use super::netns::Netns;
use super::program::Program;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// Inside the namespace the port is ours alone.
pub const ADDR: &str = "127.0.0.1:8080";
/// `--drain-timeout` of every server here: the deadline old generations must beat.
pub const DRAIN: Duration = Duration::from_secs(5);

pub struct Serve {
    pub child: Child,
    pub control: PathBuf,
    /// Lines the generations print on stdout (every generation shares the pipe).
    pub lines: std::sync::Mutex<Receiver<String>>,
}

impl Serve {
    /// Starts `program` with the test's flags plus `extra`, and waits for its line.
    pub fn start(ns: &Netns, dir: &Path, program: Program, extra: &[&str]) -> Self {
        let control = dir.join(format!("control-{}.sock", ns.name));
        // A successor that starts on a loaded 2-CPU machine (CI compiling beside it) may take
        // more than a few seconds to be ready; only the rollback scenario wants a short wait.
        let timeout: &[&str] = if extra.contains(&"--upgrade-timeout") {
            &[]
        } else {
            &["--upgrade-timeout", "15"]
        };
        let mut child = ns
            .command(program.path().to_str().unwrap())
            .args(program.subcommand())
            .args(["--listen", ADDR, "--generation-header"])
            .args(["--drain-timeout", &DRAIN.as_secs().to_string()])
            .args(timeout)
            .args(["--control"])
            .arg(&control)
            .args(extra)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let serve = Self {
            child,
            control,
            lines: std::sync::Mutex::new(lines),
        };
        serve.await_line("listening on");
        serve
    }

    /// Waits for a stdout line containing `what` (an event, bounded by a generous limit).
    pub fn await_line(&self, what: &str) -> String {
        let lines = self.lines.lock().unwrap();
        loop {
            let line = lines
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|e| panic!("no line with {what:?} from the server: {e}"));
            if line.contains(what) {
                return line;
            }
        }
    }

    /// Sends one control command; returns the answer line.
    pub fn command(&self, command: &str) -> String {
        let mut c = UnixStream::connect(&self.control).unwrap();
        writeln!(c, "{command}").unwrap();
        let mut answer = String::new();
        BufReader::new(&c).read_line(&mut answer).unwrap();
        answer.trim().to_owned()
    }

    /// The serving generation's pid.
    pub fn pid(&self) -> u32 {
        let status = self.command("status");
        field(&status, "pid=").unwrap_or_else(|| panic!("status: {status}")) as u32
    }

    /// Stops whichever generation serves now (SIGTERM) and waits for the first one to exit.
    pub fn stop(mut self) {
        let pid = self.pid();
        signal(pid, "TERM");
        let _ = self.child.wait();
        assert!(
            wait_exit(pid, DRAIN * 2).is_some(),
            "generation pid {pid} still running after SIGTERM"
        );
    }
}

/// The number after `key` in an answer line (`ready generation=3 pid=77`).
pub fn field(line: &str, key: &str) -> Option<u64> {
    let rest = &line[line.find(key)? + key.len()..];
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

pub fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{sig} {pid}");
}

/// Waits until `pid` has exited (gone, or a zombie: its parent, an older generation, may not
/// reap it before it exits itself); returns how long that took, `None` past `limit`.
pub fn wait_exit(pid: u32, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return Some(start.elapsed()),
            Ok(stat) => {
                let state = stat.rsplit(") ").next().and_then(|s| s.chars().next());
                if state == Some('Z') || state == Some('X') {
                    return Some(start.elapsed());
                }
            }
        }
        // Polling /proc: a process that is not our child gives no other exit event.
        std::thread::sleep(Duration::from_millis(5));
    }
    None
}
