//! The two programs every upgrade scenario runs against: `twelve serve`, and the engine's
//! example of an embedded server upgrading itself (crates/engine/examples/upgrade.rs), which
//! takes the same flags without the subcommand.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

#[derive(Clone, Copy, Debug)]
pub enum Program {
    /// `twelve serve`.
    Twelve,
    /// `crates/engine/examples/upgrade.rs`.
    Example,
}

impl Program {
    /// The executable.
    pub fn path(self) -> PathBuf {
        match self {
            Self::Twelve => PathBuf::from(env!("CARGO_BIN_EXE_twelve")),
            Self::Example => example().clone(),
        }
    }

    /// The arguments before the flags.
    pub fn subcommand(self) -> &'static [&'static str] {
        match self {
            Self::Twelve => &["serve"],
            Self::Example => &[],
        }
    }

    /// How the scenarios' summary lines name it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Twelve => "twelve",
            Self::Example => "engine example",
        }
    }
}

/// The example, built once per test process by the cargo that built this test, with its
/// profile and into its target directory. Cargo builds examples only for their own
/// package's tests (and `cargo test --workspace`); asking for it here makes
/// `cargo test --test upgrade` work on a clean clone too, and is a no-op when it is fresh.
fn example() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let exe = std::env::current_exe().unwrap();
        // This test is <target>/[<triple>/]<profile>/deps/upgrade-<hash>.
        let profile_dir = exe.parent().and_then(Path::parent).unwrap();
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") => "dev",
            Some(other) => other,
            None => panic!("no profile directory above {}", exe.display()),
        };
        let mut cargo = Command::new(env!("CARGO"));
        cargo
            .args(["build", "--quiet", "--message-format=json"])
            .args([
                "-p",
                "twelve-engine",
                "--example",
                "upgrade",
                "--profile",
                profile,
            ])
            .arg("--manifest-path")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"));
        // The target directory is the nearest one cargo marked with CACHEDIR.TAG; a directory
        // between it and the profile's is a `--target` triple.
        if let Some(target) = profile_dir
            .ancestors()
            .find(|d| d.join("CACHEDIR.TAG").exists())
        {
            cargo.arg("--target-dir").arg(target);
            if let Some(triple) = profile_dir.parent().filter(|p| *p != target) {
                cargo.arg("--target").arg(triple.file_name().unwrap());
            }
        }
        let out = cargo
            .output()
            .expect("running cargo build --example upgrade");
        assert!(
            out.status.success(),
            "cargo build -p twelve-engine --example upgrade: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "upgrade")
            .find_map(|m| m["executable"].as_str().map(PathBuf::from))
            .expect("cargo named no executable for the example upgrade")
    })
}
