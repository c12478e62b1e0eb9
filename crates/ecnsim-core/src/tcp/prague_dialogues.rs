//! Packet dialogues of TCP Prague between two sockets, each pinned to the requirement of
//! RFC 9331 §4 (or the rule of the L4STeam `tcp_prague.c`) it checks. The harness is
//! `dialogues.rs`'s; the algorithm's own rules are tested in `cc/prague.rs`.

use super::dialogues::{cfg, Dialogue, MSS};
use crate::packet::Ecn;
use crate::spec::{CcKind, EcnFeedback, EcnPolicy, EctCodepoint};
use crate::tcp::{InitialWindow, TcpConfig};

/// A Prague bulk sender's configuration (RFC 9331 §4.1-4.2: ECT(1), AccECN), an initial window
/// of 10 segments and an ACK per segment.
fn prague() -> TcpConfig {
    TcpConfig {
        cc: CcKind::Prague,
        ecn: EcnPolicy::Request,
        ecn_feedback: EcnFeedback::Accecn,
        ect_codepoint: EctCodepoint::Ect1,
        initial_window: InitialWindow::Segments(10),
        delayed_ack: false,
        ..cfg()
    }
}

/// RFC 9331 §4.1 (an L4S sender sets ECT(1)) and §4.2 (feedback of the extent of CE marking:
/// AccECN, RFC 9768): Prague negotiates AccECN and sends its data ECT(1).
#[test]
fn prague_rfc9331_4_1_and_4_2_accecn_and_ect1() {
    let mut d = Dialogue::established(prague(), prague());
    assert!(d.a.accecn_negotiated() && d.a.prague().is_some());
    d.a.send(3 * MSS);
    let data = d.out_a();
    assert_eq!(data.len(), 3);
    assert!(data.iter().all(|s| s.ecn == Ecn::Ect1), "{:?}", data.iter().map(|s| s.ecn).collect::<Vec<_>>());
}

/// RFC 9331 §4.2 and Linux tcp_prague.c (`prague_reno` with TCP_CONG_NO_FALLBACK_RFC3168):
/// without AccECN, against a peer offering RFC 3168 ECN or none, the connection runs as Reno
/// without ECN: Not-ECT data, no Prague state, a halving on loss.
#[test]
fn prague_rfc9331_4_2_without_accecn_runs_as_reno_without_ecn() {
    let classic = TcpConfig { ecn_feedback: EcnFeedback::Classic, cc: CcKind::Newreno, ..cfg() };
    let off = TcpConfig { ecn: EcnPolicy::Off, cc: CcKind::Newreno, ..cfg() };
    for peer in [classic, off] {
        let mut d = Dialogue::established(prague(), peer);
        assert!(!d.a.accecn_negotiated(), "{peer:?}");
        assert!(!d.a.ecn_negotiated(), "RFC 3168 ECN is not used either");
        assert!(d.a.prague().is_none());
        d.a.send(2 * MSS);
        assert!(d.out_a().iter().all(|s| s.ecn == Ecn::NotEct));
    }
}

/// RFC 9331 §4.3 (a scalable response: the reduction in proportion to the marked fraction) with
/// tcp_prague.c's once-per-round-trip CWR, the step of one segment per ACK, and alpha updated once
/// per round after the first mark: two marks in a window of ten give one reduction (alpha's
/// initial 1: half the fractional window), then the window steps down ACK by ACK while the
/// unmarked ACKs add 1/cwnd each; the round's end updates alpha with F = 1/9.
#[test]
fn prague_rfc9331_4_3_marks_reduce_once_per_round_and_cwnd_steps_per_ack() {
    let mut d = Dialogue::established(prague(), prague());
    d.a.send_unlimited();
    let data = d.out_a();
    assert_eq!(data.len(), 10);
    let acks = d.deliver_to_b(&data, &[0, 1]);
    assert_eq!(acks.len(), 10);
    let frac = |d: &Dialogue| d.a.prague().unwrap().frac_cwnd();
    // ACK 1 reports the first mark: the reduction halves the fractional window (alpha = 1), the
    // window takes one step.
    d.deliver_to_a(&acks[..1], &[]);
    assert_eq!((d.a.counters.ecn_reductions, frac(&d)), (1, 5 << 20));
    assert_eq!((d.a.cwnd(), d.a.ssthresh()), (9 * MSS, 9 * MSS));
    // ACK 2 reports the second mark, in the same round trip: no second reduction, another step.
    d.deliver_to_a(&acks[1..2], &[]);
    assert_eq!((d.a.counters.ecn_reductions, frac(&d)), (1, 5 << 20));
    assert_eq!(d.a.cwnd(), 8 * MSS);
    // ACKs 3-4: unmarked, each adds 1/ceil(frac_cwnd) of a segment; the window steps down to
    // ceil(frac_cwnd) = 6.
    d.deliver_to_a(&acks[2..4], &[]);
    assert_eq!(d.a.cwnd(), 6 * MSS);
    let one = 1u64 << 20;
    assert_eq!(frac(&d), (5 << 20) + (one + 2) / 5 + (one + 3) / 6);
    // ACK 10 ends the round that began at ACK 1: alpha = 15/16 + (1/9)/16 (9 segments, 1 marked).
    d.deliver_to_a(&acks[4..], &[]);
    let want = ((one << 4) - one + (one / 9)) >> 4;
    assert_eq!(d.a.prague().unwrap().alpha(), want);
    assert_eq!(d.a.counters.ecn_reductions, 1);
}

/// The bounds of the CWR round as L4STeam's kernel keeps them (tcp_input.c at 060bc82 and
/// 01266553, the trees of tcp_prague.c 0.7 and 0.6): `tcp_enter_cwr()` sets high_seq = SND.NXT
/// and does nothing while the state is CWR, so a new mark inside the round starts no reduction,
/// not even on the ACK of exactly high_seq (`tcp_fastretrans_alert()` holds CWR until something
/// above it is ACKed); the first ACK above high_seq ends the round and, if it reports a new mark,
/// `tcp_try_to_open()` starts the next reduction on that same ACK.
#[test]
fn prague_linux_cwr_round_ends_above_high_seq_and_a_mark_there_starts_the_next() {
    let mut d = Dialogue::established(prague(), prague());
    d.a.send_unlimited();
    let w1 = d.out_a();
    assert_eq!(w1.len(), 10);
    let high_seq = w1[9].header.seq + u64::from(w1[9].header.payload);
    // Marks on the first segment (the reduction, high_seq = SND.NXT = the end of w1) and on the
    // last, whose ACK acknowledges exactly high_seq.
    let acks = d.deliver_to_b(&w1, &[0, 9]);
    assert_eq!(acks.last().unwrap().header.ack, high_seq);
    let w2 = d.deliver_to_a(&acks, &[]);
    assert_eq!(d.a.snd_una(), high_seq);
    assert_eq!(d.a.counters.ecn_reductions, 1, "a mark on the ACK of exactly high_seq is inside the round");
    assert!(!w2.is_empty() && w2[0].header.seq >= high_seq);
    let frac = d.a.prague().unwrap().frac_cwnd();
    // The first ACK above high_seq reports a new mark: the round ends and the next reduction starts.
    let acks = d.deliver_to_b(&w2, &[0]);
    assert!(acks[0].header.ack > high_seq);
    d.deliver_to_a(&acks[..1], &[]);
    assert_eq!(d.a.counters.ecn_reductions, 2);
    assert!(d.a.prague().unwrap().frac_cwnd() < frac);
}
