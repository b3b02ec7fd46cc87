//! The epoll backend: one worker's event loop over its listeners, its connections, its timer
//! wheel and its wake-up eventfd.
//!
//! Every connection is registered once, edge-triggered, for `EPOLLIN | EPOLLOUT | EPOLLRDHUP`, and
//! never modified: an `EPOLLOUT` edge only comes after a send found the socket buffer full
//! (`sk_stream_write_space` wakes only with `SOCK_NOSPACE` set), so keeping it registered
//! costs nothing on the fast path and saves two `epoll_ctl` calls per partial send.
//!
//! When one wait reports several connections, their `recv`s go to the kernel as one batch
//! and, once every request of the batch is answered, their `send`s as another
//! ([`twelve_sys::uring::Batch`], one `io_uring_enter` each): with N connections ready that is
//! 2 syscalls instead of 2N. Whatever a batch leaves to do (a full read buffer, a partial
//! send, a file body, a shutdown) goes through [`pump`] as a lone connection would. Where
//! io_uring is unavailable every connection goes through [`pump`].

use super::{Io, Received, Sent, Verdict, after_recv, after_send, pump, reads_first};
use crate::conn::{Conn, Ctx, Phase};
use crate::metrics::WorkerMetrics;
use crate::timer::{Entry, Wheel};
use rustix::event::epoll::{self, CreateFlags, EventData, EventFlags};
use rustix::io::Errno;
use rustix::net::{RecvFlags, SendFlags, Shutdown, SocketFlags};
use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use twelve_sys::uring::{Batch, Op};

/// Token of the wake-up eventfd.
const WAKE: u64 = u64::MAX;
/// Tokens of listeners: `LISTENER_BASE - i`.
const LISTENER_BASE: u64 = u64::MAX - 1;
/// How long a listener rests after EMFILE/ENFILE before accepting again.
const EMFILE_PAUSE_MS: u64 = 100;
/// A listener's events: level-triggered, so that the worker may accept one connection per
/// report and let the next `epoll_wait`, which the loop makes anyway, say whether more are
/// queued (see [`Worker::on_listener`]).
const LISTEN: EventFlags = EventFlags::IN;
/// Events taken per `epoll_wait`.
const EVENTS: usize = 512;
/// Operations per `io_uring_enter` of a batch (larger batches take several).
const BATCH_ENTRIES: u32 = 256;
/// Fewest ready connections worth a batch: one connection's `recv` and `send` are two
/// syscalls either way, and plain ones cost less than io_uring's.
const MIN_BATCH: usize = 2;

/// Everything one worker owns, handed to it by the server.
pub(crate) struct WorkerSetup {
    pub(crate) cpu: usize,
    pub(crate) listeners: Vec<OwnedFd>,
    pub(crate) wake: Arc<OwnedFd>,
    pub(crate) stop: Arc<AtomicBool>,
    pub(crate) ctx: Ctx,
    pub(crate) max_conns: usize,
    pub(crate) drain_timeout_ms: u64,
    pub(crate) check_steering: bool,
    pub(crate) close_idle_on_drain: bool,
}

/// The real socket, for [`pump`].
struct Socket<'a>(BorrowedFd<'a>);

impl Io for Socket<'_> {
    #[inline]
    fn recv(&mut self, buf: &mut Vec<u8>) -> Result<usize, Errno> {
        rustix::net::recv(
            self.0,
            rustix::buffer::spare_capacity(buf),
            RecvFlags::empty(),
        )
        .map(|(n, _)| n)
    }

    #[inline]
    fn send(&mut self, bytes: &[u8]) -> Result<usize, Errno> {
        rustix::net::send(self.0, bytes, SendFlags::NOSIGNAL)
    }

    fn sendfile(&mut self, file: &File, offset: u64, len: usize) -> Result<usize, Errno> {
        let mut off = offset;
        rustix::fs::sendfile(self.0, file, Some(&mut off), len)
    }

    fn shutdown_write(&mut self) -> Result<(), Errno> {
        rustix::net::shutdown(self.0, Shutdown::Write)
    }
}

struct Live {
    fd: OwnedFd,
    conn: Conn,
}

/// A worker's connections, indexed by the low 32 bits of their token; the high 32 bits are a
/// generation, so a stale timer entry or event never reaches a recycled slot.
struct Slab {
    slots: Vec<Option<Live>>,
    gens: Vec<u32>,
    free: Vec<u32>,
    len: usize,
}

impl Slab {
    fn get(&mut self, token: u64) -> Option<&mut Live> {
        let idx = (token & 0xffff_ffff) as usize;
        let gen_ = (token >> 32) as u32;
        if self.gens.get(idx) != Some(&gen_) {
            return None;
        }
        self.slots[idx].as_mut()
    }

    fn insert(&mut self, live: Live) -> u64 {
        let idx = match self.free.pop() {
            Some(i) => i as usize,
            None => {
                self.slots.push(None);
                self.gens.push(0);
                self.slots.len() - 1
            }
        };
        self.slots[idx] = Some(live);
        self.len += 1;
        (u64::from(self.gens[idx]) << 32) | idx as u64
    }

    fn remove(&mut self, token: u64) -> Option<Live> {
        let idx = (token & 0xffff_ffff) as usize;
        let live = self.slots[idx].take()?;
        self.gens[idx] = self.gens[idx].wrapping_add(1);
        self.free.push(idx as u32);
        self.len -= 1;
        Some(live)
    }

    fn tokens(&self) -> Vec<u64> {
        (0..self.slots.len())
            .filter(|&i| self.slots[i].is_some())
            .map(|i| (u64::from(self.gens[i]) << 32) | i as u64)
            .collect()
    }
}

struct Worker {
    epoll: OwnedFd,
    setup: WorkerSetup,
    slab: Slab,
    wheel: Wheel,
    due: Vec<Entry>,
    /// EMFILE/ENFILE pause: accept again at this time.
    paused_until: Option<u64>,
    /// Stopped accepting at `max_conns`; accept again when a connection closes.
    full: bool,
    /// Loop turns so far, and the turn in which each listener was last reported ready.
    turn: u64,
    listener_turns: Vec<u64>,
    drain_deadline: Option<u64>,
    epoch: Instant,
    /// `None` where io_uring is unavailable: every connection then goes through [`pump`].
    batch: Option<Batch>,
    /// Connections reported ready by the last wait, with whether they are readable.
    ready: Vec<(u64, bool)>,
    /// A batch's operations and, for each, its connection and the read space it offered.
    ops: Vec<Op>,
    op_tokens: Vec<(u64, usize)>,
    /// Connections a batch handled, each with whether it must read again, for [`pump`].
    finish: Vec<(u64, bool)>,
}

/// The monotonic clock in milliseconds since the worker started.
///
/// Through std's `Instant` (glibc's vDSO `clock_gettime`), not rustix's own vDSO parser,
/// which crashes under valgrind: the bench scripts count instructions with callgrind.
fn now_ms(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Runs a worker until it has drained after a stop request. The caller pinned the thread.
pub(crate) fn run(setup: WorkerSetup, ready: impl FnOnce(std::io::Result<()>)) {
    let epoll = match prepare(&setup) {
        Ok(e) => e,
        Err(e) => return ready(Err(e)),
    };
    ready(Ok(()));
    // Start at 1 ms: a timer deadline of 0 means "none" in `Conn::timer_at`.
    let epoch = Instant::now()
        .checked_sub(std::time::Duration::from_millis(1))
        .unwrap_or_else(Instant::now);
    let now = now_ms(epoch);
    let tick = crate::config::Timeouts::TICK.as_millis() as u64;
    let setup_listeners = setup.listeners.len();
    let mut w = Worker {
        epoll,
        setup,
        slab: Slab {
            slots: Vec::new(),
            gens: Vec::new(),
            free: Vec::new(),
            len: 0,
        },
        wheel: Wheel::new(now, tick),
        epoch,
        due: Vec::new(),
        paused_until: None,
        full: false,
        turn: 0,
        listener_turns: vec![0; setup_listeners],
        drain_deadline: None,
        batch: Batch::new(BATCH_ENTRIES).ok(),
        ready: Vec::new(),
        ops: Vec::new(),
        op_tokens: Vec::new(),
        finish: Vec::new(),
    };
    w.run();
}

fn prepare(setup: &WorkerSetup) -> std::io::Result<OwnedFd> {
    let ep = epoll::create(CreateFlags::CLOEXEC)?;
    for (i, l) in setup.listeners.iter().enumerate() {
        epoll::add(&ep, l, EventData::new_u64(LISTENER_BASE - i as u64), LISTEN)?;
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
        self.setup.ctx.metrics()
    }

    fn run(&mut self) {
        let mut events = twelve_sys::epoll::Events::with_capacity(EVENTS);
        // One clock read per wake-up: the time after `epoll_wait` serves the whole iteration
        // and the next one's timeout computation.
        let mut now = now_ms(self.epoch);
        loop {
            if let Some(d) = self.drain_deadline
                && (self.slab.len == 0 || now >= d)
            {
                self.close_all();
                return;
            }
            let timeout = self
                .timeout_ms(now)
                .map_or(-1, |ms| i32::try_from(ms).unwrap_or(i32::MAX));
            match twelve_sys::epoll::wait(self.epoll.as_fd(), &mut events, timeout) {
                Ok(_) => {}
                // A profiler or strace attaching interrupts the wait: just wait again.
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    // Only a bug (EBADF, EINVAL) gets here; say so rather than vanish.
                    eprintln!(
                        "twelve-engine: worker on CPU {}: epoll_wait: {e}",
                        self.setup.cpu
                    );
                    return;
                }
            }
            now = now_ms(self.epoch);
            self.turn += 1;
            // The responses of this wake-up carry the Date read here: one clock read per
            // wake-up instead of one per response (a pipelined batch has 16 of them).
            twelve_http::refresh_date();
            for (bits, token) in events.iter() {
                let flags = EventFlags::from_bits_retain(bits);
                if token == WAKE {
                    self.on_wake(now);
                } else if token > LISTENER_BASE - self.setup.listeners.len() as u64 {
                    self.on_listener((LISTENER_BASE - token) as usize, now);
                } else if flags.contains(EventFlags::ERR) {
                    self.on_error(token);
                } else {
                    let readable = flags.intersects(
                        EventFlags::IN | EventFlags::RDHUP | EventFlags::HUP | EventFlags::ERR,
                    );
                    self.ready.push((token, readable));
                }
            }
            self.drive_ready(now);
            self.expire_timers(now);
            // Resumed listeners report what is queued at the next wait (level-triggered).
            if self.paused_until.is_some_and(|t| now >= t) {
                self.paused_until = None;
                self.listen(true);
            }
            if self.full && self.slab.len < self.setup.max_conns {
                self.full = false;
                self.listen(true);
            }
        }
    }

    fn timeout_ms(&self, now: u64) -> Option<u64> {
        let mut t = self.wheel.timeout_ms(now);
        if let Some(p) = self.paused_until {
            let left = p.saturating_sub(now);
            t = Some(t.map_or(left, |x| x.min(left)));
        }
        if let Some(d) = self.drain_deadline {
            let left = d.saturating_sub(now);
            t = Some(t.map_or(left, |x| x.min(left)));
        }
        t
    }

    /// Runs the connections of the last wait: batched where that saves syscalls.
    fn drive_ready(&mut self, now: u64) {
        let ready = std::mem::take(&mut self.ready);
        match self.batch.take() {
            Some(mut batch) if ready.len() >= MIN_BATCH => {
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

    /// One batched `recv` for every connection that reads, the requests answered, one batched
    /// `send` of every response, then [`pump`] for whatever is left (usually nothing, and no
    /// syscall). Each result is applied by the rules `pump` applies its own with
    /// ([`after_recv`], [`after_send`]).
    fn drive_batch(&mut self, batch: &mut Batch, ready: &[(u64, bool)], now: u64) {
        let mut finish = std::mem::take(&mut self.finish);
        self.batch_recv(batch, ready, now, &mut finish);
        self.batch_send(batch, &finish, now);
        for &(token, read_again) in &finish {
            // What `pump` would conclude, without running it: keep waiting.
            if !read_again && self.slab.get(token).is_some_and(|l| l.conn.settled()) {
                self.sync_timer(token);
            } else {
                self.drive(token, read_again, now);
            }
        }
        finish.clear();
        self.finish = finish;
    }

    /// The batch's `recv`s: one for each ready connection that reads first (see
    /// [`reads_first`]). Pushes every connection still open to `finish`, with whether
    /// [`pump`] must read again; a failed socket is closed here.
    fn batch_recv(
        &mut self,
        batch: &mut Batch,
        ready: &[(u64, bool)],
        now: u64,
        finish: &mut Vec<(u64, bool)>,
    ) {
        let mut ops = std::mem::take(&mut self.ops);
        let mut tokens = std::mem::take(&mut self.op_tokens);
        let ctx = &mut self.setup.ctx;
        for &(token, readable) in ready {
            let Some(live) = self.slab.get(token) else {
                continue;
            };
            if reads_first(&live.conn, readable)
                && let Some(buf) = live.conn.lend_read(ctx)
            {
                tokens.push((token, buf.capacity() - buf.len()));
                ops.push(Op::new(live.fd.as_raw_fd(), buf, 0));
            } else {
                finish.push((token, readable));
            }
        }
        batch.recv(&mut ops);
        for (op, &(token, space)) in ops.drain(..).zip(&tokens) {
            let Some(live) = self.slab.get(token) else {
                continue;
            };
            live.conn.restore_read(op.buf);
            let ctx = &mut self.setup.ctx;
            match after_recv(&mut live.conn, op.result, space, now, ctx) {
                Received::More => finish.push((token, true)),
                Received::Done => finish.push((token, false)),
                Received::Failed => {
                    self.metrics().resets.inc();
                    self.close(token);
                }
            }
        }
        tokens.clear();
        (self.ops, self.op_tokens) = (ops, tokens);
    }

    /// The batch's `send`s: one for each connection of `finish` with response bytes due.
    /// What a send leaves (a partial send, EAGAIN, a file body) is `pump`'s; a failed socket
    /// is closed here.
    fn batch_send(&mut self, batch: &mut Batch, finish: &[(u64, bool)], now: u64) {
        let mut ops = std::mem::take(&mut self.ops);
        let mut tokens = std::mem::take(&mut self.op_tokens);
        for &(token, _) in finish {
            // A closed connection (timed out) sends nothing more, as in `pump`.
            if let Some(live) = self.slab.get(token)
                && live.conn.phase() != Phase::Closed
                && let Some((buf, start)) = live.conn.lend_write()
            {
                tokens.push((token, 0));
                ops.push(Op::new(live.fd.as_raw_fd(), buf, start));
            }
        }
        batch.send(&mut ops);
        for (op, &(token, _)) in ops.drain(..).zip(&tokens) {
            let Some(live) = self.slab.get(token) else {
                continue;
            };
            live.conn.restore_write(op.buf);
            match after_send(&mut live.conn, op.result, now, &mut self.setup.ctx) {
                Sent::More | Sent::Blocked | Sent::Truncated => {}
                Sent::Failed => {
                    self.metrics().resets.inc();
                    self.close(token);
                }
            }
        }
        tokens.clear();
        (self.ops, self.op_tokens) = (ops, tokens);
    }

    /// Runs one connection and applies the verdict.
    fn drive(&mut self, token: u64, readable: bool, now: u64) {
        let Some(live) = self.slab.get(token) else {
            return;
        };
        let mut io = Socket(live.fd.as_fd());
        let verdict = pump(&mut live.conn, &mut io, readable, now, &mut self.setup.ctx);
        match verdict {
            Verdict::Open => self.sync_timer(token),
            Verdict::Close => self.close(token),
            Verdict::Reset => {
                self.metrics().resets.inc();
                self.close(token);
            }
        }
    }

    /// Puts the connection's deadline on the wheel unless an entry at or before it exists.
    fn sync_timer(&mut self, token: u64) {
        let t = self.setup.ctx.timeouts;
        let Some(live) = self.slab.get(token) else {
            return;
        };
        if let Some((at, _)) = live.conn.deadline(&t)
            && (live.conn.timer_at == 0 || at < live.conn.timer_at)
        {
            live.conn.timer_at = at;
            self.wheel.insert(token, at);
        }
    }

    fn expire_timers(&mut self, now: u64) {
        let mut due = std::mem::take(&mut self.due);
        self.wheel.expire(now, &mut due);
        for e in due.drain(..) {
            let t = self.setup.ctx.timeouts;
            let Some(live) = self.slab.get(e.token) else {
                continue;
            };
            if live.conn.timer_at != e.at_ms {
                continue; // superseded by an earlier entry
            }
            live.conn.timer_at = 0;
            match live.conn.deadline(&t) {
                Some((at, kind)) if at <= now => {
                    live.conn.on_timeout(kind, &mut self.setup.ctx);
                    self.drive(e.token, false, now);
                }
                Some(_) | None => self.sync_timer(e.token),
            }
        }
        self.due = due;
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
            let m = self.metrics();
            m.closes.inc();
            m.open_conns.set(self.slab.len as u64);
        }
    }

    fn close_all(&mut self) {
        for token in self.slab.tokens() {
            self.close(token);
        }
    }

    /// Takes everything queued on every listener (the drain, before the listeners close).
    fn accept_all(&mut self, now: u64) {
        for i in 0..self.setup.listeners.len() {
            self.accept(i, now, true);
        }
    }

    /// Listener `i` was reported ready: accept one connection, or, when it was ready in the
    /// previous turn too (a backlog is building), everything queued.
    ///
    /// The listener is level-triggered, so while connections stay queued every `epoll_wait`
    /// reports it again: one `accept4` per report needs no further `accept4` to find the
    /// queue empty (EAGAIN), which an edge-triggered listener must make after every wake-up.
    /// Connections that come one at a time (HttpArena's limited-conn, or any client that is
    /// not flooding) so cost one syscall less each. But one per report alone would cost a
    /// loop turn (an `epoll_wait` and a smaller batch) per queued connection when many
    /// queue up at once, as they do behind a CPU cap; a listener reported in two turns in a
    /// row is drained until EAGAIN instead.
    fn on_listener(&mut self, i: usize, now: u64) {
        let Some(last) = self.listener_turns.get_mut(i) else {
            return;
        };
        let backlog = *last + 1 == self.turn;
        *last = self.turn;
        self.accept(i, now, backlog);
    }

    /// `accept4` one connection (`all`: until EAGAIN), unless paused, or full at
    /// `max_conns`, or out of descriptors (EMFILE), which pause the listeners.
    fn accept(&mut self, i: usize, now: u64, all: bool) {
        if self.paused_until.is_some() || self.full {
            return;
        }
        loop {
            if self.slab.len >= self.setup.max_conns {
                // Leave the rest in the accept queue; resumed when a connection closes.
                self.full = true;
                self.metrics().max_conns_pauses.inc();
                self.listen(false);
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
                    // Out of descriptors: the queued connection stays queued; rest instead of
                    // spinning on the error (the level-triggered listener would report it at
                    // every wait).
                    self.paused_until = Some(now + EMFILE_PAUSE_MS);
                    self.metrics().emfile_pauses.inc();
                    self.listen(false);
                    return;
                }
                Err(_) => return,
            };
            self.add_conn(fd, now);
            if !all {
                return;
            }
        }
    }

    /// Stops (`false`) or resumes (`true`) the listeners' reports: a paused level-triggered
    /// listener with connections queued would otherwise end every wait at once.
    fn listen(&mut self, on: bool) {
        let flags = if on { LISTEN } else { EventFlags::empty() };
        for (i, l) in self.setup.listeners.iter().enumerate() {
            let data = EventData::new_u64(LISTENER_BASE - i as u64);
            // Only EBADF/EINVAL/ENOENT could fail here, none of which a listener can cause.
            let _ = epoll::modify(&self.epoll, l, data, flags);
        }
    }

    fn add_conn(&mut self, fd: OwnedFd, now: u64) {
        // TCP_NODELAY is inherited from the listener (see `twelve_sys::net::ListenerOptions`).
        let m = self.setup.ctx.metrics();
        m.accepts.inc();
        if self.setup.check_steering
            && twelve_sys::net::incoming_cpu(fd.as_fd()).ok() != Some(self.setup.cpu as u32)
        {
            m.steer_misses.inc();
        }
        let token = self.slab.insert(Live {
            fd,
            conn: Conn::new(now),
        });
        let live = self.slab.get(token).expect("just inserted");
        let flags = EventFlags::IN | EventFlags::OUT | EventFlags::RDHUP | EventFlags::ET;
        if epoll::add(&self.epoll, &live.fd, EventData::new_u64(token), flags).is_err() {
            self.close(token);
            return;
        }
        self.metrics().open_conns.set(self.slab.len as u64);
        self.sync_timer(token);
    }

    fn on_wake(&mut self, now: u64) {
        let mut buf = [0u8; 8];
        let _ = rustix::io::read(&*self.setup.wake, &mut buf);
        if !self.setup.stop.load(Ordering::Acquire) || self.drain_deadline.is_some() {
            return;
        }
        // Stop accepting: take what is already queued (closing a reuseport listener resets
        // its queued connections, docs/kernel-facts.md), then close the listeners.
        self.setup.ctx.draining = true;
        self.paused_until = None;
        self.full = false;
        let max = self.setup.max_conns;
        self.setup.max_conns = usize::MAX;
        self.accept_all(now);
        self.setup.max_conns = max;
        for l in self.setup.listeners.drain(..) {
            let _ = epoll::delete(&self.epoll, &l);
        }
        self.drain_deadline = Some(now + self.setup.drain_timeout_ms);
        if !self.setup.close_idle_on_drain {
            return;
        }
        for token in self.slab.tokens() {
            if let Some(live) = self.slab.get(token) {
                live.conn.start_drain();
                if live.conn.phase() == Phase::Closed {
                    self.close(token);
                }
            }
        }
    }
}
