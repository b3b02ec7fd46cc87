//! When the shards of a run start together: at a wall-clock instant (for clocks you trust), or
//! when shard 0's [barrier] says go. Each shard's warm-up runs after the start, the same length
//! everywhere, so the measured windows begin together.
use super::barrier::{self, BarrierError};
use crate::config::Config;
use std::fmt;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, SystemTime};

/// How the shards of a run start together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    /// At this wall-clock instant (`--start-at`).
    At(SystemTime),
    /// When the barrier at `addr` (`HOST:PORT`, `--barrier`) says go, waiting for every shard
    /// at most `timeout`.
    Barrier {
        /// Shard 0's address.
        addr: String,
        /// How long to wait for every shard.
        timeout: Duration,
    },
}

/// Why a shard could not start.
#[derive(Debug)]
pub enum StartError {
    /// The shard could not reach the server before the barrier.
    Reach {
        /// The shard's index.
        shard: u32,
        /// The server's address.
        target: SocketAddr,
        /// The connect's error.
        source: std::io::Error,
    },
    /// The barrier failed.
    Barrier {
        /// The barrier's address, as given.
        addr: String,
        /// The shard's index.
        shard: u32,
        /// What went wrong.
        source: BarrierError,
    },
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Reach { shard, target, .. } => write!(f, "shard {shard}: reaching {target}"),
            Self::Barrier { addr, shard, .. } => write!(f, "--barrier {addr}: shard {shard}"),
        }
    }
}

impl std::error::Error for StartError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Reach { source, .. } => Some(source),
            Self::Barrier { source, .. } => Some(source),
        }
    }
}

impl Start {
    /// Waits until this shard may start: the instant, or the barrier's go time. At the barrier
    /// a shard reports ready once it has reached the server (one connect): a shard that cannot
    /// is an error before any shard sends a request. A run that is not sharded does not meet
    /// at a barrier.
    pub fn wait(&self, config: &Config) -> Result<(), StartError> {
        let go = match (self, config.shard) {
            (Self::At(t), _) => *t,
            (Self::Barrier { addr, timeout }, Some(shard)) => {
                let target = config.targets[0].addr;
                TcpStream::connect_timeout(&target, config.connect_timeout).map_err(|source| {
                    StartError::Reach {
                        shard: shard.index,
                        target,
                        source,
                    }
                })?;
                barrier::go_time(addr, shard, *timeout).map_err(|source| StartError::Barrier {
                    addr: addr.clone(),
                    shard: shard.index,
                    source,
                })?
            }
            (Self::Barrier { .. }, None) => return Ok(()),
        };
        sleep_until(go);
        Ok(())
    }
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

/// A timestamp that is not RFC 3339 (`YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeError(String);

impl fmt::Display for TimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} is not an RFC 3339 time (e.g. 2026-11-23T21:30:00Z)",
            self.0
        )
    }
}

impl std::error::Error for TimeError {}

/// Parses an RFC 3339 timestamp: `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
pub fn parse_rfc3339(s: &str) -> Result<SystemTime, TimeError> {
    let bad = || TimeError(s.to_string());
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return Err(bad());
    }
    let num = |r: std::ops::Range<usize>| -> Result<i64, TimeError> {
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
    use crate::Shard;
    use std::net::TcpListener;

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

    #[test]
    fn a_bad_time_names_the_value() {
        let err = parse_rfc3339("soon").unwrap_err();
        assert_eq!(
            err.to_string(),
            "\"soon\" is not an RFC 3339 time (e.g. 2026-11-23T21:30:00Z)"
        );
    }

    fn sharded_config(target: SocketAddr) -> Config {
        let mut c = Config::new(Vec::new());
        c.targets = vec![crate::config::Target::parse(&format!("http://{target}/")).unwrap()];
        c.shard = Some(Shard::new(1, 2).unwrap());
        c
    }

    #[test]
    fn a_shard_that_cannot_reach_the_server_fails_before_the_barrier() {
        // A port with nothing listening: bind, note it, close.
        let target = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let start = Start::Barrier {
            addr: "127.0.0.1:9".to_string(),
            timeout: Duration::ZERO,
        };
        let err = start.wait(&sharded_config(target)).unwrap_err();
        assert!(matches!(err, StartError::Reach { shard: 1, .. }), "{err:?}");
        assert_eq!(err.to_string(), format!("shard 1: reaching {target}"));
    }

    #[test]
    fn a_failed_barrier_names_the_flag_and_the_shard() {
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let start = Start::Barrier {
            addr: "127.0.0.1:9".to_string(),
            timeout: Duration::ZERO,
        };
        let err = start
            .wait(&sharded_config(server.local_addr().unwrap()))
            .unwrap_err();
        assert!(
            matches!(
                &err,
                StartError::Barrier {
                    shard: 1,
                    source: BarrierError::NoLeader,
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(err.to_string(), "--barrier 127.0.0.1:9: shard 1");
    }

    #[test]
    fn a_start_in_the_past_returns_at_once() {
        let start = Start::At(SystemTime::UNIX_EPOCH);
        start.wait(&Config::new(Vec::new())).unwrap();
    }
}
