//! twelve-report: see Cargo.toml description.
#![forbid(unsafe_code)]
