//! twelve-http: strict, incremental HTTP/1.1 parsing and encoding, with no I/O.
#![forbid(unsafe_code)]

/// Client side (owned by the load generator work): incremental response parsing.
pub mod response;
