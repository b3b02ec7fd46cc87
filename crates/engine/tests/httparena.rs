//! `apps::httparena` end to end over loopback with raw bytes: every check of HttpArena's
//! scripts/validate.sh for the baseline, limited-conn and pipelined profiles (HttpArena
//! 28606ba), the exact request templates its load generator
//! sends, pipelined batches answered in order, and the answers the app defines for input
//! HttpArena never sends.

mod common;
use common::*;
use twelve_engine::{Request, Response, apps::httparena};

/// HttpArena's `requests/get.raw` (60 bytes).
const GET_RAW: &[u8] = b"GET /baseline11?a=13&b=42 HTTP/1.1\r\nHost: localhost:8080\r\n\r\n";
/// HttpArena's `requests/post_cl.raw` (82 bytes; no newline after the body).
const POST_CL_RAW: &[u8] =
    b"POST /baseline11?a=13&b=42 HTTP/1.1\r\nHost: localhost:8080\r\nContent-Length: 2\r\n\r\n20";
/// HttpArena's `requests/post_chunked.raw` (101 bytes).
const POST_CHUNKED_RAW: &[u8] = b"POST /baseline11?a=13&b=42 HTTP/1.1\r\nHost: localhost:8080\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n20\r\n0\r\n\r\n";
/// What gcannon sends for `http://localhost:8080/pipeline` (48 bytes), 16 per write.
const PIPELINE_RAW: &[u8] = b"GET /pipeline HTTP/1.1\r\nHost: localhost:8080\r\n\r\n";

/// The head validate.sh's fragmentation checks send for a POST, before its body.
const FRAG_POST_HEAD: &str = "POST /baseline11?a=13&b=42 HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\n";

/// The app's router on the harness's test build (no static root), plus the `GET /` "root"
/// that [`TestServer::finish`] checks the server's life with.
fn arena() -> TestServer {
    let mut config = test_config();
    config.root = None;
    let router = httparena::router().get(
        "/",
        |_: &Request<'_, '_>, _: &[u8], res: &mut Response<'_>| {
            res.send(200, "text/plain", &[], b"root")
        },
    );
    TestServer::start_router(config, router)
}

/// Status line (with Date), body, and validate.sh's Content-Type rule: `text/plain`, bare or
/// with parameters.
fn assert_answer(r: &Resp, status: u16, body: &str) {
    assert_status(r, &[status]);
    assert_eq!(String::from_utf8_lossy(&r.body), body, "{r:?}");
    let ctype = r.header("content-type").unwrap_or_default();
    assert!(
        ctype == "text/plain" || ctype.starts_with("text/plain;"),
        "Content-Type {ctype:?}"
    );
}

/// Keep-alive rows: `name: request => status, body;`, each on a fresh server: the answer, then
/// a `GET /` on the same connection (it stayed open and in sync), then fds back to baseline.
macro_rules! rows {
    ($($name:ident: $req:expr => $status:expr, $body:expr;)*) => {$(
        #[test]
        fn $name() {
            let srv = arena();
            let r = keep_row(&srv, $req, $status, None);
            assert_answer(&r, $status, $body);
            srv.finish();
        }
    )*};
}

// ---- validate.sh's checks, in the shapes curl and HttpArena's templates send ----

rows! {
    delay_0_answers_0: b"GET /delay/0 HTTP/1.1\r\nHost: localhost:8080\r\n\r\n" => 200, "0";
    delay_37_answers_37: b"GET /delay/37 HTTP/1.1\r\nHost: localhost:8080\r\n\r\n" => 200, "37";
    delay_5_answers_5: b"GET /delay/5 HTTP/1.1\r\nHost: a\r\n\r\n" => 200, "5";
    delay_not_a_number_400: b"GET /delay/ten HTTP/1.1\r\nHost: a\r\n\r\n" => 400, "400 expected /delay/{ms}, ms a number of milliseconds up to 3600000\n";
    delay_without_ms_400: b"GET /delay/ HTTP/1.1\r\nHost: a\r\n\r\n" => 400, "400 expected /delay/{ms}, ms a number of milliseconds up to 3600000\n";
    template_get: GET_RAW => 200, "55";
    template_post_content_length: POST_CL_RAW => 200, "75";
    template_post_chunked: POST_CHUNKED_RAW => 200, "75";
    template_pipeline: PIPELINE_RAW => 200, "ok";
    curl_get: b"GET /baseline11?a=13&b=42 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n" => 200, "55";
    curl_post_d_20: b"POST /baseline11?a=13&b=42 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n20" => 200, "75";
    curl_post_d_20_chunked: b"POST /baseline11?a=13&b=42 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n20\r\n0\r\n\r\n" => 200, "75";
    curl_pipeline: b"GET /pipeline HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n" => 200, "ok";
    // The anti-cheat draws a and b from 100-999: its corners and a middle.
    random_range_low: b"GET /baseline11?a=100&b=100 HTTP/1.1\r\nHost: a\r\n\r\n" => 200, "200";
    random_range_high: b"GET /baseline11?a=999&b=999 HTTP/1.1\r\nHost: a\r\n\r\n" => 200, "1998";
    random_range_mixed: b"GET /baseline11?a=123&b=876 HTTP/1.1\r\nHost: a\r\n\r\n" => 200, "999";
}

/// validate.sh's cache check: two POSTs with different bodies get their own sums (here on one
/// connection, the harder case for a server that memoised an answer).
#[test]
fn post_bodies_are_never_cached() {
    let srv = arena();
    let mut c = srv.connect();
    for (body, want) in [("185", "240"), ("800", "855"), ("185", "240")] {
        c.send(
            format!(
                "POST /baseline11?a=13&b=42 HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        );
        assert_answer(&c.response(), 200, want);
    }
    drop(c);
    srv.finish();
}

/// Fragmentation rows: `name: [fragments] => body;`. validate.sh sends each fragment with
/// TCP_NODELAY and 30 ms between them; here each is read by the server before the next is
/// sent, which is the split those pauses aim for. Every request says `Connection: close`: one
/// answer, then EOF.
macro_rules! fragment_rows {
    ($($name:ident: [$($frag:expr),+] => $body:expr;)*) => {$(
        #[test]
        fn $name() {
            let srv = arena();
            let frags: &[&str] = &[$($frag),+];
            let (last, first) = frags.split_last().unwrap();
            let mut c = srv.connect();
            for f in first {
                srv.send_read(&mut c, f.as_bytes());
            }
            c.send(last.as_bytes());
            let r = c.response();
            assert_answer(&r, 200, $body);
            assert!(r.closes(), "{r:?}");
            assert!(c.expect_eof().is_empty());
            srv.finish();
        }
    )*};
}

fragment_rows! {
    fragment_inside_request_line: [
        "GET /baseli",
        "ne11?a=13&b=42 HTTP/1.1\r\n",
        "Host: localhost\r\nConnection: close\r\n\r\n"
    ] => "55";
    fragment_each_header_line: [
        "GET /baseline11?a=13&b=42 HTTP/1.1\r\n",
        "Host: localhost\r\n",
        "User-Agent: arena-frag/1.0\r\n",
        "Connection: close\r\n\r\n"
    ] => "55";
    fragment_head_then_body: [FRAG_POST_HEAD, "20"] => "75";
    fragment_body_byte_by_byte: [FRAG_POST_HEAD, "2", "0"] => "75";
    fragment_chunked_body_per_chunk: [
        "POST /baseline11?a=13&b=42 HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        "1\r\n2\r\n",
        "1\r\n0\r\n",
        "0\r\n\r\n"
    ] => "75";
}

// ---- pipelining ----

/// The pipelined profile's first write: 16 requests in one `send`, 16 answers, nothing more,
/// and the connection still serves.
#[test]
fn sixteen_pipelined_in_one_write() {
    let srv = arena();
    let mut c = srv.connect();
    c.send(&PIPELINE_RAW.repeat(16));
    for _ in 0..16 {
        let r = c.response();
        assert_answer(&r, 200, "ok");
        assert!(!r.closes(), "{r:?}");
    }
    assert!(c.pending().is_empty(), "{:?}", c.pending());
    c.send(PIPELINE_RAW);
    assert_answer(&c.response(), 200, "ok");
    drop(c);
    srv.finish();
}

/// Sixteen requests with sixteen different answers in one write come back in request order.
#[test]
fn pipelined_batch_answered_in_order() {
    let srv = arena();
    let mut batch = Vec::new();
    let mut want = Vec::new();
    for i in 0..16 {
        match i % 3 {
            0 => {
                batch.extend_from_slice(
                    format!("GET /baseline11?a={i}&b=1000 HTTP/1.1\r\nHost: a\r\n\r\n").as_bytes(),
                );
                want.push((1000 + i).to_string());
            }
            1 => {
                batch.extend_from_slice(
                    format!("POST /baseline11?a={i}&b=2000 HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\n7").as_bytes(),
                );
                want.push((2007 + i).to_string());
            }
            _ => {
                batch.extend_from_slice(PIPELINE_RAW);
                want.push("ok".to_owned());
            }
        }
    }
    let mut c = srv.connect();
    c.send(&batch);
    for w in &want {
        assert_answer(&c.response(), 200, w);
    }
    drop(c);
    srv.finish();
}

/// The three baseline templates pipelined in one batch, split in two at every byte: a split
/// inside a request line, a header, the Content-Length body or a chunk changes nothing.
#[test]
fn templates_split_at_every_byte() {
    let srv = arena();
    let batch = [GET_RAW, POST_CL_RAW, POST_CHUNKED_RAW].concat();
    split_at_every_byte(&srv, &batch, 3, |rs| {
        for (r, want) in rs.iter().zip(["55", "75", "75"]) {
            assert_answer(r, 200, want);
        }
    });
    srv.finish();
}

/// limited-conn: ten requests on a connection (the templates in turn), then the client resets
/// it (SO_LINGER 0) and reconnects; the server never closes first and the next connection is
/// served.
#[test]
fn limited_conn_ten_then_reset() {
    let srv = arena();
    let templates = [
        (GET_RAW, "55"),
        (POST_CL_RAW, "75"),
        (POST_CHUNKED_RAW, "75"),
    ];
    for conn in 0..3 {
        let mut c = srv.connect();
        for i in 0..10 {
            let (req, want) = templates[(conn + i) % 3];
            c.send(req);
            let r = c.response();
            assert_answer(&r, 200, want);
            assert!(!r.closes(), "{r:?}");
        }
        reset(c.stream);
    }
    srv.finish();
}

// ---- what HttpArena never sends: the app's own answers ----

rows! {
    missing_a_400: b"GET /baseline11?b=42 HTTP/1.1\r\nHost: a\r\n\r\n" => 400, "400 Bad Request\n";
    missing_b_400: b"GET /baseline11?a=13 HTTP/1.1\r\nHost: a\r\n\r\n" => 400, "400 Bad Request\n";
    no_query_400: b"GET /baseline11 HTTP/1.1\r\nHost: a\r\n\r\n" => 400, "400 Bad Request\n";
    empty_query_400: b"GET /baseline11? HTTP/1.1\r\nHost: a\r\n\r\n" => 400, "400 Bad Request\n";
    operand_without_value_400: b"GET /baseline11?a&b=1 HTTP/1.1\r\nHost: a\r\n\r\n" => 400, "400 Bad Request\n";
    operand_letters_400: b"GET /baseline11?a=x&b=1 HTTP/1.1\r\nHost: a\r\n\r\n" => 400, "400 Bad Request\n";
    operand_decimal_point_400: b"GET /baseline11?a=1.5&b=1 HTTP/1.1\r\nHost: a\r\n\r\n" => 400, "400 Bad Request\n";
    operand_plus_sign_400: b"GET /baseline11?a=%2B1&b=1 HTTP/1.1\r\nHost: a\r\n\r\n" => 400, "400 Bad Request\n";
    operand_repeated_400: b"GET /baseline11?a=1&b=2&a=3 HTTP/1.1\r\nHost: a\r\n\r\n" => 400, "400 Bad Request\n";
    operand_above_i64_400: b"GET /baseline11?a=9223372036854775808&b=0 HTTP/1.1\r\nHost: a\r\n\r\n" => 400, "400 Bad Request\n";
    operand_forty_digits_400: b"GET /baseline11?a=1234567890123456789012345678901234567890&b=0 HTTP/1.1\r\nHost: a\r\n\r\n" => 400, "400 Bad Request\n";
    sum_overflow_400: b"GET /baseline11?a=9223372036854775807&b=1 HTTP/1.1\r\nHost: a\r\n\r\n" => 400, "400 Bad Request\n";
    body_overflows_sum_400: b"POST /baseline11?a=9223372036854775807&b=0 HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\n1" => 400, "400 Bad Request\n";
    post_empty_body_400: b"POST /baseline11?a=1&b=2 HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n" => 400, "400 Bad Request\n";
    post_without_body_400: b"POST /baseline11?a=1&b=2 HTTP/1.1\r\nHost: a\r\n\r\n" => 400, "400 Bad Request\n";
    post_letters_body_400: b"POST /baseline11?a=1&b=2 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc" => 400, "400 Bad Request\n";
    post_body_inner_space_400: b"POST /baseline11?a=1&b=2 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\n2 0" => 400, "400 Bad Request\n";
    post_body_trailing_newline: b"POST /baseline11?a=1&b=2 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\n20\n" => 200, "23";
    post_body_crlf_and_spaces: b"POST /baseline11?a=1&b=2 HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\n\r\n 20\r\n " => 200, "23";
    negative_operands: b"GET /baseline11?a=-50&b=8 HTTP/1.1\r\nHost: a\r\n\r\n" => 200, "-42";
    i64_min: b"GET /baseline11?a=-9223372036854775808&b=0 HTTP/1.1\r\nHost: a\r\n\r\n" => 200, "-9223372036854775808";
    other_parameters_ignored: b"GET /baseline11?x=1&b=2&a=1&y HTTP/1.1\r\nHost: a\r\n\r\n" => 200, "3";
    get_ignores_its_body: b"GET /baseline11?a=1&b=2 HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n20" => 200, "3";
    pipeline_ignores_query: b"GET /pipeline?x=1 HTTP/1.1\r\nHost: a\r\n\r\n" => 200, "ok";
    baseline_put_405: b"PUT /baseline11?a=1&b=2 HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n" => 405, "405 Method Not Allowed\n";
    pipeline_post_405: b"POST /pipeline HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n" => 405, "405 Method Not Allowed\n";
    other_path_404: b"GET /baseline3?a=1&b=2 HTTP/1.1\r\nHost: a\r\n\r\n" => 404, "404 Not Found\n";
    baseline2_over_http11: b"GET /baseline2?a=1&b=2 HTTP/1.1\r\nHost: a\r\n\r\n" => 200, "3";
}

/// HEAD gets GET's head (Content-Length of the sum's digits) and no body.
#[test]
fn head_baseline_has_get_head_without_body() {
    let srv = arena();
    let mut c = srv.connect();
    c.send(b"GET /baseline11?a=13&b=42 HTTP/1.1\r\nHost: a\r\n\r\n");
    let get = c.response();
    c.send(b"HEAD /baseline11?a=13&b=42 HTTP/1.1\r\nHost: a\r\n\r\n");
    let head = c.head_response();
    assert_head_fields_match_get(&head, &get);
    assert_eq!(head.header("content-length"), Some("2"));
    c.send(PIPELINE_RAW);
    assert_answer(&c.response(), 200, "ok");
    drop(c);
    srv.finish();
}

/// The templates above are HttpArena's `requests/*.raw` (28606ba), byte for byte: their
/// sizes there.
#[test]
fn templates_have_httparena_sizes() {
    let sizes = [GET_RAW, POST_CL_RAW, POST_CHUNKED_RAW, PIPELINE_RAW].map(<[u8]>::len);
    assert_eq!(sizes, [60, 82, 101, 48]);
}

/// HttpArena's async validation: 32 overlapping requests with 32 different delays, each
/// answered with its own number (per-request state), none before its delay.
#[test]
fn delay_answers_overlapping_requests_each_with_its_own_number() {
    let srv = arena();
    let mut clients: Vec<(u64, Client, std::time::Instant)> = (0..32u64)
        .map(|i| {
            let ms = 10 + (i * 7) % 31;
            let mut c = srv.connect();
            let sent = std::time::Instant::now();
            c.send(format!("GET /delay/{ms} HTTP/1.1\r\nHost: localhost:8080\r\n\r\n").as_bytes());
            (ms, c, sent)
        })
        .collect();
    for (ms, c, sent) in &mut clients {
        let r = c.response();
        assert_answer(&r, 200, &ms.to_string());
        assert!(
            sent.elapsed() >= std::time::Duration::from_millis(*ms),
            "answered before its {ms} ms"
        );
    }
    drop(clients);
    srv.finish();
}
