//! Samples a server with `perf record -g` while a run measures: spawns perf on chosen threads,
//! a process or a cgroup, stops it with SIGINT at the end of the window, and reads the stacks
//! back with `perf script`. Folding and drawing are twelve-report's (`flame`).
//!
//! perf is a child process, never a library: nothing here needs unsafe, and a missing or
//! refused perf is a message, not a failed run.
use rustix::process::{Pid, Signal, kill_process};
use std::fmt;
use std::fs;
use std::io::{self, BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Samples per second per CPU: 999, not 1000, so sampling does not beat in step with a
/// 1 ms timer (FlameGraph's and the study's habit).
pub const DEFAULT_FREQ_HZ: u32 = 999;

/// The fields asked of `perf script`: no period, so each sample counts one.
const SCRIPT_FIELDS: &str = "comm,tid,time,event,ip,sym,dso";

/// What to sample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PerfTarget {
    /// These threads only (`perf record -t`): the embedded server's workers, so the load
    /// generator's threads in the same process are neither sampled nor slowed by sampling.
    Threads(Vec<u32>),
    /// Every thread of these processes (`perf record -p`): a process, or every member of a
    /// multi-process server's group (see [`process_group`]).
    Pids(Vec<u32>),
    /// Every task of a cgroup (`perf record -a -G`), named relative to the hierarchy perf uses
    /// (the cgroup v2 root, or v1's perf_event one), e.g. `system.slice/nginx.service`.
    Cgroup(String),
}

/// Why perf could not sample; the run goes on without a flame graph.
#[derive(Debug)]
pub enum PerfError {
    /// No `perf` on the PATH.
    NotInstalled,
    /// `kernel.perf_event_paranoid` forbids an unprivileged user what is asked.
    Paranoid {
        /// The sysctl's value.
        level: i32,
    },
    /// perf started but failed; its first lines of error output.
    Failed(String),
    /// Spawning, signalling or reading failed.
    Io(io::Error),
}

impl fmt::Display for PerfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PerfError::NotInstalled => write!(
                f,
                "perf is not installed (Debian: apt-get install linux-perf; Ubuntu: linux-tools-$(uname -r))"
            ),
            PerfError::Paranoid { level } => write!(
                f,
                "kernel.perf_event_paranoid is {level}, which keeps a user from sampling kernel \
                 stacks: run as root, or `sysctl kernel.perf_event_paranoid=1` (revert: \
                 `sysctl kernel.perf_event_paranoid={level}`)"
            ),
            PerfError::Failed(text) => write!(f, "perf failed: {text}"),
            PerfError::Io(e) => write!(f, "running perf: {e}"),
        }
    }
}

impl std::error::Error for PerfError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PerfError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for PerfError {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::NotFound {
            PerfError::NotInstalled
        } else {
            PerfError::Io(e)
        }
    }
}

/// Whether perf can sample with kernel stacks here: it is installed, and either this process
/// is root or `perf_event_paranoid` is at most 1 (2 allows user space only; Debian's 3 and
/// above allow nothing to users).
pub fn probe() -> Result<(), PerfError> {
    let out = Command::new("perf")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    if !out.success() {
        return Err(PerfError::Failed(
            "`perf --version` failed (a kernel without its matching perf?)".into(),
        ));
    }
    paranoid_allows(read_paranoid(), rustix::process::geteuid().is_root())
}

fn read_paranoid() -> Option<i32> {
    fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The rule of `probe` without the I/O: root may always sample; a user needs level 1 or less
/// for kernel stacks. An unreadable sysctl is left to perf itself to refuse.
fn paranoid_allows(level: Option<i32>, root: bool) -> Result<(), PerfError> {
    match level {
        Some(level) if !root && level > 1 => Err(PerfError::Paranoid { level }),
        _ => Ok(()),
    }
}

/// The threads of this process whose name (`comm`) starts with `prefix`, e.g. the embedded
/// server's workers, `twelve-w`.
pub fn threads_named(prefix: &str) -> io::Result<Vec<u32>> {
    let mut tids = Vec::new();
    for entry in fs::read_dir("/proc/self/task")? {
        let entry = entry?;
        let Ok(comm) = fs::read_to_string(entry.path().join("comm")) else {
            continue; // the thread ended meanwhile
        };
        if comm.trim_end().starts_with(prefix)
            && let Some(tid) = entry.file_name().to_str().and_then(|s| s.parse().ok())
        {
            tids.push(tid);
        }
    }
    tids.sort_unstable();
    Ok(tids)
}

/// The processes of process group `pgid` (field 5 of `/proc/PID/stat`): a server started in
/// its own group, with the workers it forked (nginx's master and workers).
pub fn process_group(pgid: u32) -> io::Result<Vec<u32>> {
    let mut pids = Vec::new();
    for entry in fs::read_dir("/proc")? {
        let entry = entry?;
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else {
            continue; // gone meanwhile
        };
        if stat_pgrp(&stat) == Some(pgid) {
            pids.push(pid);
        }
    }
    pids.sort_unstable();
    Ok(pids)
}

/// The process group in a `/proc/PID/stat` line: the third field after the `(comm)`, which
/// may itself hold spaces and parentheses, so the line is split after its last `)`.
fn stat_pgrp(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(2)?.parse().ok()
}

/// The `perf record` arguments for `target` (without the program name).
fn record_args(target: &PerfTarget, freq_hz: u32, delay: Duration, data: &Path) -> Vec<String> {
    let mut args = vec![
        "record".to_string(),
        "-g".to_string(),
        "-F".to_string(),
        freq_hz.to_string(),
        "-o".to_string(),
        data.display().to_string(),
        // Sampling starts after the warm-up: perf is spawned just before the run and waits.
        // Never 0 (no delay), even without a warm-up: with a delay perf prints
        // `Events disabled` once it has attached, which `Recording::start` waits for.
        format!("--delay={}", delay.as_millis().max(1)),
    ];
    match target {
        PerfTarget::Threads(tids) => {
            let list: Vec<String> = tids.iter().map(u32::to_string).collect();
            args.extend(["-t".to_string(), list.join(",")]);
        }
        PerfTarget::Pids(pids) => {
            let list: Vec<String> = pids.iter().map(u32::to_string).collect();
            args.extend(["-p".to_string(), list.join(",")]);
        }
        PerfTarget::Cgroup(path) => {
            // perf applies -G to the events named before it, so the event must be named:
            // cpu-clock, which every kernel has (a VM often has no cycles counter).
            args.extend(["-e", "cpu-clock", "-a", "-G", path].map(str::to_string));
        }
    }
    args
}

/// How long perf may take to attach (on a busy host, reading symbols and the target's maps
/// can take a while).
const ATTACH_TIMEOUT: Duration = Duration::from_secs(20);

/// The line perf prints once its events are open and it waits out `--delay`.
const ATTACHED: &str = "Events disabled";

/// A `perf record` under way.
#[derive(Debug)]
pub struct Recording {
    child: Child,
    data: PathBuf,
    /// Drains perf's stderr (so perf never blocks on a full pipe); returns what it said.
    stderr: Option<JoinHandle<String>>,
}

impl Recording {
    /// Starts `perf record -g -F freq_hz` on `target`, writing to `data`, sampling only after
    /// `delay` (the run's warm-up). Returns once perf has attached, so the load can start
    /// right after and the delay lines up with the warm-up.
    pub fn start(
        target: &PerfTarget,
        freq_hz: u32,
        delay: Duration,
        data: &Path,
    ) -> Result<Recording, PerfError> {
        probe()?;
        if matches!(target, PerfTarget::Threads(t) | PerfTarget::Pids(t) if t.is_empty()) {
            return Err(PerfError::Failed("no thread to sample".into()));
        }
        // Its own process group: a terminal's Ctrl-C goes to the foreground group, and perf
        // must stop when twelve stops it (after the run's report), not with the run.
        let mut child = Command::new("perf")
            .process_group(0)
            .args(record_args(target, freq_hz, delay, data))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()?;
        let pipe = child.stderr.take().expect("stderr is piped");
        let (attached, ready) = mpsc::channel();
        let stderr = std::thread::spawn(move || {
            let mut said = String::new();
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if line.contains(ATTACHED) {
                    let _ = attached.send(());
                } else {
                    said += &line;
                    said.push('\n');
                }
            }
            said
        });
        let mut rec = Recording {
            child,
            data: data.to_path_buf(),
            stderr: Some(stderr),
        };
        // Either perf attached, or it exited (the channel closes with its stderr) or hung.
        if ready.recv_timeout(ATTACH_TIMEOUT).is_ok() {
            return Ok(rec);
        }
        let _ = kill_process(Pid::from_child(&rec.child), Signal::INT);
        let status = rec.child.wait()?;
        let said = rec
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        let _ = fs::remove_file(&rec.data);
        Err(PerfError::Failed(first_lines(&said, status)))
    }

    /// Ends the recording (SIGINT, as Ctrl-C would: perf then writes its data and exits) and
    /// returns what `perf script` prints for it. The data file is removed afterwards.
    pub fn stop(mut self) -> Result<Vec<u8>, PerfError> {
        let early = self.child.try_wait()?;
        if early.is_none() {
            let pid = Pid::from_child(&self.child);
            kill_process(pid, Signal::INT).map_err(io::Error::from)?;
        }
        let status = self.child.wait()?;
        let err = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        // perf exits 0 or with the signal's status after SIGINT; an early exit is a refusal.
        if early.is_some() || !self.data.exists() {
            let _ = fs::remove_file(&self.data);
            return Err(PerfError::Failed(first_lines(&err, status)));
        }
        let out = Command::new("perf")
            .args(["script", "-F", SCRIPT_FIELDS, "-i"])
            .arg(&self.data)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output();
        let _ = fs::remove_file(&self.data);
        let out = out?;
        if !out.status.success() {
            return Err(PerfError::Failed("perf script failed".into()));
        }
        Ok(out.stdout)
    }
}

impl Drop for Recording {
    /// A recording dropped without [`Recording::stop`] (an error on the way) is stopped
    /// anyway: perf runs in its own process group and, sampling a cgroup, would never end.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = kill_process(Pid::from_child(&self.child), Signal::INT);
            let _ = self.child.wait();
        }
        let _ = fs::remove_file(&self.data);
    }
}

fn first_lines(err: &str, status: std::process::ExitStatus) -> String {
    let text: Vec<&str> = err
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(3)
        .collect();
    if text.is_empty() {
        format!("perf record exited early ({status})")
    } else {
        text.join(" / ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! paranoid {
        ($name:ident, $level:expr, $root:expr, $ok:expr) => {
            #[test]
            fn $name() {
                assert_eq!(paranoid_allows($level, $root).is_ok(), $ok);
            }
        };
    }

    paranoid!(root_samples_at_any_level, Some(4), true, true);
    paranoid!(user_samples_kernel_at_level_1, Some(1), false, true);
    paranoid!(user_refused_at_level_2, Some(2), false, false);
    paranoid!(user_refused_at_debian_default_3, Some(3), false, false);
    paranoid!(unreadable_sysctl_left_to_perf, None, false, true);

    #[test]
    fn paranoid_message_says_how_to_fix_and_undo() {
        let text = PerfError::Paranoid { level: 3 }.to_string();
        assert!(text.contains("perf_event_paranoid is 3"), "{text}");
        assert!(text.contains("perf_event_paranoid=1"), "{text}");
        assert!(text.contains("perf_event_paranoid=3"), "{text}");
    }

    #[test]
    fn threads_are_sampled_by_tid_after_the_warm_up() {
        let args = record_args(
            &PerfTarget::Threads(vec![7, 9]),
            999,
            Duration::from_secs(1),
            Path::new("/tmp/x.data"),
        );
        let line = args.join(" ");
        assert!(
            line.starts_with("record -g -F 999 -o /tmp/x.data"),
            "{line}"
        );
        assert!(line.contains("--delay=1000"), "{line}");
        assert!(line.ends_with("-t 7,9"), "{line}");
    }

    #[test]
    fn a_cgroup_is_sampled_system_wide_filtered() {
        let args = record_args(
            &PerfTarget::Cgroup("system.slice/x.service".into()),
            99,
            Duration::ZERO,
            Path::new("d"),
        );
        let line = args.join(" ");
        assert!(
            line.contains("--delay=1 "),
            "always a delay, for the attach line: {line}"
        );
        assert!(
            line.ends_with("-e cpu-clock -a -G system.slice/x.service"),
            "{line}"
        );
    }

    #[test]
    fn pgrp_is_read_after_the_command_name() {
        assert_eq!(stat_pgrp("42 (ng inx) ) S 1 40 40 0 -1"), Some(40));
        assert_eq!(stat_pgrp("42 (x"), None);
    }

    #[test]
    fn this_process_is_in_its_own_group_listing() {
        let me = std::process::id();
        let pgid = rustix::process::getpgrp().as_raw_nonzero().get() as u32;
        assert!(process_group(pgid).unwrap().contains(&me));
    }

    #[test]
    fn this_threads_name_is_found() {
        let tids = std::thread::Builder::new()
            .name("perf-probe-me".into())
            .spawn(|| threads_named("perf-probe-me").unwrap())
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(tids.len(), 1, "{tids:?}");
    }
}
