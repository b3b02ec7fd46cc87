//! twelve's HttpArena entry: `cargo run --release -p twelve-engine --example httparena [ADDR]`.
//!
//! Serves [`twelve_engine::apps::httparena::router`] on ADDR (default `0.0.0.0:8080`, where
//! HttpArena's scripts look) with one pinned worker per CPU of the process's affinity mask, so
//! `taskset -c 0` gives one worker and a container's `--cpuset-cpus` gives one per CPU of the
//! set; `TWELVE_IO=uring` (or `auto`) picks the io_uring backend, and `TWELVE_COALESCE_US=N`
//! naps N µs after a small batch (`twelve serve --coalesce`). Runs until SIGTERM or SIGINT,
//! then drains. `contrib/httparena/` builds it into the
//! image HttpArena runs.

use std::time::Duration;
use twelve_engine::{Backend, Config, Server, apps::httparena};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "0.0.0.0:8080".to_owned());
    let listen = addr
        .parse()
        .map_err(|e| format!("ADDR {addr}: {e} (expected e.g. 0.0.0.0:8080)"))?;
    let cpus =
        twelve_sys::cpus::allowed().map_err(|e| format!("reading the affinity mask: {e}"))?;
    // The event loop, as `twelve serve --io` takes it; epoll unless TWELVE_IO says otherwise.
    let io: Backend = match std::env::var("TWELVE_IO") {
        Ok(v) => v.parse().map_err(|e| format!("TWELVE_IO={v}: {e}"))?,
        Err(_) => Backend::default(),
    };
    let coalesce = match std::env::var("TWELVE_COALESCE_US") {
        Ok(v) => Some(Duration::from_micros(
            v.parse()
                .map_err(|e| format!("TWELVE_COALESCE_US={v}: {e}"))?,
        )),
        Err(_) => None,
    };
    let config = Config {
        io,
        coalesce,
        listen: vec![listen],
        cpus,
        // HttpArena asks for its endpoints only.
        metrics_path: None,
        // `docker stop` waits 5 s before SIGKILL: finish in-flight requests well within it.
        drain_timeout: Duration::from_secs(2),
        ..Config::default()
    };
    // Before the server starts: the handlers need a descriptor of their own (signal-hook's
    // self-pipe), which a flood of clients could otherwise take first (src/serve.rs has the
    // story). As a container's PID 1 the process must handle SIGTERM itself: the kernel ignores
    // signals PID 1 has no handler for, and `docker stop` would wait for its SIGKILL.
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
    ])
    .map_err(|e| format!("installing the SIGTERM/SIGINT handlers: {e}"))?;
    let handle = Server::new(config, httparena::router())
        .start()
        .map_err(|e| format!("{e} ({addr})"))?;
    for addr in handle.local_addrs() {
        println!(
            "httparena: listening on http://{addr} ({} workers on CPUs {}, io {})",
            handle.cpus().len(),
            twelve_sys::CpuList::from_cpus(handle.cpus().iter().copied()),
            handle.backends().first().copied().unwrap_or_default(),
        );
    }
    if let Some(sig) = signals.forever().next() {
        eprintln!("httparena: signal {sig}, draining");
    }
    handle.shutdown();
    handle.join();
    Ok(())
}
