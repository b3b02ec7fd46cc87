//! `twelve doctor --measure ID...`: a tuning's effect on the embedded benchmark, measured in
//! interleaved rounds with and without it (apply, measure, revert), the host always left as it
//! was: reverted after every measured run, on an error, a panic or Ctrl-C, checked against the
//! probe after each revert, and with a revert script on disk before the first change.
use crate::load_args::{Embedded, LoadArgs};
use anyhow::{Context, bail};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use twelve_doctor::measure::{Tuned, measurable, planned_changes, runtime_actions};
use twelve_doctor::{Action, ProbeOptions, Report, apply};
use twelve_report::Summary;
use twelve_report::visual::Spread;
use twelve_sweep::tuning::measure_rounds;

/// The settings of `--measure`: rounds, and the embedded benchmark's load flags.
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "Measuring a tuning (--measure)")]
pub struct MeasureArgs {
    /// Rounds per tuning; each runs the embedded benchmark with the tuning and without it,
    /// which first alternating from round to round.
    #[arg(long, value_name = "N", default_value_t = 5)]
    rounds: usize,
    #[command(flatten)]
    load: LoadArgs,
}

/// The line `twelve doctor` prints under its table: which checks `--measure` can measure.
pub fn measurable_line(report: &Report) -> String {
    let ids = measurable(report);
    if ids.is_empty() {
        "Measurable with --measure: none (no change to make at run time here)\n".to_string()
    } else {
        format!(
            "Measurable with --measure (a change to make at run time here): {}\n",
            ids.join(" ")
        )
    }
}

/// Runs `--measure`: every id in turn; exit 130 when interrupted (after reverting).
pub fn run(
    report: &Report,
    ids: &[String],
    root: &Path,
    args: &MeasureArgs,
    script: Option<PathBuf>,
    out: &mut dyn Write,
) -> anyhow::Result<ExitCode> {
    if args.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    if root != Path::new("/") {
        // The benchmark runs on this host: changes under a fixture tree would change nothing
        // it measures.
        bail!("--measure measures the running host; it cannot take --root");
    }
    if !apply::effective_uid_is_root() {
        return Err(apply::ApplyError::NotRoot).context("--measure");
    }
    let mut plans = Vec::new();
    for id in ids {
        let actions = runtime_actions(report, id).map_err(anyhow::Error::msg)?;
        if actions.is_empty() {
            writeln!(
                out,
                "{id}: nothing to change at run time here; not measured"
            )?;
        } else {
            plans.push((id.as_str(), actions));
        }
    }
    if plans.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let all: Vec<(&str, Action)> = plans.iter().flat_map(|(_, a)| a.clone()).collect();
    let path = script.unwrap_or_else(crate::doctor::default_script_path);
    crate::doctor::write_script(
        &path,
        &apply::revert_script(&planned_changes(&all, root), root),
    )
    .with_context(|| format!("--revert-script {}", path.display()))?;
    writeln!(
        out,
        "revert script (kept on disk; run it if twelve is killed mid-way): sh {}",
        path.display()
    )?;
    let interrupt = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, interrupt.clone())
            .context("installing signal handlers")?;
    }
    for (id, actions) in &plans {
        let baseline = found(report, id);
        let ratio = measure_one(id, actions, root, args, &interrupt, &baseline, out)?;
        if interrupt.load(Ordering::Relaxed) {
            writeln!(
                out,
                "interrupted: every change reverted, the host is as it was"
            )?;
            return Ok(ExitCode::from(130));
        }
        writeln!(out, "{ratio}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What the check found, to tell after a revert whether the host is back where it was.
fn found(report: &Report, id: &str) -> String {
    report.get(id).map(|f| f.found.clone()).unwrap_or_default()
}

/// The rounds of one tuning (`twelve_sweep::tuning`); returns its result line (empty after
/// an interrupt).
fn measure_one(
    id: &str,
    actions: &[(&str, Action)],
    root: &Path,
    args: &MeasureArgs,
    interrupt: &AtomicBool,
    baseline: &str,
    out: &mut dyn Write,
) -> anyhow::Result<String> {
    let effect = measure_rounds(args.rounds, interrupt, |round, tuned| {
        let rps = if tuned {
            let change = Tuned::apply(actions, root, out)
                .with_context(|| format!("--measure {id}: applying"))?;
            // Measured while the tuning is in force; `change` reverts on `?` and panics.
            let rps = bench(&args.load, interrupt);
            let errors = change.revert();
            if !errors.is_empty() {
                bail!("--measure {id}: revert failed: {}", errors.join("; "));
            }
            let now = found(&reprobe(root), id);
            if now != baseline {
                bail!(
                    "--measure {id}: after the revert the check finds `{now}`, not `{baseline}` \
                     as before: stopping (the revert script restores the probe's values)"
                );
            }
            rps?
        } else {
            bench(&args.load, interrupt)?
        };
        let side = if tuned { "with" } else { "without" };
        writeln!(out, "[{id}] round {} {side}: {rps:.0} req/s", round + 1)?;
        Ok(rps)
    })?;
    let Some(effect) = effect else {
        return Ok(String::new());
    };
    let r = effect.ratio();
    Ok(format!(
        "{id}: with / without, req/s of the embedded benchmark: {:.3} [{:.3} – {:.3}] \
         (median [min – max] of {} rounds' ratios; medians {:.0} with, {:.0} without)",
        r.median,
        r.min,
        r.max,
        effect.ratios().len(),
        Spread::of(&effect.with).median,
        Spread::of(&effect.without).median
    ))
}

fn reprobe(root: &Path) -> Report {
    twelve_doctor::diagnose(&ProbeOptions {
        root: root.to_path_buf(),
        steal_window: std::time::Duration::ZERO,
    })
}

/// One run of the embedded benchmark (a fresh server, so settings read when a socket is
/// made apply); returns its req/s.
fn bench(load: &LoadArgs, interrupt: &AtomicBool) -> anyhow::Result<f64> {
    let plan = load.cpus(true)?;
    let (server, urls) = Embedded::start(plan.server, &[])?;
    let mut config = load.config(&urls, None)?;
    config.worker_cpus = plan.workers;
    let outcome = twelve_load::run_until(&config, interrupt, |_| {});
    server.stop();
    Ok(Summary::new(&outcome?.result, &[]).rps)
}
