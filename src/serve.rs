//! `twelve serve`: command-line flags, the glue to twelve-engine (the TechEmpower endpoints
//! of `twelve_engine::apps::techempower`, with `--database` the database ones of
//! `twelve_pg::apps`, a generation's life run by `twelve_engine::restart`), and the log lines.
use anyhow::{Context, bail};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use twelve_engine::apps::techempower;
use twelve_engine::restart::{self, Ended, Notice};
use twelve_engine::{
    Backend, Coalesce, Config, FileCacheConfig, Limits, ServerHandle, StartError, Steer, Timeouts,
};

/// Flags of `twelve serve`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Address to listen on (repeatable; IPv6 as [::1]:8080). Every worker gets its own
    /// SO_REUSEPORT listener on each address.
    // clap prints this text verbatim (no markdown), so `[::1]` cannot be escaped for rustdoc.
    #[allow(rustdoc::broken_intra_doc_links)]
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    listen: Vec<String>,
    /// Run workers on the first N CPUs of --cpus (default: one per CPU).
    #[arg(long, value_name = "N")]
    workers: Option<usize>,
    /// CPUs to run one pinned worker each on, kernel list syntax (0-3,8). Default: all online.
    #[arg(long, value_name = "LIST")]
    cpus: Option<String>,
    /// How connections are steered to the worker of their receiving CPU: incoming-cpu
    /// (SO_INCOMING_CPU), cbpf (CPU-index BPF program; needs --cpus 0-N, and only correct
    /// while the listener group is never re-created), or none (kernel hash).
    #[arg(long, value_name = "MODE", default_value = "incoming-cpu")]
    steer: String,
    /// Event-loop backend: epoll, uring (io_uring completions: multishot accept and receive
    /// into provided buffers), or auto (uring where the kernel allows it, else epoll, saying
    /// why). epoll is the default until uring is measured at least as fast.
    #[arg(long, value_name = "BACKEND", default_value = "epoll")]
    io: String,
    /// Serve static files from this directory for GET/HEAD paths no route matches.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Bytes of --root's small files each worker keeps in memory (0: none). A kept file goes
    /// out with its head in one send, without open, sendfile or close.
    #[arg(long, value_name = "BYTES", default_value_t = FileCacheConfig::default().bytes)]
    file_cache: usize,
    /// Largest file the cache keeps, in bytes; larger ones are sent with sendfile.
    #[arg(long, value_name = "BYTES", default_value_t = FileCacheConfig::default().max_file)]
    file_cache_max: u64,
    /// Seconds a kept file is served without checking it again. 0: one statx per request, so
    /// a changed file is never served stale; above 0, a change shows within this long.
    #[arg(long, value_name = "SECS", default_value = "0")]
    file_cache_valid: f64,
    /// With --root, serve NAME.br or NAME.gz beside NAME to clients that accept that coding
    /// (nginx's gzip_static and brotli_static).
    #[arg(long)]
    precompressed: bool,
    /// Compress textual 200 responses for clients that accept gzip, br or zstd
    /// (Accept-Encoding, q-values honoured): off (the default), on, or levels such as
    /// gzip=1,br=3,zstd=1,min=512 (the defaults of on; min: smallest body compressed, bytes).
    #[arg(long, value_name = "off|on|LEVELS", default_value = "off")]
    compress: String,
    /// Seconds a request head may take, from its first byte (then 408); also the longest a new
    /// connection may stay silent (then closed without a response).
    #[arg(long, value_name = "SECS", default_value = "10")]
    header_timeout: f64,
    /// Seconds a request body may pause between reads (then 408).
    #[arg(long, value_name = "SECS", default_value = "10")]
    body_timeout: f64,
    /// Seconds a handler that waits (the database endpoints) may take to answer; then 503,
    /// counted as twelve_timeouts_total{kind="handler"}.
    #[arg(long, value_name = "SECS", default_value = "30")]
    handler_timeout: f64,
    /// PostgreSQL for the database endpoints (TechEmpower's /db, /queries, /fortunes,
    /// /updates; HttpArena's /async-db and its crud profile's /crud/items), a libpq URL: postgres://user:password@host:port/db,
    /// ?host=/dir for a Unix socket directory. Without it they are absent; a database that
    /// cannot be reached at start is an error.
    #[arg(long, value_name = "URL")]
    database: Option<String>,
    /// Connections each worker keeps to --database (queries are pipelined on each).
    #[arg(long, value_name = "N", default_value = "2")]
    database_conns: usize,
    /// Least average request-body rate in bytes per second (0: none): a body must be complete
    /// within --body-timeout plus one second per this many bytes received (Apache's
    /// mod_reqtimeout MinRate), else 408. Counted as twelve_timeouts_total{kind="body_rate"}.
    #[arg(long, value_name = "BYTES_PER_S", default_value_t = Timeouts::default().body_min_rate_per_s)]
    body_min_rate: u64,
    /// Seconds an idle keep-alive connection is kept (then closed silently).
    #[arg(long, value_name = "SECS", default_value = "60")]
    keep_alive_timeout: f64,
    /// Seconds a response may make no progress because the client stopped reading.
    #[arg(long, value_name = "SECS", default_value = "30")]
    send_timeout: f64,
    /// Seconds of lingering close (read and discard after the last response), used when more
    /// input may follow it: after an error or a timeout, or with bytes left unread.
    #[arg(long, value_name = "SECS", default_value = "2")]
    linger_timeout: f64,
    /// Seconds to finish in-flight requests after SIGTERM/SIGINT or an upgrade before closing
    /// the rest (hard deadline). Idle keep-alive connections are kept until their next
    /// request, answered with `Connection: close`, or this deadline.
    #[arg(long, value_name = "SECS", default_value = "10")]
    drain_timeout: f64,
    /// Seconds a new generation (SIGUSR2, `twelve upgrade`) has to report ready; then it is
    /// killed and this one carries on serving.
    #[arg(long, value_name = "SECS", default_value = "10")]
    upgrade_timeout: f64,
    /// Binary an upgrade executes, with the same arguments (default: this binary's path as
    /// resolved at start). Replace the file at the path, then upgrade.
    #[arg(long, value_name = "PATH")]
    binary: Option<PathBuf>,
    /// Unix socket for `twelve upgrade --control` (commands: upgrade, restart, status; the
    /// answer comes once the new generation is ready, or says why it failed).
    #[arg(long, value_name = "PATH")]
    control: Option<PathBuf>,
    /// Add `X-Twelve-Generation: <n>` to every response (the generation is always in
    /// /metrics as twelve_generation).
    #[arg(long)]
    generation_header: bool,
    /// Longest request-line in bytes (longer: 414).
    #[arg(long, value_name = "BYTES", default_value_t = Limits::DEFAULT.request_line_bytes)]
    max_request_line: usize,
    /// Longest header field line in bytes (longer: 431).
    #[arg(long, value_name = "BYTES", default_value_t = Limits::DEFAULT.header_line_bytes)]
    max_header_line: usize,
    /// Longest request head in bytes (longer: 431).
    #[arg(long, value_name = "BYTES", default_value_t = Limits::DEFAULT.head_bytes)]
    max_head: usize,
    /// Most header field lines (more: 431; at most 128).
    #[arg(long, value_name = "N", default_value_t = Limits::DEFAULT.headers)]
    max_headers: usize,
    /// Largest request body in bytes (larger: 413).
    #[arg(long, value_name = "BYTES", default_value_t = Limits::DEFAULT.body_bytes)]
    max_body: u64,
    /// After a wait that found fewer than 16 events, nap before waiting again, so that what
    /// arrives meanwhile is taken together: fewer wake-ups per request, for up to the nap in
    /// latency. auto (the default): 200us, only while the worker's database connections owe
    /// 32 answers or more (plain HTTP never naps); a duration (e.g. 50us, at most 10ms): after
    /// every small batch; off: never. Naps are counted in /metrics.
    #[arg(long, value_name = "auto|off|DURATION", default_value = "auto")]
    coalesce: String,
    /// Most open connections per worker; more wait in the accept queue.
    #[arg(long, value_name = "N", default_value = "100000")]
    max_conns: usize,
    /// SO_BUSY_POLL microseconds on the listeners (inherited by connections). A no-op on
    /// loopback, which has no NAPI ID to poll.
    #[arg(long, value_name = "USECS")]
    busy_poll: Option<u32>,
    /// Path of the Prometheus metrics endpoint.
    #[arg(long, value_name = "PATH", default_value = "/metrics")]
    metrics_path: String,
    /// Do not serve metrics.
    #[arg(long)]
    no_metrics: bool,
    #[command(flatten)]
    tls: crate::serve_tls::TlsArgs,
}

/// Runs `twelve serve`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = config(&args)?;
    let binary = match &args.binary {
        Some(path) => path.clone(),
        None => std::env::current_exe().context("--binary: cannot resolve this binary's path")?,
    };
    let options = restart::Options {
        program: binary,
        args: std::env::args_os().skip(1).collect(),
        upgrade_timeout: secs("--upgrade-timeout", args.upgrade_timeout)?,
        control: args.control.clone(),
    };
    // SIGHUP reloads the TLS certificate (a thread of its own); open connections keep theirs.
    // Installed before the workers start, as `restart::run` installs the others.
    crate::serve_tls::reload_on_sighup(config.tls.as_ref())?;
    if config.tls.is_some() {
        eprintln!("twelve serve: {}", crate::serve_tls::ktls_line());
    }
    let router = match &args.database {
        Some(url) => database_routes(techempower::router(), url, args.database_conns)?,
        None => techempower::router(),
    };
    let ended = restart::run(config.clone(), router, &options, log)
        .map_err(|e| restart_error(e, &config))?;
    if let Ended::Abandoned(sig) = ended {
        eprintln!("twelve serve: signal {sig} again, exiting without draining");
        std::process::exit(128 + sig);
    }
    Ok(ExitCode::SUCCESS)
}

/// Adds the database endpoints on `url` to `router`, once the database answered: an
/// unreachable one is one error here rather than a 503 per request.
fn database_routes(
    router: twelve_engine::Router,
    url: &str,
    conns: usize,
) -> anyhow::Result<twelve_engine::Router> {
    use twelve_pg::{Database, apps};
    if conns == 0 {
        bail!("--database-conns 0: expected 1 or more connections per worker");
    }
    let mut db = Database::new(url)
        .map_err(|e| anyhow::anyhow!("--database: {e}"))?
        .connections_per_worker(conns);
    let te = apps::techempower::prepare(&mut db);
    let arena = apps::httparena::prepare(&mut db);
    let crud = apps::crud::prepare(&mut db);
    twelve_pg::check(&db).map_err(|e| anyhow::anyhow!("--database {}: {e}", db.describe()))?;
    let db = std::sync::Arc::new(db);
    let router = apps::techempower::add_routes(router, &db, te);
    let router = apps::httparena::add_routes(router, &db, arena);
    Ok(apps::crud::add_routes(router, &db, crud))
}

/// The log line of each step of a generation's life.
fn log(notice: Notice<'_>) {
    match notice {
        Notice::Serving { server, config } => announce(server, config),
        Notice::MigrateReqOff => eprintln!(
            "twelve serve: net.ipv4.tcp_migrate_req is 0: a per-CPU listener closed outside a handover resets its queued connections (see twelve doctor)"
        ),
        Notice::UpgradeFailed { generation, why } => {
            eprintln!("twelve serve: upgrade failed; generation {generation} carries on: {why}");
        }
        Notice::Upgraded {
            generation,
            successor,
            stopped_accepting,
        } => {
            if !stopped_accepting {
                eprintln!(
                    "twelve serve: a worker of generation {generation} still accepted a second \
                     after the stop; it may answer a connection or two before generation {} does",
                    successor.generation
                );
            }
            eprintln!(
                "twelve serve: generation {} (pid {}) is ready; generation {generation} drains",
                successor.generation, successor.pid
            );
        }
        Notice::Stopping { signal } => {
            eprintln!("twelve serve: signal {signal}, draining (--drain-timeout)");
        }
        Notice::Refused { why } => eprintln!("twelve serve: SIGUSR2 {why}"),
        Notice::Drained { generation, last } => eprintln!(
            "twelve serve: generation {generation} exits: {} requests, {} accepts, {} closes, {} resets, 2xx {} 4xx {} 5xx {}",
            last.requests,
            last.accepts,
            last.closes,
            last.resets,
            last.responses_by_class[2],
            last.responses_by_class[4],
            last.responses_by_class[5]
        ),
        _ => {}
    }
}

/// The listening lines.
fn announce(handle: &ServerHandle, config: &Config) {
    let io = io_summary(handle.backends());
    if let Some(why) = handle.io_fallback() {
        eprintln!("twelve serve: --io auto: {why}; using epoll");
    }
    for (i, addr) in handle.local_addrs().iter().enumerate() {
        println!(
            "twelve serve: listening on {}://{addr} ({}; {} workers on CPUs {}, steer {}, io {io}, generation {})",
            crate::serve_tls::scheme(config, i),
            crate::serve_tls::protocols(config, i),
            handle.cpus().len(),
            config.cpus,
            config.steer,
            config.generation
        );
    }
}

/// Names the flag behind a generation's failure to start.
fn restart_error(e: restart::Error, config: &Config) -> anyhow::Error {
    match e {
        restart::Error::Start(start) => start_error(start, config),
        restart::Error::Control { path, why } => {
            anyhow::anyhow!("--control {}: {why}", path.display())
        }
        other => anyhow::Error::new(other),
    }
}

/// Names the flag and value behind a start failure.
fn start_error(e: StartError, config: &Config) -> anyhow::Error {
    let flag = match &e {
        StartError::Listen { addr, .. } => format!("--listen {addr}"),
        StartError::Root { path, .. } => format!("--root {}", path.display()),
        StartError::CbpfNeedsCpusFromZero => format!("--steer cbpf with --cpus {}", config.cpus),
        StartError::Worker { cpu, .. } if config.io == Backend::Uring => {
            format!("--io uring or --cpus {} (CPU {cpu})", config.cpus)
        }
        StartError::Worker { cpu, .. } => format!("--cpus {} (CPU {cpu})", config.cpus),
        _ => "--listen/--cpus".to_owned(),
    };
    anyhow::Error::new(e).context(flag)
}

fn config(args: &Args) -> anyhow::Result<Config> {
    let mut listen = Vec::new();
    for a in &args.listen {
        let addr: SocketAddr = a
            .parse()
            .with_context(|| format!("--listen {a}: expected IP:PORT or [IPv6]:PORT"))?;
        listen.push(addr);
    }
    let mut tls_listen = crate::serve_tls::add_listeners(&args.tls, &mut listen)?;
    let h2c_listen = crate::serve_tls::add_h2c_listeners(&args.tls, &mut listen, &mut tls_listen)?;
    let mut cpus = match &args.cpus {
        Some(text) => crate::limits::cpus("--cpus", text)?,
        None => twelve_sys::cpus::online(),
    };
    if let Some(n) = args.workers {
        if n == 0 {
            bail!("--workers 0: need at least one worker");
        }
        // One worker per CPU: more workers than --cpus holds cannot run, so say so.
        if n > cpus.len() {
            bail!(
                "--workers {n}: --cpus {cpus} holds {} CPU(s) and a worker runs per CPU; use \
                 --workers {} or name more CPUs",
                cpus.len(),
                cpus.len()
            );
        }
        cpus = cpus.first(n);
    }
    let steer = match args.steer.as_str() {
        "incoming-cpu" => Steer::IncomingCpu,
        "cbpf" => Steer::Cbpf,
        "none" => Steer::None,
        other => bail!("--steer {other}: expected incoming-cpu, cbpf or none"),
    };
    let io: Backend = args
        .io
        .parse()
        .map_err(|e| anyhow::anyhow!("--io {}: {e}", args.io))?;
    if args.max_headers > 128 {
        bail!("--max-headers {}: at most 128", args.max_headers);
    }
    let limits = Limits {
        request_line_bytes: args.max_request_line,
        header_line_bytes: args.max_header_line,
        head_bytes: args.max_head,
        headers: args.max_headers,
        body_bytes: args.max_body,
        ..Limits::DEFAULT
    };
    let timeouts = Timeouts {
        header: secs("--header-timeout", args.header_timeout)?,
        body_idle: secs("--body-timeout", args.body_timeout)?,
        keep_alive: secs("--keep-alive-timeout", args.keep_alive_timeout)?,
        send: secs("--send-timeout", args.send_timeout)?,
        linger: secs("--linger-timeout", args.linger_timeout)?,
        body_min_rate_per_s: args.body_min_rate,
    };
    if let Some(root) = &args.root
        && !root.is_dir()
    {
        bail!("--root {}: not a directory", root.display());
    }
    if !args.no_metrics && !args.metrics_path.starts_with('/') {
        bail!("--metrics-path {}: must start with /", args.metrics_path);
    }
    if args.max_conns == 0 {
        bail!("--max-conns 0: need at least one connection per worker");
    }
    Ok(Config {
        listen,
        cpus,
        steer,
        timeouts,
        limits,
        max_conns_per_worker: args.max_conns,
        busy_poll_us: args.busy_poll,
        metrics_path: (!args.no_metrics).then(|| args.metrics_path.clone()),
        root: args.root.clone(),
        precompressed: args.precompressed,
        compression: match args.compress.as_str() {
            "off" => None,
            "on" => Some(twelve_engine::Compression::default()),
            levels => Some(
                levels
                    .parse()
                    .map_err(|e| anyhow::anyhow!("--compress {levels}: {e}"))?,
            ),
        },
        file_cache: FileCacheConfig {
            bytes: args.file_cache,
            max_file: args.file_cache_max,
            valid: Duration::try_from_secs_f64(args.file_cache_valid)
                .ok()
                .with_context(|| {
                    format!(
                        "--file-cache-valid {}: expected seconds, 0 or more",
                        args.file_cache_valid
                    )
                })?,
        },
        drain_timeout: secs("--drain-timeout", args.drain_timeout)?,
        handler_timeout: secs("--handler-timeout", args.handler_timeout)?,
        // Closing an idle connection at the drain's start loses the request a busy client
        // may already have sent into it: keep it for one last answer with
        // `Connection: close` (docs/restart.md).
        close_idle_on_drain: false,
        coalesce: coalesce(&args.coalesce)?,
        generation_header: args
            .generation_header
            .then(|| "X-Twelve-Generation".to_owned()),
        io,
        tls: crate::serve_tls::load(&args.tls)?,
        tls_listen,
        h2c_listen,
        ..Config::default()
    })
}

/// The workers' backends for the startup line: one name when they agree, else one per worker.
fn io_summary(backends: &[Backend]) -> String {
    match backends {
        [first, rest @ ..] if rest.iter().all(|b| b == first) => first.to_string(),
        _ => backends
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// `--coalesce`: `auto`, `off` (or 0), or a duration with its unit, at most 10 ms.
fn coalesce(value: &str) -> anyhow::Result<Coalesce> {
    match value {
        "auto" => return Ok(Coalesce::Auto),
        "off" | "0" => return Ok(Coalesce::Off),
        _ => {}
    }
    // A bare number would read as seconds (as for bench's -d), never meant for a nap.
    let nap = value
        .ends_with(|c: char| c.is_ascii_alphabetic())
        .then(|| twelve_load::parse_duration(value).ok())
        .flatten()
        .with_context(|| format!("--coalesce {value}: expected auto, off or a nap such as 50us"))?;
    if nap > Duration::from_millis(10) {
        bail!("--coalesce {value}: at most 10ms");
    }
    Ok(if nap.is_zero() {
        Coalesce::Off
    } else {
        Coalesce::Always(nap)
    })
}

fn secs(flag: &str, value: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(value)
        .ok()
        .filter(|d| !d.is_zero())
        .with_context(|| format!("{flag} {value}: expected a positive number of seconds"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn parse(argv: &[&str]) -> anyhow::Result<Config> {
        let cli = Cli::try_parse_from(std::iter::once("serve").chain(argv.iter().copied()))?;
        config(&cli.args)
    }

    macro_rules! flag_error {
        ($($name:ident: $argv:expr => $names:expr;)*) => {$(
            #[test]
            fn $name() {
                let err = format!("{:#}", parse(&$argv).unwrap_err());
                assert!(err.contains($names), "{err}");
            }
        )*};
    }

    flag_error! {
        bad_listen_names_the_flag: ["--listen", "1.2.3:80"] => "--listen 1.2.3:80";
        bad_cpus_names_the_flag: ["--cpus", "0-x"] => "--cpus 0-x";
        zero_workers_named: ["--workers", "0"] => "--workers 0";
        more_workers_than_cpus_named: ["--workers", "4", "--cpus", "0"] => "--workers 4: --cpus 0 holds 1 CPU(s)";
        offline_cpu_named: ["--cpus", "4095"] => "--cpus 4095: CPU 4095 is not online";
        bad_steer_named: ["--steer", "rss"] => "--steer rss";
        bad_io_named: ["--io", "kqueue"] => "--io kqueue";
        zero_timeout_named: ["--header-timeout", "0"] => "--header-timeout 0";
        too_many_headers_named: ["--max-headers", "500"] => "--max-headers 500";
        relative_metrics_path_named: ["--metrics-path", "metrics"] => "--metrics-path metrics";
        missing_root_named: ["--root", "/nonexistent/twelve"] => "--root /nonexistent/twelve";
        coalesce_without_unit_named: ["--coalesce", "50"] => "--coalesce 50: expected auto, off or a nap";
        coalesce_too_long_named: ["--coalesce", "11ms"] => "--coalesce 11ms: at most 10ms";
        negative_file_cache_valid_named: ["--file-cache-valid=-1"] => "--file-cache-valid -1";
        bad_compress_level_named: ["--compress", "gzip=13"] => "--compress gzip=13: gzip level 13 is out of range";
        bad_compress_key_named: ["--compress", "lz4=1"] => "--compress lz4=1: \"lz4\": unknown key";
    }

    #[test]
    fn compression_flags_reach_the_config() {
        let d = parse(&[]).unwrap();
        assert_eq!((d.compression, d.precompressed), (None, false));
        let on = parse(&["--compress", "on", "--precompressed"]).unwrap();
        assert_eq!(on.compression, Some(twelve_engine::Compression::default()));
        assert!(on.precompressed);
        let levels = parse(&["--compress", "gzip=6,min=100"]).unwrap();
        let c = levels.compression.unwrap();
        assert_eq!((c.gzip_level, c.min_bytes), (6, 100));
    }

    #[test]
    fn coalesce_and_file_cache_reach_the_config() {
        let c = parse(&[
            "--coalesce",
            "50us",
            "--file-cache",
            "0",
            "--file-cache-valid",
            "2",
        ])
        .unwrap();
        assert_eq!(c.coalesce, Coalesce::Always(Duration::from_micros(50)));
        assert_eq!(c.file_cache.bytes, 0);
        assert_eq!(c.file_cache.valid, Duration::from_secs(2));
        let d = parse(&[]).unwrap();
        assert_eq!(d.coalesce, Coalesce::Auto);
        assert_eq!(d.file_cache, twelve_engine::FileCacheConfig::default());
        for (flag, want) in [
            ("off", Coalesce::Off),
            ("0", Coalesce::Off),
            ("0us", Coalesce::Off),
            ("auto", Coalesce::Auto),
            ("10ms", Coalesce::Always(Duration::from_millis(10))),
        ] {
            assert_eq!(
                parse(&["--coalesce", flag]).unwrap().coalesce,
                want,
                "{flag}"
            );
        }
    }

    #[test]
    fn flags_reach_the_config() {
        let c = parse(&[
            "--listen",
            "127.0.0.1:1",
            "--listen",
            "[::1]:2",
            "--cpus",
            "0",
            "--steer",
            "cbpf",
            "--max-body",
            "10",
            "--keep-alive-timeout",
            "1.5",
            "--no-metrics",
            "--busy-poll",
            "50",
        ])
        .unwrap();
        assert_eq!(c.listen.len(), 2);
        assert_eq!(c.steer, Steer::Cbpf);
        assert_eq!(c.limits.body_bytes, 10);
        assert_eq!(c.timeouts.keep_alive, Duration::from_millis(1500));
        assert_eq!(c.metrics_path, None);
        assert_eq!(c.busy_poll_us, Some(50));
        assert_eq!(c.cpus.as_slice(), &[0]);
    }
}
