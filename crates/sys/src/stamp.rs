//! Kernel receive timestamps: when the kernel took a socket's bytes in, not when a reader
//! got around to reading them.
//!
//! With `SO_TIMESTAMPNS` set, the kernel stamps each packet on its way into the local receive
//! path (`net_timestamp_check`), and a TCP `recvmsg` reports the stamp of the newest skb it read
//! as an `SCM_TIMESTAMPNS` control message (`tcp_recv_timestamp`, net/ipv4/tcp.c). On loopback
//! that happens within the sender's `send` or the softirq it raises, before the bytes are
//! readable: the stamp is the moment the response arrived, whenever it is read. A load generator
//! that reads late (after a nap, or behind a busy loop) can still book each response at that
//! moment (this module's tests check the order: the send's start, the stamp, the read's end).
//!
//! The stamp is CLOCK_REALTIME (socket(7)): [`realtime_ns`] lets a caller map it onto its own
//! monotonic clock.
//!
//! Enabling it on any socket turns on the kernel's global `netstamp_needed_key`, after which
//! every received packet of the host pays one `ktime_get_real()`.
use rustix::fd::{AsRawFd, BorrowedFd};
use rustix::io::Errno;
use std::io;

/// Room for the one control message a stamped read carries: `CMSG_SPACE(16)` is 32 on 64-bit
/// Linux; twice that leaves room should another option add its own message.
pub const CONTROL_SPACE: usize = 64;

/// `struct cmsghdr` on 64-bit Linux: `cmsg_len` (a `size_t`), `cmsg_level`, `cmsg_type`. The
/// parser reads that layout byte by byte; this build-time check keeps it honest.
const CMSG_HEADER: usize = 16;
const _: () = assert!(size_of::<libc::cmsghdr>() == CMSG_HEADER);

/// Turns on `SO_TIMESTAMPNS`: each read of this socket may then carry its receive stamp.
pub fn enable(fd: BorrowedFd<'_>) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: `fd` is a live descriptor borrowed for the call, and SO_TIMESTAMPNS takes a
    // `c_int` flag (socket(7)); `on` is one, and the length passed is its size.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            std::ptr::from_ref(&on).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `recv(2)` that also returns the kernel's receive stamp (CLOCK_REALTIME ns) of the newest byte
/// read, when the socket has [`enable`]d stamps and the kernel sent one. `Ok((0, _))` is EOF.
pub fn recv(fd: BorrowedFd<'_>, buf: &mut [u8]) -> Result<(usize, Option<u64>), Errno> {
    // u64s: a `cmsghdr` must be aligned like a `size_t`.
    let mut control = [0u64; CONTROL_SPACE / 8];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: an all-zero msghdr is a valid value (null name, no iovecs, no control).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = CONTROL_SPACE;
    // SAFETY: `fd` is live for the call; `msg` points at one iovec covering exactly `buf`, and
    // at `control`'s CONTROL_SPACE bytes, all of which outlive the call and are writable.
    let n = unsafe { libc::recvmsg(fd.as_raw_fd(), &mut msg, libc::MSG_DONTWAIT) };
    if n < 0 {
        return Err(Errno::from_io_error(&io::Error::last_os_error()).unwrap_or(Errno::IO));
    }
    // CONTROL_SPACE holds the one message asked for; were it cut (MSG_CTRUNC), `parse` finds
    // no whole stamp and the caller's read time stands in.
    let len = msg.msg_controllen.min(CONTROL_SPACE);
    // SAFETY: `control` is CONTROL_SPACE initialised bytes (zeroed above, then written by the
    // kernel); viewing u64s as bytes is always valid, and `len` is within them.
    let bytes = unsafe { std::slice::from_raw_parts(control.as_ptr().cast::<u8>(), len) };
    Ok((n as usize, parse(bytes)))
}

/// The `SCM_TIMESTAMPNS` stamp among the control messages in `control` (as the kernel lays
/// them out in a `msghdr`'s control buffer, or after an io_uring `recvmsg_out` header), in ns;
/// `None` when there is none or the buffer is cut short.
pub fn parse(control: &[u8]) -> Option<u64> {
    let mut at = 0;
    while control.len() >= at + CMSG_HEADER {
        let word = |k: usize| {
            control[at + k..at + k + 4]
                .try_into()
                .map(i32::from_ne_bytes)
        };
        let len = usize::try_from(u64::from_ne_bytes(control[at..at + 8].try_into().ok()?)).ok()?;
        let (level, kind) = (word(8).ok()?, word(12).ok()?);
        let end = at.checked_add(len)?;
        if len < CMSG_HEADER || control.len() < end {
            return None;
        }
        if level == libc::SOL_SOCKET && kind == libc::SCM_TIMESTAMPNS && len >= CMSG_HEADER + 16 {
            let d = at + CMSG_HEADER;
            let sec = i64::from_ne_bytes(control[d..d + 8].try_into().ok()?);
            let nsec = i64::from_ne_bytes(control[d + 8..d + 16].try_into().ok()?);
            let sec = u64::try_from(sec).ok()?;
            let nsec = u64::try_from(nsec).ok()?;
            return sec.checked_mul(1_000_000_000)?.checked_add(nsec);
        }
        // CMSG_NXTHDR: the next header starts at the next `size_t` boundary.
        at = at.checked_add(len.div_ceil(8) * 8)?;
    }
    None
}

/// CLOCK_REALTIME now, in ns: the clock the receive stamps are in.
pub fn realtime_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
    u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(t.tv_nsec).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One control message as the kernel writes it, data padded to 8 bytes.
    fn cmsg(level: i32, kind: i32, data: &[u8]) -> Vec<u8> {
        let mut v = ((CMSG_HEADER + data.len()) as u64).to_ne_bytes().to_vec();
        v.extend_from_slice(&level.to_ne_bytes());
        v.extend_from_slice(&kind.to_ne_bytes());
        v.extend_from_slice(data);
        v.resize(v.len().div_ceil(8) * 8, 0);
        v
    }

    fn timespec(sec: i64, nsec: i64) -> Vec<u8> {
        [sec.to_ne_bytes(), nsec.to_ne_bytes()].concat()
    }

    #[test]
    fn parse_finds_the_stamp_or_says_none() {
        let stamp = cmsg(libc::SOL_SOCKET, libc::SCM_TIMESTAMPNS, &timespec(3, 7));
        let other = cmsg(libc::SOL_IP, 8, &[1, 2, 3, 4]);
        let cases: &[(&str, Vec<u8>, Option<u64>)] = &[
            ("alone", stamp.clone(), Some(3_000_000_007)),
            (
                "after another message",
                [other.clone(), stamp.clone()].concat(),
                Some(3_000_000_007),
            ),
            ("only another message", other.clone(), None),
            ("empty", Vec::new(), None),
            ("cut short", stamp[..stamp.len() - 4].to_vec(), None),
            ("header only", stamp[..CMSG_HEADER].to_vec(), None),
            (
                "length below a header",
                {
                    let mut v = stamp.clone();
                    v[..8].copy_from_slice(&4u64.to_ne_bytes());
                    v
                },
                None,
            ),
            (
                "negative seconds",
                cmsg(libc::SOL_SOCKET, libc::SCM_TIMESTAMPNS, &timespec(-1, 0)),
                None,
            ),
            (
                "a second message claiming more than there is",
                {
                    let mut huge = stamp.clone();
                    huge[..8].copy_from_slice(&u64::MAX.to_ne_bytes());
                    [other.clone(), huge].concat()
                },
                None,
            ),
        ];
        for (name, bytes, want) in cases {
            assert_eq!(parse(bytes), *want, "{name}");
        }
    }

    #[test]
    fn a_loopback_read_carries_the_time_its_bytes_were_sent() {
        use std::io::Write;
        use std::os::fd::AsFd;
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mut s, _) = l.accept().unwrap();
        enable(c.as_fd()).unwrap();
        // The first socket to ask turns stamping on through a work queue
        // (`net_enable_timestamp`), so the first reads may come unstamped: repeat until one is.
        let mut buf = [0u8; 16];
        let (before, stamp, after) = (0..100_000)
            .find_map(|_| {
                let before = realtime_ns();
                s.write_all(b"pong").unwrap();
                let mut fds = [rustix::event::PollFd::new(&c, rustix::event::PollFlags::IN)];
                rustix::event::poll(&mut fds, None).unwrap();
                let (n, stamp) = recv(c.as_fd(), &mut buf).unwrap();
                assert_eq!(&buf[..n], b"pong");
                Some((before, stamp?, realtime_ns()))
            })
            .expect("a stamped read within 100,000 round trips");
        assert!(
            (before..=after).contains(&stamp),
            "{before} <= {stamp} <= {after}"
        );
    }
}
