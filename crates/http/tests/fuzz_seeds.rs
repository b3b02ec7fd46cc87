//! Runs the fuzz-target bodies over the committed seed corpus in fuzz/seeds/, so CI exercises
//! them without a fuzzer; crashers found by fuzzing are added there as regression seeds.

use std::fs;
use std::path::Path;

fn run_seeds(target: &str, body: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/seeds")
        .join(target);
    let mut count = 0;
    for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let data = fs::read(&path).unwrap();
        body(&data);
        // Every split point too: the targets take their split from the first two bytes.
        for split in 0..=data.len().saturating_sub(2).min(400) {
            let mut seeded = data.clone();
            let seed = u16::from_le_bytes([data[0], *data.get(1).unwrap_or(&0)]) & 1;
            seeded[..2].copy_from_slice(&((split as u16) << 1 | seed).to_le_bytes());
            body(&seeded);
        }
        count += 1;
    }
    assert!(count > 0, "no seeds in {}", dir.display());
}

#[test]
fn parse_request_seeds() {
    run_seeds("parse_request", twelve_http::fuzzing::parse_request_target);
}

#[test]
fn chunked_seeds() {
    run_seeds("chunked", twelve_http::fuzzing::chunked_target);
}

#[test]
fn parse_response_seeds() {
    run_seeds(
        "parse_response",
        twelve_http::fuzzing::parse_response_target,
    );
}

#[test]
fn h2_frame_seeds() {
    run_seeds("h2_frame", twelve_http::fuzzing::h2_frame_target);
}

#[test]
fn h2_server_seeds() {
    run_seeds("h2_server", twelve_http::fuzzing::h2_server_target);
}

#[test]
fn hpack_seeds() {
    run_seeds("hpack", twelve_http::fuzzing::hpack_target);
}
