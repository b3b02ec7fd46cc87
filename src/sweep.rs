//! `twelve sweep`: one bench run per step of a concurrency or rate plan (ab+.sh built in), or
//! the knee search for the highest rate that meets every SLO; writes the CSV, the JSON, SVG
//! plots and the HTML report.
use crate::load_args::{DrainArgs, Embedded, LoadArgs};
use anyhow::{Context, bail};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use twelve_load::Config;
use twelve_report::Slo;
use twelve_report::visual::console::{knee_sentence, step_header, step_line};
use twelve_report::visual::{
    Host, HostCheck, HtmlPage, LoadKind, Step, StepRow, SweepDoc, plot, write_csv,
};
use twelve_sweep::{
    DrainPolicy, Drained, KneeResult, KneeSearch, parse_bounds, parse_plan, run_knee, run_sweep,
};

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
    /// HTTP/2 closed-model steps (with --h2 or --h2c): streams per connection, as h2load's -m,
    /// -c fixed; a plan as --concurrency's (1,10,100 or 1..128*2).
    #[arg(long, value_name = "PLAN", conflicts_with_all = ["concurrency", "rate", "find_max_rate"])]
    streams_plan: Option<String>,
    /// Open-model steps in req/s (10k..100k:10k); with --find-max-rate the bounds LOW..HIGH.
    #[arg(short = 'R', long, value_name = "PLAN", allow_hyphen_values = true)]
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
    #[command(flatten)]
    drain: DrainArgs,
}

/// Runs `twelve sweep`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let slos = args
        .slo
        .iter()
        .map(|s| Slo::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    args.load.check_online()?;
    let plan = args.load.cpus(args.urls.is_empty())?;
    let (server, urls) = Embedded::start(plan.server, &args.urls)?;
    let mut base = args.load.config(&urls, None)?;
    base.worker_cpus = plan.workers;
    let drain = args.drain.policy()?;
    let result = measure(&args, &mut base, &slos, &drain);
    server.stop();
    let m = result?;
    let written = write_outputs(&args, &base, &urls, &m)?;
    if !written.is_empty() {
        println!("wrote {}", written.join(", "));
    }
    Ok(match &m.knee {
        Some(k) if k.max_rate.is_none() => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    })
}

/// What a sweep or knee search measured.
struct Measured {
    /// What varied.
    kind: LoadKind,
    /// `"sweep"` or `"find-max-rate"`, as the JSON document says.
    mode: &'static str,
    /// Every run, in run order.
    steps: Vec<Step>,
    /// The knee search's answer, when one ran.
    knee: Option<KneeResult>,
}

/// Runs the plan or the knee search, printing a line per step.
fn measure(
    args: &Args,
    base: &mut Config,
    slos: &[Slo],
    drain: &DrainPolicy,
) -> anyhow::Result<Measured> {
    let mut out = std::io::stdout().lock();
    let kind = if args.concurrency.is_some() {
        LoadKind::Concurrency
    } else if args.streams_plan.is_some() {
        if !base.protocol.is_h2() {
            bail!("--streams-plan: streams are HTTP/2's; add --h2 (https://) or --h2c (http://)");
        }
        LoadKind::Streams
    } else {
        LoadKind::Rate
    };
    writeln!(out, "{}", step_header(kind))?;
    let mut n = 0;
    let mut each = |s: &Step, d: &Drained| {
        n += 1;
        let _ = writeln!(out, "{}", step_line(n, s, &d.describe()));
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
        writeln!(out, "{}", knee_sentence(&knee.to_doc(), &steps))?;
        return Ok(Measured {
            kind: LoadKind::Rate,
            mode: "find-max-rate",
            steps,
            knee: Some(knee),
        });
    }
    let plan_text = match (&args.concurrency, &args.streams_plan, &args.rate) {
        (Some(p), _, _) | (None, Some(p), _) | (None, None, Some(p)) => p,
        (None, None, None) => {
            bail!("give --concurrency PLAN, --rate PLAN, --streams-plan PLAN or --find-max-rate")
        }
    };
    let plan = parse_plan(plan_text, kind)?;
    if kind == LoadKind::Rate {
        base.model = args.load.open(plan[0]);
    }
    let steps = run_sweep(base, kind, &plan, slos, drain, &mut each)?;
    Ok(Measured {
        kind,
        mode: "sweep",
        steps,
        knee: None,
    })
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
        ("warm-up per step".into(), args.load.warmup_text().into()),
        ("pipeline".into(), base.pipeline.to_string()),
        (
            "protocol".into(),
            protocol_setting(base, args.streams_plan.is_some()),
        ),
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

/// The protocol and, over HTTP/2, the streams per connection (`by_step`: a streams sweep's
/// own steps).
fn protocol_setting(base: &Config, by_step: bool) -> String {
    let name = base
        .protocol
        .name(base.targets.first().is_some_and(|t| t.tls));
    match base.protocol {
        twelve_load::Protocol::H2 { .. } if by_step => format!("{name}, streams per step"),
        twelve_load::Protocol::H2 { streams } => {
            format!("{name}, {streams} streams per connection")
        }
        twelve_load::Protocol::Http1 => name.to_string(),
    }
}

fn read_trim(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Writes the outputs the flags ask for, all from the same summarised steps; returns what it
/// wrote, for the line that says where.
fn write_outputs(
    args: &Args,
    base: &Config,
    urls: &[String],
    m: &Measured,
) -> anyhow::Result<Vec<String>> {
    let (kind, steps, knee) = (m.kind, &m.steps[..], m.knee.as_ref());
    let mut written = Vec::new();
    if let Some(p) = &args.csv {
        written.push(p.display().to_string());
        let mut f = std::io::BufWriter::new(create(p, "--csv")?);
        write_csv(&mut f, kind, steps).with_context(|| format!("--csv {}", p.display()))?;
        f.flush()?;
    }
    let wants_doc = args.json.is_some() || args.html.is_some();
    let host = (wants_doc && !args.no_doctor).then(|| {
        twelve_doctor::diagnose(&twelve_doctor::ProbeOptions {
            root: "/".into(),
            steal_window: Duration::ZERO,
        })
    });
    let doctor = host
        .as_ref()
        .and_then(|r| serde_json::to_value(r.summary()).ok());
    let settings = settings(args, base, urls);
    if let Some(p) = &args.json {
        let mut doc = SweepDoc::new(crate::VERSION, m.mode, kind, steps);
        doc.settings = settings.clone();
        doc.knee = knee.map(KneeResult::to_doc);
        doc.doctor = doctor.clone();
        std::fs::write(p, doc.to_json() + "\n")
            .with_context(|| format!("--json {}", p.display()))?;
        written.push(p.display().to_string());
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
        written.push(format!("{} ({} plots)", dir.display(), plots.len()));
    }
    if let Some(p) = &args.html {
        let mut notes = Vec::new();
        if let Some(k) = knee {
            notes.push(knee_sentence(&k.to_doc(), steps));
        }
        // Every step that did not measure the server says so, with its advice.
        for (i, s) in steps.iter().enumerate() {
            let c = &s.summary.check;
            if !c.verdict.rankable() {
                notes.push(format!(
                    "step {} ({} {}): {}: {}",
                    i + 1,
                    twelve_report::visual::plot::fmt_si(s.load),
                    kind.label(),
                    c.verdict.word().to_uppercase(),
                    c.sentence()
                ));
            }
        }
        let page = HtmlPage {
            title: format!("twelve sweep: {}", urls.join(" ")),
            version: crate::VERSION.to_string(),
            settings,
            kind,
            rows: steps
                .iter()
                .map(|s| {
                    (
                        StepRow::of(s),
                        (!s.summary.slo.is_empty()).then(|| s.passed()),
                    )
                })
                .collect(),
            plots,
            notes,
            doctor: host.as_ref().map(html_host),
            errors: steps.iter().map(|s| s.summary.errors.clone()).collect(),
            verdicts: steps
                .iter()
                .map(|s| s.summary.check.verdict.word())
                .collect(),
        };
        std::fs::write(p, page.render()).with_context(|| format!("--html {}", p.display()))?;
        written.push(p.display().to_string());
    }
    Ok(written)
}

/// The doctor's report as the HTML page shows it: the counts, and each check not ok with
/// what it found and what to do, as `twelve doctor` prints them.
fn html_host(r: &twelve_doctor::Report) -> Host {
    let s = r.summary();
    Host {
        counts: [s.ok, s.advise, s.warn, s.unknown],
        flagged: r
            .findings
            .iter()
            .filter(|f| f.status != twelve_doctor::Status::Ok)
            .map(|f| HostCheck {
                id: f.id.to_string(),
                status: f.status.as_str().to_string(),
                title: f.title.to_string(),
                found: f.found.clone(),
                advice: if f.status == twelve_doctor::Status::Unknown {
                    String::new()
                } else {
                    f.recommendation.clone()
                },
            })
            .collect(),
    }
}

fn create(p: &Path, flag: &str) -> anyhow::Result<std::fs::File> {
    std::fs::File::create(p).with_context(|| format!("{flag} {}", p.display()))
}
