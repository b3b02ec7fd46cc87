//! h2spec's http2 section 8 and generic section 4: request/response exchange, field rules
//! and malformed requests, server push (RFC 9113 §8), and plain GET, HEAD and POST.

use crate::Expect::{Conn, Status, Stream};
use crate::kind::*;
use crate::*;
use twelve_testkit::h2::{Client, request};

/// HEADERS with `fields` on stream 1 (END_STREAM, END_HEADERS).
fn send(c: &mut Client, fields: &[(&str, &str)]) {
    let b = c.block(fields);
    c.send(&headers(1, END_STREAM | END_HEADERS, &b));
}

/// A GET `/` with `extra` fields after the pseudo-header fields.
fn get_with(c: &mut Client, extra: &[(&str, &str)]) {
    let mut f = request("GET", "/");
    f.extend_from_slice(extra);
    send(c, &f);
}

/// A POST `/echo` (HEADERS without END_STREAM) with `extra` fields.
fn post_with(c: &mut Client, extra: &[(&str, &str)]) {
    let mut f = request("POST", "/echo");
    f.extend_from_slice(extra);
    let b = c.block(&f);
    c.send(&headers(1, END_HEADERS, &b));
}

const PROTOCOL: &[u32] = &[PROTOCOL_ERROR];

cases! {
    // §8.1: a second HEADERS (trailers) without END_STREAM is malformed.
    s8_1_c1_trailers_without_end_stream_are_protocol_error: |c| {
        post_with(c, &[]);
        c.data(1, b"test", false);
        let t = c.block(&[("x-test", "ok")]);
        c.send(&headers(1, END_HEADERS, &t));
    } => Stream(1, PROTOCOL);

    // §8.2.1: field names are lowercase.
    s8_1_2_c1_an_uppercase_field_name_is_protocol_error: |c| {
        get_with(c, &[("X-TEST", "ok")]);
    } => Stream(1, PROTOCOL);

    // §8.2.1: a field name has no character outside 0x21-0x7e but lowercase letters, and no
    // colon past a pseudo-header's first; a value has no NUL, CR or LF, and no whitespace at
    // either end. Either is malformed.
    s8_1_2_c2_a_space_in_a_field_name_is_protocol_error: |c| {
        get_with(c, &[("x test", "ok")]);
    } => Stream(1, PROTOCOL);
    s8_1_2_c3_a_colon_inside_a_field_name_is_protocol_error: |c| {
        get_with(c, &[("x:test", "ok")]);
    } => Stream(1, PROTOCOL);
    s8_1_2_c4_an_empty_field_name_is_protocol_error: |c| {
        get_with(c, &[("", "ok")]);
    } => Stream(1, PROTOCOL);
    s8_1_2_c5_a_nul_in_a_value_is_protocol_error: |c| {
        get_with(c, &[("x-test", "o\0k")]);
    } => Stream(1, PROTOCOL);
    s8_1_2_c6_a_lf_in_a_value_is_protocol_error: |c| {
        get_with(c, &[("x-test", "o\nk")]);
    } => Stream(1, PROTOCOL);
    s8_1_2_c7_a_cr_in_a_value_is_protocol_error: |c| {
        get_with(c, &[("x-test", "o\rk")]);
    } => Stream(1, PROTOCOL);
    s8_1_2_c8_a_value_starting_with_a_space_is_protocol_error: |c| {
        get_with(c, &[("x-test", " ok")]);
    } => Stream(1, PROTOCOL);
    s8_1_2_c9_a_value_ending_with_a_tab_is_protocol_error: |c| {
        get_with(c, &[("x-test", "ok\t")]);
    } => Stream(1, PROTOCOL);
    // ... while inner whitespace, and an empty value, are allowed.
    s8_1_2_c10_inner_whitespace_and_empty_values_are_allowed: |c| {
        get_with(c, &[("x-test", "o k\tk"), ("x-empty", "")]);
    } => Status(1, 200);

    // §8.3: pseudo-header fields: only the request's, only before regular fields, never in
    // trailers.
    s8_1_2_1_c1_an_unknown_pseudo_header_is_protocol_error: |c| {
        get_with(c, &[(":test", "ok")]);
    } => Stream(1, PROTOCOL);
    s8_1_2_1_c2_a_response_pseudo_header_is_protocol_error: |c| {
        get_with(c, &[(":status", "200")]);
    } => Stream(1, PROTOCOL);
    s8_1_2_1_c3_a_pseudo_header_in_trailers_is_protocol_error: |c| {
        post_with(c, &[]);
        c.data(1, b"test", false);
        let t = c.block(&[(":method", "POST")]);
        c.send(&headers(1, END_STREAM | END_HEADERS, &t));
    } => Stream(1, PROTOCOL);
    s8_1_2_1_c4_a_pseudo_header_after_a_regular_field_is_protocol_error: |c| {
        send(c, &[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            ("x-test", "ok"),
            (":authority", "a"),
        ]);
    } => Stream(1, PROTOCOL);

    // §8.2.2: connection-specific fields, and TE other than "trailers".
    s8_1_2_2_c1_a_connection_specific_field_is_protocol_error: |c| {
        get_with(c, &[("connection", "keep-alive")]);
    } => Stream(1, PROTOCOL);
    s8_1_2_2_c2_te_other_than_trailers_is_protocol_error: |c| {
        get_with(c, &[("trailers", "test"), ("te", "trailers, deflate")]);
    } => Stream(1, PROTOCOL);
    // ... while TE: trailers is allowed.
    s8_1_2_2_c3_te_trailers_is_allowed: |c| {
        get_with(c, &[("te", "trailers")]);
    } => Status(1, 200);

    // §8.3.1: :path is not empty; :method, :scheme and :path each once and present.
    s8_1_2_3_c1_an_empty_path_is_protocol_error: |c| {
        send(c, &[(":method", "GET"), (":scheme", "http"), (":path", ""), (":authority", "a")]);
    } => Stream(1, PROTOCOL);
    s8_1_2_3_c2_no_method_is_protocol_error: |c| {
        send(c, &[(":scheme", "http"), (":path", "/"), (":authority", "a")]);
    } => Stream(1, PROTOCOL);
    s8_1_2_3_c3_no_scheme_is_protocol_error: |c| {
        send(c, &[(":method", "GET"), (":path", "/"), (":authority", "a")]);
    } => Stream(1, PROTOCOL);
    s8_1_2_3_c4_no_path_is_protocol_error: |c| {
        send(c, &[(":method", "GET"), (":scheme", "http"), (":authority", "a")]);
    } => Stream(1, PROTOCOL);
    s8_1_2_3_c5_a_duplicate_method_is_protocol_error: |c| {
        get_with(c, &[(":method", "GET")]);
    } => Stream(1, PROTOCOL);
    s8_1_2_3_c6_a_duplicate_scheme_is_protocol_error: |c| {
        send(c, &[(":method", "GET"), (":scheme", "http"), (":scheme", "http"), (":path", "/")]);
    } => Stream(1, PROTOCOL);
    s8_1_2_3_c7_a_duplicate_path_is_protocol_error: |c| {
        send(c, &[(":method", "GET"), (":scheme", "http"), (":path", "/"), (":path", "/")]);
    } => Stream(1, PROTOCOL);

    // §8.1.1: content-length that disagrees with the DATA is malformed: one frame ...
    s8_1_2_6_c1_content_length_over_one_data_frame_is_protocol_error: |c| {
        post_with(c, &[("content-length", "1")]);
        c.data(1, b"test", true);
    } => Stream(1, PROTOCOL);
    // ... or their sum.
    s8_1_2_6_c2_content_length_over_many_data_frames_is_protocol_error: |c| {
        post_with(c, &[("content-length", "1")]);
        c.data(1, b"test", false);
        c.data(1, b"test", true);
    } => Stream(1, PROTOCOL);
    // ... fewer octets than declared, found at END_STREAM.
    s8_1_2_6_c3_content_length_under_the_data_is_protocol_error: |c| {
        post_with(c, &[("content-length", "10")]);
        c.data(1, b"test", true);
    } => Stream(1, PROTOCOL);

    // ... and a content-length above 0 on a request that ends with its HEADERS.
    s8_1_2_6_c4_content_length_without_data_is_protocol_error: |c| {
        let mut f = request("POST", "/echo");
        f.push(("content-length", "5"));
        send(c, &f);
    } => Stream(1, PROTOCOL);
    // A content-length that is not a number is malformed (RFC 9110 §8.6).
    s8_1_2_6_c5_a_content_length_not_a_number_is_protocol_error: |c| {
        post_with(c, &[("content-length", "four")]);
        c.data(1, b"test", true);
    } => Stream(1, PROTOCOL);

    // §8.4: a client cannot push: PUSH_PROMISE is a connection error PROTOCOL_ERROR.
    s8_2_c1_a_push_promise_from_a_client_is_protocol_error: |c| {
        c.get(1, "/");
        let mut p = 2u32.to_be_bytes().to_vec();
        p.extend(block(c, "GET", "/"));
        c.send(&raw(PUSH_PROMISE, END_HEADERS, 1, &p));
    } => Conn(PROTOCOL);

    // generic 4: a GET, a HEAD, a POST and a POST with trailers are answered.
    g4_c1_a_get_is_answered: |c| {
        c.get(1, "/");
    } => Status(1, 200);
    g4_c2_a_head_is_answered: |c| {
        send(c, &request("HEAD", "/"));
    } => Status(1, 200);
    g4_c3_a_post_is_answered: |c| {
        post_with(c, &[]);
        c.data(1, b"test", true);
    } => Status(1, 200);
    g4_c4_a_post_with_trailers_is_answered: |c| {
        post_with(c, &[("trailer", "x-test")]);
        c.data(1, b"test", false);
        let t = c.block(&[("x-test", "ok")]);
        c.send(&headers(1, END_STREAM | END_HEADERS, &t));
    } => Status(1, 200);
}

/// A HEAD's response carries the GET's fields and no body (RFC 9110 §9.3.2).
#[test]
fn g4_c5_a_head_response_has_no_body() {
    let server = common::TestServer::start();
    let mut c = handshake(&server);
    send(&mut c, &request("HEAD", "/"));
    let r = c.response(1).unwrap();
    assert_eq!((r.status, r.body.len()), (200, 0));
    assert_eq!(r.field("content-length"), Some("4"));
    drop(c);
    server.finish();
}

/// A POST's body arrives whole across DATA frames with its trailers.
#[test]
fn g4_c6_a_post_body_with_trailers_is_whole() {
    let server = common::TestServer::start();
    let mut c = handshake(&server);
    post_with(&mut c, &[]);
    c.data(1, b"te", false);
    c.data(1, b"st", false);
    let t = c.block(&[("x-test", "ok")]);
    c.send(&headers(1, END_STREAM | END_HEADERS, &t));
    assert_eq!(c.response(1).unwrap().body, b"test");
    drop(c);
    server.finish();
}
