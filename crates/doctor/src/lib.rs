//! twelve-doctor: see Cargo.toml description.
#![forbid(unsafe_code)]
