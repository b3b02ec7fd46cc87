//! The embedded server's side of a run (`twelve bench` with no URL runs the server in the
//! same process): its CPU per request and requests per server CPU-second, which say
//! something true about the server even when the client is the bottleneck.
use crate::result::ServerCost;
use serde::Serialize;

/// The embedded server's figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ServerFigures {
    /// CPU the server ran on.
    pub cpu: Option<usize>,
    /// CPU time of its threads over the window, seconds.
    pub cpu_s: f64,
    /// Responses counted over the same window.
    pub requests: u64,
    /// Server CPU time per response, ns (0 when none).
    pub cpu_ns_per_request: f64,
    /// Responses per second of server CPU time (0 when it used none).
    pub requests_per_cpu_s: f64,
    /// Server CPU time over wall time, 0–1 (one thread: its share of its CPU).
    pub busy: f64,
}

impl ServerFigures {
    /// The figures of `cost`, measured on `cpu`.
    pub fn of(cost: &ServerCost, cpu: Option<usize>) -> Self {
        let cpu_s = cost.cpu.as_secs_f64();
        let per = |num: f64, den: f64| if den > 0.0 { num / den } else { 0.0 };
        Self {
            cpu,
            cpu_s,
            requests: cost.requests,
            cpu_ns_per_request: per(cost.cpu.as_nanos() as f64, cost.requests as f64),
            requests_per_cpu_s: per(cost.requests as f64, cpu_s),
            busy: per(cpu_s, cost.wall.as_secs_f64()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn per_request_and_per_cpu_second_are_inverse() {
        let s = ServerFigures::of(
            &ServerCost {
                cpu: Duration::from_millis(500),
                requests: 100_000,
                wall: Duration::from_secs(1),
            },
            Some(0),
        );
        assert_eq!(s.cpu_ns_per_request, 5_000.0);
        assert_eq!(s.requests_per_cpu_s, 200_000.0);
        assert_eq!(s.busy, 0.5);
    }

    #[test]
    fn nothing_measured_is_zero_not_nan() {
        let s = ServerFigures::of(&ServerCost::default(), None);
        assert_eq!(
            (s.cpu_ns_per_request, s.requests_per_cpu_s, s.busy),
            (0.0, 0.0, 0.0)
        );
    }
}
