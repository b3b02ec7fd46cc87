//! A completion ring for one worker's event loop: io_uring with every buffer the kernel may
//! touch owned by the ring until its completion arrives.
//!
//! What the kernel can write to or read from while an operation is in flight is never
//! borrowed from the caller:
//! - a `send` takes its `Vec<u8>` by value and gives it back with the completion;
//! - a `recv` selects one of the ring's own provided buffers (a buffer ring registered with
//!   `IORING_REGISTER_PBUF_RING`); the completion hands out a [`RecvBuf`] that names it, whose
//!   bytes can be read through [`Ring::bytes`] until [`Ring::recycle`] gives it back to the
//!   kernel. An idle connection therefore holds no read buffer at all;
//! - accept, poll, cancel and close carry no user memory.
//!
//! Dropping the ring cancels everything in flight and reaps it before any buffer is freed; if
//! that cannot be confirmed, the buffers are leaked rather than freed under the kernel.
//!
//! The ring is set up `SINGLE_ISSUER | DEFER_TASKRUN` where the kernel allows (6.1+):
//! completion work then runs only inside this thread's `io_uring_enter`, never as an
//! interrupting task-work run in the middle of the event loop, so the worker must create the
//! ring on its own thread. `SUBMIT_ALL` keeps one bad entry from stopping a batch.

use io_uring::types::{BufRingEntry, CancelBuilder, SubmitArgs, Timespec};
use io_uring::{IoUring, cqueue, opcode, squeue, types};
use rustix::io::Errno;
use std::alloc::Layout;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::Duration;

/// The one buffer group of a ring.
const BGID: u16 = 0;

/// User data of [`Ring::close`]'s entries: no slot (slot indices stay far below it), so the
/// completion of a failed close is dropped.
const CLOSE_TAG: u64 = u64::MAX;

/// Identifies one submitted operation, for [`Ring::cancel`]: its slot and the slot's
/// generation, so a stale id never cancels a later operation that reuses the slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpId(u64);

/// A provided buffer the kernel filled; read it with [`Ring::bytes`], return it with
/// [`Ring::recycle`]. Not `Clone`: one handle per buffer handed out. Dropping it without
/// recycling only shrinks the pool.
#[derive(Debug, PartialEq, Eq)]
pub struct RecvBuf {
    bid: u16,
    /// Where the payload starts: after the `io_uring_recvmsg_out` header and control space of
    /// a [`Ring::recv_msg_multi`] buffer, 0 otherwise.
    start: u16,
    len: u32,
    /// The kernel's receive stamp of these bytes (CLOCK_REALTIME ns; see [`crate::stamp`]).
    stamp: Option<u64>,
}

impl RecvBuf {
    /// Bytes received into it.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// When the kernel received these bytes (CLOCK_REALTIME ns), where the receive asked for
    /// stamps and the kernel gave one.
    pub fn stamp(&self) -> Option<u64> {
        self.stamp
    }

    /// Whether it holds no byte (never the case for a completion: 0 bytes is EOF).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// What an operation produced.
#[derive(Debug)]
pub enum Outcome {
    /// A connection accepted (nonblocking, close-on-exec), or the error.
    Accept(Result<OwnedFd, Errno>),
    /// Bytes received, `Ok(None)` at EOF, or the error (`ENOBUFS`: the buffer ring was empty
    /// and a multishot receive ended; `ECANCELED`: cancelled).
    Recv(Result<Option<RecvBuf>, Errno>),
    /// Bytes sent (or the error), and the buffer back.
    Send(Result<usize, Errno>, Vec<u8>),
    /// The poll mask that became ready, or the error.
    Poll(Result<u32, Errno>),
}

/// One completion: the caller's tag, whether a multishot operation stays armed (`more`), and
/// what happened.
#[derive(Debug)]
pub struct Completion {
    /// The tag given at submission.
    pub tag: u64,
    /// A multishot operation remains armed and will complete again.
    pub more: bool,
    /// The result.
    pub outcome: Outcome,
}

enum Pending {
    Accept,
    Recv,
    /// A multishot `recvmsg`: each buffer starts with its header and control messages.
    RecvMsg,
    /// INVARIANT: the kernel may read this buffer's heap bytes until the completion arrives;
    /// it is neither dropped nor touched until then.
    Send(Vec<u8>),
    Poll,
    /// Cancellations complete too; their completions are consumed here.
    Cancel,
}

struct Slot {
    tag: u64,
    gen_: u32,
    pending: Option<Pending>,
}

/// The provided buffers: a page-aligned ring of `entries` descriptors shared with the kernel,
/// and `entries × size` bytes of buffers.
struct BufRing {
    /// INVARIANT: page-aligned, `entries` descriptors, registered with the kernel as group
    /// [`BGID`] until [`Ring`]'s drop unregisters it; never freed while registered.
    ring: NonNull<BufRingEntry>,
    ring_layout: Layout,
    /// INVARIANT: `entries × size` bytes; a buffer the kernel owns (in the ring) is never
    /// read or written through a reference, only the ones handed out as [`RecvBuf`].
    data: NonNull<u8>,
    data_layout: Layout,
    entries: u16,
    size: u32,
    /// Our copy of the tail: the next descriptor to fill.
    tail: u16,
    /// Which buffers are handed out (a check against a kernel that gave one twice).
    out: Vec<bool>,
}

impl BufRing {
    fn new(entries: u16, size: u32) -> io::Result<Self> {
        let page = rustix::param::page_size();
        let ring_layout = Layout::from_size_align(
            usize::from(entries) * std::mem::size_of::<BufRingEntry>(),
            page,
        )
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let data_layout = Layout::from_size_align(usize::from(entries) * size as usize, page)
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: both layouts have a non-zero size (entries and size are checked non-zero by
        // the caller); zeroed memory is a valid array of descriptors (a zero tail).
        let ring = NonNull::new(unsafe { std::alloc::alloc_zeroed(ring_layout) })
            .ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
        // SAFETY: as above; the buffers are only ever written by the kernel and read as bytes.
        let data = match NonNull::new(unsafe { std::alloc::alloc_zeroed(data_layout) }) {
            Some(d) => d,
            None => {
                // SAFETY: allocated just above with this layout, never registered.
                unsafe { std::alloc::dealloc(ring.as_ptr(), ring_layout) };
                return Err(io::ErrorKind::OutOfMemory.into());
            }
        };
        Ok(BufRing {
            ring: ring.cast(),
            ring_layout,
            data,
            data_layout,
            entries,
            size,
            tail: 0,
            out: vec![true; usize::from(entries)],
        })
    }

    /// Puts buffer `bid` back into the ring (not yet published: see [`BufRing::publish`]).
    fn push(&mut self, bid: u16) {
        let idx = usize::from(self.tail & (self.entries - 1));
        // SAFETY: `idx < entries`, inside the descriptor array; the kernel only reads
        // descriptors between its head and the published tail, and this one is past the
        // published tail until `publish`.
        let entry = unsafe { &mut *self.ring.as_ptr().add(idx) };
        // SAFETY: `bid < entries`, so the buffer lies inside `data`.
        let addr = unsafe {
            self.data
                .as_ptr()
                .add(usize::from(bid) * self.size as usize)
        };
        entry.set_addr(addr as u64);
        entry.set_len(self.size);
        entry.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
        self.out[usize::from(bid)] = false;
    }

    /// Makes the pushed descriptors visible to the kernel.
    fn publish(&self) {
        // SAFETY: the ring base is the first descriptor, initialised (zeroed at least); the
        // tail field overlaps its `resv` field, which the kernel reads as a u16 with acquire
        // semantics (`io_ring_head_to_buf`, io_uring/kbuf.c); aligned to 2 as part of a
        // 16-byte descriptor, so it can be viewed as an AtomicU16.
        let tail = unsafe { &*BufRingEntry::tail(self.ring.as_ptr()).cast::<AtomicU16>() };
        // Release: the descriptor writes above happen before the kernel sees the new tail.
        tail.store(self.tail, Ordering::Release);
    }
}

/// A worker's io_uring: submission of accept, multishot receive, send, poll, cancel and close, and
/// the completions, with every buffer owned as the module documentation says.
pub struct Ring {
    ring: IoUring,
    bufs: BufRing,
    /// The buffer ring is registered: its memory must outlive the registration.
    registered: bool,
    /// Set up with `DEFER_TASKRUN`.
    deferred: bool,
    /// [`Ring::close`] goes through the ring: `IORING_OP_CLOSE` and `IOSQE_CQE_SKIP_SUCCESS`
    /// (5.6 and 5.17; the multishot receive this ring needs came with 6.0).
    close_op: bool,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Operations submitted (or queued) whose final completion has not arrived.
    inflight: usize,
    /// Completions reaped but not yet returned, in order.
    cqes: Vec<cqueue::Entry>,
    /// The header every [`Ring::recv_msg_multi`] points at: no name, room for the stamp's
    /// control message. INVARIANT: never moved or changed while the ring lives (the kernel
    /// reads it when it arms each receive).
    msg: Box<MsgHdr>,
}

/// A `msghdr` the ring owns; only its lengths matter to a multishot `recvmsg` (its pointers
/// stay null: the kernel writes into provided buffers).
struct MsgHdr(libc::msghdr);

/// The bytes a multishot `recvmsg` puts before the payload in each buffer: the
/// `io_uring_recvmsg_out` header (4 × u32), no name, then the control space.
const RECVMSG_HEAD: usize = 16 + crate::stamp::CONTROL_SPACE;

impl std::fmt::Debug for Ring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring")
            .field("inflight", &self.inflight)
            .field("deferred_taskrun", &self.deferred)
            .finish()
    }
}

impl Ring {
    /// A ring with `entries` submission slots and `bufs` provided receive buffers of
    /// `buf_size` bytes each (`bufs` a power of two, at most 32768).
    ///
    /// Fails where io_uring is unavailable (ENOSYS; EPERM under a seccomp profile or with
    /// `kernel.io_uring_disabled`) or lacks what the event loop needs: multishot receive with
    /// a buffer ring (6.0), cancellation by fd (5.19), the extended wait argument (5.11).
    pub fn new(entries: u32, bufs: u16, buf_size: u32) -> io::Result<Self> {
        if !bufs.is_power_of_two() || bufs > 32768 || buf_size == 0 {
            return Err(io::ErrorKind::InvalidInput.into());
        }
        let cq = entries.saturating_mul(4);
        let mut deferred = true;
        let ring = IoUring::builder()
            .setup_submit_all()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_cqsize(cq)
            .build(entries)
            .or_else(|e| {
                // DEFER_TASKRUN came with 6.1: fall back to cooperative task work.
                if e.raw_os_error() != Some(libc::EINVAL) {
                    return Err(e);
                }
                deferred = false;
                IoUring::builder()
                    .setup_submit_all()
                    .setup_coop_taskrun()
                    .setup_cqsize(cq)
                    .build(entries)
            })?;
        if !ring.params().is_feature_ext_arg() || !ring.params().is_feature_nodrop() {
            return Err(io::ErrorKind::Unsupported.into());
        }
        let mut probe = io_uring::Probe::new();
        ring.submitter().register_probe(&mut probe)?;
        let needed = [
            opcode::AcceptMulti::CODE,
            opcode::RecvMulti::CODE,
            // IORING_OP_RECVMSG (5.3); its multishot flag came with 6.0, as `RecvMulti`'s did.
            opcode::RecvMsgMulti::CODE,
            opcode::Send::CODE,
            opcode::PollAdd::CODE,
            opcode::AsyncCancel2::CODE,
        ];
        if !needed.iter().all(|&op| probe.is_supported(op)) {
            return Err(io::ErrorKind::Unsupported.into());
        }
        let close_op = ring.params().is_feature_skip_cqe_on_success()
            && probe.is_supported(opcode::Close::CODE);
        let mut me = Ring {
            ring,
            bufs: BufRing::new(bufs, buf_size)?,
            registered: false,
            deferred,
            close_op,
            slots: Vec::new(),
            free: Vec::new(),
            inflight: 0,
            cqes: Vec::new(),
            msg: Box::new(MsgHdr({
                // SAFETY: an all-zero msghdr is a valid value (null pointers, zero lengths).
                let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
                m.msg_controllen = crate::stamp::CONTROL_SPACE;
                m
            })),
        };
        // SAFETY: the descriptor array is page-aligned with `bufs` entries and stays allocated
        // until `Drop for Ring` has unregistered it (INVARIANT on `BufRing::ring`).
        unsafe {
            me.ring.submitter().register_buf_ring_with_flags(
                me.bufs.ring.as_ptr() as u64,
                bufs,
                BGID,
                0,
            )
        }?;
        me.registered = true;
        for bid in 0..bufs {
            me.bufs.push(bid);
        }
        me.bufs.publish();
        // The registered ring fd saves an fd lookup (fdget) per io_uring_enter; optional.
        let _ = me.ring.submitter().register_ring_fd();
        Ok(me)
    }

    /// Whether completion work is deferred to this thread's waits (`DEFER_TASKRUN`).
    pub fn deferred_taskrun(&self) -> bool {
        self.deferred
    }

    /// Operations whose final completion has not arrived.
    pub fn inflight(&self) -> usize {
        self.inflight
    }

    fn slot(&mut self, tag: u64, pending: Pending) -> u64 {
        let idx = match self.free.pop() {
            Some(i) => i as usize,
            None => {
                self.slots.push(Slot {
                    tag: 0,
                    gen_: 0,
                    pending: None,
                });
                self.slots.len() - 1
            }
        };
        let slot = &mut self.slots[idx];
        slot.tag = tag;
        slot.pending = Some(pending);
        self.inflight += 1;
        (u64::from(slot.gen_) << 32) | idx as u64
    }

    /// Queues one entry, submitting what is queued first if the queue is full.
    ///
    /// # Safety
    ///
    /// Whatever memory `entry` points to must stay valid until its completion (owned by a
    /// [`Pending`] of its slot, or by the ring itself).
    unsafe fn push(&mut self, entry: squeue::Entry) {
        loop {
            // SAFETY: the caller's promise covers the entry's pointers.
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                return;
            }
            // Full: hand the queue to the kernel. EBUSY (CQ overflow backlog) clears once
            // completions are reaped, which this does by flushing them into `cqes`.
            if let Err(e) = self.ring.submit() {
                if e.raw_os_error() == Some(libc::EBUSY) {
                    self.reap_into_backlog();
                } else if e.raw_os_error() != Some(libc::EINTR) {
                    eprintln!("twelve-sys: io_uring_enter failed while submitting: {e}");
                    std::process::abort();
                }
            }
        }
    }

    fn reap_into_backlog(&mut self) {
        self.cqes.extend(self.ring.completion());
    }

    /// Arms a multishot accept on `listener`: one completion per connection, new sockets
    /// nonblocking and close-on-exec.
    pub fn accept_multi(&mut self, listener: BorrowedFd<'_>, tag: u64) -> OpId {
        let ud = self.slot(tag, Pending::Accept);
        let entry = opcode::AcceptMulti::new(types::Fd(listener.as_raw_fd()))
            .flags(libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC)
            .build()
            .user_data(ud);
        // SAFETY: a multishot accept carries no user memory (no address buffer).
        unsafe { self.push(entry) };
        OpId(ud)
    }

    /// Arms a multishot receive on `fd` into the provided buffers.
    pub fn recv_multi(&mut self, fd: BorrowedFd<'_>, tag: u64) -> OpId {
        let ud = self.slot(tag, Pending::Recv);
        let entry = opcode::RecvMulti::new(types::Fd(fd.as_raw_fd()), BGID)
            .build()
            .user_data(ud);
        // SAFETY: the kernel writes only into buffers of the ring's buffer group, which the
        // ring owns until drop (INVARIANT on `BufRing`).
        unsafe { self.push(entry) };
        OpId(ud)
    }

    /// Arms a multishot `recvmsg` on `fd` into the provided buffers: as [`Ring::recv_multi`],
    /// and each [`RecvBuf`] also carries the kernel's receive stamp when the socket has them
    /// on ([`crate::stamp::enable`]). Needs buffers larger than the 80 bytes of header and
    /// control space each one then starts with.
    ///
    /// # Panics
    /// If the ring's buffers are 80 bytes or smaller: every receive would then fail or read
    /// as EOF.
    pub fn recv_msg_multi(&mut self, fd: BorrowedFd<'_>, tag: u64) -> OpId {
        assert!(
            self.bufs.size as usize > RECVMSG_HEAD,
            "recvmsg buffers must be larger than their {RECVMSG_HEAD}-byte head"
        );
        let ud = self.slot(tag, Pending::RecvMsg);
        let msg = std::ptr::from_ref(&self.msg.0);
        let entry = opcode::RecvMsgMulti::new(types::Fd(fd.as_raw_fd()), msg, BGID)
            .build()
            .user_data(ud);
        // SAFETY: the kernel writes only into buffers of the ring's buffer group, which the
        // ring owns until drop (INVARIANT on `BufRing`), and reads the header, which lives
        // unchanged as long as the ring (INVARIANT on `Ring::msg`).
        unsafe { self.push(entry) };
        OpId(ud)
    }

    /// Sends `buf[start..]` on `fd` (`MSG_NOSIGNAL`); the buffer comes back with the
    /// completion. Like `send(2)` on a blocking socket, a full socket buffer makes it wait in
    /// the kernel (io_uring arms a poll), and it may complete short.
    pub fn send(&mut self, fd: BorrowedFd<'_>, buf: Vec<u8>, start: usize, tag: u64) -> OpId {
        let bytes = buf.get(start..).unwrap_or(&[]);
        let (ptr, len) = (
            bytes.as_ptr(),
            u32::try_from(bytes.len()).unwrap_or(u32::MAX),
        );
        let ud = self.slot(tag, Pending::Send(buf));
        let entry = opcode::Send::new(types::Fd(fd.as_raw_fd()), ptr, len)
            .flags(libc::MSG_NOSIGNAL)
            .build()
            .user_data(ud);
        // SAFETY: `ptr..ptr+len` lies in the heap allocation of the Vec now owned by the
        // slot's `Pending::Send`; moving a Vec does not move its heap bytes, and the slot
        // keeps it unchanged until the completion (INVARIANT on `Pending::Send`).
        unsafe { self.push(entry) };
        OpId(ud)
    }

    /// Polls `fd` for `events` (`libc::POLLIN`, ...), once or multishot.
    pub fn poll(&mut self, fd: BorrowedFd<'_>, events: u32, multi: bool, tag: u64) -> OpId {
        let ud = self.slot(tag, Pending::Poll);
        let entry = opcode::PollAdd::new(types::Fd(fd.as_raw_fd()), events)
            .multi(multi)
            .build()
            .user_data(ud);
        // SAFETY: a poll carries no user memory.
        unsafe { self.push(entry) };
        OpId(ud)
    }

    /// Cancels one operation; it completes (with `ECANCELED`, or its own result if it won the
    /// race). A finished operation's id cancels nothing.
    pub fn cancel(&mut self, op: OpId) {
        let ud = self.slot(0, Pending::Cancel);
        let entry = opcode::AsyncCancel2::new(CancelBuilder::user_data(op.0))
            .build()
            .user_data(ud);
        // SAFETY: a cancellation carries no user memory.
        unsafe { self.push(entry) };
    }

    /// Cancels every operation on `fd`.
    pub fn cancel_fd(&mut self, fd: BorrowedFd<'_>) {
        let ud = self.slot(0, Pending::Cancel);
        let entry = opcode::AsyncCancel2::new(CancelBuilder::fd(types::Fd(fd.as_raw_fd())).all())
            .build()
            .user_data(ud);
        // SAFETY: a cancellation carries no user memory.
        unsafe { self.push(entry) };
    }

    /// Closes `fd` through the ring: the close reaches the kernel with the next submission
    /// instead of costing a `close(2)` of its own, one syscall per connection for a server
    /// whose clients reconnect. The descriptor number stays taken until the kernel has closed
    /// it, so no socket accepted meanwhile gets it. Operations already submitted on `fd` hold
    /// their own reference to the socket; the caller gives it up only once they completed (a
    /// close does not cancel them). The completion is consumed here; a close cannot fail in a
    /// way the caller could act on (the descriptor is gone either way, close(2)).
    ///
    /// The entry asks for no completion on success (`IOSQE_CQE_SKIP_SUCCESS`): a completion
    /// would end the turn's wait at once for nothing, an extra `io_uring_enter` per close. A
    /// failed close (EBADF: a bug) posts one with a tag of its own, which [`Ring::reap`]
    /// drops. Where the kernel cannot skip completions this is a plain `close(2)`.
    pub fn close(&mut self, fd: OwnedFd) {
        if !self.close_op {
            return drop(fd);
        }
        let entry = opcode::Close::new(types::Fd(fd.into_raw_fd()))
            .build()
            .flags(squeue::Flags::SKIP_SUCCESS)
            .user_data(CLOSE_TAG);
        // SAFETY: a close carries no user memory; the descriptor was owned and is handed to
        // the kernel, which closes it (nothing here uses the number again).
        unsafe { self.push(entry) };
    }

    /// Submits what is queued without waiting for any completion (before a nap of
    /// `--coalesce`, so that the turn's sends leave first).
    pub fn submit(&mut self) -> io::Result<()> {
        // Nothing queued, nothing to enter for: without GETEVENTS the call would do nothing.
        if self.ring.submission().is_empty() {
            return Ok(());
        }
        self.enter(0, None)
    }

    /// Submits what is queued and waits for at least one completion, at most `timeout`
    /// (`None`: no limit): the event loop's one `io_uring_enter` per turn. A timeout, a
    /// signal (a profiler attaching) and `EBUSY` return `Ok` with nothing new.
    pub fn submit_and_wait(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        if !self.cqes.is_empty() {
            // Completions are already waiting: submit without blocking.
            return self.enter(0, None);
        }
        self.enter(1, timeout)
    }

    fn enter(&mut self, want: usize, timeout: Option<Duration>) -> io::Result<()> {
        let result = match timeout {
            Some(t) => {
                let ts = Timespec::from(t);
                let args = SubmitArgs::new().timespec(&ts);
                self.ring.submitter().submit_with_args(want, &args)
            }
            None => self.ring.submitter().submit_and_wait(want),
        };
        match result {
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME | libc::EINTR | libc::EBUSY)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Moves every completion available into `out`, in order.
    pub fn reap(&mut self, out: &mut Vec<Completion>) {
        self.reap_into_backlog();
        let cqes = std::mem::take(&mut self.cqes);
        for cqe in &cqes {
            if let Some(c) = self.complete(cqe) {
                out.push(c);
            }
        }
        self.cqes = cqes;
        self.cqes.clear();
    }

    fn complete(&mut self, cqe: &cqueue::Entry) -> Option<Completion> {
        let ud = cqe.user_data();
        if ud == CLOSE_TAG {
            return None;
        }
        let idx = (ud & 0xffff_ffff) as usize;
        let more = cqueue::more(cqe.flags());
        let slot = self.slots.get_mut(idx)?;
        if slot.gen_ != (ud >> 32) as u32 || slot.pending.is_none() {
            return None;
        }
        let tag = slot.tag;
        let res = cqe.result();
        let err = || Errno::from_raw_os_error(-res);
        let kind = if more {
            match &slot.pending {
                Some(Pending::Accept) => Pending::Accept,
                Some(Pending::Recv) => Pending::Recv,
                Some(Pending::RecvMsg) => Pending::RecvMsg,
                Some(Pending::Poll) => Pending::Poll,
                // Only multishot operations post more than one completion.
                _ => Pending::Cancel,
            }
        } else {
            let p = slot.pending.take().expect("checked above");
            slot.gen_ = slot.gen_.wrapping_add(1);
            self.free.push(idx as u32);
            self.inflight -= 1;
            p
        };
        let outcome = match kind {
            Pending::Cancel => return None,
            Pending::Accept if res < 0 => Outcome::Accept(Err(err())),
            // SAFETY: a successful accept completion's result is a new descriptor that nothing
            // else owns (no fixed-file slot was requested).
            Pending::Accept => Outcome::Accept(Ok(unsafe { OwnedFd::from_raw_fd(res) })),
            Pending::Recv => Outcome::Recv(self.received(res, cqe.flags(), false)),
            Pending::RecvMsg => Outcome::Recv(self.received(res, cqe.flags(), true)),
            Pending::Send(buf) if res < 0 => Outcome::Send(Err(err()), buf),
            Pending::Send(buf) => Outcome::Send(Ok(res as usize), buf),
            Pending::Poll if res < 0 => Outcome::Poll(Err(err())),
            Pending::Poll => Outcome::Poll(Ok(res as u32)),
        };
        Some(Completion { tag, more, outcome })
    }

    fn received(&mut self, res: i32, flags: u32, msg: bool) -> Result<Option<RecvBuf>, Errno> {
        let buf = cqueue::buffer_select(flags);
        if res < 0 {
            return Err(Errno::from_raw_os_error(-res));
        }
        let Some(bid) = buf else {
            // EOF takes no buffer.
            return Ok(None);
        };
        let out = self.bufs.out.get_mut(usize::from(bid));
        if out.as_deref() != Some(&false) || res as u32 > self.bufs.size {
            // The kernel handed out a buffer it does not have: a kernel bug; reading it
            // could race with the kernel's writes.
            eprintln!("twelve-sys: io_uring returned an invalid buffer id {bid}");
            std::process::abort();
        }
        if let Some(o) = out {
            *o = true;
        }
        if res == 0 {
            // Not expected (0 is EOF, which selects no buffer): give it straight back.
            self.bufs.push(bid);
            self.bufs.publish();
            return Ok(None);
        }
        let mut buf = RecvBuf {
            bid,
            start: 0,
            len: res as u32,
            stamp: None,
        };
        if msg {
            // The buffer is `io_uring_recvmsg_out` (namelen, controllen, payloadlen, flags),
            // the control space, then the payload (io_uring_prep_recvmsg_multishot(3)).
            let head = self.bytes(&buf);
            if head.len() < RECVMSG_HEAD {
                eprintln!("twelve-sys: io_uring recvmsg buffer without its header");
                std::process::abort();
            }
            let word =
                |k: usize| u32::from_ne_bytes([head[k], head[k + 1], head[k + 2], head[k + 3]]);
            // The control space holds the one message asked for; were it cut (MSG_CTRUNC in
            // the header's flags), `parse` finds no whole stamp and the read time stands in.
            let control = (word(4) as usize).min(crate::stamp::CONTROL_SPACE);
            buf.stamp = crate::stamp::parse(&head[16..16 + control]);
            let payload = word(8) as usize;
            buf.start = RECVMSG_HEAD as u16;
            buf.len = (payload as u32).min(res as u32 - RECVMSG_HEAD as u32);
            if buf.len == 0 {
                // EOF on a multishot recvmsg still takes a buffer with an empty payload.
                self.bufs.push(bid);
                self.bufs.publish();
                return Ok(None);
            }
        }
        Ok(Some(buf))
    }

    /// The bytes of a received buffer.
    pub fn bytes(&self, buf: &RecvBuf) -> &[u8] {
        let start = usize::from(buf.bid) * self.bufs.size as usize + usize::from(buf.start);
        // SAFETY: `buf` was handed out by `received`, which checked `bid < entries` and
        // `start + len <= size` (the completion's length, at most `size`, covers both); the
        // kernel does not write to a handed-out buffer until it is recycled, which consumes the
        // `RecvBuf` and needs `&mut self`, so this borrow ends first. The kernel wrote these
        // `len` bytes before posting the completion.
        unsafe { std::slice::from_raw_parts(self.bufs.data.as_ptr().add(start), buf.len()) }
    }

    /// Gives a received buffer back to the kernel.
    pub fn recycle(&mut self, buf: RecvBuf) {
        self.bufs.push(buf.bid);
        self.bufs.publish();
    }

    /// Cancels everything and waits until nothing is in flight; `false` if that could not be
    /// confirmed.
    fn quiesce(&mut self) -> bool {
        if self.inflight == 0 {
            return true;
        }
        let ud = self.slot(0, Pending::Cancel);
        let entry = opcode::AsyncCancel2::new(CancelBuilder::any())
            .build()
            .user_data(ud);
        // SAFETY: a cancellation carries no user memory.
        unsafe { self.push(entry) };
        let mut out = Vec::new();
        for _ in 0..1000 {
            if self.enter(1, Some(Duration::from_millis(10))).is_err() {
                return false;
            }
            self.reap(&mut out);
            for c in out.drain(..) {
                if let Outcome::Recv(Ok(Some(b))) = c.outcome {
                    self.recycle(b);
                }
            }
            if self.inflight == 0 {
                return true;
            }
        }
        false
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        let unregistered = !self.registered
            || (self.quiesce() && self.ring.submitter().unregister_buf_ring(BGID).is_ok());
        if !unregistered {
            // The kernel may still use the buffers or descriptors: leak them.
            return;
        }
        // SAFETY: allocated in `BufRing::new` with these layouts; never registered, or
        // unregistered above with nothing in flight, so the kernel holds no pointer into them.
        unsafe {
            std::alloc::dealloc(self.bufs.ring.as_ptr().cast(), self.bufs.ring_layout);
            std::alloc::dealloc(self.bufs.data.as_ptr(), self.bufs.data_layout);
        }
    }
}

/// Whether io_uring can run the event loop here, with the reason when it cannot.
pub fn probe() -> io::Result<()> {
    Ring::new(8, 1, 64).map(drop)
}

#[cfg(test)]
mod tests;
