//! Tests of the client's TLS layer over a fake socket whose peer is a server session: short
//! and blocked sends resume on writability, and plaintext left in the session after a read
//! comes back as a readable event of its own.

use super::*;
use std::collections::VecDeque;
use twelve_tls::testing::Pki;
use twelve_tls::{ClientOptions, ServerTls};

/// One slot's socket: what the server sent (to be received), what the client sent, a
/// script of send results, whether writability is wanted, the next poll's events.
#[derive(Default)]
struct Fake {
    to_client: VecDeque<Vec<u8>>,
    from_client: Vec<u8>,
    send: VecDeque<Result<usize, Errno>>,
    want_write: bool,
    events: Vec<Readiness>,
}

impl Io for Fake {
    fn connect(&mut self, _: usize) -> Result<(), Errno> {
        Ok(())
    }
    fn finish_connect(&mut self, _: usize) -> Result<(), Errno> {
        Ok(())
    }
    fn send(&mut self, _: usize, bytes: &[u8]) -> Result<usize, Errno> {
        let n = match self.send.pop_front() {
            None => bytes.len(),
            Some(Err(e)) => return Err(e),
            Some(Ok(max)) => max.min(bytes.len()),
        };
        self.from_client.extend_from_slice(&bytes[..n]);
        Ok(n)
    }
    fn recv(&mut self, _: usize, buf: &mut [u8]) -> Result<usize, Errno> {
        let Some(chunk) = self.to_client.pop_front() else {
            return Err(Errno::AGAIN);
        };
        let n = chunk.len().min(buf.len());
        buf[..n].copy_from_slice(&chunk[..n]);
        if n < chunk.len() {
            self.to_client.push_front(chunk[n..].to_vec());
        }
        Ok(n)
    }
    fn want_write(&mut self, _: usize, on: bool) {
        self.want_write = on;
    }
    fn close(&mut self, _: usize) {}
    fn poll(&mut self, _: u64) -> Result<usize, Errno> {
        Ok(self.events.len())
    }
    fn event(&self, k: usize) -> Readiness {
        self.events[k]
    }
    fn nap(&mut self, _: u64) {}
}

struct Rig {
    _pki: Pki,
    io: TlsIo<Fake>,
    server: Session,
}

impl Rig {
    fn new(tag: &str) -> Self {
        let pki = Pki::new(tag);
        let server = ServerTls::load(&pki.cert, &pki.key).unwrap().session();
        let client = ClientTls::new(&ClientOptions {
            cacert: Some(pki.ca_pem.clone()),
            ..ClientOptions::default()
        })
        .unwrap();
        let name = ClientTls::server_name("localhost").unwrap();
        let io = TlsIo::new(Fake::default(), client, name, 1);
        Self {
            _pki: pki,
            io,
            server,
        }
    }

    /// The client's bytes to the server, the server's answer queued for the client.
    fn server_turn(&mut self) -> Vec<u8> {
        let bytes = std::mem::take(&mut self.io.inner.from_client);
        self.server.feed(&bytes).unwrap();
        let mut plain = Vec::new();
        self.server.read_plain(&mut plain, 1 << 20).unwrap();
        let out = self.server.outgoing().to_vec();
        self.server.sent(out.len());
        if !out.is_empty() {
            self.io.inner.to_client.push_back(out);
        }
        plain
    }

    /// Connects and completes the handshake, `request` riding with the client's Finished.
    fn connect(&mut self, request: &[u8]) -> Vec<u8> {
        self.io.connect(0).unwrap();
        self.io.finish_connect(0).unwrap();
        assert_eq!(self.io.send(0, request), Ok(request.len()));
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        for _ in 0..4 {
            got.extend(self.server_turn());
            while let Ok(n) = self.io.recv(0, &mut buf) {
                assert!(n > 0);
            }
        }
        assert!(self.io.handshake_done(0), "the handshake finished");
        assert!(!self.io.handshake_done(0), "said once");
        got
    }
}

#[test]
fn a_request_written_before_the_handshake_ends_reaches_the_server() {
    let mut r = Rig::new("load-first");
    assert_eq!(
        r.connect(b"GET / HTTP/1.1\r\n\r\n"),
        b"GET / HTTP/1.1\r\n\r\n"
    );
}

#[test]
fn a_blocked_send_waits_for_writability_then_goes_out() {
    let mut r = Rig::new("load-blocked");
    r.connect(b"");
    r.io.inner.send.push_back(Ok(5));
    r.io.inner.send.push_back(Err(Errno::AGAIN));
    assert_eq!(r.io.send(0, b"GET /x HTTP/1.1\r\n\r\n"), Ok(19));
    assert!(r.io.inner.want_write, "writability requested");
    // The dispatch's own want_write(false) does not turn it off while bytes wait.
    r.io.want_write(0, false);
    assert!(r.io.inner.want_write);
    r.io.inner.events = vec![Readiness {
        slot: 0,
        readable: false,
        writable: true,
    }];
    assert_eq!(r.io.poll(0), Ok(1));
    assert!(!r.io.inner.want_write, "off once flushed");
    assert_eq!(r.server_turn(), b"GET /x HTTP/1.1\r\n\r\n");
}

#[test]
fn plaintext_left_after_a_full_read_is_reported_readable_again() {
    let mut r = Rig::new("load-again");
    r.connect(b"");
    let body = vec![b'x'; 10_000];
    r.server.write_plain(&body);
    let out = r.server.outgoing().to_vec();
    r.server.sent(out.len());
    r.io.inner.to_client.push_back(out);
    let mut buf = [0u8; 3000];
    let mut got = r.io.recv(0, &mut buf).unwrap();
    assert_eq!(got, 3000);
    r.io.inner.events.clear();
    // The socket is empty: only the layer knows more plaintext waits.
    while got < body.len() {
        assert_eq!(r.io.poll(1_000_000), Ok(1));
        let ev = r.io.event(0);
        assert_eq!((ev.slot, ev.readable), (0, true));
        got += r.io.recv(0, &mut buf).unwrap();
    }
    assert_eq!(got, body.len());
    assert_eq!(r.io.poll(0), Ok(0), "nothing left");
}

#[test]
fn eof_mid_handshake_is_an_error_and_eof_after_is_eof() {
    let mut r = Rig::new("load-eof");
    r.io.connect(0).unwrap();
    r.io.finish_connect(0).unwrap();
    r.io.inner.to_client.push_back(Vec::new());
    let mut buf = [0u8; 64];
    assert_eq!(r.io.recv(0, &mut buf), Err(FAILED));
    let mut r = Rig::new("load-eof-after");
    r.connect(b"");
    r.io.inner.to_client.push_back(Vec::new());
    assert_eq!(r.io.recv(0, &mut buf), Ok(0));
}
