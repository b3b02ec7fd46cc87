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
