//! HttpArena's endpoints: the engine profiles (baseline, pipelined, limited-conn, async:
//! `/baseline11` answers the sum of the query's `a` and `b`, plus a POST body's integer,
//! `/pipeline` a fixed `ok`, `/delay/{ms}` the number `ms` after that many milliseconds on the
//! worker's timer wheel, an async handler) and, with [`full_router`], the CPU-bound ones: json
//! and json-comp (`/json/{count}?m=`, `json.rs`), upload (`POST /upload`, the bytes read
//! counted as they stream in) and static (`/static/`, precompressed siblings served to clients
//! that accept them).
//!
//! The contract is HttpArena's `scripts/validate.sh` and its profile documentation
//! (github.com/MDA2AV/HttpArena, `site/content/docs/test-profiles/h1/isolated/`): bodies are
//! compared byte for byte and `Content-Type` must be `text/plain`. What it leaves open (a missing
//! or malformed operand, an overflowing sum) gets a 400 here, on a connection kept open: the
//! request's framing was sound, only its content was not.

mod json;

pub use json::{Dataset, JSON_PREFIX};

use crate::rt::sleep;
use crate::{BodySink, Files, Method, Reply, Request, Response, Router};
use std::time::Duration;

/// The upload profile's path.
pub const UPLOAD_PATH: &str = "/upload";
/// Where the static profile's files are served.
pub const STATIC_PREFIX: &str = "/static";

/// The path of the baseline and limited-conn profiles.
pub const BASELINE_PATH: &str = "/baseline11";
/// The path of the baseline-h2 and baseline-h2c profiles (HTTP/2; GET only): the sum of the
/// query's `a` and `b`, as `/baseline11`'s GET.
pub const BASELINE2_PATH: &str = "/baseline2";
/// The path of the pipelined profile.
pub const PIPELINE_PATH: &str = "/pipeline";
/// The path prefix of the async profile: `/delay/{ms}`.
pub const DELAY_PREFIX: &str = "/delay/";

/// The longest `/delay/{ms}` waits: an hour; a larger number is a 400.
const MAX_DELAY_MS: u64 = 3_600_000;

/// validate.sh accepts `text/plain` with or without parameters; the bare type is the shortest.
const TEXT: &str = "text/plain";

/// The router HttpArena's engine profiles need:
///
/// - `GET /baseline11?a=A&b=B` → `A+B`; `POST /baseline11?a=A&b=B` with body `C`
///   (Content-Length or chunked) → `A+B+C`. Operands are decimal `i64` (`-?[0-9]+`); the body may
///   be surrounded by ASCII whitespace (a trailing newline, as `curl --data-binary @file` sends).
///   Other query parameters are ignored. A missing, repeated or malformed `a` or `b`, a
///   malformed body, or a sum outside `i64` → 400.
/// - `GET /baseline2?a=A&b=B` → `A+B`, with the same rules (HttpArena's h2 profiles).
/// - `GET /pipeline` → `ok`.
/// - `GET /delay/{ms}` → `{ms}` (the parsed number, decimal), answered `ms` milliseconds after
///   the request was read; `0` answers at once. Anything but digits after the prefix, or a
///   wait over an hour → 400.
///
/// Every answer is `text/plain`; `HEAD` works wherever `GET` does.
///
/// ```
/// use twelve_engine::{Config, Server, apps::httparena};
/// let server = Server::new(Config::loopback(1), httparena::router()).start()?;
/// # server.shutdown();
/// # server.join();
/// # Ok::<(), twelve_engine::StartError>(())
/// ```
pub fn router() -> Router {
    Router::new()
        .get(BASELINE_PATH, |req, _body, res| baseline(req, None, res))
        .post(BASELINE_PATH, |req, body, res| {
            baseline(req, Some(body), res)
        })
        .get(BASELINE2_PATH, |req, _body, res| baseline(req, None, res))
        .get(PIPELINE_PATH, |_req, _body, res| {
            res.send(200, TEXT, &[], b"ok")
        })
        .get_async_prefix(DELAY_PREFIX, |req: &Request<'_, '_>, _: &[u8]| {
            let ms = delay_ms(req.path_bytes());
            async move {
                match ms {
                    Some(ms) => {
                        if ms > 0 {
                            sleep(Duration::from_millis(ms)).await;
                        }
                        let mut b = itoa::Buffer::new();
                        Reply::new(200, TEXT, b.format(ms).as_bytes())
                    }
                    None => Reply::new(400, TEXT, &b"400 expected /delay/{ms}, ms a number of milliseconds up to 3600000\n"[..]),
                }
            }
        })
}

/// The `{ms}` of `/delay/{ms}`: decimal digits only, at most [`MAX_DELAY_MS`].
fn delay_ms(path: &[u8]) -> Option<u64> {
    let digits = path.strip_prefix(DELAY_PREFIX.as_bytes())?;
    if digits.is_empty() || digits.len() > 10 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let ms = digits
        .iter()
        .fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
    (ms <= MAX_DELAY_MS).then_some(ms)
}

/// [`router`] plus the CPU-bound profiles: `GET /json/{count}?m=M` over `dataset` (json,
/// json-comp: compressed when the server's `Config::compression` is on and the client asks),
/// `POST /upload` → the number of body bytes read, streamed (bodies up to the server's
/// `Limits::body_bytes`; larger → 413), and `GET /static/...` from `files` (HttpArena mounts
/// them at `/data/static`). Without a dataset or files those paths are 404.
pub fn full_router(dataset: Option<Dataset>, files: Option<Files>) -> Router {
    let mut router = router().streamed(Method::Post, UPLOAD_PATH, |_: &Request<'_, '_>| {
        Box::new(Counted(0)) as Box<dyn BodySink>
    });
    if let Some(dataset) = dataset {
        router = router.prefix(Method::Get, JSON_PREFIX, move |req, _body, res| {
            dataset.answer(req, res)
        });
    }
    if let Some(files) = files {
        let prefix = format!("{STATIC_PREFIX}/");
        router = router.prefix_with(Method::Get, &prefix, files.mounted_at(STATIC_PREFIX));
    }
    router
}

/// An upload's byte count: every byte read is counted as it passes (the rule: the count must
/// come from reading the body, not from `Content-Length`).
struct Counted(u64);

impl BodySink for Counted {
    fn data(&mut self, bytes: &[u8]) {
        self.0 += bytes.len() as u64;
    }

    fn end(self: Box<Self>, _req: &Request<'_, '_>, res: &mut Response<'_>) {
        let mut digits = itoa::Buffer::new();
        res.send(200, TEXT, &[], digits.format(self.0).as_bytes())
    }
}

/// Answers `/baseline11`: a GET ignores any body it carries (`body` is `None`).
fn baseline(req: &Request<'_, '_>, body: Option<&[u8]>, res: &mut Response<'_>) {
    match sum(req.query_bytes(), body) {
        Some(total) => {
            // On the stack: the digits go straight into the connection's output buffer.
            let mut digits = itoa::Buffer::new();
            res.send(200, TEXT, &[], digits.format(total).as_bytes())
        }
        None => res.send(400, TEXT, &[], b"400 Bad Request\n"),
    }
}

/// `a + b`, plus the body's integer when there is a body; `None` when an operand is missing,
/// repeated or malformed, or when the sum overflows.
fn sum(query: Option<&[u8]>, body: Option<&[u8]>) -> Option<i64> {
    let (a, b) = operands(query?)?;
    let total = a.checked_add(b)?;
    match body {
        Some(body) => total.checked_add(int(body.trim_ascii())?),
        None => Some(total),
    }
}

/// The values of `a` and `b` in a query of `&`-separated `name=value` pairs (the
/// `application/x-www-form-urlencoded` shape; nothing here needs percent-decoding). A name
/// given twice is ambiguous and refused rather than resolved first- or last-wins.
fn operands(query: &[u8]) -> Option<(i64, i64)> {
    let (mut a, mut b) = (None, None);
    for pair in query.split(|&c| c == b'&') {
        let (name, value) = match pair.iter().position(|&c| c == b'=') {
            Some(eq) => (&pair[..eq], Some(&pair[eq + 1..])),
            None => (pair, None),
        };
        let slot = match name {
            b"a" => &mut a,
            b"b" => &mut b,
            _ => continue,
        };
        if slot.is_some() {
            return None;
        }
        *slot = Some(int(value?)?);
    }
    Some((a?, b?))
}

/// A decimal `i64`: `int = ["-"] 1*DIGIT`, no `+`, no whitespace, any number of leading
/// zeros. Overflow is `None`, never a wrap or a panic.
fn int(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    if digits.is_empty() {
        return None;
    }
    let mut n: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        let d = i64::from(d - b'0');
        n = n.checked_mul(10)?;
        // Accumulating towards the sign reaches i64::MIN, whose magnitude i64::MAX lacks.
        n = if negative {
            n.checked_sub(d)?
        } else {
            n.checked_add(d)?
        };
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! sums {
        ($($name:ident: $query:expr, $body:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                let (query, body): (Option<&str>, Option<&str>) = ($query, $body);
                assert_eq!(sum(query.map(str::as_bytes), body.map(str::as_bytes)), $want);
            }
        )*};
    }

    macro_rules! delays {
        ($($name:ident: $path:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(delay_ms($path.as_bytes()), $want);
            }
        )*};
    }

    delays! {
        delay_zero: "/delay/0" => Some(0);
        delay_leading_zeros: "/delay/007" => Some(7);
        delay_an_hour: "/delay/3600000" => Some(3_600_000);
        delay_past_an_hour: "/delay/3600001" => None;
        delay_empty: "/delay/" => None;
        delay_sign: "/delay/-1" => None;
        delay_letters: "/delay/1x" => None;
        delay_subpath: "/delay/1/2" => None;
        delay_overflow: "/delay/99999999999999999999" => None;
    }

    sums! {
        get_13_42: Some("a=13&b=42"), None => Some(55);
        post_body_20: Some("a=13&b=42"), Some("20") => Some(75);
        order_does_not_matter: Some("b=42&a=13"), None => Some(55);
        other_parameters_ignored: Some("x=1&a=1&y&b=2&z="), None => Some(3);
        empty_pairs_ignored: Some("&a=1&&b=2&"), None => Some(3);
        leading_zeros_are_decimal: Some("a=007&b=010"), None => Some(17);
        negative_operands: Some("a=-5&b=3"), Some("-1") => Some(-3);
        i64_min_parses: Some("a=-9223372036854775808&b=0"), None => Some(i64::MIN);
        i64_max_parses: Some("a=9223372036854775807&b=0"), None => Some(i64::MAX);
        body_newline_trimmed: Some("a=1&b=2"), Some("3\n") => Some(6);
        body_crlf_and_spaces_trimmed: Some("a=1&b=2"), Some(" \t3\r\n") => Some(6);
        no_query: None, None => None;
        empty_query: Some(""), None => None;
        missing_a: Some("b=42"), None => None;
        missing_b: Some("a=13"), None => None;
        a_without_value: Some("a&b=1"), None => None;
        a_empty_value: Some("a=&b=1"), None => None;
        a_letters: Some("a=x&b=1"), None => None;
        a_digit_then_letter: Some("a=1x&b=1"), None => None;
        a_plus_sign: Some("a=+1&b=1"), None => None;
        a_lone_minus: Some("a=-&b=1"), None => None;
        a_double_minus: Some("a=--1&b=1"), None => None;
        a_hex: Some("a=0x10&b=1"), None => None;
        a_percent_encoded: Some("a=%31&b=1"), None => None;
        a_repeated: Some("a=1&a=1&b=1"), None => None;
        b_repeated_after_error_free_a: Some("a=1&b=1&b=2"), None => None;
        a_above_i64_max: Some("a=9223372036854775808&b=0"), None => None;
        a_below_i64_min: Some("a=-9223372036854775809&b=0"), None => None;
        a_forty_digits: Some("a=1234567890123456789012345678901234567890&b=0"), None => None;
        sum_overflows: Some("a=9223372036854775807&b=1"), None => None;
        sum_underflows: Some("a=-9223372036854775808&b=-1"), None => None;
        body_overflows_the_sum: Some("a=9223372036854775807&b=0"), Some("1") => None;
        post_empty_body: Some("a=1&b=2"), Some("") => None;
        post_whitespace_body: Some("a=1&b=2"), Some(" \r\n") => None;
        post_body_inner_space: Some("a=1&b=2"), Some("2 0") => None;
        post_body_letters: Some("a=1&b=2"), Some("abc") => None;
        post_body_form_encoded: Some("a=1&b=2"), Some("c=20") => None;
    }
}
