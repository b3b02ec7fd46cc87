//! `--hgrm FILE`: the percentile distribution HdrHistogram's `outputPercentileDistribution`
//! prints (wrk2's "Detailed Percentile spectrum"), which the HdrHistogram plotFiles page and
//! `hdrplot` read. Values are in ms, as wrk2 prints them.
use crate::latency::SIGNIFICANT_DIGITS;
use hdrhistogram::Histogram;
use std::io::{self, Write};

/// Quantile steps per halving of the distance to 100%, as the Java default.
const TICKS_PER_HALF_DISTANCE: u32 = 5;

/// Writes the distribution of `h` (recorded in ns) with values in ms.
pub fn write_hgrm<W: Write>(h: &Histogram<u64>, mut out: W) -> io::Result<()> {
    let ms = |ns: f64| ns / 1e6;
    writeln!(
        out,
        "{:>12} {:>14} {:>10} {:>14}\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    )?;
    let mut total = 0u64;
    for v in h.iter_quantiles(TICKS_PER_HALF_DISTANCE) {
        total += v.count_since_last_iteration();
        let q = v.quantile_iterated_to();
        let value = ms(v.value_iterated_to() as f64);
        if q < 1.0 {
            writeln!(
                out,
                "{value:12.3} {q:2.12} {total:10} {:14.2}",
                1.0 / (1.0 - q)
            )?;
        } else {
            writeln!(out, "{value:12.3} {q:2.12} {total:10}")?;
        }
    }
    // 2^ceil(log2(2 * 10^digits)) sub-buckets: 2048 for 3 digits.
    let sub_buckets = (2.0 * 10f64.powi(i32::from(SIGNIFICANT_DIGITS)))
        .log2()
        .ceil()
        .exp2() as u64;
    writeln!(
        out,
        "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]",
        ms(h.mean()),
        ms(h.stdev())
    )?;
    writeln!(
        out,
        "#[Max     = {:12.3}, Total count    = {:12}]",
        ms(h.max() as f64),
        h.len()
    )?;
    writeln!(
        out,
        "#[Buckets = {:12}, SubBuckets     = {:12}]",
        h.buckets(),
        sub_buckets
    )?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::latency::new_histogram;

    #[test]
    fn distribution_ends_at_max_with_every_count() {
        let mut h = new_histogram();
        for i in 1..=10_000u64 {
            h.record(i * 1_000).unwrap();
        }
        let mut out = Vec::new();
        write_hgrm(&h, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let rows: Vec<Vec<&str>> = text
            .lines()
            .skip(2)
            .take_while(|l| !l.starts_with('#'))
            .map(|l| l.split_whitespace().collect())
            .collect();
        let last = rows.last().unwrap();
        assert_eq!(last[1], "1.000000000000");
        assert_eq!(last[2], "10000");
        let max_ms = h.max() as f64 / 1e6;
        assert!(
            (last[0].parse::<f64>().unwrap() - max_ms).abs() < 1e-3,
            "{last:?}"
        );
        // Percentiles and counts never go down.
        for w in rows.windows(2) {
            assert!(w[0][1].parse::<f64>().unwrap() <= w[1][1].parse::<f64>().unwrap());
            assert!(w[0][2].parse::<u64>().unwrap() <= w[1][2].parse::<u64>().unwrap());
        }
        assert!(text.contains("SubBuckets     =         2048]"), "{text}");
        assert!(text.contains("Total count    =        10000]"), "{text}");
    }
}
