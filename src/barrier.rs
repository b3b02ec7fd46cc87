//! The start barrier of a sharded run: shard 0 listens, every other shard connects and says
//! `ready I N`, and once all N are in, shard 0 sends each the same go time (`go <unix ns>`),
//! a short lead ahead so the message reaches every shard before it. A shard that does not
//! report in time, reports a different N, or reports twice fails the barrier, and with it the
//! run: a share run late, out of phase with the others, would not be the planned load.
//! Plain text over TCP; one line each way.
use std::io::{self, BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};
use twelve_load::Shard;

/// How far ahead of the last `ready` the go time is: time for shard 0's go lines to reach
/// every shard, across a cluster network, before the instant they name.
pub const GO_LEAD: Duration = Duration::from_millis(500);

/// Between connect attempts while shard 0 is not listening yet (its pod may start last).
const RETRY: Duration = Duration::from_millis(50);

fn timed_out(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, what.to_string())
}

/// Meets every other shard at the barrier at `addr` (`HOST:PORT`; shard 0 listens on PORT of
/// every local address) and returns the go time, or an error once `timeout` has passed.
pub fn go_time(addr: &str, shard: Shard, timeout: Duration) -> io::Result<SystemTime> {
    let deadline = Instant::now() + timeout;
    if shard.count == 1 {
        return Ok(SystemTime::now());
    }
    if shard.index == 0 {
        let port = addr
            .rsplit_once(':')
            .and_then(|(_, p)| p.parse::<u16>().ok())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "expected HOST:PORT"))?;
        let listener = TcpListener::bind(SocketAddr::from(([0, 0, 0, 0], port)))?;
        lead(listener, shard.count, deadline)
    } else {
        follow(addr, shard, deadline)
    }
}

/// Shard 0: accepts the other N−1, then tells them all the go time.
pub fn lead(listener: TcpListener, count: u32, deadline: Instant) -> io::Result<SystemTime> {
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
        let conn = rx.recv_timeout(left).map_err(|_| {
            let missing: Vec<String> = (1..count)
                .filter(|&i| ready[i as usize].is_none())
                .map(|i| i.to_string())
                .collect();
            timed_out(&format!(
                "shard(s) {} of {count} did not report ready in time",
                missing.join(", ")
            ))
        })??;
        conn.set_read_timeout(Some(left.max(Duration::from_millis(1))))?;
        let mut line = String::new();
        BufReader::new(&conn).read_line(&mut line)?;
        let index = parse_ready(&line, count)?;
        if ready[index as usize].replace(conn).is_some() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("shard {index} reported ready twice"),
            ));
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
fn parse_ready(line: &str, count: u32) -> io::Result<u32> {
    let bad = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("barrier: unexpected {:?}", line.trim()),
        )
    };
    let mut w = line.split_whitespace();
    if w.next() != Some("ready") {
        return Err(bad());
    }
    let index: u32 = w.next().and_then(|t| t.parse().ok()).ok_or_else(bad)?;
    let n: u32 = w.next().and_then(|t| t.parse().ok()).ok_or_else(bad)?;
    if n != count {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("shard {index} runs {n} shards, this one {count}"),
        ));
    }
    if index == 0 || index >= count {
        return Err(bad());
    }
    Ok(index)
}

/// Any other shard: connects (retrying while shard 0 is not up yet), says ready, and reads
/// the go time.
fn follow(addr: &str, shard: Shard, deadline: Instant) -> io::Result<SystemTime> {
    let mut conn = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(timed_out("shard 0's barrier did not answer in time"));
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
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("barrier: no go time from shard 0 (got {:?})", line.trim()),
            )
        })?;
    Ok(SystemTime::UNIX_EPOCH + Duration::from_nanos(ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shards_meet(count: u32, timeout: Duration) -> Vec<io::Result<SystemTime>> {
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
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
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
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
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
}
