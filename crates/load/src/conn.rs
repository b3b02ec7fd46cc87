//! One client connection: its socket, receive buffer, response parser and the requests it
//! has in flight. Allocated once per connection slot and reused across reconnects.
use rustix::fd::OwnedFd;
use std::collections::VecDeque;
use twelve_http::client::ResponseParser;

/// Receive buffer per connection. wrk uses 8 KiB; 16 KiB halves the recv calls for 8–16 KB
/// bodies and still costs only 16 MiB at 1,000 connections.
pub(crate) const RECV_BUF: usize = 16 * 1024;

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

/// A write that the kernel took only part of: which window, and how far it got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pending {
    pub first: usize,
    pub count: usize,
    pub sent: usize,
}

pub(crate) struct Conn {
    pub fd: Option<OwnedFd>,
    pub phase: Phase,
    pub parser: ResponseParser,
    /// Unconsumed received bytes are `buf[start..end]`.
    pub buf: Box<[u8]>,
    pub start: usize,
    pub end: usize,
    /// (intended start, actual send) of each request in flight, oldest first.
    pub inflight: VecDeque<(u64, u64)>,
    /// URL index of the next request.
    pub next_url: usize,
    /// Requests sent on the current connection.
    pub sent_here: u64,
    pub pending: Option<Pending>,
    /// Closed `-n` runs: requests taken from the budget for this slot's next connection.
    pub reserved: u64,
    /// Whether EPOLLOUT is armed (only while a short write waits).
    pub out_armed: bool,
    /// Whether the slot has been connected before (a later connect is a reconnect).
    pub ever_open: bool,
    /// Whether the slot is on the worker's ready list (open model).
    pub in_ready: bool,
}

impl Conn {
    pub(crate) fn new(pipeline: usize, head: bool) -> Self {
        let mut parser = ResponseParser::new();
        parser.set_head_request(head);
        Self {
            fd: None,
            phase: Phase::Closed { retry_at_ns: 0 },
            parser,
            buf: vec![0; RECV_BUF].into_boxed_slice(),
            start: 0,
            end: 0,
            inflight: VecDeque::with_capacity(pipeline),
            next_url: 0,
            sent_here: 0,
            pending: None,
            reserved: 0,
            out_armed: false,
            ever_open: false,
            in_ready: false,
        }
    }

    /// Drops the socket and everything in flight; keeps the allocations.
    pub(crate) fn reset(&mut self, retry_at_ns: u64) {
        self.fd = None;
        self.phase = Phase::Closed { retry_at_ns };
        self.parser.reset();
        self.start = 0;
        self.end = 0;
        self.inflight.clear();
        self.sent_here = 0;
        self.pending = None;
        self.out_armed = false;
    }
}
