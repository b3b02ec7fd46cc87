//! twelve-testkit: what the test suites of the workspace share, as a dev-dependency of every
//! crate that has tests that may not run everywhere or that start `twelve serve`.
//!
//! - [`skip_or_fail`]: a test that cannot run on this host says why, and fails instead under
//!   CI's `TWELVE_REQUIRE_ALL_TESTS=1`.
//! - [`listening_addr`], [`addr_in`]: the address a spawned `twelve serve` listens on;
//!   [`free_port`], [`wait_listening`] and [`Terminate`] for a peer server a test starts.
//! - [`Reap`]: kills, by PID, what a test started and could not wait for itself.
//! - [`h2`]: a raw-frame HTTP/2 client, to assert on the wire.
//! - [`rss_anon`]: a process's anonymous resident memory.
//! - [`scratch_dir`]: a per-process directory under the temp dir, swept once its process is gone.
//! - [`Postgres`]: a PostgreSQL server of the test's own (Debian's package, a temporary
//!   directory, a Unix socket).
#![forbid(unsafe_code)]

pub mod h2;
mod listening;
mod memory;
mod postgres;
mod reap;
mod scratch;
mod skip;

pub use listening::{Terminate, addr_in, free_port, listening_addr, wait_listening};
pub use memory::rss_anon;
pub use postgres::Postgres;
pub use reap::Reap;
pub use scratch::{remove_stale, scratch_dir};
pub use skip::skip_or_fail;
