//! Reliability (issue 17): extreme but valid inputs run to completion with
//! sane results, nonsense is refused at validation, and a run can always be
//! stopped: by cancellation, by the memory limit, by the progress guard.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ecnsim_core::{ScenarioSpec, SimError, SimOptions, SimTime, Simulation};

use crate::common::{assert_conservation, u64s};

/// Two hosts over a 10 Mb/s link and one workload `model` (an inline table).
fn one_app(model: &str, duration: &str) -> String {
    format!(
        r#"
simulation = {{ duration = "{duration}" }}
nodes = [ {{ name = "a", kind = "host" }}, {{ name = "b", kind = "host" }} ]
links = [ {{ a = "a", b = "b", rate = "10Mbps", delay = "1ms", queue = {{ type = "droptail", limit_packets = 1000 }} }} ]
[[apps]]
clients = ["a"]
servers = ["b"]
model = {model}
"#
    )
}

fn run_text(text: &str) -> ecnsim_core::Results {
    let spec = ScenarioSpec::from_toml_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let mut sim = Simulation::new(&spec, Some(1)).unwrap_or_else(|e| panic!("{e}\n{text}"));
    sim.run().unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(sim.is_finished());
    assert_conservation(&sim);
    sim.results()
}

fn validate_err(text: &str) -> SimError {
    let spec = ScenarioSpec::from_toml_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    spec.validate().expect_err(text)
}

fn transactions(r: &ecnsim_core::Results) -> usize {
    r.table("records").unwrap().rows()
}

// --- Item 1: time never wraps -----------------------------------------------------

/// Each distribution with parameters that pass validation but whose draws can
/// be far longer than u64 nanoseconds hold: the think time saturates at
/// "never", so a 10 s netperf TCP_CRR client completes its first transaction
/// and hardly any more (before the fix, wrapped time gave as many
/// transactions as a zero think time).
#[test]
fn extreme_think_times_saturate_instead_of_wrapping() {
    let zero =
        transactions(&run_text(&one_app(r#"{ type = "crr", think_time = { type = "constant", value = 0 } }"#, "10s")));
    assert!(zero > 100, "{zero}");
    let cases = [
        // The largest time validation allows: one transaction in 10 s.
        (r#"{ type = "constant", value = 1e6 }"#, 1),
        (r#"{ type = "uniform", min = 1e6, max = 1e6 }"#, 1),
        (r#"{ type = "exponential", mean = 1e6 }"#, 1),
        (r#"{ type = "bounded_pareto", shape = 0.01, min = 1e5, max = 1e6 }"#, 1),
        (r#"{ type = "empirical", points = [[1e6, 0], [1e6, 1]] }"#, 1),
        (r#"{ type = "discrete", values = [1e6], weights = [1] }"#, 1),
        // Heavy tails: draws of 1e29 s and more, far beyond u64 ns.
        (r#"{ type = "pareto", shape = 0.01, scale = 0.1 }"#, 2),
        (r#"{ type = "lognormal", mu = 13.8, sigma = 60 }"#, 3),
        // Median exp(13.8) = 9.8e5 s (the cutoff holds half the mass), a tail of shape 0.01 above it.
        (r#"{ type = "lognormal_pareto", mu = 13.8, sigma = 60, cutoff = 1e6, shape = 0.01 }"#, 3),
    ];
    for (think, at_most) in cases {
        let r = run_text(&one_app(&format!(r#"{{ type = "crr", think_time = {think} }}"#), "10s"));
        let n = transactions(&r);
        assert!((1..=at_most).contains(&n), "{think}: {n} transactions, expected 1..={at_most}");
    }
}

/// An on/off source whose off periods are drawn from a Pareto with shape
/// 0.01: almost every one lasts "forever", so it sends about one on period's
/// datagrams (0.5 s of 10), far fewer than an always-on source.
#[test]
fn heavy_tailed_on_off_periods_saturate() {
    let cbr = run_text(&one_app(r#"{ type = "cbr", rate = "1Mbps" }"#, "10s"));
    let always = u64s(&cbr, "records", "request_bytes")[0];
    let r = run_text(&one_app(
        r#"{ type = "onoff", rate = "1Mbps", on = { type = "constant", value = 0.5 }, off = { type = "pareto", shape = 0.01, scale = 0.1 } }"#,
        "10s",
    ));
    let sent = u64s(&r, "records", "request_bytes")[0];
    assert!(sent > 0 && sent * 10 < always, "{sent} vs {always}");
}

// --- Items 2 and 4: nonsense refused at validation --------------------------------

#[test]
fn periods_that_cannot_advance_the_clock_are_refused() {
    for (on, off) in [
        (r#"{ type = "constant", value = 0 }"#, r#"{ type = "constant", value = 0 }"#),
        (r#"{ type = "constant", value = 1e-300 }"#, r#"{ type = "constant", value = 1e-300 }"#),
        (r#"{ type = "exponential", mean = 1e-12 }"#, r#"{ type = "constant", value = 1 }"#),
        (r#"{ type = "uniform", min = 0, max = 1e-10 }"#, r#"{ type = "constant", value = 1 }"#),
    ] {
        let e =
            validate_err(&one_app(&format!(r#"{{ type = "onoff", rate = "1Mbps", on = {on}, off = {off} }}"#), "1s"));
        assert_eq!(e.path(), "apps[0].model.on", "{e}");
        assert!(e.to_string().contains("at least 1 ns"), "{e}");
    }
}

#[test]
fn udp_rates_beyond_the_clock_resolution_are_refused() {
    let e = validate_err(&one_app(r#"{ type = "cbr", rate = "10000Gbps" }"#, "1s"));
    assert_eq!(e.path(), "apps[0].model.rate");
    assert!(e.to_string().contains("at most 8224Gbps"), "{e}");
    // The largest allowed rate for 1000-byte payloads is accepted.
    let spec = ScenarioSpec::from_toml_str(&one_app(r#"{ type = "cbr", rate = "8224Gbps" }"#, "1s")).unwrap();
    spec.validate().unwrap();
}

#[test]
fn absurd_times_in_distributions_are_refused() {
    for (model, field) in [
        (r#"{ type = "onoff", rate = "1Mbps", off = { type = "constant", value = 1e12 } }"#, "off"),
        (r#"{ type = "crr", think_time = { type = "constant", value = 1e300 } }"#, "think_time"),
        (r#"{ type = "rr", think_time = { type = "exponential", mean = 1e7 } }"#, "think_time"),
        (r#"{ type = "http", think_time = { type = "uniform", min = 1, max = 2e6 } }"#, "think_time"),
        (
            r#"{ type = "websessions", session_rate = 1, inter_page = { type = "pareto", shape = 1.5, scale = 1e7 } }"#,
            "inter_page",
        ),
    ] {
        let e = validate_err(&one_app(model, "1s"));
        assert_eq!(e.path(), format!("apps[0].model.{field}"), "{e}");
        assert!(e.to_string().contains("<= 1000000 s"), "{e}");
    }
}

#[test]
fn web_receive_windows_below_one_segment_are_refused() {
    for window in [
        r#"{ type = "constant", value = 0 }"#,
        r#"{ type = "constant", value = 1000 }"#,
        r#"{ type = "discrete", values = [500, 64000], weights = [0.1, 0.9] }"#,
        r#"{ type = "exponential", mean = 64000 }"#,
    ] {
        let e = validate_err(&one_app(
            &format!(r#"{{ type = "websessions", session_rate = 1, rcv_window = {window} }}"#),
            "1s",
        ));
        assert_eq!(e.path(), "apps[0].model.rcv_window", "{e}");
        assert!(e.to_string().contains("must be >= mss (1460 B"), "{e}");
    }
}

#[test]
fn names_must_be_printable_identifiers() {
    let base = one_app(r#"{ type = "cbr", rate = "1Mbps" }"#, "1s");
    // TOML string bodies.
    for (bad, fragment) in [
        (r"a\u200B", "U+200B"),
        (r"a\u001B[31m", "U+001B"),
        (r"a\nb", "U+000A"),
        (" a", "must not begin or end with a space"),
        ("a,b", "comma"),
    ] {
        let text = base.replace(r#"{ name = "a", kind"#, &format!("{{ name = \"{bad}\", kind"));
        let text = text.replace(r#"clients = ["a"]"#, &format!("clients = [\"{bad}\"]"));
        let text = text.replace(r#"{ a = "a","#, &format!("{{ a = \"{bad}\","));
        let e = validate_err(&text);
        assert_eq!(e.path(), "nodes[0].name", "{bad:?}: {e}");
        assert!(e.to_string().contains(fragment), "{bad:?}: {e}");
    }
    // Letters of any script are fine.
    let text = base.replace(r#""a""#, r#""nœud-α""#);
    ScenarioSpec::from_toml_str(&text).unwrap().validate().unwrap();
}

// --- Items 2 and 3: cancellation and the memory limit -----------------------------

fn big_dumbbell() -> ScenarioSpec {
    let text = crate::common::dumbbell(4, "10Mbps", "10ms", r#"{ type = "droptail", limit_packets = 50 }"#, "100s", "");
    ScenarioSpec::from_toml_str(&text).unwrap()
}

#[test]
fn a_raised_cancel_flag_stops_the_run_and_the_run_resumes() {
    let spec = big_dumbbell();
    let cancel = Arc::new(AtomicBool::new(false));
    let options = SimOptions { seed: Some(1), cancel: Some(Arc::clone(&cancel)), ..SimOptions::default() };
    let mut sim = Simulation::with_options(&spec, &options).unwrap();
    sim.run_until(SimTime::from_secs(1)).unwrap();
    cancel.store(true, Ordering::Relaxed);
    assert_eq!(sim.run(), Err(SimError::Cancelled));
    let stopped_at = sim.now();
    assert!(stopped_at < SimTime::from_secs(10), "{stopped_at}");
    assert_conservation(&sim);
    cancel.store(false, Ordering::Relaxed);
    sim.run().unwrap();
    // Cancelling and resuming does not change the results.
    let mut whole = Simulation::new(&spec, Some(1)).unwrap();
    whole.run().unwrap();
    assert_eq!(sim.results().digest(), whole.results().digest());
    // A raised flag also stops a build.
    cancel.store(true, Ordering::Relaxed);
    assert_eq!(Simulation::with_options(&spec, &options).err(), Some(SimError::Cancelled));
}

#[test]
fn a_scenario_larger_than_the_memory_limit_is_refused_with_its_estimate() {
    let mut spec = big_dumbbell();
    spec.simulation.sample_interval = Some(ecnsim_core::spec::TimeValue(10_000));
    let estimate = spec.memory_estimate();
    assert_eq!(estimate.parts[0].path, "simulation.sample_interval");
    let options = SimOptions { max_memory: Some(estimate.total_bytes() / 2), ..SimOptions::default() };
    let e = Simulation::with_options(&spec, &options).unwrap_err();
    assert!(matches!(e, SimError::Resource { .. }), "{e}");
    assert_eq!(e.path(), "simulation.sample_interval");
    assert!(e.to_string().contains("time series of 10000001 samples"), "{e}");
    let options = SimOptions { max_memory: Some(estimate.total_bytes() * 2), ..SimOptions::default() };
    Simulation::with_options(&spec, &options).unwrap();
}

#[test]
fn a_run_that_outgrows_the_memory_limit_stops_and_keeps_its_results() {
    // Closed-loop connections: not in the estimate, watched while running.
    let text = one_app(r#"{ type = "crr" }"#, "100s");
    let spec = ScenarioSpec::from_toml_str(&text).unwrap();
    let limit = spec.memory_estimate().total_bytes() + 2_000_000;
    let options = SimOptions { max_memory: Some(limit), ..SimOptions::default() };
    let mut sim = Simulation::with_options(&spec, &options).unwrap();
    let e = sim.run().unwrap_err();
    assert!(matches!(e, SimError::Resource { .. }), "{e}");
    assert_eq!(e.path(), "apps", "{e}");
    assert!(e.to_string().contains("results up to here are kept"), "{e}");
    assert!(!sim.is_finished());
    assert_conservation(&sim);
    // Stopped for good: the same error again, and the partial results say why.
    assert_eq!(sim.run().unwrap_err(), e);
    let r = sim.results();
    assert!(r.meta.iter().any(|(k, v)| k == "finished" && v == "false"));
    assert!(r.meta.iter().any(|(k, v)| k == "stopped" && v.contains("max_memory")));
    assert!(transactions(&r) > 1000);
}

// --- Item 9: building is linear in flows ---------------------------------------------

/// Building 8x the flows takes about 8x as long (a step linear in flows per
/// flow, as the group lookup was, would make it 64x). Measured in this thread's
/// CPU time where Linux gives it (`/proc/thread-self/schedstat`, nanoseconds on
/// the CPU), so time spent preempted by a busy machine's other jobs does not
/// count; each size's best of five builds, the two sizes alternated. Seen on an
/// idle and on a loaded 2-CPU machine: x8 to x15 (the larger build's tables
/// outgrow the caches); the bound is far from both that and 64.
#[test]
fn building_is_linear_in_flows() {
    let spec = |n: usize| {
        let mut s = ScenarioSpec::from_toml_str(&one_app(r#"{ type = "cbr", rate = "1Mbps" }"#, "1s")).unwrap();
        s.apps.clear();
        let flow: ecnsim_core::spec::FlowSpec =
            serde_json::from_str(r#"{ "src": "a", "dst": "b", "start": "10ms" }"#).unwrap();
        s.flows = vec![flow; n];
        s
    };
    // The first field of schedstat: time this thread has run on a CPU, in ns.
    let cpu = || -> Option<std::time::Duration> {
        let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
        Some(std::time::Duration::from_nanos(text.split_whitespace().next()?.parse().ok()?))
    };
    let time = |s: &ScenarioSpec| {
        let (wall, on_cpu) = (std::time::Instant::now(), cpu());
        let sim = Simulation::new(s, Some(1)).unwrap();
        let e = match (on_cpu, cpu()) {
            (Some(before), Some(after)) => after.saturating_sub(before),
            _ => wall.elapsed(),
        };
        drop(sim);
        e
    };
    let (small, large) = (spec(2_000), spec(16_000));
    let (mut a, mut b) = (std::time::Duration::MAX, std::time::Duration::MAX);
    for _ in 0..5 {
        a = a.min(time(&small));
        b = b.min(time(&large));
    }
    let ratio = b.as_secs_f64() / a.as_secs_f64().max(1e-9);
    assert!(ratio < 30.0, "2000 flows: {a:?}, 16000 flows: {b:?} (x{ratio:.1})");
}

// --- Item 4: times that make part of the scenario inert are named -------------------

#[test]
fn times_longer_than_the_run_are_warned_about() {
    let spec = ScenarioSpec::from_toml_str(&one_app(
        r#"{ type = "onoff", rate = "1Mbps", on = { type = "constant", value = 0.5 }, off = { type = "constant", value = 20 } }"#,
        "10s",
    ))
    .unwrap();
    spec.validate().unwrap();
    let w = spec.warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, "apps[0].model.off");
    assert!(w[0].1.contains("first on period only"), "{}", w[0].1);
    let spec = ScenarioSpec::from_toml_str(&one_app(
        r#"{ type = "crr", think_time = { type = "uniform", min = 1, max = 5 } }"#,
        "10s",
    ))
    .unwrap();
    assert!(spec.warnings().is_empty());
}

#[test]
fn a_scenario_without_traffic_is_warned_about() {
    let text = r#"
        simulation = { duration = "1s" }
        nodes = [{ name = "a", kind = "host" }, { name = "b", kind = "host" }]
        links = [{ a = "a", b = "b", rate = "1Mbps", delay = "1ms" }]
    "#;
    let spec = ScenarioSpec::from_toml_str(text).unwrap();
    spec.validate().unwrap();
    let w = spec.warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, "flows");
    assert!(w[0].1.contains("nothing is sent"), "{}", w[0].1);
    let with_flow = format!("{text}\nflows = [{{ src = \"a\", dst = \"b\" }}]");
    let spec = ScenarioSpec::from_toml_str(&with_flow).unwrap();
    spec.validate().unwrap();
    assert!(spec.warnings().is_empty());
}
