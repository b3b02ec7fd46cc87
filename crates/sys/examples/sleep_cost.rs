//! What one sleep and wake-up costs the thread that sleeps: sleeps to absolute deadlines at a
//! rate, as a paced client does once per request, and prints the thread's CPU time
//! per sleep beside the lateness of its wake-ups.
//!
//! On a virtual machine the timer's programming, the halt of an idle vCPU and the switch back
//! are exits to the hypervisor, and the guest charges part of them to the thread that slept; a
//! figure here is that cost on this host, the floor under the CPU per request of any program
//! that sleeps on a timer once per request.
//!
//! Usage: `cargo run --release -p twelve-sys --example sleep_cost -- RATE SECONDS` (pin it with
//! taskset). Prints one JSON object.

use rustix::thread::{ClockId as SleepClock, clock_nanosleep_absolute};
use rustix::time::{ClockId, Timespec, clock_gettime};

fn ns(t: Timespec) -> u64 {
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

fn voluntary_switches() -> u64 {
    std::fs::read_to_string("/proc/thread-self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(rate), Some(secs)) = (
        args.get(1)
            .and_then(|a| a.parse::<u64>().ok())
            .filter(|&r| r > 0 && r <= 1_000_000),
        args.get(2)
            .and_then(|a| a.parse::<f64>().ok())
            .filter(|&s| s > 0.0 && s <= 600.0),
    ) else {
        eprintln!(
            "usage: sleep_cost RATE SECONDS (RATE 1-1000000 sleeps a second, SECONDS up to 600)"
        );
        std::process::exit(2);
    };
    // The default 50 µs of timer slack would be lateness of its own.
    let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1));
    let gap = 1_000_000_000 / rate;
    let start = ns(clock_gettime(ClockId::Monotonic));
    let end = start + (secs * 1e9) as u64;
    let cpu0 = ns(clock_gettime(ClockId::ThreadCPUTime));
    let switches0 = voluntary_switches();
    let mut late = Vec::with_capacity((secs * rate as f64) as usize + 1);
    let mut due = start;
    while due < end {
        due += gap;
        let at = Timespec {
            tv_sec: (due / 1_000_000_000) as i64,
            tv_nsec: (due % 1_000_000_000) as i64,
        };
        let _ = clock_nanosleep_absolute(SleepClock::Monotonic, &at);
        late.push(ns(clock_gettime(ClockId::Monotonic)).saturating_sub(due));
    }
    let cpu = ns(clock_gettime(ClockId::ThreadCPUTime)) - cpu0;
    let switches = voluntary_switches() - switches0;
    late.sort_unstable();
    let q = |p: f64| late[((late.len() - 1) as f64 * p) as usize] as f64 / 1e3;
    println!(
        "{{\"rate\":{rate},\"sleeps\":{},\"switches\":{switches},\"cpu_us_per_sleep\":{:.2},\"cpu_us_per_switch\":{:.2},\"late_p50_us\":{:.1},\"late_p99_us\":{:.1},\"late_max_us\":{:.1}}}",
        late.len(),
        cpu as f64 / 1e3 / late.len() as f64,
        cpu as f64 / 1e3 / switches.max(1) as f64,
        q(0.5),
        q(0.99),
        q(1.0),
    );
}
