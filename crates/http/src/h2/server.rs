//! The server side of an HTTP/2 connection, sans-I/O (RFC 9113 §5, §6): bytes in, one frame
//! at a time, requests and frames out. It owns HPACK's two tables, the streams' states and
//! both directions' flow-control windows; the caller answers each request through
//! [`ServerConn::headers`] and [`ServerConn::data`] and never sees a frame.
//!
//! A stream lives in [`ServerConn`]'s table only while it is receiving a body or its
//! response waits for window: a request that arrives whole (HEADERS with END_STREAM) and is
//! answered at once never stays, so the table is small and searched linearly.

use super::fields::{Fields, Malformed};
use super::frame::{self, DEFAULT_MAX_FRAME_SIZE, Frame, PREFACE, Setting};
use super::hpack::{Decoded, Decoder, Encoder};
use super::window::{self, DEFAULT_WINDOW, MAX_WINDOW, window_update};
use super::{ErrorCode, FrameError};
use crate::Status;

/// How many stream ids this side reset are remembered, so that frames the peer sent before
/// it saw the reset are ignored rather than answered with STREAM_CLOSED (§5.1, "closed").
const RESET_MEMORY: usize = 16;

/// The PING payload that asks, during a graceful close, whether the peer saw the first GOAWAY.
const DRAIN_PING: [u8; 8] = *b"draining";

/// What one call of [`ServerConn::poll`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The input holds no whole frame (or the connection is closed): read more.
    Partial,
    /// A frame was handled (and maybe answered, a PING's ACK say); it used this many bytes.
    Handled(usize),
    /// A request is complete on `stream`: its fields are in the `fields` and its body in the
    /// `body` given to `poll`. Answer it with [`ServerConn::headers`] and
    /// [`ServerConn::data`].
    Request {
        /// Bytes used.
        used: usize,
        /// The stream to answer on.
        stream: u32,
    },
    /// A request this server answers with an error status itself (431 for too many fields,
    /// 413 for too large a body): the response is written; count it.
    Refused {
        /// Bytes used.
        used: usize,
        /// The status written.
        status: u16,
    },
    /// A stream error: RST_STREAM is written, the connection goes on.
    StreamError {
        /// Bytes used.
        used: usize,
        /// What went wrong.
        fault: Fault,
    },
    /// A connection error: GOAWAY is written; send it, then close. Nothing more is read.
    ConnectionError(Fault),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Bytes of the client preface still to come.
    Preface,
    /// The preface came; the first frame must be SETTINGS.
    FirstSettings,
    Open,
    Closed,
}

/// A stream in the table: receiving a body, or answered only in part.
#[derive(Debug)]
struct Stream {
    id: u32,
    /// The client may still send DATA (no END_STREAM yet).
    receiving: bool,
    /// Room the client left us to send on this stream.
    send_window: i64,
    /// Room we left the client on this stream, and how much of it was used since the last
    /// WINDOW_UPDATE.
    recv_window: i64,
    recv_unacked: u32,
    /// The head of a request whose body is still arriving.
    head: Option<Box<Fields>>,
    body: Vec<u8>,
    /// Response headers are written (the caller is answering).
    answering: bool,
}

/// A field block being gathered across HEADERS and CONTINUATION frames.
#[derive(Debug)]
struct PendingBlock {
    stream: u32,
    end_stream: bool,
    bytes: Vec<u8>,
}

/// One HTTP/2 connection, server side.
#[derive(Debug)]
pub struct ServerConn {
    cfg: ServerConfig,
    phase: Phase,
    decoder: Decoder,
    encoder: Encoder,
    /// The peer's SETTINGS_INITIAL_WINDOW_SIZE and SETTINGS_MAX_FRAME_SIZE.
    peer_stream_window: i64,
    peer_max_frame: u32,
    /// The connection's send window, and what is left of its receive window.
    send_window: i64,
    recv_window: i64,
    recv_unacked: u32,
    /// The highest stream id the client opened.
    last_stream: u32,
    streams: Vec<Stream>,
    block: Option<PendingBlock>,
    /// Stream ids this side reset lately (see [`RESET_MEMORY`]).
    reset_ids: [u32; RESET_MEMORY],
    reset_next: usize,
    /// GOAWAY was sent with the last stream taken (gracefully or not); no new stream is taken.
    going_away: bool,
    /// The first GOAWAY of a graceful close was sent (see [`ServerConn::shutdown`]).
    draining: bool,
    /// The peer sent GOAWAY: finish what is open, take nothing new.
    peer_going_away: bool,
    streams_opened: u64,
    resets: u64,
    control: u64,
}

impl ServerConn {
    /// A connection waiting for the client preface; call [`ServerConn::start`] before the
    /// first `poll` to write the server's own preface.
    pub fn new(cfg: ServerConfig) -> Self {
        Self {
            cfg,
            phase: Phase::Preface,
            decoder: Decoder::new(4096),
            encoder: Encoder::new(),
            peer_stream_window: DEFAULT_WINDOW,
            peer_max_frame: DEFAULT_MAX_FRAME_SIZE,
            send_window: DEFAULT_WINDOW,
            recv_window: DEFAULT_WINDOW,
            recv_unacked: 0,
            last_stream: 0,
            streams: Vec::new(),
            block: None,
            reset_ids: [0; RESET_MEMORY],
            reset_next: 0,
            going_away: false,
            draining: false,
            peer_going_away: false,
            streams_opened: 0,
            resets: 0,
            control: 0,
        }
    }

    /// Writes the server connection preface (§3.4): SETTINGS, then a WINDOW_UPDATE opening the
    /// connection's receive window past the default.
    pub fn start(&mut self, out: &mut Vec<u8>) {
        frame::encode_settings(
            out,
            false,
            &[
                Setting::MaxConcurrentStreams(self.cfg.max_concurrent_streams),
                Setting::InitialWindowSize(self.cfg.stream_window),
                Setting::MaxHeaderListSize(self.cfg.max_header_list),
            ],
        );
        let extra = i64::from(self.cfg.connection_window) - DEFAULT_WINDOW;
        if extra > 0 {
            window_update(out, 0, extra as u32);
            self.recv_window += extra;
        }
    }

    /// Handles the frame at the start of `input` (or the preface), writing what it calls for
    /// to `out`; a complete request's fields go to `fields` and its body to `body`.
    pub fn poll(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        fields: &mut Fields,
        body: &mut Vec<u8>,
    ) -> Step {
        match self.phase {
            Phase::Closed => Step::Partial,
            Phase::Preface => {
                let n = input.len().min(PREFACE.len());
                if input[..n] != PREFACE[..n] {
                    return self.conn_error(out, ErrorCode::ProtocolError, Fault::Preface);
                }
                if n < PREFACE.len() {
                    return Step::Partial;
                }
                self.phase = Phase::FirstSettings;
                Step::Handled(PREFACE.len())
            }
            Phase::FirstSettings | Phase::Open => {
                match frame::decode(input, DEFAULT_MAX_FRAME_SIZE) {
                    Ok(Status::Partial) => Step::Partial,
                    Ok(Status::Complete((f, used))) => self.on_frame(f, used, out, fields, body),
                    Err(e) => self.frame_error(e, input, out),
                }
            }
        }
    }

    fn frame_error(&mut self, e: FrameError, input: &[u8], out: &mut Vec<u8>) -> Step {
        let fault = Fault::Frame(e.violation);
        // A stream error in a frame that carries a field block would leave HPACK's table out
        // of step with the peer's (§4.3): it ends the connection instead.
        let carries_block = input
            .get(3)
            .is_some_and(|&t| t == frame::kind::HEADERS || t == frame::kind::CONTINUATION);
        if e.is_connection_error() || carries_block || self.block.is_some() {
            return self.conn_error(out, e.code, fault);
        }
        self.reset(out, e.stream, e.code);
        Step::StreamError {
            used: e.skip,
            fault,
        }
    }

    fn on_frame(
        &mut self,
        f: Frame<'_>,
        used: usize,
        out: &mut Vec<u8>,
        fields: &mut Fields,
        body: &mut Vec<u8>,
    ) -> Step {
        if self.phase == Phase::FirstSettings {
            if !matches!(f, Frame::Settings { ack: false, .. }) {
                return self.conn_error(out, ErrorCode::ProtocolError, Fault::SettingsFirst);
            }
            self.phase = Phase::Open;
        }
        if let Some(b) = &self.block {
            // §6.10: only CONTINUATION of the same stream may follow an open field block.
            match f {
                Frame::Continuation { stream, .. } if stream == b.stream => {}
                _ => {
                    return self.conn_error(out, ErrorCode::ProtocolError, Fault::Continuation);
                }
            }
        }
        let step = match f {
            Frame::Data {
                stream,
                end_stream,
                data,
                ..
            } => self.on_data(
                stream,
                end_stream,
                data,
                f.flow_len(),
                used,
                out,
                fields,
                body,
            ),
            Frame::Headers {
                stream,
                end_stream,
                end_headers,
                block,
                ..
            } => self.on_headers(
                stream,
                end_stream,
                end_headers,
                block,
                used,
                out,
                fields,
                body,
            ),
            Frame::Continuation {
                end_headers, block, ..
            } => {
                let Some(mut pending) = self.block.take() else {
                    return self.conn_error(out, ErrorCode::ProtocolError, Fault::Continuation);
                };
                if pending.bytes.len() + block.len() > self.cfg.max_header_block {
                    return self.conn_error(
                        out,
                        ErrorCode::EnhanceYourCalm,
                        Fault::HeaderBlockTooLarge,
                    );
                }
                pending.bytes.extend_from_slice(block);
                if !end_headers {
                    self.control += 1;
                    self.block = Some(pending);
                    return self.budget(Step::Handled(used), out);
                }
                self.on_block(
                    pending.stream,
                    pending.end_stream,
                    &pending.bytes,
                    used,
                    out,
                    fields,
                    body,
                )
            }
            Frame::Priority { .. } => {
                self.control += 1;
                Step::Handled(used)
            }
            Frame::RstStream { stream, .. } => self.on_rst(stream, used, out),
            Frame::Settings { ack, settings } => {
                if ack {
                    return Step::Handled(used);
                }
                self.control += 1;
                for s in settings {
                    if let Err(fault) = self.apply(s) {
                        let code = match fault {
                            Fault::WindowOverflow => ErrorCode::FlowControlError,
                            _ => ErrorCode::ProtocolError,
                        };
                        return self.conn_error(out, code, fault);
                    }
                }
                frame::encode_settings(out, true, &[]);
                Step::Handled(used)
            }
            Frame::PushPromise { .. } => {
                return self.conn_error(out, ErrorCode::ProtocolError, Fault::PushPromise);
            }
            Frame::Ping { ack, data } => {
                if !ack {
                    self.control += 1;
                    frame::encode(&Frame::Ping { ack: true, data }, out);
                } else if data == DRAIN_PING && self.draining && !self.going_away {
                    // The peer saw the first GOAWAY, so every stream it will open is open.
                    self.goaway(out, ErrorCode::NoError);
                }
                Step::Handled(used)
            }
            Frame::GoAway { .. } => {
                self.peer_going_away = true;
                Step::Handled(used)
            }
            // Not counted against the budget: a client reading a long body sends one for each
            // DATA frame, and one costs no output.
            Frame::WindowUpdate { stream, increment } => {
                self.on_window_update(stream, increment, used, out)
            }
            Frame::Unknown { .. } => {
                self.control += 1;
                Step::Handled(used)
            }
        };
        self.budget(step, out)
    }

    /// Ends the connection once frames that carry no request pass their budget.
    fn budget(&mut self, step: Step, out: &mut Vec<u8>) -> Step {
        let allowed = u64::from(self.cfg.control_budget) + 2 * self.streams_opened;
        if self.control > allowed && !matches!(step, Step::ConnectionError(_)) {
            return self.conn_error(out, ErrorCode::EnhanceYourCalm, Fault::ControlFlood);
        }
        step
    }

    fn apply(&mut self, s: Setting) -> Result<(), Fault> {
        match s {
            Setting::HeaderTableSize(n) => self.encoder.set_max_table_size(n as usize),
            Setting::InitialWindowSize(n) => {
                let windows = self.streams.iter_mut().map(|s| &mut s.send_window);
                if !window::resize(&mut self.peer_stream_window, n, windows) {
                    return Err(Fault::WindowOverflow);
                }
            }
            Setting::MaxFrameSize(n) => self.peer_max_frame = n,
            Setting::EnablePush(_) | Setting::MaxConcurrentStreams(_) => {}
            Setting::MaxHeaderListSize(_) => {}
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn on_headers(
        &mut self,
        stream: u32,
        end_stream: bool,
        end_headers: bool,
        block: &[u8],
        used: usize,
        out: &mut Vec<u8>,
        fields: &mut Fields,
        body: &mut Vec<u8>,
    ) -> Step {
        if stream.is_multiple_of(2) {
            return self.conn_error(out, ErrorCode::ProtocolError, Fault::EvenStream);
        }
        if stream < self.last_stream && self.find(stream).is_none() {
            // §5.1.1: a new stream's id is above every id the client used before; one below
            // is an unexpected stream identifier, whether it was used or skipped.
            return self.conn_error(out, ErrorCode::ProtocolError, Fault::StreamBackwards);
        }
        if stream == self.last_stream && self.find(stream).is_none() {
            // The last stream, ended (§5.1 "closed": frames after END_STREAM or RST_STREAM).
            return self.conn_error(out, ErrorCode::StreamClosed, Fault::ClosedStream);
        }
        if block.len() > self.cfg.max_header_block {
            return self.conn_error(out, ErrorCode::EnhanceYourCalm, Fault::HeaderBlockTooLarge);
        }
        if !end_headers {
            self.block = Some(PendingBlock {
                stream,
                end_stream,
                bytes: block.to_vec(),
            });
            return Step::Handled(used);
        }
        self.on_block(stream, end_stream, block, used, out, fields, body)
    }

    /// A whole field block arrived for `stream`: a new request, or the trailers of one whose
    /// body is arriving.
    #[allow(clippy::too_many_arguments)]
    fn on_block(
        &mut self,
        stream: u32,
        end_stream: bool,
        block: &[u8],
        used: usize,
        out: &mut Vec<u8>,
        fields: &mut Fields,
        body: &mut Vec<u8>,
    ) -> Step {
        let trailers = self.find(stream);
        fields.clear();
        if trailers.is_some() {
            fields.begin_trailers();
        }
        let max = self.cfg.max_header_list as usize;
        let decoded = match self.decoder.decode(block, max, |n, v| fields.push(n, v)) {
            Ok(d) => d,
            Err(e) => {
                return self.conn_error(out, ErrorCode::CompressionError, Fault::Hpack(e));
            }
        };
        fields.finish();
        if let Some(i) = trailers {
            if !self.streams[i].receiving {
                // §5.1 "half-closed (remote)": a frame but WINDOW_UPDATE, PRIORITY or
                // RST_STREAM is a stream error STREAM_CLOSED (the block is decoded: HPACK
                // stays in step).
                let fault = Fault::ClosedStream;
                return self.stream_error(out, stream, ErrorCode::StreamClosed, fault, used);
            }
            // §8.1: trailers end the stream; anything else is malformed.
            if !end_stream {
                let fault = Fault::Malformed(Malformed::BadTrailers);
                return self.stream_error(out, stream, ErrorCode::ProtocolError, fault, used);
            }
            if let Some(e) = fields.error() {
                return self.stream_error(
                    out,
                    stream,
                    ErrorCode::ProtocolError,
                    Fault::Malformed(e),
                    used,
                );
            }
            return self.finish_body(i, used, out, fields, body);
        }
        self.last_stream = stream;
        if self.going_away || self.peer_going_away {
            // §6.8: streams above the last one GOAWAY named are ignored.
            return Step::Handled(used);
        }
        self.streams_opened += 1;
        if self.streams.len() >= self.cfg.max_concurrent_streams as usize {
            return self.stream_error(out, stream, ErrorCode::RefusedStream, Fault::Refused, used);
        }
        if let Some(e) = fields.error() {
            return self.stream_error(
                out,
                stream,
                ErrorCode::ProtocolError,
                Fault::Malformed(e),
                used,
            );
        }
        if decoded == Decoded::TooLarge {
            self.respond_error(out, stream, 431);
            return Step::Refused { used, status: 431 };
        }
        if fields.content_length.is_some_and(|n| n > self.cfg.max_body) {
            self.respond_error(out, stream, 413);
            if !end_stream {
                self.reset(out, stream, ErrorCode::NoError);
            }
            return Step::Refused { used, status: 413 };
        }
        if end_stream && fields.content_length.is_some_and(|n| n > 0) {
            let fault = Fault::Malformed(Malformed::ContentLengthMismatch);
            return self.stream_error(out, stream, ErrorCode::ProtocolError, fault, used);
        }
        let mut s = Stream {
            id: stream,
            receiving: !end_stream,
            send_window: self.peer_stream_window,
            recv_window: i64::from(self.cfg.stream_window),
            recv_unacked: 0,
            head: None,
            body: Vec::new(),
            answering: false,
        };
        if end_stream {
            self.streams.push(s);
            return Step::Request { used, stream };
        }
        s.head = Some(Box::new(std::mem::take(fields)));
        self.streams.push(s);
        Step::Handled(used)
    }

    #[allow(clippy::too_many_arguments)]
    fn on_data(
        &mut self,
        stream: u32,
        end_stream: bool,
        data: &[u8],
        flow_len: u32,
        used: usize,
        out: &mut Vec<u8>,
        fields: &mut Fields,
        body: &mut Vec<u8>,
    ) -> Step {
        // The connection window counts every DATA frame, whatever its stream's state (§6.9).
        self.recv_window -= i64::from(flow_len);
        if self.recv_window < 0 {
            return self.conn_error(out, ErrorCode::FlowControlError, Fault::FlowControl);
        }
        self.recv_unacked += flow_len;
        if self.recv_unacked >= self.cfg.connection_window / 2 {
            window_update(out, 0, self.recv_unacked);
            self.recv_window += i64::from(self.recv_unacked);
            self.recv_unacked = 0;
        }
        if data.is_empty() && !end_stream {
            self.control += 1;
        }
        let Some(i) = self.find(stream) else {
            if stream > self.last_stream {
                return self.conn_error(out, ErrorCode::ProtocolError, Fault::IdleStream);
            }
            if self.reset_ids.contains(&stream) {
                return Step::Handled(used);
            }
            return self.stream_error(
                out,
                stream,
                ErrorCode::StreamClosed,
                Fault::ClosedStream,
                used,
            );
        };
        if !self.streams[i].receiving {
            return self.stream_error(
                out,
                stream,
                ErrorCode::StreamClosed,
                Fault::ClosedStream,
                used,
            );
        }
        let s = &mut self.streams[i];
        s.recv_window -= i64::from(flow_len);
        if s.recv_window < 0 {
            return self.stream_error(
                out,
                stream,
                ErrorCode::FlowControlError,
                Fault::FlowControl,
                used,
            );
        }
        s.body.extend_from_slice(data);
        let len = s.body.len() as u64;
        let declared = s.head.as_ref().and_then(|h| h.content_length);
        if len > self.cfg.max_body {
            self.respond_error(out, stream, 413);
            self.reset(out, stream, ErrorCode::NoError);
            return Step::Refused { used, status: 413 };
        }
        if declared.is_some_and(|n| len > n || (end_stream && len != n)) {
            let fault = Fault::Malformed(Malformed::ContentLengthMismatch);
            return self.stream_error(out, stream, ErrorCode::ProtocolError, fault, used);
        }
        if end_stream {
            return self.finish_body(i, used, out, fields, body);
        }
        s.recv_unacked += flow_len;
        if s.recv_unacked >= self.cfg.stream_window / 2 {
            window_update(out, stream, s.recv_unacked);
            s.recv_window += i64::from(s.recv_unacked);
            s.recv_unacked = 0;
        }
        Step::Handled(used)
    }

    /// The request on `self.streams[i]` is whole: hand its head and body over.
    fn finish_body(
        &mut self,
        i: usize,
        used: usize,
        out: &mut Vec<u8>,
        fields: &mut Fields,
        body: &mut Vec<u8>,
    ) -> Step {
        let s = &mut self.streams[i];
        s.receiving = false;
        let stream = s.id;
        let declared = s.head.as_ref().and_then(|h| h.content_length);
        if declared.is_some_and(|n| n != s.body.len() as u64) {
            let fault = Fault::Malformed(Malformed::ContentLengthMismatch);
            return self.stream_error(out, stream, ErrorCode::ProtocolError, fault, used);
        }
        if let Some(head) = s.head.take() {
            *fields = *head;
        }
        std::mem::swap(body, &mut s.body);
        s.body = Vec::new();
        Step::Request { used, stream }
    }

    fn on_rst(&mut self, stream: u32, used: usize, out: &mut Vec<u8>) -> Step {
        if stream > self.last_stream {
            return self.conn_error(out, ErrorCode::ProtocolError, Fault::IdleStream);
        }
        self.resets += 1;
        if self.resets > u64::from(self.cfg.reset_budget) && self.resets * 4 > self.streams_opened {
            return self.conn_error(out, ErrorCode::EnhanceYourCalm, Fault::RapidReset);
        }
        if let Some(i) = self.find(stream) {
            self.streams.swap_remove(i);
        }
        Step::Handled(used)
    }

    fn on_window_update(&mut self, stream: u32, inc: u32, used: usize, out: &mut Vec<u8>) -> Step {
        if stream == 0 {
            self.send_window += i64::from(inc);
            if self.send_window > MAX_WINDOW {
                return self.conn_error(out, ErrorCode::FlowControlError, Fault::WindowOverflow);
            }
            return Step::Handled(used);
        }
        if stream > self.last_stream {
            return self.conn_error(out, ErrorCode::ProtocolError, Fault::IdleStream);
        }
        if let Some(i) = self.find(stream) {
            let s = &mut self.streams[i];
            s.send_window += i64::from(inc);
            if s.send_window > MAX_WINDOW {
                return self.stream_error(
                    out,
                    stream,
                    ErrorCode::FlowControlError,
                    Fault::WindowOverflow,
                    used,
                );
            }
        }
        Step::Handled(used)
    }

    fn find(&self, stream: u32) -> Option<usize> {
        self.streams.iter().position(|s| s.id == stream)
    }

    fn stream_error(
        &mut self,
        out: &mut Vec<u8>,
        stream: u32,
        code: ErrorCode,
        fault: Fault,
        used: usize,
    ) -> Step {
        self.reset(out, stream, code);
        Step::StreamError { used, fault }
    }

    /// Resets `stream` with `code` (RST_STREAM) and forgets it.
    pub fn reset(&mut self, out: &mut Vec<u8>, stream: u32, code: ErrorCode) {
        frame::encode(
            &Frame::RstStream {
                stream,
                code: code.code(),
            },
            out,
        );
        if let Some(i) = self.find(stream) {
            self.streams.swap_remove(i);
        }
        self.reset_ids[self.reset_next] = stream;
        self.reset_next = (self.reset_next + 1) % RESET_MEMORY;
    }

    fn conn_error(&mut self, out: &mut Vec<u8>, code: ErrorCode, fault: Fault) -> Step {
        self.goaway(out, code);
        self.phase = Phase::Closed;
        self.streams.clear();
        self.block = None;
        Step::ConnectionError(fault)
    }

    fn goaway(&mut self, out: &mut Vec<u8>, code: ErrorCode) {
        frame::encode(
            &Frame::GoAway {
                last_stream: self.last_stream,
                code: code.code(),
                debug: b"",
            },
            out,
        );
        self.going_away = true;
    }

    /// Begins a graceful close as RFC 9113 §6.8 describes it: a GOAWAY naming the largest
    /// stream id, so that requests already on their way are still taken, and a PING; its ACK
    /// shows the peer saw the GOAWAY, and the second GOAWAY names the last stream taken. No
    /// request a client sent before it learned of the close is refused, so a client that
    /// never retries loses none. Once [`ServerConn::is_done`], close.
    pub fn shutdown(&mut self, out: &mut Vec<u8>) {
        if self.draining || self.going_away || self.phase == Phase::Closed {
            return;
        }
        self.draining = true;
        frame::encode(
            &Frame::GoAway {
                last_stream: MAX_WINDOW as u32,
                code: ErrorCode::NoError.code(),
                debug: b"",
            },
            out,
        );
        frame::encode(
            &Frame::Ping {
                ack: false,
                data: DRAIN_PING,
            },
            out,
        );
    }

    /// Whether `stream` is open: receiving, or answered only in part.
    pub fn is_open(&self, stream: u32) -> bool {
        self.find(stream).is_some()
    }

    /// Whether [`ServerConn::shutdown`] was called (or the connection already ended).
    pub fn is_draining(&self) -> bool {
        self.draining || self.going_away || self.phase == Phase::Closed
    }

    /// No stream is open, and either side said GOAWAY or an error ended the connection: once
    /// the output is sent, close.
    pub fn is_done(&self) -> bool {
        self.phase == Phase::Closed
            || ((self.going_away || self.peer_going_away)
                && self.streams.is_empty()
                && self.block.is_none())
    }

    /// No stream is open and no field block is half received: the connection is idle.
    pub fn is_idle(&self) -> bool {
        self.streams.is_empty() && self.block.is_none()
    }

    /// Whether some stream waits for the peer to open its window.
    pub fn is_blocked(&self) -> bool {
        self.streams.iter().any(|s| s.answering)
    }
}

mod config;
mod fault;
mod send;

pub use config::ServerConfig;
pub use fault::Fault;

#[cfg(test)]
mod tests;
