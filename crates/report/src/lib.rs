//! twelve-report: latency histograms, their lossless merge, and the writers of a bench run:
//! the wrk-layout text report, the `--json` document (schema in `schema/`), HdrHistogram
//! interval logs and percentile distributions (`.hgrm`), and SLO checks.
#![forbid(unsafe_code)]

mod format;
pub mod hdrlog;
pub mod hgrm;
pub mod json;
pub mod latency;
pub mod result;
pub mod slo;
pub mod text;
pub mod visual;

pub use hdrlog::IntervalLog;
pub use json::{JsonReport, SCHEMA, SCHEMA_ID};
pub use latency::{Percentiles, Recorder, new_histogram};
pub use result::{ConnCounts, Errors, RunInfo, RunResult, WorkerResult};
pub use slo::{Slo, SloError, SloOutcome};
