//! twelve's HttpArena entry: `cargo run --release -p twelve-engine --example httparena [ADDR]
//! [--max-body BYTES]`.
//!
//! Serves [`twelve_engine::apps::httparena::full_router`] on ADDR (default `0.0.0.0:8080`,
//! where HttpArena's scripts look) with one pinned worker per CPU of the process's affinity
//! mask, so `taskset -c 0` gives one worker and a container's `--cpuset-cpus` gives one per CPU
//! of the set. The json profiles read their items from `DATASET` (default
//! `/data/dataset.json`, where HttpArena mounts it), the static profile its files from
//! `STATIC_DIR` (default `/data/static`); a default path that is missing leaves those
//! endpoints out (the engine profiles mount neither), a path given that is missing is an error.
//! Uploads up to `--max-body` bytes (default 32 MiB) are streamed; larger ones get 413.
//! Responses are compressed for clients that ask (`TWELVE_COMPRESS=off` turns it off,
//! `TWELVE_COMPRESS=gzip=1,br=3,zstd=1,min=512` sets levels: the defaults).
//! `TWELVE_IO=uring` (or `auto`) picks the io_uring backend, and `TWELVE_COALESCE_US=N` naps N
//! µs after every small batch (0: never; unset: `twelve serve --coalesce auto`). With `DATABASE_URL` (HttpArena's
//! variable: `postgres://bench:bench@localhost:5432/benchmark`) the database profiles are on:
//! `/async-db`, `/fortunes` and crud's `/crud/items` (`twelve_pg::apps`), over
//! `DATABASE_CONNS` connections per worker (default 2); a database that cannot be reached at
//! start is an error. ADDR also takes h2c from a client that opens with the HTTP/2 preface.
//! `TLS_LISTEN=ADDR[,ADDR]` with `TLS_CERT` and `TLS_KEY` (PEM) adds TLS listeners offering
//! ALPN h2 and http/1.1 (baseline-h2, static-h2), `TLS_H1_LISTEN` TLS listeners offering
//! http/1.1 alone (json-tls), `H2C_LISTEN` listeners that speak h2c with prior knowledge only
//! (baseline-h2c, json-h2c). Without ADDR it takes HttpArena's ports: 8080, h2c on 8082, and,
//! when `/certs/server.crt` and `/certs/server.key` are there (HttpArena mounts them), TLS on
//! 8443 and HTTP/1.1 over TLS on 8081. Runs until SIGTERM or SIGINT, then drains.
//! `contrib/httparena/` builds it into the image HttpArena runs.

use std::path::PathBuf;
use std::time::Duration;
use twelve_engine::apps::httparena::{self, Dataset};
use twelve_engine::{
    Backend, Coalesce, Compression, Config, FileCacheConfig, Files, Limits, Server,
};

/// The default `--max-body`: HttpArena's largest upload is 20 MiB.
const MAX_BODY: u64 = 32 << 20;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut addr = None;
    let mut max_body = MAX_BODY;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--max-body" {
            let v = args
                .next()
                .ok_or("--max-body: expected a number of bytes")?;
            max_body = v
                .parse()
                .map_err(|e| format!("--max-body {v}: {e} (expected a number of bytes)"))?;
        } else {
            addr = Some(arg);
        }
    }
    let ports = Ports::new(addr)?;
    let cpus =
        twelve_sys::cpus::allowed().map_err(|e| format!("reading the affinity mask: {e}"))?;
    // The event loop, as `twelve serve --io` takes it; epoll unless TWELVE_IO says otherwise.
    let io: Backend = match std::env::var("TWELVE_IO") {
        Ok(v) => v.parse().map_err(|e| format!("TWELVE_IO={v}: {e}"))?,
        Err(_) => Backend::default(),
    };
    let coalesce = match std::env::var("TWELVE_COALESCE_US") {
        Ok(v) => match v
            .parse()
            .map_err(|e| format!("TWELVE_COALESCE_US={v}: {e}"))?
        {
            0 => Coalesce::Off,
            us => Coalesce::Always(Duration::from_micros(us)),
        },
        Err(_) => Coalesce::Auto,
    };
    let compression = match std::env::var("TWELVE_COMPRESS") {
        Ok(v) if v == "off" => None,
        Ok(v) => Some(
            v.parse::<Compression>()
                .map_err(|e| format!("TWELVE_COMPRESS={v}: {e}"))?,
        ),
        Err(_) => Some(Compression::default()),
    };
    let dataset = match input("DATASET", "/data/dataset.json") {
        Some(path) => Some(Dataset::load(&path)?),
        None => None,
    };
    let files = match input("STATIC_DIR", "/data/static") {
        Some(dir) => Some(
            Files::open(&dir, static_cache())
                .map_err(|e| format!("STATIC_DIR {}: {e}", dir.display()))?
                .precompressed(true),
        ),
        None => None,
    };
    let config = Config {
        io,
        coalesce,
        listen: ports.listen,
        tls: ports.tls,
        tls_listen: ports.tls_listen,
        tls_http11_listen: ports.tls_http11,
        h2c_listen: ports.h2c,
        cpus,
        compression,
        limits: Limits {
            body_bytes: max_body,
            ..Limits::default()
        },
        // HttpArena asks for its endpoints only.
        metrics_path: None,
        // `docker stop` waits 5 s before SIGKILL: finish in-flight requests well within it.
        drain_timeout: Duration::from_secs(2),
        ..Config::default()
    };
    // Before the server starts: the handlers need a descriptor of their own (signal-hook's
    // self-pipe), which a flood of clients could otherwise take first (src/serve.rs has the
    // story). As a container's PID 1 the process must handle SIGTERM itself: the kernel ignores
    // signals PID 1 has no handler for, and `docker stop` would wait for its SIGKILL.
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
    ])
    .map_err(|e| format!("installing the SIGTERM/SIGINT handlers: {e}"))?;
    let items = dataset.as_ref().map_or(0, Dataset::len);
    let has_files = files.is_some();
    let mut router = httparena::full_router(dataset, files);
    if let Ok(url) = std::env::var("DATABASE_URL") {
        router = database(router, &url)?;
    }
    let handle = Server::new(config, router)
        .start()
        .map_err(|e| format!("{e} ({})", ports.names.join(", ")))?;
    for (addr, kind) in handle.local_addrs().iter().zip(&ports.kinds) {
        println!(
            "httparena: listening on {addr} ({kind}; {} workers on CPUs {}, io {}; {items} json items, static files {})",
            handle.cpus().len(),
            twelve_sys::CpuList::from_cpus(handle.cpus().iter().copied()),
            handle.backends().first().copied().unwrap_or_default(),
            if has_files { "on" } else { "off" },
        );
    }
    if let Some(sig) = signals.forever().next() {
        eprintln!("httparena: signal {sig}, draining");
    }
    handle.shutdown();
    handle.join();
    Ok(())
}

/// Adds HttpArena's database profiles on `url` to `router`, once the database answered.
fn database(
    router: twelve_engine::Router,
    url: &str,
) -> Result<twelve_engine::Router, Box<dyn std::error::Error>> {
    use twelve_pg::{Database, apps};
    let conns = match std::env::var("DATABASE_CONNS") {
        Ok(v) => v
            .parse()
            .ok()
            .filter(|&n: &usize| n > 0)
            .ok_or_else(|| format!("DATABASE_CONNS={v}: expected 1 or more connections"))?,
        Err(_) => 2,
    };
    let mut db = Database::new(url)
        .map_err(|e| format!("DATABASE_URL: {e}"))?
        .connections_per_worker(conns);
    let arena = apps::httparena::prepare(&mut db);
    let crud = apps::crud::prepare(&mut db);
    twelve_pg::check(&db).map_err(|e| format!("DATABASE_URL {}: {e}", db.describe()))?;
    let db = std::sync::Arc::new(db);
    let router = apps::httparena::add_routes(router, &db, arena);
    Ok(apps::crud::add_routes(router, &db, crud))
}

/// The static files' cache: each worker keeps files up to 64 KiB in memory, and checks a kept
/// file against the disk at most once a second (nginx's `open_file_cache_valid`) instead of
/// with a `statx` per request: HttpArena's files never change during a run.
fn static_cache() -> FileCacheConfig {
    FileCacheConfig {
        valid: Duration::from_secs(1),
        ..FileCacheConfig::default()
    }
}

/// The path in the environment variable `var`, or `default` when unset and present there;
/// `None` when unset and the default is missing.
fn input(var: &str, default: &str) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(path) => Some(PathBuf::from(path)),
        None => Some(PathBuf::from(default)).filter(|p| p.exists()),
    }
}

/// The listeners and what each speaks.
struct Ports {
    listen: Vec<std::net::SocketAddr>,
    tls: Option<std::sync::Arc<twelve_tls::ServerTls>>,
    tls_listen: Vec<bool>,
    tls_http11: Vec<bool>,
    h2c: Vec<bool>,
    /// For messages: each listener's address as given, and what it speaks.
    names: Vec<String>,
    kinds: Vec<Speaks>,
}

/// What a listener speaks.
#[derive(Clone, Copy, PartialEq)]
enum Speaks {
    Plain,
    H2cOnly,
    Tls,
    TlsHttp11,
}

impl std::fmt::Display for Speaks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Speaks::Plain => "http/1.1 and h2c",
            Speaks::H2cOnly => "h2c only",
            Speaks::Tls => "TLS, h2 and http/1.1",
            Speaks::TlsHttp11 => "TLS, http/1.1 only",
        })
    }
}

/// HttpArena's certificate, mounted for every profile by its scripts.
const CERTS: (&str, &str) = ("/certs/server.crt", "/certs/server.key");

impl Ports {
    /// ADDR and the `*_LISTEN` variables; without ADDR, HttpArena's ports for every variable
    /// left unset (the TLS ones only when its certificate is there).
    fn new(addr: Option<String>) -> Result<Self, String> {
        let arena = addr.is_none();
        let certs = arena
            && std::path::Path::new(CERTS.0).exists()
            && std::path::Path::new(CERTS.1).exists();
        let var = |k: &str, arena_default: Option<&str>| match std::env::var(k) {
            Ok(v) => Some(v),
            Err(_) => arena_default.map(str::to_owned),
        };
        let mut p = Self {
            listen: Vec::new(),
            tls: None,
            tls_listen: Vec::new(),
            tls_http11: Vec::new(),
            h2c: Vec::new(),
            names: Vec::new(),
            kinds: Vec::new(),
        };
        let plain = addr.unwrap_or_else(|| "0.0.0.0:8080".to_owned());
        p.add("ADDR", &plain, Speaks::Plain)?;
        if let Some(v) = var("H2C_LISTEN", Some("0.0.0.0:8082").filter(|_| arena)) {
            for a in v.split(',') {
                p.add("H2C_LISTEN", a, Speaks::H2cOnly)?;
            }
        }
        let tls = var("TLS_LISTEN", Some("0.0.0.0:8443").filter(|_| certs));
        let tls_h1 = var("TLS_H1_LISTEN", Some("0.0.0.0:8081").filter(|_| certs));
        if tls.is_none() && tls_h1.is_none() {
            return Ok(p);
        }
        let file = |k: &str, default: &str| {
            var(k, Some(default).filter(|_| certs))
                .ok_or_else(|| format!("TLS_LISTEN and TLS_H1_LISTEN need {k} (a PEM file)"))
        };
        let (cert, key) = (file("TLS_CERT", CERTS.0)?, file("TLS_KEY", CERTS.1)?);
        let loaded = twelve_tls::ServerTls::load(cert.as_ref(), key.as_ref())
            .map_err(|e| format!("TLS_CERT {cert}, TLS_KEY {key}: {e}"))?;
        p.tls = Some(std::sync::Arc::new(loaded));
        for a in tls.iter().flat_map(|v| v.split(',')) {
            p.add("TLS_LISTEN", a, Speaks::Tls)?;
        }
        for a in tls_h1.iter().flat_map(|v| v.split(',')) {
            p.add("TLS_H1_LISTEN", a, Speaks::TlsHttp11)?;
        }
        Ok(p)
    }

    fn add(&mut self, var: &str, addr: &str, kind: Speaks) -> Result<(), String> {
        let parsed = addr
            .parse()
            .map_err(|e| format!("{var} {addr}: {e} (expected e.g. 0.0.0.0:8080)"))?;
        self.listen.push(parsed);
        self.tls_listen
            .push(matches!(kind, Speaks::Tls | Speaks::TlsHttp11));
        self.tls_http11.push(kind == Speaks::TlsHttp11);
        self.h2c.push(kind == Speaks::H2cOnly);
        self.names.push(addr.to_owned());
        self.kinds.push(kind);
        Ok(())
    }
}
