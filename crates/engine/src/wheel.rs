//! A per-worker hashed timer wheel: O(1) insert, O(1) amortised expiry, no allocation once
//! its slots have grown to the worker's connection count.
//!
//! Connections do not cancel or move timers. Each keeps its own current deadline; the wheel
//! holds `(token, at)` entries, and when an entry's slot comes due the worker compares it with
//! the connection's deadline: gone or re-armed later → the entry is re-inserted or dropped.
//! So a keep-alive request, which pushes the deadline forward, costs one store instead of a
//! wheel operation (the lazy scheme of Varghese & Lauck's scheme 6 as used by Linux's
//! `timer_list` before hrtimers, and by libuv-style servers).
//!
//! The wheel does not tick: it knows the first tick that has an entry due ([`Wheel::timeout_ms`]),
//! and an expiry before it costs a comparison. A worker holding a thousand idle keep-alive
//! connections so sleeps until the first of them may time out (at most one lap ahead), instead
//! of waking every tick to visit slots whose entries all belong to later laps.

/// One scheduled check: the connection `token` had a deadline at `at_ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) token: u64,
    pub(crate) at_ms: u64,
}

/// The wheel. Time is in milliseconds of the worker's monotonic clock.
#[derive(Debug)]
pub(crate) struct Wheel {
    slots: Vec<Vec<Entry>>,
    tick_ms: u64,
    /// The next tick to process; every tick before it has been processed. INVARIANT: no
    /// entry comes due before it (an insert in the past is scheduled at it).
    next_tick: u64,
    /// The first tick with an entry due by its time (at most one lap ahead of `next_tick`:
    /// a wheel whose entries all belong to later laps looks again a lap on); `None` when empty.
    /// Inserts lower it; an expiry that reaches it finds the next one.
    first_tick: Option<u64>,
    len: usize,
}

const SLOTS: usize = 512;

impl Wheel {
    pub(crate) fn new(now_ms: u64, tick_ms: u64) -> Self {
        let tick_ms = tick_ms.max(1);
        Self {
            slots: (0..SLOTS).map(|_| Vec::new()).collect(),
            tick_ms,
            next_tick: now_ms / tick_ms,
            first_tick: None,
            len: 0,
        }
    }

    /// Entries in the wheel (live or stale).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Schedules a check of `token` at `at_ms` (rounded up to the next tick).
    pub(crate) fn insert(&mut self, token: u64, at_ms: u64) {
        let tick = at_ms.div_ceil(self.tick_ms).max(self.next_tick);
        self.slots[(tick % SLOTS as u64) as usize].push(Entry { token, at_ms });
        self.len += 1;
        self.first_tick = Some(self.first_tick.map_or(tick, |t| t.min(tick)));
    }

    /// Milliseconds until the first tick that has an entry due, for `epoll_wait`; `None` when
    /// empty.
    pub(crate) fn timeout_ms(&self, now_ms: u64) -> Option<u64> {
        self.first_tick
            .map(|t| (t * self.tick_ms).saturating_sub(now_ms))
    }

    /// The first tick from `next_tick` on, within one lap, whose slot holds an entry due by
    /// then; the lap's last tick when every entry belongs to a later lap; `None` when empty.
    fn scan_first(&self) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        let lap = self.next_tick..self.next_tick + SLOTS as u64;
        let last = lap.end - 1;
        lap.into_iter()
            .find(|&tick| {
                let end_ms = tick * self.tick_ms;
                self.slots[(tick % SLOTS as u64) as usize]
                    .iter()
                    .any(|e| e.at_ms <= end_ms)
            })
            .or(Some(last))
    }

    /// The deadline of the first entry in tick order (possibly stale): the earliest within one
    /// lap from the next tick, else the earliest of all; `None` when empty. Walks the slots, so
    /// it is for a caller that keeps the answer until the next expiry.
    pub(crate) fn next_at_ms(&self) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        let lap_end = (self.next_tick + SLOTS as u64) * self.tick_ms;
        for tick in self.next_tick..self.next_tick + SLOTS as u64 {
            let slot = &self.slots[(tick % SLOTS as u64) as usize];
            let first = slot
                .iter()
                .map(|e| e.at_ms)
                .filter(|&at| at < lap_end)
                .min();
            if first.is_some() {
                return first;
            }
        }
        self.slots.iter().flatten().map(|e| e.at_ms).min()
    }

    /// Moves every entry due by `now_ms` into `due` (entries of later laps stay).
    pub(crate) fn expire(&mut self, now_ms: u64, due: &mut Vec<Entry>) {
        let now_tick = now_ms / self.tick_ms;
        if self.first_tick.is_none_or(|t| t > now_tick) {
            // Nothing due in the ticks up to now: they are processed without a visit.
            self.next_tick = self.next_tick.max(now_tick + 1);
            return;
        }
        // At most one lap: after SLOTS ticks every slot has been seen.
        let last = now_tick.min(self.next_tick + SLOTS as u64 - 1);
        while self.next_tick <= last {
            let slot = &mut self.slots[(self.next_tick % SLOTS as u64) as usize];
            let before = slot.len();
            slot.retain(|e| {
                if e.at_ms <= now_ms {
                    due.push(*e);
                    false
                } else {
                    true
                }
            });
            self.len -= before - slot.len();
            self.next_tick += 1;
        }
        if self.next_tick <= now_tick {
            self.next_tick = now_tick + 1;
        }
        self.first_tick = self.scan_first();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expire(w: &mut Wheel, now: u64) -> Vec<u64> {
        let mut due = Vec::new();
        w.expire(now, &mut due);
        due.iter().map(|e| e.token).collect()
    }

    #[test]
    fn fires_at_or_after_the_deadline_never_before() {
        let mut w = Wheel::new(1_000, 50);
        w.insert(1, 1_120);
        assert_eq!(expire(&mut w, 1_100), Vec::<u64>::new());
        assert_eq!(expire(&mut w, 1_150), vec![1]);
        assert_eq!(w.len(), 0);
    }

    #[test]
    fn entries_beyond_one_lap_wait_for_their_lap() {
        let mut w = Wheel::new(0, 10);
        w.insert(7, 10 * SLOTS as u64 + 25);
        let mut now = 0;
        while now < 10 * SLOTS as u64 {
            now += 10;
            assert!(expire(&mut w, now).is_empty(), "fired early at {now}");
        }
        assert_eq!(expire(&mut w, 10 * SLOTS as u64 + 30), vec![7]);
    }

    #[test]
    fn a_long_sleep_processes_every_slot_once() {
        let mut w = Wheel::new(0, 10);
        for t in 0..100 {
            w.insert(t, t * 7 + 1);
        }
        let mut got = expire(&mut w, 1_000_000);
        got.sort_unstable();
        assert_eq!(got, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn timeout_points_at_the_first_tick_with_an_entry_due() {
        let mut w = Wheel::new(1_000, 50);
        assert_eq!(w.timeout_ms(1_000), None);
        w.insert(1, 5_000);
        assert_eq!(w.timeout_ms(1_010), Some(3_990));
        expire(&mut w, 1_010);
        assert_eq!(
            w.timeout_ms(1_010),
            Some(3_990),
            "an early expiry changes nothing"
        );
        w.insert(2, 1_020);
        assert_eq!(w.timeout_ms(1_010), Some(40), "rounded up to its tick");
        assert_eq!(expire(&mut w, 1_050), vec![2]);
        assert_eq!(w.timeout_ms(1_050), Some(3_950));
    }

    #[test]
    fn an_idle_wheel_wakes_once_a_lap_not_every_tick() {
        // A keep-alive deadline beyond one lap: once an earlier entry has fired, the worker
        // sleeps to the lap's last tick, then to the entry's own; never once per tick.
        let mut w = Wheel::new(0, 50);
        let far = 50 * (SLOTS as u64 + 200);
        w.insert(1, far);
        w.insert(2, 500);
        let mut now = 0;
        let mut wakes = Vec::new();
        while let Some(t) = w.timeout_ms(now) {
            now += t;
            wakes.push((now, expire(&mut w, now)));
        }
        let lap_end = 50 * (500 / 50 + SLOTS as u64);
        assert_eq!(
            wakes,
            vec![(500, vec![2]), (lap_end, vec![]), (far, vec![1])]
        );
    }

    #[test]
    fn a_past_insert_after_a_skipped_expiry_fires_at_the_next_tick() {
        let mut w = Wheel::new(0, 50);
        w.insert(1, 10_000);
        expire(&mut w, 1_010);
        w.insert(2, 500);
        assert_eq!(w.timeout_ms(1_010), Some(40));
        assert_eq!(expire(&mut w, 1_049), Vec::<u64>::new());
        assert_eq!(expire(&mut w, 1_050), vec![2]);
        assert_eq!(w.timeout_ms(1_050), Some(8_950));
    }

    #[test]
    fn next_at_is_the_first_deadline_in_tick_order() {
        let mut w = Wheel::new(0, 1);
        assert_eq!(w.next_at_ms(), None);
        w.insert(1, 40);
        w.insert(2, 15);
        w.insert(3, 15 + SLOTS as u64 * 3);
        assert_eq!(w.next_at_ms(), Some(15));
        assert_eq!(expire(&mut w, 15), vec![2]);
        assert_eq!(w.next_at_ms(), Some(40));
        assert_eq!(expire(&mut w, 40), vec![1]);
        assert_eq!(w.next_at_ms(), Some(15 + SLOTS as u64 * 3), "a later lap");
    }

    #[test]
    fn insert_in_the_past_fires_on_the_next_expire() {
        let mut w = Wheel::new(1_000, 50);
        expire(&mut w, 2_000);
        w.insert(3, 10);
        assert_eq!(expire(&mut w, 2_060), vec![3]);
    }
}
