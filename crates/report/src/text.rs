//! The human report in wrk's layout (`Running …`, `Thread Stats`, `Latency Distribution`,
//! `Requests/sec`), plus the per-thread table of the pinned-wrk fork (with Min), the error
//! classes, the concurrency check and the client self-check.
use crate::format::{bytes, latency_us, metric};
use crate::latency::QUANTILES;
use crate::summary::Summary;
use std::fmt::Write;

/// Renders the text report of a summarised run (its SLO verdicts included).
pub fn render(s: &Summary) -> String {
    let mut o = String::new();
    heading(&mut o, s);
    if let Some(tls) = &s.info.tls {
        let _ = writeln!(o, "  TLS: {tls}");
    }
    thread_stats(&mut o, s);
    distribution(&mut o, s);
    crate::phases::write_text(&mut o, &s.phases);
    thread_table(&mut o, s);
    let _ = writeln!(
        o,
        "  {} requests in {:.2}s, {} read",
        s.requests,
        s.elapsed.as_secs_f64(),
        bytes(s.bytes_read as f64)
    );
    errors(&mut o, s);
    let _ = writeln!(o, "Requests/sec: {:>10.2}", s.rps);
    let _ = writeln!(o, "Transfer/sec: {:>10}", bytes(s.bytes_per_s));
    client(&mut o, s);
    crate::verdict_text::server(&mut o, s);
    crate::verdict_text::self_check(&mut o, s);
    for v in &s.slo {
        if s.requests == 0 {
            let _ = writeln!(
                o,
                "SLO {}: FAIL (no request completed: nothing to judge)",
                v.expr
            );
            continue;
        }
        let _ = writeln!(
            o,
            "SLO {}: {} (measured {})",
            v.expr,
            if v.pass { "pass" } else { "FAIL" },
            v.measured
        );
    }
    o
}

/// `Running 5s test @ URL` and the settings line under it.
fn heading(o: &mut String, s: &Summary) {
    let info = &s.info;
    let what = match (info.duration, info.requests) {
        (_, Some(n)) => format!("{n} requests"),
        (Some(d), None) => format!("{}s", trim_float(d.as_secs_f64())),
        (None, None) => "unbounded".into(),
    };
    let _ = writeln!(o, "Running {what} test @ {}", info.urls.join(", "));
    let model = match (info.rate_per_s, &info.ramp) {
        (Some(r), Some(ramp)) => format!("open model ramp {ramp} (mean {} req/s)", metric(r)),
        (Some(r), None) => format!(
            "open model at {} req/s ({})",
            metric(r),
            info.arrival.as_deref().unwrap_or("uniform")
        ),
        (None, _) => "closed model".into(),
    };
    let conn_mode = match (info.keep_alive, info.requests_per_conn) {
        (false, _) => "new connection per request".to_string(),
        (true, Some(n)) => format!("{n} requests per connection"),
        (true, None) => "keep-alive".to_string(),
    };
    let engine = if info.io.as_deref() == Some("uring") {
        " on io_uring"
    } else {
        ""
    };
    let _ = writeln!(
        o,
        "  {} threads and {} connections{engine}, {model}, {conn_mode}, pipeline {}, warm-up {}s",
        info.threads,
        info.connections,
        info.pipeline,
        trim_float(info.warmup.as_secs_f64())
    );
    if let Some(streams) = info.streams {
        let _ = writeln!(
            o,
            "  HTTP/2 ({}), {streams} streams per connection",
            info.protocol_name()
        );
    }
}

/// wrk's `Thread Stats` block: latency and Req/Sec rows.
fn thread_stats(o: &mut String, s: &Summary) {
    let c = &s.percentiles.corrected;
    let _ = writeln!(o, "  Thread Stats   Avg      Stdev     Max   +/- Stdev");
    let _ = writeln!(
        o,
        "    Latency {:>9} {:>9} {:>9} {:>8.2}%",
        latency_us(c.mean_us),
        latency_us(c.stdev_us),
        latency_us(c.max_us),
        c.within_stdev * 100.0
    );
    let rs = &s.req_per_sec;
    let _ = writeln!(
        o,
        "    Req/Sec {:>9} {:>9} {:>9} {:>8.2}%",
        metric(rs.mean),
        metric(rs.stdev),
        metric(rs.max),
        rs.within_stdev * 100.0
    );
}

/// The percentile table: corrected, uncorrected and queue wait side by side.
fn distribution(o: &mut String, s: &Summary) {
    let (c, u, w) = (
        &s.percentiles.corrected,
        &s.percentiles.uncorrected,
        &s.percentiles.queue_wait,
    );
    let _ = writeln!(
        o,
        "  Latency Distribution   corrected  uncorrected   queue wait"
    );
    if s.info.rate_per_s.is_none() {
        let _ = writeln!(
            o,
            "  (closed model: no schedule, so latency counts from each send and both columns agree)"
        );
    }
    if s.info.rx_time.as_deref() == Some("kernel") {
        let _ = writeln!(
            o,
            "  (a response counts as received when the kernel took it in, not when it was read)"
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
}

fn thread_table(o: &mut String, s: &Summary) {
    let _ = writeln!(
        o,
        "  Thread  CPU   Requests      Req/s       Min       Avg       p50       p99       Max  Busy"
    );
    for t in &s.workers {
        let l = &t.latency;
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

fn errors(o: &mut String, s: &Summary) {
    let e = &s.errors;
    let connect = e.connect_refused + e.connect_timeout + e.connect_other;
    if connect + e.read + e.write + e.timeout > 0 {
        let _ = writeln!(
            o,
            "  Socket errors: connect {connect} (refused {}, timeout {}, other {}), read {}, write {}, timeout {}",
            e.connect_refused, e.connect_timeout, e.connect_other, e.read, e.write, e.timeout
        );
        if e.connect_no_port + e.connect_no_fd > 0 {
            let _ = writeln!(
                o,
                "    of the other connect errors: no local port (EADDRNOTAVAIL) {}, no file \
                 descriptor (EMFILE) {}",
                e.connect_no_port, e.connect_no_fd
            );
        }
    }
    let h = &e.h2;
    if let Some(streams) = s.info.streams
        && h.stream_limit > 0
        && h.stream_limit < u64::from(streams)
    {
        let _ = writeln!(
            o,
            "  The server's SETTINGS_MAX_CONCURRENT_STREAMS capped --streams {streams} to {}",
            h.stream_limit
        );
    }
    if h.total() + h.goaway > 0 {
        let _ = writeln!(
            o,
            "  HTTP/2 errors: stream reset by the server {}, refused (not sent) {}, bad response \
             {}, GOAWAY received {}, protocol {}, flow-control stall {}",
            h.reset, h.refused, h.stream, h.goaway, h.protocol, h.stall
        );
    }
    if e.parse + e.body_length > 0 {
        let _ = writeln!(
            o,
            "  Response errors: parse {}, body length {}",
            e.parse, e.body_length
        );
    }
    let bad_status = e.bad_status();
    if bad_status > 0 {
        // In the JSON document's order (codes as text) and by its first digit, so the two
        // outputs list the same codes the same way.
        let by_text: std::collections::BTreeMap<String, u64> =
            e.status_counts().map(|(c, n)| (c.to_string(), n)).collect();
        let codes: Vec<String> = by_text
            .iter()
            .filter(|(c, _)| !c.starts_with('2') && !c.starts_with('3'))
            .map(|(c, n)| format!("{c}: {n}"))
            .collect();
        let _ = writeln!(
            o,
            "  Non-2xx or 3xx responses: {bad_status} ({})",
            codes.join(", ")
        );
    }
    let requested = s.info.connections;
    let c = &s.conns;
    if !s.concurrency_reached {
        let _ = writeln!(
            o,
            "  WARNING: CONCURRENCY NOT REACHED: {requested} connections requested, at most {} \
             open at once ({} established, {} failed)",
            c.peak_open, c.established, c.failed
        );
    }
    if c.reconnects > 0 || c.failed > 0 {
        let _ = writeln!(
            o,
            "  Connections: {requested} requested, {} established, {} failed, {} reconnects",
            c.established, c.failed, c.reconnects
        );
    }
}

/// The client's self-check line, and the warning when it limited the run.
fn client(o: &mut String, s: &Summary) {
    let cl = &s.client;
    let _ = write!(
        o,
        "Client: {:.2}s CPU, {:.0} ns CPU per request, busiest worker {:.0}% busy",
        cl.cpu.as_secs_f64(),
        cl.cpu_ns_per_request,
        cl.max_busy * 100.0
    );
    // Said only when it happened, with why: the client waited on its own timer (see
    // `--coalesce`), which a client with CPU to spare never does unless asked.
    let naps = s.naps();
    match s.nap_cause() {
        _ if naps == 0 => {}
        Some(crate::NapCause::ClientLimit) => {
            let _ = write!(
                o,
                ", {naps} naps after small batches (the client was the limit: --coalesce auto \
                 naps only then)"
            );
        }
        _ => {
            let _ = write!(o, ", {naps} naps after small batches (asked: --coalesce)");
        }
    }
    // Time out of the latency but not out of a closed-model connection's cycle: say it.
    if cl.read_delay_ns >= 1_000.0 {
        let _ = write!(
            o,
            ", responses read {} after they arrived (mean)",
            latency_us(cl.read_delay_ns / 1_000.0)
        );
    }
    let _ = writeln!(o);
}

fn trim_float(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
