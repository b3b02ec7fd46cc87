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

/// A port the kernel just handed out on 127.0.0.1 (free unless taken in between), for a peer
/// server (nginx, h2o) whose listening port the test must choose.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something accepts connections on `addr`, at most `bound`.
///
/// # Panics
/// When nothing listens there by then.
pub fn wait_listening(addr: SocketAddr, bound: std::time::Duration) {
    let deadline = std::time::Instant::now() + bound;
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "nothing listens on {addr}"
        );
        // The poll interval of waiting for a listener, not a synchronization.
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A peer server the test started (nginx, h2o): sent SIGTERM and waited for when dropped, so
/// it ends gracefully (its logs flushed) whether the test passed or failed.
pub struct Terminate(pub Child);

impl Drop for Terminate {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let _ = self.0.wait();
    }
}
