//! The common request head in one lean pass: a fast path that accepts only what the strict
//! scanner (crate::parse) would accept, and leaves everything else to it.
//!
//! Nearly every request a server sees is a `GET`/`POST` line in origin-form, `HTTP/1.1` or
//! `HTTP/1.0`, then field lines written `Name: value` with one SP after the colon and no
//! other OWS, all within the limits. For such a head this pass finds the same lines, values
//! and framing fields as the scanner, with fewer instructions: one look per line instead of
//! a window and a limit check per step, and the line ends found from one 64-byte bitmask of
//! CR, LF, HTAB and every other CTL, and DEL, reused by every line that starts in the block
//! instead of a fresh scan per value (the simdjson idea of a structural bitmask, Langdale and
//! Lemire, <https://arxiv.org/abs/1902.08318>).
//!
//! It answers `None` for anything else: leading empty lines, another version, OWS other than
//! the one SP, obs-fold, a CTL (HTAB included) in a value, a limit reached, a head that has
//! not fully arrived. The scanner then reads the head from the start and decides the error,
//! the limit or `Partial` exactly as before, so the fast path changes no answer, only its
//! cost: the tests below and the `parse_request` fuzz target compare the two on every input.

use crate::fields::{self, Field};
use crate::limits::Limits;
use crate::parse::{Head, Line};
use crate::request::{Header, Method, Version};
use crate::scan::{ctl64, either_ows, skip_path, skip_target, skip_tchar};

/// Scans a whole common head, or answers `None` (see the module docs).
#[inline(always)]
pub(crate) fn scan<'b>(
    buf: &'b [u8],
    headers: &mut [Header<'b>],
    limits: &Limits,
) -> Option<Head<'b>> {
    // Only a head that ends within every limit: no line of it can then be longer than its own
    // limit, so no line needs a check of its own, and no scan here runs past the limits on
    // bytes the scanner would reject at them.
    let cap = limits
        .head_bytes
        .min(limits.request_line_bytes.saturating_add(2))
        .min(limits.header_line_bytes.saturating_add(2));
    let buf = &buf[..buf.len().min(cap)];
    let room = headers.len().min(limits.headers);
    let headers = &mut headers[..room];
    let (line, fields_start) = request_line(buf)?;
    let mut ends = LineEnds::new(buf, fields_start);
    let mut fields = fields::Reader::new();
    let mut count = 0;
    let mut unnamed = 0;
    let mut pos = fields_start;
    // Every line but the last is a field line; the empty line ends the head.
    while !pair_at(buf, pos, b"\r\n")? {
        // field-name = token, then exactly ": " (RFC 9110 §5.1, §5.6.2); a line that starts
        // with SP or HTAB (obs-fold) has an empty name here and goes to the scanner. A name
        // spelled as the common clients spell it is recognised with its ": " in one compare.
        let known = known_name(&buf[pos..]);
        let name_end = match known {
            Some((name, _)) => pos + name.len(),
            None => skip_tchar(buf, pos),
        };
        let value_at = name_end + 2;
        if known.is_none() && (name_end == pos || !pair_at(buf, name_end, b": ")?) {
            return None;
        }
        // The value runs to the first CTL or DEL; that must be the line's CRLF (an HTAB, which
        // a value may hold, leaves the head to the scanner).
        let value_end = ends.next(value_at);
        if !pair_at(buf, value_end, b"\r\n")? {
            return None;
        }
        // Not empty, and no OWS at either end (the scanner trims it; rare enough to leave).
        let value = &buf[value_at..value_end];
        match (value.first(), value.last()) {
            (Some(&first), Some(&last)) if !either_ows(first, last) => {}
            _ => return None,
        }
        let name = match known {
            Some((name, field)) => {
                fields.read_known(field, buf, value, value_at);
                name
            }
            None => {
                fields.read(buf, &buf[pos..name_end], value, value_at);
                unnamed += 1;
                ""
            }
        };
        *headers.get_mut(count)? = Header { name, value };
        count += 1;
        pos = value_end + 2;
    }
    Some(Head {
        line,
        fields_start,
        count,
        unnamed,
        fields,
        len: pos + 2,
        plain: true,
    })
}

/// Field names as the common clients (browsers, curl, wrk, ab, HttpArena's and TechEmpower's
/// load generators) spell them, each with the `": "` that must follow it, grouped by first
/// byte, and which framing field each is.
///
/// A line starting with one of these needs no token scan (the bytes are the name's), no search
/// for its framing role, and no UTF-8 check of the name (the `&str` is this table's); a head
/// whose names are all here skips the naming pass (measured:
/// docs/results.md#user-space-per-request). Any other spelling (`host`, `HOST`) takes the
/// token scan, which gives the same answer.
#[inline(always)]
fn known_name(rest: &[u8]) -> Option<(&'static str, Field)> {
    const H: &[(&str, &[u8], Field)] = &[("Host", b"Host: ", Field::Host)];
    const A: &[(&str, &[u8], Field)] = &[
        ("Accept", b"Accept: ", Field::Other),
        ("Accept-Encoding", b"Accept-Encoding: ", Field::Other),
        ("Accept-Language", b"Accept-Language: ", Field::Other),
    ];
    const C: &[(&str, &[u8], Field)] = &[
        ("Connection", b"Connection: ", Field::Connection),
        ("Content-Length", b"Content-Length: ", Field::ContentLength),
        ("Content-Type", b"Content-Type: ", Field::Other),
        ("Cookie", b"Cookie: ", Field::Other),
        ("Cache-Control", b"Cache-Control: ", Field::Other),
    ];
    const U: &[(&str, &[u8], Field)] = &[("User-Agent", b"User-Agent: ", Field::Other)];
    const T: &[(&str, &[u8], Field)] = &[(
        "Transfer-Encoding",
        b"Transfer-Encoding: ",
        Field::TransferEncoding,
    )];
    const E: &[(&str, &[u8], Field)] = &[("Expect", b"Expect: ", Field::Expect)];
    // The two names nearly every request carries, as one word compare each: cheaper than
    // the table alone.
    const HOST: u64 = u64::from_le_bytes(*b"Host: \0\0");
    const ACCEPT: u64 = u64::from_le_bytes(*b"Accept: ");
    const SIX: u64 = (1 << 48) - 1;
    if let Some(&word) = rest.first_chunk::<8>() {
        let word = u64::from_le_bytes(word);
        if word & SIX == HOST {
            return Some(("Host", Field::Host));
        }
        if word == ACCEPT {
            return Some(("Accept", Field::Other));
        }
    }
    let table = match rest.first()? {
        b'H' => H,
        b'A' => A,
        b'C' => C,
        b'U' => U,
        b'T' => T,
        b'E' => E,
        _ => return None,
    };
    table
        .iter()
        .find(|(_, spelled, _)| rest.starts_with(spelled))
        .map(|&(name, _, field)| (name, field))
}

const HTTP_11: u64 = u64::from_le_bytes(*b"HTTP/1.1");
const HTTP_10: u64 = u64::from_le_bytes(*b"HTTP/1.0");

/// Whether `buf[i..i + 2]` is `pair`; `None` when those bytes have not all arrived.
#[inline(always)]
fn pair_at(buf: &[u8], i: usize, pair: &[u8; 2]) -> Option<bool> {
    Some(buf.get(i..)?.first_chunk::<2>()? == pair)
}

/// `method SP request-target SP HTTP-version CRLF` with no empty line before it, a method
/// this server knows, and version `HTTP/1.1` or `HTTP/1.0`; where the field lines start.
#[inline(always)]
fn request_line(buf: &[u8]) -> Option<(Line<'_>, usize)> {
    let (method, target_start) = if buf.first_chunk::<4>() == Some(b"GET ") {
        (Method::Get, 4)
    } else {
        let end = skip_tchar(buf, 0);
        if buf.get(end) != Some(&b' ') {
            return None;
        }
        (Method::from_bytes(&buf[..end])?, end + 1)
    };
    let mut i = skip_path(buf, target_start);
    let query_at = i - target_start;
    if buf.get(i) == Some(&b'?') {
        i = skip_target(buf, i + 1);
    }
    if i == target_start || buf.get(i) != Some(&b' ') {
        return None;
    }
    // Compared as a word and a half-word: cheaper than a `match` on the 10-byte array.
    let (name, crlf) = buf
        .get(i + 1..)?
        .first_chunk::<10>()?
        .split_first_chunk::<8>()?;
    if crlf != b"\r\n" {
        return None;
    }
    let version = match u64::from_le_bytes(*name) {
        HTTP_11 => Version::Http11,
        HTTP_10 => Version::Http10,
        _ => return None,
    };
    let line = Line {
        method,
        target: &buf[target_start..i],
        query_at,
        version,
    };
    Some((line, i + 11))
}

/// Where each field line's value ends: the next CTL or DEL at or after a position, from a
/// bitmask of 64 bytes at a time that the lines in the block share.
struct LineEnds<'b> {
    buf: &'b [u8],
    base: usize,
    mask: u64,
}

impl<'b> LineEnds<'b> {
    #[inline(always)]
    fn new(buf: &'b [u8], base: usize) -> Self {
        LineEnds {
            buf,
            base,
            mask: ctl64(buf, base),
        }
    }

    /// The first flagged byte at or after `pos` (`pos >= base`, and never smaller than the
    /// last call's); `buf.len()` or more when none arrived.
    #[inline(always)]
    fn next(&mut self, mut pos: usize) -> usize {
        loop {
            let off = pos - self.base;
            if off < 64 {
                let rest = self.mask >> off;
                if rest != 0 {
                    return pos + rest.trailing_zeros() as usize;
                }
            }
            if self.base + 64 >= self.buf.len() {
                return self.buf.len();
            }
            self.base += 64;
            self.mask = ctl64(self.buf, self.base);
            pos = pos.max(self.base);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::scanned;
    use crate::parse_request;
    use proptest::prelude::*;

    /// The fast path's answer, where it gives one, is the scanner's, and `parse_request`
    /// gives the scanner's answer whichever path took the head.
    fn agree(input: &[u8], limits: &Limits) {
        let mut a = [Header::EMPTY; 12];
        let mut b = [Header::EMPTY; 12];
        let full = parse_request(input, &mut a, limits);
        let slow = scanned(input, &mut b, limits);
        assert_eq!(full, slow, "{:?}", String::from_utf8_lossy(input));
    }

    fn took_fast(input: &[u8], limits: &Limits) -> bool {
        let mut h = [Header::EMPTY; 12];
        scan(input, &mut h, limits).is_some()
    }

    const COMMON: &[u8] = b"GET /plaintext HTTP/1.1\r\nHost: localhost\r\nAccept: application/json,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7\r\n\r\n";

    /// Which heads the fast path takes (`true`) and which it leaves to the scanner; both
    /// kinds get the scanner's answer.
    #[test]
    fn common_heads_take_the_fast_path() {
        let cases: [(&[u8], bool); 11] = [
            (COMMON, true),
            (b"GET / HTTP/1.1\r\nHost: a\r\n\r\n", true),
            (
                b"POST /echo?x=1 HTTP/1.1\r\nHost: a:8080\r\nContent-Length: 5\r\n\r\nhello",
                true,
            ),
            (b"GET /json HTTP/1.0\r\n\r\n", true),
            (
                b"GET /t HTTP/1.1\r\nHost: h\r\nUser-Agent: a b c \xfe\r\n\r\nGET /next",
                true,
            ),
            // An HTAB inside a value: valid, but the scanner's (see `scan::ctl64`).
            (
                b"GET /t HTTP/1.1\r\nHost: h\r\nUser-Agent: a\tb c \xfe\r\n\r\nGET /next",
                false,
            ),
            // A name that is not a token, OWS the scanner trims, an empty line first, HTTP/1.2,
            // a head not yet whole.
            (b"PUT /a HTTP/1.1\r\nHost: h\r\nX-\xff: v\r\n\r\n", false),
            (b"GET / HTTP/1.1\r\nHost:  h\r\n\r\n", false),
            (b"\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", false),
            (b"GET / HTTP/1.2\r\nHost: h\r\n\r\n", false),
            (b"GET / HTTP/1.1\r\nHost: h\r\n", false),
        ];
        for (case, fast) in cases {
            let why = String::from_utf8_lossy(case);
            assert_eq!(took_fast(case, &Limits::DEFAULT), fast, "{why:?}");
            agree(case, &Limits::DEFAULT);
        }
    }

    /// Every prefix of pipelined heads, and each with every byte value at every position: the
    /// two paths agree on all of them (errors, `Partial`, and requests).
    #[test]
    fn every_prefix_and_every_byte_agrees() {
        let two = [
            COMMON,
            b"POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nab",
        ]
        .concat();
        for end in 0..=two.len() {
            agree(&two[..end], &Limits::DEFAULT);
        }
        let short = b"GET /a?b HTTP/1.1\r\nHost: h:1\r\nConnection: close\r\nX: y\r\n\r\n";
        for at in 0..short.len() {
            for b in 0..=255u8 {
                let mut input = short.to_vec();
                input[at] = b;
                agree(&input, &Limits::DEFAULT);
                input.insert(at, b);
                agree(&input, &Limits::DEFAULT);
            }
        }
    }

    /// Every name of the known-name table, as spelled there, in lower case, and one byte off
    /// (shorter, longer, no space after the colon), with values that matter to framing: the
    /// fast path's recognised names give the scanner's answer, errors included.
    #[test]
    fn known_names_agree_with_the_scanner() {
        let names = [
            "Host",
            "Accept",
            "Accept-Encoding",
            "Accept-Language",
            "Connection",
            "Content-Length",
            "Content-Type",
            "Cookie",
            "Cache-Control",
            "User-Agent",
            "Transfer-Encoding",
            "Expect",
        ];
        let values = ["5", "close", "chunked", "100-continue", "h:1", "x y", "-1"];
        for name in names {
            let lower = name.to_ascii_lowercase();
            let variants = [
                format!("{name}: "),
                format!("{lower}: "),
                format!("{}: ", &name[..name.len() - 1]),
                format!("{name}x: "),
                format!("{name}:"),
                format!("{name} : "),
            ];
            for v in &variants {
                for value in values {
                    for host in ["", "Host: h\r\n"] {
                        let head = format!("POST / HTTP/1.1\r\n{host}{v}{value}\r\n\r\nhello");
                        agree(head.as_bytes(), &Limits::DEFAULT);
                    }
                }
            }
        }
        assert!(took_fast(
            b"GET / HTTP/1.1\r\nHost: h\r\nAccept: */*\r\n\r\n",
            &Limits::DEFAULT
        ));
    }

    /// Each limit at, below and above the size of the line or head it bounds.
    #[test]
    fn limits_agree_at_their_edges() {
        let head: &[u8] = b"GET /abc HTTP/1.1\r\nHost: h\r\nAccept: */*\r\nX: 1\r\n\r\n";
        for n in 0..60 {
            for limits in [
                Limits {
                    request_line_bytes: n,
                    ..Limits::DEFAULT
                },
                Limits {
                    header_line_bytes: n,
                    ..Limits::DEFAULT
                },
                Limits {
                    head_bytes: n,
                    ..Limits::DEFAULT
                },
                Limits {
                    headers: n.min(5),
                    ..Limits::DEFAULT
                },
            ] {
                agree(head, &limits);
            }
        }
    }

    proptest! {
        /// Heads built from a small alphabet that is mostly the common shape, with the bytes
        /// that matter to the grammar (SP, HTAB, CR, LF, `:`, NUL, DEL, obs-text) mixed in.
        #[test]
        fn random_heads_agree(
            lines in prop::collection::vec(
                prop::collection::vec(prop::sample::select(
                    b"aZ-09:: \t\r\n\x00\x7f\x80/?=.".to_vec()), 0..24),
                0..6),
            target in prop::collection::vec(prop::sample::select(b"/a?%. \r".to_vec()), 0..8),
            cut in 0usize..400,
        ) {
            let mut input = b"GET /".to_vec();
            input.extend_from_slice(&target);
            input.extend_from_slice(b" HTTP/1.1\r\n");
            for line in &lines {
                input.extend_from_slice(b"N: ");
                input.extend_from_slice(line);
                input.extend_from_slice(b"\r\n");
            }
            input.extend_from_slice(b"\r\n");
            input.truncate(cut.max(1));
            agree(&input, &Limits::DEFAULT);
        }
    }
}
