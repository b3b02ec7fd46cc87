//! Per-process scratch directories under the system temp dir that do not pile up: a test
//! process's tree outlives it (statics are never dropped), so the next process sweeps the
//! trees of processes that no longer run.

use std::fs;
use std::path::{Path, PathBuf};

/// `<tmp>/<prefix>-<pid>`, created empty; first removes every `<prefix>-<pid>[-…]` whose
/// process is gone.
pub fn scratch_dir(prefix: &str) -> PathBuf {
    remove_stale(prefix);
    let dir = std::env::temp_dir().join(format!("{prefix}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("creating scratch directory {}: {e}", dir.display()));
    dir
}

/// Removes `<prefix>-<pid>` and `<prefix>-<pid>-<anything>` trees of processes that no longer
/// run; a tree of a live process (another test binary running now) is left alone.
pub fn remove_stale(prefix: &str) {
    let Ok(entries) = fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|rest| rest.strip_prefix('-'))
            .map(|rest| rest.split('-').next().unwrap_or(""))
        else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_process_tree_is_swept_and_a_live_one_kept() {
        let prefix = "twelve-scratch-test";
        // PID 0 never names a process directory in /proc; our own PID always does.
        let dead = std::env::temp_dir().join(format!("{prefix}-0-1"));
        let live = std::env::temp_dir().join(format!("{prefix}-{}-1", std::process::id()));
        let other = std::env::temp_dir().join(format!("{prefix}x-0"));
        for d in [&dead, &live, &other] {
            fs::create_dir_all(d).unwrap();
        }
        let mine = scratch_dir(prefix);
        assert!(!dead.exists(), "a dead process's tree stays");
        assert!(live.exists(), "a live process's tree was removed");
        assert!(other.exists(), "a tree of another prefix was removed");
        assert!(mine.is_dir());
        for d in [&live, &other, &mine] {
            fs::remove_dir_all(d).unwrap();
        }
    }
}
