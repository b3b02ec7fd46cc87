//! The body of the TLS-to-`Conn` fuzz target (feature `fuzzing`): arbitrary bytes through the
//! TLS layer, `pump` and the connection state machine, over a fake socket. cargo-fuzz calls it
//! from fuzz/, and the test suite runs it over fuzz/seeds/tls_conn, so CI exercises it without
//! a fuzzer. Not for the hot path: it builds a session, a connection and buffers per input.
//!
//! The first byte picks what the bytes are, the second how they are split:
//! - 0: the client's first bytes (ClientHello or anything else) straight to the server;
//! - 1: plaintext a client sends after a real handshake (requests, pipelined or not);
//! - 2: raw records injected after a real handshake (garbage, truncated, replayed).
//!
//! Checks: no panic; a failed session never stays open; everything the server sends is TLS
//! records (never plaintext), and a real client decrypts it without error; what it decrypts
//! are HTTP/1.1 responses.

use crate::apps::techempower;
use crate::backend::tls::TlsIo;
use crate::backend::{Io, Verdict, pump};
use crate::conn::{Conn, Ctx, TimeoutsMs};
use crate::metrics::{ServerMetrics, WorkerMetrics};
use crate::pool::Pool;
use rustix::io::Errno;
use std::collections::VecDeque;
use std::fs::File;
use std::sync::{Arc, OnceLock};
use twelve_tls::testing::Pki;
use twelve_tls::{ClientOptions, ClientTls, ServerTls, Session};

/// The certificates and configurations every input reuses (made once per process).
struct Setup {
    _pki: Pki,
    server: ServerTls,
    client: ClientTls,
}

fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        let pki = Pki::new("fuzz");
        let server = ServerTls::load(&pki.cert, &pki.key).expect("test certificate loads");
        let client = ClientTls::new(&ClientOptions {
            cacert: Some(pki.ca_pem.clone()),
            ..ClientOptions::default()
        })
        .expect("test CA loads");
        Setup {
            _pki: pki,
            server,
            client,
        }
    })
}

/// The socket as the server sees it: chunks to receive, bytes sent.
#[derive(Default)]
struct Wire {
    to_server: VecDeque<Vec<u8>>,
    sent: Vec<u8>,
}

struct WireIo<'a>(&'a mut Wire);

impl Io for WireIo<'_> {
    fn recv(&mut self, buf: &mut Vec<u8>) -> Result<usize, Errno> {
        let Some(chunk) = self.0.to_server.pop_front() else {
            return Err(Errno::AGAIN);
        };
        let n = chunk.len().min(buf.capacity() - buf.len());
        buf.extend_from_slice(&chunk[..n]);
        if n < chunk.len() {
            self.0.to_server.push_front(chunk[n..].to_vec());
        }
        Ok(n)
    }

    fn send(&mut self, bytes: &[u8]) -> Result<usize, Errno> {
        self.0.sent.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn sendfile(&mut self, _: &File, _: u64, _: usize) -> Result<usize, Errno> {
        Err(Errno::INVAL)
    }

    fn shutdown_write(&mut self) -> Result<(), Errno> {
        Ok(())
    }
}

struct Rig {
    server: Session,
    client: Session,
    conn: Conn,
    ctx: Ctx,
    wire: Wire,
    scratch: Vec<u8>,
    metrics: WorkerMetrics,
    open: bool,
}

impl Rig {
    fn new() -> Self {
        let s = setup();
        let all_metrics = Arc::new(ServerMetrics::new(&[0], 1));
        Self {
            server: s.server.session(),
            client: s
                .client
                .session(&ClientTls::server_name("localhost").expect("valid name")),
            conn: Conn::new_tls(0),
            ctx: Ctx {
                router: Arc::new(techempower::router()),
                limits: twelve_http::Limits::default(),
                timeouts: TimeoutsMs {
                    header: 1_000,
                    body: 1_000,
                    keep_alive: 1_000,
                    send: 1_000,
                    linger: 1_000,
                    body_min_rate_per_s: 500,
                },
                all_metrics,
                me: 0,
                draining: false,
                high_water: 64 * 1024,
                pool: Pool::new(16 * 1024, 8),
                scratch: crate::response::Scratch::default(),
                conn_token: 0,
                handler_timeout_ms: 0,
            },
            wire: Wire::default(),
            scratch: Vec::new(),
            metrics: WorkerMetrics::default(),
            open: true,
        }
    }

    /// Queues `bytes` for the server in pieces of `split` bytes (0: whole), then runs it.
    fn server_reads(&mut self, bytes: &[u8], split: usize) {
        if !self.open || bytes.is_empty() {
            return;
        }
        let step = if split == 0 { bytes.len() } else { split };
        self.wire
            .to_server
            .extend(bytes.chunks(step).map(<[u8]>::to_vec));
        // One run per event; each chunk may be its own event.
        for _ in 0..self.wire.to_server.len().max(1) {
            let mut io = TlsIo::new(
                &mut self.server,
                WireIo(&mut self.wire),
                &mut self.scratch,
                &self.metrics,
            );
            let verdict = pump(&mut self.conn, &mut io, true, 0, &mut self.ctx);
            if self.server.failure().is_some() {
                assert_ne!(verdict, Verdict::Open, "a failed session stayed open");
            }
            if verdict != Verdict::Open {
                self.open = false;
                return;
            }
        }
    }

    /// The client's queued records to the server.
    fn client_sends(&mut self, split: usize) {
        let out = self.client.outgoing().to_vec();
        self.client.sent(out.len());
        self.server_reads(&out, split);
    }

    /// Everything the server sent, to the client; returns the plaintext it decrypts.
    fn client_reads(&mut self) -> Vec<u8> {
        let sent = std::mem::take(&mut self.wire.sent);
        if let Some(&first) = sent.first() {
            // TLS content types (RFC 8446 §5.1): change_cipher_spec, alert, handshake,
            // application_data. Plaintext HTTP would start with 'H'.
            assert!((0x14..=0x17).contains(&first), "server sent a non-record");
        }
        self.client
            .feed(&sent)
            .expect("the server's records decrypt");
        let mut plain = Vec::new();
        while self
            .client
            .read_plain(&mut plain, 1 << 20)
            .expect("plaintext")
            > 0
        {}
        plain
    }

    fn handshake(&mut self) {
        for _ in 0..4 {
            self.client_sends(0);
            self.client_reads();
        }
        assert!(!self.server.is_handshaking(), "handshake completes");
    }
}

/// The fuzz target's body; see the module's documentation.
pub fn tls_conn_target(data: &[u8]) {
    let [mode, split, rest @ ..] = data else {
        return;
    };
    let split = usize::from(*split);
    let mut rig = Rig::new();
    match mode % 3 {
        0 => {
            rig.server_reads(rest, split);
            let _ = rig.client_reads_raw();
        }
        1 => {
            rig.handshake();
            rig.client.write_plain(rest);
            rig.client_sends(split);
            let plain = rig.client_reads();
            assert!(
                plain.is_empty() || plain.starts_with(b"HTTP/1.1 "),
                "a response that is not HTTP/1.1"
            );
        }
        _ => {
            rig.handshake();
            rig.server_reads(rest, split);
            let _ = rig.client_reads_raw();
        }
    }
}

impl Rig {
    /// What the server sent, checked to be records only (the client cannot be expected to
    /// accept a reply to bytes it did not send), or, to plain HTTP, the plain 400 alone.
    fn client_reads_raw(&mut self) -> Vec<u8> {
        let sent = std::mem::take(&mut self.wire.sent);
        if sent.starts_with(b"HTTP/") {
            assert_eq!(
                sent,
                crate::backend::tls::PLAIN_TO_TLS,
                "a plain answer but the 400"
            );
            assert_eq!(self.server.failure(), Some(twelve_tls::Failure::Plaintext));
        } else if let Some(&first) = sent.first() {
            assert!((0x14..=0x17).contains(&first), "server sent a non-record");
        }
        sent
    }
}
