//! systemd socket activation: the sockets systemd passed (`LISTEN_FDS`, `LISTEN_PID`,
//! `LISTEN_FDNAMES`), what their names may be, and how they become per-CPU listeners.
//!
//! A `.socket` unit names all of its sockets with one `FileDescriptorName=`, so a unit cannot
//! give each CPU its own name. Two forms are accepted: per-CPU names (`http-cpu0`,
//! `http-cpu1`, ..., one unit per CPU, or `systemd-socket-activate --fdname=a:b`), and one
//! socket per address named `http` (`http1`, ... for further addresses), which becomes the
//! first worker's listener while every other worker creates its own and joins the socket's
//! `SO_REUSEPORT` group. systemd keeps its copy of `http` across crashes; with
//! `tcp_migrate_req=1` the kernel moves what was queued on a dead worker's listener to it.
//! Upgrades hand every listener over by its per-CPU name, so the group never changes.

use super::Error;
use super::handover::listener_name;
use crate::{Config, Steer};
use std::net::SocketAddr;
use std::os::fd::{AsFd, OwnedFd};

/// The listeners systemd passed, if this process was socket-activated.
pub(crate) fn systemd_listeners() -> Result<Option<Vec<(String, OwnedFd)>>, Error> {
    if std::env::var_os("LISTEN_FDS").is_none() {
        return Ok(None);
    }
    let pid_matches = std::env::var("LISTEN_PID")
        .ok()
        .and_then(|p| p.parse::<u32>().ok())
        .is_some_and(|p| p == std::process::id());
    if !pid_matches {
        // Meant for another process (our parent's): not ours to take.
        return Ok(None);
    }
    let fds = sd_notify::listen_fds_with_names()
        .map_err(|e| Error::Inherited(format!("LISTEN_FDS/LISTEN_FDNAMES: {e}")))?;
    let mut named = Vec::new();
    for (fd, name) in fds {
        let owned = twelve_sys::inherit::take_inherited(fd)
            .map_err(|e| Error::Inherited(format!("LISTEN_FDS: descriptor {fd} ({name}): {e}")))?;
        named.push((name, owned));
    }
    Ok(Some(named))
}

/// Renames `http`/`http<J>` to the first worker's per-CPU name and creates the other
/// workers' listeners on the same address; per-CPU names pass through unchanged.
pub(crate) fn per_cpu(
    named: Vec<(String, OwnedFd)>,
    config: &Config,
) -> Result<Vec<(String, OwnedFd)>, Error> {
    let cpus = config.cpus.as_slice();
    let mut out = Vec::new();
    for (name, fd) in named {
        let Some(j) = address_index(&name) else {
            out.push((name, fd));
            continue;
        };
        let want = *config.listen.get(j).ok_or_else(|| {
            Error::Inherited(format!(
                "LISTEN_FDNAMES {name}: there is no address {j} to listen on"
            ))
        })?;
        let addr = super::handover::validate(fd.as_fd(), want, cpus.len() > 1)
            .map_err(|e| Error::Inherited(format!("LISTEN_FDNAMES {name}: {e}")))?;
        out.push((listener_name(j, cpus[0]), fd));
        for &cpu in &cpus[1..] {
            out.push((listener_name(j, cpu), join(addr, cpu, config)?));
        }
    }
    Ok(out)
}

/// `http` is address 0, `http<J>` address J; `None` for any other name.
fn address_index(name: &str) -> Option<usize> {
    match name.strip_prefix("http")? {
        "" => Some(0),
        digits if digits.bytes().all(|b| b.is_ascii_digit()) => digits.parse().ok(),
        _ => None,
    }
}

/// A new listener for the worker on `cpu`, joining the reuseport group on `addr`.
fn join(addr: SocketAddr, cpu: usize, config: &Config) -> Result<OwnedFd, Error> {
    let opts = twelve_sys::ListenerOptions {
        backlog: twelve_sys::net::somaxconn(),
        incoming_cpu: (config.steer == Steer::IncomingCpu).then_some(cpu as u32),
        busy_poll_us: config.busy_poll_us,
        nodelay: true,
    };
    twelve_sys::net::reuseport_listener(addr, &opts).map_err(|e| {
        Error::Inherited(format!(
            "joining systemd's socket on {addr} for CPU {cpu}: {e}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! index {
        ($($name:ident: $input:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(address_index($input), $want);
            }
        )*};
    }

    index! {
        plain_http_is_the_first_address: "http" => Some(0);
        numbered_http_is_that_address: "http2" => Some(2);
        per_cpu_names_pass_through: "http-cpu0" => None;
        other_names_pass_through: "control" => None;
        a_prefix_is_not_enough: "https" => None;
    }
}
