//! The text report's embedded-server line and self-check block: offered against achieved load, the open model's
//! schedule lag, concurrency, the client's cost, and the verdict with its advice.
use crate::format::{latency_us, metric};
use crate::summary::Summary;
use crate::verdict::Verdict;
use std::fmt::Write;

/// The embedded server's line: what it spent per request, on any machine.
pub(crate) fn server(o: &mut String, s: &Summary) {
    let Some(sv) = &s.server else { return };
    let _ = writeln!(
        o,
        "Server (embedded{}): {:.0} ns CPU per request, {} requests per server CPU-second, \
         {:.0}% busy",
        sv.cpu.map_or(String::new(), |c| format!(", CPU {c}")),
        sv.cpu_ns_per_request,
        metric(sv.requests_per_cpu_s),
        sv.busy * 100.0
    );
}

/// Writes the `Self-check:` block.
pub(crate) fn self_check(o: &mut String, s: &Summary) {
    let c = &s.check;
    let _ = write!(o, "Self-check: ");
    match (c.offered_rate_per_s, c.rate_ratio) {
        (Some(offered), Some(ratio)) => {
            let _ = write!(
                o,
                "rate {} of {} req/s asked (rate_ratio {ratio:.3}",
                metric(c.achieved_rate_per_s),
                metric(offered)
            );
            if let Some(end) = c.rate_ratio_end {
                let _ = write!(o, ", {end:.3} over the last 20%");
            }
            let _ = write!(o, "), ");
        }
        _ => {
            let _ = write!(o, "closed model, ");
        }
    }
    let _ = writeln!(
        o,
        "concurrency {} of {} asked, client {:.0} ns CPU per request",
        c.concurrency_reached, c.concurrency_asked, c.client_cpu_ns_per_request
    );
    if let (Some(max), Some(p99)) = (c.max_schedule_lag_us, c.p99_schedule_lag_us) {
        let _ = writeln!(
            o,
            "  schedule lag (due to sent): p99 {}, max {}",
            latency_us(p99),
            latency_us(max)
        );
    }
    match c.verdict {
        Verdict::Valid => {
            let _ = writeln!(
                o,
                "Verdict: valid: the load was delivered, the client had room"
            );
        }
        v => {
            let _ = writeln!(o, "Verdict: {}: {}", v.word().to_uppercase(), c.reason);
            let _ = writeln!(o, "  advice: {}", c.advice);
        }
    }
}
