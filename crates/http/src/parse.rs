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
use crate::fast;
use crate::fields;
use crate::limits::Limits;
use crate::request::{Header, Method, Request, Version};
use crate::scan::{is_tchar, skip_path, skip_target, skip_tchar, skip_value};
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
    // The common head first (crate::fast): it answers only for a head it accepts whole, and
    // then with what the scanner below would find; anything else is the scanner's, which
    // decides every error, limit and `Partial`.
    // Each path finishes its own head: merging the two `Head`s into one before `finish` makes
    // the fast path copy its `Head` through the stack (measured:
    // docs/results.md#user-space-per-request).
    match fast::scan(buf, headers, limits) {
        Some(head) => finish(buf, headers, head, limits),
        None => scanned(buf, headers, limits),
    }
}

/// The strict scanner's answer, with a `finish` of its own: [`parse_request`] without the
/// fast path, which the tests and the `parse_request` fuzz target also hold the fast path to.
pub(crate) fn scanned<'h, 'b>(
    buf: &'b [u8],
    headers: &'h mut [Header<'b>],
    limits: &Limits,
) -> Result<Status<Request<'h, 'b>>, ParseError> {
    match scan(buf, headers, limits)? {
        Some(head) => finish(buf, headers, head, limits),
        None => Ok(Status::Partial),
    }
}

/// A head whose lines were all scanned: the request-line, how many field lines went into the
/// header array (values set, names not yet), and the framing fields read on the way.
pub(crate) struct Head<'b> {
    pub(crate) line: Line<'b>,
    /// Where the first field line starts.
    pub(crate) fields_start: usize,
    pub(crate) count: usize,
    /// How many of those still have an empty name (the fast path names the fields it
    /// recognises as it reads them).
    pub(crate) unnamed: usize,
    pub(crate) fields: fields::Reader<'b>,
    /// The head's length, its final CRLF included.
    pub(crate) len: usize,
    /// Every field line is `name ": " value CRLF` (the fast path's heads): each name ends two
    /// bytes before its value, and each line right after it.
    pub(crate) plain: bool,
}

/// The strict scan of every line, deciding every error and `Partial` (`None`).
fn scan<'b>(
    buf: &'b [u8],
    headers: &mut [Header<'b>],
    limits: &Limits,
) -> Result<Option<Head<'b>>, ParseError> {
    let mut s = Scanner {
        buf,
        pos: 0,
        limits,
        done: false,
        line_start: 0,
        value_at: 0,
    };
    let Some(line) = s.request_line()? else {
        return Ok(None);
    };
    let fields_start = s.pos;
    let mut count = 0;
    // The framing and routing fields are read as their lines are scanned (one pass).
    let mut fields = fields::Reader::new();
    while let Some((name_end, value)) = s.field_line()? {
        if count == headers.len() || count == limits.headers {
            return Err(ParseError::TooManyHeaders);
        }
        fields.read(buf, &buf[s.line_start..name_end], value, s.value_at);
        headers[count] = Header { name: "", value };
        count += 1;
    }
    if !s.done {
        return Ok(None);
    }
    Ok(Some(Head {
        line,
        fields_start,
        count,
        unnamed: count,
        fields,
        len: s.pos,
        plain: false,
    }))
}

/// Builds the request from a scanned head: the names' `&str`s, the target's form, and the
/// checks that need the whole head.
#[inline(always)]
fn finish<'h, 'b>(
    buf: &'b [u8],
    headers: &'h mut [Header<'b>],
    head: Head<'b>,
    limits: &Limits,
) -> Result<Status<Request<'h, 'b>>, ParseError> {
    let Head {
        line,
        fields_start,
        count,
        unnamed,
        fields,
        len,
        plain,
    } = head;
    if unnamed > 0 {
        // Every name lies before the last field's value.
        let last = &headers[count - 1];
        let text_end = last.value.as_ptr() as usize - buf.as_ptr() as usize;
        // A head shorter than the vector check's 64 bytes borrows the bytes after it (usually
        // the next pipelined request) rather than fall back to `std`'s check; if they are not
        // UTF-8 the names are checked one by one, as for a head with obs-text, so the answer
        // is the same.
        let text = Text::new(buf, text_end.max(Text::SIMD_MIN).min(buf.len()));
        text.name_fields(fields_start, &mut headers[..count], plain)?;
    }
    let headers: &'h [Header<'b>] = headers;
    let headers = &headers[..count];
    let form = target::split(line.method, line.target, line.query_at)?;
    let f = fields.finish(line.version, limits)?;
    Ok(Status::Complete(Request {
        method: line.method,
        target: line.target,
        path: form.path,
        query: form.query,
        version: line.version,
        headers,
        host: form.authority.or(f.host),
        framing: f.framing,
        keep_alive: f.keep_alive,
        expect_continue: f.expect_continue,
        head_len: len,
    }))
}

/// Makes `&str`s of the field names the fast path did not name (the target and Host stay
/// bytes until asked for, see `Request`). They were validated byte by byte, so one UTF-8
/// check of the head up to the last field's value (the fast path when no value there carries
/// obs-text) replaces one `from_utf8` call per name (when the target and Host were made text
/// here too, those calls were a large share of the parse); a span with non-UTF-8
/// obs-text falls back to checking each name. Every name ends before the span does. The
/// check is `simdutf8`'s: AVX2 or SSE4.2 (at compile time where the build enables them, else
/// picked at run time) for spans of 64 bytes or more, `std`'s below that. The last value is
/// left out (often the longest: the pipelined request's Accept is 100 of its 155 bytes), but
/// the span is never cut below 64 bytes, where `std`'s check costs more than the bytes saved
/// (measured: docs/results.md#user-space-per-request).
struct Text<'b> {
    buf: &'b [u8],
    head: Option<&'b str>,
}

impl<'b> Text<'b> {
    /// The shortest input `simdutf8` checks with vectors rather than with `std`.
    const SIMD_MIN: usize = 64;

    /// `span_end`: the end of the bytes checked at once.
    fn new(buf: &'b [u8], span_end: usize) -> Self {
        Text {
            buf,
            head: simdutf8::basic::from_utf8(&buf[..span_end]).ok(),
        }
    }

    fn offset(&self, part: &[u8]) -> usize {
        part.as_ptr() as usize - self.buf.as_ptr() as usize
    }

    /// Inlined: a call costs every request its frame.
    #[inline(always)]
    fn range(&self, range: std::ops::Range<usize>) -> Option<&'b str> {
        match self.head {
            Some(head) => head.get(range),
            None => std::str::from_utf8(self.buf.get(range)?).ok(),
        }
    }

    /// Names the fields. The scanner stored each as `name: ""` and `value: <the value without
    /// OWS>`; field lines are contiguous, so each name runs from the end of the previous line
    /// to the colon before its value (back over the OWS after the colon: none of it is a
    /// `tchar` or `:`), and a line ends at the first CR after its value (forward over the
    /// trailing OWS). Usually one compare each; no other byte is looked at twice.
    ///
    /// `plain`: the head is known to hold no OWS but the one SP after each colon (see
    /// [`Head::plain`]), so neither end is looked for.
    fn name_fields(
        &self,
        fields_start: usize,
        headers: &mut [Header<'b>],
        plain: bool,
    ) -> Result<(), ParseError> {
        let buf = self.buf;
        let mut line_start = fields_start;
        if plain {
            for h in headers {
                let value_start = self.offset(h.value);
                if h.name.is_empty() {
                    h.name = self
                        .range(line_start..value_start - 2)
                        .ok_or(ParseError::InvalidHeaderName)?;
                }
                line_start = value_start + h.value.len() + 2;
            }
            return Ok(());
        }
        for h in headers {
            let value_start = self.offset(h.value);
            let colon = match buf[line_start..value_start].last_chunk::<2>() {
                Some(b": ") => value_start - 2,
                _ => {
                    let mut colon = value_start - 1;
                    while buf[colon] != b':' {
                        colon -= 1;
                    }
                    colon
                }
            };
            h.name = self
                .range(line_start..colon)
                .ok_or(ParseError::InvalidHeaderName)?;
            let mut end = value_start + h.value.len();
            while buf[end] != b'\r' {
                end += 1;
            }
            line_start = end + 2;
        }
        Ok(())
    }
}

/// The request-line's parts.
pub(crate) struct Line<'b> {
    pub(crate) method: Method,
    pub(crate) target: &'b [u8],
    /// The index in `target` of its first `?`, or its length.
    pub(crate) query_at: usize,
    pub(crate) version: Version,
}

/// Scans left to right and decides at the first offending byte, so the answer depends only on
/// the bytes, never on how they were split into reads: a line is examined only up to where
/// its limit (or the head's) would be exceeded, and running into that cap is the limit's
/// error, while running into the end of the buffer before it is `Partial`.
struct Scanner<'b, 'l> {
    buf: &'b [u8],
    pos: usize,
    limits: &'l Limits,
    /// The empty line that ends the head has been read.
    done: bool,
    /// Where the last field line read starts.
    line_start: usize,
    /// Where the last field line's value (without OWS) starts.
    value_at: usize,
}

/// The bytes of one line that may be examined, and what running out of them means.
struct Window<'b> {
    bytes: &'b [u8],
    /// `Some(error)` if the window ends at a limit, `None` if at the end of the buffer.
    capped: Option<ParseError>,
}

impl<'b> Window<'b> {
    /// The result of running out of examinable bytes.
    fn exhausted<T>(&self) -> Result<Option<T>, ParseError> {
        match self.capped {
            Some(e) => Err(e),
            None => Ok(None),
        }
    }
}

impl<'b> Scanner<'b, '_> {
    /// The window for a line starting at `start` whose content may be `line_limit` bytes
    /// (plus CRLF) and which must also end within `Limits::head_bytes`.
    fn window(&self, start: usize, line_limit: usize, line_error: ParseError) -> Window<'b> {
        let line_cap = start.saturating_add(line_limit).saturating_add(2);
        let (cap, error) = if line_cap <= self.limits.head_bytes {
            (line_cap, line_error)
        } else {
            (self.limits.head_bytes, ParseError::HeadTooLarge)
        };
        let end = self.buf.len().min(cap);
        Window {
            bytes: &self.buf[..end.max(start.min(self.buf.len()))],
            capped: (self.buf.len() >= cap).then_some(error),
        }
    }

    /// Skips leading CRLFs, at most `Limits::leading_empty_lines` (§2.2), then reads
    /// `request-line CRLF`. `None`: need more bytes.
    fn request_line(&mut self) -> Result<Option<Line<'b>>, ParseError> {
        let limits = self.limits;
        let mut empty = 0;
        // Nearly every request-line starts at once: its window alone decides, so this one is
        // built only for a CR or LF (the answer is the same either way: both windows end at
        // the buffer's end or at `Limits::head_bytes`).
        while let Some(b'\r' | b'\n') = self.buf.get(self.pos) {
            let w = self.window(self.pos, 0, ParseError::HeadTooLarge);
            match w.bytes.get(self.pos) {
                None => return w.exhausted(),
                Some(b'\r') => match w.bytes.get(self.pos + 1) {
                    None => return w.exhausted(),
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
                Some(_) => break,
            }
        }
        let start = self.pos;
        let w = self.window(
            start,
            limits.request_line_bytes,
            ParseError::RequestLineTooLong,
        );
        let buf = w.bytes;
        // method = token. `GET ` (most requests) is recognised whole; it is what the loop
        // below would find, within the same window.
        let mut i = start;
        if buf.get(start..start + 4) == Some(b"GET ") {
            i += 3;
        } else {
            while i < buf.len() && is_tchar(buf[i]) {
                i += 1;
                if i - start > Method::MAX_LEN {
                    // Longer than any method we implement: 501 at once (RFC 9112 §3).
                    return Err(ParseError::UnknownMethod);
                }
            }
        }
        let Some(&after_method) = buf.get(i) else {
            return w.exhausted();
        };
        if after_method != b' ' {
            let blank = after_method.is_ascii_whitespace() || after_method < 0x20;
            return Err(if i == start || blank {
                ParseError::InvalidRequestLine
            } else {
                ParseError::InvalidMethod
            });
        }
        let method_token = &buf[start..i];
        // request-target: no whitespace, no CTLs (§3.2). The path first, up to a `?`, so the
        // query's start is known without a second pass (`target::split`).
        let target_start = i + 1;
        i = skip_path(buf, target_start);
        let query_at = i - target_start;
        if buf.get(i) == Some(&b'?') {
            i = skip_target(buf, i + 1);
        }
        let Some(&after_target) = buf.get(i) else {
            return w.exhausted();
        };
        if after_target != b' ' {
            return Err(match after_target {
                // No version (HTTP/0.9 style), a bare CR, or whitespace other than one SP.
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
        let available = &buf[v.min(buf.len())..buf.len().min(v + 10)];
        let Some(version) = version(available)? else {
            return w.exhausted();
        };
        let end = v + 8;
        if end - start > limits.request_line_bytes {
            return Err(ParseError::RequestLineTooLong);
        }
        let method = match method_token {
            b"GET" => Method::Get,
            token => Method::from_bytes(token).ok_or(ParseError::UnknownMethod)?,
        };
        self.pos = end + 2;
        Ok(Some(Line {
            method,
            target: target_bytes,
            query_at,
            version,
        }))
    }

    /// One `field-line CRLF`: the end of its name and its value without OWS (the line's start
    /// in `line_start`, the value's in `value_at`); `None` when the head ended (`done`) or more
    /// bytes are needed.
    fn field_line(&mut self) -> Result<Option<(usize, &'b [u8])>, ParseError> {
        let line_start = self.pos;
        let w = self.window(
            line_start,
            self.limits.header_line_bytes,
            ParseError::HeaderLineTooLong,
        );
        let buf = w.bytes;
        let mut i = line_start;
        match buf.get(i) {
            None => return w.exhausted(),
            Some(b'\r') => {
                return match buf.get(i + 1) {
                    None => w.exhausted(),
                    Some(b'\n') => {
                        self.pos = i + 2;
                        self.done = true;
                        Ok(None)
                    }
                    Some(_) => Err(ParseError::BareCr),
                };
            }
            Some(b'\n') => return Err(ParseError::BareLf),
            // obs-fold, or whitespace between the start-line and the first field (§5.2, §2.2).
            Some(b' ' | b'\t') => return Err(ParseError::ObsFold),
            Some(_) => {}
        }
        i = skip_tchar(buf, i);
        let Some(&after_name) = buf.get(i) else {
            return w.exhausted();
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
        let name_end = i;
        let i = skip_value(buf, i + 1);
        let Some(&after_value) = buf.get(i) else {
            return w.exhausted();
        };
        let value_end = i;
        match after_value {
            b'\r' => match buf.get(i + 1) {
                None => return w.exhausted(),
                Some(b'\n') => {}
                Some(_) => return Err(ParseError::BareCr),
            },
            b'\n' => return Err(ParseError::BareLf),
            // NUL, DEL and the other CTLs (RFC 9110 §5.5: MUST reject NUL).
            _ => return Err(ParseError::InvalidHeaderValue),
        }
        self.pos = value_end + 2;
        self.line_start = line_start;
        // Most values are `: value`: one SP, no trailing OWS; the loops for the rest.
        let (value_at, value) = match &buf[name_end + 1..value_end] {
            [b' ', rest @ ..] if !matches!(rest, [b' ' | b'\t', ..] | [.., b' ' | b'\t']) => {
                (name_end + 2, rest)
            }
            value => {
                let trimmed = crate::scan::trim_ows(value);
                (trimmed.as_ptr() as usize - buf.as_ptr() as usize, trimmed)
            }
        };
        self.value_at = value_at;
        // The name becomes a `&str` once the whole head is known (see `name_fields`).
        Ok(Some((name_end, value)))
    }
}

/// Checks `HTTP/` DIGIT `.` DIGIT CRLF against as many bytes as have arrived (up to 10).
/// `None`: a correct prefix, need more bytes.
fn version(v: &[u8]) -> Result<Option<Version>, ParseError> {
    const NAME: &[u8] = b"HTTP/";
    // Fastest path: what nearly every client sends, one 10-byte compare.
    if v.first_chunk::<10>() == Some(b"HTTP/1.1\r\n") {
        return Ok(Some(Version::Http11));
    }
    // Fast path: the whole version is there and well-formed.
    if let Some(
        &[
            b'H',
            b'T',
            b'T',
            b'P',
            b'/',
            major,
            b'.',
            minor,
            b'\r',
            b'\n',
        ],
    ) = v.first_chunk::<10>()
        && major.is_ascii_digit()
        && minor.is_ascii_digit()
    {
        return match (major, minor) {
            (b'1', b'0') => Ok(Some(Version::Http10)),
            (b'1', _) => Ok(Some(Version::Http11)),
            _ => Err(ParseError::UnsupportedVersion),
        };
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The names' `&str`s, the target and Host come out right wherever they lie against the
    /// span checked at once (Host sent last, after a long value), and in a head whose span
    /// holds non-UTF-8 obs-text.
    macro_rules! text {
        ($($name:ident: $head:expr => $names:expr, $host:expr;)*) => {$(
            #[test]
            fn $name() {
                let mut headers = [Header::EMPTY; 8];
                let head: &[u8] = $head;
                let req = parse_request(head, &mut headers, &Limits::DEFAULT)
                    .expect("valid")
                    .complete()
                    .expect("complete");
                let names: Vec<&str> = req.headers.iter().map(|h| h.name).collect();
                assert_eq!((req.target(), names, req.host()), ("/t?q", $names, $host));
            }
        )*};
    }

    text! {
        text_short_head: b"GET /t?q HTTP/1.1\r\nHost: a\r\n\r\n" => vec!["Host"], Some("a");
        text_host_last_after_long_value: &[
            &b"GET /t?q HTTP/1.1\r\nAccept: "[..], &[b'x'; 100], b"\r\nHost: h:1\r\n\r\n",
        ].concat() => vec!["Accept", "Host"], Some("h:1");
        text_host_first_long_last_value: &[
            &b"GET /t?q HTTP/1.1\r\nHost: h\r\nAccept: "[..], &[b'x'; 100], b"\r\n\r\n",
        ].concat() => vec!["Host", "Accept"], Some("h");
        text_non_utf8_value_inside_the_span: &[
            &b"GET /t?q HTTP/1.1\r\nX: \xff\xfe"[..], &[b'x'; 80], b"\r\nHost: h\r\nY: 1\r\n\r\n",
        ].concat() => vec!["X", "Host", "Y"], Some("h");
        text_ows_around_values: b"GET /t?q HTTP/1.1\r\nHost: \t h \t\r\nX:\r\nY: \t \r\nZ:z\t\r\n\r\n"
            => vec!["Host", "X", "Y", "Z"], Some("h");
        text_ows_around_a_long_host_last: &[
            &b"GET /t?q HTTP/1.1\r\nA:\t"[..], &[b'x'; 80], b" \r\nHost:\t\t", &[b'h'; 20], b"  \r\n\r\n",
        ].concat() => vec!["A", "Host"], Some("hhhhhhhhhhhhhhhhhhhh");
        text_non_utf8_last_value: &[
            &b"GET /t?q HTTP/1.1\r\nHost: h\r\nX: \xff"[..], &[b'x'; 80], b"\r\n\r\n",
        ].concat() => vec!["Host", "X"], Some("h");
        // A head under 64 bytes: the span checked at once runs on into what follows it (the
        // third cuts a 2-byte character at byte 64).
        text_short_head_then_a_pipelined_one: b"GET /t?q HTTP/1.1\r\nHost: a\r\n\r\nGET /next HTTP/1.1\r\nHost: b\r\n\r\n"
            => vec!["Host"], Some("a");
        text_short_head_then_binary: &[
            &b"POST /t?q HTTP/1.1\r\nHost: a\r\nContent-Length: 9\r\n\r\n"[..], b"\xff\xfe\x00body\x80\xc3",
        ].concat() => vec!["Host", "Content-Length"], Some("a");
        text_short_head_then_a_cut_multibyte_char: &[
            &b"GET /t?q HTTP/1.1\r\nHost: a\r\n\r\n"[..], &[b'z'; 33], "\u{e9}!".as_bytes(),
        ].concat() => vec!["Host"], Some("a");
    }
}
