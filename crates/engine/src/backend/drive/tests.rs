//! Tests of the drive loop: whole runs through a fake socket that forces EINTR, EAGAIN and
//! short transfers, the rules of each result, and a table of the step function's decisions.

use super::*;
use crate::backend::pump;
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

/// An operation a drive asked for, without its buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum W {
    Recv,
    Send,
    SendFile,
    Flush,
    Shutdown,
    Close,
    Stop(Verdict),
}

/// The result a test hands back for the operation asked for.
#[derive(Clone, Copy, Debug)]
enum R {
    /// `recv`: these bytes arrived (as many as fit; `Ok(0)` for none: EOF).
    Got(&'static [u8]),
    /// `send`: at most this many bytes went out.
    Took(usize),
    /// `flush` or `shutdown` succeeded.
    Done,
    /// Any operation failed with this errno.
    Fail(Errno),
}

const ALL: usize = usize::MAX;
const CLOSE: &[u8] = b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
const CLOSE_THEN_MORE: &[u8] = b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGET / H";
const FOUR: &[u8] = b"GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n\
GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n";

/// Runs one drive of `conn` from [`Drive::start`], answering each operation from `script`
/// in order, and returns every operation asked for, the last being `Close` or `Stop`.
fn decisions(conn: &mut Conn, ctx: &mut Ctx, readable: bool, script: &[R]) -> Vec<W> {
    let mut drive = Drive::start(conn, readable);
    let mut script = script.iter().copied();
    let mut asked = Vec::new();
    loop {
        let want = drive.want(conn, ctx);
        let w = match &want {
            Want::Recv(_) => W::Recv,
            Want::Send => W::Send,
            Want::SendFile(..) => W::SendFile,
            Want::Flush => W::Flush,
            Want::Shutdown => W::Shutdown,
            Want::Close => W::Close,
            Want::Stop(v) => W::Stop(*v),
        };
        asked.push(w);
        let r = match want {
            Want::Close | Want::Stop(_) => return asked,
            _ => script
                .next()
                .unwrap_or_else(|| panic!("no result for {w:?} after {asked:?}")),
        };
        match (want, r) {
            (Want::Recv(buf), R::Got(bytes)) => {
                let space = buf.capacity() - buf.len();
                let n = bytes.len().min(space);
                buf.extend_from_slice(&bytes[..n]);
                drive.received(conn, Ok(n), space, 0, ctx);
            }
            (Want::Recv(buf), R::Fail(e)) => {
                let space = buf.capacity() - buf.len();
                drive.received(conn, Err(e), space, 0, ctx);
            }
            (Want::Send, R::Took(max)) => {
                let Output::Bytes(b) = conn.output() else {
                    panic!("Send wanted without bytes due");
                };
                let n = b.len().min(max);
                drive.sent(conn, Ok(n), 0, ctx);
            }
            (Want::Send, R::Fail(e)) => drive.sent(conn, Err(e), 0, ctx),
            (Want::SendFile(_, _, len), R::Took(max)) => {
                assert!(len <= SENDFILE_CHUNK, "one sendfile is at most a chunk");
                drive.sent_file(conn, Ok(len.min(max)), 0, ctx);
            }
            (Want::SendFile(..), R::Fail(e)) => drive.sent_file(conn, Err(e), 0, ctx),
            (Want::Flush, R::Done) => drive.flushed(conn, Ok(()), 0, ctx),
            (Want::Flush, R::Fail(e)) => drive.flushed(conn, Err(e), 0, ctx),
            (Want::Shutdown, R::Done) => drive.shut(conn, Ok(()), 0, ctx),
            (Want::Shutdown, R::Fail(e)) => drive.shut(conn, Err(e), 0, ctx),
            (_, r) => panic!("result {r:?} does not answer {w:?} (after {asked:?})"),
        }
    }
}

/// The same script through [`run`], whose steps are [`Drive::want`]'s folded into the
/// executor: an [`Io`] that answers each call from the script and records it.
struct ScriptIo {
    script: VecDeque<R>,
    asked: Vec<W>,
}

impl ScriptIo {
    fn answer(&mut self, w: W) -> R {
        self.asked.push(w);
        let asked = &self.asked;
        self.script
            .pop_front()
            .unwrap_or_else(|| panic!("no result for {w:?} after {asked:?}"))
    }
}

impl Io for ScriptIo {
    fn recv(&mut self, buf: &mut Vec<u8>) -> Result<usize, Errno> {
        match self.answer(W::Recv) {
            R::Got(bytes) => {
                let n = bytes.len().min(buf.capacity() - buf.len());
                buf.extend_from_slice(&bytes[..n]);
                Ok(n)
            }
            R::Fail(e) => Err(e),
            r => panic!("{r:?} does not answer a recv"),
        }
    }

    fn send(&mut self, bytes: &[u8]) -> Result<usize, Errno> {
        match self.answer(W::Send) {
            R::Took(max) => Ok(bytes.len().min(max)),
            R::Fail(e) => Err(e),
            r => panic!("{r:?} does not answer a send"),
        }
    }

    fn sendfile(&mut self, _: &File, _: u64, len: usize) -> Result<usize, Errno> {
        assert!(len <= SENDFILE_CHUNK, "one sendfile is at most a chunk");
        match self.answer(W::SendFile) {
            R::Took(max) => Ok(len.min(max)),
            R::Fail(e) => Err(e),
            r => panic!("{r:?} does not answer a sendfile"),
        }
    }

    fn shutdown_write(&mut self) -> Result<(), Errno> {
        match self.answer(W::Shutdown) {
            R::Done => Ok(()),
            R::Fail(e) => Err(e),
            r => panic!("{r:?} does not answer a shutdown"),
        }
    }

    fn flush(&mut self) -> Result<(), Errno> {
        match self.answer(W::Flush) {
            R::Done => Ok(()),
            R::Fail(e) => Err(e),
            r => panic!("{r:?} does not answer a flush"),
        }
    }

    fn close_notify(&mut self) {
        self.asked.push(W::Close);
    }
}

/// [`decisions`] through [`run`].
fn run_decisions(conn: &mut Conn, ctx: &mut Ctx, readable: bool, script: &[R]) -> Vec<W> {
    let mut io = ScriptIo {
        script: script.iter().copied().collect(),
        asked: Vec::new(),
    };
    let verdict = run(Drive::start(conn, readable), conn, &mut io, 0, ctx);
    if io.asked.last() == Some(&W::Close) {
        assert_eq!(verdict, Verdict::Close);
    } else {
        io.asked.push(W::Stop(verdict));
    }
    assert!(io.script.is_empty(), "results left over: {:?}", io.script);
    io.asked
}

/// Puts a connection (and its context) in the state a row begins from.
type Prepare = fn(&mut Conn, &mut Ctx);

macro_rules! decisions {
    ($($name:ident: $prepare:expr, $readable:expr, [$($r:expr),* $(,)?] => [$($w:expr),* $(,)?];)*) => {$(
        #[test]
        fn $name() {
            let prepare: Prepare = $prepare;
            let (mut conn, mut x) = (Conn::new(0), ctx());
            prepare(&mut conn, &mut x);
            assert_eq!(decisions(&mut conn, &mut x, $readable, &[$($r),*]), [$($w),*]);
            let (mut conn, mut x) = (Conn::new(0), ctx());
            prepare(&mut conn, &mut x);
            assert_eq!(run_decisions(&mut conn, &mut x, $readable, &[$($r),*]), [$($w),*], "run");
        }
    )*};
}

fn fresh(_: &mut Conn, _: &mut Ctx) {}

fn timed_out(conn: &mut Conn, ctx: &mut Ctx) {
    conn.on_timeout(crate::metrics::TimeoutKind::KeepAlive, ctx);
}

fn low_water(_: &mut Conn, ctx: &mut Ctx) {
    ctx.high_water = 1;
}

/// A context whose `/f` answers with three chunks of a file (the test binary; the fake
/// socket never reads it).
fn file_route(_: &mut Conn, ctx: &mut Ctx) {
    let router = crate::router::Router::new().get(
        "/f",
        |_: &twelve_http::Request<'_, '_>, _: &[u8], r: &mut crate::response::Response<'_>| {
            let file = File::open(std::env::current_exe().unwrap()).unwrap();
            let len = 3 * SENDFILE_CHUNK as u64;
            let body = crate::response::FileBody {
                file,
                offset: 0,
                len,
            };
            r.send_file(200, "application/octet-stream", &[], body);
        },
    );
    *ctx = crate::conn::tests::ctx_with(twelve_http::Limits::default(), router);
}

const GET_FILE: &[u8] = b"GET /f HTTP/1.1\r\nHost: a\r\n\r\n";
const CHUNK: usize = SENDFILE_CHUNK;

use R::{Done, Fail, Got, Took};

decisions! {
    drive_a_request_is_read_answered_sent_and_waits_for_more:
        fresh, true, [Got(GET), Took(ALL), Done]
        => [W::Recv, W::Send, W::Flush, W::Stop(Verdict::Open)];
    drive_not_readable_and_nothing_to_send_waits_without_io:
        fresh, false, [Done] => [W::Flush, W::Stop(Verdict::Open)];
    drive_a_timed_out_connection_closes_at_once:
        timed_out, true, [] => [W::Stop(Verdict::Close)];
    drive_eintr_on_recv_reads_again:
        fresh, true, [Fail(Errno::INTR), Got(GET), Took(ALL), Done]
        => [W::Recv, W::Recv, W::Send, W::Flush, W::Stop(Verdict::Open)];
    drive_eagain_on_recv_goes_on_to_the_output:
        fresh, true, [Fail(Errno::AGAIN), Done] => [W::Recv, W::Flush, W::Stop(Verdict::Open)];
    drive_eof_on_an_idle_connection_closes_cleanly:
        fresh, true, [Got(b""), Done] => [W::Recv, W::Flush, W::Close];
    drive_a_reset_on_recv_is_a_reset:
        fresh, true, [Fail(Errno::CONNRESET)] => [W::Recv, W::Stop(Verdict::Reset)];
    drive_a_partial_send_sends_the_rest:
        fresh, true, [Got(GET), Took(5), Took(ALL), Done]
        => [W::Recv, W::Send, W::Send, W::Flush, W::Stop(Verdict::Open)];
    drive_eintr_on_send_sends_again:
        fresh, true, [Got(GET), Fail(Errno::INTR), Took(ALL), Done]
        => [W::Recv, W::Send, W::Send, W::Flush, W::Stop(Verdict::Open)];
    drive_eagain_on_send_waits_for_the_socket:
        fresh, true, [Got(GET), Fail(Errno::AGAIN)]
        => [W::Recv, W::Send, W::Stop(Verdict::Open)];
    drive_a_failed_send_is_a_reset:
        fresh, true, [Got(GET), Fail(Errno::PIPE)]
        => [W::Recv, W::Send, W::Stop(Verdict::Reset)];
    drive_a_layer_that_holds_bytes_waits_for_the_socket:
        fresh, true, [Got(GET), Took(ALL), Fail(Errno::AGAIN)]
        => [W::Recv, W::Send, W::Flush, W::Stop(Verdict::Open)];
    drive_a_failed_flush_is_a_reset:
        fresh, true, [Got(GET), Took(ALL), Fail(Errno::PIPE)]
        => [W::Recv, W::Send, W::Flush, W::Stop(Verdict::Reset)];
    drive_connection_close_consumed_whole_closes_without_shutdown:
        fresh, true, [Got(CLOSE), Took(ALL), Done]
        => [W::Recv, W::Send, W::Flush, W::Close];
    drive_connection_close_with_input_behind_shuts_down_and_lingers:
        fresh, true, [Got(CLOSE_THEN_MORE), Took(ALL), Done, Done, Fail(Errno::AGAIN), Done]
        => [W::Recv, W::Send, W::Flush, W::Shutdown, W::Recv, W::Flush,
            W::Stop(Verdict::Open)];
    drive_lingering_ends_at_eof:
        fresh, true, [Got(CLOSE_THEN_MORE), Took(ALL), Done, Done, Got(b""), Done]
        => [W::Recv, W::Send, W::Flush, W::Shutdown, W::Recv, W::Flush, W::Close];
    drive_a_failed_shutdown_closes:
        fresh, true, [Got(CLOSE_THEN_MORE), Took(ALL), Done, Fail(Errno::NOTCONN)]
        => [W::Recv, W::Send, W::Flush, W::Shutdown, W::Stop(Verdict::Close)];
    drive_requests_held_back_by_backpressure_are_answered_after_the_flush:
        low_water, true,
        [Got(FOUR), Took(ALL), Done, Took(ALL), Done, Took(ALL), Done, Took(ALL), Done]
        => [W::Recv, W::Send, W::Flush, W::Send, W::Flush, W::Send, W::Flush, W::Send, W::Flush,
            W::Stop(Verdict::Open)];
    drive_a_file_body_follows_its_head_a_chunk_per_sendfile:
        file_route, true, [Got(GET_FILE), Took(ALL), Took(CHUNK), Took(CHUNK), Took(CHUNK), Done]
        => [W::Recv, W::Send, W::SendFile, W::SendFile, W::SendFile, W::Flush,
            W::Stop(Verdict::Open)];
    drive_a_file_that_ends_early_closes:
        file_route, true, [Got(GET_FILE), Took(ALL), Took(0)]
        => [W::Recv, W::Send, W::SendFile, W::Stop(Verdict::Close)];
    drive_eagain_on_sendfile_waits_for_the_socket:
        file_route, true, [Got(GET_FILE), Took(ALL), Fail(Errno::AGAIN)]
        => [W::Recv, W::Send, W::SendFile, W::Stop(Verdict::Open)];
}

#[test]
fn drive_asked_again_asks_for_the_same() {
    let (mut conn, mut ctx) = (Conn::new(0), ctx());
    let mut drive = Drive::start(&conn, true);
    assert!(matches!(drive.want(&mut conn, &mut ctx), Want::Recv(_)));
    assert!(matches!(drive.want(&mut conn, &mut ctx), Want::Recv(_)));
    let buf = conn.read_vec();
    let space = buf.capacity() - buf.len();
    buf.extend_from_slice(GET);
    drive.received(&mut conn, Ok(GET.len()), space, 0, &mut ctx);
    assert!(matches!(drive.want(&mut conn, &mut ctx), Want::Send));
    assert!(matches!(drive.want(&mut conn, &mut ctx), Want::Send));
    let Output::Bytes(bytes) = conn.output() else {
        unreachable!()
    };
    let n = bytes.len();
    drive.sent(&mut conn, Ok(n), 0, &mut ctx);
    assert!(matches!(drive.want(&mut conn, &mut ctx), Want::Flush));
    assert!(matches!(drive.want(&mut conn, &mut ctx), Want::Flush));
    drive.flushed(&mut conn, Ok(()), 0, &mut ctx);
    assert!(matches!(
        drive.want(&mut conn, &mut ctx),
        Want::Stop(Verdict::Open)
    ));
    assert!(matches!(
        drive.want(&mut conn, &mut ctx),
        Want::Stop(Verdict::Open)
    ));
}

#[test]
fn drive_with_a_file_body_due_sends_it_before_reading_on() {
    let (mut conn, mut ctx) = (Conn::new(0), ctx());
    file_route(&mut conn, &mut ctx);
    let first = decisions(
        &mut conn,
        &mut ctx,
        true,
        &[Got(GET_FILE), Took(ALL), Fail(Errno::AGAIN)],
    );
    assert_eq!(
        first,
        [W::Recv, W::Send, W::SendFile, W::Stop(Verdict::Open)]
    );
    // Readable again: the file body goes out first; the read it held back follows.
    let script = [
        Took(CHUNK),
        Took(CHUNK),
        Took(CHUNK),
        Done,
        Fail(Errno::AGAIN),
        Done,
    ];
    let want = [
        W::SendFile,
        W::SendFile,
        W::SendFile,
        W::Flush,
        W::Recv,
        W::Flush,
    ];
    let mut want = want.to_vec();
    want.push(W::Stop(Verdict::Open));
    assert_eq!(decisions(&mut conn, &mut ctx, true, &script), want);
}

/// The epoll batch skips the rest of a drive past its reading when the connection is
/// settled: that rest must be a flush (no syscall on a plain socket) and a wait.
#[test]
fn drive_of_a_settled_connection_only_flushes_and_waits() {
    let served = |conn: &mut Conn, ctx: &mut Ctx| {
        decisions(conn, ctx, true, &[Got(GET), Took(ALL), Done]);
    };
    let idle_eof = |conn: &mut Conn, ctx: &mut Ctx| conn.on_eof(ctx);
    let cases: [(&str, Prepare, bool); 4] = [
        ("fresh", fresh, true),
        ("served", served, true),
        ("timed out", timed_out, false),
        ("eof", idle_eof, false),
    ];
    for (name, prepare, settled) in cases {
        let (mut conn, mut x) = (Conn::new(0), ctx());
        prepare(&mut conn, &mut x);
        assert_eq!(conn.settled(), settled, "{name}");
        if settled {
            let rest = decisions(&mut conn, &mut x, false, &[Done]);
            assert_eq!(rest, [W::Flush, W::Stop(Verdict::Open)], "{name}");
        }
    }
}
