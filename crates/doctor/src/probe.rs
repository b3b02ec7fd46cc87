//! The probe: reads /proc, /sys, /etc and a few commands under a root path into a [`Snapshot`].
//!
//! With root `/` it reads the running host and runs `tc`, `ethtool`, `auditctl`, `nft` and
//! `iptables-save` where they are installed. With any other root (a fixture tree) it never runs
//! a command: it reads the command's captured output from `ROOT/cmd/NAME`, where NAME is the
//! command line with spaces replaced by `_` (`cmd/tc_qdisc_show`, `cmd/ethtool_-k_eth0`), and
//! the apply step appends the commands it would have run to `ROOT/cmd/executed.log`.
//!
//! Sockets held by processes are found the way `ss -p` and `lsof` do: every
//! `ROOT/proc/PID/fd/N` symlink that reads `socket:[INODE]`. Fixture trees hold such symlinks
//! (dangling, which `readlink` does not mind), so the same code reads both.
use crate::snapshot::{Interface, Process, Queue, Snapshot};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Sysctls the catalogue reads (dotted names).
pub const SYSCTLS: &[&str] = &[
    "net.core.default_qdisc",
    "net.core.somaxconn",
    "net.core.busy_poll",
    "net.core.busy_read",
    "net.ipv4.tcp_max_syn_backlog",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_tw_reuse",
    "net.ipv4.tcp_migrate_req",
    "net.ipv4.tcp_congestion_control",
    "net.netfilter.nf_conntrack_count",
    "fs.nr_open",
    "kernel.io_uring_disabled",
];

/// Runs (or, under a fixture root, replays) the commands the probe and apply use.
#[derive(Clone, Debug)]
pub struct Runner {
    root: PathBuf,
}

impl Runner {
    /// A runner for this root: real commands for `/`, captured text otherwise.
    pub fn new(root: &Path) -> Runner {
        Runner {
            root: root.to_path_buf(),
        }
    }

    /// Whether this is the running host rather than a fixture tree.
    pub fn is_real(&self) -> bool {
        self.root == Path::new("/")
    }

    /// The command's standard output, or `None` when it is not installed, failed, or (for a
    /// fixture) was not captured.
    pub fn output(&self, argv: &[&str]) -> Option<String> {
        if !self.is_real() {
            return fs::read_to_string(self.root.join("cmd").join(argv.join("_"))).ok();
        }
        let program = find_program(argv[0])?;
        let out = Command::new(program).args(&argv[1..]).output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Runs a command for its effect. Under a fixture root it is appended to `cmd/executed.log`.
    pub fn execute(&self, argv: &[String]) -> io::Result<()> {
        if !self.is_real() {
            use std::io::Write;
            fs::create_dir_all(self.root.join("cmd"))?;
            let mut log = fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(self.root.join("cmd/executed.log"))?;
            return writeln!(log, "{}", argv.join(" "));
        }
        let program = find_program(&argv[0]).ok_or_else(|| {
            io::Error::new(io::ErrorKind::NotFound, format!("{} not found", argv[0]))
        })?;
        let status = Command::new(program).args(&argv[1..]).status()?;
        if status.success() {
            Ok(())
        } else {
            Err(io::Error::other(format!(
                "`{}` failed: {status}",
                argv.join(" ")
            )))
        }
    }
}

/// Looks a program up in PATH and the sbin directories (which a non-login root shell may lack).
fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Reads a text file under the root; `None` when missing or unreadable.
fn read(root: &Path, path: &str) -> Option<String> {
    fs::read_to_string(root.join(path.trim_start_matches('/'))).ok()
}

/// Names in a directory under the root, sorted.
fn list(root: &Path, path: &str) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(root.join(path.trim_start_matches('/')))
        .map(|rd| {
            rd.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Options of a probe.
#[derive(Clone, Debug)]
pub struct ProbeOptions {
    /// The root to read (`/` for this host).
    pub root: PathBuf,
    /// How long to sample /proc/stat for steal time; zero uses the counters since boot.
    pub steal_window: Duration,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            root: PathBuf::from("/"),
            steal_window: Duration::from_millis(200),
        }
    }
}

/// Reads everything the checks need.
pub fn probe(opts: &ProbeOptions) -> Snapshot {
    let root = opts.root.as_path();
    let runner = Runner::new(root);
    let cpu = "sys/devices/system/cpu";
    let mut snap = Snapshot {
        root: root.display().to_string(),
        cmdline: read(root, "proc/cmdline"),
        cpu_online: read(root, &format!("{cpu}/online")),
        cpu_isolated: read(root, &format!("{cpu}/isolated")),
        cpu_nohz_full: read(root, &format!("{cpu}/nohz_full")),
        self_status: read(root, "proc/self/status"),
        self_limits: read(root, "proc/self/limits"),
        modules: read(root, "proc/modules"),
        conntrack_present: root.join("proc/net/nf_conntrack").exists(),
        packet: read(root, "proc/net/packet"),
        interrupts: read(root, "proc/interrupts"),
        etc_audit_rules: read(root, "etc/audit/audit.rules"),
        steal_window: opts.steal_window,
        ..Snapshot::default()
    };
    let v4 = read(root, "proc/net/ip_tables_names");
    let v6 = read(root, "proc/net/ip6_tables_names");
    if v4.is_some() || v6.is_some() {
        snap.iptables_names = Some(v4.unwrap_or_default() + &v6.unwrap_or_default());
    }
    for name in list(root, cpu) {
        let Some(n) = name.strip_prefix("cpu").and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if let Some(s) = read(root, &format!("{cpu}/{name}/topology/thread_siblings_list")) {
            snap.thread_siblings.insert(n, s);
        }
        if let Some(g) = read(root, &format!("{cpu}/{name}/cpufreq/scaling_governor")) {
            snap.governors.insert(n, g);
        }
    }
    for name in list(root, &format!("{cpu}/vulnerabilities")) {
        if let Some(t) = read(root, &format!("{cpu}/vulnerabilities/{name}")) {
            snap.vulnerabilities.insert(name, t);
        }
    }
    for key in SYSCTLS {
        if let Some(v) = read(root, &format!("proc/sys/{}", key.replace('.', "/"))) {
            snap.sysctls.insert(key.to_string(), v);
        }
    }
    // Only the packet sockets' holders are looked up (the one check that needs a process's
    // sockets): a `readlink` per descriptor of every process would cost the client's CPU
    // (tens of thousands of descriptors on a busy host) for nothing when there are none.
    let packet = snap.packet.as_deref().map(crate::parse::packet_sockets);
    snap.processes = processes(root, packet.is_some_and(|p| !p.is_empty()));
    snap.interfaces = list(root, "sys/class/net")
        .into_iter()
        .map(|name| interface(root, &runner, name))
        .collect();
    let irqs = crate::checks::nic::interface_irqs(&snap);
    for irq in irqs.values().flatten() {
        if let Some(a) = read(root, &format!("proc/irq/{irq}/smp_affinity_list")) {
            snap.irq_affinity.insert(*irq, a);
        }
    }
    snap.tc_qdisc = runner.output(&["tc", "qdisc", "show"]);
    snap.auditctl_status = runner.output(&["auditctl", "-s"]);
    snap.auditctl_rules = runner.output(&["auditctl", "-l"]);
    snap.nft_ruleset = runner.output(&["nft", "list", "ruleset"]);
    snap.iptables_save = runner.output(&["iptables-save"]);
    // Sample steal last, so the window does not include the probe's own work.
    snap.stat_before = read(root, "proc/stat");
    if !opts.steal_window.is_zero() {
        std::thread::sleep(opts.steal_window);
    }
    snap.stat_after = read(root, "proc/stat");
    snap
}

/// Every process under ROOT/proc with its comm and (`sockets`) its socket inodes.
fn processes(root: &Path, sockets: bool) -> Vec<Process> {
    let mut out = Vec::new();
    for name in list(root, "proc") {
        let Ok(pid) = name.parse::<u32>() else {
            continue;
        };
        // A process may exit between listing and reading: skip it.
        let Some(comm) = read(root, &format!("proc/{pid}/comm")) else {
            continue;
        };
        let fd_dir = root.join(format!("proc/{pid}/fd"));
        let fds = if sockets {
            fs::read_dir(&fd_dir)
        } else {
            Err(io::ErrorKind::Unsupported.into())
        };
        let mut socket_inodes: Vec<u64> = fds
            .map(|rd| {
                rd.filter_map(|e| {
                    let target = fs::read_link(e.ok()?.path()).ok()?;
                    let t = target.to_str()?;
                    t.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
                })
                .collect()
            })
            .unwrap_or_default();
        socket_inodes.sort_unstable();
        out.push(Process {
            pid,
            comm: comm.trim().to_string(),
            socket_inodes,
        });
    }
    out
}

/// One interface's device link, IRQs and queues.
fn interface(root: &Path, runner: &Runner, name: String) -> Interface {
    let dir = format!("sys/class/net/{name}");
    let device = root.join(&dir).join("device");
    let has_device = device.exists() || fs::symlink_metadata(&device).is_ok();
    let device_name = fs::read_link(&device)
        .ok()
        .and_then(|t| Some(t.file_name()?.to_str()?.to_string()));
    // PCI NICs list their MSI vectors in device/msi_irqs; virtio NICs in the parent PCI device.
    let mut msi_irqs: Vec<u32> = ["device/msi_irqs", "device/../msi_irqs"]
        .iter()
        .map(|p| list(root, &format!("{dir}/{p}")))
        .find(|l| !l.is_empty())
        .unwrap_or_default()
        .iter()
        .filter_map(|n| n.parse().ok())
        .collect();
    msi_irqs.sort_unstable();
    let queues = |prefix: &str, file: &str| -> Vec<Queue> {
        list(root, &format!("{dir}/queues"))
            .into_iter()
            .filter(|q| q.starts_with(prefix))
            .map(|q| Queue {
                cpus_mask: read(root, &format!("{dir}/queues/{q}/{file}")),
                name: q,
            })
            .collect()
    };
    let (ethtool_coalesce, ethtool_features) = if has_device {
        (
            runner.output(&["ethtool", "-c", &name]),
            runner.output(&["ethtool", "-k", &name]),
        )
    } else {
        (None, None)
    };
    Interface {
        rx: queues("rx-", "rps_cpus"),
        tx: queues("tx-", "xps_cpus"),
        gro_flush_timeout: read(root, &format!("{dir}/gro_flush_timeout")),
        napi_defer_hard_irqs: read(root, &format!("{dir}/napi_defer_hard_irqs")),
        has_device,
        device_name,
        msi_irqs,
        ethtool_coalesce,
        ethtool_features,
        name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process's descriptors are read only when there are packet sockets to attribute: the
    /// one check that needs them (`net.packet_sockets`) has nothing to do otherwise.
    #[test]
    fn descriptors_are_read_only_for_packet_sockets() {
        let root = twelve_testkit::scratch_dir("twelve-probe-fds");
        let fd_dir = root.join("proc/4242/fd");
        fs::create_dir_all(&fd_dir).unwrap();
        fs::write(root.join("proc/4242/comm"), "tcpdump\n").unwrap();
        std::os::unix::fs::symlink("socket:[77]", fd_dir.join("3")).unwrap();
        let cases: &[(&str, bool, &[u64])] = &[
            ("packet sockets listed", true, &[77]),
            ("none listed", false, &[]),
        ];
        for &(name, sockets, want) in cases {
            let procs = processes(&root, sockets);
            assert_eq!(procs.len(), 1, "{name}");
            assert_eq!(procs[0].comm, "tcpdump", "{name}");
            assert_eq!(procs[0].socket_inodes, want, "{name}");
        }
        fs::remove_dir_all(&root).unwrap();
    }
}
