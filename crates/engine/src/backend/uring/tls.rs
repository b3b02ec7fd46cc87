//! TLS on the io_uring backend: the same [`TlsIo`] layer as on epoll, over [`RingIo`], a
//! socket whose `recv` takes the ciphertext the multishot receive stashed and whose `send`
//! submits a copy of the ciphertext. One send is in flight at a time, the layer's flush waits
//! for it, and a shutdown or close waits for it too, so the last records and close_notify are
//! not cancelled with the connection.

use super::{Live, take_received};
use crate::backend::drive::{self, Drive};
use crate::backend::tls::{self as layer, TlsIo};
use crate::backend::{Io, Socket, Verdict};
use crate::conn::Ctx;
use crate::metrics::WorkerMetrics;
use rustix::io::Errno;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd};
use twelve_sys::uring::ring::Ring;
use twelve_tls::Session;

/// A TLS connection's session and the ciphertext it has in the ring.
pub(super) struct Tls {
    pub(super) session: Session,
    /// Ciphertext lent to the ring while a send is in flight (`out[start..]` unsent), kept
    /// for the next one otherwise.
    pub(super) out: Vec<u8>,
    pub(super) start: usize,
    /// When the ciphertext the session holds last moved (see [`layer::held_since`]).
    pub(super) held_since_ms: u64,
    /// Once the ciphertext in flight is out: shut the write side down.
    pub(super) shut_after: bool,
    /// Once the ciphertext is out: close, counting a reset if `true`.
    pub(super) close_after: Option<bool>,
}

impl Tls {
    /// A connection's TLS state, accepted at `now_ms`.
    pub(super) fn new(session: Session, now_ms: u64) -> Self {
        Self {
            session,
            out: Vec::new(),
            start: 0,
            held_since_ms: now_ms,
            shut_after: false,
            close_after: None,
        }
    }
}

/// One drive of a TLS connection, through [`TlsIo`] over [`RingIo`]. A close (or a
/// failure's alert) with ciphertext still in flight waits for it: `Tls::close_after`.
pub(super) fn run_tls(
    live: &mut Live,
    ring: &mut Ring,
    ctx: &mut Ctx,
    m: &WorkerMetrics,
    scratch: &mut Vec<u8>,
    token: u64,
    now: u64,
) -> Verdict {
    let Some(tls) = live.tls.as_deref_mut() else {
        return Verdict::Close;
    };
    let Tls {
        session,
        out,
        start,
        held_since_ms,
        shut_after,
        close_after,
    } = tls;
    let wire = RingIo {
        ring,
        fd: live.fd.as_fd(),
        token,
        stash: &mut live.stash,
        eof: live.eof,
        out,
        start,
        shut_after,
        sending: &mut live.sending,
    };
    if let Some(reset) = *close_after {
        // The ciphertext before the close went out: what the session still holds (its
        // close_notify, an alert), then the close.
        let _ = TlsIo::new(session, wire, scratch, m).flush();
        if live.sending {
            live.ops += 1;
            live.conn.send_started(now);
            return Verdict::Open;
        }
        return if reset {
            Verdict::Reset
        } else {
            Verdict::Close
        };
    }
    let held = session.pending_out();
    let drive = Drive::start(&live.conn, true);
    let mut io = TlsIo::new(session, wire, scratch, m);
    let verdict = drive::run(drive, &mut live.conn, &mut io, now, ctx);
    let after = session.pending_out();
    *held_since_ms = layer::held_since(*held_since_ms, held, after, now);
    let failed = layer::books(&mut live.conn, session, verdict, now, m);
    if live.sending {
        // The run submitted a send (one at most: `RingIo` has one in flight at a time).
        live.ops += 1;
        live.conn.send_started(now);
    }
    match verdict {
        Verdict::Open => Verdict::Open,
        _ if live.sending || session.pending_out() > 0 => {
            *close_after = Some(verdict == Verdict::Reset && !failed);
            Verdict::Open
        }
        // A TLS failure was counted as such, not as a reset.
        Verdict::Reset if failed => Verdict::Close,
        v => v,
    }
}

/// A send of TLS ciphertext completed with `r`, `buf` back from the ring: submits the rest
/// of it (`Some(true)`), or keeps `buf` for the next send and carries out a shutdown that
/// waited for it (`Some(false)`). `None`: the socket failed.
pub(super) fn tls_sent(
    tls: &mut Tls,
    r: Result<usize, Errno>,
    mut buf: Vec<u8>,
    fd: BorrowedFd<'_>,
    ring: &mut Ring,
    token: u64,
) -> Option<bool> {
    let failed = match r {
        Ok(n) => {
            tls.start += n;
            false
        }
        Err(Errno::INTR | Errno::AGAIN) => false,
        Err(_) => true,
    };
    if !failed && tls.start < buf.len() {
        ring.send(fd, buf, tls.start, token);
        return Some(true);
    }
    buf.clear();
    tls.out = buf;
    tls.start = 0;
    if failed {
        return None;
    }
    if std::mem::take(&mut tls.shut_after) {
        // ENOTCONN: the peer is gone; the lingering read finds out.
        let _ = Socket(fd).shutdown_write();
    }
    Some(false)
}

/// The socket under a TLS connection's [`TlsIo`] on this backend: `recv` takes the stashed
/// ciphertext ([`take_received`]); `send` submits a copy of the ciphertext (one send in
/// flight at a time: `EAGAIN` while it is), and [`Io::flush`] says `EAGAIN` until it is out,
/// so the drive waits for it; a shutdown waits for it too.
struct RingIo<'a> {
    ring: &'a mut Ring,
    fd: BorrowedFd<'a>,
    token: u64,
    stash: &'a mut Vec<u8>,
    eof: bool,
    /// `Tls::out`, `Tls::start`, `Tls::shut_after`, `Live::sending`.
    out: &'a mut Vec<u8>,
    start: &'a mut usize,
    shut_after: &'a mut bool,
    sending: &'a mut bool,
}

impl Io for RingIo<'_> {
    fn recv(&mut self, buf: &mut Vec<u8>) -> Result<usize, Errno> {
        take_received(self.stash, self.eof, buf)
    }

    fn send(&mut self, bytes: &[u8]) -> Result<usize, Errno> {
        if *self.sending {
            return Err(Errno::AGAIN);
        }
        let mut buf = std::mem::take(self.out);
        buf.clear();
        buf.extend_from_slice(bytes);
        *self.start = 0;
        self.ring.send(self.fd, buf, 0, self.token);
        *self.sending = true;
        Ok(bytes.len())
    }

    fn sendfile(&mut self, file: &File, offset: u64, len: usize) -> Result<usize, Errno> {
        Socket(self.fd).sendfile(file, offset, len)
    }

    fn shutdown_write(&mut self) -> Result<(), Errno> {
        if *self.sending {
            *self.shut_after = true;
            return Ok(());
        }
        Socket(self.fd).shutdown_write()
    }

    fn flush(&mut self) -> Result<(), Errno> {
        if *self.sending {
            Err(Errno::AGAIN)
        } else {
            Ok(())
        }
    }
}
