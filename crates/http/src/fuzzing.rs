//! Fuzz-target bodies: plain functions that check the codec's invariants on arbitrary bytes.
//! cargo-fuzz calls them from fuzz/, and the test suite runs them over fuzz/seeds/.
