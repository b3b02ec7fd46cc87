//! A per-worker pool of I/O buffers, so an idle keep-alive connection holds none.
//!
//! A connection takes a buffer when bytes arrive (or a response is produced) and gives it back
//! as soon as it is drained. Buffers are all of one capacity; one that grew past it (a large
//! body or response) is dropped on return instead of being pooled, so the pool's memory stays
//! `capacity × max_pooled` however large single requests get; except for a few large ones
//! ([`LARGE_POOLED`] of at most [`LARGE_BYTES`]), which a streamed body takes
//! ([`Pool::take_large`]): without them each upload's read buffer is a fresh `mmap` whose
//! every page faults in (and is zeroed) again.

/// Large buffers kept for streamed bodies, at most.
const LARGE_POOLED: usize = 4;
/// The largest capacity a kept large buffer may have.
pub(crate) const LARGE_BYTES: usize = 4 << 20;

/// The pool. Not shared: each worker has its own (no lock).
#[derive(Debug)]
pub(crate) struct Pool {
    free: Vec<Vec<u8>>,
    capacity: usize,
    max_pooled: usize,
    large: Vec<Vec<u8>>,
}

impl Pool {
    pub(crate) fn new(capacity: usize, max_pooled: usize) -> Self {
        Self {
            free: Vec::new(),
            capacity,
            max_pooled,
            large: Vec::new(),
        }
    }

    /// An empty buffer with at least the pool's capacity.
    #[inline]
    pub(crate) fn take(&mut self) -> Vec<u8> {
        self.free
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(self.capacity))
    }

    /// An empty buffer of at least `min` bytes, a kept large one where one is big enough.
    pub(crate) fn take_large(&mut self, min: usize) -> Vec<u8> {
        match self.large.iter().position(|b| b.capacity() >= min) {
            Some(i) => self.large.swap_remove(i),
            None => Vec::with_capacity(min),
        }
    }

    /// Returns a buffer; it is cleared, and dropped if it is oversized or the pool is full.
    #[inline]
    pub(crate) fn give(&mut self, mut buf: Vec<u8>) {
        if buf.capacity() == 0 {
            return;
        }
        if buf.capacity() > self.capacity * 2 {
            if buf.capacity() <= LARGE_BYTES && self.large.len() < LARGE_POOLED {
                buf.clear();
                self.large.push(buf);
            }
            return;
        }
        if self.free.len() >= self.max_pooled {
            return;
        }
        buf.clear();
        self.free.push(buf);
    }

    /// Buffers waiting in the pool.
    #[cfg(test)]
    pub(crate) fn pooled(&self) -> usize {
        self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_reused() {
        let mut p = Pool::new(64, 4);
        let mut b = p.take();
        b.extend_from_slice(b"abc");
        let ptr = b.as_ptr();
        p.give(b);
        let b = p.take();
        assert!(b.is_empty());
        assert_eq!(b.as_ptr(), ptr);
    }

    #[test]
    fn oversized_buffers_are_dropped() {
        let mut p = Pool::new(64, 4);
        p.give(Vec::with_capacity(1024));
        assert_eq!(p.pooled(), 0);
    }

    #[test]
    fn a_few_large_buffers_are_kept() {
        let mut p = Pool::new(64, 4);
        for _ in 0..LARGE_POOLED + 2 {
            p.give(Vec::with_capacity(4096));
        }
        p.give(Vec::with_capacity(LARGE_BYTES + 1));
        assert_eq!(
            p.large.len(),
            LARGE_POOLED,
            "bounded, and none past LARGE_BYTES"
        );
        assert_eq!(p.pooled(), 0);
        let b = p.take_large(4000);
        assert!(b.capacity() >= 4096 && b.is_empty());
        assert_eq!(p.large.len(), LARGE_POOLED - 1);
        assert!(
            p.take_large(8192).capacity() >= 8192,
            "none big enough: a new one"
        );
    }

    #[test]
    fn pool_is_bounded() {
        let mut p = Pool::new(8, 2);
        for _ in 0..5 {
            p.give(Vec::with_capacity(8));
        }
        assert_eq!(p.pooled(), 2);
    }
}
