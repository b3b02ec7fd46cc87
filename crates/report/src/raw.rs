//! The `raw` section of a `--json` report: every worker's counts and whole histograms
//! exactly as it kept them, so `twelve merge` rebuilds the [`RunResult`] of each shard
//! and summarises the union through the same [`crate::Summary::new`] a single run uses,
//! rather than combining rounded figures (Locust's merge of rounded histograms can report a
//! p99 above the max).
use crate::hdrcodec::{self, CodecError};
use crate::latency::Recorder;
use crate::result::{ConnCounts, Errors, RunResult, WorkerResult};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// A run's workers, losslessly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawRun {
    /// Measured window, ns.
    pub elapsed_ns: u64,
    /// Wall-clock start of the measured window, ns since the Unix epoch.
    pub start_unix_ns: u64,
    /// Every worker, in order.
    pub workers: Vec<RawWorker>,
}

/// Three histograms as [`hdrcodec`] text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EncodedRecorder {
    /// Done minus intended start.
    pub corrected: String,
    /// Done minus actual send.
    pub uncorrected: String,
    /// Actual send minus intended start.
    pub queue_wait: String,
}

impl EncodedRecorder {
    /// The histograms of `r`, encoded.
    pub fn of(r: &Recorder) -> Self {
        Self {
            corrected: hdrcodec::encode(&r.corrected),
            uncorrected: hdrcodec::encode(&r.uncorrected),
            queue_wait: hdrcodec::encode(&r.wait),
        }
    }

    /// The histograms, decoded.
    pub fn decode(&self) -> Result<Recorder, CodecError> {
        Ok(Recorder {
            corrected: hdrcodec::decode(&self.corrected)?,
            uncorrected: hdrcodec::decode(&self.uncorrected)?,
            wait: hdrcodec::decode(&self.queue_wait)?,
        })
    }
}

/// One worker, losslessly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawWorker {
    /// Pinned CPU.
    pub cpu: Option<usize>,
    /// Complete responses.
    pub requests: u64,
    /// Bytes received.
    pub bytes_read: u64,
    /// Responses in each whole second.
    pub per_second: Vec<u64>,
    /// Thread CPU time, ns.
    pub cpu_ns: u64,
    /// Measured wall time, ns.
    pub wall_ns: u64,
    /// Context switches.
    pub context_switches: u64,
    /// Naps (`--coalesce`).
    pub naps: u64,
    /// Why it napped; absent when it never did, and in reports written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nap_cause: Option<crate::NapCause>,
    /// Summed wait of the responses between kernel receipt and read, ns; absent in reports
    /// written before it was recorded.
    #[serde(default)]
    pub read_delay_ns: u64,
    /// Complete responses in the last 20% of a timed run's window (the self-check's end
    /// rate); absent in reports written before it was recorded.
    #[serde(default)]
    pub tail_requests: u64,
    /// Failures by class; `status` by code.
    pub errors: RawErrors,
    /// Connection accounting.
    pub conns: RawConns,
    /// Latency.
    pub histograms: EncodedRecorder,
}

/// [`Errors`] as data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct RawErrors {
    pub connect_refused: u64,
    pub connect_timeout: u64,
    pub connect_other: u64,
    pub read: u64,
    pub write: u64,
    pub timeout: u64,
    pub parse: u64,
    pub body_length: u64,
    /// Responses by status code.
    pub status: BTreeMap<u16, u64>,
    /// HTTP/2's failures by kind (reset, refused, stream, goaway, protocol, stream_limit),
    /// on an HTTP/2 run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub h2: Option<[u64; 6]>,
    /// HTTP/2's flow-control stalls (a field of its own, so `h2` reads as it always did).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub h2_stall: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// [`ConnCounts`] as data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct RawConns {
    pub established: u64,
    pub failed: u64,
    pub reconnects: u64,
    pub peak_open: u64,
}

/// Why a `raw` section could not be turned back into a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawError {
    /// A histogram did not decode.
    Histogram(CodecError),
    /// A status code outside 0..1000.
    Status(u16),
}

impl std::fmt::Display for RawError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RawError::Histogram(e) => write!(f, "{e}"),
            RawError::Status(c) => write!(f, "status code {c} out of range"),
        }
    }
}

impl std::error::Error for RawError {}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl RawRun {
    /// The workers of `run`, whose measured window began at `start_unix_ns`.
    pub fn of(run: &RunResult, start_unix_ns: u64) -> Self {
        Self {
            elapsed_ns: ns(run.elapsed),
            start_unix_ns,
            workers: run.workers.iter().map(RawWorker::of).collect(),
        }
    }

    /// The workers, decoded, in order.
    pub fn worker_results(&self) -> Result<Vec<WorkerResult>, RawError> {
        self.workers.iter().map(RawWorker::decode).collect()
    }
}

impl RawWorker {
    fn of(w: &WorkerResult) -> Self {
        let e = &w.errors;
        Self {
            cpu: w.cpu,
            requests: w.requests,
            bytes_read: w.bytes_read,
            per_second: w.per_second.clone(),
            cpu_ns: ns(w.cpu_time),
            wall_ns: ns(w.wall_time),
            context_switches: w.context_switches,
            naps: w.naps,
            nap_cause: w.nap_cause,
            read_delay_ns: ns(w.read_delay),
            tail_requests: w.tail_requests,
            errors: RawErrors {
                connect_refused: e.connect_refused,
                connect_timeout: e.connect_timeout,
                connect_other: e.connect_other,
                read: e.read,
                write: e.write,
                timeout: e.timeout,
                parse: e.parse,
                body_length: e.body_length,
                status: e.status_counts().collect(),
                h2: (e.h2.stream_limit > 0).then_some([
                    e.h2.reset,
                    e.h2.refused,
                    e.h2.stream,
                    e.h2.goaway,
                    e.h2.protocol,
                    e.h2.stream_limit,
                ]),
                h2_stall: e.h2.stall,
            },
            conns: RawConns {
                established: w.conns.established,
                failed: w.conns.failed,
                reconnects: w.conns.reconnects,
                peak_open: w.conns.peak_open,
            },
            histograms: EncodedRecorder::of(&w.latency),
        }
    }

    fn decode(&self) -> Result<WorkerResult, RawError> {
        let e = &self.errors;
        let mut errors = Errors {
            connect_refused: e.connect_refused,
            connect_timeout: e.connect_timeout,
            connect_other: e.connect_other,
            read: e.read,
            write: e.write,
            timeout: e.timeout,
            parse: e.parse,
            body_length: e.body_length,
            ..Errors::default()
        };
        if let Some([reset, refused, stream, goaway, protocol, stream_limit]) = e.h2 {
            errors.h2 = crate::H2Errors {
                reset,
                refused,
                stream,
                goaway,
                protocol,
                stream_limit,
                stall: e.h2_stall,
            };
        }
        for (&code, &n) in &e.status {
            *errors
                .status
                .get_mut(usize::from(code))
                .ok_or(RawError::Status(code))? = n;
        }
        Ok(WorkerResult {
            cpu: self.cpu,
            requests: self.requests,
            bytes_read: self.bytes_read,
            latency: self.histograms.decode().map_err(RawError::Histogram)?,
            per_second: self.per_second.clone(),
            cpu_time: Duration::from_nanos(self.cpu_ns),
            wall_time: Duration::from_nanos(self.wall_ns),
            context_switches: self.context_switches,
            naps: self.naps,
            nap_cause: self.nap_cause,
            read_delay: Duration::from_nanos(self.read_delay_ns),
            tail_requests: self.tail_requests,
            errors,
            conns: ConnCounts {
                established: self.conns.established,
                failed: self.conns.failed,
                reconnects: self.conns.reconnects,
                peak_open: self.conns.peak_open,
            },
            // The new-connection phases (TLS runs) are not in a shard's raw record yet: a
            // merged run reports none.
            phases: Default::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_survives_the_round_trip_through_json() {
        let mut w = WorkerResult {
            cpu: Some(3),
            requests: 3,
            bytes_read: 999,
            per_second: vec![2, 1],
            cpu_time: Duration::from_nanos(123_456_789),
            wall_time: Duration::from_nanos(2_000_000_001),
            context_switches: 17,
            naps: 4,
            tail_requests: 2,
            ..Default::default()
        };
        w.latency.record(0, 10, 23_456);
        w.latency.record(5, 5, 1_000_005);
        w.latency.record(0, 7_000_000, 9_000_000);
        w.errors.timeout = 2;
        w.errors.status[200] = 3;
        w.errors.status[503] = 1;
        w.conns.peak_open = 8;
        w.errors.h2 = crate::H2Errors {
            reset: 1,
            refused: 2,
            stream: 3,
            goaway: 4,
            protocol: 5,
            stall: 6,
            stream_limit: 10,
        };
        let run = RunResult {
            elapsed: Duration::from_secs(2),
            workers: vec![w.clone()],
            ..Default::default()
        };
        let raw = RawRun::of(&run, 1_700_000_000_000_000_000);
        let text = serde_json::to_string(&raw).unwrap();
        let back: RawRun = serde_json::from_str(&text).unwrap();
        assert_eq!(back, raw);
        let got = &back.worker_results().unwrap()[0];
        assert_eq!(got.latency.corrected, w.latency.corrected);
        assert_eq!(got.latency.uncorrected, w.latency.uncorrected);
        assert_eq!(got.latency.wait, w.latency.wait);
        assert_eq!(got.errors.status[..], w.errors.status[..]);
        assert_eq!(
            (
                got.requests,
                got.per_second.clone(),
                got.cpu_time,
                got.wall_time
            ),
            (3, vec![2, 1], w.cpu_time, w.wall_time)
        );
        assert_eq!((got.errors.timeout, got.conns), (2, w.conns));
        assert_eq!(got.errors.h2, w.errors.h2);
    }
}
