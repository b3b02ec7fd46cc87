//! Request-target forms (RFC 9112 §3.2): origin, absolute, authority and asterisk, and which
//! method may use which.

use crate::error::ParseError;
use crate::request::Method;
use crate::scan::is_valid_authority;

/// A request-target split into its parts, as bytes: the target is ASCII (its scan admits no
/// other byte), and a `&str` of each part is made only when a handler asks for it (see
/// `Request::path`).
pub(crate) struct Form<'b> {
    pub(crate) path: &'b [u8],
    pub(crate) query: Option<&'b [u8]>,
    /// The authority named by an absolute-form or authority-form target.
    pub(crate) authority: Option<&'b [u8]>,
}

/// Splits a request-target (whose bytes the scanner already checked) by form.
///
/// - origin-form `absolute-path [ "?" query ]`: any method but CONNECT.
/// - absolute-form `http://authority/path?query`: servers MUST accept it, and its authority
///   replaces the Host field (§3.2.2). Only `http` and `https`; userinfo (`u@a`) is rejected,
///   as RFC 9110 §4.2.4 asks recipients to treat it as an error.
/// - authority-form `host:port`: only, and always, for CONNECT (§3.2.3).
/// - asterisk-form `*`: only for OPTIONS (§3.2.4).
///
/// `query_at` is the index of the target's first `?`, or its length: the scanner finds it in
/// the same class scan that checks the target's bytes (see `skip_path`), which saves a second
/// pass over the origin-form's path.
///
/// The origin-form, nearly every request, is split inline; the other forms out of line.
#[inline(always)]
pub(crate) fn split(
    method: Method,
    target: &[u8],
    query_at: usize,
) -> Result<Form<'_>, ParseError> {
    if target.first() == Some(&b'/') && method != Method::Connect {
        let (path, query) = split_at_query(target, query_at);
        return Ok(Form {
            path,
            query,
            authority: None,
        });
    }
    split_other(method, target, query_at)
}

/// [`split`] for every target but a non-CONNECT origin-form.
#[inline(never)]
fn split_other(method: Method, target: &[u8], query_at: usize) -> Result<Form<'_>, ParseError> {
    if method == Method::Connect {
        // authority-form = uri-host ":" port, the port required.
        let has_port = target
            .iter()
            .rposition(|&c| c == b':')
            .is_some_and(|p| p + 1 < target.len());
        if !has_port || target.starts_with(b"/") || !is_valid_authority(target, false) {
            return Err(ParseError::TargetFormMismatch);
        }
        return Ok(Form {
            path: b"",
            query: None,
            authority: Some(target),
        });
    }
    if target == b"*" {
        if method != Method::Options {
            return Err(ParseError::TargetFormMismatch);
        }
        return Ok(Form {
            path: b"*",
            query: None,
            authority: None,
        });
    }
    if target.starts_with(b"/") {
        let (path, query) = split_at_query(target, query_at);
        return Ok(Form {
            path,
            query,
            authority: None,
        });
    }
    absolute(target)
}

/// Splits at the first `?`.
fn split_query(s: &[u8]) -> (&[u8], Option<&[u8]>) {
    split_at_query(s, s.iter().position(|&b| b == b'?').unwrap_or(s.len()))
}

/// Splits at `q`, the index of the first `?` or the length.
#[inline(always)]
fn split_at_query(s: &[u8], q: usize) -> (&[u8], Option<&[u8]>) {
    match s.get(q + 1..) {
        Some(query) => (&s[..q], Some(query)),
        None => (s, None),
    }
}

/// `absolute-URI` restricted to `http` / `https` with a non-empty authority (RFC 9110 §4.2.1).
fn absolute(target: &[u8]) -> Result<Form<'_>, ParseError> {
    let rest = strip_prefix_ignore_case(target, b"http://")
        .or_else(|| strip_prefix_ignore_case(target, b"https://"))
        // `a:443` with GET, `*` with GET, `x/y`: not a form this method may use.
        .ok_or(ParseError::TargetFormMismatch)?;
    let end = rest
        .iter()
        .position(|&b| b == b'/' || b == b'?')
        .unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    if !is_valid_authority(authority, false) {
        return Err(ParseError::InvalidTarget);
    }
    let (path, query) = split_query(tail);
    Ok(Form {
        path: if path.is_empty() { b"/" } else { path },
        query,
        authority: Some(authority),
    })
}

fn strip_prefix_ignore_case<'a>(s: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    let (head, rest) = s.split_at_checked(prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! query {
        ($($name:ident: $target:expr => $path:expr, $query:expr;)*) => {$(
            #[test]
            fn $name() {
                let (target, want): (&str, (&str, Option<&str>)) = ($target, ($path, $query));
                let want = (want.0.as_bytes(), want.1.map(str::as_bytes));
                assert_eq!(split_query(target.as_bytes()), want);
                let q = target.find('?').unwrap_or(target.len());
                assert_eq!(split_at_query(target.as_bytes(), q), want);
            }
        )*};
    }

    /// Each form with the methods that may and may not use it, through the inline
    /// origin-form path and `split_other` alike.
    macro_rules! form {
        ($($name:ident: $method:ident $target:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                let target: &str = $target;
                let q = target.find('?').unwrap_or(target.len());
                let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
                let got = split(Method::$method, target.as_bytes(), q).map(|f| {
                    (text(f.path), f.query.map(text), f.authority.map(text))
                });
                let want: Result<(&str, Option<&str>, Option<&str>), ParseError> = $want;
                let want = want.map(|(p, q, a)| {
                    (p.to_owned(), q.map(str::to_owned), a.map(str::to_owned))
                });
                assert_eq!(got, want);
            }
        )*};
    }

    form! {
        form_origin: Get "/a?b" => Ok(("/a", Some("b"), None));
        form_origin_no_query: Post "/" => Ok(("/", None, None));
        form_origin_with_connect: Connect "/a:80" => Err(ParseError::TargetFormMismatch);
        form_asterisk_options: Options "*" => Ok(("*", None, None));
        form_asterisk_get: Get "*" => Err(ParseError::TargetFormMismatch);
        form_authority_connect: Connect "a.b:443" => Ok(("", None, Some("a.b:443")));
        form_authority_connect_no_port: Connect "a.b" => Err(ParseError::TargetFormMismatch);
        form_authority_get: Get "a.b:443" => Err(ParseError::TargetFormMismatch);
        form_absolute: Get "http://a.b:8080/p?q" => Ok(("/p", Some("q"), Some("a.b:8080")));
        form_absolute_no_path: Head "HTTPS://a" => Ok(("/", None, Some("a")));
        form_absolute_userinfo: Get "http://u@a/" => Err(ParseError::InvalidTarget);
        form_absolute_other_scheme: Get "ftp://a/" => Err(ParseError::TargetFormMismatch);
    }

    query! {
        query_none: "/plaintext" => "/plaintext", None;
        query_empty: "/?" => "/", Some("");
        query_first_question_mark_splits: "/a?b?c" => "/a", Some("b?c");
        query_after_a_16_byte_step: "/abcdefghijklmnopqrstu?x=1" => "/abcdefghijklmnopqrstu", Some("x=1");
        query_at_byte_16: "/abcdefghijklmno?x" => "/abcdefghijklmno", Some("x");
        query_only_path_at_16_bytes: "/abcdefghijklmno" => "/abcdefghijklmno", None;
    }
}
