//! A blocking HTTP/2 client that speaks raw frames, for tests: it writes exactly the frames a
//! test asks for (well-formed or not) and reads back every frame the server sends, HPACK
//! decoded, so that a test can assert on the wire (RFC 9113) rather than on a library's view
//! of it.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;
use twelve_http::Status;
use twelve_http::h2::hpack::{Decoder, Encoder, Index};
use twelve_http::h2::{Frame, MAX_FRAME_SIZE_LIMIT, PREFACE, Setting, encode, encode_settings};

/// A frame the server sent, its payload owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Got {
    /// HEADERS (CONTINUATIONs joined), decoded.
    Headers {
        /// The stream.
        stream: u32,
        /// END_STREAM.
        end_stream: bool,
        /// The fields, in order.
        fields: Vec<(String, String)>,
    },
    /// DATA.
    Data {
        /// The stream.
        stream: u32,
        /// END_STREAM.
        end_stream: bool,
        /// The payload.
        data: Vec<u8>,
    },
    /// RST_STREAM.
    Reset {
        /// The stream.
        stream: u32,
        /// The error code.
        code: u32,
    },
    /// GOAWAY.
    GoAway {
        /// The last stream id.
        last_stream: u32,
        /// The error code.
        code: u32,
    },
    /// SETTINGS (not an ACK), the known settings.
    Settings(Vec<Setting>),
    /// A SETTINGS ACK.
    SettingsAck,
    /// PING.
    Ping {
        /// ACK.
        ack: bool,
        /// The payload.
        data: [u8; 8],
    },
    /// WINDOW_UPDATE.
    WindowUpdate {
        /// The stream.
        stream: u32,
        /// The increment.
        increment: u32,
    },
    /// The server closed the connection (or reset it).
    Closed,
}

/// A whole response: status, fields and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// `:status`.
    pub status: u16,
    /// The regular fields.
    pub fields: Vec<(String, String)>,
    /// The body, all DATA joined.
    pub body: Vec<u8>,
}

impl Response {
    /// The first field named `name`.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A raw-frame HTTP/2 client over a blocking socket (any `Read + Write`, a TLS stream too).
pub struct Client<S: Read + Write = TcpStream> {
    sock: S,
    enc: Encoder,
    dec: Decoder,
    buf: Vec<u8>,
    /// A HEADERS block waiting for its CONTINUATIONs: (stream, end_stream, bytes).
    block: Option<(u32, bool, Vec<u8>)>,
    /// Bytes held by [`Client::batch`].
    held: Option<Vec<u8>>,
}

impl Client<TcpStream> {
    /// Connects and sends the client preface and an empty SETTINGS; reads time out after
    /// `timeout`.
    pub fn connect(addr: SocketAddr, timeout: Duration) -> Self {
        let sock = TcpStream::connect(addr).expect("connect");
        sock.set_read_timeout(Some(timeout)).expect("timeout");
        sock.set_nodelay(true).expect("nodelay");
        let mut c = Client::raw(sock);
        c.preface(&[]);
        c
    }
}

impl<S: Read + Write> Client<S> {
    /// A client that has sent nothing yet.
    pub fn raw(sock: S) -> Self {
        Self {
            sock,
            enc: Encoder::new(),
            dec: Decoder::new(4096),
            buf: Vec::new(),
            block: None,
            held: None,
        }
    }

    /// Holds what is sent from now on until [`Client::flush`], which writes it in one go:
    /// many frames in one segment, as a busy client sends them.
    pub fn batch(&mut self) {
        self.held.get_or_insert_with(Vec::new);
    }

    /// Writes what [`Client::batch`] held.
    pub fn flush(&mut self) {
        if let Some(b) = self.held.take() {
            self.send(&b);
        }
    }

    /// Sends the client preface and a SETTINGS with `settings`.
    pub fn preface(&mut self, settings: &[Setting]) {
        let mut b = PREFACE.to_vec();
        encode_settings(&mut b, false, settings);
        self.send(&b);
    }

    /// Sends raw bytes (or holds them, see [`Client::batch`]).
    pub fn send(&mut self, bytes: &[u8]) {
        if let Some(held) = &mut self.held {
            held.extend_from_slice(bytes);
            return;
        }
        // The server may have closed already; what it sent before is still readable.
        let _ = self.sock.write_all(bytes);
    }

    /// Sends one frame.
    pub fn frame(&mut self, f: Frame<'_>) {
        let mut b = Vec::new();
        encode(&f, &mut b);
        self.send(&b);
    }

    /// An HPACK block of `fields` (literals, not indexed, so the server's table is untouched).
    pub fn block(&mut self, fields: &[(&str, &str)]) -> Vec<u8> {
        let mut b = Vec::new();
        self.enc.begin_block(&mut b);
        for (n, v) in fields {
            self.enc
                .field(&mut b, n.as_bytes(), v.as_bytes(), Index::No);
        }
        b
    }

    /// Sends HEADERS with `fields` on `stream`.
    pub fn headers(&mut self, stream: u32, fields: &[(&str, &str)], end_stream: bool) {
        let block = self.block(fields);
        self.frame(Frame::Headers {
            stream,
            end_stream,
            end_headers: true,
            priority: None,
            padding: None,
            block: &block,
        });
    }

    /// Sends a GET for `path` on `stream`.
    pub fn get(&mut self, stream: u32, path: &str) {
        self.headers(stream, &request("GET", path), true);
    }

    /// Sends DATA.
    pub fn data(&mut self, stream: u32, data: &[u8], end_stream: bool) {
        self.frame(Frame::Data {
            stream,
            end_stream,
            data,
            padding: None,
        });
    }

    /// The next frame from the server (SETTINGS and PINGs included), or [`Got::Closed`] at
    /// EOF, a reset or the read timeout.
    pub fn next_frame(&mut self) -> Got {
        loop {
            if let Some(got) = self.take_frame() {
                return got;
            }
            let mut chunk = [0u8; 16 * 1024];
            match self.sock.read(&mut chunk) {
                Ok(0) | Err(_) => return Got::Closed,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
            }
        }
    }

    fn take_frame(&mut self) -> Option<Got> {
        loop {
            let (f, used) = match twelve_http::h2::decode(&self.buf, MAX_FRAME_SIZE_LIMIT) {
                Ok(Status::Complete(x)) => x,
                Ok(Status::Partial) => return None,
                Err(e) => panic!("the server sent a bad frame: {e:?}"),
            };
            let got = match f {
                Frame::Headers {
                    stream,
                    end_stream,
                    end_headers,
                    block,
                    ..
                } => {
                    let block = block.to_vec();
                    if end_headers {
                        Some(self.decode(stream, end_stream, &block))
                    } else {
                        self.block = Some((stream, end_stream, block));
                        None
                    }
                }
                Frame::Continuation {
                    end_headers, block, ..
                } => {
                    let (stream, end, mut bytes) = self.block.take().expect("CONTINUATION");
                    bytes.extend_from_slice(block);
                    if end_headers {
                        Some(self.decode(stream, end, &bytes))
                    } else {
                        self.block = Some((stream, end, bytes));
                        None
                    }
                }
                Frame::Data {
                    stream,
                    end_stream,
                    data,
                    ..
                } => Some(Got::Data {
                    stream,
                    end_stream,
                    data: data.to_vec(),
                }),
                Frame::RstStream { stream, code } => Some(Got::Reset { stream, code }),
                Frame::GoAway {
                    last_stream, code, ..
                } => Some(Got::GoAway { last_stream, code }),
                Frame::Settings { ack: true, .. } => Some(Got::SettingsAck),
                Frame::Settings { settings, .. } => Some(Got::Settings(settings.iter().collect())),
                Frame::Ping { ack, data } => Some(Got::Ping { ack, data }),
                Frame::WindowUpdate { stream, increment } => {
                    Some(Got::WindowUpdate { stream, increment })
                }
                _ => None,
            };
            self.buf.drain(..used);
            if got.is_some() {
                return got;
            }
        }
    }

    fn decode(&mut self, stream: u32, end_stream: bool, block: &[u8]) -> Got {
        let mut fields = Vec::new();
        self.dec
            .decode(block, usize::MAX, |n, v| {
                fields.push((
                    String::from_utf8_lossy(n).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                ))
            })
            .expect("the server's HPACK decodes");
        Got::Headers {
            stream,
            end_stream,
            fields,
        }
    }

    /// Reads until `stream`'s response ends (DATA or HEADERS with END_STREAM), answering
    /// nothing and skipping other streams' frames; `Err` with the frame that ended it
    /// otherwise (RST_STREAM, GOAWAY, close).
    pub fn response(&mut self, stream: u32) -> Result<Response, Got> {
        let mut r = Response {
            status: 0,
            fields: Vec::new(),
            body: Vec::new(),
        };
        loop {
            match self.next_frame() {
                Got::Headers {
                    stream: s,
                    end_stream,
                    fields,
                } if s == stream => {
                    for (n, v) in fields {
                        if n == ":status" {
                            r.status = v.parse().unwrap_or(0);
                        } else {
                            r.fields.push((n, v));
                        }
                    }
                    if end_stream {
                        return Ok(r);
                    }
                }
                Got::Data {
                    stream: s,
                    end_stream,
                    data,
                } if s == stream => {
                    r.body.extend_from_slice(&data);
                    if end_stream {
                        return Ok(r);
                    }
                }
                g @ Got::Reset { stream: s, .. } if s == stream => return Err(g),
                g @ (Got::GoAway { .. } | Got::Closed) => return Err(g),
                _ => {}
            }
        }
    }

    /// Reads until a GOAWAY (returned) or the close.
    pub fn goaway(&mut self) -> Got {
        loop {
            if let g @ (Got::GoAway { .. } | Got::Closed) = self.next_frame() {
                return g;
            }
        }
    }
}

/// The pseudo-header fields of a request for `path` on `http://a`.
pub fn request<'a>(method: &'a str, path: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        (":method", method),
        (":scheme", "http"),
        (":authority", "a"),
        (":path", path),
    ]
}
