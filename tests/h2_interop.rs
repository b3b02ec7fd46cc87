//! `twelve bench --h2c/--h2` against other HTTP/2 servers: nginx and h2o (Debian's), h2c with
//! prior knowledge and h2 over TLS (ALPN), configured in a temporary directory with a chain
//! made at test time. Each run's count is checked against the server's access log exactly.
//! Probes for each server and skips without it (a failure under CI, which installs both).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;
use twelve_testkit::{Terminate, wait_listening};
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

/// Two ports the kernel just handed out on 127.0.0.1, both held until both are chosen so they
/// differ (free unless taken in between).
fn free_ports() -> [u16; 2] {
    let held = [0, 1].map(|_| TcpListener::bind("127.0.0.1:0").unwrap());
    held.each_ref().map(|l| l.local_addr().unwrap().port())
}

/// A server under test: its process, plain (h2c) and TLS ports, and access log.
struct Peer {
    _proc: Terminate,
    plain: u16,
    tls: u16,
    log: PathBuf,
}

fn p(x: &Path) -> String {
    x.display().to_string()
}

fn nginx(pki: &Pki) -> Peer {
    let dir = pki.dir.join("nginx");
    std::fs::create_dir_all(&dir).unwrap();
    let [plain, tls] = free_ports();
    let log = dir.join("access.log");
    let conf = format!(
        "worker_processes 1;\nerror_log stderr;\npid {dir}/nginx.pid;\n\
         events {{ worker_connections 256; }}\n\
         http {{\n  access_log {log};\n  client_body_temp_path {dir}/body;\n\
           proxy_temp_path {dir}/proxy;\n  fastcgi_temp_path {dir}/fastcgi;\n\
           uwsgi_temp_path {dir}/uwsgi;\n  scgi_temp_path {dir}/scgi;\n\
           http2_max_concurrent_streams 32;\n\
           server {{\n    listen 127.0.0.1:{plain} http2;\n\
             listen 127.0.0.1:{tls} ssl http2;\n    ssl_certificate {cert};\n\
             ssl_certificate_key {key};\n\
             location /plaintext {{ default_type text/plain; return 200 'Hello, World!'; }}\n\
           }}\n}}\n",
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
    let proc = Terminate(child);
    wait_listening(([127, 0, 0, 1], plain).into(), BOUND);
    wait_listening(([127, 0, 0, 1], tls).into(), BOUND);
    Peer {
        _proc: proc,
        plain,
        tls,
        log,
    }
}

fn h2o(pki: &Pki) -> Peer {
    let dir = pki.dir.join("h2o");
    std::fs::create_dir_all(dir.join("www")).unwrap();
    std::fs::write(dir.join("www/plaintext"), "Hello, World!").unwrap();
    let [plain, tls] = free_ports();
    let log = dir.join("access.log");
    let conf = format!(
        "num-threads: 1\nerror-log: {dir}/error.log\naccess-log: {log}\n\
         http2-max-concurrent-requests-per-connection: 32\n\
         listen:\n  host: 127.0.0.1\n  port: {plain}\n\
         listen:\n  host: 127.0.0.1\n  port: {tls}\n  ssl:\n    certificate-file: {cert}\n\
         \x20   key-file: {key}\n\
         hosts:\n  default:\n    paths:\n      /:\n        file.dir: {dir}/www\n",
        dir = p(&dir),
        log = p(&log),
        cert = p(&pki.cert),
        key = p(&pki.key),
    );
    let conf_path = dir.join("h2o.conf");
    std::fs::write(&conf_path, conf).unwrap();
    let child = Command::new("h2o")
        .arg("-c")
        .arg(&conf_path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn h2o");
    let proc = Terminate(child);
    wait_listening(([127, 0, 0, 1], plain).into(), BOUND);
    wait_listening(([127, 0, 0, 1], tls).into(), BOUND);
    Peer {
        _proc: proc,
        plain,
        tls,
        log,
    }
}

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args(["bench", "-t", "1", "--json"])
        .args(args)
        .output()
        .unwrap()
}

fn log_lines(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .count()
}

/// Runs h2c and h2 against `peer` (both engines, both models), each count against its log.
/// `caps`: the server advertises its stream limit of 32 in SETTINGS (nginx does; h2o limits
/// the requests it processes at once without lowering SETTINGS_MAX_CONCURRENT_STREAMS).
fn against(peer: &Peer, pki: &Pki, caps: bool) {
    let ca = pki.ca_pem.to_str().unwrap();
    let plain = format!("http://127.0.0.1:{}/plaintext", peer.plain);
    let tls = format!("https://localhost:{}/plaintext", peer.tls);
    let h2 = ["--h2", "--cacert", ca];
    let runs: [(&[&str], &[&str], &str, u64); 5] = [
        (
            &["--h2c", "--io", "epoll"],
            &["--streams", "10", "-c", "2"],
            &plain,
            500,
        ),
        (
            &["--h2c", "--io", "uring"],
            &["--streams", "64", "-c", "2"],
            &plain,
            500,
        ),
        (
            &["--h2c", "--io", "epoll"],
            &["--streams", "4", "-c", "2", "-R", "2000"],
            &plain,
            300,
        ),
        (
            &[&h2[..], &["--io", "epoll"]].concat(),
            &["--streams", "10", "-c", "2"],
            &tls,
            400,
        ),
        (
            &[&h2[..], &["--io", "uring"]].concat(),
            &["--streams", "10", "-c", "2"],
            &tls,
            400,
        ),
    ];
    let mut expected = 0;
    for (proto, load, url, n) in runs {
        let count = n.to_string();
        let out = bench(&[proto, load, &["-n", &count, url]].concat());
        let what = format!("{proto:?} {load:?}");
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["errors"]["total"], 0, "{what}: {doc}");
        assert_eq!(doc["requests"], n, "{what}: {doc}");
        if caps && load.contains(&"64") {
            assert_eq!(doc["config"]["streams_capped_to"], 32, "{what}: {doc}");
        }
        expected += n as usize;
        assert_eq!(log_lines(&peer.log), expected, "{what}");
    }
}

#[test]
fn twelve_bench_against_nginx_agrees_with_its_access_log() {
    if !have("nginx", "-v") {
        twelve_testkit::skip_or_fail("nginx is not installed (apt-get install nginx)");
        return;
    }
    let pki = Pki::new("h2-interop-nginx");
    let peer = nginx(&pki);
    against(&peer, &pki, true);
}

#[test]
fn twelve_bench_against_h2o_agrees_with_its_access_log() {
    if !have("h2o", "--version") {
        twelve_testkit::skip_or_fail("h2o is not installed (apt-get install h2o)");
        return;
    }
    let pki = Pki::new("h2-interop-h2o");
    let peer = h2o(&pki);
    against(&peer, &pki, false);
}
