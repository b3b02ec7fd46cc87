//! twelve-load: see Cargo.toml description.
#![forbid(unsafe_code)]
