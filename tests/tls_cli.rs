//! TLS across processes: `twelve bench https://…` against `twelve serve --tls-cert`, with a
//! chain made at test time. Counts agree exactly with the server's `/metrics`; a wrong host
//! name or an expired certificate exits 2 with a clear message; `--insecure` says so in the
//! report; SIGHUP reloads the certificate; an upgrade keeps plain and TLS listeners apart.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, ChildStderr, Command, Output, Stdio};
use std::time::Duration;
use twelve_tls::testing::{Leaf, Pki};
use twelve_tls::{ClientOptions, ClientTls, Failure};

/// Upper bound for waiting on the server; never a speed assertion.
const BOUND: Duration = Duration::from_secs(10);

struct Serve {
    child: Child,
    addr: SocketAddr,
    stderr: BufReader<ChildStderr>,
}

impl Drop for Serve {
    fn drop(&mut self) {
        // Our own child, by PID.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(pki: &Pki) -> Serve {
    let mut child = Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args(["serve", "--listen", "127.0.0.1:0", "--workers", "1"])
        .arg("--tls-cert")
        .arg(&pki.cert)
        .arg("--tls-key")
        .arg(&pki.key)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn twelve serve");
    let addr = twelve_testkit::listening_addr(&mut child, "https");
    let stderr = BufReader::new(child.stderr.take().unwrap());
    Serve {
        child,
        addr,
        stderr,
    }
}

impl Serve {
    /// Waits for a stderr line containing `what` (an event, not a sleep).
    fn stderr_line(&mut self, what: &str) -> String {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.stderr.read_line(&mut line).unwrap();
            assert!(n > 0, "serve exited before saying {what:?}");
            if line.contains(what) {
                return line;
            }
        }
    }

    fn url(&self, host: &str, path: &str) -> String {
        format!("https://{host}:{}{path}", self.addr.port())
    }
}

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_twelve"))
        .arg("bench")
        .args(["-t", "1"])
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// One blocking HTTPS request with a fresh session; the response, or the TLS failure.
fn https_get(addr: SocketAddr, ca: &Path, path: &str) -> Result<String, Failure> {
    let client = ClientTls::new(&ClientOptions {
        cacert: Some(ca.to_owned()),
        ..ClientOptions::default()
    })
    .unwrap();
    let mut tls = client.session(&ClientTls::server_name("localhost").unwrap());
    let mut sock = TcpStream::connect(addr).unwrap();
    sock.set_read_timeout(Some(BOUND)).unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    tls.write_plain(req.as_bytes());
    let (mut plain, mut buf) = (Vec::new(), vec![0; 64 * 1024]);
    loop {
        let out = tls.outgoing().to_vec();
        tls.sent(out.len());
        let _ = sock.write_all(&out);
        tls.read_plain(&mut plain, usize::MAX)?;
        if tls.peer_closed() {
            return Ok(text(&plain));
        }
        let n = sock.read(&mut buf).unwrap_or(0);
        if n == 0 {
            return match tls.failure() {
                Some(f) => Err(f),
                None => Ok(text(&plain)),
            };
        }
        tls.feed(&buf[..n])?;
    }
}

fn metric(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {text}"))
}

#[test]
fn keep_alive_counts_agree_exactly_with_the_server() {
    let pki = Pki::new("cli-keepalive");
    let s = serve(&pki);
    let ca = pki.ca_pem.to_str().unwrap();
    let url = s.url("localhost", "/json");
    let out = bench(&["-n", "300", "-c", "1", "--cacert", ca, "--json", &url]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["requests"], 300, "{doc}");
    assert_eq!(doc["errors"]["total"], 0, "{doc}");
    assert!(doc["config"]["tls"].as_str().unwrap().contains("--cacert"));
    let m = https_get(s.addr, &pki.ca_pem, "/metrics").unwrap();
    // 300 from bench, and this /metrics request, which counts itself.
    assert_eq!(metric(&m, "twelve_requests_total"), 301, "{m}");
    // The connection, the bench's preflight handshake, and this one.
    assert_eq!(metric(&m, "twelve_tls_handshakes_total"), 3, "{m}");
}

#[test]
fn close_makes_a_handshake_per_request_and_shows_its_phase() {
    let pki = Pki::new("cli-close");
    let s = serve(&pki);
    let ca = pki.ca_pem.to_str().unwrap();
    let url = s.url("localhost", "/json");
    let args = ["-n", "100", "-c", "2", "--close", "--cacert", ca, "--json"];
    let out = bench(&[&args[..], &[&url]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["requests"], 100, "{doc}");
    for phase in ["connect", "tls", "first_byte", "total"] {
        assert_eq!(doc["phases"][phase]["count"], 100, "{phase}: {doc}");
    }
    let m = https_get(s.addr, &pki.ca_pem, "/metrics").unwrap();
    assert_eq!(metric(&m, "twelve_requests_total"), 101, "{m}");
    // 100 connections, the preflight, and this one.
    assert_eq!(metric(&m, "twelve_tls_handshakes_total"), 102, "{m}");
    assert!(metric(&m, "twelve_tls_resumed_total") > 0, "{m}");
    // The same without resumption: every handshake is a full one.
    let out = bench(&[&args[..], &["--no-tls-resume", &url]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let before = metric(&m, "twelve_tls_resumed_total");
    let m = https_get(s.addr, &pki.ca_pem, "/metrics").unwrap();
    assert_eq!(metric(&m, "twelve_tls_resumed_total"), before, "{m}");
    // The text report shows the phase table.
    let out = bench(&["-n", "20", "-c", "2", "--close", "--cacert", ca, &url]);
    let t = text(&out.stdout);
    assert!(
        t.contains("New-connection phases") && t.contains("tls"),
        "{t}"
    );
}

/// More connections at once than rustls's own session cache keeps tickets for one server (8):
/// every reconnection still resumes, so only the first wave of handshakes is full (its
/// connections start before any ticket but the preflight's arrived).
#[test]
fn close_resumes_every_reconnection_beyond_eight_connections() {
    let pki = Pki::new("cli-resume-wide");
    let s = serve(&pki);
    let ca = pki.ca_pem.to_str().unwrap();
    let url = s.url("localhost", "/json");
    let counts = || {
        let m = https_get(s.addr, &pki.ca_pem, "/metrics").unwrap();
        let n = |name| metric(&m, name);
        (
            n("twelve_tls_handshakes_total"),
            n("twelve_tls_resumed_total"),
        )
    };
    let (h0, r0) = counts();
    let args = [
        "-n", "400", "-c", "64", "--close", "--cacert", ca, "--json", &url,
    ];
    let out = bench(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (h1, r1) = counts();
    // The run's handshakes: 400 connections, its preflight, and the second /metrics fetch.
    let (handshakes, resumed) = (h1 - h0, r1 - r0);
    assert_eq!(handshakes, 402);
    let full = handshakes - resumed;
    assert!(
        full <= 64 + 2,
        "{full} of {handshakes} handshakes were full"
    );
}

fn refused(leaf: Leaf, tag: &str, host: &str, want: &str) {
    let pki = Pki::with(tag, leaf);
    let s = serve(&pki);
    let ca = pki.ca_pem.to_str().unwrap();
    let out = bench(&["-n", "10", "-c", "1", "--cacert", ca, &s.url(host, "/json")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(err.contains(want), "{err}");
    assert!(err.contains("--insecure"), "{err}");
}

#[test]
fn wrong_host_name_exits_2_naming_the_problem() {
    let leaf = Leaf {
        wrong_name: true,
        ..Leaf::default()
    };
    refused(leaf, "cli-name", "localhost", "not valid for the host name");
}

#[test]
fn expired_certificate_exits_2_naming_the_problem() {
    let leaf = Leaf {
        expired: true,
        ..Leaf::default()
    };
    refused(leaf, "cli-expired", "localhost", "expired");
}

#[test]
fn unknown_issuer_exits_2_and_insecure_runs_saying_so_loudly() {
    let pki = Pki::new("cli-insecure");
    let s = serve(&pki);
    let url = s.url("localhost", "/json");
    // The system store does not hold the test CA.
    let out = bench(&["-n", "10", "-c", "1", &url]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let out = bench(&["-n", "10", "-c", "1", "--insecure", &url]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    assert!(t.contains("TLS: INSECURE"), "{t}");
}

#[test]
fn sighup_reloads_the_certificate() {
    let pki = Pki::new("cli-reload-old");
    let mut s = serve(&pki);
    assert!(https_get(s.addr, &pki.ca_pem, "/json").is_ok());
    let fresh = Pki::new("cli-reload-new");
    std::fs::copy(&fresh.cert, &pki.cert).unwrap();
    std::fs::copy(&fresh.key, &pki.key).unwrap();
    let status = Command::new("kill")
        .args(["-HUP", &s.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    s.stderr_line("SIGHUP: reloaded");
    assert!(https_get(s.addr, &fresh.ca_pem, "/json").is_ok());
    assert_eq!(
        https_get(s.addr, &pki.ca_pem, "/json"),
        Err(Failure::CertificateUntrusted)
    );
}

#[test]
fn tls_listen_adds_https_beside_plain_http() {
    let pki = Pki::new("cli-tls-listen");
    let mut child = Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args(["serve", "--workers", "1", "--listen", "127.0.0.1:0"])
        .args(["--tls-listen", "127.0.0.1:0", "--tls-cert"])
        .arg(&pki.cert)
        .arg("--tls-key")
        .arg(&pki.key)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn twelve serve");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let plain = lines.next().unwrap().unwrap();
    let tls = lines.next().unwrap().unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(plain.contains("listening on http://127.0.0.1:"), "{plain}");
    assert!(tls.contains("listening on https://127.0.0.1:"), "{tls}");
}

/// One plain HTTP/1.1 request with `Connection: close`; the whole response.
fn http_get(addr: SocketAddr, path: &str) -> String {
    let mut sock = TcpStream::connect(addr).unwrap();
    sock.set_read_timeout(Some(BOUND)).unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    sock.write_all(req.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = sock.read_to_end(&mut out);
    text(&out)
}

/// An upgrade hands each listener over as what it is: the plain one stays plain HTTP and the
/// `--tls-listen` one stays HTTPS, in the new generation.
#[test]
fn an_upgrade_keeps_plain_and_tls_listeners_apart() {
    let pki = Pki::new("cli-tls-listen-upgrade");
    let control =
        std::env::temp_dir().join(format!("twelve-tls-upgrade-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&control);
    let mut child = Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args(["serve", "--workers", "1", "--listen", "127.0.0.1:0"])
        .args([
            "--tls-listen",
            "127.0.0.1:0",
            "--generation-header",
            "--tls-cert",
        ])
        .arg(&pki.cert)
        .arg("--tls-key")
        .arg(&pki.key)
        .arg("--control")
        .arg(&control)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn twelve serve");
    let mut reap = twelve_testkit::Reap::new(child.id());
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next_addr = |scheme: &str| {
        let line = lines.next().unwrap().unwrap();
        twelve_testkit::addr_in(&line, scheme).unwrap_or_else(|| panic!("{line}"))
    };
    let plain = next_addr("http");
    let tls = next_addr("https");
    assert!(http_get(plain, "/plaintext").contains("X-Twelve-Generation: 1"));
    let out = Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args(["upgrade", "--control"])
        .arg(&control)
        .output()
        .unwrap();
    let answer = text(&out.stdout);
    assert!(answer.starts_with("ready generation=2 pid="), "{answer}");
    reap.push(
        answer
            .trim()
            .rsplit("pid=")
            .next()
            .unwrap()
            .parse()
            .unwrap(),
    );
    let got = http_get(plain, "/plaintext");
    assert!(
        got.starts_with("HTTP/1.1 200") && got.contains("X-Twelve-Generation: 2"),
        "plain HTTP after the upgrade: {got:?}"
    );
    let got = https_get(tls, &pki.ca_pem, "/plaintext").unwrap();
    assert!(
        got.starts_with("HTTP/1.1 200") && got.contains("X-Twelve-Generation: 2"),
        "HTTPS after the upgrade: {got:?}"
    );
    // Generation 1 drains and exits by itself; generation 2 is killed by `reap`.
    reap.release(child.id());
    let _ = child.wait();
    let _ = std::fs::remove_file(&control);
}
