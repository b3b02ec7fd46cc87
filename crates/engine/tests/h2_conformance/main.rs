//! HTTP/2 conformance: the test sections of h2spec (<https://github.com/summerwind/h2spec>),
//! its "http2" (RFC 9113), "hpack" (RFC 7541) and "generic" groups, written from the RFCs'
//! text as raw frames over loopback against an in-process server. One `#[test]` per case; each
//! starts its own server, does h2spec's handshake, sends the case's frames and checks what the
//! RFC requires of the reply, then that the server still answers and released every fd.
//!
//! Names are h2spec's: `s<section>_c<case>` for its http2 group (whose sections are RFC 7540's
//! numbers, which h2spec kept), `g<section>_c<case>` for generic, `hpack_<section>_c<case>`;
//! a case number past h2spec's last in a section is a case added here. Comments cite RFC 9113.
//!
//! Where h2spec accepts a connection error for a stream error (RFC 9113 §5.4.1: an endpoint
//! MAY treat a stream error as a connection error), [`Expect::StreamOrConn`] says so; every
//! other case takes only the RFC's own reply.

#[path = "../common/mod.rs"]
mod common;

mod frames;
mod generic;
mod hpack;
mod http;
mod streams;

use common::{BOUND, TestServer};
use std::net::TcpStream;
use twelve_http::h2::{PREFACE, encode_settings};
use twelve_testkit::h2::{Client, Got};

/// Error codes (RFC 9113 §7).
pub const PROTOCOL_ERROR: u32 = 0x1;
pub const FLOW_CONTROL_ERROR: u32 = 0x3;
pub const STREAM_CLOSED: u32 = 0x5;
pub const FRAME_SIZE_ERROR: u32 = 0x6;
pub const REFUSED_STREAM: u32 = 0x7;
pub const CANCEL: u32 = 0x8;
pub const COMPRESSION_ERROR: u32 = 0x9;

/// The PING payload [`Expect::Pong`] sends and waits for.
const PONG: [u8; 8] = *b"h2spec!!";

/// What the server must do after a case's frames.
#[derive(Debug, Clone, Copy)]
pub enum Expect {
    /// A connection error (§5.4.1): GOAWAY with one of the codes, then the close.
    Conn(&'static [u32]),
    /// A stream error (§5.4.2): RST_STREAM on the stream with one of the codes, and the
    /// connection goes on (a PING is still answered).
    Stream(u32, &'static [u32]),
    /// A stream error, or the same code as a connection error (§5.4.1).
    StreamOrConn(u32, &'static [u32]),
    /// The frames are accepted or ignored: a PING sent after them is answered, with no
    /// GOAWAY or RST_STREAM before its ACK.
    Pong,
    /// A PING ACK with this payload (the case sent the PING), no error before it.
    Ack([u8; 8]),
    /// As [`Expect::Pong`], or the connection closes without an error code (after the peer's
    /// GOAWAY a server may close once no stream is open, §6.8).
    PongOrClose,
    /// A whole response on the stream with this status, no error on the way.
    Status(u32, u16),
    /// The next DATA frame on the stream carries exactly this many octets (flow control).
    Data(u32, usize),
    /// A SETTINGS frame with ACK.
    SettingsAck,
}

/// A frame as raw octets: `kind`, `flags`, `stream` (the R bit included), `payload`.
pub fn raw(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut b = len.to_be_bytes()[1..].to_vec();
    b.push(kind);
    b.push(flags);
    b.extend_from_slice(&stream.to_be_bytes());
    b.extend_from_slice(payload);
    b
}

/// Frame types and flags (§6).
pub mod kind {
    pub const DATA: u8 = 0x0;
    pub const HEADERS: u8 = 0x1;
    pub const PRIORITY: u8 = 0x2;
    pub const RST_STREAM: u8 = 0x3;
    pub const SETTINGS: u8 = 0x4;
    pub const PUSH_PROMISE: u8 = 0x5;
    pub const PING: u8 = 0x6;
    pub const GOAWAY: u8 = 0x7;
    pub const WINDOW_UPDATE: u8 = 0x8;
    pub const CONTINUATION: u8 = 0x9;
    pub const END_STREAM: u8 = 0x1;
    pub const ACK: u8 = 0x1;
    pub const END_HEADERS: u8 = 0x4;
    pub const PADDED: u8 = 0x8;
    pub const PRIORITY_FLAG: u8 = 0x20;
}

/// A SETTINGS frame with `(id, value)` pairs, unknown ids and out-of-range values included.
pub fn settings(pairs: &[(u16, u32)]) -> Vec<u8> {
    let mut p = Vec::new();
    for (id, v) in pairs {
        p.extend_from_slice(&id.to_be_bytes());
        p.extend_from_slice(&v.to_be_bytes());
    }
    raw(kind::SETTINGS, 0, 0, &p)
}

/// SETTINGS identifiers (§6.5.2).
pub const ENABLE_PUSH: u16 = 0x2;
pub const INITIAL_WINDOW_SIZE: u16 = 0x4;
pub const MAX_FRAME_SIZE: u16 = 0x5;

/// A WINDOW_UPDATE.
pub fn window_update(stream: u32, increment: u32) -> Vec<u8> {
    raw(kind::WINDOW_UPDATE, 0, stream, &increment.to_be_bytes())
}

/// A RST_STREAM.
pub fn rst(stream: u32, code: u32) -> Vec<u8> {
    raw(kind::RST_STREAM, 0, stream, &code.to_be_bytes())
}

/// A PRIORITY: `dependency` (E bit in its top bit) and the wire weight.
pub fn priority(stream: u32, dependency: u32, weight: u8) -> Vec<u8> {
    let mut p = dependency.to_be_bytes().to_vec();
    p.push(weight);
    raw(kind::PRIORITY, 0, stream, &p)
}

/// A PING.
pub fn ping(ack: bool, data: [u8; 8]) -> Vec<u8> {
    raw(kind::PING, if ack { kind::ACK } else { 0 }, 0, &data)
}

/// The field block of a request for `path` with `method` (literals, no indexing).
pub fn block(c: &mut Client, method: &str, path: &str) -> Vec<u8> {
    c.block(&twelve_testkit::h2::request(method, path))
}

/// `n` fields `x-dummyI: xxx…` of 4000 octets each, as h2spec's `DummyHeaders`.
pub fn dummy_block(c: &mut Client, n: usize) -> Vec<u8> {
    let v = "x".repeat(4000);
    let names: Vec<String> = (0..n).map(|i| format!("x-dummy{i}")).collect();
    let fields: Vec<(&str, &str)> = names.iter().map(|k| (k.as_str(), v.as_str())).collect();
    c.block(&fields)
}

/// HEADERS with a ready block; `flags` as on the wire.
pub fn headers(stream: u32, flags: u8, block: &[u8]) -> Vec<u8> {
    raw(kind::HEADERS, flags, stream, block)
}

/// A connection that went through h2spec's handshake: the client preface and an empty
/// SETTINGS, the server's SETTINGS acknowledged, and the server's ACK of ours read.
pub fn handshake(server: &TestServer) -> Client {
    let sock = TcpStream::connect(server.addr).expect("connect");
    sock.set_read_timeout(Some(BOUND)).unwrap();
    sock.set_nodelay(true).unwrap();
    let mut c = Client::raw(sock);
    c.preface(&[]);
    let (mut theirs, mut ours) = (false, false);
    while !(theirs && ours) {
        match c.next_frame() {
            Got::Settings(_) => {
                let mut ack = Vec::new();
                encode_settings(&mut ack, true, &[]);
                c.send(&ack);
                theirs = true;
            }
            Got::SettingsAck => ours = true,
            Got::WindowUpdate { stream: 0, .. } => {}
            other => panic!("handshake: {other:?}"),
        }
    }
    c
}

/// One case: a fresh server, the handshake, `act`, the check, and the server's health.
pub fn run(act: impl FnOnce(&mut Client), want: Expect) {
    let server = TestServer::start();
    let mut c = handshake(&server);
    act(&mut c);
    check(&mut c, want);
    drop(c);
    server.finish();
}

/// Reads the server's reply until `want` is met; panics on anything the RFC rules out.
pub fn check(c: &mut Client, want: Expect) {
    match want {
        Expect::Conn(codes) => conn_error(c, codes),
        Expect::Stream(stream, codes) => {
            stream_error(c, stream, codes, false);
        }
        Expect::StreamOrConn(stream, codes) => {
            stream_error(c, stream, codes, true);
        }
        Expect::Pong => pong(c, false),
        Expect::Ack(data) => ack(c, data, false),
        Expect::PongOrClose => pong(c, true),
        Expect::Status(stream, status) => {
            let r = c
                .response(stream)
                .unwrap_or_else(|g| panic!("stream {stream}: {g:?}"));
            assert_eq!(r.status, status, "stream {stream}: {r:?}");
        }
        Expect::Data(stream, len) => loop {
            match c.next_frame() {
                Got::Data {
                    stream: s, data, ..
                } if s == stream => {
                    assert_eq!(data.len(), len, "DATA on stream {stream}");
                    return;
                }
                g @ (Got::Reset { .. } | Got::GoAway { .. } | Got::Closed) => {
                    panic!("waiting for DATA on {stream}: {g:?}")
                }
                _ => {}
            }
        },
        Expect::SettingsAck => loop {
            match c.next_frame() {
                Got::SettingsAck => return,
                g @ (Got::Reset { .. } | Got::GoAway { .. } | Got::Closed) => {
                    panic!("waiting for the SETTINGS ACK: {g:?}")
                }
                _ => {}
            }
        },
    }
}

/// GOAWAY with one of `codes`, then EOF (the server sends nothing after GOAWAY).
fn conn_error(c: &mut Client, codes: &[u32]) {
    loop {
        match c.next_frame() {
            Got::GoAway { code, .. } => {
                assert!(codes.contains(&code), "GOAWAY {code:#x}, want {codes:x?}");
                assert_eq!(c.next_frame(), Got::Closed, "the close after GOAWAY");
                return;
            }
            Got::Closed => panic!("closed without GOAWAY, want {codes:x?}"),
            g @ Got::Reset { .. } => panic!("{g:?} where a connection error is due"),
            _ => {}
        }
    }
}

fn stream_error(c: &mut Client, stream: u32, codes: &[u32], or_conn: bool) {
    loop {
        match c.next_frame() {
            Got::Reset { stream: s, code } if s == stream => {
                assert!(
                    codes.contains(&code),
                    "RST_STREAM {code:#x}, want {codes:x?}"
                );
                // Only the stream ended: the connection still answers.
                return pong(c, false);
            }
            Got::GoAway { code, .. } if or_conn => {
                assert!(codes.contains(&code), "GOAWAY {code:#x}, want {codes:x?}");
                assert_eq!(c.next_frame(), Got::Closed, "the close after GOAWAY");
                return;
            }
            g @ (Got::Reset { .. } | Got::GoAway { .. } | Got::Closed) => {
                panic!("{g:?}, want RST_STREAM on {stream} with {codes:x?}")
            }
            _ => {}
        }
    }
}

fn pong(c: &mut Client, or_close: bool) {
    c.send(&ping(false, PONG));
    ack(c, PONG, or_close)
}

fn ack(c: &mut Client, want: [u8; 8], or_close: bool) {
    loop {
        match c.next_frame() {
            Got::Ping { ack: true, data } => {
                assert_eq!(data, want, "a PING ACK for a PING never sent");
                return;
            }
            Got::Ping { ack: false, .. } => {}
            Got::Closed if or_close => return,
            Got::GoAway { code: 0, .. } if or_close => {}
            g @ (Got::Reset { .. } | Got::GoAway { .. } | Got::Closed) => {
                panic!("{g:?} where the frames were to be accepted")
            }
            _ => {}
        }
    }
}

/// One `#[test]` per case: `name: |c| { frames } => Expect;`.
#[macro_export]
macro_rules! cases {
    ($($(#[$m:meta])* $name:ident: $act:expr => $want:expr;)*) => {
        $(
            $(#[$m])*
            #[test]
            fn $name() {
                $crate::run($act, $want)
            }
        )*
    };
}

/// A server whose listener speaks HTTP/2 only (h2c with prior knowledge, as h2spec's target):
/// on a listener that also speaks HTTP/1.1, bytes that are not the preface are HTTP/1.1.
fn h2c_only() -> TestServer {
    let mut c = common::test_config();
    c.h2c_listen = vec![true];
    TestServer::start_with(c)
}

/// [`TestServer::finish`] for an h2c-only server: a fresh connection's GET is answered, then
/// every connection fd is released.
fn finish_h2c(server: TestServer) {
    let mut c = handshake(&server);
    c.get(1, "/");
    check(&mut c, Expect::Status(1, 200));
    drop(c);
    server.wait_for("every connection to close", |m| m.open_conns == 0);
    assert_eq!(server.open_conn_fds(), 0);
}

/// §3.4 (h2spec 3.5 #1): the server connection preface is a SETTINGS frame, the first frame
/// the server sends.
#[test]
fn s3_5_c1_the_server_preface_is_settings_first() {
    let server = h2c_only();
    let sock = TcpStream::connect(server.addr).unwrap();
    sock.set_read_timeout(Some(BOUND)).unwrap();
    let mut c = Client::raw(sock);
    c.preface(&[twelve_http::h2::Setting::InitialWindowSize(65_535)]);
    assert!(matches!(c.next_frame(), Got::Settings(_)));
    drop(c);
    finish_h2c(server);
}

/// §3.4 (h2spec 3.5 #2): an invalid preface is a connection error PROTOCOL_ERROR.
#[test]
fn s3_5_c2_an_invalid_preface_ends_the_connection() {
    let server = h2c_only();
    let sock = TcpStream::connect(server.addr).unwrap();
    sock.set_read_timeout(Some(BOUND)).unwrap();
    let mut c = Client::raw(sock);
    c.send(b"INVALID CONNECTION PREFACE\r\n\r\n");
    conn_error(&mut c, &[PROTOCOL_ERROR]);
    drop(c);
    finish_h2c(server);
}

/// The client preface written one octet at a time still starts the connection (§3.4), on a
/// listener that also speaks HTTP/1.1 (regression: the first line, "PRI * HTTP/2.0", was
/// taken for an HTTP/1.1 request).
#[test]
fn s3_5_c3_a_preface_written_octet_by_octet_is_accepted() {
    let server = TestServer::start();
    let sock = TcpStream::connect(server.addr).unwrap();
    sock.set_read_timeout(Some(BOUND)).unwrap();
    let mut c = Client::raw(sock);
    let mut all = PREFACE.to_vec();
    encode_settings(&mut all, false, &[]);
    for (i, b) in all.iter().enumerate() {
        c.send(std::slice::from_ref(b));
        // Each octet is read on its own before the next is sent.
        server.wait_for("the octet read", |m| m.bytes_in > i as u64);
    }
    c.get(1, "/");
    check(&mut c, Expect::Status(1, 200));
    drop(c);
    server.finish();
}
