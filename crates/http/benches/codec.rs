//! Criterion benchmarks: parsing the TechEmpower JSON request with its real wrk header set and
//! the pipelined plaintext request that bench/callgrind.sh counts, ours against raw httparse on
//! the same bytes, and encoding the JSON response.

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

/// The request bench/callgrind.sh has `twelve bench` send 16 deep (TechEmpower's plaintext
/// path with the Host and Accept of bench/common.sh's TFB_HDRS): the parse share of its
/// instructions per request is issue 14's target. Timings here are noisy on a shared VM; the
/// callgrind count is the figure that decides.
const PIPELINED_REQUEST: &[u8] = b"GET /plaintext HTTP/1.1\r\n\
Host: localhost\r\n\
Accept: application/json,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7\r\n\r\n";

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

/// Sixteen copies of the plaintext request back to back, parsed one after another as the
/// engine's connection does with a pipelined read: each parse sees the rest of the batch after
/// its head.
fn parse_pipelined(c: &mut Criterion) {
    let batch = PIPELINED_REQUEST.repeat(16);
    let mut g = c.benchmark_group("parse_pipelined_plaintext_16");
    g.throughput(Throughput::Elements(16));
    let limits = Limits::DEFAULT;
    g.bench_function("twelve", |b| {
        let mut headers = [Header::EMPTY; 24];
        b.iter(|| {
            let buf = black_box(&batch[..]);
            let mut pos = 0;
            while pos < buf.len() {
                match parse_request(&buf[pos..], &mut headers, &limits) {
                    Ok(twelve_http::Status::Complete(req)) => pos += req.head_len,
                    _ => unreachable!("the batch holds whole, valid requests"),
                }
            }
            black_box(pos)
        })
    });
    g.bench_function("httparse", |b| {
        let mut headers = [httparse::EMPTY_HEADER; 24];
        b.iter(|| {
            let buf = black_box(&batch[..]);
            let mut pos = 0;
            while pos < buf.len() {
                let mut req = httparse::Request::new(&mut headers);
                match req.parse(&buf[pos..]) {
                    Ok(httparse::Status::Complete(n)) => pos += n,
                    _ => unreachable!("the batch holds whole, valid requests"),
                }
            }
            black_box(pos)
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

criterion_group!(benches, parse, parse_pipelined, encode, chunked);
criterion_main!(benches);
