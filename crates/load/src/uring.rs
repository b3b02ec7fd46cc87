//! The io_uring [`Io`]: the same dispatch over a completion ring ([`Ring`])
//! instead of readiness, so that a loop turn costs one `io_uring_enter` for every send of the
//! turn and every completion it reaps, where the epoll engine pays a `send` and a `recv` per
//! window and an `epoll_wait` per turn. HttpArena's gcannon is built this way.
//!
//! How the readiness contract maps onto completions:
//! - `connect` is the plain non-blocking syscall; its end comes as a one-shot `POLLOUT` poll
//!   through the ring, reported as writability. `finish_connect` then arms one multishot
//!   receive into the ring's provided buffers, which stays armed for the connection's life.
//! - `recv` hands out bytes the kernel already received (copied from the provided buffers,
//!   which go back at once) or `EAGAIN`; a slot with bytes, an end or an error left over is
//!   reported readable again by the next poll, which then does not block.
//! - `send` copies the window into the slot's own buffer, queues the send, and reports it all
//!   taken: a short completion is resubmitted here, and a failed one shows up as the
//!   connection's next `recv` error (counted as a read error). So a write never stalls from
//!   the dispatch's view and `want_write` has nothing to do. The request's send time is taken
//!   when the dispatch hands it over, and the send leaves with the turn's `io_uring_enter` (or
//!   just before a nap): on this engine the latency also holds the rest of the turn's work,
//!   which on epoll, sending at once, falls into the read delay instead.
//! - `close` cancels the connection's operations; the descriptor is closed through the ring
//!   once their last completion arrived (closing it earlier would leave the multishot receive
//!   holding the socket). The slot can connect again at once: completions carry the
//!   connection's generation, and a stale one only settles its own connection's count.
use crate::io::{Dialer, Io, Readiness, RxClock};
use rustix::fd::{AsFd, OwnedFd};
use rustix::io::Errno;
use rustix::net;
use std::collections::VecDeque;
use std::time::Duration;
use twelve_sys::uring::ring::{Completion, Outcome, RecvBuf, Ring};

/// Submission entries; a turn with more submissions enters more than once.
const ENTRIES: u32 = 1024;
/// Bytes per provided receive buffer: gcannon's default (`--recv-buf 4096`).
const BUF_SIZE: u32 = 4096;
/// `POLLOUT` as the ring's poll takes it: the end of a non-blocking connect.
const POLLOUT: u32 = rustix::event::PollFlags::OUT.bits() as u32;

/// One connection on a slot: its socket and how many of its operations have not completed.
struct Link {
    fd: OwnedFd,
    tag: u64,
    ops: u32,
}

#[derive(Default)]
struct Slot {
    live: Option<Link>,
    gen_: u32,
    /// Received and not yet handed to the dispatch; the front one read up to `offset`.
    rx: VecDeque<RecvBuf>,
    offset: usize,
    eof: bool,
    err: Option<Errno>,
    /// The multishot receive ended without an end or error (the buffer ring ran dry): it is
    /// on the list to be armed again on the next poll, after the dispatch gave buffers back.
    rearm: bool,
    /// A send is in flight; windows queued meanwhile wait in `backlog`.
    sending: bool,
    backlog: Vec<u8>,
    /// The slot's send buffer while no send is in flight.
    spare: Vec<u8>,
    /// Already on this poll's event list, at that index.
    listed: Option<u32>,
    /// The receive stamp of the newest bytes the last `recv` handed out (realtime ns).
    stamp: Option<u64>,
}

pub(crate) struct UringIo {
    ring: Ring,
    dialer: Dialer,
    slots: Vec<Slot>,
    /// Cancelled connections waiting for their operations' last completions.
    closing: Vec<Link>,
    /// Slots to report readable on the next poll whatever the ring says.
    again: Vec<usize>,
    /// Slots whose multishot receive is to be armed again on the next poll.
    rearm: Vec<usize>,
    done: Vec<Completion>,
    events: Vec<Readiness>,
    clock: RxClock,
}

/// Arms the connection's one multishot receive: a `recvmsg` where its buffers are to carry
/// receive stamps (`--rx-time kernel`; 80 bytes of header each), a plain `recv` otherwise.
fn arm_recv(ring: &mut Ring, stamps: bool, fd: &OwnedFd, tag: u64) {
    if stamps {
        ring.recv_msg_multi(fd.as_fd(), tag);
    } else {
        ring.recv_multi(fd.as_fd(), tag);
    }
}

/// Slot index and generation in one completion tag.
fn tag(slot: usize, gen_: u32) -> u64 {
    (u64::from(gen_) << 32) | slot as u64
}

impl UringIo {
    /// A ring for `slots` connections opened by `dialer`; fails where io_uring cannot run
    /// this (see [`Ring::new`]).
    pub(crate) fn new(dialer: Dialer, slots: usize) -> std::io::Result<Self> {
        // Enough buffers for one response per connection per turn, within 256..=4096.
        let bufs = slots.next_power_of_two().clamp(256, 4096) as u16;
        Ok(Self {
            ring: Ring::new(ENTRIES, bufs, BUF_SIZE)?,
            dialer,
            slots: (0..slots).map(|_| Slot::default()).collect(),
            closing: Vec::new(),
            again: Vec::new(),
            rearm: Vec::new(),
            done: Vec::new(),
            events: Vec::new(),
            clock: RxClock::default(),
        })
    }

    /// Lists `slot` in this poll's events (once), readable and/or writable.
    fn mark(&mut self, slot: usize, readable: bool, writable: bool) {
        let s = &mut self.slots[slot];
        match s.listed {
            Some(k) => {
                let ev = &mut self.events[k as usize];
                ev.readable |= readable;
                ev.writable |= writable;
            }
            None => {
                s.listed = Some(self.events.len() as u32);
                self.events.push(Readiness {
                    slot,
                    readable,
                    writable,
                });
            }
        }
    }

    fn on_completion(&mut self, c: Completion) {
        let slot = (c.tag & 0xffff_ffff) as usize;
        let last = !c.more;
        let live = self
            .slots
            .get(slot)
            .and_then(|s| s.live.as_ref())
            .is_some_and(|l| l.tag == c.tag);
        if !live {
            return self.settle_closing(c);
        }
        let s = &mut self.slots[slot];
        if last && let Some(l) = s.live.as_mut() {
            l.ops -= 1;
        }
        match c.outcome {
            Outcome::Poll(_) => self.mark(slot, false, true),
            Outcome::Recv(Ok(Some(buf))) => {
                s.rx.push_back(buf);
                if last && !std::mem::replace(&mut s.rearm, true) {
                    self.rearm.push(slot);
                }
                self.mark(slot, true, false);
            }
            Outcome::Recv(Ok(None)) => {
                s.eof = true;
                self.mark(slot, true, false);
            }
            Outcome::Recv(Err(Errno::NOBUFS)) => {
                if !std::mem::replace(&mut s.rearm, true) {
                    self.rearm.push(slot);
                }
            }
            Outcome::Recv(Err(e)) => {
                s.err.get_or_insert(e);
                self.mark(slot, true, false);
            }
            Outcome::Send(Err(e), _) => {
                s.sending = false;
                s.backlog.clear();
                s.err.get_or_insert(e);
                self.mark(slot, true, false);
            }
            Outcome::Send(Ok(n), buf) => self.sent(slot, n, buf),
            Outcome::Accept(_) => {}
        }
    }

    /// A send of the live connection on `slot` completed with `n` bytes of `buf` taken.
    fn sent(&mut self, slot: usize, n: usize, mut buf: Vec<u8>) {
        let s = &mut self.slots[slot];
        let Some(l) = s.live.as_mut() else { return };
        if n < buf.len() {
            // Short: the rest goes again, from where the kernel stopped.
            buf.drain(..n);
            l.ops += 1;
            self.ring.send(l.fd.as_fd(), buf, 0, l.tag);
            return;
        }
        if s.backlog.is_empty() {
            s.sending = false;
            buf.clear();
            s.spare = buf;
        } else {
            buf.clear();
            std::mem::swap(&mut buf, &mut s.backlog);
            l.ops += 1;
            self.ring.send(l.fd.as_fd(), buf, 0, l.tag);
        }
    }

    /// A completion of a cancelled connection: recycle its buffer, count it, and close the
    /// socket through the ring after its last.
    fn settle_closing(&mut self, c: Completion) {
        if let Outcome::Recv(Ok(Some(buf))) = c.outcome {
            self.ring.recycle(buf);
        }
        if c.more {
            return;
        }
        if let Some(k) = self.closing.iter().position(|l| l.tag == c.tag) {
            self.closing[k].ops -= 1;
            if self.closing[k].ops == 0 {
                let l = self.closing.swap_remove(k);
                self.ring.close(l.fd);
            }
        }
    }
}

impl Io for UringIo {
    fn connect(&mut self, slot: usize) -> Result<(), Errno> {
        if self.slots[slot].live.is_some() {
            // Never drop a socket the ring may still use: close it the ring's way first.
            self.close(slot);
        }
        let fd = self.dialer.open(slot)?;
        let s = &mut self.slots[slot];
        s.gen_ = s.gen_.wrapping_add(1);
        let t = tag(slot, s.gen_);
        self.ring.poll(fd.as_fd(), POLLOUT, false, t);
        s.live = Some(Link { fd, tag: t, ops: 1 });
        Ok(())
    }

    fn finish_connect(&mut self, slot: usize) -> Result<(), Errno> {
        let s = &mut self.slots[slot];
        let l = s.live.as_mut().ok_or(Errno::BADF)?;
        match net::sockopt::socket_error(&l.fd) {
            Ok(Ok(())) => {}
            Ok(Err(e)) | Err(e) => return Err(e),
        }
        l.ops += 1;
        arm_recv(&mut self.ring, self.dialer.stamps(), &l.fd, l.tag);
        Ok(())
    }

    fn send(&mut self, slot: usize, bytes: &[u8]) -> Result<usize, Errno> {
        let s = &mut self.slots[slot];
        if let Some(e) = s.err.take() {
            return Err(e);
        }
        let l = s.live.as_mut().ok_or(Errno::BADF)?;
        if s.sending {
            s.backlog.extend_from_slice(bytes);
        } else {
            let mut buf = std::mem::take(&mut s.spare);
            buf.extend_from_slice(bytes);
            s.sending = true;
            l.ops += 1;
            self.ring.send(l.fd.as_fd(), buf, 0, l.tag);
        }
        Ok(bytes.len())
    }

    fn recv(&mut self, slot: usize, buf: &mut [u8]) -> Result<usize, Errno> {
        let s = &mut self.slots[slot];
        let mut n = 0;
        while n < buf.len()
            && let Some(front) = s.rx.front()
        {
            // One read, one receive stamp: bytes the kernel took in at another time wait for
            // the next read (the slot is reported again), so that an answer completed by an
            // earlier buffer is not booked at a later one's stamp.
            if n > 0 && front.stamp() != s.stamp {
                break;
            }
            s.stamp = front.stamp();
            let bytes = &self.ring.bytes(front)[s.offset..];
            let take = bytes.len().min(buf.len() - n);
            buf[n..n + take].copy_from_slice(&bytes[..take]);
            n += take;
            s.offset += take;
            if take == bytes.len() {
                s.offset = 0;
                let done = s.rx.pop_front().expect("front exists");
                self.ring.recycle(done);
            }
        }
        let left = !s.rx.is_empty() || s.eof || s.err.is_some();
        if n > 0 {
            if left {
                self.again.push(slot);
            }
            return Ok(n);
        }
        if let Some(e) = s.err.take() {
            return Err(e);
        }
        if s.eof {
            return Ok(0);
        }
        Err(Errno::AGAIN)
    }

    fn want_write(&mut self, _slot: usize, _on: bool) {}

    fn close(&mut self, slot: usize) {
        // A read's leftover (bytes, EOF) is the closed socket's: reported on the slot's next
        // socket, it would pass for that connect's completion.
        self.again.retain(|&s| s != slot);
        let s = &mut self.slots[slot];
        for buf in s.rx.drain(..) {
            self.ring.recycle(buf);
        }
        s.offset = 0;
        s.eof = false;
        s.err = None;
        s.rearm = false;
        s.sending = false;
        s.backlog.clear();
        s.stamp = None;
        let Some(l) = s.live.take() else { return };
        if l.ops == 0 {
            self.ring.close(l.fd);
        } else {
            self.ring.cancel_fd(l.fd.as_fd());
            self.closing.push(l);
        }
    }

    fn poll(&mut self, timeout_ns: u64) -> Result<usize, Errno> {
        // Only the slots of the last poll's events and lists are visited: a turn costs what
        // it reaps, not what the worker holds (10,000 connections, say).
        for ev in &self.events {
            self.slots[ev.slot].listed = None;
        }
        self.events.clear();
        let rearm = std::mem::take(&mut self.rearm);
        for &slot in &rearm {
            let s = &mut self.slots[slot];
            if std::mem::take(&mut s.rearm)
                && !s.eof
                && s.err.is_none()
                && let Some(l) = s.live.as_mut()
            {
                l.ops += 1;
                arm_recv(&mut self.ring, self.dialer.stamps(), &l.fd, l.tag);
            }
        }
        self.rearm = rearm;
        self.rearm.clear();
        let again = std::mem::take(&mut self.again);
        for &slot in &again {
            if self.slots[slot].live.is_some() {
                self.mark(slot, true, false);
            }
        }
        self.again = again;
        self.again.clear();
        let timeout = if self.events.is_empty() {
            Duration::from_nanos(timeout_ns)
        } else {
            Duration::ZERO
        };
        self.ring
            .submit_and_wait(Some(timeout))
            .map_err(|e| Errno::from_io_error(&e).unwrap_or(Errno::IO))?;
        let mut done = std::mem::take(&mut self.done);
        self.ring.reap(&mut done);
        for c in done.drain(..) {
            self.on_completion(c);
        }
        self.done = done;
        Ok(self.events.len())
    }

    #[inline]
    fn event(&self, k: usize) -> Readiness {
        self.events[k]
    }

    /// Submits the turn's sends first: queued, they would otherwise wait out the nap in the
    /// submission queue, and the nap's length would be added to their latency.
    fn nap(&mut self, ns: u64) {
        self.submit();
        std::thread::sleep(Duration::from_nanos(ns));
    }

    /// A failed submit shows again at the poll's own `io_uring_enter`.
    fn submit(&mut self) {
        let _ = self.ring.submit();
    }

    fn stamps(&self) -> bool {
        self.dialer.stamps()
    }

    #[inline]
    fn received_at(&self, slot: usize) -> Option<u64> {
        self.clock.to_run(self.slots[slot].stamp)
    }

    fn has_pending(&self) -> bool {
        !self.again.is_empty()
    }

    fn sync_clock(&mut self, run_now: &dyn Fn() -> u64) {
        self.clock.sync(run_now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// One slot connected to a loopback listener, its connect finished, and the accepted peer;
    /// `None` (skipped, or a failure in CI) where io_uring is unavailable.
    fn connected_pair() -> Option<(UringIo, std::net::TcpStream)> {
        if let Err(e) = twelve_sys::uring::ring::probe() {
            twelve_testkit::skip_or_fail(format!("io_uring unavailable here ({e})"));
            return None;
        }
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let dialer = Dialer::new(l.local_addr().unwrap(), &[], 1, 0);
        let mut io = UringIo::new(dialer, 1).unwrap();
        io.connect(0).unwrap();
        let (peer, _) = l.accept().unwrap();
        // The connect's end comes as writability.
        let connected = (0..100).any(|_| {
            let n = io.poll(1_000_000_000).unwrap();
            (0..n).any(|k| io.event(k).writable)
        });
        assert!(connected, "no writability within 100 polls");
        io.finish_connect(0).unwrap();
        Some((io, peer))
    }

    /// A nap must not hold the turn's sends in the submission queue, where they would wait out
    /// the nap and add it to their latency: after `send` and `nap`, with no poll between, the
    /// server has the bytes.
    #[test]
    fn a_nap_submits_the_turns_sends_first() {
        let Some((mut io, mut peer)) = connected_pair() else {
            return;
        };
        assert_eq!(io.send(0, b"ping").unwrap(), 4);
        io.nap(1_000);
        peer.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut got = [0u8; 4];
        peer.read_exact(&mut got)
            .expect("the send went out before the nap");
        assert_eq!(&got, b"ping");
    }

    /// What a read left over (bytes here) belongs to the socket it came from: once the slot is
    /// closed and connected again, the next poll must not report the new socket readable (the
    /// dispatch would take that for its connect's end).
    #[test]
    fn a_closed_slots_leftover_read_is_not_reported_on_its_next_socket() {
        let Some((mut io, mut peer)) = connected_pair() else {
            return;
        };
        std::io::Write::write_all(&mut peer, b"ab").unwrap();
        let readable = (0..100).any(|_| {
            let n = io.poll(1_000_000_000).unwrap();
            (0..n).any(|k| io.event(k).readable)
        });
        assert!(readable, "no bytes within 100 polls");
        // A one-byte read leaves the other byte for the next poll.
        let mut one = [0u8; 1];
        assert_eq!(io.recv(0, &mut one).unwrap(), 1);
        assert!(io.has_pending());
        io.close(0);
        io.connect(0).unwrap();
        let n = io.poll(0).unwrap();
        assert!(
            !(0..n).any(|k| io.event(k).readable),
            "the old socket's leftover was reported on the new one"
        );
    }
}
