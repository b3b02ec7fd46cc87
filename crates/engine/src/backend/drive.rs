//! The drive loop, written once for every backend: a sans-I/O step function over a
//! connection that says which operation it wants next ([`Want`]) and takes each result back.
//!
//! A run of a connection reads (when told it is readable, or when it stopped reading early),
//! answers every complete request, sends the whole batch of responses, flushes what a layer
//! below only queued (TLS), then shuts down, closes or waits. [`Drive`] holds where a run is;
//! the backend carries out each [`Want`] its own way and hands the result to the matching
//! method ([`Drive::received`], [`Drive::sent`], [`Drive::sent_file`], [`Drive::flushed`],
//! [`Drive::shut`]), which applies it by the rules below ([`after_recv`], [`after_send`],
//! [`after_sendfile`]):
//!
//! - [`run`] makes each operation a syscall at once, through an [`Io`] (the plain socket, the
//!   TLS layer over it, a test's fake): the readiness backend, and any connection a batch
//!   leaves unfinished.
//! - the epoll backend's batches take the `Recv` and then the `Send` of many connections'
//!   drives into one io_uring submission each, feed the results back, and finish each drive
//!   with [`run`].
//! - the io_uring backend answers `Recv` from what its multishot receive delivered, submits
//!   `Send` with the connection's buffer and resumes with a new drive on the completion.
//!
//! A protocol plugs in behind [`Conn`]'s calls; a backend plugs in as one more executor of
//! [`Want`]. A drive is a small `Copy` value and [`Drive::want`] allocates nothing.

use super::Io;
use crate::conn::{Conn, Ctx, Next, Output, Phase};
use rustix::io::Errno;
use std::fs::File;

/// The outcome of a run, for the event loop.
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

// The rules below are the one reading of a `recv`/`send` result, which [`Drive`] applies
// whichever backend made the call.

/// What a `recv` result means for the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Received {
    /// Read again: the buffer filled (more may be queued), or the call was interrupted.
    More,
    /// Stop reading: the socket is drained (see [`Drive::received`] on short reads) or at EOF.
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

/// The operation a connection's run wants next.
#[derive(Debug)]
pub(crate) enum Want<'a> {
    /// `recv` into the spare capacity of this buffer (the connection's read buffer), then
    /// [`Drive::received`] with the space that was offered.
    Recv(&'a mut Vec<u8>),
    /// `send` the response bytes due ([`Conn::output`]; a backend that must own the buffer
    /// takes it with [`Conn::lend_write`]), then [`Drive::sent`].
    Send,
    /// `sendfile` of this range of the file (at most [`SENDFILE_CHUNK`] bytes), then
    /// [`Drive::sent_file`].
    SendFile(&'a File, u64, usize),
    /// Send what a layer below only queued (the TLS layer's ciphertext; nothing for a plain
    /// socket), then [`Drive::flushed`].
    Flush,
    /// `shutdown(SHUT_WR)`, then [`Drive::shut`].
    Shutdown,
    /// A clean close: the layer's last word (TLS close_notify, best effort), then close.
    Close,
    /// The run is over: keep the connection and wait for the next event or timer
    /// ([`Verdict::Open`]), close it, or close it and count a reset.
    Stop(Verdict),
}

/// Where a connection's run is. Fieldless (the stops are one step per verdict), so that a
/// step is a byte the executor's loop keeps in a register and branches on once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Read,
    Send,
    Flush,
    Shutdown,
    Close,
    StopOpen,
    StopClose,
    StopReset,
}

/// One run of a connection (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Drive(Step);

impl Drive {
    /// A run that begins by reading if `readable` (the socket said so, or a backend has
    /// received bytes for the connection) or if the connection stopped reading early
    /// (backpressure) and must catch up. A closed (timed-out) connection neither reads nor
    /// sends again, even if the socket became writable.
    #[inline]
    pub(crate) fn start(conn: &Conn, readable: bool) -> Self {
        Drive(if conn.phase() == Phase::Closed {
            Step::StopClose
        } else if readable || conn.unread {
            Step::Read
        } else {
            Step::Send
        })
    }

    /// The run is reading (a full buffer asks for another `recv`).
    #[inline]
    pub(crate) fn reading(self) -> bool {
        matches!(self.0, Step::Read)
    }

    /// The run stopped on a failed socket: close the connection and count a reset.
    #[inline]
    pub(crate) fn failed(self) -> bool {
        matches!(self.0, Step::StopReset)
    }

    /// What the run wants next. Asking again before handing a result back asks for the same.
    #[inline]
    pub(crate) fn want<'c>(&mut self, conn: &'c mut Conn, ctx: &mut Ctx) -> Want<'c> {
        match self.0 {
            Step::Read => {
                if conn.prepare_read(ctx) {
                    return Want::Recv(conn.read_vec());
                }
                // Nothing to read now (closed, EOF seen, or backpressure): on to the output.
                self.0 = Step::Send;
                self.output(conn)
            }
            Step::Send => self.output(conn),
            Step::Flush => Want::Flush,
            Step::Shutdown => Want::Shutdown,
            Step::Close => Want::Close,
            Step::StopOpen => Want::Stop(Verdict::Open),
            Step::StopClose => Want::Stop(Verdict::Close),
            Step::StopReset => Want::Stop(Verdict::Reset),
        }
    }

    /// The next piece of output, or the flush once there is none.
    #[inline]
    fn output<'c>(&mut self, conn: &'c Conn) -> Want<'c> {
        match conn.output() {
            Output::Bytes(_) => Want::Send,
            Output::File(f, offset, len) => Want::SendFile(f, offset, len.min(SENDFILE_CHUNK)),
            Output::Nothing => {
                self.0 = Step::Flush;
                Want::Flush
            }
        }
    }

    /// A `recv` that was offered `space` bytes returned `result` (bytes already appended to
    /// the buffer of [`Want::Recv`]).
    ///
    /// Reading stops at the first `recv` that returns less than the space offered, without
    /// the extra `recv` that would return EAGAIN: with `EPOLLET` the kernel queues a new event
    /// for every data arrival (`sk_data_ready` → `ep_poll_callback`), not only when the
    /// receive queue goes from empty to non-empty, so a short read means the queue was empty
    /// at that moment and anything arriving later (a FIN included) brings a new event. This
    /// saves one syscall per request (docs/kernel-facts.md).
    #[inline]
    pub(crate) fn received(
        &mut self,
        conn: &mut Conn,
        result: Result<usize, Errno>,
        space: usize,
        now_ms: u64,
        ctx: &mut Ctx,
    ) {
        match after_recv(conn, result, space, now_ms, ctx) {
            Received::More => {}
            Received::Done => self.0 = Step::Send,
            Received::Failed => self.0 = Step::StopReset,
        }
    }

    /// The `send` of [`Want::Send`] returned `result`.
    #[inline]
    pub(crate) fn sent(
        &mut self,
        conn: &mut Conn,
        result: Result<usize, Errno>,
        now_ms: u64,
        ctx: &mut Ctx,
    ) {
        self.after_send(after_send(conn, result, now_ms, ctx));
    }

    /// The `sendfile` of [`Want::SendFile`] returned `result`.
    #[inline]
    pub(crate) fn sent_file(
        &mut self,
        conn: &mut Conn,
        result: Result<usize, Errno>,
        now_ms: u64,
        ctx: &mut Ctx,
    ) {
        self.after_send(after_sendfile(conn, result, now_ms, ctx));
    }

    #[inline]
    fn after_send(&mut self, sent: Sent) {
        self.0 = match sent {
            Sent::More => Step::Send,
            // The socket buffer is full: wait for it to drain (an `EPOLLOUT` edge, a poll).
            Sent::Blocked => Step::StopOpen,
            Sent::Truncated => Step::StopClose,
            Sent::Failed => Step::StopReset,
        }
    }

    /// The [`Want::Flush`] returned `result` (`EAGAIN`: the layer still holds bytes and waits
    /// for the socket). With everything out, requests held back by backpressure or a file body
    /// are answered; then the connection says what follows ([`Conn::next`]).
    #[inline]
    pub(crate) fn flushed(
        &mut self,
        conn: &mut Conn,
        result: Result<(), Errno>,
        now_ms: u64,
        ctx: &mut Ctx,
    ) {
        self.0 = match result {
            Ok(()) if conn.after_flush(now_ms, ctx) => Step::Send,
            Ok(()) => match conn.next() {
                Next::Close => Step::Close,
                Next::ShutdownWrite => Step::Shutdown,
                Next::Wait if conn.unread => Step::Read,
                Next::Wait => Step::StopOpen,
            },
            Err(Errno::AGAIN) => Step::StopOpen,
            Err(_) => Step::StopReset,
        }
    }

    /// The `shutdown(SHUT_WR)` of [`Want::Shutdown`] returned `result`. An error (ENOTCONN)
    /// means the peer is already gone: close. Otherwise the connection lingers, and the run
    /// reads on to discard whatever is already queued (and to notice a queued EOF).
    #[inline]
    pub(crate) fn shut(
        &mut self,
        conn: &mut Conn,
        result: Result<(), Errno>,
        now_ms: u64,
        ctx: &mut Ctx,
    ) {
        self.0 = match result {
            Ok(()) => {
                conn.write_shut(now_ms, ctx);
                Step::Read
            }
            Err(_) => Step::StopClose,
        }
    }
}

/// Carries a run through to its end with a syscall for each operation, through `io`.
///
/// This is [`Drive::want`] with its executor folded in: each step branches once, straight to
/// its operation, rather than building a [`Want`] to match again (a plain keep-alive request
/// takes four steps). The transitions are [`Drive`]'s methods either way, and the pump tests
/// and the decision table hold the two to the same sequence.
#[inline]
pub(crate) fn run(
    mut drive: Drive,
    conn: &mut Conn,
    io: &mut impl Io,
    now_ms: u64,
    ctx: &mut Ctx,
) -> Verdict {
    loop {
        match drive.0 {
            Step::Read if conn.prepare_read(ctx) => {
                let buf = conn.read_vec();
                let space = buf.capacity() - buf.len();
                let result = io.recv(buf);
                drive.received(conn, result, space, now_ms, ctx);
            }
            // Nothing to read now (closed, EOF seen, or backpressure): on to the output.
            Step::Read | Step::Send => match conn.output() {
                Output::Bytes(bytes) => {
                    let result = io.send(bytes);
                    drive.sent(conn, result, now_ms, ctx);
                }
                Output::File(file, offset, len) => {
                    let result = io.sendfile(file, offset, len.min(SENDFILE_CHUNK));
                    drive.sent_file(conn, result, now_ms, ctx);
                }
                Output::Nothing => {
                    let result = io.flush();
                    drive.flushed(conn, result, now_ms, ctx);
                }
            },
            Step::Flush => {
                let result = io.flush();
                drive.flushed(conn, result, now_ms, ctx);
            }
            Step::Shutdown => {
                let result = io.shutdown_write();
                drive.shut(conn, result, now_ms, ctx);
            }
            Step::Close => {
                io.close_notify();
                return Verdict::Close;
            }
            Step::StopOpen => return Verdict::Open,
            Step::StopClose => return Verdict::Close,
            Step::StopReset => return Verdict::Reset,
        }
    }
}

#[cfg(test)]
mod tests;
