//! Listening sockets for per-CPU workers: SO_REUSEPORT groups, CPU steering (SO_INCOMING_CPU or
//! the CPU-index classic-BPF program), SO_BUSY_POLL, the kernel's accept-queue limit, and a
//! connection's receive low-water mark (SO_RCVLOWAT).
//!
//! The safe parts go through rustix; the socket options rustix does not wrap
//! (`SO_ATTACH_REUSEPORT_CBPF`, `SO_BUSY_POLL`, `SO_RCVLOWAT`) are set with libc in small documented unsafe
//! blocks. Every socket is created `CLOEXEC` (see docs/restart.md: a leaked
//! connection fd in a later generation keeps that connection open forever) and non-blocking.

use rustix::net::{self, AddressFamily, SocketFlags, SocketType, sockopt};
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

/// `SO_BUSY_POLL` from `<asm-generic/socket.h>` (x86, arm, riscv share the generic value).
const SO_BUSY_POLL: libc::c_int = 46;
/// `SO_ATTACH_REUSEPORT_CBPF` from `<asm-generic/socket.h>`.
const SO_ATTACH_REUSEPORT_CBPF: libc::c_int = 51;

/// How one listener of a reuseport group is created.
#[derive(Clone, Copy, Debug)]
pub struct ListenerOptions {
    /// `listen(2)` backlog; the kernel caps it at `net.core.somaxconn`.
    pub backlog: u32,
    /// `SO_INCOMING_CPU` preference: the kernel prefers this listener for connections whose
    /// packets were received on that CPU (net/core/sock_reuseport.c, `reuseport_select_sock`
    /// → `inet_lhash2_lookup` scoring, `compute_score` adds 1 for a matching `sk_incoming_cpu`).
    pub incoming_cpu: Option<u32>,
    /// `SO_BUSY_POLL` microseconds, inherited by accepted sockets. Needs a NAPI ID, so it does
    /// nothing on loopback (docs/kernel-facts.md, "Busy polling and interrupts").
    pub busy_poll_us: Option<u32>,
    /// `TCP_NODELAY` on the listener. Accepted sockets inherit it (the child socket is a
    /// clone of the listener, `inet_csk_clone_lock`), which saves a `setsockopt` per accept.
    pub nodelay: bool,
}

/// Creates a non-blocking, close-on-exec TCP listener with `SO_REUSEADDR` and `SO_REUSEPORT`,
/// bound to `addr` and listening.
///
/// IPv6 listeners are `IPV6_V6ONLY`, so `[::]:80` and `0.0.0.0:80` can be listed together.
pub fn reuseport_listener(addr: SocketAddr, opts: &ListenerOptions) -> io::Result<OwnedFd> {
    let family = match addr {
        SocketAddr::V4(_) => AddressFamily::INET,
        SocketAddr::V6(_) => AddressFamily::INET6,
    };
    let fd = net::socket_with(
        family,
        SocketType::STREAM,
        SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
        None,
    )?;
    sockopt::set_socket_reuseaddr(&fd, true)?;
    sockopt::set_socket_reuseport(&fd, true)?;
    if addr.is_ipv6() {
        sockopt::set_ipv6_v6only(&fd, true)?;
    }
    if let Some(cpu) = opts.incoming_cpu {
        sockopt::set_socket_incoming_cpu(&fd, cpu)?;
    }
    if let Some(us) = opts.busy_poll_us {
        set_busy_poll(fd.as_fd(), us)?;
    }
    if opts.nodelay {
        sockopt::set_tcp_nodelay(&fd, true)?;
    }
    net::bind(&fd, &addr)?;
    let backlog = i32::try_from(opts.backlog).unwrap_or(i32::MAX);
    net::listen(&fd, backlog)?;
    Ok(fd)
}

/// Fails with `AddrInUse` when anything already listens on `addr`.
///
/// A `SO_REUSEPORT` listener silently joins a group that another process of the same user
/// already holds, so a second `twelve serve` on a busy port would share its connections instead
/// of failing. This probe binds a plain socket first: with `SO_REUSEADDR` and without
/// `SO_REUSEPORT`, Linux refuses the bind only while a socket on that port is listening
/// (connections in TIME_WAIT do not count), which is exactly the case to catch.
pub fn ensure_no_listener(addr: SocketAddr) -> io::Result<()> {
    let family = match addr {
        SocketAddr::V4(_) => AddressFamily::INET,
        SocketAddr::V6(_) => AddressFamily::INET6,
    };
    let fd = net::socket_with(family, SocketType::STREAM, SocketFlags::CLOEXEC, None)?;
    sockopt::set_socket_reuseaddr(&fd, true)?;
    if addr.is_ipv6() {
        sockopt::set_ipv6_v6only(&fd, true)?;
    }
    net::bind(&fd, &addr)?;
    Ok(())
}

/// The local address a socket is bound to (`getsockname(2)`), for listeners bound to port 0.
pub fn local_addr(fd: BorrowedFd<'_>) -> io::Result<SocketAddr> {
    let addr = net::getsockname(fd)?;
    SocketAddr::try_from(addr).map_err(|_| io::Error::other("not an IP socket address"))
}

/// The CPU that last processed the socket's incoming packets (`SO_INCOMING_CPU` read back).
///
/// On an accepted socket this is the receiving CPU, which the steering test compares with the
/// CPU of the worker that accepted it.
pub fn incoming_cpu(fd: BorrowedFd<'_>) -> io::Result<u32> {
    Ok(sockopt::socket_incoming_cpu(fd)?)
}

/// Sets `SO_BUSY_POLL` (microseconds to busy-poll the device queue on a blocking read or, for
/// epoll, when every socket of the instance shares one NAPI ID). Any value is allowed without
/// privileges (docs/kernel-facts.md).
pub fn set_busy_poll(fd: BorrowedFd<'_>, usecs: u32) -> io::Result<()> {
    let value = libc::c_int::try_from(usecs).unwrap_or(libc::c_int::MAX);
    // SAFETY: SO_BUSY_POLL takes a `c_int` (socket(7)), and `value` is one.
    unsafe { set_socket_option(fd, SO_BUSY_POLL, &value) }
}

/// Sets `SO_RCVLOWAT`: the socket reports readable (to `epoll`, `poll`) only once this many
/// bytes are queued, and TCP wakes the reader no earlier (`tcp_data_ready`), growing the
/// receive buffer to hold it (`tcp_set_rcvlowat`). Lowering it wakes a reader at once if the
/// bytes queued already reach the new mark (socket(7)).
pub fn set_rcvlowat(fd: BorrowedFd<'_>, bytes: u32) -> io::Result<()> {
    let value = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    // SAFETY: SO_RCVLOWAT takes a `c_int` (socket(7)), and `value` is one.
    unsafe { set_socket_option(fd, libc::SO_RCVLOWAT, &value) }
}

/// Attaches the study's two-instruction classic-BPF program to a reuseport listener: it returns
/// the number of the CPU that received the packet, and the kernel uses that number as an index
/// into the reuseport group (net/core/sock_reuseport.c, `run_bpf_filter`).
///
/// Only correct while the group is never re-created: the index is the position in which each
/// listener joined, and closing and re-creating one listener reorders the group, after which
/// CPU 0's connections went to CPU 1's listener (docs/kernel-facts.md, 40 of 40). The program is a
/// property of the group, so attaching it to any one member (after `listen`) steers all of
/// them; listener *i* must be created *i*-th and be the listener of CPU *i*'s worker, and the
/// group must hold one listener per online CPU from 0 upwards, or an index out of range makes
/// the kernel fall back to its hash. An attached program takes precedence over
/// `SO_INCOMING_CPU`.
pub fn attach_reuseport_cpu_cbpf(fd: BorrowedFd<'_>) -> io::Result<()> {
    // A = ancillary "current CPU" (SKF_AD_OFF + SKF_AD_CPU); return A.
    let mut code = [
        libc::sock_filter {
            code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
            jt: 0,
            jf: 0,
            k: (libc::SKF_AD_OFF + libc::SKF_AD_CPU) as u32,
        },
        libc::sock_filter {
            code: (libc::BPF_RET | libc::BPF_A) as u16,
            jt: 0,
            jf: 0,
            k: 0,
        },
    ];
    let prog = libc::sock_fprog {
        len: code.len() as u16,
        filter: code.as_mut_ptr(),
    };
    // SAFETY: SO_ATTACH_REUSEPORT_CBPF takes a `sock_fprog`, as SO_ATTACH_FILTER-style options
    // do (socket(7)); `prog` points at `code`, an array of `len` valid `sock_filter`s that
    // outlives the call (the kernel copies the program before returning).
    unsafe { set_socket_option(fd, SO_ATTACH_REUSEPORT_CBPF, &prog) }
}

/// `SO_ATTACH_FILTER` from `<asm-generic/socket.h>`.
const SO_ATTACH_FILTER: libc::c_int = 26;

/// Makes a listening TCP socket drop every new connection request (a segment with SYN set and
/// ACK clear) and pass every other segment: a classic-BPF socket filter, which TCP runs on the
/// listener with the segment's data at its TCP header (`tcp_filter` in `tcp_v4_rcv`), so byte
/// 13 is the flags. Handshakes already under way still complete and queue; a client whose SYN
/// is dropped retries and, once the listener is closed, is refused rather than reset.
///
/// For a final stop: accept what is queued after this, then close. Never for a listener that
/// a successor shares (an upgrade): the filter belongs to the socket, in every process.
pub fn drop_connection_requests(fd: BorrowedFd<'_>) -> io::Result<()> {
    const SYN: u32 = 0x02;
    const ACK: u32 = 0x10;
    let stmt = |code: u32, k: u32| libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let mut code = [
        // A = the TCP flags byte; A &= SYN | ACK.
        stmt(libc::BPF_LD | libc::BPF_B | libc::BPF_ABS, 13),
        stmt(libc::BPF_ALU | libc::BPF_AND | libc::BPF_K, SYN | ACK),
        // A == SYN (a connection request): drop (next); else pass (the one after).
        libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: SYN,
        },
        stmt(libc::BPF_RET | libc::BPF_K, 0),
        stmt(libc::BPF_RET | libc::BPF_K, u32::MAX),
    ];
    let prog = libc::sock_fprog {
        len: code.len() as u16,
        filter: code.as_mut_ptr(),
    };
    // SAFETY: SO_ATTACH_FILTER takes a `sock_fprog` (socket(7)); `prog` points at `code`, an
    // array of `len` valid `sock_filter`s that outlives the call (the kernel copies it).
    unsafe { set_socket_option(fd, SO_ATTACH_FILTER, &prog) }
}

/// `setsockopt(fd, SOL_SOCKET, name, value, size_of::<T>())`.
///
/// # Safety
///
/// `T` must be the type the kernel expects for the option `name`, and any pointer inside
/// `value` must be valid for the reads that option makes during the call.
unsafe fn set_socket_option<T>(fd: BorrowedFd<'_>, name: libc::c_int, value: &T) -> io::Result<()> {
    // SAFETY: `fd` is a live descriptor borrowed for the call; `value` is a valid `T` of the
    // length passed, and the caller guarantees that `T` is what the kernel reads for `name`.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            name,
            std::ptr::from_ref(value).cast(),
            size_of::<T>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `net.core.somaxconn`, the cap on every listen backlog (4096 by default since Linux 5.4);
/// 4096 when procfs cannot be read.
pub fn somaxconn() -> u32 {
    std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(4096)
}

/// Raises the soft `RLIMIT_NOFILE` to the hard limit and returns the new soft limit.
///
/// Every connection is a descriptor; the default soft limit of 1024 is far below what one
/// worker serves.
pub fn raise_nofile_limit() -> io::Result<u64> {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut lim = getrlimit(Resource::Nofile);
    if lim.current != lim.maximum {
        lim.current = lim.maximum;
        setrlimit(Resource::Nofile, lim)?;
    }
    Ok(lim.current.unwrap_or(u64::MAX))
}

/// Sets the soft `RLIMIT_NOFILE` (tests use it to provoke EMFILE on `accept`).
pub fn set_nofile_limit(soft: u64) -> io::Result<()> {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut lim = getrlimit(Resource::Nofile);
    lim.current = Some(soft);
    Ok(setrlimit(Resource::Nofile, lim)?)
}

/// The soft `RLIMIT_NOFILE` (`None` for unlimited).
pub fn nofile_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, TcpStream};

    fn opts() -> ListenerOptions {
        ListenerOptions {
            backlog: 16,
            incoming_cpu: Some(0),
            busy_poll_us: Some(50),
            nodelay: true,
        }
    }

    #[test]
    fn listener_accepts_a_connection() {
        let fd = reuseport_listener((Ipv4Addr::LOCALHOST, 0).into(), &opts()).unwrap();
        let addr = local_addr(fd.as_fd()).unwrap();
        let _c = TcpStream::connect(addr).unwrap();
        let conn = loop {
            match net::accept_with(&fd, SocketFlags::CLOEXEC) {
                Ok(c) => break c,
                Err(rustix::io::Errno::AGAIN) => std::thread::yield_now(),
                Err(e) => panic!("{e}"),
            }
        };
        assert!(incoming_cpu(conn.as_fd()).is_ok());
        assert!(
            sockopt::tcp_nodelay(&conn).unwrap(),
            "TCP_NODELAY not inherited"
        );
    }

    #[test]
    fn two_listeners_share_a_port() {
        let a = reuseport_listener((Ipv4Addr::LOCALHOST, 0).into(), &opts()).unwrap();
        let addr = local_addr(a.as_fd()).unwrap();
        let b = reuseport_listener(addr, &opts()).unwrap();
        assert_eq!(local_addr(b.as_fd()).unwrap(), addr);
    }

    #[test]
    fn cbpf_program_attaches() {
        let a = reuseport_listener((Ipv4Addr::LOCALHOST, 0).into(), &opts()).unwrap();
        attach_reuseport_cpu_cbpf(a.as_fd()).unwrap();
    }

    #[test]
    fn ipv6_listener_binds_when_ipv6_is_available() {
        match reuseport_listener("[::1]:0".parse().unwrap(), &opts()) {
            Ok(fd) => assert!(local_addr(fd.as_fd()).unwrap().is_ipv6()),
            Err(e) => twelve_testkit::skip_or_fail(format!("no IPv6 loopback here ({e})")),
        }
    }

    #[test]
    fn nofile_limit_can_be_raised_to_the_hard_limit() {
        let n = raise_nofile_limit().unwrap();
        assert_eq!(nofile_limit().unwrap_or(u64::MAX), n);
    }
}
