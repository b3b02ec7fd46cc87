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

/// Arrival process of the open model.
#[derive(Debug)]
pub struct Schedule {
    start_ns: u64,
    limit: u64,
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

#[derive(Debug)]
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
            kind: Kind::Ramp {
                next: AtomicU64::new(0),
                segments,
            },
        }
    }

    /// When the next unclaimed slot is due, or `None` once all `limit` are claimed.
    pub fn next_due_ns(&self) -> Option<u64> {
        match &self.kind {
            Kind::Uniform { next, interval_ns } => {
                let k = next.load(Ordering::Relaxed);
                (k < self.limit).then(|| self.uniform_at(k, *interval_ns))
            }
            Kind::Ramp { next, segments } => {
                let k = next.load(Ordering::Relaxed);
                (k < self.limit).then(|| self.ramp_at(k, segments))
            }
            Kind::Poisson { state, .. } => {
                let p = state.lock().unwrap_or_else(|e| e.into_inner());
                (p.k < self.limit).then_some(p.t_ns as u64)
            }
        }
    }

    /// Slots claimed so far.
    pub fn claimed(&self) -> u64 {
        match &self.kind {
            Kind::Uniform { next, .. } | Kind::Ramp { next, .. } => {
                next.load(Ordering::Relaxed).min(self.limit)
            }
            Kind::Poisson { state, .. } => state.lock().unwrap_or_else(|e| e.into_inner()).k,
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
                // Slots 0..=due are due now.
                let due = ((now_ns - self.start_ns) as f64 / interval_ns).floor() as u64;
                self.claim_counted(next, due, max, take, |k| self.uniform_at(k, interval_ns))
            }
            Kind::Ramp { next, segments } => {
                if now_ns < self.start_ns {
                    return 0;
                }
                let t_s = (now_ns - self.start_ns) as f64 / 1e9;
                let due = crate::ramp::count_at(segments, t_s).floor() as u64;
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
                    n += 1;
                }
                n
            }
        }
    }

    /// Claims slots `next..=due` (at most `max`) with one compare-and-swap; `at` gives a
    /// slot's intended time.
    fn claim_counted(
        &self,
        next: &AtomicU64,
        due: u64,
        max: usize,
        mut take: impl FnMut(u64, u64),
        at: impl Fn(u64) -> u64,
    ) -> usize {
        let mut k = next.load(Ordering::Relaxed);
        loop {
            let end = (due + 1).min(self.limit).min(k + max as u64);
            if end <= k {
                return 0;
            }
            // Relaxed suffices: the counter is the only shared state, and each slot's time is
            // a pure function of its index.
            match next.compare_exchange_weak(k, end, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => {
                    for slot in k..end {
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

/// An exponential gap with the given mean (inverse-CDF of a uniform from splitmix64).
fn exp_gap(rng: &mut u64, mean_ns: f64) -> f64 {
    *rng = rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *rng;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
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
