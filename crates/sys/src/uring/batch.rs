//! Batched `recv` and `send` over many sockets with one `io_uring_enter(2)` per batch.
//!
//! An epoll worker that finds N sockets ready makes N `recv` and N `send` calls, and on this
//! kind of machine each syscall's entry and exit is a large share of a small request's cost
//! (docs/kernel-facts.md, "What a request costs here"). [`Batch`] hands the N operations to the
//! kernel at once and returns when every one of them has completed: the calls stay
//! synchronous, only the user/kernel crossings are shared.
//!
//! Every operation carries `MSG_DONTWAIT`, which makes io_uring fail it with `EAGAIN` at once
//! instead of arming a poll and completing it later (`io_recvmsg_prep`/`io_sendmsg_prep` set
//! `REQ_F_NOWAIT`, and `io_queue_async` then fails the request, io_uring/net.c and
//! io_uring/io_uring.c): a batch never waits for a peer. Correctness does not depend on it
//! either way: the buffers belong to the batch until every completion has been reaped.

use io_uring::{IoUring, opcode, types};
use rustix::io::Errno;
use std::io;
use std::os::fd::RawFd;

/// One operation of a batch: `recv` into `buf`'s spare capacity (its length grows by the count
/// received), or `send` of `buf[start..]`. The batch owns the buffer while it runs.
#[derive(Debug)]
pub struct Op {
    /// The socket. An fd that is not open fails the operation with `EBADF`; it cannot touch
    /// memory other than `buf`.
    pub fd: RawFd,
    /// Receive into the spare capacity / send from `start`.
    pub buf: Vec<u8>,
    /// `send` only: the first byte to send.
    pub start: usize,
    /// Bytes moved, or the error (`EAGAIN` when the socket was not ready).
    pub result: Result<usize, Errno>,
}

impl Op {
    /// An operation on `fd` with `buf`, not yet run.
    pub fn new(fd: RawFd, buf: Vec<u8>, start: usize) -> Self {
        Op {
            fd,
            buf,
            start,
            result: Ok(0),
        }
    }
}

/// An io_uring used only for synchronous batches. Create one per thread.
pub struct Batch {
    ring: IoUring,
}

impl std::fmt::Debug for Batch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch")
            .field("entries", &self.entries())
            .finish()
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Recv,
    Send,
}

impl Batch {
    /// A ring with room for `entries` operations per `io_uring_enter` (bigger batches are
    /// split). Fails where io_uring is unavailable (ENOSYS, or EPERM under a seccomp profile
    /// or with `kernel.io_uring_disabled`); the caller then makes plain syscalls.
    pub fn new(entries: u32) -> io::Result<Self> {
        // SUBMIT_ALL: one bad entry does not stop the submission of the rest, so every entry
        // pushed is consumed by the kernel and gets a completion. COOP_TASKRUN: no IPI to
        // interrupt this thread for completion work; it runs on the next enter anyway.
        let ring = IoUring::builder()
            .setup_submit_all()
            .setup_coop_taskrun()
            .setup_single_issuer()
            .build(entries.max(1))?;
        Ok(Batch { ring })
    }

    /// Operations per `io_uring_enter`.
    pub fn entries(&self) -> usize {
        self.ring.params().sq_entries() as usize
    }

    /// Runs `recv(fd, spare capacity of buf, MSG_DONTWAIT)` for every op and extends each
    /// buffer by the count received.
    pub fn recv(&mut self, ops: &mut [Op]) {
        self.run(ops, Kind::Recv);
    }

    /// Runs `send(fd, &buf[start..], MSG_DONTWAIT | MSG_NOSIGNAL)` for every op.
    pub fn send(&mut self, ops: &mut [Op]) {
        self.run(ops, Kind::Send);
    }

    fn run(&mut self, ops: &mut [Op], kind: Kind) {
        let per_enter = self.entries();
        for chunk in ops.chunks_mut(per_enter) {
            self.run_chunk(chunk, kind);
        }
    }

    /// Pushes one entry per op (at most the ring's size), submits them, and reaps exactly as
    /// many completions before returning.
    fn run_chunk(&mut self, ops: &mut [Op], kind: Kind) {
        let mut pushed = 0;
        {
            let mut sq = self.ring.submission();
            for (i, op) in ops.iter_mut().enumerate() {
                let entry = match kind {
                    Kind::Recv => {
                        let spare = op.buf.spare_capacity_mut();
                        let room = u32::try_from(spare.len()).unwrap_or(u32::MAX);
                        opcode::Recv::new(types::Fd(op.fd), spare.as_mut_ptr().cast(), room)
                            .flags(libc::MSG_DONTWAIT)
                            .build()
                    }
                    Kind::Send => {
                        let bytes = op.buf.get(op.start..).unwrap_or(&[]);
                        let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
                        opcode::Send::new(types::Fd(op.fd), bytes.as_ptr(), len)
                            .flags(libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL)
                            .build()
                    }
                }
                .user_data(i as u64);
                // SAFETY: the entry points into `op.buf` (its spare capacity for a recv, its
                // initialised bytes for a send), which `ops` borrows mutably for this whole
                // call and nobody moves or frees: every pushed entry's completion is reaped
                // below before this function returns, so the kernel never touches the memory
                // after the borrow ends. The queue has room: `ops.len() <= entries`, and the
                // previous batch left it empty.
                if unsafe { sq.push(&entry) }.is_err() {
                    break;
                }
                pushed += 1;
            }
        }
        for op in &mut ops[pushed..] {
            // Cannot happen (the chunk fits the queue); fail the op rather than lose it.
            op.result = Err(Errno::AGAIN);
        }
        let mut reaped = 0;
        while reaped < pushed {
            match self.ring.submit_and_wait(pushed - reaped) {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)
                    ) => {}
                Err(e) => {
                    // The kernel may still hold pointers into `ops`' buffers, which the caller
                    // gets back on return: returning would be unsound. Only a bug gets here.
                    eprintln!("twelve-sys: io_uring_enter failed mid-batch: {e}");
                    std::process::abort();
                }
            }
            for cqe in self.ring.completion() {
                let Some(op) = usize::try_from(cqe.user_data())
                    .ok()
                    .and_then(|i| ops.get_mut(i))
                else {
                    continue;
                };
                reaped += 1;
                let res = cqe.result();
                op.result = if res < 0 {
                    Err(Errno::from_raw_os_error(-res))
                } else {
                    let n = res as usize;
                    if let Kind::Recv = kind {
                        let len = op.buf.len();
                        // SAFETY: the kernel wrote `n` bytes into the spare capacity starting
                        // at `len` (a recv never reports more than the length it was given,
                        // which was the spare capacity), so `len + n <= capacity` and those
                        // bytes are initialised.
                        unsafe { op.buf.set_len(len + n.min(op.buf.capacity() - len)) };
                    }
                    Ok(n)
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    /// A ring, or `None` (with the reason printed; a failure in CI) where io_uring is unavailable.
    fn ring() -> Option<Batch> {
        match Batch::new(4) {
            Ok(b) => Some(b),
            Err(e) => {
                twelve_testkit::skip_or_fail(format!("io_uring unavailable here: {e}"));
                None
            }
        }
    }

    fn pair() -> (UnixStream, UnixStream) {
        let (a, b) = UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        b.set_nonblocking(true).unwrap();
        (a, b)
    }

    #[test]
    fn recv_fills_each_buffer_and_an_empty_socket_says_eagain() {
        let Some(mut batch) = ring() else { return };
        let (mut a1, b1) = pair();
        let (_a2, b2) = pair();
        a1.write_all(b"hello").unwrap();
        let mut buf = Vec::with_capacity(64);
        buf.extend_from_slice(b">");
        let mut ops = vec![
            Op::new(b1.as_raw_fd(), buf, 0),
            Op::new(b2.as_raw_fd(), Vec::with_capacity(64), 0),
        ];
        batch.recv(&mut ops);
        assert_eq!(ops[0].result, Ok(5));
        assert_eq!(ops[0].buf, b">hello");
        assert_eq!(ops[1].result, Err(Errno::AGAIN));
        assert!(ops[1].buf.is_empty());
    }

    #[test]
    fn recv_reports_eof_as_zero() {
        let Some(mut batch) = ring() else { return };
        let (a, b) = pair();
        drop(a);
        let mut ops = vec![Op::new(b.as_raw_fd(), Vec::with_capacity(8), 0)];
        batch.recv(&mut ops);
        assert_eq!(ops[0].result, Ok(0));
    }

    #[test]
    fn send_starts_at_start_and_a_closed_peer_is_an_error_not_a_signal() {
        let Some(mut batch) = ring() else { return };
        let (a1, mut b1) = pair();
        let (a2, b2) = pair();
        drop(b2);
        let mut ops = vec![
            Op::new(a1.as_raw_fd(), b"xxpayload".to_vec(), 2),
            Op::new(a2.as_raw_fd(), b"lost".to_vec(), 0),
        ];
        batch.send(&mut ops);
        assert_eq!(ops[0].result, Ok(7));
        let mut got = [0u8; 16];
        let n = b1.read(&mut got).unwrap();
        assert_eq!(&got[..n], b"payload");
        assert_eq!(ops[1].result, Err(Errno::PIPE));
    }

    #[test]
    fn more_ops_than_entries_are_split_into_several_enters() {
        let Some(mut batch) = ring() else { return };
        let pairs: Vec<_> = (0..10).map(|_| pair()).collect();
        for (i, (a, _)) in pairs.iter().enumerate() {
            (&*a).write_all(format!("m{i}").as_bytes()).unwrap();
        }
        let mut ops: Vec<Op> = pairs
            .iter()
            .map(|(_, b)| Op::new(b.as_raw_fd(), Vec::with_capacity(16), 0))
            .collect();
        batch.recv(&mut ops);
        for (i, op) in ops.iter().enumerate() {
            assert_eq!(op.buf, format!("m{i}").as_bytes(), "op {i}");
        }
    }

    #[test]
    fn a_bad_fd_fails_only_its_own_op() {
        let Some(mut batch) = ring() else { return };
        let (mut a, b) = pair();
        a.write_all(b"ok").unwrap();
        let mut ops = vec![
            Op::new(-1, Vec::with_capacity(8), 0),
            Op::new(b.as_raw_fd(), Vec::with_capacity(8), 0),
        ];
        batch.recv(&mut ops);
        assert_eq!(ops[0].result, Err(Errno::BADF));
        assert_eq!(ops[1].buf, b"ok");
    }
}
