//! Steering: every accepted connection lands on the worker of the CPU that received it, with
//! `SO_INCOMING_CPU` and with the CBPF program.
//!
//! Loopback receives a packet on the sender's CPU, so to get several receiving CPUs the test
//! re-runs itself in a fresh network (and mount) namespace with RPS on `lo` spreading flows
//! over every CPU (docs/kernel-facts.md, "Per-CPU listeners"). Inside, the server counts accepted
//! connections whose `SO_INCOMING_CPU` differs from the accepting worker's CPU
//! (`Config::check_steering`); the test asserts none did. Skips, saying why, where namespaces,
//! sysfs or RPS are not available or the host has one CPU; fails instead under
//! `TWELVE_REQUIRE_ALL_TESTS=1`, as in CI.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use twelve_engine::{Config, Request, Response, Router, Server, Steer};
use twelve_testkit::skip_or_fail;

const INNER: &str = "TWELVE_STEERING_INNER";
const CONNECTIONS: usize = 64;

#[test]
fn incoming_cpu_steers_every_connection_to_its_cpu() {
    outer("incoming-cpu");
}

#[test]
fn cbpf_steers_every_connection_to_its_cpu() {
    outer("cbpf");
}

/// Negative control: without steering the kernel's hash puts about half the flows on the
/// other CPU's worker, so the check above can see misses.
#[test]
fn none_steers_some_connections_elsewhere() {
    outer("none");
}

/// Runs `inner` for `mode` inside a new netns with RPS on lo, or skips.
fn outer(mode: &str) {
    if std::env::var_os(INNER).is_some() {
        return inner(mode);
    }
    let cpus = twelve_sys::cpus::online();
    if cpus.len() < 2 || cpus.as_slice()[0] != 0 {
        return skip_or_fail(format!("needs CPUs 0 and 1 online, have {cpus}"));
    }
    let mask = format!("{:x}", (1u128 << cpus.len().min(64)) - 1);
    let exe = std::env::current_exe().unwrap();
    let test = match mode {
        "none" => "none_steers_some_connections_elsewhere".to_owned(),
        _ => format!(
            "{}_steers_every_connection_to_its_cpu",
            mode.replace('-', "_")
        ),
    };
    let script = format!(
        "mount -t sysfs none /sys && ip link set lo up && \
         echo {mask} > /sys/class/net/lo/queues/rx-0/rps_cpus && exec \"$0\" --exact {test} --nocapture"
    );
    let out = match Command::new("unshare")
        .args(["-nm", "sh", "-c", &script])
        .arg(&exe)
        .env(INNER, mode)
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            return skip_or_fail(format!("cannot run unshare ({e})"));
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && !stdout.contains("running 1 test") {
        return skip_or_fail(format!(
            "no network namespace with RPS on lo here: {stderr}"
        ));
    }
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "inner run failed:\n{stdout}\n{stderr}"
    );
    eprintln!("{stderr}");
}

fn inner(mode: &str) {
    let cpus = twelve_sys::cpus::online();
    let config = Config {
        steer: match mode {
            "cbpf" => Steer::Cbpf,
            "none" => Steer::None,
            _ => Steer::IncomingCpu,
        },
        check_steering: true,
        ..common::loopback(cpus.len())
    };
    let router = Router::new().get(
        "/",
        |_: &Request<'_, '_>, _: &[u8], r: &mut Response<'_>| r.send(200, "text/plain", &[], b"ok"),
    );
    let server = Server::new(config, router).start().unwrap();
    let addr = server.local_addrs()[0];
    // Connect from every CPU in turn; RPS decides which CPU receives each flow.
    let per_cpu = CONNECTIONS / cpus.len();
    let mut threads = Vec::new();
    for &cpu in cpus.as_slice() {
        threads.push(std::thread::spawn(move || {
            twelve_sys::cpus::pin_current_thread(cpu).unwrap();
            for _ in 0..per_cpu {
                let mut s = TcpStream::connect(addr).unwrap();
                s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
                    .unwrap();
                let mut out = Vec::new();
                s.read_to_end(&mut out).unwrap();
                assert!(out.starts_with(b"HTTP/1.1 200 "));
            }
        }));
    }
    for t in threads {
        t.join().unwrap();
    }
    let m = server.metrics();
    eprintln!(
        "{mode}: {} accepts, {} steer misses, per worker (cpu, accepts, requests): {:?}",
        m.accepts, m.steer_misses, m.per_worker
    );
    assert_eq!(m.accepts, (per_cpu * cpus.len()) as u64);
    if mode == "none" {
        assert!(
            m.steer_misses > 0,
            "the steering check saw no miss without steering"
        );
        return;
    }
    assert_eq!(m.steer_misses, 0, "connections accepted off their CPU");
    let busy = m.per_worker.iter().filter(|(_, a, _)| *a > 0).count();
    assert!(
        busy >= 2,
        "RPS spread the flows over one CPU only: {:?}",
        m.per_worker
    );
}
