//! Backends: what moves bytes between sockets and the sans-I/O [`Conn`](crate::conn::Conn).
//!
//! The contract (docs/ARCHITECTURE.md): one drive loop, [`drive::Drive`], says what I/O a
//! connection wants next (receive into this buffer, send these bytes or this file range,
//! flush, shut down, close, wait) and takes each result back by the rules below
//! ([`drive::after_recv`], [`drive::after_send`], [`drive::after_sendfile`]). A backend only carries the operations
//! out: the readiness-based epoll backend with a syscall each through [`Io`] ([`drive::run`])
//! (or, for many ready connections, batched through io_uring), the completion-based io_uring
//! backend with submissions and completions. TLS is an [`Io`] layer ([`tls::TlsIo`]) under the
//! same loop on both. What the backends share beyond that: `worker` (setup, clock, accept
//! gate, drain), `slab` (the connections by token) and `deadlines` (connection deadlines on the
//! wheel).

mod alarm;
mod deadlines;
pub(crate) mod drive;
pub(crate) mod epoll;
mod later;
pub(crate) mod slab;
pub(crate) mod tls;
pub(crate) mod uring;
pub(crate) mod worker;

pub(crate) use drive::Verdict;

use rustix::io::Errno;
use rustix::net::{RecvFlags, SendFlags, Shutdown};
use std::fs::File;
use std::os::fd::BorrowedFd;

/// Socket operations of a readiness backend. Implemented by the real socket and, in tests,
/// by a fake that forces EINTR, EAGAIN and short transfers.
pub(crate) trait Io {
    /// `recv` into `buf`'s spare capacity, extending its length by the count returned.
    fn recv(&mut self, buf: &mut Vec<u8>) -> Result<usize, Errno>;
    /// `send` (never raising SIGPIPE).
    fn send(&mut self, bytes: &[u8]) -> Result<usize, Errno>;
    /// `sendfile` of `len` bytes of `file` from `offset`.
    fn sendfile(&mut self, file: &File, offset: u64, len: usize) -> Result<usize, Errno>;
    /// `shutdown(SHUT_WR)`.
    fn shutdown_write(&mut self) -> Result<(), Errno>;
    /// Sends what `send` only queued. A plain socket queues nothing; the TLS layer
    /// (`tls::TlsIo`) encrypts in `send` and sends the batch's ciphertext here, once.
    #[inline]
    fn flush(&mut self) -> Result<(), Errno> {
        Ok(())
    }
    /// The connection is about to be closed: a last word (TLS close_notify), best effort.
    #[inline]
    fn close_notify(&mut self) {}
}

/// The real socket, for [`drive::run`] (and the io_uring backend's `sendfile` and shutdown).
pub(crate) struct Socket<'a>(pub(crate) BorrowedFd<'a>);

impl Io for Socket<'_> {
    #[inline]
    fn recv(&mut self, buf: &mut Vec<u8>) -> Result<usize, Errno> {
        rustix::net::recv(
            self.0,
            rustix::buffer::spare_capacity(buf),
            RecvFlags::empty(),
        )
        .map(|(n, _)| n)
    }

    #[inline]
    fn send(&mut self, bytes: &[u8]) -> Result<usize, Errno> {
        rustix::net::send(self.0, bytes, SendFlags::NOSIGNAL)
    }

    fn sendfile(&mut self, file: &File, offset: u64, len: usize) -> Result<usize, Errno> {
        let mut off = offset;
        rustix::fs::sendfile(self.0, file, Some(&mut off), len)
    }

    fn shutdown_write(&mut self) -> Result<(), Errno> {
        rustix::net::shutdown(self.0, Shutdown::Write)
    }
}

/// A whole readiness run of a connection, as the epoll backend makes one: a [`drive::Drive`]
/// from its start, each operation a syscall through `io`. For unit tests and the fuzz target.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn pump(
    conn: &mut crate::conn::Conn,
    io: &mut impl Io,
    readable: bool,
    now_ms: u64,
    ctx: &mut crate::conn::Ctx,
) -> Verdict {
    drive::run(drive::Drive::start(conn, readable), conn, io, now_ms, ctx)
}
