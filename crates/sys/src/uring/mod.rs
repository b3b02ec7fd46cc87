//! The two io_uring wrappers, one per backend that uses io_uring:
//! - [`batch`]: [`batch::Batch`], one-shot synchronous batches of `recv` and `send`, one
//!   `io_uring_enter` each, for the epoll backend's ready sockets;
//! - [`ring`]: [`ring::Ring`], the long-lived completion ring that is a whole io_uring event
//!   loop (accept, multishot receive into provided buffers, send, poll, cancel, close).

pub mod batch;
pub mod ring;
