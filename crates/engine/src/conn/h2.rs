//! HTTP/2 on a connection: the codec's steps (`twelve_http::h2::ServerConn`) turned into
//! handler calls, through the same `Response` and router HTTP/1.1 uses, and response bodies
//! that wait for the peer's window sent as it opens. The connection's buffers, timers and
//! life are `Conn`'s, as for HTTP/1.1.
//!
//! An async route's future runs as a task on the worker's runtime (`crate::rt`), keyed to its
//! stream ([`Waiting`]); streams are independent (RFC 9113 §5), so each answer goes out when
//! it is ready, in whatever order. [`Conn::fill`] (`deferred.rs`) hands a ready answer to its
//! stream, and the next turn of [`Conn::process_h2`] writes it, as a sync answer is written,
//! once the output buffer is back (an io_uring send may hold it). A stream the peer resets,
//! or a connection that closes, drops its future; while a stream waits, the connection has no
//! timer of its own (the handler's deadline stands in) and a drain waits for it.

use super::{Conn, Ctx, Extra, Phase};
use crate::metrics::BatchCounts;
use crate::reply::Reply;
use crate::response::{FileBody, H2Out, Response};
use std::collections::VecDeque;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use twelve_http::h2::{ErrorCode, Fault, Fields, ServerConfig, ServerConn, Step};
use twelve_http::{Header, Limits};

/// Header array size for an HTTP/2 request: as HTTP/1.1's (`answer::MAX_HEADERS`).
const MAX_HEADERS: usize = 128;

/// The most octets of a file read for one DATA run: a window's worth would be up to 2 GiB.
const FILE_CHUNK: usize = 64 * 1024;

/// The codec's limits from the server's HTTP limits.
fn config(limits: &Limits) -> ServerConfig {
    let list = u32::try_from(limits.head_bytes).unwrap_or(u32::MAX);
    ServerConfig {
        max_header_list: list,
        max_header_block: limits.head_bytes.saturating_mul(2),
        max_body: limits.body_bytes,
        ..ServerConfig::default()
    }
}

/// A response body still to send on `stream`.
#[derive(Debug)]
struct Pending {
    stream: u32,
    body: Body,
}

#[derive(Debug)]
enum Body {
    Bytes { data: Vec<u8>, at: usize },
    File(FileBody),
}

/// A stream whose answer comes later: its task on the worker's runtime, and the answer once
/// the task made it.
#[derive(Debug)]
struct Waiting {
    stream: u32,
    task: u64,
    head_only: bool,
    reply: Option<Reply>,
}

/// A connection's HTTP/2 state beside `Conn`'s.
#[derive(Debug)]
pub(crate) struct H2 {
    codec: ServerConn,
    fields: Fields,
    body: Vec<u8>,
    pending: VecDeque<Pending>,
    /// Streams answered by async routes, oldest first (no capacity until the first).
    waiting: Vec<Waiting>,
}

impl H2 {
    /// A connection whose client preface comes next; the server's preface is written to `out`.
    fn new(ctx: &Ctx, out: &mut Vec<u8>) -> Self {
        let mut codec = ServerConn::new(config(&ctx.limits));
        codec.start(out);
        Self {
            codec,
            fields: Fields::default(),
            body: Vec::new(),
            pending: VecDeque::new(),
            waiting: Vec::new(),
        }
    }

    /// Drops the tasks of waiting streams the codec no longer has open: the peer reset them
    /// (RST_STREAM), or a connection error ended them all. Returns how many.
    fn cancel_gone(&mut self) -> usize {
        if self.waiting.is_empty() {
            return 0;
        }
        let before = self.waiting.len();
        let codec = &self.codec;
        let rt = crate::rt::existing();
        self.waiting.retain(|w| {
            let open = codec.is_open(w.stream);
            if !open
                && w.reply.is_none()
                && let Some(rt) = &rt
            {
                rt.cancel(w.task);
            }
            open
        });
        before - self.waiting.len()
    }

    /// Streams wait for async answers.
    #[inline]
    pub(super) fn is_waiting(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// Drops every waiting stream's task (the connection closes).
    pub(super) fn cancel_all(&mut self) {
        let rt = crate::rt::existing();
        for w in self.waiting.drain(..) {
            if w.reply.is_none()
                && let Some(rt) = &rt
            {
                rt.cancel(w.task);
            }
        }
    }

    /// Whether some waiting stream's answer is ready to be written.
    fn has_ready(&self) -> bool {
        self.waiting.iter().any(|w| w.reply.is_some())
    }

    /// The answer of task `task` is ready: kept for its stream until the next
    /// [`Conn::process_h2`] writes it. `false` if no stream waits for that task.
    pub(super) fn fill(&mut self, task: u64, reply: Reply) -> bool {
        match self.waiting.iter_mut().find(|w| w.task == task) {
            Some(w) => {
                w.reply = Some(reply);
                true
            }
            None => false,
        }
    }

    /// Writes the ready answers, oldest first, until the output passes `high_water`: each
    /// stream's head and what the windows allow of its body (the rest waits in `pending`).
    fn write_ready(&mut self, out: &mut Vec<u8>, ctx: &mut Ctx) -> bool {
        let mut wrote = false;
        let mut i = 0;
        while i < self.waiting.len() && out.len() <= ctx.high_water {
            if self.waiting[i].reply.is_none() {
                i += 1;
                continue;
            }
            let w = self.waiting.remove(i);
            let Some(reply) = w.reply else { continue };
            if !self.codec.is_open(w.stream) {
                continue;
            }
            let mut held = Vec::new();
            let mut no_file = None;
            let h2 = H2Out {
                codec: &mut self.codec,
                stream: w.stream,
                held: &mut held,
            };
            let mut res =
                Response::from_parts_h2(out, &mut ctx.scratch, &mut no_file, w.head_only, h2);
            // A stream ends alone: `Reply::close` (a failed future) writes no field on
            // HTTP/2 and does not end the connection, whose other streams are not at fault.
            reply.write(&mut res);
            let status = res.status().unwrap_or(500);
            ctx.metrics().response(status);
            reply.recycle();
            if !held.is_empty() {
                self.pending.push_back(Pending {
                    stream: w.stream,
                    body: Body::Bytes { data: held, at: 0 },
                });
            }
            wrote = true;
        }
        wrote
    }

    /// Sends what the windows allow of the bodies waiting for them, in the order they were
    /// answered, until the output passes `high_water`.
    fn flush_pending(&mut self, out: &mut Vec<u8>, high_water: usize, file_buf: &mut Vec<u8>) {
        let mut i = 0;
        while i < self.pending.len() && out.len() <= high_water {
            let p = &mut self.pending[i];
            if !self.codec.is_open(p.stream) {
                // Reset by the peer meanwhile.
                self.pending.remove(i);
                continue;
            }
            let done = match &mut p.body {
                Body::Bytes { data, at } => {
                    *at += self.codec.data(out, p.stream, &data[*at..], true);
                    *at == data.len()
                }
                Body::File(f) => {
                    let room = self.codec.send_capacity(p.stream).min(FILE_CHUNK);
                    let want = usize::try_from(f.len).unwrap_or(usize::MAX).min(room);
                    if want == 0 {
                        false
                    } else {
                        file_buf.resize(want, 0);
                        match f.file.read_at(file_buf, f.offset) {
                            Ok(n) if n > 0 => {
                                let last = n as u64 == f.len;
                                let sent = self.codec.data(out, p.stream, &file_buf[..n], last);
                                f.offset += sent as u64;
                                f.len -= sent as u64;
                                f.len == 0
                            }
                            _ => {
                                // Truncated or unreadable mid-response: the stream fails alone.
                                self.codec.reset(out, p.stream, ErrorCode::InternalError);
                                true
                            }
                        }
                    }
                }
            };
            if done {
                self.pending.remove(i);
            } else {
                i += 1;
            }
        }
    }
}

impl Conn {
    /// Makes this connection HTTP/2 (a TLS session that agreed on `h2`, a listener for h2c,
    /// or the client preface on a plain listener): the server preface is queued.
    pub(crate) fn start_h2(&mut self, ctx: &mut Ctx) {
        if self.is_h2() {
            return;
        }
        if self.write.capacity() == 0 {
            self.write = ctx.pool.take();
        }
        self.extra = Some(Box::new(Extra::H2(H2::new(ctx, &mut self.write))));
        ctx.metrics().h2_conns.inc();
    }

    pub(crate) fn is_h2(&self) -> bool {
        self.h2().is_some()
    }

    fn h2(&self) -> Option<&H2> {
        match self.extra.as_deref() {
            Some(Extra::H2(h2)) => Some(h2),
            _ => None,
        }
    }

    /// Whether a turn of [`Conn::process_h2`] has anything to do after the output was sent:
    /// frames to read, bodies waiting for window, answers ready, or a drain to announce.
    pub(crate) fn h2_has_work(&self, draining: bool) -> bool {
        self.h2().is_some_and(|h| {
            !self.read.is_empty()
                || !h.pending.is_empty()
                || (draining && !h.codec.is_draining())
                || h.has_ready()
        })
    }

    /// Some response waits for the peer's window: the send timer runs.
    pub(crate) fn h2_blocked(&self) -> bool {
        self.h2()
            .is_some_and(|h| !h.pending.is_empty() && !self.has_output())
    }

    /// Handles the frames in the read buffer, answering each complete request, then sends
    /// what waits for window.
    pub(super) fn process_h2(&mut self, now_ms: u64, ctx: &mut Ctx) {
        let Some(mut extra) = self.extra.take() else {
            return;
        };
        let Extra::H2(h2) = &mut *extra else {
            self.extra = Some(extra);
            return;
        };
        if self.write.capacity() == 0 {
            self.write = ctx.pool.take();
        }
        if ctx.draining && !h2.codec.is_draining() {
            h2.codec.shutdown(&mut self.write);
        }
        let read = std::mem::take(&mut self.read);
        let metrics = Arc::clone(&ctx.all_metrics);
        let mut counts = BatchCounts::new(metrics.worker(ctx.me));
        let mut pos = 0;
        while !self.closing && self.pending() <= ctx.high_water {
            let step = h2
                .codec
                .poll(&read[pos..], &mut self.write, &mut h2.fields, &mut h2.body);
            match step {
                Step::Partial => break,
                Step::Handled(n) => pos += n,
                Step::Request { used, stream } => {
                    pos += used;
                    self.served = true;
                    answer(h2, stream, &mut self.write, now_ms, ctx, &mut counts);
                }
                Step::Refused { used, status } => {
                    pos += used;
                    counts.request();
                    counts.response(status);
                }
                Step::StreamError { used, fault } => {
                    pos += used;
                    ctx.metrics().h2_fault(fault);
                }
                Step::ConnectionError(fault) => {
                    ctx.metrics().h2_fault(fault);
                    // GOAWAY is queued; what follows it is not read (RFC 9113 §5.4.1).
                    self.closing = true;
                    self.linger = true;
                    pos = read.len();
                }
            }
        }
        drop(counts);
        self.read = read;
        self.read.drain(..pos);
        h2.cancel_gone();
        if h2.write_ready(&mut self.write, ctx) {
            // Keep-alive time counts from the last answer, as after a sync one.
            self.since_ms = now_ms;
        }
        let mut file_buf = std::mem::take(&mut ctx.scratch.body);
        h2.flush_pending(&mut self.write, ctx.high_water, &mut file_buf);
        file_buf.clear();
        ctx.scratch.body = file_buf;
        if h2.codec.is_done() {
            // The peer may still send frames (WINDOW_UPDATE, an ACK) after the last GOAWAY:
            // shut the write side and read them to EOF, so that the close sends no reset.
            self.closing = true;
            self.linger = true;
        }
        if self.write.is_empty() && self.write.capacity() > 0 {
            // Nothing to send: an idle connection holds no buffer.
            ctx.pool.give(std::mem::take(&mut self.write));
        }
        self.phase = if !self.read.is_empty() {
            if self.phase != Phase::Head {
                self.since_ms = now_ms;
            }
            Phase::Head
        } else if h2.waiting.is_empty()
            && !h2.codec.is_idle()
            && h2.pending.is_empty()
            && !h2.codec.is_blocked()
        {
            // A stream's body is on its way.
            if self.phase != Phase::Body {
                self.since_ms = now_ms;
                self.body_credit_ms = now_ms;
            }
            Phase::Body
        } else {
            if self.phase != Phase::Idle {
                self.since_ms = now_ms;
            }
            Phase::Idle
        };
        self.extra = Some(extra);
    }

    /// The server drains: an HTTP/2 connection is told with GOAWAY (and a PING, see
    /// `ServerConn::shutdown`) and closes once its open streams are answered.
    pub(crate) fn drain_h2(&mut self) -> bool {
        let Some(Extra::H2(h2)) = self.extra.as_deref_mut() else {
            return false;
        };
        h2.codec.shutdown(&mut self.write);
        if h2.codec.is_done() && h2.pending.is_empty() {
            self.closing = true;
            self.linger = true;
        }
        true
    }
}

/// Runs the handler for the request on `stream` and writes its response; a body the windows
/// do not take yet waits in `h2.pending`. An async route's future becomes a task for the
/// stream ([`Waiting`]), answered when it is ready.
fn answer(
    h2: &mut H2,
    stream: u32,
    write: &mut Vec<u8>,
    now_ms: u64,
    ctx: &mut Ctx,
    counts: &mut BatchCounts<'_>,
) {
    counts.request();
    ctx.metrics().h2_requests.inc();
    let mut headers = [Header::EMPTY; MAX_HEADERS];
    let Some(req) = h2.fields.request(&mut headers, h2.body.len() as u64) else {
        let status = if h2.fields.len() > MAX_HEADERS {
            431
        } else {
            501
        };
        h2.codec.respond_error(write, stream, status);
        counts.response(status);
        return;
    };
    let mut file = None;
    let mut held = Vec::new();
    let out = H2Out {
        codec: &mut h2.codec,
        stream,
        held: &mut held,
    };
    let mut res = Response::for_h2(write, &mut ctx.scratch, &mut file, &req, out);
    let router = &ctx.router;
    let body = &h2.body;
    // As for HTTP/1.1: a panicking handler costs its request, not the worker.
    let later = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        router.dispatch(&req, body, &mut res)
    }))
    .unwrap_or(None);
    if let Some(pending) = later {
        h2.body.clear();
        let deadline = match ctx.handler_timeout_ms {
            0 => 0,
            t => now_ms.saturating_add(t).max(1),
        };
        let task = crate::rt::current().spawn_request(pending, ctx.conn_token, deadline);
        h2.waiting.push(Waiting {
            stream,
            task,
            head_only: req.method == twelve_http::Method::Head,
            reply: None,
        });
        return;
    }
    if res.status().is_none() {
        res.send(
            500,
            "text/plain; charset=utf-8",
            &[],
            b"500 handler wrote no response\n",
        );
    }
    counts.response(res.status().unwrap_or(500));
    if !held.is_empty() {
        h2.pending.push_back(Pending {
            stream,
            body: Body::Bytes { data: held, at: 0 },
        });
    }
    if let Some(f) = file {
        h2.pending.push_back(Pending {
            stream,
            body: Body::File(f),
        });
    }
    h2.body.clear();
}

/// Counts a fault by kind.
pub(crate) fn fault_index(f: Fault) -> usize {
    Fault::NAMES
        .iter()
        .position(|n| *n == f.name())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::super::Next;
    use super::super::tests::{ctx_with, feed};
    use super::*;
    use crate::metrics::TimeoutKind;
    use crate::reply::Reply;
    use crate::router::Router;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use twelve_http::Request;
    use twelve_http::h2::hpack::{Encoder, Index};
    use twelve_http::h2::{Frame, PREFACE, encode, encode_settings};

    /// Counts the drops of `/wait`'s futures, which never answer.
    struct OnDrop(Arc<AtomicUsize>);

    impl Drop for OnDrop {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn ctx(dropped: &Arc<AtomicUsize>) -> Ctx {
        let dropped = Arc::clone(dropped);
        let router = Router::new().get_async("/wait", move |_: &Request<'_, '_>, _: &[u8]| {
            let guard = OnDrop(Arc::clone(&dropped));
            async move {
                std::future::pending::<()>().await;
                drop(guard);
                Reply::text(200, "never")
            }
        });
        ctx_with(Limits::default(), router)
    }

    /// The client preface, SETTINGS and a GET of `/wait` on each of `streams`.
    fn requests(streams: &[u32]) -> Vec<u8> {
        let mut b = PREFACE.to_vec();
        encode_settings(&mut b, false, &[]);
        let mut enc = Encoder::new();
        for &stream in streams {
            let mut block = Vec::new();
            enc.begin_block(&mut block);
            for (n, v) in [
                (":method", "GET"),
                (":scheme", "http"),
                (":authority", "a"),
                (":path", "/wait"),
            ] {
                enc.field(&mut block, n.as_bytes(), v.as_bytes(), Index::No);
            }
            let f = Frame::Headers {
                stream,
                end_stream: true,
                end_headers: true,
                priority: None,
                padding: None,
                block: &block,
            };
            encode(&f, &mut b);
        }
        b
    }

    #[test]
    fn a_waiting_stream_holds_the_connection_without_a_timer_until_reset() {
        let dropped = Arc::new(AtomicUsize::new(0));
        let mut ctx = ctx(&dropped);
        let mut c = Conn::new_h2c(0, &mut ctx);
        feed(&mut c, &mut ctx, &requests(&[1, 3]), 0);
        assert!(c.waiting() && !c.is_idle() && !c.settled());
        // No body, header or keep-alive timer: the handler's deadline bounds the wait.
        assert_eq!(c.deadline(&ctx.timeouts), None);
        assert_eq!(c.next(), Next::Wait);
        let mut rst = Vec::new();
        encode(
            &Frame::RstStream {
                stream: 1,
                code: ErrorCode::Cancel.code(),
            },
            &mut rst,
        );
        feed(&mut c, &mut ctx, &rst, 5);
        assert_eq!(
            dropped.load(Ordering::SeqCst),
            1,
            "the reset stream's future"
        );
        assert!(c.waiting(), "stream 3 still waits");
        c.release(&mut ctx);
        assert_eq!(
            dropped.load(Ordering::SeqCst),
            2,
            "the close drops the rest"
        );
        assert!(!c.waiting());
    }

    #[test]
    fn a_ready_answer_goes_out_on_its_stream_and_the_timers_return() {
        let dropped = Arc::new(AtomicUsize::new(0));
        let mut ctx = ctx(&dropped);
        let mut c = Conn::new_h2c(0, &mut ctx);
        feed(&mut c, &mut ctx, &requests(&[1]), 0);
        let Some(Extra::H2(h2)) = c.extra.as_deref() else {
            panic!("an HTTP/2 connection");
        };
        let task = h2.waiting[0].task;
        // What `backend::later` does with a ready answer: fill, then run the connection.
        assert!(c.fill(task, Reply::text(200, "done"), &mut ctx));
        assert!(
            !c.fill(task + 1, Reply::text(200, "other"), &mut ctx),
            "no such task"
        );
        let mut out = Vec::new();
        super::super::tests::flush(&mut c, &mut ctx, 7, &mut out);
        assert!(out.windows(4).any(|w| w == b"done"), "the body went out");
        assert!(!c.waiting());
        let (at, kind) = c.deadline(&ctx.timeouts).expect("a timer again");
        assert_eq!(
            (at, kind),
            (7 + ctx.timeouts.keep_alive, TimeoutKind::KeepAlive)
        );
        c.release(&mut ctx);
    }
}
