//! twelve-engine: see Cargo.toml description.
#![forbid(unsafe_code)]
