//! Opening a normalised path beneath the root directory fd, so that the kernel, not string
//! checks, guarantees nothing outside the root is ever opened.
//!
//! Preferred: `openat2(root, rel, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` (Linux ≥ 5.6). The
//! kernel refuses (EXDEV) any resolution that leaves the root, whether by `..` or by a symlink
//! pointing outside; symlinks that stay inside keep working. `NO_MAGICLINKS` refuses
//! `/proc/self/fd/N`-style links should the root ever contain a procfs. See openat2(2):
//! <https://man7.org/linux/man-pages/man2/openat2.2.html>.
//!
//! Fallback, where `openat2` is missing (ENOSYS: older kernel) or filtered (EPERM from a
//! container's seccomp profile): walk the path one component at a time with
//! `openat(dir, component, O_NOFOLLOW)`. Components are never `.`/`..` (see `path.rs`), and no
//! symlink is followed at all, which is stricter than needed (in-root symlinks are refused too)
//! but cannot escape. Which one is used is probed once, when the root is opened.

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{FileType, Mode, OFlags, ResolveFlags, fstat, openat, openat2};
use rustix::io::Errno;

/// How paths are resolved beneath the root; probed once by [`Root::open`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Resolver {
    /// `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`.
    Openat2,
    /// Component walk with `O_NOFOLLOW`.
    NoFollowWalk,
}

/// The static root: an `O_PATH` directory fd every lookup starts from. Renaming or replacing
/// the directory after start does not move the root.
#[derive(Debug)]
pub(crate) struct Root {
    dir: OwnedFd,
    resolver: Resolver,
}

/// Flags for the file finally opened: read-only, close-on-exec, and non-blocking so that a
/// FIFO placed in the root cannot block the worker in `open` (reads of regular files ignore
/// O_NONBLOCK). `O_NOCTTY` keeps a terminal device from becoming anything's controlling tty.
fn final_flags() -> OFlags {
    OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY
}

impl Root {
    /// Opens `path` as the root and probes which resolver the kernel allows.
    pub(crate) fn open(path: &Path) -> io::Result<Root> {
        let dir = openat(
            rustix::fs::CWD,
            path,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let resolver = match openat2(
            &dir,
            ".",
            OFlags::PATH | OFlags::CLOEXEC,
            Mode::empty(),
            beneath(),
        ) {
            Ok(_) => Resolver::Openat2,
            Err(_) => Resolver::NoFollowWalk,
        };
        Ok(Root { dir, resolver })
    }

    /// Forces a resolver, for tests of the fallback on kernels that have openat2.
    #[cfg(test)]
    pub(crate) fn with_resolver(mut self, resolver: Resolver) -> Root {
        self.resolver = resolver;
        self
    }

    /// Which resolver this root uses.
    pub(crate) fn resolver(&self) -> Resolver {
        self.resolver
    }

    /// The root directory (an `O_PATH` fd), for lookups relative to it.
    pub(crate) fn dir(&self) -> &OwnedFd {
        &self.dir
    }

    /// Opens `rel` (a `CleanPath::rel`: no empty, `.` or `..` components; `""` is the root
    /// itself) read-only beneath the root.
    pub(crate) fn open_beneath(&self, rel: &str) -> io::Result<File> {
        let rel = if rel.is_empty() { "." } else { rel };
        let fd = match self.resolver {
            Resolver::Openat2 => openat2(&self.dir, rel, final_flags(), Mode::empty(), beneath())?,
            Resolver::NoFollowWalk => self.walk(rel)?,
        };
        Ok(File::from(fd))
    }

    fn walk(&self, rel: &str) -> io::Result<OwnedFd> {
        if rel == "." {
            return Ok(openat(&self.dir, ".", final_flags(), Mode::empty())?);
        }
        let mut components = rel.split('/').peekable();
        let mut dir: Option<OwnedFd> = None;
        while let Some(name) = components.next() {
            let parent = dir.as_ref().unwrap_or(&self.dir);
            let next = if components.peek().is_some() {
                // O_PATH | O_NOFOLLOW opens a symlink itself instead of failing, so fstat can
                // tell "a symlink" (ELOOP, as the final component gets) from "not a directory".
                let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                let fd = openat(parent, name, flags, Mode::empty())?;
                match FileType::from_raw_mode(fstat(&fd)?.st_mode) {
                    FileType::Directory => fd,
                    FileType::Symlink => return Err(Errno::LOOP.into()),
                    _ => return Err(Errno::NOTDIR.into()),
                }
            } else {
                openat(
                    parent,
                    name,
                    final_flags() | OFlags::NOFOLLOW,
                    Mode::empty(),
                )?
            };
            dir = Some(next);
        }
        dir.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }
}

fn beneath() -> ResolveFlags {
    ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS
}
