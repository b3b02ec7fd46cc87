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

/// A query's place in line: its rows, its outcome, the task that awaits it.
#[derive(Default)]
pub(crate) struct Slot {
    pub(crate) rows: RefCell<Rows>,
    pub(crate) error: Cell<Option<Error>>,
    pub(crate) done: Cell<bool>,
    pub(crate) waker: RefCell<Option<Waker>>,
}

impl Slot {
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
        let slot = Rc::new(Slot::default());
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

/// Writes what is queued and reads answers until the connection fails.
async fn serve(stream: &Stream, mut rbuf: BytesMut, shared: &Shared) -> Result<(), Error> {
    let mut scratch = Vec::with_capacity(READ_BYTES);
    poll_fn(|cx| {
        *shared.driver.borrow_mut() = Some(cx.waker().clone());
        for _ in 0..ROUNDS {
            let mut progress = false;
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
            scratch.clear();
            match stream.poll_read(cx, &mut scratch) {
                Poll::Ready(Ok(0)) | Poll::Ready(Err(_)) => return Poll::Ready(Err(Error::Lost)),
                Poll::Ready(Ok(n)) => {
                    rbuf.extend_from_slice(&scratch[..n]);
                    if let Err(e) = answer(&mut rbuf, shared) {
                        return Poll::Ready(Err(e));
                    }
                    progress = true;
                }
                Poll::Pending => {}
            }
            if !progress {
                return Poll::Pending;
            }
        }
        // Still busy: let the worker's other tasks and connections have their turn.
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await
}

/// Write-and-read rounds of one poll of the driver.
const ROUNDS: usize = 32;

/// Hands every complete message in `rbuf` to the query at the front of the line.
fn answer(rbuf: &mut BytesMut, shared: &Shared) -> Result<(), Error> {
    loop {
        let msg = match Message::parse(rbuf) {
            Ok(Some(m)) => m,
            Ok(None) => return Ok(()),
            Err(_) => return Err(Error::Protocol),
        };
        let queue = shared.queue.borrow();
        let Some(front) = queue.front() else {
            // Nothing asked: a notice, a parameter change; anything else is out of step.
            match msg {
                Message::NoticeResponse(_) | Message::ParameterStatus(_) => continue,
                _ => return Err(Error::Protocol),
            }
        };
        match msg {
            Message::DataRow(row) => front.rows.borrow_mut().rows.push(row),
            Message::ErrorResponse(body) => front.error.set(Some(sqlstate(&body))),
            Message::ReadyForQuery(_) => {
                drop(queue);
                if let Some(slot) = shared.queue.borrow_mut().pop_front() {
                    let e = slot.error.take();
                    slot.finish(e);
                }
            }
            _ => {}
        }
    }
}

/// The SQLSTATE of an error (`XX000` if it has none).
fn sqlstate(body: &postgres_protocol::message::backend::ErrorResponseBody) -> Error {
    let mut fields = body.fields();
    while let Ok(Some(f)) = fields.next() {
        if f.type_() == b'C'
            && let Ok(code) = <[u8; 5]>::try_from(f.value_bytes())
        {
            return Error::Db(code);
        }
    }
    Error::Db(*b"XX000")
}

/// The error's message, for a refused start-up.
fn message(body: &postgres_protocol::message::backend::ErrorResponseBody) -> String {
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
                        message(&body)
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
            Message::ErrorResponse(body) => return Err(ConnectError::Refused(message(&body))),
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
