//! twelve-http: strict, incremental HTTP/1.1 parsing and encoding, with no I/O.
//!
//! The server side parses request heads ([`parse_request`]), decodes chunked bodies
//! ([`ChunkedDecoder`]) and encodes responses into a caller-owned buffer ([`encode_response`],
//! [`encode_head`], [`encode_error`]). Every rule of docs/hostile-requests.md is
//! enforced where the bytes are read, and each rejection is a [`ParseError`] mapped to one
//! status code. The client side, [`client`], parses responses for the load generator with the
//! same vocabulary: [`Status`], [`Header`], the same Content-Length reader and the same
//! [`ChunkedDecoder`] (unbounded). [`h2`] holds the HTTP/2 frame layer (RFC 9113).
//!
//! ```
//! use twelve_http::{BodyFraming, ChunkedDecoder, Connection, Header, Limits, Status};
//!
//! let limits = Limits::default();
//! let buf = b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
//! let mut headers = [Header::EMPTY; 32];
//! let mut out = Vec::with_capacity(256);
//! match twelve_http::parse_request(buf, &mut headers, &limits) {
//!     Ok(Status::Complete(req)) => {
//!         assert_eq!((req.path(), req.framing), ("/echo", BodyFraming::Chunked));
//!         let mut decoder = ChunkedDecoder::new(&limits);
//!         let mut body = buf[req.head_len..].to_vec();
//!         let (consumed, len, done) = decoder.decode_in_place(&mut body).unwrap();
//!         assert_eq!((&body[..len], consumed, done), (&b"hello"[..], 15, true));
//!         let connection = Connection::for_request(&req);
//!         twelve_http::encode_response(&mut out, 200, "text/plain", connection, &body[..len]);
//!     }
//!     Ok(Status::Partial) => { /* read more bytes, parse again from the start */ }
//!     Err(e) => twelve_http::encode_error(&mut out, e.status()), // then close
//! }
//! assert!(out.starts_with(b"HTTP/1.1 200 OK\r\nServer: twelve\r\nDate: "));
//! ```
#![forbid(unsafe_code)]

mod chunked;
pub mod client;
mod date;
mod encode;
mod error;
mod fast;
mod fields;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod h2;
mod limits;
mod parse;
mod request;
mod scan;
mod target;

pub use chunked::{ChunkedDecoder, Decoded, decode_whole};
pub use date::{DATE_LEN, format_imf_fixdate, parse_http_date, refresh_date};
pub use encode::{
    Connection, HeadCache, ResponseHead, encode_continue, encode_error, encode_head,
    encode_response, reason_phrase, same_short,
};
pub use error::{ParseError, Status};
pub use limits::Limits;
pub use parse::parse_request;
pub use request::{BodyFraming, Header, Method, Request, Version};
pub use scan::hex_digit;
