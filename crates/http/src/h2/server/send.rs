//! The response side of [`ServerConn`]: heads as HEADERS (and CONTINUATION) frames, bodies as
//! DATA frames within both windows, and the server's own error responses.

use super::super::frame::{self, HEADER_LEN, flags};
use super::super::hpack::Encoder;
use super::{ServerConn, Stream};
use crate::h2::ErrorCode;

impl ServerConn {
    /// Writes the response head for `stream`: `write` appends fields with the encoder
    /// (`:status` first); END_STREAM when the response has no body. A block over the peer's
    /// frame size continues in CONTINUATION frames (§6.10).
    pub fn headers(
        &mut self,
        out: &mut Vec<u8>,
        stream: u32,
        end_stream: bool,
        write: impl FnOnce(&mut Encoder, &mut Vec<u8>),
    ) {
        let encoder = &mut self.encoder;
        frame::header_block(out, stream, end_stream, self.peer_max_frame, |out| {
            encoder.begin_block(out);
            write(encoder, out);
        });
        if let Some(i) = self.find(stream) {
            if end_stream {
                self.streams.swap_remove(i);
            } else {
                self.streams[i].answering = true;
            }
        }
    }

    /// How many body octets `stream` may send now: the smaller of its window and the
    /// connection's.
    pub fn send_capacity(&self, stream: u32) -> usize {
        let s = self.find(stream).map_or(0, |i| self.streams[i].send_window);
        s.min(self.send_window).max(0) as usize
    }

    /// Sends as much of `data` as the windows allow as DATA frames of at most the peer's
    /// frame size, END_STREAM on the last when all of it went and `end_stream`; returns how
    /// much went. The stream is forgotten once its END_STREAM is written.
    pub fn data(&mut self, out: &mut Vec<u8>, stream: u32, data: &[u8], end_stream: bool) -> usize {
        let Some(i) = self.find(stream) else {
            return 0;
        };
        let room = self.streams[i].send_window.min(self.send_window).max(0) as usize;
        let n = data.len().min(room);
        let max = self.peer_max_frame as usize;
        let mut sent = 0;
        loop {
            let len = (n - sent).min(max);
            let last = sent + len == n;
            let f = if last && n == data.len() && end_stream {
                flags::END_STREAM
            } else {
                0
            };
            if len == 0 && f == 0 {
                break;
            }
            let at = out.len();
            out.extend_from_slice(&[0; HEADER_LEN]);
            frame::write_header(&mut out[at..], len, frame::kind::DATA, f, stream);
            out.extend_from_slice(&data[sent..sent + len]);
            sent += len;
            if last {
                break;
            }
        }
        let s = &mut self.streams[i];
        s.send_window -= n as i64;
        self.send_window -= n as i64;
        if n == data.len() && end_stream {
            self.streams.swap_remove(i);
        }
        n
    }

    /// Writes a whole error response (`status`, a one-line plain-text body) on `stream`.
    pub fn respond_error(&mut self, out: &mut Vec<u8>, stream: u32, status: u16) {
        if self.find(stream).is_none() {
            self.streams.push(Stream {
                id: stream,
                receiving: false,
                send_window: self.peer_stream_window,
                recv_window: 0,
                recv_unacked: 0,
                head: None,
                body: Vec::new(),
                answering: false,
            });
        }
        let mut body = [0u8; 64];
        let text = format_error(&mut body, status);
        self.headers(out, stream, false, |enc, out| {
            crate::h2::respond::head(
                enc,
                out,
                status,
                Some("text/plain; charset=utf-8"),
                Some(text.len() as u64),
                &[],
            );
        });
        let n = self.data(out, stream, text, true);
        if n < text.len() {
            // A window too small even for an error's body: the stream is reset instead.
            self.reset(out, stream, ErrorCode::Cancel);
        }
    }
}

/// `status reason\n` into `buf`.
fn format_error(buf: &mut [u8; 64], status: u16) -> &[u8] {
    use std::io::Write;
    let mut w = &mut buf[..];
    let _ = writeln!(w, "{status} {}", crate::reason_phrase(status));
    let left = w.len();
    &buf[..64 - left]
}
