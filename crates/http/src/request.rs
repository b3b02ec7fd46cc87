//! The parsed request and its parts: `Request`, `Method`, `Version`, `Header`, `BodyFraming`.

/// A request method this server implements (RFC 9110 §9). Methods are case-sensitive tokens;
/// any other token (including `get`) is the unknown-method case, reported by the parser as
/// [`ParseError::UnknownMethod`](crate::ParseError::UnknownMethod) (501, RFC 9110 §9.1), so a
/// parsed [`Request`] always carries one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// `GET`
    Get,
    /// `HEAD`
    Head,
    /// `POST`
    Post,
    /// `PUT`
    Put,
    /// `DELETE`
    Delete,
    /// `CONNECT` (its target is authority-form, RFC 9112 §3.2.3)
    Connect,
    /// `OPTIONS` (the only method allowed the asterisk-form `*`, RFC 9112 §3.2.4)
    Options,
    /// `TRACE`
    Trace,
    /// `PATCH` (RFC 5789)
    Patch,
}

impl Method {
    /// The longest method this server knows (`CONNECT`, `OPTIONS`): a token that is longer is
    /// rejected as unknown before the rest of the line arrives.
    pub(crate) const MAX_LEN: usize = 7;

    /// Looks up a method token, case-sensitively.
    pub fn from_bytes(token: &[u8]) -> Option<Method> {
        Some(match token {
            b"GET" => Method::Get,
            b"HEAD" => Method::Head,
            b"POST" => Method::Post,
            b"PUT" => Method::Put,
            b"DELETE" => Method::Delete,
            b"CONNECT" => Method::Connect,
            b"OPTIONS" => Method::Options,
            b"TRACE" => Method::Trace,
            b"PATCH" => Method::Patch,
            _ => return None,
        })
    }

    /// The method's token as sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
            Method::Connect => "CONNECT",
            Method::Options => "OPTIONS",
            Method::Trace => "TRACE",
            Method::Patch => "PATCH",
        }
    }
}

/// The request's HTTP version. `HTTP/1.2` to `HTTP/1.9` are read as 1.1, the highest minor
/// version we implement (RFC 9110 §6.2), and answered with `HTTP/1.1`; a major version other
/// than 1 is [`ParseError::UnsupportedVersion`](crate::ParseError::UnsupportedVersion) (505).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Version {
    /// `HTTP/1.0`: no Host needed, persistent only with `Connection: keep-alive`, no
    /// Transfer-Encoding, no `Expect`.
    Http10,
    /// `HTTP/1.1` (or 1.2 to 1.9): persistent by default, Host required.
    Http11,
}

impl Version {
    /// The version as written in a start-line.
    pub fn as_str(self) -> &'static str {
        match self {
            Version::Http10 => "HTTP/1.0",
            Version::Http11 => "HTTP/1.1",
        }
    }
}

/// One field line, borrowed from the caller's buffer. The value has its surrounding OWS
/// removed; it is bytes because obs-text (0x80–0xFF) is allowed in values (RFC 9110 §5.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header<'b> {
    /// The field name as sent (a `token`; compare case-insensitively).
    pub name: &'b str,
    /// The field value without leading or trailing SP/HTAB.
    pub value: &'b [u8],
}

impl Header<'_> {
    /// An empty header, to fill the caller's header array with: `[Header::EMPTY; 100]`.
    pub const EMPTY: Header<'static> = Header {
        name: "",
        value: b"",
    };
}

/// How the request's body is delimited (RFC 9112 §6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyFraming {
    /// No body: neither Content-Length nor Transfer-Encoding (never read to EOF for requests).
    None,
    /// Exactly this many bytes follow the head (already checked against `Limits::body_bytes`).
    Length(u64),
    /// A chunked body follows; decode it with [`ChunkedDecoder`](crate::ChunkedDecoder).
    Chunked,
}

/// A parsed request head, borrowing from the caller's buffer (`'b`) and header array (`'h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request<'h, 'b> {
    /// The method.
    pub method: Method,
    /// The request-target exactly as sent.
    pub target: &'b str,
    /// The path: the origin-form's path, the absolute-form's path (`/` if it had none), `*` for
    /// asterisk-form, or empty for CONNECT's authority-form.
    pub path: &'b str,
    /// The query, without its `?`, if the target had one.
    pub query: Option<&'b str>,
    /// The version (1.2 to 1.9 read as 1.1).
    pub version: Version,
    /// Every field line, in order, including those the parser interpreted.
    pub headers: &'h [Header<'b>],
    /// The authority: from the target when it is absolute-form or authority-form (the Host
    /// field is then ignored, RFC 9112 §3.2.2), otherwise the Host field's value; `None` for an
    /// HTTP/1.0 request without Host.
    pub host: Option<&'b str>,
    /// How the body is delimited.
    pub framing: BodyFraming,
    /// Whether the connection may be reused after the response (RFC 9112 §9.3): HTTP/1.1
    /// unless `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`.
    pub keep_alive: bool,
    /// `Expect: 100-continue` on an HTTP/1.1 request (ignored on HTTP/1.0, RFC 9110 §10.1.1).
    pub expect_continue: bool,
    /// Bytes of the buffer the head used, leading empty lines included; the body starts here.
    pub head_len: usize,
}

impl Request<'_, '_> {
    /// The first header with this name (compared case-insensitively), if any.
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value)
    }
}
