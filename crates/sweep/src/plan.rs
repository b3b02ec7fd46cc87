//! Step plans: which concurrencies or rates a sweep visits.
//!
//! ```text
//! plan  = range / list
//! range = value ".." value ":" value      ; LOW..HIGH:STEP, e.g. 100..1000:100
//!       / value ".." value "*" factor     ; LOW..HIGH*FACTOR, e.g. 1k..64k*2
//! list  = value *( "," value )            ; e.g. 10,50,200
//! value = number [ "k" / "M" ]
//! ```
//!
//! A concurrency plan counts connections: its values are whole numbers ([`parse_count`]) and
//! a geometric range rounds each step to a whole connection count, dropping repeats. A rate
//! plan's values may be fractional.
use std::fmt;
use twelve_load::{ConfigError, parse_count, parse_rate};
use twelve_report::visual::LoadKind;

/// Most steps one plan may hold (a typo such as `1..1000000:1` should not start a day-long run).
pub const MAX_STEPS: usize = 1000;

/// Why a plan did not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError(String);

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PlanError {}

/// Parses a plan of `kind` into its steps, in order.
pub fn parse_plan(text: &str, kind: LoadKind) -> Result<Vec<f64>, PlanError> {
    let bad = |why: &str| {
        PlanError(format!(
            "step plan {text:?}: {why} (e.g. 100..1000:100, 1k..64k*2, 10,50,200)"
        ))
    };
    let rate = |s: &str| parse_rate(s.trim()).map_err(|_| bad(&format!("bad number {s:?}")));
    let num = |s: &str| match kind {
        LoadKind::Rate => rate(s),
        LoadKind::Concurrency | LoadKind::Streams => parse_count(s.trim())
            .map(|n| n as f64)
            .map_err(|_| bad(&format!("bad connection count {s:?}"))),
    };
    let steps = if let Some((low, rest)) = text.split_once("..") {
        let low = num(low)?;
        let (high, step, geometric) = if let Some((h, s)) = rest.split_once(':') {
            (num(h)?, num(s)?, false)
        } else if let Some((h, f)) = rest.split_once('*') {
            // FACTOR multiplies: it may be fractional in either kind of plan.
            (num(h)?, rate(f)?, true)
        } else {
            return Err(bad("a range needs :STEP or *FACTOR"));
        };
        if low > high {
            return Err(bad("LOW is above HIGH"));
        }
        if geometric {
            if step <= 1.0 || low <= 0.0 {
                return Err(bad("FACTOR must be above 1 and LOW above 0"));
            }
            // Multiply from LOW each time (not the previous value) so rounding never drifts;
            // the small slack admits HIGH itself despite floating-point error.
            let mut out = Vec::new();
            let mut v = low;
            let mut n = 0;
            while v <= high * (1.0 + 1e-9) && out.len() <= MAX_STEPS {
                out.push(v);
                n += 1;
                v = low * step.powi(n);
            }
            if kind != LoadKind::Rate {
                for v in &mut out {
                    *v = v.round();
                }
                out.dedup();
            }
            out
        } else {
            if step <= 0.0 {
                return Err(bad("STEP must be positive"));
            }
            let n = ((high - low) / step + 1e-9).floor() as usize + 1;
            if n > MAX_STEPS {
                return Err(bad(&format!("more than {MAX_STEPS} steps")));
            }
            (0..n).map(|i| low + step * i as f64).collect()
        }
    } else {
        text.split(',').map(num).collect::<Result<Vec<_>, _>>()?
    };
    if steps.len() > MAX_STEPS {
        return Err(bad(&format!("more than {MAX_STEPS} steps")));
    }
    if steps.iter().any(|v| *v <= 0.0) {
        return Err(bad("every step must be above 0"));
    }
    Ok(steps)
}

/// Why a knee search's `--rate LOW..HIGH` did not parse.
#[derive(Debug, Clone, PartialEq)]
pub enum BoundsError {
    /// Not `LOW..HIGH`.
    NotARange(String),
    /// LOW is not a rate.
    Low(ConfigError),
    /// HIGH is not a rate.
    High(ConfigError),
    /// Not 0 < LOW < HIGH.
    Order(String),
}

impl fmt::Display for BoundsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotARange(text) => write!(f, "--rate {text}: the knee search needs LOW..HIGH"),
            Self::Low(_) => f.write_str("--rate LOW"),
            Self::High(_) => f.write_str("--rate HIGH"),
            Self::Order(text) => write!(f, "--rate {text}: need 0 < LOW < HIGH"),
        }
    }
}

impl std::error::Error for BoundsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Low(e) | Self::High(e) => Some(e),
            Self::NotARange(_) | Self::Order(_) => None,
        }
    }
}

/// The knee search's bounds, `LOW..HIGH` in req/s (a plan's `:STEP` or `*FACTOR` suffix is
/// ignored).
pub fn parse_bounds(text: &str) -> Result<(f64, f64), BoundsError> {
    let (low, rest) = text
        .split_once("..")
        .ok_or_else(|| BoundsError::NotARange(text.to_string()))?;
    let high = rest.split([':', '*']).next().unwrap_or(rest);
    let low = parse_rate(low).map_err(BoundsError::Low)?;
    let high = parse_rate(high).map_err(BoundsError::High)?;
    if !(low > 0.0 && high > low) {
        return Err(BoundsError::Order(text.to_string()));
    }
    Ok((low, high))
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! plan {
        ($name:ident, $text:expr, [$($v:expr),*]) => {
            plan!($name, Rate, $text, [$($v),*]);
        };
        ($name:ident, $text:expr, err) => {
            plan!($name, Rate, $text, err);
        };
        ($name:ident, $kind:ident, $text:expr, [$($v:expr),*]) => {
            #[test]
            fn $name() {
                assert_eq!(parse_plan($text, LoadKind::$kind).unwrap(), vec![$($v as f64),*]);
            }
        };
        ($name:ident, $kind:ident, $text:expr, err) => {
            #[test]
            fn $name() {
                let got = parse_plan($text, LoadKind::$kind);
                assert!(got.is_err(), "{got:?}");
            }
        };
    }

    plan!(range_with_step, "100..500:100", [100, 200, 300, 400, 500]);
    plan!(range_stops_below_high, "100..450:100", [100, 200, 300, 400]);
    plan!(
        range_with_suffixes,
        "10k..30k:10k",
        [10_000, 20_000, 30_000]
    );
    plan!(range_single_step, "5..5:1", [5]);
    plan!(
        fractional_step_reaches_high,
        "0.1..0.3:0.1",
        [0.1, 0.2, 0.30000000000000004]
    );
    plan!(geometric, "1k..8k*2", [1000, 2000, 4000, 8000]);
    plan!(list, "10,50,200", [10, 50, 200]);
    plan!(single_value, "64", [64]);
    plan!(low_above_high, "500..100:100", err);
    plan!(zero_step, "100..500:0", err);
    plan!(missing_step, "100..500", err);
    plan!(factor_one, "1..8*1", err);
    plan!(zero_value, "0,10", err);
    plan!(too_many_steps, "1..1000000:1", err);
    plan!(garbage, "lots", err);
    plan!(
        concurrency_range,
        Concurrency,
        "1k..3k:1k",
        [1000, 2000, 3000]
    );
    plan!(concurrency_list, Concurrency, "1,2,64", [1, 2, 64]);
    plan!(concurrency_fraction, Concurrency, "1.5,2", err);
    plan!(concurrency_fractional_step, Concurrency, "1..2:0.5", err);
    // 1, 1.5, 2.25, 3.375, 5.06, 7.59: rounded to whole connections, the repeat of 2 dropped.
    plan!(
        concurrency_geometric_rounds,
        Concurrency,
        "1..8*1.5",
        [1, 2, 3, 5, 8]
    );

    macro_rules! bounds {
        ($name:ident, $text:expr, $want:expr) => {
            #[test]
            fn $name() {
                assert_eq!(parse_bounds($text).ok(), $want);
            }
        };
    }

    bounds!(bounds_plain, "1k..100k", Some((1_000.0, 100_000.0)));
    bounds!(
        bounds_ignore_step,
        "1000..5000:1000",
        Some((1_000.0, 5_000.0))
    );
    bounds!(bounds_reversed, "5000..1000", None);
    bounds!(bounds_single, "5000", None);

    #[test]
    fn bounds_errors_name_the_flag_and_the_value() {
        let cases = [
            ("5000", "--rate 5000: the knee search needs LOW..HIGH"),
            ("5000..1000", "--rate 5000..1000: need 0 < LOW < HIGH"),
            ("0..1000", "--rate 0..1000: need 0 < LOW < HIGH"),
            ("x..1000", "--rate LOW"),
            ("1..y", "--rate HIGH"),
        ];
        for (text, want) in cases {
            assert_eq!(parse_bounds(text).unwrap_err().to_string(), want, "{text}");
        }
    }
}
