//! The `--json` document of a real (synthetic-data) run validates against the shipped JSON
//! Schema, with the tests' small validator (tests/common/validate.rs).
mod common;

use common::validate::validate;
use serde_json::Value;
use std::time::Duration;
use twelve_report::{JsonReport, RunInfo, RunResult, SCHEMA, Slo, WorkerResult};

fn sample_run() -> RunResult {
    let mut workers = Vec::new();
    for w in 0..2u64 {
        let mut r = WorkerResult {
            cpu: Some(w as usize),
            requests: 1000,
            bytes_read: 150_000,
            per_second: vec![500, 500],
            cpu_time: Duration::from_millis(900),
            wall_time: Duration::from_secs(2),
            context_switches: 12,
            ..Default::default()
        };
        for i in 0..1000u64 {
            r.latency
                .record(i * 1000, i * 1000 + 300, i * 1000 + 20_000 + i * 10 + w);
        }
        r.errors.status[200] = 990;
        r.errors.status[503] = 10;
        r.errors.timeout = 1;
        r.conns.established = 8;
        r.conns.peak_open = 8;
        workers.push(r);
    }
    RunResult {
        info: RunInfo {
            urls: vec!["http://127.0.0.1:8080/json".into()],
            method: "GET".into(),
            threads: 2,
            connections: 16,
            pipeline: 1,
            rate_per_s: Some(1000.0),
            arrival: Some("poisson".into()),
            duration: Some(Duration::from_secs(2)),
            warmup: Duration::from_secs(1),
            timeout: Duration::from_secs(2),
            keep_alive: true,
            cpus: vec![0, 1],
            ..Default::default()
        },
        elapsed: Duration::from_secs(2),
        workers,
    }
}

#[test]
fn real_output_matches_schema() {
    let run = sample_run();
    let slo = vec![
        Slo::parse("p99<2ms")
            .unwrap()
            .check(&JsonReport::new(&run, "0", vec![])),
        Slo::parse("errors<0.1%")
            .unwrap()
            .check(&JsonReport::new(&run, "0", vec![])),
    ];
    let doc: Value = serde_json::from_str(&JsonReport::new(&run, "0.1.0", slo).to_json()).unwrap();
    let schema: Value = serde_json::from_str(SCHEMA).unwrap();
    let mut errors = Vec::new();
    validate(&schema, &schema, &doc, "$", &mut errors);
    assert!(errors.is_empty(), "{errors:#?}");
    for key in ["p50_us", "p90_us", "p99_us", "p999_us", "max_us"] {
        assert!(
            doc["latency"]["corrected"][key].as_f64().unwrap() > 0.0,
            "{key}"
        );
        assert!(
            doc["latency"]["uncorrected"][key].as_f64().unwrap() > 0.0,
            "{key}"
        );
    }
}

#[test]
fn validator_rejects_a_missing_field() {
    let mut doc: Value =
        serde_json::from_str(&JsonReport::new(&sample_run(), "0", vec![]).to_json()).unwrap();
    doc.as_object_mut().unwrap().remove("rps");
    doc["latency"]["corrected"]["p99_us"] = Value::String("fast".into());
    let schema: Value = serde_json::from_str(SCHEMA).unwrap();
    let mut errors = Vec::new();
    validate(&schema, &schema, &doc, "$", &mut errors);
    assert_eq!(errors.len(), 2, "{errors:#?}");
}

#[test]
fn merged_totals_equal_the_sum_over_workers() {
    let run = sample_run();
    let doc = JsonReport::new(&run, "0", vec![]);
    assert_eq!(doc.requests, 2000);
    assert_eq!(doc.latency.corrected.count, 2000);
    assert_eq!(doc.errors.status["503"], 20);
    assert_eq!(doc.errors.total, 20 + 2);
    assert_eq!(doc.connections.peak_open, 16);
    assert!(doc.connections.reached);
}

#[test]
fn slo_decides_on_measured_values() {
    let run = sample_run();
    let doc = JsonReport::new(&run, "0", vec![]);
    assert!(Slo::parse("p99<2ms").unwrap().check(&doc).pass);
    assert!(!Slo::parse("p99<20us").unwrap().check(&doc).pass);
    assert!(!Slo::parse("errors<0.1%").unwrap().check(&doc).pass);
}

/// The client line names the naps of `--coalesce` only when there were some.
#[test]
fn text_report_counts_naps_only_when_taken() {
    let mut run = sample_run();
    let text = |run: &RunResult| {
        let doc = JsonReport::new(run, "0", vec![]);
        twelve_report::text::render(run, &doc)
    };
    assert!(!text(&run).contains("naps"), "{}", text(&run));
    run.workers[0].naps = 30;
    run.workers[1].naps = 12;
    let t = text(&run);
    assert!(
        t.contains("% busy, 42 naps after small batches (--coalesce)\n"),
        "{t}"
    );
}

#[test]
fn text_report_has_wrk_layout() {
    let run = sample_run();
    let doc = JsonReport::new(&run, "0", vec![]);
    let text = twelve_report::text::render(&run, &doc);
    for line in [
        "Running 2s test @ http://127.0.0.1:8080/json",
        "Thread Stats   Avg      Stdev     Max   +/- Stdev",
        "Latency Distribution",
        "2000 requests in 2.00s",
        "Requests/sec:    1000.00",
        "Non-2xx or 3xx responses: 20 (503: 20)",
        "Thread  CPU   Requests",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
}

#[test]
fn a_report_carrying_the_doctor_summary_matches_schema() {
    let mut report = JsonReport::new(&sample_run(), "0.1.0", vec![]);
    // The shape `twelve_doctor::Summary` serializes to (crates/doctor/report.schema.json).
    report.doctor = Some(serde_json::json!({
        "schema_version": 1, "ok": 1, "advise": 1, "warn": 0, "unknown": 0,
        "checks": [{"id": "cpu.online", "status": "ok"}, {"id": "net.qdisc", "status": "advise"}]
    }));
    let doc: Value = serde_json::from_str(&report.to_json()).unwrap();
    let schema: Value = serde_json::from_str(SCHEMA).unwrap();
    let mut errors = Vec::new();
    validate(&schema, &schema, &doc, "$", &mut errors);
    assert!(errors.is_empty(), "{errors:#?}");
    // And a summary missing its counts is refused.
    let mut broken = doc.clone();
    broken["doctor"].as_object_mut().unwrap().remove("warn");
    let mut errors = Vec::new();
    validate(&schema, &schema, &broken, "$", &mut errors);
    assert!(!errors.is_empty(), "a doctor summary without `warn` passed");
}
