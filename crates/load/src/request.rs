//! Request bytes, built once per run. A pipelined batch of `k` requests starting at URL `i`
//! is one contiguous slice of a pre-built buffer, so a batch is one `send` with no copying
//! and no allocation.
use crate::config::{Config, Target};

/// Every request of a run, laid out so any window of up to `depth` consecutive requests
/// (URLs taken in turn) is contiguous.
#[derive(Debug, Clone)]
pub struct RequestSet {
    bytes: Vec<u8>,
    /// `offsets[j]..offsets[j + 1]` is the j-th request of the repeated sequence.
    offsets: Vec<usize>,
    urls: usize,
    head: bool,
}

impl RequestSet {
    /// Builds the bytes for `config`'s targets, method, headers and body.
    pub fn build(config: &Config) -> Self {
        let one: Vec<Vec<u8>> = config.targets.iter().map(|t| encode(config, t)).collect();
        let urls = one.len();
        // Enough repeats that a window of `pipeline` requests starting at any URL fits.
        let repeats = 1 + config.pipeline.div_ceil(urls);
        let mut bytes = Vec::new();
        let mut offsets = vec![0];
        for _ in 0..repeats {
            for r in &one {
                bytes.extend_from_slice(r);
                offsets.push(bytes.len());
            }
        }
        Self {
            bytes,
            offsets,
            urls,
            // Config::validate refuses a run that mixes HEAD with other methods.
            head: config
                .targets
                .first()
                .and_then(|t| t.method.as_deref())
                .unwrap_or(&config.method)
                .eq_ignore_ascii_case("HEAD"),
        }
    }

    /// The bytes of `count` requests starting with URL `first % urls`.
    #[inline]
    pub fn window(&self, first: usize, count: usize) -> &[u8] {
        let i = first % self.urls;
        &self.bytes[self.offsets[i]..self.offsets[i + count]]
    }

    /// Number of distinct URLs.
    pub fn urls(&self) -> usize {
        self.urls
    }

    /// Whether responses carry no body (HEAD).
    pub fn is_head(&self) -> bool {
        self.head
    }

    /// Byte offset of a position inside [`RequestSet::window`]`(first, count)`, for resuming
    /// a short write.
    pub fn window_from(&self, first: usize, count: usize, sent: usize) -> &[u8] {
        &self.window(first, count)[sent..]
    }
}

/// One target's request: its own method, headers and body where it has them (a targets
/// file), the run's otherwise; the run's headers come first.
fn encode(config: &Config, t: &Target) -> Vec<u8> {
    let method = t.method.as_deref().unwrap_or(&config.method);
    let body = t.body.as_deref().unwrap_or(&config.body);
    let headers = || config.headers.iter().chain(&t.headers);
    let has = |name: &str| {
        headers().any(|h| {
            h.split(':')
                .next()
                .is_some_and(|n| n.trim().eq_ignore_ascii_case(name))
        })
    };
    let mut r = format!("{method} {} HTTP/1.1\r\n", t.path);
    // A -H Host replaces the URL's: two Host lines are a 400 (RFC 9112 §3.2).
    if !has("host") {
        r.push_str(&format!("Host: {}\r\n", t.authority));
    }
    for h in headers() {
        r.push_str(h.trim_end());
        r.push_str("\r\n");
    }
    let wants_length = !body.is_empty() || matches!(method, "POST" | "PUT" | "PATCH");
    if wants_length && !has("content-length") {
        r.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    if !config.keep_alive && !has("connection") {
        r.push_str("Connection: close\r\n");
    }
    r.push_str("\r\n");
    let mut bytes = r.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(urls: &[&str]) -> Config {
        Config::new(urls.iter().map(|u| Target::parse(u).unwrap()).collect())
    }

    #[test]
    fn get_is_minimal() {
        let set = RequestSet::build(&config(&["http://127.0.0.1:9/json"]));
        assert_eq!(
            set.window(0, 1),
            b"GET /json HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n"
        );
    }

    #[test]
    fn urls_taken_in_turn_across_a_pipelined_window() {
        let mut c = config(&["http://127.0.0.1:9/a", "http://127.0.0.1:9/b"]);
        c.pipeline = 3;
        let set = RequestSet::build(&c);
        let w = String::from_utf8(set.window(1, 3).to_vec()).unwrap();
        let paths: Vec<&str> = w.lines().filter(|l| l.starts_with("GET")).collect();
        assert_eq!(
            paths,
            ["GET /b HTTP/1.1", "GET /a HTTP/1.1", "GET /b HTTP/1.1"]
        );
    }

    #[test]
    fn header_host_replaces_the_urls() {
        let mut c = config(&["http://127.0.0.1:9/"]);
        c.headers = vec!["Host: localhost".into(), "Accept: */*".into()];
        let set = RequestSet::build(&c);
        assert_eq!(
            set.window(0, 1),
            b"GET / HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\n\r\n"
        );
    }

    #[test]
    fn each_target_brings_its_method_headers_and_body() {
        let mut c = config(&["http://127.0.0.1:9/a", "http://127.0.0.1:9/b"]);
        c.headers = vec!["X-Run: 1".into()];
        c.targets[1].method = Some("POST".into());
        c.targets[1].headers = vec!["X-Target: 2".into()];
        c.targets[1].body = Some(b"{}".to_vec());
        let set = RequestSet::build(&c);
        assert_eq!(
            set.window(0, 2),
            &b"GET /a HTTP/1.1\r\nHost: 127.0.0.1:9\r\nX-Run: 1\r\n\r\n\
POST /b HTTP/1.1\r\nHost: 127.0.0.1:9\r\nX-Run: 1\r\nX-Target: 2\r\nContent-Length: 2\r\n\r\n{}"[..]
        );
    }

    #[test]
    fn post_body_and_close() {
        let mut c = config(&["http://127.0.0.1:9/"]);
        c.method = "POST".into();
        c.body = b"hi".to_vec();
        c.keep_alive = false;
        c.headers = vec!["X-A: 1".into()];
        let set = RequestSet::build(&c);
        assert_eq!(
            set.window(0, 1),
            b"POST / HTTP/1.1\r\nHost: 127.0.0.1:9\r\nX-A: 1\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi"
        );
    }
}
