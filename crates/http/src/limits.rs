//! `Limits`: every bound the codec enforces, in one `Copy` config struct with sane defaults.

/// Bounds on what a peer may send; each violation maps to its status (414, 431, 413).
///
/// The defaults follow RFC 9112 §3 (support request-lines of at least 8000 octets) and the
/// limits the spec's suite assumes (docs/hostile-requests.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest request-line, excluding its CRLF; longer → 414.
    pub request_line_bytes: usize,
    /// Longest single field line, excluding its CRLF; longer → 431.
    pub header_line_bytes: usize,
    /// Longest head: request-line, field lines and the final empty line; longer → 431.
    pub head_bytes: usize,
    /// Most field lines; more → 431. The caller's header array also bounds the count.
    pub headers: usize,
    /// Largest body, declared (Content-Length) or decoded (chunked); larger → 413.
    pub body_bytes: u64,
    /// Most bytes of chunk extensions over a whole chunked body (RFC 9112 §7.1.1); more → 413.
    pub chunk_extension_bytes: u64,
    /// Largest trailer section of a chunked body; larger → 431.
    pub trailer_bytes: usize,
    /// Most empty lines (CRLF) skipped before a request-line (RFC 9112 §2.2); more → 400.
    pub leading_empty_lines: usize,
}

impl Limits {
    /// The defaults: request line 8 KiB, header line 8 KiB, head 16 KiB, 100 headers,
    /// body 1 MiB, chunk extensions 16 KiB (hyper's bound), trailers 8 KiB, 8 empty lines.
    pub const DEFAULT: Limits = Limits {
        request_line_bytes: 8 * 1024,
        header_line_bytes: 8 * 1024,
        head_bytes: 16 * 1024,
        headers: 100,
        body_bytes: 1024 * 1024,
        chunk_extension_bytes: 16 * 1024,
        trailer_bytes: 8 * 1024,
        leading_empty_lines: 8,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}
