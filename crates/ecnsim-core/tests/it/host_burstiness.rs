//! Segmentation offload (`tcp.tso_segments`, Linux's tcp_tso_should_defer()) on a whole
//! network: conservation, determinism, and the bursts it makes at a bottleneck.

use crate::common::{dumbbell, f64s, run, u64s};

/// The bottleneck queue is queue 0 (link 0, r1 -> r2).
const BOTTLENECK: usize = 0;

/// Four DCTCP flows through a step-marking queue at 1 Gb/s (1 Gb/s access links, 4.2 ms round trips).
fn scenario(tso: u32) -> String {
    let q = r#"{ type = "threshold", limit_packets = 1000, k = 20 }"#;
    let t = dumbbell(4, "1Gbps", "100us", q, "1s", r#"start_jitter = "10ms""#);
    t.replace(
        "simulation = { duration = \"1s\" }",
        &format!(
            "simulation = {{ duration = \"1s\", warmup = \"0.3s\" }}\n\
             tcp = {{ cc = \"dctcp\", ecn = \"request\", delayed_ack = true, rcv_window = \"16MiB\", tso_segments = {tso} }}"
        ),
    )
}

/// Conservation holds (`run` asserts it), the same seed gives the same results, and the
/// offload bursts (whole frames at the 1 Gb/s access rate, four senders into one 1 Gb/s
/// port) raise the bottleneck's largest queue above that of segment-by-segment senders.
#[test]
fn offload_bursts_raise_the_peak_queue_deterministically() {
    let (_, off) = run(&scenario(1), 7);
    let (_, on) = run(&scenario(44), 7);
    let (_, again) = run(&scenario(44), 7);
    for col in ["arrivals", "departures", "marks", "drops", "max_packets"] {
        assert_eq!(u64s(&on, "queues", col), u64s(&again, "queues", col), "queues.{col}");
    }
    assert_eq!(f64s(&on, "flows", "goodput_bps"), f64s(&again, "flows", "goodput_bps"));
    let peak_off = u64s(&off, "queues", "max_packets")[BOTTLENECK];
    let peak_on = u64s(&on, "queues", "max_packets")[BOTTLENECK];
    assert!(peak_on > peak_off + 5, "peak queue {peak_on} with offload, {peak_off} without");
    // Every flow moves (deferral waits for ACKs, never for ever).
    assert!(f64s(&on, "flows", "goodput_bps").iter().all(|&g| g > 50e6));
}
