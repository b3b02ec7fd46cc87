//! twelve-sys: syscalls, socket options, CBPF steering, CPU affinity and topology.
//!
//! The one crate of the workspace (with the io_uring backend) where unsafe code lives; every
//! unsafe block carries a `// SAFETY:` comment. Everything exported is safe to call.

pub mod cpus;
pub mod epoll;
pub mod inherit;
pub mod net;
pub mod stamp;
pub mod uring;

pub use cpus::{CpuList, CpuListError};
pub use net::ListenerOptions;
