//! Targets files in vegeta's format (`vegeta attack -targets`): blocks separated by blank
//! lines, each a `METHOD URL` line, then `Name: value` header lines, then an optional
//! `@path` line naming the body's file; `#` starts a comment line.
//!
//! ```text
//! GET http://127.0.0.1:8080/json
//! X-Account-ID: 8675309
//!
//! POST http://127.0.0.1:8080/things
//! Content-Type: application/json
//! @/tmp/newthing.json
//! ```
use crate::config::{ConfigError, Target};

/// Parses a targets file's text; `read_body` reads an `@path` body.
pub fn parse_targets(
    text: &str,
    read_body: impl FnMut(&str) -> std::io::Result<Vec<u8>>,
) -> Result<Vec<Target>, ConfigError> {
    parse_targets_to(text, None, read_body)
}

/// [`parse_targets`], every target connecting to `connect_to` when given (`--connect-to`), so
/// their hosts need not resolve.
pub fn parse_targets_to(
    text: &str,
    connect_to: Option<std::net::SocketAddr>,
    mut read_body: impl FnMut(&str) -> std::io::Result<Vec<u8>>,
) -> Result<Vec<Target>, ConfigError> {
    let mut out: Vec<Target> = Vec::new();
    let mut current: Option<Target> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let bad = |why: String| ConfigError(format!("--targets line {}: {why}", n + 1));
        if line.starts_with('#') {
            continue;
        }
        if line.is_empty() {
            out.extend(current.take());
            continue;
        }
        match &mut current {
            None => {
                let (method, url) = line
                    .split_once(char::is_whitespace)
                    .ok_or_else(|| bad(format!("expected METHOD URL, got {line:?}")))?;
                if !method.bytes().all(|b| b.is_ascii_alphabetic()) {
                    return Err(bad(format!("{method:?} is not a method")));
                }
                let mut t =
                    Target::parse_at(url.trim(), connect_to).map_err(|e| bad(e.to_string()))?;
                t.method = Some(method.to_ascii_uppercase());
                current = Some(t);
            }
            Some(t) => {
                if let Some(path) = line.strip_prefix('@') {
                    let body = read_body(path.trim())
                        .map_err(|e| bad(format!("body {}: {e}", path.trim())))?;
                    t.body = Some(body);
                } else if t.body.is_some() {
                    return Err(bad("nothing may follow the @body line of a target".into()));
                } else if line.split_once(':').is_some_and(|(name, _)| {
                    !name.is_empty() && !name.contains(char::is_whitespace)
                }) {
                    t.headers.push(line.to_string());
                } else {
                    return Err(bad(format!(
                        "expected a header (Name: value), got {line:?}"
                    )));
                }
            }
        }
    }
    out.extend(current);
    if out.is_empty() {
        return Err(ConfigError("--targets: the file names no target".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Target>, ConfigError> {
        parse_targets(text, |p| Ok(format!("<{p}>").into_bytes()))
    }

    #[test]
    fn vegeta_blocks_with_headers_and_a_body() {
        let t = parse(
            "# two targets\nGET http://127.0.0.1:9/json\nX-Account-ID: 8675309\n\n\
             post http://127.0.0.1:9/things\nContent-Type: application/json\n@new.json\n",
        )
        .unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(
            (t[0].method.as_deref(), t[0].path.as_str()),
            (Some("GET"), "/json")
        );
        assert_eq!(t[0].headers, ["X-Account-ID: 8675309"]);
        assert_eq!(t[0].body, None);
        assert_eq!(t[1].method.as_deref(), Some("POST"));
        assert_eq!(t[1].headers, ["Content-Type: application/json"]);
        assert_eq!(t[1].body.as_deref(), Some(&b"<new.json>"[..]));
    }

    macro_rules! refused {
        ($name:ident, $text:expr, $says:expr) => {
            #[test]
            fn $name() {
                let err = parse($text).unwrap_err().to_string();
                assert!(err.contains($says), "{err}");
            }
        };
    }

    refused!(empty_file, "# nothing\n", "names no target");
    refused!(no_url, "GET\n", "--targets line 1: expected METHOD URL");
    refused!(
        bad_url,
        "GET ftp://x/\n",
        "--targets line 1: URL \"ftp://x/\""
    );
    refused!(
        bad_header,
        "GET http://127.0.0.1:9/\nnot a header\n",
        "line 2: expected a header"
    );
    refused!(
        header_after_body,
        "GET http://127.0.0.1:9/\n@b\nX: 1\n",
        "line 3: nothing may follow the @body line"
    );
}
