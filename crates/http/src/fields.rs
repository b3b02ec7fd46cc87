//! The fields that decide framing and routing, read line by line as the scanner walks the
//! head: Host, Content-Length, Transfer-Encoding,
//! Connection and Expect (RFC 9112 §3.2, §6, §9; RFC 9110 §7.2, §8.6, §10.1.1), and the
//! Content-Length reader the client side shares.

use crate::error::ParseError;
use crate::limits::Limits;
use crate::request::{BodyFraming, Version};
use crate::scan::{is_tchar, is_valid_authority_in, trim_ows};

/// What the head's fields say about the message.
pub(crate) struct Fields<'b> {
    /// The Host value, validated (ASCII); made a `&str` with the head's other text.
    pub(crate) host: Option<&'b [u8]>,
    pub(crate) framing: BodyFraming,
    pub(crate) keep_alive: bool,
    pub(crate) expect_continue: bool,
}

/// The fields [`Reader`] reads, and `Other` for the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    Host,
    Expect,
    Connection,
    ContentLength,
    TransferEncoding,
    Other,
}

/// What the field lines said so far, one bit each: Transfer-Encoding across all of its lines
/// (a list may be split over several, RFC 9110 §5.3), Connection's options and Expect. One
/// byte rather than six `bool`s: the fast path's `Head` carries the reader to `finish`, and
/// its six flags were moved there one byte at a time.
#[derive(Clone, Copy, Default)]
struct Flags(u8);

impl Flags {
    const TE_PRESENT: u8 = 1;
    const TE_CHUNKED: u8 = 2;
    const TE_UNKNOWN: u8 = 4;
    const CLOSE: u8 = 8;
    const KEEP_ALIVE: u8 = 16;
    const EXPECT_CONTINUE: u8 = 32;

    #[inline(always)]
    fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }

    #[inline(always)]
    fn set(&mut self, bit: u8) {
        self.0 |= bit;
    }

    #[inline(always)]
    fn set_if(&mut self, bit: u8, on: bool) {
        self.0 |= if on { bit } else { 0 };
    }
}

/// Reads the framing and routing fields one field line at a time, while the scanner walks
/// the head (the single pass of issue 14: no second loop over the header array).
///
/// A field's error is kept, not returned: the scanner's errors on later lines, and `Partial`,
/// come first, so the answer stays what a head-then-fields reading gives (the first field
/// error in line order, after every syntax check of the whole head).
pub(crate) struct Reader<'b> {
    host: Option<&'b [u8]>,
    length: Option<u64>,
    flags: Flags,
    /// The first field error, reported by [`Reader::finish`].
    error: Option<ParseError>,
}

impl<'b> Reader<'b> {
    pub(crate) fn new() -> Self {
        Reader {
            host: None,
            length: None,
            flags: Flags::default(),
            error: None,
        }
    }

    /// Reads one field line: `name` as sent, `value` without OWS, both slices of `buf`, whose
    /// bytes after `value` are the rest of the head (the line's CRLF at least), so that Host
    /// is checked in place (see [`is_valid_authority_in`]).
    #[inline(always)]
    pub(crate) fn read(&mut self, buf: &'b [u8], name: &[u8], value: &'b [u8], value_at: usize) {
        // Dispatch on the length first: most fields are none of these five.
        let field = match name.len() {
            4 if is(name, "host") => Field::Host,
            // The only expectation defined; others are ignored (417 is optional, §10.1.1).
            6 if is(name, "expect") => Field::Expect,
            10 if is(name, "connection") => Field::Connection,
            14 if is(name, "content-length") => Field::ContentLength,
            17 if is(name, "transfer-encoding") => Field::TransferEncoding,
            _ => return,
        };
        self.read_known(field, buf, value, value_at);
    }

    /// Reads one field line whose name the caller recognised (see [`Field`]): what
    /// [`Reader::read`] does for that name, without matching it again.
    #[inline(always)]
    pub(crate) fn read_known(&mut self, field: Field, buf: &'b [u8], value: &'b [u8], at: usize) {
        match field {
            Field::Host => self.host(buf, value, at),
            Field::Expect => self
                .flags
                .set_if(Flags::EXPECT_CONTINUE, eq_lower(value, b"100-continue")),
            Field::Connection => self.connection(value),
            Field::ContentLength => self.content_length(value),
            Field::TransferEncoding => {
                if let Err(e) = add_coding_line(&mut self.flags, value) {
                    self.fail(e);
                }
            }
            Field::Other => {}
        }
    }

    /// Keeps the first error only.
    fn fail(&mut self, e: ParseError) {
        self.error.get_or_insert(e);
    }

    /// `Host = uri-host [ ":" port ]` (RFC 9110 §7.2).
    #[inline(always)]
    fn host(&mut self, buf: &'b [u8], value: &'b [u8], value_at: usize) {
        if self.host.is_some() {
            self.fail(ParseError::DuplicateHost);
        } else if !is_valid_authority_in(buf, value_at, value_at + value.len(), true) {
            self.fail(ParseError::InvalidHost);
        } else {
            self.host = Some(value);
        }
    }

    fn connection(&mut self, value: &[u8]) {
        // The common values first, without splitting the list.
        if eq_lower(value, b"keep-alive") {
            self.flags.set(Flags::KEEP_ALIVE);
            return;
        }
        for option in value.split(|&b| b == b',') {
            let option = trim_ows(option);
            self.flags.set_if(Flags::CLOSE, eq_lower(option, b"close"));
            self.flags
                .set_if(Flags::KEEP_ALIVE, eq_lower(option, b"keep-alive"));
        }
    }

    fn content_length(&mut self, value: &[u8]) {
        // Project choice: a second Content-Length, even an identical one, is rejected rather
        // than collapsed (RFC 9110 §8.6 allows either).
        if self.length.is_some() || value.contains(&b',') {
            return self.fail(ParseError::DuplicateContentLength);
        }
        match parse_content_length(value) {
            Some(n) => self.length = Some(n),
            None => self.fail(ParseError::InvalidContentLength),
        }
    }

    /// What the head's fields say, once every field line was read: the first field error, or
    /// the checks that need the whole head (Host present, TE against CL and the version).
    #[inline(always)]
    pub(crate) fn finish(
        self,
        version: Version,
        limits: &Limits,
    ) -> Result<Fields<'b>, ParseError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if version == Version::Http11 && self.host.is_none() {
            // RFC 9112 §3.2: MUST 400 an HTTP/1.1 request without Host.
            return Err(ParseError::MissingHost);
        }
        let flags = self.flags;
        let framing = if flags.has(Flags::TE_PRESENT) {
            // §6.1: TE in HTTP/1.0 means faulty framing; nginx answers 400, and so do we.
            if version == Version::Http10 {
                return Err(ParseError::TransferEncodingInHttp10);
            }
            // §6.1 allows processing by TE; the project rejects TE with CL (smuggling vector).
            if self.length.is_some() {
                return Err(ParseError::TransferEncodingWithContentLength);
            }
            if flags.has(Flags::TE_UNKNOWN) {
                return Err(ParseError::UnknownTransferCoding);
            }
            if !flags.has(Flags::TE_CHUNKED) {
                // An empty Transfer-Encoding value: nothing valid was listed.
                return Err(ParseError::InvalidTransferEncoding);
            }
            BodyFraming::Chunked
        } else {
            match self.length {
                Some(n) if n > limits.body_bytes => return Err(ParseError::BodyTooLarge),
                Some(n) => BodyFraming::Length(n),
                None => BodyFraming::None,
            }
        };
        Ok(Fields {
            host: self.host,
            framing,
            keep_alive: !flags.has(Flags::CLOSE)
                && (version == Version::Http11 || flags.has(Flags::KEEP_ALIVE)),
            expect_continue: flags.has(Flags::EXPECT_CONTINUE) && version == Version::Http11,
        })
    }
}

/// Case-insensitive name comparison for same-length names, rejecting on the first byte first:
/// `User-Agent` is as long as `connection` but never needs the full compare.
#[inline(always)]
fn is(name: &[u8], lower: &str) -> bool {
    name.first().map(|b| b | 0x20) == lower.as_bytes().first().copied()
        && eq_lower(name, lower.as_bytes())
}

/// `s.eq_ignore_ascii_case(lower)` eight bytes a step, for a `lower` of lowercase letters,
/// digits and `-` only, and an `s` the scanner validated (a token or a field value: no CTL).
/// Setting bit 5 of every byte folds `A`-`Z` onto `a`-`z`; the only other bytes it maps onto
/// a digit or `-` are CTLs (0x10-0x19, 0x0D), which `s` cannot hold, none maps onto a letter
/// but its uppercase, and bytes >= 0x80 stay >= 0x80.
#[inline(always)]
fn eq_lower(s: &[u8], lower: &[u8]) -> bool {
    const FOLD: u64 = u64::from_le_bytes([0x20; 8]);
    s.len() == lower.len()
        && s.chunks(8)
            .zip(lower.chunks(8))
            .all(|(a, b)| word(a) | FOLD == word(b) | FOLD)
}

/// Up to eight bytes as a little-endian word, zero-padded.
#[inline(always)]
fn word(bytes: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(w)
}

/// `Content-Length = 1*DIGIT` (RFC 9110 §8.6) of a value already stripped of OWS: no sign, no
/// hex, no space, no empty value; leading zeros are decimal (`0005` is 5); a value over u64 is
/// `None`, never a wrap. Requests and the client's responses both read it here; each caller
/// maps `None` to its own error.
#[inline]
pub(crate) fn parse_content_length(value: &[u8]) -> Option<u64> {
    if value.is_empty() {
        return None;
    }
    let mut n: u64 = 0;
    for &b in value {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(n)
}

/// Reads one Transfer-Encoding line into `flags`: `#transfer-coding`, `transfer-coding = token
/// *( OWS ";" OWS transfer-parameter )` (RFC 9110 §10.1.4).
fn add_coding_line(flags: &mut Flags, value: &[u8]) -> Result<(), ParseError> {
    flags.set(Flags::TE_PRESENT);
    for element in value.split(|&b| b == b',') {
        // Project choice: an empty list element (`, chunked`) is an error, not ignored
        // (RFC 9110 §5.6.1 would ignore it): every TE oddity is a smuggling suspect.
        let element = trim_ows(element);
        let (coding, has_params) = match element.iter().position(|&b| b == b';') {
            Some(p) => (trim_ows(&element[..p]), true),
            None => (element, false),
        };
        if coding.is_empty() || !coding.iter().all(|&b| is_tchar(b)) {
            return Err(ParseError::InvalidTransferEncoding);
        }
        // §6.3: chunked must be the final coding, so nothing may follow it.
        if flags.has(Flags::TE_CHUNKED) {
            return Err(if coding.eq_ignore_ascii_case(b"chunked") {
                ParseError::ChunkedTwice
            } else {
                ParseError::ChunkedNotFinal
            });
        }
        if coding.eq_ignore_ascii_case(b"chunked") {
            if has_params {
                // §7: chunked has no parameters; SHOULD treat them as an error.
                return Err(ParseError::ChunkedWithParameters);
            }
            flags.set(Flags::TE_CHUNKED);
        } else {
            // gzip, identity, x-chunked, ...: we decode none of them (§6.1: 501 SHOULD).
            flags.set(Flags::TE_UNKNOWN);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Field lines through the reader, one at a time, as the scanner feeds it: each value is
    /// followed in the buffer by its CRLF and a next line, as in a head.
    fn read(lines: &[(&str, &str)], version: Version) -> Result<Fields<'static>, ParseError> {
        let mut reader = Reader::new();
        for &(name, value) in lines {
            let buf: &'static [u8] = format!("{value}\r\nAccept-Encoding: gzip\r\n\r\n")
                .into_bytes()
                .leak();
            reader.read(buf, name.as_bytes(), &buf[..value.len()], 0);
        }
        reader.finish(version, &Limits::DEFAULT)
    }

    macro_rules! reader {
        ($($name:ident: $lines:expr, $version:ident => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                let got = read(&$lines, Version::$version)
                    .map(|f| (f.host, f.framing, f.keep_alive, f.expect_continue));
                assert_eq!(got, $want);
            }
        )*};
    }

    const H: Option<&[u8]> = Some(b"h");

    reader! {
        reader_host_only: [("Host", "h")], Http11 => Ok((H, BodyFraming::None, true, false));
        reader_host_case_insensitive: [("hOsT", "h")], Http11 => Ok((H, BodyFraming::None, true, false));
        reader_host_with_port_before_a_long_line: [("Host", "localhost:8080")], Http11
            => Ok((Some(&b"localhost:8080"[..]), BodyFraming::None, true, false));
        reader_empty_host: [("Host", "")], Http11 => Ok((Some(&b""[..]), BodyFraming::None, true, false));
        reader_missing_host: [("Accept", "*/*")], Http11 => Err(ParseError::MissingHost);
        reader_http10_without_host: [], Http10 => Ok((None, BodyFraming::None, false, false));
        reader_duplicate_host: [("Host", "h"), ("host", "h")], Http11 => Err(ParseError::DuplicateHost);
        reader_invalid_host: [("Host", "a b")], Http11 => Err(ParseError::InvalidHost);
        reader_host_port_too_big: [("Host", "a:65536")], Http11 => Err(ParseError::InvalidHost);
        reader_first_error_wins: [("Host", "a/b"), ("Content-Length", "x")], Http11
            => Err(ParseError::InvalidHost);
        reader_first_error_wins_over_a_later_duplicate: [("Content-Length", "-1"), ("Host", "h"), ("Host", "h")], Http11
            => Err(ParseError::InvalidContentLength);
        reader_field_error_before_missing_host: [("Content-Length", "1, 1")], Http11
            => Err(ParseError::DuplicateContentLength);
        reader_length: [("Host", "h"), ("Content-Length", "0005")], Http11
            => Ok((H, BodyFraming::Length(5), true, false));
        reader_length_twice: [("Host", "h"), ("Content-Length", "5"), ("Content-Length", "5")], Http11
            => Err(ParseError::DuplicateContentLength);
        reader_length_too_large: [("Host", "h"), ("Content-Length", "99999999")], Http11
            => Err(ParseError::BodyTooLarge);
        reader_chunked: [("Host", "h"), ("Transfer-Encoding", "gzip"), ("Transfer-Encoding", "chunked")], Http11
            => Err(ParseError::UnknownTransferCoding);
        reader_chunked_only: [("Host", "h"), ("Transfer-Encoding", "Chunked")], Http11
            => Ok((H, BodyFraming::Chunked, true, false));
        reader_chunked_then_gzip: [("Host", "h"), ("Transfer-Encoding", "chunked, gzip")], Http11
            => Err(ParseError::ChunkedNotFinal);
        reader_te_with_cl: [("Host", "h"), ("Transfer-Encoding", "chunked"), ("Content-Length", "1")], Http11
            => Err(ParseError::TransferEncodingWithContentLength);
        reader_te_in_http10: [("Transfer-Encoding", "chunked")], Http10
            => Err(ParseError::TransferEncodingInHttp10);
        reader_close: [("Host", "h"), ("Connection", "keep-alive, Close")], Http11
            => Ok((H, BodyFraming::None, false, false));
        reader_http10_keep_alive: [("Connection", "Keep-Alive")], Http10
            => Ok((None, BodyFraming::None, true, false));
        reader_expect: [("Host", "h"), ("Expect", "100-Continue")], Http11
            => Ok((H, BodyFraming::None, true, true));
        reader_expect_ignored_in_http10: [("Expect", "100-continue")], Http10
            => Ok((None, BodyFraming::None, false, false));
        reader_other_names_of_the_same_lengths: [("Hast", "x y"), ("Xpect", ""), ("Connectior", "close"),
            ("Content-Lengtx", "z"), ("Transfer-Encodinx", ",")], Http10
            => Ok((None, BodyFraming::None, false, false));
    }

    #[test]
    fn eq_lower_agrees_with_eq_ignore_ascii_case_on_every_non_ctl_byte() {
        let words: [&[u8]; 8] = [
            b"host",
            b"expect",
            b"connection",
            b"content-length",
            b"transfer-encoding",
            b"keep-alive",
            b"100-continue",
            b"close",
        ];
        let allowed = (0..=255u8).filter(|&b| b == b'\t' || (b >= 0x20 && b != 0x7f));
        for lower in words {
            for b in allowed.clone() {
                for at in 0..lower.len() {
                    let mut s = lower.to_vec();
                    s[at] = b;
                    assert_eq!(
                        eq_lower(&s, lower),
                        s.eq_ignore_ascii_case(lower),
                        "{:?} vs {:?}",
                        String::from_utf8_lossy(&s),
                        String::from_utf8_lossy(lower)
                    );
                }
            }
            assert!(eq_lower(&lower.to_ascii_uppercase(), lower));
            assert!(!eq_lower(&lower[1..], lower));
        }
    }
}
