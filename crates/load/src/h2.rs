//! HTTP/2 for the load generator (`--h2`, `--h2c`): a connection slot's streams over
//! `twelve_http::h2::ClientConn`, its requests as HPACK fields, and what each server frame
//! means for the books. A connection slot ([`crate::conn::Conn`]) holds one [`H2Conn`] when
//! the run speaks HTTP/2 and hands it its windows and reads; requests in flight are the open
//! streams (at most `--streams`, and never above the server's SETTINGS_MAX_CONCURRENT_STREAMS),
//! each tagged with its intended start and actual send.
//!
//! Requests are the ones [`crate::request`] builds for HTTP/1.1, read back once into fields
//! ([`H2Request`]); a templated run renders each request's HTTP/1.1 bytes and reads them back
//! into one reused [`H2Request`], so its `{seq}` and `{rand}` work alike over both versions.

use crate::conn::{Conn, Failure};
use crate::request::RequestSet;
use crate::schedule::Budget;
use twelve_http::h2::hpack::Index;
use twelve_http::h2::{ClientConfig, ClientConn, ErrorCode, Event, request_head};

/// The largest frame a read may leave unfinished: our SETTINGS_MAX_FRAME_SIZE and its header.
/// DATA frames are taken as they arrive, so only a field block's frame is ever kept whole.
const MAX_KEPT: usize = 16_384 + 9;

/// Untemplated runs over at most this many URLs keep each URL's last header block (see
/// [`H2Conn::blocks`]); more would cost each connection memory for blocks rarely reused.
const MAX_KEPT_BLOCKS: usize = 64;

/// Fields HTTP/2 forbids (RFC 9113 §8.2.2) or carries as pseudo-fields (`host`).
const DROPPED: [&[u8]; 6] = [
    b"connection",
    b"keep-alive",
    b"proxy-connection",
    b"transfer-encoding",
    b"upgrade",
    b"host",
];

/// One request as HTTP/2 fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct H2Request {
    pub method: Vec<u8>,
    pub authority: Vec<u8>,
    pub path: Vec<u8>,
    /// Regular fields, names lowercased, in the order given.
    pub fields: Vec<(Vec<u8>, Vec<u8>)>,
    pub body: Vec<u8>,
}

impl H2Request {
    /// Reads back a request as `request` wrote it for HTTP/1.1 (request line, `Name: value`
    /// lines, blank line, body), reusing this one's allocations.
    pub(crate) fn read_h1(&mut self, bytes: &[u8]) {
        let end = bytes
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or(bytes.len());
        let mut lines = bytes[..end].split(|&b| b == b'\n').map(trim);
        let line = lines.next().unwrap_or_default();
        let mut parts = line.splitn(3, |&b| b == b' ');
        set(&mut self.method, parts.next().unwrap_or(b"GET"));
        set(&mut self.path, parts.next().unwrap_or(b"/"));
        self.authority.clear();
        self.fields.clear();
        for l in lines {
            let Some(colon) = l.iter().position(|&b| b == b':') else {
                continue;
            };
            let name = trim(&l[..colon]).to_ascii_lowercase();
            let value = trim(&l[colon + 1..]);
            if name == b"host" {
                set(&mut self.authority, value);
            }
            if DROPPED.contains(&name.as_slice()) {
                continue;
            }
            self.fields.push((name, value.to_vec()));
        }
        set(&mut self.body, bytes.get(end + 4..).unwrap_or_default());
    }
}

fn set(v: &mut Vec<u8>, from: &[u8]) {
    v.clear();
    v.extend_from_slice(from);
}

fn trim(s: &[u8]) -> &[u8] {
    s.trim_ascii()
}

/// A request in flight: when it was meant to start and when it went, and its URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tag {
    pub intended_ns: u64,
    pub sent_ns: u64,
}

/// What a read amounts to, one step at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Nothing more in the input: `used` bytes of it were taken.
    Need,
    /// A response ended.
    Answer { tag: Tag, status: u16 },
    /// A request or the connection failed; [`Failure::ends_conn`] says which.
    Fail(Failure),
}

/// The HTTP/2 side of one connection slot.
pub(crate) struct H2Conn {
    conn: ClientConn<Tag>,
    /// Frames to write: the preface, requests, ACKs and window updates, in order; `sent` of
    /// them went.
    pub out: Vec<u8>,
    pub sent: usize,
    /// Requests queued for the next window, not yet on a stream.
    queued: Vec<Tag>,
    /// Requests a GOAWAY refused, still to be reported one by one, and the last one reported
    /// (REFUSED_STREAM's too): the open model sends its schedule slot again.
    refused: Vec<Tag>,
    last_refused: Option<Tag>,
    /// The request of a templated run, rendered and read back.
    scratch: Vec<u8>,
    templated: H2Request,
    /// Bodies of streams still waiting for window, when they were rendered (templated runs).
    bodies: Vec<(u32, Vec<u8>)>,
    /// The URL of each body-waiting stream (untemplated runs).
    urls: Vec<(u32, usize)>,
    /// Per URL of an untemplated run, its last header block and the encoder's generation it
    /// was encoded at: once every field is in the dynamic table (`:path` is a literal without
    /// indexing) the block is the same octets request after request, copied instead of
    /// encoded while the generation holds.
    blocks: Vec<(Option<u64>, Vec<u8>)>,
}

impl H2Conn {
    pub(crate) fn new(streams: u32) -> Self {
        Self {
            conn: ClientConn::new(ClientConfig {
                max_streams: streams,
                ..ClientConfig::default()
            }),
            out: Vec::new(),
            sent: 0,
            queued: Vec::with_capacity(streams.min(1024) as usize),
            refused: Vec::new(),
            last_refused: None,
            scratch: Vec::new(),
            templated: H2Request::default(),
            bodies: Vec::new(),
            urls: Vec::new(),
            blocks: Vec::new(),
        }
    }

    /// The connection opened: the preface goes first.
    pub(crate) fn start(&mut self) {
        self.reset();
        self.conn.start(&mut self.out);
    }

    /// Forgets the connection, keeping the allocations.
    pub(crate) fn reset(&mut self) {
        self.conn.reset();
        self.out.clear();
        self.sent = 0;
        self.queued.clear();
        self.refused.clear();
        self.last_refused = None;
        self.bodies.clear();
        self.urls.clear();
        // A new connection's encoder counts its generations afresh.
        for b in &mut self.blocks {
            b.0 = None;
        }
    }

    /// Streams that may open now, less those queued for the next window.
    pub(crate) fn room(&self) -> usize {
        self.conn.can_open().saturating_sub(self.queued.len())
    }

    /// The stream limit in force, and whether the server's SETTINGS lowered `--streams`.
    pub(crate) fn limit(&self) -> (u32, bool) {
        (self.conn.stream_limit(), self.conn.is_capped())
    }

    pub(crate) fn has_inflight(&self) -> bool {
        self.conn.open_streams() > 0 || !self.queued.is_empty()
    }

    /// Frames wait to be written, or bodies wait for window (a WINDOW_UPDATE that came may let
    /// them go).
    pub(crate) fn has_output(&self) -> bool {
        !self.out.is_empty() || !self.bodies.is_empty() || !self.urls.is_empty()
    }

    /// Requests whose body waits for the server's stream or connection window to open.
    pub(crate) fn stalled(&self) -> u64 {
        (self.bodies.len() + self.urls.len()) as u64
    }

    /// Whether the connection has nothing more to do (GOAWAY, every stream ended).
    pub(crate) fn is_done(&self) -> bool {
        self.conn.is_done() && self.queued.is_empty()
    }

    pub(crate) fn oldest_sent_ns(&self) -> Option<u64> {
        self.conn
            .tags()
            .chain(self.queued.iter().copied())
            .map(|t| t.sent_ns)
            .min()
    }

    /// The intended start of the last request reported refused.
    pub(crate) fn take_refused(&mut self) -> Option<u64> {
        self.last_refused.take().map(|t| t.intended_ns)
    }

    pub(crate) fn queue(&mut self, intended_ns: u64, sent_ns: u64) {
        self.queued.push(Tag {
            intended_ns,
            sent_ns,
        });
    }

    /// Opens a stream for each queued request, URLs taken in turn from `next_url`; returns
    /// how many.
    pub(crate) fn write_requests(
        &mut self,
        requests: &RequestSet,
        next_url: &mut usize,
        rng: &mut u64,
    ) -> usize {
        self.resume_bodies(requests);
        let count = self.queued.len();
        let scheme: &[u8] = if requests.is_tls() { b"https" } else { b"http" };
        let templated = requests.is_templated();
        if !templated && self.blocks.is_empty() && requests.urls() <= MAX_KEPT_BLOCKS {
            self.blocks.resize_with(requests.urls(), Default::default);
        }
        for k in 0..count {
            let tag = self.queued[k];
            let url = *next_url;
            *next_url = (url + 1) % requests.urls();
            let req = if templated {
                requests.render(url, 1, rng, &mut self.scratch);
                self.templated.read_h1(&self.scratch);
                &self.templated
            } else {
                requests.h2(url)
            };
            let how = if templated {
                Index::No
            } else {
                Index::Incremental
            };
            let kept = self.blocks.get_mut(url);
            let id = self
                .conn
                .open(&mut self.out, tag, req.body.len() as u32, |enc, out| {
                    let generation = enc.generation();
                    if let Some((Some(g), block)) = &kept
                        && *g == generation
                    {
                        out.extend_from_slice(block);
                        return;
                    }
                    let start = out.len();
                    request_head(enc, out, &req.method, scheme, &req.authority, &req.path);
                    for (n, v) in &req.fields {
                        enc.field(out, n, v, how);
                    }
                    // Kept only when encoding it changed nothing (no insert): the same block
                    // is then what the next request of this URL encodes to.
                    if let Some((g, block)) = kept
                        && enc.generation() == generation
                    {
                        *g = Some(generation);
                        block.clear();
                        block.extend_from_slice(&out[start..]);
                    }
                });
            if !req.body.is_empty() && !self.conn.data(&mut self.out, id, &req.body) {
                if templated {
                    self.bodies.push((id, req.body.clone()));
                } else {
                    self.urls.push((id, url));
                }
            }
        }
        self.queued.clear();
        count
    }

    /// Sends what the windows now allow of bodies that waited for them.
    fn resume_bodies(&mut self, requests: &RequestSet) {
        if self.bodies.is_empty() && self.urls.is_empty() {
            return;
        }
        let conn = &mut self.conn;
        let out = &mut self.out;
        self.bodies.retain(|(id, body)| !conn.data(out, *id, body));
        self.urls
            .retain(|&(id, url)| !conn.data(out, id, &requests.h2(url).body));
    }

    /// The next thing `input` brings: `used` is set to the bytes taken. ACKs, window updates
    /// and resets it calls for go to `out`.
    pub(crate) fn next(&mut self, input: &[u8], used: &mut usize) -> Step {
        *used = 0;
        if let Some(tag) = self.refused.pop() {
            self.last_refused = Some(tag);
            return Step::Fail(Failure::H2Refused);
        }
        loop {
            let rest = &input[*used..];
            match self.conn.poll(rest, &mut self.out) {
                Event::Partial => {
                    if rest.len() >= MAX_KEPT {
                        return Step::Fail(Failure::Parse);
                    }
                    return Step::Need;
                }
                Event::Handled(n) => *used += n,
                Event::Response {
                    used: n,
                    tag,
                    status,
                    ..
                } => {
                    *used += n;
                    return Step::Answer { tag, status };
                }
                Event::Reset {
                    used: n, code, tag, ..
                } => {
                    *used += n;
                    // §8.7: a stream refused was not processed, so it was never answered.
                    if code == ErrorCode::RefusedStream.code() {
                        self.last_refused = Some(tag);
                        return Step::Fail(Failure::H2Refused);
                    }
                    return Step::Fail(Failure::H2Reset);
                }
                Event::StreamError { used: n, .. } => {
                    *used += n;
                    return Step::Fail(Failure::H2Stream);
                }
                Event::GoAway { used: n, .. } => {
                    *used += n;
                    let refused = &mut self.refused;
                    self.conn.drop_refused(|_, tag| refused.push(tag));
                    // Reported by `pop`, oldest first.
                    refused.reverse();
                    return Step::Fail(Failure::H2GoAway);
                }
                Event::ConnectionError(_) => return Step::Fail(Failure::H2Protocol),
            }
        }
    }
}

/// Closed model: the requests a connection sends now, one per free stream, from its
/// reservation first (a `-n` run's requests a GOAWAY refused), then from the budget.
pub(crate) fn closed_batch(c: &mut Conn, budget: &Budget) -> u64 {
    let room = c.room() as u64;
    if room == 0 {
        return 0;
    }
    let reserved = c.take_reserved();
    let mine = reserved.min(room);
    c.reserve(reserved - mine);
    mine + budget.take(room - mine)
}

/// A request the server did not process (`Failure::H2Refused`) is sent again: a closed `-n`
/// run reserves one more request for the connection, the open model puts its schedule slot's
/// intended time on `retry`, for the next connection with a free stream (never this one after
/// a GOAWAY), so the offered rate holds and its latency still counts from the schedule.
pub(crate) fn refused(c: &mut Conn, cfg: &crate::Config, retry: &mut Vec<u64>) {
    use crate::config::{Model, Stop};
    let intended = c.take_refused();
    match (cfg.model, cfg.stop) {
        (Model::Closed, Stop::Requests(_)) => c.reserve(c.reserved() + 1),
        (Model::Open { .. }, _) => retry.extend(intended),
        (Model::Closed, Stop::Duration(_)) => {}
    }
}

/// Open model: queues up to `room` of the refused slots on `retry` on `c`, oldest first,
/// sent `now`; returns how many.
pub(crate) fn resend(retry: &mut Vec<u64>, room: usize, c: &mut Conn, now: u64) -> usize {
    if retry.is_empty() {
        return 0;
    }
    let n = room.min(retry.len());
    for intended in retry.drain(..n) {
        c.queue(intended, now);
    }
    n
}

/// `--h2c`: one blocking exchange before the run, so a server that does not speak HTTP/2
/// with prior knowledge (an HTTP/1.1 server answers the preface with a 400, or closes) is
/// one clear error, not a run of protocol errors. The server's first frame must be SETTINGS
/// (RFC 9113 §3.4).
pub(crate) fn preflight_h2c(
    target: &crate::Target,
    timeout: std::time::Duration,
) -> Result<(), crate::ConfigError> {
    use std::io::{Read, Write};
    let bad = |why: String| crate::ConfigError(format!("{}: {why}", target.url));
    let mut sock = std::net::TcpStream::connect_timeout(&target.addr, timeout)
        .map_err(|e| bad(format!("connect: {e}")))?;
    sock.set_read_timeout(Some(timeout))
        .and_then(|()| sock.set_write_timeout(Some(timeout)))
        .map_err(|e| bad(e.to_string()))?;
    let mut hello = twelve_http::h2::PREFACE.to_vec();
    twelve_http::h2::encode_settings(&mut hello, false, &[]);
    sock.write_all(&hello)
        .map_err(|e| bad(format!("sending the HTTP/2 preface: {e}")))?;
    let mut head = [0u8; 9];
    let mut got = 0;
    while got < head.len() {
        match sock.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if got == 0 => {
                return Err(bad(format!(
                    "no answer to the HTTP/2 preface ({e}): the server does not speak h2c \
                     (HTTP/2 with prior knowledge); drop --h2c to bench it over HTTP/1.1"
                )));
            }
            Err(_) => break,
        }
    }
    let settings = got == head.len() && head[3] == twelve_http::h2::kind::SETTINGS;
    if !settings {
        let said = if head[..got].starts_with(b"HTTP/") {
            "answered with HTTP/1.x"
        } else if got == 0 {
            "closed the connection"
        } else {
            "answered with something other than SETTINGS"
        };
        return Err(bad(format!(
            "the server {said} to the HTTP/2 preface: it does not speak h2c (HTTP/2 with prior \
             knowledge); drop --h2c to bench it over HTTP/1.1"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::config::{Config, Protocol, Target};
    use crate::conn::{ConnSetup, RECV_BUF};
    use crate::schedule::Budget;
    use twelve_http::client::HeadMemo;
    use twelve_http::h2::{Fields, ServerConfig, ServerConn, Step as ServerStep};

    /// A slot speaking h2c to `ServerConn` in memory: the preface, the server's SETTINGS, then
    /// a closed-model batch on every free stream, each answer paired with its own request.
    #[test]
    fn a_slot_runs_its_streams_against_the_server_connection() {
        let mut cfg = Config::new(vec![
            Target::parse("http://127.0.0.1:9/a").unwrap(),
            Target::parse("http://127.0.0.1:9/b").unwrap(),
        ]);
        cfg.protocol = Protocol::H2 { streams: 3 };
        let requests = RequestSet::build(&cfg);
        let setup = ConnSetup {
            pipeline: 1,
            per_conn: None,
            urls: 2,
            head: false,
        };
        let mut conn = Conn::new_h2(setup, 3);
        conn.connecting(0);
        conn.opened();
        let mut server = ServerConn::new(ServerConfig::default());
        let (mut to_client, mut at_server) = (Vec::new(), 0);
        server.start(&mut to_client);
        let (mut fields, mut body) = (Fields::default(), Vec::new());
        let mut rx = vec![0; RECV_BUF];
        let mut seen = Vec::new();
        let mut answers = Vec::new();
        let budget = Budget::new(7);
        let mut to_server = Vec::new();
        for _ in 0..20 {
            // The client: whatever it has to send (the preface first), and a batch on every
            // free stream, tagged by its order.
            if conn.has_output() || conn.room() > 0 {
                let n = closed_batch(&mut conn, &budget);
                for k in 0..n {
                    conn.queue(seen.len() as u64 * 10 + k, 0);
                }
                conn.start_window(&requests, &mut 1);
                if let Some(bytes) = conn.unsent(&requests) {
                    to_server.extend_from_slice(bytes);
                    conn.sent_all();
                }
            }
            loop {
                let step = server.poll(
                    &to_server[at_server..],
                    &mut to_client,
                    &mut fields,
                    &mut body,
                );
                match step {
                    ServerStep::Partial => break,
                    ServerStep::Handled(n) => at_server += n,
                    ServerStep::Request { used, stream } => {
                        at_server += used;
                        let mut h = [twelve_http::Header::EMPTY; 8];
                        let req = fields.request(&mut h, 0).unwrap();
                        seen.push(req.target().to_string());
                        server.headers(&mut to_client, stream, true, |enc, out| {
                            twelve_http::h2::respond::head(enc, out, 204, None, None, &[]);
                        });
                    }
                    other => panic!("server: {other:?}"),
                }
            }
            // The server's bytes reach the client in one read.
            let kept = conn.restore_tail(&mut rx);
            rx[kept..kept + to_client.len()].copy_from_slice(&to_client);
            conn.on_read(kept + to_client.len());
            to_client.clear();
            while let Some(a) = conn.next_answer(&rx, &mut HeadMemo::default()).unwrap() {
                answers.push((a.intended_ns, a.code));
            }
            if answers.len() == 7 {
                break;
            }
        }
        assert_eq!(
            seen,
            ["/a", "/b", "/a", "/b", "/a", "/b", "/a"],
            "URLs in turn"
        );
        assert_eq!(answers.len(), 7);
        assert!(answers.iter().all(|&(_, code)| code == 204));
        assert!(!conn.has_inflight());
        assert_eq!(conn.h2_limit(), Some((3, false)));
    }

    /// Kept header blocks are the octets a fresh encoding would give: every HEADERS frame a
    /// slot writes decodes to its own URL's fields, across the server lowering its table size
    /// (which must open the next block with a size update) and raising it again.
    #[test]
    fn kept_header_blocks_decode_as_their_requests_across_table_size_changes() {
        use twelve_http::h2::hpack::Decoder;
        use twelve_http::h2::{Setting, encode_settings, kind};
        let mut cfg = Config::new(vec![
            Target::parse("http://127.0.0.1:9/a").unwrap(),
            Target::parse("http://127.0.0.1:9/bb").unwrap(),
        ]);
        cfg.headers = vec!["User-Agent: h2load nghttp2/1.52.0".into()];
        cfg.protocol = Protocol::H2 { streams: 1000 };
        let requests = RequestSet::build(&cfg);
        let mut h = H2Conn::new(1000);
        h.start();
        h.out.drain(..twelve_http::h2::PREFACE.len());
        let mut decoder = Decoder::new(4096);
        let (mut next_url, mut rng, mut used) = (0, 1, 0);
        let mut seen = Vec::new();
        let mut settings = Vec::new();
        encode_settings(&mut settings, false, &[Setting::MaxConcurrentStreams(1000)]);
        assert_eq!(h.next(&settings, &mut used), Step::Need);
        for (round, size) in [None, None, Some(0), None, Some(4096), None, None]
            .into_iter()
            .enumerate()
        {
            if let Some(size) = size {
                settings.clear();
                encode_settings(&mut settings, false, &[Setting::HeaderTableSize(size)]);
                assert_eq!(h.next(&settings, &mut used), Step::Need, "round {round}");
                assert_eq!(used, settings.len());
            }
            for k in 0..3 {
                h.queue(k, 0);
            }
            assert_eq!(h.write_requests(&requests, &mut next_url, &mut rng), 3);
            let mut at = 0;
            while at < h.out.len() {
                let len = usize::from(h.out[at]) << 16
                    | usize::from(h.out[at + 1]) << 8
                    | usize::from(h.out[at + 2]);
                let payload = &h.out[at + 9..at + 9 + len];
                if h.out[at + 3] == kind::HEADERS {
                    let mut fields = Vec::new();
                    decoder
                        .decode(payload, 1 << 16, |n, v| {
                            fields.push(format!(
                                "{}: {}",
                                String::from_utf8_lossy(n),
                                String::from_utf8_lossy(v)
                            ));
                        })
                        .unwrap_or_else(|e| panic!("round {round}: {e:?}"));
                    seen.push(fields.join(", "));
                }
                at += 9 + len;
            }
            h.out.clear();
        }
        let want = |path: &str| {
            format!(
                ":method: GET, :scheme: http, :authority: 127.0.0.1:9, :path: {path}, \
                 user-agent: h2load nghttp2/1.52.0"
            )
        };
        assert_eq!(seen.len(), 21);
        for (i, got) in seen.iter().enumerate() {
            assert_eq!(*got, want(["/a", "/bb"][i % 2]), "request {i}");
        }
        // The size updates were sent, and the table is in use again after the last.
        assert_eq!(decoder.table_max_size(), 4096);
        assert!(decoder.table_len() > 0);
    }

    #[test]
    fn refused_slots_go_out_oldest_first_up_to_the_room() {
        let setup = ConnSetup {
            pipeline: 1,
            per_conn: None,
            urls: 1,
            head: false,
        };
        let mut conn = Conn::new_h2(setup, 8);
        let mut retry = vec![10, 20, 30];
        assert_eq!(resend(&mut retry, 2, &mut conn, 99), 2);
        assert_eq!(retry, [30]);
        assert_eq!(conn.oldest_sent_ns(), Some(99));
        assert_eq!(resend(&mut retry, 0, &mut conn, 99), 0);
        assert_eq!(resend(&mut Vec::new(), 4, &mut conn, 99), 0);
    }

    #[test]
    fn an_http1_request_reads_back_as_fields() {
        let mut r = H2Request::default();
        r.read_h1(
            b"POST /a?b HTTP/1.1\r\nHost: x:1\r\nX-A:  1 \r\nConnection: close\r\n\
              Content-Length: 2\r\n\r\nhi",
        );
        assert_eq!(
            r,
            H2Request {
                method: b"POST".to_vec(),
                authority: b"x:1".to_vec(),
                path: b"/a?b".to_vec(),
                fields: vec![
                    (b"x-a".to_vec(), b"1".to_vec()),
                    (b"content-length".to_vec(), b"2".to_vec()),
                ],
                body: b"hi".to_vec(),
            }
        );
        r.read_h1(b"GET / HTTP/1.1\r\nHost: y\r\n\r\n");
        assert_eq!(
            (
                r.method.as_slice(),
                r.authority.as_slice(),
                r.fields.len(),
                r.body.len()
            ),
            (&b"GET"[..], &b"y"[..], 0, 0)
        );
    }
}
