//! Request bodies handed to a handler piece by piece as they arrive ([`BodySink`]), for routes
//! added with [`Router::streamed`](crate::Router::streamed): an upload of many megabytes
//! passes through the connection's read buffer and never sits whole in memory.

use crate::response::Response;
use crate::router::Handler;
use std::sync::Arc;
use twelve_http::Request;

/// Takes one request's body as it arrives, then answers. Lives on the worker thread, one per
/// request in progress.
pub trait BodySink {
    /// The next bytes of the body, in order; called as reads bring them (never with bytes of
    /// the next request).
    fn data(&mut self, bytes: &[u8]);
    /// The body is complete: answer through `res`, as a [`Handler`] would.
    fn end(self: Box<Self>, req: &Request<'_, '_>, res: &mut Response<'_>);
}

/// Opens a [`BodySink`] for a request whose head has arrived. Implemented for every
/// `Fn(&Request) -> Box<dyn BodySink> + Send + Sync + 'static`.
///
/// A body with `Content-Length` that did not arrive whole with its head is streamed: each read's
/// bytes go to the sink and leave the read buffer. A body that did (the common small one), and
/// a chunked body (decoded whole first, within `Limits::body_bytes`), go to the sink in one
/// [`BodySink::data`] call.
pub trait StreamHandler: Send + Sync + 'static {
    /// A sink for `req`'s body.
    fn open(&self, req: &Request<'_, '_>) -> Box<dyn BodySink>;
}

impl<F> StreamHandler for F
where
    F: Fn(&Request<'_, '_>) -> Box<dyn BodySink> + Send + Sync + 'static,
{
    fn open(&self, req: &Request<'_, '_>) -> Box<dyn BodySink> {
        self(req)
    }
}

/// A streamed route's answer to a body that is already whole.
pub(crate) struct Whole(pub(crate) Arc<dyn StreamHandler>);

impl Handler for Whole {
    fn handle(&self, req: &Request<'_, '_>, body: &[u8], res: &mut Response<'_>) {
        let mut sink = self.0.open(req);
        if !body.is_empty() {
            sink.data(body);
        }
        sink.end(req, res);
    }
}
