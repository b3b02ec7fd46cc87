//! Restart and upgrade a server under load with zero failed requests: the test of
//! docs/restart.md, in a network namespace of its own, run against `twelve serve` and against
//! the engine's example of an embedded server (crates/engine/examples/upgrade.rs), both built
//! on `twelve_engine::restart`. A strict client (tests/upgrade/client.rs) drives keep-alive
//! connections, a new connection per request and HTTP/2 connections while the loop upgrades N times
//! (`TWELVE_UPGRADE_N`, 20 by default; bench/upgrade.sh runs 100) at random 0-1 s intervals.
//! Pass: no failed request, every generation answered, each old generation gone before its
//! drain deadline, no RST, listen drop or migrate failure in the namespace. The negative
//! controls run every time and must fail, or the zero would mean nothing.

#[path = "upgrade/client.rs"]
mod client;
#[path = "upgrade/netns.rs"]
mod netns;
#[path = "upgrade/program.rs"]
mod program;
#[path = "upgrade/server.rs"]
mod server;

use client::{Load, Outcome, Tally};
use netns::Netns;
use program::Program;
use server::{DRAIN, Serve};
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One scenario at a time: the machine has few cores and every scenario loads them.
static SERIAL: Mutex<()> = Mutex::new(());

const KEEP_ALIVE: usize = 4;
const PER_REQUEST: usize = 2;
const HTTP2: usize = 2;

fn addr() -> SocketAddr {
    server::ADDR.parse().unwrap()
}

/// Each scenario runs as `twelve_serve::<scenario>` and `engine_example::<scenario>`.
macro_rules! against_both {
    ($($scenario:ident,)*) => {
        mod twelve_serve {
            $(#[test]
            fn $scenario() {
                super::$scenario(super::Program::Twelve);
            })*
        }
        mod engine_example {
            $(#[test]
            fn $scenario() {
                super::$scenario(super::Program::Example);
            })*
        }
    };
}

against_both! {
    upgrades_under_load_fail_no_request,
    upgrades_on_the_io_uring_backend_fail_no_request,
    sigusr2_through_twelve_upgrade_pid_starts_the_next_generation,
    back_to_back_upgrades_fail_no_request,
    a_successor_that_exits_or_never_gets_ready_is_rolled_back,
    a_file_streaming_across_an_upgrade_completes,
    idle_connections_that_send_as_the_drain_starts_are_answered,
    sigterm_under_load_loses_no_request_in_flight,
}

/// The namespace, or a skip: root and `ip` are needed.
fn namespace(migrate_req: u8) -> Option<Netns> {
    match Netns::create(migrate_req) {
        Ok(ns) => Some(ns),
        Err(e) => {
            twelve_testkit::skip_or_fail(format!("no network namespace (root and iproute2): {e}"));
            None
        }
    }
}

fn scratch_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("twelve-upgrade-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Waits until the load has `n` more successes than now (an event, not a fixed sleep).
fn await_ok(tally: &Tally, n: u64) {
    let start = tally.ok.load(std::sync::atomic::Ordering::Relaxed);
    let t0 = Instant::now();
    while tally.ok.load(std::sync::atomic::Ordering::Relaxed) < start + n {
        assert!(t0.elapsed() < Duration::from_secs(30), "the load stalled");
        std::thread::yield_now();
    }
}

/// xorshift64: the random intervals, reproducible from the printed seed.
struct Rng(u64);

impl Rng {
    fn new() -> Self {
        let seed = std::env::var("TWELVE_UPGRADE_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
                    | 1
            });
        eprintln!("upgrade intervals: TWELVE_UPGRADE_SEED={seed}");
        Self(seed)
    }

    fn below_ms(&mut self, max_ms: u64) -> Duration {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        Duration::from_millis(self.0 % (max_ms + 1))
    }
}

/// What a run of the loop saw.
struct Run {
    tally: Arc<Tally>,
    generations: u64,
    /// How long each old generation took to exit after its successor was ready.
    exits: Vec<(u32, Option<Duration>)>,
    deltas: std::collections::BTreeMap<&'static str, u64>,
}

impl Run {
    fn report(&self, what: &str) {
        eprintln!(
            "{what}: {} | generations {} | answered by {:?} | netns {:?}",
            self.tally.summary(),
            self.generations,
            self.tally.generations.lock().unwrap(),
            self.deltas
        );
    }

    /// The pass criteria of docs/restart.md.
    fn assert_clean(&self, what: &str) {
        self.report(what);
        assert_eq!(self.tally.failed(), 0, "{what}: {}", self.tally.summary());
        let answered = self.tally.generations.lock().unwrap();
        for g in 1..=self.generations {
            assert!(
                answered.contains_key(&g),
                "{what}: generation {g} never answered"
            );
        }
        assert!(
            !answered.contains_key(&0),
            "{what}: a response without the generation"
        );
        for (pid, took) in &self.exits {
            let took = took.unwrap_or_else(|| panic!("{what}: old generation {pid} never exited"));
            // The drain's deadline, plus what exiting after it takes on a loaded machine.
            assert!(
                took < DRAIN + Duration::from_secs(1),
                "{what}: {pid} took {took:?}"
            );
        }
        for (k, d) in &self.deltas {
            assert_eq!(*d, 0, "{what}: {k} rose by {d}");
        }
    }
}

/// Upgrades `n` times under load, waiting a random 0..=`max_gap_ms` between upgrades.
fn upgrade_loop(ns: &Netns, serve: &Serve, n: u64, max_gap_ms: u64) -> Run {
    let before = ns.counters();
    let load = Load::start(addr(), (KEEP_ALIVE, PER_REQUEST, HTTP2), ns.enterer());
    await_ok(&load.tally, 50);
    let mut rng = Rng::new();
    let mut watchers = Vec::new();
    let mut generation = 1;
    for _ in 0..n {
        let old = serve.pid();
        let answer = serve.command("upgrade");
        generation += 1;
        assert_eq!(
            server::field(&answer, "generation="),
            Some(generation),
            "upgrade: {answer}"
        );
        watchers.push(std::thread::spawn(move || {
            (old, server::wait_exit(old, DRAIN + Duration::from_secs(2)))
        }));
        // The new generation must have answered before the next one replaces it.
        await_ok(&load.tally, 1);
        std::thread::sleep(rng.below_ms(max_gap_ms));
    }
    await_ok(&load.tally, 50);
    let tally = load.stop();
    let exits = watchers.into_iter().map(|w| w.join().unwrap()).collect();
    let deltas = netns::deltas(&before, &ns.counters());
    Run {
        tally,
        generations: generation,
        exits,
        deltas,
    }
}

fn upgrade_count() -> u64 {
    std::env::var("TWELVE_UPGRADE_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20)
}

fn upgrades_under_load_fail_no_request(program: Program) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(ns) = namespace(0) else { return };
    let dir = scratch_dir("loop");
    let serve = Serve::start(&ns, &dir, program, &[]);
    let n = upgrade_count();
    let run = upgrade_loop(&ns, &serve, n, 1000);
    serve.stop();
    run.assert_clean(&format!("{}, {n} upgrades", program.name()));
}

fn upgrades_on_the_io_uring_backend_fail_no_request(program: Program) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let disabled = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled");
    if disabled.as_deref().map(str::trim).unwrap_or("0") != "0" {
        twelve_testkit::skip_or_fail("io_uring is disabled on this kernel");
        return;
    }
    let Some(ns) = namespace(0) else { return };
    let dir = scratch_dir("uring");
    let serve = Serve::start(&ns, &dir, program, &["--io", "uring"]);
    let run = upgrade_loop(&ns, &serve, 5, 1000);
    serve.stop();
    run.assert_clean(&format!("{} --io uring, 5 upgrades", program.name()));
}

fn sigusr2_through_twelve_upgrade_pid_starts_the_next_generation(program: Program) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(ns) = namespace(0) else { return };
    let dir = scratch_dir("usr2");
    let serve = Serve::start(&ns, &dir, program, &[]);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args(["upgrade", "--pid", &serve.pid().to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // No answer comes back through a signal: the new generation's line is the event.
    serve.await_line("generation 2)");
    // Until generation 1 has handed the control socket over, it may answer (and refuses
    // while it drains); each try is one round trip, bounded.
    let mut tries = 0;
    loop {
        let status = serve.command("status");
        if status.starts_with("serving generation=2 ") {
            break;
        }
        assert!(
            status.starts_with("serving generation=1 ") || status.starts_with("refused:"),
            "{status}"
        );
        tries += 1;
        assert!(tries < 1000, "generation 2 never took the control socket");
    }
    serve.stop();
}

fn back_to_back_upgrades_fail_no_request(program: Program) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(ns) = namespace(0) else { return };
    let dir = scratch_dir("b2b");
    let serve = Serve::start(&ns, &dir, program, &[]);
    // Each upgrade starts while the previous old generation still drains.
    let run = upgrade_loop(&ns, &serve, 10, 0);
    serve.stop();
    run.assert_clean(&format!("{}, 10 back-to-back upgrades", program.name()));
}

/// Points the symlink `link` at `target`, atomically (as a package manager replaces a file).
fn repoint(link: &Path, target: &Path) {
    let tmp = link.with_extension("tmp");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp).unwrap();
    std::fs::rename(&tmp, link).unwrap();
}

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn a_successor_that_exits_or_never_gets_ready_is_rolled_back(program: Program) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(ns) = namespace(0) else { return };
    let dir = scratch_dir("rollback");
    let link = dir.join("twelve-current");
    repoint(&link, &program.path());
    let serve = Serve::start(
        &ns,
        &dir,
        program,
        &["--binary", link.to_str().unwrap(), "--upgrade-timeout", "3"],
    );
    let before = ns.counters();
    let load = Load::start(addr(), (KEEP_ALIVE, PER_REQUEST, HTTP2), ns.enterer());
    await_ok(&load.tally, 50);
    let first = serve.pid();
    for (bad, why) in [
        (script(&dir, "exits", "exit 3"), "exited before"),
        (script(&dir, "hangs", "exec sleep 60"), "not ready within"),
    ] {
        repoint(&link, &bad);
        let answer = serve.command("upgrade");
        assert!(
            answer.starts_with("failed:") && answer.contains(why),
            "{answer}"
        );
        assert_eq!(serve.pid(), first, "the old generation keeps serving");
        await_ok(&load.tally, 50);
    }
    repoint(&link, &program.path());
    let answer = serve.command("upgrade");
    assert_eq!(server::field(&answer, "generation="), Some(2), "{answer}");
    await_ok(&load.tally, 50);
    let tally = load.stop();
    let deltas = netns::deltas(&before, &ns.counters());
    serve.stop();
    Run {
        tally,
        generations: 2,
        exits: vec![(first, server::wait_exit(first, DRAIN * 2))],
        deltas,
    }
    .assert_clean(&format!("{}, rollbacks then an upgrade", program.name()));
}

fn a_file_streaming_across_an_upgrade_completes(program: Program) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(ns) = namespace(0) else { return };
    let dir = scratch_dir("file");
    let root = dir.join("www");
    std::fs::create_dir_all(&root).unwrap();
    let size: usize = 64 << 20;
    std::fs::write(root.join("big.bin"), vec![7u8; size]).unwrap();
    let serve = Serve::start(&ns, &dir, program, &["--root", root.to_str().unwrap()]);
    let enter = ns.enterer();
    let (started_tx, started) = std::sync::mpsc::channel();
    let (go_tx, go) = std::sync::mpsc::channel::<()>();
    let download = std::thread::spawn(move || {
        enter();
        let mut s = client::connect(addr()).unwrap();
        s.write_all(b"GET /big.bin HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        let (head, mut got) = client::read_head(&mut s).unwrap();
        started_tx.send(()).unwrap();
        // Hold the rest in the socket until the upgrade is done: the response is in flight
        // across the whole handover and the start of the drain.
        go.recv().unwrap();
        let mut buf = vec![0u8; 1 << 16];
        while (got as u64) < head.content_length {
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) => panic!("download failed after {got} bytes: {e}"),
            }
        }
        (head.status, head.close, got)
    });
    started.recv().unwrap();
    let answer = serve.command("upgrade");
    assert_eq!(server::field(&answer, "generation="), Some(2), "{answer}");
    go_tx.send(()).unwrap();
    let (status, _, got) = download.join().unwrap();
    assert_eq!((status, got), (200, size));
    serve.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

fn idle_connections_that_send_as_the_drain_starts_are_answered(program: Program) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(ns) = namespace(0) else { return };
    let dir = scratch_dir("idle");
    let serve = Serve::start(&ns, &dir, program, &[]);
    ns.enter_for(|| {
        let request = b"GET /plaintext HTTP/1.1\r\nHost: t\r\n\r\n";
        let mut idle: Vec<_> = (0..32).map(|_| client::connect(addr()).unwrap()).collect();
        for s in &mut idle {
            assert_eq!(client::exchange(s, request).0, client::Outcome::Ok);
        }
        let answer = serve.command("upgrade");
        assert_eq!(server::field(&answer, "generation="), Some(2), "{answer}");
        // The old generation has begun its drain (the answer comes after that): every idle
        // connection sends at once, and is answered, with `Connection: close`. A worker may
        // see the drain a moment after the answer: a response without close is followed by
        // another request, which must then be answered with close.
        for s in &mut idle {
            let mut rounds = 0;
            loop {
                s.write_all(request).unwrap();
                let head = client::read_response(s).unwrap_or_else(|o| panic!("{o:?}"));
                assert_eq!((head.status, head.generation), (200, Some(1)));
                if head.close {
                    break;
                }
                rounds += 1;
                assert!(rounds < 3, "still no Connection: close while draining");
            }
        }
    });
    serve.stop();
}

fn sigterm_under_load_loses_no_request_in_flight(program: Program) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(ns) = namespace(0) else { return };
    let dir = scratch_dir("sigterm");
    let mut serve = Serve::start(&ns, &dir, program, &[]);
    // Keep-alive connections only: each always has its next request on the way, which a
    // drain that closes idle connections would cut off.
    let load = Load::start(addr(), (16, 0, HTTP2), ns.enterer());
    await_ok(&load.tally, 200);
    server::signal(serve.child.id(), "TERM");
    serve.child.wait().unwrap();
    let tally = load.stop();
    eprintln!(
        "{}, SIGTERM under load: {}",
        program.name(),
        tally.summary()
    );
    // After the stop nobody listens: reconnecting is refused, as it must be. Nothing that
    // was sent may be lost.
    for lost in [
        Outcome::Reset,
        Outcome::Eof,
        Outcome::Timeout,
        Outcome::Bad,
        Outcome::Unprocessed,
    ] {
        assert_eq!(tally.count(lost), 0, "{}", tally.summary());
    }
    assert!(
        tally.count(Outcome::Refused) > 0,
        "the load outlived the server?"
    );
}

#[test]
fn negative_control_kill_then_start_loses_requests() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(ns) = namespace(0) else { return };
    let dir = scratch_dir("naive");
    let mut serve = Serve::start(&ns, &dir, Program::Twelve, &[]);
    let load = Load::start(addr(), (KEEP_ALIVE, PER_REQUEST, HTTP2), ns.enterer());
    await_ok(&load.tally, 50);
    for _ in 0..3 {
        // The naive restart: stop the server (gracefully, even), then start it again.
        serve.stop();
        serve = Serve::start(&ns, &dir, Program::Twelve, &[]);
        await_ok(&load.tally, 50);
    }
    let tally = load.stop();
    serve.stop();
    eprintln!("negative control, kill then start x3: {}", tally.summary());
    assert!(
        tally.failed() > 0,
        "the harness saw no failure: {}",
        tally.summary()
    );
}

#[test]
fn negative_control_fresh_listeners_without_migrate_req_reset_the_queue() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // The fallback of docs/restart.md (fresh listeners, then close the old ones) is only
    // zero-failure with tcp_migrate_req=1; with 0 the connections queued on the closed
    // listener are reset, and the client must see it.
    for (migrate, expect_resets) in [(0u8, true), (1, false)] {
        let Some(ns) = namespace(migrate) else { return };
        let (resets, served) = ns.enter_for(|| client::fresh_listener_handover(addr(), 16));
        eprintln!("fresh listeners, tcp_migrate_req={migrate}: {resets} reset, {served} served");
        assert_eq!(resets > 0, expect_resets, "tcp_migrate_req={migrate}");
        assert_eq!(resets + served, 16);
    }
}
