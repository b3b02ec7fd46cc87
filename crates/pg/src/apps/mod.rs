//! The database apps: TechEmpower's (`techempower`) and HttpArena's (`httparena`, and its
//! `crud` profile), each a function that adds its routes to a router, over one
//! [`Database`](crate::Database).

pub mod crud;
pub mod httparena;
pub mod techempower;

/// HTML escaping of text content (the five characters of OWASP's rule 1, as TechEmpower's
/// fortunes test requires: `<script>` in a fortune must arrive inert). Eight bytes are
/// checked at a time ([`special8`]) and the runs between special characters go out whole.
/// Bytes, not `str`: the database's text is UTF-8 (the connection asks `client_encoding`
/// UTF8), and escaping works on ASCII alone, so it needs no validation.
pub(crate) fn escape_html(b: &[u8], out: &mut Vec<u8>) {
    out.reserve(b.len());
    // Bytes before `start` are written; `i` is the next byte to look at.
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        if let Some(word) = b.get(i..i + 8).and_then(|w| <[u8; 8]>::try_from(w).ok())
            && !special8(u64::from_le_bytes(word))
        {
            i += 8;
            continue;
        }
        for &c in &b[i..(i + 8).min(b.len())] {
            i += 1;
            let entity: &[u8] = match c {
                b'<' => b"&lt;",
                b'>' => b"&gt;",
                b'&' => b"&amp;",
                b'"' => b"&quot;",
                b'\'' => b"&#x27;",
                _ => continue,
            };
            out.extend_from_slice(&b[start..i - 1]);
            out.extend_from_slice(entity);
            start = i;
        }
    }
    out.extend_from_slice(&b[start..]);
}

/// Whether one of the eight bytes of `x` is `<`, `>`, `&`, `"` or `'`: each test is the
/// "has a zero byte" trick of Hacker's Delight (6-1) on `x` XOR the character, with `<`/`>`
/// (0x3C/0x3E) and `&`/`'` (0x26/0x27) paired by setting the one bit they differ in.
fn special8(x: u64) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let zero = |t: u64| t.wrapping_sub(LO) & !t & HI;
    (zero((x | (LO * 0x02)) ^ (LO * 0x3E)) | zero((x | LO) ^ (LO * 0x27)) | zero(x ^ (LO * 0x22)))
        != 0
}

/// A small, fast random number generator per worker thread (xorshift64*): the ids the
/// benchmarks ask for need no more than uniformity.
pub(crate) fn random(range: std::ops::RangeInclusive<i32>) -> i32 {
    use std::cell::Cell;
    thread_local! {
        static STATE: Cell<u64> = Cell::new(
            0x9E37_79B9_7F4A_7C15 ^ (std::ptr::from_ref(&0u8) as u64)
                ^ std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64)
        );
    }
    let x = STATE.with(|s| {
        let mut x = s.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        s.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    });
    let span = (*range.end() - *range.start()) as u64 + 1;
    *range.start() + ((x >> 32) % span) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special8_finds_exactly_the_five() {
        for c in 0..=255u8 {
            let want = matches!(c, b'<' | b'>' | b'&' | b'"' | b'\'');
            for at in 0..8 {
                let mut w = [b'a'; 8];
                w[at] = c;
                assert_eq!(special8(u64::from_le_bytes(w)), want, "{c:#x} at {at}");
            }
        }
        // Neighbours of the specials in every byte (borrows must not leak a false hit).
        let w = [0x21, 0x23, 0x25, 0x28, 0x3B, 0x3D, 0x3F, 0x00];
        assert!(!special8(u64::from_le_bytes(w)));
        assert!(!special8(u64::MAX) && !special8(0));
    }

    #[test]
    fn escapes_at_every_place_in_the_words() {
        // Each special character at each place of a text longer than two words, alone and
        // next to a second one: as the byte-at-a-time rule writes it.
        let naive = |s: &[u8]| {
            let mut o = Vec::new();
            for &c in s {
                match c {
                    b'<' => o.extend_from_slice(b"&lt;"),
                    b'>' => o.extend_from_slice(b"&gt;"),
                    b'&' => o.extend_from_slice(b"&amp;"),
                    b'"' => o.extend_from_slice(b"&quot;"),
                    b'\'' => o.extend_from_slice(b"&#x27;"),
                    c => o.push(c),
                }
            }
            o
        };
        for len in [0, 1, 7, 8, 9, 16, 19] {
            for at in 0..len {
                for c in *b"<>&\"'" {
                    for second in [None, Some(len - 1), Some(0)] {
                        let mut s = vec![b'x'; len];
                        s[at] = c;
                        if let Some(j) = second {
                            s[j] = b'&';
                        }
                        let mut out = Vec::new();
                        escape_html(&s, &mut out);
                        assert_eq!(out, naive(&s), "{:?}", String::from_utf8_lossy(&s));
                    }
                }
            }
        }
    }

    #[test]
    fn escapes_the_five_and_keeps_the_rest() {
        for (text, want) in [
            ("", ""),
            ("plain", "plain"),
            (
                "<script>alert(\"x\" & 'y')</script>",
                "&lt;script&gt;alert(&quot;x&quot; &amp; &#x27;y&#x27;)&lt;/script&gt;",
            ),
            ("&", "&amp;"),
            ("a<", "a&lt;"),
            (">b", "&gt;b"),
            ("<<>>", "&lt;&lt;&gt;&gt;"),
            ("フレーム<ワーク>", "フレーム&lt;ワーク&gt;"),
            ("a&b\"c'd", "a&amp;b&quot;c&#x27;d"),
        ] {
            let mut out = b"[".to_vec();
            escape_html(text.as_bytes(), &mut out);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                format!("[{want}"),
                "{text:?}"
            );
        }
    }

    #[test]
    fn random_stays_in_range() {
        for _ in 0..10_000 {
            let r = random(1..=10_000);
            assert!((1..=10_000).contains(&r));
        }
    }
}
