//! HTTP/2 end to end over loopback, in raw frames (RFC 9113): h2c with prior knowledge on a
//! plain listener and on an h2c-only one, the same routes and static files as HTTP/1.1,
//! bodies both ways, flow control, hostile peers counted by kind with the server unharmed,
//! and the graceful close. On the suite's backend (epoll, or io_uring with
//! `TWELVE_TEST_IO=uring`).

mod common;

use common::{BIG_LEN, BOUND, TestServer, test_config};
use std::io::Write;
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::OnceLock;
use twelve_engine::Config;
use twelve_http::h2::{ErrorCode, Frame, Setting};
use twelve_testkit::h2::{Client, Got, request};

fn h2c_only() -> Config {
    let mut c = test_config();
    c.h2c_listen = vec![true];
    c
}

/// A server whose static root holds only `big.bin`, outside the shared root whose open files
/// `TestServer::finish` counts: the tests that hold it open for a while run beside the others.
fn big_file_server() -> TestServer {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    let root = ROOT.get_or_init(|| {
        let dir = twelve_testkit::scratch_dir("twelve-h2-big");
        let piece: Vec<u8> = (0..1024 * 1024).map(|i| (i % 251) as u8).collect();
        let mut f = std::fs::File::create(dir.join("big.bin")).unwrap();
        for _ in 0..BIG_LEN / piece.len() {
            f.write_all(&piece).unwrap();
        }
        dir
    });
    let mut c = test_config();
    c.root = Some(root.clone());
    TestServer::start_with(c)
}

fn client(server: &TestServer) -> Client {
    Client::connect(server.addr, BOUND)
}

#[test]
fn a_plain_listener_takes_http11_and_h2c_with_prior_knowledge() {
    let server = TestServer::start();
    let mut c = client(&server);
    c.get(1, "/x");
    let r = c.response(1).unwrap();
    assert_eq!((r.status, r.body.as_slice()), (200, &b"x"[..]));
    assert_eq!(r.field("server"), Some("twelve"));
    assert_eq!(r.field("content-length"), Some("1"));
    assert!(r.field("date").is_some());
    // HTTP/1.1 on the same listener is unchanged.
    let mut h1 = server.connect();
    h1.send(b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(h1.response().status, 200);
    let m = server.metrics();
    assert_eq!((m.h2_conns, m.h2_requests), (1, 1));
    server.finish();
}

#[test]
fn an_h2c_listener_refuses_http11_with_goaway() {
    let server = TestServer::start_with(h2c_only());
    let mut sock = TcpStream::connect(server.addr).unwrap();
    sock.set_read_timeout(Some(BOUND)).unwrap();
    sock.write_all(b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    let mut c = Client::raw(sock);
    // The server's preface comes first, then the GOAWAY; never an HTTP/1.1 response.
    let mut goaway = None;
    loop {
        match c.next_frame() {
            Got::Settings(_) | Got::WindowUpdate { .. } => {}
            Got::GoAway { code, .. } => goaway = Some(code),
            Got::Closed => break,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(goaway, Some(ErrorCode::ProtocolError.code()));
    let m = server.wait_for("the preface error", |m| !m.h2_faults.is_empty());
    assert_eq!(m.h2_faults, [("preface", 1)]);
    // And an HTTP/2 client is served there.
    let mut c = client(&server);
    c.get(1, "/");
    assert_eq!(c.response(1).unwrap().body, b"root");
    drop(server);
}

#[test]
fn many_streams_in_one_write_are_each_answered() {
    let server = TestServer::start();
    let mut c = client(&server);
    let ids: Vec<u32> = (0..100).map(|i| 2 * i + 1).collect();
    c.batch();
    for id in &ids {
        c.get(*id, if id % 3 == 0 { "/x" } else { "/" });
    }
    c.flush();
    for id in ids {
        let r = c.response(id).unwrap();
        let want: &[u8] = if id % 3 == 0 { b"x" } else { b"root" };
        assert_eq!(r.body, want, "stream {id}");
    }
    server.finish();
}

#[test]
fn a_request_body_arrives_across_data_frames() {
    let server = TestServer::start();
    let mut c = client(&server);
    let body: Vec<u8> = (0..40_000u32).map(|i| (i % 251) as u8).collect();
    let len = body.len().to_string();
    let mut fields = request("POST", "/echo");
    fields.push(("content-length", &len));
    c.headers(1, &fields, false);
    for chunk in body.chunks(10_000) {
        c.data(1, chunk, false);
    }
    c.data(1, b"", true);
    let r = c.response(1).unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.body, body);
    server.finish();
}

#[test]
fn a_static_file_follows_the_window_the_client_opens() {
    let server = big_file_server();
    let sock = TcpStream::connect(server.addr).unwrap();
    sock.set_read_timeout(Some(BOUND)).unwrap();
    sock.set_nodelay(true).unwrap();
    let mut c = Client::raw(sock);
    c.preface(&[Setting::InitialWindowSize(16_384)]);
    c.get(1, "/big.bin");
    let mut got = 0usize;
    let mut status = 0;
    loop {
        match c.next_frame() {
            Got::Headers {
                stream: 1, fields, ..
            } => {
                status = fields[0].1.parse().unwrap();
                let len = fields.iter().find(|f| f.0 == "content-length").unwrap();
                assert_eq!(len.1, BIG_LEN.to_string());
            }
            Got::Data {
                stream: 1,
                end_stream,
                data,
            } => {
                got += data.len();
                if end_stream {
                    break;
                }
                // Open both windows by what was read, as a client reading the body does.
                let n = data.len() as u32;
                if n > 0 {
                    c.batch();
                    c.frame(Frame::WindowUpdate {
                        stream: 1,
                        increment: n,
                    });
                    c.frame(Frame::WindowUpdate {
                        stream: 0,
                        increment: n,
                    });
                    c.flush();
                }
            }
            Got::Closed => panic!("closed after {got} bytes: {:?}", server.metrics()),
            _ => {}
        }
    }
    assert_eq!((status, got), (200, BIG_LEN));
    server.finish();
}

#[test]
fn ranges_and_conditional_requests_work_as_over_http11() {
    let server = TestServer::start();
    let mut c = client(&server);
    let mut fields = request("GET", "/a.txt");
    fields.push(("range", "bytes=0-4"));
    c.headers(1, &fields, true);
    let r = c.response(1).unwrap();
    assert_eq!((r.status, r.body.as_slice()), (206, &b"hello"[..]));
    assert_eq!(r.field("content-range"), Some("bytes 0-4/11"));
    let etag = r.field("etag").unwrap().to_owned();
    let mut fields = request("GET", "/a.txt");
    fields.push(("if-none-match", &etag));
    c.headers(3, &fields, true);
    let r = c.response(3).unwrap();
    assert_eq!((r.status, r.body.len()), (304, 0));
    server.finish();
}

#[test]
fn a_peer_that_never_opens_its_window_is_closed_by_the_send_timeout() {
    let server = big_file_server();
    let sock = TcpStream::connect(server.addr).unwrap();
    sock.set_read_timeout(Some(BOUND * 2)).unwrap();
    let mut c = Client::raw(sock);
    c.preface(&[Setting::InitialWindowSize(0)]);
    c.get(1, "/big.bin");
    // Headers come; no data can; the connection is closed when the send timeout passes.
    loop {
        match c.next_frame() {
            Got::Data { data, .. } => assert!(data.is_empty(), "data past a zero window"),
            Got::Closed => break,
            _ => {}
        }
    }
    server.wait_for("the send timeout and the close", |m| {
        m.timeouts[common::SEND_TIMEOUT] == 1 && m.open_conns == 0
    });
    server.finish();
}

/// A hostile peer's connection error: GOAWAY with the RFC's code, counted by kind, and the
/// server still answers another connection.
#[test]
fn hostile_peers_get_goaway_and_cost_no_one_else() {
    type Act = fn(&mut Client);
    let cases: &[(&str, Act, u32, &str)] = &[
        ("even stream", |c| c.get(2, "/"), 0x1, "even_stream"),
        (
            "stream ids backwards",
            |c| {
                c.get(5, "/");
                c.get(3, "/");
            },
            0x1,
            "stream_backwards",
        ),
        (
            "DATA on an idle stream",
            |c| c.data(9, b"x", true),
            0x1,
            "idle_stream",
        ),
        (
            "a frame over SETTINGS_MAX_FRAME_SIZE",
            |c| c.data(1, &vec![0; 16_385], true),
            0x6,
            "frame_too_large",
        ),
        (
            "a CONTINUATION flood",
            |c| {
                let block = c.block(&request("GET", "/"));
                c.frame(Frame::Headers {
                    stream: 1,
                    end_stream: true,
                    end_headers: false,
                    priority: None,
                    padding: None,
                    block: &block,
                });
                let junk = vec![0u8; 16 * 1024];
                for _ in 0..64 {
                    c.frame(Frame::Continuation {
                        stream: 1,
                        end_headers: false,
                        block: &junk,
                    });
                }
            },
            0xb,
            "header_block_too_large",
        ),
        (
            "a PING flood",
            |c| {
                let mut b = Vec::new();
                for _ in 0..5_000 {
                    twelve_http::h2::encode(
                        &Frame::Ping {
                            ack: false,
                            data: [0; 8],
                        },
                        &mut b,
                    );
                }
                c.send(&b);
            },
            0xb,
            "control_flood",
        ),
        (
            "rapid reset",
            |c| {
                c.batch();
                for i in 0..1_000u32 {
                    let id = 2 * i + 1;
                    c.get(id, "/");
                    c.frame(Frame::RstStream {
                        stream: id,
                        code: 0x8,
                    });
                }
                c.flush();
            },
            0xb,
            "rapid_reset",
        ),
        (
            "a SETTINGS flood",
            |c| {
                let mut b = Vec::new();
                for _ in 0..5_000 {
                    twelve_http::h2::encode_settings(&mut b, false, &[]);
                }
                c.send(&b);
            },
            0xb,
            "control_flood",
        ),
        (
            "an empty DATA flood",
            |c| {
                c.batch();
                c.headers(1, &request("POST", "/echo"), false);
                for _ in 0..5_000 {
                    c.data(1, b"", false);
                }
                c.flush();
            },
            0xb,
            "control_flood",
        ),
        (
            "an HPACK table size update above the setting",
            |c| {
                // 001 + 5-bit prefix integer 8192 (RFC 7541 §6.3, §5.1): above our 4096.
                let mut block = vec![0x3f, 0xe1, 0x3f];
                block.extend_from_slice(&c.block(&request("GET", "/")));
                c.frame(Frame::Headers {
                    stream: 1,
                    end_stream: true,
                    end_headers: true,
                    priority: None,
                    padding: None,
                    block: &block,
                })
            },
            0x9,
            "hpack",
        ),
        (
            "a bad HPACK index",
            |c| {
                c.frame(Frame::Headers {
                    stream: 1,
                    end_stream: true,
                    end_headers: true,
                    priority: None,
                    padding: None,
                    block: &[0xff, 0x7f],
                })
            },
            0x9,
            "hpack",
        ),
    ];
    for (name, act, code, kind) in cases {
        let server = TestServer::start();
        let mut c = client(&server);
        act(&mut c);
        let got = c.goaway();
        assert!(
            matches!(got, Got::GoAway { code: c, .. } if c == *code),
            "{name}: {got:?}"
        );
        let m = server.wait_for(name, |m| m.h2_faults.iter().any(|f| f.0 == *kind));
        assert_eq!(
            m.h2_faults.iter().find(|f| f.0 == *kind).unwrap().1,
            1,
            "{name}"
        );
        let mut other = client(&server);
        other.get(1, "/x");
        assert_eq!(other.response(1).unwrap().body, b"x", "{name}");
        server.finish();
    }
}

/// Malformed requests (RFC 9113 §8.1.1) are stream errors: RST_STREAM PROTOCOL_ERROR, and the
/// next stream on the same connection is answered.
#[test]
fn malformed_requests_reset_their_stream_only() {
    let cases: &[(&str, &[(&str, &str)])] = &[
        ("uppercase name", &[("X-Up", "1")]),
        ("connection-specific field", &[("connection", "close")]),
        ("transfer-encoding", &[("transfer-encoding", "chunked")]),
        (
            "a pseudo-header after a field",
            &[("accept", "*/*"), (":path", "/")],
        ),
        ("a duplicate pseudo-header", &[(":method", "GET")]),
        ("an unknown pseudo-header", &[(":status", "200")]),
    ];
    let server = TestServer::start();
    let mut c = client(&server);
    let mut id = 1;
    for (name, extra) in cases {
        let mut fields = request("GET", "/");
        fields.extend_from_slice(extra);
        c.headers(id, &fields, true);
        let got = c.response(id);
        assert!(
            matches!(got, Err(Got::Reset { code: 0x1, .. })),
            "{name}: {got:?}"
        );
        id += 2;
    }
    c.get(id, "/x");
    assert_eq!(c.response(id).unwrap().body, b"x");
    let m = server.metrics();
    assert_eq!(m.h2_faults, [("malformed", cases.len() as u64)]);
    server.finish();
}

/// The graceful close (RFC 9113 §6.8): GOAWAY with the largest id and a PING; a request sent
/// before the client saw it is answered; after the PING's ACK the last GOAWAY names it, and
/// the connection closes.
#[test]
fn a_shutdown_sends_goaway_and_answers_what_was_on_its_way() {
    let server = TestServer::start();
    let mut c = client(&server);
    c.get(1, "/x");
    assert_eq!(c.response(1).unwrap().status, 200);
    let handle = &server.handle;
    assert!(handle.shutdown());
    let ping = loop {
        match c.next_frame() {
            Got::GoAway { last_stream, code } => {
                assert_eq!((last_stream, code), ((1 << 31) - 1, 0));
            }
            Got::Ping { ack: false, data } => break data,
            Got::Closed => panic!("closed before the PING"),
            _ => {}
        }
    };
    c.get(3, "/x");
    c.frame(Frame::Ping {
        ack: true,
        data: ping,
    });
    assert_eq!(c.response(3).unwrap().body, b"x");
    assert_eq!(
        c.goaway(),
        Got::GoAway {
            last_stream: 3,
            code: 0
        }
    );
    assert_eq!(c.next_frame(), Got::Closed);
}

/// An HPACK bomb: a small block that inserts one large entry and refers to it hundreds of
/// times decodes to a list far over SETTINGS_MAX_HEADER_LIST_SIZE. The stream gets 431, the
/// decoder's table stays in step, and the next request on the connection is answered.
#[test]
fn an_hpack_bomb_gets_431_and_the_connection_goes_on() {
    let server = TestServer::start();
    let mut c = client(&server);
    let mut block = c.block(&request("GET", "/"));
    // Literal with incremental indexing, new name (RFC 7541 §6.2.1): x-bomb: 4000 × 'b'.
    block.extend_from_slice(&[0x40, 6]);
    block.extend_from_slice(b"x-bomb");
    block.extend_from_slice(&[0x7f, 0xa1, 0x1e]); // 127 + 3873 = 4000, no Huffman
    block.extend_from_slice(&[b'b'; 4000]);
    // Then the newest dynamic entry (index 62) 400 times: 1.6 MB of fields from 400 octets.
    block.extend(std::iter::repeat_n(0xbe, 400));
    c.frame(Frame::Headers {
        stream: 1,
        end_stream: true,
        end_headers: true,
        priority: None,
        padding: None,
        block: &block,
    });
    assert_eq!(c.response(1).unwrap().status, 431);
    c.get(3, "/x");
    assert_eq!(c.response(3).unwrap().body, b"x");
    server.finish();
}

#[test]
fn an_upload_over_the_body_limit_gets_413_and_the_connection_goes_on() {
    let server = TestServer::start();
    let mut c = client(&server);
    let big = (common::BODY_LIMIT + 1).to_string();
    let mut fields = request("POST", "/echo");
    fields.push(("content-length", &big));
    c.headers(1, &fields, false);
    let r = c.response(1).unwrap();
    assert_eq!(r.status, 413);
    c.get(3, "/x");
    assert_eq!(c.response(3).unwrap().body, b"x");
    server.finish();
}
