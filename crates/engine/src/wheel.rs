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
//! The wheel does not tick: it knows the first tick that has an entry due ([`Wheel::timeout`]),
//! and an expiry before it costs a comparison. A worker holding a thousand idle keep-alive
//! connections so sleeps until the first of them may time out (at most one lap ahead), instead
//! of waking every tick to visit slots whose entries all belong to later laps.

/// One scheduled check: `token` had a deadline at `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) token: u64,
    pub(crate) at: u64,
}

/// The wheel. Time is in the owner's unit of the worker's monotonic clock: milliseconds for
/// connection deadlines, microseconds for the async runtime's timers.
#[derive(Debug)]
pub(crate) struct Wheel {
    slots: Vec<Vec<Entry>>,
    tick: u64,
    /// Whether an expiry also takes the entries due in the tick it falls inside (see
    /// [`Wheel::exact`]).
    exact: bool,
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
    pub(crate) fn new(now: u64, tick: u64) -> Self {
        let tick = tick.max(1);
        Self {
            slots: (0..SLOTS).map(|_| Vec::new()).collect(),
            tick,
            exact: false,
            next_tick: now / tick,
            first_tick: None,
            len: 0,
        }
    }

    /// A wheel whose entries fire at their own time, not at the end of their tick: an expiry
    /// inside a tick also takes that tick's entries already due. It costs a visit of the
    /// tick's slot on each expiry inside a tick that has an entry due, so it is for timers
    /// whose lateness is seen (a sleep a request waits on), with few entries per slot.
    pub(crate) fn exact(now: u64, tick: u64) -> Self {
        Self {
            exact: true,
            ..Self::new(now, tick)
        }
    }

    /// Entries in the wheel (live or stale).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Schedules a check of `token` at `at` (rounded up to the next tick).
    pub(crate) fn insert(&mut self, token: u64, at: u64) {
        let tick = at.div_ceil(self.tick).max(self.next_tick);
        self.slots[(tick % SLOTS as u64) as usize].push(Entry { token, at });
        self.len += 1;
        self.first_tick = Some(self.first_tick.map_or(tick, |t| t.min(tick)));
    }

    /// Time until the first tick that has an entry due, for the loop's wait; `None` when
    /// empty.
    pub(crate) fn timeout(&self, now: u64) -> Option<u64> {
        self.first_tick.map(|t| (t * self.tick).saturating_sub(now))
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
                let end = tick * self.tick;
                self.slots[(tick % SLOTS as u64) as usize]
                    .iter()
                    .any(|e| e.at <= end)
            })
            .or(Some(last))
    }

    /// The deadline of the first entry in tick order (possibly stale): the earliest within one
    /// lap from the next tick, else the earliest of all; `None` when empty. Walks the slots, so
    /// it is for a caller that keeps the answer until the next expiry.
    pub(crate) fn next_at(&self) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        let lap_end = (self.next_tick + SLOTS as u64) * self.tick;
        for tick in self.next_tick..self.next_tick + SLOTS as u64 {
            let slot = &self.slots[(tick % SLOTS as u64) as usize];
            let first = slot.iter().map(|e| e.at).filter(|&at| at < lap_end).min();
            if first.is_some() {
                return first;
            }
        }
        self.slots.iter().flatten().map(|e| e.at).min()
    }

    /// Moves every entry due by `now` into `due` (entries of later laps stay).
    pub(crate) fn expire(&mut self, now: u64, due: &mut Vec<Entry>) {
        let now_tick = now / self.tick;
        if self.first_tick.is_none_or(|t| t > now_tick) {
            // Nothing due in the ticks up to now: they are processed without a visit.
            self.next_tick = self.next_tick.max(now_tick + 1);
            if self.exact && self.first_tick == Some(self.next_tick) {
                self.expire_within(now, due);
            }
            return;
        }
        // At most one lap: after SLOTS ticks every slot has been seen.
        let last = now_tick.min(self.next_tick + SLOTS as u64 - 1);
        while self.next_tick <= last {
            let slot = &mut self.slots[(self.next_tick % SLOTS as u64) as usize];
            let before = slot.len();
            slot.retain(|e| {
                if e.at <= now {
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
        if self.exact && self.first_tick == Some(self.next_tick) {
            self.expire_within(now, due);
        }
    }

    /// Takes the entries of the tick `now` falls inside (`next_tick`) that are due by `now`;
    /// the tick itself stays unprocessed, for the rest of its entries.
    fn expire_within(&mut self, now: u64, due: &mut Vec<Entry>) {
        let slot = &mut self.slots[(self.next_tick % SLOTS as u64) as usize];
        let before = slot.len();
        slot.retain(|e| {
            if e.at <= now {
                due.push(*e);
                false
            } else {
                true
            }
        });
        if slot.len() != before {
            self.len -= before - slot.len();
            self.first_tick = self.scan_first();
        }
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
        assert_eq!(w.timeout(1_000), None);
        w.insert(1, 5_000);
        assert_eq!(w.timeout(1_010), Some(3_990));
        expire(&mut w, 1_010);
        assert_eq!(
            w.timeout(1_010),
            Some(3_990),
            "an early expiry changes nothing"
        );
        w.insert(2, 1_020);
        assert_eq!(w.timeout(1_010), Some(40), "rounded up to its tick");
        assert_eq!(expire(&mut w, 1_050), vec![2]);
        assert_eq!(w.timeout(1_050), Some(3_950));
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
        while let Some(t) = w.timeout(now) {
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
        assert_eq!(w.timeout(1_010), Some(40));
        assert_eq!(expire(&mut w, 1_049), Vec::<u64>::new());
        assert_eq!(expire(&mut w, 1_050), vec![2]);
        assert_eq!(w.timeout(1_050), Some(8_950));
    }

    #[test]
    fn next_at_is_the_first_deadline_in_tick_order() {
        let mut w = Wheel::new(0, 1);
        assert_eq!(w.next_at(), None);
        w.insert(1, 40);
        w.insert(2, 15);
        w.insert(3, 15 + SLOTS as u64 * 3);
        assert_eq!(w.next_at(), Some(15));
        assert_eq!(expire(&mut w, 15), vec![2]);
        assert_eq!(w.next_at(), Some(40));
        assert_eq!(expire(&mut w, 40), vec![1]);
        assert_eq!(w.next_at(), Some(15 + SLOTS as u64 * 3), "a later lap");
    }

    #[test]
    fn an_exact_wheel_fires_inside_a_tick_never_before_the_deadline() {
        // (now, tokens due) with entries at 15_300, 15_700, 16_000 and, a lap later,
        // 15_300 + 512_000, on 1_000-unit ticks.
        let mut w = Wheel::exact(10_000, 1_000);
        w.insert(1, 15_300);
        w.insert(2, 15_700);
        w.insert(3, 16_000);
        w.insert(4, 15_300 + 1_000 * SLOTS as u64);
        let steps: [(u64, &[u64]); 6] = [
            (15_299, &[]),
            (15_300, &[1]),
            (15_300, &[]),
            (15_999, &[2]),
            (16_000, &[3]),
            (15_300 + 1_000 * SLOTS as u64, &[4]),
        ];
        for (now, want) in steps {
            assert_eq!(expire(&mut w, now), want.to_vec(), "at {now}");
        }
        assert_eq!(w.len(), 0);
        // The plain wheel keeps the same entry to its tick's end.
        let mut w = Wheel::new(10_000, 1_000);
        w.insert(1, 15_300);
        assert_eq!(expire(&mut w, 15_300), Vec::<u64>::new());
        assert_eq!(expire(&mut w, 16_000), vec![1]);
    }

    #[test]
    fn an_exact_wheel_fires_a_past_insert_on_the_next_expiry() {
        let mut w = Wheel::exact(0, 1_000);
        w.insert(1, 10_000_000);
        expire(&mut w, 1_010);
        w.insert(2, 500);
        assert_eq!(expire(&mut w, 1_011), vec![2]);
        assert_eq!(w.next_at(), Some(10_000_000));
    }

    #[test]
    fn insert_in_the_past_fires_on_the_next_expire() {
        let mut w = Wheel::new(1_000, 50);
        expire(&mut w, 2_000);
        w.insert(3, 10);
        assert_eq!(expire(&mut w, 2_060), vec![3]);
    }
}
