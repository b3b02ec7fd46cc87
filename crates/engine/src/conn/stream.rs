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

/// Read space a connection takes while a large body streams in: the most one upload holds.
/// Twice the low-water mark, so that a wake-up reads what woke it in one `recv`.
const STREAM_READ_BYTES: usize = 2 * STREAM_LOW_WATER as usize;

/// The receive low-water mark a connection asks for while at least this much of a streamed
/// body is still to come ([`Conn::low_water`]): the socket wakes the worker once per this many
/// bytes instead of once per segment train.
const STREAM_LOW_WATER: u32 = 512 * 1024;

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
            // Larger reads for a large body: fewer recv calls and wake-ups per megabyte, in
            // one of the pool's few large buffers (the head moves with it).
            let want = usize::try_from(stream.left)
                .map_or(STREAM_READ_BYTES, |l| l.min(STREAM_READ_BYTES));
            if self.read.capacity() < start + want {
                let mut large = ctx.pool.take_large(start + want);
                large.extend_from_slice(&self.read);
                ctx.pool.give(std::mem::replace(&mut self.read, large));
            }
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

    /// The `SO_RCVLOWAT` the connection's socket should have: [`STREAM_LOW_WATER`] while at
    /// least that much of a streamed body is still to come (the client must send it, so the
    /// mark is always reached), else 1, the socket's default.
    #[inline]
    pub(crate) fn low_water(&self) -> u32 {
        match self.extra.as_deref() {
            Some(Extra::Stream(s)) if s.left >= u64::from(STREAM_LOW_WATER) => STREAM_LOW_WATER,
            _ => 1,
        }
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

#[cfg(test)]
mod tests {
    use super::super::tests::{ctx_with, feed};
    use super::*;
    use crate::response::Response;
    use crate::router::Router;
    use std::sync::Mutex;
    use twelve_http::{Limits, Method, Request};

    /// What a sink saw: the size of each `data` call, and whether `end` came.
    type Seen = Arc<Mutex<(Vec<usize>, bool)>>;

    /// Logs into the shared record and answers its own byte count.
    struct Log(Seen, usize);

    impl BodySink for Log {
        fn data(&mut self, bytes: &[u8]) {
            self.0.lock().unwrap().0.push(bytes.len());
            self.1 += bytes.len();
        }
        fn end(self: Box<Self>, _req: &Request<'_, '_>, res: &mut Response<'_>) {
            self.0.lock().unwrap().1 = true;
            res.send(200, "text/plain", &[], self.1.to_string().as_bytes());
        }
    }

    fn streaming(seen: &Seen) -> Ctx {
        let seen = seen.clone();
        let router = Router::new().streamed(Method::Post, "/up", move |_: &Request<'_, '_>| {
            Box::new(Log(seen.clone(), 0)) as Box<dyn BodySink>
        });
        let limits = Limits {
            body_bytes: 64 << 20,
            ..Limits::default()
        };
        ctx_with(limits, router)
    }

    /// A body of 4 MiB in 16 KiB reads reaches the sink read by read, never more than one
    /// read held: the read buffer stays within one large read's room.
    #[test]
    fn a_large_body_passes_through_a_bounded_buffer() {
        let seen = Seen::default();
        let (mut c, mut x) = (Conn::new(0), streaming(&seen));
        let len = 4 << 20;
        let head = format!("POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: {len}\r\n\r\n");
        assert!(feed(&mut c, &mut x, head.as_bytes(), 0).is_empty());
        let piece = vec![7u8; 16 * 1024];
        let mut out = Vec::new();
        for i in 0..len / piece.len() {
            out = feed(&mut c, &mut x, &piece, i as u64);
            let held = c.read.capacity();
            assert!(held <= 2 * STREAM_READ_BYTES, "read buffer {held}");
            if i + 1 < len / piece.len() {
                assert!(out.is_empty());
                assert_eq!(seen.lock().unwrap().0.len(), i + 1, "fed read by read");
            }
        }
        let text = String::from_utf8_lossy(&out);
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
        assert!(text.ends_with(&format!("\r\n\r\n{len}")), "{text}");
        assert!(seen.lock().unwrap().1);
    }

    /// The body's last bytes and the next request in one read: the sink gets only its body,
    /// the next request is answered after it.
    #[test]
    fn the_next_request_is_not_fed_to_the_sink() {
        let seen = Seen::default();
        let (mut c, mut x) = (Conn::new(0), streaming(&seen));
        let head = "POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n12345";
        assert!(feed(&mut c, &mut x, head.as_bytes(), 0).is_empty());
        let tail = format!(
            "67890{}",
            "POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"
        );
        let out = String::from_utf8_lossy(&feed(&mut c, &mut x, tail.as_bytes(), 1)).into_owned();
        assert_eq!(out.matches("HTTP/1.1 200 OK").count(), 2, "{out}");
        assert!(out.contains("\r\n\r\n10HTTP/1.1"), "{out}");
        assert!(out.ends_with("\r\n\r\n3"), "{out}");
        assert_eq!(seen.lock().unwrap().0, [5, 5, 3]);
    }

    /// The low-water mark is raised while at least a mark's worth of body is still to come,
    /// and back at 1 for the body's tail, after it, and on a connection without a body.
    #[test]
    fn low_water_follows_the_body_left() {
        let seen = Seen::default();
        let (mut c, mut x) = (Conn::new(0), streaming(&seen));
        assert_eq!(c.low_water(), 1, "no body");
        let mark = STREAM_LOW_WATER as usize;
        let len = 2 * mark + 10;
        let head = format!("POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: {len}\r\n\r\n");
        assert!(feed(&mut c, &mut x, head.as_bytes(), 0).is_empty());
        // (bytes fed, mark after them): body left 2 marks + 10, mark + 10, exactly 10, none.
        let steps = [
            (0, STREAM_LOW_WATER),
            (mark, STREAM_LOW_WATER),
            (mark, 1),
            (10, 1),
        ];
        for (i, (n, want)) in steps.into_iter().enumerate() {
            if n > 0 {
                feed(&mut c, &mut x, &vec![b'x'; n], i as u64);
            }
            assert_eq!(c.low_water(), want, "step {i}");
        }
        assert!(seen.lock().unwrap().1, "answered");
    }

    /// EOF mid-body drops the sink without an answer (there is no request to answer).
    #[test]
    fn eof_mid_body_drops_the_sink() {
        let seen = Seen::default();
        let (mut c, mut x) = (Conn::new(0), streaming(&seen));
        let head = "POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n123";
        assert!(feed(&mut c, &mut x, head.as_bytes(), 0).is_empty());
        c.on_eof(&mut x);
        assert!(c.extra.is_none());
        assert!(!seen.lock().unwrap().1);
    }
}
