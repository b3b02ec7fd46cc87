//! Request-head parsing: invariants, split invariance and the differential check against
//! httparse, all in `twelve_http::fuzzing::parse_request_target`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| twelve_http::fuzzing::parse_request_target(data));
