//! The incremental chunked-body decoder (RFC 9112 §7.1): feed bytes as they arrive, get the
//! ranges of body data back, never allocate.
//!
//! ```text
//! chunked-body   = *chunk last-chunk trailer-section CRLF
//! chunk          = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
//! chunk-size     = 1*HEXDIG
//! last-chunk     = 1*("0") [ chunk-ext ] CRLF
//! chunk-ext      = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
//! trailer-section = *( field-line CRLF )
//! ```
//! Strict, like Go after CVE-2025-22871: only CRLF ends a framing line (the bare-LF allowance
//! of §2.2 does not extend to chunked framing; errata 7633 was rejected, golang/go#71988).

use std::ops::Range;

use crate::error::ParseError;
use crate::limits::Limits;
use crate::scan::{is_tchar, is_value};

/// Decodes one chunked body incrementally. Create one per body with the connection's limits.
///
/// Sizes are checked against `Limits::body_bytes` as their digits arrive (413 before any data),
/// extensions are bounded over the whole body by `Limits::chunk_extension_bytes` (413), and
/// the trailer section is parsed as field lines, bounded by `Limits::trailer_bytes` (431), and
/// then discarded: trailers never reach the header section (RFC 9110 §6.5).
#[derive(Debug, Clone)]
pub struct ChunkedDecoder {
    state: State,
    /// The chunk-size being read, or the chunk-data bytes still to come.
    size: u64,
    body_len: u64,
    extension_len: u64,
    trailer_len: usize,
    body_limit: u64,
    extension_limit: u64,
    trailer_limit: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    SizeStart,
    Size,
    SizeSpace,
    Extension,
    SizeLf,
    Data,
    DataCr,
    DataLf,
    TrailerStart,
    TrailerName,
    TrailerValue,
    TrailerLf,
    FinalLf,
    Done,
}

/// What one [`ChunkedDecoder::decode`] call did with its input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// Input bytes used (framing and data); the next call starts after them.
    pub consumed: usize,
    /// The body data found, as a range of the input (possibly empty). At most one chunk's
    /// data per call.
    pub data: Range<usize>,
    /// The last chunk and the trailer section have been read: the body is complete and the
    /// next request starts at `consumed`.
    pub done: bool,
}

impl ChunkedDecoder {
    /// A decoder for one body, bounded by `limits`.
    pub fn new(limits: &Limits) -> Self {
        ChunkedDecoder {
            state: State::SizeStart,
            size: 0,
            body_len: 0,
            extension_len: 0,
            trailer_len: 0,
            body_limit: limits.body_bytes,
            extension_limit: limits.chunk_extension_bytes,
            trailer_limit: limits.trailer_bytes,
        }
    }

    /// A decoder with no limit but u64 overflow, for the client side: a load generator reading
    /// a response measures whatever size the server sends, so the body, its extensions and its
    /// trailers are unbounded; the framing rules are the same as for requests.
    pub fn unbounded() -> Self {
        ChunkedDecoder::new(&Limits {
            body_bytes: u64::MAX,
            chunk_extension_bytes: u64::MAX,
            trailer_bytes: usize::MAX,
            ..Limits::DEFAULT
        })
    }

    /// `true` once the whole body, trailers included, has been read.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Body bytes decoded so far.
    pub fn body_len(&self) -> u64 {
        self.body_len
    }

    /// Reads framing from `input` until it reaches chunk data (returned as a range of `input`),
    /// the end of `input`, or the end of the body. Every byte given is consumed unless the
    /// body ends first, so calling again with the rest of the input always makes progress.
    pub fn decode(&mut self, input: &[u8]) -> Result<Decoded, ParseError> {
        let mut i = 0;
        while i < input.len() {
            if self.state == State::Data {
                let take = usize::try_from(self.size)
                    .unwrap_or(usize::MAX)
                    .min(input.len() - i);
                self.size -= take as u64;
                if self.size == 0 {
                    self.state = State::DataCr;
                }
                return Ok(Decoded {
                    consumed: i + take,
                    data: i..i + take,
                    done: false,
                });
            }
            if self.state == State::Done {
                break;
            }
            self.step(input[i])?;
            i += 1;
        }
        Ok(Decoded {
            consumed: i,
            data: i..i,
            done: self.state == State::Done,
        })
    }

    /// Decodes in place: moves the body data found in `buf` to its front, returning
    /// `(consumed, data_len, done)`: `buf[..data_len]` is body, `buf[consumed..]` is unread.
    pub fn decode_in_place(&mut self, buf: &mut [u8]) -> Result<(usize, usize, bool), ParseError> {
        let mut read = 0;
        let mut written = 0;
        loop {
            let d = self.decode(&buf[read..])?;
            let data = read + d.data.start..read + d.data.end;
            buf.copy_within(data.clone(), written);
            written += data.len();
            read += d.consumed;
            if d.done || d.consumed == 0 || read == buf.len() {
                return Ok((read, written, d.done));
            }
        }
    }

    /// Advances the framing state machine by one byte.
    fn step(&mut self, b: u8) -> Result<(), ParseError> {
        use State::*;
        self.state = match self.state {
            SizeStart => {
                // No sign, no `0x`, no leading whitespace, not empty.
                let d = hex(b).ok_or(ParseError::InvalidChunkSize)?;
                self.size = d;
                self.check_size()?;
                Size
            }
            Size => match (b, hex(b)) {
                (_, Some(d)) => {
                    // §7.1: anticipate large hex numerals; never wrap or truncate.
                    if self.size > u64::MAX >> 4 {
                        return Err(ParseError::ChunkSizeOverflow);
                    }
                    self.size = self.size << 4 | d;
                    self.check_size()?;
                    Size
                }
                (b';', _) => self.extension_byte(Extension)?,
                // BWS is allowed only before a `;` (chunk-ext); `5 \r\n` is an error.
                (b' ' | b'\t', _) => self.extension_byte(SizeSpace)?,
                (b'\r', _) => SizeLf,
                (b'\n', _) => return Err(ParseError::BareLf),
                _ => return Err(ParseError::InvalidChunkSize),
            },
            SizeSpace => match b {
                b' ' | b'\t' => self.extension_byte(SizeSpace)?,
                b';' => self.extension_byte(Extension)?,
                _ => return Err(ParseError::InvalidChunkSize),
            },
            Extension => match b {
                b'\r' => SizeLf,
                b'\n' => return Err(ParseError::BareLf),
                // Extensions are ignored but bounded (§7.1.1); CTLs and NUL are never valid.
                _ if is_value(b) => self.extension_byte(Extension)?,
                _ => return Err(ParseError::InvalidChunkExtension),
            },
            SizeLf => {
                if b != b'\n' {
                    return Err(ParseError::BareCr);
                }
                if self.size == 0 {
                    TrailerStart
                } else {
                    self.body_len += self.size;
                    Data
                }
            }
            Data | Done => unreachable_state()?,
            DataCr => match b {
                b'\r' => DataLf,
                b'\n' => return Err(ParseError::BareLf),
                _ => return Err(ParseError::InvalidChunkDelimiter),
            },
            DataLf => match b {
                b'\n' => SizeStart,
                _ => return Err(ParseError::InvalidChunkDelimiter),
            },
            TrailerStart => match b {
                b'\r' => FinalLf,
                b'\n' => return Err(ParseError::BareLf),
                _ if is_tchar(b) => self.trailer_byte(TrailerName)?,
                _ => return Err(ParseError::InvalidTrailer),
            },
            TrailerName => match b {
                b':' => self.trailer_byte(TrailerValue)?,
                _ if is_tchar(b) => self.trailer_byte(TrailerName)?,
                _ => return Err(ParseError::InvalidTrailer),
            },
            TrailerValue => match b {
                b'\r' => TrailerLf,
                b'\n' => return Err(ParseError::BareLf),
                _ if is_value(b) => self.trailer_byte(TrailerValue)?,
                _ => return Err(ParseError::InvalidTrailer),
            },
            TrailerLf => match b {
                b'\n' => TrailerStart,
                _ => return Err(ParseError::BareCr),
            },
            FinalLf => match b {
                b'\n' => Done,
                _ => return Err(ParseError::BareCr),
            },
        };
        Ok(())
    }

    /// The body limit applies to declared sizes, so an oversized chunk is refused before
    /// its data is read (413).
    fn check_size(&self) -> Result<(), ParseError> {
        if self.size > self.body_limit.saturating_sub(self.body_len) {
            return Err(ParseError::BodyTooLarge);
        }
        Ok(())
    }

    fn extension_byte(&mut self, next: State) -> Result<State, ParseError> {
        self.extension_len += 1;
        if self.extension_len > self.extension_limit {
            return Err(ParseError::ChunkExtensionsTooLong);
        }
        Ok(next)
    }

    fn trailer_byte(&mut self, next: State) -> Result<State, ParseError> {
        self.trailer_len += 1;
        if self.trailer_len > self.trailer_limit {
            return Err(ParseError::TrailersTooLarge);
        }
        Ok(next)
    }
}

/// `decode` handles `Data` and `Done` before stepping; reaching here is a decoder bug, reported
/// as an error rather than a panic.
fn unreachable_state() -> Result<State, ParseError> {
    debug_assert!(false, "chunked decoder stepped in a data or done state");
    Err(ParseError::InvalidChunkSize)
}

/// `HEXDIG` to its value, widened for the chunk-size accumulator.
fn hex(b: u8) -> Option<u64> {
    crate::scan::hex_digit(b).map(u64::from)
}

/// Decodes a chunked body that has arrived whole: its data into `body` (cleared first), and
/// how many bytes of `input` the body took, framing and trailers included. `None` when the
/// body is not complete in `input` or its framing is in error: the caller then decodes it
/// incrementally with a [`ChunkedDecoder`], which reports the error. A server answers a body
/// that came with its head (the common case) this way from one reusable buffer, with no
/// decoder state kept between reads.
pub fn decode_whole(input: &[u8], limits: &Limits, body: &mut Vec<u8>) -> Option<usize> {
    let mut decoder = ChunkedDecoder::new(limits);
    body.clear();
    let mut used = 0;
    while used < input.len() {
        let d = decoder.decode(&input[used..]).ok()?;
        body.extend_from_slice(&input[used + d.data.start..used + d.data.end]);
        used += d.consumed;
        if d.done {
            return Some(used);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! decodes {
        ($($name:ident: $input:expr => $data:expr, $consumed:expr, $done:expr;)*) => {$(
            #[test]
            fn $name() {
                let mut buf = $input.to_vec();
                let mut decoder = ChunkedDecoder::new(&Limits::DEFAULT);
                let (consumed, len, done) = decoder.decode_in_place(&mut buf).unwrap();
                assert_eq!((&buf[..len], consumed, done), (&$data[..], $consumed, $done));
            }
        )*};
    }

    decodes! {
        one_chunk_then_next_request: b"3\r\nabc\r\n0\r\n\r\nGET" => b"abc", 13, true;
        partial_size_line_is_consumed: b"1" => b"", 1, false;
        partial_data: b"5\r\nhel" => b"hel", 6, false;
        data_complete_delimiter_pending: b"5\r\nhello\r" => b"hello", 9, false;
        extension_with_bws: b"1 ; a = \"b\"\r\nx\r\n0\r\n\r\n" => b"x", 21, true;
        trailers_are_not_data: b"0\r\nA: 1\r\nB: 2\r\n\r\n" => b"", 17, true;
    }

    #[test]
    fn decode_returns_at_most_one_chunk_of_data_per_call() {
        let mut decoder = ChunkedDecoder::new(&Limits::DEFAULT);
        let input = b"1\r\na\r\n1\r\nb\r\n0\r\n\r\n";
        let d = decoder.decode(input).unwrap();
        assert_eq!((d.consumed, d.data, d.done), (4, 3..4, false));
        let d = decoder.decode(&input[4..]).unwrap();
        assert_eq!((d.consumed, d.data, d.done), (6, 5..6, false));
        assert_eq!(decoder.body_len(), 2);
    }

    /// `decode_whole` gives the body and its length only for a whole, valid body; the next
    /// request's bytes are never taken.
    macro_rules! whole {
        ($($name:ident: $input:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                let mut body = b"stale".to_vec();
                let got = decode_whole($input, &Limits::DEFAULT, &mut body);
                let want: Option<(&[u8], usize)> = $want;
                assert_eq!(got.map(|n| (&body[..], n)), want);
            }
        )*};
    }

    whole! {
        whole_one_chunk_then_next_request: b"3\r\nabc\r\n0\r\n\r\nGET / HTTP/1.1" => Some((b"abc", 13));
        whole_two_chunks: b"1\r\na\r\n2\r\nbc\r\n0\r\n\r\n" => Some((b"abc", 18));
        whole_empty_body: b"0\r\n\r\n" => Some((b"", 5));
        whole_with_trailers: b"2\r\nhi\r\n0\r\nA: 1\r\n\r\n" => Some((b"hi", 18));
        whole_missing_final_crlf: b"2\r\nhi\r\n0\r\n" => None;
        whole_partial_data: b"5\r\nhel" => None;
        whole_nothing_yet: b"" => None;
        whole_bad_size: b"zz\r\n" => None;
        whole_bare_lf: b"2\nhi\r\n0\r\n\r\n" => None;
        whole_size_over_the_limit: b"ffffffffffffffff\r\n" => None;
    }

    #[test]
    fn nothing_is_consumed_after_the_body() {
        let mut decoder = ChunkedDecoder::new(&Limits::DEFAULT);
        assert!(decoder.decode(b"0\r\n\r\n").unwrap().done);
        let d = decoder.decode(b"more").unwrap();
        assert_eq!((d.consumed, d.done), (0, true));
    }
}
