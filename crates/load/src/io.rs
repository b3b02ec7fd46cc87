//! The contract between a worker's dispatch and its sockets: connect, send, receive, close,
//! and wait for readiness, per connection slot. [`crate::epoll`] (one epoll instance) and
//! `crate::uring` (one io_uring) implement it with real sockets, opened by one [`Dialer`];
//! the simulation ([`crate::sim`]) with a modelled server on a simulated clock. All run the
//! same worker loop and dispatch over it.
use rustix::fd::{AsFd, OwnedFd};
use rustix::io::Errno;
use rustix::net::{self, AddressFamily, SocketFlags, SocketType};
use std::net::SocketAddr;

/// What a poll found ready on one connection slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Readiness {
    pub slot: usize,
    /// Bytes, EOF or an error wait to be read.
    pub readable: bool,
    /// A connect finished, or a stalled write can go on.
    pub writable: bool,
}

/// Sockets as the dispatch sees them. Errors are errnos so both sides classify them alike.
pub(crate) trait Io {
    /// Starts a non-blocking connect on `slot`; its end is reported as writability.
    fn connect(&mut self, slot: usize) -> Result<(), Errno>;
    /// After writability on a connecting `slot`: whether the connect succeeded. On success the
    /// slot waits for reads only.
    fn finish_connect(&mut self, slot: usize) -> Result<(), Errno>;
    /// Writes what it can of `bytes`.
    fn send(&mut self, slot: usize, bytes: &[u8]) -> Result<usize, Errno>;
    /// Reads into `buf`; `Ok(0)` is EOF.
    fn recv(&mut self, slot: usize, buf: &mut [u8]) -> Result<usize, Errno>;
    /// Starts (or stops) waiting for writability, while a short write waits.
    fn want_write(&mut self, slot: usize, on: bool);
    /// Closes the slot's socket, if any.
    fn close(&mut self, slot: usize);
    /// Waits at most `timeout_ns` for readiness; returns how many events [`Io::event`] holds.
    fn poll(&mut self, timeout_ns: u64) -> Result<usize, Errno>;
    /// The `k`-th event of the last poll.
    fn event(&self, k: usize) -> Readiness;
    /// Sleeps `ns` on the worker's own timer (`crate::pacing`).
    fn nap(&mut self, ns: u64);
    /// Hands the kernel what is queued for it (sends, closes) without waiting: before new
    /// connects, so that the poll that finds them open does not run that work first.
    fn submit(&mut self) {}
    /// Whether the slot's TLS handshake finished since the last call (once per handshake);
    /// always `false` without TLS.
    fn handshake_done(&mut self, _slot: usize) -> bool {
        false
    }
    /// Whether reads bring the kernel's receive stamps (`--rx-time kernel` over TCP): then an
    /// answer read late is still booked when it arrived, and a nap may hold it (`pacing`).
    fn stamps(&self) -> bool {
        false
    }
    /// When the kernel received the newest byte the slot's last successful `recv` returned,
    /// on the run's clock (`--rx-time kernel`); `None` where unknown.
    fn received_at(&self, _slot: usize) -> Option<u64> {
        None
    }
    /// Whether bytes already received wait for a read that the next poll will report (a read
    /// cut short at a stamp change, plaintext a TLS session holds): no time to nap.
    fn has_pending(&self) -> bool {
        false
    }
    /// Maps the kernel's receive stamps (CLOCK_REALTIME) onto the run's clock (`run_now`
    /// reads it); called every housekeeping tick, so a step of the wall clock (`settimeofday`,
    /// an NTP step) misplaces stamps for one tick at most. (Slewing moves both clocks alike.)
    fn sync_clock(&mut self, _run_now: &dyn Fn() -> u64) {}
}

/// The offset between the kernel's receive stamps (CLOCK_REALTIME) and the run's clock
/// (CLOCK_MONOTONIC from the run's origin), read back to back.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RxClock {
    /// Realtime ns at the run's zero; 0 until the first sync.
    zero: u64,
}

impl RxClock {
    /// Reads the wall clock between two reads of the run's clock and keeps the offset to their
    /// midpoint; of up to three tries, the narrowest pair (an interrupt between two reads
    /// would otherwise shift every stamp of the next tick).
    pub(crate) fn sync(&mut self, run_now: &dyn Fn() -> u64) {
        let mut best: Option<(u64, u64)> = None;
        for _ in 0..3 {
            let before = run_now();
            let real = twelve_sys::stamp::realtime_ns();
            let width = run_now().saturating_sub(before);
            let zero = real.saturating_sub(before + width / 2);
            if best.is_none_or(|(w, _)| width < w) {
                best = Some((width, zero));
            }
            if width < 1_000 {
                break;
            }
        }
        if let Some((_, zero)) = best {
            self.zero = zero;
        }
    }

    /// A kernel stamp on the run's clock; `None` before the first sync or for a stamp from
    /// before the run began.
    #[inline]
    pub(crate) fn to_run(self, stamp: Option<u64>) -> Option<u64> {
        match stamp {
            Some(s) if self.zero != 0 && s >= self.zero => Some(s - self.zero),
            _ => None,
        }
    }
}

/// Where a worker's connections go and come from, and how one is opened: both engines'
/// sockets, alike.
pub(crate) struct Dialer {
    addr: SocketAddr,
    /// Source addresses, taken by slot in turn (`--source`); empty: the kernel picks.
    sources: Vec<SocketAddr>,
    /// `--unix-socket`: connect here instead of `addr`.
    unix: Option<net::SocketAddrUnix>,
    /// `--rx-time kernel`: every TCP socket asks for receive stamps.
    stamps: bool,
}

impl Dialer {
    /// `first_slot` is the run-wide index of this worker's slot 0, so the workers together
    /// take the source addresses in turn.
    pub(crate) fn new(
        addr: SocketAddr,
        sources: &[std::net::IpAddr],
        slots: usize,
        first_slot: usize,
    ) -> Self {
        let n = sources.len().max(1);
        Self {
            addr,
            sources: (0..sources.len().min(slots))
                .map(|i| SocketAddr::new(sources[(first_slot + i) % n], 0))
                .collect(),
            unix: None,
            stamps: false,
        }
    }

    /// Asks every TCP socket for the kernel's receive stamps (`--rx-time kernel`).
    pub(crate) fn with_stamps(mut self, on: bool) -> Self {
        self.stamps = on;
        self
    }

    /// Whether the sockets carry receive stamps: TCP only (a Unix socket's bytes never pass
    /// the stamping receive path).
    pub(crate) fn stamps(&self) -> bool {
        self.stamps && self.unix.is_none()
    }

    /// Connects to the Unix-domain socket at `path` instead of the target's address.
    pub(crate) fn with_unix(mut self, path: &std::path::Path) -> std::io::Result<Self> {
        self.unix = Some(net::SocketAddrUnix::new(path)?);
        Ok(self)
    }

    /// A non-blocking socket for `slot` with its connect started. A Unix-domain connect
    /// completes at once or fails (EAGAIN when the listener's backlog is full, counted as a
    /// failed connect).
    pub(crate) fn open(&self, slot: usize) -> Result<OwnedFd, Errno> {
        let flags = SocketFlags::NONBLOCK | SocketFlags::CLOEXEC;
        if let Some(to) = &self.unix {
            let fd = net::socket_with(AddressFamily::UNIX, SocketType::STREAM, flags, None)?;
            net::connect(&fd, to)?;
            return Ok(fd);
        }
        let family = if self.addr.is_ipv4() {
            AddressFamily::INET
        } else {
            AddressFamily::INET6
        };
        // The errno as it is: EMFILE is counted as its own class (no descriptor left).
        let fd = net::socket_with(family, SocketType::STREAM, flags, None)?;
        // Requests are small and complete; Nagle would hold the second of a pipelined pair.
        let _ = net::sockopt::set_tcp_nodelay(&fd, true);
        if self.stamps {
            // Without stamps the read time stands in: a failure costs accuracy, not the run.
            let _ = twelve_sys::stamp::enable(fd.as_fd());
        }
        if !self.sources.is_empty() {
            // Port 0: the kernel picks a port of this source address's own range.
            net::bind(&fd, &self.sources[slot % self.sources.len()])?;
        }
        match net::connect(&fd, &self.addr) {
            Ok(()) | Err(Errno::INPROGRESS) => Ok(fd),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_map_onto_the_run_clock_once_synced() {
        let cases: &[(&str, u64, Option<u64>, Option<u64>)] = &[
            ("before any sync", 0, Some(5_000), None),
            ("no stamp", 1_000, None, None),
            ("a stamp from before the run", 1_000, Some(999), None),
            ("the run's zero", 1_000, Some(1_000), Some(0)),
            ("later", 1_000, Some(1_500), Some(500)),
        ];
        for &(name, zero, stamp, want) in cases {
            assert_eq!(RxClock { zero }.to_run(stamp), want, "{name}");
        }
    }

    #[test]
    fn sync_finds_the_offset_of_a_clock_that_counts_from_a_known_instant() {
        // A run clock whose zero was 5 s of wall time ago.
        let origin = twelve_sys::stamp::realtime_ns() - 5_000_000_000;
        let mut c = RxClock::default();
        c.sync(&|| twelve_sys::stamp::realtime_ns() - origin);
        // Both sides read the same wall clock: only the reads in between separate them.
        let off = c.zero.abs_diff(origin);
        // A wrong sign or unit would be seconds off; a preempted read, milliseconds at worst.
        assert!(off < 100_000_000, "offset off by {off} ns");
    }
}
