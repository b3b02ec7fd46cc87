//! A tuning's effect measured in interleaved rounds (`twelve doctor --measure`): each round
//! runs the benchmark with the tuning and without it, which first alternating from round to
//! round, and the effect is the spread of the rounds' with / without ratios. Applying and
//! reverting the tuning, and the benchmark itself, are the caller's.
use std::sync::atomic::{AtomicBool, Ordering};
use twelve_report::visual::Spread;

/// Whether round `round` (from 0) measures with the tuning first: B A, A B, B A, … so that
/// neither side always runs first into a host that drifts (and a first run's cold caches
/// fall on both sides).
pub fn tuned_first(round: usize) -> bool {
    round.is_multiple_of(2)
}

/// What every round measured, with the tuning and without it, in round order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Effect {
    /// Each round's figure with the tuning in force.
    pub with: Vec<f64>,
    /// Each round's figure without it.
    pub without: Vec<f64>,
}

impl Effect {
    /// Each round's with / without.
    pub fn ratios(&self) -> Vec<f64> {
        self.with
            .iter()
            .zip(&self.without)
            .map(|(w, o)| w / o)
            .collect()
    }

    /// The spread of the rounds' ratios.
    pub fn ratio(&self) -> Spread {
        Spread::of(&self.ratios())
    }
}

/// Measures `rounds` rounds; `run(round, tuned)` runs the benchmark once, with the tuning in
/// force when `tuned`, and returns its figure. Stops before the next run once `interrupt` is
/// set, returning `None`.
pub fn measure_rounds<E>(
    rounds: usize,
    interrupt: &AtomicBool,
    mut run: impl FnMut(usize, bool) -> Result<f64, E>,
) -> Result<Option<Effect>, E> {
    let mut effect = Effect::default();
    for round in 0..rounds {
        let first = tuned_first(round);
        for tuned in [first, !first] {
            if interrupt.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let figure = run(round, tuned)?;
            if tuned {
                effect.with.push(figure);
            } else {
                effect.without.push(figure);
            }
        }
    }
    Ok(Some(effect))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_alternate_which_side_runs_first() {
        let order: Vec<bool> = (0..4).map(tuned_first).collect();
        assert_eq!(order, [true, false, true, false]);
    }

    #[test]
    fn every_round_runs_both_sides_in_the_alternating_order() {
        let mut order = Vec::new();
        let effect = measure_rounds(3, &AtomicBool::new(false), |round, tuned| {
            order.push((round, tuned));
            Ok::<_, ()>(if tuned { 200.0 } else { 100.0 } + round as f64)
        })
        .unwrap()
        .unwrap();
        let (t, f) = (true, false);
        assert_eq!(order, [(0, t), (0, f), (1, f), (1, t), (2, t), (2, f)]);
        assert_eq!(effect.with, [200.0, 201.0, 202.0]);
        assert_eq!(effect.without, [100.0, 101.0, 102.0]);
    }

    macro_rules! ratio {
        ($name:ident, $with:expr, $without:expr, $median:expr, $min:expr, $max:expr) => {
            #[test]
            fn $name() {
                let effect = Effect {
                    with: $with.to_vec(),
                    without: $without.to_vec(),
                };
                let r = effect.ratio();
                assert_eq!((r.median, r.min, r.max), ($median, $min, $max));
            }
        };
    }

    ratio!(ratio_of_one_round, [300.0], [100.0], 3.0, 3.0, 3.0);
    ratio!(
        ratio_is_taken_per_round,
        [100.0, 300.0, 200.0],
        [100.0, 100.0, 400.0],
        1.0,
        0.5,
        3.0
    );

    #[test]
    fn an_interrupt_stops_before_the_next_run() {
        let interrupt = AtomicBool::new(false);
        let mut runs = 0;
        let got = measure_rounds(5, &interrupt, |_, _| {
            runs += 1;
            if runs == 3 {
                interrupt.store(true, Ordering::Relaxed);
            }
            Ok::<_, ()>(1.0)
        })
        .unwrap();
        assert_eq!((got, runs), (None, 3));
    }

    #[test]
    fn an_error_ends_the_rounds() {
        let mut runs = 0;
        let got = measure_rounds(5, &AtomicBool::new(false), |_, tuned| {
            runs += 1;
            if tuned { Err("apply failed") } else { Ok(1.0) }
        });
        assert_eq!((got, runs), (Err("apply failed"), 1));
    }
}
