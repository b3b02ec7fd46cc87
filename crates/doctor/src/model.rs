//! The doctor's data model: statuses, the study's steps, findings, actions and the report.
use serde::{Deserialize, Serialize};

/// How a check came out. Serialized in lower case (`"ok"`, `"advise"`, `"warn"`, `"unknown"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// As the study had it, or nothing to gain here.
    Ok,
    /// A tuning the study used is available here; it has a trade-off to weigh.
    Advise,
    /// Something that is costing throughput or would skew a benchmark.
    Warn,
    /// The files or commands the check needs were missing (skipped).
    Unknown,
}

impl Status {
    /// The lower-case name used in the table and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Advise => "advise",
            Status::Warn => "warn",
            Status::Unknown => "unknown",
        }
    }
}

/// The study's steps, in the order it took them; the table is grouped by these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// Use every core; keep server and client apart; no stolen time.
    Cores,
    /// Per-CPU listeners with CPU-steered accept and matching NIC queues ("perfect locality").
    Locality,
    /// Busy polling plus interrupt coalescing.
    BusyPoll,
    /// Speculative-execution mitigations.
    Mitigations,
    /// Syscall auditing and seccomp.
    Auditing,
    /// Netfilter and connection tracking.
    Netfilter,
    /// Queueing discipline, congestion control, GRO/TSO: the study's last steps.
    Qdisc,
    /// Other processes that see every packet (the "nosy neighbour").
    Neighbours,
    /// Limits and knobs every load test meets: backlogs, ports, fds, io_uring.
    Limits,
}

impl Step {
    /// Every step, in the study's order.
    pub const ALL: [Step; 9] = [
        Step::Cores,
        Step::Locality,
        Step::BusyPoll,
        Step::Mitigations,
        Step::Auditing,
        Step::Netfilter,
        Step::Qdisc,
        Step::Neighbours,
        Step::Limits,
    ];

    /// A heading for the table.
    pub fn heading(self) -> &'static str {
        match self {
            Step::Cores => "1. All cores, kept apart",
            Step::Locality => "2. Perfect locality (study: +38%)",
            Step::BusyPoll => "3. Busy polling + interrupt coalescing (study: +28%)",
            Step::Mitigations => "4. Speculative-execution mitigations (study: ~+28% off)",
            Step::Auditing => "5. Syscall auditing (study: ~+11% off)",
            Step::Netfilter => "6. Netfilter / conntrack (study: ~+22% unloaded)",
            Step::Qdisc => "7. Qdisc, congestion control, GRO (study: noqueue +2%)",
            Step::Neighbours => "8. Nosy neighbours (study: ~6%)",
            Step::Limits => "9. Limits and knobs",
        }
    }
}

/// One change a check proposes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    /// Write `value` to a /proc or /sys file (a sysctl, an RPS/XPS map, an IRQ affinity).
    /// `path` is absolute as seen on the probed host; the apply step prefixes the root.
    Write {
        /// The file, e.g. `/proc/sys/net/core/busy_poll`.
        path: String,
        /// What to write.
        value: String,
        /// What the probe read there, used for the displayed revert command.
        old: String,
    },
    /// Run a command now; `revert` undoes it.
    Run {
        /// The command line.
        argv: Vec<String>,
        /// The command line that undoes it.
        revert: Vec<String>,
    },
    /// Something only a person can do (kernel command line, firmware, module unloading):
    /// printed, never applied.
    Manual {
        /// What to do, with the exact lines to add or run.
        text: String,
        /// How to undo it.
        undo: String,
    },
}

impl Action {
    /// A `sysctl` write for `key` (dotted) from `old` to `value`.
    pub(crate) fn sysctl(key: &str, old: &str, value: &str) -> Action {
        Action::Write {
            path: format!("/proc/sys/{}", key.replace('.', "/")),
            value: value.to_string(),
            old: old.trim().to_string(),
        }
    }

    /// A command and the command that undoes it.
    pub(crate) fn run(argv: &[&str], revert: &[&str]) -> Action {
        Action::Run {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            revert: revert.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// A printed instruction and how to undo it.
    pub(crate) fn manual(text: impl Into<String>, undo: impl Into<String>) -> Action {
        Action::Manual {
            text: text.into(),
            undo: undo.into(),
        }
    }

    /// The shell line that applies this action.
    pub fn apply_line(&self) -> String {
        match self {
            Action::Write { path, value, .. } => write_line(path, value),
            Action::Run { argv, .. } => shell_join(argv),
            Action::Manual { text, .. } => format!("# manual: {text}"),
        }
    }

    /// The shell line that reverts this action (from the values the probe read).
    pub fn revert_line(&self) -> String {
        match self {
            Action::Write { path, old, .. } => write_line(path, old),
            Action::Run { revert, .. } => shell_join(revert),
            Action::Manual { undo, .. } => format!("# manual: {undo}"),
        }
    }
}

/// `sysctl -w` for /proc/sys paths (readable), `echo > path` for the rest.
fn write_line(path: &str, value: &str) -> String {
    match path.strip_prefix("/proc/sys/") {
        Some(key) => format!("sysctl -w {}={}", key.replace('/', "."), shell_quote(value)),
        None => format!("echo {} > {}", shell_quote(value), shell_quote(path)),
    }
}

/// Quotes one word for `sh` when it needs it.
pub(crate) fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Joins a command line for `sh`.
pub(crate) fn shell_join(argv: &[String]) -> String {
    argv.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The outcome of one check.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    /// Stable id, e.g. `net.busy_poll`; `twelve doctor --apply ID` takes it.
    pub id: &'static str,
    /// The study's step it belongs to.
    pub step: Step,
    /// Short title.
    pub title: &'static str,
    /// ok / advise / warn / unknown.
    pub status: Status,
    /// What was read on this host, in a sentence.
    pub found: String,
    /// Why it matters, with the study's measured effect where it had one.
    pub why: &'static str,
    /// What to do about it on this host.
    pub recommendation: String,
    /// Risk and trade-off of the recommendation.
    pub risk: &'static str,
    /// The changes that implement the recommendation (empty when there is nothing to do).
    pub actions: Vec<Action>,
}

impl Finding {
    /// The shell lines that apply this finding's recommendation.
    pub fn apply_lines(&self) -> Vec<String> {
        self.actions.iter().map(Action::apply_line).collect()
    }

    /// The shell lines that revert it.
    pub fn revert_lines(&self) -> Vec<String> {
        self.actions.iter().rev().map(Action::revert_line).collect()
    }
}

/// Every finding for one host, in catalogue order.
#[derive(Clone, Debug)]
pub struct Report {
    /// The root the probe read (`/` for the running host).
    pub root: String,
    /// The findings, one per catalogue entry.
    pub findings: Vec<Finding>,
}

/// The compact form `twelve bench` embeds in its JSON: counts and each check's id and status.
/// Serializes as `$defs/summary` of `report.schema.json`; deserializes back for comparisons.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Schema version of this summary (bumped on incompatible change).
    pub schema_version: u32,
    /// Number of checks that came out ok.
    pub ok: usize,
    /// ... advise.
    pub advise: usize,
    /// ... warn.
    pub warn: usize,
    /// ... unknown.
    pub unknown: usize,
    /// Each check's id and status, in catalogue order.
    pub checks: Vec<CheckStatus>,
}

/// One entry of [`Summary::checks`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckStatus {
    /// The check's id.
    pub id: String,
    /// Its status.
    pub status: Status,
}

/// Version of the JSON schema in `report.schema.json` and of [`Summary`].
pub const SCHEMA_VERSION: u32 = 1;

impl Report {
    /// The compact summary (see [`Summary`]).
    pub fn summary(&self) -> Summary {
        let count = |s| self.findings.iter().filter(|f| f.status == s).count();
        Summary {
            schema_version: SCHEMA_VERSION,
            ok: count(Status::Ok),
            advise: count(Status::Advise),
            warn: count(Status::Warn),
            unknown: count(Status::Unknown),
            checks: self
                .findings
                .iter()
                .map(|f| CheckStatus {
                    id: f.id.to_string(),
                    status: f.status,
                })
                .collect(),
        }
    }

    /// The finding with this id.
    pub fn get(&self, id: &str) -> Option<&Finding> {
        self.findings.iter().find(|f| f.id == id)
    }

    /// The full report as pretty-printed JSON text (see [`Report::to_json`]).
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(&self.to_json()).expect("JSON values serialize")
    }

    /// The full report as a JSON value following `report.schema.json`.
    pub fn to_json(&self) -> serde_json::Value {
        let findings: Vec<serde_json::Value> = self
            .findings
            .iter()
            .map(|f| {
                let mut v = serde_json::to_value(f).expect("findings serialize");
                v["apply"] = f.apply_lines().into();
                v["revert"] = f.revert_lines().into();
                v
            })
            .collect();
        serde_json::json!({
            "schema_version": SCHEMA_VERSION,
            "tool": "twelve doctor",
            "version": env!("CARGO_PKG_VERSION"),
            "root": self.root,
            "summary": self.summary(),
            "findings": findings,
        })
    }
}
