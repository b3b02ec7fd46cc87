//! Certificates made at test time (feature `testing`): a CA and a leaf signed by it, written
//! as PEM files under a fresh temporary directory, for this crate's tests and its users'.

use std::path::PathBuf;

/// A CA and a leaf certificate, as PEM files.
#[derive(Debug)]
pub struct Pki {
    /// The directory holding the files; removed on drop.
    pub dir: PathBuf,
    /// The CA certificate (`--cacert`).
    pub ca_pem: PathBuf,
    /// The leaf followed by the CA: the chain a server presents (`--tls-cert`).
    pub cert: PathBuf,
    /// The leaf's private key, PKCS#8 (`--tls-key`).
    pub key: PathBuf,
}

/// What the leaf looks like.
#[derive(Clone, Copy, Debug, Default)]
pub struct Leaf {
    /// Valid only in 2020: expired now.
    pub expired: bool,
    /// Issued for `wrong.example` only, so it is not valid for localhost or 127.0.0.1.
    pub wrong_name: bool,
}

impl Pki {
    /// A CA named after `tag` and a leaf for `localhost` and 127.0.0.1.
    pub fn new(tag: &str) -> Self {
        Self::with(tag, Leaf::default())
    }

    /// As [`Pki::new`], with the leaf as `leaf` says.
    pub fn with(tag: &str, leaf: Leaf) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "twelve-pki-{tag}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let ca_key = rcgen::KeyPair::generate().expect("key");
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        // Distinct names: webpki finds an issuer by name, so two CAs named alike would fail
        // as a bad signature rather than an unknown issuer.
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, format!("twelve test CA {tag}"));
        let ca = ca_params.self_signed(&ca_key).expect("CA");
        let issuer = rcgen::Issuer::new(ca_params, ca_key);
        let leaf_key = rcgen::KeyPair::generate().expect("key");
        let names = if leaf.wrong_name {
            vec!["wrong.example".to_owned()]
        } else {
            vec!["localhost".to_owned(), "127.0.0.1".to_owned()]
        };
        let mut params = rcgen::CertificateParams::new(names).expect("params");
        if leaf.expired {
            params.not_before = rcgen::date_time_ymd(2020, 1, 1);
            params.not_after = rcgen::date_time_ymd(2020, 12, 31);
        }
        let cert = params.signed_by(&leaf_key, &issuer).expect("leaf");
        let write = |name: &str, text: String| {
            let p = dir.join(name);
            std::fs::write(&p, text).expect("write");
            p
        };
        Self {
            ca_pem: write("ca.pem", ca.pem()),
            cert: write("cert.pem", cert.pem() + &ca.pem()),
            key: write("key.pem", leaf_key.serialize_pem()),
            dir,
        }
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
