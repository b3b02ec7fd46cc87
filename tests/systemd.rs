//! `twelve serve` under systemd's socket activation, driven by systemd's own
//! `systemd-socket-activate` (Debian package systemd): the listener systemd made (and the
//! connection queued on it before twelve started) is served, names map to CPUs, a wrong name
//! is refused, and an upgrade hands systemd's socket on without leaking `LISTEN_*`.

use twelve_testkit::Reap;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const ACTIVATE: &str = "/usr/bin/systemd-socket-activate";

fn free_port() -> SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap()
}

/// Starts `systemd-socket-activate -l ADDR --fdname=NAME twelve serve ...` and waits for its
/// "Listening on" line (twelve itself starts at the first connection).
fn activate(addr: SocketAddr, fdname: &str, extra: &[&str]) -> Option<Child> {
    if !std::path::Path::new(ACTIVATE).exists() {
        twelve_testkit::skip_or_fail(format!("no {ACTIVATE} (Debian package systemd)"));
        return None;
    }
    let mut child = Command::new(ACTIVATE)
        .args(["-l", &addr.to_string(), &format!("--fdname={fdname}")])
        .arg(env!("CARGO_BIN_EXE_twelve"))
        .args(["serve", "--listen", &addr.to_string(), "--workers", "1"])
        .args(["--generation-header"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert!(line.contains("Listening on"), "{line}");
    // Keep draining stderr (twelve's log) so that it never blocks on a full pipe.
    std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = err.read_to_end(&mut sink);
    });
    Some(child)
}

fn get(addr: SocketAddr) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"GET /plaintext HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

#[test]
fn a_socket_activated_serve_answers_the_connection_that_started_it_and_upgrades() {
    let addr = free_port();
    let control: PathBuf =
        std::env::temp_dir().join(format!("twelve-sd-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&control);
    let Some(mut child) = activate(addr, "http", &["--control", control.to_str().unwrap()]) else {
        return;
    };
    let mut reap = Reap::new(child.id());
    // This connection waits in systemd's accept queue while twelve starts.
    let first = get(addr);
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    assert!(first.contains("X-Twelve-Generation: 1\r\n"), "{first}");
    let mut c = std::os::unix::net::UnixStream::connect(&control).unwrap();
    writeln!(c, "upgrade").unwrap();
    let mut answer = String::new();
    BufReader::new(&c).read_line(&mut answer).unwrap();
    assert!(answer.starts_with("ready generation=2"), "{answer}");
    // Connections that reach the old generation before its workers take their listeners out
    // of epoll are still served by it (docs/restart.md); the next ones by generation 2.
    let mut tries = 0;
    loop {
        let next = get(addr);
        assert!(next.starts_with("HTTP/1.1 200"), "{next}");
        if next.contains("X-Twelve-Generation: 2\r\n") {
            break;
        }
        tries += 1;
        assert!(tries < 100, "generation 2 never answered: {next}");
    }
    // Stop the serving generation (the first has drained and exited by itself).
    let pid = answer.trim().rsplit("pid=").next().unwrap().to_owned();
    assert!(Command::new("kill").arg(&pid).status().unwrap().success());
    reap.release(pid.parse().unwrap());
    reap.release(child.id());
    let _ = child.wait();
    let _ = std::fs::remove_file(&control);
}

#[test]
fn a_socket_named_for_another_cpu_is_refused_with_its_name() {
    let addr = free_port();
    let Some(mut child) = activate(addr, "http-cpu4000", &[]) else {
        return;
    };
    // The connection starts twelve, which must refuse the socket and exit 2.
    let _ = TcpStream::connect(addr).map(|mut s| s.write_all(b"GET / HTTP/1.1\r\n\r\n"));
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(2));
}

#[test]
fn readiness_reloading_mainpid_and_stopping_reach_the_notify_socket() {
    use std::os::unix::net::UnixDatagram;
    let dir = std::env::temp_dir();
    let notify = dir.join(format!("twelve-notify-{}.sock", std::process::id()));
    let control = dir.join(format!("twelve-notify-{}.ctl", std::process::id()));
    let _ = std::fs::remove_file(&notify);
    let sock = UnixDatagram::bind(&notify).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--workers",
            "1",
            "--control",
        ])
        .arg(&control)
        .env("NOTIFY_SOCKET", &notify)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut reap = Reap::new(child.id());
    let next = || {
        let mut buf = [0u8; 512];
        let n = sock.recv(&mut buf).unwrap();
        String::from_utf8_lossy(&buf[..n]).into_owned()
    };
    assert_eq!(next(), format!("MAINPID={}\nREADY=1\n", child.id()));
    // Through the CLI this time: it prints the answer and exits 0 once the new generation is
    // ready.
    let out = Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args(["upgrade", "--control"])
        .arg(&control)
        .output()
        .unwrap();
    let answer = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{answer}");
    assert!(answer.starts_with("ready generation=2 pid="), "{answer}");
    let new_pid: u32 = answer
        .trim()
        .rsplit("pid=")
        .next()
        .unwrap()
        .parse()
        .unwrap();
    reap.push(new_pid);
    assert_eq!(next(), "RELOADING=1\n");
    // The new generation takes over as the service's main process.
    assert_eq!(next(), format!("MAINPID={new_pid}\nREADY=1\n"));
    assert!(
        Command::new("kill")
            .arg(new_pid.to_string())
            .status()
            .unwrap()
            .success()
    );
    reap.release(new_pid);
    assert_eq!(next(), "STOPPING=1\n");
    reap.release(child.id());
    let _ = child.wait();
    let _ = std::fs::remove_file(&notify);
}

#[test]
fn upgrade_without_a_server_names_the_control_socket_and_exits_2() {
    let out = Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args(["upgrade", "--control", "/nonexistent/twelve.sock"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--control /nonexistent/twelve.sock"), "{err}");
}
