//! `twelve bench` as a process: the embedded default measures its own server and prints a
//! report; `--json` validates against nothing less than the fields the issue names; `--slo`
//! decides the exit code; `--hdr-log` writes a log; a bad flag exits 2 naming the flag.
//! Every run is a fraction of a second.
use std::path::Path;
use std::process::{Command, Output};

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_twelve"))
        .arg("bench")
        .args(args)
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const SHORT: [&str; 6] = ["-d", "300ms", "--warmup", "100ms", "-c", "4"];

#[test]
fn embedded_default_prints_a_wrk_style_report() {
    let out = bench(&SHORT);
    let text = stdout(&out);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.starts_with("Running 0.3s test @ http://127.0.0.1:"),
        "{text}"
    );
    assert!(text.contains("/json"), "{text}");
    for line in [
        "Thread Stats",
        "Latency Distribution",
        "Requests/sec:",
        "Client:",
        "Server (embedded, CPU ",
        "requests per server CPU-second",
        "Self-check: closed model, concurrency 4 of 4 asked",
        "Verdict: ",
    ] {
        assert!(text.contains(line), "missing {line}: {text}");
    }
}

#[test]
fn json_has_the_documented_fields() {
    let out = bench(&[&SHORT[..], &["--json"]].concat());
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["requests"].as_u64().unwrap() > 0, "{doc}");
    assert_eq!(doc["errors"]["total"], 0, "{doc}");
    assert!(doc["config"]["server_cpu"].is_u64(), "{doc}");
    for key in ["duration_s", "rps"] {
        assert!(doc[key].as_f64().unwrap() > 0.0, "{key}");
    }
    for side in ["corrected", "uncorrected"] {
        for key in ["p50_us", "p90_us", "p99_us", "p999_us", "max_us"] {
            assert!(
                doc["latency"][side][key].as_f64().unwrap() > 0.0,
                "{side}.{key}"
            );
        }
    }
    assert!(doc["connections"]["reached"].as_bool().unwrap());
    // The embedded server's side, read from its thread in this same process.
    let server = &doc["server"];
    assert_eq!(server["cpu"], doc["config"]["server_cpu"], "{doc}");
    assert!(server["requests"].as_u64().unwrap() > 0, "{doc}");
    for key in ["cpu_ns_per_request", "requests_per_cpu_s"] {
        assert!(server[key].as_f64().unwrap() > 0.0, "server.{key}: {doc}");
    }
    let verdict = doc["self_check"]["verdict"].as_str().unwrap();
    assert!(["valid", "client-bound"].contains(&verdict), "{doc}");
    assert!(doc["client"]["cpu_ns_per_request"].as_f64().unwrap() > 0.0);
    // The host's state rides along: the doctor's summary, one entry per check.
    let checks = doc["doctor"]["checks"].as_array().expect("doctor.checks");
    assert_eq!(checks.len(), twelve_doctor::CATALOGUE.len(), "{doc}");
}

#[test]
fn failed_slo_exits_1_and_says_so() {
    let out = bench(&[&SHORT[..], &["--slo", "p50<1ns", "--slo", "errors<1%"]].concat());
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("SLO p50<1ns: FAIL"), "{text}");
    assert!(text.contains("SLO errors<1%: pass"), "{text}");
}

/// `--slo 'p99<5s'` shows the measured value in seconds, the unit said; the JSON's `actual`
/// stays in µs and `unit` says so.
#[test]
fn slo_shows_the_measured_value_in_its_own_unit() {
    let out = bench(&[&SHORT[..], &["--slo", "p99<5s"]].concat());
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("SLO p99<5s: pass (measured "));
    assert!(line.is_some_and(|l| l.ends_with("s)")), "{text}");
    let out = bench(&[&SHORT[..], &["--slo", "p99<5s", "--json"]].concat());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["slo"][0]["unit"], "us", "{doc}");
    let measured = doc["slo"][0]["measured"].as_str().unwrap();
    let seconds: f64 = measured.strip_suffix('s').unwrap().parse().unwrap();
    let actual = doc["slo"][0]["actual"].as_f64().unwrap();
    assert!((seconds - actual / 1e6).abs() <= 0.0005, "{doc}");
}

#[test]
fn hdr_log_is_written() {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench_cli.hlog");
    let _ = std::fs::remove_file(&path);
    let out = bench(&[&SHORT[..], &["--hdr-log", path.to_str().unwrap()]].concat());
    assert!(out.status.success());
    let log = std::fs::read_to_string(&path).unwrap();
    assert!(
        log.starts_with("#[Histogram log format version 1.3]"),
        "{log}"
    );
    assert!(log.contains(",HISTF"), "{log}");
    assert!(log.contains("Tag=uncorrected,"), "{log}");
}

#[test]
fn hgrm_is_written() {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench_cli.hgrm");
    let _ = std::fs::remove_file(&path);
    let out = bench(&[&SHORT[..], &["--hgrm", path.to_str().unwrap()]].concat());
    assert!(out.status.success());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.trim_start().starts_with("Value"), "{text}");
    assert!(text.contains("#[Buckets ="), "{text}");
}

#[test]
fn bad_flag_value_exits_2_naming_the_flag() {
    let out = bench(&["-d", "soon"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-d/--duration"));
}

/// `-c 1` with no `-t` runs (one worker for one connection), with a URL too, where every CPU
/// would otherwise get a worker.
#[test]
fn one_connection_needs_no_threads_flag() {
    let server = Server::start();
    let url = format!("http://127.0.0.1:{}/json", server.1);
    let out = bench(&[&url, "-c", "1", "-n", "50", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["config"]["threads"], 1, "{doc}");
    assert_eq!(doc["errors"]["status"]["200"], 50, "{doc}");
}

/// A negative value reaches the flag and is refused in its own sentence (flag, value, what is
/// allowed), not with clap's "use '-- -5'" tip.
#[test]
fn negative_values_are_refused_by_their_flag() {
    for (args, flag, allowed) in [
        (["-R", "-5"], "-R/--rate", "a rate is a positive number"),
        (["-R", "-5k"], "-R/--rate", "a rate is a positive number"),
        (["-n", "-5"], "-n/--requests", "a whole number"),
        (["-c", "-5"], "--connections", "must be a whole number"),
        (["-t", "-1"], "--threads", "must be a whole number"),
        (["-p", "-2"], "--pipeline", "must be a whole number"),
    ] {
        let out = bench(&[&args[..], &[&dead_url()]].concat());
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.contains("use '--"), "{args:?}: {err}");
        for want in [flag, args[1], allowed] {
            assert!(err.contains(want), "{args:?} lacks {want:?}: {err}");
        }
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A loopback URL nothing listens on: a port the kernel gave us, closed again.
fn dead_url() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("http://127.0.0.1:{port}/")
}

/// A dead server must not give a full report of 0.00us, exit 0, and `--slo 'p99<2ms'` "pass";
/// nor run out its whole duration: it stops once every connection failed, and says only its
/// sentence, with one failure count (one refused connect per connection: it stopped there).
#[test]
fn a_run_that_never_connected_exits_2_in_one_sentence() {
    let url = dead_url();
    let out = bench(&[
        &url, "-d", "10m", "--warmup", "0", "-c", "2", "-t", "1", "--slo", "p99<2ms",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(
            "twelve bench: could not measure: no connection was ever established (connection \
             refused 2 times"
        ),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "{}", stdout(&out));
}

#[test]
fn json_of_a_dead_server_says_unmeasured() {
    let url = dead_url();
    let out = bench(&[&url, "-d", "200ms", "--warmup", "0", "-c", "2", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["self_check"]["verdict"], "unmeasured", "{doc}");
    assert_eq!(doc["requests"], 0);
}

/// Each bad value exits 2 before any load, with one message naming the flag and the value,
/// said once (`--rate must be positive: --rate must be positive` was said twice).
macro_rules! refused {
    ($($name:ident: $argv:expr => $says:expr;)*) => {$(
        #[test]
        fn $name() {
            let out = bench(&$argv);
            assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
            let err = stderr(&out);
            assert!(err.contains($says), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(out.stdout.is_empty(), "load ran: {}", stdout(&out));
            let message = err.trim_start_matches("twelve: ");
            let halves: Vec<&str> = message.split(": ").collect();
            let n = halves.len();
            assert!(n < 2 || halves[n / 2..] != halves[..n - n / 2], "repeated: {err}");
        }
    )*};
}

refused! {
    zero_rate_named_once: ["-R", "0"] => "-R/--rate 0: must be a positive number";
    zero_duration_refused: ["-d", "0s"] => "-d/--duration 0: a run needs a positive duration";
    zero_count_refused: ["-n", "0"] => "-n/--requests 0: a run needs at least 1 request";
    offline_cpu_named: ["--cpus", "4095"] => "--cpus 4095: CPU 4095 is not online";
    offline_server_cpu_named: ["--server-cpu", "4095"] => "--server-cpu 4095: CPU 4095 is not online";
    zero_threads_refused: ["-t", "0"] => "--threads 0";
    fewer_connections_than_threads: ["-c", "1", "-t", "2"] => "-c/--connections 1: fewer than the 2 worker threads";
    deep_pipeline_named: ["-p", "5000"] => "-p/--pipeline 5000: must be from 1 to 1024";
    zero_timeout_named: ["--timeout", "0s"] => "both must be positive";
    ramp_with_poisson_refused: ["-R", "1k:2k", "--arrival", "poisson"] => "uniform arrivals only";
    bad_max_errors_named: ["--max-errors", "200%"] => "--max-errors 200%: expected a percentage";
    connections_over_the_open_file_limit: ["-c", "100000000"] => "-c/--connections 100000000: needs about";
}

/// Runs `twelve bench ARGS` in a network namespace of its own whose ephemeral port range is
/// ten ports, so connects run out of local ports (EADDRNOTAVAIL) as repeated runs do; `None`
/// when this host cannot make one (no root, no unshare).
fn bench_with_ten_ports(args: &[&str]) -> Option<Output> {
    let probe = Command::new("unshare").args(["-n", "true"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        twelve_testkit::skip_or_fail("cannot create a network namespace (unshare -n needs root)");
        return None;
    }
    let script = format!(
        "ip link set lo up && sysctl -qw net.ipv4.ip_local_port_range='40000 40009' && \
         exec {} bench {}",
        env!("CARGO_BIN_EXE_twelve"),
        args.join(" ")
    );
    Some(
        Command::new("unshare")
            .args(["-n", "sh", "-c", &script])
            .output()
            .unwrap(),
    )
}

/// EADDRNOTAVAIL is named, not counted as a nameless "other" connect error.
#[test]
fn exhausted_local_ports_are_named_with_the_way_out() {
    let Some(out) = bench_with_ten_ports(&["-c", "20", "-d", "200ms", "--warmup", "0", "--json"])
    else {
        return;
    };
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        doc["errors"]["connect_no_port"].as_u64().unwrap() > 0,
        "{doc}"
    );
    let check = &doc["self_check"];
    // Short of connections, or (when failed connects outnumber 10% of attempts) unmeasured.
    let verdict = check["verdict"].as_str().unwrap();
    assert!(
        ["under-delivered", "unmeasured"].contains(&verdict),
        "{doc}"
    );
    let reason = check["reason"].as_str().unwrap();
    assert!(
        reason.contains("local ports exhausted (EADDRNOTAVAIL"),
        "{reason}"
    );
    let advice = check["advice"].as_str().unwrap();
    assert!(
        advice.contains("sockets in TIME_WAIT on this host now"),
        "{advice}"
    );
    assert!(advice.contains("--source 127.0.0.2-127.0.0.40"), "{advice}");
}

/// Three source addresses bring three port ranges: twenty connections fit in ten ports each.
#[test]
fn source_addresses_lift_the_port_limit() {
    let Some(out) = bench_with_ten_ports(&[
        "-c",
        "20",
        "-d",
        "200ms",
        "--warmup",
        "0",
        "--json",
        "--source",
        "127.0.0.2-127.0.0.4",
    ]) else {
        return;
    };
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["errors"]["connect_no_port"], 0, "{doc}");
    assert_eq!(doc["connections"]["peak_open"], 20, "{doc}");
    // A busy shared host may make the client the bottleneck; it must not be short of load.
    assert_ne!(doc["self_check"]["verdict"], "under-delivered", "{doc}");
}

#[test]
fn source_of_the_wrong_family_is_refused() {
    let out = bench(&["--source", "::1", "-d", "100ms"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("--source ::1: not of the target's address family"),
        "{err}"
    );
}

/// Off a terminal (as in CI) the live view is a plain line a second on stderr.
#[test]
fn progress_off_a_terminal_is_plain_lines() {
    let out = bench(&["-d", "1500ms", "--warmup", "0", "-c", "2", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("req/s")).collect();
    assert!(!lines.is_empty(), "{err}");
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("twelve bench: ") && !l.contains('\r')),
        "{err}"
    );
    assert!(lines[0].contains("/1.5s"), "{err}");
    serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("stdout stays JSON");
}

/// A stepped ramp in one run: 2k, 4k, 6k req/s for 300 ms each, offered 4k on average and
/// 6k over the last 20%, judged by the same self-check.
#[test]
fn a_stepped_ramp_runs_every_step_and_judges_the_end_rate() {
    let out = bench(&[
        "-R", "2k:6k:2k", "-d", "300ms", "--warmup", "0", "-c", "8", "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let near = |v: &serde_json::Value, want: f64| (v.as_f64().unwrap() - want).abs() < 1e-6;
    assert!(near(&doc["config"]["rate_per_s"], 4000.0), "{doc}");
    assert!(near(&doc["config"]["planned_duration_s"], 0.9), "{doc}");
    let ramp = doc["config"]["ramp"].as_str().unwrap();
    assert!(
        ramp.contains("2000 to 6000 req/s in steps of 2000"),
        "{ramp}"
    );
    assert!(
        near(&doc["self_check"]["offered_rate_per_s"], 4000.0),
        "{doc}"
    );
    assert!(doc["self_check"]["rate_ratio_end"].is_number(), "{doc}");
}

#[test]
fn a_ramp_by_count_is_refused() {
    let out = bench(&["-R", "1k:2k", "-n", "100"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("a ramp) runs by time: use -d"),
        "{}",
        stderr(&out)
    );
}

/// `twelve serve` on a free loopback port, stopped (by its pid) when dropped.
struct Server(std::process::Child, u16);

impl Server {
    fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(env!("CARGO_BIN_EXE_twelve"))
            .args([
                "serve",
                "--workers",
                "1",
                "--listen",
                &format!("127.0.0.1:{port}"),
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Owned at once, so every path below (the panic too) kills and waits for it.
        let server = Self(child, port);
        // Wait on the event itself: the port answering (bounded by tries, not by a timer).
        for _ in 0..2000 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return server;
            }
            std::thread::yield_now();
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        panic!("twelve serve did not answer on {port}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Each target of a vegeta targets file sends its own method, headers and body.
#[test]
fn a_targets_file_sends_each_targets_own_request() {
    let server = Server::start();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench_cli_targets");
    std::fs::create_dir_all(&dir).unwrap();
    let body = dir.join("body.json");
    std::fs::write(&body, "{}").unwrap();
    let file = dir.join("targets.txt");
    std::fs::write(
        &file,
        format!(
            "GET http://127.0.0.1:{p}/json\nX-Test: 1\n\nPOST http://127.0.0.1:{p}/json\n\
             Content-Type: application/json\n@{}\n",
            body.display(),
            p = server.1
        ),
    )
    .unwrap();
    let out = bench(&[
        "--targets",
        file.to_str().unwrap(),
        "-n",
        "200",
        "-c",
        "2",
        "--json",
        "--max-errors",
        "100%",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let status = doc["errors"]["status"].as_object().unwrap();
    // Every GET answered 200; every POST (a route that takes GET only) answered otherwise.
    assert_eq!(status["200"], 100, "{doc}");
    let others: u64 = status
        .iter()
        .filter(|(code, _)| *code != "200")
        .map(|(_, n)| n.as_u64().unwrap())
        .sum();
    assert_eq!(others, 100, "{doc}");
}

/// `--connect-to` sends to another address than the URL's host; the Host header stays.
#[test]
fn connect_to_sends_elsewhere_than_the_urls_host() {
    let server = Server::start();
    // Nothing listens on the URL's port; the requests must go to the server's.
    let url = dead_url().replace("127.0.0.1", "localhost") + "json";
    let to = format!("127.0.0.1:{}", server.1);
    let out = bench(&[
        &url,
        "--connect-to",
        &to,
        "-n",
        "50",
        "-c",
        "1",
        "-t",
        "1",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["errors"]["status"]["200"], 50, "{doc}");
}

/// `--io uring` runs the same dispatch over io_uring: every answer counted, pipelined too.
#[test]
fn the_io_uring_engine_counts_every_answer() {
    if let Err(e) = twelve_sys::uring::ring::probe() {
        return twelve_testkit::skip_or_fail(format!("io_uring unavailable here ({e})"));
    }
    let server = Server::start();
    let url = format!("http://127.0.0.1:{}/json", server.1);
    for depth in ["1", "8"] {
        let out = bench(&[
            &url, "--io", "uring", "-n", "3000", "-c", "8", "-t", "2", "-p", depth, "--json",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["errors"]["status"]["200"], 3000, "-p {depth}: {doc}");
        assert_eq!(doc["errors"]["total"], 0, "-p {depth}: {doc}");
    }
    let out = bench(&[&url, "--io", "kqueue", "-n", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--io"), "{}", stderr(&out));
}

#[test]
fn bad_targets_line_is_named() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench_cli_targets");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.txt");
    std::fs::write(&file, "GET http://127.0.0.1:9/\nnot a header\n").unwrap();
    let out = bench(&["--targets", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--targets line 2: expected a header"),
        "{}",
        stderr(&out)
    );
}

/// `--unix-socket`: the requests go over a Unix-domain socket; the URL gives Host and path.
#[test]
fn unix_socket_carries_the_requests() {
    use std::io::{Read, Write};
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench_cli_unix");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.sock");
    let _ = std::fs::remove_file(&path);
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    // One connection (-c 1 -t 1), answered request by request until the client closes.
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let (mut buf, mut seen, mut answered) = (Vec::new(), Vec::new(), 0);
        let mut chunk = [0u8; 4096];
        while let Ok(n) = s.read(&mut chunk) {
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
            while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head: Vec<u8> = buf.drain(..end + 4).collect();
                seen.push(String::from_utf8_lossy(&head).into_owned());
                answered += 1;
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
            }
        }
        (answered, seen)
    });
    let out = bench(&[
        "http://localhost/over-unix",
        "--unix-socket",
        path.to_str().unwrap(),
        "-n",
        "20",
        "-c",
        "1",
        "-t",
        "1",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["errors"]["status"]["200"], 20, "{doc}");
    let (answered, seen) = server.join().unwrap();
    assert_eq!(answered, 20);
    assert!(
        seen[0].starts_with("GET /over-unix HTTP/1.1\r\nHost: localhost\r\n"),
        "{}",
        seen[0]
    );
}

#[test]
fn unix_socket_without_a_url_is_refused() {
    let out = bench(&["--unix-socket", "/tmp/none.sock"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--unix-socket /tmp/none.sock: needs a URL too"),
        "{}",
        stderr(&out)
    );
}

/// `taskset -c 1 twelve bench -t 1 ...`: the inherited affinity mask, not every online CPU, is
/// where the worker (and the embedded server) are pinned.
#[test]
fn taskset_decides_where_the_worker_and_the_server_run() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        return twelve_testkit::skip_or_fail(format!(
            "taskset -c 1 needs a second CPU; this machine has {cpus}"
        ));
    }
    let under_taskset = |args: &[&str]| {
        let out = Command::new("taskset")
            .args(["-c", "1", env!("CARGO_BIN_EXE_twelve"), "bench", "-t", "1"])
            .args(SHORT)
            .args(args)
            .arg("--json")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        doc
    };
    let server = Server::start();
    let url = format!("http://127.0.0.1:{}/json", server.1);
    let doc = under_taskset(&[&url]);
    assert_eq!(doc["config"]["cpus"], serde_json::json!([1]), "{doc}");
    assert_eq!(doc["client"]["workers"][0]["cpu"], 1, "{doc}");
    let doc = under_taskset(&[]);
    assert_eq!(doc["config"]["cpus"], serde_json::json!([1]), "{doc}");
    assert_eq!(doc["config"]["server_cpu"], 1, "{doc}");
}

/// `bench --help` groups its ~50 options (connection, load model, requests, TLS, output,
/// distributed, profiling) and wraps to the terminal; `sweep` and `compare` show their own
/// options first, then the bench flags they share.
#[test]
fn help_is_grouped_and_wrapped_to_the_terminal() {
    let help = |cmd: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_twelve"))
            .args([cmd, "--help"])
            .env("COLUMNS", "80")
            .output()
            .unwrap();
        assert!(out.status.success());
        stdout(&out)
    };
    let text = help("bench");
    let headings: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with(' ') && l.ends_with(':'))
        .collect();
    assert_eq!(
        headings,
        [
            "Arguments:",
            "Options:",
            "Connection:",
            "Load model:",
            "Requests:",
            "TLS:",
            "Output:",
            "Distributed:",
            "Profiling:"
        ],
        "{text}"
    );
    for cmd in ["bench", "sweep", "compare"] {
        let text = help(cmd);
        let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(
            widest <= 80,
            "{cmd}: a line of {widest} characters:\n{text}"
        );
    }
    for (cmd, own) in [("sweep", "--concurrency"), ("compare", "--rounds")] {
        let text = help(cmd);
        let own_at = text.find(own).unwrap_or_else(|| panic!("{cmd}: no {own}"));
        let shared_at = text.find("\nConnection:").unwrap();
        assert!(
            own_at < shared_at,
            "{cmd}: its own options come last:\n{text}"
        );
    }
}

/// A `twelve serve` whose worker runs on CPU 0 and a bench whose worker runs there too: the
/// two competed for the CPU, and the verdict says so (it said "valid"); with the client on
/// CPU 1 they did not.
#[test]
fn a_client_and_server_on_the_same_cpu_are_judged_shared_cpu() {
    let allowed = twelve_sys::cpus::allowed().unwrap();
    if !(allowed.contains(0) && allowed.contains(1)) {
        twelve_testkit::skip_or_fail("needs CPUs 0 and 1 in this process's affinity mask");
        return;
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args(["serve", "--listen", "127.0.0.1:0", "--cpus", "0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let addr = twelve_testkit::listening_addr(&mut child, "http");
    let url = format!("http://{addr}/json");
    let verdict = |cpu: &str| {
        let out = bench(&[
            &url, "--cpus", cpu, "-t", "1", "-c", "2", "-d", "200ms", "--warmup", "0", "--json",
        ]);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            doc["self_check"]["verdict"].as_str().unwrap().to_owned(),
            doc["self_check"]["reason"].as_str().unwrap().to_owned(),
        )
    };
    let (shared, reason) = verdict("0");
    let (apart, _) = verdict("1");
    // Our own child, by PID.
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(shared, "shared-cpu", "{reason}");
    assert!(
        reason.starts_with("the client and the server competed for CPUs (CPU 0"),
        "{reason}"
    );
    assert_ne!(apart, "shared-cpu");
}
