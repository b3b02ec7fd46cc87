//! The client side: incremental, zero-copy HTTP/1.1 response parsing for the load generator.
//!
//! Two layers:
//! - [`parse_response`] reads one status line and header section into borrowed slices
//!   ([`Head`]) and decides the body framing by RFC 9112 §6.3.
//! - [`ResponseParser`] walks a byte stream of pipelined responses: heads (skipping interim
//!   1xx responses), bodies framed by Content-Length, chunked coding, or connection close.
//!   It never copies body bytes; it only counts them, so the load generator can discard them.
//!
//! It shares the server side's vocabulary: [`Status`](crate::Status), [`Header`], the
//! Content-Length and OWS helpers, and the one [`ChunkedDecoder`](crate::ChunkedDecoder),
//! unbounded here (a load generator measures whatever the server sends). Heads are scanned in
//! one pass that finds line ends eight bytes at a time and looks only at the three headers
//! that decide framing (cost measured by crates/load/benches/hot_path.rs).
//!
//! This module holds what both layers return (`Head`, `Framing`, `Error`); `parser` holds
//! the parsing itself, whole: the head scan and the stream parser that calls it are the load
//! generator's hot path, and one module is one codegen unit, so a release build inlines them
//! as it would if they were one file.
use std::fmt;

use crate::error::ParseError;
use crate::request::Header;

mod parser;

pub use parser::{Done, HeadMemo, ResponseParser, parse_response};

/// The most header lines a response head may carry; more is [`Error::TooManyHeaders`].
pub const MAX_HEADERS: usize = 48;

/// Why a response could not be parsed. One variant per rule; the load generator counts them
/// all as parse errors except [`Error::IncompleteHead`] (a read error) and
/// [`Error::IncompleteBody`] (a body-length mismatch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// Status line: not `HTTP/1.x`, a bad status code, or a bad reason phrase.
    StatusLine,
    /// A header name or value with a forbidden byte, or a bad line ending.
    Header,
    /// More than [`MAX_HEADERS`] header lines.
    TooManyHeaders,
    /// Content-Length is not a decimal number, overflows, or is given twice with two values
    /// (RFC 9110 §8.6).
    ContentLength,
    /// The chunked body broke one of the rules of RFC 9112 §7.1 that
    /// [`ChunkedDecoder`](crate::ChunkedDecoder) enforces for requests too; the inner error
    /// says which.
    Chunked(ParseError),
    /// The peer closed the connection in the middle of a status line or header section.
    IncompleteHead,
    /// The peer closed the connection before the framed body was complete.
    IncompleteBody,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self {
            Error::StatusLine => "invalid status line",
            Error::Header => "invalid header line",
            Error::TooManyHeaders => "too many headers",
            Error::ContentLength => "invalid Content-Length",
            Error::Chunked(e) => return write!(f, "invalid chunked body: {}", e.reason()),
            Error::IncompleteHead => "connection closed inside a response head",
            Error::IncompleteBody => "connection closed before the body was complete",
        };
        f.write_str(what)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Chunked(e) => Some(e),
            _ => None,
        }
    }
}

/// How the body of a response is delimited (RFC 9112 §6.3). A request's
/// [`BodyFraming`](crate::BodyFraming) has no `UntilClose`: only a response may run until the
/// connection closes (rule 7 versus rule 6), and only a response can have no body whatever its
/// fields say (rules 1 and 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body: a response to HEAD, a 1xx, 204 or 304 (rules 1 and 2).
    Empty,
    /// `Content-Length` bytes (rule 5).
    Length(u64),
    /// `Transfer-Encoding` ending in `chunked` (rule 3).
    Chunked,
    /// Everything until the server closes the connection (rules 4 and 7).
    UntilClose,
}

/// A parsed response head; every slice borrows the input buffer.
#[derive(Debug)]
pub struct Head<'h, 'b> {
    /// Minor version: 1 for HTTP/1.1, 0 for HTTP/1.0.
    pub minor_version: u8,
    /// Status code, 100..=999.
    pub code: u16,
    /// Reason phrase (may be empty).
    pub reason: &'b str,
    /// Header lines, in order.
    pub headers: &'h [Header<'b>],
    /// Bytes of the head, up to and including the blank line.
    pub len: usize,
    /// How the body is delimited.
    pub framing: Framing,
    /// Whether the connection may carry another response after this one (RFC 9112 §9.3).
    pub keep_alive: bool,
}
