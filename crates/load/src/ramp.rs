//! Rate ramps of the open model in one run (`-R 10k:100k` linear over the duration,
//! `-R 10k:100k:10k` in steps of 10k, each lasting the duration), as piecewise-linear rate
//! segments. Slot `k` is due when the expected arrival count reaches `k`: a pure function of
//! `k` (as the uniform schedule's `k / rate`), so rounding never accumulates into drift.
use crate::config::ConfigError;
use std::time::Duration;

/// A ramp as asked on the command line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ramp {
    /// Rate at the start, req/s.
    pub from_per_s: f64,
    /// Rate at the end, req/s.
    pub to_per_s: f64,
    /// `None`: linear from `from` to `to` over the duration; `Some(step)`: constant rates
    /// `from`, `from + step`, … up to `to`, each for the duration.
    pub step_per_s: Option<f64>,
}

impl Ramp {
    /// Parses `A:B` or `A:B:STEP` (rates as [`crate::parse_rate`] reads them); `Ok(None)`
    /// for a plain rate.
    pub fn parse(text: &str) -> Result<Option<Self>, ConfigError> {
        let parts: Vec<&str> = text.split(':').collect();
        if parts.len() == 1 {
            return Ok(None);
        }
        let bad = |why: &str| {
            ConfigError(format!(
                "-R/--rate {text}: {why} (a ramp is FROM:TO, linear, or FROM:TO:STEP, e.g. \
                 10k:100k or 10k:100k:10k)"
            ))
        };
        if parts.len() > 3 {
            return Err(bad("too many parts"));
        }
        let rate = |s: &str| crate::parse_rate(s).map_err(|_| bad(&format!("bad rate {s:?}")));
        let (from, to) = (rate(parts[0])?, rate(parts[1])?);
        if from <= 0.0 || to <= 0.0 {
            return Err(bad("rates must be positive"));
        }
        let step = match parts.get(2) {
            Some(s) => {
                let step = rate(s)?;
                if step <= 0.0 {
                    return Err(bad("the step must be positive"));
                }
                if (to - from).abs() / step > 1000.0 {
                    return Err(bad("more than 1000 steps"));
                }
                Some(step)
            }
            None => None,
        };
        Ok(Some(Self {
            from_per_s: from,
            to_per_s: to,
            step_per_s: step,
        }))
    }

    /// The rates of a stepped ramp, in order (one for a linear ramp: its start).
    pub fn step_rates(&self) -> Vec<f64> {
        let Some(step) = self.step_per_s else {
            return vec![self.from_per_s];
        };
        let dir = if self.to_per_s >= self.from_per_s {
            1.0
        } else {
            -1.0
        };
        let n = ((self.to_per_s - self.from_per_s).abs() / step + 1e-9).floor() as usize;
        (0..=n)
            .map(|i| self.from_per_s + dir * step * i as f64)
            .collect()
    }

    /// The measured window: the duration per step times the steps (linear: the duration).
    pub fn window(&self, per_step: Duration) -> Duration {
        per_step * self.step_rates().len() as u32
    }

    /// The rate segments from the run's start: the warm-up at the first rate, then the ramp.
    pub(crate) fn segments(&self, warmup: Duration, per_step: Duration) -> Vec<Segment> {
        let mut out = Vec::new();
        let mut push = |len: Duration, r0: f64, r1: f64| {
            if !len.is_zero() {
                out.push((len.as_secs_f64(), r0, r1));
            }
        };
        push(warmup, self.from_per_s, self.from_per_s);
        match self.step_per_s {
            None => push(per_step, self.from_per_s, self.to_per_s),
            Some(_) => {
                for r in self.step_rates() {
                    push(per_step, r, r);
                }
            }
        }
        Segments::build(&out)
    }

    /// The mean offered rate over `[a, b)` seconds of the measured window.
    pub fn mean_rate(&self, warmup: Duration, per_step: Duration, a: f64, b: f64) -> f64 {
        let segs = self.segments(warmup, per_step);
        let w = warmup.as_secs_f64();
        (count_at(&segs, w + b) - count_at(&segs, w + a)) / (b - a)
    }
}

/// One stretch of the schedule: from `t0_s` for `len_s`, the rate going linearly from `r0`
/// to `r1`; `k0` arrivals are due before it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Segment {
    t0_s: f64,
    len_s: f64,
    r0: f64,
    r1: f64,
    k0: f64,
}

struct Segments;

impl Segments {
    fn build(parts: &[(f64, f64, f64)]) -> Vec<Segment> {
        let (mut t, mut k) = (0.0, 0.0);
        parts
            .iter()
            .map(|&(len_s, r0, r1)| {
                let s = Segment {
                    t0_s: t,
                    len_s,
                    r0,
                    r1,
                    k0: k,
                };
                t += len_s;
                k += (r0 + r1) / 2.0 * len_s;
                s
            })
            .collect()
    }
}

/// Arrivals expected in `[0, t_s]`; past the last segment its end rate goes on.
pub(crate) fn count_at(segs: &[Segment], t_s: f64) -> f64 {
    let s = segs
        .iter()
        .rev()
        .find(|s| s.t0_s <= t_s)
        .unwrap_or(&segs[0]);
    let dt = (t_s - s.t0_s).max(0.0);
    let slope = (s.r1 - s.r0) / s.len_s;
    if dt > s.len_s {
        let n_seg = (s.r0 + s.r1) / 2.0 * s.len_s;
        return s.k0 + n_seg + s.r1 * (dt - s.len_s);
    }
    s.k0 + s.r0 * dt + slope * dt * dt / 2.0
}

/// When arrival `k` is due, seconds from the start (the inverse of [`count_at`]).
pub(crate) fn time_of(segs: &[Segment], k: f64) -> f64 {
    let s = segs.iter().rev().find(|s| s.k0 <= k).unwrap_or(&segs[0]);
    let n = k - s.k0;
    let n_seg = (s.r0 + s.r1) / 2.0 * s.len_s;
    if n > n_seg {
        return s.t0_s + s.len_s + (n - n_seg) / s.r1;
    }
    let slope = (s.r1 - s.r0) / s.len_s;
    if slope.abs() < 1e-12 {
        return s.t0_s + n / s.r0;
    }
    // slope/2 dt² + r0 dt - n = 0, the root that is ≥ 0 (stable form).
    let disc = (s.r0 * s.r0 + 2.0 * slope * n).max(0.0);
    s.t0_s + 2.0 * n / (s.r0 + disc.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(text: &str) -> Ramp {
        Ramp::parse(text).unwrap().unwrap()
    }

    #[test]
    fn plain_rate_is_no_ramp() {
        assert_eq!(Ramp::parse("10k").unwrap(), None);
    }

    macro_rules! refused {
        ($name:ident, $text:expr, $says:expr) => {
            #[test]
            fn $name() {
                let err = Ramp::parse($text).unwrap_err().to_string();
                assert!(err.contains($says), "{err}");
            }
        };
    }

    refused!(
        zero_start_refused,
        "0:10k",
        "-R/--rate 0:10k: rates must be positive"
    );
    refused!(bad_rate_named, "10k:lots", "bad rate \"lots\"");
    refused!(four_parts_refused, "1:2:3:4", "too many parts");
    refused!(tiny_step_refused, "1:100k:1", "more than 1000 steps");

    #[test]
    fn steps_go_up_and_down() {
        assert_eq!(ramp("10k:40k:10k").step_rates(), [10e3, 20e3, 30e3, 40e3]);
        assert_eq!(ramp("30k:10k:10k").step_rates(), [30e3, 20e3, 10e3]);
        let d = Duration::from_secs(2);
        assert_eq!(ramp("10k:40k:10k").window(d), Duration::from_secs(8));
        assert_eq!(ramp("10k:40k").window(d), d);
    }

    /// Property: `time_of` inverts `count_at` everywhere, across every segment boundary.
    #[test]
    fn time_of_inverts_count_at() {
        for text in ["1k:9k", "9k:1k", "1k:5k:1k", "5k:1k:2k"] {
            let segs = ramp(text).segments(Duration::from_millis(300), Duration::from_secs(1));
            for k in (0..20_000).step_by(37) {
                let t = time_of(&segs, k as f64);
                let back = count_at(&segs, t);
                assert!(
                    (back - k as f64).abs() < 1e-6,
                    "{text}: k {k} -> {t} -> {back}"
                );
            }
        }
    }

    #[test]
    fn linear_ramp_offers_the_mean_of_its_ends() {
        let r = ramp("10k:30k");
        let (w, d) = (Duration::from_secs(1), Duration::from_secs(10));
        assert!((r.mean_rate(w, d, 0.0, 10.0) - 20e3).abs() < 1e-6);
        // The last 20% runs from 26k to 30k.
        assert!((r.mean_rate(w, d, 8.0, 10.0) - 28e3).abs() < 1e-6);
        // The warm-up runs at the first rate.
        assert!((count_at(&r.segments(w, d), 1.0) - 10e3).abs() < 1e-6);
    }
}
