//! Property tests: pipelined requests and chunked bodies parse the same at every split point,
//! and encode-then-parse round-trips for requests (test-side encoder) and responses.

use proptest::prelude::*;
use twelve_http::client::{Done, ResponseParser};
use twelve_http::fuzzing::{Parsed, decode_chunked, response_transcript, transcript};
use twelve_http::{
    BodyFraming, Connection, Limits, ResponseHead, Status, encode_head, encode_response,
};

/// A generated request and how its body is framed on the wire.
#[derive(Debug, Clone)]
struct Req {
    method: &'static str,
    path: String,
    query: Option<String>,
    fields: Vec<(String, String)>,
    body: Vec<u8>,
    /// `None`: Content-Length (or nothing if the body is empty); `Some(sizes)`: chunked,
    /// cut into chunks of these sizes (the rest in a last data chunk).
    chunks: Option<Vec<usize>>,
}

fn req() -> impl Strategy<Value = Req> {
    (
        prop::sample::select(vec!["GET", "POST", "PUT", "DELETE", "PATCH"]),
        "/[a-z0-9._~/-]{0,16}",
        prop::option::of("[a-z0-9=&%]{0,10}"),
        prop::collection::vec(("X-[A-Za-z0-9-]{1,10}", "[ -~]{0,24}"), 0..6),
        prop::collection::vec(any::<u8>(), 0..64),
        prop::option::of(prop::collection::vec(1usize..20, 0..5)),
    )
        .prop_map(|(method, path, query, fields, body, chunks)| Req {
            method,
            path,
            query,
            fields,
            body,
            chunks,
        })
}

/// Writes a request the way a well-behaved client would.
fn encode_request(r: &Req, out: &mut Vec<u8>) {
    out.extend_from_slice(format!("{} {}", r.method, r.path).as_bytes());
    if let Some(q) = &r.query {
        out.extend_from_slice(format!("?{q}").as_bytes());
    }
    out.extend_from_slice(b" HTTP/1.1\r\nHost: example.com:8080\r\n");
    for (name, value) in &r.fields {
        out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    match &r.chunks {
        None if r.body.is_empty() => out.extend_from_slice(b"\r\n"),
        None => {
            out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", r.body.len()).as_bytes());
            out.extend_from_slice(&r.body);
        }
        Some(sizes) => {
            out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
            out.extend_from_slice(&encode_chunked(&r.body, sizes));
        }
    }
}

/// Chunked coding of `body` cut at `sizes`, with an extension on odd chunks and a trailer.
fn encode_chunked(body: &[u8], sizes: &[usize]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest = body;
    let mut sizes = sizes.iter();
    let mut n = 0;
    while !rest.is_empty() {
        let take = sizes.next().copied().unwrap_or(rest.len()).min(rest.len());
        let ext = if n % 2 == 1 { ";ext=\"v\"" } else { "" };
        out.extend_from_slice(format!("{take:x}{ext}\r\n").as_bytes());
        out.extend_from_slice(&rest[..take]);
        out.extend_from_slice(b"\r\n");
        rest = &rest[take..];
        n += 1;
    }
    out.extend_from_slice(b"0\r\nX-Checksum: 1\r\n\r\n");
    out
}

/// The events the parser must report for `reqs`.
fn expected(reqs: &[Req]) -> Vec<(String, Option<String>, BodyFraming, Vec<u8>)> {
    reqs.iter()
        .map(|r| {
            let framing = match (&r.chunks, r.body.len()) {
                (Some(_), _) => BodyFraming::Chunked,
                (None, 0) => BodyFraming::None,
                (None, n) => BodyFraming::Length(n as u64),
            };
            (r.path.clone(), r.query.clone(), framing, r.body.clone())
        })
        .collect()
}

fn observed(events: &[Parsed]) -> Vec<(String, Option<String>, BodyFraming, Vec<u8>)> {
    let mut out = Vec::new();
    let mut head = None;
    for e in events {
        match e {
            Parsed::Head {
                target,
                path,
                framing,
                ..
            } => {
                let query = target.split_once('?').map(|(_, q)| q.to_string());
                head = Some((path.clone(), query, *framing));
            }
            Parsed::Body(body) => {
                let (path, query, framing) = head.take().expect("body without head");
                out.push((path, query, framing, body.clone()));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    out
}

proptest! {
    #[test]
    fn pipelined_batch_parses_the_same_at_every_split(
        reqs in prop::collection::vec(req(), 1..4),
        cut in any::<prop::sample::Index>(),
        cut2 in any::<prop::sample::Index>(),
    ) {
        let mut bytes = Vec::new();
        for r in &reqs {
            encode_request(r, &mut bytes);
        }
        let limits = Limits::DEFAULT;
        let whole = transcript(&[&bytes], &limits);
        prop_assert_eq!(observed(&whole), expected(&reqs));
        let (a, b) = {
            let (x, y) = (cut.index(bytes.len() + 1), cut2.index(bytes.len() + 1));
            (x.min(y), x.max(y))
        };
        prop_assert_eq!(&transcript(&[&bytes[..a], &bytes[a..b], &bytes[b..]], &limits), &whole);
    }

    #[test]
    fn pipelined_batch_parses_the_same_byte_by_byte(reqs in prop::collection::vec(req(), 1..3)) {
        let mut bytes = Vec::new();
        for r in &reqs {
            encode_request(r, &mut bytes);
        }
        let reads: Vec<&[u8]> = bytes.chunks(1).collect();
        prop_assert_eq!(transcript(&reads, &Limits::DEFAULT), transcript(&[&bytes], &Limits::DEFAULT));
    }

    #[test]
    fn chunked_body_decodes_the_same_at_any_splits(
        body in prop::collection::vec(any::<u8>(), 0..300),
        sizes in prop::collection::vec(1usize..40, 0..10),
        splits in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let wire = encode_chunked(&body, &sizes);
        let mut at: Vec<usize> = splits.iter().map(|i| i.index(wire.len() + 1)).collect();
        at.sort_unstable();
        let got = decode_chunked(&wire, &at, &Limits::DEFAULT);
        prop_assert_eq!(got, Ok((body, wire.len(), true)));
    }

    #[test]
    fn encoded_response_round_trips_through_the_response_parser(
        status in prop::sample::select(vec![200u16, 201, 202, 400, 404, 405, 413, 431, 500, 501, 503]),
        body in prop::collection::vec(any::<u8>(), 0..200),
        close in any::<bool>(),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut out = Vec::new();
        let connection = if close { Connection::Close } else { Connection::Default };
        encode_response(&mut out, status, "application/json", connection, &body);
        let want = Done { code: status, keep_alive: !close, body_len: body.len() as u64 };
        let mut parser = ResponseParser::new();
        prop_assert_eq!(parser.parse(&out), Ok((out.len(), Status::Complete(want))));
        let k = cut.index(out.len() + 1);
        prop_assert_eq!(
            response_transcript(&[&out[..k], &out[k..]], false),
            response_transcript(&[&out], false)
        );
        // And through httparse: the standard fields are there, Content-Length is the body's.
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut res = httparse::Response::new(&mut headers);
        let head_len = match res.parse(&out) {
            Ok(httparse::Status::Complete(n)) => n,
            other => return Err(TestCaseError::fail(format!("{other:?}"))),
        };
        prop_assert_eq!(res.code, Some(status));
        let field = |name: &str| res.headers.iter().find(|h| h.name == name).map(|h| h.value.to_vec());
        let length = body.len().to_string().into_bytes();
        prop_assert_eq!(field("Content-Length"), Some(length));
        prop_assert_eq!(field("Server"), Some(b"twelve".to_vec()));
        prop_assert_eq!(field("Date").map(|d| d.len()), Some(29));
        prop_assert_eq!(&out[head_len..], &body[..]);
    }

    #[test]
    fn encoded_head_carries_extra_fields_and_no_body(
        length in 0u64..1 << 40,
        extra in prop::collection::vec(("X-[A-Za-z]{1,8}", "[!-~]{1,16}"), 0..4),
    ) {
        let extra: Vec<(&str, &[u8])> = extra.iter().map(|(n, v)| (n.as_str(), v.as_bytes())).collect();
        let mut out = Vec::new();
        encode_head(&mut out, &ResponseHead {
            status: 200,
            content_type: Some("text/plain"),
            content_length: Some(length),
            connection: Connection::KeepAlive,
            extra_headers: &extra,
        });
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut res = httparse::Response::new(&mut headers);
        prop_assert_eq!(res.parse(&out), Ok(httparse::Status::Complete(out.len())));
        let got: Vec<(&str, &[u8])> = res.headers.iter().map(|h| (h.name, h.value)).collect();
        let length = length.to_string();
        prop_assert_eq!(&got[..5], &[
            ("Server", &b"twelve"[..]),
            ("Date", got[1].1),
            ("Content-Type", b"text/plain"),
            ("Content-Length", length.as_bytes()),
            ("Connection", b"keep-alive"),
        ][..]);
        prop_assert_eq!(&got[5..], &extra[..]);
    }
}
