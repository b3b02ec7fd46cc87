//! The knee search: bisection over open-model rates for the highest rate that meets every
//! SLO (`twelve sweep --find-max-rate`).
//!
//! It assumes "meets the SLOs" is monotone in rate: true up to the knee, false above. Real
//! measurements are noisy near the knee, so the answer is a bracket: the highest rate that
//! passed and the lowest that failed, both reported with the runs that decided them.
use twelve_report::visual::doc::Knee;

/// The search's bounds and precision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KneeSearch {
    /// Lowest rate tried, req/s (if it fails there is no answer).
    pub low: f64,
    /// Highest rate tried, req/s (if it passes the knee lies above the range).
    pub high: f64,
    /// Stop when (fail − pass) / fail is at most this (e.g. 0.05 = within 5 %).
    pub tolerance: f64,
    /// Stop after this many runs whatever the bracket.
    pub max_probes: usize,
}

/// One run of the search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probe {
    /// Offered rate, req/s.
    pub rate: f64,
    /// Whether every SLO held.
    pub pass: bool,
}

/// The answer.
#[derive(Debug, Clone, PartialEq)]
pub struct KneeResult {
    /// Highest passing rate; `None` when `low` already failed.
    pub max_rate: Option<f64>,
    /// True when `high` passed.
    pub above_range: bool,
    /// Final relative bracket (fail − pass) / fail; 0 when one side is missing.
    pub bracket: f64,
    /// Index in `probes` of the highest pass.
    pub pass_probe: Option<usize>,
    /// Index in `probes` of the lowest fail.
    pub fail_probe: Option<usize>,
    /// Every run, in order.
    pub probes: Vec<Probe>,
}

impl KneeResult {
    /// The answer as the sweep document records it; the probe indices are step indices,
    /// since every probe runs as one step.
    pub fn to_doc(&self) -> Knee {
        Knee {
            max_rate_per_s: self.max_rate,
            above_range: self.above_range,
            bracket: self.bracket,
            pass_step: self.pass_probe,
            fail_step: self.fail_probe,
        }
    }
}

/// Bisects `[search.low, search.high]`; `probe(rate)` runs one step and says whether it
/// passed. Rates are rounded to whole req/s. Runs `low`, then `high`, then midpoints.
pub fn find_max_rate<E>(
    search: &KneeSearch,
    mut probe: impl FnMut(f64) -> Result<bool, E>,
) -> Result<KneeResult, E> {
    let mut probes = Vec::new();
    let mut run = |rate: f64, probes: &mut Vec<Probe>| -> Result<bool, E> {
        let pass = probe(rate)?;
        probes.push(Probe { rate, pass });
        Ok(pass)
    };
    let (low, high) = (search.low.round().max(1.0), search.high.round());
    if !run(low, &mut probes)? {
        return Ok(KneeResult {
            max_rate: None,
            above_range: false,
            bracket: 0.0,
            pass_probe: None,
            fail_probe: Some(0),
            probes,
        });
    }
    if high <= low || run(high, &mut probes)? {
        let last = probes.len() - 1;
        return Ok(KneeResult {
            max_rate: Some(probes[last].rate),
            above_range: true,
            bracket: 0.0,
            pass_probe: Some(last),
            fail_probe: None,
            probes,
        });
    }
    let (mut pass_i, mut fail_i) = (0, 1);
    let bracket = |p: &[Probe], pi: usize, fi: usize| (p[fi].rate - p[pi].rate) / p[fi].rate;
    while probes.len() < search.max_probes.max(2)
        && bracket(&probes, pass_i, fail_i) > search.tolerance
    {
        let mid = ((probes[pass_i].rate + probes[fail_i].rate) / 2.0).round();
        if mid <= probes[pass_i].rate || mid >= probes[fail_i].rate {
            break; // whole req/s: nothing left between them
        }
        if run(mid, &mut probes)? {
            pass_i = probes.len() - 1;
        } else {
            fail_i = probes.len() - 1;
        }
    }
    Ok(KneeResult {
        max_rate: Some(probes[pass_i].rate),
        above_range: false,
        bracket: bracket(&probes, pass_i, fail_i),
        pass_probe: Some(pass_i),
        fail_probe: Some(fail_i),
        probes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use twelve_report::{RunResult, Slo, Summary, WorkerResult};

    /// A simulated server: an M/M/1 queue with capacity `mu` req/s. Below capacity the time
    /// in system is exponential with rate `mu − λ`, so p99 = ln(100) / (mu − λ); at or above
    /// capacity the queue grows for the whole run (latency in seconds) and requests past
    /// the 2 s timeout fail. The run's histogram holds 10,000 values at evenly spaced
    /// quantiles of that distribution, judged by the real SLO code.
    fn simulated_run(mu: f64, rate: f64) -> RunResult {
        let mut w = WorkerResult {
            requests: 10_000,
            wall_time: Duration::from_secs(1),
            ..Default::default()
        };
        for i in 0..10_000u64 {
            let q = (i as f64 + 0.5) / 10_000.0;
            let secs = if rate < mu {
                -(1.0 - q).ln() / (mu - rate)
            } else {
                0.5 + 3.0 * q
            };
            let ns = (secs * 1e9) as u64;
            w.latency.record(0, 0, ns.max(1));
            if secs > 2.0 {
                w.errors.timeout += 1;
            }
        }
        RunResult {
            elapsed: Duration::from_secs(1),
            workers: vec![w],
            ..Default::default()
        }
    }

    fn passes(mu: f64, rate: f64, slos: &[Slo]) -> bool {
        Summary::new(&simulated_run(mu, rate), slos).passed()
    }

    fn search(low: f64, high: f64) -> KneeSearch {
        KneeSearch {
            low,
            high,
            tolerance: 0.01,
            max_probes: 30,
        }
    }

    #[test]
    fn finds_the_knee_of_a_simulated_server() {
        let mu = 50_000.0;
        let slos = [Slo::parse("p99<2ms").unwrap()];
        // p99 = ln(100)/(mu − λ) < 2 ms  ⇔  λ < mu − ln(100)/0.002 ≈ 47,697.4 req/s.
        let knee = mu - 100f64.ln() / 0.002;
        let r = find_max_rate(&search(1_000.0, 100_000.0), |rate| {
            Ok::<_, ()>(passes(mu, rate, &slos))
        })
        .unwrap();
        let found = r.max_rate.unwrap();
        // The histogram's 3 significant digits blur the p99 by 0.1%, i.e. ~50 req/s here.
        assert!(found <= knee + 50.0, "found {found} above the knee {knee}");
        assert!(found >= knee * 0.99 - 50.0, "found {found}, knee {knee}");
        assert!(r.bracket <= 0.01);
        let fail = r.probes[r.fail_probe.unwrap()].rate;
        assert!(fail > knee - 50.0 && !r.probes[r.fail_probe.unwrap()].pass);
        assert!(r.probes.len() <= 12, "{} runs", r.probes.len());
    }

    #[test]
    fn error_slo_bounds_the_knee_at_capacity() {
        // Only errors count: the server times out requests only past its capacity.
        let mu = 20_000.0;
        let slos = [Slo::parse("errors<0.1%").unwrap()];
        let r = find_max_rate(&search(1_000.0, 40_000.0), |rate| {
            Ok::<_, ()>(passes(mu, rate, &slos))
        })
        .unwrap();
        let found = r.max_rate.unwrap();
        assert!(found < mu && found >= mu * 0.99, "{found}");
    }

    #[test]
    fn knee_below_range_has_no_answer() {
        let r = find_max_rate(&search(10.0, 100.0), |_| Ok::<_, ()>(false)).unwrap();
        assert_eq!(r.max_rate, None);
        assert_eq!(r.probes.len(), 1);
    }

    #[test]
    fn knee_above_range_says_so() {
        let r = find_max_rate(&search(10.0, 100.0), |_| Ok::<_, ()>(true)).unwrap();
        assert_eq!((r.max_rate, r.above_range), (Some(100.0), true));
        assert_eq!(r.probes.len(), 2);
    }

    #[test]
    fn probe_budget_is_respected() {
        let s = KneeSearch {
            max_probes: 4,
            ..search(1.0, 1e6)
        };
        let r = find_max_rate(&s, |rate| Ok::<_, ()>(rate < 777.0)).unwrap();
        assert_eq!(r.probes.len(), 4);
        assert!(r.max_rate.unwrap() < 777.0);
    }

    #[test]
    fn errors_from_a_run_stop_the_search() {
        let r = find_max_rate(&search(1.0, 100.0), |rate| {
            if rate > 50.0 { Err("boom") } else { Ok(true) }
        });
        assert_eq!(r, Err("boom"));
    }
}
