//! Errors: [`TlsError`] for setting up (files, keys, configuration), [`Failure`] for one
//! session's bad input or failed verification, a `Copy` enum counted per kind.

use rustls::{AlertDescription, CertificateError, InvalidMessage};
use std::path::PathBuf;

/// Why a TLS configuration could not be built.
#[derive(Debug)]
pub enum TlsError {
    /// A file could not be read or parsed as PEM.
    Read { path: PathBuf, detail: String },
    /// The certificate file held no certificate.
    NoCertificates(PathBuf),
    /// The key file held no private key (PKCS#8, PKCS#1 RSA or SEC1 EC).
    NoKey(PathBuf),
    /// The key does not match the first certificate, or the key type is unsupported.
    Key { path: PathBuf, detail: String },
    /// rustls refused the configuration.
    Config(rustls::Error),
    /// The host name is not a valid DNS name or IP address for SNI.
    ServerName(String),
    /// No trust anchor could be loaded (system store empty, `--cacert` had none usable).
    NoRoots(String),
}

impl std::fmt::Display for TlsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Read { path, detail } => write!(f, "{}: {detail}", path.display()),
            Self::NoCertificates(p) => write!(f, "{}: no PEM certificate in it", p.display()),
            Self::NoKey(p) => write!(
                f,
                "{}: no PEM private key in it (PKCS#8, RSA or EC)",
                p.display()
            ),
            Self::Key { path, detail } => write!(f, "{}: {detail}", path.display()),
            Self::Config(e) => write!(f, "TLS configuration: {e}"),
            Self::ServerName(h) => write!(f, "{h:?} is not a valid TLS server name"),
            Self::NoRoots(why) => write!(f, "no trusted root certificates: {why}"),
        }
    }
}

impl std::error::Error for TlsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Config(e) => Some(e),
            _ => None,
        }
    }
}

/// Why one session failed: the peer's bad input, its alert, or (client side) a certificate
/// that did not verify. One variant per counted kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Failure {
    /// The first bytes were plaintext HTTP, not a TLS record (a request to a TLS port).
    Plaintext,
    /// A record that is not TLS: bad content type, length, or encoding; or a record that does
    /// not decrypt.
    BadRecord,
    /// The handshake failed: no common version, cipher suite or ALPN, an unexpected message.
    Handshake,
    /// The peer sent a fatal alert.
    PeerAlert,
    /// The peer closed the connection during the handshake.
    Truncated,
    /// The server's certificate is not valid for the host name asked for.
    CertificateName,
    /// The server's certificate has expired (or is not valid yet).
    CertificateExpired,
    /// The server's certificate chain does not lead to a trusted root.
    CertificateUntrusted,
    /// Another certificate problem (bad encoding, revoked, wrong usage).
    Certificate,
}

impl Failure {
    /// Every kind, in [`Failure::index`] order.
    pub const ALL: [Failure; 9] = [
        Self::Plaintext,
        Self::BadRecord,
        Self::Handshake,
        Self::PeerAlert,
        Self::Truncated,
        Self::CertificateName,
        Self::CertificateExpired,
        Self::CertificateUntrusted,
        Self::Certificate,
    ];

    /// A dense index for counter arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// A snake_case name for metrics labels and reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Plaintext => "plaintext",
            Self::BadRecord => "bad_record",
            Self::Handshake => "handshake",
            Self::PeerAlert => "peer_alert",
            Self::Truncated => "truncated",
            Self::CertificateName => "certificate_name",
            Self::CertificateExpired => "certificate_expired",
            Self::CertificateUntrusted => "certificate_untrusted",
            Self::Certificate => "certificate",
        }
    }

    /// Whether this is a certificate verification failure (the client's to report loudly).
    pub fn is_certificate(self) -> bool {
        matches!(
            self,
            Self::CertificateName
                | Self::CertificateExpired
                | Self::CertificateUntrusted
                | Self::Certificate
        )
    }

    /// The kind of a rustls error raised while processing the peer's records.
    pub(crate) fn of(e: &rustls::Error) -> Self {
        use rustls::Error as E;
        match e {
            E::InvalidMessage(InvalidMessage::InvalidContentType) => Self::BadRecord,
            E::InvalidMessage(_) | E::DecryptError => Self::BadRecord,
            E::AlertReceived(AlertDescription::CloseNotify) => Self::Truncated,
            E::AlertReceived(_) => Self::PeerAlert,
            E::InvalidCertificate(c) => match c {
                CertificateError::NotValidForName
                | CertificateError::NotValidForNameContext { .. } => Self::CertificateName,
                CertificateError::Expired
                | CertificateError::ExpiredContext { .. }
                | CertificateError::NotValidYet
                | CertificateError::NotValidYetContext { .. } => Self::CertificateExpired,
                CertificateError::UnknownIssuer => Self::CertificateUntrusted,
                _ => Self::Certificate,
            },
            _ => Self::Handshake,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Plaintext => "plaintext HTTP sent to a TLS port",
            Self::BadRecord => "a record that is not valid TLS",
            Self::Handshake => "TLS handshake failed",
            Self::PeerAlert => "the peer sent a fatal TLS alert",
            Self::Truncated => "the peer closed during the TLS handshake",
            Self::CertificateName => "the certificate is not valid for the host name",
            Self::CertificateExpired => "the certificate has expired or is not yet valid",
            Self::CertificateUntrusted => "the certificate is not signed by a trusted root",
            Self::Certificate => "the certificate is invalid",
        })
    }
}

/// What rustls said, in words: a certificate error rustls can only show as Rust debug text
/// (`Other(OtherError(CaUsedAsEndEntity))`) is named plainly.
pub(crate) fn detail(e: &rustls::Error) -> String {
    let text = e.to_string();
    let Some(inner) = text
        .split_once("Other(OtherError(")
        .map(|(_, rest)| rest.trim_end_matches(')'))
    else {
        return text;
    };
    match inner {
        "CaUsedAsEndEntity" => {
            "the server presented a CA certificate as its own (give that certificate itself \
             with --cacert to trust it)"
                .to_owned()
        }
        other => format!("invalid peer certificate ({other})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::OtherError;
    use std::sync::Arc;

    /// Stands in for webpki's error of that name: rustls shows it as debug text.
    #[derive(Debug)]
    struct CaUsedAsEndEntity;

    impl std::fmt::Display for CaUsedAsEndEntity {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("CaUsedAsEndEntity")
        }
    }

    impl std::error::Error for CaUsedAsEndEntity {}

    #[test]
    fn a_certificate_error_rustls_shows_as_debug_text_is_named_in_words() {
        let e = rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(Arc::new(
            CaUsedAsEndEntity,
        ))));
        assert!(e.to_string().contains("Other(OtherError("), "{e}");
        let d = detail(&e);
        assert!(!d.contains("OtherError"), "{d}");
        assert!(
            d.starts_with("the server presented a CA certificate as its own"),
            "{d}"
        );
        // Errors rustls words itself pass through.
        let e = rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer);
        assert_eq!(detail(&e), e.to_string());
    }
}
