//! HttpArena's json-tls profile end to end over loopback: `apps::httparena::full_router` on a
//! TLS listener as the example's `TLS_H1_LISTEN` (port 8081) opens it, offering ALPN
//! `http/1.1` alone as the profile asks, with the checks of HttpArena's scripts/validate.sh
//! for the profile (HttpArena 28606ba): HTTP/1.1 negotiated by a client that offers it, three
//! (count, m) pairs, `Content-Type`.

mod common;

use common::tls_client::TlsConn as Conn;
use common::{TestServer, assert_json_page, test_config};
use std::path::Path;
use std::sync::Arc;
use twelve_engine::apps::httparena::{self, Dataset};
use twelve_tls::testing::Pki;
use twelve_tls::{ALPN_HTTP11, ClientOptions, ClientTls, ServerTls};

/// The json routes behind TLS, as the example serves them on its json-tls listener.
fn server(pki: &Pki) -> TestServer {
    let tls = ServerTls::load(&pki.cert, &pki.key).unwrap();
    let mut config = test_config();
    config.root = None;
    config.tls = Some(Arc::new(tls));
    config.tls_http11_listen = vec![true];
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/arena/dataset.json");
    let dataset = Dataset::load(&data).expect("dataset loads");
    TestServer::start_router(config, httparena::full_router(Some(dataset), None))
}

fn client(pki: &Pki) -> ClientTls {
    ClientTls::new(&ClientOptions {
        cacert: Some(pki.ca_pem.clone()),
        ..ClientOptions::default()
    })
    .unwrap()
}

impl Conn {
    /// `GET path`; the response's head (lower-cased) and body.
    fn get(&mut self, path: &str) -> (String, Vec<u8>) {
        let req = format!("GET {path} HTTP/1.1\r\nHost: localhost:8081\r\n\r\n");
        self.tls.write_plain(req.as_bytes());
        let whole = |p: &[u8]| framed(p).is_some_and(|(_, at, len)| p.len() >= at + len);
        let plain = self.read_until(whole).unwrap();
        let (head, at, len) = framed(&plain)
            .filter(|&(_, at, len)| plain.len() >= at + len)
            .unwrap_or_else(|| panic!("the server closed mid-response: {plain:?}"));
        (head, plain[at..at + len].to_vec())
    }
}

/// A response's head (lower-cased), where its body starts, and its `Content-Length`.
fn framed(b: &[u8]) -> Option<(String, usize, usize)> {
    let end = b.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&b[..end]).to_ascii_lowercase();
    let len = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    Some((head, end + 4, len))
}

/// validate.sh's "ALPN negotiates HTTP/1.1": a client offering `http/1.1` (curl --http1.1)
/// gets it and is answered in HTTP/1.1.
#[test]
fn json_tls_negotiates_http11() {
    let pki = Pki::new("arena-json-tls-alpn");
    let s = server(&pki);
    let mut c = Conn::open(&s, &client(&pki));
    c.handshake().expect("the handshake completes");
    assert_eq!(c.tls.alpn(), Some(ALPN_HTTP11));
    let (head, _) = c.get("/json/1?m=1");
    assert!(head.starts_with("http/1.1 200 "), "{head}");
    drop(c);
    s.wait_for("every connection closed", |m| m.open_conns == 0);
    assert_eq!(s.open_conn_fds(), 0);
}

/// The port offers `http/1.1` alone: a client that speaks only h2 finds no protocol in
/// common and is refused in the handshake (RFC 7301 §3.2), with nothing left open.
#[test]
fn json_tls_offers_no_h2() {
    let pki = Pki::new("arena-json-tls-no-h2");
    let s = server(&pki);
    let mut c = Conn::open(&s, &client(&pki).with_alpn_h2());
    assert!(c.handshake().is_err(), "an h2-only client got a session");
    drop(c);
    s.wait_for("every connection closed", |m| m.open_conns == 0);
    assert_eq!(s.open_conn_fds(), 0);
}

/// validate.sh's body and `Content-Type` checks, its three (count, m) pairs, then the load
/// generator's seven, on one keep-alive connection.
#[test]
fn json_tls_validate_counts_multipliers_and_content_type() {
    let pki = Pki::new("arena-json-tls-body");
    let s = server(&pki);
    let mut c = Conn::open(&s, &client(&pki));
    c.handshake().expect("the handshake completes");
    let pairs = [(7, 2), (23, 11), (50, 1)];
    let rotation = [(1, 3), (5, 7), (10, 2), (15, 5), (25, 4), (40, 8), (50, 6)];
    for (count, m) in pairs.into_iter().chain(rotation) {
        let (head, body) = c.get(&format!("/json/{count}?m={m}"));
        assert!(head.starts_with("http/1.1 200 "), "{head}");
        assert!(
            head.contains("\r\ncontent-type: application/json"),
            "{head}"
        );
        assert!(!head.contains("content-encoding"), "{head}");
        assert_json_page(&body, count, m);
    }
    drop(c);
    s.wait_for("every connection closed", |m| m.open_conns == 0);
    assert_eq!(s.open_conn_fds(), 0);
}
