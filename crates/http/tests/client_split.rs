//! Property: parsing a pipelined stream of responses gives the same responses whatever the
//! points where the stream is split into reads.
use proptest::prelude::*;
use twelve_http::Status;
use twelve_http::client::{Done, ResponseParser};

/// One response on the wire and what the parser must report for it.
fn response() -> impl Strategy<Value = (Vec<u8>, Done)> {
    let body = proptest::collection::vec(any::<u8>(), 0..40);
    let chunks = proptest::collection::vec(proptest::collection::vec(any::<u8>(), 1..20), 0..4);
    prop_oneof![
        body.prop_map(|b| {
            let mut w = format!(
                "HTTP/1.1 200 OK\r\nServer: t\r\nContent-Length: {}\r\n\r\n",
                b.len()
            )
            .into_bytes();
            w.extend_from_slice(&b);
            (
                w,
                Done {
                    code: 200,
                    keep_alive: true,
                    body_len: b.len() as u64,
                },
            )
        }),
        chunks.prop_map(|cs| {
            let mut w = b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
            let mut n = 0;
            for c in &cs {
                w.extend_from_slice(format!("{:x};e=1\r\n", c.len()).as_bytes());
                w.extend_from_slice(c);
                w.extend_from_slice(b"\r\n");
                n += c.len() as u64;
            }
            w.extend_from_slice(b"0\r\nTrailer: x\r\n\r\n");
            (
                w,
                Done {
                    code: 201,
                    keep_alive: true,
                    body_len: n,
                },
            )
        }),
        Just((
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nX: y\r\n\r\n".to_vec(),
            Done {
                code: 204,
                keep_alive: true,
                body_len: 0
            }
        )),
        Just((
            b"HTTP/1.1 503 Busy\r\ncontent-length: 4\r\n\r\nbusy".to_vec(),
            Done {
                code: 503,
                keep_alive: true,
                body_len: 4
            }
        )),
    ]
}

/// Feeds `wire` in reads ending at `splits` (sorted), keeping unconsumed bytes as a client
/// buffer does; returns every response parsed.
fn parse_in_reads(wire: &[u8], splits: &[usize]) -> Vec<Done> {
    let mut p = ResponseParser::new();
    let mut buf: Vec<u8> = Vec::new();
    let mut out = Vec::new();
    let mut from = 0;
    for &to in splits.iter().chain(std::iter::once(&wire.len())) {
        buf.extend_from_slice(&wire[from..to]);
        from = to;
        let mut at = 0;
        loop {
            let (used, st) = p.parse(&buf[at..]).expect("valid stream");
            at += used;
            match st {
                Status::Complete(done) => out.push(done),
                Status::Partial => break,
            }
        }
        buf.drain(..at);
    }
    assert!(
        buf.is_empty() && p.is_idle(),
        "stream ended inside a response"
    );
    out
}

proptest! {
    #[test]
    fn same_responses_at_every_split(items in proptest::collection::vec(response(), 1..6)) {
        let wire: Vec<u8> = items.iter().flat_map(|(w, _)| w.clone()).collect();
        let expect: Vec<Done> = items.iter().map(|(_, d)| *d).collect();
        prop_assert_eq!(&parse_in_reads(&wire, &[]), &expect);
        for split in 0..=wire.len() {
            prop_assert_eq!(&parse_in_reads(&wire, &[split]), &expect);
        }
        let every_byte: Vec<usize> = (1..wire.len()).collect();
        prop_assert_eq!(&parse_in_reads(&wire, &every_byte), &expect);
    }
}
