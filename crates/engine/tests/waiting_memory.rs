//! Measures user-space bytes per connection whose request waits in an async handler
//! (`/wait`: a sleep on the worker's timer wheel): a server in a child process (so its RSS is
//! its own), 10,000 loopback connections that each sent one request the server holds, and the
//! growth of the server's anonymous RSS. Ignored by default (it needs 10,000 descriptors on
//! each side); run it with
//!
//! ```text
//! cargo test -p twelve-engine --release --test waiting_memory -- --ignored --nocapture
//! TWELVE_TEST_IO=uring cargo test -p twelve-engine --release --test waiting_memory -- --ignored --nocapture
//! ```

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use twelve_engine::{Request, Response, Router, Server};
use twelve_testkit::rss_anon;

const CHILD: &str = "TWELVE_WAITING_MEMORY_SERVER";
const CONNECTIONS: usize = 10_000;

#[test]
#[ignore = "opens 10,000 connections; run by hand to measure"]
fn waiting_request_memory() {
    if std::env::var_os(CHILD).is_some() {
        return serve_until_stdin_closes();
    }
    twelve_sys::net::raise_nofile_limit().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "waiting_request_memory",
            "--ignored",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let addr: SocketAddr = loop {
        let line = lines.next().unwrap().unwrap();
        if let Some(a) = line.strip_prefix("ADDR ") {
            break a.parse().unwrap();
        }
    };
    let mut warm = TcpStream::connect(addr).unwrap();
    request(&mut warm);
    let before = rss_anon(child.id());
    let mut conns = Vec::with_capacity(CONNECTIONS);
    for _ in 0..CONNECTIONS {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(b"GET /wait HTTP/1.1\r\nHost: a\r\n\r\n")
            .unwrap();
        conns.push(s);
    }
    // Every request is in: the server counted them (its /metrics, on the warm connection).
    loop {
        let requests = metric(&mut warm, "twelve_requests_total");
        if requests > CONNECTIONS {
            break;
        }
        // The poll interval, not a synchronization: the count is.
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let after = rss_anon(child.id());
    let per_conn = (after.saturating_sub(before)) as f64 / CONNECTIONS as f64;
    println!(
        "RssAnon before {before} B, after {after} B with {CONNECTIONS} waiting requests: {per_conn:.0} bytes per connection and its waiting request"
    );
    drop(conns);
    drop(child.stdin.take());
    child.wait().unwrap();
    // Issue 34: at most 2 KiB of server memory per waiting request.
    assert!(per_conn <= 2048.0, "{per_conn} bytes per waiting request");
}

/// The value of a counter of the server's `/metrics`, read on `s` (keep-alive).
fn metric(s: &mut TcpStream, name: &str) -> usize {
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        let n = s.read(&mut buf).unwrap();
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got);
        let Some((head, body)) = text.split_once("\r\n\r\n") else {
            continue;
        };
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .and_then(|v| v.trim().parse().ok())
            .unwrap();
        if body.len() >= len {
            return body
                .lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
        }
    }
}

fn request(s: &mut TcpStream) {
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let mut buf = [0u8; 256];
    let mut got = 0;
    while !buf[..got].ends_with(b"ok") {
        got += s.read(&mut buf[got..]).unwrap();
    }
}

fn serve_until_stdin_closes() {
    twelve_sys::net::raise_nofile_limit().unwrap();
    let router = Router::new()
        .get(
            "/",
            |_: &Request<'_, '_>, _: &[u8], r: &mut Response<'_>| {
                r.send(200, "text/plain", &[], b"ok")
            },
        )
        .get_async("/wait", |_: &Request<'_, '_>, _: &[u8]| async {
            twelve_engine::rt::sleep(std::time::Duration::from_secs(600)).await;
            twelve_engine::Reply::text(200, "waited")
        });
    let server = Server::new(common::loopback(1), router).start().unwrap();
    println!("ADDR {}", server.local_addrs()[0]);
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    server.shutdown();
    server.join();
}
