//! The check catalogue: every check's stable id, step, title, why it matters and its risk.
//!
//! Figures in `why` are the study's (one 4-vCPU VM taken from 224k to 1.2M JSON req/s with
//! libreactor); checks without a figure say so by not quoting one.
use crate::checks::{Outcome, cpu, net, nic, security};
use crate::model::{Finding, Report, Step};
use crate::snapshot::Snapshot;

/// One entry of the catalogue.
pub struct Check {
    /// Stable id (never renamed: `--apply` and stored JSON use it).
    pub id: &'static str,
    /// The study's step.
    pub step: Step,
    /// Short title.
    pub title: &'static str,
    /// Why it matters.
    pub why: &'static str,
    /// Risk of the recommendation.
    pub risk: &'static str,
    run: fn(&Snapshot) -> Outcome,
}

macro_rules! check {
    ($id:literal, $step:ident, $title:literal, $run:path, why: $why:literal, risk: $risk:literal) => {
        Check {
            id: $id,
            step: Step::$step,
            title: $title,
            why: $why,
            risk: $risk,
            run: $run,
        }
    };
}

/// Every check, in the study's order.
pub const CATALOGUE: &[Check] = &[
    check!("cpu.online", Cores, "Online CPUs and SMT siblings", cpu::online,
        why: "The study's first step was to use all cores: one worker per CPU. SMT siblings share a core's execution units, so two threads there are not two CPUs.",
        risk: "None: information only."),
    check!("cpu.isolation", Cores, "Isolated CPUs for server and client", cpu::isolation,
        why: "A load generator on the server's CPUs measures the scheduler, not the server. isolcpus/nohz_full keep other tasks and the timer tick off the server's CPUs.",
        risk: "Isolated CPUs run only what is pinned there; the rest of the system gets fewer CPUs. Needs a reboot."),
    check!("cpu.governor", Cores, "CPU frequency governor", cpu::governor,
        why: "Power-saving governors lower the clock between bursts, which adds latency and noise to every run.",
        risk: "More power and heat while it is set."),
    check!("cpu.steal", Cores, "Steal time", cpu::steal,
        why: "Time the hypervisor gives to other guests is time the server does not run; it makes results noisy and low.",
        risk: "None: information only."),
    check!("nic.queues", Locality, "NIC queues per CPU", nic::queues,
        why: "Perfect locality (study: +38%) needs one NIC queue per CPU, so each CPU receives, processes and answers its own connections.",
        risk: "Changing the queue count resets the NIC's queues briefly (a short traffic stall)."),
    check!("nic.irq_affinity", Locality, "NIC IRQ affinity", nic::irq_affinity,
        why: "Part of perfect locality (study: +38%): queue i's interrupt on CPU i, matching the per-CPU SO_REUSEPORT listener steered by SO_INCOMING_CPU.",
        risk: "A pinned interrupt stays on its CPU even when that CPU is busy; with fewer queues than CPUs some CPUs take no interrupts."),
    check!("nic.irqbalance", Locality, "irqbalance", nic::irqbalance,
        why: "irqbalance periodically moves interrupts between CPUs, undoing the pinning perfect locality (study: +38%) depends on.",
        risk: "Without it, interrupts stay where they were put, which is only good if they were put well."),
    check!("nic.rps", Locality, "Receive packet steering (RPS)", nic::rps,
        why: "With fewer receive queues than CPUs, RPS spreads protocol processing over the CPUs; with a queue per CPU it only adds inter-processor interrupts.",
        risk: "RPS costs an inter-processor interrupt per batch; wrong masks move work away from the listener's CPU."),
    check!("nic.xps", Locality, "Transmit packet steering (XPS)", nic::xps,
        why: "XPS makes CPU i transmit on queue i, the transmit half of perfect locality (study: +38%).",
        risk: "Low: a CPU left out of every map falls back to hashing."),
    check!("net.busy_poll", BusyPoll, "Busy polling (busy_poll, busy_read)", net::busy_poll,
        why: "Busy polling with interrupt coalescing was worth +28% in the study: the application polls the NIC queue instead of waiting for an interrupt.",
        risk: "Spinning burns CPU while waiting; at low load it wastes power and can raise other tasks' latency."),
    check!("nic.coalesce", BusyPoll, "Interrupt coalescing", nic::coalesce,
        why: "Fewer interrupts per packet; with busy polling (together +28% in the study) the application, not the interrupt, picks packets up.",
        risk: "Longer coalescing raises latency when nothing busy-polls."),
    check!("cpu.mitigations", Mitigations, "Speculative-execution mitigations", security::mitigations,
        why: "Turning the mitigations off gained about 28% in the study: syscalls and interrupts get cheaper when the kernel stops flushing buffers and predictors on every entry and exit.",
        risk: "Security: with mitigations off, any code on this machine (another process, another container, a VM on the same host) may read kernel and other processes' memory through Spectre/Meltdown-class attacks. Only for a dedicated machine running trusted code."),
    check!("sec.audit", Auditing, "Syscall auditing", security::audit,
        why: "With audit rules loaded, every syscall takes the audit path; turning auditing off was worth about 11% in the study.",
        risk: "No audit trail while it is off: compliance regimes may require it."),
    check!("sec.seccomp", Auditing, "Seccomp filter", security::seccomp,
        why: "A seccomp filter runs on every syscall; container runtimes install one by default, and it also blocks io_uring.",
        risk: "Without the profile a compromised process has the whole syscall surface."),
    check!("net.conntrack", Netfilter, "Connection tracking", net::conntrack,
        why: "Unloading netfilter and conntrack was worth about 22% in the study: tracking hashes every packet and inserts every connection.",
        risk: "No NAT or stateful firewall while it is unloaded."),
    check!("net.firewall", Netfilter, "iptables / nftables rules", net::firewall,
        why: "Netfilter hooks and rules run for every packet (part of the study's ~22% from unloading netfilter).",
        risk: "No firewall while the rules are flushed: do this only on an isolated benchmark network."),
    check!("net.qdisc", Qdisc, "Root qdisc", net::qdisc,
        why: "noqueue as the root qdisc skips the queueing layer; the study measured +2%.",
        risk: "No queue: bursts beyond the driver's ring are dropped, and no fairness between flows."),
    check!("net.congestion", Qdisc, "TCP congestion control", net::congestion,
        why: "Small request/response traffic rarely leaves slow start; cubic and bbr both serve it well.",
        risk: "Low."),
    check!("nic.offload", Qdisc, "GRO and TSO", nic::offload,
        why: "GRO merges received packets and TSO lets the NIC split large sends, so the stack handles fewer packets (one of the study's last steps).",
        risk: "Low; GRO can add a little latency to single packets."),
    check!("net.packet_sockets", Neighbours, "Packet sockets of other processes", net::packet_sockets,
        why: "The study's nosy neighbour: a DHCP client's packet socket, which sees every packet, cost about 6%.",
        risk: "Stopping a DHCP client means no lease renewal while it is stopped."),
    check!("net.somaxconn", Limits, "Accept queue limit (somaxconn)", net::somaxconn,
        why: "listen() backlogs are capped by somaxconn; a short queue drops connects in bursts.",
        risk: "Low: more memory for queued connections."),
    check!("net.syn_backlog", Limits, "SYN backlog", net::syn_backlog,
        why: "Half-open connections beyond tcp_max_syn_backlog are dropped (or answered with syncookies).",
        risk: "Low."),
    check!("net.port_range", Limits, "Ephemeral port range", net::port_range,
        why: "A client opening many short connections to one server address runs out of local ports.",
        risk: "Ports in the range can be taken by outgoing connections before a service binds them."),
    check!("net.tw_reuse", Limits, "TIME-WAIT reuse", net::tw_reuse,
        why: "Reusing TIME-WAIT ports for new outgoing connections keeps a connection-churning client from running out of ports.",
        risk: "Low with TCP timestamps on (the default)."),
    check!("net.migrate_req", Limits, "Queued connections on listener close", net::migrate_req,
        why: "With SO_REUSEPORT and tcp_migrate_req=0, closing one listener resets every connection queued on it (verified here).",
        risk: "Low."),
    check!("sys.nofile", Limits, "File-descriptor limit", net::nofile,
        why: "Every connection is a file descriptor; a low limit caps concurrency with EMFILE.",
        risk: "Low."),
    check!("sys.io_uring", Limits, "io_uring availability", net::io_uring,
        why: "twelve can serve with io_uring; when it is disabled the server falls back to epoll.",
        risk: "io_uring has had many kernel vulnerabilities; some operators disable it on purpose."),
];

/// Runs every check on a snapshot.
pub fn evaluate(snap: &Snapshot) -> Report {
    Report {
        root: snap.root.clone(),
        findings: CATALOGUE
            .iter()
            .map(|c| {
                let o = (c.run)(snap);
                Finding {
                    id: c.id,
                    step: c.step,
                    title: c.title,
                    status: o.status,
                    found: o.found,
                    why: c.why,
                    recommendation: o.recommendation,
                    risk: c.risk,
                    actions: o.actions,
                }
            })
            .collect(),
    }
}
