//! Client side: incremental, zero-copy HTTP/1.1 response parsing for the load generator.
//!
//! Two layers:
//! - [`parse_head`] reads one status line and header section into borrowed slices
//!   ([`Head`]) and decides the body framing by RFC 9112 §6.3.
//! - [`ResponseParser`] walks a byte stream of pipelined responses: heads (skipping interim
//!   1xx responses), bodies framed by Content-Length, chunked coding, or connection close.
//!   It never copies body bytes; it only counts them, so the load generator can discard them.
//!
//! Heads are tokenised by `httparse` (SIMD where the CPU has it), with uninitialised header
//! storage so a small keep-alive response costs tens of nanoseconds, not a memset of the
//! header array.
use std::fmt;
use std::mem::MaybeUninit;

pub use httparse::Header;

/// The most header lines a response head may carry; more is [`Error::TooManyHeaders`].
pub const MAX_HEADERS: usize = 48;

/// Outcome of a parse step: `Partial` means "need more bytes" and is not an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status<T> {
    /// A whole item was parsed.
    Complete(T),
    /// The buffer ends inside the item; read more and call again.
    Partial,
}

/// Why a response could not be parsed. One variant per rule; the load generator counts them
/// all as parse errors except [`Error::IncompleteHead`] (a read error) and
/// [`Error::IncompleteBody`] (a body-length mismatch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// Status line: not `HTTP/1.x`, a bad status code, or a bad reason phrase.
    StatusLine,
    /// A header name or value with a forbidden byte, or a bad line ending.
    Header,
    /// More than [`MAX_HEADERS`] header lines.
    TooManyHeaders,
    /// Content-Length is not a decimal number, overflows, or is given twice with two values
    /// (RFC 9110 §8.6).
    ContentLength,
    /// A chunk-size line is malformed or overflows (RFC 9112 §7.1).
    ChunkSize,
    /// Chunk data is not followed by CRLF (RFC 9112 §7.1).
    ChunkDelimiter,
    /// A trailer line in a chunked body is malformed (RFC 9112 §7.1.2).
    Trailer,
    /// The peer closed the connection in the middle of a status line or header section.
    IncompleteHead,
    /// The peer closed the connection before the framed body was complete.
    IncompleteBody,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::StatusLine => "invalid status line",
            Error::Header => "invalid header line",
            Error::TooManyHeaders => "too many headers",
            Error::ContentLength => "invalid Content-Length",
            Error::ChunkSize => "invalid chunk size line",
            Error::ChunkDelimiter => "chunk data not followed by CRLF",
            Error::Trailer => "invalid chunked trailer",
            Error::IncompleteHead => "connection closed inside a response head",
            Error::IncompleteBody => "connection closed before the body was complete",
        })
    }
}

impl std::error::Error for Error {}

/// How the body of a response is delimited (RFC 9112 §6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body: a response to HEAD, a 1xx, 204 or 304 (rules 1 and 2).
    Empty,
    /// `Content-Length` bytes (rule 5).
    Length(u64),
    /// `Transfer-Encoding` ending in `chunked` (rule 3).
    Chunked,
    /// Everything until the server closes the connection (rules 4 and 7).
    UntilClose,
}

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

/// Parses one response head from the start of `buf`.
///
/// `head_request` says whether the request this answers was a HEAD (its response has no body
/// whatever its headers say, RFC 9110 §9.3.2).
pub fn parse_head<'h, 'b>(
    buf: &'b [u8],
    headers: &'h mut [MaybeUninit<Header<'b>>],
    head_request: bool,
) -> Result<Status<Head<'h, 'b>>, Error> {
    let mut res = httparse::Response::new(&mut []);
    let len = match httparse::ParserConfig::default()
        .parse_response_with_uninit_headers(&mut res, buf, headers)
    {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(Status::Partial),
        Err(e) => return Err(map_httparse(e)),
    };
    let minor_version = res.version.unwrap_or(1);
    let code = res.code.unwrap_or(0);
    let reason = res.reason.unwrap_or("");
    let headers: &'h [Header<'b>] = res.headers;
    let meta = scan_headers(headers, minor_version)?;
    let framing = if head_request || (100..200).contains(&code) || code == 204 || code == 304 {
        Framing::Empty
    } else if let Some(chunked) = meta.transfer_chunked {
        // Rule 3: Transfer-Encoding overrides Content-Length; if chunked is not the final
        // coding, a response body runs until close (rule 4, response case).
        if chunked {
            Framing::Chunked
        } else {
            Framing::UntilClose
        }
    } else if let Some(n) = meta.content_length {
        Framing::Length(n)
    } else {
        Framing::UntilClose
    };
    // 101 switches protocols: nothing after it is HTTP/1.1 any more.
    let keep_alive = meta.keep_alive && framing != Framing::UntilClose && code != 101;
    Ok(Status::Complete(Head {
        minor_version,
        code,
        reason,
        headers,
        len,
        framing,
        keep_alive,
    }))
}

fn map_httparse(e: httparse::Error) -> Error {
    match e {
        httparse::Error::Version | httparse::Error::Status | httparse::Error::Token => {
            Error::StatusLine
        }
        httparse::Error::TooManyHeaders => Error::TooManyHeaders,
        _ => Error::Header,
    }
}

struct Meta {
    content_length: Option<u64>,
    /// `Some(true)` when Transfer-Encoding ends in chunked, `Some(false)` when it does not.
    transfer_chunked: Option<bool>,
    keep_alive: bool,
}

/// Reads the three headers that decide framing and persistence. Names compare by length
/// first, so most headers cost one integer compare.
fn scan_headers(headers: &[Header<'_>], minor_version: u8) -> Result<Meta, Error> {
    let mut meta = Meta {
        content_length: None,
        transfer_chunked: None,
        // RFC 9112 §9.3: HTTP/1.1 persists by default, HTTP/1.0 only with keep-alive.
        keep_alive: minor_version >= 1,
    };
    for h in headers {
        let name = h.name.as_bytes();
        match name.len() {
            14 if name.eq_ignore_ascii_case(b"content-length") => {
                let n = parse_content_length(h.value)?;
                if meta.content_length.is_some_and(|old| old != n) {
                    return Err(Error::ContentLength);
                }
                meta.content_length = Some(n);
            }
            17 if name.eq_ignore_ascii_case(b"transfer-encoding") => {
                // The last coding of the last Transfer-Encoding line is the final one.
                let last = h.value.rsplit(|&b| b == b',').next().unwrap_or(b"");
                meta.transfer_chunked = Some(trim(last).eq_ignore_ascii_case(b"chunked"));
            }
            10 if name.eq_ignore_ascii_case(b"connection") => {
                for token in h.value.split(|&b| b == b',') {
                    let token = trim(token);
                    if token.eq_ignore_ascii_case(b"close") {
                        meta.keep_alive = false;
                    } else if token.eq_ignore_ascii_case(b"keep-alive") && minor_version == 0 {
                        meta.keep_alive = true;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(meta)
}

/// `Content-Length = 1*DIGIT` (RFC 9110 §8.6).
fn parse_content_length(value: &[u8]) -> Result<u64, Error> {
    let value = trim(value);
    if value.is_empty() {
        return Err(Error::ContentLength);
    }
    let mut n: u64 = 0;
    for &b in value {
        if !b.is_ascii_digit() {
            return Err(Error::ContentLength);
        }
        n = n
            .checked_mul(10)
            .and_then(|n| n.checked_add(u64::from(b - b'0')))
            .ok_or(Error::ContentLength)?;
    }
    Ok(n)
}

fn trim(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|&b| b != b' ' && b != b'\t')
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|&b| b != b' ' && b != b'\t')
        .map_or(start, |i| i + 1);
    &s[start..end]
}

/// A complete response as the load generator needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Done {
    /// Status code of the final response.
    pub code: u16,
    /// Whether another response may follow on this connection.
    pub keep_alive: bool,
    /// Body bytes (after chunked decoding: the data bytes only).
    pub body_len: u64,
}

/// Where [`ResponseParser`] is inside a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Waiting for (the rest of) a head; nothing of it is consumed until it is whole.
    Head,
    /// `n` body bytes still to come.
    Length(u64),
    /// Body until EOF.
    UntilClose,
    /// Inside a chunked body.
    Chunk(Chunk),
}

/// The chunked-coding walker (RFC 9112 §7.1):
/// ```text
/// chunked-body = *chunk last-chunk trailer-section CRLF
/// chunk        = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
/// chunk-size   = 1*HEXDIG
/// last-chunk   = 1*("0") [ chunk-ext ] CRLF
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Reading hex digits; `digits` counts them, `size` accumulates.
    Size { size: u64, digits: u8 },
    /// Skipping a chunk extension up to CR.
    Ext { size: u64 },
    /// Expecting the LF after a size line.
    SizeLf { size: u64 },
    /// `n` data bytes still to come.
    Data(u64),
    /// Expecting CR after chunk data.
    DataCr,
    /// Expecting LF after chunk data.
    DataLf,
    /// At the start of a trailer line (or the final CRLF).
    TrailerStart,
    /// Inside a trailer field line, up to CR.
    TrailerLine,
    /// Expecting the LF ending a trailer line.
    TrailerLf,
    /// Expecting the LF of the final CRLF.
    EndLf,
}

/// Incremental parser for a stream of responses on one connection.
///
/// Feed it the unconsumed bytes with [`ResponseParser::parse`]; it returns how many bytes it
/// consumed and whether a response is complete. A partial head consumes nothing (keep those
/// bytes and append to them); body bytes are consumed as they come, so bodies of any size pass
/// through a small buffer.
#[derive(Debug, Clone)]
pub struct ResponseParser {
    state: State,
    head_request: bool,
    code: u16,
    keep_alive: bool,
    body_len: u64,
}

impl Default for ResponseParser {
    fn default() -> Self {
        Self::new()
    }
}

impl ResponseParser {
    /// A parser expecting the head of a response to a non-HEAD request.
    pub fn new() -> Self {
        Self {
            state: State::Head,
            head_request: false,
            code: 0,
            keep_alive: true,
            body_len: 0,
        }
    }

    /// Sets whether the requests being answered are HEAD requests (no response body).
    pub fn set_head_request(&mut self, head_request: bool) {
        self.head_request = head_request;
    }

    /// True when the parser is between responses (nothing of the next one consumed).
    pub fn is_idle(&self) -> bool {
        self.state == State::Head
    }

    /// Parses from `buf`; returns the bytes consumed and, if one ended, the response.
    ///
    /// Call again with the rest of the buffer after a `Complete`: several pipelined responses
    /// may sit in one read. Interim 1xx responses (but 101) are consumed and skipped.
    pub fn parse(&mut self, buf: &[u8]) -> Result<(usize, Status<Done>), Error> {
        let mut at = 0;
        loop {
            let rest = &buf[at..];
            match self.state {
                State::Head => {
                    let mut headers = [const { MaybeUninit::uninit() }; MAX_HEADERS];
                    let head = match parse_head(rest, &mut headers, self.head_request)? {
                        Status::Complete(head) => head,
                        Status::Partial => return Ok((at, Status::Partial)),
                    };
                    at += head.len;
                    if (100..200).contains(&head.code) && head.code != 101 {
                        // RFC 9110 §15.2: interim responses precede the final one.
                        continue;
                    }
                    self.code = head.code;
                    self.keep_alive = head.keep_alive;
                    self.body_len = 0;
                    match head.framing {
                        Framing::Empty | Framing::Length(0) => return Ok((at, self.done())),
                        Framing::Length(n) => self.state = State::Length(n),
                        Framing::Chunked => {
                            self.state = State::Chunk(Chunk::Size { size: 0, digits: 0 })
                        }
                        Framing::UntilClose => self.state = State::UntilClose,
                    }
                }
                State::Length(n) => {
                    let take = n.min(rest.len() as u64);
                    at += take as usize;
                    self.body_len += take;
                    if take == n {
                        return Ok((at, self.done()));
                    }
                    self.state = State::Length(n - take);
                    return Ok((at, Status::Partial));
                }
                State::UntilClose => {
                    self.body_len += rest.len() as u64;
                    return Ok((buf.len(), Status::Partial));
                }
                State::Chunk(chunk) => {
                    let (used, finished) = self.walk_chunks(chunk, rest)?;
                    at += used;
                    if finished {
                        return Ok((at, self.done()));
                    }
                    return Ok((at, Status::Partial));
                }
            }
        }
    }

    /// Tells the parser the peer closed the connection; completes a close-delimited body.
    ///
    /// `unconsumed` is the count of bytes left over from the last [`ResponseParser::parse`]
    /// (the start of an incomplete head). Returns `Ok(None)` when the close fell cleanly
    /// between responses.
    pub fn eof(&mut self, unconsumed: usize) -> Result<Option<Done>, Error> {
        match self.state {
            State::Head if unconsumed == 0 => Ok(None),
            State::Head => Err(Error::IncompleteHead),
            State::UntilClose => {
                self.keep_alive = false;
                match self.done() {
                    Status::Complete(done) => Ok(Some(done)),
                    Status::Partial => Ok(None),
                }
            }
            State::Length(_) | State::Chunk(_) => {
                self.state = State::Head;
                Err(Error::IncompleteBody)
            }
        }
    }

    /// Forgets any response in progress (after the connection was dropped).
    pub fn reset(&mut self) {
        self.state = State::Head;
    }

    fn done(&mut self) -> Status<Done> {
        self.state = State::Head;
        Status::Complete(Done {
            code: self.code,
            keep_alive: self.keep_alive,
            body_len: self.body_len,
        })
    }

    /// Walks chunk framing over `buf`; returns bytes used and whether the body ended.
    fn walk_chunks(&mut self, mut st: Chunk, buf: &[u8]) -> Result<(usize, bool), Error> {
        let mut i = 0;
        while i < buf.len() {
            let b = buf[i];
            st = match st {
                Chunk::Data(n) => {
                    let take = n.min((buf.len() - i) as u64);
                    i += take as usize;
                    self.body_len += take;
                    if take == n {
                        Chunk::DataCr
                    } else {
                        Chunk::Data(n - take)
                    }
                }
                _ => {
                    i += 1;
                    match step(st, b)? {
                        Some(next) => next,
                        None => {
                            self.state = State::Head;
                            return Ok((i, true));
                        }
                    }
                }
            };
        }
        self.state = State::Chunk(st);
        Ok((i, false))
    }
}

/// One byte of chunk framing; `None` means the chunked body ended with this byte.
fn step(st: Chunk, b: u8) -> Result<Option<Chunk>, Error> {
    Ok(Some(match st {
        Chunk::Size { size, digits } => match hex(b) {
            Some(d) if size >> 60 == 0 => Chunk::Size {
                size: size << 4 | u64::from(d),
                digits: digits.saturating_add(1),
            },
            _ if digits == 0 => return Err(Error::ChunkSize),
            // RFC 9112 §7.1.1: a chunk-ext starts with optional whitespace then `;`.
            None if matches!(b, b';' | b' ' | b'\t') => Chunk::Ext { size },
            None if b == b'\r' => Chunk::SizeLf { size },
            _ => return Err(Error::ChunkSize),
        },
        Chunk::Ext { size } => match b {
            b'\r' => Chunk::SizeLf { size },
            b'\n' => return Err(Error::ChunkSize),
            _ => Chunk::Ext { size },
        },
        Chunk::SizeLf { size } => match (b, size) {
            (b'\n', 0) => Chunk::TrailerStart,
            (b'\n', n) => Chunk::Data(n),
            _ => return Err(Error::ChunkSize),
        },
        Chunk::Data(_) => unreachable!("data is consumed in bulk by walk_chunks"),
        Chunk::DataCr if b == b'\r' => Chunk::DataLf,
        Chunk::DataLf if b == b'\n' => Chunk::Size { size: 0, digits: 0 },
        Chunk::DataCr | Chunk::DataLf => return Err(Error::ChunkDelimiter),
        Chunk::TrailerStart => match b {
            b'\r' => Chunk::EndLf,
            b'\n' => return Err(Error::Trailer),
            _ => Chunk::TrailerLine,
        },
        Chunk::TrailerLine => match b {
            b'\r' => Chunk::TrailerLf,
            b'\n' => return Err(Error::Trailer),
            _ => Chunk::TrailerLine,
        },
        Chunk::TrailerLf if b == b'\n' => Chunk::TrailerStart,
        Chunk::EndLf if b == b'\n' => return Ok(None),
        Chunk::TrailerLf | Chunk::EndLf => return Err(Error::Trailer),
    }))
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `input` as a whole stream ending in EOF; returns every response or the error.
    fn run(input: &[u8], head_request: bool) -> Result<Vec<Done>, Error> {
        let mut p = ResponseParser::new();
        p.set_head_request(head_request);
        let mut out = Vec::new();
        let mut at = 0;
        loop {
            let (used, st) = p.parse(&input[at..])?;
            at += used;
            match st {
                Status::Complete(done) => out.push(done),
                Status::Partial => break,
            }
        }
        if let Some(done) = p.eof(input.len() - at)? {
            out.push(done);
        }
        Ok(out)
    }

    fn ok(code: u16, keep_alive: bool, body_len: u64) -> Done {
        Done {
            code,
            keep_alive,
            body_len,
        }
    }

    macro_rules! res {
        ($name:ident, $input:expr, $expect:expr) => {
            res!($name, $input, false, $expect);
        };
        ($name:ident, $input:expr, $head:expr, $expect:expr) => {
            #[test]
            fn $name() {
                assert_eq!(run($input, $head), $expect);
            }
        };
    }

    res!(
        length_body,
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
        Ok(vec![ok(200, true, 5)])
    );
    res!(
        zero_length,
        b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        Ok(vec![ok(200, true, 0)])
    );
    res!(
        two_pipelined,
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiHTTP/1.1 404 Not Found\r\ncontent-length: 1\r\n\r\nx",
        Ok(vec![ok(200, true, 2), ok(404, true, 1)])
    );
    res!(
        chunked_body,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nA;ext=1\r\n0123456789\r\n0\r\n\r\n",
        Ok(vec![ok(200, true, 15)])
    );
    res!(
        chunked_with_trailers,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n1\r\nx\r\n0\r\nX-T: 1\r\n\r\n",
        Ok(vec![ok(200, true, 1)])
    );
    res!(
        chunked_overrides_length,
        b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        Ok(vec![ok(200, true, 0)])
    );
    res!(
        transfer_not_chunked_reads_to_close,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nabc",
        Ok(vec![ok(200, false, 3)])
    );
    res!(
        until_close,
        b"HTTP/1.1 200 OK\r\n\r\nabcdef",
        Ok(vec![ok(200, false, 6)])
    );
    res!(
        head_has_no_body,
        b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n",
        true,
        Ok(vec![ok(200, true, 0), ok(200, true, 0)])
    );
    res!(
        no_content_has_no_body,
        b"HTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\nHTTP/1.1 304 Not Modified\r\n\r\n",
        Ok(vec![ok(204, true, 0), ok(304, true, 0)])
    );
    res!(
        interim_skipped,
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nz",
        Ok(vec![ok(201, true, 1)])
    );
    res!(
        switching_protocols_ends,
        b"HTTP/1.1 101 Switching Protocols\r\n\r\n",
        Ok(vec![ok(101, false, 0)])
    );
    res!(
        connection_close,
        b"HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n",
        Ok(vec![ok(200, false, 0)])
    );
    res!(
        http10_closes,
        b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n",
        Ok(vec![ok(200, false, 0)])
    );
    res!(
        http10_keep_alive,
        b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n",
        Ok(vec![ok(200, true, 0)])
    );
    res!(
        duplicate_equal_length,
        b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
        Ok(vec![ok(200, true, 1)])
    );
    res!(
        conflicting_length,
        b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx",
        Err(Error::ContentLength)
    );
    res!(
        bad_length,
        b"HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n",
        Err(Error::ContentLength)
    );
    res!(
        overflow_length,
        b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
        Err(Error::ContentLength)
    );
    res!(garbage, b"SSH-2.0-OpenSSH\r\n\r\n", Err(Error::StatusLine));
    res!(
        bad_header,
        b"HTTP/1.1 200 OK\r\nBad Header: x\r\n\r\n",
        Err(Error::Header)
    );
    res!(
        bad_chunk_size,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        Err(Error::ChunkSize)
    );
    res!(
        chunk_size_overflow,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n11111111111111111\r\n",
        Err(Error::ChunkSize)
    );
    res!(
        missing_chunk_crlf,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxy\r\n",
        Err(Error::ChunkDelimiter)
    );
    res!(
        closed_mid_body,
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
        Err(Error::IncompleteBody)
    );
    res!(
        closed_mid_chunk,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
        Err(Error::IncompleteBody)
    );
    res!(
        closed_mid_head,
        b"HTTP/1.1 200 OK\r\nContent-Le",
        Err(Error::IncompleteHead)
    );
    res!(clean_close_between, b"", Ok(vec![]));

    #[test]
    fn head_borrows_headers_and_reason() {
        let buf = b"HTTP/1.1 418 I'm a teapot\r\nServer: t\r\nContent-Length: 3\r\n\r\nabc";
        let mut headers = [const { MaybeUninit::uninit() }; 4];
        let Ok(Status::Complete(head)) = parse_head(buf, &mut headers, false) else {
            panic!("head did not parse");
        };
        assert_eq!(
            (head.code, head.reason, head.minor_version),
            (418, "I'm a teapot", 1)
        );
        assert_eq!(head.headers.len(), 2);
        assert_eq!(
            (head.headers[0].name, head.headers[0].value),
            ("Server", &b"t"[..])
        );
        assert_eq!(head.len, buf.len() - 3);
        assert_eq!(head.framing, Framing::Length(3));
    }

    #[test]
    fn partial_head_consumes_nothing() {
        let mut p = ResponseParser::new();
        assert_eq!(
            p.parse(b"HTTP/1.1 200 OK\r\nContent"),
            Ok((0, Status::Partial))
        );
        assert!(p.is_idle());
    }
}
