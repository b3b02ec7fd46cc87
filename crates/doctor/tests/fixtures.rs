//! Every check on fixture trees: the captured host and the hand-made variants.
mod common;

use twelve_doctor::{CATALOGUE, Status};

fn check(variant: &str, id: &str, want: Status) {
    let report = common::report(variant);
    let f = report
        .get(id)
        .unwrap_or_else(|| panic!("{id} not in report"));
    assert_eq!(
        f.status, want,
        "{variant}/{id}: found `{}`, recommendation `{}`",
        f.found, f.recommendation
    );
}

macro_rules! cases {
    ($($name:ident: $variant:literal, $id:literal => $status:ident;)*) => {
        /// (variant, check id, expected status) for every case below.
        const EXPECTED: &[(&str, &str, Status)] = &[$(($variant, $id, Status::$status)),*];
        $(
            #[test]
            fn $name() {
                check($variant, $id, Status::$status);
            }
        )*
    };
}

cases! {
    // The captured host (2 vCPUs, single-queue virtio NIC, no cpufreq, no ethtool).
    host_cpu_online: "this-host", "cpu.online" => Ok;
    host_cpu_isolation: "this-host", "cpu.isolation" => Advise;
    host_cpu_governor_missing: "this-host", "cpu.governor" => Unknown;
    host_cpu_steal: "this-host", "cpu.steal" => Ok;
    host_nic_queues_single: "this-host", "nic.queues" => Advise;
    host_nic_irq_affinity_unpinned: "this-host", "nic.irq_affinity" => Advise;
    host_nic_irqbalance_absent: "this-host", "nic.irqbalance" => Ok;
    host_nic_rps_off_with_one_queue: "this-host", "nic.rps" => Advise;
    host_nic_xps_one_tx_queue: "this-host", "nic.xps" => Ok;
    host_busy_poll_off: "this-host", "net.busy_poll" => Advise;
    host_coalesce_no_ethtool: "this-host", "nic.coalesce" => Unknown;
    host_mitigations_on: "this-host", "cpu.mitigations" => Advise;
    host_audit_off: "this-host", "sec.audit" => Ok;
    host_no_seccomp: "this-host", "sec.seccomp" => Ok;
    host_conntrack_idle: "this-host", "net.conntrack" => Ok;
    host_no_firewall: "this-host", "net.firewall" => Ok;
    host_qdisc_pfifo_fast: "this-host", "net.qdisc" => Advise;
    host_congestion_bbr: "this-host", "net.congestion" => Ok;
    host_offload_no_ethtool: "this-host", "nic.offload" => Unknown;
    host_no_packet_sockets: "this-host", "net.packet_sockets" => Ok;
    host_somaxconn_4096: "this-host", "net.somaxconn" => Ok;
    host_syn_backlog_below_somaxconn: "this-host", "net.syn_backlog" => Advise;
    host_port_range_default: "this-host", "net.port_range" => Advise;
    host_tw_reuse_loopback: "this-host", "net.tw_reuse" => Ok;
    host_migrate_req_off: "this-host", "net.migrate_req" => Advise;
    host_nofile_20000: "this-host", "sys.nofile" => Advise;
    host_io_uring_on: "this-host", "sys.io_uring" => Ok;
    // Hand-made variants, each about one situation.
    mitigations_off_cmdline: "mitigations-off", "cpu.mitigations" => Ok;
    irqbalance_running: "irqbalance", "nic.irqbalance" => Warn;
    conntrack_tracking: "conntrack", "net.conntrack" => Warn;
    conntrack_iptables_rules: "conntrack", "net.firewall" => Warn;
    conntrack_loaded_but_idle: "netfilter-idle", "net.conntrack" => Ok;
    netfilter_tables_without_rules: "netfilter-idle", "net.firewall" => Advise;
    isolcpus_set: "isolcpus", "cpu.isolation" => Ok;
    nosy_dhcp_client: "nosy-neighbour", "net.packet_sockets" => Warn;
    audit_rules_loaded: "audited", "sec.audit" => Warn;
    seccomp_filter: "audited", "sec.seccomp" => Warn;
    audit_rules_from_etc_when_auditd_runs: "auditd-etc", "sec.audit" => Warn;
    steal_heavy: "steal", "cpu.steal" => Warn;
    tuned_busy_poll: "tuned", "net.busy_poll" => Ok;
    tuned_somaxconn: "tuned", "net.somaxconn" => Ok;
    tuned_syn_backlog: "tuned", "net.syn_backlog" => Ok;
    tuned_port_range: "tuned", "net.port_range" => Ok;
    tuned_tw_reuse_off: "tuned", "net.tw_reuse" => Advise;
    tuned_migrate_req: "tuned", "net.migrate_req" => Ok;
    tuned_nofile: "tuned", "sys.nofile" => Ok;
    tuned_io_uring_disabled: "tuned", "sys.io_uring" => Advise;
    tuned_congestion_reno: "tuned", "net.congestion" => Advise;
    tuned_qdisc_noqueue: "tuned", "net.qdisc" => Ok;
    tuned_rps_spread: "tuned", "nic.rps" => Ok;
    tuned_irq_pinned: "tuned", "nic.irq_affinity" => Ok;
    multiqueue_smt: "multiqueue", "cpu.online" => Ok;
    multiqueue_governor_powersave: "multiqueue", "cpu.governor" => Advise;
    multiqueue_queue_per_cpu: "multiqueue", "nic.queues" => Ok;
    multiqueue_irqs_half_pinned: "multiqueue", "nic.irq_affinity" => Advise;
    multiqueue_rps_off: "multiqueue", "nic.rps" => Ok;
    multiqueue_xps_unset: "multiqueue", "nic.xps" => Advise;
    multiqueue_adaptive_coalescing: "multiqueue", "nic.coalesce" => Advise;
    multiqueue_gro_off: "multiqueue", "nic.offload" => Advise;
    multiqueue_mq_root: "multiqueue", "net.qdisc" => Advise;
}

#[test]
fn every_check_has_a_fixture_exercising_it() {
    for c in CATALOGUE {
        assert!(
            EXPECTED
                .iter()
                .any(|(_, id, s)| *id == c.id && *s != Status::Unknown),
            "no fixture case gives {} a real (non-unknown) status",
            c.id
        );
    }
}

#[test]
fn every_variant_is_used_and_exists() {
    for v in common::VARIANTS {
        assert!(EXPECTED.iter().any(|(var, _, _)| var == v), "{v} unused");
        if *v != "this-host" {
            assert!(common::fixtures_dir().join("variants").join(v).is_dir());
        }
    }
}

#[test]
fn catalogue_ids_are_unique_and_dotted() {
    let mut ids: Vec<&str> = CATALOGUE.iter().map(|c| c.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), CATALOGUE.len());
    assert!(ids.iter().all(|id| id.contains('.') && !id.contains(' ')));
}

#[test]
fn every_finding_is_explained() {
    for f in common::report("multiqueue").findings {
        assert!(
            !f.found.is_empty() && !f.why.is_empty() && !f.risk.is_empty(),
            "{}",
            f.id
        );
        assert_eq!(f.apply_lines().len(), f.revert_lines().len(), "{}", f.id);
        if f.status == Status::Ok {
            continue;
        }
        assert!(!f.recommendation.is_empty(), "{}", f.id);
    }
}

#[test]
fn packet_socket_owner_is_named() {
    let r = common::report("nosy-neighbour");
    let f = r.get("net.packet_sockets").unwrap();
    assert!(f.found.contains("dhclient (pid 777)"), "{}", f.found);
}

#[test]
fn multiqueue_irq_writes_pin_queue_i_to_cpu_i() {
    let r = common::report("multiqueue");
    let lines = r.get("nic.irq_affinity").unwrap().apply_lines();
    assert_eq!(
        lines,
        vec![
            "echo 2 > /proc/irq/52/smp_affinity_list",
            "echo 3 > /proc/irq/53/smp_affinity_list"
        ]
    );
}

#[test]
fn multiqueue_xps_maps_tx_i_to_cpu_i() {
    let r = common::report("multiqueue");
    let lines = r.get("nic.xps").unwrap().apply_lines();
    assert_eq!(
        lines,
        vec![
            "echo 1 > /sys/class/net/ens5/queues/tx-0/xps_cpus",
            "echo 4 > /sys/class/net/ens5/queues/tx-2/xps_cpus",
            "echo 8 > /sys/class/net/ens5/queues/tx-3/xps_cpus"
        ]
    );
}

#[test]
fn summary_counts_match_findings() {
    let r = common::report("this-host");
    let s = r.summary();
    assert_eq!(s.ok + s.advise + s.warn + s.unknown, CATALOGUE.len());
    assert_eq!(s.checks.len(), CATALOGUE.len());
    assert_eq!(s.checks[0].id, CATALOGUE[0].id);
    let back: twelve_doctor::Summary =
        serde_json::from_value(serde_json::to_value(&s).unwrap()).unwrap();
    assert_eq!(back, s);
}
