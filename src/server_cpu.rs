//! The embedded server's own CPU time, read from its worker threads in this process
//! (`/proc/self/task/TID/schedstat`, nanoseconds on CPU), so a run without a URL can say what
//! the server spent per request on any machine, even when the client is the bottleneck.
use std::time::Duration;

/// The name prefix of twelve-engine's worker threads (`twelve-w{cpu}`, set in
/// crates/engine/src/server.rs); the load workers are `twelve-load-N` and do not match.
const SERVER_THREAD: &str = "twelve-w";

/// The server threads' CPU time so far, summed, and how many threads it found.
pub fn server_threads_cpu() -> (Duration, usize) {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return (Duration::ZERO, 0);
    };
    let mut total = 0u64;
    let mut threads = 0;
    for task in tasks.flatten() {
        let dir = task.path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if !comm.starts_with(SERVER_THREAD) {
            continue;
        }
        if let Some(ns) = std::fs::read_to_string(dir.join("schedstat"))
            .ok()
            .as_deref()
            .and_then(on_cpu_ns)
        {
            total += ns;
            threads += 1;
        }
    }
    (Duration::from_nanos(total), threads)
}

/// The first field of a schedstat line: time spent on the CPU, ns (sched-stats.rst).
fn on_cpu_ns(schedstat: &str) -> Option<u64> {
    schedstat.split_whitespace().next()?.parse().ok()
}

/// Readings at the start and the end of the measured window.
#[derive(Debug, Default)]
pub struct Window {
    start: Option<(Duration, u64, Duration)>,
    end: Option<(Duration, u64, Duration)>,
}

impl Window {
    /// Takes a reading: at the first sample of the measured window, and at the run's end.
    pub fn sample(&mut self, measuring: bool, finished: bool, requests: u64, elapsed: Duration) {
        if !measuring {
            return;
        }
        let reading = (server_threads_cpu().0, requests, elapsed);
        if self.start.is_none() {
            self.start = Some(reading);
        }
        if finished {
            self.end = Some(reading);
        }
    }

    /// The server's CPU time, responses and wall time between the two readings.
    pub fn cost(&self) -> Option<twelve_report::ServerCost> {
        let ((cpu0, req0, t0), (cpu1, req1, t1)) = (self.start?, self.end?);
        Some(twelve_report::ServerCost {
            cpu: cpu1.saturating_sub(cpu0),
            requests: req1.saturating_sub(req0),
            wall: t1.saturating_sub(t0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_gives_ns_on_cpu() {
        assert_eq!(on_cpu_ns("123456789 2000 17\n"), Some(123_456_789));
        assert_eq!(on_cpu_ns(""), None);
    }

    #[test]
    fn finds_the_embedded_servers_thread_and_its_time() {
        let (server, _) = crate::load_args::Embedded::start(Some(0), &[]).unwrap();
        let (cpu, threads) = server_threads_cpu();
        server.stop();
        assert_eq!(threads, 1, "one worker thread named {SERVER_THREAD}*");
        // Setting up its listener and ring took it some time on the CPU.
        assert!(cpu > Duration::ZERO);
    }

    #[test]
    fn window_needs_both_readings() {
        let mut w = Window::default();
        w.sample(false, false, 10, Duration::from_secs(1));
        assert!(w.cost().is_none());
        w.sample(true, false, 100, Duration::from_secs(1));
        assert!(w.cost().is_none());
        w.sample(true, true, 1100, Duration::from_secs(3));
        let cost = w.cost().unwrap();
        assert_eq!((cost.requests, cost.wall), (1000, Duration::from_secs(2)));
    }
}
