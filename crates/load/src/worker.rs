//! A worker: one pinned thread, one epoll instance, its share of the connections. It sends
//! pre-built request windows, parses every response, and records latency and errors in its
//! own histograms and counters; nothing is shared with other workers but the schedule (or
//! budget), the stop flag and a progress slot.
//!
//! Measured cost (strace -c, `-t1 -c64 -n 50000` against `twelve serve` on loopback): exactly
//! one `sendto` and one `recvfrom` per request and one `epoll_pwait2` per ~38 requests; no
//! `epoll_ctl` after connect (wrk re-arms EPOLLOUT around every write). User space is ~7% of
//! the client's CPU in `perf record`; the rest is the kernel's TCP path.
use crate::clock::Clock;
use crate::coalesce::MeanLatency;
use crate::config::{Config, Model, Stop};
use crate::conn::{Conn, Pending, Phase};
use crate::request::RequestSet;
use crate::schedule::{Budget, Schedule};
use rustix::buffer::spare_capacity;
use rustix::event::{Timespec, epoll};
use rustix::io::Errno;
use rustix::net::{self, AddressFamily, RecvFlags, SendFlags, SocketFlags, SocketType};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::time::Duration;
use twelve_http::Status;
use twelve_http::client::{Done, Error as ParseErr};
use twelve_report::{Recorder, WorkerResult};

/// How often a worker checks timeouts, rolls its per-second counter and publishes progress.
/// Timeouts are therefore enforced to within 10 ms.
const HOUSEKEEPING_NS: u64 = 10_000_000;
/// Pause before retrying a failed connect, so a refused port does not spin the CPU.
const CONNECT_BACKOFF_NS: u64 = 10_000_000;

/// One worker's slot of published progress, on its own cache line so workers never share one.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct ProgressSlot {
    pub requests: AtomicU64,
    pub errors: AtomicU64,
    pub done: AtomicBool,
}

/// What every worker of a run shares (read-only but for atomics).
pub(crate) struct Shared<C: Clock> {
    pub clock: C,
    pub config: Config,
    pub requests: RequestSet,
    pub schedule: Option<Schedule>,
    pub budget: Budget,
    pub measure_start_ns: u64,
    pub end_ns: u64,
    pub stop: AtomicBool,
    pub progress: Vec<ProgressSlot>,
}

/// One interval of latency for the HdrHistogram log.
pub(crate) struct Interval {
    pub index: u64,
    pub hist: Recorder,
}

pub(crate) struct Worker<'s, C: Clock> {
    id: usize,
    s: &'s Shared<C>,
    ep: rustix::fd::OwnedFd,
    conns: Vec<Conn>,
    ready: Vec<u32>,
    open_now: u64,
    measuring: bool,
    total: Recorder,
    interval: Option<(Recorder, u64, Sender<Interval>)>,
    res: WorkerResult,
    sec_count: u64,
    next_sec_ns: u64,
    cpu_start_ns: u64,
    requests_all: u64,
    /// Last successful connect or response: a count-bounded run with no progress for long
    /// gives up instead of retrying a dead server forever.
    last_progress_ns: u64,
    errors_all: u64,
    /// Running mean of send-to-response latency, for `--coalesce auto`.
    mean_latency: MeanLatency,
}

fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Voluntary plus involuntary context switches of the calling thread.
fn context_switches() -> u64 {
    let status = std::fs::read_to_string("/proc/thread-self/status").unwrap_or_default();
    status
        .lines()
        .filter(|l| l.contains("ctxt_switches"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum()
}

impl<'s, C: Clock> Worker<'s, C> {
    /// Builds the worker's state. Call on the worker thread, after pinning, so the memory is
    /// first touched (and so placed) on the worker's NUMA node.
    pub(crate) fn new(
        id: usize,
        s: &'s Shared<C>,
        conns: usize,
        hdr: Option<Sender<Interval>>,
    ) -> std::io::Result<Self> {
        let cfg = &s.config;
        let head = s.requests.is_head();
        let per_second = match cfg.stop {
            Stop::Duration(d) => d.as_secs() as usize + 2,
            Stop::Requests(_) => 64,
        };
        Ok(Self {
            id,
            s,
            ep: epoll::create(epoll::CreateFlags::CLOEXEC)?,
            conns: (0..conns).map(|_| Conn::new(cfg.pipeline, head)).collect(),
            ready: Vec::with_capacity(conns),
            open_now: 0,
            measuring: false,
            total: Recorder::new(),
            interval: hdr.map(|tx| (Recorder::new(), 0, tx)),
            res: WorkerResult {
                cpu: cfg.worker_cpus[id],
                per_second: Vec::with_capacity(per_second),
                ..Default::default()
            },
            sec_count: 0,
            next_sec_ns: 0,
            cpu_start_ns: 0,
            requests_all: 0,
            last_progress_ns: s.clock.now_ns(),
            errors_all: 0,
            mean_latency: MeanLatency::default(),
        })
    }

    /// Runs until the end of the run; returns what was measured.
    pub(crate) fn run(mut self) -> WorkerResult {
        let mut events: Vec<epoll::Event> = Vec::with_capacity(256);
        let mut next_hk = 0;
        // Stagger first connects by URL so pipelined windows start on different URLs.
        for i in 0..self.conns.len() {
            self.conns[i].next_url = (self.id + i) % self.s.requests.urls();
        }
        let end_measure;
        loop {
            let now = self.s.clock.now_ns();
            if !self.measuring && now >= self.s.measure_start_ns {
                self.start_measuring();
            }
            if now >= self.s.end_ns
                || self.s.stop.load(Ordering::Relaxed)
                || self.finished()
                || self.stalled(now)
            {
                end_measure = now;
                break;
            }
            if now >= next_hk {
                self.housekeeping(now);
                next_hk = now + HOUSEKEEPING_NS;
            }
            if self.s.schedule.is_some() {
                self.dispatch_due(now);
            }
            let wait_ns = self.wait_ns(now, next_hk);
            let ts = Timespec {
                tv_sec: (wait_ns / 1_000_000_000) as i64,
                tv_nsec: (wait_ns % 1_000_000_000) as i64,
            };
            events.clear();
            match epoll::wait(&self.ep, spare_capacity(&mut events), Some(&ts)) {
                Ok(_) | Err(Errno::INTR) => {}
                Err(_) => {
                    end_measure = self.s.clock.now_ns();
                    break;
                }
            }
            for ev in &events {
                let idx = ev.data.u64() as usize;
                self.on_event(idx, ev.flags);
            }
            self.nap_after(events.len(), next_hk);
        }
        self.finish(end_measure)
    }

    /// After a small batch, waits on this thread's own timer so more responses gather, rather
    /// than blocking until the server's next send has to wake it (see `coalesce`). Never past
    /// the next due request, housekeeping, or the end of the run.
    fn nap_after(&mut self, polled: usize, next_hk: u64) {
        let nap = self
            .s
            .config
            .coalesce
            .nap_ns(polled, self.mean_latency.get());
        // After the poll that carried the last answer of a `-n` run: end now, not a nap later.
        if nap == 0 || self.s.stop.load(Ordering::Relaxed) || self.finished() {
            return;
        }
        let now = self.s.clock.now_ns();
        let mut nap = nap.min(self.wait_ns(now, next_hk));
        // The open model: a response during the nap may free the connection a due request
        // waits for, so never nap past the next slot even when no connection is ready.
        if let Some(due) = self.s.schedule.as_ref().and_then(|s| s.next_due_ns()) {
            nap = nap.min(due.saturating_sub(now));
        }
        if nap > 0 {
            self.res.naps += 1;
            std::thread::sleep(Duration::from_nanos(nap));
        }
    }

    /// Whether a count-bounded run has nothing left to do on this worker.
    fn finished(&self) -> bool {
        if !matches!(self.s.config.stop, Stop::Requests(_)) {
            return false;
        }
        let none_left = match &self.s.schedule {
            Some(s) => s.next_due_ns().is_none(),
            None => self.s.budget.exhausted(),
        };
        none_left
            && self
                .conns
                .iter()
                .all(|c| c.inflight.is_empty() && c.reserved == 0)
    }

    /// A `-n` run with no connection open that has neither connected nor been answered for
    /// twice the longer timeout would otherwise retry a dead server forever; a timed run just
    /// runs out its time, and an open connection is bounded by the request timeout.
    fn stalled(&self, now: u64) -> bool {
        let cfg = &self.s.config;
        let limit = 2 * cfg.timeout.max(cfg.connect_timeout).as_nanos() as u64;
        matches!(cfg.stop, Stop::Requests(_))
            && self.open_now == 0
            && now.saturating_sub(self.last_progress_ns) > limit
    }

    fn wait_ns(&self, now: u64, next_hk: u64) -> u64 {
        let mut until = next_hk.min(self.s.end_ns);
        if let Some(s) = &self.s.schedule
            && !self.ready.is_empty()
            && let Some(due) = s.next_due_ns()
        {
            until = until.min(due);
        }
        if !self.measuring {
            until = until.min(self.s.measure_start_ns);
        }
        until.saturating_sub(now)
    }

    fn start_measuring(&mut self) {
        self.measuring = true;
        self.total.reset();
        if let Some((r, _, _)) = &mut self.interval {
            r.reset();
        }
        let keep = std::mem::take(&mut self.res.per_second);
        let conns = self.res.conns;
        self.res = WorkerResult {
            cpu: self.res.cpu,
            per_second: keep,
            conns,
            ..Default::default()
        };
        self.res.per_second.clear();
        self.sec_count = 0;
        // Seconds count from the nominal start, so a run of N s has N whole seconds.
        self.next_sec_ns = self.s.measure_start_ns + 1_000_000_000;
        self.cpu_start_ns = thread_cpu_ns();
    }

    fn finish(mut self, now: u64) -> WorkerResult {
        if let Some((r, index, tx)) = self.interval.take() {
            self.total.add(&r);
            let _ = tx.send(Interval { index, hist: r });
        }
        self.res.latency = self.total;
        if self.measuring {
            // Whole seconds that ended with the run (the partial last one is left out).
            while now >= self.next_sec_ns {
                self.res.per_second.push(self.sec_count);
                self.sec_count = 0;
                self.next_sec_ns += 1_000_000_000;
            }
            self.res.cpu_time = Duration::from_nanos(thread_cpu_ns() - self.cpu_start_ns);
            self.res.wall_time = Duration::from_nanos(now - self.s.measure_start_ns);
        }
        self.res.context_switches = context_switches();
        let slot = &self.s.progress[self.id];
        slot.requests.store(self.requests_all, Ordering::Relaxed);
        slot.done.store(true, Ordering::Release);
        self.res
    }

    fn housekeeping(&mut self, now: u64) {
        if self.measuring {
            while now >= self.next_sec_ns {
                self.res.per_second.push(self.sec_count);
                self.sec_count = 0;
                self.next_sec_ns += 1_000_000_000;
            }
            if let (Some((r, index, tx)), Some(every)) =
                (&mut self.interval, self.s.config.hdr_interval)
            {
                let every = every.as_nanos().max(1) as u64;
                let boundary = self.s.measure_start_ns + (*index + 1) * every;
                if now >= boundary {
                    self.total.add(r);
                    let _ = tx.send(Interval {
                        index: *index,
                        hist: r.clone(),
                    });
                    r.reset();
                    *index = (now - self.s.measure_start_ns) / every;
                }
            }
        }
        let slot = &self.s.progress[self.id];
        slot.requests.store(self.requests_all, Ordering::Relaxed);
        slot.errors.store(self.errors_all, Ordering::Relaxed);
        let timeout = self.s.config.timeout.as_nanos() as u64;
        let connect_timeout = self.s.config.connect_timeout.as_nanos() as u64;
        for i in 0..self.conns.len() {
            match self.conns[i].phase {
                Phase::Closed { retry_at_ns } if retry_at_ns <= now => self.connect(i, now),
                Phase::Connecting { since_ns } if now - since_ns >= connect_timeout => {
                    self.count(|e| e.connect_timeout += 1);
                    self.res.conns.failed += 1;
                    self.drop_conn(i, now, false);
                }
                Phase::Open => {
                    if let Some(&(_, sent)) = self.conns[i].inflight.front()
                        && now.saturating_sub(sent) >= timeout
                    {
                        // Counted once, then the connection is replaced (wrk2 counts an
                        // overdue request again on every scan: wrk2#105).
                        self.count(|e| e.timeout += 1);
                        self.drop_conn(i, now, true);
                    }
                }
                _ => {}
            }
        }
    }

    /// Counts an error in the measured window (and always in live progress).
    fn count(&mut self, f: impl FnOnce(&mut twelve_report::Errors)) {
        self.errors_all += 1;
        if self.measuring {
            f(&mut self.res.errors);
        }
    }

    fn connect(&mut self, i: usize, now: u64) {
        let addr = self.s.config.targets[0].addr;
        let family = if addr.is_ipv4() {
            AddressFamily::INET
        } else {
            AddressFamily::INET6
        };
        let fd = match net::socket_with(
            family,
            SocketType::STREAM,
            SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
            None,
        ) {
            Ok(fd) => fd,
            Err(_) => {
                self.connect_failed(i, now, Errno::NOBUFS);
                return;
            }
        };
        // Requests are small and complete; Nagle would hold the second of a pipelined pair.
        let _ = net::sockopt::set_tcp_nodelay(&fd, true);
        match net::connect(&fd, &addr) {
            Ok(()) | Err(Errno::INPROGRESS) => {}
            Err(e) => {
                self.connect_failed(i, now, e);
                return;
            }
        }
        let data = epoll::EventData::new_u64(i as u64);
        if epoll::add(
            &self.ep,
            &fd,
            data,
            epoll::EventFlags::OUT | epoll::EventFlags::IN,
        )
        .is_err()
        {
            self.connect_failed(i, now, Errno::NOMEM);
            return;
        }
        let c = &mut self.conns[i];
        c.fd = Some(fd);
        c.phase = Phase::Connecting { since_ns: now };
    }

    fn connect_failed(&mut self, i: usize, now: u64, e: Errno) {
        self.res.conns.failed += 1;
        if e == Errno::CONNREFUSED {
            self.count(|x| x.connect_refused += 1);
        } else if e == Errno::TIMEDOUT {
            self.count(|x| x.connect_timeout += 1);
        } else {
            self.count(|x| x.connect_other += 1);
        }
        self.conns[i].reset(now + CONNECT_BACKOFF_NS);
    }

    /// Closes connection `i` and queues its reconnect; `was_open` keeps the open count.
    fn drop_conn(&mut self, i: usize, now: u64, was_open: bool) {
        if was_open {
            self.open_now -= 1;
        }
        self.conns[i].in_ready = false;
        if self.work_left(i) {
            // Reconnect at once, as wrk does.
            self.conns[i].reset(now);
            self.connect(i, now);
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
            (Some(s), Stop::Requests(_)) => s.next_due_ns().is_some(),
            (None, Stop::Requests(_)) => {
                if self.conns[i].reserved == 0 {
                    let want =
                        (self.s.config.pipeline as u64).min(self.per_conn().unwrap_or(u64::MAX));
                    self.conns[i].reserved = self.s.budget.take(want);
                }
                self.conns[i].reserved > 0
            }
        }
    }

    fn on_event(&mut self, i: usize, flags: epoll::EventFlags) {
        let now = self.s.clock.now_ns();
        match self.conns[i].phase {
            Phase::Connecting { .. } => self.on_connected(i, now),
            Phase::Open => {
                if flags.contains(epoll::EventFlags::OUT) && self.conns[i].pending.is_some() {
                    self.resume_send(i, now);
                }
                if flags.intersects(
                    epoll::EventFlags::IN | epoll::EventFlags::HUP | epoll::EventFlags::ERR,
                ) && self.conns[i].phase == Phase::Open
                {
                    self.on_readable(i, now);
                }
            }
            Phase::Closed { .. } => {}
        }
    }

    fn on_connected(&mut self, i: usize, now: u64) {
        let Some(fd) = self.conns[i].fd.as_ref() else {
            return;
        };
        match net::sockopt::socket_error(fd) {
            Ok(Ok(())) => {}
            Ok(Err(e)) | Err(e) => {
                self.connect_failed(i, now, e);
                return;
            }
        }
        let data = epoll::EventData::new_u64(i as u64);
        if epoll::modify(&self.ep, fd, data, epoll::EventFlags::IN).is_err() {
            self.connect_failed(i, now, Errno::NOMEM);
            return;
        }
        self.res.conns.established += 1;
        self.last_progress_ns = now;
        if self.conns[i].ever_open {
            self.res.conns.reconnects += 1;
        }
        self.conns[i].ever_open = true;
        self.conns[i].phase = Phase::Open;
        self.open_now += 1;
        self.res.conns.peak_open = self.res.conns.peak_open.max(self.open_now);
        self.after_response(i, now);
    }

    /// Requests this connection may still send before the client reopens it.
    fn quota(&self, i: usize) -> u64 {
        match self.per_conn() {
            Some(n) => n.saturating_sub(self.conns[i].sent_here),
            None => u64::MAX,
        }
    }

    /// Requests per connection: one with `--close` (the request says `Connection: close`
    /// and the client does not wait to learn whether the server honoured it).
    fn per_conn(&self) -> Option<u64> {
        if self.s.config.keep_alive {
            self.s.config.requests_per_conn
        } else {
            Some(1)
        }
    }

    /// Called when connection `i` may take more requests: the closed model sends its next
    /// batch, the open model puts it on the ready list.
    fn after_response(&mut self, i: usize, now: u64) {
        let c = &self.conns[i];
        if c.phase != Phase::Open || c.pending.is_some() {
            return;
        }
        match self.s.config.model {
            Model::Closed => {
                if !c.inflight.is_empty() {
                    return;
                }
                let n = match std::mem::take(&mut self.conns[i].reserved) {
                    0 => {
                        let want = (self.s.config.pipeline as u64).min(self.quota(i));
                        self.s.budget.take(want) as usize
                    }
                    r => r as usize,
                };
                if n > 0 {
                    self.send_new(i, n, now, now);
                }
            }
            Model::Open { .. } => {
                if !c.in_ready && c.inflight.len() < self.s.config.pipeline && self.quota(i) > 0 {
                    self.conns[i].in_ready = true;
                    self.ready.push(i as u32);
                }
            }
        }
    }

    /// Open model: hands every due slot to a ready connection of this worker.
    fn dispatch_due(&mut self, now: u64) {
        let Some(schedule) = &self.s.schedule else {
            return;
        };
        let per_conn = self.per_conn();
        while let Some(&i) = self.ready.last() {
            let i = i as usize;
            let c = &mut self.conns[i];
            let cap = (self.s.config.pipeline - c.inflight.len()) as u64;
            let cap = cap.min(match per_conn {
                Some(n) => n.saturating_sub(c.sent_here),
                None => u64::MAX,
            }) as usize;
            if c.phase != Phase::Open || c.pending.is_some() || cap == 0 {
                c.in_ready = false;
                self.ready.pop();
                continue;
            }
            let n = schedule.claim(now, cap, |_, intended| {
                c.inflight.push_back((intended, now))
            });
            if n == 0 {
                return;
            }
            let first = c.next_url;
            self.send_window(i, first, n, now);
        }
    }

    /// Closed model: sends `n` new requests, all intended at `intended`.
    fn send_new(&mut self, i: usize, n: usize, intended: u64, now: u64) {
        let c = &mut self.conns[i];
        for _ in 0..n {
            c.inflight.push_back((intended, now));
        }
        let first = c.next_url;
        self.send_window(i, first, n, now);
    }

    /// One `send` for a window of requests already pushed on `inflight`.
    fn send_window(&mut self, i: usize, first: usize, count: usize, now: u64) {
        let urls = self.s.requests.urls();
        let c = &mut self.conns[i];
        c.next_url = (first + count) % urls;
        c.sent_here += count as u64;
        c.pending = Some(Pending {
            first,
            count,
            sent: 0,
        });
        self.resume_send(i, now);
    }

    fn resume_send(&mut self, i: usize, now: u64) {
        let c = &mut self.conns[i];
        let (Some(p), Some(fd)) = (c.pending, c.fd.as_ref()) else {
            return;
        };
        let bytes = self.s.requests.window_from(p.first, p.count, p.sent);
        // MSG_NOSIGNAL: a peer that closed must be a counted write error, not SIGPIPE.
        match net::send(fd, bytes, SendFlags::NOSIGNAL) {
            Ok(n) if n == bytes.len() => {
                c.pending = None;
                if c.out_armed {
                    c.out_armed = false;
                    let data = epoll::EventData::new_u64(i as u64);
                    let _ = epoll::modify(&self.ep, fd, data, epoll::EventFlags::IN);
                }
            }
            Ok(n) => self.wait_writable(i, p, n),
            Err(Errno::AGAIN) | Err(Errno::INTR) => self.wait_writable(i, p, 0),
            Err(_) => {
                self.count(|e| e.write += 1);
                self.drop_conn(i, now, true);
            }
        }
    }

    /// Short write: remember how far it got and ask for EPOLLOUT.
    fn wait_writable(&mut self, i: usize, mut p: Pending, n: usize) {
        p.sent += n;
        let c = &mut self.conns[i];
        c.pending = Some(p);
        if let (false, Some(fd)) = (c.out_armed, c.fd.as_ref()) {
            c.out_armed = true;
            let data = epoll::EventData::new_u64(i as u64);
            let both = epoll::EventFlags::IN | epoll::EventFlags::OUT;
            let _ = epoll::modify(&self.ep, fd, data, both);
        }
    }

    fn on_readable(&mut self, i: usize, now: u64) {
        let c = &mut self.conns[i];
        if c.end == c.buf.len() {
            if c.start == 0 {
                // A response head larger than the whole buffer.
                self.count(|e| e.parse += 1);
                self.drop_conn(i, now, true);
                return;
            }
            c.buf.copy_within(c.start..c.end, 0);
            c.end -= c.start;
            c.start = 0;
        }
        let Some(fd) = c.fd.as_ref() else { return };
        let got = net::recv(fd, &mut c.buf[c.end..], RecvFlags::empty());
        match got {
            Ok((0, _)) => self.on_eof(i, now),
            Ok((n, _)) => {
                c.end += n;
                if self.measuring {
                    self.res.bytes_read += n as u64;
                }
                self.parse_responses(i, now);
            }
            Err(Errno::AGAIN) | Err(Errno::INTR) => {}
            Err(_) => {
                self.count(|e| e.read += 1);
                self.drop_conn(i, now, true);
            }
        }
    }

    fn parse_responses(&mut self, i: usize, now: u64) {
        loop {
            let c = &mut self.conns[i];
            let parsed = c.parser.parse(&c.buf[c.start..c.end]);
            match parsed {
                Ok((used, Status::Complete(done))) => {
                    c.start += used;
                    if !self.on_response(i, done, now) {
                        return;
                    }
                }
                Ok((used, Status::Partial)) => {
                    c.start += used;
                    if c.start == c.end {
                        c.start = 0;
                        c.end = 0;
                    }
                    break;
                }
                Err(e) => {
                    self.on_parse_error(i, e, now);
                    return;
                }
            }
        }
        self.after_response(i, now);
    }

    fn on_parse_error(&mut self, i: usize, e: ParseErr, now: u64) {
        match e {
            ParseErr::IncompleteHead => self.count(|x| x.read += 1),
            ParseErr::IncompleteBody => self.count(|x| x.body_length += 1),
            _ => self.count(|x| x.parse += 1),
        }
        self.drop_conn(i, now, true);
    }

    /// Books one complete response; returns false when the connection was closed.
    fn on_response(&mut self, i: usize, done: Done, now: u64) -> bool {
        let Some((intended, sent)) = self.conns[i].inflight.pop_front() else {
            // A response nobody asked for.
            self.count(|x| x.parse += 1);
            self.drop_conn(i, now, true);
            return false;
        };
        self.requests_all += 1;
        self.last_progress_ns = now;
        self.mean_latency.add(now.saturating_sub(sent));
        if self.measuring {
            let rec = match &mut self.interval {
                Some((r, _, _)) => r,
                None => &mut self.total,
            };
            rec.record(intended, sent, now);
            self.res.requests += 1;
            self.sec_count += 1;
            if let Some(n) = self.res.errors.status.get_mut(usize::from(done.code)) {
                *n += 1;
            }
            if !(200..400).contains(&done.code) {
                self.errors_all += 1;
            }
        }
        let c = &self.conns[i];
        let quota_done = self.per_conn().is_some_and(|n| c.sent_here >= n) && c.inflight.is_empty();
        if !done.keep_alive || quota_done {
            if !c.inflight.is_empty() {
                // The server closed with pipelined requests unanswered.
                self.count(|x| x.read += 1);
            }
            self.drop_conn(i, now, true);
            return false;
        }
        true
    }

    fn on_eof(&mut self, i: usize, now: u64) {
        let c = &mut self.conns[i];
        let left = c.end - c.start;
        match c.parser.eof(left) {
            Ok(Some(done)) => {
                self.on_response(i, done, now);
                if self.conns[i].phase == Phase::Open {
                    self.drop_conn(i, now, true);
                }
            }
            Ok(None) => {
                if !c.inflight.is_empty() {
                    // Closed with requests outstanding and not a byte of their answers.
                    self.count(|x| x.read += 1);
                }
                self.drop_conn(i, now, true);
            }
            Err(e) => self.on_parse_error(i, e, now),
        }
    }
}
