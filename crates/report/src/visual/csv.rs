//! The sweep CSV: one row per step, the columns ab+.sh wrote (start, concurrency, complete,
//! failed, tps, latency statistics) plus p99.9 and the client's busy share.
use super::step::{LoadKind, Step, StepRow};
use super::time::iso8601;
use std::io::{self, Write};
use std::time::{Duration, UNIX_EPOCH};

/// Header of a concurrency sweep. Latencies are µs (corrected), `client_busy` 0–1.
pub const CSV_HEADER_CLOSED: &str = "start_time,concurrency,complete,failed,req_per_s,min_us,\
mean_us,stddev_us,p50_us,p90_us,p95_us,p99_us,p99.9_us,max_us,client_busy";
/// Header of a rate sweep (the second column is the offered rate, req/s).
pub const CSV_HEADER_OPEN: &str = "start_time,rate,complete,failed,req_per_s,min_us,\
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
    }
}

/// One data line (no newline). Latencies keep three decimals (ns resolution); the load prints
/// as an integer when it is one.
pub fn row(r: &StepRow) -> String {
    // Round to the millisecond printed: f64 seconds since 1970 carry ~0.2 µs of error.
    let start = iso8601(UNIX_EPOCH + Duration::from_millis((r.start_unix_s * 1e3).round() as u64));
    let load = if r.load.fract() == 0.0 {
        format!("{}", r.load as u64)
    } else {
        format!("{:.3}", r.load)
    };
    format!(
        "{start},{load},{},{},{:.2},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3}",
        r.complete,
        r.failed,
        r.rps,
        r.min_us,
        r.mean_us,
        r.stddev_us,
        r.p50_us,
        r.p90_us,
        r.p95_us,
        r.p99_us,
        r.p999_us,
        r.max_us,
        r.client_busy
    )
}
