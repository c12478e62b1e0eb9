//! Scenario tests: whole simulations through the public API, one binary.

mod accecn;
mod apps;
mod aqm;
mod bbr;
mod common;
mod determinism;
mod dualpi2;
mod flow_stop;
mod fq_codel;
mod fq_pie;
mod fuzz;
mod host_burstiness;
mod incast;
mod layers;
mod linux6;
mod modern_cc;
mod ns2_dialogues;
mod prague;
mod reliability;
mod scenarios;
mod shared_buffer;
mod tcp_variants;
mod templates;
mod trace;
