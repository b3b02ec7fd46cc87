//! A process's anonymous resident memory, for the suites that measure what a connection or a
//! waiting request costs the server.

/// `RssAnon` of process `pid` in bytes (heap and stacks, not file-backed pages), from
/// `/proc/PID/status`.
///
/// # Panics
/// When the file cannot be read or has no `RssAnon` line: a measuring test cannot go on.
pub fn rss_anon(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("RssAnon:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb * 1024
}
