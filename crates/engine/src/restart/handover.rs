//! Handing listening sockets from one generation to the next (docs/restart.md): a
//! `SOCK_SEQPACKET` socketpair carries each listener with its name (`SCM_RIGHTS`, one per
//! message), then the successor's `ready` or why it failed; names map the sockets back to
//! workers by CPU, and every socket is validated on arrival.
//!
//! Names, not positions: `http-cpu<N>` is the listener of the worker on CPU N for the first
//! listen address, `http<J>-cpu<N>` for address J > 0. Keying by address alone cannot tell
//! the per-CPU members of one reuseport group apart; keying by position breaks when the CPU
//! list changes. systemd's `LISTEN_FDNAMES`
//! uses the same names, so one mapping serves both paths.

use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, SocketFlags, SocketType,
};
use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::net::SocketAddr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::Duration;

/// Longest message: a name or a line of text. A listener's name is short; a failure reason
/// longer than this is cut.
const MESSAGE_BYTES: usize = 4096;

/// One end of the handover socketpair.
#[derive(Debug)]
pub struct Channel(OwnedFd);

/// What arrived on a [`Channel`].
#[derive(Debug)]
pub enum Message {
    /// A listener and its name.
    Listener(String, OwnedFd),
    /// A line of text (`ready ...`, `failed: ...`, `end`).
    Text(String),
    /// The other end is closed: the peer exited (or closed it).
    Closed,
    /// Nothing arrived within the timeout.
    TimedOut,
}

/// A connected pair: the parent keeps the first, the successor inherits the second (the
/// caller makes it inheritable with [`inheritable`] just before spawning). Both are
/// close-on-exec.
pub fn channel_pair() -> io::Result<(Channel, OwnedFd)> {
    let (a, b) = rustix::net::socketpair(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )?;
    Ok((Channel(a), b))
}

/// Clears close-on-exec on `fd`, so that the next `exec` passes it on. Only the thread that
/// spawns the successor may call it, right before spawning: any other spawn in between would
/// leak the descriptor too.
pub fn inheritable(fd: &OwnedFd) -> io::Result<()> {
    rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::empty())?;
    Ok(())
}

impl Channel {
    /// Wraps an inherited end (see `twelve_sys::inherit::take_inherited`).
    pub fn from_fd(fd: OwnedFd) -> Self {
        Self(fd)
    }

    /// Sends one listener with its name.
    pub fn send_listener(&self, name: &str, fd: BorrowedFd<'_>) -> io::Result<()> {
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut control = SendAncillaryBuffer::new(&mut space);
        let fds = [fd];
        if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
            return Err(io::Error::other(
                "control buffer too small for one descriptor",
            ));
        }
        let mut payload = Vec::with_capacity(1 + name.len());
        payload.push(b'L');
        payload.extend_from_slice(name.as_bytes());
        rustix::net::sendmsg(
            &self.0,
            &[IoSlice::new(&payload)],
            &mut control,
            SendFlags::NOSIGNAL,
        )?;
        Ok(())
    }

    /// Sends a line of text.
    pub fn send_text(&self, text: &str) -> io::Result<()> {
        let mut payload = Vec::with_capacity(1 + text.len());
        payload.push(b'T');
        payload.extend_from_slice(&text.as_bytes()[..text.len().min(MESSAGE_BYTES - 1)]);
        rustix::net::send(&self.0, &payload, SendFlags::NOSIGNAL)?;
        Ok(())
    }

    /// Waits up to `timeout` (`None`: for ever) for the next message.
    pub fn recv(&self, timeout: Option<Duration>) -> io::Result<Message> {
        if let Some(t) = timeout {
            let ts = timespec(t);
            let mut fds = [rustix::event::PollFd::new(
                &self.0,
                rustix::event::PollFlags::IN,
            )];
            loop {
                match rustix::event::poll(&mut fds, Some(&ts)) {
                    Ok(0) => return Ok(Message::TimedOut),
                    Ok(_) => break,
                    // A signal (SIGUSR2 arriving during an upgrade) must not end the wait;
                    // the timeout restarts, which only lengthens it by the interrupted part.
                    Err(rustix::io::Errno::INTR) => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        let mut buf = vec![0u8; MESSAGE_BYTES];
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(4))];
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let got = loop {
            match rustix::net::recvmsg(
                &self.0,
                &mut [IoSliceMut::new(&mut buf)],
                &mut control,
                RecvFlags::CMSG_CLOEXEC,
            ) {
                Err(rustix::io::Errno::INTR) => {}
                // A peer that exits with our messages unread resets the pair: it is gone,
                // as with an orderly close.
                Err(rustix::io::Errno::CONNRESET) => return Ok(Message::Closed),
                other => break other?,
            }
        };
        if got.bytes == 0 {
            return Ok(Message::Closed);
        }
        let mut fds: Vec<OwnedFd> = Vec::new();
        for msg in control.drain() {
            if let RecvAncillaryMessage::ScmRights(rights) = msg {
                fds.extend(rights);
            }
        }
        let text = String::from_utf8_lossy(&buf[1..got.bytes]).into_owned();
        match (buf[0], fds.len()) {
            (b'L', 1) => Ok(Message::Listener(text, fds.remove(0))),
            (b'T', 0) => Ok(Message::Text(text)),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "malformed handover message",
            )),
        }
    }

    /// Sends every listener, then `end`.
    pub fn send_listeners(&self, named: &[(String, BorrowedFd<'_>)]) -> io::Result<()> {
        for (name, fd) in named {
            self.send_listener(name, *fd)?;
        }
        self.send_text("end")
    }

    /// Receives listeners until `end` (the counterpart of [`Channel::send_listeners`]).
    pub fn recv_listeners(&self, timeout: Duration) -> io::Result<Vec<(String, OwnedFd)>> {
        let mut named = Vec::new();
        loop {
            match self.recv(Some(timeout))? {
                Message::Listener(name, fd) => named.push((name, fd)),
                Message::Text(t) if t == "end" => return Ok(named),
                other => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("expected a listener or end, got {other:?}"),
                    ));
                }
            }
        }
    }
}

/// Waits up to `timeout` for `fd` to become readable (a listener: a connection is queued);
/// `false` when the time ran out or a signal interrupted the wait.
pub fn wait_readable(fd: BorrowedFd<'_>, timeout: Duration) -> io::Result<bool> {
    let ts = timespec(timeout);
    let mut fds = [rustix::event::PollFd::new(
        &fd,
        rustix::event::PollFlags::IN,
    )];
    match rustix::event::poll(&mut fds, Some(&ts)) {
        Ok(n) => Ok(n > 0),
        Err(rustix::io::Errno::INTR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

fn timespec(t: Duration) -> rustix::event::Timespec {
    rustix::event::Timespec {
        tv_sec: i64::try_from(t.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(t.subsec_nanos()),
    }
}

/// The name of the listener of the worker on `cpu` for the `addr_index`-th address.
pub fn listener_name(addr_index: usize, cpu: usize) -> String {
    if addr_index == 0 {
        format!("http-cpu{cpu}")
    } else {
        format!("http{addr_index}-cpu{cpu}")
    }
}

/// Every listener of a running server with its name: `listeners[i][j]` is worker *i*'s (on
/// `cpus[i]`) for address *j*, as [`ServerHandle::listener_dups`](crate::ServerHandle::listener_dups)
/// returns them.
pub fn name_listeners(cpus: &[usize], listeners: Vec<Vec<OwnedFd>>) -> Vec<(String, OwnedFd)> {
    let mut named = Vec::new();
    for (&cpu, mine) in cpus.iter().zip(listeners) {
        for (j, fd) in mine.into_iter().enumerate() {
            named.push((listener_name(j, cpu), fd));
        }
    }
    named
}

/// Checks that `fd` is a listening TCP socket on `want` (any port when `want`'s port is 0, as
/// a test's ephemeral port is), with `SO_REUSEPORT` when `shared` (more than one worker
/// listens on the address; one worker's socket may come without it, from
/// `systemd-socket-activate` for instance), and returns its address.
pub fn validate(fd: BorrowedFd<'_>, want: SocketAddr, shared: bool) -> io::Result<SocketAddr> {
    let bad = |what: String| io::Error::new(io::ErrorKind::InvalidInput, what);
    if rustix::net::sockopt::socket_type(fd)? != SocketType::STREAM {
        return Err(bad("not a stream socket".into()));
    }
    if !rustix::net::sockopt::socket_acceptconn(fd)? {
        return Err(bad("not listening".into()));
    }
    if shared && !rustix::net::sockopt::socket_reuseport(fd)? {
        return Err(bad("SO_REUSEPORT is off".into()));
    }
    let addr = twelve_sys::net::local_addr(fd)?;
    let same = if want.port() == 0 {
        addr.ip() == want.ip()
    } else {
        addr == want
    };
    if !same {
        return Err(bad(format!("bound to {addr}, expected {want}")));
    }
    Ok(addr)
}

/// Named listeners sorted out by [`by_worker`].
#[derive(Debug)]
pub struct Mapped {
    /// `workers[i][j]`: the listener of the worker on `cpus[i]` for address `listen[j]`.
    pub workers: Vec<Vec<OwnedFd>>,
    /// Every listener with another name (the control socket), for the caller.
    pub others: Vec<(String, OwnedFd)>,
}

/// Checks that `fd` is a listening Unix stream socket (the control socket).
pub fn validate_control(fd: BorrowedFd<'_>) -> io::Result<()> {
    let ok = rustix::net::sockopt::socket_type(fd)? == SocketType::STREAM
        && rustix::net::sockopt::socket_acceptconn(fd)?
        && rustix::net::sockopt::socket_domain(fd)? == AddressFamily::UNIX;
    if ok {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a listening Unix stream socket",
        ))
    }
}

/// Maps named listeners to workers by the names of [`listener_name`], validating each.
/// A missing name or an invalid socket is an error that says which name.
pub fn by_worker(
    named: Vec<(String, OwnedFd)>,
    cpus: &[usize],
    listen: &[SocketAddr],
) -> Result<Mapped, String> {
    let mut slots: Vec<Vec<Option<OwnedFd>>> = cpus
        .iter()
        .map(|_| listen.iter().map(|_| None).collect())
        .collect();
    let mut others = Vec::new();
    'named: for (name, fd) in named {
        for (i, &cpu) in cpus.iter().enumerate() {
            for (j, &want) in listen.iter().enumerate() {
                if name == listener_name(j, cpu) {
                    validate(fd.as_fd(), want, cpus.len() > 1)
                        .map_err(|e| format!("listener {name}: {e}"))?;
                    if slots[i][j].replace(fd).is_some() {
                        return Err(format!("listener {name} given twice"));
                    }
                    continue 'named;
                }
            }
        }
        others.push((name, fd));
    }
    let mut per_worker = Vec::new();
    for (i, row) in slots.into_iter().enumerate() {
        let mut mine = Vec::new();
        for (j, slot) in row.into_iter().enumerate() {
            let name = listener_name(j, cpus[i]);
            mine.push(slot.ok_or_else(|| format!("no listener named {name} was handed over"))?);
        }
        per_worker.push(mine);
    }
    Ok(Mapped {
        workers: per_worker,
        others,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    fn listener(addr: SocketAddr) -> OwnedFd {
        let opts = twelve_sys::ListenerOptions {
            backlog: 16,
            incoming_cpu: None,
            busy_poll_us: None,
            nodelay: true,
        };
        twelve_sys::net::reuseport_listener(addr, &opts).unwrap()
    }

    #[test]
    fn listeners_cross_the_channel_with_their_names() {
        let (parent, child) = channel_pair().unwrap();
        let child = Channel::from_fd(child);
        let l = listener("127.0.0.1:0".parse().unwrap());
        parent
            .send_listeners(&[("http-cpu0".to_owned(), l.as_fd())])
            .unwrap();
        let got = child.recv_listeners(Duration::from_secs(5)).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, "http-cpu0");
        assert_ne!(got[0].1.as_raw_fd(), l.as_raw_fd(), "a new descriptor");
        let flags = rustix::io::fcntl_getfd(&got[0].1).unwrap();
        assert!(flags.contains(rustix::io::FdFlags::CLOEXEC));
        child.send_text("ready 7").unwrap();
        assert!(matches!(parent.recv(None).unwrap(), Message::Text(t) if t == "ready 7"));
        drop(child);
        assert!(matches!(parent.recv(None).unwrap(), Message::Closed));
        assert!(matches!(
            channel_pair()
                .unwrap()
                .0
                .recv(Some(Duration::from_millis(1)))
                .unwrap(),
            Message::TimedOut
        ));
    }

    #[test]
    fn names_map_to_workers_by_cpu_not_position() {
        let a: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let l0 = listener(a);
        let port = twelve_sys::net::local_addr(l0.as_fd()).unwrap();
        let l1 = listener(port);
        // Given in the opposite order, plus one that is not a worker's.
        let (control, _) = channel_pair().unwrap();
        let named = vec![
            ("http-cpu3".to_owned(), l1),
            ("control".to_owned(), control.0),
            ("http-cpu1".to_owned(), l0),
        ];
        let m = by_worker(named, &[1, 3], &[a]).unwrap();
        assert_eq!(m.workers.len(), 2);
        assert_eq!(m.others.len(), 1);
        assert_eq!(m.others[0].0, "control");
    }

    #[test]
    fn a_missing_or_wrong_listener_is_named() {
        let a: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let err = by_worker(vec![("http-cpu0".to_owned(), listener(a))], &[0, 1], &[a]);
        assert!(err.unwrap_err().contains("http-cpu1"));
        let other: SocketAddr = "127.0.0.2:1".parse().unwrap();
        let err = by_worker(vec![("http-cpu0".to_owned(), listener(a))], &[0], &[other]);
        assert!(err.unwrap_err().contains("expected 127.0.0.2:1"));
        let (not_tcp, _) = channel_pair().unwrap();
        let err = by_worker(vec![("http-cpu0".to_owned(), not_tcp.0)], &[0], &[a]);
        assert!(err.unwrap_err().contains("http-cpu0"));
    }

    #[test]
    fn second_address_names_carry_its_index() {
        assert_eq!(listener_name(0, 5), "http-cpu5");
        assert_eq!(listener_name(2, 0), "http2-cpu0");
    }
}
