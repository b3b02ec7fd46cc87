//! docs/hostile-requests.md sections C (Content-Length) and D (Transfer-Encoding, chunked), end to
//! end over loopback with raw bytes. Every row also checks that the server is alive and its
//! fds are back to baseline.

mod common;
use common::*;

/// `POST /echo` with one `Content-Length: <cl>` and a 5-byte body.
macro_rules! cl_error_rows {
    ($($name:ident: $cl:literal;)*) => {
        error_rows! {$(
            $name: concat!("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: ", $cl, "\r\n\r\nhello").as_bytes() => [400];
        )*}
    };
}

/// `POST /echo` with one `Transfer-Encoding` line `<te>` and a valid chunked body.
macro_rules! te_error_rows {
    ($($name:ident: $te:literal => $statuses:expr;)*) => {
        error_rows! {$(
            $name: concat!("POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ", $te, "\r\n\r\n5\r\nhello\r\n0\r\n\r\n").as_bytes() => $statuses;
        )*}
    };
}

/// Chunked `POST /echo` whose body is `<body>`: framing errors.
macro_rules! chunk_error_rows {
    ($($name:ident: $body:literal => $statuses:expr;)*) => {
        error_rows! {$(
            $name: concat!("POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", $body).as_bytes() => $statuses;
        )*}
    };
}

// ---- C. Content-Length ----

keep_rows! {
    // 25
    c25_post_echo_then_pipelined_get: b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello" => 200, Some(b"hello");
    // 27: leading zeros are decimal, never octal.
    c27_leading_zeros_are_decimal: b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 0005\r\n\r\nhello" => 200, Some(b"hello");
}

cl_error_rows! {
    c26_cl_letters_400: "abc";
    c26_cl_digit_then_letter_400: "1Z";
    c26_cl_plus_sign_400: "+5";
    c26_cl_negative_400: "-1";
    c26_cl_negative_zero_400: "-0";
    c26_cl_hex_400: "0x5";
    c26_cl_decimal_point_400: "5.0";
    c26_cl_underscore_400: "1_0";
    c26_cl_internal_space_400: "5 5";
    c26_cl_empty_400: "";
    c26_cl_list_of_different_400: "5,6";
    // 29: the project rejects even identical duplicates (never picks first or last).
    c29_cl_list_of_identical_400: "5, 5";
}

error_rows! {
    // 28: no wraparound of 2^64 or of 40 digits.
    c28_cl_2_pow_64_400_or_413: b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 18446744073709551616\r\n\r\nhello" => [400, 413];
    c28_cl_40_digits_400_or_413: b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 1234567890123456789012345678901234567890\r\n\r\nhello" => [400, 413];
    // 29
    c29_two_cl_lines_differing_400: b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello" => [400];
    c29_two_cl_lines_identical_400: b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello" => [400];
}

/// 30: a declared body over the limit is refused before any of it is sent.
#[test]
fn c30_huge_cl_413_without_waiting_for_body() {
    let srv = TestServer::start();
    // Under the 1 s body timeout a 408 would come instead: the status tells them apart.
    lone_error_row(
        &srv,
        b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000000\r\n\r\n",
        &[413],
    );
    srv.finish();
}

/// 31: an incomplete body then a half-close: never a 2xx; the connection closes.
#[test]
fn c31_incomplete_body_then_half_close_no_2xx() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabcd");
    c.shutdown_write();
    assert_incomplete_body_refused(&mut c);
    srv.finish();
}

/// 31: an incomplete body then a stall: 408 and close after the body idle timeout.
#[test]
fn c31_incomplete_body_then_stall_408() {
    let srv = TestServer::start();
    lone_error_row(
        &srv,
        b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabcd",
        &[408],
    );
    srv.finish();
}

/// 32: a GET body that looks like a request is consumed as body, never answered as a
/// request; `/` is answered once and `/x` next (or the body is refused with 400 + close).
#[test]
fn c32_get_body_that_looks_like_a_request_is_consumed() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nGET /GET /x HTTP/1.1\r\nHost: a\r\n\r\n");
    let r = c.response();
    if r.status == 400 {
        assert_error_then_close(&mut c, &r, &[400]);
    } else {
        assert_eq!((r.status, r.body.as_slice()), (200, &b"root"[..]), "{r:?}");
        let next = c.response();
        assert_eq!(
            (next.status, next.body.as_slice()),
            (200, &b"x"[..]),
            "{next:?}"
        );
    }
    drop(c);
    srv.finish();
}

/// 33: bytes after a `Content-Length: 0` body are the next request, here an invalid one.
#[test]
fn c33_bytes_after_empty_body_are_a_new_request() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(
        &[
            &b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\nXYZ\r\n\r\n"[..],
            SENTINEL,
        ]
        .concat(),
    );
    let r = c.response();
    assert_eq!((r.status, r.body.len()), (200, 0), "{r:?}");
    let r = c.response();
    assert_error_then_close(&mut c, &r, &[400]);
    srv.finish();
}

/// 25, split: POST + GET pipelined, split in two at every byte boundary.
#[test]
fn c25_post_then_get_split_at_every_byte() {
    let srv = TestServer::start();
    let batch = b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: a\r\n\r\n";
    split_at_every_byte(&srv, batch, 2, |rs| {
        assert_eq!((rs[0].status, rs[0].body.as_slice()), (200, &b"hello"[..]));
        assert_eq!((rs[1].status, rs[1].body.as_slice()), (200, &b"root"[..]));
    });
    srv.finish();
}

// ---- D. Transfer-Encoding / chunked ----

const CHUNKED_34: &[u8] = b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nA;ext=1\r\n0123456789\r\n000\r\nX-T: 1\r\n\r\n";

keep_rows! {
    // 34: extensions ignored, upper-case hex, `000` last-chunk, a trailer field.
    d34_valid_chunked_with_ext_and_trailer: CHUNKED_34 => 200, Some(b"hello0123456789");
    d34_lower_case_hex: b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\n0\r\n\r\n" => 200, Some(b"0123456789");
    // 40: transfer codings are case-insensitive (RFC 9112 §7).
    d40_capitalised_chunked: b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n" => 200, Some(b"hello");
    d40_upper_case_chunked: b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: CHUNKED\r\n\r\n5\r\nhello\r\n0\r\n\r\n" => 200, Some(b"hello");
    // 45: framing and routing fields in trailers are never applied (RFC 9110 §6.5): the
    // trailer's Content-Length does not make the next request a body.
    d45_content_length_and_host_in_trailer_ignored: b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nContent-Length: 100\r\nHost: evil\r\n\r\n" => 200, Some(b"hello");
}

/// 34, split: the chunked request and a pipelined GET, split at every byte boundary.
#[test]
fn d34_chunked_then_get_split_at_every_byte() {
    let srv = TestServer::start();
    let batch = [CHUNKED_34, b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"].concat();
    split_at_every_byte(&srv, &batch, 2, |rs| {
        assert_eq!(
            (rs[0].status, rs[0].body.as_slice()),
            (200, &b"hello0123456789"[..])
        );
        assert_eq!((rs[1].status, rs[1].body.as_slice()), (200, &b"root"[..]));
    });
    srv.finish();
}

error_rows! {
    // 35: TE + CL, both orders, with smuggling payloads; the project rejects and closes.
    d35_te_then_cl_400: b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\nX" => [400];
    d35_cl_then_te_400: b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nX" => [400];
    d35_te_cl_desync_cl_4_400: b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n5c\r\nGPOST / HTTP/1.1\r\n\r\n0\r\n\r\n" => [400];
    // 36
    d36_te_in_http_1_0_400: b"POST /echo HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n" => [400];
}

te_error_rows! {
    // 37: unknown codings: never fall back to CL or an empty body.
    d37_gzip_501_or_400: "gzip" => [400, 501];
    d37_identity_501_or_400: "identity" => [400, 501];
    d37_xchunked_501_or_400: "xchunked" => [400, 501];
    d37_chunkedx_501_or_400: "chunkedx" => [400, 501];
    d37_x_chunked_501_or_400: "x-chunked" => [400, 501];
    // 38
    d38_chunked_not_final_400: "chunked, gzip" => [400];
    d38_chunked_twice_400: "chunked, chunked" => [400];
    d38_chunked_with_params_400: "chunked;q=1" => [400];
    // 39: gzip is not decoded here.
    d39_gzip_then_chunked_501: "gzip, chunked" => [501];
    // 40: the project's choice: an empty list element in Transfer-Encoding is 400.
    d40_empty_element_before_chunked_400: ", chunked" => [400];
}

error_rows! {
    // 38
    d38_two_te_lines_400: b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n" => [400];
}

chunk_error_rows! {
    // 41: chunk-size = 1*HEXDIG, nothing else.
    d41_size_0x_prefix_400: "0x5\r\nhello\r\n0\r\n\r\n" => [400];
    d41_size_plus_400: "+5\r\nhello\r\n0\r\n\r\n" => [400];
    d41_size_minus_zero_400: "-0\r\n\r\n" => [400];
    d41_size_leading_space_400: " 5\r\nhello\r\n0\r\n\r\n" => [400];
    d41_size_trailing_space_400: "5 \r\nhello\r\n0\r\n\r\n" => [400];
    d41_size_underscore_400: "5_0\r\nhello\r\n0\r\n\r\n" => [400];
    d41_size_not_hex_400: "Z\r\nhello\r\n0\r\n\r\n" => [400];
    d41_size_empty_line_400: "\r\nhello\r\n0\r\n\r\n" => [400];
    d41_size_bare_cr_400: "5\r\r;a\r\nhello\r\n0\r\n\r\n" => [400];
    // 42: no truncation, no wrap.
    d42_size_17_hex_digits_400_or_413: "FFFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n" => [400, 413];
    d42_size_over_32_bits_400_or_413: "100000005\r\nhello\r\n0\r\n\r\n" => [400, 413];
    d42_size_16_hex_digits_400_or_413: "FFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n" => [400, 413];
    // 43: chunk-data must be followed by exactly CRLF.
    d43_data_longer_than_size_400: "5\r\nhelloXX\r\n0\r\n\r\n" => [400];
    d43_no_crlf_after_data_400: "5\r\nhello0\r\n\r\n" => [400];
    d43_other_bytes_instead_of_crlf_400: "5\r\nhelloXY0\r\n\r\n" => [400];
    // 44: only CRLF in chunked framing.
    d44_bare_lf_everywhere_400: "5\nhello\n0\n\n" => [400];
    d44_bare_lf_after_data_400: "5\r\nhello\n0\r\n\r\n" => [400];
    d44_lf_inside_extension_400: "5;a\nb\r\nhello\r\n0\r\n\r\n" => [400];
    d44_nul_inside_extension_400: "5;a\x00b\r\nhello\r\n0\r\n\r\n" => [400];
    d44_ctl_inside_extension_400: "5;a\x01b\r\nhello\r\n0\r\n\r\n" => [400];
}

fn chunked_head() -> Vec<u8> {
    b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec()
}

/// 45: one 20 KiB chunk extension (over the 16 KiB total).
#[test]
fn d45_one_20k_extension_rejected() {
    let srv = TestServer::start();
    let mut req = chunked_head();
    req.extend_from_slice(b"5;e=");
    req.extend(std::iter::repeat_n(b'x', 20 * 1024));
    req.extend_from_slice(b"\r\nhello\r\n0\r\n\r\n");
    big_error_row(&srv, &req, &[400, 413, 431]);
    srv.finish();
}

/// 45: 10 000 one-byte chunks, each with a 100-byte extension (1 MB of extensions).
#[test]
fn d45_10000_chunks_with_100_byte_extensions_rejected() {
    let srv = TestServer::start();
    let mut req = chunked_head();
    let chunk = [&b"1;"[..], &[b'e'; 98][..], b"\r\nx\r\n"].concat();
    for _ in 0..10_000 {
        req.extend_from_slice(&chunk);
    }
    req.extend_from_slice(b"0\r\n\r\n");
    big_error_row(&srv, &req, &[400, 413, 431]);
    srv.finish();
}

/// 45: a 20 KiB trailer section (over the 8 KiB trailer limit).
#[test]
fn d45_20k_trailer_431() {
    let srv = TestServer::start();
    let mut req = chunked_head();
    req.extend_from_slice(b"5\r\nhello\r\n0\r\n");
    for i in 0..20 {
        req.extend_from_slice(format!("X-T{i}: ").as_bytes());
        req.extend(std::iter::repeat_n(b't', 1000));
        req.extend_from_slice(b"\r\n");
    }
    req.extend_from_slice(b"\r\n");
    big_error_row(&srv, &req, &[400, 413, 431]);
    srv.finish();
}

/// 46: a chunked body whose total passes the 64 KiB limit.
#[test]
fn d46_chunked_total_over_limit_413() {
    let srv = TestServer::start();
    let mut req = chunked_head();
    let chunk = [&b"4000\r\n"[..], &[b'b'; 0x4000][..], b"\r\n"].concat();
    for _ in 0..5 {
        req.extend_from_slice(&chunk); // 5 × 16 KiB = 80 KiB
    }
    req.extend_from_slice(b"0\r\n\r\n");
    big_error_row(&srv, &req, &[413]);
    srv.finish();
}

/// 46: a chunked body that ends without its last-chunk, then the client half-closes: no 2xx.
#[test]
fn d46_chunked_without_last_chunk_then_close_no_2xx() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(&[&chunked_head()[..], b"5\r\nhello\r\n"].concat());
    c.shutdown_write();
    assert_incomplete_body_refused(&mut c);
    srv.finish();
}

/// 46, edge: a chunked body of exactly the limit is accepted.
#[test]
fn d46_chunked_total_at_limit_200() {
    let srv = TestServer::start();
    let mut req = chunked_head();
    let chunk = [&b"4000\r\n"[..], &[b'b'; 0x4000][..], b"\r\n"].concat();
    for _ in 0..4 {
        req.extend_from_slice(&chunk); // 4 × 16 KiB = 64 KiB
    }
    req.extend_from_slice(b"0\r\n\r\n");
    let r = keep_row(&srv, &req, 200, None);
    assert_eq!(r.body.len(), BODY_LIMIT);
    srv.finish();
}

/// 35, split: the CL.TE smuggling request split at every byte boundary.
#[test]
fn d35_te_and_cl_split_at_every_byte() {
    let srv = TestServer::start();
    let req = b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nX";
    error_split_at_every_byte(&srv, req, &[400]);
    srv.finish();
}

/// 43 and 44, split: chunk framing errors split at every byte boundary (the CRLF after the
/// data and the bare LF are exactly where a resumable decoder keeps state).
#[test]
fn d43_d44_chunk_framing_errors_split_at_every_byte() {
    let srv = TestServer::start();
    let head = chunked_head();
    for body in [
        &b"5\r\nhelloXY0\r\n\r\n"[..],
        b"5\r\nhello\n0\r\n\r\n",
        b"5;a\nb\r\nhello\r\n0\r\n\r\n",
    ] {
        error_split_at_every_byte(&srv, &[&head[..], body].concat(), &[400]);
    }
    srv.finish();
}
