//! CPU checks: online CPUs and SMT, isolation, frequency governor, steal time.
use super::{Outcome, online_cpus};
use crate::model::{Action, Status};
use crate::parse;
use crate::snapshot::Snapshot;
use std::collections::BTreeSet;

/// `cpu.online`: how many CPUs, and which share a core.
pub(crate) fn online(snap: &Snapshot) -> Outcome {
    let Some(cpus) = online_cpus(snap) else {
        return Outcome::unknown("/sys/devices/system/cpu/online is missing");
    };
    let groups: BTreeSet<&str> = snap
        .thread_siblings
        .iter()
        .filter(|(cpu, _)| cpus.contains(cpu))
        .map(|(_, s)| s.trim())
        .collect();
    let smt_cores = groups
        .iter()
        .filter(|g| parse::cpu_list(g).is_some_and(|l| l.len() > 1))
        .count();
    let smt = if snap.thread_siblings.is_empty() {
        "SMT unknown (no topology files)".to_string()
    } else if smt_cores == 0 {
        "no SMT siblings".to_string()
    } else {
        format!("{smt_cores} cores with SMT siblings ({})", {
            let g: Vec<&str> = groups.iter().copied().collect();
            g.join(" ")
        })
    };
    let found = format!(
        "{} CPUs online ({}), {smt}",
        cpus.len(),
        parse::format_cpu_list(&cpus)
    );
    if cpus.len() < 2 {
        return Outcome::new(
            Status::Warn,
            found,
            "One CPU: a server and a load generator on this host measure the scheduler. \
             Run the client on another machine.",
        );
    }
    let rec = if smt_cores > 0 {
        "Run one server worker per online CPU (the default). SMT siblings share a core: when \
         server and client share this host, give each whole cores, not sibling threads."
    } else {
        "Run one server worker per online CPU (the default)."
    };
    Outcome::new(Status::Ok, found, rec)
}

/// `cpu.isolation`: isolcpus / nohz_full and whether server and client can be kept apart.
pub(crate) fn isolation(snap: &Snapshot) -> Outcome {
    let Some(cpus) = online_cpus(snap) else {
        return Outcome::unknown("/sys/devices/system/cpu/online is missing");
    };
    let from_cmdline = |name| {
        snap.cmdline
            .as_deref()
            .and_then(|c| parse::cmdline_param(c, name))
            .and_then(parse::cpu_list)
    };
    // The sysfs list when it names any CPU, else the boot parameter's.
    let sys_or_cmdline = |sys: &Option<String>, name| {
        sys.as_deref()
            .and_then(parse::cpu_list)
            .filter(|l| !l.is_empty())
            .or_else(|| from_cmdline(name))
            .unwrap_or_default()
    };
    let isolated = sys_or_cmdline(&snap.cpu_isolated, "isolcpus");
    let nohz = sys_or_cmdline(&snap.cpu_nohz_full, "nohz_full");
    let rest: Vec<u32> = cpus
        .iter()
        .copied()
        .filter(|c| !isolated.contains(c))
        .collect();
    if !isolated.is_empty() {
        let found = format!(
            "isolated CPUs {}, nohz_full {}, housekeeping CPUs {}",
            parse::format_cpu_list(&isolated),
            if nohz.is_empty() {
                "none".to_string()
            } else {
                parse::format_cpu_list(&nohz)
            },
            parse::format_cpu_list(&rest)
        );
        if rest.is_empty() {
            return Outcome::new(
                Status::Advise,
                found,
                "Every CPU is isolated: leave at least one for the kernel's housekeeping.",
            );
        }
        return Outcome::new(
            Status::Ok,
            found,
            format!(
                "Pin the server's workers to {} and the load generator to {} \
                 (isolated CPUs get no tasks unless pinned there).",
                parse::format_cpu_list(&isolated),
                parse::format_cpu_list(&rest)
            ),
        );
    }
    if cpus.len() < 2 {
        return Outcome::new(
            Status::Advise,
            "no isolated CPUs; one CPU online",
            "Server and client cannot be kept apart on one CPU: load from another machine.",
        );
    }
    let half = &cpus[cpus.len() / 2..];
    let list = parse::format_cpu_list(half);
    Outcome::new(
        Status::Advise,
        format!("no isolated CPUs among {}", parse::format_cpu_list(&cpus)),
        format!(
            "When server and client share this host, pin them to disjoint CPUs (taskset), or \
             isolate the server's CPUs at boot: isolcpus={list} nohz_full={list}."
        ),
    )
    .with(vec![Action::manual(
        format!(
            "add `isolcpus={list} nohz_full={list}` to the kernel command line \
         (GRUB_CMDLINE_LINUX in /etc/default/grub, update-grub, reboot)"
        ),
        "remove isolcpus= and nohz_full= from the kernel command line, update-grub, reboot",
    )])
}

/// `cpu.governor`: scaling_governor of each CPU.
pub(crate) fn governor(snap: &Snapshot) -> Outcome {
    if snap.governors.is_empty() {
        return Outcome::unknown(
            "no cpufreq governor (frequency is managed by the hypervisor or firmware)",
        );
    }
    let slow: Vec<(&u32, &str)> = snap
        .governors
        .iter()
        .map(|(c, g)| (c, g.trim()))
        .filter(|(_, g)| *g != "performance")
        .collect();
    let mut names: Vec<&str> = snap.governors.values().map(|g| g.trim()).collect();
    names.sort_unstable();
    names.dedup();
    let found = format!("scaling_governor: {}", names.join(", "));
    if slow.is_empty() {
        return Outcome::ok(found);
    }
    let actions = slow
        .iter()
        .map(|(cpu, g)| Action::Write {
            path: format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"),
            value: "performance".to_string(),
            old: g.to_string(),
        })
        .collect();
    Outcome::new(
        Status::Advise,
        found,
        "Set the governor to `performance` while benchmarking, so clock ramp-up does not show \
         up as latency.",
    )
    .with(actions)
}

/// `cpu.steal`: share of CPU time the hypervisor gave to someone else.
pub(crate) fn steal(snap: &Snapshot) -> Outcome {
    let (Some(before), Some(after)) = (
        snap.stat_before.as_deref().and_then(parse::stat_cpu),
        snap.stat_after.as_deref().and_then(parse::stat_cpu),
    ) else {
        return Outcome::unknown("/proc/stat is missing or unreadable");
    };
    // A zero window (or one too short to tick) falls back to the counters since boot.
    let (total, stolen, over) = if after.total > before.total {
        (
            after.total - before.total,
            after.steal.saturating_sub(before.steal),
            format!("over {} ms", snap.steal_window.as_millis()),
        )
    } else {
        (after.total, after.steal, "since boot".to_string())
    };
    if total == 0 {
        return Outcome::unknown("/proc/stat shows no CPU time");
    }
    let pct = stolen as f64 * 100.0 / total as f64;
    let found = format!("{pct:.1}% of CPU time stolen {over}");
    if pct >= 5.0 {
        Outcome::new(
            Status::Warn,
            found,
            "Another tenant is taking this VM's CPU time: results will be noisy and low. Use \
             a dedicated or larger instance, and repeat runs.",
        )
    } else if pct >= 1.0 {
        Outcome::new(
            Status::Advise,
            found,
            "Some CPU time is stolen: repeat runs and compare medians.",
        )
    } else {
        Outcome::ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn steal_of(before: &str, after: &str, window_ms: u64) -> (Status, String) {
        let snap = Snapshot {
            stat_before: Some(before.to_string()),
            stat_after: Some(after.to_string()),
            steal_window: Duration::from_millis(window_ms),
            ..Snapshot::default()
        };
        let o = steal(&snap);
        (o.status, o.found)
    }

    macro_rules! steal_case {
        ($name:ident: $before:literal, $after:literal, $ms:literal => $status:ident, $found:literal) => {
            #[test]
            fn $name() {
                assert_eq!(
                    steal_of($before, $after, $ms),
                    (Status::$status, $found.to_string())
                );
            }
        };
    }

    steal_case!(steal_over_window: "cpu  100 0 0 100 0 0 0 0 0 0\n", "cpu  150 0 0 140 0 0 0 10 0 0\n", 200
        => Warn, "10.0% of CPU time stolen over 200 ms");
    steal_case!(steal_small_over_window: "cpu  100 0 0 100 0 0 0 0 0 0\n", "cpu  150 0 0 148 0 0 0 2 0 0\n", 200
        => Advise, "2.0% of CPU time stolen over 200 ms");
    steal_case!(steal_zero_window_uses_boot_counters: "cpu  90 0 0 10 0 0 0 0 0 0\n", "cpu  90 0 0 10 0 0 0 0 0 0\n", 0
        => Ok, "0.0% of CPU time stolen since boot");
    steal_case!(steal_no_cpu_time: "cpu  0 0 0 0 0 0 0 0 0 0\n", "cpu  0 0 0 0 0 0 0 0 0 0\n", 0
        => Unknown, "/proc/stat shows no CPU time");
}
