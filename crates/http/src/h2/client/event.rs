//! What the client connection reports: an [`Event`] per call of
//! [`ClientConn::poll`](super::ClientConn::poll), and the [`ClientFault`] that ended a
//! stream or the connection.

use super::Violation;
use crate::h2::hpack::HpackError;

/// Why the connection (or one stream) was given up, one kind per rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClientFault {
    /// A frame broke a rule of its own type (§4, §6).
    Frame(Violation),
    /// The server's first frame was not SETTINGS (§3.4).
    SettingsFirst,
    /// HPACK could not decode a block (RFC 7541; COMPRESSION_ERROR).
    Hpack(HpackError),
    /// A frame other than CONTINUATION inside a field block, or a CONTINUATION outside one
    /// (§6.10).
    Continuation,
    /// A field block longer than this client gathers.
    HeaderBlockTooLarge,
    /// The server sent more than a receive window allowed (§6.9).
    FlowControl,
    /// A WINDOW_UPDATE or SETTINGS took a send window past 2^31-1 (§6.9.1).
    WindowOverflow,
    /// A PUSH_PROMISE, which SETTINGS_ENABLE_PUSH = 0 forbids (§8.4).
    PushPromise,
    /// A frame on a stream this client never opened (§5.1).
    IdleStream,
    /// A response with no valid `:status`, DATA before it, or HEADERS after the trailers
    /// (§8.1, §8.3.2): a stream error.
    Malformed,
}

impl ClientFault {
    /// A short name for error tables.
    pub fn name(self) -> &'static str {
        match self {
            ClientFault::Frame(_) => "frame",
            ClientFault::SettingsFirst => "settings_first",
            ClientFault::Hpack(_) => "hpack",
            ClientFault::Continuation => "continuation",
            ClientFault::HeaderBlockTooLarge => "header_block_too_large",
            ClientFault::FlowControl => "flow_control",
            ClientFault::WindowOverflow => "window_overflow",
            ClientFault::PushPromise => "push_promise",
            ClientFault::IdleStream => "idle_stream",
            ClientFault::Malformed => "malformed",
        }
    }
}

/// What one call of [`ClientConn::poll`](super::ClientConn::poll) did. `T` is the caller's
/// tag of each request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<T> {
    /// The input holds nothing more to use (or the connection is closed): read more.
    Partial,
    /// Bytes were used (a frame, or part of a DATA frame); anything to answer is in `out`.
    Handled(usize),
    /// A response ended (END_STREAM): its final status and the body octets received.
    Response {
        /// Bytes used.
        used: usize,
        /// The request's stream and tag.
        stream: u32,
        tag: T,
        /// The final status (a 1xx before it is skipped).
        status: u16,
        /// DATA octets received, padding left out.
        body_len: u64,
    },
    /// The server reset an open stream (RST_STREAM): the request got no answer. With
    /// REFUSED_STREAM the server did not process it (§8.7).
    Reset {
        /// Bytes used.
        used: usize,
        stream: u32,
        tag: T,
        /// The error code, raw ([`ErrorCode::from_u32`](crate::h2::ErrorCode::from_u32)).
        code: u32,
    },
    /// The response on `stream` broke a rule: RST_STREAM is written, the connection goes on.
    StreamError {
        /// Bytes used.
        used: usize,
        stream: u32,
        tag: T,
        fault: ClientFault,
    },
    /// The server sent GOAWAY: no new stream opens; streams above `last_stream` were not
    /// processed, and [`ClientConn::drop_refused`](super::ClientConn::drop_refused) hands
    /// them back.
    GoAway {
        /// Bytes used.
        used: usize,
        last_stream: u32,
        /// The error code, raw.
        code: u32,
    },
    /// A connection error: GOAWAY is written; send it, then close. Nothing more is read.
    ConnectionError(ClientFault),
}
