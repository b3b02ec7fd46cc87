//! Async handlers on the worker's own loop, on both backends: pipelined answers in request
//! order whichever finishes first, a connection's close dropping its waiting future, the
//! handler deadline's 503, a waiting request answered through a drain, `HEAD`, a streamed body
//! behind a waiting answer.

mod common;
use common::on_both_backends;

use common::{BOUND, TestServer, loopback};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use twelve_engine::rt::sleep;
use twelve_engine::{Backend, BodySink, Config, Method, Reply, Request, Response, Router};

/// Counts of the `/hold` handler: futures started, and dropped.
#[derive(Default)]
struct Counts {
    started: AtomicUsize,
    dropped: AtomicUsize,
}

/// A streamed body's byte count (`POST /count`), answered when the body ends.
struct Counted(usize);

impl BodySink for Counted {
    fn data(&mut self, bytes: &[u8]) {
        self.0 += bytes.len();
    }

    fn end(self: Box<Self>, _req: &Request<'_, '_>, res: &mut Response<'_>) {
        res.send(200, "text/plain", &[], self.0.to_string().as_bytes())
    }
}

/// Adds one to `dropped` when the future holding it is dropped.
struct OnDrop(Arc<Counts>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

fn query_ms(req: &Request<'_, '_>) -> u64 {
    let q = req.query_bytes().unwrap_or_default();
    std::str::from_utf8(q)
        .ok()
        .and_then(|q| q.strip_prefix("ms="))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn router(counts: &Arc<Counts>) -> Router {
    let hold = Arc::clone(counts);
    let started = Arc::clone(counts);
    Router::new()
        .get(
            "/",
            |_: &Request<'_, '_>, _: &[u8], r: &mut Response<'_>| {
                r.send(200, "text/plain", &[], b"root")
            },
        )
        .get(
            "/sync",
            |_: &Request<'_, '_>, _: &[u8], r: &mut Response<'_>| {
                r.send(200, "text/plain", &[], b"now")
            },
        )
        .get_async("/delay", move |req: &Request<'_, '_>, _: &[u8]| {
            let ms = query_ms(req);
            let counts = Arc::clone(&started);
            async move {
                counts.started.fetch_add(1, Ordering::SeqCst);
                sleep(Duration::from_millis(ms)).await;
                Reply::text(200, format!("slept {ms}"))
            }
        })
        .get_async("/panic", |_: &Request<'_, '_>, _: &[u8]| async {
            sleep(Duration::from_millis(1)).await;
            panic!("a handler's bug");
            #[allow(unreachable_code)]
            Reply::text(200, "never")
        })
        .streamed(Method::Post, "/count", |_: &Request<'_, '_>| {
            Box::new(Counted(0)) as Box<dyn BodySink>
        })
        .get_async("/hold", move |_: &Request<'_, '_>, _: &[u8]| {
            let guard = OnDrop(Arc::clone(&hold));
            async move {
                guard.0.started.fetch_add(1, Ordering::SeqCst);
                sleep(Duration::from_secs(3600)).await;
                drop(guard);
                Reply::text(200, "never")
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

/// Waits until `done` holds (a counter the handlers keep), at most [`BOUND`].
fn wait_until(what: &str, done: impl Fn() -> bool) {
    let until = Instant::now() + BOUND;
    while !done() {
        assert!(Instant::now() < until, "waited {BOUND:?} for {what}");
        // The poll interval, not a synchronization: the condition is.
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn get(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: a\r\n\r\n")
}

fn pipelined_answers_keep_request_order(io: Backend) {
    let counts = Arc::new(Counts::default());
    let s = TestServer::start_router(config(io), router(&counts));
    let mut c = s.connect();
    let batch = [
        get("/delay?ms=120"),
        get("/delay?ms=1"),
        get("/sync"),
        get("/delay?ms=0"),
        get("/sync"),
    ]
    .concat();
    c.send(batch.as_bytes());
    let bodies: Vec<String> = (0..5)
        .map(|_| String::from_utf8(c.response().body).unwrap())
        .collect();
    assert_eq!(
        bodies,
        ["slept 120", "slept 1", "now", "slept 0", "now"],
        "in request order"
    );
    // The connection goes on.
    c.send(get("/delay?ms=2").as_bytes());
    assert_eq!(c.response().body, b"slept 2");
    drop(c);
    s.finish();
}

fn a_closed_connection_drops_its_waiting_future(io: Backend) {
    let counts = Arc::new(Counts::default());
    let s = TestServer::start_router(config(io), router(&counts));
    let mut c = s.connect();
    c.send([get("/hold"), get("/hold")].concat().as_bytes());
    wait_until("both handlers to start", || {
        counts.started.load(Ordering::SeqCst) == 2
    });
    assert_eq!(counts.dropped.load(Ordering::SeqCst), 0);
    drop(c);
    wait_until("both futures to be dropped", || {
        counts.dropped.load(Ordering::SeqCst) == 2
    });
    s.wait_idle();
    s.finish();
}

fn a_late_handler_gets_503_and_the_connection_goes_on(io: Backend) {
    let counts = Arc::new(Counts::default());
    let config = Config {
        handler_timeout: Duration::from_millis(100),
        ..config(io)
    };
    let s = TestServer::start_router(config, router(&counts));
    let mut c = s.connect();
    c.send([get("/hold"), get("/sync")].concat().as_bytes());
    let r = c.response();
    assert_eq!(r.status, 503, "{r:?}");
    assert!(!r.closes());
    assert_eq!(c.response().body, b"now", "the answer behind it follows");
    assert_eq!(counts.dropped.load(Ordering::SeqCst), 1, "future dropped");
    assert_eq!(s.metrics().timeouts[6], 1, "counted as a handler timeout");
    assert_eq!(s.metrics().responses_by_class[5], 1);
    drop(c);
    s.finish();
}

fn a_waiting_request_is_answered_through_the_drain(io: Backend) {
    let counts = Arc::new(Counts::default());
    let s = TestServer::start_router(config(io), router(&counts));
    let mut c = s.connect();
    c.send(get("/delay?ms=200").as_bytes());
    wait_until("the handler to start", || {
        counts.started.load(Ordering::SeqCst) == 1
    });
    s.handle.shutdown();
    let r = c.response();
    assert_eq!((r.status, r.body.as_slice()), (200, &b"slept 200"[..]));
    assert!(r.closes(), "the drain's last answer closes: {r:?}");
    c.expect_eof();
}

fn head_of_an_async_route_has_no_body(io: Backend) {
    let counts = Arc::new(Counts::default());
    let s = TestServer::start_router(config(io), router(&counts));
    let mut c = s.connect();
    c.send(b"HEAD /delay?ms=1 HTTP/1.1\r\nHost: a\r\n\r\n");
    let r = c.head_response();
    assert_eq!(r.header("content-length"), Some("7"));
    c.send(get("/sync").as_bytes());
    assert_eq!(c.response().body, b"now", "no body bytes came before it");
    drop(c);
    s.finish();
}

fn a_panicking_future_costs_its_request_not_the_worker(io: Backend) {
    let counts = Arc::new(Counts::default());
    let s = TestServer::start_router(config(io), router(&counts));
    let mut c = s.connect();
    c.send(get("/panic").as_bytes());
    let r = c.response();
    assert_eq!(r.status, 500);
    assert!(r.closes(), "{r:?}");
    c.expect_eof();
    // The worker lives on.
    let mut c = s.connect();
    c.send(get("/delay?ms=1").as_bytes());
    assert_eq!(c.response().body, b"slept 1");
    drop(c);
    s.finish();
}

/// A streamed body pipelined behind a waiting answer waits for it (the answer's slot and the
/// stream's state share the connection's box), then streams: both answered, in order.
fn a_streamed_body_behind_a_waiting_answer_waits_for_it(io: Backend) {
    let counts = Arc::new(Counts::default());
    let s = TestServer::start_router(config(io), router(&counts));
    let mut c = s.connect();
    let body = vec![b'x'; 100_000];
    let head = format!(
        "POST /count HTTP/1.1\r\nHost: a\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let first = [
        get("/delay?ms=60").as_bytes(),
        head.as_bytes(),
        &body[..1000],
    ]
    .concat();
    c.send(&first);
    wait_until("the delay to start", || {
        counts.started.load(Ordering::SeqCst) == 1
    });
    c.send(&body[1000..50_000]);
    assert_eq!(c.response().body, b"slept 60");
    c.send(&body[50_000..]);
    assert_eq!(c.response().body, b"100000");
    // The connection goes on.
    c.send(get("/sync").as_bytes());
    assert_eq!(c.response().body, b"now");
    drop(c);
    s.finish();
}

on_both_backends! {
    pipelined_answers_keep_request_order,
    a_closed_connection_drops_its_waiting_future,
    a_late_handler_gets_503_and_the_connection_goes_on,
    a_waiting_request_is_answered_through_the_drain,
    head_of_an_async_route_has_no_body,
    a_panicking_future_costs_its_request_not_the_worker,
    a_streamed_body_behind_a_waiting_answer_waits_for_it,
}
