//! The parse outcome types: `Status` (complete or need more bytes) and `ParseError`, one
//! variant per rule of docs/hostile-requests.md, each mapped to one status code.

use std::fmt;

/// The outcome of an incremental parse that did not fail.
///
/// `Partial` is not an error: the input ended before the element did, so the caller reads
/// more bytes and parses again (the parsers are restartable from the start of the buffer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status<T> {
    /// The element was complete; it is inside.
    Complete(T),
    /// The input ended before the element did: feed more bytes.
    Partial,
}

impl<T> Status<T> {
    /// The complete value, or `None` if more bytes are needed.
    pub fn complete(self) -> Option<T> {
        match self {
            Status::Complete(t) => Some(t),
            Status::Partial => None,
        }
    }

    /// `true` if more bytes are needed.
    pub fn is_partial(&self) -> bool {
        matches!(self, Status::Partial)
    }
}

/// Why a request (or its chunked body) was rejected. `Copy`, so a worker can count it in a
/// per-variant counter; every variant maps to exactly one status code ([`ParseError::status`]),
/// and every one of them ends the connection (RFC 9112 §2.2: respond 400 and close; the
/// framing after a rejected message cannot be trusted).
///
/// The chunked-body variants also name what was wrong with a response's chunked body on the
/// client side ([`client::Error::Chunked`](crate::client::Error::Chunked)), which reads it
/// with the same decoder; there the status code means nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParseError {
    /// More empty lines before the request-line than `Limits::leading_empty_lines` (§2.2). 400.
    TooManyEmptyLines,
    /// A bare LF used as a line terminator: the project's strict choice (§2.2 MAY accept). 400.
    BareLf,
    /// A CR not followed by LF (§2.2 MUST treat as invalid). 400.
    BareCr,
    /// A method that is not a `token` (§3.1). 400.
    InvalidMethod,
    /// A well-formed method this server does not implement, compared case-sensitively, so `get`
    /// is not `GET` (RFC 9110 §9.1). 501.
    UnknownMethod,
    /// Not exactly one SP between the request-line's parts, or whitespace/CTL in them (§3). 400.
    InvalidRequestLine,
    /// A request-target byte outside RFC 3986 (SP, CTL, DEL, `#`, bytes ≥ 0x80, ...). 400.
    InvalidTarget,
    /// A request-target form not allowed with this method (§3.2.3, §3.2.4): `*` other than
    /// with OPTIONS, authority-form other than with CONNECT, CONNECT without authority-form. 400.
    TargetFormMismatch,
    /// The request-line is longer than `Limits::request_line_bytes` (§3: MUST 414). 414.
    RequestLineTooLong,
    /// An HTTP-version that is not `HTTP/` DIGIT `.` DIGIT (§2.3). 400.
    InvalidVersion,
    /// A major version other than 1 (RFC 9110 §15.6.6). 505.
    UnsupportedVersion,
    /// A field line that is not `token ":" OWS value OWS`: empty name, no colon, non-tchar. 400.
    InvalidHeaderName,
    /// Whitespace between a field name and its colon (§5.1 MUST reject). 400.
    WhitespaceBeforeColon,
    /// A field line starting with SP/HTAB: obs-fold, or whitespace after the start-line
    /// (§5.2, §2.2). 400.
    ObsFold,
    /// A field value containing NUL or another CTL (RFC 9110 §5.5). 400.
    InvalidHeaderValue,
    /// One field line longer than `Limits::header_line_bytes` (RFC 6585 §5). 431.
    HeaderLineTooLong,
    /// More field lines than `Limits::headers` or the caller's array holds. 431.
    TooManyHeaders,
    /// The head (request-line and fields) is longer than `Limits::head_bytes`. 431.
    HeadTooLarge,
    /// An HTTP/1.1 request without Host (§3.2 MUST 400). 400.
    MissingHost,
    /// More than one Host field line (§3.2 MUST 400). 400.
    DuplicateHost,
    /// A Host value that is not `uri-host [":" port]`, or a port over 65535. 400.
    InvalidHost,
    /// A Content-Length that is not `1*DIGIT` or overflows u64 (§6.3, RFC 9110 §8.6). 400.
    InvalidContentLength,
    /// More than one Content-Length value, even identical ones: the project's strict choice
    /// (RFC 9110 §8.6 allows collapsing identical values). 400.
    DuplicateContentLength,
    /// Transfer-Encoding together with Content-Length: the project rejects rather than
    /// "process by TE" (§6.1 allows either, MUST close). 400.
    TransferEncodingWithContentLength,
    /// Transfer-Encoding in an HTTP/1.0 request: framing is faulty (§6.1); nginx's 400. 400.
    TransferEncodingInHttp10,
    /// A Transfer-Encoding list with an empty element (`, chunked`) or a non-token element:
    /// the project's strict choice (RFC 9110 §5.6.1 would ignore empty elements). 400.
    InvalidTransferEncoding,
    /// `chunked` present but not the final coding (§6.3 MUST 400 and close). 400.
    ChunkedNotFinal,
    /// `chunked` applied twice (§6.1). 400.
    ChunkedTwice,
    /// `chunked` with parameters (`chunked;q=1`; §7: no parameters). 400.
    ChunkedWithParameters,
    /// A transfer coding other than chunked (gzip, identity, ...): not implemented (§6.1). 501.
    UnknownTransferCoding,
    /// A declared Content-Length, or a chunked body's total, over `Limits::body_bytes`. 413.
    BodyTooLarge,
    /// A chunk-size that is not `1*HEXDIG` (no sign, `0x`, or whitespace) (§7.1). 400.
    InvalidChunkSize,
    /// A chunk-size that does not fit in 64 bits (§7.1: MUST prevent overflow). 400.
    ChunkSizeOverflow,
    /// Chunk-data not followed by exactly CRLF (§7.1). 400.
    InvalidChunkDelimiter,
    /// A chunk extension with a CTL, or a bare LF in chunked framing. 400.
    InvalidChunkExtension,
    /// Chunk extensions longer in total than `Limits::chunk_extension_bytes` (§7.1.1). 413.
    ChunkExtensionsTooLong,
    /// A trailer field line that is not a valid field line (§7.1.2). 400.
    InvalidTrailer,
    /// A trailer section longer than `Limits::trailer_bytes`. 431.
    TrailersTooLarge,
}

impl ParseError {
    /// How many variants there are: the size of a per-variant counter array.
    pub const COUNT: usize = 38;

    /// Every variant, in declaration order (`ALL[e.index()] == e`), for reporting counters.
    pub const ALL: [ParseError; ParseError::COUNT] = [
        ParseError::TooManyEmptyLines,
        ParseError::BareLf,
        ParseError::BareCr,
        ParseError::InvalidMethod,
        ParseError::UnknownMethod,
        ParseError::InvalidRequestLine,
        ParseError::InvalidTarget,
        ParseError::TargetFormMismatch,
        ParseError::RequestLineTooLong,
        ParseError::InvalidVersion,
        ParseError::UnsupportedVersion,
        ParseError::InvalidHeaderName,
        ParseError::WhitespaceBeforeColon,
        ParseError::ObsFold,
        ParseError::InvalidHeaderValue,
        ParseError::HeaderLineTooLong,
        ParseError::TooManyHeaders,
        ParseError::HeadTooLarge,
        ParseError::MissingHost,
        ParseError::DuplicateHost,
        ParseError::InvalidHost,
        ParseError::InvalidContentLength,
        ParseError::DuplicateContentLength,
        ParseError::TransferEncodingWithContentLength,
        ParseError::TransferEncodingInHttp10,
        ParseError::InvalidTransferEncoding,
        ParseError::ChunkedNotFinal,
        ParseError::ChunkedTwice,
        ParseError::ChunkedWithParameters,
        ParseError::UnknownTransferCoding,
        ParseError::BodyTooLarge,
        ParseError::InvalidChunkSize,
        ParseError::ChunkSizeOverflow,
        ParseError::InvalidChunkDelimiter,
        ParseError::InvalidChunkExtension,
        ParseError::ChunkExtensionsTooLong,
        ParseError::InvalidTrailer,
        ParseError::TrailersTooLarge,
    ];

    /// A dense index in `0..COUNT`, for per-variant counters on the hot path.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The status code to answer with (then close the connection).
    pub fn status(self) -> u16 {
        use ParseError::*;
        match self {
            UnknownMethod | UnknownTransferCoding => 501,
            UnsupportedVersion => 505,
            RequestLineTooLong => 414,
            HeaderLineTooLong | TooManyHeaders | HeadTooLarge | TrailersTooLarge => 431,
            BodyTooLarge | ChunkExtensionsTooLong => 413,
            TooManyEmptyLines
            | BareLf
            | BareCr
            | InvalidMethod
            | InvalidRequestLine
            | InvalidTarget
            | TargetFormMismatch
            | InvalidVersion
            | InvalidHeaderName
            | WhitespaceBeforeColon
            | ObsFold
            | InvalidHeaderValue
            | MissingHost
            | DuplicateHost
            | InvalidHost
            | InvalidContentLength
            | DuplicateContentLength
            | TransferEncodingWithContentLength
            | TransferEncodingInHttp10
            | InvalidTransferEncoding
            | ChunkedNotFinal
            | ChunkedTwice
            | ChunkedWithParameters
            | InvalidChunkSize
            | ChunkSizeOverflow
            | InvalidChunkDelimiter
            | InvalidChunkExtension
            | InvalidTrailer => 400,
        }
    }

    /// A short, static description of the rule that was broken (for logs and counters).
    pub fn reason(self) -> &'static str {
        use ParseError::*;
        match self {
            TooManyEmptyLines => "too many empty lines before the request-line",
            BareLf => "bare LF line terminator",
            BareCr => "bare CR",
            InvalidMethod => "invalid method token",
            UnknownMethod => "method not implemented",
            InvalidRequestLine => "malformed request-line",
            InvalidTarget => "invalid request-target",
            TargetFormMismatch => "request-target form not allowed for this method",
            RequestLineTooLong => "request-line too long",
            InvalidVersion => "malformed HTTP-version",
            UnsupportedVersion => "HTTP major version not supported",
            InvalidHeaderName => "invalid field name",
            WhitespaceBeforeColon => "whitespace between field name and colon",
            ObsFold => "obsolete line folding or leading whitespace",
            InvalidHeaderValue => "invalid field value",
            HeaderLineTooLong => "field line too long",
            TooManyHeaders => "too many field lines",
            HeadTooLarge => "header section too large",
            MissingHost => "missing Host",
            DuplicateHost => "more than one Host",
            InvalidHost => "invalid Host",
            InvalidContentLength => "invalid Content-Length",
            DuplicateContentLength => "more than one Content-Length",
            TransferEncodingWithContentLength => "Transfer-Encoding with Content-Length",
            TransferEncodingInHttp10 => "Transfer-Encoding in an HTTP/1.0 request",
            InvalidTransferEncoding => "invalid Transfer-Encoding list",
            ChunkedNotFinal => "chunked is not the final transfer coding",
            ChunkedTwice => "chunked applied more than once",
            ChunkedWithParameters => "chunked with parameters",
            UnknownTransferCoding => "transfer coding not implemented",
            BodyTooLarge => "body too large",
            InvalidChunkSize => "invalid chunk-size",
            ChunkSizeOverflow => "chunk-size overflows",
            InvalidChunkDelimiter => "chunk-data not followed by CRLF",
            InvalidChunkExtension => "invalid chunk extension or line",
            ChunkExtensionsTooLong => "chunk extensions too long",
            InvalidTrailer => "invalid trailer field",
            TrailersTooLarge => "trailer section too large",
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.reason(), self.status())
    }
}

impl std::error::Error for ParseError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_indexed_in_order_and_every_status_is_an_error_status() {
        for (i, e) in ParseError::ALL.iter().enumerate() {
            assert_eq!(e.index(), i);
            assert!(
                matches!(e.status(), 400 | 413 | 414 | 431 | 501 | 505),
                "{e:?}"
            );
            assert!(!e.reason().is_empty());
        }
    }
}
