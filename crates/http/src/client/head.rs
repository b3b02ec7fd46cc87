//! Response heads: the status line, the field lines and the three fields that decide the
//! body's framing and the connection's persistence, scanned in one pass (RFC 9112 §4, §5,
//! §6.3, §9.3).
use super::{Error, Framing, MAX_HEADERS};
use crate::error::Status;
use crate::fields::parse_content_length;
use crate::request::Header;
use crate::scan::trim_ows;

/// A parsed response head; every slice borrows the input buffer.
#[derive(Debug)]
pub struct Head<'h, 'b> {
    /// Minor version: 1 for HTTP/1.1, 0 for HTTP/1.0.
    pub minor_version: u8,
    /// Status code, 100..=999.
    pub code: u16,
    /// Reason phrase (may be empty).
    pub reason: &'b str,
    /// Header lines, in order.
    pub headers: &'h [Header<'b>],
    /// Bytes of the head, up to and including the blank line.
    pub len: usize,
    /// How the body is delimited.
    pub framing: Framing,
    /// Whether the connection may carry another response after this one (RFC 9112 §9.3).
    pub keep_alive: bool,
}

/// Parses one response head from the start of `buf`, storing its header lines in `headers`
/// (at most `headers.len()` of them; more is [`Error::TooManyHeaders`]).
///
/// `head_request` says whether the request this answers was a HEAD (its response has no body
/// whatever its headers say, RFC 9110 §9.3.2).
pub fn parse_response<'h, 'b>(
    buf: &'b [u8],
    headers: &'h mut [Header<'b>],
    head_request: bool,
) -> Result<Status<Head<'h, 'b>>, Error> {
    let mut n = 0;
    let scanned = scan(buf, head_request, |name, value| {
        let slot = headers.get_mut(n).ok_or(Error::TooManyHeaders)?;
        // Names hold no byte above 0x7e (`find_name_end`), so they are ASCII, so UTF-8.
        let name = std::str::from_utf8(name).map_err(|_| Error::Header)?;
        *slot = Header {
            name,
            value: trim_ows(value),
        };
        n += 1;
        Ok(())
    })?;
    let Status::Complete(s) = scanned else {
        return Ok(Status::Partial);
    };
    Ok(Status::Complete(Head {
        minor_version: s.line.minor_version,
        code: s.line.code,
        reason: std::str::from_utf8(s.line.reason).unwrap_or(""),
        headers: &headers[..n],
        len: s.len,
        framing: s.framing,
        keep_alive: s.keep_alive,
    }))
}

/// A head as the stream parser needs it: no header list.
pub(super) struct Scanned<'b> {
    pub(super) line: StatusLine<'b>,
    pub(super) len: usize,
    pub(super) framing: Framing,
    pub(super) keep_alive: bool,
}

/// Scans one head in a single pass, calling `each(name, value)` per header line.
///
/// Hand-written rather than httparse: the load generator needs only the status code and
/// three headers, and a name scan eight bytes at a time costs less than a per-byte token
/// table or httparse (crates/load/benches/hot_path.rs measures it).
#[inline]
pub(super) fn scan<'b>(
    buf: &'b [u8],
    head_request: bool,
    each: impl FnMut(&'b [u8], &'b [u8]) -> Result<(), Error>,
) -> Result<Status<Scanned<'b>>, Error> {
    let line = match status_line(buf)? {
        Status::Complete(line) => line,
        Status::Partial => return Ok(Status::Partial),
    };
    let mut meta = Meta::new(line.minor_version);
    let len = match field_lines(buf, line.len, &mut meta, each)? {
        Status::Complete(len) => len,
        Status::Partial => return Ok(Status::Partial),
    };
    let framing = meta.framing(line.code, head_request);
    // 101 switches protocols: nothing after it is HTTP/1.1 any more.
    let keep_alive = meta.keep_alive && framing != Framing::UntilClose && line.code != 101;
    Ok(Status::Complete(Scanned {
        line,
        len,
        framing,
        keep_alive,
    }))
}

/// The status line every response starts with, byte by byte (`d` = a digit):
/// `status-line = HTTP-version SP status-code SP [ reason-phrase ]` (RFC 9112 §4).
const STATUS_PREFIX: &[u8; 12] = b"HTTP/1.d ddd";

/// A status line's parts.
pub(super) struct StatusLine<'b> {
    minor_version: u8,
    pub(super) code: u16,
    reason: &'b [u8],
    /// Bytes up to and including its LF.
    len: usize,
}

/// Reads the status line at the start of `buf`.
#[inline]
fn status_line(buf: &[u8]) -> Result<Status<StatusLine<'_>>, Error> {
    if buf.len() < 13 {
        // Check what is there, so that a peer speaking something else is rejected at once
        // rather than waited for.
        return match buf.iter().enumerate().all(|(i, &b)| status_byte_ok(i, b)) {
            true => Ok(Status::Partial),
            false => Err(Error::StatusLine),
        };
    }
    // The whole 13-byte prefix is there: compare "HTTP/1." as one word.
    let word = u64::from_le_bytes(buf[..8].try_into().expect("8 bytes"));
    let want = u64::from_le_bytes(*b"HTTP/1.\0");
    if word & 0x00ff_ffff_ffff_ffff != want
        || !(8..12).all(|i| status_byte_ok(i, buf[i]))
        || !status_byte_ok(7, buf[7])
        || (buf[12] != b' ' && buf[12] != b'\r')
    {
        return Err(Error::StatusLine);
    }
    let minor_version = buf[7] - b'0';
    let code =
        u16::from(buf[9] - b'0') * 100 + u16::from(buf[10] - b'0') * 10 + u16::from(buf[11] - b'0');
    if code < 100 {
        return Err(Error::StatusLine);
    }
    let Some(lf) = find_lf(buf, 12) else {
        return Ok(Status::Partial);
    };
    if buf[lf - 1] != b'\r' {
        return Err(Error::StatusLine);
    }
    let reason = if lf - 1 > 13 {
        &buf[13..lf - 1]
    } else {
        &[][..]
    };
    Ok(Status::Complete(StatusLine {
        minor_version,
        code,
        reason,
        len: lf + 1,
    }))
}

/// Reads the field lines from `pos` through the empty line that ends them, feeding each to
/// `meta` and `each`; returns the position after the empty line.
#[inline]
fn field_lines<'b>(
    buf: &'b [u8],
    mut pos: usize,
    meta: &mut Meta,
    mut each: impl FnMut(&'b [u8], &'b [u8]) -> Result<(), Error>,
) -> Result<Status<usize>, Error> {
    let mut lines = 0;
    loop {
        // field-line = field-name ":" OWS field-value OWS, then CRLF; an empty line ends.
        match buf.get(pos..pos + 2) {
            None if buf.get(pos).is_none_or(|&b| b == b'\r') => return Ok(Status::Partial),
            Some(b"\r\n") => return Ok(Status::Complete(pos + 2)),
            Some([b'\r', _]) => return Err(Error::Header),
            _ => {}
        }
        let Some(i) = find_name_end(buf, pos) else {
            return Ok(Status::Partial);
        };
        if buf[i] != b':' || i == pos {
            return Err(Error::Header);
        }
        let Some(lf) = find_lf(buf, i) else {
            return Ok(Status::Partial);
        };
        if buf[lf - 1] != b'\r' {
            return Err(Error::Header);
        }
        lines += 1;
        if lines > MAX_HEADERS {
            return Err(Error::TooManyHeaders);
        }
        // Values are trimmed by whoever reads them: most are never read.
        let (name, value) = (&buf[pos..i], &buf[i + 1..lf - 1]);
        meta.apply(name, value)?;
        each(name, value)?;
        pos = lf + 1;
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Position of the first `\n` at or after `from`, eight bytes at a time (SWAR: a byte of
/// `w ^ 0x0a..` is zero where `w` had a LF; `(x - 0x01..) & !x & 0x80..` flags the lowest).
#[inline]
fn find_lf(buf: &[u8], from: usize) -> Option<usize> {
    find_flagged(
        buf,
        from,
        |w| {
            let x = w ^ (ONES * u64::from(b'\n'));
            x.wrapping_sub(ONES) & !x & HIGHS
        },
        |b| b == b'\n',
    )
}

/// Position of the first byte at or after `from` that `flags` marks, eight bytes at a time:
/// `flags(w)` sets bit 7 of at least the lowest byte of the little-endian word `w` that is
/// wanted (higher marks may be inexact), and `wanted` is the same test on one byte, for the
/// tail shorter than a word.
#[inline(always)]
fn find_flagged(
    buf: &[u8],
    from: usize,
    flags: impl Fn(u64) -> u64,
    wanted: impl Fn(u8) -> bool,
) -> Option<usize> {
    let mut i = from;
    while let Some(chunk) = buf.get(i..i + 8) {
        let t = flags(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        if t != 0 {
            return Some(i + (t.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    buf[i.min(buf.len())..]
        .iter()
        .position(|&b| wanted(b))
        .map(|p| i + p)
}

/// Whether byte `i` of a status line may be `b` (`STATUS_PREFIX`, `d` a digit, the
/// version's digit 0 or 1).
#[inline]
fn status_byte_ok(i: usize, b: u8) -> bool {
    match STATUS_PREFIX[i] {
        b'd' if i == 7 => b == b'0' || b == b'1',
        b'd' => b.is_ascii_digit(),
        want => b == want,
    }
}

/// Position of the first byte at or after `from` that ends a field name: the `:`, or a byte
/// no name may hold (a control byte, space, DEL, non-ASCII), eight bytes at a time.
///
/// This is looser than `field-name = token` (RFC 9110 §5.1): `"(),/;<=>?@[\]{}` pass. The
/// bytes that could confuse framing do not, and a load generator reading a server it was
/// pointed at need not police the rest; the per-byte table cost more than the whole scan.
#[inline]
fn find_name_end(buf: &[u8], from: usize) -> Option<usize> {
    find_flagged(
        buf,
        from,
        |x| {
            let c = x ^ (ONES * u64::from(b':'));
            // The lowest flagged byte is exact in each term (borrows and carries only move
            // up): a colon, a byte below 0x21, a byte above 0x7e.
            (c.wrapping_sub(ONES) & !c & HIGHS)
                | (x.wrapping_sub(ONES * 0x21) & !x & HIGHS)
                | ((x.wrapping_add(ONES) | x) & HIGHS)
        },
        |b| b == b':' || b <= 0x20 || b >= 0x7f,
    )
}

/// What the framing and persistence fields said, read line by line.
struct Meta {
    content_length: Option<u64>,
    /// `Some(true)` when Transfer-Encoding ends in chunked, `Some(false)` when it does not.
    transfer_chunked: Option<bool>,
    keep_alive: bool,
    http10: bool,
}

impl Meta {
    fn new(minor_version: u8) -> Self {
        Self {
            content_length: None,
            transfer_chunked: None,
            // RFC 9112 §9.3: HTTP/1.1 persists by default, HTTP/1.0 only with keep-alive.
            keep_alive: minor_version >= 1,
            http10: minor_version == 0,
        }
    }

    /// Reads the three headers that decide framing and persistence. Names compare by length
    /// first, so most headers cost one integer compare.
    #[inline]
    fn apply(&mut self, name: &[u8], value: &[u8]) -> Result<(), Error> {
        match name.len() {
            14 if name.eq_ignore_ascii_case(b"content-length") => {
                let n = parse_content_length(trim_ows(value)).ok_or(Error::ContentLength)?;
                // RFC 9110 §8.6 lets a recipient collapse identical values; a server is
                // stricter with requests (`ParseError::DuplicateContentLength`).
                if self.content_length.is_some_and(|old| old != n) {
                    return Err(Error::ContentLength);
                }
                self.content_length = Some(n);
            }
            17 if name.eq_ignore_ascii_case(b"transfer-encoding") => {
                // The last coding of the last Transfer-Encoding line is the final one.
                let last = value.rsplit(|&b| b == b',').next().unwrap_or(b"");
                self.transfer_chunked = Some(trim_ows(last).eq_ignore_ascii_case(b"chunked"));
            }
            10 if name.eq_ignore_ascii_case(b"connection") => {
                for token in value.split(|&b| b == b',') {
                    let token = trim_ows(token);
                    if token.eq_ignore_ascii_case(b"close") {
                        self.keep_alive = false;
                    } else if token.eq_ignore_ascii_case(b"keep-alive") && self.http10 {
                        self.keep_alive = true;
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The body's framing by RFC 9112 §6.3, for a response with status `code` to a request
    /// that was (`head_request`) or was not a HEAD.
    fn framing(&self, code: u16, head_request: bool) -> Framing {
        if head_request || (100..200).contains(&code) || code == 204 || code == 304 {
            Framing::Empty
        } else if let Some(chunked) = self.transfer_chunked {
            // Rule 3: Transfer-Encoding overrides Content-Length; if chunked is not the final
            // coding, a response body runs until close (rule 4, response case).
            if chunked {
                Framing::Chunked
            } else {
                Framing::UntilClose
            }
        } else if let Some(n) = self.content_length {
            Framing::Length(n)
        } else {
            Framing::UntilClose
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{find_lf, find_name_end};

    /// The SWAR search against the obvious one, at every length, position and start.
    #[test]
    fn find_lf_matches_a_byte_loop() {
        for len in 0..40 {
            for at in 0..len {
                let mut b = vec![b'\x8a'; len];
                b[at] = b'\n';
                for from in 0..=at {
                    assert_eq!(find_lf(&b, from), Some(at), "len {len} at {at} from {from}");
                }
                assert_eq!(find_lf(&b, at + 1), None);
            }
        }
    }

    /// The SWAR name scan stops where a byte loop would, for every byte value at every place.
    #[test]
    fn find_name_end_matches_a_byte_loop() {
        let stops = |b: u8| b == b':' || b <= 0x20 || b >= 0x7f;
        for len in 1..20 {
            for at in 0..len {
                for v in 0..=255u8 {
                    let mut b = vec![b'a'; len];
                    b[at] = v;
                    let want = if stops(v) { Some(at) } else { None };
                    assert_eq!(find_name_end(&b, 0), want, "len {len} at {at} byte {v:#x}");
                }
            }
        }
    }
}
