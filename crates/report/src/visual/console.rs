//! The lines `twelve sweep` prints while it runs: a header, one line per step as it
//! finishes, and the knee search's answer (also the HTML page's note).
use super::doc::Knee;
use super::plot::fmt_si;
use super::step::{LoadKind, Step, StepRow};

/// The header above the step lines.
pub fn step_header(kind: LoadKind) -> String {
    let label = match kind {
        LoadKind::Concurrency => "conns",
        LoadKind::Rate => "rate",
        LoadKind::Streams => "streams",
    };
    format!(
        "{:>3} {label:>9} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>5} {:>5}  drain",
        "#", "req/s", "p50 µs", "p99 µs", "p99.9 µs", "max µs", "errors", "busy", "slo"
    )
}

/// The line of step `n` (1-based); `drain` says how the wait before it ended.
pub fn step_line(n: usize, s: &Step, drain: &str) -> String {
    let r = StepRow::of(s);
    let slo = match (s.summary.slo.is_empty(), s.passed()) {
        (true, _) => "-",
        (false, true) => "pass",
        (false, false) => "FAIL",
    };
    // A step whose self-check is not valid (client-bound: a worker ≥ 90% busy measured the
    // client; under-delivered; unmeasured) says so on its line.
    let verdict = s.summary.check.verdict;
    let bound = if verdict.rankable() {
        String::new()
    } else {
        format!("  {}", verdict.word().to_uppercase())
    };
    format!(
        "{n:>3} {:>9} {:>10.0} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>8} {:>4.0}% {:>5}  {drain}{bound}",
        fmt_si(s.load),
        r.rps,
        r.p50_us,
        r.p99_us,
        r.p999_us,
        r.max_us,
        r.failed,
        r.client_busy * 100.0,
        slo
    )
}

/// The knee search's answer in a sentence; `steps` are the search's runs in order (the
/// knee's step indices point into them).
pub fn knee_sentence(k: &Knee, steps: &[Step]) -> String {
    match (k.max_rate_per_s, k.above_range) {
        (None, _) => "knee: even the lowest rate failed an SLO".to_string(),
        (Some(r), true) => format!(
            "knee: above the range: the highest rate tried, {} req/s, met every SLO",
            fmt_si(r)
        ),
        (Some(r), false) => format!(
            "knee: {} req/s met every SLO (run {}); {} req/s did not (run {}); {:.1}% bracket \
             after {} runs",
            fmt_si(r),
            k.pass_step.map_or(0, |i| i + 1),
            fmt_si(steps.get(k.fail_step.unwrap_or(0)).map_or(0.0, |s| s.load)),
            k.fail_step.map_or(0, |i| i + 1),
            k.bracket * 100.0,
            steps.len()
        ),
    }
}
