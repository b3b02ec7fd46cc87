//! Measures user-space bytes per idle keep-alive connection, HTTP/1.1 and HTTP/2 (h2c): a
//! server in a child process (so its RSS is its own), 10,000 loopback connections that each
//! made one request and then sit idle, and the growth of the server's anonymous RSS. Ignored
//! by default (it needs 10,000 descriptors on each side); run it with
//!
//! ```text
//! cargo test -p twelve-engine --release --test idle_memory -- --ignored --nocapture --test-threads 1
//! TWELVE_TEST_IO=uring cargo test -p twelve-engine --release --test idle_memory -- --ignored --nocapture --test-threads 1
//! ```

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use twelve_engine::{Request, Response, Router, Server};
use twelve_testkit::rss_anon;

const CHILD: &str = "TWELVE_IDLE_MEMORY_SERVER";
const CONNECTIONS: usize = 10_000;

#[test]
#[ignore = "opens 10,000 connections; run by hand to measure"]
fn idle_connection_memory() {
    // An idle connection holds no buffer: issue 13 bounds it at 1 KiB on both backends.
    measure("idle_connection_memory", 1024.0, |addr| {
        let mut s = TcpStream::connect(addr).unwrap();
        request(&mut s);
        Box::new(s)
    });
}

/// An idle HTTP/2 connection keeps its HPACK tables and stream state, allocated when first
/// used: issue 31 bounds it at 4 KiB.
#[test]
#[ignore = "opens 10,000 connections; run by hand to measure"]
fn idle_h2_connection_memory() {
    measure("idle_h2_connection_memory", 4096.0, |addr| {
        let mut c = twelve_testkit::h2::Client::connect(addr, std::time::Duration::from_secs(5));
        c.get(1, "/");
        assert_eq!(c.response(1).unwrap().body, b"ok");
        Box::new(c)
    });
}

/// Starts the server child, opens [`CONNECTIONS`] connections with `open` (each makes one
/// request and stays open), and bounds the server's RSS growth per connection by `bound`.
fn measure(name: &str, bound: f64, open: impl Fn(SocketAddr) -> Box<dyn std::any::Any>) {
    if std::env::var_os(CHILD).is_some() {
        return serve_until_stdin_closes();
    }
    twelve_sys::net::raise_nofile_limit().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--ignored", "--nocapture"])
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
    let warm = open(addr);
    let before = rss_anon(child.id());
    let mut conns = Vec::with_capacity(CONNECTIONS);
    for _ in 0..CONNECTIONS {
        conns.push(open(addr));
    }
    let after = rss_anon(child.id());
    let per_conn = (after.saturating_sub(before)) as f64 / CONNECTIONS as f64;
    println!(
        "{name}: RssAnon before {before} B, after {after} B with {CONNECTIONS} idle keep-alive connections: {per_conn:.0} bytes per connection"
    );
    drop((warm, conns));
    drop(child.stdin.take());
    child.wait().unwrap();
    assert!(per_conn <= bound, "{per_conn} bytes per idle connection");
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
    let router = Router::new().get(
        "/",
        |_: &Request<'_, '_>, _: &[u8], r: &mut Response<'_>| r.send(200, "text/plain", &[], b"ok"),
    );
    let server = Server::new(common::loopback(1), router).start().unwrap();
    println!("ADDR {}", server.local_addrs()[0]);
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    server.shutdown();
    server.join();
}
