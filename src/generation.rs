//! One generation of `twelve serve` from start to exit (docs/restart.md): take the
//! listeners (from the previous generation, from systemd, or fresh), start the engine, report
//! ready, then serve until an upgrade hands everything to a successor or a signal stops it;
//! either way, drain and exit.

use crate::control::{self, Control, Event};
use crate::successor::{self, Recipe};
use anyhow::{Context, bail};
use sd_notify::NotifyState;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use twelve_engine::handover::{self, Channel};
use twelve_engine::{Config, Router, Server, ServerHandle};

/// How long a successor waits for its parent's listeners: the parent sends them right after
/// the spawn, so this only bounds a broken parent.
const HANDOVER_WAIT: Duration = Duration::from_secs(10);

/// What a generation needs beyond the engine's config.
pub(crate) struct Plan {
    pub(crate) recipe: Recipe,
    pub(crate) control: Option<PathBuf>,
}

/// What ended the serving phase.
enum End {
    /// The successor is ready; the control client that asked, if one did, is answered once
    /// this generation has begun its drain.
    Upgraded(successor::Ready, Option<UnixStream>),
    Signal(i32),
}

/// Runs one generation; returns when it has drained.
pub(crate) fn run(mut config: Config, router: Router, plan: &Plan) -> anyhow::Result<ExitCode> {
    // Before the workers start: the handlers need a descriptor of their own (signal-hook's
    // self-pipe), and once the listening line is out a flood of clients may take every
    // descriptor under a low `ulimit -n` (tests/serve_limits.rs caught that once).
    let signals = control::signals()?;
    // SIGHUP reloads the TLS certificate (a thread of its own); open connections keep theirs.
    crate::serve_tls::reload_on_sighup(config.tls.as_ref())?;
    if config.tls.is_some() {
        eprintln!("twelve serve: {}", crate::serve_tls::ktls_line());
    }
    config.generation = successor::generation();
    let parent = successor::inherited_channel()?;
    let (handle, control) = match start(&config, router, plan, parent.as_ref()) {
        Ok(started) => started,
        Err(e) => {
            if let Some(p) = &parent {
                let _ = p.send_text(&format!("failed: {e:#}"));
            }
            return Err(e);
        }
    };
    announce(&handle, &config);
    let me = std::process::id();
    if let Some(p) = &parent {
        p.send_text(&format!("ready {me}"))
            .context("telling the previous generation we are ready")?;
        // The previous generation stops taking control connections, then says go: from
        // then on the control socket's queue is ours alone.
        let _ = p.recv(Some(HANDOVER_WAIT));
    }
    let _ = sd_notify::notify(&[NotifyState::MainPid(me), NotifyState::Ready]);
    let events = control::start(signals, control.as_ref())?;
    let generation = config.generation;
    let end = serve(&handle, &events, plan, generation, control.as_ref());
    let successor = match end {
        End::Upgraded(r, asked) => {
            if !handle.shutdown() {
                eprintln!(
                    "twelve serve: a worker of generation {generation} still accepted a second \
                     after the stop; it may answer a connection or two before generation {} does",
                    r.generation
                );
            }
            eprintln!(
                "twelve serve: generation {} (pid {}) is ready; generation {generation} drains",
                r.generation, r.pid
            );
            if let Some(mut c) = asked {
                let answer = format!("ready generation={} pid={}", r.generation, r.pid);
                control::reply(&mut c, &answer);
            }
            Some((r.generation, r.pid))
        }
        End::Signal(sig) => {
            let _ = sd_notify::notify(&[NotifyState::Stopping]);
            eprintln!("twelve serve: signal {sig}, draining (--drain-timeout)");
            handle.shutdown_final();
            None
        }
    };
    let last = control::drain(events, handle, generation, successor);
    eprintln!(
        "twelve serve: generation {generation} exits: {} requests, {} accepts, {} closes, {} resets, 2xx {} 4xx {} 5xx {}",
        last.requests,
        last.accepts,
        last.closes,
        last.resets,
        last.responses_by_class[2],
        last.responses_by_class[4],
        last.responses_by_class[5]
    );
    Ok(ExitCode::SUCCESS)
}

/// Takes the listeners and starts the engine on them; returns it with the control socket.
fn start(
    config: &Config,
    router: Router,
    plan: &Plan,
    parent: Option<&Channel>,
) -> anyhow::Result<(ServerHandle, Option<UnixListener>)> {
    let named = match parent {
        Some(p) => Some(
            p.recv_listeners(HANDOVER_WAIT)
                .context("receiving the listeners from the previous generation")?,
        ),
        None => control::systemd_listeners()?
            .map(|named| crate::activation::per_cpu(named, config))
            .transpose()?,
    };
    let Some(named) = named else {
        let handle = Server::new(config.clone(), router).start()?;
        let control = plan.control.as_deref().map(control::bind).transpose()?;
        return Ok((handle, control));
    };
    let cpus = config.cpus.as_slice();
    let mapped = handover::by_worker(named, cpus, &config.listen).map_err(anyhow::Error::msg)?;
    let mut control = None;
    for (name, fd) in mapped.others {
        if name == control::NAME && plan.control.is_some() {
            handover::validate_control(fd.as_fd()).context("the control socket handed over")?;
            control = Some(UnixListener::from(fd));
        } else if name != control::NAME {
            bail!(
                "listener {name}: no worker of --cpus {} has that name",
                config.cpus
            );
        }
    }
    if control.is_none()
        && let Some(path) = &plan.control
    {
        control = Some(control::bind(path)?);
    }
    let handle = Server::new(config.clone(), router).start_with_listeners(mapped.workers)?;
    Ok((handle, control))
}

/// The listening lines, and the one line about `tcp_migrate_req`.
fn announce(handle: &ServerHandle, config: &Config) {
    let io = crate::serve::io_summary(handle.backends());
    if let Some(why) = handle.io_fallback() {
        eprintln!("twelve serve: --io auto: {why}; using epoll");
    }
    for (i, addr) in handle.local_addrs().iter().enumerate() {
        println!(
            "twelve serve: listening on {}://{addr} ({} workers on CPUs {}, steer {}, io {io}, generation {})",
            crate::serve_tls::scheme(config, i),
            handle.cpus().len(),
            config.cpus,
            config.steer,
            config.generation
        );
    }
    // Several listeners per address: one that closes outside a handover (a crashed
    // successor that had taken them, a blue/green start with fresh listeners) resets what is
    // queued on it unless the kernel migrates it (docs/kernel-facts.md). Said once, by the
    // first generation: its successors run in the same namespace.
    let migrate = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_migrate_req");
    if config.generation == 1 && handle.cpus().len() > 1 && migrate.is_ok_and(|v| v.trim() == "0") {
        eprintln!(
            "twelve serve: net.ipv4.tcp_migrate_req is 0: a per-CPU listener closed outside a handover resets its queued connections (see twelve doctor)"
        );
    }
}

/// Serves until an upgrade succeeds or a stop signal arrives. Upgrades run one at a time on
/// this thread: whatever arrives meanwhile waits in `events` (docs: "One upgrade at a time").
fn serve(
    handle: &ServerHandle,
    events: &control::Events,
    plan: &Plan,
    generation: u64,
    control: Option<&UnixListener>,
) -> End {
    while let Ok(event) = events.rx.recv() {
        let (asked, reply_to) = match event {
            Event::Signal(sig) if sig == signal_hook::consts::SIGUSR2 => (true, None),
            Event::Signal(sig) => return End::Signal(sig),
            // Only sent once a drain has begun, which ends this loop first.
            Event::Drained(_) => (false, None),
            Event::Control(mut conn) => match control::read_command(&mut conn) {
                Control::Upgrade => (true, Some(conn)),
                Control::Status => {
                    control::reply(
                        &mut conn,
                        &format!("serving generation={generation} pid={}", std::process::id()),
                    );
                    (false, None)
                }
                Control::Unknown(what) => {
                    control::reply(&mut conn, &format!("error: unknown command {what:?}"));
                    (false, None)
                }
            },
        };
        if !asked {
            continue;
        }
        match upgrade(handle, plan, generation, control, events) {
            Ok(ready) => return End::Upgraded(ready, reply_to),
            Err(why) => {
                eprintln!(
                    "twelve serve: upgrade failed; generation {generation} carries on: {why}"
                );
                let _ = sd_notify::notify(&[NotifyState::Ready]);
                if let Some(mut c) = reply_to {
                    control::reply(&mut c, &format!("failed: {why}"));
                }
            }
        }
    }
    End::Signal(0)
}

/// Starts the successor with dups of every listener; on ready, stops taking control
/// connections and tells it to go on.
fn upgrade(
    handle: &ServerHandle,
    plan: &Plan,
    generation: u64,
    control: Option<&UnixListener>,
    events: &control::Events,
) -> Result<successor::Ready, String> {
    let _ = sd_notify::notify(&[NotifyState::Reloading]);
    let dups = handle
        .listener_dups()
        .map_err(|e| format!("duplicating the listeners: {e}"))?;
    let mut named = handover::name_listeners(handle.cpus(), dups);
    if let Some(c) = control {
        let dup = c
            .try_clone()
            .map_err(|e| format!("duplicating the control socket: {e}"))?;
        named.push((control::NAME.to_owned(), OwnedFd::from(dup)));
    }
    let listeners = successor::borrow_all(&named);
    let next = generation + 1;
    let ready = successor::start(&plan.recipe, next, &listeners, || {
        events.stop_control();
    })?;
    Ok(ready)
}
