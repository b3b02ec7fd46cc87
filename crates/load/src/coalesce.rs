//! Response coalescing: after a poll that found only a few ready connections, a worker naps on
//! its own timer instead of blocking in `epoll_wait` until the server's next send wakes it.
//!
//! Why: on one host a client that blocks makes the *server* pay for waking it. The server's
//! `send` delivers into the client's socket in the server's own context, and a sleeping client
//! turns that into a cross-CPU wake-up charged to the server, so a client cheap enough to keep
//! pace would slow the server it measures.
//!
//! The rules of `auto`:
//! - Only after a poll of fewer than `SMALL_BATCH` events, and only with at least that many
//!   connections open on the worker: fewer could not gather a batch.
//! - With kernel receive stamps (`--rx-time kernel`), where a nap adds nothing to the latency:
//!   a quarter of the server's queue time (the mean latency above the fastest response seen),
//!   at most a tenth of the mean latency and 1 ms. Booking at the read, where it does: at most
//!   1% of the mean latency and 20 µs.
//! - Never under 2 µs, and the open model never naps past its next due request.
//! - A connect has no stamp: connections closed during a turn are reopened after the nap
//!   (`Dispatch::reconnect`), and no nap starts while a connect is under way. Under TLS the
//!   time the server's handshake flight waited in the client is taken out of the held
//!   request's latency and of the phases (`phases::Marks`).
//!
//! docs/load-generator.md, "Naps after small batches", tells why each rule is there and what
//! the naps were measured to save and cost.

use std::time::Duration;

/// Polls with fewer ready events (connections, not responses: a pipelined connection brings
/// several) than this are "small batches" and may be followed by a nap; a client-bound run
/// polls far more events than this and never naps.
pub(crate) const SMALL_BATCH: usize = 16;
/// `auto` naps at most 1/AUTO_SHARE of the mean latency when naps add to the latency
/// (`--rx-time read`).
const AUTO_SHARE: u64 = 100;
/// `auto` never naps longer than this when naps add to the latency.
const AUTO_MAX_NS: u64 = 20_000;
/// With kernel receive stamps: at most 1/QUEUE_SHARE of the mean queue time (latency above
/// the floor), so the server still has three quarters of its queue to work through when the
/// nap ends...
const QUEUE_SHARE: u64 = 4;
/// ... at most 1/STAMPED_SHARE of the mean latency, which bounds what a nap can cost a run
/// whose latency spread is not a queue ...
const STAMPED_SHARE: u64 = 10;
/// ... and never longer than this: long enough for a nap to gather many answers from a server
/// with a long queue (a full TLS handshake per request, a capped server at `-c256`).
const STAMPED_MAX_NS: u64 = 1_000_000;
/// `auto` does not bother with naps shorter than this (a wake-up costs about as much).
const AUTO_MIN_NS: u64 = 2_000;

/// The longest nap `--coalesce DURATION` accepts: longer would hold responses for longer than
/// many of the latencies being measured.
const MAX_FIXED: Duration = Duration::from_millis(10);

/// How a worker waits after a small batch of responses (`--coalesce`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Coalesce {
    /// Nap on the server's queue (see the module documentation).
    #[default]
    Auto,
    /// Always block in `epoll_wait`, as wrk does.
    Off,
    /// Nap this long after every small batch.
    Fixed(Duration),
}

impl Coalesce {
    /// Parses `auto`, `off`, or a duration such as `10us` (see [`crate::parse_duration`]).
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Coalesce::Auto),
            "off" | "0" => Ok(Coalesce::Off),
            d => {
                let bad = || format!("--coalesce {d:?}: expected auto, off, or a nap such as 10us");
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

    /// The nap, in ns, after a poll that returned `polled` events with `open` connections open
    /// on the worker, given the latency so far and whether responses are booked at their kernel
    /// receive stamps; 0 for none.
    pub(crate) fn nap_ns(
        self,
        polled: usize,
        open: u64,
        latency: MeanLatency,
        stamped: bool,
    ) -> u64 {
        if polled == 0 || polled >= SMALL_BATCH {
            return 0;
        }
        match self {
            Coalesce::Off => 0,
            Coalesce::Fixed(d) => u64::try_from(d.as_nanos()).unwrap_or(u64::MAX),
            Coalesce::Auto if open < SMALL_BATCH as u64 => 0,
            Coalesce::Auto => {
                let mean = latency.get();
                let nap = if stamped {
                    let queue = mean.saturating_sub(latency.floor());
                    (queue / QUEUE_SHARE)
                        .min(mean / STAMPED_SHARE)
                        .min(STAMPED_MAX_NS)
                } else {
                    (mean / AUTO_SHARE).min(AUTO_MAX_NS)
                };
                if nap < AUTO_MIN_NS { 0 } else { nap }
            }
        }
    }
}

impl std::fmt::Display for Coalesce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Coalesce::Auto => f.write_str("auto"),
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

    /// A latency record whose mean is `mean` and whose fastest response took `floor`.
    fn seen(mean: u64, floor: u64) -> MeanLatency {
        MeanLatency { mean, floor }
    }

    macro_rules! nap {
        ($($name:ident: $mode:expr, $polled:expr, $open:expr, $seen:expr, $stamped:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!($mode.nap_ns($polled, $open, $seen, $stamped), $want);
            }
        )*};
    }

    const READ: bool = false;
    const KERNEL: bool = true;
    /// Open connections: enough for a batch, and one.
    const MANY: u64 = 64;

    nap! {
        auto_capped_server: Coalesce::Auto, 1, MANY, seen(1_500 * US, 50 * US), READ => 15 * US;
        auto_capped_at_20us: Coalesce::Auto, 3, MANY, seen(50_000 * US, 50 * US), READ => 20 * US;
        auto_low_latency_never_naps: Coalesce::Auto, 1, MANY, seen(30 * US, 25 * US), READ => 0;
        auto_just_under_minimum: Coalesce::Auto, 1, MANY, seen(199 * US, 25 * US), READ => 0;
        auto_at_minimum: Coalesce::Auto, 1, MANY, seen(200 * US, 25 * US), READ => 2 * US;
        auto_big_batch_never_naps: Coalesce::Auto, SMALL_BATCH, MANY, seen(1_500 * US, 50 * US), READ => 0;
        auto_empty_poll_never_naps: Coalesce::Auto, 0, MANY, seen(1_500 * US, 50 * US), READ => 0;
        auto_no_latency_yet: Coalesce::Auto, 1, MANY, MeanLatency::default(), READ => 0;
        // With kernel stamps: a quarter of the queue time, a tenth of the mean, 1 ms at most.
        stamped_capped_server_naps_a_tenth: Coalesce::Auto, 1, MANY, seen(600 * US, 40 * US), KERNEL => 60 * US;
        stamped_deep_queue_naps_a_quarter_of_it: Coalesce::Auto, 1, MANY, seen(3_000 * US, 2_000 * US), KERNEL => 250 * US;
        stamped_long_latency_naps_1ms: Coalesce::Auto, 1, MANY, seen(20_000 * US, 1_000 * US), KERNEL => 1_000 * US;
        stamped_no_queue_never_naps: Coalesce::Auto, 1, MANY, seen(30 * US, 28 * US), KERNEL => 0;
        stamped_slow_server_naps_on_its_queue_only: Coalesce::Auto, 2, MANY, seen(10_000 * US, 9_900 * US), KERNEL => 25 * US;
        stamped_spread_without_queue_bounded_by_a_tenth: Coalesce::Auto, 1, MANY, seen(100 * US, 10 * US), KERNEL => 10 * US;
        stamped_big_batch_never_naps: Coalesce::Auto, SMALL_BATCH, MANY, seen(600 * US, 40 * US), KERNEL => 0;
        stamped_no_latency_yet: Coalesce::Auto, 1, MANY, MeanLatency::default(), KERNEL => 0;
        // Fewer connections than a batch: no batch can gather, whatever the latency says.
        few_connections_never_nap: Coalesce::Auto, 1, SMALL_BATCH as u64 - 1, seen(600 * US, 40 * US), KERNEL => 0;
        one_connection_never_naps_on_read_time: Coalesce::Auto, 1, 1, seen(50_000 * US, 50 * US), READ => 0;
        enough_connections_for_a_batch: Coalesce::Auto, 1, SMALL_BATCH as u64, seen(600 * US, 40 * US), KERNEL => 60 * US;
        off_never_naps: Coalesce::Off, 1, MANY, seen(1_500 * US, 50 * US), KERNEL => 0;
        fixed_small_batch: Coalesce::Fixed(Duration::from_micros(7)), 2, 1, MeanLatency::default(), READ => 7 * US;
        fixed_big_batch: Coalesce::Fixed(Duration::from_micros(7)), SMALL_BATCH, MANY, MeanLatency::default(), KERNEL => 0;
    }

    #[test]
    fn parse_and_display_round_trip() {
        for (s, want) in [
            ("auto", Coalesce::Auto),
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
