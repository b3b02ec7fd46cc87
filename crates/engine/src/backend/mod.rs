//! Backends: what moves bytes between sockets and the sans-I/O [`Conn`](crate::conn::Conn).
//!
//! The contract (docs/ARCHITECTURE.md): a backend reads into the buffer the connection hands
//! out, reports the count, sends what [`Conn::output`](crate::conn::Conn::output) returns, and
//! carries out [`Next`]. The readiness-based epoll backend does that through [`Io`] and
//! [`pump`]; the completion-based io_uring backend drives the same `Conn` calls from its
//! completions, applying their results by the same rules ([`after_send`], [`after_sendfile`]).
//! What both share beyond that: `worker` (setup, clock, accept gate, drain), `slab` (the
//! connections by token) and `deadlines` (connection deadlines on the wheel).

mod deadlines;
pub(crate) mod epoll;
mod slab;
pub(crate) mod tls;
pub(crate) mod uring;
pub(crate) mod worker;

use crate::conn::{Conn, Ctx, Next, Output, Phase};
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

/// The real socket, for [`pump`] (and the io_uring backend's `sendfile` and shutdown).
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

/// The outcome of [`pump`] for the event loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Keep the connection; wait for the next readiness event or timer.
    Open,
    /// Close it normally.
    Close,
    /// The socket failed (ECONNRESET, EPIPE, ...): close it and count a reset.
    Reset,
}

/// Most bytes handed to one `sendfile`, so one large file cannot starve the other
/// connections of the worker.
pub(crate) const SENDFILE_CHUNK: usize = 1 << 20;

/// Runs a connection until it would block: reads (when `readable`, or when it stopped reading
/// early), answers every complete request, sends the whole batch with one `send`, and follows
/// up with shutdown or close.
///
/// Reading stops at the first `recv` that returns less than the space offered, without the
/// extra `recv` that would return EAGAIN: with `EPOLLET` the kernel queues a new event for
/// every data arrival (`sk_data_ready` → `ep_poll_callback`), not only when the receive queue
/// goes from empty to non-empty, so a short read means the queue was empty at that moment and
/// anything arriving later (a FIN included) brings a new event. This saves one syscall per
/// request (docs/kernel-facts.md: about 2.1 instead of 3.1 per keep-alive request).
pub(crate) fn pump(
    conn: &mut Conn,
    io: &mut impl Io,
    readable: bool,
    now_ms: u64,
    ctx: &mut Ctx,
) -> Verdict {
    if conn.phase() == Phase::Closed {
        // Timed out (send, keep-alive, linger): nothing more goes out, even if writable now.
        return Verdict::Close;
    }
    let mut read = reads_first(conn, readable);
    loop {
        if read && !read_all(conn, io, now_ms, ctx) {
            return Verdict::Reset;
        }
        loop {
            let sent = match conn.output() {
                Output::Bytes(b) => {
                    let result = io.send(b);
                    after_send(conn, result, now_ms, ctx)
                }
                Output::File(f, offset, len) => {
                    let result = io.sendfile(f, offset, len.min(SENDFILE_CHUNK));
                    after_sendfile(conn, result, now_ms, ctx)
                }
                Output::Nothing => break,
            };
            match sent {
                Sent::More => {}
                Sent::Blocked => return Verdict::Open,
                Sent::Truncated => return Verdict::Close,
                Sent::Failed => return Verdict::Reset,
            }
        }
        match io.flush() {
            Ok(()) => {}
            Err(Errno::AGAIN) => return Verdict::Open,
            Err(_) => return Verdict::Reset,
        }
        if conn.after_flush(now_ms, ctx) {
            read = false;
            continue;
        }
        match conn.next() {
            Next::Close => {
                io.close_notify();
                return Verdict::Close;
            }
            Next::ShutdownWrite => {
                // ENOTCONN here means the peer is already gone: close.
                if io.shutdown_write().is_err() {
                    return Verdict::Close;
                }
                conn.write_shut(now_ms, ctx);
                // Lingering: discard whatever is already queued (and notice a queued EOF).
                read = true;
            }
            Next::Wait if conn.unread => read = true,
            Next::Wait => return Verdict::Open,
        }
    }
}

/// Reads until the socket is drained, EOF, or the connection stops reading. Returns `false`
/// on a socket error.
fn read_all(conn: &mut Conn, io: &mut impl Io, now_ms: u64, ctx: &mut Ctx) -> bool {
    loop {
        let Some(buf) = conn.read_buf(ctx) else {
            return true;
        };
        let space = buf.capacity() - buf.len();
        let result = io.recv(buf);
        match after_recv(conn, result, space, now_ms, ctx) {
            Received::More => {}
            Received::Done => return true,
            Received::Failed => return false,
        }
    }
}

// The rules below are the one reading of a `recv`/`send` result, for `pump` and for the
// epoll backend's batches (whose results come from io_uring instead of a syscall of their
// own): a batch applies a result exactly as `pump` would.

/// Whether a run of `conn` begins by reading: the socket said so, or the connection stopped
/// reading early (backpressure) and must catch up. A closed (timed-out) connection neither
/// reads nor sends again.
pub(crate) fn reads_first(conn: &Conn, readable: bool) -> bool {
    conn.phase() != Phase::Closed && (readable || conn.unread)
}

/// What a `recv` result means for the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Received {
    /// Read again: the buffer filled (more may be queued), or the call was interrupted.
    More,
    /// Stop reading: the socket is drained (see `pump` on short reads) or at EOF.
    Done,
    /// The socket failed: close it and count a reset.
    Failed,
}

/// Applies the result of a `recv` that was offered `space` bytes of read buffer.
pub(crate) fn after_recv(
    conn: &mut Conn,
    result: Result<usize, Errno>,
    space: usize,
    now_ms: u64,
    ctx: &mut Ctx,
) -> Received {
    match result {
        Ok(0) => {
            conn.on_eof(ctx);
            Received::Done
        }
        Ok(n) => {
            conn.on_read(n, now_ms, ctx);
            if n < space {
                conn.drained(ctx);
                Received::Done
            } else {
                Received::More
            }
        }
        Err(Errno::INTR) => Received::More,
        Err(Errno::AGAIN) => {
            conn.drained(ctx);
            Received::Done
        }
        Err(_) => Received::Failed,
    }
}

/// What a `send` or `sendfile` result means for the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sent {
    /// Send what remains: bytes went out, or the call was interrupted.
    More,
    /// The socket buffer is full (EAGAIN): wait for the `EPOLLOUT` edge.
    Blocked,
    /// The file ended before the promised length: close.
    Truncated,
    /// The socket failed: close it and count a reset.
    Failed,
}

/// Applies the result of a `send` of [`Output::Bytes`].
pub(crate) fn after_send(
    conn: &mut Conn,
    result: Result<usize, Errno>,
    now_ms: u64,
    ctx: &mut Ctx,
) -> Sent {
    match result {
        Ok(n) => {
            conn.on_sent(n, now_ms, ctx);
            Sent::More
        }
        Err(e) => send_error(e),
    }
}

/// Applies the result of a `sendfile` of [`Output::File`].
pub(crate) fn after_sendfile(
    conn: &mut Conn,
    result: Result<usize, Errno>,
    now_ms: u64,
    ctx: &mut Ctx,
) -> Sent {
    match result {
        Ok(0) => {
            conn.file_failed();
            Sent::Truncated
        }
        Ok(n) => {
            conn.on_file_sent(n, now_ms, ctx);
            Sent::More
        }
        Err(e) => send_error(e),
    }
}

fn send_error(e: Errno) -> Sent {
    match e {
        Errno::INTR => Sent::More,
        Errno::AGAIN => Sent::Blocked,
        _ => Sent::Failed,
    }
}

#[cfg(test)]
#[path = "pump_tests.rs"]
mod tests;
