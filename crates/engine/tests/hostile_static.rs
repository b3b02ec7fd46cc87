//! docs/hostile-requests.md section E rows about static files (`Config::root`): 47f HEAD, 47j slow
//! reader, 47k reset mid-file, 47o traversal, 47p Range abuse; end to end over loopback.
//! Every row also checks that the server is alive and its fds (sockets and files) are back to
//! baseline.

mod common;
use common::*;

fn get(path: &str, extra: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: a\r\n{extra}\r\n").into_bytes()
}

/// 47f: HEAD on a static file: the same fields as GET (Content-Length included), no body.
#[test]
fn e47f_head_on_static_file_same_fields_no_body() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(&get("/a.txt", ""));
    let get = c.response();
    assert_eq!(
        (get.status, get.body.as_slice()),
        (200, &b"hello world"[..])
    );
    c.send(b"HEAD /a.txt HTTP/1.1\r\nHost: a\r\n\r\n");
    let head = c.head_response();
    assert_head_fields_match_get(&head, &get);
    assert_eq!(head.header("content-length"), Some("11"));
    // No body bytes after the HEAD response: the next response parses cleanly.
    c.send(b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n");
    let next = c.response();
    assert_eq!((next.status, next.body.as_slice()), (200, &b"x"[..]));
    drop(c);
    srv.finish();
}

/// 47o: traversal attempts never return content from outside the root: 400, 403 or 404.
macro_rules! traversal_rows {
    ($($name:ident: $target:expr;)*) => {$(
        #[test]
        fn $name() {
            let srv = TestServer::start();
            let mut c = srv.connect();
            let req = [&b"GET "[..], $target, b" HTTP/1.1\r\nHost: a\r\n\r\n"].concat();
            c.send(&req);
            match c.try_response(false) {
                Ok(r) => {
                    assert_status(&r, &[400, 403, 404]);
                    let body = String::from_utf8_lossy(&r.body);
                    assert!(!body.contains(SECRET) && !body.contains("root:"), "leaked: {body}");
                }
                // A request-line the codec refuses may close without a route ever seeing it.
                Err(NoResponse::Closed(rest)) => assert!(rest.is_empty()),
                Err(e) => panic!("{e:?}"),
            }
            drop(c);
            srv.finish();
        }
    )*};
}

traversal_rows! {
    e47o_dotdot_etc_passwd: b"/../etc/passwd";
    e47o_deep_dotdot_etc_passwd: b"/dir/../../../../etc/passwd";
    e47o_encoded_dotdot: b"/%2e%2e/%2e%2e/etc/passwd";
    e47o_encoded_dotdot_to_outside: b"/%2e%2e/outside/secret.txt";
    e47o_encoded_slash: b"/%2f..";
    e47o_encoded_slash_to_outside: b"/..%2foutside%2fsecret.txt";
    e47o_encoded_nul: b"/a%00.txt";
    e47o_raw_backslash: b"/..\\x";
    e47o_encoded_backslash: b"/..%5coutside%5csecret.txt";
    e47o_overlong_utf8_dot: b"/%c0%ae%c0%ae/outside/secret.txt";
    e47o_symlink_to_file_outside: b"/link_out.txt";
    e47o_symlink_to_directory_outside: b"/dir_out/secret.txt";
    e47o_absolute_form_dotdot: b"http://a/../outside/secret.txt";
}

fn range(value: &str) -> Resp {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(&get("/a.txt", &format!("Range: {value}\r\n")));
    let r = c.response();
    assert!(!r.closes(), "a Range is no reason to close: {r:?}");
    c.send(&get("/x", ""));
    assert_eq!(c.response().status, 200);
    drop(c);
    srv.finish();
    r
}

/// 47p: 200 overlapping ranges: Range ignored, the whole file once (bounded work; never a
/// multipart reply 200 times the file's size).
#[test]
fn e47p_200_overlapping_ranges_full_body() {
    let ranges = vec!["0-"; 200].join(",");
    let r = range(&format!("bytes={ranges}"));
    assert_status(&r, &[200]);
    assert_eq!(r.body, b"hello world");
}

/// 47p: `bytes=-0` cannot be satisfied: 416 with `Content-Range: bytes */len`.
#[test]
fn e47p_suffix_zero_416() {
    let r = range("bytes=-0");
    assert_status(&r, &[416]);
    assert_eq!(r.header("content-range"), Some("bytes */11"));
}

/// 47p: a first-pos past u64: 416, no wraparound.
#[test]
fn e47p_huge_first_pos_416() {
    let r = range("bytes=99999999999999999999-");
    assert_status(&r, &[416]);
    assert_eq!(r.header("content-range"), Some("bytes */11"));
}

/// 47p: one valid range: 206 with Content-Range.
#[test]
fn e47p_single_range_206() {
    let r = range("bytes=6-");
    assert_status(&r, &[206]);
    assert_eq!(r.body, b"world");
    assert_eq!(r.header("content-range"), Some("bytes 6-10/11"));
}

/// 47p: one range of the big file: exactly those bytes.
#[test]
fn e47p_single_range_of_big_file_206() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(&get("/big.bin", "Range: bytes=1000-1009\r\n"));
    let r = c.response();
    assert_status(&r, &[206]);
    let want: Vec<u8> = (1000..1010).map(|i| (i % 251) as u8).collect();
    assert_eq!(r.body, want);
    assert_eq!(
        r.header("content-range"),
        Some(format!("bytes 1000-1009/{BIG_LEN}").as_str())
    );
    drop(c);
    srv.finish();
}

fn rss_kib() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// 47j: a reader that stops reading a 10 MiB file: the server closes after its send timeout,
/// and its memory does not grow by the file size (the body goes by sendfile, never through a
/// user-space buffer). A 1 byte/s reader looks the same to the sender: TCP reopens a window
/// only once an MSS is free (RFC 1122 §4.2.3.3, silly-window avoidance).
#[test]
fn e47j_slow_reader_closed_after_send_timeout() {
    let srv = TestServer::start();
    let rss_before = rss_kib();
    let mut s = small_window_client(&srv);
    std::io::Write::write_all(&mut s, &get("/big.bin", "")).unwrap();
    srv.wait_for("the send timeout", |m| m.timeouts[SEND_TIMEOUT] > 0);
    let rss_stalled = rss_kib();
    s.set_read_timeout(Some(BOUND)).unwrap();
    let mut total = 0usize;
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        match std::io::Read::read(&mut s, &mut buf) {
            Ok(0) => break,
            Ok(n) => total += n,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("still open after the send timeout ({e}), {total} bytes read"),
        }
    }
    assert!(
        total < BIG_LEN,
        "the whole file arrived ({total} bytes): the reader was not slow"
    );
    let send_timeouts = srv.metrics().timeouts[SEND_TIMEOUT];
    assert!(send_timeouts >= 1, "closed, but not by the send timeout");
    let grown_kib = rss_stalled.saturating_sub(rss_before);
    assert!(
        grown_kib < BIG_LEN / 1024 / 2,
        "RSS grew by {grown_kib} KiB for one stalled file"
    );
    drop(s);
    srv.finish();
}

/// 47k: a RST in the middle of a large file response.
#[test]
fn e47k_reset_mid_file_response() {
    let srv = TestServer::start();
    for _ in 0..5 {
        let mut c = srv.connect();
        c.send(&get("/big.bin", ""));
        let mut first = [0u8; 1024];
        std::io::Read::read_exact(&mut c.stream, &mut first).unwrap();
        reset(c.stream);
    }
    srv.wait_for("the server to close the five reset connections", |m| {
        m.closes >= 5
    });
    srv.finish();
}
