//! `twelve bench`'s flags for a run split across load generators: which shard this process
//! is (`--shard I/N`, or `--shards N` with Kubernetes' `JOB_COMPLETION_INDEX`), and when all
//! shards start together: at a wall-clock instant (`--start-at`, for clocks you trust) or when
//! shard 0's barrier says go (`--barrier`). `--k8s-manifest` prints the Indexed Job that runs
//! the same command line on N pods instead of running it.
use crate::barrier;
use anyhow::{Context, bail};
use std::net::TcpStream;
use std::time::{Duration, SystemTime};
use twelve_load::{Config, JOB_COMPLETION_INDEX, Shard, parse_duration};

/// The sharding flags.
#[derive(clap::Args, Debug, Clone, Default)]
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

    /// Waits until this shard may start: `--start-at`'s instant, or the barrier's go time.
    /// At the barrier a shard reports ready once it has reached the server (one connect):
    /// a shard that cannot is an error before any shard sends a request. Each shard's warm-up
    /// runs after the go, the same length everywhere, so the measured windows begin together.
    pub fn wait_for_start(&self, config: &Config) -> anyhow::Result<()> {
        let go = match (&self.start_at, &self.barrier, config.shard) {
            (Some(t), _, _) => parse_rfc3339(t).context("--start-at")?,
            (None, Some(addr), Some(shard)) => {
                let target = config.targets[0].addr;
                TcpStream::connect_timeout(&target, config.connect_timeout)
                    .with_context(|| format!("shard {}: reaching {target}", shard.index))?;
                let timeout = parse_duration(&self.barrier_timeout).context("--barrier-timeout")?;
                barrier::go_time(addr, shard, timeout)
                    .with_context(|| format!("--barrier {addr}: shard {}", shard.index))?
            }
            _ => return Ok(()),
        };
        sleep_until(go);
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

/// Sleeps until the wall clock reads `go` (at once if it has passed).
fn sleep_until(go: SystemTime) {
    while let Ok(left) = go.duration_since(SystemTime::now()) {
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left);
    }
}

/// Parses an RFC 3339 timestamp: `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
pub fn parse_rfc3339(s: &str) -> anyhow::Result<SystemTime> {
    let bad = || anyhow::anyhow!("{s:?} is not an RFC 3339 time (e.g. 2026-11-23T21:30:00Z)");
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return Err(bad());
    }
    let num = |r: std::ops::Range<usize>| -> anyhow::Result<i64> {
        let t = s.get(r).ok_or_else(bad)?;
        if !t.bytes().all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        t.parse().map_err(|_| bad())
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if b[13] != b':' || b[16] != b':' {
        return Err(bad());
    }
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return Err(bad());
    }
    let mut i = 19;
    let mut frac_ns = 0u64;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let digits = s.get(start..i).filter(|d| !d.is_empty()).ok_or_else(bad)?;
        let padded: String = digits.chars().chain("000000000".chars()).take(9).collect();
        frac_ns = padded.parse().map_err(|_| bad())?;
    }
    let offset_s = match s.get(i..).ok_or_else(bad)? {
        "Z" | "z" => 0,
        tz if tz.len() == 6 && matches!(&tz[..1], "+" | "-") && &tz[3..4] == ":" => {
            let (oh, om) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
            let sign = if &tz[..1] == "-" { -1 } else { 1 };
            sign * (oh * 3600 + om * 60)
        }
        _ => return Err(bad()),
    };
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec - offset_s;
    let secs = u64::try_from(secs).map_err(|_| bad())?;
    Ok(SystemTime::UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_nanos(frac_ns))
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`,
/// <https://howardhinnant.github.io/date_algorithms.html>).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! rfc3339 {
        ($name:ident, $s:expr, err) => {
            #[test]
            fn $name() {
                assert!(parse_rfc3339($s).is_err());
            }
        };
        ($name:ident, $s:expr, $unix_ns:expr) => {
            #[test]
            fn $name() {
                let t = parse_rfc3339($s).unwrap();
                let ns = t.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos();
                assert_eq!(ns, $unix_ns);
            }
        };
    }

    rfc3339!(epoch, "1970-01-01T00:00:00Z", 0);
    rfc3339!(utc, "2026-11-23T21:30:00Z", 1_795_469_400_000_000_000);
    rfc3339!(
        fraction,
        "2026-11-23T21:30:00.25Z",
        1_795_469_400_250_000_000
    );
    rfc3339!(
        offset_east,
        "2026-11-23T22:30:00+01:00",
        1_795_469_400_000_000_000
    );
    rfc3339!(
        offset_west,
        "2026-11-23T16:00:00-05:30",
        1_795_469_400_000_000_000
    );
    rfc3339!(leap_day, "2024-02-29T00:00:00Z", 1_709_164_800_000_000_000);
    rfc3339!(no_zone, "2026-11-23T21:30:00", err);
    rfc3339!(bad_month, "2026-13-01T00:00:00Z", err);
    rfc3339!(words, "tomorrow at nine", err);

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
