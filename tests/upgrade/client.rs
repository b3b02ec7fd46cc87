//! The strict client of the upgrade test (docs/restart.md, "The test"): every request is
//! classified ok / refused / reset / eof / timeout / bad and never retried; a response with
//! `Connection: close` is honoured by reconnecting, which is not a failure. Three shapes run at
//! once: keep-alive connections (the drain), a new connection per request (the accept
//! queue's handover), and HTTP/2 connections (h2c with prior knowledge) that open no new
//! stream once the server said GOAWAY, as RFC 9113 §6.8 asks, and reconnect: a stream the
//! GOAWAY refuses (above its last stream id) is a failure. Each response's
//! `X-Twelve-Generation` is recorded.

use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;
use twelve_http::h2::Frame;
use twelve_testkit::h2::{Client as H2Client, Got};

/// A response slower than this is a `timeout` (a failure, never retried).
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// What became of one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    Ok,
    Refused,
    /// An HTTP/2 stream above the last stream id of the server's GOAWAY: sent, not processed.
    Unprocessed,
    Reset,
    Eof,
    Timeout,
    Bad,
}

/// The client's books, shared by its threads.
#[derive(Default)]
pub struct Tally {
    pub ok: AtomicU64,
    counts: Mutex<BTreeMap<Outcome, u64>>,
    /// Requests answered per generation (header value); 0: the header was missing.
    pub generations: Mutex<BTreeMap<u64, u64>>,
}

impl Tally {
    fn record(&self, outcome: Outcome, generation: Option<u64>) {
        if outcome == Outcome::Ok {
            self.ok.fetch_add(1, Ordering::Relaxed);
            let mut g = self.generations.lock().unwrap();
            *g.entry(generation.unwrap_or(0)).or_default() += 1;
        }
        *self.counts.lock().unwrap().entry(outcome).or_default() += 1;
    }

    /// Requests that ended in `outcome`.
    pub fn count(&self, outcome: Outcome) -> u64 {
        self.counts
            .lock()
            .unwrap()
            .get(&outcome)
            .copied()
            .unwrap_or(0)
    }

    /// Requests that did not end in `Ok`.
    pub fn failed(&self) -> u64 {
        self.counts
            .lock()
            .unwrap()
            .iter()
            .filter(|(o, _)| **o != Outcome::Ok)
            .map(|(_, n)| n)
            .sum()
    }

    /// One line: every outcome and its count.
    pub fn summary(&self) -> String {
        let counts = self.counts.lock().unwrap();
        let mut parts: Vec<String> = counts.iter().map(|(o, n)| format!("{o:?}={n}")).collect();
        parts.push(format!(
            "failed={}",
            counts
                .iter()
                .filter(|(o, _)| **o != Outcome::Ok)
                .map(|(_, n)| n)
                .sum::<u64>()
        ));
        parts.join(" ")
    }
}

/// A running load: `keep_alive` + `per_request` threads until [`Load::stop`].
pub struct Load {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    pub tally: Arc<Tally>,
}

impl Load {
    /// Starts the threads; each first runs `enter` (joins the test's network namespace).
    pub fn start(
        addr: SocketAddr,
        (keep_alive, per_request, h2): (usize, usize, usize),
        enter: impl Fn() + Send + Sync + Clone + 'static,
    ) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let tally = Arc::new(Tally::default());
        let mut threads = Vec::new();
        for i in 0..keep_alive + per_request + h2 {
            let (stop, tally, enter) = (stop.clone(), tally.clone(), enter.clone());
            let reuse = i < keep_alive;
            let http2 = i >= keep_alive + per_request;
            threads.push(std::thread::spawn(move || {
                enter();
                if http2 {
                    run_h2(addr, &stop, &tally);
                } else {
                    run(addr, reuse, &stop, &tally);
                }
            }));
        }
        Self {
            stop,
            threads,
            tally,
        }
    }

    /// Stops every thread after its current request and waits for them.
    pub fn stop(self) -> Arc<Tally> {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            t.join().unwrap();
        }
        self.tally
    }
}

fn run(addr: SocketAddr, reuse: bool, stop: &AtomicBool, tally: &Tally) {
    let request: &[u8] = if reuse {
        b"GET /plaintext HTTP/1.1\r\nHost: t\r\n\r\n"
    } else {
        b"GET /plaintext HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
    };
    let mut conn: Option<TcpStream> = None;
    while !stop.load(Ordering::Relaxed) {
        let mut s = match conn.take() {
            Some(s) => s,
            None => match connect(addr) {
                Ok(s) => s,
                Err(outcome) => {
                    tally.record(outcome, None);
                    continue;
                }
            },
        };
        let (outcome, generation, keep) = exchange(&mut s, request);
        tally.record(outcome, generation);
        if outcome == Outcome::Ok && keep && reuse {
            conn = Some(s);
        } else if outcome == Outcome::Ok && !keep {
            // The server closes after this response: read its FIN so that our close sends
            // no reset either.
            let _ = s.read(&mut [0u8; 64]);
        }
    }
}

/// The HTTP/2 client's loop: one stream at a time on a connection, until the server says
/// GOAWAY; then the connection is read to its end (the server closes it once its streams are
/// answered, so no side resets) and a new one opened.
fn run_h2(addr: SocketAddr, stop: &AtomicBool, tally: &Tally) {
    let mut conn: Option<(H2Client, u32)> = None;
    while !stop.load(Ordering::Relaxed) {
        let (mut c, id) = match conn.take() {
            Some(c) => c,
            None => match connect(addr) {
                Ok(s) => {
                    let mut c = H2Client::raw(s);
                    c.preface(&[]);
                    (c, 1)
                }
                Err(outcome) => {
                    tally.record(outcome, None);
                    continue;
                }
            },
        };
        c.get(id, "/plaintext");
        let (outcome, generation, goaway) = h2_exchange(&mut c, id);
        tally.record(outcome, generation);
        if outcome == Outcome::Ok && !goaway {
            conn = Some((c, id + 2));
        } else if outcome == Outcome::Ok {
            while !matches!(h2_step(&mut c), Got::Closed) {}
        }
    }
}

/// Reads until stream `id`'s response ends: its outcome, its generation, and whether the
/// server said GOAWAY meanwhile.
fn h2_exchange(c: &mut H2Client, id: u32) -> (Outcome, Option<u64>, bool) {
    let (mut status, mut generation, mut goaway) = (0, None, false);
    loop {
        match h2_step(c) {
            Got::Headers {
                stream,
                end_stream,
                fields,
            } if stream == id => {
                for (n, v) in fields {
                    match n.as_str() {
                        ":status" => status = v.parse().unwrap_or(0),
                        "x-twelve-generation" => generation = v.parse().ok(),
                        _ => {}
                    }
                }
                if end_stream {
                    return (Outcome::Bad, generation, goaway);
                }
            }
            Got::Data {
                stream, end_stream, ..
            } if stream == id && end_stream => {
                let outcome = if status == 200 {
                    Outcome::Ok
                } else {
                    Outcome::Bad
                };
                return (outcome, generation, goaway);
            }
            Got::GoAway { last_stream, .. } => {
                goaway = true;
                if last_stream < id {
                    return (Outcome::Unprocessed, None, true);
                }
            }
            Got::Reset { stream, .. } if stream == id => return (Outcome::Reset, None, goaway),
            Got::Closed => return (Outcome::Eof, None, goaway),
            _ => {}
        }
    }
}

/// The next frame, with SETTINGS and PING acknowledged as a client must (the drain's PING
/// is how the server learns the client saw its GOAWAY), and the connection's window given
/// back for the DATA read (a stream's own is never used up: one response per stream).
fn h2_step(c: &mut H2Client) -> Got {
    let got = c.next_frame();
    match &got {
        Got::Settings(_) => {
            let mut ack = Vec::new();
            twelve_http::h2::encode_settings(&mut ack, true, &[]);
            c.send(&ack);
        }
        Got::Ping { ack: false, data } => c.frame(Frame::Ping {
            ack: true,
            data: *data,
        }),
        Got::Data { data, .. } if !data.is_empty() => c.frame(Frame::WindowUpdate {
            stream: 0,
            increment: data.len() as u32,
        }),
        _ => {}
    }
    got
}

/// Opens a connection, classifying a failure.
pub fn connect(addr: SocketAddr) -> Result<TcpStream, Outcome> {
    match TcpStream::connect_timeout(&addr, READ_TIMEOUT) {
        Ok(s) => {
            s.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
            s.set_nodelay(true).unwrap();
            Ok(s)
        }
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => Err(Outcome::Refused),
        Err(e) => Err(classify(&e)),
    }
}

/// Sends one request and reads its response: the outcome, the generation that answered, and
/// whether the connection may be kept.
pub fn exchange(s: &mut TcpStream, request: &[u8]) -> (Outcome, Option<u64>, bool) {
    if let Err(e) = s.write_all(request) {
        return (classify(&e), None, false);
    }
    match read_response(s) {
        Ok(r) if r.status == 200 => (Outcome::Ok, r.generation, !r.close),
        Ok(_) => (Outcome::Bad, None, false),
        Err(o) => (o, None, false),
    }
}

fn classify(e: &std::io::Error) -> Outcome {
    match e.kind() {
        ErrorKind::ConnectionReset | ErrorKind::BrokenPipe | ErrorKind::ConnectionAborted => {
            Outcome::Reset
        }
        ErrorKind::ConnectionRefused => Outcome::Refused,
        ErrorKind::WouldBlock | ErrorKind::TimedOut => Outcome::Timeout,
        ErrorKind::UnexpectedEof => Outcome::Eof,
        _ => Outcome::Bad,
    }
}

/// A response head's facts the test needs.
pub struct Head {
    pub status: u16,
    pub generation: Option<u64>,
    pub close: bool,
    pub content_length: u64,
}

/// Reads a head and a Content-Length body (discarded).
pub fn read_response(s: &mut TcpStream) -> Result<Head, Outcome> {
    let (head, extra) = read_head(s)?;
    let mut left = head
        .content_length
        .checked_sub(extra as u64)
        .ok_or(Outcome::Bad)?;
    let mut buf = [0u8; 16 * 1024];
    while left > 0 {
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        match s.read(&mut buf[..want]) {
            Ok(0) => return Err(Outcome::Eof),
            Ok(n) => left -= n as u64,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(classify(&e)),
        }
    }
    Ok(head)
}

/// Reads up to the end of a head; returns it parsed and how many body bytes came with it.
pub fn read_head(s: &mut TcpStream) -> Result<(Head, usize), Outcome> {
    let mut buf = Vec::with_capacity(512);
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        match s.read(&mut chunk) {
            Ok(0) => return Err(Outcome::Eof),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(classify(&e)),
        }
    };
    let text = std::str::from_utf8(&buf[..end]).map_err(|_| Outcome::Bad)?;
    let mut lines = text.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.strip_prefix("HTTP/1.1 "))
        .and_then(|l| l.get(..3))
        .and_then(|c| c.parse().ok())
        .ok_or(Outcome::Bad)?;
    let mut head = Head {
        status,
        generation: None,
        close: false,
        content_length: 0,
    };
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.to_ascii_lowercase().as_str() {
            "content-length" => head.content_length = value.parse().map_err(|_| Outcome::Bad)?,
            "connection" => head.close = value.eq_ignore_ascii_case("close"),
            "x-twelve-generation" => head.generation = value.parse().ok(),
            _ => {}
        }
    }
    Ok((head, buf.len() - end))
}

/// The fallback handover with fresh listeners: `k` connections queue on listener A, a fresh
/// listener B joins the group, A closes; returns (connections reset, connections served by B).
pub fn fresh_listener_handover(addr: SocketAddr, k: usize) -> (usize, usize) {
    let opts = twelve_sys::ListenerOptions {
        backlog: 128,
        incoming_cpu: None,
        busy_poll_us: None,
        nodelay: true,
    };
    let a = twelve_sys::net::reuseport_listener(addr, &opts).unwrap();
    let mut clients: Vec<TcpStream> = (0..k).map(|_| connect(addr).unwrap()).collect();
    let b = std::net::TcpListener::from(twelve_sys::net::reuseport_listener(addr, &opts).unwrap());
    drop(a);
    b.set_nonblocking(true).unwrap();
    while let Ok((mut s, _)) = b.accept() {
        s.set_nonblocking(false).unwrap();
        s.write_all(b"x").unwrap();
    }
    let (mut resets, mut served) = (0, 0);
    for c in &mut clients {
        c.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
        match c.read(&mut [0u8; 1]) {
            Ok(1) => served += 1,
            Err(e) if e.kind() == ErrorKind::ConnectionReset => resets += 1,
            other => panic!("neither served nor reset: {other:?}"),
        }
    }
    (resets, served)
}
