//! `twelve sweep` and `twelve compare` as processes over loopback, tiny and bounded: a
//! two-step sweep against the embedded server writes its CSV, JSON, plots and HTML; the knee
//! search runs its probes; a comparison starts and stops two `twelve serve` commands.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn twelve() -> Command {
    Command::new(env!("CARGO_BIN_EXE_twelve"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("sweep_cli")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn ok(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "exit {:?}\n{stdout}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Short runs: 0.3 s measured after 0.1 s of warm-up, one client thread.
const SHORT: [&str; 6] = ["-d", "300ms", "--warmup", "100ms", "-t", "1"];

#[test]
fn sweep_writes_csv_json_plots_and_html() {
    let dir = scratch("sweep");
    let out = twelve()
        .args(["sweep", "--concurrency", "1,2", "--no-doctor"])
        .args(SHORT)
        .arg("--csv")
        .arg(dir.join("s.csv"))
        .arg("--json")
        .arg(dir.join("s.json"))
        .arg("--plot")
        .arg(dir.join("plots"))
        .arg("--html")
        .arg(dir.join("s.html"))
        .output()
        .unwrap();
    let stdout = ok(&out);
    assert_eq!(
        stdout.lines().count(),
        4,
        "header, two steps, where:\n{stdout}"
    );
    // It says where it wrote its files.
    let d = dir.display();
    assert_eq!(
        stdout.lines().last().unwrap(),
        format!("wrote {d}/s.csv, {d}/s.json, {d}/plots (5 plots), {d}/s.html"),
    );

    let csv = std::fs::read_to_string(dir.join("s.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[0].starts_with("start_time,concurrency,complete,failed,req_per_s"));
    for (line, conns) in lines[1..].iter().zip(["1", "2"]) {
        let cols: Vec<&str> = line.split(',').collect();
        assert_eq!(cols[1], conns);
        assert!(cols[2].parse::<u64>().unwrap() > 0, "no responses: {line}");
        assert_eq!(cols[3], "0", "failures: {line}");
    }

    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("s.json")).unwrap()).unwrap();
    assert_eq!(doc["schema"], "twelve-sweep-report/1");
    assert_eq!(doc["mode"], "sweep");
    assert_eq!(doc["steps"].as_array().unwrap().len(), 2);
    assert_eq!(doc["steps"][1]["report"]["config"]["connections"], 2);
    assert!(doc["version"].as_str().unwrap().contains("commit"));

    // No step failed a request: no errors chart.
    assert!(!dir.join("plots").join("errors.svg").exists());
    for name in [
        "throughput",
        "latency",
        "distribution",
        "throughput-over-time",
        "latency-over-time",
    ] {
        let svg = std::fs::read_to_string(dir.join("plots").join(format!("{name}.svg"))).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
            "{name}"
        );
    }
    let html = std::fs::read_to_string(dir.join("s.html")).unwrap();
    assert_eq!(html.matches("<svg").count(), 5);
    assert!(html.contains("doctor's summary was not available"));
    // Each step's self-check verdict is in the table.
    assert!(html.contains("<th class=\"k\">verdict</th>"), "{html}");
}

#[test]
fn find_max_rate_reports_the_runs_that_decided_it() {
    let dir = scratch("knee");
    // Loopback answers 400 req/s well within 1 s: the knee lies above the range after the
    // two end runs.
    let out = twelve()
        .args([
            "sweep",
            "--find-max-rate",
            "--rate",
            "200..400",
            "--slo",
            "p99<1s",
        ])
        .args(["-c", "2", "--no-doctor"])
        .args(SHORT)
        .arg("--json")
        .arg(dir.join("k.json"))
        .output()
        .unwrap();
    let stdout = ok(&out);
    assert!(stdout.contains("knee: above the range"), "{stdout}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("k.json")).unwrap()).unwrap();
    assert_eq!(doc["mode"], "find-max-rate");
    assert_eq!(doc["knee"]["max_rate_per_s"], 400.0);
    assert_eq!(doc["knee"]["pass_step"], 1);
    assert_eq!(doc["steps"][0]["load"], 200.0);
}

#[test]
fn find_max_rate_with_an_unmeetable_slo_exits_1() {
    let out = twelve()
        .args([
            "sweep",
            "--find-max-rate",
            "--rate",
            "100..200",
            "--slo",
            "p50<1ns",
        ])
        .args(["-c", "1", "--no-doctor"])
        .args(SHORT)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("even the lowest rate failed"));
}

#[test]
fn fractional_connection_count_is_a_usage_error() {
    let out = twelve()
        .args(["sweep", "--concurrency", "1.5,2", "http://127.0.0.1:9/"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad connection count"));
}

#[test]
fn bad_plan_is_a_usage_error() {
    let out = twelve()
        .args(["sweep", "--concurrency", "10..1:1", "http://127.0.0.1:9/"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("LOW is above HIGH"));
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn compare_starts_and_stops_two_servers_in_turn() {
    let dir = scratch("compare");
    let port = free_port();
    let serve = format!(
        "{} serve --workers 1 --listen 127.0.0.1:{port}",
        env!("CARGO_BIN_EXE_twelve")
    );
    // Side A is a shell that runs the server as its child, as nginx's master runs its
    // workers: stopping only the PID would leave the child holding the port.
    let wrapped = format!("sh -c '{serve} & wait'");
    let url = format!("http://127.0.0.1:{port}/plaintext");
    let out = twelve()
        .args([
            "compare",
            &wrapped,
            &serve,
            "--rounds",
            "2",
            "--url",
            &url,
            "-c",
            "2",
            // A shared 2-CPU host may make a round client-bound; ranking is not the point here.
            "--allow-invalid",
        ])
        .args(SHORT)
        .arg("--json")
        .arg(dir.join("c.json"))
        .output()
        .unwrap();
    let stdout = ok(&out);
    let rounds: Vec<&str> = stdout.lines().filter(|l| l.starts_with("round ")).collect();
    assert_eq!(rounds.len(), 4, "{stdout}");
    assert!(rounds[0].starts_with("round 1 A") && rounds[1].starts_with("round 1 B"));
    assert!(rounds.iter().all(|l| l.contains(" 0 errors")), "{stdout}");
    assert!(stdout.contains("B/A"), "{stdout}");
    // The table fits 100 columns, and ends with the conclusion.
    let widest = stdout.lines().map(|l| l.chars().count()).max().unwrap();
    let table: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.contains("rounds, A B A B"))
        .collect();
    assert!(
        table.iter().all(|l| l.chars().count() <= 100),
        "{widest}: {stdout}"
    );
    assert!(
        ["every round agrees", "rounds disagree", "no difference"]
            .iter()
            .any(|s| stdout.contains(s)),
        "{stdout}"
    );
    // The servers' startup lines go to their log, not into the report.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("listening on"), "{stderr}");
    assert!(stdout.contains("server output: "), "{stdout}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("c.json")).unwrap()).unwrap();
    assert_eq!(doc["schema"], "twelve-compare/1");
    assert_eq!(doc["rounds"], 2);
    let figures = doc["figures"].as_array().unwrap();
    assert_eq!(figures[0]["figure"], "req/s");
    assert_eq!(figures[0]["a"]["values"].as_array().unwrap().len(), 2);
    assert_eq!(doc["conclusion"]["ranked"], true, "{doc}");
    // Both servers, the wrapped one's child included, were stopped: the port is free.
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
}

#[test]
fn compare_refuses_a_port_that_already_answers() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/");
    let out = twelve()
        .args(["compare", "true", "true", "--rounds", "1", "--url", &url])
        .args(SHORT)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already answers"));
}
