//! The recording on a simulated clock: a 1 s server stall at 1,000 req/s must show in the
//! corrected p99 (the requests that queued behind it) and not in the uncorrected p99; and
//! answers that arrive during a nap are booked when they arrived (`--rx-time kernel`).
use twelve_load::sim::{SimSetup, simulate_open};

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

fn setup(stall: Option<(u64, u64)>) -> SimSetup {
    SimSetup {
        rate_per_s: 1_000.0,
        connections: 10,
        requests: 10_000,
        service_ns: MS,
        stall,
    }
}

#[test]
fn stall_shows_in_corrected_not_uncorrected_p99() {
    let r = simulate_open(setup(Some((5_000 * MS, 1_000 * MS))));
    assert_eq!(r.len(), 10_000);
    let corrected = r.corrected.value_at_quantile(0.99);
    let uncorrected = r.uncorrected.value_at_quantile(0.99);
    // ~1,000 of 10,000 requests came due during the stall and waited for it: the top 1%
    // waited close to the whole second.
    assert!(corrected > 800 * MS, "corrected p99 {corrected} ns");
    assert!(corrected <= 1_002 * MS, "corrected p99 {corrected} ns");
    // Only the 10 requests in flight when the stall began saw it from their send time.
    assert!(uncorrected < 2 * MS, "uncorrected p99 {uncorrected} ns");
    assert!(r.uncorrected.max() >= 999 * MS);
    // The waits are the difference, and they are where the stall went.
    assert!(r.wait.value_at_quantile(0.99) > 790 * MS);
}

#[test]
fn without_a_stall_both_agree() {
    let r = simulate_open(setup(None));
    let c = r.corrected.value_at_quantile(0.99);
    let u = r.uncorrected.value_at_quantile(0.99);
    assert_eq!(c, u);
    assert_eq!(r.wait.max(), 0);
}

#[test]
fn schedule_keeps_time_over_a_million_requests() {
    // One million requests at 100,000/s over 10 simulated seconds, 50 connections each 0.4 ms:
    // the schedule keeps up, so nothing ever waits and the last request is due at 9.99999 s.
    let r = simulate_open(SimSetup {
        rate_per_s: 100_000.0,
        connections: 50,
        requests: 1_000_000,
        service_ns: 400_000,
        stall: None,
    });
    assert_eq!(r.len(), 1_000_000);
    assert_eq!(r.wait.max(), 0);
    assert_eq!(r.corrected.max(), r.corrected.highest_equivalent(400_000));
}

#[test]
fn too_few_connections_queue_due_requests_behind_each_other() {
    // One connection, 1,000 req/s, 2 ms per answer: the real dispatch hands each freed
    // connection every overdue slot in turn, so the k-th request waits about k ms; a
    // generator that measured from the send would report a flat 2 ms.
    let r = simulate_open(SimSetup {
        rate_per_s: 1_000.0,
        connections: 1,
        requests: 1_000,
        service_ns: 2 * MS,
        stall: None,
    });
    assert_eq!(r.len(), 1_000);
    assert_eq!(
        r.uncorrected.max(),
        r.uncorrected.highest_equivalent(2 * MS)
    );
    assert_eq!(r.uncorrected.min(), r.uncorrected.lowest_equivalent(2 * MS));
    // The last request was due at 999 ms and sent at 1,998 ms.
    let last_wait = r.wait.max();
    assert!((998 * MS..=1_000 * MS).contains(&last_wait), "{last_wait}");
    assert!(r.corrected.max() >= 1_000 * MS);
}

/// `--shard I/N`: N shards, each running its stripe of the schedule with its share of the
/// connections against the same deterministic server, record exactly what one client running
/// the whole schedule records, bucket by bucket, stall included.
#[test]
fn shards_together_record_what_one_client_records() {
    use twelve_load::Shard;
    use twelve_load::sim::simulate_open_shard;
    let whole = SimSetup {
        rate_per_s: 20_000.0,
        connections: 2_400,
        requests: 60_003,
        service_ns: 300_000,
        stall: Some((1_000 * MS, 20 * MS)),
    };
    let single = simulate_open(whole);
    assert_eq!(single.len(), 60_003);
    assert!(single.corrected.max() > 19 * MS, "the stall shows");
    for n in [2u32, 3, 4] {
        let mut merged = twelve_report::Recorder::new();
        for i in 0..n {
            merged.add(&simulate_open_shard(whole, Some(Shard::new(i, n).unwrap())));
        }
        assert_eq!(merged.len(), single.len(), "{n} shards");
        assert_eq!(merged.corrected, single.corrected, "{n} shards");
        assert_eq!(merged.uncorrected, single.uncorrected, "{n} shards");
        assert_eq!(merged.wait, single.wait, "{n} shards");
        for q in [0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(
                merged.corrected.value_at_quantile(q),
                single.corrected.value_at_quantile(q)
            );
        }
    }
}

/// `--rx-time`: four connections against a server that answers one request at a time in
/// 10 µs, the worker napping 1 ms after every small batch, so most answers arrive during a
/// nap. Booked at their kernel receive stamps, no answer waited more than the four services
/// ahead of it, and the nap shows as read delay instead; booked at the read, the nap is in
/// the latency.
#[test]
fn answers_that_arrive_during_a_nap_are_booked_when_they_arrived() {
    use std::time::Duration;
    use twelve_load::sim::{NapSim, simulate_closed_naps};
    use twelve_load::{Coalesce, RxTime};
    let sim = NapSim {
        connections: 4,
        requests: 400,
        service_ns: 10 * US,
        coalesce: Coalesce::Fixed(Duration::from_millis(1)),
        read_cost_ns: 0,
        rx_time: RxTime::Kernel,
        keep_alive: true,
        connect_ns: 0,
        connect_call_ns: 0,
    };
    let kernel = simulate_closed_naps(sim);
    let read = simulate_closed_naps(NapSim {
        rx_time: RxTime::Read,
        ..sim
    });
    for r in [&kernel, &read] {
        assert_eq!(r.requests, 400);
        assert!(r.naps > 90, "{} naps", r.naps);
    }
    // At most the three answers queued ahead of it, and its own: 40 µs (HDR's 3 digits).
    let worst = kernel.latency.uncorrected.max();
    assert!(worst <= 40_100, "kernel stamps: max latency {worst} ns");
    assert!(kernel.latency.uncorrected.min() >= 10 * US);
    // The same run booked at the read: most answers waited out a nap.
    let p50 = read.latency.uncorrected.value_at_quantile(0.5);
    assert!(p50 >= 900 * US, "read time: p50 {p50} ns");
    // What the stamps took out of the latency is the read delay, and only there.
    assert_eq!(read.read_delay, Duration::ZERO);
    let per_answer = kernel.read_delay.as_nanos() as u64 / kernel.requests;
    assert!(
        per_answer >= 900 * US,
        "kernel stamps: read delay {per_answer} ns an answer"
    );
    assert!(
        per_answer <= 1_040 * US,
        "at most a nap and the queue: {per_answer} ns"
    );
    // Both runs took the same steps; only the booking differs. So the read-time latency is the
    // stamped latency plus the read delay, answer for answer (to HDR's 3 digits, in the mean).
    let read_mean = read.latency.uncorrected.mean();
    let split = kernel.latency.uncorrected.mean() + per_answer as f64;
    assert!(
        (read_mean - split).abs() <= read_mean * 0.005,
        "read-time mean {read_mean} ns against stamped mean plus read delay {split} ns"
    );
}

/// `--close` with naps: a connection closed during a turn is reopened after the nap, just
/// before the poll, so the nap is never in its connect phase (no receive stamp could take it
/// out there), while its answer is still booked at its stamp. To a server a round trip away
/// (a connect that is not done by the next poll), the worker does not nap while a connect is
/// under way.
#[test]
fn a_nap_is_never_in_the_connect_phase() {
    use std::time::Duration;
    use twelve_load::sim::{NapSim, simulate_closed_naps};
    use twelve_load::{Coalesce, RxTime};
    // On loopback (a connect done within its call, which costs the client 20 µs, and seen by
    // the next poll, after the other connects of the turn), and a round trip of 100 µs away,
    // where a connect made as an answer of a 300 µs service arrives is under way at the next
    // nap (the simulated target is 127.0.0.1, so call times are taken out there too).
    for (service_ns, connect_ns) in [(10 * US, 0), (300 * US, 100 * US)] {
        let r = simulate_closed_naps(NapSim {
            connections: 4,
            requests: 400,
            service_ns,
            coalesce: Coalesce::Fixed(Duration::from_millis(1)),
            read_cost_ns: 0,
            rx_time: RxTime::Kernel,
            keep_alive: false,
            connect_ns,
            connect_call_ns: 20 * US,
        });
        assert_eq!(r.requests, 400);
        assert!(r.naps > 90, "{} naps", r.naps);
        // Every request had a connection of its own, and every connect was booked.
        assert_eq!(r.phases.connect.len(), 400);
        // A connect takes its call and `connect_ns`: anything more is a nap in it, or the
        // other connects of its turn.
        let worst = r.phases.connect.max();
        assert!(
            worst < 20 * US + connect_ns + 10 * US,
            "connect {connect_ns} ns: connect phase up to {worst} ns, a nap was in it"
        );
        // The answers are booked as with keep-alive: at most the four services of the queue
        // (HDR's 3 digits).
        let latency = r.latency.uncorrected.max();
        assert!(
            latency <= 4 * service_ns + service_ns / 200,
            "max latency {latency} ns"
        );
    }
}

/// The pacing rule (`--coalesce auto`, the default): a client with CPU to spare behaves as an
/// independent client and never naps; one that is the limit (each read costs it nearly the
/// server's time per request) naps, and its result says why. With naps asked for
/// (`--coalesce on`), the client with CPU to spare naps too, and says it was asked.
#[test]
fn auto_naps_only_when_the_client_is_the_limit_and_says_so() {
    use twelve_load::sim::{NapSim, simulate_closed_naps};
    use twelve_load::{Coalesce, RxTime};
    use twelve_report::NapCause;
    let sim = |coalesce, read_cost_ns| {
        simulate_closed_naps(NapSim {
            connections: 64,
            // 1 s of the server's time: a hundred housekeeping windows.
            requests: 20_000,
            service_ns: 50 * US,
            coalesce,
            read_cost_ns,
            rx_time: RxTime::Kernel,
            keep_alive: true,
            connect_ns: 0,
            connect_call_ns: 0,
        })
    };
    let spare = sim(Coalesce::Auto, 0);
    assert_eq!((spare.naps, spare.nap_cause), (0, None));
    let bound = sim(Coalesce::Auto, 48 * US);
    assert!(bound.naps > 100, "{} naps", bound.naps);
    assert_eq!(bound.nap_cause, Some(NapCause::ClientLimit));
    let asked = sim(Coalesce::On, 0);
    assert!(asked.naps > 100, "{} naps", asked.naps);
    assert_eq!(asked.nap_cause, Some(NapCause::Asked));
    for r in [&spare, &bound, &asked] {
        assert_eq!(r.requests, 20_000);
    }
}

/// `--slack`: at 40k req/s (a request every 25 µs) into a server that answers in 30 µs, a
/// slack of 100 µs lets one wake-up serve the five requests due within it and read the answers
/// that came meanwhile (booked at their stamps), so the worker wakes far less often than once
/// a request; no request leaves later than the slack, and none early.
#[test]
fn one_wake_up_serves_every_request_due_within_the_slack() {
    use std::time::Duration;
    use twelve_load::sim::simulate_open_slack;
    let setup = at_40k();
    let (exact, exact_wakeups) = simulate_open_slack(setup, Duration::ZERO);
    let (slack, slack_wakeups) = simulate_open_slack(setup, Duration::from_micros(100));
    for r in [&exact, &slack] {
        assert_eq!(r.corrected.len(), 40_000);
    }
    assert_eq!(
        exact.wait.max(),
        0,
        "without slack every request leaves when due"
    );
    // Sent at most the slack late (HDR's 3 digits), never early.
    assert!(
        slack.wait.max() <= 100_100,
        "lag up to {} ns",
        slack.wait.max()
    );
    // A wake-up a request or more without slack; with it, one per five.
    assert!(
        exact_wakeups >= 40_000,
        "{exact_wakeups} wake-ups without slack"
    );
    assert!(
        slack_wakeups <= 40_000 / 5 + 10,
        "{slack_wakeups} wake-ups with 100 µs of slack"
    );
    // The answers read late are still booked when they arrived: the service time.
    assert!(
        slack.uncorrected.max() <= 30_100,
        "{}",
        slack.uncorrected.max()
    );
}

#[test]
fn the_open_model_asks_every_connection_in_turn() {
    // One request in flight at a time on 64 connections: each is asked as often as the others
    // (the one ready longest goes first), none sits idle until a server's idle timeout.
    for (connections, rate_per_s, service_ns) in [(64, 1_000.0, MS / 10), (10, 2_000.0, 3 * MS)] {
        let requests = 100 * connections as u64;
        let sent = twelve_load::sim::simulate_open_spread(SimSetup {
            rate_per_s,
            connections,
            requests,
            service_ns,
            stall: None,
        });
        assert_eq!(sent.iter().sum::<u64>(), requests, "{sent:?}");
        let (least, most) = (sent.iter().min(), sent.iter().max());
        assert!(
            most.zip(least).is_some_and(|(m, l)| m - l <= 1),
            "{connections} connections at {rate_per_s}/s: {sent:?}"
        );
    }
}

/// The wake-up comes at the last request due within the slack of the next, not the slack
/// after it: at 10k req/s (a request every 100 µs) no second request is due within 50 µs, so
/// every request leaves when due; at 40k, three are, and the last of each wake-up leaves on
/// time.
#[test]
fn a_lone_request_within_the_slack_leaves_on_time() {
    use std::time::Duration;
    use twelve_load::sim::simulate_open_slack;
    for (rate, most, wakeups) in [(10_000.0, 0, 40_000), (40_000.0, 50 * US, 40_000 / 3 + 1)] {
        let setup = SimSetup {
            rate_per_s: rate,
            connections: 64,
            requests: 40_000,
            service_ns: 30 * US,
            stall: None,
        };
        let (r, woke) = simulate_open_slack(setup, Duration::from_micros(50));
        assert_eq!(r.corrected.len(), 40_000, "{rate}");
        assert_eq!(
            r.wait.min(),
            0,
            "{rate}: the last of a wake-up's requests leaves on time"
        );
        assert!(
            r.wait.max() <= r.wait.highest_equivalent(most),
            "{rate}: lag up to {} ns",
            r.wait.max()
        );
        // HDR's 3 digits hold 50 µs exactly: no request above the slack.
        assert!(woke <= wakeups * 101 / 100, "{rate}: {woke} wake-ups");
    }
}

/// A wake-up that comes late (a busy host's timer) finds every request due meanwhile, and
/// sends them all at once: none waits for a later wake-up, so no request's lag exceeds the
/// lateness plus the slack, and the late ones are the requests due while the worker overslept.
#[test]
fn a_late_wake_up_sends_every_request_due_meanwhile() {
    use std::time::Duration;
    use twelve_load::sim::{LateWakes, simulate_open_late};
    let setup = at_40k();
    let late = LateWakes {
        every: 97,
        late_ns: MS,
    };
    for slack in [0, 50 * US] {
        let (r, _) = simulate_open_late(setup, Duration::from_nanos(slack), late);
        assert_eq!(r.corrected.len(), 40_000, "slack {slack}");
        let max = r.wait.max();
        assert!(
            max >= r.wait.lowest_equivalent(MS) && max <= r.wait.highest_equivalent(MS + slack),
            "slack {slack}: lag up to {max} ns"
        );
        // Only requests due during a late sleep are late beyond the slack: 40 per late wake-up
        // (1 ms at 40k req/s) of the 40,000, spread from 1 ms down.
        let beyond = r.wait.count_between(slack + US, u64::MAX);
        let late_wakes = r.corrected.len() / 97;
        assert!(
            beyond <= (late_wakes + 2) * 40 * 2,
            "slack {slack}: {beyond} late"
        );
        assert!(beyond >= 40, "slack {slack}: {beyond} late");
    }
}

/// 40k req/s (a request every 25 µs) on 64 connections into a server that answers in 30 µs.
fn at_40k() -> SimSetup {
    SimSetup {
        rate_per_s: 40_000.0,
        connections: 64,
        requests: 40_000,
        service_ns: 30 * US,
        stall: None,
    }
}
