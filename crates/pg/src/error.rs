//! What can go wrong: a query's [`Error`] (a `Copy` value a handler maps to one status), a
//! connection's [`ConnectError`] (said once, at start), and the process-wide counters of both.

use std::sync::atomic::{AtomicU64, Ordering};

/// Why a query failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// No connection of the worker is up (the database is restarting, or unreachable).
    Unavailable,
    /// The connection failed while the query was in flight.
    Lost,
    /// The server refused the query: its SQLSTATE.
    Db([u8; 5]),
    /// The server said something this client does not understand.
    Protocol,
}

impl Error {
    /// The HTTP status a handler answers with: 503 while the database cannot be reached (try
    /// again), 500 when it refused the query.
    pub fn status(self) -> u16 {
        match self {
            Error::Unavailable | Error::Lost => 503,
            Error::Db(_) | Error::Protocol => 500,
        }
    }

    fn index(self) -> usize {
        match self {
            Error::Unavailable => 0,
            Error::Lost => 1,
            Error::Db(_) => 2,
            Error::Protocol => 3,
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Unavailable => f.write_str("no database connection is up"),
            Error::Lost => f.write_str("the database connection failed mid-query"),
            Error::Db(code) => write!(f, "the database refused the query (SQLSTATE {})", {
                String::from_utf8_lossy(code)
            }),
            Error::Protocol => f.write_str("unexpected message from the database"),
        }
    }
}

impl std::error::Error for Error {}

/// Why a connection could not be made.
#[derive(Debug)]
pub enum ConnectError {
    /// The socket: refused, unreachable, no such socket file.
    Io(String, std::io::Error),
    /// The server refused the start-up (authentication, no such database): its message.
    Refused(String),
    /// An authentication method this client does not speak.
    Unsupported(&'static str),
    /// The start-up did not finish within its time.
    TimedOut(String),
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectError::Io(target, e) => write!(f, "connecting to {target}: {e}"),
            ConnectError::Refused(m) => write!(f, "the server refused the connection: {m}"),
            ConnectError::Unsupported(m) => write!(f, "unsupported authentication: {m}"),
            ConnectError::TimedOut(target) => write!(f, "connecting to {target}: timed out"),
        }
    }
}

impl std::error::Error for ConnectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConnectError::Io(_, e) => Some(e),
            _ => None,
        }
    }
}

static ERRORS: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];
static CONNECTS: AtomicU64 = AtomicU64::new(0);
static CONNECT_FAILURES: AtomicU64 = AtomicU64::new(0);

/// The client's counters, summed over every worker of the process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Queries failed, by [`Error`]: unavailable, lost, refused by the database, protocol.
    pub errors: [u64; 4],
    /// Connections made (start-up and statements done), reconnections included.
    pub connects: u64,
    /// Connection attempts that failed.
    pub connect_failures: u64,
}

/// The counters now.
pub fn stats() -> Stats {
    Stats {
        errors: std::array::from_fn(|i| ERRORS[i].load(Ordering::Relaxed)),
        connects: CONNECTS.load(Ordering::Relaxed),
        connect_failures: CONNECT_FAILURES.load(Ordering::Relaxed),
    }
}

pub(crate) fn count_error(e: Error) {
    ERRORS[e.index()].fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn count_connect(ok: bool) {
    let c = if ok { &CONNECTS } else { &CONNECT_FAILURES };
    c.fetch_add(1, Ordering::Relaxed);
}
