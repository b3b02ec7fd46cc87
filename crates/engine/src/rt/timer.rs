//! Timers of the runtime: [`sleep`], and the deadline of each request task
//! (`Config::handler_timeout`), on a [`Wheel`] of 1 ms ticks. Entries are never moved: a
//! dropped [`Sleep`] leaves a stale entry its generation-checked key no longer matches.

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

/// The runtime's timers.
pub(crate) struct Timers {
    wheel: Wheel,
    sleeps: Slab<Option<Waker>>,
    due: Vec<Entry>,
    /// The earliest time an entry may come due (a lower bound: it may be stale).
    next_ms: Option<u64>,
}

impl Timers {
    pub(crate) fn new(now_ms: u64) -> Self {
        Self {
            wheel: Wheel::new(now_ms, 1),
            sleeps: Slab::default(),
            due: Vec::new(),
            next_ms: None,
        }
    }

    fn insert(&mut self, token: u64, at_ms: u64) {
        self.wheel.insert(token, at_ms);
        self.next_ms = Some(self.next_ms.map_or(at_ms, |n| n.min(at_ms)));
    }

    /// Request task `key` gets a 503 at `at_ms`.
    pub(crate) fn deadline(&mut self, key: u64, at_ms: u64) {
        self.insert(key | DEADLINE, at_ms);
    }

    /// Whether an entry may be due by `now_ms`.
    #[inline]
    pub(crate) fn due(&self, now_ms: u64) -> bool {
        self.next_ms.is_some_and(|n| n <= now_ms)
    }

    /// Milliseconds until the next entry may be due; `None` when there is none.
    pub(crate) fn timeout_ms(&self, now_ms: u64) -> Option<u64> {
        self.next_ms.map(|n| n.saturating_sub(now_ms))
    }
}

/// Fires every entry due by `now_ms`: a sleep's waker is woken, a request past its deadline
/// answered with 503 (counted by the worker when it writes the answer).
pub(crate) fn expire(rt: &Runtime, now_ms: u64) {
    let mut wake = Vec::new();
    let mut deadlines = Vec::new();
    {
        let mut timers = rt.timers.borrow_mut();
        if !timers.due(now_ms) {
            return;
        }
        let timers = &mut *timers;
        timers.wheel.expire(now_ms, &mut timers.due);
        for e in timers.due.drain(..) {
            if e.token & DEADLINE != 0 {
                deadlines.push(e.token & !DEADLINE);
            } else if let Some(slot) = timers.sleeps.get(e.token)
                && let Some(w) = slot.take()
            {
                wake.push(w);
            }
        }
        timers.next_ms = timers.wheel.next_at_ms();
    }
    for key in deadlines {
        task::time_out(rt, key);
    }
    for w in wake {
        w.wake();
    }
}

/// A future that completes `duration` after its first poll (the time of the loop turn that
/// polled it), on the worker's timer wheel, to the millisecond.
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct Sleep {
    /// The wait, until the first poll fixes `at_ms` from the turn's clock.
    ms: u64,
    at_ms: Option<u64>,
    key: Option<u64>,
}

/// Waits `duration` on the worker's own timers (no thread, no syscall of its own).
pub fn sleep(duration: Duration) -> Sleep {
    Sleep {
        ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX - 1),
        at_ms: None,
        key: None,
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let rt = current();
        // One more millisecond: the turn's clock is the floor of the time it was read, so the
        // wait is never shorter than asked (HttpArena's delay may not answer early).
        let ms = self.ms.saturating_add(1);
        let at_ms = *self.at_ms.get_or_insert(rt.now_ms().saturating_add(ms));
        if rt.now_ms() >= at_ms {
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
                timers.insert(key, at_ms);
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
