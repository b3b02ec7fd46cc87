//! `epoll_wait(2)` with a millisecond timeout, made as a raw syscall.
//!
//! rustix's `epoll::wait` switches to `epoll_pwait2` whenever any crate of the build enables
//! its `linux_5_11` feature (features unify across a workspace), and valgrind 3.19 does not
//! know that syscall: the worker's wait then fails with ENOSYS, and instruction counting with
//! callgrind (docs/kernel-facts.md) becomes impossible. Plain `epoll_wait` exists since 2.6 and
//! millisecond resolution is all a timer wheel with 50 ms ticks needs. It goes through
//! `syscall(2)` rather than glibc's `epoll_wait`, a cancellation point that in a process of
//! several threads (a server's workers beside its signal thread) turns asynchronous
//! cancellation on and off around every wait; no thread of twelve is ever cancelled
//! (<https://man7.org/linux/man-pages/man7/pthreads.7.html>, "Cancellation points").

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd};

/// A buffer of ready events, reused across waits.
pub struct Events {
    /// INVARIANT: `len <= buf.len()` and `buf[..len]` were written by the kernel.
    buf: Vec<MaybeUninit<libc::epoll_event>>,
    len: usize,
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Events").field("len", &self.len).finish()
    }
}

impl Events {
    /// Room for `n` events per wait (at least 1).
    pub fn with_capacity(n: usize) -> Self {
        let mut buf = Vec::with_capacity(n.max(1));
        buf.resize_with(n.max(1), MaybeUninit::uninit);
        Self { buf, len: 0 }
    }

    /// The events of the last wait: `(flags, data)`, flags as `EPOLLIN`-style bits.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.buf[..self.len].iter().map(|e| {
            // SAFETY: the first `len` entries were initialised by `epoll_wait` (INVARIANT).
            let e = unsafe { e.assume_init_read() };
            // Copy the fields out of the (packed on x86-64) struct before using them.
            let (events, data) = (e.events, e.u64);
            (events, data)
        })
    }
}

/// Waits for events on `epfd` for at most `timeout_ms` (-1: forever). Returns the count, also
/// available through [`Events::iter`]. EINTR is returned to the caller (who retries).
pub fn wait(epfd: BorrowedFd<'_>, events: &mut Events, timeout_ms: i32) -> io::Result<usize> {
    events.len = 0;
    let max = libc::c_int::try_from(events.buf.len()).unwrap_or(libc::c_int::MAX);
    // SAFETY: `epfd` is a live descriptor borrowed for the call; the pointer and `max` describe
    // writable memory of `max` `epoll_event`s owned by `events` for the whole call.
    let n = unsafe {
        raw_wait(
            epfd.as_raw_fd(),
            events.buf.as_mut_ptr().cast::<libc::epoll_event>(),
            max,
            timeout_ms,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    // The kernel wrote `n <= max` entries.
    events.len = n as usize;
    Ok(events.len)
}

/// `epoll_wait` as a raw syscall (`epoll_pwait` with no signal mask where the architecture
/// has no `epoll_wait`, as aarch64): -1 with `errno` set on failure.
///
/// # Safety
/// `events` must point to `max` writable `epoll_event`s.
#[inline]
unsafe fn raw_wait(
    epfd: libc::c_int,
    events: *mut libc::epoll_event,
    max: libc::c_int,
    timeout_ms: i32,
) -> libc::c_long {
    #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
    // SAFETY: the caller's contract; the arguments are epoll_wait's.
    return unsafe { libc::syscall(libc::SYS_epoll_wait, epfd, events, max, timeout_ms) };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
    // SAFETY: the caller's contract; a null mask makes `epoll_pwait` an `epoll_wait`.
    return unsafe {
        libc::syscall(
            libc::SYS_epoll_pwait,
            epfd,
            events,
            max,
            timeout_ms,
            std::ptr::null::<libc::sigset_t>(),
            0usize,
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::event::epoll;
    use std::os::fd::AsFd;

    #[test]
    fn reports_a_ready_eventfd_with_its_data() {
        let ep = epoll::create(epoll::CreateFlags::CLOEXEC).unwrap();
        let ev = rustix::event::eventfd(1, rustix::event::EventfdFlags::CLOEXEC).unwrap();
        epoll::add(
            &ep,
            &ev,
            epoll::EventData::new_u64(42),
            epoll::EventFlags::IN,
        )
        .unwrap();
        let mut events = Events::with_capacity(4);
        assert_eq!(wait(ep.as_fd(), &mut events, 1000).unwrap(), 1);
        let (flags, data) = events.iter().next().unwrap();
        assert_eq!(data, 42);
        assert_ne!(flags & libc::EPOLLIN as u32, 0);
    }

    #[test]
    fn times_out_with_nothing_ready() {
        let ep = epoll::create(epoll::CreateFlags::CLOEXEC).unwrap();
        let mut events = Events::with_capacity(4);
        assert_eq!(wait(ep.as_fd(), &mut events, 0).unwrap(), 0);
        assert_eq!(events.iter().count(), 0);
    }
}
