//! Tests of the TLS layer under `pump`, without sockets: a fake socket whose peer is a
//! client `Session`, with scripted short sends and EAGAIN.

use super::*;
use crate::backend::{Verdict, pump};
use crate::conn::tests::ctx;
use crate::conn::{Conn, Ctx};
use std::collections::VecDeque;
use twelve_tls::testing::Pki;
use twelve_tls::{ClientOptions, ClientTls, Failure, ServerTls};

/// The socket as the server sees it: bytes the client sent, bytes the server sent, and a
/// script of send results (when it runs out, a send takes everything).
#[derive(Default)]
struct Wire {
    to_server: VecDeque<Vec<u8>>,
    eof: bool,
    from_server: Vec<u8>,
    send: VecDeque<Result<usize, Errno>>,
    send_calls: usize,
    shut: bool,
}

struct WireIo<'a>(&'a mut Wire);

impl Io for WireIo<'_> {
    fn recv(&mut self, buf: &mut Vec<u8>) -> Result<usize, Errno> {
        match self.0.to_server.pop_front() {
            None if self.0.eof => Ok(0),
            None => Err(Errno::AGAIN),
            Some(bytes) => {
                let n = bytes.len().min(buf.capacity() - buf.len());
                buf.extend_from_slice(&bytes[..n]);
                if n < bytes.len() {
                    self.0.to_server.push_front(bytes[n..].to_vec());
                }
                Ok(n)
            }
        }
    }

    fn send(&mut self, bytes: &[u8]) -> Result<usize, Errno> {
        self.0.send_calls += 1;
        let n = match self.0.send.pop_front() {
            None => bytes.len(),
            Some(Err(e)) => return Err(e),
            Some(Ok(max)) => max.min(bytes.len()),
        };
        self.0.from_server.extend_from_slice(&bytes[..n]);
        Ok(n)
    }

    fn sendfile(&mut self, _: &File, _: u64, _: usize) -> Result<usize, Errno> {
        Err(Errno::INVAL)
    }

    fn shutdown_write(&mut self) -> Result<(), Errno> {
        self.0.shut = true;
        Ok(())
    }
}

/// A server session, the `Conn` above it, and a client session at the other end.
struct Rig {
    _pki: Pki,
    server: Session,
    client: Session,
    conn: Conn,
    ctx: Ctx,
    wire: Wire,
    scratch: Vec<u8>,
    metrics: crate::metrics::WorkerMetrics,
}

impl Rig {
    fn new(tag: &str) -> Self {
        let pki = Pki::new(tag);
        let tls = ServerTls::load(&pki.cert, &pki.key).unwrap();
        let client = ClientTls::new(&ClientOptions {
            cacert: Some(pki.ca_pem.clone()),
            ..ClientOptions::default()
        })
        .unwrap();
        Self {
            server: tls.session(),
            client: client.session(&ClientTls::server_name("localhost").unwrap()),
            _pki: pki,
            conn: Conn::new_tls(0),
            ctx: ctx(),
            wire: Wire::default(),
            scratch: Vec::new(),
            metrics: crate::metrics::WorkerMetrics::default(),
        }
    }

    /// The client's queued ciphertext onto the wire, then one server run.
    fn run(&mut self, readable: bool) -> Verdict {
        let out = self.client.outgoing().to_vec();
        self.client.sent(out.len());
        if !out.is_empty() {
            self.wire.to_server.push_back(out);
        }
        let mut io = TlsIo::new(
            &mut self.server,
            WireIo(&mut self.wire),
            &mut self.scratch,
            &self.metrics,
        );
        pump(&mut self.conn, &mut io, readable, 0, &mut self.ctx)
    }

    /// Takes the client's ClientHello off its queue, for a test to send (or not) itself.
    fn client_hello(&mut self) -> Vec<u8> {
        let hello = self.client.outgoing().to_vec();
        self.client.sent(hello.len());
        hello
    }

    /// What the server sent so far, to the client; returns the plaintext it decrypts.
    fn client_reads(&mut self) -> Result<Vec<u8>, Failure> {
        let bytes = std::mem::take(&mut self.wire.from_server);
        self.client.feed(&bytes)?;
        let mut plain = Vec::new();
        while self.client.read_plain(&mut plain, 1 << 20)? > 0 {}
        Ok(plain)
    }

    /// Handshake to completion, `request` sent with the client's Finished.
    fn handshake_with(&mut self, request: &[u8]) {
        self.client.write_plain(request);
        for _ in 0..4 {
            assert_eq!(self.run(true), Verdict::Open);
            self.client_reads().unwrap();
        }
        assert!(!self.server.is_handshaking());
        assert_eq!(self.metrics.tls_handshakes.get(), 1);
    }
}

const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";

fn responses(plain: &[u8]) -> usize {
    plain.windows(9).filter(|w| w == b"HTTP/1.1 ").count()
}

#[test]
fn a_request_sent_with_the_handshake_is_answered() {
    let mut r = Rig::new("first");
    r.client.write_plain(GET);
    let mut plain = Vec::new();
    for _ in 0..4 {
        assert_eq!(r.run(true), Verdict::Open);
        plain.extend(r.client_reads().unwrap());
    }
    assert_eq!(responses(&plain), 1);
    assert!(plain.ends_with(b"root"));
}

#[test]
fn a_pipelined_batch_is_encrypted_whole_and_sent_with_one_send() {
    let mut r = Rig::new("batch");
    r.handshake_with(b"");
    r.client.write_plain(&GET.repeat(16));
    r.wire.send_calls = 0;
    assert_eq!(r.run(true), Verdict::Open);
    assert_eq!(r.wire.send_calls, 1);
    assert_eq!(responses(&r.client_reads().unwrap()), 16);
}

#[test]
fn short_sends_and_eagain_resume_on_the_writable_event() {
    let mut r = Rig::new("short");
    r.handshake_with(b"");
    r.client.write_plain(&GET.repeat(3));
    r.wire.send.push_back(Ok(7));
    r.wire.send.push_back(Err(Errno::AGAIN));
    assert_eq!(r.run(true), Verdict::Open);
    assert_eq!(r.wire.from_server.len(), 7);
    // EPOLLOUT: writable only. The rest of the ciphertext goes out.
    assert_eq!(r.run(false), Verdict::Open);
    assert_eq!(responses(&r.client_reads().unwrap()), 3);
}

/// Ciphertext the socket has not taken keeps a connection on its send timeout, though `Conn`,
/// which handed the response over, is idle and would have it on keep-alive; once sent, the
/// deadline is `Conn`'s again.
#[test]
fn ciphertext_held_back_keeps_the_send_timeout() {
    use crate::metrics::TimeoutKind::{KeepAlive, Send};
    let mut r = Rig::new("held");
    r.handshake_with(b"");
    r.client.write_plain(GET);
    r.wire.send.push_back(Ok(7));
    r.wire.send.push_back(Err(Errno::AGAIN));
    assert_eq!(r.run(true), Verdict::Open);
    // As the epoll worker's books do after a run that finished the handshake.
    r.conn.handshake_done(0, false);
    let t = r.ctx.timeouts;
    assert!(r.server.pending_out() > 0, "the response is held");
    assert_eq!(r.conn.deadline(&t).map(|d| d.1), Some(KeepAlive));
    assert_eq!(
        deadline(&r.conn, &r.server, 40, &t),
        Some((40 + t.send, Send))
    );
    // EPOLLOUT: the rest goes out, and the connection is idle.
    assert_eq!(r.run(false), Verdict::Open);
    assert_eq!(r.server.pending_out(), 0);
    assert_eq!(deadline(&r.conn, &r.server, 40, &t), r.conn.deadline(&t));
    assert_eq!(responses(&r.client_reads().unwrap()), 1);
}

/// What counts as progress of held ciphertext: any change of the amount held.
#[test]
fn held_ciphertext_progress() {
    // (since, before, after, now) -> since
    let cases = [
        ((5, 0, 0, 9), 5),     // nothing held
        ((5, 0, 100, 9), 9),   // a backlog begins
        ((5, 100, 100, 9), 5), // stuck
        ((5, 100, 60, 9), 9),  // some went out
        ((5, 100, 160, 9), 9), // more plaintext handed over
        ((5, 100, 0, 9), 5),   // all sent: the deadline is `Conn`'s
    ];
    for ((since, before, after, now), want) in cases {
        assert_eq!(
            held_since(since, before, after, now),
            want,
            "{before} -> {after}"
        );
    }
}

#[test]
fn one_byte_sends_deliver_everything_in_order() {
    let mut r = Rig::new("onebyte");
    r.handshake_with(b"");
    r.client.write_plain(&GET.repeat(2));
    r.wire.send.extend(std::iter::repeat_n(Ok(1), 5_000));
    assert_eq!(r.run(true), Verdict::Open);
    assert_eq!(responses(&r.client_reads().unwrap()), 2);
}

#[test]
fn connection_close_ends_with_close_notify() {
    let mut r = Rig::new("close");
    r.handshake_with(b"");
    r.client
        .write_plain(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    assert_eq!(r.run(true), Verdict::Close);
    assert_eq!(responses(&r.client_reads().unwrap()), 1);
    assert!(r.client.peer_closed());
}

#[test]
fn client_close_notify_is_eof() {
    let mut r = Rig::new("peerclose");
    r.handshake_with(b"");
    r.client.close_notify();
    assert_eq!(r.run(true), Verdict::Close);
    assert_eq!(r.server.failure(), None);
}

macro_rules! bad_input {
    ($($name:ident: $bytes:expr => $want:expr;)*) => {$(
        #[test]
        fn $name() {
            let mut r = Rig::new(stringify!($name));
            r.wire.to_server.push_back($bytes.to_vec());
            assert_eq!(r.run(true), Verdict::Reset);
            assert_eq!(r.server.failure(), Some($want));
        }
    )*};
}

#[test]
fn plaintext_http_is_answered_400_in_the_clear() {
    let mut r = Rig::new("plain400");
    r.wire.to_server.push_back(GET.to_vec());
    assert_eq!(r.run(true), Verdict::Reset);
    assert_eq!(r.server.failure(), Some(Failure::Plaintext));
    let sent = std::mem::take(&mut r.wire.from_server);
    assert_eq!(sent, super::PLAIN_TO_TLS, "the 400 and nothing else");
    let text = String::from_utf8(sent).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    assert!(
        head.contains(&format!("Content-Length: {}", body.len())),
        "{text}"
    );
}

bad_input! {
    plaintext_request_resets_as_plaintext: GET => Failure::Plaintext;
    garbage_record_resets_as_bad_record: b"\x99\x03\x03\x00\x02ab" => Failure::BadRecord;
    data_before_the_handshake_resets: b"\x17\x03\x03\x00\x02ab" => Failure::Handshake;
}

#[test]
fn eof_mid_handshake_closes_as_truncated() {
    let mut r = Rig::new("truncated");
    let hello = r.client_hello();
    r.wire
        .to_server
        .push_back(hello[..hello.len() / 2].to_vec());
    r.wire.eof = true;
    assert_eq!(r.run(true), Verdict::Close);
    assert_eq!(r.server.failure(), Some(Failure::Truncated));
}

#[test]
fn a_connection_that_sends_nothing_and_closes_is_no_failure() {
    let mut r = Rig::new("silent");
    r.client_hello();
    r.wire.eof = true;
    assert_eq!(r.run(true), Verdict::Close);
    assert_eq!(r.server.failure(), None);
}

#[test]
fn a_stalled_handshake_times_out_as_a_header_timeout_silently() {
    let mut r = Rig::new("stall");
    let hello = r.client_hello();
    r.wire.to_server.push_back(hello[..10].to_vec());
    assert_eq!(r.run(true), Verdict::Open);
    let t = r.ctx.timeouts;
    let (at, kind) = r.conn.deadline(&t).unwrap();
    assert_eq!((at, kind), (t.header, crate::metrics::TimeoutKind::Header));
    r.conn.on_timeout(kind, &mut r.ctx);
    assert_eq!(r.run(false), Verdict::Close);
    // No 408 went out: there was no request, and no session to carry it.
    assert!(r.wire.from_server.is_empty());
}

macro_rules! ulp {
    ($($name:ident: $text:expr => $want:expr;)*) => {$(
        #[test]
        fn $name() {
            assert_eq!(ktls_offered($text), $want);
        }
    )*};
}

ulp! {
    ulp_list_with_tls: "espintcp mptcp tls\n" => true;
    ulp_list_without_tls: "espintcp mptcp\n" => false;
    ulp_list_empty: "" => false;
    ulp_name_that_only_contains_tls: "ktls tlsx" => false;
}
