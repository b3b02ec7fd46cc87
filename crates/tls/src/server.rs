//! [`ServerTls`]: the server's configuration: a PEM certificate chain and key, TLS 1.2 and
//! 1.3, ALPN `h2` and `http/1.1`, session resumption by tickets (and by id for TLS 1.2), and a
//! certificate that [`ServerTls::reload`] swaps without touching open connections.

use crate::{ALPN_H2, ALPN_HTTP11, Session, TlsError, provider};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert, ServerConfig, ServerConnection};
use rustls::sign::CertifiedKey;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

/// The certificate every handshake gets, replaceable while connections run: a handshake
/// takes the `Arc` current when it starts, so connections already established, and those
/// mid-handshake, keep the key they began with (the Let's Encrypt case: a renewed certificate
/// is picked up by SIGHUP, nothing is dropped).
#[derive(Debug)]
struct Current(RwLock<Arc<CertifiedKey>>);

impl ResolvesServerCert for Current {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        // A poisoned lock means a reload panicked mid-swap, which `reload` cannot do (it
        // builds the new key first): take the value anyway.
        Some(match self.0.read() {
            Ok(k) => Arc::clone(&k),
            Err(p) => Arc::clone(&p.into_inner()),
        })
    }
}

/// A server's TLS configuration, shared by every worker.
#[derive(Debug)]
pub struct ServerTls {
    config: Arc<ServerConfig>,
    /// The same, offering ALPN `http/1.1` alone (same certificate, tickets and cache).
    config_http11: Arc<ServerConfig>,
    current: Arc<Current>,
    cert_path: PathBuf,
    key_path: PathBuf,
}

impl ServerTls {
    /// Loads `cert` (PEM: the leaf first, then its chain) and `key` (PEM: PKCS#8, PKCS#1 RSA
    /// or SEC1 EC).
    pub fn load(cert: &Path, key: &Path) -> Result<Self, TlsError> {
        let provider = provider();
        let current = Arc::new(Current(RwLock::new(Arc::new(certified_key(
            cert, key, &provider,
        )?))));
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
            .map_err(TlsError::Config)?
            .with_no_client_auth()
            .with_cert_resolver(Arc::clone(&current) as Arc<dyn ResolvesServerCert>);
        // The server's order decides (rustls picks the first of its own the client offers):
        // HTTP/2 for every client that speaks it, as nginx and h2o do.
        config.alpn_protocols = vec![ALPN_H2.to_vec(), ALPN_HTTP11.to_vec()];
        // Tickets (RFC 8446 §4.6.1, RFC 5077) keep resumption stateless across the
        // shared-nothing workers: any worker can decrypt a ticket another issued, where a
        // session-id cache would be per process and locked.
        config.ticketer = rustls::crypto::aws_lc_rs::Ticketer::new().map_err(TlsError::Config)?;
        let mut http11 = config.clone();
        http11.alpn_protocols = vec![ALPN_HTTP11.to_vec()];
        Ok(Self {
            config: Arc::new(config),
            config_http11: Arc::new(http11),
            current,
            cert_path: cert.to_owned(),
            key_path: key.to_owned(),
        })
    }

    /// Reads the certificate and key files again and, if both load and match, serves the new
    /// certificate to every handshake from now on. On error the old one stays.
    pub fn reload(&self) -> Result<(), TlsError> {
        let key = certified_key(&self.cert_path, &self.key_path, &provider())?;
        let mut slot = match self.current.0.write() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        *slot = Arc::new(key);
        Ok(())
    }

    /// A new server-side session for an accepted connection, offering ALPN `h2` and
    /// `http/1.1`.
    pub fn session(&self) -> Session {
        Self::new_session(&self.config)
    }

    /// A new server-side session that offers ALPN `http/1.1` alone: a listener that speaks
    /// HTTP/1.1 only over TLS (nginx's `listen ssl` without `http2`), where a client that
    /// offers `h2` too settles on HTTP/1.1.
    pub fn session_http11(&self) -> Session {
        Self::new_session(&self.config_http11)
    }

    fn new_session(config: &Arc<ServerConfig>) -> Session {
        // `ServerConnection::new` fails only on a configuration error (no versions, a
        // provider without suites), which `load` ruled out.
        let conn = ServerConnection::new(Arc::clone(config))
            .expect("configuration checked when it was built");
        Session::new(conn.into())
    }

    /// The certificate file, for messages.
    pub fn cert_path(&self) -> &Path {
        &self.cert_path
    }

    /// The DER of the leaf certificate served now (tests compare it across a reload).
    pub fn leaf_der(&self) -> Vec<u8> {
        let k = self.current.resolve_any();
        k.cert.first().map(|c| c.to_vec()).unwrap_or_default()
    }
}

impl Current {
    fn resolve_any(&self) -> Arc<CertifiedKey> {
        match self.0.read() {
            Ok(k) => Arc::clone(&k),
            Err(p) => Arc::clone(&p.into_inner()),
        }
    }
}

/// Reads a PEM file's certificates, in order.
pub(crate) fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let read = |detail: String| TlsError::Read {
        path: path.to_owned(),
        detail,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| read(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| read(e.to_string()))?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificates(path.to_owned()));
    }
    Ok(certs)
}

fn certified_key(
    cert: &Path,
    key: &Path,
    provider: &CryptoProvider,
) -> Result<CertifiedKey, TlsError> {
    let certs = read_certs(cert)?;
    let der = PrivateKeyDer::from_pem_file(key).map_err(|e| match e {
        rustls::pki_types::pem::Error::NoItemsFound => TlsError::NoKey(key.to_owned()),
        e => TlsError::Read {
            path: key.to_owned(),
            detail: e.to_string(),
        },
    })?;
    let bad_key = |e: rustls::Error| TlsError::Key {
        path: key.to_owned(),
        detail: e.to_string(),
    };
    let signer = provider
        .key_provider
        .load_private_key(der)
        .map_err(bad_key)?;
    let ck = CertifiedKey::new(certs, signer);
    ck.keys_match().map_err(bad_key)?;
    Ok(ck)
}
