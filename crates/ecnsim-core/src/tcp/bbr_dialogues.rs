//! Packet dialogues for BBR's view of losses (Linux `tcp_ack()`: loss detection in
//! `tcp_fastretrans_alert()` first, then `tcp_cong_control()` -> `bbr_main()` with `rs->losses`, what
//! that ACK's processing marked lost). One-way delay 50 ms (RTT 100 ms), no delayed ACKs,
//! 1000-byte segments, ten segments sent at once (BBR paces from the eleventh).

use super::dialogues::{cfg, t, Dialogue, MSS};
use crate::spec::{CcKind, EcnPolicy, LossDetection, Recovery};
use crate::tcp::{InitialWindow, Segment, TcpConfig};

fn sender(recovery: Recovery, ld: LossDetection) -> TcpConfig {
    TcpConfig {
        cc: CcKind::Bbr,
        recovery,
        ecn: EcnPolicy::Off,
        initial_window: InitialWindow::Segments(10),
        loss_detection: ld,
        ..cfg()
    }
}

fn receiver() -> TcpConfig {
    TcpConfig { cc: CcKind::Sack, ecn: EcnPolicy::Off, ..cfg() }
}

/// Ten segments sent at once by a BBR sender (SACK with SACK recovery).
fn flight(recovery: Recovery, ld: LossDetection) -> (Dialogue, Vec<Segment>) {
    let mut d = Dialogue::established(sender(recovery, ld), receiver());
    assert_eq!(d.a.sack_negotiated(), recovery == Recovery::Sack);
    d.a.send(100 * MSS);
    let w = d.out_a();
    assert_eq!(w.len(), 10);
    (d, w)
}

fn lost_bytes(d: &Dialogue) -> u64 {
    d.a.bbr().expect("a BBR sender").lost_bytes()
}

#[test]
fn bbr_sees_the_loss_rack_finds_on_the_same_ack_of_new_data() {
    // Linux tcp_ack(): tcp_fastretrans_alert() (RACK's marks, the start of recovery) runs before
    // tcp_cong_control() -> bbr_main(), so BBR starts recovery on the ACK that finds the loss:
    // bbr_set_cwnd_to_recover_or_restore(), first round, cwnd = tcp_packets_in_flight() + acked.
    // Segment 1 is lost; segment 2's SACK arrives first (one SACKed segment: RACK waits reo_wnd =
    // min_RTT / 4), then segment 0, delayed by 50 ms, advances SND.UNA 125 ms after segment 1 left
    // (RACK.rtt 100 ms + reo_wnd 25 ms): RACK marks segment 1 lost on that ACK of new data.
    let (mut d, w) = flight(Recovery::Sack, LossDetection::Rack);
    let acks = d.deliver_to_b(&w[2..3], &[]);
    // (A segment of new data goes out on the SACK: pipe 9 of cwnd 11.)
    let sent = d.deliver_to_a(&acks, &[]);
    assert_eq!(sent.len(), 1);
    assert!(!d.a.in_recovery());
    assert_eq!(lost_bytes(&d), 0);
    let acks = d.deliver_to_b(&w[0..1], &[]);
    assert_eq!(acks[0].header.ack, 1 + MSS, "segment 0 advances SND.UNA");
    let sent = d.deliver_to_a(&acks, &[]);
    assert!(d.a.in_recovery(), "RACK marked segment 1 lost");
    assert_eq!(lost_bytes(&d), MSS, "BBR counts the segment RACK marked on this ACK (rs->losses)");
    // Packet conservation on this ACK: outstanding segments 1..=10, less segment 2 (SACKed) and
    // segment 1 (lost), plus the one segment this ACK delivered.
    assert_eq!(d.a.cwnd(), 9 * MSS);
    // One segment for the one delivered: the retransmission of segment 1.
    assert_eq!(sent.len(), 1, "{:?}", sent.iter().map(|s| s.header.seq).collect::<Vec<_>>());
    assert_eq!(sent[0].header.seq, 1 + MSS);
}

#[test]
fn bbr_counts_every_segment_marked_lost_not_only_the_first() {
    // Linux tcp_ack(): rs->losses = tp->lost - lost, every segment tcp_mark_skb_lost() marked while
    // processing the ACK (RACK: tcp_rack_detect_loss()). Segments 0, 1 and 2 are lost; the third
    // SACK (segments 3, 4, 5: DupThresh SACKed, reo_wnd 0, RFC 8985 §6.2 step 4) marks all three.
    let (mut d, w) = flight(Recovery::Sack, LossDetection::Rack);
    let acks = d.deliver_to_b(&w[3..6], &[]);
    d.deliver_to_a(&acks, &[]);
    assert!(d.a.in_recovery());
    assert_eq!(lost_bytes(&d), 3 * MSS);
}

#[test]
fn bbr_on_newreno_counts_the_head_lost_at_each_partial_ack() {
    // Linux tcp_newreno_mark_lost() (no SACK): the head segment is marked lost when recovery starts
    // and again on each ACK that advances SND.UNA in recovery (a partial ACK), so each is one
    // segment of rs->losses. Segments 0 and 5 are lost; 1-4 and 6-9 arrive (eight duplicate ACKs);
    // the retransmission of 0 brings the partial ACK up to segment 5.
    let (mut d, w) = flight(Recovery::Newreno, LossDetection::Dupack);
    let arrive: Vec<Segment> = w.iter().enumerate().filter(|(i, _)| *i != 0 && *i != 5).map(|(_, s)| *s).collect();
    let acks = d.deliver_to_b(&arrive, &[]);
    let mut sent = d.deliver_to_a(&acks, &[]);
    assert!(d.a.in_recovery());
    assert_eq!(lost_bytes(&d), MSS, "the head, at the third duplicate ACK");
    // (Limited Transmit's first segment took the departure time: the retransmission leaves on the
    // pacing timer.)
    while !sent.iter().any(|s| s.header.seq == 1) {
        let at = d.a.next_deadline().expect("the pacing timer");
        assert!(at < t(d.now + 10), "paced, not the RTO: {at:?}");
        d.a.on_timer(at);
        sent.extend(std::iter::from_fn(|| d.a.poll_transmit(at)));
    }
    let rtx: Vec<Segment> = sent.iter().filter(|s| s.header.seq == 1).copied().collect();
    assert_eq!(rtx.len(), 1);
    let acks = d.deliver_to_b(&rtx, &[]);
    assert_eq!(acks[0].header.ack, 1 + 5 * MSS, "a partial ACK");
    d.deliver_to_a(&acks, &[]);
    assert!(d.a.in_recovery());
    assert_eq!(lost_bytes(&d), 2 * MSS, "and the new head at the partial ACK");
}

#[test]
fn bbr_on_rfc6675_recovery_counts_what_is_lost_becomes() {
    // RFC 6675 §4 IsLost() without RACK (Linux tcp_update_scoreboard() -> tcp_mark_head_lost()): the
    // unSACKed segments below DupThresh SACKed ones are lost, each counted once. Segments 0 and 1
    // are lost; segments 2, 3, 4 SACKed make both lost on the third duplicate ACK.
    let (mut d, w) = flight(Recovery::Sack, LossDetection::Dupack);
    let acks = d.deliver_to_b(&w[2..5], &[]);
    d.deliver_to_a(&acks, &[]);
    assert!(d.a.in_recovery());
    assert_eq!(lost_bytes(&d), 2 * MSS);
    // More SACKs above: nothing further below them is unSACKed, so nothing more is lost.
    let acks = d.deliver_to_b(&w[5..8], &[]);
    d.deliver_to_a(&acks, &[]);
    assert_eq!(lost_bytes(&d), 2 * MSS);
}

// ---------------------------------------------------------------------------
// Application-limited marks (Linux tcp_rate_check_app_limited(), called as the application writes)
// ---------------------------------------------------------------------------

fn app_limited(d: &Dialogue) -> u64 {
    d.a.bbr().expect("a BBR sender").app_limited_until()
}

/// A finite write of ten segments, all sent at once; segment 0 is lost and segments 1-9 arrive:
/// their nine duplicate ACKs reach the sender (at `d.now`, processed and nothing polled), the third
/// starting NewReno recovery with the head's fast retransmission due.
fn nine_duplicate_acks() -> Dialogue {
    let mut d = Dialogue::established(sender(Recovery::Newreno, LossDetection::Dupack), receiver());
    d.a.send(10 * MSS);
    let w = d.out_a();
    assert_eq!(w.len(), 10);
    let acks = d.deliver_to_b(&w[1..], &[]);
    assert_eq!(acks.len(), 9);
    d.now += 50;
    let now = t(d.now);
    for a in &acks {
        d.a.on_segment(now, &a.header, a.ecn);
    }
    assert!(d.a.in_recovery());
    d
}

#[test]
fn a_finite_transfer_is_not_marked_app_limited_by_its_acks() {
    // Linux calls tcp_rate_check_app_limited() where the application writes (tcp_sendmsg_locked()),
    // not on ACKs: a transfer that has sent all it was given is not marked application-limited while
    // its last ACKs (here duplicate ACKs, out of data with room in the window) come back.
    let mut d = nine_duplicate_acks();
    assert_eq!(app_limited(&d), 0);
    let now = t(d.now);
    let sent: Vec<Segment> = std::iter::from_fn(|| d.a.poll_transmit(now)).collect();
    assert_eq!(sent.iter().map(|s| s.header.seq).collect::<Vec<_>>(), vec![1], "the retransmission");
    assert_eq!(app_limited(&d), 0, "nothing written since: not app-limited");
}

#[test]
fn a_write_while_a_lost_segment_awaits_retransmission_is_not_app_limited() {
    // Linux tcp_rate_check_app_limited(): lost_out <= retrans_out is required. Out of data, nothing
    // at the host and the window open (in flight 0: ten outstanding, nine reported, the head lost),
    // but the head, marked lost, is not yet resent.
    let mut d = nine_duplicate_acks();
    d.a.send(MSS);
    assert_eq!(app_limited(&d), 0, "a lost segment awaits its retransmission");
}

#[test]
fn a_write_once_every_lost_segment_is_resent_is_app_limited() {
    // The same write after the retransmission left: every test of tcp_rate_check_app_limited()
    // holds, and the connection is application-limited until what is delivered and in flight now
    // (nine segments reported delivered, the retransmission in flight) has been delivered.
    let mut d = nine_duplicate_acks();
    let now = t(d.now);
    assert_eq!(std::iter::from_fn(|| d.a.poll_transmit(now)).count(), 1);
    d.a.send(MSS);
    assert_eq!(app_limited(&d), 10 * MSS);
}

#[test]
fn a_write_with_a_segment_at_the_host_is_not_app_limited() {
    // Linux tcp_rate_check_app_limited(): sk_wmem_alloc_get(sk) < SKB_TRUESIZE(1), nothing of the
    // socket in the host's qdisc or NIC queue, is required too.
    let mut d = nine_duplicate_acks();
    let now = t(d.now);
    assert_eq!(std::iter::from_fn(|| d.a.poll_transmit(now)).count(), 1);
    d.a.send_from_host(now, MSS, true);
    assert_eq!(app_limited(&d), 0, "the retransmission is still at the host");
}

#[test]
fn a_write_with_a_rack_lost_segment_not_yet_resent_is_not_app_limited() {
    // RACK's marks are Linux's lost_out and retrans_out. Segment 1 is lost; the SACKs of segments 2,
    // 3 and 4 (DupThresh SACKed, RFC 8985 §6.2 step 4) mark it lost on the third ACK, and 5-9 are
    // SACKed too (the window is open: in flight 0). A write before its retransmission leaves is not
    // application-limited; one after it is.
    let mut d = Dialogue::established(sender(Recovery::Sack, LossDetection::Rack), receiver());
    d.a.send(10 * MSS);
    let w = d.out_a();
    let mut arrive = vec![w[0]];
    arrive.extend_from_slice(&w[2..]);
    let acks = d.deliver_to_b(&arrive, &[]);
    d.now += 50;
    let now = t(d.now);
    for a in &acks {
        d.a.on_segment(now, &a.header, a.ecn);
    }
    assert!(d.a.in_recovery());
    d.a.send(0);
    assert_eq!(app_limited(&d), 0, "segment 1 is marked lost and not resent");
    let sent: Vec<Segment> = std::iter::from_fn(|| d.a.poll_transmit(now)).collect();
    assert_eq!(sent.iter().map(|s| s.header.seq).collect::<Vec<_>>(), vec![1 + MSS]);
    d.a.send(0);
    // Delivered: segment 0 and the eight SACKed; in flight: the retransmission.
    assert_eq!(app_limited(&d), 10 * MSS, "resent: application-limited");
}
