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
    /// Every method, in declaration order.
    pub const ALL: [Method; 9] = [
        Method::Get,
        Method::Head,
        Method::Post,
        Method::Put,
        Method::Delete,
        Method::Connect,
        Method::Options,
        Method::Trace,
        Method::Patch,
    ];

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
    /// HTTP/2 (RFC 9113): a stream of a multiplexed connection, which is never closed by
    /// one request's fields.
    Http2,
}

impl Version {
    /// The version as written in a start-line.
    pub fn as_str(self) -> &'static str {
        match self {
            Version::Http10 => "HTTP/1.0",
            Version::Http11 => "HTTP/1.1",
            Version::Http2 => "HTTP/2",
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
///
/// The target's parts and the authority are read through methods ([`Request::path`], ...):
/// they are kept as the bytes the parser checked, which are ASCII by the grammar it enforces
/// (RFC 3986's request-target bytes, RFC 9110 §7.2's `uri-host [":" port]`), and made `&str`
/// only when asked for: making them `&str` in the parser would cost a UTF-8 check and
/// char-boundary checks for every request, whether a handler looked or not (measured:
/// docs/results.md#user-space-per-request).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Request<'h, 'b> {
    /// The method.
    pub method: Method,
    // INVARIANT: `target`, `path`, `query` and `host` are ASCII (see the type's docs); the
    // fuzzer's transcript asserts it for every head it accepts.
    pub(crate) target: &'b [u8],
    pub(crate) path: &'b [u8],
    pub(crate) query: Option<&'b [u8]>,
    /// The version (1.2 to 1.9 read as 1.1).
    pub version: Version,
    /// Every field line, in order, including those the parser interpreted.
    pub headers: &'h [Header<'b>],
    pub(crate) host: Option<&'b [u8]>,
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

impl<'b> Request<'_, 'b> {
    /// The request-target exactly as sent.
    pub fn target(&self) -> &'b str {
        to_text(self.target)
    }

    /// The path: the origin-form's path, the absolute-form's path (`/` if it had none), `*`
    /// for asterisk-form, or empty for CONNECT's authority-form.
    pub fn path(&self) -> &'b str {
        to_text(self.path)
    }

    /// [`Request::path`] as bytes, without making a `&str` of them (what a router compares).
    pub fn path_bytes(&self) -> &'b [u8] {
        self.path
    }

    /// The query, without its `?`, if the target had one.
    pub fn query(&self) -> Option<&'b str> {
        self.query.map(to_text)
    }

    /// [`Request::query`] as bytes, without making a `&str` of them.
    pub fn query_bytes(&self) -> Option<&'b [u8]> {
        self.query
    }

    /// The authority: from the target when it is absolute-form or authority-form (the Host
    /// field is then ignored, RFC 9112 §3.2.2), otherwise the Host field's value; `None` for
    /// an HTTP/1.0 request without Host.
    pub fn host(&self) -> Option<&'b str> {
        self.host.map(to_text)
    }

    /// The first header with this name (compared case-insensitively), if any.
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value)
    }
}

/// A part of the head the parser admitted only as ASCII (see [`Request`]), as `&str`. The
/// check cannot fail for such bytes; the empty string stands for the impossible case rather
/// than a panic.
fn to_text(bytes: &[u8]) -> &str {
    debug_assert!(bytes.is_ascii(), "a request part not ASCII: {bytes:?}");
    std::str::from_utf8(bytes).unwrap_or_default()
}

/// Shows the parts as text, as the methods give them.
impl std::fmt::Debug for Request<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("method", &self.method)
            .field("target", &self.target())
            .field("path", &self.path())
            .field("query", &self.query())
            .field("version", &self.version)
            .field("headers", &self.headers)
            .field("host", &self.host())
            .field("framing", &self.framing)
            .field("keep_alive", &self.keep_alive)
            .field("expect_continue", &self.expect_continue)
            .field("head_len", &self.head_len)
            .finish()
    }
}
