//! `twelve compare A B`: the flags, and the glue from them to twelve-sweep (the interleaved
//! rounds, each side started and stopped: `twelve_sweep::side`) and twelve-report (the
//! figures, the table and the JSON document: `twelve_report::visual::compare_report`).
use crate::load_args::{DrainArgs, LoadArgs};
use anyhow::{Context, bail};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use twelve_load::{parse_duration, parse_rate};
use twelve_report::visual::compare_report::{CompareDoc, SideJson, compare, round_line, table};
use twelve_report::visual::compare_verdict::conclude;
use twelve_sweep::{Side, SideSpec, interleave, run_side_observed, stop_running_server};

/// Flags of `twelve compare`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Side A (the baseline): a URL, or a command that starts a server (then see --url).
    #[arg(value_name = "A")]
    a: String,
    /// Side B (the candidate): a URL, or a command that starts a server.
    #[arg(value_name = "B")]
    b: String,
    /// Rounds; each round runs A then B.
    #[arg(long, value_name = "N", default_value_t = 5)]
    rounds: usize,
    /// The URL a command side serves (both sides, unless --a-url/--b-url).
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:8080/")]
    url: String,
    /// The URL side A's command serves.
    #[arg(long, value_name = "URL")]
    a_url: Option<String>,
    /// The URL side B's command serves.
    #[arg(long, value_name = "URL")]
    b_url: Option<String>,
    /// How long a command side may take until its port answers.
    #[arg(long, value_name = "DUR", default_value = "10s")]
    start_timeout: String,
    /// Open model at this rate (req/s) instead of the closed model.
    #[arg(short = 'R', long, value_name = "RATE", allow_hyphen_values = true)]
    rate: Option<String>,
    /// Write the comparison as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Sample each command side's server (its process group) with `perf record -g` during
    /// every measured window, and write DIR/a.svg, DIR/b.svg (user-space frames blue, kernel
    /// frames red) and DIR/diff.svg, B's profile against A's (red: more, blue: less).
    #[arg(long, value_name = "DIR")]
    flame: Option<PathBuf>,
    /// With --flame: the process to sample for side A when A is a URL (a command side is
    /// sampled as its process group).
    #[arg(long, value_name = "PID", requires = "flame")]
    a_flame_pid: Option<u32>,
    /// With --flame: the process to sample for side B when B is a URL.
    #[arg(long, value_name = "PID", requires = "flame")]
    b_flame_pid: Option<u32>,
    #[command(flatten)]
    load: LoadArgs,
    #[command(flatten)]
    drain: DrainArgs,
    /// Rank rounds even when their self-check found them client-bound or under-delivered.
    #[arg(long)]
    allow_invalid: bool,
}

/// On SIGINT or SIGTERM, stops the running server's process group and exits 130.
fn stop_server_on_signal() -> anyhow::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
        .context("installing the SIGINT/SIGTERM handler")?;
    std::thread::spawn(move || {
        if signals.forever().next().is_some() {
            stop_running_server();
            std::process::exit(130);
        }
    });
    Ok(())
}

/// Runs `twelve compare`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    let sides = [
        SideSpec::new(&args.a, args.a_url.as_deref(), &args.url),
        SideSpec::new(&args.b, args.b_url.as_deref(), &args.url),
    ];
    args.load.check_online()?;
    let worker_cpus = args.load.cpus(false)?.workers;
    let mut configs = Vec::new();
    for s in &sides {
        let mut c = args.load.config(std::slice::from_ref(&s.url), None)?;
        c.worker_cpus = worker_cpus.clone();
        if let Some(rate) = &args.rate {
            c.model = args.load.open(parse_rate(rate).context("-R/--rate")?);
        }
        configs.push(c);
    }
    let start_timeout = parse_duration(&args.start_timeout).context("--start-timeout")?;
    if sides.iter().any(|s| s.command.is_some()) {
        stop_server_on_signal()?;
    }
    let drain = args.drain.policy()?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "A: {}\nB: {}", sides[0].spec, sides[1].spec)?;
    let mut flame = crate::flame::CompareProfile::new(
        args.flame.clone(),
        [args.a_flame_pid, args.b_flame_pid],
    )?;
    if sides.iter().any(|s| s.command.is_some()) {
        // The servers' own output would land inside the table.
        writeln!(
            out,
            "server output: {}",
            twelve_sweep::side::server_log().display()
        )?;
    }
    let (a, b) = interleave(args.rounds, |side, round| {
        let i = usize::from(side == Side::B);
        flame.side(i, configs[i].warmup);
        let run = run_side_observed(&sides[i], &configs[i], start_timeout, &drain, &mut flame)?;
        let _ = writeln!(out, "{}", round_line(round, &format!("{side:?}"), &run));
        Ok::<_, anyhow::Error>(run)
    })?;
    let figures = compare(&a, &b);
    write!(out, "\n{}", table(&figures, args.rounds))?;
    flame.write(
        [&sides[0].spec, &sides[1].spec],
        figures[0].ratio.median,
        args.rounds,
    )?;
    let conclusion = conclude(&a, &b, &figures, args.allow_invalid);
    writeln!(out, "\n{}", conclusion.sentence)?;
    if let Some(p) = &args.json {
        let [a, b] = sides.map(|s| SideJson {
            spec: s.spec,
            url: s.url,
        });
        let mut doc = CompareDoc::new(crate::VERSION, args.rounds, a, b, &figures);
        doc.conclusion = Some((&conclusion).into());
        std::fs::write(p, doc.to_json() + "\n")
            .with_context(|| format!("--json {}", p.display()))?;
    }
    // Rounds that did not measure the server give no ranking: not a success.
    Ok(if conclusion.ranked {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}
