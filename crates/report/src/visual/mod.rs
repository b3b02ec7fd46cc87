//! Pictures and tables of many runs: the sweep step record, the lines printed per step, the
//! per-step CSV, the sweep JSON document, SVG plots (plotters), the self-contained HTML page, and the comparison table
//! and document of `twelve compare`.
//!
//! Everything here is pure: it turns finished, summarised runs into text. The drivers that
//! make the runs live in twelve-sweep, the commands in the binary.
pub mod compare_report;
pub mod compare_verdict;
pub mod console;
pub mod csv;
pub mod doc;
pub mod error_table;
pub mod html;
pub mod plot;
pub mod step;
mod time;

pub use compare_report::{COMPARE_SCHEMA, COMPARE_SCHEMA_ID, CompareDoc, Comparison, Spread};
pub use csv::{CSV_HEADER_CLOSED, CSV_HEADER_OPEN, write_csv};
pub use doc::{SWEEP_SCHEMA, SWEEP_SCHEMA_ID, SweepDoc};
pub use html::{Host, HostCheck, HtmlPage};
pub use step::{LoadKind, Step, StepRow};
