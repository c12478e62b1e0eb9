//! Accurate ECN (RFC 9768) on whole networks: the sender learns of every mark the queues made.

use ecnsim_core::ids::FlowId;

use crate::common::{dumbbell, run, u64s};

/// `n` finite DCTCP transfers of 2 MB through a step-marking bottleneck (K = 20 packets), with
/// `ecn_feedback` and delayed ACKs (RFC 5681 §4.2, RFC 8257 §3.2).
fn dctcp_dumbbell(n: usize, feedback: &str) -> String {
    let q = r#"{ type = "threshold", limit_packets = 300, k = 20 }"#;
    let flow = r#"start_jitter = "10ms", app = { type = "bulk", bytes = 2000000 }"#;
    dumbbell(n, "100Mbps", "100us", q, "3s", flow).replace(
        "simulation = { duration = \"3s\" }",
        &format!(
            "simulation = {{ duration = \"3s\" }}\ntcp = {{ rcv_window = \"64MiB\", cc = \"dctcp\", ecn = \"request\", ecn_feedback = \"{feedback}\" }}"
        ),
    )
}

/// RFC 9768 §1 / §3.2: with AccECN the Data Sender learns of every CE mark, not one per round
/// trip: once every transfer has completed, what the senders decoded (ACE field and option)
/// equals the marks the bottleneck queue made and the CE packets the receivers counted, packet
/// for packet; the option's CE bytes are those packets' payload.
#[test]
fn dctcp_over_accecn_sees_every_mark_the_queue_made() {
    let n = 4;
    let (sim, r) = run(&dctcp_dumbbell(n, "accecn"), 3);
    let queue_marks: u64 = sim.queue_counters()[0].marks.iter().sum();
    assert!(queue_marks > 100, "the queue marks: {queue_marks}");
    let flow_marks: u64 = u64s(&r, "flows", "marks").iter().sum();
    let ce_received: u64 = u64s(&r, "flows", "ce_received").iter().sum();
    let fed_back: Vec<_> = (0..n).map(|f| sim.flow_accecn(FlowId(f as u32)).expect("AccECN negotiated")).collect();
    let ce_packets: u64 = fed_back.iter().map(|c| c.ce_packets).sum();
    let ce_bytes: u64 = fed_back.iter().map(|c| c.ce_bytes).sum();
    assert_eq!((flow_marks, ce_received, ce_packets), (queue_marks, queue_marks, queue_marks));
    // Full-sized segments but for each transfer's last.
    let mss = 1460;
    assert!(ce_bytes <= ce_packets * mss && ce_bytes + n as u64 * mss >= ce_packets * mss, "{ce_bytes} B");
    // Every transfer completed (2 MB each), without a loss.
    assert!(u64s(&r, "flows", "bytes_delivered").iter().all(|&b| b == 2_000_000));
    assert_eq!(u64s(&r, "queues", "drops")[0], 0);
}

/// Classic feedback (the default) negotiates no AccECN; the same scenario still runs.
#[test]
fn classic_feedback_leaves_accecn_off() {
    let (sim, _) = run(&dctcp_dumbbell(2, "classic"), 3);
    assert!(sim.flow_accecn(FlowId(0)).is_none());
}

/// Same scenario and seed, same results (and conservation, checked by `run`).
#[test]
fn accecn_runs_are_deterministic() {
    let (_, a) = run(&dctcp_dumbbell(3, "accecn"), 11);
    let (_, b) = run(&dctcp_dumbbell(3, "accecn"), 11);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    assert_eq!(a.digest(), b.digest());
}
