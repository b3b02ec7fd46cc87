//! The checks: pure functions from a [`Snapshot`] to an [`Outcome`], one module per area.
pub(crate) mod cpu;
pub(crate) mod net;
pub(crate) mod nic;
pub(crate) mod security;

use crate::model::{Action, Status};
use crate::parse;
use crate::snapshot::Snapshot;

/// What a check function decides; the catalogue adds id, title, why and risk.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// ok / advise / warn / unknown.
    pub status: Status,
    /// What was read.
    pub found: String,
    /// What to do here.
    pub recommendation: String,
    /// The changes that implement it.
    pub actions: Vec<Action>,
}

impl Outcome {
    pub(crate) fn new(status: Status, found: impl Into<String>, rec: impl Into<String>) -> Self {
        Outcome {
            status,
            found: found.into(),
            recommendation: rec.into(),
            actions: Vec::new(),
        }
    }

    pub(crate) fn ok(found: impl Into<String>) -> Self {
        Outcome::new(Status::Ok, found, "Nothing to change.")
    }

    pub(crate) fn unknown(found: impl Into<String>) -> Self {
        Outcome::new(
            Status::Unknown,
            found,
            "Not checked here; see the found text.",
        )
    }

    /// `rec` with the `actions` that implement it, or ok when there are none.
    pub(crate) fn advise(
        found: impl Into<String>,
        rec: impl Into<String>,
        actions: Vec<Action>,
    ) -> Self {
        if actions.is_empty() {
            return Outcome::ok(found);
        }
        Outcome::new(Status::Advise, found, rec).with(actions)
    }

    pub(crate) fn with(mut self, actions: Vec<Action>) -> Self {
        self.actions = actions;
        self
    }
}

/// The online CPUs, or `None` when /sys/devices/system/cpu/online is missing.
pub(crate) fn online_cpus(snap: &Snapshot) -> Option<Vec<u32>> {
    parse::cpu_list(snap.cpu_online.as_deref()?)
}

/// A sysctl check with a single recommended value: `ok(value)` decides, `want` is written.
pub(crate) fn sysctl_check(
    snap: &Snapshot,
    key: &str,
    ok: impl Fn(&str) -> bool,
    want: &str,
    advice: &str,
) -> Outcome {
    let Some(v) = snap.sysctl(key) else {
        return Outcome::unknown(format!(
            "{key} is not readable here (not in this namespace?)"
        ));
    };
    let shown = v.split_whitespace().collect::<Vec<_>>().join(" ");
    if ok(v) {
        return Outcome::ok(format!("{key} = {shown}"));
    }
    Outcome::new(Status::Advise, format!("{key} = {shown}"), advice)
        .with(vec![Action::sysctl(key, &shown, want)])
}
