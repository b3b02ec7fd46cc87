//! TLS against other implementations: `twelve bench` against nginx (Debian's, OpenSSL) and
//! h2load (nghttp2, OpenSSL) against `twelve serve`, with a chain made at test time. Each side's
//! count is checked against the other's exactly: nginx's access log, twelve's `/metrics`.
//! Probes for nginx and h2load and skips without them (a failure under CI, which installs
//! both).

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use twelve_testkit::{Terminate, free_port, wait_listening};
use twelve_tls::testing::Pki;

/// Upper bound for waiting on a server to listen; never a speed assertion.
const BOUND: Duration = Duration::from_secs(10);

fn have(tool: &str, arg: &str) -> bool {
    Command::new(tool)
        .arg(arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// nginx in the foreground on `port`, TLS 1.2 and 1.3, `/json` as a fixed response, one
/// access-log line per request.
fn nginx(pki: &Pki, port: u16) -> (Terminate, PathBuf) {
    let dir = pki.dir.join("nginx");
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("access.log");
    let p = |x: &Path| x.display().to_string();
    let conf = format!(
        "worker_processes 1;\nerror_log stderr;\npid {dir}/nginx.pid;\n\
         events {{ worker_connections 256; }}\n\
         http {{\n  access_log {log};\n  client_body_temp_path {dir}/body;\n\
           proxy_temp_path {dir}/proxy;\n  fastcgi_temp_path {dir}/fastcgi;\n\
           uwsgi_temp_path {dir}/uwsgi;\n  scgi_temp_path {dir}/scgi;\n\
           server {{\n    listen 127.0.0.1:{port} ssl;\n    ssl_certificate {cert};\n\
             ssl_certificate_key {key};\n    ssl_protocols TLSv1.2 TLSv1.3;\n\
             location /json {{ default_type application/json; \
             return 200 '{{\"message\":\"Hello, World!\"}}'; }}\n  }}\n}}\n",
        dir = p(&dir),
        log = p(&log),
        cert = p(&pki.cert),
        key = p(&pki.key),
    );
    let conf_path = dir.join("nginx.conf");
    std::fs::write(&conf_path, conf).unwrap();
    let child = Command::new("nginx")
        .arg("-p")
        .arg(&dir)
        .arg("-c")
        .arg(&conf_path)
        .args(["-g", "daemon off;"])
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn nginx");
    wait_listening(([127, 0, 0, 1], port).into(), BOUND);
    (Terminate(child), log)
}

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args(["bench", "-t", "1"])
        .args(args)
        .output()
        .unwrap()
}

fn requests_of(out: &Output) -> u64 {
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["errors"]["total"], 0, "{doc}");
    doc["requests"].as_u64().unwrap()
}

fn log_lines(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .count()
}

#[test]
fn twelve_bench_against_nginx_agrees_with_its_access_log() {
    if !have("nginx", "-v") {
        twelve_testkit::skip_or_fail("nginx is not installed (apt-get install nginx)");
        return;
    }
    let pki = Pki::new("interop-nginx");
    let port = free_port();
    let (_nginx, log) = nginx(&pki, port);
    let url = format!("https://localhost:{port}/json");
    let ca = pki.ca_pem.to_str().unwrap();
    let runs: [&[&str]; 3] = [
        &["-n", "300", "-c", "2"],
        &["-n", "60", "-c", "2", "--close"],
        &["-n", "60", "-c", "2", "--close", "--tls-version", "1.2"],
    ];
    let mut want = 0;
    for run in runs {
        let args = [run, &["--cacert", ca, "--json", &url]].concat();
        let n = requests_of(&bench(&args));
        assert_eq!(n, run[1].parse::<u64>().unwrap());
        want += n as usize;
        assert_eq!(log_lines(&log), want, "nginx logged every request, no more");
    }
}

/// `twelve serve` with TLS on a free port; its address.
fn serve(pki: &Pki) -> (Terminate, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args(["serve", "--listen", "127.0.0.1:0", "--workers", "1"])
        .arg("--tls-cert")
        .arg(&pki.cert)
        .arg("--tls-key")
        .arg(&pki.key)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn twelve serve");
    let addr = twelve_testkit::listening_addr(&mut child, "https");
    (Terminate(child), addr)
}

/// h2load's count of succeeded requests, from its `requests:` line.
fn h2load_succeeded(out: &Output) -> u64 {
    let t = text(&out.stdout);
    let line = t
        .lines()
        .find(|l| l.starts_with("requests:"))
        .unwrap_or_else(|| panic!("no requests line: {t}{}", text(&out.stderr)));
    let n = line
        .split(',')
        .find_map(|f| f.trim().strip_suffix(" succeeded"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no succeeded count: {line}"));
    assert!(line.contains(" 0 failed, 0 errored"), "{line}");
    n
}

#[test]
fn h2load_against_twelve_serve_agrees_with_its_metrics() {
    if !have("h2load", "--version") {
        twelve_testkit::skip_or_fail("h2load is not installed (apt-get install nghttp2-client)");
        return;
    }
    let pki = Pki::new("interop-h2load");
    let (_serve, addr) = serve(&pki);
    let url = format!("https://127.0.0.1:{}/json", addr.port());
    let keep = Command::new("h2load")
        .args(["--h1", "-n", "400", "-c", "4", &url])
        .output()
        .unwrap();
    assert_eq!(h2load_succeeded(&keep), 400);
    let close = Command::new("h2load")
        .args([
            "--h1",
            "-n",
            "50",
            "-c",
            "2",
            "-H",
            "Connection: close",
            &url,
        ])
        .output()
        .unwrap();
    assert_eq!(h2load_succeeded(&close), 50);
    // twelve bench reads the server's count: its own run adds its requests exactly.
    let metrics = format!("https://localhost:{}/metrics", addr.port());
    let ca = pki.ca_pem.to_str().unwrap();
    let out = bench(&["-n", "1", "-c", "1", "--cacert", ca, "--json", &metrics]);
    assert_eq!(requests_of(&out), 1);
    // The scrape counted itself: 400 + 50 + 1.
    let m = Command::new("h2load")
        .args(["--h1", "-n", "1", "-c", "1", "-v", &metrics])
        .output()
        .unwrap();
    let body = text(&m.stdout);
    assert!(body.contains("twelve_requests_total 452"), "{body}");
}

#[test]
fn a_renegotiation_attempt_is_refused_closed_and_counted() {
    if !have("openssl", "version") || !have("h2load", "--version") {
        twelve_testkit::skip_or_fail(
            "openssl or h2load is not installed (apt-get install openssl nghttp2-client)",
        );
        return;
    }
    let pki = Pki::new("interop-reneg");
    let (_serve, addr) = serve(&pki);
    // `R` on s_client's input asks for a TLS 1.2 renegotiation; rustls refuses it
    // (no_renegotiation), OpenSSL answers with a fatal alert, the server closes.
    let mut client = Command::new("openssl")
        .args([
            "s_client",
            "-tls1_2",
            "-connect",
            &addr.to_string(),
            "-CAfile",
        ])
        .arg(&pki.ca_pem)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = client.stdin.take().unwrap();
    // s_client reads commands once the handshake is done; the input stays open until it
    // has reacted, so it does not quit on EOF first.
    stdin.write_all(b"R\n").unwrap();
    // s_client says so on stderr.
    let err = BufReader::new(client.stderr.take().unwrap());
    let saw = err
        .lines()
        .map_while(Result::ok)
        .any(|l| l.contains("RENEGOTIATING"));
    assert!(saw, "s_client did not try");
    drop(stdin);
    let _ = client.wait();
    let metrics = format!("https://127.0.0.1:{}/metrics", addr.port());
    let deadline = Instant::now() + BOUND;
    loop {
        let m = Command::new("h2load")
            .args(["--h1", "-n", "1", "-c", "1", "-v", &metrics])
            .output()
            .unwrap();
        let body = text(&m.stdout);
        if body.contains("twelve_tls_failures_total{kind=\"peer_alert\"} 1") {
            assert!(body.contains("twelve_resets_total 0"), "{body}");
            break;
        }
        assert!(Instant::now() < deadline, "no peer_alert counted: {body}");
        // The poll interval of waiting for the server's count, not a synchronization.
        std::thread::sleep(Duration::from_millis(50));
    }
}
