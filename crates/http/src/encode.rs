//! Response encoding into a caller-owned `Vec<u8>`: status line, `Server`, `Date`,
//! `Content-Type`, `Content-Length`, `Connection`, extra fields, body. Once the buffer has
//! grown to the size of the largest response, encoding allocates nothing.

use crate::date;
use crate::request::{Request, Version};

/// What the response says about the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connection {
    /// Persistent by default (HTTP/1.1): no `Connection` field is written.
    Default,
    /// `Connection: keep-alive`: an HTTP/1.0 client asked to keep the connection (§9.3).
    KeepAlive,
    /// `Connection: close`: the server closes after this response (§9.6).
    Close,
}

impl Connection {
    /// The `Connection` answer for a request: close unless it may persist, and say
    /// keep-alive explicitly to an HTTP/1.0 client that asked for it.
    pub fn for_request(request: &Request<'_, '_>) -> Connection {
        match (request.keep_alive, request.version) {
            (false, _) => Connection::Close,
            (true, Version::Http10) => Connection::KeepAlive,
            (true, Version::Http11 | Version::Http2) => Connection::Default,
        }
    }
}

/// A response head to encode with [`encode_head`].
#[derive(Debug, Clone, Copy)]
pub struct ResponseHead<'a> {
    /// The status code, 100 to 999.
    pub status: u16,
    /// The `Content-Type` value, if any.
    pub content_type: Option<&'a str>,
    /// The `Content-Length` value, if any. Never written for 1xx and 204 (RFC 9110 §8.6).
    pub content_length: Option<u64>,
    /// The `Connection` field.
    pub connection: Connection,
    /// Further fields, written in order after the standard ones (`Last-Modified`, `Allow`, ...).
    pub extra_headers: &'a [(&'a str, &'a [u8])],
}

/// Appends a complete response to `out`: the head with `Content-Length: body.len()`, then the
/// body. For HEAD requests use [`encode_head`] with the length the GET body would have.
pub fn encode_response(
    out: &mut Vec<u8>,
    status: u16,
    content_type: &str,
    connection: Connection,
    body: &[u8],
) {
    encode_head(
        out,
        &ResponseHead {
            status,
            content_type: Some(content_type),
            content_length: Some(body.len() as u64),
            connection,
            extra_headers: &[],
        },
    );
    out.extend_from_slice(body);
}

/// Appends a response head (ending with the empty line) to `out`: for HEAD responses, and for
/// bodies sent separately (sendfile).
///
/// Written for the common response (`200`, a Content-Type, a Content-Length, no other field):
/// one capacity check up front, the status line of a 200 as one constant, `Server` and `Date`
/// as one cached block, and constant pieces merged with their neighbours, so most copies have
/// a fixed size the compiler turns into a few moves.
pub fn encode_head(out: &mut Vec<u8>, head: &ResponseHead<'_>) {
    let extra: usize = head
        .extra_headers
        .iter()
        .map(|(name, value)| name.len() + value.len() + 4)
        .sum();
    out.reserve(HEAD_FIXED_MAX + head.content_type.map_or(0, str::len) + extra);
    let mut digits = itoa::Buffer::new();
    if head.status == 200 {
        out.extend_from_slice(b"HTTP/1.1 200 OK");
    } else {
        out.extend_from_slice(b"HTTP/1.1 ");
        out.extend_from_slice(digits.format(head.status).as_bytes());
        out.push(b' ');
        out.extend_from_slice(reason_phrase(head.status).as_bytes());
    }
    // RFC 9110 §6.6.1: an origin server with a clock MUST send Date.
    out.extend_from_slice(&date::server_date());
    if let Some(content_type) = head.content_type {
        out.extend_from_slice(b"Content-Type: ");
        out.extend_from_slice(content_type.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    let no_length = head.status < 200 || head.status == 204;
    if let (Some(length), false) = (head.content_length, no_length) {
        out.extend_from_slice(b"Content-Length: ");
        out.extend_from_slice(digits.format(length).as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    match head.connection {
        Connection::Default => {}
        Connection::KeepAlive => out.extend_from_slice(b"Connection: keep-alive\r\n"),
        Connection::Close => out.extend_from_slice(b"Connection: close\r\n"),
    }
    for (name, value) in head.extra_headers {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// [`encode_head`] for a server that answers many responses alike: the head of the latest
/// (status, Content-Type, Date second) is kept, up to the Content-Length digits, and after it
/// the digits and line end of the latest (length, `Connection`), so a response like the one
/// before it is one copy, instead of the status line, the `Server` + `Date` block and the
/// field names piece by piece, each with its own capacity check. Heads with extra fields, no
/// Content-Type or no Content-Length (1xx, 204, 304), or a prefix longer than 160 bytes
/// go through [`encode_head`]. The bytes are [`encode_head`]'s, Date included: the prefix is
/// rebuilt when the second changes.
#[derive(Debug)]
pub struct HeadCache {
    status: u16,
    /// The Date second in `block`.
    secs: u64,
    /// The Content-Type value in `block`.
    content_type: Vec<u8>,
    /// The Content-Length and `Connection` of the tail in `block`.
    length: u64,
    connection: Connection,
    /// `HTTP/1.1 <status> <reason>`, Server, Date, `Content-Type: <type>\r\nContent-Length: `
    /// in `block[..prefix_len]`, then the digits and line end up to `head_len`; zeros after.
    /// `prefix_len` is 0 until the first use, `head_len` 0 while the tail is to be written.
    block: [u8; PREFIX_MAX + TAIL_MAX],
    prefix_len: usize,
    head_len: usize,
}

/// The longest cached prefix: a 200 with a 58-byte Content-Type, or a 431 (the longest
/// reason phrase) with a 29-byte one. The whole block is copied and the output cut back to
/// the head, because a copy of a length known at compile time is a few vector moves, and
/// one of a length known only at run time is a `memcpy` call, for the prefix, the digits and
/// the line end alike (measured: docs/results.md#user-space-per-request).
const PREFIX_MAX: usize = 160;

/// The Content-Length digits (at most 20) and the longest line end after them.
const TAIL_MAX: usize = 64;

impl Default for HeadCache {
    fn default() -> Self {
        Self {
            status: 0,
            secs: 0,
            content_type: Vec::new(),
            length: 0,
            connection: Connection::Default,
            block: [0; PREFIX_MAX + TAIL_MAX],
            prefix_len: 0,
            head_len: 0,
        }
    }
}

impl HeadCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends the head [`encode_head`] would append.
    pub fn encode_head(&mut self, out: &mut Vec<u8>, head: &ResponseHead<'_>) {
        match (head.content_type, head.content_length, head.extra_headers) {
            (Some(content_type), Some(length), []) => {
                self.encode_fields(out, head.status, content_type, length, head.connection);
            }
            _ => encode_head(out, head),
        }
    }

    /// Appends the head [`encode_head`] would append for a response whose only fields
    /// besides Server and Date are `Content-Type`, `Content-Length` and `Connection`: what
    /// most responses are, without building and matching a [`ResponseHead`] per response.
    #[inline]
    pub fn encode_fields(
        &mut self,
        out: &mut Vec<u8>,
        status: u16,
        content_type: &str,
        length: u64,
        connection: Connection,
    ) {
        let head = Fields {
            status,
            content_type,
            length,
            connection,
        };
        if status >= 200 && status != 204 {
            self.encode_at(out, &head, date::date_secs());
        } else {
            encode_head(out, &head.head());
        }
    }

    /// Always inlined (into [`HeadCache::encode_fields`]): as a call of its own, its frame and
    /// the `Fields` passed through the stack add to every response (measured:
    /// docs/results.md#user-space-per-request).
    #[inline(always)]
    fn encode_at(&mut self, out: &mut Vec<u8>, head: &Fields<'_>, secs: u64) {
        let (content_type, length) = (head.content_type, head.length);
        if (self.secs != secs
            || self.status != head.status
            || !same_short(&self.content_type, content_type.as_bytes())
            || self.prefix_len == 0)
            && !self.rebuild(head.status, content_type, secs)
        {
            return encode_head(out, &head.head());
        }
        // The tail is kept too (most routes answer one length), so the digits and the line end
        // are not built again per response.
        if self.head_len == 0 || self.length != length || self.connection != head.connection {
            let (tail, tail_len) = tail(length, head.connection);
            let at = self.prefix_len;
            self.block[at..at + TAIL_MAX].copy_from_slice(&tail);
            self.head_len = at + tail_len;
            self.length = length;
            self.connection = head.connection;
        }
        let start = out.len();
        out.reserve(PREFIX_MAX + TAIL_MAX);
        out.extend_from_slice(&self.block);
        out.truncate(start + self.head_len);
    }

    /// Builds the prefix for (status, Content-Type, second); `false` (and an empty cache) if
    /// it is longer than [`PREFIX_MAX`].
    #[cold]
    fn rebuild(&mut self, status: u16, content_type: &str, secs: u64) -> bool {
        let mut prefix = Vec::with_capacity(PREFIX_MAX);
        if status == 200 {
            prefix.extend_from_slice(b"HTTP/1.1 200 OK");
        } else {
            let mut digits = itoa::Buffer::new();
            prefix.extend_from_slice(b"HTTP/1.1 ");
            prefix.extend_from_slice(digits.format(status).as_bytes());
            prefix.push(b' ');
            prefix.extend_from_slice(reason_phrase(status).as_bytes());
        }
        prefix.extend_from_slice(&date::server_date_block(secs));
        prefix.extend_from_slice(b"Content-Type: ");
        prefix.extend_from_slice(content_type.as_bytes());
        prefix.extend_from_slice(b"\r\nContent-Length: ");
        if prefix.len() > PREFIX_MAX {
            self.prefix_len = 0;
            self.head_len = 0;
            return false;
        }
        self.block = [0; PREFIX_MAX + TAIL_MAX];
        self.block[..prefix.len()].copy_from_slice(&prefix);
        self.prefix_len = prefix.len();
        self.head_len = 0;
        self.content_type.clear();
        self.content_type.extend_from_slice(content_type.as_bytes());
        self.status = status;
        self.secs = secs;
        true
    }
}

/// The fields of a head [`HeadCache`] may answer from its block.
struct Fields<'a> {
    status: u16,
    content_type: &'a str,
    length: u64,
    connection: Connection,
}

impl Fields<'_> {
    fn head(&self) -> ResponseHead<'_> {
        ResponseHead {
            status: self.status,
            content_type: Some(self.content_type),
            content_length: Some(self.length),
            connection: self.connection,
            extra_headers: &[],
        }
    }
}

/// The Content-Length digits and the end of the head (`Connection` line, blank line) in
/// `tail[..len]`, written at fixed sizes so that no copy of it is a `memcpy` call.
fn tail(length: u64, connection: Connection) -> ([u8; TAIL_MAX], usize) {
    let mut tail = [0u8; TAIL_MAX];
    // The digits, right-aligned in `digits[..20]`, then 20 bytes from the first of them
    // copied (a fixed size) to the front of `tail`, which is cheaper than counting the digits
    // first with `checked_ilog10`.
    let mut digits = [0u8; 40];
    let (mut i, mut v) = (20, length);
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let n = 20 - i;
    tail[..20].copy_from_slice(&digits[i..i + 20]);
    let end: usize = match connection {
        Connection::Default => put(&mut tail, n, b"\r\n\r\n"),
        Connection::KeepAlive => put(&mut tail, n, b"\r\nConnection: keep-alive\r\n\r\n"),
        Connection::Close => put(&mut tail, n, b"\r\nConnection: close\r\n\r\n"),
    };
    (tail, end)
}

/// Writes `bytes` (of a size known at compile time) at `tail[at..]`; returns where it ends.
#[inline(always)]
fn put<const N: usize>(tail: &mut [u8; TAIL_MAX], at: usize, bytes: &[u8; N]) -> usize {
    tail[at..at + N].copy_from_slice(bytes);
    at + N
}

/// `a == b`, without a `memcmp` call for 4 to 32 bytes: two overlapping loads from each
/// side cover them. A Content-Type is 10 to 31 bytes; `memcmp` and the slice comparison around
/// it cost more per response (measured: docs/results.md#user-space-per-request). The engine's
/// router compares paths with it too.
#[inline]
pub fn same_short(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().unwrap_or([0; 8]));
    let half = |s: &[u8], at: usize| u32::from_le_bytes(s[at..at + 4].try_into().unwrap_or([0; 4]));
    match n {
        4..8 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        17..=32 => {
            let m = n - 16;
            word(a, 0) == word(b, 0)
                && word(a, 8) == word(b, 8)
                && word(a, m) == word(b, m)
                && word(a, m + 8) == word(b, m + 8)
        }
        _ => a == b,
    }
}

/// The most bytes [`encode_head`] writes besides the Content-Type value and the extra fields:
/// status line with the longest reason phrase, Server and Date, the field names, a 20-digit
/// Content-Length, `Connection: keep-alive`, CRLFs.
const HEAD_FIXED_MAX: usize = 128 + date::SERVER_DATE_LEN + 64;

/// Appends an error response for `status` (a [`ParseError::status`](crate::ParseError::status)
/// or any other code): `Connection: close` and a short text body delimited by Content-Length,
/// so the client can read it whole before the server closes.
pub fn encode_error(out: &mut Vec<u8>, status: u16) {
    let reason = reason_phrase(status);
    let mut digits = itoa::Buffer::new();
    let code = digits.format(status);
    let body_len = code.len() + 1 + reason.len() + 1;
    encode_head(
        out,
        &ResponseHead {
            status,
            content_type: Some("text/plain; charset=utf-8"),
            content_length: Some(body_len as u64),
            connection: Connection::Close,
            extra_headers: &[],
        },
    );
    out.extend_from_slice(code.as_bytes());
    out.push(b' ');
    out.extend_from_slice(reason.as_bytes());
    out.push(b'\n');
}

/// Appends the interim `100 Continue` response (RFC 9110 §15.2.1); never send it to an
/// HTTP/1.0 client.
pub fn encode_continue(out: &mut Vec<u8>) {
    out.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
}

/// The reason phrase for a status code (RFC 9110 §15), or `Unknown` for codes it lacks.
pub fn reason_phrase(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        101 => "Switching Protocols",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Content Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Range Not Satisfiable",
        417 => "Expectation Failed",
        422 => "Unprocessable Content",
        426 => "Upgrade Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `out` as one response with httparse: (code, fields, body).
    fn parse(out: &[u8]) -> (u16, Vec<(String, String)>, Vec<u8>) {
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut res = httparse::Response::new(&mut headers);
        let Ok(httparse::Status::Complete(n)) = res.parse(out) else {
            panic!("not a response: {:?}", String::from_utf8_lossy(out));
        };
        let fields = res
            .headers
            .iter()
            .map(|h| {
                (
                    h.name.to_owned(),
                    String::from_utf8_lossy(h.value).into_owned(),
                )
            })
            .collect();
        (res.code.unwrap(), fields, out[n..].to_vec())
    }

    fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
        fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    macro_rules! error_response {
        ($($name:ident: $status:expr => $reason:expr;)*) => {$(
            #[test]
            fn $name() {
                let mut out = Vec::new();
                encode_error(&mut out, $status);
                let (code, fields, body) = parse(&out);
                assert_eq!(code, $status);
                assert_eq!(field(&fields, "Connection"), Some("close"));
                assert_eq!(field(&fields, "Content-Length"), Some(body.len().to_string().as_str()));
                assert_eq!(body, format!("{} {}\n", $status, $reason).into_bytes());
            }
        )*};
    }

    error_response! {
        error_400_bad_request: 400 => "Bad Request";
        error_408_request_timeout: 408 => "Request Timeout";
        error_413_content_too_large: 413 => "Content Too Large";
        error_414_uri_too_long: 414 => "URI Too Long";
        error_431_fields_too_large: 431 => "Request Header Fields Too Large";
        error_501_not_implemented: 501 => "Not Implemented";
        error_505_version_not_supported: 505 => "HTTP Version Not Supported";
    }

    #[test]
    fn json_response_exact_bytes_but_date() {
        let mut out = Vec::new();
        encode_response(
            &mut out,
            200,
            "application/json",
            Connection::Default,
            b"{}",
        );
        let date = std::str::from_utf8(&out[39..39 + crate::DATE_LEN])
            .unwrap()
            .to_owned();
        let want = format!(
            "HTTP/1.1 200 OK\r\nServer: twelve\r\nDate: {date}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{{}}"
        );
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }

    #[test]
    fn no_content_length_for_204_and_1xx() {
        for status in [101, 204] {
            let mut out = Vec::new();
            let head = ResponseHead {
                status,
                content_type: None,
                content_length: Some(0),
                connection: Connection::Default,
                extra_headers: &[],
            };
            encode_head(&mut out, &head);
            let (_, fields, _) = parse(&out);
            assert_eq!(field(&fields, "Content-Length"), None, "{status}");
        }
    }

    #[test]
    fn warm_buffer_is_reused_without_allocation() {
        let mut out = Vec::new();
        encode_response(&mut out, 200, "application/json", Connection::Close, b"{}");
        let (ptr, cap) = (out.as_ptr(), out.capacity());
        for _ in 0..3 {
            out.clear();
            encode_response(&mut out, 200, "application/json", Connection::Close, b"{}");
            assert_eq!((out.as_ptr(), out.capacity()), (ptr, cap));
        }
    }

    type Fields<'a> = &'a [(&'a str, &'a [u8])];

    /// A Content-Type for prefixes at and past [`PREFIX_MAX`].
    const LONG_TYPE: &str =
        "application/vnd.example.a-very-long-media-type-name+json; charset=utf-8";

    /// Every head [`HeadCache`] answers, in a sequence that hits and misses its key, against
    /// [`encode_head`] at the same second.
    #[test]
    fn head_cache_writes_what_encode_head_writes() {
        type Case<'a> = (u16, Option<&'a str>, Option<u64>, Connection, Fields<'a>);
        let heads: &[Case<'_>] = &[
            (200, Some("text/plain"), Some(13), Connection::Default, &[]),
            (200, Some("text/plain"), Some(13), Connection::Default, &[]),
            (200, Some("text/plain"), Some(0), Connection::Close, &[]),
            (
                200,
                Some("text/plain"),
                Some(123_456),
                Connection::KeepAlive,
                &[],
            ),
            (
                200,
                Some("application/json"),
                Some(27),
                Connection::Default,
                &[],
            ),
            (200, Some("text/plainx"), Some(27), Connection::Default, &[]),
            (200, Some("text/plain"), Some(0), Connection::Default, &[]),
            (200, Some("text/plain"), Some(9), Connection::Default, &[]),
            (
                200,
                Some("text/plain"),
                Some(10),
                Connection::KeepAlive,
                &[],
            ),
            (
                200,
                Some("text/plain"),
                Some(99_999),
                Connection::Close,
                &[],
            ),
            (200, Some(&LONG_TYPE[..58]), Some(7), Connection::Close, &[]),
            (200, Some(&LONG_TYPE[..59]), Some(7), Connection::Close, &[]),
            (200, Some(LONG_TYPE), Some(7), Connection::Default, &[]),
            (
                431,
                Some(&LONG_TYPE[..29]),
                Some(7),
                Connection::KeepAlive,
                &[],
            ),
            (
                431,
                Some(&LONG_TYPE[..30]),
                Some(7),
                Connection::KeepAlive,
                &[],
            ),
            (200, Some("text/plain"), Some(12), Connection::Default, &[]),
            (404, Some("text/plain"), Some(12), Connection::Default, &[]),
            (
                200,
                Some("application/json"),
                Some(12),
                Connection::Default,
                &[],
            ),
            (
                200,
                Some("application/json"),
                Some(12),
                Connection::Close,
                &[],
            ),
            (
                200,
                Some("application/json"),
                Some(12),
                Connection::Default,
                &[],
            ),
            (404, Some("text/plain"), Some(14), Connection::Default, &[]),
            (999, Some("text/plain"), Some(14), Connection::Close, &[]),
            (
                200,
                Some("text/plain"),
                Some(1),
                Connection::Default,
                &[("Allow", b"GET")],
            ),
            (200, None, Some(0), Connection::Default, &[]),
            (304, Some("text/plain"), None, Connection::Default, &[]),
            (204, Some("text/plain"), Some(0), Connection::Default, &[]),
            (101, Some("text/plain"), Some(0), Connection::Default, &[]),
            (
                200,
                Some("text/plain"),
                Some(u64::MAX),
                Connection::Default,
                &[],
            ),
        ];
        crate::refresh_date();
        let mut cache = HeadCache::new();
        for &(status, content_type, content_length, connection, extra_headers) in heads {
            let head = ResponseHead {
                status,
                content_type,
                content_length,
                connection,
                extra_headers,
            };
            let (mut want, mut got) = (b"body".to_vec(), b"body".to_vec());
            encode_head(&mut want, &head);
            cache.encode_head(&mut got, &head);
            assert_eq!(String::from_utf8(got), String::from_utf8(want), "{head:?}");
        }
    }

    /// The Date follows the second the head is encoded at, not the one the prefix was built at.
    #[test]
    fn head_cache_dates_each_second() {
        let head = ResponseHead {
            status: 200,
            content_type: Some("text/plain"),
            content_length: Some(13),
            connection: Connection::Default,
            extra_headers: &[],
        };
        let mut cache = HeadCache::new();
        for secs in [784_111_777, 784_111_777, 784_111_778, 0, 784_111_778] {
            let mut out = Vec::new();
            let fields = super::Fields {
                status: head.status,
                content_type: "text/plain",
                length: 13,
                connection: head.connection,
            };
            cache.encode_at(&mut out, &fields, secs);
            let date = format_date_line(secs);
            assert!(out.windows(date.len()).any(|w| w == date), "{secs}");
        }
    }

    fn format_date_line(secs: u64) -> Vec<u8> {
        let mut line = b"\r\nDate: ".to_vec();
        line.extend_from_slice(&crate::format_imf_fixdate(secs));
        line.extend_from_slice(b"\r\n");
        line
    }

    /// The longest prefixes [`PREFIX_MAX`] is sized for are cached; one byte more is not.
    #[test]
    fn head_cache_holds_prefixes_up_to_prefix_max() {
        for (status, fits, over) in [(200, 58, 59), (431, 29, 30)] {
            let mut cache = HeadCache::new();
            assert!(cache.rebuild(status, &LONG_TYPE[..fits], 0), "{status}");
            assert_eq!(cache.prefix_len, PREFIX_MAX, "{status}");
            assert!(!cache.rebuild(status, &LONG_TYPE[..over], 0), "{status}");
        }
    }

    #[test]
    fn same_short_is_slice_equality() {
        let long = b"text/plain; charset=utf-8 and then some more bytes";
        for n in 0..=long.len() {
            let a = &long[..n];
            assert!(same_short(a, a), "{n}");
            for i in 0..n {
                let mut b = a.to_vec();
                b[i] ^= 1;
                assert!(!same_short(a, &b), "{n} {i}");
            }
            assert!(
                !same_short(a, &long[..n.saturating_sub(1)]) || n == 0,
                "{n}"
            );
        }
    }

    #[test]
    fn continue_is_a_bare_interim_response() {
        let mut out = Vec::new();
        encode_continue(&mut out);
        assert_eq!(out, b"HTTP/1.1 100 Continue\r\n\r\n");
    }

    #[test]
    fn connection_follows_the_request() {
        let mut headers = [crate::Header::EMPTY; 4];
        let cases: [(&[u8], Connection); 4] = [
            (b"GET / HTTP/1.1\r\nHost: a\r\n\r\n", Connection::Default),
            (
                b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
                Connection::Close,
            ),
            (b"GET / HTTP/1.0\r\n\r\n", Connection::Close),
            (
                b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n",
                Connection::KeepAlive,
            ),
        ];
        for (bytes, want) in cases {
            let r = crate::parse_request(bytes, &mut headers, &crate::Limits::DEFAULT);
            let r = r.unwrap().complete().unwrap();
            assert_eq!(Connection::for_request(&r), want);
        }
    }
}
