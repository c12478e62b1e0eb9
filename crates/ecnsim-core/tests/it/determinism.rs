//! The same scenario and seed give bit-identical results; seeds matter only
//! through the components that draw random numbers.

use crate::common::{dumbbell, run};

fn jittered() -> String {
    dumbbell(6, "5Mbps", "15ms", r#"{ type = "droptail", limit_packets = 20 }"#, "20s", "start_jitter = \"2s\"")
        .replace("duration = \"20s\"", "duration = \"20s\", warmup = \"3s\", sample_interval = \"250ms\"")
}

#[test]
fn same_scenario_and_seed_give_identical_digest() {
    let (_, a) = run(&jittered(), 42);
    let (_, b) = run(&jittered(), 42);
    // Debug text compares every value (NaN included, which `==` would not).
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    assert_eq!(a.digest(), b.digest());
}

#[test]
fn different_seeds_give_different_results() {
    let (_, a) = run(&jittered(), 1);
    let (_, b) = run(&jittered(), 2);
    assert_ne!(a.digest(), b.digest());
}

#[test]
fn running_in_chunks_gives_the_same_results_as_one_go() {
    let spec = ecnsim_core::ScenarioSpec::from_toml_str(&jittered()).unwrap();
    let mut sim = ecnsim_core::Simulation::new(&spec, Some(7)).unwrap();
    let mut t = ecnsim_core::SimTime::ZERO;
    while !sim.is_finished() {
        t = t.saturating_add(ecnsim_core::SimDuration::from_millis(333));
        sim.run_until(t).unwrap();
        assert!(sim.conservation().holds());
    }
    let (_, whole) = run(&jittered(), 7);
    assert_eq!(sim.results().digest(), whole.digest());
}

#[test]
fn adding_a_flow_does_not_shift_another_flows_random_stream() {
    // Flow names are the stream paths, so flow0..flow5's start times are
    // unchanged by a seventh flow.
    let six = jittered();
    let seven =
        dumbbell(7, "5Mbps", "15ms", r#"{ type = "droptail", limit_packets = 20 }"#, "20s", "start_jitter = \"2s\"")
            .replace("duration = \"20s\"", "duration = \"20s\", warmup = \"3s\", sample_interval = \"250ms\"");
    let starts = |t: &str| {
        let spec = ecnsim_core::ScenarioSpec::from_toml_str(t).unwrap();
        let sim = ecnsim_core::Simulation::new(&spec, Some(5)).unwrap();
        crate::common::f64s(&sim.results(), "flows", "start_s")
    };
    let a = starts(&six);
    let b = starts(&seven);
    assert_eq!(a[..], b[..6]);
    assert!(a.iter().all(|&s| (0.0..2.0).contains(&s)));
    assert!(a.windows(2).any(|w| w[0] != w[1]));
}

/// The `ns2-2001` profile draws each connection's tick phase (ns-2's `boot_time_`) from the
/// seed: same seed, same digest; another seed, another.
#[test]
fn ns2_profile_runs_are_deterministic_and_seeded() {
    let red = r#"{ type = "red", min_th = 5, max_th = 15 }"#;
    let t = dumbbell(6, "5Mbps", "15ms", red, "20s", "start_jitter = \"2s\"")
        .replace("duration = \"20s\"", "duration = \"20s\", profile = \"ns2-2001\", sample_interval = \"250ms\"");
    let (_, a) = run(&t, 3);
    let (_, b) = run(&t, 3);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    let (_, c) = run(&t, 4);
    assert_ne!(a.digest(), c.digest());
}
