//! HTTP/2 frames (RFC 9113 §4 and §6): the 9-octet header, a decoder that returns the next
//! complete frame borrowing its payload, per-type payload checks, and an encoder.
//! <https://www.rfc-editor.org/rfc/rfc9113.html#section-4>

use super::{ErrorCode, FrameError, Violation};
use crate::error::Status;

/// The client connection preface (RFC 9113 §3.4), which precedes the client's SETTINGS.
pub const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The length of a frame header.
pub const HEADER_LEN: usize = 9;

/// SETTINGS_MAX_FRAME_SIZE before the peer's SETTINGS say otherwise (§6.5.2).
pub const DEFAULT_MAX_FRAME_SIZE: u32 = 16_384;

/// The largest SETTINGS_MAX_FRAME_SIZE a peer may set, 2^24-1 (§6.5.2).
pub const MAX_FRAME_SIZE_LIMIT: u32 = 16_777_215;

/// The largest flow-control window, 2^31-1 (§6.9.1).
const MAX_WINDOW: u32 = 0x7fff_ffff;

/// Frame type codes (§6).
pub mod kind {
    /// DATA (§6.1).
    pub const DATA: u8 = 0x0;
    /// HEADERS (§6.2).
    pub const HEADERS: u8 = 0x1;
    /// PRIORITY (§6.3).
    pub const PRIORITY: u8 = 0x2;
    /// RST_STREAM (§6.4).
    pub const RST_STREAM: u8 = 0x3;
    /// SETTINGS (§6.5).
    pub const SETTINGS: u8 = 0x4;
    /// PUSH_PROMISE (§6.6).
    pub const PUSH_PROMISE: u8 = 0x5;
    /// PING (§6.7).
    pub const PING: u8 = 0x6;
    /// GOAWAY (§6.8).
    pub const GOAWAY: u8 = 0x7;
    /// WINDOW_UPDATE (§6.9).
    pub const WINDOW_UPDATE: u8 = 0x8;
    /// CONTINUATION (§6.10).
    pub const CONTINUATION: u8 = 0x9;
}

/// Frame flags (§6); a flag a type does not define is ignored on receipt (§4.1).
pub mod flags {
    /// DATA, HEADERS: the last frame of the stream.
    pub const END_STREAM: u8 = 0x1;
    /// SETTINGS, PING: an acknowledgement.
    pub const ACK: u8 = 0x1;
    /// HEADERS, PUSH_PROMISE, CONTINUATION: the field block ends here.
    pub const END_HEADERS: u8 = 0x4;
    /// DATA, HEADERS, PUSH_PROMISE: a Pad Length octet leads the payload.
    pub const PADDED: u8 = 0x8;
    /// HEADERS: the priority fields follow.
    pub const PRIORITY: u8 = 0x20;
}

/// The 9-octet frame header (§4.1). The reserved bit of the stream identifier is dropped on
/// receipt and written as 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// The payload length (24 bits).
    pub length: u32,
    /// The frame type.
    pub kind: u8,
    /// The flags.
    pub flags: u8,
    /// The stream identifier (31 bits).
    pub stream: u32,
}

impl FrameHeader {
    /// Reads a header from its 9 octets.
    pub fn parse(b: &[u8; HEADER_LEN]) -> FrameHeader {
        FrameHeader {
            length: u32::from_be_bytes([0, b[0], b[1], b[2]]),
            kind: b[3],
            flags: b[4],
            stream: read_u31(&b[5..9]),
        }
    }

    /// Appends the header's 9 octets. `length` must fit in 24 bits.
    pub fn write(&self, out: &mut Vec<u8>) {
        debug_assert!(self.length <= MAX_FRAME_SIZE_LIMIT);
        out.extend_from_slice(&self.length.to_be_bytes()[1..]);
        out.push(self.kind);
        out.push(self.flags);
        out.extend_from_slice(&(self.stream & MAX_WINDOW).to_be_bytes());
    }
}

/// Stream priority fields of HEADERS and PRIORITY (§5.3.2, §6.3). RFC 9113 deprecates the
/// scheme: they are parsed, checked for self-dependency, and otherwise ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Priority {
    /// The E flag.
    pub exclusive: bool,
    /// The stream depended on (31 bits).
    pub dependency: u32,
    /// The weight minus one, as on the wire.
    pub weight: u8,
}

/// A decoded frame; payloads borrow the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<'a> {
    /// DATA (§6.1). The flow-controlled length is the whole payload,
    /// [`Frame::flow_len`].
    Data {
        /// The stream.
        stream: u32,
        /// END_STREAM.
        end_stream: bool,
        /// The data.
        data: &'a [u8],
        /// The Pad Length, if PADDED.
        padding: Option<u8>,
    },
    /// HEADERS (§6.2).
    Headers {
        /// The stream.
        stream: u32,
        /// END_STREAM.
        end_stream: bool,
        /// END_HEADERS.
        end_headers: bool,
        /// The priority fields, if PRIORITY.
        priority: Option<Priority>,
        /// The Pad Length, if PADDED.
        padding: Option<u8>,
        /// The field block fragment (HPACK).
        block: &'a [u8],
    },
    /// PRIORITY (§6.3).
    Priority {
        /// The stream.
        stream: u32,
        /// The fields.
        priority: Priority,
    },
    /// RST_STREAM (§6.4).
    RstStream {
        /// The stream.
        stream: u32,
        /// The error code, raw ([`ErrorCode::from_u32`]).
        code: u32,
    },
    /// SETTINGS (§6.5).
    Settings {
        /// ACK.
        ack: bool,
        /// The parameters, already checked (empty for an ACK).
        settings: Settings<'a>,
    },
    /// PUSH_PROMISE (§6.6), recognised but left opaque: a server never accepts one (§8.4).
    PushPromise {
        /// The stream.
        stream: u32,
        /// The flags.
        flags: u8,
        /// The payload, unparsed.
        payload: &'a [u8],
    },
    /// PING (§6.7).
    Ping {
        /// ACK.
        ack: bool,
        /// The opaque data.
        data: [u8; 8],
    },
    /// GOAWAY (§6.8).
    GoAway {
        /// The last stream the sender may have processed.
        last_stream: u32,
        /// The error code, raw ([`ErrorCode::from_u32`]).
        code: u32,
        /// Additional debug data.
        debug: &'a [u8],
    },
    /// WINDOW_UPDATE (§6.9); stream 0 is the connection window.
    WindowUpdate {
        /// The stream, or 0.
        stream: u32,
        /// The increment, 1..=2^31-1.
        increment: u32,
    },
    /// CONTINUATION (§6.10).
    Continuation {
        /// The stream.
        stream: u32,
        /// END_HEADERS.
        end_headers: bool,
        /// The field block fragment.
        block: &'a [u8],
    },
    /// A frame of an unknown type, to be ignored (§4.1, §5.5).
    Unknown {
        /// The type.
        kind: u8,
        /// The flags.
        flags: u8,
        /// The stream.
        stream: u32,
        /// The payload.
        payload: &'a [u8],
    },
}

impl Frame<'_> {
    /// The octets this frame counts against flow control: a DATA frame's whole payload,
    /// padding included (§6.1); 0 for the other types.
    pub fn flow_len(&self) -> u32 {
        match self {
            Frame::Data { data, padding, .. } => {
                data.len() as u32 + padding.map_or(0, |p| u32::from(p) + 1)
            }
            _ => 0,
        }
    }
}

/// A known setting (§6.5.2). Unknown identifiers are skipped, as §6.5.2 requires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// SETTINGS_HEADER_TABLE_SIZE (0x1).
    HeaderTableSize(u32),
    /// SETTINGS_ENABLE_PUSH (0x2).
    EnablePush(bool),
    /// SETTINGS_MAX_CONCURRENT_STREAMS (0x3).
    MaxConcurrentStreams(u32),
    /// SETTINGS_INITIAL_WINDOW_SIZE (0x4), at most 2^31-1.
    InitialWindowSize(u32),
    /// SETTINGS_MAX_FRAME_SIZE (0x5), 16384..=16777215.
    MaxFrameSize(u32),
    /// SETTINGS_MAX_HEADER_LIST_SIZE (0x6).
    MaxHeaderListSize(u32),
}

impl Setting {
    fn id_value(self) -> (u16, u32) {
        match self {
            Setting::HeaderTableSize(v) => (0x1, v),
            Setting::EnablePush(v) => (0x2, u32::from(v)),
            Setting::MaxConcurrentStreams(v) => (0x3, v),
            Setting::InitialWindowSize(v) => (0x4, v),
            Setting::MaxFrameSize(v) => (0x5, v),
            Setting::MaxHeaderListSize(v) => (0x6, v),
        }
    }

    /// The known setting `id` names, `Ok(None)` for an unknown id, or the connection
    /// error a value out of range is (§6.5.2).
    fn read(id: u16, value: u32) -> Result<Option<Setting>, (ErrorCode, Violation)> {
        Ok(Some(match id {
            0x1 => Setting::HeaderTableSize(value),
            0x2 => match value {
                0 | 1 => Setting::EnablePush(value == 1),
                _ => return Err((ErrorCode::ProtocolError, Violation::EnablePush)),
            },
            0x3 => Setting::MaxConcurrentStreams(value),
            0x4 if value > MAX_WINDOW => {
                return Err((ErrorCode::FlowControlError, Violation::InitialWindowSize));
            }
            0x4 => Setting::InitialWindowSize(value),
            0x5 if !(DEFAULT_MAX_FRAME_SIZE..=MAX_FRAME_SIZE_LIMIT).contains(&value) => {
                return Err((ErrorCode::ProtocolError, Violation::MaxFrameSize));
            }
            0x5 => Setting::MaxFrameSize(value),
            0x6 => Setting::MaxHeaderListSize(value),
            _ => return Ok(None),
        }))
    }
}

/// A SETTINGS payload whose length and values were checked when decoded; iterate it for the
/// known settings in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings<'a> {
    raw: &'a [u8],
}

impl<'a> Settings<'a> {
    /// The payload as on the wire (6 octets per parameter, unknown ones included).
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The known settings, in the order sent.
    pub fn iter(&self) -> SettingsIter<'a> {
        SettingsIter {
            chunks: self.raw.chunks_exact(6),
        }
    }
}

impl<'a> IntoIterator for Settings<'a> {
    type Item = Setting;
    type IntoIter = SettingsIter<'a>;
    fn into_iter(self) -> SettingsIter<'a> {
        self.iter()
    }
}

/// The known settings of a [`Settings`] payload.
#[derive(Debug, Clone)]
pub struct SettingsIter<'a> {
    chunks: std::slice::ChunksExact<'a, u8>,
}

impl Iterator for SettingsIter<'_> {
    type Item = Setting;
    fn next(&mut self) -> Option<Setting> {
        for c in self.chunks.by_ref() {
            let id = u16::from_be_bytes([c[0], c[1]]);
            let value = u32::from_be_bytes([c[2], c[3], c[4], c[5]]);
            // Checked when the frame was decoded, so only unknown ids give `None` here.
            if let Ok(Some(s)) = Setting::read(id, value) {
                return Some(s);
            }
        }
        None
    }
}

fn read_u31(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]]) & MAX_WINDOW
}

fn read_u32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Decodes the next frame at the start of `buf`: the frame and the bytes it used, or
/// `Partial` when `buf` does not yet hold all of it. `max_frame_size` is the
/// SETTINGS_MAX_FRAME_SIZE this endpoint advertised. The error of a frame over it is reported
/// as soon as its header has arrived, without waiting for the payload (§4.2). The preface is
/// not a frame: the caller matches [`PREFACE`] first.
pub fn decode(buf: &[u8], max_frame_size: u32) -> Result<Status<(Frame<'_>, usize)>, FrameError> {
    let Some((head, rest)) = buf.split_first_chunk::<HEADER_LEN>() else {
        return Ok(Status::Partial);
    };
    let h = FrameHeader::parse(head);
    if h.length > max_frame_size {
        // §4.2 makes this a connection error for field blocks, SETTINGS and stream 0; for the
        // other frames it is one too here, since skipping them would mean buffering up to
        // 16 MiB of a payload that is already too long.
        return Err(conn_error(ErrorCode::FrameSizeError, Violation::TooLarge));
    }
    let len = h.length as usize;
    let Some(payload) = rest.get(..len) else {
        return Ok(Status::Partial);
    };
    let frame = parse_payload(h, payload).map_err(|(code, stream, violation)| FrameError {
        code,
        stream,
        violation,
        skip: if stream == 0 { 0 } else { HEADER_LEN + len },
    })?;
    Ok(Status::Complete((frame, HEADER_LEN + len)))
}

fn conn_error(code: ErrorCode, violation: Violation) -> FrameError {
    FrameError {
        code,
        stream: 0,
        violation,
        skip: 0,
    }
}

/// A rule broken: the code, the stream to reset (0: the connection), and the rule.
type Broken = (ErrorCode, u32, Violation);

const fn conn(code: ErrorCode, violation: Violation) -> Broken {
    (code, 0, violation)
}

const STREAM_ZERO: Broken = conn(ErrorCode::ProtocolError, Violation::StreamZero);
const STREAM_NON_ZERO: Broken = conn(ErrorCode::ProtocolError, Violation::StreamNonZero);
const BAD_LENGTH: Broken = conn(ErrorCode::FrameSizeError, Violation::BadLength);

/// Strips the Pad Length octet and the padding when PADDED is set (§6.1, §6.2, §6.6):
/// the remaining fields and the Pad Length.
fn unpad(flags: u8, payload: &[u8]) -> Result<(&[u8], Option<u8>), Broken> {
    if flags & self::flags::PADDED == 0 {
        return Ok((payload, None));
    }
    let Some((&pad, rest)) = payload.split_first() else {
        return Err(BAD_LENGTH);
    };
    match rest.len().checked_sub(usize::from(pad)) {
        Some(keep) => Ok((&rest[..keep], Some(pad))),
        None => Err(conn(ErrorCode::ProtocolError, Violation::PaddingTooLong)),
    }
}

fn read_priority(stream: u32, b: &[u8]) -> Result<Priority, Broken> {
    let word = read_u32(b);
    let priority = Priority {
        exclusive: word & 0x8000_0000 != 0,
        dependency: word & MAX_WINDOW,
        weight: b[4],
    };
    if priority.dependency == stream {
        // §5.3.1: a stream error, not a connection error.
        return Err((ErrorCode::ProtocolError, stream, Violation::SelfDependency));
    }
    Ok(priority)
}

fn parse_payload(h: FrameHeader, payload: &[u8]) -> Result<Frame<'_>, Broken> {
    let stream = h.stream;
    let flag = |f: u8| h.flags & f != 0;
    let needs_stream = matches!(
        h.kind,
        kind::DATA
            | kind::HEADERS
            | kind::PRIORITY
            | kind::RST_STREAM
            | kind::PUSH_PROMISE
            | kind::CONTINUATION
    );
    if needs_stream && stream == 0 {
        return Err(STREAM_ZERO);
    }
    if matches!(h.kind, kind::SETTINGS | kind::PING | kind::GOAWAY) && stream != 0 {
        return Err(STREAM_NON_ZERO);
    }
    Ok(match h.kind {
        kind::DATA => {
            let (data, padding) = unpad(h.flags, payload)?;
            Frame::Data {
                stream,
                end_stream: flag(flags::END_STREAM),
                data,
                padding,
            }
        }
        kind::HEADERS => {
            let (rest, padding) = unpad(h.flags, payload)?;
            let (priority, block) = if flag(flags::PRIORITY) {
                // The priority fields sit before the padding: a padded frame whose padding
                // eats into them leaves no room for the fragment (§6.2).
                let Some((fields, block)) = rest.split_at_checked(5) else {
                    return Err(if padding.is_some() && payload.len() > 5 {
                        conn(ErrorCode::ProtocolError, Violation::PaddingTooLong)
                    } else {
                        BAD_LENGTH
                    });
                };
                (Some(read_priority(stream, fields)?), block)
            } else {
                (None, rest)
            };
            Frame::Headers {
                stream,
                end_stream: flag(flags::END_STREAM),
                end_headers: flag(flags::END_HEADERS),
                priority,
                padding,
                block,
            }
        }
        kind::PRIORITY => {
            if payload.len() != 5 {
                // §6.3: a stream error.
                return Err((ErrorCode::FrameSizeError, stream, Violation::BadLength));
            }
            Frame::Priority {
                stream,
                priority: read_priority(stream, payload)?,
            }
        }
        kind::RST_STREAM => {
            if payload.len() != 4 {
                return Err(BAD_LENGTH);
            }
            Frame::RstStream {
                stream,
                code: read_u32(payload),
            }
        }
        kind::SETTINGS => {
            let ack = flag(flags::ACK);
            if (ack && !payload.is_empty()) || !payload.len().is_multiple_of(6) {
                return Err(BAD_LENGTH);
            }
            for c in payload.chunks_exact(6) {
                let id = u16::from_be_bytes([c[0], c[1]]);
                Setting::read(id, read_u32(&c[2..])).map_err(|(code, v)| conn(code, v))?;
            }
            Frame::Settings {
                ack,
                settings: Settings { raw: payload },
            }
        }
        kind::PUSH_PROMISE => Frame::PushPromise {
            stream,
            flags: h.flags,
            payload,
        },
        kind::PING => {
            let Ok(data) = <[u8; 8]>::try_from(payload) else {
                return Err(BAD_LENGTH);
            };
            Frame::Ping {
                ack: flag(flags::ACK),
                data,
            }
        }
        kind::GOAWAY => {
            let Some((fixed, debug)) = payload.split_at_checked(8) else {
                return Err(BAD_LENGTH);
            };
            Frame::GoAway {
                last_stream: read_u31(fixed),
                code: read_u32(&fixed[4..]),
                debug,
            }
        }
        kind::WINDOW_UPDATE => {
            if payload.len() != 4 {
                return Err(BAD_LENGTH);
            }
            let increment = read_u31(payload);
            if increment == 0 {
                // §6.9: a stream error on a stream, a connection error on the connection.
                return Err((ErrorCode::ProtocolError, stream, Violation::ZeroIncrement));
            }
            Frame::WindowUpdate { stream, increment }
        }
        kind::CONTINUATION => Frame::Continuation {
            stream,
            end_headers: flag(flags::END_HEADERS),
            block: payload,
        },
        _ => Frame::Unknown {
            kind: h.kind,
            flags: h.flags,
            stream,
            payload,
        },
    })
}

const PADDING: [u8; 256] = [0; 256];

fn frame_header(out: &mut Vec<u8>, length: usize, kind: u8, flags: u8, stream: u32) {
    FrameHeader {
        length: length as u32,
        kind,
        flags,
        stream,
    }
    .write(out);
}

fn set(flag: u8, on: bool) -> u8 {
    if on { flag } else { 0 }
}

/// Appends a field block as a HEADERS frame (END_HEADERS, and END_STREAM when `end_stream`)
/// on `stream`, continued in CONTINUATION frames when it is over the peer's `max_frame`
/// octets (§6.10); `fill` appends the encoded block.
pub(crate) fn header_block(
    out: &mut Vec<u8>,
    stream: u32,
    end_stream: bool,
    max_frame: u32,
    fill: impl FnOnce(&mut Vec<u8>),
) {
    let start = out.len();
    out.extend_from_slice(&[0; HEADER_LEN]);
    fill(out);
    let len = out.len() - start - HEADER_LEN;
    let f = flags::END_HEADERS | set(flags::END_STREAM, end_stream);
    if len <= max_frame as usize {
        write_header(&mut out[start..], len, kind::HEADERS, f, stream);
    } else {
        split_block(out, start, max_frame as usize, f, stream);
    }
}

/// Writes a frame header over the 9 octets at the start of `at` (reserved before its payload
/// was appended).
pub(crate) fn write_header(at: &mut [u8], len: usize, kind: u8, flags: u8, stream: u32) {
    let len = len as u32;
    at[..3].copy_from_slice(&len.to_be_bytes()[1..]);
    at[3] = kind;
    at[4] = flags;
    at[5..9].copy_from_slice(&stream.to_be_bytes());
}

/// Cuts the field block written after `out[start..start + 9]` into a HEADERS frame and
/// CONTINUATION frames of at most `max` octets; `f` holds HEADERS' flags, END_HEADERS moving
/// to the last frame.
fn split_block(out: &mut Vec<u8>, start: usize, max: usize, f: u8, stream: u32) {
    let block = out.split_off(start + HEADER_LEN);
    out.truncate(start);
    let mut chunks = block.chunks(max).peekable();
    let mut first = true;
    while let Some(c) = chunks.next() {
        let last = chunks.peek().is_none();
        let (kind, mut fl) = if first {
            (kind::HEADERS, f & flags::END_STREAM)
        } else {
            (kind::CONTINUATION, 0)
        };
        if last {
            fl |= flags::END_HEADERS;
        }
        let at = out.len();
        out.extend_from_slice(&[0; HEADER_LEN]);
        write_header(&mut out[at..], c.len(), kind, fl, stream);
        out.extend_from_slice(c);
        first = false;
    }
}

fn write_priority(out: &mut Vec<u8>, p: &Priority) {
    let word = (p.dependency & MAX_WINDOW) | if p.exclusive { 0x8000_0000 } else { 0 };
    out.extend_from_slice(&word.to_be_bytes());
    out.push(p.weight);
}

/// Appends `frame` (header and payload) to `out`; padding is written as zeros. The caller
/// keeps the payload within the peer's SETTINGS_MAX_FRAME_SIZE.
pub fn encode(frame: &Frame<'_>, out: &mut Vec<u8>) {
    let pad_len = |p: &Option<u8>| p.map_or(0, |p| 1 + usize::from(p));
    let pad_flag = |p: &Option<u8>| set(flags::PADDED, p.is_some());
    match frame {
        Frame::Data {
            stream,
            end_stream,
            data,
            padding,
        } => {
            let f = set(flags::END_STREAM, *end_stream) | pad_flag(padding);
            frame_header(out, data.len() + pad_len(padding), kind::DATA, f, *stream);
            if let Some(p) = padding {
                out.push(*p);
            }
            out.extend_from_slice(data);
            if let Some(p) = padding {
                out.extend_from_slice(&PADDING[..usize::from(*p)]);
            }
        }
        Frame::Headers {
            stream,
            end_stream,
            end_headers,
            priority,
            padding,
            block,
        } => {
            let f = set(flags::END_STREAM, *end_stream)
                | set(flags::END_HEADERS, *end_headers)
                | set(flags::PRIORITY, priority.is_some())
                | pad_flag(padding);
            let len = block.len() + pad_len(padding) + if priority.is_some() { 5 } else { 0 };
            frame_header(out, len, kind::HEADERS, f, *stream);
            if let Some(p) = padding {
                out.push(*p);
            }
            if let Some(p) = priority {
                write_priority(out, p);
            }
            out.extend_from_slice(block);
            if let Some(p) = padding {
                out.extend_from_slice(&PADDING[..usize::from(*p)]);
            }
        }
        Frame::Priority { stream, priority } => {
            frame_header(out, 5, kind::PRIORITY, 0, *stream);
            write_priority(out, priority);
        }
        Frame::RstStream { stream, code } => {
            frame_header(out, 4, kind::RST_STREAM, 0, *stream);
            out.extend_from_slice(&code.to_be_bytes());
        }
        Frame::Settings { ack, settings } => {
            let f = set(flags::ACK, *ack);
            frame_header(out, settings.raw.len(), kind::SETTINGS, f, 0);
            out.extend_from_slice(settings.raw);
        }
        Frame::PushPromise {
            stream,
            flags,
            payload,
        } => {
            frame_header(out, payload.len(), kind::PUSH_PROMISE, *flags, *stream);
            out.extend_from_slice(payload);
        }
        Frame::Ping { ack, data } => {
            frame_header(out, 8, kind::PING, set(flags::ACK, *ack), 0);
            out.extend_from_slice(data);
        }
        Frame::GoAway {
            last_stream,
            code,
            debug,
        } => {
            frame_header(out, 8 + debug.len(), kind::GOAWAY, 0, 0);
            out.extend_from_slice(&(last_stream & MAX_WINDOW).to_be_bytes());
            out.extend_from_slice(&code.to_be_bytes());
            out.extend_from_slice(debug);
        }
        Frame::WindowUpdate { stream, increment } => {
            frame_header(out, 4, kind::WINDOW_UPDATE, 0, *stream);
            out.extend_from_slice(&(increment & MAX_WINDOW).to_be_bytes());
        }
        Frame::Continuation {
            stream,
            end_headers,
            block,
        } => {
            let f = set(flags::END_HEADERS, *end_headers);
            frame_header(out, block.len(), kind::CONTINUATION, f, *stream);
            out.extend_from_slice(block);
        }
        Frame::Unknown {
            kind,
            flags,
            stream,
            payload,
        } => {
            frame_header(out, payload.len(), *kind, *flags, *stream);
            out.extend_from_slice(payload);
        }
    }
}

/// Appends a SETTINGS frame carrying `settings` (or an ACK, with `settings` empty).
pub fn encode_settings(out: &mut Vec<u8>, ack: bool, settings: &[Setting]) {
    frame_header(
        out,
        settings.len() * 6,
        kind::SETTINGS,
        set(flags::ACK, ack),
        0,
    );
    for s in settings {
        let (id, value) = s.id_value();
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&value.to_be_bytes());
    }
}

#[cfg(test)]
mod tests;
