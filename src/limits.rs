//! The host's limits a run meets before it starts, checked up front and named: the CPUs of
//! `--cpus` must be online, and `-c` connections must fit under the open-file limit (raised
//! from soft to hard first), so a run never starts only to fail on every connect.
use anyhow::{Context, bail};
use twelve_sys::CpuList;

/// Descriptors a run needs besides its connections: stdio, an epoll per worker, the
/// embedded server's listener, epoll and accepted sockets, /proc files read at the end.
const FD_MARGIN: u64 = 64;

/// Parses `--cpus` (kernel list syntax) and checks that every CPU in it is online, naming
/// the flag, the value and the CPUs there are.
pub fn cpus(flag: &str, text: &str) -> anyhow::Result<CpuList> {
    let list = CpuList::parse(text).with_context(|| format!("{flag} {text}"))?;
    check_online(flag, text, &list, &twelve_sys::cpus::online())?;
    Ok(list)
}

/// Refuses a CPU list that names a CPU this host does not have online.
fn check_online(flag: &str, text: &str, list: &CpuList, online: &CpuList) -> anyhow::Result<()> {
    if list.is_empty() {
        bail!("{flag} {text:?}: names no CPU (expected a list such as 0-3,8)");
    }
    if let Some(cpu) = list.as_slice().iter().find(|c| !online.contains(**c)) {
        bail!(
            "{flag} {text}: CPU {cpu} is not online; this host's online CPUs are {online} \
             ({} in all)",
            online.len()
        );
    }
    Ok(())
}

/// Raises the soft open-file limit to the hard one, then refuses `connections` that would
/// not fit under it (each connection is a descriptor), with the numbers and the way out.
pub fn check_connections(connections: usize, embedded: bool) -> anyhow::Result<()> {
    let raised = twelve_sys::net::raise_nofile_limit().ok();
    let limit = raised.or_else(twelve_sys::net::nofile_limit);
    // The embedded server holds the other end of every connection in this same process.
    let per_conn = if embedded { 2 } else { 1 };
    fits("-c/--connections", connections as u64, per_conn, limit)
}

/// Whether `connections` (each `per_conn` descriptors) fit under `limit` (None: unlimited).
fn fits(flag: &str, connections: u64, per_conn: u64, limit: Option<u64>) -> anyhow::Result<()> {
    let Some(limit) = limit else { return Ok(()) };
    let need = connections * per_conn + FD_MARGIN;
    if need > limit {
        let most = limit.saturating_sub(FD_MARGIN) / per_conn;
        bail!(
            "{flag} {connections}: needs about {need} open files, but this process may open \
             {limit} (RLIMIT_NOFILE, soft limit already raised to the hard one){}; use at most \
             -c {most}, or raise the hard limit (ulimit -Hn, LimitNOFILE= in systemd)",
            if per_conn == 2 {
                ", and the embedded server holds the other end of each connection"
            } else {
                ""
            }
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! online {
        ($name:ident, $text:expr, ok) => {
            #[test]
            fn $name() {
                let list = CpuList::parse($text).unwrap();
                check_online("--cpus", $text, &list, &CpuList::parse("0-1").unwrap()).unwrap();
            }
        };
        ($name:ident, $text:expr, $says:expr) => {
            #[test]
            fn $name() {
                let list = CpuList::parse($text).unwrap();
                let err = check_online("--cpus", $text, &list, &CpuList::parse("0-1").unwrap())
                    .unwrap_err()
                    .to_string();
                assert!(err.contains($says), "{err}");
            }
        };
    }

    online!(cpus_within_online_pass, "0-1", ok);
    online!(
        cpu_beyond_the_host_is_named,
        "5",
        "--cpus 5: CPU 5 is not online; this host's online CPUs are 0-1 (2 in all)"
    );
    online!(
        one_offline_cpu_in_a_range_is_named,
        "0-3",
        "CPU 2 is not online"
    );

    macro_rules! fits {
        ($name:ident, $c:expr, $per:expr, $limit:expr, ok) => {
            #[test]
            fn $name() {
                fits("-c/--connections", $c, $per, $limit).unwrap();
            }
        };
        ($name:ident, $c:expr, $per:expr, $limit:expr, $says:expr) => {
            #[test]
            fn $name() {
                let err = fits("-c/--connections", $c, $per, $limit)
                    .unwrap_err()
                    .to_string();
                assert!(err.contains($says), "{err}");
            }
        };
    }

    fits!(under_the_limit_fits, 1000, 1, Some(20_000), ok);
    fits!(unlimited_fits, 1_000_000, 2, None, ok);
    // Connections over the limit are refused before any load, with the numbers: started,
    // they would fail their connects and still exit 0.
    fits!(
        over_the_limit_is_refused_with_the_numbers,
        25_000,
        1,
        Some(20_000),
        "-c/--connections 25000: needs about 25064 open files, but this process may open 20000"
    );
    fits!(
        over_the_limit_says_how_many_fit,
        25_000,
        1,
        Some(20_000),
        "use at most -c 19936"
    );
    fits!(
        embedded_server_doubles_the_need,
        600,
        2,
        Some(1024),
        "use at most -c 480"
    );
}
