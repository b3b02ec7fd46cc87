//! The address a spawned `twelve serve` listens on, read from the first line it prints:
//! `twelve serve: listening on SCHEME://IP:PORT (...)`, for the tests that start the binary.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::Child;

/// Reads `child`'s first stdout line (stdout must be piped) and parses the address after
/// `scheme://` (`"http"` or `"https"`); panics with the line if there is none.
pub fn listening_addr(child: &mut Child, scheme: &str) -> SocketAddr {
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout piped"))
        .read_line(&mut line)
        .expect("read the listening line");
    addr_in(&line, scheme).unwrap_or_else(|| panic!("no {scheme} listening line: {line:?}"))
}

/// The address after `scheme://` in a listening line, if it has one.
pub fn addr_in(line: &str, scheme: &str) -> Option<SocketAddr> {
    line.split(&format!("{scheme}://"))
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|a| a.parse().ok())
}
