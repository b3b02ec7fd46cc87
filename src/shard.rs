//! `twelve bench`'s flags for a run split across load generators: which shard this process
//! is (`--shard I/N`, or `--shards N` with Kubernetes' `JOB_COMPLETION_INDEX`), and when all
//! shards start together: at a wall-clock instant (`--start-at`, for clocks you trust) or when
//! shard 0's barrier says go (`--barrier`). `--k8s-manifest` prints the Indexed Job that runs
//! the same command line on N pods instead of running it (`twelve_load::shard::k8s`).
use anyhow::{Context, bail};
use twelve_load::shard::{Start, k8s, parse_rfc3339};
use twelve_load::{Config, JOB_COMPLETION_INDEX, Shard, parse_duration};

/// The sharding flags.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Distributed")]
pub struct ShardArgs {
    /// Run shard I of N (0-based) of the load: connections and -n split as
    /// ⌊(i+1)R/N⌋ − ⌊iR/N⌋, the open-model schedule striped (global slots I, I+N, …), so the
    /// union of all shards is the run one client would make. Merge with `twelve merge`.
    #[arg(long, value_name = "I/N", conflicts_with = "shards")]
    pub shard: Option<String>,
    /// Run one of N shards, the index taken from $JOB_COMPLETION_INDEX (Kubernetes Indexed
    /// Jobs set it).
    #[arg(long, value_name = "N")]
    pub shards: Option<u32>,
    /// Start at this wall-clock instant (RFC 3339, e.g. 2026-11-23T21:30:00Z): every shard
    /// begins its warm-up then. Only as good as the shards' clock sync.
    #[arg(long, value_name = "TIME", conflicts_with = "barrier")]
    pub start_at: Option<String>,
    /// Start together through a barrier at HOST:PORT: shard 0 listens on PORT, every other
    /// shard connects and reports ready, and shard 0 gives all one go time. A shard that does
    /// not report within --barrier-timeout aborts the run.
    #[arg(long, value_name = "HOST:PORT")]
    pub barrier: Option<String>,
    /// How long the barrier waits for every shard.
    #[arg(long, value_name = "DUR", default_value = "60s")]
    pub barrier_timeout: String,
    /// Print a Kubernetes Indexed Job (and the headless Service its barrier needs) that runs
    /// this command line as --shards N pods, instead of running it.
    #[arg(long, requires = "shards")]
    pub k8s_manifest: bool,
    /// Container image of the manifest's pods (contrib/k8s/Dockerfile builds one).
    #[arg(long, value_name = "IMAGE", default_value = "twelve:latest")]
    pub k8s_image: String,
    /// Name of the manifest's Job and Service.
    #[arg(long, value_name = "NAME", default_value = "twelve-bench")]
    pub k8s_name: String,
}

impl ShardArgs {
    /// This process's shard, if the run is split.
    pub fn shard(&self) -> anyhow::Result<Option<Shard>> {
        if let Some(text) = &self.shard {
            return Ok(Some(Shard::parse(text)?));
        }
        let Some(count) = self.shards else {
            if self.barrier.is_some() {
                bail!("--barrier needs --shard I/N or --shards N");
            }
            return Ok(None);
        };
        let index = std::env::var(JOB_COMPLETION_INDEX).ok();
        Ok(Some(Shard::from_completion_index(index.as_deref(), count)?))
    }

    /// How this shard starts, if the run has a start to meet.
    fn start(&self, config: &Config) -> anyhow::Result<Option<Start>> {
        Ok(match (&self.start_at, &self.barrier, config.shard) {
            (Some(t), _, _) => Some(Start::At(parse_rfc3339(t).context("--start-at")?)),
            (None, Some(addr), Some(_)) => Some(Start::Barrier {
                addr: addr.clone(),
                timeout: parse_duration(&self.barrier_timeout).context("--barrier-timeout")?,
            }),
            _ => None,
        })
    }

    /// Waits until this shard may start (`twelve_load::shard::start`).
    pub fn wait_for_start(&self, config: &Config) -> anyhow::Result<()> {
        if let Some(start) = self.start(config)? {
            start.wait(config)?;
        }
        Ok(())
    }
}

/// `--timeseries FILE`: the run's intervals as NDJSON lines tagged with the shard.
pub fn write_timeseries(
    path: &std::path::Path,
    outcome: &twelve_load::Outcome,
    interval: &str,
) -> anyhow::Result<()> {
    let every = parse_duration(interval).context("--hdr-interval")?;
    let shard = outcome
        .result
        .info
        .shard
        .map_or((0, 1), |s| (s.index, s.count));
    let lines = twelve_report::timeseries::lines(&outcome.intervals, outcome.start, every, shard);
    let file =
        std::fs::File::create(path).with_context(|| format!("--timeseries {}", path.display()))?;
    twelve_report::timeseries::write(std::io::BufWriter::new(file), &lines)
        .with_context(|| format!("--timeseries {}", path.display()))
}

/// Flags of ours that the pods must not see (they choose their own barrier).
const DROP_WITH_VALUE: [&str; 5] = [
    "--k8s-image",
    "--k8s-name",
    "--barrier",
    "--start-at",
    "--shard",
];
const DROP: [&str; 1] = ["--k8s-manifest"];

/// `--k8s-manifest`: the pods' `twelve bench` arguments: `argv` (what followed `twelve bench`)
/// without the manifest's own flags, with the barrier at shard 0's pod and `--json` on stdout.
pub fn pod_args(argv: &[String], name: &str) -> Vec<String> {
    let mut out = vec!["bench".to_string()];
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        let flag = a.split_once('=').map_or(a.as_str(), |(f, _)| f);
        if DROP.contains(&flag) {
            continue;
        }
        if DROP_WITH_VALUE.contains(&flag) {
            if !a.contains('=') {
                it.next();
            }
            continue;
        }
        out.push(a.clone());
    }
    out.push("--barrier".into());
    out.push(k8s::barrier_addr(name));
    if !argv.iter().any(|a| a == "--json") {
        out.push("--json".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|a| a.to_string()).collect()
    }

    macro_rules! args {
        ($name:ident, $argv:expr, $expect:expr) => {
            #[test]
            fn $name() {
                assert_eq!(pod_args(&s(&$argv), "tb"), s(&$expect));
            }
        };
    }

    args!(
        manifest_flags_are_dropped,
        [
            "--shards",
            "4",
            "--k8s-manifest",
            "--k8s-image",
            "x:1",
            "-R",
            "10k",
            "http://h/"
        ],
        [
            "bench",
            "--shards",
            "4",
            "-R",
            "10k",
            "http://h/",
            "--barrier",
            "tb-0.tb:7070",
            "--json"
        ]
    );
    args!(
        equals_forms_are_dropped,
        ["--k8s-name=tb", "--barrier=a:1", "--shards=2", "--json"],
        ["bench", "--shards=2", "--json", "--barrier", "tb-0.tb:7070"]
    );

    fn args(shard: Option<&str>, shards: Option<u32>) -> ShardArgs {
        ShardArgs {
            shard: shard.map(str::to_string),
            shards,
            ..Default::default()
        }
    }

    #[test]
    fn shard_flag_is_parsed() {
        let s = args(Some("1/3"), None).shard().unwrap();
        assert_eq!(s, Some(Shard { index: 1, count: 3 }));
        assert_eq!(args(None, None).shard().unwrap(), None);
        assert!(args(Some("3/3"), None).shard().is_err());
    }
}
