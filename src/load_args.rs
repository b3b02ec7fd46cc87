//! The load flags `twelve bench`, `twelve sweep` and `twelve compare` share (one set of names,
//! defaults and help text), the twelve-load `Config` they build, the CPU plan, and the
//! embedded server a run without a URL measures.
use anyhow::{Context, bail};
use std::path::PathBuf;
use std::time::Duration;
use twelve_load::{Arrival, Config, Model, Stop, Target, parse_count, parse_duration};
use twelve_sweep::DrainPolicy;
use twelve_sys::CpuList;

/// Warm-up when --warmup is not given and the run is timed (a counted run has none).
pub const DEFAULT_WARMUP: &str = "1s";

/// The bench settings shared by every command that generates load.
#[derive(clap::Args, Debug, Clone)]
pub struct LoadArgs {
    /// Connections, spread evenly over the threads (a sweep's --concurrency plan sets its own).
    #[arg(help_heading = "Connection", short = 'c', long, value_name = "N", default_value_t = 64, value_parser = whole, allow_negative_numbers = true)]
    pub connections: usize,
    /// Worker threads (default: one per CPU of --cpus, less the embedded server's, and no more
    /// than -c: one connection needs one worker).
    #[arg(help_heading = "Connection", short = 't', long, value_name = "N", value_parser = whole, allow_negative_numbers = true)]
    pub threads: Option<usize>,
    /// CPUs to pin workers (and the embedded server) to, kernel list syntax (0-3,8).
    /// Default: the CPUs this process may run on (its affinity mask: `taskset -c` is honoured).
    #[arg(help_heading = "Connection", long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// CPU of the embedded server (default: the first of --cpus).
    #[arg(help_heading = "Connection", long, value_name = "CPU", value_parser = whole, allow_negative_numbers = true)]
    pub server_cpu: Option<usize>,
    /// Measured duration of each run (after --warmup): 10s, 500ms, 2m.
    #[arg(
        help_heading = "Load model",
        short = 'd',
        long,
        value_name = "DUR",
        default_value = "5s"
    )]
    pub duration: String,
    /// Warm-up before each run, excluded from every statistic (default 1s; 0 when bench runs
    /// by count, -n).
    #[arg(help_heading = "Load model", long, value_name = "DUR")]
    pub warmup: Option<String>,
    /// Arrival process of the open model.
    #[arg(help_heading = "Load model", long, value_name = "KIND", default_value = "uniform", value_parser = ["uniform", "poisson"])]
    pub arrival: String,
    /// Seed of the Poisson arrivals and of the {rand:MIN:MAX} values of request templates.
    #[arg(
        help_heading = "Load model",
        long,
        value_name = "N",
        default_value_t = 1
    )]
    pub seed: u64,
    /// Requests in flight per connection (one send per batch, one latency per request).
    #[arg(help_heading = "Load model", short = 'p', long, value_name = "DEPTH", default_value_t = 1, value_parser = whole, allow_negative_numbers = true)]
    pub pipeline: usize,
    /// HTTP/2 over TLS to an https:// URL (ALPN h2; a server that does not offer it is an
    /// error).
    #[arg(long, conflicts_with = "h2c")]
    pub h2: bool,
    /// HTTP/2 with prior knowledge (h2c) to an http:// URL.
    #[arg(long)]
    pub h2c: bool,
    /// HTTP/2: the most concurrent streams per connection, as h2load's -m (here -m is
    /// --method); the server's SETTINGS_MAX_CONCURRENT_STREAMS may lower it.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = whole, allow_negative_numbers = true)]
    pub streams: usize,
    /// A new connection per request (sends Connection: close), as ab without -k.
    #[arg(help_heading = "Connection", long)]
    pub close: bool,
    /// Reopen each connection after N requests.
    #[arg(help_heading = "Connection", long, value_name = "N")]
    pub requests_per_conn: Option<u64>,
    /// HTTP method.
    #[arg(
        help_heading = "Requests",
        short = 'm',
        long,
        value_name = "METHOD",
        default_value = "GET"
    )]
    pub method: String,
    /// Extra header line "Name: value" (repeatable).
    #[arg(
        help_heading = "Requests",
        short = 'H',
        long = "header",
        value_name = "HEADER"
    )]
    pub headers: Vec<String>,
    /// Request body.
    #[arg(
        help_heading = "Requests",
        short = 'b',
        long,
        value_name = "BODY",
        conflicts_with = "body_file"
    )]
    pub body: Option<String>,
    /// Request body read from a file.
    #[arg(help_heading = "Requests", long, value_name = "FILE")]
    pub body_file: Option<PathBuf>,
    /// A request with no complete response after this long is counted as a timeout and its
    /// connection reopened.
    #[arg(
        help_heading = "Connection",
        long,
        value_name = "DUR",
        default_value = "2s"
    )]
    pub timeout: String,
    /// Give up a connect after this long (counted, then retried).
    #[arg(
        help_heading = "Connection",
        long,
        value_name = "DUR",
        default_value = "2s"
    )]
    pub connect_timeout: String,
    /// Whether the client may nap on its own timer after a poll that found fewer than 16
    /// ready connections, instead of blocking until the server's next send wakes it. auto:
    /// only while the client is the limit (a worker 90% busy); with CPU to spare it blocks as
    /// an independent client would, since its naps would batch requests and flatter the
    /// server. on: whenever allowed. Either naps only when everything pending carries its own
    /// time (kernel receive stamps; no connect or TLS handshake under way), a quarter of the
    /// server's queue time, at most a tenth of the mean latency and 1ms. off: never. DUR: nap
    /// that long after every small batch (at most 10ms). The report says when it napped and why.
    #[arg(help_heading = "Connection", long, value_name = "auto|on|off|DUR", default_value = "auto", value_parser = twelve_load::Coalesce::parse)]
    pub coalesce: twelve_load::Coalesce,
    /// Open model: how late a due request may leave, so that one wake-up of the client serves
    /// every request due within it (and reads the answers that came meanwhile). Smaller keeps
    /// the schedule tighter (the self-check reports the achieved schedule lag); larger costs
    /// the client less CPU per request (1ms is wrk2's granularity). At most 10ms.
    #[arg(
        help_heading = "Load model",
        long,
        value_name = "DUR",
        default_value = "20us"
    )]
    pub slack: String,
    /// When a response counts as received: kernel (the kernel's receive timestamp,
    /// SO_TIMESTAMPNS, so a read that comes late, after a nap or behind other connections'
    /// work, adds nothing to the latency) or read (when the client read it, as wrk does).
    /// Stamping is switched on for the whole host while a socket asks for it: every packet
    /// received, the server's too, then pays one clock read.
    #[arg(help_heading = "Connection", long, value_name = "kernel|read", default_value = "kernel", value_parser = twelve_load::RxTime::parse)]
    pub rx_time: twelve_load::RxTime,
    /// Socket engine: epoll (readiness; a send and a recv per request window), uring
    /// (io_uring completions: one io_uring_enter per loop turn for all its sends and receives),
    /// or auto (uring where the kernel allows it, else epoll, saying why). auto is the default:
    /// uring spends less of the client's CPU per request where the client is the limit.
    #[arg(help_heading = "Connection", long = "io", value_name = "ENGINE", default_value = "auto", value_parser = ["epoll", "uring", "auto"])]
    pub io: String,
    /// Spread connections over these source addresses (127.0.0.2-127.0.0.40, or a comma
    /// list): each brings its own range of local ports, the way out of EADDRNOTAVAIL.
    #[arg(help_heading = "Connection", long, value_name = "LIST")]
    pub source: Option<String>,
    /// Connect to HOST:PORT instead of the URL's host (the Host header stays the URL's), as
    /// curl's --connect-to.
    #[arg(help_heading = "Connection", long, value_name = "HOST:PORT")]
    pub connect_to: Option<String>,
    /// Connect to the Unix-domain socket at PATH instead of the URL's host (the URL still
    /// gives the Host header and path).
    #[arg(
        help_heading = "Connection",
        long,
        value_name = "PATH",
        conflicts_with = "connect_to"
    )]
    pub unix_socket: Option<PathBuf>,
    #[command(flatten)]
    pub tls: crate::load_tls::TlsArgs,
}

/// A count flag's value (`-c`, `-t`, `-p`, `--server-cpu`): a whole number, refused in the flag's
/// own sentence (clap names the flag and the value) rather than clap's "use '-- -5'" tip, which
/// `allow_negative_numbers` keeps away.
fn whole(text: &str) -> Result<usize, String> {
    text.parse()
        .map_err(|_| "must be a whole number, 0 or more (e.g. 1, 64)".to_string())
}

/// The pause between runs, for the commands that make several (sweep, compare).
#[derive(clap::Args, Debug, Clone)]
pub struct DrainArgs {
    /// Between runs, wait at most this long for the last run's connections to drain.
    #[arg(long, value_name = "DUR", default_value = "30s")]
    pub drain_timeout: String,
}

impl DrainArgs {
    /// The drain policy between runs.
    pub fn policy(&self) -> anyhow::Result<DrainPolicy> {
        Ok(DrainPolicy {
            max_wait: parse_duration(&self.drain_timeout).context("--drain-timeout")?,
            ..DrainPolicy::default()
        })
    }
}

/// Where the embedded server runs and where each worker runs.
#[derive(Debug, PartialEq, Eq)]
pub struct CpuPlan {
    /// The embedded server's CPU; `None` when a URL was given.
    pub server: Option<usize>,
    /// Each worker's CPU.
    pub workers: Vec<Option<usize>>,
}

impl LoadArgs {
    /// The run configuration against `urls`: closed model, timed, or counted when `requests`
    /// (the text of -n/--requests) is given. Callers set the model (see [`Self::open`]) and
    /// the CPUs (see [`Self::cpus`]).
    pub fn config(&self, urls: &[String], requests: Option<&str>) -> anyhow::Result<Config> {
        let to = self.connect_addr()?;
        let targets = urls
            .iter()
            .map(|u| Target::parse_at(u, to))
            .collect::<Result<Vec<_>, _>>()?;
        self.config_of(targets, requests)
    }

    /// [`Self::config`] against targets already parsed (a `--targets` file's): the protocol
    /// and the TLS client follow their schemes.
    pub fn config_of(
        &self,
        targets: Vec<Target>,
        requests: Option<&str>,
    ) -> anyhow::Result<Config> {
        let protocol = self.protocol(&targets)?;
        let mut tls = crate::load_tls::client(&self.tls, &targets)?;
        if protocol.is_h2() {
            tls = tls.map(|t| t.with_alpn_h2());
        }
        let mut c = Config::new(targets);
        c.tls = tls;
        c.protocol = protocol;
        c.connections = self.connections;
        c.method = self.method.to_ascii_uppercase();
        c.headers = self.headers.clone();
        c.body = match (&self.body, &self.body_file) {
            (Some(b), _) => b.clone().into_bytes(),
            (None, Some(p)) => {
                std::fs::read(p).with_context(|| format!("--body-file {}", p.display()))?
            }
            (None, None) => Vec::new(),
        };
        c.pipeline = self.pipeline;
        c.seed = self.seed;
        c.keep_alive = !self.close;
        c.requests_per_conn = self.requests_per_conn;
        c.stop = match requests {
            Some(n) => Stop::Requests(parse_count(n).context("-n/--requests")?),
            None => Stop::Duration(parse_duration(&self.duration).context("-d/--duration")?),
        };
        c.warmup = match (&self.warmup, requests) {
            (Some(w), _) => parse_duration(w).context("--warmup")?,
            (None, Some(_)) => Duration::ZERO,
            (None, None) => parse_duration(DEFAULT_WARMUP)?,
        };
        c.timeout = parse_duration(&self.timeout).context("--timeout")?;
        c.connect_timeout = parse_duration(&self.connect_timeout).context("--connect-timeout")?;
        c.coalesce = self.coalesce;
        c.slack = parse_duration(&self.slack).context("--slack")?;
        if c.slack > twelve_load::pacing::MAX_SLACK {
            anyhow::bail!("--slack {}: at most 10ms", self.slack);
        }
        c.rx_time = self.rx_time;
        c.io = self.client_io()?;
        if let Some(text) = &self.source {
            c.sources = twelve_load::parse_sources(text)?;
        }
        self.connect_to(&mut c)?;
        c.unix_socket = self.unix_socket.clone();
        Ok(c)
    }

    /// HTTP/1.1, or HTTP/2 with `--h2` (https://) or `--h2c` (http://) and `--streams`.
    fn protocol(&self, targets: &[Target]) -> anyhow::Result<twelve_load::Protocol> {
        let tls = targets.first().is_some_and(|t| t.tls);
        if self.h2 && !tls {
            anyhow::bail!(
                "--h2 speaks HTTP/2 over TLS: give an https:// URL, or use --h2c for http://"
            );
        }
        if self.h2c && tls {
            anyhow::bail!(
                "--h2c speaks HTTP/2 with prior knowledge over plain TCP: give an http:// URL, \
                 or use --h2 for https://"
            );
        }
        if !(self.h2 || self.h2c) {
            if self.streams != 1 {
                anyhow::bail!(
                    "--streams {}: streams are HTTP/2's; add --h2 (https://) or --h2c (http://)",
                    self.streams
                );
            }
            return Ok(twelve_load::Protocol::Http1);
        }
        let streams = u32::try_from(self.streams).unwrap_or(u32::MAX);
        Ok(twelve_load::Protocol::H2 { streams })
    }

    /// The socket engine `--io` asks for, probed: `uring` where io_uring cannot run is an
    /// error, `auto` then falls back to epoll with one line saying why.
    fn client_io(&self) -> anyhow::Result<twelve_load::ClientIo> {
        use twelve_load::ClientIo;
        if self.io == "epoll" {
            return Ok(ClientIo::Epoll);
        }
        match twelve_sys::uring::ring::probe() {
            Ok(()) => Ok(ClientIo::Uring),
            Err(e) if self.io == "auto" => {
                // Said once per process: `compare` and `doctor --measure` build several runs.
                static SAID: std::sync::Once = std::sync::Once::new();
                SAID.call_once(|| {
                    eprintln!("twelve: --io auto: io_uring is unavailable here ({e}); using epoll");
                });
                Ok(ClientIo::Epoll)
            }
            Err(e) => anyhow::bail!(
                "--io uring: io_uring is unavailable here ({e}); use --io epoll or --io auto"
            ),
        }
    }

    /// Points every target at `--connect-to`'s address, when given.
    pub fn connect_to(&self, c: &mut Config) -> anyhow::Result<()> {
        if let Some(addr) = self.connect_addr()? {
            for t in &mut c.targets {
                t.addr = addr;
            }
        }
        Ok(())
    }

    /// `--connect-to`'s address, resolved, when given.
    pub fn connect_addr(&self) -> anyhow::Result<Option<std::net::SocketAddr>> {
        let Some(text) = &self.connect_to else {
            return Ok(None);
        };
        use std::net::ToSocketAddrs;
        let addr = text
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .with_context(|| {
                format!(
                    "--connect-to {text}: expected HOST:PORT that resolves, e.g. 127.0.0.1:8080"
                )
            })?;
        Ok(Some(addr))
    }

    /// The --warmup text as given, or the default's.
    pub fn warmup_text(&self) -> &str {
        self.warmup.as_deref().unwrap_or(DEFAULT_WARMUP)
    }

    /// The open model at `rate_per_s` with these arrival settings.
    pub fn open(&self, rate_per_s: f64) -> Model {
        Model::Open {
            rate_per_s,
            arrival: if self.arrival == "poisson" {
                Arrival::Poisson
            } else {
                Arrival::Uniform
            },
            seed: self.seed,
        }
    }

    /// Refuses a `--cpus` or `--server-cpu` that names a CPU this host does not have online
    /// (pinning to it would fail later as `Invalid argument (os error 22)`).
    pub fn check_online(&self) -> anyhow::Result<()> {
        if let Some(text) = &self.cpus {
            crate::limits::cpus("--cpus", text)?;
        }
        if let Some(cpu) = self.server_cpu {
            crate::limits::cpus("--server-cpu", &cpu.to_string())?;
        }
        Ok(())
    }

    /// The embedded server's CPU (when `embedded`: no URL was given) and each worker's CPU:
    /// one worker per CPU of --cpus less the server's (no more than -c), or --threads of them
    /// taken in turn.
    /// Without --cpus the CPUs are those this process may run on (its affinity mask, which
    /// `taskset -c` and a container's cpuset set), not every online CPU.
    pub fn cpus(&self, embedded: bool) -> anyhow::Result<CpuPlan> {
        let cpus = match &self.cpus {
            Some(text) => CpuList::parse(text).with_context(|| format!("--cpus {text}"))?,
            None => twelve_sys::cpus::allowed().unwrap_or_else(|_| twelve_sys::cpus::online()),
        };
        let threads = self.threads.ok_or(self.connections);
        plan(&cpus, self.server_cpu, threads, embedded)
    }
}

/// The CPU plan over `cpus` (see [`LoadArgs::cpus`]); `threads` is `Ok(--threads)`, or
/// `Err(connections)` when -t was not given: then one worker per CPU, but no more workers than
/// connections (every worker holds at least one).
fn plan(
    cpus: &CpuList,
    server_cpu: Option<usize>,
    threads: Result<usize, usize>,
    embedded: bool,
) -> anyhow::Result<CpuPlan> {
    if cpus.is_empty() {
        bail!("--cpus: no CPU to run on");
    }
    let server = embedded.then(|| server_cpu.unwrap_or(cpus.as_slice()[0]));
    let mut pool: Vec<usize> = cpus
        .as_slice()
        .iter()
        .copied()
        .filter(|c| Some(*c) != server)
        .collect();
    if pool.is_empty() {
        // One CPU in all: the workers share it with the server.
        pool = cpus.as_slice().to_vec();
    }
    let threads = threads.unwrap_or_else(|connections| pool.len().min(connections).max(1));
    if threads == 0 {
        bail!("--threads 0: need at least one worker");
    }
    let workers = (0..threads).map(|i| Some(pool[i % pool.len()])).collect();
    Ok(CpuPlan { server, workers })
}

/// twelve's own server, started in this process when a run is given no URL.
pub struct Embedded(Option<twelve_engine::ServerHandle>);

impl Embedded {
    /// With a CPU, starts the server there (one worker, a free loopback port, the same
    /// TechEmpower routes `twelve serve` answers) and returns its /json URL as the only
    /// target; without one, returns `urls` and starts nothing.
    pub fn start(cpu: Option<usize>, urls: &[String]) -> anyhow::Result<(Self, Vec<String>)> {
        let Some(cpu) = cpu else {
            return Ok((Self(None), urls.to_vec()));
        };
        let mut config = twelve_engine::Config::loopback(1);
        config.cpus = CpuList::from_cpus([cpu]);
        let handle = twelve_engine::Server::new(config, twelve_engine::apps::techempower::router())
            .start()
            .with_context(|| format!("starting the embedded server on CPU {cpu}"))?;
        let url = format!("http://{}/json", handle.local_addrs()[0]);
        Ok((Self(Some(handle)), vec![url]))
    }

    /// The server's CPU time so far (zero when none was started).
    pub fn cpu_time(&self) -> std::time::Duration {
        self.0
            .as_ref()
            .map_or(std::time::Duration::ZERO, |h| h.cpu_time().on_cpu)
    }

    /// Stops the server, if one was started, and waits for its workers.
    pub fn stop(self) {
        if let Some(h) = self.0 {
            h.shutdown();
            h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! plans {
        ($($name:ident: $mask:expr, $server:expr, $threads:expr, $embedded:expr
            => $want_server:expr, $want_workers:expr;)*) => {$(
            #[test]
            fn $name() {
                let cpus = CpuList::parse($mask).unwrap();
                let got = plan(&cpus, $server, $threads, $embedded).unwrap();
                let workers: Vec<usize> = got.workers.iter().map(|w| w.unwrap()).collect();
                assert_eq!((got.server, workers), ($want_server, $want_workers));
            }
        )*};
    }

    plans! {
        // `taskset -c 1`: the mask holds CPU 1 only, so everything runs there.
        taskset_one_cpu_url: "1", None, Ok(1), false => None, vec![1];
        taskset_one_cpu_embedded: "1", None, Err(64), true => Some(1), vec![1];
        taskset_two_cpus_embedded: "2-3", None, Err(64), true => Some(2), vec![3];
        taskset_two_cpus_url: "2-3", None, Err(64), false => None, vec![2, 3];
        server_cpu_given: "0-3", Some(3), Err(64), true => Some(3), vec![0, 1, 2];
        threads_wrap: "0-1", None, Ok(3), false => None, vec![0, 1, 0];
        // No -t: no more workers than connections.
        one_connection_one_worker: "0-1", None, Err(1), false => None, vec![0];
        two_connections_of_four_cpus: "0-3", None, Err(2), true => Some(0), vec![1, 2];
        no_connection_still_one_worker: "0-1", None, Err(0), false => None, vec![0];
        // -t given: as many workers as asked, whatever -c.
        threads_beyond_connections: "0-1", None, Ok(2), false => None, vec![0, 1];
    }

    #[test]
    fn no_cpu_is_refused() {
        assert!(plan(&CpuList::default(), None, Err(1), false).is_err());
    }

    #[test]
    fn zero_threads_is_refused() {
        let cpus = CpuList::parse("0").unwrap();
        assert!(plan(&cpus, None, Ok(0), false).is_err());
    }
}
