//! A worker's connection deadlines, for both backends: arming a connection's deadline on the
//! worker's wheel, and what an entry that comes due means (see [`crate::wheel`]: entries are
//! never moved or cancelled, only superseded by the connection's own `timer_at`).

use super::slab::Slab;
use super::worker::{Driver, Tracked};
use crate::config::Timeouts;
use crate::conn::TimeoutsMs;
use crate::metrics::TimeoutKind;
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
            Some((at, TimeoutKind::Body | TimeoutKind::BodyRate))
                if at <= now && live.release_low_water() =>
            {
                timers.sync(slab, e.token, &t);
            }
            Some((at, kind)) if at <= now => {
                live.conn().on_timeout(kind, ctx);
                w.run_expired(e.token, now);
            }
            Some(_) | None => timers.sync(slab, e.token, &t),
        }
    }
    w.parts().0.due = due;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conn::tests::{ctx_with, feed};
    use crate::conn::{Conn, Ctx, Phase};
    use crate::router::Router;
    use twelve_http::Limits;

    /// A connection whose socket has a receive low-water mark (`low` above 1: raised).
    struct Fake {
        conn: Conn,
        low: u32,
    }

    impl Tracked for Fake {
        fn conn(&mut self) -> &mut Conn {
            &mut self.conn
        }
        fn deadline(&self, t: &TimeoutsMs) -> Option<(u64, TimeoutKind)> {
            self.conn.deadline(t)
        }
        fn at_rest(&self) -> bool {
            true
        }
        fn release_low_water(&mut self) -> bool {
            let raised = self.low > 1;
            self.low = 1;
            raised
        }
    }

    struct W {
        timers: Timers,
        slab: Slab<Fake>,
        ctx: Ctx,
        ran: Vec<u64>,
    }

    impl Driver for W {
        type Live = Fake;
        fn parts(&mut self) -> (&mut Timers, &mut Slab<Fake>, &mut Ctx) {
            (&mut self.timers, &mut self.slab, &mut self.ctx)
        }
        fn run_expired(&mut self, token: u64, _now: u64) {
            self.ran.push(token);
        }
        fn close(&mut self, _token: u64) {}
    }

    /// A body timeout that finds the low-water mark raised lowers it and waits a tick (the
    /// bytes held back then wake the worker); with the mark at 1 it is a timeout (408).
    #[test]
    fn a_body_timeout_lowers_a_raised_mark_first() {
        for (low, timed_out_at_first) in [(512 * 1024, false), (1, true)] {
            let mut ctx = ctx_with(Limits::default(), Router::new());
            let mut conn = Conn::new(0);
            let head = b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n12345";
            feed(&mut conn, &mut ctx, head, 0);
            assert_eq!(conn.phase(), Phase::Body);
            let mut w = W {
                timers: Timers::new(0),
                slab: Slab::default(),
                ctx,
                ran: Vec::new(),
            };
            let token = w.slab.insert(Fake { conn, low });
            let t = w.ctx.timeouts;
            w.timers.sync(&mut w.slab, token, &t);
            let due = t.body;
            expire(&mut w, due);
            assert_eq!(w.ran.is_empty(), !timed_out_at_first, "mark {low}");
            if timed_out_at_first {
                continue;
            }
            assert_eq!(w.slab.get(token).unwrap().low, 1, "lowered");
            expire(&mut w, due + Timeouts::TICK.as_millis() as u64);
            assert_eq!(
                w.ran,
                [token],
                "a tick later, nothing was read: the timeout"
            );
        }
    }
}
