//! CUBIC (RFC 9438) and DCTCP (RFC 8257) on whole networks.

use crate::common::{dumbbell, f64s, run, u64s};

/// The bottleneck queue is queue 0 (link 0, r1 -> r2).
const BOTTLENECK: usize = 0;

fn with(t: &str, duration: &str, warmup: &str, tcp: &str) -> String {
    t.replace(
        &format!("simulation = {{ duration = \"{duration}\" }}"),
        &format!("simulation = {{ duration = \"{duration}\", warmup = \"{warmup}\" }}\ntcp = {{ rcv_window = \"64MiB\", {tcp} }}"),
    )
}

/// SIGCOMM 2010 §3.1 / RFC 8257 §3: N DCTCP flows through a step-marking queue (mark on
/// arrival when the instantaneous queue exceeds K) keep the queue near K, the link busy and the
/// buffer from overflowing. (§3.3's analysis: the queue peaks at K + N and swings by
/// about ½·sqrt(2N(C·RTT + K)) packets, here a dozen, around a mean near K.)
#[test]
fn dctcp_holds_the_queue_near_k_with_full_throughput() {
    let k = 20.0;
    let q = r#"{ type = "threshold", limit_packets = 300, k = 20 }"#;
    let t = dumbbell(4, "100Mbps", "100us", q, "4s", r#"start_jitter = "10ms""#);
    let t = with(&t, "4s", "1s", r#"cc = "dctcp", ecn = "request", delayed_ack = false"#);
    let (_, r) = run(&t, 3);
    let util = f64s(&r, "queues", "utilization")[BOTTLENECK];
    assert!(util > 0.98, "utilization {util}");
    let avg = f64s(&r, "queues", "avg_packets")[BOTTLENECK];
    assert!((0.5 * k..1.5 * k).contains(&avg), "mean queue {avg} packets, K = {k}");
    assert_eq!(u64s(&r, "queues", "drops")[BOTTLENECK], 0, "no overflow: every signal is a mark");
    assert!(u64s(&r, "queues", "marks")[BOTTLENECK] > 0);
    assert!(u64s(&r, "flows", "packets_retransmitted").iter().all(|&n| n == 0));
}

/// The same queue with Reno's RFC 3168 response halves per mark: the queue drains well below
/// K and the link idles (SIGCOMM 2010 §3.1's motivation), DCTCP's proportional cut does not.
#[test]
fn dctcp_keeps_the_link_busier_than_rfc3168_reno_at_a_small_k() {
    let q = r#"{ type = "threshold", limit_packets = 300, k = 5 }"#;
    let util = |tcp: &str| {
        let t = dumbbell(1, "100Mbps", "1ms", q, "4s", "");
        let (_, r) = run(&with(&t, "4s", "1s", tcp), 1);
        f64s(&r, "queues", "utilization")[BOTTLENECK]
    };
    let dctcp = util(r#"cc = "dctcp", ecn = "request""#);
    let reno = util(r#"cc = "newreno", ecn = "request""#);
    assert!(dctcp > 0.95 && dctcp > reno + 0.05, "utilization DCTCP {dctcp}, Reno {reno}");
}

/// CUBIC fills a long fat pipe after a loss faster than Reno (RFC 9438 §1: Reno's linear
/// growth takes W/2 round trips to recover), on NewReno and on SACK recovery alike.
///
/// The `recover` guard is RFC 6582 §3.2 step 2's alone here, the same for every run: slow
/// start's overshoot loses every other packet of a 24 MB window, NewReno resends one hole per
/// round trip until the timer fires (1.62 s), and in the go-back-N that follows the §4.1 ACK
/// heuristic (the `rfc` default) reads three duplicate ACKs from resent segments the receiver
/// held, after an ACK that advanced two segments, as a loss: a fast retransmit at 1.65 s of a
/// hole the go-back-N was about to resend, and ssthresh halved from the small go-back-N flight
/// (CUBIC on NewReno, seed 2: 148 Mb/s with it, 195 Mb/s without; Reno 95 Mb/s either way).
/// That is the heuristic's failure RFC 6582 §4.1 allows for; this test is about CUBIC's growth.
#[test]
fn cubic_uses_a_long_fat_pipe_better_than_reno() {
    let q = r#"{ type = "droptail", limit_packets = 500 }"#;
    let goodput = |tcp: &str| {
        let t = dumbbell(1, "200Mbps", "20ms", q, "30s", "");
        let tcp = format!(r#"{tcp}, newreno_careful = "careful""#);
        let (_, r) = run(&with(&t, "30s", "5s", &tcp), 2);
        f64s(&r, "flows", "goodput_bps")[0]
    };
    let reno = goodput(r#"cc = "newreno""#);
    for recovery in ["newreno", "sack"] {
        let cubic = goodput(&format!(r#"cc = "cubic", recovery = "{recovery}""#));
        assert!(cubic > 1.1 * reno && cubic > 150e6, "CUBIC ({recovery}) {cubic} vs Reno {reno} b/s");
    }
}
