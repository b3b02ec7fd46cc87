//! Chunked decoding: the same result at once, in two reads, byte by byte and in place; see
//! `twelve_http::fuzzing::chunked_target`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| twelve_http::fuzzing::chunked_target(data));
