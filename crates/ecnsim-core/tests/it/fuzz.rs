//! A property-based fuzzer over scenario parsing, validation, building and a
//! short run (issue 17 item 6): every document either runs, or is refused
//! with an error that names a field; nothing panics, hangs or aborts.
//!
//! Documents are mutations of a valid scenario that uses every table (or of
//! one made by a `[topology]` template and `[[flow_groups]]`): a key's
//! value replaced by a hostile value (integers beyond 64 bits, NaN, huge and
//! tiny numbers, arrays for tables, control characters, deep nesting), a
//! line deleted or duplicated, a key added. `PROPTEST_CASES` sets how many
//! (default 256, a few seconds in release builds).

use ecnsim_core::{ScenarioSpec, SimError, SimOptions, SimTime, Simulation};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// A valid scenario touching every kind of table.
const BASE: &str = r#"
name = "fuzz"

[simulation]
duration = "300ms"
warmup = "10ms"
seed = 3
sample_interval = "50ms"

[tcp]
mss = 1000
ecn = "request"

[[nodes]]
name = "h1"
kind = "host"

[[nodes]]
name = "r1"
kind = "router"

[[nodes]]
name = "h2"
kind = "host"

[[links]]
a = "h1"
b = "r1"
rate = "100Mbps"
delay = "1ms"

[[links]]
a = "r1"
b = "h2"
rate = "10Mbps"
delay = "5ms"
queue = { type = "red", min_th = 5, max_th = 15, limit_packets = 50, ecn = "rfc3168" }

[[flows]]
src = "h1"
dst = "h2"
start_jitter = "10ms"
app = { type = "bulk", bytes = 200000 }
tcp = { cc = "newreno", initial_window = 4 }

[[apps]]
clients = ["h1"]
servers = ["h2"]
model = { type = "onoff", rate = "1Mbps", on = { type = "exponential", mean = 0.01 }, off = { type = "pareto", shape = 1.5, scale = 0.01 } }

[[apps]]
clients = ["h1"]
servers = ["h2"]
model = { type = "websessions", session_rate = 5, rcv_window = { type = "discrete", values = [8000, 64000], weights = [1, 1] } }
"#;

/// A valid scenario made by templates: a `[topology]` and `[[flow_groups]]`.
const TEMPLATE_BASE: &str = r#"
name = "fuzz-templates"

[simulation]
duration = "300ms"
seed = 3

[topology]
type = "dumbbell"
senders = 3
receivers = 2
bottleneck_rate = "10Mbps"
bottleneck_delay = "5ms"
access_rate = "100Mbps"
access_delay = "1ms"
sender_delays = ["1ms", "2ms", "3ms"]
queue = { type = "red", min_th = 5, max_th = 15, limit_packets = 50, ecn = "rfc3168" }
access_queue = { type = "droptail", limit_packets = 100 }

[[flow_groups]]
name = "a"
count = 2
first = 0
src = "s{i}"
dst = "c{i}"
start = "1ms"
start_spacing = "2ms"
start_jitter = "10ms"
app = { type = "bulk", bytes = 100000 }
tcp = { cc = "newreno", ecn = "request" }

[[flow_groups]]
name = "b"
group = "late"
count = 1
first = 2
src = "s{i}"
dst = "c1"
start = "20ms"
"#;

/// Values that have broken parsers and models before.
const HOSTILE: &[&str] = &[
    "0",
    "-1",
    "1e-300",
    "1e300",
    "1e12",
    "nan",
    "inf",
    "-inf",
    "18446744073709551616",
    "9223372036854775807",
    "-9223372036854775808",
    "0.0000000001",
    "\"\"",
    "\"10000Gbps\"",
    "\"1e-30Gbps\"",
    "\"1e40s\"",
    "\"-5ms\"",
    "\"a\\u200Bb\"",
    "\"x\\u001B[31m\"",
    "\"host\"",
    "\"router\"",
    "[]",
    "[1, 2, 3]",
    "[\"3s\", \"1s\", 7]",
    "{}",
    "{ type = \"constant\", value = 0 }",
    "{ type = \"pareto\", shape = 0.01, scale = 0.1 }",
    "{ type = \"exponential\", mean = 1e-12 }",
    "{ type = \"droptail\", limit_packets = 1 }",
    "{ type = \"codel\" }",
    "true",
    "\"s{j}\"",
    "\"{i}{i}\"",
    "\"{\"",
    "\"hetero_rtt\"",
    "\"parking_lot\"",
    "[\"1ms\"]",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
];

/// Keys that may be added where they do not belong.
const KEYS: &[&str] = &["colour", "type", "rate", "seed", "duration", "on", "limit_packets", "tcp"];

#[derive(Clone, Debug)]
enum Mutation {
    /// Replace the value of the `line`-th `key = value` line.
    Value { line: usize, value: usize },
    /// Replace the value of the `item`-th `key = value` pair inside inline tables.
    Inline { item: usize, value: usize },
    /// Delete a line.
    Delete { line: usize },
    /// Duplicate a line.
    Duplicate { line: usize },
    /// Add `key = value` after a line.
    Add { line: usize, key: usize, value: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let v = 0..HOSTILE.len();
    prop_oneof![
        (0..64usize, v.clone()).prop_map(|(line, value)| Mutation::Value { line, value }),
        (0..64usize, v.clone()).prop_map(|(item, value)| Mutation::Inline { item, value }),
        (0..64usize).prop_map(|line| Mutation::Delete { line }),
        (0..64usize).prop_map(|line| Mutation::Duplicate { line }),
        (0..64usize, 0..KEYS.len(), v).prop_map(|(line, key, value)| Mutation::Add { line, key, value }),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let assignments: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].contains(" = ")).collect();
    match *m {
        Mutation::Value { line, value } => {
            let i = assignments[line % assignments.len()];
            let key = lines[i].split(" = ").next().unwrap_or_default().to_owned();
            lines[i] = format!("{key} = {}", HOSTILE[value]);
        }
        Mutation::Inline { item, value } => {
            // `k = v` pairs inside `{ ... }`: replace the item-th value up to its `,` or `}`.
            let mut seen = 0;
            'outer: for l in &mut lines {
                let Some(open) = l.find('{') else { continue };
                let mut pos = open;
                while let Some(eq) = l[pos..].find(" = ").map(|e| pos + e) {
                    if seen == item % 24 {
                        let end = l[eq + 3..].find([',', '}']).map_or(l.len(), |e| eq + 3 + e);
                        l.replace_range(eq + 3..end, &format!("{} ", HOSTILE[value]));
                        break 'outer;
                    }
                    seen += 1;
                    pos = eq + 3;
                }
            }
        }
        Mutation::Delete { line } => {
            lines.remove(line % lines.len());
        }
        Mutation::Duplicate { line } => {
            let i = line % lines.len();
            lines.insert(i, lines[i].clone());
        }
        Mutation::Add { line, key, value } => {
            let i = assignments[line % assignments.len()];
            lines.insert(i + 1, format!("{} = {}", KEYS[key], HOSTILE[value]));
        }
    }
    lines.join("\n")
}

/// Parse, validate, build (under a memory limit) and run a little; the
/// outcome, or a test failure for a panic or an error without a field.
fn exercise(text: &str) -> Result<&'static str, TestCaseError> {
    let spec = match ScenarioSpec::from_toml_str(text) {
        Ok(s) => s,
        Err(e) => return named(&e, text).map(|()| "refused when parsed"),
    };
    // A valid scenario also reads back from its own JSON (what the Python layer sends).
    if spec.validate().is_ok() {
        let again = ScenarioSpec::from_json_str(&spec.to_json());
        prop_assert!(again.is_ok(), "JSON round trip failed: {again:?}\n{text}");
    }
    if let Err(e) = spec.validate() {
        return named(&e, text).map(|()| "refused when checked");
    }
    let options = SimOptions { seed: Some(1), max_memory: Some(1 << 30), cancel: None };
    let mut sim = match Simulation::with_options(&spec, &options) {
        Ok(s) => s,
        Err(e) => return named(&e, text).map(|()| "refused when built"),
    };
    match sim.run_until(SimTime::from_millis(300)) {
        Ok(()) => {
            prop_assert!(sim.conservation().holds(), "conservation broken:\n{text}");
            Ok("ran")
        }
        Err(e) => named(&e, text).map(|()| "stopped with an error"),
    }
}

/// An error names a field: a non-empty path, `<root>` only for a document-wide problem.
fn named(e: &SimError, text: &str) -> Result<(), TestCaseError> {
    let path = e.path();
    prop_assert!(!path.is_empty(), "error without a path: {e}\n{text}");
    if path == "<root>" {
        let msg = e.to_string();
        prop_assert!(
            msg.contains("missing field") || msg.contains("expected") || msg.contains("duplicate"),
            "error at <root> that could name a field: {e}\n{text}"
        );
    }
    prop_assert!(!e.to_string().contains("Spec,") && !e.to_string().contains("struct "), "Rust type named: {e}");
    Ok(())
}

#[test]
fn the_base_scenario_runs() {
    assert_eq!(exercise(BASE).unwrap(), "ran");
    assert_eq!(exercise(TEMPLATE_BASE).unwrap(), "ran");
}

/// Runs `PROPTEST_CASES` mutated documents (default 256) and prints how many
/// ran, were refused at parsing, at building, or stopped with an error
/// (`cargo test --release fuzz -- --nocapture`); fails at the first document
/// that panics or is refused without a field, after shrinking it.
#[test]
fn mutated_scenarios_run_or_are_refused_with_a_field() {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use proptest::test_runner::{Config, TestRunner};

    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let counts: Mutex<BTreeMap<&'static str, u64>> = Mutex::new(BTreeMap::new());
    let outcome = runner.run(&(any::<bool>(), proptest::collection::vec(mutation(), 1..4)), |(templates, ms)| {
        let mut text = if templates { TEMPLATE_BASE } else { BASE }.to_owned();
        for m in &ms {
            text = apply(&text, m);
        }
        let what = exercise(&text)?;
        *counts.lock().unwrap().entry(what).or_default() += 1;
        Ok(())
    });
    let counts = counts.into_inner().unwrap();
    let total: u64 = counts.values().sum();
    eprintln!("fuzz: {total} documents (the shrinking steps of a failure included): {counts:?}");
    if let Err(e) = outcome {
        panic!("{e}");
    }
}
