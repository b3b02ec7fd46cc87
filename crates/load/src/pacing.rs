//! Pacing: when a worker may nap on its own timer instead of blocking until the server's next
//! send wakes it, and the one rule that keeps a nap out of every figure: **nap only when
//! everything pending carries a time of its own**.
//!
//! Every I/O event is booked at its own time, in one place (`Dispatch::on_event`): the
//! kernel's receive stamp of the read that brought it (`--rx-time kernel`), or else the return
//! of the poll that reported it. A nap delays the poll, so it may only start when nothing
//! pending would be booked at that poll: no connect under way (a connect brings no data, so
//! no stamp), no TLS handshake under way (the client's next flight leaves when it reads the
//! server's), no received bytes waiting for a read, and answers stamped by the kernel.
//!
//! When: `--coalesce auto` (the default) naps only while the client is the limit: busy in
//! every housekeeping window for 200 ms, judged from the worker's CPU time over each (in the
//! simulation, the share of it spent neither polling nor napping: `Pacing::tick`). With CPU to spare there is nothing to save, and a client that naps
//! batches its requests, so the server wakes less often and looks better than under
//! independent clients: then it blocks, as wrk does. `on` naps whenever the rule allows; `off`
//! never; a fixed `DURATION` naps that long after every small batch (booked at the read under
//! `--rx-time read`, where the nap is then in the latency: the user asked for it).
//!
//! The open model sends on its schedule whatever the client's load. Its worker wakes when the
//! last request due within `--slack` of the next one is due ([`crate::Schedule::wake_ns`]):
//! one wake-up serves them all, the first leaving at most the slack late and the last (or a
//! lone one) on time, plus the timer's own lateness; a wake-up that comes later still sends
//! every request due by then. While a connection is ready for the next due request and the
//! rule holds, the worker sleeps on its timer to that wake-up rather than being woken by each
//! answer (`Pacing::sleeps_through`): the answers are read with the next sends, booked at
//! their stamps.
//!
//! How long (`auto` and `on`): a quarter of the server's queue time (the mean latency above the
//! fastest response seen), at most a tenth of the mean latency and 1 ms, never under 2 µs, and
//! only after a poll of fewer than `SMALL_BATCH` events with at least that many connections
//! open on the worker. The report says how many naps were taken and why ([`NapCause`]).
//!
//! docs/load-generator.md, "Pacing: naps and event time", tells the story once.

use std::time::Duration;
use twelve_report::NapCause;

/// Polls with fewer ready events (connections, not responses: a pipelined connection brings
/// several) than this are "small batches" and may be followed by a nap; a client-bound run
/// that polls more than this at a time has batches enough without napping.
pub(crate) const SMALL_BATCH: usize = 16;
/// At most 1/QUEUE_SHARE of the mean queue time (latency above the floor), so the server
/// still has three quarters of its queue to work through when the nap ends...
const QUEUE_SHARE: u64 = 4;
/// ... at most 1/LATENCY_SHARE of the mean latency, which bounds what a nap can cost a run
/// whose latency spread is not a queue ...
const LATENCY_SHARE: u64 = 10;
/// ... and never longer than this: long enough for a nap to gather many answers from a server
/// with a long queue (a full TLS handshake per request, a capped server at `-c256`).
const MAX_NAP_NS: u64 = 1_000_000;
/// No nap shorter than this (a wake-up costs about as much).
const MIN_NAP_NS: u64 = 2_000;
/// A window the client spent at least 9/10 of working (neither polling nor napping) is a busy
/// one: the self-check's client-bound line (twelve_report::verdict).
const BOUND_TENTHS: u64 = 9;
/// The client is the limit after this many busy windows in a row (200 ms), not after one: a
/// server under a CPU quota runs in bursts of up to twice its quota (the end of one period
/// and the start of the next), and the client keeping up with such a burst is busy through
/// it without being the limit. Twice the cgroup's default period of 100 ms
/// (<https://docs.kernel.org/scheduler/sched-bwc.html>) outlasts any such burst.
const BOUND_WINDOWS: u32 = 20;
/// `--slack`'s default: below the gap between requests up to 50k req/s, where each request
/// then leaves on time but for the timer's own lateness (tens of µs on a VM), so that the p99
/// schedule lag stays under 100 µs; above, a wake-up serves two or more.
pub const DEFAULT_SLACK: Duration = Duration::from_micros(20);
/// The longest `--slack` accepted: wrk2 rounds its timers to whole milliseconds; ten of them
/// would move the load the schedule states.
pub const MAX_SLACK: Duration = Duration::from_millis(10);

/// While napping, every PROBE_EVERY-th window takes no nap, so the next judgement sees the
/// client as it would be without them (naps absorb the waits that would show it idle).
const PROBE_EVERY: u32 = 10;

/// The longest nap `--coalesce DURATION` accepts: longer would hold responses for longer than
/// many of the latencies being measured.
const MAX_FIXED: Duration = Duration::from_millis(10);

/// How a worker waits after a small batch of responses (`--coalesce`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Coalesce {
    /// Nap only while the client is the limit (see the module documentation).
    #[default]
    Auto,
    /// Nap whenever the rule allows, whatever the client's load.
    On,
    /// Always block in `epoll_wait`, as wrk does.
    Off,
    /// Nap this long after every small batch.
    Fixed(Duration),
}

impl Coalesce {
    /// Parses `auto`, `on`, `off`, or a duration such as `10us` (see [`crate::parse_duration`]).
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Coalesce::Auto),
            "on" => Ok(Coalesce::On),
            "off" | "0" => Ok(Coalesce::Off),
            d => {
                let bad =
                    || format!("--coalesce {d:?}: expected auto, on, off, or a nap such as 10us");
                // A bare number would read as seconds (as for -d), never meant for a nap.
                if !d.ends_with(|c: char| c.is_ascii_alphabetic()) {
                    return Err(bad());
                }
                match crate::parse_duration(d) {
                    Ok(nap) if nap <= MAX_FIXED => Ok(Coalesce::Fixed(nap)),
                    Ok(_) => Err(format!("--coalesce {d:?}: at most 10ms")),
                    Err(_) => Err(bad()),
                }
            }
        }
    }
}

/// What a worker knows after handling a poll's events: the inputs of the nap rule.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Turn {
    /// Events the poll returned.
    pub polled: usize,
    /// Connections open on the worker.
    pub open: u64,
    /// The latency so far.
    pub latency: MeanLatency,
    /// Whether reads bring the kernel's receive stamps (`--rx-time kernel` over TCP).
    pub stamped: bool,
    /// Whether something pending would carry no time of its own: a connect or a TLS
    /// handshake under way, bytes received and not yet read.
    pub untimed: bool,
}

/// One worker's pacing: the nap rule, the judgement of whether the client is the limit, and
/// the count of naps for the report. Sans-I/O: the worker tells it when it waited and asks it
/// how long to nap.
#[derive(Debug, Clone)]
pub(crate) struct Pacing {
    mode: Coalesce,
    /// The current window (one housekeeping tick): its start, the thread's CPU time then
    /// (where known), and how long the worker waited in it (polls and naps).
    window_start_ns: u64,
    window_cpu_ns: Option<u64>,
    idle_ns: u64,
    /// Whether the last judgement found the client the limit.
    bound: bool,
    /// Busy windows in a row so far, while not the limit.
    busy_run: u32,
    /// Windows since that judgement; a probe window takes no nap.
    since_judged: u32,
    naps: u64,
}

impl Pacing {
    pub(crate) fn new(mode: Coalesce, now_ns: u64) -> Self {
        Self {
            mode,
            window_start_ns: now_ns,
            window_cpu_ns: None,
            idle_ns: 0,
            bound: false,
            busy_run: 0,
            since_judged: 0,
            naps: 0,
        }
    }

    /// The worker waited (in a poll or a nap) from `from_ns` to `to_ns`.
    #[inline]
    pub(crate) fn waited(&mut self, from_ns: u64, to_ns: u64) {
        self.idle_ns += to_ns.saturating_sub(from_ns);
    }

    /// Ends the window at `now_ns`, with the thread's CPU time `cpu_ns` where known: judges
    /// whether the client is the limit after a window without naps (the first, or a probe),
    /// and starts the next. Busy is the CPU time over the window where known (a worker that
    /// other work keeps off its CPU is not the limit), else the time it did not wait.
    pub(crate) fn tick(&mut self, now_ns: u64, cpu_ns: Option<u64>) {
        let wall = now_ns.saturating_sub(self.window_start_ns);
        let last_cpu = std::mem::replace(&mut self.window_cpu_ns, cpu_ns);
        if wall == 0 {
            return;
        }
        let busy = match (cpu_ns, last_cpu) {
            (Some(now), Some(then)) => now.saturating_sub(then),
            // The first reading of the CPU time: the next window is the first judged.
            (Some(_), None) => 0,
            (None, _) => wall.saturating_sub(self.idle_ns),
        };
        let busy = busy * 10 >= wall * BOUND_TENTHS;
        if !self.bound {
            self.busy_run = if busy { self.busy_run + 1 } else { 0 };
            self.bound = self.busy_run >= BOUND_WINDOWS;
            self.since_judged = 0;
        } else if self.probing() {
            // A probe takes no nap: busy through it, the client is still the limit.
            self.bound = busy;
            self.busy_run = 0;
            self.since_judged = 0;
        } else {
            self.since_judged += 1;
        }
        self.window_start_ns = now_ns;
        self.idle_ns = 0;
    }

    /// Whether this window takes no nap so that its end judges the client afresh.
    fn probing(&self) -> bool {
        self.since_judged + 1 >= PROBE_EVERY
    }

    /// Whether `auto` finds the client the limit now (outside a probe window).
    pub(crate) fn client_bound(&self) -> bool {
        self.bound && !self.probing()
    }

    /// The nap, in ns, after the turn `t`; 0 for none.
    pub(crate) fn nap_ns(&self, t: &Turn) -> u64 {
        if t.polled == 0 || t.polled >= SMALL_BATCH || t.untimed {
            return 0;
        }
        match self.mode {
            Coalesce::Off => 0,
            Coalesce::Fixed(d) => u64::try_from(d.as_nanos()).unwrap_or(u64::MAX),
            Coalesce::Auto if !self.client_bound() => 0,
            Coalesce::Auto | Coalesce::On => {
                // Unstamped answers would be booked at the poll after the nap; and no batch
                // can gather on fewer connections than a batch.
                if !t.stamped || t.open < SMALL_BATCH as u64 {
                    return 0;
                }
                let mean = t.latency.get();
                let queue = mean.saturating_sub(t.latency.floor());
                let nap = (queue / QUEUE_SHARE)
                    .min(mean / LATENCY_SHARE)
                    .min(MAX_NAP_NS);
                if nap < MIN_NAP_NS { 0 } else { nap }
            }
        }
    }

    /// Open model, with a connection ready for the next due request: whether the worker may
    /// sleep on its timer to the next wake-up instead of waiting for readiness, so answers
    /// that arrive meanwhile are read with the next sends. The same rule as a nap (the answers
    /// must carry their stamps, nothing untimed pending), and never under `off`.
    pub(crate) fn sleeps_through(&self, stamped: bool, untimed: bool) -> bool {
        self.mode != Coalesce::Off && stamped && !untimed
    }

    /// The worker napped from `from_ns` to `to_ns`.
    pub(crate) fn napped(&mut self, from_ns: u64, to_ns: u64) {
        self.naps += 1;
        self.waited(from_ns, to_ns);
    }

    /// Naps taken, and why (`None` when none was).
    pub(crate) fn report(&self) -> (u64, Option<NapCause>) {
        let cause = match self.mode {
            _ if self.naps == 0 => None,
            Coalesce::Auto => Some(NapCause::ClientLimit),
            _ => Some(NapCause::Asked),
        };
        (self.naps, cause)
    }
}

impl std::fmt::Display for Coalesce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Coalesce::Auto => f.write_str("auto"),
            Coalesce::On => f.write_str("on"),
            Coalesce::Off => f.write_str("off"),
            // Whole microseconds where exact, so the value reads back as it was given.
            Coalesce::Fixed(d) if d.subsec_nanos() % 1_000 == 0 => {
                write!(f, "{}us", d.as_micros())
            }
            Coalesce::Fixed(d) => write!(f, "{}ns", d.as_nanos()),
        }
    }
}

/// A running mean of latency (exponentially weighted, 1/64 per sample): cheap enough for every
/// response, and quick to follow a change of load; and the floor, the fastest response seen.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MeanLatency {
    mean: u64,
    floor: u64,
}

impl Default for MeanLatency {
    fn default() -> Self {
        Self {
            mean: 0,
            floor: u64::MAX,
        }
    }
}

impl MeanLatency {
    #[inline]
    pub(crate) fn add(&mut self, ns: u64) {
        // Every term stays below u64::MAX / 64 * 64: no overflow for any latency.
        self.mean = self.mean - self.mean / 64 + ns / 64;
        self.floor = self.floor.min(ns);
    }

    pub(crate) fn get(self) -> u64 {
        self.mean
    }

    /// The fastest response so far; `u64::MAX` before the first.
    pub(crate) fn floor(self) -> u64 {
        self.floor
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000;
    const MS: u64 = 1_000_000;

    /// A latency record whose mean is `mean` and whose fastest response took `floor`.
    fn seen(mean: u64, floor: u64) -> MeanLatency {
        MeanLatency { mean, floor }
    }

    /// A turn of `polled` events with `open` connections, stamped answers and nothing untimed.
    fn turn(polled: usize, open: u64, latency: MeanLatency) -> Turn {
        Turn {
            polled,
            open,
            latency,
            stamped: true,
            untimed: false,
        }
    }

    /// A worker that spent `busy_tenths` of each of `windows` 10 ms windows working, and polled
    /// the rest; returns its pacing after them.
    fn after_windows(mode: Coalesce, busy_tenths: u64, windows: u64) -> Pacing {
        let mut p = Pacing::new(mode, 0);
        for w in 0..windows {
            let start = w * 10 * MS;
            p.waited(start, start + (10 - busy_tenths) * MS);
            p.tick(start + 10 * MS, None);
        }
        p
    }

    /// Open connections: enough for a batch.
    const MANY: u64 = 64;
    const BOUND: u64 = 10;
    const SPARE: u64 = 5;

    macro_rules! nap {
        ($($name:ident: $mode:expr, $busy:expr, $turn:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(after_windows($mode, $busy, BOUND_WINDOWS.into()).nap_ns(&$turn), $want);
            }
        )*};
    }

    nap! {
        // With CPU to spare, `auto` behaves as an independent client: it never naps.
        auto_with_cpu_to_spare_never_naps: Coalesce::Auto, SPARE, turn(1, MANY, seen(600 * US, 40 * US)) => 0;
        auto_at_the_limit_naps_a_tenth: Coalesce::Auto, BOUND, turn(1, MANY, seen(600 * US, 40 * US)) => 60 * US;
        auto_at_nine_tenths_busy_is_the_limit: Coalesce::Auto, 9, turn(1, MANY, seen(600 * US, 40 * US)) => 60 * US;
        on_naps_with_cpu_to_spare: Coalesce::On, SPARE, turn(1, MANY, seen(600 * US, 40 * US)) => 60 * US;
        deep_queue_naps_a_quarter_of_it: Coalesce::On, SPARE, turn(1, MANY, seen(3_000 * US, 2_000 * US)) => 250 * US;
        long_latency_naps_1ms: Coalesce::On, SPARE, turn(1, MANY, seen(20 * MS, MS)) => MS;
        no_queue_never_naps: Coalesce::On, SPARE, turn(1, MANY, seen(30 * US, 28 * US)) => 0;
        spread_without_queue_bounded_by_a_tenth: Coalesce::On, SPARE, turn(1, MANY, seen(100 * US, 10 * US)) => 10 * US;
        just_under_the_minimum: Coalesce::On, SPARE, turn(1, MANY, seen(19 * US, 10 * US)) => 0;
        big_batch_never_naps: Coalesce::On, SPARE, turn(SMALL_BATCH, MANY, seen(600 * US, 40 * US)) => 0;
        empty_poll_never_naps: Coalesce::On, SPARE, turn(0, MANY, seen(600 * US, 40 * US)) => 0;
        no_latency_yet: Coalesce::On, SPARE, turn(1, MANY, MeanLatency::default()) => 0;
        few_connections_never_nap: Coalesce::On, SPARE, turn(1, SMALL_BATCH as u64 - 1, seen(600 * US, 40 * US)) => 0;
        enough_connections_for_a_batch: Coalesce::On, SPARE, turn(1, SMALL_BATCH as u64, seen(600 * US, 40 * US)) => 60 * US;
        // The rule: nothing pending may be left without a time of its own.
        unstamped_answers_never_nap: Coalesce::On, BOUND, Turn { stamped: false, ..turn(1, MANY, seen(600 * US, 40 * US)) } => 0;
        untimed_pending_never_naps: Coalesce::On, BOUND, Turn { untimed: true, ..turn(1, MANY, seen(600 * US, 40 * US)) } => 0;
        fixed_untimed_pending_never_naps: Coalesce::Fixed(Duration::from_micros(7)), SPARE, Turn { untimed: true, ..turn(2, 1, MeanLatency::default()) } => 0;
        off_never_naps: Coalesce::Off, BOUND, turn(1, MANY, seen(600 * US, 40 * US)) => 0;
        // A fixed nap is the user's: on any load, unstamped too (then it is in the latency).
        fixed_small_batch: Coalesce::Fixed(Duration::from_micros(7)), SPARE, Turn { stamped: false, ..turn(2, 1, MeanLatency::default()) } => 7 * US;
        fixed_big_batch: Coalesce::Fixed(Duration::from_micros(7)), SPARE, turn(SMALL_BATCH, MANY, MeanLatency::default()) => 0;
    }

    /// Where the thread's CPU time is known it is the measure: a worker that never waited but
    /// was kept off its CPU by other work half the time is not the limit.
    #[test]
    fn cpu_time_judges_where_known() {
        let mut p = Pacing::new(Coalesce::Auto, 0);
        p.tick(10 * MS, Some(100 * MS));
        let (mut now, mut cpu) = (10 * MS, 100 * MS);
        // Never waited, but ran only half of each window: not the limit.
        for _ in 0..2 * BOUND_WINDOWS {
            (now, cpu) = (now + 10 * MS, cpu + 5 * MS);
            p.tick(now, Some(cpu));
        }
        assert!(!p.client_bound());
        for _ in 0..BOUND_WINDOWS {
            assert!(!p.client_bound());
            (now, cpu) = (now + 10 * MS, cpu + 10 * MS);
            p.tick(now, Some(cpu));
        }
        assert!(p.client_bound());
    }

    /// A server under a CPU quota runs in bursts (up to twice its quota, across a period's
    /// end), and a client keeping up with one is busy through it: bursts shorter than
    /// BOUND_WINDOWS never make `auto` nap, however often they come; busy for that long, it
    /// naps.
    #[test]
    fn bursts_of_a_capped_server_never_make_auto_nap() {
        let t = turn(1, MANY, seen(600 * US, 40 * US));
        for (burst, gap, want_nap) in [
            (1, 1, false),
            (2, 2, false),
            (10, 10, false),
            (BOUND_WINDOWS - 1, 1, false),
            (BOUND_WINDOWS, 1, true),
        ] {
            let mut p = Pacing::new(Coalesce::Auto, 0);
            let mut now = 0;
            let mut napped = false;
            for _ in 0..3 {
                for busy in [true; 32]
                    .iter()
                    .take(burst as usize)
                    .chain(&[false; 32][..gap])
                {
                    p.waited(now, now + if *busy { 0 } else { 6 * MS });
                    now += 10 * MS;
                    p.tick(now, None);
                    napped |= p.nap_ns(&t) > 0;
                }
            }
            assert_eq!(napped, want_nap, "{burst} busy windows, {gap} idle");
        }
    }

    /// Before its first window is judged, no worker knows it is the limit.
    #[test]
    fn auto_never_naps_before_the_first_judgement() {
        let p = Pacing::new(Coalesce::Auto, 0);
        assert_eq!(p.nap_ns(&turn(1, MANY, seen(600 * US, 40 * US))), 0);
    }

    /// Once at the limit, every PROBE_EVERY-th window takes no nap and judges afresh: a client
    /// whose naps hid that it had CPU to spare stops napping at the next probe.
    #[test]
    fn a_probe_window_judges_the_client_afresh() {
        let t = turn(1, MANY, seen(600 * US, 40 * US));
        let mut p = after_windows(Coalesce::Auto, BOUND, BOUND_WINDOWS.into());
        let mut now = u64::from(BOUND_WINDOWS) * 10 * MS;
        let mut napping = Vec::new();
        for _ in 0..PROBE_EVERY + 2 {
            napping.push(p.nap_ns(&t) > 0);
            // Busy between naps, idle in probes: the naps hide the spare CPU.
            let idle = if p.client_bound() { 0 } else { 6 * MS };
            p.waited(now, now + idle);
            now += 10 * MS;
            p.tick(now, None);
        }
        let probe = PROBE_EVERY as usize - 1;
        assert!(napping[..probe].iter().all(|&n| n), "{napping:?}");
        assert!(napping[probe..].iter().all(|&n| !n), "{napping:?}");
    }

    /// The open model sleeps through answers only under the same rule as a nap, and never
    /// under `off`.
    #[test]
    fn the_open_model_sleeps_through_answers_only_when_they_carry_their_time() {
        for (mode, stamped, untimed, want) in [
            (Coalesce::Auto, true, false, true),
            (Coalesce::On, true, false, true),
            (Coalesce::Auto, false, false, false),
            (Coalesce::Auto, true, true, false),
            (Coalesce::Off, true, false, false),
        ] {
            let p = Pacing::new(mode, 0);
            assert_eq!(
                p.sleeps_through(stamped, untimed),
                want,
                "{mode} {stamped} {untimed}"
            );
        }
    }

    /// The report says why the worker napped: the client was the limit (`auto`), or the user
    /// asked (`on`, a fixed nap); nothing when it never napped.
    #[test]
    fn the_report_names_the_cause_only_of_naps_taken() {
        for (mode, cause) in [
            (Coalesce::Auto, NapCause::ClientLimit),
            (Coalesce::On, NapCause::Asked),
            (Coalesce::Fixed(Duration::from_micros(5)), NapCause::Asked),
        ] {
            let mut p = Pacing::new(mode, 0);
            assert_eq!(p.report(), (0, None), "{mode}");
            p.napped(0, 5 * US);
            assert_eq!(p.report(), (1, Some(cause)), "{mode}");
        }
    }

    #[test]
    fn parse_and_display_round_trip() {
        for (s, want) in [
            ("auto", Coalesce::Auto),
            ("on", Coalesce::On),
            ("off", Coalesce::Off),
            ("0", Coalesce::Off),
            ("10us", Coalesce::Fixed(Duration::from_micros(10))),
            ("500ns", Coalesce::Fixed(Duration::from_nanos(500))),
        ] {
            let c = Coalesce::parse(s).unwrap();
            assert_eq!(c, want, "{s}");
            assert_eq!(Coalesce::parse(&c.to_string()).unwrap(), c);
        }
        for bad in ["soon", "10", "1s", "-3us"] {
            assert!(Coalesce::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn mean_latency_converges_and_never_overflows() {
        let mut m = MeanLatency::default();
        m.add(900_000);
        for _ in 0..2_000 {
            m.add(1_000_000);
        }
        // Within 1% of the steady input (integer division loses a little each step).
        assert!((990_000..=1_000_000).contains(&m.get()), "{}", m.get());
        assert_eq!(m.floor(), 900_000);
        // The largest samples neither overflow (a debug build would panic) nor stall short.
        let mut m = MeanLatency::default();
        for _ in 0..2_000 {
            m.add(u64::MAX);
        }
        assert!(m.get() >= u64::MAX / 100 * 99, "{}", m.get());
    }
}
