//! `Router`: handlers by method and exact path (or path prefix), with the answers RFC 9110 asks
//! for when none matches (405 with `Allow`, 404, `OPTIONS` → 204 with `Allow`).

use crate::body::{BodySink, StreamHandler, Whole};
use crate::reply::Reply;
use crate::response::Response;
use crate::rt::Pending;
use std::future::Future;
use std::sync::Arc;
use twelve_http::{Method, Request};

/// Something that answers requests. Implemented for every
/// `Fn(&Request, &[u8], &mut Response) + Send + Sync + 'static`.
///
/// `body` is the whole request body (Content-Length or de-chunked), bounded by
/// `Limits::body_bytes`; empty when the request has none. Handlers run on the worker thread
/// and must not block.
pub trait Handler: Send + Sync + 'static {
    /// Answers one request by calling one of `res`'s `send*` methods.
    fn handle(&self, req: &Request<'_, '_>, body: &[u8], res: &mut Response<'_>);
}

impl<F> Handler for F
where
    F: Fn(&Request<'_, '_>, &[u8], &mut Response<'_>) + Send + Sync + 'static,
{
    fn handle(&self, req: &Request<'_, '_>, body: &[u8], res: &mut Response<'_>) {
        self(req, body, res)
    }
}

/// Something that answers requests later: it reads what it needs from the request at once
/// and returns a future of the answer, which the worker that took the request polls on its
/// own loop (`crate::rt`). Implemented for every `Fn(&Request, &[u8]) -> impl Future<Output =
/// Reply> + 'static`, `Send + Sync + 'static`; the future need not be `Send`.
pub trait AsyncHandler: Send + Sync + 'static {
    /// Starts answering one request.
    fn call(&self, req: &Request<'_, '_>, body: &[u8]) -> Pending;
}

impl<F, Fut> AsyncHandler for F
where
    F: Fn(&Request<'_, '_>, &[u8]) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Reply> + 'static,
{
    fn call(&self, req: &Request<'_, '_>, body: &[u8]) -> Pending {
        Box::pin(self(req, body))
    }
}

/// A route's handler for one method: one that answers at once, or later.
enum Kind {
    Now(Box<dyn Handler>),
    Later(Box<dyn AsyncHandler>),
}

struct Route {
    path: String,
    handlers: Vec<(Method, Kind)>,
    /// The index in `handlers` that answers each method (by [`slot_of`]), HEAD pointing at
    /// GET's when the route has no HEAD handler of its own: one load per request instead of
    /// two searches of `handlers` (measured: docs/results.md#user-space-per-request).
    by_method: [Option<u8>; METHODS],
    /// The `Allow` value for this path, built once.
    allow: String,
    /// The methods whose bodies stream ([`Router::streamed`]).
    streams: Vec<(Method, Arc<dyn StreamHandler>)>,
}

/// How many methods [`Method`] has.
const METHODS: usize = Method::ALL.len();

/// `m`'s slot in [`Route::by_method`]: a match rather than `m as usize`, so that a method added
/// to [`Method`] fails to compile here instead of indexing past the table.
const fn slot_of(m: Method) -> usize {
    match m {
        Method::Get => 0,
        Method::Head => 1,
        Method::Post => 2,
        Method::Put => 3,
        Method::Delete => 4,
        Method::Connect => 5,
        Method::Options => 6,
        Method::Trace => 7,
        Method::Patch => 8,
    }
}

impl Route {
    /// Rebuilds `by_method` and `allow` from `handlers`.
    fn index(&mut self) {
        self.by_method = [None; METHODS];
        for (i, (m, _)) in self.handlers.iter().enumerate() {
            // A route holds at most one handler per method, so fewer than `METHODS`.
            self.by_method[slot_of(*m)] = u8::try_from(i).ok();
        }
        if self.by_method[slot_of(Method::Head)].is_none() {
            self.by_method[slot_of(Method::Head)] = self.by_method[slot_of(Method::Get)];
        }
        self.allow = allow_list(self.handlers.iter().map(|(m, _)| *m));
    }
}

/// Routes requests to handlers by method and exact path (no patterns: the query string is not
/// part of the match). Shared by every worker (immutable once the server starts).
///
/// ```
/// use twelve_engine::{Method, Router};
/// let router = Router::new()
///     .get("/plaintext", |_req, _body, res| {
///         res.send(200, "text/plain", &[], b"Hello, World!")
///     })
///     .route(Method::Post, "/echo", |_req, body, res| {
///         res.send(200, "application/octet-stream", &[], body)
///     });
/// # let _ = router;
/// ```
#[derive(Default)]
pub struct Router {
    routes: Vec<Route>,
    /// Routes matched by path prefix, tried in order after every exact route.
    prefixed: Vec<Route>,
    fallback: Option<Box<dyn Handler>>,
    /// `Allow` for `OPTIONS *`: every method some route has.
    allow_any: String,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router")
            .field(
                "paths",
                &self.routes.iter().map(|r| &r.path).collect::<Vec<_>>(),
            )
            .field(
                "prefixes",
                &self.prefixed.iter().map(|r| &r.path).collect::<Vec<_>>(),
            )
            .field("fallback", &self.fallback.is_some())
            .finish()
    }
}

impl Router {
    /// A router with no routes: every request gets 404.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `handler` for `method` on exactly `path`. A `GET` route also answers `HEAD` (the
    /// engine writes only the head), unless a `HEAD` route is added for the same path.
    ///
    /// Takes a closure, whose argument types Rust then infers (`|req, body, res| ...`); use
    /// [`Router::route_with`] for a type implementing [`Handler`].
    pub fn route<F>(self, method: Method, path: &str, handler: F) -> Self
    where
        F: Fn(&Request<'_, '_>, &[u8], &mut Response<'_>) + Send + Sync + 'static,
    {
        self.route_with(method, path, handler)
    }

    /// [`Router::route`] for any [`Handler`].
    pub fn route_with(mut self, method: Method, path: &str, handler: impl Handler) -> Self {
        self.add(false, method, path, Kind::Now(Box::new(handler)));
        self
    }

    /// Adds an async handler for `method` on exactly `path`: `handler` reads the request and
    /// returns a future of its [`Reply`], e.g.
    /// `|req, _body| { let id = ..; async move { Reply::json(..) } }`.
    pub fn route_async<F, Fut>(mut self, method: Method, path: &str, handler: F) -> Self
    where
        F: Fn(&Request<'_, '_>, &[u8]) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Reply> + 'static,
    {
        self.add(false, method, path, Kind::Later(Box::new(handler)));
        self
    }

    /// Adds an async `GET` (and `HEAD`) route ([`Router::route_async`]).
    pub fn get_async<F, Fut>(self, path: &str, handler: F) -> Self
    where
        F: Fn(&Request<'_, '_>, &[u8]) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Reply> + 'static,
    {
        self.route_async(Method::Get, path, handler)
    }

    /// Adds an async `GET` (and `HEAD`) handler for every path that starts with `prefix`
    /// and matches no exact route (the handler reads the rest of the path itself); tried in
    /// order with the [`Router::prefix`] routes.
    pub fn get_async_prefix<F, Fut>(self, prefix: &str, handler: F) -> Self
    where
        F: Fn(&Request<'_, '_>, &[u8]) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Reply> + 'static,
    {
        self.route_async_prefix(Method::Get, prefix, handler)
    }

    /// [`Router::get_async_prefix`] for any method (`PUT /items/{id}`, say).
    pub fn route_async_prefix<F, Fut>(mut self, method: Method, prefix: &str, handler: F) -> Self
    where
        F: Fn(&Request<'_, '_>, &[u8]) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Reply> + 'static,
    {
        self.add(true, method, prefix, Kind::Later(Box::new(handler)));
        self
    }

    /// Adds `handler` for `method` on every path that starts with `prefix` (`/json/` answers
    /// `/json/25`), for paths no exact route matched; prefixes are tried in the order added.
    /// The handler reads the rest of the path from [`Request::path_bytes`].
    pub fn prefix<F>(mut self, method: Method, prefix: &str, handler: F) -> Self
    where
        F: Fn(&Request<'_, '_>, &[u8], &mut Response<'_>) + Send + Sync + 'static,
    {
        self.add(true, method, prefix, Kind::Now(Box::new(handler)));
        self
    }

    /// [`Router::prefix`] for any [`Handler`].
    pub fn prefix_with(mut self, method: Method, prefix: &str, handler: impl Handler) -> Self {
        self.add(true, method, prefix, Kind::Now(Box::new(handler)));
        self
    }

    /// Adds a route whose request bodies reach `handler` as they arrive (see
    /// [`StreamHandler`]) instead of whole: for uploads larger than a handler should hold.
    pub fn streamed(mut self, method: Method, path: &str, handler: impl StreamHandler) -> Self {
        let handler: Arc<dyn StreamHandler> = Arc::new(handler);
        let whole = Kind::Now(Box::new(Whole(handler.clone())));
        let route = self.add(false, method, path, whole);
        route.streams.retain(|(m, _)| *m != method);
        route.streams.push((method, handler));
        self
    }

    fn add(&mut self, prefix: bool, method: Method, path: &str, handler: Kind) -> &mut Route {
        let list = if prefix {
            &mut self.prefixed
        } else {
            &mut self.routes
        };
        let i = match list.iter().position(|r| r.path == path) {
            Some(i) => i,
            None => {
                list.push(Route {
                    path: path.to_owned(),
                    handlers: Vec::new(),
                    by_method: [None; METHODS],
                    allow: String::new(),
                    streams: Vec::new(),
                });
                list.len() - 1
            }
        };
        let route = &mut list[i];
        route.handlers.retain(|(m, _)| *m != method);
        route.streams.retain(|(m, _)| *m != method);
        route.handlers.push((method, handler));
        route.index();
        self.allow_any = allow_list(
            self.routes
                .iter()
                .chain(&self.prefixed)
                .flat_map(|r| r.handlers.iter().map(|(m, _)| *m)),
        );
        let list = if prefix {
            &mut self.prefixed
        } else {
            &mut self.routes
        };
        &mut list[i]
    }

    /// The route a path selects: an exact one, else the first prefix that matches.
    #[inline]
    fn find(&self, path: &[u8]) -> Option<&Route> {
        self.routes
            .iter()
            .find(|r| same_path(&r.path, path))
            .or_else(|| {
                self.prefixed
                    .iter()
                    .find(|r| path.starts_with(r.path.as_bytes()))
            })
    }

    /// A sink for `req`'s body when its route streams bodies of its method
    /// ([`Router::streamed`]); `None` otherwise (the body is then collected whole).
    pub(crate) fn open_stream(&self, req: &Request<'_, '_>) -> Option<Box<dyn BodySink>> {
        let route = self.find(req.path_bytes())?;
        let (_, h) = route.streams.iter().find(|(m, _)| *m == req.method)?;
        Some(h.open(req))
    }

    /// Whether `req`'s route streams bodies of its method.
    pub(crate) fn streams(&self, req: &Request<'_, '_>) -> bool {
        self.find(req.path_bytes())
            .is_some_and(|r| r.streams.iter().any(|(m, _)| *m == req.method))
    }

    /// Adds a `GET` (and `HEAD`) route.
    pub fn get<F>(self, path: &str, handler: F) -> Self
    where
        F: Fn(&Request<'_, '_>, &[u8], &mut Response<'_>) + Send + Sync + 'static,
    {
        self.route(Method::Get, path, handler)
    }

    /// Adds a `POST` route.
    pub fn post<F>(self, path: &str, handler: F) -> Self
    where
        F: Fn(&Request<'_, '_>, &[u8], &mut Response<'_>) + Send + Sync + 'static,
    {
        self.route(Method::Post, path, handler)
    }

    /// Answers requests no route's path matched (instead of 404): static files, for one.
    pub fn fallback<F>(self, handler: F) -> Self
    where
        F: Fn(&Request<'_, '_>, &[u8], &mut Response<'_>) + Send + Sync + 'static,
    {
        self.fallback_with(handler)
    }

    /// [`Router::fallback`] for any [`Handler`].
    pub fn fallback_with(mut self, handler: impl Handler) -> Self {
        self.fallback = Some(Box::new(handler));
        self
    }

    /// Whether a fallback handler is set.
    pub fn has_fallback(&self) -> bool {
        self.fallback.is_some()
    }

    /// Answers `req` through `res`, or returns the future of the answer of an async handler
    /// (then `res` is left unwritten).
    pub(crate) fn dispatch(
        &self,
        req: &Request<'_, '_>,
        body: &[u8],
        res: &mut Response<'_>,
    ) -> Option<Pending> {
        if req.method == Method::Options && req.path_bytes() == b"*" {
            // RFC 9110 §9.3.7: OPTIONS * asks about the server in general.
            let allow = if self.allow_any.is_empty() {
                "OPTIONS"
            } else {
                &self.allow_any
            };
            res.send_empty(204, &[("Allow", allow.as_bytes())]);
            return None;
        }
        if req.method == Method::Connect {
            // No tunnels here (RFC 9110 §9.3.6); what follows CONNECT would be tunnel bytes,
            // so the connection cannot be reused either.
            res.close();
            res.send(
                501,
                "text/plain; charset=utf-8",
                &[],
                b"501 Not Implemented\n",
            );
            return None;
        }
        let Some(route) = self.find(req.path_bytes()) else {
            match &self.fallback {
                Some(h) => h.handle(req, body, res),
                None => not_found(res),
            }
            return None;
        };
        let handler =
            route.by_method[slot_of(req.method)].and_then(|i| route.handlers.get(usize::from(i)));
        match handler {
            Some((_, Kind::Now(h))) => {
                h.handle(req, body, res);
                return None;
            }
            Some((_, Kind::Later(h))) => return Some(h.call(req, body)),
            None => {}
        }
        if req.method == Method::Options {
            res.send_empty(204, &[("Allow", route.allow.as_bytes())]);
            return None;
        }
        // RFC 9110 §15.5.6: a 405 MUST carry Allow.
        res.send(
            405,
            "text/plain; charset=utf-8",
            &[("Allow", route.allow.as_bytes())],
            b"405 Method Not Allowed\n",
        );
        None
    }
}

/// `a == b` for paths, without a `memcmp` call up to 32 bytes: lengths first (most routes
/// differ there), then overlapping loads from each side (`twelve_http::same_short`). `==` on
/// `str` calls `memcmp` for every route of equal length (measured:
/// docs/results.md#user-space-per-request).
#[inline]
fn same_path(a: &str, b: &[u8]) -> bool {
    twelve_http::same_short(a.as_bytes(), b)
}

fn not_found(res: &mut Response<'_>) {
    res.send(404, "text/plain; charset=utf-8", &[], b"404 Not Found\n");
}

/// `GET, HEAD, POST, OPTIONS`: the route's methods, HEAD implied by GET, OPTIONS always.
fn allow_list(methods: impl Iterator<Item = Method>) -> String {
    let mut all: Vec<Method> = methods.collect();
    if all.contains(&Method::Get) {
        all.push(Method::Head);
    }
    all.push(Method::Options);
    let order = [
        Method::Get,
        Method::Head,
        Method::Post,
        Method::Put,
        Method::Patch,
        Method::Delete,
        Method::Connect,
        Method::Trace,
        Method::Options,
    ];
    let names: Vec<&str> = order
        .iter()
        .filter(|m| all.contains(m))
        .map(|m| m.as_str())
        .collect();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use twelve_http::{Header, Limits, Status, parse_request};

    fn answer(router: &Router, raw: &str) -> String {
        let mut headers = [Header::EMPTY; 16];
        let Ok(Status::Complete(req)) =
            parse_request(raw.as_bytes(), &mut headers, &Limits::default())
        else {
            panic!("test request did not parse")
        };
        let (mut out, mut file) = (Vec::new(), None);
        let mut scratch = crate::response::Scratch::default();
        let mut res = Response::new(&mut out, &mut scratch, &mut file, &req, false);
        assert!(router.dispatch(&req, b"", &mut res).is_none());
        String::from_utf8(out).unwrap()
    }

    fn router() -> Router {
        Router::new()
            .get(
                "/a",
                |_: &Request<'_, '_>, _: &[u8], r: &mut Response<'_>| {
                    r.send(200, "text/plain", &[], b"A")
                },
            )
            .post(
                "/b",
                |_: &Request<'_, '_>, b: &[u8], r: &mut Response<'_>| {
                    r.send(200, "text/plain", &[], b)
                },
            )
    }

    macro_rules! route {
        ($($name:ident: $raw:expr => $status:expr, $has:expr;)*) => {$(
            #[test]
            fn $name() {
                let out = answer(&router(), $raw);
                assert!(out.starts_with($status), "{out}");
                assert!(out.contains($has), "{out}");
            }
        )*};
    }

    route! {
        get_matches: "GET /a HTTP/1.1\r\nHost: x\r\n\r\n" => "HTTP/1.1 200 OK", "\r\n\r\nA";
        head_uses_get_without_body: "HEAD /a HTTP/1.1\r\nHost: x\r\n\r\n" => "HTTP/1.1 200 OK", "Content-Length: 1\r\n\r\n";
        query_is_not_part_of_the_match: "GET /a?x=1 HTTP/1.1\r\nHost: x\r\n\r\n" => "HTTP/1.1 200", "A";
        wrong_method_is_405_with_allow: "DELETE /a HTTP/1.1\r\nHost: x\r\n\r\n" => "HTTP/1.1 405", "Allow: GET, HEAD, OPTIONS\r\n";
        post_route_allow: "GET /b HTTP/1.1\r\nHost: x\r\n\r\n" => "HTTP/1.1 405", "Allow: POST, OPTIONS\r\n";
        unknown_path_is_404: "GET /zz HTTP/1.1\r\nHost: x\r\n\r\n" => "HTTP/1.1 404", "Not Found";
        options_star_is_204_with_allow: "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n" => "HTTP/1.1 204", "Allow: GET, HEAD, POST, OPTIONS\r\n";
        connect_is_501: "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n" => "HTTP/1.1 501", "Connection: close\r\n";
        options_path_is_204_with_allow: "OPTIONS /a HTTP/1.1\r\nHost: x\r\n\r\n" => "HTTP/1.1 204", "Allow: GET, HEAD, OPTIONS\r\n";
    }

    macro_rules! same {
        ($($name:ident: $a:expr, $b:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                let (a, b): (&str, &str) = ($a, $b);
                assert_eq!(same_path(a, b.as_bytes()), $want);
                assert_eq!(same_path(b, a.as_bytes()), $want);
            }
        )*};
    }

    // Every length class of `same_path`, equal and differing at the first and last byte.
    same! {
        same_empty: "", "" => true;
        same_short: "/a", "/a" => true;
        differ_short: "/a", "/b" => false;
        differ_length: "/json", "/jsonx" => false;
        same_half: "/json", "/json" => true;
        differ_half_first: "/json", "_json" => false;
        differ_half_last: "/json", "/jsoN" => false;
        same_word: "/plaintext", "/plaintext" => true;
        differ_word_first: "/plaintext", "_plaintext" => false;
        differ_word_middle: "/plaintext", "/plainText" => false;
        differ_word_last: "/plaintext", "/plaintexT" => false;
        same_sixteen: "/0123456789abcde", "/0123456789abcde" => true;
        differ_sixteen: "/0123456789abcde", "/0123456789Abcde" => false;
        same_long: "/a/much/longer/path/than/sixteen", "/a/much/longer/path/than/sixteen" => true;
        differ_long: "/a/much/longer/path/than/sixteen", "/a/much/longer/path/than/sixteeN" => false;
    }

    #[test]
    fn head_response_has_no_body() {
        let out = answer(&router(), "HEAD /a HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(out.ends_with("\r\n\r\n"), "{out}");
    }

    /// Every method has a slot of its own in the table.
    #[test]
    fn every_method_has_its_own_slot() {
        let mut seen = [false; METHODS];
        for m in Method::ALL {
            assert!(!std::mem::replace(&mut seen[slot_of(m)], true), "{m:?}");
        }
    }

    /// A HEAD handler of the route's own answers HEAD, whichever order the two were added in,
    /// and replacing a method's handler keeps the others.
    #[test]
    fn own_head_handler_wins_over_get() {
        let text = |body: &'static [u8]| {
            move |_: &Request<'_, '_>, _: &[u8], r: &mut Response<'_>| {
                r.send(200, "text/plain", &[("X-Body", body)], body)
            }
        };
        let head_last =
            Router::new()
                .get("/a", text(b"get"))
                .route(Method::Head, "/a", text(b"head"));
        let head_first = Router::new()
            .route(Method::Head, "/a", text(b"head"))
            .get("/a", text(b"old"))
            .get("/a", text(b"get"));
        for r in [head_last, head_first] {
            assert!(answer(&r, "HEAD /a HTTP/1.1\r\nHost: x\r\n\r\n").contains("X-Body: head"));
            assert!(answer(&r, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n").ends_with("\r\n\r\nget"));
        }
    }

    /// Prefix routes answer after exact ones, in the order added, and give 405 with their own
    /// `Allow` like exact routes.
    #[test]
    fn prefix_routes_answer_what_no_exact_route_took() {
        let text = |body: &'static [u8]| {
            move |_: &Request<'_, '_>, _: &[u8], r: &mut Response<'_>| {
                r.send(200, "text/plain", &[], body)
            }
        };
        let r = Router::new()
            .get("/json", text(b"exact"))
            .prefix(Method::Get, "/json/", text(b"prefix"))
            .prefix(Method::Get, "/json/a", text(b"never"));
        let get = |path: &str| answer(&r, &format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n"));
        assert!(get("/json").ends_with("\r\n\r\nexact"));
        assert!(get("/json/25?m=1").ends_with("\r\n\r\nprefix"));
        assert!(get("/json/abc").ends_with("\r\n\r\nprefix"));
        assert!(get("/jsonx").starts_with("HTTP/1.1 404"));
        let post = answer(
            &r,
            "POST /json/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
        );
        assert!(post.starts_with("HTTP/1.1 405"), "{post}");
        assert!(post.contains("Allow: GET, HEAD, OPTIONS\r\n"), "{post}");
    }

    #[test]
    fn fallback_answers_unknown_paths() {
        let r = router().fallback(|_: &Request<'_, '_>, _: &[u8], r: &mut Response<'_>| {
            r.send(200, "text/plain", &[], b"F")
        });
        assert!(answer(&r, "GET /zz HTTP/1.1\r\nHost: x\r\n\r\n").ends_with("\r\n\r\nF"));
    }
}
