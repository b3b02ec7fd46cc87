//! TLS end to end over loopback: an in-process server with a certificate made at test time,
//! a blocking client on twelve-tls's client session. Keep-alive, resumption, static files,
//! bad input counted in /metrics, a stalled handshake as a header timeout, certificate reload.
//! On the suite's backend (epoll, or io_uring with `TWELVE_TEST_IO=uring`), and once on
//! io_uring whatever the suite runs on.

mod common;

use common::tls_client::TlsConn as Conn;
use common::{TestServer, static_root, test_config};
use std::sync::Arc;
use std::time::Duration;
use twelve_engine::{Backend, Config};
use twelve_tls::testing::Pki;
use twelve_tls::{ClientOptions, ClientTls, Failure, ServerTls};

fn tls_config(pki: &Pki) -> (Config, Arc<ServerTls>) {
    let tls = Arc::new(ServerTls::load(&pki.cert, &pki.key).unwrap());
    let mut c = test_config();
    c.tls = Some(Arc::clone(&tls));
    (c, tls)
}

fn client(ca: &std::path::Path) -> ClientTls {
    ClientTls::new(&ClientOptions {
        cacert: Some(ca.to_owned()),
        resume: true,
        ..ClientOptions::default()
    })
    .unwrap()
}

impl Conn {
    /// One request; the whole response (headers and a `Content-Length` body).
    fn get(&mut self, path: &str, close: bool) -> Vec<u8> {
        let extra = if close { "Connection: close\r\n" } else { "" };
        let req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{extra}\r\n");
        self.tls.write_plain(req.as_bytes());
        self.read_until(complete).unwrap()
    }
}

/// The end of every test: a fresh TLS connection is answered, and once clients are gone
/// the server holds no connection's descriptor.
fn finish(s: &TestServer, pki: &Pki) {
    let mut c = Conn::open(s, &client(&pki.ca_pem));
    assert!(
        c.get("/", true).ends_with(b"root"),
        "server alive after the test"
    );
    drop(c);
    s.wait_for("every connection closed", |m| m.open_conns == 0);
    assert_eq!(s.open_conn_fds(), 0);
}

/// A response is complete once its head and `Content-Length` bytes of body are in.
fn complete(b: &[u8]) -> bool {
    let Some(end) = b.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&b[..end]).to_ascii_lowercase();
    let len = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    b.len() >= end + 4 + len
}

#[test]
fn keep_alive_requests_then_close_on_one_handshake() {
    keep_alive_then_close_notify("e2e-keepalive", None);
}

/// Three keep-alive requests and a `Connection: close` one on one handshake, on the suite's
/// backend or on `io`; the server ends with close_notify, then closes.
fn keep_alive_then_close_notify(name: &str, io: Option<Backend>) {
    let pki = Pki::new(name);
    let (mut config, _) = tls_config(&pki);
    if let Some(io) = io {
        config.io = io;
    }
    let s = TestServer::start_with(config);
    let mut c = Conn::open(&s, &client(&pki.ca_pem));
    for _ in 0..3 {
        let r = c.get("/", false);
        assert!(r.starts_with(b"HTTP/1.1 200 OK\r\n"), "{r:?}");
        assert!(r.ends_with(b"root"));
    }
    let r = c.get("/", true);
    assert!(r.starts_with(b"HTTP/1.1 200 OK\r\n"));
    assert!(r.ends_with(b"root"));
    c.read_until(|_| false).unwrap();
    assert!(c.tls.peer_closed());
    let m = s.wait_for("the close", |m| m.open_conns == 0);
    assert_eq!((m.requests, m.tls_handshakes), (4, 1));
    assert!(m.tls_failures.is_empty(), "{m:?}");
    finish(&s, &pki);
}

#[test]
fn a_second_connection_resumes_the_first_session() {
    let pki = Pki::new("e2e-resume");
    let (config, _) = tls_config(&pki);
    let s = TestServer::start_with(config);
    let client = client(&pki.ca_pem);
    for close in [false, true] {
        let mut c = Conn::open(&s, &client);
        // Read the tickets the server sends after the handshake (TLS 1.3) with the response.
        assert!(c.get("/", close).ends_with(b"root"));
        drop(c);
    }
    let m = s.wait_for("both handshakes", |m| m.tls_handshakes == 2);
    assert_eq!(m.tls_resumed, 1);
    finish(&s, &pki);
}

#[test]
fn a_static_file_larger_than_the_socket_buffers_arrives_whole() {
    let pki = Pki::new("e2e-static");
    let (mut config, _) = tls_config(&pki);
    // The test build's 1 s send timeout (no progress for 1 s) is about stalled peers, not a
    // client slowed by a loaded machine. While the TLS session still holds records, the
    // connection is on its send timeout, not the keep-alive one (`tls::deadline`, checked
    // without sockets in backend/tls/tests.rs).
    config.timeouts.send = Duration::from_secs(30);
    let s = TestServer::start_with(config);
    let want = std::fs::read(static_root().join("big.bin")).unwrap();
    let mut c = Conn::open(&s, &client(&pki.ca_pem));
    let r = c.get("/big.bin", false);
    let end = r.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert!(r.starts_with(b"HTTP/1.1 200 OK\r\n"));
    assert!(
        r[end..] == want[..],
        "body differs: {} of {} bytes; the server counted {:?}",
        r.len() - end,
        want.len(),
        s.metrics().timeouts
    );
    finish(&s, &pki);
}

/// Raw bytes to a TLS port: the server closes, counts the failure, and stays up.
fn bad_bytes(tag: &str, bytes: &[u8], kind: Failure) {
    let pki = Pki::new(tag);
    let (config, _) = tls_config(&pki);
    let s = TestServer::start_with(config);
    let mut c = s.connect();
    c.send(bytes);
    let m = s.wait_for("the failure counted", |m| {
        m.tls_failures.contains(&(kind.name(), 1)) && m.open_conns == 0
    });
    assert_eq!(m.requests, 0);
    finish(&s, &pki);
}

#[test]
fn plaintext_http_to_a_tls_port_is_answered_400_closed_and_counted() {
    bad_bytes(
        "e2e-plain",
        b"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
        Failure::Plaintext,
    );
    let pki = Pki::new("e2e-plain-400");
    let (config, _) = tls_config(&pki);
    let s = TestServer::start_with(config);
    let mut c = s.connect();
    c.send(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    let r = c.response();
    assert_eq!(r.status, 400);
    assert_eq!(r.body, b"The plain HTTP request was sent to HTTPS port\n");
    assert_eq!(r.header("connection"), Some("close"));
    finish(&s, &pki);
}

#[test]
fn a_garbage_record_is_closed_and_counted() {
    bad_bytes(
        "e2e-garbage",
        b"\x15\x03\x03\xff\xff\x00\x00",
        Failure::BadRecord,
    );
}

#[test]
fn a_truncated_handshake_is_closed_and_counted() {
    let pki = Pki::new("e2e-trunc");
    let (config, _) = tls_config(&pki);
    let s = TestServer::start_with(config);
    let mut sess = client(&pki.ca_pem).session(&ClientTls::server_name("localhost").unwrap());
    let hello = sess.outgoing().to_vec();
    let mut c = s.connect();
    c.send(&hello[..hello.len() / 2]);
    c.shutdown_write();
    s.wait_for("the truncation counted", |m| {
        m.tls_failures.contains(&("truncated", 1)) && m.open_conns == 0
    });
    finish(&s, &pki);
}

#[test]
fn a_handshake_that_stalls_is_a_header_timeout() {
    let pki = Pki::new("e2e-stall");
    let (mut config, _) = tls_config(&pki);
    config.timeouts.keep_alive = Duration::from_secs(60);
    let s = TestServer::start_with(config);
    let mut sess = client(&pki.ca_pem).session(&ClientTls::server_name("localhost").unwrap());
    let hello = sess.outgoing().to_vec();
    let mut c = s.connect();
    c.send(&hello[..20]);
    let m = s.wait_for("the header timeout", |m| {
        m.timeouts[0] == 1 && m.open_conns == 0
    });
    assert_eq!(m.responses_by_class[4], 0, "no 408 on a handshake");
    finish(&s, &pki);
}

#[test]
fn reload_serves_the_new_certificate_and_keeps_open_connections() {
    let pki = Pki::new("e2e-reload-old");
    let (config, tls) = tls_config(&pki);
    let s = TestServer::start_with(config);
    let old_client = client(&pki.ca_pem);
    let mut open = Conn::open(&s, &old_client);
    assert!(open.get("/", false).ends_with(b"root"));
    let fresh = Pki::new("e2e-reload-new");
    std::fs::copy(&fresh.cert, &pki.cert).unwrap();
    std::fs::copy(&fresh.key, &pki.key).unwrap();
    tls.reload().unwrap();
    // The connection made before the reload goes on.
    assert!(open.get("/", false).ends_with(b"root"));
    // New handshakes present the new chain: trusted by the new CA, not by the old one.
    let no_resume = |ca: &std::path::Path| {
        ClientTls::new(&ClientOptions {
            cacert: Some(ca.to_owned()),
            ..ClientOptions::default()
        })
        .unwrap()
    };
    let mut c = Conn::open(&s, &no_resume(&fresh.ca_pem));
    assert_eq!(c.handshake(), Ok(()));
    let mut c = Conn::open(&s, &no_resume(&pki.ca_pem));
    assert_eq!(c.handshake(), Err(Failure::CertificateUntrusted));
    drop((c, open));
    finish(&s, &fresh);
}

/// TLS is a layer under the one drive loop, so the io_uring backend terminates it as the
/// epoll backend does, on the epoll pass of the suite too.
#[test]
fn tls_on_the_io_uring_backend_serves_keep_alive_and_ends_with_close_notify() {
    if let Err(e) = Backend::probe_uring() {
        return twelve_testkit::skip_or_fail(format!("io_uring unavailable here ({e})"));
    }
    keep_alive_then_close_notify("e2e-uring", Some(Backend::Uring));
}

#[test]
fn tls_per_listener_leaves_the_others_plain() {
    let pki = Pki::new("e2e-per-listener");
    let (mut config, _) = tls_config(&pki);
    let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    config.listen = vec![any, any];
    config.tls_listen = vec![false, true];
    // Batch from two ready connections on, so that the few below are often batched.
    config.min_batch = 2;
    let s = TestServer::start_with(config);
    let addrs = s.handle.local_addrs().to_vec();
    // The first listener speaks plain HTTP.
    let mut plain = common::Client::connect(addrs[0]);
    plain.send(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    assert_eq!(plain.response().body, b"root");
    // The second speaks TLS, and refuses plaintext.
    let tls_server = TestServer {
        handle: s.handle,
        addr: addrs[1],
    };
    let mut c = Conn::open(&tls_server, &client(&pki.ca_pem));
    assert!(c.get("/", false).ends_with(b"root"));
    // Plain keep-alive connections beside a TLS one, rounds of requests in flight on all at
    // once: the worker batches the plain ones and runs the TLS one alone, and neither sees
    // the other's bytes.
    let mut plains: Vec<_> = (0..4).map(|_| common::Client::connect(addrs[0])).collect();
    for round in 0..50 {
        for p in &mut plains {
            p.send(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
        }
        assert!(c.get("/", false).ends_with(b"root"), "round {round}");
        for p in &mut plains {
            assert_eq!(p.response().body, b"root", "round {round}");
        }
    }
    drop(c);
    let mut bad = common::Client::connect(addrs[1]);
    bad.send(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    tls_server.wait_for("the plaintext failure", |m| {
        m.tls_failures.contains(&("plaintext", 1)) && m.open_conns == 0
    });
    assert_eq!(tls_server.metrics().tls_handshakes, 1);
}
