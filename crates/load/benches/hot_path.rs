//! The per-response work of a worker, without the syscalls: parse a keep-alive JSON response,
//! read the clock, record three latencies. Run: `cargo bench -p twelve-load`.
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use twelve_http::Status;
use twelve_http::client::{HeadMemo, ResponseParser};
use twelve_load::{Clock, MonoClock};
use twelve_report::Recorder;

/// What twelve serve's /json answers (Date and Server included, as on the wire).
const JSON: &[u8] = b"HTTP/1.1 200 OK\r\nServer: twelve\r\nDate: Sun, 22 Nov 2026 13:00:00 GMT\r\n\
Content-Type: application/json\r\nContent-Length: 27\r\n\r\n{\"message\":\"Hello, World!\"}";

fn hot_path(c: &mut Criterion) {
    let mut p = ResponseParser::new();
    c.bench_function("parse keep-alive json response", |b| {
        b.iter(|| {
            let (used, st) = p.parse(black_box(JSON)).unwrap();
            assert!(matches!(st, Status::Complete(_)));
            used
        })
    });
    let batch: Vec<u8> = JSON.repeat(16);
    c.bench_function("parse 16 pipelined json responses", |b| {
        b.iter(|| {
            let mut at = 0;
            while at < batch.len() {
                let (used, _) = p.parse(black_box(&batch[at..])).unwrap();
                at += used;
            }
            at
        })
    });
    // As a load worker parses: one head memo for all its connections (HeadMemo).
    let mut memo = HeadMemo::default();
    c.bench_function("parse 16 pipelined json responses, head memo", |b| {
        b.iter(|| {
            let mut at = 0;
            while at < batch.len() {
                let (used, _) = p.parse_with(black_box(&batch[at..]), &mut memo).unwrap();
                at += used;
            }
            at
        })
    });
    let clock = MonoClock::new();
    c.bench_function("clock read", |b| b.iter(|| clock.now_ns()));
    let mut r = Recorder::new();
    let mut t = 1_000u64;
    c.bench_function("record corrected+uncorrected+wait", |b| {
        b.iter(|| {
            t = t
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = t >> 44;
            r.record(0, v / 8, black_box(v));
        })
    });
}

criterion_group!(benches, hot_path);
criterion_main!(benches);
