//! Scenario tests: whole simulations through the public API, one binary.

mod common;
mod determinism;
mod scenarios;
