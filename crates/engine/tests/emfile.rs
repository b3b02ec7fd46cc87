//! Out of descriptors: `accept` fails with EMFILE; the worker pauses its listener (counted),
//! does not spin, and serves the queued connections once descriptors are free again.
//!
//! Its own test binary: it lowers this process's `RLIMIT_NOFILE`, which would disturb other
//! tests running in parallel.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};
use twelve_engine::{Request, Response, Router, Server};

fn open_fds() -> u64 {
    std::fs::read_dir("/proc/self/fd").unwrap().count() as u64
}

#[test]
fn emfile_pauses_the_listener_and_recovers() {
    let router = Router::new().get(
        "/",
        |_: &Request<'_, '_>, _: &[u8], r: &mut Response<'_>| r.send(200, "text/plain", &[], b"ok"),
    );
    if common::test_io() == twelve_engine::Backend::Uring {
        // io_uring reads RLIMIT_NOFILE when an accept is prepared (`io_accept_prep`,
        // io_uring/net.c), and a multishot accept is prepared once: lowering the limit after
        // the server started does not reach it, so this way of forcing EMFILE cannot work.
        eprintln!("skipped on io_uring: the armed multishot accept keeps the old fd limit");
        return;
    }
    let server = Server::new(common::loopback(1), router).start().unwrap();
    let addr = server.local_addrs()[0];
    const CLIENTS: usize = 20;
    // Create the client sockets first, then lower the limit, then connect: the server can
    // accept about three before `accept` fails with EMFILE.
    let sockets: Vec<socket2::Socket> = (0..CLIENTS)
        .map(|_| socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap())
        .collect();
    let saved = twelve_sys::net::nofile_limit().unwrap_or(1 << 20);
    twelve_sys::net::set_nofile_limit(open_fds() + 3).unwrap();
    let started = Instant::now();
    let mut clients: Vec<TcpStream> = sockets
        .into_iter()
        .map(|s| {
            s.connect(&addr.into()).unwrap();
            let s: TcpStream = s.into();
            s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            s
        })
        .collect();
    for s in &mut clients {
        s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            .unwrap();
    }
    for (i, mut s) in clients.into_iter().enumerate() {
        let mut out = Vec::new();
        s.read_to_end(&mut out).unwrap();
        assert!(out.starts_with(b"HTTP/1.1 200 "), "client {i}: {out:?}");
        // Dropping it ends the server's lingering close, which frees its descriptor.
    }
    let elapsed_ms = started.elapsed().as_millis() as u64;
    twelve_sys::net::set_nofile_limit(saved).unwrap();
    let m = server.metrics();
    eprintln!("{} EMFILE pauses in {elapsed_ms} ms", m.emfile_pauses);
    assert!(m.emfile_pauses >= 1, "the limit was never hit");
    // Each pause lasts 100 ms: a worker retrying in a loop would count thousands.
    assert!(
        m.emfile_pauses <= elapsed_ms / 100 + 2,
        "{} pauses",
        m.emfile_pauses
    );
    assert_eq!(m.accepts, CLIENTS as u64);
}
