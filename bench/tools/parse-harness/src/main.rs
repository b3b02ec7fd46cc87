//! Parse-only instructions per pipelined request: 16 copies of bench/callgrind.sh's request
//! (Host + TechEmpower's Accept) per batch, parsed by `parse_request` out of line with limits
//! known only at run time and one header array per batch, as the server calls it.
//! Usage: parse-harness ROUNDS (count.sh runs 100 and 1000 under callgrind).
use twelve_http::{Header, Limits, ParseError, Request, Status, parse_request};
const REQ: &[u8] = b"GET /plaintext HTTP/1.1\r\nHost: localhost\r\nAccept: application/json,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7\r\n\r\n";
/// Out of line with run-time limits, as the server calls it.
#[inline(never)]
fn parse<'h, 'b>(
    buf: &'b [u8],
    h: &'h mut [Header<'b>],
    l: &Limits,
) -> Result<Status<Request<'h, 'b>>, ParseError> {
    parse_request(buf, h, l)
}
#[inline(never)]
fn batch(buf: &[u8], limits: &Limits) -> usize {
    let mut pos = 0;
    let mut n = 0;
    let mut headers = [Header::EMPTY; 24];
    while pos < buf.len() {
        match parse(&buf[pos..], std::hint::black_box(&mut headers[..]), limits) {
            Ok(Status::Complete(r)) => {
                pos += r.head_len;
                n += r.path_bytes().len();
            }
            _ => panic!("the request did not parse"),
        }
    }
    n
}
fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("ROUNDS"))
        .unwrap_or(1000);
    let b = REQ.repeat(16);
    let limits = std::hint::black_box(Limits::DEFAULT);
    let mut t = 0;
    for _ in 0..rounds {
        t += batch(std::hint::black_box(&b), &limits);
    }
    println!("{t}");
}
