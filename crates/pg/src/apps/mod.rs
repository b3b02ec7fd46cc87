//! The database apps: TechEmpower's (`techempower`) and HttpArena's (`httparena`, and its
//! `crud` profile), each a function that adds its routes to a router, over one
//! [`Database`](crate::Database).

pub mod crud;
pub mod httparena;
pub mod techempower;

/// HTML escaping of text content (the five characters of OWASP's rule 1, as TechEmpower's
/// fortunes test requires: `<script>` in a fortune must arrive inert). The runs between
/// special characters go out whole, one copy each rather than a push per byte. Bytes, not
/// `str`: the database's text is UTF-8 (the connection asks `client_encoding` UTF8), and
/// escaping works on ASCII alone, so it needs no validation.
pub(crate) fn escape_html(b: &[u8], out: &mut Vec<u8>) {
    out.reserve(b.len());
    let mut start = 0;
    for (i, &c) in b.iter().enumerate() {
        let entity: &[u8] = match c {
            b'<' => b"&lt;",
            b'>' => b"&gt;",
            b'&' => b"&amp;",
            b'"' => b"&quot;",
            b'\'' => b"&#x27;",
            _ => continue,
        };
        out.extend_from_slice(&b[start..i]);
        out.extend_from_slice(entity);
        start = i + 1;
    }
    out.extend_from_slice(&b[start..]);
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
