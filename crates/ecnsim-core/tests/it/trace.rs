//! Link-event traces agree with the queue counters and honour their filters.

use ecnsim_core::{ColumnData, ScenarioSpec, Simulation, TraceFilter};

use crate::common::{dumbbell, u64s};

fn strs(t: &ecnsim_core::Table, c: &str) -> Vec<String> {
    match t.column(c).and_then(ColumnData::strings) {
        Some(v) => v,
        None => panic!("{c}"),
    }
}
fn nums(t: &ecnsim_core::Table, c: &str) -> Vec<u64> {
    match t.column(c) {
        Some(ColumnData::U64(v)) => v.clone(),
        _ => panic!("{c}"),
    }
}

fn sim() -> Simulation {
    let t = dumbbell(3, "2Mbps", "10ms", r#"{ type = "droptail", limit_packets = 8 }"#, "8s", "start_jitter = \"1s\"");
    Simulation::new(&ScenarioSpec::from_toml_str(&t).unwrap(), Some(1)).unwrap()
}

#[test]
fn bottleneck_trace_matches_queue_counters() {
    let mut s = sim();
    s.enable_trace(&TraceFilter { links: Some(vec![0]), ..TraceFilter::default() }).unwrap();
    // Drain in chunks, as the Python layer does.
    let mut events = Vec::new();
    let mut from = Vec::new();
    let mut uids = Vec::new();
    for k in 1..=8 {
        s.run_until(ecnsim_core::SimTime::from_secs(k)).unwrap();
        let t = s.drain_trace();
        events.extend(strs(&t, "event"));
        from.extend(nums(&t, "from_node"));
        uids.extend(nums(&t, "uid"));
    }
    assert_eq!(s.trace_pending(), 0);
    let r = s.results();
    let (arr, dep, drops) =
        (u64s(&r, "queues", "arrivals"), u64s(&r, "queues", "departures"), u64s(&r, "queues", "drops"));
    // Port 0 is r1 -> r2 (node 0 -> 1), port 1 is r2 -> r1.
    for (port, node) in [(0usize, 0u64), (1, 1)] {
        let count = |e: &str| events.iter().zip(&from).filter(|(x, f)| *x == e && **f == node).count() as u64;
        assert_eq!(count("+"), arr[port], "port {port}");
        assert_eq!(count("-"), dep[port], "port {port}");
        assert_eq!(count("d"), drops[port], "port {port}");
        // Everything that left has arrived, but what is still on the wire.
        assert!(count("r") <= count("-") && count("-") - count("r") <= 50);
    }
    assert!(drops[0] > 0);
    // No other link is traced.
    assert!(from.iter().all(|&f| f <= 1));
    // A packet's events on one link come in order + - r.
    let first = uids[events.iter().position(|e| e == "r").unwrap()];
    let seq: Vec<&str> = events.iter().zip(&uids).filter(|(_, u)| **u == first).map(|(e, _)| e.as_str()).collect();
    assert_eq!(&seq[..3], &["+", "-", "r"]);
}

#[test]
fn flow_and_node_filters_select_events() {
    let mut s = sim();
    s.enable_trace(&TraceFilter {
        flows: Some(vec!["flow1".into()]),
        nodes: Some(vec!["s1".into()]),
        ..TraceFilter::default()
    })
    .unwrap();
    s.run().unwrap();
    let t = s.drain_trace();
    assert!(t.rows() > 100);
    assert!(nums(&t, "flow_id").iter().all(|&f| f == 1));
    let s1 = 4; // nodes: r1, r2, s0, c0, s1, ...
    assert!(nums(&t, "from_node").iter().zip(nums(&t, "to_node")).all(|(&a, b)| a == s1 || b == s1));
}

#[test]
fn unknown_names_in_a_filter_are_errors_naming_the_field() {
    let mut s = sim();
    let e = s.enable_trace(&TraceFilter { links: Some(vec![0, 99]), ..TraceFilter::default() }).unwrap_err();
    assert_eq!(e.path(), "trace.links[1]");
    let e = s.enable_trace(&TraceFilter { nodes: Some(vec!["nope".into()]), ..TraceFilter::default() }).unwrap_err();
    assert_eq!(e.path(), "trace.nodes[0]");
    let e = s.enable_trace(&TraceFilter { flows: Some(vec!["nope".into()]), ..TraceFilter::default() }).unwrap_err();
    assert_eq!(e.path(), "trace.flows[0]");
}

#[test]
fn tracing_does_not_change_results() {
    let mut a = sim();
    a.run().unwrap();
    let mut b = sim();
    b.enable_trace(&TraceFilter::default()).unwrap();
    b.run().unwrap();
    assert_eq!(a.results().digest(), b.results().digest());
    assert!(b.trace_pending() > 1000);
    // The packet tap, and a trace switched on between two chunks, run the event loop's
    // other copy (with the trace points): the same results.
    let mut c = sim();
    c.record_sent_packets();
    c.run().unwrap();
    assert_eq!(a.results().digest(), c.results().digest());
    assert!(!c.sent_packets().is_empty());
    let mut d = sim();
    d.run_until(ecnsim_core::SimTime::from_nanos(d.end_time().as_nanos() / 2)).unwrap();
    d.enable_trace(&TraceFilter::default()).unwrap();
    d.run().unwrap();
    assert_eq!(a.results().digest(), d.results().digest());
    assert!(d.trace_pending() > 0 && d.trace_pending() < b.trace_pending());
}
