//! ns-2 dialogues: tiny scenarios run in ns-2.35 with the 2001 defaults set in Tcl
//! (`validation/ns2/dialogues/dialogue.tcl`, the command is in each test's comment) and
//! here with the `ns2-2001` profile, on the same line a - r1 - r2 - b (1 Gb/s 1 ms,
//! 10 Mb/s 10 ms, 1 Gb/s 1 ms). Both sides CE-mark the listed data packets on r1 -> r2
//! and drop them on r2 -> b, counting every data packet that passes (retransmissions
//! included), from 1. The expected values are ns-2's outputs; the mechanisms are
//! deterministic, so they must match exactly. ns-2 numbers packets from 0: packet `k`
//! is ecnsim's sequence number `1 + 1000 k`.

use ecnsim_core::packet::TcpFlags;
use ecnsim_core::{ScenarioSpec, Simulation};

use crate::common::{assert_conservation, f64s, u64s};

/// The line, `ns2-2001` profile, `packets` packets of 1000 B, marks and drops as above.
fn ns2_line(cc: &str, packets: u64, drops: &[u64], marks: &[u64], tcp: &str) -> String {
    let list = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    let mark = if marks.is_empty() {
        String::new()
    } else {
        format!(
            r#", queue_ab = {{ type = "script", rules = [ {{ action = "mark", packets = "data", nth = [{}] }} ] }}"#,
            list(marks)
        )
    };
    let drop = if drops.is_empty() {
        String::new()
    } else {
        format!(
            r#", queue_ab = {{ type = "script", rules = [ {{ action = "drop", packets = "data", nth = [{}] }} ] }}"#,
            list(drops)
        )
    };
    let sep = if tcp.is_empty() { "" } else { ", " };
    format!(
        r#"
        simulation = {{ duration = "30s", profile = "ns2-2001" }}
        tcp = {{ cc = "{cc}"{sep}{tcp} }}
        nodes = [ {{ name = "a", kind = "host" }}, {{ name = "r1", kind = "router" }},
                  {{ name = "r2", kind = "router" }}, {{ name = "b", kind = "host" }} ]
        links = [ {{ a = "a", b = "r1", rate = "1Gbps", delay = "1ms" }},
                  {{ a = "r1", b = "r2", rate = "10Mbps", delay = "10ms"{mark} }},
                  {{ a = "r2", b = "b", rate = "1Gbps", delay = "1ms"{drop} }} ]
        flows = [ {{ name = "f0", src = "a", dst = "b", app = {{ type = "bulk", bytes = {} }} }} ]
        "#,
        packets * 1000
    )
}

struct Run {
    sim: Simulation,
    r: ecnsim_core::Results,
}

impl Run {
    fn new(text: &str) -> Self {
        let spec = ScenarioSpec::from_toml_str(text).unwrap_or_else(|e| panic!("{e}"));
        let mut sim = Simulation::new(&spec, Some(1)).unwrap_or_else(|e| panic!("{e}"));
        sim.record_sent_packets();
        sim.run().unwrap_or_else(|e| panic!("{e}"));
        assert_conservation(&sim);
        let r = sim.results();
        Run { sim, r }
    }
    fn u(&self, col: &str) -> u64 {
        u64s(&self.r, "flows", col)[0]
    }
    /// Data packets the sender sent: (time s, ns-2 packet number, CWR set).
    fn sent(&self) -> Vec<(f64, u64, bool)> {
        let data = self.sim.sent_packets().iter().filter(|p| p.from_initiator && p.tcp.payload > 0);
        data.map(|p| (p.sent_at.as_secs_f64(), (p.tcp.seq - 1) / 1000, p.tcp.flags.contains(TcpFlags::CWR))).collect()
    }
    /// Retransmitted packets: (time s, ns-2 packet number).
    fn retransmissions(&self) -> Vec<(f64, u64)> {
        let mut next = 0;
        let mut out = Vec::new();
        for (t, k, _) in self.sent() {
            if k < next {
                out.push((t, k));
            }
            next = next.max(k + 1);
        }
        out
    }
    fn retransmitted_numbers(&self) -> Vec<u64> {
        self.retransmissions().iter().map(|&(_, k)| k).collect()
    }
    fn delivered_packets(&self) -> u64 {
        self.u("bytes_delivered") / 1000
    }
}

// ---------------------------------------------------------------------------
// Loss recovery (issue 13 item 3: bugFix_)
// ---------------------------------------------------------------------------

/// `ns dialogue.tcl Reno 60000 20,22,24 -`: fast retransmit of 19 (ssthresh 20 -> 10), no
/// second fast retransmit in the window (bugFix_), a timeout (ssthresh -> 5) resends 21, then
/// 23 and 24 go-back-N. ns-2: summary 64 4 1 0 60; retransmissions 19@0.131 21@0.456 23@0.481 24@0.481.
#[test]
fn reno_three_losses_one_fast_retransmit_then_a_timeout_as_ns2() {
    let run = Run::new(&ns2_line("reno", 60, &[20, 22, 24], &[], ""));
    assert_eq!(run.retransmitted_numbers(), vec![19, 21, 23, 24]);
    assert_eq!((run.u("packets_sent"), run.u("fast_retransmits"), run.u("rto_count")), (64, 1, 1));
    assert_eq!(run.delivered_packets(), 60);
    let rtx = run.retransmissions();
    for ((t, _), ns2) in rtx.iter().zip([0.131, 0.456, 0.481, 0.481]) {
        assert!((t - ns2).abs() < 0.002, "{rtx:?}");
    }
}

/// With window_ 40 the second loss gets enough duplicate ACKs for a second fast retransmit,
/// which bugFix_ forbids. `ns dialogue.tcl Reno 100000 30,32,34 - window_=40`: retransmissions
/// 29@0.151 31@0.476 33@0.501 34@0.501, ssthresh 40 -> 15 -> 7 (timeout), summary 104 4 1 0 100.
/// `... bugFix_=false`: 29@0.151 31@0.188 (a second fast retransmit, ssthresh 7) 33@0.513
/// (timeout, ssthresh 3), summary 103 3 1 0 100.
#[test]
fn reno_bugfix_forbids_a_second_fast_retransmit_in_one_window_as_ns2() {
    let on = Run::new(&ns2_line("reno", 100, &[30, 32, 34], &[], "max_cwnd = 40"));
    assert_eq!(on.retransmitted_numbers(), vec![29, 31, 33, 34]);
    assert_eq!((on.u("packets_sent"), on.u("fast_retransmits"), on.u("rto_count")), (104, 1, 1));
    let off = Run::new(&ns2_line("reno", 100, &[30, 32, 34], &[], "max_cwnd = 40, reno_bugfix = false"));
    assert_eq!(off.retransmitted_numbers(), vec![29, 31, 33]);
    assert_eq!((off.u("packets_sent"), off.u("fast_retransmits"), off.u("rto_count")), (103, 2, 1));
    let rtx = off.retransmissions();
    for ((t, _), ns2) in rtx.iter().zip([0.151, 0.188, 0.513]) {
        assert!((t - ns2).abs() < 0.002, "{rtx:?}");
    }
}

/// `ns dialogue.tcl Tahoe 60000 20,22,24,26,28 -`: one fast retransmit, then slow start
/// go-back-N resends 19 and 21..31; ns-2: summary 72 12 0 0 60. With bugFix_=false ns-2
/// fast-retransmits again on the dupacks of the go-back-N and resends 27 packets (summary 87 27 0 0 60).
#[test]
fn tahoe_five_losses_resend_twelve_packets_as_ns2() {
    let run = Run::new(&ns2_line("tahoe", 60, &[20, 22, 24, 26, 28], &[], ""));
    let mut expect = vec![19];
    expect.extend(21..=31);
    assert_eq!(run.retransmitted_numbers(), expect);
    assert_eq!((run.u("packets_sent"), run.u("rto_count")), (72, 0));
    let off = Run::new(&ns2_line("tahoe", 60, &[20, 22, 24, 26, 28], &[], "reno_bugfix = false"));
    assert_eq!((off.u("packets_sent"), off.u("packets_retransmitted")), (87, 27));
}

/// ns-2's `Agent/TCP/Sack1` (`tcp.sack_variant = "ns2_sack1"`, the `ns2-2001` default), against
/// RFC 6675. `ns dialogue.tcl Sack1 60000 20,22,24 -`: the third duplicate ACK retransmits 19
/// (ssthresh 20 -> 10) with pipe_ = 38 - 18 - 3 = 17 packets; each ACK takes one off, so the
/// next hole, 21, goes when pipe_ falls below cwnd_ 10, then 23; new data follows. ns-2 (summary
/// 63 3 0 0 60): 19@0.131463, 21@0.149911, 23@0.150711, 39 and 40@0.156324, 41 and
/// 42@0.174767, 43..48@0.17556, 49@0.181173, 50@0.181973. RFC 6675's pipe counts 21 as lost
/// once three segments above it are SACKed and resends it at 0.1363 s, 13.6 ms before ns-2.
/// `... Sack1 100000 30,32,34,36,38,40 -` (six losses, summary 106 6 0 0 100): 29@0.151511,
/// 31@0.160311, 33@0.161111, 35@0.161911, 37@0.162711, 39 and 49@0.17638, 50 and 51@0.18518.
#[test]
fn sack1_recovery_sends_as_ns2() {
    let run = Run::new(&ns2_line("sack", 60, &[20, 22, 24], &[], ""));
    assert_eq!((run.u("packets_sent"), run.u("fast_retransmits"), run.u("rto_count")), (63, 1, 0));
    assert_eq!(run.delivered_packets(), 60);
    let ns2 = [
        (19, 0.131_463),
        (21, 0.149_911),
        (23, 0.150_711),
        (39, 0.156_324),
        (40, 0.156_324),
        (41, 0.174_767),
        (42, 0.174_767),
        (43, 0.175_56),
        (48, 0.175_56),
        (49, 0.181_173),
        (50, 0.181_973),
    ];
    let sent = run.sent();
    let at = |k: u64| sent.iter().rev().find(|s| s.1 == k).unwrap().0;
    for (k, t) in ns2 {
        assert!((at(k) - t).abs() < 0.000_1, "packet {k} sent at {} s, ns-2 {t} s", at(k));
    }
    let rfc = Run::new(&ns2_line("sack", 60, &[20, 22, 24], &[], r#"sack_variant = "rfc6675""#));
    let rtx = rfc.retransmissions();
    assert_eq!(rtx.iter().map(|r| r.1).collect::<Vec<_>>(), vec![19, 21, 23]);
    assert!((rtx[1].0 - 0.136_266).abs() < 0.000_1, "{rtx:?}");

    let six = Run::new(&ns2_line("sack", 100, &[30, 32, 34, 36, 38, 40], &[], ""));
    assert_eq!((six.u("packets_sent"), six.u("packets_retransmitted"), six.u("rto_count")), (106, 6, 0));
    let sent = six.sent();
    let at = |k: u64| sent.iter().rev().find(|s| s.1 == k).unwrap().0;
    for (k, t) in [(29, 0.151_511), (31, 0.160_311), (37, 0.162_711), (39, 0.176_38), (49, 0.176_38), (51, 0.185_18)] {
        assert!((at(k) - t).abs() < 0.000_1, "packet {k} sent at {} s, ns-2 {t} s", at(k));
    }
}

/// The `rfc` profile's Tahoe without `reno_bugfix` (issue 35): five losses in one window of a
/// 200-packet transfer. Each fast retransmit ends in a go-back-N, and the segments it resends
/// that the receiver held bring three duplicate ACKs of the next hole, or of data sent after
/// the window: with no guard that is another fast retransmit, another go-back-N, once per round
/// trip to the end of the transfer (27 fast retransmits, 168 packets resent). RFC 6582 §4: those
/// duplicate ACKs are no new congestion; the §4.1 ACK heuristic (the cumulative ACK before them
/// jumped by more than 4 SMSS) tells them apart, so the `rfc` rule resends the five holes in one
/// go-back-N, as ns-2's `bugFix_` does.
#[test]
fn rfc_tahoe_go_back_n_starts_no_cascade_of_fast_retransmits() {
    let line = |tcp: &str| {
        ns2_line("tahoe", 200, &[20, 22, 24, 26, 28], &[], tcp).replace(r#"profile = "ns2-2001""#, r#"profile = "rfc""#)
    };
    let rfc = Run::new(&line("mss = 1000"));
    assert_eq!((rfc.u("fast_retransmits"), rfc.u("packets_retransmitted"), rfc.u("rto_count")), (1, 12, 0));
    assert_eq!(rfc.delivered_packets(), 200);
    let unguarded = Run::new(&line(r#"mss = 1000, newreno_careful = "careful""#));
    assert_eq!((unguarded.u("fast_retransmits"), unguarded.u("packets_retransmitted")), (27, 168));
}

/// NewReno's partial ACKs in ns-2 of 2001 (issue 13 follow-up, item 1): `ns dialogue.tcl
/// Newreno 60000 20,22,24 -` (newreno_changes1_ 0, partial_window_deflation_ 0,
/// exit_recovery_fix_ 0). Each partial ACK drops the inflation (cwnd_ = ssthresh_ = 10),
/// retransmits the next hole and resets the timer; no new data goes until recovery ends.
/// ns-2: 19@0.1314, 21@0.1563, 23@0.1811, then 39..48 at 0.2060; summary 63 3 0 0 60.
/// With partial_window_deflation_=1 newreno_changes1_=1 (RFC 6582 and ns-2 from 2003) new data
/// goes out during recovery: 39 and 40 at 0.1563, 41 and 42 at 0.1811.
#[test]
fn newreno_partial_acks_send_no_new_data_as_ns2_2001() {
    let run = Run::new(&ns2_line("newreno", 60, &[20, 22, 24], &[], ""));
    let rtx = run.retransmissions();
    assert_eq!(rtx.iter().map(|r| r.1).collect::<Vec<_>>(), vec![19, 21, 23], "{rtx:?}");
    for ((t, _), ns2) in rtx.iter().zip([0.131_443, 0.156_292, 0.181_14]) {
        assert!((t - ns2).abs() < 0.001, "{rtx:?}");
    }
    assert_eq!((run.u("packets_sent"), run.u("fast_retransmits"), run.u("rto_count")), (63, 1, 0));
    let sent = run.sent();
    let new_after_loss: Vec<(f64, u64)> =
        sent.iter().filter(|s| s.0 > 0.13 && s.0 < 0.21 && s.1 > 38).map(|s| (s.0, s.1)).collect();
    assert_eq!(new_after_loss.iter().map(|s| s.1).collect::<Vec<_>>(), (39..=48).collect::<Vec<_>>());
    assert!(new_after_loss.iter().all(|s| (s.0 - 0.205_989).abs() < 0.001), "{new_after_loss:?}");
    let rfc = Run::new(&ns2_line("newreno", 60, &[20, 22, 24], &[], r#"newreno_partial_ack = "rfc6582""#));
    let early: Vec<u64> = rfc.sent().iter().filter(|s| s.0 > 0.15 && s.0 < 0.19 && s.1 > 38).map(|s| s.1).collect();
    assert_eq!(early, vec![39, 40, 41, 42]);
}

/// The careful check (item 3a): after the timeout of the ECN-after-timeout run, recover_ is
/// packet 38; packet 39, the first new one, is lost too (drop ordinal 59), and its duplicate
/// ACKs acknowledge exactly `recover`. ns-2's NewReno of 2001 is careful (highest_ack_ >
/// recover_): no fast retransmit, a timeout resends 39 at 1.1541 s (summary 120 20 1 1 100).
/// With lessCareful_=true they start one: 39 resent at 0.5573 s (summary 120 20 0 1 100).
#[test]
fn newreno_careful_check_waits_for_an_ack_past_recover_as_ns2() {
    let mut drops: Vec<u64> = (21..=39).collect();
    drops.push(59);
    let resent_39 = |tcp: &str| {
        let run = Run::new(&ns2_line("newreno", 100, &drops, &[20], tcp));
        let t = run.retransmissions().iter().find(|r| r.1 == 39).map(|r| r.0);
        (t.unwrap(), run.u("packets_sent"), run.u("fast_retransmits"), run.delivered_packets())
    };
    let (t, sent, fr, delivered) = resent_39(r#"ecn = "request""#);
    assert!((t - 1.154_086).abs() < 0.001, "{t}");
    assert_eq!((sent, fr, delivered), (120, 0, 100));
    let (t, sent, fr, _) = resent_39(r#"ecn = "request", newreno_careful = "less_careful""#);
    assert!((t - 0.557_286).abs() < 0.001, "{t}");
    assert_eq!((sent, fr), (120, 1));
}

// ---------------------------------------------------------------------------
// ECN (items 1 and 4)
// ---------------------------------------------------------------------------

/// `ns dialogue.tcl Reno 60000 24 20 ecn_=1`: the mark halves (ssthresh 20 -> 10); the loss of
/// 23 in the same window is retransmitted (with CWR) without a second reduction. ns-2: summary
/// 61 1 0 1 60, ssthresh trace 20, 10 only.
#[test]
fn ce_mark_then_loss_in_one_window_reduce_once_as_ns2() {
    let run = Run::new(&ns2_line("reno", 60, &[24], &[20], r#"ecn = "request""#));
    assert_eq!(run.retransmitted_numbers(), vec![23]);
    assert_eq!((run.u("packets_sent"), run.u("rto_count"), run.u("ecn_reductions")), (61, 0, 1));
    // The retransmission carries the CWR (ns-2: "send 0.133043 23 cwr").
    let rtx = run.sent().into_iter().find(|&(t, k, _)| k == 23 && t > 0.13).unwrap();
    assert!(rtx.2, "{rtx:?}");
    assert!((rtx.0 - 0.133).abs() < 0.002, "{rtx:?}");
}

/// A timeout after an ECN reduction, for data sent after the reduced window (issue 13, the
/// hetero N = 120 ECN timeouts). `ns dialogue.tcl VARIANT 100000 61,...,71 20 ecn_=1` for
/// Reno, Tahoe, Newreno and Sack1: packet 20's mark halves the window at 0.127 s (ssthresh 20
/// -> 10, recover_ 39); packets 60..70, all sent after 39 was acknowledged, are lost, and
/// the timer fires at 0.510 s. ns-2's timeout() sets recover_ = maxseq_ before testing
/// `highest_ack_ < recover_ && last_cwnd_action_ == CWND_ACTION_ECN`, so it keeps ssthresh 10
/// and does not count the timeout in nrexmit_ (summary 111 11 0 1 100 for all four), and
/// slow start resends 60 and sends 61..74 by 0.5869 s. RFC 3168 §6.1.2's round-trip rule
/// (`timeout_after_ecn = "same_window"`) counts it as a new congestion event: ssthresh 5.
#[test]
fn timeout_after_an_ecn_reduction_keeps_ssthresh_as_ns2() {
    let drops: Vec<u64> = (61..=71).collect();
    for cc in ["reno", "tahoe", "newreno", "sack"] {
        let run = Run::new(&ns2_line(cc, 100, &drops, &[20], r#"ecn = "request""#));
        assert_eq!(run.retransmitted_numbers(), (60..=70).collect::<Vec<_>>(), "{cc}");
        let counts = ["packets_sent", "packets_retransmitted", "rto_count", "rto_after_ecn", "ecn_reductions"];
        assert_eq!(counts.map(|c| run.u(c)), [111, 11, 1, 1, 1], "{cc}");
        assert_eq!(run.delivered_packets(), 100, "{cc}");
        let sent = run.sent();
        let at = |k: u64| sent.iter().rev().find(|s| s.1 == k).unwrap().0;
        for (k, ns2) in [(60, 0.509_989), (62, 0.534_838), (66, 0.560_486), (70, 0.585_335), (74, 0.586_935)] {
            assert!((at(k) - ns2).abs() < 0.001, "{cc}: packet {k} sent at {} s, ns-2 {ns2} s", at(k));
        }
    }
    // The RFC 3168 reading halves ssthresh at the timeout: congestion avoidance from 5 packets,
    // so by 0.59 s the flow has sent up to 71 where ns-2 reached 74.
    let rfc = Run::new(&ns2_line("reno", 100, &drops, &[20], r#"ecn = "request", timeout_after_ecn = "same_window""#));
    assert_eq!((rfc.u("rto_count"), rfc.u("rto_after_ecn")), (1, 0));
    let highest = rfc.sent().iter().filter(|s| s.0 < 0.59).map(|s| s.1).max().unwrap();
    assert_eq!(highest, 71);
}

/// A loss in the window a CE mark already reduced, then a loss in the next window (the
/// `red-markp-tcp` difference: gentle RED with `use_mark_p_` drops and marks in the same
/// windows). `ns dialogue.tcl VARIANT 100000 36,43 20 ecn_=1`: packet 19's mark halves the
/// window at 0.127 s (ssthresh 20 -> 10, recover_ 38); packet 35 is lost and fast-retransmitted
/// at 0.1547 s without a reduction (dupack_action()'s CWND_ACTION_ECN branch), which leaves
/// recover_ at 38 although 39..44 have been sent; packet 42, sent after the reduction, is
/// lost too, and its duplicate ACKs find highest_ack_ 41 > recover_ 38: a second fast
/// retransmit, 42 at 0.18194 s (Reno) / 0.18514 s (Newreno), ssthresh 10 -> 5. ns-2: summary
/// 102 2 0 1 100 for both, no timeout. Moving recover to the highest sequence sent (RFC 6582
/// §3.2 step 2, `ecn_keeps_recover = false`) makes 42's loss one of the same recovery: Reno
/// waits for a timeout, NewReno resends 42 on a partial ACK without a second reduction.
/// (ecnsim's NewReno resends 42 at Reno's 0.18194 s: ns-2's Newreno recv() sends at most two
/// packets per duplicate ACK in recovery, `send_much(0, 0, 2)`, which ecnsim does not model.)
#[test]
fn loss_after_an_ecn_window_retransmit_is_a_fast_retransmit_as_ns2() {
    for (cc, ns2_at, rfc_rto) in [("reno", 0.181_94, 1), ("newreno", 0.181_94, 0)] {
        let run = Run::new(&ns2_line(cc, 100, &[36, 43], &[20], r#"ecn = "request""#));
        assert_eq!(run.retransmitted_numbers(), vec![35, 42], "{cc}");
        let counts = ["packets_sent", "fast_retransmits", "rto_count", "ecn_reductions"];
        assert_eq!(counts.map(|c| run.u(c)), [102, 2, 0, 1], "{cc}");
        assert_eq!(run.delivered_packets(), 100, "{cc}");
        let rtx = run.retransmissions();
        for ((t, _), ns2) in rtx.iter().zip([0.154_692, ns2_at]) {
            assert!((t - ns2).abs() < 0.001, "{cc}: {rtx:?}");
        }
        let rfc = Run::new(&ns2_line(cc, 100, &[36, 43], &[20], r#"ecn = "request", ecn_keeps_recover = false"#));
        assert_eq!((rfc.u("fast_retransmits"), rfc.u("rto_count")), (1, rfc_rto), "{cc}");
    }
}

/// The first ECN-Echo on the third duplicate ACK. `ns dialogue.tcl VARIANT 60000 24 27 ecn_=1`:
/// packet 23 is lost and 26 marked, so the duplicate ACKs of 24 and 25 carry no echo and that
/// of 26 does. ns-2's recv() calls ecn() before counting the duplicate: the echo halves the
/// window (ssthresh 20 -> 10 at 0.13304 s, an ECN response), and dupack_action() then takes
/// its CWND_ACTION_ECN branch, resending 23 at 0.133043 s (with CWR) without a second
/// reduction. ns-2: summary 61 1 0 1 60 for Reno, Newreno and Tahoe. Counting the duplicate
/// first (`ecn_echo_before_dupack = false`) makes it a plain fast retransmit and the echo one
/// the retransmission already answered: the same window, but no ECN response.
#[test]
fn ecn_echo_on_the_third_duplicate_ack_is_answered_first_as_ns2() {
    for cc in ["reno", "newreno", "tahoe"] {
        let run = Run::new(&ns2_line(cc, 60, &[24], &[27], r#"ecn = "request""#));
        assert_eq!(run.retransmitted_numbers(), vec![23], "{cc}");
        let counts = ["packets_sent", "fast_retransmits", "rto_count", "ecn_reductions"];
        assert_eq!(counts.map(|c| run.u(c)), [61, 1, 0, 1], "{cc}");
        let rtx = run.sent().into_iter().find(|&(t, k, _)| k == 23 && t > 0.13).unwrap();
        assert!(rtx.2 && (rtx.0 - 0.133_043).abs() < 0.001, "{cc}: {rtx:?}");
        let after = Run::new(&ns2_line(cc, 60, &[24], &[27], r#"ecn = "request", ecn_echo_before_dupack = false"#));
        assert_eq!((after.u("fast_retransmits"), after.u("ecn_reductions")), (1, 0), "{cc}");
    }
}

/// The ECN-after-timeout stall (item 1). `ns dialogue.tcl Reno 100000 21,...,39 20 ecn_=1`:
/// packet 20's mark halves the window, every packet after it (the CWR one included) is lost,
/// and the timer fires with the receiver still echoing ECE. ns-2 of 2001 puts CWR on the
/// timeout's retransmission, the echo stops, slow start resends 20..38: summary 119 19 0 1 100,
/// all delivered by 0.53 s. ns-2 with SetCWRonRetransmit_=false (its default 2005-2008) stalls:
/// summary 43 4 0 5 24, cwnd 1 -> 0 on each ECE and the timer backed off, 24 packets in 30 s.
#[test]
fn ecn_after_a_timeout_does_not_stall_where_ns2_did_not() {
    let drops: Vec<u64> = (21..=39).collect();
    let run = Run::new(&ns2_line("reno", 100, &drops, &[20], r#"ecn = "request""#));
    let mut expect: Vec<u64> = (20..=38).collect();
    expect.dedup();
    assert_eq!(run.retransmitted_numbers(), expect);
    assert_eq!((run.u("packets_sent"), run.u("ecn_reductions")), (119, 1));
    assert_eq!(run.delivered_packets(), 100);
    // ns-2's sends after the timeout: 20 (CWR) at 0.4274, 21 and 22 at 0.4523, 23..26 by 0.4779,
    // ..., the last packet, 99, at 0.6543.
    let sent = run.sent();
    let at = |k: u64| sent.iter().rev().find(|s| s.1 == k).unwrap().0;
    for (k, ns2) in [(20, 0.427_443), (22, 0.452_292), (26, 0.477_94), (38, 0.527_638), (99, 0.654_281)] {
        assert!((at(k) - ns2).abs() < 0.001, "packet {k} sent at {} s, ns-2 {ns2} s", at(k));
    }
    // The timeout's retransmission carries CWR.
    let first_rtx = run.sent().into_iter().find(|&(t, k, _)| k == 20 && t > 0.2).unwrap();
    assert!(first_rtx.2);
}

/// The same run under each profile, with its own ECN rules and with RFC 3168 read literally
/// (no CWR on a retransmission, no growth on any ACK carrying ECE): only the literal rules
/// stall, at one segment per round trip for the rest of the window the timeout resends.
#[test]
fn ecn_after_a_timeout_stalls_only_with_the_literal_rfc3168_rules() {
    let drops: Vec<u64> = (21..=39).collect();
    let literal = r#", ecn_cwr_on_retransmit = false, ecn_ect_on_retransmit = false, ecn_ece_growth = "never""#;
    for profile in ["ns2-2001", "rfc", "linux"] {
        let text = |extra: &str| {
            ns2_line("reno", 100, &drops, &[20], &format!(r#"ecn = "request", handshake = true{extra}"#))
                .replace(r#"profile = "ns2-2001""#, &format!(r#"profile = "{profile}""#))
        };
        let own = Run::new(&text(""));
        let stalled = Run::new(&text(literal));
        let done = |r: &Run| f64s(&r.r, "flows", "completion_time_s")[0];
        // NaN: not done in 30 s (ns2-2001 backs the timer off at one segment, as ns-2 did).
        let (own_s, stalled_s) = (done(&own), done(&stalled));
        assert!(stalled_s.is_nan() || stalled_s > own_s + 0.3, "{profile}: {own_s} s vs {stalled_s} s");
    }
}

/// ECN at a one-segment window (issue 13 follow-up, item 2), the stalled run above with
/// `SetCWRonRetransmit_=false`: `ns dialogue.tcl Reno 100000 21,...,39 20 ecn_=1
/// SetCWRonRetransmit_=false`. Every ACK after the timeout carries ECE; each finds cwnd_ = 1,
/// which ns-2 of 2001 halves to int(0.5) = 0 (ssthresh_ 2), and from the second one on it
/// also doubles the timer's backoff (ecn_backoff_). Each timeout (in recovery from the ECN,
/// so no ssthresh cut and not counted in nrexmit_) resends one packet with cwnd_ = 1 and
/// backs off again. ns-2 sends 20@0.4274, 21@1.0523, 22@3.4771, 23@13.1020: summary 43 4 0 5 24.
#[test]
fn ecn_echo_at_one_segment_zeroes_the_window_and_backs_off_as_ns2() {
    let drops: Vec<u64> = (21..=39).collect();
    let run = Run::new(&ns2_line("reno", 100, &drops, &[20], r#"ecn = "request", ecn_cwr_on_retransmit = false"#));
    let rtx = run.retransmissions();
    assert_eq!(rtx.iter().map(|r| r.1).collect::<Vec<_>>(), vec![20, 21, 22, 23], "{rtx:?}");
    for ((t, _), ns2) in rtx.iter().zip([0.427_443, 1.052_292, 3.477_14, 13.101_989]) {
        assert!((t - ns2).abs() < 0.001, "{rtx:?}");
    }
    assert_eq!((run.u("packets_sent"), run.u("ecn_reductions")), (43, 5));
    // ns-2's nrexmit_ (0) counts only timeouts that cut ssthresh; ecnsim counts every expiry
    // with data outstanding, and those in a window already reduced for ECN apart.
    assert_eq!((run.u("rto_count"), run.u("rto_after_ecn")), (4, 4));
    assert_eq!(run.delivered_packets(), 24);
}

/// The same run under the RFC and Linux rules for a one-segment window. RFC 3168 §6.1.2
/// resets the timer and sends the next packet when it expires; each expiry is a timeout of
/// the go-back-N data (RFC 6298 §5.5 doubles the RTO once per packet, where ns-2 doubles it
/// twice: 0.6, 1.2, 2.4, 4.8 s against ns-2's 0.6, 2.4, 9.6 s). Linux keeps one segment in
/// flight: one packet per round trip (25 ms), everything delivered.
#[test]
fn ecn_echo_at_one_segment_follows_each_profile_rule() {
    let drops: Vec<u64> = (21..=39).collect();
    let tcp = |rule: &str| format!(r#"ecn = "request", ecn_cwr_on_retransmit = false, ecn_one_segment = "{rule}""#);
    let rfc = Run::new(&ns2_line("reno", 100, &drops, &[20], &tcp("rfc3168")));
    let linux = Run::new(&ns2_line("reno", 100, &drops, &[20], &tcp("linux")));
    let gaps = |r: &Run| {
        let t: Vec<f64> = r.sent().iter().filter(|s| s.0 > 0.4).map(|s| s.0).take(6).collect();
        t.windows(2).map(|w| w[1] - w[0]).collect::<Vec<_>>()
    };
    let g = gaps(&rfc);
    assert!((g[0] - 0.625).abs() < 0.001, "{g:?}");
    assert!(g.windows(2).all(|w| (w[1] / w[0] - 2.0).abs() < 0.1), "{g:?}");
    let g = gaps(&linux);
    assert!(g.iter().all(|&d| d < 0.03), "{g:?}");
    assert_eq!(linux.delivered_packets(), 100);
    assert_eq!(linux.u("rto_count"), 1);
}

// ---------------------------------------------------------------------------
// Limited Transmit (item 6) and the RTO (item 2)
// ---------------------------------------------------------------------------

/// `ns dialogue.tcl Reno 20000 2 - singledup_=0`: packet 1 lost with cwnd 2: one duplicate ACK
/// only, the timer fires at 0.325 s (RTO 0.3 s: a 25 ms sample is one tick, rtxcur = 3 ticks);
/// ns-2: summary 21 1 1 0 20, retransmission 1@0.325.
/// `... singledup_=1`: Limited Transmit sends 3 and 4, their duplicate ACKs make three, fast
/// retransmit at 0.100 s; ns-2: summary 21 1 0 0 20, retransmission 1@0.100.
#[test]
fn limited_transmit_turns_a_timeout_into_a_fast_retransmit_as_ns2() {
    let off = Run::new(&ns2_line("reno", 20, &[2], &[], ""));
    assert_eq!((off.u("packets_sent"), off.u("rto_count")), (21, 1));
    let rtx = off.retransmissions();
    assert_eq!(rtx.len(), 1);
    assert!((rtx[0].0 - 0.325).abs() < 0.002, "{rtx:?}");
    let on = Run::new(&ns2_line("reno", 20, &[2], &[], "limited_transmit = true"));
    assert_eq!((on.u("packets_sent"), on.u("rto_count"), on.u("fast_retransmits")), (21, 0, 1));
    let rtx = on.retransmissions();
    assert!((rtx[0].0 - 0.100).abs() < 0.002, "{rtx:?}");
    let sent: Vec<u64> = on.sent().iter().filter(|s| s.0 < 0.09).map(|s| s.1).collect();
    assert_eq!(sent, vec![0, 1, 2, 3, 4]);
}
