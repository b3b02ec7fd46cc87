//! The `--json` document: a stable schema (`schema/bench-report.schema.json`, id
//! [`SCHEMA_ID`]); fields are only ever added, never renamed or removed, within a major.
//!
//! The document is a view of a [`Summary`]: it computes nothing the summary does not hold.
use crate::latency::Percentiles;
use crate::merge::MergeVerdict;
use crate::raw::{EncodedRecorder, RawRun};
use crate::result::{Errors, RunInfo};
use crate::slo::SloOutcome;
use crate::summary::{CLIENT_BOUND_NOTE, Summary};
use crate::verdict::SelfCheck;
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
    /// Whether the load was delivered: rates, schedule lag, concurrency, the verdict.
    pub self_check: SelfCheck,
    /// The embedded server's cost (runs without a URL only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<crate::server::ServerFigures>,
    /// Phases of the first request on new connections, when any was measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phases: Option<crate::PhaseSummary>,
    /// The host's state (the `twelve doctor` summary), so every run carries it; the caller
    /// fills it in because this crate does not read the host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doctor: Option<serde_json::Value>,
    /// The whole merged histograms (HdrHistogram V2 compressed, base64), so any HdrHistogram
    /// reader can take other quantiles or add runs without loss.
    pub histograms: EncodedRecorder,
    /// Every worker losslessly, for `twelve merge`; the caller fills it in (it needs the run,
    /// not only its summary).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<RawRun>,
    /// Set by `twelve merge`: how many shards, and whether their union is the planned load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge: Option<MergeVerdict>,
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
    /// Open model with a rate ramp: how it ramps (`rate_per_s` is then its mean).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ramp: Option<String>,
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
    /// `http/1.1`, `h2` or `h2c`.
    pub protocol: String,
    /// Most requests in flight per connection: `--streams` over HTTP/2, the pipeline depth
    /// over HTTP/1.1.
    pub streams: u64,
    /// HTTP/2: the fewest streams in force on a connection, when the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS lowered `streams`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streams_capped_to: Option<u64>,
    /// `https://`: how the server was trusted and whether sessions resumed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls: Option<String>,
    /// The client's socket engine: `epoll` or `uring` (`--io`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io: Option<String>,
    /// When a response counts as received: `kernel` (its receive stamp) or `read`
    /// (`--rx-time`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rx_time: Option<String>,
    /// The slice of a sharded run (`--shard I/N`) this report is; `connections`,
    /// `rate_per_s` and `planned_requests` above are then the shard's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardJson>,
}

/// A shard and the whole run it is part of.
#[derive(Debug, Clone, Serialize)]
pub struct ShardJson {
    /// This shard, 0-based.
    pub index: u32,
    /// Shards in the run.
    pub count: u32,
    /// Connections of the whole run.
    pub connections: usize,
    /// Arrival rate of the whole run (open model).
    pub rate_per_s: Option<f64>,
    /// Planned requests of the whole run (counted runs).
    pub requests: Option<u64>,
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
    /// Of `connect_other`: EADDRNOTAVAIL (local ports exhausted).
    pub connect_no_port: u64,
    /// Of `connect_other`: EMFILE/ENFILE (no descriptor left).
    pub connect_no_fd: u64,
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
    /// HTTP/2's failures by kind, on an HTTP/2 run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub h2: Option<H2ErrorsJson>,
}

/// HTTP/2's failures by kind.
#[derive(Debug, Clone, Serialize)]
pub struct H2ErrorsJson {
    /// RST_STREAM from the server (other than REFUSED_STREAM).
    pub reset: u64,
    /// Not processed (REFUSED_STREAM, above a GOAWAY's last stream): not sent.
    pub refused: u64,
    /// Responses that broke their stream's rules; the client reset the stream.
    pub stream: u64,
    /// GOAWAY frames received.
    pub goaway: u64,
    /// Connection errors; the client sent GOAWAY.
    pub protocol: u64,
    /// Requests whose body waited for a window that stayed shut until they timed out.
    pub stall: u64,
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
    /// Mean time a response waited in the client after the kernel received it (naps, other
    /// connections' work), µs: left out of the latency with `--rx-time kernel`.
    pub read_delay_us: f64,
    /// Busiest worker's busy share, 0–1.
    pub max_busy: f64,
    /// Naps after small batches, all workers (`--coalesce`).
    pub naps: u64,
    /// Why: `client-limit` (`auto`, a worker was the limit) or `asked` (`on`, a fixed nap);
    /// null when no worker napped.
    pub nap_cause: Option<&'static str>,
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

impl JsonReport {
    /// The document of a summarised run (its SLO verdicts included); `doctor` is left empty.
    pub fn of(s: &Summary, version: &str) -> Self {
        let lat = &s.percentiles;
        Self {
            schema: SCHEMA_ID,
            version: version.to_string(),
            config: Config::of(&s.info, &s.errors.h2),
            requests: s.requests,
            duration_s: s.elapsed.as_secs_f64(),
            rps: s.rps,
            bytes_read: s.bytes_read,
            bytes_per_s: s.bytes_per_s,
            latency: Latency {
                corrected: lat.corrected,
                uncorrected: lat.uncorrected,
                queue_wait: lat.queue_wait,
            },
            errors: ErrorsJson::of(&s.errors),
            connections: Conns {
                requested: s.info.connections as u64,
                established: s.conns.established,
                failed: s.conns.failed,
                reconnects: s.conns.reconnects,
                peak_open: s.conns.peak_open,
                reached: s.concurrency_reached,
            },
            client: Client::of(s),
            slo: s.slo.clone(),
            self_check: s.check.clone(),
            server: s.server,
            phases: s.phases.total.is_some().then_some(s.phases),
            doctor: None,
            histograms: EncodedRecorder::of(&s.latency),
            raw: None,
            merge: None,
        }
    }

    /// The document, pretty-printed.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("plain data serialises")
    }
}

impl Config {
    fn of(info: &RunInfo, h2: &crate::H2Errors) -> Self {
        let streams = info.streams.map_or(info.pipeline as u64, u64::from);
        Self {
            protocol: info.protocol_name().to_owned(),
            streams,
            streams_capped_to: (h2.stream_limit > 0 && h2.stream_limit < streams)
                .then_some(h2.stream_limit),
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
            ramp: info.ramp.clone(),
            planned_duration_s: info.duration.map(|d| d.as_secs_f64()),
            planned_requests: info.requests,
            warmup_s: info.warmup.as_secs_f64(),
            timeout_s: info.timeout.as_secs_f64(),
            keep_alive: info.keep_alive,
            requests_per_conn: info.requests_per_conn,
            cpus: info.cpus.clone(),
            server_cpu: info.server_cpu,
            shard: info.shard.map(|s| ShardJson {
                index: s.index,
                count: s.count,
                connections: s.connections,
                rate_per_s: s.rate_per_s,
                requests: s.requests,
            }),
            tls: info.tls.clone(),
            io: info.io.clone(),
            rx_time: info.rx_time.clone(),
        }
    }
}

impl ErrorsJson {
    fn of(e: &Errors) -> Self {
        Self {
            total: e.total(),
            connect_refused: e.connect_refused,
            connect_timeout: e.connect_timeout,
            connect_other: e.connect_other,
            connect_no_port: e.connect_no_port,
            connect_no_fd: e.connect_no_fd,
            read: e.read,
            write: e.write,
            timeout: e.timeout,
            parse: e.parse,
            body_length: e.body_length,
            bad_status: e.bad_status(),
            status: e.status_counts().map(|(c, n)| (c.to_string(), n)).collect(),
            h2: (e.h2.stream_limit > 0).then_some(H2ErrorsJson {
                reset: e.h2.reset,
                refused: e.h2.refused,
                stream: e.h2.stream,
                goaway: e.h2.goaway,
                protocol: e.h2.protocol,
                stall: e.h2.stall,
            }),
        }
    }
}

impl Client {
    fn of(s: &Summary) -> Self {
        Self {
            cpu_s: s.client.cpu.as_secs_f64(),
            cpu_ns_per_request: s.client.cpu_ns_per_request,
            read_delay_us: s.client.read_delay_ns / 1_000.0,
            max_busy: s.client.max_busy,
            naps: s.naps(),
            nap_cause: s.nap_cause().map(crate::NapCause::name),
            client_bound: s.client.client_bound,
            note: s.client.client_bound.then(|| CLIENT_BOUND_NOTE.to_string()),
            workers: s
                .workers
                .iter()
                .map(|w| WorkerJson {
                    id: w.id,
                    cpu: w.cpu,
                    requests: w.requests,
                    rps: w.rps,
                    busy: w.busy,
                    cpu_s: w.cpu_time.as_secs_f64(),
                    context_switches: w.context_switches,
                    naps: w.naps,
                    latency: w.latency,
                })
                .collect(),
        }
    }
}
