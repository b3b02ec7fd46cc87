//! What `twelve doctor --measure` needs from the doctor: which checks can be measured here
//! (they have a change `apply` makes at run time), the revert script written before the first
//! change, and a tuning that is reverted however the measurement ends. The rounds are
//! twelve-sweep's (`twelve_sweep::tuning`); the doctor knows no load.
use crate::apply::{self, Change};
use crate::model::{Action, Report};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The checks that have at least one change `--apply` would make at run time on this host
/// (a file write or a command; manual steps do not count), in catalogue order.
pub fn measurable(report: &Report) -> Vec<&'static str> {
    report
        .findings
        .iter()
        .filter(|f| f.actions.iter().any(is_runtime))
        .map(|f| f.id)
        .collect()
}

fn is_runtime(action: &Action) -> bool {
    !matches!(action, Action::Manual { .. })
}

/// The run-time actions of check `id`, or `None` when it has none here.
pub fn runtime_actions(report: &Report, id: &str) -> Result<Vec<(&'static str, Action)>, String> {
    let finding = report
        .get(id)
        .ok_or_else(|| apply::ApplyError::UnknownId(id.to_string()).to_string())?;
    Ok(finding
        .actions
        .iter()
        .filter(|a| is_runtime(a))
        .map(|a| (finding.id, a.clone()))
        .collect())
}

/// The changes `actions` will make, as the probe saw the host before them: what the revert
/// script must undo. Written before the first change, so the host can be restored by hand
/// even if twelve is killed outright (SIGKILL, a power cut of the session) mid-measurement.
pub fn planned_changes(actions: &[(&str, Action)], root: &Path) -> Vec<Change> {
    actions
        .iter()
        .filter_map(|(_, a)| match a {
            Action::Write { path, old, .. } => Some(Change::Wrote {
                path: root.join(path.trim_start_matches('/')),
                old: old.trim().to_string(),
            }),
            Action::Run { revert, .. } => Some(Change::Ran {
                revert: revert.clone(),
            }),
            Action::Manual { .. } => None,
        })
        .collect()
}

/// A tuning in force: reverted by [`Tuned::revert`], or when dropped (an error or a panic
/// unwinding through the measurement), so the host is left as it was.
#[derive(Debug)]
pub struct Tuned {
    changes: Vec<Change>,
    root: PathBuf,
}

impl Tuned {
    /// Applies `actions` under `root`, printing each change to `out` first. If any action
    /// fails, what was done is reverted at once and the error returned.
    pub fn apply(
        actions: &[(&str, Action)],
        root: &Path,
        out: &mut dyn Write,
    ) -> io::Result<Tuned> {
        let done = apply::apply(actions, root, false, out)?;
        let tuned = Tuned {
            changes: done.changes,
            root: root.to_path_buf(),
        };
        if !done.errors.is_empty() {
            let errors = tuned.revert();
            return Err(io::Error::other(
                done.errors
                    .into_iter()
                    .chain(errors)
                    .collect::<Vec<_>>()
                    .join("; "),
            ));
        }
        Ok(tuned)
    }

    /// How many changes are in force.
    pub fn len(&self) -> usize {
        self.changes.len()
    }

    /// Whether nothing was changed (everything was already as the check recommends).
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Undoes the changes, newest first; returns what could not be undone.
    pub fn revert(mut self) -> Vec<String> {
        let changes = std::mem::take(&mut self.changes);
        apply::revert(&changes, &self.root)
    }
}

impl Drop for Tuned {
    fn drop(&mut self) {
        if self.changes.is_empty() {
            return;
        }
        for e in apply::revert(&self.changes, &self.root) {
            // Nobody is left to return this to: the revert script on disk is the way back.
            eprintln!("twelve doctor: revert failed: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn tree(name: &str) -> PathBuf {
        let root =
            std::env::temp_dir().join(format!("twelve-measure-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(root.join("proc/sys/net/core")).unwrap();
        fs::write(root.join("proc/sys/net/core/busy_poll"), "0\n").unwrap();
        root
    }

    fn busy_poll() -> Vec<(&'static str, Action)> {
        vec![(
            "net.busy_poll",
            Action::sysctl("net.core.busy_poll", "0", "50"),
        )]
    }

    fn read(root: &Path) -> String {
        fs::read_to_string(root.join("proc/sys/net/core/busy_poll")).unwrap()
    }

    #[test]
    fn revert_restores_the_file() {
        let root = tree("revert");
        let tuned = Tuned::apply(&busy_poll(), &root, &mut Vec::new()).unwrap();
        assert_eq!(read(&root), "50\n");
        assert_eq!(tuned.len(), 1);
        assert!(tuned.revert().is_empty());
        assert_eq!(read(&root), "0\n");
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_dropped_tuning_is_reverted() {
        let root = tree("drop");
        let result = std::panic::catch_unwind(|| {
            let _tuned = Tuned::apply(&busy_poll(), &root, &mut Vec::new()).unwrap();
            assert_eq!(read(&root), "50\n");
            panic!("the measurement failed");
        });
        assert!(result.is_err());
        assert_eq!(read(&root), "0\n");
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_failed_action_reverts_the_ones_before_it() {
        let root = tree("fail");
        let mut actions = busy_poll();
        actions.push((
            "net.busy_poll",
            Action::sysctl("net.core.missing", "0", "1"),
        ));
        let err = Tuned::apply(&actions, &root, &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("missing"), "{err}");
        assert_eq!(read(&root), "0\n");
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn the_planned_script_restores_what_the_probe_read() {
        let root = Path::new("/");
        let mut actions = busy_poll();
        actions.push((
            "net.qdisc",
            Action::run(&["tc", "x"], &["tc", "qdisc", "del", "dev", "lo", "root"]),
        ));
        actions.push(("x", Action::manual("reboot", "reboot again")));
        let script = apply::revert_script(&planned_changes(&actions, root), root);
        assert!(
            script.ends_with(
                "tc qdisc del dev lo root\nprintf '%s\\n' 0 > /proc/sys/net/core/busy_poll\n"
            ),
            "{script}"
        );
    }
}
