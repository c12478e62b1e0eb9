//! The simulation: owns every arena, the scheduler and the random streams.
#![allow(missing_docs)]
use crate::{error::SimError, results::Results, spec::ScenarioSpec, time::SimTime};

/// Engine work counters, for the benchmark harness.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerfCounters {
    /// Events popped and run (stale, cancelled events included).
    pub events: u64,
    /// Packets that crossed one link (one per link traversal).
    pub packet_hops: u64,
}

/// Packet accounting: `sent == delivered + dropped + in_flight` always holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Conservation {
    /// Packets created by hosts.
    pub sent: u64,
    /// Packets that reached their destination host.
    pub delivered: u64,
    /// Packets dropped by a queue.
    pub dropped: u64,
    /// Packets queued, being serialised or propagating.
    pub in_flight: u64,
}

/// A running simulation.
#[derive(Debug)]
pub struct Simulation {}

impl Simulation {
    /// Validate `spec` and build the simulation; `seed` overrides the spec's seed.
    pub fn new(spec: &ScenarioSpec, seed: Option<u64>) -> Result<Self, SimError> {
        let _ = (spec, seed);
        todo!()
    }
    /// Current simulated time.
    pub fn now(&self) -> SimTime { todo!() }
    /// The end of the run (the scenario's duration).
    pub fn end_time(&self) -> SimTime { todo!() }
    /// True once the run reached its end time.
    pub fn is_finished(&self) -> bool { todo!() }
    /// Run every event due at or before `min(t, end_time)`, then set the clock there.
    pub fn run_until(&mut self, t: SimTime) { let _ = t; todo!() }
    /// Run to the end.
    pub fn run(&mut self) { todo!() }
    /// The results so far (complete once finished; partial otherwise, with meta `finished = "false"`).
    pub fn results(&self) -> Results { todo!() }
    /// Engine work counters.
    pub fn perf(&self) -> PerfCounters { todo!() }
    /// Packet accounting.
    pub fn conservation(&self) -> Conservation { todo!() }
}
