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
                self.detail = Some(crate::error::detail(&e));
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
                    let left = self.stash.len() - self.stash_at;
                    if left == 0 {
                        break;
                    }
                    self.process_stash()?;
                    // Progress is what is left, not `stash_at`: a stash taken whole is
                    // cleared and `stash_at` is back at 0, which is progress too.
                    if self.stash.len() - self.stash_at == left {
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
mod tests {
    //! Session tests: a client session wired to a server session in memory, with certificates
    //! made at test time.

    use super::*;
    use crate::testing::Pki;
    use crate::{ClientOptions, ClientTls, ServerTls, TlsError, TlsVersion};
    use std::path::Path;

    fn pki(tag: &str) -> Pki {
        Pki::new(tag)
    }

    /// Moves ciphertext both ways until neither side has anything to send.
    fn shuttle(a: &mut Session, b: &mut Session) -> Result<(), Failure> {
        for _ in 0..32 {
            let ab = a.outgoing().to_vec();
            a.sent(ab.len());
            let ba = b.outgoing().to_vec();
            b.sent(ba.len());
            if ab.is_empty() && ba.is_empty() {
                return Ok(());
            }
            b.feed(&ab)?;
            a.feed(&ba)?;
        }
        panic!("handshake did not settle");
    }

    fn pair(p: &Pki, version: TlsVersion) -> (ServerTls, ClientTls) {
        let server = ServerTls::load(&p.cert, &p.key).unwrap();
        let client = ClientTls::new(&ClientOptions {
            cacert: Some(p.ca_pem.clone()),
            version,
            resume: true,
            ..ClientOptions::default()
        })
        .unwrap();
        (server, client)
    }

    fn localhost() -> rustls::pki_types::ServerName<'static> {
        ClientTls::server_name("localhost").unwrap()
    }

    #[test]
    fn handshake_then_plaintext_both_ways_on_both_versions() {
        let p = pki("both");
        for v in [TlsVersion::V1_2, TlsVersion::V1_3] {
            let (server, client) = pair(&p, v);
            let mut s = server.session();
            let mut c = client.session(&localhost());
            c.write_plain(b"GET / HTTP/1.1\r\n\r\n");
            shuttle(&mut c, &mut s).unwrap();
            assert!(!s.is_handshaking() && !c.is_handshaking());
            assert_eq!(s.alpn(), Some(ALPN));
            let want = match v {
                TlsVersion::V1_2 => rustls::ProtocolVersion::TLSv1_2,
                _ => rustls::ProtocolVersion::TLSv1_3,
            };
            assert_eq!(s.version(), Some(want));
            let mut got = Vec::new();
            assert_eq!(s.read_plain(&mut got, 1024), Ok(18));
            assert_eq!(got, b"GET / HTTP/1.1\r\n\r\n");
            s.write_plain(b"HTTP/1.1 200 OK\r\n\r\n");
            shuttle(&mut s, &mut c).unwrap();
            got.clear();
            assert_eq!(c.read_plain(&mut got, 1024), Ok(19));
            s.close_notify();
            shuttle(&mut s, &mut c).unwrap();
            assert_eq!(c.read_plain(&mut got, 1024), Ok(0));
            assert!(c.peer_closed());
        }
    }

    const ALPN: &[u8] = b"http/1.1";

    /// A large body read the way a socket delivers it (reads of any size, each followed by
    /// `read_plain`) arrives whole: ciphertext stashed while rustls's plaintext buffer was
    /// full is decrypted once there is room, down to the last record, with no more input.
    #[test]
    fn a_body_fed_in_reads_of_any_size_arrives_whole() {
        let p = pki("reads-of-any-size");
        let (server, client) = pair(&p, TlsVersion::Any);
        let body: Vec<u8> = (0..4 << 20).map(|i: u32| (i % 251) as u8).collect();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for round in 0..8 {
            let mut c = client.session(&localhost());
            let mut s = server.session();
            shuttle(&mut c, &mut s).unwrap();
            for chunk in body.chunks(64 * 1024) {
                s.write_plain(chunk);
            }
            let cipher = s.outgoing().to_vec();
            let (mut got, mut at) = (Vec::new(), 0);
            while at < cipher.len() {
                // xorshift64: read sizes from 1 byte to 64 KiB.
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let n = (x % 65_536) as usize + 1;
                let piece = &cipher[at..(at + n).min(cipher.len())];
                c.feed(piece).unwrap();
                c.read_plain(&mut got, usize::MAX).unwrap();
                at += piece.len();
            }
            assert_eq!(got.len(), body.len(), "round {round}");
            assert!(got == body, "round {round}: the bytes differ");
        }
    }

    /// A client offering `h2` then `http/1.1`, as browsers and curl do.
    fn client_offering_both(p: &Pki) -> Session {
        let mut roots = rustls::RootCertStore::empty();
        for c in crate::server::read_certs(&p.ca_pem).unwrap() {
            roots.add(c).unwrap();
        }
        let mut config = rustls::ClientConfig::builder_with_provider(crate::provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![crate::ALPN_H2.to_vec(), ALPN.to_vec()];
        let conn = rustls::ClientConnection::new(std::sync::Arc::new(config), localhost());
        Session::new(conn.unwrap().into())
    }

    /// `session` offers `h2` first; `session_http11` offers `http/1.1` alone, so a client
    /// that offers both settles on HTTP/1.1 (HttpArena's json-tls port).
    #[test]
    fn an_http11_only_session_gives_http11_to_a_client_that_offers_h2() {
        let p = pki("alpn-http11");
        let server = ServerTls::load(&p.cert, &p.key).unwrap();
        for (http11_only, want) in [(false, crate::ALPN_H2), (true, ALPN)] {
            let mut s = if http11_only {
                server.session_http11()
            } else {
                server.session()
            };
            let mut c = client_offering_both(&p);
            shuttle(&mut c, &mut s).unwrap();
            assert!(!s.is_handshaking() && !c.is_handshaking());
            assert_eq!((s.alpn(), c.alpn()), (Some(want), Some(want)));
        }
    }

    /// Both sides offer exactly X25519, P-256 and P-384, in that order (`KX_GROUPS`): no
    /// post-quantum hybrid slips in with a provider's defaults.
    #[test]
    fn both_sides_offer_the_same_three_key_exchanges() {
        use rustls::NamedGroup as G;
        for p in [crate::provider(), crate::client_provider()] {
            let groups: Vec<G> = p.kx_groups.iter().map(|g| g.name()).collect();
            assert_eq!(groups, [G::X25519, G::secp256r1, G::secp384r1]);
        }
    }

    /// The load generator offers AES-128-GCM with SHA-256 first (see `client_provider`), and
    /// the server takes the client's order, on both versions.
    #[test]
    fn the_client_brings_aes_128_gcm_sha256_first() {
        use rustls::CipherSuite as S;
        let p = pki("suite");
        for (v, want) in [
            (TlsVersion::V1_3, [S::TLS13_AES_128_GCM_SHA256; 2]),
            (
                TlsVersion::V1_2,
                [
                    S::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
                    S::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
                ],
            ),
        ] {
            let (server, client) = pair(&p, v);
            let mut s = server.session();
            let mut c = client.session(&localhost());
            c.write_plain(b"GET / HTTP/1.1\r\n\r\n");
            shuttle(&mut c, &mut s).unwrap();
            let got = c.suite().unwrap();
            assert!(want.contains(&got), "{v:?}: {got:?}");
            assert_eq!(s.suite(), Some(got));
        }
    }

    #[test]
    fn a_second_connection_resumes_on_both_versions() {
        let p = pki("resume");
        for v in [TlsVersion::V1_2, TlsVersion::V1_3] {
            let (server, client) = pair(&p, v);
            for round in 0..2 {
                let mut s = server.session();
                let mut c = client.session(&localhost());
                c.write_plain(b"x");
                shuttle(&mut c, &mut s).unwrap();
                assert_eq!(s.resumed(), round == 1, "{v:?} round {round}");
                assert_eq!(c.resumed(), round == 1, "{v:?} round {round}");
            }
        }
    }

    #[test]
    fn read_plain_respects_max_and_takes_the_rest_later() {
        let p = pki("max");
        let (server, client) = pair(&p, TlsVersion::Any);
        let (mut s, mut c) = (server.session(), client.session(&localhost()));
        let body = vec![b'a'; 100_000];
        c.write_plain(&body);
        shuttle(&mut c, &mut s).unwrap();
        let mut got = Vec::new();
        while got.len() < body.len() {
            let n = s.read_plain(&mut got, 7000).unwrap();
            assert!(n > 0 && n <= 7000);
        }
        assert_eq!(got, body);
        assert_eq!(s.read_plain(&mut got, 7000), Ok(0));
        assert!(!s.peer_closed());
    }

    #[test]
    fn byte_at_a_time_handshake_completes() {
        let p = pki("bytes");
        let (server, client) = pair(&p, TlsVersion::Any);
        let (mut s, mut c) = (server.session(), client.session(&localhost()));
        c.write_plain(b"hello");
        for _ in 0..16 {
            let ab = c.outgoing().to_vec();
            c.sent(ab.len());
            for b in ab.chunks(1) {
                s.feed(b).unwrap();
            }
            let ba = s.outgoing().to_vec();
            s.sent(ba.len());
            for b in ba.chunks(1) {
                c.feed(b).unwrap();
            }
        }
        let mut got = Vec::new();
        s.read_plain(&mut got, 100).unwrap();
        assert_eq!(got, b"hello");
    }

    macro_rules! bad_input {
        ($($name:ident: $bytes:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                let p = pki(stringify!($name));
                let server = ServerTls::load(&p.cert, &p.key).unwrap();
                let mut s = server.session();
                assert_eq!(s.feed($bytes), Err($want));
                assert_eq!(s.failure(), Some($want));
                // Failed for good: more input changes nothing.
                assert_eq!(s.feed(b"\x16\x03\x01"), Err($want));
            }
        )*};
    }

    bad_input! {
        plaintext_request_to_a_tls_port: b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" => Failure::Plaintext;
        garbage_record_type: b"\x99\x03\x03\x00\x05hello" => Failure::BadRecord;
        oversized_record_length: b"\x16\x03\x03\xff\xff" => Failure::BadRecord;
        application_data_before_handshake: b"\x17\x03\x03\x00\x05hello" => Failure::Handshake;
    }

    #[test]
    fn wrong_host_name_fails_verification_as_a_name_error() {
        let p = pki("name");
        let (server, client) = pair(&p, TlsVersion::Any);
        let mut s = server.session();
        let mut c = client.session(&ClientTls::server_name("example.com").unwrap());
        assert_eq!(shuttle(&mut c, &mut s), Err(Failure::CertificateName));
    }

    #[test]
    fn unknown_issuer_fails_as_untrusted_and_insecure_accepts_it() {
        let p = pki("issuer");
        let other = pki("issuer-other");
        let server = ServerTls::load(&p.cert, &p.key).unwrap();
        let strict = ClientTls::new(&ClientOptions {
            cacert: Some(other.ca_pem.clone()),
            ..ClientOptions::default()
        })
        .unwrap();
        let mut s = server.session();
        let mut c = strict.session(&localhost());
        assert_eq!(shuttle(&mut c, &mut s), Err(Failure::CertificateUntrusted));
        let insecure = ClientTls::new(&ClientOptions {
            insecure: true,
            ..ClientOptions::default()
        })
        .unwrap();
        let mut s = server.session();
        let mut c = insecure.session(&ClientTls::server_name("example.com").unwrap());
        shuttle(&mut c, &mut s).unwrap();
        assert!(!c.is_handshaking());
    }

    #[test]
    fn reload_swaps_the_certificate_and_a_bad_file_keeps_the_old_one() {
        let p = pki("reload");
        let server = ServerTls::load(&p.cert, &p.key).unwrap();
        let before = server.leaf_der();
        let fresh = pki("reload-new");
        std::fs::copy(&fresh.cert, &p.cert).unwrap();
        std::fs::copy(&fresh.key, &p.key).unwrap();
        server.reload().unwrap();
        let after = server.leaf_der();
        assert_ne!(before, after);
        std::fs::write(&p.key, "not a key").unwrap();
        assert!(matches!(server.reload(), Err(TlsError::NoKey(_))));
        assert_eq!(server.leaf_der(), after);
    }

    #[test]
    fn load_errors_name_the_file() {
        let p = pki("errors");
        let missing = Path::new("/nonexistent/cert.pem");
        let e = ServerTls::load(missing, &p.key).unwrap_err().to_string();
        assert!(e.contains("/nonexistent/cert.pem"), "{e}");
        let e = ServerTls::load(&p.key, &p.key).unwrap_err().to_string();
        assert!(e.contains("no PEM certificate"), "{e}");
        // A key that belongs to another certificate.
        let other = pki("errors-other");
        let e = ServerTls::load(&p.cert, &other.key)
            .unwrap_err()
            .to_string();
        assert!(e.contains("key.pem"), "{e}");
    }
}
