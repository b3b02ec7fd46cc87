//! A `Content-Length` body streamed to its route's [`BodySink`] as it arrives
//! (`Router::streamed`): the head stays at the front of the read buffer, each read's body bytes
//! go to the sink and are cut out, so the buffer holds at most one read whatever the body's
//! size. The head is parsed again for each read (the header array borrows the buffer, so a
//! parsed head cannot be kept across reads); for a body of many reads that is a small cost.

use super::answer::{Step, dispatch_to};
use super::{Conn, Ctx, Extra};
use crate::body::BodySink;
use crate::metrics::BatchCounts;
use std::sync::Arc;
use twelve_http::{Header, ParseError, Status, encode_error, parse_request};

/// Header array size for the heads parsed here, as `answer.rs`'s slow path.
const HEADERS: usize = 128;

/// A streamed body in progress.
pub(crate) struct Stream {
    sink: Box<dyn BodySink>,
    /// Body bytes not yet received.
    left: u64,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("left", &self.left)
            .finish_non_exhaustive()
    }
}

impl Conn {
    /// Feeds the body bytes after the head at `read[pos..]` (a head of `head_len` bytes
    /// announcing `len`) to the request's sink, opening it on the first call; answers once the
    /// whole body went through.
    pub(super) fn step_stream(
        &mut self,
        pos: usize,
        head_len: usize,
        len: u64,
        ctx: &mut Ctx,
    ) -> Step {
        let start = pos + head_len;
        let limits = ctx.limits;
        let mut headers = [Header::EMPTY; HEADERS];
        let Ok(Status::Complete(req)) =
            parse_request(&self.read[pos..start], &mut headers, &limits)
        else {
            // The same bytes parsed a moment ago; a failure here is a codec bug.
            self.extra = None;
            return self.reject(ParseError::InvalidRequestLine, ctx);
        };
        if !self.is_streaming() {
            let Some(sink) = ctx.router.open_stream(&req) else {
                return self.reject(ParseError::InvalidRequestLine, ctx);
            };
            self.extra = Some(Box::new(Extra::Stream(Stream { sink, left: len })));
        }
        let Some(Extra::Stream(stream)) = self.extra.as_deref_mut() else {
            return self.reject(ParseError::InvalidRequestLine, ctx);
        };
        let raw = &self.read[start..];
        let take = usize::try_from(stream.left).map_or(raw.len(), |left| left.min(raw.len()));
        if take > 0 {
            let sink = &mut stream.sink;
            let fed =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink.data(&raw[..take])));
            if fed.is_err() {
                // As a panicking handler: 500, then close.
                self.extra = None;
                return self.fail(ctx);
            }
            stream.left -= take as u64;
        }
        let done = stream.left == 0;
        if !done {
            self.read.drain(start..start + take);
            return Step::Wait;
        }
        let Some(Extra::Stream(stream)) = self.extra.take().map(|b| *b) else {
            return Step::Wait;
        };
        let metrics = Arc::clone(&ctx.all_metrics);
        let mut counts = BatchCounts::new(metrics.worker(ctx.me));
        dispatch_to(
            &req,
            &mut self.write,
            &mut self.file,
            ctx,
            &mut counts,
            |_, res| {
                stream.sink.end(&req, res);
                None
            },
        )
        .0
        .apply(&mut self.closing, &mut self.linger);
        self.read.drain(start..start + take);
        // The body left the buffer as it came: what the request used is its head.
        Step::Answered(head_len)
    }

    /// A sink panicked mid-body: 500 and close, as for a panicking handler.
    fn fail(&mut self, ctx: &mut Ctx) -> Step {
        ctx.metrics().response(500);
        encode_error(&mut self.write, 500);
        self.closing = true;
        self.linger = true;
        Step::Wait
    }
}
