//! A worker's connections by token, for both backends: the slot index in the low 32 bits, a
//! generation above it, so a stale timer entry, event or completion never reaches a recycled
//! slot.
//!
//! Generations are 31 bits, so a connection's token always has bit 63 clear. Both backends
//! give their listeners and wake-up eventfd tokens from the top of the `u64` range
//! (`u64::MAX`, `u64::MAX - 1 - i`), and the io_uring backend tells them from connections by
//! bit 63 alone (the tag travels in `twelve_sys::uring::ring`'s slot beside the `user_data`, not
//! in it). A 32-bit generation (the epoll backend's `wrapping_add` before this file) would
//! have turned every slot's token into a listener's after 2³¹ reuses; epoll's own test
//! (`token > LISTENER_BASE - listeners`) was safe either way, and wrapping at 2³¹ instead of
//! 2³² costs it nothing: a stale token would have to outlive 2³¹ reuses of its slot.

/// The generations' range: 31 bits (see the file's comment).
const GEN_MASK: u32 = 0x7fff_ffff;

/// Connections (`T`: each backend's own record) by token.
pub(crate) struct Slab<T> {
    slots: Vec<Option<T>>,
    gens: Vec<u32>,
    free: Vec<u32>,
    len: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Self {
            slots: Vec::new(),
            gens: Vec::new(),
            free: Vec::new(),
            len: 0,
        }
    }
}

fn token(idx: usize, gen_: u32) -> u64 {
    (u64::from(gen_) << 32) | idx as u64
}

impl<T> Slab<T> {
    /// How many connections are in.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The connection of `token`, unless its slot was emptied (or reused) since.
    #[inline]
    pub(crate) fn get(&mut self, token: u64) -> Option<&mut T> {
        let idx = (token & 0xffff_ffff) as usize;
        if self.gens.get(idx) != Some(&((token >> 32) as u32)) {
            return None;
        }
        self.slots[idx].as_mut()
    }

    /// Puts `item` in a free slot and returns its token.
    pub(crate) fn insert(&mut self, item: T) -> u64 {
        let idx = match self.free.pop() {
            Some(i) => i as usize,
            None => {
                self.slots.push(None);
                self.gens.push(0);
                self.slots.len() - 1
            }
        };
        self.slots[idx] = Some(item);
        self.len += 1;
        token(idx, self.gens[idx])
    }

    /// Takes the connection of `token` out; its slot's next token differs from every token
    /// handed out for it in the last 2³¹ reuses.
    pub(crate) fn remove(&mut self, token: u64) -> Option<T> {
        let idx = (token & 0xffff_ffff) as usize;
        if self.gens.get(idx) != Some(&((token >> 32) as u32)) {
            return None;
        }
        let item = self.slots[idx].take()?;
        self.gens[idx] = (self.gens[idx] + 1) & GEN_MASK;
        self.free.push(idx as u32);
        self.len -= 1;
        Some(item)
    }

    /// The tokens of every connection in (a copy, so the caller may remove while it walks).
    pub(crate) fn tokens(&self) -> Vec<u64> {
        (0..self.slots.len())
            .filter(|&i| self.slots[i].is_some())
            .map(|i| token(i, self.gens[i]))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_token_misses_the_reused_slot() {
        let mut s = Slab::default();
        let a = s.insert("a");
        assert_eq!(s.remove(a), Some("a"));
        let b = s.insert("b");
        assert_ne!(a, b, "same slot, new generation");
        assert_eq!(a & 0xffff_ffff, b & 0xffff_ffff);
        assert_eq!(s.get(a), None);
        assert_eq!(s.remove(a), None);
        assert_eq!(s.get(b), Some(&mut "b"));
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn tokens_lists_what_is_in() {
        let mut s = Slab::default();
        let [a, b, c] = ["a", "b", "c"].map(|x| s.insert(x));
        s.remove(b);
        assert_eq!(s.tokens(), vec![a, c]);
        assert_eq!(s.len(), 2);
    }

    /// The io_uring backend tells listeners from connections by bit 63: a generation that
    /// wraps must never set it.
    #[test]
    fn generation_wraps_within_31_bits() {
        let mut s = Slab::default();
        let t = s.insert(());
        s.gens[0] = GEN_MASK;
        let last = token(0, GEN_MASK);
        assert_eq!(s.remove(last), Some(()));
        let next = s.insert(());
        assert_eq!(next >> 32, 0, "wrapped to generation 0");
        assert_eq!(next >> 63, 0);
        assert_eq!(last >> 63, 0);
        assert_eq!(
            s.get(t),
            Some(&mut ()),
            "generation 0 again, after 2³¹ reuses"
        );
    }
}
