//! The worker's async runtime (`crate::rt`) inside a backend's loop, for both backends: a
//! turn of its tasks when one was woken, a timer is due or a socket of its reported ready,
//! then each answer that came out of it written into its connection's slot
//! (`Conn::fill`) and the connection run so it goes out.

use super::worker::{Driver, Tracked};
use crate::metrics::TimeoutKind;
use crate::rt::{Done, Runtime};
use std::rc::Rc;

/// A worker's handle on its thread's runtime.
pub(crate) struct Later {
    pub(crate) rt: Rc<Runtime>,
    done: Vec<Done>,
}

impl Later {
    /// This thread's runtime, attached to the worker's wake-up eventfd (for wakers called on
    /// other threads).
    pub(crate) fn attach(wake: std::sync::Arc<std::os::fd::OwnedFd>, now_us: u64) -> Self {
        let rt = crate::rt::current();
        rt.attach(wake, now_us);
        Self {
            rt,
            done: Vec::new(),
        }
    }
}

/// Until when the loop may wait, in µs of its clock: its own limit (`timeout_ms` from `now`,
/// both in ms: connection deadlines and the gate's, which keep whole milliseconds) merged with
/// the runtime's (its timers count in µs, so a request waiting on one is answered at its time).
#[inline]
pub(crate) fn until_us(
    timeout_ms: Option<u64>,
    now: u64,
    later: Option<&Later>,
    now_us: u64,
) -> Option<u64> {
    let own = timeout_ms.map(|ms| now.saturating_add(ms).saturating_mul(1000));
    match (own, later.and_then(|l| l.rt.until_us(now_us))) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

impl Drop for Later {
    fn drop(&mut self) {
        self.rt.clear();
    }
}

/// Runs the runtime if it has work (`io`: its sockets were reported ready), then hands every
/// answer to its connection and runs that connection. `now` is the loop's clock in ms,
/// `now_us` the same reading in µs.
#[inline]
pub(crate) fn run<W: Driver>(w: &mut W, later: &mut Later, now: u64, now_us: u64, io: bool) {
    if !io && !later.rt.busy(now_us) && !later.rt.has_done() {
        return;
    }
    later.rt.turn(now_us, io);
    later.rt.take_done(&mut later.done);
    for d in later.done.drain(..) {
        let (_, slab, ctx) = w.parts();
        let Some(live) = slab.get(d.conn) else {
            continue;
        };
        if d.timed_out {
            ctx.metrics().timeout(TimeoutKind::Handler);
        }
        if live.conn().fill(d.task, d.reply, ctx) {
            w.run_expired(d.conn, now);
        }
    }
}
