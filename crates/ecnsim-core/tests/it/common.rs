//! Shared helpers: scenario text builders and result accessors.

use ecnsim_core::{ColumnData, Results, ScenarioSpec, Simulation};

/// A dumbbell: `n` senders s<i> -> r1 ==bottleneck== r2 -> c<i> receivers.
/// `extra_flow` is appended to every flow's inline table.
pub(crate) fn dumbbell(
    n: usize,
    bottleneck: &str,
    delay: &str,
    queue: &str,
    duration: &str,
    flow_extra: &str,
) -> String {
    let mut nodes =
        vec![r#"{ name = "r1", kind = "router" }"#.to_owned(), r#"{ name = "r2", kind = "router" }"#.to_owned()];
    let mut links =
        vec![format!(r#"{{ a = "r1", b = "r2", rate = "{bottleneck}", delay = "{delay}", queue = {queue} }}"#)];
    let mut flows = Vec::new();
    for i in 0..n {
        nodes.push(format!(r#"{{ name = "s{i}", kind = "host" }}"#));
        nodes.push(format!(r#"{{ name = "c{i}", kind = "host" }}"#));
        links.push(format!(r#"{{ a = "s{i}", b = "r1", rate = "1Gbps", delay = "1ms", queue = {{ type = "droptail", limit_packets = 10000 }} }}"#));
        links.push(format!(r#"{{ a = "r2", b = "c{i}", rate = "1Gbps", delay = "1ms", queue = {{ type = "droptail", limit_packets = 10000 }} }}"#));
        let sep = if flow_extra.is_empty() { "" } else { ", " };
        flows.push(format!(r#"{{ src = "s{i}", dst = "c{i}"{sep}{flow_extra} }}"#));
    }
    format!(
        "simulation = {{ duration = \"{duration}\" }}\nnodes = [{}]\nlinks = [{}]\nflows = [{}]\n",
        nodes.join(", "),
        links.join(", "),
        flows.join(", ")
    )
}

/// Parse, build and run to the end; asserts conservation at the end.
pub(crate) fn run(toml: &str, seed: u64) -> (Simulation, Results) {
    let spec = ScenarioSpec::from_toml_str(toml).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    let mut sim = Simulation::new(&spec, Some(seed)).unwrap_or_else(|e| panic!("{e}"));
    sim.run().unwrap();
    assert_conservation(&sim);
    let r = sim.results();
    (sim, r)
}

/// Every packet sent is delivered, dropped or still in flight.
pub(crate) fn assert_conservation(sim: &Simulation) {
    let c = sim.conservation();
    assert!(c.holds(), "conservation broken: {c:?}");
    assert!(c.sent > 0, "nothing was sent");
}

pub(crate) fn f64s(r: &Results, table: &str, col: &str) -> Vec<f64> {
    match r.table(table).and_then(|t| t.column(col)) {
        Some(ColumnData::F64(v)) => v.clone(),
        other => panic!("{table}.{col} is not an f64 column: {other:?}"),
    }
}

pub(crate) fn u64s(r: &Results, table: &str, col: &str) -> Vec<u64> {
    match r.table(table).and_then(|t| t.column(col)) {
        Some(ColumnData::U64(v)) => v.clone(),
        other => panic!("{table}.{col} is not a u64 column: {other:?}"),
    }
}

/// Jain's fairness index (Jain, Chiu & Hawe 1984): (sum x)^2 / (n * sum x^2).
pub(crate) fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * sq)
}
