//! `Response`: the server side's response writer, what a handler writes its answer through,
//! straight into the connection's output buffer (no allocation once the worker's buffers have
//! grown), plus `FileBody`, a file range the backend sends with `sendfile` after the head.
//! The bytes come from twelve-http's encoder (`encode_head`); reading responses is the client
//! side's job (`twelve_http::client`), and nothing here parses one.

use crate::compress::{Codecs, Coding, Compression, compressible};
use std::fs::File;
use twelve_http::h2::ServerConn;
use twelve_http::{Connection, HeadCache, Method, Request, ResponseHead, Version};

/// Where an HTTP/2 stream's response goes: the connection's codec, which frames the head and
/// as much of the body as the windows allow, and `held`, which keeps the rest for later.
#[derive(Debug)]
pub(crate) struct H2Out<'a> {
    pub(crate) codec: &'a mut ServerConn,
    pub(crate) stream: u32,
    pub(crate) held: &'a mut Vec<u8>,
}

/// A response body the backend sends from a file with `sendfile(2)`, after the head: what a
/// handler passes to [`Response::send_file`], and what the static-file server plans for a 200
/// or 206 (the one type for both).
#[derive(Debug)]
pub struct FileBody {
    /// The open file (close-on-exec, as std opens every file).
    pub file: File,
    /// Offset of the first byte to send.
    pub offset: u64,
    /// Bytes to send.
    pub len: u64,
}

/// A worker's reusable state for writing responses: the scratch buffer of
/// [`Response::send_with`] and the cached response head (see [`HeadCache`]: a /plaintext head
/// is one copy of its prefix instead of eight field writes).
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    pub(crate) body: Vec<u8>,
    pub(crate) heads: HeadCache,
    /// A field line every response head carries (`Config::generation_header`), CRLF-ended;
    /// empty: none.
    pub(crate) extra_line: Vec<u8>,
    /// The data of a chunked request body that arrived whole with its head, for the handler.
    pub(crate) chunked: Vec<u8>,
    /// The worker's encoders when responses are compressed (`Config::compression`).
    pub(crate) codecs: Option<Codecs>,
}

/// The writer a handler answers through. One response per request: the first `send*` call
/// writes it, later calls are ignored (and a handler that writes nothing gets a 500).
///
/// The engine fills in `Server`, `Date` (cached, at most one second old), `Content-Length`
/// (computed), and `Connection` (close when the client asked for it, on HTTP/1.0 without
/// keep-alive, while the server drains, or after [`Response::close`]). For `HEAD` requests
/// only the head is written, with the Content-Length the body would have had.
#[derive(Debug)]
pub struct Response<'a> {
    out: &'a mut Vec<u8>,
    scratch: &'a mut Scratch,
    file: &'a mut Option<FileBody>,
    head_only: bool,
    connection: Connection,
    status: Option<u16>,
    /// The stream, when the request came over HTTP/2.
    h2: Option<H2Out<'a>>,
    /// The coding the client prefers of those offered; `None` when compression is off.
    coding: Option<Coding>,
}

impl<'a> Response<'a> {
    pub(crate) fn new(
        out: &'a mut Vec<u8>,
        scratch: &'a mut Scratch,
        file: &'a mut Option<FileBody>,
        req: &Request<'_, '_>,
        force_close: bool,
    ) -> Self {
        let connection = if force_close {
            Connection::Close
        } else {
            Connection::for_request(req)
        };
        // Only when compression is on: the field scan is then part of every request.
        let coding = scratch.codecs.as_ref().map(|_| {
            let accept = req.headers.iter().filter_map(|h| {
                h.name
                    .eq_ignore_ascii_case("accept-encoding")
                    .then_some(h.value)
            });
            crate::compress::negotiate(accept, Compression::OFFER)
        });
        Self {
            out,
            scratch,
            file,
            head_only: req.method == Method::Head,
            connection,
            status: None,
            h2: None,
            coding,
        }
    }

    /// The writer for a request that came on an HTTP/2 stream: the same calls, written as
    /// HEADERS and DATA frames.
    pub(crate) fn for_h2(
        out: &'a mut Vec<u8>,
        scratch: &'a mut Scratch,
        file: &'a mut Option<FileBody>,
        req: &Request<'_, '_>,
        h2: H2Out<'a>,
    ) -> Self {
        Self {
            h2: Some(h2),
            ..Self::new(out, scratch, file, req, false)
        }
    }

    /// A writer for a request no longer at hand (an async handler's answer, written when it
    /// is ready): what [`Response::new`] reads from the request, given. Its body goes
    /// uncompressed (the request's `Accept-Encoding` is gone).
    pub(crate) fn from_parts(
        out: &'a mut Vec<u8>,
        scratch: &'a mut Scratch,
        file: &'a mut Option<FileBody>,
        head_only: bool,
        connection: Connection,
    ) -> Self {
        Self {
            out,
            scratch,
            file,
            head_only,
            connection,
            status: None,
            h2: None,
            coding: None,
        }
    }

    /// [`Response::from_parts`] for an HTTP/2 stream (an async handler's answer).
    pub(crate) fn from_parts_h2(
        out: &'a mut Vec<u8>,
        scratch: &'a mut Scratch,
        file: &'a mut Option<FileBody>,
        head_only: bool,
        h2: H2Out<'a>,
    ) -> Self {
        Self {
            h2: Some(h2),
            ..Self::from_parts(out, scratch, file, head_only, Connection::Default)
        }
    }

    /// The status written, if a response has been written.
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    /// Whether the connection closes after this response.
    pub fn will_close(&self) -> bool {
        self.connection == Connection::Close
    }

    /// Closes the connection after this response (call before `send*`).
    pub fn close(&mut self) {
        self.connection = Connection::Close;
    }

    /// Whether the request was `HEAD` (the body given to `send*` is then not written).
    pub fn is_head(&self) -> bool {
        self.head_only
    }

    /// Writes a response with `Content-Type`, further `headers` (name, value) and `body`.
    pub fn send(
        &mut self,
        status: u16,
        content_type: &str,
        headers: &[(&str, &[u8])],
        body: &[u8],
    ) {
        if self.status.is_some() {
            return;
        }
        if let Some(coding) = self.coding
            && self.may_encode(status, content_type, headers, body)
        {
            return self.send_encoded(coding, status, content_type, headers, body);
        }
        self.send_plain(status, content_type, headers, body);
    }

    /// [`Response::send`] once the body is what goes out: the head, then the body on HTTP/1.1
    /// or as DATA frames on HTTP/2.
    fn send_plain(
        &mut self,
        status: u16,
        content_type: &str,
        headers: &[(&str, &[u8])],
        body: &[u8],
    ) {
        self.status = Some(status);
        self.head(status, Some(content_type), body.len() as u64, headers);
        if self.head_only || no_body(status) {
            return;
        }
        match &mut self.h2 {
            None => self.out.extend_from_slice(body),
            Some(h2) if !body.is_empty() => {
                let sent = h2.codec.data(self.out, h2.stream, body, true);
                h2.held.extend_from_slice(&body[sent..]);
            }
            Some(_) => {}
        }
    }

    /// The coding this response's body would be sent in by `send`/`send_with` (identity when
    /// the client accepts none, or compression is off).
    pub fn coding(&self) -> Coding {
        self.coding.unwrap_or(Coding::Identity)
    }

    /// Writes a response whose body `fill` writes into a scratch buffer first, so the
    /// Content-Length can be computed (e.g. `serde_json::to_writer`). The scratch buffer is the
    /// worker's and keeps its capacity: no allocation after the first use.
    pub fn send_with(
        &mut self,
        status: u16,
        content_type: &str,
        headers: &[(&str, &[u8])],
        fill: impl FnOnce(&mut Vec<u8>),
    ) {
        if self.status.is_some() {
            return;
        }
        let mut body = std::mem::take(&mut self.scratch.body);
        body.clear();
        fill(&mut body);
        self.send(status, content_type, headers, &body);
        body.clear();
        self.scratch.body = body;
    }

    /// Writes a head without `Content-Type` and without a body: `204`, `304`, `100`-class, or
    /// a response whose only content is its fields (`Allow`).
    pub fn send_empty(&mut self, status: u16, headers: &[(&str, &[u8])]) {
        if self.status.is_some() {
            return;
        }
        self.status = Some(status);
        self.head(status, None, 0, headers);
    }

    /// Writes a head that announces `content_length` body bytes but writes none: the answer to
    /// a `HEAD` request computed without the body at hand (for any other request, use it only
    /// with `content_length` 0). `Content-Length` is left out for 1xx, 204 and 304.
    pub fn send_head(
        &mut self,
        status: u16,
        content_type: Option<&str>,
        content_length: u64,
        headers: &[(&str, &[u8])],
    ) {
        if self.status.is_some() {
            return;
        }
        self.status = Some(status);
        self.head(status, content_type, content_length, headers);
    }

    /// Writes a head whose body is `body.len` bytes of a file, sent with `sendfile` after the
    /// head (nothing is sent for HEAD or bodiless statuses; the file is then closed at once).
    pub fn send_file(
        &mut self,
        status: u16,
        content_type: &str,
        headers: &[(&str, &[u8])],
        body: FileBody,
    ) {
        if self.status.is_some() {
            return;
        }
        self.status = Some(status);
        self.head(status, Some(content_type), body.len, headers);
        if !self.head_only && !no_body(status) && body.len > 0 {
            *self.file = Some(body);
        }
    }

    fn head(&mut self, status: u16, content_type: Option<&str>, len: u64, extra: &[(&str, &[u8])]) {
        if let Some(h2) = &mut self.h2 {
            let end_stream = self.head_only || no_body(status) || len == 0;
            let line = &self.scratch.extra_line;
            h2.codec
                .headers(self.out, h2.stream, end_stream, |enc, out| {
                    let length = (status != 304).then_some(len);
                    twelve_http::h2::respond::head(enc, out, status, content_type, length, extra);
                    if let Some((name, value)) = split_line(line) {
                        twelve_http::h2::respond::field(enc, out, name, value);
                    }
                });
            return;
        }
        // 304 carries no Content-Length of its own (RFC 9110 §15.4.5 lets it describe the
        // selected representation; omitting it is always correct and simpler for caches).
        let heads = &mut self.scratch.heads;
        match (content_type, status != 304, extra) {
            (Some(content_type), true, []) => {
                heads.encode_fields(self.out, status, content_type, len, self.connection);
            }
            _ => heads.encode_head(
                self.out,
                &ResponseHead {
                    status,
                    content_type,
                    content_length: (status != 304).then_some(len),
                    connection: self.connection,
                    extra_headers: extra,
                },
            ),
        }
        let line = &self.scratch.extra_line;
        if !line.is_empty() && self.out.ends_with(b"\r\n\r\n") {
            // Appended after the encoder's fields, before the blank line: the head cache's
            // fast path stays one copy, and this costs one more only when configured.
            self.out.truncate(self.out.len() - 2);
            self.out.extend_from_slice(line);
            self.out.extend_from_slice(b"\r\n");
        }
    }
}

/// The name and value of a CRLF-ended `Name: value` field line.
fn split_line(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let line = line.strip_suffix(b"\r\n").unwrap_or(line);
    let colon = line.iter().position(|&b| b == b':')?;
    Some((&line[..colon], line[colon + 1..].trim_ascii()))
}

/// Most header fields a handler may pass with a body that is then compressed: two more
/// (`Content-Encoding`, `Vary`) must fit the stack array of [`Response::send_encoded`].
const ENCODED_FIELDS: usize = 14;

impl Response<'_> {
    /// Whether `send` compresses this response (the rules of [`Compression`]).
    fn may_encode(
        &self,
        status: u16,
        content_type: &str,
        extra: &[(&str, &[u8])],
        body: &[u8],
    ) -> bool {
        let min = self
            .scratch
            .codecs
            .as_ref()
            .map_or(usize::MAX, |c| c.settings().min_bytes);
        status == 200
            && body.len() >= min
            && extra.len() <= ENCODED_FIELDS
            && compressible(content_type)
            && !extra
                .iter()
                .any(|(name, _)| name.eq_ignore_ascii_case("content-encoding"))
    }

    /// Writes `body` in `coding` (as it is, when identity or when compressing does not make it
    /// smaller) with `Content-Encoding` and `Vary: Accept-Encoding` added to `extra`. A HEAD
    /// request is compressed too: its `Content-Length` is the GET's (RFC 9110 §9.3.2).
    fn send_encoded(
        &mut self,
        coding: Coding,
        status: u16,
        content_type: &str,
        extra: &[(&str, &[u8])],
        body: &[u8],
    ) {
        let Some(mut codecs) = self.scratch.codecs.take() else {
            return;
        };
        let packed = codecs.compress(coding, body);
        let mut fields = [("", &b""[..]); ENCODED_FIELDS + 2];
        fields[..extra.len()].copy_from_slice(extra);
        let mut n = extra.len();
        if packed.is_some() {
            fields[n] = ("Content-Encoding", coding.token().as_bytes());
            n += 1;
        }
        // A handler's own Vary is left as it is; it should then name Accept-Encoding itself.
        if !extra
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("vary"))
        {
            fields[n] = ("Vary", b"Accept-Encoding");
            n += 1;
        }
        self.send_plain(status, content_type, &fields[..n], packed.unwrap_or(body));
        self.scratch.codecs = Some(codecs);
    }
}

/// 1xx, 204 and 304 responses never have a body (RFC 9110 §6.4.1).
fn no_body(status: u16) -> bool {
    status < 200 || status == 204 || status == 304
}

/// Whether a request's version allows an interim `100 Continue` (never to HTTP/1.0, RFC 9110
/// §15.2).
pub(crate) fn may_continue(req: &Request<'_, '_>) -> bool {
    req.expect_continue && req.version == Version::Http11
}
