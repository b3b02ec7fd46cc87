//! HTTP/2 on a connection: the codec's steps (`twelve_http::h2::ServerConn`) turned into
//! handler calls, through the same `Response` and router HTTP/1.1 uses, and response bodies
//! that wait for the peer's window sent as it opens. The connection's buffers, timers and
//! life are `Conn`'s, as for HTTP/1.1.

use super::{Conn, Ctx, Extra, Phase};
use crate::metrics::BatchCounts;
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

/// A connection's HTTP/2 state beside `Conn`'s.
#[derive(Debug)]
pub(crate) struct H2 {
    codec: ServerConn,
    fields: Fields,
    body: Vec<u8>,
    pending: VecDeque<Pending>,
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
        }
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
    /// frames to read, bodies waiting for window, or a drain to announce.
    pub(crate) fn h2_has_work(&self, draining: bool) -> bool {
        self.h2().is_some_and(|h| {
            !self.read.is_empty() || !h.pending.is_empty() || (draining && !h.codec.is_draining())
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
                    answer(h2, stream, &mut self.write, ctx, &mut counts);
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
        } else if !h2.codec.is_idle() && h2.pending.is_empty() && !h2.codec.is_blocked() {
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
/// do not take yet waits in `h2.pending`.
fn answer(
    h2: &mut H2,
    stream: u32,
    write: &mut Vec<u8>,
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
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        router.dispatch(&req, body, &mut res)
    }));
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
