//! `Reply`: an answer made later, by an async handler, as an owned value: the engine writes
//! it into the request's slot once it is ready (HTTP/1.1: in request order on its connection),
//! through the same encoder as [`Response`](crate::Response).

/// The answer of an async handler. The engine adds what it adds to every response (`Server`,
/// `Date`, `Content-Length`, `Connection`), and writes only the head for a `HEAD` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// `Content-Type`; `None` for a response without a body (204, 304).
    pub content_type: Option<&'static str>,
    /// Further header fields (name, value); the first eight are written.
    pub headers: Vec<(&'static str, Vec<u8>)>,
    /// The body.
    pub body: Vec<u8>,
    /// Close the connection after this answer.
    pub close: bool,
}

impl Reply {
    /// A response with a body of `content_type`.
    pub fn new(status: u16, content_type: &'static str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status,
            content_type: Some(content_type),
            headers: Vec::new(),
            body: body.into(),
            close: false,
        }
    }

    /// `text/plain; charset=utf-8`.
    pub fn text(status: u16, body: impl Into<Vec<u8>>) -> Self {
        Self::new(status, "text/plain; charset=utf-8", body)
    }

    /// `application/json`.
    pub fn json(body: impl Into<Vec<u8>>) -> Self {
        Self::new(200, "application/json", body)
    }

    /// A head without a body or `Content-Type` (204, say).
    pub fn empty(status: u16) -> Self {
        Self {
            status,
            content_type: None,
            headers: Vec::new(),
            body: Vec::new(),
            close: false,
        }
    }

    /// Adds a header field.
    #[must_use]
    pub fn header(mut self, name: &'static str, value: impl Into<Vec<u8>>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// The answer of a handler that ran past `Config::handler_timeout`.
    pub(crate) fn timed_out() -> Self {
        Self::text(503, &b"503 handler timed out\n"[..])
    }

    /// Writes this answer through `res`.
    pub(crate) fn write(&self, res: &mut crate::Response<'_>) {
        if self.close {
            res.close();
        }
        let mut fields: [(&str, &[u8]); 8] = [("", &[]); 8];
        let n = self.headers.len().min(fields.len());
        for (f, (name, value)) in fields.iter_mut().zip(&self.headers) {
            *f = (name, value);
        }
        match self.content_type {
            Some(ct) => res.send(self.status, ct, &fields[..n], &self.body),
            None => res.send_empty(self.status, &fields[..n]),
        }
    }
}
