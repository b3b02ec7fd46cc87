//! `twelve bench`: command-line flags and the glue to twelve-load (the generator) and
//! twelve-report (the writers); with no URL, it starts twelve's own server in-process first.
use crate::load_args::{CpuPlan, Embedded, LoadArgs};
use crate::shard::ShardArgs;
use anyhow::Context;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;
use twelve_load::{Config, parse_duration, parse_rate};
use twelve_report::raw::RawRun;
use twelve_report::{IntervalLog, JsonReport, Slo, Summary};

/// Flags of `twelve bench` (boxed: the flag set is large, and `Command` should stay small).
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    flags: Box<Flags>,
}

/// The flags themselves.
#[derive(clap::Args, Debug)]
struct Flags {
    /// Target URLs (http://host:port/path), taken in turn. None: start twelve's own server
    /// in this process on a free 127.0.0.1 port, pinned to one CPU, and load its /json.
    #[arg(value_name = "URL")]
    urls: Vec<String>,
    // First, so the help's groups come in the order connection, load model, requests, TLS.
    #[command(flatten)]
    load: LoadArgs,
    /// Targets from FILE in vegeta's format (METHOD URL, header lines, @body-file; blocks
    /// apart by blank lines), taken in turn, instead of URLs.
    #[arg(
        help_heading = "Requests",
        long,
        value_name = "FILE",
        conflicts_with = "urls"
    )]
    targets: Option<std::path::PathBuf>,
    /// Stop after this many requests instead of a duration (10k, 1M).
    #[arg(
        help_heading = "Load model",
        short = 'n',
        long,
        value_name = "N",
        conflicts_with = "duration",
        allow_hyphen_values = true
    )]
    requests: Option<String>,
    /// Open model: requests per second from one global schedule, each due request taken by
    /// any idle connection; latency is also recorded from the intended start. A ramp:
    /// FROM:TO rises linearly over -d; FROM:TO:STEP holds each rate for -d (10k:100k:10k).
    #[arg(
        help_heading = "Load model",
        short = 'R',
        long,
        value_name = "RATE",
        allow_hyphen_values = true
    )]
    rate: Option<String>,
    /// Print the report as JSON (schema: crates/report/schema/bench-report.schema.json).
    #[arg(help_heading = "Output", long)]
    json: bool,
    /// Write HdrHistogram interval logs (V2 compressed) to FILE.
    #[arg(help_heading = "Output", long, value_name = "FILE")]
    hdr_log: Option<std::path::PathBuf>,
    /// Write the corrected latency's percentile distribution (HdrHistogram .hgrm, values in
    /// ms, as wrk2's detailed spectrum) to FILE.
    #[arg(help_heading = "Output", long, value_name = "FILE")]
    hgrm: Option<std::path::PathBuf>,
    /// Interval of --hdr-log and --timeseries (intervals end on wall-clock multiples of it).
    #[arg(
        help_heading = "Output",
        long,
        value_name = "DUR",
        default_value = "1s"
    )]
    hdr_interval: String,
    /// A threshold that decides the exit code (repeatable): 'p99<2ms', 'errors<0.1%',
    /// 'rps>=10000', 'mean<1ms'. Any failed: exit 1.
    #[arg(help_heading = "Output", long, value_name = "EXPR")]
    slo: Vec<String>,
    #[command(flatten)]
    shard: ShardArgs,
    #[command(flatten)]
    flame: crate::flame::BenchFlame,
    /// Write per-interval histograms (NDJSON, one line per --hdr-interval, on wall-clock
    /// multiples of it, tagged with the shard) to FILE; `twelve merge` adds them up.
    #[arg(help_heading = "Output", long, value_name = "FILE")]
    timeseries: Option<std::path::PathBuf>,
    /// Failures above this share of attempts make the run unmeasured (exit 2): 10%, 0.5%.
    #[arg(
        help_heading = "Output",
        long,
        value_name = "PCT",
        default_value = "10%"
    )]
    max_errors: String,
    /// Judge SLOs even when the self-check finds the run client-bound or under-delivered
    /// (a run that measured nothing is never judged).
    #[arg(help_heading = "Output", long)]
    allow_invalid: bool,
}

/// Runs `twelve bench`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let args = *args.flags;
    let slos = args
        .slo
        .iter()
        .map(|s| Slo::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    if args.shard.k8s_manifest {
        return print_manifest(&args);
    }
    let max_errors = crate::outcome::parse_percent("--max-errors", &args.max_errors)?;
    args.load.check_online()?;
    if let Some(path) = &args.load.unix_socket
        && args.urls.is_empty()
        && args.targets.is_none()
    {
        anyhow::bail!(
            "--unix-socket {}: needs a URL too (it gives the Host header and the path), e.g. \
             http://localhost/json",
            path.display()
        );
    }
    let plan = plan_cpus(&args)?;
    // Every flag is checked before any load starts (the URL is resolved by `config`).
    // (The URLs' scheme is kept: --h2 and --h2c are checked against it.)
    let scheme = match args.urls.first() {
        Some(u) if u.starts_with("https://") => "https",
        _ => "http",
    };
    config(&args, &[format!("{scheme}://127.0.0.1:9/")])?.validate()?;
    crate::limits::check_connections(args.load.connections, plan.server.is_some())?;
    let (server, urls) = Embedded::start(plan.server, &args.urls)?;
    let mut config = config(&args, &urls)?;
    config.worker_cpus = plan.workers;
    let mut window = Window::default();
    let mut flame = None;
    // A loopback target's process, read before the load so that only its threads' work
    // during the run decides where it ran.
    let listener = (plan.server.is_none() && config.unix_socket.is_none())
        .then(|| crate::server_cpus::before(config.targets[0].addr))
        .flatten();
    let outcome = args.shard.wait_for_start(&config).and_then(|()| {
        // Sampled over the measured window only: from the go time of a sharded run on.
        let mut profile =
            crate::flame::BenchProfile::start(&args.flame, plan.server, config.warmup);
        let outcome = run_load(&config, &server, &mut window);
        profile.stop();
        flame = Some(profile);
        outcome
    });
    server.stop();
    let mut outcome = outcome?;
    if plan.server.is_some() {
        outcome.result.server = window.cost();
    }
    outcome.result.info.server_cpu = plan.server;
    outcome.result.info.server_cpus = match (plan.server, &listener) {
        (Some(cpu), _) => vec![cpu],
        (None, Some(l)) => l.working_cpus(),
        (None, None) => Vec::new(),
    };
    outcome.result.info.max_error_percent = Some(max_errors);
    let summary = write_outputs(&args, outcome, &slos, flame.as_ref())?;
    Ok(crate::outcome::exit_code(
        "twelve bench",
        &summary,
        args.allow_invalid,
        args.json,
    ))
}

/// `--k8s-manifest`: the Indexed Job running this command line, on stdout.
fn print_manifest(args: &Flags) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        !args.urls.is_empty(),
        "--k8s-manifest: give the server's URL (pods have no embedded server to load)"
    );
    let shards = args.shard.shards.unwrap_or(1);
    let argv: Vec<String> = std::env::args()
        .skip_while(|a| a != "bench")
        .skip(1)
        .collect();
    let pod_args = crate::shard::pod_args(&argv, &args.shard.k8s_name);
    let yaml = twelve_load::shard::k8s::manifest(
        &args.shard.k8s_name,
        &args.shard.k8s_image,
        shards,
        &pod_args,
    );
    std::io::stdout().lock().write_all(yaml.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// The embedded server's CPU (when there is no URL) and each worker's CPU.
fn plan_cpus(args: &Flags) -> anyhow::Result<CpuPlan> {
    args.load
        .cpus(args.urls.is_empty() && args.targets.is_none())
}

/// Runs the generator with the live view (a redrawn line on a terminal, a plain line a
/// second otherwise; sampled by the main thread from the workers' atomics, so the measuring
/// threads pay nothing for it but one counter per response) and Ctrl-C ending the run early
/// with a full report (as wrk does). `window` takes the embedded server's CPU readings.
fn run_load(
    config: &Config,
    server: &Embedded,
    window: &mut Window,
) -> anyhow::Result<twelve_load::Outcome> {
    let mut live =
        crate::live::Live::new(std::io::stderr().is_terminal(), config.stop, config.warmup);
    let interrupt = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGINT, interrupt.clone())
        .context("installing the SIGINT handler")?;
    let outcome = twelve_load::run_until(config, &interrupt, |p| {
        window.sample(p.measuring, p.finished, p.requests, p.elapsed, || {
            server.cpu_time()
        });
        live.show(p);
    });
    Ok(outcome?)
}

/// The embedded server's CPU time, responses and wall time at the start and the end of the
/// measured window.
#[derive(Debug, Default)]
struct Window {
    start: Option<(Duration, u64, Duration)>,
    end: Option<(Duration, u64, Duration)>,
}

impl Window {
    /// Takes a reading (the server's CPU time from `cpu`): at the first sample of the
    /// measured window, and at the run's end.
    fn sample(
        &mut self,
        measuring: bool,
        finished: bool,
        requests: u64,
        elapsed: Duration,
        cpu: impl FnOnce() -> Duration,
    ) {
        if !measuring {
            return;
        }
        let reading = (cpu(), requests, elapsed);
        if self.start.is_none() {
            self.start = Some(reading);
        }
        if finished {
            self.end = Some(reading);
        }
    }

    /// The server's CPU time, responses and wall time between the two readings.
    fn cost(&self) -> Option<twelve_report::ServerCost> {
        let ((cpu0, req0, t0), (cpu1, req1, t1)) = (self.start?, self.end?);
        Some(twelve_report::ServerCost {
            cpu: cpu1.saturating_sub(cpu0),
            requests: req1.saturating_sub(req0),
            wall: t1.saturating_sub(t0),
        })
    }
}

/// Summarises the run once, writes the HdrHistogram log, the `.hgrm`, the flame graph and the
/// text or JSON report from that summary; returns the summary.
fn write_outputs(
    args: &Flags,
    mut outcome: twelve_load::Outcome,
    slos: &[Slo],
    flame: Option<&crate::flame::BenchProfile>,
) -> anyhow::Result<Summary> {
    let version = env!("CARGO_PKG_VERSION");
    let mut summary = Summary::new(&outcome.result, slos);
    if summary.errors.connect_no_port > 0 {
        let host_time_wait = twelve_sweep::drain::look(0).host_time_wait;
        let errors = summary.errors.clone();
        summary.check.note_time_wait(&errors, host_time_wait);
    }
    let mut report = JsonReport::of(&summary, version);
    // Every run carries the host's state; a zero steal window reads the counters since boot
    // instead of sleeping after the run.
    report.doctor =
        serde_json::to_value(twelve_doctor::host_summary(std::time::Duration::ZERO)).ok();
    let start_unix_ns = outcome
        .start
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as u64;
    report.raw = Some(RawRun::of(&outcome.result, start_unix_ns));
    if let Some(path) = &args.timeseries {
        crate::shard::write_timeseries(path, &outcome, &args.hdr_interval)?;
    }
    if let Some(path) = &args.hdr_log {
        let file =
            std::fs::File::create(path).with_context(|| format!("--hdr-log {}", path.display()))?;
        let mut log = IntervalLog::new(std::io::BufWriter::new(file), outcome.start);
        for interval in std::mem::take(&mut outcome.intervals) {
            log.push(interval);
        }
        log.finish()
            .with_context(|| format!("--hdr-log {}", path.display()))?;
    }
    if let Some(path) = &args.hgrm {
        let file =
            std::fs::File::create(path).with_context(|| format!("--hgrm {}", path.display()))?;
        twelve_report::hgrm::write_hgrm(&summary.latency.corrected, std::io::BufWriter::new(file))
            .with_context(|| format!("--hgrm {}", path.display()))?;
    }
    if let Some(flame) = flame {
        flame.write(&summary)?;
    }
    let mut out = std::io::stdout().lock();
    // A dead target: its one sentence (outcome::exit_code) says all there is.
    let dead = summary.check.verdict == twelve_report::Verdict::Unmeasured
        && summary.conns.established == 0;
    if args.json {
        writeln!(out, "{}", report.to_json())?;
        // The text report carries these warnings itself; JSON readers may not look.
        let c = &report.connections;
        if !c.reached && !dead {
            eprintln!(
                "twelve bench: WARNING: concurrency not reached: {} connections requested, at \
                 most {} open at once",
                c.requested, c.peak_open
            );
        }
    } else if !dead {
        write!(out, "{}", twelve_report::text::render(&summary))?;
    }
    Ok(summary)
}

/// The run configuration: the shared load flags, then -R and --hdr-interval.
fn config(args: &Flags, urls: &[String]) -> anyhow::Result<Config> {
    let requests = args.requests.as_deref();
    let mut c = match &args.targets {
        // The targets' schemes decide TLS and check --h2/--h2c, as URLs' do.
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--targets {}", path.display()))?;
            let to = args.load.connect_addr()?;
            let targets = twelve_load::parse_targets_to(&text, to, |p| std::fs::read(p))?;
            args.load.config_of(targets, requests)?
        }
        None => args.load.config(urls, requests)?,
    };
    if let Some(rate) = &args.rate {
        match twelve_load::Ramp::parse(rate)? {
            // A ramp: -d is each step's duration (a linear ramp's whole), the run is them all.
            Some(ramp) => {
                c.model = args.load.open(ramp.from_per_s);
                c.ramp = Some(ramp);
                if let twelve_load::Stop::Duration(per_step) = c.stop {
                    c.stop = twelve_load::Stop::Duration(ramp.window(per_step));
                }
            }
            None => c.model = args.load.open(parse_rate(rate).context("-R/--rate")?),
        }
    }
    if args.hdr_log.is_some() || args.timeseries.is_some() {
        c.hdr_interval = Some(parse_duration(&args.hdr_interval).context("--hdr-interval")?);
    }
    c.shard = args.shard.shard()?;
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use twelve_load::{Arrival, Model, Stop};

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn config_of(argv: &[&str]) -> anyhow::Result<Config> {
        let argv = std::iter::once("bench").chain(argv.iter().copied());
        let flags = *Cli::try_parse_from(argv)?.args.flags;
        config(&flags, &["http://127.0.0.1:9/json".to_string()])
    }

    macro_rules! flags {
        ($name:ident, $argv:expr, |$c:ident| $check:expr) => {
            #[test]
            fn $name() {
                let $c = config_of(&$argv).unwrap();
                assert!($check, "{:?}", $c);
            }
        };
    }

    flags!(defaults_are_a_short_closed_run, [], |c| c.connections == 64
        && c.stop == Stop::Duration(Duration::from_secs(5))
        && c.warmup == Duration::from_secs(1)
        && c.model == Model::Closed
        && c.keep_alive
        && c.pipeline == 1);
    flags!(count_run_has_no_warmup, ["-n", "10k"], |c| c.stop
        == Stop::Requests(10_000)
        && c.warmup.is_zero());
    flags!(close_drops_keep_alive, ["--close"], |c| !c.keep_alive);
    flags!(
        rate_selects_open_model,
        ["-R", "2k", "--arrival", "poisson"],
        |c| matches!(
            c.model,
            Model::Open {
                arrival: Arrival::Poisson,
                ..
            }
        ) && c.model != Model::Closed
    );
    flags!(
        linear_ramp_spans_the_duration,
        ["-R", "1k:9k", "-d", "4s"],
        |c| c.ramp.is_some() && c.stop == Stop::Duration(Duration::from_secs(4))
    );
    flags!(
        stepped_ramp_runs_each_step_for_the_duration,
        ["-R", "1k:3k:1k", "-d", "2s"],
        |c| c.stop == Stop::Duration(Duration::from_secs(6))
    );
    flags!(headers_repeat, ["-H", "A: 1", "-H", "B: 2"], |c| c
        .headers
        .len()
        == 2);
    flags!(body_and_method, ["-m", "post", "-b", "x=1"], |c| c.method
        == "POST"
        && c.body == b"x=1");
    flags!(hdr_log_sets_interval, ["--hdr-log", "/tmp/x.hlog"], |c| c
        .hdr_interval
        == Some(Duration::from_secs(1)));

    fn cpus_of(argv: &[&str]) -> (Option<usize>, Vec<Option<usize>>) {
        let argv = std::iter::once("bench").chain(argv.iter().copied());
        let plan = plan_cpus(&Cli::try_parse_from(argv).unwrap().args.flags).unwrap();
        (plan.server, plan.workers)
    }

    #[test]
    fn embedded_server_takes_the_first_cpu() {
        assert_eq!(
            cpus_of(&["--cpus", "0-3"]),
            (Some(0), vec![Some(1), Some(2), Some(3)])
        );
    }

    #[test]
    fn a_url_leaves_every_cpu_to_workers() {
        let (server, workers) = cpus_of(&["--cpus", "2,5", "http://127.0.0.1:9/"]);
        assert_eq!((server, workers), (None, vec![Some(2), Some(5)]));
    }

    #[test]
    fn one_cpu_is_shared_with_the_server() {
        assert_eq!(cpus_of(&["--cpus", "3"]), (Some(3), vec![Some(3)]));
    }

    #[test]
    fn more_threads_than_cpus_take_them_in_turn() {
        let (_, workers) = cpus_of(&["--cpus", "0-2", "-t", "4"]);
        assert_eq!(workers, vec![Some(1), Some(2), Some(1), Some(2)]);
    }

    flags!(count_takes_suffixes_exactly, ["-n", "1.5k"], |c| c.stop
        == Stop::Requests(1500));

    /// A fractional count is refused, not truncated (`-n 2.5` is not 2 requests).
    #[test]
    fn count_refuses_a_fraction() {
        let err = config_of(&["-n", "2.5"]).unwrap_err();
        assert!(format!("{err:#}").contains("-n/--requests"), "{err:#}");
    }

    #[test]
    fn duration_and_count_conflict() {
        assert!(config_of(&["-d", "1s", "-n", "5"]).is_err());
    }

    #[test]
    fn bad_duration_names_the_flag() {
        let err = config_of(&["-d", "soon"]).unwrap_err();
        assert!(format!("{err:#}").contains("-d/--duration"), "{err:#}");
    }

    #[test]
    fn window_needs_both_readings() {
        let cpu = || Duration::from_millis(5);
        let mut w = Window::default();
        w.sample(false, false, 10, Duration::from_secs(1), cpu);
        assert!(w.cost().is_none());
        w.sample(true, false, 100, Duration::from_secs(1), cpu);
        assert!(w.cost().is_none());
        w.sample(true, true, 1100, Duration::from_secs(3), cpu);
        let cost = w.cost().unwrap();
        assert_eq!((cost.requests, cost.wall), (1000, Duration::from_secs(2)));
    }
}
