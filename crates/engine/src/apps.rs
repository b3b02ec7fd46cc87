//! Applications built on the engine, shared by `twelve serve`, the embedded server of
//! `twelve bench` and `twelve sweep`, the engine's tests and its examples, so that each of
//! them serves (and measures) the same bytes: the TechEmpower endpoints, and HttpArena's engine
//! profiles (`contrib/httparena/` enters twelve there).

pub mod httparena;
pub mod techempower;
