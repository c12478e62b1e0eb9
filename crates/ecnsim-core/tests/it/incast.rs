//! Partition/aggregate queries (`type = "incast"`, `src/app/incast.rs`): the DCTCP paper's
//! incast workload (STUDIES.md §6 D6-D8) through whole simulations.

use ecnsim_core::{ColumnData, Results, ScenarioSpec, Simulation};

use crate::common::{f64s, run, u64s};

/// A client `c` and `n` servers `s<i>` on one switch, every link 1 Gb/s and 25 µs; the
/// switch's port to the client has `queue`; `model` is the incast model's inline table.
fn star(n: usize, queue: &str, model: &str, duration: &str) -> String {
    let mut nodes =
        vec![r#"{ name = "sw", kind = "router" }"#.to_owned(), r#"{ name = "c", kind = "host" }"#.to_owned()];
    let mut links = vec![format!(r#"{{ a = "c", b = "sw", rate = "1Gbps", delay = "25us", queue_ba = {queue} }}"#)];
    let mut servers = Vec::new();
    for i in 0..n {
        nodes.push(format!(r#"{{ name = "s{i}", kind = "host" }}"#));
        links.push(format!(r#"{{ a = "s{i}", b = "sw", rate = "1Gbps", delay = "25us" }}"#));
        servers.push(format!("\"s{i}\""));
    }
    format!(
        "simulation = {{ duration = \"{duration}\" }}\ntcp = {{ min_rto = \"10ms\" }}\nnodes = [{}]\nlinks = [{}]\n\
         [[apps]]\nname = \"q\"\nclients = [\"c\"]\nservers = [{}]\nmodel = {model}\n",
        nodes.join(", "),
        links.join(", "),
        servers.join(", ")
    )
}

fn strs(r: &Results, col: &str) -> Vec<String> {
    match r.table("records").and_then(|t| t.column(col)).and_then(ColumnData::strings) {
        Some(v) => v,
        None => panic!("records.{col} is not a column of names"),
    }
}

const BIG: &str = r#"{ type = "droptail", limit_packets = 100000 }"#;

#[test]
fn queries_run_back_to_back_and_each_waits_for_every_server() {
    // 4 servers x 250,000 bytes = 1 MB per query: 8 ms of the client's 1 Gb/s link at least.
    let t = star(4, BIG, r#"{ type = "incast", request = 100, response = 250000, queries = 20 }"#, "1s");
    let (_, r) = run(&t, 1);
    let state = strs(&r, "state");
    assert_eq!(state.len(), 20, "exactly `queries` queries");
    assert!(state.iter().all(|s| s == "completed"));
    assert!(strs(&r, "kind").iter().all(|k| k == "transaction"));
    assert!(u64s(&r, "records", "objects").iter().all(|&o| o == 4));
    assert!(u64s(&r, "records", "connections").iter().all(|&o| o == 4));
    assert!(u64s(&r, "records", "response_bytes").iter().all(|&b| b == 1_000_000));
    assert!(u64s(&r, "records", "request_bytes").iter().all(|&b| b == 400));
    assert!(u64s(&r, "records", "rto_count").iter().all(|&n| n == 0), "a deep buffer: no timeouts");
    let (start, end) = (f64s(&r, "records", "start_s"), f64s(&r, "records", "end_s"));
    for k in 1..20 {
        // Think time 0: the next query starts as the last response of this one completes.
        assert!((start[k] - end[k - 1]).abs() < 1e-12, "query {k}");
    }
    let rt = f64s(&r, "records", "response_time_s");
    // Every query needs at least the 1 MB at 1 Gb/s (1,000,000 bytes of payload in 685
    // 1500-byte packets: 8.2 ms); the first also opens the four connections.
    for (k, x) in rt.iter().enumerate() {
        assert!(*x > 0.0082 && *x < 0.05, "query {k}: {x}");
    }
    // Connections are persistent: only the first query opened them (a handshake time).
    let setup = f64s(&r, "records", "connect_time_s");
    assert!(setup[0].is_finite() && setup[0] > 0.0, "{}", setup[0]);
    assert!(setup[1..].iter().all(|x| x.is_nan()), "{setup:?}");
}

#[test]
fn shallow_buffer_incast_times_out_and_counts_it_per_query() {
    // 32 servers answer at once into a 32-packet port: the synchronised responses overflow
    // it and some servers wait for a 10 ms retransmission timeout.
    let t = star(
        32,
        r#"{ type = "droptail", limit_packets = 32 }"#,
        r#"{ type = "incast", request = 100, response = 31250, queries = 30 }"#,
        "3s",
    );
    let (_, r) = run(&t, 1);
    let rtos = u64s(&r, "records", "rto_count");
    assert_eq!(rtos.len(), 30);
    let with = rtos.iter().filter(|&&n| n > 0).count();
    assert!(with > 0, "incast with 32 packets of buffer should time out: {rtos:?}");
    // A query with a timeout lasts at least the 10 ms minimum RTO.
    let rt = f64s(&r, "records", "response_time_s");
    for (x, n) in rt.iter().zip(&rtos) {
        if *n > 0 {
            assert!(*x > 0.010, "{x}");
        }
    }
    assert!(u64s(&r, "queues", "drops").iter().sum::<u64>() > 0);
}

#[test]
fn all_to_all_queries_every_other_host() {
    // Four hosts, each the client of a query to the three others (STUDIES.md §6 D8).
    let mut t = star(3, BIG, r#"{ type = "incast", response = 25000, queries = 3 }"#, "1s");
    t = t
        .replace(r#"clients = ["c"]"#, r#"clients = ["c", "s0", "s1", "s2"]"#)
        .replace(r#"servers = ["s0", "s1", "s2"]"#, r#"servers = ["c", "s0", "s1", "s2"]"#);
    let (_, r) = run(&t, 1);
    let client = strs(&r, "client");
    assert_eq!(client.len(), 12);
    for h in ["c", "s0", "s1", "s2"] {
        assert_eq!(client.iter().filter(|c| *c == h).count(), 3, "{h}");
    }
    assert!(u64s(&r, "records", "objects").iter().all(|&o| o == 3));
    assert!(u64s(&r, "records", "connections").iter().all(|&o| o == 3));
}

#[test]
fn incast_runs_are_deterministic() {
    let t =
        star(16, r#"{ type = "droptail", limit_packets = 20 }"#, r#"{ type = "incast", response = 60000 }"#, "200ms");
    let a = run(&t, 5).1;
    let b = run(&t, 5).1;
    assert_eq!(f64s(&a, "records", "end_s"), f64s(&b, "records", "end_s"));
    assert_eq!(u64s(&a, "records", "rto_count"), u64s(&b, "records", "rto_count"));
}

#[test]
fn bad_incast_names_the_field() {
    let cases = [
        (r#"{ type = "incast", response = 0 }"#, "apps[0].model.response", "must be >= 1"),
        (r#"{ type = "incast", response = 100, queries = 0 }"#, "apps[0].model.queries", "must be >= 1"),
        (r#"{ type = "incast" }"#, "response", "missing field"),
    ];
    for (model, path, msg) in cases {
        let t = star(2, BIG, model, "1s");
        let err = ScenarioSpec::from_toml_str(&t)
            .and_then(|s| Simulation::new(&s, Some(1)).map(|_| ()))
            .expect_err(model)
            .to_string();
        assert!(err.contains(path) && err.contains(msg), "{model}: {err}");
    }
    // A client whose only server is itself.
    let t = star(1, BIG, r#"{ type = "incast", response = 100 }"#, "1s")
        .replace(r#"clients = ["c"]"#, r#"clients = ["s0"]"#);
    let err = Simulation::new(&ScenarioSpec::from_toml_str(&t).unwrap(), Some(1)).err().unwrap().to_string();
    assert!(err.contains("apps[0].clients[0]") && err.contains("no server but itself"), "{err}");
}
