//! HTTP/2 frames: no panic, canonical re-encoding, the same frames at any split; see
//! `twelve_http::fuzzing::h2_frame_target`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| twelve_http::fuzzing::h2_frame_target(data));
