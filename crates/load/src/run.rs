//! Starts a run: builds the shared schedule and request bytes, spawns one pinned worker per
//! CPU entry with its share of the connections, reports progress, and gathers the results.
use crate::clock::{Clock, MonoClock};
use crate::coalesce::Coalesce;
use crate::config::{Arrival, Config, ConfigError, Model, Stop};
use crate::request::RequestSet;
use crate::schedule::{Budget, Schedule};
use crate::worker::{Interval, ProgressSlot, Shared, Worker};
use std::collections::BTreeMap;
use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, SystemTime};
use twelve_report::{IntervalRecord, Recorder, RunInfo, RunResult, WorkerResult};

/// Live progress, sampled from the workers' atomics about once a second.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Time since the run started (warm-up included).
    pub elapsed: Duration,
    /// Whether the warm-up is over.
    pub measuring: bool,
    /// Responses so far (warm-up included).
    pub requests: u64,
    /// Failures so far (warm-up included).
    pub errors: u64,
}

/// A finished run.
#[derive(Debug)]
pub struct Outcome {
    /// Everything the report writers need.
    pub result: RunResult,
    /// HdrHistogram log intervals, all workers merged, when asked for.
    pub intervals: Vec<IntervalRecord>,
    /// Wall-clock time the measured window began.
    pub start: SystemTime,
}

/// Why a run could not start.
#[derive(Debug)]
pub enum LoadError {
    /// Bad configuration.
    Config(ConfigError),
    /// A worker could not be set up (epoll, pinning).
    Setup(std::io::Error),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Config(e) => write!(f, "{e}"),
            LoadError::Setup(e) => write!(f, "setting up a worker: {e}"),
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Config(e) => Some(e),
            LoadError::Setup(e) => Some(e),
        }
    }
}

/// Runs the load described by `config`, calling `tick` about once a second with progress.
pub fn run(config: &Config, tick: impl FnMut(&Progress)) -> Result<Outcome, LoadError> {
    run_until(config, &AtomicBool::new(false), tick)
}

/// Like [`run`], but ends early (with a full report of what was measured) once `interrupt`
/// is set, e.g. by a SIGINT handler.
pub fn run_until(
    config: &Config,
    interrupt: &AtomicBool,
    tick: impl FnMut(&Progress),
) -> Result<Outcome, LoadError> {
    config.validate().map_err(LoadError::Config)?;
    if let (Some(tls), Some(t)) = (&config.tls, config.targets.first())
        && t.tls
    {
        crate::tls::preflight(t, tls, config.connect_timeout).map_err(LoadError::Config)?;
    }
    if matches!(config.stop, Stop::Requests(_)) && !config.warmup.is_zero() {
        return Err(LoadError::Config(ConfigError(
            "--warmup applies to timed runs (-d), not to -n".into(),
        )));
    }
    let wall_origin = SystemTime::now();
    let (shared, t0) = shared_state(config);
    let (tx, rx) = mpsc::channel::<Interval>();
    let workers = run_workers(&shared, tx, interrupt, tick)?;
    let elapsed = workers
        .iter()
        .map(|w| w.wall_time)
        .max()
        .unwrap_or_default();
    let intervals = match config.hdr_interval {
        Some(every) => merge_intervals(rx, every, elapsed),
        None => Vec::new(),
    };
    let start = wall_origin + Duration::from_nanos(shared.measure_start_ns - t0);
    Ok(Outcome {
        result: RunResult {
            info: info_of(config),
            elapsed,
            workers,
        },
        intervals,
        start,
    })
}

/// What every worker reads: the clock started now, the measured window and stop condition
/// it implies, the request bytes, the schedule (open model) or budget (counted closed run).
/// Also returns the clock's reading at the start, which the window counts from.
fn shared_state(config: &Config) -> (Shared<MonoClock>, u64) {
    let clock = MonoClock::new();
    let t0 = clock.now_ns();
    let measure_start_ns = t0 + config.warmup.as_nanos() as u64;
    let (end_ns, limit) = match config.stop {
        Stop::Duration(d) => (measure_start_ns + d.as_nanos() as u64, u64::MAX),
        Stop::Requests(n) => (u64::MAX, n),
    };
    let schedule = match config.model {
        Model::Closed => None,
        Model::Open {
            rate_per_s,
            arrival: Arrival::Uniform,
            ..
        } => Some(Schedule::uniform(rate_per_s, t0, limit)),
        Model::Open {
            rate_per_s,
            arrival: Arrival::Poisson,
            seed,
        } => Some(Schedule::poisson(rate_per_s, t0, limit, seed)),
    };
    let shared = Shared {
        clock,
        config: config.clone(),
        requests: RequestSet::build(config),
        budget: Budget::new(if schedule.is_some() { u64::MAX } else { limit }),
        schedule,
        measure_start_ns,
        end_ns,
        stop: AtomicBool::new(false),
        progress: (0..config.worker_cpus.len())
            .map(|_| ProgressSlot::default())
            .collect(),
    };
    (shared, t0)
}

/// Spawns one pinned worker per CPU entry, watches progress until all are done, and returns
/// their results in worker order (or the first worker's setup error).
fn run_workers(
    shared: &Shared<MonoClock>,
    tx: mpsc::Sender<Interval>,
    interrupt: &AtomicBool,
    tick: impl FnMut(&Progress),
) -> Result<Vec<WorkerResult>, LoadError> {
    let config = &shared.config;
    let threads = config.worker_cpus.len();
    std::thread::scope(|scope| -> Result<_, LoadError> {
        let mut handles = Vec::new();
        for id in 0..threads {
            // Connections spread evenly: the first `c % t` workers take one extra.
            let conns =
                config.connections / threads + usize::from(id < config.connections % threads);
            let tx = config.hdr_interval.map(|_| tx.clone());
            let handle = std::thread::Builder::new()
                .name(format!("twelve-load-{id}"))
                .spawn_scoped(scope, move || {
                    let result = worker_main(shared, id, conns, tx);
                    if result.is_err() {
                        // Let the others stop and the watcher return.
                        shared.stop.store(true, Ordering::Relaxed);
                        shared.progress[id].done.store(true, Ordering::Release);
                    }
                    result
                })
                .map_err(LoadError::Setup)?;
            handles.push(handle);
        }
        drop(tx);
        watch(shared, interrupt, tick);
        let mut out = Vec::new();
        let mut first_err = None;
        for h in handles {
            match h.join() {
                Ok(Ok(w)) => out.push(w),
                Ok(Err(e)) => {
                    first_err.get_or_insert(e);
                }
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        match first_err {
            Some(e) => Err(LoadError::Setup(e)),
            None => Ok(out),
        }
    })
}

/// One worker thread: pin, set the timer slack, build the worker, run it.
fn worker_main(
    shared: &Shared<MonoClock>,
    id: usize,
    conns: usize,
    tx: Option<mpsc::Sender<Interval>>,
) -> std::io::Result<WorkerResult> {
    // Pin first: the worker's buffers and histograms are then first touched on its own CPU
    // (and NUMA node).
    if let Some(cpu) = shared.config.worker_cpus[id] {
        twelve_sys::cpus::pin_current_thread(cpu)?;
    }
    if shared.schedule.is_some() || shared.config.coalesce != Coalesce::Off {
        // The open model sleeps until the next slot is due, and `--coalesce` naps for
        // microseconds; the default 50 µs timer slack would show up as queue wait and
        // latency (prctl(2)).
        let _ = rustix::thread::set_current_timer_slack(NonZeroU64::new(1));
    }
    match (&shared.config.tls, &shared.config.targets[0]) {
        (Some(tls), target) if target.tls => {
            let name = twelve_tls::ClientTls::server_name(target.host())
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
            let socket = crate::epoll::EpollIo::new(target.addr, conns)?;
            let io = crate::tls::TlsIo::new(socket, tls.clone(), name, conns);
            Ok(Worker::with_io(id, shared, conns, tx, io).run())
        }
        _ => Ok(Worker::new(id, shared, conns, tx)?.run()),
    }
}

/// Merges the workers' log intervals by index into one record per interval of `every`.
fn merge_intervals(
    rx: mpsc::Receiver<Interval>,
    every: Duration,
    elapsed: Duration,
) -> Vec<IntervalRecord> {
    let mut by_index: BTreeMap<u64, Recorder> = BTreeMap::new();
    for iv in rx.try_iter() {
        by_index.entry(iv.index).or_default().add(&iv.hist);
    }
    by_index
        .into_iter()
        .map(|(k, latency)| {
            let offset = every * k as u32;
            IntervalRecord {
                offset,
                // The last interval ends with the run, usually inside its period.
                length: every.min(elapsed.saturating_sub(offset)),
                latency,
            }
        })
        .collect()
}

/// Samples progress until every worker is done.
fn watch<C: Clock>(s: &Shared<C>, interrupt: &AtomicBool, mut tick: impl FnMut(&Progress)) {
    let mut next = Duration::from_secs(1);
    loop {
        std::thread::sleep(Duration::from_millis(50));
        if interrupt.load(Ordering::Relaxed) {
            // Relaxed: workers poll the flag every loop turn; nothing else hangs on it.
            s.stop.store(true, Ordering::Relaxed);
        }
        if s.progress.iter().all(|p| p.done.load(Ordering::Acquire)) {
            return;
        }
        let now = s.clock.now_ns();
        let elapsed = Duration::from_nanos(now);
        if elapsed >= next {
            next += Duration::from_secs(1);
            tick(&Progress {
                elapsed,
                measuring: now >= s.measure_start_ns,
                requests: s
                    .progress
                    .iter()
                    .map(|p| p.requests.load(Ordering::Relaxed))
                    .sum(),
                errors: s
                    .progress
                    .iter()
                    .map(|p| p.errors.load(Ordering::Relaxed))
                    .sum(),
            });
        }
    }
}

/// The configuration echo for the report.
pub fn info_of(config: &Config) -> RunInfo {
    let (rate_per_s, arrival) = match config.model {
        Model::Closed => (None, None),
        Model::Open {
            rate_per_s,
            arrival,
            ..
        } => (
            Some(rate_per_s),
            Some(match arrival {
                Arrival::Uniform => "uniform".to_string(),
                Arrival::Poisson => "poisson".to_string(),
            }),
        ),
    };
    RunInfo {
        urls: config.targets.iter().map(|t| t.url.clone()).collect(),
        method: config.method.clone(),
        threads: config.worker_cpus.len(),
        connections: config.connections,
        pipeline: config.pipeline,
        rate_per_s,
        arrival,
        duration: match config.stop {
            Stop::Duration(d) => Some(d),
            Stop::Requests(_) => None,
        },
        requests: match config.stop {
            Stop::Requests(n) => Some(n),
            Stop::Duration(_) => None,
        },
        warmup: config.warmup,
        timeout: config.timeout,
        keep_alive: config.keep_alive,
        requests_per_conn: if config.keep_alive {
            config.requests_per_conn
        } else {
            Some(1)
        },
        cpus: config.worker_cpus.iter().flatten().copied().collect(),
        server_cpu: None,
        tls: config
            .tls
            .as_ref()
            .filter(|_| config.targets.first().is_some_and(|t| t.tls))
            .map(|t| t.describe().to_owned()),
    }
}
