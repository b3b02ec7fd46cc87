//! The generator against small servers written here (std::net, one thread per connection)
//! over loopback: exact request counts, `--close`, pipelining, requests per connection, the
//! open model, and each failure landing in its error class. Every run is bounded by a request
//! count or a sub-second duration.
//!
//! The suite runs on the epoll engine, and on io_uring with `TWELVE_TEST_IO=uring` (CI's second
//! pass); where io_uring is unavailable that pass says so and runs on epoll (a failure under
//! `TWELVE_REQUIRE_ALL_TESTS=1`).
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use twelve_load::{Arrival, ClientIo, Config, Model, Stop, Target};

/// The engine of this pass of the suite (see the module documentation).
fn test_io() -> ClientIo {
    static IO: std::sync::OnceLock<ClientIo> = std::sync::OnceLock::new();
    *IO.get_or_init(|| match std::env::var("TWELVE_TEST_IO").as_deref() {
        Ok("uring") => match twelve_sys::uring::ring::probe() {
            Ok(()) => ClientIo::Uring,
            Err(e) => {
                twelve_testkit::skip_or_fail(format!(
                    "io_uring unavailable here ({e}); running on epoll"
                ));
                ClientIo::Epoll
            }
        },
        _ => ClientIo::Epoll,
    })
}
use twelve_report::{JsonReport, RunResult, Summary};

#[derive(Clone, Copy, PartialEq)]
enum Behaviour {
    /// 200 with a 2-byte body, keep-alive unless the request said close.
    Ok,
    /// 503 with a body.
    Busy,
    /// Reads, never answers.
    Silent,
    /// Reads one request, then resets the connection (SO_LINGER 0).
    Reset,
    /// Answers with bytes that are not HTTP.
    Garbage,
    /// Promises 100 body bytes, sends 5, closes.
    MidBody,
    /// Like `Ok`, but the first connection accepted waits 100 ms before each answer.
    SlowFirst,
    /// Like `Ok`, but every answer waits 1 ms.
    Slow,
}

#[derive(Default)]
struct Seen {
    accepted: AtomicU64,
    answered: AtomicU64,
    /// Most complete requests found in one read: the pipelining depth that arrived.
    max_batch: AtomicU64,
    /// Requests answered on the first connection accepted.
    first_conn: AtomicU64,
}

fn server(b: Behaviour) -> (SocketAddr, Arc<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Seen::default());
    let s = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let first = s.accepted.fetch_add(1, Ordering::SeqCst) == 0;
            let s = s.clone();
            std::thread::spawn(move || serve(stream, b, first, &s));
        }
    });
    (addr, seen)
}

fn serve(mut stream: TcpStream, b: Behaviour, first: bool, seen: &Seen) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        let mut batch = 0;
        let mut close = false;
        let mut out = Vec::new();
        while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let req: Vec<u8> = buf.drain(..end + 4).collect();
            batch += 1;
            close |= String::from_utf8_lossy(&req).contains("Connection: close");
            match b {
                Behaviour::SlowFirst => {
                    if first {
                        std::thread::sleep(Duration::from_millis(100));
                        seen.first_conn.fetch_add(1, Ordering::SeqCst);
                    }
                    out.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                }
                Behaviour::Ok => {
                    out.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                }
                Behaviour::Slow => {
                    std::thread::sleep(Duration::from_millis(1));
                    out.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                }
                Behaviour::Busy => out.extend_from_slice(
                    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy",
                ),
                Behaviour::Silent => {}
                Behaviour::Reset => {
                    rustix::net::sockopt::set_socket_linger(&stream, Some(Duration::ZERO)).unwrap();
                    return;
                }
                Behaviour::Garbage => out.extend_from_slice(b"SSH-2.0-OpenSSH_9.6\r\n\r\n"),
                Behaviour::MidBody => {
                    let _ =
                        stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort");
                    return;
                }
            }
        }
        seen.max_batch.fetch_max(batch, Ordering::SeqCst);
        if matches!(
            b,
            Behaviour::Ok | Behaviour::Busy | Behaviour::SlowFirst | Behaviour::Slow
        ) {
            seen.answered.fetch_add(batch, Ordering::SeqCst);
        }
        if stream.write_all(&out).is_err() || close {
            return;
        }
    }
}

fn config(addr: SocketAddr, stop: Stop) -> Config {
    let mut c = Config::new(vec![Target::parse(&format!("http://{addr}/json")).unwrap()]);
    c.stop = stop;
    c.connections = 4;
    c.worker_cpus = vec![None, None];
    // Long enough that a loaded CI machine never turns a slow answer into a timeout; the
    // tests of the timeout itself set their own.
    c.timeout = Duration::from_secs(5);
    c.io = test_io();
    c
}

fn run(c: &Config) -> RunResult {
    twelve_load::run(c, |_| {}).unwrap().result
}

#[test]
fn request_count_matches_what_the_server_answered() {
    let (addr, seen) = server(Behaviour::Ok);
    let r = run(&config(addr, Stop::Requests(1000)));
    assert_eq!(r.requests(), 1000);
    assert_eq!(seen.answered.load(Ordering::SeqCst), 1000);
    // Merged totals equal the sum over workers.
    let per_worker: u64 = r.workers.iter().map(|w| w.latency.len()).sum();
    assert_eq!(r.merged_latency().len(), per_worker);
    assert_eq!(per_worker, 1000);
    assert_eq!(r.merged_errors().status[200], 1000);
    assert_eq!(r.merged_errors().total(), 0);
    assert!(r.concurrency_reached());
}

/// `--coalesce`: a fixed nap is taken after small batches and every count stays exact;
/// `auto` on a client with CPU to spare (it waits a millisecond for every answer) behaves as
/// an independent client and never naps; `off` never naps.
#[test]
fn coalescing_naps_after_small_batches_and_loses_nothing() {
    let (addr, seen) = server(Behaviour::Slow);
    let mut c = config(addr, Stop::Requests(400));
    c.worker_cpus = vec![None];
    c.connections = 16;
    c.rx_time = twelve_load::RxTime::Read;
    c.timeout = Duration::from_secs(2);
    let mut answered = 0;
    for (mode, naps) in [
        (
            twelve_load::Coalesce::Fixed(Duration::from_micros(100)),
            true,
        ),
        (twelve_load::Coalesce::Auto, false),
        (twelve_load::Coalesce::Off, false),
    ] {
        c.coalesce = mode;
        let r = run(&c);
        answered += 400;
        assert_eq!(r.requests(), 400, "{mode}");
        assert_eq!(seen.answered.load(Ordering::SeqCst), answered, "{mode}");
        assert_eq!(r.merged_errors().total(), 0, "{mode}");
        let taken: u64 = r.workers.iter().map(|w| w.naps).sum();
        assert_eq!(taken > 0, naps, "{mode}: {taken} naps");
    }
}

/// `--rx-time kernel` over real sockets, on this pass's engine: the reads bring the kernel's
/// receive stamps through to the booking. With 10 ms naps after every small batch, answers
/// that arrive during a nap are read late; the report then shows the wait between stamp and
/// read as read delay, which stays exactly 0 when no read brought a stamp (`--rx-time read`).
/// (What the stamps do to the latency is checked on the simulated clock, `tests/sim.rs`.)
#[test]
fn kernel_receive_stamps_reach_the_report_as_read_delay() {
    let (addr, seen) = server(Behaviour::Ok);
    let mut c = config(addr, Stop::Requests(100));
    c.worker_cpus = vec![None];
    c.coalesce = twelve_load::Coalesce::Fixed(Duration::from_millis(10));
    for (rx, stamped) in [
        (twelve_load::RxTime::Kernel, true),
        (twelve_load::RxTime::Read, false),
    ] {
        c.rx_time = rx;
        let before = seen.answered.load(Ordering::SeqCst);
        let r = run(&c);
        assert_eq!(r.requests(), 100);
        assert_eq!(seen.answered.load(Ordering::SeqCst) - before, 100);
        let naps: u64 = r.workers.iter().map(|w| w.naps).sum();
        assert!(naps > 0, "no nap taken");
        let delay = r.read_delay_ns_mean();
        assert_eq!(
            delay > 0.0,
            stamped,
            "{rx:?}: mean read delay {delay} ns, {naps} naps"
        );
    }
}

#[test]
fn close_opens_one_connection_per_request() {
    let (addr, seen) = server(Behaviour::Ok);
    let mut c = config(addr, Stop::Requests(200));
    c.keep_alive = false;
    let r = run(&c);
    assert_eq!(r.requests(), 200);
    assert_eq!(seen.accepted.load(Ordering::SeqCst), 200);
    assert_eq!(r.merged_conns().established, 200);
    assert_eq!(r.merged_errors().total(), 0);
}

#[test]
fn requests_per_conn_reopens_after_n() {
    let (addr, seen) = server(Behaviour::Ok);
    let mut c = config(addr, Stop::Requests(100));
    // One connection on one worker: with two, the last connections may share the tail.
    c.connections = 1;
    c.worker_cpus = vec![None];
    c.requests_per_conn = Some(10);
    let r = run(&c);
    assert_eq!(r.requests(), 100);
    assert_eq!(seen.accepted.load(Ordering::SeqCst), 10);
}

#[test]
fn pipelining_depth_is_honoured() {
    let (addr, seen) = server(Behaviour::Ok);
    let mut c = config(addr, Stop::Requests(400));
    c.connections = 2;
    c.pipeline = 4;
    let r = run(&c);
    assert_eq!(r.requests(), 400);
    assert_eq!(seen.answered.load(Ordering::SeqCst), 400);
    // One latency per request, not per batch.
    assert_eq!(r.merged_latency().len(), 400);
    let batch = seen.max_batch.load(Ordering::SeqCst);
    assert!(batch > 1 && batch <= 4, "largest batch {batch}");
}

#[test]
fn open_model_sends_exactly_the_scheduled_requests() {
    let (addr, seen) = server(Behaviour::Ok);
    let mut c = config(addr, Stop::Requests(300));
    c.model = Model::Open {
        rate_per_s: 3000.0,
        arrival: Arrival::Poisson,
        seed: 7,
    };
    let r = run(&c);
    assert_eq!(r.requests(), 300);
    assert_eq!(seen.answered.load(Ordering::SeqCst), 300);
    let lat = r.merged_latency();
    assert_eq!(lat.corrected.len(), 300);
    assert_eq!(lat.wait.len(), 300);
    assert!(lat.corrected.max() >= lat.uncorrected.max());
}

/// One request on each of 4 connections against a misbehaving server: every request fails,
/// none is retried, so each class must hold exactly 4 and the others none.
fn errors_of(b: Behaviour) -> twelve_report::Errors {
    let (addr, _) = server(b);
    let mut c = config(addr, Stop::Requests(4));
    c.timeout = Duration::from_millis(300);
    let r = run(&c);
    assert_eq!(r.requests(), 0);
    r.merged_errors()
}

#[test]
fn silent_server_counts_timeouts() {
    let e = errors_of(Behaviour::Silent);
    assert_eq!((e.timeout, e.total()), (4, 4), "{e:?}");
}

#[test]
fn reset_counts_read_errors() {
    let e = errors_of(Behaviour::Reset);
    assert_eq!((e.read, e.total()), (4, 4), "{e:?}");
}

#[test]
fn garbage_counts_parse_errors() {
    let e = errors_of(Behaviour::Garbage);
    assert_eq!((e.parse, e.total()), (4, 4), "{e:?}");
}

#[test]
fn close_mid_body_counts_length_errors() {
    let e = errors_of(Behaviour::MidBody);
    assert_eq!((e.body_length, e.total()), (4, 4), "{e:?}");
}

#[test]
fn status_codes_are_counted_by_code() {
    let (addr, _) = server(Behaviour::Busy);
    let r = run(&config(addr, Stop::Requests(50)));
    let e = r.merged_errors();
    assert_eq!(e.status[503], 50);
    assert_eq!(e.bad_status(), 50);
    let doc = JsonReport::of(&Summary::new(&r, &[]), "test");
    assert_eq!(doc.errors.status["503"], 50);
}

#[test]
fn refused_connects_are_counted_and_concurrency_flagged() {
    let addr = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let r = run(&config(addr, Stop::Duration(Duration::from_millis(300))));
    let e = r.merged_errors();
    assert!(e.connect_refused >= 4, "{e:?}");
    assert!(!r.concurrency_reached());
    assert_eq!(r.requests(), 0);
}

#[test]
fn unanswered_connects_count_connect_timeouts() {
    // A listener with a backlog of 0 that never accepts: once its accept queue is full the
    // kernel drops further SYNs, so those connects hang until the client's timeout.
    use rustix::net::{AddressFamily, SocketType, bind, listen, socket};
    let fd = socket(AddressFamily::INET, SocketType::STREAM, None).unwrap();
    bind(&fd, &SocketAddr::from(([127, 0, 0, 1], 0))).unwrap();
    listen(&fd, 0).unwrap();
    let addr = match rustix::net::getsockname(&fd).unwrap().try_into() {
        Ok(a) => a,
        Err(_) => panic!("an IPv4 address"),
    };
    let mut c = config(addr, Stop::Duration(Duration::from_millis(700)));
    c.connections = 8;
    c.connect_timeout = Duration::from_millis(200);
    let r = run(&c);
    let e = r.merged_errors();
    assert!(e.connect_timeout >= 1, "{e:?}");
    assert!(!r.concurrency_reached());
    drop(fd);
}

#[test]
fn count_run_against_a_dead_port_gives_up() {
    // Regression: a -n run whose connects are all refused must end, not retry forever.
    let addr = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let mut c = config(addr, Stop::Requests(100));
    c.timeout = Duration::from_millis(100);
    c.connect_timeout = Duration::from_millis(100);
    let r = run(&c);
    assert_eq!(r.requests(), 0);
    assert!(r.merged_errors().connect_refused >= 4);
}

#[test]
fn warmup_is_excluded_from_every_count() {
    let (addr, seen) = server(Behaviour::Ok);
    let mut c = config(addr, Stop::Duration(Duration::from_millis(300)));
    c.warmup = Duration::from_millis(300);
    let r = run(&c);
    let answered = seen.answered.load(Ordering::SeqCst);
    assert!(r.requests() > 0);
    // The server also answered the warm-up (and requests cut off by the end).
    assert!(r.requests() < answered, "{} of {answered}", r.requests());
    assert_eq!(r.merged_latency().len(), r.requests());
    assert_eq!(r.merged_errors().status[200], r.requests());
}

#[test]
fn a_slow_connection_does_not_hold_back_the_schedule() {
    // wrk2 gives each connection its own share of the rate, so a slow one falls ever further
    // behind; here due requests go to whichever connection is free.
    let (addr, seen) = server(Behaviour::SlowFirst);
    let mut c = config(addr, Stop::Requests(400));
    c.worker_cpus = vec![None];
    c.model = Model::Open {
        rate_per_s: 2000.0,
        arrival: Arrival::Uniform,
        seed: 1,
    };
    let r = run(&c);
    assert_eq!(r.requests(), 400);
    assert_eq!(seen.answered.load(Ordering::SeqCst), 400);
    // A fair share would be 100 of 400; the slow connection answers one per 100 ms.
    let slow = seen.first_conn.load(Ordering::SeqCst);
    assert!(slow < 100, "slow connection answered {slow}");
}

#[test]
fn a_timed_run_has_one_rate_sample_per_whole_second() {
    // Regression: seconds counted from when a worker noticed the warm-up end lost the last one.
    let (addr, _) = server(Behaviour::Ok);
    let mut c = config(addr, Stop::Duration(Duration::from_secs(1)));
    c.warmup = Duration::from_millis(100);
    let r = run(&c);
    for w in &r.workers {
        assert_eq!(w.per_second.len(), 1, "{:?}", w.per_second);
        assert_eq!(w.per_second.iter().sum::<u64>(), w.requests);
    }
}
