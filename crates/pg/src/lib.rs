//! twelve-pg: a PostgreSQL client for handlers that run on twelve-engine's workers, and the
//! database apps built on it.
//!
//! Each worker thread keeps its own few connections ([`Pool`], made on the thread's first
//! query), each a [`twelve_engine::rt::Stream`] on the worker's loop, driven by a task of the
//! worker's runtime: no thread, no lock, no second runtime. Statements are prepared once per
//! connection ([`Database::statement`]); queries are pipelined (any number in flight on a
//! connection, each with its own `Sync`, answered in order); a connection that fails is
//! reconnected with backoff while its queries fail at once with [`Error::Unavailable`]. The
//! wire protocol is `postgres-protocol`'s.
//!
//! - `url.rs` ([`Target`]): `postgres://user:password@host:port/db?host=/socket/dir`.
//! - `conn.rs`: one connection: start-up, authentication, its driver task; [`check`].
//! - `pool.rs` ([`Database`], [`Pool`], [`Query`]): a worker's connections and the query API.
//! - `rows.rs` ([`Rows`], [`Row`]): the rows a query returned (binary format).
//! - `error.rs` ([`Error`], [`ConnectError`], [`stats`]).
//! - [`apps`]: TechEmpower's db, queries, fortunes and updates; HttpArena's async-db and
//!   fortunes.
#![forbid(unsafe_code)]

pub mod apps;
mod conn;
mod error;
mod pool;
mod rows;
mod url;

pub use conn::check;
pub use error::{ConnectError, Error, Stats, stats};
pub use pool::{Database, INT4, INT4_ARRAY, Param, Pipeline, Pool, Query, Statement, TEXT};
pub use rows::{Row, Rows};
pub use url::{Target, UrlError};
