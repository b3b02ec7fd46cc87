//! HPACK header blocks: no panic, errors and the list limit agree between two decoders whose
//! tables stay in step, and decoded lists round-trip through the encoder; see
//! `twelve_http::fuzzing::hpack_target`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| twelve_http::fuzzing::hpack_target(data));
