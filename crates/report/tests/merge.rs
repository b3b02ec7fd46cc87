//! `twelve merge`'s core: shards written as `--json` reports (with `raw`) and read back merge
//! into the run one process recording every sample would have summarised, bucket by bucket;
//! shards of different runs, a shard twice or one missing are refused; a client-bound,
//! short-connected or under-delivering shard makes the merged run invalid.
mod common;

use common::validate::validate;
use serde_json::Value;
use std::time::Duration;
use twelve_report::merge::{MergeError, ShardReport, merge};
use twelve_report::raw::RawRun;
use twelve_report::{
    JsonReport, RunInfo, RunResult, SCHEMA, ShardInfo, Slo, Summary, WorkerResult,
};

const SHARDS: u32 = 3;
const PER_SHARD: u64 = 2000;

/// Latency of sample `k` of the whole run, ns: spread over four decades, deterministic.
fn sample_ns(k: u64) -> u64 {
    1_000 + (k * 7919 % 10_007) * (1 + k % 997)
}

/// Shard `i`'s run: samples k ≡ i (mod SHARDS), one worker, 40% busy.
fn shard(i: u32, busy_ms: u64, peak_open: u64) -> RunResult {
    let mut w = WorkerResult {
        cpu: Some(i as usize),
        requests: PER_SHARD,
        bytes_read: PER_SHARD * 100,
        per_second: vec![PER_SHARD / 2, PER_SHARD / 2],
        // The last 20% of the window got its share: the shard kept its rate to the end.
        tail_requests: PER_SHARD / 5,
        cpu_time: Duration::from_millis(busy_ms),
        wall_time: Duration::from_secs(2),
        ..Default::default()
    };
    for m in 0..PER_SHARD {
        let k = m * u64::from(SHARDS) + u64::from(i);
        w.latency.record(k, k + sample_ns(k) / 3, k + sample_ns(k));
    }
    w.errors.status[200] = PER_SHARD;
    w.conns.established = peak_open;
    w.conns.peak_open = peak_open;
    RunResult {
        info: RunInfo {
            urls: vec!["http://10.0.0.1:8080/json".into()],
            method: "GET".into(),
            threads: 1,
            connections: 4,
            pipeline: 1,
            rate_per_s: Some(1000.0),
            arrival: Some("uniform".into()),
            duration: Some(Duration::from_secs(2)),
            timeout: Duration::from_secs(2),
            keep_alive: true,
            shard: Some(ShardInfo {
                index: i,
                count: SHARDS,
                connections: 12,
                rate_per_s: Some(3000.0),
                requests: None,
            }),
            ..Default::default()
        },
        elapsed: Duration::from_secs(2),
        workers: vec![w],
        server: None,
    }
}

/// The shard's `--json` document as `twelve bench` writes it, read back as merge input.
fn report(run: &RunResult) -> (Value, ShardReport) {
    let mut doc = JsonReport::of(&Summary::new(run, &[]), "0");
    doc.raw = Some(RawRun::of(run, 1_700_000_000_000_000_000));
    let text = doc.to_json();
    (
        serde_json::from_str(&text).unwrap(),
        serde_json::from_str(&text).unwrap(),
    )
}

fn healthy() -> Vec<ShardReport> {
    (0..SHARDS).map(|i| report(&shard(i, 800, 4)).1).collect()
}

#[test]
fn shard_reports_match_the_schema() {
    let schema: Value = serde_json::from_str(SCHEMA).unwrap();
    let (doc, _) = report(&shard(1, 800, 4));
    let mut errors = Vec::new();
    validate(&schema, &schema, &doc, "$", &mut errors);
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(doc["config"]["shard"]["count"], 3);
    assert!(
        doc["histograms"]["corrected"]
            .as_str()
            .unwrap()
            .starts_with("HISTF")
    );
}

#[test]
fn merged_histograms_equal_one_recorder_of_every_sample() {
    let (run, verdict) = merge(&healthy()).unwrap();
    let mut one = twelve_report::Recorder::new();
    for k in 0..PER_SHARD * u64::from(SHARDS) {
        one.record(k, k + sample_ns(k) / 3, k + sample_ns(k));
    }
    let s = Summary::new(&run, &[Slo::parse("p99<20ms").unwrap()]);
    assert_eq!(s.latency.corrected, one.corrected);
    assert_eq!(s.latency.uncorrected, one.uncorrected);
    assert_eq!(s.latency.wait, one.wait);
    for (a, b) in s.latency.corrected.iter_all().zip(one.corrected.iter_all()) {
        assert_eq!(a.count_at_value(), b.count_at_value());
    }
    assert_eq!(s.requests, PER_SHARD * 3);
    // Counts are summed and divided by the window: 6000 responses in 2 s.
    assert_eq!(s.rps, 3000.0);
    assert_eq!((s.info.connections, s.info.rate_per_s), (12, Some(3000.0)));
    assert_eq!(s.info.threads, 3);
    assert_eq!(s.errors.status[200], PER_SHARD * 3);
    assert_eq!(
        s.slo[0].actual,
        one.corrected.value_at_quantile(0.99) as f64 / 1e3
    );
    assert!(verdict.valid, "{verdict:?}");
    assert_eq!(verdict.shards, 3);
}

#[test]
fn the_merged_report_matches_the_schema() {
    let (run, verdict) = merge(&healthy()).unwrap();
    let mut doc = JsonReport::of(&Summary::new(&run, &[]), "0");
    doc.merge = Some(verdict);
    let doc: Value = serde_json::from_str(&doc.to_json()).unwrap();
    let schema: Value = serde_json::from_str(SCHEMA).unwrap();
    let mut errors = Vec::new();
    validate(&schema, &schema, &doc, "$", &mut errors);
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(doc["merge"]["valid"], true);
    assert!(doc.get("raw").is_none());
}

#[test]
fn order_of_the_files_does_not_matter() {
    let mut reversed = healthy();
    reversed.reverse();
    let (a, _) = merge(&healthy()).unwrap();
    let (b, _) = merge(&reversed).unwrap();
    assert_eq!(
        Summary::new(&a, &[]).percentiles,
        Summary::new(&b, &[]).percentiles
    );
}

macro_rules! refused {
    ($name:ident, |$r:ident| $spoil:expr, $expect:pat) => {
        #[test]
        fn $name() {
            let mut $r = healthy();
            $spoil;
            let err = merge(&$r).unwrap_err();
            assert!(matches!(err, $expect), "{err}");
        }
    };
}

refused!(
    a_missing_shard_is_refused,
    |r| r.pop(),
    MergeError::Shards(_)
);
refused!(
    a_shard_given_twice_is_refused,
    |r| r[2] = r[0].clone(),
    MergeError::Shards(_)
);
refused!(
    another_runs_shard_is_refused,
    |r| r[1].config.shard.as_mut().unwrap().rate_per_s = Some(1.0),
    MergeError::Mismatch(1, _)
);
refused!(
    shards_booked_at_different_receive_times_are_refused,
    |r| r[1].config.rx_time = Some("read".into()),
    MergeError::Mismatch(1, _)
);
refused!(
    a_report_without_raw_is_refused,
    |r| r[0].raw = None,
    MergeError::NotAShard(0)
);
refused!(nothing_is_refused, |r| r.clear(), MergeError::Empty);

macro_rules! invalid {
    ($name:ident, $busy_ms:expr, $peak:expr, $requests:expr, $reason:expr) => {
        #[test]
        fn $name() {
            let mut r = healthy();
            let mut bad = shard(1, $busy_ms, $peak);
            bad.workers[0].requests = $requests;
            r[1] = report(&bad).1;
            let (_, verdict) = merge(&r).unwrap();
            assert!(!verdict.valid);
            assert_eq!(verdict.reasons.len(), 1, "{:?}", verdict.reasons);
            assert!(
                verdict.reasons[0].contains($reason),
                "{:?}",
                verdict.reasons
            );
        }
    };
}

invalid!(
    a_client_bound_shard_invalidates,
    1_900,
    4,
    PER_SHARD,
    "shard 1 was client-bound"
);
invalid!(
    a_short_connected_shard_invalidates,
    800,
    3,
    PER_SHARD,
    "3 of its 4 connections"
);
/// A shard that sent 5% of its requests 50 ms after their slots (a starved client, or too few
/// connections) did not run its stripe of the schedule.
#[test]
fn a_shard_that_sent_late_invalidates() {
    let mut r = healthy();
    let mut late = shard(1, 800, 4);
    for k in 0..PER_SHARD / 20 {
        late.workers[0]
            .latency
            .record(k, k + 50_000_000, k + 50_100_000);
    }
    late.workers[0].requests += PER_SHARD / 20;
    r[1] = report(&late).1;
    let (_, verdict) = merge(&r).unwrap();
    assert_eq!(
        verdict.reasons,
        ["shard 1 under-delivered: 4.8% of its requests sent over 10 ms after their slots"]
    );
}

/// Late by less than 10 ms, or late for under 1% of the requests: still the schedule.
#[test]
fn a_few_late_requests_are_tolerated() {
    let mut r = healthy();
    let mut shard1 = shard(1, 800, 4);
    for k in 0..PER_SHARD / 200 {
        shard1.workers[0]
            .latency
            .record(k, k + 50_000_000, k + 50_100_000);
    }
    r[1] = report(&shard1).1;
    let (_, verdict) = merge(&r).unwrap();
    assert!(verdict.valid, "{:?}", verdict.reasons);
}

/// A closed-model shard of a counted run: judged by its count, not a rate.
fn closed(i: u32, planned: u64) -> ShardReport {
    let mut run = shard(i, 800, 4);
    run.info.rate_per_s = None;
    run.info.arrival = None;
    run.info.requests = Some(planned);
    if let Some(s) = &mut run.info.shard {
        s.rate_per_s = None;
    }
    report(&run).1
}

#[test]
fn a_closed_shard_short_of_its_count_invalidates() {
    let mut r: Vec<ShardReport> = (0..SHARDS).map(|i| closed(i, PER_SHARD)).collect();
    let (_, verdict) = merge(&r).unwrap();
    assert!(verdict.valid, "{:?}", verdict.reasons);
    r[2] = closed(2, 2 * PER_SHARD);
    let (_, verdict) = merge(&r).unwrap();
    assert_eq!(
        verdict.reasons,
        ["shard 2 under-delivered: 2000 requests answered or failed of 4000 planned"]
    );
}
