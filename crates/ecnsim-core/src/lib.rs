//! # ecnsim-core
//!
//! A packet-level discrete-event network simulator for studying TCP
//! congestion control, router queue management (AQM) and ECN. This crate is
//! the whole simulator: pure Rust, no I/O, no globals, no wall clock. The
//! `ecnsim` Python package drives it through the thin `ecnsim-py` bindings.
//!
//! ## Build, run, read
//!
//! ```
//! use ecnsim_core::{ScenarioSpec, Simulation};
//!
//! let spec = ScenarioSpec::from_toml_str(r#"
//!     simulation = { duration = "2s" }
//!     nodes = [ { name = "a", kind = "host" }, { name = "b", kind = "host" } ]
//!     links = [ { a = "a", b = "b", rate = "10Mbps", delay = "10ms" } ]
//!     flows = [ { src = "a", dst = "b", app = { type = "bulk", bytes = 100000 } } ]
//! "#).unwrap();
//! let mut sim = Simulation::new(&spec, Some(1)).unwrap();
//! sim.run().unwrap();
//! let results = sim.results();
//! let flows = results.table("flows").unwrap();
//! assert_eq!(flows.rows(), 1);
//! ```
//!
//! ## Written guarantees
//!
//! - **Units.** Time is an integer number of nanoseconds ([`SimTime`],
//!   [`SimDuration`]); rates are bit/s ([`BitRate`]); sizes are bytes and
//!   include all headers. Serialisation time is `ceil(bits * 1e9 / rate)` ns.
//! - **Event order.** Events run in order of `(time, sequence number)`, where
//!   the sequence number counts schedule calls: events due at the same
//!   nanosecond run in the order they were scheduled (FIFO). See [`sched`].
//! - **Determinism.** A run depends only on its scenario and seed: the same
//!   pair gives bit-identical [`Results`] (compare [`Results::digest`]) on any
//!   machine and in any order of runs. Each random component draws from its own
//!   stream derived from `(seed, component path)` ([`rng`]).
//! - **Progress.** Time arithmetic saturates at "never" instead of wrapping,
//!   and a run either advances in simulated time or stops with
//!   [`SimError::Runtime`] naming the component that keeps it at one instant.
//! - **Resources.** With [`SimOptions::max_memory`], a scenario whose memory
//!   estimate is larger is refused when built, and a run that outgrows it
//!   stops with [`SimError::Resource`]; the results so far stay readable.
//! - **Conservation.** Every packet a host sends is, at every instant,
//!   delivered to a host, dropped by a queue, or in flight (queued, being
//!   serialised, or propagating): [`Simulation::conservation`].

#![warn(missing_docs)]

mod app;
pub mod buffer;
mod builder;
mod collect;
pub mod error;
mod flow;
pub mod ids;
mod link;
pub mod memory;
mod node;
pub mod packet;
mod parse;
pub mod profile;
pub mod qdisc;
mod queue_resolve;
pub mod results;
pub mod rng;
pub mod sched;
pub mod sim;
pub use sim::external;
pub mod spec;
pub mod stats;
pub mod tcp;
pub mod template;
pub mod time;
pub mod trace;
mod validate;

pub use app::dist::Distribution;
pub use collect::FinishedRecords;
pub use error::SimError;
pub use memory::{MemoryEstimate, MemoryPart};
pub use results::{Column, ColumnData, Results, Table};
pub use sim::{Conservation, LiveState, PerfCounters, SimOptions, Simulation};
pub use spec::ScenarioSpec;
pub use time::{BitRate, SimDuration, SimTime};
pub use trace::TraceFilter;

/// The version of this crate, recorded in every run's metadata.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
