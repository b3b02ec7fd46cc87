//! `--hdr-log FILE`: HdrHistogram interval logs (log format 1.3, V2 deflate-compressed
//! histograms) that the standard tools (Java `HistogramLogProcessor`, HdrHistogramVisualizer,
//! hdrhistogram-go) read.
//!
//! One line per interval and tag: corrected latency untagged (what tools plot by default),
//! `Tag=uncorrected` and `Tag=queue-wait` beside it. Values are ns, so the `Interval_Max`
//! column is divided by 10^6 and reads in ms, as the Java tools expect.
use hdrhistogram::Histogram;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use std::io::{self, Write};
use std::time::{Duration, SystemTime};

use crate::latency::Recorder;

/// One interval of a log: when it began, how long it lasted, and what it recorded.
#[derive(Debug, Clone)]
pub struct IntervalRecord {
    /// Start, from the start of the measured window.
    pub offset: Duration,
    /// Length (the last interval ends with the run, usually inside its period).
    pub length: Duration,
    /// Latency recorded in the interval, all workers merged.
    pub latency: Recorder,
}

/// An interval log being written.
pub struct IntervalLog<W: Write> {
    out: W,
    start: SystemTime,
    lines: Vec<IntervalRecord>,
}

impl<W: Write> IntervalLog<W> {
    /// A log whose timestamps count from `start` (the start of the measured window).
    pub fn new(out: W, start: SystemTime) -> Self {
        Self {
            out,
            start,
            lines: Vec::new(),
        }
    }

    /// Adds one interval.
    pub fn push(&mut self, interval: IntervalRecord) {
        self.lines.push(interval);
    }

    /// Writes the header and every interval, then flushes.
    pub fn finish(mut self) -> io::Result<W> {
        // The header the Java reference writes (HistogramLogWriter): version, start and base
        // time, then the CSV legend. The crate's builder writes neither the version nor the
        // legend, so they are written here and the builder only adds its divisor comment.
        let secs = self
            .start
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        write!(
            self.out,
            "#[Histogram log format version 1.3]\n\
             #[twelve bench: latency in ns; untagged lines are corrected latency]\n\
             #[StartTime: {secs:.3} (seconds since epoch)]\n\
             #[BaseTime: {secs:.3} (seconds since epoch)]\n\
             \"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n"
        )?;
        let mut ser = V2DeflateSerializer::new();
        {
            let mut log = IntervalLogWriterBuilder::new()
                .with_max_value_divisor(1e6)
                .begin_log_with(&mut self.out, &mut ser)
                .map_err(io::Error::other)?;
            for iv in &self.lines {
                let r = &iv.latency;
                for (tag, h) in [
                    (None, &r.corrected),
                    (Tag::new("uncorrected"), &r.uncorrected),
                    (Tag::new("queue-wait"), &r.wait),
                ] {
                    write_one(&mut log, h, iv.offset, iv.length, tag)?;
                }
            }
        }
        self.out.flush()?;
        Ok(self.out)
    }
}

fn write_one<W: Write>(
    log: &mut hdrhistogram::serialization::interval_log::IntervalLogWriter<
        '_,
        '_,
        W,
        V2DeflateSerializer,
    >,
    h: &Histogram<u64>,
    offset: Duration,
    length: Duration,
    tag: Option<Tag<'_>>,
) -> io::Result<()> {
    log.write_histogram(h, offset, length, tag)
        .map_err(|e| io::Error::other(format!("{e:?}")))
}
