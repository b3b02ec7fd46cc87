//! Opt-in, reversible apply: runs the run-time actions of chosen checks, records what it
//! changed, and writes a revert script. Kernel command-line and firmware changes are only
//! printed.
//!
//! Every write goes through the root path (`ROOT/proc/sys/...`), so tests apply and revert
//! against a copy of a fixture tree; commands go through [`Runner`], which only logs them
//! under a fixture root.
use crate::model::{Action, Report, shell_join, shell_quote};
use crate::probe::Runner;
use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// One change that was made, with what undoes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// A file was written; `old` is what it held before.
    Wrote {
        /// The full path (root included).
        path: PathBuf,
        /// The previous contents, trimmed.
        old: String,
    },
    /// A command was run; `revert` undoes it.
    Ran {
        /// The command line that undoes it.
        revert: Vec<String>,
    },
}

/// Why `--apply` could not start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApplyError {
    /// The id is not in the catalogue.
    UnknownId(String),
    /// Applying to the real root needs root.
    NotRoot,
}

impl fmt::Display for ApplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApplyError::UnknownId(id) => write!(f, "unknown check id `{id}`"),
            ApplyError::NotRoot => write!(f, "--apply changes the running host and needs root"),
        }
    }
}

impl std::error::Error for ApplyError {}

/// The actions of the chosen checks, in catalogue order.
pub fn plan<'a>(report: &'a Report, ids: &[String]) -> Result<Vec<(&'a str, Action)>, ApplyError> {
    for id in ids {
        if report.get(id).is_none() {
            return Err(ApplyError::UnknownId(id.clone()));
        }
    }
    Ok(report
        .findings
        .iter()
        .filter(|f| ids.iter().any(|i| i == f.id))
        .flat_map(|f| f.actions.iter().map(move |a| (f.id, a.clone())))
        .collect())
}

/// Whether this process runs with effective uid 0 (from /proc/self/status, `Uid:` field 2).
pub fn effective_uid_is_root() -> bool {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let uid = crate::parse::status_field(&s, "Uid")?;
            Some(uid.split_whitespace().nth(1)? == "0")
        })
        .unwrap_or(false)
}

/// What an apply run did.
#[derive(Debug, Default)]
pub struct Applied {
    /// Changes made, in order (revert them in reverse).
    pub changes: Vec<Change>,
    /// Actions that failed, with the error.
    pub errors: Vec<String>,
}

fn full_path(root: &Path, path: &str) -> PathBuf {
    root.join(path.trim_start_matches('/'))
}

/// Applies `actions` under `root`, printing each change to `out` before making it. With
/// `dry_run` it prints only. Manual actions are printed as instructions and never applied.
pub fn apply(
    actions: &[(&str, Action)],
    root: &Path,
    dry_run: bool,
    out: &mut dyn Write,
) -> io::Result<Applied> {
    let runner = Runner::new(root);
    let mut done = Applied::default();
    for (id, action) in actions {
        match action {
            Action::Manual { text, .. } => {
                writeln!(out, "[{id}] manual step, not applied: {text}")?;
            }
            Action::Write { path, value, .. } => {
                let full = full_path(root, path);
                let old = match fs::read_to_string(&full) {
                    Ok(s) => s.trim().to_string(),
                    Err(e) => {
                        done.errors
                            .push(format!("[{id}] read {}: {e}", full.display()));
                        continue;
                    }
                };
                let same = old.split_whitespace().eq(value.split_whitespace());
                if same {
                    writeln!(out, "[{id}] {path} is already {value}")?;
                    continue;
                }
                writeln!(out, "[{id}] {}", action.apply_line())?;
                writeln!(out, "        (was {old})")?;
                if dry_run {
                    continue;
                }
                match fs::write(&full, format!("{value}\n")) {
                    Ok(()) => done.changes.push(Change::Wrote { path: full, old }),
                    Err(e) => done.errors.push(format!("[{id}] write {path}: {e}")),
                }
            }
            Action::Run { argv, revert } => {
                writeln!(out, "[{id}] {}", shell_join(argv))?;
                if dry_run {
                    continue;
                }
                match runner.execute(argv) {
                    Ok(()) => done.changes.push(Change::Ran {
                        revert: revert.clone(),
                    }),
                    Err(e) => done
                        .errors
                        .push(format!("[{id}] {}: {e}", shell_join(argv))),
                }
            }
        }
    }
    Ok(done)
}

/// Undoes `changes` in reverse order.
pub fn revert(changes: &[Change], root: &Path) -> Vec<String> {
    let runner = Runner::new(root);
    let mut errors = Vec::new();
    for change in changes.iter().rev() {
        let result = match change {
            Change::Wrote { path, old } => fs::write(path, format!("{old}\n")),
            Change::Ran { revert } => runner.execute(revert),
        };
        if let Err(e) = result {
            errors.push(format!("{change:?}: {e}"));
        }
    }
    errors
}

/// A `sh` script that undoes `changes` in reverse order. Under a fixture root, commands are
/// logged to `ROOT/cmd/executed.log` instead of run, like [`Runner::execute`].
pub fn revert_script(changes: &[Change], root: &Path) -> String {
    let mut s = String::from(
        "#!/bin/sh\n# Written by `twelve doctor --apply`: undoes its changes, newest first.\n",
    );
    for change in changes.iter().rev() {
        match change {
            Change::Wrote { path, old } => {
                let p = path.display().to_string();
                s += &format!(
                    "printf '%s\\n' {} > {}\n",
                    shell_quote(old),
                    shell_quote(&p)
                );
            }
            Change::Ran { revert } if root == Path::new("/") => {
                s += &format!("{}\n", shell_join(revert));
            }
            Change::Ran { revert } => {
                let log = root.join("cmd/executed.log").display().to_string();
                s += &format!(
                    "echo {} >> {}\n",
                    shell_quote(&revert.join(" ")),
                    shell_quote(&log)
                );
            }
        }
    }
    s
}
