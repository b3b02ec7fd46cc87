//! A request's decoded header block, checked against RFC 9113 §8.2 and §8.3.1 as HPACK hands
//! over each field, and read back as the same [`Request`] HTTP/1.1's parser gives handlers.

use crate::{BodyFraming, Header, Method, Request, Version};

/// Why a request's header block was malformed (RFC 9113 §8.1.1): a stream error
/// PROTOCOL_ERROR, one counter each in /metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Malformed {
    /// `:method`, `:scheme` or `:path` missing (§8.3.1).
    MissingPseudo,
    /// A pseudo-header field twice (§8.3.1).
    DuplicatePseudo,
    /// A pseudo-header field requests do not have, `:status` included (§8.3).
    UnknownPseudo,
    /// A pseudo-header field after a regular one (§8.3).
    PseudoAfterRegular,
    /// A field name with an uppercase letter (§8.2.1).
    Uppercase,
    /// A field name that is empty or not a token (§8.2.1).
    BadName,
    /// A value with NUL, CR or LF, or with whitespace at either end (§8.2.1).
    BadValue,
    /// A connection-specific field (`connection`, `keep-alive`, `proxy-connection`,
    /// `transfer-encoding`, `upgrade`), or `te` other than `trailers` (§8.2.2).
    ConnectionSpecific,
    /// An empty `:path`, or one that is neither origin-form nor `*` for OPTIONS (§8.3.1).
    BadPath,
    /// A `content-length` that is not a number, or two that differ (RFC 9110 §8.6).
    BadContentLength,
    /// DATA that added up to more or less than `content-length` (§8.1.1).
    ContentLengthMismatch,
    /// Trailers without END_STREAM, or with pseudo-header fields (§8.1).
    BadTrailers,
}

/// A field's place in [`Fields::bytes`].
#[derive(Debug, Clone, Copy, Default)]
struct Span {
    start: u32,
    name_end: u32,
    end: u32,
}

/// The fields of one request, copied out of HPACK's output: the bytes of every name and value,
/// and where the pseudo-header fields are. Reused from request to request (no allocation once
/// grown).
#[derive(Debug, Default)]
pub struct Fields {
    bytes: Vec<u8>,
    regular: Vec<Span>,
    method: Option<Span>,
    scheme: Option<Span>,
    authority: Option<Span>,
    path: Option<Span>,
    /// The value of `content-length`, if any.
    pub content_length: Option<u64>,
    error: Option<Malformed>,
    trailers: bool,
}

impl Fields {
    /// Empties the fields for the next block.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.regular.clear();
        self.method = None;
        self.scheme = None;
        self.authority = None;
        self.path = None;
        self.content_length = None;
        self.error = None;
        self.trailers = false;
    }

    /// Starts a trailer block on a request whose fields are kept: trailers are checked, then
    /// dropped (handlers see the head's fields only).
    pub(crate) fn begin_trailers(&mut self) {
        self.trailers = true;
    }

    /// The first rule the block broke, if any.
    pub fn error(&self) -> Option<Malformed> {
        self.error
    }

    /// Takes one decoded field; the first rule it breaks is kept and later fields ignored.
    pub(crate) fn push(&mut self, name: &[u8], value: &[u8]) {
        if self.error.is_none()
            && let Err(e) = self.check_push(name, value)
        {
            self.error = Some(e);
        }
    }

    fn check_push(&mut self, name: &[u8], value: &[u8]) -> Result<(), Malformed> {
        check_value(value)?;
        if let Some(pseudo) = name.strip_prefix(b":") {
            if self.trailers {
                return Err(Malformed::BadTrailers);
            }
            if !self.regular.is_empty() {
                return Err(Malformed::PseudoAfterRegular);
            }
            let span = self.store(name, value);
            let slot = match pseudo {
                b"method" => &mut self.method,
                b"scheme" => &mut self.scheme,
                b"authority" => &mut self.authority,
                b"path" => &mut self.path,
                _ => return Err(Malformed::UnknownPseudo),
            };
            if slot.replace(span).is_some() {
                return Err(Malformed::DuplicatePseudo);
            }
            return Ok(());
        }
        check_name(name)?;
        match name {
            b"connection" | b"keep-alive" | b"proxy-connection" | b"transfer-encoding"
            | b"upgrade" => return Err(Malformed::ConnectionSpecific),
            b"te" if value != b"trailers" => return Err(Malformed::ConnectionSpecific),
            b"content-length" if !self.trailers => {
                let n = parse_length(value).ok_or(Malformed::BadContentLength)?;
                if self.content_length.is_some_and(|m| m != n) {
                    return Err(Malformed::BadContentLength);
                }
                self.content_length = Some(n);
            }
            _ => {}
        }
        if !self.trailers {
            let span = self.store(name, value);
            self.regular.push(span);
        }
        Ok(())
    }

    fn store(&mut self, name: &[u8], value: &[u8]) -> Span {
        let start = self.bytes.len() as u32;
        self.bytes.extend_from_slice(name);
        let name_end = self.bytes.len() as u32;
        self.bytes.extend_from_slice(value);
        Span {
            start,
            name_end,
            end: self.bytes.len() as u32,
        }
    }

    /// Checks what can only be checked once the block is whole: the pseudo-header fields a
    /// request needs (§8.3.1), and the path's form.
    pub(crate) fn finish(&mut self) {
        if self.error.is_some() || self.trailers {
            return;
        }
        let connect = self.method.map(|s| self.value(s)) == Some(b"CONNECT");
        let complete =
            self.method.is_some() && (connect || (self.scheme.is_some() && self.path.is_some()));
        if !complete {
            self.error = Some(Malformed::MissingPseudo);
            return;
        }
        if let Some(p) = self.path {
            let path = self.value(p);
            let options = self.method.map(|s| self.value(s)) == Some(b"OPTIONS");
            let ok = path.first() == Some(&b'/') || (options && path == b"*");
            if !ok || !path.iter().all(|&b| b > 0x20 && b < 0x7f) {
                self.error = Some(Malformed::BadPath);
            }
        }
    }

    fn value(&self, s: Span) -> &[u8] {
        &self.bytes[s.name_end as usize..s.end as usize]
    }

    fn name(&self, s: Span) -> &[u8] {
        &self.bytes[s.start as usize..s.name_end as usize]
    }

    /// The `:method` as sent, if any.
    pub fn method_bytes(&self) -> Option<&[u8]> {
        self.method.map(|s| self.value(s))
    }

    /// How many regular (non-pseudo) fields the request has.
    pub fn len(&self) -> usize {
        self.regular.len()
    }

    /// Whether the request has no regular fields.
    pub fn is_empty(&self) -> bool {
        self.regular.is_empty()
    }

    /// The request as handlers see it, its regular fields in `headers`; `None` when `:method`
    /// names a method this server does not implement (a 501, as for HTTP/1.1) or `headers`
    /// is too short (a 431). `body_len` is the length of the body that came with it.
    pub fn request<'h, 'b>(
        &'b self,
        headers: &'h mut [Header<'b>],
        body_len: u64,
    ) -> Option<Request<'h, 'b>> {
        let method = Method::from_bytes(self.method_bytes()?)?;
        if headers.len() < self.regular.len() {
            return None;
        }
        for (slot, &s) in headers.iter_mut().zip(&self.regular) {
            *slot = Header {
                // Checked to be a token when pushed, so ASCII.
                name: std::str::from_utf8(self.name(s)).unwrap_or_default(),
                value: self.value(s),
            };
        }
        let target = self.path.map_or(&b""[..], |s| self.value(s));
        let (path, query) = match target.iter().position(|&b| b == b'?') {
            Some(q) => (&target[..q], Some(&target[q + 1..])),
            None => (target, None),
        };
        let host = self
            .authority
            .map(|s| self.value(s))
            .or_else(|| {
                self.regular
                    .iter()
                    .find(|&&s| self.name(s) == b"host")
                    .map(|&s| self.value(s))
            })
            .filter(|h| h.is_ascii());
        let framing = match (self.content_length, body_len) {
            (None, 0) => BodyFraming::None,
            _ => BodyFraming::Length(body_len),
        };
        Some(Request {
            method,
            target,
            path,
            query,
            version: Version::Http2,
            headers: &headers[..self.regular.len()],
            host,
            framing,
            keep_alive: true,
            expect_continue: false,
            head_len: 0,
        })
    }
}

/// RFC 9113 §8.2.1: a field name is a lowercase token.
fn check_name(name: &[u8]) -> Result<(), Malformed> {
    if name.is_empty() {
        return Err(Malformed::BadName);
    }
    for &b in name {
        if b.is_ascii_uppercase() {
            return Err(Malformed::Uppercase);
        }
        if !is_tchar(b) {
            return Err(Malformed::BadName);
        }
    }
    Ok(())
}

/// RFC 9113 §8.2.1: no NUL, CR or LF in a value, and no whitespace at its ends.
fn check_value(value: &[u8]) -> Result<(), Malformed> {
    let ws = |b: &u8| *b == b' ' || *b == b'\t';
    if value.first().is_some_and(ws) || value.last().is_some_and(ws) {
        return Err(Malformed::BadValue);
    }
    if value.iter().any(|&b| b == 0 || b == b'\r' || b == b'\n') {
        return Err(Malformed::BadValue);
    }
    Ok(())
}

/// RFC 9110 §5.6.2's tchar.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn parse_length(v: &[u8]) -> Option<u64> {
    if v.is_empty() || v.len() > 19 {
        return None;
    }
    v.iter().try_fold(0u64, |n, &b| {
        b.is_ascii_digit().then(|| n * 10 + u64::from(b - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(fields: &[(&str, &str)]) -> Fields {
        let mut f = Fields::default();
        for (n, v) in fields {
            f.push(n.as_bytes(), v.as_bytes());
        }
        f.finish();
        f
    }

    const GET: &[(&str, &str)] = &[
        (":method", "GET"),
        (":scheme", "https"),
        (":authority", "example.com"),
        (":path", "/a/b?x=1"),
    ];

    #[test]
    fn a_plain_get_reads_as_the_request_http1_would_give() {
        let mut all = GET.to_vec();
        all.push(("accept", "*/*"));
        let f = block(&all);
        assert_eq!(f.error(), None);
        let mut headers = [Header::EMPTY; 4];
        let req = f.request(&mut headers, 0).unwrap();
        assert_eq!(req.method, Method::Get);
        assert_eq!((req.path(), req.query()), ("/a/b", Some("x=1")));
        assert_eq!(req.target(), "/a/b?x=1");
        assert_eq!(req.host(), Some("example.com"));
        assert_eq!(req.version, Version::Http2);
        assert_eq!(req.framing, BodyFraming::None);
        assert_eq!(req.headers.len(), 1);
        assert_eq!(req.headers[0].name, "accept");
    }

    #[test]
    fn each_broken_rule_is_named() {
        let cases: &[(&[(&str, &str)], Malformed)] = &[
            (
                &[(":method", "GET"), (":path", "/")],
                Malformed::MissingPseudo,
            ),
            (
                &[(":scheme", "http"), (":path", "/")],
                Malformed::MissingPseudo,
            ),
            (
                &[(":method", "GET"), (":scheme", "http")],
                Malformed::MissingPseudo,
            ),
            (
                &[
                    (":method", "GET"),
                    (":method", "GET"),
                    (":scheme", "http"),
                    (":path", "/"),
                ],
                Malformed::DuplicatePseudo,
            ),
            (
                &[
                    (":method", "GET"),
                    (":status", "200"),
                    (":scheme", "http"),
                    (":path", "/"),
                ],
                Malformed::UnknownPseudo,
            ),
            (
                &[
                    (":method", "GET"),
                    ("accept", "x"),
                    (":scheme", "http"),
                    (":path", "/"),
                ],
                Malformed::PseudoAfterRegular,
            ),
            (
                &[
                    (":method", "GET"),
                    (":scheme", "http"),
                    (":path", "/"),
                    ("Accept", "x"),
                ],
                Malformed::Uppercase,
            ),
            (
                &[
                    (":method", "GET"),
                    (":scheme", "http"),
                    (":path", "/"),
                    ("a b", "x"),
                ],
                Malformed::BadName,
            ),
            (
                &[
                    (":method", "GET"),
                    (":scheme", "http"),
                    (":path", "/"),
                    ("a", " x"),
                ],
                Malformed::BadValue,
            ),
            (
                &[
                    (":method", "GET"),
                    (":scheme", "http"),
                    (":path", "/"),
                    ("a", "x\r\ny"),
                ],
                Malformed::BadValue,
            ),
            (
                &[
                    (":method", "GET"),
                    (":scheme", "http"),
                    (":path", "/"),
                    ("connection", "close"),
                ],
                Malformed::ConnectionSpecific,
            ),
            (
                &[
                    (":method", "GET"),
                    (":scheme", "http"),
                    (":path", "/"),
                    ("te", "gzip"),
                ],
                Malformed::ConnectionSpecific,
            ),
            (
                &[(":method", "GET"), (":scheme", "http"), (":path", "")],
                Malformed::BadPath,
            ),
            (
                &[(":method", "GET"), (":scheme", "http"), (":path", "*")],
                Malformed::BadPath,
            ),
            (
                &[
                    (":method", "POST"),
                    (":scheme", "http"),
                    (":path", "/"),
                    ("content-length", "1"),
                    ("content-length", "2"),
                ],
                Malformed::BadContentLength,
            ),
            (
                &[
                    (":method", "POST"),
                    (":scheme", "http"),
                    (":path", "/"),
                    ("content-length", "x"),
                ],
                Malformed::BadContentLength,
            ),
        ];
        for (fields, want) in cases {
            assert_eq!(block(fields).error(), Some(*want), "{fields:?}");
        }
    }

    #[test]
    fn accepted_edge_cases() {
        let ok: &[&[(&str, &str)]] = &[
            &[(":method", "OPTIONS"), (":scheme", "http"), (":path", "*")],
            &[(":method", "CONNECT"), (":authority", "a:443")],
            &[
                (":method", "GET"),
                (":scheme", "http"),
                (":path", "/"),
                ("te", "trailers"),
            ],
        ];
        for fields in ok {
            assert_eq!(block(fields).error(), None, "{fields:?}");
        }
    }

    #[test]
    fn an_unknown_method_or_too_many_fields_has_no_request() {
        let f = block(&[(":method", "BREW"), (":scheme", "http"), (":path", "/")]);
        assert!(f.request(&mut [Header::EMPTY; 4], 0).is_none());
        let f = block(&[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            ("a", "1"),
            ("b", "2"),
        ]);
        assert!(f.request(&mut [Header::EMPTY; 1], 0).is_none());
        assert!(f.request(&mut [Header::EMPTY; 2], 0).is_some());
    }
}
