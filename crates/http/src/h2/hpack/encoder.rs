//! The HPACK encoder (RFC 7541 §6) for response heads: static-table hits, a dynamic table for
//! fields repeated across responses, and Huffman strings when they are shorter.
//!
//! Finding a field in the dynamic table must not scan it: two small two-way caches map a hash
//! of (name, value) and of a name to the entry's absolute insert number, and a hit is
//! confirmed by one compare. A miss (a collision evicted it, or the entry is gone) only costs
//! a literal where an index would have done.

use super::table::{Dynamic, Name, static_field, static_name};
use super::{Index, huffman, write_int};

/// The largest dynamic table we keep, whatever the peer allows: a server's repeated response
/// fields (server, date, content-type, cache-control, a few custom ones) fit in a fraction of
/// it, 4096 is what every decoder starts with, and a larger table would cost memory on every
/// connection for no gain.
pub const ENCODER_MAX_TABLE_SIZE: usize = 4096;

/// Slots of each cache: 64, addressed by 6 bits of the hash.
const CACHE_BITS: u32 = 6;
const CACHE_SLOTS: usize = 1 << CACHE_BITS;

/// Encodes the header blocks of one connection, keeping the dynamic table that the peer's
/// decoder mirrors.
#[derive(Debug)]
pub struct Encoder {
    table: Dynamic,
    /// A size update owed at the start of the next block: the smallest size since the last
    /// block, and the latest (§4.2).
    pending: Option<(usize, usize)>,
    huffman: bool,
    /// Hash of (name, value) → the low 16 bits of the entry's absolute insert number, plus 1
    /// (0: empty). The table holds far fewer than 2^16 entries, so the number of a live entry
    /// is unambiguous; a stale one that aliases a live entry is caught by the compare.
    fields: [u16; CACHE_SLOTS],
    /// The same for names absent from the static table.
    names: [u16; CACHE_SLOTS],
    /// Counts the changes to what a block encodes to: inserts, size updates, the Huffman
    /// switch. Equal numbers mean the same fields encode to the same octets.
    generation: u64,
}

impl Default for Encoder {
    fn default() -> Self {
        Encoder::new()
    }
}

impl Encoder {
    /// An encoder with the peer's initial table size, 4096 (RFC 9113 §6.5.2).
    pub fn new() -> Self {
        Encoder::with_table_size(ENCODER_MAX_TABLE_SIZE)
    }

    /// An encoder whose table starts at `size` octets with no size update sent: what both
    /// sides assume before SETTINGS, and what the RFC's examples assume.
    pub(crate) fn with_table_size(size: usize) -> Self {
        Encoder {
            table: Dynamic::new(size),
            pending: None,
            huffman: true,
            fields: [0; CACHE_SLOTS],
            names: [0; CACHE_SLOTS],
            generation: 0,
        }
    }

    /// A number that changes whenever the same fields could encode differently (the dynamic
    /// table or the encoder's settings changed): a caller may keep a block it encoded and send
    /// its octets again while this number stays the same. It never repeats for one encoder.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The dynamic table, for tests that check it mirrors the decoder's.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn table(&self) -> &Dynamic {
        &self.table
    }

    /// Whether strings may be Huffman-coded (when shorter; on by default).
    pub fn set_huffman(&mut self, on: bool) {
        self.huffman = on;
        self.generation += 1;
    }

    /// The peer's SETTINGS_HEADER_TABLE_SIZE changed. We use it, capped at
    /// [`ENCODER_MAX_TABLE_SIZE`]; when that changes our table's size, the next block opens
    /// with a size update (with the smallest size of the interval first if it went lower,
    /// RFC 7541 §4.2).
    pub fn set_max_table_size(&mut self, size: usize) {
        let size = size.min(ENCODER_MAX_TABLE_SIZE);
        self.pending = match self.pending {
            Some((low, _)) => Some((low.min(size), size)),
            None if size != self.table.max_size() => Some((size, size)),
            None => None,
        };
    }

    /// Starts a header block: writes the size update owed, if any. Call it first for every
    /// block.
    pub fn begin_block(&mut self, out: &mut Vec<u8>) {
        if let Some((low, last)) = self.pending.take() {
            self.generation += 1;
            if low < last {
                write_int(out, 0x20, 5, low);
                self.table.set_max_size(low);
            }
            write_int(out, 0x20, 5, last);
            self.table.set_max_size(last);
        }
    }

    /// Writes `:status`: one octet for the seven codes of the static table, else a literal
    /// indexed for the next response with the same code.
    pub fn status(&mut self, out: &mut Vec<u8>, status: u16) {
        let index = match status {
            200 => 8,
            204 => 9,
            206 => 10,
            304 => 11,
            400 => 12,
            404 => 13,
            500 => 14,
            _ => {
                let mut digits = itoa::Buffer::new();
                let digits = digits.format(status).as_bytes();
                return self.field(out, b":status", digits, Index::Incremental);
            }
        };
        out.push(0x80 | index);
    }

    /// Appends one field. With [`Index::Incremental`], a field found whole in the dynamic
    /// table or the static table becomes an index, and otherwise a literal that enters the
    /// dynamic table. With [`Index::No`] only the static table is searched for the whole field;
    /// with [`Index::Never`] neither. Literals reuse a table's name when they can. Names must
    /// be lowercase (RFC 9113 §8.2.1).
    pub fn field(&mut self, out: &mut Vec<u8>, name: &[u8], value: &[u8], how: Index) {
        // The dynamic table first: a repeated field costs a hash and a compare, not the
        // static name lookup. Fields not to be indexed are not looked for there: their values
        // change (or must not be shared), so they would not be found.
        let field_hash = if how == Index::Incremental {
            hash(hash(SEED, name), value)
        } else {
            0
        };
        if how == Index::Incremental
            && self.table.len() > 0
            && let Some(i) = self.find(&self.fields, field_hash, name, Some(value))
        {
            write_int(out, 0x80, 7, 62 + i);
            return;
        }
        let static_name = static_name(name);
        if how != Index::Never
            && let Some(i) = static_name.and_then(|n| static_field(n, value))
        {
            write_int(out, 0x80, 7, i);
            return;
        }
        let name_hash = if static_name.is_none() {
            hash(SEED, name)
        } else {
            0
        };
        let name_index = static_name.or_else(|| {
            self.find(&self.names, name_hash, name, None)
                .map(|i| 62 + i)
        });
        let (flags, prefix) = match how {
            Index::Incremental => (0x40, 6),
            Index::No => (0x00, 4),
            Index::Never => (0x10, 4),
        };
        write_int(out, flags, prefix, name_index.unwrap_or(0));
        if name_index.is_none() {
            self.string(out, name);
        }
        self.string(out, value);
        if how == Index::Incremental {
            // Even a failed insert (an entry larger than the table) empties the table.
            self.generation += 1;
        }
        if how == Index::Incremental && self.table.insert(Name::Bytes(name), value) {
            remember(&mut self.fields, &self.table, field_hash);
            if static_name.is_none() {
                remember(&mut self.names, &self.table, name_hash);
            }
        }
    }

    /// The dynamic index (0 = newest) of the entry cached under `h` that has this name (and
    /// value, if given).
    fn find(
        &self,
        cache: &[u16; CACHE_SLOTS],
        h: u64,
        name: &[u8],
        value: Option<&[u8]>,
    ) -> Option<usize> {
        slots(h).into_iter().find_map(|s| {
            let i = live(&self.table, cache[s])?;
            let (n, v) = self.table.get(i)?;
            (n == name && value.is_none_or(|value| v == value)).then_some(i)
        })
    }

    /// Writes a string literal (§5.2), Huffman-coded when that is shorter.
    fn string(&self, out: &mut Vec<u8>, s: &[u8]) {
        if self.huffman {
            let len = huffman::encoded_len(s);
            if len < s.len() {
                write_int(out, 0x80, 7, len);
                huffman::encode(s, out);
                return;
            }
        }
        write_int(out, 0, 7, s.len());
        out.extend_from_slice(s);
    }
}

const SEED: u64 = 0x243f_6a88_85a3_08d3;

/// A fast non-cryptographic hash (FxHash's multiply-rotate over 8-octet words): the caches
/// only need spread, and a collision costs a compare.
fn hash(mut h: u64, bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let word = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h.rotate_left(5) ^ word).wrapping_mul(K);
    }
    for &b in chunks.remainder() {
        h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
    }
    (h.rotate_left(5) ^ bytes.len() as u64).wrapping_mul(K)
}

/// The two slots a hash may use.
fn slots(h: u64) -> [usize; 2] {
    let mask = CACHE_SLOTS as u64 - 1;
    [
        (h >> (64 - CACHE_BITS)) as usize,
        ((h >> (64 - 2 * CACHE_BITS)) & mask) as usize,
    ]
}

/// The dynamic index (0 = newest) of a cache slot's entry, if it is still in the table.
fn live(table: &Dynamic, abs_plus_1: u16) -> Option<usize> {
    let newest = table.newest()? as u16;
    let back = newest.wrapping_sub(abs_plus_1.checked_sub(1)?) as usize;
    (back < table.len()).then_some(back)
}

/// Caches the newest entry under `h`: in a slot that is empty or whose entry is gone, else in
/// place of the older of the two.
fn remember(cache: &mut [u16; CACHE_SLOTS], table: &Dynamic, h: u64) {
    let Some(newest) = table.newest() else {
        return;
    };
    let [a, b] = slots(h);
    let age = |s: usize| live(table, cache[s]).unwrap_or(usize::MAX);
    let s = if age(a) >= age(b) { a } else { b };
    cache[s] = (newest as u16).wrapping_add(1);
}
