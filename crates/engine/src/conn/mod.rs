//! The sans-I/O connection state machine: bytes in, response bytes (or a file range) and
//! actions out. It never sees a socket: a backend's drive loop (`backend::drive`, on epoll or
//! io_uring) moves bytes between the kernel and it, so every rule here is unit-tested without
//! one. This file holds the connection's life, buffers and timers; `answer` parses and
//! answers the requests in its read buffer.
//!
//! Life of a connection (RFC 9112 §9): `Idle` (no request bytes; keep-alive timer) → `Head`
//! (bytes of a head; header timer from its first byte, never reset) → `Body` (head complete,
//! body incomplete; body idle timer) → back to `Idle`/`Head` after each response. A response
//! that closes (error, `Connection: close`, HTTP/1.0, drain, EOF) stops request processing;
//! once its bytes are out the backend shuts down the write side and the connection lingers
//! (`Linger`: read and discard until EOF or the linger timeout, RFC 9112 §9.6), then closes.

mod answer;
mod deferred;
mod h2;
mod stream;

pub(crate) use h2::fault_index as h2_fault_index;

pub(crate) use crate::ctx::{Ctx, TimeoutsMs};
use crate::metrics::TimeoutKind;
use crate::response::FileBody;
use answer::Chunked;
use std::fs::File;
use twelve_http::encode_error;
use twelve_http::h2::PREFACE;

/// Read space below which the read buffer grows before the next `recv`.
const MIN_READ_SPACE: usize = 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    Idle,
    Head,
    Body,
    Linger,
    Closed,
}

/// What the backend should send next.
#[derive(Debug)]
pub(crate) enum Output<'a> {
    Bytes(&'a [u8]),
    File(&'a File, u64, usize),
    Nothing,
}

/// What the backend should do once the output is flushed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Wait for readiness.
    Wait,
    /// Shut down the write side (`shutdown(SHUT_WR)`), then call [`Conn::write_shut`].
    ShutdownWrite,
    /// Close the socket.
    Close,
}

/// One connection's protocol state and buffers.
#[derive(Debug)]
pub(crate) struct Conn {
    /// Received bytes not yet answered; no capacity while idle (pooled).
    read: Vec<u8>,
    /// Response bytes; `write[sent..]` is unsent; no capacity while idle (pooled).
    write: Vec<u8>,
    sent: usize,
    file: Option<FileBody>,
    /// What only some connections need, boxed so that `Conn` stays small.
    extra: Option<Box<Extra>>,
    phase: Phase,
    /// Start of the phase's timer: first byte of the head, last body progress, idle since.
    since_ms: u64,
    /// Last time a send made progress (the send timer, while output is pending).
    send_since_ms: u64,
    /// When the current request's body began, moved later by the time its bytes earned at
    /// the minimum rate (`Timeouts::body_min_rate_per_s`): the whole-body deadline is this
    /// plus the body timeout. One field, so that `Conn` stays within its 128 bytes.
    body_credit_ms: u64,
    continue_sent: bool,
    /// At least one request was answered: idle time is keep-alive time from now on.
    served: bool,
    /// A closing response is queued: no more requests are processed.
    closing: bool,
    /// The close must linger (see [`Conn::next`]): the close answers bad input or a timeout,
    /// or input followed the last request answered.
    linger: bool,
    eof: bool,
    /// Reading stopped (backpressure) before the socket reported it was drained.
    pub(crate) unread: bool,
    /// The deadline of this connection's entry in the timer wheel (0: none).
    pub(crate) timer_at: u64,
    /// A TLS handshake is under way: the time to finish it is a request head's (a client
    /// that stalls mid-handshake is a header timeout, closed silently: no request to answer).
    handshaking: bool,
}

/// A connection's state beyond `Conn`'s own fields. Always boxed, so the HTTP/2 variant's
/// size costs only the connections that hold one; a chunked upload's box is the larger for
/// it, which is cheaper than a second allocation on every HTTP/2 connection.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
enum Extra {
    /// An HTTP/1.1 chunked request body being decoded.
    Chunked(Chunked),
    /// The TLS handshake agreed on ALPN `h2`: the connection becomes HTTP/2 on its next read.
    AlpnH2,
    /// The connection speaks HTTP/2.
    H2(h2::H2),
    /// HTTP/1.1 answers still to come from async handlers (`deferred`). A chunked or streamed
    /// body that arrives behind them waits in the read buffer until they are sent.
    Deferred(deferred::Deferred),
    /// An HTTP/1.1 `Content-Length` body streamed to its route's sink (`stream.rs`).
    Stream(stream::Stream),
}

impl Conn {
    pub(crate) fn new(now_ms: u64) -> Self {
        Self {
            read: Vec::new(),
            write: Vec::new(),
            sent: 0,
            file: None,
            extra: None,
            phase: Phase::Idle,
            since_ms: now_ms,
            send_since_ms: now_ms,
            body_credit_ms: now_ms,
            continue_sent: false,
            served: false,
            closing: false,
            linger: false,
            eof: false,
            unread: false,
            timer_at: 0,
            handshaking: false,
        }
    }

    /// A connection that begins with a TLS handshake (see `handshaking`).
    pub(crate) fn new_tls(now_ms: u64) -> Self {
        Self {
            handshaking: true,
            ..Self::new(now_ms)
        }
    }

    /// A connection on a listener that speaks HTTP/2 only (h2c with prior knowledge, RFC 9113
    /// §3.3): the server preface is queued at once, and anything but the client's is refused.
    pub(crate) fn new_h2c(now_ms: u64, ctx: &mut Ctx) -> Self {
        let mut conn = Self::new(now_ms);
        conn.start_h2(ctx);
        conn
    }

    /// The TLS handshake completed (`alpn_h2`: with ALPN `h2`): idle time from now on is the
    /// first request's wait.
    pub(crate) fn handshake_done(&mut self, now_ms: u64, alpn_h2: bool) {
        if alpn_h2 && self.extra.is_none() {
            self.extra = Some(Box::new(Extra::AlpnH2));
        }
        if self.handshaking {
            self.handshaking = false;
            if self.phase == Phase::Idle {
                self.since_ms = now_ms;
            }
        }
    }

    pub(crate) fn is_handshaking(&self) -> bool {
        self.handshaking
    }

    pub(crate) fn phase(&self) -> Phase {
        self.phase
    }

    /// Idle with nothing to send: may be closed at once when the server drains.
    pub(crate) fn is_idle(&self) -> bool {
        self.phase == Phase::Idle && !self.has_output() && !self.waiting()
    }

    /// Nothing for a drive past its reading to do but wait: idle, no bytes held, nothing to
    /// send, not closing, reading not held back. The rest of such a drive makes no syscall and
    /// stops with `Verdict::Open` (the epoll batch's fast path).
    pub(crate) fn settled(&self) -> bool {
        self.phase == Phase::Idle
            && self.read.is_empty()
            && !self.has_output()
            && !self.closing
            && !self.unread
            && !self.waiting()
    }

    fn has_output(&self) -> bool {
        self.sent < self.write.len() || self.file.is_some()
    }

    fn pending(&self) -> usize {
        self.write.len() - self.sent
    }

    /// The buffer to `recv` into (bytes go to its spare capacity), or `None` when the
    /// connection must not read now (closed, EOF seen, or backpressure).
    pub(crate) fn read_buf(&mut self, ctx: &mut Ctx) -> Option<&mut Vec<u8>> {
        self.prepare_read(ctx).then_some(&mut self.read)
    }

    /// Whether the connection reads now; if so, its read buffer ([`Conn::read_vec`]) has at
    /// least [`MIN_READ_SPACE`] of spare capacity. `false` when closed, at EOF, or held back
    /// (backpressure: then [`Conn::unread`] is set).
    #[inline]
    pub(crate) fn prepare_read(&mut self, ctx: &mut Ctx) -> bool {
        if self.phase == Phase::Closed || self.eof {
            return false;
        }
        if self.phase != Phase::Linger
            && (self.closing || self.file.is_some() || self.pending() > ctx.high_water)
        {
            self.unread = true;
            return false;
        }
        if self.read.capacity() == 0 {
            self.read = ctx.pool.take();
        }
        if self.read.capacity() - self.read.len() < MIN_READ_SPACE {
            let grow = self.read.capacity().max(4096);
            self.read.reserve(grow);
        }
        true
    }

    /// The read buffer, after [`Conn::prepare_read`] said yes: bytes go to its spare capacity,
    /// then [`Conn::on_read`].
    #[inline]
    pub(crate) fn read_vec(&mut self) -> &mut Vec<u8> {
        &mut self.read
    }

    /// Takes back the read buffer a batched `recv` took out of [`Conn::read_vec`], the bytes
    /// received appended; it must come back before any other call on this connection.
    pub(crate) fn restore_read(&mut self, buf: Vec<u8>) {
        self.read = buf;
    }

    /// Lends the output buffer and the index of its first unsent byte to a batched `send`,
    /// if bytes (not a file range) are due; it must come back through
    /// [`Conn::restore_write`] before any other call on this connection.
    pub(crate) fn lend_write(&mut self) -> Option<(Vec<u8>, usize)> {
        (self.sent < self.write.len()).then(|| (std::mem::take(&mut self.write), self.sent))
    }

    /// Takes back the buffer of [`Conn::lend_write`], unchanged.
    pub(crate) fn restore_write(&mut self, buf: Vec<u8>) {
        self.write = buf;
    }

    /// The socket had no more bytes (EAGAIN): give an empty read buffer back to the pool.
    pub(crate) fn drained(&mut self, ctx: &mut Ctx) {
        self.unread = false;
        if self.read.is_empty() && self.read.capacity() > 0 {
            ctx.pool.give(std::mem::take(&mut self.read));
        }
    }

    /// `n` bytes were appended to the read buffer: parse and answer what is complete.
    pub(crate) fn on_read(&mut self, n: usize, now_ms: u64, ctx: &mut Ctx) {
        ctx.metrics().bytes_in.add(n as u64);
        if self.phase == Phase::Linger {
            self.read.clear();
            return;
        }
        let alpn_h2 = matches!(self.extra.as_deref(), Some(Extra::AlpnH2));
        if !self.is_h2() && !self.served && (alpn_h2 || self.h2c_preface()) {
            self.start_h2(ctx);
        }
        if self.is_h2() {
            self.process_h2(now_ms, ctx);
            return;
        }
        if self.awaiting_preface() {
            return;
        }
        match self.phase {
            Phase::Linger => {}
            Phase::Idle if n > 0 => {
                self.phase = Phase::Head;
                self.since_ms = now_ms;
            }
            Phase::Body => {
                self.since_ms = now_ms;
                let rate = ctx.timeouts.body_min_rate_per_s;
                if rate > 0 {
                    // Rounded up: a fraction of a millisecond is the client's.
                    let earned = (n as u64).saturating_mul(1000).div_ceil(rate);
                    self.body_credit_ms = self.body_credit_ms.saturating_add(earned);
                }
            }
            _ => {}
        }
        self.process(now_ms, ctx);
    }

    /// The read buffer holds only the start of what may be an HTTP/2 client preface: wait
    /// for the rest of it before HTTP/1.1 parses anything.
    fn awaiting_preface(&self) -> bool {
        !self.served && self.read.len() < PREFACE.len() && PREFACE.starts_with(&self.read)
    }

    /// The read buffer holds the whole HTTP/2 client preface (RFC 9113 §3.4): a client with
    /// prior knowledge on a listener that also speaks HTTP/1.1.
    fn h2c_preface(&self) -> bool {
        self.read.starts_with(PREFACE)
    }

    /// The peer shut down its write side (recv returned 0).
    pub(crate) fn on_eof(&mut self, ctx: &mut Ctx) {
        self.eof = true;
        self.unread = false;
        if self.phase == Phase::Linger {
            self.phase = Phase::Closed;
            return;
        }
        // Whatever was complete has been answered; a partial request can never complete.
        self.closing = true;
        self.drop_input(ctx);
    }

    fn drop_input(&mut self, ctx: &mut Ctx) {
        self.read.clear();
        if matches!(
            self.extra.as_deref(),
            Some(Extra::Chunked(_) | Extra::Stream(_))
        ) {
            self.extra = None;
        }
        if self.read.capacity() > 0 {
            ctx.pool.give(std::mem::take(&mut self.read));
        }
    }

    /// What to send next.
    pub(crate) fn output(&self) -> Output<'_> {
        if self.sent < self.write.len() {
            Output::Bytes(&self.write[self.sent..])
        } else if let Some(f) = &self.file {
            Output::File(
                &f.file,
                f.offset,
                usize::try_from(f.len).unwrap_or(usize::MAX),
            )
        } else {
            Output::Nothing
        }
    }

    /// `n` bytes of [`Output::Bytes`] were sent.
    pub(crate) fn on_sent(&mut self, n: usize, now_ms: u64, ctx: &mut Ctx) {
        ctx.metrics().bytes_out.add(n as u64);
        self.send_since_ms = now_ms;
        self.sent += n;
        if self.sent == self.write.len() {
            self.sent = 0;
            self.write.clear();
            ctx.pool.give(std::mem::take(&mut self.write));
        }
    }

    /// `n` bytes of [`Output::File`] were sent.
    pub(crate) fn on_file_sent(&mut self, n: usize, now_ms: u64, ctx: &mut Ctx) {
        ctx.metrics().bytes_out.add(n as u64);
        self.send_since_ms = now_ms;
        if let Some(f) = &mut self.file {
            f.offset += n as u64;
            f.len -= (n as u64).min(f.len);
            if f.len == 0 {
                self.file = None;
            }
        }
    }

    /// The file ended before the promised length (truncated while being sent): the response
    /// cannot be completed, so the connection is closed.
    pub(crate) fn file_failed(&mut self) {
        self.file = None;
        self.phase = Phase::Closed;
    }

    /// Output is fully sent: answer requests held back by backpressure or a file body.
    /// Returns `true` if that produced output.
    pub(crate) fn after_flush(&mut self, now_ms: u64, ctx: &mut Ctx) -> bool {
        if self.is_h2() {
            if self.has_output() || self.closing || !self.h2_has_work(ctx.draining) {
                return false;
            }
            self.process_h2(now_ms, ctx);
            return self.has_output();
        }
        if !self.has_output() && self.waiting_or_done() && self.flush_ready(now_ms, ctx) {
            return true;
        }
        if self.has_output() || self.closing || self.read.is_empty() || self.awaiting_preface() {
            return false;
        }
        self.process(now_ms, ctx);
        self.has_output()
    }

    /// What to do once output is flushed (call when [`Conn::output`] is `Nothing`).
    ///
    /// Lingering (RFC 9112 §9.6: shut the write side, read and discard until EOF) keeps a
    /// client that is still sending from getting a reset, which could destroy the response
    /// before it is read. It costs a `shutdown`, a wake-up and a `recv` for the client's FIN,
    /// so, as nginx does (`lingering_close on`: only when more input may follow), a close
    /// after a request that was consumed whole, with nothing buffered behind it and the socket
    /// read dry, is a plain close: the kernel sends the response, then FIN (measured on
    /// connection-per-request json: docs/ARCHITECTURE.md, "Close or keep").
    pub(crate) fn next(&self) -> Next {
        match self.phase {
            Phase::Closed => Next::Close,
            Phase::Linger => Next::Wait,
            // The client is gone (EOF) while answers are still to come: close, which drops
            // their futures, as a proxy drops the upstream request of a client that left.
            _ if self.waiting() && self.eof => Next::Close,
            // Otherwise they hold the connection open, whoever asked to close it.
            _ if self.waiting() => Next::Wait,
            _ if self.closing && self.eof => Next::Close,
            // (A close during a body is always a rejection or a timeout, which set `linger`.)
            _ if self.closing && !self.linger && !self.unread => Next::Close,
            _ if self.closing => Next::ShutdownWrite,
            _ => Next::Wait,
        }
    }

    /// The backend shut the write side down: linger, reading and discarding.
    pub(crate) fn write_shut(&mut self, now_ms: u64, ctx: &mut Ctx) {
        self.drop_input(ctx);
        self.phase = if self.eof {
            Phase::Closed
        } else {
            Phase::Linger
        };
        self.since_ms = now_ms;
    }

    /// A send of the output (or of what a layer below made of it) was submitted at `now_ms`:
    /// the send timeout counts from here, as from each send's progress.
    #[inline]
    pub(crate) fn send_started(&mut self, now_ms: u64) {
        self.send_since_ms = now_ms;
    }

    /// The send timeout's deadline: no progress since the last send's.
    #[inline]
    pub(crate) fn send_deadline(&self, t: &TimeoutsMs) -> (u64, TimeoutKind) {
        (self.send_since_ms.saturating_add(t.send), TimeoutKind::Send)
    }

    /// When and why this connection's timer fires next; `None` once closed.
    pub(crate) fn deadline(&self, t: &TimeoutsMs) -> Option<(u64, TimeoutKind)> {
        if self.phase == Phase::Closed {
            return None;
        }
        if self.has_output() || self.h2_blocked() {
            return Some(self.send_deadline(t));
        }
        if self.waiting() {
            // The handlers' deadlines bound the wait (`Config::handler_timeout`).
            return None;
        }
        let (d, kind) = match self.phase {
            // A connection that never sent a request gets no more time than a request head
            // would (nginx's client_header_timeout does the same): idle floods cost less.
            // Still a silent close: there is no request to answer with 408.
            Phase::Idle if self.handshaking => (t.header, TimeoutKind::Header),
            Phase::Idle if !self.served => (t.keep_alive.min(t.header), TimeoutKind::KeepAlive),
            Phase::Idle => (t.keep_alive, TimeoutKind::KeepAlive),
            Phase::Head => (t.header, TimeoutKind::Header),
            Phase::Body => return Some(self.body_deadline(t)),
            Phase::Linger | Phase::Closed => (t.linger, TimeoutKind::Linger),
        };
        Some((self.since_ms.saturating_add(d), kind))
    }

    /// The deadline passed: 408 for an unfinished request (then close), silent close for an
    /// idle connection, a stalled reader, or the end of lingering.
    pub(crate) fn on_timeout(&mut self, kind: TimeoutKind, ctx: &mut Ctx) {
        ctx.metrics().timeout(kind);
        match kind {
            // An HTTP/2 connection has no 408 to send (RFC 9113 has no response without a
            // request): it closes, as an idle one does.
            TimeoutKind::Header | TimeoutKind::Body | TimeoutKind::BodyRate
                if !self.closing && !self.handshaking && !self.is_h2() =>
            {
                if self.write.capacity() == 0 {
                    self.write = ctx.pool.take();
                }
                encode_error(&mut self.write, 408);
                ctx.metrics().response(408);
                self.closing = true;
                self.linger = true;
                self.drop_input(ctx);
            }
            _ => self.phase = Phase::Closed,
        }
    }

    /// The body's deadline: its idle timeout, or the whole-body deadline of the minimum rate
    /// (`body_idle` plus one second per `body_min_rate_per_s` bytes received), whichever is
    /// first.
    fn body_deadline(&self, t: &TimeoutsMs) -> (u64, TimeoutKind) {
        let idle = self.since_ms.saturating_add(t.body);
        if t.body_min_rate_per_s == 0 {
            return (idle, TimeoutKind::Body);
        }
        let whole = self.body_credit_ms.saturating_add(t.body);
        if whole < idle {
            (whole, TimeoutKind::BodyRate)
        } else {
            (idle, TimeoutKind::Body)
        }
    }

    /// Begins the server's drain: an idle connection closes now; the others close after
    /// their current response (every response from now on says `Connection: close`).
    pub(crate) fn start_drain(&mut self) {
        if self.drain_h2() {
            return;
        }
        if self.is_idle() {
            self.phase = Phase::Closed;
        }
    }

    /// Gives the buffers back to the pool (the connection is being closed).
    pub(crate) fn release(&mut self, ctx: &mut Ctx) {
        self.cancel_waiting(ctx);
        ctx.pool.give(std::mem::take(&mut self.read));
        ctx.pool.give(std::mem::take(&mut self.write));
    }

    /// Bytes of heap this connection holds now (buffer capacities).
    #[cfg(test)]
    pub(crate) fn heap_bytes(&self) -> usize {
        self.read.capacity() + self.write.capacity()
    }
}

#[cfg(test)]
pub(crate) mod tests;
