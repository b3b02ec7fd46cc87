//! A minimal twelve-engine server: `cargo run -p twelve-engine --example hello [ADDR] [ROOT]`.
//!
//! Serves `GET /hello`, `POST /echo` (the request body back), the TechEmpower `GET /json` and
//! `GET /plaintext` of `twelve serve`, `/metrics`, and static files from ROOT when given; one
//! pinned worker per online CPU. Stop it with Ctrl-C (the default
//! SIGINT action; `twelve serve` drains gracefully instead).

use twelve_engine::apps::techempower;
use twelve_engine::{Config, Router, Server};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let config = Config {
        listen: vec![addr.parse()?],
        root: args.next().map(Into::into),
        ..Config::default()
    };
    let router = techempower::add_routes(Router::new())
        .get("/hello", |_req, _body, res| {
            res.send(200, "text/plain", &[], b"Hello, World!\n")
        })
        .post("/echo", |req, body, res| {
            let ctype = req
                .header("content-type")
                .and_then(|v| std::str::from_utf8(v).ok())
                .unwrap_or("application/octet-stream");
            res.send(200, ctype, &[], body)
        });
    let handle = Server::new(config, router).start()?;
    for addr in handle.local_addrs() {
        println!(
            "listening on http://{addr} with workers on CPUs {:?}",
            handle.cpus()
        );
    }
    handle.join();
    Ok(())
}
