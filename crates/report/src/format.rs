//! Number formatting shared by the text writers: wrk's units (us, ms, s; k, M; KB, MB).

/// A latency given in µs, as wrk prints it: `635.91us`, `12.92ms`, `1.02s`.
pub(crate) fn latency_us(us: f64) -> String {
    if us < 1_000.0 {
        format!("{us:.2}us")
    } else if us < 1_000_000.0 {
        format!("{:.2}ms", us / 1e3)
    } else if us < 60_000_000.0 {
        format!("{:.2}s", us / 1e6)
    } else {
        format!("{:.2}m", us / 60e6)
    }
}

/// A count with a metric suffix: `56.20k`, `1.20M`.
pub(crate) fn metric(n: f64) -> String {
    if n < 1e3 {
        format!("{n:.2}")
    } else if n < 1e6 {
        format!("{:.2}k", n / 1e3)
    } else if n < 1e9 {
        format!("{:.2}M", n / 1e6)
    } else {
        format!("{:.2}G", n / 1e9)
    }
}

/// A byte count in binary units: `150.00MB`.
pub(crate) fn bytes(n: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = n;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    format!("{v:.2}{}", UNITS[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! fmt {
        ($name:ident, $got:expr, $want:expr) => {
            #[test]
            fn $name() {
                assert_eq!($got, $want);
            }
        };
    }

    fmt!(micros, latency_us(635.914), "635.91us");
    fmt!(millis, latency_us(12_920.0), "12.92ms");
    fmt!(seconds, latency_us(1_020_000.0), "1.02s");
    fmt!(kilo, metric(56_200.0), "56.20k");
    fmt!(small, metric(12.0), "12.00");
    fmt!(megabytes, bytes(150.0 * 1024.0 * 1024.0), "150.00MB");
}
