//! Fuzz-target bodies: plain functions that check the codec's invariants on arbitrary bytes.
//! cargo-fuzz calls them from fuzz/, and the test suite runs them over fuzz/seeds/, so CI
//! exercises them without a fuzzer. They allocate and re-parse freely: not for the hot path.
//! Built only with the `fuzzing` feature, which brings httparse in for the differential check.

use crate::chunked::ChunkedDecoder;
use crate::error::{ParseError, Status};
use crate::limits::Limits;
use crate::parse::parse_request;
use crate::request::{BodyFraming, Header, Method, Version};

/// What a connection reading pipelined requests parsed, owned so transcripts compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// A request head.
    Head {
        /// The method.
        method: Method,
        /// The request-target.
        target: String,
        /// The path.
        path: String,
        /// The version.
        version: Version,
        /// Every field line as (name, value).
        headers: Vec<(String, Vec<u8>)>,
        /// The authority (target or Host).
        host: Option<String>,
        /// The body framing.
        framing: BodyFraming,
        /// Whether the connection may persist.
        keep_alive: bool,
        /// `Expect: 100-continue`.
        expect_continue: bool,
        /// Bytes the head used.
        head_len: usize,
    },
    /// A complete body (empty for requests without one).
    Body(Vec<u8>),
    /// The request was rejected; the connection closes.
    Error(ParseError),
    /// The input ended inside a message.
    Incomplete,
}

/// Reads pipelined requests the way a server connection does, from input arriving in the
/// given pieces: heads with [`parse_request`], bodies by Content-Length or [`ChunkedDecoder`].
/// Stops at the first error or after a request that does not keep the connection alive.
pub fn transcript(reads: &[&[u8]], limits: &Limits) -> Vec<Parsed> {
    let mut conn = Conn {
        buf: Vec::new(),
        state: Body::Head,
        body: Vec::new(),
        events: Vec::new(),
        closing: false,
        closed: false,
        limits: *limits,
    };
    for read in reads {
        if conn.closed {
            break;
        }
        conn.buf.extend_from_slice(read);
        conn.advance();
    }
    if !conn.closed && (!conn.buf.is_empty() || !matches!(conn.state, Body::Head)) {
        conn.events.push(Parsed::Incomplete);
    }
    conn.events
}

enum Body {
    Head,
    Length(u64),
    Chunked(ChunkedDecoder),
}

struct Conn {
    buf: Vec<u8>,
    state: Body,
    body: Vec<u8>,
    events: Vec<Parsed>,
    /// The current request does not keep the connection: close after its body.
    closing: bool,
    closed: bool,
    limits: Limits,
}

impl Conn {
    fn advance(&mut self) {
        while !self.closed {
            let before = (self.buf.len(), self.events.len());
            let used = self.step();
            self.buf.drain(..used);
            if (self.buf.len(), self.events.len()) == before {
                break;
            }
        }
    }

    /// One step: a head, some body bytes, or an error. Returns the bytes used.
    fn step(&mut self) -> usize {
        match &mut self.state {
            Body::Head => self.head(),
            Body::Length(left) => {
                let take = usize::try_from(*left)
                    .unwrap_or(usize::MAX)
                    .min(self.buf.len());
                self.body.extend_from_slice(&self.buf[..take]);
                *left -= take as u64;
                if *left == 0 {
                    self.end_body();
                }
                take
            }
            Body::Chunked(decoder) => match decoder.decode(&self.buf) {
                Ok(d) => {
                    assert!(d.consumed <= self.buf.len() && d.data.end <= d.consumed);
                    self.body.extend_from_slice(&self.buf[d.data.clone()]);
                    if d.done {
                        self.end_body();
                    }
                    d.consumed
                }
                Err(e) => {
                    self.fail(e);
                    0
                }
            },
        }
    }

    fn head(&mut self) -> usize {
        let mut headers = [Header::EMPTY; 128];
        match parse_request(&self.buf, &mut headers, &self.limits) {
            Ok(Status::Partial) => 0,
            Err(e) => {
                self.fail(e);
                0
            }
            Ok(Status::Complete(r)) => {
                ascii_parts(&r);
                self.events.push(Parsed::Head {
                    method: r.method,
                    target: r.target().to_owned(),
                    path: r.path().to_owned(),
                    version: r.version,
                    headers: r
                        .headers
                        .iter()
                        .map(|h| (h.name.to_owned(), h.value.to_vec()))
                        .collect(),
                    host: r.host().map(str::to_owned),
                    framing: r.framing,
                    keep_alive: r.keep_alive,
                    expect_continue: r.expect_continue,
                    head_len: r.head_len,
                });
                self.closing = !r.keep_alive;
                self.state = match r.framing {
                    BodyFraming::None | BodyFraming::Length(0) => Body::Length(0),
                    BodyFraming::Length(n) => Body::Length(n),
                    BodyFraming::Chunked => Body::Chunked(ChunkedDecoder::new(&self.limits)),
                };
                r.head_len
            }
        }
    }

    fn end_body(&mut self) {
        self.events
            .push(Parsed::Body(std::mem::take(&mut self.body)));
        self.state = Body::Head;
        // A request that closes the connection still has its body read, then nothing more.
        self.closed = self.closing;
    }

    fn fail(&mut self, e: ParseError) {
        self.events.push(Parsed::Error(e));
        self.closed = true;
    }
}

/// Small limits, so that fuzzing reaches every limit's path with short inputs.
pub const SMALL_LIMITS: Limits = Limits {
    request_line_bytes: 64,
    header_line_bytes: 48,
    head_bytes: 256,
    headers: 6,
    body_bytes: 300,
    chunk_extension_bytes: 40,
    trailer_bytes: 40,
    leading_empty_lines: 3,
};

/// Splits fuzz input into (limits, split point, bytes): the first two bytes pick the limits
/// (default or [`SMALL_LIMITS`]) and where to split the rest into two reads.
fn setup(data: &[u8]) -> Option<(Limits, usize, &[u8])> {
    let [a, b, input @ ..] = data else {
        return None;
    };
    let seed = usize::from(u16::from_le_bytes([*a, *b]));
    let limits = if seed & 1 == 0 {
        Limits::DEFAULT
    } else {
        SMALL_LIMITS
    };
    Some((limits, (seed >> 1) % (input.len() + 1), input))
}

/// The `parse_request` target: never panics; a complete head is no longer than the input and
/// parses the same from exactly its own bytes; any prefix of a complete or partial head is
/// `Partial`; a prefix of a rejected input is `Partial` or the same error (decisions are taken
/// at the first offending byte); the transcript of pipelined requests is the same whether the
/// bytes arrive at once or in two reads; the fast path for common heads answers as the strict
/// scanner alone does; and whatever we accept, httparse accepts alike.
pub fn parse_request_target(data: &[u8]) {
    let Some((limits, split, input)) = setup(data) else {
        return;
    };
    let mut headers = [Header::EMPTY; 32];
    let full = parse_request(input, &mut headers, &limits);
    // The fast path for common heads (crate::fast) never changes an answer.
    let mut scanner_headers = [Header::EMPTY; 32];
    let scanner = crate::parse::scanned(input, &mut scanner_headers, &limits);
    assert_eq!(full, scanner);
    let mut prefix_headers = [Header::EMPTY; 32];
    let prefix = parse_request(&input[..split], &mut prefix_headers, &limits);
    match &full {
        Ok(Status::Complete(r)) => {
            assert!(r.head_len <= input.len());
            assert!(r.headers.len() <= limits.headers);
            let mut again = [Header::EMPTY; 32];
            let exact = parse_request(&input[..r.head_len], &mut again, &limits);
            assert_eq!(exact, Ok(Status::Complete(*r)));
            if split < r.head_len {
                assert_eq!(prefix, Ok(Status::Partial));
            }
            differential(input, r);
        }
        Ok(Status::Partial) => assert_eq!(prefix, Ok(Status::Partial)),
        Err(e) => assert!(prefix == Ok(Status::Partial) || prefix == Err(*e)),
    }
    let whole = transcript(&[input], &limits);
    let pieces = transcript(&[&input[..split], &input[split..]], &limits);
    assert_eq!(whole, pieces);
}

/// The parts a `Request` keeps as bytes (target, path, query, authority) are ASCII, so its
/// accessors' UTF-8 check never falls back to an empty string.
fn ascii_parts(r: &crate::Request<'_, '_>) {
    let parts = [Some(r.target), Some(r.path), r.query, r.host];
    for part in parts.into_iter().flatten() {
        assert!(part.is_ascii(), "not ASCII: {part:?}");
    }
}

/// Whatever we accept, httparse must accept with the same head length, method, target and
/// fields (we are stricter, never looser). httparse knows only HTTP/1.0 and 1.1, so heads
/// with a minor version of 2 to 9 (read by us as 1.1) are skipped.
fn differential(input: &[u8], r: &crate::Request<'_, '_>) {
    let target_at = r.target.as_ptr() as usize - input.as_ptr() as usize;
    let minor = input[target_at + r.target.len() + 8];
    if minor > b'1' {
        return;
    }
    let mut theirs = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut theirs);
    match req.parse(input) {
        Ok(httparse::Status::Complete(n)) => {
            assert_eq!(n, r.head_len, "head length differs from httparse");
            assert_eq!(req.method, Some(r.method.as_str()));
            assert_eq!(req.path, Some(r.target()));
            assert_eq!(req.headers.len(), r.headers.len());
            for (ours, theirs) in r.headers.iter().zip(req.headers.iter()) {
                assert_eq!(ours.name, theirs.name);
                assert_eq!(ours.value, crate::scan::trim_ows(theirs.value));
            }
        }
        other => panic!("we accepted a head that httparse answers {other:?}"),
    }
}

/// Decodes a chunked body arriving in reads that end at `splits`, the way a connection would:
/// the data, the bytes consumed and whether it finished, or the error.
pub fn decode_chunked(
    input: &[u8],
    splits: &[usize],
    limits: &Limits,
) -> Result<(Vec<u8>, usize, bool), ParseError> {
    let mut decoder = ChunkedDecoder::new(limits);
    let mut data = Vec::new();
    let mut pos = 0;
    for &end in splits.iter().chain(std::iter::once(&input.len())) {
        let end = end.clamp(pos, input.len());
        while pos < end && !decoder.is_done() {
            let d = decoder.decode(&input[pos..end])?;
            assert!(d.consumed <= end - pos && d.data.end <= d.consumed);
            assert!(d.consumed > 0 || d.done, "no progress on non-empty input");
            data.extend_from_slice(&input[pos..end][d.data]);
            pos += d.consumed;
        }
    }
    Ok((data, pos, decoder.is_done()))
}

/// The `chunked` target: never panics; decoding gives the same data, consumption and
/// completion (or the same error) whether the body arrives at once, in two reads, or one
/// byte at a time; and decoding in place agrees.
pub fn chunked_target(data: &[u8]) {
    let Some((limits, split, input)) = setup(data) else {
        return;
    };
    let whole = decode_chunked(input, &[], &limits);
    if let Ok((body, consumed, _)) = &whole {
        assert!(*consumed <= input.len());
        assert!(body.len() as u64 <= limits.body_bytes);
    }
    assert_eq!(decode_chunked(input, &[split], &limits), whole);
    let bytewise: Vec<usize> = (1..input.len()).collect();
    assert_eq!(decode_chunked(input, &bytewise, &limits), whole);
    let mut buf = input.to_vec();
    let mut decoder = ChunkedDecoder::new(&limits);
    let in_place = decoder
        .decode_in_place(&mut buf)
        .map(|(consumed, len, done)| (buf[..len].to_vec(), consumed, done));
    assert_eq!(in_place, whole);
}

/// What the client-side [`ResponseParser`](crate::client::ResponseParser) reported for a
/// stream of responses: each complete response or the error that ended the stream, then what
/// the end of input meant.
pub fn response_transcript(
    reads: &[&[u8]],
    head_request: bool,
) -> Vec<Result<Option<crate::client::Done>, crate::client::Error>> {
    use crate::client::ResponseParser;
    let mut parser = ResponseParser::new();
    parser.set_head_request(head_request);
    let mut buf = Vec::new();
    let mut out = Vec::new();
    for read in reads {
        buf.extend_from_slice(read);
        loop {
            match parser.parse(&buf) {
                Ok((used, status)) => {
                    assert!(used <= buf.len(), "consumed more than it was given");
                    buf.drain(..used);
                    match status {
                        Status::Complete(done) => {
                            out.push(Ok(Some(done)));
                            if !done.keep_alive {
                                return out;
                            }
                        }
                        Status::Partial => break,
                    }
                }
                Err(e) => {
                    out.push(Err(e));
                    return out;
                }
            }
        }
    }
    out.push(parser.eof(buf.len()));
    out
}

/// The `parse_response` target: the client-side response parser never panics, never
/// consumes more than it was given, and reports the same responses whether the bytes arrive
/// at once or in two reads.
pub fn parse_response_target(data: &[u8]) {
    let Some((_, split, input)) = setup(data) else {
        return;
    };
    let head_request = data[0] & 2 != 0;
    let whole = response_transcript(&[input], head_request);
    let pieces = response_transcript(&[&input[..split], &input[split..]], head_request);
    assert_eq!(whole, pieces);
}

/// What a connection reading HTTP/2 frames saw: each frame re-encoded (so transcripts
/// compare), or the error; a stream error skips its frame, a connection error ends it.
/// `Ok(None)` closes the transcript when the input ended inside a frame.
pub fn h2_transcript(
    reads: &[&[u8]],
    max_frame_size: u32,
) -> Vec<Result<Option<Vec<u8>>, crate::h2::FrameError>> {
    use crate::h2::decode;
    let mut buf = Vec::new();
    let mut out = Vec::new();
    for read in reads {
        buf.extend_from_slice(read);
        loop {
            match decode(&buf, max_frame_size) {
                Ok(Status::Complete((frame, used))) => {
                    assert!(used <= buf.len(), "consumed more than it was given");
                    let mut wire = Vec::new();
                    crate::h2::encode(&frame, &mut wire);
                    // Re-encoding is canonical: it decodes to the same frame.
                    match decode(&wire, max_frame_size) {
                        Ok(Status::Complete((again, n))) => {
                            assert_eq!(again, frame);
                            assert_eq!(n, wire.len());
                        }
                        other => panic!("re-encoded {frame:?} decodes as {other:?}"),
                    }
                    out.push(Ok(Some(wire)));
                    buf.drain(..used);
                }
                Ok(Status::Partial) => break,
                Err(e) if e.is_connection_error() => {
                    out.push(Err(e));
                    return out;
                }
                Err(e) => {
                    assert!(e.skip <= buf.len() && e.skip >= crate::h2::HEADER_LEN);
                    out.push(Err(e));
                    buf.drain(..e.skip);
                }
            }
        }
    }
    if !buf.is_empty() {
        out.push(Ok(None));
    }
    out
}

/// The `h2_frame` target: the HTTP/2 frame decoder never panics, never consumes more than it
/// was given, re-encodes every frame it accepts to bytes that decode to the same frame, and
/// reports the same frames and errors whether the bytes arrive at once, in two reads or byte
/// by byte. The first input byte's low bit picks SETTINGS_MAX_FRAME_SIZE (the default or
/// 16, small enough for inputs to cross it).
pub fn h2_frame_target(data: &[u8]) {
    let Some((_, split, input)) = setup(data) else {
        return;
    };
    let max = if data[0] & 1 == 0 {
        crate::h2::DEFAULT_MAX_FRAME_SIZE
    } else {
        16
    };
    let whole = h2_transcript(&[input], max);
    assert_eq!(
        h2_transcript(&[&input[..split], &input[split..]], max),
        whole
    );
    let bytewise: Vec<&[u8]> = input.chunks(1).collect();
    assert_eq!(h2_transcript(&bytewise, max), whole);
}

/// One block decoded with no list limit: its fields, or the error.
type HpackBlock = Result<Vec<(Vec<u8>, Vec<u8>)>, crate::h2::hpack::HpackError>;

fn hpack_decode_all(d: &mut crate::h2::hpack::Decoder, block: &[u8]) -> HpackBlock {
    let mut fields = Vec::new();
    let r = d.decode(block, usize::MAX, |n, v| {
        fields.push((n.to_vec(), v.to_vec()))
    })?;
    assert_eq!(r, crate::h2::hpack::Decoded::Fields);
    Ok(fields)
}

fn hpack_table(d: &crate::h2::hpack::Decoder) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..d.table_len())
        .map(|i| {
            d.table_entry(i)
                .map(|(n, v)| (n.to_vec(), v.to_vec()))
                .unwrap()
        })
        .collect()
}

/// The `hpack` target: header blocks (each a length octet and up to 255 octets) through two
/// decoders sharing a table size, one without a header list limit and one with a small one.
/// Neither panics; they agree on every error; the limited one emits a prefix of the fields and
/// says `TooLarge` exactly when the list passed its limit; their dynamic tables stay identical.
/// Each decoded list then goes through an [`Encoder`](crate::h2::hpack::Encoder) and a third
/// decoder, which must give it back with the encoder's table mirrored. The first two input
/// octets (little-endian) pick, from bit 1 up: the table size (2 bits), the list limit
/// (2 bits) and whether the encoder may use Huffman (1 bit).
pub fn hpack_target(data: &[u8]) {
    use crate::h2::hpack::{Decoded, Decoder, Encoder, Index};
    let Some((head, mut rest)) = data.split_first_chunk::<2>() else {
        return;
    };
    let mode = usize::from(u16::from_le_bytes(*head) >> 1);
    let table_size = [0, 64, 256, 4096][mode & 3];
    let limit = [0, 100, 1000, 4096][(mode >> 2) & 3];
    let (mut full, mut cut) = (Decoder::new(table_size), Decoder::new(table_size));
    let (mut enc, mut dec) = (Encoder::new(), Decoder::new(4096));
    enc.set_huffman(mode & 16 != 0);
    while let Some((&len, tail)) = rest.split_first() {
        let (block, tail) = tail.split_at(usize::from(len).min(tail.len()));
        rest = tail;
        let whole = hpack_decode_all(&mut full, block);
        let mut got = Vec::new();
        let part = cut.decode(block, limit, |n, v| got.push((n.to_vec(), v.to_vec())));
        let fields = match whole {
            Err(e) => {
                assert_eq!(part, Err(e));
                return;
            }
            Ok(fields) => fields,
        };
        let list: usize = fields.iter().map(|(n, v)| n.len() + v.len() + 32).sum();
        let want = if list > limit {
            Decoded::TooLarge
        } else {
            Decoded::Fields
        };
        assert_eq!(part, Ok(want));
        assert_eq!(got[..], fields[..got.len()]);
        assert_eq!(hpack_table(&cut), hpack_table(&full));
        assert!(full.table_size() <= full.table_max_size());

        let mut out = Vec::new();
        enc.begin_block(&mut out);
        for (i, (n, v)) in fields.iter().enumerate() {
            let how = [Index::Incremental, Index::No, Index::Never][i % 3];
            enc.field(&mut out, n, v, how);
        }
        assert_eq!(hpack_decode_all(&mut dec, &out), Ok(fields));
        let mirrored: Vec<_> = (0..enc.table().len())
            .map(|i| {
                enc.table()
                    .get(i)
                    .map(|(n, v)| (n.to_vec(), v.to_vec()))
                    .unwrap()
            })
            .collect();
        assert_eq!(hpack_table(&dec), mirrored);
    }
}

/// What a [`ServerConn`](crate::h2::ServerConn) made of a byte stream read in the given
/// pieces: every step but `Partial`, and every byte it wrote (each request answered with a
/// 200 and a small body).
fn h2_server_transcript(reads: &[&[u8]]) -> (Vec<crate::h2::Step>, Vec<u8>) {
    use crate::h2::{Fields, ServerConfig, ServerConn, Step};
    let cfg = ServerConfig {
        max_concurrent_streams: 4,
        stream_window: 100,
        connection_window: 65_535,
        max_header_list: 512,
        max_header_block: 1024,
        max_body: 300,
        reset_budget: 8,
        control_budget: 32,
    };
    let mut conn = ServerConn::new(cfg);
    let (mut out, mut steps) = (Vec::new(), Vec::new());
    conn.start(&mut out);
    let (mut fields, mut body, mut buf) = (Fields::default(), Vec::new(), Vec::new());
    for read in reads {
        buf.extend_from_slice(read);
        loop {
            let step = conn.poll(&buf, &mut out, &mut fields, &mut body);
            let used = match step {
                Step::Partial => break,
                Step::Handled(n)
                | Step::Refused { used: n, .. }
                | Step::StreamError { used: n, .. } => n,
                Step::Request { used, stream } => {
                    let mut headers = [crate::Header::EMPTY; 16];
                    let _ = fields.request(&mut headers, body.len() as u64);
                    // No `Date` (respond::head's): the two transcripts must not straddle a
                    // second.
                    conn.headers(&mut out, stream, false, |enc, out| {
                        use crate::h2::hpack::Index;
                        enc.status(out, 200);
                        enc.field(out, b"content-type", b"text/plain", Index::Incremental);
                        enc.field(out, b"content-length", b"20", Index::No);
                    });
                    conn.data(&mut out, stream, &[b'x'; 20], true);
                    used
                }
                Step::ConnectionError(_) => {
                    steps.push(step);
                    return (steps, out);
                }
            };
            assert!(
                used > 0 && used <= buf.len(),
                "{step:?} used {used} of {}",
                buf.len()
            );
            buf.drain(..used);
            steps.push(step);
        }
    }
    (steps, out)
}

/// The `h2_server` target: a byte stream into the server's HTTP/2 connection (after the client
/// preface and an empty SETTINGS when the first octet's bit 0 is set, so the fuzzer reaches
/// frames at once). Never panics; every step uses bytes it was given; the same steps and the
/// same output whether the bytes arrive at once or in two reads; the output is a sequence of
/// well-formed frames.
pub fn h2_server_target(data: &[u8]) {
    let Some((_, split, input)) = setup(data) else {
        return;
    };
    let mut stream = Vec::new();
    if data[0] & 1 == 1 {
        stream.extend_from_slice(crate::h2::PREFACE);
        crate::h2::encode_settings(&mut stream, false, &[]);
    }
    let at = stream.len() + split;
    stream.extend_from_slice(input);
    let whole = h2_server_transcript(&[&stream]);
    assert_eq!(h2_server_transcript(&[&stream[..at], &stream[at..]]), whole);
    let mut out = &whole.1[..];
    while !out.is_empty() {
        match crate::h2::decode(out, crate::h2::MAX_FRAME_SIZE_LIMIT) {
            Ok(Status::Complete((_, used))) => out = &out[used..],
            other => panic!("the server wrote a bad frame: {other:?}"),
        }
    }
}
