//! A worker's books: what it measured in the measured window (latency histograms, the
//! HdrHistogram log's intervals, requests per whole second, errors by class, its own CPU time)
//! and the whole-run counts that live progress and the stall check read.
use crate::config::{Config, Stop};
use crate::conn::{Answer, Failure};
use crate::live::{BUCKETS, ErrorKinds, bucket};
use crate::pacing::MeanLatency;
use crate::worker::{Interval, ProgressSlot};
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::time::Duration;
use twelve_report::{Errors, Recorder, WorkerResult};

const SECOND_NS: u64 = 1_000_000_000;

/// The interval of the HdrHistogram log being filled, and where finished ones go.
///
/// Interval boundaries fall on multiples of the interval since the Unix epoch (`phase_ns`
/// is how far past such a multiple the measured window began), so the intervals of shards
/// on different machines line up and add (`twelve merge`); the first interval is the
/// partial one the window began in.
pub(crate) struct HdrLog {
    /// Latency of the current interval (folded into the total when it ends).
    hist: Recorder,
    /// Index of the current interval; 0 is the one the measured window began in.
    index: u64,
    every_ns: u64,
    phase_ns: u64,
    /// Start of the measured window.
    origin_ns: u64,
    /// When the current interval ends.
    next_boundary_ns: u64,
    tx: Sender<Interval>,
}

impl HdrLog {
    pub(crate) fn new(tx: Sender<Interval>, every: Duration, phase_ns: u64) -> Self {
        let every_ns = (every.as_nanos() as u64).max(1);
        Self {
            hist: Recorder::new(),
            index: 0,
            every_ns,
            phase_ns: phase_ns % every_ns,
            origin_ns: 0,
            next_boundary_ns: u64::MAX,
            tx,
        }
    }

    fn start(&mut self, origin_ns: u64) {
        self.hist.reset();
        self.index = 0;
        self.origin_ns = origin_ns;
        self.next_boundary_ns = origin_ns + self.every_ns - self.phase_ns;
    }

    /// Closes the current interval if `now_ns` is past its end, adding it into `total`.
    #[inline]
    fn roll(&mut self, now_ns: u64, total: &mut Recorder) {
        if now_ns < self.next_boundary_ns {
            return;
        }
        total.add(&self.hist);
        let _ = self.tx.send(Interval {
            index: self.index,
            hist: self.hist.clone(),
        });
        self.hist.reset();
        self.index = (now_ns - self.origin_ns + self.phase_ns) / self.every_ns;
        self.next_boundary_ns = self.origin_ns + (self.index + 1) * self.every_ns - self.phase_ns;
    }
}

pub(crate) struct Tally {
    measuring: bool,
    total: Recorder,
    hdr_log: Option<HdrLog>,
    res: WorkerResult,
    /// Responses in the current second, and when it ends.
    sec_count: u64,
    next_sec_ns: u64,
    cpu_start_ns: u64,
    /// Timed runs: responses from here on are the last 20% of the planned window.
    tail_after_ns: Option<u64>,
    tail_from_ns: u64,
    /// Whole-run counts, for live progress.
    requests_all: u64,
    errors_all: u64,
    /// Whole-run failures by class and non-2xx/3xx responses, for the live view's kinds.
    errors_run: Errors,
    bad_status_all: u64,
    /// Whole-run coarse latency histogram, for the live view's percentiles.
    live_hist: Box<[u64; BUCKETS]>,
    /// Last successful connect or response: a count-bounded run with no progress for long
    /// gives up instead of retrying a dead server forever.
    last_progress_ns: u64,
    /// Running mean of send-to-response latency, for the naps' length (`crate::pacing`).
    mean_latency: MeanLatency,
}

fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

impl Tally {
    pub(crate) fn new(cpu: Option<usize>, cfg: &Config, hdr: Option<HdrLog>) -> Self {
        let per_second = match cfg.stop {
            Stop::Duration(d) => d.as_secs() as usize + 2,
            Stop::Requests(_) => 64,
        };
        Self {
            measuring: false,
            total: Recorder::new(),
            hdr_log: hdr,
            res: WorkerResult {
                cpu,
                per_second: Vec::with_capacity(per_second),
                ..Default::default()
            },
            sec_count: 0,
            next_sec_ns: 0,
            cpu_start_ns: 0,
            tail_after_ns: match cfg.stop {
                Stop::Duration(d) => Some(d.as_nanos() as u64 / 5 * 4),
                Stop::Requests(_) => None,
            },
            tail_from_ns: u64::MAX,
            requests_all: 0,
            errors_all: 0,
            errors_run: Errors::default(),
            bad_status_all: 0,
            live_hist: Box::new([0; BUCKETS]),
            last_progress_ns: 0,
            mean_latency: MeanLatency::default(),
        }
    }

    pub(crate) fn is_measuring(&self) -> bool {
        self.measuring
    }

    pub(crate) fn last_progress_ns(&self) -> u64 {
        self.last_progress_ns
    }

    pub(crate) fn progressed(&mut self, now_ns: u64) {
        self.last_progress_ns = now_ns;
    }

    /// The warm-up is over: forget what it counted, but for the connection accounting.
    pub(crate) fn start_measuring(&mut self, measure_start_ns: u64) {
        self.measuring = true;
        self.total.reset();
        if let Some(log) = &mut self.hdr_log {
            log.start(measure_start_ns);
        }
        let mut per_second = std::mem::take(&mut self.res.per_second);
        per_second.clear();
        self.res = WorkerResult {
            cpu: self.res.cpu,
            per_second,
            conns: self.res.conns,
            ..Default::default()
        };
        self.sec_count = 0;
        // Seconds count from the nominal start, so a run of N s has N whole seconds.
        self.next_sec_ns = measure_start_ns + SECOND_NS;
        self.cpu_start_ns = thread_cpu_ns();
        self.tail_from_ns = self
            .tail_after_ns
            .map_or(u64::MAX, |after| measure_start_ns + after);
    }

    /// Closes the whole seconds and the log interval that ended by `now_ns`.
    pub(crate) fn roll(&mut self, now_ns: u64) {
        if !self.measuring {
            return;
        }
        self.close_seconds(now_ns);
        if let Some(log) = &mut self.hdr_log {
            log.roll(now_ns, &mut self.total);
        }
    }

    fn close_seconds(&mut self, now_ns: u64) {
        while now_ns >= self.next_sec_ns {
            self.res.per_second.push(self.sec_count);
            self.sec_count = 0;
            self.next_sec_ns += SECOND_NS;
        }
    }

    /// Publishes live progress.
    pub(crate) fn publish(&self, slot: &ProgressSlot) {
        slot.requests.store(self.requests_all, Ordering::Relaxed);
        slot.errors.store(self.errors_all, Ordering::Relaxed);
        let e = &self.errors_run;
        let kinds = ErrorKinds {
            connect: e.connect_refused + e.connect_timeout + e.connect_other,
            io: e.read + e.write,
            timeout: e.timeout,
            parse: e.parse + e.body_length + e.h2.stream + e.h2.protocol,
            status: self.bad_status_all,
        };
        slot.live.publish(&self.live_hist, &kinds);
    }

    /// Counts an error in the measured window (and always in live progress).
    pub(crate) fn count(&mut self, f: impl Fn(&mut Errors)) {
        self.errors_all += 1;
        f(&mut self.errors_run);
        if self.measuring {
            f(&mut self.res.errors);
        }
    }

    /// Counts a failure in its class.
    pub(crate) fn count_failure(&mut self, f: Failure) {
        match f {
            Failure::Parse => self.count(|e| e.parse += 1),
            Failure::Read => self.count(|e| e.read += 1),
            Failure::BodyLength => self.count(|e| e.body_length += 1),
            Failure::H2Reset => self.count(|e| e.h2.reset += 1),
            Failure::H2Refused => self.count(|e| e.h2.refused += 1),
            Failure::H2Stream => self.count(|e| e.h2.stream += 1),
            Failure::H2GoAway => self.count(|e| e.h2.goaway += 1),
            Failure::H2Protocol => self.count(|e| e.h2.protocol += 1),
            Failure::H2Done => {}
        }
    }

    /// HTTP/2: `limit` streams are in force on a connection; the books keep the fewest.
    #[inline]
    pub(crate) fn stream_limit(&mut self, limit: u32) {
        let l = &mut self.res.errors.h2.stream_limit;
        if *l == 0 || u64::from(limit) < *l {
            *l = u64::from(limit);
        }
    }

    pub(crate) fn connect_failed(&mut self) {
        self.res.conns.failed += 1;
    }

    /// Whether no connection can be made: none was ever established and as many connects as
    /// the worker has `slots` failed (each slot tried at least once, on average).
    pub(crate) fn unreachable(&self, slots: usize) -> bool {
        let c = &self.res.conns;
        c.established == 0 && c.failed >= slots as u64
    }

    /// The worker stops because no connection can be made: what failed over the whole run,
    /// warm-up included, is what the result has to say.
    pub(crate) fn gave_up(&mut self) {
        self.res.errors = self.errors_run.clone();
    }

    /// A connect finished; `open_now` connections are now open.
    pub(crate) fn connected(&mut self, now_ns: u64, reconnect: bool, open_now: u64) {
        let c = &mut self.res.conns;
        c.established += 1;
        c.reconnects += u64::from(reconnect);
        c.peak_open = c.peak_open.max(open_now);
        self.last_progress_ns = now_ns;
    }

    #[inline]
    pub(crate) fn bytes_read(&mut self, n: usize) {
        if self.measuring {
            self.res.bytes_read += n as u64;
        }
    }

    /// The latency so far, for the naps' length (`crate::pacing`).
    pub(crate) fn mean_latency(&self) -> MeanLatency {
        self.mean_latency
    }

    /// Books the phases of a new connection's first request (see [`crate::phases`]).
    pub(crate) fn phases(&mut self, m: &crate::phases::Marks, done_ns: u64) {
        if self.measuring {
            m.record(&mut self.res.phases, done_ns);
        }
    }

    /// Books one answered request, done at `now_ns` (its event time) and read `read_delay_ns`
    /// after its kernel receive stamp.
    #[inline]
    pub(crate) fn record(&mut self, a: &Answer, now_ns: u64, read_delay_ns: u64) {
        self.requests_all += 1;
        self.last_progress_ns = now_ns;
        self.mean_latency.add(now_ns.saturating_sub(a.sent_ns));
        self.live_hist[bucket(now_ns.saturating_sub(a.intended_ns))] += 1;
        self.bad_status_all += u64::from(!(200..400).contains(&a.code));
        if !self.measuring {
            return;
        }
        let rec = match &mut self.hdr_log {
            Some(log) => {
                // A response done past the boundary belongs to the next interval, whatever
                // the 10 ms housekeeping tick says.
                log.roll(now_ns, &mut self.total);
                &mut log.hist
            }
            None => &mut self.total,
        };
        rec.record(a.intended_ns, a.sent_ns, now_ns);
        self.res.requests += 1;
        self.res.read_delay += Duration::from_nanos(read_delay_ns);
        self.res.tail_requests += u64::from(now_ns >= self.tail_from_ns);
        self.sec_count += 1;
        if let Some(n) = self.res.errors.status.get_mut(usize::from(a.code)) {
            *n += 1;
        }
        if !(200..400).contains(&a.code) {
            self.errors_all += 1;
        }
    }

    /// The run ended at `now_ns`: the result, with the last log interval sent.
    pub(crate) fn finish(mut self, now_ns: u64, measure_start_ns: u64) -> WorkerResult {
        if let Some(log) = self.hdr_log.take() {
            self.total.add(&log.hist);
            let _ = log.tx.send(Interval {
                index: log.index,
                hist: log.hist,
            });
        }
        if self.measuring {
            // Whole seconds that ended with the run (the partial last one is left out).
            self.close_seconds(now_ns);
            self.res.cpu_time = Duration::from_nanos(thread_cpu_ns() - self.cpu_start_ns);
            self.res.wall_time = Duration::from_nanos(now_ns - measure_start_ns);
        }
        self.res.latency = self.total;
        self.res
    }

    /// Whole-run responses, for the last progress update.
    pub(crate) fn requests_all(&self) -> u64 {
        self.requests_all
    }
}
