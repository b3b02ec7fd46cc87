//! `--slo` thresholds (k6/Gatling style) that decide the exit code: `p99<2ms`,
//! `p99.9<=500us`, `mean<1ms`, `max<1s`, `errors<0.1%`, `rps>10000`.
//!
//! Latency SLOs are judged on the corrected histogram: it is the latency a user waiting on a
//! schedule saw.
use crate::json::JsonReport;
use std::fmt;

/// One threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct Slo {
    text: String,
    metric: Metric,
    less: bool,
    or_equal: bool,
    limit: f64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Metric {
    /// Corrected latency at this quantile (0–1), compared in µs.
    Quantile(f64),
    Mean,
    Max,
    /// Error share of all attempts, compared as a fraction.
    ErrorRate,
    /// Error count.
    Errors,
    Rps,
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

/// An SLO judged against a report.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SloOutcome {
    /// The expression as given.
    pub expr: String,
    /// The measured value, in the expression's unit (µs for latency, % or count for errors).
    pub actual: f64,
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
        let less = rest.starts_with('<');
        let or_equal = rest[1..].starts_with('=');
        let value = &rest[1 + usize::from(or_equal)..];
        let metric = match name.to_ascii_lowercase().as_str() {
            "mean" | "avg" => Metric::Mean,
            "max" => Metric::Max,
            "rps" | "req/s" => Metric::Rps,
            "errors" | "error" | "err" => {
                if value.ends_with('%') {
                    Metric::ErrorRate
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
        let limit = match metric {
            Metric::Quantile(_) | Metric::Mean | Metric::Max => {
                parse_latency_us(value).ok_or_else(|| bad("latency needs a unit: ns, us, ms, s"))?
            }
            Metric::ErrorRate => value
                .trim_end_matches('%')
                .parse::<f64>()
                .map_err(|_| bad("bad percentage"))?,
            Metric::Errors | Metric::Rps => value.parse().map_err(|_| bad("bad number"))?,
        };
        Ok(Self {
            text: text.to_string(),
            metric,
            less,
            or_equal,
            limit,
        })
    }

    /// Judges the threshold against a finished report.
    pub fn check(&self, r: &JsonReport) -> SloOutcome {
        let actual = match self.metric {
            Metric::Quantile(q) => r.corrected_quantile_us(q),
            Metric::Mean => r.latency.corrected.mean_us,
            Metric::Max => r.latency.corrected.max_us,
            Metric::ErrorRate => {
                let attempts = r.requests + r.errors.total;
                if attempts == 0 {
                    0.0
                } else {
                    100.0 * r.errors.total as f64 / attempts as f64
                }
            }
            Metric::Errors => r.errors.total as f64,
            Metric::Rps => r.rps,
        };
        let pass = match (self.less, self.or_equal) {
            (true, false) => actual < self.limit,
            (true, true) => actual <= self.limit,
            (false, false) => actual > self.limit,
            (false, true) => actual >= self.limit,
        };
        SloOutcome {
            expr: self.text.clone(),
            actual,
            pass,
        }
    }
}

/// `2ms` → 2000.0 (µs).
fn parse_latency_us(s: &str) -> Option<f64> {
    let split = s.find(|c: char| c.is_ascii_alphabetic())?;
    let (num, unit) = s.split_at(split);
    let n: f64 = num.parse().ok()?;
    let scale = match unit {
        "ns" => 1e-3,
        "us" | "µs" => 1.0,
        "ms" => 1e3,
        "s" => 1e6,
        _ => return None,
    };
    Some(n * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! slo {
        ($name:ident, $text:expr, ok) => {
            #[test]
            fn $name() {
                assert!(Slo::parse($text).is_ok(), "{:?}", Slo::parse($text));
            }
        };
        ($name:ident, $text:expr, err) => {
            #[test]
            fn $name() {
                assert!(Slo::parse($text).is_err());
            }
        };
    }

    slo!(p99_ms, "p99<2ms", ok);
    slo!(p999_us_spaced, "p99.9 <= 500us", ok);
    slo!(errors_percent, "errors<0.1%", ok);
    slo!(rps_floor, "rps>=10000", ok);
    slo!(latency_without_unit, "p99<2", err);
    slo!(unknown_metric, "latency<2ms", err);
    slo!(no_operator, "p99=2ms", err);

    #[test]
    fn latency_units_scale() {
        assert_eq!(parse_latency_us("2ms"), Some(2000.0));
        assert_eq!(parse_latency_us("1.5s"), Some(1_500_000.0));
    }
}
