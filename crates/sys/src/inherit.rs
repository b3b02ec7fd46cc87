//! Descriptors a process inherits across `exec` (systemd's `LISTEN_FDS`, the upgrade
//! channel of docs/restart.md), taken into ownership once, and the signal that asks a running
//! `twelve serve` to upgrade.

use rustix::io::FdFlags;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::Mutex;

/// Descriptor numbers already taken: a second `OwnedFd` for one number would close it twice.
static TAKEN: Mutex<Vec<RawFd>> = Mutex::new(Vec::new());

/// Takes ownership of descriptor `fd`, inherited across `exec` and named by the parent (an
/// environment variable): checks that it is open and above stdio, makes it close-on-exec so
/// it goes no further than this process, and refuses a number already taken.
pub fn take_inherited(fd: RawFd) -> io::Result<OwnedFd> {
    if fd < 3 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("descriptor {fd} is stdio, not an inherited socket"),
        ));
    }
    let mut taken = TAKEN.lock().unwrap_or_else(|e| e.into_inner());
    if taken.contains(&fd) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("descriptor {fd} already taken"),
        ));
    }
    // SAFETY: `fcntl(F_GETFD)` only reads the descriptor table; the borrow lives for the call
    // and an unopened number makes it fail with EBADF, which we report.
    let flags = rustix::io::fcntl_getfd(unsafe { rustix::fd::BorrowedFd::borrow_raw(fd) })?;
    // SAFETY: the descriptor is open (checked above), was given to this process by its parent
    // for this purpose, and nothing else in the process owns it: the only other way to own an
    // inherited number is this function, and `TAKEN` refuses the same number twice.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    rustix::io::fcntl_setfd(&owned, flags | FdFlags::CLOEXEC)?;
    taken.push(fd);
    Ok(owned)
}

/// Sends `SIGUSR2` to `pid`: what `twelve upgrade --pid` does.
pub fn signal_upgrade(pid: i32) -> io::Result<()> {
    let pid = rustix::process::Pid::from_raw(pid)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "pid must be positive"))?;
    rustix::process::kill_process(pid, rustix::process::Signal::USR2)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn stdio_and_closed_numbers_are_refused() {
        assert!(take_inherited(0).is_err());
        assert!(take_inherited(2).is_err());
        assert!(take_inherited(1_000_000).is_err(), "not open");
    }

    #[test]
    fn a_number_is_taken_once_and_made_cloexec() {
        let file = std::fs::File::open("/dev/null").unwrap();
        // Give up std's ownership so that only `take_inherited` owns the number.
        let raw = std::os::fd::IntoRawFd::into_raw_fd(file);
        let owned = take_inherited(raw).unwrap();
        assert_eq!(owned.as_raw_fd(), raw);
        assert!(
            rustix::io::fcntl_getfd(&owned)
                .unwrap()
                .contains(FdFlags::CLOEXEC)
        );
        assert!(take_inherited(raw).is_err(), "second take");
        // Not dropped while the number is in `TAKEN`: a later test may reuse the number.
        std::mem::forget(owned);
    }
}
