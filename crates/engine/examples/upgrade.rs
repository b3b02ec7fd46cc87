//! A program that embeds twelve-engine and upgrades itself without losing a connection
//! (`twelve_engine::restart`, docs/restart.md):
//!
//! ```text
//! cargo run -p twelve-engine --example upgrade -- --listen 127.0.0.1:8080 --control /tmp/up.sock
//! ```
//!
//! It serves `GET /plaintext` and `GET /pid` (which process answered). Send the line `upgrade`
//! to the control socket (`twelve upgrade --control /tmp/up.sock` does, and prints the answer)
//! or SIGUSR2 to the process, and the next generation starts: this same program executed again (rebuild it
//! first, and that is an upgrade), handed every listener; the old generation drains and
//! exits. SIGTERM or Ctrl-C stops it after a drain.
//!
//! Flags: `--listen ADDR` (repeatable), `--control PATH`, `--binary PATH` (what an upgrade
//! starts; default: this program), `--root DIR` (static files), `--io epoll|uring|auto`,
//! `--drain-timeout SECS`, `--upgrade-timeout SECS`, `--generation-header` (adds
//! `X-Twelve-Generation` to every response). tests/upgrade.rs runs its scenarios against this
//! program as well as against `twelve serve`.

use std::time::Duration;
use twelve_engine::restart::{self, Ended, Notice};
use twelve_engine::{Config, Router};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut config = Config {
        listen: Vec::new(),
        ..Config::default()
    };
    // The successor gets this process's arguments again.
    let mut options = restart::Options::this_program()?;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--generation-header" {
            config.generation_header = Some("X-Twelve-Generation".to_owned());
            continue;
        }
        let value = args.next().ok_or(format!("{flag}: needs a value"))?;
        match flag.as_str() {
            "--listen" => config.listen.push(value.parse()?),
            "--control" => options.control = Some(value.into()),
            "--binary" => options.program = value.into(),
            "--root" => config.root = Some(value.into()),
            "--io" => config.io = value.parse()?,
            "--drain-timeout" => config.drain_timeout = Duration::from_secs_f64(value.parse()?),
            "--upgrade-timeout" => {
                options.upgrade_timeout = Duration::from_secs_f64(value.parse()?)
            }
            _ => return Err(format!("unknown flag {flag}").into()),
        }
    }
    if config.listen.is_empty() {
        config.listen.push("127.0.0.1:8080".parse()?);
    }
    // Keep an idle keep-alive connection for one last answer with `Connection: close` rather
    // than close it as the drain starts: its client may already have sent the next request.
    config.close_idle_on_drain = false;
    let router = Router::new()
        .get("/plaintext", |_req, _body, res| {
            res.send(200, "text/plain", &[], b"Hello, World!")
        })
        .get("/pid", |_req, _body, res| {
            let pid = std::process::id().to_string();
            res.send(200, "text/plain", &[], pid.as_bytes())
        });
    match restart::run(config, router, &options, report)? {
        Ended::Upgraded(_) | Ended::Stopped(_) => Ok(()),
        Ended::Abandoned(signal) => {
            eprintln!("upgrade example: signal {signal} again, exiting without draining");
            std::process::exit(128 + signal)
        }
    }
}

/// Says what a generation does: the listening lines on stdout, the rest on stderr.
fn report(notice: Notice<'_>) {
    match notice {
        Notice::Serving { server, config } => {
            for addr in server.local_addrs() {
                println!(
                    "upgrade example: listening on http://{addr} (pid {}, generation {})",
                    std::process::id(),
                    config.generation
                );
            }
        }
        Notice::MigrateReqOff => eprintln!(
            "upgrade example: net.ipv4.tcp_migrate_req is 0: a listener closed outside a \
             handover resets its queued connections"
        ),
        Notice::UpgradeFailed { generation, why } => {
            eprintln!("upgrade example: upgrade failed; generation {generation} carries on: {why}");
        }
        Notice::Upgraded {
            generation,
            successor,
            ..
        } => eprintln!(
            "upgrade example: generation {} (pid {}) serves; generation {generation} drains",
            successor.generation, successor.pid
        ),
        Notice::Stopping { signal } => eprintln!("upgrade example: signal {signal}, draining"),
        Notice::Refused { why } => eprintln!("upgrade example: SIGUSR2 {why}"),
        Notice::Drained { generation, last } => eprintln!(
            "upgrade example: generation {generation} exits after {} requests",
            last.requests
        ),
        _ => {}
    }
}
