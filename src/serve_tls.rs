//! `twelve serve`'s TLS flags (`--tls-cert`, `--tls-key`), the SIGHUP certificate reload, and
//! which protocols each listener speaks (`--tls-listen`, `--h2c-listen`).
use anyhow::{Context, bail};
use std::path::PathBuf;
use std::sync::Arc;
use twelve_tls::ServerTls;

/// TLS flags of `twelve serve`.
#[derive(clap::Args, Debug, Default)]
pub struct TlsArgs {
    /// Serve HTTPS on every --listen address with this PEM certificate chain (leaf first).
    /// TLS 1.2 and 1.3, ALPN h2 and http/1.1, session tickets on. SIGHUP reloads it and the
    /// key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert (PKCS#8, RSA or EC).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Listen here with TLS (repeatable; needs --tls-cert). With it, the --listen addresses
    /// stay plain HTTP: `--listen 127.0.0.1:8080 --tls-listen 127.0.0.1:8443`.
    #[arg(long, value_name = "ADDR", requires = "tls_cert")]
    tls_listen: Vec<String>,
    /// Listen here for HTTP/2 without TLS, with prior knowledge only (h2c, repeatable):
    /// HTTP/1.1 requests are refused. Plain --listen addresses take both HTTP/1.1 and h2c.
    #[arg(long, value_name = "ADDR")]
    h2c_listen: Vec<String>,
}

/// Appends the --tls-listen addresses to `listen` and says which listeners speak TLS (the
/// engine's `Config::tls_listen`): empty, meaning all of them, without --tls-listen.
pub fn add_listeners(
    args: &TlsArgs,
    listen: &mut Vec<std::net::SocketAddr>,
) -> anyhow::Result<Vec<bool>> {
    if args.tls_listen.is_empty() {
        return Ok(Vec::new());
    }
    let mut tls = vec![false; listen.len()];
    for a in &args.tls_listen {
        let addr: std::net::SocketAddr = a
            .parse()
            .with_context(|| format!("--tls-listen {a}: expected IP:PORT or [IPv6]:PORT"))?;
        if addr.port() != 0 && listen.contains(&addr) {
            bail!("--tls-listen {a}: also given as a plain --listen");
        }
        listen.push(addr);
        tls.push(true);
    }
    Ok(tls)
}

/// Appends the --h2c-listen addresses to `listen` and says which listeners speak h2c only (the
/// engine's `Config::h2c_listen`). With TLS on every listener (`tls_listen` empty), the h2c
/// ones are marked plain in `tls_listen`.
pub fn add_h2c_listeners(
    args: &TlsArgs,
    listen: &mut Vec<std::net::SocketAddr>,
    tls_listen: &mut Vec<bool>,
) -> anyhow::Result<Vec<bool>> {
    if args.h2c_listen.is_empty() {
        return Ok(Vec::new());
    }
    if tls_listen.is_empty() && args.tls_cert.is_some() {
        *tls_listen = vec![true; listen.len()];
    }
    let mut h2c = vec![false; listen.len()];
    for a in &args.h2c_listen {
        let addr: std::net::SocketAddr = a
            .parse()
            .with_context(|| format!("--h2c-listen {a}: expected IP:PORT or [IPv6]:PORT"))?;
        if addr.port() != 0 && listen.contains(&addr) {
            bail!("--h2c-listen {a}: also given as --listen or --tls-listen");
        }
        listen.push(addr);
        h2c.push(true);
        if !tls_listen.is_empty() {
            tls_listen.push(false);
        }
    }
    Ok(h2c)
}

/// The scheme of listener `i` for the startup line.
pub fn scheme(config: &twelve_engine::Config, i: usize) -> &'static str {
    if is_tls(config, i) { "https" } else { "http" }
}

/// The protocols listener `i` speaks, for the startup line.
pub fn protocols(config: &twelve_engine::Config, i: usize) -> &'static str {
    if is_tls(config, i) {
        "h2 and http/1.1"
    } else if config.h2c_listen.get(i).copied().unwrap_or(false) {
        "h2c only"
    } else {
        "http/1.1 and h2c"
    }
}

fn is_tls(config: &twelve_engine::Config, i: usize) -> bool {
    config.tls.is_some() && config.tls_listen.get(i).copied().unwrap_or(true)
}

/// The server's TLS configuration, if the flags ask for one.
pub fn load(args: &TlsArgs) -> anyhow::Result<Option<Arc<ServerTls>>> {
    let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) else {
        if args.tls_cert.is_some() || args.tls_key.is_some() {
            bail!("--tls-cert and --tls-key go together");
        }
        return Ok(None);
    };
    let tls = ServerTls::load(cert, key).context("--tls-cert/--tls-key")?;
    Ok(Some(Arc::new(tls)))
}

/// Reloads the certificate and key on every SIGHUP, on a thread of its own: connections,
/// open or mid-handshake, keep the certificate they began with; handshakes from then on get
/// the new one. A file that does not load leaves the old certificate in place, said once.
/// Installed before the workers start, like the other handlers (see `serve::run`).
pub fn reload_on_sighup(tls: Option<&Arc<ServerTls>>) -> anyhow::Result<()> {
    let Some(tls) = tls.cloned() else {
        return Ok(());
    };
    let mut signals = signal_hook::iterator::Signals::new([signal_hook::consts::SIGHUP])
        .context("installing the SIGHUP handler")?;
    std::thread::Builder::new()
        .name("twelve-sighup".to_owned())
        .spawn(move || {
            for _ in signals.forever() {
                match tls.reload() {
                    Ok(()) => eprintln!(
                        "twelve serve: SIGHUP: reloaded {}",
                        tls.cert_path().display()
                    ),
                    Err(e) => eprintln!("twelve serve: SIGHUP: kept the old certificate: {e}"),
                }
            }
        })
        .context("starting the SIGHUP thread")?;
    Ok(())
}

/// The startup line about kernel TLS: probed, never required.
pub fn ktls_line() -> &'static str {
    if twelve_engine::ktls_available() {
        "kernel TLS (tls ULP) is offered but not used yet: static files are read into the TLS layer"
    } else {
        "no kernel TLS (no tls in /proc/sys/net/ipv4/tcp_available_ulp): static files are read into the TLS layer"
    }
}
