//! The sweep drivers over loopback against a small keep-alive server written here: each step
//! runs and is counted, the drain wait finds the previous step's connections gone, and the
//! knee search runs its probes. Tiny on purpose: steps of 0.3 s, a few of them.
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use twelve_load::{Config, Stop, Target};
use twelve_report::Slo;
use twelve_report::visual::LoadKind;
use twelve_sweep::{DrainPolicy, KneeSearch, run_knee, run_sweep};

/// Answers every request (a head ending in CRLF CRLF, no body) with a 2-byte 200, keeping the
/// connection alive; counts responses. One thread per connection.
fn server() -> (u16, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let answered = Arc::new(AtomicU64::new(0));
    let count = answered.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            let count = count.clone();
            std::thread::spawn(move || serve(conn, &count));
        }
    });
    (port, answered)
}

fn serve(mut conn: TcpStream, count: &AtomicU64) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = match conn.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            buf.drain(..end + 4);
            let r = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
            if conn.write_all(r).is_err() {
                return;
            }
            count.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn base(port: u16) -> Config {
    let mut c = Config::new(vec![
        Target::parse(&format!("http://127.0.0.1:{port}/")).unwrap(),
    ]);
    c.worker_cpus = vec![None];
    c.stop = Stop::Duration(Duration::from_millis(300));
    c.warmup = Duration::from_millis(100);
    c
}

fn drain() -> DrainPolicy {
    DrainPolicy {
        max_wait: Duration::from_secs(5),
        ..DrainPolicy::default()
    }
}

#[test]
fn concurrency_sweep_runs_every_step_after_a_drain() {
    let (port, answered) = server();
    let mut seen = Vec::new();
    let steps = run_sweep(
        &base(port),
        LoadKind::Concurrency,
        &[1.0, 2.0, 4.0],
        &[],
        &drain(),
        |s, d| seen.push((s.load, d.drained, d.lingering)),
    )
    .unwrap();
    assert_eq!(steps.len(), 3);
    for (s, want) in steps.iter().zip([1, 2, 4]) {
        assert_eq!(s.summary.info.connections, want);
        assert!(s.summary.requests > 0, "step {} answered nothing", s.load);
        assert_eq!(s.summary.errors.total(), 0);
        assert!(s.passed(), "no SLOs: every step passes");
    }
    // Measured responses are a subset of what the server answered (warm-up excluded).
    let measured: u64 = steps.iter().map(|s| s.summary.requests).sum();
    assert!(measured <= answered.load(Ordering::Relaxed));
    // Every step after the first started with the previous step's connections gone.
    assert!(seen.iter().all(|(_, drained, _)| *drained), "{seen:?}");
}

/// A knee search between 100 and 400 req/s, within 10%, in at most four probes.
fn search_100_to_400() -> KneeSearch {
    KneeSearch {
        low: 100.0,
        high: 400.0,
        tolerance: 0.1,
        max_probes: 4,
    }
}

#[test]
fn knee_search_over_loopback_reports_above_range() {
    let (port, _) = server();
    let search = search_100_to_400();
    // A loopback server answers 400 req/s well inside a 1 s p99: both ends pass.
    let slos = [
        Slo::parse("p99<1s").unwrap(),
        Slo::parse("errors<1%").unwrap(),
    ];
    let mut c = base(port);
    c.connections = 4;
    let (steps, knee) = run_knee(&c, &search, &slos, &drain(), |_, _| {}).unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!((knee.max_rate, knee.above_range), (Some(400.0), true));
    assert!(steps.iter().all(|s| s.summary.info.rate_per_s.is_some()));
    assert_eq!(steps[1].summary.slo.len(), 2);
}

#[test]
fn failing_slo_stops_the_knee_at_the_low_end() {
    let (port, _) = server();
    let search = search_100_to_400();
    // Nothing answers in under 1 ns: the low end fails, so there is no answer.
    let slos = [Slo::parse("p50<1ns").unwrap()];
    let (steps, knee) = run_knee(&base(port), &search, &slos, &drain(), |_, _| {}).unwrap();
    assert_eq!(steps.len(), 1);
    assert_eq!(knee.max_rate, None);
    assert!(!steps[0].passed());
}
