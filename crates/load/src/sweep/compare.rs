//! Interleaved comparisons (`twelve compare A B`): A B A B … rounds with the same settings,
//! then for each figure the median and min–max of each side and the ratio B/A taken pair by
//! pair (round i of B over round i of A), so slow drift of a noisy machine cancels within
//! each pair instead of biasing one side.
use twelve_report::RunResult;

/// Which side of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The first, the baseline.
    A,
    /// The second, the candidate.
    B,
}

/// Runs `rounds` rounds of A then B; `run(side, round)` runs one. Returns each side's
/// results in round order.
pub fn interleave<T, E>(
    rounds: usize,
    mut run: impl FnMut(Side, usize) -> Result<T, E>,
) -> Result<(Vec<T>, Vec<T>), E> {
    let (mut a, mut b) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    for round in 0..rounds {
        a.push(run(Side::A, round)?);
        b.push(run(Side::B, round)?);
    }
    Ok((a, b))
}

/// Median and range of a sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// Median (mean of the middle two for an even count).
    pub median: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
}

impl Spread {
    /// The spread of `values` (NaN everywhere when empty).
    pub fn of(values: &[f64]) -> Self {
        let mut v: Vec<f64> = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n == 0 {
            return Self {
                median: f64::NAN,
                min: f64::NAN,
                max: f64::NAN,
            };
        }
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Self {
            median,
            min: v[0],
            max: v[n - 1],
        }
    }
}

/// One figure compared.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Figure name with its unit.
    pub figure: &'static str,
    /// Whether a higher value is better (req/s) or worse (latency, errors, CPU).
    pub higher_is_better: bool,
    /// Side A, every round.
    pub a: Spread,
    /// Side B, every round.
    pub b: Spread,
    /// B/A per round, then its spread.
    pub ratio: Spread,
    /// A's values in round order.
    pub a_values: Vec<f64>,
    /// B's values in round order.
    pub b_values: Vec<f64>,
}

/// Reads one figure from a run.
type Figure = fn(&RunResult) -> f64;

/// The figures compared, with whether higher is better.
pub const FIGURES: [(&str, bool, Figure); 8] = [
    ("req/s", true, |r| r.rps()),
    ("p50 µs", false, |r| quantile_us(r, 0.50)),
    ("p90 µs", false, |r| quantile_us(r, 0.90)),
    ("p99 µs", false, |r| quantile_us(r, 0.99)),
    ("p99.9 µs", false, |r| quantile_us(r, 0.999)),
    ("max µs", false, |r| quantile_us(r, 1.0)),
    ("errors", false, |r| r.merged_errors().total() as f64),
    ("client CPU ns/req", false, |r| r.cpu_ns_per_request()),
];

/// Corrected latency at `q`, µs (0 when nothing was recorded).
pub fn quantile_us(r: &RunResult, q: f64) -> f64 {
    let h = r.merged_latency().corrected;
    if h.is_empty() {
        0.0
    } else {
        h.value_at_quantile(q) as f64 / 1e3
    }
}

/// B/A, with 0/0 = 1 (both sides equal, e.g. no errors on either).
fn ratio(a: f64, b: f64) -> f64 {
    if a == 0.0 && b == 0.0 { 1.0 } else { b / a }
}

/// Compares the rounds of each side figure by figure; rounds pair by index.
pub fn compare(a: &[RunResult], b: &[RunResult]) -> Vec<Comparison> {
    FIGURES
        .iter()
        .map(|(figure, higher_is_better, f)| {
            let av: Vec<f64> = a.iter().map(f).collect();
            let bv: Vec<f64> = b.iter().map(f).collect();
            let ratios: Vec<f64> = av.iter().zip(&bv).map(|(x, y)| ratio(*x, *y)).collect();
            Comparison {
                figure,
                higher_is_better: *higher_is_better,
                a: Spread::of(&av),
                b: Spread::of(&bv),
                ratio: Spread::of(&ratios),
                a_values: av,
                b_values: bv,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use twelve_report::WorkerResult;

    macro_rules! spread {
        ($name:ident, [$($v:expr),*], $median:expr, $min:expr, $max:expr) => {
            #[test]
            fn $name() {
                let s = Spread::of(&[$($v as f64),*]);
                assert_eq!((s.median, s.min, s.max), ($median as f64, $min as f64, $max as f64));
            }
        };
    }

    spread!(spread_odd, [3, 1, 2], 2, 1, 3);
    spread!(spread_even, [4, 1, 3, 2], 2.5, 1, 4);
    spread!(spread_one, [7], 7, 7, 7);

    #[test]
    fn rounds_alternate_a_then_b() {
        let mut order = Vec::new();
        let (a, b) = interleave(3, |side, round| {
            order.push((side, round));
            Ok::<_, ()>(round)
        })
        .unwrap();
        assert_eq!(a, [0, 1, 2]);
        assert_eq!(b, [0, 1, 2]);
        use Side::*;
        assert_eq!(order, [(A, 0), (B, 0), (A, 1), (B, 1), (A, 2), (B, 2)]);
    }

    fn run(requests: u64, latency_us: u64) -> RunResult {
        let mut w = WorkerResult {
            requests,
            wall_time: Duration::from_secs(1),
            ..Default::default()
        };
        w.latency.record(0, 0, latency_us * 1000);
        RunResult {
            elapsed: Duration::from_secs(1),
            workers: vec![w],
            ..Default::default()
        }
    }

    #[test]
    fn ratio_is_taken_pair_by_pair() {
        // The machine slows down over the rounds; B is 10% faster in every pair. The ratio of
        // medians would say 1.1 too here, but per pair the spread of the ratio is zero.
        let a = [run(1000, 10), run(800, 10), run(600, 10)];
        let b = [run(1100, 10), run(880, 10), run(660, 10)];
        let c = compare(&a, &b);
        let rps = &c[0];
        assert_eq!(rps.figure, "req/s");
        assert!((rps.ratio.min - 1.1).abs() < 1e-9 && (rps.ratio.max - 1.1).abs() < 1e-9);
        assert_eq!((rps.a.median, rps.a.min, rps.a.max), (800.0, 600.0, 1000.0));
        let errors = c.iter().find(|c| c.figure == "errors").unwrap();
        assert_eq!(errors.ratio.median, 1.0, "0/0 errors compare as equal");
    }
}
