//! Loopback smoke tests of the in-process API: keep-alive, metrics, max connections, timeouts
//! and graceful shutdown. (The exhaustive raw-byte suite lives in tests/hostile*.rs.)

mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;
use twelve_engine::{Config, Request, Response, Router, Server, ServerHandle, Timeouts};
use twelve_testkit::skip_or_fail;

fn router() -> Router {
    Router::new()
        .get(
            "/",
            |_: &Request<'_, '_>, _: &[u8], r: &mut Response<'_>| {
                r.send(200, "text/plain", &[], b"ok")
            },
        )
        .post(
            "/echo",
            |_: &Request<'_, '_>, b: &[u8], r: &mut Response<'_>| {
                r.send(200, "application/octet-stream", &[], b)
            },
        )
}

fn start(config: Config) -> (ServerHandle, SocketAddr) {
    let server = Server::new(config, router()).start().unwrap();
    let addr = server.local_addrs()[0];
    (server, addr)
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// Reads one response with a Content-Length body (or none); returns the head and body.
fn read_response(s: &mut TcpStream) -> (String, Vec<u8>) {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        let n = s.read(&mut byte).unwrap();
        assert_eq!(
            n,
            1,
            "EOF inside a head: {:?}",
            String::from_utf8_lossy(&buf)
        );
        buf.push(byte[0]);
    }
    let head = String::from_utf8(buf).unwrap();
    let len = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .map_or(0, |v| v.trim().parse().unwrap());
    let mut body = vec![0; len];
    s.read_exact(&mut body).unwrap();
    (head, body)
}

/// Waits until the (single) worker has begun draining: its listener is closed, so a new
/// connection is refused.
fn wait_for_drain(addr: SocketAddr) {
    while TcpStream::connect(addr).is_ok() {
        std::thread::yield_now();
    }
}

fn assert_closed(s: &mut TcpStream) {
    let mut rest = Vec::new();
    match s.read_to_end(&mut rest) {
        Ok(_) => assert!(rest.is_empty(), "bytes after close: {rest:?}"),
        Err(e) => assert_eq!(e.kind(), ErrorKind::ConnectionReset),
    }
}

const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";

#[test]
fn keep_alive_serves_many_requests_on_one_connection() {
    let (_server, addr) = start(common::loopback(1));
    let mut s = connect(addr);
    for _ in 0..100 {
        s.write_all(GET).unwrap();
        let (head, body) = read_response(&mut s);
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"));
        assert_eq!(body, b"ok");
    }
}

#[test]
fn a_large_pipelined_batch_is_answered_in_order() {
    let (_server, addr) = start(common::loopback(1));
    let mut s = connect(addr);
    let mut batch = Vec::new();
    for i in 0..500 {
        batch.extend_from_slice(
            format!(
                "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: {}\r\n\r\n{i}",
                i.to_string().len()
            )
            .as_bytes(),
        );
    }
    let mut w = s.try_clone().unwrap();
    let writer = std::thread::spawn(move || w.write_all(&batch).unwrap());
    for i in 0..500 {
        let (_, body) = read_response(&mut s);
        assert_eq!(body, i.to_string().as_bytes());
    }
    writer.join().unwrap();
}

/// Many connections with requests in flight at once, so one wait reports several and the
/// worker batches their reads and writes (where io_uring is available): every kind of request
/// must still get exactly its own answer, in order, and a `Connection: close` its close.
#[test]
fn many_connections_at_once_each_get_their_own_answers() {
    let (server, addr) = start(common::loopback(1));
    let mut conns: Vec<TcpStream> = (0..64).map(|_| connect(addr)).collect();
    for round in 0..20 {
        for (i, s) in conns.iter_mut().enumerate() {
            let req = match i % 4 {
                0 => GET.to_vec(),
                1 => {
                    let body = format!("{round}-{i}");
                    format!(
                        "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    )
                    .into_bytes()
                }
                // Two pipelined requests in one write.
                2 => [GET, GET].concat(),
                _ => b"GET /missing HTTP/1.1\r\nHost: a\r\n\r\n".to_vec(),
            };
            s.write_all(&req).unwrap();
        }
        for (i, s) in conns.iter_mut().enumerate() {
            let (head, body) = read_response(s);
            match i % 4 {
                0 => assert_eq!(
                    (head.starts_with("HTTP/1.1 200 "), &body[..]),
                    (true, &b"ok"[..])
                ),
                1 => assert_eq!(body, format!("{round}-{i}").as_bytes()),
                2 => {
                    assert_eq!(body, b"ok");
                    assert_eq!(read_response(s).1, b"ok");
                }
                _ => assert!(head.starts_with("HTTP/1.1 404 "), "{head}"),
            }
        }
    }
    for s in &mut conns {
        s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            .unwrap();
    }
    for s in &mut conns {
        let (head, body) = read_response(s);
        assert!(head.contains("Connection: close\r\n"), "{head}");
        assert_eq!(body, b"ok");
        assert_closed(s);
    }
    assert_eq!(server.metrics().requests, 64 * 20 * 5 / 4 + 64);
}

#[test]
fn metrics_count_requests_and_responses() {
    let (server, addr) = start(common::loopback(1));
    let mut s = connect(addr);
    s.write_all(GET).unwrap();
    read_response(&mut s);
    s.write_all(b"GET /nope HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    read_response(&mut s);
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    let (_, body) = read_response(&mut s);
    let text = String::from_utf8(body).unwrap();
    assert!(
        text.contains("twelve_responses_total{class=\"2xx\"} 1\n"),
        "{text}"
    );
    assert!(
        text.contains("twelve_responses_total{class=\"4xx\"} 1\n"),
        "{text}"
    );
    let m = server.metrics();
    assert_eq!(m.requests, 3);
    assert_eq!(m.accepts, 1);
}

#[test]
fn no_metrics_path_means_404() {
    let (_server, addr) = start(Config {
        metrics_path: None,
        ..common::loopback(1)
    });
    let mut s = connect(addr);
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    assert!(read_response(&mut s).0.starts_with("HTTP/1.1 404"));
}

#[test]
fn connections_over_max_conns_wait_in_the_queue_until_one_closes() {
    let (server, addr) = start(Config {
        max_conns_per_worker: 2,
        ..common::loopback(1)
    });
    let mut a = connect(addr);
    let mut b = connect(addr);
    for s in [&mut a, &mut b] {
        s.write_all(GET).unwrap();
        read_response(s);
    }
    let mut c = connect(addr);
    c.write_all(GET).unwrap();
    c.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut byte = [0u8; 1];
    let waited = c.read(&mut byte).unwrap_err().kind();
    assert!(matches!(
        waited,
        ErrorKind::WouldBlock | ErrorKind::TimedOut
    ));
    drop(a);
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    assert!(read_response(&mut c).0.starts_with("HTTP/1.1 200"));
    assert!(server.metrics().max_conns_pauses >= 1);
}

#[test]
fn a_slow_head_gets_408_and_an_idle_connection_a_silent_close() {
    let (server, addr) = start(Config {
        timeouts: Timeouts {
            header: Duration::from_millis(200),
            keep_alive: Duration::from_millis(200),
            ..Timeouts::default()
        },
        ..common::loopback(1)
    });
    let mut slow = connect(addr);
    slow.write_all(b"GET / HTTP/1.1\r\nHo").unwrap();
    let (head, _) = read_response(&mut slow);
    assert!(head.starts_with("HTTP/1.1 408 "), "{head}");
    assert!(head.contains("Connection: close\r\n"));
    assert_closed(&mut slow);
    let mut idle = connect(addr);
    assert_closed(&mut idle);
    let m = server.metrics();
    assert_eq!(m.timeouts[0], 1, "header timeouts");
    assert_eq!(m.timeouts[2], 1, "keep-alive timeouts");
}

#[test]
fn shutdown_closes_idle_connections_and_finishes_in_flight_ones() {
    let (server, addr) = start(common::loopback(1));
    let mut idle = connect(addr);
    idle.write_all(GET).unwrap();
    read_response(&mut idle);
    let mut busy = connect(addr);
    busy.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n").unwrap();
    // Wait until the worker has seen the partial head (its byte count moved).
    while server.metrics().bytes_in < (GET.len() * 2 - 2) as u64 {
        std::thread::yield_now();
    }
    server.shutdown();
    wait_for_drain(addr);
    assert_closed(&mut idle);
    busy.write_all(b"\r\n").unwrap();
    let (head, _) = read_response(&mut busy);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.contains("Connection: close\r\n"), "{head}");
    assert_closed(&mut busy);
    server.join();
    assert!(
        TcpStream::connect(addr).is_err(),
        "still accepting after shutdown"
    );
}

/// `shutdown` returns once no worker takes a new connection (their stop is asynchronous):
/// from then on every listener is closed and a connection is refused, never answered by the
/// draining server. An upgrade's successor relies on it (tests/tls_cli.rs).
#[test]
fn shutdown_returns_once_no_worker_accepts() {
    for round in 0..20 {
        let server = Server::new(common::loopback(2), router()).start().unwrap();
        let addrs = server.local_addrs().to_vec();
        // Waits on the event, not on shutdown's one-second bound: on a loaded machine a
        // worker may not run within it, and a second call waits again.
        let mut calls = 1;
        while !server.shutdown() {
            calls += 1;
            assert!(
                calls <= 60,
                "round {round}: a worker still accepted after 60 s"
            );
        }
        for addr in addrs {
            assert!(
                TcpStream::connect(addr).is_err(),
                "round {round}: {addr} accepted a connection after shutdown returned"
            );
        }
        server.join();
    }
}

#[test]
fn ipv6_loopback_listens_when_available() {
    let config = Config {
        listen: vec!["[::1]:0".parse().unwrap()],
        ..common::loopback(1)
    };
    match Server::new(config, router()).start() {
        Ok(server) => {
            let mut s = connect(server.local_addrs()[0]);
            s.write_all(GET).unwrap();
            assert!(read_response(&mut s).0.starts_with("HTTP/1.1 200"));
        }
        Err(e) => skip_or_fail(format!("no IPv6 loopback ({e})")),
    }
}

#[test]
fn drain_can_keep_idle_connections_for_one_last_request() {
    let (server, addr) = start(Config {
        close_idle_on_drain: false,
        ..common::loopback(1)
    });
    let mut idle = connect(addr);
    idle.write_all(GET).unwrap();
    read_response(&mut idle);
    server.shutdown();
    wait_for_drain(addr);
    idle.write_all(GET).unwrap();
    let (head, _) = read_response(&mut idle);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.contains("Connection: close\r\n"), "{head}");
    assert_closed(&mut idle);
    server.join();
}

#[test]
fn start_errors_say_what_failed() {
    let offline = Config {
        cpus: twelve_sys::CpuList::from_cpus([4000]),
        ..common::loopback(1)
    };
    let err = Server::new(offline, router()).start().unwrap_err();
    assert!(
        matches!(err, twelve_engine::StartError::Worker { cpu: 4000, .. }),
        "{err}"
    );
    let taken = Config {
        listen: vec!["192.0.2.1:80".parse().unwrap()],
        ..common::loopback(1)
    };
    let err = Server::new(taken, router()).start().unwrap_err();
    assert!(
        matches!(err, twelve_engine::StartError::Listen { .. }),
        "{err}"
    );
    // A busy port is refused instead of silently joining the other server's reuseport group.
    let (_first, busy) = start(common::loopback(1));
    let second = Config {
        listen: vec![busy],
        ..common::loopback(1)
    };
    let err = Server::new(second, router()).start().unwrap_err();
    assert!(
        matches!(&err, twelve_engine::StartError::Listen { source, .. }
            if source.kind() == ErrorKind::AddrInUse),
        "{err}"
    );
    let nothing = Config {
        listen: Vec::new(),
        ..common::loopback(1)
    };
    let err = Server::new(nothing, router()).start().unwrap_err();
    assert!(
        matches!(err, twelve_engine::StartError::NoListenAddress),
        "{err}"
    );
}

#[test]
fn listeners_handed_to_a_successor_keep_serving_on_the_same_port() {
    // As in an upgrade: the old generation may have accepted some of the queued connections
    // before it drains; it answers their first request (with close) instead of closing them.
    let (old, addr) = start(Config {
        close_idle_on_drain: false,
        drain_timeout: Duration::from_secs(1),
        ..common::loopback(1)
    });
    let mut before = connect(addr);
    before.write_all(GET).unwrap();
    assert_eq!(read_response(&mut before).1, b"ok");
    let successor = Router::new().get("/", |_req, _body, r| r.send(200, "text/plain", &[], b"new"));
    let new = Server::new(common::loopback(1), successor)
        .start_with_listeners(old.listener_dups().unwrap())
        .unwrap();
    assert_eq!(new.local_addrs(), &[addr]);
    // Requests while both generations hold the socket: each is answered by one of them.
    let mut queued: Vec<TcpStream> = (0..20).map(|_| connect(addr)).collect();
    for s in &mut queued {
        s.write_all(GET).unwrap();
    }
    old.shutdown();
    old.join();
    for mut s in queued {
        let body = read_response(&mut s).1;
        assert!(body == b"ok" || body == b"new", "{body:?}");
    }
    let mut after = connect(addr);
    after.write_all(GET).unwrap();
    assert_eq!(read_response(&mut after).1, b"new");
}

#[test]
fn inherited_sockets_must_be_listeners() {
    let not_listening = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let err = Server::new(common::loopback(1), router())
        .start_with_listeners(vec![vec![not_listening.into()]])
        .unwrap_err();
    assert!(
        matches!(err, twelve_engine::StartError::Inherited { worker: 0, .. }),
        "{err}"
    );
    let err = Server::new(common::loopback(1), router())
        .start_with_listeners(Vec::new())
        .unwrap_err();
    assert!(
        matches!(err, twelve_engine::StartError::Inherited { .. }),
        "{err}"
    );
}

/// The workers run the backend the suite asked for (`TWELVE_TEST_IO`), so the uring pass
/// really tests io_uring.
#[test]
fn workers_run_the_backend_asked_for() {
    let (server, _) = start(common::loopback(1));
    assert_eq!(server.backends(), &[common::test_io()]);
    assert_eq!(server.io_fallback(), None);
}

#[test]
fn generation_header_is_on_every_response_and_in_metrics() {
    let (server, addr) = start(Config {
        generation: 7,
        generation_header: Some("X-Twelve-Generation".to_owned()),
        ..common::loopback(1)
    });
    let mut s = connect(addr);
    // The fast path (no extra fields) and the general one (metrics has none either, but a
    // HEAD goes through the same head writer): both carry the line before the blank line.
    s.write_all(GET).unwrap();
    let (head, body) = read_response(&mut s);
    assert!(head.contains("\r\nX-Twelve-Generation: 7\r\n"), "{head}");
    assert_eq!(body, b"ok");
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let (head, body) = read_response(&mut s);
    assert!(head.contains("X-Twelve-Generation: 7"), "{head}");
    let text = String::from_utf8(body).unwrap();
    assert!(text.contains("\ntwelve_generation 7\n"), "{text}");
    assert_eq!(server.metrics().generation, 7);
}

#[test]
fn no_generation_header_by_default() {
    let (_server, addr) = start(common::loopback(1));
    let mut s = connect(addr);
    s.write_all(GET).unwrap();
    let (head, _) = read_response(&mut s);
    assert!(!head.contains("Generation"), "{head}");
}

#[test]
fn a_body_trickled_below_the_minimum_rate_gets_408_and_is_counted() {
    let (server, addr) = start(Config {
        timeouts: Timeouts {
            body_idle: Duration::from_secs(2),
            body_min_rate_per_s: 1000,
            ..Timeouts::default()
        },
        ..common::loopback(1)
    });
    let mut slow = connect(addr);
    slow.write_all(b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 1000\r\n\r\n")
        .unwrap();
    // One byte per 100 ms never lets the 2 s idle timer expire; at 10 B/s the body earns
    // 10 ms a second, so the whole-body deadline (2 s after its start, plus what it earned)
    // ends it. The client's pace, not a wait for the server.
    slow.set_nonblocking(true).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    for _ in 0..100 {
        if slow.write_all(b"a").is_err() {
            break;
        }
        match slow.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                got.extend_from_slice(&buf[..n]);
                break;
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
    let head = String::from_utf8_lossy(&got);
    assert!(head.starts_with("HTTP/1.1 408 "), "{head}");
    assert_eq!(server.metrics().timeouts[5], 1, "counted as body_rate");
}
