//! Unit tests of the connection state machine: bytes in, bytes out, on a fake clock.

use super::*;
use crate::metrics::WorkerMetrics;

pub(crate) fn ctx_with(limits: Limits, router: Router) -> Ctx {
    Ctx {
        router: Arc::new(router),
        limits,
        timeouts: TimeoutsMs {
            header: 1_000,
            body: 1_000,
            keep_alive: 5_000,
            send: 3_000,
            linger: 2_000,
        },
        all_metrics: Arc::new(vec![(0, WorkerMetrics::default())]),
        me: 0,
        metrics_path: Some("/metrics".into()),
        draining: false,
        high_water: 64 * 1024,
        pool: Pool::new(16 * 1024, 64),
        scratch: Vec::new(),
    }
}

pub(crate) fn test_router() -> Router {
    Router::new()
        .get(
            "/",
            |_: &Request<'_, '_>, _: &[u8], r: &mut Response<'_>| {
                r.send(200, "text/plain", &[], b"root")
            },
        )
        .post(
            "/echo",
            |_: &Request<'_, '_>, b: &[u8], r: &mut Response<'_>| {
                r.send(200, "application/octet-stream", &[], b)
            },
        )
}

pub(crate) fn ctx() -> Ctx {
    ctx_with(Limits::default(), test_router())
}

/// Feeds `input` in pieces of the given sizes, collecting everything the connection wants
/// sent (as if every send succeeded in full).
pub(crate) fn feed(conn: &mut Conn, ctx: &mut Ctx, input: &[u8], now: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let buf = conn.read_buf(ctx).expect("reading");
    buf.extend_from_slice(input);
    conn.on_read(input.len(), now, ctx);
    flush(conn, ctx, now, &mut out);
    out
}

pub(crate) fn flush(conn: &mut Conn, ctx: &mut Ctx, now: u64, out: &mut Vec<u8>) {
    loop {
        while let Output::Bytes(b) = conn.output() {
            out.extend_from_slice(b);
            let n = b.len();
            conn.on_sent(n, now, ctx);
        }
        if !conn.after_flush(now, ctx) {
            break;
        }
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn statuses(out: &[u8]) -> Vec<u16> {
    let s = text(out);
    s.match_indices("HTTP/1.1 ")
        .map(|(i, _)| s[i + 9..i + 12].parse().unwrap())
        .collect()
}

const GET: &str = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";

#[test]
fn one_get_is_answered_and_the_connection_kept() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let out = feed(&mut c, &mut x, GET.as_bytes(), 0);
    assert_eq!(statuses(&out), [200]);
    assert!(text(&out).ends_with("\r\n\r\nroot"));
    assert_eq!(c.next(), Next::Wait);
    assert_eq!(c.phase(), Phase::Idle);
}

#[test]
fn idle_connection_holds_no_buffer() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    feed(&mut c, &mut x, GET.as_bytes(), 0);
    c.drained(&mut x);
    assert_eq!(c.heap_bytes(), 0);
}
