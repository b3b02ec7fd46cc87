//! One step of a sweep (a finished bench run at one concurrency or rate) and its CSV/JSON row.
use crate::result::RunResult;
use crate::slo::SloOutcome;
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
}

impl LoadKind {
    /// Axis label and CSV column name.
    pub fn label(self) -> &'static str {
        match self {
            LoadKind::Concurrency => "concurrency",
            LoadKind::Rate => "rate",
        }
    }

    /// Axis title with its unit.
    pub fn axis(self) -> &'static str {
        match self {
            LoadKind::Concurrency => "connections",
            LoadKind::Rate => "offered rate (req/s)",
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
    /// The run, with every worker's histograms.
    pub run: RunResult,
    /// SLOs judged on this step (empty when none were given).
    pub slo: Vec<SloOutcome>,
}

impl Step {
    /// Whether every SLO held (true when there were none).
    pub fn passed(&self) -> bool {
        self.slo.iter().all(|s| s.pass)
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
    /// Summarises a step from its merged histograms.
    pub fn of(step: &Step) -> Self {
        let lat = step.run.merged_latency();
        let h = &lat.corrected;
        let us = |ns: u64| ns as f64 / 1e3;
        let q = |q: f64| {
            if h.is_empty() {
                0.0
            } else {
                us(h.value_at_quantile(q))
            }
        };
        let start_unix_s = step
            .start
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        Self {
            start_unix_s,
            load: step.load,
            complete: step.run.requests(),
            failed: step.run.merged_errors().total(),
            rps: step.run.rps(),
            min_us: if h.is_empty() { 0.0 } else { us(h.min()) },
            mean_us: if h.is_empty() { 0.0 } else { h.mean() / 1e3 },
            stddev_us: if h.is_empty() { 0.0 } else { h.stdev() / 1e3 },
            p50_us: q(0.50),
            p90_us: q(0.90),
            p95_us: q(0.95),
            p99_us: q(0.99),
            p999_us: q(0.999),
            max_us: if h.is_empty() { 0.0 } else { us(h.max()) },
            client_busy: step.run.max_busy(),
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
