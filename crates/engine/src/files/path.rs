//! Request-target → a relative path under the static root that cannot climb out of it.
//!
//! The lexical rules here are the first of two fences; the second is the kernel
//! (`openat2(RESOLVE_BENEATH)`, see `open.rs`), which also stops symlinks that point out.
//!
//! Choices, strict where a static server loses nothing by being strict:
//! - Only origin-form (`/…`) is accepted; the engine passes the path of an absolute-form target.
//! - The query (`?…`) is dropped. A `#` is refused (clients never send fragments, RFC 9112 §3.2).
//! - Percent-decoding per RFC 3986 §2.1; a `%` not followed by two hex digits is refused.
//! - `%2F` and `%5C` are refused: a decoded separator would let one segment name two
//!   (Apache's `AllowEncodedSlashes Off` answers 404 for the same reason). A raw `\` is refused too.
//! - NUL and other control bytes, raw or decoded, are refused (a NUL would truncate the C path).
//! - The decoded path must be UTF-8. This refuses overlong encodings such as `%c0%ae` (an
//!   overlong `.`), the IIS-era traversal trick, because Rust's UTF-8 check rejects them.
//! - Dot segments (also when encoded: `%2e%2e`) are removed as RFC 3986 §5.2.4 does, but one that
//!   would climb above the root is refused (nginx answers 400 for the same input).

/// Why a request-target was refused. Every variant is answered 400 Bad Request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PathError {
    /// Not origin-form: does not start with `/`.
    NotOriginForm,
    /// Contains `#`.
    Fragment,
    /// `%` not followed by two hex digits.
    BadPercent,
    /// NUL or another control byte, raw or percent-encoded.
    Control,
    /// `%2F` or `%5C`: an encoded separator.
    EncodedSeparator,
    /// A raw backslash.
    Backslash,
    /// The decoded bytes are not UTF-8 (includes overlong encodings like `%c0%ae`).
    NotUtf8,
    /// A `..` segment would leave the root.
    AboveRoot,
}

/// A normalised path, relative to the static root.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct CleanPath {
    /// Segments joined by `/`, no leading `/`, no empty, `.` or `..` segment; `""` is the root.
    pub(crate) rel: String,
    /// The request path ended with `/` (or named the root): a directory was asked for.
    pub(crate) trailing_slash: bool,
}

/// Normalises a request-target. See the module docs for the rules.
pub(crate) fn normalize(target: &[u8]) -> Result<CleanPath, PathError> {
    if target.first() != Some(&b'/') {
        return Err(PathError::NotOriginForm);
    }
    let path = match target.iter().position(|&b| b == b'?') {
        Some(q) => &target[..q],
        None => target,
    };
    if path.contains(&b'#') {
        return Err(PathError::Fragment);
    }
    let mut segments: Vec<String> = Vec::new();
    let mut decoded = Vec::new();
    let raw_segments = path[1..].split(|&b| b == b'/');
    let mut last_was_dir = true;
    for raw in raw_segments {
        decode_segment(raw, &mut decoded)?;
        let seg = std::str::from_utf8(&decoded).map_err(|_| PathError::NotUtf8)?;
        match seg {
            "" | "." => last_was_dir = true,
            ".." => {
                segments.pop().ok_or(PathError::AboveRoot)?;
                last_was_dir = true;
            }
            _ => {
                segments.push(seg.to_owned());
                last_was_dir = false;
            }
        }
    }
    Ok(CleanPath {
        rel: segments.join("/"),
        trailing_slash: last_was_dir,
    })
}

/// Percent-decodes one raw segment into `out` (cleared first), refusing what the module
/// docs list.
fn decode_segment(raw: &[u8], out: &mut Vec<u8>) -> Result<(), PathError> {
    out.clear();
    let mut i = 0;
    while i < raw.len() {
        let b = match raw[i] {
            b'%' => {
                let hi = raw.get(i + 1).and_then(|&h| twelve_http::hex_digit(h));
                let lo = raw.get(i + 2).and_then(|&l| twelve_http::hex_digit(l));
                let (Some(hi), Some(lo)) = (hi, lo) else {
                    return Err(PathError::BadPercent);
                };
                i += 2;
                match hi << 4 | lo {
                    b'/' | b'\\' => return Err(PathError::EncodedSeparator),
                    b => b,
                }
            }
            b'\\' => return Err(PathError::Backslash),
            b => b,
        };
        if b < 0x20 || b == 0x7f {
            return Err(PathError::Control);
        }
        out.push(b);
        i += 1;
    }
    Ok(())
}

/// Writes `/` + `rel` + `/` percent-encoded for a `Location` header: every byte outside
/// RFC 3986's unreserved set and a few safe sub-delims is encoded, so nothing the client sent
/// can inject a header or change the path's meaning.
pub(crate) fn directory_location(rel: &str) -> String {
    let mut out = String::with_capacity(rel.len() + 2);
    out.push('/');
    for &b in rel.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/".contains(&b) {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(char::from(b"0123456789ABCDEF"[usize::from(b >> 4)]));
            out.push(char::from(b"0123456789ABCDEF"[usize::from(b & 15)]));
        }
    }
    if !rel.is_empty() {
        out.push('/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! norm {
        ($($name:ident: $input:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                let got = normalize($input).map(|c| (c.rel, c.trailing_slash));
                let want: Result<(&str, bool), PathError> = $want;
                assert_eq!(got, want.map(|(r, t)| (r.to_owned(), t)));
            }
        )*};
    }

    use PathError::*;
    norm! {
        root: b"/" => Ok(("", true));
        plain_file: b"/a.txt" => Ok(("a.txt", false));
        nested_file: b"/dir/sub/a.txt" => Ok(("dir/sub/a.txt", false));
        directory_with_slash: b"/dir/" => Ok(("dir", true));
        query_dropped: b"/a.txt?x=../../etc/passwd" => Ok(("a.txt", false));
        percent_space_decoded: b"/a%20b.txt" => Ok(("a b.txt", false));
        utf8_name_decoded: b"/caf%C3%A9" => Ok(("caf\u{e9}", false));
        empty_segments_collapse: b"//a//b" => Ok(("a/b", false));
        dot_segments_removed: b"/a/./b/../c" => Ok(("a/c", false));
        dotdot_to_root_is_directory: b"/a/.." => Ok(("", true));
        encoded_dots_removed_inside_root: b"/a/%2e%2E/b" => Ok(("b", false));
        plus_is_not_space: b"/a+b" => Ok(("a+b", false));
        dotdot_above_root: b"/../etc/passwd" => Err(AboveRoot);
        encoded_dotdot_above_root: b"/%2e%2e/%2e%2e/etc/passwd" => Err(AboveRoot);
        deep_then_too_many_dotdots: b"/a/b/../../../etc" => Err(AboveRoot);
        encoded_slash_lower: b"/%2f.." => Err(EncodedSeparator);
        encoded_slash_upper: b"/a%2Fb" => Err(EncodedSeparator);
        encoded_backslash: b"/..%5c..%5cetc" => Err(EncodedSeparator);
        raw_backslash: b"/..\\x" => Err(Backslash);
        encoded_nul: b"/a%00.txt" => Err(Control);
        raw_nul: b"/a\x00.txt" => Err(Control);
        encoded_newline: b"/a%0d%0aX: y" => Err(Control);
        encoded_del: b"/a%7f" => Err(Control);
        overlong_dot: b"/%c0%ae%c0%ae/etc/passwd" => Err(NotUtf8);
        overlong_slash: b"/..%c0%afetc" => Err(NotUtf8);
        lone_continuation_byte: b"/%80" => Err(NotUtf8);
        truncated_percent: b"/a%2" => Err(BadPercent);
        percent_non_hex: b"/a%zz" => Err(BadPercent);
        percent_at_end: b"/a%" => Err(BadPercent);
        fragment: b"/a#frag" => Err(Fragment);
        asterisk_form: b"*" => Err(NotOriginForm);
        absolute_form: b"http://a/x" => Err(NotOriginForm);
        empty_target: b"" => Err(NotOriginForm);
    }

    /// Every sequence of up to 5 tricky tokens after the leading `/` (11^5 targets): whatever
    /// is accepted is a clean relative path (no `..`, `.` or empty component, no leading `/`,
    /// no control byte or backslash).
    #[test]
    fn every_accepted_path_is_clean_and_relative() {
        const TOKENS: [&str; 11] = [
            "/", "..", ".", "%2e", "%2E%2e", "a", "%2f", "%00", "\\", "%c0%ae", "%5c",
        ];
        fn walk(target: &mut String, depth: usize, accepted: &mut usize) {
            if let Ok(c) = normalize(target.as_bytes()) {
                *accepted += 1;
                assert!(!c.rel.starts_with('/'), "{target} -> {c:?}");
                if !c.rel.is_empty() {
                    for comp in c.rel.split('/') {
                        assert!(!matches!(comp, "" | "." | ".."), "{target} -> {c:?}");
                        let bad = |b: u8| b < 0x20 || b == 0x7f || b == b'\\';
                        assert!(!comp.bytes().any(bad), "{target} -> {c:?}");
                    }
                }
            }
            if depth == 0 {
                return;
            }
            for tok in TOKENS {
                let len = target.len();
                target.push_str(tok);
                walk(target, depth - 1, accepted);
                target.truncate(len);
            }
        }
        let mut accepted = 0;
        walk(&mut String::from("/"), 5, &mut accepted);
        assert!(
            accepted > 1000,
            "only {accepted} targets accepted: the test checks little"
        );
    }

    #[test]
    fn location_encodes_unsafe_bytes() {
        assert_eq!(directory_location("a b/caf\u{e9}"), "/a%20b/caf%C3%A9/");
    }

    #[test]
    fn location_of_root_is_single_slash() {
        assert_eq!(directory_location(""), "/");
    }
}
