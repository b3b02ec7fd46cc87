//! Apply and revert a per-namespace sysctl for real, inside a network namespace this test
//! creates with `unshare`, so the host's own settings are never touched.
//!
//! The outer test re-runs this test binary under `unshare -n` (as root) or `unshare -rn` (an
//! unprivileged user namespace), running only the ignored inner test, which refuses to act
//! unless its network namespace differs from the outer one. The namespace dies with the child.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use twelve_doctor::{ProbeOptions, apply};
use twelve_testkit::skip_or_fail;

const SYSCTL: &str = "/proc/sys/net/ipv4/tcp_migrate_req";
const OUTER_NS: &str = "TWELVE_DOCTOR_OUTER_NETNS";

fn netns_id() -> String {
    fs::read_link("/proc/self/ns/net")
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

#[test]
fn apply_and_revert_migrate_req_in_a_fresh_netns() {
    let Ok(host_before) = fs::read_to_string(SYSCTL) else {
        return skip_or_fail(format!("{SYSCTL} missing (kernel before 5.14)"));
    };
    let exe = std::env::current_exe().unwrap();
    let root = apply::effective_uid_is_root();
    let flags = if root { "-n" } else { "-rn" };
    let mut child = Command::new("unshare");
    child
        .arg(flags)
        .arg("--")
        .arg(&exe)
        .args([
            "--ignored",
            "--exact",
            "inner_apply_and_revert",
            "--nocapture",
        ])
        .env(OUTER_NS, netns_id());
    let out = match child.output() {
        Ok(o) => o,
        Err(e) => {
            return skip_or_fail(format!("cannot run unshare: {e}"));
        }
    };
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && text.contains("unshare:") {
        return skip_or_fail(format!("unshare {flags} refused here: {}", text.trim()));
    }
    assert!(out.status.success(), "inner test failed:\n{text}");
    assert!(text.contains("inner: applied and reverted"), "{text}");
    assert!(text.contains("1 passed"), "inner test did not run:\n{text}");
    assert_eq!(
        fs::read_to_string(SYSCTL).unwrap(),
        host_before,
        "host value changed"
    );
}

#[test]
#[ignore = "run by apply_and_revert_migrate_req_in_a_fresh_netns inside a new netns"]
fn inner_apply_and_revert() {
    let Ok(outer) = std::env::var(OUTER_NS) else {
        // Not a skip of a test CI expects: this half only means something inside the outer
        // test's namespace, which runs it there.
        println!("skipped: runs only inside the outer test's network namespace");
        return;
    };
    assert_ne!(
        netns_id(),
        outer,
        "not in a new network namespace: refusing to touch sysctls"
    );
    let report = twelve_doctor::diagnose(&ProbeOptions {
        root: "/".into(),
        steal_window: Duration::ZERO,
    });
    let fresh = fs::read_to_string(SYSCTL).unwrap();
    assert_eq!(
        fresh.trim(),
        "0",
        "a fresh netns starts with tcp_migrate_req = 0"
    );
    let actions = apply::plan(&report, &["net.migrate_req".to_string()]).unwrap();
    let mut out = Vec::new();
    let done = apply::apply(&actions, Path::new("/"), false, &mut out).unwrap();
    assert!(done.errors.is_empty(), "{:?}", done.errors);
    assert_eq!(fs::read_to_string(SYSCTL).unwrap().trim(), "1");
    let script = apply::revert_script(&done.changes, Path::new("/"));
    assert!(script.contains(&format!("> {SYSCTL}")), "{script}");
    assert!(apply::revert(&done.changes, Path::new("/")).is_empty());
    assert_eq!(fs::read_to_string(SYSCTL).unwrap(), fresh);
    println!("inner: applied and reverted {SYSCTL}");
}
