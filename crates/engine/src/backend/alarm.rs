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
//!
//! The alarm is set at the deadline's own time on the monotonic clock (`TFD_TIMER_ABSTIME`),
//! not at a span from now: the loop knows "now" as the millisecond its turn began (rounded
//! down), so a span counted from it would fire late by the part of a millisecond the clock had
//! run past it plus whatever the turn did before setting the alarm, up to a tick and more on a
//! timer a request waits on (`/delay/{ms}`).

use super::worker::Clock;
use rustix::fd::OwnedFd;
use rustix::time::{
    ClockId, Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec, clock_gettime,
    timerfd_create, timerfd_settime,
};
use std::time::Duration;

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

/// `t` less `d` (`t` later than `d`: a monotonic reading less the time since its clock's zero).
fn minus(t: Timespec, d: Duration) -> Timespec {
    let ns = i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec) - d.as_nanos() as i128;
    Timespec {
        tv_sec: ns.div_euclid(1_000_000_000) as i64,
        tv_nsec: ns.rem_euclid(1_000_000_000) as i64,
    }
}

/// `t` plus `ms` milliseconds, the nanoseconds kept below a second.
fn plus_ms(t: Timespec, ms: u64) -> Timespec {
    let ns = i128::from(t.tv_nsec) + i128::from(ms % 1000) * 1_000_000;
    Timespec {
        tv_sec: t
            .tv_sec
            .saturating_add(i64::try_from(ms / 1000).unwrap_or(i64::MAX))
            .saturating_add((ns / 1_000_000_000) as i64),
        tv_nsec: (ns % 1_000_000_000) as i64,
    }
}

/// The timerfd and when it is armed to fire.
pub(crate) struct Alarm {
    fd: Option<OwnedFd>,
    /// Worker-clock ms the timerfd fires at; `None` once it fired (or was never set).
    armed: Option<u64>,
    /// The worker clock's zero on the monotonic clock (never before it: the alarm fires at or
    /// after the worker clock reads the deadline).
    zero: Timespec,
}

impl Alarm {
    /// A monotonic, non-blocking timerfd firing at times of `clock`; without one (descriptors
    /// exhausted at start) every wait carries its timeout instead.
    pub(crate) fn new(clock: &Clock) -> Self {
        let fd = timerfd_create(
            TimerfdClockId::Monotonic,
            TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
        )
        .ok();
        // `elapsed` read first: the monotonic reading after it makes `zero` at or after the
        // clock's true zero (std's `Instant` is CLOCK_MONOTONIC on Linux).
        let since = clock.elapsed();
        let zero = minus(clock_gettime(ClockId::Monotonic), since);
        Self {
            fd,
            armed: None,
            zero,
        }
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
                let spec = Itimerspec {
                    it_interval: Timespec {
                        tv_sec: 0,
                        tv_nsec: 0,
                    },
                    it_value: plus_ms(self.zero, now.saturating_add(d)),
                };
                match timerfd_settime(fd, TimerfdTimerFlags::ABSTIME, &spec) {
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

    fn ts(tv_sec: i64, tv_nsec: i64) -> Timespec {
        Timespec { tv_sec, tv_nsec }
    }

    fn same(got: Timespec, want: Timespec, case: &dyn std::fmt::Debug) {
        assert_eq!(
            (got.tv_sec, got.tv_nsec),
            (want.tv_sec, want.tv_nsec),
            "{case:?}"
        );
    }

    #[test]
    fn deadlines_on_the_monotonic_clock() {
        // (zero, ms, zero + ms)
        let cases = [
            (ts(10, 0), 0, ts(10, 0)),
            (ts(10, 0), 15, ts(10, 15_000_000)),
            (ts(10, 999_500_000), 1, ts(11, 500_000)),
            (ts(10, 999_999_999), 1_000, ts(11, 999_999_999)),
            (ts(10, 400_000_000), 2_600, ts(13, 0)),
            (ts(10, 0), u64::MAX, ts(18_446_744_073_709_561, 615_000_000)),
        ];
        for (zero, ms, want) in cases {
            same(plus_ms(zero, ms), want, &ms);
        }
        // (reading, since zero, zero)
        let cases = [
            (ts(10, 0), Duration::ZERO, ts(10, 0)),
            (ts(10, 500), Duration::from_nanos(200), ts(10, 300)),
            (ts(10, 100), Duration::from_nanos(200), ts(9, 999_999_900)),
            (ts(10, 0), Duration::from_millis(2_500), ts(7, 500_000_000)),
        ];
        for (t, d, want) in cases {
            same(minus(t, d), want, &d);
        }
    }

    #[test]
    fn the_alarm_fires_no_earlier_than_the_clock_reads_its_deadline() {
        let clock = Clock::start();
        let mut a = Alarm::new(&clock);
        let now = clock.now_ms();
        assert_eq!(
            a.timeout_ms(Some(3), now),
            None,
            "armed, so the wait blocks"
        );
        let fd = a.fd().expect("timerfd");
        let mut pfd = [rustix::event::PollFd::new(fd, rustix::event::PollFlags::IN)];
        assert_eq!(rustix::event::poll(&mut pfd, None).unwrap(), 1);
        assert!(clock.now_ms() >= now + 3, "fired before the deadline");
    }

    #[test]
    fn an_armed_alarm_makes_the_fd_readable() {
        let mut a = Alarm::new(&Clock::start());
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
