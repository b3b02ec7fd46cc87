//! Validators and their preconditions: strong ETag, If-None-Match, If-Modified-Since,
//! If-Range, and the single-range `Range` parser (RFC 9110 §8.8, §13, §14).

use twelve_http::parse_http_date;

/// A strong entity tag, quotes included: `"<inode>-<size>-<mtime in ns>"` in hex.
///
/// Strong (RFC 9110 §8.8.3): any change of content changes size or mtime, and mtime has
/// nanosecond resolution, so two versions written within the same second still differ. The
/// inode distinguishes a file replaced by `rename` with equal size and mtime (deploy tools do
/// this). Fixed-size so building one never allocates.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct ETag {
    buf: [u8; ETag::CAP],
    len: u8,
}

impl ETag {
    /// Two quotes, two dashes, three u64 in hex.
    const CAP: usize = 2 + 2 + 3 * 16;

    pub(crate) fn new(ino: u64, size: u64, mtime_ns: u128) -> Self {
        let mut e = ETag {
            buf: [0; Self::CAP],
            len: 0,
        };
        e.push(b'"');
        e.push_hex(ino);
        e.push(b'-');
        e.push_hex(size);
        e.push(b'-');
        // Nanoseconds since the epoch fit in u64 until the year 2554.
        e.push_hex(mtime_ns as u64);
        e.push(b'"');
        e
    }

    fn push(&mut self, b: u8) {
        self.buf[usize::from(self.len)] = b;
        self.len += 1;
    }

    fn push_hex(&mut self, v: u64) {
        let digits = (64 - v.leading_zeros()).div_ceil(4).max(1);
        for i in (0..digits).rev() {
            self.push(b"0123456789abcdef"[(v >> (i * 4) & 15) as usize]);
        }
    }

    /// The tag as sent in the `ETag` field, with its quotes.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.buf[..usize::from(self.len)]
    }
}

impl std::fmt::Debug for ETag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&String::from_utf8_lossy(self.as_bytes()))
    }
}

/// Does one `If-None-Match` field line match `etag`? `*` matches any current representation;
/// otherwise the weak comparison applies (§13.1.2: `W/"x"` matches `"x"`). A malformed member
/// does not match, so the client gets the full 200 rather than a wrong 304.
pub(crate) fn none_match_hits(value: &[u8], etag: &ETag) -> bool {
    if trim_ows(value) == b"*" {
        return true;
    }
    list_members(value).any(|m| {
        let opaque = m.strip_prefix(b"W/").unwrap_or(m);
        is_opaque_tag(opaque) && opaque == etag.as_bytes()
    })
}

/// `If-Modified-Since` (§13.1.3): true when the representation has not changed since the date,
/// i.e. a 304 is due. An invalid date never triggers a 304 (the field is then ignored).
pub(crate) fn not_modified_since(value: &[u8], last_modified_s: u64) -> bool {
    parse_http_date(trim_ows(value)).is_some_and(|since| last_modified_s <= since)
}

/// `If-Range` (§13.1.5): whether the `Range` may be honoured. An entity-tag must match by the
/// strong comparison (a weak tag never does); a date must equal Last-Modified exactly. Anything
/// else means "send the whole representation".
pub(crate) fn if_range_allows(value: &[u8], etag: &ETag, last_modified_s: u64) -> bool {
    let value = trim_ows(value);
    if value.first() == Some(&b'"') {
        return is_opaque_tag(value) && value == etag.as_bytes();
    }
    parse_http_date(value) == Some(last_modified_s)
}

/// What a `Range` field asks of a representation of `len` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RangeAnswer {
    /// Ignore the field and send 200 with everything: unknown unit, invalid syntax, or more than
    /// one range. §14.2 lets a server ignore Range; answering multipart/byteranges would let 200
    /// overlapping ranges turn one small file into a multi-gigabyte reply.
    Full,
    /// Send bytes `first..=last` with 206.
    Partial { first: u64, last: u64 },
    /// 416 with `Content-Range: bytes */len`.
    Unsatisfiable,
}

/// Parses a `Range` field value against a representation of `len` bytes (§14.1.2):
///
/// ```text
/// ranges-specifier = range-unit "=" range-set
/// range-set        = 1#range-spec
/// range-spec       = int-range / suffix-range / other-range
/// int-range        = first-pos "-" [ last-pos ]
/// suffix-range     = "-" suffix-length
/// ```
///
/// Work is linear in the field's length and stops at the second range-spec.
pub(crate) fn parse_range(value: &[u8], len: u64) -> RangeAnswer {
    let value = trim_ows(value);
    let Some(eq) = value.iter().position(|&b| b == b'=') else {
        return RangeAnswer::Full;
    };
    // Range units are case-insensitive (§14.1).
    if !value[..eq].eq_ignore_ascii_case(b"bytes") {
        return RangeAnswer::Full;
    }
    let mut specs = list_members(&value[eq + 1..]);
    let (Some(spec), None) = (specs.next(), specs.next()) else {
        return RangeAnswer::Full;
    };
    let Some(dash) = spec.iter().position(|&b| b == b'-') else {
        return RangeAnswer::Full;
    };
    let (first, last) = (&spec[..dash], &spec[dash + 1..]);
    if first.is_empty() {
        // suffix-range: the last N bytes; N = 0 or an empty file cannot be satisfied (§14.1.3).
        return match digits_saturating(last) {
            None => RangeAnswer::Full,
            Some(0) => RangeAnswer::Unsatisfiable,
            Some(_) if len == 0 => RangeAnswer::Unsatisfiable,
            Some(n) => RangeAnswer::Partial {
                first: len.saturating_sub(n),
                last: len - 1,
            },
        };
    }
    let Some(first) = digits_saturating(first) else {
        return RangeAnswer::Full;
    };
    let last = if last.is_empty() {
        u64::MAX
    } else {
        match digits_saturating(last) {
            // §14.1.1: last-pos < first-pos makes the range-spec invalid: ignore the field.
            Some(l) if l >= first => l,
            _ => return RangeAnswer::Full,
        }
    };
    if first >= len {
        return RangeAnswer::Unsatisfiable;
    }
    RangeAnswer::Partial {
        first,
        last: last.min(len - 1),
    }
}

/// `1*DIGIT` as u64; values too large saturate at `u64::MAX`, which is past any file's end and
/// so reads as "unsatisfiable" or "the whole file", never as a wrapped small number.
fn digits_saturating(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    s.iter().try_fold(0u64, |acc, &b| {
        b.is_ascii_digit()
            .then(|| acc.saturating_mul(10).saturating_add(u64::from(b - b'0')))
    })
}

/// `opaque-tag = DQUOTE *etagc DQUOTE`, `etagc = %x21 / %x23-7E / obs-text`.
fn is_opaque_tag(s: &[u8]) -> bool {
    s.len() >= 2
        && s[0] == b'"'
        && s[s.len() - 1] == b'"'
        && s[1..s.len() - 1]
            .iter()
            .all(|&b| b == 0x21 || (0x23..=0x7e).contains(&b) || b >= 0x80)
}

/// Members of a `#rule` list: split on commas, OWS trimmed, empty members skipped (§5.6.1).
fn list_members(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value
        .split(|&b| b == b',')
        .map(trim_ows)
        .filter(|m| !m.is_empty())
}

/// Trims OWS (SP and HTAB only; §5.6.3).
fn trim_ows(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEN: u64 = 1000;

    macro_rules! range {
        ($($name:ident: $input:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(parse_range($input, LEN), $want);
            }
        )*};
    }

    use RangeAnswer::{Full, Partial, Unsatisfiable};
    range! {
        range_first_last: b"bytes=0-99" => Partial { first: 0, last: 99 };
        range_open_ended: b"bytes=900-" => Partial { first: 900, last: 999 };
        range_last_clipped_to_end: b"bytes=900-5000" => Partial { first: 900, last: 999 };
        range_single_byte: b"bytes=999-999" => Partial { first: 999, last: 999 };
        range_suffix: b"bytes=-100" => Partial { first: 900, last: 999 };
        range_suffix_longer_than_file: b"bytes=-5000" => Partial { first: 0, last: 999 };
        range_unit_case_insensitive: b"Bytes=0-0" => Partial { first: 0, last: 0 };
        range_ows_around_spec: b"bytes= 0-1 " => Partial { first: 0, last: 1 };
        range_empty_list_members_ignored: b"bytes=,0-1," => Partial { first: 0, last: 1 };
        range_suffix_zero_unsatisfiable: b"bytes=-0" => Unsatisfiable;
        range_first_at_end_unsatisfiable: b"bytes=1000-" => Unsatisfiable;
        range_huge_first_saturates_unsatisfiable: b"bytes=99999999999999999999-" => Unsatisfiable;
        range_huge_suffix_is_whole_file: b"bytes=-99999999999999999999" => Partial { first: 0, last: 999 };
        range_two_ranges_ignored: b"bytes=0-1,5-6" => Full;
        range_overlapping_many_ignored: b"bytes=0-,0-,0-,0-" => Full;
        range_last_before_first_ignored: b"bytes=5-1" => Full;
        range_other_unit_ignored: b"items=0-1" => Full;
        range_no_equals_ignored: b"bytes 0-1" => Full;
        range_no_dash_ignored: b"bytes=5" => Full;
        range_sign_ignored: b"bytes=+1-2" => Full;
        range_empty_set_ignored: b"bytes=" => Full;
        range_lone_dash_ignored: b"bytes=-" => Full;
        range_space_inside_number_ignored: b"bytes=1 0-20" => Full;
    }

    #[test]
    fn range_on_empty_file_is_unsatisfiable() {
        assert_eq!(parse_range(b"bytes=0-", 0), Unsatisfiable);
        assert_eq!(parse_range(b"bytes=-5", 0), Unsatisfiable);
    }

    #[test]
    fn range_200_overlapping_is_linear_and_full() {
        let mut v = b"bytes=0-".to_vec();
        for _ in 0..199 {
            v.extend_from_slice(b",0-");
        }
        assert_eq!(parse_range(&v, LEN), Full);
    }

    fn tag() -> ETag {
        ETag::new(0x1f, 1000, 0x1234)
    }

    #[test]
    fn etag_format() {
        assert_eq!(tag().as_bytes(), b"\"1f-3e8-1234\"");
        assert_eq!(ETag::new(0, 0, 0).as_bytes(), b"\"0-0-0\"");
        let max = ETag::new(u64::MAX, u64::MAX, u128::from(u64::MAX));
        assert_eq!(max.as_bytes().len(), ETag::CAP);
    }

    macro_rules! inm {
        ($($name:ident: $input:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(none_match_hits($input, &tag()), $want);
            }
        )*};
    }

    inm! {
        inm_exact: b"\"1f-3e8-1234\"" => true;
        inm_weak_compares_weakly: b"W/\"1f-3e8-1234\"" => true;
        inm_in_list: b"\"x\", \"1f-3e8-1234\"" => true;
        inm_star: b" * " => true;
        inm_other_tag: b"\"1f-3e8-1235\"" => false;
        inm_unquoted: b"1f-3e8-1234" => false;
        inm_empty: b"" => false;
    }

    #[test]
    fn if_range_needs_strong_match() {
        assert!(if_range_allows(b"\"1f-3e8-1234\"", &tag(), 0));
        assert!(!if_range_allows(b"W/\"1f-3e8-1234\"", &tag(), 0));
        assert!(!if_range_allows(b"\"other\"", &tag(), 0));
    }

    #[test]
    fn if_range_date_must_be_exact() {
        let lm = 784_111_777;
        assert!(if_range_allows(
            b"Sun, 06 Nov 1994 08:49:37 GMT",
            &tag(),
            lm
        ));
        assert!(!if_range_allows(
            b"Sun, 06 Nov 1994 08:49:38 GMT",
            &tag(),
            lm
        ));
        assert!(!if_range_allows(b"garbage", &tag(), lm));
    }

    #[test]
    fn if_modified_since_compares_seconds() {
        let lm = 784_111_777;
        assert!(not_modified_since(b"Sun, 06 Nov 1994 08:49:37 GMT", lm));
        assert!(not_modified_since(b"Sun, 06 Nov 1994 08:49:38 GMT", lm));
        assert!(!not_modified_since(b"Sun, 06 Nov 1994 08:49:36 GMT", lm));
        assert!(!not_modified_since(b"yesterday", lm));
    }
}
