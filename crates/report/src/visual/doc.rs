//! The sweep `--json` document: every step's full bench report plus its summary row, and the
//! knee when one was searched. Schema: `schema/sweep-report.schema.json`.
use super::step::{LoadKind, Step, StepRow};
use crate::json::JsonReport;
use serde::Serialize;

/// The identifier in every document's `schema` field.
pub const SWEEP_SCHEMA_ID: &str = "twelve-sweep-report/1";
/// The JSON Schema (draft 2020-12) the documents follow.
pub const SWEEP_SCHEMA: &str = include_str!("../../schema/sweep-report.schema.json");

/// A sweep as written by `twelve sweep --json`.
#[derive(Debug, Clone, Serialize)]
pub struct SweepDoc {
    /// Always [`SWEEP_SCHEMA_ID`].
    pub schema: &'static str,
    /// `twelve --version`.
    pub version: String,
    /// `"sweep"` or `"find-max-rate"`.
    pub mode: &'static str,
    /// What varied.
    pub kind: LoadKind,
    /// The command's settings, as (name, value) pairs in display order.
    pub settings: Vec<(String, String)>,
    /// The SLO expressions each step was judged against.
    pub slo: Vec<String>,
    /// Steps in the order they ran.
    pub steps: Vec<StepJson>,
    /// The knee search's answer (`find-max-rate` only).
    pub knee: Option<Knee>,
    /// `twelve doctor`'s summary of the host, when it could be read.
    pub doctor: Option<serde_json::Value>,
}

/// One step in the document.
#[derive(Debug, Clone, Serialize)]
pub struct StepJson {
    /// Position in run order.
    pub index: usize,
    /// Concurrency or rate.
    pub load: f64,
    /// Whether every SLO held.
    pub passed: bool,
    /// The CSV row.
    pub row: StepRow,
    /// The full bench report (schema `twelve-bench-report/1`).
    pub report: JsonReport,
}

/// The highest rate that met every SLO, and the runs that decided it.
#[derive(Debug, Clone, Serialize)]
pub struct Knee {
    /// Highest passing rate found, req/s; `None` when even the lowest rate failed.
    pub max_rate_per_s: Option<f64>,
    /// True when the highest rate tried passed: the knee lies above the search range.
    pub above_range: bool,
    /// Relative width of the final bracket (fail − pass) / fail.
    pub bracket: f64,
    /// Index into `steps` of the highest passing run.
    pub pass_step: Option<usize>,
    /// Index into `steps` of the lowest failing run.
    pub fail_step: Option<usize>,
}

impl SweepDoc {
    /// Builds the document; `mode` is `"sweep"` or `"find-max-rate"`.
    pub fn new(version: &str, mode: &'static str, kind: LoadKind, steps: &[Step]) -> Self {
        Self {
            schema: SWEEP_SCHEMA_ID,
            version: version.to_string(),
            mode,
            kind,
            settings: Vec::new(),
            slo: steps
                .first()
                .map(|s| s.summary.slo.iter().map(|o| o.expr.clone()).collect())
                .unwrap_or_default(),
            steps: steps
                .iter()
                .enumerate()
                .map(|(index, s)| StepJson {
                    index,
                    load: s.load,
                    passed: s.passed(),
                    row: StepRow::of(s),
                    report: JsonReport::of(&s.summary, version),
                })
                .collect(),
            knee: None,
            doctor: None,
        }
    }

    /// The document, pretty-printed.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("plain data serialises")
    }
}
