//! twelve-report: latency histograms, their lossless merge, the one summary of a run that
//! every writer reads, and the writers: the wrk-layout text report, the `--json` document
//! (schemas in `schema/`), HdrHistogram interval logs and percentile distributions
//! (`.hgrm`), SLO checks, the tables and pictures of many runs (sweeps, comparisons), and
//! flame graphs of perf samples (`flame`, behind the default `flame` feature).
#![forbid(unsafe_code)]

#[cfg(feature = "flame")]
pub mod flame;
mod format;
pub mod hdrcodec;
pub mod hdrlog;
pub mod hgrm;
pub mod json;
pub mod latency;
pub mod merge;
pub mod phases;
pub mod raw;
pub mod result;
pub mod server;
pub mod slo;
pub mod summary;
pub mod text;
pub mod timeseries;
pub mod verdict;
mod verdict_text;
pub mod visual;

pub use hdrlog::{IntervalLog, IntervalRecord};
pub use json::{JsonReport, SCHEMA, SCHEMA_ID};
pub use latency::{Percentiles, Recorder, new_histogram};
pub use phases::{PhaseSummary, Phases};
pub use result::{
    ConnCounts, Errors, H2Errors, NapCause, RunInfo, RunResult, ServerCost, ShardInfo, WorkerResult,
};
pub use slo::{Metric, Op, Slo, SloError, SloOutcome};
pub use summary::{CLIENT_BOUND_NOTE, Summary};
pub use verdict::{SelfCheck, Verdict};
