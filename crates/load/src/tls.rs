//! TLS under the dispatch: [`TlsIo`] wraps the socket [`Io`] so that `send` takes plaintext
//! and `recv` yields plaintext, and the dispatch and `Conn` stay as they are for plain HTTP.
//!
//! A request window is encrypted whole and sent with one `send`. What the socket does not
//! take waits in the session, with writability on, and goes out when the next poll reports the
//! slot writable. Plaintext the session holds after a `recv` (a read that filled the buffer)
//! is reported as a readable event of its own on the next poll, since the level-triggered
//! epoll only knows about the socket.
use crate::io::{Io, Readiness};
use rustix::io::Errno;
use twelve_tls::{ClientTls, Session};
use twelve_tls::{Failure, pki_types::ServerName};

/// Ciphertext received per `recv`: a few records.
const CIPHER_BUF: usize = 64 * 1024;

/// The errno a failed session reports: the dispatch counts it as a read error. (A certificate
/// that does not verify never gets this far: `preflight` stops the run first.)
const FAILED: Errno = Errno::PROTO;

pub(crate) struct TlsIo<I: Io> {
    inner: I,
    tls: ClientTls,
    name: ServerName<'static>,
    sessions: Vec<Option<Box<Session>>>,
    /// Per slot: ciphertext waits for writability.
    waiting: Vec<bool>,
    /// Per slot: the handshake finished and the dispatch has not been told yet.
    handshaken: Vec<bool>,
    cipher: Vec<u8>,
    /// Slots whose session holds input after a `recv`: readable events for the next poll.
    again: Vec<usize>,
    extra: Vec<Readiness>,
    /// Events of the last poll that came from the socket (the rest are `extra`).
    polled: usize,
}

impl<I: Io> TlsIo<I> {
    pub(crate) fn new(inner: I, tls: ClientTls, name: ServerName<'static>, slots: usize) -> Self {
        Self {
            inner,
            tls,
            name,
            sessions: (0..slots).map(|_| None).collect(),
            waiting: vec![false; slots],
            handshaken: vec![false; slots],
            cipher: vec![0; CIPHER_BUF],
            again: Vec::new(),
            extra: Vec::new(),
            polled: 0,
        }
    }

    /// Sends what the slot's session has queued; EAGAIN leaves the rest waiting for
    /// writability.
    fn flush(&mut self, slot: usize) -> Result<(), Errno> {
        let Some(s) = self.sessions[slot].as_deref_mut() else {
            return Err(Errno::BADF);
        };
        loop {
            let out = s.outgoing();
            if out.is_empty() {
                if self.waiting[slot] {
                    self.waiting[slot] = false;
                    self.inner.want_write(slot, false);
                }
                return Ok(());
            }
            match self.inner.send(slot, out) {
                Ok(n) => s.sent(n),
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) => {
                    if !self.waiting[slot] {
                        self.waiting[slot] = true;
                        self.inner.want_write(slot, true);
                    }
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The session failed: its alert goes out (best effort), the dispatch drops the slot.
    fn failed(&mut self, slot: usize) -> Errno {
        let _ = self.flush(slot);
        FAILED
    }
}

impl<I: Io> Io for TlsIo<I> {
    fn connect(&mut self, slot: usize) -> Result<(), Errno> {
        self.sessions[slot] = None;
        self.inner.connect(slot)
    }

    /// The TCP connect finished: the ClientHello goes out now.
    fn finish_connect(&mut self, slot: usize) -> Result<(), Errno> {
        self.inner.finish_connect(slot)?;
        self.sessions[slot] = Some(Box::new(self.tls.session(&self.name)));
        self.handshaken[slot] = false;
        self.flush(slot)
    }

    /// Encrypts the window (rustls holds it until the handshake is done) and sends it.
    fn send(&mut self, slot: usize, bytes: &[u8]) -> Result<usize, Errno> {
        let s = self.sessions[slot].as_deref_mut().ok_or(Errno::BADF)?;
        s.write_plain(bytes);
        self.flush(slot)?;
        Ok(bytes.len())
    }

    /// Plaintext, or EAGAIN while only handshake records arrived; `Ok(0)` at close_notify
    /// or EOF.
    fn recv(&mut self, slot: usize, buf: &mut [u8]) -> Result<usize, Errno> {
        loop {
            let s = self.sessions[slot].as_deref_mut().ok_or(Errno::BADF)?;
            let n = match s.read_into(buf) {
                Ok(n) => n,
                Err(_) => return Err(self.failed(slot)),
            };
            if n > 0 {
                if s.has_input() {
                    self.again.push(slot);
                }
                return Ok(n);
            }
            if s.peer_closed() {
                return Ok(0);
            }
            let m = match self.inner.recv(slot, &mut self.cipher) {
                Ok(0) => {
                    if s.is_handshaking() {
                        // EOF mid-handshake: the server refused us.
                        return Err(self.failed(slot));
                    }
                    return Ok(0);
                }
                Ok(m) => m,
                Err(e) => return Err(e),
            };
            let was_handshaking = s.is_handshaking();
            if s.feed(&self.cipher[..m]).is_err() {
                return Err(self.failed(slot));
            }
            if was_handshaking && !s.is_handshaking() {
                self.handshaken[slot] = true;
            }
            // Handshake messages, and the window rustls held until the handshake ended.
            self.flush(slot)?;
        }
    }

    fn want_write(&mut self, slot: usize, on: bool) {
        // Writability stays on while ciphertext waits, whatever the dispatch wants.
        if !self.waiting[slot] {
            self.inner.want_write(slot, on);
        }
    }

    fn close(&mut self, slot: usize) {
        self.sessions[slot] = None;
        self.waiting[slot] = false;
        self.again.retain(|&s| s != slot);
        self.inner.close(slot);
    }

    /// Polls the sockets (without blocking when a session holds input), sends waiting
    /// ciphertext of the slots that became writable, and adds a readable event for each
    /// session holding input.
    fn poll(&mut self, timeout_ns: u64) -> Result<usize, Errno> {
        let timeout = if self.again.is_empty() { timeout_ns } else { 0 };
        let n = self.inner.poll(timeout)?;
        for k in 0..n {
            let ev = self.inner.event(k);
            if ev.writable && self.waiting[ev.slot] && self.flush(ev.slot).is_err() {
                // The failed send shows again as the dispatch's own read or write error.
                self.waiting[ev.slot] = false;
            }
        }
        self.polled = n;
        self.extra.clear();
        for slot in self.again.drain(..) {
            self.extra.push(Readiness {
                slot,
                readable: true,
                writable: false,
            });
        }
        Ok(n + self.extra.len())
    }

    fn event(&self, k: usize) -> Readiness {
        match k.checked_sub(self.polled) {
            None => self.inner.event(k),
            Some(i) => self.extra[i],
        }
    }

    fn nap(&mut self, ns: u64) {
        self.inner.nap(ns);
    }

    fn submit(&mut self) {
        self.inner.submit();
    }

    fn handshake_done(&mut self, slot: usize) -> bool {
        std::mem::take(&mut self.handshaken[slot])
    }

    fn stamps(&self) -> bool {
        self.inner.stamps()
    }

    /// The stamp of the slot's last ciphertext read: the plaintext handed out came in with it
    /// or before it.
    fn received_at(&self, slot: usize) -> Option<u64> {
        self.inner.received_at(slot)
    }

    fn sync_clock(&mut self, run_now: &dyn Fn() -> u64) {
        self.inner.sync_clock(run_now);
    }

    fn has_pending(&self) -> bool {
        !self.again.is_empty() || self.inner.has_pending()
    }
}

/// One blocking handshake to the first target before the run: a certificate that does not
/// verify (wrong host name, expired, unknown issuer) or a server that does not speak TLS is a
/// configuration error with a clear message, not a run of counted read errors. Its session is
/// not kept, so the run's first connections make full handshakes.
pub(crate) fn preflight(
    target: &crate::Target,
    tls: &ClientTls,
    timeout: std::time::Duration,
    h2: bool,
) -> Result<(), crate::ConfigError> {
    use std::io::{Read, Write};
    let bad = |why: String| crate::ConfigError(format!("{}: {why}", target.url));
    let name = ClientTls::server_name(target.host()).map_err(|e| bad(e.to_string()))?;
    let mut sock = std::net::TcpStream::connect_timeout(&target.addr, timeout)
        .map_err(|e| bad(format!("connect: {e}")))?;
    sock.set_read_timeout(Some(timeout))
        .and_then(|()| sock.set_write_timeout(Some(timeout)))
        .map_err(|e| bad(e.to_string()))?;
    let mut s = tls.without_resumption().session(&name);
    let mut buf = vec![0; CIPHER_BUF];
    let no_h2 = || {
        bad(format!(
            "{} does not offer HTTP/2 in its TLS handshake (ALPN h2); drop --h2 to bench it \
             over HTTP/1.1",
            target.host()
        ))
    };
    let failed = |f: Failure, detail: Option<&str>| {
        // A server with no protocol in common refuses the handshake (RFC 7301 §3.2).
        if h2 && detail.is_some_and(|d| d.contains("NoApplicationProtocol")) {
            return no_h2();
        }
        let hint = if f.is_certificate() {
            " (--cacert FILE to trust its issuer, or --insecure to skip verification)"
        } else {
            ""
        };
        let detail = detail.map(|d| format!(": {d}")).unwrap_or_default();
        bad(format!(
            "TLS handshake with {} failed: {f}{detail}{hint}",
            target.host()
        ))
    };
    while s.is_handshaking() {
        let out = s.outgoing().to_vec();
        s.sent(out.len());
        sock.write_all(&out)
            .map_err(|e| bad(format!("TLS handshake: send: {e}")))?;
        let n = sock
            .read(&mut buf)
            .map_err(|e| bad(format!("TLS handshake: {e}")))?;
        if n == 0 {
            return Err(failed(s.failure().unwrap_or(Failure::Truncated), None));
        }
        if let Err(f) = s.feed(&buf[..n]) {
            return Err(failed(f, s.failure_detail()));
        }
    }
    let alpn_h2 = s.alpn() == Some(twelve_tls::ALPN_H2);
    s.close_notify();
    let _ = sock.write_all(s.outgoing());
    if h2 && !alpn_h2 {
        return Err(no_h2());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
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
}
