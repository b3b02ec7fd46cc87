//! Pictures and tables of a sweep: the step record, the per-step CSV, the sweep JSON document,
//! SVG plots (plotters) and the self-contained HTML page.
//!
//! Everything here is pure: it turns finished runs into text. The sweep driver lives in
//! twelve-load (`twelve_load::sweep`), the command in the binary.
pub mod csv;
pub mod doc;
pub mod html;
pub mod plot;
pub mod step;
mod time;

pub use csv::{CSV_HEADER_CLOSED, CSV_HEADER_OPEN, write_csv};
pub use doc::{SWEEP_SCHEMA, SWEEP_SCHEMA_ID, SweepDoc};
pub use html::HtmlPage;
pub use step::{LoadKind, Step, StepRow};
