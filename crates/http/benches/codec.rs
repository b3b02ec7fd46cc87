//! Criterion benchmarks: parsing the TechEmpower JSON request with its real wrk header set,
//! ours against raw httparse on the same bytes, and encoding the JSON response.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use twelve_http::{ChunkedDecoder, Connection, Header, Limits, encode_response, parse_request};

/// The request TechEmpower's wrk sends for the JSON test (Host, User-Agent, Accept,
/// Accept-Language, Connection).
const TFB_REQUEST: &[u8] = b"GET /json HTTP/1.1\r\n\
Host: tfb-server:8080\r\n\
User-Agent: Mozilla/5.0 (X11; Linux x86_64) Gecko/20130501 Firefox/30.0 AppleWebKit/600.00 Chrome/30.0.0000.0 Trident/10.0 Safari/600.00\r\n\
Accept: application/json,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7\r\n\
Accept-Language: en-US,en;q=0.5\r\n\
Connection: keep-alive\r\n\r\n";

const JSON_BODY: &[u8] = br#"{"message":"Hello, World!"}"#;

fn parse(c: &mut Criterion) {
    let mut g = c.benchmark_group("parse_tfb_request");
    g.throughput(Throughput::Bytes(TFB_REQUEST.len() as u64));
    let limits = Limits::DEFAULT;
    g.bench_function("twelve", |b| {
        let mut headers = [Header::EMPTY; 32];
        b.iter(|| {
            let r = parse_request(black_box(TFB_REQUEST), &mut headers, &limits);
            black_box(r.ok().and_then(|s| s.complete()).map(|r| r.head_len))
        })
    });
    // What an engine pays when it declares a fresh 100-entry header array per request.
    g.bench_function("twelve_fresh_100_headers", |b| {
        b.iter(|| {
            let mut headers = [Header::EMPTY; 100];
            let r = parse_request(black_box(TFB_REQUEST), &mut headers, &limits);
            black_box(r.ok().and_then(|s| s.complete()).map(|r| r.head_len))
        })
    });
    g.bench_function("httparse", |b| {
        let mut headers = [httparse::EMPTY_HEADER; 32];
        b.iter(|| {
            let mut req = httparse::Request::new(&mut headers);
            black_box(req.parse(black_box(TFB_REQUEST)).ok())
        })
    });
    g.finish();
}

fn encode(c: &mut Criterion) {
    let mut out = Vec::with_capacity(512);
    c.bench_function("encode_json_response", |b| {
        b.iter(|| {
            out.clear();
            encode_response(
                &mut out,
                200,
                "application/json",
                Connection::Default,
                black_box(JSON_BODY),
            );
            black_box(out.len())
        })
    });
}

fn chunked(c: &mut Criterion) {
    let mut wire = Vec::new();
    for _ in 0..16 {
        wire.extend_from_slice(b"400\r\n");
        wire.extend_from_slice(&[b'x'; 0x400]);
        wire.extend_from_slice(b"\r\n");
    }
    wire.extend_from_slice(b"0\r\n\r\n");
    let mut g = c.benchmark_group("chunked_16k");
    g.throughput(Throughput::Bytes(wire.len() as u64));
    g.bench_function("decode", |b| {
        b.iter(|| {
            let mut decoder = ChunkedDecoder::new(&Limits::DEFAULT);
            let (mut pos, mut body) = (0, 0);
            while !decoder.is_done() {
                let d = decoder.decode(black_box(&wire[pos..])).expect("valid body");
                body += d.data.len();
                pos += d.consumed;
            }
            black_box(body)
        })
    });
    g.finish();
}

criterion_group!(benches, parse, encode, chunked);
criterion_main!(benches);
