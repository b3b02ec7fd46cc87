//! `twelve bench --shard`, `--timeseries` and `twelve merge` as processes.
//!
//! Over loopback: a run's `--timeseries` lines add up, bucket by bucket, to the whole
//! histograms of its `--json` report. In network namespaces: N shard processes, each in a
//! namespace of its own with its own address, meet at shard 0's barrier and load one server
//! (in this test's process, so its counters are read exactly); their counts add up to what
//! the server counted, and `twelve merge`'s histograms are the shards' added bucket by bucket.
//! The namespaced test re-runs itself inside `unshare -n`, so its bridge and addresses live
//! in a network namespace that disappears with it; it skips (fails under
//! `TWELVE_REQUIRE_ALL_TESTS=1`) where namespaces or `ip` are not available.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use twelve_report::Recorder;
use twelve_report::hdrcodec::decode;
use twelve_testkit::skip_or_fail;

const INNER: &str = "TWELVE_SHARD_NETNS_INNER";
const SHARDS: u32 = 3;
const REQUESTS: u64 = 3001;

fn twelve() -> Command {
    Command::new(env!("CARGO_BIN_EXE_twelve"))
}

fn tmp(name: &str) -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| twelve_testkit::scratch_dir("twelve-shard"))
        .join(name)
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The three histograms of a `{corrected, uncorrected, queue_wait}` object.
fn recorder(v: &Value) -> Recorder {
    let h = |k: &str| decode(v[k].as_str().unwrap()).unwrap();
    Recorder {
        corrected: h("corrected"),
        uncorrected: h("uncorrected"),
        wait: h("queue_wait"),
    }
}

fn assert_same(a: &Recorder, b: &Recorder, what: &str) {
    assert_eq!(a.corrected, b.corrected, "{what}: corrected");
    assert_eq!(a.uncorrected, b.uncorrected, "{what}: uncorrected");
    assert_eq!(a.wait, b.wait, "{what}: queue wait");
}

/// The sum of every line of NDJSON timeseries files, and their response count.
fn sum_lines(paths: &[PathBuf]) -> (Recorder, u64, usize) {
    let (mut all, mut requests, mut lines) = (Recorder::new(), 0, 0);
    for p in paths {
        for line in std::fs::read_to_string(p).unwrap().lines() {
            let l: Value = serde_json::from_str(line).unwrap();
            assert_eq!(
                l["start_unix_ns"].as_u64().unwrap() % 1_000_000_000,
                0,
                "{line}"
            );
            all.add(&recorder(&l));
            requests += l["requests"].as_u64().unwrap();
            lines += 1;
        }
    }
    (all, requests, lines)
}

fn ok(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The per-interval histograms of one run reproduce its summary exactly.
#[test]
fn timeseries_adds_up_to_the_reports_histograms() {
    let (report, series) = (tmp("one.json"), tmp("one.ndjson"));
    let out = twelve()
        .args([
            "bench", "-R", "1000", "-d", "1500ms", "--warmup", "100ms", "-c", "4",
        ])
        .args(["--json", "--timeseries"])
        .arg(&series)
        .output()
        .unwrap();
    std::fs::write(&report, ok(&out)).unwrap();
    let doc = json(&report);
    let (sum, requests, lines) = sum_lines(&[series]);
    // 1.5 s that start inside a second span two or three aligned seconds.
    assert!((2..=3).contains(&lines), "{lines} lines");
    assert_eq!(requests, doc["requests"].as_u64().unwrap());
    assert!(requests > 0);
    assert_same(&sum, &recorder(&doc["histograms"]), "intervals vs summary");
}

/// `--start-at` holds the run until the instant it names: the measured window cannot begin
/// before it.
#[test]
fn start_at_holds_the_run_until_its_instant() {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    // Two seconds on, as RFC 3339 (UTC).
    let at = now + 2;
    let stamp = match Command::new("date")
        .args(["-u", "-d", &format!("@{at}"), "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
    {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        _ => return skip_or_fail("no GNU date here to write an RFC 3339 time"),
    };
    let out = twelve()
        .args([
            "bench",
            "-n",
            "20",
            "-c",
            "2",
            "--json",
            "--start-at",
            &stamp,
        ])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_str(&ok(&out)).unwrap();
    let start_ns = doc["raw"]["start_unix_ns"].as_u64().unwrap();
    assert!(start_ns >= at * 1_000_000_000, "{start_ns} before {stamp}");
    assert_eq!(doc["requests"], 20);
}

#[test]
fn a_bad_start_time_names_the_flag() {
    let out = twelve()
        .args(["bench", "-n", "1", "--start-at", "tomorrow"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--start-at"));
}

/// In an Indexed Job's pod, `--shards N` takes the shard from `JOB_COMPLETION_INDEX`.
#[test]
fn shards_take_the_index_from_the_job() {
    let out = twelve()
        .args([
            "bench", "--shards", "2", "-n", "11", "-c", "4", "-t", "1", "--json",
        ])
        .env("JOB_COMPLETION_INDEX", "1")
        .output()
        .unwrap();
    let doc: Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(doc["config"]["shard"]["index"], 1);
    assert_eq!(doc["config"]["shard"]["count"], 2);
    // The closed model's 11 requests split 5 and 6; 4 connections 2 and 2.
    assert_eq!(doc["requests"], 6);
    assert_eq!(doc["config"]["connections"], 2);
    let missing = twelve()
        .args(["bench", "--shards", "2", "-n", "1"])
        .env_remove("JOB_COMPLETION_INDEX")
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("JOB_COMPLETION_INDEX"));
}

/// A network namespace's `ip` command, failing the test on error.
fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Named namespaces are global (/run/netns): removed on drop, even when an assertion fails.
struct Namespaces(Vec<String>);

impl Drop for Namespaces {
    fn drop(&mut self) {
        for ns in &self.0 {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

#[test]
fn shards_in_namespaces_add_up_to_what_the_server_counted() {
    if std::env::var_os(INNER).is_some() {
        return inner();
    }
    let exe = std::env::current_exe().unwrap();
    let test = "shards_in_namespaces_add_up_to_what_the_server_counted";
    let out = match Command::new("unshare")
        .args([
            "-n",
            "sh",
            "-c",
            "ip link set lo up && exec \"$0\" --exact \"$1\" --nocapture",
        ])
        .arg(&exe)
        .arg(test)
        .env(INNER, "1")
        .output()
    {
        Ok(o) => o,
        Err(e) => return skip_or_fail(format!("cannot run unshare ({e})")),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && !stdout.contains("running 1 test") {
        return skip_or_fail(format!(
            "no network namespace here (unshare -n, ip): {stderr}"
        ));
    }
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "inner run failed:\n{stdout}\n{stderr}"
    );
    eprintln!("{stderr}");
}

/// Inside a fresh network namespace: a bridge with the server's address, one namespace per
/// shard on a veth into it.
fn inner() {
    ip(&["link", "add", "t17br", "type", "bridge"]);
    ip(&["addr", "add", "10.17.0.1/24", "dev", "t17br"]);
    ip(&["link", "set", "t17br", "up"]);
    let mut config = twelve_engine::Config::loopback(1);
    config.listen = vec!["10.17.0.1:8080".parse().unwrap()];
    let server = twelve_engine::Server::new(config, twelve_engine::apps::techempower::router())
        .start()
        .unwrap();
    let before = server.metrics().requests;
    let pid = std::process::id();
    let names: Vec<String> = (0..SHARDS).map(|i| format!("t17-{pid}-{i}")).collect();
    let _cleanup = Namespaces(names.clone());
    for (i, ns) in names.iter().enumerate() {
        let (host, peer) = (format!("t17h{i}"), format!("t17p{i}"));
        ip(&["netns", "add", ns]);
        ip(&["link", "add", &host, "type", "veth", "peer", "name", &peer]);
        ip(&["link", "set", &peer, "netns", ns]);
        ip(&["link", "set", &host, "master", "t17br", "up"]);
        let addr = format!("10.17.0.{}/24", 10 + i);
        ip(&["-n", ns, "addr", "add", &addr, "dev", &peer]);
        ip(&["-n", ns, "link", "set", &peer, "up"]);
        ip(&["-n", ns, "link", "set", "lo", "up"]);
    }
    let shard = |i: u32| -> (Child, PathBuf, PathBuf) {
        let (report, series) = (tmp(&format!("s{i}.json")), tmp(&format!("s{i}.ndjson")));
        let child = Command::new("ip")
            .args(["netns", "exec", &names[i as usize]])
            .arg(env!("CARGO_BIN_EXE_twelve"))
            .args(["bench", "--shard", &format!("{i}/{SHARDS}")])
            .args(["--barrier", "10.17.0.10:7070", "--barrier-timeout", "60s"])
            .args([
                "-R",
                "3000",
                "-n",
                &REQUESTS.to_string(),
                "-c",
                "6",
                "-t",
                "1",
            ])
            .args(["--cpus", "0", "--json", "--timeseries"])
            .arg(&series)
            .arg("http://10.17.0.1:8080/json")
            .stdout(std::fs::File::create(&report).unwrap())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        (child, report, series)
    };
    let runs: Vec<_> = (0..SHARDS).map(shard).collect();
    let mut reports = Vec::new();
    let mut series = Vec::new();
    for (mut child, report, s) in runs {
        assert!(child.wait().unwrap().success(), "a shard failed");
        reports.push(report);
        series.push(s);
    }
    let served = server.metrics().requests - before;
    server.shutdown();
    server.join();

    // Counts: each shard its stripe of the 3001 slots, together exactly what the server saw.
    let docs: Vec<Value> = reports.iter().map(|p| json(p)).collect();
    let counts: Vec<u64> = docs
        .iter()
        .map(|d| d["requests"].as_u64().unwrap())
        .collect();
    assert_eq!(counts, [1001, 1000, 1000]);
    assert!(docs.iter().all(|d| d["errors"]["total"] == 0));
    assert_eq!(served, REQUESTS);

    // The merge: every histogram of every shard, added bucket by bucket.
    let merged_series = tmp("merged.ndjson");
    let out = twelve()
        .arg("merge")
        .args(&reports)
        .args(&series)
        .args(["--json", "--slo", "p99<10s", "--timeseries"])
        .arg(&merged_series)
        .output()
        .unwrap();
    let merged: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut expect = Recorder::new();
    for d in &docs {
        for w in d["raw"]["workers"].as_array().unwrap() {
            expect.add(&recorder(&w["histograms"]));
        }
    }
    assert_eq!(merged["requests"].as_u64(), Some(REQUESTS));
    assert_same(&recorder(&merged["histograms"]), &expect, "merge vs shards");
    let (sum, requests, _) = sum_lines(&series);
    assert_same(&sum, &expect, "shards' intervals vs shards");
    assert_eq!(requests, REQUESTS);
    let (msum, mrequests, _) = sum_lines(&[merged_series]);
    assert_same(&msum, &expect, "merged intervals vs shards");
    assert_eq!(mrequests, REQUESTS);
    assert_eq!(merged["merge"]["shards"], SHARDS);
    assert_eq!(merged["config"]["connections"], 6);
    assert_eq!(merged["config"]["rate_per_s"], 3000.0);
    // Whether the shards kept their schedule on a busy machine is not this test's question
    // (crates/report/tests/merge.rs judges the verdicts); that the merge judged and said so is.
    assert!(merged["merge"]["valid"].is_boolean());
    let valid = merged["merge"]["valid"] == true;
    assert_eq!(out.status.code(), Some(if valid { 0 } else { 1 }));
}
