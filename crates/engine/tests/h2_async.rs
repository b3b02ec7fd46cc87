//! Async routes over HTTP/2, in raw frames, on both backends: concurrent streams on one
//! connection each answered when its future is ready (out of order), a stream the peer resets
//! dropping its future, the handler deadline's 503 on its stream, a graceful drain that waits
//! for the streams in flight, a closed connection dropping every waiting future, and the same
//! over TLS (ALPN `h2`).

mod common;
use common::on_both_backends;

use common::{BOUND, TestServer, loopback};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use twelve_engine::apps::httparena;
use twelve_engine::rt::sleep;
use twelve_engine::{Backend, Config, Reply, Request, Response};
use twelve_http::h2::{ErrorCode, Frame};
use twelve_testkit::h2::{Client, Got, request};

/// What the test routes count: `/hold` futures started and dropped, and the gate `/gate`
/// waits on.
#[derive(Default)]
struct Counts {
    started: AtomicUsize,
    dropped: AtomicUsize,
    gate: AtomicBool,
}

/// Adds one to `dropped` when the future holding it is dropped.
struct OnDrop(Arc<Counts>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

/// HttpArena's router (`/delay/{ms}` among its routes), plus `GET /` ("root", for
/// `TestServer::finish`), `/hold` (waits an hour, counting its start and its drop) and
/// `/gate` (answers once the test opens the gate).
fn router(counts: &Arc<Counts>) -> twelve_engine::Router {
    let (hold, gate) = (Arc::clone(counts), Arc::clone(counts));
    httparena::router()
        .get(
            "/",
            |_: &Request<'_, '_>, _: &[u8], r: &mut Response<'_>| {
                r.send(200, "text/plain", &[], b"root")
            },
        )
        .get_async("/hold", move |_: &Request<'_, '_>, _: &[u8]| {
            let guard = OnDrop(Arc::clone(&hold));
            async move {
                guard.0.started.fetch_add(1, Ordering::SeqCst);
                sleep(Duration::from_secs(3600)).await;
                drop(guard);
                Reply::text(200, "never")
            }
        })
        .get_async("/gate", move |_: &Request<'_, '_>, _: &[u8]| {
            let counts = Arc::clone(&gate);
            async move {
                counts.started.fetch_add(1, Ordering::SeqCst);
                // Polled on the worker's timer wheel: the test's flag wakes nothing itself.
                while !counts.gate.load(Ordering::SeqCst) {
                    sleep(Duration::from_millis(1)).await;
                }
                Reply::text(200, "opened")
            }
        })
}

fn config(io: Backend) -> Config {
    Config {
        io,
        handler_timeout: Duration::from_secs(10),
        ..loopback(1)
    }
}

fn start(io: Backend, counts: &Arc<Counts>) -> TestServer {
    TestServer::start_router(config(io), router(counts))
}

/// Waits until `done` holds (a counter the handlers keep), at most [`BOUND`].
fn wait_until(what: &str, done: impl Fn() -> bool) {
    let until = Instant::now() + BOUND;
    while !done() {
        assert!(Instant::now() < until, "waited {BOUND:?} for {what}");
        // The poll interval, not a synchronization: the condition is.
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// A response as it arrives, frame by frame.
#[derive(Debug, Default)]
struct Answer {
    status: u16,
    body: Vec<u8>,
}

/// Reads frames until every stream of `ids` has ended; returns each stream's answer and the
/// order in which the streams ended. A reset, GOAWAY or close before that fails the test.
fn answers<S: Read + Write>(c: &mut Client<S>, ids: &[u32]) -> (HashMap<u32, Answer>, Vec<u32>) {
    let mut got: HashMap<u32, Answer> = HashMap::new();
    let mut ended = Vec::new();
    while ended.len() < ids.len() {
        let (stream, end) = match c.next_frame() {
            Got::Headers {
                stream,
                end_stream,
                fields,
            } => {
                let a = got.entry(stream).or_default();
                for (n, v) in fields {
                    if n == ":status" {
                        a.status = v.parse().unwrap();
                    }
                }
                (stream, end_stream)
            }
            Got::Data {
                stream,
                end_stream,
                data,
            } => {
                got.entry(stream).or_default().body.extend_from_slice(&data);
                (stream, end_stream)
            }
            g @ (Got::Reset { .. } | Got::GoAway { .. } | Got::Closed) => {
                panic!("{g:?} before every stream ended; ended {ended:?}")
            }
            _ => continue,
        };
        if end {
            assert!(ids.contains(&stream), "an answer on stream {stream}");
            ended.push(stream);
        }
    }
    (got, ended)
}

fn body(a: &Answer) -> &str {
    std::str::from_utf8(&a.body).unwrap()
}

fn concurrent_streams_are_each_answered_when_ready(io: Backend) {
    let counts = Arc::new(Counts::default());
    let s = start(io, &counts);
    let mut c = Client::connect(s.addr, BOUND);
    c.batch();
    c.get(1, "/gate");
    c.get(3, "/delay/40");
    c.get(5, "/delay/1");
    c.get(7, "/");
    c.get(9, "/delay/0");
    c.get(11, "/delay/15");
    c.flush();
    // Every stream but the gated one is answered while it waits: out of order.
    let (got, _) = answers(&mut c, &[3, 5, 7, 9, 11]);
    for (id, want) in [(3, "40"), (5, "1"), (7, "root"), (9, "0"), (11, "15")] {
        assert_eq!(
            (got[&id].status, body(&got[&id])),
            (200, want),
            "stream {id}"
        );
    }
    counts.gate.store(true, Ordering::SeqCst);
    let (got, _) = answers(&mut c, &[1]);
    assert_eq!((got[&1].status, body(&got[&1])), (200, "opened"));
    // The connection goes on, HEAD included.
    c.headers(13, &request("HEAD", "/delay/2"), true);
    let r = c.response(13).unwrap();
    assert_eq!((r.status, r.field("content-length")), (200, Some("1")));
    assert!(r.body.is_empty());
    let m = s.metrics();
    assert_eq!((m.h2_requests, m.responses_by_class[2]), (7, 7));
    drop(c);
    s.finish();
}

fn a_reset_stream_drops_its_future(io: Backend) {
    let counts = Arc::new(Counts::default());
    let s = start(io, &counts);
    let mut c = Client::connect(s.addr, BOUND);
    c.get(1, "/hold");
    c.get(3, "/hold");
    wait_until("both handlers to start", || {
        counts.started.load(Ordering::SeqCst) == 2
    });
    c.frame(Frame::RstStream {
        stream: 1,
        code: ErrorCode::Cancel.code(),
    });
    wait_until("the reset stream's future to be dropped", || {
        counts.dropped.load(Ordering::SeqCst) == 1
    });
    // The other stream still waits, and the connection answers new ones.
    c.get(5, "/delay/1");
    let (got, _) = answers(&mut c, &[5]);
    assert_eq!(body(&got[&5]), "1");
    assert_eq!(counts.dropped.load(Ordering::SeqCst), 1);
    drop(c);
    wait_until("the closed connection's future to be dropped", || {
        counts.dropped.load(Ordering::SeqCst) == 2
    });
    s.wait_idle();
    s.finish();
}

fn a_late_handler_gets_503_on_its_stream(io: Backend) {
    let counts = Arc::new(Counts::default());
    let config = Config {
        handler_timeout: Duration::from_millis(100),
        ..config(io)
    };
    let s = TestServer::start_router(config, router(&counts));
    let mut c = Client::connect(s.addr, BOUND);
    c.batch();
    c.get(1, "/hold");
    c.get(3, "/delay/0");
    c.flush();
    let (got, _) = answers(&mut c, &[1, 3]);
    assert_eq!((got[&3].status, body(&got[&3])), (200, "0"));
    assert_eq!(got[&1].status, 503);
    assert_eq!(body(&got[&1]), "503 handler timed out\n");
    assert_eq!(counts.dropped.load(Ordering::SeqCst), 1, "future dropped");
    let m = s.metrics();
    assert_eq!(m.timeouts[6], 1, "counted as a handler timeout");
    assert_eq!(m.responses_by_class[5], 1);
    // The connection goes on.
    c.get(5, "/delay/1");
    assert_eq!(c.response(5).unwrap().body, b"1");
    drop(c);
    s.finish();
}

/// The graceful close waits for the streams in flight: GOAWAY and PING go out at once, the
/// waiting streams are answered when ready, then the last GOAWAY and the close.
fn a_drain_answers_the_waiting_streams(io: Backend) {
    let counts = Arc::new(Counts::default());
    let s = start(io, &counts);
    let mut c = Client::connect(s.addr, BOUND);
    c.get(1, "/gate");
    c.get(3, "/gate");
    wait_until("both handlers to start", || {
        counts.started.load(Ordering::SeqCst) == 2
    });
    assert!(s.handle.shutdown());
    let ping = loop {
        match c.next_frame() {
            Got::GoAway { last_stream, code } => {
                assert_eq!((last_stream, code), ((1 << 31) - 1, 0));
            }
            Got::Ping { ack: false, data } => break data,
            g @ (Got::Closed | Got::Headers { .. } | Got::Data { .. }) => {
                panic!("{g:?} before the drain's PING")
            }
            _ => {}
        }
    };
    c.frame(Frame::Ping {
        ack: true,
        data: ping,
    });
    counts.gate.store(true, Ordering::SeqCst);
    let mut last = None;
    let mut ended = Vec::new();
    loop {
        match c.next_frame() {
            Got::Data {
                stream,
                end_stream: true,
                data,
            } => {
                assert_eq!(data, b"opened");
                ended.push(stream);
            }
            Got::GoAway { last_stream, code } => last = Some((last_stream, code)),
            Got::Closed => break,
            Got::Reset { stream, .. } => panic!("stream {stream} reset"),
            _ => {}
        }
    }
    ended.sort_unstable();
    assert_eq!(ended, [1, 3], "both waiting streams answered");
    assert_eq!(last, Some((3, 0)), "the last GOAWAY names the last stream");
}

fn a_closed_connection_drops_every_waiting_future(io: Backend) {
    let counts = Arc::new(Counts::default());
    let s = start(io, &counts);
    let mut c = Client::connect(s.addr, BOUND);
    c.get(1, "/hold");
    c.get(3, "/hold");
    c.get(5, "/hold");
    wait_until("the handlers to start", || {
        counts.started.load(Ordering::SeqCst) == 3
    });
    drop(c);
    wait_until("every future to be dropped", || {
        counts.dropped.load(Ordering::SeqCst) == 3
    });
    s.wait_idle();
    s.finish();
}

/// A TLS client's socket as one `Read + Write` stream of plaintext, for the raw-frame client.
struct TlsStream {
    sock: TcpStream,
    tls: twelve_tls::Session,
}

impl TlsStream {
    fn push(&mut self) -> std::io::Result<()> {
        let out = self.tls.outgoing().to_vec();
        self.tls.sent(out.len());
        self.sock.write_all(&out)
    }
}

impl Read for TlsStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut cipher = vec![0; 16 * 1024];
        loop {
            self.push()?;
            let n = self
                .tls
                .read_into(buf)
                .map_err(|f| std::io::Error::other(format!("{f:?}")))?;
            if n > 0 || self.tls.peer_closed() {
                return Ok(n);
            }
            let got = self.sock.read(&mut cipher)?;
            if got == 0 {
                return Ok(0);
            }
            self.tls
                .feed(&cipher[..got])
                .map_err(|f| std::io::Error::other(format!("{f:?}")))?;
        }
    }
}

impl Write for TlsStream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tls.write_plain(buf);
        self.push()?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.push()
    }
}

fn streams_wait_and_answer_over_tls(io: Backend) {
    use twelve_tls::{ClientOptions, ClientTls, ServerTls, testing::Pki};
    let pki = Pki::new("h2-async");
    let counts = Arc::new(Counts::default());
    let config = Config {
        tls: Some(Arc::new(ServerTls::load(&pki.cert, &pki.key).unwrap())),
        ..config(io)
    };
    let s = TestServer::start_router(config, router(&counts));
    let client = ClientTls::new(&ClientOptions {
        cacert: Some(pki.ca_pem.clone()),
        ..ClientOptions::default()
    })
    .unwrap()
    .with_alpn_h2();
    let sock = TcpStream::connect(s.addr).unwrap();
    sock.set_read_timeout(Some(BOUND)).unwrap();
    let tls = client.session(&ClientTls::server_name("localhost").unwrap());
    let mut c = Client::raw(TlsStream { sock, tls });
    c.preface(&[]);
    c.batch();
    c.get(1, "/gate");
    c.get(3, "/delay/20");
    c.get(5, "/delay/1");
    c.flush();
    let (got, _) = answers(&mut c, &[3, 5]);
    assert_eq!((body(&got[&3]), body(&got[&5])), ("20", "1"));
    counts.gate.store(true, Ordering::SeqCst);
    let (got, _) = answers(&mut c, &[1]);
    assert_eq!(body(&got[&1]), "opened");
    c.get(7, "/hold");
    wait_until("the hold to start", || {
        counts.started.load(Ordering::SeqCst) == 2
    });
    drop(c);
    wait_until("the closed connection's future to be dropped", || {
        counts.dropped.load(Ordering::SeqCst) == 1
    });
    s.wait_idle();
}

on_both_backends! {
    concurrent_streams_are_each_answered_when_ready,
    a_reset_stream_drops_its_future,
    a_late_handler_gets_503_on_its_stream,
    a_drain_answers_the_waiting_streams,
    a_closed_connection_drops_every_waiting_future,
    streams_wait_and_answer_over_tls,
}
