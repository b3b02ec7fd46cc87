//! A worker's cache of small static files: their bytes and validators in memory, so that a
//! hit is answered from memory in the same `send` as its head, with no `open`, `fstat`,
//! `sendfile` or `close`.
//!
//! Without the cache a request costs `openat2`, `statx`, `sendfile` and `close` besides the
//! connection's own syscalls, and its body leaves as a second segment after the head
//! (docs/results.md#against-the-fastest-servers-we-know has the file rows with and without it).
//!
//! # Freshness
//!
//! A hit is served only after its path was checked against the file: by default (`valid` 0)
//! one `statx` per request, which sees a rewrite, a rename over the path, a truncation and a
//! `chmod` (device, inode, size, mode, mtime and ctime must all be unchanged), so a cached
//! file is never staler than one opened afresh. With `valid` above 0 a hit checked within
//! that long is served without the `statx`: a change then shows within `valid`, as with
//! nginx's `open_file_cache_valid`.
//!
//! The check follows symlinks only where the root's resolver does (openat2 follows those that
//! stay in the root; the `O_NOFOLLOW` walk refuses all), and an entry only ever comes from a
//! file opened beneath the root: a path that no longer names the same inode misses, and the
//! miss opens it beneath the root again, which refuses what it always refused.
//!
//! # Memory
//!
//! Files up to `max_file` bytes are kept, up to `bytes` in all per worker; a worker holds its
//! own cache (a thread-local, the workers being pinned threads), so nothing is shared or
//! locked. Larger files go out with `sendfile`, whose zero copy wins once the body is large.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::rc::Rc;
use std::time::{Duration, Instant};

use rustix::fs::{AtFlags, FileType, Statx, StatxFlags, statx};

use super::conditional::ETag;

/// How much a worker may cache, and how long a check of a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileCacheConfig {
    /// Bytes of file content one worker may keep; 0 turns the cache off.
    pub bytes: usize,
    /// Largest file kept, in bytes.
    pub max_file: u64,
    /// How long a hit is served without checking the file again; zero: checked on every
    /// request.
    pub valid: Duration,
}

impl FileCacheConfig {
    /// No cache: every request opens its file.
    pub const OFF: FileCacheConfig = FileCacheConfig {
        bytes: 0,
        max_file: 0,
        valid: Duration::ZERO,
    };
}

impl Default for FileCacheConfig {
    fn default() -> Self {
        FileCacheConfig {
            bytes: 16 << 20,
            max_file: 64 << 10,
            valid: Duration::ZERO,
        }
    }
}

/// What identifies one version of a file: if any of it changed, so may the content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Version {
    dev: (u32, u32),
    ino: u64,
    size: u64,
    mode: u16,
    mtime: (i64, u32),
    ctime: (i64, u32),
}

impl Version {
    fn of(st: &Statx) -> Version {
        Version {
            dev: (st.stx_dev_major, st.stx_dev_minor),
            ino: st.stx_ino,
            size: st.stx_size,
            mode: st.stx_mode,
            mtime: (st.stx_mtime.tv_sec, st.stx_mtime.tv_nsec),
            ctime: (st.stx_ctime.tv_sec, st.stx_ctime.tv_nsec),
        }
    }
}

/// A cached file: its bytes and what a reply needs besides them.
#[derive(Clone, Debug)]
pub(crate) struct Cached {
    pub(crate) data: Rc<[u8]>,
    pub(crate) etag: ETag,
    /// Modification time in whole seconds (the reply caps it at now).
    pub(crate) mtime_s: u64,
    pub(crate) content_type: &'static str,
}

struct Entry {
    file: Cached,
    version: Version,
    checked: Instant,
}

/// One root's cache in one worker.
#[derive(Default)]
struct Cache {
    entries: HashMap<Box<str>, Entry>,
    bytes: usize,
}

thread_local! {
    /// Each worker's caches, one per root (by [`super::StaticFiles`]'s id); usually one.
    static CACHES: RefCell<Vec<(u64, Cache)>> = const { RefCell::new(Vec::new()) };
}

/// The `statx` fields a [`Version`] needs.
fn wanted() -> StatxFlags {
    StatxFlags::TYPE
        | StatxFlags::MODE
        | StatxFlags::INO
        | StatxFlags::SIZE
        | StatxFlags::MTIME
        | StatxFlags::CTIME
}

/// The cached file at `path` (relative to `dir`, the root), if it is cached and still the same
/// file. `follow`: whether the root's resolver follows symlinks.
pub(crate) fn lookup(
    root_id: u64,
    config: &FileCacheConfig,
    dir: impl AsFd,
    path: &str,
    follow: bool,
) -> Option<Cached> {
    if config.bytes == 0 {
        return None;
    }
    CACHES.with_borrow_mut(|caches| {
        let cache = &mut caches.iter_mut().find(|(id, _)| *id == root_id)?.1;
        let entry = cache.entries.get_mut(path)?;
        let now = Instant::now();
        if config.valid.is_zero() || now.duration_since(entry.checked) >= config.valid {
            let flags = if follow {
                AtFlags::empty()
            } else {
                AtFlags::SYMLINK_NOFOLLOW
            };
            match statx(dir, path, flags, wanted()) {
                Ok(st) if Version::of(&st) == entry.version => entry.checked = now,
                // Changed, gone or unreadable: the caller opens it afresh, which decides.
                _ => {
                    let gone = cache.entries.remove(path)?;
                    cache.bytes -= gone.file.data.len();
                    return None;
                }
            }
        }
        Some(entry.file.clone())
    })
}

/// Reads `file` (a regular file just opened beneath the root as `path`, `len` bytes by its
/// `fstat`) into the cache if it fits, and answers it from memory. `None`: not cached (too
/// large, over the budget, or changed while it was read); the caller sends the file instead.
pub(crate) fn insert(
    root_id: u64,
    config: &FileCacheConfig,
    path: &str,
    file: &File,
    meta: (u64, ETag, u64, &'static str),
) -> Option<Cached> {
    let (len, etag, mtime_s, content_type) = meta;
    if config.bytes == 0 || len > config.max_file || len > config.bytes as u64 {
        return None;
    }
    let before = statx(file.as_fd(), "", AtFlags::EMPTY_PATH, wanted()).ok()?;
    if FileType::from_raw_mode(before.stx_mode.into()) != FileType::RegularFile
        || before.stx_size != len
    {
        return None;
    }
    let mut data = vec![0u8; usize::try_from(len).ok()?];
    file.read_exact_at(&mut data, 0).ok()?;
    // A write racing the read shows in the mtime, ctime or size: keep nothing then.
    let after = statx(file.as_fd(), "", AtFlags::EMPTY_PATH, wanted()).ok()?;
    let version = Version::of(&after);
    if version != Version::of(&before) {
        return None;
    }
    let cached = Cached {
        data: Rc::from(data),
        etag,
        mtime_s,
        content_type,
    };
    CACHES.with_borrow_mut(|caches| {
        let at = match caches.iter().position(|(id, _)| *id == root_id) {
            Some(at) => at,
            None => {
                caches.push((root_id, Cache::default()));
                caches.len() - 1
            }
        };
        let cache = &mut caches[at].1;
        if let Some(old) = cache.entries.remove(path) {
            cache.bytes -= old.file.data.len();
        }
        // Over the budget: drop entries in the map's (arbitrary) order until this one fits.
        while cache.bytes + cached.data.len() > config.bytes {
            let Some(key) = cache.entries.keys().next().cloned() else {
                break;
            };
            if let Some(e) = cache.entries.remove(&key) {
                cache.bytes -= e.file.data.len();
            }
        }
        cache.bytes += cached.data.len();
        cache.entries.insert(
            path.into(),
            Entry {
                file: cached.clone(),
                version,
                checked: Instant::now(),
            },
        );
    });
    Some(cached)
}

/// Bytes and entries this thread caches for `root_id`, for tests.
#[cfg(test)]
pub(crate) fn usage(root_id: u64) -> (usize, usize) {
    CACHES.with_borrow(|caches| {
        caches
            .iter()
            .find(|(id, _)| *id == root_id)
            .map_or((0, 0), |(_, c)| (c.bytes, c.entries.len()))
    })
}
