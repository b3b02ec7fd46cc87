//! Step plans: which concurrencies or rates a sweep visits.
//!
//! ```text
//! plan  = range / list
//! range = value ".." value ":" value      ; LOW..HIGH:STEP, e.g. 100..1000:100
//!       / value ".." value "*" factor     ; LOW..HIGH*FACTOR, e.g. 1k..64k*2
//! list  = value *( "," value )            ; e.g. 10,50,200
//! value = number [ "k" / "M" ]
//! ```
use crate::config::parse_rate;
use std::fmt;

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

/// Parses a plan into its steps, in order.
pub fn parse_plan(text: &str) -> Result<Vec<f64>, PlanError> {
    let bad = |why: &str| {
        PlanError(format!(
            "step plan {text:?}: {why} (e.g. 100..1000:100, 1k..64k*2, 10,50,200)"
        ))
    };
    let num = |s: &str| parse_rate(s.trim()).map_err(|_| bad(&format!("bad number {s:?}")));
    let steps = if let Some((low, rest)) = text.split_once("..") {
        let low = num(low)?;
        let (high, step, geometric) = if let Some((h, s)) = rest.split_once(':') {
            (num(h)?, num(s)?, false)
        } else if let Some((h, f)) = rest.split_once('*') {
            (num(h)?, num(f)?, true)
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
            while v <= high * (1.0 + 1e-9) && out.len() <= MAX_STEPS {
                out.push(v);
                v = low * step.powi(out.len() as i32);
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

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! plan {
        ($name:ident, $text:expr, [$($v:expr),*]) => {
            #[test]
            fn $name() {
                assert_eq!(parse_plan($text).unwrap(), vec![$($v as f64),*]);
            }
        };
        ($name:ident, $text:expr, err) => {
            #[test]
            fn $name() {
                assert!(parse_plan($text).is_err(), "{:?}", parse_plan($text));
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
}
