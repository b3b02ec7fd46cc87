//! `twelve merge FILES...`: the shards of a run split across load generators (`twelve bench
//! --shard I/N --json` reports, and optionally their `--timeseries` files) merged into one
//! run: histograms added bucket by bucket, counts summed, `--slo` judged again on the merged
//! data, the same text or JSON report a single run prints, and exit 1 when the merged run is
//! invalid (a shard client-bound, short of connections or under-delivering) or an SLO failed.
use anyhow::{Context, bail};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use twelve_report::merge::{MergeVerdict, ShardReport};
use twelve_report::timeseries::{self, IntervalLine};
use twelve_report::{JsonReport, Recorder, SCHEMA_ID, Slo, Summary};

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

/// A file given to `twelve merge`.
enum Input {
    Report(Box<ShardReport>),
    Timeseries(Vec<IntervalLine>),
}

/// The bench report in `text`: the whole text, or the pretty-printed document between other
/// lines (`kubectl logs` interleaves a pod's stderr, where warnings go, with its stdout).
fn report_in(text: &str) -> Option<serde_json::Value> {
    let doc = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .or_else(|| {
            let start = if text.starts_with("{\n") {
                0
            } else {
                text.find("\n{\n")? + 1
            };
            let end = text.rfind("\n}")? + 2;
            serde_json::from_str(text.get(start..end)?).ok()
        })?;
    (doc.get("schema").and_then(|s| s.as_str()) == Some(SCHEMA_ID)).then_some(doc)
}

fn read_input(path: &PathBuf) -> anyhow::Result<Input> {
    let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
    if let Some(doc) = report_in(&text) {
        let report = serde_json::from_value(doc).with_context(|| path.display().to_string())?;
        return Ok(Input::Report(Box::new(report)));
    }
    let lines = timeseries::read(text.as_bytes()).with_context(|| {
        format!(
            "{}: neither a bench --json report nor a --timeseries file",
            path.display()
        )
    })?;
    Ok(Input::Timeseries(lines))
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
            Input::Report(r) => reports.push(*r),
            Input::Timeseries(l) => lines.extend(l),
        }
    }
    let (run, verdict) = twelve_report::merge::merge(&reports)?;
    let summary = Summary::new(&run, &slos);
    if !lines.is_empty() {
        let merged = timeseries::merge(&lines).context("--timeseries input")?;
        check_intervals_add_up(&merged, &summary)?;
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

/// The timeseries must add up to the reports, bucket by bucket: each shard's summary is the
/// sum of its intervals, so anything else means files of different runs (or a lost line).
fn check_intervals_add_up(
    merged: &[timeseries::MergedInterval],
    summary: &Summary,
) -> anyhow::Result<()> {
    let mut all = Recorder::new();
    for m in merged {
        all.add(&m.latency);
    }
    let requests: u64 = merged.iter().map(|m| m.requests).sum();
    let s = &summary.latency;
    if all.corrected != s.corrected
        || all.uncorrected != s.uncorrected
        || all.wait != s.wait
        || requests != summary.requests
    {
        bail!(
            "the timeseries do not add up to the reports ({requests} responses in the intervals, \
             {} in the reports): files of different runs, or a shard's file is missing",
            summary.requests
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! found {
        ($name:ident, $text:expr, $found:expr) => {
            #[test]
            fn $name() {
                assert_eq!(report_in($text).is_some(), $found);
            }
        };
    }

    found!(
        plain_report,
        "{\n  \"schema\": \"twelve-bench-report/1\"\n}\n",
        true
    );
    found!(
        report_among_log_lines,
        "twelve bench: WARNING: x\n{\n  \"schema\": \"twelve-bench-report/1\"\n}\nmore\n",
        true
    );
    found!(
        other_schema,
        "{\n  \"schema\": \"twelve-timeseries/1\"\n}\n",
        false
    );
    found!(ndjson, "{\"schema\":\"twelve-timeseries/1\"}\n", false);
}
