//! A response head as HPACK fields: the same fields HTTP/1.1's encoder writes (`Server`,
//! `Date`, `Content-Type`, `Content-Length`, the handler's own), lowercased, without the
//! connection-specific ones HTTP/2 forbids (RFC 9113 §8.2.2).

use super::hpack::{Encoder, Index};
use crate::date::{DATE_LEN, date_secs, format_imf_fixdate};
use std::cell::Cell;

thread_local! {
    /// This thread's `Date` value and the second it is for: formatted once a second.
    static DATE: Cell<(u64, [u8; DATE_LEN])> = const { Cell::new((u64::MAX, [0; DATE_LEN])) };
}

fn date() -> [u8; DATE_LEN] {
    let secs = date_secs();
    DATE.with(|d| {
        let (at, value) = d.get();
        if at == secs {
            return value;
        }
        let value = format_imf_fixdate(secs);
        d.set((secs, value));
        value
    })
}

/// Writes a response's fields into the block `out` is holding: `:status`, `server`, `date`,
/// then `content-type` and `content-length` when given, then `extra` (names lowercased;
/// `connection`, `keep-alive`, `proxy-connection`, `transfer-encoding` and `upgrade` left
/// out). `server`, `date` and `content-type` go into the dynamic table, so the responses
/// after the first carry them as one octet each; `content-length` and the handler's fields,
/// which change from response to response, do not.
pub fn head(
    enc: &mut Encoder,
    out: &mut Vec<u8>,
    status: u16,
    content_type: Option<&str>,
    content_length: Option<u64>,
    extra: &[(&str, &[u8])],
) {
    enc.status(out, status);
    enc.field(out, b"server", b"twelve", Index::Incremental);
    enc.field(out, b"date", &date(), Index::Incremental);
    if let Some(ct) = content_type {
        enc.field(out, b"content-type", ct.as_bytes(), Index::Incremental);
    }
    if let Some(n) = content_length {
        let mut digits = [0; 20];
        enc.field(out, b"content-length", decimal(n, &mut digits), Index::No);
    }
    for (name, value) in extra {
        field(enc, out, name.as_bytes(), value);
    }
}

/// Writes one handler-given field, its name lowercased (RFC 9113 §8.2.1), unless it is
/// connection-specific.
pub fn field(enc: &mut Encoder, out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    let mut small = [0u8; 64];
    let mut large = Vec::new();
    let lower: &[u8] = if name.len() <= small.len() {
        let s = &mut small[..name.len()];
        s.copy_from_slice(name);
        s.make_ascii_lowercase();
        s
    } else {
        large.extend_from_slice(name);
        large.make_ascii_lowercase();
        &large
    };
    if matches!(
        lower,
        b"connection" | b"keep-alive" | b"proxy-connection" | b"transfer-encoding" | b"upgrade"
    ) {
        return;
    }
    enc.field(out, lower, value, Index::No);
}

/// `n`'s decimal digits, written at the end of `buf`.
pub fn decimal(n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    let mut n = n;
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[i..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_writes_every_width() {
        for (n, s) in [
            (0u64, "0"),
            (7, "7"),
            (10, "10"),
            (13, "13"),
            (u64::MAX, "18446744073709551615"),
        ] {
            assert_eq!(decimal(n, &mut [0; 20]), s.as_bytes());
        }
    }
}
