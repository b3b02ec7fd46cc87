//! [`ClientTls`]: the load generator's client configuration: trust anchors from the system
//! store or `--cacert`, or none at all with `--insecure`; TLS versions; ALPN `http/1.1` (or `h2`);
//! session resumption on reconnect unless turned off.

use crate::server::read_certs;
use crate::tickets::Tickets;
use crate::{ALPN_HTTP11, Session, TlsError, client_provider};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{ClientConfig, ClientConnection, Resumption, WebPkiServerVerifier};
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
        } else if let Some(path) = &opts.cacert {
            let given = read_certs(path)?;
            let roots = roots(Some(path))?;
            let chain = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| TlsError::NoRoots(format!("{}: {e}", path.display())))?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(CaFile { chain, given }))
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

    /// The same configuration offering only ALPN `h2`: HTTP/2 over TLS (RFC 9113 §3.2), for
    /// `twelve bench --h2`.
    pub fn with_alpn_h2(&self) -> Self {
        let mut config = (*self.config).clone();
        config.alpn_protocols = vec![crate::ALPN_H2.to_vec()];
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

/// `--cacert`: the server's chain must lead to one of the file's certificates, as webpki
/// checks it; and, as curl does, a certificate of the file that the server presents itself is
/// trusted when it names the host. That is what `openssl req -x509` makes by default: a
/// self-signed certificate marked as a CA, which webpki refuses as a server's own
/// (`CaUsedAsEndEntity`). Its dates are not checked on that path, as no trust anchor's are.
#[derive(Debug)]
struct CaFile {
    chain: Arc<WebPkiServerVerifier>,
    given: Vec<CertificateDer<'static>>,
}

impl ServerCertVerifier for CaFile {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let chained = self.chain.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        match chained {
            Err(_) if self.given.iter().any(|c| c.as_ref() == end_entity.as_ref()) => {
                let parsed = rustls::server::ParsedCertificate::try_from(end_entity)?;
                rustls::client::verify_server_name(&parsed, server_name)?;
                Ok(ServerCertVerified::assertion())
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.chain.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.chain.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.chain.supported_verify_schemes()
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Failure, ServerTls};

    /// A self-signed certificate marked as a CA, for `names`, as `openssl req -x509` makes by
    /// default: (cert PEM path, key path) in `dir`.
    fn self_signed_ca(dir: &std::path::Path, names: &[&str]) -> (PathBuf, PathBuf) {
        let key = rcgen::KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = rcgen::CertificateParams::new(names).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let cert = params.self_signed(&key).unwrap();
        std::fs::create_dir_all(dir).unwrap();
        let (c, k) = (dir.join("cert.pem"), dir.join("key.pem"));
        std::fs::write(&c, cert.pem()).unwrap();
        std::fs::write(&k, key.serialize_pem()).unwrap();
        (c, k)
    }

    /// A handshake of a client trusting `cacert` with a server presenting `cert`, in memory.
    fn handshake(
        cert: &std::path::Path,
        key: &std::path::Path,
        cacert: &std::path::Path,
    ) -> Result<(), Failure> {
        let server = ServerTls::load(cert, key).unwrap();
        let client = ClientTls::new(&ClientOptions {
            cacert: Some(cacert.to_path_buf()),
            ..ClientOptions::default()
        })
        .unwrap();
        let (mut s, mut c) = (
            server.session(),
            client.session(&ClientTls::server_name("localhost").unwrap()),
        );
        for _ in 0..32 {
            let cs = c.outgoing().to_vec();
            c.sent(cs.len());
            let sc = s.outgoing().to_vec();
            s.sent(sc.len());
            if cs.is_empty() && sc.is_empty() {
                break;
            }
            s.feed(&cs).ok();
            c.feed(&sc)?;
        }
        assert!(!c.is_handshaking());
        Ok(())
    }

    /// curl accepts a self-signed CA certificate that the server presents itself when it is
    /// given with --cacert; so does the client, still checking the host name.
    #[test]
    fn a_cacert_the_server_presents_itself_is_trusted_for_its_names() {
        let dir = std::env::temp_dir().join(format!("twelve-ca-leaf-{}", std::process::id()));
        let (cert, key) = self_signed_ca(&dir.join("good"), &["localhost"]);
        assert_eq!(handshake(&cert, &key, &cert), Ok(()));
        let (cert, key) = self_signed_ca(&dir.join("wrong"), &["wrong.example"]);
        assert_eq!(handshake(&cert, &key, &cert), Err(Failure::CertificateName));
        // Another self-signed CA certificate in the file is no help.
        let (other, _) = self_signed_ca(&dir.join("other"), &["localhost"]);
        let (cert, key) = self_signed_ca(&dir.join("served"), &["localhost"]);
        assert!(handshake(&cert, &key, &other).unwrap_err().is_certificate());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
