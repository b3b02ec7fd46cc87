//! The contract between a worker's dispatch and its sockets: connect, send, receive, close,
//! and wait for readiness, per connection slot. [`crate::epoll`] implements it with real
//! sockets on one epoll instance; the simulation ([`crate::sim`]) with a modelled server on a
//! simulated clock. Both run the same worker loop and dispatch over it.
use rustix::io::Errno;

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
