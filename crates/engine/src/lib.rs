//! twelve-engine: a shared-nothing HTTP/1.1 server engine.
//!
//! One worker thread per CPU, each pinned, each with its own `SO_REUSEPORT` listener, epoll
//! instance, connections, buffers and timer wheel; the connection protocol is a sans-I/O state
//! machine. See docs/ARCHITECTURE.md for a worker's life.
//!
//! Start one in-process with [`Server::new`]`(`[`Config`]`, `[`Router`]`)` and
//! [`Server::start`], which returns a [`ServerHandle`]: the bound addresses, lock-free
//! metrics, and a graceful [`ServerHandle::shutdown`]. [`restart::run`] runs one generation
//! of a server that upgrades and restarts without losing a connection.
//!
//! ```
//! use std::io::{Read, Write};
//! use twelve_engine::{Config, Router, Server};
//!
//! let router = Router::new().get("/hello", |_req, _body, res| {
//!     res.send(200, "text/plain", &[], b"Hello, World!")
//! });
//! // One worker on the first online CPU, a free port on 127.0.0.1.
//! let server = Server::new(Config::loopback(1), router).start()?;
//! let mut conn = std::net::TcpStream::connect(server.local_addrs()[0])?;
//! conn.write_all(b"GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")?;
//! let mut response = String::new();
//! conn.read_to_string(&mut response)?;
//! assert!(response.starts_with("HTTP/1.1 200 OK\r\n"));
//! assert!(response.ends_with("\r\n\r\nHello, World!"));
//! assert_eq!(server.metrics().requests, 1);
//! server.shutdown();
//! server.join();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod apps;
mod backend;
#[doc(hidden)]
pub mod bench_hook;
mod body;
mod compress;
mod config;
mod conn;
mod cpu_time;
mod ctx;
mod files;
mod files_route;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod metrics;
mod metrics_route;
mod metrics_tls;
mod pool;
mod reply;
mod response;
pub mod restart;
mod router;
pub mod rt;
mod server;
mod wheel;

pub use backend::tls::ktls_available;
pub use body::{BodySink, StreamHandler};
pub use compress::{Coding, Compression, compressible};
pub use config::{Backend, Coalesce, Config, Steer, Timeouts, UnknownBackend};
pub use cpu_time::CpuTime;
pub use files::FileCacheConfig;
pub use files_route::Files;
pub use metrics::MetricsSnapshot;
pub use reply::Reply;
pub use response::{FileBody, Response};
pub use router::{AsyncHandler, Handler, Router};
pub use server::{Server, ServerHandle, StartError};
pub use twelve_http::{Limits, Method, Request};
