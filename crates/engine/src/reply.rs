//! `Reply`: an answer made later, by an async handler, as an owned value: the engine writes
//! it into the request's slot once it is ready (HTTP/1.1: in request order on its connection),
//! through the same encoder as [`Response`](crate::Response).

use std::cell::RefCell;

/// Bodies kept per thread for [`Reply::buffer`]: a worker writes an answer as soon as it is
/// ready, so only a few are out at a time.
const SPARE_BODIES: usize = 64;
/// The largest body kept.
const SPARE_BYTES: usize = 64 * 1024;
/// The smallest body worth keeping. glibc's malloc serves smaller ones from its per-thread
/// cache; a request of 1 KiB or more first merges every freed small chunk
/// (`malloc_consolidate`).
const KEEP_FROM: usize = 1024;

thread_local! {
    /// Written answers' bodies, emptied, for the next ones.
    static SPARE: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

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

    /// An empty buffer of at least `capacity` bytes for a body: from 1 KiB on, one that an
    /// earlier answer on this thread left behind when there is one (the engine keeps a
    /// written answer's body for this), so a handler whose bodies are of one size allocates
    /// none once warm.
    pub fn buffer(capacity: usize) -> Vec<u8> {
        if capacity < KEEP_FROM {
            return Vec::with_capacity(capacity);
        }
        // `try_with`: a thread that is ending has no list any more.
        let mut body = SPARE
            .try_with(|s| s.try_borrow_mut().ok()?.pop())
            .ok()
            .flatten()
            .unwrap_or_default();
        body.reserve(capacity);
        body
    }

    /// Keeps the written answer's body for [`Reply::buffer`] when its size is worth it.
    pub(crate) fn recycle(self) {
        let mut body = self.body;
        if !(KEEP_FROM..=SPARE_BYTES).contains(&body.capacity()) {
            return;
        }
        body.clear();
        let _ = SPARE.try_with(|s| {
            if let Ok(mut s) = s.try_borrow_mut()
                && s.len() < SPARE_BODIES
            {
                s.push(body);
            }
        });
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Empties this thread's list, whatever an earlier test on the thread left in it.
    fn drain() {
        while SPARE.with(|s| s.borrow_mut().pop()).is_some() {}
    }

    #[test]
    fn a_written_body_of_a_kept_size_comes_back_empty() {
        drain();
        let body = Reply::buffer(1300);
        assert!(body.capacity() >= 1300 && body.is_empty());
        let at = body.as_ptr();
        let mut reply = Reply::json(body);
        reply.body.extend_from_slice(b"{}");
        reply.recycle();
        let again = Reply::buffer(1200);
        assert_eq!((again.as_ptr(), again.len()), (at, 0));
        // A larger ask than the spare's grows it: never less than asked.
        Reply::json(again).recycle();
        assert!(Reply::buffer(9000).capacity() >= 9000);
    }

    #[test]
    fn small_and_huge_bodies_are_not_kept() {
        drain();
        for cap in [10, KEEP_FROM - 1, SPARE_BYTES + 1] {
            Reply::json(Vec::with_capacity(cap)).recycle();
        }
        assert_eq!(SPARE.with(|s| s.borrow().len()), 0);
        for _ in 0..SPARE_BODIES + 5 {
            Reply::json(Vec::with_capacity(KEEP_FROM)).recycle();
        }
        assert_eq!(SPARE.with(|s| s.borrow().len()), SPARE_BODIES);
    }
}
