//! `twelve merge`: the shards of a run split across load generators, made one run again.
//! Each shard's `--json` report carries its workers losslessly (`raw`); the merge checks the
//! shards belong together, concatenates their workers into one [`RunResult`] (so
//! [`crate::Summary::new`] adds the histograms bucket by bucket, sums every count and
//! divides the summed responses by the window, never averaging rates), and judges whether the
//! union is the load that was planned: a shard that was client-bound, did not reach its
//! connections, or delivered less than its share makes the merged run invalid.
use crate::raw::{RawError, RawRun};
use crate::result::{RunInfo, RunResult, ShardInfo};
use crate::summary::Summary;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// Below this share of its planned requests a counted shard under-delivered.
const DELIVERED_SHARE: f64 = 0.99;
/// An open-model request sent more than this after its slot was sent late: ten times the
/// accuracy wrk2 claims for its schedule (±1 ms), far above loopback latency.
const LATE_NS: u64 = 10_000_000;
/// Above this share of late requests a shard did not run its stripe of the schedule.
const LATE_SHARE: f64 = 0.01;

/// One shard's report, as `twelve merge` reads it from `--json` output.
#[derive(Debug, Clone, Deserialize)]
pub struct ShardReport {
    /// The configuration echo.
    pub config: ConfigIn,
    /// The workers, losslessly.
    pub raw: Option<RawRun>,
}

/// The fields of the report's `config` a merge needs.
#[derive(Debug, Clone, Deserialize)]
#[allow(missing_docs)]
pub struct ConfigIn {
    pub urls: Vec<String>,
    pub method: String,
    pub threads: usize,
    pub connections: usize,
    pub pipeline: usize,
    pub rate_per_s: Option<f64>,
    pub arrival: Option<String>,
    pub planned_duration_s: Option<f64>,
    pub planned_requests: Option<u64>,
    pub warmup_s: f64,
    pub timeout_s: f64,
    pub keep_alive: bool,
    pub requests_per_conn: Option<u64>,
    pub cpus: Vec<usize>,
    pub server_cpu: Option<usize>,
    #[serde(default)]
    pub shard: Option<ShardIn>,
    #[serde(default)]
    pub ramp: Option<String>,
    #[serde(default)]
    pub tls: Option<String>,
    #[serde(default)]
    pub io: Option<String>,
    #[serde(default)]
    pub rx_time: Option<String>,
    #[serde(default)]
    pub protocol: Option<String>,
    #[serde(default)]
    pub streams: Option<u32>,
}

/// The report's `config.shard`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[allow(missing_docs)]
pub struct ShardIn {
    pub index: u32,
    pub count: u32,
    pub connections: usize,
    pub rate_per_s: Option<f64>,
    pub requests: Option<u64>,
}

/// Whether the merged run is the load that was planned.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MergeVerdict {
    /// Shards merged.
    pub shards: u32,
    /// False when any shard was client-bound, short of connections, or under-delivered.
    pub valid: bool,
    /// One sentence per problem, naming the shard.
    pub reasons: Vec<String>,
    /// Latest minus earliest start of the shards' measured windows, seconds (wall clocks).
    pub start_spread_s: f64,
}

/// Why shards cannot be merged.
#[derive(Debug, Clone, PartialEq)]
pub enum MergeError {
    /// No reports.
    Empty,
    /// A report without `config.shard` or `raw` (not written by `twelve bench --shard`).
    NotAShard(usize),
    /// Reports of runs with different plans.
    Mismatch(usize, &'static str),
    /// A shard index twice, or one missing.
    Shards(String),
    /// A `raw` section that does not decode.
    Raw(usize, RawError),
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MergeError::Empty => f.write_str("no reports to merge"),
            MergeError::NotAShard(i) => write!(
                f,
                "report {}: not a shard's report (written by `twelve bench --shard I/N --json`)",
                i + 1
            ),
            MergeError::Mismatch(i, what) => write!(
                f,
                "report {}: {what} differs from the first report's: not shards of one run",
                i + 1
            ),
            MergeError::Shards(s) => f.write_str(s),
            MergeError::Raw(i, e) => write!(f, "report {}: {e}", i + 1),
        }
    }
}

impl std::error::Error for MergeError {}

/// Checks that `reports` are every shard of one run, exactly once each.
fn check(reports: &[ShardReport]) -> Result<ShardIn, MergeError> {
    let first = reports.first().ok_or(MergeError::Empty)?;
    let shard0 = first.config.shard.ok_or(MergeError::NotAShard(0))?;
    let mut seen = vec![false; shard0.count as usize];
    for (i, r) in reports.iter().enumerate() {
        let (c, f) = (&r.config, &first.config);
        let s = c.shard.ok_or(MergeError::NotAShard(i))?;
        if r.raw.is_none() {
            return Err(MergeError::NotAShard(i));
        }
        let same = [
            (s.count == shard0.count, "the shard count"),
            (s.connections == shard0.connections, "the total connections"),
            (s.rate_per_s == shard0.rate_per_s, "the rate"),
            (s.requests == shard0.requests, "the request count"),
            (c.urls == f.urls && c.method == f.method, "the target"),
            (c.pipeline == f.pipeline, "the pipeline depth"),
            (c.arrival == f.arrival, "the arrival process"),
            (c.planned_duration_s == f.planned_duration_s, "the duration"),
            (c.warmup_s == f.warmup_s, "the warm-up"),
            (c.keep_alive == f.keep_alive, "keep-alive"),
            (
                c.rx_time == f.rx_time,
                "when a response counts as received (--rx-time)",
            ),
        ];
        if let Some((_, what)) = same.iter().find(|(ok, _)| !ok) {
            return Err(MergeError::Mismatch(i, what));
        }
        let slot = seen
            .get_mut(s.index as usize)
            .ok_or_else(|| MergeError::Shards(format!("report {}: bad shard index", i + 1)))?;
        if std::mem::replace(slot, true) {
            return Err(MergeError::Shards(format!(
                "shard {} of {} given twice",
                s.index, s.count
            )));
        }
    }
    let missing: Vec<String> = (0..shard0.count)
        .filter(|&i| !seen[i as usize])
        .map(|i| i.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(MergeError::Shards(format!(
            "shard(s) {} of {} missing: a run short of a shard is not the planned load",
            missing.join(", "),
            shard0.count
        )));
    }
    Ok(shard0)
}

fn info_of(c: &ConfigIn) -> RunInfo {
    RunInfo {
        urls: c.urls.clone(),
        method: c.method.clone(),
        threads: c.threads,
        connections: c.connections,
        pipeline: c.pipeline,
        rate_per_s: c.rate_per_s,
        arrival: c.arrival.clone(),
        duration: c.planned_duration_s.map(Duration::from_secs_f64),
        requests: c.planned_requests,
        warmup: Duration::from_secs_f64(c.warmup_s),
        timeout: Duration::from_secs_f64(c.timeout_s),
        keep_alive: c.keep_alive,
        requests_per_conn: c.requests_per_conn,
        cpus: c.cpus.clone(),
        server_cpu: c.server_cpu,
        // Each shard's own host: the merged run's verdict judges the load, not the hosts.
        server_cpus: Vec::new(),
        shard: c.shard.map(|s| ShardInfo {
            index: s.index,
            count: s.count,
            connections: s.connections,
            rate_per_s: s.rate_per_s,
            requests: s.requests,
        }),
        // A shard's --max-errors is not in its report: the merged run is judged by the
        // default threshold.
        max_error_percent: None,
        ramp: c.ramp.clone(),
        // Not in a shard's report either: a merged ramp's end rate is judged against its mean.
        offered_end_per_s: None,
        tls: c.tls.clone(),
        io: c.io.clone(),
        rx_time: c.rx_time.clone(),
        protocol: c.protocol.clone().filter(|p| p != "http/1.1"),
        streams: c
            .streams
            .filter(|_| c.protocol.as_deref().is_some_and(|p| p != "http/1.1")),
    }
}

/// Each shard's run, rebuilt from its report.
fn shard_runs(reports: &[ShardReport]) -> Result<Vec<(RunResult, u64)>, MergeError> {
    reports
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let raw = r.raw.as_ref().ok_or(MergeError::NotAShard(i))?;
            let workers = raw.worker_results().map_err(|e| MergeError::Raw(i, e))?;
            let run = RunResult {
                info: info_of(&r.config),
                elapsed: Duration::from_nanos(raw.elapsed_ns),
                workers,
                // Shards load a URL: no embedded server to account for.
                server: None,
            };
            Ok((run, raw.start_unix_ns))
        })
        .collect()
}

/// Why one shard makes the merged run invalid, if it does.
fn problems(run: &RunResult) -> Vec<String> {
    let s = Summary::new(run, &[]);
    let index = run.info.shard.map_or(0, |s| s.index);
    let mut out = Vec::new();
    if s.client.client_bound {
        out.push(format!(
            "shard {index} was client-bound (a worker {:.0}% busy)",
            100.0 * s.client.max_busy
        ));
    }
    if !s.concurrency_reached {
        out.push(format!(
            "shard {index} reached {} of its {} connections",
            s.conns.peak_open, s.info.connections
        ));
    }
    let attempted = (s.requests + s.errors.total()) as f64;
    // The open model plans instants: a shard that sent more than 1% of its requests over
    // 10 ms after their slots (starved of CPU, or short of connections for its server) did
    // not run its stripe of the schedule. Its queue-wait histogram says how many. A counted
    // run also plans a count.
    let wait = &s.latency.wait;
    let late = wait.len() - wait.count_between(0, LATE_NS);
    let short = if s.info.rate_per_s.is_some() && late as f64 > LATE_SHARE * wait.len() as f64 {
        Some(format!(
            "{:.1}% of its requests sent over {} ms after their slots",
            100.0 * late as f64 / wait.len() as f64,
            LATE_NS / 1_000_000
        ))
    } else {
        match s.info.requests {
            Some(n) if attempted < DELIVERED_SHARE * n as f64 => Some(format!(
                "{attempted:.0} requests answered or failed of {n} planned"
            )),
            _ => None,
        }
    };
    if let Some(why) = short {
        out.push(format!("shard {index} under-delivered: {why}"));
    }
    out
}

/// Merges every shard of one run into one run (workers concatenated in shard order), with
/// the verdict on whether it is valid.
pub fn merge(reports: &[ShardReport]) -> Result<(RunResult, MergeVerdict), MergeError> {
    let total = check(reports)?;
    let mut runs = shard_runs(reports)?;
    runs.sort_by_key(|(r, _)| r.info.shard.map_or(0, |s| s.index));
    let reasons: Vec<String> = runs.iter().flat_map(|(r, _)| problems(r)).collect();
    let starts = runs.iter().map(|(_, t)| *t);
    let spread_ns = starts.clone().max().unwrap_or(0) - starts.min().unwrap_or(0);
    let mut info = runs[0].0.info.clone();
    info.connections = total.connections;
    info.rate_per_s = total.rate_per_s;
    info.requests = total.requests;
    info.threads = runs.iter().map(|(r, _)| r.info.threads).sum();
    info.cpus = runs.iter().flat_map(|(r, _)| r.info.cpus.clone()).collect();
    info.shard = None;
    let merged = RunResult {
        info,
        elapsed: runs
            .iter()
            .map(|(r, _)| r.elapsed)
            .max()
            .unwrap_or_default(),
        workers: runs.into_iter().flat_map(|(r, _)| r.workers).collect(),
        server: None,
    };
    let verdict = MergeVerdict {
        shards: total.count,
        valid: reasons.is_empty(),
        reasons,
        start_spread_s: spread_ns as f64 / 1e9,
    };
    Ok((merged, verdict))
}

/// A file given to `twelve merge`: a shard's `--json` report, or its `--timeseries` lines
/// (told apart by content).
#[derive(Debug)]
pub enum ShardFile {
    /// A shard's report.
    Report(Box<ShardReport>),
    /// A shard's timeseries.
    Timeseries(Vec<crate::timeseries::IntervalLine>),
}

/// A file that is neither a shard's report nor its timeseries.
#[derive(Debug)]
pub enum ShardFileError {
    /// It holds a bench report that does not read as one.
    Report(serde_json::Error),
    /// No bench report, and not timeseries lines either (why the lines did not read).
    Neither(std::io::Error),
}

impl fmt::Display for ShardFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Report(e) => e.fmt(f),
            Self::Neither(_) => {
                f.write_str("neither a bench --json report nor a --timeseries file")
            }
        }
    }
}

impl std::error::Error for ShardFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // `Report` shows the JSON error itself, so its source is the JSON error's own.
            Self::Report(e) => e.source(),
            Self::Neither(e) => Some(e),
        }
    }
}

impl ShardFile {
    /// Reads a file's text: the bench report in it, or else its timeseries lines.
    pub fn parse(text: &str) -> Result<Self, ShardFileError> {
        if let Some(doc) = report_in(text) {
            let report = serde_json::from_value(doc).map_err(ShardFileError::Report)?;
            return Ok(Self::Report(Box::new(report)));
        }
        let lines = crate::timeseries::read(text.as_bytes()).map_err(ShardFileError::Neither)?;
        Ok(Self::Timeseries(lines))
    }
}

/// The bench report in `text`: the whole text, or the pretty-printed document between other
/// lines (`kubectl logs` interleaves a pod's stderr, where warnings go, with its stdout).
fn report_in(text: &str) -> Option<serde_json::Value> {
    let doc = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .or_else(|| {
            let start = if text.starts_with("{\n") {
                0
            } else {
                text.find("\n{\n")? + 1
            };
            let end = text.rfind("\n}")? + 2;
            serde_json::from_str(text.get(start..end)?).ok()
        })?;
    (doc.get("schema").and_then(|s| s.as_str()) == Some(crate::SCHEMA_ID)).then_some(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! found {
        ($name:ident, $text:expr, $found:expr) => {
            #[test]
            fn $name() {
                assert_eq!(report_in($text).is_some(), $found);
            }
        };
    }

    found!(
        plain_report,
        "{\n  \"schema\": \"twelve-bench-report/1\"\n}\n",
        true
    );
    found!(
        report_among_log_lines,
        "twelve bench: WARNING: x\n{\n  \"schema\": \"twelve-bench-report/1\"\n}\nmore\n",
        true
    );
    found!(
        other_schema,
        "{\n  \"schema\": \"twelve-timeseries/1\"\n}\n",
        false
    );
    found!(ndjson, "{\"schema\":\"twelve-timeseries/1\"}\n", false);

    #[test]
    fn a_file_of_neither_kind_says_so_and_why() {
        let err = ShardFile::parse("hello\n").unwrap_err();
        assert!(matches!(err, ShardFileError::Neither(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            "neither a bench --json report nor a --timeseries file"
        );
        assert!(std::error::Error::source(&err).is_some());
    }

    #[test]
    fn an_empty_file_is_timeseries_without_lines() {
        assert!(matches!(ShardFile::parse(""), Ok(ShardFile::Timeseries(l)) if l.is_empty()));
    }
}
