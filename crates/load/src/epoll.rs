//! The real [`Io`]: one non-blocking TCP socket per connection slot, all on one epoll
//! instance whose event data is the slot index.
//!
//! Interest is EPOLLIN (plus EPOLLOUT while connecting, and while a short write waits), so a
//! request costs one `send` and one `recv` and no `epoll_ctl` after connect (wrk re-arms
//! EPOLLOUT around every write).
use crate::io::{Dialer, Io, Readiness, RxClock};
use rustix::buffer::spare_capacity;
use rustix::event::{Timespec, epoll};
use rustix::fd::{AsFd, OwnedFd};
use rustix::io::Errno;
use rustix::net::{self, RecvFlags, SendFlags};
use std::time::Duration;

pub(crate) struct EpollIo {
    ep: OwnedFd,
    dialer: Dialer,
    /// The socket of each slot, while it has one.
    fds: Vec<Option<OwnedFd>>,
    events: Vec<epoll::Event>,
    /// Each slot's stamp from its last read (realtime ns), if it had one.
    stamped: Vec<Option<u64>>,
    clock: RxClock,
}

impl EpollIo {
    /// `slots` connections, opened by `dialer`.
    pub(crate) fn new(dialer: Dialer, slots: usize) -> std::io::Result<Self> {
        Ok(Self {
            ep: epoll::create(epoll::CreateFlags::CLOEXEC)?,
            dialer,
            fds: (0..slots).map(|_| None).collect(),
            events: Vec::with_capacity(256),
            stamped: vec![None; slots],
            clock: RxClock::default(),
        })
    }

    fn interest(&self, slot: usize, flags: epoll::EventFlags) -> Result<(), Errno> {
        let fd = self.fds[slot].as_ref().ok_or(Errno::BADF)?;
        epoll::modify(&self.ep, fd, epoll::EventData::new_u64(slot as u64), flags)
    }
}

impl Io for EpollIo {
    fn connect(&mut self, slot: usize) -> Result<(), Errno> {
        let fd = self.dialer.open(slot)?;
        let data = epoll::EventData::new_u64(slot as u64);
        let both = epoll::EventFlags::OUT | epoll::EventFlags::IN;
        epoll::add(&self.ep, &fd, data, both).map_err(|_| Errno::NOMEM)?;
        self.fds[slot] = Some(fd);
        Ok(())
    }

    fn finish_connect(&mut self, slot: usize) -> Result<(), Errno> {
        let fd = self.fds[slot].as_ref().ok_or(Errno::BADF)?;
        match net::sockopt::socket_error(fd) {
            Ok(Ok(())) => {}
            Ok(Err(e)) | Err(e) => return Err(e),
        }
        self.interest(slot, epoll::EventFlags::IN)
            .map_err(|_| Errno::NOMEM)
    }

    #[inline]
    fn send(&mut self, slot: usize, bytes: &[u8]) -> Result<usize, Errno> {
        let fd = self.fds[slot].as_ref().ok_or(Errno::BADF)?;
        // MSG_NOSIGNAL: a peer that closed must be a counted write error, not SIGPIPE.
        net::send(fd, bytes, SendFlags::NOSIGNAL)
    }

    #[inline]
    fn recv(&mut self, slot: usize, buf: &mut [u8]) -> Result<usize, Errno> {
        let fd = self.fds[slot].as_ref().ok_or(Errno::BADF)?;
        // `--rx-time kernel`: a `recvmsg` that brings the kernel's receive stamp.
        if self.dialer.stamps() {
            let (n, stamp) = twelve_sys::stamp::recv(fd.as_fd(), buf)?;
            self.stamped[slot] = stamp;
            return Ok(n);
        }
        net::recv(fd, buf, RecvFlags::empty()).map(|(n, _)| n)
    }

    fn want_write(&mut self, slot: usize, on: bool) {
        let flags = if on {
            epoll::EventFlags::IN | epoll::EventFlags::OUT
        } else {
            epoll::EventFlags::IN
        };
        let _ = self.interest(slot, flags);
    }

    fn close(&mut self, slot: usize) {
        // Closing the fd also removes it from the epoll set.
        self.fds[slot] = None;
        self.stamped[slot] = None;
    }

    fn poll(&mut self, timeout_ns: u64) -> Result<usize, Errno> {
        let ts = Timespec {
            tv_sec: (timeout_ns / 1_000_000_000) as i64,
            tv_nsec: (timeout_ns % 1_000_000_000) as i64,
        };
        self.events.clear();
        match epoll::wait(&self.ep, spare_capacity(&mut self.events), Some(&ts)) {
            Ok(_) | Err(Errno::INTR) => Ok(self.events.len()),
            Err(e) => Err(e),
        }
    }

    #[inline]
    fn event(&self, k: usize) -> Readiness {
        let ev = &self.events[k];
        // Copied out: the kernel's epoll_event is packed.
        let (flags, data) = (ev.flags, ev.data);
        Readiness {
            slot: data.u64() as usize,
            readable: flags.intersects(
                epoll::EventFlags::IN | epoll::EventFlags::HUP | epoll::EventFlags::ERR,
            ),
            writable: flags.contains(epoll::EventFlags::OUT),
        }
    }

    fn nap(&mut self, ns: u64) {
        std::thread::sleep(Duration::from_nanos(ns));
    }

    fn stamps(&self) -> bool {
        self.dialer.stamps()
    }

    #[inline]
    fn received_at(&self, slot: usize) -> Option<u64> {
        self.clock.to_run(self.stamped[slot])
    }

    fn sync_clock(&mut self, run_now: &dyn Fn() -> u64) {
        self.clock.sync(run_now);
    }
}
