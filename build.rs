//! Build script: records the git commit and the target CPU features for `twelve --version`.
use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|| "unknown".to_owned());
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .is_some_and(|o| !o.stdout.is_empty());
    let commit = if dirty {
        format!("{commit}-dirty")
    } else {
        commit
    };
    println!("cargo:rustc-env=TWELVE_GIT_COMMIT={commit}");

    // Only the features that matter for parsing and hashing speed, in a stable order.
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    let wanted = ["sse4.2", "avx2", "avx512f", "bmi2", "neon"];
    let have: Vec<&str> = wanted
        .iter()
        .copied()
        .filter(|w| features.split(',').any(|f| f == *w))
        .collect();
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let feat = if have.is_empty() {
        "baseline".to_owned()
    } else {
        have.join(",")
    };
    println!("cargo:rustc-env=TWELVE_TARGET_FEATURES={arch} {feat}");
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/index");
    println!("cargo:rerun-if-env-changed=RUSTFLAGS");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
}
