//! One connection to the database: start-up and authentication ([`connect`]), the statements
//! prepared on it, and the task that drives it for its whole life ([`drive`]): it connects
//! (again, with backoff, after a failure), writes whatever queries were queued, and hands each
//! its rows when its `ReadyForQuery` arrives (the server answers pipelined queries in order,
//! PostgreSQL protocol, "Pipelining").

use crate::error::{ConnectError, Error, count_connect, count_error};
use crate::pool::Database;
use crate::rows::Rows;
use crate::url::Target;
use bytes::{Buf, BytesMut};
use fallible_iterator::FallibleIterator;
use postgres_protocol::authentication::{md5_hash, sasl};
use postgres_protocol::message::{backend::Message, frontend};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::poll_fn;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use twelve_engine::rt::{Stream, sleep};

/// First and longest wait between connection attempts.
const BACKOFF_MIN: Duration = Duration::from_millis(20);
const BACKOFF_MAX: Duration = Duration::from_secs(1);
/// Longest a start-up may take before it counts as failed.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Bytes read from the socket at a time.
const READ_BYTES: usize = 64 * 1024;
/// Longest backend message taken (PostgreSQL's own limit on a field is 1 GB; the apps' rows
/// are far below this): a longer length is a broken stream, not a reason to allocate it.
const MAX_MESSAGE: usize = 256 << 20;

/// A query's place in line: its rows, its outcome, the task that awaits it.
#[derive(Default)]
pub(crate) struct Slot {
    pub(crate) rows: RefCell<Rows>,
    pub(crate) error: Cell<Option<Error>>,
    pub(crate) done: Cell<bool>,
    pub(crate) waker: RefCell<Option<Waker>>,
}

/// Slots kept for reuse per thread: a query in flight holds one, so a worker's queries
/// allocate none once it has this many.
const SPARE_SLOTS: usize = 1024;

thread_local! {
    /// Slots whose query was answered and read, for the next queries.
    static SPARE: RefCell<Vec<Rc<Slot>>> = const { RefCell::new(Vec::new()) };
}

impl Slot {
    /// A slot for a new query: a spare one if the thread has one.
    fn take() -> Rc<Slot> {
        SPARE
            .try_with(|s| s.try_borrow_mut().ok()?.pop())
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    /// Keeps `slot` for the next query once nothing else holds it (its connection answered
    /// it and its query was read or dropped): as new, its rows' buffer back with theirs.
    pub(crate) fn recycle(slot: Rc<Slot>) {
        if Rc::strong_count(&slot) != 1 {
            return;
        }
        drop(slot.rows.take());
        slot.error.set(None);
        slot.done.set(false);
        drop(slot.waker.take());
        // `try_with`: a query dropped as its thread ends finds the list gone.
        let _ = SPARE.try_with(|s| {
            if let Ok(mut s) = s.try_borrow_mut()
                && s.len() < SPARE_SLOTS
            {
                s.push(slot);
            }
        });
    }

    fn finish(&self, error: Option<Error>) {
        if let Some(e) = error {
            count_error(e);
            self.error.set(Some(e));
        }
        self.done.set(true);
        if let Some(w) = self.waker.borrow_mut().take() {
            w.wake();
        }
    }
}

/// What a connection's driver and its users share (one thread: `Rc`, `RefCell`).
#[derive(Default)]
pub(crate) struct Shared {
    /// Encoded queries not yet written.
    pub(crate) out: RefCell<BytesMut>,
    /// Queries written or queued, oldest first: each gets the next answer.
    pub(crate) queue: RefCell<VecDeque<Rc<Slot>>>,
    /// Started up, statements prepared, not failed since.
    pub(crate) up: Cell<bool>,
    /// The first connection attempt is under way: queries wait for it (a worker's first
    /// requests), rather than fail as they do while a failed connection waits to retry.
    pub(crate) starting: Cell<bool>,
    /// The driver, to wake when a query is queued.
    pub(crate) driver: RefCell<Option<Waker>>,
}

impl Shared {
    /// Queues a query (`encode` writes its messages) and wakes the driver.
    pub(crate) fn push(&self, encode: impl FnOnce(&mut BytesMut)) -> Rc<Slot> {
        let slot = Slot::take();
        encode(&mut self.out.borrow_mut());
        self.queue.borrow_mut().push_back(Rc::clone(&slot));
        if let Some(w) = self.driver.borrow().as_ref() {
            w.wake_by_ref();
        }
        slot
    }

    /// The connection failed: every query in line fails, nothing queued is sent.
    fn fail_all(&self) {
        self.up.set(false);
        self.out.borrow_mut().clear();
        let queue = std::mem::take(&mut *self.queue.borrow_mut());
        for slot in queue {
            slot.finish(Some(Error::Lost));
        }
    }
}

/// The life of one connection: connect, serve until it fails, wait, again. Ends when the
/// worker's runtime is dropped with its thread.
pub(crate) async fn drive(db: Rc<Database>, shared: Rc<Shared>) {
    let mut backoff = BACKOFF_MIN;
    loop {
        match connect(&db).await {
            Ok((stream, rbuf)) => {
                count_connect(true);
                backoff = BACKOFF_MIN;
                shared.starting.set(false);
                shared.up.set(true);
                let _ = serve(&stream, rbuf, &shared).await;
                shared.fail_all();
            }
            Err(_) => {
                count_connect(false);
                shared.starting.set(false);
                shared.fail_all();
            }
        }
        sleep(backoff).await;
        backoff = (backoff * 2).min(BACKOFF_MAX);
    }
}

/// Writes what is queued and reads answers until the connection fails. Answers are read
/// straight into `rbuf` (no copy in between), as many as have arrived per `recv`.
async fn serve(stream: &Stream, rbuf: BytesMut, shared: &Shared) -> Result<(), Error> {
    let mut rbuf = rbuf.to_vec();
    rbuf.reserve(READ_BYTES);
    // Bytes of `rbuf` already handed out.
    let mut start = 0;
    poll_fn(|cx| {
        *shared.driver.borrow_mut() = Some(cx.waker().clone());
        let mut progress = true;
        for _ in 0..ROUNDS {
            progress = false;
            {
                let mut out = shared.out.borrow_mut();
                while !out.is_empty() {
                    match stream.poll_write(cx, &out) {
                        Poll::Ready(Ok(n)) => {
                            out.advance(n);
                            progress = true;
                        }
                        Poll::Ready(Err(_)) => return Poll::Ready(Err(Error::Lost)),
                        Poll::Pending => break,
                    }
                }
            }
            make_room(&mut rbuf, &mut start);
            match stream.poll_read(cx, &mut rbuf) {
                Poll::Ready(Ok(0)) | Poll::Ready(Err(_)) => return Poll::Ready(Err(Error::Lost)),
                Poll::Ready(Ok(_)) => {
                    match answer(&rbuf[start..], shared) {
                        Ok(used) => start += used,
                        Err(e) => return Poll::Ready(Err(e)),
                    }
                    progress = true;
                }
                Poll::Pending => {}
            }
            if !progress {
                break;
            }
        }
        if progress {
            // Still busy: let the worker's other tasks and connections have their turn.
            cx.waker().wake_by_ref();
        }
        // Every query in line is written or waits for room: each owes an answer, which
        // lets the worker take a backlog's answers several per wake-up (twelve_engine's
        // `Coalesce::Auto`).
        stream.owe(shared.queue.borrow().len());
        Poll::Pending
    })
    .await
}

/// Write-and-read rounds of one poll of the driver.
const ROUNDS: usize = 32;

/// Least free space a read is given.
const READ_ROOM: usize = READ_BYTES / 4;

/// Drops the bytes of `rbuf` before `start` (handed out) when that is all of it or when the
/// free space runs short, and keeps at least [`READ_ROOM`] free (more when one message is
/// longer).
fn make_room(rbuf: &mut Vec<u8>, start: &mut usize) {
    if *start == rbuf.len() {
        rbuf.clear();
        *start = 0;
    } else if *start > 0 && rbuf.capacity() - rbuf.len() < READ_ROOM {
        rbuf.drain(..*start);
        *start = 0;
    }
    // A message longer than what is free waits for the rest: room for all of it.
    let need = match rbuf[*start..] {
        [_, a, b, c, d, ..] => (1 + i32::from_be_bytes([a, b, c, d]).max(4) as usize)
            .min(MAX_MESSAGE)
            .saturating_sub(rbuf.len() - *start),
        _ => 0,
    };
    rbuf.reserve(need.max(READ_ROOM));
}

/// A backend message: its type byte, its body and its whole length.
type Framed<'a> = (u8, &'a [u8], usize);

/// A backend message's type byte, its body and its whole length, if `buf` holds all of it;
/// `Err` for a length shorter than its own 4 bytes (PostgreSQL protocol, "Message Formats").
fn message(buf: &[u8]) -> Result<Option<Framed<'_>>, Error> {
    let Some(&[tag, a, b, c, d]) = buf.first_chunk::<5>() else {
        return Ok(None);
    };
    let len = i32::from_be_bytes([a, b, c, d]);
    if !(4..MAX_MESSAGE as i32).contains(&len) {
        return Err(Error::Protocol);
    }
    let total = 1 + len as usize;
    Ok(buf.get(5..total).map(|body| (tag, body, total)))
}

/// Hands every complete message in `buf` to the query at the front of the line; returns the
/// bytes used (a partial message stays for the next read).
fn answer(buf: &[u8], shared: &Shared) -> Result<usize, Error> {
    let mut used = 0;
    while let Some((tag, body, len)) = message(&buf[used..])? {
        used += len;
        let queue = shared.queue.borrow();
        let Some(front) = queue.front() else {
            // Nothing asked: a notice, a parameter change; anything else is out of step.
            match tag {
                b'N' | b'S' => continue,
                _ => return Err(Error::Protocol),
            }
        };
        match tag {
            b'D' if !front.rows.borrow_mut().push(body) => return Err(Error::Protocol),
            b'E' => front.error.set(Some(sqlstate(body))),
            b'Z' => {
                drop(queue);
                if let Some(slot) = shared.queue.borrow_mut().pop_front() {
                    let e = slot.error.take();
                    slot.finish(e);
                }
            }
            // BindComplete, CommandComplete, a notice, ...
            _ => {}
        }
    }
    Ok(used)
}

/// The SQLSTATE of an `ErrorResponse` body (`XX000` if it has none): fields of a type byte
/// and a NUL-terminated string, up to a NUL type byte.
fn sqlstate(mut body: &[u8]) -> Error {
    while let Some((&kind, rest)) = body.split_first() {
        let Some(end) = rest.iter().position(|&b| b == 0) else {
            break;
        };
        if kind == 0 {
            break;
        }
        if kind == b'C'
            && let Ok(code) = <[u8; 5]>::try_from(&rest[..end])
        {
            return Error::Db(code);
        }
        body = &rest[end + 1..];
    }
    Error::Db(*b"XX000")
}

/// The error's message, for a refused start-up.
fn error_message(body: &postgres_protocol::message::backend::ErrorResponseBody) -> String {
    let mut fields = body.fields();
    let mut text = String::from("(no message)");
    while let Ok(Some(f)) = fields.next() {
        if f.type_() == b'M' {
            text = String::from_utf8_lossy(f.value_bytes()).into_owned();
        }
    }
    text
}

/// Opens the socket, starts up, authenticates and prepares `db`'s statements. Returns the
/// stream and what was read past the last start-up message.
pub(crate) async fn connect(db: &Database) -> Result<(Stream, BytesMut), ConnectError> {
    let t = &db.target;
    let work = async {
        let stream = open(t).await?;
        let mut rbuf = BytesMut::with_capacity(READ_BYTES);
        let mut out = BytesMut::new();
        let params = [
            ("user", t.user.as_str()),
            ("database", t.database.as_str()),
            ("client_encoding", "UTF8"),
        ];
        frontend::startup_message(params, &mut out).map_err(|e| io(t, e))?;
        send(&stream, &mut out, t).await?;
        authenticate(&stream, &mut rbuf, t).await?;
        for (i, (sql, types)) in db.statements.iter().enumerate() {
            let mut name = itoa::Buffer::new();
            frontend::parse(
                statement_name(i, &mut name),
                sql,
                types.iter().copied(),
                &mut out,
            )
            .map_err(|e| io(t, e))?;
        }
        frontend::sync(&mut out);
        send(&stream, &mut out, t).await?;
        loop {
            match next(&stream, &mut rbuf, t).await? {
                Message::ErrorResponse(body) => {
                    return Err(ConnectError::Refused(format!(
                        "preparing a statement: {}",
                        error_message(&body)
                    )));
                }
                Message::ReadyForQuery(_) => return Ok((stream, rbuf)),
                _ => {}
            }
        }
    };
    first(work, sleep(CONNECT_TIMEOUT))
        .await
        .unwrap_or_else(|| Err(ConnectError::TimedOut(t.describe())))
}

/// The name statement `i` is prepared under.
pub(crate) fn statement_name(i: usize, buf: &mut itoa::Buffer) -> &str {
    // Its index in decimal: any string names a statement, and this one costs no allocation
    // per query.
    buf.format(i)
}

/// Connects once and closes: a server checks its `--database` at start with this, so an
/// unreachable database is one clear error rather than 503s.
pub fn check(db: &Database) -> Result<(), ConnectError> {
    let db = db.clone();
    twelve_engine::rt::block_on(async move { connect(&db).await.map(drop) })
}

async fn open(t: &Target) -> Result<Stream, ConnectError> {
    match t.socket_path() {
        Some(path) => Stream::connect_unix(&path)
            .await
            .map_err(|e| ConnectError::Io(t.describe(), e)),
        None => {
            let addrs = std::net::ToSocketAddrs::to_socket_addrs(&(t.host.as_str(), t.port))
                .map_err(|e| ConnectError::Io(t.describe(), e))?;
            let mut last = None;
            for a in addrs {
                match Stream::connect_tcp(a).await {
                    Ok(s) => return Ok(s),
                    Err(e) => last = Some(e),
                }
            }
            Err(ConnectError::Io(
                t.describe(),
                last.unwrap_or_else(|| std::io::ErrorKind::NotFound.into()),
            ))
        }
    }
}

fn io(t: &Target, e: std::io::Error) -> ConnectError {
    ConnectError::Io(t.describe(), e)
}

async fn send(stream: &Stream, out: &mut BytesMut, t: &Target) -> Result<(), ConnectError> {
    stream.write_all(out).await.map_err(|e| io(t, e))?;
    out.clear();
    Ok(())
}

/// The next message, reading as needed.
async fn next(stream: &Stream, rbuf: &mut BytesMut, t: &Target) -> Result<Message, ConnectError> {
    let mut scratch = Vec::with_capacity(READ_BYTES);
    loop {
        if let Some(m) = Message::parse(rbuf).map_err(|e| io(t, e))? {
            return Ok(m);
        }
        scratch.clear();
        match stream.read(&mut scratch).await.map_err(|e| io(t, e))? {
            0 => return Err(io(t, std::io::ErrorKind::UnexpectedEof.into())),
            n => rbuf.extend_from_slice(&scratch[..n]),
        }
    }
}

/// The authentication exchange, to `AuthenticationOk`; then waits for the server's first
/// `ReadyForQuery`.
async fn authenticate(
    stream: &Stream,
    rbuf: &mut BytesMut,
    t: &Target,
) -> Result<(), ConnectError> {
    let password = t.password.as_deref().unwrap_or("").as_bytes();
    let mut scram: Option<sasl::ScramSha256> = None;
    let mut out = BytesMut::new();
    loop {
        match next(stream, rbuf, t).await? {
            Message::AuthenticationOk => {}
            Message::AuthenticationCleartextPassword => {
                frontend::password_message(password, &mut out).map_err(|e| io(t, e))?;
            }
            Message::AuthenticationMd5Password(body) => {
                let hash = md5_hash(t.user.as_bytes(), password, body.salt());
                frontend::password_message(hash.as_bytes(), &mut out).map_err(|e| io(t, e))?;
            }
            Message::AuthenticationSasl(body) => {
                let mut mechanisms = body.mechanisms();
                let mut scram_offered = false;
                while let Ok(Some(m)) = mechanisms.next() {
                    scram_offered |= m == sasl::SCRAM_SHA_256;
                }
                if !scram_offered {
                    return Err(ConnectError::Unsupported("SASL without SCRAM-SHA-256"));
                }
                let s = sasl::ScramSha256::new(password, sasl::ChannelBinding::unsupported());
                frontend::sasl_initial_response(sasl::SCRAM_SHA_256, s.message(), &mut out)
                    .map_err(|e| io(t, e))?;
                scram = Some(s);
            }
            Message::AuthenticationSaslContinue(body) => {
                let s = scram
                    .as_mut()
                    .ok_or(ConnectError::Unsupported("SASL out of order"))?;
                s.update(body.data()).map_err(|e| io(t, e))?;
                frontend::sasl_response(s.message(), &mut out).map_err(|e| io(t, e))?;
            }
            Message::AuthenticationSaslFinal(body) => {
                let s = scram
                    .as_mut()
                    .ok_or(ConnectError::Unsupported("SASL out of order"))?;
                s.finish(body.data()).map_err(|e| io(t, e))?;
            }
            Message::ErrorResponse(body) => {
                return Err(ConnectError::Refused(error_message(&body)));
            }
            Message::ReadyForQuery(_) => return Ok(()),
            Message::AuthenticationGss
            | Message::AuthenticationKerberosV5
            | Message::AuthenticationScmCredential
            | Message::AuthenticationSspi
            | Message::AuthenticationGssContinue(_) => {
                return Err(ConnectError::Unsupported("GSSAPI, Kerberos, SSPI"));
            }
            _ => {}
        }
        if !out.is_empty() {
            send(stream, &mut out, t).await?;
        }
    }
}

/// Whichever of `a` and `b` finishes first: `Some` of `a`'s output, `None` if `b` won.
async fn first<A: std::future::Future>(
    a: A,
    b: impl std::future::Future<Output = ()>,
) -> Option<A::Output> {
    let mut a = std::pin::pin!(a);
    let mut b = std::pin::pin!(b);
    poll_fn(|cx: &mut Context<'_>| {
        if let Poll::Ready(v) = a.as_mut().poll(cx) {
            return Poll::Ready(Some(v));
        }
        b.as_mut().poll(cx).map(|()| None)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![tag];
        m.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    /// A `DataRow` of one `int4`.
    fn row(v: i32) -> Vec<u8> {
        let mut b = 1u16.to_be_bytes().to_vec();
        b.extend_from_slice(&4i32.to_be_bytes());
        b.extend_from_slice(&v.to_be_bytes());
        msg(b'D', &b)
    }

    fn error(fields: &[(u8, &str)]) -> Vec<u8> {
        let mut b = Vec::new();
        for (k, v) in fields {
            b.push(*k);
            b.extend_from_slice(v.as_bytes());
            b.push(0);
        }
        b.push(0);
        b
    }

    #[test]
    fn messages_are_cut_by_their_length() {
        let z = msg(b'Z', b"I");
        let mut two = z.clone();
        two.extend(msg(b'C', b"SELECT 1\0"));
        type Case<'a> = (&'a [u8], Result<Option<Framed<'a>>, Error>);
        let cases: &[Case<'_>] = &[
            (b"", Ok(None)),
            (&z[..4], Ok(None)),
            (&z[..5], Ok(None)),
            (&z, Ok(Some((b'Z', b"I", 6)))),
            (&two, Ok(Some((b'Z', b"I", 6)))),
            (&[b'1', 0, 0, 0, 4], Ok(Some((b'1', b"", 5)))),
            (&[b'Z', 0, 0, 0, 3, 0], Err(Error::Protocol)),
            (&[b'Z', 0xff, 0xff, 0xff, 0xff], Err(Error::Protocol)),
            (&[b'D', 0x7f, 0xff, 0xff, 0xff], Err(Error::Protocol)),
        ];
        for (buf, want) in cases {
            assert_eq!(&message(buf), want, "{buf:?}");
        }
    }

    #[test]
    fn sqlstate_is_the_c_field() {
        let cases: &[(Vec<u8>, [u8; 5])] = &[
            (
                error(&[(b'S', "ERROR"), (b'C', "23505"), (b'M', "dup")]),
                *b"23505",
            ),
            (error(&[(b'C', "57P01")]), *b"57P01"),
            (error(&[(b'S', "ERROR"), (b'M', "no code")]), *b"XX000"),
            (error(&[(b'C', "123")]), *b"XX000"),
            (error(&[]), *b"XX000"),
            (b"C40001".to_vec(), *b"XX000"),
            (Vec::new(), *b"XX000"),
        ];
        for (body, want) in cases {
            assert_eq!(sqlstate(body), Error::Db(*want), "{body:?}");
        }
    }

    #[test]
    fn answers_go_to_the_queries_in_line_whatever_the_reads_cut() {
        // Two queries: rows 7 and 8 then success; an error. A notice between.
        let mut stream = Vec::new();
        for m in [
            msg(b'2', b""),
            row(7),
            row(8),
            msg(b'C', b"SELECT 2\0"),
            msg(b'Z', b"I"),
            msg(b'N', &error(&[(b'M', "hi")])),
            msg(b'E', &error(&[(b'C', "22P02")])),
            msg(b'Z', b"I"),
        ] {
            stream.extend(m);
        }
        for cut in 0..=stream.len() {
            let shared = Shared::default();
            let a = shared.push(|_| {});
            let b = shared.push(|_| {});
            let mut buf = Vec::new();
            let mut start = 0;
            for part in [&stream[..cut], &stream[cut..]] {
                buf.extend_from_slice(part);
                start += answer(&buf[start..], &shared).unwrap();
            }
            assert_eq!(start, stream.len(), "cut at {cut}");
            assert!(a.done.get() && b.done.get(), "cut at {cut}");
            assert_eq!(a.error.get(), None);
            let rows = a.rows.take();
            let ints: Vec<_> = rows.iter().map(|r| r.int(0)).collect();
            assert_eq!(ints, [Some(7), Some(8)], "cut at {cut}");
            assert_eq!(b.error.get(), Some(Error::Db(*b"22P02")));
            assert!(shared.queue.borrow().is_empty());
        }
    }

    #[test]
    fn a_slot_is_reused_as_new_once_nothing_else_holds_it() {
        let shared = Shared::default();
        let a = shared.push(|_| {});
        let first = Rc::as_ptr(&a);
        // In line: the driver holds it too, so it is not kept.
        Slot::recycle(Rc::clone(&a));
        let b = shared.push(|_| {});
        assert_ne!(Rc::as_ptr(&b), first);
        let stream = [
            msg(b'2', b""),
            row(7),
            msg(b'C', b"SELECT 1\0"),
            msg(b'Z', b"I"),
            msg(b'E', &error(&[(b'C', "22P02")])),
            msg(b'Z', b"I"),
        ]
        .concat();
        answer(&stream, &shared).unwrap();
        assert!(a.done.get() && b.error.get().is_some());
        // Answered, rows unread, error set: each comes back as new.
        for (old, slot) in [(first, a), (Rc::as_ptr(&b), b)] {
            Slot::recycle(slot);
            let again = shared.push(|_| {});
            assert_eq!(Rc::as_ptr(&again), old);
            assert!(!again.done.get() && again.error.get().is_none());
            assert!(again.rows.borrow().is_empty() && again.waker.borrow().is_none());
        }
    }

    #[test]
    fn out_of_step_answers_are_a_protocol_error() {
        let shared = Shared::default();
        // With no query in line, a notice or a parameter status passes; a row does not.
        assert_eq!(answer(&msg(b'N', &error(&[])), &shared), Ok(6));
        assert_eq!(answer(&msg(b'S', b"a\0b\0"), &shared), Ok(9));
        assert_eq!(answer(&row(1), &shared), Err(Error::Protocol));
        let q = shared.push(|_| {});
        assert_eq!(answer(&msg(b'D', b"\0"), &shared), Err(Error::Protocol));
        assert!(!q.done.get());
    }

    #[test]
    fn room_is_made_by_dropping_what_was_handed_out() {
        // (bytes in the buffer, handed out) -> handed out after, bytes kept
        let cases: &[(usize, usize, usize, usize)] =
            &[(0, 0, 0, 0), (100, 100, 0, 0), (100, 40, 40, 100)];
        for &(len, start, want_start, want_len) in cases {
            let mut buf = vec![0u8; len];
            buf.shrink_to_fit();
            buf.reserve(READ_BYTES);
            let mut s = start;
            make_room(&mut buf, &mut s);
            assert_eq!((s, buf.len()), (want_start, want_len), "{len} {start}");
            assert!(buf.capacity() - buf.len() >= READ_ROOM);
        }
        // Short of room with bytes handed out: they go, the rest moves to the front.
        let mut buf = Vec::with_capacity(READ_ROOM + 10);
        buf.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
        let mut s = 10;
        make_room(&mut buf, &mut s);
        assert_eq!((s, &buf[..]), (0, &[11u8, 12][..]));
        // A long message that has begun: room for all of it.
        let mut buf = vec![b'D', 0, 0x10, 0, 0];
        let mut s = 0;
        make_room(&mut buf, &mut s);
        assert!(buf.capacity() > 0x10_0000);
    }
}
