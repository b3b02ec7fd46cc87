use super::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsFd;

/// A ring, or `None` (with the reason printed; a failure in CI) where io_uring is unavailable.
fn ring() -> Option<Ring> {
    match Ring::new(16, 8, 64) {
        Ok(r) => Some(r),
        Err(e) => {
            twelve_testkit::skip_or_fail(format!("io_uring event loop unavailable here: {e}"));
            None
        }
    }
}

/// Waits until `n` completions have arrived (or 2 s passed).
fn wait_for(ring: &mut Ring, n: usize) -> Vec<Completion> {
    let mut out = Vec::new();
    for _ in 0..200 {
        ring.submit_and_wait(Some(Duration::from_millis(10)))
            .unwrap();
        ring.reap(&mut out);
        if out.len() >= n {
            break;
        }
    }
    out
}

fn tcp_pair() -> (TcpStream, TcpStream) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (b, _) = l.accept().unwrap();
    (a, b)
}

#[test]
fn multishot_accept_on_a_nonblocking_listener_yields_each_connection() {
    let Some(mut r) = ring() else { return };
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    r.accept_multi(l.as_fd(), 7);
    let _c1 = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let _c2 = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let got = wait_for(&mut r, 2);
    assert_eq!(got.len(), 2);
    for c in got {
        assert_eq!(c.tag, 7);
        assert!(c.more);
        let Outcome::Accept(Ok(fd)) = c.outcome else {
            panic!("{:?}", c.outcome)
        };
        let fl = rustix::fs::fcntl_getfl(&fd).unwrap();
        assert!(fl.contains(rustix::fs::OFlags::NONBLOCK));
    }
}

#[test]
fn multishot_recv_fills_provided_buffers_then_reports_eof() {
    let Some(mut r) = ring() else { return };
    let (mut a, b) = tcp_pair();
    r.recv_multi(b.as_fd(), 3);
    a.write_all(b"hello").unwrap();
    let got = wait_for(&mut r, 1);
    let c = got.into_iter().next().unwrap();
    assert!(c.more);
    let Outcome::Recv(Ok(Some(buf))) = c.outcome else {
        panic!("{:?}", c.outcome)
    };
    assert_eq!(r.bytes(&buf), b"hello");
    r.recycle(buf);
    drop(a);
    let got = wait_for(&mut r, 1);
    assert!(!got[0].more);
    assert!(matches!(got[0].outcome, Outcome::Recv(Ok(None))));
    assert_eq!(r.inflight(), 0);
}

#[test]
fn more_bytes_than_one_buffer_arrive_in_several_buffers() {
    let Some(mut r) = ring() else { return };
    let (mut a, b) = tcp_pair();
    let sent: Vec<u8> = (0..300).map(|i| i as u8).collect();
    a.write_all(&sent).unwrap();
    r.recv_multi(b.as_fd(), 1);
    let mut got = Vec::new();
    let mut out = Vec::new();
    for _ in 0..200 {
        r.submit_and_wait(Some(Duration::from_millis(10))).unwrap();
        r.reap(&mut out);
        for c in out.drain(..) {
            if let Outcome::Recv(Ok(Some(buf))) = c.outcome {
                got.extend_from_slice(r.bytes(&buf));
                r.recycle(buf);
            }
        }
        if got.len() >= sent.len() {
            break;
        }
    }
    assert_eq!(got, sent);
}

#[test]
fn send_returns_its_buffer_and_sends_from_start() {
    let Some(mut r) = ring() else { return };
    let (a, mut b) = tcp_pair();
    r.send(a.as_fd(), b"xxpayload".to_vec(), 2, 9);
    let got = wait_for(&mut r, 1);
    let Outcome::Send(Ok(7), buf) = &got[0].outcome else {
        panic!("{:?}", got[0].outcome)
    };
    assert_eq!(buf, b"xxpayload");
    let mut s = [0u8; 7];
    b.read_exact(&mut s).unwrap();
    assert_eq!(&s, b"payload");
}

#[test]
fn cancelled_recv_completes_with_ecanceled_and_nothing_stays_in_flight() {
    let Some(mut r) = ring() else { return };
    let (_a, b) = tcp_pair();
    let op = r.recv_multi(b.as_fd(), 1);
    r.submit_and_wait(Some(Duration::from_millis(1))).unwrap();
    r.cancel(op);
    let got = wait_for(&mut r, 1);
    assert!(matches!(
        got[0].outcome,
        Outcome::Recv(Err(Errno::CANCELED))
    ));
    assert_eq!(r.inflight(), 0);
}

#[test]
fn cancel_fd_ends_every_operation_on_the_socket() {
    let Some(mut r) = ring() else { return };
    let (_a, b) = tcp_pair();
    r.recv_multi(b.as_fd(), 1);
    r.poll(b.as_fd(), libc::POLLPRI as u32, false, 2);
    r.submit_and_wait(Some(Duration::from_millis(1))).unwrap();
    r.cancel_fd(b.as_fd());
    let got = wait_for(&mut r, 2);
    assert_eq!(got.len(), 2);
    assert_eq!(r.inflight(), 0);
}

#[test]
fn close_through_the_ring_closes_the_socket_and_leaves_nothing_in_flight() {
    let Some(mut r) = ring() else { return };
    let (mut a, b) = tcp_pair();
    r.close(OwnedFd::from(b));
    assert_eq!(r.inflight(), 0, "a close holds no slot");
    let mut out = Vec::new();
    // One wait with nothing else in flight: it must time out rather than end with a
    // completion of the close.
    r.submit_and_wait(Some(Duration::from_millis(20))).unwrap();
    r.reap(&mut out);
    assert!(out.is_empty(), "a close posts no completion: {out:?}");
    a.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut buf = [0u8; 8];
    assert_eq!(
        a.read(&mut buf).unwrap(),
        0,
        "the peer sees the close as EOF"
    );
}

#[test]
fn dropping_a_ring_with_operations_in_flight_is_safe() {
    let Some(mut r) = ring() else { return };
    let (_a, b) = tcp_pair();
    r.recv_multi(b.as_fd(), 1);
    r.send(b.as_fd(), vec![0; 16], 0, 2);
    r.submit_and_wait(Some(Duration::from_millis(1))).unwrap();
    drop(r);
}

#[test]
fn an_empty_buffer_ring_ends_multishot_recv_with_enobufs() {
    let Some(mut r) = ring() else { return };
    let (mut a, b) = tcp_pair();
    r.recv_multi(b.as_fd(), 1);
    let mut held = Vec::new();
    let mut out = Vec::new();
    let mut enobufs = false;
    for _ in 0..200 {
        a.write_all(b"x").unwrap();
        r.submit_and_wait(Some(Duration::from_millis(5))).unwrap();
        r.reap(&mut out);
        for c in out.drain(..) {
            match c.outcome {
                Outcome::Recv(Ok(Some(buf))) => held.push(buf),
                Outcome::Recv(Err(Errno::NOBUFS)) => enobufs = !c.more,
                e => panic!("{e:?}"),
            }
        }
        if enobufs {
            break;
        }
    }
    assert!(enobufs);
    assert_eq!(held.len(), 8);
    for b in held {
        r.recycle(b);
    }
}

#[test]
fn multishot_recvmsg_hands_out_the_payload_with_its_receive_stamp_then_eof() {
    let Some(_) = ring() else { return };
    // Buffers must hold the header and control space before the payload.
    let mut r = Ring::new(16, 8, 256).unwrap();
    let (mut a, b) = tcp_pair();
    crate::stamp::enable(b.as_fd()).unwrap();
    r.recv_msg_multi(b.as_fd(), 5);
    // Stamping is switched on through a work queue: the first reads may come unstamped.
    let mut stamped = None;
    for k in 0..10_000u32 {
        let before = crate::stamp::realtime_ns();
        let sent = k.to_ne_bytes();
        a.write_all(&sent).unwrap();
        let got = wait_for(&mut r, 1);
        let c = got.into_iter().next().expect("a completion");
        assert_eq!(c.tag, 5);
        assert!(c.more);
        let Outcome::Recv(Ok(Some(buf))) = c.outcome else {
            panic!("{:?}", c.outcome)
        };
        assert_eq!(r.bytes(&buf), sent);
        let stamp = buf.stamp();
        r.recycle(buf);
        if let Some(s) = stamp {
            stamped = Some((before, s, crate::stamp::realtime_ns()));
            break;
        }
    }
    let (before, stamp, after) = stamped.expect("a stamped receive within 10,000");
    assert!(
        (before..=after).contains(&stamp),
        "{before} <= {stamp} <= {after}"
    );
    drop(a);
    let got = wait_for(&mut r, 1);
    assert!(!got[0].more);
    assert!(
        matches!(got[0].outcome, Outcome::Recv(Ok(None))),
        "{:?}",
        got[0].outcome
    );
    assert_eq!(r.inflight(), 0);
}
