//! twelve-http: strict, incremental HTTP/1.1 parsing and encoding, with no I/O.
//!
//! The server side parses request heads ([`parse_request`]), decodes chunked bodies
//! ([`ChunkedDecoder`]) and encodes responses into a caller-owned buffer ([`encode_response`],
//! [`encode_head`], [`encode_error`]). Every rule of ../shared/spec/hostile-requests.md is
//! enforced where the bytes are read, and each rejection is a [`ParseError`] mapped to one
//! status code.
#![forbid(unsafe_code)]

mod chunked;
mod date;
mod encode;
mod error;
mod fields;
pub mod fuzzing;
mod limits;
mod parse;
mod request;
// Client side (owned by the load generator work): incremental response parsing.
pub mod response;
mod scan;
mod target;

pub use chunked::{ChunkedDecoder, Decoded};
pub use date::{DATE_LEN, format_imf_fixdate};
pub use encode::{
    Connection, ResponseHead, encode_continue, encode_error, encode_head, encode_response,
    reason_phrase,
};
pub use error::{ParseError, Status};
pub use limits::Limits;
pub use parse::parse_request;
pub use request::{BodyFraming, Header, Method, Request, Version};
