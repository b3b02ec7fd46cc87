//! The TechEmpower Framework Benchmarks endpoints: `GET /json` and `GET /plaintext`.
//!
//! Both follow the benchmark's rules for the "Realistic" class
//! (<https://github.com/TechEmpower/FrameworkBenchmarks/wiki/Project-Information-Framework-Tests-Overview>):
//! the JSON body is serialized by a JSON library from a freshly built object on every request,
//! never cached; the plaintext body is a constant.
//!
//! ```no_run
//! use twelve_engine::{Config, Router, Server, apps::techempower};
//!
//! // The endpoints alone, as `twelve serve` answers them, ...
//! let server = Server::new(Config::default(), techempower::router()).start()?;
//! // ... or beside an application's own routes.
//! let mine = techempower::add_routes(Router::new().get("/hello", |_req, _body, res| {
//!     res.send(200, "text/plain", &[], b"hi")
//! }));
//! # let _ = mine;
//! server.join();
//! # Ok::<(), twelve_engine::StartError>(())
//! ```

use crate::response::Response;
use crate::router::Router;
use serde::Serialize;
use twelve_http::Request;

/// Path of the JSON serialization test.
pub const JSON_PATH: &str = "/json";
/// Path of the plaintext test.
pub const PLAINTEXT_PATH: &str = "/plaintext";

/// The JSON test's object: `{"message":"Hello, World!"}`.
#[derive(Serialize)]
struct Message {
    message: &'static str,
}

/// A router with only the two endpoints.
pub fn router() -> Router {
    add_routes(Router::new())
}

/// Adds `GET` (and `HEAD`) [`JSON_PATH`] and [`PLAINTEXT_PATH`] to `router`.
pub fn add_routes(router: Router) -> Router {
    router.get(JSON_PATH, json).get(PLAINTEXT_PATH, plaintext)
}

/// `200`, `application/json`, `{"message":"Hello, World!"}` serialized by serde_json into the
/// response buffer (no allocation once the buffer is warm).
pub fn json(_req: &Request<'_, '_>, _body: &[u8], res: &mut Response<'_>) {
    res.send_with(200, "application/json", &[], |buf| {
        let msg = Message {
            message: "Hello, World!",
        };
        // Writing into a Vec cannot fail.
        let _ = serde_json::to_writer(buf, &msg);
    })
}

/// `200`, `text/plain`, `Hello, World!`.
pub fn plaintext(_req: &Request<'_, '_>, _body: &[u8], res: &mut Response<'_>) {
    res.send(200, "text/plain", &[], b"Hello, World!")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, Server};
    use std::io::{Read, Write};

    /// Sends `request` (which asks for `Connection: close`) and reads the whole answer.
    fn answer(request: &[u8]) -> String {
        let server = Server::new(Config::loopback(1), router()).start().unwrap();
        let mut s = std::net::TcpStream::connect(server.local_addrs()[0]).unwrap();
        s.write_all(request).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn json_is_the_techempower_message() {
        let out = answer(b"GET /json HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
        assert!(
            out.starts_with("HTTP/1.1 200 OK\r\nServer: twelve\r\nDate: "),
            "{out}"
        );
        assert!(out.contains("Content-Type: application/json\r\nContent-Length: 27\r\n"));
        assert!(
            out.ends_with("\r\n\r\n{\"message\":\"Hello, World!\"}"),
            "{out}"
        );
    }

    #[test]
    fn plaintext_is_hello_world() {
        let out = answer(b"GET /plaintext HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
        assert!(
            out.starts_with("HTTP/1.1 200 OK\r\nServer: twelve\r\nDate: "),
            "{out}"
        );
        assert!(out.contains("Content-Type: text/plain\r\nContent-Length: 13\r\n"));
        assert!(out.ends_with("\r\n\r\nHello, World!"), "{out}");
    }
}
