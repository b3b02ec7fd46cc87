//! The time source: CLOCK_MONOTONIC in ns for real runs, a hand-driven clock for tests.
//!
//! Everything that schedules or measures takes a `Clock`, so the open-model schedule and the
//! latency recording can be tested over simulated hours in microseconds of real time.
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Nanoseconds since an origin shared by every worker of a run.
pub trait Clock: Send + Sync {
    /// Now, in ns since the origin.
    fn now_ns(&self) -> u64;
    /// CPU time of the calling thread, ns, where the clock can tell (`None`: the simulation,
    /// where the client's work is the time its modelled calls move the clock on).
    fn thread_cpu_ns(&self) -> Option<u64> {
        None
    }
}

/// CLOCK_MONOTONIC via `Instant` (vDSO, about 20 ns a read; never gettimeofday, which jumps
/// with NTP).
#[derive(Debug, Clone, Copy)]
pub struct MonoClock {
    origin: Instant,
}

impl MonoClock {
    /// A clock whose zero is now.
    pub fn new() -> Self {
        Self {
            origin: Instant::now(),
        }
    }

    /// The instant the clock counts from.
    pub fn origin(&self) -> Instant {
        self.origin
    }
}

impl Default for MonoClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for MonoClock {
    #[inline]
    fn now_ns(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }

    fn thread_cpu_ns(&self) -> Option<u64> {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        Some(t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64)
    }
}

/// A clock that only moves when told to; clones share the same time.
#[derive(Debug, Clone, Default)]
pub struct SimClock {
    ns: Arc<AtomicU64>,
}

impl SimClock {
    /// A clock at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the time (never backwards).
    pub fn set_ns(&self, ns: u64) {
        self.ns.fetch_max(ns, Ordering::Relaxed);
    }

    /// Moves the time forward.
    pub fn advance_ns(&self, ns: u64) {
        self.ns.fetch_add(ns, Ordering::Relaxed);
    }
}

impl Clock for SimClock {
    fn now_ns(&self) -> u64 {
        self.ns.load(Ordering::Relaxed)
    }
}
