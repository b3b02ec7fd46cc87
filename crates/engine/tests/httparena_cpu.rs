//! `apps::httparena::full_router` end to end over loopback with raw bytes: the checks of
//! HttpArena's scripts/validate.sh for the json, json-comp, upload and static profiles
//! (HttpArena 28606ba), the request templates its load generators send, and the answers the
//! app defines where the profiles say nothing. The data is HttpArena's (tests/data/arena/).

mod common;
use common::*;
use std::io::Read;
use std::path::{Path, PathBuf};
use twelve_engine::apps::httparena::{self, Dataset};
use twelve_engine::{Compression, FileCacheConfig, Files, Limits, Request, Response};

/// The upload limit of these servers: above HttpArena's largest upload (20 MiB).
const MAX_BODY: u64 = 24 << 20;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/arena")
}

/// The full app with compression on (as the example runs it), plus `GET /` "root" for
/// [`TestServer::finish`].
fn arena_with(cache: FileCacheConfig) -> TestServer {
    let mut config = test_config();
    config.root = None;
    config.compression = Some(Compression::default());
    config.limits = Limits {
        body_bytes: MAX_BODY,
        ..config.limits
    };
    // A 20 MiB upload over loopback on a loaded host: room beyond the harness's 1 s.
    config.timeouts.body_idle = BOUND;
    let dataset = Dataset::load(&data().join("dataset.json")).expect("dataset loads");
    let files = Files::open(&data().join("static"), cache)
        .expect("static dir opens")
        .precompressed(true);
    let router = httparena::full_router(Some(dataset), Some(files)).get(
        "/",
        |_: &Request<'_, '_>, _: &[u8], res: &mut Response<'_>| {
            res.send(200, "text/plain", &[], b"root")
        },
    );
    TestServer::start_router(config, router)
}

fn arena() -> TestServer {
    arena_with(FileCacheConfig::default())
}

fn get(c: &mut Client, path: &str, accept: Option<&str>) -> Resp {
    let ae = accept.map_or(String::new(), |a| format!("Accept-Encoding: {a}\r\n"));
    c.send(format!("GET {path} HTTP/1.1\r\nHost: localhost:8080\r\n{ae}\r\n").as_bytes());
    c.response()
}

/// The body as the client reads it, decoded by its `Content-Encoding`.
fn decoded(r: &Resp) -> Vec<u8> {
    let mut out = Vec::new();
    match r.header("content-encoding") {
        None => return r.body.clone(),
        Some("gzip") => flate2::read::GzDecoder::new(&r.body[..]).read_to_end(&mut out),
        Some("br") => brotli::Decompressor::new(&r.body[..], 4096).read_to_end(&mut out),
        Some("zstd") => zstd::stream::read::Decoder::new(&r.body[..])
            .unwrap()
            .read_to_end(&mut out),
        Some(other) => panic!("unexpected Content-Encoding {other}"),
    }
    .expect("the body decodes");
    out
}

/// validate.sh's json check: `count` is the route's, every item has `total` =
/// price × quantity × m, and `Content-Type` is application/json.
fn assert_page(r: &Resp, count: u64, m: u64) {
    assert_status(r, &[200]);
    assert_eq!(r.header("content-type"), Some("application/json"), "{r:?}");
    common::assert_json_page(&decoded(r), count, m);
}

// ---- json ----

#[test]
fn json_validate_counts_and_multipliers() {
    let srv = arena();
    let mut c = srv.connect();
    for (count, m) in [(12, 3), (22, 7), (31, 2), (50, 5)] {
        let r = get(&mut c, &format!("/json/{count}?m={m}"), None);
        assert_page(&r, count, m);
        assert_eq!(r.header("content-encoding"), None);
    }
    drop(c);
    srv.finish();
}

/// HttpArena's `requests/json-{1,5,10,15,25,40,50}.raw`, round-robin on one connection.
#[test]
fn json_benchmark_templates() {
    let srv = arena();
    let mut c = srv.connect();
    for _ in 0..2 {
        for (count, m) in [(1, 3), (5, 7), (10, 2), (15, 5), (25, 4), (40, 8), (50, 6)] {
            c.send(
                format!("GET /json/{count}?m={m} HTTP/1.1\r\nHost: localhost:8080\r\n\r\n")
                    .as_bytes(),
            );
            assert_page(&c.response(), count, m);
        }
    }
    drop(c);
    srv.finish();
}

/// What HttpArena leaves open: 400 on a connection kept open, and a count above the dataset's
/// size answered with the whole dataset.
#[test]
fn json_malformed_requests_get_400_and_keep_the_connection() {
    let srv = arena();
    let mut c = srv.connect();
    for path in [
        "/json/0?m=1",
        "/json/x?m=1",
        "/json/5?m=x",
        "/json/5?m=1&m=2",
    ] {
        let r = get(&mut c, path, None);
        assert_status(&r, &[400]);
        assert!(!r.closes(), "{r:?}");
    }
    assert_page(&get(&mut c, "/json/51?m=1", None), 50, 1);
    assert_status(&get(&mut c, "/json", None), &[404]);
    drop(c);
    srv.finish();
}

// ---- json-comp ----

#[test]
fn json_comp_content_encoding_when_asked() {
    let srv = arena();
    let mut c = srv.connect();
    let r = get(&mut c, "/json/50?m=1", Some("gzip, br"));
    let coding = r.header("content-encoding").unwrap_or_default();
    assert!(coding == "gzip" || coding == "br", "{r:?}");
    assert_eq!(r.header("vary"), Some("Accept-Encoding"));
    assert_page(&r, 50, 1);
    drop(c);
    srv.finish();
}

#[test]
fn json_comp_validate_counts_and_multipliers() {
    let srv = arena();
    let mut c = srv.connect();
    for (count, m) in [(25, 3), (40, 7), (50, 2)] {
        let r = get(&mut c, &format!("/json/{count}?m={m}"), Some("gzip, br"));
        assert!(r.header("content-encoding").is_some(), "{r:?}");
        assert_page(&r, count, m);
    }
    drop(c);
    srv.finish();
}

/// Without Accept-Encoding there is no Content-Encoding (still `Vary`: the answer depends on
/// the field).
#[test]
fn json_comp_no_encoding_unasked() {
    let srv = arena();
    let mut c = srv.connect();
    let r = get(&mut c, "/json/50?m=1", None);
    assert_eq!(r.header("content-encoding"), None, "{r:?}");
    assert_eq!(r.header("vary"), Some("Accept-Encoding"));
    assert_page(&r, 50, 1);
    drop(c);
    srv.finish();
}

/// Negotiation rows: `name: Accept-Encoding => Content-Encoding;` on `/json/50?m=6`.
macro_rules! codings {
    ($($name:ident: $accept:expr => $want:expr;)*) => {$(
        #[test]
        fn $name() {
            let srv = arena();
            let mut c = srv.connect();
            let r = get(&mut c, "/json/50?m=6", Some($accept));
            assert_eq!(r.header("content-encoding"), $want, "{r:?}");
            assert_page(&r, 50, 6);
            drop(c);
            srv.finish();
        }
    )*};
}

codings! {
    coding_arena_json_comp: "gzip, br" => Some("gzip");
    coding_curl_compressed: "deflate, gzip, br, zstd" => Some("zstd");
    coding_br_preferred_by_weight: "br;q=1, gzip;q=0.8" => Some("br");
    coding_br_only: "br" => Some("br");
    coding_identity_only: "identity" => None;
    coding_everything_refused: "gzip;q=0, br;q=0, zstd;q=0" => None;
    coding_star: "*" => Some("zstd");
    coding_unknown_only: "compress, deflate" => None;
}

/// A small body is not worth compressing: `/json/1` goes out as it is, with its length.
#[test]
fn json_comp_small_body_sent_as_is() {
    let srv = arena();
    let mut c = srv.connect();
    let r = get(&mut c, "/json/1?m=3", Some("gzip, br"));
    assert_eq!(r.header("content-encoding"), None, "{r:?}");
    assert_page(&r, 1, 3);
    drop(c);
    srv.finish();
}

/// HEAD announces the length of the compressed body a GET gets.
#[test]
fn json_comp_head_matches_get() {
    let srv = arena();
    let mut c = srv.connect();
    let got = get(&mut c, "/json/50?m=2", Some("gzip"));
    c.send(b"HEAD /json/50?m=2 HTTP/1.1\r\nHost: a\r\nAccept-Encoding: gzip\r\n\r\n");
    let head = c.head_response();
    assert_head_fields_match_get(&head, &got);
    assert_eq!(head.header("content-encoding"), Some("gzip"));
    drop(c);
    srv.finish();
}

// ---- upload ----

fn upload(len: usize, seed: u64) -> (Vec<u8>, Vec<u8>) {
    let mut x = seed | 1;
    let body: Vec<u8> = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let head = format!(
        "POST /upload HTTP/1.1\r\nHost: localhost:8080\r\nContent-Type: application/octet-stream\r\nContent-Length: {len}\r\n\r\n"
    );
    (head.into_bytes(), body)
}

fn assert_count(r: &Resp, n: usize) {
    assert_status(r, &[200]);
    assert_eq!(String::from_utf8_lossy(&r.body), n.to_string(), "{r:?}");
    assert!(
        r.header("content-type")
            .unwrap_or_default()
            .starts_with("text/plain")
    );
}

/// validate.sh: `Hello, HttpArena!` (17 bytes), a random 48-byte body, then 500 KB, 2 MB, 10 MB
/// and 20 MB of random bytes, all on one keep-alive connection.
#[test]
fn upload_validate_sizes() {
    // Made before connecting: the keep-alive timeout runs between requests.
    let uploads: Vec<_> = [48, 512_000, 2_097_152, 10_485_760, 20_971_520]
        .into_iter()
        .enumerate()
        .map(|(i, len)| (len, upload(len, i as u64 + 7)))
        .collect();
    let srv = arena();
    let mut c = srv.connect();
    c.send(b"POST /upload HTTP/1.1\r\nHost: a\r\nContent-Type: application/octet-stream\r\nContent-Length: 17\r\n\r\nHello, HttpArena!");
    assert_count(&c.response(), 17);
    for (len, (head, body)) in uploads {
        c.send(&head);
        if let Err(e) = c.try_send(&body) {
            panic!("{len}: {e}; {:?}", srv.metrics());
        }
        assert_count(&c.response(), len);
    }
    drop(c);
    srv.finish();
}

/// A streamed body is counted whatever the reads it arrives in (here: the head and body bytes
/// in separate reads, and a pipelined request right behind the body), and the connection is
/// in sync after it.
#[test]
fn upload_split_reads_then_pipelined_request() {
    let srv = arena();
    let mut c = srv.connect();
    let (head, body) = upload(300_000, 3);
    srv.send_read(&mut c, &head);
    srv.send_read(&mut c, &body[..1]);
    srv.send_read(&mut c, &body[1..100_000]);
    let mut rest = body[100_000..].to_vec();
    rest.extend_from_slice(b"GET /pipeline HTTP/1.1\r\nHost: a\r\n\r\n");
    c.send(&rest);
    assert_count(&c.response(), 300_000);
    let r = c.response();
    assert_eq!(r.body, b"ok");
    drop(c);
    srv.finish();
}

/// `Expect: 100-continue` gets its interim answer before the body is sent.
#[test]
fn upload_expect_continue() {
    let srv = arena();
    let mut c = srv.connect();
    c.send(b"POST /upload HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 70000\r\n\r\n");
    assert_status(&c.response(), &[100]);
    c.send(&vec![b'x'; 70_000]);
    assert_count(&c.response(), 70_000);
    drop(c);
    srv.finish();
}

#[test]
fn upload_chunked_is_counted() {
    let srv = arena();
    let mut c = srv.connect();
    c.send(b"POST /upload HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3\r\nabc\r\n0\r\n\r\n");
    assert_count(&c.response(), 8);
    drop(c);
    srv.finish();
}

/// Above the limit (`--max-body`): 413 from the head alone, then close.
#[test]
fn upload_over_the_limit_is_413() {
    let srv = arena();
    let len = MAX_BODY + 1;
    let head = format!("POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: {len}\r\n\r\n");
    let r = error_row(&srv, head.as_bytes(), &[413]);
    assert!(r.closes(), "{r:?}");
    srv.finish();
}

// ---- static ----

/// The static files kept here: six of validate.sh's 20, one of each type it serves.
const STATIC: &[&str] = &[
    "reset.css",
    "analytics.js",
    "manifest.json",
    "logo.svg",
    "thumb2.webp",
    "regular.woff2",
];

#[test]
fn static_content_types() {
    let srv = arena();
    let mut c = srv.connect();
    for (file, want) in [
        ("reset.css", "text/css"),
        ("analytics.js", "text/javascript"),
        ("manifest.json", "application/json"),
    ] {
        let r = get(&mut c, &format!("/static/{file}"), None);
        let ct = r.header("content-type").unwrap_or_default();
        assert!(
            ct == want || ct.starts_with(&format!("{want};")),
            "{file}: {ct}"
        );
    }
    drop(c);
    srv.finish();
}

/// validate.sh's sizes without Accept-Encoding (the files themselves), then with the static
/// profile's `br;q=1, gzip;q=0.8` (decoded to the file), and with gzip alone, for the cached
/// and the uncached (sendfile) path.
#[test]
fn static_sizes_plain_and_compressed() {
    for cache in [FileCacheConfig::default(), FileCacheConfig::OFF] {
        let srv = arena_with(cache);
        let mut c = srv.connect();
        for file in STATIC {
            let want = std::fs::read(data().join("static").join(file)).unwrap();
            let path = format!("/static/{file}");
            let plain = get(&mut c, &path, None);
            assert_eq!(plain.header("content-encoding"), None, "{file}");
            assert_eq!(plain.body, want, "{file}");
            let textual = !file.ends_with(".webp") && !file.ends_with(".woff2");
            for (accept, coding) in [("br;q=1, gzip;q=0.8", "br"), ("gzip", "gzip")] {
                let r = get(&mut c, &path, Some(accept));
                assert_status(&r, &[200]);
                let want_coding = textual.then_some(coding);
                assert_eq!(r.header("content-encoding"), want_coding, "{file} {accept}");
                assert_eq!(r.header("vary").is_some(), textual, "{file}");
                assert_eq!(decoded(&r), want, "{file} {accept}");
            }
        }
        drop(c);
        srv.finish();
    }
}

#[test]
fn static_missing_is_404() {
    let srv = arena();
    let mut c = srv.connect();
    assert_status(&get(&mut c, "/static/nonexistent.txt", None), &[404]);
    assert_status(&get(&mut c, "/static/nonexistent.txt", Some("br")), &[404]);
    assert_status(&get(&mut c, "/staticx/reset.css", None), &[404]);
    drop(c);
    srv.finish();
}

/// RFC 9110 §14.1.2: a range selects bytes of the representation sent, here the `.gz` file,
/// whose length `Content-Range` gives; its validator is its own, so a 304 and an If-Range
/// follow the encoded file.
#[test]
fn static_range_of_the_encoded_representation() {
    let srv = arena();
    let mut c = srv.connect();
    let gz = std::fs::read(data().join("static/reset.css.gz")).unwrap();
    c.send(b"GET /static/reset.css HTTP/1.1\r\nHost: a\r\nAccept-Encoding: gzip\r\nRange: bytes=0-9\r\n\r\n");
    let r = c.response();
    assert_status(&r, &[206]);
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert_eq!(
        r.header("content-range"),
        Some(format!("bytes 0-9/{}", gz.len()).as_str())
    );
    assert_eq!(r.body, gz[..10]);
    let etag = r.header("etag").unwrap().to_owned();
    let plain = get(&mut c, "/static/reset.css", None);
    assert_ne!(
        plain.header("etag"),
        Some(etag.as_str()),
        "one ETag per representation"
    );
    c.send(format!("GET /static/reset.css HTTP/1.1\r\nHost: a\r\nAccept-Encoding: gzip\r\nIf-None-Match: {etag}\r\n\r\n").as_bytes());
    let r = c.response();
    assert_status(&r, &[304]);
    assert_eq!(r.header("vary"), Some("Accept-Encoding"));
    drop(c);
    srv.finish();
}

// ---- over HTTP/2 (h2c with prior knowledge): the same Response path ----

/// json-comp and a precompressed static file over HTTP/2: the coding, `Vary` and the decoded
/// body are those of HTTP/1.1 (HttpArena's json-h2c profile asks the json endpoint over h2c).
#[test]
fn compression_and_siblings_over_h2c() {
    let srv = arena();
    let mut c = twelve_testkit::h2::Client::connect(srv.addr, BOUND);
    let mut fields = twelve_testkit::h2::request("GET", "/json/40?m=7");
    fields.push(("accept-encoding", "gzip, br"));
    c.headers(1, &fields, true);
    let r = c.response(1).expect("a response on stream 1");
    assert_eq!(r.status, 200);
    assert_eq!(r.field("content-encoding"), Some("gzip"));
    assert_eq!(r.field("vary"), Some("Accept-Encoding"));
    let mut json = Vec::new();
    flate2::read::GzDecoder::new(&r.body[..])
        .read_to_end(&mut json)
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v["count"].as_u64(), Some(40));
    let mut fields = twelve_testkit::h2::request("GET", "/static/reset.css");
    fields.push(("accept-encoding", "br;q=1, gzip;q=0.8"));
    c.headers(3, &fields, true);
    let r = c.response(3).expect("a response on stream 3");
    assert_eq!(r.status, 200);
    assert_eq!(r.field("content-encoding"), Some("br"));
    assert_eq!(
        r.body,
        std::fs::read(data().join("static/reset.css.br")).unwrap()
    );
    drop(c);
    srv.finish();
}
