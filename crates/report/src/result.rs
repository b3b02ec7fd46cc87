//! What a bench run hands over: configuration echo, and per-worker counts and histograms,
//! exactly as the workers kept them. [`crate::Summary`] merges them once; the writers read
//! the summary.
use crate::latency::Recorder;
use std::time::Duration;

/// The run's configuration, echoed into every report.
#[derive(Debug, Clone, Default)]
pub struct RunInfo {
    /// Target URLs, taken in turn.
    pub urls: Vec<String>,
    /// HTTP method.
    pub method: String,
    /// Worker threads.
    pub threads: usize,
    /// Connections requested.
    pub connections: usize,
    /// Requests in flight per connection.
    pub pipeline: usize,
    /// `None` for the closed model; the global arrival rate for the open model.
    pub rate_per_s: Option<f64>,
    /// `"uniform"` or `"poisson"` (open model only).
    pub arrival: Option<String>,
    /// Open model with a rate ramp: how it ramps (`rate_per_s` is then its mean).
    pub ramp: Option<String>,
    /// Open model: the offered rate over the last 20% of the window, when it differs from
    /// `rate_per_s` (a ramp).
    pub offered_end_per_s: Option<f64>,
    /// Planned measured duration (after warm-up), when run by time.
    pub duration: Option<Duration>,
    /// Planned request count, when run by count.
    pub requests: Option<u64>,
    /// Warm-up excluded from every statistic.
    pub warmup: Duration,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Whether connections are kept alive between requests.
    pub keep_alive: bool,
    /// Requests per connection before the client reopens it (`None`: unlimited).
    pub requests_per_conn: Option<u64>,
    /// CPUs the workers were pinned to, in worker order.
    pub cpus: Vec<usize>,
    /// CPU the embedded server ran on, when there was one.
    pub server_cpu: Option<usize>,
    /// CPUs the server's threads may run on, where known (the embedded server's, or a
    /// loopback target's listening process): shared with `cpus`, the two competed.
    pub server_cpus: Vec<usize>,
    /// `https://`: how the server was trusted (said loudly for `--insecure`) and whether
    /// sessions resumed.
    pub tls: Option<String>,
    /// The client's socket engine (`epoll` or `uring`), when known.
    pub io: Option<String>,
    /// When a response counts as received: `kernel` (the kernel's receive stamp) or `read`
    /// (when the client read it), when known (`--rx-time`).
    pub rx_time: Option<String>,
    /// Failures above this share of attempts, percent, make the run unmeasured
    /// (`--max-errors`; `None`: [`crate::verdict::DEFAULT_MAX_ERROR_PERCENT`]).
    pub max_error_percent: Option<f64>,
    /// Which slice of a sharded run this was (`--shard I/N`); `connections`, `rate_per_s`
    /// and `requests` above are then the shard's own.
    pub shard: Option<ShardInfo>,
    /// `h2` or `h2c` for an HTTP/2 run (`None`: HTTP/1.1).
    pub protocol: Option<String>,
    /// HTTP/2: the most streams per connection asked for (`--streams`).
    pub streams: Option<u32>,
}

impl RunInfo {
    /// The protocol's name: `http/1.1`, `h2` or `h2c`.
    pub fn protocol_name(&self) -> &str {
        self.protocol.as_deref().unwrap_or("http/1.1")
    }
}

/// A shard of a run split across load generators, and the whole run it is part of.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ShardInfo {
    /// This shard's index, 0-based.
    pub index: u32,
    /// Shards in the run.
    pub count: u32,
    /// Connections of the whole run.
    pub connections: usize,
    /// Arrival rate of the whole run (open model).
    pub rate_per_s: Option<f64>,
    /// Planned request count of the whole run (counted runs).
    pub requests: Option<u64>,
}

/// Failures by class. Counts are events (one per failed request or connect attempt).
#[derive(Debug, Clone)]
pub struct Errors {
    /// Connect refused (ECONNREFUSED).
    pub connect_refused: u64,
    /// Connect did not finish within the connect timeout.
    pub connect_timeout: u64,
    /// Any other connect failure (ENETUNREACH, …; EADDRNOTAVAIL and EMFILE are counted in
    /// their own classes, and here too, so the sum stays what it was).
    pub connect_other: u64,
    /// Of `connect_other`: EADDRNOTAVAIL, no local port left for the target's address.
    pub connect_no_port: u64,
    /// Of `connect_other`: EMFILE/ENFILE, no descriptor left for a socket.
    pub connect_no_fd: u64,
    /// Reset, or EOF in the middle of a response head.
    pub read: u64,
    /// A send failed.
    pub write: u64,
    /// A request got no complete response within the timeout (counted once, then the
    /// connection is reopened).
    pub timeout: u64,
    /// The response could not be parsed.
    pub parse: u64,
    /// The peer closed before the framed body was complete.
    pub body_length: u64,
    /// Responses by status code (index = code, 0..1000).
    pub status: Box<[u64; 1000]>,
    /// HTTP/2's own failures, by kind.
    pub h2: H2Errors,
}

/// HTTP/2's failures by kind (all 0 over HTTP/1.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct H2Errors {
    /// The server reset a stream (RST_STREAM other than REFUSED_STREAM): no answer.
    pub reset: u64,
    /// Requests the server did not process (REFUSED_STREAM, or above a GOAWAY's last
    /// stream): not sent, never answered; a `-n` run sends them again.
    pub refused: u64,
    /// Responses that broke a rule of their stream (no `:status`, over the stream's window):
    /// the client reset the stream.
    pub stream: u64,
    /// GOAWAY frames received (the connection ends once its served streams end).
    pub goaway: u64,
    /// Connection errors (malformed frames, HPACK, flow control): the client sent GOAWAY.
    pub protocol: u64,
    /// Flow-control stalls: requests whose body still waited for the server's stream or
    /// connection window when the request timed out (counted here, not as timeouts).
    pub stall: u64,
    /// The fewest streams in force on any connection (`--streams`, lowered by the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS); 0 when no connection spoke HTTP/2.
    pub stream_limit: u64,
}

impl H2Errors {
    /// Adds `o` into `self`.
    pub fn add(&mut self, o: &H2Errors) {
        self.reset += o.reset;
        self.refused += o.refused;
        self.stream += o.stream;
        self.goaway += o.goaway;
        self.protocol += o.protocol;
        self.stall += o.stall;
        self.stream_limit = match (self.stream_limit, o.stream_limit) {
            (0, b) => b,
            (a, 0) => a,
            (a, b) => a.min(b),
        };
    }

    /// Every HTTP/2 failure but GOAWAY (a server's graceful close is not an error).
    pub fn total(&self) -> u64 {
        self.reset + self.refused + self.stream + self.protocol + self.stall
    }
}

impl Default for Errors {
    fn default() -> Self {
        Self {
            connect_refused: 0,
            connect_timeout: 0,
            connect_other: 0,
            connect_no_port: 0,
            connect_no_fd: 0,
            read: 0,
            write: 0,
            timeout: 0,
            parse: 0,
            body_length: 0,
            status: Box::new([0; 1000]),
            h2: H2Errors::default(),
        }
    }
}

impl Errors {
    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &Errors) {
        self.connect_refused += other.connect_refused;
        self.connect_timeout += other.connect_timeout;
        self.connect_other += other.connect_other;
        self.connect_no_port += other.connect_no_port;
        self.connect_no_fd += other.connect_no_fd;
        self.read += other.read;
        self.write += other.write;
        self.timeout += other.timeout;
        self.parse += other.parse;
        self.body_length += other.body_length;
        self.h2.add(&other.h2);
        for (a, b) in self.status.iter_mut().zip(other.status.iter()) {
            *a += b;
        }
    }

    /// Responses whose status is not 2xx or 3xx.
    pub fn bad_status(&self) -> u64 {
        self.status
            .iter()
            .enumerate()
            .filter(|(code, _)| !(200..400).contains(code))
            .map(|(_, n)| n)
            .sum()
    }

    /// Every failure of every class, bad statuses included.
    pub fn total(&self) -> u64 {
        self.connect_refused
            + self.connect_timeout
            + self.connect_other
            + self.read
            + self.write
            + self.timeout
            + self.parse
            + self.body_length
            + self.h2.total()
            + self.bad_status()
    }

    /// Non-zero status codes with their counts, in code order.
    pub fn status_counts(&self) -> impl Iterator<Item = (u16, u64)> + '_ {
        self.status
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(code, n)| (code as u16, *n))
    }
}

/// Connection accounting: did the run reach the concurrency it asked for?
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnCounts {
    /// Connect attempts that succeeded (initial and reconnects).
    pub established: u64,
    /// Connect attempts that failed.
    pub failed: u64,
    /// Connections opened to replace one that closed (after its first).
    pub reconnects: u64,
    /// Most connections open at once.
    pub peak_open: u64,
}

impl ConnCounts {
    /// Adds another worker's counts; peaks add because workers hold disjoint connections.
    pub fn add(&mut self, other: &ConnCounts) {
        self.established += other.established;
        self.failed += other.failed;
        self.reconnects += other.reconnects;
        self.peak_open += other.peak_open;
    }
}

/// One worker's result.
#[derive(Debug, Clone, Default)]
pub struct WorkerResult {
    /// CPU it was pinned to, if pinned.
    pub cpu: Option<usize>,
    /// Complete responses in the measured window.
    pub requests: u64,
    /// Bytes received in the measured window.
    pub bytes_read: u64,
    /// Latency histograms of the measured window.
    pub latency: Recorder,
    /// Complete responses in each whole second of the measured window.
    pub per_second: Vec<u64>,
    /// Complete responses in the last 20% of a timed run's planned window (the self-check's
    /// end rate: a run that falls behind shows it there first).
    pub tail_requests: u64,
    /// CPU time the worker thread used in the measured window.
    pub cpu_time: Duration,
    /// Wall time of the worker's measured window.
    pub wall_time: Duration,
    /// Voluntary plus involuntary context switches of the thread, whole run.
    pub context_switches: u64,
    /// Naps taken after small batches of responses (`--coalesce`), whole run.
    pub naps: u64,
    /// Why the worker napped; `None` when it never did.
    pub nap_cause: Option<NapCause>,
    /// Summed over the measured responses: how long each waited in the client between its
    /// kernel receive stamp and the read that booked it (`--rx-time kernel`; 0 otherwise).
    /// Time a closed-model connection spends here is not spent at the server.
    pub read_delay: Duration,
    /// Failures by class (measured window).
    pub errors: Errors,
    /// Connection accounting (whole run, warm-up included: connections open during it).
    pub conns: ConnCounts,
    /// Phases of the first request on each new connection (measured window).
    pub phases: crate::Phases,
}

/// Why a worker napped (`--coalesce`): a client with CPU to spare never naps unless asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NapCause {
    /// `auto`: the worker was the limit (at least 90% busy over a window).
    ClientLimit,
    /// `--coalesce on` or a fixed nap.
    Asked,
}

impl NapCause {
    /// The JSON's name for it.
    pub fn name(self) -> &'static str {
        match self {
            NapCause::ClientLimit => "client-limit",
            NapCause::Asked => "asked",
        }
    }
}

/// What the embedded server spent over (about) the measured window: its threads' CPU time
/// and the responses the client counted between the same two readings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerCost {
    /// CPU time of the server's threads.
    pub cpu: Duration,
    /// Responses between the readings.
    pub requests: u64,
    /// Wall time between the readings.
    pub wall: Duration,
}

/// A finished run: configuration plus every worker's result.
#[derive(Debug, Clone, Default)]
pub struct RunResult {
    /// Configuration echo.
    pub info: RunInfo,
    /// Measured wall time (warm-up excluded).
    pub elapsed: Duration,
    /// Workers, in order.
    pub workers: Vec<WorkerResult>,
    /// The embedded server's cost, when the run had one (no URL).
    pub server: Option<ServerCost>,
}

impl RunResult {
    /// All workers' histograms merged without loss.
    pub fn merged_latency(&self) -> Recorder {
        let mut all = Recorder::new();
        for w in &self.workers {
            all.add(&w.latency);
        }
        all
    }

    /// All workers' errors summed.
    pub fn merged_errors(&self) -> Errors {
        let mut all = Errors::default();
        for w in &self.workers {
            all.add(&w.errors);
        }
        all
    }

    /// All workers' connection counts summed.
    pub fn merged_conns(&self) -> ConnCounts {
        let mut all = ConnCounts::default();
        for w in &self.workers {
            all.add(&w.conns);
        }
        all
    }

    /// Complete responses, all workers.
    pub fn requests(&self) -> u64 {
        self.workers.iter().map(|w| w.requests).sum()
    }

    /// Bytes received, all workers.
    pub fn bytes_read(&self) -> u64 {
        self.workers.iter().map(|w| w.bytes_read).sum()
    }

    /// Responses per second over the measured window.
    pub fn rps(&self) -> f64 {
        per_s(self.requests() as f64, self.elapsed)
    }

    /// The highest busy share (thread CPU time over wall time) of any worker, 0–1.
    pub fn max_busy(&self) -> f64 {
        self.workers.iter().map(busy).fold(0.0, f64::max)
    }

    /// Client CPU time summed over workers.
    pub fn client_cpu(&self) -> Duration {
        self.workers.iter().map(|w| w.cpu_time).sum()
    }

    /// Mean time a response waited in the client after the kernel received it, ns (0 when
    /// none completed, or without kernel receive stamps).
    pub fn read_delay_ns_mean(&self) -> f64 {
        let n = self.requests();
        let sum: Duration = self.workers.iter().map(|w| w.read_delay).sum();
        if n == 0 {
            0.0
        } else {
            sum.as_nanos() as f64 / n as f64
        }
    }

    /// Client CPU ns per complete response (0 when none completed).
    pub fn cpu_ns_per_request(&self) -> f64 {
        let n = self.requests();
        if n == 0 {
            0.0
        } else {
            self.client_cpu().as_nanos() as f64 / n as f64
        }
    }

    /// Whether the client, not the server, limited the run (a worker ≥ 90% busy).
    pub fn client_bound(&self) -> bool {
        self.max_busy() >= CLIENT_BOUND_BUSY
    }

    /// Whether every requested connection was open at once at some point.
    pub fn concurrency_reached(&self) -> bool {
        self.merged_conns().peak_open >= self.info.connections as u64
    }
}

/// The busy share at which a run measures the client rather than the server. k6's docs say
/// to keep a load generator under 80% CPU; at 90% its own queueing shows in the latency.
pub const CLIENT_BOUND_BUSY: f64 = 0.90;

/// A worker's busy share, 0–1.
pub fn busy(w: &WorkerResult) -> f64 {
    if w.wall_time.is_zero() {
        0.0
    } else {
        (w.cpu_time.as_secs_f64() / w.wall_time.as_secs_f64()).min(1.0)
    }
}

/// `n` per second of `d` (0 for a zero duration).
pub fn per_s(n: f64, d: Duration) -> f64 {
    if d.is_zero() {
        0.0
    } else {
        n / d.as_secs_f64()
    }
}
