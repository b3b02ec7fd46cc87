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
    let failed = |f: Failure, detail: Option<&str>| {
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
    s.close_notify();
    let _ = sock.write_all(s.outgoing());
    Ok(())
}

#[cfg(test)]
#[path = "tls_tests.rs"]
mod tests;
