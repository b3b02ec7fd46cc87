//! `twelve bench`'s live view: on a terminal, one status line redrawn four times a second
//! (progress against the duration or count, req/s, p50/p99 so far, errors by kind, the
//! warm-up included); otherwise a plain line a second on stderr, for CI logs.
use std::time::Duration;
use twelve_load::{Progress, Stop};

/// The live view's state between samples.
pub struct Live {
    tty: bool,
    stop: Stop,
    warmup: Duration,
    last: (Duration, u64),
    next_plain: Duration,
}

impl Live {
    /// A view of a run that stops at `stop` after `warmup`; `tty`: redraw one line.
    pub fn new(tty: bool, stop: Stop, warmup: Duration) -> Self {
        Self {
            tty,
            stop,
            warmup,
            last: (Duration::ZERO, 0),
            next_plain: Duration::from_secs(1),
        }
    }

    /// Shows one sample.
    pub fn show(&mut self, p: &Progress) {
        if p.finished {
            if self.tty {
                eprint!("\r\x1b[2K");
            }
            return;
        }
        let dt = (p.elapsed.saturating_sub(self.last.0)).as_secs_f64();
        if dt <= 0.0 {
            return;
        }
        if !self.tty && p.elapsed < self.next_plain {
            return;
        }
        let rate = p.requests.saturating_sub(self.last.1) as f64 / dt;
        self.last = (p.elapsed, p.requests);
        let line = self.line(p, rate);
        if self.tty {
            eprint!("\r\x1b[2K{line}");
        } else {
            self.next_plain = Duration::from_secs(p.elapsed.as_secs() + 1);
            eprintln!("twelve bench: {line}");
        }
    }

    /// The status text of one sample.
    fn line(&self, p: &Progress, rate: f64) -> String {
        let phase = if p.measuring {
            match self.stop {
                Stop::Duration(d) => {
                    let t = p.elapsed.saturating_sub(self.warmup);
                    let share = t.as_secs_f64() / d.as_secs_f64();
                    format!(
                        "{} {:.1}/{}s",
                        bar(share, self.tty),
                        t.as_secs_f64(),
                        trim(d.as_secs_f64())
                    )
                }
                Stop::Requests(n) => format!(
                    "{} {}/{n} requests",
                    bar(p.requests as f64 / n as f64, self.tty),
                    p.requests
                ),
            }
        } else {
            format!(
                "warm-up {:.1}/{}s",
                p.elapsed.as_secs_f64(),
                trim(self.warmup.as_secs_f64())
            )
        };
        let latency = match (p.p50_ns, p.p99_ns) {
            (Some(a), Some(b)) => format!("  p50 ~{}  p99 ~{}", us(a), us(b)),
            _ => String::new(),
        };
        let errors = if p.kinds.total() > 0 {
            format!("  errors: {}", p.kinds.describe())
        } else {
            "  no errors".into()
        };
        format!("{phase}  {}{latency}{errors}", req_per_s(rate))
    }
}

/// A 20-cell progress bar on a terminal; nothing in plain lines.
fn bar(share: f64, tty: bool) -> String {
    if !tty {
        return format!("{:>3.0}%", (share * 100.0).clamp(0.0, 100.0));
    }
    let full = ((share.clamp(0.0, 1.0)) * 20.0).round() as usize;
    format!("[{}{}]", "#".repeat(full), "-".repeat(20 - full))
}

fn req_per_s(r: f64) -> String {
    if r >= 1e6 {
        format!("{:.2}M req/s", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.1}k req/s", r / 1e3)
    } else {
        format!("{r:.0} req/s")
    }
}

fn us(ns: u64) -> String {
    let us = ns as f64 / 1e3;
    if us >= 1e3 {
        format!("{:.1}ms", us / 1e3)
    } else {
        format!("{us:.0}us")
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use twelve_load::ErrorKinds;

    fn progress(elapsed_ms: u64, measuring: bool, requests: u64) -> Progress {
        Progress {
            elapsed: Duration::from_millis(elapsed_ms),
            measuring,
            finished: false,
            requests,
            errors: 4,
            kinds: ErrorKinds {
                connect: 3,
                timeout: 1,
                ..ErrorKinds::default()
            },
            p50_ns: Some(120_000),
            p99_ns: Some(1_100_000),
        }
    }

    macro_rules! line {
        ($name:ident, $tty:expr, $stop:expr, $p:expr, $want:expr) => {
            #[test]
            fn $name() {
                let live = Live::new($tty, $stop, Duration::from_secs(1));
                assert_eq!(live.line(&$p, 12_345.0), $want);
            }
        };
    }

    line!(
        warm_up_shows_latency_and_errors_too,
        true,
        Stop::Duration(Duration::from_secs(5)),
        progress(500, false, 100),
        "warm-up 0.5/1s  12.3k req/s  p50 ~120us  p99 ~1.1ms  errors: connect 3, timeout 1"
    );
    line!(
        timed_run_on_a_terminal_draws_a_bar,
        true,
        Stop::Duration(Duration::from_secs(5)),
        progress(3_500, true, 100),
        "[##########----------] 2.5/5s  12.3k req/s  p50 ~120us  p99 ~1.1ms  errors: connect \
         3, timeout 1"
    );
    line!(
        counted_run_in_a_log_says_percent,
        false,
        Stop::Requests(1000),
        progress(3_500, true, 250),
        " 25% 250/1000 requests  12.3k req/s  p50 ~120us  p99 ~1.1ms  errors: connect 3, \
         timeout 1"
    );
}
