//! Handshake and record cost of rustls's crypto providers, in one process: full and resumed
//! TLS 1.3 handshakes (client and server together, in memory) and 16 KiB application records
//! (encrypt and decrypt). The measurement behind twelve-tls's choice of provider.
//!
//! `cargo run --release -p twelve-tls --example provider --features testing`            (aws-lc)
//! `cargo run --release -p twelve-tls --example provider --features testing,ring`       (both)
//!
//! Figures from a shared, noisy machine are indications, not claims.
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, ServerConfig, ServerConnection};
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Instant;
use twelve_tls::testing::Pki;

/// Each provider's own session-ticket encrypter, so that resumption is measured on one
/// provider throughout.
type Ticketer = fn() -> Result<Arc<dyn rustls::server::ProducesTickets>, rustls::Error>;

fn configs(
    pki: &Pki,
    provider: CryptoProvider,
    ticketer: Ticketer,
) -> (Arc<ServerConfig>, Arc<ClientConfig>) {
    let provider = Arc::new(provider);
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&pki.cert)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let key = PrivateKeyDer::from_pem_file(&pki.key).unwrap();
    let mut server = ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    server.ticketer = ticketer().unwrap();
    let mut roots = RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(&pki.ca_pem).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let client = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    (Arc::new(server), Arc::new(client))
}

fn shuttle(c: &mut ClientConnection, s: &mut ServerConnection) {
    let mut buf = Vec::new();
    loop {
        buf.clear();
        while c.wants_write() {
            c.write_tls(&mut buf).unwrap();
        }
        let from_client = !buf.is_empty();
        let mut rest = &buf[..];
        while !rest.is_empty() {
            // read_tls takes at most a few records per call.
            s.read_tls(&mut rest).unwrap();
            s.process_new_packets().unwrap();
        }
        buf.clear();
        while s.wants_write() {
            s.write_tls(&mut buf).unwrap();
        }
        let from_server = !buf.is_empty();
        let mut rest = &buf[..];
        while !rest.is_empty() {
            c.read_tls(&mut rest).unwrap();
            c.process_new_packets().unwrap();
        }
        if !from_client && !from_server {
            return;
        }
    }
}

fn handshakes(server: &Arc<ServerConfig>, client: &Arc<ClientConfig>, n: u32) -> f64 {
    let name = ServerName::try_from("localhost").unwrap();
    let t = Instant::now();
    for _ in 0..n {
        let mut c = ClientConnection::new(Arc::clone(client), name.clone()).unwrap();
        let mut s = ServerConnection::new(Arc::clone(server)).unwrap();
        shuttle(&mut c, &mut s);
        assert!(!c.is_handshaking());
    }
    t.elapsed().as_nanos() as f64 / f64::from(n)
}

fn records(server: &Arc<ServerConfig>, client: &Arc<ClientConfig>, n: u32) -> f64 {
    let name = ServerName::try_from("localhost").unwrap();
    let mut c = ClientConnection::new(Arc::clone(client), name).unwrap();
    let mut s = ServerConnection::new(Arc::clone(server)).unwrap();
    shuttle(&mut c, &mut s);
    let chunk = vec![7u8; 16 * 1024];
    let mut out = vec![0u8; 16 * 1024];
    let t = Instant::now();
    for _ in 0..n {
        s.writer().write_all(&chunk).unwrap();
        shuttle(&mut c, &mut s);
        c.reader().read_exact(&mut out).unwrap();
    }
    t.elapsed().as_nanos() as f64 / f64::from(n)
}

fn measure(name: &str, provider: impl Fn() -> CryptoProvider, ticketer: Ticketer, pki: &Pki) {
    let (server, client) = configs(pki, provider(), ticketer);
    let (_, no_resume) = {
        let (s, c) = configs(pki, provider(), ticketer);
        let mut c = (*c).clone();
        c.resumption = rustls::client::Resumption::disabled();
        (s, Arc::new(c))
    };
    let full = handshakes(&server, &no_resume, 400);
    let resumed = handshakes(&server, &client, 400);
    let record = records(&server, &client, 4000);
    println!(
        "{name:<8} full handshake {:>8.1} us   resumed {:>8.1} us   16 KiB record {:>6.2} us ({:.0} MB/s)",
        full / 1e3,
        resumed / 1e3,
        record / 1e3,
        16384.0 / record * 1e3
    );
}

fn main() {
    // ECDSA P-256 (rcgen's default key), the usual choice for a fast edge.
    let pki = Pki::new("provider-bench");
    for round in 0..3 {
        println!("round {round}");
        measure(
            "aws-lc",
            rustls::crypto::aws_lc_rs::default_provider,
            rustls::crypto::aws_lc_rs::Ticketer::new,
            &pki,
        );
        #[cfg(feature = "ring")]
        measure(
            "ring",
            rustls::crypto::ring::default_provider,
            rustls::crypto::ring::Ticketer::new,
            &pki,
        );
    }
}
