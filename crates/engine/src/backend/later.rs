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
    pub(crate) fn attach(wake: std::sync::Arc<std::os::fd::OwnedFd>, now_ms: u64) -> Self {
        let rt = crate::rt::current();
        rt.attach(wake, now_ms);
        Self {
            rt,
            done: Vec::new(),
        }
    }

    /// How long the loop may wait for the runtime's sake (merged with the loop's own limit).
    #[inline]
    pub(crate) fn timeout_ms(&self, other: Option<u64>, now_ms: u64) -> Option<u64> {
        match (other, self.rt.timeout_ms(now_ms)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

impl Drop for Later {
    fn drop(&mut self) {
        self.rt.clear();
    }
}

/// Runs the runtime if it has work (`io`: its sockets were reported ready), then hands every
/// answer to its connection and runs that connection.
#[inline]
pub(crate) fn run<W: Driver>(w: &mut W, later: &mut Later, now: u64, io: bool) {
    if !io && !later.rt.busy(now) && !later.rt.has_done() {
        return;
    }
    later.rt.turn(now, io);
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
