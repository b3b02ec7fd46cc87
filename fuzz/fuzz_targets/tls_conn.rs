//! Bytes through the TLS layer into the connection state machine; see
//! `twelve_engine::fuzzing::tls_conn_target`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| twelve_engine::fuzzing::tls_conn_target(data));
