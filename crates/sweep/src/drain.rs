//! Waiting between sweep steps until the last step's connections have drained, and checking
//! TIME_WAIT and ephemeral-port pressure, as ab+.sh did with `ss -s` and
//! `ss -tan state time-wait` (here read straight from /proc, so no iproute2 is needed).
//!
//! Why: a step that starts while the previous step's sockets are still closing competes with
//! them for the server's accept queue and file descriptors, and every connection the client
//! closed sits in TIME_WAIT for 60 s (`TCP_TIMEWAIT_LEN`, include/net/tcp.h) holding its
//! (source port, destination) tuple. Once those fill the ephemeral range
//! (`net.ipv4.ip_local_port_range`), connect() fails with EADDRNOTAVAIL and the step measures
//! the client's port shortage instead of the server. Linux reuses TIME_WAIT tuples for new
//! outgoing connections only where `net.ipv4.tcp_tw_reuse` allows it (default 2: loopback
//! only), so the check matters most for `--close` sweeps against another host.
use std::time::{Duration, Instant};

/// TCP socket counts from /proc/net/sockstat (`TCP: inuse 5 orphan 0 tw 3 alloc 8 mem 1`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sockstat {
    /// Sockets in use (not counting TIME_WAIT).
    pub inuse: u64,
    /// Sockets no longer attached to a process, still closing.
    pub orphan: u64,
    /// Sockets in TIME_WAIT, whole host (this network namespace).
    pub tw: u64,
}

/// Parses the `TCP:` line of /proc/net/sockstat.
pub fn parse_sockstat(text: &str) -> Option<Sockstat> {
    let line = text.lines().find(|l| l.starts_with("TCP:"))?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let field = |name: &str| -> Option<u64> {
        let i = words.iter().position(|w| *w == name)?;
        words.get(i + 1)?.parse().ok()
    };
    Some(Sockstat {
        inuse: field("inuse")?,
        orphan: field("orphan")?,
        tw: field("tw")?,
    })
}

/// Parses /proc/sys/net/ipv4/ip_local_port_range (`32768\t60999`) into the number of ports.
pub fn parse_port_range(text: &str) -> Option<u32> {
    let mut it = text.split_whitespace().map(|w| w.parse::<u32>());
    let (lo, hi) = (it.next()?.ok()?, it.next()?.ok()?);
    (hi >= lo).then(|| hi - lo + 1)
}

/// TCP states as /proc/net/tcp writes them (include/net/tcp_states.h).
const TIME_WAIT: u8 = 0x06;
const LISTEN: u8 = 0x0A;

/// Counts in /proc/net/tcp or tcp6 text of sockets with `port` at either end: those still
/// closing or open (neither LISTEN nor TIME_WAIT), and those in TIME_WAIT.
///
/// Line format: `sl local_address rem_address st ...` with addresses `HEX_IP:HEX_PORT`
/// (net/ipv4/tcp_ipv4.c, `get_tcp4_sock`).
pub fn count_port(text: &str, port: u16) -> (usize, usize) {
    let (mut busy, mut tw) = (0, 0);
    for line in text.lines().skip(1) {
        let mut f = line.split_whitespace().skip(1);
        let (Some(local), Some(remote), Some(state)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let port_of = |a: &str| {
            a.rsplit_once(':')
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok())
        };
        if port_of(local) != Some(port) && port_of(remote) != Some(port) {
            continue;
        }
        match u8::from_str_radix(state, 16) {
            Ok(TIME_WAIT) => tw += 1,
            Ok(LISTEN) | Err(_) => {}
            Ok(_) => busy += 1,
        }
    }
    (busy, tw)
}

/// How long to wait and when to stop.
#[derive(Debug, Clone, Copy)]
pub struct DrainPolicy {
    /// Give up waiting after this long (the step then runs anyway, and says so).
    pub max_wait: Duration,
    /// TIME_WAIT sockets to the target may fill at most this share of the ephemeral range.
    pub tw_share: f64,
    /// Pause between looks.
    pub poll: Duration,
}

impl Default for DrainPolicy {
    fn default() -> Self {
        Self {
            max_wait: Duration::from_secs(30),
            tw_share: 0.5,
            poll: Duration::from_millis(100),
        }
    }
}

/// What the wait found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Drained {
    /// Time spent waiting.
    pub waited: Duration,
    /// Sockets to the target still open or closing when the wait ended.
    pub lingering: usize,
    /// Sockets to the target in TIME_WAIT when the wait ended.
    pub time_wait: usize,
    /// TIME_WAIT sockets on the whole host (sockstat).
    pub host_time_wait: u64,
    /// Ports in the ephemeral range (0 when unreadable).
    pub port_range: u32,
    /// False when `max_wait` ran out first.
    pub drained: bool,
}

impl Drained {
    /// How the wait ended, as the sweep's step line says it: `0.4s`, or
    /// `gave up after 30s (12 open)`.
    pub fn describe(&self) -> String {
        if self.drained {
            format!("{:.1}s", self.waited.as_secs_f64())
        } else {
            format!(
                "gave up after {:.0}s ({} open)",
                self.waited.as_secs_f64(),
                self.lingering
            )
        }
    }
}

/// One look at /proc: the target port's sockets, the host's TIME_WAIT count, the port range.
pub fn look(port: u16) -> Drained {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let (b4, t4) = count_port(&read("/proc/net/tcp"), port);
    let (b6, t6) = count_port(&read("/proc/net/tcp6"), port);
    Drained {
        lingering: b4 + b6,
        time_wait: t4 + t6,
        host_time_wait: parse_sockstat(&read("/proc/net/sockstat")).map_or(0, |s| s.tw),
        port_range: parse_port_range(&read("/proc/sys/net/ipv4/ip_local_port_range")).unwrap_or(0),
        ..Drained::default()
    }
}

/// Whether a look says the next step may start. `own` is the number of sockets to the
/// target that are expected to stay open (e.g. the caller's own server's listener peers).
pub fn settled(d: &Drained, policy: &DrainPolicy, own: usize) -> bool {
    let tw_limit = (f64::from(d.port_range) * policy.tw_share) as usize;
    d.lingering <= own && (d.port_range == 0 || d.time_wait < tw_limit)
}

/// Waits until no socket to `port` is open or closing and TIME_WAIT leaves enough ports, or
/// until `policy.max_wait`.
pub fn wait_drained(port: u16, policy: &DrainPolicy) -> Drained {
    let t0 = Instant::now();
    loop {
        let mut d = look(port);
        d.waited = t0.elapsed();
        if settled(&d, policy, 0) {
            d.drained = true;
            return d;
        }
        if d.waited >= policy.max_wait {
            return d;
        }
        std::thread::sleep(policy.poll);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOCKSTAT: &str = "sockets: used 187\nTCP: inuse 7 orphan 1 tw 2741 alloc 12 mem 3\n\
UDP: inuse 2 mem 1\n";

    /// Two lines per state seen from both ends on loopback: port 8080 = 0x1F90.
    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1
   1: 0100007F:1F90 0100007F:A1B2 01 00000000:00000000 00:00000000 00000000     0        0 2 1
   2: 0100007F:A1B2 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 3 1
   3: 0100007F:C000 0100007F:1F90 06 00000000:00000000 03:00000F8B 00000000     0        0 0 3
   4: 0100007F:C001 0100007F:1F90 06 00000000:00000000 03:00000F8B 00000000     0        0 0 3
   5: 0100007F:C002 0100007F:1F90 08 00000000:00000000 00:00000000 00000000     0        0 4 1
   6: 0100007F:0016 0100007F:D000 01 00000000:00000000 00:00000000 00000000     0        0 5 1
";

    #[test]
    fn sockstat_tcp_line() {
        assert_eq!(
            parse_sockstat(SOCKSTAT),
            Some(Sockstat {
                inuse: 7,
                orphan: 1,
                tw: 2741
            })
        );
    }

    #[test]
    fn sockstat_without_tcp_line() {
        assert_eq!(parse_sockstat("UDP: inuse 2 mem 1\n"), None);
    }

    macro_rules! range {
        ($name:ident, $text:expr, $want:expr) => {
            #[test]
            fn $name() {
                assert_eq!(parse_port_range($text), $want);
            }
        };
    }

    range!(port_range_default, "32768\t60999\n", Some(28232));
    range!(port_range_reversed, "60999 32768", None);
    range!(port_range_garbage, "", None);

    #[test]
    fn counts_only_the_target_port_and_skips_listen() {
        // Established both ends (2) + CLOSE_WAIT (1) are busy; two TIME_WAIT; the listener
        // and the unrelated ssh connection are not counted.
        assert_eq!(count_port(TCP, 8080), (3, 2));
        assert_eq!(count_port(TCP, 22), (1, 0));
        assert_eq!(count_port(TCP, 9), (0, 0));
    }

    #[test]
    fn time_wait_pressure_blocks_the_next_step() {
        let policy = DrainPolicy::default();
        let d = Drained {
            time_wait: 20_000,
            port_range: 28_232,
            ..Drained::default()
        };
        assert!(!settled(&d, &policy, 0));
        let d = Drained {
            time_wait: 1_000,
            ..d
        };
        assert!(settled(&d, &policy, 0));
        let d = Drained { lingering: 2, ..d };
        assert!(!settled(&d, &policy, 0));
    }
}
