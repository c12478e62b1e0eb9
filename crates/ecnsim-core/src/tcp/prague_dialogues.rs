//! Packet dialogues of TCP Prague between two sockets, each pinned to the requirement of
//! RFC 9331 §4 (or the rule of the L4STeam `tcp_prague.c`) it checks. The harness is
//! `dialogues.rs`'s; the algorithm's own rules are tested in `cc/prague.rs`.

use super::dialogues::{cfg, Dialogue, MSS};
use crate::packet::Ecn;
use crate::spec::{CcKind, EcnFeedback, EcnPolicy, EctCodepoint, Recovery};
use crate::tcp::{InitialWindow, Segment, TcpConfig};
use crate::time::SimTime;

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

/// Prague on SACK recovery (Linux `tcp_is_sack()`), with retransmissions sent ECT(1) so the one
/// that ends the recovery can carry a mark.
fn prague_sack() -> TcpConfig {
    TcpConfig { recovery: Recovery::Sack, limited_transmit: false, ecn_ect_on_retransmit: true, ..prague() }
}

/// What `a` sends within the next `ms` milliseconds, its pacing timer fired as it comes due.
fn paced(d: &mut Dialogue, ms: u64) -> Vec<Segment> {
    let end = SimTime::from_millis(d.now + ms);
    let mut out = Vec::new();
    while let Some(at) = d.a.next_deadline().filter(|&at| at <= end) {
        d.a.on_timer(at);
        out.extend(std::iter::from_fn(|| d.a.poll_transmit(at)));
    }
    d.now += ms;
    out
}

fn end(s: &Segment) -> u64 {
    s.header.seq + u64::from(s.header.payload)
}

/// Ten segments, the first lost: the sender after the nine duplicate ACKs (SACK), in fast recovery.
/// Returns the dialogue, the new data sent before the loss was detected (not yet delivered), the
/// fast retransmission and high_seq (`recover`: SND.NXT when the recovery began).
fn prague_one_loss(c: TcpConfig) -> (Dialogue, Vec<Segment>, Segment, u64) {
    let mut d = Dialogue::established(c, c);
    assert_eq!(d.a.sack_negotiated(), c.recovery == Recovery::Sack);
    d.a.send_unlimited();
    let w = d.out_a();
    assert_eq!(w.len(), 10);
    let dupacks = d.deliver_to_b(&w[1..], &[]);
    assert!(dupacks.iter().all(|a| a.header.ack == w[0].header.seq));
    let before = d.deliver_to_a(&dupacks, &[]);
    assert!(d.a.in_recovery() && d.a.counters.fast_retransmits == 1);
    assert_eq!(d.a.counters.ecn_reductions, 0);
    assert!(before.iter().all(|s| s.header.seq >= end(&w[9])), "new data only, the retransmission is paced");
    let high_seq = before.iter().map(end).max().unwrap_or(end(&w[9]));
    let later = paced(&mut d, 5);
    let rexmit = *later.iter().find(|s| s.header.seq == w[0].header.seq).expect("the fast retransmit");
    (d, before, rexmit, high_seq)
}

/// The end of a loss recovery as L4STeam's kernel runs it (`tcp_input.c`, as mainline):
/// `tcp_ack()` reads the AccECN feedback first (FLAG_ECE when the ACE field reports new CE
/// marks), then `tcp_fastretrans_alert()`: in Recovery with SND.UNA at high_seq,
/// `tcp_try_undo_recovery()` holds the state only for Reno ("SACK TCP is safe"), so a SACK
/// connection goes to Open there; the state machine's default branch then calls
/// `tcp_try_to_open()`, whose `tcp_enter_cwr()` on FLAG_ECE enters CWR from Open
/// (`prague_state()` -> `prague_enter_cwr()`, the cut), all before `prague_cong_control()`. So
/// the ACK of exactly high_seq that ends a SACK recovery starts the next reduction itself.
#[test]
fn prague_linux_sack_recovery_ending_on_a_marked_ack_of_high_seq_starts_a_reduction_there() {
    // The recovery's end, with the retransmission CE-marked or not: the fractional window after it.
    let end_recovery = |mark: bool| {
        let (mut d, mut segs, rexmit, high_seq) = prague_one_loss(prague_sack());
        assert_eq!(rexmit.ecn, Ecn::Ect1);
        // What was sent before the recovery began arrives, then the retransmission.
        segs.push(rexmit);
        let ce: &[usize] = if mark { &[segs.len() - 1] } else { &[] };
        let acks = d.deliver_to_b(&segs, ce);
        assert_eq!(acks.last().unwrap().header.ack, high_seq, "the retransmission's ACK acknowledges high_seq");
        d.deliver_to_a(&acks, &[]);
        assert!(!d.a.in_recovery());
        assert_eq!(d.a.snd_una(), high_seq);
        (d.a.counters.ecn_reductions, d.a.prague().unwrap().frac_cwnd())
    };
    let (cuts, frac) = end_recovery(true);
    let (no_cuts, frac_unmarked) = end_recovery(false);
    assert_eq!((cuts, no_cuts), (1, 0), "Open, then CWR, on the ACK that ends the recovery");
    assert!(frac < frac_unmarked, "the cut is applied on that ACK: {frac} against {frac_unmarked}");
}

/// The same after a retransmission timeout (`tcp_input.c`): in the Loss state `tcp_process_loss()`
/// finds SND.UNA at high_seq (SND.NXT at the timeout) and calls `tcp_try_undo_recovery()`, which
/// opens a SACK connection; `tcp_fastretrans_alert()` then falls through to `tcp_try_to_open()`
/// and `tcp_enter_cwr()`: a mark reported on that ACK starts a reduction there too.
#[test]
fn prague_linux_sack_timeout_recovery_ending_on_a_marked_ack_of_high_seq_starts_a_reduction_there() {
    let end_loss = |mark: bool| {
        let mut d = Dialogue::established(prague_sack(), prague_sack());
        d.a.send_unlimited();
        let w = d.out_a();
        assert_eq!(w.len(), 10);
        let high_seq = end(&w[9]);
        // All ten lost: the timer fires and the window restarts at one segment.
        let at = d.a.next_deadline().expect("the retransmission timer");
        d.now = at.as_nanos() / 1_000_000 + 1;
        d.a.on_timer(at);
        let mut out = d.out_a();
        assert_eq!(d.a.counters.rto_count, 1);
        while d.a.snd_una() < high_seq {
            assert!(!out.is_empty());
            // Up to the segment ending at high_seq, whose ACK (the last delivered) ends the Loss state.
            if let Some(last) = out.iter().position(|s| end(s) == high_seq) {
                out.truncate(last + 1);
            }
            let ce: Vec<usize> = (0..out.len()).filter(|&i| mark && end(&out[i]) == high_seq).collect();
            let acks = d.deliver_to_b(&out, &ce);
            out = d.deliver_to_a(&acks, &[]);
            out.extend(paced(&mut d, 20));
        }
        assert_eq!(d.a.snd_una(), high_seq, "the ACK of the segment ending at high_seq came last");
        d.a.counters.ecn_reductions
    };
    assert_eq!((end_loss(true), end_loss(false)), (1, 0));
}

/// The same ACK on a connection without SACK (Linux "Reno", here NewReno recovery):
/// `tcp_try_undo_recovery()` holds Recovery while SND.UNA equals high_seq (RFC 2582), so
/// `tcp_fastretrans_alert()` returns before `tcp_try_to_open()`: no reduction on the ACK of
/// exactly high_seq; the first ACK above it leaves Recovery and, if it reports a new mark,
/// enters CWR.
#[test]
fn prague_linux_reno_recovery_ending_on_a_marked_ack_of_high_seq_waits_for_the_next() {
    let c = TcpConfig { recovery: Recovery::Newreno, ..prague_sack() };
    let (mut d, mut segs, rexmit, high_seq) = prague_one_loss(c);
    segs.push(rexmit);
    let acks = d.deliver_to_b(&segs, &[segs.len() - 1]);
    assert_eq!(acks.last().unwrap().header.ack, high_seq);
    let mut sent = d.deliver_to_a(&acks, &[]);
    sent.extend(paced(&mut d, 20));
    assert_eq!(d.a.snd_una(), high_seq);
    assert_eq!(d.a.counters.ecn_reductions, 0, "Recovery is held on the ACK of exactly high_seq");
    // New data sent during and after the recovery: the first ACK above high_seq with a mark cuts.
    let new: Vec<Segment> = sent.iter().filter(|s| s.header.seq >= high_seq).copied().collect();
    assert!(!new.is_empty());
    let acks = d.deliver_to_b(&new[..1], &[0]);
    assert!(acks[0].header.ack > high_seq);
    d.deliver_to_a(&acks, &[]);
    assert_eq!(d.a.counters.ecn_reductions, 1);
}

/// What one ACK `ack` credits Prague: the segments it counts delivered and the fractional window
/// it adds (or removes).
fn credit(d: &mut Dialogue, acks: &[Segment]) -> (u64, i128) {
    let p = |d: &Dialogue| (d.a.prague().unwrap().delivered(), i128::from(d.a.prague().unwrap().frac_cwnd()));
    let (n0, f0) = p(d);
    d.deliver_to_a(acks, &[]);
    let (n1, f1) = p(d);
    (n1 - n0, f1 - f0)
}

/// The end of a loss recovery counts each segment delivered once, as L4STeam's kernel does
/// (`tcp_input.c`): with SACK, `tcp_sacktag_one()` counts a segment in `tp->delivered` when it is
/// first SACKed and `tcp_clean_rtx_queue()` skips the SACKed ones as SND.UNA passes them, so the
/// ACK of the retransmission that fills the hole delivers that one segment (`rs->acked_sacked`,
/// which `prague_update_cwnd()` grows by and `prague_update_alpha()` divides by); without SACK,
/// Linux's emulation does the same with duplicate ACKs (`tcp_add_reno_sack()`, one each, and
/// `tcp_remove_reno_sacks()`, max(acked - sacked_out, 1)).
#[test]
fn prague_linux_recovery_counts_each_segment_delivered_once() {
    for recovery in [Recovery::Sack, Recovery::Newreno] {
        let c = TcpConfig { recovery, ..prague_sack() };
        let (mut d, segs, rexmit, high_seq) = prague_one_loss(c);
        // The new data sent in recovery arrives above the hole: one segment per duplicate ACK.
        let acks = d.deliver_to_b(&segs, &[]);
        assert_eq!(acks.len(), segs.len());
        let (n, _) = credit(&mut d, &acks);
        assert_eq!(n, segs.len() as u64, "{recovery:?}");
        // The retransmission's ACK acknowledges everything up to high_seq: one segment delivered.
        let acks = d.deliver_to_b(&[rexmit], &[]);
        assert_eq!(acks[0].header.ack, high_seq);
        let cwnd = (d.a.prague().unwrap().frac_cwnd() + (1 << 20) - 1) >> 20;
        let (n, grown) = credit(&mut d, &acks);
        assert!(!d.a.in_recovery());
        assert_eq!(n, 1, "{recovery:?}: only the hole is newly delivered");
        // tcp_prague.c prague_update_cwnd(): one unmarked segment grows frac_cwnd by 1/cwnd.
        let one = 1i128 << 20;
        assert_eq!(grown, (one + i128::from(cwnd) / 2) / i128::from(cwnd), "{recovery:?}");
    }
}

/// A loss detected inside the round trip of an ECN reduction (Linux's CWR state), as L4STeam's
/// kernel answers it (`tcp_input.c`, tcp_prague.c): `tcp_enter_recovery()` keeps high_seq from
/// `tcp_enter_cwr()` (it calls `tcp_init_cwnd_reduction()` only outside CWR and Recovery), and
/// the state change CWR -> Recovery runs `prague_state()` -> `prague_enter_loss()`, which halves
/// the fractional window on top of the ECN cut and stops the increase. On SACK the recovery then
/// ends when SND.UNA reaches the reduction's high_seq, although data beyond it was sent in the
/// round (alpha 1/8: the cut leaves room to send).
#[test]
fn prague_linux_loss_in_a_cwr_round_halves_again_and_keeps_its_high_seq() {
    let mut d = Dialogue::established(prague_sack(), prague_sack());
    d.a.prague_mut().unwrap().set_alpha(1 << 17);
    d.a.send_unlimited();
    let w = d.out_a();
    assert_eq!(w.len(), 10);
    let high_seq = end(&w[9]);
    // w[0] CE-marked: its ACK starts the reduction with high_seq = SND.NXT = the end of w; w[1] lost.
    let mut segs = vec![w[0]];
    segs.extend_from_slice(&w[2..]);
    let acks = d.deliver_to_b(&segs, &[0]);
    let mut sent = d.deliver_to_a(&acks[..1], &[]);
    assert_eq!(d.a.counters.ecn_reductions, 1);
    let frac = |d: &Dialogue| d.a.prague().unwrap().frac_cwnd();
    let mut before = 0;
    let mut rest = acks[1..].iter();
    for ack in rest.by_ref() {
        before = frac(&d);
        sent.extend(d.deliver_to_a(std::slice::from_ref(ack), &[]));
        if d.a.in_recovery() {
            break;
        }
    }
    assert!(d.a.in_recovery() && d.a.counters.fast_retransmits == 1);
    assert_eq!(frac(&d), before - (before >> 1), "prague_enter_loss() halves on top of the ECN cut");
    sent.extend(paced(&mut d, 5));
    let beyond: Vec<Segment> = sent.iter().filter(|s| s.header.seq >= high_seq).copied().collect();
    assert!(!beyond.is_empty(), "data sent beyond high_seq in the CWR round");
    // The other duplicate ACKs, then the retransmission: its ACK is of exactly the reduction's high_seq.
    let rest: Vec<Segment> = rest.copied().collect();
    sent.extend(d.deliver_to_a(&rest, &[]));
    sent.extend(paced(&mut d, 5));
    let rexmit = *sent.iter().find(|s| s.header.seq == w[1].header.seq).expect("the fast retransmit");
    let acks = d.deliver_to_b(&[rexmit], &[]);
    assert_eq!(acks[0].header.ack, high_seq);
    d.deliver_to_a(&acks, &[]);
    assert!(!d.a.in_recovery(), "Recovery ends at the CWR's high_seq (SACK: on the ACK of exactly it)");
}
