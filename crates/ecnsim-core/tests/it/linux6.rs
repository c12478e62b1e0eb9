//! The `linux-6.x` profile on a dumbbell: runs conserve packets and repeat bit for bit, and
//! each of its behaviours (PRR, quick-ACK mode, Linux's RTO, RACK-TLP) is in force and changes the run.

use crate::common::{dumbbell, run, u64s};

/// Four CUBIC flows over a 20-packet DropTail queue (losses every few round trips), with or
/// without ECN marking at a RED queue, under `linux-6.x`, `tcp` set on top.
fn scenario(queue: &str, tcp: &str) -> String {
    scenario_n(4, queue, tcp)
}

/// [`scenario`] with `n` flows.
fn scenario_n(n: usize, queue: &str, tcp: &str) -> String {
    dumbbell(n, "10Mbps", "20ms", queue, "15s", "start_jitter = \"1s\"")
        .replace(
            "duration = \"15s\"",
            "duration = \"15s\", profile = \"linux-6.x\", warmup = \"3s\", sample_interval = \"250ms\"",
        )
        .replace("nodes = [", &format!("tcp = {{ {tcp} }}\nnodes = ["))
}

const DROPTAIL: &str = r#"{ type = "droptail", limit_packets = 20 }"#;
const RED_ECN: &str =
    r#"{ type = "red", limit_packets = 60, min_th = 5, max_th = 15, ecn = "rfc3168", measure = "packets" }"#;

#[test]
fn linux6_runs_conserve_and_repeat_bit_for_bit() {
    for (queue, tcp) in [(DROPTAIL, ""), (RED_ECN, r#"ecn = "request""#)] {
        let t = scenario(queue, tcp);
        let (_, a) = run(&t, 11);
        let (_, b) = run(&t, 11);
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        let (_, c) = run(&t, 12);
        assert_ne!(a.digest(), c.digest(), "the start jitter draws from the seed");
        let fr: u64 = u64s(&a, "flows", "fast_retransmits").iter().sum();
        if queue == DROPTAIL {
            assert!(fr > 0, "the 20-packet queue overflows: {fr}");
        }
    }
}

/// Each option of the profile is in force: setting it back to the value every other profile
/// has changes the run (PRR's sending rate, the receiver's ACK count, the RTO).
#[test]
fn each_linux6_behaviour_changes_the_run() {
    let base = run(&scenario(DROPTAIL, ""), 5).1;
    for (field, old) in [
        ("recovery_rate", r#"recovery_rate = "rfc6675""#),
        ("quickack", r#"quickack = "off""#),
        ("rto_estimator", r#"rto_estimator = "rfc6298""#),
        ("slow_start_increase", r#"slow_start_increase = "rfc5681""#),
        ("cubic_initial_growth", r#"cubic_initial_growth = "rfc9438""#),
        ("loss_detection", r#"loss_detection = "dupack""#),
        ("reduction_basis", r#"reduction_basis = "flight_size""#),
        ("rto_rearm", r#"rto_rearm = "rfc6298""#),
    ] {
        let other = run(&scenario(DROPTAIL, old), 5).1;
        assert_ne!(base.digest(), other.digest(), "{field} makes no difference");
    }
    // Quick-ACK mode sends more ACKs per data segment than plain delayed ACKs (each flow's first
    // 16 data segments, and 16 after every lost delayed ACK's duplicate data). Counted over the
    // first 2 s (no warm-up), where every flow begins with its 16, through a queue deep enough
    // for no loss: over 15 s with losses the difference (16 ACKs a flow) drowned in how the two
    // runs' losses differed, and its sign flipped with unrelated changes (0.5627 against 0.5636
    // once the reduction basis became cwnd).
    let deep = r#"{ type = "droptail", limit_packets = 1000 }"#;
    let whole = |tcp: &str| {
        scenario(deep, tcp).replace("warmup = \"3s\", ", "").replace("duration = \"15s\"", "duration = \"2s\"")
    };
    let per_segment = |r: &ecnsim_core::Results| {
        let acks: u64 = u64s(r, "flows", "acks_sent").iter().sum();
        let data: u64 = u64s(r, "flows", "packets_sent").iter().sum();
        acks as f64 / data as f64
    };
    let (on, off) = (run(&whole(""), 5).1, run(&whole(r#"quickack = "off""#), 5).1);
    assert!(per_segment(&on) > per_segment(&off), "{} vs {}", per_segment(&on), per_segment(&off));
}

/// RACK-TLP (RFC 8985) against duplicate ACKs on the lossy dumbbell, same seeds: runs conserve and
/// repeat, losses are repaired with fewer retransmission timeouts (TLP probes a tail loss at
/// 2·SRTT, RACK finds lost retransmissions by time; a timeout remains the last resort).
#[test]
fn rack_repairs_losses_with_fewer_timeouts_than_duplicate_acks() {
    let sum = |r: &ecnsim_core::Results, col: &str| u64s(r, "flows", col).iter().sum::<u64>();
    let (mut rack_rtos, mut dupack_rtos) = (0, 0);
    // 16 flows over a 6-packet queue: windows of a few segments, where losses end in timeouts
    // under the duplicate-ACK rules.
    let shallow = r#"{ type = "droptail", limit_packets = 6 }"#;
    for seed in [1, 2, 3] {
        let t = scenario_n(16, shallow, "");
        let (_, rack) = run(&t, seed);
        let (_, again) = run(&t, seed);
        assert_eq!(rack.digest(), again.digest());
        let (_, dupack) = run(&scenario_n(16, shallow, r#"loss_detection = "dupack""#), seed);
        assert!(sum(&rack, "fast_retransmits") > 0);
        rack_rtos += sum(&rack, "rto_count");
        dupack_rtos += sum(&dupack, "rto_count");
    }
    eprintln!("RTOs over three seeds: rack {rack_rtos}, dupack {dupack_rtos}");
    assert!(rack_rtos < dupack_rtos, "RTOs: rack {rack_rtos}, dupack {dupack_rtos}");
}
