//! HTTP/2 (RFC 9113), sans-I/O: the frame layer, which cuts a byte stream into typed frames
//! that borrow their payload and writes frames back, with each malformed frame mapped to the
//! RFC's error code and scope.
//!
//! HPACK (RFC 7541), [`hpack`], compresses field blocks; [`ServerConn`] is the server's
//! connection and stream state machine on top of both, [`ClientConn`] the load generator's,
//! and [`Fields`] a request's checked fields, read back as the [`Request`](crate::Request)
//! handlers know from HTTP/1.1.

mod client;
mod fields;
mod frame;
pub mod hpack;
pub mod respond;
mod server;
mod window;

pub use client::{ClientConfig, ClientConn, ClientFault, Event, request_head};
pub use fields::{Fields, Malformed};
pub use server::{Fault, ServerConfig, ServerConn, Step};

pub use frame::{
    DEFAULT_MAX_FRAME_SIZE, Frame, FrameHeader, HEADER_LEN, MAX_FRAME_SIZE_LIMIT, PREFACE,
    Priority, Setting, Settings, SettingsIter, decode, encode, encode_settings, flags, kind,
};

/// The error codes of RFC 9113 §7, with their numeric values: what RST_STREAM and GOAWAY
/// carry. Frames keep the peer's code as a raw `u32` (unknown codes must not trigger special
/// behaviour, §7); [`ErrorCode::from_u32`] reads the known ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ErrorCode {
    /// Graceful shutdown, or no error.
    NoError = 0x0,
    /// An unspecific protocol error.
    ProtocolError = 0x1,
    /// An unexpected internal error.
    InternalError = 0x2,
    /// The peer violated flow control.
    FlowControlError = 0x3,
    /// SETTINGS were not acknowledged in time.
    SettingsTimeout = 0x4,
    /// A frame arrived after the stream was half-closed.
    StreamClosed = 0x5,
    /// A frame had an invalid size.
    FrameSizeError = 0x6,
    /// The stream was refused before any processing.
    RefusedStream = 0x7,
    /// The stream is no longer needed.
    Cancel = 0x8,
    /// The field-compression context could not be maintained.
    CompressionError = 0x9,
    /// A CONNECT tunnel was reset or closed abnormally.
    ConnectError = 0xa,
    /// The peer generates excessive load.
    EnhanceYourCalm = 0xb,
    /// The transport does not meet minimum security requirements.
    InadequateSecurity = 0xc,
    /// HTTP/1.1 is required instead.
    Http11Required = 0xd,
}

impl ErrorCode {
    /// The code's value on the wire.
    pub const fn code(self) -> u32 {
        self as u32
    }

    /// The known code with this value, or `None` for an unknown one.
    pub const fn from_u32(code: u32) -> Option<ErrorCode> {
        Some(match code {
            0x0 => ErrorCode::NoError,
            0x1 => ErrorCode::ProtocolError,
            0x2 => ErrorCode::InternalError,
            0x3 => ErrorCode::FlowControlError,
            0x4 => ErrorCode::SettingsTimeout,
            0x5 => ErrorCode::StreamClosed,
            0x6 => ErrorCode::FrameSizeError,
            0x7 => ErrorCode::RefusedStream,
            0x8 => ErrorCode::Cancel,
            0x9 => ErrorCode::CompressionError,
            0xa => ErrorCode::ConnectError,
            0xb => ErrorCode::EnhanceYourCalm,
            0xc => ErrorCode::InadequateSecurity,
            0xd => ErrorCode::Http11Required,
            _ => return None,
        })
    }
}

/// Which rule of RFC 9113 a frame broke: one kind per counter in /metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Violation {
    /// Longer than SETTINGS_MAX_FRAME_SIZE (§4.2).
    TooLarge,
    /// A length the frame type does not allow, or too short for its mandatory fields
    /// (§4.2, §6).
    BadLength,
    /// A stream-only frame on stream 0 (§6.1, §6.2, §6.3, §6.4, §6.6, §6.10).
    StreamZero,
    /// A connection-only frame on a stream (§6.5, §6.7, §6.8).
    StreamNonZero,
    /// Padding as long as the payload or longer (§6.1, §6.2).
    PaddingTooLong,
    /// A stream that depends on itself (§5.3.1).
    SelfDependency,
    /// SETTINGS_ENABLE_PUSH other than 0 or 1 (§6.5.2).
    EnablePush,
    /// SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1 (§6.5.2).
    InitialWindowSize,
    /// SETTINGS_MAX_FRAME_SIZE outside 16384..=16777215 (§6.5.2).
    MaxFrameSize,
    /// WINDOW_UPDATE with an increment of 0 (§6.9).
    ZeroIncrement,
}

/// A malformed frame: the error code to send, and whether it ends the connection (GOAWAY) or
/// only one stream (RST_STREAM), RFC 9113 §5.4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FrameError {
    /// The code to send.
    pub code: ErrorCode,
    /// The stream to reset, or 0 for a connection error.
    pub stream: u32,
    /// The rule that was broken.
    pub violation: Violation,
    /// For a stream error, the frame's whole length (header included): the bytes to skip
    /// before decoding on. 0 for a connection error, after which nothing more is read.
    pub skip: usize,
}

impl FrameError {
    /// Whether the connection must end (GOAWAY with this code).
    pub const fn is_connection_error(&self) -> bool {
        self.stream == 0
    }
}
