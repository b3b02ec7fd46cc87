//! A deterministic discrete-event run of the open model on a simulated clock: the real
//! [`Schedule`] hands slots to the connection free soonest, a modelled server answers after a
//! service time (plus any stall), and the real [`Recorder`] records each request. Tests use it
//! to check the coordinated-omission correction over millions of requests in milliseconds.
use crate::clock::{Clock, SimClock};
use crate::schedule::Schedule;
use twelve_report::Recorder;

/// What to simulate.
#[derive(Debug, Clone, Copy)]
pub struct SimSetup {
    /// Arrivals per second (uniform).
    pub rate_per_s: f64,
    /// Client connections.
    pub connections: usize,
    /// Requests in all.
    pub requests: u64,
    /// Server time per request, ns.
    pub service_ns: u64,
    /// A server stall `(start_ns, length_ns)`: nothing progresses inside it.
    pub stall: Option<(u64, u64)>,
}

/// Runs the simulation; returns the latency record.
pub fn simulate_open(setup: SimSetup) -> Recorder {
    let clock = SimClock::new();
    let schedule = Schedule::uniform(setup.rate_per_s, 0, setup.requests);
    let mut free_at = vec![0u64; setup.connections];
    let mut rec = Recorder::new();
    while let Some(due) = schedule.next_due_ns() {
        // The connection that frees up first takes the next due request.
        let (c, &free) = free_at
            .iter()
            .enumerate()
            .min_by_key(|&(_, t)| *t)
            .expect("at least one connection");
        clock.set_ns(due.max(free));
        let now = clock.now_ns();
        let mut intended = 0;
        let n = schedule.claim(now, 1, |_, t| intended = t);
        debug_assert_eq!(n, 1);
        let done = serve(now, setup.service_ns, setup.stall);
        rec.record(intended, now, done);
        free_at[c] = done;
    }
    rec
}

/// When a request sent at `sent` is answered by the modelled server.
fn serve(sent: u64, service_ns: u64, stall: Option<(u64, u64)>) -> u64 {
    let done = sent + service_ns;
    match stall {
        Some((s, len)) if sent < s + len && done > s => done + (s + len - sent.max(s)),
        _ => done,
    }
}
