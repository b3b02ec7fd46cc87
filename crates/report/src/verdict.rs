//! The run's self-check: whether the generator delivered the load it was asked for, and so
//! whether its figures describe the server. Offered against achieved rate (overall and over
//! the last 20% of the window, as zrk's `rate_ratio` and `achieved_rate_end`), the open
//! model's schedule lag, asked against reached concurrency, the client's CPU per request,
//! and one verdict with the advice that fixes it.
//!
//! Nighthawk's adaptive search accepts a step only at send-rate ≥ 0.99; oha#211 shows what a
//! starved client reports otherwise (2 s responses as 31.7 s). A run that could not measure
//! at all (never connected, nothing completed, mostly errors) is [`Verdict::Unmeasured`]:
//! `twelve bench` exits 2 on it and no SLO passes on it.
use crate::result::Errors;
use serde::Serialize;

/// Failures above this share of attempts, percent, make a run unmeasured by default: its
/// figures would mostly describe errors.
pub const DEFAULT_MAX_ERROR_PERCENT: f64 = 10.0;

/// The least achieved/offered rate of a run that delivered its load (Nighthawk's 0.99).
pub const MIN_RATE_RATIO: f64 = 0.99;

/// What a run's figures can be used for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The load was delivered and the client had room: the figures describe the server.
    Valid,
    /// The client was the bottleneck: the figures describe the client.
    ClientBound,
    /// Less load than asked reached the server (rate or concurrency short).
    UnderDelivered,
    /// The client and the server competed for the same CPUs: the figures measure the two
    /// together.
    SharedCpu,
    /// Nothing usable was measured: no connection, no response, or mostly errors.
    #[default]
    Unmeasured,
}

impl Verdict {
    /// The word the reports print.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Valid => "valid",
            Verdict::ClientBound => "client-bound",
            Verdict::UnderDelivered => "under-delivered",
            Verdict::SharedCpu => "shared-cpu",
            Verdict::Unmeasured => "unmeasured",
        }
    }

    /// Whether SLOs and comparisons may rank the run without `--allow-invalid`.
    pub fn rankable(self) -> bool {
        self == Verdict::Valid
    }
}

/// The figures the verdict is drawn from, and the verdict.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SelfCheck {
    /// The verdict.
    pub verdict: Verdict,
    /// One sentence: why this verdict (empty for a valid run).
    pub reason: String,
    /// What to change so the next run is valid (empty for a valid run).
    pub advice: String,
    /// Open model: the asked arrival rate, req/s.
    pub offered_rate_per_s: Option<f64>,
    /// Responses per second over the measured window.
    pub achieved_rate_per_s: f64,
    /// Open model: achieved over offered rate.
    pub rate_ratio: Option<f64>,
    /// Responses per second over the last 20% of a timed window.
    pub achieved_rate_end: Option<f64>,
    /// Open model: achieved over offered rate over the last 20% of a timed window.
    pub rate_ratio_end: Option<f64>,
    /// Open model: the longest a due request waited for a connection (intended start to
    /// send), µs.
    pub max_schedule_lag_us: Option<f64>,
    /// Open model: the 99th percentile of that wait, µs.
    pub p99_schedule_lag_us: Option<f64>,
    /// Connections asked for (`-c`).
    pub concurrency_asked: u64,
    /// Most connections open at once.
    pub concurrency_reached: u64,
    /// The client's CPU per response, ns.
    pub client_cpu_ns_per_request: f64,
    /// The busiest worker's busy share, 0–1.
    pub client_max_busy: f64,
}

/// What the self-check reads (gathered by [`crate::Summary`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Inputs<'a> {
    pub offered_rate_per_s: Option<f64>,
    /// The offered rate over the last 20%, when it differs (a ramp).
    pub offered_end_per_s: Option<f64>,
    pub achieved_rate_per_s: f64,
    pub achieved_rate_end: Option<f64>,
    pub schedule_lag_us: Option<(f64, f64)>,
    pub requests: u64,
    pub errors: &'a Errors,
    pub error_percent: f64,
    pub max_error_percent: f64,
    pub concurrency_asked: u64,
    pub concurrency_reached: u64,
    pub established: u64,
    pub client_cpu_ns_per_request: f64,
    pub client_max_busy: f64,
    pub client_bound: bool,
    pub embedded: bool,
    /// CPUs both a load worker and the server's threads could run on.
    pub shared_cpus: &'a [usize],
}

impl SelfCheck {
    pub(crate) fn of(i: &Inputs<'_>) -> Self {
        let rate_ratio = i.offered_rate_per_s.map(|o| i.achieved_rate_per_s / o);
        let offered_end = i.offered_end_per_s.or(i.offered_rate_per_s);
        let rate_ratio_end = i.achieved_rate_end.zip(offered_end).map(|(a, o)| a / o);
        let (verdict, reason, advice) = judge(i, rate_ratio, rate_ratio_end);
        Self {
            verdict,
            reason,
            advice,
            offered_rate_per_s: i.offered_rate_per_s,
            achieved_rate_per_s: i.achieved_rate_per_s,
            rate_ratio,
            achieved_rate_end: i.achieved_rate_end,
            rate_ratio_end,
            max_schedule_lag_us: i.schedule_lag_us.map(|l| l.0),
            p99_schedule_lag_us: i.schedule_lag_us.map(|l| l.1),
            concurrency_asked: i.concurrency_asked,
            concurrency_reached: i.concurrency_reached,
            client_cpu_ns_per_request: i.client_cpu_ns_per_request,
            client_max_busy: i.client_max_busy,
        }
    }

    /// The sentence `twelve bench` ends with when it exits 2: the reason, then the advice.
    pub fn sentence(&self) -> String {
        if self.advice.is_empty() {
            self.reason.clone()
        } else {
            format!("{}; {}", self.reason, self.advice)
        }
    }

    /// Adds the host's TIME_WAIT count to the advice of a run that ran out of local ports
    /// (the binary reads /proc; this crate reads no host state).
    pub fn note_time_wait(&mut self, errors: &Errors, host_time_wait: u64) {
        if errors.connect_no_port > 0 {
            self.advice = format!(
                "{host_time_wait} sockets in TIME_WAIT on this host now (each run leaves its \
                 closed connections there for 60 s); {}",
                self.advice
            );
        }
    }
}

/// The verdict, its reason and its advice; the first that applies of unmeasured,
/// client-bound, under-delivered.
fn judge(i: &Inputs<'_>, ratio: Option<f64>, ratio_end: Option<f64>) -> (Verdict, String, String) {
    if let Some((reason, advice)) = unmeasured(i) {
        return (Verdict::Unmeasured, reason, advice);
    }
    if !i.shared_cpus.is_empty() {
        let list: Vec<String> = i.shared_cpus.iter().map(usize::to_string).collect();
        let reason = format!(
            "the client and the server competed for CPUs (CPU {} ran load workers and could run \
             the server's threads): these figures measure the two together",
            list.join(",")
        );
        let advice = "keep them apart: the server on its own CPUs (taskset -c, or serve \
                      --cpus), the client on others (--cpus)";
        return (Verdict::SharedCpu, reason, advice.into());
    }
    if i.client_bound {
        let reason = format!(
            "the client was the bottleneck (a worker {:.0}% busy): these figures measure the \
             client, not the server",
            i.client_max_busy * 100.0
        );
        let advice = if i.embedded {
            "read the server's own figures (server CPU per request, requests per server \
             CPU-second), which hold on any machine; for req/s, give the client more CPUs \
             (--cpus) or run it on another host"
        } else {
            "give the client more CPUs (--cpus, -t) or run it on another host"
        };
        return (Verdict::ClientBound, reason, advice.into());
    }
    let short = [ratio, ratio_end]
        .into_iter()
        .flatten()
        .any(|r| r < MIN_RATE_RATIO);
    if short {
        let reason = format!(
            "the open model delivered {:.0} of {:.0} req/s asked (rate_ratio {:.3}{})",
            i.achieved_rate_per_s,
            i.offered_rate_per_s.unwrap_or(0.0),
            ratio.unwrap_or(0.0),
            ratio_end.map_or(String::new(), |r| format!(", {r:.3} over the last 20%"))
        );
        let advice = "the server is saturated at this rate, or due requests found no idle \
                      connection: lower -R, or raise -c so a late response does not hold the \
                      schedule back";
        return (Verdict::UnderDelivered, reason, advice.into());
    }
    if i.concurrency_reached < i.concurrency_asked {
        let mut reason = format!(
            "{} connections asked, at most {} open at once",
            i.concurrency_asked, i.concurrency_reached
        );
        let advice = if i.errors.connect_no_port + i.errors.connect_no_fd > 0 {
            reason += &client_limit(i.errors);
            port_advice(i.errors)
        } else {
            "the server (its backlog or connection limit) refused the rest: lower -c, or raise \
             the server's limits"
                .into()
        };
        return (Verdict::UnderDelivered, reason, advice);
    }
    (Verdict::Valid, String::new(), String::new())
}

/// Why nothing usable was measured, and the way out; `None` when something was.
fn unmeasured(i: &Inputs<'_>) -> Option<(String, String)> {
    let e = i.errors;
    let connect = e.connect_refused + e.connect_timeout + e.connect_other;
    if i.established == 0 {
        let why = if e.connect_no_port + e.connect_no_fd > 0 {
            client_limit(e).trim_start_matches(": ").to_string()
        } else if e.connect_refused > 0 {
            format!(
                "connection refused {} times: is the server listening?",
                e.connect_refused
            )
        } else if e.connect_timeout > 0 {
            format!("{} connects timed out", e.connect_timeout)
        } else {
            format!("{connect} connects failed")
        };
        let reason = format!("no connection was ever established ({why})");
        return Some((reason, port_advice(e)));
    }
    if i.requests == 0 {
        let reason = format!(
            "no request completed ({} connections established, {} failures)",
            i.established,
            e.total()
        );
        let advice = "check the URL and that the server answers it (try curl), or raise \
                      --timeout";
        return Some((reason, advice.into()));
    }
    if i.error_percent > i.max_error_percent {
        let mut reason = format!(
            "{:.1}% of requests failed, above the {}% a run may fail (--max-errors)",
            i.error_percent, i.max_error_percent
        );
        if e.connect_no_port + e.connect_no_fd > 0 {
            reason += &client_limit(e);
        }
        let advice = if e.connect_no_port > 0 {
            port_advice(e)
        } else {
            "see the error classes above; raise --max-errors if failures are what you measure"
                .into()
        };
        return Some((reason, advice));
    }
    None
}

/// `: local ports exhausted (…)` or `: out of file descriptors (…)`, the client's own limit
/// that failed connects.
fn client_limit(e: &Errors) -> String {
    if e.connect_no_port > 0 {
        format!(
            ": local ports exhausted (EADDRNOTAVAIL on {} connects)",
            e.connect_no_port
        )
    } else {
        format!(
            ": out of file descriptors (EMFILE on {} connects)",
            e.connect_no_fd
        )
    }
}

/// The way out of a client-side limit that failed connects.
fn port_advice(e: &Errors) -> String {
    if e.connect_no_port > 0 {
        "wait for TIME_WAIT sockets to expire, widen net.ipv4.ip_local_port_range, or spread \
         connections over source addresses (--source 127.0.0.2-127.0.0.40)"
            .into()
    } else if e.connect_no_fd > 0 {
        "raise the open-file limit (ulimit -n) or lower -c".into()
    } else {
        "check the URL, and that the server is up and reachable".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(errors: &Errors) -> Inputs<'_> {
        Inputs {
            offered_rate_per_s: None,
            offered_end_per_s: None,
            achieved_rate_per_s: 1000.0,
            achieved_rate_end: Some(1000.0),
            schedule_lag_us: None,
            requests: 5000,
            errors,
            error_percent: 0.0,
            max_error_percent: DEFAULT_MAX_ERROR_PERCENT,
            concurrency_asked: 64,
            concurrency_reached: 64,
            established: 64,
            client_cpu_ns_per_request: 6000.0,
            client_max_busy: 0.5,
            client_bound: false,
            embedded: false,
            shared_cpus: &[],
        }
    }

    /// Each case: the errors counted, a change to a healthy run's other inputs, the verdict,
    /// and words its sentence must hold.
    macro_rules! verdict {
        ($name:ident, |$e:ident| $errors:expr, |$i:ident| $change:expr, $verdict:expr, $says:expr) => {
            #[test]
            // A case that changes nothing writes `()`.
            #[allow(clippy::no_effect, clippy::unused_unit)]
            fn $name() {
                #[allow(unused_mut)]
                let mut $e = Errors::default();
                $errors;
                #[allow(unused_mut)]
                let mut $i = inputs(&$e);
                $change;
                let check = SelfCheck::of(&$i);
                assert_eq!(check.verdict, $verdict, "{check:?}");
                assert!(check.sentence().contains($says), "{}", check.sentence());
            }
        };
    }

    fn dead(i: &mut Inputs<'_>) {
        i.established = 0;
        i.requests = 0;
    }

    verdict!(healthy_run_is_valid, |e| (), |i| (), Verdict::Valid, "");
    // A serve with workers on every CPU: the client's worker ran on one of them.
    verdict!(
        client_and_server_on_one_cpu_competed,
        |e| (),
        |i| i.shared_cpus = &[1],
        Verdict::SharedCpu,
        "the client and the server competed for CPUs (CPU 1 ran load workers"
    );
    verdict!(
        dead_server_is_unmeasured,
        |e| e.connect_refused = 5006,
        |i| dead(&mut i),
        Verdict::Unmeasured,
        "no connection was ever established (connection refused 5006 times"
    );
    verdict!(
        port_exhaustion_is_named,
        |e| {
            e.connect_other = 9;
            e.connect_no_port = 9;
        },
        |i| dead(&mut i),
        Verdict::Unmeasured,
        "local ports exhausted (EADDRNOTAVAIL on 9 connects)); wait for TIME_WAIT"
    );
    verdict!(
        zero_responses_is_unmeasured,
        |e| (),
        |i| i.requests = 0,
        Verdict::Unmeasured,
        "no request completed"
    );
    verdict!(
        mostly_errors_is_unmeasured,
        |e| (),
        |i| i.error_percent = 40.0,
        Verdict::Unmeasured,
        "40.0% of requests failed, above the 10% a run may fail (--max-errors)"
    );
    verdict!(
        busy_client_is_client_bound,
        |e| (),
        |i| {
            i.client_bound = true;
            i.client_max_busy = 0.97;
        },
        Verdict::ClientBound,
        "a worker 97% busy"
    );
    verdict!(
        embedded_client_bound_points_at_server_figures,
        |e| (),
        |i| {
            i.client_bound = true;
            i.embedded = true;
        },
        Verdict::ClientBound,
        "server CPU per request"
    );
    verdict!(
        short_rate_is_under_delivered,
        |e| (),
        |i| i.offered_rate_per_s = Some(1250.0),
        Verdict::UnderDelivered,
        "delivered 1000 of 1250 req/s asked (rate_ratio 0.800, 0.800 over the last 20%)"
    );
    verdict!(
        falling_behind_at_the_end_is_under_delivered,
        |e| (),
        |i| {
            i.offered_rate_per_s = Some(1000.0);
            i.achieved_rate_end = Some(900.0);
        },
        Verdict::UnderDelivered,
        "rate_ratio 1.000, 0.900 over the last 20%"
    );
    verdict!(
        delivered_rate_is_valid,
        |e| (),
        |i| i.offered_rate_per_s = Some(1005.0),
        Verdict::Valid,
        ""
    );
    verdict!(
        missing_ports_are_named,
        |e| e.connect_no_port = 330,
        |i| i.concurrency_reached = 9,
        Verdict::UnderDelivered,
        "at most 9 open at once: local ports exhausted (EADDRNOTAVAIL on 330 connects); wait"
    );
    verdict!(
        missing_connections_are_under_delivered,
        |e| (),
        |i| i.concurrency_reached = 40,
        Verdict::UnderDelivered,
        "64 connections asked, at most 40 open at once"
    );

    #[test]
    fn time_wait_count_joins_port_advice() {
        let e = Errors {
            connect_no_port: 3,
            ..Errors::default()
        };
        let mut i = inputs(&e);
        i.established = 0;
        i.requests = 0;
        let mut check = SelfCheck::of(&i);
        check.note_time_wait(&e, 28_000);
        assert!(
            check
                .advice
                .starts_with("28000 sockets in TIME_WAIT on this host now"),
            "{}",
            check.advice
        );
    }
}
