//! A worker's connections to one database and the query API: [`Database`] says where and
//! which statements (shared by every worker), [`Pool`] is a worker's own connections to it
//! (made on the worker's first query, each driven by a task of its runtime), and
//! [`Pool::query`] queues a query at once on the next connection that is up, so that queries
//! made one after another before any `.await` are in flight together (pipelined).

use crate::conn::{self, Shared, Slot, statement_name};
use crate::error::{Error, count_error};
use crate::rows::Rows;
use crate::url::{Target, UrlError};
use bytes::BufMut;
use postgres_protocol::IsNull;
use postgres_protocol::message::frontend;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

/// PostgreSQL's type OID of `int4`, for statements' parameters.
pub const INT4: u32 = 23;
/// `text`.
pub const TEXT: u32 = 25;
/// `int4[]`.
pub const INT4_ARRAY: u32 = 1007;

/// A database and the statements every connection to it prepares. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Database {
    pub(crate) target: Target,
    /// SQL and parameter types, by index ([`Database::statement`]).
    pub(crate) statements: Vec<(String, Vec<u32>)>,
    /// Connections per worker.
    pub(crate) conns: usize,
    /// Tells databases apart in a worker's thread-local pools.
    id: usize,
}

/// A statement of a [`Database`], by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Statement(usize);

/// A parameter of a query.
#[derive(Clone, Copy, Debug)]
pub enum Param<'a> {
    /// `int4`, binary.
    Int(i32),
    /// `text`.
    Text(&'a str),
    /// `int4[]`, binary: one dimension, no NULLs.
    IntArray(&'a [i32]),
}

impl Database {
    /// The database at `url` (see [`Target::parse`]), with 2 connections per worker.
    pub fn new(url: &str) -> Result<Database, UrlError> {
        static IDS: AtomicUsize = AtomicUsize::new(0);
        Ok(Database {
            target: Target::parse(url)?,
            statements: Vec::new(),
            conns: 2,
            id: IDS.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// Connections each worker keeps (at least 1).
    #[must_use]
    pub fn connections_per_worker(mut self, n: usize) -> Self {
        self.conns = n.max(1);
        self
    }

    /// Adds a statement every connection prepares, with the OIDs of its parameters
    /// ([`INT4`], [`TEXT`]).
    pub fn statement(&mut self, sql: &str, params: &[u32]) -> Statement {
        self.statements.push((sql.to_owned(), params.to_vec()));
        Statement(self.statements.len() - 1)
    }

    /// Where it connects, for messages.
    pub fn describe(&self) -> String {
        self.target.describe()
    }
}

/// A worker's connections to one database.
pub struct Pool {
    conns: Vec<Rc<Shared>>,
    next: Cell<usize>,
    /// The connection the last pipeline took: the next one joins it while its queries are
    /// still unsent (see [`choose`]).
    last: Cell<usize>,
}

/// Queries that go on one connection, in the order made: PostgreSQL runs them in that order
/// (a write queued behind reads runs after them). From [`Pool::pipeline`].
pub struct Pipeline {
    conn: Option<Rc<Shared>>,
}

/// What [`choose`] sees of a connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct State {
    up: bool,
    starting: bool,
    /// Queries are queued on it that its driver has not written yet.
    unsent: bool,
}

/// The connection a pipeline goes on (`None`: none is up or starting): the last one taken
/// while it is up with queries unsent, so that every query of a turn of the worker's loop
/// goes out in one write (the driver writes after the handlers of the turn ran); else the
/// next one up in turn from `next` (advanced past it), spreading turns over the
/// connections; else, while the first attempts are under way, the first one starting.
fn choose(
    n: usize,
    state: impl Fn(usize) -> State,
    last: usize,
    next: &mut usize,
) -> Option<usize> {
    if last < n && state(last).up && state(last).unsent {
        return Some(last);
    }
    let mut starting = None;
    for _ in 0..n {
        let i = *next % n;
        *next = (i + 1) % n;
        let s = state(i);
        if s.up {
            return Some(i);
        }
        if s.starting {
            starting.get_or_insert(i);
        }
    }
    starting
}

thread_local! {
    static POOLS: RefCell<Vec<(usize, Rc<Pool>)>> = const { RefCell::new(Vec::new()) };
}

impl Pool {
    /// This worker's pool for `db`, made (and its connections started) on first use.
    pub fn get(db: &Arc<Database>) -> Rc<Pool> {
        POOLS.with(|pools| {
            if let Some((_, p)) = pools.borrow().iter().find(|(id, _)| *id == db.id) {
                return Rc::clone(p);
            }
            let shared_db = Rc::new(Database::clone(db));
            let conns: Vec<Rc<Shared>> = (0..db.conns)
                .map(|_| {
                    let c = Shared::default();
                    c.starting.set(true);
                    Rc::new(c)
                })
                .collect();
            for c in &conns {
                twelve_engine::rt::spawn(conn::drive(Rc::clone(&shared_db), Rc::clone(c)));
            }
            let pool = Rc::new(Pool {
                conns,
                next: Cell::new(0),
                last: Cell::new(0),
            });
            pools.borrow_mut().push((db.id, Rc::clone(&pool)));
            pool
        })
    }

    /// Queues `stmt` with `params` at once on a connection that is up (the one this turn of
    /// the worker writes to); the [`Query`] resolves to its rows. While a worker's
    /// connections make their first attempt, it waits in line for one; once they failed,
    /// [`Error::Unavailable`] at once until one is up again.
    pub fn query(&self, stmt: Statement, params: &[Param<'_>]) -> Query {
        self.pipeline().query(stmt, params)
    }

    /// A connection for queries that must run in order (see [`Pipeline`]), chosen as
    /// [`Pool::query`] chooses one.
    pub fn pipeline(&self) -> Pipeline {
        let state = |i: usize| {
            let c = &self.conns[i];
            State {
                up: c.up.get(),
                starting: c.starting.get(),
                unsent: !c.out.borrow().is_empty(),
            }
        };
        let mut next = self.next.get();
        let chosen = choose(self.conns.len(), state, self.last.get(), &mut next);
        self.next.set(next);
        if let Some(i) = chosen {
            self.last.set(i);
        }
        Pipeline {
            conn: chosen.map(|i| Rc::clone(&self.conns[i])),
        }
    }

    /// Whether a connection is up.
    pub fn is_up(&self) -> bool {
        self.conns.iter().any(|c| c.up.get())
    }
}

impl Pipeline {
    /// Queues `stmt` with `params` on the pipeline's connection, behind its earlier queries.
    pub fn query(&self, stmt: Statement, params: &[Param<'_>]) -> Query {
        match &self.conn {
            Some(c) if c.up.get() || c.starting.get() => Query {
                slot: Some(c.push(|out| encode(stmt, params, out))),
            },
            _ => {
                count_error(Error::Unavailable);
                Query { slot: None }
            }
        }
    }
}

/// Bind (binary parameters and results), Execute and Sync: one query, answered by its own
/// `ReadyForQuery`, so a failed query fails alone.
fn encode(stmt: Statement, params: &[Param<'_>], out: &mut bytes::BytesMut) {
    let mut buf = itoa::Buffer::new();
    let name = statement_name(stmt.0, &mut buf);
    let formats = params.iter().map(|p| match p {
        Param::Int(_) | Param::IntArray(_) => 1,
        Param::Text(_) => 0,
    });
    let bound = frontend::bind(
        "",
        name,
        formats,
        params.iter(),
        |p, buf| {
            match p {
                Param::Int(v) => buf.put_i32(*v),
                Param::Text(s) => buf.put_slice(s.as_bytes()),
                Param::IntArray(v) => int4_array(v, buf),
            }
            Ok(IsNull::No)
        },
        [1],
        out,
    );
    // Only a parameter count past i16 fails; the statements here have a few.
    debug_assert!(bound.is_ok());
    let _ = frontend::execute("", 0, out);
    frontend::sync(out);
}

/// An `int4[]` in the binary format (PostgreSQL's `array_send`): dimensions, a has-NULLs
/// flag, the element type, each dimension's length and lower bound, then each element with
/// its length.
fn int4_array(v: &[i32], buf: &mut bytes::BytesMut) {
    buf.put_i32(1);
    buf.put_i32(0);
    buf.put_u32(INT4);
    buf.put_i32(i32::try_from(v.len()).unwrap_or(i32::MAX));
    buf.put_i32(1);
    for &x in v {
        buf.put_i32(4);
        buf.put_i32(x);
    }
}

/// A query in flight: resolves to its rows or its [`Error`]. Dropping it leaves the query to
/// finish on the connection, unread.
#[must_use = "futures do nothing unless awaited"]
pub struct Query {
    slot: Option<Rc<Slot>>,
}

impl Future for Query {
    type Output = Result<Rows, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(slot) = &self.slot else {
            return Poll::Ready(Err(Error::Unavailable));
        };
        if !slot.done.get() {
            *slot.waker.borrow_mut() = Some(cx.waker().clone());
            return Poll::Pending;
        }
        match slot.error.get() {
            Some(e) => Poll::Ready(Err(e)),
            None => Poll::Ready(Ok(std::mem::take(&mut *slot.rows.borrow_mut()))),
        }
    }
}

impl Drop for Query {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            Slot::recycle(slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UP: State = State {
        up: true,
        starting: false,
        unsent: false,
    };
    const BUSY: State = State {
        up: true,
        starting: false,
        unsent: true,
    };
    const DOWN: State = State {
        up: false,
        starting: false,
        unsent: false,
    };
    const STARTING: State = State {
        up: false,
        starting: true,
        unsent: false,
    };

    #[test]
    fn a_turn_stays_on_one_connection_and_turns_rotate() {
        // (connections, last, next) -> (chosen, next after)
        type Case = (&'static [State], usize, usize, Option<usize>, usize);
        let cases: &[Case] = &[
            // Queries of this turn are unsent on the last one: join them.
            (&[UP, BUSY], 1, 0, Some(1), 0),
            (&[BUSY, UP], 0, 1, Some(0), 1),
            // Nothing unsent: the next one in turn.
            (&[UP, UP], 0, 1, Some(1), 0),
            (&[UP, UP], 1, 0, Some(0), 1),
            (&[UP, UP, UP], 0, 2, Some(2), 0),
            // The next one is down: skipped.
            (&[UP, DOWN], 0, 1, Some(0), 1),
            // The last one is unsent but failed since: the next one up.
            (&[DOWN, UP], 0, 0, Some(1), 0),
            // Unsent on another than the last: rotation as usual.
            (&[UP, BUSY], 0, 0, Some(0), 1),
            // None up: the first starting one, in turn from next; none at all: None.
            (&[STARTING, STARTING], 0, 1, Some(1), 1),
            (&[DOWN, STARTING], 0, 0, Some(1), 0),
            (&[DOWN, DOWN], 0, 0, None, 0),
            // One connection.
            (&[UP], 0, 0, Some(0), 0),
            (&[BUSY], 0, 0, Some(0), 0),
            (&[], 0, 0, None, 0),
        ];
        for &(states, last, next, want, want_next) in cases {
            let mut n = next;
            let got = choose(states.len(), |i| states[i], last, &mut n);
            assert_eq!(
                (got, n),
                (want, want_next),
                "{states:?} last {last} next {next}"
            );
        }
    }
}
