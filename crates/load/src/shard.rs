//! One shard's slice of a run split across N load generators (`--shard I/N`, or
//! `--shards N` with Kubernetes' `JOB_COMPLETION_INDEX`): whole quantities (connections, a
//! closed run's request count) split as ⌊(i+1)R/N⌋ − ⌊iR/N⌋, and the open model's one global
//! schedule striped, so that the union of every shard's slots is exactly the schedule one
//! big client would run.
//!
//! Why stripes and not N schedules at R/N each: N independent uniform schedules all start at
//! slot 0 and so fire together, N requests at once every N/R; striping gives shard i the
//! global slots i, i+N, i+2N, … of the one schedule (a phase shift of i/R), so the server
//! sees the same evenly spaced arrivals as from one client. Poisson arrivals are striped the
//! same way: every shard draws the whole seeded sequence and keeps its own slots, so the
//! union is the single run's sequence, gap for gap.
//!
//! The shards start together through [`start`]: at an instant, or at shard 0's [`barrier`].
//! [`k8s`] writes the Kubernetes objects that run them as the pods of an Indexed Job.
use crate::config::{Config, ConfigError, Model, Stop};

pub mod barrier;
pub mod k8s;
pub mod start;

pub use barrier::BarrierError;
pub use start::{Start, StartError, TimeError, parse_rfc3339};

/// Which slice of a sharded run this process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard's index, 0-based.
    pub index: u32,
    /// How many shards the run has.
    pub count: u32,
}

/// The variable Kubernetes sets in each pod of an Indexed Job (its completion index).
pub const JOB_COMPLETION_INDEX: &str = "JOB_COMPLETION_INDEX";

impl Shard {
    /// A shard, checked: `count ≥ 1` and `index < count`.
    pub fn new(index: u32, count: u32) -> Result<Self, ConfigError> {
        if count == 0 || index >= count {
            return Err(ConfigError(format!(
                "--shard {index}/{count}: needs N ≥ 1 and 0 ≤ I < N"
            )));
        }
        Ok(Self { index, count })
    }

    /// Parses `I/N` (0-based index).
    pub fn parse(s: &str) -> Result<Self, ConfigError> {
        let bad = || ConfigError(format!("--shard {s:?}: expected I/N, e.g. 0/4"));
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let i = i.trim().parse().map_err(|_| bad())?;
        let n = n.trim().parse().map_err(|_| bad())?;
        Self::new(i, n)
    }

    /// Shard `index` of `count`, the index read from `JOB_COMPLETION_INDEX`'s value.
    pub fn from_completion_index(value: Option<&str>, count: u32) -> Result<Self, ConfigError> {
        let value = value.ok_or_else(|| {
            ConfigError(format!(
                "--shards {count}: {JOB_COMPLETION_INDEX} is not set (use --shard I/N outside \
                 an Indexed Job)"
            ))
        })?;
        let index = value
            .trim()
            .parse()
            .map_err(|_| ConfigError(format!("{JOB_COMPLETION_INDEX}={value:?}: not an index")))?;
        Self::new(index, count)
    }

    /// This shard's part of a whole quantity: ⌊(i+1)R/N⌋ − ⌊iR/N⌋. The parts of all shards
    /// add up to `total` exactly and differ by at most one.
    pub fn share(&self, total: u64) -> u64 {
        let (i, n, r) = (
            u128::from(self.index),
            u128::from(self.count),
            u128::from(total),
        );
        ((i + 1) * r / n - i * r / n) as u64
    }

    /// Whether global schedule slot `k` is this shard's.
    pub fn owns_slot(&self, k: u64) -> bool {
        k % u64::from(self.count) == u64::from(self.index)
    }

    /// This shard's slots among the global slots `0..limit`.
    pub fn slots_below(&self, limit: u64) -> u64 {
        let (i, n) = (u64::from(self.index), u64::from(self.count));
        if limit <= i {
            0
        } else {
            (limit - i).div_ceil(n)
        }
    }
}

impl Config {
    /// The connections this process opens: its shard's share of `connections`.
    pub fn own_connections(&self) -> usize {
        match self.shard {
            Some(s) => s.share(self.connections as u64) as usize,
            None => self.connections,
        }
    }

    /// The requests this process makes in a counted run: its share of `-n` in the closed
    /// model, its stripe's slots below `-n` in the open model.
    pub fn own_requests(&self) -> Option<u64> {
        let Stop::Requests(n) = self.stop else {
            return None;
        };
        Some(match (self.shard, self.model) {
            (None, _) => n,
            (Some(s), Model::Closed) => s.share(n),
            (Some(s), Model::Open { .. }) => s.slots_below(n),
        })
    }

    /// The open model's arrival rate this process runs, per second: a stripe of 1/N of the
    /// global schedule.
    pub fn own_rate_per_s(&self) -> Option<f64> {
        match self.model {
            Model::Closed => None,
            Model::Open { rate_per_s, .. } => {
                Some(rate_per_s / f64::from(self.shard.map_or(1, |s| s.count)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! parse {
        ($name:ident, $s:expr, err) => {
            #[test]
            fn $name() {
                assert!(Shard::parse($s).is_err(), "{:?}", Shard::parse($s));
            }
        };
        ($name:ident, $s:expr, $i:expr, $n:expr) => {
            #[test]
            fn $name() {
                assert_eq!(
                    Shard::parse($s),
                    Ok(Shard {
                        index: $i,
                        count: $n
                    })
                );
            }
        };
    }

    parse!(parse_first_of_four, "0/4", 0, 4);
    parse!(parse_last_of_four, "3/4", 3, 4);
    parse!(parse_single, "0/1", 0, 1);
    parse!(parse_index_out_of_range, "4/4", err);
    parse!(parse_zero_shards, "0/0", err);
    parse!(parse_no_slash, "2", err);
    parse!(parse_negative, "-1/4", err);

    #[test]
    fn completion_index_is_read() {
        assert_eq!(
            Shard::from_completion_index(Some("2"), 4),
            Ok(Shard { index: 2, count: 4 })
        );
        assert!(Shard::from_completion_index(None, 4).is_err());
        assert!(Shard::from_completion_index(Some("4"), 4).is_err());
        assert!(Shard::from_completion_index(Some("x"), 4).is_err());
    }

    macro_rules! shares {
        ($name:ident, $total:expr, $n:expr, $expect:expr) => {
            #[test]
            fn $name() {
                let got: Vec<u64> = (0..$n)
                    .map(|i| Shard::new(i, $n).unwrap().share($total))
                    .collect();
                assert_eq!(got, $expect);
            }
        };
    }

    shares!(share_even, 64, 4, vec![16, 16, 16, 16]);
    shares!(share_ten_by_three, 10, 3, vec![3, 3, 4]);
    shares!(share_ten_by_four, 10, 4, vec![2, 3, 2, 3]);
    shares!(share_fewer_than_shards, 2, 4, vec![0, 1, 0, 1]);
    shares!(share_zero, 0, 3, vec![0, 0, 0]);
    shares!(
        share_near_u64_max,
        u64::MAX,
        2,
        vec![u64::MAX / 2, u64::MAX / 2 + 1]
    );

    #[test]
    fn shares_always_add_up_exactly() {
        for n in 1..=17u32 {
            for total in [0u64, 1, 2, 7, 63, 64, 65, 1000, 999_983, u64::MAX - 3] {
                let parts: Vec<u64> = (0..n)
                    .map(|i| Shard::new(i, n).unwrap().share(total))
                    .collect();
                let sum: u128 = parts.iter().map(|&p| u128::from(p)).sum();
                assert_eq!(sum, u128::from(total), "n={n} total={total}");
                let (lo, hi) = (parts.iter().min().unwrap(), parts.iter().max().unwrap());
                assert!(hi - lo <= 1, "n={n} total={total} {parts:?}");
            }
        }
    }

    fn config(connections: usize, stop: Stop, model: Model, shard: &str) -> Config {
        let mut c = Config::new(Vec::new());
        c.connections = connections;
        c.stop = stop;
        c.model = model;
        c.shard = Some(Shard::parse(shard).unwrap());
        c
    }

    const OPEN: Model = Model::Open {
        rate_per_s: 900.0,
        arrival: crate::Arrival::Uniform,
        seed: 1,
    };

    #[test]
    fn a_closed_shard_takes_its_share_of_connections_and_requests() {
        let c = config(10, Stop::Requests(1001), Model::Closed, "1/4");
        assert_eq!(c.own_connections(), 3);
        assert_eq!(c.own_requests(), Some(250));
        assert_eq!(c.own_rate_per_s(), None);
    }

    #[test]
    fn an_open_shard_takes_its_stripe() {
        let c = config(10, Stop::Requests(1001), OPEN, "0/4");
        assert_eq!(c.own_connections(), 2);
        // Slots 0, 4, …, 1000.
        assert_eq!(c.own_requests(), Some(251));
        assert_eq!(c.own_rate_per_s(), Some(225.0));
    }

    #[test]
    fn a_timed_shard_has_no_count() {
        let c = config(
            8,
            Stop::Duration(std::time::Duration::from_secs(1)),
            OPEN,
            "3/4",
        );
        assert_eq!((c.own_connections(), c.own_requests()), (2, None));
    }

    #[test]
    fn stripes_partition_the_slots() {
        for n in 1..=9u32 {
            for limit in [0u64, 1, 5, 9, 10, 100, 1001] {
                let shards: Vec<Shard> = (0..n).map(|i| Shard::new(i, n).unwrap()).collect();
                for k in 0..limit {
                    assert_eq!(shards.iter().filter(|s| s.owns_slot(k)).count(), 1);
                }
                for s in &shards {
                    let owned = (0..limit).filter(|&k| s.owns_slot(k)).count() as u64;
                    assert_eq!(s.slots_below(limit), owned, "{s:?} limit={limit}");
                }
            }
        }
    }
}
