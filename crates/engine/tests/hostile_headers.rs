//! docs/hostile-requests.md section B (header section), end to end over loopback with raw bytes.
//! Every row also checks that the server is alive and its fds are back to baseline.

mod common;
use common::*;

error_rows! {
    // 13
    b13_http_1_1_without_host_400: b"GET / HTTP/1.1\r\n\r\n" => [400];
    // 14
    b14_two_identical_hosts_400: b"GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n" => [400];
    b14_two_different_hosts_400: b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n" => [400];
    b14_host_with_space_400: b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n" => [400];
    b14_host_with_userinfo_400: b"GET / HTTP/1.1\r\nHost: u@a\r\n\r\n" => [400];
    b14_host_with_path_400: b"GET / HTTP/1.1\r\nHost: a/b\r\n\r\n" => [400];
    b14_host_port_out_of_range_400: b"GET / HTTP/1.1\r\nHost: a:99999\r\n\r\n" => [400];
    // 15: whitespace between field name and colon (RFC 9112 §5.1 MUST reject).
    b15_space_before_colon_content_length_400: b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length : 5\r\n\r\nhello" => [400];
    b15_space_before_colon_host_400: b"GET / HTTP/1.1\r\nHost : a\r\n\r\n" => [400];
    b15_tab_before_colon_400: b"GET / HTTP/1.1\r\nHost\t: a\r\n\r\n" => [400];
    // 16: whitespace-preceded first field line (RFC 9112 §2.2).
    b16_first_field_line_starts_with_space_400: b"GET / HTTP/1.1\r\n Host: a\r\n\r\n" => [400];
    b16_first_field_line_starts_with_tab_400: b"GET / HTTP/1.1\r\n\tHost: a\r\n\r\n" => [400];
    // 17: obs-fold.
    b17_obs_fold_400: b"GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n" => [400];
    b17_obs_fold_transfer_encoding_with_cl_400: b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding:\r\n chunked\r\n\r\nhello" => [400];
    // 18: field names.
    b18_empty_name_400: b"GET / HTTP/1.1\r\nHost: a\r\n: v\r\n\r\n" => [400];
    b18_no_colon_400: b"GET / HTTP/1.1\r\nHost: a\r\nFoo bar\r\n\r\n" => [400];
    b18_space_in_name_400: b"GET / HTTP/1.1\r\nHost: a\r\nFoo bar: x\r\n\r\n" => [400];
    b18_nul_in_name_400: b"GET / HTTP/1.1\r\nHost: a\r\nF\x00o: x\r\n\r\n" => [400];
    b18_tab_in_name_400: b"GET / HTTP/1.1\r\nHost: a\r\nF\to: x\r\n\r\n" => [400];
    b18_quote_in_name_400: b"GET / HTTP/1.1\r\nHost: a\r\nF\"o: x\r\n\r\n" => [400];
    b18_bracket_in_name_400: b"GET / HTTP/1.1\r\nHost: a\r\nF[o: x\r\n\r\n" => [400];
    b18_del_in_name_400: b"GET / HTTP/1.1\r\nHost: a\r\nF\x7fo: x\r\n\r\n" => [400];
    b18_high_byte_in_name_400: b"GET / HTTP/1.1\r\nHost: a\r\nF\xefo: x\r\n\r\n" => [400];
    b18_name_split_by_crlf_400: b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-\r\nEncoding: chunked\r\n\r\n0\r\n\r\n" => [400];
    // 19: field values.
    b19_nul_in_value_400: b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n" => [400];
    b19_bare_cr_in_value_400: b"GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n" => [400];
    b19_cr_only_line_end_400: b"GET / HTTP/1.1\r\nHost: a\r\nX: a\rY: b\r\n\r\n" => [400];
    b19_ctl_0x01_in_value_400: b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x01b\r\n\r\n" => [400];
    // 20: only SP/HTAB are OWS: NBSP or NEL around `chunked` must not make it chunked.
    b20_nbsp_around_chunked_not_chunked: b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \xa0chunked\xa0\r\n\r\n0\r\n\r\n" => [400, 501];
    b20_nel_after_chunked_not_chunked: b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\x85\r\n\r\n0\r\n\r\n" => [400, 501];
    // 24: the project's documented choice: bare LF is 400, in the request line and in fields.
    b24_bare_lf_everywhere_400: b"GET / HTTP/1.1\nHost: a\n\n" => [400];
    b24_bare_lf_in_fields_only_400: b"GET / HTTP/1.1\r\nHost: a\nX: y\r\n\r\n" => [400];
    b24_bare_lf_ending_head_400: b"GET / HTTP/1.1\r\nHost: a\r\n\n" => [400];
}

/// 13: HTTP/1.0 needs no Host; it is answered and, without keep-alive, closed.
#[test]
fn b13_http_1_0_without_host_200_then_close() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(&[&b"GET / HTTP/1.0\r\n\r\n"[..], SENTINEL].concat());
    let r = c.response();
    assert_status(&r, &[200]);
    assert_eq!(r.body, b"root");
    assert!(
        c.expect_eof().is_empty(),
        "HTTP/1.0 without keep-alive must close after one response"
    );
    srv.finish();
}

/// 20: obs-text is allowed in a field value.
#[test]
fn b20_obs_text_in_value_200() {
    let srv = TestServer::start();
    keep_row(
        &srv,
        b"GET / HTTP/1.1\r\nHost: a\r\nX: caf\xc3\xa9\r\n\r\n",
        200,
        Some(b"root"),
    );
    srv.finish();
}

fn head_with_headers(n: usize, value_len: usize) -> Vec<u8> {
    let mut req = b"GET / HTTP/1.1\r\nHost: a\r\n".to_vec();
    for i in 0..n {
        req.extend_from_slice(format!("X-{i}: ").as_bytes());
        req.extend(std::iter::repeat_n(b'v', value_len));
        req.extend_from_slice(b"\r\n");
    }
    req.extend_from_slice(b"\r\n");
    req
}

/// 21: Host plus 100 more lines is 101 field lines, one over the limit of 100.
#[test]
fn b21_101_header_lines_431() {
    let srv = TestServer::start();
    error_row(&srv, &head_with_headers(100, 1), &[431]);
    srv.finish();
}

/// 21, the edge: exactly 100 field lines are fine.
#[test]
fn b21_100_header_lines_200() {
    let srv = TestServer::start();
    keep_row(&srv, &head_with_headers(99, 1), 200, Some(b"root"));
    srv.finish();
}

/// 22: one 9 KiB value is over the 8 KiB field-line limit.
#[test]
fn b22_one_9k_header_value_431() {
    let srv = TestServer::start();
    error_row(&srv, &head_with_headers(1, 9 * 1024), &[431]);
    srv.finish();
}

/// 22: 17 KiB of small fields is over the 16 KiB head limit.
#[test]
fn b22_17k_head_of_small_headers_431() {
    let srv = TestServer::start();
    // 80 lines of ~220 bytes: ~17.6 KiB, each line well under 8 KiB, count under 100.
    error_row(&srv, &head_with_headers(80, 214), &[431]);
    srv.finish();
}

/// 22: a head trickled in 1 KiB pieces that never ends: 431 once it passes 16 KiB (bounded
/// buffering), never a hang until the header timeout.
#[test]
fn b22_trickled_endless_head_431() {
    let srv = TestServer::start();
    let mut c = srv.connect();
    c.send(b"GET / HTTP/1.1\r\nHost: a\r\n");
    let line = [&b"X-Pad: "[..], &[b'p'; 1015][..], b"\r\n"].concat();
    for _ in 0..40 {
        if c.try_send(&line).is_err() {
            break;
        }
    }
    let r = c.response();
    assert_error_then_close(&mut c, &r, &[431]);
    srv.finish();
}

/// 23: `Content_Length` and `Transfer_Encoding` are ordinary fields: no body is expected, and
/// the next request on the connection is read as a request.
#[test]
fn b23_underscore_framing_names_are_ordinary_fields() {
    let srv = TestServer::start();
    keep_row(
        &srv,
        b"POST /echo HTTP/1.1\r\nHost: a\r\nContent_Length: 5\r\n\r\n",
        200,
        Some(b""),
    );
    keep_row(
        &srv,
        b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer_Encoding: chunked\r\n\r\n",
        200,
        Some(b""),
    );
    srv.finish();
}

/// 17, split: an obs-fold request split at every byte boundary.
#[test]
fn b17_obs_fold_split_at_every_byte() {
    let srv = TestServer::start();
    error_split_at_every_byte(
        &srv,
        b"GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n",
        &[400],
    );
    srv.finish();
}

/// 24, split: bare LF split at every byte boundary (a split between CR and LF must not make
/// a bare LF look like CRLF, nor the reverse).
#[test]
fn b24_bare_lf_split_at_every_byte() {
    let srv = TestServer::start();
    error_split_at_every_byte(&srv, b"GET / HTTP/1.1\r\nHost: a\nX: y\r\n\r\n", &[400]);
    srv.finish();
}
