//! The contract between a worker's dispatch and its sockets: connect, send, receive, close,
//! and wait for readiness, per connection slot. [`crate::epoll`] implements it with real
//! sockets on one epoll instance; the simulation ([`crate::sim`]) with a modelled server on a
//! simulated clock. Both run the same worker loop and dispatch over it.
use rustix::fd::OwnedFd;
use rustix::io::Errno;
use rustix::net::{self, AddressFamily, SocketFlags, SocketType};
use std::net::SocketAddr;

/// What a poll found ready on one connection slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Event {
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
    fn event(&self, k: usize) -> Event;
    /// Sleeps `ns` on the worker's own timer (`--coalesce`).
    fn nap(&mut self, ns: u64);
    /// Whether the slot's TLS handshake finished since the last call (once per handshake);
    /// always `false` without TLS.
    fn handshake_done(&mut self, _slot: usize) -> bool {
        false
    }
}

/// The source address of each of a worker's `slots` (`--source`), taken in turn from the
/// run-wide slot `first_slot` on, so the workers together go round the list; empty: the
/// kernel picks.
pub(crate) fn source_addrs(
    sources: &[std::net::IpAddr],
    slots: usize,
    first_slot: usize,
) -> Vec<SocketAddr> {
    let n = sources.len().max(1);
    (0..sources.len().min(slots))
        .map(|i| SocketAddr::new(sources[(first_slot + i) % n], 0))
        .collect()
}

/// A non-blocking TCP socket with its connect to `addr` started (from `source`, when given):
/// both engines' sockets, alike.
pub(crate) fn start_connect(
    addr: &SocketAddr,
    source: Option<&SocketAddr>,
) -> Result<OwnedFd, Errno> {
    let family = if addr.is_ipv4() {
        AddressFamily::INET
    } else {
        AddressFamily::INET6
    };
    let flags = SocketFlags::NONBLOCK | SocketFlags::CLOEXEC;
    // The errno as it is: EMFILE is counted as its own class (no descriptor left).
    let fd = net::socket_with(family, SocketType::STREAM, flags, None)?;
    // Requests are small and complete; Nagle would hold the second of a pipelined pair.
    let _ = net::sockopt::set_tcp_nodelay(&fd, true);
    if let Some(source) = source {
        // Port 0: the kernel picks a port of this source address's own range.
        net::bind(&fd, source)?;
    }
    match net::connect(&fd, addr) {
        Ok(()) | Err(Errno::INPROGRESS) => Ok(fd),
        Err(e) => Err(e),
    }
}

/// A non-blocking connect to the Unix-domain socket `to`: it completes at once or fails
/// (EAGAIN when the listener's backlog is full, counted as a failed connect).
pub(crate) fn connect_unix(to: &net::SocketAddrUnix) -> Result<OwnedFd, Errno> {
    let flags = SocketFlags::NONBLOCK | SocketFlags::CLOEXEC;
    let fd = net::socket_with(AddressFamily::UNIX, SocketType::STREAM, flags, None)?;
    net::connect(&fd, to)?;
    Ok(fd)
}
