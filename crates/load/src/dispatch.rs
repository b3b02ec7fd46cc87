//! The dispatch policy: which connection sends what, and when. Closed model: a connection sends
//! its next pipelined batch when the last is answered (from the `-n` budget when there is
//! one). Open model: a connection with room goes on the ready list, and [`Dispatch::dispatch_due`]
//! hands it every due slot of the shared schedule. Around that: connects and reconnects,
//! `--close` and `--requests-per-conn`, timeouts, and which error class each failure lands in.
//!
//! Every event is booked here at its own time ([`Dispatch::on_event`]): the kernel's receive
//! stamp of the read that brought it, or else the return of the poll that reported it. So a
//! response goes socket → `on_readable` (its event time) → `Conn::next_answer` (the parser)
//! → `on_answer` → `Tally::record`; a connect and a TLS handshake end at their event's time
//! too. What keeps a nap out of those times is `crate::pacing`'s one rule, fed by
//! [`Dispatch::untimed`].
//!
//! It drives [`Conn`]s over an [`Io`], so the epoll worker and the simulation run this same
//! code; the only syscalls it causes are the `Io` calls (per request: one `send`, one `recv`).
use crate::clock::Clock;
use crate::config::{Model, Stop};
use crate::conn::{Answer, Conn, ConnSetup, Failure, Phase, RECV_BUF};
use crate::io::{Io, Readiness};
use crate::phases::Marks;
use crate::tally::Tally;
use crate::worker::Shared;
use rustix::io::Errno;
use std::collections::VecDeque;
use twelve_http::client::HeadMemo;

/// Pause before retrying a failed connect, so a refused port does not spin the CPU.
const CONNECT_BACKOFF_NS: u64 = 10_000_000;

pub(crate) struct Dispatch<'s, C: Clock, I: Io> {
    s: &'s Shared<C>,
    pub(crate) io: I,
    conns: Vec<Conn>,
    /// Open model: connections that may take a request, ready longest first.
    ready: VecDeque<u32>,
    open_now: u64,
    pub(crate) tally: Tally,
    /// Per slot: the phases of the connection's first request.
    marks: Vec<Marks>,
    /// This worker's `{rand}` stream (templated runs).
    rng: u64,
    /// Every connection's reads land here (see `conn`): one buffer per worker.
    rx: Box<[u8]>,
    /// The last response head parsed, shared by the worker's connections
    /// (`twelve_http::client::HeadMemo`).
    heads: HeadMemo,
    /// Slots closed this turn, and those whose back-off ended: opened by
    /// [`Dispatch::reconnect`] just before the next poll.
    reconnect: Vec<u32>,
    /// The connects `reconnect` made, with when each call returned.
    made: Vec<(u32, u64)>,
    /// Whether a connect is done within its call: to a loopback address or a Unix socket, the
    /// kernel runs the whole three-way handshake inside `connect`.
    local: bool,
    /// Slots whose connect is under way, and open slots whose TLS handshake is: events that
    /// carry no time of their own (see `untimed`).
    connecting: u64,
    handshaking: u64,
    /// Whether connections make a TLS handshake first.
    tls: bool,
    /// Open model, HTTP/2: intended starts of slots the server refused unprocessed, sent
    /// again before new ones (`crate::h2::refused`).
    retry: Vec<u64>,
}

impl<'s, C: Clock, I: Io> Dispatch<'s, C, I> {
    /// `conns` connection slots, their URL rotations staggered by `stagger` so pipelined
    /// windows of different workers start on different URLs.
    pub(crate) fn new(s: &'s Shared<C>, io: I, conns: usize, stagger: usize, tally: Tally) -> Self {
        let cfg = &s.config;
        let setup = ConnSetup {
            pipeline: cfg.pipeline,
            // `--close`: the request says `Connection: close` and the client does not wait to
            // learn whether the server honoured it.
            per_conn: if cfg.keep_alive {
                cfg.requests_per_conn
            } else {
                Some(1)
            },
            urls: s.requests.urls(),
            head: s.requests.is_head(),
        };
        let slots = conns;
        let conns = (0..slots)
            .map(|i| {
                let mut c = match cfg.protocol {
                    crate::config::Protocol::H2 { streams } => Conn::new_h2(setup, streams),
                    crate::config::Protocol::Http1 => Conn::new(setup),
                };
                c.start_at_url(stagger + i);
                c
            })
            .collect();
        Self {
            s,
            io,
            conns,
            ready: VecDeque::with_capacity(slots),
            open_now: 0,
            tally,
            marks: vec![Marks::default(); slots],
            // A stream per worker and shard, all from --seed; `stagger` differs per worker.
            rng: cfg.seed
                ^ (stagger as u64)
                    .wrapping_add(cfg.shard.map_or(0, |s| u64::from(s.index) << 32))
                    .wrapping_mul(0xD1B5_4A32_D192_ED03),
            rx: vec![0; RECV_BUF].into_boxed_slice(),
            heads: HeadMemo::default(),
            reconnect: Vec::with_capacity(slots),
            made: Vec::with_capacity(slots),
            local: cfg.unix_socket.is_some()
                || cfg.targets[0].addr.ip().to_canonical().is_loopback(),
            connecting: 0,
            handshaking: 0,
            tls: cfg.tls.is_some() && cfg.targets[0].tls,
            retry: Vec::new(),
        }
    }

    pub(crate) fn open_now(&self) -> u64 {
        self.open_now
    }

    /// Whether an event is pending that would carry no time of its own, so that a nap would
    /// be booked in it (`crate::pacing`): a connect under way (it brings no data, so no
    /// receive stamp; on loopback it is done within its call and seen by the poll that
    /// follows, so none is under way when the worker would nap), or a TLS handshake (the
    /// client's next flight, and the requests rustls holds behind it, leave when the
    /// server's is read).
    pub(crate) fn untimed(&self) -> bool {
        debug_assert_eq!(
            self.connecting,
            self.conns
                .iter()
                .filter(|c| matches!(c.phase(), Phase::Connecting { .. }))
                .count() as u64
        );
        self.connecting + self.handshaking > 0
    }

    /// Whether no connection can be made: every slot's connect failed and none ever opened
    /// (a dead target: the run stops at once rather than retry for its whole duration).
    pub(crate) fn unreachable(&self) -> bool {
        self.tally.unreachable(self.conns.len())
    }

    /// Whether an open-model connection waits for the next due slot.
    pub(crate) fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Whether no connection has a request in flight or reserved.
    pub(crate) fn all_idle(&self) -> bool {
        self.retry.is_empty() && self.conns.iter().all(Conn::is_idle)
    }

    /// Queues the slots whose back-off is over for `reconnect`, and gives up on connects and
    /// requests older than their timeouts. Timeouts are therefore enforced to within one
    /// call's period.
    pub(crate) fn check_conns(&mut self, now: u64) {
        let timeout = self.s.config.timeout.as_nanos() as u64;
        let connect_timeout = self.s.config.connect_timeout.as_nanos() as u64;
        for i in 0..self.conns.len() {
            match self.conns[i].phase() {
                // Opened with the turn's other connects, just before the poll.
                Phase::Closed { retry_at_ns } if retry_at_ns <= now => {
                    self.reconnect.push(i as u32)
                }
                Phase::Connecting { since_ns } if now - since_ns >= connect_timeout => {
                    self.connecting -= 1;
                    self.tally.count(|e| e.connect_timeout += 1);
                    self.tally.connect_failed();
                    self.drop_conn(i, now, false);
                }
                Phase::Open => {
                    if let Some(sent) = self.conns[i].oldest_sent_ns()
                        && now.saturating_sub(sent) >= timeout
                    {
                        // Counted once, then the connection is replaced (wrk2 counts an
                        // overdue request again on every scan: wrk2#105). HTTP/2 bodies still
                        // waiting for a window are flow-control stalls instead.
                        let stalled = self.conns[i].h2_stalled();
                        self.tally.count(|e| match stalled {
                            0 => e.timeout += 1,
                            n => e.h2.stall += n,
                        });
                        self.drop_conn(i, now, true);
                    }
                }
                _ => {}
            }
        }
    }

    fn connect(&mut self, i: usize, now: u64) {
        self.marks[i] = Marks::start(now);
        match self.io.connect(i) {
            Ok(()) => {
                self.conns[i].connecting(now);
                self.connecting += 1;
            }
            Err(e) => self.connect_failed(i, now, e),
        }
    }

    /// Opens the connections closed since the last poll, and those whose back-off ended
    /// (`check_conns`); returns whether it opened any. The worker calls this after any nap and
    /// just before polling, not as each closes, so that a turn that closed connections may
    /// still nap (a connect under way would forbid it: `untimed`). A connect is timed from its
    /// call to its event, the return of the poll that finds it open, less the connects made
    /// after its own where the handshake is done within the call (docs/load-generator.md,
    /// "Pacing: naps and event time").
    pub(crate) fn reconnect(&mut self) -> bool {
        if self.reconnect.is_empty() {
            return false;
        }
        // The turn's closes and sends first (io_uring queues them for its next enter): left
        // for the poll, they would run between these connects and the poll's return.
        self.io.submit();
        let mut slots = std::mem::take(&mut self.reconnect);
        let mut made = std::mem::take(&mut self.made);
        for &i in &slots {
            let i = i as usize;
            // Each connect's own start: the ones before it took a `socket` and a `connect`.
            let now = self.s.clock.now_ns();
            // Housekeeping may have reopened it already (and its connect failed since).
            if matches!(self.conns[i].phase(), Phase::Closed { retry_at_ns } if retry_at_ns <= now)
            {
                self.connect(i, now);
                // When this connect's call returned: until the poll, the client makes the rest.
                made.push((i as u32, self.s.clock.now_ns()));
            }
        }
        // The connects made after a slot's own are the client's time, not the handshake's,
        // where the handshake is done within the `connect` call. To a remote server it may
        // still be under way while the client makes them, and nothing is taken out.
        let end = self.s.clock.now_ns();
        if self.local {
            for &(i, at) in &made {
                let i = i as usize;
                if matches!(self.conns[i].phase(), Phase::Connecting { .. }) {
                    self.marks[i].started_late(end.saturating_sub(at));
                }
            }
        }
        made.clear();
        self.made = made;
        slots.clear();
        self.reconnect = slots;
        true
    }

    fn connect_failed(&mut self, i: usize, now: u64, e: Errno) {
        self.tally.connect_failed();
        if e == Errno::CONNREFUSED {
            self.tally.count(|x| x.connect_refused += 1);
        } else if e == Errno::TIMEDOUT {
            self.tally.count(|x| x.connect_timeout += 1);
        } else {
            // Two limits of the client's own host get their own names (and stay in `other`):
            // no local port for the target (EADDRNOTAVAIL, often TIME_WAIT left by earlier
            // runs) and no descriptor for a socket (EMFILE/ENFILE).
            let no_port = u64::from(e == Errno::ADDRNOTAVAIL);
            let no_fd = u64::from(e == Errno::MFILE || e == Errno::NFILE);
            self.tally.count(|x| {
                x.connect_other += 1;
                x.connect_no_port += no_port;
                x.connect_no_fd += no_fd;
            });
        }
        self.io.close(i);
        self.conns[i].reset(now + CONNECT_BACKOFF_NS);
    }

    /// Closes connection `i` and queues its reconnect; `was_open` keeps the open count.
    fn drop_conn(&mut self, i: usize, now: u64, was_open: bool) {
        if was_open {
            self.open_now -= 1;
        }
        if self.conns[i].take_handshaking() {
            self.handshaking -= 1;
        }
        self.io.close(i);
        if self.work_left(i) {
            // Reconnected before the next poll, as wrk does at once; see `reconnect`.
            self.conns[i].reset(now);
            self.reconnect.push(i as u32);
        } else {
            self.conns[i].reset(u64::MAX);
        }
    }

    /// Whether connection `i` has requests to send once reopened (always, in a timed run).
    /// In a closed `-n` run the next batch is taken from the budget now, before connecting,
    /// so the client never opens a connection it will not use.
    fn work_left(&mut self, i: usize) -> bool {
        match (&self.s.schedule, self.s.config.stop) {
            (_, Stop::Duration(_)) => true,
            (Some(s), Stop::Requests(_)) => s.next_due_ns().is_some() || !self.retry.is_empty(),
            (None, Stop::Requests(_)) => {
                let c = &mut self.conns[i];
                if c.reserved() == 0 {
                    // Taken before the reset: the next connection's quota, not this one's.
                    let want = (self.s.config.pipeline as u64).min(c.quota_when_reopened());
                    c.reserve(self.s.budget.take(want));
                }
                c.reserved() > 0
            }
        }
    }

    /// Handles what a poll that returned at `polled_ns` found ready on one connection: the
    /// poll's return is the time of every event it reported that no receive stamp dates.
    pub(crate) fn on_event(&mut self, ev: Readiness, polled_ns: u64) {
        let i = ev.slot;
        let now = self.s.clock.now_ns();
        match self.conns[i].phase() {
            Phase::Connecting { .. } => self.on_connected(i, polled_ns, now),
            Phase::Open => {
                if ev.writable && self.conns[i].is_writing() {
                    self.resume_send(i, now);
                }
                if ev.readable && self.conns[i].phase() == Phase::Open {
                    self.on_readable(i, polled_ns, now);
                }
            }
            Phase::Closed { .. } => {}
        }
    }

    /// The connect of slot `i` ended `at` (its event time); handled `now`.
    fn on_connected(&mut self, i: usize, at: u64, now: u64) {
        self.connecting -= 1;
        if let Err(e) = self.io.finish_connect(i) {
            self.connect_failed(i, now, e);
            return;
        }
        self.marks[i].connected(at);
        if self.tls {
            self.conns[i].set_handshaking();
            self.handshaking += 1;
        }
        let reconnect = self.conns[i].opened();
        self.open_now += 1;
        self.tally.connected(now, reconnect, self.open_now);
        self.after_response(i, now);
    }

    /// Called when connection `i` may take more requests: the closed model sends its next
    /// batch, the open model puts it on the ready list.
    pub(crate) fn after_response(&mut self, i: usize, now: u64) {
        let c = &mut self.conns[i];
        if c.phase() != Phase::Open || c.is_writing() {
            return;
        }
        match self.s.config.model {
            Model::Closed => {
                let n = if c.is_h2() {
                    // Each free stream takes the next request (see `crate::h2`).
                    crate::h2::closed_batch(c, &self.s.budget)
                } else if c.has_inflight() {
                    return;
                } else {
                    match c.take_reserved() {
                        0 => {
                            let want = (self.s.config.pipeline as u64).min(c.quota());
                            self.s.budget.take(want)
                        }
                        r => r,
                    }
                };
                for _ in 0..n {
                    c.queue(now, now);
                }
                if n > 0 || c.has_output() {
                    self.send_window(i, now);
                }
            }
            Model::Open { .. } => {
                if !c.is_ready() && c.room() > 0 {
                    c.set_ready(true);
                    self.ready.push_back(i as u32);
                }
                if c.has_output() {
                    // HTTP/2's preface, ACKs and window updates do not wait for a due slot.
                    self.send_window(i, now);
                }
            }
        }
    }

    /// Open model: hands every due slot to a ready connection of this worker, the one ready
    /// longest first (round robin). So the load spreads over every connection, as wrk2's
    /// per-connection schedules and oha's shared queue spread it: `-c 16000` at a low rate
    /// means 16,000 connections each asked now and then, not a few kept busy while the rest
    /// sit idle until the server's idle timeout closes them.
    pub(crate) fn dispatch_due(&mut self, now: u64) {
        let Some(schedule) = &self.s.schedule else {
            return;
        };
        while let Some(&i) = self.ready.front() {
            let i = i as usize;
            let c = &mut self.conns[i];
            let room = c.room();
            if room == 0 {
                c.set_ready(false);
                self.ready.pop_front();
                continue;
            }
            let again = crate::h2::resend(&mut self.retry, room, c, now);
            let n = again + schedule.claim(now, room - again, |_, intended| c.queue(intended, now));
            if n == 0 {
                return;
            }
            self.send_window(i, now);
            // Room left (streams, a pipeline) waits its turn behind the other ready ones.
            self.ready.pop_front();
            let c = &mut self.conns[i];
            if c.room() > 0 {
                self.ready.push_back(i as u32);
            } else {
                c.set_ready(false);
            }
        }
    }

    /// One `send` for the requests just queued on connection `i`.
    fn send_window(&mut self, i: usize, now: u64) {
        self.conns[i].start_window(&self.s.requests, &mut self.rng);
        self.resume_send(i, now);
    }

    fn resume_send(&mut self, i: usize, now: u64) {
        let c = &mut self.conns[i];
        let Some(bytes) = c.unsent(&self.s.requests) else {
            return;
        };
        match self.io.send(i, bytes) {
            Ok(n) if n == bytes.len() => {
                if c.sent_all() {
                    self.io.want_write(i, false);
                }
            }
            Ok(n) => self.wait_writable(i, n),
            Err(Errno::AGAIN) | Err(Errno::INTR) => self.wait_writable(i, 0),
            Err(_) => {
                self.tally.count(|e| e.write += 1);
                self.drop_conn(i, now, true);
            }
        }
    }

    /// Short write: remember how far it got and wait for writability.
    fn wait_writable(&mut self, i: usize, n: usize) {
        if self.conns[i].sent_part(n) {
            self.io.want_write(i, true);
        }
    }

    fn on_readable(&mut self, i: usize, polled_ns: u64, now: u64) {
        let kept = self.conns[i].restore_tail(&mut self.rx);
        let got = self.io.recv(i, &mut self.rx[kept..]);
        // The read's event time: the kernel's receive stamp where it gave one (`--rx-time
        // kernel`; never later than `now`, for a stamp taken between `now` and the read), or
        // the poll's return. A read that came late, behind other connections' work or after a
        // nap, still books what it brought when it arrived.
        let stamp = self.io.received_at(i).map(|t| t.min(now));
        let at = stamp.unwrap_or(polled_ns);
        if self.io.handshake_done(i) {
            // The read that fed the session its last handshake record.
            self.marks[i].handshaken(at);
            if self.conns[i].take_handshaking() {
                self.handshaking -= 1;
            }
        }
        match got {
            Ok(0) => self.on_eof(i, polled_ns, now),
            Ok(n) => {
                self.marks[i].bytes(at);
                self.conns[i].on_read(kept + n);
                self.tally.bytes_read(n);
                self.parse_responses(i, at, stamp.is_some(), now);
            }
            Err(Errno::AGAIN) | Err(Errno::INTR) => {}
            Err(_) => {
                self.tally.count(|e| e.read += 1);
                self.drop_conn(i, now, true);
            }
        }
    }

    /// Books the answers a read completed as done `at` (its event time; `stamped`: the
    /// kernel's receive stamp); what follows (the next window, a close) happens `now`.
    fn parse_responses(&mut self, i: usize, at: u64, stamped: bool, now: u64) {
        loop {
            match self.conns[i].next_answer(&self.rx, &mut self.heads) {
                Ok(Some(a)) => {
                    if !self.on_answer(i, &a, at, stamped, now) {
                        return;
                    }
                }
                Ok(None) => {
                    if let Some((limit, _)) = self.conns[i].h2_limit() {
                        self.tally.stream_limit(limit);
                    }
                    break;
                }
                Err(f) if !f.ends_conn() => {
                    // One HTTP/2 stream failed; the connection goes on.
                    self.tally.count_failure(f);
                    if f == Failure::H2Refused {
                        // Never processed: sent again (`crate::h2::refused`).
                        crate::h2::refused(&mut self.conns[i], &self.s.config, &mut self.retry);
                    }
                }
                Err(f) => {
                    self.fail(i, f, now);
                    return;
                }
            }
        }
        self.after_response(i, now);
    }

    /// Counts `f` and drops the connection.
    fn fail(&mut self, i: usize, f: Failure, now: u64) {
        self.tally.count_failure(f);
        self.drop_conn(i, now, true);
    }

    /// Books one answer, done `at` (its event time; `stamped`: the kernel's receive stamp,
    /// and the time from it to `now` is the read delay); returns false when the connection was
    /// closed.
    fn on_answer(&mut self, i: usize, a: &Answer, at: u64, stamped: bool, now: u64) -> bool {
        // An event time before the send can only be a stamp's clock mapping error, or a poll
        // that returned before a request sent in its own turn was answered: the read time
        // stands in rather than a latency of 0.
        let (done, delay) = if at >= a.sent_ns {
            (at, if stamped { now - at } else { 0 })
        } else {
            (now, 0)
        };
        self.tally.record(a, done, delay);
        if self.marks[i].first_done() {
            self.tally.phases(&self.marks[i], done);
        }
        if a.close {
            if self.conns[i].has_inflight() {
                // The server closed with pipelined requests unanswered.
                self.tally.count(|x| x.read += 1);
            }
            self.drop_conn(i, now, true);
            return false;
        }
        true
    }

    /// The peer closed, seen by the poll that returned at `polled_ns`: an answer framed by the
    /// close is done then (a close brings no stamp).
    fn on_eof(&mut self, i: usize, polled_ns: u64, now: u64) {
        match self.conns[i].on_eof() {
            Ok(Some(a)) => {
                self.on_answer(i, &a, polled_ns, false, now);
                if self.conns[i].phase() == Phase::Open {
                    self.drop_conn(i, now, true);
                }
            }
            Ok(None) => {
                if self.conns[i].has_inflight() {
                    // Closed with requests outstanding and not a byte of their answers.
                    self.tally.count(|x| x.read += 1);
                }
                self.drop_conn(i, now, true);
            }
            Err(f) => self.fail(i, f, now),
        }
    }
}
