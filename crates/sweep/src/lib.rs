//! twelve-sweep: work made of many runs of twelve-load. Sweeps over load (ab+.sh built in),
//! the knee search, and interleaved comparisons run one bench run per step or round,
//! summarise each once (twelve-report's `Summary`), and hand them to twelve-report's
//! writers (`twelve_report::visual`).
//!
//! - [`plan`]: step plans such as `100..1000:100`, and the knee search's bounds.
//! - [`drain`]: waiting between runs until the last run's connections have drained.
//! - [`knee`]: bisection for the highest rate that meets every SLO.
//! - [`driver`]: running the steps of a sweep or a knee search.
//! - [`rounds`]: the A B A B rounds of a comparison.
//! - [`side`]: one side of a comparison: a URL, or a command that starts a server.
//! - [`tuning`]: a tuning's effect, in rounds with and without it (`twelve doctor --measure`).
#![forbid(unsafe_code)]

pub mod drain;
pub mod driver;
pub mod knee;
pub mod plan;
pub mod rounds;
pub mod side;
pub mod tuning;

pub use drain::{DrainPolicy, Drained, wait_drained};
pub use driver::{configure, run_knee, run_step, run_sweep};
pub use knee::{KneeResult, KneeSearch, find_max_rate};
pub use plan::{BoundsError, PlanError, parse_bounds, parse_plan};
pub use rounds::{Side, interleave};
pub use side::{
    SideError, SideObserver, SideSpec, run_side, run_side_observed, stop_running_server,
};
