//! `--timeseries FILE`: NDJSON, one line per wall-clock-aligned interval of one shard, each
//! carrying the interval's whole corrected, uncorrected and queue-wait histograms (V2
//! compressed, base64: the `.hlog` payload, see [`crate::hdrcodec`]). Intervals start on
//! multiples of the period since the Unix epoch, so the lines of shards on different machines
//! (clocks kept by NTP) fall into the same intervals, and adding the histograms of one
//! interval across shards is exact. The sum of a shard's lines is its summary's histograms,
//! bucket by bucket: the workers fold each closed interval into the run's total.
use crate::hdrcodec::CodecError;
use crate::hdrlog::IntervalRecord;
use crate::latency::Recorder;
use crate::raw::EncodedRecorder;
use crate::summary::Summary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, BufRead, Write};
use std::time::{Duration, SystemTime};

/// The identifier in every line's `schema` field.
pub const TIMESERIES_ID: &str = "twelve-timeseries/1";

/// One line: one interval of one shard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalLine {
    /// Always [`TIMESERIES_ID`].
    pub schema: String,
    /// The shard that measured (0 when the run was not sharded).
    pub shard: u32,
    /// Shards in the run (1 when not sharded).
    pub shards: u32,
    /// Start of the aligned interval, ns since the Unix epoch: a multiple of `period_ns`.
    pub start_unix_ns: u64,
    /// The interval's nominal length.
    pub period_ns: u64,
    /// How much of the interval lay in this shard's measured window (the first and last are
    /// usually partial).
    pub measured_ns: u64,
    /// Responses recorded in the interval.
    pub requests: u64,
    /// The interval's histograms.
    #[serde(flatten)]
    pub histograms: EncodedRecorder,
}

fn unix_ns(t: SystemTime) -> u64 {
    let d = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The lines of one run whose measured window began at `start`, its intervals recorded on
/// boundaries that are multiples of `period` since the epoch (see twelve-load's `run`).
pub fn lines(
    records: &[IntervalRecord],
    start: SystemTime,
    period: Duration,
    shard: (u32, u32),
) -> Vec<IntervalLine> {
    let period_ns = u64::try_from(period.as_nanos()).unwrap_or(u64::MAX).max(1);
    let start_ns = unix_ns(start);
    records
        .iter()
        .map(|r| {
            let at = start_ns + u64::try_from(r.offset.as_nanos()).unwrap_or(0);
            IntervalLine {
                schema: TIMESERIES_ID.to_string(),
                shard: shard.0,
                shards: shard.1,
                start_unix_ns: at - at % period_ns,
                period_ns,
                measured_ns: u64::try_from(r.length.as_nanos()).unwrap_or(u64::MAX),
                requests: r.latency.len(),
                histograms: EncodedRecorder::of(&r.latency),
            }
        })
        .collect()
}

/// Writes `lines` as NDJSON.
pub fn write(mut out: impl Write, lines: &[IntervalLine]) -> io::Result<()> {
    for l in lines {
        serde_json::to_writer(&mut out, l).map_err(io::Error::other)?;
        out.write_all(b"\n")?;
    }
    out.flush()
}

/// Reads NDJSON lines (blank lines skipped).
pub fn read(input: impl BufRead) -> io::Result<Vec<IntervalLine>> {
    let mut out = Vec::new();
    for (n, line) in input.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let l: IntervalLine = serde_json::from_str(&line).map_err(|e| {
            io::Error::new(io::ErrorKind::InvalidData, format!("line {}: {e}", n + 1))
        })?;
        if l.schema != TIMESERIES_ID {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("line {}: schema {:?}, not {TIMESERIES_ID}", n + 1, l.schema),
            ));
        }
        out.push(l);
    }
    Ok(out)
}

/// One aligned interval, every shard's lines added.
#[derive(Debug, Clone)]
pub struct MergedInterval {
    /// Start, ns since the epoch.
    pub start_unix_ns: u64,
    /// Nominal length.
    pub period_ns: u64,
    /// The shards that contributed.
    pub shards: Vec<u32>,
    /// Responses, summed.
    pub requests: u64,
    /// Histograms, added bucket by bucket.
    pub latency: Recorder,
}

/// Adds the lines of every shard per aligned interval, in time order.
pub fn merge(lines: &[IntervalLine]) -> Result<Vec<MergedInterval>, CodecError> {
    let mut by_start: BTreeMap<u64, MergedInterval> = BTreeMap::new();
    for l in lines {
        let m = by_start
            .entry(l.start_unix_ns)
            .or_insert_with(|| MergedInterval {
                start_unix_ns: l.start_unix_ns,
                period_ns: l.period_ns,
                shards: Vec::new(),
                requests: 0,
                latency: Recorder::new(),
            });
        m.shards.push(l.shard);
        m.requests += l.requests;
        m.latency.add(&l.histograms.decode()?);
    }
    Ok(by_start.into_values().collect())
}

/// The merged intervals as lines again (shard 0 of 1: the union), for `twelve merge
/// --timeseries`.
pub fn merged_lines(merged: &[MergedInterval]) -> Vec<IntervalLine> {
    merged
        .iter()
        .map(|m| IntervalLine {
            schema: TIMESERIES_ID.to_string(),
            shard: 0,
            shards: 1,
            start_unix_ns: m.start_unix_ns,
            period_ns: m.period_ns,
            measured_ns: m.period_ns,
            requests: m.requests,
            histograms: EncodedRecorder::of(&m.latency),
        })
        .collect()
}

/// Timeseries that do not add up to the reports of the same shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotAddingUp {
    /// Responses in the intervals.
    pub intervals: u64,
    /// Responses in the reports.
    pub reports: u64,
}

impl fmt::Display for NotAddingUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the timeseries do not add up to the reports ({} responses in the intervals, {} in \
             the reports): files of different runs, or a shard's file is missing",
            self.intervals, self.reports
        )
    }
}

impl std::error::Error for NotAddingUp {}

/// Checks that the merged intervals add up to the merged reports' summary, bucket by bucket:
/// each shard's summary is the sum of its intervals, so anything else means files of
/// different runs (or a lost line).
pub fn check_adds_up(merged: &[MergedInterval], summary: &Summary) -> Result<(), NotAddingUp> {
    let mut all = Recorder::new();
    for m in merged {
        all.add(&m.latency);
    }
    let requests: u64 = merged.iter().map(|m| m.requests).sum();
    let s = &summary.latency;
    if all.corrected != s.corrected
        || all.uncorrected != s.uncorrected
        || all.wait != s.wait
        || requests != summary.requests
    {
        return Err(NotAddingUp {
            intervals: requests,
            reports: summary.requests,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(offset_ms: u64, length_ms: u64, values: &[u64]) -> IntervalRecord {
        let mut latency = Recorder::new();
        for &v in values {
            latency.record(0, v / 2, v);
        }
        IntervalRecord {
            offset: Duration::from_millis(offset_ms),
            length: Duration::from_millis(length_ms),
            latency,
        }
    }

    /// A window that began 300 ms into a second: the first line is the partial second it
    /// began in, the next ones start on whole seconds.
    #[test]
    fn lines_start_on_whole_periods() {
        let start = SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_300);
        let recs = [
            record(0, 700, &[10_000]),
            record(700, 1_000, &[20_000, 30_000]),
            record(1_700, 500, &[]),
        ];
        let l = lines(&recs, start, Duration::from_secs(1), (2, 4));
        let starts: Vec<u64> = l.iter().map(|l| l.start_unix_ns / 1_000_000).collect();
        assert_eq!(
            starts,
            [1_700_000_000_000, 1_700_000_001_000, 1_700_000_002_000]
        );
        assert_eq!(l.iter().map(|l| l.requests).collect::<Vec<_>>(), [1, 2, 0]);
        assert_eq!(
            (l[0].shard, l[0].shards, l[0].measured_ns),
            (2, 4, 700_000_000)
        );
    }

    #[test]
    fn ndjson_round_trips_and_refuses_another_schema() {
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let l = lines(
            &[record(0, 1_000, &[5, 50_000])],
            start,
            Duration::from_secs(1),
            (0, 1),
        );
        let mut buf = Vec::new();
        write(&mut buf, &l).unwrap();
        assert_eq!(buf.iter().filter(|&&b| b == b'\n').count(), 1);
        assert_eq!(read(buf.as_slice()).unwrap(), l);
        let other = String::from_utf8(buf)
            .unwrap()
            .replace(TIMESERIES_ID, "x/1");
        assert!(read(other.as_bytes()).is_err());
    }

    /// Two shards' lines per interval add up, bucket by bucket, to the histogram that
    /// recorded every sample of that interval.
    #[test]
    fn merge_adds_shards_per_interval_exactly() {
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let a = [
            record(0, 1_000, &[1_000, 2_000]),
            record(1_000, 1_000, &[9_999]),
        ];
        let b = [record(0, 1_000, &[3_000]), record(1_000, 1_000, &[7, 8, 9])];
        let mut all = lines(&a, start, Duration::from_secs(1), (0, 2));
        all.extend(lines(&b, start, Duration::from_secs(1), (1, 2)));
        let m = merge(&all).unwrap();
        assert_eq!(m.len(), 2);
        for (k, values) in [
            (0, &[1_000u64, 2_000, 3_000][..]),
            (1, &[9_999, 7, 8, 9][..]),
        ] {
            let expect = record(0, 1_000, values).latency;
            assert_eq!(m[k].latency.corrected, expect.corrected);
            assert_eq!(m[k].latency.uncorrected, expect.uncorrected);
            assert_eq!(m[k].latency.wait, expect.wait);
            assert_eq!(m[k].requests, values.len() as u64);
            assert_eq!(m[k].shards, [0, 1]);
        }
    }

    /// A run of one worker that recorded `values`, `requests` responses in all.
    fn summary_of(values: &[u64], requests: u64) -> Summary {
        let mut w = crate::WorkerResult {
            requests,
            wall_time: Duration::from_secs(1),
            ..Default::default()
        };
        w.latency = record(0, 1_000, values).latency;
        let run = crate::RunResult {
            elapsed: Duration::from_secs(1),
            workers: vec![w],
            ..Default::default()
        };
        Summary::new(&run, &[])
    }

    #[test]
    fn intervals_must_add_up_to_the_reports() {
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let recs = [
            record(0, 1_000, &[1_000, 2_000]),
            record(1_000, 1_000, &[3_000]),
        ];
        let m = merge(&lines(&recs, start, Duration::from_secs(1), (0, 1))).unwrap();
        let values = [1_000, 2_000, 3_000];
        assert_eq!(check_adds_up(&m, &summary_of(&values, 3)), Ok(()));
        let err = check_adds_up(&m, &summary_of(&values, 4)).unwrap_err();
        assert_eq!(
            err,
            NotAddingUp {
                intervals: 3,
                reports: 4
            }
        );
        assert!(err.to_string().starts_with(
            "the timeseries do not add up to the reports (3 responses in the intervals, 4 in \
             the reports)"
        ));
        assert!(check_adds_up(&m, &summary_of(&[1_000, 2_000, 9_000], 3)).is_err());
    }
}
