//! `twelve bench --shards N --k8s-manifest` prints a Service and an Indexed Job that pass a
//! real schema check: contrib/k8s/check_manifest.py walks every field against the Kubernetes
//! OpenAPI models of the official Python client (unknown fields and wrong types refused,
//! required fields enforced), since `kubectl --dry-run=client` needs a cluster for its schema.
//! Skips where python3 or the `kubernetes` module is missing (fails under
//! `TWELVE_REQUIRE_ALL_TESTS=1`; .ci/run installs it).

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Output, Stdio};
use twelve_testkit::skip_or_fail;

const CHECKER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/contrib/k8s/check_manifest.py");

/// Runs the checker on `yaml`; `None` (after skipping) when it cannot run here.
fn check(yaml: &str) -> Option<Output> {
    let child = Command::new("python3")
        .arg(CHECKER)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            skip_or_fail(format!("cannot run python3 ({e})"));
            return None;
        }
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(yaml.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    if out.status.code() == Some(3) {
        skip_or_fail(format!(
            "the schema check needs the kubernetes Python client (pip install kubernetes): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
        return None;
    }
    Some(out)
}

fn manifest(extra: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args([
            "bench", "--shards", "4", "-R", "20k", "-c", "64", "-d", "30s",
        ])
        .args([
            "--k8s-manifest",
            "--k8s-image",
            "registry.example/twelve:0.1",
        ])
        .args(extra)
        .arg("http://server.default.svc:8080/json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn manifest_passes_the_kubernetes_schema_and_runs_the_shards() {
    let yaml = manifest(&["--k8s-name", "load-a"]);
    let Some(out) = check(&yaml) else { return };
    assert!(
        out.status.success(),
        "{yaml}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let docs: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let (svc, job) = (&docs[0], &docs[1]);
    assert_eq!(
        (svc["kind"].as_str(), job["kind"].as_str()),
        (Some("Service"), Some("Job"))
    );
    assert_eq!(svc["spec"]["clusterIP"], "None");
    assert_eq!(
        svc["spec"]["selector"]["batch.kubernetes.io/job-name"],
        "load-a"
    );
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(
        (spec["completions"].as_u64(), spec["parallelism"].as_u64()),
        (Some(4), Some(4))
    );
    assert_eq!(spec["backoffLimit"], 0);
    assert_eq!(spec["podFailurePolicy"]["rules"][0]["action"], "FailJob");
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["subdomain"], "load-a");
    assert_eq!(pod["restartPolicy"], "Never");
    let c = &pod["containers"][0];
    assert_eq!(c["image"], "registry.example/twelve:0.1");
    let args: Vec<&str> = c["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        args,
        [
            "bench",
            "--shards",
            "4",
            "-R",
            "20k",
            "-c",
            "64",
            "-d",
            "30s",
            "http://server.default.svc:8080/json",
            "--barrier",
            "load-a-0.load-a:7070",
            "--json"
        ]
    );
}

/// The check can fail: a misspelt field and a string count are refused.
#[test]
fn the_schema_check_refuses_an_unknown_field_and_a_wrong_type() {
    let yaml = manifest(&[]);
    for (from, to, why) in [
        ("backoffLimit", "backofLimit", "unknown field 'backofLimit'"),
        (
            "completions: 4",
            "completions: \"4\"",
            "expected an integer",
        ),
    ] {
        let bad = yaml.replace(from, to);
        let Some(out) = check(&bad) else { return };
        assert!(!out.status.success(), "accepted {to}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{err}");
    }
}

#[test]
fn manifest_needs_a_url() {
    let out = Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args(["bench", "--shards", "2", "--k8s-manifest"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--k8s-manifest"));
}
