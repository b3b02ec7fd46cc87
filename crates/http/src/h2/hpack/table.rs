//! The HPACK static table (RFC 7541 Appendix A) and the dynamic table (§2.3.2, §4) that the
//! encoder and the decoder keep in step.
//!
//! The dynamic table keeps entry bytes in one buffer and entry bounds in one array, oldest
//! first, and evicts by moving offsets; the live part moves to the front only when the buffer
//! would otherwise grow past 1.5 times the table size (or 64 evicted slots pile up), so an
//! insert costs its own bytes plus amortised O(1) per byte, and no allocation once the buffers
//! have grown.

use super::ENTRY_OVERHEAD;

/// The static table, index 1 first (Appendix A).
pub(crate) const STATIC: [(&[u8], &[u8]); 61] = [
    (b":authority", b""),
    (b":method", b"GET"),
    (b":method", b"POST"),
    (b":path", b"/"),
    (b":path", b"/index.html"),
    (b":scheme", b"http"),
    (b":scheme", b"https"),
    (b":status", b"200"),
    (b":status", b"204"),
    (b":status", b"206"),
    (b":status", b"304"),
    (b":status", b"400"),
    (b":status", b"404"),
    (b":status", b"500"),
    (b"accept-charset", b""),
    (b"accept-encoding", b"gzip, deflate"),
    (b"accept-language", b""),
    (b"accept-ranges", b""),
    (b"accept", b""),
    (b"access-control-allow-origin", b""),
    (b"age", b""),
    (b"allow", b""),
    (b"authorization", b""),
    (b"cache-control", b""),
    (b"content-disposition", b""),
    (b"content-encoding", b""),
    (b"content-language", b""),
    (b"content-length", b""),
    (b"content-location", b""),
    (b"content-range", b""),
    (b"content-type", b""),
    (b"cookie", b""),
    (b"date", b""),
    (b"etag", b""),
    (b"expect", b""),
    (b"expires", b""),
    (b"from", b""),
    (b"host", b""),
    (b"if-match", b""),
    (b"if-modified-since", b""),
    (b"if-none-match", b""),
    (b"if-range", b""),
    (b"if-unmodified-since", b""),
    (b"last-modified", b""),
    (b"link", b""),
    (b"location", b""),
    (b"max-forwards", b""),
    (b"proxy-authenticate", b""),
    (b"proxy-authorization", b""),
    (b"range", b""),
    (b"referer", b""),
    (b"refresh", b""),
    (b"retry-after", b""),
    (b"server", b""),
    (b"set-cookie", b""),
    (b"strict-transport-security", b""),
    (b"transfer-encoding", b""),
    (b"user-agent", b""),
    (b"vary", b""),
    (b"via", b""),
    (b"www-authenticate", b""),
];

/// The static index of the first entry named `name`, for the encoder. A `match` on the bytes
/// compiles to a length switch and a few compares, no table scan.
pub(crate) fn static_name(name: &[u8]) -> Option<usize> {
    Some(match name {
        b":authority" => 1,
        b":method" => 2,
        b":path" => 4,
        b":scheme" => 6,
        b":status" => 8,
        b"accept-charset" => 15,
        b"accept-encoding" => 16,
        b"accept-language" => 17,
        b"accept-ranges" => 18,
        b"accept" => 19,
        b"access-control-allow-origin" => 20,
        b"age" => 21,
        b"allow" => 22,
        b"authorization" => 23,
        b"cache-control" => 24,
        b"content-disposition" => 25,
        b"content-encoding" => 26,
        b"content-language" => 27,
        b"content-length" => 28,
        b"content-location" => 29,
        b"content-range" => 30,
        b"content-type" => 31,
        b"cookie" => 32,
        b"date" => 33,
        b"etag" => 34,
        b"expect" => 35,
        b"expires" => 36,
        b"from" => 37,
        b"host" => 38,
        b"if-match" => 39,
        b"if-modified-since" => 40,
        b"if-none-match" => 41,
        b"if-range" => 42,
        b"if-unmodified-since" => 43,
        b"last-modified" => 44,
        b"link" => 45,
        b"location" => 46,
        b"max-forwards" => 47,
        b"proxy-authenticate" => 48,
        b"proxy-authorization" => 49,
        b"range" => 50,
        b"referer" => 51,
        b"refresh" => 52,
        b"retry-after" => 53,
        b"server" => 54,
        b"set-cookie" => 55,
        b"strict-transport-security" => 56,
        b"transfer-encoding" => 57,
        b"user-agent" => 58,
        b"vary" => 59,
        b"via" => 60,
        b"www-authenticate" => 61,
        _ => return None,
    })
}

/// The static index of the entry (`STATIC[name_index - 1].0`, `value`), if there is one.
pub(crate) fn static_field(name_index: usize, value: &[u8]) -> Option<usize> {
    // Entries sharing a name are consecutive, and only those of the first 16 carry a value.
    let mut i = name_index;
    while i <= STATIC.len() && STATIC[i - 1].0 == STATIC[name_index - 1].0 {
        if STATIC[i - 1].1 == value {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// The buffers' first capacity, when the first entry arrives: the entries of a browser's or
/// curl's first request fit (a few hundred octets), far from the 4096 the table may hold.
const FIRST_BYTES: usize = 256;
const FIRST_SLOTS: usize = 8;

/// Where an entry's bytes are in [`Dynamic::bytes`]: the name is `start..name_end`, the
/// value `name_end..end`.
#[derive(Debug, Clone, Copy)]
struct Slot {
    start: usize,
    name_end: usize,
    end: usize,
}

/// A new entry's name: bytes from outside the table, or the name of the entry at a dynamic
/// index (0 = newest) that the insert may evict (§4.4 allows that).
pub(crate) enum Name<'a> {
    Bytes(&'a [u8]),
    Entry(usize),
}

/// The dynamic table (§2.3.2): a FIFO of entries bounded by `max_size` (§4.1, §4.4).
///
/// Entries are appended to `slots` and `bytes`; eviction only moves `head` and `start`
/// forward, and the evicted prefixes are dropped in one move when they grow large, so a
/// lookup is one slice index, with no ring arithmetic.
#[derive(Debug, Default)]
pub(crate) struct Dynamic {
    /// Entry bytes; those before `start` belong to evicted entries.
    bytes: Vec<u8>,
    start: usize,
    /// Oldest first; those before `head` are evicted.
    slots: Vec<Slot>,
    head: usize,
    /// The sum of entry sizes (§4.1).
    size: usize,
    max_size: usize,
    /// How many entries were ever inserted: the absolute number of the next one.
    inserted: u64,
}

impl Dynamic {
    pub(crate) fn new(max_size: usize) -> Dynamic {
        Dynamic {
            max_size,
            ..Dynamic::default()
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.len() - self.head
    }

    pub(crate) fn size(&self) -> usize {
        self.size
    }

    pub(crate) fn max_size(&self) -> usize {
        self.max_size
    }

    /// The heap bytes held (buffer and slots).
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.bytes.capacity() + self.slots.capacity() * std::mem::size_of::<Slot>()
    }

    /// The entry at dynamic index `i` (0 = newest).
    #[inline]
    pub(crate) fn get(&self, i: usize) -> Option<(&[u8], &[u8])> {
        let s = *self
            .slots
            .len()
            .checked_sub(i + 1)
            .filter(|&k| k >= self.head)
            .map(|k| &self.slots[k])?;
        let entry = self.bytes.get(s.start..s.end)?;
        Some(entry.split_at(s.name_end - s.start))
    }

    /// The absolute number of the entry at dynamic index 0, if any.
    pub(crate) fn newest(&self) -> Option<u64> {
        self.inserted.checked_sub(1).filter(|_| self.len() > 0)
    }

    /// Sets the maximum size, evicting as needed (§4.3).
    pub(crate) fn set_max_size(&mut self, max_size: usize) {
        self.max_size = max_size;
        self.evict_to(max_size);
        if self.len() == 0 {
            self.clear();
        }
    }

    fn clear(&mut self) {
        self.slots.clear();
        self.head = 0;
        self.bytes.clear();
        self.start = 0;
        self.size = 0;
    }

    /// Evicts the oldest entries until the size is at most `limit`; their bytes and slots stay
    /// until the next compaction.
    fn evict_to(&mut self, limit: usize) {
        while self.size > limit && self.head < self.slots.len() {
            let s = self.slots[self.head];
            self.head += 1;
            self.size -= s.end - s.start + ENTRY_OVERHEAD;
            self.start = s.end;
        }
    }

    /// Adds an entry (§4.4). Returns false when it is larger than the table, which is then
    /// emptied and does not hold it.
    pub(crate) fn insert(&mut self, name: Name<'_>, value: &[u8]) -> bool {
        let name_len = match name {
            Name::Bytes(b) => b.len(),
            Name::Entry(i) => {
                let s = self.slots[self.slots.len() - 1 - i];
                s.name_end - s.start
            }
        };
        let size = name_len + value.len() + ENTRY_OVERHEAD;
        self.inserted += 1;
        if size > self.max_size {
            self.clear();
            return false;
        }
        let need = name_len + value.len();
        if self.bytes.capacity() == 0 {
            // Room for a typical first request's entries in one allocation each.
            self.bytes.reserve(need.max(FIRST_BYTES));
            self.slots.reserve(FIRST_SLOTS);
        }
        if self.start > 0 && self.bytes.len() + need > self.max_size + self.max_size / 2 {
            self.compact();
        }
        // The name is copied before evicting, so an entry may take the name of one it evicts.
        let start = self.bytes.len();
        match name {
            Name::Bytes(b) => self.bytes.extend_from_slice(b),
            Name::Entry(i) => {
                let s = self.slots[self.slots.len() - 1 - i];
                self.bytes.extend_from_within(s.start..s.name_end);
            }
        }
        self.bytes.extend_from_slice(value);
        self.evict_to(self.max_size - size);
        self.slots.push(Slot {
            start,
            name_end: start + name_len,
            end: start + need,
        });
        self.size += size;
        if self.head > 0 && (self.head >= 64 || self.len() == 1) {
            self.compact();
        }
        true
    }

    /// Drops the evicted slots and bytes: the live ones move to the front.
    fn compact(&mut self) {
        let start = self.start;
        self.bytes.copy_within(start.., 0);
        self.bytes.truncate(self.bytes.len() - start);
        self.slots.drain(..self.head);
        self.head = 0;
        for s in &mut self.slots {
            s.start -= start;
            s.name_end -= start;
            s.end -= start;
        }
        self.start = 0;
    }
}
