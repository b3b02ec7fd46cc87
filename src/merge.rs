//! `twelve merge FILES...`: the shards of a run split across load generators (`twelve bench
//! --shard I/N --json` reports, and optionally their `--timeseries` files) merged into one
//! run: histograms added bucket by bucket, counts summed, `--slo` judged again on the merged
//! data, the same text or JSON report a single run prints, and exit 1 when the merged run is
//! invalid (a shard client-bound, short of connections or under-delivering) or an SLO failed.
use anyhow::{Context, bail};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use twelve_report::merge::{MergeVerdict, ShardFile};
use twelve_report::timeseries;
use twelve_report::{JsonReport, Slo, Summary};

/// Flags of `twelve merge`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Every shard's `--json` report, and any of their `--timeseries` files (told apart by
    /// content).
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
    /// Print the merged report as JSON (the bench report's schema, with a `merge` section).
    #[arg(long)]
    json: bool,
    /// A threshold judged on the merged data (repeatable), as `twelve bench --slo`.
    #[arg(long, value_name = "EXPR")]
    slo: Vec<String>,
    /// Write the merged per-interval histograms (NDJSON, as `twelve bench --timeseries`).
    #[arg(long, value_name = "FILE")]
    timeseries: Option<PathBuf>,
}

/// A shard's report or timeseries, read from `path`.
fn read_input(path: &PathBuf) -> anyhow::Result<ShardFile> {
    let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
    ShardFile::parse(&text).with_context(|| path.display().to_string())
}

/// Runs `twelve merge`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let slos = args
        .slo
        .iter()
        .map(|s| Slo::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    let (mut reports, mut lines) = (Vec::new(), Vec::new());
    for path in &args.files {
        match read_input(path)? {
            ShardFile::Report(r) => reports.push(*r),
            ShardFile::Timeseries(l) => lines.extend(l),
        }
    }
    let (run, verdict) = twelve_report::merge::merge(&reports)?;
    let summary = Summary::new(&run, &slos);
    if !lines.is_empty() {
        let merged = timeseries::merge(&lines).context("--timeseries input")?;
        timeseries::check_adds_up(&merged, &summary)?;
        if let Some(path) = &args.timeseries {
            let file = std::fs::File::create(path)
                .with_context(|| format!("--timeseries {}", path.display()))?;
            timeseries::write(
                std::io::BufWriter::new(file),
                &timeseries::merged_lines(&merged),
            )
            .with_context(|| format!("--timeseries {}", path.display()))?;
        }
    } else if args.timeseries.is_some() {
        bail!("--timeseries: give the shards' --timeseries files to merge");
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        let mut report = JsonReport::of(&summary, env!("CARGO_PKG_VERSION"));
        report.merge = Some(verdict.clone());
        writeln!(out, "{}", report.to_json())?;
        for r in &verdict.reasons {
            eprintln!("twelve merge: INVALID: {r}");
        }
    } else {
        write!(out, "{}", twelve_report::text::render(&summary))?;
        write!(out, "{}", verdict_text(&verdict))?;
    }
    Ok(if verdict.valid && summary.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The lines under the text report that say it is a merge and whether it holds.
fn verdict_text(v: &MergeVerdict) -> String {
    let mut s = format!(
        "Merged {} shards (measured windows began within {:.1} ms of each other)\n",
        v.shards,
        v.start_spread_s * 1e3
    );
    for r in &v.reasons {
        s.push_str(&format!("INVALID: {r}\n"));
    }
    s
}
