//! `--apply` against copies of fixture trees: files change, revert (in Rust and by the written
//! script) restores them byte for byte, commands are only logged, manual steps never applied.
mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use twelve_doctor::apply::{self, ApplyError, Change};

/// Every regular file under `root` with its bytes.
fn files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let kind = e.file_type().unwrap();
            if kind.is_dir() {
                walk(&e.path(), root, out);
            } else if kind.is_file() {
                let rel = e.path().strip_prefix(root).unwrap().display().to_string();
                out.insert(rel, fs::read(e.path()).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

const HOST_IDS: &[&str] = &[
    "net.busy_poll",
    "net.migrate_req",
    "net.port_range",
    "net.syn_backlog",
    "nic.rps",
    "nic.irq_affinity",
    "net.qdisc",
    "cpu.mitigations",
];

/// Applies HOST_IDS to a copy of this-host; returns the tree, the changes and the output.
fn apply_host() -> (common::Tree, BTreeMap<String, Vec<u8>>, Vec<Change>, String) {
    let t = common::tree("this-host");
    let before = files(&t.path);
    let report = common::diagnose(&t.path);
    let actions = apply::plan(&report, &ids(HOST_IDS)).unwrap();
    let mut out = Vec::new();
    let done = apply::apply(&actions, &t.path, false, &mut out).unwrap();
    assert!(done.errors.is_empty(), "{:?}", done.errors);
    (t, before, done.changes, String::from_utf8(out).unwrap())
}

fn read(root: &Path, p: &str) -> String {
    fs::read_to_string(root.join(p)).unwrap()
}

#[test]
fn apply_writes_sysctls_and_maps_under_the_root() {
    let (t, _, _, _) = apply_host();
    assert_eq!(read(&t.path, "proc/sys/net/core/busy_poll"), "50\n");
    assert_eq!(read(&t.path, "proc/sys/net/core/busy_read"), "50\n");
    assert_eq!(read(&t.path, "proc/sys/net/ipv4/tcp_migrate_req"), "1\n");
    assert_eq!(
        read(&t.path, "proc/sys/net/ipv4/ip_local_port_range"),
        "1024 65535\n"
    );
    assert_eq!(
        read(&t.path, "proc/sys/net/ipv4/tcp_max_syn_backlog"),
        "4096\n"
    );
    assert_eq!(
        read(&t.path, "sys/class/net/eth0/queues/rx-0/rps_cpus"),
        "3\n"
    );
    assert_eq!(read(&t.path, "proc/irq/38/smp_affinity_list"), "0\n");
    assert_eq!(read(&t.path, "proc/irq/39/smp_affinity_list"), "0\n");
}

#[test]
fn apply_prints_each_change_before_making_it() {
    let (_, _, _, out) = apply_host();
    assert!(
        out.contains("[net.busy_poll] sysctl -w net.core.busy_poll=50"),
        "{out}"
    );
    assert!(out.contains("(was 0)"), "{out}");
    assert!(
        out.contains("[net.qdisc] tc qdisc replace dev eth0 root noqueue"),
        "{out}"
    );
}

#[test]
fn commands_are_logged_not_run_under_a_fixture_root() {
    let (t, _, _, _) = apply_host();
    assert_eq!(
        read(&t.path, "cmd/executed.log"),
        "tc qdisc replace dev eth0 root noqueue\n"
    );
}

#[test]
fn manual_steps_are_printed_never_applied() {
    let (t, _, _, out) = apply_host();
    assert!(
        out.contains("[cpu.mitigations] manual step, not applied"),
        "{out}"
    );
    assert!(!read(&t.path, "proc/cmdline").contains("mitigations=off"));
}

#[test]
fn revert_restores_every_file() {
    let (t, before, changes, _) = apply_host();
    assert!(apply::revert(&changes, &t.path).is_empty());
    let mut after = files(&t.path);
    let log = after.remove("cmd/executed.log").unwrap();
    assert_eq!(
        String::from_utf8(log).unwrap(),
        "tc qdisc replace dev eth0 root noqueue\ntc qdisc del dev eth0 root\n"
    );
    assert_eq!(after, before);
}

#[test]
fn revert_script_restores_every_file() {
    let (t, before, changes, _) = apply_host();
    let script = apply::revert_script(&changes, &t.path);
    let path = t.path.join("revert.sh");
    fs::write(&path, &script).unwrap();
    let status = std::process::Command::new("sh")
        .arg(&path)
        .status()
        .unwrap();
    assert!(status.success(), "{script}");
    let mut after = files(&t.path);
    after.remove("revert.sh");
    let log = after.remove("cmd/executed.log").unwrap();
    assert!(
        String::from_utf8(log)
            .unwrap()
            .ends_with("tc qdisc del dev eth0 root\n")
    );
    assert_eq!(after, before, "{script}");
}

#[test]
fn dry_run_changes_nothing() {
    let t = common::tree("multiqueue");
    let before = files(&t.path);
    let report = common::diagnose(&t.path);
    let actions = apply::plan(&report, &ids(&["nic.xps", "cpu.governor", "nic.offload"])).unwrap();
    let mut out = Vec::new();
    let done = apply::apply(&actions, &t.path, true, &mut out).unwrap();
    assert!(done.changes.is_empty());
    assert_eq!(files(&t.path), before);
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains("echo 1 > /sys/class/net/ens5/queues/tx-0/xps_cpus"),
        "{out}"
    );
    assert!(out.contains("ethtool -K ens5 gro on"), "{out}");
}

#[test]
fn multiqueue_apply_and_revert_round_trip() {
    let t = common::tree("multiqueue");
    let before = files(&t.path);
    let report = common::diagnose(&t.path);
    let all = ids(&["nic.xps", "nic.irq_affinity", "cpu.governor"]);
    let actions = apply::plan(&report, &all).unwrap();
    let done = apply::apply(&actions, &t.path, false, &mut Vec::new()).unwrap();
    assert_eq!(
        read(&t.path, "sys/class/net/ens5/queues/tx-3/xps_cpus"),
        "8\n"
    );
    assert_eq!(read(&t.path, "proc/irq/53/smp_affinity_list"), "3\n");
    assert_eq!(
        read(
            &t.path,
            "sys/devices/system/cpu/cpu2/cpufreq/scaling_governor"
        ),
        "performance\n"
    );
    // After applying, the same checks come out ok.
    let again = common::diagnose(&t.path);
    for id in &all {
        assert_eq!(
            again.get(id).unwrap().status,
            twelve_doctor::Status::Ok,
            "{id}"
        );
    }
    assert!(apply::revert(&done.changes, &t.path).is_empty());
    assert_eq!(files(&t.path), before);
}

#[test]
fn irqbalance_stop_is_logged_with_its_revert() {
    let t = common::tree("irqbalance");
    let report = common::diagnose(&t.path);
    let actions = apply::plan(&report, &ids(&["nic.irqbalance"])).unwrap();
    let done = apply::apply(&actions, &t.path, false, &mut Vec::new()).unwrap();
    assert_eq!(
        read(&t.path, "cmd/executed.log"),
        "systemctl stop irqbalance\n"
    );
    let script = apply::revert_script(&done.changes, &t.path);
    assert!(script.contains("systemctl start irqbalance"), "{script}");
}

#[test]
fn unknown_id_is_refused() {
    let report = common::report("this-host");
    assert_eq!(
        apply::plan(&report, &ids(&["net.busy_pol"])).unwrap_err(),
        ApplyError::UnknownId("net.busy_pol".to_string())
    );
}

#[test]
fn applying_twice_changes_nothing_the_second_time() {
    let t = common::tree("this-host");
    let report = common::diagnose(&t.path);
    let actions = apply::plan(&report, &ids(&["net.migrate_req"])).unwrap();
    let first = apply::apply(&actions, &t.path, false, &mut Vec::new()).unwrap();
    let mut out = Vec::new();
    let second = apply::apply(&actions, &t.path, false, &mut out).unwrap();
    assert_eq!(first.changes.len(), 1);
    assert!(second.changes.is_empty());
    assert!(String::from_utf8(out).unwrap().contains("is already 1"));
}
