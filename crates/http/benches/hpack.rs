//! Criterion benchmarks of HPACK: decoding the header blocks a client like curl sends (the
//! first request, with literals and Huffman strings, on a fresh decoder; then a repeat, all
//! indexed, on a warm one) and encoding a typical response head on a warm encoder. Ours
//! against the HPACK crates on crates.io (issue 31: use one if it fits and costs no more),
//! each through its own API on the same bytes.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use twelve_http::h2::hpack::{Decoded, Decoder, Encoder, Index};

/// curl's request fields (`curl --http2`), for a path of HttpArena's h2 profiles.
const REQUEST: &[(&[u8], &[u8])] = &[
    (b":method", b"GET"),
    (b":scheme", b"https"),
    (b":authority", b"localhost:8443"),
    (b":path", b"/baseline2?a=1&b=2"),
    (b"user-agent", b"curl/8.14.1"),
    (b"accept", b"*/*"),
];

/// Our response head for a small text body.
const RESPONSE: &[(&[u8], &[u8])] = &[
    (b"server", b"twelve"),
    (b"date", b"Fri, 27 Nov 2026 08:00:00 GMT"),
    (b"content-type", b"text/plain"),
    (b"content-length", b"13"),
];

/// The first and a repeated request block, as a client indexing every field (as nghttp2 and
/// curl do) writes them: literals with Huffman and incremental indexing, then indexes.
fn request_blocks() -> (Vec<u8>, Vec<u8>) {
    let mut e = Encoder::new();
    let mut blocks = [Vec::new(), Vec::new()];
    for block in &mut blocks {
        e.begin_block(block);
        for (n, v) in REQUEST {
            e.field(block, n, v, Index::Incremental);
        }
    }
    let [first, repeat] = blocks;
    assert_eq!(
        repeat.len(),
        REQUEST.len(),
        "the repeat is all one-octet indexes"
    );
    (first, repeat)
}

fn ours(d: &mut Decoder, block: &[u8]) -> usize {
    let mut sum = 0;
    let r = d.decode(block, 16_384, |n, v| sum += n.len() + v.len());
    assert_eq!(r, Ok(Decoded::Fields));
    sum
}

fn hpack03(d: &mut hpack::Decoder<'_>, block: &[u8]) -> usize {
    let mut sum = 0;
    d.decode_with_cb(block, |n, v| sum += n.len() + v.len())
        .unwrap();
    sum
}

fn loona(d: &mut loona_hpack::Decoder<'_>, block: &[u8]) -> usize {
    let mut sum = 0;
    d.decode_with_cb(block, |n, v| sum += n.len() + v.len())
        .unwrap();
    sum
}

/// httlib-hpack decodes into owned fields and consumes its input buffer.
fn httlib(d: &mut httlib_hpack::Decoder<'_>, mut block: Vec<u8>) -> usize {
    let mut fields = Vec::new();
    d.decode(&mut block, &mut fields).unwrap();
    fields.iter().map(|(n, v, _)| n.len() + v.len()).sum()
}

fn decode(c: &mut Criterion) {
    let (first, repeat) = request_blocks();
    let want: usize = REQUEST.iter().map(|(n, v)| n.len() + v.len()).sum();
    // Every decoder reads both blocks the same.
    assert_eq!(ours(&mut Decoder::new(4096), &first), want);
    assert_eq!(hpack03(&mut hpack::Decoder::new(), &first), want);
    assert_eq!(loona(&mut loona_hpack::Decoder::new(), &first), want);
    assert_eq!(
        httlib(&mut httlib_hpack::Decoder::default(), first.clone()),
        want
    );

    let mut g = c.benchmark_group("hpack_decode_first_request");
    g.bench_function("twelve", |b| {
        b.iter(|| ours(&mut Decoder::new(4096), black_box(&first)))
    });
    g.bench_function("hpack-0.3", |b| {
        b.iter(|| hpack03(&mut hpack::Decoder::new(), black_box(&first)))
    });
    g.bench_function("loona-hpack", |b| {
        b.iter(|| loona(&mut loona_hpack::Decoder::new(), black_box(&first)))
    });
    g.bench_function("httlib-hpack", |b| {
        b.iter_batched(
            || first.clone(),
            |block| httlib(&mut httlib_hpack::Decoder::default(), block),
            BatchSize::SmallInput,
        )
    });
    g.finish();

    let mut g = c.benchmark_group("hpack_decode_repeat_request");
    g.bench_function("twelve", |b| {
        let mut d = Decoder::new(4096);
        ours(&mut d, &first);
        b.iter(|| ours(&mut d, black_box(&repeat)))
    });
    g.bench_function("hpack-0.3", |b| {
        let mut d = hpack::Decoder::new();
        hpack03(&mut d, &first);
        b.iter(|| hpack03(&mut d, black_box(&repeat)))
    });
    g.bench_function("loona-hpack", |b| {
        let mut d = loona_hpack::Decoder::new();
        loona(&mut d, &first);
        b.iter(|| loona(&mut d, black_box(&repeat)))
    });
    g.bench_function("httlib-hpack", |b| {
        let mut d = httlib_hpack::Decoder::default();
        httlib(&mut d, first.clone());
        b.iter_batched(
            || repeat.clone(),
            |block| httlib(&mut d, block),
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

/// Our encoder's response head after the first (what every later response costs on the
/// wire), for the size line printed beside the timings.
fn ours_head(e: &mut Encoder, out: &mut Vec<u8>) {
    out.clear();
    e.begin_block(out);
    e.status(out, 200);
    for (i, (n, v)) in RESPONSE.iter().enumerate() {
        let how = if i == 3 {
            Index::No
        } else {
            Index::Incremental
        };
        e.field(out, n, black_box(v), how);
    }
}

fn encode(c: &mut Criterion) {
    let head: Vec<(&[u8], &[u8])> = [(&b":status"[..], &b"200"[..])]
        .into_iter()
        .chain(RESPONSE.iter().copied())
        .collect();
    // Octets of the second response head from each encoder.
    let mut sizes = Vec::new();
    let (mut e, mut out) = (Encoder::new(), Vec::new());
    ours_head(&mut e, &mut out);
    ours_head(&mut e, &mut out);
    sizes.push(("twelve", out.len()));
    let mut e = hpack::Encoder::new();
    e.encode(head.iter().copied());
    sizes.push(("hpack-0.3", e.encode(head.iter().copied()).len()));
    let mut e = loona_hpack::Encoder::new();
    e.encode(head.iter().copied());
    sizes.push(("loona-hpack", e.encode(head.iter().copied()).len()));
    let mut e = httlib_hpack::Encoder::default();
    for _ in 0..2 {
        out.clear();
        for (i, (n, v)) in head.iter().enumerate() {
            let flags = if i == 4 { 0x2 | 0x10 } else { 0x2 | 0x4 | 0x10 };
            e.encode((n.to_vec(), v.to_vec(), flags), &mut out).unwrap();
        }
    }
    sizes.push(("httlib-hpack", out.len()));
    eprintln!("hpack_encode_response: octets of a repeated response head: {sizes:?}");

    let mut g = c.benchmark_group("hpack_encode_response");
    g.bench_function("twelve", |b| {
        let mut e = Encoder::new();
        let mut out = Vec::with_capacity(256);
        b.iter(|| {
            ours_head(&mut e, &mut out);
            black_box(out.len())
        })
    });
    g.bench_function("hpack-0.3", |b| {
        let mut e = hpack::Encoder::new();
        let mut out = Vec::with_capacity(256);
        b.iter(|| {
            out.clear();
            e.encode_into(black_box(&head).iter().copied(), &mut out)
                .unwrap();
            black_box(out.len())
        })
    });
    g.bench_function("loona-hpack", |b| {
        let mut e = loona_hpack::Encoder::new();
        let mut out = Vec::with_capacity(256);
        b.iter(|| {
            out.clear();
            e.encode_into(black_box(&head).iter().copied(), &mut out)
                .unwrap();
            black_box(out.len())
        })
    });
    g.bench_function("httlib-hpack", |b| {
        // Its API takes owned names and values; 0x2 Huffman values, 0x4 index, 0x10 use the
        // best representation the table allows.
        let mut e = httlib_hpack::Encoder::default();
        let mut out = Vec::with_capacity(256);
        b.iter(|| {
            out.clear();
            for (i, (n, v)) in black_box(&head).iter().enumerate() {
                let flags = if i == 4 { 0x2 | 0x10 } else { 0x2 | 0x4 | 0x10 };
                e.encode((n.to_vec(), v.to_vec(), flags), &mut out).unwrap();
            }
            black_box(out.len())
        })
    });
    g.finish();
}

criterion_group!(benches, decode, encode);
criterion_main!(benches);
