//! Request templates: `{seq}`, `{seq:START}` and `{rand:MIN:MAX}` anywhere in a request
//! (path, query, header values, body), replaced by a fresh number each time the request is
//! sent, so a benchmark can create, read or update a different row each request.
//!
//! Every placeholder has a fixed width, decided when the template is read, so the request's
//! length and its `Content-Length` never change and a value is written over the bytes of a
//! pre-built window: a templated window costs one copy and a few digit writes, no encoding.
//! HttpArena's gcannon made the same choice (its `{SEQ:start}` and `{RAND:min:max}`, which this
//! accepts too, in any letter case):
//! - `{rand:MIN:MAX}`: uniform in MIN..=MAX, zero-padded to the width of MAX (safe in a path;
//!   in a JSON number keep MIN and MAX the same width, RFC 8259 §6 forbids leading zeros).
//! - `{seq:START}`: START, START+1, … at the width of START, no leading zeros; after the last
//!   value of that width it starts again at START. `{seq}` is `{seq:1000000000}`: ten digits,
//!   nine billion values, valid in JSON.
//!
//! All `{seq…}` of one request share its sequence number, so a path and a body can name the
//! same row. Shards of one run never send the same number: shard i of N takes numbers
//! i, i+N, i+2N, … of the sequence.

use crate::schedule::splitmix64;
use std::fmt;

/// Largest MIN, MAX or START: 18 digits keeps every sum and span inside a u64.
const MAX_VALUE: u64 = 999_999_999_999_999_999;
/// START of a bare `{seq}`.
const DEFAULT_SEQ_START: u64 = 1_000_000_000;

/// What a placeholder draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `start + n % span` for the request's sequence number `n`.
    Seq { start: u64, span: u64 },
    /// `min + uniform(span)`.
    Rand { min: u64, span: u64 },
}

/// One placeholder in a compiled request: where its digits go and what they say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hole {
    /// Offset of the first digit in the request.
    pub at: usize,
    pub width: usize,
    pub kind: Kind,
}

/// A placeholder that cannot be read, with where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    /// The placeholder's text as written, up to its `}` (or the first 40 bytes).
    pub text: String,
    pub why: &'static str,
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "template {:?}: {} (placeholders are {{seq}}, {{seq:START}} and {{rand:MIN:MAX}}, \
             numbers of at most 18 digits)",
            self.text, self.why
        )
    }
}

impl std::error::Error for TemplateError {}

/// Replaces every placeholder of `text` with its first value (START, or MIN zero-padded) and
/// returns the bytes with where each placeholder's digits are. Text without `{seq` or `{rand`
/// comes back unchanged with no holes; so does any other use of braces (JSON).
pub(crate) fn compile(text: &[u8]) -> Result<(Vec<u8>, Vec<Hole>), TemplateError> {
    let mut out = Vec::with_capacity(text.len());
    let mut holes = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.iter().position(|&b| b == b'{') {
        out.extend_from_slice(&rest[..i]);
        rest = &rest[i..];
        let Some((kind, width, len)) = placeholder(rest)? else {
            out.push(b'{');
            rest = &rest[1..];
            continue;
        };
        let first = match kind {
            Kind::Seq { start, .. } => start,
            Kind::Rand { min, .. } => min,
        };
        let at = out.len();
        out.resize(at + width, b'0');
        write_digits(&mut out[at..], first);
        holes.push(Hole { at, width, kind });
        rest = &rest[len..];
    }
    out.extend_from_slice(rest);
    Ok((out, holes))
}

/// The placeholder `s` starts with, as (kind, width, bytes it spans); `None` when `s` does not
/// start one (a brace of JSON, say).
fn placeholder(s: &[u8]) -> Result<Option<(Kind, usize, usize)>, TemplateError> {
    let starts = |p: &[u8]| s.get(..p.len()).is_some_and(|h| h.eq_ignore_ascii_case(p));
    let (name_len, is_seq) = if starts(b"{seq:") || starts(b"{seq}") {
        (4, true)
    } else if starts(b"{rand:") || starts(b"{rand}") {
        (5, false)
    } else {
        return Ok(None);
    };
    let Some(close) = s.iter().position(|&b| b == b'}') else {
        return Err(error(s, s.len().min(40), "no closing }"));
    };
    let err = |why| error(s, close + 1, why);
    let args = &s[name_len..close];
    let numbers: Vec<u64> = if args.is_empty() {
        Vec::new()
    } else {
        args[1..]
            .split(|&b| b == b':')
            .map(|n| number(n).ok_or_else(|| err("expected a number of at most 18 digits")))
            .collect::<Result<_, _>>()?
    };
    let (kind, width) = if is_seq {
        let start = match numbers[..] {
            [] => DEFAULT_SEQ_START,
            [start] => start,
            _ => return Err(err("{seq} takes one number, its START")),
        };
        let width = digits(start);
        let span = 10u64.pow(width as u32) - start;
        (Kind::Seq { start, span }, width)
    } else {
        let [min, max] = numbers[..] else {
            return Err(err("{rand} takes two numbers, MIN:MAX"));
        };
        if min > max {
            return Err(err("MIN is larger than MAX"));
        }
        (
            Kind::Rand {
                min,
                span: max - min + 1,
            },
            digits(max),
        )
    };
    Ok(Some((kind, width, close + 1)))
}

fn error(s: &[u8], len: usize, why: &'static str) -> TemplateError {
    TemplateError {
        text: String::from_utf8_lossy(&s[..len]).into_owned(),
        why,
    }
}

/// A decimal number of 1 to 18 digits.
fn number(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 18 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = s.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'));
    (n <= MAX_VALUE).then_some(n)
}

/// Decimal digits of `n` (1 for 0).
fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |l| l as usize + 1)
}

/// Writes `n` right-aligned into `out`, zero-padded; `n` fits by construction of the hole.
#[inline]
fn write_digits(out: &mut [u8], mut n: u64) {
    for d in out.iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

/// Writes the value of each hole of one request at `request`, for sequence number `seq`.
#[inline]
pub(crate) fn fill(request: &mut [u8], holes: &[Hole], seq: u64, rng: &mut u64) {
    for h in holes {
        let v = match h.kind {
            Kind::Seq { start, span } => start + seq % span,
            // Lemire's multiply-shift: uniform enough for spans far below 2^64.
            Kind::Rand { min, span } => {
                min + ((u128::from(splitmix64(rng)) * u128::from(span)) >> 64) as u64
            }
        };
        write_digits(&mut request[h.at..h.at + h.width], v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> String {
        String::from_utf8(compile(t.as_bytes()).unwrap().0).unwrap()
    }

    #[test]
    fn placeholders_compile_to_their_first_value_at_a_fixed_width() {
        for (input, want, holes) in [
            ("/items/{rand:1:100000}", "/items/000001", 1),
            ("/items/{RAND:50000:100000}", "/items/050000", 1),
            ("{\"id\":{seq:100001}}", "{\"id\":100001}", 1),
            ("/{SEQ:7}/{seq}", "/7/1000000000", 2),
            ("{seq:0}", "0", 1),
            ("no placeholders", "no placeholders", 0),
            ("{\"a\":{\"b\":1}}", "{\"a\":{\"b\":1}}", 0),
            ("{sequence}", "{sequence}", 0),
            ("{", "{", 0),
        ] {
            assert_eq!(text(input), want, "{input}");
            assert_eq!(compile(input.as_bytes()).unwrap().1.len(), holes, "{input}");
        }
    }

    #[test]
    fn malformed_placeholders_are_refused_with_their_text() {
        for (input, shown) in [
            ("/{rand:5}", "{rand:5}"),
            ("/{rand:9:1}", "{rand:9:1}"),
            ("/{rand}", "{rand}"),
            ("/{seq:1:2}", "{seq:1:2}"),
            ("/{seq:x}", "{seq:x}"),
            ("/{seq:}", "{seq:}"),
            ("/{seq:1000000000000000000}", "{seq:1000000000000000000}"),
            ("/{rand:1:2", "{rand:1:2"),
        ] {
            let e = compile(input.as_bytes()).unwrap_err();
            assert_eq!(e.text, shown, "{input}");
            assert!(e.to_string().contains("{rand:MIN:MAX}"), "{e}");
        }
    }

    #[test]
    fn seq_counts_at_its_width_and_starts_again_after_the_last_value() {
        let (mut bytes, holes) = compile(b"id={seq:97}").unwrap();
        let mut rng = 1;
        let got: Vec<String> = (0..5)
            .map(|n| {
                fill(&mut bytes, &holes, n, &mut rng);
                String::from_utf8(bytes.clone()).unwrap()
            })
            .collect();
        assert_eq!(got, ["id=97", "id=98", "id=99", "id=97", "id=98"]);
    }

    #[test]
    fn every_seq_of_a_request_shows_the_same_number() {
        let (mut bytes, holes) = compile(b"/{seq:10}?again={seq:5000}").unwrap();
        fill(&mut bytes, &holes, 3, &mut 1);
        assert_eq!(bytes, b"/13?again=5003");
    }

    #[test]
    fn rand_stays_in_range_reaches_both_ends_and_keeps_its_width() {
        let (mut bytes, holes) = compile(b"{rand:8:12}").unwrap();
        let mut rng = 42;
        let mut seen = [0u32; 13];
        for _ in 0..10_000 {
            fill(&mut bytes, &holes, 0, &mut rng);
            assert_eq!(bytes.len(), 2);
            let v: usize = std::str::from_utf8(&bytes).unwrap().parse().unwrap();
            assert!((8..=12).contains(&v), "{v}");
            seen[v] += 1;
        }
        // Five values, 2,000 expected each: a fair draw lands well inside 1,700..2,300.
        for (v, &n) in seen.iter().enumerate().skip(8) {
            assert!((1_700..2_300).contains(&n), "value {v} drawn {n} times");
        }
    }

    #[test]
    fn the_widest_values_fit() {
        let (mut bytes, holes) = compile(b"{rand:0:999999999999999999}").unwrap();
        assert_eq!(bytes.len(), 18);
        for _ in 0..100 {
            fill(&mut bytes, &holes, u64::MAX, &mut 7);
        }
        let (mut bytes, holes) = compile(b"{seq:999999999999999999}").unwrap();
        fill(&mut bytes, &holes, u64::MAX, &mut 7);
        assert_eq!(bytes, b"999999999999999999");
    }
}
