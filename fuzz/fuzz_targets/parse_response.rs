//! Client-side response parsing (twelve_http::client): split invariance and bounds; see
//! `twelve_http::fuzzing::parse_response_target`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| twelve_http::fuzzing::parse_response_target(data));
