//! The epoll backend: one worker's event loop over its listeners, its connections, its timer
//! wheel and its wake-up eventfd.
//!
//! Every socket is registered once, edge-triggered, for `EPOLLIN | EPOLLOUT | EPOLLRDHUP`, and
//! never modified: an `EPOLLOUT` edge only comes after a send found the socket buffer full
//! (`sk_stream_write_space` wakes only with `SOCK_NOSPACE` set), so keeping it registered
//! costs nothing on the fast path and saves two `epoll_ctl` calls per partial send.
//!
//! Each ready connection runs one [`Drive`], each operation a syscall ([`drive::run`]). When
//! one wait reports several connections, the `recv`s their drives want first go to the kernel
//! as one batch and, once every request of the batch is answered, the `send`s they want next
//! as another ([`Batch`], one `io_uring_enter` each): with N connections
//! ready that is 2 syscalls instead of 2N. Whatever a drive wants after that (to read on
//! after a full buffer, the rest of a partial send, a file body, a shutdown) it gets with a
//! syscall, as a lone connection would. Where io_uring is unavailable no drive is batched.

use super::alarm::Alarm;
use super::deadlines::{self, Timers};
use super::drive::{self, Drive, Want};
use super::later::{self, Later};
use super::slab::Slab;
use super::tls::{self, TlsIo};
use super::worker::{self, Clock, Driver, Gate, Tracked, WorkerSetup};
use super::{Socket, Verdict};
use crate::conn::{Conn, Ctx, TimeoutsMs};
use crate::metrics::{ServerMetrics, TimeoutKind, WorkerMetrics};
use rustix::event::epoll::{self, EventData, EventFlags};
use rustix::io::Errno;
use rustix::net::SocketFlags;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::Arc;
use twelve_sys::uring::batch::{Batch, Op};
use twelve_tls::Session;

/// Token of the wake-up eventfd.
const WAKE: u64 = u64::MAX;
/// Token of the worker's alarm (`super::alarm`): below every listener's. The async runtime's
/// sockets share the worker's set under tokens of their own (`crate::rt::io_key`).
const ALARM: u64 = u64::MAX - (1 << 20) - 1;
/// Tokens of listeners: `LISTENER_BASE - i`.
const LISTENER_BASE: u64 = u64::MAX - 1;
/// Events taken per `epoll_wait`.
const EVENTS: usize = 512;
/// Operations per `io_uring_enter` of a batch (larger batches take several).
const BATCH_ENTRIES: u32 = 256;
/// The default of `Config::min_batch`: the fewest ready connections worth a batch. Below it
/// each connection makes its own `recv` and `send`, since a few plain syscalls cost less than
/// two `io_uring_enter`s and the ring's work per operation: measured at a fixed offered rate,
/// where a wake-up finds one to a few connections, and capped, where it finds many
/// (docs/ARCHITECTURE.md, "Batched I/O").
pub(crate) const MIN_BATCH: usize = 8;

struct Live {
    fd: OwnedFd,
    conn: Conn,
    /// The TLS session between the socket and `conn`, on a TLS listener.
    tls: Option<Box<Session>>,
    /// When the ciphertext `tls` holds last moved (see [`tls::held_since`]).
    held_since_ms: u64,
    /// The socket's `SO_RCVLOWAT` as last set ([`Conn::low_water`]; 1, the default, until then).
    low_water: u32,
}

impl Tracked for Live {
    #[inline]
    fn conn(&mut self) -> &mut Conn {
        &mut self.conn
    }

    #[inline]
    fn deadline(&self, t: &TimeoutsMs) -> Option<(u64, TimeoutKind)> {
        match &self.tls {
            None => self.conn.deadline(t),
            Some(session) => tls::deadline(&self.conn, session, self.held_since_ms, t),
        }
    }

    /// Ciphertext still held is output the drain must not close the connection under.
    fn at_rest(&self) -> bool {
        self.tls.as_ref().is_none_or(|s| s.pending_out() == 0)
    }

    fn release_low_water(&mut self) -> bool {
        if self.low_water <= 1 {
            return false;
        }
        self.low_water = 1;
        // Best effort: a mark left raised holds the body back until its timeout, as now.
        let _ = twelve_sys::net::set_rcvlowat(self.fd.as_fd(), 1);
        true
    }
}

struct Worker {
    epoll: OwnedFd,
    setup: WorkerSetup,
    slab: Slab<Live>,
    timers: Timers,
    /// The deadline of the next wait, on a timerfd the wait watches.
    alarm: Alarm,
    gate: Gate,
    clock: Clock,
    /// `None` where io_uring is unavailable: no drive is batched then.
    batch: Option<Batch>,
    /// Connections reported ready by the last wait, with whether they are readable.
    ready: Vec<(u64, bool)>,
    /// A batch's operations and, for each, its connection, its drive and the read space it
    /// offered (a `recv`) or its place in `drives` (a `send`).
    ops: Vec<Op>,
    op_drives: Vec<(u64, Drive, usize)>,
    /// The drives of the connections a batch handled, to finish once its sends are done.
    drives: Vec<(u64, Drive)>,
    /// The ciphertext receive buffer every TLS connection of the worker borrows in turn.
    tls_scratch: Vec<u8>,
    /// The server's counters, held apart from `setup.ctx` (which a drive borrows mutably) so
    /// the TLS layer can count handshakes as they complete.
    all_metrics: Arc<ServerMetrics>,
    /// The async handlers' runtime.
    later: Option<Later>,
}

/// Runs a worker until it has drained after a stop request. The caller pinned the thread.
pub(crate) fn run(setup: WorkerSetup, ready: impl FnOnce(std::io::Result<()>)) {
    let clock = Clock::start();
    let later = Later::attach(Arc::clone(&setup.wake), clock.now_ms());
    // The runtime's epoll set is the worker's: its sockets come in the worker's one wait.
    let epoll = match later.rt.share_epoll().and_then(|ep| prepare(&setup, ep)) {
        Ok(e) => e,
        Err(e) => return ready(Err(e)),
    };
    ready(Ok(()));
    let mut alarm = Alarm::new(&clock);
    if let Some(fd) = alarm.fd()
        && epoll::add(&epoll, fd, EventData::new_u64(ALARM), EventFlags::IN).is_err()
    {
        // Every wait carries its timeout then.
        alarm.drop_fd();
    }
    // TLS connections run their drives one by one: a batch lends `Conn`'s plaintext buffers
    // straight to the kernel, with no TLS layer between. A worker with plain listeners too
    // batches their connections still.
    let plain_listeners = (0..setup.listeners.len()).any(|i| setup.tls_for(i).is_none());
    let batch = plain_listeners
        .then(|| Batch::new(BATCH_ENTRIES).ok())
        .flatten();
    let all_metrics = Arc::clone(&setup.ctx.all_metrics);
    let mut w = Worker {
        epoll,
        all_metrics,
        setup,
        slab: Slab::default(),
        timers: Timers::new(clock.now_ms()),
        alarm,
        clock,
        gate: Gate::default(),
        batch,
        ready: Vec::new(),
        ops: Vec::new(),
        op_drives: Vec::new(),
        drives: Vec::new(),
        tls_scratch: Vec::new(),
        later: Some(later),
    };
    w.run();
}

fn prepare(setup: &WorkerSetup, ep: OwnedFd) -> std::io::Result<OwnedFd> {
    for (i, l) in setup.listeners.iter().enumerate() {
        epoll::add(
            &ep,
            l,
            EventData::new_u64(LISTENER_BASE - i as u64),
            EventFlags::IN | EventFlags::ET,
        )?;
    }
    epoll::add(
        &ep,
        &*setup.wake,
        EventData::new_u64(WAKE),
        EventFlags::IN | EventFlags::ET,
    )?;
    Ok(ep)
}

impl Worker {
    fn metrics(&self) -> &WorkerMetrics {
        self.setup.metrics()
    }

    fn run(&mut self) {
        let mut events = twelve_sys::epoll::Events::with_capacity(EVENTS);
        let mut now = self.clock.now_ms();
        loop {
            if self.gate.drained(self.slab.len(), now) {
                self.close_all();
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
                .map_or(-1, |ms| i32::try_from(ms).unwrap_or(i32::MAX));
            match twelve_sys::epoll::wait(self.epoll.as_fd(), &mut events, timeout) {
                Ok(_) => {}
                // A profiler or strace attaching interrupts the wait: just wait again.
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return self.setup.wait_failed("epoll_wait", &e),
            }
            now = self.clock.woke();
            let mut io_events = 0;
            for (bits, token) in events.iter() {
                let flags = EventFlags::from_bits_retain(bits);
                if token == WAKE {
                    self.on_wake(now);
                } else if token == ALARM {
                    self.alarm.fired();
                } else if token > LISTENER_BASE - self.setup.listeners.len() as u64 {
                    self.accept((LISTENER_BASE - token) as usize, now);
                } else if let Some(key) = crate::rt::io_key(token) {
                    io_events += 1;
                    if let Some(l) = &self.later {
                        l.rt.io_event(key, bits);
                    }
                } else if flags.contains(EventFlags::ERR) {
                    self.on_error(token);
                } else {
                    let readable = flags.intersects(
                        EventFlags::IN | EventFlags::RDHUP | EventFlags::HUP | EventFlags::ERR,
                    );
                    self.ready.push((token, readable));
                }
            }
            let ready = self.ready.len() + io_events;
            self.drive_ready(now);
            if let Some(mut l) = self.later.take() {
                later::run(self, &mut l, now, false);
                self.later = Some(l);
            }
            deadlines::expire(self, now);
            if self.gate.reopen(now, self.slab.len(), self.setup.max_conns) {
                self.accept_all(now);
            }
            // Every response of this wait was sent by `drive_ready`: a nap delays only what
            // arrives meanwhile.
            let owed = self.later.as_ref().map_or(0, |l| l.rt.owed());
            self.setup.end_turn(ready, owed, self.gate.draining());
        }
    }

    /// Runs the connections of the last wait: batched where that saves syscalls.
    fn drive_ready(&mut self, now: u64) {
        let mut ready = std::mem::take(&mut self.ready);
        if self.batch.is_some() && self.setup.tls.is_some() && ready.len() >= self.setup.min_batch {
            // Plain and TLS listeners: the TLS connections one by one now, the plain ones
            // left for the batch.
            ready.retain(|&(token, readable)| {
                let tls = self.slab.get(token).is_some_and(|l| l.tls.is_some());
                if tls {
                    self.drive(token, readable, now);
                }
                !tls
            });
        }
        match self.batch.take() {
            Some(mut batch) if ready.len() >= self.setup.min_batch => {
                self.drive_batch(&mut batch, &ready, now);
                self.batch = Some(batch);
            }
            batch => {
                self.batch = batch;
                for &(token, readable) in &ready {
                    self.drive(token, readable, now);
                }
            }
        }
        self.ready = ready;
        self.ready.clear();
    }

    /// The drives of the ready connections, taken through io_uring together: one batched
    /// `recv` for every drive that wants one, the requests answered, one batched `send` of
    /// every response, then each drive finished with a syscall per operation (usually none:
    /// it only finds out that the connection waits).
    fn drive_batch(&mut self, batch: &mut Batch, ready: &[(u64, bool)], now: u64) {
        let mut drives = std::mem::take(&mut self.drives);
        self.batch_recv(batch, ready, now, &mut drives);
        self.batch_send(batch, &mut drives, now);
        for &(token, drive) in &drives {
            // What the rest of the drive would conclude without a syscall (a batch holds plain
            // connections only, whose flush is none): the connection waits.
            if !drive.reading() && self.slab.get(token).is_some_and(|l| l.conn.settled()) {
                self.sync_timer(token);
            } else {
                self.drive_on(token, Ok(drive), now);
            }
        }
        drives.clear();
        self.drives = drives;
    }

    /// Starts a drive for each ready connection and takes every first `recv` they want into
    /// one batch. Pushes every connection still open to `drives`; a failed socket is closed.
    fn batch_recv(
        &mut self,
        batch: &mut Batch,
        ready: &[(u64, bool)],
        now: u64,
        drives: &mut Vec<(u64, Drive)>,
    ) {
        let mut ops = std::mem::take(&mut self.ops);
        let mut pending = std::mem::take(&mut self.op_drives);
        let ctx = &mut self.setup.ctx;
        for &(token, readable) in ready {
            let Some(live) = self.slab.get(token) else {
                continue;
            };
            let mut drive = Drive::start(&live.conn, readable);
            match drive.want(&mut live.conn, ctx) {
                Want::Recv(buf) => {
                    // Lent to the kernel with the batch, given back below.
                    let buf = std::mem::take(buf);
                    pending.push((token, drive, buf.capacity() - buf.len()));
                    ops.push(Op::new(live.fd.as_raw_fd(), buf, 0));
                }
                _ => drives.push((token, drive)),
            }
        }
        batch.recv(&mut ops);
        for (op, &(token, mut drive, space)) in ops.drain(..).zip(&pending) {
            let Some(live) = self.slab.get(token) else {
                continue;
            };
            live.conn.restore_read(op.buf);
            let ctx = &mut self.setup.ctx;
            ctx.conn_token = token;
            drive.received(&mut live.conn, op.result, space, now, ctx);
            if drive.failed() {
                self.metrics().resets.inc();
                self.close(token);
            } else {
                drives.push((token, drive));
            }
        }
        pending.clear();
        (self.ops, self.op_drives) = (ops, pending);
    }

    /// Takes the `send` of every drive that wants one next into one batch. A drive that
    /// wants anything else (to read on after a full buffer, a file range, a shutdown) is
    /// left to finish on its own; a failed socket is closed.
    fn batch_send(&mut self, batch: &mut Batch, drives: &mut [(u64, Drive)], now: u64) {
        let mut ops = std::mem::take(&mut self.ops);
        let mut sending = std::mem::take(&mut self.op_drives);
        let ctx = &mut self.setup.ctx;
        for (i, (token, drive)) in drives.iter_mut().enumerate() {
            let Some(live) = self.slab.get(*token) else {
                continue;
            };
            if matches!(drive.want(&mut live.conn, ctx), Want::Send)
                && let Some((buf, start)) = live.conn.lend_write()
            {
                sending.push((*token, *drive, i));
                ops.push(Op::new(live.fd.as_raw_fd(), buf, start));
            }
        }
        batch.send(&mut ops);
        for (op, &(token, mut drive, i)) in ops.drain(..).zip(&sending) {
            let Some(live) = self.slab.get(token) else {
                continue;
            };
            live.conn.restore_write(op.buf);
            drive.sent(&mut live.conn, op.result, now, &mut self.setup.ctx);
            if drive.failed() {
                self.metrics().resets.inc();
                self.close(token);
            }
            drives[i].1 = drive;
        }
        sending.clear();
        (self.ops, self.op_drives) = (ops, sending);
    }

    /// Runs one connection from the start of a drive and applies the verdict.
    #[inline]
    fn drive(&mut self, token: u64, readable: bool, now: u64) {
        self.drive_on(token, Err(readable), now);
    }

    /// Carries a drive through with a syscall per operation and applies the verdict: `drive`
    /// where a batch began it, else a new one (`Err(readable)`).
    fn drive_on(&mut self, token: u64, drive: Result<Drive, bool>, now: u64) {
        let Some(live) = self.slab.get(token) else {
            return;
        };
        let drive = drive.unwrap_or_else(|readable| Drive::start(&live.conn, readable));
        let ctx = &mut self.setup.ctx;
        ctx.conn_token = token;
        let socket = Socket(live.fd.as_fd());
        let (verdict, tls_failed) = match live.tls.as_deref_mut() {
            None => (
                drive::run(drive, &mut live.conn, &mut { socket }, now, ctx),
                false,
            ),
            Some(session) => {
                let m = self.all_metrics.worker(ctx.me);
                let held = session.pending_out();
                let mut io = TlsIo::new(session, socket, &mut self.tls_scratch, m);
                let verdict = drive::run(drive, &mut live.conn, &mut io, now, ctx);
                let after = session.pending_out();
                live.held_since_ms = tls::held_since(live.held_since_ms, held, after, now);
                let failed = tls::books(&mut live.conn, session, verdict, now, m);
                (verdict, failed)
            }
        };
        match verdict {
            Verdict::Open => self.sync_timer(token),
            Verdict::Close => self.close(token),
            // A TLS failure was counted as such, not as a reset.
            Verdict::Reset if tls_failed => self.close(token),
            Verdict::Reset => {
                self.metrics().resets.inc();
                self.close(token);
            }
        }
    }

    /// Puts the connection's deadline on the wheel unless an entry at or before it exists,
    /// and its socket's receive low-water mark where the connection wants another: raised
    /// while a large body streams in, so the worker wakes (and reads) once per mark's worth
    /// of bytes rather than once per segment train. Plain connections only: a TLS socket's
    /// bytes are ciphertext the connection does not count.
    #[inline]
    fn sync_timer(&mut self, token: u64) {
        let t = self.setup.ctx.timeouts;
        self.timers.sync(&mut self.slab, token, &t);
        if let Some(live) = self.slab.get(token) {
            let want = live.conn.low_water();
            if want != live.low_water
                && live.tls.is_none()
                && twelve_sys::net::set_rcvlowat(live.fd.as_fd(), want).is_ok()
            {
                live.low_water = want;
            }
        }
    }

    /// The socket reported `EPOLLERR`: the connection is dead, so close it at once and count
    /// a reset, without the `recv` that would only fetch the error.
    ///
    /// TCP sets the error that `tcp_poll` reports as `EPOLLERR` only when the connection is
    /// over: a reset (`tcp_reset`), a retransmission or keep-alive timeout (`tcp_write_err`),
    /// or an ICMP error with `IP_RECVERR`, which no connection here enables; nor does one use
    /// `MSG_ZEROCOPY` or timestamps, the other source of `EPOLLERR` (the error queue). Nothing
    /// received before the error can be answered any more: every send now fails. A client
    /// that ends each connection with a RST (HttpArena's limited-conn client does, `SO_LINGER`
    /// 0) so costs the worker no syscall but the `close`.
    fn on_error(&mut self, token: u64) {
        if self.slab.get(token).is_some() {
            self.metrics().resets.inc();
            self.close(token);
        }
    }

    fn close(&mut self, token: u64) {
        if let Some(mut live) = self.slab.remove(token) {
            live.conn.release(&mut self.setup.ctx);
            // Dropping the fd closes it, which also removes it from the epoll set.
            drop(live);
            self.setup.count_close(self.slab.len());
        }
    }

    fn close_all(&mut self) {
        for token in self.slab.tokens() {
            self.close(token);
        }
    }

    fn accept_all(&mut self, now: u64) {
        for i in 0..self.setup.listeners.len() {
            self.accept(i, now);
        }
    }

    /// `accept4` until EAGAIN (the listener is edge-triggered), `max_conns`, or EMFILE.
    fn accept(&mut self, i: usize, now: u64) {
        if !self.gate.accepting() {
            return;
        }
        loop {
            let m = self.setup.metrics();
            if self.gate.fill(self.slab.len(), self.setup.max_conns, m) {
                return;
            }
            let Some(listener) = self.setup.listeners.get(i) else {
                return;
            };
            let fd = match rustix::net::accept_with(
                listener,
                SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
            ) {
                Ok(fd) => fd,
                Err(Errno::INTR | Errno::CONNABORTED) => continue,
                Err(Errno::AGAIN) => return,
                Err(Errno::MFILE | Errno::NFILE | Errno::NOBUFS | Errno::NOMEM) => {
                    // With an edge-triggered listener the connection left queued causes no
                    // further wake-ups: the gate's pause brings the worker back to it.
                    self.gate.pause(now, self.setup.metrics());
                    return;
                }
                Err(_) => return,
            };
            self.add_conn(fd, i, now);
        }
    }

    /// A connection accepted on listener `i`.
    fn add_conn(&mut self, fd: OwnedFd, i: usize, now: u64) {
        self.setup.count_accept(fd.as_fd());
        let tls = self.setup.tls_session(i).map(Box::new);
        let conn = self.setup.new_conn(i, tls.is_some(), now);
        let token = self.slab.insert(Live {
            fd,
            conn,
            tls,
            held_since_ms: now,
            low_water: 1,
        });
        let live = self.slab.get(token).expect("just inserted");
        let flags = EventFlags::IN | EventFlags::OUT | EventFlags::RDHUP | EventFlags::ET;
        if epoll::add(&self.epoll, &live.fd, EventData::new_u64(token), flags).is_err() {
            self.close(token);
            return;
        }
        self.metrics().open_conns.set(self.slab.len() as u64);
        self.sync_timer(token);
    }

    fn on_wake(&mut self, now: u64) {
        if !self.setup.woken_to_stop() || self.gate.draining() {
            return;
        }
        // Stop accepting: take what is already queued (closing a reuseport listener resets
        // its queued connections, docs/kernel-facts.md), then close the listeners.
        self.setup.ctx.draining = true;
        self.gate.lift();
        let max = self.setup.max_conns;
        self.setup.max_conns = usize::MAX;
        self.accept_all(now);
        self.setup.max_conns = max;
        for l in self.setup.listeners.drain(..) {
            let _ = epoll::delete(&self.epoll, &l);
        }
        self.setup.accepting = None;
        self.gate.start_drain(now, self.setup.drain_timeout_ms);
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
        self.drive(token, false, now);
    }

    fn close(&mut self, token: u64) {
        Worker::close(self, token);
    }
}
