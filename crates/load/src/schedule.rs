//! The open model's one global arrival schedule, and the closed model's request budget.
//!
//! wrk2 ties a schedule to each connection, so a connection that falls behind can never
//! catch up while its neighbours idle (docs/load-generator.md). Here there is one
//! schedule for the whole run: slot `k` is due at `t_k`, and any worker with an idle
//! connection claims due slots. Uniform arrivals compute `t_k = start + k / rate` from `k`
//! alone (never by adding intervals, so rounding cannot accumulate into drift) and are
//! claimed with one compare-and-swap on a shared counter. Poisson arrivals need the previous
//! arrival to draw the next gap, so they sit behind a mutex; at the rates an open-model test
//! runs (≤ a few 100 k/s) one uncontended lock per claim batch is noise.
use crate::ramp::Segment;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many slots [`Schedule::wake_ns`] looks ahead where it must draw or search for them:
/// with more within the slack, the wake-up comes at the last of these, still within it (and
/// one wake-up per 64 requests leaves nothing worth saving).
const WAKE_LOOKAHEAD: usize = 64;

/// Arrival process of the open model.
#[derive(Debug)]
pub struct Schedule {
    start_ns: u64,
    /// Global slots `0..limit` exist (`u64::MAX`: unbounded).
    limit: u64,
    /// This process's stripe of the global slots: `k % stride == phase` (1 and 0 unsharded;
    /// see `shard`).
    stride: u64,
    phase: u64,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Uniform {
        next: AtomicU64,
        interval_ns: f64,
    },
    Poisson {
        state: Mutex<Poisson>,
        mean_gap_ns: f64,
    },
    /// A rate ramp (`-R A:B`): slot `k` is due when the expected count reaches `k`.
    Ramp {
        next: AtomicU64,
        segments: Vec<Segment>,
    },
}

#[derive(Debug, Clone, Copy)]
struct Poisson {
    k: u64,
    t_ns: f64,
    rng: u64,
}

impl Schedule {
    /// Evenly spaced arrivals at `rate_per_s` from `start_ns`, at most `limit` of them.
    pub fn uniform(rate_per_s: f64, start_ns: u64, limit: u64) -> Self {
        Self {
            start_ns,
            limit,
            stride: 1,
            phase: 0,
            kind: Kind::Uniform {
                next: AtomicU64::new(0),
                interval_ns: 1e9 / rate_per_s,
            },
        }
    }

    /// Poisson arrivals (exponential gaps) at mean `rate_per_s`, seeded for reproducibility.
    pub fn poisson(rate_per_s: f64, start_ns: u64, limit: u64, seed: u64) -> Self {
        let mut p = Poisson {
            k: 0,
            t_ns: start_ns as f64,
            rng: seed | 1,
        };
        let mean_gap_ns = 1e9 / rate_per_s;
        p.t_ns += exp_gap(&mut p.rng, mean_gap_ns);
        Self {
            start_ns,
            limit,
            stride: 1,
            phase: 0,
            kind: Kind::Poisson {
                state: Mutex::new(p),
                mean_gap_ns,
            },
        }
    }

    /// Arrivals along a ramp's rate segments (see [`crate::ramp`]) from `start_ns`.
    pub(crate) fn ramp(segments: Vec<Segment>, start_ns: u64, limit: u64) -> Self {
        Self {
            start_ns,
            limit,
            stride: 1,
            phase: 0,
            kind: Kind::Ramp {
                next: AtomicU64::new(0),
                segments,
            },
        }
    }

    /// Keeps only `shard`'s stripe of the global slots (slots `i, i+N, i+2N, …`); the
    /// slot numbers and times passed to [`Self::claim`] stay the global ones. Call before the
    /// first claim.
    pub fn striped(mut self, shard: crate::Shard) -> Self {
        self.stride = u64::from(shard.count);
        self.phase = u64::from(shard.index);
        if let Kind::Poisson { state, mean_gap_ns } = &mut self.kind {
            let p = state.get_mut().unwrap_or_else(|e| e.into_inner());
            skip_to_stripe(p, self.stride, self.phase, *mean_gap_ns);
        }
        self
    }

    /// This process's slots in all: the stripe's share of `limit`.
    fn own_limit(&self) -> u64 {
        if self.limit <= self.phase {
            0
        } else {
            (self.limit - self.phase).div_ceil(self.stride)
        }
    }

    /// The global slot of this process's `m`-th slot.
    fn global(&self, m: u64) -> u64 {
        m * self.stride + self.phase
    }

    /// When the next unclaimed slot is due, or `None` once all `limit` are claimed.
    pub fn next_due_ns(&self) -> Option<u64> {
        match &self.kind {
            Kind::Uniform { next, interval_ns } => {
                let m = next.load(Ordering::Relaxed);
                (m < self.own_limit()).then(|| self.uniform_at(self.global(m), *interval_ns))
            }
            Kind::Ramp { next, segments } => {
                let m = next.load(Ordering::Relaxed);
                (m < self.own_limit()).then(|| self.ramp_at(self.global(m), segments))
            }
            Kind::Poisson { state, .. } => {
                let p = state.lock().unwrap_or_else(|e| e.into_inner());
                (p.k < self.limit).then_some(p.t_ns as u64)
            }
        }
    }

    /// When a worker should wake to serve the next unclaimed slots within `slack_ns` of the
    /// first: the due time of the last of them, so that the first leaves at most the slack
    /// late and the last on time (a lone slot, on time). `None` once all are claimed.
    /// Uniform arrivals compute it; a ramp's and Poisson's are looked up at most
    /// 64 slots ahead (`WAKE_LOOKAHEAD`).
    pub fn wake_ns(&self, slack_ns: u64) -> Option<u64> {
        let first = self.next_due_ns()?;
        if slack_ns == 0 {
            return Some(first);
        }
        let by = first.saturating_add(slack_ns);
        match &self.kind {
            Kind::Uniform { next, interval_ns } => {
                let m = next.load(Ordering::Relaxed);
                // This stripe's slots are `stride` intervals apart.
                let step = *interval_ns * self.stride as f64;
                let more = (slack_ns as f64 / step).floor() as u64;
                let last = (m + more).min(self.own_limit().saturating_sub(1)).max(m);
                Some(self.uniform_at(self.global(last), *interval_ns).min(by))
            }
            Kind::Ramp { next, segments } => {
                let mut m = next.load(Ordering::Relaxed);
                let mut at = first;
                for _ in 0..WAKE_LOOKAHEAD {
                    if m + 1 >= self.own_limit() {
                        break;
                    }
                    let t = self.ramp_at(self.global(m + 1), segments);
                    if t > by {
                        break;
                    }
                    (m, at) = (m + 1, t);
                }
                Some(at)
            }
            Kind::Poisson { state, mean_gap_ns } => {
                // The draws on a copy: the slots stay unclaimed.
                let mut p = *state.lock().unwrap_or_else(|e| e.into_inner());
                let mut at = first;
                for _ in 0..WAKE_LOOKAHEAD {
                    p.k += 1;
                    p.t_ns += exp_gap(&mut p.rng, *mean_gap_ns);
                    skip_to_stripe(&mut p, self.stride, self.phase, *mean_gap_ns);
                    if p.k >= self.limit || p.t_ns as u64 > by {
                        break;
                    }
                    at = p.t_ns as u64;
                }
                Some(at)
            }
        }
    }

    /// Slots claimed so far (this process's).
    pub fn claimed(&self) -> u64 {
        match &self.kind {
            Kind::Uniform { next, .. } | Kind::Ramp { next, .. } => {
                next.load(Ordering::Relaxed).min(self.own_limit())
            }
            Kind::Poisson { state, .. } => {
                // `k` is the next slot of this stripe: the stripe's slots below it are taken.
                let k = state.lock().unwrap_or_else(|e| e.into_inner()).k;
                let below = k.min(self.limit);
                if below <= self.phase {
                    0
                } else {
                    (below - self.phase).div_ceil(self.stride)
                }
            }
        }
    }

    /// Claims up to `max` slots due at or before `now_ns`, calling `take(slot, intended_ns)`
    /// for each, in order. Returns how many were claimed.
    pub fn claim(&self, now_ns: u64, max: usize, mut take: impl FnMut(u64, u64)) -> usize {
        if max == 0 {
            return 0;
        }
        match &self.kind {
            Kind::Uniform { next, interval_ns } => {
                let interval_ns = *interval_ns;
                if now_ns < self.start_ns {
                    return 0;
                }
                // Global slots 0..=due are due now.
                let due = ((now_ns - self.start_ns) as f64 / interval_ns).floor() as u64;
                self.claim_counted(next, due, max, take, |k| self.uniform_at(k, interval_ns))
            }
            Kind::Ramp { next, segments } => {
                if now_ns < self.start_ns {
                    return 0;
                }
                let t_s = (now_ns - self.start_ns) as f64 / 1e9;
                let mut due = crate::ramp::count_at(segments, t_s).floor() as u64;
                // The count and its inverse round apart by a nanosecond: a slot is due when
                // `ramp_at` (what `next_due_ns` tells) says so.
                while self.ramp_at(due + 1, segments) <= now_ns {
                    due += 1;
                }
                self.claim_counted(next, due, max, take, |k| self.ramp_at(k, segments))
            }
            Kind::Poisson { state, mean_gap_ns } => {
                let mut p = state.lock().unwrap_or_else(|e| e.into_inner());
                let mut n = 0;
                while n < max && p.k < self.limit && p.t_ns as u64 <= now_ns {
                    take(p.k, p.t_ns as u64);
                    p.k += 1;
                    let gap = exp_gap(&mut p.rng, *mean_gap_ns);
                    p.t_ns += gap;
                    skip_to_stripe(&mut p, self.stride, self.phase, *mean_gap_ns);
                    n += 1;
                }
                n
            }
        }
    }

    /// Claims this stripe's slots among global slots `..=due` (at most `max`, from `next`, the
    /// stripe's own counter) with one compare-and-swap; `at` gives a global slot's intended
    /// time. Unsharded, the stripe is every slot.
    fn claim_counted(
        &self,
        next: &AtomicU64,
        due: u64,
        max: usize,
        mut take: impl FnMut(u64, u64),
        at: impl Fn(u64) -> u64,
    ) -> usize {
        if due < self.phase {
            return 0;
        }
        let own_due = (due - self.phase) / self.stride;
        let mut k = next.load(Ordering::Relaxed);
        loop {
            let end = (own_due + 1).min(self.own_limit()).min(k + max as u64);
            if end <= k {
                return 0;
            }
            // Relaxed suffices: the counter is the only shared state, and each slot's time is
            // a pure function of its index.
            match next.compare_exchange_weak(k, end, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => {
                    for m in k..end {
                        let slot = self.global(m);
                        take(slot, at(slot));
                    }
                    return (end - k) as usize;
                }
                Err(actual) => k = actual,
            }
        }
    }

    fn ramp_at(&self, k: u64, segments: &[Segment]) -> u64 {
        self.start_ns + (crate::ramp::time_of(segments, k as f64) * 1e9) as u64
    }

    fn uniform_at(&self, k: u64, interval_ns: f64) -> u64 {
        self.start_ns + (k as f64 * interval_ns) as u64
    }
}

/// Draws (and drops) the arrivals of other shards' stripes, so `p` sits on this stripe's
/// next slot: every shard draws the whole sequence, so the stripes' union is the single run's.
fn skip_to_stripe(p: &mut Poisson, stride: u64, phase: u64, mean_gap_ns: f64) {
    while p.k % stride != phase {
        p.k += 1;
        p.t_ns += exp_gap(&mut p.rng, mean_gap_ns);
    }
}

/// The next draw of a splitmix64 stream (Steele, Lea and Flood, 2014): the Poisson gaps' and
/// the `{rand}` templates' source. Statistical quality is all a load pattern needs, so a
/// seedable five-line generator beats a dependency.
#[inline]
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// An exponential gap with the given mean (inverse-CDF of a uniform from splitmix64).
fn exp_gap(rng: &mut u64, mean_ns: f64) -> f64 {
    let z = splitmix64(rng);
    // 53 random bits in (0, 1].
    let u = ((z >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
    -u.ln() * mean_ns
}

/// The closed model's request budget for `-n`: workers claim batches from one counter.
#[derive(Debug)]
pub struct Budget {
    left: AtomicU64,
}

impl Budget {
    /// `n` requests to hand out (`u64::MAX`: unlimited).
    pub fn new(n: u64) -> Self {
        Self {
            left: AtomicU64::new(n),
        }
    }

    /// Takes up to `want` requests; returns how many were granted.
    pub fn take(&self, want: u64) -> u64 {
        let mut left = self.left.load(Ordering::Relaxed);
        loop {
            if left == u64::MAX {
                return want;
            }
            let n = want.min(left);
            if n == 0 {
                return 0;
            }
            match self.left.compare_exchange_weak(
                left,
                left - n,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return n,
                Err(actual) => left = actual,
            }
        }
    }

    /// Whether every request has been handed out.
    pub fn exhausted(&self) -> bool {
        self.left.load(Ordering::Relaxed) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_never_drifts_over_a_million_requests() {
        // 1,000,000 requests at 100,000/s, claimed by a clock that jumps by uneven steps.
        let rate = 100_000.0;
        let s = Schedule::uniform(rate, 5_000, 1_000_000);
        let mut now = 5_000u64;
        let mut expect = 0u64;
        let mut step = 1u64;
        while s.next_due_ns().is_some() {
            now += step;
            step = step * 7 % 23_456 + 1;
            s.claim(now, 7, |slot, t| {
                assert_eq!(slot, expect);
                // Slot k is due at exactly start + k * 10 µs, whatever the claim pattern.
                assert_eq!(t, 5_000 + slot * 10_000);
                assert!(t <= now);
                expect += 1;
            });
        }
        assert_eq!(expect, 1_000_000);
        // The last slot is due 9,999,990 µs after the start: no accumulated drift.
        assert!(now >= 5_000 + 999_999 * 10_000);
    }

    #[test]
    fn uniform_claims_nothing_before_due() {
        let s = Schedule::uniform(1000.0, 1_000_000, 10);
        assert_eq!(s.claim(999_999, 10, |_, _| {}), 0);
        assert_eq!(s.claim(1_000_000, 10, |_, _| {}), 1);
        assert_eq!(s.claim(3_500_000, 10, |_, _| {}), 2);
        assert_eq!(s.next_due_ns(), Some(4_000_000));
    }

    #[test]
    fn poisson_mean_rate_holds() {
        let s = Schedule::poisson(10_000.0, 0, 1_000_000, 42);
        let mut last = 0;
        let n = s.claim(u64::MAX / 2, usize::MAX, |_, t| {
            assert!(t >= last);
            last = t;
        });
        assert_eq!(n, 1_000_000);
        // 10^6 arrivals at 10^4/s take 100 s; the sd of the sum is 0.1% of that.
        let secs = last as f64 / 1e9;
        assert!((secs - 100.0).abs() < 0.5, "{secs}");
    }

    /// Every slot of a schedule, claimed by a clock that jumps by uneven steps.
    fn drain(s: &Schedule) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let (mut now, mut step) = (0u64, 1u64);
        while s.next_due_ns().is_some() {
            now += step;
            step = step * 7 % 23_456 + 1;
            s.claim(now, 5, |slot, t| out.push((slot, t)));
        }
        out
    }

    macro_rules! stripes {
        ($name:ident, $n:expr, $make:expr) => {
            #[test]
            fn $name() {
                let make = $make;
                let single = drain(&make());
                let mut union: Vec<(u64, u64)> = (0..$n)
                    .flat_map(|i| {
                        let shard = crate::Shard::new(i, $n).unwrap();
                        let s = make().striped(shard);
                        let own = drain(&s);
                        assert_eq!(s.claimed(), own.len() as u64);
                        assert!(own.iter().all(|&(k, _)| shard.owns_slot(k)));
                        own
                    })
                    .collect();
                union.sort_unstable();
                // The same slots at the same instants, to the nanosecond: one big client's
                // schedule, split.
                assert_eq!(union, single);
            }
        };
    }

    stripes!(ramp_stripes_of_three_are_the_single_schedule, 3, || {
        let ramp = crate::Ramp::parse("10000:40000").unwrap().unwrap();
        let segments = ramp.segments(
            std::time::Duration::ZERO,
            std::time::Duration::from_millis(200),
        );
        Schedule::ramp(segments, 1_000, 4_001)
    });

    stripes!(uniform_stripes_of_two_are_the_single_schedule, 2, || {
        Schedule::uniform(30_000.0, 1_000, 10_001)
    });
    stripes!(uniform_stripes_of_three_are_the_single_schedule, 3, || {
        Schedule::uniform(7_777.0, 0, 10_000)
    });
    stripes!(uniform_stripes_of_seven_are_the_single_schedule, 7, || {
        Schedule::uniform(100_000.0, 5, 99_999)
    });
    stripes!(more_stripes_than_slots, 5, || Schedule::uniform(
        1_000.0, 0, 3
    ));
    stripes!(poisson_stripes_of_four_are_the_single_schedule, 4, || {
        Schedule::poisson(20_000.0, 0, 10_003, 42)
    });
    stripes!(poisson_stripes_of_three_are_the_single_schedule, 3, || {
        Schedule::poisson(5_000.0, 77, 999, 7)
    });

    #[test]
    fn a_stripe_waits_for_its_phase() {
        // 1000/s: global slot k is due at k ms; shard 1 of 4 owns slots 1, 5, 9, …
        let s = Schedule::uniform(1000.0, 0, 100).striped(crate::Shard::new(1, 4).unwrap());
        assert_eq!(s.next_due_ns(), Some(1_000_000));
        assert_eq!(s.claim(999_999, 10, |_, _| {}), 0);
        let mut got = Vec::new();
        assert_eq!(s.claim(9_000_000, 10, |k, t| got.push((k, t))), 3);
        assert_eq!(got, [(1, 1_000_000), (5, 5_000_000), (9, 9_000_000)]);
    }

    /// The wake-up for a slack: the due time of the last unclaimed slot within the slack of
    /// the next (uniform at 40k/s: a slot every 25 µs), never past the last slot.
    #[test]
    fn uniform_wakes_at_the_last_slot_within_the_slack() {
        const US: u64 = 1_000;
        for (slack, claimed, limit, want) in [
            (0, 0, 100, 0),
            (24 * US, 0, 100, 0),
            (25 * US, 0, 100, 25 * US),
            (60 * US, 0, 100, 50 * US),
            (60 * US, 3, 100, 125 * US),
            (1_000 * US, 97, 100, 99 * 25 * US),
        ] {
            let s = Schedule::uniform(40_000.0, 0, limit);
            s.claim(claimed * 25 * US, claimed as usize, |_, _| {});
            assert_eq!(
                s.wake_ns(slack),
                Some(want),
                "slack {slack}, {claimed} claimed"
            );
        }
        let done = Schedule::uniform(40_000.0, 0, 1);
        done.claim(0, 1, |_, _| {});
        assert_eq!(done.wake_ns(US), None);
        // A stripe's slots are `stride` intervals apart: shard 1 of 2 owns 1, 3, 5, …
        let s = Schedule::uniform(40_000.0, 0, 100).striped(crate::Shard::new(1, 2).unwrap());
        assert_eq!(s.wake_ns(49 * US), Some(25 * US));
        assert_eq!(s.wake_ns(50 * US), Some(75 * US));
    }

    /// Poisson and ramp schedules wake at one of their own slots within the slack of the
    /// next, the last one there: claiming at the wake-up takes every slot due within it.
    #[test]
    fn drawn_schedules_wake_at_their_last_slot_within_the_slack() {
        const US: u64 = 1_000;
        let ramp = crate::Ramp::parse("10000:40000").unwrap().unwrap();
        let segments = ramp.segments(
            std::time::Duration::ZERO,
            std::time::Duration::from_millis(200),
        );
        for (name, s) in [
            ("poisson", Schedule::poisson(40_000.0, 0, 10_000, 42)),
            ("ramp", Schedule::ramp(segments, 0, 10_000)),
        ] {
            for _ in 0..200 {
                let first = s.next_due_ns().unwrap();
                let wake = s.wake_ns(60 * US).unwrap();
                assert!(
                    (first..=first + 60 * US).contains(&wake),
                    "{name}: {first} {wake}"
                );
                let mut last = 0;
                s.claim(wake, 1_000, |_, t| last = t);
                assert_eq!(last, wake, "{name}: the wake-up is a slot's due time");
                // The next slot lies beyond the slack.
                assert!(s.next_due_ns().unwrap() > first + 60 * US, "{name}");
            }
        }
    }

    #[test]
    fn budget_hands_out_exactly_n() {
        let b = Budget::new(10);
        assert_eq!(b.take(4), 4);
        assert_eq!(b.take(4), 4);
        assert_eq!(b.take(4), 2);
        assert_eq!(b.take(4), 0);
        assert!(b.exhausted());
    }
}
