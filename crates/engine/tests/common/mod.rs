//! Shared harness of the hostile-request suites: an in-process server with the spec's small
//! "test build" limits, a raw-bytes blocking client, and the checks every row ends with
//! (status line, `Connection: close`, EOF, sentinel unanswered, server alive, fds released).
//!
//! Every test starts its own server on its own port, so tests run in parallel and the fd check
//! can attribute sockets: a server-side connection is a socket in this process's fd table whose
//! local port is the server's (see [`TestServer::open_conn_fds`]).

#![allow(dead_code)] // Each test binary uses a different part of the harness.

pub mod tls_client;

use std::collections::HashSet;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use twelve_engine::apps::techempower;
use twelve_engine::{
    Backend, Config, Limits, Method, MetricsSnapshot, Request, Response, Router, Server,
    ServerHandle, Timeouts,
};

/// Body limit of the test build (docs/hostile-requests.md: "body 64 KiB").
pub const BODY_LIMIT: usize = 64 * 1024;
/// Every connection timeout of the test build.
pub const TIMEOUT: Duration = Duration::from_secs(1);
/// Upper bound for anything the server must do "promptly" or "within a timeout": 3 × the
/// configured timeout, so a loaded 2-core CI box never fails a correct server. Never a speed
/// assertion, only how long a test waits before calling the behaviour missing.
pub const BOUND: Duration = Duration::from_secs(3);
/// Max connections of the test build (one worker).
pub const MAX_CONNS: usize = 64;
/// Size of `/big.bin` in the static root: large enough that no socket buffer holds it.
pub const BIG_LEN: usize = 10 * 1024 * 1024;

/// Index of the send timeout in `MetricsSnapshot::timeouts` (header, body, keep-alive, send,
/// linger).
pub const SEND_TIMEOUT: usize = 3;

/// A request that must never be answered when it follows an error on the same connection.
pub const SENTINEL: &[u8] = b"GET /sentinel HTTP/1.1\r\nHost: a\r\n\r\n";

/// The static root shared by a test binary's servers, and the directory beside it that
/// holds the secret no request may ever read.
pub fn static_root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        remove_stale_trees("twelve-hostile-");
        let base = std::env::temp_dir().join(format!("twelve-hostile-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let root = base.join("root");
        std::fs::create_dir_all(root.join("dir")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(base.join("outside/secret.txt"), SECRET).unwrap();
        std::fs::write(root.join("a.txt"), "hello world").unwrap();
        std::fs::write(root.join("dir/index.html"), "<h1>dir</h1>").unwrap();
        std::os::unix::fs::symlink("../outside/secret.txt", root.join("link_out.txt")).unwrap();
        std::os::unix::fs::symlink("../outside", root.join("dir_out")).unwrap();
        // Written in 1 MiB pieces so this process's RSS does not grow by the file size (the
        // slow-reader test compares RSS).
        let mut big = std::fs::File::create(root.join("big.bin")).unwrap();
        let piece: Vec<u8> = (0..1024 * 1024).map(|i| (i % 251) as u8).collect();
        for _ in 0..BIG_LEN / piece.len() {
            big.write_all(&piece).unwrap();
        }
        root
    })
}

/// Removes `<temp>/<prefix><pid>` trees left by test processes that no longer run (each
/// holds a 10 MiB file). Trees of live processes (a concurrent `cargo test`) are kept.
fn remove_stale_trees(prefix: &str) {
    let Ok(dir) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(prefix)) else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Content of the file outside the root.
pub const SECRET: &str = "TOP-SECRET-OUTSIDE-ROOT";

fn text(res: &mut Response<'_>, body: &[u8]) {
    res.send(200, "text/plain", &[], body)
}

/// The routes rows rely on: `GET /` ("root"), `GET /x` ("x"), `POST /echo` (the body back),
/// `POST /api` (parses a JSON body, 47q), the TechEmpower `GET /json` and `GET /plaintext`
/// that `twelve serve` answers; static files for everything else.
pub fn router() -> Router {
    techempower::add_routes(Router::new())
        .get(
            "/",
            |_: &Request<'_, '_>, _: &[u8], res: &mut Response<'_>| text(res, b"root"),
        )
        .get(
            "/x",
            |_: &Request<'_, '_>, _: &[u8], res: &mut Response<'_>| text(res, b"x"),
        )
        .post(
            "/echo",
            |_: &Request<'_, '_>, body: &[u8], res: &mut Response<'_>| {
                res.send(200, "application/octet-stream", &[], body)
            },
        )
        .route(
            Method::Post,
            "/api",
            |req: &Request<'_, '_>, body: &[u8], res: &mut Response<'_>| api(req, body, res),
        )
}

/// A JSON API handler: 415 unless `Content-Type: application/json`, 400 for invalid JSON
/// (serde_json's recursion limit turns 10 000-deep nesting into an error, not a stack
/// overflow), else 200 with the number of top-level bytes.
fn api(req: &Request<'_, '_>, body: &[u8], res: &mut Response<'_>) {
    let json = req.headers.iter().any(|h| {
        h.name.eq_ignore_ascii_case("content-type")
            && h.value.split(|&b| b == b';').next() == Some(b"application/json")
    });
    if !json {
        return res.send(415, "text/plain", &[], b"want application/json\n");
    }
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(_) => res.send(200, "application/json", &[], b"{\"ok\":true}"),
        Err(_) => res.send(400, "text/plain", &[], b"invalid json\n"),
    }
}

/// The backend this run of the suite uses: epoll, or io_uring with `TWELVE_TEST_IO=uring`
/// (CI's second `cargo test -p twelve-engine` pass). Where io_uring is unavailable that pass
/// skips io_uring, says why, and runs on epoll (fails under `TWELVE_REQUIRE_ALL_TESTS=1`).
pub fn test_io() -> Backend {
    static IO: OnceLock<Backend> = OnceLock::new();
    *IO.get_or_init(|| match std::env::var("TWELVE_TEST_IO").as_deref() {
        Ok("uring") => match Backend::probe_uring() {
            Ok(()) => Backend::Uring,
            Err(e) => {
                twelve_testkit::skip_or_fail(format!(
                    "io_uring unavailable here ({e}); running on epoll"
                ));
                Backend::Epoll
            }
        },
        Ok("auto") => Backend::Auto,
        _ => Backend::Epoll,
    })
}

/// [`Config::loopback`] on the backend of [`test_io`].
pub fn loopback(workers: usize) -> Config {
    Config {
        io: test_io(),
        ..Config::loopback(workers)
    }
}

/// The test build's configuration (docs/hostile-requests.md, "Cases the project's suite must
/// contain"): one worker, codec defaults (line 8 KiB, head 16 KiB, 100 headers) but a 64 KiB
/// body, 1 s timeouts, 64 connections.
pub fn test_config() -> Config {
    let mut c = loopback(1);
    c.limits = Limits {
        body_bytes: BODY_LIMIT as u64,
        ..Limits::DEFAULT
    };
    c.timeouts = Timeouts {
        header: TIMEOUT,
        body_idle: TIMEOUT,
        keep_alive: TIMEOUT,
        send: TIMEOUT,
        linger: TIMEOUT,
        ..Timeouts::default()
    };
    c.max_conns_per_worker = MAX_CONNS;
    c.root = Some(static_root().to_owned());
    c.drain_timeout = TIMEOUT;
    c
}

/// A server started for one test.
pub struct TestServer {
    pub handle: ServerHandle,
    pub addr: SocketAddr,
}

impl TestServer {
    pub fn start() -> TestServer {
        Self::start_with(test_config())
    }

    pub fn start_with(config: Config) -> TestServer {
        Self::start_router(config, router())
    }

    /// A server with another router; [`TestServer::finish`] needs it to answer `GET /` with
    /// 200 "root".
    pub fn start_router(config: Config, router: Router) -> TestServer {
        let handle = Server::new(config, router).start().expect("server starts");
        let addr = handle.local_addrs()[0];
        TestServer { handle, addr }
    }

    pub fn connect(&self) -> Client {
        Client::connect(self.addr)
    }

    /// The server's counters now, summed over its workers.
    pub fn metrics(&self) -> MetricsSnapshot {
        self.handle.metrics()
    }

    /// Waits until the server's counters satisfy `done` and returns them; panics naming `what`
    /// after [`BOUND`]. Tests wait on what the server counted rather than sleep and hope it got
    /// there.
    pub fn wait_for(&self, what: &str, done: impl Fn(&MetricsSnapshot) -> bool) -> MetricsSnapshot {
        let deadline = Instant::now() + BOUND;
        loop {
            let m = self.metrics();
            if done(&m) {
                return m;
            }
            assert!(
                Instant::now() < deadline,
                "waited {BOUND:?} for {what}; the server counted {m:?}"
            );
            // The poll interval, not a synchronization: the condition above is.
            std::thread::sleep(Duration::from_micros(50));
        }
    }

    /// Waits until the server has closed every connection it accepted, so that the byte counter
    /// moves only for the connection a test opens next.
    pub fn wait_idle(&self) {
        self.wait_for("every connection to close", |m| m.open_conns == 0);
    }

    /// Sends `bytes` on `c`, the test's only open connection to this server, and waits until
    /// the server has read them: whatever is sent next reaches it in a read of its own.
    pub fn send_read(&self, c: &mut Client, bytes: &[u8]) {
        let target = self.metrics().bytes_in + bytes.len() as u64;
        c.send(bytes);
        self.wait_for("the server to read what was sent", |m| m.bytes_in >= target);
    }

    /// Sends each byte in its own segment, each read by the server before the next is sent.
    pub fn send_bytewise(&self, c: &mut Client, bytes: &[u8]) {
        for b in bytes {
            self.send_read(c, std::slice::from_ref(b));
        }
    }

    /// Server-side connection sockets still open: fds of this process that are TCP sockets
    /// with the server's local port and not listening.
    pub fn open_conn_fds(&self) -> usize {
        let inodes = conn_socket_inodes(self.addr.port());
        let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
            return 0;
        };
        dir.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .filter_map(|l| {
                let l = l.to_str()?.to_owned();
                l.strip_prefix("socket:[")?
                    .strip_suffix(']')?
                    .parse::<u64>()
                    .ok()
            })
            .filter(|ino| inodes.contains(ino))
            .count()
    }

    /// The end of every row: the server still answers a fresh `GET /` with 200, and once every
    /// client socket of the test is closed, the server's connection fds and static-file fds go
    /// back to zero within [`BOUND`] (lingering close may hold a socket briefly).
    pub fn finish(self) {
        self.assert_alive();
        let deadline = Instant::now() + BOUND;
        loop {
            let (conns, files) = (self.open_conn_fds(), open_static_fds());
            if conns == 0 && files == 0 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "fds not back to baseline: {conns} server connections, {files} static files open"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A fresh connection's `GET /` gets 200 "root".
    pub fn assert_alive(&self) {
        let mut c = self.connect();
        c.send(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
        let r = c.response();
        assert_eq!(
            r.status_line, "HTTP/1.1 200 OK",
            "server alive after the row"
        );
        assert_eq!(r.body, b"root");
    }
}

/// Inodes of TCP sockets (v4 and v6) whose local port is `port`, except listeners.
fn conn_socket_inodes(port: u16) -> HashSet<u64> {
    let mut out = HashSet::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 10 || f[3] == "0A" {
                continue; // 0A = TCP_LISTEN
            }
            let local_port = f[1]
                .rsplit(':')
                .next()
                .and_then(|p| u16::from_str_radix(p, 16).ok());
            if local_port == Some(port)
                && let Ok(ino) = f[9].parse()
            {
                out.insert(ino);
            }
        }
    }
    out
}

/// Fds of this process open on files and directories beneath the static root.
pub fn open_static_fds() -> usize {
    let root = static_root();
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return 0;
    };
    dir.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        // The root directory itself is held open (O_PATH) by every running server.
        .filter(|l| l.starts_with(root) && l != root)
        .count()
}

/// One parsed response.
#[derive(Debug)]
pub struct Resp {
    pub status_line: String,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    /// The value of the (first) field called `name`, case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn closes(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }
}

/// How reading a response ended without one.
#[derive(Debug, PartialEq, Eq)]
pub enum NoResponse {
    /// The server closed (FIN or RST) before a complete response; holds what had arrived.
    Closed(Vec<u8>),
    /// Nothing complete arrived within the bound.
    TimedOut(Vec<u8>),
}

/// A blocking raw-bytes client. Reads wait at most [`BOUND`].
pub struct Client {
    pub stream: TcpStream,
    buf: Vec<u8>,
    /// Whether the connection ended with a RST rather than a FIN.
    pub reset: bool,
}

impl Client {
    pub fn connect(addr: SocketAddr) -> Client {
        Client::from_stream(TcpStream::connect_timeout(&addr, BOUND).expect("connect"))
    }

    /// Wraps a stream connected by other means (e.g. with socket options set before connect).
    pub fn from_stream(stream: TcpStream) -> Client {
        stream.set_nodelay(true).unwrap();
        stream.set_read_timeout(Some(BOUND)).unwrap();
        Client {
            stream,
            buf: Vec::new(),
            reset: false,
        }
    }

    /// Writes all of `bytes`. Errors (the server closed first) are returned, not panics.
    pub fn try_send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(bytes)
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.try_send(bytes).expect("send");
    }

    pub fn shutdown_write(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Write);
    }

    /// Reads more bytes into the buffer; `Ok(0)` on EOF (a RST counts as EOF and sets `reset`).
    fn fill(&mut self, until: Instant) -> std::io::Result<usize> {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left)).unwrap();
        let mut chunk = [0u8; 64 * 1024];
        loop {
            match self.stream.read(&mut chunk) {
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    return Ok(n);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == ErrorKind::ConnectionReset => {
                    self.reset = true;
                    return Ok(0);
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return Err(ErrorKind::TimedOut.into());
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The next response (a HEAD response when `head`): interim 1xx responses are returned
    /// as responses too.
    pub fn try_response(&mut self, head: bool) -> Result<Resp, NoResponse> {
        let until = Instant::now() + BOUND;
        loop {
            if let Some(r) = self.parse_one(head) {
                return Ok(r);
            }
            match self.fill(until) {
                Ok(0) => return Err(NoResponse::Closed(std::mem::take(&mut self.buf))),
                Ok(_) => {}
                Err(_) => return Err(NoResponse::TimedOut(self.buf.clone())),
            }
        }
    }

    pub fn response(&mut self) -> Resp {
        self.try_response(false)
            .unwrap_or_else(|e| panic!("no response: {e:?}"))
    }

    pub fn head_response(&mut self) -> Resp {
        self.try_response(true)
            .unwrap_or_else(|e| panic!("no response: {e:?}"))
    }

    /// Parses one complete response off the front of the buffer.
    fn parse_one(&mut self, head: bool) -> Option<Resp> {
        let end = self.buf.windows(4).position(|w| w == b"\r\n\r\n")?;
        let text = String::from_utf8_lossy(&self.buf[..end]).into_owned();
        let mut lines = text.split("\r\n");
        let status_line = lines.next()?.to_owned();
        let status: u16 = status_line.get(9..12)?.parse().ok()?;
        let headers: Vec<(String, String)> = lines
            .map(|l| {
                let (n, v) = l.split_once(':').unwrap_or((l, ""));
                (n.to_owned(), v.trim().to_owned())
            })
            .collect();
        let mut r = Resp {
            status_line,
            status,
            headers,
            body: Vec::new(),
        };
        let body_len = if head || status < 200 || status == 204 || status == 304 {
            0
        } else if let Some(cl) = r.header("content-length") {
            cl.parse::<usize>().expect("numeric Content-Length")
        } else {
            panic!("response without Content-Length: {r:?}");
        };
        if self.buf.len() < end + 4 + body_len {
            return None;
        }
        r.body = self.buf[end + 4..end + 4 + body_len].to_vec();
        self.buf.drain(..end + 4 + body_len);
        Some(r)
    }

    /// Reads until the server closes; returns every byte that arrived meanwhile. Panics if the
    /// connection is still open after [`BOUND`].
    pub fn expect_eof(&mut self) -> Vec<u8> {
        let until = Instant::now() + BOUND;
        loop {
            match self.fill(until) {
                Ok(0) => return std::mem::take(&mut self.buf),
                Ok(_) => {}
                Err(e) => panic!(
                    "connection not closed within {BOUND:?} ({e}); got {:?}",
                    String::from_utf8_lossy(&self.buf)
                ),
            }
        }
    }

    /// Bytes buffered but not yet parsed.
    pub fn pending(&self) -> &[u8] {
        &self.buf
    }
}

/// Reason phrases of RFC 9110 §15, to check status lines exactly.
pub fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        304 => "Not Modified",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Content Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Range Not Satisfiable",
        417 => "Expectation Failed",
        431 => "Request Header Fields Too Large",
        501 => "Not Implemented",
        505 => "HTTP Version Not Supported",
        _ => panic!("no reason phrase for {status} in the harness"),
    }
}

/// Asserts the exact status line for one of `statuses`, and that a final response carries
/// `Date` (an origin server with a clock MUST send it, RFC 9110 §6.6.1).
pub fn assert_status(r: &Resp, statuses: &[u16]) {
    assert!(statuses.contains(&r.status), "want {statuses:?}, got {r:?}");
    assert_eq!(
        r.status_line,
        format!("HTTP/1.1 {} {}", r.status, reason(r.status))
    );
    if r.status >= 200 {
        assert!(
            r.header("date").is_some_and(|d| d.len() == 29),
            "no Date: {r:?}"
        );
    }
}

/// An error row: `request` followed by the sentinel in the same write gets exactly one
/// response with one of `statuses` and `Connection: close`, then EOF, and the sentinel is
/// never answered.
pub fn error_row(srv: &TestServer, request: &[u8], statuses: &[u16]) -> Resp {
    let mut c = srv.connect();
    c.send(&[request, SENTINEL].concat());
    let r = c.response();
    assert_error_then_close(&mut c, &r, statuses);
    r
}

/// The checks after an error response: status, `Connection: close`, EOF, nothing more.
pub fn assert_error_then_close(c: &mut Client, r: &Resp, statuses: &[u16]) {
    assert_status(r, statuses);
    assert!(
        r.closes(),
        "error response without Connection: close: {r:?}"
    );
    let rest = c.expect_eof();
    assert!(
        rest.is_empty(),
        "bytes after the error (sentinel answered?): {:?}",
        String::from_utf8_lossy(&rest)
    );
}

/// A row where the server may answer one of `statuses` with close, or close with no response.
pub fn error_or_silent_close_row(srv: &TestServer, request: &[u8], statuses: &[u16]) {
    let mut c = srv.connect();
    c.send(&[request, SENTINEL].concat());
    match c.try_response(false) {
        Ok(r) => assert_error_then_close(&mut c, &r, statuses),
        Err(NoResponse::Closed(rest)) => assert!(rest.is_empty(), "partial response {rest:?}"),
        Err(NoResponse::TimedOut(b)) => panic!("neither answered nor closed: {b:?}"),
    }
}

/// A keep-alive row: `request` gets `status` (and `body` if given) without `Connection:
/// close`, and a following `GET /` on the same connection gets 200 "root".
pub fn keep_row(srv: &TestServer, request: &[u8], status: u16, body: Option<&[u8]>) -> Resp {
    let mut c = srv.connect();
    c.send(request);
    let r = c.response();
    assert_status(&r, &[status]);
    if let Some(b) = body {
        assert_eq!(String::from_utf8_lossy(&r.body), String::from_utf8_lossy(b));
    }
    assert!(!r.closes(), "keep-alive row closed: {r:?}");
    c.send(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    let next = c.response();
    assert_eq!(
        (next.status, next.body.as_slice()),
        (200, &b"root"[..]),
        "connection reusable"
    );
    r
}

/// Sends `batch` split in two at every byte boundary (the server reads the first half before
/// the second is sent), and checks the responses with `check` each time.
pub fn split_at_every_byte(srv: &TestServer, batch: &[u8], expect: usize, check: impl Fn(&[Resp])) {
    for i in 1..batch.len() {
        srv.wait_idle();
        let mut c = srv.connect();
        srv.send_read(&mut c, &batch[..i]);
        c.send(&batch[i..]);
        let rs: Vec<Resp> = (0..expect).map(|_| c.response()).collect();
        check(&rs);
    }
}

/// An error row sent in two segments, split at every byte boundary, with the sentinel behind
/// it: every split gets the same error, `Connection: close`, EOF and no answer to the sentinel
/// (an incremental parser must not decide differently depending on where reads end).
pub fn error_split_at_every_byte(srv: &TestServer, request: &[u8], statuses: &[u16]) {
    let batch = [request, SENTINEL].concat();
    for i in 1..batch.len() {
        srv.wait_idle();
        let mut c = srv.connect();
        srv.send_read(&mut c, &batch[..i]);
        // The server may already have answered and closed; the rest is then refused.
        let _ = c.try_send(&batch[i..]);
        let r = c
            .try_response(false)
            .unwrap_or_else(|e| panic!("split at {i}: {e:?}"));
        assert_error_then_close(&mut c, &r, statuses);
    }
}

/// An error row with nothing behind the request (for requests the server answers before it
/// has all of them, or after a timeout): one response with one of `statuses`, `Connection:
/// close`, then EOF.
pub fn lone_error_row(srv: &TestServer, request: &[u8], statuses: &[u16]) {
    let mut c = srv.connect();
    c.send(request);
    let r = c.response();
    assert_error_then_close(&mut c, &r, statuses);
}

/// A client socket with a 4 KiB receive buffer (set before connect, which also turns off
/// receive-buffer autotuning), so the server cannot park its output in kernel buffers.
pub fn small_window_client(srv: &TestServer) -> TcpStream {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    s.set_recv_buffer_size(4096).unwrap();
    s.connect_timeout(&srv.addr.into(), BOUND).unwrap();
    s.into()
}

/// An error row for a request too large to be read whole: the server may answer and stop
/// reading early, so send errors are tolerated; then one error response with `Connection:
/// close`, EOF, and the sentinel sent behind it never answered.
pub fn big_error_row(srv: &TestServer, request: &[u8], statuses: &[u16]) {
    let mut c = srv.connect();
    let _ = c.try_send(request);
    let _ = c.try_send(SENTINEL);
    let r = c.response();
    assert_error_then_close(&mut c, &r, statuses);
}

/// After an incomplete body and a half-close: never a 2xx; either an error response with
/// `Connection: close` and EOF, or a close with nothing sent.
pub fn assert_incomplete_body_refused(c: &mut Client) {
    match c.try_response(false) {
        Ok(r) => {
            assert!(
                !(200..300).contains(&r.status),
                "2xx for an incomplete body: {r:?}"
            );
            assert!(r.closes(), "{r:?}");
            assert!(c.expect_eof().is_empty());
        }
        Err(NoResponse::Closed(rest)) => assert!(rest.is_empty(), "{rest:?}"),
        Err(NoResponse::TimedOut(b)) => panic!("not closed after EOF mid-body: {b:?}"),
    }
}

/// A HEAD response carries the GET response's status line and fields (`Date` aside, as it
/// may tick between them), RFC 9110 §9.3.2.
pub fn assert_head_fields_match_get(head: &Resp, get: &Resp) {
    let without_date = |r: &Resp| -> Vec<(String, String)> {
        r.headers
            .iter()
            .filter(|(n, _)| !n.eq_ignore_ascii_case("date"))
            .cloned()
            .collect()
    };
    assert_eq!(head.status_line, get.status_line);
    assert_eq!(without_date(head), without_date(get));
}

/// Error rows: `name: bytes => [statuses];`, one `#[test]` each running [`error_row`] on a
/// fresh server: one response with one of the statuses and `Connection: close`, then EOF; the
/// pipelined sentinel is never answered.
#[allow(unused_macros)] // Not every suite has error rows.
macro_rules! error_rows {
    ($($name:ident: $req:expr => $statuses:expr;)*) => {$(
        #[test]
        fn $name() {
            let srv = TestServer::start();
            error_row(&srv, $req, &$statuses);
            srv.finish();
        }
    )*};
}
#[allow(unused_imports)] // Not every suite has error rows.
pub(crate) use error_rows;

/// Keep-alive rows: `name: bytes => status, body;`, one `#[test]` each running [`keep_row`]
/// (then a `GET /` on the same connection) on a fresh server.
#[allow(unused_macros)] // Not every suite has keep-alive rows.
macro_rules! keep_rows {
    ($($name:ident: $req:expr => $status:expr, $body:expr;)*) => {$(
        #[test]
        fn $name() {
            let srv = TestServer::start();
            keep_row(&srv, $req, $status, $body);
            srv.finish();
        }
    )*};
}
#[allow(unused_imports)] // Not every suite has keep-alive rows.
pub(crate) use keep_rows;

/// Sets SO_LINGER 0 so that dropping the stream sends a RST instead of a FIN.
pub fn reset(stream: TcpStream) {
    let s = socket2::Socket::from(stream);
    s.set_linger(Some(Duration::ZERO)).unwrap();
    drop(s);
}

/// `name, ...`: each test function taking a [`Backend`](twelve_engine::Backend), run once on
/// epoll and once on io_uring (skipped with its reason where the kernel has none).
#[allow(unused_macros)] // Not every suite runs on both backends.
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod epoll {
            $(#[test] fn $name() { super::$name(twelve_engine::Backend::Epoll) })*
        }
        mod uring {
            $(#[test] fn $name() {
                if let Err(e) = twelve_engine::Backend::probe_uring() {
                    return twelve_testkit::skip_or_fail(format!("io_uring unavailable here ({e})"));
                }
                super::$name(twelve_engine::Backend::Uring)
            })*
        }
    };
}
#[allow(unused_imports)] // Not every suite runs on both backends.
pub(crate) use on_both_backends;

/// HttpArena's json check (its validate.sh, `/json/{count}?m=`): the page's `count` is the
/// route's, it holds that many items, and every item's `total` is price × quantity × m.
pub fn assert_json_page(body: &[u8], count: u64, m: u64) {
    let v: serde_json::Value = serde_json::from_slice(body).expect("JSON");
    assert_eq!(v["count"].as_u64(), Some(count), "{v}");
    let items = v["items"].as_array().expect("items");
    assert_eq!(items.len() as u64, count);
    for item in items {
        let field = |k: &str| item[k].as_u64().expect(k);
        assert_eq!(
            field("total"),
            field("price") * field("quantity") * m,
            "{item}"
        );
    }
}
