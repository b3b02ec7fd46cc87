//! `twelve bench --h2c/--h2` as a process against `twelve serve` (h2c with prior knowledge on
//! a plain listener, h2 over TLS with ALPN): counts agree exactly with the server's
//! `/metrics` in both load models and on both engines, the server's stream limit caps
//! `--streams` and the report says so, large bodies come through the windows, and a dead or
//! HTTP/1.1-only target exits 2 in one sentence. Every run is a fraction of a second.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;
use twelve_tls::testing::Pki;

/// Upper bound for waiting on the server; never a speed assertion.
const BOUND: Duration = Duration::from_secs(10);

struct Serve {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Serve {
    fn drop(&mut self) {
        // Our own child, by PID.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(extra: &[&str], scheme: &str) -> Serve {
    let mut child = Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args(["serve", "--listen", "127.0.0.1:0", "--workers", "1"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn twelve serve");
    let addr = twelve_testkit::listening_addr(&mut child, scheme);
    Serve { child, addr }
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

fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `twelve_requests_total` from a plain listener's `/metrics` over HTTP/1.1 (the request
/// counts itself).
fn requests_served(addr: SocketAddr) -> u64 {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(BOUND)).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut body = String::new();
    s.read_to_string(&mut body).unwrap();
    body.lines()
        .find_map(|l| l.strip_prefix("twelve_requests_total")?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no twelve_requests_total in {body}"))
}

/// Each load model and engine, over h2c: the report's count is the server's, exactly.
macro_rules! h2c_counts {
    ($($name:ident: $args:expr;)*) => {$(
        #[test]
        fn $name() {
            let s = serve(&[], "http");
            let url = format!("http://{}/json", s.addr);
            let args: &[&str] = &$args;
            let out = bench(&[args, &["--h2c", "-n", "600", "--json", &url]].concat());
            let doc = json(&out);
            assert_eq!(doc["requests"], 600, "{doc}");
            assert_eq!(doc["errors"]["total"], 0, "{doc}");
            assert_eq!(doc["config"]["protocol"], "h2c", "{doc}");
            assert_eq!(doc["errors"]["h2"]["goaway"], 0, "{doc}");
            // And this /metrics request.
            assert_eq!(requests_served(s.addr), 601);
        }
    )*};
}

h2c_counts! {
    closed_one_stream_epoll: ["--io", "epoll", "-c", "2"];
    closed_many_streams_epoll: ["--io", "epoll", "-c", "3", "--streams", "50"];
    closed_many_streams_uring: ["--io", "uring", "-c", "3", "--streams", "50"];
    open_model_epoll: ["--io", "epoll", "-c", "2", "--streams", "8", "-R", "3000"];
    open_model_uring: ["--io", "uring", "-c", "2", "--streams", "8", "-R", "3000"];
    a_connection_per_request: ["--io", "epoll", "-c", "2", "--streams", "4", "--close"];
    a_connection_per_seven_requests: ["--io", "epoll", "-c", "2", "--requests-per-conn", "7"];
}

#[test]
fn the_servers_stream_limit_caps_streams_and_the_report_says_so() {
    let s = serve(&[], "http");
    let url = format!("http://{}/json", s.addr);
    let out = bench(&[
        "--h2c",
        "--streams",
        "300",
        "-c",
        "1",
        "-n",
        "2000",
        "--json",
        &url,
    ]);
    let doc = json(&out);
    assert_eq!(doc["requests"], 2000, "{doc}");
    assert_eq!(doc["config"]["streams"], 300, "{doc}");
    // twelve serve's SETTINGS_MAX_CONCURRENT_STREAMS.
    assert_eq!(doc["config"]["streams_capped_to"], 128, "{doc}");
    let out = bench(&["--h2c", "--streams", "300", "-c", "1", "-n", "500", &url]);
    let report = text(&out.stdout);
    assert!(
        report.contains("HTTP/2 (h2c), 300 streams per connection")
            && report.contains("SETTINGS_MAX_CONCURRENT_STREAMS capped --streams 300 to 128"),
        "{report}"
    );
}

#[test]
fn large_responses_come_through_the_flow_control_windows() {
    let dir = std::env::temp_dir().join(format!("twelve-h2-large-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Past the default 64 KiB windows, and several frames each.
    std::fs::write(dir.join("big.bin"), vec![7u8; 300 * 1024]).unwrap();
    let s = serve(&["--root", dir.to_str().unwrap()], "http");
    let url = format!("http://{}/big.bin", s.addr);
    let out = bench(&[
        "--h2c",
        "--streams",
        "4",
        "-c",
        "2",
        "-n",
        "40",
        "--json",
        &url,
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    let doc = json(&out);
    assert_eq!(doc["requests"], 40, "{doc}");
    assert_eq!(doc["errors"]["total"], 0, "{doc}");
    let bytes = doc["bytes_read"].as_u64().unwrap();
    assert!(
        bytes >= 40 * 300 * 1024,
        "{bytes} bytes for 40 bodies of 300 KiB"
    );
}

#[test]
fn h2_over_tls_counts_agree_with_the_server() {
    let pki = Pki::new("h2-cli");
    let tls = [
        "--tls-cert",
        pki.cert.to_str().unwrap(),
        "--tls-key",
        pki.key.to_str().unwrap(),
    ];
    // Both listeners on ports the kernel picks; their addresses from the startup lines.
    let mut child = Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args(["serve", "--workers", "1", "--listen", "127.0.0.1:0"])
        .args(["--tls-listen", "127.0.0.1:0"])
        .args(tls)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn twelve serve");
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    let mut line = |scheme: &str| {
        let l = lines.next().unwrap().unwrap();
        twelve_testkit::addr_in(&l, scheme).unwrap_or_else(|| panic!("{l}"))
    };
    let plain = line("http");
    let tls_addr = line("https");
    let s = Serve { child, addr: plain };
    let url = format!("https://localhost:{}/json", tls_addr.port());
    let ca = pki.ca_pem.to_str().unwrap();
    for io in ["epoll", "uring"] {
        let args = [
            "--h2",
            "--io",
            io,
            "--streams",
            "10",
            "-c",
            "2",
            "-n",
            "300",
        ];
        // `localhost` may resolve to ::1 first; the server listens on 127.0.0.1.
        let to = tls_addr.to_string();
        let tail = ["--cacert", ca, "--connect-to", &to, "--json", &url];
        let out = bench(&[&args[..], &tail[..]].concat());
        let doc = json(&out);
        assert_eq!(doc["requests"], 300, "{io}: {doc}");
        assert_eq!(doc["errors"]["total"], 0, "{io}: {doc}");
        assert_eq!(doc["config"]["protocol"], "h2", "{doc}");
    }
    assert_eq!(requests_served(s.addr), 601);
}

fn stderr_line(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(out.stdout.is_empty(), "load ran: {}", text(&out.stdout));
    err
}

#[test]
fn a_dead_target_exits_2_in_one_sentence() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = bench(&["--h2c", "-n", "10", &format!("http://127.0.0.1:{port}/")]);
    let err = stderr_line(&out);
    assert!(err.contains("connect"), "{err}");
}

/// A server that answers anything with an HTTP/1.1 400 and closes, once.
fn http1_only() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        if let Ok((mut c, _)) = l.accept() {
            let mut buf = [0; 1024];
            let _ = c.read(&mut buf);
            let _ = c.write_all(
                b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    addr
}

#[test]
fn an_http1_only_target_exits_2_in_one_sentence() {
    let addr = http1_only();
    let out = bench(&["--h2c", "-n", "10", &format!("http://{addr}/")]);
    let err = stderr_line(&out);
    assert!(
        err.contains("answered with HTTP/1.x") && err.contains("drop --h2c"),
        "{err}"
    );
}

#[test]
fn h2_flags_on_the_wrong_scheme_or_without_http2_are_refused_by_name() {
    let out = bench(&["--h2", "-n", "10", "http://127.0.0.1:9/"]);
    let err = stderr_line(&out);
    assert!(err.contains("--h2 speaks HTTP/2 over TLS"), "{err}");
    let out = bench(&["--h2c", "-n", "10", "https://127.0.0.1:9/"]);
    let err = stderr_line(&out);
    assert!(
        err.contains("--h2c speaks HTTP/2 with prior knowledge"),
        "{err}"
    );
    let out = bench(&["--streams", "4", "-n", "10", "http://127.0.0.1:9/"]);
    let err = stderr_line(&out);
    assert!(err.contains("--streams 4: streams are HTTP/2's"), "{err}");
}

/// `openssl s_server` offering only ALPN http/1.1 stands in for a TLS server without HTTP/2.
#[test]
fn a_tls_server_without_alpn_h2_exits_2_in_one_sentence() {
    let pki = Pki::new("h2-no-alpn");
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("openssl")
        .args(["s_server", "-quiet", "-www", "-alpn", "http/1.1", "-accept"])
        .arg(port.to_string())
        .arg("-cert")
        .arg(&pki.cert)
        .arg("-key")
        .arg(&pki.key)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(child) = child else {
        twelve_testkit::skip_or_fail("openssl is not installed (apt-get install openssl)");
        return;
    };
    let s = Serve {
        child,
        addr: SocketAddr::from(([127, 0, 0, 1], port)),
    };
    // Ready once it accepts: bounded by BOUND, polled on the event itself.
    let start = std::time::Instant::now();
    while TcpStream::connect(s.addr).is_err() {
        assert!(start.elapsed() < BOUND, "openssl s_server never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    let url = format!("https://localhost:{port}/");
    let ca = pki.ca_pem.to_str().unwrap();
    let out = bench(&["--h2", "-n", "10", "--cacert", ca, &url]);
    let err = stderr_line(&out);
    assert!(
        err.contains("does not offer HTTP/2 in its TLS handshake (ALPN h2)"),
        "{err}"
    );
}
