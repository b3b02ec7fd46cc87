//! twelve-engine: a shared-nothing HTTP/1.1 server engine.
//!
//! One worker thread per CPU, each pinned, each with its own `SO_REUSEPORT` listener, epoll
//! instance, connections, buffers and timer wheel; the connection protocol is a sans-I/O state
//! machine. Start one in-process with [`Server::new`]`(`[`Config`]`, `[`Router`]`)` and
//! [`Server::start`], which returns a [`ServerHandle`] (addresses, metrics, shutdown).
//! See docs/ARCHITECTURE.md for a worker's life.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod backend;
mod config;
mod conn;
mod files;
mod files_route;
mod metrics;
mod pool;
mod response;
mod router;
mod server;
mod timer;

pub use config::{Config, Steer, Timeouts};
pub use metrics::MetricsSnapshot;
pub use response::{FileBody, Response};
pub use router::{Handler, Router};
pub use server::{Server, ServerHandle, StartError};
pub use twelve_http::{Limits, Method, Request};
