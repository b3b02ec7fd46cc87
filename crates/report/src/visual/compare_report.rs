//! A comparison of two servers measured in interleaved rounds (`twelve compare A B`): for each
//! figure the median and min–max of each side and the ratio B/A taken pair by pair (round i
//! of B over round i of A), so slow drift of a noisy machine cancels within each pair instead
//! of biasing one side; the human table and the `--json` document (schema
//! `schema/compare-report.schema.json`, id [`COMPARE_SCHEMA_ID`]).
use crate::summary::Summary;
use serde::Serialize;

/// The identifier in every document's `schema` field.
pub const COMPARE_SCHEMA_ID: &str = "twelve-compare/1";
/// The JSON Schema (draft 2020-12) the documents follow.
pub const COMPARE_SCHEMA: &str = include_str!("../../schema/compare-report.schema.json");

/// Median and range of a sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
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

/// Reads one figure from a summarised run.
type Figure = fn(&Summary) -> f64;

/// The figures compared, with whether higher is better.
pub const FIGURES: [(&str, bool, Figure); 8] = [
    ("req/s", true, |s| s.rps),
    ("p50 µs", false, |s| s.corrected_quantile_us(0.50)),
    ("p90 µs", false, |s| s.corrected_quantile_us(0.90)),
    ("p99 µs", false, |s| s.corrected_quantile_us(0.99)),
    ("p99.9 µs", false, |s| s.corrected_quantile_us(0.999)),
    ("max µs", false, |s| s.corrected_quantile_us(1.0)),
    ("errors", false, |s| s.errors.total() as f64),
    ("client CPU ns/req", false, |s| s.client.cpu_ns_per_request),
];

/// B/A, with 0/0 = 1 (both sides equal, e.g. no errors on either).
fn ratio(a: f64, b: f64) -> f64 {
    if a == 0.0 && b == 0.0 { 1.0 } else { b / a }
}

/// Compares the rounds of each side figure by figure; rounds pair by index.
pub fn compare(a: &[Summary], b: &[Summary]) -> Vec<Comparison> {
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

/// The line printed as each round finishes: `round 1 A: 51234 req/s, p99 40.1 µs, 0 errors`,
/// and the round's verdict when it is not valid (`CLIENT-BOUND: …`).
pub fn round_line(round: usize, side: &str, s: &Summary) -> String {
    let mut line = format!(
        "round {} {side}: {:.0} req/s, p99 {:.1} µs, {} errors",
        round + 1,
        s.rps,
        s.corrected_quantile_us(0.99),
        s.errors.total()
    );
    if s.check.verdict != crate::verdict::Verdict::Valid {
        line += &format!(
            "  {}: {}",
            s.check.verdict.word().to_uppercase(),
            s.check.reason
        );
    }
    line
}

/// `12.3k`-style median with 4 significant digits, for a narrow column.
fn short(x: f64) -> String {
    if !x.is_finite() {
        "-".into()
    } else if x.abs() >= 1e6 {
        format!("{:.2}M", x / 1e6)
    } else if x.abs() >= 1e4 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.1}")
    }
}

/// Half the range as a share of the median: the round-to-round noise of one side.
fn noise(s: &Spread) -> String {
    if s.median == 0.0 || !s.median.is_finite() {
        "-".into()
    } else {
        format!("±{:.1}%", (s.max - s.min) / 2.0 / s.median.abs() * 100.0)
    }
}

/// The human table, at most 100 columns: per side the median and its round-to-round noise
/// (± half the range), then B/A taken round by round: median [min – max].
pub fn table(figures: &[Comparison], rounds: usize) -> String {
    let mut t = format!(
        "{rounds} rounds, A B A B …; median and ± half its range; B/A taken round by round\n\
         {:<20} {:>9} {:>7} {:>9} {:>7} {:>7} {:>17}\n",
        "figure", "A", "noise", "B", "noise", "B/A", "B/A [min – max]"
    );
    for c in figures {
        let better = if c.higher_is_better { "↑" } else { "↓" };
        t.push_str(&format!(
            "{:<20} {:>9} {:>7} {:>9} {:>7} {:>7.3} {:>17}\n",
            format!("{} {better}", c.figure),
            short(c.a.median),
            noise(&c.a),
            short(c.b.median),
            noise(&c.b),
            c.ratio.median,
            format!("[{:.3} – {:.3}]", c.ratio.min, c.ratio.max)
        ));
    }
    t
}

/// A comparison as written by `twelve compare --json`.
#[derive(Debug, Clone, Serialize)]
pub struct CompareDoc {
    /// Always [`COMPARE_SCHEMA_ID`].
    pub schema: &'static str,
    /// `twelve --version`.
    pub version: String,
    /// Rounds run; each ran A then B.
    pub rounds: usize,
    /// The baseline.
    pub a: SideJson,
    /// The candidate.
    pub b: SideJson,
    /// Every figure, in [`FIGURES`] order.
    pub figures: Vec<FigureJson>,
    /// What the comparison concludes (set by the caller from
    /// [`super::compare_verdict::conclude`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conclusion: Option<ConclusionJson>,
}

/// The conclusion in the document.
#[derive(Debug, Clone, Serialize)]
pub struct ConclusionJson {
    /// The sentence.
    pub sentence: String,
    /// Whether the rounds were ranked.
    pub ranked: bool,
    /// Rounds whose verdict was not valid.
    pub invalid_rounds: Vec<String>,
}

impl From<&super::compare_verdict::Conclusion> for ConclusionJson {
    fn from(c: &super::compare_verdict::Conclusion) -> Self {
        Self {
            sentence: c.sentence.clone(),
            ranked: c.ranked,
            invalid_rounds: c.invalid_rounds.clone(),
        }
    }
}

/// One side as given on the command line.
#[derive(Debug, Clone, Serialize)]
pub struct SideJson {
    /// The URL or command as given.
    pub spec: String,
    /// The URL measured.
    pub url: String,
}

/// One figure in the document.
#[derive(Debug, Clone, Serialize)]
pub struct FigureJson {
    /// Figure name with its unit.
    pub figure: &'static str,
    /// Whether a higher value is better.
    pub higher_is_better: bool,
    /// Side A: spread and every round's value.
    pub a: SpreadJson,
    /// Side B: spread and every round's value.
    pub b: SpreadJson,
    /// B/A taken round by round.
    pub ratio_b_over_a: Spread,
}

/// A spread with the values it was taken over, in round order.
#[derive(Debug, Clone, Serialize)]
pub struct SpreadJson {
    /// Median, smallest and largest.
    #[serde(flatten)]
    pub spread: Spread,
    /// Every round's value.
    pub values: Vec<f64>,
}

impl CompareDoc {
    /// The document of `figures` measured over `rounds` rounds of sides `a` and `b`.
    pub fn new(
        version: &str,
        rounds: usize,
        a: SideJson,
        b: SideJson,
        figures: &[Comparison],
    ) -> Self {
        Self {
            schema: COMPARE_SCHEMA_ID,
            version: version.to_string(),
            rounds,
            a,
            b,
            figures: figures
                .iter()
                .map(|c| FigureJson {
                    figure: c.figure,
                    higher_is_better: c.higher_is_better,
                    a: SpreadJson {
                        spread: c.a,
                        values: c.a_values.clone(),
                    },
                    b: SpreadJson {
                        spread: c.b,
                        values: c.b_values.clone(),
                    },
                    ratio_b_over_a: c.ratio,
                })
                .collect(),
            conclusion: None,
        }
    }

    /// The document, pretty-printed.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("plain data serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{RunResult, WorkerResult};
    use std::time::Duration;

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

    fn run(requests: u64, latency_us: u64) -> Summary {
        let mut w = WorkerResult {
            requests,
            wall_time: Duration::from_secs(1),
            ..Default::default()
        };
        w.latency.record(0, 0, latency_us * 1000);
        w.conns.established = 1;
        let run = RunResult {
            elapsed: Duration::from_secs(1),
            workers: vec![w],
            ..Default::default()
        };
        Summary::new(&run, &[])
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

    #[test]
    fn round_line_names_round_side_and_figures() {
        assert_eq!(
            round_line(0, "B", &run(1000, 10)),
            "round 1 B: 1000 req/s, p99 10.0 µs, 0 errors"
        );
    }

    #[test]
    fn round_line_flags_a_client_bound_round() {
        let mut s = run(1000, 10);
        s.check.verdict = crate::verdict::Verdict::ClientBound;
        s.check.reason = "the client was the bottleneck".into();
        assert_eq!(
            round_line(1, "A", &s),
            "round 2 A: 1000 req/s, p99 10.0 µs, 0 errors  CLIENT-BOUND: the client was the \
             bottleneck"
        );
    }

    #[test]
    fn table_has_a_row_per_figure_with_direction() {
        let c = compare(&[run(1000, 10)], &[run(1100, 10)]);
        let t = table(&c, 1);
        assert!(t.starts_with("1 rounds, A B A B …"), "{t}");
        assert_eq!(t.lines().count(), 2 + FIGURES.len(), "{t}");
        assert!(t.contains("req/s ↑"), "{t}");
        assert!(t.contains("  1.100   [1.100 – 1.100]"), "{t}");
        let widest = t.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest <= 100, "{widest} columns:\n{t}");
    }
}
