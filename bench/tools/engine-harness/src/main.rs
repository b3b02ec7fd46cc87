//! Instructions per pipelined request of HttpArena's pipelined profile (16 x GET /pipeline
//! with Host only per read) or one baseline shape, fed to one Conn through the bench hook.
use twelve_engine::apps::{httparena, techempower};
use twelve_engine::bench_hook::PipelineBench;
fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let shape = args.next().unwrap_or_else(|| "pipeline".into());
    let one = match shape.as_str() {
        "pipeline" => "GET /pipeline HTTP/1.1\r\nHost: localhost:8080\r\n\r\n",
        "get" => "GET /baseline11?a=13&b=42 HTTP/1.1\r\nHost: localhost:8080\r\n\r\n",
        "post" => {
            "POST /baseline11?a=13&b=42 HTTP/1.1\r\nHost: localhost:8080\r\nContent-Length: 2\r\n\r\n20"
        }
        "chunked" => {
            "POST /baseline11?a=13&b=42 HTTP/1.1\r\nHost: localhost:8080\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n20\r\n0\r\n\r\n"
        }
        "tfb" => {
            "GET /plaintext HTTP/1.1\r\nHost: localhost\r\nAccept: application/json,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7\r\n\r\n"
        }
        _ => panic!("shape"),
    };
    let batch = one.repeat(16).into_bytes();
    let router = if shape == "tfb" {
        techempower::router()
    } else {
        httparena::router()
    };
    let mut bench = PipelineBench::new(router);
    let mut total = 0usize;
    for _ in 0..rounds {
        total += bench.feed(std::hint::black_box(&batch));
    }
    println!("{total}");
}
