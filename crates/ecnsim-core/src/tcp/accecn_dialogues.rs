//! Packet dialogues of Accurate ECN (RFC 9768) between two sockets, each pinned to the section
//! (or table, or worked example) of RFC 9768 it checks. The harness is `dialogues.rs`'s.

use super::accecn::{ace_of, handshake_ace, set_ace};
use super::dialogues::{cfg, dctcp, has, t, Dialogue, MSS};
use crate::packet::{Ecn, TcpFlags};
use crate::spec::{EcnFeedback, EcnPolicy, EcnSynAck};
use crate::tcp::{InitialWindow, Segment, TcpConfig, TcpState};

fn accecn(c: TcpConfig) -> TcpConfig {
    TcpConfig { ecn_feedback: EcnFeedback::Accecn, ..c }
}

/// A bulk sender's configuration: an initial window of `iw` segments, an ACK per segment.
fn bulk(iw: u32) -> TcpConfig {
    accecn(TcpConfig { initial_window: InitialWindow::Segments(iw), delayed_ack: false, ..cfg() })
}

fn aces(segs: &[Segment]) -> Vec<u8> {
    segs.iter().map(|s| ace_of(&s.header)).collect()
}

/// Run the handshake, letting `tamper` change the SYN-ACK; returns (SYN, SYN-ACK, the client's reply).
fn handshake(d: &mut Dialogue, tamper: impl Fn(&mut Segment), synack_ce: bool) -> (Segment, Segment, Vec<Segment>) {
    d.a.connect(t(0));
    let syn = d.out_a();
    let mut synack = d.deliver_to_b(&syn, &[]);
    tamper(&mut synack[0]);
    let reply = d.deliver_to_a(&synack, if synack_ce { &[0] } else { &[] });
    (syn[0], synack[0], reply)
}

/// RFC 9768 §3.1.2 Table 2: every row whose SYN-ACK an ecnsim responder can send, end to end.
#[test]
fn accecn_rfc9768_3_1_2_table_2_negotiation() {
    let off = TcpConfig { ecn: EcnPolicy::Off, ..cfg() };
    // (client, server, SYN's (AE,CWR,ECE), SYN-ACK's, AccECN, ECN at all)
    let rows = [
        (accecn(cfg()), accecn(cfg()), 0b111, 0b010, true, true),
        (accecn(cfg()), cfg(), 0b111, 0b001, false, true),
        (accecn(cfg()), off, 0b111, 0b000, false, false),
        (cfg(), accecn(cfg()), 0b011, 0b001, false, true),
        (off, accecn(cfg()), 0b000, 0b000, false, false),
    ];
    for (i, (ca, cb, syn_ace, synack_ace, acc, ecn)) in rows.into_iter().enumerate() {
        let mut d = Dialogue::new(ca, cb);
        let (syn, synack, reply) = handshake(&mut d, |_| {}, false);
        assert_eq!((ace_of(&syn.header), ace_of(&synack.header)), (syn_ace, synack_ace), "row {i}");
        d.deliver_to_b(&reply, &[]);
        assert_eq!((d.a.state(), d.b.state()), (TcpState::Established, TcpState::Established), "row {i}");
        assert_eq!((d.a.accecn_negotiated(), d.b.accecn_negotiated()), (acc, acc), "row {i}");
        assert_eq!((d.a.ecn_negotiated(), d.b.ecn_negotiated()), (ecn, ecn), "row {i}");
        // RFC 9768 §3.2.3.2.1: no option on the SYN; the confirming SYN-ACK carries one.
        assert!(!syn.header.accecn.is_present(), "row {i}");
        assert_eq!(synack.header.accecn.is_present(), acc, "row {i}");
    }
}

/// RFC 9768 Table 2's "(Reserved)" row (§3.1.3: AccECN, as if the SYN's field arrived
/// unchanged) and its "Broken" row (a server reflecting the SYN's flags: no ECN).
#[test]
fn accecn_rfc9768_3_1_3_reserved_and_broken_syn_acks() {
    for (ace, acc, ecn) in [(0b101, true, true), (0b111, false, false)] {
        let mut d = Dialogue::new(accecn(cfg()), accecn(cfg()));
        handshake(&mut d, |s| set_ace(&mut s.header, ace), false);
        assert_eq!((d.a.accecn_negotiated(), d.a.ecn_negotiated()), (acc, ecn), "SYN-ACK {ace:03b}");
        assert_eq!(d.a.state(), TcpState::Established);
    }
}

/// RFC 9768 Table 2's top block: the SYN-ACK feeds back the SYN's IP-ECN field; §3.2.2.2: a
/// client told its SYN was CE-marked responds (here: an initial window of one segment).
#[test]
fn accecn_rfc9768_3_1_1_synack_feeds_back_the_syns_ecn_field() {
    // RFC 8257 §3.5: a DCTCP SYN is ECT(0).
    let c = accecn(TcpConfig { initial_window: InitialWindow::Segments(10), ..dctcp(false) });
    for (ce, ace) in [(false, 0b100), (true, 0b110)] {
        let mut d = Dialogue::new(c, c);
        d.a.connect(t(0));
        let syn = d.out_a();
        assert_eq!(syn[0].ecn, Ecn::Ect0);
        let synack = d.deliver_to_b(&syn, if ce { &[0] } else { &[] });
        assert_eq!(ace_of(&synack[0].header), ace, "CE on the SYN: {ce}");
        d.deliver_to_a(&synack, &[]);
        assert!(d.a.accecn_negotiated());
        assert_eq!(d.a.cwnd(), if ce { MSS } else { 10 * MSS });
        // §3.2.2.2: CE feedback on the SYN-ACK does not move s.cep.
        assert_eq!(d.a.accecn_counts().unwrap().ce_packets, 0);
    }
}

/// RFC 9768 §3.2.2.1, Tables 3 and 4: the client's pure ACK of the SYN-ACK encodes the SYN-ACK's
/// IP-ECN field; a server told of a CE-marked SYN-ACK sets s.cep = 6 and responds, without
/// RFC 5562's resent SYN-ACK.
#[test]
fn accecn_rfc9768_3_2_2_1_handshake_encoding_of_the_ack_of_the_syn_ack() {
    let server =
        accecn(TcpConfig { ecn_synack: EcnSynAck::Ecnplus, initial_window: InitialWindow::Segments(4), ..cfg() });
    for (ce, ace) in [(false, 0b100), (true, 0b110)] {
        let client = accecn(TcpConfig { delayed_ack: false, ..cfg() });
        let mut d = Dialogue::new(client, server);
        let (_, synack, reply) = handshake(&mut d, |_| {}, ce);
        assert_eq!(synack.ecn, Ecn::Ect0);
        assert_eq!(reply.len(), 1, "a pure ACK");
        assert_eq!((reply[0].header.payload, ace_of(&reply[0].header)), (0, ace), "CE on the SYN-ACK: {ce}");
        // §3.2.3.2.1: the option on the first ACK, all three fields.
        assert_eq!(reply[0].header.accecn.len, 11);
        assert!(d.deliver_to_b(&reply, &[]).is_empty(), "no SYN-ACK is resent");
        assert_eq!(d.b.state(), TcpState::Established);
        assert_eq!(d.b.accecn_counts().unwrap().ce_packets, u64::from(ce), "Table 4: s.cep = {}", 5 + u64::from(ce));
        assert_eq!(d.b.cwnd(), if ce { MSS } else { 4 * MSS });
        // Table 3: the client's r.cep is 6 after a CE-marked SYN-ACK: its later ACKs carry ACE = 6.
        d.b.send(MSS);
        let data = d.out_b();
        let acks = d.deliver_to_a(&data, &[]);
        assert_eq!(aces(&acks), vec![if ce { 6 } else { 5 }]);
    }
}

/// RFC 9768 Table 4 Note 1: an ACE of 0 on the ACK of the SYN-ACK: the server sends no ECT
/// and does not respond to feedback for the rest of the connection.
#[test]
fn accecn_rfc9768_table_4_note_1_zero_ace_disables_the_servers_ect() {
    let mut d = Dialogue::new(accecn(cfg()), bulk(4));
    let (_, _, mut reply) = handshake(&mut d, |_| {}, false);
    set_ace(&mut reply[0].header, 0);
    d.deliver_to_b(&reply, &[]);
    assert!(d.b.accecn_negotiated(), "still AccECN feedback");
    d.b.send(100 * MSS);
    let data = d.out_b();
    assert!(data.iter().all(|s| s.ecn == Ecn::NotEct));
}

/// RFC 9768 §3.2.2.2: ACE = r.cep mod 8 on every ACK, r.cep starting at 5 (§3.2.1); the sender
/// recovers each mark; §3.1.5: no CWR is ever sent; §3.2.3.3: the option carries the counters
/// that have changed.
#[test]
fn accecn_rfc9768_3_2_2_2_ace_counts_every_ce_mark() {
    let mut d = Dialogue::established(bulk(10), bulk(10));
    d.a.send(1000 * MSS);
    let w = d.out_a();
    assert_eq!(w.len(), 10);
    assert!(w.iter().all(|s| s.ecn == Ecn::Ect0));
    let acks = d.deliver_to_b(&w, &[1, 2, 3, 7]);
    assert_eq!(aces(&acks), vec![5, 6, 7, 0, 0, 0, 0, 1, 1, 1]);
    assert_eq!((acks[0].header.accecn.len, acks[1].header.accecn.len), (5, 8), "EE0B, then EE0B and ECEB");
    let more = d.deliver_to_a(&acks, &[]);
    let counts = d.a.accecn_counts().unwrap();
    assert_eq!((counts.ce_packets, counts.ce_bytes, counts.ect0_bytes), (4, 4000, 6000));
    // RFC 3168 §6.1.2's once-per-window response (Reno here), and no CWR (§3.1.5).
    assert_eq!(d.a.counters.ecn_reductions, 1);
    assert_eq!(d.a.counters.cwr_sent, 0);
    assert!(more.iter().all(|s| s.header.payload > 0));
}

/// RFC 9768 §3.2.2.5.1: change-triggered ACKs: with delayed ACKs, a CE-marked data segment after
/// one that was not CE is ACKed at once (DCTCP's own RFC 8257 §3.2 rule is replaced).
#[test]
fn accecn_rfc9768_3_2_2_5_1_change_triggered_acks() {
    let c = accecn(dctcp(true));
    let mut d = Dialogue::established(c, c);
    d.a.send(1000 * MSS);
    let w = d.out_a();
    let acks = d.deliver_to_b(&w[..7], &[3]);
    // 0-1: every second segment; 2 held; 3 is CE after not-CE: ACK now (covering 2 and 3); 4-5:
    // every second segment; 6 held.
    let acked: Vec<u64> = acks.iter().map(|s| s.header.ack).collect();
    assert_eq!(acked, vec![2001, 4001, 6001]);
    assert_eq!(aces(&acks), vec![5, 6, 6]);
    assert!(acks.iter().all(|s| !has(s, TcpFlags::SYN)));
}

/// RFC 9768 §3.2.2.5.2 with Appendix A.2: the ACE field wraps when ACKs are lost; the sender's
/// safety rules recover the count (A.2.2 with the option; A.2.1's conservative reading without).
#[test]
fn accecn_rfc9768_a_2_ace_wrap_after_lost_acks() {
    // (marked segments of 16, the receiver sends the option, marks the sender counts)
    for (marked, option, want) in [
        // 9 marks: ACE moved by 1 (mod 8); 16 segments acknowledged could hold one more cycle, and the
        // option's 9000 CE bytes cannot fit in 1 segment: 9 (A.2.2).
        (9, true, 9),
        // Without the option the same 9 (A.2.1: 16 - (16 - 1) % 8).
        (9, false, 9),
        // 1 mark: with the option, 1000 CE bytes over 9 segments would be far below MSS / 2: 1 (A.2.2).
        (1, true, 1),
        // Without the option, A.2.1 must assume the field may have cycled: 9.
        (1, false, 9),
    ] {
        let rx = TcpConfig { accecn_option: option, ..bulk(16) };
        let mut d = Dialogue::established(bulk(16), rx);
        d.a.send(1000 * MSS);
        let w = d.out_a();
        assert_eq!(w.len(), 16);
        let ce: Vec<usize> = (0..marked).collect();
        let acks = d.deliver_to_b(&w, &ce);
        // Every ACK but the last is lost.
        d.deliver_to_a(&acks[15..], &[]);
        assert_eq!(d.a.accecn_counts().unwrap().ce_packets, want, "{marked} marks, option {option}");
    }
}

/// DCTCP over AccECN: alpha follows the exact count of marks. With an ACK per segment it equals
/// DCTCP's classic result (`dialogues.rs`, RFC 8257 §3.3: 935); with delayed ACKs AccECN still
/// counts each of the five marks, which classic ECE cannot tell apart from ten.
#[test]
fn accecn_dctcp_alpha_from_exact_marks() {
    let c = accecn(dctcp(false));
    let mut d = Dialogue::established(c, c);
    d.a.send(1000 * MSS);
    let w = d.out_a();
    let acks = d.deliver_to_b(&w, &[1, 3, 5, 7, 9]);
    d.deliver_to_a(&acks, &[]);
    assert_eq!(d.a.dctcp_alpha(), Some(935));
    assert_eq!(d.a.counters.ecn_reductions, 1);
    let c = accecn(dctcp(true));
    let mut d = Dialogue::established(c, c);
    d.a.send(1000 * MSS);
    let w = d.out_a();
    let acks = d.deliver_to_b(&w, &[1, 3, 5, 7, 9]);
    assert!(acks.len() < 10, "delayed ACKs");
    d.deliver_to_a(&acks, &[]);
    assert_eq!(d.a.accecn_counts().unwrap().ce_packets, 5);
}

/// The handshake encoding is used again for the ACK of a retransmitted SYN-ACK (§3.2.2.1); the
/// server completes its handshake on it.
#[test]
fn accecn_rfc9768_3_2_2_1_ack_of_a_retransmitted_syn_ack() {
    let mut d = Dialogue::new(accecn(cfg()), accecn(cfg()));
    let (_, synack, reply) = handshake(&mut d, |_| {}, false);
    assert_eq!(aces(&reply), vec![handshake_ace(synack.ecn)]);
    // The ACK is lost; the SYN-ACK arrives again.
    let again = d.deliver_to_a(&[synack], &[]);
    assert_eq!(aces(&again), vec![handshake_ace(synack.ecn)]);
    assert!(d.deliver_to_b(&again, &[]).is_empty());
    assert_eq!(d.b.accecn_counts().unwrap().ce_packets, 0);
}

/// RFC 9768 §3.2.2.5.2 ("taking the safest likely case"): over a path that marks 10 % of the
/// data and loses ACKs at random (the last ACK of each flight always arrives), a DCTCP sender
/// never counts fewer CE packets than the receiver got, and its CE bytes are exact (the option
/// is cumulative). With the option and flights below 16 segments (`max_cwnd`), Appendix A.2.2
/// makes the packet count exact too; without it, A.2.1 may count a full extra cycle of 8 once
/// an ACK covers 8 segments or more, and is exact only when no ACK is lost.
#[test]
fn accecn_rfc9768_3_2_2_5_2_random_marks_and_ack_loss_never_undercount() {
    let mut overcounts = 0;
    for option in [true, false] {
        for (seed, ack_loss) in [(1u64, 0u64), (2, 30), (3, 60), (4, 90)] {
            let mut rng = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let mut draw = |percent: u64| {
                rng = rng.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                (rng >> 33) % 100 < percent
            };
            // DCTCP: its window never falls below two segments, so the flights go on.
            let c = accecn(TcpConfig {
                initial_window: InitialWindow::Segments(10),
                max_cwnd: 15,
                accecn_option: option,
                ..dctcp(false)
            });
            let mut d = Dialogue::established(c, c);
            d.a.send(100_000 * MSS);
            let mut marked = 0u64;
            let mut w = d.out_a();
            for _ in 0..100 {
                let ce: Vec<usize> = (0..w.len()).filter(|_| draw(10)).collect();
                marked += ce.len() as u64;
                let acks = d.deliver_to_b(&w, &ce);
                let last = acks.len() - 1;
                let kept: Vec<Segment> = acks
                    .into_iter()
                    .enumerate()
                    .filter(|&(i, _)| i == last || !draw(ack_loss))
                    .map(|(_, s)| s)
                    .collect();
                // What the ACKs release is the next flight.
                w = d.deliver_to_a(&kept, &[]);
                assert!(!w.is_empty());
            }
            let c = d.a.accecn_counts().unwrap();
            let case = format!("option {option}, seed {seed}, ACK loss {ack_loss} %");
            assert_eq!(d.b.counters.ce_received, marked, "{case}");
            assert!(marked > 40, "{case}: {marked} marks");
            assert!(c.ce_packets >= marked, "{case}: {} < {marked}", c.ce_packets);
            assert_eq!((c.ce_packets - marked) % 8, 0, "{case}: whole cycles only");
            if option {
                assert_eq!(c.ce_bytes, marked * MSS, "{case}");
            }
            if option || ack_loss == 0 {
                assert_eq!(c.ce_packets, marked, "{case}");
            }
            overcounts += u32::from(c.ce_packets > marked);
        }
    }
    assert!(overcounts > 0, "without the option, lost ACKs make A.2.1 assume a cycle");
}
