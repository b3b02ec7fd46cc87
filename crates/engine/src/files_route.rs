//! The glue between the router and static files: a fallback [`Handler`] that asks
//! [`StaticFiles`] for a reply plan and writes it through [`Response`].

use crate::files::{Body, FileError, RangeBuf, StaticFiles};
use crate::response::Response;
use crate::router::Handler;
use twelve_http::Request;

/// Serves files under one root for requests no route matched.
pub(crate) struct FilesHandler(pub(crate) StaticFiles);

impl Handler for FilesHandler {
    fn handle(&self, req: &Request<'_, '_>, _body: &[u8], res: &mut Response<'_>) {
        let headers = req.headers.iter().map(|h| (h.name.as_bytes(), h.value));
        let reply = self
            .0
            .reply(req.method.as_str().as_bytes(), req.path_bytes(), headers);
        let mut reply = match reply {
            Ok(r) => r,
            Err(e) => {
                let allow: &[(&str, &[u8])] = if e == FileError::MethodNotAllowed {
                    &[("Allow", FileError::ALLOW.as_bytes())]
                } else {
                    &[]
                };
                let body = match e {
                    FileError::BadRequest => &b"400 Bad Request\n"[..],
                    FileError::Forbidden => b"403 Forbidden\n",
                    FileError::NotFound => b"404 Not Found\n",
                    FileError::MethodNotAllowed => b"405 Method Not Allowed\n",
                };
                return res.send(e.status(), "text/plain; charset=utf-8", allow, body);
            }
        };
        let body = reply.body.take();
        let mut range = RangeBuf::new();
        let extra = reply.extra_fields(&mut range);
        let content_type = reply.content_type.unwrap_or("application/octet-stream");
        match body {
            Some(Body::File(b)) => res.send_file(reply.status, content_type, extra.as_slice(), b),
            // A cached file goes out with its head, in one send.
            Some(Body::Memory { data, start, len }) => res.send(
                reply.status,
                content_type,
                extra.as_slice(),
                &data[start..start + len],
            ),
            // HEAD (the plan has the GET's length but no file), 301, 304, 416.
            None => res.send_head(
                reply.status,
                reply.content_type,
                reply.content_length.unwrap_or(0),
                extra.as_slice(),
            ),
        }
    }
}
