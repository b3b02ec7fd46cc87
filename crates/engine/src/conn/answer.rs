//! Parsing and answering the requests in a connection's read buffer: the fast path with a
//! small header array, the retry with room for every allowed header, chunked bodies, and the
//! handler call ([`dispatch`]) that appends each response to the output buffer.

use super::{Conn, Ctx, Extra, Phase, deferred};
use crate::metrics::BatchCounts;
use crate::response::{FileBody, Response, may_continue};
use crate::router::Router;
use crate::rt::Pending;
use std::sync::Arc;
use twelve_http::{
    BodyFraming, ChunkedDecoder, Header, ParseError, Request, Status, decode_whole,
    encode_continue, encode_error, parse_request,
};

/// Header array size of the first parse attempt: enough for nearly every real request.
const FEW_HEADERS: usize = 24;

/// Header array size: requests with more field lines than this (or than `Limits::headers`,
/// whichever is smaller) get 431.
const MAX_HEADERS: usize = 128;

/// The worker keeps its chunked-body buffer ([`Scratch::chunked`]) up to this capacity; a
/// larger body's buffer is freed once answered, so one upload does not pin its size.
///
/// [`Scratch::chunked`]: crate::response::Scratch
const KEPT_BODY_BYTES: usize = 64 * 1024;

/// A chunked body being decoded: the head stays at the front of the read buffer, decoded
/// data goes to `body`, consumed framing is cut out of the read buffer.
#[derive(Debug)]
pub(super) struct Chunked {
    decoder: ChunkedDecoder,
    body: Vec<u8>,
}

impl Conn {
    /// An HTTP/1.1 `Content-Length` body is streaming to its sink (`stream.rs`).
    pub(super) fn is_streaming(&self) -> bool {
        matches!(self.extra.as_deref(), Some(Extra::Stream(_)))
    }

    /// An HTTP/1.1 chunked body is being decoded.
    pub(super) fn is_chunking(&self) -> bool {
        matches!(self.extra.as_deref(), Some(Extra::Chunked(_)))
    }

    /// Parses and answers every complete request in the read buffer, in order, until one
    /// closes the connection, a body is incomplete, or output passes the high-water mark.
    pub(super) fn process(&mut self, now_ms: u64, ctx: &mut Ctx) {
        let mut pos = 0;
        loop {
            let (at, parsed) = self.answer_few(pos, now_ms, ctx);
            pos = at;
            let step = match parsed {
                Parsed::Answered(_) | Parsed::Wait => break,
                Parsed::MoreHeaders => self.step_many(pos, now_ms, ctx),
                // A chunked body behind answers still to come waits for them (its decoding
                // state and their slots share the connection's one box).
                Parsed::Chunked { .. } if self.waiting() => break,
                Parsed::Chunked { head_len, expect } => {
                    self.step_chunked(pos, head_len, expect, now_ms, ctx)
                }
                // As a chunked body: a streamed one waits for the answers before it.
                Parsed::Stream { .. } if self.waiting() => break,
                Parsed::Stream { head_len, len } => self.step_stream(pos, head_len, len, ctx),
            };
            match step {
                Step::Answered(used) => {
                    pos += used;
                    self.answered(now_ms);
                }
                Step::Wait => break,
            }
        }
        if self.closing {
            // Bytes after the closing request: the client is still sending.
            self.linger |= pos < self.read.len();
            self.read.clear();
        } else if pos > 0 {
            self.read.drain(..pos);
        }
        if self.read.is_empty() && matches!(self.phase, Phase::Head) {
            self.phase = Phase::Idle;
            self.since_ms = now_ms;
        }
    }

    /// Whether the request at `pos` of a `len`-byte read buffer may be answered now.
    fn may_answer(&self, pos: usize, len: usize, ctx: &Ctx) -> bool {
        !self.closing
            && self.file.is_none()
            && pos < len
            && self.pending() <= ctx.high_water
            && deferred::room(&self.extra, ctx.high_water)
    }

    /// A request was answered: the next one's head starts now.
    fn answered(&mut self, now_ms: u64) {
        self.served = true;
        self.continue_sent = false;
        self.phase = Phase::Head;
        self.since_ms = now_ms;
    }

    /// Answers requests from `read[pos..]` with room for [`FEW_HEADERS`] each, until one
    /// needs the slow path (more headers, a chunked body) or nothing more can be answered now.
    /// Returns where it stopped and why ([`Parsed::Wait`] for "nothing more now").
    ///
    /// The read buffer is taken out of `self` for the loop so that one header array, borrowing
    /// it, serves every request of the read: the parser only writes the entries it returns, so
    /// the array is initialised once per read, not once per request.
    fn answer_few(&mut self, mut pos: usize, now_ms: u64, ctx: &mut Ctx) -> (usize, Parsed) {
        let read = std::mem::take(&mut self.read);
        let mut headers = [Header::EMPTY; FEW_HEADERS];
        let metrics = Arc::clone(&ctx.all_metrics);
        let mut counts = BatchCounts::new(metrics.worker(ctx.me));
        let parsed = loop {
            if !self.may_answer(pos, read.len(), ctx) {
                break Parsed::Wait;
            }
            if self.write.capacity() == 0 {
                self.write = ctx.pool.take();
            }
            match self.parse_answer(&read[pos..], &mut headers, now_ms, ctx, &mut counts) {
                Parsed::Answered(used) => {
                    pos += used;
                    self.answered(now_ms);
                }
                other => break other,
            }
        };
        self.read = read;
        (pos, parsed)
    }

    /// Handles the request starting at `read[pos..]` with room for [`MAX_HEADERS`]: the
    /// retry of a request [`FEW_HEADERS`] were too few for. Parsing with room for few first
    /// keeps the header array small for nearly every request.
    fn step_many(&mut self, pos: usize, now_ms: u64, ctx: &mut Ctx) -> Step {
        let read = std::mem::take(&mut self.read);
        let mut headers = [Header::EMPTY; MAX_HEADERS];
        let metrics = Arc::clone(&ctx.all_metrics);
        let mut counts = BatchCounts::new(metrics.worker(ctx.me));
        let parsed = self.parse_answer(&read[pos..], &mut headers, now_ms, ctx, &mut counts);
        drop(counts);
        self.read = read;
        match parsed {
            Parsed::Answered(used) => Step::Answered(used),
            Parsed::Wait => Step::Wait,
            Parsed::MoreHeaders => self.reject(ParseError::TooManyHeaders, ctx),
            Parsed::Chunked { .. } if self.waiting() => Step::Wait,
            Parsed::Chunked { head_len, expect } => {
                self.step_chunked(pos, head_len, expect, now_ms, ctx)
            }
            Parsed::Stream { .. } if self.waiting() => Step::Wait,
            Parsed::Stream { head_len, len } => self.step_stream(pos, head_len, len, ctx),
        }
    }

    /// Parses the request at the start of `buf` (the read buffer from the request on, taken
    /// out of `self`) into `headers` and answers it if it is complete. A chunked body is left
    /// to [`Conn::step_chunked`], which needs the read buffer back in `self`.
    ///
    /// Always inlined: it has two callers, so LLVM would keep it a call, whose prologue and
    /// epilogue are a measurable share of a small request.
    #[inline(always)]
    fn parse_answer<'b>(
        &mut self,
        buf: &'b [u8],
        headers: &mut [Header<'b>],
        now_ms: u64,
        ctx: &mut Ctx,
        counts: &mut BatchCounts<'_>,
    ) -> Parsed {
        // Borrowed, not copied: a copy of the `Limits` costs instructions on every request.
        let limits = &ctx.limits;
        let room = headers.len();
        // The arms work on the parsed request in place, through a reference: binding it first
        // (`let req = match`), or matching the `Result` by value, moves the whole `Request`
        // out of the `Result` on every request.
        match &parse_request(buf, headers, limits) {
            Err(ParseError::TooManyHeaders) if room < MAX_HEADERS && limits.headers > room => {
                Parsed::MoreHeaders
            }
            Err(e) => {
                self.reject(*e, ctx);
                Parsed::Wait
            }
            Ok(Status::Partial) => Parsed::Wait,
            Ok(Status::Complete(req)) => match req.framing {
                BodyFraming::None => {
                    self.run_handler(req, b"", now_ms, ctx, counts);
                    Parsed::Answered(req.head_len)
                }
                // A body already streaming to its handler (`stream.rs`): its bytes left the
                // buffer, so the length check below no longer applies.
                BodyFraming::Length(len) if self.is_streaming() => Parsed::Stream {
                    head_len: req.head_len,
                    len,
                },
                BodyFraming::Length(n) => {
                    // `n <= limits.body_bytes` (checked by the parser), so it fits in memory.
                    let end = req
                        .head_len
                        .saturating_add(usize::try_from(n).unwrap_or(usize::MAX));
                    if buf.len() >= end {
                        let body = &buf[req.head_len..end];
                        self.run_handler(req, body, now_ms, ctx, counts);
                        return Parsed::Answered(end);
                    }
                    if ctx.router.streams(req) {
                        self.expect_body(buf.len() == req.head_len && may_continue(req), now_ms);
                        return Parsed::Stream {
                            head_len: req.head_len,
                            len: n,
                        };
                    }
                    self.expect_body(buf.len() == req.head_len && may_continue(req), now_ms);
                    Parsed::Wait
                }
                BodyFraming::Chunked => {
                    // A body that came whole with its head is answered here, from the
                    // worker's buffer: no state of its own, no second parse of the head, no
                    // move of the bytes after it.
                    // Anything else, a body resumed from an earlier read included, is
                    // step_chunked's, which decides every error.
                    let mut body = std::mem::take(&mut ctx.scratch.chunked);
                    let whole = if self.is_chunking() {
                        None
                    } else {
                        decode_whole(&buf[req.head_len..], limits, &mut body)
                    };
                    let answered = whole.map(|used| {
                        self.run_handler(req, &body, now_ms, ctx, counts);
                        Parsed::Answered(req.head_len + used)
                    });
                    // Kept for the next body unless one large body grew it.
                    if body.capacity() <= KEPT_BODY_BYTES {
                        ctx.scratch.chunked = body;
                    }
                    answered.unwrap_or(Parsed::Chunked {
                        head_len: req.head_len,
                        expect: may_continue(req),
                    })
                }
            },
        }
    }

    /// Enters (or stays in) the body phase; sends `100 Continue` once if the client waits
    /// for it and no body byte has arrived (RFC 9110 §10.1.1).
    fn expect_body(&mut self, send_continue: bool, now_ms: u64) {
        if send_continue && !self.continue_sent {
            encode_continue(&mut self.write);
            self.continue_sent = true;
        }
        if self.phase != Phase::Body {
            self.phase = Phase::Body;
            self.since_ms = now_ms;
            self.body_credit_ms = now_ms;
        }
    }

    fn step_chunked(
        &mut self,
        pos: usize,
        head_len: usize,
        expect: bool,
        now_ms: u64,
        ctx: &mut Ctx,
    ) -> Step {
        let limits = ctx.limits;
        if !self.is_chunking() {
            self.extra = Some(Box::new(Extra::Chunked(Chunked {
                decoder: ChunkedDecoder::new(&limits),
                body: Vec::new(),
            })));
        }
        let Some(Extra::Chunked(state)) = self.extra.as_deref_mut() else {
            unreachable!("the chunked state was just made");
        };
        let start = pos + head_len;
        let raw = &self.read[start..];
        let no_body_yet = raw.is_empty() && state.body.is_empty();
        let mut used = 0;
        let mut done = false;
        while used < raw.len() {
            match state.decoder.decode(&raw[used..]) {
                Ok(d) => {
                    state
                        .body
                        .extend_from_slice(&raw[used + d.data.start..used + d.data.end]);
                    used += d.consumed;
                    if d.done {
                        done = true;
                        break;
                    }
                    if d.consumed == 0 {
                        break;
                    }
                }
                Err(e) => {
                    self.extra = None;
                    return self.reject(e, ctx);
                }
            }
        }
        // Cut the consumed framing out, so the buffer holds head + unread bytes only.
        self.read.drain(start..start + used);
        if !done {
            self.expect_body(no_body_yet && expect, now_ms);
            return Step::Wait;
        }
        let Some(Extra::Chunked(state)) = self.extra.take().map(|e| *e) else {
            unreachable!("the chunked state exists");
        };
        let mut headers = [Header::EMPTY; MAX_HEADERS];
        let Ok(Status::Complete(req)) =
            parse_request(&self.read[pos..start], &mut headers, &limits)
        else {
            // The same bytes parsed a moment ago; a failure here is a codec bug.
            return self.reject(ParseError::InvalidRequestLine, ctx);
        };
        let metrics = Arc::clone(&ctx.all_metrics);
        let mut counts = BatchCounts::new(metrics.worker(ctx.me));
        let (closing, later) = dispatch(
            &req,
            &state.body,
            &mut self.write,
            &mut self.file,
            ctx,
            &mut counts,
        );
        closing.apply(&mut self.closing, &mut self.linger);
        if let Some(pending) = later {
            let (close, linger) = deferred::wait(&mut self.extra, pending, &req, now_ms, ctx);
            self.closing |= close;
            self.linger |= linger;
        }
        Step::Answered(head_len)
    }

    /// Runs the handler of `req` (the read buffer taken out of `self`, as in
    /// [`Conn::parse_answer`]): its response goes to the output buffer or, behind an answer
    /// still to come, to that answer's slot; an async handler's future gets a slot of its own.
    #[inline(always)]
    fn run_handler(
        &mut self,
        req: &Request<'_, '_>,
        body: &[u8],
        now_ms: u64,
        ctx: &mut Ctx,
        counts: &mut BatchCounts<'_>,
    ) {
        let (out, file) = deferred::sink(
            &mut self.write,
            &mut self.file,
            &mut self.extra,
            &mut ctx.pool,
        );
        let (closing, later) = dispatch(req, body, out, file, ctx, counts);
        closing.apply(&mut self.closing, &mut self.linger);
        if let Some(pending) = later {
            let (close, linger) = deferred::wait(&mut self.extra, pending, req, now_ms, ctx);
            self.closing |= close;
            self.linger |= linger;
            // Nothing was written: a waiting request holds no output buffer.
            if self.write.is_empty() && self.write.capacity() > 0 {
                ctx.pool.give(std::mem::take(&mut self.write));
            }
        }
    }

    /// Answers a request the codec rejected: its status, `Connection: close`, then close.
    pub(super) fn reject(&mut self, e: ParseError, ctx: &mut Ctx) -> Step {
        let m = ctx.metrics();
        m.parse_error(e);
        m.response(e.status());
        encode_error(&mut self.write, e.status());
        self.closing = true;
        self.linger = true;
        Step::Wait
    }
}

pub(super) enum Step {
    /// A request was answered; it used this many bytes.
    Answered(usize),
    /// Need more bytes, or the connection is closing.
    Wait,
}

/// What [`Conn::parse_answer`] did with a request.
enum Parsed {
    /// Answered; it used this many bytes.
    Answered(usize),
    /// Nothing more now: need more bytes, the connection is closing (a rejection), or
    /// output passed the high-water mark.
    Wait,
    /// The header array was too small and the limit allows more: parse again with room for
    /// [`MAX_HEADERS`].
    MoreHeaders,
    /// The head is complete and the body chunked: [`Conn::step_chunked`] decodes it.
    Chunked { head_len: usize, expect: bool },
    /// The head is complete and its route streams the `len`-byte body: [`Conn::step_stream`].
    Stream { head_len: usize, len: u64 },
}

/// Whether a response closes the connection, and who decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Closing {
    No,
    /// The client asked (`Connection: close`, HTTP/1.0 without keep-alive): it sends nothing
    /// more, so a plain close is safe once its input is consumed.
    Asked,
    /// The server decided (drain, `Response::close`, a failed handler) on a connection the
    /// client meant to keep: a pipelining client may have requests on the way, so the close
    /// lingers (nginx, too, lingers for a pipelining client).
    Server,
}

impl Closing {
    pub(super) fn apply(self, closing: &mut bool, linger: &mut bool) {
        *closing |= self != Closing::No;
        *linger |= self == Closing::Server;
    }
}

/// Runs the handler for one request and appends its response. Returns whether and why the
/// response closes the connection, and an async handler's future (then nothing is written:
/// the caller gives it a slot, `deferred::wait`).
fn dispatch(
    req: &Request<'_, '_>,
    body: &[u8],
    write: &mut Vec<u8>,
    file: &mut Option<FileBody>,
    ctx: &mut Ctx,
    counts: &mut BatchCounts<'_>,
) -> (Closing, Option<Pending>) {
    dispatch_to(req, write, file, ctx, counts, |router, res| {
        router.dispatch(req, body, res)
    })
}

/// [`dispatch`] with the answer given by `answer` (a streamed body's sink, `stream.rs`, which
/// returns no future).
pub(super) fn dispatch_to(
    req: &Request<'_, '_>,
    write: &mut Vec<u8>,
    file: &mut Option<FileBody>,
    ctx: &mut Ctx,
    counts: &mut BatchCounts<'_>,
    answer: impl FnOnce(&Router, &mut Response<'_>) -> Option<Pending>,
) -> (Closing, Option<Pending>) {
    counts.request();
    let mut res = Response::new(write, &mut ctx.scratch, file, req, ctx.draining);
    // A panicking handler costs its request (500, then close), not the worker and every
    // connection it holds. Free when nothing panics; moot under `panic = "abort"`.
    let router = &ctx.router;
    let later = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| answer(router, &mut res)))
        .unwrap_or(None);
    if later.is_some() {
        return (Closing::No, later);
    }
    if res.status().is_none() {
        res.close();
        res.send(
            500,
            "text/plain; charset=utf-8",
            &[],
            b"500 handler wrote no response\n",
        );
    }
    let status = res.status().unwrap_or(500);
    let close = res.will_close();
    counts.response(status);
    let closing = match (close, req.keep_alive) {
        (false, _) => Closing::No,
        (true, false) => Closing::Asked,
        (true, true) => Closing::Server,
    };
    (closing, None)
}
