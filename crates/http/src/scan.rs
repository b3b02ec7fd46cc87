//! Byte-class tables for the scanners, each quoting the grammar it encodes.

use wide::{u8x16, u8x32};

/// One bit per byte class, so a single table lookup answers "is this byte allowed here".
const TCHAR: u8 = 1;
const VALUE: u8 = 2;
const TARGET: u8 = 4;
const REG_NAME: u8 = 8;
const PATH: u8 = 16;
const OWS: u8 = 32;

/// `tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|"
///        / "~" / DIGIT / ALPHA` (RFC 9110 §5.6.2).
const TCHAR_PUNCT: &[u8] = b"!#$%&'*+-.^_`|~";
/// Request-target bytes (RFC 3986 §2, §3.3, §3.4 via RFC 9112 §3.2): `unreserved / pct-encoded
/// / sub-delims / ":" / "@" / "/" / "?"`, plus `[` `]` for IP-literals in absolute-form.
/// Not allowed: SP, CTLs, DEL, `"` `#` `<` `>` `\` `^` `` ` `` `{` `|` `}` and bytes ≥ 0x80;
/// a fragment (`#`) is never sent in a request-target (RFC 9112 §3.2).
const TARGET_PUNCT: &[u8] = b"-._~%!$&'()*+,;=:@/?[]";
/// `reg-name = *( unreserved / pct-encoded / sub-delims )` (RFC 3986 §3.2.2).
const REG_NAME_PUNCT: &[u8] = b"-._~%!$&'()*+,;=";

const fn contains(set: &[u8], b: u8) -> bool {
    let mut i = 0;
    while i < set.len() {
        if set[i] == b {
            return true;
        }
        i += 1;
    }
    false
}

const fn build() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        let alnum = b.is_ascii_alphanumeric();
        let mut c = 0;
        if alnum || contains(TCHAR_PUNCT, b) {
            c |= TCHAR;
        }
        // field-value = *field-content; field-vchar = VCHAR / obs-text; SP and HTAB inside
        // (RFC 9110 §5.5). CR, LF, NUL and the other CTLs and DEL are rejected.
        if b == b'\t' || (b >= 0x20 && b != 0x7f) {
            c |= VALUE;
        }
        if alnum || contains(TARGET_PUNCT, b) {
            c |= TARGET;
        }
        if alnum || contains(REG_NAME_PUNCT, b) {
            c |= REG_NAME;
        }
        // A request-target byte before its query: `path-abempty = *( "/" segment )`, `pchar`
        // (RFC 3986 §3.3); `?` starts the query (§3.4).
        if (alnum || contains(TARGET_PUNCT, b)) && b != b'?' {
            c |= PATH;
        }
        // OWS = *( SP / HTAB ) (RFC 9110 §5.6.3).
        if b == b' ' || b == b'\t' {
            c |= OWS;
        }
        t[i] = c;
        i += 1;
    }
    t
}

static CLASS: [u8; 256] = build();

/// `true` for a `tchar`.
#[inline(always)]
pub(crate) fn is_tchar(b: u8) -> bool {
    CLASS[b as usize] & TCHAR != 0
}

/// The index of the first byte at or after `i` that is not a `tchar`.
#[inline(always)]
pub(crate) fn skip_tchar(buf: &[u8], i: usize) -> usize {
    skip_class(buf, i, &TCHARS)
}

/// The index of the first byte at or after `i` that is not a request-target byte.
#[inline(always)]
pub(crate) fn skip_target(buf: &[u8], i: usize) -> usize {
    skip_class(buf, i, &TARGETS)
}

/// The index of the first byte at or after `i` that is not a request-target byte before the
/// query: the `?` that starts the query, or the end of the target.
#[inline(always)]
pub(crate) fn skip_path(buf: &[u8], i: usize) -> usize {
    skip_class(buf, i, &PATHS)
}

/// The first byte at or after `i` outside `class`. Where SSSE3 is enabled (the bench builds,
/// `-C target-cpu=native`) 16 bytes a step with [`ClassLookup`], the last bytes included;
/// else four table lookups a step, and the last bytes, fewer than a step, one at a time
/// through the table.
#[inline(always)]
fn skip_class(buf: &[u8], i: usize, class: &Class) -> usize {
    if cfg!(target_feature = "ssse3") {
        ClassLookup::new(class).skip(buf, i)
    } else {
        skip_class_bytes(buf, skip_class_words(buf, i, class.bit), class.bit)
    }
}

/// A byte class: its bit in [`CLASS`] and its nibble table for [`ClassLookup`].
struct Class {
    bit: u8,
    lo: [u8; 16],
}

static TCHARS: Class = Class::new(TCHAR);
static TARGETS: Class = Class::new(TARGET);
static REG_NAMES: Class = Class::new(REG_NAME);
static PATHS: Class = Class::new(PATH);

impl Class {
    /// The `lo` table of [`ClassLookup`] is built from [`CLASS`], so the two cannot disagree.
    const fn new(bit: u8) -> Self {
        let mut lo = [0u8; 16];
        let mut b = 0;
        while b < 0x80 {
            if CLASS[b] & bit != 0 {
                lo[b & 0x0f] |= 1 << (b >> 4);
            }
            b += 1;
        }
        Class { bit, lo }
    }
}

/// Four table lookups per step, so a 10-byte field name costs three branches instead of eleven.
#[inline(always)]
fn skip_class_words(buf: &[u8], mut i: usize, class: u8) -> usize {
    while let Some(&[a, b, c, d]) = buf.get(i..).and_then(|rest| rest.first_chunk::<4>()) {
        let all = CLASS[a as usize] & CLASS[b as usize] & CLASS[c as usize] & CLASS[d as usize];
        if all & class == 0 {
            break;
        }
        i += 4;
    }
    i
}

#[inline(always)]
fn skip_class_bytes(buf: &[u8], mut i: usize, class: u8) -> usize {
    while i < buf.len() && CLASS[buf[i] as usize] & class != 0 {
        i += 1;
    }
    i
}

/// Byte-class membership for 16 bytes at once, by the nibble lookup that simdjson uses for its
/// "vectorized classification" (Langdale and Lemire, <https://arxiv.org/abs/1902.08318>): every
/// class here is ASCII, so a byte `0xHL` is in it when bit H (H < 8) of `lo[L]` is set, and
/// `hi[H]` is `1 << H` (0 for H ≥ 8, non-ASCII). Two `pshufb` and an AND classify a vector.
/// `wide` compiles the shuffle to `pshufb` with SSSE3 and to a scalar loop without, so the
/// tests check this path in every build.
struct ClassLookup {
    lo: u8x16,
    hi: u8x16,
}

impl ClassLookup {
    #[inline(always)]
    fn new(class: &Class) -> Self {
        ClassLookup {
            lo: u8x16::new(class.lo),
            hi: u8x16::new([1, 2, 4, 8, 16, 32, 64, 128, 0, 0, 0, 0, 0, 0, 0, 0]),
        }
    }

    /// The index of the first byte at or after `i` outside the class (or the end of `buf`),
    /// 16 bytes a step. Fewer than 16 last bytes are copied into a zero-padded block: NUL is in
    /// no class, so the padding stops the scan at the end. A byte loop costs more even on a
    /// short Host value (`localhost`), and two overlapping fixed-size halves instead of the
    /// padded copy cost more too (measured: docs/results.md#user-space-per-request).
    #[inline(always)]
    fn skip(&self, buf: &[u8], mut i: usize) -> usize {
        let nibble = u8x16::splat(0x0f);
        while let Some(rest) = buf.get(i..) {
            let v = match rest.first_chunk::<16>() {
                Some(&chunk) => u8x16::new(chunk),
                None => {
                    let mut block = [0u8; 16];
                    block[..rest.len()].copy_from_slice(rest);
                    u8x16::new(block)
                }
            };
            let low = self.lo.shuffle(v & nibble);
            let high = self.hi.shuffle(v.unbounded_shr_scalar(4) & nibble);
            let outside = (low & high).simd_eq(u8x16::ZERO).to_bitmask();
            if outside != 0 {
                return i + outside.trailing_zeros() as usize;
            }
            i += 16;
        }
        i
    }
}

/// `true` if either byte is SP or HTAB (OWS): one table lookup each, cheaper than two
/// `matches!` on TechEmpower's two field lines.
#[inline(always)]
pub(crate) fn either_ows(a: u8, b: u8) -> bool {
    (CLASS[a as usize] | CLASS[b as usize]) & OWS != 0
}

/// `true` for a byte allowed inside a field value: HTAB, SP, VCHAR, obs-text.
#[inline(always)]
pub(crate) fn is_value(b: u8) -> bool {
    CLASS[b as usize] & VALUE != 0
}

/// `HEXDIG` (RFC 5234 §B.1, case-insensitive) to its value: chunk sizes (RFC 9112 §7.1) and
/// percent-encoding (RFC 3986 §2.1) both use it.
pub fn hex_digit(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// `true` for a byte allowed in a request-target (the scanner uses [`skip_target`]).
#[cfg(test)]
pub(crate) fn is_target(b: u8) -> bool {
    CLASS[b as usize] & TARGET != 0
}

/// The index of the first byte at or after `i` that is not a field-value byte (HTAB, SP, VCHAR,
/// obs-text): the CR that ends the line, or an invalid byte. Values are most of a head's bytes,
/// so they are checked 32 bytes per step with SIMD compares (`wide`, which picks the vector
/// instructions the build enables, AVX2 or two SSE2 halves on x86-64, and keeps this crate
/// free of `unsafe`): a byte is flagged when it is at most 0x1F (unsigned, as
/// `min(b, 0x1F) == b`) and not HTAB, or is DEL; obs-text (0x80-0xFF) never is. The first
/// flag's index comes from the compare mask. Where fewer than 32 bytes remain, byte by byte in
/// the table.
#[inline]
pub(crate) fn skip_value(buf: &[u8], mut i: usize) -> usize {
    while let Some(&chunk) = buf.get(i..).and_then(|rest| rest.first_chunk::<32>()) {
        let mask = not_value32(chunk);
        if mask != 0 {
            return i + mask.trailing_zeros() as usize;
        }
        i += 32;
    }
    while i < buf.len() && is_value(buf[i]) {
        i += 1;
    }
    i
}

/// One bit per byte of `chunk` that is not a field-value byte (see [`skip_value`]).
#[inline(always)]
fn not_value32(chunk: [u8; 32]) -> u32 {
    let v = u8x32::new(chunk);
    let flags = (v.min(u8x32::splat(0x1f)).simd_eq(v) & !v.simd_eq(u8x32::splat(b'\t')))
        | v.simd_eq(u8x32::splat(0x7f));
    flags.to_bitmask()
}

/// One bit per byte of `buf[base..base + 64]` that is a CTL (HTAB included) or DEL: the CR
/// and LF that end a line, a byte no line may hold, or an HTAB, which a value may hold but the
/// fast path (crate::fast) leaves to the scanner. Not telling HTAB apart saves two of the six
/// vector operations per 32 bytes. Past the end of `buf` the block reads NUL, which is
/// flagged, so a line never seems to end beyond the bytes that arrived.
#[inline(always)]
pub(crate) fn ctl64(buf: &[u8], base: usize) -> u64 {
    let block = match buf.get(base..).and_then(|rest| rest.first_chunk::<64>()) {
        Some(&block) => block,
        None => {
            let mut block = [0u8; 64];
            let rest = buf.get(base..).unwrap_or_default();
            block[..rest.len()].copy_from_slice(rest);
            block
        }
    };
    let (lo, hi) = block.split_at(32);
    let lo = ctl32(lo.try_into().unwrap_or([0; 32]));
    let hi = ctl32(hi.try_into().unwrap_or([0; 32]));
    u64::from(lo) | u64::from(hi) << 32
}

/// One bit per byte of `chunk` that is at most 0x1F (unsigned, as `min(b, 0x1F) == b`) or DEL.
#[inline(always)]
fn ctl32(chunk: [u8; 32]) -> u32 {
    let v = u8x32::new(chunk);
    let flags = v.min(u8x32::splat(0x1f)).simd_eq(v) | v.simd_eq(u8x32::splat(0x7f));
    flags.to_bitmask()
}

/// Strips optional whitespace (`OWS = *( SP / HTAB )`, RFC 9110 §5.6.3) from both ends. Only SP
/// and HTAB: never 0x0B, 0x0C, 0x85 or 0xA0, which would let `\xa0chunked` mean chunked.
pub(crate) fn trim_ows(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// Validates `uri-host [ ":" port ]` (RFC 9110 §7.2, RFC 3986 §3.2.2): an IP-literal in
/// brackets or a reg-name (which covers IPv4), then an optional port of at most 65535.
/// `allow_empty` is for the Host field, whose host may be empty (RFC 9112 §3.2).
pub(crate) fn is_valid_authority(s: &[u8], allow_empty: bool) -> bool {
    is_valid_authority_in(s, 0, s.len(), allow_empty)
}

/// [`is_valid_authority`] of `buf[start..end]`, reading the reg-name's 16-byte steps from
/// `buf` itself: past `end` they may see the bytes that follow (the Host line's CRLF and the
/// next line), so nothing is copied into a zero-padded block; the scan's stop is
/// clamped to `end`, so those bytes never change the answer.
#[inline(always)]
pub(crate) fn is_valid_authority_in(
    buf: &[u8],
    start: usize,
    end: usize,
    allow_empty: bool,
) -> bool {
    let s = &buf[start..end];
    let port = if let [b'[', rest @ ..] = s {
        let Some(close) = rest.iter().position(|&b| b == b']') else {
            return false;
        };
        let literal = &rest[..close];
        // IPv6address / IPvFuture: hex digits, colons, dots, and `v` with its unreserved tail.
        if literal.is_empty()
            || !literal
                .iter()
                .all(|&b| b.is_ascii_hexdigit() || b == b':' || b == b'.' || b == b'v')
        {
            return false;
        }
        match &rest[close + 1..] {
            [] => None,
            [b':', port @ ..] => Some(port),
            _ => return false,
        }
    } else {
        // reg-name bytes up to the first byte that is not one (`:` is not).
        let end = skip_class(buf, start, &REG_NAMES).min(end) - start;
        if end == 0 && !allow_empty {
            return false;
        }
        match &s[end..] {
            [] => None,
            [b':', port @ ..] => Some(port),
            _ => return false,
        }
    };
    match port {
        None => true,
        // port = *DIGIT (RFC 3986 §3.2.3); a port over 65535 cannot be meant. At most five
        // digits, so the value fits a u32 in one pass.
        Some(p) if p.len() <= 5 => {
            let mut n = 0u32;
            for &d in p {
                if !d.is_ascii_digit() {
                    return false;
                }
                n = n * 10 + u32::from(d - b'0');
            }
            n <= 65535
        }
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_digit_agrees_with_to_digit_for_every_byte() {
        for b in 0..=u8::MAX {
            let want = (b as char).to_digit(16).map(|d| d as u8);
            assert_eq!(hex_digit(b), want, "byte {b:#04x}");
        }
    }

    macro_rules! authority {
        ($($name:ident: $input:expr, $empty_ok:expr => $ok:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(is_valid_authority($input, $empty_ok), $ok);
            }
        )*};
    }

    authority! {
        authority_plain: b"a", false => true;
        authority_with_port: b"example.com:8080", false => true;
        authority_empty_port: b"a:", false => true;
        authority_port_too_big: b"a:99999", false => false;
        authority_port_65535: b"a:65535", false => true;
        authority_port_65536: b"a:65536", false => false;
        authority_space: b"a b", false => false;
        authority_userinfo: b"u@a", false => false;
        authority_slash: b"a/b", false => false;
        authority_ipv6: b"[::1]:80", false => true;
        authority_ipv6_unclosed: b"[::1", false => false;
        authority_ipv6_junk_after: b"[::1]x", false => false;
        authority_empty_host_field: b"", true => true;
        authority_empty_target: b"", false => false;
        authority_port_not_digits: b"a:8x", false => false;
    }

    /// Checked in place, the bytes around the authority never change the answer: every table
    /// case, with each prefix and suffix (CRLF and a next line, more reg-name bytes, `:`, `]`,
    /// none), agrees with the check of the authority alone.
    #[test]
    fn authority_in_a_buffer_agrees_with_the_authority_alone() {
        let cases: [&[u8]; 12] = [
            b"a",
            b"example.com:8080",
            b"a:",
            b"a:99999",
            b"a:65535",
            b"a b",
            b"u@a",
            b"[::1]:80",
            b"[::1",
            b"",
            b"a:8x",
            b"localhost-with-a-long-name.example:1",
        ];
        let around: [&[u8]; 5] = [
            b"",
            b"\r\nAccept: */*\r\n\r\n",
            b"abcdefghijklmnopqrstu",
            b":1",
            b"]",
        ];
        for s in cases {
            for before in around {
                for after in around {
                    let buf = [before, s, after].concat();
                    for empty_ok in [false, true] {
                        assert_eq!(
                            is_valid_authority_in(
                                &buf,
                                before.len(),
                                before.len() + s.len(),
                                empty_ok
                            ),
                            is_valid_authority(s, empty_ok),
                            "{:?}",
                            String::from_utf8_lossy(&buf)
                        );
                    }
                }
            }
        }
    }

    /// The byte-at-a-time reading of the reg-name grammar, as a reference for the fast scan
    /// (IP-literals, `[...]`, take another branch and are left out of the comparison).
    fn authority_reference(s: &[u8], allow_empty: bool) -> bool {
        let end = s
            .iter()
            .position(|&b| CLASS[b as usize] & REG_NAME == 0)
            .unwrap_or(s.len());
        if end == 0 && !allow_empty {
            return false;
        }
        match &s[end..] {
            [] => true,
            [b':', p @ ..] => {
                p.len() <= 5
                    && p.iter().all(u8::is_ascii_digit)
                    && p.iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0')) <= 65535
            }
            _ => false,
        }
    }

    #[test]
    fn authority_agrees_with_the_reference_for_every_byte_in_every_position() {
        for base in [&b"127.0.0.1:8090"[..], b"example.com", b"a:65535", b"h:"] {
            for at in 0..=base.len() {
                for b in 0..=255u8 {
                    let mut s = base.to_vec();
                    s.insert(at, b);
                    if s[0] == b'[' {
                        continue;
                    }
                    for empty_ok in [false, true] {
                        assert_eq!(
                            is_valid_authority(&s, empty_ok),
                            authority_reference(&s, empty_ok),
                            "{:?}",
                            String::from_utf8_lossy(&s)
                        );
                    }
                }
            }
        }
    }

    /// Both ways `skip_class` can go, whichever this build picks: the SIMD lookup (its padded
    /// block for the tail included) and the word loop followed by the byte tail, must stop
    /// where the table says, for every byte value in every position of two 16-byte steps and a
    /// tail, from starts up to past the end.
    #[test]
    fn class_scans_agree_with_the_table_for_every_byte_in_every_position() {
        for class in [&TCHARS, &TARGETS, &REG_NAMES, &PATHS] {
            let lookup = ClassLookup::new(class);
            for b in 0..=255u8 {
                for at in 0..40 {
                    let mut buf = [b'a'; 40];
                    buf[at] = b;
                    let inside = CLASS[b as usize] & class.bit != 0;
                    for start in [0, 1, at.min(20), at, 39, 40, 41, usize::MAX] {
                        let want = if inside || at < start {
                            start.max(buf.len())
                        } else {
                            at
                        };
                        let simd = lookup.skip(&buf, start);
                        let words = skip_class_bytes(
                            &buf,
                            skip_class_words(&buf, start, class.bit),
                            class.bit,
                        );
                        let why = format!("class {} byte {b:#04x} at {at} from {start}", class.bit);
                        assert_eq!(simd, want, "lookup: {why}");
                        assert_eq!(words, want, "words: {why}");
                        assert_eq!(skip_class(&buf, start, class), want, "skip_class: {why}");
                    }
                }
            }
        }
    }

    /// The scanners the parser calls, against their byte predicates: 80 bytes hold two 32-byte
    /// steps of `skip_value` and four 16-byte steps of the class scans, then their tails.
    #[test]
    fn scanners_stop_at_every_byte_outside_their_class_in_every_position() {
        type Scan = fn(&[u8], usize) -> usize;
        type Inside = fn(u8) -> bool;
        let scanners: [(&str, Scan, Inside); 3] = [
            ("skip_value", skip_value, is_value),
            ("skip_tchar", skip_tchar, is_tchar),
            ("skip_target", skip_target, is_target),
        ];
        for (name, skip, inside) in scanners {
            for b in 0..=255u8 {
                for at in 0..76 {
                    let mut buf = [b'a'; 80];
                    buf[at] = b;
                    let naive = (0..buf.len())
                        .find(|&k| !inside(buf[k]))
                        .unwrap_or(buf.len());
                    for start in 0..=at {
                        assert_eq!(
                            skip(&buf, start),
                            naive.max(start),
                            "{name}: {b:#x} at {at}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn trim_ows_keeps_nbsp() {
        assert_eq!(trim_ows(b" \t\xa0chunked\xa0 "), b"\xa0chunked\xa0");
    }
}
