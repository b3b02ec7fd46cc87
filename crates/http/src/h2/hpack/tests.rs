//! HPACK against RFC 7541: the Appendix C examples through the decoder and the encoder (wire
//! bytes, fields, and the dynamic table after each block), one case per error, the HPACK bomb,
//! and a property test of encoder-decoder round trips over shared tables.

use super::table::{Dynamic, STATIC, static_field, static_name};
use super::*;
use proptest::prelude::*;

/// The octets of a hex dump; spaces are ignored.
fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    digits
        .chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
        .collect()
}

type Fields = Vec<(Vec<u8>, Vec<u8>)>;

fn owned(fields: &[(&str, &str)]) -> Fields {
    fields
        .iter()
        .map(|(n, v)| (n.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect()
}

fn entries(t: &Dynamic) -> Fields {
    (0..t.len())
        .map(|i| {
            let (n, v) = t.get(i).unwrap();
            (n.to_vec(), v.to_vec())
        })
        .collect()
}

fn decoder_entries(d: &Decoder) -> Fields {
    (0..d.table_len())
        .map(|i| {
            let (n, v) = d.table_entry(i).unwrap();
            (n.to_vec(), v.to_vec())
        })
        .collect()
}

/// Decodes a whole block with no list limit.
fn decode_all(d: &mut Decoder, block: &[u8]) -> Result<Fields, HpackError> {
    let mut out = Vec::new();
    let r = d.decode(block, usize::MAX, |n, v| out.push((n.to_vec(), v.to_vec())))?;
    assert_eq!(r, Decoded::Fields);
    Ok(out)
}

/// One block of an Appendix C sequence: its wire bytes, its fields, then the dynamic table
/// (newest first) and its size after it.
struct Step {
    wire: &'static str,
    fields: &'static [(&'static str, &'static str)],
    table: &'static [(&'static str, &'static str)],
    size: usize,
}

const AUTHORITY: (&str, &str) = (":authority", "www.example.com");
const NO_CACHE: (&str, &str) = ("cache-control", "no-cache");
const CUSTOM: (&str, &str) = ("custom-key", "custom-value");
const REQ1: &[(&str, &str)] = &[
    (":method", "GET"),
    (":scheme", "http"),
    (":path", "/"),
    AUTHORITY,
];
const REQ2: &[(&str, &str)] = &[
    (":method", "GET"),
    (":scheme", "http"),
    (":path", "/"),
    AUTHORITY,
    NO_CACHE,
];
const REQ3: &[(&str, &str)] = &[
    (":method", "GET"),
    (":scheme", "https"),
    (":path", "/index.html"),
    AUTHORITY,
    CUSTOM,
];

/// C.3 (raw strings) and C.4 (Huffman): three requests on one connection.
fn requests(wires: [&'static str; 3]) -> [Step; 3] {
    [
        Step {
            wire: wires[0],
            fields: REQ1,
            table: &[AUTHORITY],
            size: 57,
        },
        Step {
            wire: wires[1],
            fields: REQ2,
            table: &[NO_CACHE, AUTHORITY],
            size: 110,
        },
        Step {
            wire: wires[2],
            fields: REQ3,
            table: &[CUSTOM, NO_CACHE, AUTHORITY],
            size: 164,
        },
    ]
}

const C3: [&str; 3] = [
    "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
    "8286 84be 5808 6e6f 2d63 6163 6865",
    "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
];
const C4: [&str; 3] = [
    "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
    "8286 84be 5886 a8eb 1064 9cbf",
    "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
];

const PRIVATE: (&str, &str) = ("cache-control", "private");
const DATE21: (&str, &str) = ("date", "Mon, 21 Oct 2013 20:13:21 GMT");
const DATE22: (&str, &str) = ("date", "Mon, 21 Oct 2013 20:13:22 GMT");
const LOCATION: (&str, &str) = ("location", "https://www.example.com");
const GZIP: (&str, &str) = ("content-encoding", "gzip");
const COOKIE: (&str, &str) = (
    "set-cookie",
    "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
);

/// C.5 (raw strings) and C.6 (Huffman): three responses with a 256-octet table.
fn responses(wires: [&'static str; 3]) -> [Step; 3] {
    [
        Step {
            wire: wires[0],
            fields: &[(":status", "302"), PRIVATE, DATE21, LOCATION],
            table: &[LOCATION, DATE21, PRIVATE, (":status", "302")],
            size: 222,
        },
        Step {
            wire: wires[1],
            fields: &[(":status", "307"), PRIVATE, DATE21, LOCATION],
            table: &[(":status", "307"), LOCATION, DATE21, PRIVATE],
            size: 222,
        },
        Step {
            wire: wires[2],
            fields: &[(":status", "200"), PRIVATE, DATE22, LOCATION, GZIP, COOKIE],
            table: &[COOKIE, GZIP, DATE22],
            size: 215,
        },
    ]
}

const C5: [&str; 3] = [
    "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133
     2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70
     6c65 2e63 6f6d",
    "4803 3330 37c1 c0bf",
    "88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d
     54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049
     5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e
     3d31",
];
const C6: [&str; 3] = [
    "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
     2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
    "4883 640e ffc1 c0bf",
    "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab
     77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f
     9587 3160 65c0 03ed 4ee5 b106 3d50 07",
];

fn decode_steps(table_size: usize, steps: &[Step]) {
    let mut d = Decoder::new(table_size);
    for (i, s) in steps.iter().enumerate() {
        let fields = decode_all(&mut d, &hex(s.wire)).unwrap();
        assert_eq!(fields, owned(s.fields), "block {i}");
        assert_eq!(decoder_entries(&d), owned(s.table), "table after block {i}");
        assert_eq!(d.table_size(), s.size, "table size after block {i}");
    }
}

/// Encodes each step's fields, all with incremental indexing as the examples do, and checks
/// the wire bytes and the encoder's own table.
fn encode_steps(table_size: usize, huffman: bool, steps: &[Step]) {
    let mut e = Encoder::with_table_size(table_size);
    e.set_huffman(huffman);
    for (i, s) in steps.iter().enumerate() {
        let mut out = Vec::new();
        e.begin_block(&mut out);
        for (n, v) in s.fields {
            e.field(&mut out, n.as_bytes(), v.as_bytes(), Index::Incremental);
        }
        assert_eq!(out, hex(s.wire), "block {i}");
        assert_eq!(entries(e.table()), owned(s.table), "table after block {i}");
        assert_eq!(e.table().size(), s.size, "table size after block {i}");
    }
}

#[test]
fn c2_field_representations() {
    // (wire, field, table after): each on a fresh decoder.
    let cases: [(&str, (&str, &str), usize, Index); 4] = [
        (
            "400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572",
            ("custom-key", "custom-header"),
            55,
            Index::Incremental,
        ),
        (
            "040c 2f73 616d 706c 652f 7061 7468",
            (":path", "/sample/path"),
            0,
            Index::No,
        ),
        (
            "1008 7061 7373 776f 7264 0673 6563 7265 74",
            ("password", "secret"),
            0,
            Index::Never,
        ),
        ("82", (":method", "GET"), 0, Index::Incremental),
    ];
    for (wire, (name, value), size, how) in cases {
        let mut d = Decoder::new(4096);
        assert_eq!(
            decode_all(&mut d, &hex(wire)).unwrap(),
            owned(&[(name, value)]),
            "{wire}"
        );
        assert_eq!(d.table_size(), size, "{wire}");
        let mut e = Encoder::new();
        e.set_huffman(false);
        let mut out = Vec::new();
        e.field(&mut out, name.as_bytes(), value.as_bytes(), how);
        assert_eq!(out, hex(wire), "encoding {name}");
        assert_eq!(e.table().size(), size, "{wire}");
    }
}

#[test]
fn c3_requests_without_huffman_decode() {
    decode_steps(4096, &requests(C3));
}

#[test]
fn c3_requests_without_huffman_encode() {
    encode_steps(4096, false, &requests(C3));
}

#[test]
fn c4_requests_with_huffman_decode() {
    decode_steps(4096, &requests(C4));
}

#[test]
fn c4_requests_with_huffman_encode() {
    encode_steps(4096, true, &requests(C4));
}

#[test]
fn c5_responses_without_huffman_decode() {
    decode_steps(256, &responses(C5));
}

#[test]
fn c5_responses_without_huffman_encode() {
    encode_steps(256, false, &responses(C5));
}

#[test]
fn c6_responses_with_huffman_decode() {
    decode_steps(256, &responses(C6));
}

#[test]
fn c6_responses_with_huffman_encode() {
    // C.6.2 Huffman-codes "307" in 3 octets, no shorter than raw: we send it raw, as C.5.2.
    encode_steps(256, true, &responses([C6[0], C5[1], C6[2]]));
}

#[test]
fn c1_integers() {
    // (value, prefix bits, wire).
    let cases: [(usize, u32, &[u8]); 5] = [
        (10, 5, &[0x0a]),
        (1337, 5, &[0x1f, 0x9a, 0x0a]),
        (42, 8, &[0x2a]),
        (31, 5, &[0x1f, 0x00]),
        (u32::MAX as usize, 7, &[0x7f, 0x80, 0xff, 0xff, 0xff, 0x0f]),
    ];
    for (value, prefix, wire) in cases {
        let mut out = Vec::new();
        write_int(&mut out, 0, prefix, value);
        assert_eq!(out, wire, "{value}");
        let mut pos = 0;
        assert_eq!(read_int(wire, &mut pos, prefix), Ok(value));
        assert_eq!(pos, wire.len());
    }
}

#[test]
fn static_lookups_agree_with_the_table() {
    for (i, (name, value)) in STATIC.iter().enumerate() {
        let first = STATIC.iter().position(|(n, _)| n == name).unwrap() + 1;
        assert_eq!(static_name(name), Some(first), "{i}");
        assert_eq!(static_field(first, value), Some(i + 1), "{i}");
    }
    assert_eq!(static_name(b"x-custom"), None);
    assert_eq!(static_field(8, b"201"), None);
}

/// One malformed block per rule, each with the error it must get.
#[test]
fn malformed_blocks_get_their_error() {
    use HpackError as E;
    let big = hex("3f e2 1f"); // size update to 4097
    let cases: Vec<(&str, Vec<u8>, E)> = vec![
        ("§6.1 index 0", vec![0x80], E::IndexZero),
        ("index 62, empty table", vec![0xbe], E::IndexOutOfRange),
        (
            "name index 62, empty table",
            vec![0x7e, 0x00],
            E::IndexOutOfRange,
        ),
        (
            "never indexed, no value",
            vec![0x10, 0x00],
            E::TruncatedString,
        ),
        (
            "integer past 2^32-1",
            hex("ff ff ff ff ff 0f"),
            E::IntegerOverflow,
        ),
        (
            "endless zero continuations",
            hex("ff 80 80 80 80 80 00"),
            E::IntegerOverflow,
        ),
        ("integer cut after prefix", vec![0xff], E::TruncatedInteger),
        (
            "integer cut in continuation",
            vec![0xff, 0x80],
            E::TruncatedInteger,
        ),
        ("no name length", vec![0x40], E::TruncatedString),
        ("no value", vec![0x04], E::TruncatedString),
        (
            "value past the end",
            vec![0x04, 0x05, b'a'],
            E::TruncatedString,
        ),
        (
            "string length overflows",
            hex("04 7f ff ff ff ff 0f"),
            E::IntegerOverflow,
        ),
        ("Huffman EOS", hex("04 84 ff ff ff ff"), E::HuffmanEos),
        (
            "Huffman 8 bits padding",
            hex("04 81 ff"),
            E::HuffmanPaddingTooLong,
        ),
        (
            "Huffman zero padding",
            hex("04 81 18"),
            E::HuffmanPaddingNotOnes,
        ),
        ("size update above setting", big, E::SizeUpdateTooLarge),
        (
            "size update after a field",
            vec![0x82, 0x20],
            E::SizeUpdateNotFirst,
        ),
    ];
    for (what, block, want) in cases {
        let mut d = Decoder::new(4096);
        assert_eq!(decode_all(&mut d, &block), Err(want), "{what}");
        assert_eq!(want.code(), crate::h2::ErrorCode::CompressionError);
    }
}

#[test]
fn error_kinds_are_dense() {
    for (i, e) in HpackError::ALL.iter().enumerate() {
        assert_eq!(e.index(), i);
        assert!(!e.to_string().is_empty());
    }
}

#[test]
fn lowered_setting_requires_a_size_update() {
    let mut d = Decoder::new(4096);
    decode_all(&mut d, &hex("4003 6162 6301 78")).unwrap(); // abc: x, 36 octets
    d.set_max_table_size(100);
    assert_eq!(
        decode_all(&mut d, &[0x82]),
        Err(HpackError::SizeUpdateMissing)
    );

    let mut d = Decoder::new(4096);
    d.set_max_table_size(100);
    // Above the new setting.
    assert_eq!(
        decode_all(&mut d, &hex("3f 46 82")),
        Err(HpackError::SizeUpdateTooLarge)
    );

    let mut d = Decoder::new(4096);
    decode_all(&mut d, &hex("4003 6162 6301 78")).unwrap();
    d.set_max_table_size(100);
    // An empty block owes nothing yet; then 0 and 100 (two updates, §4.2) empty the table.
    assert_eq!(decode_all(&mut d, &[]).unwrap(), vec![]);
    let fields = decode_all(&mut d, &hex("20 3f 45 82")).unwrap();
    assert_eq!(fields, owned(&[(":method", "GET")]));
    assert_eq!((d.table_len(), d.table_max_size()), (0, 100));
    // A raised setting needs no update.
    d.set_max_table_size(200);
    decode_all(&mut d, &[0x82]).unwrap();
}

#[test]
fn encoder_signals_table_size_changes() {
    // (settings received before the block, update octets expected).
    let cases: [(&[usize], &str); 5] = [
        (&[4096], ""),
        (&[8192], ""),
        (&[100], "3f 45"),
        (&[0, 4096], "20 3f e1 1f"),
        (&[100, 50, 200], "3f 13 3f a9 01"),
    ];
    for (settings, want) in cases {
        let mut e = Encoder::new();
        for &s in settings {
            e.set_max_table_size(s);
        }
        let mut out = Vec::new();
        e.begin_block(&mut out);
        assert_eq!(out, hex(want), "{settings:?}");
        out.clear();
        e.begin_block(&mut out);
        assert!(out.is_empty(), "an update is sent once");
    }
}

#[test]
fn entry_larger_than_table_empties_it() {
    let mut d = Decoder::new(60);
    decode_all(&mut d, &hex("4001 6101 62")).unwrap(); // a: b, 34 octets
    assert_eq!(d.table_len(), 1);
    // 1 + 30 + 32 = 63 > 60: the table empties and the field is still emitted.
    let mut wire = hex("4001 781e");
    wire.extend_from_slice(&[b'y'; 30]);
    assert_eq!(
        decode_all(&mut d, &wire).unwrap(),
        vec![(b"x".to_vec(), vec![b'y'; 30])]
    );
    assert_eq!((d.table_len(), d.table_size()), (0, 0));
}

#[test]
fn insert_may_evict_the_entry_it_names() {
    // §4.4: a literal naming the only entry, whose insert evicts it.
    let mut d = Decoder::new(70);
    decode_all(&mut d, &hex("4004 6e61 6d65 0161")).unwrap(); // name: a, 37 octets
    let fields = decode_all(&mut d, &hex("7e 02 6262")).unwrap(); // name: bb via index 62
    assert_eq!(fields, owned(&[("name", "bb")]));
    assert_eq!(decoder_entries(&d), owned(&[("name", "bb")]));
}

/// A table entry of 4000 octets.
fn big_entry() -> Vec<u8> {
    let mut wire = hex("4001 78 7f a1 1e"); // x: 4000 octets (127 + 3873)
    wire.extend_from_slice(&[b'a'; 4000]);
    wire
}

#[test]
fn hpack_bomb_is_cut_and_the_table_stays_in_step() {
    let mut d = Decoder::new(4096);
    decode_all(&mut d, &big_entry()).unwrap();
    // 16 KiB of one-octet references to it (64 MiB of header list), then one new entry.
    let mut bomb = vec![0xbe; 16_384];
    bomb.extend_from_slice(&hex("4005 6166 7465 7203 7965 73")); // after: yes
    let (mut calls, mut bytes) = (0, 0);
    let r = d.decode(&bomb, 16_384, |n, v| {
        calls += 1;
        bytes += n.len() + v.len();
    });
    assert_eq!(r, Ok(Decoded::TooLarge));
    // 4 fields of 4033 fit in 16 KiB; nothing after the fifth is emitted or copied.
    assert_eq!((calls, bytes), (4, 4 * 4001));
    // The literal at the end was still inserted: the next block sees it at 62 and the big
    // entry at 63.
    let mut seen = Vec::new();
    d.decode(&[0xbe, 0xbf], usize::MAX, |n, v| {
        seen.push((n.to_vec(), v.len()))
    })
    .unwrap();
    assert_eq!(seen, vec![(b"after".to_vec(), 3), (b"x".to_vec(), 4000)]);
    assert_eq!(d.table_len(), 2);
}

#[test]
fn list_limit_counts_literals_too() {
    let mut d = Decoder::new(4096);
    let mut seen = Vec::new();
    // :path: /sample/path (5 + 12 + 32 = 49), then custom-key: custom-header inserted.
    let block = hex("040c 2f73 616d 706c 652f 7061 7468
         400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572");
    let r = d.decode(&block, 49, |n, _| seen.push(n.to_vec()));
    assert_eq!(r, Ok(Decoded::TooLarge));
    assert_eq!(seen, vec![b":path".to_vec()]);
    assert_eq!(
        decoder_entries(&d),
        owned(&[("custom-key", "custom-header")])
    );
}

#[test]
fn request_blocks_decode_without_growing_buffers() {
    // After the first request, a typical client's blocks are indexed fields: decoding them
    // must not allocate. The scratch buffer and the table keep their capacity.
    let mut d = Decoder::new(4096);
    let first = requests(C4);
    decode_all(&mut d, &hex(first[0].wire)).unwrap();
    decode_all(&mut d, &hex(first[1].wire)).unwrap();
    let caps = (d.scratch_capacity(), d.table_capacity());
    for _ in 0..100 {
        let mut n = 0;
        d.decode(&hex("8286 84be bf"), usize::MAX, |_, _| n += 1)
            .unwrap();
        assert_eq!(n, 5);
    }
    assert_eq!((d.scratch_capacity(), d.table_capacity()), caps);
}

#[test]
fn repeated_response_fields_become_one_octet() {
    let mut e = Encoder::new();
    let mut d = Decoder::new(4096);
    let date = b"Fri, 27 Nov 2026 08:00:00 GMT";
    for round in 0..3 {
        let mut out = Vec::new();
        e.begin_block(&mut out);
        e.status(&mut out, 200);
        e.field(&mut out, b"server", b"twelve", Index::Incremental);
        e.field(&mut out, b"date", date, Index::Incremental);
        e.field(&mut out, b"content-type", b"text/plain", Index::Incremental);
        e.field(&mut out, b"content-length", b"13", Index::No);
        if round > 0 {
            // :status, then three dynamic indexes, then content-length's literal.
            assert_eq!(&out[..4], &[0x88, 0xc0, 0xbf, 0xbe]);
            assert_eq!(&out[4..], &hex("0f0d 0231 33"));
        }
        let fields = decode_all(&mut d, &out).unwrap();
        assert_eq!(fields.len(), 5);
        assert_eq!(fields[2], (b"date".to_vec(), date.to_vec()));
    }
}

#[test]
fn status_codes() {
    let mut e = Encoder::new();
    let mut d = Decoder::new(4096);
    for status in [200, 204, 206, 304, 400, 404, 500, 201, 201, 503, 101, 999] {
        let mut out = Vec::new();
        e.status(&mut out, status);
        let fields = decode_all(&mut d, &out).unwrap();
        let want = status.to_string();
        assert_eq!(fields, owned(&[(":status", &want)]));
    }
}

#[test]
fn never_indexed_stays_literal() {
    let mut e = Encoder::new();
    let mut out = Vec::new();
    e.field(&mut out, b":method", b"GET", Index::Never);
    assert_eq!(out, hex("12 03 4745 54"));
    assert_eq!(e.table().len(), 0);
}

#[test]
fn idle_coders_hold_no_heap() {
    let d = Decoder::new(4096);
    let e = Encoder::new();
    assert_eq!((d.scratch_capacity(), d.table_capacity()), (0, 0));
    assert_eq!(e.table().capacity(), 0);
}

/// Names drawn from the static table, ones of our own, and random lowercase ones.
fn name() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::sample::select(vec![
            &b":status"[..],
            b"content-type",
            b"date",
            b"server",
            b"set-cookie",
            b":path",
            b"x-request-id",
            b"x-custom",
        ])
        .prop_map(|n| n.to_vec()),
        "[a-z-]{1,12}".prop_map(String::into_bytes),
    ]
}

/// Values: common ones, any octets, and now and then a long one that evicts much.
fn value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::sample::select(vec![&b""[..], b"200", b"text/plain", b"gzip", b"twelve"])
            .prop_map(|v| v.to_vec()),
        prop::collection::vec(any::<u8>(), 0..40),
        prop::collection::vec(any::<u8>(), 300..5000),
    ]
}

fn how() -> impl Strategy<Value = Index> {
    prop_oneof![
        3 => Just(Index::Incremental),
        1 => Just(Index::No),
        1 => Just(Index::Never),
    ]
}

/// A block: table size settings that take effect before it, and its fields.
type Block = (Vec<usize>, Vec<(Vec<u8>, Vec<u8>, Index)>);

fn blocks() -> impl Strategy<Value = Vec<Block>> {
    let setting = prop::sample::select(vec![0usize, 32, 64, 100, 256, 1000, 4096, 8192]);
    let settings = prop::collection::vec(setting, 0..3);
    let fields = prop::collection::vec((name(), value(), how()), 0..12);
    prop::collection::vec((settings, fields), 1..8)
}

proptest! {
    /// Random field lists through one encoder and two decoders (one without a list limit,
    /// one with a random one), with random table size changes: every field comes back in
    /// order, the limited decoder emits a prefix and says `TooLarge` exactly when the list
    /// passed its limit, and all three tables stay identical.
    #[test]
    fn round_trip(blocks in blocks(), limit in 0usize..20_000) {
        let mut e = Encoder::new();
        let mut full = Decoder::new(4096);
        let mut cut = Decoder::new(4096);
        for (settings, fields) in blocks {
            for &s in &settings {
                // Our SETTINGS, acknowledged: both sides learn the new size.
                e.set_max_table_size(s);
                full.set_max_table_size(s);
                cut.set_max_table_size(s);
            }
            let mut out = Vec::new();
            e.begin_block(&mut out);
            for (n, v, how) in &fields {
                e.field(&mut out, n, v, *how);
            }
            let want: Fields = fields.iter().map(|(n, v, _)| (n.clone(), v.clone())).collect();
            prop_assert_eq!(&decode_all(&mut full, &out).unwrap(), &want);
            let mut got = Vec::new();
            let r = cut.decode(&out, limit, |n, v| got.push((n.to_vec(), v.to_vec()))).unwrap();
            let list: usize = want.iter().map(|(n, v)| n.len() + v.len() + 32).sum();
            prop_assert_eq!(r == Decoded::TooLarge, list > limit);
            prop_assert_eq!(&got[..], &want[..got.len()]);
            prop_assert_eq!(decoder_entries(&full), entries(e.table()));
            prop_assert_eq!(decoder_entries(&cut), entries(e.table()));
            prop_assert_eq!(full.table_size(), e.table().size());
        }
    }
}

/// Regression: `:path` and `user-agent` of curl's request shared a slot of a direct-mapped
/// cache, so neither was ever found again and each block re-inserted both.
#[test]
fn colliding_fields_are_still_indexed() {
    let fields: &[(&[u8], &[u8])] = &[
        (b":method", b"GET"),
        (b":scheme", b"https"),
        (b":authority", b"localhost:8443"),
        (b":path", b"/baseline2?a=1&b=2"),
        (b"user-agent", b"curl/8.14.1"),
        (b"accept", b"*/*"),
        (b"x-a", b"1"),
        (b"x-b", b"2"),
        (b"x-c", b"3"),
        (b"cache-control", b"no-cache"),
        (b"vary", b"accept-encoding"),
        (b"etag", b"\"abc\""),
    ];
    let mut e = Encoder::new();
    let mut d = Decoder::new(4096);
    for round in 0..3 {
        let mut out = Vec::new();
        e.begin_block(&mut out);
        for (n, v) in fields {
            e.field(&mut out, n, v, Index::Incremental);
        }
        if round > 0 {
            assert_eq!(
                out.len(),
                fields.len(),
                "round {round}: one octet per field"
            );
        }
        assert_eq!(decode_all(&mut d, &out).unwrap().len(), fields.len());
    }
}

#[test]
fn idle_coders_are_small() {
    // Part of the 4 KiB budget of an idle HTTP/2 connection (issue 31).
    let sizes = (size_of::<Decoder>(), size_of::<Encoder>());
    eprintln!("Decoder, Encoder: {sizes:?} octets");
    assert!(sizes.0 <= 160 && sizes.1 <= 400, "{sizes:?}");
}

#[test]
fn cache_survives_insert_number_wrap() {
    // The caches keep 16 bits of each entry's insert number: past 2^16 inserts, a repeat is
    // still found and a stale slot never names the wrong entry.
    let mut e = Encoder::new();
    let mut d = Decoder::new(4096);
    let mut out = Vec::new();
    for i in 0..70_000u32 {
        out.clear();
        let value = (i % 1000).to_string();
        e.field(&mut out, b"x-n", value.as_bytes(), Index::Incremental);
        let fields = decode_all(&mut d, &out).unwrap();
        assert_eq!(fields, vec![(b"x-n".to_vec(), value.into_bytes())], "{i}");
    }
    out.clear();
    e.field(&mut out, b"x-n", b"999", Index::Incremental);
    assert_eq!(out, [0xbe]);
}

/// The generation moves with everything that changes what a block encodes to, and with
/// nothing else: a block of fields already indexed leaves it as it was.
#[test]
fn the_encoder_generation_moves_when_a_block_could_encode_differently() {
    let mut enc = Encoder::new();
    let mut out = Vec::new();
    // (what the step does, whether the generation moves)
    type Op = fn(&mut Encoder, &mut Vec<u8>);
    let steps: [(&str, Op, bool); 7] = [
        (
            "an insert",
            |e, o| e.field(o, b"x-a", b"1", Index::Incremental),
            true,
        ),
        (
            "the same field, now indexed",
            |e, o| e.field(o, b"x-a", b"1", Index::Incremental),
            false,
        ),
        (
            "a literal without indexing",
            |e, o| e.field(o, b":path", b"/p", Index::No),
            false,
        ),
        (
            "a static hit",
            |e, o| e.field(o, b":method", b"GET", Index::Incremental),
            false,
        ),
        (
            "an entry larger than the table",
            |e, o| e.field(o, b"x-b", &[b'v'; 5000], Index::Incremental),
            true,
        ),
        (
            "a size update at the block's start",
            |e, o| {
                e.set_max_table_size(0);
                e.begin_block(o)
            },
            true,
        ),
        ("the Huffman switch", |e, _| e.set_huffman(false), true),
    ];
    for (what, op, moves) in steps {
        let before = enc.generation();
        op(&mut enc, &mut out);
        assert_eq!(enc.generation() != before, moves, "{what}");
    }
}
