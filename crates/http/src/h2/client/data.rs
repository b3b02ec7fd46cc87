//! DATA frames on the client side, taken as their bytes arrive (RFC 9113 §6.1): the header
//! is checked and charged against both receive windows when it comes, the payload counted
//! as it is read, and the windows reopened once the frame is read whole (§6.9).

use super::{ClientConn, ClientFault, DataRest, Event, window_update};
use crate::h2::frame::{DEFAULT_MAX_FRAME_SIZE, FrameHeader, HEADER_LEN, flags};
use crate::h2::{ErrorCode, Violation};

impl<T: Copy> ClientConn<T> {
    /// A DATA frame's header (and whatever of its payload `input` holds).
    pub(super) fn data_frame(
        &mut self,
        h: FrameHeader,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> Event<T> {
        if self.block.is_some() {
            return self.conn_error(out, ErrorCode::ProtocolError, ClientFault::Continuation);
        }
        if h.length > DEFAULT_MAX_FRAME_SIZE {
            let fault = ClientFault::Frame(Violation::TooLarge);
            return self.conn_error(out, ErrorCode::FrameSizeError, fault);
        }
        if h.stream == 0 {
            let fault = ClientFault::Frame(Violation::StreamZero);
            return self.conn_error(out, ErrorCode::ProtocolError, fault);
        }
        if h.stream >= self.next_stream || h.stream.is_multiple_of(2) {
            return self.conn_error(out, ErrorCode::ProtocolError, ClientFault::IdleStream);
        }
        let (head_len, pad) = if h.flags & flags::PADDED != 0 {
            let Some(&pad) = input.get(HEADER_LEN) else {
                return Event::Partial;
            };
            if u32::from(pad) >= h.length {
                let fault = ClientFault::Frame(Violation::PaddingTooLong);
                return self.conn_error(out, ErrorCode::ProtocolError, fault);
            }
            (HEADER_LEN + 1, u32::from(pad))
        } else {
            (HEADER_LEN, 0)
        };
        // The connection window counts every DATA frame, whatever its stream's state (§6.9).
        self.recv_window -= i64::from(h.length);
        if self.recv_window < 0 {
            return self.conn_error(out, ErrorCode::FlowControlError, ClientFault::FlowControl);
        }
        if let Some(i) = self.find(h.stream) {
            let s = &mut self.streams[i];
            s.recv_window -= i64::from(h.length);
            if s.recv_window < 0 {
                return self.stream_error(out, i, ErrorCode::FlowControlError, 0, h.length);
            }
            if s.status == 0 || s.trailers {
                return self.stream_error(out, i, ErrorCode::ProtocolError, 0, h.length);
            }
        }
        self.data = Some(DataRest {
            stream: h.stream,
            left: h.length - (head_len - HEADER_LEN) as u32,
            pad,
            flow: h.length,
            end_stream: h.flags & flags::END_STREAM != 0,
        });
        self.data_bytes(&input[head_len..], head_len, out)
    }

    /// Takes what `input` holds of the DATA payload under way; `used` bytes before it were
    /// already taken by this call.
    pub(super) fn data_bytes(&mut self, input: &[u8], used: usize, out: &mut Vec<u8>) -> Event<T> {
        let Some(d) = &mut self.data else {
            return Event::Handled(used);
        };
        let take = (input.len() as u64).min(u64::from(d.left)) as u32;
        if take == 0 && d.left > 0 {
            return if used > 0 {
                Event::Handled(used)
            } else {
                Event::Partial
            };
        }
        let data = take.min(d.left - d.pad);
        d.pad -= take - data;
        d.left -= take;
        let used = used + take as usize;
        let d = *d;
        let i = self.find(d.stream);
        if let Some(i) = i {
            self.streams[i].body_len += u64::from(data);
        }
        if d.left > 0 {
            return Event::Handled(used);
        }
        self.data = None;
        // The frame is read: its octets go back to the server (§6.9), in WINDOW_UPDATEs of at
        // least half a window, so that they stay rare.
        self.recv_unacked += d.flow;
        if self.recv_unacked >= self.cfg.connection_window / 2 {
            window_update(out, 0, self.recv_unacked);
            self.recv_window += i64::from(self.recv_unacked);
            self.recv_unacked = 0;
        }
        let Some(i) = i else {
            return Event::Handled(used);
        };
        if d.end_stream {
            return self.finish(i, used);
        }
        let s = &mut self.streams[i];
        s.recv_unacked += d.flow;
        if s.recv_unacked >= self.cfg.stream_window / 2 {
            window_update(out, s.id, s.recv_unacked);
            s.recv_window += i64::from(s.recv_unacked);
            s.recv_unacked = 0;
        }
        Event::Handled(used)
    }
}
