//! The operations of benches/hpack.rs as a plain program, for counting instructions and
//! allocations under valgrind (criterion's timings are noisy on a shared machine):
//! `hpack_ops OP IMPL N` runs OP N times with IMPL (twelve, hpack, loona, httlib). OP is
//! dec1 (a fresh decoder, the first request block), decr (a warm decoder, the repeated block,
//! all indexed) or enc (a warm encoder, a response head). Run it at two values of N and
//! divide the difference, so that setup cancels out:
//!
//! ```text
//! cargo build --profile bench -p twelve-http --example hpack_ops
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/hpack_ops decr twelve 11000
//! valgrind target/release/examples/hpack_ops decr twelve 1100   # "total heap usage: N allocs"
//! ```

use std::hint::black_box;
use twelve_http::h2::hpack::{Decoder, Encoder, Index};
const REQUEST: &[(&[u8], &[u8])] = &[
    (b":method", b"GET"),
    (b":scheme", b"https"),
    (b":authority", b"localhost:8443"),
    (b":path", b"/baseline2?a=1&b=2"),
    (b"user-agent", b"curl/8.14.1"),
    (b"accept", b"*/*"),
];
const HEAD: &[(&[u8], &[u8])] = &[
    (b":status", b"200"),
    (b"server", b"twelve"),
    (b"date", b"Fri, 27 Nov 2026 08:00:00 GMT"),
    (b"content-type", b"text/plain"),
    (b"content-length", b"13"),
];
fn ours(d: &mut Decoder, b: &[u8]) -> usize {
    let mut t = 0;
    d.decode(b, 16384, |n, v| t += n.len() + v.len()).unwrap();
    t
}
fn h03(d: &mut hpack::Decoder, b: &[u8]) -> usize {
    let mut t = 0;
    d.decode_with_cb(b, |n, v| t += n.len() + v.len()).unwrap();
    t
}
fn loona(d: &mut loona_hpack::Decoder, b: &[u8]) -> usize {
    let mut t = 0;
    d.decode_with_cb(b, |n, v| t += n.len() + v.len()).unwrap();
    t
}
fn httlib(d: &mut httlib_hpack::Decoder, b: &[u8]) -> usize {
    let mut buf = b.to_vec();
    let mut f = Vec::new();
    d.decode(&mut buf, &mut f).unwrap();
    f.iter().map(|(n, v, _)| n.len() + v.len()).sum()
}
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (op, imp, n) = (a[1].as_str(), a[2].as_str(), a[3].parse::<usize>().unwrap());
    let mut e = Encoder::new();
    let mut blocks = [Vec::new(), Vec::new()];
    for block in &mut blocks {
        e.begin_block(block);
        for (n, v) in REQUEST {
            e.field(block, n, v, Index::Incremental);
        }
    }
    let (first, repeat) = (&blocks[0], &blocks[1]);
    let mut t = 0usize;
    match (op, imp) {
        ("dec1", "twelve") => {
            for _ in 0..n {
                t += ours(&mut Decoder::new(4096), black_box(first))
            }
        }
        ("dec1", "hpack") => {
            for _ in 0..n {
                t += h03(&mut hpack::Decoder::new(), black_box(first))
            }
        }
        ("dec1", "loona") => {
            for _ in 0..n {
                t += loona(&mut loona_hpack::Decoder::new(), black_box(first))
            }
        }
        ("dec1", "httlib") => {
            for _ in 0..n {
                t += httlib(&mut httlib_hpack::Decoder::default(), black_box(first))
            }
        }
        ("decr", "twelve") => {
            let mut d = Decoder::new(4096);
            ours(&mut d, first);
            for _ in 0..n {
                t += ours(&mut d, black_box(repeat))
            }
        }
        ("decr", "hpack") => {
            let mut d = hpack::Decoder::new();
            h03(&mut d, first);
            for _ in 0..n {
                t += h03(&mut d, black_box(repeat))
            }
        }
        ("decr", "loona") => {
            let mut d = loona_hpack::Decoder::new();
            loona(&mut d, first);
            for _ in 0..n {
                t += loona(&mut d, black_box(repeat))
            }
        }
        ("decr", "httlib") => {
            let mut d = httlib_hpack::Decoder::default();
            httlib(&mut d, first);
            for _ in 0..n {
                t += httlib(&mut d, black_box(repeat))
            }
        }
        ("enc", "twelve") => {
            let mut e = Encoder::new();
            let mut out = Vec::with_capacity(256);
            for _ in 0..n {
                out.clear();
                e.begin_block(&mut out);
                e.status(&mut out, 200);
                for (i, (n, v)) in HEAD[1..].iter().enumerate() {
                    e.field(
                        &mut out,
                        n,
                        black_box(v),
                        if i == 3 {
                            Index::No
                        } else {
                            Index::Incremental
                        },
                    );
                }
                t += out.len();
            }
        }
        ("enc", "hpack") => {
            let mut e = hpack::Encoder::new();
            let mut out = Vec::with_capacity(256);
            for _ in 0..n {
                out.clear();
                e.encode_into(black_box(HEAD).iter().copied(), &mut out)
                    .unwrap();
                t += out.len()
            }
        }
        ("enc", "loona") => {
            let mut e = loona_hpack::Encoder::new();
            let mut out = Vec::with_capacity(256);
            for _ in 0..n {
                out.clear();
                e.encode_into(black_box(HEAD).iter().copied(), &mut out)
                    .unwrap();
                t += out.len()
            }
        }
        ("enc", "httlib") => {
            let mut e = httlib_hpack::Encoder::default();
            let mut out = Vec::with_capacity(256);
            for _ in 0..n {
                out.clear();
                for (i, (n, v)) in black_box(HEAD).iter().enumerate() {
                    let flags = if i == 4 { 0x2 | 0x10 } else { 0x2 | 0x4 | 0x10 };
                    e.encode((n.to_vec(), v.to_vec(), flags), &mut out).unwrap();
                }
                t += out.len();
            }
        }
        _ => panic!("op imp"),
    }
    println!("{t}");
}
