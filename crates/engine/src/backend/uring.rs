//! The io_uring backend: one worker's event loop driven by completions instead of readiness.
//!
//! Each listener has a multishot accept armed; each connection has a multishot receive armed
//! into the worker's provided-buffer ring ([`Ring`]), so an idle keep-alive
//! connection holds no buffer of its own. A turn of the loop is one `io_uring_enter`: it
//! submits every send and re-arm queued since the last turn and waits (until the timer wheel's
//! next deadline) for completions. The completions of a turn are applied first (received bytes
//! go straight into the connection's read buffer and are answered), then every connection
//! touched runs one [`Drive`], so the responses of everything a turn received go out in one
//! `send` per connection. The drive's operations are carried out here: `Recv` takes what the
//! receive delivered and the connection could not take yet (the `stash`; "would block" when
//! there is none), `Send` is a submission that owns the output buffer, the rest are syscalls.
//!
//! Ownership: a send takes the connection's output buffer ([`Conn::lend_write`]) into the
//! ring until its completion gives it back. While it is away, the connection is not fed: bytes
//! received meanwhile wait in the connection's `stash` (allocated only then). A stash past
//! [`STASH_LIMIT`] cancels the receive, so a client that pipelines without reading meets the
//! kernel's socket buffer (backpressure) instead of our memory. A connection is closed by
//! cancelling its operations and closing the descriptor through the ring (with the turn's
//! submission, no `close(2)` of its own) once the last completion arrived: a descriptor is
//! never closed while the kernel may still act on its number.
//!
//! TLS is the same layer as on epoll (`backend::tls::TlsIo`), over a socket of this backend's
//! (`tls`): received ciphertext waits in the stash for the layer's `recv`, and the layer's
//! ciphertext goes out as a submission of a copy (the session keeps its own buffer).
//!
//! Static file bodies still use `sendfile(2)` (nonblocking) with a one-shot `POLLOUT` poll
//! through the ring when the socket is full.

use super::alarm::Alarm;
use super::deadlines::{self, Timers};
use super::drive::{Drive, Sent, Want, after_send};
use super::later::{self, Later};
use super::slab::Slab;
use super::worker::{self, Clock, Driver, Gate, Tracked, WorkerSetup};
use super::{Io, Socket, Verdict};
use crate::conn::{Conn, Ctx, Output, Phase, TimeoutsMs};
use crate::metrics::{ServerMetrics, TimeoutKind, WorkerMetrics};
use rustix::io::Errno;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::time::Duration;
use tls::{Tls, run_tls, tls_sent};
use twelve_sys::uring::ring::{Completion, OpId, Outcome, Ring};

mod tls;

/// Tag of the wake-up eventfd's poll.
const WAKE: u64 = u64::MAX;
/// Tag of the poll of the async runtime's epoll set (`crate::rt`): below every listener's.
const RT_IO: u64 = u64::MAX - (1 << 20);
/// Tag of the poll of the worker's alarm (`super::alarm`), below the runtime's.
const ALARM: u64 = RT_IO - 1;
/// Tags of listeners' accepts: `LISTENER_BASE - i`. Connection tags keep bit 63 clear
/// (the slab's generations are 31 bits for this).
const LISTENER_BASE: u64 = u64::MAX - 1;
/// Submission queue entries (a turn with more submissions enters more than once).
pub(crate) const RING_ENTRIES: u32 = 1024;
/// Provided receive buffers per worker, and their size: 1 MiB per worker, whatever the
/// number of connections. A request larger than one buffer arrives in several completions.
pub(crate) const RECV_BUFS: u16 = 256;
pub(crate) const RECV_BUF_BYTES: u32 = 4096;
/// Received bytes a connection may hold back (while its send is in flight, or while it
/// refuses input) before its receive is cancelled.
const STASH_LIMIT: usize = 64 * 1024;

struct Live {
    fd: OwnedFd,
    conn: Conn,
    /// The armed multishot receive.
    recv: Option<OpId>,
    /// A send (or a `POLLOUT` poll for a file body) is in flight; the output buffer is lent.
    /// Its timeout counts from the submission ([`Conn::send_started`]).
    sending: bool,
    /// Operations whose final completion has not arrived.
    ops: u32,
    /// Bytes received that the connection has not taken yet (empty, no capacity, normally).
    stash: Vec<u8>,
    /// The peer's EOF arrived; it reaches the connection after the stash (`eof_told`).
    eof: bool,
    eof_told: bool,
    /// Being closed: operations cancelled, the fd dropped when `ops` reaches 0.
    closing: bool,
    /// Queued in the turn's list of connections to advance.
    touched: bool,
    /// The TLS layer, on a TLS listener.
    tls: Option<Box<Tls>>,
}

impl Tracked for Live {
    #[inline]
    fn conn(&mut self) -> &mut Conn {
        &mut self.conn
    }

    /// While a send is in flight the output buffer is lent and the connection cannot tell
    /// it has output, so only its send deadline applies, counted from the submission. A
    /// closing connection waits only for its cancelled operations: no deadline.
    #[inline]
    fn deadline(&self, t: &TimeoutsMs) -> Option<(u64, TimeoutKind)> {
        if self.closing {
            None
        } else if self.sending {
            Some(self.conn.send_deadline(t))
        } else if let Some(tls) = &self.tls {
            super::tls::deadline(&self.conn, &tls.session, tls.held_since_ms, t)
        } else {
            self.conn.deadline(t)
        }
    }

    fn at_rest(&self) -> bool {
        !self.sending
            && !self.closing
            && self
                .tls
                .as_ref()
                .is_none_or(|t| t.session.pending_out() == 0 && t.close_after.is_none())
    }
}

struct Worker {
    ring: Ring,
    setup: WorkerSetup,
    slab: Slab<Live>,
    timers: Timers,
    /// The deadline of the next wait, on a timerfd the ring polls.
    alarm: Alarm,
    /// Each listener's armed accept.
    accepts: Vec<Option<OpId>>,
    gate: Gate,
    clock: Clock,
    completions: Vec<Completion>,
    touched: Vec<u64>,
    /// The ciphertext receive buffer every TLS connection of the worker borrows in turn.
    tls_scratch: Vec<u8>,
    /// The server's counters, held apart from `setup.ctx` (which a drive borrows mutably) so
    /// the TLS layer can count handshakes as they complete.
    all_metrics: Arc<ServerMetrics>,
    /// The async handlers' runtime, and whether its sockets were reported ready this turn.
    later: Option<Later>,
    rt_io: bool,
    /// The turn's connections are one: its response goes out with a `send(2)` of its own
    /// rather than a ring send, whose completion, posted as the wait's submission issues it,
    /// would end that wait at once and cost a second `io_uring_enter` to sleep. Several
    /// connections' sends share one submission instead.
    lone: bool,
}

/// The ring a worker runs on, created on the worker's thread.
pub(crate) fn new_ring() -> std::io::Result<Ring> {
    Ring::new(RING_ENTRIES, RECV_BUFS, RECV_BUF_BYTES)
}

/// Runs a worker on `ring` (created on this thread, as `DEFER_TASKRUN` requires) until it has
/// drained after a stop request. The caller pinned the thread.
pub(crate) fn run(setup: WorkerSetup, ring: Ring, ready: impl FnOnce(std::io::Result<()>)) {
    ready(Ok(()));
    let clock = Clock::start();
    let all_metrics = Arc::clone(&setup.ctx.all_metrics);
    let later = Later::attach(Arc::clone(&setup.wake), clock.now_ms());
    let mut w = Worker {
        later: Some(later),
        rt_io: false,
        lone: false,
        ring,
        all_metrics,
        tls_scratch: Vec::new(),
        accepts: vec![None; setup.listeners.len()],
        setup,
        slab: Slab::default(),
        timers: Timers::new(clock.now_ms()),
        alarm: Alarm::new(&clock),
        gate: Gate::default(),
        clock,
        completions: Vec::new(),
        touched: Vec::new(),
    };
    w.arm_accepts();
    w.ring.poll(w.setup.wake.as_fd(), libc_pollin(), true, WAKE);
    w.arm_rt_io();
    w.arm_alarm();
    w.run();
    // Close what is left: dropping the ring cancels and reaps every operation first.
    for token in w.slab.tokens() {
        if let Some(live) = w.slab.remove(token) {
            let mut live = live;
            live.conn.release(&mut w.setup.ctx);
        }
    }
}

/// `POLLIN`, without a libc dependency in this crate.
fn libc_pollin() -> u32 {
    rustix::event::PollFlags::IN.bits() as u32
}

impl Worker {
    fn metrics(&self) -> &WorkerMetrics {
        self.setup.metrics()
    }

    fn run(&mut self) {
        let mut now = self.clock.now_ms();
        loop {
            if self.gate.drained(self.slab.len(), now) {
                return;
            }
            let timeout = self.gate.timeout_ms(self.timers.timeout_ms(now), now);
            let timeout = match &self.later {
                Some(l) => l.timeout_ms(timeout, now),
                None => timeout,
            };
            let timeout = self
                .alarm
                .timeout_ms(timeout, now)
                .map(Duration::from_millis);
            if let Err(e) = self.ring.submit_and_wait(timeout) {
                return self.setup.wait_failed("io_uring_enter", &e);
            }
            now = self.clock.woke();
            let mut completions = std::mem::take(&mut self.completions);
            self.ring.reap(&mut completions);
            for c in completions.drain(..) {
                self.on_completion(c, now);
            }
            self.completions = completions;
            let io = std::mem::take(&mut self.rt_io);
            if let Some(mut l) = self.later.take() {
                later::run(self, &mut l, now, io);
                self.later = Some(l);
            }
            let mut touched = std::mem::take(&mut self.touched);
            // The runtime's sockets are one event here (their epoll set's).
            let ready = touched.len() + usize::from(io);
            self.lone = touched.len() == 1;
            for token in touched.drain(..) {
                if let Some(live) = self.slab.get(token) {
                    live.touched = false;
                }
                self.advance(token, now);
            }
            self.lone = false;
            self.touched = touched;
            deadlines::expire(self, now);
            if self.gate.reopen(now, self.slab.len(), self.setup.max_conns) {
                self.arm_accepts();
            }
            // The sends of this turn are only queued: submit them before a nap, which then
            // delays only what arrives meanwhile.
            let owed = self.later.as_ref().map_or(0, |l| l.rt.owed());
            if self.setup.coalesce.nap(ready, owed).is_some()
                && let Err(e) = self.ring.submit()
            {
                return self.setup.wait_failed("io_uring_enter", &e);
            }
            self.setup.end_turn(ready, owed, self.gate.draining());
        }
    }

    /// A multishot poll of the runtime's epoll set (readable while one of its sockets is
    /// ready; the runtime's turn empties it).
    fn arm_rt_io(&mut self) {
        if let Some(l) = &self.later {
            self.ring.poll(l.rt.io_fd(), libc_pollin(), true, RT_IO);
        }
    }

    /// A multishot poll of the alarm's timerfd (readable once it fired).
    fn arm_alarm(&mut self) {
        if let Some(fd) = self.alarm.fd() {
            self.ring.poll(fd.as_fd(), libc_pollin(), true, ALARM);
        }
    }

    fn arm_accepts(&mut self) {
        if !self.gate.accepting() {
            return;
        }
        for i in 0..self.setup.listeners.len() {
            if self.accepts[i].is_none() {
                let fd = self.setup.listeners[i].as_fd();
                self.accepts[i] = Some(self.ring.accept_multi(fd, LISTENER_BASE - i as u64));
            }
        }
    }

    fn cancel_accepts(&mut self) {
        for op in self.accepts.iter().flatten() {
            self.ring.cancel(*op);
        }
    }

    /// While draining, says the worker takes no more connections once every armed accept has
    /// ended (its last completion, after the cancel, came).
    fn release_if_done_accepting(&mut self) {
        if self.gate.draining() && self.accepts.iter().all(Option::is_none) {
            self.setup.accepting = None;
        }
    }

    fn on_completion(&mut self, c: Completion, now: u64) {
        if c.tag == WAKE {
            self.on_wake(now);
            if !c.more && !self.gate.draining() {
                self.ring
                    .poll(self.setup.wake.as_fd(), libc_pollin(), true, WAKE);
            }
            return;
        }
        if c.tag == RT_IO {
            self.rt_io = true;
            if !c.more {
                self.arm_rt_io();
            }
            return;
        }
        if c.tag == ALARM {
            self.alarm.fired();
            if !c.more {
                match c.outcome {
                    // The poll could not be armed: every wait carries its timeout then.
                    Outcome::Poll(Err(_)) => self.alarm.drop_fd(),
                    _ => self.arm_alarm(),
                }
            }
            return;
        }
        if c.tag >> 63 == 1 {
            let i = (LISTENER_BASE - c.tag) as usize;
            if !c.more
                && let Some(a) = self.accepts.get_mut(i)
            {
                *a = None;
            }
            if let Outcome::Accept(r) = c.outcome {
                self.on_accept(r, i, now);
            }
            self.release_if_done_accepting();
            return;
        }
        self.on_conn_completion(c, now);
    }

    fn on_accept(&mut self, r: Result<OwnedFd, Errno>, i: usize, now: u64) {
        match r {
            Ok(fd) => {
                self.add_conn(fd, i, now);
                // An accept already under way when the cancel lands still comes in.
                let m = self.setup.metrics();
                if self.gate.fill(self.slab.len(), self.setup.max_conns, m) {
                    self.cancel_accepts();
                }
            }
            Err(Errno::MFILE | Errno::NFILE | Errno::NOBUFS | Errno::NOMEM) => {
                if self.gate.pause(now, self.setup.metrics()) {
                    self.cancel_accepts();
                }
            }
            // ECANCELED (ours), ECONNABORTED, EINTR: re-armed below if it ended.
            Err(_) => {}
        }
        self.arm_accepts();
    }

    fn on_conn_completion(&mut self, c: Completion, now: u64) {
        let token = c.tag;
        let ctx = &mut self.setup.ctx;
        ctx.conn_token = token;
        let Some(live) = self.slab.get(token) else {
            // Cannot happen (a slot stays until its last completion); keep the buffer pool.
            if let Outcome::Recv(Ok(Some(buf))) = c.outcome {
                self.ring.recycle(buf);
            }
            return;
        };
        if !c.more {
            live.ops -= 1;
        }
        let mut failed = false;
        match c.outcome {
            Outcome::Recv(r) => {
                if !c.more {
                    live.recv = None;
                }
                match r {
                    Ok(Some(buf)) => {
                        if !live.closing {
                            let bytes = self.ring.bytes(&buf);
                            deliver(live, bytes, now, ctx);
                            if live.stash.len() > STASH_LIMIT
                                && let Some(op) = live.recv
                            {
                                self.ring.cancel(op);
                            }
                        }
                        self.ring.recycle(buf);
                    }
                    Ok(None) => live.eof = true,
                    // The buffer ring ran dry (re-armed by `advance`), or our cancel.
                    Err(Errno::NOBUFS | Errno::CANCELED) => {}
                    Err(_) => failed = true,
                }
            }
            Outcome::Send(r, buf) => {
                live.sending = false;
                if live.closing {
                    ctx.pool.give(buf);
                } else if let Some(tls) = live.tls.as_deref_mut() {
                    match tls_sent(tls, r, buf, live.fd.as_fd(), &mut self.ring, token) {
                        Some(true) => {
                            // The rest is in flight.
                            live.ops += 1;
                            live.sending = true;
                            live.conn.send_started(now);
                        }
                        Some(false) => {}
                        None => failed = true,
                    }
                } else {
                    live.conn.restore_write(buf);
                    // EINTR, EAGAIN and a partial send leave the rest to `advance`.
                    failed = after_send(&mut live.conn, r, now, ctx) == Sent::Failed;
                }
            }
            Outcome::Poll(_) => live.sending = false,
            Outcome::Accept(_) => {}
        }
        if live.closing {
            if live.ops == 0 {
                self.finish_close(token);
            }
            return;
        }
        if failed {
            self.metrics().resets.inc();
            self.close(token);
            return;
        }
        if !live.touched {
            live.touched = true;
            self.touched.push(token);
        }
    }

    /// Runs a connection as far as it goes without waiting: one [`Drive`], its operations
    /// carried out here (see the module doc), then the receive re-armed if it ended.
    fn advance(&mut self, token: u64, now: u64) {
        let Some(live) = self.slab.get(token) else {
            return;
        };
        if live.closing {
            return;
        }
        if live.conn.phase() == Phase::Closed {
            // Timed out (send, keep-alive, linger): nothing more goes out.
            return self.close(token);
        }
        if !live.sending {
            let ctx = &mut self.setup.ctx;
            ctx.conn_token = token;
            let verdict = match live.tls {
                None => run_plain(live, &mut self.ring, ctx, token, now, self.lone),
                Some(_) => {
                    let m = self.all_metrics.worker(ctx.me);
                    let scratch = &mut self.tls_scratch;
                    run_tls(live, &mut self.ring, ctx, m, scratch, token, now)
                }
            };
            match verdict {
                Verdict::Open => {}
                Verdict::Close => return self.close(token),
                Verdict::Reset => {
                    self.metrics().resets.inc();
                    return self.close(token);
                }
            }
        }
        if live.recv.is_none()
            && !live.eof
            && live.stash.is_empty()
            && live.conn.phase() != Phase::Closed
            && live.tls.as_ref().is_none_or(|t| t.close_after.is_none())
        {
            live.recv = Some(self.ring.recv_multi(live.fd.as_fd(), token));
            live.ops += 1;
        }
        self.sync_timer(token);
    }

    /// Puts the connection's deadline on the wheel unless an entry at or before it exists.
    fn sync_timer(&mut self, token: u64) {
        let t = self.setup.ctx.timeouts;
        self.timers.sync(&mut self.slab, token, &t);
    }

    /// Begins closing: cancels the connection's operations; the descriptor is dropped once
    /// the last of them has completed (at once if none is in flight).
    fn close(&mut self, token: u64) {
        let Some(live) = self.slab.get(token) else {
            return;
        };
        if live.closing {
            return;
        }
        live.closing = true;
        live.conn.release(&mut self.setup.ctx);
        live.stash = Vec::new();
        if live.ops == 0 {
            self.finish_close(token);
        } else {
            self.ring.cancel_fd(live.fd.as_fd());
        }
    }

    fn finish_close(&mut self, token: u64) {
        if let Some(live) = self.slab.remove(token) {
            // Nothing in the ring refers to the fd any more: close it with the next
            // submission rather than with a close(2) of its own.
            self.ring.close(live.fd);
            self.setup.count_close(self.slab.len());
        }
        if self.gate.room(self.slab.len(), self.setup.max_conns) {
            self.arm_accepts();
        }
    }

    /// A connection accepted on listener `i`.
    fn add_conn(&mut self, fd: OwnedFd, i: usize, now: u64) {
        self.setup.count_accept(fd.as_fd());
        let tls = self
            .setup
            .tls_session(i)
            .map(|s| Box::new(Tls::new(s, now)));
        let conn = self.setup.new_conn(i, tls.is_some(), now);
        let token = self.slab.insert(Live {
            fd,
            conn,
            tls,
            recv: None,
            sending: false,
            ops: 0,
            stash: Vec::new(),
            eof: false,
            eof_told: false,
            closing: false,
            touched: false,
        });
        self.metrics().open_conns.set(self.slab.len() as u64);
        // Arms the receive and the timer.
        self.advance(token, now);
    }

    fn on_wake(&mut self, now: u64) {
        if !self.setup.woken_to_stop() || self.gate.draining() {
            return;
        }
        // Stop accepting: take what is already queued (closing a reuseport listener resets
        // its queued connections, docs/kernel-facts.md), then close the listeners. The armed
        // accepts hold their own reference to the socket until their cancellation completes.
        self.setup.ctx.draining = true;
        self.cancel_accepts();
        for (i, l) in std::mem::take(&mut self.setup.listeners).iter().enumerate() {
            loop {
                match rustix::net::accept_with(
                    l,
                    rustix::net::SocketFlags::NONBLOCK | rustix::net::SocketFlags::CLOEXEC,
                ) {
                    Ok(fd) => self.add_conn(fd, i, now),
                    Err(Errno::INTR | Errno::CONNABORTED) => {}
                    Err(_) => break,
                }
            }
        }
        self.gate.start_drain(now, self.setup.drain_timeout_ms);
        self.release_if_done_accepting();
        worker::announce_drain(self, now);
        if !self.setup.close_idle_on_drain {
            return;
        }
        worker::close_idle(self);
    }
}

impl Driver for Worker {
    type Live = Live;

    fn parts(&mut self) -> (&mut Timers, &mut Slab<Live>, &mut Ctx) {
        (&mut self.timers, &mut self.slab, &mut self.setup.ctx)
    }

    fn run_expired(&mut self, token: u64, now: u64) {
        self.advance(token, now);
    }

    fn close(&mut self, token: u64) {
        Worker::close(self, token);
    }
}

/// One drive of a plain connection: answer what was received, one send for the batch,
/// then shutdown, close or wait.
fn run_plain(
    live: &mut Live,
    ring: &mut Ring,
    ctx: &mut Ctx,
    token: u64,
    now: u64,
    direct: bool,
) -> Verdict {
    // What the completions delivered went straight to the connection unless it is
    // stashed. With nothing stashed the socket is as good as drained (a short read), and
    // the peer's EOF, if it came, is told now, as a `recv` would have returned it.
    let readable = !live.stash.is_empty();
    if !readable {
        if !live.eof {
            live.conn.drained(ctx);
        } else if !live.eof_told {
            live.eof_told = true;
            live.conn.on_eof(ctx);
        }
    }
    let mut drive = Drive::start(&live.conn, readable);
    loop {
        match drive.want(&mut live.conn, ctx) {
            Want::Recv(buf) => {
                let space = buf.capacity() - buf.len();
                let result = take_received(&mut live.stash, live.eof, buf);
                live.eof_told |= result == Ok(0);
                drive.received(&mut live.conn, result, space, now, ctx);
            }
            Want::Send => {
                if direct {
                    let result = match live.conn.output() {
                        Output::Bytes(bytes) => Socket(live.fd.as_fd()).send(bytes),
                        _ => Err(Errno::AGAIN),
                    };
                    // A full socket buffer: the ring's send waits for room instead.
                    if result != Err(Errno::AGAIN) {
                        drive.sent(&mut live.conn, result, now, ctx);
                        continue;
                    }
                }
                let (buf, start) = live.conn.lend_write().expect("bytes are due");
                ring.send(live.fd.as_fd(), buf, start, token);
                live.ops += 1;
                live.sending = true;
                live.conn.send_started(now);
                return Verdict::Open;
            }
            Want::SendFile(f, offset, len) => {
                let result = Socket(live.fd.as_fd()).sendfile(f, offset, len);
                if result == Err(Errno::AGAIN) {
                    let pollout = rustix::event::PollFlags::OUT.bits() as u32;
                    ring.poll(live.fd.as_fd(), pollout, false, token);
                    live.ops += 1;
                    live.sending = true;
                    live.conn.send_started(now);
                }
                drive.sent_file(&mut live.conn, result, now, ctx);
            }
            Want::Flush => drive.flushed(&mut live.conn, Ok(()), now, ctx),
            Want::Shutdown => {
                let result = Socket(live.fd.as_fd()).shutdown_write();
                drive.shut(&mut live.conn, result, now, ctx);
            }
            Want::Close => return Verdict::Close,
            Want::Stop(verdict) => return verdict,
        }
    }
}

/// Hands received bytes to the connection, or keeps them in the stash while it cannot take
/// them (a send in flight has its output buffer, or it refuses input). A TLS connection's
/// ciphertext always waits in the stash for its drive (dropped once it is closing).
fn deliver(live: &mut Live, bytes: &[u8], now: u64, ctx: &mut Ctx) {
    let used = match &live.tls {
        Some(tls) if tls.close_after.is_some() => return,
        Some(_) => 0,
        None if live.sending || !live.stash.is_empty() => 0,
        None => feed(&mut live.conn, bytes, now, ctx),
    };
    live.stash.extend_from_slice(&bytes[used..]);
}

/// Copies bytes into the connection's read buffer as far as it takes them, answering each
/// piece; returns how many it took.
fn feed(conn: &mut Conn, bytes: &[u8], now: u64, ctx: &mut Ctx) -> usize {
    let mut used = 0;
    while used < bytes.len() {
        let Some(buf) = conn.read_buf(ctx) else {
            break;
        };
        let n = (buf.capacity() - buf.len()).min(bytes.len() - used);
        buf.extend_from_slice(&bytes[used..used + n]);
        conn.on_read(n, now, ctx);
        used += n;
    }
    used
}

/// A drive's `recv` on this backend: moves stashed bytes into the spare capacity of `buf`.
/// With nothing stashed, `EAGAIN` (the receive delivers the rest) or, after the peer's EOF,
/// 0. A short count means the stash is empty, as a short `recv` means a drained socket.
fn take_received(stash: &mut Vec<u8>, eof: bool, buf: &mut Vec<u8>) -> Result<usize, Errno> {
    if stash.is_empty() {
        return if eof { Ok(0) } else { Err(Errno::AGAIN) };
    }
    let n = (buf.capacity() - buf.len()).min(stash.len());
    buf.extend_from_slice(&stash[..n]);
    stash.drain(..n);
    if stash.is_empty() {
        *stash = Vec::new();
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`take_received`] with `stash` stashed (and EOF after it if `eof`), into a buffer of
    /// `space` bytes: the result, the bytes moved, and what stays stashed.
    fn take(stash: &[u8], eof: bool, space: usize) -> (Result<usize, Errno>, Vec<u8>, Vec<u8>) {
        let mut stash = stash.to_vec();
        let mut buf = Vec::with_capacity(space);
        let space = buf.capacity();
        let r = take_received(&mut stash, eof, &mut buf);
        assert!(buf.len() <= space, "never past the space offered");
        (r, buf, stash)
    }

    macro_rules! take_received {
        ($($name:ident: $stash:expr, $eof:expr, $space:expr => $r:expr, $moved:expr, $left:expr;)*) => {$(
            #[test]
            fn $name() {
                let (r, moved, left) = take($stash, $eof, $space);
                assert_eq!(r, $r);
                assert_eq!(moved, $moved);
                assert_eq!(left, $left);
            }
        )*};
    }

    take_received! {
        nothing_stashed_would_block: b"", false, 8 => Err(Errno::AGAIN), b"", b"";
        nothing_stashed_after_eof_is_eof: b"", true, 8 => Ok(0), b"", b"";
        a_small_stash_is_a_short_read: b"abc", false, 8 => Ok(3), b"abc", b"";
        a_large_stash_fills_the_buffer: b"abcdefghij", false, 8 => Ok(8), b"abcdefgh", b"ij";
        eof_waits_behind_the_stash: b"abc", true, 8 => Ok(3), b"abc", b"";
    }
}
