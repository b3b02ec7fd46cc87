//! Timers of the runtime: [`sleep`], and the deadline of each request task
//! (`Config::handler_timeout`), on an exact [`Wheel`] of 1 ms ticks in microseconds: a timer
//! fires at its own microsecond (the loop's alarm is set to it), not at the end of its
//! millisecond, so a request that waits 15 ms is answered after 15 ms, not up to 16. Entries
//! are never moved: a dropped [`Sleep`] leaves a stale entry its generation-checked key no
//! longer matches.

use super::{Runtime, current, task};
use crate::backend::slab::Slab;
use crate::wheel::{Entry, Wheel};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// Wheel entries with this bit are request deadlines (the task's key below it); the others
/// are sleeps (a key of `sleeps`). Keys keep bit 63 clear (`backend::slab`).
const DEADLINE: u64 = 1 << 63;

/// The wheel's tick, in microseconds.
const TICK_US: u64 = 1_000;

/// The runtime's timers. Times are microseconds of the driver's clock.
pub(crate) struct Timers {
    wheel: Wheel,
    sleeps: Slab<Option<Waker>>,
    due: Vec<Entry>,
    /// The earliest time an entry may come due (a lower bound: it may be stale).
    next_us: Option<u64>,
}

impl Timers {
    pub(crate) fn new(now_us: u64) -> Self {
        Self {
            wheel: Wheel::exact(now_us, TICK_US),
            sleeps: Slab::default(),
            due: Vec::new(),
            next_us: None,
        }
    }

    fn insert(&mut self, token: u64, at_us: u64) {
        self.wheel.insert(token, at_us);
        self.next_us = Some(self.next_us.map_or(at_us, |n| n.min(at_us)));
    }

    /// Request task `key` gets a 503 at `at_us`.
    pub(crate) fn deadline(&mut self, key: u64, at_us: u64) {
        self.insert(key | DEADLINE, at_us);
    }

    /// Whether an entry may be due by `now_us`.
    #[inline]
    pub(crate) fn due(&self, now_us: u64) -> bool {
        self.next_us.is_some_and(|n| n <= now_us)
    }

    /// The time the next entry may be due; `None` when there is none.
    pub(crate) fn next_us(&self) -> Option<u64> {
        self.next_us
    }
}

/// Fires every entry due by `now_us`: a sleep's waker is woken, a request past its deadline
/// answered with 503 (counted by the worker when it writes the answer).
pub(crate) fn expire(rt: &Runtime, now_us: u64) {
    let mut wake = Vec::new();
    let mut deadlines = Vec::new();
    {
        let mut timers = rt.timers.borrow_mut();
        if !timers.due(now_us) {
            return;
        }
        let timers = &mut *timers;
        timers.wheel.expire(now_us, &mut timers.due);
        for e in timers.due.drain(..) {
            if e.token & DEADLINE != 0 {
                deadlines.push(e.token & !DEADLINE);
            } else if let Some(slot) = timers.sleeps.get(e.token)
                && let Some(w) = slot.take()
            {
                wake.push(w);
            }
        }
        timers.next_us = timers.wheel.next_at();
    }
    for key in deadlines {
        task::time_out(rt, key);
    }
    for w in wake {
        w.wake();
    }
}

/// A future that completes `duration` after its first poll (the time of the loop turn that
/// polled it), on the worker's timer wheel, to the microsecond.
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct Sleep {
    /// The wait, until the first poll fixes `at_us` from the turn's clock.
    us: u64,
    at_us: Option<u64>,
    key: Option<u64>,
}

/// Waits `duration` on the worker's own timers (no thread, no syscall of its own).
pub fn sleep(duration: Duration) -> Sleep {
    Sleep {
        us: u64::try_from(duration.as_micros()).unwrap_or(u64::MAX - 1),
        at_us: None,
        key: None,
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let rt = current();
        // One more microsecond: the turn's clock is the floor of the time it was read, so the
        // wait is never shorter than asked (HttpArena's delay may not answer early).
        let us = self.us.saturating_add(1);
        let at_us = *self.at_us.get_or_insert(rt.now_us().saturating_add(us));
        if rt.now_us() >= at_us {
            if let Some(key) = self.key.take() {
                rt.timers.borrow_mut().sleeps.remove(key);
            }
            return Poll::Ready(());
        }
        let mut timers = rt.timers.borrow_mut();
        match self.key.and_then(|k| timers.sleeps.get(k)) {
            Some(slot) => *slot = Some(cx.waker().clone()),
            None => {
                let key = timers.sleeps.insert(Some(cx.waker().clone()));
                timers.insert(key, at_us);
                self.key = Some(key);
            }
        }
        Poll::Pending
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some(key) = self.key
            && let Some(rt) = super::existing()
            && let Ok(mut timers) = rt.timers.try_borrow_mut()
        {
            timers.sleeps.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    #[test]
    fn a_sleep_ends_at_its_own_microsecond_never_before() {
        // (duration µs, the turn that first polls it, turns after it, the first turn it is
        // done); one runtime for all, so the times only grow
        let cases: [(u64, u64, &[u64], u64); 3] = [
            (15_000, 10_300, &[25_000, 25_300, 25_301, 26_000], 25_301),
            (15_000, 30_000, &[44_999, 45_001, 45_002], 45_001),
            (1, 7_000_123, &[7_000_124, 7_000_125], 7_000_125),
        ];
        for (us, first, turns, done_at) in cases {
            let rt = super::super::current();
            let done = Rc::new(Cell::new(false));
            let flag = Rc::clone(&done);
            super::super::spawn(async move {
                sleep(Duration::from_micros(us)).await;
                flag.set(true);
            });
            rt.turn(first, false);
            assert!(!done.get(), "{us} µs from {first}: done at once");
            for &t in turns {
                rt.turn(t, false);
                assert_eq!(
                    done.get(),
                    t >= done_at,
                    "{us} µs from {first}, turn at {t}"
                );
                if done.get() {
                    break;
                }
            }
            assert!(done.get(), "{us} µs from {first}: never done");
        }
    }
}
