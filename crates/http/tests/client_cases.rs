//! Table-driven cases for the client-side response parser (`twelve_http::client`): framing, persistence, interim
//! responses and every error class, each stream parsed whole and then closed.
use twelve_http::client::*;
use twelve_http::{Header, ParseError, Status};

/// Parses `input` as a whole stream ending in EOF; returns every response or the error.
fn run(input: &[u8], head_request: bool) -> Result<Vec<Done>, Error> {
    let mut p = ResponseParser::new();
    p.set_head_request(head_request);
    let mut out = Vec::new();
    let mut at = 0;
    loop {
        let (used, st) = p.parse(&input[at..])?;
        at += used;
        match st {
            Status::Complete(done) => out.push(done),
            Status::Partial => break,
        }
    }
    if let Some(done) = p.eof(input.len() - at)? {
        out.push(done);
    }
    Ok(out)
}

fn ok(code: u16, keep_alive: bool, body_len: u64) -> Done {
    Done {
        code,
        keep_alive,
        body_len,
    }
}

macro_rules! res {
    ($name:ident, $input:expr, $expect:expr) => {
        res!($name, $input, false, $expect);
    };
    ($name:ident, $input:expr, $head:expr, $expect:expr) => {
        #[test]
        fn $name() {
            assert_eq!(run($input, $head), $expect);
        }
    };
}

res!(
    length_body,
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
    Ok(vec![ok(200, true, 5)])
);
res!(
    zero_length,
    b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
    Ok(vec![ok(200, true, 0)])
);
res!(
    two_pipelined,
    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiHTTP/1.1 404 Not Found\r\ncontent-length: 1\r\n\r\nx",
    Ok(vec![ok(200, true, 2), ok(404, true, 1)])
);
res!(
    chunked_body,
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nA;ext=1\r\n0123456789\r\n0\r\n\r\n",
    Ok(vec![ok(200, true, 15)])
);
res!(
    chunked_with_trailers,
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n1\r\nx\r\n0\r\nX-T: 1\r\n\r\n",
    Ok(vec![ok(200, true, 1)])
);
res!(
    chunked_overrides_length,
    b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    Ok(vec![ok(200, true, 0)])
);
res!(
    transfer_not_chunked_reads_to_close,
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nabc",
    Ok(vec![ok(200, false, 3)])
);
res!(
    until_close,
    b"HTTP/1.1 200 OK\r\n\r\nabcdef",
    Ok(vec![ok(200, false, 6)])
);
res!(
    head_has_no_body,
    b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n",
    true,
    Ok(vec![ok(200, true, 0), ok(200, true, 0)])
);
res!(
    no_content_has_no_body,
    b"HTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\nHTTP/1.1 304 Not Modified\r\n\r\n",
    Ok(vec![ok(204, true, 0), ok(304, true, 0)])
);
res!(
    interim_skipped,
    b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nz",
    Ok(vec![ok(201, true, 1)])
);
res!(
    switching_protocols_ends,
    b"HTTP/1.1 101 Switching Protocols\r\n\r\n",
    Ok(vec![ok(101, false, 0)])
);
res!(
    connection_close,
    b"HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n",
    Ok(vec![ok(200, false, 0)])
);
res!(
    http10_closes,
    b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n",
    Ok(vec![ok(200, false, 0)])
);
res!(
    http10_keep_alive,
    b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n",
    Ok(vec![ok(200, true, 0)])
);
res!(
    duplicate_equal_length,
    b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
    Ok(vec![ok(200, true, 1)])
);
res!(
    conflicting_length,
    b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx",
    Err(Error::ContentLength)
);
res!(
    bad_length,
    b"HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n",
    Err(Error::ContentLength)
);
res!(
    overflow_length,
    b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
    Err(Error::ContentLength)
);
res!(garbage, b"SSH-2.0-OpenSSH\r\n\r\n", Err(Error::StatusLine));
res!(
    bad_header,
    b"HTTP/1.1 200 OK\r\nBad Header: x\r\n\r\n",
    Err(Error::Header)
);
res!(
    bad_chunk_size,
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    Err(Error::Chunked(ParseError::InvalidChunkSize))
);
res!(
    chunk_size_overflow,
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n11111111111111111\r\n",
    Err(Error::Chunked(ParseError::ChunkSizeOverflow))
);
res!(
    missing_chunk_crlf,
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxy\r\n",
    Err(Error::Chunked(ParseError::InvalidChunkDelimiter))
);
res!(
    chunked_bad_trailer,
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nno colon\r\n\r\n",
    Err(Error::Chunked(ParseError::InvalidTrailer))
);
res!(
    chunk_size_space_without_extension,
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1 \r\nx\r\n0\r\n\r\n",
    Err(Error::Chunked(ParseError::InvalidChunkSize))
);
// The client's chunked decoder is unbounded: a chunk over the server's default body limit
// (1 MiB) is read, not refused as too large.
res!(
    chunk_over_the_server_body_limit,
    &[
        &b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n200000\r\n"[..],
        &vec![b'x'; 0x20_0000],
        b"\r\n0\r\n\r\n"
    ]
    .concat(),
    Ok(vec![ok(200, true, 0x20_0000)])
);
res!(
    closed_mid_body,
    b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
    Err(Error::IncompleteBody)
);
res!(
    closed_mid_chunk,
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
    Err(Error::IncompleteBody)
);
res!(
    closed_mid_head,
    b"HTTP/1.1 200 OK\r\nContent-Le",
    Err(Error::IncompleteHead)
);
res!(clean_close_between, b"", Ok(vec![]));
res!(
    status_without_reason,
    b"HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n",
    Ok(vec![ok(200, true, 0)])
);
res!(
    obs_fold_rejected,
    b"HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n",
    Err(Error::Header)
);
res!(
    bare_lf_rejected,
    b"HTTP/1.1 200 OK\nX: a\n\n",
    Err(Error::StatusLine)
);
res!(
    http2_rejected,
    b"HTTP/2 200\r\n\r\n",
    Err(Error::StatusLine)
);
res!(
    two_digit_status,
    b"HTTP/1.1 20 OK\r\n\r\n",
    Err(Error::StatusLine)
);
res!(
    empty_header_name,
    b"HTTP/1.1 200 OK\r\n: x\r\n\r\n",
    Err(Error::Header)
);
res!(
    too_many_headers,
    &[
        &b"HTTP/1.1 200 OK\r\n"[..],
        &b"X: y\r\n".repeat(MAX_HEADERS + 1),
        b"\r\n"
    ]
    .concat(),
    Err(Error::TooManyHeaders)
);

#[test]
fn head_borrows_headers_and_reason() {
    let buf = b"HTTP/1.1 418 I'm a teapot\r\nServer: t\r\nContent-Length: 3\r\n\r\nabc";
    let mut headers = [Header::EMPTY; 4];
    let Ok(Status::Complete(head)) = parse_response(buf, &mut headers, false) else {
        panic!("head did not parse");
    };
    assert_eq!(
        (head.code, head.reason, head.minor_version),
        (418, "I'm a teapot", 1)
    );
    assert_eq!(head.headers.len(), 2);
    assert_eq!(
        (head.headers[0].name, head.headers[0].value),
        ("Server", &b"t"[..])
    );
    assert_eq!(head.len, buf.len() - 3);
    assert_eq!(head.framing, Framing::Length(3));
}

#[test]
fn partial_head_consumes_nothing() {
    let mut p = ResponseParser::new();
    assert_eq!(
        p.parse(b"HTTP/1.1 200 OK\r\nContent"),
        Ok((0, Status::Partial))
    );
    assert!(p.is_idle());
}
