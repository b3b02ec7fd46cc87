//! Unit tests of the static-file planner on a real directory tree (with symlinks in and out).

use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::{FileExt as _, symlink};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::open::Resolver;
use super::*;

/// A fresh tree under the system temp dir: `root/` is served, `outside/` must never be.
fn tree() -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    static CLEANED: std::sync::Once = std::sync::Once::new();
    CLEANED.call_once(|| twelve_testkit::remove_stale("twelve-files"));
    let base = std::env::temp_dir().join(format!(
        "twelve-files-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = fs::remove_dir_all(&base);
    let root = base.join("root");
    fs::create_dir_all(root.join("dir/sub")).unwrap();
    fs::create_dir_all(root.join("noindex")).unwrap();
    fs::create_dir_all(base.join("outside")).unwrap();
    fs::write(base.join("outside/secret.txt"), "SECRET").unwrap();
    fs::write(root.join("a.txt"), "hello world").unwrap();
    fs::write(root.join("empty.txt"), "").unwrap();
    fs::write(root.join("index.html"), "<h1>root</h1>").unwrap();
    fs::write(root.join("dir/index.html"), "<h1>dir</h1>").unwrap();
    fs::write(root.join("dir/sub/b.CSS"), "b{}").unwrap();
    fs::write(root.join("caf\u{e9}.txt"), "utf8 name").unwrap();
    symlink("a.txt", root.join("link_in.txt")).unwrap();
    symlink("dir", root.join("link_dir")).unwrap();
    symlink("../outside/secret.txt", root.join("link_out.txt")).unwrap();
    symlink(base.join("outside/secret.txt"), root.join("link_abs.txt")).unwrap();
    symlink("../outside", root.join("dir_out")).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(root.join("fifo"))
        .status();
    assert!(fifo.is_ok_and(|s| s.success()), "mkfifo");
    root
}

fn files(resolver: Resolver) -> &'static StaticFiles {
    served(resolver, false)
}

/// The same tree served with the worker cache on (each test thread has its own cache).
fn cached_files(resolver: Resolver) -> &'static StaticFiles {
    served(resolver, true)
}

/// The tree, opened once per resolver and cache setting for every test.
fn served(resolver: Resolver, cached: bool) -> &'static StaticFiles {
    static TREES: [OnceLock<StaticFiles>; 4] = [const { OnceLock::new() }; 4];
    let i = 2 * usize::from(resolver == Resolver::Openat2) + usize::from(cached);
    let cache = if cached {
        FileCacheConfig::default()
    } else {
        FileCacheConfig::OFF
    };
    TREES[i].get_or_init(|| tree_files(resolver, cache))
}

fn tree_files(resolver: Resolver, cache: FileCacheConfig) -> StaticFiles {
    let root = Root::open(&tree()).unwrap();
    // The fallback can be forced anywhere; openat2 only where the kernel has it (probe first,
    // io-uring style): elsewhere the "openat2" cases run on the fallback.
    let root = match resolver {
        Resolver::NoFollowWalk => root.with_resolver(resolver),
        Resolver::Openat2 => {
            if root.resolver() != Resolver::Openat2 {
                eprintln!("openat2 unavailable here: its cases run on the O_NOFOLLOW walk");
            }
            root
        }
    };
    StaticFiles::new(root, cache)
}

/// Status, header fields as text (as the engine would write them through `Response`), and the
/// body bytes the engine would sendfile (none for HEAD).
fn run(
    sf: &StaticFiles,
    method: &str,
    target: &[u8],
    headers: &[(&str, &str)],
) -> (u16, String, Vec<u8>) {
    let hs = headers.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes()));
    match sf.reply(method.as_bytes(), target, hs) {
        Err(e) => (e.status(), String::new(), Vec::new()),
        Ok(reply) => {
            let mut head = String::new();
            if let Some(ct) = reply.content_type {
                head += &format!("Content-Type: {ct}\r\n");
            }
            if let Some(len) = reply.content_length {
                head += &format!("Content-Length: {len}\r\n");
            }
            let mut buf = RangeBuf::new();
            for (name, value) in reply.extra_fields(&mut buf).as_slice() {
                head += &format!("{name}: {}\r\n", std::str::from_utf8(value).unwrap());
            }
            let mut body = Vec::new();
            if let Some(b) = reply.body {
                assert_eq!(reply.content_length, Some(b.len()));
                assert!(reply.content_type.is_some());
                if method != "HEAD" {
                    match b {
                        Body::File(mut b) => {
                            b.file.seek(SeekFrom::Start(b.offset)).unwrap();
                            b.file.take(b.len).read_to_end(&mut body).unwrap();
                        }
                        Body::Memory { data, start, len } => {
                            body.extend_from_slice(&data[start..start + len]);
                        }
                    }
                    assert_eq!(Some(body.len() as u64), reply.content_length);
                }
            }
            (reply.status, head, body)
        }
    }
}

fn etag_of(sf: &StaticFiles, target: &[u8]) -> String {
    let (_, head, _) = run(sf, "GET", target, &[]);
    head.lines()
        .find_map(|l| l.strip_prefix("ETag: "))
        .unwrap()
        .to_owned()
}

fn last_modified_of(sf: &StaticFiles, target: &[u8]) -> String {
    let (_, head, _) = run(sf, "GET", target, &[]);
    head.lines()
        .find_map(|l| l.strip_prefix("Last-Modified: "))
        .unwrap()
        .to_owned()
}

/// One case per test, run with both resolvers, and with the worker cache on (twice: the first
/// reply fills the cache, the second comes from it): `status`, then `body` (exact) or
/// `Some(text)` that must appear in the header fields.
macro_rules! serve {
    ($($name:ident: $method:literal $target:literal $headers:expr => $status:expr, $body:expr, $field:expr;)*) => {$(
        mod $name {
            use super::*;
            fn check_on(sf: &StaticFiles) {
                let (status, head, body) = run(sf, $method, $target, $headers);
                assert_eq!(status, $status, "{head}");
                assert_eq!(body, $body.as_bytes(), "{head}");
                let field: Option<&str> = $field;
                if let Some(f) = field {
                    assert!(head.contains(f), "want {f:?} in {head}");
                }
            }
            fn check(resolver: Resolver) {
                check_on(files(resolver));
                check_on(cached_files(resolver));
                check_on(cached_files(resolver));
            }
            #[test]
            fn openat2() { check(Resolver::Openat2) }
            #[test]
            fn nofollow_walk() { check(Resolver::NoFollowWalk) }
        }
    )*};
}

serve! {
    get_file: "GET" b"/a.txt" &[] => 200, "hello world", Some("Content-Type: text/plain; charset=utf-8\r\nContent-Length: 11\r\n");
    get_file_accepts_ranges: "GET" b"/a.txt" &[] => 200, "hello world", Some("Accept-Ranges: bytes\r\n");
    head_file_same_fields_no_body: "HEAD" b"/a.txt" &[] => 200, "", Some("Content-Length: 11\r\n");
    get_empty_file: "GET" b"/empty.txt" &[] => 200, "", Some("Content-Length: 0\r\n");
    get_with_query: "GET" b"/a.txt?v=1" &[] => 200, "hello world", None;
    get_percent_encoded_name: "GET" b"/caf%C3%A9.txt" &[] => 200, "utf8 name", None;
    mime_upper_case_extension: "GET" b"/dir/sub/b.CSS" &[] => 200, "b{}", Some("Content-Type: text/css; charset=utf-8\r\n");
    root_serves_index: "GET" b"/" &[] => 200, "<h1>root</h1>", Some("Content-Type: text/html; charset=utf-8\r\n");
    directory_serves_index: "GET" b"/dir/" &[] => 200, "<h1>dir</h1>", None;
    directory_without_slash_redirects: "GET" b"/dir?x=1" &[] => 301, "", Some("Content-Length: 0\r\nLocation: /dir/\r\n");
    directory_without_index_404: "GET" b"/noindex/" &[] => 404, "", None;
    file_with_trailing_slash_404: "GET" b"/a.txt/" &[] => 404, "", None;
    missing_404: "GET" b"/nope.txt" &[] => 404, "", None;
    file_as_directory_404: "GET" b"/a.txt/x" &[] => 404, "", None;
    post_405: "POST" b"/a.txt" &[] => 405, "", None;
    lower_case_get_405: "get" b"/a.txt" &[] => 405, "", None;
    fifo_forbidden: "GET" b"/fifo" &[] => 403, "", None;
    traversal_dotdot: "GET" b"/../etc/passwd" &[] => 400, "", None;
    traversal_encoded_dotdot: "GET" b"/%2e%2e/%2e%2e/etc/passwd" &[] => 400, "", None;
    traversal_encoded_slash: "GET" b"/%2f.." &[] => 400, "", None;
    traversal_nul: "GET" b"/a%00.txt" &[] => 400, "", None;
    traversal_backslash: "GET" b"/..\\x" &[] => 400, "", None;
    traversal_overlong_utf8: "GET" b"/%c0%ae%c0%ae/outside/secret.txt" &[] => 400, "", None;
    symlink_relative_out_forbidden: "GET" b"/link_out.txt" &[] => 403, "", None;
    symlink_absolute_out_forbidden: "GET" b"/link_abs.txt" &[] => 403, "", None;
    symlink_directory_out_forbidden: "GET" b"/dir_out/secret.txt" &[] => 403, "", None;
    range_first_bytes: "GET" b"/a.txt" &[("Range", "bytes=0-4")] => 206, "hello", Some("Content-Range: bytes 0-4/11\r\n");
    range_suffix: "GET" b"/a.txt" &[("range", "bytes=-5")] => 206, "world", Some("Content-Range: bytes 6-10/11\r\n");
    range_open_end: "GET" b"/a.txt" &[("Range", "bytes=6-")] => 206, "world", None;
    range_unsatisfiable_416: "GET" b"/a.txt" &[("Range", "bytes=11-")] => 416, "", Some("Content-Length: 0\r\n");
    range_suffix_zero_416: "GET" b"/a.txt" &[("Range", "bytes=-0")] => 416, "", None;
    range_huge_416: "GET" b"/a.txt" &[("Range", "bytes=99999999999999999999-")] => 416, "", None;
    range_two_ranges_full: "GET" b"/a.txt" &[("Range", "bytes=0-1,3-4")] => 200, "hello world", None;
    range_repeated_field_full: "GET" b"/a.txt" &[("Range", "bytes=0-1"), ("Range", "bytes=0-1")] => 200, "hello world", None;
    range_ignored_on_head: "HEAD" b"/a.txt" &[("Range", "bytes=0-1")] => 200, "", Some("Content-Length: 11\r\n");
    range_with_failing_if_range_full: "GET" b"/a.txt" &[("Range", "bytes=0-1"), ("If-Range", "\"nope\"")] => 200, "hello world", None;
    inm_star_304: "GET" b"/a.txt" &[("If-None-Match", "*")] => 304, "", Some("ETag: \"");
    inm_other_tag_200: "GET" b"/a.txt" &[("If-None-Match", "\"nope\"")] => 200, "hello world", None;
    ims_future_304: "GET" b"/a.txt" &[("If-Modified-Since", "Fri, 01 Jan 9999 00:00:00 GMT")] => 304, "", None;
    ims_past_200: "GET" b"/a.txt" &[("If-Modified-Since", "Thu, 01 Jan 1970 00:00:00 GMT")] => 200, "hello world", None;
    ims_invalid_ignored: "GET" b"/a.txt" &[("If-Modified-Since", "tomorrow")] => 200, "hello world", None;
    inm_takes_precedence_over_ims: "GET" b"/a.txt" &[("If-None-Match", "\"nope\""), ("If-Modified-Since", "Fri, 01 Jan 9999 00:00:00 GMT")] => 200, "hello world", None;
}

/// Symlinks that stay inside the root work with openat2; the fallback refuses every symlink.
#[test]
fn symlink_inside_root_follows_with_openat2_only() {
    let sf = files(Resolver::Openat2);
    if sf.root.resolver() != Resolver::Openat2 {
        twelve_testkit::skip_or_fail("openat2 unavailable on this kernel");
        return;
    }
    assert_eq!(run(sf, "GET", b"/link_in.txt", &[]).2, b"hello world");
    assert_eq!(run(sf, "GET", b"/link_dir/", &[]).2, b"<h1>dir</h1>");
    assert_eq!(
        run(files(Resolver::NoFollowWalk), "GET", b"/link_in.txt", &[]).0,
        403
    );
    assert_eq!(
        run(files(Resolver::NoFollowWalk), "GET", b"/link_dir/", &[]).0,
        403
    );
}

#[test]
fn inm_matching_etag_304_without_body_or_length() {
    let sf = files(Resolver::Openat2);
    let tag = etag_of(sf, b"/a.txt");
    let (status, head, body) = run(sf, "GET", b"/a.txt", &[("If-None-Match", &tag)]);
    assert_eq!((status, body.len()), (304, 0));
    assert_eq!(head, format!("ETag: {tag}\r\n"));
}

#[test]
fn inm_weak_form_of_etag_matches() {
    let sf = files(Resolver::Openat2);
    let tag = format!("\"x\", W/{}", etag_of(sf, b"/a.txt"));
    assert_eq!(
        run(sf, "HEAD", b"/a.txt", &[("If-None-Match", &tag)]).0,
        304
    );
}

#[test]
fn if_range_with_current_etag_gives_206() {
    let sf = files(Resolver::Openat2);
    let tag = etag_of(sf, b"/a.txt");
    let (status, _, body) = run(
        sf,
        "GET",
        b"/a.txt",
        &[("Range", "bytes=0-4"), ("If-Range", &tag)],
    );
    assert_eq!((status, body.as_slice()), (206, &b"hello"[..]));
}

#[test]
fn if_modified_since_equal_to_last_modified_304() {
    let sf = files(Resolver::Openat2);
    let lm = last_modified_of(sf, b"/a.txt");
    assert_eq!(
        run(sf, "GET", b"/a.txt", &[("If-Modified-Since", &lm)]).0,
        304
    );
}

#[test]
fn etag_changes_when_file_is_replaced() {
    for cache in [FileCacheConfig::OFF, FileCacheConfig::default()] {
        let root = tree();
        let sf = StaticFiles::open(&root, cache).unwrap();
        let before = etag_of(&sf, b"/a.txt");
        fs::write(root.join("new.txt"), "hello world").unwrap();
        fs::rename(root.join("new.txt"), root.join("a.txt")).unwrap();
        assert_ne!(etag_of(&sf, b"/a.txt"), before, "{cache:?}");
    }
}

/// Whether the last reply's body came from memory.
fn from_memory(sf: &StaticFiles, target: &[u8]) -> bool {
    let reply = sf.reply(b"GET", target, std::iter::empty()).unwrap();
    matches!(reply.body, Some(Body::Memory { .. }))
}

/// A file rewritten in place, same size and mtime put back, is seen at once by the default
/// check (its ctime moved), and only after `valid` by a cache told to trust its checks.
#[test]
fn cache_sees_a_rewrite_at_once_unless_told_to_trust_it() {
    let trusting = FileCacheConfig {
        valid: std::time::Duration::from_secs(3600),
        ..FileCacheConfig::default()
    };
    for (cache, fresh) in [(FileCacheConfig::default(), true), (trusting, false)] {
        let root = tree();
        let sf = StaticFiles::open(&root, cache).unwrap();
        assert_eq!(run(&sf, "GET", b"/a.txt", &[]).2, b"hello world");
        assert!(from_memory(&sf, b"/a.txt"));
        let mtime = fs::metadata(root.join("a.txt"))
            .unwrap()
            .modified()
            .unwrap();
        let f = fs::OpenOptions::new()
            .write(true)
            .open(root.join("a.txt"))
            .unwrap();
        f.write_all_at(b"HELLO", 0).unwrap();
        f.set_modified(mtime).unwrap();
        let want: &[u8] = if fresh {
            b"HELLO world"
        } else {
            b"hello world"
        };
        assert_eq!(run(&sf, "GET", b"/a.txt", &[]).2, want, "{cache:?}");
    }
}

/// A cached path replaced by a symlink out of the root is refused, not served from memory.
#[test]
fn cached_path_swapped_for_a_symlink_out_is_refused() {
    for resolver in [Resolver::Openat2, Resolver::NoFollowWalk] {
        let root = tree();
        let sf = StaticFiles::new(
            Root::open(&root).unwrap().with_resolver(resolver),
            FileCacheConfig::default(),
        );
        if resolver == Resolver::Openat2 && sf.root.resolver() != Resolver::Openat2 {
            continue;
        }
        assert_eq!(run(&sf, "GET", b"/a.txt", &[]).0, 200);
        fs::remove_file(root.join("a.txt")).unwrap();
        symlink("../outside/secret.txt", root.join("a.txt")).unwrap();
        assert_eq!(
            run(&sf, "GET", b"/a.txt", &[]),
            (403, String::new(), vec![])
        );
    }
}

/// Files above `max_file` are sent from the file; the budget is never exceeded.
#[test]
fn cache_keeps_to_its_sizes() {
    let root = tree();
    let cache = FileCacheConfig {
        bytes: 20,
        max_file: 12,
        valid: std::time::Duration::ZERO,
    };
    let sf = StaticFiles::open(&root, cache).unwrap();
    // 13 bytes: above max_file.
    assert!(!from_memory(&sf, b"/"));
    assert_eq!(cache::usage(sf.id), (0, 0));
    assert!(from_memory(&sf, b"/a.txt"));
    assert_eq!(cache::usage(sf.id), (11, 1));
    assert!(from_memory(&sf, b"/dir/sub/b.CSS"));
    assert_eq!(cache::usage(sf.id), (14, 2));
    // 11 + 3 + 9 > 20: something goes before the third file comes in.
    assert!(from_memory(&sf, b"/caf%C3%A9.txt"));
    let (bytes, entries) = cache::usage(sf.id);
    assert!(
        bytes <= 20 && entries < 3,
        "{bytes} bytes in {entries} entries"
    );
    // Off: nothing kept.
    let off = StaticFiles::open(&root, FileCacheConfig::OFF).unwrap();
    assert!(!from_memory(&off, b"/a.txt"));
    assert_eq!(cache::usage(off.id), (0, 0));
}

#[test]
fn range_on_empty_file_416() {
    let sf = files(Resolver::Openat2);
    let (status, head, _) = run(sf, "GET", b"/empty.txt", &[("Range", "bytes=0-")]);
    assert_eq!(status, 416);
    assert!(head.contains("Content-Range: bytes */0\r\n"), "{head}");
}

#[test]
fn range_200_overlapping_ranges_full_body() {
    let value = vec!["0-"; 200].join(",");
    let sf = files(Resolver::Openat2);
    let (status, _, body) = run(
        sf,
        "GET",
        b"/a.txt",
        &[("Range", &format!("bytes={value}"))],
    );
    assert_eq!((status, body.as_slice()), (200, &b"hello world"[..]));
}

#[test]
fn root_that_is_not_a_directory_fails_to_open() {
    let root = tree();
    assert!(StaticFiles::open(&root.join("a.txt"), FileCacheConfig::OFF).is_err());
    assert!(StaticFiles::open(&root.join("missing"), FileCacheConfig::OFF).is_err());
}

/// The probe picks openat2 on this kernel, so the `openat2` cases above really run on it (where
/// it does not, they run on the O_NOFOLLOW walk, and this test says so), and it is the kernel
/// that keeps lookups beneath the root: `RESOLVE_BENEATH` refuses a `..` and a symlink out
/// with EXDEV, where the walk would follow the `..` (it relies on `CleanPath` having removed
/// them) and refuse the symlink with ELOOP.
#[test]
fn openat2_is_available_on_this_kernel() {
    use rustix::fs::{Mode, OFlags, ResolveFlags, openat2};
    use rustix::io::Errno;
    let root = tree();
    let sf = StaticFiles::open(&root, FileCacheConfig::OFF).unwrap();
    if sf.root.resolver() != Resolver::Openat2 {
        let dir = fs::File::open(&root).unwrap();
        let flags = OFlags::PATH | OFlags::CLOEXEC;
        let e = openat2(&dir, ".", flags, Mode::empty(), ResolveFlags::BENEATH)
            .expect_err("openat2 works here, yet the probe chose the walk");
        return twelve_testkit::skip_or_fail(format!(
            "openat2 unavailable on this kernel ({e}): its cases ran on the walk"
        ));
    }
    for escape in [
        "../outside/secret.txt",
        "link_out.txt",
        "dir_out/secret.txt",
    ] {
        let err = sf.root.open_beneath(escape).unwrap_err();
        assert_eq!(
            Errno::from_io_error(&err),
            Some(Errno::XDEV),
            "{escape}: {err}"
        );
    }
    assert!(sf.root.open_beneath("link_in.txt").is_ok());
}
