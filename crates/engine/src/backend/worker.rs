//! What a worker is whichever backend runs it: the setup the server hands it, its clock, when
//! it accepts (EMFILE pause, `max_conns`, drain), and the books it keeps on connections.

use super::deadlines::Timers;
use super::slab::Slab;
use crate::conn::{Conn, Ctx, Phase, TimeoutsMs};
use crate::metrics::{TimeoutKind, WorkerMetrics};
use std::os::fd::{BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a worker rests its listeners after EMFILE/ENFILE before accepting again.
const EMFILE_PAUSE_MS: u64 = 100;

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
    /// `Config::coalesce`.
    pub(crate) coalesce: crate::config::Coalesce,
    /// `Config::min_batch` (at least 2: one connection is never a batch).
    pub(crate) min_batch: usize,
    /// Terminate TLS on the connections of the listeners marked in
    /// `tls_listeners` (by index; empty: every listener).
    pub(crate) tls: Option<Arc<twelve_tls::ServerTls>>,
    pub(crate) tls_listeners: Vec<bool>,
    /// `Config::tls_http11_listen`.
    pub(crate) tls_http11_listeners: Vec<bool>,
    /// `Config::h2c_listen`.
    pub(crate) h2c_listeners: Vec<bool>,
    /// The worker's request count when it last counted a batch (see [`Self::end_turn`]).
    pub(crate) served: u64,
    /// Held while the worker may still take connections: dropped once it has stopped (see
    /// [`AcceptToken`]), or when the worker ends.
    pub(crate) accepting: Option<AcceptToken>,
}

/// A worker's "still accepting" token: a sender of a channel that carries nothing, whose
/// receiver `ServerHandle::shutdown` waits on. A worker drops its token once it takes no more
/// connections (or when it ends); when every token is gone the receiver reports the channel
/// disconnected. A worker's stop is asynchronous (its eventfd wakes it at its next loop turn),
/// and without the wait a successor generation announced ready while the old workers still
/// accept would have its first connections answered by the old generation (tests/tls_cli.rs,
/// `an_upgrade_keeps_plain_and_tls_listeners_apart`).
pub(crate) type AcceptToken = std::sync::mpsc::Sender<()>;

impl WorkerSetup {
    /// The TLS configuration for connections accepted on listener `i`, if it speaks TLS.
    pub(crate) fn tls_for(&self, i: usize) -> Option<&Arc<twelve_tls::ServerTls>> {
        let on = self.tls_listeners.get(i).copied().unwrap_or(true);
        self.tls.as_ref().filter(|_| on)
    }

    /// A TLS session for a connection accepted on listener `i`, if it speaks TLS, offering
    /// the ALPN protocols the listener speaks.
    pub(crate) fn tls_session(&self, i: usize) -> Option<twelve_tls::Session> {
        let tls = self.tls_for(i)?;
        Some(
            if self.tls_http11_listeners.get(i).copied().unwrap_or(false) {
                tls.session_http11()
            } else {
                tls.session()
            },
        )
    }

    /// Whether listener `i` speaks HTTP/2 only (h2c with prior knowledge).
    pub(crate) fn h2c_for(&self, i: usize) -> bool {
        self.h2c_listeners.get(i).copied().unwrap_or(false)
    }

    /// A new connection on listener `i`, speaking what the listener speaks.
    pub(crate) fn new_conn(&mut self, i: usize, tls: bool, now: u64) -> Conn {
        if tls {
            Conn::new_tls(now)
        } else if self.h2c_for(i) {
            Conn::new_h2c(now, &mut self.ctx)
        } else {
            Conn::new(now)
        }
    }
}

impl WorkerSetup {
    pub(crate) fn metrics(&self) -> &WorkerMetrics {
        self.ctx.metrics()
    }

    /// Ends a loop turn that found `ready` events (connections, and the runtime's sockets)
    /// while `owed` answers were owed to the runtime's sockets: counts it as a batch if it
    /// answered a request (a turn that only reaped send completions or closes is not one),
    /// then naps if `Config::coalesce` asks for it (see [`crate::Coalesce`]); `true` if it
    /// napped. Never naps while draining, so a stop is not slowed down.
    pub(crate) fn end_turn(&mut self, ready: usize, owed: usize, draining: bool) -> bool {
        let served = self.metrics().requests.get();
        if served != self.served {
            self.served = served;
            self.metrics().batches.inc();
        }
        match self.coalesce.nap(ready, owed) {
            Some(nap) if !draining => {
                std::thread::sleep(nap);
                self.metrics().naps.inc();
                true
            }
            _ => false,
        }
    }

    /// Consumes the wake-up eventfd's count; `true` when the server asked to stop (the
    /// caller begins draining unless it already has).
    pub(crate) fn woken_to_stop(&self) -> bool {
        let mut buf = [0u8; 8];
        let _ = rustix::io::read(&*self.wake, &mut buf);
        self.stop.load(Ordering::Acquire)
    }

    /// Counts a connection just accepted and, when asked, whether the kernel steered it to
    /// this worker's CPU. TCP_NODELAY is inherited from the listener (see
    /// `twelve_sys::net::ListenerOptions`).
    pub(crate) fn count_accept(&self, fd: BorrowedFd<'_>) {
        let m = self.metrics();
        m.accepts.inc();
        if self.check_steering && twelve_sys::net::incoming_cpu(fd).ok() != Some(self.cpu as u32) {
            m.steer_misses.inc();
        }
    }

    /// Says why the worker ends early: only a bug (EBADF, EINVAL) makes its wait fail, so
    /// say so rather than vanish.
    pub(crate) fn wait_failed(&self, call: &str, e: &dyn std::fmt::Display) {
        eprintln!("twelve-engine: worker on CPU {}: {call}: {e}", self.cpu);
    }

    /// Counts a connection closed, `open` being how many are left.
    pub(crate) fn count_close(&self, open: usize) {
        let m = self.metrics();
        m.closes.inc();
        m.open_conns.set(open as u64);
    }
}

/// A backend's record of one connection, as the code both backends share sees it.
pub(crate) trait Tracked {
    fn conn(&mut self) -> &mut Conn;
    /// When and why the connection's timer fires next: [`Conn::deadline`], unless the
    /// backend knows better (the io_uring backend while a send has the output buffer).
    fn deadline(&self, t: &TimeoutsMs) -> Option<(u64, TimeoutKind)>;
    /// Nothing of the connection is in the kernel's hands (a send, a cancellation), so the
    /// drain may close it now if it is idle.
    fn at_rest(&self) -> bool;
    /// A body timeout came due: if the socket holds back bytes below a raised receive
    /// low-water mark, lower the mark (the bytes then wake the worker, and the connection
    /// reads them) and say so, so the timeout waits a tick more; `false` otherwise.
    fn release_low_water(&mut self) -> bool {
        false
    }
}

/// A backend's worker, as the code both backends share drives it.
pub(crate) trait Driver {
    type Live: Tracked;
    /// The worker's timers, connections and context, borrowed together.
    fn parts(&mut self) -> (&mut Timers, &mut Slab<Self::Live>, &mut Ctx);
    /// Runs a connection just told of its timeout (`Conn::on_timeout`), as after an event.
    fn run_expired(&mut self, token: u64, now: u64);
    /// Closes a connection (counted, its buffers back in the pool).
    fn close(&mut self, token: u64);
}

/// The drain's first step for HTTP/2: every connection at rest that speaks it is sent its
/// GOAWAY now (`Conn::drain_h2`), idle or not, so its client opens no new stream on it; it
/// closes once its open streams are answered. (One with a send under way gets its GOAWAY at
/// its next turn, from `ctx.draining`.)
pub(crate) fn announce_drain<W: Driver>(w: &mut W, now: u64) {
    for token in w.parts().1.tokens() {
        if let Some(live) = w.parts().1.get(token)
            && live.at_rest()
            && live.conn().drain_h2()
        {
            w.run_expired(token, now);
        }
    }
}

/// The drain's next step with `close_idle_on_drain`: every HTTP/1.1 connection idle and at
/// rest closes now; the others close after their current response.
pub(crate) fn close_idle<W: Driver>(w: &mut W) {
    for token in w.parts().1.tokens() {
        if let Some(live) = w.parts().1.get(token)
            && live.at_rest()
            && !live.conn().is_h2()
        {
            live.conn().start_drain();
            if live.conn().phase() == Phase::Closed {
                w.close(token);
            }
        }
    }
}

/// A worker's monotonic clock in milliseconds since it started.
///
/// Through std's `Instant` (glibc's vDSO `clock_gettime`), not rustix's own vDSO parser,
/// which crashes under valgrind: the bench scripts count instructions with callgrind. The
/// backends read it once per wake-up: the time after the wait serves the whole turn and the
/// next wait's timeout.
pub(crate) struct Clock {
    epoch: Instant,
    /// Worker-clock ms at which the wall clock's second next changes: the `Date` is read again
    /// then, and wake-ups before it read the monotonic clock only.
    date_until_ms: u64,
}

impl Clock {
    /// A clock that reads 1 ms now: a timer deadline of 0 means "none" in `Conn::timer_at`.
    pub(crate) fn start() -> Self {
        let epoch = Instant::now()
            .checked_sub(Duration::from_millis(1))
            .unwrap_or_else(Instant::now);
        Self {
            epoch,
            date_until_ms: 0,
        }
    }

    /// The time since the clock's zero, unrounded (for the alarm, which fires at a time on it).
    pub(crate) fn elapsed(&self) -> Duration {
        self.epoch.elapsed()
    }

    #[inline]
    pub(crate) fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The time, read once the wait is over. The responses of this wake-up carry the `Date`
    /// held since the wall clock's second last changed: one clock read per wake-up, the wall
    /// clock's too only when its second is due to change (a step of the wall clock shows
    /// within a second), instead of one per response (a pipelined batch has 16 of them).
    #[inline]
    pub(crate) fn woke(&mut self) -> u64 {
        let now = self.now_ms();
        if now >= self.date_until_ms {
            self.date_until_ms = now.saturating_add(self.refresh_date());
        }
        now
    }

    /// Holds the wall clock's second for this thread's `Date`; returns the ms until that
    /// second ends (at least 1).
    #[cold]
    fn refresh_date(&self) -> u64 {
        // Read before the held second: should the second change between the two reads, the
        // hold ends early (one more read), never late.
        let into = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::from(d.subsec_millis()));
        twelve_http::refresh_date();
        date_hold_ms(into)
    }
}

/// How long a `Date` read `into_ms` into its second stays right (ms, at least 1; to the
/// millisecond, as both clocks are read in whole ms).
fn date_hold_ms(into_ms: u64) -> u64 {
    1000u64.saturating_sub(into_ms).max(1)
}

/// Whether a worker accepts: resting after EMFILE, full at `max_conns`, or closed for good by
/// a drain, whose deadline also bounds the worker's life.
#[derive(Default)]
pub(crate) struct Gate {
    /// EMFILE/ENFILE pause: accept again at this time.
    paused_until: Option<u64>,
    /// Stopped accepting at `max_conns`; accept again when a connection closes.
    full: bool,
    drain_deadline: Option<u64>,
}

impl Gate {
    pub(crate) fn accepting(&self) -> bool {
        self.paused_until.is_none() && !self.full && self.drain_deadline.is_none()
    }

    pub(crate) fn draining(&self) -> bool {
        self.drain_deadline.is_some()
    }

    /// Out of descriptors: the queued connection stays queued; rest instead of spinning on
    /// (or failing every queued connection with) the error. `true` if this began the rest.
    pub(crate) fn pause(&mut self, now: u64, m: &WorkerMetrics) -> bool {
        if self.paused_until.is_some() {
            return false;
        }
        self.paused_until = Some(now + EMFILE_PAUSE_MS);
        m.emfile_pauses.inc();
        true
    }

    /// With `open` connections at `max` or more, stops accepting (the rest wait in the accept
    /// queue until a connection closes). `true` if this stopped it.
    pub(crate) fn fill(&mut self, open: usize, max: usize, m: &WorkerMetrics) -> bool {
        if open < max || self.full {
            return false;
        }
        self.full = true;
        m.max_conns_pauses.inc();
        true
    }

    /// Ends a pause that is over and a stop at `max` that has room again; `true` if either
    /// ended, and the worker should accept again.
    pub(crate) fn reopen(&mut self, now: u64, open: usize, max: usize) -> bool {
        let rested = self.paused_until.is_some_and(|t| now >= t);
        if rested {
            self.paused_until = None;
        }
        let room = self.room(open, max);
        rested || room
    }

    /// Ends a stop at `max` that has room again (`open` below `max`); `true` if it ended.
    pub(crate) fn room(&mut self, open: usize, max: usize) -> bool {
        let room = self.full && open < max;
        if room {
            self.full = false;
        }
        room
    }

    /// Forgets any pause or stop at `max`: the drain takes what is queued whatever they said.
    pub(crate) fn lift(&mut self) {
        self.paused_until = None;
        self.full = false;
    }

    /// Closes the gate for good; the worker ends by `now + timeout_ms`.
    pub(crate) fn start_drain(&mut self, now: u64, timeout_ms: u64) {
        self.drain_deadline = Some(now + timeout_ms);
    }

    /// The drain is over: every connection closed, or its deadline passed.
    pub(crate) fn drained(&self, open: usize, now: u64) -> bool {
        self.drain_deadline.is_some_and(|d| open == 0 || now >= d)
    }

    /// How long the worker may wait: until the wheel's next deadline (`wheel_ms`), the end of
    /// a pause, or the drain's deadline, whichever comes first; `None`: no limit.
    pub(crate) fn timeout_ms(&self, wheel_ms: Option<u64>, now: u64) -> Option<u64> {
        let mut t = wheel_ms;
        for limit in [self.paused_until, self.drain_deadline]
            .into_iter()
            .flatten()
        {
            let left = limit.saturating_sub(now);
            t = Some(t.map_or(left, |x| x.min(left)));
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metrics() -> WorkerMetrics {
        WorkerMetrics::default()
    }

    #[test]
    fn pause_counts_once_and_reopens_when_over() {
        let (m, mut g) = (metrics(), Gate::default());
        assert!(g.pause(10, &m));
        assert!(!g.pause(20, &m), "already resting");
        assert_eq!(m.emfile_pauses.get(), 1);
        assert!(!g.accepting());
        assert_eq!(g.timeout_ms(None, 10), Some(EMFILE_PAUSE_MS));
        assert!(!g.reopen(10 + EMFILE_PAUSE_MS - 1, 0, 1));
        assert!(g.reopen(10 + EMFILE_PAUSE_MS, 0, 1));
        assert!(g.accepting());
    }

    #[test]
    fn full_counts_once_and_reopens_with_room() {
        let (m, mut g) = (metrics(), Gate::default());
        assert!(!g.fill(1, 2, &m), "room left");
        assert!(g.fill(2, 2, &m));
        assert!(!g.fill(3, 2, &m), "already full");
        assert_eq!(m.max_conns_pauses.get(), 1);
        assert!(!g.reopen(0, 2, 2));
        assert!(g.reopen(0, 1, 2));
        assert!(g.accepting());
    }

    #[test]
    fn a_date_is_held_to_the_end_of_its_second() {
        // (ms into the second, ms held)
        for (into, held) in [(0, 1000), (1, 999), (999, 1), (1000, 1), (5000, 1)] {
            assert_eq!(date_hold_ms(into), held, "{into}");
        }
    }

    #[test]
    fn a_clock_reads_the_date_again_only_once_its_second_is_over() {
        let mut c = Clock::start();
        let now = c.woke();
        let until = c.date_until_ms;
        assert!(until > now && until <= now + 1000, "{now} {until}");
        c.woke();
        assert!(
            c.date_until_ms == until || c.now_ms() >= until,
            "held within the second"
        );
    }

    #[test]
    fn drain_closes_the_gate_and_bounds_the_wait() {
        let mut g = Gate::default();
        assert!(!g.drained(0, 5));
        g.start_drain(5, 100);
        assert!(!g.accepting());
        assert_eq!(g.timeout_ms(Some(500), 5), Some(100));
        assert_eq!(g.timeout_ms(Some(30), 5), Some(30));
        assert!(!g.drained(1, 104));
        assert!(g.drained(1, 105), "deadline");
        assert!(g.drained(0, 6), "nothing left");
    }
}
