//! The server connection driven by hand-made client frames: each rule of RFC 9113 it
//! enforces, and the frames it writes back.

use super::*;
use crate::Header;
use crate::h2::hpack::{Encoder, Index};
use crate::h2::{Frame, HEADER_LEN, Setting, Violation, encode, encode_settings, flags};

/// A client: its HPACK encoder and the bytes it has written.
struct Client {
    enc: Encoder,
    bytes: Vec<u8>,
}

impl Client {
    /// Preface and an empty SETTINGS.
    fn new() -> Self {
        let mut bytes = PREFACE.to_vec();
        encode_settings(&mut bytes, false, &[]);
        Self {
            enc: Encoder::new(),
            bytes,
        }
    }

    fn block(&mut self, fields: &[(&str, &str)]) -> Vec<u8> {
        let mut b = Vec::new();
        self.enc.begin_block(&mut b);
        for (n, v) in fields {
            self.enc
                .field(&mut b, n.as_bytes(), v.as_bytes(), Index::No);
        }
        b
    }

    fn headers(&mut self, stream: u32, fields: &[(&str, &str)], end_stream: bool) -> &mut Self {
        let block = self.block(fields);
        let f = Frame::Headers {
            stream,
            end_stream,
            end_headers: true,
            priority: None,
            padding: None,
            block: &block,
        };
        encode(&f, &mut self.bytes);
        self
    }

    fn get(&mut self, stream: u32, path: &str) -> &mut Self {
        self.headers(stream, &get(path), true)
    }

    fn frame(&mut self, f: Frame<'_>) -> &mut Self {
        encode(&f, &mut self.bytes);
        self
    }

    fn data(&mut self, stream: u32, data: &[u8], end_stream: bool) -> &mut Self {
        self.frame(Frame::Data {
            stream,
            end_stream,
            data,
            padding: None,
        })
    }
}

fn get(path: &str) -> Vec<(&str, &str)> {
    vec![
        (":method", "GET"),
        (":scheme", "http"),
        (":authority", "a"),
        (":path", path),
    ]
}

/// What a run of `poll` over the client's bytes gave, request by request.
#[derive(Debug, Default)]
struct Run {
    steps: Vec<Step>,
    requests: Vec<(u32, String, Vec<u8>)>,
    out: Vec<u8>,
}

fn run(conn: &mut ServerConn, input: &[u8], answer: bool) -> Run {
    let mut r = Run::default();
    let mut fields = Fields::default();
    let mut body = Vec::new();
    let mut pos = 0;
    loop {
        let step = conn.poll(&input[pos..], &mut r.out, &mut fields, &mut body);
        match step {
            Step::Partial => break,
            Step::Handled(n)
            | Step::Refused { used: n, .. }
            | Step::StreamError { used: n, .. } => pos += n,
            Step::Request { used, stream } => {
                pos += used;
                let mut h = [Header::EMPTY; 16];
                let req = fields.request(&mut h, body.len() as u64).unwrap();
                r.requests
                    .push((stream, req.target().to_string(), body.clone()));
                if answer {
                    let text = b"hello";
                    conn.headers(&mut r.out, stream, false, |enc, out| {
                        crate::h2::respond::head(enc, out, 200, Some("text/plain"), Some(5), &[]);
                    });
                    conn.data(&mut r.out, stream, text, true);
                }
            }
            Step::ConnectionError(_) => {
                r.steps.push(step);
                break;
            }
        }
        r.steps.push(step);
    }
    r
}

/// Every frame in `out`, as (type, flags, stream, payload).
fn frames(out: &[u8]) -> Vec<(u8, u8, u32, Vec<u8>)> {
    let mut v = Vec::new();
    let mut pos = 0;
    while pos < out.len() {
        let head: &[u8; HEADER_LEN] = out[pos..pos + HEADER_LEN].try_into().unwrap();
        let h = frame::FrameHeader::parse(head);
        let end = pos + HEADER_LEN + h.length as usize;
        v.push((
            h.kind,
            h.flags,
            h.stream,
            out[pos + HEADER_LEN..end].to_vec(),
        ));
        pos = end;
    }
    v
}

fn goaway_code(out: &[u8]) -> Option<u32> {
    frames(out)
        .iter()
        .find(|f| f.0 == frame::kind::GOAWAY)
        .map(|f| u32::from_be_bytes(f.3[4..8].try_into().unwrap()))
}

fn rst_codes(out: &[u8]) -> Vec<(u32, u32)> {
    frames(out)
        .iter()
        .filter(|f| f.0 == frame::kind::RST_STREAM)
        .map(|f| (f.2, u32::from_be_bytes(f.3[..4].try_into().unwrap())))
        .collect()
}

fn server() -> ServerConn {
    let mut c = ServerConn::new(ServerConfig::default());
    c.start(&mut Vec::new());
    c
}

#[test]
fn a_get_is_a_request_and_its_answer_is_headers_then_data() {
    let mut conn = server();
    let mut start = Vec::new();
    ServerConn::new(ServerConfig::default()).start(&mut start);
    let f = frames(&start);
    assert_eq!(f[0].0, frame::kind::SETTINGS);
    assert_eq!(f[1].0, frame::kind::WINDOW_UPDATE);

    let mut c = Client::new();
    c.get(1, "/plaintext?x=1").get(3, "/json");
    let r = run(&mut conn, &c.bytes, true);
    let paths: Vec<_> = r
        .requests
        .iter()
        .map(|(s, p, _)| (*s, p.as_str()))
        .collect();
    assert_eq!(paths, [(1, "/plaintext?x=1"), (3, "/json")]);
    let kinds: Vec<_> = frames(&r.out).iter().map(|f| (f.0, f.1, f.2)).collect();
    use frame::kind::*;
    assert_eq!(
        kinds,
        [
            (SETTINGS, flags::ACK, 0),
            (HEADERS, flags::END_HEADERS, 1),
            (DATA, flags::END_STREAM, 1),
            (HEADERS, flags::END_HEADERS, 3),
            (DATA, flags::END_STREAM, 3),
        ]
    );
    assert!(conn.is_idle());
}

#[test]
fn connection_errors_send_goaway_with_the_rfc_code() {
    let big = vec![b'x'; 40 * 1024];
    type Make = Box<dyn Fn(&mut Client) -> Vec<u8>>;
    let cases: Vec<(&str, Make, Fault, ErrorCode)> = vec![
        (
            "an HTTP/1.1 request instead of the preface",
            Box::new(|_| b"GET / HTTP/1.1\r\nHost: a\r\n\r\n".to_vec()),
            Fault::Preface,
            ErrorCode::ProtocolError,
        ),
        (
            "a PING before SETTINGS",
            Box::new(|_| {
                let mut b = PREFACE.to_vec();
                encode(
                    &Frame::Ping {
                        ack: false,
                        data: [0; 8],
                    },
                    &mut b,
                );
                b
            }),
            Fault::SettingsFirst,
            ErrorCode::ProtocolError,
        ),
        (
            "an even stream id",
            Box::new(|c| c.get(2, "/").bytes.clone()),
            Fault::EvenStream,
            ErrorCode::ProtocolError,
        ),
        (
            "a stream id that goes backwards",
            Box::new(|c| c.get(5, "/").get(3, "/").bytes.clone()),
            Fault::StreamBackwards,
            ErrorCode::ProtocolError,
        ),
        (
            "a stream id used before and below the last",
            Box::new(|c| c.get(1, "/").get(3, "/").get(1, "/").bytes.clone()),
            Fault::StreamBackwards,
            ErrorCode::ProtocolError,
        ),
        (
            "HEADERS again on the last stream, which ended",
            Box::new(|c| c.get(1, "/").get(1, "/").bytes.clone()),
            Fault::ClosedStream,
            ErrorCode::StreamClosed,
        ),
        (
            "DATA on an idle stream",
            Box::new(|c| c.data(7, b"x", true).bytes.clone()),
            Fault::IdleStream,
            ErrorCode::ProtocolError,
        ),
        (
            "RST_STREAM on an idle stream",
            Box::new(|c| {
                c.frame(Frame::RstStream { stream: 9, code: 8 })
                    .bytes
                    .clone()
            }),
            Fault::IdleStream,
            ErrorCode::ProtocolError,
        ),
        (
            "a PING between HEADERS and its CONTINUATION",
            Box::new(|c| {
                let block = c.block(&get("/"));
                c.frame(Frame::Headers {
                    stream: 1,
                    end_stream: true,
                    end_headers: false,
                    priority: None,
                    padding: None,
                    block: &block,
                })
                .frame(Frame::Ping {
                    ack: false,
                    data: [0; 8],
                })
                .bytes
                .clone()
            }),
            Fault::Continuation,
            ErrorCode::ProtocolError,
        ),
        (
            "a CONTINUATION flood",
            Box::new(move |c| {
                let block = c.block(&get("/"));
                c.frame(Frame::Headers {
                    stream: 1,
                    end_stream: true,
                    end_headers: false,
                    priority: None,
                    padding: None,
                    block: &block,
                });
                for chunk in big.chunks(16 * 1024) {
                    c.frame(Frame::Continuation {
                        stream: 1,
                        end_headers: false,
                        block: chunk,
                    });
                }
                c.bytes.clone()
            }),
            Fault::HeaderBlockTooLarge,
            ErrorCode::EnhanceYourCalm,
        ),
        (
            "a PUSH_PROMISE from the client",
            Box::new(|c| {
                c.frame(Frame::PushPromise {
                    stream: 1,
                    flags: flags::END_HEADERS,
                    payload: &[0, 0, 0, 2],
                })
                .bytes
                .clone()
            }),
            Fault::PushPromise,
            ErrorCode::ProtocolError,
        ),
        (
            "a connection window overflow",
            Box::new(|c| {
                c.frame(Frame::WindowUpdate {
                    stream: 0,
                    increment: (1 << 31) - 1,
                })
                .bytes
                .clone()
            }),
            Fault::WindowOverflow,
            ErrorCode::FlowControlError,
        ),
        (
            "a frame over SETTINGS_MAX_FRAME_SIZE",
            Box::new(|c| c.data(1, &vec![0; 16 * 1024 + 1], true).bytes.clone()),
            Fault::Frame(Violation::TooLarge),
            ErrorCode::FrameSizeError,
        ),
        (
            "an HPACK index past both tables",
            Box::new(|c| {
                c.frame(Frame::Headers {
                    stream: 1,
                    end_stream: true,
                    end_headers: true,
                    priority: None,
                    padding: None,
                    block: &[0xff, 0x7f],
                })
                .bytes
                .clone()
            }),
            Fault::Hpack(crate::h2::hpack::HpackError::IndexOutOfRange),
            ErrorCode::CompressionError,
        ),
    ];
    for (name, make, fault, code) in cases {
        let mut c = Client::new();
        let input = make(&mut c);
        let mut conn = server();
        let r = run(&mut conn, &input, true);
        let last = r.steps.last().copied();
        let got_fault = match last {
            Some(Step::ConnectionError(f)) => Some(f),
            _ => None,
        };
        assert_eq!(got_fault, Some(fault), "{name}");
        assert_eq!(goaway_code(&r.out), Some(code.code()), "{name}");
        assert!(conn.is_done(), "{name}");
        // Nothing more is read once the connection failed.
        assert_eq!(
            conn.poll(
                &c.bytes,
                &mut Vec::new(),
                &mut Fields::default(),
                &mut Vec::new()
            ),
            Step::Partial
        );
    }
}

#[test]
fn stream_errors_reset_one_stream_and_the_next_request_is_answered() {
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], bool, &'a [u8]);
    let cases: &[Case] = &[
        (
            "uppercase field name",
            &[
                (":method", "GET"),
                (":scheme", "http"),
                (":path", "/"),
                ("Accept", "x"),
            ],
            true,
            b"",
        ),
        (
            "connection-specific field",
            &[
                (":method", "GET"),
                (":scheme", "http"),
                (":path", "/"),
                ("connection", "keep-alive"),
            ],
            true,
            b"",
        ),
        (
            "no :path",
            &[(":method", "GET"), (":scheme", "http")],
            true,
            b"",
        ),
        (
            "content-length above the DATA",
            &[
                (":method", "POST"),
                (":scheme", "http"),
                (":path", "/"),
                ("content-length", "10"),
            ],
            false,
            b"abc",
        ),
        (
            "content-length below the DATA",
            &[
                (":method", "POST"),
                (":scheme", "http"),
                (":path", "/"),
                ("content-length", "1"),
            ],
            false,
            b"abc",
        ),
    ];
    for (name, fields, end, data) in cases {
        let mut c = Client::new();
        c.headers(1, fields, *end);
        if !*end {
            c.data(1, data, true);
        }
        c.get(3, "/after");
        let mut conn = server();
        let r = run(&mut conn, &c.bytes, true);
        assert_eq!(
            rst_codes(&r.out),
            [(1, ErrorCode::ProtocolError.code())],
            "{name}"
        );
        assert_eq!(r.requests.len(), 1, "{name}");
        assert_eq!(r.requests[0].0, 3, "{name}");
        assert!(goaway_code(&r.out).is_none(), "{name}");
    }
}

/// Regression: HEADERS on a stream whose request ended while its response waits for window
/// was reset as malformed trailers (PROTOCOL_ERROR); RFC 9113 §5.1 "half-closed (remote)"
/// asks for STREAM_CLOSED, and the connection goes on.
#[test]
fn headers_on_a_half_closed_stream_still_answering_is_stream_closed() {
    let mut conn = server();
    let mut zero = PREFACE.to_vec();
    encode_settings(&mut zero, false, &[Setting::InitialWindowSize(0)]);
    let mut c = Client {
        enc: Encoder::new(),
        bytes: zero,
    };
    c.get(1, "/").get(1, "/again").get(3, "/after");
    let r = run(&mut conn, &c.bytes, true);
    assert_eq!(rst_codes(&r.out), [(1, ErrorCode::StreamClosed.code())]);
    assert!(goaway_code(&r.out).is_none());
    let ids: Vec<u32> = r.requests.iter().map(|q| q.0).collect();
    assert_eq!(ids, [1, 3]);
}

#[test]
fn a_body_arrives_across_data_frames_and_the_window_is_given_back() {
    let cfg = ServerConfig {
        stream_window: 30_000,
        ..ServerConfig::default()
    };
    let mut conn = ServerConn::new(cfg);
    conn.start(&mut Vec::new());
    let mut c = Client::new();
    let post = [
        (":method", "POST"),
        (":scheme", "http"),
        (":path", "/up"),
        ("content-length", "40000"),
    ];
    c.headers(1, &post, false);
    let part = vec![7u8; 16_000];
    c.data(1, &part, false)
        .data(1, &part, false)
        .data(1, &part[..8_000], true);
    let r = run(&mut conn, &c.bytes, true);
    assert_eq!(r.requests.len(), 1);
    assert_eq!(r.requests[0].2.len(), 40_000);
    let updates: Vec<_> = frames(&r.out)
        .into_iter()
        .filter(|f| f.0 == frame::kind::WINDOW_UPDATE)
        .map(|f| f.2)
        .collect();
    // Each of the first two frames used half the stream's window: it is opened again; the
    // last ends the stream, which needs no more room.
    assert_eq!(updates, [1, 1]);
}

#[test]
fn oversized_bodies_and_field_lists_get_their_status() {
    let cfg = ServerConfig {
        max_body: 10,
        max_header_list: 200,
        ..ServerConfig::default()
    };
    let mut conn = ServerConn::new(cfg);
    conn.start(&mut Vec::new());
    let mut c = Client::new();
    let post = [(":method", "POST"), (":scheme", "http"), (":path", "/up")];
    c.headers(1, &post, false).data(1, &[1; 11], true);
    let long = "v".repeat(300);
    let mut many = get("/");
    many.push(("x-long", &long));
    c.headers(3, &many, true).get(5, "/ok");
    let r = run(&mut conn, &c.bytes, true);
    let refused: Vec<_> = r
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Refused { status, .. } => Some(*status),
            _ => None,
        })
        .collect();
    assert_eq!(refused, [413, 431]);
    assert_eq!(r.requests.len(), 1);
    assert!(goaway_code(&r.out).is_none());
}

#[test]
fn floods_of_frames_without_requests_end_the_connection() {
    type Make = fn(&mut Client, u32);
    let floods: &[(&str, Make, Fault)] = &[
        (
            "PING",
            |c, _| {
                c.frame(Frame::Ping {
                    ack: false,
                    data: [1; 8],
                });
            },
            Fault::ControlFlood,
        ),
        (
            "SETTINGS",
            |c, _| {
                encode_settings(&mut c.bytes, false, &[]);
            },
            Fault::ControlFlood,
        ),
        (
            "empty DATA",
            |c, _| {
                c.data(1, b"", false);
            },
            Fault::ControlFlood,
        ),
        (
            "rapid reset",
            |c, i| {
                let id = 2 * i + 3;
                c.get(id, "/");
                c.frame(Frame::RstStream {
                    stream: id,
                    code: 8,
                });
            },
            Fault::RapidReset,
        ),
    ];
    for (name, make, fault) in floods {
        let mut c = Client::new();
        let post = [(":method", "POST"), (":scheme", "http"), (":path", "/")];
        c.headers(1, &post, false);
        for i in 0..3000 {
            make(&mut c, i);
        }
        let mut conn = server();
        let r = run(&mut conn, &c.bytes, true);
        assert_eq!(
            r.steps.last(),
            Some(&Step::ConnectionError(*fault)),
            "{name}"
        );
        assert_eq!(
            goaway_code(&r.out),
            Some(ErrorCode::EnhanceYourCalm.code()),
            "{name}"
        );
    }
}

#[test]
fn the_send_window_bounds_data_and_window_updates_open_it() {
    let mut conn = server();
    let mut c = Client::new();
    encode_settings(&mut c.bytes, false, &[Setting::InitialWindowSize(10)]);
    c.get(1, "/");
    let mut out = Vec::new();
    let mut fields = Fields::default();
    let mut body = Vec::new();
    let mut pos = 0;
    let stream = loop {
        match conn.poll(&c.bytes[pos..], &mut out, &mut fields, &mut body) {
            Step::Handled(n) => pos += n,
            Step::Request { stream, .. } => break stream,
            s => panic!("{s:?}"),
        }
    };
    conn.headers(&mut out, stream, false, |enc, out| enc.status(out, 200));
    assert_eq!(conn.send_capacity(stream), 10);
    assert_eq!(conn.data(&mut out, stream, &[b'x'; 25], true), 10);
    assert!(conn.is_blocked());
    let mut more = Vec::new();
    encode(
        &Frame::WindowUpdate {
            stream,
            increment: 100,
        },
        &mut more,
    );
    assert_eq!(
        conn.poll(&more, &mut out, &mut fields, &mut body),
        Step::Handled(13)
    );
    assert_eq!(conn.send_capacity(stream), 100);
    assert_eq!(conn.data(&mut out, stream, &[b'x'; 15], true), 15);
    assert!(conn.is_idle());
    let data: Vec<_> = frames(&out)
        .into_iter()
        .filter(|f| f.0 == frame::kind::DATA)
        .map(|f| (f.3.len(), f.1))
        .collect();
    assert_eq!(data, [(10, 0), (15, flags::END_STREAM)]);
}

#[test]
fn a_lowered_initial_window_applies_to_open_streams() {
    let mut conn = server();
    let mut c = Client::new();
    c.get(1, "/");
    let mut out = Vec::new();
    let mut fields = Fields::default();
    let mut body = Vec::new();
    let mut pos = 0;
    while pos < c.bytes.len() {
        match conn.poll(&c.bytes[pos..], &mut out, &mut fields, &mut body) {
            Step::Handled(n) | Step::Request { used: n, .. } => pos += n,
            s => panic!("{s:?}"),
        }
    }
    assert_eq!(conn.send_capacity(1), 65_535);
    let mut s = Vec::new();
    encode_settings(&mut s, false, &[Setting::InitialWindowSize(1_000)]);
    conn.poll(&s, &mut out, &mut fields, &mut body);
    assert_eq!(conn.send_capacity(1), 1_000);
}

#[test]
fn a_head_larger_than_the_frame_size_continues_in_continuation_frames() {
    let mut conn = server();
    let mut c = Client::new();
    c.get(1, "/");
    let r = run(&mut conn, &c.bytes, false);
    assert_eq!(r.requests.len(), 1);
    let mut out = Vec::new();
    let long = vec![b'v'; 40_000];
    conn.headers(&mut out, 1, true, |enc, out| {
        enc.status(out, 200);
        enc.field(out, b"x-long", &long, Index::No);
    });
    let kinds: Vec<_> = frames(&out).iter().map(|f| (f.0, f.1)).collect();
    use frame::kind::*;
    assert_eq!(
        kinds,
        [
            (HEADERS, flags::END_STREAM),
            (CONTINUATION, 0),
            (CONTINUATION, flags::END_HEADERS)
        ]
    );
    assert!(frames(&out).iter().all(|f| f.3.len() <= 16_384));
}

#[test]
fn goaway_takes_no_new_stream_and_lets_open_ones_finish() {
    let mut conn = server();
    let mut c = Client::new();
    let post = [(":method", "POST"), (":scheme", "http"), (":path", "/")];
    c.headers(1, &post, false);
    let r = run(&mut conn, &c.bytes, true);
    assert!(r.requests.is_empty());
    let mut out = Vec::new();
    conn.shutdown(&mut out);
    let f = frames(&out);
    let last = |f: &(u8, u8, u32, Vec<u8>)| u32::from_be_bytes(f.3[..4].try_into().unwrap());
    assert_eq!((f[0].0, last(&f[0])), (frame::kind::GOAWAY, (1 << 31) - 1));
    assert_eq!(
        (f[1].0, f[1].3.as_slice()),
        (frame::kind::PING, &DRAIN_PING[..])
    );
    assert!(!conn.is_done());
    // A request sent before the client saw the GOAWAY is still taken...
    let mut more = Client::new();
    more.bytes.clear();
    more.get(3, "/in-flight");
    more.frame(Frame::Ping {
        ack: true,
        data: DRAIN_PING,
    });
    // ...and one after its PING's ACK is not.
    more.get(5, "/late").data(1, b"body", true);
    let r = run(&mut conn, &more.bytes, true);
    let streams: Vec<_> = r.requests.iter().map(|r| r.0).collect();
    assert_eq!(streams, [3, 1]);
    let f = frames(&r.out);
    let goaway = f.iter().find(|f| f.0 == frame::kind::GOAWAY).unwrap();
    assert_eq!(last(goaway), 3);
    assert!(conn.is_done());
}

#[test]
fn too_many_open_streams_are_refused() {
    let cfg = ServerConfig {
        max_concurrent_streams: 2,
        ..ServerConfig::default()
    };
    let mut conn = ServerConn::new(cfg);
    conn.start(&mut Vec::new());
    let mut c = Client::new();
    let post = [(":method", "POST"), (":scheme", "http"), (":path", "/")];
    c.headers(1, &post, false)
        .headers(3, &post, false)
        .headers(5, &post, false);
    let r = run(&mut conn, &c.bytes, true);
    assert_eq!(rst_codes(&r.out), [(5, ErrorCode::RefusedStream.code())]);
}

#[test]
fn trailers_end_a_body_and_are_not_fields_of_the_request() {
    let mut conn = server();
    let mut c = Client::new();
    let post = [(":method", "POST"), (":scheme", "http"), (":path", "/t")];
    c.headers(1, &post, false).data(1, b"abc", false);
    c.headers(1, &[("x-checksum", "1")], true);
    let r = run(&mut conn, &c.bytes, true);
    assert_eq!(r.requests.len(), 1);
    assert_eq!(r.requests[0].2, b"abc");
}
