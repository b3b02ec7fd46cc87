//! The raw text the checks read: everything the probe gathered from /proc, /sys and commands.
//!
//! A `Snapshot` is plain data, so every check is a pure function of it and tests can build one
//! by hand or from a fixture tree.
use std::collections::BTreeMap;
use std::time::Duration;

/// One process: its pid, `comm` and the inodes of the sockets it holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Process {
    /// Process id.
    pub pid: u32,
    /// Contents of /proc/PID/comm, trimmed.
    pub comm: String,
    /// Inodes from /proc/PID/fd/* links that read `socket:[INODE]`.
    pub socket_inodes: Vec<u64>,
}

/// One receive or transmit queue of an interface.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Queue {
    /// `rx-0`, `tx-3`, ...
    pub name: String,
    /// rps_cpus (rx) or xps_cpus (tx), if the file exists.
    pub cpus_mask: Option<String>,
}

/// One network interface under /sys/class/net.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Interface {
    /// Interface name.
    pub name: String,
    /// Whether it has a `device` link (a NIC, virtio or PCI), as opposed to lo, veth, bridges.
    pub has_device: bool,
    /// Last path component of the `device` link (`virtio2`, `0000:00:03.0`), used to find IRQs
    /// in /proc/interrupts.
    pub device_name: Option<String>,
    /// IRQ numbers listed in the device's `msi_irqs` directory (or its parent's, for virtio).
    pub msi_irqs: Vec<u32>,
    /// Receive queues.
    pub rx: Vec<Queue>,
    /// Transmit queues.
    pub tx: Vec<Queue>,
    /// /sys/class/net/IF/gro_flush_timeout.
    pub gro_flush_timeout: Option<String>,
    /// /sys/class/net/IF/napi_defer_hard_irqs.
    pub napi_defer_hard_irqs: Option<String>,
    /// `ethtool -c IF` output.
    pub ethtool_coalesce: Option<String>,
    /// `ethtool -k IF` output.
    pub ethtool_features: Option<String>,
}

/// Everything the checks need, as text.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// The root the probe read.
    pub root: String,
    /// /proc/cmdline.
    pub cmdline: Option<String>,
    /// /sys/devices/system/cpu/online.
    pub cpu_online: Option<String>,
    /// /sys/devices/system/cpu/isolated.
    pub cpu_isolated: Option<String>,
    /// /sys/devices/system/cpu/nohz_full.
    pub cpu_nohz_full: Option<String>,
    /// cpuN → topology/thread_siblings_list.
    pub thread_siblings: BTreeMap<u32, String>,
    /// cpuN → cpufreq/scaling_governor.
    pub governors: BTreeMap<u32, String>,
    /// /proc/stat at the start of the steal window.
    pub stat_before: Option<String>,
    /// /proc/stat at its end (equal to `stat_before` for a zero window).
    pub stat_after: Option<String>,
    /// Length of the steal window (zero: the counters since boot are used).
    pub steal_window: Duration,
    /// /sys/devices/system/cpu/vulnerabilities/* (name → text).
    pub vulnerabilities: BTreeMap<String, String>,
    /// Every process found under /proc.
    pub processes: Vec<Process>,
    /// /proc/self/status of the probing process.
    pub self_status: Option<String>,
    /// /proc/self/limits.
    pub self_limits: Option<String>,
    /// Dotted sysctl name → value, for each sysctl the catalogue reads that exists.
    pub sysctls: BTreeMap<String, String>,
    /// /proc/modules (absent on kernels built without modules).
    pub modules: Option<String>,
    /// Whether /proc/net/nf_conntrack exists (conntrack built in or loaded).
    pub conntrack_present: bool,
    /// /proc/net/ip_tables_names and ip6_tables_names, joined.
    pub iptables_names: Option<String>,
    /// /proc/net/packet.
    pub packet: Option<String>,
    /// /proc/interrupts.
    pub interrupts: Option<String>,
    /// IRQ → /proc/irq/N/smp_affinity_list, for the IRQs of the interfaces.
    pub irq_affinity: BTreeMap<u32, String>,
    /// Network interfaces.
    pub interfaces: Vec<Interface>,
    /// `tc qdisc show` output.
    pub tc_qdisc: Option<String>,
    /// `auditctl -s` output.
    pub auditctl_status: Option<String>,
    /// `auditctl -l` output.
    pub auditctl_rules: Option<String>,
    /// /etc/audit/audit.rules (what auditd loads when it starts).
    pub etc_audit_rules: Option<String>,
    /// `nft list ruleset` output.
    pub nft_ruleset: Option<String>,
    /// `iptables-save` output.
    pub iptables_save: Option<String>,
}

impl Snapshot {
    /// A sysctl's value, trimmed.
    pub fn sysctl(&self, key: &str) -> Option<&str> {
        self.sysctls.get(key).map(|s| s.trim())
    }

    /// Whether a process with this `comm` runs.
    pub fn running(&self, comm: &str) -> Option<&Process> {
        self.processes.iter().find(|p| p.comm == comm)
    }
}
