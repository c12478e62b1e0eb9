//! Whole-network behaviour of TCP Reno over DropTail.

use crate::common::{dumbbell, f64s, jain, run, u64s};

/// One flow whose receive window keeps it below the buffer never loses a
/// packet and fills the bottleneck: goodput = rate * MSS / (MSS + headers).
#[test]
fn single_flow_uncongested_reaches_link_rate_less_headers() {
    // 10 Mb/s, RTT = 2 * (1 + 10 + 1) ms = 24 ms; BDP = 30 kB; rwnd 64 KB < BDP + 100 packets.
    let mut t = dumbbell(1, "10Mbps", "10ms", r#"{ type = "droptail", limit_packets = 100 }"#, "20s", "");
    t = t.replace(
        "simulation = { duration = \"20s\" }",
        "simulation = { duration = \"20s\", warmup = \"2s\" }\ntcp = { rcv_window = \"64KB\" }",
    );
    let (_, r) = run(&t, 1);
    assert_eq!(u64s(&r, "flows", "drops"), vec![0]);
    assert_eq!(u64s(&r, "flows", "packets_retransmitted"), vec![0]);
    let goodput = f64s(&r, "flows", "goodput_bps")[0];
    let expected = 10e6 * 1460.0 / 1500.0;
    assert!((goodput - expected).abs() / expected < 0.005, "goodput {goodput} vs {expected}");
    // The bottleneck direction is fully used.
    let util = f64s(&r, "queues", "utilization")[0];
    assert!(util > 0.995 && util <= 1.0 + 1e-9, "utilization {util}");
}

/// Two identical flows through a DropTail bottleneck share it fairly over a long run.
#[test]
fn two_flows_share_droptail_bottleneck_fairly() {
    let mut t =
        dumbbell(2, "10Mbps", "10ms", r#"{ type = "droptail", limit_packets = 50 }"#, "300s", "start_jitter = \"1s\"");
    // Windows limited by congestion only (the rfc profile's 64 KiB receive window would cap each flow
    // near the bottleneck's share, where DropTail's phase effects decide who loses).
    t = t.replace("duration = \"300s\"", "duration = \"300s\", warmup = \"20s\" }\ntcp = { rcv_window = \"1MB\"");
    let (_, r) = run(&t, 3);
    let g = f64s(&r, "flows", "goodput_bps");
    let j = jain(&g);
    assert!(j > 0.9, "Jain's index {j} for goodputs {g:?}");
    // Together they fill the bottleneck (Reno with a buffer of about 2 BDP).
    let total: f64 = g.iter().sum();
    assert!(total > 0.9 * 10e6 * 1460.0 / 1500.0, "total goodput {total}");
    assert!(u64s(&r, "queues", "drops")[0] > 0, "the bottleneck must be congested for this test to mean anything");
}

/// A finite transfer through a lossy bottleneck delivers every byte exactly once, in order.
#[test]
fn lossy_transfer_delivers_every_byte_once() {
    let bytes = 3_000_000u64;
    let t = dumbbell(
        4,
        "2Mbps",
        "20ms",
        r#"{ type = "droptail", limit_packets = 8 }"#,
        "200s",
        &format!("app = {{ type = \"bulk\", bytes = {bytes} }}"),
    );
    let (sim, r) = run(&t, 1);
    assert!(u64s(&r, "queues", "drops")[0] > 50, "want real loss");
    assert!(u64s(&r, "flows", "packets_retransmitted").iter().all(|&x| x > 0));
    assert_eq!(u64s(&r, "flows", "bytes_delivered"), vec![bytes; 4]);
    for c in f64s(&r, "flows", "completion_time_s") {
        assert!(c.is_finite() && c > 0.0);
    }
    // After the FIN exchange nothing is left anywhere.
    assert_eq!(sim.conservation().in_flight, 0);
    let states: Vec<String> = match r.table("flows").unwrap().column("final_state") {
        Some(ecnsim_core::ColumnData::Str(v)) => v.clone(),
        _ => unreachable!(),
    };
    assert!(states.iter().all(|s| s == "TIME-WAIT"), "{states:?}");
}

/// Without loss, a transfer of k segments with IW segments takes the handshake
/// plus the slow-start rounds computed by hand.
#[test]
fn lossless_transfer_time_matches_slow_start_rounds() {
    // 1 Gb/s everywhere (serialisation negligible but exact), RTT 2 * (1 + 10 + 1) = 24 ms.
    let t = dumbbell(
        1,
        "1Gbps",
        "10ms",
        r#"{ type = "droptail", limit_packets = 1000 }"#,
        "5s",
        "app = { type = \"bulk\", bytes = 14600 }, tcp = { initial_window = 2 }",
    );
    let (_, r) = run(&t, 1);
    // 10 segments with IW 2: rounds of 2, 4, 4 -> 3 RTTs of data after a 1-RTT handshake;
    // the last data arrives half an RTT into the 4th RTT: 1 + 2 + 0.5 RTT = 3.5 RTT (+ tx times).
    let c = f64s(&r, "flows", "completion_time_s")[0];
    let rtt = 0.024;
    assert!((c - 3.5 * rtt).abs() < 0.0005, "completion {c} vs {}", 3.5 * rtt);
    let conn = f64s(&r, "flows", "connect_time_s")[0];
    assert!((conn - rtt).abs() < 0.0001, "connect {conn}");
}

/// A warm-up discards what happened before it.
#[test]
fn warmup_resets_counters() {
    let base = dumbbell(
        1,
        "10Mbps",
        "10ms",
        r#"{ type = "droptail", limit_packets = 100 }"#,
        "10s",
        "tcp = { rcv_window = \"64KB\" }",
    );
    let (_, full) = run(&base, 1);
    let warm = base.replace("duration = \"10s\"", "duration = \"10s\", warmup = \"5s\"");
    let (_, half) = run(&warm, 1);
    let a = u64s(&full, "flows", "bytes_delivered")[0];
    let b = u64s(&half, "flows", "bytes_delivered")[0];
    assert!(b < a && b > a * 4 / 10, "full {a}, after warm-up {b}");
    assert_eq!(u64s(&half, "flows", "syn_retransmits"), vec![0]);
    let arrivals_full = u64s(&full, "queues", "arrivals")[0];
    let arrivals_half = u64s(&half, "queues", "arrivals")[0];
    assert!(arrivals_half < arrivals_full);
}

/// Sampling produces one row per flow and queue per interval.
#[test]
fn time_series_are_sampled_at_the_interval() {
    let t = dumbbell(2, "10Mbps", "10ms", r#"{ type = "droptail", limit_packets = 20 }"#, "2s", "")
        .replace("duration = \"2s\"", "duration = \"2s\", sample_interval = \"100ms\"");
    let (_, r) = run(&t, 1);
    let times = f64s(&r, "flow_series", "time_s");
    assert_eq!(times.len(), 21 * 2, "samples at 0, 0.1, ..., 2.0 s for 2 flows");
    assert_eq!(f64s(&r, "queue_series", "time_s").len(), 21 * 10);
    let cwnd = u64s(&r, "flow_series", "cwnd_bytes");
    assert!(cwnd.iter().any(|&c| c > 10 * 1460), "cwnd grows");
    let qlen = u64s(&r, "queue_series", "packets");
    assert!(qlen.iter().all(|&q| q <= 20));
    assert!(qlen.iter().any(|&q| q > 0));
    // Cumulative per-flow counters: non-decreasing, ending at most at the totals.
    let ids = u64s(&r, "flow_series", "flow_id");
    let delivered = u64s(&r, "flow_series", "bytes_delivered");
    let sent = u64s(&r, "flow_series", "bytes_sent");
    let totals = u64s(&r, "flows", "bytes_delivered");
    for f in 0..2u64 {
        let d: Vec<u64> = ids.iter().zip(&delivered).filter(|(i, _)| **i == f).map(|(_, d)| *d).collect();
        let s: Vec<u64> = ids.iter().zip(&sent).filter(|(i, _)| **i == f).map(|(_, s)| *s).collect();
        assert!(d.windows(2).all(|w| w[0] <= w[1]) && s.windows(2).all(|w| w[0] <= w[1]));
        assert!(*d.last().unwrap() <= totals[usize::try_from(f).unwrap()] && *d.last().unwrap() > 0);
        assert!(d.iter().zip(&s).all(|(d, s)| d <= s), "cannot deliver more than was sent");
    }
}

/// A flow whose endpoints are not connected through routers is rejected.
#[test]
fn flow_without_route_is_a_topology_error() {
    let t = r#"
        simulation = { duration = "1s" }
        nodes = [ { name = "a", kind = "host" }, { name = "b", kind = "host" }, { name = "c", kind = "host" } ]
        links = [ { a = "a", b = "b", rate = "1Mbps", delay = 0 }, { a = "b", b = "c", rate = "1Mbps", delay = 0 } ]
        flows = [ { src = "a", dst = "c" } ]
    "#;
    let spec = ecnsim_core::ScenarioSpec::from_toml_str(t).unwrap();
    let err = ecnsim_core::Simulation::new(&spec, None).unwrap_err();
    assert_eq!(err.path(), "flows[0].dst");
    assert!(err.to_string().contains("no route from \"a\" to \"c\""), "{err}");
}

/// Equal-length paths are broken by the lowest port id, and the chosen path is used.
#[test]
fn routing_takes_shortest_path_with_deterministic_tie_break() {
    // a - r1 - r2 - b and a - r1 - r3 - b: equal length; r1->r2 is declared first.
    // A third path a - r1 - r4 - r5 - b is longer and unused.
    let t = r#"
        simulation = { duration = "2s" }
        nodes = [ { name = "a", kind = "host" }, { name = "b", kind = "host" },
                  { name = "r1", kind = "router" }, { name = "r2", kind = "router" }, { name = "r3", kind = "router" },
                  { name = "r4", kind = "router" }, { name = "r5", kind = "router" } ]
        links = [ { a = "a", b = "r1", rate = "10Mbps", delay = "1ms" },
                  { a = "r1", b = "r4", rate = "10Mbps", delay = "1ms" }, { a = "r4", b = "r5", rate = "10Mbps", delay = "1ms" },
                  { a = "r5", b = "b", rate = "10Mbps", delay = "1ms" },
                  { a = "r1", b = "r2", rate = "10Mbps", delay = "1ms" }, { a = "r1", b = "r3", rate = "10Mbps", delay = "1ms" },
                  { a = "r2", b = "b", rate = "10Mbps", delay = "1ms" }, { a = "r3", b = "b", rate = "10Mbps", delay = "1ms" } ]
        flows = [ { src = "a", dst = "b", app = { type = "bulk", bytes = 100000 } } ]
    "#;
    let (_, r) = run(t, 1);
    let arrivals = u64s(&r, "queues", "arrivals");
    let names: Vec<String> = match r.table("queues").unwrap().column("queue") {
        Some(ecnsim_core::ColumnData::Str(v)) => v.clone(),
        _ => unreachable!(),
    };
    let by = |n: &str| arrivals[names.iter().position(|x| x == n).unwrap()];
    assert!(by("r1->r2") > 0 && by("r2->b") > 0);
    assert_eq!(by("r1->r3"), 0);
    assert_eq!(by("r1->r4"), 0);
    // Return traffic takes b -> r2 (link r2-b is declared before r3-b, and r5-b's path is longer).
    assert!(by("b->r2") > 0);
    assert_eq!(by("b->r3") + by("b->r5"), 0);
}

/// Three flows open at once from host `a`; `extra` sets the a->r and c->r links.
fn three_syns(ab_link: &str, cb_link: &str) -> String {
    format!(
        r#"
        simulation = {{ duration = "10s" }}
        tcp = {{ initial_rto = "3s" }}
        nodes = [ {{ name = "a", kind = "host" }}, {{ name = "r", kind = "router" }}, {{ name = "c", kind = "host" }} ]
        links = [ {ab_link}, {cb_link} ]
        flows = [ {{ src = "a", dst = "c", app = {{ type = "bulk", bytes = 1000 }} }},
                  {{ src = "a", dst = "c", app = {{ type = "bulk", bytes = 1000 }} }},
                  {{ src = "a", dst = "c", app = {{ type = "bulk", bytes = 1000 }} }} ]
        "#
    )
}

/// A SYN dropped at a full queue is resent after the configured initial RTO.
#[test]
fn handshake_lost_syn_retry_waits_initial_rto() {
    // a's egress holds one packet besides the one on the wire: the third SYN is dropped.
    let t = three_syns(
        r#"{ a = "a", b = "r", rate = "1Gbps", delay = "10ms", queue_ab = { type = "droptail", limit_packets = 1 } }"#,
        r#"{ a = "c", b = "r", rate = "1Gbps", delay = "10ms" }"#,
    );
    let (_, r) = run(&t, 1);
    assert_eq!(u64s(&r, "flows", "syn_retransmits"), vec![0, 0, 1]);
    assert_eq!(u64s(&r, "flows", "synack_retransmits"), vec![0, 0, 0]);
    let conn = f64s(&r, "flows", "connect_time_s");
    let rtt = 0.040;
    assert!((conn[0] - rtt).abs() < 1e-4, "{conn:?}");
    assert!((conn[2] - (3.0 + rtt)).abs() < 1e-4, "{conn:?}");
    assert_eq!(u64s(&r, "flows", "bytes_delivered"), vec![1000; 3]);
}

/// A SYN-ACK dropped at a full queue costs the initiator one initial RTO.
#[test]
fn handshake_lost_synack_retry_waits_initial_rto() {
    // a's SYNs leave 40 ms apart (40 B at 8 kb/s); the responders' path delays
    // (100, 80, 60 ms) make all three SYN-ACKs reach r at t = 250 ms, where the
    // r -> a queue holds one besides the one on the wire: one SYN-ACK is dropped.
    let t = r#"
        simulation = { duration = "20s" }
        tcp = { initial_rto = "3s" }
        nodes = [ { name = "a", kind = "host" }, { name = "r", kind = "router" },
                  { name = "c0", kind = "host" }, { name = "c1", kind = "host" }, { name = "c2", kind = "host" } ]
        links = [ { a = "a", b = "r", rate = "8kbps", delay = "10ms", queue_ba = { type = "droptail", limit_packets = 1 } },
                  { a = "r", b = "c0", rate = "1Gbps", delay = "100ms" },
                  { a = "r", b = "c1", rate = "1Gbps", delay = "80ms" },
                  { a = "r", b = "c2", rate = "1Gbps", delay = "60ms" } ]
        flows = [ { src = "a", dst = "c0", app = { type = "bulk", bytes = 100 } },
                  { src = "a", dst = "c1", app = { type = "bulk", bytes = 100 } },
                  { src = "a", dst = "c2", app = { type = "bulk", bytes = 100 } } ]
    "#;
    let (_, r) = run(t, 1);
    assert_eq!(u64s(&r, "queues", "drops")[1], 1, "exactly one SYN-ACK dropped at r -> a");
    let syn = u64s(&r, "flows", "syn_retransmits");
    let mut sorted = syn.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, vec![0, 0, 1]);
    let lost = syn.iter().position(|&x| x == 1).unwrap();
    let conn = f64s(&r, "flows", "connect_time_s");
    for (i, c) in conn.iter().enumerate() {
        if i == lost {
            // The SYN is resent at exactly 3 s; the handshake then takes one more round trip.
            assert!((3.0..3.6).contains(c), "{conn:?}");
        } else {
            assert!(*c < 0.6, "{conn:?}");
        }
    }
    assert_eq!(u64s(&r, "flows", "bytes_delivered"), vec![100; 3]);
}

/// Every queue balances over the measured interval, warm-up or not:
/// arrivals + backlog at the start = departures + drops + backlog at the end.
#[test]
fn queue_counts_balance_across_warmup() {
    for warmup in ["0s", "3.3s"] {
        let t = dumbbell(
            3,
            "5Mbps",
            "10ms",
            r#"{ type = "droptail", limit_packets = 15 }"#,
            "10s",
            "start_jitter = \"1s\"",
        )
        .replace("duration = \"10s\"", &format!("duration = \"10s\", warmup = \"{warmup}\""));
        let (_, r) = run(&t, 2);
        let arr = u64s(&r, "queues", "arrivals");
        let dep = u64s(&r, "queues", "departures");
        let drops = u64s(&r, "queues", "drops");
        let b0 = u64s(&r, "queues", "backlog_start_packets");
        let b1 = u64s(&r, "queues", "backlog_end_packets");
        for i in 0..arr.len() {
            assert_eq!(arr[i] + b0[i], dep[i] + drops[i] + b1[i], "queue {i}, warm-up {warmup}");
        }
        assert!(
            drops[0] > 0 && (warmup == "0s" || b0.iter().any(|&b| b > 0)),
            "the test must exercise drops and a backlog"
        );
    }
}

/// One-way delay of an uncongested path is propagation plus serialisation,
/// computed by hand.
#[test]
fn mean_one_way_delay_matches_the_path() {
    // s0 -1Gbps,1ms- r1 -10Mbps,10ms- r2 -1Gbps,1ms- c0; a window far below the BDP: no queueing.
    let t = dumbbell(
        1,
        "10Mbps",
        "10ms",
        r#"{ type = "droptail", limit_packets = 100 }"#,
        "5s",
        "tcp = { rcv_window = \"4380B\" }",
    );
    let (_, r) = run(&t, 1);
    let owd = f64s(&r, "flows", "mean_owd_s")[0];
    // Full segments: 1500 B: 12 us + 1.2 ms + 12 us of serialisation, 12 ms of propagation.
    let expect = 0.012 + 1500.0 * 8.0 * (2.0 / 1e9 + 1.0 / 1e7);
    assert!((owd - expect).abs() < 2e-5, "{owd} vs {expect}");
}
