//! The human report in wrk's layout (`Running …`, `Thread Stats`, `Latency Distribution`,
//! `Requests/sec`), plus the per-thread table of the pinned-wrk fork (with Min), the error
//! classes, the concurrency check and the client self-check.
use crate::format::{bytes, latency_us, metric};
use crate::json::{CLIENT_BOUND_NOTE, JsonReport};
use crate::latency::{Percentiles, QUANTILES};
use crate::result::RunResult;
use std::fmt::Write;

/// Renders the text report. `report` is the JSON view of the same run (it carries the merged
/// summaries and SLO outcomes, so both outputs say the same).
pub fn render(run: &RunResult, report: &JsonReport) -> String {
    let mut o = String::new();
    let info = &run.info;
    let what = match (info.duration, info.requests) {
        (_, Some(n)) => format!("{n} requests"),
        (Some(d), None) => format!("{}s", trim_float(d.as_secs_f64())),
        (None, None) => "unbounded".into(),
    };
    let _ = writeln!(o, "Running {what} test @ {}", info.urls.join(", "));
    let model = match info.rate_per_s {
        Some(r) => format!(
            "open model at {} req/s ({})",
            metric(r),
            info.arrival.as_deref().unwrap_or("uniform")
        ),
        None => "closed model".into(),
    };
    let conn_mode = match (info.keep_alive, info.requests_per_conn) {
        (false, _) => "new connection per request".to_string(),
        (true, Some(n)) => format!("{n} requests per connection"),
        (true, None) => "keep-alive".to_string(),
    };
    let _ = writeln!(
        o,
        "  {} threads and {} connections, {model}, {conn_mode}, pipeline {}, warm-up {}s",
        info.threads,
        info.connections,
        info.pipeline,
        trim_float(info.warmup.as_secs_f64())
    );
    let c = &report.latency.corrected;
    let _ = writeln!(o, "  Thread Stats   Avg      Stdev     Max   +/- Stdev");
    let _ = writeln!(
        o,
        "    Latency {:>9} {:>9} {:>9} {:>8.2}%",
        latency_us(c.mean_us),
        latency_us(c.stdev_us),
        latency_us(c.max_us),
        c.within_stdev * 100.0
    );
    let rs = req_per_sec(run);
    let _ = writeln!(
        o,
        "    Req/Sec {:>9} {:>9} {:>9} {:>8.2}%",
        metric(rs.0),
        metric(rs.1),
        metric(rs.2),
        rs.3 * 100.0
    );
    let u = &report.latency.uncorrected;
    let w = &report.latency.queue_wait;
    let _ = writeln!(
        o,
        "  Latency Distribution   corrected  uncorrected   queue wait"
    );
    if info.rate_per_s.is_none() {
        let _ = writeln!(
            o,
            "  (closed model: no schedule, so latency counts from each send and both columns agree)"
        );
    }
    for (i, (_, label)) in QUANTILES.iter().enumerate() {
        let _ = writeln!(
            o,
            "  {label:>9} {:>19} {:>12} {:>12}",
            latency_us(c.at(i)),
            latency_us(u.at(i)),
            latency_us(w.at(i))
        );
    }
    let _ = writeln!(
        o,
        "  {:>9} {:>19} {:>12} {:>12}",
        "max",
        latency_us(c.max_us),
        latency_us(u.max_us),
        latency_us(w.max_us)
    );
    thread_table(&mut o, report);
    let _ = writeln!(
        o,
        "  {} requests in {:.2}s, {} read",
        report.requests,
        report.duration_s,
        bytes(report.bytes_read as f64)
    );
    errors(&mut o, report);
    let _ = writeln!(o, "Requests/sec: {:>10.2}", report.rps);
    let _ = writeln!(o, "Transfer/sec: {:>10}", bytes(report.bytes_per_s));
    let cl = &report.client;
    let _ = write!(
        o,
        "Client: {:.2}s CPU, {:.0} ns CPU per request, busiest worker {:.0}% busy",
        cl.cpu_s,
        cl.cpu_ns_per_request,
        cl.max_busy * 100.0
    );
    // Said only when it happened: the client waited on its own timer (see `--coalesce`).
    let naps: u64 = cl.workers.iter().map(|w| w.naps).sum();
    if naps > 0 {
        let _ = write!(o, ", {naps} naps after small batches (--coalesce)");
    }
    let _ = writeln!(o);
    if cl.client_bound {
        let _ = writeln!(o, "WARNING: {CLIENT_BOUND_NOTE}");
    }
    for s in &report.slo {
        let _ = writeln!(
            o,
            "SLO {}: {} (measured {:.3})",
            s.expr,
            if s.pass { "pass" } else { "FAIL" },
            s.actual
        );
    }
    o
}

fn thread_table(o: &mut String, report: &JsonReport) {
    let _ = writeln!(
        o,
        "  Thread  CPU   Requests      Req/s       Min       Avg       p50       p99       Max  Busy"
    );
    for t in &report.client.workers {
        let l: &Percentiles = &t.latency;
        let _ = writeln!(
            o,
            "  {:>6} {:>4} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>4.0}%",
            t.id,
            t.cpu.map_or("-".to_string(), |c| c.to_string()),
            t.requests,
            metric(t.rps),
            latency_us(l.min_us),
            latency_us(l.mean_us),
            latency_us(l.p50_us),
            latency_us(l.p99_us),
            latency_us(l.max_us),
            t.busy * 100.0
        );
    }
}

fn errors(o: &mut String, r: &JsonReport) {
    let e = &r.errors;
    let connect = e.connect_refused + e.connect_timeout + e.connect_other;
    if connect + e.read + e.write + e.timeout > 0 {
        let _ = writeln!(
            o,
            "  Socket errors: connect {connect} (refused {}, timeout {}, other {}), read {}, write {}, timeout {}",
            e.connect_refused, e.connect_timeout, e.connect_other, e.read, e.write, e.timeout
        );
    }
    if e.parse + e.body_length > 0 {
        let _ = writeln!(
            o,
            "  Response errors: parse {}, body length {}",
            e.parse, e.body_length
        );
    }
    if e.bad_status > 0 {
        let codes: Vec<String> = e
            .status
            .iter()
            .filter(|(c, _)| !c.starts_with('2') && !c.starts_with('3'))
            .map(|(c, n)| format!("{c}: {n}"))
            .collect();
        let _ = writeln!(
            o,
            "  Non-2xx or 3xx responses: {} ({})",
            e.bad_status,
            codes.join(", ")
        );
    }
    let c = &r.connections;
    if !c.reached {
        let _ = writeln!(
            o,
            "  WARNING: CONCURRENCY NOT REACHED: {} connections requested, at most {} open at once \
             ({} established, {} failed)",
            c.requested, c.peak_open, c.established, c.failed
        );
    }
    if c.reconnects > 0 || c.failed > 0 {
        let _ = writeln!(
            o,
            "  Connections: {} requested, {} established, {} failed, {} reconnects",
            c.requested, c.established, c.failed, c.reconnects
        );
    }
}

/// wrk's Req/Sec row: mean, stdev, max and share within one stdev of per-thread per-second
/// samples.
fn req_per_sec(run: &RunResult) -> (f64, f64, f64, f64) {
    let samples: Vec<f64> = run
        .workers
        .iter()
        .flat_map(|w| w.per_second.iter().map(|&n| n as f64))
        .collect();
    if samples.is_empty() {
        return (0.0, 0.0, 0.0, 0.0);
    }
    let n = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / n;
    let var = samples.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n;
    let sd = var.sqrt();
    let max = samples.iter().copied().fold(0.0, f64::max);
    let within = samples.iter().filter(|s| (*s - mean).abs() <= sd).count() as f64 / n;
    (mean, sd, max, within)
}

fn trim_float(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
