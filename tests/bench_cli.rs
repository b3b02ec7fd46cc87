//! `twelve bench` as a process: the embedded default measures its own server and prints a
//! report; `--json` validates against nothing less than the fields the issue names; `--slo`
//! decides the exit code; `--hdr-log` writes a log; a bad flag exits 2 naming the flag.
//! Every run is a fraction of a second.
use std::path::Path;
use std::process::{Command, Output};

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_twelve"))
        .arg("bench")
        .args(args)
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const SHORT: [&str; 6] = ["-d", "300ms", "--warmup", "100ms", "-c", "4"];

#[test]
fn embedded_default_prints_a_wrk_style_report() {
    let out = bench(&SHORT);
    let text = stdout(&out);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.starts_with("Running 0.3s test @ http://127.0.0.1:"),
        "{text}"
    );
    assert!(text.contains("/json"), "{text}");
    for line in [
        "Thread Stats",
        "Latency Distribution",
        "Requests/sec:",
        "Client:",
    ] {
        assert!(text.contains(line), "missing {line}: {text}");
    }
}

#[test]
fn json_has_the_documented_fields() {
    let out = bench(&[&SHORT[..], &["--json"]].concat());
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["requests"].as_u64().unwrap() > 0, "{doc}");
    assert_eq!(doc["errors"]["total"], 0, "{doc}");
    assert!(doc["config"]["server_cpu"].is_u64(), "{doc}");
    for key in ["duration_s", "rps"] {
        assert!(doc[key].as_f64().unwrap() > 0.0, "{key}");
    }
    for side in ["corrected", "uncorrected"] {
        for key in ["p50_us", "p90_us", "p99_us", "p999_us", "max_us"] {
            assert!(
                doc["latency"][side][key].as_f64().unwrap() > 0.0,
                "{side}.{key}"
            );
        }
    }
    assert!(doc["connections"]["reached"].as_bool().unwrap());
    assert!(doc["client"]["cpu_ns_per_request"].as_f64().unwrap() > 0.0);
    // The host's state rides along: the doctor's summary, one entry per check.
    let checks = doc["doctor"]["checks"].as_array().expect("doctor.checks");
    assert_eq!(checks.len(), twelve_doctor::CATALOGUE.len(), "{doc}");
}

#[test]
fn failed_slo_exits_1_and_says_so() {
    let out = bench(&[&SHORT[..], &["--slo", "p50<1ns", "--slo", "errors<1%"]].concat());
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("SLO p50<1ns: FAIL"), "{text}");
    assert!(text.contains("SLO errors<1%: pass"), "{text}");
}

#[test]
fn hdr_log_is_written() {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench_cli.hlog");
    let _ = std::fs::remove_file(&path);
    let out = bench(&[&SHORT[..], &["--hdr-log", path.to_str().unwrap()]].concat());
    assert!(out.status.success());
    let log = std::fs::read_to_string(&path).unwrap();
    assert!(
        log.starts_with("#[Histogram log format version 1.3]"),
        "{log}"
    );
    assert!(log.contains(",HISTF"), "{log}");
    assert!(log.contains("Tag=uncorrected,"), "{log}");
}

#[test]
fn hgrm_is_written() {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench_cli.hgrm");
    let _ = std::fs::remove_file(&path);
    let out = bench(&[&SHORT[..], &["--hgrm", path.to_str().unwrap()]].concat());
    assert!(out.status.success());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.trim_start().starts_with("Value"), "{text}");
    assert!(text.contains("#[Buckets ="), "{text}");
}

#[test]
fn bad_flag_value_exits_2_naming_the_flag() {
    let out = bench(&["-d", "soon"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-d/--duration"));
}
