//! twelve-doctor: reads a Linux host and explains which of the 1.2M req/s study's tunings apply.
//!
//! The pieces: [`probe`] reads /proc, /sys and a few commands under a root path into a
//! [`Snapshot`]; the checks in the [`CATALOGUE`] are pure functions of it; [`evaluate`] turns
//! a snapshot into a [`Report`]; [`render`] prints it; [`apply`] makes the run-time changes
//! and writes a revert script; [`measure`] is what `twelve doctor --measure` needs to measure
//! a tuning's effect and always revert it. `report.schema.json` documents the JSON form
//! ([`Report::to_json`]) and [`Report::summary`] is the compact form `twelve bench` embeds.
#![forbid(unsafe_code)]

pub mod apply;
mod catalogue;
mod checks;
pub mod measure;
mod model;
pub mod parse;
mod probe;
pub mod render;
mod snapshot;

pub use catalogue::{CATALOGUE, Check, evaluate};
pub use model::{Action, CheckStatus, Finding, Report, SCHEMA_VERSION, Status, Step, Summary};
pub use probe::{ProbeOptions, Runner, SYSCTLS, probe};
pub use snapshot::{Interface, Process, Queue, Snapshot};

/// The JSON Schema of [`Report::to_json`], also at `crates/doctor/report.schema.json`.
pub const REPORT_SCHEMA: &str = include_str!("../report.schema.json");

/// Probes the host under `opts.root` and evaluates every check.
pub fn diagnose(opts: &ProbeOptions) -> Report {
    evaluate(&probe(opts))
}

/// The running host's [`Summary`], sampling steal time over `steal_window` (zero: since
/// boot). This is what `twelve bench` records in its JSON.
pub fn host_summary(steal_window: std::time::Duration) -> Summary {
    diagnose(&ProbeOptions {
        root: "/".into(),
        steal_window,
    })
    .summary()
}
