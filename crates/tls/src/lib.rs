//! twelve-tls: TLS for `twelve serve` and `twelve bench` on rustls, as a sans-I/O layer.
//!
//! A [`Session`] sits between a socket's bytes and a plaintext state machine (the engine's
//! `Conn`, the load generator's client conn): ciphertext in, plaintext out, and back. It never
//! sees a socket, so both sides drive it from their own backends and its rules are tested by
//! wiring a client session to a server session in memory. [`ServerTls`] loads PEM certificate
//! chains and keys and swaps them on reload; [`ClientTls`] builds the load generator's client
//! configuration (SNI, roots, `--insecure`, versions, resumption).
//!
//! Crypto provider: aws-lc-rs. Its X25519 takes half of ring's time, which is most of what a
//! full handshake's key exchange costs either side (docs/ARCHITECTURE.md, "TLS"); it builds
//! with a C compiler, no cmake.
#![forbid(unsafe_code)]

mod client;
mod error;
mod server;
mod session;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod tickets;

pub use client::{ClientOptions, ClientTls, TlsVersion};
pub use error::{Failure, TlsError};
pub use rustls::pki_types;
pub use server::ServerTls;
pub use session::Session;

/// The key exchanges both sides offer, in order: X25519, then the NIST curves, as with ring
/// before (and as wrk, h2load and nginx on OpenSSL 3.0 offer). aws-lc-rs's defaults add the
/// X25519MLKEM768 hybrid; a server takes the client's order, so a client that lists the hybrid
/// first (OpenSSL 3.5, browsers) would make every full handshake pay an ML-KEM encapsulation
/// and 1.1 KB more, and a client listing it would invite a HelloRetryRequest from servers that
/// prefer it. Post-quantum key exchange is left for a deliberate, measured choice.
const KX_GROUPS: &[&dyn rustls::crypto::SupportedKxGroup] = &[
    rustls::crypto::aws_lc_rs::kx_group::X25519,
    rustls::crypto::aws_lc_rs::kx_group::SECP256R1,
    rustls::crypto::aws_lc_rs::kx_group::SECP384R1,
];

/// The crypto provider every configuration here uses: aws-lc-rs with [`KX_GROUPS`].
pub(crate) fn provider() -> std::sync::Arc<rustls::crypto::CryptoProvider> {
    let mut p = rustls::crypto::aws_lc_rs::default_provider();
    p.kx_groups = KX_GROUPS.to_vec();
    std::sync::Arc::new(p)
}

/// The load generator's provider: [`provider`]'s, with the AES-128-GCM/SHA-256 suites offered
/// first.
///
/// A TLS 1.3 server takes the client's order, so this decides the suite. rustls lists
/// AES-256-GCM/SHA-384 first, whose handshake hashes with SHA-384: ring has no vector path for
/// SHA-512's block function on x86-64, where SHA-256 runs on the SHA extensions (measured on
/// ring, not on aws-lc-rs: docs/results.md#tls). AES-128 is also four
/// rounds shorter per block than AES-256. TLS_AES_128_GCM_SHA256 is the suite every TLS 1.3
/// implementation must have (RFC 8446 §9.1), and browsers offer it first, so this is also the
/// suite real clients bring.
pub(crate) fn client_provider() -> std::sync::Arc<rustls::crypto::CryptoProvider> {
    use rustls::CipherSuite as S;
    let mut p = rustls::crypto::aws_lc_rs::default_provider();
    p.kx_groups = KX_GROUPS.to_vec();
    // A stable sort: only the AES-128-GCM/SHA-256 suites move, ahead of the rest.
    p.cipher_suites.sort_by_key(|s| {
        !matches!(
            s.suite(),
            S::TLS13_AES_128_GCM_SHA256
                | S::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
                | S::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
        )
    });
    std::sync::Arc::new(p)
}

/// ALPN protocol id of HTTP/1.1 (RFC 7301 §6).
pub const ALPN_HTTP11: &[u8] = b"http/1.1";

/// ALPN protocol id of HTTP/2 over TLS (RFC 9113 §3.2).
pub const ALPN_H2: &[u8] = b"h2";
