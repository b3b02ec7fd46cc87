//! Unit tests of the connection state machine: bytes in, bytes out, on a fake clock.

use super::*;
use crate::metrics::ServerMetrics;
use crate::pool::Pool;
use crate::response::Response;
use crate::router::Router;
use std::sync::Arc;
use twelve_http::{Limits, Request};

/// A context whose router also has the `/metrics` route, registered as the server does.
pub(crate) fn ctx_with(limits: Limits, router: Router) -> Ctx {
    let all_metrics = Arc::new(ServerMetrics::new(&[0], 1));
    let router = crate::metrics_route::add_metrics_route(router, "/metrics", &all_metrics);
    Ctx {
        router: Arc::new(router),
        limits,
        timeouts: TimeoutsMs {
            header: 1_000,
            body: 1_000,
            keep_alive: 5_000,
            send: 3_000,
            linger: 2_000,
            body_min_rate_per_s: 500,
        },
        all_metrics,
        me: 0,
        draining: false,
        high_water: 64 * 1024,
        pool: Pool::new(16 * 1024, 64),
        scratch: crate::response::Scratch::default(),
        conn_token: 0,
        handler_timeout_ms: 0,
    }
}

pub(crate) fn test_router() -> Router {
    Router::new()
        .get(
            "/",
            |_: &Request<'_, '_>, _: &[u8], r: &mut Response<'_>| {
                r.send(200, "text/plain", &[], b"root")
            },
        )
        .post(
            "/echo",
            |_: &Request<'_, '_>, b: &[u8], r: &mut Response<'_>| {
                r.send(200, "application/octet-stream", &[], b)
            },
        )
}

pub(crate) fn ctx() -> Ctx {
    ctx_with(Limits::default(), test_router())
}

/// Feeds `input` in pieces of the given sizes, collecting everything the connection wants
/// sent (as if every send succeeded in full).
pub(crate) fn feed(conn: &mut Conn, ctx: &mut Ctx, input: &[u8], now: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let buf = conn.read_buf(ctx).expect("reading");
    buf.extend_from_slice(input);
    conn.on_read(input.len(), now, ctx);
    flush(conn, ctx, now, &mut out);
    out
}

pub(crate) fn flush(conn: &mut Conn, ctx: &mut Ctx, now: u64, out: &mut Vec<u8>) {
    loop {
        while let Output::Bytes(b) = conn.output() {
            out.extend_from_slice(b);
            let n = b.len();
            conn.on_sent(n, now, ctx);
        }
        if !conn.after_flush(now, ctx) {
            break;
        }
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn statuses(out: &[u8]) -> Vec<u16> {
    let s = text(out);
    s.match_indices("HTTP/1.1 ")
        .map(|(i, _)| s[i + 9..i + 12].parse().unwrap())
        .collect()
}

const GET: &str = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";

#[test]
fn one_get_is_answered_and_the_connection_kept() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let out = feed(&mut c, &mut x, GET.as_bytes(), 0);
    assert_eq!(statuses(&out), [200]);
    assert!(text(&out).ends_with("\r\n\r\nroot"));
    assert_eq!(c.next(), Next::Wait);
    assert_eq!(c.phase(), Phase::Idle);
}

#[test]
fn idle_connection_holds_no_buffer() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    feed(&mut c, &mut x, GET.as_bytes(), 0);
    c.drained(&mut x);
    assert_eq!(c.heap_bytes(), 0);
}

/// Regression: a client preface cut after its HTTP/1.1-looking first line ("PRI * HTTP/2.0")
/// was parsed as HTTP/1.1 by the flush that follows a read, and refused (RFC 9113 §3.3).
#[test]
fn an_h2c_preface_split_anywhere_starts_http2() {
    let mut input = twelve_http::h2::PREFACE.to_vec();
    twelve_http::h2::encode_settings(&mut input, false, &[]);
    for cut in 1..input.len() {
        let (mut c, mut x) = (Conn::new(0), ctx());
        let mut out = feed(&mut c, &mut x, &input[..cut], 0);
        out.extend(feed(&mut c, &mut x, &input[cut..], 1));
        assert!(c.is_h2(), "split at {cut}: {}", text(&out));
        // The server's SETTINGS (type 4 on stream 0) comes first, never an HTTP/1.1 reply.
        assert_eq!(out.get(3), Some(&4), "split at {cut}: {}", text(&out));
    }
}

fn split_everywhere(input: &str, want: &[u16], closes: bool) {
    let input = input.as_bytes();
    for cut in 1..input.len() {
        let (mut c, mut x) = (Conn::new(0), ctx());
        let mut out = feed(&mut c, &mut x, &input[..cut], 0);
        if c.read_buf(&mut x).is_some() {
            out.extend(feed(&mut c, &mut x, &input[cut..], 1));
        }
        assert_eq!(statuses(&out), want, "split at {cut}: {}", text(&out));
        let next = if closes {
            Next::ShutdownWrite
        } else {
            Next::Wait
        };
        assert_eq!(c.next(), next, "split at {cut}");
    }
}

macro_rules! split {
    ($($name:ident: $input:expr => $want:expr, $closes:expr;)*) => {$(
        #[test]
        fn $name() {
            split_everywhere(&$input, &$want, $closes);
        }
    )*};
}

split! {
    pipelined_three_gets_split_at_every_byte: GET.repeat(3) => [200, 200, 200], false;
    post_then_get_split_at_every_byte:
        format!("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello{GET}") => [200, 200], false;
    chunked_then_get_split_at_every_byte:
        format!("POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nA;ext=1\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n{GET}") => [200, 200], false;
    two_chunked_then_get_split_at_every_byte:
        format!("POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\nPOST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nxyz\r\n0\r\n\r\n{GET}") => [200, 200, 200], false;
    bad_chunk_size_split_at_every_byte:
        format!("POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n{GET}") => [400], true;
    close_stops_the_pipeline_at_every_split:
        format!("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n{GET}") => [200], true;
    error_stops_the_pipeline_at_every_split: format!("GET / HTTP/1.1\r\nHost a\r\n\r\n{GET}") => [400], true;
}

#[test]
fn chunked_body_is_decoded_for_the_handler() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let out = feed(
        &mut c,
        &mut x,
        b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3\r\nabc\r\n0\r\n\r\n",
        0,
    );
    assert!(
        text(&out).ends_with("Content-Length: 8\r\n\r\nhelloabc"),
        "{}",
        text(&out)
    );
}

/// Chunked bodies that arrive whole with their heads are answered from the worker's one
/// buffer, each with its own data, and leave no body state on the connection.
#[test]
fn pipelined_chunked_bodies_each_reach_the_handler() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let post = |body: &str| {
        format!(
            "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n{body}0\r\n\r\n"
        )
    };
    let input = [
        post("2\r\nab\r\n"),
        post(""),
        post("3\r\nxyz\r\n1\r\n!\r\n"),
    ]
    .concat();
    let out = text(&feed(&mut c, &mut x, input.as_bytes(), 0));
    let bodies: Vec<&str> = out
        .split("HTTP/1.1 200 OK")
        .skip(1)
        .map(|r| r.split("\r\n\r\n").nth(1).unwrap_or("?"))
        .collect();
    assert_eq!(bodies, ["ab", "", "xyz!"], "{out}");
    c.drained(&mut x);
    assert_eq!(c.heap_bytes(), 0);
}

#[test]
fn content_length_body_reaches_the_handler() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let out = feed(
        &mut c,
        &mut x,
        b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 0005\r\n\r\nhello",
        0,
    );
    assert!(text(&out).ends_with("\r\n\r\nhello"), "{}", text(&out));
}

#[test]
fn http10_without_keep_alive_closes() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let out = feed(&mut c, &mut x, b"GET / HTTP/1.0\r\n\r\n", 0);
    assert!(text(&out).contains("Connection: close\r\n"));
    // Consumed whole, nothing behind it: a plain close, no lingering.
    assert_eq!(c.next(), Next::Close);
}

/// A close the server decides on a connection the client meant to keep lingers: a pipelining
/// client may have requests on the way. The same request with `Connection: close` does not.
#[test]
fn a_close_the_server_decides_lingers() {
    for (request, want) in [
        (GET, Next::ShutdownWrite),
        (
            "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
            Next::Close,
        ),
    ] {
        let (mut c, mut x) = (Conn::new(0), ctx());
        x.draining = true;
        let out = feed(&mut c, &mut x, request.as_bytes(), 0);
        assert!(text(&out).contains("Connection: close\r\n"), "{request:?}");
        assert_eq!(c.next(), want, "{request:?}");
    }
}

/// Whether a close lingers: only when more input may follow the response.
#[test]
fn a_close_lingers_only_when_input_may_follow() {
    let cases: [(&str, &[u8], bool, Next); 5] = [
        (
            "clean close",
            b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
            false,
            Next::Close,
        ),
        (
            "pipelined behind",
            b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGET / HTTP/1.1\r\n",
            false,
            Next::ShutdownWrite,
        ),
        (
            "socket not read dry",
            b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
            true,
            Next::ShutdownWrite,
        ),
        (
            "bad request",
            b"GET / HTTP/1.1\nHost: a\n\n",
            false,
            Next::ShutdownWrite,
        ),
        (
            "body over the limit",
            b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999\r\n\r\n",
            false,
            Next::ShutdownWrite,
        ),
    ];
    for (name, input, unread, want) in cases {
        let (mut c, mut x) = (Conn::new(0), ctx());
        feed(&mut c, &mut x, input, 0);
        c.unread = unread;
        assert_eq!(c.next(), want, "{name}");
    }
}

#[test]
fn http10_with_keep_alive_stays_open() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let out = feed(
        &mut c,
        &mut x,
        b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
        0,
    );
    assert!(text(&out).contains("Connection: keep-alive\r\n"));
    assert_eq!(c.next(), Next::Wait);
}

#[test]
fn expect_continue_gets_100_before_the_body() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let head =
        b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n";
    let out = feed(&mut c, &mut x, head, 0);
    assert_eq!(text(&out), "HTTP/1.1 100 Continue\r\n\r\n");
    let out = feed(&mut c, &mut x, b"hello", 1);
    assert_eq!(statuses(&out), [200]);
    assert!(!text(&out).contains("100 Continue"));
}

#[test]
fn expect_continue_with_the_body_already_sent_gets_no_100() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let req =
        b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello";
    let out = feed(&mut c, &mut x, req, 0);
    assert_eq!(statuses(&out), [200]);
}

#[test]
fn expect_continue_over_the_body_limit_gets_413_without_100() {
    let limits = Limits {
        body_bytes: 4,
        ..Limits::default()
    };
    let (mut c, mut x) = (Conn::new(0), ctx_with(limits, test_router()));
    let req =
        b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n";
    let out = feed(&mut c, &mut x, req, 0);
    assert_eq!(statuses(&out), [413]);
    assert_eq!(c.next(), Next::ShutdownWrite);
}

#[test]
fn expect_continue_on_http10_is_ignored() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let req = b"POST /echo HTTP/1.0\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n";
    assert!(feed(&mut c, &mut x, req, 0).is_empty());
}

#[test]
fn head_has_the_get_length_and_no_body() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let out = feed(&mut c, &mut x, b"HEAD / HTTP/1.1\r\nHost: a\r\n\r\n", 0);
    assert!(
        text(&out).ends_with("Content-Length: 4\r\n\r\n"),
        "{}",
        text(&out)
    );
}

#[test]
fn header_timeout_counts_from_the_first_byte() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    feed(&mut c, &mut x, b"GET / HT", 100);
    feed(&mut c, &mut x, b"TP/1.1\r\n", 900);
    let t = x.timeouts;
    assert_eq!(c.deadline(&t), Some((1_100, TimeoutKind::Header)));
    c.on_timeout(TimeoutKind::Header, &mut x);
    let mut out = Vec::new();
    flush(&mut c, &mut x, 1_100, &mut out);
    assert_eq!(statuses(&out), [408]);
    assert!(text(&out).contains("Connection: close\r\n"));
    assert_eq!(c.next(), Next::ShutdownWrite);
}

#[test]
fn body_timeout_restarts_on_progress() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    // The idle part alone (the minimum rate has tests of its own).
    x.timeouts.body_min_rate_per_s = 0;
    feed(
        &mut c,
        &mut x,
        b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 9\r\n\r\nab",
        0,
    );
    feed(&mut c, &mut x, b"cd", 700);
    assert_eq!(c.deadline(&x.timeouts), Some((1_700, TimeoutKind::Body)));
}

/// A body trickled one byte per idle timeout never expires the idle timer; the minimum rate
/// ends it (ctx's timeouts: body idle 1 s, min rate 500 B/s).
#[test]
fn a_trickled_body_hits_the_whole_body_deadline() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    feed(
        &mut c,
        &mut x,
        b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 99\r\n\r\n",
        0,
    );
    // 1 byte every 900 ms: the idle deadline keeps moving, the whole-body one barely.
    for i in 1..=3u64 {
        feed(&mut c, &mut x, b"a", i * 900);
    }
    assert_eq!(
        c.deadline(&x.timeouts),
        Some((1_006, TimeoutKind::BodyRate))
    );
    c.on_timeout(TimeoutKind::BodyRate, &mut x);
    let mut out = Vec::new();
    flush(&mut c, &mut x, 1_006, &mut out);
    assert_eq!(statuses(&out), [408]);
    assert_eq!(
        x.metrics().timeouts[TimeoutKind::BodyRate as usize].get(),
        1
    );
}

#[test]
fn a_body_at_the_minimum_rate_keeps_its_idle_deadline() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    feed(
        &mut c,
        &mut x,
        b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 9999\r\n\r\n",
        0,
    );
    // 1000 bytes at 900 ms earn 2 s: the whole-body deadline (3 s) is past the idle one.
    feed(&mut c, &mut x, &[b'a'; 1000], 900);
    assert_eq!(c.deadline(&x.timeouts), Some((1_900, TimeoutKind::Body)));
}

#[test]
fn idle_timeout_closes_silently() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    feed(&mut c, &mut x, GET.as_bytes(), 10);
    assert_eq!(
        c.deadline(&x.timeouts),
        Some((5_010, TimeoutKind::KeepAlive))
    );
    c.on_timeout(TimeoutKind::KeepAlive, &mut x);
    assert!(matches!(c.output(), Output::Nothing));
    assert_eq!(c.next(), Next::Close);
}

#[test]
fn a_new_connection_that_sends_nothing_closes_silently_after_the_header_timeout() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    assert_eq!(
        c.deadline(&x.timeouts),
        Some((1_000, TimeoutKind::KeepAlive))
    );
    c.on_timeout(TimeoutKind::KeepAlive, &mut x);
    assert_eq!(c.next(), Next::Close);
}

#[test]
fn pending_output_arms_the_send_timeout() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    c.read_buf(&mut x)
        .unwrap()
        .extend_from_slice(GET.as_bytes());
    c.on_read(GET.len(), 50, &mut x);
    assert_eq!(c.deadline(&x.timeouts), Some((3_000, TimeoutKind::Send)));
    c.on_timeout(TimeoutKind::Send, &mut x);
    assert_eq!(c.next(), Next::Close);
}

#[test]
fn half_close_after_a_full_request_still_answers() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let out = feed(&mut c, &mut x, GET.as_bytes(), 0);
    c.on_eof(&mut x);
    assert_eq!(statuses(&out), [200]);
    assert_eq!(c.next(), Next::Close);
}

#[test]
fn eof_mid_request_closes_without_an_answer() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let out = feed(
        &mut c,
        &mut x,
        b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabcd",
        0,
    );
    c.on_eof(&mut x);
    assert!(out.is_empty());
    assert_eq!(c.next(), Next::Close);
}

#[test]
fn lingering_discards_input_until_eof() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    feed(
        &mut c,
        &mut x,
        b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
        0,
    );
    c.write_shut(5, &mut x);
    assert_eq!(c.deadline(&x.timeouts), Some((2_005, TimeoutKind::Linger)));
    assert!(feed(&mut c, &mut x, GET.as_bytes(), 6).is_empty());
    c.on_eof(&mut x);
    assert_eq!(c.next(), Next::Close);
}

#[test]
fn output_above_the_high_water_mark_stops_reading() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    x.high_water = 10;
    let input = GET.repeat(3);
    c.read_buf(&mut x)
        .unwrap()
        .extend_from_slice(input.as_bytes());
    c.on_read(input.len(), 0, &mut x);
    // One response is over the mark: the other two wait, and so does the socket.
    assert!(c.read_buf(&mut x).is_none());
    let mut out = Vec::new();
    flush(&mut c, &mut x, 0, &mut out);
    assert_eq!(statuses(&out), [200, 200, 200]);
    assert!(c.read_buf(&mut x).is_some());
}

#[test]
fn draining_closes_every_response() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    x.draining = true;
    let out = feed(&mut c, &mut x, GET.repeat(2).as_bytes(), 0);
    assert_eq!(statuses(&out), [200]);
    assert!(text(&out).contains("Connection: close\r\n"));
}

#[test]
fn drain_closes_idle_connections_at_once() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    feed(&mut c, &mut x, GET.as_bytes(), 0);
    c.start_drain();
    assert_eq!(c.next(), Next::Close);
}

#[test]
fn metrics_path_answers_prometheus_text() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let out = feed(
        &mut c,
        &mut x,
        b"GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n",
        0,
    );
    assert!(
        text(&out).contains("twelve_requests_total 1\n"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_handler_that_writes_nothing_gets_500_and_close() {
    let router = Router::new().get(
        "/",
        |_: &Request<'_, '_>, _: &[u8], _: &mut Response<'_>| {},
    );
    let (mut c, mut x) = (Conn::new(0), ctx_with(Limits::default(), router));
    let out = feed(&mut c, &mut x, GET.as_bytes(), 0);
    assert_eq!(statuses(&out), [500]);
    // The server closed a connection the client meant to keep: linger.
    assert_eq!(c.next(), Next::ShutdownWrite);
}

#[test]
fn parse_errors_are_counted_by_kind() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    feed(&mut c, &mut x, b"GET / HTTP/1.1\nHost: a\n\n", 0);
    assert_eq!(
        x.metrics()
            .parse_errors
            .iter()
            .map(|c| c.get())
            .sum::<u64>(),
        1
    );
}

fn with_headers(n: usize) -> String {
    let mut r = String::from("GET / HTTP/1.1\r\nHost: a\r\n");
    for i in 1..n {
        r.push_str(&format!("X-{i}: v\r\n"));
    }
    r + "\r\n"
}

#[test]
fn many_headers_take_the_second_parse() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    assert_eq!(
        statuses(&feed(&mut c, &mut x, with_headers(60).as_bytes(), 0)),
        [200]
    );
}

/// The header array of the first parse serves a whole read: a request that needs the second
/// parse in the middle of a batch must not disturb the ones around it.
#[test]
fn many_headers_between_few_in_one_read() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let few = with_headers(3);
    let batch = format!("{few}{}{few}{}{few}", with_headers(60), with_headers(25));
    assert_eq!(
        statuses(&feed(&mut c, &mut x, batch.as_bytes(), 0)),
        [200, 200, 200, 200, 200]
    );
}

#[test]
fn more_headers_than_the_limit_get_431() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    assert_eq!(
        statuses(&feed(&mut c, &mut x, with_headers(101).as_bytes(), 0)),
        [431]
    );
}

#[test]
fn a_limit_below_the_first_array_is_enforced() {
    let limits = Limits {
        headers: 3,
        ..Limits::default()
    };
    let (mut c, mut x) = (Conn::new(0), ctx_with(limits, test_router()));
    assert_eq!(
        statuses(&feed(&mut c, &mut x, with_headers(4).as_bytes(), 0)),
        [431]
    );
}

#[test]
fn a_connection_stays_small() {
    // Idle connections cost this plus a slab slot, a generation and a wheel entry; the
    // measured figure is in tests/idle_memory.rs.
    let size = std::mem::size_of::<Conn>();
    eprintln!("Conn is {size} bytes");
    assert!(size <= 128, "Conn grew to {size} bytes");
}

#[test]
fn a_panicking_handler_gets_500_and_close_and_the_worker_lives() {
    let router = Router::new().get(
        "/",
        |_: &Request<'_, '_>, _: &[u8], _: &mut Response<'_>| {
            panic!("handler bug (expected by this test)")
        },
    );
    let (mut c, mut x) = (Conn::new(0), ctx_with(Limits::default(), router));
    let out = feed(&mut c, &mut x, GET.as_bytes(), 0);
    assert_eq!(statuses(&out), [500]);
    // The server closed a connection the client meant to keep: linger.
    assert_eq!(c.next(), Next::ShutdownWrite);
}

#[test]
fn settled_only_when_a_drive_has_nothing_to_do() {
    let mut c = ctx();
    let mut conn = Conn::new(0);
    assert!(conn.settled(), "a fresh connection waits");
    let first = b"GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HT";
    conn.read_buf(&mut c).unwrap().extend_from_slice(first);
    conn.on_read(first.len(), 1, &mut c);
    assert!(!conn.settled(), "a response is due");
    let mut out = Vec::new();
    flush(&mut conn, &mut c, 1, &mut out);
    assert_eq!(statuses(&out), [200]);
    assert!(!conn.settled(), "a partial head is held");
    let rest = b"TP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
    conn.read_buf(&mut c).unwrap().extend_from_slice(rest);
    conn.on_read(rest.len(), 2, &mut c);
    flush(&mut conn, &mut c, 2, &mut out);
    conn.drained(&mut c);
    assert!(
        !conn.settled(),
        "closing: the drive must shut the write side down"
    );
    let mut idle = Conn::new(0);
    idle.on_eof(&mut c);
    assert!(!idle.settled(), "EOF: the drive must close");
}
