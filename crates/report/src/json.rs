//! The `--json` document: a stable schema (`schema/bench-report.schema.json`, id
//! [`SCHEMA_ID`]); fields are only ever added, never renamed or removed, within a major.
use crate::latency::Percentiles;
use crate::result::{RunResult, busy, per_s};
use crate::slo::SloOutcome;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;

/// The identifier in every document's `schema` field.
pub const SCHEMA_ID: &str = "twelve-bench-report/1";
/// The JSON Schema (draft 2020-12) the documents follow.
pub const SCHEMA: &str = include_str!("../schema/bench-report.schema.json");

/// A bench report as written by `--json`.
#[derive(Debug, Clone, Serialize)]
pub struct JsonReport {
    /// Always [`SCHEMA_ID`].
    pub schema: &'static str,
    /// Version of twelve that measured.
    pub version: String,
    /// Configuration echo.
    pub config: Config,
    /// Complete responses in the measured window.
    pub requests: u64,
    /// Measured window, seconds (warm-up excluded).
    pub duration_s: f64,
    /// Responses per second.
    pub rps: f64,
    /// Bytes received.
    pub bytes_read: u64,
    /// Bytes received per second.
    pub bytes_per_s: f64,
    /// Latency summaries.
    pub latency: Latency,
    /// Failures by class.
    pub errors: ErrorsJson,
    /// Concurrency reached.
    pub connections: Conns,
    /// The client's own cost and whether it limited the run.
    pub client: Client,
    /// SLO outcomes, in the order given.
    pub slo: Vec<SloOutcome>,
    /// The host's state (the `twelve doctor` summary), so every run carries it; the caller
    /// fills it in because this crate does not read the host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doctor: Option<serde_json::Value>,
    #[serde(skip)]
    corrected: Histogram<u64>,
}

/// Configuration echo.
#[derive(Debug, Clone, Serialize)]
pub struct Config {
    /// URLs, taken in turn.
    pub urls: Vec<String>,
    /// HTTP method.
    pub method: String,
    /// Worker threads.
    pub threads: usize,
    /// Connections requested.
    pub connections: usize,
    /// Pipeline depth.
    pub pipeline: usize,
    /// `"closed"` or `"open"`.
    pub model: &'static str,
    /// Open model: arrivals per second.
    pub rate_per_s: Option<f64>,
    /// Open model: `"uniform"` or `"poisson"`.
    pub arrival: Option<String>,
    /// Planned measured duration.
    pub planned_duration_s: Option<f64>,
    /// Planned request count.
    pub planned_requests: Option<u64>,
    /// Warm-up, excluded from statistics.
    pub warmup_s: f64,
    /// Per-request timeout.
    pub timeout_s: f64,
    /// Keep-alive connections.
    pub keep_alive: bool,
    /// Requests per connection before reopening.
    pub requests_per_conn: Option<u64>,
    /// Worker CPUs.
    pub cpus: Vec<usize>,
    /// Embedded server CPU.
    pub server_cpu: Option<usize>,
}

/// Latency summaries, µs.
#[derive(Debug, Clone, Serialize)]
pub struct Latency {
    /// From intended start (corrected for coordinated omission).
    pub corrected: Percentiles,
    /// From actual send.
    pub uncorrected: Percentiles,
    /// Intended start to actual send.
    pub queue_wait: Percentiles,
}

/// Failures by class.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorsJson {
    /// All failures, bad statuses included.
    pub total: u64,
    /// Connect refused.
    pub connect_refused: u64,
    /// Connect timed out.
    pub connect_timeout: u64,
    /// Other connect failures.
    pub connect_other: u64,
    /// Resets and EOF inside a head.
    pub read: u64,
    /// Failed sends.
    pub write: u64,
    /// Requests timed out.
    pub timeout: u64,
    /// Unparsable responses.
    pub parse: u64,
    /// Bodies cut short.
    pub body_length: u64,
    /// Responses not 2xx or 3xx.
    pub bad_status: u64,
    /// Every response by status code (all codes, good ones included).
    pub status: BTreeMap<String, u64>,
}

/// Concurrency reached.
#[derive(Debug, Clone, Serialize)]
pub struct Conns {
    /// Requested with `-c`.
    pub requested: u64,
    /// Successful connects.
    pub established: u64,
    /// Failed connects.
    pub failed: u64,
    /// Connections reopened.
    pub reconnects: u64,
    /// Most open at once.
    pub peak_open: u64,
    /// Whether `peak_open` reached `requested`.
    pub reached: bool,
}

/// The client's self-check.
#[derive(Debug, Clone, Serialize)]
pub struct Client {
    /// Worker CPU time, seconds.
    pub cpu_s: f64,
    /// Worker CPU time per response, ns.
    pub cpu_ns_per_request: f64,
    /// Busiest worker's busy share, 0–1.
    pub max_busy: f64,
    /// True when a worker was ≥ 90% busy: the figures measure the client.
    pub client_bound: bool,
    /// A sentence saying so, when `client_bound`.
    pub note: Option<String>,
    /// Per worker.
    pub workers: Vec<WorkerJson>,
}

/// One worker.
#[derive(Debug, Clone, Serialize)]
pub struct WorkerJson {
    /// Index.
    pub id: usize,
    /// Pinned CPU.
    pub cpu: Option<usize>,
    /// Responses.
    pub requests: u64,
    /// Responses per second.
    pub rps: f64,
    /// Busy share, 0–1.
    pub busy: f64,
    /// CPU time, seconds.
    pub cpu_s: f64,
    /// Context switches.
    pub context_switches: u64,
    /// Naps after small batches of responses (`--coalesce`).
    pub naps: u64,
    /// Corrected latency of this worker.
    pub latency: Percentiles,
}

/// The sentence printed when the client limited the run.
pub const CLIENT_BOUND_NOTE: &str = "a worker was at least 90% busy: these figures measure the \
     client, not the server; add client CPUs (--cpus) or threads";

impl JsonReport {
    /// Builds the report from a finished run and judged SLOs.
    pub fn new(run: &RunResult, version: &str, slo: Vec<SloOutcome>) -> Self {
        let info = &run.info;
        let lat = run.merged_latency();
        let errors = run.merged_errors();
        let conns = run.merged_conns();
        let client_bound = run.client_bound();
        Self {
            schema: SCHEMA_ID,
            version: version.to_string(),
            config: Config {
                urls: info.urls.clone(),
                method: info.method.clone(),
                threads: info.threads,
                connections: info.connections,
                pipeline: info.pipeline,
                model: if info.rate_per_s.is_some() {
                    "open"
                } else {
                    "closed"
                },
                rate_per_s: info.rate_per_s,
                arrival: info.arrival.clone(),
                planned_duration_s: info.duration.map(|d| d.as_secs_f64()),
                planned_requests: info.requests,
                warmup_s: info.warmup.as_secs_f64(),
                timeout_s: info.timeout.as_secs_f64(),
                keep_alive: info.keep_alive,
                requests_per_conn: info.requests_per_conn,
                cpus: info.cpus.clone(),
                server_cpu: info.server_cpu,
            },
            requests: run.requests(),
            duration_s: run.elapsed.as_secs_f64(),
            rps: run.rps(),
            bytes_read: run.bytes_read(),
            bytes_per_s: per_s(run.bytes_read() as f64, run.elapsed),
            latency: Latency {
                corrected: Percentiles::of(&lat.corrected),
                uncorrected: Percentiles::of(&lat.uncorrected),
                queue_wait: Percentiles::of(&lat.wait),
            },
            errors: ErrorsJson {
                total: errors.total(),
                connect_refused: errors.connect_refused,
                connect_timeout: errors.connect_timeout,
                connect_other: errors.connect_other,
                read: errors.read,
                write: errors.write,
                timeout: errors.timeout,
                parse: errors.parse,
                body_length: errors.body_length,
                bad_status: errors.bad_status(),
                status: errors
                    .status_counts()
                    .map(|(c, n)| (c.to_string(), n))
                    .collect(),
            },
            connections: Conns {
                requested: info.connections as u64,
                established: conns.established,
                failed: conns.failed,
                reconnects: conns.reconnects,
                peak_open: conns.peak_open,
                reached: run.concurrency_reached(),
            },
            client: Client {
                cpu_s: run.client_cpu().as_secs_f64(),
                cpu_ns_per_request: run.cpu_ns_per_request(),
                max_busy: run.max_busy(),
                client_bound,
                note: client_bound.then(|| CLIENT_BOUND_NOTE.to_string()),
                workers: run
                    .workers
                    .iter()
                    .enumerate()
                    .map(|(id, w)| WorkerJson {
                        id,
                        cpu: w.cpu,
                        requests: w.requests,
                        rps: per_s(w.requests as f64, w.wall_time),
                        busy: busy(w),
                        cpu_s: w.cpu_time.as_secs_f64(),
                        context_switches: w.context_switches,
                        naps: w.naps,
                        latency: Percentiles::of(&w.latency.corrected),
                    })
                    .collect(),
            },
            slo,
            doctor: None,
            corrected: lat.corrected,
        }
    }

    /// Corrected latency at quantile `q` (0–1), µs.
    pub fn corrected_quantile_us(&self, q: f64) -> f64 {
        self.corrected.value_at_quantile(q) as f64 / 1e3
    }

    /// The document, pretty-printed.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("plain data serialises")
    }
}
