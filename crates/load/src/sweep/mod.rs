//! Sweeps over load (ab+.sh built in), the knee search, and interleaved comparisons: drivers
//! that run one bench run per step and hand the steps to twelve-report's writers.
//!
//! - [`plan`]: step plans such as `100..1000:100`.
//! - [`drain`]: waiting between steps until the last step's connections have drained.
//! - [`knee`]: bisection for the highest rate that meets every SLO.
//! - [`driver`]: running the steps.
//! - [`compare`]: A B A B rounds and their medians, ranges and pairwise ratios.
pub mod compare;
pub mod drain;
pub mod driver;
pub mod knee;
pub mod plan;

pub use compare::{Comparison, Side, Spread, interleave};
pub use drain::{DrainPolicy, Drained, wait_drained};
pub use driver::{configure, judge, run_step};
pub use knee::{KneeResult, KneeSearch, find_max_rate};
pub use plan::{PlanError, parse_plan};
