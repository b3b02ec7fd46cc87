//! The HPACK decoder (RFC 7541 §3, §6): one whole header block in, fields out through a
//! callback, borrowed from the block, the dynamic table or a scratch buffer for Huffman
//! strings, so a request made of indexed fields decodes without allocating.

use super::table::{Dynamic, Name, STATIC};
use super::{Decoded, ENTRY_OVERHEAD, HpackError, huffman, read_int};

/// Decodes the header blocks of one connection's peer, keeping its dynamic table.
#[derive(Debug)]
pub struct Decoder {
    table: Dynamic,
    /// Huffman-decoded name and value of the field being decoded.
    scratch: Vec<u8>,
    /// The SETTINGS_HEADER_TABLE_SIZE we advertise: the most a size update may ask for.
    max_setting: usize,
    /// Our setting went below the table's size: the next block must open with a size update.
    update_due: bool,
    /// Counts the changes to how a block decodes: inserts, size updates, our setting.
    generation: u64,
}

/// Where a string literal is: in the block or in the scratch buffer.
#[derive(Clone, Copy)]
enum Src {
    Static(&'static [u8]),
    Block(usize, usize),
    Scratch(usize, usize),
}

impl Src {
    fn get<'a>(self, block: &'a [u8], scratch: &'a [u8]) -> &'a [u8] {
        match self {
            Src::Static(s) => s,
            Src::Block(a, b) => &block[a..b],
            Src::Scratch(a, b) => &scratch[a..b],
        }
    }
}

impl Decoder {
    /// A decoder for a connection on which we advertise `max_table_size` as
    /// SETTINGS_HEADER_TABLE_SIZE (4096 unless we send another value). The peer's table starts
    /// at that size (RFC 9113 §6.5.2 makes 4096 the initial value, and a peer may only rely on
    /// another once our SETTINGS are acknowledged: advertise 4096 or call
    /// [`Decoder::set_max_table_size`] at the ACK).
    pub fn new(max_table_size: usize) -> Self {
        Decoder {
            table: Dynamic::new(max_table_size),
            scratch: Vec::new(),
            max_setting: max_table_size,
            update_due: false,
            generation: 0,
        }
    }

    /// A number that changes whenever the same block could decode differently (the dynamic
    /// table or our table size setting changed): while it stays the same, a block of the same
    /// octets as one decoded before gives the same fields and the same result. It never
    /// repeats for one decoder.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Our SETTINGS_HEADER_TABLE_SIZE changed and the peer acknowledged it. A value below the
    /// table's current size requires the peer to open its next block with a size update
    /// (RFC 7541 §4.2).
    pub fn set_max_table_size(&mut self, size: usize) {
        self.max_setting = size;
        self.generation += 1;
        if size < self.table.max_size() {
            self.update_due = true;
        }
    }

    /// The dynamic table's size in the RFC's measure (§4.1).
    pub fn table_size(&self) -> usize {
        self.table.size()
    }

    /// The dynamic table's maximum size, as last set by the peer's size update.
    pub fn table_max_size(&self) -> usize {
        self.table.max_size()
    }

    /// How many entries the dynamic table holds.
    pub fn table_len(&self) -> usize {
        self.table.len()
    }

    /// The dynamic table's entry `i` (0 = newest), name and value.
    pub fn table_entry(&self, i: usize) -> Option<(&[u8], &[u8])> {
        self.table.get(i)
    }

    /// The heap bytes held by the scratch buffer.
    #[cfg(test)]
    pub(crate) fn scratch_capacity(&self) -> usize {
        self.scratch.capacity()
    }

    /// The heap bytes held by the dynamic table.
    #[cfg(test)]
    pub(crate) fn table_capacity(&self) -> usize {
        self.table.capacity()
    }

    /// Decodes one whole header block (the HEADERS and CONTINUATION fragments joined), calling
    /// `emit(name, value)` for each field in order.
    ///
    /// When the header list (the sum of name + value + 32 per field, RFC 9113 §6.5.2) passes
    /// `max_list_size`, `emit` is no longer called from the field that crossed it on, and the
    /// rest of the block is still decoded so the dynamic table stays in step with the peer's
    /// (RFC 9113 §4.3); the result is then [`Decoded::TooLarge`]. A field that is not emitted
    /// costs only its own octets (an HPACK bomb of one-octet references to a large entry stays
    /// cheap), except that an indexed literal naming a dynamic entry copies that name into the
    /// new entry, as every decoder must.
    ///
    /// An error is a connection error of type COMPRESSION_ERROR; the table is then unusable.
    pub fn decode(
        &mut self,
        block: &[u8],
        max_list_size: usize,
        mut emit: impl FnMut(&[u8], &[u8]),
    ) -> Result<Decoded, HpackError> {
        let Decoder {
            table,
            scratch,
            max_setting,
            update_due,
            generation,
        } = self;
        let mut list_size = 0usize;
        let mut emitting = true;
        let mut pos = 0;
        // Dynamic table size updates, 001xxxxx (§6.3), open the block and nowhere else (§4.2).
        while let Some(&b) = block.get(pos)
            && b & 0xe0 == 0x20
        {
            let size = read_int(block, &mut pos, 5)?;
            if size > *max_setting {
                return Err(HpackError::SizeUpdateTooLarge);
            }
            table.set_max_size(size);
            *update_due = false;
            *generation += 1;
        }
        if *update_due && pos < block.len() {
            return Err(HpackError::SizeUpdateMissing);
        }
        while pos < block.len() {
            let b = block[pos];
            if b & 0x80 != 0 {
                // Indexed field, 1xxxxxxx (§6.1); indexes below 127 fit the first octet.
                let index = if b != 0xff {
                    pos += 1;
                    usize::from(b & 0x7f)
                } else {
                    read_int(block, &mut pos, 7)?
                };
                let (name, value) = lookup(table, index)?;
                if emitting {
                    list_size += name.len() + value.len() + ENTRY_OVERHEAD;
                    emitting = list_size <= max_list_size;
                    if emitting {
                        emit(name, value);
                    }
                }
                continue;
            }
            if b & 0xe0 == 0x20 {
                return Err(HpackError::SizeUpdateNotFirst);
            }
            // Literal with incremental indexing, 01xxxxxx (§6.2.1); without indexing,
            // 0000xxxx (§6.2.2); never indexed, 0001xxxx (§6.2.3).
            let incremental = b & 0x40 != 0;
            let index = read_int(block, &mut pos, if incremental { 6 } else { 4 })?;
            scratch.clear();
            // The name: a literal, or a dynamic index (0 = newest).
            let name = match index {
                0 => Ok(string(block, &mut pos, scratch)?),
                1..=61 => Ok(Src::Static(STATIC[index - 1].0)),
                _ => {
                    lookup(table, index)?;
                    Err(index - 62)
                }
            };
            let value = string(block, &mut pos, scratch)?.get(block, scratch);
            if emitting {
                let name = match name {
                    Ok(src) => src.get(block, scratch),
                    Err(i) => table.get(i).map_or(&[][..], |(name, _)| name),
                };
                list_size += name.len() + value.len() + ENTRY_OVERHEAD;
                emitting = list_size <= max_list_size;
                if emitting {
                    // Before the insert, which may evict the entry the name comes from.
                    emit(name, value);
                }
            }
            if incremental {
                let name = match name {
                    Ok(src) => Name::Bytes(src.get(block, scratch)),
                    Err(i) => Name::Entry(i),
                };
                table.insert(name, value);
                *generation += 1;
            }
        }
        if scratch.capacity() > SCRATCH_KEEP {
            // One huge literal must not pin its buffer for the connection's life.
            *scratch = Vec::new();
        }
        Ok(if emitting {
            Decoded::Fields
        } else {
            Decoded::TooLarge
        })
    }
}

/// The scratch capacity kept between blocks: Huffman strings of ordinary fields fit.
const SCRATCH_KEEP: usize = 4096;

/// The field at `index` of the static and dynamic tables (§2.3.3).
#[inline]
fn lookup(table: &Dynamic, index: usize) -> Result<(&[u8], &[u8]), HpackError> {
    match index {
        0 => Err(HpackError::IndexZero),
        1..=61 => Ok(STATIC[index - 1]),
        _ => table.get(index - 62).ok_or(HpackError::IndexOutOfRange),
    }
}

/// Reads a string literal (§5.2) at `pos`: raw bytes stay in the block, Huffman ones are
/// decoded onto the end of `scratch`.
fn string(block: &[u8], pos: &mut usize, scratch: &mut Vec<u8>) -> Result<Src, HpackError> {
    let Some(&b) = block.get(*pos) else {
        return Err(HpackError::TruncatedString);
    };
    let len = read_int(block, pos, 7)?;
    let start = *pos;
    let end = start
        .checked_add(len)
        .filter(|&end| end <= block.len())
        .ok_or(HpackError::TruncatedString)?;
    *pos = end;
    if b & 0x80 == 0 {
        return Ok(Src::Block(start, end));
    }
    let at = scratch.len();
    huffman::decode(&block[start..end], scratch)?;
    Ok(Src::Scratch(at, scratch.len()))
}
