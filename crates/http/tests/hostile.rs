//! Every codec-level case of sections A–D of docs/hostile-requests.md, one named
//! test per case, with the suite's limits (body 64 KiB). Every rejection is also checked at
//! every split point: a prefix must be `Partial` or the same error.

use twelve_http::fuzzing::{Parsed, decode_chunked, transcript};
use twelve_http::{BodyFraming, Header, Limits, Method, ParseError, Request, Status, Version};

const LIMITS: Limits = Limits {
    body_bytes: 64 * 1024,
    ..Limits::DEFAULT
};

fn parse<'h, 'b>(
    buf: &'b [u8],
    headers: &'h mut [Header<'b>],
) -> Result<Status<Request<'h, 'b>>, ParseError> {
    twelve_http::parse_request(buf, headers, &LIMITS)
}

/// Asserts that `buf` is rejected with `error`, which maps to `status`, and that every prefix
/// of it is `Partial` or the same error.
fn assert_rejects(buf: &[u8], error: ParseError, status: u16) {
    let mut headers = [Header::EMPTY; 128];
    assert_eq!(parse(buf, &mut headers), Err(error));
    assert_eq!(error.status(), status);
    for k in splits(buf.len()) {
        let mut headers = [Header::EMPTY; 128];
        let r = parse(&buf[..k], &mut headers);
        assert!(
            r == Ok(Status::Partial) || r == Err(error),
            "prefix {k}: {r:?}"
        );
    }
}

/// Parses a complete head, checks that every proper prefix of it is `Partial`, and hands the
/// request to `check`.
fn assert_accepts(buf: &[u8], check: impl Fn(&Request<'_, '_>)) {
    let mut headers = [Header::EMPTY; 128];
    let r = match parse(buf, &mut headers) {
        Ok(Status::Complete(r)) => r,
        other => panic!("expected a request, got {other:?}"),
    };
    for k in splits(r.head_len).filter(|&k| k < r.head_len) {
        let mut headers = [Header::EMPTY; 128];
        assert_eq!(
            parse(&buf[..k], &mut headers),
            Ok(Status::Partial),
            "prefix {k}"
        );
    }
    check(&r);
}

/// Split points to try: every one for short inputs, about a thousand spread over long ones,
/// plus the last few bytes (where limits trip).
fn splits(len: usize) -> impl Iterator<Item = usize> {
    let step = (len / 1000).max(1);
    (0..len).step_by(step).chain(len.saturating_sub(4)..len)
}

macro_rules! rejects {
    ($($name:ident: $bytes:expr => $error:ident, $status:expr;)*) => {$(
        #[test]
        fn $name() {
            assert_rejects(&$bytes[..], ParseError::$error, $status);
        }
    )*};
}

macro_rules! accepts {
    ($($name:ident: $bytes:expr => $check:expr;)*) => {$(
        #[test]
        fn $name() {
            assert_accepts(&$bytes[..], $check);
        }
    )*};
}

fn with_target(target: &str) -> Vec<u8> {
    format!("GET {target} HTTP/1.1\r\nHost: a\r\n\r\n").into_bytes()
}

fn with_field(line: &[u8]) -> Vec<u8> {
    let mut v = b"GET / HTTP/1.1\r\nHost: a\r\n".to_vec();
    v.extend_from_slice(line);
    v.extend_from_slice(b"\r\n\r\n");
    v
}

fn post(fields: &str) -> Vec<u8> {
    format!("POST / HTTP/1.1\r\nHost: a\r\n{fields}\r\n").into_bytes()
}

// A. Request line

accepts! {
    a01_leading_empty_lines_skipped: b"\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n" => |r| {
        assert_eq!((r.method, r.path(), r.head_len), (Method::Get, "/", 31));
    };
    a01_eight_leading_empty_lines_skipped: [&b"\r\n".repeat(8)[..], b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"].concat() => |r| {
        assert_eq!(r.path(), "/");
    };
    a09_http_1_2_read_as_1_1: b"GET / HTTP/1.2\r\nHost: a\r\n\r\n" => |r| {
        assert_eq!(r.version, Version::Http11);
        assert!(r.keep_alive);
    };
    a10_7900_byte_target_accepted: with_target(&format!("/{}", "a".repeat(7899))) => |r| {
        assert_eq!(r.path().len(), 7900);
    };
    a11_absolute_form_authority_replaces_host: b"GET http://a/x HTTP/1.1\r\nHost: b\r\n\r\n" => |r| {
        assert_eq!((r.path(), r.host(), r.target()), ("/x", Some("a"), "http://a/x"));
    };
    a11_absolute_form_without_path_is_root: b"GET HTTP://a:8080?q HTTP/1.1\r\nHost: b\r\n\r\n" => |r| {
        assert_eq!((r.path(), r.query(), r.host()), ("/", Some("q"), Some("a:8080")));
    };
    a11_options_asterisk: b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n" => |r| {
        assert_eq!((r.method, r.path()), (Method::Options, "*"));
    };
    a12_connect_authority_form_parses_for_the_engine_to_refuse: b"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n" => |r| {
        assert_eq!((r.method, r.host(), r.path()), (Method::Connect, Some("a:443"), ""));
    };
    a_origin_form_query_split: with_target("/json?x=1&y") => |r| {
        assert_eq!((r.path(), r.query()), ("/json", Some("x=1&y")));
    };
}

rejects! {
    a01_nine_leading_empty_lines: [&b"\r\n".repeat(9)[..], b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"].concat() => TooManyEmptyLines, 400;
    a02_lower_case_method: b"get / HTTP/1.1\r\nHost: a\r\n\r\n" => UnknownMethod, 501;
    a03_space_inside_method: b"G ET / HTTP/1.1\r\nHost: a\r\n\r\n" => InvalidVersion, 400;
    a03_nul_inside_method: b"G\x00T / HTTP/1.1\r\nHost: a\r\n\r\n" => InvalidRequestLine, 400;
    a03_bracket_inside_method: b"GE[T / HTTP/1.1\r\nHost: a\r\n\r\n" => InvalidMethod, 400;
    a03_300_byte_method: [&b"A".repeat(300)[..], b" / HTTP/1.1\r\nHost: a\r\n\r\n"].concat() => UnknownMethod, 501;
    a04_two_spaces: b"GET  / HTTP/1.1\r\nHost: a\r\n\r\n" => InvalidRequestLine, 400;
    a04_tab_separator: b"GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n" => InvalidRequestLine, 400;
    a04_trailing_space: b"GET / HTTP/1.1 \r\nHost: a\r\n\r\n" => InvalidRequestLine, 400;
    a04_bare_cr_separator: b"GET /\rHTTP/1.1\r\nHost: a\r\n\r\n" => InvalidRequestLine, 400;
    a05_space_in_target: b"GET /a b HTTP/1.1\r\nHost: a\r\n\r\n" => InvalidVersion, 400;
    a05_nul_in_target: b"GET /a\x00b HTTP/1.1\r\nHost: a\r\n\r\n" => InvalidTarget, 400;
    a05_del_in_target: b"GET /a\x7fb HTTP/1.1\r\nHost: a\r\n\r\n" => InvalidTarget, 400;
    a05_raw_ff_in_target: b"GET /a\xffb HTTP/1.1\r\nHost: a\r\n\r\n" => InvalidTarget, 400;
    a05_fragment_in_target: b"GET /a#frag HTTP/1.1\r\nHost: a\r\n\r\n" => InvalidTarget, 400;
    a06_http_0_9_no_version: b"GET /\r\n\r\n" => InvalidRequestLine, 400;
    a07_lower_case_http: b"GET / http/1.1\r\nHost: a\r\n\r\n" => InvalidVersion, 400;
    a07_two_digit_minor: b"GET / HTTP/1.01\r\nHost: a\r\n\r\n" => InvalidVersion, 400;
    a07_two_digit_major: b"GET / HTTP/01.1\r\nHost: a\r\n\r\n" => InvalidVersion, 400;
    a07_no_minor: b"GET / HTTP/1\r\nHost: a\r\n\r\n" => InvalidVersion, 400;
    a07_junk_after_version: b"GET / HTTP/1.1x\r\nHost: a\r\n\r\n" => InvalidVersion, 400;
    a07_huge_version: b"GET / HTTP/4294967295.255\r\nHost: a\r\n\r\n" => InvalidVersion, 400;
    a08_http_2_0: b"GET / HTTP/2.0\r\nHost: a\r\n\r\n" => UnsupportedVersion, 505;
    a08_http_3_0: b"GET / HTTP/3.0\r\nHost: a\r\n\r\n" => UnsupportedVersion, 505;
    a10_9000_byte_target: with_target(&format!("/{}", "a".repeat(8999))) => RequestLineTooLong, 414;
    a11_asterisk_with_get: b"GET * HTTP/1.1\r\nHost: a\r\n\r\n" => TargetFormMismatch, 400;
    a11_absolute_form_with_userinfo: b"GET http://u@a/ HTTP/1.1\r\nHost: a\r\n\r\n" => InvalidTarget, 400;
    a11_absolute_form_empty_authority: b"GET http:///x HTTP/1.1\r\nHost: a\r\n\r\n" => InvalidTarget, 400;
    a12_authority_form_with_get: b"GET a:443 HTTP/1.1\r\nHost: a\r\n\r\n" => TargetFormMismatch, 400;
    a12_connect_with_origin_form: b"CONNECT / HTTP/1.1\r\nHost: a\r\n\r\n" => TargetFormMismatch, 400;
}

// B. Header section

accepts! {
    b13_http_1_0_without_host: b"GET / HTTP/1.0\r\n\r\n" => |r| {
        assert_eq!((r.version, r.host(), r.keep_alive), (Version::Http10, None, false));
    };
    b20_obs_text_value_allowed: with_field(b"X: caf\xc3\xa9") => |r| {
        assert_eq!(r.header("x"), Some(&b"caf\xc3\xa9"[..]));
    };
    b21_100_header_lines: [&b"GET / HTTP/1.1\r\nHost: a\r\n"[..], &b"X: y\r\n".repeat(99), b"\r\n"].concat() => |r| {
        assert_eq!(r.headers.len(), 100);
    };
    b23_underscore_content_length_is_ordinary: with_field(b"Content_Length: 5") => |r| {
        assert_eq!(r.framing, BodyFraming::None);
    };
    b23_underscore_transfer_encoding_is_ordinary: with_field(b"Transfer_Encoding: chunked") => |r| {
        assert_eq!(r.framing, BodyFraming::None);
    };
    b_empty_value_allowed: with_field(b"X:") => |r| {
        assert_eq!(r.header("x"), Some(&b""[..]));
    };
    b_ipv6_host_allowed: b"GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n" => |r| {
        assert_eq!(r.host(), Some("[::1]:8080"));
    };
    b_expect_100_continue_on_http_1_1: post("Content-Length: 5\r\nExpect: 100-Continue\r\n") => |r| {
        assert!(r.expect_continue);
    };
    b_expect_ignored_on_http_1_0: b"POST / HTTP/1.0\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n" => |r| {
        assert!(!r.expect_continue);
    };
    b_connection_close_wins: with_field(b"Connection: keep-alive, close") => |r| {
        assert!(!r.keep_alive);
    };
    b_http_1_0_keep_alive: b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n" => |r| {
        assert!(r.keep_alive);
    };
    b_value_ows_trimmed_but_not_nbsp: with_field(b"X: \t a \xa0 \t") => |r| {
        assert_eq!(r.header("X"), Some(&b"a \xa0"[..]));
    };
}

rejects! {
    b13_http_1_1_without_host: b"GET / HTTP/1.1\r\n\r\n" => MissingHost, 400;
    b14_two_identical_host_lines: b"GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n" => DuplicateHost, 400;
    b14_two_different_host_lines: b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n" => DuplicateHost, 400;
    b14_host_with_space: b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n" => InvalidHost, 400;
    b14_host_with_userinfo: b"GET / HTTP/1.1\r\nHost: u@a\r\n\r\n" => InvalidHost, 400;
    b14_host_with_slash: b"GET / HTTP/1.1\r\nHost: a/b\r\n\r\n" => InvalidHost, 400;
    b14_host_port_out_of_range: b"GET / HTTP/1.1\r\nHost: a:99999\r\n\r\n" => InvalidHost, 400;
    b15_space_before_colon: with_field(b"Content-Length : 5") => WhitespaceBeforeColon, 400;
    b15_tab_before_colon: b"GET / HTTP/1.1\r\nHost\t: a\r\n\r\n" => WhitespaceBeforeColon, 400;
    b16_first_field_line_starts_with_space: b"GET / HTTP/1.1\r\n Host: a\r\n\r\n" => ObsFold, 400;
    b16_first_field_line_starts_with_tab: b"GET / HTTP/1.1\r\n\tHost: a\r\n\r\n" => ObsFold, 400;
    b17_obs_fold: with_field(b"X: a\r\n b") => ObsFold, 400;
    b17_obs_fold_transfer_encoding: b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding:\r\n chunked\r\n\r\n" => ObsFold, 400;
    b18_empty_name: with_field(b": v") => InvalidHeaderName, 400;
    b18_no_colon: with_field(b"Foo bar") => WhitespaceBeforeColon, 400;
    b18_space_in_name: with_field(b"Foo bar: x") => WhitespaceBeforeColon, 400;
    b18_nul_in_name: with_field(b"F\x00o: x") => InvalidHeaderName, 400;
    b18_tab_in_name: with_field(b"F\to: x") => WhitespaceBeforeColon, 400;
    b18_quote_in_name: with_field(b"F\"o: x") => InvalidHeaderName, 400;
    b18_bracket_in_name: with_field(b"F[o: x") => InvalidHeaderName, 400;
    b18_del_in_name: with_field(b"F\x7fo: x") => InvalidHeaderName, 400;
    b18_high_byte_in_name: with_field(b"F\xefo: x") => InvalidHeaderName, 400;
    b18_line_break_in_name: with_field(b"Transfer-\r\nEncoding: chunked") => InvalidHeaderName, 400;
    b19_nul_in_value: with_field(b"X: a\x00b") => InvalidHeaderValue, 400;
    b19_bare_cr_in_value: with_field(b"X: a\rb") => BareCr, 400;
    b19_cr_only_line_end: with_field(b"X: a\rY: b") => BareCr, 400;
    b19_ctl_in_value: with_field(b"X: a\x01b") => InvalidHeaderValue, 400;
    b19_del_in_value: with_field(b"X: a\x7fb") => InvalidHeaderValue, 400;
    b20_nbsp_around_chunked_is_not_chunked: [&post("")[..post("").len() - 2], b"Transfer-Encoding: \xa0chunked\xa0\r\n\r\n"].concat() => InvalidTransferEncoding, 400;
    b20_nel_after_chunked_is_not_chunked: [&post("")[..post("").len() - 2], b"Transfer-Encoding: chunked\x85\r\n\r\n"].concat() => InvalidTransferEncoding, 400;
    b21_101_header_lines: [&b"GET / HTTP/1.1\r\nHost: a\r\n"[..], &b"X: y\r\n".repeat(100), b"\r\n"].concat() => TooManyHeaders, 431;
    b22_9_kib_header_value: with_field(format!("X: {}", "v".repeat(9 * 1024)).as_bytes()) => HeaderLineTooLong, 431;
    b22_17_kib_head_of_small_fields: [&b"GET / HTTP/1.1\r\nHost: a\r\n"[..], &format!("X: {}\r\n", "v".repeat(200)).repeat(85).into_bytes(), b"\r\n"].concat() => HeadTooLarge, 431;
    b22_trickled_head_without_end: [&b"GET / HTTP/1.1\r\nHost: a\r\n"[..], &format!("X: {}\r\n", "v".repeat(200)).repeat(85).into_bytes()].concat() => HeadTooLarge, 431;
    b22_trickled_line_without_end: [&b"GET / HTTP/1.1\r\nHost: a\r\nX: "[..], &b"v".repeat(8200)].concat() => HeaderLineTooLong, 431;
    b24_bare_lf_everywhere: b"GET / HTTP/1.1\nHost: a\n\n" => BareLf, 400;
    b24_bare_lf_in_fields_only: b"GET / HTTP/1.1\r\nHost: a\n\n" => BareLf, 400;
    b24_bare_lf_ends_head: b"GET / HTTP/1.1\r\nHost: a\r\n\n" => BareLf, 400;
    b_bare_cr_ends_head: b"GET / HTTP/1.1\r\nHost: a\r\n\rX" => BareCr, 400;
    b24_bare_lf_before_request_line: b"\nGET / HTTP/1.1\r\nHost: a\r\n\r\n" => BareLf, 400;
}

// C. Content-Length

/// The events a connection sees for `bytes`, checked to be the same at every split point.
fn events(bytes: &[u8]) -> Vec<Parsed> {
    let whole = transcript(&[bytes], &LIMITS);
    for k in splits(bytes.len()) {
        assert_eq!(
            transcript(&[&bytes[..k], &bytes[k..]], &LIMITS),
            whole,
            "split at {k}"
        );
    }
    whole
}

/// The (path, body) pairs of a transcript, and its final error or `Incomplete`, if any.
fn summary(events: &[Parsed]) -> (Vec<(String, Vec<u8>)>, Option<Parsed>) {
    let mut requests = Vec::new();
    let mut path = String::new();
    let mut end = None;
    for e in events {
        match e {
            Parsed::Head { path: p, .. } => path = p.clone(),
            Parsed::Body(body) => requests.push((path.clone(), body.clone())),
            other => end = Some(other.clone()),
        }
    }
    (requests, end)
}

fn framing_of(bytes: &[u8]) -> BodyFraming {
    let mut headers = [Header::EMPTY; 16];
    match parse(bytes, &mut headers) {
        Ok(Status::Complete(r)) => r.framing,
        other => panic!("expected a request, got {other:?}"),
    }
}

#[test]
fn c25_content_length_body_then_pipelined_get() {
    let (requests, end) = summary(&events(
        b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: a\r\n\r\n",
    ));
    assert_eq!(
        requests,
        [("/echo".into(), b"hello".to_vec()), ("/".into(), vec![])]
    );
    assert_eq!(end, None);
}

rejects! {
    c26_letters: post("Content-Length: abc\r\n") => InvalidContentLength, 400;
    c26_digit_then_letter: post("Content-Length: 1Z\r\n") => InvalidContentLength, 400;
    c26_plus_sign: post("Content-Length: +5\r\n") => InvalidContentLength, 400;
    c26_minus_one: post("Content-Length: -1\r\n") => InvalidContentLength, 400;
    c26_minus_zero: post("Content-Length: -0\r\n") => InvalidContentLength, 400;
    c26_hex: post("Content-Length: 0x5\r\n") => InvalidContentLength, 400;
    c26_decimal_point: post("Content-Length: 5.0\r\n") => InvalidContentLength, 400;
    c26_underscore: post("Content-Length: 1_0\r\n") => InvalidContentLength, 400;
    c26_internal_space: post("Content-Length: 5 5\r\n") => InvalidContentLength, 400;
    c26_empty: post("Content-Length: \r\n") => InvalidContentLength, 400;
    c26_comma_list_of_different: post("Content-Length: 5,6\r\n") => DuplicateContentLength, 400;
    c28_u64_overflow: post("Content-Length: 18446744073709551616\r\n") => InvalidContentLength, 400;
    c28_forty_digits: post(&format!("Content-Length: {}\r\n", "9".repeat(40))) => InvalidContentLength, 400;
    c29_two_different_lines: post("Content-Length: 5\r\nContent-Length: 6\r\n") => DuplicateContentLength, 400;
    c29_two_identical_lines: post("Content-Length: 5\r\nContent-Length: 5\r\n") => DuplicateContentLength, 400;
    c29_identical_comma_list: post("Content-Length: 5, 5\r\n") => DuplicateContentLength, 400;
    c30_over_body_limit_before_any_body: post("Content-Length: 1000000000\r\n") => BodyTooLarge, 413;
}

#[test]
fn c27_leading_zeros_are_decimal() {
    assert_eq!(
        framing_of(&post("Content-Length: 0005\r\n")),
        BodyFraming::Length(5)
    );
    let (requests, _) = summary(&events(
        &[&post("Content-Length: 0005\r\n")[..], b"hello"].concat(),
    ));
    assert_eq!(requests, [("/".into(), b"hello".to_vec())]);
}

#[test]
fn c28_u64_max_is_not_wrapped_but_too_large() {
    let bytes = post("Content-Length: 18446744073709551615\r\n");
    assert_rejects(&bytes, ParseError::BodyTooLarge, 413);
}

#[test]
fn c31_body_shorter_than_content_length_is_incomplete() {
    let (requests, end) = summary(&events(
        &[&post("Content-Length: 10\r\n")[..], b"abcd"].concat(),
    ));
    assert!(requests.is_empty());
    assert_eq!(end, Some(Parsed::Incomplete));
}

#[test]
fn c32_body_that_looks_like_a_request_is_consumed_as_body() {
    let (requests, end) = summary(&events(
        b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nGET /GET /x HTTP/1.1\r\nHost: a\r\n\r\n",
    ));
    assert_eq!(
        requests,
        [("/".into(), b"GET /".to_vec()), ("/x".into(), vec![])]
    );
    assert_eq!(end, None);
}

#[test]
fn c33_bytes_after_zero_length_body_are_a_new_invalid_request() {
    let (requests, end) = summary(&events(
        &[&post("Content-Length: 0\r\n")[..], b"XYZ\r\n\r\n"].concat(),
    ));
    assert_eq!(requests, [("/".into(), vec![])]);
    assert_eq!(end, Some(Parsed::Error(ParseError::InvalidRequestLine)));
}

// D. Transfer-Encoding / chunked

const CHUNKED: &str = "Transfer-Encoding: chunked\r\n";

/// Decodes `body` at every split point and checks all agree; returns the result.
fn chunked(body: &[u8]) -> Result<(Vec<u8>, usize, bool), ParseError> {
    let whole = decode_chunked(body, &[], &LIMITS);
    for k in splits(body.len()) {
        assert_eq!(decode_chunked(body, &[k], &LIMITS), whole, "split at {k}");
    }
    whole
}

macro_rules! chunked_rejects {
    ($($name:ident: $body:expr => $error:ident, $status:expr;)*) => {$(
        #[test]
        fn $name() {
            assert_eq!(chunked(&$body[..]), Err(ParseError::$error));
            assert_eq!(ParseError::$error.status(), $status);
        }
    )*};
}

#[test]
fn d34_valid_chunked_body_with_extension_and_trailer_then_pipelined_get() {
    let bytes = [
        &post(CHUNKED)[..],
        b"5\r\nhello\r\nA;ext=1\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\nGET /next HTTP/1.1\r\nHost: a\r\n\r\n",
    ]
    .concat();
    let (requests, end) = summary(&events(&bytes));
    assert_eq!(
        requests,
        [
            ("/".into(), b"hello0123456789".to_vec()),
            ("/next".into(), vec![])
        ]
    );
    assert_eq!(end, None);
}

#[test]
fn d34_lower_and_upper_hex_and_zeros_last_chunk() {
    let body = b"a\r\n0123456789\r\nB\r\n0123456789a\r\n000\r\n\r\n";
    assert_eq!(
        chunked(body),
        Ok((b"01234567890123456789a".to_vec(), body.len(), true))
    );
}

#[test]
fn d34_decoding_stops_at_the_end_of_the_body() {
    let body = b"1\r\nx\r\n0\r\n\r\nGET";
    assert_eq!(chunked(body), Ok((b"x".to_vec(), body.len() - 3, true)));
}

rejects! {
    d35_te_then_cl: post("Transfer-Encoding: chunked\r\nContent-Length: 4\r\n") => TransferEncodingWithContentLength, 400;
    d35_cl_then_te: post("Content-Length: 6\r\nTransfer-Encoding: chunked\r\n") => TransferEncodingWithContentLength, 400;
    d36_te_in_http_1_0: b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n" => TransferEncodingInHttp10, 400;
    d36_te_and_cl_in_http_1_0: b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n" => TransferEncodingInHttp10, 400;
    d37_gzip: post("Transfer-Encoding: gzip\r\n") => UnknownTransferCoding, 501;
    d37_identity: post("Transfer-Encoding: identity\r\n") => UnknownTransferCoding, 501;
    d37_xchunked: post("Transfer-Encoding: xchunked\r\n") => UnknownTransferCoding, 501;
    d37_chunkedx: post("Transfer-Encoding: chunkedx\r\n") => UnknownTransferCoding, 501;
    d37_x_chunked: post("Transfer-Encoding: x-chunked\r\n") => UnknownTransferCoding, 501;
    d38_chunked_not_final: post("Transfer-Encoding: chunked, gzip\r\n") => ChunkedNotFinal, 400;
    d38_chunked_twice_in_one_line: post("Transfer-Encoding: chunked, chunked\r\n") => ChunkedTwice, 400;
    d38_chunked_twice_in_two_lines: post("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n") => ChunkedTwice, 400;
    d38_chunked_with_parameters: post("Transfer-Encoding: chunked;q=1\r\n") => ChunkedWithParameters, 400;
    d39_gzip_then_chunked: post("Transfer-Encoding: gzip, chunked\r\n") => UnknownTransferCoding, 501;
    d40_empty_list_element: post("Transfer-Encoding: , chunked\r\n") => InvalidTransferEncoding, 400;
    d40_trailing_empty_list_element: post("Transfer-Encoding: chunked,\r\n") => InvalidTransferEncoding, 400;
    d40_empty_value: post("Transfer-Encoding: \r\n") => InvalidTransferEncoding, 400;
}

#[test]
fn d35_cl_te_desync_body_never_reaches_a_second_request() {
    let bytes = [
        &post("Content-Length: 6\r\nTransfer-Encoding: chunked\r\n")[..],
        b"0\r\n\r\nXGET / HTTP/1.1\r\nHost: a\r\n\r\n",
    ]
    .concat();
    let (requests, end) = summary(&events(&bytes));
    assert!(requests.is_empty());
    assert_eq!(
        end,
        Some(Parsed::Error(ParseError::TransferEncodingWithContentLength))
    );
}

#[test]
fn d40_codings_are_case_insensitive() {
    assert_eq!(
        framing_of(&post("Transfer-Encoding: Chunked\r\n")),
        BodyFraming::Chunked
    );
    assert_eq!(
        framing_of(&post("Transfer-Encoding: CHUNKED\r\n")),
        BodyFraming::Chunked
    );
    assert_eq!(
        framing_of(&post("Transfer-Encoding:  chunked \t\r\n")),
        BodyFraming::Chunked
    );
}

chunked_rejects! {
    d41_hex_prefix: b"0x5\r\nhello\r\n0\r\n\r\n" => InvalidChunkSize, 400;
    d41_plus_sign: b"+5\r\nhello\r\n0\r\n\r\n" => InvalidChunkSize, 400;
    d41_minus_zero: b"-0\r\n\r\n" => InvalidChunkSize, 400;
    d41_leading_space: b" 5\r\nhello\r\n0\r\n\r\n" => InvalidChunkSize, 400;
    d41_trailing_space_without_extension: b"5 \r\nhello\r\n0\r\n\r\n" => InvalidChunkSize, 400;
    d41_underscore: b"5_0\r\nhello\r\n0\r\n\r\n" => InvalidChunkSize, 400;
    d41_not_hex: b"Z\r\n\r\n" => InvalidChunkSize, 400;
    d41_empty_size_line: b"\r\nhello\r\n0\r\n\r\n" => InvalidChunkSize, 400;
    d41_bare_cr_after_size: b"5\r\r;a\r\nhello\r\n0\r\n\r\n" => BareCr, 400;
    d42_seventeen_hex_digits: b"FFFFFFFFFFFFFFFFF\r\n" => BodyTooLarge, 413;
    d42_size_needing_more_than_32_bits: b"100000005\r\n" => BodyTooLarge, 413;
    d42_sixteen_f: b"FFFFFFFFFFFFFFFF\r\n" => BodyTooLarge, 413;
    d43_data_longer_than_size: b"5\r\nhelloXX\r\n0\r\n\r\n" => InvalidChunkDelimiter, 400;
    d43_no_crlf_after_data: b"5\r\nhello0\r\n\r\n" => InvalidChunkDelimiter, 400;
    d43_other_bytes_instead_of_crlf: b"5\r\nhelloXY0\r\n\r\n" => InvalidChunkDelimiter, 400;
    d43_cr_then_junk_after_data: b"5\r\nhello\rX0\r\n\r\n" => InvalidChunkDelimiter, 400;
    d44_bare_lf_framing: b"5\nhello\n0\n\n" => BareLf, 400;
    d44_bare_lf_after_data: b"5\r\nhello\n0\r\n\r\n" => BareLf, 400;
    d44_lf_inside_extension: b"5;a\nb\r\nhello\r\n0\r\n\r\n" => BareLf, 400;
    d44_nul_in_extension: b"5;a\x00\r\nhello\r\n0\r\n\r\n" => InvalidChunkExtension, 400;
    d44_ctl_in_extension: b"5;a=\x01\r\nhello\r\n0\r\n\r\n" => InvalidChunkExtension, 400;
    d44_bare_lf_in_trailer: b"0\r\nX: 1\n\r\n" => BareLf, 400;
    d44_bare_lf_ends_trailers: b"0\r\n\n" => BareLf, 400;
    d45_20_kib_extension: [&b"5;"[..], &b"a".repeat(20 * 1024), b"\r\nhello\r\n0\r\n\r\n"].concat() => ChunkExtensionsTooLong, 413;
    d45_many_small_chunks_with_extensions: [&b"1;"[..], &b"e".repeat(100), b"\r\nx\r\n"].concat().repeat(10_000) => ChunkExtensionsTooLong, 413;
    d45_20_kib_trailer: [&b"0\r\nX: "[..], &b"t".repeat(20 * 1024), b"\r\n\r\n"].concat() => TrailersTooLarge, 431;
    d45_obs_fold_in_trailer: b"0\r\nX: 1\r\n 2\r\n\r\n" => InvalidTrailer, 400;
    d45_trailer_without_colon: b"0\r\nX 1\r\n\r\n" => InvalidTrailer, 400;
    d46_chunked_total_over_body_limit: [&b"8000\r\n"[..], &[b'x'; 0x8000], b"\r\n8000\r\n", &[b'x'; 0x8000], b"\r\n1\r\n"].concat() => BodyTooLarge, 413;
}

#[test]
fn d42_overflowing_size_with_unbounded_body_limit() {
    let limits = Limits {
        body_bytes: u64::MAX,
        ..LIMITS
    };
    assert_eq!(
        decode_chunked(b"FFFFFFFFFFFFFFFFF\r\n", &[], &limits),
        Err(ParseError::ChunkSizeOverflow)
    );
}

#[test]
fn d45_framing_fields_in_trailers_are_never_applied() {
    let bytes = [
        &post(CHUNKED)[..],
        b"1\r\nx\r\n0\r\nContent-Length: 5\r\nHost: evil\r\nTransfer-Encoding: gzip\r\n\r\nGET /n HTTP/1.1\r\nHost: a\r\n\r\n",
    ]
    .concat();
    let events = events(&bytes);
    let (requests, end) = summary(&events);
    assert_eq!(
        requests,
        [("/".into(), b"x".to_vec()), ("/n".into(), vec![])]
    );
    assert_eq!(end, None);
    let hosts: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Parsed::Head { host, .. } => Some(host.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(hosts, [Some("a".to_string()), Some("a".to_string())]);
}

#[test]
fn d46_body_ending_without_last_chunk_is_incomplete() {
    let bytes = [&post(CHUNKED)[..], b"5\r\nhello\r\n"].concat();
    let (requests, end) = summary(&events(&bytes));
    assert!(requests.is_empty());
    assert_eq!(end, Some(Parsed::Incomplete));
}

#[test]
fn d46_chunked_body_exactly_at_the_limit() {
    let body = [&b"10000\r\n"[..], &[b'x'; 0x10000], b"\r\n0\r\n\r\n"].concat();
    assert_eq!(
        chunked(&body).map(|(data, _, done)| (data.len(), done)),
        Ok((0x10000, true))
    );
}
