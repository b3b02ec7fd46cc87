//! The `Date` header value: IMF-fixdate (RFC 9110 §5.6.7), formatted at most once per second
//! per thread, together with the `Server` field before it, and copied from a thread-local
//! cache otherwise.

use std::cell::Cell;
use std::time::{SystemTime, UNIX_EPOCH};

/// Length of an IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
pub const DATE_LEN: usize = 29;

const DAYS: [&[u8; 3]; 7] = [b"Sun", b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat"];
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
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cold]
fn server_date_block(secs: u64) -> [u8; SERVER_DATE_LEN] {
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
}
