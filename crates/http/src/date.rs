//! HTTP-dates (RFC 9110 §5.6.7) both ways: the `Date` header value, IMF-fixdate, formatted at
//! most once per second per thread together with the `Server` field before it and copied from
//! a thread-local cache otherwise; and [`parse_http_date`], which reads all three historical
//! formats (for If-Modified-Since and If-Range). One day and month table serves both.

use std::cell::Cell;
use std::time::{SystemTime, UNIX_EPOCH};

/// Length of an IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
pub const DATE_LEN: usize = 29;

/// Day names from Sunday, the index `civil` weekday arithmetic gives (0 = Sunday).
const DAYS: [&[u8; 3]; 7] = [b"Sun", b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat"];
/// Full day names of the obsolete RFC 850 format, in the order of [`DAYS`].
const LONG_DAYS: [&[u8]; 7] = [
    b"Sunday",
    b"Monday",
    b"Tuesday",
    b"Wednesday",
    b"Thursday",
    b"Friday",
    b"Saturday",
];
/// Month names from January (index 0 = month 1).
const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// Formats seconds since the Unix epoch as an IMF-fixdate (RFC 9110 §5.6.7):
/// `IMF-fixdate = day-name "," SP date1 SP time-of-day SP GMT`. Years past 9999 print as 9999.
pub fn format_imf_fixdate(unix_secs: u64) -> [u8; DATE_LEN] {
    let days = unix_secs / 86_400;
    let secs = unix_secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    let year = year.min(9999);
    let mut out = *b"Thu, 01 Jan 1970 00:00:00 GMT";
    // 1970-01-01 was a Thursday.
    out[..3].copy_from_slice(DAYS[((days + 4) % 7) as usize]);
    put2(&mut out[5..7], day);
    out[8..11].copy_from_slice(MONTHS[(month - 1) as usize]);
    put2(&mut out[12..14], year / 100);
    put2(&mut out[14..16], year % 100);
    put2(&mut out[17..19], secs / 3600);
    put2(&mut out[20..22], secs / 60 % 60);
    put2(&mut out[23..25], secs % 60);
    out
}

fn put2(out: &mut [u8], n: u64) {
    out[0] = b'0' + (n / 10 % 10) as u8;
    out[1] = b'0' + (n % 10) as u8;
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar, after
/// Howard Hinnant's `civil_from_days` (<https://howardhinnant.github.io/date_algorithms.html>).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// Parses an HTTP-date in any of the three formats a recipient MUST accept (RFC 9110 §5.6.7):
/// IMF-fixdate, obsolete RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
/// (`Sun Nov  6 08:49:37 1994`). Returns Unix seconds; `None` for anything else, which callers
/// treat as "no valid date" (an invalid If-Modified-Since is ignored, §13.1.3).
pub fn parse_http_date(s: &[u8]) -> Option<u64> {
    parse_imf(s)
        .or_else(|| parse_rfc850(s))
        .or_else(|| parse_asctime(s))
}

fn parse_imf(s: &[u8]) -> Option<u64> {
    // day-name "," SP date1 SP time-of-day SP GMT ; date1 = day SP month SP year
    if s.len() != DATE_LEN || &s[3..5] != b", " || &s[25..] != b" GMT" {
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

/// What follows every status line: `\r\nServer: twelve\r\nDate: ` + IMF-fixdate + `\r\n`.
const SERVER_DATE_PREFIX: &[u8; 24] = b"\r\nServer: twelve\r\nDate: ";

/// Length of [`server_date`]'s block.
pub(crate) const SERVER_DATE_LEN: usize = SERVER_DATE_PREFIX.len() + DATE_LEN + 2;

/// This thread's cached block, and whether the thread holds its clock (see [`refresh_date`]).
#[derive(Clone, Copy)]
struct Cached {
    /// The second `block` was formatted for; `u64::MAX` means "never formatted".
    secs: u64,
    /// [`refresh_date`] was called: use `block` without reading the clock.
    held: bool,
    block: [u8; SERVER_DATE_LEN],
}

thread_local! {
    /// The second [`refresh_date`] held, `u64::MAX` if it was never called on this thread.
    static HELD_SECS: Cell<u64> = const { Cell::new(u64::MAX) };
    static CACHE: Cell<Cached> = const {
        Cell::new(Cached {
            secs: u64::MAX,
            held: false,
            block: [0; SERVER_DATE_LEN],
        })
    };
}

/// The bytes between the status line and the other fields, `Server` and the current `Date`,
/// from this thread's cache, rebuilt only when the second changed: one fixed-size copy per
/// response instead of four. Reading the clock is a vDSO call per response otherwise, so a
/// thread that called [`refresh_date`] does not read it here at all.
#[inline]
pub(crate) fn server_date() -> [u8; SERVER_DATE_LEN] {
    CACHE.with(|cache| {
        let cached = cache.get();
        if cached.held {
            return cached.block;
        }
        let secs = now_secs();
        if cached.secs == secs {
            return cached.block;
        }
        let block = server_date_block(secs);
        cache.set(Cached {
            secs,
            held: false,
            block,
        });
        block
    })
}

/// The second this thread's next `Date` is for: the held second after [`refresh_date`]
/// (no clock read), the clock's otherwise. [`crate::HeadCache`] keys its heads on it.
#[inline]
pub(crate) fn date_secs() -> u64 {
    // Its own cell: `CACHE.get()` would copy the whole 72-byte block out on every response
    // (measured: docs/results.md#user-space-per-request).
    match HELD_SECS.get() {
        u64::MAX => now_secs(),
        secs => secs,
    }
}

/// Reads the clock once for this thread's `Date`: from now on, the responses this thread
/// encodes carry the date of its latest call instead of each reading the clock. For an event
/// loop, which calls it once per wake-up before answering what woke it, so a Date is never
/// older than one turn of the loop (and TechEmpower's "at most one second old" holds as long
/// as a turn takes less). A thread that never calls it reads the clock per response.
pub fn refresh_date() {
    let secs = now_secs();
    CACHE.with(|cache| {
        let cached = cache.get();
        let block = if cached.secs == secs {
            cached.block
        } else {
            server_date_block(secs)
        };
        cache.set(Cached {
            secs,
            held: true,
            block,
        });
    });
    HELD_SECS.set(secs);
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cold]
pub(crate) fn server_date_block(secs: u64) -> [u8; SERVER_DATE_LEN] {
    let mut block = [0; SERVER_DATE_LEN];
    let (prefix, rest) = block.split_at_mut(SERVER_DATE_PREFIX.len());
    prefix.copy_from_slice(SERVER_DATE_PREFIX);
    let (date, crlf) = rest.split_at_mut(DATE_LEN);
    date.copy_from_slice(&format_imf_fixdate(secs));
    crlf.copy_from_slice(b"\r\n");
    block
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! fixdate {
        ($($name:ident: $secs:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(std::str::from_utf8(&format_imf_fixdate($secs)).unwrap(), $want);
            }
        )*};
    }

    fixdate! {
        fixdate_epoch: 0 => "Thu, 01 Jan 1970 00:00:00 GMT";
        fixdate_rfc_example: 784_111_777 => "Sun, 06 Nov 1994 08:49:37 GMT";
        fixdate_leap_day: 951_782_400 => "Tue, 29 Feb 2000 00:00:00 GMT";
        fixdate_end_of_2099: 4_102_444_799 => "Thu, 31 Dec 2099 23:59:59 GMT";
        fixdate_y2038: 2_147_483_648 => "Tue, 19 Jan 2038 03:14:08 GMT";
    }

    #[test]
    fn cached_date_matches_the_clock() {
        let secs = || {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_secs()
        };
        let before = secs();
        let block = server_date();
        let after = secs();
        let (prefix, rest) = block.split_at(SERVER_DATE_PREFIX.len());
        assert_eq!(prefix, SERVER_DATE_PREFIX);
        assert_eq!(&rest[DATE_LEN..], b"\r\n");
        assert!((before..=after).any(|s| format_imf_fixdate(s)[..] == rest[..DATE_LEN]));
    }

    #[test]
    fn refreshed_date_is_the_clock_at_the_refresh() {
        let secs = || {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_secs()
        };
        // A thread of its own: the refresh holds this thread's clock from now on.
        std::thread::spawn(move || {
            for _ in 0..3 {
                let before = secs();
                refresh_date();
                let after = secs();
                let block = server_date();
                assert_eq!(block, server_date());
                let (prefix, rest) = block.split_at(SERVER_DATE_PREFIX.len());
                assert_eq!(prefix, SERVER_DATE_PREFIX);
                assert_eq!(&rest[DATE_LEN..], b"\r\n");
                assert!((before..=after).any(|s| format_imf_fixdate(s)[..] == rest[..DATE_LEN]));
            }
        })
        .join()
        .unwrap();
    }

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

    /// The two directions agree: whatever the formatter writes, the parser reads back.
    #[test]
    fn format_then_parse_round_trips_across_centuries() {
        // One instant per ~97 days from 1970 to ~2100, plus odd seconds.
        for i in 0..500u64 {
            let t = i * 8_380_417 + i % 86_400;
            assert_eq!(parse_http_date(&format_imf_fixdate(t)), Some(t), "t={t}");
        }
    }
}
