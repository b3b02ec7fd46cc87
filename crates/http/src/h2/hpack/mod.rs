//! HPACK (RFC 7541), sans-I/O: a [`Decoder`] that turns one whole header block into fields
//! borrowed from the block or the dynamic table, and an [`Encoder`] that writes response heads
//! with the static and dynamic tables and the Huffman code.
//! <https://www.rfc-editor.org/rfc/rfc7541.html>
//!
//! Both keep no heap memory until their dynamic table first gets an entry, so an idle
//! connection costs only the structs.

mod decoder;
mod encoder;
mod huffman;
mod table;

pub use decoder::Decoder;
pub use encoder::{ENCODER_MAX_TABLE_SIZE, Encoder};

use super::ErrorCode;
use std::fmt;

/// What a header block decoded to; either way the dynamic table is up to date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoded {
    /// Every field was emitted.
    Fields,
    /// The decoded list passed the size limit (RFC 9113 §6.5.2): fields were emitted up to the
    /// one that crossed it. The request gets a 431 or a stream error, the connection lives on.
    TooLarge,
}

/// How the [`Encoder`] may index a field (RFC 7541 §6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Index {
    /// Add it to the dynamic table, so that a repeat costs one octet (§6.2.1).
    Incremental,
    /// Leave the table alone: for values that change every time (§6.2.2).
    No,
    /// Never index, here or at any intermediary: for sensitive values (§6.2.3, §7.1.3).
    Never,
}

/// A header block that cannot be decoded: a connection error of type COMPRESSION_ERROR
/// (RFC 9113 §4.3), one kind per rule, counted by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HpackError {
    /// Index 0 (§6.1).
    IndexZero,
    /// An index past the static and dynamic tables (§2.3.3).
    IndexOutOfRange,
    /// An integer above 2^32-1 (§5.1).
    IntegerOverflow,
    /// The block ends inside an integer (§5.1).
    TruncatedInteger,
    /// A string longer than the rest of the block (§5.2).
    TruncatedString,
    /// A Huffman string holding EOS (§5.2).
    HuffmanEos,
    /// Huffman padding longer than 7 bits (§5.2).
    HuffmanPaddingTooLong,
    /// Huffman padding that is not the start of EOS, all ones (§5.2).
    HuffmanPaddingNotOnes,
    /// A dynamic table size update above our SETTINGS_HEADER_TABLE_SIZE (§6.3).
    SizeUpdateTooLarge,
    /// A dynamic table size update after a field of the block (§4.2).
    SizeUpdateNotFirst,
    /// The first block after our SETTINGS_HEADER_TABLE_SIZE went below the table's size does
    /// not open with a size update (§4.2).
    SizeUpdateMissing,
}

impl HpackError {
    /// How many variants there are: the size of a per-variant counter array.
    pub const COUNT: usize = 11;

    /// Every variant, in declaration order (`ALL[e.index()] == e`), for reporting counters.
    pub const ALL: [HpackError; HpackError::COUNT] = [
        HpackError::IndexZero,
        HpackError::IndexOutOfRange,
        HpackError::IntegerOverflow,
        HpackError::TruncatedInteger,
        HpackError::TruncatedString,
        HpackError::HuffmanEos,
        HpackError::HuffmanPaddingTooLong,
        HpackError::HuffmanPaddingNotOnes,
        HpackError::SizeUpdateTooLarge,
        HpackError::SizeUpdateNotFirst,
        HpackError::SizeUpdateMissing,
    ];

    /// A dense index in `0..COUNT`, for per-variant counters on the hot path.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The error code to send in GOAWAY: always COMPRESSION_ERROR (RFC 9113 §4.3).
    pub const fn code(self) -> ErrorCode {
        ErrorCode::CompressionError
    }
}

impl fmt::Display for HpackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HpackError::IndexZero => "HPACK index 0 (RFC 7541 §6.1)",
            HpackError::IndexOutOfRange => "HPACK index past the static and dynamic tables",
            HpackError::IntegerOverflow => "HPACK integer above 2^32-1",
            HpackError::TruncatedInteger => "header block ends inside an HPACK integer",
            HpackError::TruncatedString => "HPACK string longer than the rest of the block",
            HpackError::HuffmanEos => "Huffman string holds EOS (RFC 7541 §5.2)",
            HpackError::HuffmanPaddingTooLong => "Huffman padding longer than 7 bits",
            HpackError::HuffmanPaddingNotOnes => "Huffman padding is not all ones",
            HpackError::SizeUpdateTooLarge => {
                "dynamic table size update above SETTINGS_HEADER_TABLE_SIZE"
            }
            HpackError::SizeUpdateNotFirst => "dynamic table size update after a field",
            HpackError::SizeUpdateMissing => {
                "no dynamic table size update after SETTINGS_HEADER_TABLE_SIZE was lowered"
            }
        })
    }
}

impl std::error::Error for HpackError {}

/// The overhead the RFC adds to each entry's name and value lengths (§4.1), also used for the
/// header list size (RFC 9113 §6.5.2).
pub(crate) const ENTRY_OVERHEAD: usize = 32;

/// Reads an integer with an `prefix`-bit prefix whose first octet is `block[*pos]` (§5.1),
/// leaving `pos` after it.
fn read_int(block: &[u8], pos: &mut usize, prefix: u32) -> Result<usize, HpackError> {
    let max_prefix = ((1u16 << prefix) - 1) as u8;
    let first = block[*pos] & max_prefix;
    *pos += 1;
    if first < max_prefix {
        return Ok(usize::from(first));
    }
    let mut value = u64::from(max_prefix);
    let mut shift = 0;
    loop {
        let Some(&b) = block.get(*pos) else {
            return Err(HpackError::TruncatedInteger);
        };
        *pos += 1;
        value += u64::from(b & 0x7f) << shift;
        if value > u64::from(u32::MAX) {
            return Err(HpackError::IntegerOverflow);
        }
        if b & 0x80 == 0 {
            return Ok(value as usize);
        }
        shift += 7;
        // Zero-valued continuation octets add nothing: past 2^32 they are an overflow too,
        // which bounds the work on a run of 0x80.
        if shift > 28 {
            return Err(HpackError::IntegerOverflow);
        }
    }
}

/// Appends `value` with an `prefix`-bit prefix; `flags` holds the representation's bits above
/// the prefix (§5.1).
#[inline]
fn write_int(out: &mut Vec<u8>, flags: u8, prefix: u32, value: usize) {
    let max_prefix = (1usize << prefix) - 1;
    if value < max_prefix {
        out.push(flags | value as u8);
        return;
    }
    out.push(flags | max_prefix as u8);
    let mut rest = value - max_prefix;
    while rest >= 0x80 {
        out.push((rest & 0x7f) as u8 | 0x80);
        rest >>= 7;
    }
    out.push(rest as u8);
}

#[cfg(test)]
mod tests;
