//! One generation from start to exit (docs/restart.md): take the listeners (from the previous
//! generation, from systemd, or fresh), start the engine, report ready, then serve until an
//! upgrade hands everything to a successor or a signal stops it; either way, drain.

use super::control::{self, Arrival, Arrivals, Command};
use super::handover::{self, Channel};
use super::successor;
use super::{Ended, Error, Notice, Options, Successor};
use crate::{Config, Router, Server, ServerHandle};
use sd_notify::NotifyState;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::time::Duration;

/// How long a successor waits for its parent's listeners: the parent sends them right after
/// the spawn, so this only bounds a broken parent.
const HANDOVER_WAIT: Duration = Duration::from_secs(10);

/// What ended the serving phase.
enum End {
    /// The successor is ready; the control client that asked, if one did, is answered once
    /// this generation has begun its drain.
    Upgraded(successor::Ready, Option<UnixStream>),
    Signal(i32),
}

/// Runs one generation of a server answering through `router`: starts it on the listeners
/// handed over by the previous generation, passed by systemd, or created from `config`
/// (whose `generation` is set here: 1, or the one the previous generation gave), serves until
/// an upgrade or a stop, drains, and says how it ended. Every step is reported to `notice`,
/// on the calling thread.
///
/// An error means this generation never served; a successor has told its parent why, and the
/// parent carries on.
pub fn run(
    mut config: Config,
    router: Router,
    options: &Options,
    mut notice: impl FnMut(Notice<'_>),
) -> Result<Ended, Error> {
    // Before the workers start: the handlers need a descriptor of their own (signal-hook's
    // self-pipe), and once the workers accept, a flood of clients may take every descriptor
    // under a low `ulimit -n`.
    let signals = control::signals()?;
    config.generation = successor::generation();
    let parent = successor::inherited_channel()?;
    let (handle, control) = match start(&config, router, options, parent.as_ref()) {
        Ok(started) => started,
        Err(e) => {
            if let Some(p) = &parent {
                let _ = p.send_text(&format!("failed: {}", chain(&e)));
            }
            return Err(e);
        }
    };
    notice(Notice::Serving {
        server: &handle,
        config: &config,
    });
    if config.generation == 1 && handle.cpus().len() > 1 && migrate_req_off() {
        notice(Notice::MigrateReqOff);
    }
    let me = std::process::id();
    if let Some(p) = &parent {
        p.send_text(&format!("ready {me}"))
            .map_err(|source| Error::Io {
                what: "telling the previous generation we are ready",
                source,
            })?;
        // The previous generation stops taking control connections, then says go: from
        // then on the control socket's queue is ours alone.
        let _ = p.recv(Some(HANDOVER_WAIT));
    }
    let _ = sd_notify::notify(&[NotifyState::MainPid(me), NotifyState::Ready]);
    let arrivals = control::start(signals, control.as_ref())?;
    let generation = config.generation;
    let end = serve(
        &handle,
        &arrivals,
        options,
        generation,
        control.as_ref(),
        &mut notice,
    );
    let (successor, ended) = match end {
        End::Upgraded(r, asked) => {
            let stopped_accepting = handle.shutdown();
            let next = Successor {
                generation: r.generation,
                pid: r.pid,
            };
            notice(Notice::Upgraded {
                generation,
                successor: next,
                stopped_accepting,
            });
            if let Some(mut c) = asked {
                let answer = format!("ready generation={} pid={}", r.generation, r.pid);
                control::reply(&mut c, &answer);
            }
            (Some((r.generation, r.pid)), Ended::Upgraded(next))
        }
        End::Signal(sig) => {
            let _ = sd_notify::notify(&[NotifyState::Stopping]);
            notice(Notice::Stopping { signal: sig });
            handle.shutdown_final();
            (None, Ended::Stopped(sig))
        }
    };
    match control::drain(arrivals, handle, generation, successor, &mut notice) {
        Ok(last) => {
            notice(Notice::Drained {
                generation,
                last: &last,
            });
            Ok(ended)
        }
        Err(sig) => Ok(Ended::Abandoned(sig)),
    }
}

/// `e` and its sources, `: `-separated.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

fn migrate_req_off() -> bool {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_migrate_req").is_ok_and(|v| v.trim() == "0")
}

/// Takes the listeners and starts the engine on them; returns it with the control socket.
fn start(
    config: &Config,
    router: Router,
    options: &Options,
    parent: Option<&Channel>,
) -> Result<(ServerHandle, Option<UnixListener>), Error> {
    let named = match parent {
        Some(p) => Some(
            p.recv_listeners(HANDOVER_WAIT)
                .map_err(|source| Error::Io {
                    what: "receiving the listeners from the previous generation",
                    source,
                })?,
        ),
        None => super::activation::systemd_listeners()?
            .map(|named| super::activation::per_cpu(named, config))
            .transpose()?,
    };
    let Some(named) = named else {
        let handle = Server::new(config.clone(), router).start()?;
        let control = options.control.as_deref().map(control::bind).transpose()?;
        return Ok((handle, control));
    };
    let cpus = config.cpus.as_slice();
    let mapped = handover::by_worker(named, cpus, &config.listen).map_err(Error::Inherited)?;
    let mut control = None;
    for (name, fd) in mapped.others {
        if name == control::NAME
            && let Some(path) = &options.control
        {
            handover::validate_control(fd.as_fd()).map_err(|e| Error::Control {
                path: path.clone(),
                why: format!("the socket handed over: {e}"),
            })?;
            control = Some(UnixListener::from(fd));
        } else if name != control::NAME {
            return Err(Error::Inherited(format!(
                "listener {name}: no worker of CPUs {} has that name",
                config.cpus
            )));
        }
    }
    if control.is_none()
        && let Some(path) = &options.control
    {
        control = Some(control::bind(path)?);
    }
    let handle = Server::new(config.clone(), router).start_with_listeners(mapped.workers)?;
    Ok((handle, control))
}

/// Serves until an upgrade succeeds or a stop signal arrives. Upgrades run one at a time on
/// this thread: whatever arrives meanwhile waits in `arrivals` (docs/restart.md: "Only one
/// upgrade at a time").
fn serve(
    handle: &ServerHandle,
    arrivals: &Arrivals,
    options: &Options,
    generation: u64,
    control: Option<&UnixListener>,
    notice: &mut dyn FnMut(Notice<'_>),
) -> End {
    while let Ok(arrival) = arrivals.rx.recv() {
        let (asked, reply_to) = match arrival {
            Arrival::Signal(sig) if sig == signal_hook::consts::SIGUSR2 => (true, None),
            Arrival::Signal(sig) => return End::Signal(sig),
            // Only sent once a drain has begun, which ends this loop first.
            Arrival::Drained(_) => (false, None),
            Arrival::Control(mut conn) => match control::read_command(&mut conn) {
                Command::Upgrade => (true, Some(conn)),
                Command::Status => {
                    control::reply(
                        &mut conn,
                        &format!("serving generation={generation} pid={}", std::process::id()),
                    );
                    (false, None)
                }
                Command::Unknown(what) => {
                    control::reply(&mut conn, &format!("error: unknown command {what:?}"));
                    (false, None)
                }
            },
        };
        if !asked {
            continue;
        }
        match upgrade(handle, options, generation, control, arrivals) {
            Ok(ready) => return End::Upgraded(ready, reply_to),
            Err(why) => {
                notice(Notice::UpgradeFailed {
                    generation,
                    why: &why,
                });
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
    options: &Options,
    generation: u64,
    control: Option<&UnixListener>,
    arrivals: &Arrivals,
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
    successor::start(options, generation + 1, &listeners, || {
        arrivals.stop_control();
    })
}
