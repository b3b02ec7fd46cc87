//! Tests of `pump` through a fake socket that forces EINTR, EAGAIN and short transfers.

use super::*;
use crate::conn::tests::{ctx, test_router};
use std::collections::VecDeque;

/// What the fake socket does on each call, in order; when a script runs out, `recv` says
/// EAGAIN and `send` accepts everything.
#[derive(Default)]
struct Fake {
    recv: VecDeque<Result<Vec<u8>, Errno>>,
    /// Per send call: at most this many bytes, or an error.
    send: VecDeque<Result<usize, Errno>>,
    sent: Vec<u8>,
    shut: bool,
    recv_calls: usize,
    send_calls: usize,
}

impl Io for Fake {
    fn recv(&mut self, buf: &mut Vec<u8>) -> Result<usize, Errno> {
        self.recv_calls += 1;
        match self.recv.pop_front() {
            None => Err(Errno::AGAIN),
            Some(Err(e)) => Err(e),
            Some(Ok(bytes)) => {
                let n = bytes.len().min(buf.capacity() - buf.len());
                buf.extend_from_slice(&bytes[..n]);
                if n < bytes.len() {
                    self.recv.push_front(Ok(bytes[n..].to_vec()));
                }
                Ok(n)
            }
        }
    }

    fn send(&mut self, bytes: &[u8]) -> Result<usize, Errno> {
        self.send_calls += 1;
        let n = match self.send.pop_front() {
            None => bytes.len(),
            Some(Err(e)) => return Err(e),
            Some(Ok(max)) => max.min(bytes.len()),
        };
        self.sent.extend_from_slice(&bytes[..n]);
        Ok(n)
    }

    fn sendfile(&mut self, _: &File, _: u64, _: usize) -> Result<usize, Errno> {
        Err(Errno::INVAL)
    }

    fn shutdown_write(&mut self) -> Result<(), Errno> {
        self.shut = true;
        Ok(())
    }
}

const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";

fn count(sent: &[u8]) -> usize {
    sent.windows(9).filter(|w| w == b"HTTP/1.1 ").count()
}

#[test]
fn a_batch_is_answered_with_one_send_and_one_recv() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let mut io = Fake::default();
    io.recv.push_back(Ok(GET.repeat(16)));
    assert_eq!(pump(&mut c, &mut io, true, 0, &mut x), Verdict::Open);
    assert_eq!(count(&io.sent), 16);
    assert_eq!(io.send_calls, 1);
    // The short read told us the socket was drained: no recv that returns EAGAIN.
    assert_eq!(io.recv_calls, 1);
}

#[test]
fn eintr_is_retried_on_recv_and_send() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let mut io = Fake::default();
    io.recv.push_back(Err(Errno::INTR));
    io.recv.push_back(Ok(GET.to_vec()));
    io.send.push_back(Err(Errno::INTR));
    assert_eq!(pump(&mut c, &mut io, true, 0, &mut x), Verdict::Open);
    assert_eq!(count(&io.sent), 1);
}

#[test]
fn short_sends_resume_on_the_next_writable_event() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let mut io = Fake::default();
    io.recv.push_back(Ok(GET.repeat(2)));
    io.send.push_back(Ok(7));
    io.send.push_back(Err(Errno::AGAIN));
    assert_eq!(pump(&mut c, &mut io, true, 0, &mut x), Verdict::Open);
    assert_eq!(io.sent.len(), 7);
    // EPOLLOUT: not readable, just writable.
    assert_eq!(pump(&mut c, &mut io, false, 1, &mut x), Verdict::Open);
    assert_eq!(count(&io.sent), 2);
    assert!(String::from_utf8_lossy(&io.sent).ends_with("root"));
}

#[test]
fn one_byte_sends_deliver_everything_in_order() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let mut io = Fake::default();
    io.recv.push_back(Ok(GET.repeat(3)));
    io.send.extend(std::iter::repeat_n(Ok(1), 10_000));
    assert_eq!(pump(&mut c, &mut io, true, 0, &mut x), Verdict::Open);
    assert_eq!(count(&io.sent), 3);
}

#[test]
fn a_reader_that_stops_reading_pauses_parsing_and_resumes() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    x.high_water = 1;
    let mut io = Fake::default();
    io.recv.push_back(Ok(GET.repeat(4)));
    io.send.push_back(Err(Errno::AGAIN));
    assert_eq!(pump(&mut c, &mut io, true, 0, &mut x), Verdict::Open);
    assert!(io.sent.is_empty());
    assert_eq!(pump(&mut c, &mut io, false, 1, &mut x), Verdict::Open);
    assert_eq!(count(&io.sent), 4);
}

#[test]
fn more_input_than_the_buffer_is_read_in_several_recvs() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let mut io = Fake::default();
    io.recv.push_back(Ok(GET.repeat(2_000)));
    assert_eq!(pump(&mut c, &mut io, true, 0, &mut x), Verdict::Open);
    assert_eq!(count(&io.sent), 2_000);
}

#[test]
fn a_clean_close_closes_at_once() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let mut io = Fake::default();
    io.recv.push_back(Ok(
        b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n".to_vec(),
    ));
    assert_eq!(pump(&mut c, &mut io, true, 0, &mut x), Verdict::Close);
    assert!(!io.shut);
    assert_eq!(count(&io.sent), 1);
}

#[test]
fn close_with_input_behind_shuts_the_write_side_and_lingers_until_eof() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let mut io = Fake::default();
    io.recv.push_back(Ok(
        b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGET / HT".to_vec(),
    ));
    assert_eq!(pump(&mut c, &mut io, true, 0, &mut x), Verdict::Open);
    assert!(io.shut);
    // Lingering: a late request is read and discarded, then EOF closes.
    io.recv.push_back(Ok(GET.to_vec()));
    assert_eq!(pump(&mut c, &mut io, true, 1, &mut x), Verdict::Open);
    io.recv.push_back(Ok(Vec::new()));
    assert_eq!(pump(&mut c, &mut io, true, 2, &mut x), Verdict::Close);
    assert_eq!(count(&io.sent), 1);
}

#[test]
fn a_reset_is_reported() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let mut io = Fake::default();
    io.recv.push_back(Err(Errno::CONNRESET));
    assert_eq!(pump(&mut c, &mut io, true, 0, &mut x), Verdict::Reset);
    let mut io = Fake::default();
    io.recv.push_back(Ok(GET.to_vec()));
    io.send.push_back(Err(Errno::PIPE));
    assert_eq!(pump(&mut c, &mut io, true, 0, &mut x), Verdict::Reset);
}

#[test]
fn the_router_helper_is_shared() {
    assert!(!test_router().has_fallback());
}

#[test]
fn a_send_timeout_closes_even_if_the_socket_became_writable() {
    let (mut c, mut x) = (Conn::new(0), ctx());
    let mut io = Fake::default();
    io.recv.push_back(Ok(GET.to_vec()));
    io.send.push_back(Err(Errno::AGAIN));
    assert_eq!(pump(&mut c, &mut io, true, 0, &mut x), Verdict::Open);
    c.on_timeout(crate::metrics::TimeoutKind::Send, &mut x);
    assert_eq!(pump(&mut c, &mut io, false, 5_000, &mut x), Verdict::Close);
    assert!(io.sent.is_empty());
}

/// [`after_recv`] on a fresh connection whose `recv` got `result` (bytes appended to its read
/// buffer) and was offered `spare` bytes more than it received.
fn recv_rule(result: Result<&[u8], Errno>, spare: usize) -> Received {
    let (mut conn, mut ctx) = (Conn::new(0), ctx());
    let buf = conn.read_buf(&mut ctx).expect("reading");
    let result = result.map(|bytes| {
        buf.extend_from_slice(bytes);
        bytes.len()
    });
    let space = result.unwrap_or(0) + spare;
    after_recv(&mut conn, result, space, 0, &mut ctx)
}

macro_rules! recv_rule {
    ($($name:ident: $result:expr, $spare:expr => $want:expr;)*) => {$(
        #[test]
        fn $name() {
            assert_eq!(recv_rule($result, $spare), $want);
        }
    )*};
}

recv_rule! {
    recv_eof_stops_reading: Ok(b""), 100 => Received::Done;
    recv_short_read_stops_reading: Ok(GET), 1 => Received::Done;
    recv_full_buffer_reads_again: Ok(GET), 0 => Received::More;
    recv_eintr_reads_again: Err(Errno::INTR), 100 => Received::More;
    recv_eagain_stops_reading: Err(Errno::AGAIN), 100 => Received::Done;
    recv_reset_fails: Err(Errno::CONNRESET), 100 => Received::Failed;
}

/// [`after_send`] (or, with `file`, [`after_sendfile`]) of `result` on a fresh connection.
fn send_rule(file: bool, result: Result<usize, Errno>) -> Sent {
    let (mut conn, mut ctx) = (Conn::new(0), ctx());
    if file {
        after_sendfile(&mut conn, result, 0, &mut ctx)
    } else {
        after_send(&mut conn, result, 0, &mut ctx)
    }
}

macro_rules! send_rule {
    ($($name:ident: $file:expr, $result:expr => $want:expr;)*) => {$(
        #[test]
        fn $name() {
            assert_eq!(send_rule($file, $result), $want);
        }
    )*};
}

send_rule! {
    send_ok_sends_again: false, Ok(0) => Sent::More;
    send_eintr_sends_again: false, Err(Errno::INTR) => Sent::More;
    send_eagain_waits_for_epollout: false, Err(Errno::AGAIN) => Sent::Blocked;
    send_epipe_fails: false, Err(Errno::PIPE) => Sent::Failed;
    sendfile_progress_sends_again: true, Ok(10) => Sent::More;
    sendfile_of_nothing_is_a_truncated_file: true, Ok(0) => Sent::Truncated;
    sendfile_eagain_waits_for_epollout: true, Err(Errno::AGAIN) => Sent::Blocked;
    sendfile_reset_fails: true, Err(Errno::CONNRESET) => Sent::Failed;
}
