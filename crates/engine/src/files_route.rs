//! The glue between the router and static files: [`Files`], a [`Handler`] that asks
//! [`StaticFiles`] for a reply plan and writes it through [`Response`]: `Config::root`'s
//! fallback, or a route of its own under a path prefix.

use crate::files::{Body, FileCacheConfig, FileError, RangeBuf, StaticFiles};
use crate::response::Response;
use crate::router::Handler;
use std::path::Path;
use twelve_http::Request;

/// Serves the files under one directory (the rules: `twelve serve --root`'s, in
/// docs/ARCHITECTURE.md and the `files` module), as the router's fallback or under a prefix:
///
/// ```no_run
/// use twelve_engine::{Files, FileCacheConfig, Method, Router};
/// let files = Files::open("/data/static".as_ref(), FileCacheConfig::default())?
///     .mounted_at("/static")
///     .precompressed(true);
/// let router = Router::new().prefix_with(Method::Get, "/static/", files);
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct Files {
    files: StaticFiles,
    /// Cut from the request's path before it names a file under the directory.
    mount: String,
}

impl Files {
    /// Serves `dir`, each worker keeping the small files `cache` allows in memory. Fails when
    /// `dir` cannot be opened as a directory.
    pub fn open(dir: &Path, cache: FileCacheConfig) -> std::io::Result<Files> {
        Ok(Files {
            files: StaticFiles::open(dir, cache)?,
            mount: String::new(),
        })
    }

    /// Answers paths under `prefix` (no trailing slash: `/static` serves `/static/a.css` from
    /// `DIR/a.css`); a request whose path is outside it gets 404.
    pub fn mounted_at(mut self, prefix: &str) -> Files {
        self.mount = prefix.trim_end_matches('/').to_owned();
        self
    }

    /// Serves `NAME.br` or `NAME.gz` beside `NAME` to a client that accepts that coding, as
    /// nginx's `gzip_static`/`brotli_static` do (the `files` module has the rules).
    pub fn precompressed(mut self, on: bool) -> Files {
        self.files = self.files.precompressed(on);
        self
    }
}

impl Handler for Files {
    fn handle(&self, req: &Request<'_, '_>, _body: &[u8], res: &mut Response<'_>) {
        let headers = req.headers.iter().map(|h| (h.name.as_bytes(), h.value));
        let path = match req.path_bytes().strip_prefix(self.mount.as_bytes()) {
            Some(rest) if rest.first() == Some(&b'/') => rest,
            _ => {
                let e = FileError::NotFound;
                return res.send(
                    e.status(),
                    "text/plain; charset=utf-8",
                    &[],
                    b"404 Not Found\n",
                );
            }
        };
        let reply = self
            .files
            .reply(req.method.as_str().as_bytes(), path, headers);
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
