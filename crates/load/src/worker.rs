//! A worker: one pinned thread, its share of the connections, and the loop that runs them:
//! reconnects and timeouts every 10 ms, open-model slots as they come due, a wait for readiness
//! bounded by the next of those, then a nap after a small batch when [`Pacing`] allows one
//! (the open model, a connection ready: a poll that does not block, then a sleep on the
//! timer to the next wake-up).
//! What to send and how to book each event is the [`Dispatch`]'s; the sockets are an [`Io`]:
//! epoll in a run, a modelled server in the simulation, which drives this same loop on a
//! simulated clock.
//! Nothing is shared with other workers but the schedule (or budget), the stop flag and a
//! progress slot.
//!
//! Syscalls: one `sendto` and one `recvfrom` per request window and a share of an
//! `epoll_pwait2`; no `epoll_ctl` after connect (wrk re-arms EPOLLOUT around every write). Most
//! of the client's CPU is the kernel's TCP path (docs/results.md#where-the-cpu-goes).
use crate::clock::Clock;
use crate::config::{Config, Stop};
use crate::dispatch::Dispatch;
use crate::io::Io;
use crate::pacing::{Pacing, Turn};
use crate::request::RequestSet;
use crate::schedule::{Budget, Schedule};
use crate::tally::{HdrLog, Tally};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use twelve_report::{Recorder, WorkerResult};

/// How often a worker checks timeouts, rolls its per-second counter and publishes progress.
/// Timeouts are therefore enforced to within 10 ms.
const HOUSEKEEPING_NS: u64 = 10_000_000;

/// One worker's slot of published progress, on its own cache line so workers never share one.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct ProgressSlot {
    pub requests: AtomicU64,
    pub errors: AtomicU64,
    pub done: AtomicBool,
    pub live: crate::live::LiveSlot,
}

/// What every worker of a run shares (read-only but for atomics).
pub(crate) struct Shared<C: Clock> {
    pub clock: C,
    pub config: Config,
    pub requests: RequestSet,
    pub schedule: Option<Schedule>,
    pub budget: Budget,
    pub measure_start_ns: u64,
    /// How far past a multiple of `hdr_interval` since the Unix epoch the measured window
    /// begins, ns: log intervals end on those multiples (see `tally::HdrLog`).
    pub interval_phase_ns: u64,
    pub end_ns: u64,
    pub stop: AtomicBool,
    pub progress: Vec<ProgressSlot>,
}

/// One interval of latency for the HdrHistogram log.
pub(crate) struct Interval {
    pub index: u64,
    pub hist: Recorder,
}

/// One worker over its sockets: `EpollIo` or `UringIo` in a run (see `run::worker_main`), a
/// modelled server in the simulation. Built on the worker thread, after pinning, so its memory
/// is first touched (and so placed) on the worker's NUMA node.
pub(crate) struct Worker<'s, C: Clock, I: Io> {
    id: usize,
    s: &'s Shared<C>,
    d: Dispatch<'s, C, I>,
    pacing: Pacing,
    /// `--slack`, ns.
    slack_ns: u64,
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

impl<'s, C: Clock, I: Io> Worker<'s, C, I> {
    /// A worker with `conns` connection slots over `io`.
    pub(crate) fn with_io(
        id: usize,
        s: &'s Shared<C>,
        conns: usize,
        hdr: Option<Sender<Interval>>,
        io: I,
    ) -> Self {
        let log = hdr
            .zip(s.config.hdr_interval)
            .map(|(tx, every)| HdrLog::new(tx, every, s.interval_phase_ns));
        let mut tally = Tally::new(s.config.worker_cpus[id], &s.config, log);
        let now = s.clock.now_ns();
        tally.progressed(now);
        Self {
            id,
            s,
            pacing: Pacing::new(s.config.coalesce, now),
            slack_ns: u64::try_from(s.config.slack.as_nanos()).unwrap_or(u64::MAX),
            // Stagger first URLs by worker so pipelined windows start on different URLs.
            d: Dispatch::new(s, io, conns, id, tally),
        }
    }

    /// Runs until the end of the run; returns what was measured.
    pub(crate) fn run(mut self) -> WorkerResult {
        let mut next_hk = 0;
        let end_measure = loop {
            let now = self.s.clock.now_ns();
            if !self.d.tally.is_measuring() && now >= self.s.measure_start_ns {
                self.d.tally.start_measuring(self.s.measure_start_ns);
            }
            if now >= self.s.end_ns
                || self.s.stop.load(Ordering::Relaxed)
                || self.finished()
                || self.stalled(now)
            {
                break now;
            }
            if self.d.unreachable() {
                self.d.tally.gave_up();
                break now;
            }
            if now >= next_hk {
                self.housekeeping(now);
                self.pacing.tick(now, self.s.clock.thread_cpu_ns());
                next_hk = now + HOUSEKEEPING_NS;
            }
            self.d.dispatch_due(now);
            // The connects took time: the wait is bounded from after them.
            let now = if self.d.reconnect() {
                self.s.clock.now_ns()
            } else {
                now
            };
            let wait = self.wait_ns(now, next_hk);
            // Open model, a connection ready: the poll only hands the kernel this turn's sends
            // and reads what came, and the worker then sleeps on its own timer to the next
            // wake-up rather than being woken by each answer.
            let through = self.sleeps_through(wait);
            let Ok(polled) = self.d.io.poll(if through { 0 } else { wait }) else {
                break self.s.clock.now_ns();
            };
            let polled_ns = self.s.clock.now_ns();
            self.pacing.waited(now, polled_ns);
            for k in 0..polled {
                let ev = self.d.io.event(k);
                self.d.on_event(ev, polled_ns);
            }
            if through {
                self.sleep_through(next_hk);
            } else {
                self.nap_after(polled, next_hk);
            }
        };
        self.finish(end_measure)
    }

    /// After a small batch, waits on this thread's own timer so more responses gather, rather
    /// than blocking until the server's next send has to wake it, when [`Pacing`] allows it.
    /// Never past the next due request, housekeeping, or the end of the run.
    fn nap_after(&mut self, polled: usize, next_hk: u64) {
        let turn = Turn {
            polled,
            open: self.d.open_now(),
            latency: self.d.tally.mean_latency(),
            stamped: self.d.io.stamps(),
            untimed: self.d.untimed() || self.d.io.has_pending(),
        };
        let nap = self.pacing.nap_ns(&turn);
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
            self.d.io.nap(nap);
            self.pacing.napped(now, self.s.clock.now_ns());
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
        none_left && self.d.all_idle()
    }

    /// A `-n` run with no connection open that has neither connected nor been answered for
    /// twice the longer timeout would otherwise retry a dead server forever; a timed run just
    /// runs out its time, and an open connection is bounded by the request timeout.
    fn stalled(&self, now: u64) -> bool {
        let cfg = &self.s.config;
        let limit = 2 * cfg.timeout.max(cfg.connect_timeout).as_nanos() as u64;
        matches!(cfg.stop, Stop::Requests(_))
            && self.d.open_now() == 0
            && now.saturating_sub(self.d.tally.last_progress_ns()) > limit
    }

    /// Open model: whether to sleep `wait` on the timer rather than wait for readiness: a
    /// connection is ready for the next due request, and [`Pacing::sleeps_through`] allows it.
    fn sleeps_through(&self, wait: u64) -> bool {
        wait > 0
            && self.d.has_ready()
            && self
                .s
                .schedule
                .as_ref()
                .is_some_and(|s| s.next_due_ns().is_some())
            && self.pacing.sleeps_through(
                self.d.io.stamps(),
                self.d.untimed() || self.d.io.has_pending(),
            )
    }

    /// Open model, after the poll that sent this turn's requests and read the answers that
    /// came: sleeps to the next wake-up, timed from now (after the sends, which took their
    /// time), when the rule still allows it. The loop then sends every request due by the time
    /// it woke, however late that is, before it reads anything.
    fn sleep_through(&mut self, next_hk: u64) {
        if self.s.stop.load(Ordering::Relaxed) || self.finished() {
            return;
        }
        let now = self.s.clock.now_ns();
        let wait = self.wait_ns(now, next_hk);
        if self.sleeps_through(wait) {
            self.d.io.nap(wait);
            self.pacing.waited(now, self.s.clock.now_ns());
        }
    }

    /// How long the next wait may last: to housekeeping, the end of the run, and (open model,
    /// with a connection ready) the next wake-up, [`Schedule::wake_ns`]: the due time of the
    /// last request due within `--slack` of the next, so that one wake-up serves them all.
    fn wait_ns(&self, now: u64, next_hk: u64) -> u64 {
        let mut until = next_hk.min(self.s.end_ns);
        if let Some(s) = &self.s.schedule
            && self.d.has_ready()
            && let Some(wake) = s.wake_ns(self.slack_ns)
        {
            until = until.min(wake);
        }
        if !self.d.tally.is_measuring() {
            until = until.min(self.s.measure_start_ns);
        }
        until.saturating_sub(now)
    }

    fn housekeeping(&mut self, now: u64) {
        let s = self.s;
        self.d.io.sync_clock(&|| s.clock.now_ns());
        self.d.tally.roll(now);
        self.d.tally.publish(&s.progress[self.id]);
        self.d.check_conns(now);
    }

    fn finish(self, now: u64) -> WorkerResult {
        let slot = &self.s.progress[self.id];
        slot.requests
            .store(self.d.tally.requests_all(), Ordering::Relaxed);
        let mut res = self.d.tally.finish(now, self.s.measure_start_ns);
        res.context_switches = context_switches();
        (res.naps, res.nap_cause) = self.pacing.report();
        slot.done.store(true, Ordering::Release);
        res
    }
}
