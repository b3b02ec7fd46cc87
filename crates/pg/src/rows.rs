//! The rows a query returned, as the server sent them (`DataRow` bodies, binary format):
//! copied into one buffer per query as they arrive, parsed only when a field is read. The
//! buffers are kept for reuse on their thread ([`SPARE`]): a worker's queries allocate none
//! once it has as many as it holds at a time.

use std::cell::RefCell;

/// A query's rows: each row's fields (the `DataRow` body after its column count), prefixed
/// with their length, one after another in one buffer (one allocation however many rows).
#[derive(Default)]
pub struct Rows {
    data: Vec<u8>,
    n: usize,
}

impl std::fmt::Debug for Rows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Rows({})", self.n)
    }
}

/// Bytes of the length before each row in [`Rows`]'s buffer.
const LEN: usize = 4;
/// Buffers kept for reuse per thread (as many as a worker's queries in flight hold at
/// once), and the largest kept.
const SPARE_BUFFERS: usize = 1024;
const SPARE_BYTES: usize = 4096;
/// A new buffer's least size: a few short rows. Under 1 KiB, where glibc's malloc serves it
/// from its per-thread cache or a small bin; a larger request first merges every freed
/// small chunk (`malloc_consolidate`, malloc/malloc.c).
const FIRST_BYTES: usize = 256;

thread_local! {
    /// Emptied buffers of dropped [`Rows`], for the next ones.
    static SPARE: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

impl Drop for Rows {
    fn drop(&mut self) {
        let mut data = std::mem::take(&mut self.data);
        if data.capacity() == 0 || data.capacity() > SPARE_BYTES {
            return;
        }
        data.clear();
        // `try_with`: a `Rows` dropped as its thread ends finds the list gone.
        let _ = SPARE.try_with(|s| {
            if let Ok(mut s) = s.try_borrow_mut()
                && s.len() < SPARE_BUFFERS
            {
                s.push(data);
            }
        });
    }
}

impl Rows {
    /// Adds a row from a `DataRow` message's body (a 2-byte column count, then the fields);
    /// `false` if the body is too short to be one.
    pub(crate) fn push(&mut self, body: &[u8]) -> bool {
        let Some(fields) = body.get(2..) else {
            return false;
        };
        let Ok(len) = u32::try_from(fields.len()) else {
            return false;
        };
        if self.data.capacity() == 0 {
            self.data = SPARE
                .try_with(|s| s.try_borrow_mut().ok()?.pop())
                .ok()
                .flatten()
                .unwrap_or_else(|| Vec::with_capacity(FIRST_BYTES));
        }
        self.data.reserve(LEN + fields.len());
        self.data.extend_from_slice(&len.to_ne_bytes());
        self.data.extend_from_slice(fields);
        self.n += 1;
        true
    }

    /// How many rows.
    pub fn len(&self) -> usize {
        self.n
    }

    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Row `i`.
    pub fn get(&self, i: usize) -> Option<Row<'_>> {
        self.iter().nth(i)
    }

    /// Every row, in order.
    pub fn iter(&self) -> impl Iterator<Item = Row<'_>> + '_ {
        let mut rest = self.data.as_slice();
        std::iter::from_fn(move || {
            let (len, tail) = rest.split_first_chunk::<LEN>()?;
            let (row, tail) = tail.split_at_checked(u32::from_ne_bytes(*len) as usize)?;
            rest = tail;
            Some(Row(row))
        })
    }
}

/// One row: its fields in the binary format (PostgreSQL's `send` functions: big-endian
/// integers, a byte for a boolean, UTF-8 for text, a version byte before `jsonb`'s text).
#[derive(Clone, Copy, Debug)]
pub struct Row<'a>(&'a [u8]);

impl<'a> Row<'a> {
    /// Field `col`'s bytes; `None` for NULL or a column past the row.
    pub fn bytes(&self, col: usize) -> Option<&'a [u8]> {
        // A DataRow body after its column count: per column an i32 length (-1: NULL), then
        // that many bytes (PostgreSQL protocol, "Message Formats": DataRow).
        let mut at = 0usize;
        let b = self.0;
        for i in 0..=col {
            let len = i32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?);
            at += 4;
            if len < 0 {
                if i == col {
                    return None;
                }
                continue;
            }
            let len = len as usize;
            if i == col {
                return b.get(at..at + len);
            }
            at += len;
        }
        None
    }

    /// An `int4` field.
    pub fn int(&self, col: usize) -> Option<i32> {
        Some(i32::from_be_bytes(self.bytes(col)?.try_into().ok()?))
    }

    /// A `bool` field.
    pub fn bool(&self, col: usize) -> Option<bool> {
        self.bytes(col).map(|b| b.first() == Some(&1))
    }

    /// A `text` (or `varchar`) field.
    pub fn text(&self, col: usize) -> Option<&'a str> {
        std::str::from_utf8(self.bytes(col)?).ok()
    }

    /// A `jsonb` field's JSON text (after the format's version byte, 1).
    pub fn jsonb(&self, col: usize) -> Option<&'a str> {
        let b = self.bytes(col)?;
        std::str::from_utf8(b.strip_prefix(&[1])?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(fields: &[Option<&[u8]>]) -> Vec<u8> {
        let mut b = Vec::new();
        for f in fields {
            match f {
                Some(v) => {
                    b.extend_from_slice(&(v.len() as i32).to_be_bytes());
                    b.extend_from_slice(v);
                }
                None => b.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
        b
    }

    #[test]
    fn fields_by_column_with_nulls_between() {
        let b = body(&[
            Some(&42i32.to_be_bytes()),
            None,
            Some(b"hello"),
            Some(&[1]),
            Some(b"\x01[\"a\"]"),
        ]);
        let r = Row(&b);
        assert_eq!(r.int(0), Some(42));
        assert_eq!(r.bytes(1), None);
        assert_eq!(r.text(2), Some("hello"));
        assert_eq!(r.bool(3), Some(true));
        assert_eq!(r.jsonb(4), Some("[\"a\"]"));
        assert_eq!(r.bytes(5), None, "past the row");
    }

    #[test]
    fn rows_keep_their_order_and_fields() {
        let bodies: Vec<Vec<u8>> = [
            vec![Some(&1i32.to_be_bytes()[..]), Some(b"one")],
            vec![Some(&2i32.to_be_bytes()[..]), None],
            vec![],
            vec![Some(&3i32.to_be_bytes()[..]), Some(b"")],
        ]
        .iter()
        .map(|fields| {
            let mut b = (fields.len() as u16).to_be_bytes().to_vec();
            b.extend(body(fields));
            b
        })
        .collect();
        let mut rows = Rows::default();
        assert!(rows.is_empty());
        assert!(rows.get(0).is_none());
        for b in &bodies {
            assert!(rows.push(b));
        }
        assert!(!rows.push(&[0]), "a body shorter than its column count");
        assert_eq!(rows.len(), 4);
        let got: Vec<(Option<i32>, Option<&str>)> =
            rows.iter().map(|r| (r.int(0), r.text(1))).collect();
        assert_eq!(
            got,
            [
                (Some(1), Some("one")),
                (Some(2), None),
                (None, None),
                (Some(3), Some(""))
            ]
        );
        assert_eq!(rows.get(3).and_then(|r| r.int(0)), Some(3));
        assert!(rows.get(4).is_none());
    }

    #[test]
    fn buffers_are_reused_and_come_back_empty() {
        let mut body = 1u16.to_be_bytes().to_vec();
        body.extend(super::tests::body(&[Some(b"x")]));
        let spare = || SPARE.with(|s| s.borrow().len());
        let mut a = Rows::default();
        assert!(a.push(&body) && a.push(&body));
        let before = spare();
        drop(a);
        assert_eq!(spare(), before + 1, "a dropped buffer is kept");
        let mut b = Rows::default();
        assert!(b.push(&body));
        assert_eq!(spare(), before, "and taken by the next rows");
        assert_eq!(b.len(), 1);
        assert_eq!(b.iter().map(|r| r.text(0)).collect::<Vec<_>>(), [Some("x")]);
        // Rows that never held one give none back; an outsized one is not kept.
        drop(Rows::default());
        let mut big = Rows::default();
        let mut wide = 1u16.to_be_bytes().to_vec();
        wide.extend(super::tests::body(&[Some(&[7u8; SPARE_BYTES][..])]));
        assert!(big.push(&wide));
        drop(big);
        assert_eq!(spare(), before);
    }

    #[test]
    fn a_short_body_is_none_not_a_panic() {
        let b = [0, 0, 0, 9, b'x'];
        assert_eq!(Row(&b).text(0), None);
        assert_eq!(Row(&b[..2]).int(0), None);
    }
}
