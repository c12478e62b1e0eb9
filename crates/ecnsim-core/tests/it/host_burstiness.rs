//! Segmentation offload (`tcp.tso_segments`, Linux's tcp_tso_should_defer()) on a whole
//! network: conservation, determinism, and the bursts it makes at a bottleneck.

use crate::common::{dumbbell, f64s, run, u64s};

/// The bottleneck queue is queue 0 (link 0, r1 -> r2).
const BOTTLENECK: usize = 0;

/// Four DCTCP flows through a step-marking queue at 1 Gb/s (1 Gb/s access links, 4.2 ms round trips).
/// Four flows over `dumbbell`'s bottleneck (`rate`, `delay`, queue `q`) for `duration`, with
/// `sim` added to the simulation table and `tcp` as the scenario's TCP table.
fn four_flows(rate: &str, delay: &str, q: &str, duration: &str, sim: &str, tcp: &str) -> String {
    let t = dumbbell(4, rate, delay, q, duration, r#"start_jitter = "10ms""#);
    t.replace(
        &format!("simulation = {{ duration = \"{duration}\" }}"),
        &format!("simulation = {{ duration = \"{duration}\", {sim} }}\ntcp = {{ {tcp} }}"),
    )
}

fn scenario(tso: u32) -> String {
    let q = r#"{ type = "threshold", limit_packets = 1000, k = 20 }"#;
    let tcp =
        format!(r#"cc = "dctcp", ecn = "request", delayed_ack = true, rcv_window = "16MiB", tso_segments = {tso}"#);
    four_flows("1Gbps", "100us", q, "1s", r#"warmup = "0.3s""#, &tcp)
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

/// Four BBR flows over a DropTail bottleneck at 100 Mb/s, with or without offload frames.
fn bbr_scenario(tso: u32) -> String {
    let q = r#"{ type = "droptail", limit_packets = 100 }"#;
    let sim = r#"warmup = "0.5s", profile = "linux-6.x""#;
    four_flows("100Mbps", "5ms", q, "2s", sim, &format!(r#"cc = "bbr", tso_segments = {tso}"#))
}

/// BBR's paced offload frames (Linux tcp_tso_autosize(), docs/models/bbr.md): conservation holds
/// (`run` asserts it), the same seed gives the same results, the results differ from one segment
/// per departure, and every flow moves.
#[test]
fn bbr_offload_frames_are_deterministic_and_conserve_packets() {
    let (_, off) = run(&bbr_scenario(1), 3);
    let (_, on) = run(&bbr_scenario(45), 3);
    let (_, again) = run(&bbr_scenario(45), 3);
    for col in ["arrivals", "departures", "drops", "max_packets"] {
        assert_eq!(u64s(&on, "queues", col), u64s(&again, "queues", col), "queues.{col}");
    }
    assert_eq!(f64s(&on, "flows", "goodput_bps"), f64s(&again, "flows", "goodput_bps"));
    assert_ne!(f64s(&on, "flows", "goodput_bps"), f64s(&off, "flows", "goodput_bps"));
    assert!(f64s(&on, "flows", "goodput_bps").iter().all(|&g| g > 1e6));
}
