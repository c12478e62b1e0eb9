//! Issue-3 behaviour in whole networks: loss recovery variants, ECN and the
//! ECN-capable SYN-ACK, with a scripted element dropping or marking chosen
//! packets at the bottleneck (packetdrill style).

use std::collections::HashMap;

use ecnsim_core::packet::{Ecn, TcpFlags};
use ecnsim_core::{ScenarioSpec, Simulation};

use crate::common::{assert_conservation, f64s, u64s};

/// One flow a -> b across r1 = r2 (10 Mb/s, RTT 2 * (1 + 10 + 1) ms = 24 ms).
/// `script` is the bottleneck queue's rules; `tcp` the `[tcp]` table's fields.
fn line(script: &str, tcp: &str, bytes: u64) -> String {
    format!(
        r#"
        simulation = {{ duration = "30s" }}
        tcp = {{ {tcp} }}
        nodes = [ {{ name = "a", kind = "host" }}, {{ name = "r1", kind = "router" }},
                  {{ name = "r2", kind = "router" }}, {{ name = "b", kind = "host" }} ]
        links = [ {{ a = "a", b = "r1", rate = "1Gbps", delay = "1ms" }},
                  {{ a = "r1", b = "r2", rate = "10Mbps", delay = "10ms", queue_ab = {{ type = "script", rules = [ {script} ] }} }},
                  {{ a = "r2", b = "b", rate = "1Gbps", delay = "1ms" }} ]
        flows = [ {{ name = "f0", src = "a", dst = "b", app = {{ type = "bulk", bytes = {bytes} }} }} ]
        "#
    )
}

fn run_tapped(text: &str) -> (Simulation, ecnsim_core::Results) {
    let spec = ScenarioSpec::from_toml_str(text).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(&spec, Some(1)).unwrap_or_else(|e| panic!("{e}"));
    sim.record_sent_packets();
    sim.run().unwrap();
    assert_conservation(&sim);
    let r = sim.results();
    (sim, r)
}

/// Data segments the sender retransmitted, with their send times in seconds.
fn retransmissions(sim: &Simulation) -> Vec<(f64, u64)> {
    let mut high = 0;
    let mut out = Vec::new();
    for p in sim.sent_packets().iter().filter(|p| p.from_initiator && p.tcp.payload > 0) {
        if p.tcp.seq < high {
            out.push((p.sent_at.as_secs_f64(), p.tcp.seq));
        }
        high = high.max(p.tcp.seq + u64::from(p.tcp.payload));
    }
    out
}

const THREE_LOSSES: &str = r#"{ action = "drop", packets = "data", flow = "f0", nth = [20, 22, 24] }"#;

fn three_losses(cc: &str) -> (Simulation, ecnsim_core::Results) {
    run_tapped(&line(THREE_LOSSES, &format!(r#"cc = "{cc}", initial_window = 4"#), 200 * 1460))
}

#[test]
fn newreno_recovers_three_losses_without_timeout() {
    let (sim, r) = three_losses("newreno");
    assert_eq!(u64s(&r, "flows", "rto_count"), vec![0]);
    assert_eq!(u64s(&r, "flows", "fast_retransmits"), vec![1]);
    assert_eq!(u64s(&r, "flows", "bytes_delivered"), vec![200 * 1460]);
    let rtx = retransmissions(&sim);
    assert_eq!(rtx.len(), 3, "{rtx:?}");
    // One per round trip: partial ACKs, about 24 ms apart.
    for w in rtx.windows(2) {
        assert!(w[1].0 - w[0].0 > 0.02, "{rtx:?}");
    }
}

#[test]
fn sack_retransmits_three_losses_within_one_round_trip() {
    let (sim, r) = three_losses("sack");
    assert_eq!(u64s(&r, "flows", "rto_count"), vec![0]);
    assert_eq!(u64s(&r, "flows", "sack_negotiated"), vec![1]);
    let rtx = retransmissions(&sim);
    assert_eq!(rtx.len(), 3, "{rtx:?}");
    assert!(rtx[2].0 - rtx[0].0 < 0.024, "all three within one RTT of detection: {rtx:?}");
}

#[test]
fn reno_three_losses_end_in_a_timeout_or_repeated_halvings() {
    let (_, r) = three_losses("reno");
    let rto = u64s(&r, "flows", "rto_count")[0];
    let fr = u64s(&r, "flows", "fast_retransmits")[0];
    assert!(rto >= 1 || fr >= 2, "rto {rto}, fast retransmits {fr}");
    assert_eq!(u64s(&r, "flows", "bytes_delivered"), vec![200 * 1460]);
}

#[test]
fn tahoe_three_losses_go_back_n_from_one_segment() {
    let (sim, r) = three_losses("tahoe");
    assert_eq!(u64s(&r, "flows", "bytes_delivered"), vec![200 * 1460]);
    // Go-back-N resends segments the receiver already had.
    assert!(retransmissions(&sim).len() > 3);
}

#[test]
fn many_marks_in_one_window_cause_one_reduction_and_one_cwr() {
    let t = line(
        r#"{ action = "mark", packets = "data", flow = "f0", nth = [30, 31, 32, 33, 34, 35] }"#,
        r#"ecn = "request", initial_window = 10"#,
        300 * 1460,
    );
    let (sim, r) = run_tapped(&t);
    assert_eq!(u64s(&r, "flows", "ecn_negotiated"), vec![1]);
    assert_eq!(u64s(&r, "flows", "ce_received"), vec![6]);
    assert_eq!(u64s(&r, "flows", "ecn_reductions"), vec![1]);
    assert_eq!(u64s(&r, "flows", "cwr_sent"), vec![1]);
    assert_eq!(u64s(&r, "queues", "marks")[2], 6);
    // ECE stops once the CWR has reached the receiver: no ACK that acknowledges
    // the CWR segment (so was sent after it arrived) carries ECE.
    let cwr = sim.sent_packets().iter().find(|p| p.tcp.payload > 0 && p.tcp.flags.contains(TcpFlags::CWR)).unwrap();
    let cwr_end = cwr.tcp.seq + u64::from(cwr.tcp.payload);
    let acks_after: Vec<_> = sim.sent_packets().iter().filter(|p| !p.from_initiator && p.tcp.ack >= cwr_end).collect();
    assert!(!acks_after.is_empty());
    assert!(acks_after.iter().all(|p| !p.tcp.flags.contains(TcpFlags::ECE)));
    // ... and before it, every ACK from the first CE on carried ECE.
    assert!(sim.sent_packets().iter().any(|p| !p.from_initiator && p.tcp.flags.contains(TcpFlags::ECE)));
}

#[test]
fn host_policies_decide_negotiation() {
    // (initiator host policy, responder host policy, negotiated)
    for (pa, pb, want) in [
        ("request", "request", 1),
        ("request", "accept", 1),
        ("request", "off", 0),
        ("accept", "request", 0),
        ("off", "accept", 0),
    ] {
        let t = line(r#"{ action = "drop", packets = "syn", nth = [1000] }"#, "", 10_000)
            .replace(r#"{ name = "a", kind = "host" }"#, &format!(r#"{{ name = "a", kind = "host", ecn = "{pa}" }}"#))
            .replace(r#"{ name = "b", kind = "host" }"#, &format!(r#"{{ name = "b", kind = "host", ecn = "{pb}" }}"#));
        let (sim, r) = run_tapped(&t);
        assert_eq!(u64s(&r, "flows", "ecn_negotiated"), vec![want], "{pa} -> {pb}");
        let data_ect = sim.sent_packets().iter().filter(|p| p.tcp.payload > 0).all(|p| p.ecn == Ecn::Ect0);
        let data_not_ect = sim.sent_packets().iter().filter(|p| p.tcp.payload > 0).all(|p| p.ecn == Ecn::NotEct);
        assert!(if want == 1 { data_ect } else { data_not_ect }, "{pa} -> {pb}");
    }
}

#[test]
fn dropped_synack_costs_the_profiles_initial_rto() {
    for (profile, rto) in [("rfc", 1.0), ("ns2-2001", 6.0), ("linux", 1.0), ("linux-2.4", 3.0)] {
        // ns2-2001 has no handshake by default (ns-2 syn_ false); ask for one.
        let t = line("", "handshake = true", 10_000).replace(
            "simulation = { duration = \"30s\" }",
            &format!("simulation = {{ duration = \"30s\", profile = \"{profile}\" }}"),
        );
        // The SYN-ACK travels b -> a: script the reverse direction of the bottleneck.
        let t = t.replace(
            "queue_ab = { type = \"script\", rules = [  ] }",
            "queue_ba = { type = \"script\", rules = [ { action = \"drop\", packets = \"synack\", nth = [1] } ] }",
        );
        let (_, r) = run_tapped(&t);
        assert_eq!(u64s(&r, "queues", "drops")[3], 1, "{profile}");
        let conn = f64s(&r, "flows", "connect_time_s")[0];
        assert!(conn > rto && conn < rto + 0.1, "{profile}: connect {conn} s, initial RTO {rto} s");
    }
}

#[test]
fn rfc5562_marked_synack_is_resent_not_ect() {
    let t = line("", r#"ecn = "request", ecn_synack = "rfc5562""#, 100_000).replace(
        "queue_ab = { type = \"script\", rules = [  ] }",
        "queue_ba = { type = \"script\", rules = [ { action = \"mark\", packets = \"synack\", nth = [1] } ] }",
    );
    let (sim, r) = run_tapped(&t);
    let synacks: Vec<_> = sim
        .sent_packets()
        .iter()
        .filter(|p| p.tcp.flags.contains(TcpFlags::SYN | TcpFlags::ACK))
        .map(|p| p.ecn)
        .collect();
    assert_eq!(synacks, vec![Ecn::Ect0, Ecn::NotEct]);
    assert_eq!(u64s(&r, "flows", "bytes_delivered"), vec![100_000]);
    // Two round trips for the handshake instead of one.
    let conn = f64s(&r, "flows", "connect_time_s")[0];
    assert!((conn - 0.048).abs() < 0.002, "{conn}");
}

/// RFC 3168 §6.1.4-6.1.5 checked on every packet of a long lossy run with ECN on.
#[test]
fn no_ect_on_retransmissions_pure_acks_or_syns_in_a_lossy_run() {
    let t = crate::common::dumbbell(
        4,
        "2Mbps",
        "20ms",
        r#"{ type = "droptail", limit_packets = 6 }"#,
        "60s",
        r#"start_jitter = "1s", tcp = { ecn = "request", cc = "newreno" }"#,
    );
    let (sim, r) = run_tapped(&t);
    assert!(u64s(&r, "flows", "packets_retransmitted").iter().sum::<u64>() > 20, "want a lossy run");
    let mut high: HashMap<(u32, bool), u64> = HashMap::new();
    let mut checked = 0;
    for p in sim.sent_packets() {
        let syn = p.tcp.flags.contains(TcpFlags::SYN);
        if p.tcp.payload == 0 || syn {
            assert_eq!(p.ecn, Ecn::NotEct, "control packet {p:?}");
            continue;
        }
        let key = (p.flow.0, p.from_initiator);
        let h = high.entry(key).or_insert(0);
        if p.tcp.seq < *h {
            assert_eq!(p.ecn, Ecn::NotEct, "retransmission {p:?}");
            checked += 1;
        } else {
            assert_eq!(p.ecn, Ecn::Ect0, "new data {p:?}");
        }
        *h = (*h).max(p.tcp.seq + u64::from(p.tcp.payload));
    }
    assert!(checked > 20);
}
