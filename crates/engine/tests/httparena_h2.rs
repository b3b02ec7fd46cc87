//! `apps::httparena` over HTTP/2: the checks HttpArena's scripts/validate.sh runs for its
//! baseline-h2 (TLS with ALPN h2, its port 8443), baseline-h2c (an h2c-only listener, its port
//! 8082) and static-h2 profiles (HttpArena 28606ba, `site/content/docs/test-profiles/h2/`),
//! run with curl as validate.sh runs them, and the baseline-h2c ones again in raw frames. One
//! in-process server has a plain, a TLS and an h2c-only listener.

mod common;

use common::{BOUND, TestServer, test_config};
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::sync::Arc;
use twelve_engine::{Request, Response, apps::httparena};
use twelve_testkit::h2::{Client, Got};
use twelve_tls::ServerTls;
use twelve_tls::testing::Pki;

/// The server and its TLS and h2c-only addresses (`server.addr` is the plain one).
struct Arena {
    server: TestServer,
    tls: SocketAddr,
    h2c: SocketAddr,
    _pki: Pki,
}

/// The static-h2 files validate.sh asks for, under `static/` of the root.
const STATIC: [(&str, &str); 3] = [
    ("reset.css", "html{box-sizing:border-box}\n"),
    ("app.js", "console.log('app');\n"),
    ("manifest.json", "{\"name\":\"arena\"}\n"),
];

fn arena(tag: &str) -> Arena {
    let pki = Pki::new(tag);
    let root = pki.dir.join("root");
    std::fs::create_dir_all(root.join("static")).unwrap();
    for (name, text) in STATIC {
        std::fs::write(root.join("static").join(name), text).unwrap();
    }
    let mut c = test_config();
    let any = c.listen[0];
    c.listen = vec![any; 3];
    c.tls = Some(Arc::new(ServerTls::load(&pki.cert, &pki.key).unwrap()));
    c.tls_listen = vec![false, true, false];
    c.h2c_listen = vec![false, false, true];
    c.root = Some(root);
    // `GET /` "root" is how TestServer::finish checks the server's life.
    let router = httparena::router().get(
        "/",
        |_: &Request<'_, '_>, _: &[u8], res: &mut Response<'_>| {
            res.send(200, "text/plain", &[], b"root")
        },
    );
    let server = TestServer::start_router(c, router);
    let addrs = server.handle.local_addrs();
    Arena {
        tls: addrs[1],
        h2c: addrs[2],
        server,
        _pki: pki,
    }
}

/// Two operands in 100..=999, as validate.sh's `$((RANDOM % 900 + 100))`.
fn random_pair() -> (u32, u32) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let mut x = nanos ^ std::process::id().rotate_left(16) | 1;
    let mut next = || {
        // xorshift32: enough to keep a hard-coded answer from passing.
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x % 900 + 100
    };
    (next(), next())
}

fn have_curl() -> bool {
    let ok = Command::new("curl")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        twelve_testkit::skip_or_fail("curl is not installed (apt-get install curl)");
    }
    ok
}

/// `curl -s --max-time 30 ARGS`'s stdout, whatever its exit status (validate.sh's `|| true`).
fn curl(args: &[&str]) -> String {
    let out = Command::new("curl")
        .args(["-s", "--max-time", "30"])
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// validate.sh's `check`: the last line of `curl -D- ...`.
fn body(args: &[&str]) -> String {
    let out = curl(&[&["-D-"], args].concat());
    out.lines().last().unwrap_or_default().to_owned()
}

/// validate.sh's `check_header` for Content-Type: the value, or it with parameters, with
/// `text/javascript` taken for `application/javascript` (RFC 9239).
fn assert_content_type(want: &str, args: &[&str]) {
    let head = curl(&[&["-D-", "-o", "/dev/null"], args].concat());
    let value = head
        .lines()
        .find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case("content-type")
                .then(|| v.trim().to_owned())
        })
        .unwrap_or_default();
    let norm = value.replace("text/javascript", "application/javascript");
    assert!(
        norm == want || norm.starts_with(&format!("{want};")),
        "{args:?}: Content-Type {value:?}, want {want}"
    );
}

#[test]
fn baseline_h2_over_tls_passes_validate_sh() {
    if !have_curl() {
        return;
    }
    let a = arena("arena-baseline-h2");
    let url = |q: &str| format!("https://localhost:{}/baseline2?{q}", a.tls.port());
    // HTTP/2 protocol negotiation.
    let v = curl(&[
        "-k",
        "--http2",
        "-o",
        "/dev/null",
        "-w",
        "%{http_version}",
        &url("a=1&b=1"),
    ]);
    assert_eq!(v, "2");
    assert_eq!(body(&["-k", "--http2", &url("a=13&b=42")]), "55");
    let (x, y) = random_pair();
    let q = format!("a={x}&b={y}");
    assert_eq!(body(&["-k", "--http2", &url(&q)]), (x + y).to_string());
    assert_content_type("text/plain", &["-k", "--http2", &url("a=1&b=1")]);
    a.server.finish();
}

#[test]
fn baseline_h2c_passes_validate_sh() {
    if !have_curl() {
        return;
    }
    let a = arena("arena-baseline-h2c");
    let url = |q: &str| format!("http://localhost:{}/baseline2?{q}", a.h2c.port());
    let pk = "--http2-prior-knowledge";
    let v = curl(&[
        pk,
        "-o",
        "/dev/null",
        "-w",
        "%{http_version}",
        &url("a=1&b=1"),
    ]);
    assert_eq!(v, "2");
    // The h2c port refuses HTTP/1.1: anything but a 200.
    let code = curl(&[
        "--max-time",
        "5",
        "--http1.1",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &url("a=1&b=1"),
    ]);
    assert_ne!(code, "200");
    assert_eq!(body(&[pk, &url("a=13&b=42")]), "55");
    let (x, y) = random_pair();
    let q = format!("a={x}&b={y}");
    assert_eq!(body(&[pk, &url(&q)]), (x + y).to_string());
    assert_content_type("text/plain", &[pk, &url("a=1&b=1")]);
    a.server.finish();
}

#[test]
fn static_h2_passes_validate_sh() {
    if !have_curl() {
        return;
    }
    let a = arena("arena-static-h2");
    let url = |f: &str| format!("https://localhost:{}/static/{f}", a.tls.port());
    let h2 = ["-k", "--http2"];
    assert_content_type("text/css", &[&h2[..], &[&url("reset.css")]].concat());
    assert_content_type(
        "application/javascript",
        &[&h2[..], &[&url("app.js")]].concat(),
    );
    assert_content_type(
        "application/json",
        &[&h2[..], &[&url("manifest.json")]].concat(),
    );
    for (name, text) in STATIC {
        let size = curl(
            &[
                &h2[..],
                &["-o", "/dev/null", "-w", "%{size_download}", &url(name)],
            ]
            .concat(),
        );
        assert_eq!(size, text.len().to_string(), "{name}");
    }
    let code = curl(
        &[
            &h2[..],
            &[
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                &url("nonexistent.txt"),
            ],
        ]
        .concat(),
    );
    assert_eq!(code, "404");
    a.server.finish();
}

/// baseline-h2c's checks without curl: raw frames on the h2c-only port, and an HTTP/1.1
/// request there answered with the server preface and GOAWAY, never an HTTP/1.1 response.
#[test]
fn baseline2_over_h2c_in_raw_frames() {
    let a = arena("arena-baseline-h2c-raw");
    let mut c = Client::connect(a.h2c, BOUND);
    let (x, y) = random_pair();
    let paths = [
        ("/baseline2?a=13&b=42".to_owned(), "55".to_owned()),
        (format!("/baseline2?a={x}&b={y}"), (x + y).to_string()),
        ("/baseline2?a=1".to_owned(), "400 Bad Request\n".to_owned()),
    ];
    for (i, (path, want)) in paths.iter().enumerate() {
        let id = 2 * i as u32 + 1;
        c.get(id, path);
        let r = c.response(id).unwrap();
        assert_eq!(String::from_utf8_lossy(&r.body), *want, "{path}");
        assert_eq!(r.field("content-type"), Some("text/plain"), "{path}");
    }
    drop(c);
    let mut sock = TcpStream::connect(a.h2c).unwrap();
    sock.set_read_timeout(Some(BOUND)).unwrap();
    sock.write_all(b"GET /baseline2?a=1&b=1 HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let mut c = Client::raw(sock);
    let mut goaway = false;
    loop {
        match c.next_frame() {
            Got::GoAway { code, .. } => goaway = code == 0x1,
            Got::Closed => break,
            Got::Settings(_) | Got::WindowUpdate { .. } => {}
            other => panic!("{other:?}"),
        }
    }
    assert!(
        goaway,
        "no GOAWAY PROTOCOL_ERROR for HTTP/1.1 on the h2c port"
    );
    drop(c);
    a.server.finish();
}

/// json-h2c's checks (validate.sh): `/json` over h2c with prior knowledge on the h2c-only
/// port answers in HTTP/2, as `application/json`, right for its four (count, m) pairs.
#[test]
fn json_h2c_passes_validate_sh() {
    if !have_curl() {
        return;
    }
    let data =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/arena/dataset.json");
    let dataset = httparena::Dataset::load(&data).expect("dataset loads");
    let mut c = test_config();
    c.listen = vec![c.listen[0]; 2];
    c.h2c_listen = vec![false, true];
    let router = httparena::full_router(Some(dataset), None).get(
        "/",
        |_: &Request<'_, '_>, _: &[u8], res: &mut Response<'_>| {
            res.send(200, "text/plain", &[], b"root")
        },
    );
    let server = TestServer::start_router(c, router);
    let port = server.handle.local_addrs()[1].port();
    let url = |count: u64, m: u64| format!("http://localhost:{port}/json/{count}?m={m}");
    let pk = "--http2-prior-knowledge";
    let v = curl(&[pk, "-o", "/dev/null", "-w", "%{http_version}", &url(1, 1)]);
    assert_eq!(v, "2");
    assert_content_type("application/json", &[pk, &url(1, 1)]);
    for (count, m) in [(12, 3), (22, 7), (31, 2), (50, 5)] {
        common::assert_json_page(curl(&[pk, &url(count, m)]).as_bytes(), count, m);
    }
    server.finish();
}
