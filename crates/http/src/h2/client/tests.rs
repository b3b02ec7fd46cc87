//! The client connection driven by hand-made server frames (each rule it enforces, the frames
//! it writes back), then against [`ServerConn`](crate::h2::ServerConn) in memory.

use super::*;
use crate::h2::hpack::{Encoder, HpackError, Index};
use crate::h2::{Fields, ServerConfig, ServerConn, Step, encode, encode_settings};

/// A server: its HPACK encoder and the bytes it has written.
struct Server {
    enc: Encoder,
    bytes: Vec<u8>,
}

impl Server {
    /// SETTINGS with `settings`.
    fn new(settings: &[Setting]) -> Self {
        let mut bytes = Vec::new();
        encode_settings(&mut bytes, false, settings);
        Self {
            enc: Encoder::new(),
            bytes,
        }
    }

    /// A server that has not sent its SETTINGS yet.
    fn silent() -> Self {
        Self {
            enc: Encoder::new(),
            bytes: Vec::new(),
        }
    }

    fn block(&mut self, fields: &[(&str, &str)]) -> Vec<u8> {
        let mut b = Vec::new();
        self.enc.begin_block(&mut b);
        for (n, v) in fields {
            self.enc
                .field(&mut b, n.as_bytes(), v.as_bytes(), Index::Incremental);
        }
        b
    }

    fn fields(&mut self, stream: u32, fields: &[(&str, &str)], end_stream: bool) -> &mut Self {
        let block = self.block(fields);
        self.frame(Frame::Headers {
            stream,
            end_stream,
            end_headers: true,
            priority: None,
            padding: None,
            block: &block,
        })
    }

    fn status(&mut self, stream: u32, status: &str, end_stream: bool) -> &mut Self {
        self.fields(stream, &[(":status", status), ("server", "t")], end_stream)
    }

    fn data(&mut self, stream: u32, data: &[u8], end_stream: bool) -> &mut Self {
        self.frame(Frame::Data {
            stream,
            end_stream,
            data,
            padding: None,
        })
    }

    fn frame(&mut self, f: Frame<'_>) -> &mut Self {
        encode(&f, &mut self.bytes);
        self
    }
}

/// A client that sent its preface and opened `n` GET streams (ids 1, 3, ...; tags 0, 1, ...)
/// after `settings` from the server.
fn client(cfg: ClientConfig, settings: &[Setting], n: u32) -> ClientConn<u32> {
    let mut c = ClientConn::new(cfg);
    c.start(&mut Vec::new());
    let mut s = Vec::new();
    encode_settings(&mut s, false, settings);
    assert_eq!(run(&mut c, &s).0, [Event::Handled(s.len())]);
    for tag in 0..n {
        get(&mut c, tag);
    }
    c
}

fn get(c: &mut ClientConn<u32>, tag: u32) -> u32 {
    c.open(&mut Vec::new(), tag, 0, |enc, out| {
        request_head(enc, out, b"GET", b"http", b"a", b"/")
    })
}

fn cfg(max_streams: u32) -> ClientConfig {
    ClientConfig {
        max_streams,
        ..ClientConfig::default()
    }
}

/// Every event of a run of `poll` over `input` up to `Partial` or a connection error, and the
/// bytes written.
fn run(c: &mut ClientConn<u32>, input: &[u8]) -> (Vec<Event<u32>>, Vec<u8>) {
    let mut events = Vec::new();
    let mut out = Vec::new();
    let mut pos = 0;
    loop {
        let e = c.poll(&input[pos..], &mut out);
        match e {
            Event::Partial => break,
            Event::ConnectionError(_) => {
                events.push(e);
                break;
            }
            Event::Handled(n)
            | Event::Response { used: n, .. }
            | Event::Reset { used: n, .. }
            | Event::StreamError { used: n, .. }
            | Event::GoAway { used: n, .. } => pos += n,
        }
        events.push(e);
    }
    (events, out)
}

/// The events that are not `Handled`.
fn answers(events: &[Event<u32>]) -> Vec<Event<u32>> {
    events
        .iter()
        .filter(|e| !matches!(e, Event::Handled(_)))
        .map(|e| match *e {
            // `used` depends on the split: compare without it.
            Event::Response {
                stream,
                tag,
                status,
                body_len,
                ..
            } => Event::Response {
                used: 0,
                stream,
                tag,
                status,
                body_len,
            },
            Event::Reset {
                stream, tag, code, ..
            } => Event::Reset {
                used: 0,
                stream,
                tag,
                code,
            },
            Event::StreamError {
                stream, tag, fault, ..
            } => Event::StreamError {
                used: 0,
                stream,
                tag,
                fault,
            },
            Event::GoAway {
                last_stream, code, ..
            } => Event::GoAway {
                used: 0,
                last_stream,
                code,
            },
            e => e,
        })
        .collect()
}

fn response(stream: u32, tag: u32, status: u16, body_len: u64) -> Event<u32> {
    Event::Response {
        used: 0,
        stream,
        tag,
        status,
        body_len,
    }
}

/// Every frame in `out`, as (type, flags, stream, payload).
fn frames(out: &[u8]) -> Vec<(u8, u8, u32, Vec<u8>)> {
    let mut v = Vec::new();
    let mut pos = 0;
    while pos < out.len() {
        let head: &[u8; HEADER_LEN] = out[pos..pos + HEADER_LEN].try_into().unwrap();
        let h = FrameHeader::parse(head);
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
        .find(|f| f.0 == kind::GOAWAY)
        .map(|f| u32::from_be_bytes(f.3[4..8].try_into().unwrap()))
}

fn rst(out: &[u8]) -> Vec<(u32, u32)> {
    frames(out)
        .iter()
        .filter(|f| f.0 == kind::RST_STREAM)
        .map(|f| (f.2, u32::from_be_bytes(f.3[..4].try_into().unwrap())))
        .collect()
}

#[test]
fn the_preface_is_the_magic_settings_without_push_and_a_window_update() {
    let mut c = ClientConn::<u32>::new(ClientConfig::default());
    let mut out = Vec::new();
    c.start(&mut out);
    assert_eq!(&out[..24], PREFACE);
    let f = frames(&out[24..]);
    assert_eq!(f.len(), 2);
    assert_eq!((f[0].0, f[0].1), (kind::SETTINGS, 0));
    // ENABLE_PUSH = 0, INITIAL_WINDOW_SIZE = 2^30-1.
    assert_eq!(f[0].3, [0, 2, 0, 0, 0, 0, 0, 4, 0x3f, 0xff, 0xff, 0xff]);
    assert_eq!((f[1].0, f[1].2), (kind::WINDOW_UPDATE, 0));
    let inc = u32::from_be_bytes(f[1].3[..4].try_into().unwrap());
    assert_eq!(i64::from(inc), (1 << 30) - 1 - DEFAULT_WINDOW);
}

/// How many streams may open, by the caller's limit and the server's SETTINGS.
macro_rules! limits {
    ($($name:ident: $m:expr, $settings:expr => $open:expr, $capped:expr;)*) => {$(
        #[test]
        fn $name() {
            let mut c = ClientConn::<u32>::new(cfg($m));
            c.start(&mut Vec::new());
            assert_eq!(c.can_open(), 0, "nothing opens before the server's SETTINGS");
            let mut s = Vec::new();
            encode_settings(&mut s, false, $settings);
            let (events, out) = run(&mut c, &s);
            assert_eq!(events, [Event::Handled(s.len())]);
            assert_eq!(frames(&out), [(kind::SETTINGS, flags::ACK, 0, vec![])], "ACKed");
            assert_eq!((c.can_open(), c.is_capped()), ($open, $capped));
        }
    )*};
}

limits! {
    no_limit_from_the_server_leaves_m: 10, &[] => 10, false;
    a_lower_server_limit_caps_m: 10, &[Setting::MaxConcurrentStreams(3)] => 3, true;
    a_higher_server_limit_leaves_m: 10, &[Setting::MaxConcurrentStreams(100)] => 10, false;
    a_zero_server_limit_opens_nothing: 10, &[Setting::MaxConcurrentStreams(0)] => 0, true;
}

#[test]
fn streams_take_odd_ids_and_free_their_slot_when_answered() {
    let mut c = client(cfg(2), &[], 0);
    assert_eq!(get(&mut c, 7), 1);
    assert_eq!(get(&mut c, 8), 3);
    assert_eq!(c.can_open(), 0);
    let mut s = Server::silent();
    s.status(3, "200", false).data(3, b"hello", true);
    let (events, _) = run(&mut c, &s.bytes);
    assert_eq!(answers(&events), [response(3, 8, 200, 5)]);
    assert_eq!((c.can_open(), c.open_streams()), (1, 1));
    assert_eq!(get(&mut c, 9), 5);
}

/// Server frames after SETTINGS, and the answers they make of three open streams (1, 3, 5;
/// tags 0, 1, 2), read at every split point of the input.
macro_rules! answers {
    ($($name:ident: |$s:ident| $build:expr => $want:expr;)*) => {$(
        #[test]
        fn $name() {
            let mut $s = Server::silent();
            $build;
            let input = $s.bytes;
            let want: Vec<Event<u32>> = $want;
            for split in 0..=input.len() {
                let mut c = client(cfg(10), &[], 3);
                let (mut events, _) = run(&mut c, &input[..split]);
                // What the first part left unread goes in front of the second, as a load
                // worker keeps a tail.
                let used: usize = events.iter().map(used).sum();
                let (more, _) = run(&mut c, &input[used..]);
                events.extend(more);
                assert_eq!(answers(&events), want, "split {split}");
            }
        }
    )*};
}

fn used(e: &Event<u32>) -> usize {
    match *e {
        Event::Handled(n)
        | Event::Response { used: n, .. }
        | Event::Reset { used: n, .. }
        | Event::StreamError { used: n, .. }
        | Event::GoAway { used: n, .. } => n,
        _ => 0,
    }
}

answers! {
    headers_then_data_is_one_response_with_its_body_length: |s| {
        s.status(1, "200", false).data(1, b"hello", false).data(1, b" world", true)
    } => vec![response(1, 0, 200, 11)];
    headers_with_end_stream_is_a_response_without_body: |s| {
        s.status(3, "404", true)
    } => vec![response(3, 1, 404, 0)];
    responses_come_in_the_order_they_end_not_the_order_sent: |s| {
        s.status(1, "200", false).status(5, "201", true).data(1, b"x", true)
    } => vec![response(5, 2, 201, 0), response(1, 0, 200, 1)];
    an_interim_response_is_skipped: |s| {
        s.status(1, "100", false).status(1, "200", true)
    } => vec![response(1, 0, 200, 0)];
    trailers_end_the_stream: |s| {
        s.status(1, "200", false).data(1, b"abc", false).fields(1, &[("grpc-status", "0")], true)
    } => vec![response(1, 0, 200, 3)];
    padding_is_not_counted_in_the_body: |s| {
        s.status(1, "200", false).frame(Frame::Data {
            stream: 1,
            end_stream: true,
            data: b"four",
            padding: Some(7),
        })
    } => vec![response(1, 0, 200, 4)];
    an_empty_data_frame_ends_the_stream: |s| {
        s.status(1, "200", false).data(1, b"", true)
    } => vec![response(1, 0, 200, 0)];
    a_header_block_across_continuation_frames_is_one_head: |s| {
        let block = s.block(&[(":status", "204"), ("x", "y")]);
        s.frame(Frame::Headers {
            stream: 1,
            end_stream: true,
            end_headers: false,
            priority: None,
            padding: None,
            block: &block[..2],
        })
        .frame(Frame::Continuation { stream: 1, end_headers: true, block: &block[2..] })
    } => vec![response(1, 0, 204, 0)];
    rst_stream_reports_the_request_and_its_code: |s| {
        s.frame(Frame::RstStream { stream: 3, code: 7 }).status(1, "200", true)
    } => vec![
        Event::Reset { used: 0, stream: 3, tag: 1, code: 7 },
        response(1, 0, 200, 0),
    ];
    a_missing_status_is_a_stream_error: |s| {
        s.fields(1, &[("server", "t")], true).status(3, "200", true)
    } => vec![
        Event::StreamError { used: 0, stream: 1, tag: 0, fault: ClientFault::Malformed },
        response(3, 1, 200, 0),
    ];
    data_before_the_head_is_a_stream_error_and_its_bytes_are_skipped: |s| {
        s.data(1, b"early", true).status(3, "200", true)
    } => vec![
        Event::StreamError { used: 0, stream: 1, tag: 0, fault: ClientFault::Malformed },
        response(3, 1, 200, 0),
    ];
    frames_for_a_stream_given_up_on_are_ignored: |s| {
        s.fields(1, &[("server", "t")], true)
            .status(1, "200", false)
            .data(1, b"late", true)
            .status(3, "200", true)
    } => vec![
        Event::StreamError { used: 0, stream: 1, tag: 0, fault: ClientFault::Malformed },
        response(3, 1, 200, 0),
    ];
    priority_ping_and_unknown_frames_change_nothing: |s| {
        s.frame(Frame::Priority {
            stream: 1,
            priority: crate::h2::Priority { exclusive: false, dependency: 0, weight: 15 },
        })
        .frame(Frame::Unknown { kind: 0xfa, flags: 0, stream: 1, payload: b"?" })
        .frame(Frame::Ping { ack: false, data: *b"12345678" })
        .status(1, "200", true)
    } => vec![response(1, 0, 200, 0)];
    goaway_names_the_last_stream_it_serves: |s| {
        s.frame(Frame::GoAway { last_stream: 1, code: 0, debug: b"bye" }).status(1, "200", true)
    } => vec![Event::GoAway { used: 0, last_stream: 1, code: 0 }, response(1, 0, 200, 0)];
}

#[test]
fn goaway_refuses_the_streams_above_its_last_and_ends_the_connection_once_the_rest_end() {
    let mut c = client(cfg(10), &[], 3);
    let mut s = Server::silent();
    s.frame(Frame::GoAway {
        last_stream: 1,
        code: ErrorCode::NoError.code(),
        debug: b"",
    });
    run(&mut c, &s.bytes);
    assert_eq!(c.can_open(), 0, "no new stream after GOAWAY");
    let mut refused = Vec::new();
    c.drop_refused(|id, tag| refused.push((id, tag)));
    refused.sort_unstable();
    assert_eq!(refused, [(3, 1), (5, 2)]);
    assert!(!c.is_done(), "stream 1 is still served");
    let mut s = Server::silent();
    s.status(1, "200", true);
    run(&mut c, &s.bytes);
    assert!(c.is_done());
}

#[test]
fn a_ping_is_answered_with_its_data() {
    let mut c = client(cfg(1), &[], 0);
    let mut s = Server::silent();
    s.frame(Frame::Ping {
        ack: false,
        data: *b"abcdefgh",
    })
    .frame(Frame::Ping {
        ack: true,
        data: *b"ignored!",
    });
    let (_, out) = run(&mut c, &s.bytes);
    assert_eq!(
        frames(&out),
        [(kind::PING, flags::ACK, 0, b"abcdefgh".to_vec())]
    );
}

/// Server frames that end the connection, with the fault and the GOAWAY code.
macro_rules! conn_errors {
    ($($name:ident: $cfg:expr, |$s:ident| $build:expr => $fault:expr, $code:expr;)*) => {$(
        #[test]
        fn $name() {
            let mut $s = Server::silent();
            $build;
            let mut c = client($cfg, &[], 1);
            let (events, out) = run(&mut c, &$s.bytes);
            assert_eq!(events.last(), Some(&Event::ConnectionError($fault)));
            assert_eq!(goaway_code(&out), Some($code.code()));
            assert!(c.is_done());
            assert_eq!(c.poll(&$s.bytes, &mut Vec::new()), Event::Partial, "nothing more is read");
        }
    )*};
}

fn small_windows() -> ClientConfig {
    ClientConfig {
        max_streams: 10,
        stream_window: 100,
        connection_window: 65_535,
    }
}

conn_errors! {
    push_promise_is_refused: cfg(1), |s| {
        s.frame(Frame::PushPromise { stream: 1, flags: flags::END_HEADERS, payload: &[0, 0, 0, 2] })
    } => ClientFault::PushPromise, ErrorCode::ProtocolError;
    data_on_a_stream_never_opened: cfg(1), |s| s.data(3, b"x", true)
        => ClientFault::IdleStream, ErrorCode::ProtocolError;
    headers_on_an_even_stream: cfg(1), |s| s.status(2, "200", true)
        => ClientFault::IdleStream, ErrorCode::ProtocolError;
    data_on_stream_zero: cfg(1), |s| s.bytes.extend_from_slice(&[0, 0, 1, 0, 0, 0, 0, 0, 0, b'x'])
        => ClientFault::Frame(Violation::StreamZero), ErrorCode::ProtocolError;
    data_longer_than_our_frame_size: cfg(1), |s| {
        s.bytes.extend_from_slice(&[0, 0x40, 1, 0, 0, 0, 0, 0, 1])
    } => ClientFault::Frame(Violation::TooLarge), ErrorCode::FrameSizeError;
    padding_as_long_as_the_payload: cfg(1), |s| {
        s.status(1, "200", false).bytes.extend_from_slice(&[0, 0, 2, 0, flags::PADDED, 0, 0, 0, 1, 2, 0])
    } => ClientFault::Frame(Violation::PaddingTooLong), ErrorCode::ProtocolError;
    a_continuation_out_of_place: cfg(1), |s| {
        s.frame(Frame::Continuation { stream: 1, end_headers: true, block: &[0x88] })
    } => ClientFault::Continuation, ErrorCode::ProtocolError;
    another_frame_inside_a_field_block: cfg(1), |s| {
        s.frame(Frame::Headers {
            stream: 1,
            end_stream: true,
            end_headers: false,
            priority: None,
            padding: None,
            block: &[0x88],
        })
        .frame(Frame::Ping { ack: false, data: [0; 8] })
    } => ClientFault::Continuation, ErrorCode::ProtocolError;
    a_header_block_hpack_cannot_decode: cfg(1), |s| {
        s.frame(Frame::Headers {
            stream: 1,
            end_stream: true,
            end_headers: true,
            priority: None,
            padding: None,
            // Index 0 (RFC 7541 §6.1).
            block: &[0x80],
        })
    } => ClientFault::Hpack(HpackError::IndexZero), ErrorCode::CompressionError;
    a_window_update_past_the_largest_window: cfg(1), |s| {
        s.frame(Frame::WindowUpdate { stream: 0, increment: 0x7fff_ffff })
    } => ClientFault::WindowOverflow, ErrorCode::FlowControlError;
    a_bad_setting: cfg(1), |s| {
        s.bytes.extend_from_slice(&[0, 0, 6, kind::SETTINGS, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 7])
    } => ClientFault::Frame(Violation::EnablePush), ErrorCode::ProtocolError;
}

#[test]
fn the_first_frame_of_the_server_must_be_settings() {
    let mut c = ClientConn::<u32>::new(cfg(1));
    c.start(&mut Vec::new());
    let mut s = Server::silent();
    s.frame(Frame::Ping {
        ack: false,
        data: [0; 8],
    });
    let (events, out) = run(&mut c, &s.bytes);
    assert_eq!(events, [Event::ConnectionError(ClientFault::SettingsFirst)]);
    assert_eq!(goaway_code(&out), Some(ErrorCode::ProtocolError.code()));
}

#[test]
fn more_data_than_the_connection_window_ends_the_connection() {
    let mut c = client(cfg(1), &[], 1);
    // What is left after frames the client read but has not yet given back (the window
    // reopens in WINDOW_UPDATEs of half of it, so a well-behaved server never gets here).
    c.recv_window = 10;
    let mut s = Server::silent();
    s.status(1, "200", false).data(1, &[0; 11], false);
    let (events, out) = run(&mut c, &s.bytes);
    assert_eq!(
        events.last(),
        Some(&Event::ConnectionError(ClientFault::FlowControl))
    );
    assert_eq!(goaway_code(&out), Some(ErrorCode::FlowControlError.code()));
}

#[test]
fn more_data_than_a_stream_window_resets_that_stream_only() {
    let mut c = client(small_windows(), &[], 2);
    let mut s = Server::silent();
    s.status(1, "200", false)
        .data(1, &[0; 101], true)
        .status(3, "200", true);
    let (events, out) = run(&mut c, &s.bytes);
    assert_eq!(
        answers(&events),
        [
            Event::StreamError {
                used: 0,
                stream: 1,
                tag: 0,
                fault: ClientFault::FlowControl
            },
            response(3, 1, 200, 0)
        ]
    );
    assert_eq!(rst(&out), [(1, ErrorCode::FlowControlError.code())]);
}

#[test]
fn windows_reopen_as_bodies_are_read_at_half_a_window() {
    let mut c = client(small_windows(), &[], 1);
    let mut s = Server::silent();
    s.status(1, "200", false).data(1, &[0; 40], false);
    let (_, out) = run(&mut c, &s.bytes);
    assert_eq!(frames(&out), [], "40 of 100: not yet");
    let mut s = Server::silent();
    s.data(1, &[0; 20], false);
    let (_, out) = run(&mut c, &s.bytes);
    assert_eq!(
        frames(&out),
        [(kind::WINDOW_UPDATE, 0, 1, 60u32.to_be_bytes().to_vec())],
        "the stream's 60 octets go back"
    );
    // The connection's window (65 535) reopens past half of it.
    let mut s = Server::silent();
    for _ in 0..4 {
        s.data(1, &[0; 10_000], false);
        s.frame(Frame::WindowUpdate {
            stream: 0,
            increment: 1,
        });
    }
    let mut c = client(
        ClientConfig {
            stream_window: 1 << 20,
            ..small_windows()
        },
        &[],
        1,
    );
    let mut head = Server::silent();
    head.status(1, "200", false);
    run(&mut c, &head.bytes);
    let (_, out) = run(&mut c, &s.bytes);
    assert_eq!(
        frames(&out),
        [(kind::WINDOW_UPDATE, 0, 0, 40_000u32.to_be_bytes().to_vec())]
    );
}

#[test]
fn a_request_body_waits_for_the_servers_windows() {
    let mut c = client(cfg(1), &[Setting::InitialWindowSize(10)], 0);
    let body = [7u8; 25];
    let mut out = Vec::new();
    let id = c.open(&mut out, 0, body.len() as u32, |enc, out| {
        request_head(enc, out, b"POST", b"http", b"a", b"/")
    });
    assert_eq!(frames(&out)[0].1, flags::END_HEADERS, "no END_STREAM");
    out.clear();
    assert!(!c.data(&mut out, id, &body));
    assert_eq!(frames(&out), [(kind::DATA, 0, 1, vec![7; 10])]);
    assert_eq!(c.blocked().collect::<Vec<_>>(), [(1, 0)]);
    // A SETTINGS raising the initial window opens every stream's window by the difference.
    let mut s = Server::new(&[Setting::InitialWindowSize(20)]);
    s.frame(Frame::WindowUpdate {
        stream: 1,
        increment: 5,
    });
    run(&mut c, &s.bytes);
    out.clear();
    assert!(c.data(&mut out, id, &body));
    assert_eq!(
        frames(&out),
        [(kind::DATA, flags::END_STREAM, 1, vec![7; 15])]
    );
    assert_eq!(c.blocked().count(), 0);
}

/// Every request carries its `:path` as a literal without indexing (name from the static
/// table, value Huffman-coded), as nghttp2 writes it; the other pseudo-fields come from the
/// tables once the first request indexed them. Each block decodes to the same request.
#[test]
fn the_path_goes_literal_in_every_request_as_nghttp2_sends_it() {
    let mut c = client(cfg(3), &[], 0);
    let mut blocks = Vec::new();
    for (tag, path) in [(0, "/plaintext"), (1, "/plaintext"), (2, "/")] {
        let mut out = Vec::new();
        c.open(&mut out, tag, 0, |enc, out| {
            request_head(
                enc,
                out,
                b"GET",
                b"http",
                b"127.0.0.1:8080",
                path.as_bytes(),
            )
        });
        blocks.push(frames(&out).remove(0).3);
    }
    // GET and http from the static table, :authority from the dynamic one (index 62), then
    // :path: 0000 0100 (literal without indexing, name index 4), a Huffman length, the value.
    assert_eq!(blocks[1][..4], [0x82, 0x86, 0xbe, 0x04]);
    assert_eq!(blocks[1][4] & 0x80, 0x80, "Huffman-coded");
    assert!(
        blocks[0].ends_with(&blocks[1][3..]),
        "the same literal as the first time"
    );
    // "/" is a whole entry of the static table (index 4): one octet.
    assert_eq!(blocks[2], [0x82, 0x86, 0xbe, 0x84]);
    let mut dec = crate::h2::hpack::Decoder::new(4096);
    for (block, path) in blocks.iter().zip(["/plaintext", "/plaintext", "/"]) {
        let mut seen = Vec::new();
        dec.decode(block, 1 << 16, |n, v| seen.push((n.to_vec(), v.to_vec())))
            .unwrap();
        let want: [(&[u8], &[u8]); 4] = [
            (b":method", b"GET"),
            (b":scheme", b"http"),
            (b":authority", b"127.0.0.1:8080"),
            (b":path", path.as_bytes()),
        ];
        assert_eq!(seen, want.map(|(n, v)| (n.to_vec(), v.to_vec())));
    }
}

/// The client against the server connection, in memory: its requests reach the server as
/// sent, and the server's answers come back whole, large bodies both ways included.
#[test]
fn a_round_trip_against_the_server_connection() {
    let mut client = ClientConn::<u32>::new(cfg(8));
    let mut server = ServerConn::new(ServerConfig::default());
    let (mut c2s, mut s2c) = (Vec::new(), Vec::new());
    client.start(&mut c2s);
    server.start(&mut s2c);
    let big = vec![b'b'; 300 * 1024];
    let mut answers = Vec::new();
    let mut seen = Vec::new();
    let mut sent = 0u32;
    let (mut c_in, mut s_in) = (0, 0);
    let mut fields = Fields::default();
    let mut req_body = Vec::new();
    for _ in 0..1000 {
        while sent < 6 && client.can_open() > 0 {
            let post = sent % 2 == 1;
            let len = if post { big.len() as u32 } else { 0 };
            let path = format!("/{sent}");
            let method: &[u8] = if post { b"POST" } else { b"GET" };
            let id = client.open(&mut c2s, sent, len, |enc, out| {
                request_head(enc, out, method, b"http", b"a", path.as_bytes());
            });
            if post {
                client.data(&mut c2s, id, &big);
            }
            sent += 1;
        }
        let blocked: Vec<u32> = client.blocked().map(|(id, _)| id).collect();
        for id in blocked {
            client.data(&mut c2s, id, &big);
        }
        // Server side: read what the client wrote, answer each request with its body's size.
        loop {
            match server.poll(&c2s[s_in..], &mut s2c, &mut fields, &mut req_body) {
                Step::Partial => break,
                Step::Handled(n) => s_in += n,
                Step::Request { used, stream } => {
                    s_in += used;
                    let mut h = [crate::Header::EMPTY; 16];
                    let req = fields.request(&mut h, req_body.len() as u64).unwrap();
                    seen.push((req.target().to_string(), req_body.len()));
                    let reply = vec![b'r'; req_body.len() / 2 + 3];
                    req_body.clear();
                    server.headers(&mut s2c, stream, false, |enc, out| {
                        crate::h2::respond::head(enc, out, 200, None, None, &[]);
                    });
                    server.data(&mut s2c, stream, &reply, true);
                }
                other => panic!("server: {other:?}"),
            }
        }
        loop {
            match client.poll(&s2c[c_in..], &mut c2s) {
                Event::Partial => break,
                Event::Handled(n) => c_in += n,
                Event::Response {
                    used,
                    tag,
                    status,
                    body_len,
                    ..
                } => {
                    c_in += used;
                    answers.push((tag, status, body_len));
                }
                other => panic!("client: {other:?}"),
            }
        }
        if answers.len() == 6 {
            break;
        }
    }
    answers.sort_unstable();
    let want: Vec<_> = (0..6u32)
        .map(|t| {
            let body = if t % 2 == 1 { big.len() } else { 0 };
            (t, 200, (body / 2 + 3) as u64)
        })
        .collect();
    assert_eq!(answers, want);
    seen.sort_unstable();
    assert_eq!(seen.len(), 6);
    assert!(seen.iter().all(|(p, len)| {
        let t: usize = p[1..].parse().unwrap();
        *len == if t % 2 == 1 { big.len() } else { 0 }
    }));
    assert_eq!(client.open_streams(), 0);
}

/// A repeated block is recognised only while the table it was decoded against holds: the same
/// octet `be` (dynamic entry 62) means `:status: 201`, then `202` once the server inserted that,
/// then nothing once a size update emptied the table (a COMPRESSION_ERROR).
#[test]
fn a_repeated_block_decodes_against_the_table_as_it_is_now() {
    let mut c = client(cfg(10), &[], 8);
    let mut s = Server::silent();
    let blocks: [&[u8]; 8] = [
        b"\x48\x03201",
        b"\xbe",
        b"\xbe",
        b"\x48\x03202",
        b"\xbe",
        b"\xbf",
        b"\x20\x88",
        b"\xbe",
    ];
    for (k, block) in blocks.into_iter().enumerate() {
        s.frame(Frame::Headers {
            stream: 1 + 2 * k as u32,
            end_stream: true,
            end_headers: true,
            priority: None,
            padding: None,
            block,
        });
    }
    let (events, out) = run(&mut c, &s.bytes);
    let mut want: Vec<_> = [201, 201, 201, 202, 202, 201, 200]
        .into_iter()
        .enumerate()
        .map(|(k, status)| response(1 + 2 * k as u32, k as u32, status, 0))
        .collect();
    want.push(Event::ConnectionError(ClientFault::Hpack(
        HpackError::IndexOutOfRange,
    )));
    assert_eq!(answers(&events), want);
    assert_eq!(goaway_code(&out), Some(ErrorCode::CompressionError.code()));
}
