//! The client side of an HTTP/2 connection, sans-I/O (RFC 9113 §5, §6), as a load generator
//! needs it: requests go out as HEADERS (and DATA) on new streams, up to the smaller of the
//! caller's limit and the server's SETTINGS_MAX_CONCURRENT_STREAMS; responses come back as a
//! status and a body length, each with the caller's tag for the request. Bodies are counted,
//! never kept: a DATA frame is consumed as its bytes arrive, so the caller need not hold a
//! whole frame between reads, and both receive windows are reopened as bodies are read.
//!
//! Open streams sit in a small table searched linearly (at most the stream limit).

use super::frame::{self, DEFAULT_MAX_FRAME_SIZE, Frame, FrameHeader, HEADER_LEN, PREFACE};
use super::frame::{Setting, flags, kind};
use super::hpack::{Decoder, Encoder};
use super::window::{self, DEFAULT_WINDOW, MAX_WINDOW, window_update};
use super::{ErrorCode, FrameError, Violation};
use crate::Status;

mod data;
mod event;

pub use event::{ClientFault, Event};

/// The largest field block this client gathers across HEADERS and CONTINUATION frames.
const MAX_HEADER_BLOCK: usize = 64 * 1024;

/// What a response's decoded fields may add up to (RFC 9113 §6.5.2's measure); more is
/// still decoded, to keep HPACK in step, but not looked at.
const MAX_HEADER_LIST: usize = 64 * 1024;

/// The connection's limits.
#[derive(Debug, Clone, Copy)]
pub struct ClientConfig {
    /// The most streams open at once (h2load's `-m`); the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS lowers it.
    pub max_streams: u32,
    /// SETTINGS_INITIAL_WINDOW_SIZE: each response body's receive window.
    pub stream_window: u32,
    /// The connection's receive window, opened by a WINDOW_UPDATE after the preface.
    pub connection_window: u32,
}

impl Default for ClientConfig {
    /// h2load's defaults: one stream at a time (its `-m 1`), windows of 2^30-1 (its `-w 30`
    /// and `-W 30`), so that a window update is rare.
    fn default() -> Self {
        Self {
            max_streams: 1,
            stream_window: (1 << 30) - 1,
            connection_window: (1 << 30) - 1,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The server's first frame, which must be SETTINGS, has not come yet.
    AwaitSettings,
    Open,
    Closed,
}

/// An open stream: a request whose response has not ended.
#[derive(Debug, Clone, Copy)]
struct Stream<T> {
    id: u32,
    tag: T,
    /// Room the server left us to send this stream's body.
    send_window: i64,
    /// Room left the server on this stream, and how much of it was used since the last
    /// WINDOW_UPDATE.
    recv_window: i64,
    recv_unacked: u32,
    /// The final status, 0 until it came.
    status: u16,
    /// Trailers came: nothing but the stream's end may follow.
    trailers: bool,
    body_len: u64,
    /// Body octets sent so far and the body's length (the caller keeps the bytes).
    body_sent: u32,
    body_total: u32,
}

/// A DATA frame whose payload is still arriving.
#[derive(Debug, Clone, Copy)]
struct DataRest {
    stream: u32,
    /// Payload octets still to come (padding included), and the padding among them.
    left: u32,
    pad: u32,
    /// The whole payload, flow-controlled length (§6.1).
    flow: u32,
    end_stream: bool,
}

/// A field block gathered across HEADERS and CONTINUATION frames.
#[derive(Debug)]
struct PendingBlock {
    stream: u32,
    end_stream: bool,
    bytes: Vec<u8>,
}

/// The octets of a response's field block kept to be recognised when they come again.
const BLOCK_MEMO: usize = 32;

/// The last field block that decoded without changing the HPACK table, and the status it
/// gave. HPACK decoding depends on the block and the decoder's state alone, so the same octets
/// at the same decoder generation give the same fields: a server that indexes its response
/// fields (h2o sends `88 c0 bf be ...` for each answer) sends the same block every time.
#[derive(Debug, Clone, Copy)]
struct BlockMemo {
    generation: Option<u64>,
    len: u8,
    bytes: [u8; BLOCK_MEMO],
    status: Option<u16>,
}

impl BlockMemo {
    const EMPTY: BlockMemo = BlockMemo {
        generation: None,
        len: 0,
        bytes: [0; BLOCK_MEMO],
        status: None,
    };

    /// The status `block` gave when it was kept, if it is the kept block at `generation`.
    fn status(&self, block: &[u8], generation: u64) -> Option<Option<u16>> {
        (self.generation == Some(generation) && self.bytes[..usize::from(self.len)] == *block)
            .then_some(self.status)
    }
}

/// One HTTP/2 connection, client side. `T` tags each request (its intended and actual send
/// times, say) and comes back with its answer.
#[derive(Debug)]
pub struct ClientConn<T: Copy> {
    cfg: ClientConfig,
    phase: Phase,
    decoder: Decoder,
    encoder: Encoder,
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS, SETTINGS_INITIAL_WINDOW_SIZE and
    /// SETTINGS_MAX_FRAME_SIZE.
    peer_max_streams: u32,
    peer_stream_window: i64,
    peer_max_frame: u32,
    /// The connection's send window, and what is left of its receive window.
    send_window: i64,
    recv_window: i64,
    recv_unacked: u32,
    /// The id the next stream takes.
    next_stream: u32,
    streams: Vec<Stream<T>>,
    data: Option<DataRest>,
    block: Option<PendingBlock>,
    memo: BlockMemo,
    /// The server's GOAWAY: the last stream it may process.
    goaway: Option<u32>,
}

impl<T: Copy> ClientConn<T> {
    /// A connection before its preface; [`ClientConn::start`] writes it.
    pub fn new(cfg: ClientConfig) -> Self {
        Self {
            cfg,
            phase: Phase::AwaitSettings,
            decoder: Decoder::new(4096),
            encoder: Encoder::new(),
            peer_max_streams: u32::MAX,
            peer_stream_window: DEFAULT_WINDOW,
            peer_max_frame: DEFAULT_MAX_FRAME_SIZE,
            send_window: DEFAULT_WINDOW,
            recv_window: DEFAULT_WINDOW,
            recv_unacked: 0,
            next_stream: 1,
            streams: Vec::with_capacity(cfg.max_streams.min(1024) as usize),
            data: None,
            block: None,
            memo: BlockMemo::EMPTY,
            goaway: None,
        }
    }

    /// Forgets the connection (a reconnect), keeping the allocations.
    pub fn reset(&mut self) {
        let mut streams = std::mem::take(&mut self.streams);
        streams.clear();
        *self = Self {
            streams,
            ..Self::new(self.cfg)
        };
    }

    /// Writes the client connection preface (§3.4): the magic, SETTINGS (no push, our
    /// stream window), then a WINDOW_UPDATE opening the connection's receive window.
    pub fn start(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(PREFACE);
        frame::encode_settings(
            out,
            false,
            &[
                Setting::EnablePush(false),
                Setting::InitialWindowSize(self.cfg.stream_window),
            ],
        );
        let extra = i64::from(self.cfg.connection_window) - DEFAULT_WINDOW;
        if extra > 0 {
            window_update(out, 0, extra as u32);
            self.recv_window += extra;
        }
    }

    /// The most streams open at once: the caller's limit, lowered by the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS once it came.
    pub fn stream_limit(&self) -> u32 {
        self.cfg.max_streams.min(self.peer_max_streams)
    }

    /// Whether the server's SETTINGS lowered the caller's stream limit.
    pub fn is_capped(&self) -> bool {
        self.peer_max_streams < self.cfg.max_streams
    }

    /// How many streams may open now: none before the server's SETTINGS (which may lower the
    /// limit), after its GOAWAY, or once stream ids run out.
    pub fn can_open(&self) -> usize {
        if self.phase != Phase::Open
            || self.goaway.is_some()
            || self.next_stream > MAX_WINDOW as u32
        {
            return 0;
        }
        (self.stream_limit() as usize).saturating_sub(self.streams.len())
    }

    /// How many streams are open (requests without their whole answer).
    pub fn open_streams(&self) -> usize {
        self.streams.len()
    }

    /// Whether the connection has nothing more to do: an error closed it, or the server's
    /// GOAWAY came (or the stream ids ran out) and every stream it still serves has ended.
    pub fn is_done(&self) -> bool {
        self.phase == Phase::Closed
            || ((self.goaway.is_some() || self.next_stream > MAX_WINDOW as u32)
                && self.streams.is_empty())
    }

    /// Whether the server said GOAWAY.
    pub fn is_going_away(&self) -> bool {
        self.goaway.is_some()
    }

    /// Opens a stream with a request head: `write` appends the fields with the encoder
    /// ([`request_head`] writes the usual ones); `body_len` octets of body follow through
    /// [`ClientConn::data`], or none (END_STREAM on HEADERS). Returns the stream id. The
    /// caller checks [`ClientConn::can_open`] first.
    pub fn open(
        &mut self,
        out: &mut Vec<u8>,
        tag: T,
        body_len: u32,
        write: impl FnOnce(&mut Encoder, &mut Vec<u8>),
    ) -> u32 {
        debug_assert!(self.can_open() > 0);
        let id = self.next_stream;
        self.next_stream += 2;
        let encoder = &mut self.encoder;
        frame::header_block(out, id, body_len == 0, self.peer_max_frame, |out| {
            encoder.begin_block(out);
            write(encoder, out);
        });
        self.streams.push(Stream {
            id,
            tag,
            send_window: self.peer_stream_window,
            recv_window: i64::from(self.cfg.stream_window),
            recv_unacked: 0,
            status: 0,
            trailers: false,
            body_len: 0,
            body_sent: 0,
            body_total: body_len,
        });
        id
    }

    /// Sends what the windows allow of `stream`'s body, whose bytes are `body` (the whole
    /// body each time; what was sent is remembered), as DATA frames of at most the server's
    /// frame size, END_STREAM on the last. Returns whether the whole body is sent.
    pub fn data(&mut self, out: &mut Vec<u8>, stream: u32, body: &[u8]) -> bool {
        let Some(i) = self.find(stream) else {
            return true;
        };
        let s = &mut self.streams[i];
        let from = s.body_sent as usize;
        let rest = &body[from.min(body.len())..];
        let room = s.send_window.min(self.send_window).max(0) as usize;
        let n = rest.len().min(room);
        let max = self.peer_max_frame as usize;
        let mut sent = 0;
        loop {
            let len = (n - sent).min(max);
            let last = sent + len == n;
            let end = last && n == rest.len();
            if len == 0 && !end {
                break;
            }
            let at = out.len();
            out.extend_from_slice(&[0; HEADER_LEN]);
            let f = if end { flags::END_STREAM } else { 0 };
            frame::write_header(&mut out[at..], len, kind::DATA, f, stream);
            out.extend_from_slice(&rest[sent..sent + len]);
            sent += len;
            if last {
                break;
            }
        }
        s.send_window -= n as i64;
        s.body_sent += n as u32;
        self.send_window -= n as i64;
        n == rest.len()
    }

    /// The open streams whose body is not all sent, for the caller to retry
    /// [`ClientConn::data`] on after a window opened.
    pub fn blocked(&self) -> impl Iterator<Item = (u32, T)> + '_ {
        self.streams
            .iter()
            .filter(|s| s.body_sent < s.body_total)
            .map(|s| (s.id, s.tag))
    }

    /// Takes the streams a GOAWAY refused (ids above its last stream): the server never
    /// processed them (§6.8), so they were answered by nobody and may be sent again.
    pub fn drop_refused(&mut self, mut f: impl FnMut(u32, T)) {
        let Some(last) = self.goaway else {
            return;
        };
        self.streams.retain(|s| {
            if s.id > last {
                f(s.id, s.tag);
                false
            } else {
                true
            }
        });
    }

    /// The tags of the open streams, in no set order: for timeouts and a connection's end.
    pub fn tags(&self) -> impl Iterator<Item = T> + '_ {
        self.streams.iter().map(|s| s.tag)
    }

    /// Updates each open stream's tag.
    pub fn tags_mut(&mut self) -> impl Iterator<Item = &mut T> + '_ {
        self.streams.iter_mut().map(|s| &mut s.tag)
    }

    /// Handles what starts `input`: one frame, or as much of a DATA frame as is there,
    /// writing what it calls for (ACKs, WINDOW_UPDATE, RST_STREAM, GOAWAY) to `out`.
    pub fn poll(&mut self, input: &[u8], out: &mut Vec<u8>) -> Event<T> {
        if self.phase == Phase::Closed {
            return Event::Partial;
        }
        if self.data.is_some() {
            return self.data_bytes(input, 0, out);
        }
        let Some(head) = input.first_chunk::<HEADER_LEN>() else {
            return Event::Partial;
        };
        let h = FrameHeader::parse(head);
        if h.kind == kind::DATA && self.phase == Phase::Open {
            return self.data_frame(h, input, out);
        }
        match frame::decode(input, DEFAULT_MAX_FRAME_SIZE) {
            Ok(Status::Partial) => Event::Partial,
            Ok(Status::Complete((f, used))) => self.on_frame(f, used, out),
            Err(e) => self.frame_error(e, h.kind, out),
        }
    }

    fn frame_error(&mut self, e: FrameError, kind: u8, out: &mut Vec<u8>) -> Event<T> {
        let fault = ClientFault::Frame(e.violation);
        // A stream error in a frame that carries a field block would leave HPACK out of step
        // with the server's (§4.3): it ends the connection instead.
        let carries_block = kind == frame::kind::HEADERS || kind == frame::kind::CONTINUATION;
        if e.is_connection_error() || carries_block || self.block.is_some() {
            return self.conn_error(out, e.code, fault);
        }
        let Some(i) = self.find(e.stream) else {
            return Event::Handled(e.skip);
        };
        let tag = self.streams.swap_remove(i).tag;
        reset(out, e.stream, e.code);
        Event::StreamError {
            used: e.skip,
            stream: e.stream,
            tag,
            fault,
        }
    }

    /// The response on `self.streams[i]` ended.
    fn finish(&mut self, i: usize, used: usize) -> Event<T> {
        // A server may answer before the request's body is all sent (§8.1): the rest is
        // dropped with the stream.
        let s = self.streams.swap_remove(i);
        Event::Response {
            used,
            stream: s.id,
            tag: s.tag,
            status: s.status,
            body_len: s.body_len,
        }
    }

    fn on_frame(&mut self, f: Frame<'_>, used: usize, out: &mut Vec<u8>) -> Event<T> {
        if self.phase == Phase::AwaitSettings {
            if !matches!(f, Frame::Settings { ack: false, .. }) {
                return self.conn_error(out, ErrorCode::ProtocolError, ClientFault::SettingsFirst);
            }
            self.phase = Phase::Open;
        }
        if let Some(b) = &self.block {
            match f {
                Frame::Continuation { stream, .. } if stream == b.stream => {}
                _ => {
                    let fault = ClientFault::Continuation;
                    return self.conn_error(out, ErrorCode::ProtocolError, fault);
                }
            }
        }
        match f {
            // Handled by `data_frame` once the connection is open.
            Frame::Data { .. } => unreachable!("DATA before SETTINGS is refused above"),
            Frame::Headers {
                stream,
                end_stream,
                end_headers,
                block,
                ..
            } => {
                if stream >= self.next_stream || stream.is_multiple_of(2) {
                    return self.conn_error(out, ErrorCode::ProtocolError, ClientFault::IdleStream);
                }
                if !end_headers {
                    if block.len() > MAX_HEADER_BLOCK {
                        let fault = ClientFault::HeaderBlockTooLarge;
                        return self.conn_error(out, ErrorCode::EnhanceYourCalm, fault);
                    }
                    self.block = Some(PendingBlock {
                        stream,
                        end_stream,
                        bytes: block.to_vec(),
                    });
                    return Event::Handled(used);
                }
                self.on_block(stream, end_stream, block, used, out)
            }
            Frame::Continuation {
                end_headers, block, ..
            } => {
                let Some(mut pending) = self.block.take() else {
                    return self.conn_error(
                        out,
                        ErrorCode::ProtocolError,
                        ClientFault::Continuation,
                    );
                };
                if pending.bytes.len() + block.len() > MAX_HEADER_BLOCK {
                    let fault = ClientFault::HeaderBlockTooLarge;
                    return self.conn_error(out, ErrorCode::EnhanceYourCalm, fault);
                }
                pending.bytes.extend_from_slice(block);
                if !end_headers {
                    self.block = Some(pending);
                    return Event::Handled(used);
                }
                self.on_block(
                    pending.stream,
                    pending.end_stream,
                    &pending.bytes,
                    used,
                    out,
                )
            }
            Frame::Priority { .. } | Frame::Unknown { .. } => Event::Handled(used),
            Frame::RstStream { stream, code } => {
                if stream >= self.next_stream || stream.is_multiple_of(2) {
                    return self.conn_error(out, ErrorCode::ProtocolError, ClientFault::IdleStream);
                }
                match self.find(stream) {
                    Some(i) => {
                        let tag = self.streams.swap_remove(i).tag;
                        Event::Reset {
                            used,
                            stream,
                            tag,
                            code,
                        }
                    }
                    None => Event::Handled(used),
                }
            }
            Frame::Settings { ack, settings } => {
                if ack {
                    return Event::Handled(used);
                }
                for s in settings {
                    if let Err(fault) = self.apply(s) {
                        return self.conn_error(out, ErrorCode::FlowControlError, fault);
                    }
                }
                frame::encode_settings(out, true, &[]);
                Event::Handled(used)
            }
            Frame::PushPromise { .. } => {
                self.conn_error(out, ErrorCode::ProtocolError, ClientFault::PushPromise)
            }
            Frame::Ping { ack, data } => {
                if !ack {
                    frame::encode(&Frame::Ping { ack: true, data }, out);
                }
                Event::Handled(used)
            }
            Frame::GoAway {
                last_stream, code, ..
            } => {
                // A second GOAWAY may only lower the last stream (§6.8).
                let last = self.goaway.map_or(last_stream, |l| l.min(last_stream));
                self.goaway = Some(last);
                Event::GoAway {
                    used,
                    last_stream: last,
                    code,
                }
            }
            Frame::WindowUpdate { stream, increment } => {
                self.on_window_update(stream, increment, used, out)
            }
        }
    }

    fn apply(&mut self, s: Setting) -> Result<(), ClientFault> {
        match s {
            Setting::HeaderTableSize(n) => self.encoder.set_max_table_size(n as usize),
            Setting::InitialWindowSize(n) => {
                let windows = self.streams.iter_mut().map(|s| &mut s.send_window);
                if !window::resize(&mut self.peer_stream_window, n, windows) {
                    return Err(ClientFault::WindowOverflow);
                }
            }
            Setting::MaxFrameSize(n) => self.peer_max_frame = n,
            Setting::MaxConcurrentStreams(n) => self.peer_max_streams = n,
            Setting::EnablePush(_) | Setting::MaxHeaderListSize(_) => {}
        }
        Ok(())
    }

    /// A whole field block for `stream`: a response head (1xx ones skipped) or trailers.
    fn on_block(
        &mut self,
        stream: u32,
        end_stream: bool,
        block: &[u8],
        used: usize,
        out: &mut Vec<u8>,
    ) -> Event<T> {
        let generation = self.decoder.generation();
        let status = match self.memo.status(block, generation) {
            Some(status) => status,
            None => {
                let mut status = None;
                let mut first = true;
                let decoded = self.decoder.decode(block, MAX_HEADER_LIST, |n, v| {
                    // §8.3: pseudo-fields come first; `:status` is three digits.
                    if first && n == b":status" {
                        status = parse_status(v);
                    }
                    first = false;
                });
                if let Err(e) = decoded {
                    let code = e.code();
                    return self.conn_error(out, code, ClientFault::Hpack(e));
                }
                if self.decoder.generation() == generation && block.len() <= BLOCK_MEMO {
                    let mut bytes = [0; BLOCK_MEMO];
                    bytes[..block.len()].copy_from_slice(block);
                    self.memo = BlockMemo {
                        generation: Some(generation),
                        len: block.len() as u8,
                        bytes,
                        status,
                    };
                }
                status
            }
        };
        // The stream may be one this client already gave up on: the block still had to be
        // decoded (above), for HPACK's table.
        let Some(i) = self.find(stream) else {
            return Event::Handled(used);
        };
        let s = &mut self.streams[i];
        if s.status != 0 {
            // Trailers (§8.1): they end the stream.
            if !end_stream || s.trailers {
                return self.stream_error(out, i, ErrorCode::ProtocolError, used, 0);
            }
            s.trailers = true;
            return self.finish(i, used);
        }
        match status {
            // An interim response (§8.1); 101 is not allowed in HTTP/2 (§8.6).
            Some(code @ 100..=199) if code != 101 && !end_stream => Event::Handled(used),
            Some(code @ 200..) => {
                s.status = code;
                if end_stream {
                    return self.finish(i, used);
                }
                Event::Handled(used)
            }
            _ => self.stream_error(out, i, ErrorCode::ProtocolError, used, 0),
        }
    }

    fn on_window_update(
        &mut self,
        stream: u32,
        inc: u32,
        used: usize,
        out: &mut Vec<u8>,
    ) -> Event<T> {
        if stream == 0 {
            self.send_window += i64::from(inc);
            if self.send_window > MAX_WINDOW {
                let fault = ClientFault::WindowOverflow;
                return self.conn_error(out, ErrorCode::FlowControlError, fault);
            }
            return Event::Handled(used);
        }
        if stream >= self.next_stream || stream.is_multiple_of(2) {
            return self.conn_error(out, ErrorCode::ProtocolError, ClientFault::IdleStream);
        }
        if let Some(i) = self.find(stream) {
            let s = &mut self.streams[i];
            s.send_window += i64::from(inc);
            if s.send_window > MAX_WINDOW {
                let tag = self.streams.swap_remove(i).tag;
                reset(out, stream, ErrorCode::FlowControlError);
                return Event::StreamError {
                    used,
                    stream,
                    tag,
                    fault: ClientFault::WindowOverflow,
                };
            }
        }
        Event::Handled(used)
    }

    fn find(&self, stream: u32) -> Option<usize> {
        self.streams.iter().position(|s| s.id == stream)
    }

    /// Resets `self.streams[i]` with `code` and reports it as malformed or over its window;
    /// `used` bytes were taken, and a DATA frame's `skip` payload octets are to be ignored.
    fn stream_error(
        &mut self,
        out: &mut Vec<u8>,
        i: usize,
        code: ErrorCode,
        used: usize,
        skip: u32,
    ) -> Event<T> {
        let s = self.streams.swap_remove(i);
        reset(out, s.id, code);
        let fault = if code == ErrorCode::FlowControlError {
            ClientFault::FlowControl
        } else {
            ClientFault::Malformed
        };
        if skip > 0 {
            // The DATA frame's payload is still to be read (and counted) under no stream.
            self.data = Some(DataRest {
                stream: s.id,
                left: skip,
                pad: 0,
                flow: skip,
                end_stream: false,
            });
            return Event::StreamError {
                used: HEADER_LEN,
                stream: s.id,
                tag: s.tag,
                fault,
            };
        }
        Event::StreamError {
            used,
            stream: s.id,
            tag: s.tag,
            fault,
        }
    }

    fn conn_error(&mut self, out: &mut Vec<u8>, code: ErrorCode, fault: ClientFault) -> Event<T> {
        frame::encode(
            &Frame::GoAway {
                last_stream: 0,
                code: code.code(),
                debug: b"",
            },
            out,
        );
        self.phase = Phase::Closed;
        self.block = None;
        self.data = None;
        Event::ConnectionError(fault)
    }
}

/// Writes a request's fields into the block `out` is holding: the four pseudo-fields
/// (§8.3.1), then `extra` (names lowercase, none connection-specific). `:path` goes as a
/// literal without indexing (RFC 7541 §6.2.2) on every request, as nghttp2 (h2load, curl)
/// sends it, so that a server decodes it per request as it would from them: an indexed path
/// would cost it one octet's lookup instead, and flatter it against those clients
/// (<https://github.com/nghttp2/nghttp2/blob/master/lib/nghttp2_hd.c>, which never indexes
/// `:path`). A path that changes every request would only churn the dynamic table anyway.
pub fn request_head(
    enc: &mut Encoder,
    out: &mut Vec<u8>,
    method: &[u8],
    scheme: &[u8],
    authority: &[u8],
    path: &[u8],
) {
    use super::hpack::Index;
    enc.field(out, b":method", method, Index::Incremental);
    enc.field(out, b":scheme", scheme, Index::Incremental);
    enc.field(out, b":authority", authority, Index::Incremental);
    enc.field(out, b":path", path, Index::No);
}

/// `:status`'s value: three digits, 100 to 999 (§8.3.2).
fn parse_status(v: &[u8]) -> Option<u16> {
    match v {
        [a @ b'1'..=b'9', b @ b'0'..=b'9', c @ b'0'..=b'9'] => {
            Some(u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0'))
        }
        _ => None,
    }
}

fn reset(out: &mut Vec<u8>, stream: u32, code: ErrorCode) {
    frame::encode(
        &Frame::RstStream {
            stream,
            code: code.code(),
        },
        out,
    );
}

#[cfg(test)]
mod tests;
