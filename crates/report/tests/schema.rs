//! The `--json` document of a real (synthetic-data) run validates against the shipped JSON
//! Schema, with the tests' small validator (tests/common/validate.rs).
mod common;

use common::validate::validate;
use serde_json::Value;
use std::time::Duration;
use twelve_report::{
    JsonReport, RunInfo, RunResult, SCHEMA, ServerCost, Slo, Summary, WorkerResult,
};

fn sample_run() -> RunResult {
    let mut workers = Vec::new();
    for w in 0..2u64 {
        let mut r = WorkerResult {
            cpu: Some(w as usize),
            requests: 1000,
            bytes_read: 150_000,
            per_second: vec![500, 500],
            // The last 20% of the 2 s window: on schedule.
            tail_requests: 200,
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
        // As a run without a URL reports its embedded server.
        server: Some(ServerCost {
            cpu: Duration::from_secs(1),
            requests: 2000,
            wall: Duration::from_secs(2),
        }),
    }
}

/// The summary with no SLOs.
fn summarise(run: &RunResult) -> Summary {
    Summary::new(run, &[])
}

#[test]
fn real_output_matches_schema() {
    let run = sample_run();
    let slos = [
        Slo::parse("p99<2ms").unwrap(),
        Slo::parse("errors<0.1%").unwrap(),
    ];
    let summary = Summary::new(&run, &slos);
    let doc: Value = serde_json::from_str(&JsonReport::of(&summary, "0.1.0").to_json()).unwrap();
    let schema: Value = serde_json::from_str(SCHEMA).unwrap();
    let mut errors = Vec::new();
    validate(&schema, &schema, &doc, "$", &mut errors);
    assert!(errors.is_empty(), "{errors:#?}");
    // `actual` stays in µs; `unit` says so and `measured` is in the SLO's own unit.
    assert_eq!(doc["slo"][0]["unit"], "us", "{doc}");
    assert_eq!(doc["slo"][0]["measured"], "0.030ms", "{doc}");
    assert_eq!(doc["slo"][1]["unit"], "%", "{doc}");
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
        serde_json::from_str(&JsonReport::of(&summarise(&sample_run()), "0").to_json()).unwrap();
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
    let doc = JsonReport::of(&summarise(&run), "0");
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
    let s = summarise(&run);
    assert!(Slo::parse("p99<2ms").unwrap().check(&s).pass);
    assert!(!Slo::parse("p99<20us").unwrap().check(&s).pass);
    assert!(!Slo::parse("errors<0.1%").unwrap().check(&s).pass);
}

/// The client line names the naps of `--coalesce` only when there were some, with why; the
/// JSON says the same.
#[test]
fn text_report_counts_naps_only_when_taken() {
    let mut run = sample_run();
    let text = |run: &RunResult| twelve_report::text::render(&summarise(run));
    assert!(!text(&run).contains("naps"), "{}", text(&run));
    run.workers[0].naps = 30;
    run.workers[0].nap_cause = Some(twelve_report::NapCause::Asked);
    run.workers[1].naps = 12;
    run.workers[1].nap_cause = Some(twelve_report::NapCause::Asked);
    let t = text(&run);
    assert!(
        t.contains("% busy, 42 naps after small batches (asked: --coalesce)\n"),
        "{t}"
    );
    // One worker napped because it was the limit: that is the reason given.
    run.workers[1].nap_cause = Some(twelve_report::NapCause::ClientLimit);
    let t = text(&run);
    assert!(
        t.contains(
            "% busy, 42 naps after small batches (the client was the limit: --coalesce auto \
             naps only then)\n"
        ),
        "{t}"
    );
    let json = JsonReport::of(&summarise(&run), "0");
    assert_eq!(
        (json.client.naps, json.client.nap_cause),
        (42, Some("client-limit"))
    );
}

#[test]
fn text_report_has_wrk_layout() {
    let text = twelve_report::text::render(&summarise(&sample_run()));
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
    let mut report = JsonReport::of(&summarise(&sample_run()), "0.1.0");
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

/// A comparison of two rounds per side, the second side 10% faster.
fn comparison_doc() -> Value {
    use twelve_report::visual::compare_report::{CompareDoc, SideJson, compare};
    let side = |scale: u64| -> Vec<Summary> {
        (0..2)
            .map(|_| {
                let mut run = sample_run();
                for w in &mut run.workers {
                    w.requests = w.requests * scale / 10;
                }
                summarise(&run)
            })
            .collect()
    };
    let (a, b) = (side(10), side(11));
    let figures = compare(&a, &b);
    let url = "http://127.0.0.1:8080/json".to_string();
    let mut doc = CompareDoc::new(
        "0.1.0",
        2,
        SideJson {
            spec: url.clone(),
            url: url.clone(),
        },
        SideJson {
            spec: "twelve serve".into(),
            url,
        },
        &figures,
    );
    let conclusion = twelve_report::visual::compare_verdict::conclude(&a, &b, &figures, false);
    doc.conclusion = Some((&conclusion).into());
    serde_json::from_str(&doc.to_json()).unwrap()
}

#[test]
fn compare_output_matches_schema() {
    let doc = comparison_doc();
    let schema: Value = serde_json::from_str(twelve_report::visual::COMPARE_SCHEMA).unwrap();
    let mut errors = Vec::new();
    validate(&schema, &schema, &doc, "$", &mut errors);
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(doc["schema"], twelve_report::visual::COMPARE_SCHEMA_ID);
    let figures = doc["figures"].as_array().unwrap();
    assert_eq!(figures.len(), 8);
    assert_eq!(figures[0]["figure"], "req/s");
    assert_eq!(figures[0]["a"]["values"].as_array().unwrap().len(), 2);
    let ratio = figures[0]["ratio_b_over_a"]["median"].as_f64().unwrap();
    assert!((ratio - 1.1).abs() < 1e-9, "{ratio}");
}

#[test]
fn compare_validator_rejects_a_missing_side_and_a_bad_value() {
    let mut doc = comparison_doc();
    doc.as_object_mut().unwrap().remove("b");
    doc["figures"][1]["a"]["values"][0] = Value::String("fast".into());
    let schema: Value = serde_json::from_str(twelve_report::visual::COMPARE_SCHEMA).unwrap();
    let mut errors = Vec::new();
    validate(&schema, &schema, &doc, "$", &mut errors);
    assert_eq!(errors.len(), 2, "{errors:#?}");
}

/// The whole text report of the sample run, byte for byte: the layout users and scripts read.
#[test]
fn text_report_golden() {
    let slos = [
        Slo::parse("p99<2ms").unwrap(),
        Slo::parse("errors<0.1%").unwrap(),
    ];
    let text = twelve_report::text::render(&Summary::new(&sample_run(), &slos));
    assert_eq!(text, GOLDEN_TEXT, "\n{text}");
}

const GOLDEN_TEXT: &str = r"Running 2s test @ http://127.0.0.1:8080/json
  2 threads and 16 connections, open model at 1.00k req/s (poisson), keep-alive, pipeline 1, warm-up 1s
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   25.00us    2.89us   30.00us    57.80%
    Req/Sec    500.00      0.00    500.00   100.00%
  Latency Distribution   corrected  uncorrected   queue wait
        50%             24.99us      24.70us       0.30us
        75%             27.50us      27.20us       0.30us
        90%             28.99us      28.70us       0.30us
        99%             29.90us      29.60us       0.30us
      99.9%             29.98us      29.70us       0.30us
     99.99%             30.00us      29.70us       0.30us
    99.999%             30.00us      29.70us       0.30us
        max             30.00us      29.70us       0.30us
  Thread  CPU   Requests      Req/s       Min       Avg       p50       p99       Max  Busy
       0    0       1000     500.00   20.00us   25.00us   24.99us   29.90us   30.00us   45%
       1    1       1000     500.00   20.00us   25.00us   24.99us   29.90us   30.00us   45%
  2000 requests in 2.00s, 292.97KB read
  Socket errors: connect 0 (refused 0, timeout 0, other 0), read 0, write 0, timeout 2
  Non-2xx or 3xx responses: 20 (503: 20)
Requests/sec:    1000.00
Transfer/sec:   146.48KB
Client: 1.80s CPU, 900000 ns CPU per request, busiest worker 45% busy
Server (embedded): 500000 ns CPU per request, 2.00k requests per server CPU-second, 50% busy
Self-check: rate 1.00k of 1.00k req/s asked (rate_ratio 1.000, 1.000 over the last 20%), concurrency 16 of 16 asked, client 900000 ns CPU per request
  schedule lag (due to sent): p99 0.30us, max 0.30us
Verdict: valid: the load was delivered, the client had room
SLO p99<2ms: pass (measured 0.030ms)
SLO errors<0.1%: FAIL (measured 1.088%)
";
