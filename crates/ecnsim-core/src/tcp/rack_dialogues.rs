//! Packet dialogues for RACK-TLP (RFC 8985, `tcp.loss_detection = "rack"`), each pinned to the
//! section whose rule it shows, with the duplicate-ACK rules (`"dupack"`) beside it where they
//! differ. One-way delay 50 ms (RTT 100 ms), no delayed ACKs, 1000-byte segments.

use super::dialogues::{cfg, t, Dialogue, MSS};
use crate::spec::{CcKind, EcnPolicy, LossDetection, SackAfterTimeout};
use crate::tcp::{InitialWindow, Segment, TcpConfig};
use crate::time::{SimDuration, SimTime};

fn sender(ld: LossDetection, iw: u32) -> TcpConfig {
    TcpConfig {
        cc: CcKind::Sack,
        ecn: EcnPolicy::Off,
        initial_window: InitialWindow::Segments(iw),
        loss_detection: ld,
        ..cfg()
    }
}

fn receiver() -> TcpConfig {
    TcpConfig { cc: CcKind::Sack, ecn: EcnPolicy::Off, ..cfg() }
}

fn data_seqs(segs: &[Segment]) -> Vec<u64> {
    segs.iter().filter(|s| s.header.payload > 0).map(|s| s.header.seq).collect()
}

/// `n` segments sent at once by a sender with detection `ld` (written: `app` segments).
fn flight(ld: LossDetection, n: u32, app: u64) -> (Dialogue, Vec<Segment>) {
    let mut d = Dialogue::established(sender(ld, n), receiver());
    assert!(d.a.sack_negotiated());
    d.a.send(app * MSS);
    let w = d.out_a();
    assert_eq!(w.len(), n as usize);
    (d, w)
}

/// Fire `a`'s timer at its next deadline until it sends something, and return when and what. (RACK's
/// timers ride on the socket's wake-up, which a re-armed timer leaves early: such a wake-up finds
/// nothing due and moves on.)
fn a_timer(d: &mut Dialogue) -> (SimTime, Vec<Segment>) {
    for _ in 0..8 {
        let at = d.a.next_deadline().expect("a timer is running");
        d.now = at.as_nanos() / 1_000_000;
        d.a.on_timer(at);
        let out = d.out_a();
        if !out.is_empty() {
            return (at, out);
        }
    }
    panic!("nothing sent on eight timers");
}

#[test]
fn a_loss_is_detected_by_time_not_by_three_duplicate_acks() {
    // RFC 8985 §6.2 step 5 / §6.3: segment 0 lost, segment 1 SACKed (one duplicate ACK). Sent at the
    // same instant as segment 1 but below it, segment 0 is lost once RACK.rtt + reo_wnd have passed
    // since it was sent; reo_wnd = min_RTT / 4 = 25 ms (§6.2 step 4: no reordering seen, fewer than
    // DupThresh segments SACKed, not in recovery): the reordering timer fires 25 ms after the ACK.
    let (mut d, w) = flight(LossDetection::Rack, 4, 4);
    let acks = d.deliver_to_b(&w[1..2], &[]);
    assert!(d.deliver_to_a(&acks, &[]).is_empty(), "one duplicate ACK: nothing yet");
    let ack_at = d.now;
    assert_eq!(d.a.rack_state().and_then(|r| r.reo_deadline()), Some(t(ack_at + 25)));
    let (at, out) = a_timer(&mut d);
    assert_eq!(at, t(ack_at + 25), "the reordering timer, not the RTO");
    assert_eq!(data_seqs(&out)[0], 1, "segment 0 is retransmitted");
    assert!(d.a.in_recovery());
    assert_eq!((d.a.counters.fast_retransmits, d.a.counters.rto_count), (1, 0));

    // RFC 5681 §3.2 / RFC 6675 §5: with one duplicate ACK the duplicate-ACK rules wait (for two
    // more, or the RTO).
    let (mut d, w) = flight(LossDetection::Dupack, 4, 4);
    let acks = d.deliver_to_b(&w[1..2], &[]);
    assert!(d.deliver_to_a(&acks, &[]).is_empty());
    let (at, out) = a_timer(&mut d);
    assert!(at > t(ack_at + 100), "the next deadline is the RTO's: {at:?}");
    assert_eq!(d.a.counters.rto_count, 1);
    assert_eq!(data_seqs(&out), [1]);
}

#[test]
fn reordering_within_the_reordering_window_is_not_a_loss() {
    // RFC 8985 §6.2 steps 3-5: segment 0 arrives 10 ms after segment 1 (reordered, within reo_wnd =
    // 25 ms): its ACK comes before the reordering timer; nothing is marked lost or resent, and the
    // reordering is remembered (RACK.reordering_seen).
    let (mut d, w) = flight(LossDetection::Rack, 4, 4);
    let acks = d.deliver_to_b(&w[1..2], &[]);
    assert!(d.deliver_to_a(&acks, &[]).is_empty());
    let ack_at = d.now;
    // Segment 0 reaches the receiver 10 ms after segment 1 did, and its ACK the sender 10 ms later.
    d.b.on_segment(t(ack_at - 40), &w[0].header, w[0].ecn);
    let ack = d.b.poll_transmit(t(ack_at - 40)).expect("the hole is filled: an ACK");
    assert_eq!(ack.header.ack, 2 * MSS + 1);
    d.a.on_segment(t(ack_at + 10), &ack.header, ack.ecn);
    let out: Vec<Segment> = std::iter::from_fn(|| d.a.poll_transmit(t(ack_at + 10))).collect();
    assert!(!data_seqs(&out).contains(&1), "segment 0 is not resent");
    let r = d.a.rack_state().expect("RACK's state");
    assert!(r.reordering_seen(), "a never-retransmitted segment delivered below RACK.fack");
    assert_eq!(r.lost_bytes(), 0);
    assert_eq!(r.reo_deadline(), None, "no segment sent before the delivered one is outstanding");
    // The old reordering timer's instant passes with nothing to do.
    d.a.on_timer(t(ack_at + 25));
    assert!(d.out_a().iter().all(|s| s.header.seq > 1));
    assert_eq!((d.a.counters.fast_retransmits, d.a.counters.retransmitted_packets), (0, 0));
}

/// Ten segments, segment 0 lost; its fast retransmission is lost too, while the new data sent in
/// recovery arrives. Returns the dialogue and the data sent on the ACKs of that new data.
fn lost_retransmission(ld: LossDetection) -> (Dialogue, Vec<u64>) {
    let (mut d, w) = flight(ld, 10, 40);
    let acks = d.deliver_to_b(&w[1..], &[]);
    let sent = d.deliver_to_a(&acks, &[]);
    let seqs = data_seqs(&sent);
    // (Limited Transmit sends new segments on the first two duplicate ACKs, RFC 3042.)
    assert!(seqs.contains(&1), "{ld:?}: the fast retransmission of segment 0: {seqs:?}");
    assert!(seqs.len() > 3, "{ld:?}: new data in recovery too: {seqs:?}");
    // The retransmission is lost; the new data arrives and is SACKed.
    let new: Vec<Segment> = sent.iter().filter(|s| s.header.seq != 1).copied().collect();
    let acks = d.deliver_to_b(&new, &[]);
    let next = d.deliver_to_a(&acks, &[]);
    (d, data_seqs(&next))
}

#[test]
fn a_lost_retransmission_is_detected() {
    // RFC 8985 §2.2 / §6.2 step 5: the retransmission of segment 0 was sent before new data that has
    // been delivered, RACK.rtt ago: it is lost too, and resent without waiting for the RTO.
    let (d, next) = lost_retransmission(LossDetection::Rack);
    // (Segments sent at one instant: RFC 8985 §6.2's tie-break by sequence number puts segment 0's
    // retransmission before the new data sent just after it.)
    assert!(next.contains(&1), "segment 0 is sent a third time: {next:?}");
    assert_eq!(d.a.counters.rto_count, 0);
    // RFC 6675: a retransmission is sent once per recovery (HighRxt passed it); only the RTO resends it.
    let (d, next) = lost_retransmission(LossDetection::Dupack);
    assert!(!next.contains(&1), "{next:?}");
    assert_eq!(d.a.counters.rto_count, 0);
}

#[test]
fn a_tail_loss_probe_repairs_a_tail_loss_without_a_timeout() {
    // RFC 8985 §7: the last two segments of a flight are lost. The ACKs of the others arm the PTO at
    // 2·SRTT (before the RTO); the probe resends the last segment (no new data is written, §7.3); its
    // SACK tells RACK that the other one is lost (§6.2), which fast recovery resends. No RTO.
    let (mut d, w) = flight(LossDetection::Rack, 4, 4);
    let acks = d.deliver_to_b(&w[..2], &[]);
    assert!(d.deliver_to_a(&acks, &[]).is_empty());
    let ack_at = d.now;
    let srtt = d.a.rtt().srtt().expect("an RTT sample");
    let pto = d.a.rack_state().and_then(|r| r.pto_deadline()).expect("the PTO is armed");
    assert_eq!(pto, t(ack_at) + SimDuration::from_nanos(2 * srtt.as_nanos()), "RFC 8985 §7.2: PTO = 2·SRTT");
    let (at, probe) = a_timer(&mut d);
    assert_eq!(at, pto);
    assert_eq!(data_seqs(&probe), [3 * MSS + 1], "the probe: the last segment again");
    assert_eq!(d.a.rack_state().map(|r| r.probes), Some(1));
    let acks = d.deliver_to_b(&probe, &[]);
    let repair = d.deliver_to_a(&acks, &[]);
    assert_eq!(data_seqs(&repair), [2 * MSS + 1], "segment 2, marked lost by RACK");
    let acks = d.deliver_to_b(&repair, &[]);
    d.deliver_to_a(&acks, &[]);
    assert_eq!(d.a.snd_una(), 4 * MSS + 1);
    assert_eq!(d.b.counters.bytes_delivered, 4 * MSS);
    assert_eq!(d.a.counters.rto_count, 0);

    // The same loss under the duplicate-ACK rules waits for the RTO.
    let (mut d, w) = flight(LossDetection::Dupack, 4, 4);
    let acks = d.deliver_to_b(&w[..2], &[]);
    d.deliver_to_a(&acks, &[]);
    let (_, out) = a_timer(&mut d);
    assert_eq!(data_seqs(&out), [2 * MSS + 1]);
    assert_eq!(d.a.counters.rto_count, 1);
}

#[test]
fn the_probe_timer_is_capped_by_the_rto() {
    // RFC 8985 §7.2: with one segment in flight PTO = 2·SRTT + WCDelAckT (200 ms), here later than
    // the RTO: the PTO fires at the RTO's instant instead, and the probe replaces the timeout.
    let (mut d, w) = flight(LossDetection::Rack, 3, 3);
    let acks = d.deliver_to_b(&w[..2], &[]);
    assert!(d.deliver_to_a(&acks, &[]).is_empty());
    let ack_at = t(d.now);
    let srtt = d.a.rtt().srtt().expect("an RTT sample");
    let rto = d.a.rtt().rto();
    let uncapped = ack_at + SimDuration::from_nanos(2 * srtt.as_nanos()) + SimDuration::from_millis(200);
    assert!(ack_at + rto < uncapped, "the RTO ({rto:?}) comes first here");
    let pto = d.a.rack_state().and_then(|r| r.pto_deadline()).expect("the PTO is armed");
    assert_eq!(pto, ack_at + rto, "RFC 8985 §7.2: PTO = min(PTO, RTO)");
    let (at, probe) = a_timer(&mut d);
    assert_eq!(at, pto);
    assert_eq!(data_seqs(&probe), [2 * MSS + 1]);
    assert_eq!(d.a.counters.rto_count, 0, "a probe, not a timeout");
    assert_eq!(d.a.rack_state().map(|r| r.probes), Some(1));
    // With two segments in flight the PTO is 2·SRTT, WCDelAckT not added.
    let (mut d, w) = flight(LossDetection::Rack, 4, 4);
    let acks = d.deliver_to_b(&w[..2], &[]);
    d.deliver_to_a(&acks, &[]);
    let srtt = d.a.rtt().srtt().expect("an RTT sample");
    let pto = d.a.rack_state().and_then(|r| r.pto_deadline());
    assert_eq!(pto, Some(t(d.now) + SimDuration::from_nanos(2 * srtt.as_nanos())));
}

#[test]
fn a_probe_of_new_data_goes_beyond_cwnd() {
    // RFC 8985 §7.3: with unsent data the receive window allows, the probe is a new segment (even
    // though cwnd is full), and its delivery ends the episode without a reduction (§7.4).
    let (mut d, w) = flight(LossDetection::Rack, 4, 20);
    let acks = d.deliver_to_b(&w[..1], &[]);
    let out = d.deliver_to_a(&acks, &[]);
    // Segment 0's ACK opened the window by one (slow start): two new segments (4, 5); all else lost.
    assert_eq!(data_seqs(&out), [4 * MSS + 1, 5 * MSS + 1]);
    let cwnd = d.a.cwnd();
    let (_, probe) = a_timer(&mut d);
    assert_eq!(data_seqs(&probe), [6 * MSS + 1], "new data");
    assert_eq!(d.a.cwnd(), cwnd);
    assert_eq!(d.a.counters.retransmitted_packets, 0);
}

/// A timeout with all of a 10-segment flight lost and `sack_after_timeout = "keep"`: the
/// retransmission of segment 0 arrives, and of the two retransmissions its ACK releases (segments 1
/// and 2) only the second. Returns the data sent on the ACK that SACKs segment 2.
fn lost_retransmission_after_a_timeout(ld: LossDetection) -> (Dialogue, Vec<u64>) {
    let c = TcpConfig { sack_after_timeout: SackAfterTimeout::Keep, ..sender(ld, 10) };
    let mut d = Dialogue::established(c, receiver());
    d.a.send(40 * MSS);
    assert_eq!(d.out_a().len(), 10);
    // (Under RACK a loss probe of new data comes first, RFC 8985 §7.3, and is lost too.)
    let mut out = Vec::new();
    while d.a.counters.rto_count == 0 {
        out = a_timer(&mut d).1;
    }
    assert_eq!(data_seqs(&out), [1], "{ld:?}: the timeout resends segment 0");
    let acks = d.deliver_to_b(&out, &[]);
    let out = d.deliver_to_a(&acks, &[]);
    assert_eq!(data_seqs(&out), [MSS + 1, 2 * MSS + 1], "{ld:?}: cwnd 2, the next two resent");
    let acks = d.deliver_to_b(&out[1..], &[]);
    let next = d.deliver_to_a(&acks, &[]);
    (d, data_seqs(&next))
}

#[test]
fn a_lost_retransmission_after_a_timeout_is_resent_at_once() {
    // RFC 8985 §6.2 step 5 in RTO recovery (reo_wnd = 0, §6.2 step 4): segment 1's retransmission
    // was sent before segment 2's, which is delivered RACK.rtt later: it is lost, and resent on this
    // ACK. Without RACK (RFC 6675 §5.1 after a timeout: every unSACKed octet above HighRxt is lost,
    // those below it were resent) the sender goes on with segment 3 and resends segment 1 only at the
    // next timeout: the stall `validation/ns3_bbr` traced (docs/models/bbr.md).
    let (d, next) = lost_retransmission_after_a_timeout(LossDetection::Rack);
    assert_eq!(next.first(), Some(&(MSS + 1)), "{next:?}");
    assert_eq!(d.a.counters.rto_count, 1);
    let (_, next) = lost_retransmission_after_a_timeout(LossDetection::Dupack);
    assert!(!next.contains(&(MSS + 1)), "{next:?}");
    assert_eq!(next.first(), Some(&(3 * MSS + 1)), "{next:?}");
}
