//! The human-readable report: a table grouped by the study's steps, colour optional.
use crate::model::{Report, Status, Step};
use std::fmt::Write;

/// How to render.
#[derive(Clone, Copy, Debug, Default)]
pub struct Style {
    /// ANSI colours for the status column (only on a terminal).
    pub color: bool,
    /// Also print why, risk, and the apply/revert commands of every check.
    pub explain: bool,
}

fn status_cell(status: Status, color: bool) -> String {
    let text = format!("{:<7}", status.as_str());
    if !color {
        return text;
    }
    let code = match status {
        Status::Ok => "32",
        Status::Advise => "33",
        Status::Warn => "31;1",
        Status::Unknown => "2",
    };
    format!("\x1b[{code}m{text}\x1b[0m")
}

/// Renders the report as text.
pub fn render(report: &Report, style: Style) -> String {
    let s = report.summary();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "twelve doctor: {} checks on {} ({} ok, {} advise, {} warn, {} unknown)",
        report.findings.len(),
        report.root,
        s.ok,
        s.advise,
        s.warn,
        s.unknown
    );
    for step in Step::ALL {
        let findings: Vec<_> = report.findings.iter().filter(|f| f.step == step).collect();
        if findings.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{}", step.heading());
        for f in findings {
            let _ = writeln!(
                out,
                "  {} {:<19} {}",
                status_cell(f.status, style.color),
                f.id,
                f.title
            );
            let _ = writeln!(out, "          found: {}", f.found);
            if !matches!(f.status, Status::Ok | Status::Unknown) || style.explain {
                let _ = writeln!(out, "          do:    {}", f.recommendation);
            }
            if style.explain {
                let _ = writeln!(out, "          why:   {}", f.why);
                let _ = writeln!(out, "          risk:  {}", f.risk);
                for line in f.apply_lines() {
                    let _ = writeln!(out, "          apply:  {line}");
                }
                for line in f.revert_lines() {
                    let _ = writeln!(out, "          revert: {line}");
                }
            }
        }
    }
    let _ = writeln!(
        out,
        "\n`twelve doctor --explain` shows why, risk and commands; \
         `twelve doctor --apply ID... [--dry-run]` applies run-time changes and writes a revert \
         script."
    );
    out
}
