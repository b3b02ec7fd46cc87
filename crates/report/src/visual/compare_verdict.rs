//! What a comparison concludes, in one sentence: "B is 1.26× A on req/s, every round agrees"
//! or "no clear difference on req/s: rounds disagree", said only over rounds whose self-check
//! found them valid (a client-bound round measures the client, not the server), unless the
//! user allows invalid rounds.
use super::compare_report::Comparison;
use crate::summary::Summary;
use crate::verdict::Verdict;

/// A comparison's conclusion.
#[derive(Debug, Clone, PartialEq)]
pub struct Conclusion {
    /// The sentence.
    pub sentence: String,
    /// Whether the rounds could be ranked (all valid, or invalid ones allowed).
    pub ranked: bool,
    /// Rounds whose self-check was not valid, as `2A client-bound`.
    pub invalid_rounds: Vec<String>,
}

/// Concludes on `figures` of rounds `a` and `b` (in round order).
pub fn conclude(
    a: &[Summary],
    b: &[Summary],
    figures: &[Comparison],
    allow_invalid: bool,
) -> Conclusion {
    let invalid_rounds = invalid_rounds(a, b);
    if !invalid_rounds.is_empty() && !allow_invalid {
        return Conclusion {
            sentence: format!(
                "not ranked: round(s) {} did not measure the server (see each round's verdict); \
                 --allow-invalid ranks them anyway",
                invalid_rounds.join(", ")
            ),
            ranked: false,
            invalid_rounds,
        };
    }
    let rps = figures.iter().find(|c| c.figure == "req/s");
    let p99 = figures.iter().find(|c| c.figure == "p99 µs");
    let sentence = [rps, p99]
        .into_iter()
        .flatten()
        .map(|c| figure_sentence(c, a.len()))
        .collect::<Vec<_>>()
        .join("\n");
    Conclusion {
        sentence,
        ranked: true,
        invalid_rounds,
    }
}

/// `2A client-bound` for every round whose verdict is not valid, A before B in each round.
fn invalid_rounds(a: &[Summary], b: &[Summary]) -> Vec<String> {
    let mut out = Vec::new();
    for (round, (x, y)) in a.iter().zip(b).enumerate() {
        for (side, s) in [("A", x), ("B", y)] {
            if s.check.verdict != Verdict::Valid {
                out.push(format!("{}{side} {}", round + 1, s.check.verdict.word()));
            }
        }
    }
    out
}

/// One figure's conclusion: the ratio of the medians, and whether every round's own B/A
/// falls on the same side of 1 (a single round cannot agree with anything).
fn figure_sentence(c: &Comparison, rounds: usize) -> String {
    let name = c.figure.trim_end_matches(" µs");
    let of_medians = c.b.median / c.a.median;
    let spread = if c.ratio.min == c.ratio.max {
        format!("B/A {:.2} in every round", c.ratio.min)
    } else {
        format!(
            "B/A per round from {:.2} to {:.2}",
            c.ratio.min, c.ratio.max
        )
    };
    let agree_up = c.ratio.min > 1.0;
    let agree_down = c.ratio.max < 1.0;
    if !of_medians.is_finite() {
        return format!("no figure for {name}: a side measured none");
    }
    if rounds < 2 {
        return format!(
            "B is {of_medians:.2}× A on {name} in one round: run more rounds (--rounds) to \
             tell a difference from noise"
        );
    }
    if agree_up || agree_down {
        format!("B is {of_medians:.2}× A on {name}, every round agrees ({spread})")
    } else if c.ratio.min == c.ratio.max {
        format!("no difference on {name} ({spread})")
    } else {
        format!("no clear difference on {name}: rounds disagree ({spread})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{RunInfo, RunResult, WorkerResult};
    use crate::visual::compare_report::compare;
    use std::time::Duration;

    /// A round of `requests` in 1 s; `busy_ms` of client CPU (≥ 900: client-bound).
    fn round(requests: u64, busy_ms: u64) -> Summary {
        let mut w = WorkerResult {
            requests,
            tail_requests: requests / 5,
            wall_time: Duration::from_secs(1),
            cpu_time: Duration::from_millis(busy_ms),
            ..Default::default()
        };
        w.latency.record(0, 0, 10_000);
        w.conns.established = 1;
        w.conns.peak_open = 1;
        let run = RunResult {
            info: RunInfo {
                connections: 1,
                duration: Some(Duration::from_secs(1)),
                ..Default::default()
            },
            elapsed: Duration::from_secs(1),
            workers: vec![w],
            server: None,
        };
        Summary::new(&run, &[])
    }

    fn conclusion(a: &[(u64, u64)], b: &[(u64, u64)], allow: bool) -> Conclusion {
        let a: Vec<Summary> = a.iter().map(|&(n, busy)| round(n, busy)).collect();
        let b: Vec<Summary> = b.iter().map(|&(n, busy)| round(n, busy)).collect();
        conclude(&a, &b, &compare(&a, &b), allow)
    }

    macro_rules! concludes {
        ($name:ident, $a:expr, $b:expr, $allow:expr, $says:expr) => {
            #[test]
            fn $name() {
                let c = conclusion(&$a, &$b, $allow);
                assert!(c.sentence.contains($says), "{}", c.sentence);
            }
        };
    }

    concludes!(
        every_round_faster_is_a_verdict,
        [(1000, 100), (900, 100), (1100, 100)],
        [(1260, 100), (1200, 100), (1300, 100)],
        false,
        "B is 1.26× A on req/s, every round agrees (B/A per round from 1.18 to 1.33)"
    );
    // The compare: column medians 1.263 apart, but one round's B/A below 1.
    concludes!(
        rounds_that_disagree_are_no_clear_difference,
        [(1000, 100), (1000, 100), (1000, 100)],
        [(830, 100), (1263, 100), (2158, 100)],
        false,
        "no clear difference on req/s: rounds disagree (B/A per round from 0.83 to 2.16)"
    );
    concludes!(
        one_round_asks_for_more,
        [(1000, 100)],
        [(1100, 100)],
        false,
        "in one round: run more rounds"
    );
    concludes!(
        client_bound_round_is_not_ranked,
        [(1000, 100), (1000, 950)],
        [(1100, 100), (1100, 100)],
        false,
        "not ranked: round(s) 2A client-bound did not measure the server"
    );
    concludes!(
        allow_invalid_ranks_anyway,
        [(1000, 100), (1000, 950)],
        [(1100, 100), (1100, 100)],
        true,
        "B is 1.10× A on req/s, every round agrees"
    );
}
