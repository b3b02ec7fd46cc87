//! The rest of `twelve bench`'s features over HTTP/2 (h2c, prior knowledge), as processes
//! against `twelve serve` on loopback: request templates, a targets file, `--connect-to`,
//! shards and `twelve merge`, `twelve compare`, `twelve sweep --streams-plan` (a sweep over
//! streams per connection, h2load's `-m`) and `--flame`. Counts are checked against the
//! server's own per-protocol counters; every run is bounded by `-n` or a fraction of a second.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

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

fn serve() -> Serve {
    let mut child = twelve()
        .args(["serve", "--listen", "127.0.0.1:0", "--workers", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn twelve serve");
    let addr = twelve_testkit::listening_addr(&mut child, "http");
    Serve { child, addr }
}

fn twelve() -> Command {
    Command::new(env!("CARGO_BIN_EXE_twelve"))
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

fn ok(out: Output) -> Output {
    assert!(out.status.success(), "{}", text(&out));
    out
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(out)))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("twelve-h2-features-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The server's requests over HTTP/2, from `/metrics` over HTTP/1.1 (which counts itself
/// under http/1.1, not here).
fn served_h2(addr: SocketAddr) -> u64 {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut body = String::new();
    s.read_to_string(&mut body).unwrap();
    body.lines()
        .find_map(|l| {
            l.strip_prefix("twelve_protocol_requests_total{protocol=\"h2\"}")?
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// `twelve bench --h2c` with `args`, one thread.
fn bench(args: &[&str]) -> serde_json::Value {
    let out = twelve()
        .args(["bench", "--h2c", "-t", "1", "--json"])
        .args(args)
        .output()
        .unwrap();
    json(&ok(out))
}

#[test]
fn templates_a_targets_file_and_connect_to_agree_with_the_server() {
    let s = serve();
    let base = format!("http://{}", s.addr);
    let doc = bench(&[
        "-c",
        "2",
        "--streams",
        "4",
        "-n",
        "200",
        &format!("{base}/json?i={{seq}}&r={{rand:1:9}}"),
    ]);
    assert_eq!(
        (doc["requests"].as_u64(), doc["errors"]["total"].as_u64()),
        (Some(200), Some(0)),
        "{doc}"
    );
    assert_eq!(served_h2(s.addr), 200);

    // vegeta's format: a header for the first target; the rotation takes both in turn.
    let targets = scratch("targets");
    std::fs::write(
        &targets,
        format!("GET {base}/json\nX-Test: 1\n\nGET {base}/plaintext\n"),
    )
    .unwrap();
    let doc = bench(&[
        "-c",
        "2",
        "--streams",
        "4",
        "-n",
        "100",
        "--targets",
        targets.to_str().unwrap(),
    ]);
    assert_eq!(doc["errors"]["status"]["200"], 100, "{doc}");
    assert_eq!(doc["config"]["urls"].as_array().unwrap().len(), 2, "{doc}");
    assert_eq!(served_h2(s.addr), 300);

    // The URL names a host that does not resolve (RFC 6761's .invalid); --connect-to sends
    // the requests to the server, with the URL's name as their :authority.
    let doc = bench(&[
        "-c",
        "2",
        "--streams",
        "4",
        "-n",
        "100",
        "--connect-to",
        &s.addr.to_string(),
        "http://twelve.invalid:81/json",
    ]);
    assert_eq!(doc["errors"]["status"]["200"], 100, "{doc}");
    assert_eq!(served_h2(s.addr), 400);
}

#[test]
fn shards_merge_into_the_servers_count() {
    let s = serve();
    let url = format!("http://{}/json", s.addr);
    let mut files = Vec::new();
    let mut sum = 0;
    for i in 0..2 {
        let shard = format!("{i}/2");
        let doc = bench(&[
            "-c",
            "4",
            "--streams",
            "3",
            "-n",
            "301",
            "--shard",
            &shard,
            &url,
        ]);
        sum += doc["requests"].as_u64().unwrap();
        let f = scratch(&format!("shard{i}.json"));
        std::fs::write(&f, doc.to_string()).unwrap();
        files.push(f);
    }
    assert_eq!(sum, 301);
    assert_eq!(served_h2(s.addr), 301);
    let out = ok(twelve()
        .arg("merge")
        .args(&files)
        .arg("--json")
        .output()
        .unwrap());
    let merged = json(&out);
    assert_eq!(merged["requests"], 301, "{merged}");
    assert_eq!(merged["config"]["protocol"], "h2c", "{merged}");
    assert_eq!(merged["config"]["streams"], 3, "{merged}");
    assert_eq!(merged["errors"]["total"], 0, "{merged}");
}

#[test]
fn compare_loads_both_sides_over_http2() {
    let (a, b) = (serve(), serve());
    let out = twelve()
        .args(["compare", &format!("http://{}/json", a.addr)])
        .arg(format!("http://{}/json", b.addr))
        .args([
            "--h2c",
            "--streams",
            "4",
            "-c",
            "2",
            "-t",
            "1",
            "--rounds",
            "1",
        ])
        .args(["-d", "200ms", "--warmup", "0", "--allow-invalid"])
        .output()
        .unwrap();
    let t = text(&ok(out));
    assert!(t.contains("req/s"), "{t}");
    // Every request both sides served came over HTTP/2.
    assert!(served_h2(a.addr) > 0 && served_h2(b.addr) > 0, "{t}");
}

#[test]
fn a_sweep_over_streams_runs_each_step_at_its_stream_count() {
    let s = serve();
    let dir = scratch("sweep");
    std::fs::create_dir_all(&dir).unwrap();
    let (csv, json_path) = (dir.join("s.csv"), dir.join("s.json"));
    let out = twelve()
        .args([
            "sweep",
            "--h2c",
            "--streams-plan",
            "1,4",
            "-c",
            "2",
            "-t",
            "1",
        ])
        .args(["-d", "200ms", "--warmup", "0", "--drain-timeout", "1s"])
        .arg(format!("http://{}/json", s.addr))
        .arg("--csv")
        .arg(&csv)
        .arg("--json")
        .arg(&json_path)
        .arg("--html")
        .arg(dir.join("s.html"))
        .output()
        .unwrap();
    let t = text(&ok(out));
    let header = std::fs::read_to_string(&csv).unwrap();
    assert!(header.starts_with("start_time,streams,"), "{header}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(doc["kind"], "streams", "{t}");
    // The page names the protocol, its steps' column the streams, and it has an error table.
    let html = std::fs::read_to_string(dir.join("s.html")).unwrap();
    assert!(
        html.contains("<code>h2c, streams per step</code>"),
        "{html}"
    );
    assert!(html.contains("<th>streams</th>"));
    assert!(html.contains("<h2>Errors</h2>"));
    let steps = doc["steps"].as_array().unwrap();
    let streams: Vec<u64> = steps
        .iter()
        .map(|s| s["report"]["config"]["streams"].as_u64().unwrap())
        .collect();
    assert_eq!(streams, [1, 4], "{t}");
    let answered: u64 = steps
        .iter()
        .map(|s| s["report"]["requests"].as_u64().unwrap())
        .sum();
    assert!(
        steps.iter().all(|s| s["report"]["errors"]["total"] == 0),
        "{t}"
    );
    // A timed step ends with requests in flight: the server may have answered those too,
    // at most one per stream of each step.
    let served = served_h2(s.addr);
    assert!(
        (answered..=answered + 2 * (1 + 4)).contains(&served),
        "answered {answered}, served {served}: {t}"
    );
}

#[test]
fn sweep_streams_without_http2_is_refused_by_name() {
    let out = twelve()
        .args(["sweep", "--streams-plan", "1,4", "http://127.0.0.1:9/"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(text(&out).contains("--streams-plan"), "{}", text(&out));
}

#[cfg(feature = "flame")]
#[test]
fn flame_samples_the_embedded_server_over_http2() {
    if let Err(e) = twelve_load::perf::probe() {
        twelve_testkit::skip_or_fail(format!("perf cannot sample here: {e}"));
        return;
    }
    let svg = scratch("flame.svg");
    let out = twelve()
        .args(["bench", "--h2c", "--streams", "8", "-c", "4"])
        .args(["-d", "1s", "--warmup", "200ms", "--flame"])
        .arg(&svg)
        .output()
        .unwrap();
    let t = text(&ok(out));
    assert!(t.contains("flame graph of"), "{t}");
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(drawn.contains("twelve-w"), "no server worker frame: {t}");
    // The server's HTTP/2 connection is in the profile: it served HTTP/2.
    assert!(
        drawn.contains("h2::"),
        "no HTTP/2 frame in the profile: {t}"
    );
}

#[test]
fn an_https_targets_file_runs_over_h2_with_alpn() {
    let pki = twelve_tls::testing::Pki::new("h2-features");
    let mut child = twelve()
        .args(["serve", "--workers", "1", "--listen", "127.0.0.1:0"])
        .args(["--tls-listen", "127.0.0.1:0", "--tls-cert"])
        .arg(&pki.cert)
        .arg("--tls-key")
        .arg(&pki.key)
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
    let tls = line("https");
    let s = Serve { child, addr: plain };
    // The targets' scheme, not a URL on the command line, makes the run TLS (ALPN h2).
    let targets = scratch("tls-targets");
    std::fs::write(
        &targets,
        format!(
            "GET https://localhost:{p}/json\n\nGET https://localhost:{p}/plaintext\nX-Test: 1\n",
            p = tls.port()
        ),
    )
    .unwrap();
    let out = twelve()
        .args([
            "bench",
            "--h2",
            "-t",
            "1",
            "-c",
            "2",
            "--streams",
            "5",
            "-n",
            "100",
        ])
        .args(["--json", "--cacert", pki.ca_pem.to_str().unwrap()])
        // `localhost` may resolve to ::1 first; the server listens on 127.0.0.1.
        .args(["--connect-to", &tls.to_string(), "--targets"])
        .arg(&targets)
        .output()
        .unwrap();
    let doc = json(&ok(out));
    assert_eq!(doc["config"]["protocol"], "h2", "{doc}");
    assert_eq!(doc["errors"]["status"]["200"], 100, "{doc}");
    assert_eq!(served_h2(s.addr), 100);
}
