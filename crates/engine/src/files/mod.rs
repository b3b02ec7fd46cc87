//! Static files for `twelve serve --root DIR`: from a request to a reply plan the engine sends.
//!
//! # Contract with the engine
//!
//! The engine holds one [`StaticFiles`] (it is `Sync`; the router's fallback handler owns it)
//! and, for a request that no route claimed, calls [`StaticFiles::reply`] with the method, the request-target's
//! path (origin-form; for an absolute-form target, the path part) and the request's header
//! fields as `(name, value)` pairs. It gets back either
//!
//! - `Ok(FileReply)`: if [`FileReply::body`] is `Some` (200, 206), the engine answers with
//!   `Response::send_file(status, content_type, extra, body)` for a [`Body::File`], or
//!   `Response::send` with the bytes of a [`Body::Memory`] (a file of the worker's cache,
//!   `cache.rs`); otherwise (301, 304, 416) with
//!   a head only, `Response::send_head(status, content_type, content_length, extra)` (see
//!   `files_route.rs`), where `extra` is [`FileReply::extra_fields`]
//!   (`Location`, `Last-Modified`, `ETag`, `Accept-Ranges`, `Content-Range`, as the status
//!   needs). The engine adds `Content-Length` (the body's count; 0 for 301 and 416, none for
//!   304), `Date`, `Server` and `Connection`, and for HEAD sends the head only. A file body
//!   is a `sendfile(file, offset, count)`. The file may be shorter than planned if it was truncated
//!   meanwhile: the engine must then close the connection (the `Content-Length` already sent
//!   can no longer be honoured).
//! - `Err(FileError)`: the engine sends its ordinary error response for
//!   [`FileError::status`]; for 405 it adds `Allow: ` [`FileError::ALLOW`]. These are not
//!   framing errors: the connection may stay open.
//!
//! # Rules
//!
//! - Methods: GET and HEAD (HEAD: the same fields as GET, no body, RFC 9110 §9.3.2); others 405.
//! - Paths: `path.rs` (decoding, normalisation, what is refused with 400) and `open.rs` (the
//!   kernel keeps every open beneath the root, symlinks included). Missing → 404; exists but
//!   not a regular file or directory (FIFO, device, socket), or unreadable, or a symlink out of
//!   the root → 403.
//! - Directories: `index.html` inside it; a directory named without its trailing slash is
//!   redirected (301) to the slash form so that relative links in the page resolve; no listing.
//! - Validators: strong `ETag` from inode, size and mtime in ns; `Last-Modified` from mtime,
//!   never later than now (§8.8.2.1).
//! - Preconditions in the order of RFC 9110 §13.2.2: If-None-Match (weak comparison) first, and
//!   only without it If-Modified-Since; either gives 304. If-Match and If-Unmodified-Since are
//!   not evaluated (nothing here modifies state; GET with them is answered as if absent).
//! - Range (GET only, §14.2): exactly one range → 206 with `Content-Range`; unsatisfiable → 416
//!   with `Content-Range: bytes */len`; anything else (several ranges, unknown unit, bad syntax,
//!   a failed If-Range) → the whole file with 200.
//!
//! - Precompressed siblings (with [`StaticFiles::precompressed`], as nginx's `gzip_static` and
//!   `brotli_static`): when the client accepts `br` or `gzip` (`Accept-Encoding`, q-values
//!   honoured, br preferred on a tie: it is the smaller) and `NAME.br` or `NAME.gz` is a
//!   regular file beside `NAME`, that file is the representation sent, with the original's
//!   `Content-Type` and `Content-Encoding`. It is a representation of its own (RFC 9110 §8.4):
//!   its own `ETag` (from its own inode, size and mtime), and a Range selects bytes of the
//!   encoded file, as §14.1.2 says a range applies to the selected representation. Every
//!   reply of a compressible type then carries `Vary: Accept-Encoding`.
//!
//! Opening and `fstat` are blocking syscalls on the worker thread; for files in the page cache
//! they cost microseconds, which is the trade sehttpd and nginx (without thread pools) make too.

mod cache;
mod conditional;
mod mime;
mod open;
mod path;

use std::fs::File;
use std::io::{self, Write as _};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

pub use cache::FileCacheConfig;
use conditional::{ETag, RangeAnswer};
use open::{Resolver, Root};

use crate::compress::{Coding, compressible, negotiate};
use crate::response::FileBody;
use twelve_http::{DATE_LEN, format_imf_fixdate};

/// The static file tree under one root directory.
#[derive(Debug)]
pub(crate) struct StaticFiles {
    root: Root,
    /// Tells this root's entries apart in a worker's cache (`cache.rs`).
    id: u64,
    cache: FileCacheConfig,
    /// Serve `NAME.br`/`NAME.gz` when the client accepts them (see the module docs).
    precompressed: bool,
}

/// What to send for a static-file request. See the module docs for how the engine uses it.
#[derive(Debug)]
pub(crate) struct FileReply {
    /// 200, 206, 301, 304 or 416.
    pub(crate) status: u16,
    /// `Content-Type`; `None` for 301, 304 and 416.
    pub(crate) content_type: Option<&'static str>,
    /// `Content-Length`: what a GET carries (also for HEAD); `None` for 304 (§8.6: a 304 may
    /// only repeat the 200's length, so it is simplest to send none).
    pub(crate) content_length: Option<u64>,
    /// `Last-Modified` in IMF-fixdate; `None` for 301 and 304 (§15.4.5: with an ETag present a
    /// 304 should not repeat other metadata).
    pub(crate) last_modified: Option<[u8; DATE_LEN]>,
    /// `ETag`; `None` for 301.
    pub(crate) etag: Option<ETag>,
    /// `Content-Range` for 206 and 416.
    pub(crate) content_range: Option<ContentRange>,
    /// `Location` for 301: the directory with its slash, percent-encoded, without the query.
    pub(crate) location: Option<String>,
    /// What to send for 200 and 206; `None` for 301, 304 and 416. Also `Some` for HEAD: the
    /// engine writes only the head, with this length (as `Response::send_file` does).
    pub(crate) body: Option<Body>,
    /// The coding of a precompressed sibling served instead of the file (`Content-Encoding`).
    pub(crate) coding: Coding,
    /// `Vary: Accept-Encoding`: the reply depends on it (precompressed siblings are on and the
    /// type is compressible).
    pub(crate) vary: bool,
}

/// A reply's body: a file range to `sendfile`, or a cached file's bytes (`cache.rs`).
#[derive(Debug)]
pub(crate) enum Body {
    File(FileBody),
    Memory {
        data: Rc<[u8]>,
        start: usize,
        len: usize,
    },
}

#[cfg(test)]
impl Body {
    /// Bytes to send.
    pub(crate) fn len(&self) -> u64 {
        match self {
            Body::File(f) => f.len,
            Body::Memory { len, .. } => *len as u64,
        }
    }
}

/// A file's reply material: where its bytes come from, its length, `ETag`, mtime in seconds
/// and `Content-Type`.
type Representation = (Source, u64, ETag, u64, &'static str);

/// Where a regular file's reply comes from.
enum Source {
    File(File),
    Memory(Rc<[u8]>),
}

/// `Content-Range` (RFC 9110 §14.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ContentRange {
    /// `bytes first-last/complete` (206).
    Bytes {
        first: u64,
        last: u64,
        complete: u64,
    },
    /// `bytes */complete` (416).
    Unsatisfied { complete: u64 },
}

/// A static-file request that gets an error status instead of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FileError {
    /// The path is malformed or tries to leave the root (400).
    BadRequest,
    /// Exists but may not be served: not a regular file, unreadable, or a symlink out (403).
    Forbidden,
    /// Nothing there (404).
    NotFound,
    /// Neither GET nor HEAD (405, with `Allow`).
    MethodNotAllowed,
}

impl FileError {
    /// Value of the `Allow` field a 405 must carry (RFC 9110 §15.5.6).
    pub(crate) const ALLOW: &'static str = "GET, HEAD";

    /// The status code to answer with.
    pub(crate) fn status(self) -> u16 {
        match self {
            FileError::BadRequest => 400,
            FileError::Forbidden => 403,
            FileError::NotFound => 404,
            FileError::MethodNotAllowed => 405,
        }
    }

    fn from_io(e: &io::Error) -> FileError {
        match e.raw_os_error() {
            // ENOENT, ENOTDIR (a file used as a directory), ENAMETOOLONG.
            Some(2 | 20 | 36) => FileError::NotFound,
            // EACCES, EPERM, ELOOP (a symlink refused by O_NOFOLLOW), EXDEV (openat2 refused a
            // path leaving the root), ENXIO (a socket or a FIFO without writer) and the rest.
            _ => FileError::Forbidden,
        }
    }
}

impl StaticFiles {
    /// Opens `root` as the static root. Fails if it is not a directory that can be opened.
    pub(crate) fn open(root: &Path, cache: FileCacheConfig) -> io::Result<StaticFiles> {
        Ok(StaticFiles::new(Root::open(root)?, cache))
    }

    fn new(root: Root, cache: FileCacheConfig) -> StaticFiles {
        static IDS: AtomicU64 = AtomicU64::new(0);
        StaticFiles {
            root,
            id: IDS.fetch_add(1, Ordering::Relaxed),
            cache,
            precompressed: false,
        }
    }

    /// Serves precompressed siblings (`NAME.br`, `NAME.gz`) to clients that accept them.
    pub(crate) fn precompressed(mut self, on: bool) -> StaticFiles {
        self.precompressed = on;
        self
    }

    /// Plans the reply to `method target` with the request's header fields. See the module
    /// docs for the rules.
    pub(crate) fn reply<'h, I>(
        &self,
        method: &[u8],
        target: &[u8],
        headers: I,
    ) -> Result<FileReply, FileError>
    where
        I: IntoIterator<Item = (&'h [u8], &'h [u8])>,
    {
        let is_get = match method {
            b"GET" => true,
            b"HEAD" => false,
            _ => return Err(FileError::MethodNotAllowed),
        };
        let clean = path::normalize(target).map_err(|_| FileError::BadRequest)?;
        let fields = Fields::collect(headers);
        let sibling = match self.precompressed {
            true => self.sibling(&clean, &fields)?,
            false => None,
        };
        let (coding, (source, len, etag, mtime_s, content_type)) = match sibling {
            Some(found) => found,
            None => match self.identity(&clean)? {
                Some(rep) => (Coding::Identity, rep),
                None => return Ok(redirect(path::directory_location(&clean.rel))),
            },
        };
        let vary = self.precompressed && compressible(content_type);
        let last_modified_s = mtime_s.min(now_s());
        if fields.not_modified(&etag, last_modified_s) {
            let mut reply = not_modified(etag);
            reply.vary = vary;
            return Ok(reply);
        }
        let range = match fields.range {
            One(r) if is_get && fields.if_range_allows(&etag, last_modified_s) => {
                conditional::parse_range(r, len)
            }
            _ => RangeAnswer::Full,
        };
        let mut reply = FileReply {
            status: 200,
            content_type: Some(content_type),
            content_length: Some(len),
            last_modified: Some(format_imf_fixdate(last_modified_s)),
            etag: Some(etag),
            content_range: None,
            location: None,
            body: None,
            coding,
            vary,
        };
        let (offset, count) = match range {
            RangeAnswer::Full => (0, len),
            RangeAnswer::Partial { first, last } => {
                reply.status = 206;
                reply.content_range = Some(ContentRange::Bytes {
                    first,
                    last,
                    complete: len,
                });
                (first, last - first + 1)
            }
            RangeAnswer::Unsatisfiable => {
                reply.status = 416;
                reply.content_type = None;
                reply.content_range = Some(ContentRange::Unsatisfied { complete: len });
                reply.content_length = Some(0);
                return Ok(reply);
            }
        };
        reply.content_length = Some(count);
        if is_get {
            reply.body = Some(match source {
                Source::File(file) => Body::File(FileBody {
                    file,
                    offset,
                    len: count,
                }),
                // Both fit in usize: the data is in memory.
                Source::Memory(data) => Body::Memory {
                    data,
                    start: offset as usize,
                    len: count as usize,
                },
            });
        }
        Ok(reply)
    }

    /// The file a clean path names (cached or opened): its source, length, `ETag`, mtime and
    /// type; `None` for a directory named without its slash (a redirect).
    fn identity(&self, clean: &path::CleanPath) -> Result<Option<Representation>, FileError> {
        if let Some(c) = self.cached(clean) {
            let len = c.data.len() as u64;
            return Ok(Some((
                Source::Memory(c.data),
                len,
                c.etag,
                c.mtime_s,
                c.content_type,
            )));
        }
        let (file, meta, name) = self.open_representation(clean)?;
        let Some((file, meta)) = file.zip(meta) else {
            return Ok(None);
        };
        let content_type = mime::for_path(name);
        Ok(Some(self.represent(
            cache_path(clean).as_deref(),
            file,
            &meta,
            content_type,
        )))
    }

    /// The best precompressed sibling of the file a clean path names that the client accepts
    /// and that exists as a regular file: its coding and representation, with the original's
    /// type. `None`: serve the file itself.
    fn sibling(
        &self,
        clean: &path::CleanPath,
        fields: &Fields<'_>,
    ) -> Result<Option<(Coding, Representation)>, FileError> {
        let Some(path) = cache_path(clean) else {
            return Ok(None);
        };
        let name = if clean.trailing_slash {
            "index.html"
        } else {
            &path
        };
        let content_type = mime::for_path(name);
        if !compressible(content_type) {
            return Ok(None);
        }
        // br first on a tie: the smaller of the two, and free to send either way.
        let mut offer: &[Coding] = &[Coding::Br, Coding::Gzip];
        while let c @ (Coding::Br | Coding::Gzip) = negotiate(fields.accept(), offer) {
            let ext = if c == Coding::Br { ".br" } else { ".gz" };
            let mut buf = [0u8; SIBLING_ON_STACK];
            let sibling = with_ext(&path, ext, &mut buf);
            if let Some(rep) = self.plain_file(&sibling, content_type)? {
                return Ok(Some((c, rep)));
            }
            offer = if c == Coding::Br {
                &[Coding::Gzip]
            } else {
                &[]
            };
        }
        Ok(None)
    }

    /// A regular file at `path` (cached or opened), typed `content_type`; `None` when there is
    /// none (missing, or not a regular file).
    fn plain_file(
        &self,
        path: &str,
        content_type: &'static str,
    ) -> Result<Option<Representation>, FileError> {
        if self.cache.bytes > 0 {
            let follow = self.root.resolver() == Resolver::Openat2;
            if let Some(c) = cache::lookup(self.id, &self.cache, self.root.dir(), path, follow) {
                let len = c.data.len() as u64;
                return Ok(Some((
                    Source::Memory(c.data),
                    len,
                    c.etag,
                    c.mtime_s,
                    content_type,
                )));
            }
        }
        let file = match self.root.open_beneath(path) {
            Ok(f) => f,
            Err(e) if FileError::from_io(&e) == FileError::NotFound => return Ok(None),
            Err(e) => return Err(FileError::from_io(&e)),
        };
        let meta = file.metadata().map_err(|e| FileError::from_io(&e))?;
        if !meta.is_file() {
            return Ok(None);
        }
        Ok(Some(self.represent(Some(path), file, &meta, content_type)))
    }

    /// An opened regular file as a representation, kept in the worker's cache under `path`
    /// when it fits.
    fn represent(
        &self,
        path: Option<&str>,
        file: File,
        meta: &std::fs::Metadata,
        content_type: &'static str,
    ) -> Representation {
        let len = meta.len();
        let mtime_ns = u128::from(meta.mtime().max(0).unsigned_abs()) * 1_000_000_000
            + u128::from(meta.mtime_nsec().max(0).unsigned_abs());
        let etag = ETag::new(meta.ino(), len, mtime_ns);
        let mtime_s = meta.mtime().max(0).unsigned_abs();
        let source = match path.and_then(|path| {
            let meta = (len, etag, mtime_s, content_type);
            cache::insert(self.id, &self.cache, path, &file, meta)
        }) {
            Some(c) => Source::Memory(c.data),
            None => Source::File(file),
        };
        (source, len, etag, mtime_s, content_type)
    }

    /// The cached reply for a clean path, if its file is cached and unchanged.
    fn cached(&self, clean: &path::CleanPath) -> Option<cache::Cached> {
        if self.cache.bytes == 0 {
            return None;
        }
        let path = cache_path(clean)?;
        let follow = self.root.resolver() == Resolver::Openat2;
        cache::lookup(self.id, &self.cache, self.root.dir(), &path, follow)
    }

    /// Opens the file a clean path names (a directory's `index.html`). `(None, None, _)` means
    /// "a directory named without its slash": redirect.
    #[allow(clippy::type_complexity)]
    fn open_representation<'p>(
        &self,
        clean: &'p path::CleanPath,
    ) -> Result<(Option<File>, Option<std::fs::Metadata>, &'p str), FileError> {
        let file = self
            .root
            .open_beneath(&clean.rel)
            .map_err(|e| FileError::from_io(&e))?;
        let meta = file.metadata().map_err(|e| FileError::from_io(&e))?;
        if meta.is_file() {
            if clean.trailing_slash {
                // `/a.txt/`: a file is not a directory (as open(2) says with ENOTDIR).
                return Err(FileError::NotFound);
            }
            return Ok((Some(file), Some(meta), &clean.rel));
        }
        if !meta.is_dir() {
            return Err(FileError::Forbidden);
        }
        if !clean.trailing_slash {
            return Ok((None, None, &clean.rel));
        }
        drop(file);
        let index = if clean.rel.is_empty() {
            "index.html".to_owned()
        } else {
            format!("{}/index.html", clean.rel)
        };
        let file = self
            .root
            .open_beneath(&index)
            .map_err(|e| FileError::from_io(&e))?;
        let meta = file.metadata().map_err(|e| FileError::from_io(&e))?;
        if !meta.is_file() {
            return Err(FileError::NotFound);
        }
        Ok((Some(file), Some(meta), "index.html"))
    }
}

/// The file a clean path names, relative to the root, as the cache keys it: the path itself,
/// or its `index.html` when it ends in a slash. `None` for the root named without a slash.
fn cache_path(clean: &path::CleanPath) -> Option<std::borrow::Cow<'_, str>> {
    match (clean.trailing_slash, clean.rel.is_empty()) {
        (false, false) => Some(clean.rel.as_str().into()),
        (false, true) => None,
        (true, true) => Some("index.html".into()),
        (true, false) => Some(format!("{}/index.html", clean.rel).into()),
    }
}

/// Longest sibling path built on the stack rather than the heap.
const SIBLING_ON_STACK: usize = 256;

/// `path` followed by `ext`, in `buf` when it fits (no allocation per request), else on the heap.
fn with_ext<'b>(
    path: &str,
    ext: &str,
    buf: &'b mut [u8; SIBLING_ON_STACK],
) -> std::borrow::Cow<'b, str> {
    let n = path.len() + ext.len();
    if n > buf.len() {
        return format!("{path}{ext}").into();
    }
    buf[..path.len()].copy_from_slice(path.as_bytes());
    buf[path.len()..n].copy_from_slice(ext.as_bytes());
    // Two str's bytes end to end are UTF-8.
    match std::str::from_utf8(&buf[..n]) {
        Ok(s) => s.into(),
        Err(_) => format!("{path}{ext}").into(),
    }
}

/// Room for `bytes <u64>-<u64>/<u64>`.
const CONTENT_RANGE_CAP: usize = 6 + 3 * 20 + 2;

/// The header fields of a [`FileReply`] besides `Content-Type` and `Content-Length`, as the
/// `(name, value)` pairs `Response::send_file`/`send_empty` take.
pub(crate) struct ExtraFields<'a> {
    list: [(&'static str, &'a [u8]); 7],
    len: usize,
}

impl<'a> ExtraFields<'a> {
    /// The fields, in the order they are sent.
    pub(crate) fn as_slice(&self) -> &[(&'static str, &'a [u8])] {
        &self.list[..self.len]
    }
}

/// Scratch space for the formatted `Content-Range` value of [`FileReply::extra_fields`].
pub(crate) struct RangeBuf([u8; CONTENT_RANGE_CAP]);

impl RangeBuf {
    pub(crate) fn new() -> RangeBuf {
        RangeBuf([0; CONTENT_RANGE_CAP])
    }
}

impl FileReply {
    /// `Location`, `Last-Modified`, `ETag`, `Accept-Ranges`, `Content-Range`,
    /// `Content-Encoding` and `Vary`, as the status needs; `buf` holds the formatted `Content-Range`. `Content-Type` and `Content-Length`
    /// are the fields [`FileReply::content_type`] and [`FileReply::content_length`].
    pub(crate) fn extra_fields<'a>(&'a self, buf: &'a mut RangeBuf) -> ExtraFields<'a> {
        let range_len = self.content_range.map(|range| {
            let mut w = &mut buf.0[..];
            // Cannot fail: CONTENT_RANGE_CAP fits three u64.
            let _ = match range {
                ContentRange::Bytes {
                    first,
                    last,
                    complete,
                } => {
                    write!(w, "bytes {first}-{last}/{complete}")
                }
                ContentRange::Unsatisfied { complete } => write!(w, "bytes */{complete}"),
            };
            CONTENT_RANGE_CAP - w.len()
        });
        let buf: &'a RangeBuf = buf;
        let mut f = ExtraFields {
            list: [("", &[]); 7],
            len: 0,
        };
        let mut push = |name, value| {
            f.list[f.len] = (name, value);
            f.len += 1;
        };
        if let Some(location) = &self.location {
            push("Location", location.as_bytes());
        }
        if let Some(lm) = &self.last_modified {
            push("Last-Modified", lm);
        }
        if let Some(etag) = &self.etag {
            push("ETag", etag.as_bytes());
        }
        if matches!(self.status, 200 | 206) {
            push("Accept-Ranges", b"bytes");
        }
        if let Some(len) = range_len {
            push("Content-Range", &buf.0[..len]);
        }
        if self.coding != Coding::Identity && self.status != 304 {
            push("Content-Encoding", self.coding.token().as_bytes());
        }
        if self.vary {
            push("Vary", b"Accept-Encoding");
        }
        f
    }
}

fn redirect(location: String) -> FileReply {
    FileReply {
        status: 301,
        content_type: None,
        content_length: Some(0),
        last_modified: None,
        etag: None,
        content_range: None,
        location: Some(location),
        body: None,
        coding: Coding::Identity,
        vary: false,
    }
}

fn not_modified(etag: ETag) -> FileReply {
    FileReply {
        status: 304,
        content_type: None,
        content_length: None,
        last_modified: None,
        etag: Some(etag),
        content_range: None,
        location: None,
        body: None,
        coding: Coding::Identity,
        vary: false,
    }
}

fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// How often a field occurred: a repeated singleton field (Range, If-Modified-Since, If-Range)
/// is invalid and ignored.
#[derive(Clone, Copy)]
enum Seen<'h> {
    Absent,
    One(&'h [u8]),
    Many,
}
use Seen::One;

impl<'h> Seen<'h> {
    fn add(&mut self, v: &'h [u8]) {
        *self = match self {
            Seen::Absent => One(v),
            _ => Seen::Many,
        };
    }
}

/// How many `Accept-Encoding` lines [`Fields`] keeps.
const ACCEPT_LINES: usize = 4;

/// The conditional and range fields of a request. If-None-Match is a list field that may span
/// several lines (RFC 9110 §5.3), so lines are checked as they come instead of stored.
struct Fields<'h> {
    none_match_lines: Vec<&'h [u8]>,
    /// The first `Accept-Encoding` lines (a client sends one; more are ignored).
    accept: [&'h [u8]; ACCEPT_LINES],
    accept_lines: usize,
    modified_since: Seen<'h>,
    range: Seen<'h>,
    if_range: Seen<'h>,
}

impl<'h> Fields<'h> {
    fn collect<I: IntoIterator<Item = (&'h [u8], &'h [u8])>>(headers: I) -> Fields<'h> {
        let mut f = Fields {
            none_match_lines: Vec::new(),
            accept: [&[]; ACCEPT_LINES],
            accept_lines: 0,
            modified_since: Seen::Absent,
            range: Seen::Absent,
            if_range: Seen::Absent,
        };
        for (name, value) in headers {
            if name.eq_ignore_ascii_case(b"if-none-match") {
                f.none_match_lines.push(value);
            } else if name.eq_ignore_ascii_case(b"if-modified-since") {
                f.modified_since.add(value);
            } else if name.eq_ignore_ascii_case(b"range") {
                f.range.add(value);
            } else if name.eq_ignore_ascii_case(b"if-range") {
                f.if_range.add(value);
            } else if name.eq_ignore_ascii_case(b"accept-encoding") && f.accept_lines < ACCEPT_LINES
            {
                f.accept[f.accept_lines] = value;
                f.accept_lines += 1;
            }
        }
        f
    }

    /// The `Accept-Encoding` field lines.
    fn accept(&self) -> impl Iterator<Item = &'h [u8]> + '_ {
        self.accept[..self.accept_lines].iter().copied()
    }

    /// RFC 9110 §13.2.2 steps 3 and 4: If-None-Match decides when present; only without it is
    /// If-Modified-Since evaluated.
    fn not_modified(&self, etag: &ETag, last_modified_s: u64) -> bool {
        if !self.none_match_lines.is_empty() {
            return self
                .none_match_lines
                .iter()
                .any(|v| conditional::none_match_hits(v, etag));
        }
        match self.modified_since {
            One(v) => conditional::not_modified_since(v, last_modified_s),
            _ => false,
        }
    }

    /// RFC 9110 §13.2.2 step 5: a Range is honoured only if If-Range is absent or matches.
    fn if_range_allows(&self, etag: &ETag, last_modified_s: u64) -> bool {
        match self.if_range {
            Seen::Absent => true,
            One(v) => conditional::if_range_allows(v, etag, last_modified_s),
            Seen::Many => false,
        }
    }
}

#[cfg(test)]
mod tests;
