//! Which CPUs the server under test may run on, for the self-check's shared-CPU verdict: a
//! loopback target's listening process, found through /proc (the socket's inode in
//! /proc/net/tcp{,6}, then the process holding it), and the affinity of each of its threads.
//! A client and a server on the same CPUs compete for them, whatever the figures say. Only the
//! threads that did the work of this run count (a tenth of the busiest one's CPU time over it
//! or more): a main thread that waits for signals, unpinned, competes for nothing, however much
//! it worked at start-up.
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;

/// The process listening on a loopback target, and its threads' CPU time before the run.
pub struct Before {
    pid: u32,
    /// CPU time so far (ns) by thread id.
    cpu_ns: BTreeMap<u32, u64>,
}

/// The process listening on `addr` and its threads' CPU time now; `None` when the target is
/// not on this host or the process cannot be found (another user's, or gone).
pub fn before(addr: SocketAddr) -> Option<Before> {
    if !addr.ip().to_canonical().is_loopback() {
        return None;
    }
    let inodes: BTreeSet<u64> = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .flat_map(|text| listening_inodes(&text, addr.port()))
        .collect();
    if inodes.is_empty() {
        return None;
    }
    let pid = holder(&inodes)?;
    let cpu_ns = threads(pid).into_iter().map(|t| (t.0, t.1)).collect();
    Some(Before { pid, cpu_ns })
}

impl Before {
    /// The CPUs the threads that worked since [`before`] may run on; empty when the process
    /// is gone.
    pub fn working_cpus(&self) -> Vec<usize> {
        let spent: Vec<(u64, Vec<usize>)> = threads(self.pid)
            .into_iter()
            .map(|(tid, ns, cpus)| {
                let then = self.cpu_ns.get(&tid).copied().unwrap_or(0);
                (ns.saturating_sub(then), cpus)
            })
            .collect();
        working_cpus(&spent)
    }
}

/// Each thread of `pid`: its id, CPU time so far (ns) and the CPUs it may run on.
fn threads(pid: u32) -> Vec<(u32, u64, Vec<usize>)> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|task| {
            let tid = task.file_name().to_str()?.parse().ok()?;
            let read = |f: &str| std::fs::read_to_string(task.path().join(f)).unwrap_or_default();
            let cpu_ns = read("schedstat")
                .split_whitespace()
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            let status = read("status");
            let list = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .and_then(|l| twelve_sys::cpus::CpuList::parse(l.trim()).ok())
                .map(|l| l.as_slice().to_vec())
                .unwrap_or_default();
            Some((tid, cpu_ns, list))
        })
        .collect()
}

/// The CPUs of the threads that used at least a tenth of the busiest one's CPU time (none when
/// none worked).
fn working_cpus(threads: &[(u64, Vec<usize>)]) -> Vec<usize> {
    let busiest = threads.iter().map(|t| t.0).max().unwrap_or(0);
    let cpus: BTreeSet<usize> = threads
        .iter()
        .filter(|(ns, _)| *ns > 0 && *ns * 10 >= busiest)
        .flat_map(|(_, cpus)| cpus.iter().copied())
        .collect();
    cpus.into_iter().collect()
}

/// The inodes of the sockets in LISTEN state (`0A`) on `port` in a /proc/net/tcp table.
fn listening_inodes(table: &str, port: u16) -> Vec<u64> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let local_port = f.get(1)?.rsplit(':').next()?;
            let listening = *f.get(3)? == "0A";
            (listening && u16::from_str_radix(local_port, 16).ok()? == port)
                .then(|| f.get(9)?.parse().ok())
                .flatten()
        })
        .collect()
}

/// The newest process with a descriptor on one of `inodes`. The server under test was most
/// likely started shortly before the client, so the newest processes are looked at first:
/// every descriptor of every process looked at costs a `readlink`, and a busy host holds tens
/// of thousands of them in older processes (all of it the client's CPU time, which the
/// comparisons with other clients count).
fn holder(inodes: &BTreeSet<u64>) -> Option<u32> {
    let me = std::process::id();
    let pids = std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .filter_map(|entry| {
            entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
        });
    for pid in newest_first(pids, me) {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let Ok(link) = std::fs::read_link(fd.path()) else {
                continue;
            };
            let inode = link
                .to_str()
                .and_then(|l| l.strip_prefix("socket:["))
                .and_then(|l| l.strip_suffix(']'))
                .and_then(|l| l.parse().ok());
            if inode.is_some_and(|i| inodes.contains(&i)) {
                return Some(pid);
            }
        }
    }
    None
}

/// Process ids newest first (the highest first: ids count up until they wrap), without `me`.
fn newest_first(pids: impl Iterator<Item = u32>, me: u32) -> Vec<u32> {
    let mut pids: Vec<u32> = pids.filter(|&p| p != me).collect();
    pids.sort_unstable_by(|a, b| b.cmp(a));
    pids
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two rows of /proc/net/tcp: a listener on 8080 (0x1F90) and an established one on it.
    const TABLE: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0
   1: 0100007F:1F90 0100007F:D2A4 01 00000000:00000000 00:00000000 00000000     0        0 4343 1 0";

    #[test]
    fn only_the_listening_socket_of_the_port_is_found() {
        assert_eq!(listening_inodes(TABLE, 8080), [4242]);
        assert!(listening_inodes(TABLE, 8081).is_empty());
    }

    /// The threads of this process that work after [`before`] count, and a thread that only
    /// worked before it does not.
    #[test]
    fn only_the_work_since_before_counts() {
        let pid = std::process::id();
        let mut b = Before {
            pid,
            cpu_ns: threads(pid).into_iter().map(|t| (t.0, t.1)).collect(),
        };
        let cpus = twelve_sys::cpus::allowed().unwrap();
        // Work on this thread after the snapshot: its CPUs count.
        let mut x = 0u64;
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_millis(20) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        assert_eq!(b.working_cpus(), cpus.as_slice(), "{x}");
        // Every thread's time moved past what it spent: none worked since.
        b.cpu_ns = threads(pid)
            .into_iter()
            .map(|t| (t.0, t.1 + u64::MAX / 2))
            .collect();
        assert!(b.working_cpus().is_empty());
    }

    /// A pinned worker that did the work counts; an idle main thread allowed everywhere does not.
    #[test]
    fn only_working_threads_count() {
        let threads = [
            (5_000, vec![0, 1]),
            (9_000_000, vec![0]),
            (2_000_000, vec![1]),
        ];
        assert_eq!(working_cpus(&threads), [0, 1]);
        assert_eq!(working_cpus(&threads[..2]), [0]);
        assert!(working_cpus(&[]).is_empty());
    }

    #[test]
    fn processes_are_looked_at_newest_first_without_this_one() {
        let cases: &[(&str, &[u32], u32, &[u32])] = &[
            ("none", &[], 7, &[]),
            ("only this one", &[7], 7, &[]),
            (
                "/proc's order",
                &[1, 300, 42, 7, 4100],
                7,
                &[4100, 300, 42, 1],
            ),
        ];
        for &(name, pids, me, want) in cases {
            assert_eq!(newest_first(pids.iter().copied(), me), want, "{name}");
        }
    }

    /// This test's own listener is in the kernel's table; a remote target is never looked up.
    #[test]
    fn a_listener_of_this_host_is_in_the_table() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let inodes: BTreeSet<u64> = std::fs::read_to_string("/proc/net/tcp")
            .map(|t| listening_inodes(&t, addr.port()).into_iter().collect())
            .unwrap_or_default();
        assert_eq!(inodes.len(), 1, "{addr}");
        assert!(before("10.1.2.3:80".parse().unwrap()).is_none());
    }
}
