//! What a run is asked to do: targets, load model, stop condition, timeouts; and the parsers
//! of the command line's durations, rates, counts and URLs.
use std::fmt;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// One target URL, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The URL as given.
    pub url: String,
    /// `host[:port]` for the Host header.
    pub authority: String,
    /// Origin-form request target: path and query.
    pub path: String,
    /// Resolved address (`--connect-to` may replace it; the Host header keeps `authority`).
    pub addr: SocketAddr,
    /// This target's method, when it has its own (a targets file); else the run's.
    pub method: Option<String>,
    /// Header lines of this target, sent after the run's.
    pub headers: Vec<String>,
    /// This target's body, when it has its own; else the run's.
    pub body: Option<Vec<u8>>,
    /// `https://`: TLS to the host, SNI from the URL's host.
    pub tls: bool,
}

impl Target {
    /// Parses `http[s]://host[:port][/path]` and resolves the host once, now.
    pub fn parse(url: &str) -> Result<Self, ConfigError> {
        Self::parse_at(url, None)
    }

    /// [`Target::parse`], connecting to `addr` when given (`--connect-to`): the URL's host is
    /// then only its name (Host, `:authority`, SNI) and need not resolve.
    pub fn parse_at(url: &str, addr: Option<SocketAddr>) -> Result<Self, ConfigError> {
        let bad = |why: &str| ConfigError(format!("URL {url:?}: {why}"));
        let (rest, tls) = if let Some(r) = url.strip_prefix("http://") {
            (r, false)
        } else if let Some(r) = url.strip_prefix("https://") {
            (r, true)
        } else {
            return Err(bad("must start with http:// or https://"));
        };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_string()),
            Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
            None => (rest, "/".to_string()),
        };
        if authority.is_empty() || authority.contains('@') {
            return Err(bad("needs a host (and no userinfo)"));
        }
        let has_port = match authority.rfind(':') {
            Some(i) => !authority[i..].contains(']'),
            None => false,
        };
        let with_port = if has_port {
            authority.to_string()
        } else {
            format!("{authority}:{}", if tls { 443 } else { 80 })
        };
        let addr = match addr {
            Some(a) => a,
            None => with_port
                .to_socket_addrs()
                .map_err(|e| bad(&format!("cannot resolve: {e}")))?
                .next()
                .ok_or_else(|| bad("host resolves to no address"))?,
        };
        Ok(Self {
            url: url.to_string(),
            authority: authority.to_string(),
            path,
            addr,
            method: None,
            headers: Vec::new(),
            body: None,
            tls,
        })
    }

    /// The host of the URL without the port (and without an IPv6 literal's brackets): the
    /// TLS server name.
    pub fn host(&self) -> &str {
        let a = self.authority.as_str();
        let host = match a.rfind(':') {
            Some(i) if !a[i..].contains(']') => &a[..i],
            _ => a,
        };
        host.trim_start_matches('[').trim_end_matches(']')
    }
}

/// Arrival process of the open model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// Evenly spaced.
    Uniform,
    /// Exponential gaps (a Poisson process).
    Poisson,
}

/// Load model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Model {
    /// wrk: each connection sends its next batch when the last one is answered.
    Closed,
    /// One global schedule at `rate_per_s`; any idle connection takes a due request.
    Open {
        /// Arrivals per second.
        rate_per_s: f64,
        /// Uniform or Poisson.
        arrival: Arrival,
        /// Seed of the Poisson gaps.
        seed: u64,
    },
}

/// The socket engine the workers run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientIo {
    /// Readiness: `epoll_wait`, then a `send` and a `recv` per window.
    #[default]
    Epoll,
    /// Completions: one `io_uring_enter` per loop turn for its sends and receives.
    Uring,
}

/// When a response counts as received (`--rx-time`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RxTime {
    /// The kernel's receive stamp of the read that completed it (`SO_TIMESTAMPNS`): a read
    /// that came late (after a `--coalesce` nap, or behind other connections) does not add its
    /// delay to the latency. Where the kernel gives no stamp (the first reads, while it turns
    /// stamping on; Unix sockets), the read time stands in.
    #[default]
    Kernel,
    /// When the client read it, as wrk does.
    Read,
}

impl RxTime {
    /// Parses `kernel` or `read`.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "kernel" => Ok(RxTime::Kernel),
            "read" => Ok(RxTime::Read),
            _ => Err(format!("--rx-time {s:?}: expected kernel or read")),
        }
    }

    /// The name `parse` takes and the report shows.
    pub fn as_str(self) -> &'static str {
        match self {
            RxTime::Kernel => "kernel",
            RxTime::Read => "read",
        }
    }
}

/// The HTTP version the connections speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// HTTP/1.1, pipelined up to `-p`.
    #[default]
    Http1,
    /// HTTP/2 (`--h2`: ALPN h2 on https://; `--h2c`: prior knowledge on http://), at most
    /// `streams` requests in flight per connection (h2load's `-m`), fewer when the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS says so.
    H2 {
        /// `--streams`.
        streams: u32,
    },
}

impl Protocol {
    /// Whether the run speaks HTTP/2.
    pub fn is_h2(self) -> bool {
        matches!(self, Protocol::H2 { .. })
    }

    /// How the reports name it: `http/1.1`, `h2` or `h2c`, by the targets' scheme.
    pub fn name(self, tls: bool) -> &'static str {
        match (self, tls) {
            (Protocol::Http1, _) => "http/1.1",
            (Protocol::H2 { .. }, true) => "h2",
            (Protocol::H2 { .. }, false) => "h2c",
        }
    }

    /// Streams per connection: 1 over HTTP/1.1.
    pub fn streams(self) -> u32 {
        match self {
            Protocol::Http1 => 1,
            Protocol::H2 { streams } => streams,
        }
    }
}

/// When the run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// After this long measuring (warm-up comes before).
    Duration(Duration),
    /// After this many requests were answered or failed.
    Requests(u64),
}

/// A run's configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Targets, taken in turn; all share one address.
    pub targets: Vec<Target>,
    /// Method (`GET`, `HEAD`, `POST`, …).
    pub method: String,
    /// Extra header lines (`Name: value`), sent on every request.
    pub headers: Vec<String>,
    /// Request body.
    pub body: Vec<u8>,
    /// Connections, spread evenly over the workers.
    pub connections: usize,
    /// CPU of each worker (its length is the thread count); `None` entries are not pinned.
    pub worker_cpus: Vec<Option<usize>>,
    /// Requests in flight per connection.
    pub pipeline: usize,
    /// Closed or open.
    pub model: Model,
    /// End condition.
    pub stop: Stop,
    /// Warm-up before measuring (only with [`Stop::Duration`]).
    pub warmup: Duration,
    /// A request with no complete response after this long is counted and its connection
    /// reopened.
    pub timeout: Duration,
    /// A connect that has not finished after this long is counted and retried.
    pub connect_timeout: Duration,
    /// `false` for `--close`: `Connection: close` on every request, a new connection each.
    pub keep_alive: bool,
    /// Responses per connection before the client reopens it.
    pub requests_per_conn: Option<u64>,
    /// Interval of the HdrHistogram log, when one is written.
    pub hdr_interval: Option<Duration>,
    /// How a worker waits after a poll that found only a few responses.
    pub coalesce: crate::Coalesce,
    /// Open model: how late a due request may leave so that one wake-up serves every request
    /// due within it (`--slack`; see `crate::pacing`).
    pub slack: Duration,
    /// This process's slice of a run split across load generators (`--shard I/N`); the
    /// fields above describe the whole run (see `shard`).
    pub shard: Option<crate::Shard>,
    /// Source addresses the connections are spread over (`--source`); empty: the kernel
    /// picks.
    pub sources: Vec<std::net::IpAddr>,
    /// Open model: a rate ramp instead of one rate; [`Stop::Duration`] is then the whole
    /// ramp (each step's duration times the steps).
    pub ramp: Option<crate::Ramp>,
    /// Connect to this Unix-domain socket instead of the targets' address (the URLs still
    /// give the Host header and paths).
    pub unix_socket: Option<std::path::PathBuf>,
    /// TLS client configuration, for `https://` targets.
    pub tls: Option<twelve_tls::ClientTls>,
    /// Seed of the `{rand:MIN:MAX}` values (each worker draws from its own stream of it).
    pub seed: u64,
    /// The socket engine.
    pub io: ClientIo,
    /// When a response counts as received.
    pub rx_time: RxTime,
    /// HTTP/1.1 or HTTP/2.
    pub protocol: Protocol,
}

impl Config {
    /// A closed-model run against `targets` with wrk-like defaults.
    pub fn new(targets: Vec<Target>) -> Self {
        Self {
            targets,
            method: "GET".into(),
            headers: Vec::new(),
            body: Vec::new(),
            connections: 10,
            worker_cpus: vec![None],
            pipeline: 1,
            model: Model::Closed,
            stop: Stop::Duration(Duration::from_secs(10)),
            warmup: Duration::ZERO,
            timeout: Duration::from_secs(2),
            connect_timeout: Duration::from_secs(2),
            keep_alive: true,
            requests_per_conn: None,
            hdr_interval: None,
            coalesce: crate::Coalesce::Auto,
            slack: crate::pacing::DEFAULT_SLACK,
            shard: None,
            sources: Vec::new(),
            ramp: None,
            unix_socket: None,
            tls: None,
            seed: 1,
            io: ClientIo::Epoll,
            rx_time: RxTime::Kernel,
            protocol: Protocol::Http1,
        }
    }

    /// Checks the combination of settings.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |s: &str| Err(ConfigError(s.to_string()));
        if self.targets.is_empty() {
            return bad("no target URL");
        }
        if self.targets.iter().any(|t| t.addr != self.targets[0].addr) {
            return bad("all URLs must name the same host and port");
        }
        // One response parser setting for every connection: HEAD answers carry no body.
        let head = |t: &Target| t.method.as_deref().unwrap_or(&self.method) == "HEAD";
        if self.targets.iter().any(head) && !self.targets.iter().all(head) {
            return bad("--targets: HEAD cannot be mixed with other methods in one run");
        }
        if self.targets.iter().any(|t| t.tls != self.targets[0].tls) {
            return bad("all URLs must use the same scheme (http:// or https://)");
        }
        crate::request::check_templates(self)?;
        if self.targets[0].tls && self.tls.is_none() {
            return bad("https:// needs a TLS client configuration");
        }
        if self.worker_cpus.is_empty() {
            return bad("--threads must be at least 1");
        }
        if self.own_connections() < self.worker_cpus.len() {
            return Err(ConfigError(if self.shard.is_some() {
                format!(
                    "-c/--connections {}: this shard's share is {}, fewer than the {} worker \
                     threads; use more connections or fewer threads (-t)",
                    self.connections,
                    self.own_connections(),
                    self.worker_cpus.len()
                )
            } else {
                format!(
                    "-c/--connections {}: fewer than the {} worker threads; use -c {} or more, or \
                     fewer threads (-t)",
                    self.connections,
                    self.worker_cpus.len(),
                    self.worker_cpus.len()
                )
            }));
        }
        if self.pipeline == 0 || self.pipeline > 1024 {
            return Err(ConfigError(format!(
                "-p/--pipeline {}: must be from 1 to 1024",
                self.pipeline
            )));
        }
        if let Protocol::H2 { streams } = self.protocol {
            if self.pipeline != 1 {
                return Err(ConfigError(format!(
                    "-p/--pipeline {}: HTTP/2 does not pipeline; it multiplexes up to \
                     --streams requests per connection",
                    self.pipeline
                )));
            }
            if !(1..=100_000).contains(&streams) {
                return Err(ConfigError(format!(
                    "--streams {streams}: must be from 1 to 100000"
                )));
            }
            if self.unix_socket.is_some() {
                return bad("--unix-socket carries HTTP/1.1 only; drop --h2/--h2c");
            }
        }
        if self.requests_per_conn == Some(0) {
            return bad("--requests-per-conn 0: must be at least 1");
        }
        if let Model::Open { rate_per_s, .. } = self.model
            && !(rate_per_s > 0.0 && rate_per_s.is_finite())
        {
            return Err(ConfigError(format!(
                "-R/--rate {rate_per_s}: must be a positive number of requests per second"
            )));
        }
        if self.timeout.is_zero() || self.connect_timeout.is_zero() {
            return Err(ConfigError(format!(
                "--timeout {:?} / --connect-timeout {:?}: both must be positive (e.g. 2s)",
                self.timeout, self.connect_timeout
            )));
        }
        if let Some(src) = self
            .sources
            .iter()
            .find(|s| s.is_ipv4() != self.targets[0].addr.is_ipv4())
        {
            return Err(ConfigError(format!(
                "--source {src}: not of the target's address family ({})",
                self.targets[0].addr
            )));
        }
        if self.unix_socket.is_some() && !self.sources.is_empty() {
            return bad("--source applies to TCP; a --unix-socket has no source address");
        }
        if self.unix_socket.is_some() && self.targets.iter().any(|t| t.tls) {
            return bad("--unix-socket carries plain HTTP: give an http:// URL, not https://");
        }
        if self.ramp.is_some() {
            if !matches!(self.stop, Stop::Duration(_)) {
                return bad("-R FROM:TO (a ramp) runs by time: use -d, not -n");
            }
            if matches!(
                self.model,
                Model::Open {
                    arrival: Arrival::Poisson,
                    ..
                }
            ) {
                return bad(
                    "-R FROM:TO (a ramp) has uniform arrivals only: drop --arrival poisson",
                );
            }
        }
        match self.stop {
            Stop::Duration(d) if d.is_zero() => {
                return bad("-d/--duration 0: a run needs a positive duration (e.g. 5s)");
            }
            Stop::Requests(0) => return bad("-n/--requests 0: a run needs at least 1 request"),
            _ => {}
        }
        Ok(())
    }
}

/// A configuration mistake, naming the flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// Parses `500ms`, `5s`, `2m`, `1h`, `250us`, or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, ConfigError> {
    let bad = || ConfigError(format!("bad duration {s:?} (e.g. 500ms, 10s, 2m)"));
    let split = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num.trim().parse().map_err(|_| bad())?;
    let secs = match unit.trim() {
        "" | "s" => n,
        "ms" => n / 1e3,
        "us" => n / 1e6,
        "ns" => n / 1e9,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(bad()),
    };
    if !(secs >= 0.0 && secs.is_finite()) {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses a rate: `1000`, `10k`, `1.5M`, `0.5` (fractions allowed; counts use
/// [`parse_count`]).
pub fn parse_rate(s: &str) -> Result<f64, ConfigError> {
    let bad = || ConfigError(format!("bad number {s:?} (e.g. 5000, 10k, 1.5M)"));
    let (num, scale) = match s.chars().last() {
        Some('k' | 'K') => (&s[..s.len() - 1], 1e3),
        Some('m' | 'M') => (&s[..s.len() - 1], 1e6),
        Some('g' | 'G') => (&s[..s.len() - 1], 1e9),
        _ => (s, 1.0),
    };
    let n: f64 = num.trim().parse().map_err(|_| bad())?;
    if n < 0.0 {
        return Err(ConfigError(format!(
            "{s} is negative: a rate is a positive number of requests per second \
             (e.g. 5000, 10k, 1.5M)"
        )));
    }
    if !n.is_finite() {
        return Err(bad());
    }
    Ok(n * scale)
}

/// Parses a count: `1000`, `10k`, `1.5M` — a whole number, exactly. Unlike [`parse_rate`]
/// it never goes through `f64` (so `9007199254740993` stays itself) and refuses a fraction
/// (`2.5`, `1.0001k`) instead of truncating it.
pub fn parse_count(s: &str) -> Result<u64, ConfigError> {
    let bad = || {
        ConfigError(format!(
            "bad count {s:?} (a whole number, e.g. 5000, 10k, 1.5M)"
        ))
    };
    let t = s.trim();
    let (num, zeros) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 3),
        Some('m' | 'M') => (&t[..t.len() - 1], 6),
        Some('g' | 'G') => (&t[..t.len() - 1], 9),
        _ => (t, 0),
    };
    let (whole, frac) = num.split_once('.').unwrap_or((num, ""));
    let digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(frac) {
        return Err(bad());
    }
    // The fraction's digits shift into the suffix's zeros; any left over is a fraction.
    let frac = frac.trim_end_matches('0');
    if frac.len() > zeros {
        return Err(bad());
    }
    let padded = format!("{whole}{frac}{}", "0".repeat(zeros - frac.len()));
    padded.parse().map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! url {
        ($name:ident, $url:expr, $authority:expr, $path:expr) => {
            #[test]
            fn $name() {
                let t = Target::parse($url).unwrap();
                assert_eq!((t.authority.as_str(), t.path.as_str()), ($authority, $path));
            }
        };
    }

    url!(
        url_plain,
        "http://127.0.0.1:8080/json",
        "127.0.0.1:8080",
        "/json"
    );
    url!(url_no_path, "http://127.0.0.1:9", "127.0.0.1:9", "/");
    url!(
        url_query_only,
        "http://127.0.0.1:9?a=1",
        "127.0.0.1:9",
        "/?a=1"
    );
    url!(url_ipv6, "http://[::1]:8080/x", "[::1]:8080", "/x");

    url!(url_https, "https://127.0.0.1/x", "127.0.0.1", "/x");

    #[test]
    fn url_https_defaults_to_port_443_and_names_its_host() {
        let t = Target::parse("https://127.0.0.1/").unwrap();
        assert!(t.tls);
        assert_eq!(t.addr.port(), 443);
        assert_eq!(t.host(), "127.0.0.1");
        let t = Target::parse("https://[::1]:8443/").unwrap();
        assert_eq!((t.host(), t.addr.port()), ("::1", 8443));
        assert!(!Target::parse("http://127.0.0.1/").unwrap().tls);
    }

    #[test]
    fn url_other_scheme_refused() {
        assert!(Target::parse("ftp://127.0.0.1/").is_err());
    }

    macro_rules! dur {
        ($name:ident, $s:expr, $ms:expr) => {
            #[test]
            fn $name() {
                assert_eq!(parse_duration($s).unwrap(), Duration::from_millis($ms));
            }
        };
    }

    dur!(duration_seconds, "5s", 5_000);
    dur!(duration_bare, "2", 2_000);
    dur!(duration_millis, "250ms", 250);
    dur!(duration_minutes, "2m", 120_000);

    macro_rules! count {
        ($name:ident, $s:expr, err) => {
            #[test]
            fn $name() {
                assert!(parse_count($s).is_err(), "{:?}", parse_count($s));
            }
        };
        ($name:ident, $s:expr, $n:expr) => {
            #[test]
            fn $name() {
                assert_eq!(parse_count($s), Ok($n));
            }
        };
    }

    count!(count_plain, "5000", 5000);
    count!(count_kilo, "10k", 10_000);
    count!(count_fractional_mega, "1.5M", 1_500_000);
    count!(count_giga_upper, "2G", 2_000_000_000);
    count!(count_trailing_zeros, "2.50k", 2500);
    count!(count_beyond_f64, "9007199254740993", 9_007_199_254_740_993);
    count!(count_fraction, "2.5", err);
    count!(count_fraction_under_suffix, "1.0001k", err);
    count!(count_negative, "-5", err);
    count!(count_exponent, "1e3", err);
    count!(count_empty, "", err);
    count!(count_bare_suffix, "k", err);
    count!(count_overflow, "99999999999999999999", err);

    #[test]
    fn rate_suffixes() {
        assert_eq!(parse_rate("10k").unwrap(), 10_000.0);
        assert_eq!(parse_rate("1.5M").unwrap(), 1_500_000.0);
        assert!(parse_rate("fast").is_err());
        let negative = parse_rate("-5").unwrap_err().to_string();
        assert!(
            negative.starts_with("-5 is negative: a rate is a positive"),
            "{negative}"
        );
    }
}
