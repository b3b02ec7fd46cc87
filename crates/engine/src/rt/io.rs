//! Sockets on the worker's loop: [`Stream`], a nonblocking TCP or Unix stream registered
//! (edge-triggered) in the runtime's epoll set under a token of [`token`]. On the epoll
//! backend that set is the worker's own (`Runtime::share_epoll`): the worker's one wait
//! reports the sockets beside its connections and hands their events to [`event`], so a turn
//! with database traffic makes one `epoll_wait`, not two. Elsewhere (io_uring, `block_on`) the
//! set is the runtime's alone, watched as one fd and emptied by [`poll`]. Readiness wakes the
//! task that found the socket empty (or full); the task then makes its `recv` or `send` itself.

use super::{Runtime, current};
use crate::backend::slab::Slab;
use rustix::event::epoll::{self, EventData, EventFlags};
use rustix::io::Errno;
use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketFlags, SocketType};
use std::future::poll_fn;
use std::net::SocketAddr;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::task::{Context, Poll, Waker};

/// Readiness of one registered socket.
#[derive(Default)]
struct Reg {
    readable: bool,
    writable: bool,
    reader: Option<Waker>,
    writer: Option<Waker>,
    /// Answers its peer owes ([`Stream::owe`]).
    owed: usize,
}

/// The registered sockets, by key (see [`token`]), and the event buffer of a [`poll`].
#[derive(Default)]
pub(crate) struct Reactor {
    regs: Slab<Reg>,
    events: Option<twelve_sys::epoll::Events>,
    /// The sum of the sockets' `owed`.
    owed: usize,
}

impl Reactor {
    /// Answers owed to all the sockets (see [`Stream::owe`]).
    pub(crate) fn owed(&self) -> usize {
        self.owed
    }
}

/// Bit 63 marks a runtime socket's token: a socket's key (a slab token, bit 63 clear) with
/// it set. The epoll backend's own tokens are connections' (bit 63 clear) and a few at the top
/// of the range (listeners, wake-up, alarm), which it tells apart before asking [`key`].
const TAG: u64 = 1 << 63;

/// The epoll token of the socket `key`.
fn token(key: u64) -> u64 {
    TAG | key
}

/// The socket key of an epoll token, if it is a runtime socket's.
#[inline]
pub(crate) fn key(token: u64) -> Option<u64> {
    (token & TAG != 0).then_some(token & !TAG)
}

/// Applies one epoll event (`bits`) of the socket `key`: marks it readable or writable and
/// wakes the task that waits on it.
#[inline]
pub(crate) fn event(rt: &Runtime, key: u64, bits: u32) {
    let flags = EventFlags::from_bits_retain(bits);
    let (reader, writer) = {
        let mut io = rt.io.borrow_mut();
        let Some(reg) = io.regs.get(key) else {
            return;
        };
        let hup = flags.intersects(EventFlags::ERR | EventFlags::HUP);
        let mut reader = None;
        let mut writer = None;
        if hup || flags.intersects(EventFlags::IN | EventFlags::RDHUP) {
            reg.readable = true;
            reader = reg.reader.take();
        }
        if hup || flags.contains(EventFlags::OUT) {
            reg.writable = true;
            writer = reg.writer.take();
        }
        (reader, writer)
    };
    // Woken outside the borrow: a waker may run code of its own.
    for w in [reader, writer].into_iter().flatten() {
        w.wake();
    }
}

/// Takes the runtime's socket events, waiting up to `timeout_ms` for one, and wakes the
/// tasks that wait on them.
pub(crate) fn poll(rt: &Runtime, timeout_ms: u64) {
    let mut events = rt
        .io
        .borrow_mut()
        .events
        .take()
        .unwrap_or_else(|| twelve_sys::epoll::Events::with_capacity(256));
    let timeout = i32::try_from(timeout_ms).unwrap_or(i32::MAX);
    if twelve_sys::epoll::wait(rt.epoll.as_fd(), &mut events, timeout).is_ok() {
        for (bits, token) in events.iter() {
            if let Some(key) = key(token) {
                event(rt, key, bits);
            }
        }
    }
    rt.io.borrow_mut().events = Some(events);
}

/// A nonblocking TCP or Unix stream socket on the worker's loop. Reads and writes are plain
/// `recv`/`send` calls; a would-block parks the task until the socket's next edge. Usable by
/// any protocol code through [`Stream::poll_read`] and [`Stream::poll_write`] (the shape of
/// `futures::io`'s traits), or `.await`ed through [`Stream::read`] and [`Stream::write_all`].
/// Dropping it closes the socket. It belongs to the thread that made it.
#[derive(Debug)]
pub struct Stream {
    fd: OwnedFd,
    key: u64,
}

impl Stream {
    /// Connects to a TCP address (with `TCP_NODELAY`).
    pub async fn connect_tcp(addr: SocketAddr) -> std::io::Result<Stream> {
        let family = match addr {
            SocketAddr::V4(_) => AddressFamily::INET,
            SocketAddr::V6(_) => AddressFamily::INET6,
        };
        let fd = socket(family)?;
        rustix::net::sockopt::set_tcp_nodelay(&fd, true)?;
        let started = rustix::net::connect(&fd, &addr);
        Self::finish_connect(fd, started).await
    }

    /// Connects to a Unix stream socket at `path`.
    pub async fn connect_unix(path: &Path) -> std::io::Result<Stream> {
        let fd = socket(AddressFamily::UNIX)?;
        let addr = rustix::net::SocketAddrUnix::new(path)?;
        let started = rustix::net::connect(&fd, &addr);
        Self::finish_connect(fd, started).await
    }

    async fn finish_connect(fd: OwnedFd, started: Result<(), Errno>) -> std::io::Result<Stream> {
        match started {
            Ok(()) | Err(Errno::INPROGRESS | Errno::AGAIN) => {}
            Err(e) => return Err(e.into()),
        }
        let stream = Stream::register(fd)?;
        // Writable once the connect is over, either way; SO_ERROR says which.
        poll_fn(|cx| stream.ready(cx, false)).await;
        match rustix::net::sockopt::socket_error(&stream.fd)? {
            Ok(()) => Ok(stream),
            Err(e) => Err(e.into()),
        }
    }

    fn register(fd: OwnedFd) -> std::io::Result<Stream> {
        let rt = current();
        let key = rt.io.borrow_mut().regs.insert(Reg {
            readable: true,
            ..Reg::default()
        });
        let flags = EventFlags::IN | EventFlags::OUT | EventFlags::RDHUP | EventFlags::ET;
        if let Err(e) = epoll::add(&rt.epoll, &fd, EventData::new_u64(token(key)), flags) {
            rt.io.borrow_mut().regs.remove(key);
            return Err(e.into());
        }
        Ok(Stream { fd, key })
    }

    /// Ready once the socket was reported readable (`read`) or writable since the flag was
    /// last cleared; parks the task otherwise.
    fn ready(&self, cx: &mut Context<'_>, read: bool) -> Poll<()> {
        let rt = current();
        let mut io = rt.io.borrow_mut();
        let Some(reg) = io.regs.get(self.key) else {
            return Poll::Ready(());
        };
        let (flag, waker) = if read {
            (&mut reg.readable, &mut reg.reader)
        } else {
            (&mut reg.writable, &mut reg.writer)
        };
        if *flag {
            return Poll::Ready(());
        }
        *waker = Some(cx.waker().clone());
        Poll::Pending
    }

    fn clear(&self, read: bool) {
        if let Some(reg) = current().io.borrow_mut().regs.get(self.key) {
            if read {
                reg.readable = false;
            } else {
                reg.writable = false;
            }
        }
    }

    /// Reads into the spare capacity of `buf` (which must have some), extending its length;
    /// `Ready(Ok(0))` at EOF.
    pub fn poll_read(
        &self,
        cx: &mut Context<'_>,
        buf: &mut Vec<u8>,
    ) -> Poll<std::io::Result<usize>> {
        loop {
            if self.ready(cx, true).is_pending() {
                return Poll::Pending;
            }
            let space = buf.capacity() - buf.len();
            let spare = rustix::buffer::spare_capacity(buf);
            match rustix::net::recv(&self.fd, spare, RecvFlags::DONTWAIT) {
                Ok((n, _)) => {
                    // A short read means the queue was empty: with EPOLLET the next arrival
                    // brings a new edge, so the next read waits for it instead of making a
                    // recv that returns EAGAIN (docs/kernel-facts.md, as `backend::drive`).
                    if n > 0 && n < space {
                        self.clear(true);
                    }
                    return Poll::Ready(Ok(n));
                }
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) => self.clear(true),
                Err(e) => return Poll::Ready(Err(e.into())),
            }
        }
    }

    /// Writes some of `bytes`; returns how many went.
    pub fn poll_write(&self, cx: &mut Context<'_>, bytes: &[u8]) -> Poll<std::io::Result<usize>> {
        loop {
            if self.ready(cx, false).is_pending() {
                return Poll::Pending;
            }
            let flags = SendFlags::DONTWAIT | SendFlags::NOSIGNAL;
            match rustix::net::send(&self.fd, bytes, flags) {
                Ok(n) => {
                    // A short send means the socket buffer is full: wait for its edge.
                    if n < bytes.len() {
                        self.clear(false);
                    }
                    return Poll::Ready(Ok(n));
                }
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) => self.clear(false),
                Err(e) => return Poll::Ready(Err(e.into())),
            }
        }
    }

    /// Tells the worker that this stream's peer owes it `answers` answers now (a protocol
    /// client: the queries written and not yet answered). While a worker's streams are owed
    /// enough of them, a worker with [`Coalesce::Auto`](crate::Coalesce::Auto) naps after a
    /// wait that found little, so that answers coming one packet each are taken several per
    /// wake-up. Replaces the stream's last count; a dropped stream owes nothing.
    pub fn owe(&self, answers: usize) {
        let rt = current();
        let Ok(mut io) = rt.io.try_borrow_mut() else {
            return;
        };
        let Some(reg) = io.regs.get(self.key) else {
            return;
        };
        let was = std::mem::replace(&mut reg.owed, answers);
        io.owed = io.owed - was + answers;
    }

    /// Reads into the spare capacity of `buf`, at least 4 KiB of it; `Ok(0)` at EOF.
    pub async fn read(&self, buf: &mut Vec<u8>) -> std::io::Result<usize> {
        if buf.capacity() - buf.len() < 4096 {
            buf.reserve(8192);
        }
        poll_fn(|cx| self.poll_read(cx, buf)).await
    }

    /// Writes all of `bytes`.
    pub async fn write_all(&self, mut bytes: &[u8]) -> std::io::Result<()> {
        while !bytes.is_empty() {
            let n = poll_fn(|cx| self.poll_write(cx, bytes)).await?;
            bytes = &bytes[n..];
        }
        Ok(())
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // Closing the fd takes it out of the epoll set; the key goes now.
        if let Some(rt) = super::existing()
            && let Ok(mut io) = rt.io.try_borrow_mut()
            && let Some(reg) = io.regs.remove(self.key)
        {
            io.owed -= reg.owed;
        }
    }
}

fn socket(family: AddressFamily) -> std::io::Result<OwnedFd> {
    let flags = SocketFlags::NONBLOCK | SocketFlags::CLOEXEC;
    Ok(rustix::net::socket_with(
        family,
        SocketType::STREAM,
        flags,
        None,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_owed_add_up_across_streams_and_leave_with_them() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let owed = super::super::block_on(async move {
            let owed = || current().owed();
            let a = Stream::connect_tcp(addr).await.unwrap();
            let b = Stream::connect_tcp(addr).await.unwrap();
            let mut seen = vec![owed()];
            a.owe(5);
            b.owe(3);
            seen.push(owed());
            a.owe(1);
            seen.push(owed());
            drop(b);
            seen.push(owed());
            drop(a);
            seen.push(owed());
            seen
        });
        assert_eq!(owed, [0, 8, 4, 1, 0]);
        drop(listener);
    }
}
