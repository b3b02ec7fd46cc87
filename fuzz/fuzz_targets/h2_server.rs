//! The server's HTTP/2 connection: no panic, the same steps and output at any split, only
//! well-formed frames out; see `twelve_http::fuzzing::h2_server_target`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| twelve_http::fuzzing::h2_server_target(data));
