//! [`Session`]: one TLS connection as a sans-I/O layer. Ciphertext from the socket goes in
//! with [`Session::feed`], plaintext comes out with [`Session::read_plain`]; plaintext goes in
//! with [`Session::write_plain`] and the ciphertext to send comes out of
//! [`Session::outgoing`]. The caller owns the socket and every syscall, so a batch of
//! responses is encrypted whole and then sent with one `send`.

use crate::Failure;
use rustls::Connection;
use std::io::{BufRead, ErrorKind};

/// TLS record content type of a handshake record (RFC 8446 §5.1): the first byte a TLS
/// client sends. A first byte that is an ASCII letter is an HTTP method instead.
const CONTENT_HANDSHAKE: u8 = 0x16;

/// One TLS connection's state and buffers.
pub struct Session {
    conn: Connection,
    /// Ciphertext fed but not yet taken by rustls (it takes at most what its plaintext buffer
    /// allows): `stash[stash_at..]`.
    stash: Vec<u8>,
    stash_at: usize,
    /// Ciphertext to send: `out[out_at..]`.
    out: Vec<u8>,
    out_at: usize,
    /// Bytes were fed at least once.
    started: bool,
    /// The peer sent close_notify.
    peer_closed: bool,
    failure: Option<Failure>,
    /// The rustls error behind `failure`, for a message (never on a hot path).
    detail: Option<String>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("handshaking", &self.conn.is_handshaking())
            .field("stashed", &(self.stash.len() - self.stash_at))
            .field("out", &(self.out.len() - self.out_at))
            .field("failure", &self.failure)
            .finish()
    }
}

impl Session {
    pub(crate) fn new(mut conn: Connection) -> Self {
        // The caller bounds what it queues (a high-water mark on `pending_out`); rustls's own
        // limit would turn a large response written before the handshake ends into a short
        // write that no socket event ever resumes.
        conn.set_buffer_limit(None);
        Self {
            conn,
            stash: Vec::new(),
            stash_at: 0,
            out: Vec::new(),
            out_at: 0,
            started: false,
            peer_closed: false,
            failure: None,
            detail: None,
        }
    }

    /// Takes ciphertext received from the peer and processes every complete record of it.
    /// What rustls cannot take yet (its plaintext buffer is full) is kept for
    /// [`Session::read_plain`]. On bad input the session fails for good; an alert may then
    /// be waiting in [`Session::outgoing`].
    pub fn feed(&mut self, mut cipher: &[u8]) -> Result<(), Failure> {
        if let Some(f) = self.failure {
            return Err(f);
        }
        if !self.started && !cipher.is_empty() {
            self.started = true;
            if cipher[0] != CONTENT_HANDSHAKE && cipher[0].is_ascii_alphabetic() {
                return Err(self.fail(Failure::Plaintext));
            }
        }
        if self.stash_at < self.stash.len() {
            self.stash.extend_from_slice(cipher);
            return self.process_stash();
        }
        self.process(&mut cipher)?;
        if !cipher.is_empty() {
            self.stash.clear();
            self.stash_at = 0;
            self.stash.extend_from_slice(cipher);
        }
        Ok(())
    }

    /// Hands `cipher` to rustls record by record until it is all taken or rustls's plaintext
    /// buffer is full; `cipher` is left at what was not taken.
    fn process(&mut self, cipher: &mut &[u8]) -> Result<(), Failure> {
        while !cipher.is_empty() {
            // Err: the plaintext buffer is full; the rest waits for `read_plain`.
            let Ok(n) = self.conn.read_tls(cipher) else {
                break;
            };
            if n == 0 {
                break;
            }
            if let Err(e) = self.conn.process_new_packets() {
                self.detail = Some(e.to_string());
                return Err(self.fail(Failure::of(&e)));
            }
        }
        Ok(())
    }

    fn process_stash(&mut self) -> Result<(), Failure> {
        let stash = std::mem::take(&mut self.stash);
        let mut rest = &stash[self.stash_at..];
        let r = self.process(&mut rest);
        let taken = stash.len() - self.stash_at - rest.len();
        self.stash = stash;
        self.stash_at += taken;
        if self.stash_at == self.stash.len() {
            self.stash.clear();
            self.stash_at = 0;
        }
        r
    }

    fn fail(&mut self, f: Failure) -> Failure {
        self.failure = Some(f);
        f
    }

    /// Appends at most `max` bytes of decrypted plaintext to `buf`; returns how many. Fewer
    /// than `max` means rustls holds no more plaintext and every complete record fed so far
    /// was processed.
    pub fn read_plain(&mut self, buf: &mut Vec<u8>, max: usize) -> Result<usize, Failure> {
        self.read_with(max, |chunk| buf.extend_from_slice(chunk))
    }

    /// As [`Session::read_plain`], into a slice: fills at most `out`; returns how many.
    pub fn read_into(&mut self, out: &mut [u8]) -> Result<usize, Failure> {
        let mut at = 0;
        self.read_with(out.len(), |chunk| {
            out[at..at + chunk.len()].copy_from_slice(chunk);
            at += chunk.len();
        })
    }

    /// Hands at most `max` bytes of plaintext to `put`, chunk by chunk, processing stashed
    /// ciphertext as rustls makes room.
    fn read_with(&mut self, max: usize, mut put: impl FnMut(&[u8])) -> Result<usize, Failure> {
        let mut got = 0;
        while got < max {
            let mut reader = self.conn.reader();
            match reader.fill_buf() {
                Ok([]) => {
                    self.peer_closed = true;
                    break;
                }
                Ok(chunk) => {
                    let k = chunk.len().min(max - got);
                    put(&chunk[..k]);
                    reader.consume(k);
                    got += k;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    if self.stash_at == self.stash.len() {
                        break;
                    }
                    let before = self.stash_at;
                    self.process_stash()?;
                    if self.stash_at == before {
                        break;
                    }
                }
                // UnexpectedEof: rustls was told of an EOF without close_notify. The caller
                // owns EOF, so this does not happen; treat it as a close all the same.
                Err(_) => {
                    self.peer_closed = true;
                    break;
                }
            }
        }
        Ok(got)
    }

    /// Received input is left that a read may turn into plaintext: decrypted plaintext not
    /// yet read, or ciphertext rustls has not taken yet.
    pub fn has_input(&mut self) -> bool {
        self.stash_at < self.stash.len()
            || matches!(self.conn.reader().fill_buf(), Ok(b) if !b.is_empty())
    }

    /// Encrypts `bytes` (queued by rustls until the handshake is done).
    pub fn write_plain(&mut self, bytes: &[u8]) {
        use std::io::Write;
        // With no buffer limit (see `new`) rustls takes every byte, so `write_all` never
        // loops on a zero-length write.
        let _ = self.conn.writer().write_all(bytes);
    }

    /// The ciphertext to send now (records of everything written, handshake messages,
    /// alerts); report what the socket took with [`Session::sent`].
    pub fn outgoing(&mut self) -> &[u8] {
        while self.conn.wants_write() {
            if self.conn.write_tls(&mut self.out).is_err() {
                break;
            }
        }
        &self.out[self.out_at..]
    }

    /// Ciphertext queued and not yet sent (without collecting what rustls holds).
    pub fn pending_out(&self) -> usize {
        self.out.len() - self.out_at
    }

    /// `n` bytes of [`Session::outgoing`] went out.
    pub fn sent(&mut self, n: usize) {
        self.out_at = (self.out_at + n).min(self.out.len());
        if self.out_at == self.out.len() {
            self.out.clear();
            self.out_at = 0;
        }
    }

    /// Queues a close_notify alert (RFC 8446 §6.1): the end of this side's data.
    pub fn close_notify(&mut self) {
        self.conn.send_close_notify();
    }

    /// The handshake has not completed yet.
    pub fn is_handshaking(&self) -> bool {
        self.conn.is_handshaking()
    }

    /// Bytes have been fed: the peer began a handshake (or sent something else).
    pub fn started(&self) -> bool {
        self.started
    }

    /// The peer sent close_notify: no more plaintext will come.
    pub fn peer_closed(&self) -> bool {
        self.peer_closed
    }

    /// Why the session failed, if it did.
    pub fn failure(&self) -> Option<Failure> {
        self.failure
    }

    /// What rustls said when the session failed, if it did.
    pub fn failure_detail(&self) -> Option<&str> {
        self.detail.as_deref()
    }

    /// Records a failure the caller saw (the peer closed mid-handshake).
    pub fn set_failure(&mut self, f: Failure) {
        self.failure.get_or_insert(f);
    }

    /// The handshake resumed an earlier session (a ticket or session id), skipping the
    /// certificate and the key exchange of a full one.
    pub fn resumed(&self) -> bool {
        self.conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed)
    }

    /// The negotiated protocol version, once known.
    pub fn version(&self) -> Option<rustls::ProtocolVersion> {
        self.conn.protocol_version()
    }

    /// The negotiated cipher suite, once known.
    pub fn suite(&self) -> Option<rustls::CipherSuite> {
        self.conn.negotiated_cipher_suite().map(|s| s.suite())
    }

    /// The ALPN protocol agreed on, if any.
    pub fn alpn(&self) -> Option<&[u8]> {
        self.conn.alpn_protocol()
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
