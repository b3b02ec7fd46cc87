//! One client connection as a sans-I/O state machine: request windows go out as byte slices of
//! the run's [`RequestSet`], received bytes come in, and answered requests (with their intended
//! start and actual send) or a failure class come out. It never sees a socket, so the epoll
//! worker and the simulation drive it alike. Allocated once per slot, reused across reconnects.
//!
//! Received bytes land in the worker's one receive buffer, not in the connection: the parser
//! is streaming, so all a connection keeps between reads is a response head cut short (its
//! `tail`), put back in front of the next read. A per-connection buffer would cost resident
//! memory per connection (a touched page of it, and one of the heap chunk after it) several
//! times wrk's (docs/results.md#the-client-against-wrk-and-gcannon).
//!
//! This is the one place the load generator uses twelve-http's client response parser. Over
//! HTTP/2 the slot hands its windows and reads to its [`H2Conn`] instead (`crate::h2`).
use crate::h2::{self, H2Conn};
use crate::request::RequestSet;
use std::collections::VecDeque;
use twelve_http::Status;
use twelve_http::client::{Error as ParseErr, HeadMemo, ResponseParser};

/// The worker's receive buffer: one per worker, so its size costs nothing per connection and
/// a 64 KiB body is one `recv`.
pub(crate) const RECV_BUF: usize = 64 * 1024;
/// Longest response head the client waits for (wrk's whole buffer is 8 KiB).
pub(crate) const MAX_HEAD: usize = 16 * 1024;

/// Where a connection slot is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// No socket; (re)connect at `retry_at_ns`.
    Closed { retry_at_ns: u64 },
    /// Non-blocking connect in progress since `since_ns`.
    Connecting { since_ns: u64 },
    /// Connected.
    Open,
}

/// What every connection of a run shares: how deep it pipelines, when it is reopened, how
/// many URLs it cycles through, and whether responses carry no body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConnSetup {
    /// Requests in flight at most.
    pub pipeline: usize,
    /// Requests per connection before the client reopens it (`--close`: one).
    pub per_conn: Option<u64>,
    /// Distinct URLs, taken in turn.
    pub urls: usize,
    /// HEAD requests: responses have no body.
    pub head: bool,
}

/// A window of requests being written: which one, and how far the kernel took it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pending {
    first: usize,
    count: usize,
    sent: usize,
}

/// One answered request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Answer {
    pub intended_ns: u64,
    pub sent_ns: u64,
    pub code: u16,
    /// The connection must close after this answer (the server said so, or the connection
    /// has sent its `--requests-per-conn` quota and has nothing left in flight).
    pub close: bool,
}

/// Why a connection has to be dropped, one variant per error class it is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// Bytes that are not a response, a head larger than the buffer, or an answer to a request
    /// never sent.
    Parse,
    /// The peer closed inside a head.
    Read,
    /// The peer closed inside a body.
    BodyLength,
    /// HTTP/2: the server reset a stream (RST_STREAM), other than REFUSED_STREAM.
    H2Reset,
    /// HTTP/2: a request the server did not process (REFUSED_STREAM, or above a GOAWAY's
    /// last stream): not sent, and never answered.
    H2Refused,
    /// HTTP/2: a response broke a rule of its stream (no `:status`, over its window); the
    /// client reset the stream.
    H2Stream,
    /// HTTP/2: the server sent GOAWAY; the connection ends once the streams it serves end.
    H2GoAway,
    /// HTTP/2: a connection error (a malformed frame, HPACK, flow control): GOAWAY sent.
    H2Protocol,
    /// HTTP/2: the connection has nothing more to do after a GOAWAY; closed, not counted.
    H2Done,
}

impl Failure {
    /// Whether the connection is dropped; an HTTP/2 stream's failure leaves it open.
    pub(crate) fn ends_conn(self) -> bool {
        !matches!(
            self,
            Failure::H2Reset | Failure::H2Refused | Failure::H2Stream | Failure::H2GoAway
        )
    }
}

impl From<ParseErr> for Failure {
    fn from(e: ParseErr) -> Self {
        match e {
            ParseErr::IncompleteHead => Failure::Read,
            ParseErr::IncompleteBody => Failure::BodyLength,
            _ => Failure::Parse,
        }
    }
}

/// One client connection slot.
pub(crate) struct Conn {
    setup: ConnSetup,
    phase: Phase,
    parser: ResponseParser,
    /// A response head cut short by the last read, kept for the next.
    tail: Vec<u8>,
    /// Unparsed bytes of the current read are `rx[start..end]` of the worker's buffer.
    start: usize,
    end: usize,
    /// (intended start, actual send) of each request in flight, oldest first.
    /// INVARIANT: the last `queued` entries belong to no window yet.
    inflight: VecDeque<(u64, u64)>,
    queued: usize,
    /// URL index of the next request.
    next_url: usize,
    /// Requests sent on the current connection.
    sent_here: u64,
    pending: Option<Pending>,
    /// A short write left bytes behind: the driver waits for writability until they are out.
    write_stalled: bool,
    /// Closed `-n` runs: requests taken from the budget for this slot's next connection.
    reserved: u64,
    /// Whether the slot has been connected before (a later connect is a reconnect).
    ever_open: bool,
    /// Whether the slot is on the worker's ready list (open model).
    in_ready: bool,
    /// Whether its TLS handshake is under way.
    handshaking: bool,
    /// The window being written, rendered with its own numbers, in a templated run.
    rendered: Vec<u8>,
    /// HTTP/2: the streams and frames of the connection; `None` over HTTP/1.1.
    h2: Option<Box<H2Conn>>,
}

impl Conn {
    pub(crate) fn new(setup: ConnSetup) -> Self {
        Self::with_h2(setup, None)
    }

    /// A slot that speaks HTTP/2 with at most `streams` open at once (`setup.pipeline` is 1).
    pub(crate) fn new_h2(setup: ConnSetup, streams: u32) -> Self {
        Self::with_h2(setup, Some(Box::new(H2Conn::new(streams))))
    }

    fn with_h2(setup: ConnSetup, h2: Option<Box<H2Conn>>) -> Self {
        let mut parser = ResponseParser::new();
        parser.set_head_request(setup.head);
        Self {
            setup,
            phase: Phase::Closed { retry_at_ns: 0 },
            parser,
            tail: Vec::new(),
            start: 0,
            end: 0,
            inflight: VecDeque::with_capacity(setup.pipeline),
            queued: 0,
            next_url: 0,
            sent_here: 0,
            pending: None,
            write_stalled: false,
            reserved: 0,
            ever_open: false,
            in_ready: false,
            handshaking: false,
            rendered: Vec::new(),
            h2,
        }
    }

    /// HTTP/2: the intended start of the request just reported refused (see `crate::h2`).
    pub(crate) fn take_refused(&mut self) -> Option<u64> {
        self.h2.as_mut().and_then(|h| h.take_refused())
    }

    /// HTTP/2: requests whose body waits for a window (0 over HTTP/1.1).
    pub(crate) fn h2_stalled(&self) -> u64 {
        self.h2.as_ref().map_or(0, |h| h.stalled())
    }

    /// Whether the slot speaks HTTP/2.
    #[inline]
    pub(crate) fn is_h2(&self) -> bool {
        self.h2.is_some()
    }

    /// HTTP/2: the stream limit in force and whether the server lowered `--streams`.
    pub(crate) fn h2_limit(&self) -> Option<(u32, bool)> {
        self.h2.as_ref().map(|h| h.limit())
    }

    /// HTTP/2: frames wait to be written (the preface, ACKs, window updates) and no window
    /// is being written: the dispatch sends them.
    pub(crate) fn has_output(&self) -> bool {
        self.pending.is_none() && self.h2.as_ref().is_some_and(|h| h.has_output())
    }

    pub(crate) fn phase(&self) -> Phase {
        self.phase
    }

    /// Starts the URL rotation at `url` (workers stagger their connections).
    pub(crate) fn start_at_url(&mut self, url: usize) {
        self.next_url = url % self.setup.urls;
    }

    /// A connect was started.
    pub(crate) fn connecting(&mut self, now_ns: u64) {
        self.phase = Phase::Connecting { since_ns: now_ns };
    }

    /// The connect finished; returns whether this slot was connected before (a reconnect).
    pub(crate) fn opened(&mut self) -> bool {
        self.phase = Phase::Open;
        if let Some(h) = &mut self.h2 {
            h.start();
        }
        std::mem::replace(&mut self.ever_open, true)
    }

    /// Drops everything in flight and waits to reconnect at `retry_at_ns`; keeps the
    /// allocations (and any reservation from the budget, which the next connection sends).
    pub(crate) fn reset(&mut self, retry_at_ns: u64) {
        self.phase = Phase::Closed { retry_at_ns };
        self.parser.reset();
        self.tail.clear();
        self.start = 0;
        self.end = 0;
        self.inflight.clear();
        self.queued = 0;
        self.sent_here = 0;
        self.pending = None;
        self.write_stalled = false;
        self.in_ready = false;
        self.handshaking = false;
        if let Some(h) = &mut self.h2 {
            h.reset();
        }
    }

    /// Whether requests are in flight.
    pub(crate) fn has_inflight(&self) -> bool {
        match &self.h2 {
            Some(h) => h.has_inflight(),
            None => !self.inflight.is_empty(),
        }
    }

    /// Nothing in flight and nothing reserved: a count-bounded run may end.
    pub(crate) fn is_idle(&self) -> bool {
        !self.has_inflight() && self.reserved == 0
    }

    /// When the oldest request in flight was sent.
    pub(crate) fn oldest_sent_ns(&self) -> Option<u64> {
        match &self.h2 {
            Some(h) => h.oldest_sent_ns(),
            None => self.inflight.front().map(|&(_, sent)| sent),
        }
    }

    /// Requests this connection may still send before the client reopens it.
    pub(crate) fn quota(&self) -> u64 {
        match self.setup.per_conn {
            Some(n) => n.saturating_sub(self.sent_here),
            None => u64::MAX,
        }
    }

    /// Requests a new connection may send before the client reopens it.
    pub(crate) fn quota_when_reopened(&self) -> u64 {
        self.setup.per_conn.unwrap_or(u64::MAX)
    }

    /// How many new requests the connection can take now: none unless it is open with no write
    /// waiting, else the free pipeline depth, bounded by the quota.
    pub(crate) fn room(&self) -> usize {
        if self.phase != Phase::Open || self.pending.is_some() {
            return 0;
        }
        let free = match &self.h2 {
            Some(h) => h.room(),
            None => self.setup.pipeline - self.inflight.len(),
        };
        free.min(usize::try_from(self.quota()).unwrap_or(usize::MAX))
    }

    /// Whether a window is being written.
    pub(crate) fn is_writing(&self) -> bool {
        self.pending.is_some()
    }

    /// Whether the slot is on the ready list; `set_ready` keeps this and the list in step.
    pub(crate) fn is_ready(&self) -> bool {
        self.in_ready
    }

    pub(crate) fn set_ready(&mut self, ready: bool) {
        self.in_ready = ready;
    }

    /// Takes the closed `-n` reservation (0 when none).
    pub(crate) fn take_reserved(&mut self) -> u64 {
        std::mem::take(&mut self.reserved)
    }

    /// The current reservation; `reserve` sets it.
    pub(crate) fn reserved(&self) -> u64 {
        self.reserved
    }

    pub(crate) fn reserve(&mut self, n: u64) {
        self.reserved = n;
    }

    /// The connection's TLS handshake is under way (see `Dispatch::untimed`).
    pub(crate) fn set_handshaking(&mut self) {
        self.handshaking = true;
    }

    /// Whether the handshake was under way; it no longer is.
    pub(crate) fn take_handshaking(&mut self) -> bool {
        std::mem::take(&mut self.handshaking)
    }

    /// Queues one request, intended at `intended_ns` and sent at `sent_ns`, for the next
    /// window.
    #[inline]
    pub(crate) fn queue(&mut self, intended_ns: u64, sent_ns: u64) {
        if let Some(h) = &mut self.h2 {
            return h.queue(intended_ns, sent_ns);
        }
        debug_assert!(self.pending.is_none() && self.inflight.len() < self.setup.pipeline);
        self.inflight.push_back((intended_ns, sent_ns));
        self.queued += 1;
    }

    /// Makes the queued requests one window, written by one `send`; returns its size. A
    /// templated run renders the window here, once, so a short write resumes the same bytes.
    pub(crate) fn start_window(&mut self, requests: &RequestSet, rng: &mut u64) -> usize {
        if let Some(h) = &mut self.h2 {
            let count = h.write_requests(requests, &mut self.next_url, rng);
            self.sent_here += count as u64;
            if !h.out.is_empty() && self.pending.is_none() {
                self.pending = Some(Pending {
                    first: 0,
                    count,
                    sent: 0,
                });
            }
            return count;
        }
        let count = std::mem::take(&mut self.queued);
        if count > 0 {
            self.pending = Some(Pending {
                first: self.next_url,
                count,
                sent: 0,
            });
            if requests.is_templated() {
                requests.render(self.next_url, count, rng, &mut self.rendered);
            }
            self.next_url = (self.next_url + count) % self.setup.urls;
            self.sent_here += count as u64;
        }
        count
    }

    /// The bytes of the window still to write.
    #[inline]
    pub(crate) fn unsent<'a>(&'a self, requests: &'a RequestSet) -> Option<&'a [u8]> {
        let p = self.pending?;
        if let Some(h) = &self.h2 {
            return Some(&h.out[h.sent..]);
        }
        Some(if requests.is_templated() {
            &self.rendered[p.sent..]
        } else {
            requests.window_from(p.first, p.count, p.sent)
        })
    }

    /// The whole window is written; returns whether a short write had stalled it (the driver
    /// then stops waiting for writability).
    #[inline]
    pub(crate) fn sent_all(&mut self) -> bool {
        self.pending = None;
        if let Some(h) = &mut self.h2 {
            h.out.clear();
            h.sent = 0;
        }
        std::mem::take(&mut self.write_stalled)
    }

    /// The kernel took `n` bytes but not all; returns whether this is the first stall of the
    /// window (the driver then starts waiting for writability).
    pub(crate) fn sent_part(&mut self, n: usize) -> bool {
        if let Some(p) = &mut self.pending {
            p.sent += n;
        }
        if let Some(h) = &mut self.h2 {
            h.sent += n;
        }
        !std::mem::replace(&mut self.write_stalled, true)
    }

    /// Puts the kept tail in front of `rx` and returns its length: the next read goes after it.
    #[inline]
    pub(crate) fn restore_tail(&self, rx: &mut [u8]) -> usize {
        rx[..self.tail.len()].copy_from_slice(&self.tail);
        self.tail.len()
    }

    /// `rx[..len]` of the worker's buffer holds this connection's unparsed bytes: the restored
    /// tail and what was just read.
    #[inline]
    pub(crate) fn on_read(&mut self, len: usize) {
        self.tail.clear();
        self.start = 0;
        self.end = len;
    }

    /// The next complete response in `rx` (the buffer given to [`Conn::on_read`]),
    /// `Ok(None)` when more bytes are needed: what is left is then kept as the tail, so the
    /// worker may reuse `rx`.
    #[inline]
    pub(crate) fn next_answer(
        &mut self,
        rx: &[u8],
        heads: &mut HeadMemo,
    ) -> Result<Option<Answer>, Failure> {
        if self.h2.is_some() {
            return self.next_h2(rx);
        }
        let (used, status) = self.parser.parse_with(&rx[self.start..self.end], heads)?;
        self.start += used;
        match status {
            Status::Complete(done) => self.answer(done.code, done.keep_alive).map(Some),
            Status::Partial => {
                let left = &rx[self.start..self.end];
                if left.len() >= MAX_HEAD {
                    return Err(Failure::Parse);
                }
                self.tail.extend_from_slice(left);
                self.start = self.end;
                Ok(None)
            }
        }
    }

    /// HTTP/2: the next answer (or failure) in `rx[start..end]`; what is left unread is kept
    /// as the tail when more bytes are needed.
    fn next_h2(&mut self, rx: &[u8]) -> Result<Option<Answer>, Failure> {
        let Some(h) = &mut self.h2 else {
            return Ok(None);
        };
        let mut used = 0;
        let step = h.next(&rx[self.start..self.end], &mut used);
        self.start += used;
        match step {
            h2::Step::Answer { tag, status } => {
                let done = h.is_done() || (self.quota() == 0 && !self.has_inflight());
                Ok(Some(Answer {
                    intended_ns: tag.intended_ns,
                    sent_ns: tag.sent_ns,
                    code: status,
                    close: done,
                }))
            }
            h2::Step::Fail(f) => Err(f),
            h2::Step::Need => {
                self.tail.extend_from_slice(&rx[self.start..self.end]);
                self.start = self.end;
                if h.is_done() {
                    return Err(Failure::H2Done);
                }
                Ok(None)
            }
        }
    }

    /// The peer closed: a response framed by the close completes now (`Ok(Some)`), or nothing
    /// was pending (`Ok(None)`), or one was cut short.
    pub(crate) fn on_eof(&mut self) -> Result<Option<Answer>, Failure> {
        if self.h2.is_some() {
            // HTTP/2 frames every response: a close ends none.
            return Ok(None);
        }
        match self.parser.eof(self.tail.len())? {
            Some(done) => self.answer(done.code, done.keep_alive).map(Some),
            None => Ok(None),
        }
    }

    /// Pairs a complete response with the oldest request in flight.
    fn answer(&mut self, code: u16, keep_alive: bool) -> Result<Answer, Failure> {
        // A response nobody asked for.
        let (intended_ns, sent_ns) = self.inflight.pop_front().ok_or(Failure::Parse)?;
        let quota_done = self.quota() == 0 && self.inflight.is_empty();
        Ok(Answer {
            intended_ns,
            sent_ns,
            code,
            close: !keep_alive || quota_done,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, Target};

    const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

    fn setup(pipeline: usize, per_conn: Option<u64>) -> (Conn, RequestSet) {
        let mut c = Config::new(vec![
            Target::parse("http://127.0.0.1:9/a").unwrap(),
            Target::parse("http://127.0.0.1:9/b").unwrap(),
        ]);
        c.pipeline = pipeline;
        let requests = RequestSet::build(&c);
        let mut conn = Conn::new(ConnSetup {
            pipeline,
            per_conn,
            urls: 2,
            head: false,
        });
        conn.connecting(0);
        assert!(!conn.opened());
        (conn, requests)
    }

    /// One read of `bytes` through a worker's receive buffer, which it returns.
    fn feed(conn: &mut Conn, bytes: &[u8]) -> Vec<u8> {
        let mut rx = vec![0; RECV_BUF];
        let t = conn.restore_tail(&mut rx);
        rx[t..t + bytes.len()].copy_from_slice(bytes);
        conn.on_read(t + bytes.len());
        // What the next read overwrites: nothing of this one may be needed after it.
        rx[t + bytes.len()..].fill(b'!');
        rx
    }

    #[test]
    fn a_window_is_the_queued_requests_and_advances_the_urls() {
        let (mut conn, requests) = setup(3, None);
        assert_eq!(conn.room(), 3);
        conn.queue(10, 20);
        conn.queue(11, 20);
        assert_eq!(conn.start_window(&requests, &mut 1), 2);
        assert_eq!(
            conn.room(),
            0,
            "no new requests while a window is being written"
        );
        assert_eq!(conn.unsent(&requests), Some(requests.window(0, 2)));
        assert!(!conn.sent_all());
        assert_eq!(conn.room(), 1);
        conn.queue(12, 30);
        conn.start_window(&requests, &mut 1);
        // The rotation goes on where the last window stopped: URL 0 again.
        assert_eq!(conn.unsent(&requests), Some(requests.window(0, 1)));
    }

    #[test]
    fn a_short_write_resumes_where_it_stopped_and_stalls_once() {
        let (mut conn, requests) = setup(2, None);
        conn.queue(0, 0);
        conn.queue(0, 0);
        conn.start_window(&requests, &mut 1);
        let whole = requests.window(0, 2);
        assert!(conn.sent_part(5), "the first stall arms writability");
        assert!(
            !conn.sent_part(5),
            "a second short write of the same window does not"
        );
        assert_eq!(conn.unsent(&requests), Some(&whole[10..]));
        assert!(conn.sent_all(), "finishing a stalled window disarms it");
        assert_eq!(conn.unsent(&requests), None);
    }

    #[test]
    fn a_templated_window_is_rendered_once_and_resumed_as_rendered() {
        let c = Config::new(vec![Target::parse("http://127.0.0.1:9/{seq:10}").unwrap()]);
        let requests = RequestSet::build(&c);
        let mut conn = Conn::new(ConnSetup {
            pipeline: 2,
            per_conn: None,
            urls: 1,
            head: false,
        });
        conn.connecting(0);
        conn.queue(0, 0);
        conn.start_window(&requests, &mut 1);
        assert!(conn.unsent(&requests).unwrap().starts_with(b"GET /10 "));
        conn.sent_part(5);
        assert_eq!(
            conn.unsent(&requests).unwrap(),
            b"10 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n"
        );
        conn.sent_all();
        conn.queue(0, 0);
        conn.start_window(&requests, &mut 1);
        assert!(conn.unsent(&requests).unwrap().starts_with(b"GET /11 "));
    }

    #[test]
    fn answers_pair_with_requests_oldest_first_across_every_split() {
        let two = [OK, OK].concat();
        for split in 0..=two.len() {
            let (mut conn, requests) = setup(2, None);
            conn.queue(1, 2);
            conn.queue(3, 4);
            conn.start_window(&requests, &mut 1);
            conn.sent_all();
            let mut got = Vec::new();
            for part in [&two[..split], &two[split..]] {
                let rx = feed(&mut conn, part);
                while let Some(a) = conn.next_answer(&rx, &mut HeadMemo::default()).unwrap() {
                    got.push((a.intended_ns, a.sent_ns, a.code, a.close));
                }
            }
            assert_eq!(
                got,
                [(1, 2, 200, false), (3, 4, 200, false)],
                "split {split}"
            );
            assert!(!conn.has_inflight());
        }
    }

    #[test]
    fn an_answer_nobody_asked_for_is_a_parse_failure() {
        let (mut conn, _) = setup(1, None);
        let rx = feed(&mut conn, OK);
        assert_eq!(
            conn.next_answer(&rx, &mut HeadMemo::default()),
            Err(Failure::Parse)
        );
    }

    #[test]
    fn the_last_answer_of_the_quota_closes() {
        let (mut conn, requests) = setup(2, Some(2));
        conn.queue(0, 0);
        conn.queue(0, 0);
        conn.start_window(&requests, &mut 1);
        conn.sent_all();
        assert_eq!(conn.quota(), 0);
        assert_eq!(conn.quota_when_reopened(), 2);
        assert_eq!(conn.room(), 0);
        let rx = feed(&mut conn, &[OK, OK].concat());
        assert!(
            !conn
                .next_answer(&rx, &mut HeadMemo::default())
                .unwrap()
                .unwrap()
                .close
        );
        assert!(
            conn.next_answer(&rx, &mut HeadMemo::default())
                .unwrap()
                .unwrap()
                .close
        );
    }

    #[test]
    fn connection_close_closes_after_the_answer() {
        let (mut conn, requests) = setup(1, None);
        conn.queue(0, 0);
        conn.start_window(&requests, &mut 1);
        let rx = feed(
            &mut conn,
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
        );
        assert!(
            conn.next_answer(&rx, &mut HeadMemo::default())
                .unwrap()
                .unwrap()
                .close
        );
    }

    #[test]
    fn a_head_longer_than_the_limit_fails_and_a_long_one_within_it_is_kept_across_reads() {
        let (mut conn, requests) = setup(1, None);
        conn.queue(0, 0);
        conn.start_window(&requests, &mut 1);
        // A valid head start whose one header line goes on and on.
        let rx = feed(&mut conn, b"HTTP/1.1 200 OK\r\nX: ");
        assert_eq!(conn.next_answer(&rx, &mut HeadMemo::default()), Ok(None));
        let rx = feed(&mut conn, &vec![b'a'; MAX_HEAD - 100]);
        assert_eq!(
            conn.next_answer(&rx, &mut HeadMemo::default()),
            Ok(None),
            "kept: still under the limit"
        );
        let rx = feed(&mut conn, b"\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(
            conn.next_answer(&rx, &mut HeadMemo::default())
                .map(|a| a.map(|a| a.code)),
            Ok(Some(200))
        );
        conn.sent_all();
        conn.queue(0, 0);
        conn.start_window(&requests, &mut 1);
        let rx = feed(&mut conn, b"HTTP/1.1 200 OK\r\nX: ");
        assert_eq!(conn.next_answer(&rx, &mut HeadMemo::default()), Ok(None));
        let rx = feed(&mut conn, &vec![b'a'; MAX_HEAD]);
        assert_eq!(
            conn.next_answer(&rx, &mut HeadMemo::default()),
            Err(Failure::Parse)
        );
    }

    /// What the peer's close amounts to, by where in a response it came.
    macro_rules! eof {
        ($($name:ident: $bytes:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                let (mut conn, requests) = setup(1, None);
                conn.queue(0, 0);
                conn.start_window(&requests, &mut 1);
                let rx = feed(&mut conn, $bytes);
                assert_eq!(conn.next_answer(&rx, &mut HeadMemo::default()), Ok(None));
                assert_eq!(conn.on_eof().map(|a| a.map(|a| a.code)), $want);
            }
        )*};
    }

    eof! {
        eof_before_any_byte_answers_nothing: b"" => Ok(None);
        eof_inside_a_head_is_a_read_failure: b"HTTP/1.1 200 OK\r\nContent-Le" => Err(Failure::Read);
        eof_inside_a_body_is_a_body_length_failure:
            b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nok" => Err(Failure::BodyLength);
        eof_ends_a_body_framed_by_the_close: b"HTTP/1.1 200 OK\r\n\r\nuntil close" => Ok(Some(200));
    }

    #[test]
    fn reset_keeps_the_reservation_and_forgets_the_rest() {
        let (mut conn, requests) = setup(2, Some(5));
        conn.reserve(2);
        conn.queue(0, 0);
        conn.start_window(&requests, &mut 1);
        conn.set_ready(true);
        conn.reset(7);
        assert_eq!(conn.phase(), Phase::Closed { retry_at_ns: 7 });
        assert_eq!(
            (conn.has_inflight(), conn.is_writing(), conn.is_ready()),
            (false, false, false)
        );
        assert_eq!(conn.quota(), 5);
        assert_eq!(conn.take_reserved(), 2);
        assert!(conn.is_idle());
    }
}
