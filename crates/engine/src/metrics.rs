//! Per-worker counters and their Prometheus text rendering.
//!
//! Each worker owns one [`WorkerMetrics`] and is its only writer. A counter is bumped with a
//! Relaxed load and a Relaxed store, not `fetch_add`: with a single writer no increment can be
//! lost, and on x86-64 both are plain `mov`s, whereas `fetch_add` is a `lock xadd` that costs
//! tens of cycles on the request path. Readers (the `/metrics` handler on any worker, or
//! [`ServerHandle::metrics`](crate::ServerHandle::metrics)) load each counter Relaxed and sum
//! over workers: every value is a count that only grows, so a sum that mixes slightly older and
//! newer values is still a valid reading of each counter; no ordering with other memory is
//! needed. No lock anywhere.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use twelve_http::ParseError;

/// A single-writer counter (see the module comment for why Relaxed load + store is enough).
#[derive(Debug, Default)]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    /// Adds `n`; only the owning worker calls this.
    #[inline]
    pub(crate) fn add(&self, n: u64) {
        self.0.store(self.0.load(Relaxed).wrapping_add(n), Relaxed);
    }

    #[inline]
    pub(crate) fn inc(&self) {
        self.add(1);
    }

    /// Sets a gauge (open connections); only the owning worker calls this.
    #[inline]
    pub(crate) fn set(&self, n: u64) {
        self.0.store(n, Relaxed);
    }

    pub(crate) fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

/// Kinds of timeout, as counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimeoutKind {
    Header = 0,
    Body = 1,
    KeepAlive = 2,
    Send = 3,
    Linger = 4,
    /// The request body arrived slower than `Timeouts::body_min_rate_per_s` on average.
    BodyRate = 5,
    /// An async handler did not answer within `Config::handler_timeout` (a 503).
    Handler = 6,
}

const TIMEOUT_NAMES: [&str; 7] = [
    "header",
    "body",
    "keep_alive",
    "send",
    "linger",
    "body_rate",
    "handler",
];

/// One counter per parse error, indexed by `ParseError::index`, and a last slot, "Other", in
/// case a variant added to the (non-exhaustive) enum is ever indexed past `ParseError::COUNT`.
const PARSE_SLOTS: usize = ParseError::COUNT + 1;

/// One worker's counters. Created by the server, written only by its worker.
#[derive(Debug)]
pub(crate) struct WorkerMetrics {
    pub(crate) requests: Counter,
    /// Responses by status class: index 1 = 1xx ... 5 = 5xx (0 unused).
    pub(crate) responses: [Counter; 6],
    pub(crate) bytes_in: Counter,
    pub(crate) bytes_out: Counter,
    pub(crate) accepts: Counter,
    pub(crate) closes: Counter,
    pub(crate) open_conns: Counter,
    pub(crate) resets: Counter,
    pub(crate) emfile_pauses: Counter,
    pub(crate) max_conns_pauses: Counter,
    pub(crate) steer_misses: Counter,
    /// Loop turns that answered at least one request.
    pub(crate) batches: Counter,
    /// Naps after a small batch (`Config::coalesce`).
    pub(crate) naps: Counter,
    pub(crate) timeouts: [Counter; 7],
    pub(crate) parse_errors: [Counter; PARSE_SLOTS],
    /// TLS handshakes completed, and of those resumed (a ticket or session id).
    pub(crate) tls_handshakes: Counter,
    pub(crate) tls_resumed: Counter,
    /// TLS sessions failed, by `twelve_tls::Failure::index`.
    pub(crate) tls_failures: [Counter; TLS_FAILURES],
    /// Connections that spoke HTTP/2, and the requests they carried.
    pub(crate) h2_conns: Counter,
    pub(crate) h2_requests: Counter,
    /// HTTP/2 stream and connection errors, by `Fault::NAMES`' order.
    pub(crate) h2_faults: [Counter; H2_FAULTS],
}

const H2_FAULTS: usize = twelve_http::h2::Fault::NAMES.len();

const TLS_FAILURES: usize = twelve_tls::Failure::ALL.len();

impl Default for WorkerMetrics {
    fn default() -> Self {
        Self {
            requests: Counter::default(),
            responses: Default::default(),
            bytes_in: Counter::default(),
            bytes_out: Counter::default(),
            accepts: Counter::default(),
            closes: Counter::default(),
            open_conns: Counter::default(),
            resets: Counter::default(),
            emfile_pauses: Counter::default(),
            max_conns_pauses: Counter::default(),
            steer_misses: Counter::default(),
            batches: Counter::default(),
            naps: Counter::default(),
            timeouts: Default::default(),
            parse_errors: std::array::from_fn(|_| Counter::default()),
            tls_handshakes: Counter::default(),
            tls_resumed: Counter::default(),
            tls_failures: Default::default(),
            h2_conns: Counter::default(),
            h2_requests: Counter::default(),
            h2_faults: std::array::from_fn(|_| Counter::default()),
        }
    }
}

impl WorkerMetrics {
    pub(crate) fn response(&self, status: u16) {
        self.responses[usize::from(status / 100).min(5)].inc();
    }

    pub(crate) fn timeout(&self, kind: TimeoutKind) {
        self.timeouts[kind as usize].inc();
    }

    pub(crate) fn tls_failure(&self, f: twelve_tls::Failure) {
        self.tls_failures[f.index()].inc();
    }

    pub(crate) fn h2_fault(&self, f: twelve_http::h2::Fault) {
        self.h2_faults[crate::conn::h2_fault_index(f)].inc();
    }

    pub(crate) fn parse_error(&self, e: ParseError) {
        self.parse_errors[e.index().min(ParseError::COUNT)].inc();
    }
}

/// A worker's counters as one batch of requests (those of one read) updates them: requests
/// at once, so that a `/metrics` response counts itself, and responses by class in a local
/// tally added to the worker's counters when the batch ends (on drop). A reader may thus see
/// the response counts lag the requests by at most one batch: the tests that wait on
/// counters wait for a value to be reached, and every batch ends before its responses are
/// sent. Looking the worker's counters up once per batch, and the tally, halve what the
/// counters cost a request (measured: docs/results.md#user-space-per-request).
pub(crate) struct BatchCounts<'m> {
    worker: &'m WorkerMetrics,
    responses: [u64; 6],
}

impl<'m> BatchCounts<'m> {
    pub(crate) fn new(worker: &'m WorkerMetrics) -> Self {
        Self {
            worker,
            responses: [0; 6],
        }
    }

    #[inline]
    pub(crate) fn request(&self) {
        self.worker.requests.inc();
    }

    #[inline]
    pub(crate) fn response(&mut self, status: u16) {
        self.responses[usize::from(status / 100).min(5)] += 1;
    }
}

impl Drop for BatchCounts<'_> {
    fn drop(&mut self) {
        for (counter, &n) in self.worker.responses.iter().zip(&self.responses) {
            if n > 0 {
                counter.add(n);
            }
        }
    }
}

/// One worker's counters and the CPU it runs on.
#[derive(Debug)]
struct PinnedMetrics {
    cpu: usize,
    counters: WorkerMetrics,
}

/// Every worker's counters, in worker order, shared through an `Arc` by the workers (each
/// writes only its own entry), the `/metrics` route and
/// [`ServerHandle::metrics`](crate::ServerHandle::metrics), which read them all.
#[derive(Debug)]
pub(crate) struct ServerMetrics {
    workers: Vec<PinnedMetrics>,
    generation: u64,
}

impl ServerMetrics {
    /// Zeroed counters for workers on `cpus`, in that order.
    pub(crate) fn new(cpus: &[usize], generation: u64) -> Self {
        let workers = cpus
            .iter()
            .map(|&cpu| PinnedMetrics {
                cpu,
                counters: WorkerMetrics::default(),
            })
            .collect();
        Self {
            workers,
            generation,
        }
    }

    /// Worker `i`'s counters.
    #[inline]
    pub(crate) fn worker(&self, i: usize) -> &WorkerMetrics {
        &self.workers[i].counters
    }

    /// Sums every worker's counters now (lock-free reads).
    pub(crate) fn snapshot(&self) -> MetricsSnapshot {
        let mut s = MetricsSnapshot::collect(self.workers.iter().map(|w| (w.cpu, &w.counters)));
        s.generation = self.generation;
        s
    }
}

/// A point-in-time sum of every worker's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MetricsSnapshot {
    /// Requests parsed and dispatched (errors answered by the codec are not counted here).
    pub requests: u64,
    /// Final responses by status class: `[_, 1xx, 2xx, 3xx, 4xx, 5xx]`.
    pub responses_by_class: [u64; 6],
    /// Bytes received from peers.
    pub bytes_in: u64,
    /// Bytes sent to peers (including `sendfile`).
    pub bytes_out: u64,
    /// Connections accepted.
    pub accepts: u64,
    /// Connections closed.
    pub closes: u64,
    /// Connections open now.
    pub open_conns: u64,
    /// Connections that failed with ECONNRESET, EPIPE or another socket error.
    pub resets: u64,
    /// Times a listener was paused because `accept` failed with EMFILE or ENFILE.
    pub emfile_pauses: u64,
    /// Times a worker stopped accepting because it held `max_conns_per_worker` connections.
    pub max_conns_pauses: u64,
    /// Accepted connections whose receiving CPU was not the worker's (only counted with
    /// `Config::check_steering`).
    pub steer_misses: u64,
    /// Loop turns that answered at least one request: `requests / batches` is how many
    /// requests one wake-up served, the figure batching and `Config::coalesce` move.
    pub batches: u64,
    /// Naps a worker took after a small batch (`Config::coalesce`).
    pub naps: u64,
    /// Timeouts by kind: header, body, keep_alive, send, linger, body_rate, handler.
    pub timeouts: [u64; 7],
    /// Parse errors by kind (`ParseError`'s `Debug` name), only those seen.
    pub parse_errors: Vec<(String, u64)>,
    /// Per worker: (CPU, accepts, requests).
    pub per_worker: Vec<(usize, u64, u64)>,
    /// TLS handshakes completed.
    pub tls_handshakes: u64,
    /// TLS handshakes that resumed an earlier session.
    pub tls_resumed: u64,
    /// TLS sessions failed, by kind (`twelve_tls::Failure::name`), kinds seen only.
    pub tls_failures: Vec<(&'static str, u64)>,
    /// Connections that spoke HTTP/2.
    pub h2_conns: u64,
    /// Requests that came over HTTP/2 (of `requests`).
    pub h2_requests: u64,
    /// HTTP/2 stream and connection errors by kind (`twelve_http::h2::Fault::name`), kinds
    /// seen only.
    pub h2_faults: Vec<(&'static str, u64)>,
    /// The server's generation (`Config::generation`).
    pub generation: u64,
}

impl MetricsSnapshot {
    /// Sums the counters of all workers, given as (CPU, counters).
    pub(crate) fn collect<'a>(
        workers: impl IntoIterator<Item = (usize, &'a WorkerMetrics)>,
    ) -> Self {
        let mut s = Self::default();
        let mut parse = [0u64; PARSE_SLOTS];
        let mut tls = [0u64; TLS_FAILURES];
        let mut h2 = [0u64; H2_FAULTS];
        for (cpu, w) in workers {
            s.h2_conns += w.h2_conns.get();
            s.h2_requests += w.h2_requests.get();
            for (i, c) in w.h2_faults.iter().enumerate() {
                h2[i] += c.get();
            }
            s.requests += w.requests.get();
            for (i, c) in w.responses.iter().enumerate() {
                s.responses_by_class[i] += c.get();
            }
            s.bytes_in += w.bytes_in.get();
            s.bytes_out += w.bytes_out.get();
            s.accepts += w.accepts.get();
            s.closes += w.closes.get();
            s.open_conns += w.open_conns.get();
            s.resets += w.resets.get();
            s.emfile_pauses += w.emfile_pauses.get();
            s.max_conns_pauses += w.max_conns_pauses.get();
            s.steer_misses += w.steer_misses.get();
            s.batches += w.batches.get();
            s.naps += w.naps.get();
            for (i, c) in w.timeouts.iter().enumerate() {
                s.timeouts[i] += c.get();
            }
            for (i, c) in w.parse_errors.iter().enumerate() {
                parse[i] += c.get();
            }
            s.per_worker.push((cpu, w.accepts.get(), w.requests.get()));
            s.tls_handshakes += w.tls_handshakes.get();
            s.tls_resumed += w.tls_resumed.get();
            for (i, c) in w.tls_failures.iter().enumerate() {
                tls[i] += c.get();
            }
        }
        for (i, n) in parse.iter().enumerate() {
            if *n > 0 {
                let name = ParseError::ALL
                    .get(i)
                    .map_or_else(|| "Other".to_owned(), |e| format!("{e:?}"));
                s.parse_errors.push((name, *n));
            }
        }
        for (f, n) in twelve_tls::Failure::ALL.iter().zip(tls) {
            if n > 0 {
                s.tls_failures.push((f.name(), n));
            }
        }
        for (name, n) in twelve_http::h2::Fault::NAMES.iter().zip(h2) {
            if n > 0 {
                s.h2_faults.push((name, n));
            }
        }
        s
    }

    /// Writes the Prometheus text exposition format (version 0.0.4).
    pub fn write_prometheus(&self, out: &mut String) {
        let mut counter = |name: &str, help: &str, value: u64| {
            let _ = writeln!(
                out,
                "# HELP twelve_{name} {help}\n# TYPE twelve_{name} counter\ntwelve_{name} {value}"
            );
        };
        counter("requests_total", "Requests dispatched.", self.requests);
        counter("received_bytes_total", "Bytes received.", self.bytes_in);
        counter("sent_bytes_total", "Bytes sent.", self.bytes_out);
        counter("accepts_total", "Connections accepted.", self.accepts);
        counter("closes_total", "Connections closed.", self.closes);
        counter(
            "resets_total",
            "Connections failed by reset or socket error.",
            self.resets,
        );
        counter(
            "emfile_pauses_total",
            "Listener pauses after EMFILE/ENFILE.",
            self.emfile_pauses,
        );
        counter(
            "max_conns_pauses_total",
            "Accept pauses at max connections.",
            self.max_conns_pauses,
        );
        counter(
            "steer_misses_total",
            "Connections accepted off their receiving CPU.",
            self.steer_misses,
        );
        counter(
            "batches_total",
            "Loop turns that answered at least one request.",
            self.batches,
        );
        counter(
            "coalesce_naps_total",
            "Naps after a small batch (--coalesce).",
            self.naps,
        );
        let _ = writeln!(
            out,
            "# HELP twelve_generation This process's generation (1 at a fresh start, +1 per upgrade).\n# TYPE twelve_generation gauge\ntwelve_generation {}",
            self.generation
        );
        let _ = writeln!(
            out,
            "# HELP twelve_open_connections Connections open now.\n# TYPE twelve_open_connections gauge\ntwelve_open_connections {}",
            self.open_conns
        );
        let _ = writeln!(
            out,
            "# HELP twelve_responses_total Responses by status class.\n# TYPE twelve_responses_total counter"
        );
        for class in 1..6 {
            let _ = writeln!(
                out,
                "twelve_responses_total{{class=\"{class}xx\"}} {}",
                self.responses_by_class[class]
            );
        }
        let _ = writeln!(
            out,
            "# HELP twelve_timeouts_total Timeouts by kind.\n# TYPE twelve_timeouts_total counter"
        );
        for (name, n) in TIMEOUT_NAMES.iter().zip(self.timeouts) {
            let _ = writeln!(out, "twelve_timeouts_total{{kind=\"{name}\"}} {n}");
        }
        let _ = writeln!(
            out,
            "# HELP twelve_parse_errors_total Rejected requests by rule.\n# TYPE twelve_parse_errors_total counter"
        );
        for (name, n) in &self.parse_errors {
            let _ = writeln!(out, "twelve_parse_errors_total{{kind=\"{name}\"}} {n}");
        }
        crate::metrics_tls::write_prometheus(self, out);
        crate::metrics_tls::write_protocols(self, out);
        let _ = writeln!(
            out,
            "# HELP twelve_worker_requests_total Requests by worker CPU.\n# TYPE twelve_worker_requests_total counter"
        );
        for (cpu, _, req) in &self.per_worker {
            let _ = writeln!(out, "twelve_worker_requests_total{{cpu=\"{cpu}\"}} {req}");
        }
        let _ = writeln!(
            out,
            "# HELP twelve_worker_accepts_total Accepts by worker CPU.\n# TYPE twelve_worker_accepts_total counter"
        );
        for (cpu, acc, _) in &self.per_worker {
            let _ = writeln!(out, "twelve_worker_accepts_total{{cpu=\"{cpu}\"}} {acc}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Requests count at once; responses by class when the batch ends.
    #[test]
    fn batch_counts_requests_at_once_and_responses_at_the_end() {
        let w = WorkerMetrics::default();
        let mut counts = BatchCounts::new(&w);
        for status in [100, 200, 204, 301, 404, 431, 500, 999] {
            counts.request();
            counts.response(status);
        }
        assert_eq!(w.requests.get(), 8);
        assert!(w.responses.iter().all(|c| c.get() == 0));
        drop(counts);
        let by_class: Vec<u64> = w.responses.iter().map(Counter::get).collect();
        assert_eq!(by_class, [0, 1, 2, 1, 2, 2]);
    }

    #[test]
    fn counters_sum_over_workers() {
        let a = WorkerMetrics::default();
        let b = WorkerMetrics::default();
        a.requests.add(3);
        b.requests.inc();
        a.response(200);
        b.response(404);
        b.parse_error(ParseError::BareLf);
        b.timeout(TimeoutKind::Send);
        let s = MetricsSnapshot::collect([(0, &a), (1, &b)]);
        assert_eq!(s.requests, 4);
        assert_eq!(s.responses_by_class, [0, 0, 1, 0, 1, 0]);
        assert_eq!(s.parse_errors, vec![("BareLf".to_owned(), 1)]);
        assert_eq!(s.timeouts, [0, 0, 0, 1, 0, 0, 0]);
        assert_eq!(s.per_worker, vec![(0, 0, 3), (1, 0, 1)]);
    }

    #[test]
    fn prometheus_text_has_one_sample_per_line() {
        let a = WorkerMetrics::default();
        a.requests.add(7);
        a.parse_error(ParseError::MissingHost);
        let mut out = String::new();
        MetricsSnapshot::collect([(0, &a)]).write_prometheus(&mut out);
        assert!(out.contains("\ntwelve_requests_total 7\n"));
        assert!(out.contains("\ntwelve_batches_total 0\n"));
        assert!(out.contains("twelve_parse_errors_total{kind=\"MissingHost\"} 1\n"));
        assert!(
            out.lines()
                .all(|l| l.starts_with('#') || l.starts_with("twelve_"))
        );
    }
}
