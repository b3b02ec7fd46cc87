//! A worker's alarm: the timer wheel's next deadline (and the gate's and the async runtime's)
//! kept on a timerfd the loop's wait watches, so the wait itself has no timeout.
//!
//! A wait with a timeout sets up and cancels a high-resolution timer in the kernel on every
//! call (`schedule_hrtimeout_range`: the timer's set-up, start and cancel under the clock
//! base's lock): at a fixed rate, where most wake-ups answer one request, that is a cost per
//! request. The deadline a worker waits for changes rarely (a connection's deadline only ever
//! moves later, and the wheel keeps its earliest entry until that entry's tick), so the timer
//! is set only when the deadline comes earlier than the armed one; one armed too early fires,
//! finds nothing due and is set again. A wait then blocks with no timeout
//! (<https://man7.org/linux/man-pages/man2/timerfd_create.2.html>).

use rustix::fd::OwnedFd;
use rustix::time::{
    Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec, timerfd_create,
    timerfd_settime,
};

/// What the loop's next wait should do about its deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Plan {
    /// Wait without a timeout: nothing due, or the armed alarm comes at or before the deadline.
    Block,
    /// The deadline is now: do not block.
    Poll,
    /// Set the alarm this many milliseconds from now, then wait without a timeout.
    Arm(u64),
}

/// Decides the next wait from the deadline `due_in` (ms from `now`; `None`: none) and the
/// alarm's armed time (`armed`, worker-clock ms; `None`: not armed).
fn plan(armed: Option<u64>, due_in: Option<u64>, now: u64) -> Plan {
    match due_in {
        None => Plan::Block,
        Some(0) => Plan::Poll,
        Some(d) if armed.is_some_and(|a| a <= now.saturating_add(d)) => Plan::Block,
        Some(d) => Plan::Arm(d),
    }
}

/// The timerfd and when it is armed to fire.
pub(crate) struct Alarm {
    fd: Option<OwnedFd>,
    /// Worker-clock ms the timerfd fires at; `None` once it fired (or was never set).
    armed: Option<u64>,
}

impl Alarm {
    /// A monotonic, non-blocking timerfd; without one (descriptors exhausted at start) every
    /// wait carries its timeout instead.
    pub(crate) fn new() -> Self {
        let fd = timerfd_create(
            TimerfdClockId::Monotonic,
            TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
        )
        .ok();
        Self { fd, armed: None }
    }

    /// The timerfd, for the loop's wait to watch (readable when the alarm fired).
    pub(crate) fn fd(&self) -> Option<&OwnedFd> {
        self.fd.as_ref()
    }

    /// Forgets a timerfd the loop could not watch: every wait carries its timeout then.
    pub(crate) fn drop_fd(&mut self) {
        self.fd = None;
    }

    /// The timeout (ms, `None`: block) for a wait at `now` that must end by `due_in` ms from
    /// now, setting the alarm first where it has to come earlier.
    #[inline]
    pub(crate) fn timeout_ms(&mut self, due_in: Option<u64>, now: u64) -> Option<u64> {
        let Some(fd) = &self.fd else {
            return due_in;
        };
        match plan(self.armed, due_in, now) {
            Plan::Block => None,
            Plan::Poll => Some(0),
            Plan::Arm(d) => {
                let value = Timespec {
                    tv_sec: (d / 1000) as i64,
                    tv_nsec: ((d % 1000) * 1_000_000) as i64,
                };
                let zero = Timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                let spec = Itimerspec {
                    it_interval: zero,
                    it_value: value,
                };
                match timerfd_settime(fd, TimerfdTimerFlags::empty(), &spec) {
                    Ok(_) => {
                        self.armed = Some(now.saturating_add(d));
                        None
                    }
                    // Cannot happen with a valid timerfd and spec; the wait's own timeout
                    // still ends it in time.
                    Err(_) => Some(d),
                }
            }
        }
    }

    /// The timerfd fired (the wait reported it): consume its count; the next wait arms it
    /// again if a deadline remains.
    pub(crate) fn fired(&mut self) {
        self.armed = None;
        if let Some(fd) = &self.fd {
            let mut count = [0u8; 8];
            let _ = rustix::io::read(fd, &mut count);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans() {
        // (armed, due_in, now, plan)
        let cases = [
            (None, None, 5, Plan::Block),
            (Some(100), None, 5, Plan::Block),
            (None, Some(0), 5, Plan::Poll),
            (Some(100), Some(0), 5, Plan::Poll),
            (None, Some(50), 5, Plan::Arm(50)),
            (Some(100), Some(95), 5, Plan::Block),
            (Some(100), Some(200), 5, Plan::Block),
            (Some(100), Some(94), 5, Plan::Arm(94)),
        ];
        for (armed, due_in, now, want) in cases {
            assert_eq!(plan(armed, due_in, now), want, "{armed:?} {due_in:?} {now}");
        }
    }

    #[test]
    fn an_armed_alarm_makes_the_fd_readable() {
        let mut a = Alarm::new();
        assert_eq!(a.timeout_ms(Some(1), 0), None, "armed, so the wait blocks");
        assert_eq!(a.timeout_ms(Some(5), 0), None, "armed earlier already");
        let fd = a.fd().expect("timerfd");
        let mut pfd = [rustix::event::PollFd::new(fd, rustix::event::PollFlags::IN)];
        let n = rustix::event::poll(&mut pfd, None).unwrap();
        assert_eq!(n, 1);
        a.fired();
        assert_eq!(a.timeout_ms(Some(5), 3), None, "armed again");
        assert!(a.armed == Some(8));
    }
}
