//! h2spec's hpack group (decoding errors, RFC 7541) and generic section 5 (every field
//! representation a server must accept). Each case is a GET `/` whose block carries one
//! representation before or after the request's own fields.

use crate::Expect::{Conn, Status};
use crate::kind::*;
use crate::*;
use twelve_testkit::h2::Client;

/// A GET `/` on stream 1 whose field block is `before`, the request's fields, then `after`.
fn get_around(c: &mut Client, before: &[u8], after: &[u8]) {
    let mut b = before.to_vec();
    b.extend(block(c, "GET", "/"));
    b.extend_from_slice(after);
    c.send(&headers(1, END_STREAM | END_HEADERS, &b));
}

const COMPRESSION: &[u32] = &[COMPRESSION_ERROR];

cases! {
    // RFC 7541 §2.3.3: an index past both tables is a decoding error (an indexed field,
    // index 70 with an empty dynamic table) ...
    hpack_2_3_3_c1_an_indexed_field_past_the_tables_is_compression_error: |c| {
        get_around(c, b"", b"\xc6");
    } => Conn(COMPRESSION);
    // ... and a literal's name index 70 too.
    hpack_2_3_3_c2_a_literal_name_index_past_the_tables_is_compression_error: |c| {
        get_around(c, b"", b"\x7f\x07\x00");
    } => Conn(COMPRESSION);
    // §4.2: a dynamic table size update comes first in a block, never after a field.
    hpack_4_2_c1_a_table_size_update_after_a_field_is_compression_error: |c| {
        get_around(c, b"", b"\x21");
    } => Conn(COMPRESSION);
    // §5.2: Huffman padding longer than 7 bits ...
    hpack_5_2_c1_huffman_padding_over_7_bits_is_compression_error: |c| {
        get_around(c, b"", b"\x00\x85\xf2\xb2\x4a\x84\xff\x84\x49\x50\x9f\xff");
    } => Conn(COMPRESSION);
    // ... padding not the EOS prefix (zeros) ...
    hpack_5_2_c2_huffman_padded_by_zeros_is_compression_error: |c| {
        get_around(c, b"", b"\x00\x85\xf2\xb2\x4a\x84\xff\x83\x49\x50\x90");
    } => Conn(COMPRESSION);
    // ... and the EOS symbol in the string are decoding errors.
    hpack_5_2_c3_huffman_with_eos_is_compression_error: |c| {
        get_around(c, b"", b"\x00\x85\xf2\xb2\x4a\x84\xff\x87\x49\x51\xff\xff\xff\xfa\x7f");
    } => Conn(COMPRESSION);
    // §6.1: index 0 is a decoding error.
    hpack_6_1_c1_index_0_is_compression_error: |c| {
        get_around(c, b"", b"\x80");
    } => Conn(COMPRESSION);
    // §6.3: a size update above SETTINGS_HEADER_TABLE_SIZE (4096 here: 4097).
    hpack_6_3_c1_a_table_size_update_over_the_setting_is_compression_error: |c| {
        get_around(c, b"\x3f\xe2\x1f", b"");
    } => Conn(COMPRESSION);

    // Generic 5 (RFC 7541 §6): each representation is accepted. `user-agent` is static
    // index 58; "h2spec" and "x-test" Huffman-coded are 9c48aca4 and f2b24a84ff.
    g5_c1_an_indexed_field: |c| {
        get_around(c, b"", b"\xba");
    } => Status(1, 200);
    g5_c2_incremental_indexing_indexed_name: |c| {
        get_around(c, b"", b"\x7a\x06h2spec");
    } => Status(1, 200);
    g5_c3_incremental_indexing_indexed_name_huffman: |c| {
        get_around(c, b"", b"\x7a\x84\x9c\x48\xac\xa4");
    } => Status(1, 200);
    g5_c4_incremental_indexing_new_name: |c| {
        get_around(c, b"", b"\x40\x06x-test\x06h2spec");
    } => Status(1, 200);
    g5_c5_incremental_indexing_new_name_huffman: |c| {
        get_around(c, b"", b"\x40\x85\xf2\xb2\x4a\x84\xff\x84\x9c\x48\xac\xa4");
    } => Status(1, 200);
    g5_c6_without_indexing_indexed_name: |c| {
        get_around(c, b"", b"\x0f\x2b\x06h2spec");
    } => Status(1, 200);
    g5_c7_without_indexing_indexed_name_huffman: |c| {
        get_around(c, b"", b"\x0f\x2b\x84\x9c\x48\xac\xa4");
    } => Status(1, 200);
    g5_c8_without_indexing_new_name: |c| {
        get_around(c, b"", b"\x00\x06x-test\x06h2spec");
    } => Status(1, 200);
    g5_c9_without_indexing_new_name_huffman: |c| {
        get_around(c, b"", b"\x00\x85\xf2\xb2\x4a\x84\xff\x84\x9c\x48\xac\xa4");
    } => Status(1, 200);
    g5_c10_never_indexed_indexed_name: |c| {
        get_around(c, b"", b"\x1f\x2b\x06h2spec");
    } => Status(1, 200);
    g5_c11_never_indexed_indexed_name_huffman: |c| {
        get_around(c, b"", b"\x1f\x2b\x84\x9c\x48\xac\xa4");
    } => Status(1, 200);
    g5_c12_never_indexed_new_name: |c| {
        get_around(c, b"", b"\x10\x06x-test\x06h2spec");
    } => Status(1, 200);
    g5_c13_never_indexed_new_name_huffman: |c| {
        get_around(c, b"", b"\x10\x85\xf2\xb2\x4a\x84\xff\x84\x9c\x48\xac\xa4");
    } => Status(1, 200);
    g5_c14_a_table_size_update: |c| {
        get_around(c, b"\x3f\xe1\x1f", b"");
    } => Status(1, 200);
    g5_c15_two_table_size_updates: |c| {
        get_around(c, b"\x3f\x61\x3f\xe1\x1f", b"");
    } => Status(1, 200);
    // A field added to the dynamic table is found there by the next block (§2.3.2: the
    // newest entry is index 62).
    g5_c16_an_indexed_dynamic_entry_from_an_earlier_block: |c| {
        get_around(c, b"", b"\x40\x06x-test\x06h2spec");
        check(c, Status(1, 200));
        let mut b = block(c, "GET", "/");
        b.push(0xbe);
        c.send(&headers(3, END_STREAM | END_HEADERS, &b));
    } => Status(3, 200);
}

/// RFC 7541 §4.2 and RFC 9113 §6.5.2: once the client's SETTINGS_HEADER_TABLE_SIZE of 0 is
/// acknowledged, the server's next field block opens with a size update to 0 and no block
/// indexes into a dynamic table (a decoder held to 0 octets decodes every response).
#[test]
fn hpack_4_2_c2_a_header_table_size_of_0_is_honoured() {
    use std::io::{Read, Write};
    use twelve_http::Status as Parsed;
    use twelve_http::h2::hpack::Decoder;
    use twelve_http::h2::{Frame, MAX_FRAME_SIZE_LIMIT, PREFACE, Setting, decode, encode_settings};

    let server = common::TestServer::start();
    let mut sock = std::net::TcpStream::connect(server.addr).unwrap();
    sock.set_read_timeout(Some(common::BOUND)).unwrap();
    let mut b = PREFACE.to_vec();
    encode_settings(&mut b, false, &[Setting::HeaderTableSize(0)]);
    sock.write_all(&b).unwrap();
    let mut dec = Decoder::new(4096);
    let mut enc = Client::raw(std::io::Cursor::new(Vec::new()));
    let (mut buf, mut blocks, mut sent) = (Vec::new(), Vec::new(), false);
    while blocks.len() < 2 {
        let (frame, used) = match decode(&buf, MAX_FRAME_SIZE_LIMIT).unwrap() {
            Parsed::Complete(x) => x,
            Parsed::Partial => {
                let mut chunk = [0u8; 16_384];
                let n = sock.read(&mut chunk).unwrap();
                assert!(n > 0, "closed");
                buf.extend_from_slice(&chunk[..n]);
                continue;
            }
        };
        match frame {
            Frame::Settings { ack: true, .. } => {
                // Ours is in force: requests from now on are answered under it.
                dec.set_max_table_size(0);
                let mut out = Vec::new();
                encode_settings(&mut out, true, &[]);
                for id in [1u32, 3] {
                    let block = enc.block(&twelve_testkit::h2::request("GET", "/x"));
                    out.extend(headers(id, END_STREAM | END_HEADERS, &block));
                }
                sock.write_all(&out).unwrap();
                sent = true;
            }
            Frame::Headers { block, .. } => {
                assert!(sent, "a response before any request");
                blocks.push(block.to_vec());
            }
            _ => {}
        }
        buf.drain(..used);
    }
    assert_eq!(
        blocks[0][0], 0x20,
        "the first block opens with a size update to 0"
    );
    for b in &blocks {
        let mut status = None;
        dec.decode(b, usize::MAX, |n, v| {
            if n == b":status" {
                status = Some(v.to_vec());
            }
        })
        .expect("decodes with a table of 0 octets");
        assert_eq!(status.as_deref(), Some(&b"200"[..]));
        assert_eq!(dec.table_size(), 0);
    }
    drop(sock);
    server.finish();
}
