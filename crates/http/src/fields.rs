//! The fields that decide framing and routing: Host, Content-Length, Transfer-Encoding,
//! Connection and Expect (RFC 9112 §3.2, §6, §9; RFC 9110 §7.2, §8.6, §10.1.1), and the
//! Content-Length reader the client side shares.

use crate::error::ParseError;
use crate::limits::Limits;
use crate::request::{BodyFraming, Header, Version};
use crate::scan::{is_tchar, is_valid_authority, trim_ows};

/// What the head's fields say about the message.
pub(crate) struct Fields<'b> {
    /// The Host value, validated (ASCII); made a `&str` with the head's other text.
    pub(crate) host: Option<&'b [u8]>,
    pub(crate) framing: BodyFraming,
    pub(crate) keep_alive: bool,
    pub(crate) expect_continue: bool,
}

/// Transfer-Encoding as read so far, across all of its field lines (a list may be split over
/// several lines, RFC 9110 §5.3).
#[derive(Default)]
struct Codings {
    present: bool,
    chunked: bool,
    unknown: bool,
}

/// Interprets the framing and routing fields of a parsed head.
pub(crate) fn interpret<'b>(
    headers: &[Header<'b>],
    version: Version,
    limits: &Limits,
) -> Result<Fields<'b>, ParseError> {
    let mut host: Option<&'b [u8]> = None;
    let mut length: Option<u64> = None;
    let mut te = Codings::default();
    let mut close = false;
    let mut keep_alive = false;
    let mut expect_continue = false;
    for h in headers {
        // Dispatch on the length first: most fields are none of these five.
        let name = h.name;
        match name.len() {
            // `Host = uri-host [ ":" port ]` (RFC 9110 §7.2).
            4 if is(name, "host") => {
                if host.is_some() {
                    return Err(ParseError::DuplicateHost);
                }
                if !is_valid_authority(h.value, true) {
                    return Err(ParseError::InvalidHost);
                }
                host = Some(h.value);
            }
            6 if is(name, "expect") => {
                // The only expectation defined; others are ignored (417 is optional, §10.1.1).
                expect_continue |= eq_lower(h.value, b"100-continue");
            }
            10 if is(name, "connection") => {
                // The common values first, without splitting the list.
                if eq_lower(h.value, b"keep-alive") {
                    keep_alive = true;
                    continue;
                }
                for option in h.value.split(|&b| b == b',') {
                    let option = trim_ows(option);
                    close |= eq_lower(option, b"close");
                    keep_alive |= eq_lower(option, b"keep-alive");
                }
            }
            14 if is(name, "content-length") => {
                // Project choice: a second Content-Length, even an identical one, is rejected
                // rather than collapsed (RFC 9110 §8.6 allows either).
                if length.is_some() || h.value.contains(&b',') {
                    return Err(ParseError::DuplicateContentLength);
                }
                length =
                    Some(parse_content_length(h.value).ok_or(ParseError::InvalidContentLength)?);
            }
            17 if is(name, "transfer-encoding") => {
                te.add_line(h.value)?;
            }
            _ => {}
        }
    }
    if version == Version::Http11 && host.is_none() {
        // RFC 9112 §3.2: MUST 400 an HTTP/1.1 request without Host.
        return Err(ParseError::MissingHost);
    }
    let framing = if te.present {
        // §6.1: TE in HTTP/1.0 means faulty framing; nginx answers 400, and so do we.
        if version == Version::Http10 {
            return Err(ParseError::TransferEncodingInHttp10);
        }
        // §6.1 allows processing by TE; the project rejects TE with CL (smuggling vector).
        if length.is_some() {
            return Err(ParseError::TransferEncodingWithContentLength);
        }
        if te.unknown {
            return Err(ParseError::UnknownTransferCoding);
        }
        if !te.chunked {
            // An empty Transfer-Encoding value: nothing valid was listed.
            return Err(ParseError::InvalidTransferEncoding);
        }
        BodyFraming::Chunked
    } else {
        match length {
            Some(n) if n > limits.body_bytes => return Err(ParseError::BodyTooLarge),
            Some(n) => BodyFraming::Length(n),
            None => BodyFraming::None,
        }
    };
    Ok(Fields {
        host,
        framing,
        keep_alive: !close && (version == Version::Http11 || keep_alive),
        expect_continue: expect_continue && version == Version::Http11,
    })
}

/// Case-insensitive name comparison for same-length names, rejecting on the first byte first:
/// `User-Agent` is as long as `connection` but never needs the full compare.
#[inline(always)]
fn is(name: &str, lower: &str) -> bool {
    name.as_bytes().first().map(|b| b | 0x20) == lower.as_bytes().first().copied()
        && eq_lower(name.as_bytes(), lower.as_bytes())
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

impl Codings {
    /// Reads one Transfer-Encoding line: `#transfer-coding`, `transfer-coding = token *( OWS
    /// ";" OWS transfer-parameter )` (RFC 9110 §10.1.4).
    fn add_line(&mut self, value: &[u8]) -> Result<(), ParseError> {
        self.present = true;
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
            if self.chunked {
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
                self.chunked = true;
            } else {
                // gzip, identity, x-chunked, ...: we decode none of them (§6.1: 501 SHOULD).
                self.unknown = true;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
