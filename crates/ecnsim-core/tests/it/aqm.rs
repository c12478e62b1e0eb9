//! The AQM family on whole networks: RED's average between its thresholds,
//! every discipline conserving packets, determinism, and ECN end to end.

use crate::common::{dumbbell, f64s, run, u64s};

/// The bottleneck queue is queue 0 (link 0, r1 -> r2).
const BOTTLENECK: usize = 0;

fn with_warmup(t: &str, duration: &str, warmup: &str, extra: &str) -> String {
    t.replace(
        &format!("simulation = {{ duration = \"{duration}\" }}"),
        &format!("simulation = {{ duration = \"{duration}\", warmup = \"{warmup}\"{extra} }}"),
    )
}

/// Samples of the bottleneck's `queue_series` column `col` after `from_s`.
fn bottleneck_series(r: &ecnsim_core::Results, col: &str, from_s: f64) -> Vec<f64> {
    let ids = u64s(r, "queue_series", "queue_id");
    let times = f64s(r, "queue_series", "time_s");
    let values = f64s(r, "queue_series", col);
    ids.iter()
        .zip(times)
        .zip(values)
        .filter(|((id, t), _)| **id == BOTTLENECK as u64 && *t >= from_s)
        .map(|(_, v)| v)
        .collect()
}

/// With parameters chosen for the load (Floyd 1997: min_th large enough for
/// utilisation, max_th = 3 min_th, w_q 0.002), a long run keeps RED's average
/// queue between the thresholds, and the bottleneck busy.
#[test]
fn red_holds_the_average_between_the_thresholds() {
    let red =
        r#"{ type = "red", limit_packets = 150, min_th = 15, max_th = 45, w_q = 0.002, max_p = 0.1, gentle = true }"#;
    let t = dumbbell(16, "10Mbps", "20ms", red, "120s", r#"start_jitter = "2s""#);
    let t = with_warmup(&t, "120s", "20s", r#", sample_interval = "100ms""#);
    let (_, r) = run(&t, 11);
    let avg = bottleneck_series(&r, "aqm_avg", 20.0);
    let mean = avg.iter().sum::<f64>() / avg.len() as f64;
    assert!((15.0..45.0).contains(&mean), "mean RED average {mean}");
    let inside = avg.iter().filter(|a| (15.0..45.0).contains(*a)).count() as f64 / avg.len() as f64;
    assert!(inside > 0.9, "average inside [min_th, max_th) {:.0}% of the time", inside * 100.0);
    let util = f64s(&r, "queues", "utilization")[BOTTLENECK];
    assert!(util > 0.95, "utilization {util}");
    // RED's early drops dominate; the buffer rarely overflows.
    let early = u64s(&r, "queues", "drops_early")[BOTTLENECK];
    let overflow = u64s(&r, "queues", "drops_overflow")[BOTTLENECK];
    assert!(early > 10 * overflow.max(1), "early {early}, overflow {overflow}");
}

/// DropTail and every AQM, on the same congested dumbbell: packets are
/// conserved, the bottleneck is used, and every AQM keeps the average queue
/// well below DropTail's full buffer. (Utilisation is only bounded loosely:
/// RED variants with a small max_th see synchronised timeouts of Reno flows.)
#[test]
fn every_discipline_conserves_packets_on_a_dumbbell() {
    let queues = [
        ("droptail", r#"{ type = "droptail", limit_packets = 300 }"#),
        ("red", r#"{ type = "red", limit_packets = 300, min_th = 10, max_th = 30 }"#),
        ("ared", r#"{ type = "red", limit_packets = 300, min_th = 10, max_th = 30, adaptive = "floyd" }"#),
        (
            "red_linux",
            r#"{ type = "red", limit_packets = 300, min_th = "tc", max_th = "tc", w_q = "tc", drop_spacing = "linux", measure = "bytes", mean_pktsize = 1500 }"#,
        ),
        ("aecn", r#"{ type = "aecn", limit_packets = 300, variant = "aecn2" }"#),
        ("threshold", r#"{ type = "threshold", limit_packets = 300, k = 20 }"#),
        ("pi", r#"{ type = "pi", limit_packets = 300, qref = 30, w = 160 }"#),
        ("rem", r#"{ type = "rem", limit_packets = 300, b_ref = 20, mean_pktsize = 1500 }"#),
        ("codel", r#"{ type = "codel", limit_packets = 300 }"#),
        ("pie", r#"{ type = "pie", limit_packets = 300 }"#),
        ("fq_codel", r#"{ type = "fq_codel", limit_packets = 300 }"#),
        ("fq_pie", r#"{ type = "fq_pie", limit_packets = 300 }"#),
    ];
    let mut avg = Vec::new();
    for (name, q) in queues {
        let t = dumbbell(8, "10Mbps", "10ms", q, "40s", r#"start_jitter = "1s""#);
        let t = with_warmup(&t, "40s", "10s", "");
        let (_, r) = run(&t, 5); // asserts conservation
        let util = f64s(&r, "queues", "utilization")[BOTTLENECK];
        assert!(util > 0.8, "{name}: utilization {util}");
        let drops = u64s(&r, "queues", "drops")[BOTTLENECK];
        assert!(drops > 0, "{name}: the bottleneck must be congested");
        avg.push((name, f64s(&r, "queues", "avg_packets")[BOTTLENECK]));
    }
    let droptail = avg[0].1;
    assert!(droptail > 150.0, "DropTail fills its buffer: {droptail}");
    for &(name, a) in &avg[1..] {
        assert!(a < droptail / 2.0, "{name}: average queue {a} vs DropTail {droptail}");
    }
}

/// RED's idle-period counters (`aqm_idle_*`): with the idle period starting when the last
/// packet leaves the wire (`idle_start = "tx_end"`, ns-2), RED's idle time is the link's idle
/// time, and a link that is busy throughout shows none; other disciplines report zero.
#[test]
fn red_counts_its_idle_periods() {
    // Two window-limited flows (8 packets each) on a 10 Mb/s, 20 ms link: the link idles each RTT.
    let red = r#"{ type = "red", limit_packets = 100, min_th = 30, max_th = 90, idle_start = "tx_end" }"#;
    let t = dumbbell(2, "10Mbps", "20ms", red, "20s", "");
    let t = t.replace("nodes = [", "tcp = { max_cwnd = 8 }\nnodes = [");
    let (_, r) = run(&t, 1);
    let util = f64s(&r, "queues", "utilization")[BOTTLENECK];
    let idle_s = f64s(&r, "queues", "aqm_idle_s")[BOTTLENECK];
    let periods = u64s(&r, "queues", "aqm_idle_periods")[BOTTLENECK];
    let decays = u64s(&r, "queues", "aqm_idle_decays")[BOTTLENECK];
    assert!(util < 0.5, "window-limited: utilization {util}");
    // Idle time of the link over the 20 s, less at most the idle period still open at the end
    // (an idle period is counted when an arrival ends it).
    let link_idle = (1.0 - util) * 20.0;
    assert!(idle_s <= link_idle + 1e-9 && idle_s > link_idle - 0.05, "RED idle {idle_s} s, link idle {link_idle} s");
    assert!(periods > 100 && decays > 0 && decays <= periods, "periods {periods}, decays {decays}");
    // The access links (queues 2 on; 1 is the bottleneck's ACK direction) are DropTail: no AQM
    // average, no idle periods counted.
    assert!(u64s(&r, "queues", "aqm_idle_periods")[2..].iter().all(|&p| p == 0));
}

/// A run with RED's random stream is bit-identical when repeated, and changes with the seed.
#[test]
fn red_runs_are_deterministic() {
    let red = r#"{ type = "red", limit_packets = 60, min_th = 5, max_th = 15, victim = "random", mark_target = "front", ecn = "rfc3168" }"#;
    let t = dumbbell(6, "5Mbps", "10ms", red, "20s", r#"start_jitter = "1s", tcp = { ecn = "request" }"#);
    let t = with_warmup(&t, "20s", "2s", r#", sample_interval = "50ms""#);
    let (_, a) = run(&t, 3);
    let (_, b) = run(&t, 3);
    let (_, c) = run(&t, 4);
    assert_eq!(a.digest(), b.digest());
    assert_ne!(a.digest(), c.digest());
    assert!(u64s(&a, "queues", "drops")[BOTTLENECK] + u64s(&a, "queues", "marks")[BOTTLENECK] > 0);
}

/// ECN end to end: with ECN-capable TCP, RED (RFC 3168 policy) signals by
/// marking below max_th; senders see the marks and reduce; RED's early
/// drops fall to (almost) nothing.
#[test]
fn red_marks_reach_ecn_senders() {
    let red = r#"{ type = "red", limit_packets = 150, min_th = 15, max_th = 45, ecn = "rfc3168", gentle = true }"#;
    let t = dumbbell(8, "10Mbps", "20ms", red, "60s", r#"start_jitter = "1s", tcp = { ecn = "request" }"#);
    let t = with_warmup(&t, "60s", "10s", "");
    let (_, r) = run(&t, 2);
    let marks = u64s(&r, "queues", "marks_early")[BOTTLENECK];
    let early_drops = u64s(&r, "queues", "drops_early")[BOTTLENECK];
    assert!(marks > 100, "marks {marks}");
    // ECT packets are marked, not dropped, below max_th: the only early drops are of Not-ECT
    // packets, which are retransmissions (RFC 3168 §6.1.5).
    let retransmitted: u64 = u64s(&r, "flows", "packets_retransmitted").iter().sum();
    assert!(early_drops <= retransmitted, "early drops {early_drops}, retransmissions {retransmitted}");
    assert!(u64s(&r, "flows", "ecn_negotiated").iter().all(|&x| x == 1));
    let reductions: u64 = u64s(&r, "flows", "ecn_reductions").iter().sum();
    assert!(reductions > 10, "senders react to marks: {reductions}");
    let util = f64s(&r, "queues", "utilization")[BOTTLENECK];
    assert!(util > 0.95, "utilization {util}");
}

/// Mark-front (Liu & Jain): the mark goes to the packet at the head of the
/// queue, so the congestion signal leaves with the next departure instead of
/// after the whole queue; a sender reacts sooner than with mark-tail.
#[test]
fn mark_front_notifies_the_sender_sooner_than_mark_tail() {
    // One flow in slow start into RED acting on the instantaneous queue (w_q = 1): the
    // first decision happens at the same instant in both runs (same stream, same arrivals).
    let first_reaction = |target: &str| {
        let red = format!(
            r#"{{ type = "red", limit_packets = 200, min_th = 20, max_th = 60, w_q = 1.0, max_p = 1.0, drop_spacing = "geometric", ecn = "rfc3168", mark_target = "{target}" }}"#
        );
        let t = dumbbell(
            1,
            "10Mbps",
            "20ms",
            &red,
            "3s",
            r#"tcp = { ecn = "request", initial_window = 10, rcv_window = "1MB" }"#,
        );
        let t = t.replace(
            "simulation = { duration = \"3s\" }",
            "simulation = { duration = \"3s\", sample_interval = \"1ms\" }",
        );
        let (_, r) = run(&t, 9);
        let times = f64s(&r, "flow_series", "time_s");
        let ssthresh = f64s(&r, "flow_series", "ssthresh_bytes");
        let at = times.iter().zip(&ssthresh).find(|(_, s)| s.is_finite()).map(|(t, _)| *t);
        (at.expect("the sender reacts to a mark"), u64s(&r, "queues", "marks")[BOTTLENECK])
    };
    let (front, front_marks) = first_reaction("front");
    let (tail, tail_marks) = first_reaction("arriving");
    assert!(front_marks > 0 && tail_marks > 0);
    // At least min_th packets (20 x 1.2 ms) of queueing delay are saved.
    assert!(front + 0.020 <= tail, "first reaction: mark-front {front} s, mark-tail {tail} s");
}
