//! Scenario tests: whole simulations through the public API, one binary.

mod apps;
mod aqm;
mod common;
mod determinism;
mod dualpi2;
mod fuzz;
mod layers;
mod ns2_dialogues;
mod reliability;
mod scenarios;
mod tcp_variants;
mod templates;
mod trace;
