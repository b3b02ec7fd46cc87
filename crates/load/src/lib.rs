//! twelve-load: the load generator behind `twelve bench`: pinned shared-nothing workers, each
//! with its own epoll loop and connections, driving a closed (wrk) or open (global arrival
//! schedule) model and recording corrected and uncorrected latency per request.
//!
//! A run ([`run()`]) builds the request bytes once ([`request`]), then starts one worker per
//! entry of [`Config::worker_cpus`]; each pins itself, then allocates its connections,
//! buffers and histograms, and loops on epoll. Each connection is a sans-I/O state machine
//! (`conn`: windows out, bytes in, answers out); the dispatch policy (`dispatch`) decides what
//! each sends. Closed model: a connection sends its next pipelined batch when the last is
//! answered. Open model: one [`Schedule`] for the whole run; a worker with a connection that
//! can take a request claims every due slot, and each response is recorded from its slot's
//! intended start (corrected), its actual send (uncorrected), and the wait between the two.
//! The worker loop runs over an `io::Io` and a [`Clock`]: sockets on epoll and CLOCK_MONOTONIC
//! in runs, a modelled server and [`SimClock`] in [`sim`], which so replays the open model
//! through the real dispatch, deterministically, for tests. Results are handed to twelve-report
//! as per-worker histograms and counters, merged there. [`perf`] samples a server with
//! `perf record` during a run's measured window, for a flame graph.
#![forbid(unsafe_code)]

pub mod clock;
pub mod config;
mod conn;
mod dispatch;
mod epoll;
mod h2;
mod io;
pub mod live;
pub mod pacing;
pub mod perf;
mod phases;
pub mod ramp;
pub mod request;
pub mod run;
pub mod schedule;
pub mod shard;
pub mod sim;
pub mod source;
mod tally;
pub mod targets;
mod template;
mod tls;
mod uring;
mod worker;

pub use clock::{Clock, MonoClock, SimClock};
pub use config::{
    Arrival, ClientIo, Config, ConfigError, Model, Protocol, RxTime, Stop, Target, parse_count,
    parse_duration, parse_rate,
};
pub use live::ErrorKinds;
pub use pacing::Coalesce;
pub use ramp::Ramp;
pub use run::{LoadError, Outcome, Progress, run, run_until};
pub use schedule::Schedule;
pub use shard::{JOB_COMPLETION_INDEX, Shard, Start};
pub use source::parse_sources;
pub use targets::{parse_targets, parse_targets_to};
pub use template::TemplateError;
