//! Run a scenario file and print its packet-hops, events and result digests
//! (development aid for performance work: an optimization must leave the
//! digests unchanged, and `valgrind --tool=callgrind` on two run lengths
//! gives instructions per packet-hop without Python in the way).
//!
//! `cargo run --release --example digest -- SCENARIO.{toml,json} [UNTIL_S] [--trace]`
//! prints one line: `file hops events results-digest trace-digest`.
#![allow(clippy::print_stdout, missing_docs)]
use std::process::ExitCode;

use ecnsim_core::{Results, ScenarioSpec, SimDuration, SimTime, Simulation, TraceFilter};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

/// A scenario the core cannot read (a sweep file, Python-only fields) is an error line and
/// exit status 2, not a panic.
fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().ok_or("usage: digest SCENARIO [UNTIL_S] [--trace]")?;
    let until: Option<f64> = match args.get(1).filter(|a| *a != "--trace") {
        None => None,
        Some(s) => match s.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Some(v),
            _ => return Err(format!("UNTIL_S must be a number of seconds >= 0, got {s:?}")),
        },
    };
    let trace = args.iter().any(|a| a == "--trace");
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let spec = if path.ends_with(".json") {
        ScenarioSpec::from_json_file_str(&text).or_else(|_| ScenarioSpec::from_json_str(&text))
    } else {
        ScenarioSpec::from_toml_str(&text)
    }
    .map_err(|e| format!("{path}: {e}"))?;
    let mut sim = Simulation::new(&spec, None).map_err(|e| format!("{path}: {e}"))?;
    if trace {
        sim.enable_trace(&TraceFilter::default()).map_err(|e| format!("trace: {e}"))?;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let end = until.map_or(sim.end_time(), |s| SimTime::from_nanos((s * 1e9) as u64));
    let mut traced = Results { tables: vec![], meta: vec![] };
    // Run in chunks so the trace is drained as a binding would.
    let step = SimDuration::from_millis(500);
    let mut t = SimTime::ZERO;
    while t < end {
        t = (t + step).min(end);
        sim.run_until(t).map_err(|e| format!("run: {e}"))?;
        if trace {
            traced.tables.push(sim.drain_trace());
        }
    }
    if !sim.conservation().holds() {
        return Err("conservation does not hold".to_owned());
    }
    let p = sim.perf();
    println!("{path} {} {} {:016x} {:016x}", p.packet_hops, p.events, sim.results().digest(), traced.digest());
    Ok(())
}
