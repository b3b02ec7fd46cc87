//! `Server` and `ServerHandle`: create the listeners, start one pinned worker per CPU, and
//! stop them gracefully.

use crate::backend::worker::{AcceptToken, WorkerSetup};
use crate::backend::{epoll, uring};
use crate::config::{Backend, Config, Steer};
use crate::conn::{Ctx, TimeoutsMs};
use crate::metrics::{MetricsSnapshot, ServerMetrics};
use crate::metrics_route::add_metrics_route;
use crate::pool::Pool;
use crate::response::Scratch;
use crate::router::Router;
use std::fmt;
use std::net::SocketAddr;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// Capacity of pooled read and write buffers: a head up to this size, or a pipelined batch of
/// small requests, needs no growth.
const BUFFER_BYTES: usize = 16 * 1024;
/// Most buffers a worker keeps pooled.
const POOLED_BUFFERS: usize = 1024;

/// Why a server did not start.
#[derive(Debug)]
pub enum StartError {
    /// `Config::cpus` was empty.
    NoCpus,
    /// `Config::listen` was empty.
    NoListenAddress,
    /// `Steer::Cbpf` needs workers on CPUs `0..n` exactly (the program's value is an index
    /// into the reuseport group, which must hold one listener per CPU in that order).
    CbpfNeedsCpusFromZero,
    /// Creating, binding or configuring a listener failed.
    Listen {
        /// The address.
        addr: SocketAddr,
        /// The error.
        source: std::io::Error,
    },
    /// `Config::root` could not be opened as a directory.
    Root {
        /// The directory.
        path: std::path::PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A socket given to [`Server::start_with_listeners`] is not a usable listener, or the
    /// listeners do not match the workers.
    Inherited {
        /// The worker it was meant for.
        worker: usize,
        /// The error.
        source: std::io::Error,
    },
    /// A worker could not pin itself or set up its epoll instance.
    Worker {
        /// The worker's CPU.
        cpu: usize,
        /// The error.
        source: std::io::Error,
    },
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoCpus => f.write_str("no CPU to run a worker on"),
            Self::NoListenAddress => f.write_str("no address to listen on"),
            Self::CbpfNeedsCpusFromZero => {
                f.write_str("CBPF steering needs one worker on each CPU from 0 to N-1")
            }
            // The source is not repeated here: `source()` returns it for error chains.
            Self::Listen { addr, .. } => write!(f, "cannot listen on {addr}"),
            Self::Root { path, .. } => write!(f, "cannot serve files from {}", path.display()),
            Self::Worker { cpu, .. } => write!(f, "cannot start the worker on CPU {cpu}"),
            Self::Inherited { worker, .. } => {
                write!(f, "unusable inherited listener for worker {worker}")
            }
        }
    }
}

impl std::error::Error for StartError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Listen { source, .. }
            | Self::Root { source, .. }
            | Self::Inherited { source, .. }
            | Self::Worker { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// An HTTP/1.1 server: a [`Config`] and a [`Router`], not yet running.
///
/// ```no_run
/// use twelve_engine::{Config, Response, Router, Server};
/// use twelve_http::Request;
///
/// let router = Router::new().get("/hello", |_: &Request<'_, '_>, _: &[u8], res: &mut Response<'_>| {
///     res.send(200, "text/plain", &[], b"hi")
/// });
/// let handle = Server::new(Config::loopback(1), router).start()?;
/// println!("listening on {:?}", handle.local_addrs());
/// handle.shutdown();
/// handle.join();
/// # Ok::<(), twelve_engine::StartError>(())
/// ```
#[derive(Debug)]
pub struct Server {
    config: Config,
    router: Router,
}

impl Server {
    /// A server for `config` answering through `router`.
    pub fn new(config: Config, router: Router) -> Self {
        Self { config, router }
    }

    /// Creates the listeners (one per worker and address, all in one `SO_REUSEPORT` group per
    /// address), starts one worker thread per CPU of `Config::cpus`, each pinned before it
    /// allocates, and returns once every worker is ready to accept. Raises the process's soft
    /// `RLIMIT_NOFILE` to its hard limit (best effort). With `Config::root`, static
    /// files answer `GET`/`HEAD` requests no route matched (unless the router has its own
    /// fallback).
    pub fn start(self) -> Result<ServerHandle, StartError> {
        self.start_inner(None)
    }

    /// Like [`Server::start`], but with listening sockets created elsewhere: inherited across
    /// `exec`, received over `SCM_RIGHTS` from the previous generation (see
    /// [`ServerHandle::listener_dups`]), or from systemd. `listeners[i]` are worker *i*'s
    /// listeners (one per address, the same addresses for every worker), so handing a
    /// generation's sockets on unchanged keeps every queued connection and, with CBPF
    /// steering, the group's order (docs/restart.md). Each must be a listening TCP
    /// socket; it is made non-blocking and close-on-exec. `Config::listen` and
    /// `Config::steer` are not applied: the sockets keep the options they were created with.
    pub fn start_with_listeners(
        self,
        listeners: Vec<Vec<OwnedFd>>,
    ) -> Result<ServerHandle, StartError> {
        self.start_inner(Some(listeners))
    }

    fn start_inner(self, inherited: Option<Vec<Vec<OwnedFd>>>) -> Result<ServerHandle, StartError> {
        let Self { config, router } = self;
        let cpus = config.cpus.as_slice().to_vec();
        check(&config, &cpus, inherited.is_some())?;
        let router = with_static_files(router, &config)?;
        // More descriptors than the default 1024 are needed for any real load; best effort.
        let _ = twelve_sys::net::raise_nofile_limit();
        let (listeners, addrs) = match inherited {
            None => create_listeners(&config, &cpus)?,
            Some(given) => adopt_listeners(given, cpus.len())?,
        };
        // The handle keeps its own descriptors of the sockets until shutdown, to hand them on.
        let (io, io_fallback) = choose_backend(config.io);
        let held =
            dup_all(&listeners).map_err(|source| StartError::Inherited { worker: 0, source })?;
        let metrics = Arc::new(ServerMetrics::new(&cpus, config.generation));
        let router = match &config.metrics_path {
            Some(path) => add_metrics_route(router, path, &metrics),
            None => router,
        };
        let (accepting, stopped_accepting) = std::sync::mpsc::channel();
        let shared = Shared {
            config: &config,
            stop: Arc::new(AtomicBool::new(false)),
            accepting,
            router: Arc::new(router),
            metrics,
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let started = shared.spawn_workers(&cpus, listeners, io, tx)?;
        // Only the workers' tokens may keep the channel open (see `AcceptToken`).
        drop(shared.accepting);
        let handle = ServerHandle {
            backends: vec![io; cpus.len()],
            io_fallback,
            addrs,
            cpus,
            threads: started.threads,
            wakers: started.wakers,
            stop: shared.stop,
            stopped_accepting: std::sync::Mutex::new(stopped_accepting),
            metrics: shared.metrics,
            held: std::sync::Mutex::new(held),
        };
        handle.await_ready(&rx)
    }
}

/// Rejects a configuration no worker could start with.
fn check(config: &Config, cpus: &[usize], inherited: bool) -> Result<(), StartError> {
    if cpus.is_empty() {
        return Err(StartError::NoCpus);
    }
    if config.listen.is_empty() && !inherited {
        return Err(StartError::NoListenAddress);
    }

    if config.steer == Steer::Cbpf && cpus.iter().enumerate().any(|(i, c)| i != *c) {
        return Err(StartError::CbpfNeedsCpusFromZero);
    }
    Ok(())
}

/// With `Config::root`, static files answer what no route matched (unless the router has a
/// fallback of its own).
fn with_static_files(router: Router, config: &Config) -> Result<Router, StartError> {
    let Some(root) = &config.root else {
        return Ok(router);
    };
    let files = crate::Files::open(root, config.file_cache).map_err(|source| StartError::Root {
        path: root.clone(),
        source,
    })?;
    Ok(if router.has_fallback() {
        router
    } else {
        router.fallback_with(files.precompressed(config.precompressed))
    })
}

/// A worker's readiness report: its CPU, and the backend it runs or why it could not pin itself
/// and set up.
type ReadySender = std::sync::mpsc::Sender<(usize, std::io::Result<Backend>)>;

/// The longest [`ServerHandle::shutdown`] waits for the workers to stop accepting.
const STOP_ACCEPTING_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Sets the stop flag and wakes every worker through its eventfd.
fn stop_workers(stop: &AtomicBool, wakers: &[Arc<OwnedFd>]) {
    // Release pairs with the worker's Acquire load after the eventfd wake-up.
    stop.store(true, Ordering::Release);
    for w in wakers {
        let _ = rustix::io::write(&**w, &1u64.to_ne_bytes());
    }
}

/// The started workers' threads and wake-up eventfds, in worker order.
struct Started {
    threads: Vec<JoinHandle<()>>,
    wakers: Vec<Arc<OwnedFd>>,
}

/// What every worker's setup is made from.
struct Shared<'a> {
    config: &'a Config,
    stop: Arc<AtomicBool>,
    /// Cloned into every worker's setup.
    accepting: AcceptToken,
    router: Arc<Router>,
    metrics: Arc<ServerMetrics>,
}

impl Shared<'_> {
    /// Starts one worker per CPU of `cpus`, worker *i* with `listeners[i]`, each reporting
    /// readiness on `tx`. Returns their threads and wake-up eventfds; on a failure, stops the
    /// workers already started before reporting it.
    fn spawn_workers(
        &self,
        cpus: &[usize],
        listeners: Vec<Vec<OwnedFd>>,
        io: Backend,
        tx: ReadySender,
    ) -> Result<Started, StartError> {
        let mut threads = Vec::new();
        let mut wakers = Vec::new();
        for (i, (cpu, mine)) in cpus.iter().copied().zip(listeners).enumerate() {
            let flags =
                rustix::event::EventfdFlags::CLOEXEC | rustix::event::EventfdFlags::NONBLOCK;
            let started = rustix::event::eventfd(0, flags)
                .map(Arc::new)
                .map_err(std::io::Error::from)
                .and_then(|wake| {
                    wakers.push(wake.clone());
                    spawn_worker(self.worker(i, cpu, mine, wake), io, tx.clone())
                });
            match started {
                Ok(t) => threads.push(t),
                Err(source) => {
                    stop_workers(&self.stop, &wakers);
                    threads.into_iter().for_each(|t| drop(t.join()));
                    return Err(StartError::Worker { cpu, source });
                }
            }
        }
        Ok(Started { threads, wakers })
    }

    /// Worker `i`'s setup. Allocates nothing on the heap: the worker does that once pinned.
    fn worker(
        &self,
        i: usize,
        cpu: usize,
        listeners: Vec<OwnedFd>,
        wake: Arc<OwnedFd>,
    ) -> WorkerSetup {
        let config = self.config;
        WorkerSetup {
            cpu,
            listeners,
            wake,
            stop: self.stop.clone(),
            ctx: Ctx {
                router: self.router.clone(),
                limits: config.limits,
                timeouts: TimeoutsMs::from(&config.timeouts),
                all_metrics: self.metrics.clone(),
                me: i,
                draining: false,
                high_water: config.write_high_water,
                pool: Pool::new(BUFFER_BYTES, POOLED_BUFFERS),
                scratch: Scratch {
                    extra_line: generation_line(config),
                    codecs: config.compression.map(crate::compress::Codecs::new),
                    ..Scratch::default()
                },
                conn_token: 0,
                handler_timeout_ms: u64::try_from(config.handler_timeout.as_millis())
                    .unwrap_or(u64::MAX),
            },
            max_conns: config.max_conns_per_worker.max(1),
            drain_timeout_ms: u64::try_from(config.drain_timeout.as_millis()).unwrap_or(u64::MAX),
            check_steering: config.check_steering,
            close_idle_on_drain: config.close_idle_on_drain,
            coalesce: config.coalesce,
            served: 0,
            min_batch: config.min_batch.max(2),
            tls: config.tls.clone(),
            tls_listeners: config.tls_listen.clone(),
            tls_http11_listeners: config.tls_http11_listen.clone(),
            h2c_listeners: config.h2c_listen.clone(),
            accepting: Some(self.accepting.clone()),
        }
    }
}

/// The field line of `Config::generation_header`, CRLF-ended, or nothing.
fn generation_line(config: &Config) -> Vec<u8> {
    config
        .generation_header
        .as_ref()
        .map(|name| format!("{name}: {}\r\n", config.generation).into_bytes())
        .unwrap_or_default()
}

/// The backend workers start with, and why `Auto` fell back to epoll. `Auto` stays `Auto` when
/// io_uring works here, so a worker whose own ring fails still falls back.
fn choose_backend(io: Backend) -> (Backend, Option<String>) {
    match io {
        Backend::Auto => match twelve_sys::uring::ring::probe() {
            Ok(()) => (Backend::Auto, None),
            Err(e) => (Backend::Epoll, Some(format!("io_uring unavailable ({e})"))),
        },
        other => (other, None),
    }
}

/// Starts a worker thread: it pins itself, then reports readiness (with the backend it runs)
/// or the failure on `tx`.
fn spawn_worker(
    setup: WorkerSetup,
    io: Backend,
    tx: ReadySender,
) -> std::io::Result<JoinHandle<()>> {
    let cpu = setup.cpu;
    std::thread::Builder::new()
        .name(format!("twelve-w{cpu}"))
        .spawn(move || {
            // Pin first: every allocation of the worker then happens on its CPU.
            if let Err(e) = twelve_sys::cpus::pin_current_thread(cpu) {
                let _ = tx.send((cpu, Err(e)));
                return;
            }
            // A nap of `--coalesce` would otherwise run over by up to the default timer
            // slack, 50 µs (prctl(2), PR_SET_TIMERSLACK): as long as the naps themselves.
            if let Some(nap) = setup.coalesce.longest() {
                let slack = u64::try_from(nap.as_nanos() / 10)
                    .unwrap_or(u64::MAX)
                    .max(1_000);
                let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(slack));
            }
            // The ring is created here, on the worker's own thread: DEFER_TASKRUN rings
            // accept submissions only from the thread that created them.
            let ring = match io {
                Backend::Epoll => None,
                _ => match uring::new_ring() {
                    Ok(r) => Some(r),
                    Err(e) if io == Backend::Uring => {
                        let _ = tx.send((cpu, Err(e)));
                        return;
                    }
                    Err(_) => None,
                },
            };
            match ring {
                Some(ring) => uring::run(setup, ring, |r| {
                    let _ = tx.send((cpu, r.map(|()| Backend::Uring)));
                }),
                None => epoll::run(setup, |r| {
                    let _ = tx.send((cpu, r.map(|()| Backend::Epoll)));
                }),
            }
        })
}

/// Duplicates every descriptor (`F_DUPFD_CLOEXEC`).
fn dup_all(fds: &[Vec<OwnedFd>]) -> std::io::Result<Vec<Vec<OwnedFd>>> {
    fds.iter()
        .map(|w| w.iter().map(OwnedFd::try_clone).collect())
        .collect()
}

/// Checks sockets given to [`Server::start_with_listeners`] and prepares them.
fn adopt_listeners(
    given: Vec<Vec<OwnedFd>>,
    workers: usize,
) -> Result<(Vec<Vec<OwnedFd>>, Vec<SocketAddr>), StartError> {
    let mismatch = |worker, what: &str| StartError::Inherited {
        worker,
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, what.to_owned()),
    };
    if given.len() != workers {
        return Err(mismatch(0, "one list of listeners per worker expected"));
    }
    let per_worker = given[0].len();
    if per_worker == 0 {
        return Err(mismatch(0, "no listener"));
    }
    let mut addrs = Vec::new();
    for (i, mine) in given.iter().enumerate() {
        if mine.len() != per_worker {
            return Err(mismatch(i, "every worker needs a listener on each address"));
        }
        for (j, fd) in mine.iter().enumerate() {
            let err = |source: std::io::Error| StartError::Inherited { worker: i, source };
            if !rustix::net::sockopt::socket_acceptconn(fd).map_err(|e| err(e.into()))? {
                return Err(mismatch(i, "not a listening socket"));
            }
            rustix::io::ioctl_fionbio(fd, true).map_err(|e| err(e.into()))?;
            rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::CLOEXEC).map_err(|e| err(e.into()))?;
            let addr = twelve_sys::net::local_addr(fd.as_fd()).map_err(err)?;
            if i == 0 {
                addrs.push(addr);
            } else if addrs[j] != addr {
                return Err(mismatch(
                    i,
                    "listeners of one address differ between workers",
                ));
            }
        }
    }
    Ok((given, addrs))
}

/// Listeners per worker: `result[i]` holds worker *i*'s listener on each address.
fn create_listeners(
    config: &Config,
    cpus: &[usize],
) -> Result<(Vec<Vec<OwnedFd>>, Vec<SocketAddr>), StartError> {
    let mut per_worker: Vec<Vec<OwnedFd>> = cpus.iter().map(|_| Vec::new()).collect();
    let mut addrs = Vec::new();
    let backlog = twelve_sys::net::somaxconn();
    for &want in &config.listen {
        let mut addr = want;
        if want.port() != 0 {
            // Without this, a second server on a busy port would join the first one's
            // reuseport group and quietly take half of its connections.
            twelve_sys::net::ensure_no_listener(want)
                .map_err(|source| StartError::Listen { addr: want, source })?;
        }
        for (i, &cpu) in cpus.iter().enumerate() {
            let opts = twelve_sys::ListenerOptions {
                backlog,
                incoming_cpu: (config.steer == Steer::IncomingCpu).then_some(cpu as u32),
                busy_poll_us: config.busy_poll_us,
                // Small responses must leave at once, not wait for Nagle's ACK clock;
                // accepted sockets inherit it from the listener.
                nodelay: true,
            };
            let err = |source| StartError::Listen { addr: want, source };
            let fd = twelve_sys::net::reuseport_listener(addr, &opts).map_err(err)?;
            if i == 0 {
                // Port 0: every later listener joins the group on the port the first got.
                addr = twelve_sys::net::local_addr(fd.as_fd()).map_err(err)?;
            }
            per_worker[i].push(fd);
        }
        if config.steer == Steer::Cbpf {
            // The program belongs to the group: attaching it to one member steers all.
            twelve_sys::net::attach_reuseport_cpu_cbpf(per_worker[0].last().expect("one").as_fd())
                .map_err(|source| StartError::Listen { addr: want, source })?;
        }
        addrs.push(addr);
    }
    Ok((per_worker, addrs))
}

/// A running server. Dropping it shuts the server down and waits for its workers.
#[derive(Debug)]
pub struct ServerHandle {
    /// Each worker's backend, in worker order.
    backends: Vec<Backend>,
    io_fallback: Option<String>,
    addrs: Vec<SocketAddr>,
    cpus: Vec<usize>,
    threads: Vec<JoinHandle<()>>,
    wakers: Vec<Arc<OwnedFd>>,
    stop: Arc<AtomicBool>,
    /// Disconnected once no worker accepts (see `AcceptToken`). In a mutex only because a
    /// receiver is not `Sync`; only the handle's caller waits on it.
    stopped_accepting: std::sync::Mutex<std::sync::mpsc::Receiver<()>>,
    metrics: Arc<ServerMetrics>,
    /// Duplicates of every worker's listeners, for [`ServerHandle::listener_dups`]; emptied by
    /// [`ServerHandle::shutdown`] so that the workers' close really closes the sockets.
    held: std::sync::Mutex<Vec<Vec<OwnedFd>>>,
}

impl ServerHandle {
    /// New descriptors (close-on-exec) of every worker's listening sockets, `[worker][address]`,
    /// to hand to the next generation (`SCM_RIGHTS`) before this one shuts down: the sockets,
    /// and every connection queued on them, then live on in the successor, which passes them
    /// to [`Server::start_with_listeners`]. Fails once shutdown has begun.
    pub fn listener_dups(&self) -> std::io::Result<Vec<Vec<OwnedFd>>> {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if held.is_empty() {
            return Err(std::io::Error::other("the server is shutting down"));
        }
        dup_all(&held)
    }

    /// The addresses listened on, in `Config::listen` order, with port 0 resolved.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// The CPUs of the workers, in worker order.
    pub fn cpus(&self) -> &[usize] {
        &self.cpus
    }

    /// The event-loop backend of each worker, in worker order ([`Backend::Epoll`] or
    /// [`Backend::Uring`]).
    pub fn backends(&self) -> &[Backend] {
        &self.backends
    }

    /// Why [`Backend::Auto`] fell back to epoll, if it did.
    pub fn io_fallback(&self) -> Option<&str> {
        self.io_fallback.as_deref()
    }

    /// Sums every worker's counters now (lock-free reads).
    pub fn metrics(&self) -> MetricsSnapshot {
        self.metrics.snapshot()
    }

    /// The CPU time its workers have spent so far, read from their threads
    /// (`/proc/self/task/TID/schedstat`); two readings around a benchmark give what the server
    /// spent on it.
    pub fn cpu_time(&self) -> crate::CpuTime {
        crate::cpu_time::of_workers(&self.cpus)
    }

    /// Begins a graceful shutdown and returns once the workers have stopped accepting (at most
    /// a second later): they answer what is in flight with `Connection: close`, close idle
    /// connections, and exit when none is left or `Config::drain_timeout` has passed. Calling
    /// it again does nothing more.
    ///
    /// Returns whether every worker had stopped accepting by then; `false` when one was still
    /// busy after a second (a slow handler), and may take a connection or two more.
    pub fn shutdown(&self) -> bool {
        // Drop our duplicates first: the workers' close must be the last one.
        self.held.lock().unwrap_or_else(|e| e.into_inner()).clear();
        stop_workers(&self.stop, &self.wakers);
        // Returns once no worker takes a new connection, so that a successor announced ready
        // after it gets every later one. Bounded: a worker busy in a slow handler stops
        // accepting late, not never. Nothing is ever sent: the wait ends when the last token
        // is dropped (a second call finds the channel closed at once).
        let rx = self
            .stopped_accepting
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        matches!(
            rx.recv_timeout(STOP_ACCEPTING_WAIT),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected)
        )
    }

    /// [`ServerHandle::shutdown`] for good, when no successor takes the listeners over: new
    /// connection requests are dropped first ([`twelve_sys::net::drop_connection_requests`]),
    /// so that none completes its handshake between the workers' last `accept` and their close
    /// of the listener, which would reset it; a client whose SYN is dropped is refused once
    /// the listener is closed. Without the filter, about one stop in five under a client that
    /// reconnects at once reset one connection (tests/upgrade.rs). Never before an upgrade:
    /// the successor shares the sockets, filter included.
    /// Returns what [`ServerHandle::shutdown`] returns.
    pub fn shutdown_final(&self) -> bool {
        for fd in self
            .held
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .flatten()
        {
            // Best effort: without the filter the stop is what it was.
            let _ = twelve_sys::net::drop_connection_requests(fd.as_fd());
        }
        self.shutdown()
    }

    /// Waits for every worker's readiness report; if one failed (or died before reporting),
    /// stops them all and returns its failure.
    fn await_ready(
        mut self,
        rx: &std::sync::mpsc::Receiver<(usize, std::io::Result<Backend>)>,
    ) -> Result<Self, StartError> {
        let mut ready = Vec::new();
        for _ in 0..self.threads.len() {
            let (cpu, source) = match rx.recv() {
                Ok((cpu, Ok(backend))) => {
                    ready.push(cpu);
                    if let Some(i) = self.cpus.iter().position(|&c| c == cpu) {
                        self.backends[i] = backend;
                    }
                    continue;
                }
                Ok((cpu, Err(source))) => (cpu, source),
                // Every sender is gone: a worker died (panicked) before reporting.
                Err(_) => {
                    let cpu = self.cpus.iter().copied().find(|c| !ready.contains(c));
                    let source = std::io::Error::other("worker exited while starting");
                    (cpu.unwrap_or(0), source)
                }
            };
            self.shutdown();
            self.join();
            return Err(StartError::Worker { cpu, source });
        }
        Ok(self)
    }

    /// Like [`ServerHandle::join`], then sums the counters: the final figures of the drain.
    pub fn join_with_metrics(self) -> MetricsSnapshot {
        let metrics = self.metrics.clone();
        self.join();
        metrics.snapshot()
    }

    /// Waits for every worker to exit (after [`ServerHandle::shutdown`], or forever).
    pub fn join(mut self) {
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            self.shutdown();
            for t in self.threads.drain(..) {
                let _ = t.join();
            }
        }
    }
}
