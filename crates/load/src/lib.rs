//! twelve-load: the load generator behind `twelve bench`: pinned shared-nothing workers, each
//! with its own epoll loop and connections, driving a closed (wrk) or open (global arrival
//! schedule) model and recording corrected and uncorrected latency per request.
#![forbid(unsafe_code)]

pub mod clock;
pub mod config;
mod conn;
pub mod request;
pub mod run;
pub mod schedule;
pub mod sim;
pub mod sweep;
mod worker;

pub use clock::{Clock, MonoClock, SimClock};
pub use config::{Arrival, Config, ConfigError, Model, Stop, Target, parse_duration, parse_rate};
pub use run::{LoadError, Outcome, Progress, run, run_until};
pub use schedule::Schedule;
