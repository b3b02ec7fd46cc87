//! docs/hostile-requests.md section E (connection management and hostile clients), end to end over
//! loopback with raw bytes; the static-file rows are in hostile_static.rs and the RLIMIT_NOFILE
//! run in the root package's tests/serve_limits.rs. Every row also checks that the server is
//! alive and its fds are back to baseline.

mod common;
use common::*;
use std::time::{Duration, Instant};

const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
const GET_X: &[u8] = b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n";
const GET_JSON: &[u8] = b"GET /json HTTP/1.1\r\nHost: a\r\n\r\n";

fn bodies(rs: &[Resp]) -> Vec<(u16, String)> {
    rs.iter()
        .map(|r| (r.status, String::from_utf8_lossy(&r.body).into_owned()))
        .collect()
}

/// 47a: three GETs in one write: three responses, in order, connection kept.
#[test]
fn e47a_three_pipelined_gets_in_order() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(&[GET, GET_X, GET].concat());
    let rs: Vec<Resp> = (0..3).map(|_| c.response()).collect();
    let want = [(200, "root"), (200, "x"), (200, "root")].map(|(s, b)| (s, b.to_owned()));
    assert_eq!(bodies(&rs), want);
    assert!(rs.iter().all(|r| !r.closes()));
    c.send(GET);
    assert_eq!(c.response().status, 200);
    drop(c);
    srv.finish();
}

/// 47a, split: the three-GET batch in two segments at every byte boundary.
#[test]
fn e47a_three_pipelined_gets_split_at_every_byte() {
    let srv = TestServer::start();
    let batch = [GET, GET_X, GET].concat();
    let want = [(200, "root"), (200, "x"), (200, "root")].map(|(s, b)| (s, b.to_owned()));
    split_at_every_byte(&srv, &batch, 3, |rs| assert_eq!(bodies(rs), want));
    srv.finish();
}

/// 47a: a request sent one byte per segment.
#[test]
fn e47a_request_one_byte_per_segment() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    srv.send_bytewise(
        &mut c,
        b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
    );
    let r = c.response();
    assert_eq!((r.status, r.body.as_slice()), (200, &b"hello"[..]));
    drop(c);
    srv.finish();
}

/// 47a: POST + GET pipelined.
#[test]
fn e47a_post_and_get_pipelined() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(
        &[
            &b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"[..],
            GET,
        ]
        .concat(),
    );
    let rs: Vec<Resp> = (0..2).map(|_| c.response()).collect();
    assert_eq!(
        bodies(&rs),
        [(200, "abc".to_owned()), (200, "root".to_owned())]
    );
    drop(c);
    srv.finish();
}

/// 47b: `Connection: close` then a pipelined GET: one response with `Connection: close`, then
/// EOF; the GET is never answered.
#[test]
fn e47b_connection_close_then_pipelined_get_unanswered() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(
        &[
            &b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"[..],
            GET_X,
        ]
        .concat(),
    );
    let r = c.response();
    assert_status(&r, &[200]);
    assert!(r.closes(), "{r:?}");
    assert!(
        c.expect_eof().is_empty(),
        "request after Connection: close was answered"
    );
    srv.finish();
}

/// 47c: an invalid request then a valid GET in the same packet: 400, close, GET unanswered.
#[test]
fn e47c_invalid_then_valid_get_same_packet() {
    let srv = TestServer::start();
    error_row(
        &srv,
        &[
            &b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n"[..],
            GET_X,
        ]
        .concat(),
        &[400],
    );
    srv.finish();
}

/// 47c, split: the same kind of batch in two segments at every byte boundary.
#[test]
fn e47c_invalid_then_valid_get_split_at_every_byte() {
    let srv = TestServer::start();
    error_split_at_every_byte(
        &srv,
        &[&b"GET  / HTTP/1.1\r\nHost: a\r\n\r\n"[..], GET_X].concat(),
        &[400],
    );
    srv.finish();
}

/// 47d: HTTP/1.0 without keep-alive: one response, then close.
#[test]
fn e47d_http_1_0_closes_after_response() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(&[&b"GET / HTTP/1.0\r\nHost: a\r\n\r\n"[..], GET_X].concat());
    let r = c.response();
    assert_eq!((r.status, r.body.as_slice()), (200, &b"root"[..]));
    assert!(
        c.expect_eof().is_empty(),
        "HTTP/1.0 request after the first was answered"
    );
    srv.finish();
}

/// 47d: HTTP/1.0 with `Connection: keep-alive` may stay open; the project keeps it.
#[test]
fn e47d_http_1_0_keep_alive_stays_open() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    let req = b"GET / HTTP/1.0\r\nHost: a\r\nConnection: keep-alive\r\n\r\n";
    c.send(req);
    let r = c.response();
    assert_eq!(r.status, 200);
    assert!(!r.closes(), "{r:?}");
    c.send(req);
    assert_eq!(c.response().status, 200);
    drop(c);
    srv.finish();
}

/// 47d: HTTP/1.1 persists by default.
#[test]
fn e47d_http_1_1_keeps_alive_by_default() {
    let srv = TestServer::start();
    keep_row(&srv, GET_X, 200, Some(b"x"));
    srv.finish();
}

/// 47e: `Expect: 100-continue`: the client waits for `100 Continue`, then sends the body.
#[test]
fn e47e_expect_100_continue_then_body() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
    let interim = c.response();
    assert_eq!(interim.status_line, "HTTP/1.1 100 Continue");
    c.send(b"hello");
    let r = c.response();
    assert_eq!((r.status, r.body.as_slice()), (200, &b"hello"[..]));
    assert!(!r.closes());
    c.send(GET);
    assert_eq!(c.response().status, 200);
    drop(c);
    srv.finish();
}

/// 47e: the body already arrived with the head: a 100 may be sent or omitted (RFC 9110
/// §10.1.1), but exactly one final response follows, and the next request is answered.
#[test]
fn e47e_expect_100_continue_with_body_already_sent() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(
        b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello",
    );
    let mut r = c.response();
    if r.status == 100 {
        r = c.response();
    }
    assert_eq!((r.status, r.body.as_slice()), (200, &b"hello"[..]), "{r:?}");
    c.send(GET_X);
    let next = c.response();
    assert_eq!(
        (next.status, next.body.as_slice()),
        (200, &b"x"[..]),
        "{next:?}"
    );
    drop(c);
    srv.finish();
}

/// 47e: a declared body over the limit gets 413 at once, without `100 Continue`, and closes.
#[test]
fn e47e_expect_100_continue_over_limit_413_without_100() {
    let srv = TestServer::start();
    lone_error_row(
        &srv,
        b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000\r\nExpect: 100-continue\r\n\r\n",
        &[413],
    );
    srv.finish();
}

/// 47e: never a 1xx to an HTTP/1.0 client (RFC 9110 §15.2): Expect is ignored.
#[test]
fn e47e_expect_on_http_1_0_gets_no_100() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    // The server reads the head alone, so a wrong 100 would go out before the body is sent.
    srv.send_read(
        &mut c,
        b"POST /echo HTTP/1.0\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n",
    );
    c.send(b"hello");
    let r = c.response();
    assert_eq!((r.status, r.body.as_slice()), (200, &b"hello"[..]), "{r:?}");
    drop(c);
    srv.finish();
}

/// 47e: an unknown expectation: 417, or ignored (200).
#[test]
fn e47e_unknown_expectation_417_or_ignored() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: foo\r\n\r\nhello");
    let r = c.response();
    assert_status(&r, &[200, 417]);
    drop(c);
    srv.finish();
}

/// 47f: HEAD on the JSON API: the same fields as GET (Content-Length included), no body.
#[test]
fn e47f_head_on_json_same_fields_no_body() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(GET_JSON);
    let get = c.response();
    c.send(b"HEAD /json HTTP/1.1\r\nHost: a\r\n\r\n");
    let head = c.head_response();
    assert_head_fields_match_get(&head, &get);
    assert_eq!(
        head.header("content-length"),
        Some(get.body.len().to_string().as_str())
    );
    // No body bytes: the next response parses from the first byte after the head.
    c.send(GET_X);
    let next = c.response();
    assert_eq!((next.status, next.body.as_slice()), (200, &b"x"[..]));
    drop(c);
    srv.finish();
}

/// What arrived before the server closed a connection the test kept feeding.
enum Ended {
    /// The server answered (then closed); the response and what followed it.
    Answered(Resp, Vec<u8>),
    /// Closed without a byte.
    Silently,
}

/// Sends `bytes` one at a time, `every` apart, until the server closes (or `deadline`
/// passes: panic). Returns what the server sent.
fn feed_until_closed(c: &mut Client, bytes: &[u8], every: Duration, deadline: Instant) -> Ended {
    c.stream.set_read_timeout(Some(every)).unwrap();
    let mut got = Vec::new();
    let mut i = 0;
    loop {
        assert!(
            Instant::now() < deadline,
            "server never closed a trickling client"
        );
        if i < bytes.len() && c.try_send(&bytes[i..i + 1]).is_ok() {
            i += 1;
        }
        let mut buf = [0u8; 4096];
        match std::io::Read::read(&mut c.stream, &mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(_) => {} // the read timed out: send the next byte
        }
    }
    if got.is_empty() {
        return Ended::Silently;
    }
    parse_all(got)
}

/// Parses one response out of raw bytes (the rest is returned).
fn parse_all(bytes: Vec<u8>) -> Ended {
    let end = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response head");
    let text = String::from_utf8_lossy(&bytes[..end]).into_owned();
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap().to_owned();
    let headers: Vec<(String, String)> = lines
        .map(|l| {
            let (n, v) = l.split_once(':').unwrap_or((l, ""));
            (n.to_owned(), v.trim().to_owned())
        })
        .collect();
    let status = status_line[9..12].parse().unwrap();
    let r = Resp {
        status_line,
        status,
        headers,
        body: Vec::new(),
    };
    let len: usize = r.header("content-length").map_or(0, |v| v.parse().unwrap());
    let rest = bytes[end + 4 + len..].to_vec();
    Ended::Answered(r, rest)
}

/// 47g: slowloris. One header byte every 200 ms, forever: the header timeout counts from the
/// first byte, so the server answers 408 (or closes silently) even though bytes keep coming.
#[test]
fn e47g_slowloris_closed_by_absolute_header_timeout() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    let mut bytes = b"GET / HTTP/1.1\r\nHost: a\r\nX-Slow: ".to_vec();
    bytes.extend(std::iter::repeat_n(b'z', 1000));
    // If every byte reset the timer the connection would live forever; BOUND is 3 × timeout.
    match feed_until_closed(
        &mut c,
        &bytes,
        Duration::from_millis(200),
        Instant::now() + BOUND,
    ) {
        Ended::Answered(r, rest) => {
            assert_status(&r, &[408]);
            assert!(r.closes(), "{r:?}");
            assert!(rest.is_empty());
        }
        Ended::Silently => {}
    }
    drop(c);
    srv.finish();
}

/// 47h: a slow body (1 byte per 2 s, body idle timeout 1 s): 408 and close.
#[test]
fn e47h_slow_body_408() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n");
    let body = [b'b'; 100];
    match feed_until_closed(
        &mut c,
        &body,
        Duration::from_secs(2),
        Instant::now() + 2 * BOUND,
    ) {
        Ended::Answered(r, rest) => {
            assert_status(&r, &[408]);
            assert!(r.closes(), "{r:?}");
            assert!(rest.is_empty());
        }
        Ended::Silently => panic!("a request with a pending body must get 408, not a silent close"),
    }
    drop(c);
    srv.finish();
}

/// 47i: an idle keep-alive connection is closed after the keep-alive timeout without a byte
/// (no 408 on a connection with no request pending).
#[test]
fn e47i_idle_keep_alive_closed_silently() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(GET);
    assert_eq!(c.response().status, 200);
    let rest = c.expect_eof();
    assert!(
        rest.is_empty(),
        "bytes on an idle close: {:?}",
        String::from_utf8_lossy(&rest)
    );
    srv.finish();
}

/// 47i: a connection that never sent a byte is closed silently too.
#[test]
fn e47i_connection_without_request_closed_silently() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    let rest = c.expect_eof();
    assert!(
        rest.is_empty(),
        "bytes to a silent client: {:?}",
        String::from_utf8_lossy(&rest)
    );
    srv.finish();
}

/// 47k: RSTs (SO_LINGER 0) mid request-line, mid headers and mid body: the server survives
/// and releases every fd.
#[test]
fn e47k_resets_at_every_request_stage() {
    let srv = TestServer::start();
    let stages: [&[u8]; 4] = [
        b"GET /som",
        b"GET / HTTP/1.1\r\nHost: a\r\nX-Part",
        b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\nhalf",
        b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
    ];
    for stage in stages {
        srv.wait_idle();
        let mut c = srv.connect();
        // The reset must come after the server has read the stage, not instead of it.
        srv.send_read(&mut c, stage);
        reset(c.stream);
    }
    srv.finish();
}

/// 47k: a RST while the server still has responses to write (1000 pipelined requests, none
/// read): no crash, no leak.
#[test]
fn e47k_reset_mid_response() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    let batch: Vec<u8> = std::iter::repeat_n(GET_JSON, 1000)
        .flatten()
        .copied()
        .collect();
    c.send(&batch);
    srv.wait_for("the server to answer a request", |m| m.requests > 0);
    reset(c.stream);
    srv.finish();
}

/// 47k: HttpArena's limited-conn client: ten keep-alive requests, each answered, then a RST.
/// The server counts exactly one reset per connection and releases every fd (the epoll
/// backend closes on `EPOLLERR` without reading the error).
#[test]
fn e47k_reset_after_answered_requests_counts_one_reset() {
    let srv = TestServer::start();
    let before = srv.metrics().resets;
    for _ in 0..3 {
        let mut c = srv.connect();
        for _ in 0..10 {
            c.send(GET_JSON);
            assert_eq!(c.response().status, 200);
        }
        reset(c.stream);
    }
    srv.wait_for("three resets", |m| {
        m.resets >= before + 3 && m.open_conns == 0
    });
    assert_eq!(srv.metrics().resets, before + 3);
    srv.finish();
}

/// 47k: a RST right after a complete request, before its response is read.
#[test]
fn e47k_reset_after_complete_request() {
    let srv = TestServer::start();
    for _ in 0..20 {
        let mut c = srv.connect();
        c.send(GET_JSON);
        reset(c.stream);
    }
    srv.finish();
}

/// 47l: half-close after a full request: the full response still arrives, then EOF.
#[test]
fn e47l_half_close_after_request_still_answered() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello");
    c.shutdown_write();
    let r = c.response();
    assert_eq!((r.status, r.body.as_slice()), (200, &b"hello"[..]));
    assert!(c.expect_eof().is_empty());
    srv.finish();
}

/// 47l: half-close after three pipelined requests: all three answered, in order.
#[test]
fn e47l_half_close_after_pipelined_batch() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(&[GET, GET_X, GET].concat());
    c.shutdown_write();
    let rs: Vec<Resp> = (0..3).map(|_| c.response()).collect();
    let want = [(200, "root"), (200, "x"), (200, "root")].map(|(s, b)| (s, b.to_owned()));
    assert_eq!(bodies(&rs), want);
    assert!(c.expect_eof().is_empty());
    srv.finish();
}

/// 47m: a flood of MAX_CONNS + 50 idle sockets: an existing keep-alive client is still
/// served, and once the flood is gone a new client is served.
#[test]
fn e47m_flood_past_max_conns() {
    let srv = TestServer::start();
    let mut keeper = srv.connect();
    keeper.send(GET);
    assert_eq!(keeper.response().status, 200);
    let flood: Vec<std::net::TcpStream> = (0..MAX_CONNS + 50)
        .filter_map(|_| std::net::TcpStream::connect_timeout(&srv.addr, BOUND).ok())
        .collect();
    keeper.send(GET_X);
    let r = keeper.response();
    assert_eq!(
        (r.status, r.body.as_slice()),
        (200, &b"x"[..]),
        "existing client starved by the flood"
    );
    drop(flood);
    drop(keeper);
    let mut fresh = srv.connect();
    fresh.send(GET);
    assert_eq!(fresh.response().status, 200, "new client after the flood");
    drop(fresh);
    srv.finish();
}

/// 47n: an HTTP/2 prior-knowledge preface on a plain port, and nothing after it: the port
/// speaks h2c too, so the server's HTTP/2 preface (a SETTINGS frame) comes back, never an
/// HTTP/1.1 response, and the connection closes at the header timeout.
#[test]
fn e47n_http2_preface() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    let got = c.expect_eof();
    assert_eq!(got.get(3), Some(&4), "a SETTINGS frame first: {got:?}");
    assert!(!got.starts_with(b"HTTP/"), "{got:?}");
    srv.finish();
}

/// 47n: a TLS ClientHello on the plain-text port: 400 or close, promptly.
#[test]
fn e47n_tls_client_hello() {
    let srv = TestServer::start();
    let mut hello = vec![
        0x16, 0x03, 0x01, 0x00, 0xc4, 0x01, 0x00, 0x00, 0xc0, 0x03, 0x03,
    ];
    hello.extend((0..32).map(|i| i as u8)); // client random
    hello.extend_from_slice(&[0x00, 0x00, 0x04, 0x13, 0x01, 0x13, 0x02, 0x01, 0x00]);
    hello.extend(std::iter::repeat_n(0u8, 150));
    let mut c = srv.connect();
    c.send(&hello);
    match c.try_response(false) {
        Ok(r) => assert_error_then_close(&mut c, &r, &[400]),
        Err(NoResponse::Closed(_)) => {}
        Err(NoResponse::TimedOut(b)) => panic!("TLS hello neither answered nor closed: {b:?}"),
    }
    srv.finish();
}

/// 47n: 4 KiB of pseudo-random binary: 400 or close, promptly.
#[test]
fn e47n_random_binary() {
    let srv = TestServer::start();
    let mut x: u32 = 0x1234_5678;
    let noise: Vec<u8> = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    let mut c = srv.connect();
    let _ = c.try_send(&noise);
    match c.try_response(false) {
        Ok(r) => assert_error_then_close(&mut c, &r, &[400, 414, 431, 501]),
        Err(NoResponse::Closed(_)) => {}
        Err(NoResponse::TimedOut(b)) => panic!("noise neither answered nor closed: {b:?}"),
    }
    srv.finish();
}

/// 47n: connect and close without a byte, many times.
#[test]
fn e47n_connect_and_close_without_bytes() {
    let srv = TestServer::start();
    for _ in 0..50 {
        drop(srv.connect());
    }
    srv.finish();
}

fn api_request(content_type: &str, body: &[u8]) -> Vec<u8> {
    let head = format!(
        "POST /api HTTP/1.1\r\nHost: a\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    [head.as_bytes(), body].concat()
}

/// 47q: invalid JSON: 400 from the handler; the connection stays usable (not a framing error).
#[test]
fn e47q_invalid_json_400() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(&api_request("application/json", b"{\"a\":"));
    assert_status(&c.response(), &[400]);
    drop(c);
    srv.finish();
}

/// 47q: 10 000-deep nesting: 400 from the parser's depth limit, no stack overflow.
#[test]
fn e47q_deep_nesting_400_no_stack_overflow() {
    let srv = TestServer::start();
    let body = [vec![b'['; 10_000], vec![b']'; 10_000]].concat();
    let mut c = srv.connect();
    c.send(&api_request("application/json", &body));
    assert_status(&c.response(), &[400]);
    drop(c);
    srv.finish();
}

/// 47q: wrong Content-Type: 415 by this API's design.
#[test]
fn e47q_wrong_content_type_415() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(&api_request("text/plain", b"{}"));
    assert_status(&c.response(), &[415]);
    drop(c);
    srv.finish();
}

/// A JSON string body of exactly `len` bytes.
fn json_of_len(len: usize) -> Vec<u8> {
    [&b"\""[..], &vec![b'j'; len - 2], b"\""].concat()
}

/// 47q: a body exactly at the limit is accepted.
#[test]
fn e47q_body_at_limit_200() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(&api_request("application/json", &json_of_len(BODY_LIMIT)));
    assert_status(&c.response(), &[200]);
    drop(c);
    srv.finish();
}

/// 47q: one byte over the limit: 413 and close.
#[test]
fn e47q_body_over_limit_413() {
    let srv = TestServer::start();
    big_error_row(
        &srv,
        &api_request("application/json", &json_of_len(BODY_LIMIT + 1)),
        &[413],
    );
    srv.finish();
}

/// 47a, deep: 30 000 pipelined requests (~4.5 MB of responses) written before any response
/// is read, to a client with a 4 KiB receive window: the server's output passes its high-water
/// mark, it stops reading (backpressure), and resumes as the client reads; every response
/// arrives, in order.
#[test]
fn e47a_deep_pipeline_through_backpressure() {
    let srv = TestServer::start();
    let mut c = Client::from_stream(small_window_client(&srv));
    let n = 30_000;
    let batch: Vec<u8> = (0..n)
        .flat_map(|i| if i % 2 == 0 { GET_JSON } else { GET_X })
        .copied()
        .collect();
    let writer = {
        let mut s = c.stream.try_clone().unwrap();
        std::thread::spawn(move || std::io::Write::write_all(&mut s, &batch))
    };
    // A sleep that is the behaviour under test, not a synchronization: the client reads
    // nothing for a while, so the server's output can pass its high-water mark. The engine
    // counts no backpressure pause to wait on instead; every response must arrive either way.
    std::thread::sleep(Duration::from_millis(200));
    for i in 0..n {
        let r = c.response();
        let want: &[u8] = if i % 2 == 0 {
            br#"{"message":"Hello, World!"}"#
        } else {
            b"x"
        };
        assert_eq!((r.status, r.body.as_slice()), (200, want), "response {i}");
    }
    writer.join().unwrap().unwrap();
    drop(c);
    srv.finish();
}

/// 47j without files: a client that pipelines 30 000 requests and never reads. Once the
/// responses fill both socket buffers, nothing progresses; the server must close after its
/// send timeout instead of holding the connection (and its buffers) forever.
#[test]
fn e47j_reader_that_never_reads_closed_after_send_timeout() {
    let srv = TestServer::start();
    let mut c = Client::from_stream(small_window_client(&srv));
    let n = 30_000;
    let batch: Vec<u8> = std::iter::repeat_n(GET_JSON, n)
        .flatten()
        .copied()
        .collect();
    let writer = {
        let mut s = c.stream.try_clone().unwrap();
        // Fails once the server closes: that is the expected outcome.
        std::thread::spawn(move || std::io::Write::write_all(&mut s, &batch))
    };
    srv.wait_for("the send timeout", |m| m.timeouts[SEND_TIMEOUT] > 0);
    let rest = c.expect_eof();
    let answered = rest.windows(12).filter(|w| w == b"HTTP/1.1 200").count();
    assert!(
        answered < n,
        "all {n} responses arrived: the reader was not stalled"
    );
    let _ = writer.join();
    drop(c);
    srv.finish();
}
