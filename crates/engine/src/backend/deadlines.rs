//! A worker's connection deadlines, for both backends: arming a connection's deadline on the
//! worker's wheel, and what an entry that comes due means (see [`crate::wheel`]: entries are
//! never moved or cancelled, only superseded by the connection's own `timer_at`).

use super::slab::Slab;
use super::worker::{Driver, Tracked};
use crate::config::Timeouts;
use crate::conn::TimeoutsMs;
use crate::wheel::{Entry, Wheel};

/// The wheel, and the buffer its due entries are taken into.
pub(crate) struct Timers {
    wheel: Wheel,
    due: Vec<Entry>,
}

impl Timers {
    /// Timers from `now_ms` on, ticking at [`Timeouts::TICK`].
    pub(crate) fn new(now_ms: u64) -> Self {
        let tick = Timeouts::TICK.as_millis() as u64;
        Self {
            wheel: Wheel::new(now_ms, tick),
            due: Vec::new(),
        }
    }

    /// How long until the next entry comes due; `None`: the wheel is empty.
    pub(crate) fn timeout_ms(&self, now: u64) -> Option<u64> {
        self.wheel.timeout_ms(now)
    }

    /// Puts the connection's deadline on the wheel unless an entry at or before it exists.
    #[inline]
    pub(crate) fn sync<T: Tracked>(&mut self, slab: &mut Slab<T>, token: u64, t: &TimeoutsMs) {
        let Some(live) = slab.get(token) else {
            return;
        };
        let at = live.deadline(t).map(|(at, _)| at);
        let conn = live.conn();
        if let Some(at) = at
            && (conn.timer_at == 0 || at < conn.timer_at)
        {
            conn.timer_at = at;
            self.wheel.insert(token, at);
        }
    }
}

/// Handles every entry due at `now`: a connection past its deadline is told so and run; one
/// whose deadline moved later gets a new entry; a superseded entry is dropped.
pub(crate) fn expire<W: Driver>(w: &mut W, now: u64) {
    let timers = w.parts().0;
    let mut due = std::mem::take(&mut timers.due);
    timers.wheel.expire(now, &mut due);
    for e in due.drain(..) {
        let (timers, slab, ctx) = w.parts();
        let t = ctx.timeouts;
        let Some(live) = slab.get(e.token) else {
            continue;
        };
        if live.conn().timer_at != e.at_ms {
            continue; // superseded by an earlier entry
        }
        live.conn().timer_at = 0;
        match live.deadline(&t) {
            Some((at, kind)) if at <= now => {
                live.conn().on_timeout(kind, ctx);
                w.run_expired(e.token, now);
            }
            Some(_) | None => timers.sync(slab, e.token, &t),
        }
    }
    w.parts().0.due = due;
}
