//! What the live view reads while a run goes on, published by each worker at housekeeping
//! (every 10 ms) and summed by the watching thread: a coarse latency histogram (four buckets
//! per power of two, so a percentile read from it is within about 12%) and failures by kind,
//! warm-up included. The measuring path pays one increment per response for it; the exact
//! histograms the report reads are untouched.
use std::sync::atomic::{AtomicU64, Ordering};

/// Buckets of the coarse histogram: four per power of two of nanoseconds, up to 2^64.
pub(crate) const BUCKETS: usize = 64 * 4;

/// The bucket of a latency in ns.
#[inline]
pub(crate) fn bucket(ns: u64) -> usize {
    let v = ns.max(1);
    let e = 63 - v.leading_zeros() as usize;
    let sub = if e >= 2 {
        ((v >> (e - 2)) & 3) as usize
    } else {
        0
    };
    e * 4 + sub
}

/// The middle of a bucket, ns.
fn bucket_mid_ns(i: usize) -> u64 {
    let (e, sub) = (i / 4, (i % 4) as u64);
    if e < 2 {
        return 1 << e;
    }
    let lo = (4 + sub) << (e - 2);
    lo + (1 << (e - 2)) / 2
}

/// Failures by kind, for the live line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ErrorKinds {
    /// Connects refused, timed out or failed otherwise.
    pub connect: u64,
    /// Resets and failed sends.
    pub io: u64,
    /// Requests that timed out.
    pub timeout: u64,
    /// Unparsable responses and bodies cut short.
    pub parse: u64,
    /// Responses whose status is not 2xx or 3xx.
    pub status: u64,
}

impl ErrorKinds {
    /// `connect 3, timeout 1` for the kinds that occurred; empty when none did.
    pub fn describe(&self) -> String {
        [
            ("connect", self.connect),
            ("read/write", self.io),
            ("timeout", self.timeout),
            ("parse", self.parse),
            ("status", self.status),
        ]
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
    }

    /// All kinds summed.
    pub fn total(&self) -> u64 {
        self.connect + self.io + self.timeout + self.parse + self.status
    }
}

/// A worker's published live figures (read by the watching thread).
#[derive(Debug)]
pub(crate) struct LiveSlot {
    hist: Box<[AtomicU64]>,
    kinds: [AtomicU64; 5],
}

impl Default for LiveSlot {
    fn default() -> Self {
        Self {
            hist: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            kinds: Default::default(),
        }
    }
}

impl LiveSlot {
    /// Publishes a worker's counts (Relaxed: a live view may lag one housekeeping turn).
    pub(crate) fn publish(&self, hist: &[u64; BUCKETS], kinds: &ErrorKinds) {
        for (a, n) in self.hist.iter().zip(hist) {
            if a.load(Ordering::Relaxed) != *n {
                a.store(*n, Ordering::Relaxed);
            }
        }
        let k = [
            kinds.connect,
            kinds.io,
            kinds.timeout,
            kinds.parse,
            kinds.status,
        ];
        for (a, n) in self.kinds.iter().zip(k) {
            a.store(n, Ordering::Relaxed);
        }
    }
}

/// The sum over every worker's slot.
#[derive(Debug, Clone)]
pub(crate) struct LiveSum {
    pub hist: Vec<u64>,
    pub kinds: ErrorKinds,
}

impl LiveSum {
    pub(crate) fn of<'a>(slots: impl Iterator<Item = &'a LiveSlot>) -> Self {
        let mut hist = vec![0u64; BUCKETS];
        let mut k = [0u64; 5];
        for s in slots {
            for (h, a) in hist.iter_mut().zip(s.hist.iter()) {
                *h += a.load(Ordering::Relaxed);
            }
            for (x, a) in k.iter_mut().zip(&s.kinds) {
                *x += a.load(Ordering::Relaxed);
            }
        }
        let kinds = ErrorKinds {
            connect: k[0],
            io: k[1],
            timeout: k[2],
            parse: k[3],
            status: k[4],
        };
        Self { hist, kinds }
    }

    /// The latency (ns) at quantile `q` of the responses counted since `base`; `None` when
    /// there were none.
    pub(crate) fn quantile_since(&self, base: Option<&LiveSum>, q: f64) -> Option<u64> {
        let counts: Vec<u64> = match base {
            Some(b) => self
                .hist
                .iter()
                .zip(&b.hist)
                .map(|(n, m)| n.saturating_sub(*m))
                .collect(),
            None => self.hist.clone(),
        };
        let total: u64 = counts.iter().sum();
        if total == 0 {
            return None;
        }
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for (i, n) in counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Some(bucket_mid_ns(i));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! within {
        ($name:ident, $ns:expr) => {
            #[test]
            fn $name() {
                let mid = bucket_mid_ns(bucket($ns)) as f64;
                let err = (mid - $ns as f64).abs() / $ns as f64;
                assert!(err <= 0.125, "{} ns read as {mid}", $ns);
            }
        };
    }

    within!(bucket_of_a_microsecond, 1_000);
    within!(bucket_of_37_us, 37_123);
    within!(bucket_of_a_second, 1_000_000_000);
    within!(bucket_of_an_hour, 3_600_000_000_000u64);

    #[test]
    fn quantiles_since_a_baseline_count_only_new_responses() {
        let slot = LiveSlot::default();
        let mut hist = [0u64; BUCKETS];
        hist[bucket(1_000_000)] = 100; // warm-up: 1 ms
        slot.publish(&hist, &ErrorKinds::default());
        let warm = LiveSum::of([&slot].into_iter());
        hist[bucket(10_000)] += 99; // measured: 10 µs, and one slow one
        hist[bucket(5_000_000)] += 1;
        slot.publish(&hist, &ErrorKinds::default());
        let now = LiveSum::of([&slot].into_iter());
        let p50 = now.quantile_since(Some(&warm), 0.5).unwrap();
        let p99 = now.quantile_since(Some(&warm), 0.99).unwrap();
        let p100 = now.quantile_since(Some(&warm), 1.0).unwrap();
        assert!((9_000..11_300).contains(&p50), "{p50}");
        assert!((9_000..11_300).contains(&p99), "{p99}");
        assert!(p100 > 4_000_000, "{p100}");
        assert_eq!(now.quantile_since(Some(&now), 0.5), None);
    }

    #[test]
    fn kinds_describe_only_what_happened() {
        let k = ErrorKinds {
            connect: 3,
            timeout: 1,
            ..ErrorKinds::default()
        };
        assert_eq!(k.describe(), "connect 3, timeout 1");
        assert_eq!(ErrorKinds::default().describe(), "");
    }
}
