//! The `--json` document of a real (synthetic-data) run validates against the shipped JSON
//! Schema, with a validator for the keywords the schema uses (written here rather than pulling
//! a large validator crate into the build).
use serde_json::Value;
use std::time::Duration;
use twelve_report::{JsonReport, RunInfo, RunResult, SCHEMA, Slo, WorkerResult};

/// Validates `v` against `s`; returns the path of every violation.
fn validate(root: &Value, s: &Value, v: &Value, path: &str, out: &mut Vec<String>) {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.strip_prefix("#/$defs/").expect("local refs only");
        validate(root, &root["$defs"][name], v, path, out);
    }
    if let Some(t) = s.get("type") {
        let types: Vec<&str> = match t {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => panic!("bad type keyword"),
        };
        let ok = types.iter().any(|t| match *t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            "number" => v.is_number(),
            "integer" => v.is_u64() || v.is_i64(),
            other => panic!("unknown type {other}"),
        });
        if !ok {
            out.push(format!("{path}: {v} is not {types:?}"));
            return;
        }
    }
    if let Some(c) = s.get("const") {
        if c != v {
            out.push(format!("{path}: {v} != const {c}"));
        }
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        if !e.contains(v) {
            out.push(format!("{path}: {v} not in enum"));
        }
    }
    if let (Some(min), Some(x)) = (s.get("minimum").and_then(Value::as_f64), v.as_f64()) {
        if x < min {
            out.push(format!("{path}: {x} < minimum {min}"));
        }
    }
    if let (Some(max), Some(x)) = (s.get("maximum").and_then(Value::as_f64), v.as_f64()) {
        if x > max {
            out.push(format!("{path}: {x} > maximum {max}"));
        }
    }
    if let Some(obj) = v.as_object() {
        for r in s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let r = r.as_str().unwrap();
            if !obj.contains_key(r) {
                out.push(format!("{path}: missing {r}"));
            }
        }
        let props = s.get("properties").and_then(Value::as_object);
        for (k, val) in obj {
            if let Some(ps) = props.and_then(|p| p.get(k)) {
                validate(root, ps, val, &format!("{path}.{k}"), out);
            } else {
                match s.get("additionalProperties") {
                    Some(Value::Bool(false)) => out.push(format!("{path}: unexpected {k}")),
                    Some(extra @ Value::Object(_)) => {
                        validate(root, extra, val, &format!("{path}.{k}"), out)
                    }
                    _ => {}
                }
            }
        }
    }
    if let (Some(items), Some(arr)) = (s.get("items"), v.as_array()) {
        for (i, x) in arr.iter().enumerate() {
            validate(root, items, x, &format!("{path}[{i}]"), out);
        }
    }
}

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
