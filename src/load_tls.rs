//! The TLS flags of the load commands (`--insecure`, `--cacert`, `--tls-version`,
//! `--no-tls-resume`) and the client configuration they build for `https://` URLs.
use anyhow::Context;
use std::path::PathBuf;
use twelve_load::Target;
use twelve_tls::{ClientOptions, ClientTls, TlsVersion};

/// TLS flags shared by bench, sweep and compare.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "TLS")]
pub struct TlsArgs {
    /// https:// only: do not verify the server's certificate (the report says so loudly).
    #[arg(long)]
    pub insecure: bool,
    /// https:// only: trust the CA certificates in this PEM file instead of the system store.
    #[arg(long, value_name = "FILE", conflicts_with = "insecure")]
    pub cacert: Option<PathBuf>,
    /// https:// only: TLS version, 1.2, 1.3 or any.
    #[arg(long, value_name = "VERSION", default_value = "any")]
    pub tls_version: String,
    /// https:// only: make a full handshake on every new connection (no session resumption).
    #[arg(long)]
    pub no_tls_resume: bool,
}

/// The client configuration when the targets are `https://`, else `None`.
pub fn client(args: &TlsArgs, targets: &[Target]) -> anyhow::Result<Option<ClientTls>> {
    if !targets.iter().any(|t| t.tls) {
        return Ok(None);
    }
    let version: TlsVersion = args
        .tls_version
        .parse()
        .map_err(|e| anyhow::anyhow!("--tls-version {e}"))?;
    let opts = ClientOptions {
        insecure: args.insecure,
        cacert: args.cacert.clone(),
        version,
        resume: !args.no_tls_resume,
    };
    let tls = ClientTls::new(&opts).with_context(|| match &args.cacert {
        Some(p) => format!("--cacert {}", p.display()),
        None => "loading the system's trusted roots".to_owned(),
    })?;
    if tls.is_insecure() {
        eprintln!("twelve: WARNING: --insecure: the server's certificate is not verified");
    }
    Ok(Some(tls))
}
