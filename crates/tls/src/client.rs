//! [`ClientTls`]: the load generator's client configuration: trust anchors from the system
//! store or `--cacert`, or none at all with `--insecure`; TLS versions; ALPN `http/1.1`;
//! session resumption on reconnect unless turned off.

use crate::server::read_certs;
use crate::tickets::Tickets;
use crate::{ALPN_HTTP11, Session, TlsError, client_provider};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{ClientConfig, ClientConnection, Resumption};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::path::PathBuf;
use std::sync::Arc;

/// `--tls-version`: pin one protocol version, or allow both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TlsVersion {
    #[default]
    Any,
    V1_2,
    V1_3,
}

impl std::str::FromStr for TlsVersion {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "any" => Ok(Self::Any),
            "1.2" => Ok(Self::V1_2),
            "1.3" => Ok(Self::V1_3),
            _ => Err(format!("{s:?}: expected 1.2, 1.3 or any")),
        }
    }
}

/// What the client's TLS flags say.
#[derive(Clone, Debug, Default)]
pub struct ClientOptions {
    /// Skip certificate verification entirely (`--insecure`).
    pub insecure: bool,
    /// Trust only the certificates in this PEM file (`--cacert`); else the system store.
    pub cacert: Option<PathBuf>,
    pub version: TlsVersion,
    /// Resume sessions on reconnect (tickets, or session ids for TLS 1.2).
    pub resume: bool,
}

/// A client configuration shared by every connection of a run.
#[derive(Clone, Debug)]
pub struct ClientTls {
    config: Arc<ClientConfig>,
    trust: Arc<str>,
}

impl ClientTls {
    pub fn new(opts: &ClientOptions) -> Result<Self, TlsError> {
        let provider = client_provider();
        let versions: &[&rustls::SupportedProtocolVersion] = match opts.version {
            TlsVersion::Any => &[&rustls::version::TLS13, &rustls::version::TLS12],
            TlsVersion::V1_2 => &[&rustls::version::TLS12],
            TlsVersion::V1_3 => &[&rustls::version::TLS13],
        };
        let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_protocol_versions(versions)
            .map_err(TlsError::Config)?;
        let mut config = if opts.insecure {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
                .with_no_client_auth()
        } else {
            builder
                .with_root_certificates(roots(opts.cacert.as_ref())?)
                .with_no_client_auth()
        };
        config.alpn_protocols = vec![ALPN_HTTP11.to_vec()];
        config.resumption = if opts.resume {
            // Every ticket kept, not rustls's 8 per server (see `Tickets`).
            Resumption::store(Arc::new(Tickets::default()))
        } else {
            Resumption::disabled()
        };
        let trust = match (&opts.insecure, &opts.cacert) {
            (true, _) => {
                "INSECURE: the server's certificate is NOT verified (--insecure)".to_owned()
            }
            (false, Some(p)) => format!("certificate verified against --cacert {}", p.display()),
            (false, None) => "certificate verified against the system's roots".to_owned(),
        };
        let resume = if opts.resume {
            "resumption on"
        } else {
            "resumption off"
        };
        Ok(Self {
            config: Arc::new(config),
            trust: format!("{trust}; {resume}").into(),
        })
    }

    /// How the server is trusted and whether sessions resume, for the report: says loudly
    /// when nothing is verified.
    pub fn describe(&self) -> &str {
        &self.trust
    }

    /// Certificate verification is off (`--insecure`).
    pub fn is_insecure(&self) -> bool {
        self.trust.starts_with("INSECURE")
    }

    /// The same configuration with resumption off: a connection that must leave no session
    /// behind for later ones (a preflight check).
    pub fn without_resumption(&self) -> Self {
        let mut config = (*self.config).clone();
        config.resumption = Resumption::disabled();
        Self {
            config: Arc::new(config),
            trust: Arc::clone(&self.trust),
        }
    }

    /// The SNI name of a URL's host (a DNS name, or an IP address, which is sent no SNI).
    pub fn server_name(host: &str) -> Result<ServerName<'static>, TlsError> {
        let bare = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        ServerName::try_from(bare.to_owned()).map_err(|_| TlsError::ServerName(host.to_owned()))
    }

    /// A new client session to `name`; it resumes a session of an earlier connection to the
    /// same name when the configuration allows.
    pub fn session(&self, name: &ServerName<'static>) -> Session {
        // Fails only on a configuration error, ruled out when it was built.
        let conn = ClientConnection::new(Arc::clone(&self.config), name.clone())
            .expect("configuration checked when it was built");
        Session::new(conn.into())
    }
}

fn roots(cacert: Option<&PathBuf>) -> Result<RootCertStore, TlsError> {
    let mut store = RootCertStore::empty();
    if let Some(path) = cacert {
        let (_, bad) = store.add_parsable_certificates(read_certs(path)?);
        if store.is_empty() {
            return Err(TlsError::NoRoots(format!(
                "{}: {bad} certificate(s), none usable as a trust anchor",
                path.display()
            )));
        }
        return Ok(store);
    }
    let found = rustls_native_certs::load_native_certs();
    store.add_parsable_certificates(found.certs);
    if store.is_empty() {
        let why = found
            .errors
            .first()
            .map_or_else(|| "the system store is empty".to_owned(), |e| e.to_string());
        return Err(TlsError::NoRoots(format!(
            "{why} (give --cacert FILE, or --insecure)"
        )));
    }
    Ok(store)
}

/// `--insecure`: accepts any certificate. Handshake signatures are still checked, so the
/// handshake costs what a verified one does apart from the chain.
#[derive(Debug)]
struct NoVerify(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
