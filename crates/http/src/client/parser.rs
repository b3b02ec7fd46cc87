//! The response parsers: [`parse_response`] and [`ResponseParser`] over one head scan (the
//! status line, the field lines and the three fields that decide framing and persistence),
//! the stream's body framing (Content-Length, chunked, until close) and the [`HeadMemo`].
use super::{Error, Framing, Head, MAX_HEADERS};
use crate::chunked::ChunkedDecoder;
use crate::error::Status;
use crate::fields::parse_content_length;
use crate::request::Header;
use crate::scan::trim_ows;

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
struct Scanned<'b> {
    line: StatusLine<'b>,
    len: usize,
    framing: Framing,
    keep_alive: bool,
}

/// Scans one head in a single pass, calling `each(name, value)` per header line.
///
/// Hand-written rather than httparse: the load generator needs only the status code and
/// three headers, and a name scan eight bytes at a time costs less than a per-byte token
/// table or httparse (crates/load/benches/hot_path.rs measures it).
#[inline]
fn scan<'b>(
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
struct StatusLine<'b> {
    minor_version: u8,
    code: u16,
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
#[derive(Debug, Clone)]
enum State {
    /// Waiting for (the rest of) a head; nothing of it is consumed until it is whole.
    Head,
    /// `n` body bytes still to come.
    Length(u64),
    /// Body until EOF.
    UntilClose,
    /// Inside a chunked body.
    Chunked(ChunkedDecoder),
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
        matches!(self.state, State::Head)
    }

    /// Parses from `buf`; returns the bytes consumed and, if one ended, the response.
    ///
    /// Call again with the rest of the buffer after a `Complete`: several pipelined responses
    /// may sit in one read. Interim 1xx responses (but 101) are consumed and skipped.
    pub fn parse(&mut self, buf: &[u8]) -> Result<(usize, Status<Done>), Error> {
        self.parse_with(buf, &mut HeadMemo::default())
    }

    /// [`ResponseParser::parse`], recognising a head identical to the one `memo` holds by
    /// comparing its bytes, and keeping each head it parses in `memo` (see [`HeadMemo`]).
    pub fn parse_with(
        &mut self,
        buf: &[u8],
        memo: &mut HeadMemo,
    ) -> Result<(usize, Status<Done>), Error> {
        let mut at = 0;
        loop {
            let rest = &buf[at..];
            match &mut self.state {
                State::Head => {
                    let head = match memo.recall(rest, self.head_request) {
                        Some(head) => head,
                        None => match scan(rest, self.head_request, |_, _| Ok(()))? {
                            Status::Complete(head) => memo.keep(rest, self.head_request, &head),
                            Status::Partial => return Ok((at, Status::Partial)),
                        },
                    };
                    at += head.len;
                    if self.start(head) {
                        return Ok((at, self.done()));
                    }
                }
                State::Length(n) => {
                    let n = *n;
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
                State::Chunked(decoder) => {
                    let (used, data_len, done) = walk_chunks(decoder, rest)?;
                    at += used;
                    self.body_len += data_len;
                    if done {
                        return Ok((at, self.done()));
                    }
                    return Ok((at, Status::Partial));
                }
            }
        }
    }

    /// Takes in a whole head: skips an interim response, or sets the state its body needs.
    /// Returns whether the response is already complete (it has no body).
    fn start(&mut self, head: Summary) -> bool {
        let code = head.code;
        if (100..200).contains(&code) && code != 101 {
            // RFC 9110 §15.2: interim responses precede the final one.
            return false;
        }
        self.code = code;
        self.keep_alive = head.keep_alive;
        self.body_len = 0;
        self.state = match head.framing {
            Framing::Empty | Framing::Length(0) => return true,
            Framing::Length(n) => State::Length(n),
            Framing::Chunked => State::Chunked(ChunkedDecoder::unbounded()),
            Framing::UntilClose => State::UntilClose,
        };
        false
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
            State::Length(_) | State::Chunked(_) => {
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
}

/// What [`ResponseParser`] takes from a head: everything it decides is here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Summary {
    code: u16,
    len: usize,
    framing: Framing,
    keep_alive: bool,
}

/// The last response head a load worker parsed, kept so that the next identical one is
/// recognised by one compare of its bytes instead of parsed again.
///
/// A load generator reads the same head over and over: the same server answering the same
/// request, whose only changing field, `Date`, changes once a second. What
/// [`ResponseParser`] takes from a head depends on nothing but its bytes and whether the
/// request was HEAD, so a head whose bytes equal the kept one's (and whose request was HEAD
/// or not alike) gets the kept result: no rule is skipped, only repeated. Heads longer than
/// [`HeadMemo::MAX`] are never kept. One memo per worker serves all its connections.
#[derive(Debug, Clone, Default)]
pub struct HeadMemo {
    bytes: Vec<u8>,
    head_request: bool,
    summary: Option<Summary>,
}

impl HeadMemo {
    /// The longest head kept (longer ones are parsed every time).
    pub const MAX: usize = 512;

    /// The kept result, if `buf` starts with the kept head.
    #[inline]
    fn recall(&self, buf: &[u8], head_request: bool) -> Option<Summary> {
        let summary = self.summary?;
        (head_request == self.head_request && buf.get(..self.bytes.len()) == Some(&self.bytes))
            .then_some(summary)
    }

    /// Keeps `head`, just scanned from the start of `buf`, and returns what the parser needs.
    #[inline]
    fn keep(&mut self, buf: &[u8], head_request: bool, head: &Scanned<'_>) -> Summary {
        let summary = Summary {
            code: head.line.code,
            len: head.len,
            framing: head.framing,
            keep_alive: head.keep_alive,
        };
        if head.len <= Self::MAX {
            self.bytes.clear();
            self.bytes.extend_from_slice(&buf[..head.len]);
            self.head_request = head_request;
            self.summary = Some(summary);
        }
        summary
    }
}

/// Runs `decoder` over `buf`: returns the bytes used, the data bytes among them, and whether
/// the body ended. Data is only counted, never copied.
fn walk_chunks(decoder: &mut ChunkedDecoder, buf: &[u8]) -> Result<(usize, u64, bool), Error> {
    let mut used = 0;
    let mut data_len = 0;
    // `decode` stops at each chunk's data; every call on a non-empty rest makes progress.
    while used < buf.len() {
        let d = decoder.decode(&buf[used..]).map_err(Error::Chunked)?;
        used += d.consumed;
        data_len += d.data.len() as u64;
        if d.done || d.consumed == 0 {
            return Ok((used, data_len, d.done));
        }
    }
    Ok((used, data_len, false))
}

#[cfg(test)]
mod tests {
    use super::{Done, HeadMemo, ResponseParser, Status, find_lf, find_name_end};

    /// Every response of `stream`, read `step` bytes at a time (a partial head is kept and
    /// given again with more, as the load generator does), with `memo` or without one.
    fn responses(stream: &[u8], step: usize, head: bool, memo: Option<&mut HeadMemo>) -> Vec<Done> {
        let mut own = HeadMemo::default();
        let fresh = memo.is_none();
        let memo = memo.unwrap_or(&mut own);
        let mut p = ResponseParser::new();
        p.set_head_request(head);
        let (mut out, mut pending, mut fed) = (Vec::new(), Vec::new(), 0);
        while fed < stream.len() {
            let end = (fed + step).min(stream.len());
            pending.extend_from_slice(&stream[fed..end]);
            fed = end;
            loop {
                if fresh {
                    *memo = HeadMemo::default();
                }
                let (used, status) = p.parse_with(&pending, memo).unwrap();
                pending.drain(..used);
                match status {
                    Status::Complete(done) => out.push(done),
                    Status::Partial => break,
                }
            }
        }
        out
    }

    /// Heads that differ from each other in one field each (status, length digits,
    /// Connection, framing, an interim response first, a head longer than the memo keeps),
    /// in a stream where each repeats: the memo never changes what is parsed, at any split.
    #[test]
    fn memo_never_changes_the_answer() {
        let a: &[u8] = b"HTTP/1.1 200 OK\r\nServer: t\r\nContent-Length: 5\r\n\r\nhello";
        let b: &[u8] = b"HTTP/1.1 404 OK\r\nServer: t\r\nContent-Length: 5\r\n\r\nnope!";
        let c: &[u8] = b"HTTP/1.1 200 OK\r\nServer: t\r\nContent-Length: 7\r\n\r\nhello!!";
        let d: &[u8] = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhello";
        let e: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 OK\r\nContent-Length: 0\r\n\r\n";
        let f: &[u8] =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
        let long = [
            b"HTTP/1.1 200 OK\r\nX: ".as_slice(),
            &[b'x'; HeadMemo::MAX],
            b"\r\nContent-Length: 1\r\n\r\n!",
        ]
        .concat();
        let stream = [a, a, b, a, c, c, a, d, e, e, a, f, f, &long, &long, a].concat();
        let want = responses(&stream, stream.len(), false, None);
        assert_eq!(want.len(), 16);
        for step in [1, 2, 7, 31, 64, 200, stream.len()] {
            let mut memo = HeadMemo::default();
            assert_eq!(
                responses(&stream, step, false, Some(&mut memo)),
                want,
                "step {step}"
            );
        }
    }

    /// A memo filled by responses to GET does not answer for the same head after a HEAD
    /// request, whose response has no body whatever its Content-Length says.
    #[test]
    fn memo_tells_head_requests_apart() {
        let a: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
        let mut memo = HeadMemo::default();
        let mut get = ResponseParser::new();
        assert_eq!(
            get.parse_with(a, &mut memo).unwrap(),
            (a.len(), Status::Partial)
        );
        let mut head = ResponseParser::new();
        head.set_head_request(true);
        let (used, status) = head.parse_with(a, &mut memo).unwrap();
        assert_eq!(used, a.len());
        assert!(matches!(
            status,
            Status::Complete(Done {
                code: 200,
                body_len: 0,
                ..
            })
        ));
    }

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
