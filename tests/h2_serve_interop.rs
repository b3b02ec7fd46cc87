//! HTTP/2 against other implementations: curl (`--http2` over TLS with ALPN,
//! `--http2-prior-knowledge` on a plain and an h2c-only listener), nghttp (a page and its
//! assets, a POST), h2load (every request of `-n` succeeded, counted alike by `/metrics`) and
//! Python's `h2` library (contrib/h2/client.py: a GET, and a POST larger than the server's
//! initial window) against one `twelve serve` with all three kinds of listener. Probes for
//! each tool and skips without it (a failure under CI, which installs them all).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use twelve_tls::testing::Pki;

/// The server's POST limit in these tests, above the 4 MB body the Python client sends.
const MAX_BODY: usize = 4 << 20;
/// The Python client's POST body: more than the server's initial stream window (1 MiB), so it
/// goes out only as the server's WINDOW_UPDATEs allow.
const BIG_POST: usize = 3_000_000;

fn have(tool: &str, arg: &str) -> bool {
    Command::new(tool)
        .arg(arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The process's output, or a panic with its stderr when it failed.
fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// `twelve serve` with a plain (HTTP/1.1 and h2c), a TLS (h2 and http/1.1) and an h2c-only
/// listener, and a static root; killed by PID when dropped.
struct Serve {
    child: Child,
    plain: SocketAddr,
    tls: SocketAddr,
    h2c: SocketAddr,
    pki: Pki,
    root: PathBuf,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

/// A page that links a style sheet, an image and a script, and a text file.
fn make_root(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("index.html"),
        "<html><head><link rel=\"stylesheet\" href=\"/style.css\"></head>\
         <body><img src=\"/logo.png\"><script src=\"/app.js\"></script></body></html>",
    )
    .unwrap();
    std::fs::write(dir.join("style.css"), "body{}\n").unwrap();
    let png: Vec<u8> = (0..40_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(dir.join("logo.png"), png).unwrap();
    std::fs::write(dir.join("app.js"), "var x = 1;\n").unwrap();
    std::fs::write(dir.join("a.txt"), "hello world").unwrap();
}

fn serve(tag: &str) -> Serve {
    use std::io::{BufRead, BufReader};
    let pki = Pki::new(tag);
    let root = pki.dir.join("root");
    make_root(&root);
    let mut child = Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args(["serve", "--workers", "1", "--listen", "127.0.0.1:0"])
        .args(["--tls-listen", "127.0.0.1:0", "--h2c-listen", "127.0.0.1:0"])
        .args(["--max-body", &MAX_BODY.to_string(), "--tls-cert"])
        .arg(&pki.cert)
        .arg("--tls-key")
        .arg(&pki.key)
        .arg("--root")
        .arg(&root)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn twelve serve");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut line = |scheme: &str, speaks: &str| {
        let l = lines.next().unwrap().unwrap();
        assert!(l.contains(speaks), "{l}");
        twelve_testkit::addr_in(&l, scheme).unwrap_or_else(|| panic!("{l}"))
    };
    let plain = line("http", "(http/1.1 and h2c;");
    let tls = line("https", "(h2 and http/1.1;");
    let h2c = line("http", "(h2c only;");
    Serve {
        child,
        plain,
        tls,
        h2c,
        pki,
        root,
    }
}

impl Serve {
    fn https(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.tls.port())
    }

    /// `/metrics` over the plain listener, HTTP/1.1.
    fn metrics(&self) -> String {
        ok(curl(&[
            "--http1.1",
            &format!("http://{}/metrics", self.plain),
        ]))
    }
}

fn curl(args: &[&str]) -> Output {
    Command::new("curl")
        .args(["-sS", "--max-time", "10"])
        .args(args)
        .output()
        .unwrap()
}

/// What curl got: the body, and `%{http_version} %{response_code}` ("2 200").
struct Got {
    body: Vec<u8>,
    version: String,
}

/// curl with `args`, its body through a file (binary-safe).
fn fetch(s: &Serve, name: &str, args: &[&str]) -> Got {
    let file = s.pki.dir.join(format!("curl-{name}.out"));
    let f = file.to_str().unwrap();
    let out = curl(&[args, &["-o", f, "-w", "%{http_version} %{response_code}"]].concat());
    Got {
        version: ok(out),
        body: std::fs::read(&file).unwrap_or_default(),
    }
}

const JSON: &[u8] = br#"{"message":"Hello, World!"}"#;

/// curl's `--http2` over TLS: ALPN picks h2; routes, static files and ranges as over
/// HTTP/1.1, which ALPN still offers.
#[test]
fn curl_speaks_h2_over_tls_with_alpn() {
    if !have("curl", "--version") {
        twelve_testkit::skip_or_fail("curl is not installed (apt-get install curl)");
        return;
    }
    let s = serve("h2-curl-tls");
    let ca = s.pki.ca_pem.to_str().unwrap().to_owned();
    let tls = |path: &str| s.https(path);
    let g = fetch(&s, "json", &["--http2", "--cacert", &ca, &tls("/json")]);
    assert_eq!((g.body.as_slice(), g.version.as_str()), (JSON, "2 200"));
    let g = fetch(&s, "png", &["--http2", "--cacert", &ca, &tls("/logo.png")]);
    assert_eq!(g.version, "2 200");
    assert_eq!(g.body, std::fs::read(s.root.join("logo.png")).unwrap());
    let g = fetch(
        &s,
        "range",
        &["--http2", "--cacert", &ca, "-r", "0-4", &tls("/a.txt")],
    );
    assert_eq!(
        (g.body.as_slice(), g.version.as_str()),
        (&b"hello"[..], "2 206")
    );
    let g = fetch(&s, "h1", &["--http1.1", "--cacert", &ca, &tls("/json")]);
    assert_eq!((g.body.as_slice(), g.version.as_str()), (JSON, "1.1 200"));
    let m = s.metrics();
    assert!(m.contains("twelve_h2_connections_total 3\n"), "{m}");
    assert!(
        m.contains("twelve_protocol_requests_total{protocol=\"h2\"} 3\n"),
        "{m}"
    );
}

/// `--http2-prior-knowledge` on the plain listener (which also takes HTTP/1.1) and on the
/// h2c-only one; `--http1.1` is refused on the h2c-only one and served on the plain one.
#[test]
fn curl_with_prior_knowledge_and_the_h2c_port_refusing_http11() {
    if !have("curl", "--version") {
        twelve_testkit::skip_or_fail("curl is not installed (apt-get install curl)");
        return;
    }
    let s = serve("h2-curl-h2c");
    for (name, addr) in [("plain", s.plain), ("h2c", s.h2c)] {
        let url = format!("http://{addr}/json");
        let g = fetch(&s, name, &["--http2-prior-knowledge", &url]);
        assert_eq!(
            (g.body.as_slice(), g.version.as_str()),
            (JSON, "2 200"),
            "{name}"
        );
        let url = format!("http://{addr}/index.html");
        let g = fetch(&s, name, &["--http2-prior-knowledge", "-I", &url]);
        assert_eq!(g.version, "2 200", "{name}");
    }
    let url = format!("http://{}/json", s.h2c);
    let refused = curl(&["--http1.1", "-w", "%{http_version} %{response_code}", &url]);
    assert!(
        !refused.status.success(),
        "HTTP/1.1 answered on the h2c port"
    );
    assert_eq!(text(&refused.stdout), "0 000");
    let g = fetch(
        &s,
        "h1",
        &["--http1.1", &format!("http://{}/json", s.plain)],
    );
    assert_eq!((g.body.as_slice(), g.version.as_str()), (JSON, "1.1 200"));
    let m = s.metrics();
    assert!(
        m.contains("twelve_h2_errors_total{kind=\"preface\"} 1\n"),
        "{m}"
    );
    assert!(
        m.contains("twelve_protocol_requests_total{protocol=\"h2\"} 4\n"),
        "{m}"
    );
}

/// nghttp fetches a page and the assets it links (`-a`), over h2c and TLS, and POSTs a file
/// (`-d`); every response is whole.
#[test]
fn nghttp_gets_a_page_with_its_assets_and_posts() {
    if !have("nghttp", "--version") {
        twelve_testkit::skip_or_fail("nghttp is not installed (apt-get install nghttp2-client)");
        return;
    }
    let s = serve("h2-nghttp");
    let urls = [
        format!("http://{}/index.html", s.h2c),
        format!("http://{}/index.html", s.plain),
        s.https("/index.html"),
    ];
    for url in &urls {
        // -s prints one line per request: id, times, status, size, path.
        let out = ok(Command::new("nghttp").args(["-ans", url]).output().unwrap());
        let rows: Vec<(&str, &str)> = out
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f.len() == 7 && f[6].starts_with('/')).then(|| (f[4], f[6]))
            })
            .collect();
        let mut paths: Vec<&str> = rows.iter().map(|r| r.1).collect();
        paths.sort();
        assert_eq!(
            paths,
            ["/app.js", "/index.html", "/logo.png", "/style.css"],
            "{url}: {out}"
        );
        assert!(rows.iter().all(|r| r.0 == "200"), "{url}: {out}");
    }
    // A POST: the body goes out in DATA (END_STREAM on the last), the answer comes back
    // whole (405: `twelve serve`'s routes take GET; the body was read to the end first).
    let body = s.pki.dir.join("post.txt");
    std::fs::write(&body, "x".repeat(100_000)).unwrap();
    let url = format!("http://{}/json", s.h2c);
    let out = Command::new("nghttp")
        .args(["-v", "-d"])
        .arg(&body)
        .arg(&url)
        .output()
        .unwrap();
    let out = ok(out);
    assert!(out.contains(":status: 405"), "{out}");
    assert!(out.contains("send DATA frame"), "{out}");
    assert!(!out.contains("RST_STREAM"), "{out}");
    let m = s.metrics();
    assert!(
        m.contains("twelve_protocol_requests_total{protocol=\"h2\"} 13\n"),
        "{m}"
    );
}

/// h2load's count of succeeded requests, from its `requests:` line, which must show no
/// failure.
fn h2load_succeeded(out: &Output) -> u64 {
    let t = text(&out.stdout);
    let line = t
        .lines()
        .find(|l| l.starts_with("requests:"))
        .unwrap_or_else(|| panic!("no requests line: {t}{}", text(&out.stderr)));
    assert!(line.contains(" 0 failed, 0 errored, 0 timeout"), "{line}");
    line.split(',')
        .find_map(|f| f.trim().strip_suffix(" succeeded"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no succeeded count: {line}"))
}

/// h2load with many streams per connection on each listener: every request succeeds, and
/// the server counts exactly as many.
#[test]
fn h2load_requests_all_succeed_and_are_counted() {
    if !have("h2load", "--version") {
        twelve_testkit::skip_or_fail("h2load is not installed (apt-get install nghttp2-client)");
        return;
    }
    let s = serve("h2-h2load");
    let runs: [(String, &[&str]); 4] = [
        (
            format!("http://{}/json", s.h2c),
            &["-n", "2000", "-c", "4", "-m", "10"],
        ),
        (
            format!("http://{}/plaintext", s.plain),
            &["-n", "1000", "-c", "2", "-m", "100"],
        ),
        (s.https("/json"), &["-n", "1000", "-c", "4", "-m", "1"]),
        (s.https("/logo.png"), &["-n", "200", "-c", "2", "-m", "10"]),
    ];
    let mut total = 0;
    for (url, args) in &runs {
        let out = Command::new("h2load")
            .args(*args)
            .arg(url)
            .output()
            .unwrap();
        let n = h2load_succeeded(&out);
        assert_eq!(n.to_string(), args[1], "{url}");
        assert!(
            text(&out.stdout).contains(&format!("status codes: {n} 2xx,")),
            "{}",
            text(&out.stdout)
        );
        total += n;
    }
    let m = s.metrics();
    let want = format!("twelve_protocol_requests_total{{protocol=\"h2\"}} {total}\n");
    assert!(m.contains(&want), "{m}");
}

fn python_h2() -> bool {
    Command::new("python3")
        .args(["-c", "import h2"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// contrib/h2/client.py's JSON line.
fn python(args: &[&str]) -> serde_json::Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/contrib/h2/client.py");
    let out = ok(Command::new("python3")
        .arg(script)
        .args(args)
        .output()
        .unwrap());
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// Python's `h2` (python-hyper) as the client: a GET over TLS and over h2c, and a POST of
/// 3 MB, three times the server's initial stream window: it can only be sent whole if the
/// server opens the windows as it reads.
#[test]
fn python_h2_gets_and_posts_a_body_larger_than_the_window() {
    if !python_h2() {
        twelve_testkit::skip_or_fail("Python's h2 is not installed (pip install h2)");
        return;
    }
    let s = serve("h2-python");
    let ca = s.pki.ca_pem.to_str().unwrap().to_owned();
    let port = s.tls.port().to_string();
    let got = python(&["localhost", &port, "/a.txt", "--cafile", &ca]);
    assert_eq!(
        (got["status"].as_u64(), got["body_len"].as_u64()),
        (Some(200), Some(11))
    );
    let port = s.h2c.port().to_string();
    let got = python(&["127.0.0.1", &port, "/json"]);
    assert_eq!(got["status"], 200);
    assert_eq!(got["fields"]["content-type"], "application/json");
    assert_eq!(got["body_len"].as_u64(), Some(JSON.len() as u64));
    let n = BIG_POST.to_string();
    let got = python(&[
        "127.0.0.1",
        &port,
        "/json",
        "--method",
        "POST",
        "--body-bytes",
        &n,
    ]);
    assert_eq!(got["sent"].as_u64(), Some(BIG_POST as u64));
    assert_eq!(got["status"], 405, "{got}");
    assert!(got["window_updates"].as_u64().unwrap() >= 2, "{got}");
}
