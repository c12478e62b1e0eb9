//! `[topology]` templates and `[[flow_groups]]` through the public API: a
//! template runs exactly as the scenario written out by hand, flow groups
//! carry their group into the results, and start jitter is deterministic.

use ecnsim_core::{ColumnData, Results, ScenarioSpec, Simulation};

use crate::common::{f64s, run, u64s};

fn example(name: &str) -> String {
    let path = format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn strs(r: &Results, table: &str, col: &str) -> Vec<String> {
    match r.table(table).and_then(|t| t.column(col)) {
        Some(ColumnData::Str(v)) => v.clone(),
        other => panic!("{table}.{col} is not a string column: {other:?}"),
    }
}

/// A short run of `text` (its duration cut to `duration`).
fn short(text: &str, duration: &str) -> String {
    let mut spec = ScenarioSpec::from_toml_str(text).unwrap();
    spec.simulation.duration =
        ScenarioSpec::from_toml_str(&format!("simulation = {{ duration = \"{duration}\" }}\nnodes = []\nlinks = []"))
            .unwrap()
            .simulation
            .duration;
    spec.simulation.warmup = None;
    spec.simulation.sample_interval = None;
    // Back through JSON: what the Python layer sends.
    spec.to_json()
}

fn run_json(json: &str, seed: u64) -> Results {
    let spec = ScenarioSpec::from_json_str(json).unwrap();
    let mut sim = Simulation::new(&spec, Some(seed)).unwrap_or_else(|e| panic!("{e}"));
    sim.run().unwrap();
    assert!(sim.conservation().holds());
    sim.results()
}

#[test]
fn the_dumbbell_template_is_the_scenario_written_out() {
    let template = ScenarioSpec::from_toml_str(&example("dumbbell.toml")).unwrap();
    let by_hand = ScenarioSpec::from_toml_str(&example("dumbbell_explicit.toml")).unwrap();
    assert!(template.has_templates() && !by_hand.has_templates());
    assert_eq!(template.expanded().unwrap().to_json(), by_hand.to_json());
    let a = run_json(&short(&example("dumbbell.toml"), "3s"), 5);
    let b = run_json(&short(&example("dumbbell_explicit.toml"), "3s"), 5);
    assert_eq!(a.digest(), b.digest(), "same scenario, same seed: bit-identical results");
    assert_eq!(strs(&a, "flows", "group"), ["flow"; 4]);
}

#[test]
fn flow_groups_show_their_group_and_jitter_is_deterministic_per_seed() {
    let text = short(&example("hetero_rtt.toml"), "2s");
    let a = run_json(&text, 1);
    let again = run_json(&text, 1);
    let other = run_json(&text, 2);
    assert_eq!(a.digest(), again.digest());
    let starts = f64s(&a, "flows", "start_s");
    assert_eq!(starts, f64s(&again, "flows", "start_s"));
    assert_ne!(starts, f64s(&other, "flows", "start_s"), "another seed draws other starts");
    assert!(starts.iter().all(|&s| (0.0..1.0).contains(&s)), "{starts:?}");
    // Every flow its own draw: no two of 30 alike.
    let mut sorted = starts.clone();
    sorted.sort_by(f64::total_cmp);
    sorted.dedup();
    assert_eq!(sorted.len(), 30);
    let groups = strs(&a, "flows", "group");
    assert_eq!(groups.iter().filter(|g| *g == "fragile").count(), 10);
    assert_eq!(groups[10], "average");
    assert_eq!(strs(&a, "flows", "flow")[10], "average0");
}

#[test]
fn a_flow_keeps_its_start_when_groups_are_added_around_it() {
    // Jitter draws from the flow's own stream (named by the flow): adding a group changes nothing else.
    let one = short(&example("hetero_rtt.toml"), "1s");
    let mut spec = ScenarioSpec::from_json_str(&one).unwrap();
    spec.flow_groups.remove(1);
    let fewer = run_json(&spec.to_json(), 3);
    let all = run_json(&one, 3);
    let start_of = |r: &Results, name: &str| {
        let i = strs(r, "flows", "flow").iter().position(|f| f == name).unwrap();
        f64s(r, "flows", "start_s")[i]
    };
    for name in ["fragile3", "robust7"] {
        assert_eq!(start_of(&fewer, name), start_of(&all, name), "{name}");
    }
}

#[test]
fn the_parking_lot_routes_long_flows_over_every_hop_and_cross_flows_over_one() {
    let text = short(&example("parking_lot.toml"), "2s");
    let r = run_json(&text, 1);
    assert_eq!(strs(&r, "flows", "group"), ["long", "long", "cross", "cross", "cross", "cross", "cross", "cross"]);
    // Each bottleneck direction r{h} -> r{h+1} carries the long flows and its own cross pairs.
    let queues = strs(&r, "queues", "queue");
    for h in 0..3 {
        assert!(queues.contains(&format!("r{h}->r{}", h + 1)), "{queues:?}");
    }
    // One-way delay at least the propagation: long flows cross three hops (3 * 10 ms + 2 * 1 ms
    // of access), cross flows one (10 ms + 2 * 1 ms).
    let owd = f64s(&r, "flows", "mean_owd_s");
    assert!(owd[..2].iter().all(|&d| d >= 0.032) && owd[2..].iter().all(|&d| d >= 0.012), "{owd:?}");
}

#[test]
fn a_template_scenario_runs_from_toml_as_from_its_expansion() {
    let text = example("parking_lot.toml").replace("duration = \"30s\", warmup = \"5s\"", "duration = \"1s\"");
    let (_, from_toml) = run(&text, 4);
    let spec = ScenarioSpec::from_toml_str(&text).unwrap();
    let expanded = run_json(&spec.expanded().unwrap().to_json(), 4);
    assert_eq!(from_toml.digest(), expanded.digest());
}

#[test]
fn sampling_can_be_limited_to_a_group() {
    let mut spec = ScenarioSpec::from_json_str(&short(&example("hetero_rtt.toml"), "2s")).unwrap();
    let interval = ScenarioSpec::from_toml_str(
        "simulation = { duration = \"1s\", sample_interval = \"100ms\" }\nnodes = []\nlinks = []",
    )
    .unwrap()
    .simulation
    .sample_interval;
    spec.simulation.sample_interval = interval;
    spec.simulation.sample_flows = Some(vec!["fragile".into()]);
    let r = run_json(&spec.to_json(), 1);
    let ids = u64s(&r, "flow_series", "flow_id");
    let groups = strs(&r, "flows", "group");
    assert!(!ids.is_empty(), "the fragile flows are sampled");
    #[allow(clippy::cast_possible_truncation)]
    let sampled: std::collections::BTreeSet<&str> = ids.iter().map(|&i| groups[i as usize].as_str()).collect();
    assert_eq!(sampled.into_iter().collect::<Vec<_>>(), ["fragile"]);
    // A name that is neither a flow, an app nor a group is refused, with the groups listed.
    spec.simulation.sample_flows = Some(vec!["nope".into()]);
    let err = Simulation::new(&spec, None).unwrap_err().to_string();
    assert!(err.contains("simulation.sample_flows[0]") && err.contains("fragile"), "{err}");
}
