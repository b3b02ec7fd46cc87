//! Static files end to end (`Config::root`): validators and 304, directories, methods, MIME,
//! as a client sees them over loopback. The planner's rules are unit-tested in src/files/.

mod common;
use common::*;

/// Sends one request on a fresh connection and returns its response.
fn ask(srv: &TestServer, req: &str) -> Resp {
    let mut c = srv.connect();
    c.send(req.as_bytes());
    if req.starts_with("HEAD ") {
        c.head_response()
    } else {
        c.response()
    }
}

fn get(path: &str, extra: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: a\r\n{extra}\r\n")
}

#[test]
fn file_has_type_length_validators_and_accept_ranges() {
    let srv = TestServer::start();
    let r = ask(&srv, &get("/a.txt", ""));
    assert_status(&r, &[200]);
    assert_eq!(r.body, b"hello world");
    assert_eq!(r.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(r.header("content-length"), Some("11"));
    assert_eq!(r.header("accept-ranges"), Some("bytes"));
    assert!(
        r.header("etag")
            .is_some_and(|e| e.starts_with('"') && e.ends_with('"')),
        "{r:?}"
    );
    assert!(
        r.header("last-modified")
            .is_some_and(|d| d.ends_with(" GMT") && d.len() == 29)
    );
    srv.finish();
}

#[test]
fn if_none_match_with_current_etag_304_without_body() {
    let srv = TestServer::start();
    let etag = ask(&srv, &get("/a.txt", ""))
        .header("etag")
        .unwrap()
        .to_owned();
    let mut c = srv.connect();
    c.send(get("/a.txt", &format!("If-None-Match: {etag}\r\n")).as_bytes());
    let r = c.response();
    assert_status(&r, &[304]);
    assert_eq!(r.header("etag"), Some(etag.as_str()));
    assert_eq!(r.header("content-length"), None);
    // Nothing follows the 304's head: the next response parses from the next byte.
    c.send(get("/x", "").as_bytes());
    assert_eq!(c.response().body, b"x");
    drop(c);
    srv.finish();
}

#[test]
fn if_none_match_takes_precedence_over_if_modified_since() {
    let srv = TestServer::start();
    let r = ask(
        &srv,
        &get(
            "/a.txt",
            "If-None-Match: \"other\"\r\nIf-Modified-Since: Fri, 31 Dec 9999 23:59:59 GMT\r\n",
        ),
    );
    assert_status(&r, &[200]);
    srv.finish();
}

#[test]
fn if_modified_since_last_modified_304() {
    let srv = TestServer::start();
    let lm = ask(&srv, &get("/a.txt", ""))
        .header("last-modified")
        .unwrap()
        .to_owned();
    let r = ask(
        &srv,
        &get("/a.txt", &format!("If-Modified-Since: {lm}\r\n")),
    );
    assert_status(&r, &[304]);
    srv.finish();
}

#[test]
fn if_range_with_current_etag_206_with_other_200() {
    let srv = TestServer::start();
    let etag = ask(&srv, &get("/a.txt", ""))
        .header("etag")
        .unwrap()
        .to_owned();
    let r = ask(
        &srv,
        &get(
            "/a.txt",
            &format!("Range: bytes=0-4\r\nIf-Range: {etag}\r\n"),
        ),
    );
    assert_status(&r, &[206]);
    assert_eq!(r.body, b"hello");
    let r = ask(
        &srv,
        &get("/a.txt", "Range: bytes=0-4\r\nIf-Range: \"stale\"\r\n"),
    );
    assert_status(&r, &[200]);
    assert_eq!(r.body, b"hello world");
    srv.finish();
}

#[test]
fn directory_serves_index_html() {
    let srv = TestServer::start();
    let r = ask(&srv, &get("/dir/", ""));
    assert_status(&r, &[200]);
    assert_eq!(r.body, b"<h1>dir</h1>");
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    srv.finish();
}

#[test]
fn directory_without_slash_redirects_301() {
    let srv = TestServer::start();
    let r = ask(&srv, &get("/dir?q=1", ""));
    assert_status(&r, &[301]);
    assert_eq!(r.header("location"), Some("/dir/"));
    srv.finish();
}

#[test]
fn missing_file_404_keeps_connection() {
    let srv = TestServer::start();
    keep_row(&srv, get("/missing.txt", "").as_bytes(), 404, None);
    srv.finish();
}

#[test]
fn post_to_static_file_405_with_allow() {
    let srv = TestServer::start();
    let r = ask(
        &srv,
        "POST /a.txt HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
    );
    assert_status(&r, &[405]);
    assert!(
        r.header("allow")
            .is_some_and(|a| a.contains("GET") && a.contains("HEAD")),
        "{r:?}"
    );
    srv.finish();
}

#[test]
fn big_file_arrives_whole() {
    let srv = TestServer::start();
    let r = ask(&srv, &get("/big.bin", ""));
    assert_status(&r, &[200]);
    assert_eq!(r.body.len(), BIG_LEN);
    assert!(
        r.body
            .iter()
            .enumerate()
            .all(|(i, &b)| b == (i % (1024 * 1024) % 251) as u8)
    );
    srv.finish();
}

#[test]
fn head_of_big_file_has_length_and_no_body() {
    let srv = TestServer::start();
    let r = ask(&srv, "HEAD /big.bin HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_status(&r, &[200]);
    assert_eq!(
        r.header("content-length"),
        Some(BIG_LEN.to_string().as_str())
    );
    srv.finish();
}

/// A small file goes out from the worker's cache (the default): pipelined requests get their
/// bodies in order on one connection, and a file replaced between two requests is served new
/// on the next, with its new validators.
#[test]
fn cached_file_is_served_pipelined_and_fresh_after_a_replace() {
    let srv = TestServer::start();
    let name = format!("cached-{}.txt", std::process::id());
    let path = static_root().join(&name);
    std::fs::write(&path, "first version").unwrap();
    let mut c = srv.connect();
    let one = get(&format!("/{name}"), "");
    c.send(one.repeat(3).as_bytes());
    let mut tags = Vec::new();
    for _ in 0..3 {
        let r = c.response();
        assert_status(&r, &[200]);
        assert_eq!(r.body, b"first version");
        tags.push(r.header("etag").map(str::to_owned));
    }
    assert!(
        tags.iter().all(|t| t.is_some() && *t == tags[0]),
        "{tags:?}"
    );
    let tmp = static_root().join(format!("{name}.new"));
    std::fs::write(&tmp, "the second, longer version").unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    c.send(one.as_bytes());
    let r = c.response();
    assert_status(&r, &[200]);
    assert_eq!(r.body, b"the second, longer version");
    assert_ne!(r.header("etag").map(str::to_owned), tags[0]);
    c.send(format!("GET /{name} HTTP/1.1\r\nHost: a\r\nRange: bytes=4-9\r\n\r\n").as_bytes());
    let r = c.response();
    assert_status(&r, &[206]);
    assert_eq!(r.body, b"second");
    std::fs::remove_file(&path).unwrap();
    c.send(one.as_bytes());
    assert_status(&c.response(), &[404]);
    srv.finish();
}
