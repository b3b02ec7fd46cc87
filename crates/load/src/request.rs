//! Request bytes, built once per run. A pipelined batch of `k` requests starting at URL `i`
//! is one contiguous slice of a pre-built buffer, so a batch is one `send` with no copying
//! and no allocation. A templated run (`{seq}`, `{rand:MIN:MAX}`, see the `template` module)
//! copies that slice into the connection's own buffer and writes fresh numbers over its
//! placeholders.
use crate::config::{Config, ConfigError, Target};
use crate::template::{self, Hole};
use std::sync::atomic::{AtomicU64, Ordering};

/// Every request of a run, laid out so any window of up to `depth` consecutive requests
/// (URLs taken in turn) is contiguous.
#[derive(Debug)]
pub struct RequestSet {
    bytes: Vec<u8>,
    /// `offsets[j]..offsets[j + 1]` is the j-th request of the repeated sequence.
    offsets: Vec<usize>,
    urls: usize,
    head: bool,
    /// Per URL, its placeholders (offsets within the request); all empty in most runs.
    holes: Vec<Vec<Hole>>,
    /// Whether any URL has a placeholder: asked twice per window, so kept, not recounted.
    templated: bool,
    /// Requests of this process that took a sequence number so far.
    seq: AtomicU64,
    /// This shard's (index, count): its sequence numbers are `index + count × n`.
    stripe: (u64, u64),
    /// HTTP/2 runs: each URL's request as fields (`crate::h2`); empty otherwise.
    h2: Vec<crate::h2::H2Request>,
    /// `https://` targets.
    tls: bool,
}

impl RequestSet {
    /// Builds the bytes for `config`'s targets, method, headers and body. A placeholder that
    /// cannot be read stays as text; [`check_templates`] (run by `Config::validate`) refuses
    /// it first.
    pub fn build(config: &Config) -> Self {
        let (one, holes): (Vec<Vec<u8>>, Vec<Vec<Hole>>) = config
            .targets
            .iter()
            .map(|t| {
                compile(config, t)
                    .unwrap_or_else(|_| (encode(config, t, body_of(config, t)), Vec::new()))
            })
            .unzip();
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
        let h2 = if config.protocol.is_h2() {
            one.iter()
                .map(|r| {
                    let mut q = crate::h2::H2Request::default();
                    q.read_h1(r);
                    q
                })
                .collect()
        } else {
            Vec::new()
        };
        let stripe = config
            .shard
            .map_or((0, 1), |s| (u64::from(s.index), u64::from(s.count)));
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
            templated: holes.iter().any(|h| !h.is_empty()),
            holes,
            seq: AtomicU64::new(0),
            stripe,
            h2,
            tls: config.targets.first().is_some_and(|t| t.tls),
        }
    }

    /// HTTP/2: URL `i`'s request as fields.
    pub(crate) fn h2(&self, i: usize) -> &crate::h2::H2Request {
        &self.h2[i % self.urls]
    }

    /// Whether the targets are `https://` (HTTP/2's `:scheme`).
    pub(crate) fn is_tls(&self) -> bool {
        self.tls
    }

    /// Whether requests carry placeholders: windows then come from [`RequestSet::render`].
    #[inline]
    pub fn is_templated(&self) -> bool {
        self.templated
    }

    /// Writes the window of `count` requests starting with URL `first % urls` into `out`,
    /// each placeholder with a fresh value (`rng`: the worker's `{rand}` stream). One atomic
    /// add per window hands out its sequence numbers.
    pub fn render(&self, first: usize, count: usize, rng: &mut u64, out: &mut Vec<u8>) {
        let i = first % self.urls;
        let base = self.offsets[i];
        out.clear();
        out.extend_from_slice(&self.bytes[base..self.offsets[i + count]]);
        let n0 = self.seq.fetch_add(count as u64, Ordering::Relaxed);
        let (index, stride) = self.stripe;
        for j in 0..count {
            let at = self.offsets[i + j] - base;
            let end = self.offsets[i + j + 1] - base;
            let seq = index.wrapping_add(stride.wrapping_mul(n0 + j as u64));
            template::fill(
                &mut out[at..end],
                &self.holes[(i + j) % self.urls],
                seq,
                rng,
            );
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

/// Refuses a placeholder that cannot be read in any target's request.
pub fn check_templates(config: &Config) -> Result<(), ConfigError> {
    for t in &config.targets {
        compile(config, t).map_err(|e| ConfigError(format!("{}: {e}", t.url)))?;
    }
    Ok(())
}

/// One target's request with its placeholders at their first values, and where they are. The
/// body is compiled first: its fixed-width length is the `Content-Length`.
fn compile(config: &Config, t: &Target) -> Result<(Vec<u8>, Vec<Hole>), template::TemplateError> {
    let (body, body_holes) = template::compile(body_of(config, t))?;
    let head = encode(config, t, &body);
    let head_len = head.len() - body.len();
    let (mut bytes, mut holes) = template::compile(&head[..head_len])?;
    let at = bytes.len();
    bytes.extend_from_slice(&body);
    holes.extend(body_holes.into_iter().map(|h| Hole { at: h.at + at, ..h }));
    Ok((bytes, holes))
}

/// The target's own body (a targets file), else the run's.
fn body_of<'c>(config: &'c Config, t: &'c Target) -> &'c [u8] {
    t.body.as_deref().unwrap_or(&config.body)
}

/// One target's request: its own method and headers where it has them (a targets file), the
/// run's otherwise, the run's headers first; then `body`.
fn encode(config: &Config, t: &Target, body: &[u8]) -> Vec<u8> {
    let method = t.method.as_deref().unwrap_or(&config.method);
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
    // A body the user framed as chunked (HttpArena's post_chunked) keeps its own framing: both
    // fields would make the request one a server must reject (RFC 9112 §6.3).
    if wants_length && !has("content-length") && !has("transfer-encoding") {
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
    fn a_chunked_body_the_user_framed_gets_no_content_length() {
        let mut c = config(&["http://127.0.0.1:9/"]);
        c.method = "POST".into();
        c.headers = vec!["Transfer-Encoding: chunked".into()];
        c.body = b"2\r\n20\r\n0\r\n\r\n".to_vec();
        let set = RequestSet::build(&c);
        assert_eq!(
            set.window(0, 1),
            b"POST / HTTP/1.1\r\nHost: 127.0.0.1:9\r\nTransfer-Encoding: chunked\r\n\r\n\
2\r\n20\r\n0\r\n\r\n"
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

    fn templated(urls: &[&str], body: &str) -> Config {
        let mut c = config(urls);
        c.method = "POST".into();
        c.body = body.as_bytes().to_vec();
        c.pipeline = 3;
        c
    }

    fn rendered(set: &RequestSet, first: usize, count: usize, rng: &mut u64) -> String {
        let mut out = Vec::new();
        set.render(first, count, rng, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_window_of_templates_takes_consecutive_numbers_and_keeps_its_length() {
        let c = templated(
            &[
                "http://127.0.0.1:9/a/{seq:100}",
                "http://127.0.0.1:9/b/{seq:100}",
            ],
            "{\"id\":{seq:5000},\"r\":{rand:1:9}}",
        );
        let set = RequestSet::build(&c);
        assert!(set.is_templated());
        let mut rng = 1;
        let first = rendered(&set, 1, 3, &mut rng);
        assert_eq!(
            first.len(),
            set.window(1, 3).len(),
            "fixed widths keep the length"
        );
        // Each {rand:1:9} is one digit from 1 to 9; mask them to compare the rest exactly.
        let masked: String = first
            .split("\"r\":")
            .enumerate()
            .map(|(k, part)| {
                if k == 0 {
                    return part.to_string();
                }
                assert!(matches!(part.as_bytes()[0], b'1'..=b'9'), "{first}");
                format!("\"r\":X{}", &part[1..])
            })
            .collect();
        let one = |path: &str, id: u32| {
            format!(
                "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:9\r\nContent-Length: 17\r\n\r\n\
                 {{\"id\":{id},\"r\":X}}"
            )
        };
        assert_eq!(
            masked,
            one("/b/100", 5000) + &one("/a/101", 5001) + &one("/b/102", 5002),
            "one number per request, shared by path and body, in order"
        );
        // The next window goes on from the next number.
        assert!(rendered(&set, 0, 1, &mut rng).starts_with("POST /a/103 "));
    }

    #[test]
    fn shards_take_interleaved_numbers() {
        let mut seen = Vec::new();
        for index in 0..3 {
            let mut c = templated(&["http://127.0.0.1:9/{seq:10}"], "");
            c.shard = Some(crate::Shard::new(index, 3).unwrap());
            let set = RequestSet::build(&c);
            for _ in 0..4 {
                let r = rendered(&set, 0, 1, &mut 1);
                seen.push(r[6..8].parse::<u32>().unwrap());
            }
        }
        seen.sort_unstable();
        assert_eq!(
            seen,
            (10..22).collect::<Vec<_>>(),
            "each number once across shards"
        );
    }

    #[test]
    fn a_bad_placeholder_is_refused_by_validate_naming_the_url() {
        let mut c = config(&["http://127.0.0.1:9/{rand:9:1}"]);
        c.tls = None;
        let e = c.validate().unwrap_err().to_string();
        assert!(
            e.contains("http://127.0.0.1:9/{rand:9:1}") && e.contains("MIN is larger"),
            "{e}"
        );
        assert!(!RequestSet::build(&config(&["http://127.0.0.1:9/x"])).is_templated());
    }
}
