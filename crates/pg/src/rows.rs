//! The rows a query returned, as the server sent them (`DataRow` bodies, binary format: no
//! copy, no parse until a field is read).

use postgres_protocol::message::backend::DataRowBody;

/// A query's rows.
#[derive(Default)]
pub struct Rows {
    pub(crate) rows: Vec<DataRowBody>,
}

impl std::fmt::Debug for Rows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Rows({})", self.rows.len())
    }
}

impl Rows {
    /// How many rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Row `i`.
    pub fn get(&self, i: usize) -> Option<Row<'_>> {
        self.rows.get(i).map(|r| Row(r.buffer()))
    }

    /// Every row, in order.
    pub fn iter(&self) -> impl Iterator<Item = Row<'_>> + '_ {
        self.rows.iter().map(|r| Row(r.buffer()))
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
    fn a_short_body_is_none_not_a_panic() {
        let b = [0, 0, 0, 9, b'x'];
        assert_eq!(Row(&b).text(0), None);
        assert_eq!(Row(&b[..2]).int(0), None);
    }
}
