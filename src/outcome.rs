//! What a finished run's verdict means for the exit code: a run that measured nothing exits 2
//! with one sentence, SLOs are judged only on a valid run (unless `--allow-invalid`), and a
//! failed SLO exits 1.
use anyhow::bail;
use std::process::ExitCode;
use twelve_report::{Summary, Verdict};

/// Parses a percentage flag (`10%`, `0.5%`, `10`), naming the flag and the allowed range.
pub fn parse_percent(flag: &str, text: &str) -> anyhow::Result<f64> {
    let n: f64 = match text.trim().trim_end_matches('%').parse() {
        Ok(n) => n,
        Err(_) => bail!("{flag} {text:?}: expected a percentage from 0 to 100, e.g. 10%"),
    };
    if !(0.0..=100.0).contains(&n) {
        bail!("{flag} {text}: expected a percentage from 0 to 100, e.g. 10%");
    }
    Ok(n)
}

/// The exit code of a summarised run, printing the sentence that explains a non-zero one.
pub fn exit_code(command: &str, s: &Summary, allow_invalid: bool, json: bool) -> ExitCode {
    match judge(s, allow_invalid) {
        Judged::Unmeasured => {
            eprintln!("{command}: could not measure: {}", s.check.sentence());
            ExitCode::from(2)
        }
        Judged::SlosRefused => {
            eprintln!(
                "{command}: SLOs not judged: the run is {}: {}; {} (--allow-invalid judges it \
                 anyway)",
                s.check.verdict.word(),
                s.check.reason,
                s.check.advice
            );
            ExitCode::from(2)
        }
        Judged::SloFailed => ExitCode::from(1),
        Judged::Passed => {
            // The text report carries the verdict itself; a JSON reader may not look.
            if json && s.check.verdict != Verdict::Valid {
                eprintln!(
                    "{command}: WARNING: the run is {}: {}",
                    s.check.verdict.word(),
                    s.check.sentence()
                );
            }
            ExitCode::SUCCESS
        }
    }
}

/// What the run's verdict and SLOs decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Judged {
    /// Nothing usable was measured: exit 2.
    Unmeasured,
    /// SLOs were asked for on a client-bound or under-delivered run: exit 2.
    SlosRefused,
    /// An SLO failed: exit 1.
    SloFailed,
    /// Every SLO held (or there were none): exit 0.
    Passed,
}

fn judge(s: &Summary, allow_invalid: bool) -> Judged {
    if s.check.verdict == Verdict::Unmeasured {
        Judged::Unmeasured
    } else if !s.slo.is_empty() && !s.check.verdict.rankable() && !allow_invalid {
        Judged::SlosRefused
    } else if !s.passed() {
        Judged::SloFailed
    } else {
        Judged::Passed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use twelve_report::{RunInfo, RunResult, Slo, WorkerResult};

    /// A one-worker run: `requests` responses, `busy` share, all asked connections open.
    fn summary(requests: u64, busy_ms: u64, slo: &[&str]) -> Summary {
        let mut w = WorkerResult {
            requests,
            tail_requests: requests / 5,
            wall_time: Duration::from_secs(1),
            cpu_time: Duration::from_millis(busy_ms),
            ..Default::default()
        };
        for _ in 0..requests {
            w.latency.record(0, 0, 10_000);
        }
        w.conns.established = 4;
        w.conns.peak_open = 4;
        let run = RunResult {
            info: RunInfo {
                connections: 4,
                duration: Some(Duration::from_secs(1)),
                ..Default::default()
            },
            elapsed: Duration::from_secs(1),
            workers: vec![w],
            server: None,
        };
        let slos: Vec<Slo> = slo.iter().map(|s| Slo::parse(s).unwrap()).collect();
        Summary::new(&run, &slos)
    }

    macro_rules! judged {
        ($name:ident, $summary:expr, $allow:expr, $want:expr) => {
            #[test]
            fn $name() {
                assert_eq!(judge(&$summary, $allow), $want);
            }
        };
    }

    judged!(
        valid_run_passes,
        summary(100, 100, &["p99<1s"]),
        false,
        Judged::Passed
    );
    judged!(
        failed_slo_exits_1,
        summary(100, 100, &["p99<1us"]),
        false,
        Judged::SloFailed
    );
    // A dead server: `--slo 'p99<2ms'` must not say "pass (measured 0.000)" and exit 0.
    judged!(
        zero_requests_is_unmeasured_even_with_a_holding_slo,
        summary(0, 100, &["p99<2ms"]),
        false,
        Judged::Unmeasured
    );
    judged!(
        zero_requests_is_unmeasured_even_when_allowed,
        summary(0, 100, &[]),
        true,
        Judged::Unmeasured
    );
    judged!(
        client_bound_run_refuses_slos,
        summary(100, 950, &["p99<1s"]),
        false,
        Judged::SlosRefused
    );
    judged!(
        allow_invalid_judges_a_client_bound_run,
        summary(100, 950, &["p99<1s"]),
        true,
        Judged::Passed
    );
    judged!(
        client_bound_run_without_slos_still_exits_0,
        summary(100, 950, &[]),
        false,
        Judged::Passed
    );

    #[test]
    fn percent_flag_names_flag_value_and_range() {
        assert_eq!(parse_percent("--max-errors", "2.5%").unwrap(), 2.5);
        let err = parse_percent("--max-errors", "150%")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "--max-errors 150%: expected a percentage from 0 to 100, e.g. 10%"
        );
        assert!(parse_percent("--max-errors", "lots").is_err());
    }
}
