//! The HPACK Huffman code (RFC 7541 §5.2, Appendix B): string encoding, its length, and a
//! decoder that rejects EOS and bad padding.
//! <https://www.rfc-editor.org/rfc/rfc7541.html#appendix-B>
//!
//! The code is canonical (codes of one length are consecutive, and ordered by symbol), so the
//! table below keeps only each symbol's code length and the codes are derived from it at
//! compile time. Decoding looks the next 8 bits up in a 256-entry table, which resolves every
//! code of 8 bits or fewer (all of lowercase, digits and common punctuation), and walks the
//! canonical limits for the longer ones.

use super::HpackError;

/// The EOS symbol, which a string must never contain (§5.2).
const EOS: usize = 256;

/// The longest code, EOS's.
const MAX_LEN: usize = 30;

/// Code length in bits of each symbol 0..=255 and of EOS (256), from Appendix B.
#[rustfmt::skip]
const LEN: [u8; 257] = [
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, // 0..=15
    28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28, // 16..=31
     6, 10, 10, 12, 13,  6,  8, 11, 10, 10,  8, 11,  8,  6,  6,  6, // 32..=47  ' '../
     5,  5,  5,  6,  6,  6,  6,  6,  6,  6,  7,  8, 15,  6, 12, 10, // 48..=63  0..?
    13,  6,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7, // 64..=79  @..O
     7,  7,  7,  7,  7,  7,  7,  7,  8,  7,  8, 13, 19, 13, 14,  6, // 80..=95  P.._
    15,  5,  6,  5,  6,  5,  6,  6,  6,  5,  7,  7,  6,  6,  6,  5, // 96..=111 `..o
     6,  7,  6,  5,  5,  6,  7,  7,  7,  7,  7, 15, 11, 14, 13, 28, // 112..=127 p..DEL
    20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, // 128..=143
    24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, // 144..=159
    22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, // 160..=175
    21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, // 176..=191
    26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, // 192..=207
    19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, // 208..=223
    20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, // 224..=239
    26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, // 240..=255
    30,                                                             // EOS
];

/// The tables derived from [`LEN`] by the canonical construction.
struct Canonical {
    /// Each symbol's code, right-aligned.
    code: [u32; 257],
    /// The first code of each length (right-aligned, `MAX_LEN + 1` entries).
    first: [u32; MAX_LEN + 1],
    /// How many codes have each length.
    count: [u16; MAX_LEN + 1],
    /// Where the symbols of each length start in `sorted`.
    offset: [u16; MAX_LEN + 1],
    /// The symbols ordered by (length, symbol).
    sorted: [u16; 257],
    /// For each value of the next 8 bits: the symbol and its length when a code of 8 bits or
    /// fewer is their prefix, else (0, the shortest length of a code starting with them).
    byte: [(u16, u8); 256],
}

const fn canonical() -> Canonical {
    let mut t = Canonical {
        code: [0; 257],
        first: [0; MAX_LEN + 1],
        count: [0; MAX_LEN + 1],
        offset: [0; MAX_LEN + 1],
        sorted: [0; 257],
        byte: [(0, 0); 256],
    };
    let mut s = 0;
    while s < 257 {
        t.count[LEN[s] as usize] += 1;
        s += 1;
    }
    let mut code = 0u32;
    let mut at = 0u16;
    let mut len = 1;
    while len <= MAX_LEN {
        t.first[len] = code;
        t.offset[len] = at;
        let mut s = 0;
        while s < 257 {
            if LEN[s] as usize == len {
                t.code[s] = code;
                t.sorted[at as usize] = s as u16;
                code += 1;
                at += 1;
            }
            s += 1;
        }
        code <<= 1;
        len += 1;
    }
    let mut s = 0;
    while s < 257 {
        let len = LEN[s] as usize;
        if len <= 8 {
            // Every byte whose top `len` bits are the code.
            let lo = (t.code[s] << (8 - len)) as usize;
            let mut b = lo;
            while b < lo + (1 << (8 - len)) {
                t.byte[b] = (s as u16, len as u8);
                b += 1;
            }
        } else {
            let b = (t.code[s] >> (len - 8)) as usize;
            if t.byte[b].1 == 0 || (t.byte[b].1 as usize) > len {
                t.byte[b] = (0, len as u8);
            }
        }
        s += 1;
    }
    t
}

static TABLES: Canonical = canonical();

/// The length in octets of `src` Huffman-encoded, padding included.
pub(crate) fn encoded_len(src: &[u8]) -> usize {
    let bits: usize = src.iter().map(|&b| LEN[b as usize] as usize).sum();
    bits.div_ceil(8)
}

/// Appends `src` Huffman-encoded, padded with the most significant bits of EOS (ones).
pub(crate) fn encode(src: &[u8], out: &mut Vec<u8>) {
    let mut acc = 0u64;
    let mut bits = 0u32;
    for &b in src {
        let len = u32::from(LEN[b as usize]);
        acc = (acc << len) | u64::from(TABLES.code[b as usize]);
        bits += len;
        while bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    if bits > 0 {
        out.push(((acc << (8 - bits)) as u8) | (0xff >> bits));
    }
}

/// Appends the decoded form of the Huffman string `src` to `dst`. Errors: EOS inside the
/// string, padding longer than 7 bits, padding that is not a prefix of EOS (ones) (§5.2).
pub(crate) fn decode(src: &[u8], dst: &mut Vec<u8>) -> Result<(), HpackError> {
    // Up to 8 symbols per 5 bytes: reserve the most, once.
    dst.reserve(src.len() * 8 / 5 + 1);
    let mut acc = 0u64;
    let mut bits = 0usize;
    let mut rest = src;
    loop {
        while bits <= 56 {
            let Some((&b, tail)) = rest.split_first() else {
                break;
            };
            acc = (acc << 8) | u64::from(b);
            bits += 8;
            rest = tail;
        }
        if bits == 0 {
            return Ok(());
        }
        // The next 30 bits, filled with ones past the input's end, so that valid padding
        // reads as the start of EOS.
        let window = if bits >= MAX_LEN {
            (acc >> (bits - MAX_LEN)) as u32
        } else {
            ((acc << (MAX_LEN - bits)) as u32) | ((1 << (MAX_LEN - bits)) - 1)
        } & ((1 << MAX_LEN) - 1);
        let (sym, len) = symbol(window);
        if len > bits {
            // Only at the end of input (more than 30 bits are buffered otherwise).
            let pad = acc & ((1 << bits) - 1);
            return if bits > 7 {
                Err(HpackError::HuffmanPaddingTooLong)
            } else if pad != (1 << bits) - 1 {
                Err(HpackError::HuffmanPaddingNotOnes)
            } else {
                Ok(())
            };
        }
        if sym == EOS {
            return Err(HpackError::HuffmanEos);
        }
        dst.push(sym as u8);
        bits -= len;
    }
}

/// The symbol whose code starts the 30-bit `window`, and its length.
fn symbol(window: u32) -> (usize, usize) {
    let t = &TABLES;
    let (sym, len) = t.byte[(window >> (MAX_LEN - 8)) as usize];
    let mut len = len as usize;
    if len <= 8 {
        return (sym as usize, len);
    }
    // Canonical decoding: the first length whose code range holds the window's prefix.
    loop {
        let code = window >> (MAX_LEN - len);
        let delta = code.wrapping_sub(t.first[len]);
        if delta < u32::from(t.count[len]) {
            return (
                t.sorted[(t.offset[len] as u32 + delta) as usize] as usize,
                len,
            );
        }
        len += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_appendix_b_samples() {
        // (symbol, code, length) rows of Appendix B.
        let rows: [(usize, u32, u8); 10] = [
            (0, 0x1ff8, 13),
            (b' ' as usize, 0x14, 6),
            (b'0' as usize, 0x0, 5),
            (b'A' as usize, 0x21, 6),
            (b'\\' as usize, 0x7fff0, 19),
            (b'a' as usize, 0x3, 5),
            (b'~' as usize, 0x1ffd, 13),
            (230, 0x1fffe8, 21),
            (255, 0x3ffffee, 26),
            (EOS, 0x3fff_ffff, 30),
        ];
        for (sym, code, len) in rows {
            assert_eq!((TABLES.code[sym], LEN[sym]), (code, len), "symbol {sym}");
        }
    }

    #[test]
    fn code_is_complete() {
        // Kraft's sum is exactly 1: every bit string starts with a code.
        let sum: u64 = LEN.iter().map(|&l| 1u64 << (MAX_LEN - l as usize)).sum();
        assert_eq!(sum, 1 << MAX_LEN);
    }

    #[test]
    fn every_byte_round_trips() {
        let all: Vec<u8> = (0..=255).collect();
        for s in [&all[..], b"", b"a", b"www.example.com", b"\xff\x00\xfe"] {
            let mut enc = Vec::new();
            encode(s, &mut enc);
            assert_eq!(enc.len(), encoded_len(s));
            let mut dec = Vec::new();
            decode(&enc, &mut dec).unwrap();
            assert_eq!(dec, s);
        }
    }

    #[test]
    fn appendix_c4_strings() {
        let mut out = Vec::new();
        encode(b"www.example.com", &mut out);
        assert_eq!(
            out,
            [
                0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff
            ]
        );
        out.clear();
        encode(b"no-cache", &mut out);
        assert_eq!(out, [0xa8, 0xeb, 0x10, 0x64, 0x9c, 0xbf]);
    }

    #[test]
    fn bad_strings_are_rejected() {
        let cases: [(&str, &[u8], HpackError); 6] = [
            // EOS's 30 ones, then 2 bits of padding.
            (
                "EOS alone",
                &[0xff, 0xff, 0xff, 0xff],
                HpackError::HuffmanEos,
            ),
            (
                "EOS after 'a'",
                &[0x1f, 0xff, 0xff, 0xff, 0xff],
                HpackError::HuffmanEos,
            ),
            ("8 bits of ones", &[0xff], HpackError::HuffmanPaddingTooLong),
            (
                "'a' then 11 ones",
                &[0x1f, 0xff],
                HpackError::HuffmanPaddingTooLong,
            ),
            (
                "padding of zeros",
                &[0x18],
                HpackError::HuffmanPaddingNotOnes,
            ),
            (
                "'0' '0' 'o' then a 0 bit",
                &[0x00, 0x0e],
                HpackError::HuffmanPaddingNotOnes,
            ),
        ];
        for (what, src, want) in cases {
            assert_eq!(decode(src, &mut Vec::new()), Err(want), "{what}");
        }
    }

    #[test]
    fn short_padding_is_accepted() {
        // '0' (00000) + 3 ones; 'a' 'a' (00011 00011) + 6 ones.
        let mut out = Vec::new();
        decode(&[0x07], &mut out).unwrap();
        decode(&[0x18, 0xff], &mut out).unwrap();
        assert_eq!(out, b"0aa");
    }
}
