//! `--flame` as a process: `twelve bench --flame` samples the embedded server (and only it) or
//! another process with perf and draws user frames blue and kernel frames red; `twelve
//! compare --flame` draws each side (a command's process group, or a URL side's named PID)
//! and B against A; without perf the run still completes with one message. The perf tests skip where perf cannot sample (`skip_or_fail`).
#![cfg(feature = "flame")]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use twelve_testkit::skip_or_fail;

const SHORT: [&str; 6] = ["-d", "1s", "--warmup", "200ms", "-c", "8"];

fn twelve(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_twelve"));
    c.args(args);
    c
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("twelve-flame-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The perf tests run one at a time: each loads both CPUs of a small machine, and a server
/// that gets no CPU during its measured window leaves perf nothing to sample.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Whether perf can sample here (then holding the perf tests' lock); otherwise the test skips
/// (or fails under CI) with the reason.
fn perf_works() -> Option<std::sync::MutexGuard<'static, ()>> {
    match twelve_load::perf::probe() {
        Ok(()) => Some(ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())),
        Err(e) => {
            skip_or_fail(format!("perf cannot sample here: {e}"));
            None
        }
    }
}

/// Every frame of an inferno SVG: name (its `<title>` up to the sample count) and fill.
fn frames(svg: &str) -> Vec<(String, (u8, u8, u8))> {
    svg.split("<g><title>")
        .skip(1)
        .filter_map(|g| {
            let name = g.split(" (").next()?.to_string();
            let fill = g.split("fill=\"rgb(").nth(1)?.split(')').next()?;
            let v: Vec<u8> = fill.split(',').filter_map(|x| x.parse().ok()).collect();
            Some((name, (*v.first()?, *v.get(1)?, *v.get(2)?)))
        })
        .collect()
}

fn is_red((r, _, b): (u8, u8, u8)) -> bool {
    r > 200 && b < 80
}

fn is_blue((r, _, b): (u8, u8, u8)) -> bool {
    b > 200 && r < 80
}

/// The SVG at `path`: a server's profile, its kernel frames red and its user frames blue.
fn assert_server_profile(path: &Path, comm: &str, run: &str) -> String {
    let svg = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no flame graph at {}: {e}\n{run}", path.display()));
    let frames = frames(&svg);
    let root = frames.iter().find(|(n, _)| n.starts_with(comm));
    let root = root.unwrap_or_else(|| panic!("no {comm} frame: {frames:?}"));
    assert!(is_blue(root.1), "{root:?}");
    // Every request goes through the system call entry; its frame is the kernel's.
    let entry = frames.iter().find(|(n, _)| n.starts_with("entry_SYSCALL"));
    let entry = entry.unwrap_or_else(|| panic!("no syscall entry frame: {frames:?}"));
    assert!(is_red(entry.1), "{entry:?}");
    svg
}

#[test]
fn bench_flame_draws_only_the_embedded_server() {
    let Some(_one) = perf_works() else {
        return;
    };
    let dir = temp("bench");
    let svg_path = dir.join("server.svg");
    let out = twelve(&["bench"])
        .args(SHORT)
        .arg("--flame")
        .arg(&svg_path)
        .output()
        .unwrap();
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("Requests/sec:"),
        "the report is still printed: {t}"
    );
    assert!(t.contains("flame graph of"), "{t}");
    // The server's worker is `twelve-w<cpu>`, its CPU the first online one.
    let svg = assert_server_profile(&svg_path, "twelve-w", &t);
    // The load generator runs in the same process, on other threads: perf -t leaves it out.
    assert!(!svg.contains("twelve-load"), "client threads sampled");
    assert!(svg.contains(" req/s, p50 "), "no figures in the title");
    let _ = std::fs::remove_dir_all(dir);
}

/// A `twelve serve` child on a free port, stopped (SIGTERM by PID) when dropped.
struct Serve {
    child: Child,
    url: String,
}

impl Serve {
    fn start() -> Serve {
        let mut child = twelve(&["serve", "--listen", "127.0.0.1:0", "--workers", "1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|r| r.split(' ').next());
        let url = format!("http://{}/json", addr.expect("a listening line"));
        Serve { child, url }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

#[test]
fn bench_flame_pid_draws_another_process() {
    let Some(_one) = perf_works() else {
        return;
    };
    let serve = Serve::start();
    let dir = temp("pid");
    let svg_path = dir.join("pid.svg");
    let pid = serve.child.id().to_string();
    let out = twelve(&["bench", &serve.url])
        .args(SHORT)
        .arg("--flame")
        .arg(&svg_path)
        .args(["--flame-pid", &pid])
        .output()
        .unwrap();
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert_server_profile(&svg_path, "twelve-w", &t);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn compare_flame_draws_both_sides_and_the_difference() {
    let Some(_one) = perf_works() else {
        return;
    };
    let dir = temp("compare");
    // A port free a moment ago; each side binds it in turn.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let serve = format!(
        "{} serve --listen 127.0.0.1:{port} --workers 1",
        env!("CARGO_BIN_EXE_twelve")
    );
    let url = format!("http://127.0.0.1:{port}/json");
    let out = twelve(&["compare", &serve, &format!("{serve} --io uring")])
        .args(["--url", &url, "--rounds", "1"])
        .args(SHORT)
        .arg("--flame")
        .arg(&dir)
        .output()
        .unwrap();
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    for side in ["a", "b"] {
        assert_server_profile(&dir.join(format!("{side}.svg")), "twelve-w", &t);
        let folded = std::fs::read_to_string(dir.join(format!("{side}.folded"))).unwrap();
        assert!(folded.lines().count() > 1, "{folded}");
    }
    let diff = std::fs::read_to_string(dir.join("diff.svg")).unwrap();
    assert!(
        diff.contains("B against A: B/A req/s "),
        "no ratio in the title"
    );
    assert!(frames(&diff).len() > 5, "an empty differential graph");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn compare_flame_samples_url_sides_by_pid() {
    let Some(_one) = perf_works() else {
        return;
    };
    let (a, b) = (Serve::start(), Serve::start());
    let dir = temp("compare-pid");
    let (pa, pb) = (a.child.id().to_string(), b.child.id().to_string());
    let out = twelve(&["compare", &a.url, &b.url, "--rounds", "1"])
        .args(SHORT)
        .arg("--flame")
        .arg(&dir)
        .args(["--a-flame-pid", &pa, "--b-flame-pid", &pb])
        .output()
        .unwrap();
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(dir.join("diff.svg").exists(), "{t}");
    for side in ["a", "b"] {
        assert_server_profile(&dir.join(format!("{side}.svg")), "twelve-w", &t);
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn without_perf_the_run_completes_with_one_message() {
    // An empty PATH: no perf to find, whatever the host has installed.
    let dir = temp("noperf");
    let svg_path = dir.join("never.svg");
    let out = twelve(&["bench"])
        .args(SHORT)
        .arg("--flame")
        .arg(&svg_path)
        .env("PATH", &dir)
        .output()
        .unwrap();
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("Requests/sec:"), "{t}");
    let messages: Vec<&str> = t.lines().filter(|l| l.contains("--flame")).collect();
    assert_eq!(messages.len(), 1, "{t}");
    assert!(messages[0].contains("perf is not installed"), "{t}");
    assert!(!svg_path.exists());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn flame_with_a_url_needs_a_process_to_sample() {
    let serve = Serve::start();
    let out = twelve(&["bench", &serve.url])
        .args(SHORT)
        .args(["--flame", "/nonexistent/x.svg"])
        .output()
        .unwrap();
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("--flame-pid"), "{t}");
}
