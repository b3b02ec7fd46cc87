//! Network-stack and limit checks: busy polling, netfilter, qdisc, packet sockets, sysctls.
use super::{Outcome, sysctl_check};
use crate::model::{Action, Status};
use crate::parse;
use crate::snapshot::Snapshot;

/// `net.busy_poll`: net.core.busy_poll / busy_read (global, not per namespace).
pub(crate) fn busy_poll(snap: &Snapshot) -> Outcome {
    let (Some(poll), Some(read)) = (
        snap.sysctl("net.core.busy_poll"),
        snap.sysctl("net.core.busy_read"),
    ) else {
        return Outcome::unknown(
            "net.core.busy_poll / busy_read not readable (they exist only in the initial \
             network namespace)",
        );
    };
    let found = format!("busy_poll = {poll}, busy_read = {read}");
    if poll != "0" && read != "0" {
        return Outcome::ok(found);
    }
    let mut actions = Vec::new();
    for (key, v) in [("net.core.busy_poll", poll), ("net.core.busy_read", read)] {
        if v == "0" {
            actions.push(Action::sysctl(key, v, "50"));
        }
    }
    Outcome::new(
        Status::Advise,
        found,
        "Set busy_poll and busy_read to 50 (us) on a NIC with NAPI IDs, together with longer \
         interrupt coalescing (nic.coalesce). It does nothing on loopback.",
    )
    .with(actions)
}

/// `net.conntrack`: connection tracking loaded and tracking.
pub(crate) fn conntrack(snap: &Snapshot) -> Outcome {
    let modules = snap.modules.as_deref().map(parse::modules);
    let loaded = modules
        .as_ref()
        .is_some_and(|m| m.contains(&"nf_conntrack"));
    let count = snap
        .sysctl("net.netfilter.nf_conntrack_count")
        .and_then(|c| c.parse::<u64>().ok());
    if !loaded && !snap.conntrack_present {
        return Outcome::ok("nf_conntrack is not loaded");
    }
    let how = if loaded { "loaded" } else { "built in" };
    match count {
        Some(0) | None => Outcome::ok(format!(
            "nf_conntrack {how}, tracking {} connections (no rule needs it in this namespace)",
            count.map_or("an unknown number of".to_string(), |c| c.to_string())
        )),
        Some(n) => Outcome::new(
            Status::Warn,
            format!("nf_conntrack {how}, tracking {n} connections"),
            "Connection tracking hashes every packet and inserts every connection. On a \
             benchmark host remove the rules that need it (NAT, `ct state`) and unload it.",
        )
        .with(vec![Action::manual(
            "save the rules (`iptables-save > rules.v4`, `nft list ruleset > rules.nft`), \
             flush them, then `modprobe -r nf_conntrack` (with its dependants)",
            "`iptables-restore < rules.v4` / `nft -f rules.nft` (loads the modules again)",
        )]),
    }
}

/// `net.firewall`: iptables / nftables modules, tables and rule counts.
pub(crate) fn firewall(snap: &Snapshot) -> Outcome {
    let modules = snap
        .modules
        .as_deref()
        .map(parse::modules)
        .unwrap_or_default();
    let fw_modules: Vec<&str> = modules
        .iter()
        .copied()
        .filter(|m| {
            [
                "ip_tables",
                "ip6_tables",
                "nf_tables",
                "x_tables",
                "iptable_filter",
            ]
            .contains(m)
        })
        .collect();
    let tables: Vec<&str> = snap
        .iptables_names
        .as_deref()
        .map(|t| t.split_whitespace().collect())
        .unwrap_or_default();
    let nft = snap.nft_ruleset.as_deref().map(parse::nft_rule_count);
    let ipt = snap
        .iptables_save
        .as_deref()
        .map(parse::iptables_rule_count);
    let found = format!(
        "modules: {}; iptables tables: {}; nftables rules: {}; iptables rules: {}",
        if fw_modules.is_empty() {
            "none listed".to_string()
        } else {
            fw_modules.join(", ")
        },
        if tables.is_empty() {
            "none".to_string()
        } else {
            tables.join(", ")
        },
        nft.map_or("not counted (no nft)".to_string(), |n| n.to_string()),
        ipt.map_or("not counted (no iptables-save)".to_string(), |n| n
            .to_string()),
    );
    let manual = Action::manual(
        "save and flush the rules (`nft list ruleset > rules.nft; nft flush ruleset`, or \
         `iptables-save > rules.v4; iptables -F`), then unload the modules",
        "`nft -f rules.nft` / `iptables-restore < rules.v4`",
    );
    if nft.unwrap_or(0) + ipt.unwrap_or(0) > 0 {
        return Outcome::new(
            Status::Warn,
            found,
            "Every packet walks these rules. On a benchmark host, flush them and unload \
             netfilter if policy allows.",
        )
        .with(vec![manual]);
    }
    if !tables.is_empty() || !fw_modules.is_empty() {
        return Outcome::new(
            Status::Advise,
            found,
            "Netfilter is loaded; even empty tables register hooks. Unload it on a benchmark \
             host.",
        )
        .with(vec![manual]);
    }
    Outcome::ok(found)
}

/// `net.qdisc`: default_qdisc and each NIC's root qdisc (noqueue wanted).
pub(crate) fn qdisc(snap: &Snapshot) -> Outcome {
    let default = snap.sysctl("net.core.default_qdisc").unwrap_or("n/a");
    let Some(tc) = snap.tc_qdisc.as_deref() else {
        return Outcome::unknown(format!(
            "default_qdisc = {default}; no `tc qdisc show` output (tc not installed)"
        ));
    };
    let roots = parse::tc_root_qdiscs(tc);
    let nic = |dev: &str| {
        snap.interfaces
            .iter()
            .any(|i| i.name == dev && i.has_device)
    };
    let shown: Vec<String> = roots.iter().map(|(d, q)| format!("{d}: {q}")).collect();
    let found = format!("default_qdisc = {default}; roots: {}", shown.join(", "));
    let mut actions: Vec<Action> = roots
        .iter()
        .filter(|(dev, q)| nic(dev) && q != "noqueue")
        .map(|(dev, _)| {
            // Deleting the root qdisc restores the kernel's default for the device.
            Action::run(
                &["tc", "qdisc", "replace", "dev", dev, "root", "noqueue"],
                &["tc", "qdisc", "del", "dev", dev, "root"],
            )
        })
        .collect();
    actions.extend(loopback_qdisc(tc));
    Outcome::advise(
        found,
        "Use noqueue as the NIC's root qdisc: packets go straight to the driver. Loopback, \
         which carries every same-host benchmark (twelve bench without a URL), should keep \
         its default, noqueue: a shaping qdisc left on lo throttles every such run.",
        actions,
    )
}

/// The action that puts `lo` back on noqueue, its default, when something else is its root
/// qdisc (shaping left over from a test). Its revert re-creates that qdisc with the parameters
/// `tc qdisc show` printed, so `twelve doctor --measure net.qdisc` leaves lo as it found it.
fn loopback_qdisc(tc: &str) -> Option<Action> {
    let params = parse::tc_root_params(tc, "lo")?;
    if params.first().is_none_or(|kind| kind == "noqueue") {
        return None;
    }
    let mut revert = vec!["tc", "qdisc", "replace", "dev", "lo", "root"];
    revert.extend(params.iter().map(String::as_str));
    Some(Action::run(
        &["tc", "qdisc", "replace", "dev", "lo", "root", "noqueue"],
        &revert,
    ))
}

/// `net.congestion`: TCP congestion control.
pub(crate) fn congestion(snap: &Snapshot) -> Outcome {
    sysctl_check(
        snap,
        "net.ipv4.tcp_congestion_control",
        |v| ["cubic", "bbr"].contains(&v),
        "cubic",
        "Use cubic (the default) or bbr.",
    )
}

/// `net.packet_sockets`: packet sockets held by other processes (the "nosy neighbour").
pub(crate) fn packet_sockets(snap: &Snapshot) -> Outcome {
    let Some(text) = snap.packet.as_deref() else {
        return Outcome::unknown("/proc/net/packet is missing");
    };
    let sockets = parse::packet_sockets(text);
    if sockets.is_empty() {
        return Outcome::ok("no packet sockets in this network namespace");
    }
    let holders: Vec<String> = sockets
        .iter()
        .map(|s| {
            let owner = snap
                .processes
                .iter()
                .find(|p| p.socket_inodes.contains(&s.inode))
                .map_or(
                    "a process not visible here (run as root)".to_string(),
                    |p| format!("{} (pid {})", p.comm, p.pid),
                );
            let scope = if s.ifindex == 0 {
                "all interfaces".to_string()
            } else {
                format!("ifindex {}", s.ifindex)
            };
            format!("{owner}: proto 0x{:04x}, {scope}", s.proto)
        })
        .collect();
    Outcome::new(
        Status::Warn,
        format!("{} packet socket(s): {}", sockets.len(), holders.join("; ")),
        "Each packet socket gets a copy of every matching packet. Stop these processes while \
         benchmarking, or use a DHCP client that closes its socket once it has a lease \
         (e.g. systemd-networkd), or a static address.",
    )
    .with(vec![Action::manual(
        "stop the listed processes while benchmarking (e.g. `systemctl stop dhclient`)",
        "start them again (e.g. `systemctl start dhclient`)",
    )])
}

/// `net.somaxconn`: the accept-queue cap.
pub(crate) fn somaxconn(snap: &Snapshot) -> Outcome {
    sysctl_check(
        snap,
        "net.core.somaxconn",
        |v| v.parse::<u32>().is_ok_and(|n| n >= 4096),
        "4096",
        "Raise to at least 4096 so bursts of connects are not dropped.",
    )
}

/// `net.syn_backlog`: half-open connection queue.
pub(crate) fn syn_backlog(snap: &Snapshot) -> Outcome {
    let floor = snap
        .sysctl("net.core.somaxconn")
        .and_then(|v| v.parse::<u32>().ok())
        .unwrap_or(4096)
        .max(4096);
    let want = floor.to_string();
    sysctl_check(
        snap,
        "net.ipv4.tcp_max_syn_backlog",
        |v| v.parse::<u32>().is_ok_and(|n| n >= floor),
        &want,
        &format!("Raise to at least somaxconn ({floor}) so handshakes in flight fit."),
    )
}

/// `net.port_range`: ephemeral ports a client can use per destination.
pub(crate) fn port_range(snap: &Snapshot) -> Outcome {
    sysctl_check(
        snap,
        "net.ipv4.ip_local_port_range",
        |v| {
            let n: Vec<u32> = v
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            n.len() == 2 && n[1] >= n[0] && n[1] - n[0] + 1 >= 50_000
        },
        "1024 65535",
        "On a load-generating host, widen to 1024-65535 so many short connections do not run \
         out of ports.",
    )
}

/// `net.tw_reuse`: reuse of TIME-WAIT ports for outgoing connections.
pub(crate) fn tw_reuse(snap: &Snapshot) -> Outcome {
    sysctl_check(
        snap,
        "net.ipv4.tcp_tw_reuse",
        |v| v == "1" || v == "2",
        "1",
        "Set to 1 on a load-generating host (2, the default, covers loopback only).",
    )
}

/// `net.migrate_req`: move queued connections to a sibling listener when one closes.
pub(crate) fn migrate_req(snap: &Snapshot) -> Outcome {
    sysctl_check(
        snap,
        "net.ipv4.tcp_migrate_req",
        |v| v == "1",
        "1",
        "Set to 1 so closing one SO_REUSEPORT listener hands its queued connections to the \
         others instead of resetting them.",
    )
}

/// `sys.nofile`: the probing process's file-descriptor limit (its shell's, usually).
pub(crate) fn nofile(snap: &Snapshot) -> Outcome {
    let Some((soft, hard)) = snap.self_limits.as_deref().and_then(parse::nofile_limits) else {
        return Outcome::unknown("/proc/self/limits is missing");
    };
    let show = |v: Option<u64>| v.map_or("unlimited".to_string(), |n| n.to_string());
    let found = format!(
        "open files: soft {}, hard {}; fs.nr_open = {}",
        show(soft),
        show(hard),
        snap.sysctl("fs.nr_open").unwrap_or("n/a")
    );
    if soft.is_none_or(|s| s >= 65_536) {
        return Outcome::ok(found);
    }
    Outcome::new(
        Status::Advise,
        found,
        "Each connection is a file descriptor: raise the limit to at least 65536 for \
         benchmarks with many connections.",
    )
    .with(vec![Action::manual(
        "`ulimit -n 1048576` in the shell that starts twelve, or LimitNOFILE=1048576 in the \
         service unit",
        "nothing: the limit lasts only for that shell or unit",
    )])
}

/// `sys.io_uring`: whether io_uring may be used.
pub(crate) fn io_uring(snap: &Snapshot) -> Outcome {
    let Some(v) = snap.sysctl("kernel.io_uring_disabled") else {
        return Outcome::unknown("kernel.io_uring_disabled is missing (kernel before 6.6?)");
    };
    let found = format!("kernel.io_uring_disabled = {v}");
    match v {
        "0" => Outcome::ok(found),
        _ => Outcome::new(
            Status::Advise,
            found,
            "io_uring is restricted (1: only the io_uring_group, 2: nobody); the server falls \
             back to epoll. Enable it only if your security policy allows.",
        )
        .with(vec![Action::manual(
            "`sysctl -w kernel.io_uring_disabled=0` if policy allows",
            format!("`sysctl -w kernel.io_uring_disabled={v}`"),
        )]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qdisc_actions(tc: &str) -> Vec<Action> {
        let snap = Snapshot {
            tc_qdisc: Some(tc.to_string()),
            ..Default::default()
        };
        qdisc(&snap).actions
    }

    #[test]
    fn default_loopback_needs_nothing() {
        assert!(qdisc_actions("qdisc noqueue 0: dev lo root refcnt 2 \n").is_empty());
    }

    #[test]
    fn shaped_loopback_goes_back_to_noqueue_and_reverts_to_the_shaping() {
        let tc = "qdisc tbf 8001: dev lo root refcnt 2 rate 20Mbit burst 64Kb lat 50ms \n";
        assert_eq!(
            qdisc_actions(tc),
            vec![Action::run(
                &["tc", "qdisc", "replace", "dev", "lo", "root", "noqueue"],
                &[
                    "tc", "qdisc", "replace", "dev", "lo", "root", "tbf", "rate", "20Mbit",
                    "burst", "64Kb", "lat", "50ms"
                ],
            )]
        );
    }
}
