//! `twelve bench --h2c` against a server that misbehaves on purpose (Python's `h2`,
//! tests/h2/misbehave.py): RST_STREAM on some streams (INTERNAL_ERROR, or REFUSED_STREAM), GOAWAY
//! mid-run, SETTINGS that lower the stream limit mid-run, a window that opens slowly or never.
//! Counts agree exactly with the server's, each failure lands in its own class, requests the
//! server did not process are sent again (the open model's on a new connection, latency still
//! from the schedule), and nothing hangs (every run is bounded by `-n` and the request timeout).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

struct Server {
    child: Child,
    port: u16,
    counts: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        // Our own child, by PID.
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.counts);
    }
}

impl Server {
    /// The server's own counts: (answered, reset).
    fn counts(&self) -> (u64, u64) {
        let text = std::fs::read_to_string(&self.counts).unwrap_or_default();
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let n = |k: &str| doc[k].as_u64().unwrap_or(0);
        (n("answered"), n("reset"))
    }
}

/// The misbehaving server in `mode`, or `None` (after a skip) without python3 and `h2`.
fn server(mode: &str) -> Option<Server> {
    let probe = Command::new("python3").args(["-c", "import h2"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        twelve_testkit::skip_or_fail("python3 with the h2 module is missing (pip install h2)");
        return None;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/h2/misbehave.py");
    // Tests run in parallel, some on the same mode: each server has a file of its own.
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let counts = std::env::temp_dir().join(format!(
        "twelve-h2-misbehave-{mode}-{}-{n}.json",
        std::process::id()
    ));
    let mut child = Command::new("python3")
        .arg(script)
        .arg(mode)
        .arg(&counts)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn python3");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.trim().parse().expect("the server's port");
    Some(Server {
        child,
        port,
        counts,
    })
}

fn bench(s: &Server, args: &[&str]) -> serde_json::Value {
    let url = format!("http://127.0.0.1:{}/", s.port);
    let out: Output = Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args(["bench", "--h2c", "-t", "1", "--json"])
        .args(if args.contains(&"--timeout") {
            &[][..]
        } else {
            &["--timeout", "5s"][..]
        })
        .args(["--max-errors", "100%"])
        .args(args)
        .arg(&url)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn reset_streams_are_counted_as_resets_and_never_as_answers() {
    let Some(s) = server("rst") else { return };
    let doc = bench(&s, &["-c", "2", "--streams", "4", "-n", "300"]);
    let (answered, reset) = s.counts();
    assert_eq!(doc["requests"], answered, "{doc}");
    assert_eq!(doc["errors"]["h2"]["reset"], reset, "{doc}");
    assert_eq!(
        answered + reset,
        300,
        "every request answered or reset: {doc}"
    );
    assert_eq!(doc["errors"]["timeout"], 0, "{doc}");
}

#[test]
fn goaway_mid_run_refuses_what_it_did_not_process_and_a_count_run_sends_it_again() {
    let Some(s) = server("goaway") else { return };
    let doc = bench(&s, &["-c", "2", "--streams", "3", "-n", "100"]);
    let (answered, _) = s.counts();
    assert_eq!(doc["requests"], 100, "{doc}");
    assert_eq!(answered, 100, "{doc}");
    // Four answers a connection: a GOAWAY on each (the last may come after the run ended).
    assert!(
        doc["errors"]["h2"]["goaway"].as_u64().unwrap() >= 24,
        "{doc}"
    );
    assert!(
        doc["errors"]["h2"]["refused"].as_u64().unwrap() > 0,
        "{doc}"
    );
    assert_eq!(doc["errors"]["h2"]["protocol"], 0, "{doc}");
    assert_eq!(doc["errors"]["timeout"], 0, "{doc}");
}

#[test]
fn settings_that_lower_the_stream_limit_mid_run_are_followed() {
    let Some(s) = server("limit") else { return };
    let doc = bench(&s, &["-c", "1", "--streams", "10", "-n", "200"]);
    let (answered, _) = s.counts();
    assert_eq!(doc["requests"], 200, "{doc}");
    assert_eq!(answered, 200, "{doc}");
    assert_eq!(doc["config"]["streams_capped_to"], 2, "{doc}");
    assert_eq!(doc["errors"]["total"], 0, "{doc}");
}

#[test]
fn request_bodies_wait_for_a_window_that_opens_slowly() {
    let Some(s) = server("window") else { return };
    let body = "x".repeat(100);
    let doc = bench(
        &s,
        &[
            "-c",
            "2",
            "--streams",
            "3",
            "-n",
            "60",
            "-m",
            "POST",
            "-b",
            &body,
        ],
    );
    let (answered, _) = s.counts();
    assert_eq!(doc["requests"], 60, "{doc}");
    assert_eq!(answered, 60, "{doc}");
    assert_eq!(doc["errors"]["total"], 0, "{doc}");
}

#[test]
fn goaway_in_the_open_model_sends_the_refused_slots_again_on_a_new_connection() {
    let Some(s) = server("goaway") else { return };
    // 100 slots of a schedule at 1000/s: every one answered once, none lost to a GOAWAY.
    let doc = bench(
        &s,
        &["-c", "2", "--streams", "3", "-R", "1000", "-n", "100"],
    );
    let (answered, _) = s.counts();
    assert_eq!(doc["requests"], 100, "{doc}");
    assert_eq!(answered, 100, "{doc}");
    assert!(
        doc["errors"]["h2"]["refused"].as_u64().unwrap() > 0,
        "{doc}"
    );
    assert_eq!(doc["errors"]["h2"]["protocol"], 0, "{doc}");
    assert_eq!(doc["errors"]["timeout"], 0, "{doc}");
}

#[test]
fn a_window_that_never_opens_is_a_flow_control_stall_not_a_timeout() {
    let Some(s) = server("stall") else { return };
    // Two streams a connection, 40,000-octet bodies: the first fits the connection's window
    // of 65,535 and is answered, the second waits for a WINDOW_UPDATE that never comes.
    let body = "x".repeat(40_000);
    let doc = bench(
        &s,
        &[
            "-c",
            "2",
            "--streams",
            "2",
            "-n",
            "4",
            "-m",
            "POST",
            "-b",
            &body,
            "--timeout",
            "1s",
        ],
    );
    let (answered, _) = s.counts();
    assert_eq!(answered, 2, "{doc}");
    assert_eq!(doc["requests"], 2, "{doc}");
    assert_eq!(doc["errors"]["h2"]["stall"], 2, "{doc}");
    assert_eq!(doc["errors"]["timeout"], 0, "{doc}");
    assert_eq!(doc["errors"]["total"], 2, "{doc}");
}

#[test]
fn refused_streams_are_sent_again_in_both_load_models() {
    for model in [&["-n", "90"][..], &["-R", "1000", "-n", "90"][..]] {
        let Some(s) = server("refuse") else { return };
        let args = [&["-c", "2", "--streams", "3"][..], model].concat();
        let doc = bench(&s, &args);
        let (answered, refused) = s.counts();
        // Every request answered once; each REFUSED_STREAM was counted and sent again.
        assert_eq!(answered, 90, "{model:?}: {doc}");
        assert_eq!(doc["requests"], 90, "{model:?}: {doc}");
        assert_eq!(doc["errors"]["h2"]["refused"], refused, "{model:?}: {doc}");
        assert_eq!(doc["errors"]["h2"]["reset"], 0, "{model:?}: {doc}");
        assert_eq!(doc["errors"]["timeout"], 0, "{model:?}: {doc}");
    }
}
