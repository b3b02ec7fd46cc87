//! Latency recording: three HdrHistograms per worker (corrected, uncorrected, queue wait),
//! merged losslessly, and the percentile summary every writer prints.
//!
//! Unit choice (measured need, not taste): values are recorded in **nanoseconds** with a
//! trackable range of 1 ns to 1 h at 3 significant digits. Loopback latencies are 10–50 µs;
//! recording in µs would round 23.4 µs to 23 µs (a 2% error at the p50 that matters most),
//! while ns keeps 3 digits everywhere from 1 µs to 1 h. The cost is memory: about 270 KB per
//! histogram, fixed, whatever the run length. Nanoseconds are also the unit the HdrHistogram
//! log tools assume (their `Interval_Max` column divides by 10^6 to print ms).
use hdrhistogram::Histogram;
use serde::Serialize;

/// Highest trackable latency: one hour, in ns.
pub const HIGHEST_NS: u64 = 3_600_000_000_000;
/// Significant decimal digits kept at every magnitude.
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// A latency histogram with twelve's bounds (1 ns … 1 h, 3 digits, values in ns).
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_NS, SIGNIFICANT_DIGITS)
        .expect("constant bounds are valid")
}

/// One worker's latency record.
#[derive(Debug, Clone)]
pub struct Recorder {
    /// Done minus intended start (corrected for coordinated omission).
    pub corrected: Histogram<u64>,
    /// Done minus actual send.
    pub uncorrected: Histogram<u64>,
    /// Actual send minus intended start: how long a due request waited for a connection.
    pub wait: Histogram<u64>,
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

impl Recorder {
    /// Empty histograms; all allocation happens here, never while recording.
    pub fn new() -> Self {
        Self {
            corrected: new_histogram(),
            uncorrected: new_histogram(),
            wait: new_histogram(),
        }
    }

    /// Records one response from the three instants of its life, in ns on one clock.
    /// Values above one hour saturate at the top bucket rather than being dropped.
    #[inline]
    pub fn record(&mut self, intended_ns: u64, sent_ns: u64, done_ns: u64) {
        let sent_ns = sent_ns.max(intended_ns);
        let done_ns = done_ns.max(sent_ns);
        self.corrected.saturating_record(done_ns - intended_ns);
        self.uncorrected.saturating_record(done_ns - sent_ns);
        self.wait.saturating_record(sent_ns - intended_ns);
    }

    /// Adds `other` into `self` bucket by bucket: the merge loses nothing.
    pub fn add(&mut self, other: &Recorder) {
        // Same bounds on both sides, so `add` cannot fail.
        self.corrected.add(&other.corrected).expect("same bounds");
        self.uncorrected
            .add(&other.uncorrected)
            .expect("same bounds");
        self.wait.add(&other.wait).expect("same bounds");
    }

    /// Empties all three histograms (keeps their memory).
    pub fn reset(&mut self) {
        self.corrected.reset();
        self.uncorrected.reset();
        self.wait.reset();
    }

    /// Responses recorded.
    pub fn len(&self) -> u64 {
        self.corrected.len()
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.corrected.is_empty()
    }
}

/// The percentile summary of one histogram, in µs (fractional).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Percentiles {
    /// Values recorded.
    pub count: u64,
    /// Smallest value.
    pub min_us: f64,
    /// Arithmetic mean.
    pub mean_us: f64,
    /// Standard deviation.
    pub stdev_us: f64,
    /// Share of values within one standard deviation of the mean (wrk's `+/- Stdev`), 0–1.
    pub within_stdev: f64,
    /// 50th percentile.
    pub p50_us: f64,
    /// 75th percentile.
    pub p75_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// 99.99th percentile.
    pub p9999_us: f64,
    /// 99.999th percentile.
    pub p99999_us: f64,
    /// Largest value.
    pub max_us: f64,
}

/// The quantiles every report prints, with their labels.
pub const QUANTILES: [(f64, &str); 7] = [
    (0.50, "50%"),
    (0.75, "75%"),
    (0.90, "90%"),
    (0.99, "99%"),
    (0.999, "99.9%"),
    (0.9999, "99.99%"),
    (0.99999, "99.999%"),
];

impl Percentiles {
    /// Summarises a histogram recorded in ns.
    pub fn of(h: &Histogram<u64>) -> Self {
        let us = |ns: u64| ns as f64 / 1e3;
        if h.is_empty() {
            return Self {
                count: 0,
                min_us: 0.0,
                mean_us: 0.0,
                stdev_us: 0.0,
                within_stdev: 0.0,
                p50_us: 0.0,
                p75_us: 0.0,
                p90_us: 0.0,
                p99_us: 0.0,
                p999_us: 0.0,
                p9999_us: 0.0,
                p99999_us: 0.0,
                max_us: 0.0,
            };
        }
        let (mean, stdev) = (h.mean(), h.stdev());
        let within: u64 = h
            .iter_recorded()
            .filter(|v| (v.value_iterated_to() as f64 - mean).abs() <= stdev)
            .map(|v| v.count_at_value())
            .sum();
        let q = |q: f64| us(h.value_at_quantile(q));
        Self {
            count: h.len(),
            min_us: us(h.min()),
            mean_us: mean / 1e3,
            stdev_us: stdev / 1e3,
            within_stdev: within as f64 / h.len() as f64,
            p50_us: q(0.50),
            p75_us: q(0.75),
            p90_us: q(0.90),
            p99_us: q(0.99),
            p999_us: q(0.999),
            p9999_us: q(0.9999),
            p99999_us: q(0.99999),
            max_us: us(h.max()),
        }
    }

    /// The value at one of [`QUANTILES`] by index.
    pub fn at(&self, i: usize) -> f64 {
        [
            self.p50_us,
            self.p75_us,
            self.p90_us,
            self.p99_us,
            self.p999_us,
            self.p9999_us,
            self.p99999_us,
        ][i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_keeps_every_count() {
        let mut parts: Vec<Recorder> = (0..4).map(|_| Recorder::new()).collect();
        let mut expect = 0;
        for (w, r) in parts.iter_mut().enumerate() {
            for i in 0..1000u64 {
                r.record(0, 0, (i * 7919 + w as u64 * 104_729) % 5_000_000 + 1);
                expect += 1;
            }
        }
        let mut total = Recorder::new();
        for r in &parts {
            total.add(r);
        }
        assert_eq!(total.len(), expect);
        let max = parts.iter().map(|r| r.corrected.max()).max().unwrap();
        assert_eq!(total.corrected.max(), max);
        for v in [1_000, 50_000, 2_000_000] {
            let sum: u64 = parts.iter().map(|r| r.corrected.count_between(0, v)).sum();
            assert_eq!(total.corrected.count_between(0, v), sum);
        }
    }

    #[test]
    fn record_splits_wait_from_service() {
        let mut r = Recorder::new();
        r.record(1_000, 5_000, 12_000);
        assert_eq!(r.corrected.max(), r.corrected.highest_equivalent(11_000));
        assert_eq!(r.uncorrected.max(), r.uncorrected.highest_equivalent(7_000));
        assert_eq!(r.wait.max(), r.wait.highest_equivalent(4_000));
    }

    #[test]
    fn three_digits_at_loopback_latency() {
        let mut h = new_histogram();
        h.record(23_456).unwrap();
        let p = Percentiles::of(&h);
        assert!((p.p50_us - 23.456).abs() < 0.0235, "{}", p.p50_us);
    }
}
