//! FQ-PIE (Linux `sch_fq_pie`) on whole networks: the flow isolation it shares with FQ-CoDel,
//! with PIE deciding at enqueue in each flow queue. The networks are `fq_codel.rs`'s.

use crate::common::{f64s, jain, run, u64s};
use crate::fq_codel::net;

/// RFC 8290 §1.3 / §4.2 with PIE per queue: two bulk flows whose RTTs differ fourfold share
/// the bottleneck more evenly than through a FIFO, which favours the short RTT.
#[test]
fn fq_pie_flows_of_unequal_rtt_share_more_evenly_than_through_a_fifo() {
    let delays = ["1ms", "40ms"];
    let (_, fq) = run(&net(r#"{ type = "fq_pie" }"#, &delays, None, "40s"), 1);
    let g = f64s(&fq, "flows", "goodput_bps");
    let ratio = g[0] / g[1];
    assert!(g[0] + g[1] > 9.0e6, "the bottleneck is used: {g:?}");
    // Seed 1: 4.85 and 4.88 Mb/s (through a 100-packet FIFO 6.46 and 3.27).
    assert!((0.8..1.25).contains(&ratio), "FQ-PIE: goodputs {g:?}, ratio {ratio}");
    let (_, fifo) = run(&net(r#"{ type = "droptail", limit_packets = 100 }"#, &delays, None, "40s"), 1);
    let gf = f64s(&fifo, "flows", "goodput_bps");
    assert!(gf[0] / gf[1] > 1.25 * ratio, "a FIFO favours the short RTT more: {gf:?} vs FQ-PIE {g:?}");
    // ECN-capable flows through PIE well below MAX_ECNTH: the short-RTT flow's queue is
    // marked, not dropped (the long-RTT flow's queue stays short: seed 1 marks it never).
    let (marks, drops) = (u64s(&fq, "flows", "marks"), u64s(&fq, "flows", "drops"));
    assert!(marks[0] > 100 && drops.iter().sum::<u64>() < 10, "marks {marks:?}, drops {drops:?}");
}

/// Flow isolation: a UDP flow sending above the link rate does not starve two TCP flows; its
/// own queue's PIE drops its excess at enqueue (the TCP flows' queues are marked, not dropped).
#[test]
fn fq_pie_a_udp_flow_cannot_starve_tcp_flows() {
    let delays = ["5ms", "10ms"];
    let (_, r) = run(&net(r#"{ type = "fq_pie" }"#, &delays, Some("12Mbps"), "30s"), 2);
    let g = f64s(&r, "flows", "goodput_bps");
    let share = 10.0e6 / 3.0;
    for (i, x) in g.iter().enumerate() {
        assert!(*x > 0.75 * share, "TCP flow {i}: {x} b/s against a fair share of {share}");
    }
    assert!(jain(&g) > 0.98, "{g:?}");
    let tcp_drops = u64s(&r, "flows", "drops");
    assert!(tcp_drops.iter().all(|&d| d < 50), "TCP drops {tcp_drops:?}");
}

/// Runs through FQ-PIE are bit-identical when repeated (PIE's coin and the hash's perturbation
/// come from the queue's stream), and both overflow rules conserve packets (`run` checks).
#[test]
fn fq_pie_runs_are_deterministic() {
    for q in [
        r#"{ type = "fq_pie", flows = 4, limit_packets = 60 }"#,
        r#"{ type = "fq_pie", flows = 4, limit_packets = 60, overflow = "ns3", drop_batch = 4, derandomize = false }"#,
    ] {
        let t = net(q, &["1ms", "3ms", "5ms", "7ms", "9ms"], Some("3Mbps"), "8s");
        let (_, a) = run(&t, 3);
        let (_, b) = run(&t, 3);
        assert_eq!(a.digest(), b.digest(), "{q}");
        assert!(u64s(&a, "queues", "drops")[0] > 0, "{q}: the limit is reached");
    }
}
