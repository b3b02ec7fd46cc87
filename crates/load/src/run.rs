//! Starts a run: builds the shared schedule and request bytes, spawns one pinned worker per
//! CPU entry with its share of the connections, reports progress, and gathers the results.
use crate::clock::{Clock, MonoClock};
use crate::config::{Arrival, ClientIo, Config, ConfigError, Model, Stop};
use crate::epoll::EpollIo;
use crate::live::LiveSum;
use crate::pacing::Coalesce;
use crate::request::RequestSet;
use crate::schedule::{Budget, Schedule};
use crate::uring::UringIo;
use crate::worker::{Interval, ProgressSlot, Shared, Worker};
use std::collections::BTreeMap;
use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, SystemTime};
use twelve_report::{IntervalRecord, Recorder, RunInfo, RunResult, ShardInfo, WorkerResult};

/// Live progress, sampled from the workers' atomics four times a second.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Time since the run started (warm-up included).
    pub elapsed: Duration,
    /// Whether the warm-up is over.
    pub measuring: bool,
    /// Whether every worker is done (the last sample of the run).
    pub finished: bool,
    /// Responses so far (warm-up included).
    pub requests: u64,
    /// Failures so far (warm-up included).
    pub errors: u64,
    /// Failures so far by kind (warm-up included).
    pub kinds: crate::live::ErrorKinds,
    /// Median latency (corrected, coarse: within about 12%) of the responses so far: of the
    /// warm-up while it lasts, then of the measured window.
    pub p50_ns: Option<u64>,
    /// 99th percentile, likewise.
    pub p99_ns: Option<u64>,
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
            LoadError::Setup(_) => f.write_str("setting up a worker"),
        }
    }
}

// A configuration error is shown as itself (its Display is this one's), so it is not also
// a source: `{:#}` would print it twice ("--rate must be positive: --rate must be positive").
impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Config(_) => None,
            LoadError::Setup(e) => Some(e),
        }
    }
}

/// Runs the load described by `config`, calling `tick` with progress four times a second, at
/// the end of the warm-up, and once at the end.
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
        let h2 = config.protocol.is_h2();
        crate::tls::preflight(t, tls, config.connect_timeout, h2).map_err(LoadError::Config)?;
    } else if let Some(t) = config.targets.first().filter(|_| config.protocol.is_h2()) {
        crate::h2::preflight_h2c(t, config.connect_timeout).map_err(LoadError::Config)?;
    }
    if matches!(config.stop, Stop::Requests(_)) && !config.warmup.is_zero() {
        return Err(LoadError::Config(ConfigError(
            "--warmup applies to timed runs (-d), not to -n".into(),
        )));
    }
    let (shared, t0, wall_origin) = shared_state(config);
    let (tx, rx) = mpsc::channel::<Interval>();
    let workers = run_workers(&shared, tx, interrupt, tick)?;
    let elapsed = workers
        .iter()
        .map(|w| w.wall_time)
        .max()
        .unwrap_or_default();
    let intervals = match config.hdr_interval {
        Some(every) => merge_intervals(rx, every, shared.interval_phase_ns, elapsed),
        None => Vec::new(),
    };
    let start = wall_origin + Duration::from_nanos(shared.measure_start_ns - t0);
    Ok(Outcome {
        result: RunResult {
            info: info_of(config),
            elapsed,
            workers,
            // The caller knows whether a server ran beside the load; see twelve's bench.rs.
            server: None,
        },
        intervals,
        start,
    })
}

/// What every worker reads: the clock started now, the measured window and stop condition
/// it implies, the request bytes, the schedule (open model) or budget (counted closed run).
/// Also returns the clock's reading at the start, which the window counts from, and the
/// wall-clock time it corresponds to.
fn shared_state(config: &Config) -> (Shared<MonoClock>, u64, SystemTime) {
    let wall_origin = SystemTime::now();
    let clock = MonoClock::new();
    let t0 = clock.now_ns();
    let measure_start_ns = t0 + config.warmup.as_nanos() as u64;
    let interval_phase_ns = match config.hdr_interval {
        Some(every) => {
            let wall = (wall_origin + config.warmup)
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default();
            (wall.as_nanos() % every.as_nanos().max(1)) as u64
        }
        None => 0,
    };
    let (end_ns, limit) = match config.stop {
        Stop::Duration(d) => (measure_start_ns + d.as_nanos() as u64, u64::MAX),
        Stop::Requests(n) => (u64::MAX, n),
    };
    let ramp = match (config.model, config.ramp, config.stop) {
        (Model::Open { .. }, Some(ramp), Stop::Duration(window)) => Some((ramp, window)),
        _ => None,
    };
    let mut schedule = match config.model {
        _ if ramp.is_some() => ramp.map(|(ramp, window)| {
            let per_step = window / ramp.step_rates().len() as u32;
            Schedule::ramp(ramp.segments(config.warmup, per_step), t0, limit)
        }),
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
    if let Some(shard) = config.shard {
        schedule = schedule.map(|s| s.striped(shard));
    }
    let budget = match (&schedule, config.own_requests()) {
        (None, Some(n)) => n,
        _ => u64::MAX,
    };
    let shared = Shared {
        clock,
        config: config.clone(),
        requests: RequestSet::build(config),
        budget: Budget::new(budget),
        schedule,
        measure_start_ns,
        interval_phase_ns,
        end_ns,
        stop: AtomicBool::new(false),
        progress: (0..config.worker_cpus.len())
            .map(|_| ProgressSlot::default())
            .collect(),
    };
    (shared, t0, wall_origin)
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
            let own = config.own_connections();
            let conns = own / threads + usize::from(id < own % threads);
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
    let cfg = &shared.config;
    // Workers before this one hold about `id * c / t` slots.
    let first_slot = id * cfg.connections / cfg.worker_cpus.len();
    let mut dialer = crate::io::Dialer::new(cfg.targets[0].addr, &cfg.sources, conns, first_slot)
        .with_stamps(cfg.rx_time == crate::config::RxTime::Kernel);
    if let Some(path) = &cfg.unix_socket {
        dialer = dialer.with_unix(path)?;
    }
    match cfg.io {
        ClientIo::Epoll => run_over(shared, id, conns, tx, EpollIo::new(dialer, conns)?),
        ClientIo::Uring => run_over(shared, id, conns, tx, UringIo::new(dialer, conns)?),
    }
}

/// Runs the worker over `socket`, with TLS between the dispatch and it for `https://`.
fn run_over<I: crate::io::Io>(
    shared: &Shared<MonoClock>,
    id: usize,
    conns: usize,
    tx: Option<mpsc::Sender<Interval>>,
    socket: I,
) -> std::io::Result<WorkerResult> {
    let target = &shared.config.targets[0];
    let Some(tls) = shared.config.tls.as_ref().filter(|_| target.tls) else {
        return Ok(Worker::with_io(id, shared, conns, tx, socket).run());
    };
    let name = twelve_tls::ClientTls::server_name(target.host())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let io = crate::tls::TlsIo::new(socket, tls.clone(), name, conns);
    Ok(Worker::with_io(id, shared, conns, tx, io).run())
}

/// Merges the workers' log intervals by index into one record per interval of `every`.
/// Interval 0 is the part of a period the window began in (`phase_ns` past its start); the
/// others are whole periods, but for the last, which ends with the run.
fn merge_intervals(
    rx: mpsc::Receiver<Interval>,
    every: Duration,
    phase_ns: u64,
    elapsed: Duration,
) -> Vec<IntervalRecord> {
    let mut by_index: BTreeMap<u64, Recorder> = BTreeMap::new();
    for iv in rx.try_iter() {
        by_index.entry(iv.index).or_default().add(&iv.hist);
    }
    let phase = Duration::from_nanos(phase_ns);
    by_index
        .into_iter()
        .map(|(k, latency)| {
            let offset =
                (every * k as u32).saturating_sub(if k == 0 { Duration::ZERO } else { phase });
            let end = (every * (k as u32 + 1)).saturating_sub(phase);
            IntervalRecord {
                offset,
                length: end.min(elapsed).saturating_sub(offset),
                latency,
            }
        })
        .collect()
}

/// How often live progress is sampled: often enough for a live view to move smoothly, rare
/// enough that the main thread's wake-ups cost the measuring workers nothing they would notice.
const TICK: Duration = Duration::from_millis(250);

/// Samples progress until every worker is done: every [`TICK`], once more at the moment the
/// warm-up ends (so a caller can take its own readings, such as the embedded server's CPU
/// time, at the start of the measured window), and a last time when all are done.
fn watch<C: Clock>(s: &Shared<C>, interrupt: &AtomicBool, mut tick: impl FnMut(&Progress)) {
    let mut next = TICK;
    let mut was_measuring = false;
    // The live percentiles count from the end of the warm-up once it is over.
    let mut base: Option<LiveSum> = None;
    loop {
        std::thread::sleep(Duration::from_millis(10));
        if interrupt.load(Ordering::Relaxed) {
            // Relaxed: workers poll the flag every loop turn; nothing else hangs on it.
            s.stop.store(true, Ordering::Relaxed);
        }
        let finished = s.progress.iter().all(|p| p.done.load(Ordering::Acquire));
        let now = s.clock.now_ns();
        let elapsed = Duration::from_nanos(now);
        let measuring = now >= s.measure_start_ns;
        if elapsed >= next || measuring != was_measuring || finished {
            while next <= elapsed {
                next += TICK;
            }
            let live = LiveSum::of(s.progress.iter().map(|p| &p.live));
            if measuring && !was_measuring {
                base = Some(live.clone());
            }
            was_measuring = measuring;
            tick(&Progress {
                elapsed,
                measuring,
                finished,
                kinds: live.kinds,
                p50_ns: live.quantile_since(base.as_ref(), 0.50),
                p99_ns: live.quantile_since(base.as_ref(), 0.99),
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
        if finished {
            return;
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
    // A ramp's offered rate is its mean over the window, and over the window's last 20%.
    let (rate_per_s, offered_end_per_s, ramp) = match (rate_per_s, config.ramp, config.stop) {
        (Some(_), Some(r), Stop::Duration(window)) => {
            let per_step = window / r.step_rates().len() as u32;
            let w = window.as_secs_f64();
            let mean = |a: f64| r.mean_rate(config.warmup, per_step, a, w);
            let text = match r.step_per_s {
                None => format!("linear {} to {} req/s", r.from_per_s, r.to_per_s),
                Some(step) => format!(
                    "{} to {} req/s in steps of {step}, {}s each",
                    r.from_per_s,
                    r.to_per_s,
                    per_step.as_secs_f64()
                ),
            };
            (Some(mean(0.0)), Some(mean(0.8 * w)), Some(text))
        }
        _ => (rate_per_s, None, None),
    };
    let shards = f64::from(config.shard.map_or(1, |s| s.count));
    RunInfo {
        io: Some(
            match config.io {
                ClientIo::Epoll => "epoll",
                ClientIo::Uring => "uring",
            }
            .to_string(),
        ),
        // A Unix socket's bytes never pass the stamping receive path: booked at the read.
        rx_time: Some(
            if config.unix_socket.is_some() {
                crate::config::RxTime::Read
            } else {
                config.rx_time
            }
            .as_str()
            .to_string(),
        ),
        offered_end_per_s: offered_end_per_s.map(|r| r / shards),
        ramp,
        urls: config.targets.iter().map(|t| t.url.clone()).collect(),
        method: config.method.clone(),
        threads: config.worker_cpus.len(),
        connections: config.own_connections(),
        pipeline: config.pipeline,
        // This process's share: of the ramp's mean for a ramp, else of the one rate.
        rate_per_s: rate_per_s.map(|r| r / shards),
        arrival,
        duration: match config.stop {
            Stop::Duration(d) => Some(d),
            Stop::Requests(_) => None,
        },
        requests: config.own_requests(),
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
        server_cpus: Vec::new(),
        shard: config.shard.map(|s| ShardInfo {
            index: s.index,
            count: s.count,
            connections: config.connections,
            rate_per_s,
            requests: match config.stop {
                Stop::Requests(n) => Some(n),
                Stop::Duration(_) => None,
            },
        }),
        max_error_percent: None,
        protocol: config.protocol.is_h2().then(|| {
            let tls = config.targets.first().is_some_and(|t| t.tls);
            config.protocol.name(tls).to_owned()
        }),
        streams: config.protocol.is_h2().then(|| config.protocol.streams()),
        tls: config
            .tls
            .as_ref()
            .filter(|_| config.targets.first().is_some_and(|t| t.tls))
            .map(|t| t.describe().to_owned()),
    }
}
