//! # ecnsim-emu
//!
//! Real Linux hosts joined through ecnsim's simulated links and queue
//! disciplines, in real time. Each host of a scenario lives in a network
//! namespace with a TUN device; [`Emulator`] steps the core's sans-IO
//! [`ecnsim_core::Simulation`] against the monotonic clock, carrying the raw
//! IPv4 packets the hosts' own TCP stacks send through the scenario's routers,
//! links and queues (RED, PI, REM, CoDel, PIE, the threshold marker, ...),
//! CE-marking them in place when a queue marks.
//!
//! The core stays free of I/O and wall clock; everything that touches the
//! operating system is here, and the only `unsafe` code is in the private
//! `sys` module. Setting up the namespaces, addresses and TCP settings, and
//! running the traffic, is the `ecnsim emulate` command's job (Python,
//! `ecnsim.emulation`).

#![warn(missing_docs)]

mod driver;
mod histogram;
mod ipv4;
mod pcap;
mod sys;

pub use driver::{EmuConfig, EmuError, EmuReport, Emulator, HostPort, BUFFER_BYTES};
pub use histogram::Histogram;
