//! The sweep CSV: one row per step, the columns ab+.sh wrote (start, concurrency, complete,
//! failed, tps, latency statistics) plus p99.9 and the client's busy share.
use super::step::{LoadKind, Step, StepRow};
use std::fmt::Write as _;
use std::io::{self, Write};

/// Header of a concurrency sweep. Latencies are µs (corrected), `client_busy` 0–1.
pub const CSV_HEADER_CLOSED: &str = "start_time,concurrency,complete,failed,req_per_s,min_us,\
mean_us,stddev_us,p50_us,p90_us,p95_us,p99_us,p99.9_us,max_us,client_busy";
/// Header of a rate sweep (the second column is the offered rate, req/s).
pub const CSV_HEADER_OPEN: &str = "start_time,rate,complete,failed,req_per_s,min_us,\
mean_us,stddev_us,p50_us,p90_us,p95_us,p99_us,p99.9_us,max_us,client_busy";

/// Header of a sweep over HTTP/2 streams per connection (`--streams`, `-c` fixed).
pub const CSV_HEADER_STREAMS: &str = "start_time,streams,complete,failed,req_per_s,min_us,\
mean_us,stddev_us,p50_us,p90_us,p95_us,p99_us,p99.9_us,max_us,client_busy";

/// Writes the header and one row per step.
pub fn write_csv(out: &mut impl Write, kind: LoadKind, steps: &[Step]) -> io::Result<()> {
    writeln!(out, "{}", header(kind))?;
    for s in steps {
        writeln!(out, "{}", row(&StepRow::of(s)))?;
    }
    Ok(())
}

/// The header line for `kind`.
pub fn header(kind: LoadKind) -> &'static str {
    match kind {
        LoadKind::Concurrency => CSV_HEADER_CLOSED,
        LoadKind::Rate => CSV_HEADER_OPEN,
        LoadKind::Streams => CSV_HEADER_STREAMS,
    }
}

/// One data line (no newline). Latencies keep three decimals (ns resolution); the load prints
/// as an integer when it is one.
pub fn row(r: &StepRow) -> String {
    let start = r.start_iso8601();
    let load = if r.load.fract() == 0.0 {
        format!("{}", r.load as u64)
    } else {
        format!("{:.3}", r.load)
    };
    let mut line = format!("{start},{load},{},{},{:.2}", r.complete, r.failed, r.rps);
    for v in r.latencies_us() {
        let _ = write!(line, ",{v:.3}");
    }
    let _ = write!(line, ",{:.3}", r.client_busy);
    line
}
