//! twelve-tls: TLS for `twelve serve` and `twelve bench` on rustls, as a sans-I/O layer.
//!
//! A [`Session`] sits between a socket's bytes and a plaintext state machine (the engine's
//! `Conn`, the load generator's client conn): ciphertext in, plaintext out, and back. It never
//! sees a socket, so both sides drive it from their own backends and its rules are tested by
//! wiring a client session to a server session in memory. [`ServerTls`] loads PEM certificate
//! chains and keys and swaps them on reload; [`ClientTls`] builds the load generator's client
//! configuration (SNI, roots, `--insecure`, versions, resumption).
//!
//! Crypto provider: ring. It builds with a C compiler only, where aws-lc-rs needs cmake on
//! this machine and in CI (docs/ARCHITECTURE.md, "TLS").
#![forbid(unsafe_code)]

mod client;
mod error;
mod server;
mod session;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use client::{ClientOptions, ClientTls, TlsVersion};
pub use error::{Failure, TlsError};
pub use rustls::pki_types;
pub use server::ServerTls;
pub use session::Session;

/// The crypto provider every configuration here uses.
pub(crate) fn provider() -> std::sync::Arc<rustls::crypto::CryptoProvider> {
    std::sync::Arc::new(rustls::crypto::ring::default_provider())
}

/// ALPN protocol id of HTTP/1.1 (RFC 7301 §6): the only protocol either side speaks.
pub const ALPN_HTTP11: &[u8] = b"http/1.1";
