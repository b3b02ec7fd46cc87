//! UTC timestamps without a calendar crate: `SystemTime` → `2026-11-22T13:05:01.123Z`.
use std::time::{SystemTime, UNIX_EPOCH};

/// ISO 8601 UTC with milliseconds. Times before 1970 print as the epoch.
pub(crate) fn iso8601(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, day) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian. Howard Hinnant's
/// algorithm: <https://howardhinnant.github.io/date_algorithms.html#civil_from_days>.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    macro_rules! at {
        ($name:ident, $secs:expr, $ms:expr, $want:expr) => {
            #[test]
            fn $name() {
                let t = UNIX_EPOCH + Duration::from_secs($secs) + Duration::from_millis($ms);
                assert_eq!(iso8601(t), $want);
            }
        };
    }

    at!(epoch, 0, 0, "1970-01-01T00:00:00.000Z");
    at!(leap_day_2024, 1_709_164_800, 5, "2024-02-29T00:00:00.005Z");
    at!(end_of_2025, 1_767_225_599, 999, "2025-12-31T23:59:59.999Z");
    at!(
        year_2026_afternoon,
        1_795_352_701,
        123,
        "2026-11-22T13:05:01.123Z"
    );
}
