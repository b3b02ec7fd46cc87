//! `twelve doctor`: command-line flags and the glue to its library crate.
use anyhow::{Context, bail};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use twelve_doctor::{ProbeOptions, apply, render};

/// Flags of `twelve doctor`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Read /proc, /sys and /etc under this directory instead of the running host (fixtures).
    #[arg(long, value_name = "DIR", default_value = "/")]
    root: PathBuf,
    /// Print the full report as JSON (schema: crates/doctor/report.schema.json).
    #[arg(long)]
    json: bool,
    /// Also print why each check matters, its risk, and its apply and revert commands.
    #[arg(long)]
    explain: bool,
    /// Apply the run-time changes of these checks (sysctls, qdisc, RPS/XPS, IRQ affinity,
    /// irqbalance); kernel command-line changes are printed only. Needs root on the real host.
    #[arg(long, value_name = "ID", num_args = 1..)]
    apply: Vec<String>,
    /// With --apply: print the changes, make none.
    #[arg(long, requires = "apply")]
    dry_run: bool,
    /// Measure what these checks' run-time changes are worth here: interleaved rounds of the
    /// embedded benchmark with and without each (apply, measure, revert), the ratio with its
    /// spread. Needs root; the host is left as it was, even on Ctrl-C or an error.
    #[arg(long, value_name = "ID", num_args = 1.., conflicts_with = "apply")]
    measure: Vec<String>,
    /// With --apply or --measure: where to write the revert script (default:
    /// ./twelve-doctor-revert-TIME.sh).
    #[arg(long, value_name = "FILE")]
    revert_script: Option<PathBuf>,
    /// How long to sample /proc/stat for steal time; 0 uses the counters since boot.
    #[arg(long, value_name = "MS", default_value_t = 200)]
    steal_window_ms: u64,
    #[command(flatten)]
    measuring: crate::measure::MeasureArgs,
}

/// Runs `twelve doctor`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if !args.root.is_dir() {
        bail!("--root {}: not a directory", args.root.display());
    }
    let opts = ProbeOptions {
        root: args.root.clone(),
        steal_window: Duration::from_millis(args.steal_window_ms),
    };
    let report = twelve_doctor::diagnose(&opts);
    let mut out = std::io::stdout().lock();
    if !args.apply.is_empty() {
        return apply_ids(&args, &report, &mut out);
    }
    if !args.measure.is_empty() {
        let script = args.revert_script.clone();
        return crate::measure::run(
            &report,
            &args.measure,
            &args.root,
            &args.measuring,
            script,
            &mut out,
        );
    }
    if args.json {
        writeln!(out, "{}", report.to_json_pretty())?;
    } else {
        let style = render::Style {
            color: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
            explain: args.explain,
        };
        out.write_all(render::render(&report, style).as_bytes())?;
        write!(out, "\n{}", crate::measure::measurable_line(&report))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `--apply ID...`: print, apply (unless --dry-run), and write the revert script.
fn apply_ids(
    args: &Args,
    report: &twelve_doctor::Report,
    out: &mut dyn Write,
) -> anyhow::Result<ExitCode> {
    let actions = apply::plan(report, &args.apply).context("--apply")?;
    let real = args.root == std::path::Path::new("/");
    if real && !args.dry_run && !apply::effective_uid_is_root() {
        return Err(apply::ApplyError::NotRoot).context("--apply");
    }
    if actions.is_empty() {
        writeln!(out, "nothing to change for {}", args.apply.join(" "))?;
        return Ok(ExitCode::SUCCESS);
    }
    let verb = if args.dry_run {
        "would apply"
    } else {
        "applying"
    };
    writeln!(out, "{verb} under {}:", args.root.display())?;
    let done = apply::apply(&actions, &args.root, args.dry_run, out)?;
    if !done.changes.is_empty() {
        let path = args
            .revert_script
            .clone()
            .unwrap_or_else(default_script_path);
        write_script(&path, &apply::revert_script(&done.changes, &args.root))
            .with_context(|| format!("--revert-script {}", path.display()))?;
        writeln!(
            out,
            "{} change(s) made; to undo them: sh {}",
            done.changes.len(),
            path.display()
        )?;
    }
    for e in &done.errors {
        writeln!(out, "failed: {e}")?;
    }
    Ok(if done.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// --revert-script's default: ./twelve-doctor-revert-TIME.sh.
pub fn default_script_path() -> PathBuf {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    PathBuf::from(format!("twelve-doctor-revert-{secs}.sh"))
}

/// Writes an executable revert script.
pub fn write_script(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}
