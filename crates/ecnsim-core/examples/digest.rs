//! Run a scenario file and print its packet-hops, events and result digests
//! (development aid for performance work: an optimization must leave the
//! digests unchanged, and `valgrind --tool=callgrind` on two run lengths
//! gives instructions per packet-hop without Python in the way).
//!
//! `cargo run --release --example digest -- SCENARIO.{toml,json} [UNTIL_S] [--trace]`
//! prints one line: `file hops events results-digest trace-digest`.
#![allow(clippy::print_stdout, missing_docs)]
use ecnsim_core::{Results, ScenarioSpec, SimDuration, SimTime, Simulation, TraceFilter};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().expect("usage: digest SCENARIO [UNTIL_S] [--trace]");
    let until: Option<f64> = args.get(1).and_then(|s| s.parse().ok());
    let trace = args.iter().any(|a| a == "--trace");
    let text = std::fs::read_to_string(path).expect("readable scenario file");
    let spec = if path.ends_with(".json") {
        ScenarioSpec::from_json_file_str(&text).or_else(|_| ScenarioSpec::from_json_str(&text))
    } else {
        ScenarioSpec::from_toml_str(&text)
    }
    .expect("valid scenario");
    let mut sim = Simulation::new(&spec, None).expect("buildable scenario");
    if trace {
        sim.enable_trace(&TraceFilter::default()).expect("trace everything");
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let end = until.map_or(sim.end_time(), |s| SimTime::from_nanos((s * 1e9) as u64));
    let mut traced = Results { tables: vec![], meta: vec![] };
    // Run in chunks so the trace is drained as a binding would.
    let step = SimDuration::from_millis(500);
    let mut t = SimTime::ZERO;
    while t < end {
        t = (t + step).min(end);
        sim.run_until(t).expect("run");
        if trace {
            traced.tables.push(sim.drain_trace());
        }
    }
    assert!(sim.conservation().holds(), "conservation");
    let p = sim.perf();
    println!("{path} {} {} {:016x} {:016x}", p.packet_hops, p.events, sim.results().digest(), traced.digest());
}
