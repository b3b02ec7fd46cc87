//! A blocking TLS client for the suites that test TLS listeners end to end: a socket and
//! twelve-tls's client session, moved by hand (handshake, then reads until a condition).

use super::{BOUND, TestServer};
use std::io::{Read, Write};
use std::net::TcpStream;
use twelve_tls::{ClientTls, Failure, Session};

/// A blocking TLS connection to a test server's first listener.
pub struct TlsConn {
    pub sock: TcpStream,
    pub tls: Session,
}

impl TlsConn {
    pub fn open(server: &TestServer, client: &ClientTls) -> TlsConn {
        let sock = TcpStream::connect(server.addr).unwrap();
        sock.set_read_timeout(Some(BOUND)).unwrap();
        let tls = client.session(&ClientTls::server_name("localhost").unwrap());
        TlsConn { sock, tls }
    }

    pub fn flush(&mut self) {
        let out = self.tls.outgoing().to_vec();
        self.tls.sent(out.len());
        // The server may have closed already (a refused handshake, a fatal alert): the
        // session says why.
        let _ = self.sock.write_all(&out);
    }

    /// Sends and reads until the handshake ends; the session's failure if it does not.
    pub fn handshake(&mut self) -> Result<(), Failure> {
        while self.tls.is_handshaking() {
            self.flush();
            let mut buf = vec![0; 16 * 1024];
            let n = self.sock.read(&mut buf).unwrap_or(0);
            if n == 0 {
                return Err(self.tls.failure().unwrap_or(Failure::Truncated));
            }
            self.tls.feed(&buf[..n])?;
        }
        self.flush();
        Ok(())
    }

    /// Reads until `done(plaintext so far)` or the end of the stream; returns the plaintext
    /// or the session's failure.
    pub fn read_until(&mut self, done: impl Fn(&[u8]) -> bool) -> Result<Vec<u8>, Failure> {
        let mut plain = Vec::new();
        let mut buf = vec![0; 64 * 1024];
        loop {
            self.flush();
            self.tls.read_plain(&mut plain, usize::MAX)?;
            if done(&plain) || self.tls.peer_closed() {
                return Ok(plain);
            }
            let n = self.sock.read(&mut buf).unwrap_or(0);
            if n == 0 {
                return Ok(plain);
            }
            self.tls.feed(&buf[..n])?;
        }
    }
}
