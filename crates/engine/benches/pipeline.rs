//! Criterion benchmark of one connection answering 16 pipelined requests per read, with no
//! socket (the doc-hidden `bench_hook::PipelineBench`): the engine's user-space cost per
//! request, parse, route, handler and response head included. Timings are noisy on a shared
//! VM; `valgrind --tool=callgrind` over the same loop and bench/callgrind.sh give the figures
//! that decide (docs/results.md#user-space-per-request).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use twelve_engine::apps::techempower;
use twelve_engine::bench_hook::PipelineBench;

/// bench/callgrind.sh's request: TechEmpower's path with the Host and Accept its wrk sends.
fn request(path: &str) -> Vec<u8> {
    format!(
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nAccept: application/json,text/html;q=0.9,\
         application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7\r\n\r\n"
    )
    .into_bytes()
}

fn pipelined(c: &mut Criterion) {
    let mut g = c.benchmark_group("pipeline_16");
    g.throughput(Throughput::Elements(16));
    for path in [techempower::PLAINTEXT_PATH, techempower::JSON_PATH] {
        let batch = request(path).repeat(16);
        let mut conn = PipelineBench::new(techempower::router());
        // Every request is answered: a batch that sent nothing would time an error path.
        assert!(conn.feed(&batch) > 16 * 100, "{path} answered");
        g.bench_function(path, |b| b.iter(|| black_box(conn.feed(black_box(&batch)))));
    }
    g.finish();
}

criterion_group!(benches, pipelined);
criterion_main!(benches);
