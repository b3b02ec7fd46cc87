//! Reading HTTP-dates (RFC 9110 §5.6.7) in all three historical formats, for
//! If-Modified-Since and If-Range. Writing uses `twelve_http::format_imf_fixdate`.

const DAYS: [&[u8; 3]; 7] = [b"Thu", b"Fri", b"Sat", b"Sun", b"Mon", b"Tue", b"Wed"];
const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];
/// Full day names of the obsolete RFC 850 format.
const LONG_DAYS: [&[u8]; 7] = [
    b"Thursday",
    b"Friday",
    b"Saturday",
    b"Sunday",
    b"Monday",
    b"Tuesday",
    b"Wednesday",
];

/// Parses an HTTP-date in any of the three formats a recipient MUST accept (RFC 9110 §5.6.7):
/// IMF-fixdate, obsolete RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
/// (`Sun Nov  6 08:49:37 1994`). Returns Unix seconds; `None` for anything else, which callers
/// treat as "no valid date" (an invalid If-Modified-Since is ignored, §13.1.3).
pub(crate) fn parse_http_date(s: &[u8]) -> Option<u64> {
    parse_imf(s)
        .or_else(|| parse_rfc850(s))
        .or_else(|| parse_asctime(s))
}

fn parse_imf(s: &[u8]) -> Option<u64> {
    // day-name "," SP date1 SP time-of-day SP GMT ; date1 = day SP month SP year
    if s.len() != twelve_http::DATE_LEN || &s[3..5] != b", " || &s[25..] != b" GMT" {
        return None;
    }
    DAYS.iter().position(|d| &s[..3] == *d)?;
    let day = digits(&s[5..7])?;
    expect(s, &[7, 11, 16], b' ')?;
    let month = month(&s[8..11])?;
    let year = digits(&s[12..16])?;
    let time = time_of_day(&s[17..25])?;
    civil_to_unix(year, month, day, time)
}

fn parse_rfc850(s: &[u8]) -> Option<u64> {
    // day-name-l "," SP date2 SP time-of-day SP GMT ; date2 = day "-" month "-" 2DIGIT
    let comma = s.iter().position(|&b| b == b',')?;
    LONG_DAYS.iter().position(|d| &s[..comma] == *d)?;
    let rest = &s[comma..];
    if rest.len() != 24 || &rest[..2] != b", " || &rest[20..] != b" GMT" {
        return None;
    }
    let day = digits(&rest[2..4])?;
    expect(rest, &[4, 8], b'-')?;
    expect(rest, &[11], b' ')?;
    let month = month(&rest[5..8])?;
    let yy = digits(&rest[9..11])?;
    // §5.6.7: a two-digit year that appears more than 50 years in the future means the most
    // recent past year with those digits. Fixed pivot: 70..99 → 19xx, 00..69 → 20xx.
    let year = if yy >= 70 { 1900 + yy } else { 2000 + yy };
    let time = time_of_day(&rest[12..20])?;
    civil_to_unix(year, month, day, time)
}

fn parse_asctime(s: &[u8]) -> Option<u64> {
    // day-name SP month SP ( 2DIGIT / ( SP DIGIT )) SP time-of-day SP year
    if s.len() != 24 {
        return None;
    }
    DAYS.iter().position(|d| &s[..3] == *d)?;
    expect(s, &[3, 7, 10, 19], b' ')?;
    let month = month(&s[4..7])?;
    let day = if s[8] == b' ' {
        digits(&s[9..10])?
    } else {
        digits(&s[8..10])?
    };
    let time = time_of_day(&s[11..19])?;
    let year = digits(&s[20..24])?;
    civil_to_unix(year, month, day, time)
}

fn expect(s: &[u8], at: &[usize], byte: u8) -> Option<()> {
    at.iter().all(|&i| s[i] == byte).then_some(())
}

fn digits(s: &[u8]) -> Option<u64> {
    s.iter().try_fold(0u64, |acc, &b| {
        b.is_ascii_digit().then(|| acc * 10 + u64::from(b - b'0'))
    })
}

fn month(s: &[u8]) -> Option<u64> {
    MONTHS.iter().position(|m| s == *m).map(|i| i as u64 + 1)
}

/// `HH:MM:SS` → seconds of the day. 60 is accepted as a leap second (§5.6.7 allows it).
fn time_of_day(s: &[u8]) -> Option<u64> {
    expect(s, &[2, 5], b':')?;
    let (h, m, sec) = (digits(&s[0..2])?, digits(&s[3..5])?, digits(&s[6..8])?);
    (h < 24 && m < 60 && sec <= 60).then_some(h * 3600 + m * 60 + sec)
}

fn civil_to_unix(year: u64, month: u64, day: u64, time_s: u64) -> Option<u64> {
    if year < 1970 || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + time_s)
}

fn days_in_month(year: u64, month: u64) -> u64 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 for a proleptic Gregorian date (year ≥ 1970).
/// Howard Hinnant's algorithm: <https://howardhinnant.github.io/date_algorithms.html>
fn days_from_civil(year: u64, month: u64, day: u64) -> u64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use twelve_http::format_imf_fixdate;

    /// RFC 9110 §5.6.7's example instant: Sun, 06 Nov 1994 08:49:37 GMT.
    const RFC_EXAMPLE_S: u64 = 784_111_777;

    macro_rules! parse {
        ($($name:ident: $input:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(parse_http_date($input), $want);
            }
        )*};
    }

    parse! {
        imf_fixdate: b"Sun, 06 Nov 1994 08:49:37 GMT" => Some(RFC_EXAMPLE_S);
        rfc850: b"Sunday, 06-Nov-94 08:49:37 GMT" => Some(RFC_EXAMPLE_S);
        asctime_space_padded_day: b"Sun Nov  6 08:49:37 1994" => Some(RFC_EXAMPLE_S);
        asctime_two_digit_day: b"Thu Nov 10 08:49:37 1994" => Some(RFC_EXAMPLE_S + 4 * 86_400);
        epoch: b"Thu, 01 Jan 1970 00:00:00 GMT" => Some(0);
        leap_day: b"Thu, 29 Feb 2024 12:00:00 GMT" => Some(1_709_208_000);
        rfc850_two_digit_year_2000s: b"Monday, 01-Jan-24 00:00:00 GMT" => Some(1_704_067_200);
        not_a_leap_day: b"Thu, 29 Feb 2023 12:00:00 GMT" => None;
        lower_case_month: b"Sun, 06 nov 1994 08:49:37 GMT" => None;
        utc_instead_of_gmt: b"Sun, 06 Nov 1994 08:49:37 UTC" => None;
        hour_25: b"Sun, 06 Nov 1994 25:49:37 GMT" => None;
        before_epoch: b"Sat, 01 Jan 1900 00:00:00 GMT" => None;
        empty: b"" => None;
        garbage_same_length: b"xxxxxxxxxxxxxxxxxxxxxxxxxxxxx" => None;
        trailing_space: b"Sun, 06 Nov 1994 08:49:37 GMT " => None;
    }

    #[test]
    fn format_rfc_example() {
        assert_eq!(
            &format_imf_fixdate(RFC_EXAMPLE_S),
            b"Sun, 06 Nov 1994 08:49:37 GMT"
        );
    }

    #[test]
    fn format_epoch() {
        assert_eq!(&format_imf_fixdate(0), b"Thu, 01 Jan 1970 00:00:00 GMT");
    }

    #[test]
    fn format_then_parse_round_trips_across_centuries() {
        // One instant per ~97 days from 1970 to ~2100, plus odd seconds.
        for i in 0..500u64 {
            let t = i * 8_380_417 + i % 86_400;
            assert_eq!(parse_http_date(&format_imf_fixdate(t)), Some(t), "t={t}");
        }
    }
}
