//! The whole path of a sharded run on a deterministic server: N shards of one simulated
//! open-model schedule (with a server stall, so latencies spread over four decades) each
//! written as the `--json` report `twelve bench --shard` writes, read back and merged by
//! `twelve merge`'s core, give the percentiles, counts and histograms of one process running
//! the whole schedule, exactly.
use std::time::Duration;
use twelve_load::Shard;
use twelve_load::sim::{SimSetup, simulate_open, simulate_open_shard};
use twelve_report::merge::{ShardReport, merge};
use twelve_report::raw::RawRun;
use twelve_report::{JsonReport, Percentiles, Recorder, RunInfo, RunResult, ShardInfo, Summary};
use twelve_report::{Slo, WorkerResult};

const MS: u64 = 1_000_000;

const WHOLE: SimSetup = SimSetup {
    rate_per_s: 10_000.0,
    connections: 1_200,
    requests: 30_001,
    service_ns: 200_000,
    stall: Some((1_000 * MS, 50 * MS)),
};

/// A run of one worker that recorded `latency`, as shard `shard` of the whole run.
fn run_of(latency: Recorder, shard: Option<Shard>) -> RunResult {
    let requests = latency.len();
    let info_shard = shard.map(|s| ShardInfo {
        index: s.index,
        count: s.count,
        connections: WHOLE.connections,
        rate_per_s: Some(WHOLE.rate_per_s),
        requests: Some(WHOLE.requests),
    });
    let own = |total: u64| shard.map_or(total, |s| s.share(total));
    let mut w = WorkerResult {
        requests,
        wall_time: Duration::from_secs(3),
        cpu_time: Duration::from_millis(100),
        latency,
        ..Default::default()
    };
    w.errors.status[200] = requests;
    w.conns.established = own(WHOLE.connections as u64);
    w.conns.peak_open = w.conns.established;
    RunResult {
        info: RunInfo {
            urls: vec!["http://sim/".into()],
            method: "GET".into(),
            threads: 1,
            connections: own(WHOLE.connections as u64) as usize,
            pipeline: 1,
            rate_per_s: Some(WHOLE.rate_per_s / f64::from(shard.map_or(1, |s| s.count))),
            arrival: Some("uniform".into()),
            requests: Some(shard.map_or(WHOLE.requests, |s| s.slots_below(WHOLE.requests))),
            timeout: Duration::from_secs(3600),
            keep_alive: true,
            shard: info_shard,
            ..Default::default()
        },
        elapsed: Duration::from_secs(3),
        workers: vec![w],
        server: None,
    }
}

/// The shard's run through its JSON report and back, as `twelve merge` reads it.
fn through_json(run: &RunResult) -> ShardReport {
    let mut doc = JsonReport::of(&Summary::new(run, &[]), "test");
    doc.raw = Some(RawRun::of(run, 0));
    serde_json::from_str(&doc.to_json()).unwrap()
}

#[test]
fn merged_shards_report_the_single_runs_percentiles() {
    let single = simulate_open(WHOLE);
    let slos = [Slo::parse("p99<30ms").unwrap()];
    let one = Summary::new(&run_of(single.clone(), None), &slos);
    assert!(one.percentiles.corrected.p99_us > one.percentiles.corrected.p50_us * 10.0);
    for n in [2u32, 4] {
        let reports: Vec<ShardReport> = (0..n)
            .map(|i| {
                let shard = Shard::new(i, n).unwrap();
                through_json(&run_of(
                    simulate_open_shard(WHOLE, Some(shard)),
                    Some(shard),
                ))
            })
            .collect();
        let (merged, verdict) = merge(&reports).unwrap();
        let s = Summary::new(&merged, &slos);
        assert!(verdict.valid, "{verdict:?}");
        assert_eq!(s.requests, WHOLE.requests);
        assert_eq!(s.info.connections, WHOLE.connections);
        assert_eq!(s.latency.corrected, single.corrected, "{n} shards");
        assert_eq!(s.latency.uncorrected, single.uncorrected, "{n} shards");
        assert_eq!(s.latency.wait, single.wait, "{n} shards");
        assert_eq!(s.percentiles, one.percentiles, "{n} shards");
        assert_eq!(
            s.percentiles.corrected,
            Percentiles::of(&single.corrected),
            "{n} shards"
        );
        assert_eq!(
            (s.slo[0].actual, s.slo[0].pass),
            (one.slo[0].actual, one.slo[0].pass)
        );
    }
}
