//! Security-for-speed checks: CPU mitigations, syscall auditing, seccomp.
use super::Outcome;
use crate::model::{Action, Status};
use crate::parse::{self, Vuln};
use crate::snapshot::Snapshot;

/// `cpu.mitigations`: what the kernel pays for (vulnerabilities/*) and `mitigations=`.
pub(crate) fn mitigations(snap: &Snapshot) -> Outcome {
    let param = snap
        .cmdline
        .as_deref()
        .and_then(|c| parse::cmdline_param(c, "mitigations"));
    if snap.vulnerabilities.is_empty() {
        return Outcome::unknown("/sys/devices/system/cpu/vulnerabilities is missing");
    }
    let by = |kind: Vuln| -> Vec<&str> {
        snap.vulnerabilities
            .iter()
            .filter(|(_, t)| parse::vulnerability(t) == kind)
            .map(|(n, _)| n.as_str())
            .collect()
    };
    let (mitigated, vulnerable) = (by(Vuln::Mitigated), by(Vuln::Vulnerable));
    let found = format!(
        "mitigations={}; {} of {} issues mitigated ({}); {} reported vulnerable",
        param.unwrap_or("(default)"),
        mitigated.len(),
        snap.vulnerabilities.len(),
        if mitigated.is_empty() {
            "none".to_string()
        } else {
            mitigated.join(", ")
        },
        vulnerable.len()
    );
    if param == Some("off") || mitigated.is_empty() {
        return Outcome::new(
            Status::Ok,
            found,
            "Nothing to gain. If mitigations are off, this host must run only trusted code.",
        );
    }
    Outcome::new(
        Status::Advise,
        found,
        "Only on a dedicated, single-tenant benchmark host running only trusted code: boot \
         with mitigations=off. Never on a shared or multi-tenant host.",
    )
    .with(vec![Action::manual(
        "add `mitigations=off` to the kernel command line (GRUB_CMDLINE_LINUX in \
         /etc/default/grub, update-grub, reboot)",
        "remove `mitigations=off` from the kernel command line, update-grub, reboot",
    )])
}

/// `sec.audit`: syscall auditing (audit=0, auditctl, auditd).
pub(crate) fn audit(snap: &Snapshot) -> Outcome {
    let param = snap
        .cmdline
        .as_deref()
        .and_then(|c| parse::cmdline_param(c, "audit"));
    if param == Some("0") {
        return Outcome::ok("audit=0 on the kernel command line: auditing is off");
    }
    let enabled = snap
        .auditctl_status
        .as_deref()
        .and_then(parse::audit_enabled);
    let auditd = snap.running("auditd");
    // Without auditctl, count what auditd loads from /etc/audit/audit.rules when it runs.
    let rules = snap
        .auditctl_rules
        .as_deref()
        .map(parse::audit_rule_count)
        .or_else(|| {
            let file = snap.etc_audit_rules.as_deref()?;
            auditd.map(|_| parse::audit_rules_file_count(file))
        });
    let found = format!(
        "auditing {}, {} rules, auditd {}",
        match enabled {
            Some(true) => "enabled",
            Some(false) => "disabled",
            None => "state unknown (no auditctl)",
        },
        rules.map_or("unknown".to_string(), |r| r.to_string()),
        auditd.map_or("not running".to_string(), |p| format!(
            "running (pid {})",
            p.pid
        ))
    );
    let manual = Action::manual(
        "add `audit=0` to the kernel command line and reboot, or delete the rules with \
         `auditctl -D` and stop auditd (`systemctl stop auditd`)",
        "remove `audit=0` and reboot, or `systemctl start auditd` and `augenrules --load`",
    );
    // The syscall-entry hook only costs when auditing is on with rules loaded (kernel/auditsc.c
    // gives a task an audit context only then).
    let costs = match (enabled, rules) {
        (Some(false), _) => false,
        (_, Some(r)) => r > 0,
        _ => auditd.is_some(),
    };
    if costs {
        Outcome::new(
            Status::Warn,
            found,
            "Syscall auditing taxes every syscall: turn it off on a benchmark host if policy \
             allows.",
        )
        .with(vec![manual])
    } else if snap.processes.is_empty() && enabled.is_none() {
        Outcome::unknown(found)
    } else {
        Outcome::ok(found)
    }
}

/// `sec.seccomp`: seccomp filters on the probing process (a container profile, systemd).
pub(crate) fn seccomp(snap: &Snapshot) -> Outcome {
    let Some(status) = snap.self_status.as_deref() else {
        return Outcome::unknown("/proc/self/status is missing");
    };
    let mode = parse::status_field(status, "Seccomp").unwrap_or("?");
    let filters = parse::status_field(status, "Seccomp_filters").unwrap_or("?");
    match mode {
        "0" => Outcome::ok("no seccomp filter on this process"),
        "2" => Outcome::new(
            Status::Warn,
            format!("seccomp filter mode, {filters} filters (a container or service profile)"),
            "Every syscall runs these BPF filters. For a benchmark, run the server and client \
             without a seccomp profile if policy allows.",
        )
        .with(vec![Action::manual(
            "run with `--security-opt seccomp=unconfined` (docker/podman) or without \
             SystemCallFilter= (systemd)",
            "run with the default profile again (drop the flag or restore SystemCallFilter=)",
        )]),
        other => Outcome::unknown(format!("Seccomp: {other}")),
    }
}
