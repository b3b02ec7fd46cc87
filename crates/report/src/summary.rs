//! The one model of a finished run's results: every figure the writers print (merged
//! histograms, percentiles, errors, connection and client figures, SLO verdicts), computed
//! once from a [`RunResult`]. Text, JSON, HTML, the SLO checks and comparisons all read it.
use crate::latency::{Percentiles, Recorder};
use crate::result::{ConnCounts, Errors, RunInfo, RunResult, busy, per_s};
use crate::slo::{Metric, Slo, SloOutcome};
use crate::verdict::{DEFAULT_MAX_ERROR_PERCENT, Inputs, SelfCheck};
use std::time::Duration;

/// The sentence printed when the client limited the run.
pub const CLIENT_BOUND_NOTE: &str = "a worker was at least 90% busy: these figures measure the \
     client, not the server; add client CPUs (--cpus) or threads";

/// A finished run, summarised.
#[derive(Debug, Clone)]
pub struct Summary {
    /// Configuration echo.
    pub info: RunInfo,
    /// Measured wall time (warm-up excluded).
    pub elapsed: Duration,
    /// Complete responses, all workers.
    pub requests: u64,
    /// Bytes received, all workers.
    pub bytes_read: u64,
    /// Responses per second over the measured window.
    pub rps: f64,
    /// Bytes received per second over the measured window.
    pub bytes_per_s: f64,
    /// All workers' histograms merged without loss.
    pub latency: Recorder,
    /// Percentiles of the merged histograms.
    pub percentiles: LatencySummary,
    /// wrk's `Req/Sec` row over every worker's per-second counts.
    pub req_per_sec: ReqPerSec,
    /// Responses in each whole second of the measured window, all workers summed.
    pub per_second: Vec<u64>,
    /// All workers' errors summed.
    pub errors: Errors,
    /// All workers' connection counts summed.
    pub conns: ConnCounts,
    /// Whether every requested connection was open at once at some point.
    pub concurrency_reached: bool,
    /// The client's own cost.
    pub client: ClientFigures,
    /// Per worker, in worker order.
    pub workers: Vec<WorkerSummary>,
    /// SLO verdicts, in the order given.
    pub slo: Vec<SloOutcome>,
    /// Whether the load was delivered, and so what the figures describe.
    pub check: SelfCheck,
    /// The embedded server's cost, when the run had one.
    pub server: Option<crate::server::ServerFigures>,
    /// Phases of the first request on each new connection, all workers.
    pub phases: crate::PhaseSummary,
}

/// Percentile summaries of the merged histograms, µs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencySummary {
    /// From intended start (corrected for coordinated omission).
    pub corrected: Percentiles,
    /// From actual send.
    pub uncorrected: Percentiles,
    /// Intended start to actual send.
    pub queue_wait: Percentiles,
}

/// wrk's `Req/Sec` row: statistics of the per-thread per-second response counts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ReqPerSec {
    /// Mean.
    pub mean: f64,
    /// Standard deviation.
    pub stdev: f64,
    /// Largest sample.
    pub max: f64,
    /// Share of samples within one standard deviation of the mean, 0–1.
    pub within_stdev: f64,
}

/// The client's self-check.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClientFigures {
    /// Worker CPU time summed.
    pub cpu: Duration,
    /// Worker CPU time per complete response, ns (0 when none completed).
    pub cpu_ns_per_request: f64,
    /// Mean wait of a response in the client after its kernel receive stamp, ns.
    pub read_delay_ns: f64,
    /// The busiest worker's busy share, 0–1.
    pub max_busy: f64,
    /// Whether the client, not the server, limited the run (a worker ≥ 90% busy).
    pub client_bound: bool,
}

/// One worker's figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkerSummary {
    /// Index.
    pub id: usize,
    /// Pinned CPU.
    pub cpu: Option<usize>,
    /// Complete responses.
    pub requests: u64,
    /// Responses per second of the worker's own window.
    pub rps: f64,
    /// Busy share, 0–1.
    pub busy: f64,
    /// CPU time.
    pub cpu_time: Duration,
    /// Context switches, whole run.
    pub context_switches: u64,
    /// Naps after small batches of responses (`--coalesce`), whole run.
    pub naps: u64,
    /// Why it napped.
    pub nap_cause: Option<crate::NapCause>,
    /// Corrected latency of this worker.
    pub latency: Percentiles,
}

impl Summary {
    /// Summarises `run` and judges `slos` against it.
    pub fn new(run: &RunResult, slos: &[Slo]) -> Self {
        let latency = run.merged_latency();
        let mut phases = crate::Phases::default();
        for w in &run.workers {
            phases.add(&w.phases);
        }
        let percentiles = LatencySummary {
            corrected: Percentiles::of(&latency.corrected),
            uncorrected: Percentiles::of(&latency.uncorrected),
            queue_wait: Percentiles::of(&latency.wait),
        };
        let mut s = Self {
            info: run.info.clone(),
            elapsed: run.elapsed,
            requests: run.requests(),
            bytes_read: run.bytes_read(),
            rps: run.rps(),
            bytes_per_s: per_s(run.bytes_read() as f64, run.elapsed),
            latency,
            percentiles,
            req_per_sec: ReqPerSec::of(run),
            per_second: per_second(run),
            errors: run.merged_errors(),
            conns: run.merged_conns(),
            phases: phases.summary(),
            concurrency_reached: run.concurrency_reached(),
            client: ClientFigures {
                cpu: run.client_cpu(),
                cpu_ns_per_request: run.cpu_ns_per_request(),
                read_delay_ns: run.read_delay_ns_mean(),
                max_busy: run.max_busy(),
                client_bound: run.client_bound(),
            },
            workers: run
                .workers
                .iter()
                .enumerate()
                .map(|(id, w)| WorkerSummary {
                    id,
                    cpu: w.cpu,
                    requests: w.requests,
                    rps: per_s(w.requests as f64, w.wall_time),
                    busy: busy(w),
                    cpu_time: w.cpu_time,
                    context_switches: w.context_switches,
                    naps: w.naps,
                    nap_cause: w.nap_cause,
                    latency: Percentiles::of(&w.latency.corrected),
                })
                .collect(),
            slo: Vec::new(),
            // Judged just below, from the figures above.
            check: SelfCheck::default(),
            server: run
                .server
                .map(|c| crate::server::ServerFigures::of(&c, run.info.server_cpu)),
        };
        s.check = s.self_check(run);
        s.slo = slos.iter().map(|slo| slo.check(&s)).collect();
        s
    }

    /// The self-check of this summary; `run` gives the end-of-window counts.
    fn self_check(&self, run: &RunResult) -> SelfCheck {
        let open = self.info.rate_per_s;
        let lag = &self.percentiles.queue_wait;
        let shared: Vec<usize> = self
            .info
            .cpus
            .iter()
            .copied()
            .filter(|c| self.info.server_cpus.contains(c))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        SelfCheck::of(&Inputs {
            offered_rate_per_s: open,
            offered_end_per_s: self.info.offered_end_per_s,
            achieved_rate_per_s: self.rps,
            achieved_rate_end: self.rate_end(run),
            schedule_lag_us: open.map(|_| (lag.max_us, lag.p99_us)),
            requests: self.requests,
            errors: &self.errors,
            error_percent: self.error_percent(),
            max_error_percent: self
                .info
                .max_error_percent
                .unwrap_or(DEFAULT_MAX_ERROR_PERCENT),
            concurrency_asked: self.info.connections as u64,
            concurrency_reached: self.conns.peak_open,
            established: self.conns.established,
            client_cpu_ns_per_request: self.client.cpu_ns_per_request,
            client_max_busy: self.client.max_busy,
            client_bound: self.client.client_bound,
            embedded: self.info.server_cpu.is_some(),
            shared_cpus: &shared,
        })
    }

    /// Responses per second over the last 20% of a timed run's planned window (from the
    /// nominal 80% mark to the end of the measured window); `None` for a counted run or one
    /// that ended before the mark.
    fn rate_end(&self, run: &RunResult) -> Option<f64> {
        let planned = self.info.duration?;
        let tail = self.elapsed.checked_sub(planned / 5 * 4)?;
        if tail.is_zero() {
            return None;
        }
        let n: u64 = run.workers.iter().map(|w| w.tail_requests).sum();
        Some(per_s(n as f64, tail))
    }

    /// Whether every SLO held (true when there were none). A run that completed no request
    /// holds none: an SLO is never a pass on nothing (a dead server must not pass a gate).
    pub fn passed(&self) -> bool {
        self.slo.iter().all(|o| o.pass)
    }

    /// Corrected latency at quantile `q` (0–1), µs; 0 when nothing was recorded.
    pub fn corrected_quantile_us(&self, q: f64) -> f64 {
        let h = &self.latency.corrected;
        if h.is_empty() {
            0.0
        } else {
            h.value_at_quantile(q) as f64 / 1e3
        }
    }

    /// Failures as a percentage of all attempts (responses plus failures); 0 with none.
    pub fn error_percent(&self) -> f64 {
        let total = self.errors.total();
        let attempts = self.requests + total;
        if attempts == 0 {
            0.0
        } else {
            100.0 * total as f64 / attempts as f64
        }
    }

    /// The measured value of an SLO metric, in the unit its limit is written in.
    pub fn measure(&self, metric: Metric) -> f64 {
        match metric {
            Metric::Quantile(q) => self.corrected_quantile_us(q),
            Metric::Mean => self.percentiles.corrected.mean_us,
            Metric::Max => self.percentiles.corrected.max_us,
            Metric::ErrorPercent => self.error_percent(),
            Metric::Errors => self.errors.total() as f64,
            Metric::Rps => self.rps,
        }
    }

    /// Naps after small batches, all workers (`--coalesce`).
    pub fn naps(&self) -> u64 {
        self.workers.iter().map(|w| w.naps).sum()
    }

    /// Why the workers napped: the client was the limit if any worker napped for that, else
    /// asked if any napped at all.
    pub fn nap_cause(&self) -> Option<crate::NapCause> {
        let causes = || self.workers.iter().filter_map(|w| w.nap_cause);
        causes()
            .find(|&c| c == crate::NapCause::ClientLimit)
            .or_else(|| causes().next())
    }
}

// `Slo::check` lives here rather than in slo.rs so that the dependency runs one way: the
// summary knows the SLO vocabulary, the SLO parser knows nothing of summaries.
impl Slo {
    /// Judges the threshold against a summarised run.
    pub fn check(&self, s: &Summary) -> SloOutcome {
        let mut outcome = self.verdict(s.measure(self.metric()));
        // `errors<1%` or `p99<2ms` of nothing would hold; a gate must not pass a dead server.
        outcome.pass &= s.requests > 0;
        outcome
    }
}

/// Every worker's per-second counts summed second by second.
fn per_second(run: &RunResult) -> Vec<u64> {
    let mut all: Vec<u64> = Vec::new();
    for w in &run.workers {
        if all.len() < w.per_second.len() {
            all.resize(w.per_second.len(), 0);
        }
        for (a, n) in all.iter_mut().zip(&w.per_second) {
            *a += n;
        }
    }
    all
}

impl ReqPerSec {
    /// wrk's statistics of every worker's per-second samples, pooled.
    fn of(run: &RunResult) -> Self {
        let samples: Vec<f64> = run
            .workers
            .iter()
            .flat_map(|w| w.per_second.iter().map(|&n| n as f64))
            .collect();
        if samples.is_empty() {
            return Self::default();
        }
        let n = samples.len() as f64;
        let mean = samples.iter().sum::<f64>() / n;
        let var = samples.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n;
        let stdev = var.sqrt();
        let max = samples.iter().copied().fold(0.0, f64::max);
        let within = samples
            .iter()
            .filter(|s| (*s - mean).abs() <= stdev)
            .count() as f64
            / n;
        Self {
            mean,
            stdev,
            max,
            within_stdev: within,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::WorkerResult;

    fn run(per_worker: &[(u64, u64)]) -> RunResult {
        // (responses, timeouts) per worker; every response takes 10 µs.
        let workers = per_worker
            .iter()
            .map(|&(requests, timeouts)| {
                let mut w = WorkerResult {
                    requests,
                    wall_time: Duration::from_secs(1),
                    cpu_time: Duration::from_millis(500),
                    per_second: vec![requests],
                    ..Default::default()
                };
                for _ in 0..requests {
                    w.latency.record(0, 0, 10_000);
                }
                w.errors.timeout = timeouts;
                w
            })
            .collect();
        RunResult {
            elapsed: Duration::from_secs(1),
            workers,
            ..Default::default()
        }
    }

    #[test]
    fn merges_every_worker_once() {
        let s = Summary::new(&run(&[(300, 1), (100, 3)]), &[]);
        assert_eq!((s.requests, s.latency.len()), (400, 400));
        assert_eq!(s.percentiles.corrected.count, 400);
        assert_eq!(s.errors.total(), 4);
        assert_eq!(s.rps, 400.0);
        assert_eq!(s.workers.len(), 2);
        assert_eq!((s.workers[1].id, s.workers[1].requests), (1, 100));
        assert_eq!(s.client.cpu, Duration::from_secs(1));
        assert_eq!(s.client.cpu_ns_per_request, 1e9 / 400.0);
        assert_eq!(s.client.max_busy, 0.5);
        assert!(!s.client.client_bound);
    }

    #[test]
    fn req_per_sec_pools_worker_samples() {
        let s = Summary::new(&run(&[(300, 0), (100, 0)]), &[]);
        assert_eq!(s.req_per_sec.mean, 200.0);
        assert_eq!(s.req_per_sec.stdev, 100.0);
        assert_eq!(s.req_per_sec.max, 300.0);
        assert_eq!(s.req_per_sec.within_stdev, 1.0);
    }

    #[test]
    fn error_percent_counts_failures_among_attempts() {
        let s = Summary::new(&run(&[(96, 4)]), &[]);
        assert_eq!(s.error_percent(), 4.0);
        assert_eq!(
            Summary::new(&RunResult::default(), &[]).error_percent(),
            0.0
        );
    }

    #[test]
    fn verdicts_are_judged_once_in_order() {
        let slos = [
            Slo::parse("p99<20us").unwrap(),
            Slo::parse("errors<1%").unwrap(),
        ];
        let s = Summary::new(&run(&[(96, 4)]), &slos);
        let got: Vec<(&str, bool)> = s.slo.iter().map(|o| (o.expr.as_str(), o.pass)).collect();
        assert_eq!(got, [("p99<20us", true), ("errors<1%", false)]);
        assert!(!s.passed());
        assert_eq!(s.slo[1].actual, 4.0);
    }
}
