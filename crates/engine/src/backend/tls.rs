//! TLS between a backend's socket and [`Conn`]: [`TlsIo`] is an [`Io`]
//! whose `recv` yields plaintext and whose `send` takes plaintext, so the drive loop
//! ([`drive::run`]) and `Conn` stay as they are for plain HTTP, on either backend (the
//! io_uring backend puts its `RingIo` under it).
//!
//! One send per batch still holds: `send` only encrypts (the whole batch of responses `Conn`
//! hands over at once), and [`Io::flush`], which the drive asks for once the connection has
//! nothing more to hand over, sends the ciphertext with one `send`. Static files cannot use
//! `sendfile` over userspace TLS: `sendfile` here reads a chunk of the file into the TLS layer.
//! (Kernel TLS, the `tls` ULP, would keep `sendfile`: [`ktls_offered`] probes for it; the
//! kTLS path itself is not built yet, so where the kernel offers it the server says so and
//! still reads files into this layer.)
//!
//! [`drive::run`]: super::drive::run

use super::{Io, Verdict};
use crate::conn::{Conn, TimeoutsMs};
use crate::metrics::{TimeoutKind, WorkerMetrics};
use rustix::io::Errno;
use std::fs::File;
use std::os::unix::fs::FileExt;
use twelve_tls::Session;

/// Ciphertext queued beyond this stops `send` from taking more plaintext until the socket
/// takes some: the TLS counterpart of `Conn`'s write high-water mark.
const OUT_HIGH_WATER: usize = 256 * 1024;

/// Bytes read from a file per `sendfile` call: a few TLS records (16 KiB of plaintext each,
/// RFC 8446 §5.1), enough to keep the socket busy without holding a large buffer.
const FILE_CHUNK: usize = 64 * 1024;

/// The answer to plain HTTP on a TLS port, in the clear (nginx's wording, its
/// `NGX_HTTP_TO_HTTPS` page).
pub(crate) const PLAIN_TO_TLS: &[u8] = b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n\
Content-Length: 46\r\nConnection: close\r\n\r\nThe plain HTTP request was sent to HTTPS port\n";

/// The errno a failed session reports to the drive (any error other than EINTR/EAGAIN closes
/// the connection); the failure's kind stays in the session for the worker to count.
const FAILED: Errno = Errno::PROTO;

/// A TLS connection's deadline: `conn`'s own, except while `session` holds ciphertext the
/// socket has not taken. `Conn` handed those bytes over and may be idle, but the connection is
/// still sending: the send timeout runs on them, from `held_since_ms` (see [`held_since`]).
/// Under `Conn`'s keep-alive deadline instead, a client that reads a large file slowly would
/// lose its last record when the idle timer closes the connection (tests/tls.rs,
/// `a_static_file_larger_than_the_socket_buffers_arrives_whole`, under load).
pub(crate) fn deadline(
    conn: &Conn,
    session: &Session,
    held_since_ms: u64,
    t: &TimeoutsMs,
) -> Option<(u64, TimeoutKind)> {
    let own = conn.deadline(t)?;
    if session.pending_out() == 0 || own.1 == TimeoutKind::Send {
        return Some(own);
    }
    Some((held_since_ms.saturating_add(t.send), TimeoutKind::Send))
}

/// When the ciphertext a session holds last moved, after a drive at `now_ms` that
/// found `before` bytes held and left `after`: a change (bytes went to the socket, or
/// plaintext came in, as `Conn`'s own send timer counts a hand-over) is progress; the same
/// amount still held is none.
pub(crate) fn held_since(since_ms: u64, before: usize, after: usize, now_ms: u64) -> u64 {
    if after > 0 && after != before {
        now_ms
    } else {
        since_ms
    }
}

/// A connection's TLS session around the socket (or a test's fake), for one drive.
pub(crate) struct TlsIo<'a, I: Io> {
    pub(crate) session: &'a mut Session,
    pub(crate) inner: I,
    /// The worker's ciphertext receive buffer, lent for this run.
    pub(crate) scratch: &'a mut Vec<u8>,
    /// Handshakes are counted as they complete, so a request that rides in with the
    /// client's Finished (a `/metrics` scrape) already sees its own.
    metrics: &'a WorkerMetrics,
    /// The last socket `recv` of this run returned less than it was offered: the socket was
    /// drained then, and edge-triggered epoll reports anything that arrives later.
    drained: bool,
}

impl<'a, I: Io> TlsIo<'a, I> {
    pub(crate) fn new(
        session: &'a mut Session,
        inner: I,
        scratch: &'a mut Vec<u8>,
        metrics: &'a WorkerMetrics,
    ) -> Self {
        Self {
            session,
            inner,
            scratch,
            metrics,
            drained: false,
        }
    }

    /// Sends an alert the session queued on failure, best effort, and reports the failure.
    /// Plain HTTP gets a plain 400 instead, as nginx answers it, so a client that forgot
    /// `https://` reads why rather than meeting a bare close.
    fn failed(&mut self) -> Errno {
        if self.session.failure() == Some(twelve_tls::Failure::Plaintext) {
            let _ = self.inner.send(PLAIN_TO_TLS);
        } else {
            let _ = self.flush();
        }
        FAILED
    }
}

impl<I: Io> Io for TlsIo<'_, I> {
    /// Appends plaintext. Returns fewer bytes than the spare capacity only when the socket
    /// was drained in this run and the session holds no more plaintext (so the drive's rule, a
    /// short read means drained, holds); `Ok(0)` at close_notify or EOF.
    fn recv(&mut self, buf: &mut Vec<u8>) -> Result<usize, Errno> {
        let space = buf.capacity() - buf.len();
        let mut got = 0;
        loop {
            got += match self.session.read_plain(buf, space - got) {
                Ok(n) => n,
                Err(_) => return Err(self.failed()),
            };
            if got == space || self.session.peer_closed() || (got > 0 && self.drained) {
                return Ok(got);
            }
            self.scratch.clear();
            if self.scratch.capacity() < FILE_CHUNK {
                self.scratch.reserve(FILE_CHUNK);
            }
            let offered = self.scratch.capacity();
            match self.inner.recv(self.scratch) {
                Ok(0) => {
                    if self.session.is_handshaking() && self.session.started() {
                        self.session.set_failure(twelve_tls::Failure::Truncated);
                    }
                    return Ok(got);
                }
                Ok(n) => {
                    self.drained = n < offered;
                    let was_handshaking = self.session.is_handshaking();
                    if self.session.feed(self.scratch).is_err() {
                        return Err(self.failed());
                    }
                    if was_handshaking && !self.session.is_handshaking() {
                        self.metrics.tls_handshakes.inc();
                        if self.session.resumed() {
                            self.metrics.tls_resumed.inc();
                        }
                    }
                }
                Err(Errno::AGAIN) if got > 0 => return Ok(got),
                Err(e) => return Err(e),
            }
        }
    }

    /// Encrypts the plaintext; [`Io::flush`] sends it.
    fn send(&mut self, bytes: &[u8]) -> Result<usize, Errno> {
        self.room()?;
        self.session.write_plain(bytes);
        Ok(bytes.len())
    }

    /// Reads up to a chunk of the file and encrypts it.
    fn sendfile(&mut self, file: &File, offset: u64, len: usize) -> Result<usize, Errno> {
        self.room()?;
        let mut chunk = std::mem::take(self.scratch);
        chunk.clear();
        chunk.resize(len.min(FILE_CHUNK), 0);
        let n = loop {
            match file.read_at(&mut chunk, offset) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    *self.scratch = chunk;
                    return Err(Errno::from_io_error(&e).unwrap_or(Errno::IO));
                }
            }
        };
        self.session.write_plain(&chunk[..n]);
        *self.scratch = chunk;
        Ok(n)
    }

    /// close_notify (RFC 8446 §6.1), then the socket's write side.
    fn shutdown_write(&mut self) -> Result<(), Errno> {
        self.close_notify();
        self.inner.shutdown_write()
    }

    /// Sends the queued ciphertext: the batch's responses, handshake messages, alerts.
    fn flush(&mut self) -> Result<(), Errno> {
        loop {
            let out = self.session.outgoing();
            if out.is_empty() {
                // The socket below may still hold a send of its own (io_uring's in flight).
                return self.inner.flush();
            }
            match self.inner.send(out) {
                Ok(n) => self.session.sent(n),
                Err(Errno::INTR) => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Before a close: close_notify, so a client that reads to the end sees a clean end
    /// rather than a truncation (OpenSSL 3 reports one as an error).
    fn close_notify(&mut self) {
        if !self.session.is_handshaking() && self.session.failure().is_none() {
            self.session.close_notify();
        }
        let _ = self.flush();
    }
}

impl<I: Io> TlsIo<'_, I> {
    /// Refuses more plaintext (EAGAIN) while more than [`OUT_HIGH_WATER`] of ciphertext
    /// waits and the socket takes none of it.
    fn room(&mut self) -> Result<(), Errno> {
        if self.session.outgoing().len() > OUT_HIGH_WATER
            && let Err(e) = self.flush()
            && self.session.pending_out() > OUT_HIGH_WATER
        {
            return Err(e);
        }
        Ok(())
    }
}

/// The books a TLS connection keeps after a run of its drive: a handshake that completed ends
/// the connection's handshake timer (the TLS layer counted it); a failure is counted by kind
/// once the connection is being closed. Returns whether a failure was counted.
pub(crate) fn books(
    conn: &mut Conn,
    session: &Session,
    verdict: Verdict,
    now: u64,
    m: &WorkerMetrics,
) -> bool {
    if conn.is_handshaking() && !session.is_handshaking() {
        conn.handshake_done(now, session.alpn() == Some(twelve_tls::ALPN_H2));
    }
    match session.failure() {
        Some(f) if verdict != Verdict::Open => {
            m.tls_failure(f);
            true
        }
        _ => false,
    }
}

/// Whether the kernel offers the `tls` upper-layer protocol for TCP (kTLS), from the text of
/// `/proc/sys/net/ipv4/tcp_available_ulp` (space-separated names, e.g. `espintcp mptcp tls`).
pub(crate) fn ktls_offered(available_ulp: &str) -> bool {
    available_ulp.split_whitespace().any(|u| u == "tls")
}

/// Whether this kernel offers kTLS (`tls` in `/proc/sys/net/ipv4/tcp_available_ulp`);
/// `false` where the file cannot be read (no such kernel option, or a sandbox hides /proc).
pub fn ktls_available() -> bool {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_ulp").is_ok_and(|s| ktls_offered(&s))
}

#[cfg(test)]
mod tests;
