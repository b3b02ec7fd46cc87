//! The start barrier of a sharded run: shard 0 listens, every other shard connects and says
//! `ready I N`, and once all N are in, shard 0 sends each the same go time (`go <unix ns>`),
//! a short lead ahead so the message reaches every shard before it. A shard that does not
//! report in time, reports a different N, or reports twice fails the barrier, and with it the
//! run: a share run late, out of phase with the others, would not be the planned load.
//! Plain text over TCP; one line each way.
use super::Shard;
use std::fmt;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

/// How far ahead of the last `ready` the go time is: time for shard 0's go lines to reach
/// every shard, across a cluster network, before the instant they name.
pub const GO_LEAD: Duration = Duration::from_millis(500);

/// Between connect attempts while shard 0 is not listening yet (its pod may start last).
const RETRY: Duration = Duration::from_millis(50);

/// Why the barrier failed.
#[derive(Debug)]
pub enum BarrierError {
    /// The barrier's address has no `:PORT` for shard 0 to listen on.
    Address,
    /// Listening, accepting, reading or writing failed.
    Io(io::Error),
    /// Shard 0 waited out the timeout; these shards never reported ready.
    Missing {
        /// The shards that did not report, in order.
        shards: Vec<u32>,
        /// How many shards the run has.
        count: u32,
    },
    /// A shard reported ready a second time.
    Twice(u32),
    /// A shard reported a different number of shards.
    OtherCount {
        /// The shard that reported.
        index: u32,
        /// The count it runs.
        count: u32,
        /// The count shard 0 runs.
        expected: u32,
    },
    /// A line that is not `ready I N` with 1 ≤ I < N.
    Unexpected(String),
    /// Shard 0 did not answer before the timeout.
    NoLeader,
    /// Shard 0 answered with something other than `go <unix ns>`.
    NoGo(String),
}

impl fmt::Display for BarrierError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Address => f.write_str("expected HOST:PORT"),
            Self::Io(e) => e.fmt(f),
            Self::Missing { shards, count } => {
                let missing: Vec<String> = shards.iter().map(u32::to_string).collect();
                write!(
                    f,
                    "shard(s) {} of {count} did not report ready in time",
                    missing.join(", ")
                )
            }
            Self::Twice(index) => write!(f, "shard {index} reported ready twice"),
            Self::OtherCount {
                index,
                count,
                expected,
            } => write!(f, "shard {index} runs {count} shards, this one {expected}"),
            Self::Unexpected(line) => write!(f, "barrier: unexpected {line:?}"),
            Self::NoLeader => f.write_str("shard 0's barrier did not answer in time"),
            Self::NoGo(line) => write!(f, "barrier: no go time from shard 0 (got {line:?})"),
        }
    }
}

impl std::error::Error for BarrierError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        // `Io` shows the I/O error itself, so its source is the I/O error's own.
        match self {
            Self::Io(e) => e.source(),
            _ => None,
        }
    }
}

impl From<io::Error> for BarrierError {
    fn from(e: io::Error) -> Self {
        Self::Io(e)
    }
}

/// Meets every other shard at the barrier at `addr` (`HOST:PORT`; shard 0 listens on PORT of
/// every local address) and returns the go time, or an error once `timeout` has passed.
pub fn go_time(addr: &str, shard: Shard, timeout: Duration) -> Result<SystemTime, BarrierError> {
    let deadline = Instant::now() + timeout;
    if shard.count == 1 {
        return Ok(SystemTime::now());
    }
    if shard.index == 0 {
        let port = addr
            .rsplit_once(':')
            .and_then(|(_, p)| p.parse::<u16>().ok())
            .ok_or(BarrierError::Address)?;
        let listener = TcpListener::bind(SocketAddr::from(([0, 0, 0, 0], port)))?;
        lead(listener, shard.count, deadline)
    } else {
        follow(addr, shard, deadline)
    }
}

/// Shard 0: accepts the other N−1, then tells them all the go time.
pub fn lead(
    listener: TcpListener,
    count: u32,
    deadline: Instant,
) -> Result<SystemTime, BarrierError> {
    // Accepts block; a thread does them so this one can give up at the deadline.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            if tx.send(conn).is_err() {
                return;
            }
        }
    });
    let mut ready: Vec<Option<TcpStream>> = (0..count).map(|_| None).collect();
    let mut waiting = count - 1;
    while waiting > 0 {
        let left = deadline.saturating_duration_since(Instant::now());
        let conn = rx.recv_timeout(left).map_err(|_| BarrierError::Missing {
            shards: (1..count)
                .filter(|&i| ready[i as usize].is_none())
                .collect(),
            count,
        })??;
        conn.set_read_timeout(Some(left.max(Duration::from_millis(1))))?;
        let mut line = String::new();
        BufReader::new(&conn).read_line(&mut line)?;
        let index = parse_ready(&line, count)?;
        if ready[index as usize].replace(conn).is_some() {
            return Err(BarrierError::Twice(index));
        }
        waiting -= 1;
    }
    let go = SystemTime::now() + GO_LEAD;
    let ns = go
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    for mut conn in ready.into_iter().flatten() {
        conn.write_all(format!("go {ns}\n").as_bytes())?;
    }
    Ok(go)
}

/// `ready I N` from shard I of N (1 ≤ I < N).
fn parse_ready(line: &str, count: u32) -> Result<u32, BarrierError> {
    let bad = || BarrierError::Unexpected(line.trim().to_string());
    let mut w = line.split_whitespace();
    if w.next() != Some("ready") {
        return Err(bad());
    }
    let index: u32 = w.next().and_then(|t| t.parse().ok()).ok_or_else(bad)?;
    let n: u32 = w.next().and_then(|t| t.parse().ok()).ok_or_else(bad)?;
    if n != count {
        return Err(BarrierError::OtherCount {
            index,
            count: n,
            expected: count,
        });
    }
    if index == 0 || index >= count {
        return Err(bad());
    }
    Ok(index)
}

/// Any other shard: connects (retrying while shard 0 is not up yet), says ready, and reads
/// the go time.
fn follow(addr: &str, shard: Shard, deadline: Instant) -> Result<SystemTime, BarrierError> {
    let mut conn = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(BarrierError::NoLeader);
        }
        // Resolved on every attempt: a pod's DNS name may appear only after it started.
        let target = addr.to_socket_addrs().ok().and_then(|mut a| a.next());
        if let Some(target) = target
            && let Ok(c) = TcpStream::connect_timeout(&target, left)
        {
            break c;
        }
        std::thread::sleep(RETRY.min(left));
    };
    conn.write_all(format!("ready {} {}\n", shard.index, shard.count).as_bytes())?;
    let left = deadline.saturating_duration_since(Instant::now());
    conn.set_read_timeout(Some(left.max(Duration::from_millis(1))))?;
    let mut line = String::new();
    BufReader::new(&conn).read_line(&mut line)?;
    let ns: u64 = line
        .trim()
        .strip_prefix("go ")
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| BarrierError::NoGo(line.trim().to_string()))?;
    Ok(SystemTime::UNIX_EPOCH + Duration::from_nanos(ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shards_meet(count: u32, timeout: Duration) -> Vec<Result<SystemTime, BarrierError>> {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let deadline = Instant::now() + timeout;
        std::thread::scope(|s| {
            let leader = s.spawn(move || lead(listener, count, deadline));
            let followers: Vec<_> = (1..count)
                .map(|i| {
                    let addr = addr.clone();
                    s.spawn(move || follow(&addr, Shard::new(i, count).unwrap(), deadline))
                })
                .collect();
            std::iter::once(leader)
                .chain(followers)
                .map(|h| h.join().unwrap())
                .collect()
        })
    }

    #[test]
    fn every_shard_gets_the_same_go_time() {
        let got = shards_meet(4, Duration::from_secs(30));
        let times: Vec<u128> = got
            .into_iter()
            .map(|r| {
                r.unwrap()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos()
            })
            .collect();
        // Shard 0 keeps its SystemTime; the others read it back in whole ns.
        assert!(times.iter().all(|&t| t == times[0]), "{times:?}");
    }

    #[test]
    fn a_missing_shard_fails_the_barrier() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let deadline = Instant::now() + Duration::from_millis(200);
        let err = lead(listener, 3, deadline).unwrap_err();
        assert!(
            matches!(&err, BarrierError::Missing { shards, count: 3 } if shards == &[1, 2]),
            "{err:?}"
        );
        assert!(err.to_string().contains("1, 2 of 3"), "{err}");
    }

    #[test]
    fn a_follower_without_a_leader_fails() {
        // A port with nothing listening: bind, note it, close.
        let addr = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let deadline = Instant::now() + Duration::from_millis(200);
        let err = follow(&addr.to_string(), Shard::new(1, 2).unwrap(), deadline).unwrap_err();
        assert!(matches!(err, BarrierError::NoLeader), "{err:?}");
    }

    #[test]
    fn a_leader_needs_a_port() {
        let err = go_time("shard-0", Shard::new(0, 2).unwrap(), Duration::ZERO).unwrap_err();
        assert_eq!(err.to_string(), "expected HOST:PORT");
    }

    macro_rules! ready {
        ($name:ident, $line:expr, $count:expr, $expect:expr) => {
            #[test]
            fn $name() {
                assert_eq!(parse_ready($line, $count).ok(), $expect);
            }
        };
    }

    ready!(ready_ok, "ready 2 4\n", 4, Some(2));
    ready!(ready_other_count, "ready 2 3\n", 4, None);
    ready!(ready_shard_zero, "ready 0 4\n", 4, None);
    ready!(ready_out_of_range, "ready 4 4\n", 4, None);
    ready!(ready_garbage, "hello\n", 4, None);

    #[test]
    fn messages_name_the_shard_and_the_line() {
        let cases = [
            (
                parse_ready("ready 2 3\n", 4),
                "shard 2 runs 3 shards, this one 4",
            ),
            (parse_ready("hello\n", 4), "barrier: unexpected \"hello\""),
        ];
        for (got, want) in cases {
            assert_eq!(got.unwrap_err().to_string(), want);
        }
    }
}
