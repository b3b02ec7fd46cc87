//! The frame layer's rules, one table row per RFC 9113 rule, and the encode/decode round trip.

use super::*;
use crate::h2::{ErrorCode, FrameError, Violation};
use proptest::prelude::*;

/// A raw frame: header and payload as given, with no checks.
fn raw(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    frame_header(&mut out, payload.len(), kind, flags, stream);
    out.extend_from_slice(payload);
    out
}

fn setting(id: u16, value: u32) -> Vec<u8> {
    let mut p = id.to_be_bytes().to_vec();
    p.extend_from_slice(&value.to_be_bytes());
    p
}

fn conn(code: ErrorCode, violation: Violation) -> FrameError {
    FrameError {
        code,
        stream: 0,
        violation,
        skip: 0,
    }
}

fn stream(code: ErrorCode, stream: u32, violation: Violation, skip: usize) -> FrameError {
    FrameError {
        code,
        stream,
        violation,
        skip,
    }
}

/// Decodes a whole frame, checking it used every byte.
fn one(bytes: &[u8], max: u32) -> Result<Frame<'_>, FrameError> {
    decode(bytes, max).map(|s| match s {
        Status::Complete((frame, used)) => {
            assert_eq!(used, bytes.len());
            frame
        }
        Status::Partial => panic!("partial: {bytes:?}"),
    })
}

use ErrorCode::{FlowControlError, FrameSizeError, ProtocolError};
use Violation as V;

#[test]
fn malformed_frames_get_the_rfc_error() {
    let m = DEFAULT_MAX_FRAME_SIZE;
    let big = vec![0; 16_385];
    let cases: Vec<(&str, Vec<u8>, FrameError)> = vec![
        (
            "§4.2 DATA over MAX_FRAME_SIZE",
            raw(kind::DATA, 0, 1, &big),
            conn(FrameSizeError, V::TooLarge),
        ),
        (
            "§4.2 HEADERS over MAX_FRAME_SIZE",
            raw(kind::HEADERS, 4, 1, &big),
            conn(FrameSizeError, V::TooLarge),
        ),
        (
            "§4.2 unknown type over MAX_FRAME_SIZE",
            raw(0xfa, 0, 0, &big),
            conn(FrameSizeError, V::TooLarge),
        ),
        (
            "§6.1 DATA on stream 0",
            raw(kind::DATA, 0, 0, b"x"),
            conn(ProtocolError, V::StreamZero),
        ),
        (
            "§6.1 DATA pad length = payload length",
            raw(kind::DATA, 8, 1, &[3, 0, 0]),
            conn(ProtocolError, V::PaddingTooLong),
        ),
        (
            "§6.1 DATA pad length > payload length",
            raw(kind::DATA, 8, 1, &[9, 1]),
            conn(ProtocolError, V::PaddingTooLong),
        ),
        (
            "§4.2 DATA PADDED without Pad Length",
            raw(kind::DATA, 8, 1, &[]),
            conn(FrameSizeError, V::BadLength),
        ),
        (
            "§6.2 HEADERS on stream 0",
            raw(kind::HEADERS, 4, 0, b"\x82"),
            conn(ProtocolError, V::StreamZero),
        ),
        (
            "§6.2 HEADERS padding too long",
            raw(kind::HEADERS, 0xc, 1, &[2, 0x82]),
            conn(ProtocolError, V::PaddingTooLong),
        ),
        (
            "§6.2 HEADERS padding over the priority fields",
            raw(kind::HEADERS, 0x2c, 1, &[2, 0, 0, 0, 0, 0xf, 0]),
            conn(ProtocolError, V::PaddingTooLong),
        ),
        (
            "§4.2 HEADERS PRIORITY too short",
            raw(kind::HEADERS, 0x24, 1, &[0, 0, 0]),
            conn(FrameSizeError, V::BadLength),
        ),
        (
            "§5.3.1 HEADERS depends on itself",
            raw(kind::HEADERS, 0x24, 3, &[0, 0, 0, 3, 15, 0x82]),
            stream(ProtocolError, 3, V::SelfDependency, 15),
        ),
        (
            "§6.3 PRIORITY on stream 0",
            raw(kind::PRIORITY, 0, 0, &[0, 0, 0, 1, 15]),
            conn(ProtocolError, V::StreamZero),
        ),
        (
            "§6.3 PRIORITY of 4 octets",
            raw(kind::PRIORITY, 0, 5, &[0, 0, 0, 1]),
            stream(FrameSizeError, 5, V::BadLength, 13),
        ),
        (
            "§6.3 PRIORITY of 6 octets",
            raw(kind::PRIORITY, 0, 5, &[0; 6]),
            stream(FrameSizeError, 5, V::BadLength, 15),
        ),
        (
            "§5.3.1 PRIORITY depends on itself",
            raw(kind::PRIORITY, 0, 7, &[0x80, 0, 0, 7, 0]),
            stream(ProtocolError, 7, V::SelfDependency, 14),
        ),
        (
            "§6.4 RST_STREAM on stream 0",
            raw(kind::RST_STREAM, 0, 0, &[0, 0, 0, 8]),
            conn(ProtocolError, V::StreamZero),
        ),
        (
            "§6.4 RST_STREAM of 3 octets",
            raw(kind::RST_STREAM, 0, 1, &[0, 0, 8]),
            conn(FrameSizeError, V::BadLength),
        ),
        (
            "§6.4 RST_STREAM of 5 octets",
            raw(kind::RST_STREAM, 0, 1, &[0; 5]),
            conn(FrameSizeError, V::BadLength),
        ),
        (
            "§6.5 SETTINGS on a stream",
            raw(kind::SETTINGS, 0, 1, &[]),
            conn(ProtocolError, V::StreamNonZero),
        ),
        (
            "§6.5 SETTINGS ACK with a payload",
            raw(kind::SETTINGS, 1, 0, &setting(3, 100)),
            conn(FrameSizeError, V::BadLength),
        ),
        (
            "§6.5 SETTINGS length not a multiple of 6",
            raw(kind::SETTINGS, 0, 0, &[0, 3, 0, 0, 0]),
            conn(FrameSizeError, V::BadLength),
        ),
        (
            "§6.5.2 ENABLE_PUSH of 2",
            raw(kind::SETTINGS, 0, 0, &setting(2, 2)),
            conn(ProtocolError, V::EnablePush),
        ),
        (
            "§6.5.2 INITIAL_WINDOW_SIZE of 2^31",
            raw(kind::SETTINGS, 0, 0, &setting(4, 1 << 31)),
            conn(FlowControlError, V::InitialWindowSize),
        ),
        (
            "§6.5.2 INITIAL_WINDOW_SIZE of 2^32-1",
            raw(kind::SETTINGS, 0, 0, &setting(4, u32::MAX)),
            conn(FlowControlError, V::InitialWindowSize),
        ),
        (
            "§6.5.2 MAX_FRAME_SIZE of 16383",
            raw(kind::SETTINGS, 0, 0, &setting(5, 16_383)),
            conn(ProtocolError, V::MaxFrameSize),
        ),
        (
            "§6.5.2 MAX_FRAME_SIZE of 2^24",
            raw(kind::SETTINGS, 0, 0, &setting(5, 1 << 24)),
            conn(ProtocolError, V::MaxFrameSize),
        ),
        (
            "§6.5.2 a bad value after good ones",
            raw(
                kind::SETTINGS,
                0,
                0,
                &[setting(3, 1), setting(2, 7)].concat(),
            ),
            conn(ProtocolError, V::EnablePush),
        ),
        (
            "§6.6 PUSH_PROMISE on stream 0",
            raw(kind::PUSH_PROMISE, 4, 0, &[0, 0, 0, 2]),
            conn(ProtocolError, V::StreamZero),
        ),
        (
            "§6.7 PING on a stream",
            raw(kind::PING, 0, 1, &[0; 8]),
            conn(ProtocolError, V::StreamNonZero),
        ),
        (
            "§6.7 PING of 7 octets",
            raw(kind::PING, 0, 0, &[0; 7]),
            conn(FrameSizeError, V::BadLength),
        ),
        (
            "§6.7 PING of 9 octets",
            raw(kind::PING, 0, 0, &[0; 9]),
            conn(FrameSizeError, V::BadLength),
        ),
        (
            "§6.8 GOAWAY on a stream",
            raw(kind::GOAWAY, 0, 1, &[0; 8]),
            conn(ProtocolError, V::StreamNonZero),
        ),
        (
            "§6.8 GOAWAY of 7 octets",
            raw(kind::GOAWAY, 0, 0, &[0; 7]),
            conn(FrameSizeError, V::BadLength),
        ),
        (
            "§6.9 WINDOW_UPDATE of 3 octets",
            raw(kind::WINDOW_UPDATE, 0, 0, &[0, 0, 1]),
            conn(FrameSizeError, V::BadLength),
        ),
        (
            "§6.9 WINDOW_UPDATE of 5 octets",
            raw(kind::WINDOW_UPDATE, 0, 1, &[0, 0, 0, 0, 1]),
            conn(FrameSizeError, V::BadLength),
        ),
        (
            "§6.9 connection increment 0",
            raw(kind::WINDOW_UPDATE, 0, 0, &[0; 4]),
            conn(ProtocolError, V::ZeroIncrement),
        ),
        (
            "§6.9 stream increment 0",
            raw(kind::WINDOW_UPDATE, 0, 9, &[0; 4]),
            stream(ProtocolError, 9, V::ZeroIncrement, 13),
        ),
        (
            "§6.9 increment 0 under the reserved bit",
            raw(kind::WINDOW_UPDATE, 0, 9, &[0x80, 0, 0, 0]),
            stream(ProtocolError, 9, V::ZeroIncrement, 13),
        ),
        (
            "§6.10 CONTINUATION on stream 0",
            raw(kind::CONTINUATION, 4, 0, b"\x82"),
            conn(ProtocolError, V::StreamZero),
        ),
    ];
    for (name, bytes, want) in cases {
        assert_eq!(one(&bytes, m), Err(want), "{name}");
        assert_eq!(want.is_connection_error(), want.stream == 0, "{name}");
    }
}

#[test]
fn well_formed_frames_decode() {
    let m = DEFAULT_MAX_FRAME_SIZE;
    let prio = |exclusive, dependency, weight| Priority {
        exclusive,
        dependency,
        weight,
    };
    let cases: Vec<(&str, Vec<u8>, Frame<'_>)> = vec![
        (
            "§4.2 a frame of exactly MAX_FRAME_SIZE",
            raw(kind::DATA, 0, 1, &[7; 16_384]),
            Frame::Data {
                stream: 1,
                end_stream: false,
                data: &[7; 16_384],
                padding: None,
            },
        ),
        (
            "§4.1 the reserved bit is ignored",
            raw(kind::DATA, 1, 0x8000_0001, b"ab"),
            Frame::Data {
                stream: 1,
                end_stream: true,
                data: b"ab",
                padding: None,
            },
        ),
        (
            "§4.1 undefined flags are ignored",
            raw(kind::DATA, 0xf6, 1, b"ab"),
            Frame::Data {
                stream: 1,
                end_stream: false,
                data: b"ab",
                padding: None,
            },
        ),
        (
            "§6.1 DATA padded to an empty body",
            raw(kind::DATA, 8, 1, &[2, 0, 0]),
            Frame::Data {
                stream: 1,
                end_stream: false,
                data: b"",
                padding: Some(2),
            },
        ),
        (
            "§6.1 DATA with padding",
            raw(kind::DATA, 9, 3, &[1, b'h', b'i', 0]),
            Frame::Data {
                stream: 3,
                end_stream: true,
                data: b"hi",
                padding: Some(1),
            },
        ),
        (
            "§6.1 empty DATA",
            raw(kind::DATA, 0, 1, &[]),
            Frame::Data {
                stream: 1,
                end_stream: false,
                data: b"",
                padding: None,
            },
        ),
        (
            "§6.2 HEADERS",
            raw(kind::HEADERS, 5, 1, b"\x82\x84"),
            Frame::Headers {
                stream: 1,
                end_stream: true,
                end_headers: true,
                priority: None,
                padding: None,
                block: b"\x82\x84",
            },
        ),
        (
            "§6.2 HEADERS padded with priority",
            raw(kind::HEADERS, 0x2c, 1, &[1, 0x80, 0, 0, 3, 200, 0x82, 0]),
            Frame::Headers {
                stream: 1,
                end_stream: false,
                end_headers: true,
                priority: Some(prio(true, 3, 200)),
                padding: Some(1),
                block: b"\x82",
            },
        ),
        (
            "§6.2 HEADERS padding leaves an empty fragment",
            raw(kind::HEADERS, 0x28, 1, &[1, 0, 0, 0, 0, 15, 0]),
            Frame::Headers {
                stream: 1,
                end_stream: false,
                end_headers: false,
                priority: Some(prio(false, 0, 15)),
                padding: Some(1),
                block: b"",
            },
        ),
        (
            "§6.3 PRIORITY",
            raw(kind::PRIORITY, 0, 5, &[0, 0, 0, 3, 0]),
            Frame::Priority {
                stream: 5,
                priority: prio(false, 3, 0),
            },
        ),
        (
            "§6.4 RST_STREAM with an unknown code",
            raw(kind::RST_STREAM, 0, 1, &[0, 0, 1, 0]),
            Frame::RstStream {
                stream: 1,
                code: 256,
            },
        ),
        (
            "§6.5 SETTINGS ACK",
            raw(kind::SETTINGS, 1, 0, &[]),
            Frame::Settings {
                ack: true,
                settings: Settings { raw: &[] },
            },
        ),
        (
            "§6.7 PING ACK",
            raw(kind::PING, 1, 0, b"12345678"),
            Frame::Ping {
                ack: true,
                data: *b"12345678",
            },
        ),
        (
            "§6.8 GOAWAY with debug data",
            raw(kind::GOAWAY, 0, 0, b"\x80\0\0\x05\0\0\0\x0bcalm"),
            Frame::GoAway {
                last_stream: 5,
                code: 0xb,
                debug: b"calm",
            },
        ),
        (
            "§6.9 connection WINDOW_UPDATE",
            raw(kind::WINDOW_UPDATE, 0, 0, &[0x7f, 0xff, 0xff, 0xff]),
            Frame::WindowUpdate {
                stream: 0,
                increment: 0x7fff_ffff,
            },
        ),
        (
            "§6.9 stream WINDOW_UPDATE, reserved bit set",
            raw(kind::WINDOW_UPDATE, 0, 1, &[0x80, 0, 0, 1]),
            Frame::WindowUpdate {
                stream: 1,
                increment: 1,
            },
        ),
        (
            "§6.6 PUSH_PROMISE stays opaque",
            raw(kind::PUSH_PROMISE, 0xc, 1, &[9, 9]),
            Frame::PushPromise {
                stream: 1,
                flags: 0xc,
                payload: &[9, 9],
            },
        ),
        (
            "§6.10 CONTINUATION",
            raw(kind::CONTINUATION, 4, 1, b"\x82"),
            Frame::Continuation {
                stream: 1,
                end_headers: true,
                block: b"\x82",
            },
        ),
        (
            "§4.1 unknown type on stream 0",
            raw(0xa, 0xff, 0, b"?"),
            Frame::Unknown {
                kind: 0xa,
                flags: 0xff,
                stream: 0,
                payload: b"?",
            },
        ),
        (
            "§5.5 unknown type on a stream",
            raw(0xfa, 0, 3, &[]),
            Frame::Unknown {
                kind: 0xfa,
                flags: 0,
                stream: 3,
                payload: &[],
            },
        ),
    ];
    for (name, bytes, want) in &cases {
        assert_eq!(one(bytes, m), Ok(*want), "{name}");
    }
}

#[test]
fn settings_values_ranges_and_unknown_ids() {
    let limits: [(u16, u32, Option<Setting>); 10] = [
        (1, 0, Some(Setting::HeaderTableSize(0))),
        (2, 0, Some(Setting::EnablePush(false))),
        (2, 1, Some(Setting::EnablePush(true))),
        (3, u32::MAX, Some(Setting::MaxConcurrentStreams(u32::MAX))),
        (
            4,
            0x7fff_ffff,
            Some(Setting::InitialWindowSize(0x7fff_ffff)),
        ),
        (5, 16_384, Some(Setting::MaxFrameSize(16_384))),
        (5, 16_777_215, Some(Setting::MaxFrameSize(16_777_215))),
        (6, 1, Some(Setting::MaxHeaderListSize(1))),
        (0, 5, None),      // §6.5.2: unknown ids are ignored,
        (0xff02, 2, None), // whatever their value.
    ];
    for (id, value, want) in limits {
        let bytes = raw(kind::SETTINGS, 0, 0, &setting(id, value));
        let Ok(Frame::Settings {
            ack: false,
            settings,
        }) = one(&bytes, DEFAULT_MAX_FRAME_SIZE)
        else {
            panic!("id {id} value {value}");
        };
        assert_eq!(settings.iter().next(), want, "id {id} value {value}");
    }
    let all = [
        Setting::MaxConcurrentStreams(100),
        Setting::InitialWindowSize(65_535),
        Setting::EnablePush(false),
    ];
    let mut out = Vec::new();
    encode_settings(&mut out, false, &all);
    let Ok(Frame::Settings { settings, .. }) = one(&out, DEFAULT_MAX_FRAME_SIZE) else {
        panic!("{out:?}");
    };
    assert_eq!(settings.into_iter().collect::<Vec<_>>(), all);
}

#[test]
fn partial_frames_and_early_size_errors() {
    let bytes = raw(kind::PING, 0, 0, b"12345678");
    for n in 0..bytes.len() {
        assert_eq!(
            decode(&bytes[..n], DEFAULT_MAX_FRAME_SIZE),
            Ok(Status::Partial),
            "{n}"
        );
    }
    // §4.2: the header alone of a frame over the limit is already the error.
    let over = raw(kind::DATA, 0, 1, &[0; 20_000]);
    assert_eq!(
        decode(&over[..HEADER_LEN], DEFAULT_MAX_FRAME_SIZE),
        Err(conn(FrameSizeError, V::TooLarge))
    );
    assert!(
        one(&over, 20_000).is_ok(),
        "a larger advertised limit admits it"
    );
    assert_eq!(&PREFACE[..], b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    assert_eq!(PREFACE.len(), 24);
}

#[test]
fn a_stream_error_skips_its_frame_and_decoding_goes_on() {
    // §5.4.2: after RST_STREAM the connection carries on with the next frame.
    let mut wire = raw(kind::PRIORITY, 0, 3, &[0, 0, 0, 3, 0]);
    wire.extend(raw(kind::WINDOW_UPDATE, 0, 5, &[0; 4]));
    wire.extend(raw(kind::PING, 0, 0, b"abcdefgh"));
    let mut pos = 0;
    for want in [
        Err(stream(ProtocolError, 3, V::SelfDependency, 14)),
        Err(stream(ProtocolError, 5, V::ZeroIncrement, 13)),
    ] {
        let got = decode(&wire[pos..], DEFAULT_MAX_FRAME_SIZE).map(|_| ());
        assert_eq!(got, want);
        pos += want.unwrap_err().skip;
    }
    let ping = Frame::Ping {
        ack: false,
        data: *b"abcdefgh",
    };
    assert_eq!(one(&wire[pos..], DEFAULT_MAX_FRAME_SIZE), Ok(ping));
}

#[test]
fn reserved_bits_and_unused_flags_are_sent_as_zero() {
    // §4.1: the R bit and undefined flags MUST be left unset when sending.
    let mut out = Vec::new();
    let window = Frame::WindowUpdate {
        stream: 0x8000_0001,
        increment: 0x8000_0002,
    };
    encode(&window, &mut out);
    assert_eq!(
        out,
        [0, 0, 4, kind::WINDOW_UPDATE, 0, 0, 0, 0, 1, 0, 0, 0, 2]
    );
    out.clear();
    let goaway = Frame::GoAway {
        last_stream: 0xffff_ffff,
        code: 0,
        debug: b"",
    };
    encode(&goaway, &mut out);
    assert_eq!(&out[4..13], [0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff]);
}

#[test]
fn error_codes_have_the_rfc_values() {
    for code in 0..=0xd {
        assert_eq!(ErrorCode::from_u32(code).map(ErrorCode::code), Some(code));
    }
    assert_eq!(ErrorCode::from_u32(0xe), None);
    assert_eq!(ErrorCode::EnhanceYourCalm.code(), 0xb);
    assert_eq!(ErrorCode::Http11Required.code(), 0xd);
}

#[test]
fn flow_len_counts_padding() {
    let d = Frame::Data {
        stream: 1,
        end_stream: false,
        data: b"abc",
        padding: Some(4),
    };
    assert_eq!(d.flow_len(), 8);
}

/// An owned frame for proptest to generate; `frame()` borrows it.
#[derive(Debug, Clone)]
enum Owned {
    Data(u32, bool, Vec<u8>, Option<u8>),
    Headers(u32, u8, Option<(bool, u32, u8)>, Option<u8>, Vec<u8>),
    Priority(u32, bool, u32, u8),
    Rst(u32, u32),
    Settings(bool, Vec<u8>),
    Push(u32, u8, Vec<u8>),
    Ping(bool, [u8; 8]),
    GoAway(u32, u32, Vec<u8>),
    Window(u32, u32),
    Continuation(u32, bool, Vec<u8>),
    Unknown(u8, u8, u32, Vec<u8>),
}

impl Owned {
    fn frame(&self) -> Frame<'_> {
        let prio = |(exclusive, dependency, weight)| Priority {
            exclusive,
            dependency,
            weight,
        };
        match self {
            Owned::Data(s, e, d, p) => Frame::Data {
                stream: *s,
                end_stream: *e,
                data: d,
                padding: *p,
            },
            Owned::Headers(s, f, pr, p, b) => Frame::Headers {
                stream: *s,
                end_stream: f & 1 != 0,
                end_headers: f & 2 != 0,
                priority: pr.map(prio),
                padding: *p,
                block: b,
            },
            Owned::Priority(s, e, d, w) => Frame::Priority {
                stream: *s,
                priority: prio((*e, *d, *w)),
            },
            Owned::Rst(s, c) => Frame::RstStream {
                stream: *s,
                code: *c,
            },
            Owned::Settings(ack, raw) => Frame::Settings {
                ack: *ack,
                settings: Settings { raw },
            },
            Owned::Push(s, f, p) => Frame::PushPromise {
                stream: *s,
                flags: *f,
                payload: p,
            },
            Owned::Ping(ack, d) => Frame::Ping {
                ack: *ack,
                data: *d,
            },
            Owned::GoAway(l, c, d) => Frame::GoAway {
                last_stream: *l,
                code: *c,
                debug: d,
            },
            Owned::Window(s, i) => Frame::WindowUpdate {
                stream: *s,
                increment: *i,
            },
            Owned::Continuation(s, e, b) => Frame::Continuation {
                stream: *s,
                end_headers: *e,
                block: b,
            },
            Owned::Unknown(k, f, s, p) => Frame::Unknown {
                kind: *k,
                flags: *f,
                stream: *s,
                payload: p,
            },
        }
    }
}

fn valid_setting() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        (Just(1u16), any::<u32>()),
        (Just(2u16), 0u32..=1),
        (Just(3u16), any::<u32>()),
        (Just(4u16), 0u32..=0x7fff_ffff),
        (Just(5u16), 16_384u32..=16_777_215),
        (Just(6u16), any::<u32>()),
        (7u16.., any::<u32>()),
    ]
    .prop_map(|(id, v)| setting(id, v))
}

fn owned() -> impl Strategy<Value = Owned> {
    let id = 1u32..=0x7fff_ffff;
    let bytes = || proptest::collection::vec(any::<u8>(), 0..64);
    let dep = |s: u32| {
        (
            any::<bool>(),
            (0u32..=0x7fff_ffff).prop_filter("self", move |d| *d != s),
            any::<u8>(),
        )
    };
    prop_oneof![
        (id.clone(), any::<bool>(), bytes(), any::<Option<u8>>())
            .prop_map(|(s, e, d, p)| Owned::Data(s, e, d, p)),
        id.clone()
            .prop_flat_map(move |s| (
                Just(s),
                any::<u8>(),
                proptest::option::of(dep(s)),
                any::<Option<u8>>(),
                bytes()
            ))
            .prop_map(|(s, f, pr, p, b)| Owned::Headers(s, f, pr, p, b)),
        id.clone()
            .prop_flat_map(move |s| (Just(s), dep(s)))
            .prop_map(|(s, (e, d, w))| Owned::Priority(s, e, d, w)),
        (id.clone(), any::<u32>()).prop_map(|(s, c)| Owned::Rst(s, c)),
        prop_oneof![
            Just(Owned::Settings(true, Vec::new())),
            proptest::collection::vec(valid_setting(), 0..8)
                .prop_map(|v| Owned::Settings(false, v.concat())),
        ],
        (id.clone(), any::<u8>(), bytes()).prop_map(|(s, f, p)| Owned::Push(s, f, p)),
        (any::<bool>(), any::<[u8; 8]>()).prop_map(|(a, d)| Owned::Ping(a, d)),
        (0u32..=0x7fff_ffff, any::<u32>(), bytes()).prop_map(|(l, c, d)| Owned::GoAway(l, c, d)),
        (0u32..=0x7fff_ffff, 1u32..=0x7fff_ffff).prop_map(|(s, i)| Owned::Window(s, i)),
        (id.clone(), any::<bool>(), bytes()).prop_map(|(s, e, b)| Owned::Continuation(s, e, b)),
        (10u8.., any::<u8>(), 0u32..=0x7fff_ffff, bytes())
            .prop_map(|(k, f, s, p)| Owned::Unknown(k, f, s, p)),
    ]
}

proptest! {
    #[test]
    fn encode_then_decode_round_trips(frames in proptest::collection::vec(owned(), 1..6)) {
        let mut wire = Vec::new();
        for f in &frames {
            encode(&f.frame(), &mut wire);
        }
        // The whole stream decodes to the frames written, and every prefix of each frame is
        // Partial: any split of the bytes gives the same frames.
        let mut pos = 0;
        for f in &frames {
            let max = DEFAULT_MAX_FRAME_SIZE;
            let Ok(Status::Complete((got, used))) = decode(&wire[pos..], max) else {
                panic!("{f:?}");
            };
            prop_assert_eq!(got, f.frame());
            for n in 0..used {
                prop_assert_eq!(decode(&wire[pos..pos + n], max), Ok(Status::Partial));
            }
            pos += used;
        }
        prop_assert_eq!(pos, wire.len());
        prop_assert_eq!(decode(&wire[pos..], DEFAULT_MAX_FRAME_SIZE), Ok(Status::Partial));
    }

    #[test]
    fn any_bytes_decode_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        crate::fuzzing::h2_frame_target(&bytes);
    }

    /// Well-framed headers over arbitrary payloads: every type's checks, valid or not, at
    /// every split (the fuzz body), with both frame size limits.
    #[test]
    fn framed_junk_decodes_the_same_at_any_split(
        seed in any::<[u8; 2]>(),
        frames in proptest::collection::vec(
            (0u8..12, any::<u8>(), 0u32..4, proptest::collection::vec(any::<u8>(), 0..24)),
            1..6,
        ),
    ) {
        let mut input = seed.to_vec();
        for (k, f, s, p) in &frames {
            input.extend(raw(*k, *f, *s, p));
        }
        crate::fuzzing::h2_frame_target(&input);
    }
}
