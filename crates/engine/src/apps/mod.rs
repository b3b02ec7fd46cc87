//! Ready-made routers for the benchmarks twelve enters, shared by the examples and the tests.

pub mod httparena;
