//! `Config`: everything a [`Server`](crate::Server) needs to start, with the defaults of
//! `twelve serve`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;
use twelve_sys::CpuList;

/// How connections are spread over the per-CPU listeners of one reuseport group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Steer {
    /// `SO_INCOMING_CPU = cpu` on each worker's listener: the kernel prefers the listener of
    /// the CPU that received the connection's packets. Survives listeners being re-created
    /// (docs/kernel-facts.md), so it is the default.
    #[default]
    IncomingCpu,
    /// The study's two-instruction classic-BPF program returning the receiving CPU as an index
    /// into the group. Correct only while the group is never re-created, and only when the
    /// workers cover CPUs `0..n` in order (see [`twelve_sys::net::attach_reuseport_cpu_cbpf`]).
    Cbpf,
    /// No preference: the kernel's 4-tuple hash picks a listener.
    None,
}

impl std::fmt::Display for Steer {
    /// The spelling `twelve serve --steer` takes.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::IncomingCpu => "incoming-cpu",
            Self::Cbpf => "cbpf",
            Self::None => "none",
        })
    }
}

/// When a worker naps after a wait that found only a few events (fewer than 16), so that
/// what arrives meanwhile is taken together in its next wait: interrupt moderation in user
/// space. A nap trades up to its length in latency, per wait, for fewer wake-ups, which on a
/// VM cost more CPU than the work of a small turn. A wait that finds many events never naps,
/// nor does a worker that is draining.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Coalesce {
    /// Always block until the next event.
    Off,
    /// Nap this long after every small batch. At a low or moderate rate it saves the
    /// wake-up per request that dominates the CPU cost there, at the price of up to this much
    /// latency per request (and a tenth more: the worker's timer slack).
    Always(Duration),
    /// Nap [`Coalesce::AUTO_NAP`] after a small batch only while the worker's async sockets
    /// are owed at least [`Coalesce::AUTO_OWED`] answers ([`crate::rt::Stream::owe`]): a
    /// database pipeline with a backlog, whose server answers each query in a packet of its
    /// own. A worker that waits for nothing (plain HTTP) never naps.
    #[default]
    Auto,
}

impl Coalesce {
    /// The nap of [`Coalesce::Auto`]: at PostgreSQL's pace on the reference VM (a query every
    /// 10-15 µs), a nap collects a dozen answers or more.
    pub const AUTO_NAP: Duration = Duration::from_micros(200);
    /// Answers owed before [`Coalesce::Auto`] naps: more than a database sends during one nap,
    /// so that a nap never outlasts the backlog. With fewer (16 connections each waiting on
    /// one query), the worker would sit out the rest of the nap, and a closed-loop client's
    /// every request would wait for it.
    pub const AUTO_OWED: usize = 32;

    /// The nap after a turn that found `ready` events while `owed` answers were owed, if any.
    #[must_use]
    pub fn nap(self, ready: usize, owed: usize) -> Option<Duration> {
        let small = ready > 0 && ready < SMALL_BATCH;
        let backlog = self != Coalesce::Auto || owed >= Self::AUTO_OWED;
        if small && backlog {
            self.longest()
        } else {
            None
        }
    }

    /// The nap this setting takes, when it naps (and the worker's timer slack is a tenth of).
    #[must_use]
    pub fn longest(self) -> Option<Duration> {
        match self {
            Coalesce::Off => None,
            Coalesce::Always(nap) => (!nap.is_zero()).then_some(nap),
            Coalesce::Auto => Some(Self::AUTO_NAP),
        }
    }
}

/// Waits that found fewer events than this may be followed by a nap ([`Coalesce`]): the
/// threshold twelve bench's `--coalesce` measured for the client side.
const SMALL_BATCH: usize = 16;

/// Which kernel interface a worker's event loop uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Backend {
    /// io_uring where the kernel allows it, else epoll (ENOSYS, EPERM under a seccomp
    /// profile, `kernel.io_uring_disabled`); [`ServerHandle::io_fallback`] says why.
    ///
    /// [`ServerHandle::io_fallback`]: crate::ServerHandle::io_fallback
    Auto,
    /// Edge-triggered epoll, with batched receives and sends through io_uring where available.
    /// The default until the io_uring backend is measured at least as fast.
    #[default]
    Epoll,
    /// io_uring completions: multishot accept and receive into provided buffers, one
    /// `io_uring_enter` per loop turn. Starting fails where io_uring is unavailable.
    Uring,
}

impl Backend {
    /// Whether the io_uring backend can run here (`Err` says why not), probed by setting up
    /// the ring it would use.
    pub fn probe_uring() -> std::io::Result<()> {
        twelve_sys::uring::ring::probe()
    }
}

impl std::fmt::Display for Backend {
    /// The spelling `twelve serve --io` takes.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Auto => "auto",
            Self::Epoll => "epoll",
            Self::Uring => "uring",
        })
    }
}

impl std::str::FromStr for Backend {
    type Err = UnknownBackend;

    /// `auto`, `epoll` or `uring`, as [`Display`](std::fmt::Display) writes them.
    fn from_str(s: &str) -> Result<Self, UnknownBackend> {
        match s {
            "auto" => Ok(Self::Auto),
            "epoll" => Ok(Self::Epoll),
            "uring" => Ok(Self::Uring),
            _ => Err(UnknownBackend),
        }
    }
}

/// A backend name other than `auto`, `epoll` or `uring`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownBackend;

impl std::fmt::Display for UnknownBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("expected auto, epoll or uring")
    }
}

impl std::error::Error for UnknownBackend {}

/// Time limits of a connection. Each is enforced on the worker's timer wheel with a
/// resolution of [`Timeouts::TICK`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// The whole request head must arrive within this, counted from its first byte; a client
    /// trickling bytes (slowloris) never resets it. Expiry: 408 and close.
    pub header: Duration,
    /// Longest pause between two reads of a request body. Expiry: 408 and close.
    pub body_idle: Duration,
    /// Longest an idle keep-alive connection is kept (a new connection that has sent nothing
    /// yet gets the smaller of this and `header`). Expiry: silent close, never a 408 (the
    /// client sent no request; HAProxy's behaviour).
    pub keep_alive: Duration,
    /// Longest a pending response may make no progress because the peer stopped reading.
    /// Expiry: close.
    pub send: Duration,
    /// Lingering close: after the last response of a closing connection that may still
    /// receive input (an error, a timeout, bytes left unread), how long to keep reading and
    /// discarding before `close` (RFC 9112 §9.6: a plain close with unread input sends a RST
    /// that can destroy the response in flight).
    pub linger: Duration,
    /// Least average rate of a request body, in bytes per second (0: no minimum), after a
    /// grace of `body_idle`: the body must be complete by `body_idle` plus one second per this
    /// many bytes received, however regularly it trickles (Apache's mod_reqtimeout
    /// `MinRate`, default 500 there too). Without it, one byte per `body_idle` would hold a
    /// connection for ever. Expiry: 408 and close, counted as the `body_rate` timeout.
    pub body_min_rate_per_s: u64,
}

impl Timeouts {
    /// Resolution of every timeout: the timer wheel's tick.
    pub const TICK: Duration = Duration::from_millis(50);
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            header: Duration::from_secs(10),
            body_idle: Duration::from_secs(10),
            keep_alive: Duration::from_secs(60),
            send: Duration::from_secs(30),
            linger: Duration::from_secs(2),
            body_min_rate_per_s: 500,
        }
    }
}

/// What the server listens on, where its workers run, and every bound it enforces.
#[derive(Clone, Debug)]
pub struct Config {
    /// Addresses to listen on. Every worker has its own `SO_REUSEPORT` listener on each.
    /// Port 0 picks a free port (the same one for every worker); see
    /// [`ServerHandle::local_addrs`](crate::ServerHandle::local_addrs).
    pub listen: Vec<SocketAddr>,
    /// One worker per CPU of this list, pinned to it. Default: every online CPU.
    pub cpus: CpuList,
    /// Steering of new connections to the worker of their receiving CPU.
    pub steer: Steer,
    /// Connection timeouts.
    pub timeouts: Timeouts,
    /// The HTTP codec's limits (line, head, header count, body sizes).
    pub limits: twelve_http::Limits,
    /// Most open connections per worker; beyond it, new connections wait in the accept queue.
    pub max_conns_per_worker: usize,
    /// `SO_BUSY_POLL` microseconds on every listener (inherited by accepted sockets); a no-op
    /// on loopback, which has no NAPI ID.
    pub busy_poll_us: Option<u32>,
    /// Path answering Prometheus text metrics (`GET`/`HEAD`); `None` turns it off. The server
    /// adds it to the router as an ordinary route when it starts, in place of any `GET`/`HEAD`
    /// handler the router has on that path.
    pub metrics_path: Option<String>,
    /// Directory of static files served for `GET`/`HEAD` requests no route matched.
    pub root: Option<PathBuf>,
    /// Serve `NAME.br`/`NAME.gz` beside a file of `root` to clients that accept that coding
    /// (nginx's `gzip_static`); off by default.
    pub precompressed: bool,
    /// How much of `root` each worker keeps in memory, and how often a kept file is checked
    /// (by default on every request, so a changed file is never served stale).
    pub file_cache: crate::FileCacheConfig,
    /// After [`ServerHandle::shutdown`](crate::ServerHandle::shutdown), longest the workers
    /// finish in-flight requests before closing what remains.
    pub drain_timeout: Duration,
    /// Longest an async handler ([`Router::route_async`](crate::Router::route_async)) may take
    /// to answer: past it the request gets a 503, its future is dropped, and it is counted as
    /// `twelve_timeouts_total{kind="handler"}`. Zero: no limit.
    pub handler_timeout: Duration,
    /// On shutdown, close idle keep-alive connections at once (the default, as nginx does).
    /// `false` keeps them until their next request (answered with `Connection: close`), their
    /// keep-alive timeout, or the drain deadline: what a zero-failure upgrade wants, since a
    /// client may be sending a request at the moment an idle connection is closed
    /// (docs/restart.md, "Draining keep-alive connections").
    pub close_idle_on_drain: bool,
    /// When a worker naps after a small batch ([`Coalesce`]; by default only while its
    /// database connections have a backlog).
    pub coalesce: Coalesce,
    /// Unsent response bytes above which a connection stops reading and parsing
    /// (backpressure), until the peer reads.
    pub write_high_water: usize,
    /// Count accepted connections whose receiving CPU (`SO_INCOMING_CPU` read back) is not the
    /// worker's CPU, in the `steer_misses` metric. Costs one `getsockopt` per accept.
    pub check_steering: bool,
    /// The event loop's kernel interface.
    pub io: Backend,
    /// On the epoll backend, the fewest connections ready in one wait whose `recv`s and
    /// `send`s go to the kernel as one io_uring batch each; fewer make their own syscalls.
    /// Default 8 (measured: docs/results.md#against-the-fastest-servers-we-know); below 2
    /// counts as 2, since one connection is never a batch.
    pub min_batch: usize,
    /// Terminate TLS on every listener with this certificate (`--tls-cert`/`--tls-key`); the
    /// binary keeps a clone to [`twelve_tls::ServerTls::reload`] it on SIGHUP.
    pub tls: Option<std::sync::Arc<twelve_tls::ServerTls>>,
    /// With `tls`: which of `listen` terminate TLS (same length as `listen`); empty means
    /// every one. Listeners given to `Server::start_with_listeners` are all TLS with `tls`.
    pub tls_listen: Vec<bool>,
    /// Which of the TLS listeners offer ALPN `http/1.1` alone (same length as `listen`;
    /// empty: none), as nginx's `listen ssl` without `http2` does and HttpArena's json-tls
    /// port must: a client that offers `h2` too speaks HTTP/1.1 there. The other TLS
    /// listeners offer `h2` first, then `http/1.1`.
    pub tls_http11_listen: Vec<bool>,
    /// Which of `listen` speak HTTP/2 only, with prior knowledge (h2c, RFC 9113 §3.3): the
    /// server preface goes out at once and an HTTP/1.1 request is refused (GOAWAY
    /// PROTOCOL_ERROR). Empty: none. The other plain listeners take both: HTTP/1.1, and h2c
    /// from a client that opens with the HTTP/2 preface.
    pub h2c_listen: Vec<bool>,
    /// This process's generation: 1 at a fresh start, one more at each upgrade or restart
    /// (docs/restart.md). Shown in `/metrics` as `twelve_generation`.
    pub generation: u64,
    /// Name of a response field carrying [`Config::generation`] on every response (e.g.
    /// `X-Twelve-Generation`), so a client can tell which generation answered; `None` (the
    /// default): no such field.
    pub generation_header: Option<String>,
    /// Compress response bodies for clients that accept it (`Accept-Encoding`); `None` (the
    /// default): never, and no request pays for looking.
    pub compression: Option<crate::Compression>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: vec![SocketAddr::from(([127, 0, 0, 1], 8080))],
            cpus: twelve_sys::cpus::online(),
            steer: Steer::default(),
            timeouts: Timeouts::default(),
            limits: twelve_http::Limits::default(),
            max_conns_per_worker: 100_000,
            busy_poll_us: None,
            metrics_path: Some("/metrics".to_owned()),
            root: None,
            precompressed: false,
            file_cache: crate::FileCacheConfig::default(),
            drain_timeout: Duration::from_secs(10),
            handler_timeout: Duration::from_secs(30),
            close_idle_on_drain: true,
            coalesce: Coalesce::Auto,
            min_batch: crate::backend::epoll::MIN_BATCH,
            write_high_water: 256 * 1024,
            check_steering: false,
            io: Backend::default(),
            tls: None,
            tls_listen: Vec::new(),
            tls_http11_listen: Vec::new(),
            h2c_listen: Vec::new(),
            generation: 1,
            generation_header: None,
            compression: None,
        }
    }
}

impl Config {
    /// A config for tests and embedding: one listener on `127.0.0.1:0` (a free port), the
    /// given number of workers on the first online CPUs, defaults otherwise.
    pub fn loopback(workers: usize) -> Self {
        Self {
            listen: vec![SocketAddr::from(([127, 0, 0, 1], 0))],
            cpus: twelve_sys::cpus::online().first(workers.max(1)),
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn naps_follow_the_setting_the_batch_and_the_answers_owed() {
        let us = Duration::from_micros;
        let auto = Some(Coalesce::AUTO_NAP);
        // (setting, events found, answers owed) -> nap
        for (c, ready, owed, want) in [
            (Coalesce::Off, 1, 1000, None),
            (Coalesce::Always(us(50)), 1, 0, Some(us(50))),
            (Coalesce::Always(us(50)), 15, 0, Some(us(50))),
            (Coalesce::Always(us(50)), 16, 0, None),
            (Coalesce::Always(us(50)), 0, 0, None),
            (Coalesce::Always(us(0)), 1, 0, None),
            (Coalesce::Auto, 1, 0, None),
            (Coalesce::Auto, 1, Coalesce::AUTO_OWED - 1, None),
            (Coalesce::Auto, 1, Coalesce::AUTO_OWED, auto),
            (Coalesce::Auto, 15, 5000, auto),
            (Coalesce::Auto, 16, 5000, None),
            (Coalesce::Auto, 0, 5000, None),
        ] {
            assert_eq!(c.nap(ready, owed), want, "{c:?} ready {ready} owed {owed}");
        }
        assert_eq!(Coalesce::default(), Coalesce::Auto);
        assert_eq!(Coalesce::Off.longest(), None);
        assert_eq!(Coalesce::Auto.longest(), auto);
    }

    #[test]
    fn backend_names_round_trip_and_nothing_else_parses() {
        for b in [Backend::Auto, Backend::Epoll, Backend::Uring] {
            assert_eq!(b.to_string().parse::<Backend>(), Ok(b));
        }
        for bad in ["", "io_uring", "EPOLL", "uring ", "poll"] {
            assert_eq!(bad.parse::<Backend>(), Err(UnknownBackend), "{bad:?}");
        }
    }
}
