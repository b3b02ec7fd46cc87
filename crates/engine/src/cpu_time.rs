//! What a server's workers have spent on the CPU, read from their threads in this process
//! (`/proc/self/task/TID/schedstat`, nanoseconds on CPU), so that a benchmark of an embedded
//! server can say what the server spent per request, even when the client is the bottleneck.
use std::time::Duration;

/// The name of the worker thread on `cpu` (set where the worker is spawned, in server.rs).
fn worker_name(cpu: usize) -> String {
    format!("twelve-w{cpu}")
}

/// The CPU time of a server's worker threads so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTime {
    /// Their time on a CPU, summed.
    pub on_cpu: Duration,
    /// How many worker threads were read.
    pub threads: usize,
}

/// The CPU time of this process's threads named as the workers on `cpus` are. A second server
/// in this process with a worker on one of the same CPUs would be counted too.
pub(crate) fn of_workers(cpus: &[usize]) -> CpuTime {
    let names: Vec<String> = cpus.iter().map(|&cpu| worker_name(cpu)).collect();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return CpuTime::default();
    };
    let mut total_ns = 0u64;
    let mut threads = 0;
    for task in tasks.flatten() {
        let dir = task.path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if !names.iter().any(|n| n == comm.trim_end()) {
            continue;
        }
        if let Some(ns) = std::fs::read_to_string(dir.join("schedstat"))
            .ok()
            .as_deref()
            .and_then(on_cpu_ns)
        {
            total_ns += ns;
            threads += 1;
        }
    }
    CpuTime {
        on_cpu: Duration::from_nanos(total_ns),
        threads,
    }
}

/// The first field of a schedstat line: time spent on the CPU, ns
/// (<https://docs.kernel.org/scheduler/sched-stats.html>).
fn on_cpu_ns(schedstat: &str) -> Option<u64> {
    schedstat.split_whitespace().next()?.parse().ok()
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
    fn worker_names_fit_in_a_comm() {
        // The kernel keeps 15 bytes of a thread's name (TASK_COMM_LEN).
        assert!(worker_name(99_999).len() <= 15);
    }
}
