//! How a test that cannot run on this host says so, and how CI refuses to let it.
//!
//! Rust's test harness has no "skipped" outcome: a test that returns early counts as passed.
//! [`skip_or_fail`] prints `skipped: <test>: <reason>` where `cargo test` shows it even while it
//! captures the output of passing tests, and under `TWELVE_REQUIRE_ALL_TESTS=1` (set by
//! `.ci/run`, which installs what every test needs) it fails the test instead, so CI never
//! passes a test that did not run.

use std::io::Write;

/// The variable that makes every skip a failure; `.ci/run` sets it to `1`.
const REQUIRE_ALL: &str = "TWELVE_REQUIRE_ALL_TESTS";

/// Reports that the calling test cannot run here, and why; the caller returns right after.
/// Panics instead when `TWELVE_REQUIRE_ALL_TESTS=1`.
#[track_caller]
pub fn skip_or_fail(reason: impl std::fmt::Display) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    if std::env::var_os(REQUIRE_ALL).is_some_and(|v| v == "1") {
        panic!("{REQUIRE_ALL}=1 and {test} would skip: {reason}");
    }
    // Written to the stream itself: the harness captures `eprintln!` of a passing test, and a
    // skip must be seen.
    let _ = writeln!(std::io::stderr().lock(), "skipped: {test}: {reason}");
}
