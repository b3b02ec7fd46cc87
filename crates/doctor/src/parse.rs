//! Pure parsers for the text formats of /proc, /sys and the commands the doctor reads.
//!
//! Each takes the file's text and returns plain values; they never touch the file system.

/// Parses a CPU list like `0-3,8,10-11` (cpuset list format,
/// <https://docs.kernel.org/admin-guide/cgroup-v2.html#cpuset-interface-files>).
/// An empty string is an empty list; a malformed one is `None`.
pub fn cpu_list(text: &str) -> Option<Vec<u32>> {
    // isolcpus= accepts flags before the list ("nohz,domain,2-3"); leave them out, then parse
    // with the same CpuList the server and load generator use.
    let list: Vec<&str> = text
        .trim()
        .split(',')
        .filter(|part| !part.chars().all(|c| c.is_ascii_alphabetic() || c == '_'))
        .collect();
    if list.is_empty() {
        return Some(Vec::new());
    }
    let cpus = twelve_sys::CpuList::parse(&list.join(",")).ok()?;
    Some(cpus.as_slice().iter().map(|&c| c as u32).collect())
}

/// Formats CPUs as a list (`0-3,8`).
pub fn format_cpu_list(cpus: &[u32]) -> String {
    twelve_sys::CpuList::from_cpus(cpus.iter().map(|&c| c as usize)).to_string()
}

/// Parses a hex CPU mask as in rps_cpus / xps_cpus / smp_affinity (`00000000,0000000f`).
pub fn cpu_mask(text: &str) -> Option<Vec<u32>> {
    let mut cpus = Vec::new();
    let mut bit = 0u32;
    for word in text.trim().rsplit(',') {
        let value = u32::from_str_radix(word, 16).ok()?;
        for b in 0..32 {
            if value & (1 << b) != 0 {
                cpus.push(bit + b);
            }
        }
        bit += 32;
    }
    Some(cpus)
}

/// Formats CPUs as a hex mask in 32-bit words separated by commas.
pub fn format_cpu_mask(cpus: &[u32]) -> String {
    let words = cpus.iter().map(|c| c / 32 + 1).max().unwrap_or(1) as usize;
    let mut mask = vec![0u32; words];
    for &c in cpus {
        mask[(c / 32) as usize] |= 1 << (c % 32);
    }
    let mut parts: Vec<String> = mask.iter().rev().map(|w| format!("{w:x}")).collect();
    // Only the most significant word is unpadded, like the kernel's own output.
    for p in parts.iter_mut().skip(1) {
        *p = format!("{:0>8}", p);
    }
    parts.join(",")
}

/// The value of `name=` on a kernel command line (last one wins, as in the kernel).
pub fn cmdline_param<'a>(cmdline: &'a str, name: &str) -> Option<&'a str> {
    // Everything after a bare `--` goes to init, not the kernel.
    let kernel_part = cmdline.split(" -- ").next().unwrap_or(cmdline);
    kernel_part
        .split_whitespace()
        .filter_map(|w| w.split_once('='))
        .filter(|(k, _)| *k == name)
        .map(|(_, v)| v)
        .next_back()
}

/// Aggregate CPU time from the first line of /proc/stat, in USER_HZ ticks
/// (<https://docs.kernel.org/filesystems/proc.html#miscellaneous-kernel-statistics-in-proc-stat>).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuTimes {
    /// Sum of user, nice, system, idle, iowait, irq, softirq and steal.
    pub total: u64,
    /// Time the hypervisor ran something else while this guest wanted the CPU.
    pub steal: u64,
}

/// Parses the `cpu ` line of /proc/stat.
pub fn stat_cpu(text: &str) -> Option<CpuTimes> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    // guest and guest_nice (fields 9 and 10) are already counted in user and nice.
    let total = fields.iter().take(8).sum();
    Some(CpuTimes {
        total,
        steal: *fields.get(7)?,
    })
}

/// How a vulnerabilities file reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vuln {
    /// "Not affected".
    NotAffected,
    /// "Mitigation: ..." (paying for it).
    Mitigated,
    /// "Vulnerable ..." (not mitigated).
    Vulnerable,
    /// Something else.
    Other,
}

/// Classifies one /sys/devices/system/cpu/vulnerabilities/* file
/// (<https://docs.kernel.org/admin-guide/hw-vuln/index.html>).
pub fn vulnerability(text: &str) -> Vuln {
    let t = text.trim();
    if t.starts_with("Not affected") {
        Vuln::NotAffected
    } else if t.starts_with("Mitigation") {
        Vuln::Mitigated
    } else if t.starts_with("Vulnerable") {
        Vuln::Vulnerable
    } else {
        Vuln::Other
    }
}

/// A `Key:\tvalue` field of /proc/PID/status.
pub fn status_field<'a>(status: &'a str, key: &str) -> Option<&'a str> {
    status.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k == key).then(|| v.trim())
    })
}

/// Soft and hard "Max open files" from /proc/PID/limits (`None` for unlimited).
pub fn nofile_limits(limits: &str) -> Option<(Option<u64>, Option<u64>)> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    let mut it = line["Max open files".len()..].split_whitespace();
    let parse = |s: Option<&str>| -> Option<Option<u64>> {
        match s? {
            "unlimited" => Some(None),
            v => v.parse().ok().map(Some),
        }
    };
    Some((parse(it.next())?, parse(it.next())?))
}

/// One line of /proc/net/packet: the socket's inode and the interface index it is bound to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketSocket {
    /// Socket inode (matches `socket:[INODE]` in /proc/PID/fd).
    pub inode: u64,
    /// Bound interface index (0: every interface).
    pub ifindex: u32,
    /// Ethernet protocol, host order (0x0003 = ETH_P_ALL sees every packet).
    pub proto: u16,
}

/// Parses /proc/net/packet
/// (`sk RefCnt Type Proto Iface R Rmem User Inode`, net/packet/af_packet.c `packet_seq_show`).
pub fn packet_sockets(text: &str) -> Vec<PacketSocket> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 9 {
                return None;
            }
            // The kernel prints `ntohs(po->num)` as hex: already host order.
            Some(PacketSocket {
                inode: f[8].parse().ok()?,
                ifindex: f[4].parse().ok()?,
                proto: u16::from_str_radix(f[3], 16).ok()?,
            })
        })
        .collect()
}

/// One IRQ line of /proc/interrupts: number and the action name (last column).
pub fn interrupts(text: &str) -> Vec<(u32, String)> {
    text.lines()
        .filter_map(|l| {
            let (num, rest) = l.trim_start().split_once(':')?;
            let irq: u32 = num.parse().ok()?;
            let name = rest.split_whitespace().last()?.to_string();
            Some((irq, name))
        })
        .collect()
}

/// The root qdisc of each device from `tc qdisc show` (`qdisc noqueue 0: dev lo root ...`).
pub fn tc_root_qdiscs(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let dev = f.iter().position(|w| *w == "dev")?;
            if f.first() != Some(&"qdisc") || !f.contains(&"root") {
                return None;
            }
            Some((f.get(dev + 1)?.to_string(), f.get(1)?.to_string()))
        })
        .collect()
}

/// The root qdisc of `dev` as `tc qdisc add` takes it: its kind, then the parameters
/// `tc qdisc show` printed after `root` (and `refcnt N`, which is state, not a parameter).
pub fn tc_root_params(text: &str, dev: &str) -> Option<Vec<String>> {
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        let at = f.iter().position(|w| *w == "dev")?;
        if f.first() != Some(&"qdisc") || f.get(at + 1) != Some(&dev) {
            return None;
        }
        let root = f.iter().position(|w| *w == "root")?;
        let mut rest = &f[root + 1..];
        if rest.first() == Some(&"refcnt") {
            rest = rest.get(2..).unwrap_or_default();
        }
        let mut out = vec![f.get(1)?.to_string()];
        out.extend(rest.iter().map(|w| w.to_string()));
        Some(out)
    })
}

/// A `key: value` line from `ethtool -c` / `ethtool -k` output.
pub fn ethtool_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|l| {
        let (k, v) = l.trim().split_once(':')?;
        (k == key).then(|| v.split_whitespace().next().unwrap_or(""))
    })
}

/// Module names from /proc/modules.
pub fn modules(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect()
}

/// Number of rules in `nft list ruleset` output: statements inside chains, not counting the
/// chain's `type ... hook ...` header or its `policy`.
pub fn nft_rule_count(text: &str) -> usize {
    let mut depth_in_chain = false;
    let mut count = 0;
    for line in text.lines().map(str::trim) {
        if line.starts_with("chain ") {
            depth_in_chain = true;
        } else if line == "}" {
            depth_in_chain = false;
        } else if depth_in_chain
            && !line.is_empty()
            && !line.starts_with("type ")
            && !line.starts_with("policy ")
        {
            count += 1;
        }
    }
    count
}

/// Number of rules in `iptables-save` output (`-A` lines).
pub fn iptables_rule_count(text: &str) -> usize {
    text.lines().filter(|l| l.starts_with("-A ")).count()
}

/// Whether `auditctl -s` says auditing is enabled (`enabled 1` or `2`).
pub fn audit_enabled(status: &str) -> Option<bool> {
    status.lines().find_map(|l| {
        let v = l.strip_prefix("enabled ")?;
        Some(v.trim() != "0")
    })
}

/// Number of audit rules in `auditctl -l` output (`No rules` is zero).
pub fn audit_rule_count(rules: &str) -> usize {
    rules
        .lines()
        .filter(|l| !l.trim().is_empty() && l.trim() != "No rules")
        .count()
}

/// Number of rules in an audit.rules file (`-a`/`-A` syscall rules and `-w` watches; control
/// lines such as `-D`, `-b 8192`, `-f 1` are not rules), per auditctl(8).
pub fn audit_rules_file_count(text: &str) -> usize {
    text.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("-a ") || l.starts_with("-A ") || l.starts_with("-w "))
        .count()
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

    case!(cpu_list_ranges: cpu_list("0-3,8,10-11\n") => Some(vec![0, 1, 2, 3, 8, 10, 11]));
    case!(cpu_list_empty: cpu_list("\n") => Some(vec![]));
    case!(cpu_list_isolcpus_flags: cpu_list("nohz,domain,2-3") => Some(vec![2, 3]));
    case!(cpu_list_garbage: cpu_list("x-y") => None);
    case!(cpu_list_format: format_cpu_list(&[0, 1, 2, 3, 8, 10, 11]) => "0-3,8,10-11");
    case!(cpu_mask_words: cpu_mask("00000001,0000000f") => Some(vec![0, 1, 2, 3, 32]));
    case!(cpu_mask_zero: cpu_mask("0\n") => Some(vec![]));
    case!(cpu_mask_format: format_cpu_mask(&[0, 1, 2, 3, 32]) => "1,0000000f");
    case!(cpu_mask_format_small: format_cpu_mask(&[1]) => "2");
    case!(cmdline_last_wins: cmdline_param("a mitigations=auto b mitigations=off", "mitigations") => Some("off"));
    case!(cmdline_ignores_init_args: cmdline_param("quiet -- audit=0", "audit") => None);
    case!(stat_cpu_line: stat_cpu("cpu  8052 0 1104 32705 255 0 35 2 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n")
        => Some(CpuTimes { total: 8052 + 1104 + 32705 + 255 + 35 + 2, steal: 2 }));
    case!(stat_cpu_missing: stat_cpu("intr 1 2\n") => None);
    case!(vuln_mitigated: vulnerability("Mitigation: Enhanced IBRS\n") => Vuln::Mitigated);
    case!(vuln_not_affected: vulnerability("Not affected\n") => Vuln::NotAffected);
    case!(vuln_vulnerable: vulnerability("Vulnerable: __user pointer sanitization and usercopy barriers only; no swapgs barriers\n") => Vuln::Vulnerable);
    case!(status_seccomp: status_field("Name:\tx\nSeccomp:\t2\n", "Seccomp") => Some("2"));
    case!(limits_nofile: nofile_limits("Limit Soft Hard Units\nMax open files            20000                20000                files     \n")
        => Some((Some(20000), Some(20000))));
    case!(limits_unlimited: nofile_limits("Max open files  unlimited unlimited files\n") => Some((None, None)));
    case!(packet_line: packet_sockets("sk       RefCnt Type Proto  Iface R Rmem   User   Inode\nffff8880 3      3    0003   2     1 0      0      18234\n")
        => vec![PacketSocket { inode: 18234, ifindex: 2, proto: 3 }]);
    case!(interrupts_names: interrupts("           CPU0       CPU1\n 38:          0        927 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0\nNMI: 0 0 Non-maskable interrupts\n")
        => vec![(38, "virtio2-input.0".to_string())]);
    case!(tc_roots: tc_root_qdiscs("qdisc noqueue 0: dev lo root refcnt 2\nqdisc mq 0: dev eth0 root\nqdisc fq_codel 0: dev eth0 parent :1 limit 10240p\n")
        => vec![("lo".to_string(), "noqueue".to_string()), ("eth0".to_string(), "mq".to_string())]);
    case!(ethtool_gro: ethtool_value("Features for eth0:\ngeneric-receive-offload: on\ntcp-segmentation-offload: off [fixed]\n", "tcp-segmentation-offload") => Some("off"));
    case!(nft_rules: nft_rule_count("table inet filter {\n\tchain input {\n\t\ttype filter hook input priority filter; policy accept;\n\t\tct state established accept\n\t\ttcp dport 22 accept\n\t}\n}\n") => 2);
    case!(iptables_rules: iptables_rule_count("*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -p tcp -j ACCEPT\nCOMMIT\n") => 1);
    case!(audit_on: audit_enabled("enabled 1\nfailure 1\n") => Some(true));
    case!(audit_no_rules: audit_rule_count("No rules\n") => 0);
    case!(audit_file_rules: audit_rules_file_count("## comment\n-D\n-b 8192\n-a always,exit -F arch=b64 -S execve\n-w /etc/shadow -p wa\n") => 2);
}
