//! Fixture trees for the integration tests: `this-host` (captured) plus overlay variants.
//!
//! A variant `fixtures/variants/NAME/` holds only the files that differ from `this-host`;
//! `fixtures/variants/NAME.remove` lists paths to delete from the copy (one per line).
#![allow(dead_code)] // each test binary uses a different subset

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;
use twelve_doctor::{ProbeOptions, Report};

/// Every variant under fixtures/variants (plus `this-host`).
pub const VARIANTS: &[&str] = &[
    "this-host",
    "mitigations-off",
    "irqbalance",
    "conntrack",
    "isolcpus",
    "nosy-neighbour",
    "audited",
    "auditd-etc",
    "netfilter-idle",
    "steal",
    "tuned",
    "multiqueue",
];

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A temporary copy of a fixture tree, removed on drop.
pub struct Tree {
    pub path: PathBuf,
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            let _ = fs::remove_file(&dst);
            std::os::unix::fs::symlink(fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if kind.is_dir() {
            copy_tree(&src, &dst);
        } else {
            fs::copy(&src, &dst).unwrap();
        }
    }
}

/// Builds the named fixture tree in a fresh temporary directory.
pub fn tree(variant: &str) -> Tree {
    static N: AtomicU32 = AtomicU32::new(0);
    let path = std::env::temp_dir().join(format!(
        "twelve-doctor-{variant}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = fs::remove_dir_all(&path);
    let dir = fixtures_dir();
    copy_tree(&dir.join("this-host"), &path);
    if variant != "this-host" {
        copy_tree(&dir.join("variants").join(variant), &path);
        let remove = dir.join("variants").join(format!("{variant}.remove"));
        if let Ok(list) = fs::read_to_string(remove) {
            for p in list.lines().filter(|l| !l.is_empty()) {
                fs::remove_dir_all(path.join(p)).unwrap();
            }
        }
    }
    Tree { path }
}

/// Probes a fixture tree with a zero steal window.
pub fn diagnose(root: &Path) -> Report {
    twelve_doctor::diagnose(&ProbeOptions {
        root: root.to_path_buf(),
        steal_window: Duration::ZERO,
    })
}

/// The report of a variant, computed once per test binary.
pub fn report(variant: &str) -> Report {
    static CACHE: OnceLock<Mutex<HashMap<String, Report>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(r) = cache.lock().unwrap().get(variant) {
        return r.clone();
    }
    let t = tree(variant);
    let r = diagnose(&t.path);
    cache.lock().unwrap().insert(variant.to_string(), r.clone());
    r
}
