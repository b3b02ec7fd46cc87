//! The stream of pipelined responses on one connection: where [`ResponseParser`] is inside a
//! response, the body's framing (Content-Length, chunked, until close) and the [`HeadMemo`]
//! that recognises a repeated head.
use super::head::{Scanned, scan};
use super::{Error, Framing};
use crate::chunked::ChunkedDecoder;
use crate::error::Status;

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
    use super::{Done, HeadMemo, ResponseParser, Status};

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
}
