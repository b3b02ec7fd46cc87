//! NIC checks: queues, IRQ affinity, irqbalance, RPS/XPS, coalescing, GRO/TSO.
//!
//! "Perfect locality" in the study: NIC queue i raises its interrupt on CPU i, transmits from
//! CPU i (XPS), and the listener of CPU i accepts the connection, so a request never crosses
//! CPUs (<https://docs.kernel.org/networking/scaling.html>).
use super::{Outcome, online_cpus};
use crate::model::{Action, Status};
use crate::parse;
use crate::snapshot::{Interface, Snapshot};
use std::collections::BTreeMap;

/// NICs: interfaces with a device link (not lo, veth, bridges, ifb).
fn nics(snap: &Snapshot) -> Vec<&Interface> {
    snap.interfaces.iter().filter(|i| i.has_device).collect()
}

/// Whether an IRQ name from /proc/interrupts belongs to this interface's data queues.
fn irq_belongs(iface: &Interface, name: &str) -> bool {
    // virtio's control vectors carry no traffic.
    if name.ends_with("-config") || name.ends_with("-event") || name.ends_with("-ctrl") {
        return false;
    }
    let by_ifname = name == iface.name || name.starts_with(&format!("{}-", iface.name));
    let by_device = iface
        .device_name
        .as_deref()
        .is_some_and(|d| name.starts_with(&format!("{d}-")) || name.contains(&format!("@pci:{d}")));
    by_ifname || by_device
}

/// Each NIC's data-queue IRQs (from /proc/interrupts names, or its MSI vectors).
pub(crate) fn interface_irqs(snap: &Snapshot) -> BTreeMap<String, Vec<u32>> {
    let lines = snap
        .interrupts
        .as_deref()
        .map(parse::interrupts)
        .unwrap_or_default();
    nics(snap)
        .into_iter()
        .map(|iface| {
            let mut irqs: Vec<u32> = lines
                .iter()
                .filter(|(irq, name)| {
                    irq_belongs(iface, name)
                        || (iface.msi_irqs.contains(irq) && !name.ends_with("-config"))
                })
                .map(|(irq, _)| *irq)
                .collect();
            irqs.sort_unstable();
            irqs.dedup();
            (iface.name.clone(), irqs)
        })
        .collect()
}

/// The queue number in an IRQ name: trailing digits before any `@` (`eth0-TxRx-3`,
/// `virtio2-input.0`, `mlx5_comp3@pci:...`).
fn queue_index(name: &str) -> Option<u32> {
    let base = name.split('@').next()?;
    let digits: String = base
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits.parse().ok()
}

/// `nic.queues`: rx/tx queues per NIC compared with online CPUs.
pub(crate) fn queues(snap: &Snapshot) -> Outcome {
    let (Some(cpus), nics) = (online_cpus(snap), nics(snap)) else {
        return Outcome::unknown("/sys/devices/system/cpu/online is missing");
    };
    if nics.is_empty() {
        return Outcome::unknown("no NIC with a device link under /sys/class/net");
    }
    let found: Vec<String> = nics
        .iter()
        .map(|n| format!("{}: {} rx / {} tx queues", n.name, n.rx.len(), n.tx.len()))
        .collect();
    let found = format!("{}; {} CPUs", found.join(", "), cpus.len());
    let short: Vec<&&Interface> = nics
        .iter()
        .filter(|n| n.rx.len().min(n.tx.len()) < cpus.len())
        .collect();
    if short.is_empty() {
        return Outcome::ok(found);
    }
    let actions = short
        .iter()
        .map(|n| {
            Action::manual(
                format!(
                    "`ethtool -L {} combined {}` if the NIC supports that many queues \
                     (note the current count from `ethtool -l {}` first)",
                    n.name,
                    cpus.len(),
                    n.name
                ),
                format!("`ethtool -L {} combined OLD_COUNT`", n.name),
            )
        })
        .collect();
    let single = short.iter().all(|n| n.rx.len() <= 1);
    let rec = if single {
        "A single-queue NIC cannot give each CPU its own queue: perfect locality is out of \
         reach here. Spread receive processing with RPS (nic.rps) instead."
    } else {
        "Give the NIC one queue per CPU where it supports that many, so each CPU gets its own."
    };
    Outcome::new(Status::Advise, found, rec).with(actions)
}

/// `nic.irq_affinity`: each data-queue IRQ pinned to the CPU of its queue number.
pub(crate) fn irq_affinity(snap: &Snapshot) -> Outcome {
    let (Some(cpus), irqs) = (online_cpus(snap), interface_irqs(snap)) else {
        return Outcome::unknown("/sys/devices/system/cpu/online is missing");
    };
    let names: BTreeMap<u32, String> = snap
        .interrupts
        .as_deref()
        .map(parse::interrupts)
        .unwrap_or_default()
        .into_iter()
        .collect();
    let mut found = Vec::new();
    let mut actions = Vec::new();
    for (iface, list) in irqs.iter().filter(|(_, l)| !l.is_empty()) {
        for irq in list {
            let Some(current) = snap.irq_affinity.get(irq).map(|s| s.trim()) else {
                continue;
            };
            let name = names.get(irq).map(String::as_str).unwrap_or("?");
            // Vectors without a queue number (mgmt, async events) carry no traffic.
            let Some(idx) = queue_index(name) else {
                continue;
            };
            found.push(format!("{iface} irq {irq} ({name}) -> {current}"));
            let idx = idx as usize;
            let want = cpus[idx % cpus.len()].to_string();
            if parse::cpu_list(current) != parse::cpu_list(&want) {
                actions.push(Action::Write {
                    path: format!("/proc/irq/{irq}/smp_affinity_list"),
                    value: want,
                    old: current.to_string(),
                });
            }
        }
    }
    advise_found(
        found.join(", "),
        actions,
        "no NIC queue IRQs found in /proc/interrupts",
        "Pin queue i's interrupt to CPU i, so the CPU that receives a packet is the CPU whose \
         listener accepts it (and stop irqbalance, which would move them back).",
    )
}

/// `nic.irqbalance`: irqbalance moves IRQs around and undoes pinning.
pub(crate) fn irqbalance(snap: &Snapshot) -> Outcome {
    if snap.processes.is_empty() {
        return Outcome::unknown("no processes readable under /proc");
    }
    match snap.running("irqbalance") {
        None => Outcome::ok("irqbalance is not running"),
        Some(p) => Outcome::new(
            Status::Warn,
            format!("irqbalance is running (pid {})", p.pid),
            "Stop irqbalance while benchmarking so pinned NIC interrupts stay where they are.",
        )
        .with(vec![Action::run(
            &["systemctl", "stop", "irqbalance"],
            &["systemctl", "start", "irqbalance"],
        )]),
    }
}

/// `nic.rps`: RPS maps, wanted on when queues are fewer than CPUs, off otherwise.
pub(crate) fn rps(snap: &Snapshot) -> Outcome {
    let (Some(cpus), nics) = (online_cpus(snap), nics(snap)) else {
        return Outcome::unknown("/sys/devices/system/cpu/online is missing");
    };
    let mut found = Vec::new();
    let mut actions = Vec::new();
    for n in nics {
        let spread = n.rx.len() < cpus.len();
        let want = if spread {
            parse::format_cpu_mask(&cpus)
        } else {
            "0".to_string()
        };
        for q in &n.rx {
            let Some(mask) = q.cpus_mask.as_deref().map(str::trim) else {
                continue;
            };
            found.push(format!("{}/{} rps_cpus={mask}", n.name, q.name));
            if parse::cpu_mask(mask) != parse::cpu_mask(&want) {
                actions.push(Action::Write {
                    path: format!("/sys/class/net/{}/queues/{}/rps_cpus", n.name, q.name),
                    value: want.clone(),
                    old: mask.to_string(),
                });
            }
        }
    }
    advise_found(
        found.join(", "),
        actions,
        "no rps_cpus files (no NIC, or a kernel without RPS)",
        "With fewer receive queues than CPUs, let RPS hash flows onto every CPU; with a queue \
         per CPU, leave RPS off (it only adds inter-processor interrupts).",
    )
}

/// `nic.xps`: transmit queue i used by CPU i.
pub(crate) fn xps(snap: &Snapshot) -> Outcome {
    let (Some(cpus), nics) = (online_cpus(snap), nics(snap)) else {
        return Outcome::unknown("/sys/devices/system/cpu/online is missing");
    };
    if nics.is_empty() {
        return Outcome::unknown("no NIC with a device link under /sys/class/net");
    }
    let mut found = Vec::new();
    let mut actions = Vec::new();
    for n in nics {
        if n.tx.len() <= 1 {
            found.push(format!("{}: one tx queue, nothing to steer", n.name));
            continue;
        }
        for (i, q) in n.tx.iter().enumerate() {
            let Some(mask) = q.cpus_mask.as_deref().map(str::trim) else {
                continue;
            };
            found.push(format!("{}/{} xps_cpus={mask}", n.name, q.name));
            let want: Vec<u32> = cpus.get(i).copied().into_iter().collect();
            if parse::cpu_mask(mask).as_deref() != Some(&want[..]) {
                actions.push(Action::Write {
                    path: format!("/sys/class/net/{}/queues/{}/xps_cpus", n.name, q.name),
                    value: parse::format_cpu_mask(&want),
                    old: mask.to_string(),
                });
            }
        }
    }
    Outcome::advise(
        found.join(", "),
        "Map transmit queue i to CPU i (XPS), so a response leaves from the queue of the CPU \
         that built it.",
        actions,
    )
}

/// `nic.coalesce`: interrupt coalescing (ethtool -c) and NAPI deferral settings.
pub(crate) fn coalesce(snap: &Snapshot) -> Outcome {
    let mut found = Vec::new();
    let mut actions = Vec::new();
    for n in nics(snap) {
        let Some(text) = n.ethtool_coalesce.as_deref() else {
            continue;
        };
        let usecs = parse::ethtool_value(text, "rx-usecs").unwrap_or("n/a");
        let adaptive = parse::ethtool_value(text, "Adaptive RX").or_else(|| {
            parse::ethtool_value(text, "adaptive-rx") // older ethtool spelling
        });
        let adaptive = adaptive.unwrap_or("n/a");
        found.push(format!(
            "{}: rx-usecs {usecs}, adaptive-rx {adaptive}, gro_flush_timeout {}, \
             napi_defer_hard_irqs {}",
            n.name,
            n.gro_flush_timeout.as_deref().unwrap_or("n/a").trim(),
            n.napi_defer_hard_irqs.as_deref().unwrap_or("n/a").trim()
        ));
        let low = usecs.parse::<u32>().is_ok_and(|u| u < 64);
        if low || adaptive == "on" {
            actions.push(Action::run(
                &[
                    "ethtool",
                    "-C",
                    &n.name,
                    "adaptive-rx",
                    "off",
                    "rx-usecs",
                    "64",
                ],
                &[
                    "ethtool",
                    "-C",
                    &n.name,
                    "adaptive-rx",
                    if adaptive == "on" { "on" } else { "off" },
                    "rx-usecs",
                    usecs,
                ],
            ));
        }
    }
    advise_found(
        found.join("; "),
        actions,
        "no `ethtool -c` output (ethtool not installed, or the NIC does not report \
         coalescing)",
        "With busy polling on, fixed and longer coalescing lets the application poll instead of \
         taking an interrupt per packet. Start at 64 us and measure.",
    )
}

/// `nic.offload`: GRO and TSO (ethtool -k).
pub(crate) fn offload(snap: &Snapshot) -> Outcome {
    let mut found = Vec::new();
    let mut actions = Vec::new();
    for n in nics(snap) {
        let Some(text) = n.ethtool_features.as_deref() else {
            continue;
        };
        let gro = parse::ethtool_value(text, "generic-receive-offload").unwrap_or("n/a");
        let tso = parse::ethtool_value(text, "tcp-segmentation-offload").unwrap_or("n/a");
        found.push(format!("{}: gro {gro}, tso {tso}", n.name));
        for (feature, short, value) in [
            ("generic-receive-offload", "gro", gro),
            ("tcp-segmentation-offload", "tso", tso),
        ] {
            let fixed = text
                .lines()
                .any(|l| l.trim().starts_with(feature) && l.contains("[fixed]"));
            if value == "off" && !fixed {
                actions.push(Action::run(
                    &["ethtool", "-K", &n.name, short, "on"],
                    &["ethtool", "-K", &n.name, short, "off"],
                ));
            }
        }
    }
    advise_found(
        found.join("; "),
        actions,
        "no `ethtool -k` output (ethtool not installed)",
        "Turn GRO and TSO on: fewer, larger packets through the stack.",
    )
}

/// The outcome of a check over queues or NICs: unknown (`none` says why) when nothing was
/// found, else [`Outcome::advise`].
fn advise_found(found: String, actions: Vec<Action>, none: &str, advice: &str) -> Outcome {
    if found.is_empty() {
        return Outcome::unknown(none);
    }
    Outcome::advise(found, advice, actions)
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! case {
        ($name:ident: $expr:expr => $want:expr) => {
            #[test]
            fn $name() {
                assert_eq!($expr, $want);
            }
        };
    }

    case!(queue_index_txrx: queue_index("ens5-TxRx-3") => Some(3));
    case!(queue_index_virtio: queue_index("virtio2-input.0") => Some(0));
    case!(queue_index_mlx5: queue_index("mlx5_comp7@pci:0000:00:03.0") => Some(7));
    case!(queue_index_none: queue_index("ens5-mgmt") => None);
}
