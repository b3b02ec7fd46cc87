//! One step of a sweep (a finished bench run at one concurrency or rate) and its CSV/JSON row.
use crate::summary::Summary;
use serde::Serialize;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What a sweep varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LoadKind {
    /// Connections of the closed model (wrk, ab -c).
    Concurrency,
    /// Arrivals per second of the open model.
    Rate,
    /// HTTP/2 streams per connection of the closed model (h2load's `-m`), `-c` fixed.
    Streams,
}

impl LoadKind {
    /// Axis label and CSV column name.
    pub fn label(self) -> &'static str {
        match self {
            LoadKind::Concurrency => "concurrency",
            LoadKind::Rate => "rate",
            LoadKind::Streams => "streams",
        }
    }

    /// Axis title with its unit.
    pub fn axis(self) -> &'static str {
        match self {
            LoadKind::Concurrency => "connections",
            LoadKind::Rate => "offered rate (req/s)",
            LoadKind::Streams => "streams per connection",
        }
    }
}

/// A finished step.
#[derive(Debug, Clone)]
pub struct Step {
    /// Concurrency or rate of this step.
    pub load: f64,
    /// Wall-clock start of the measured window.
    pub start: SystemTime,
    /// The run, summarised once (merged histograms and SLO verdicts included).
    pub summary: Summary,
}

impl Step {
    /// Whether every SLO held (true when there were none).
    pub fn passed(&self) -> bool {
        self.summary.passed()
    }
}

/// The summary row of one step, as the CSV writes it. Latencies are the corrected histogram's
/// (intended start to done), in µs; in the closed model it equals the uncorrected one up to
/// the time a request waits for its connection.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StepRow {
    /// Start of the measured window, seconds since the Unix epoch.
    pub start_unix_s: f64,
    /// Concurrency or rate.
    pub load: f64,
    /// Complete responses.
    pub complete: u64,
    /// Failures of every class, bad statuses included.
    pub failed: u64,
    /// Responses per second.
    pub rps: f64,
    /// Smallest latency.
    pub min_us: f64,
    /// Mean latency.
    pub mean_us: f64,
    /// Standard deviation of latency.
    pub stddev_us: f64,
    /// 50th percentile.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 95th percentile.
    pub p95_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// Largest latency.
    pub max_us: f64,
    /// The busiest client worker's busy share, 0–1 (≥ 0.9: the step measured the client).
    pub client_busy: f64,
}

impl StepRow {
    /// The row of a step, read off its summary.
    pub fn of(step: &Step) -> Self {
        let s = &step.summary;
        let c = &s.percentiles.corrected;
        let start_unix_s = step
            .start
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        // The quantile columns are ab+.sh's (p95 among them, which the summary's percentile
        // set lacks), read off the merged histogram.
        let q = |q: f64| s.corrected_quantile_us(q);
        Self {
            start_unix_s,
            load: step.load,
            complete: s.requests,
            failed: s.errors.total(),
            rps: s.rps,
            min_us: c.min_us,
            mean_us: c.mean_us,
            stddev_us: c.stdev_us,
            p50_us: q(0.50),
            p90_us: q(0.90),
            p95_us: q(0.95),
            p99_us: q(0.99),
            p999_us: q(0.999),
            max_us: c.max_us,
            client_busy: s.client.max_busy,
        }
    }

    /// The start as ISO 8601 UTC with milliseconds, rounded to the millisecond printed (f64
    /// seconds since 1970 carry ~0.2 µs of error).
    pub fn start_iso8601(&self) -> String {
        super::time::iso8601(
            UNIX_EPOCH + Duration::from_millis((self.start_unix_s * 1e3).round() as u64),
        )
    }

    /// The latency columns in table order: min, mean, stddev, p50, p90, p95, p99, p99.9, max.
    pub fn latencies_us(&self) -> [f64; 9] {
        [
            self.min_us,
            self.mean_us,
            self.stddev_us,
            self.p50_us,
            self.p90_us,
            self.p95_us,
            self.p99_us,
            self.p999_us,
            self.max_us,
        ]
    }
}
