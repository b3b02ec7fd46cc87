//! `--slo` thresholds (k6/Gatling style) that decide the exit code: `p99<2ms`,
//! `p99.9<=500us`, `mean<1ms`, `max<1s`, `errors<0.1%`, `rps>10000`.
//!
//! Latency SLOs are judged on the corrected histogram: it is the latency a user waiting on a
//! schedule saw. This file parses and compares; reading a metric off a run is the summary's
//! job ([`crate::summary::Summary::measure`], where `Slo::check` lives).
use std::fmt;

/// One threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct Slo {
    text: String,
    metric: Metric,
    op: Op,
    limit: f64,
    /// The expression's own unit for latency (`ms` in `p99<5ms`), whose measured value is
    /// shown in it; empty for the other metrics.
    shown_unit: &'static str,
}

/// What an SLO measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    /// Corrected latency at this quantile (0–1), compared in µs.
    Quantile(f64),
    /// Mean corrected latency, µs.
    Mean,
    /// Largest corrected latency, µs.
    Max,
    /// Failures as a percentage of all attempts (`errors<0.1%`).
    ErrorPercent,
    /// Failure count (`errors<10`).
    Errors,
    /// Responses per second.
    Rps,
}

impl Metric {
    /// The unit of a measured value ([`SloOutcome::actual`]) and of a limit of this metric.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Quantile(_) | Metric::Mean | Metric::Max => "us",
            Metric::ErrorPercent => "%",
            Metric::Errors => "count",
            Metric::Rps => "req/s",
        }
    }
}

/// The comparison that must hold between the measured value and the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `<`
    Less,
    /// `<=`
    LessOrEqual,
    /// `>`
    Greater,
    /// `>=`
    GreaterOrEqual,
}

impl Op {
    /// Whether `actual OP limit` holds.
    pub fn holds(self, actual: f64, limit: f64) -> bool {
        match self {
            Op::Less => actual < limit,
            Op::LessOrEqual => actual <= limit,
            Op::Greater => actual > limit,
            Op::GreaterOrEqual => actual >= limit,
        }
    }
}

/// Why an SLO expression did not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SloError(String);

impl fmt::Display for SloError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SloError {}

/// An SLO judged against a run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SloOutcome {
    /// The expression as given.
    pub expr: String,
    /// The measured value in the metric's unit, named by `unit` (µs for latency whatever unit
    /// the expression used, % or count for errors, req/s).
    pub actual: f64,
    /// The unit of `actual`: `us`, `%`, `count` or `req/s`.
    pub unit: &'static str,
    /// The measured value as the text report prints it: latency in the expression's own unit
    /// (`0.095ms` for `p99<5ms`), `1.088%`, `3`, `9500.000 req/s`.
    pub measured: String,
    /// Whether the threshold held.
    pub pass: bool,
}

impl Slo {
    /// Parses `METRIC OP VALUE` with OP one of `<`, `<=`, `>`, `>=`.
    pub fn parse(text: &str) -> Result<Self, SloError> {
        let bad = |why: &str| SloError(format!("--slo '{text}': {why}"));
        let s: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let at = s
            .find(['<', '>'])
            .ok_or_else(|| bad("no < or > comparison"))?;
        let (name, rest) = s.split_at(at);
        let or_equal = rest[1..].starts_with('=');
        let op = match (rest.starts_with('<'), or_equal) {
            (true, false) => Op::Less,
            (true, true) => Op::LessOrEqual,
            (false, false) => Op::Greater,
            (false, true) => Op::GreaterOrEqual,
        };
        let value = &rest[1 + usize::from(or_equal)..];
        let metric = match name.to_ascii_lowercase().as_str() {
            "mean" | "avg" => Metric::Mean,
            "max" => Metric::Max,
            "rps" | "req/s" => Metric::Rps,
            "errors" | "error" | "err" => {
                if value.ends_with('%') {
                    Metric::ErrorPercent
                } else {
                    Metric::Errors
                }
            }
            p if p.starts_with('p') => {
                let q: f64 = p[1..].parse().map_err(|_| bad("bad percentile"))?;
                if !(0.0..=100.0).contains(&q) {
                    return Err(bad("percentile out of 0..100"));
                }
                Metric::Quantile(q / 100.0)
            }
            _ => return Err(bad("unknown metric (p50, p99.9, mean, max, errors, rps)")),
        };
        let mut shown_unit = "";
        let limit = match metric {
            Metric::Quantile(_) | Metric::Mean | Metric::Max => {
                let (us, unit) = parse_latency_us(value)
                    .ok_or_else(|| bad("latency needs a unit: ns, us, ms, s"))?;
                shown_unit = unit;
                us
            }
            Metric::ErrorPercent => value
                .trim_end_matches('%')
                .parse::<f64>()
                .map_err(|_| bad("bad percentage"))?,
            Metric::Errors | Metric::Rps => value.parse().map_err(|_| bad("bad number"))?,
        };
        Ok(Self {
            text: text.to_string(),
            metric,
            op,
            limit,
            shown_unit,
        })
    }

    /// The expression as given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// What it measures.
    pub fn metric(&self) -> Metric {
        self.metric
    }

    /// The comparison.
    pub fn op(&self) -> Op {
        self.op
    }

    /// The limit, in the metric's unit (µs for latency, % or count for errors, req/s).
    pub fn limit(&self) -> f64 {
        self.limit
    }

    /// The outcome for a measured value `actual` (in the metric's unit).
    pub fn verdict(&self, actual: f64) -> SloOutcome {
        SloOutcome {
            expr: self.text.clone(),
            actual,
            unit: self.metric.unit(),
            measured: self.measured(actual),
            pass: self.op.holds(actual, self.limit),
        }
    }

    /// `actual` (in the metric's unit) as the expression would write it.
    fn measured(&self, actual: f64) -> String {
        match self.metric {
            Metric::Quantile(_) | Metric::Mean | Metric::Max => {
                let unit = self.shown_unit;
                format!("{:.3}{unit}", actual / latency_scale(unit).unwrap_or(1.0))
            }
            Metric::ErrorPercent => format!("{actual:.3}%"),
            Metric::Errors => format!("{actual:.0}"),
            Metric::Rps => format!("{actual:.3} req/s"),
        }
    }
}

/// `2ms` → (2000.0 µs, `ms`); `µs` is named `us`.
fn parse_latency_us(s: &str) -> Option<(f64, &'static str)> {
    let split = s.find(|c: char| c.is_alphabetic())?;
    let (num, unit) = s.split_at(split);
    let n: f64 = num.parse().ok()?;
    let unit = match unit {
        "ns" => "ns",
        "us" | "µs" => "us",
        "ms" => "ms",
        "s" => "s",
        _ => return None,
    };
    Some((n * latency_scale(unit)?, unit))
}

/// µs in one `unit`.
fn latency_scale(unit: &str) -> Option<f64> {
    Some(match unit {
        "ns" => 1e-3,
        "us" => 1.0,
        "ms" => 1e3,
        "s" => 1e6,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each expression parses to exactly this metric, comparison and limit.
    macro_rules! slo {
        ($name:ident, $text:expr, $metric:expr, $op:expr, $limit:expr) => {
            #[test]
            fn $name() {
                let s = Slo::parse($text).unwrap();
                assert_eq!(
                    (s.metric(), s.op(), s.limit()),
                    ($metric, $op, $limit as f64)
                );
                assert_eq!(s.text(), $text);
            }
        };
        ($name:ident, $text:expr, err) => {
            #[test]
            fn $name() {
                assert!(Slo::parse($text).is_err());
            }
        };
    }

    slo!(p99_ms, "p99<2ms", Metric::Quantile(0.99), Op::Less, 2000);
    slo!(
        p999_us_spaced,
        "p99.9 <= 500us",
        // As the parser computes it: 0.999 is not exactly 99.9 / 100 in binary.
        Metric::Quantile(99.9 / 100.0),
        Op::LessOrEqual,
        500
    );
    slo!(
        errors_percent,
        "errors<0.1%",
        Metric::ErrorPercent,
        Op::Less,
        0.1
    );
    slo!(error_count, "err<=10", Metric::Errors, Op::LessOrEqual, 10);
    slo!(
        rps_floor,
        "rps>=10000",
        Metric::Rps,
        Op::GreaterOrEqual,
        10000
    );
    slo!(rps_above, "req/s>5", Metric::Rps, Op::Greater, 5);
    slo!(
        mean_avg_alias,
        "avg<1.5s",
        Metric::Mean,
        Op::Less,
        1_500_000
    );
    slo!(max_ns, "max<500ns", Metric::Max, Op::Less, 0.5);
    slo!(latency_without_unit, "p99<2", err);
    slo!(unknown_metric, "latency<2ms", err);
    slo!(no_operator, "p99=2ms", err);
    slo!(percentile_above_100, "p101<2ms", err);
    slo!(percentage_not_a_number, "errors<x%", err);

    /// `actual OP limit` for every comparison at, below and above the limit.
    macro_rules! holds {
        ($name:ident, $op:expr, [$below:expr, $at:expr, $above:expr]) => {
            #[test]
            fn $name() {
                assert_eq!(
                    [
                        $op.holds(1.0, 2.0),
                        $op.holds(2.0, 2.0),
                        $op.holds(3.0, 2.0)
                    ],
                    [$below, $at, $above]
                );
            }
        };
    }

    holds!(less_excludes_the_limit, Op::Less, [true, false, false]);
    holds!(
        less_or_equal_includes_it,
        Op::LessOrEqual,
        [true, true, false]
    );
    holds!(
        greater_excludes_the_limit,
        Op::Greater,
        [false, false, true]
    );
    holds!(
        greater_or_equal_includes_it,
        Op::GreaterOrEqual,
        [false, true, true]
    );

    #[test]
    fn verdict_carries_expression_and_value() {
        let s = Slo::parse("p99 < 2ms").unwrap();
        assert_eq!(
            s.verdict(2500.0),
            SloOutcome {
                expr: "p99 < 2ms".into(),
                actual: 2500.0,
                unit: "us",
                measured: "2.500ms".into(),
                pass: false
            }
        );
        assert!(s.verdict(1999.0).pass);
    }

    #[test]
    fn latency_units_scale() {
        assert_eq!(parse_latency_us("2ms"), Some((2000.0, "ms")));
        assert_eq!(parse_latency_us("1.5s"), Some((1_500_000.0, "s")));
        assert_eq!(parse_latency_us("3µs"), Some((3.0, "us")));
    }

    /// The measured value is shown in the expression's own unit, the unit said; `actual`
    /// stays in the metric's unit, which `unit` names.
    macro_rules! measured {
        ($($name:ident: $text:expr, $actual:expr => $unit:expr, $shown:expr;)*) => {$(
            #[test]
            fn $name() {
                let v = Slo::parse($text).unwrap().verdict($actual);
                assert_eq!((v.actual, v.unit, v.measured.as_str()), ($actual, $unit, $shown));
            }
        )*};
    }

    measured! {
        measured_ms: "p99<5ms", 95.295 => "us", "0.095ms";
        measured_us: "mean<=500us", 95.295 => "us", "95.295us";
        measured_micro_sign: "max<500µs", 95.295 => "us", "95.295us";
        measured_ns: "p50<1ns", 1.5 => "us", "1500.000ns";
        measured_s: "max<1s", 250_000.0 => "us", "0.250s";
        measured_percent: "errors<0.1%", 1.0876 => "%", "1.088%";
        measured_count: "errors<10", 3.0 => "count", "3";
        measured_rps: "rps>1000", 9500.0 => "req/s", "9500.000 req/s";
    }
}
