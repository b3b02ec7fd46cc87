//! Synthetic sweep steps shared by the report's integration tests: known latencies, counts
//! and errors, so every figure a writer prints can be checked.
#![allow(dead_code)]

pub mod validate;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use twelve_report::visual::{Host, HostCheck, HtmlPage, LoadKind, Step, StepRow, plot};
use twelve_report::{RunInfo, RunResult, Slo, Summary, WorkerResult};

/// 2026-11-22T13:05:01.123Z.
pub fn start() -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(1_795_352_701_123)
}

/// A one-worker step at `load`: 1000 responses in one second whose latencies are
/// `base_us + i` µs for i in 0..1000 (uncorrected: half of that), 3 timeouts and two 503s,
/// the worker 25% busy.
pub fn step(load: f64, base_us: u64) -> Step {
    let mut w = WorkerResult {
        cpu: Some(1),
        requests: 1000,
        // The last 20% of the window, on schedule.
        tail_requests: 200,
        bytes_read: 150_000,
        cpu_time: Duration::from_millis(250),
        wall_time: Duration::from_secs(1),
        ..Default::default()
    };
    for i in 0..1000u64 {
        let done = (base_us + i) * 1000;
        w.latency.record(0, done / 2, done);
        w.per_second.push(1);
    }
    w.per_second.truncate(1);
    // Every asked connection open: the self-check's concurrency holds.
    w.conns.established = load as u64;
    w.conns.peak_open = load as u64;
    w.errors.timeout = 3;
    w.errors.status[503] = 2;
    w.errors.status[200] = 998;
    let run = RunResult {
        info: RunInfo {
            urls: vec!["http://127.0.0.1:8080/json".into()],
            method: "GET".into(),
            threads: 1,
            connections: load as usize,
            pipeline: 1,
            duration: Some(Duration::from_secs(1)),
            timeout: Duration::from_secs(2),
            keep_alive: true,
            ..Default::default()
        },
        elapsed: Duration::from_secs(1),
        workers: vec![w],
        server: None,
    };
    let slo = Slo::parse("p99<2ms").unwrap();
    Step {
        load,
        start: start() + Duration::from_secs(load as u64),
        summary: Summary::new(&run, &[slo]),
    }
}

/// Three steps with latency rising with load.
pub fn steps() -> Vec<Step> {
    vec![step(10.0, 100), step(20.0, 400), step(40.0, 2500)]
}

/// The report page of [`steps`], with a doctor summary and a knee note.
pub fn page() -> HtmlPage {
    let steps = steps();
    HtmlPage {
        title: "twelve sweep: http://127.0.0.1:8080/json".into(),
        version: "0.1.0 (test)".into(),
        settings: vec![
            ("url".into(), "http://127.0.0.1:8080/json".into()),
            ("slo".into(), "p99<2ms".into()),
        ],
        kind: LoadKind::Concurrency,
        rows: steps
            .iter()
            .map(|s| (StepRow::of(s), Some(s.passed())))
            .collect(),
        plots: plot::sweep_plots(LoadKind::Concurrency, &steps).unwrap(),
        notes: vec!["highest concurrency meeting p99<2ms: 20".into()],
        doctor: Some(Host {
            counts: [12, 2, 1, 0],
            flagged: vec![HostCheck {
                id: "cpu.governor".into(),
                status: "advise".into(),
                title: "CPU frequency governor".into(),
                found: "scaling_governor: schedutil".into(),
                advice: "Set the governor to `performance` while benchmarking.".into(),
            }],
        }),
        errors: steps.iter().map(|s| s.summary.errors.clone()).collect(),
        verdicts: steps
            .iter()
            .map(|s| s.summary.check.verdict.word())
            .collect(),
    }
}
