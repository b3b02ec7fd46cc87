//! The request-head scanner: request-line and field lines, strict, restartable on `Partial`.
//!
//! Grammar (RFC 9112 §2.1, §3, §5):
//! ```text
//! HTTP-message = start-line CRLF *( field-line CRLF ) CRLF [ message-body ]
//! request-line = method SP request-target SP HTTP-version
//! field-line   = field-name ":" OWS field-value OWS
//! ```
//! The project's strict choices, made here: only CRLF ends a line (a bare LF is rejected,
//! §2.2 allows accepting it); exactly one SP between the request-line's parts (§3 warns that
//! splitting on other whitespace enables smuggling); at most `Limits::leading_empty_lines` empty
//! lines before the request-line (§2.2 SHOULD ignore at least one).

use crate::error::{ParseError, Status};
use crate::fields;
use crate::limits::Limits;
use crate::request::{Header, Method, Request, Version};
use crate::scan::{is_target, is_tchar, is_value};
use crate::target;

/// Parses a request head from the start of `buf`.
///
/// Returns `Partial` when `buf` ends before the head does (parse again from the start once
/// more bytes arrived), but never lets a partial head grow past a limit: the limit's error is
/// returned as soon as the bytes seen exceed it. On success the request borrows `buf` and the
/// first `n` entries of `headers`, which bounds the header count together with
/// `Limits::headers`.
pub fn parse_request<'h, 'b>(
    buf: &'b [u8],
    headers: &'h mut [Header<'b>],
    limits: &Limits,
) -> Result<Status<Request<'h, 'b>>, ParseError> {
    let mut s = Scanner { buf, pos: 0 };
    let Some(()) = s.skip_empty_lines(limits)? else {
        return s.partial(limits, 0, Pending::EmptyLines);
    };
    let line_start = s.pos;
    let line = match s.request_line(limits)? {
        Some(line) => line,
        None => return s.partial(limits, line_start, Pending::RequestLine),
    };
    let mut count = 0;
    loop {
        let field_start = s.pos;
        match s.field_line(limits, field_start)? {
            Field::Partial => return s.partial(limits, field_start, Pending::FieldLine),
            Field::End => break,
            Field::Line(header) => {
                if count == headers.len() || count == limits.headers {
                    return Err(ParseError::TooManyHeaders);
                }
                headers[count] = header;
                count += 1;
            }
        }
        if s.pos > limits.head_bytes {
            return Err(ParseError::HeadTooLarge);
        }
    }
    if s.pos > limits.head_bytes {
        return Err(ParseError::HeadTooLarge);
    }
    let headers: &'h [Header<'b>] = headers;
    let headers = &headers[..count];
    let form = target::split(line.method, line.target)?;
    let f = fields::interpret(headers, line.version, limits)?;
    let host = match form.authority {
        Some(authority) => Some(authority),
        None => f.host,
    };
    Ok(Status::Complete(Request {
        method: line.method,
        target: line.target,
        path: form.path,
        query: form.query,
        version: line.version,
        headers,
        host,
        framing: f.framing,
        keep_alive: f.keep_alive,
        expect_continue: f.expect_continue,
        head_len: s.pos,
    }))
}

/// The request-line's parts.
struct Line<'b> {
    method: Method,
    target: &'b str,
    version: Version,
}

/// Which line a partial buffer ended in, to pick the limit that applies.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pending {
    EmptyLines,
    RequestLine,
    FieldLine,
}

enum Field<'b> {
    Line(Header<'b>),
    End,
    Partial,
}

struct Scanner<'b> {
    buf: &'b [u8],
    pos: usize,
}

impl<'b> Scanner<'b> {
    /// Returns `Partial` unless the bytes seen already break a limit: an unfinished line or
    /// head may not grow past its bound while we wait for its end (RFC 9110 §5.4).
    fn partial<T>(
        &self,
        limits: &Limits,
        line_start: usize,
        line: Pending,
    ) -> Result<Status<T>, ParseError> {
        let line_len = self.buf.len() - line_start;
        if line == Pending::RequestLine && line_len > limits.request_line_bytes {
            return Err(ParseError::RequestLineTooLong);
        }
        if line == Pending::FieldLine && line_len > limits.header_line_bytes {
            return Err(ParseError::HeaderLineTooLong);
        }
        if self.buf.len() > limits.head_bytes {
            return Err(ParseError::HeadTooLarge);
        }
        Ok(Status::Partial)
    }

    /// Skips leading CRLFs, at most `limits.leading_empty_lines` of them. `None`: need bytes.
    fn skip_empty_lines(&mut self, limits: &Limits) -> Result<Option<()>, ParseError> {
        let mut empty = 0;
        loop {
            match self.buf.get(self.pos) {
                None => return Ok(None),
                Some(b'\r') => match self.buf.get(self.pos + 1) {
                    None => return Ok(None),
                    Some(b'\n') => {
                        empty += 1;
                        if empty > limits.leading_empty_lines {
                            return Err(ParseError::TooManyEmptyLines);
                        }
                        self.pos += 2;
                    }
                    Some(_) => return Err(ParseError::BareCr),
                },
                Some(b'\n') => return Err(ParseError::BareLf),
                Some(_) => return Ok(Some(())),
            }
        }
    }

    /// `request-line CRLF`. `None`: need more bytes.
    fn request_line(&mut self, limits: &Limits) -> Result<Option<Line<'b>>, ParseError> {
        let buf = self.buf;
        let start = self.pos;
        // method = token
        let mut i = start;
        while i < buf.len() && is_tchar(buf[i]) {
            i += 1;
            if i - start > Method::MAX_LEN {
                // Longer than any method we implement: 501 at once (RFC 9112 §3).
                return Err(ParseError::UnknownMethod);
            }
        }
        let Some(&after_method) = buf.get(i) else {
            return Ok(None);
        };
        if after_method != b' ' {
            return Err(
                if i == start || after_method.is_ascii_whitespace() || after_method < 0x20 {
                    ParseError::InvalidRequestLine
                } else {
                    ParseError::InvalidMethod
                },
            );
        }
        let method_token = &buf[start..i];
        // request-target: no whitespace, no CTLs (§3.2).
        let target_start = i + 1;
        i = target_start;
        while i < buf.len() && is_target(buf[i]) {
            i += 1;
        }
        let Some(&after_target) = buf.get(i) else {
            return Ok(None);
        };
        if after_target != b' ' {
            return Err(match after_target {
                // No version: HTTP/0.9 style, or a bare CR in the line.
                b'\r' | b'\n' | b'\t' | 0x0b | 0x0c => ParseError::InvalidRequestLine,
                _ => ParseError::InvalidTarget,
            });
        }
        if i == target_start {
            return Err(ParseError::InvalidRequestLine);
        }
        let target_bytes = &buf[target_start..i];
        // HTTP-version = HTTP-name "/" DIGIT "." DIGIT, then CRLF: exactly 10 bytes.
        let v = i + 1;
        let Some(version) = version(&buf[v..buf.len().min(v + 10)])? else {
            return Ok(None);
        };
        let end = v + 8;
        if end - start > limits.request_line_bytes {
            return Err(ParseError::RequestLineTooLong);
        }
        let method = Method::from_bytes(method_token).ok_or(ParseError::UnknownMethod)?;
        let target = std::str::from_utf8(target_bytes).map_err(|_| ParseError::InvalidTarget)?;
        self.pos = end + 2;
        Ok(Some(Line {
            method,
            target,
            version,
        }))
    }

    /// One `field-line CRLF`, or the empty line that ends the head.
    fn field_line(&mut self, limits: &Limits, line_start: usize) -> Result<Field<'b>, ParseError> {
        let buf = self.buf;
        let mut i = line_start;
        match buf.get(i) {
            None => return Ok(Field::Partial),
            Some(b'\r') => {
                return match buf.get(i + 1) {
                    None => Ok(Field::Partial),
                    Some(b'\n') => {
                        self.pos = i + 2;
                        Ok(Field::End)
                    }
                    Some(_) => Err(ParseError::BareCr),
                };
            }
            Some(b'\n') => return Err(ParseError::BareLf),
            // obs-fold, or whitespace between the start-line and the first field (§5.2, §2.2).
            Some(b' ' | b'\t') => return Err(ParseError::ObsFold),
            Some(_) => {}
        }
        while i < buf.len() && is_tchar(buf[i]) {
            i += 1;
        }
        let Some(&after_name) = buf.get(i) else {
            return Ok(Field::Partial);
        };
        if after_name != b':' {
            return Err(match after_name {
                // §5.1: no whitespace between field name and colon, MUST reject.
                b' ' | b'\t' if i > line_start => ParseError::WhitespaceBeforeColon,
                _ => ParseError::InvalidHeaderName,
            });
        }
        if i == line_start {
            return Err(ParseError::InvalidHeaderName);
        }
        let name =
            std::str::from_utf8(&buf[line_start..i]).map_err(|_| ParseError::InvalidHeaderName)?;
        i += 1;
        while i < buf.len() && is_value(buf[i]) {
            i += 1;
        }
        let Some(&after_value) = buf.get(i) else {
            return Ok(Field::Partial);
        };
        let value_end = i;
        match after_value {
            b'\r' => match buf.get(i + 1) {
                None => return Ok(Field::Partial),
                Some(b'\n') => {}
                Some(_) => return Err(ParseError::BareCr),
            },
            b'\n' => return Err(ParseError::BareLf),
            // NUL, DEL and the other CTLs (RFC 9110 §5.5: MUST reject NUL).
            _ => return Err(ParseError::InvalidHeaderValue),
        }
        if value_end - line_start > limits.header_line_bytes {
            return Err(ParseError::HeaderLineTooLong);
        }
        self.pos = value_end + 2;
        Ok(Field::Line(Header {
            name,
            value: crate::scan::trim_ows(&buf[line_start + name.len() + 1..value_end]),
        }))
    }
}

/// Checks `HTTP/` DIGIT `.` DIGIT CRLF against as many bytes as have arrived (up to 10).
/// `None`: a correct prefix, need more bytes.
fn version(v: &[u8]) -> Result<Option<Version>, ParseError> {
    const NAME: &[u8] = b"HTTP/";
    for (k, &b) in v.iter().enumerate() {
        let ok = match k {
            0..=4 => b == NAME[k],
            5 | 7 => b.is_ascii_digit(),
            6 => b == b'.',
            8 => {
                if b != b'\r' {
                    return Err(match b {
                        b'\n' => ParseError::BareLf,
                        // Trailing whitespace after the version.
                        b' ' | b'\t' => ParseError::InvalidRequestLine,
                        _ => ParseError::InvalidVersion,
                    });
                }
                true
            }
            _ => {
                if b != b'\n' {
                    return Err(ParseError::BareCr);
                }
                true
            }
        };
        if !ok {
            return Err(ParseError::InvalidVersion);
        }
    }
    if v.len() < 10 {
        return Ok(None);
    }
    match (v[5], v[7]) {
        (b'1', b'0') => Ok(Some(Version::Http10)),
        (b'1', _) => Ok(Some(Version::Http11)),
        _ => Err(ParseError::UnsupportedVersion),
    }
}
