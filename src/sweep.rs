//! `twelve sweep`: one bench run per step of a concurrency or rate plan (ab+.sh built in), or
//! the knee search for the highest rate that meets every SLO; writes the CSV, the JSON, SVG
//! plots and the HTML report.
use anyhow::{Context, bail};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use twelve_load::sweep::driver::{run_knee, run_sweep};
use twelve_load::sweep::{DrainPolicy, Drained, KneeResult, KneeSearch, parse_plan};
use twelve_load::{Arrival, Config, Model, Stop, Target, parse_duration, parse_rate};
use twelve_report::Slo;
use twelve_report::visual::doc::Knee;
use twelve_report::visual::{HtmlPage, LoadKind, Step, StepRow, SweepDoc, plot, write_csv};
use twelve_sys::CpuList;

/// The bench settings a sweep or comparison shares with `twelve bench` (same names and
/// defaults, less what a sweep varies).
#[derive(clap::Args, Debug, Clone)]
pub struct LoadArgs {
    /// Connections (for --rate steps and the knee search; a --concurrency plan sets its own).
    #[arg(short = 'c', long, value_name = "N", default_value_t = 64)]
    pub connections: usize,
    /// Worker threads (default: one per CPU of --cpus, less the embedded server's).
    #[arg(short = 't', long, value_name = "N")]
    pub threads: Option<usize>,
    /// CPUs to pin workers (and the embedded server) to, kernel list syntax (0-3,8).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// CPU of the embedded server (default: the first of --cpus).
    #[arg(long, value_name = "CPU")]
    pub server_cpu: Option<usize>,
    /// Measured duration of each run (after its own --warmup).
    #[arg(short = 'd', long, value_name = "DUR", default_value = "5s")]
    pub duration: String,
    /// Warm-up before each run, excluded from every statistic.
    #[arg(long, value_name = "DUR", default_value = "1s")]
    pub warmup: String,
    /// Arrival process of the open model.
    #[arg(long, value_name = "KIND", default_value = "uniform", value_parser = ["uniform", "poisson"])]
    pub arrival: String,
    /// Seed of the Poisson arrivals.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Requests in flight per connection.
    #[arg(short = 'p', long, value_name = "DEPTH", default_value_t = 1)]
    pub pipeline: usize,
    /// A new connection per request (sends Connection: close), as ab without -k.
    #[arg(long)]
    pub close: bool,
    /// Reopen each connection after N requests.
    #[arg(long, value_name = "N")]
    pub requests_per_conn: Option<u64>,
    /// HTTP method.
    #[arg(short = 'm', long, value_name = "METHOD", default_value = "GET")]
    pub method: String,
    /// Extra header line "Name: value" (repeatable).
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,
    /// Request body.
    #[arg(short = 'b', long, value_name = "BODY", conflicts_with = "body_file")]
    pub body: Option<String>,
    /// Request body read from a file.
    #[arg(long, value_name = "FILE")]
    pub body_file: Option<PathBuf>,
    /// Per-request timeout (counted, the connection reopened).
    #[arg(long, value_name = "DUR", default_value = "2s")]
    pub timeout: String,
    /// Connect timeout.
    #[arg(long, value_name = "DUR", default_value = "2s")]
    pub connect_timeout: String,
    /// Between runs, wait at most this long for the last run's connections to drain.
    #[arg(long, value_name = "DUR", default_value = "30s")]
    pub drain_timeout: String,
}

impl LoadArgs {
    /// The run configuration against `urls` (closed model; callers set the model and CPUs).
    pub fn config(&self, urls: &[String]) -> anyhow::Result<Config> {
        let targets = urls
            .iter()
            .map(|u| Target::parse(u))
            .collect::<Result<Vec<_>, _>>()?;
        let mut c = Config::new(targets);
        c.connections = self.connections;
        c.method = self.method.to_ascii_uppercase();
        c.headers = self.headers.clone();
        c.body = match (&self.body, &self.body_file) {
            (Some(b), _) => b.clone().into_bytes(),
            (None, Some(p)) => {
                std::fs::read(p).with_context(|| format!("--body-file {}", p.display()))?
            }
            (None, None) => Vec::new(),
        };
        c.pipeline = self.pipeline;
        c.keep_alive = !self.close;
        c.requests_per_conn = self.requests_per_conn;
        c.stop = Stop::Duration(parse_duration(&self.duration).context("-d/--duration")?);
        c.warmup = parse_duration(&self.warmup).context("--warmup")?;
        c.timeout = parse_duration(&self.timeout).context("--timeout")?;
        c.connect_timeout = parse_duration(&self.connect_timeout).context("--connect-timeout")?;
        Ok(c)
    }

    /// The open model at `rate_per_s` with these arrival settings.
    pub fn open(&self, rate_per_s: f64) -> Model {
        Model::Open {
            rate_per_s,
            arrival: if self.arrival == "poisson" {
                Arrival::Poisson
            } else {
                Arrival::Uniform
            },
            seed: self.seed,
        }
    }

    /// The drain policy between runs.
    pub fn drain(&self) -> anyhow::Result<DrainPolicy> {
        Ok(DrainPolicy {
            max_wait: parse_duration(&self.drain_timeout).context("--drain-timeout")?,
            ..DrainPolicy::default()
        })
    }

    /// (worker CPUs, embedded server CPU when `embedded`), as `twelve bench` picks them.
    pub fn cpus(&self, embedded: bool) -> anyhow::Result<(Vec<Option<usize>>, Option<usize>)> {
        let cpus = match &self.cpus {
            Some(text) => CpuList::parse(text).with_context(|| format!("--cpus {text}"))?,
            None => twelve_sys::cpus::online(),
        };
        if cpus.is_empty() {
            bail!("--cpus: no CPU to run on");
        }
        let server = embedded.then(|| self.server_cpu.unwrap_or(cpus.as_slice()[0]));
        let mut pool: Vec<usize> = cpus
            .as_slice()
            .iter()
            .copied()
            .filter(|c| Some(*c) != server)
            .collect();
        if pool.is_empty() {
            pool = cpus.as_slice().to_vec();
        }
        let threads = self.threads.unwrap_or(pool.len());
        if threads == 0 {
            bail!("--threads 0: need at least one worker");
        }
        Ok((
            (0..threads).map(|i| Some(pool[i % pool.len()])).collect(),
            server,
        ))
    }
}

/// Flags of `twelve sweep`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Target URLs (http://host:port/path), taken in turn. None: start twelve's own server
    /// in this process on a free 127.0.0.1 port, pinned to one CPU, and load its /json.
    #[arg(value_name = "URL")]
    urls: Vec<String>,
    /// Closed-model steps: connections per step, LOW..HIGH:STEP, LOW..HIGH*FACTOR or a list.
    #[arg(long, value_name = "PLAN", conflicts_with_all = ["rate", "find_max_rate"])]
    concurrency: Option<String>,
    /// Open-model steps in req/s (10k..100k:10k); with --find-max-rate the bounds LOW..HIGH.
    #[arg(short = 'R', long, value_name = "PLAN")]
    rate: Option<String>,
    /// Bisect open-model runs for the highest rate that meets every --slo.
    #[arg(long, requires = "slo")]
    find_max_rate: bool,
    /// A threshold each step is judged against (repeatable): 'p99<2ms', 'errors<0.1%'.
    #[arg(long, value_name = "EXPR")]
    slo: Vec<String>,
    /// Knee search: stop when the bracket (fail − pass) / fail is at most this.
    #[arg(long, value_name = "SHARE", default_value_t = 0.05)]
    tolerance: f64,
    /// Knee search: at most this many runs.
    #[arg(long, value_name = "N", default_value_t = 12)]
    max_probes: usize,
    /// Write one CSV row per step to FILE.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Write every step's full report as JSON to FILE (schema twelve-sweep-report/1).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write SVG plots into DIR (created if missing).
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Write a self-contained HTML report to FILE.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Leave the doctor's host summary out of the JSON and HTML.
    #[arg(long)]
    no_doctor: bool,
    #[command(flatten)]
    load: LoadArgs,
}

/// Runs `twelve sweep`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let slos = args
        .slo
        .iter()
        .map(|s| Slo::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    let embedded = args.urls.is_empty();
    let (worker_cpus, server_cpu) = args.load.cpus(embedded)?;
    let server = server_cpu.map(start_server).transpose()?;
    let urls = match &server {
        Some(h) => vec![format!("http://{}/json", h.local_addrs()[0])],
        None => args.urls.clone(),
    };
    let mut base = args.load.config(&urls)?;
    base.worker_cpus = worker_cpus;
    let drain = args.load.drain()?;
    let result = measure(&args, &mut base, &slos, &drain);
    if let Some(h) = server {
        h.shutdown();
        h.join();
    }
    let (kind, mode, steps, knee) = result?;
    write_outputs(&args, &base, &urls, kind, mode, &steps, knee.as_ref())?;
    Ok(match (&knee, mode) {
        (Some(k), _) if k.max_rate.is_none() => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    })
}

type Measured = (LoadKind, &'static str, Vec<Step>, Option<KneeResult>);

/// Runs the plan or the knee search, printing a line per step.
fn measure(
    args: &Args,
    base: &mut Config,
    slos: &[Slo],
    drain: &DrainPolicy,
) -> anyhow::Result<Measured> {
    let mut out = std::io::stdout().lock();
    let (kind, label) = if args.concurrency.is_some() {
        (LoadKind::Concurrency, "conns")
    } else {
        (LoadKind::Rate, "rate")
    };
    writeln!(
        out,
        "{:>3} {label:>9} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>5} {:>5}  drain",
        "#", "req/s", "p50 µs", "p99 µs", "p99.9 µs", "max µs", "errors", "busy", "slo"
    )?;
    let mut n = 0;
    let mut each = |s: &Step, d: &Drained| {
        n += 1;
        let r = StepRow::of(s);
        let slo = match (s.slo.is_empty(), s.passed()) {
            (true, _) => "-",
            (false, true) => "pass",
            (false, false) => "FAIL",
        };
        // A step whose client worker was ≥ 90% busy measured the client, not the server.
        let bound = if s.run.client_bound() {
            "  CLIENT-BOUND"
        } else {
            ""
        };
        let drain = if d.drained {
            format!("{:.1}s", d.waited.as_secs_f64())
        } else {
            format!(
                "gave up after {:.0}s ({} open)",
                d.waited.as_secs_f64(),
                d.lingering
            )
        };
        let _ = writeln!(
            out,
            "{n:>3} {:>9} {:>10.0} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>8} {:>4.0}% {:>5}  {drain}{bound}",
            plot::fmt_si(s.load),
            r.rps,
            r.p50_us,
            r.p99_us,
            r.p999_us,
            r.max_us,
            r.failed,
            r.client_busy * 100.0,
            slo
        );
    };
    if args.find_max_rate {
        let bounds = args
            .rate
            .as_deref()
            .context("--find-max-rate needs --rate LOW..HIGH")?;
        let (low, high) = parse_bounds(bounds)?;
        base.model = args.load.open(low);
        let search = KneeSearch {
            low,
            high,
            tolerance: args.tolerance,
            max_probes: args.max_probes,
        };
        let (steps, knee) = run_knee(base, &search, slos, drain, &mut each)?;
        writeln!(out, "{}", knee_sentence(&knee))?;
        return Ok((LoadKind::Rate, "find-max-rate", steps, Some(knee)));
    }
    let plan_text = match (&args.concurrency, &args.rate) {
        (Some(p), _) | (None, Some(p)) => p,
        (None, None) => bail!("give --concurrency PLAN, --rate PLAN or --find-max-rate"),
    };
    let plan = parse_plan(plan_text)?;
    if kind == LoadKind::Rate {
        base.model = args.load.open(plan[0]);
    }
    let steps = run_sweep(base, kind, &plan, slos, drain, &mut each)?;
    Ok((kind, "sweep", steps, None))
}

/// `LOW..HIGH` (a `:STEP` or `*FACTOR` suffix is ignored) for the knee search.
fn parse_bounds(text: &str) -> anyhow::Result<(f64, f64)> {
    let (low, rest) = text
        .split_once("..")
        .with_context(|| format!("--rate {text}: the knee search needs LOW..HIGH"))?;
    let high = rest.split([':', '*']).next().unwrap_or(rest);
    let (low, high) = (
        parse_rate(low).context("--rate LOW")?,
        parse_rate(high).context("--rate HIGH")?,
    );
    if !(low > 0.0 && high > low) {
        bail!("--rate {text}: need 0 < LOW < HIGH");
    }
    Ok((low, high))
}

fn knee_sentence(k: &KneeResult) -> String {
    match (k.max_rate, k.above_range) {
        (None, _) => "knee: even the lowest rate failed an SLO".to_string(),
        (Some(r), true) => format!(
            "knee: above the range: the highest rate tried, {} req/s, met every SLO",
            plot::fmt_si(r)
        ),
        (Some(r), false) => format!(
            "knee: {} req/s met every SLO (run {}); {} req/s did not (run {}); {:.1}% bracket \
             after {} runs",
            plot::fmt_si(r),
            k.pass_probe.map_or(0, |i| i + 1),
            plot::fmt_si(k.probes[k.fail_probe.unwrap_or(0)].rate),
            k.fail_probe.map_or(0, |i| i + 1),
            k.bracket * 100.0,
            k.probes.len()
        ),
    }
}

/// The settings shown in the JSON and HTML.
fn settings(args: &Args, base: &Config, urls: &[String]) -> Vec<(String, String)> {
    let mut s = vec![
        (
            "command".to_string(),
            std::env::args().collect::<Vec<_>>().join(" "),
        ),
        ("urls".into(), urls.join(" ")),
        ("method".into(), base.method.clone()),
        ("threads".into(), base.worker_cpus.len().to_string()),
        (
            "worker CPUs".into(),
            base.worker_cpus
                .iter()
                .map(|c| c.map_or("-".into(), |c| c.to_string()))
                .collect::<Vec<_>>()
                .join(","),
        ),
        (
            "connections (rate steps)".into(),
            base.connections.to_string(),
        ),
        ("duration per step".into(), args.load.duration.clone()),
        ("warm-up per step".into(), args.load.warmup.clone()),
        ("pipeline".into(), base.pipeline.to_string()),
        ("keep-alive".into(), base.keep_alive.to_string()),
        ("timeout".into(), args.load.timeout.clone()),
        ("arrival".into(), args.load.arrival.clone()),
    ];
    if !args.slo.is_empty() {
        s.push(("slo".into(), args.slo.join(", ")));
    }
    s.push(("kernel".into(), read_trim("/proc/sys/kernel/osrelease")));
    s
}

fn read_trim(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn write_outputs(
    args: &Args,
    base: &Config,
    urls: &[String],
    kind: LoadKind,
    mode: &'static str,
    steps: &[Step],
    knee: Option<&KneeResult>,
) -> anyhow::Result<()> {
    if let Some(p) = &args.csv {
        let mut f = std::io::BufWriter::new(create(p, "--csv")?);
        write_csv(&mut f, kind, steps).with_context(|| format!("--csv {}", p.display()))?;
        f.flush()?;
    }
    let wants_doc = args.json.is_some() || args.html.is_some();
    let doctor = (wants_doc && !args.no_doctor)
        .then(|| serde_json::to_value(twelve_doctor::host_summary(Duration::ZERO)).ok())
        .flatten();
    let settings = settings(args, base, urls);
    if let Some(p) = &args.json {
        let mut doc = SweepDoc::new(crate::VERSION, mode, kind, steps);
        doc.settings = settings.clone();
        doc.knee = knee.map(knee_json);
        doc.doctor = doctor.clone();
        std::fs::write(p, doc.to_json() + "\n")
            .with_context(|| format!("--json {}", p.display()))?;
    }
    let plots = if args.plot.is_some() || args.html.is_some() {
        plot::sweep_plots(kind, steps)?
    } else {
        Vec::new()
    };
    if let Some(dir) = &args.plot {
        std::fs::create_dir_all(dir).with_context(|| format!("--plot {}", dir.display()))?;
        for (name, _, svg) in &plots {
            let p = dir.join(format!("{name}.svg"));
            std::fs::write(&p, svg).with_context(|| format!("--plot {}", p.display()))?;
        }
    }
    if let Some(p) = &args.html {
        let mut notes = Vec::new();
        if let Some(k) = knee {
            notes.push(knee_sentence(k));
        }
        if steps.iter().any(|s| s.run.client_bound()) {
            notes.push(twelve_report::json::CLIENT_BOUND_NOTE.to_string());
        }
        let page = HtmlPage {
            title: format!("twelve sweep: {}", urls.join(" ")),
            version: crate::VERSION.to_string(),
            settings,
            kind,
            rows: steps
                .iter()
                .map(|s| (StepRow::of(s), (!s.slo.is_empty()).then(|| s.passed())))
                .collect(),
            plots,
            notes,
            doctor,
        };
        std::fs::write(p, page.render()).with_context(|| format!("--html {}", p.display()))?;
    }
    Ok(())
}

fn knee_json(k: &KneeResult) -> Knee {
    Knee {
        max_rate_per_s: k.max_rate,
        above_range: k.above_range,
        bracket: k.bracket,
        pass_step: k.pass_probe,
        fail_step: k.fail_probe,
    }
}

fn create(p: &Path, flag: &str) -> anyhow::Result<std::fs::File> {
    std::fs::File::create(p).with_context(|| format!("{flag} {}", p.display()))
}

/// Starts twelve's server in this process: one worker pinned to `cpu`, a free loopback port,
/// `twelve serve`'s TechEmpower routes (the server `twelve bench` embeds).
fn start_server(cpu: usize) -> anyhow::Result<twelve_engine::ServerHandle> {
    let mut config = twelve_engine::Config::loopback(1);
    config.cpus = CpuList::from_cpus([cpu]);
    twelve_engine::Server::new(config, crate::serve::techempower_router())
        .start()
        .with_context(|| format!("starting the embedded server on CPU {cpu}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! bounds {
        ($name:ident, $text:expr, $want:expr) => {
            #[test]
            fn $name() {
                assert_eq!(parse_bounds($text).ok(), $want);
            }
        };
    }

    bounds!(bounds_plain, "1k..100k", Some((1_000.0, 100_000.0)));
    bounds!(
        bounds_ignore_step,
        "1000..5000:1000",
        Some((1_000.0, 5_000.0))
    );
    bounds!(bounds_reversed, "5000..1000", None);
    bounds!(bounds_single, "5000", None);
}
