//! End-to-end tests of the `twelve` binary: version line, and `doctor` on a fixture tree.
use std::process::Command;

fn twelve() -> Command {
    Command::new(env!("CARGO_BIN_EXE_twelve"))
}

#[test]
fn version_names_commit_and_cpu_features() {
    let out = twelve().arg("--version").output().unwrap();
    assert!(out.status.success());
    let line = String::from_utf8(out.stdout).unwrap();
    assert!(
        line.starts_with(concat!("twelve ", env!("CARGO_PKG_VERSION"))),
        "{line}"
    );
    assert!(line.contains("(commit "), "{line}");
    assert!(line.contains("built for "), "{line}");
}

#[test]
fn doctor_json_on_a_fixture_tree_covers_the_catalogue() {
    let root = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/crates/doctor/tests/fixtures/this-host"
    );
    let out = twelve()
        .args(["doctor", "--json", "--steal-window-ms", "0", "--root", root])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    let checks = report["summary"]["checks"]
        .as_array()
        .expect("summary.checks");
    assert_eq!(checks.len(), twelve_doctor::CATALOGUE.len(), "{text}");
}

#[test]
fn unknown_flag_exits_with_usage_error() {
    let out = twelve().args(["serve", "--no-such-flag"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
