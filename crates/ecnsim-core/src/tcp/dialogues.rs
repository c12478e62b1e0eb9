//! Packet dialogues between two sockets: ECN (RFC 3168, RFC 5562, ECN+),
//! loss recovery variants (Tahoe, Reno, NewReno, SACK) and windows, each
//! test a script of segments exchanged by hand with a fixed one-way delay.

use crate::packet::{Ecn, TcpFlags};
use crate::profile::Profile;
use crate::spec::{
    CarryRtt, CcKind, CubicTimeout, EceGrowth, EcnPolicy, EcnSynAck, EctCodepoint, NewrenoCareful, Recovery,
    SackAfterTimeout,
};
use crate::tcp::{InitialWindow, Segment, TcpConfig, TcpSocket, TcpState};
use crate::time::{SimDuration, SimTime};

pub(super) const MSS: u64 = 1000;
/// One-way delay of the imaginary path, ms.
const OWD: u64 = 50;

pub(super) fn cfg() -> TcpConfig {
    TcpConfig {
        mss: 1000,
        initial_window: InitialWindow::Segments(1),
        min_rto: SimDuration::from_millis(200),
        initial_rto: SimDuration::from_secs(1),
        ecn: EcnPolicy::Request,
        ..Profile::Rfc.tcp()
    }
}

pub(super) fn t(ms: u64) -> SimTime {
    SimTime::from_millis(ms)
}

/// Two sockets, `a` the initiator; time advances by hand.
pub(super) struct Dialogue {
    pub(super) a: TcpSocket,
    pub(super) b: TcpSocket,
    pub(super) now: u64,
}

impl Dialogue {
    pub(super) fn new(ca: TcpConfig, cb: TcpConfig) -> Self {
        let mut b = TcpSocket::new(cb);
        b.listen();
        Dialogue { a: TcpSocket::new(ca), b, now: 0 }
    }

    /// Connect with no loss or marks; both ends end ESTABLISHED at `now`.
    pub(super) fn established(ca: TcpConfig, cb: TcpConfig) -> Self {
        let mut d = Dialogue::new(ca, cb);
        d.a.connect(t(0));
        let syn = d.out_a();
        let synack = d.deliver_to_b(&syn, &[]);
        let ack = d.deliver_to_a(&synack, &[]);
        assert!(d.deliver_to_b(&ack, &[]).is_empty());
        assert_eq!(d.a.state(), TcpState::Established);
        assert_eq!(d.b.state(), TcpState::Established);
        d
    }

    pub(super) fn out_a(&mut self) -> Vec<Segment> {
        let now = t(self.now);
        std::iter::from_fn(|| self.a.poll_transmit(now)).collect()
    }
    pub(super) fn out_b(&mut self) -> Vec<Segment> {
        let now = t(self.now);
        std::iter::from_fn(|| self.b.poll_transmit(now)).collect()
    }

    /// Deliver `segs` to `b` one OWD later, CE-marking the (ECT) ones whose
    /// index is in `ce`; returns what `b` sends in response, segment by segment.
    pub(super) fn deliver_to_b(&mut self, segs: &[Segment], ce: &[usize]) -> Vec<Segment> {
        self.now += OWD;
        let now = t(self.now);
        let mut out = Vec::new();
        for (i, s) in segs.iter().enumerate() {
            let ecn = if ce.contains(&i) && s.ecn != Ecn::NotEct { Ecn::Ce } else { s.ecn };
            self.b.on_segment(now, &s.header, ecn);
            out.extend(std::iter::from_fn(|| self.b.poll_transmit(now)));
        }
        out
    }
    pub(super) fn deliver_to_a(&mut self, segs: &[Segment], ce: &[usize]) -> Vec<Segment> {
        self.now += OWD;
        let now = t(self.now);
        let mut out = Vec::new();
        for (i, s) in segs.iter().enumerate() {
            let ecn = if ce.contains(&i) && s.ecn != Ecn::NotEct { Ecn::Ce } else { s.ecn };
            self.a.on_segment(now, &s.header, ecn);
            out.extend(std::iter::from_fn(|| self.a.poll_transmit(now)));
        }
        out
    }

    /// Fire `a`'s timer at its deadline.
    fn a_timeout(&mut self) {
        let d = self.a.next_deadline().expect("a timer is running");
        self.now = d.as_nanos() / 1_000_000;
        self.a.on_timer(d);
    }
}

pub(super) fn has(s: &Segment, f: TcpFlags) -> bool {
    s.header.flags.contains(f)
}

fn data_seqs(segs: &[Segment]) -> Vec<u64> {
    segs.iter().filter(|s| s.header.payload > 0).map(|s| s.header.seq).collect()
}

// ---------------------------------------------------------------------------
// ECN negotiation (RFC 3168 §6.1.1)
// ---------------------------------------------------------------------------

#[test]
fn ecn_negotiation_matrix() {
    use EcnPolicy::{Accept, Off, Request};
    for (pa, pb) in [Off, Request, Accept].into_iter().flat_map(|a| [Off, Request, Accept].map(|b| (a, b))) {
        let d = Dialogue::established(TcpConfig { ecn: pa, ..cfg() }, TcpConfig { ecn: pb, ..cfg() });
        let expect = pa == Request && pb != Off;
        assert_eq!(d.a.ecn_negotiated(), expect, "initiator {pa:?}, responder {pb:?}");
        assert_eq!(d.b.ecn_negotiated(), expect, "initiator {pa:?}, responder {pb:?}");
    }
}

#[test]
fn ecn_setup_syn_and_synack_flags() {
    let mut d = Dialogue::new(cfg(), cfg());
    d.a.connect(t(0));
    let syn = d.out_a();
    assert!(has(&syn[0], TcpFlags::ECE) && has(&syn[0], TcpFlags::CWR));
    assert_eq!(syn[0].ecn, Ecn::NotEct, "RFC 3168 §6.1.1: no ECT on SYN");
    let synack = d.deliver_to_b(&syn, &[]);
    assert!(has(&synack[0], TcpFlags::ECE) && !has(&synack[0], TcpFlags::CWR));
    assert_eq!(synack[0].ecn, Ecn::NotEct, "RFC 3168: no ECT on SYN-ACK unless RFC 5562 is on");
}

#[test]
fn half_ecn_handshake_leaves_ecn_off_and_data_not_ect() {
    let mut d = Dialogue::established(cfg(), TcpConfig { ecn: EcnPolicy::Off, ..cfg() });
    d.a.send(5 * MSS);
    let data = d.out_a();
    assert!(!data.is_empty());
    assert!(data.iter().all(|s| s.ecn == Ecn::NotEct));
}

// ---------------------------------------------------------------------------
// ECN in the data transfer (RFC 3168 §6.1.2-6.1.5)
// ---------------------------------------------------------------------------

#[test]
fn ect_on_new_data_only() {
    let mut d = Dialogue::established(TcpConfig { initial_window: InitialWindow::Segments(3), ..cfg() }, cfg());
    d.a.send(3 * MSS);
    let data = d.out_a();
    assert_eq!(data.len(), 3);
    assert!(data.iter().all(|s| s.ecn == Ecn::Ect0 && s.header.payload > 0));
    let acks = d.deliver_to_b(&data, &[]);
    assert_eq!(acks.len(), 3);
    assert!(acks.iter().all(|s| s.ecn == Ecn::NotEct), "pure ACKs are never ECT");
}

/// RFC 9331 §4.1: an L4S sender sets ECT(1) on its data; the ECN-setup handshake (RFC 3168
/// §6.1.1) and pure ACKs are as with ECT(0), and a CE mark on an ECT(1) segment is echoed and
/// answered exactly as one on an ECT(0) segment (RFC 3168 §6.1.3: CE, whatever ECT it replaced).
/// RFC 9331 §4.3's detection of a Classic bottleneck is TCP Prague's, not modelled here.
#[test]
fn ect1_sender_marks_its_data_ect1_and_ce_on_it_is_echoed_like_ect0() {
    let l4s = TcpConfig { ect_codepoint: EctCodepoint::Ect1, initial_window: InitialWindow::Segments(10), ..cfg() };
    let mut d = Dialogue::established(l4s, cfg());
    d.a.send(1000 * MSS);
    let w1 = d.out_a();
    assert_eq!(w1.len(), 10);
    assert!(w1.iter().all(|s| s.ecn == Ecn::Ect1 && s.header.payload > 0));
    let acks = d.deliver_to_b(&w1, &[1, 3]);
    assert!(acks.iter().all(|s| s.ecn == Ecn::NotEct), "pure ACKs are never ECT");
    assert!(!has(&acks[0], TcpFlags::ECE) && acks[1..].iter().all(|s| has(s, TcpFlags::ECE)), "CE on ECT(1) is echoed");
    let w2 = d.deliver_to_a(&acks, &[]);
    assert_eq!(d.a.counters.ecn_reductions, 1);
    let cwr: Vec<&Segment> = w2.iter().filter(|s| has(s, TcpFlags::CWR)).collect();
    assert_eq!(cwr.len(), 1);
    assert!(w2.iter().all(|s| s.ecn == Ecn::Ect1), "new data stays ECT(1) after the reduction");
}

#[test]
fn many_ce_marks_in_one_window_cause_one_reduction_and_one_cwr() {
    let mut d = Dialogue::established(TcpConfig { initial_window: InitialWindow::Segments(10), ..cfg() }, cfg());
    d.a.send(1000 * MSS);
    let w1 = d.out_a();
    assert_eq!(w1.len(), 10);
    // Five of the ten segments are CE-marked.
    let acks = d.deliver_to_b(&w1, &[1, 3, 5, 7, 9]);
    assert_eq!(acks.len(), 10);
    assert!(!has(&acks[0], TcpFlags::ECE));
    assert!(acks[1..].iter().all(|s| has(s, TcpFlags::ECE)), "ECE on every ACK from the first CE on");
    let w2 = d.deliver_to_a(&acks, &[]);
    assert_eq!(d.a.counters.ecn_reductions, 1, "one reduction per window");
    let cwr: Vec<usize> = (0..w2.len()).filter(|&i| has(&w2[i], TcpFlags::CWR)).collect();
    assert_eq!(cwr.len(), 1, "CWR on exactly one segment");
    assert_eq!(w2[cwr[0]].ecn, Ecn::Ect0);
    // The receiver echoes until the CWR arrives, then stops.
    let acks2 = d.deliver_to_b(&w2, &[]);
    assert!(acks2[cwr[0]..].iter().all(|s| !has(s, TcpFlags::ECE)), "ECE stops after CWR");
    let w3 = d.deliver_to_a(&acks2, &[]);
    assert_eq!(d.a.counters.ecn_reductions, 1, "stale echoes do not reduce again");
    assert!(w3.iter().all(|s| !has(s, TcpFlags::CWR)));
}

#[test]
fn ece_in_a_later_window_reduces_again() {
    let mut d = Dialogue::established(TcpConfig { initial_window: InitialWindow::Segments(8), ..cfg() }, cfg());
    d.a.send(1000 * MSS);
    let w1 = d.out_a();
    let acks = d.deliver_to_b(&w1, &[0]);
    let w2 = d.deliver_to_a(&acks, &[]);
    let acks = d.deliver_to_b(&w2, &[]);
    let w3 = d.deliver_to_a(&acks, &[]);
    assert_eq!(d.a.counters.ecn_reductions, 1);
    let acks = d.deliver_to_b(&w3, &[0]);
    d.deliver_to_a(&acks, &[]);
    assert_eq!(d.a.counters.ecn_reductions, 2);
}

#[test]
fn ece_at_one_segment_waits_for_the_timer() {
    let mut d = Dialogue::established(cfg(), cfg());
    d.a.send(100 * MSS);
    let w1 = d.out_a();
    assert_eq!(w1.len(), 1);
    let acks = d.deliver_to_b(&w1, &[0]);
    // RFC 3168 §6.1.2: cwnd cannot halve below one segment: nothing new until the timer expires.
    let sent = d.deliver_to_a(&acks, &[]);
    assert!(sent.is_empty(), "{sent:?}");
    assert_eq!(d.a.cwnd(), MSS);
    d.a_timeout();
    let next = d.out_a();
    assert_eq!(data_seqs(&next), vec![1 + MSS], "new data, not a retransmission");
    assert_eq!(d.a.counters.rto_count, 0, "the wait is not a loss");
}

#[test]
fn retransmissions_are_not_ect() {
    let mut d = Dialogue::established(TcpConfig { initial_window: InitialWindow::Segments(4), ..cfg() }, cfg());
    d.a.send(100 * MSS);
    let w1 = d.out_a();
    assert!(w1.iter().all(|s| s.ecn == Ecn::Ect0));
    // Everything lost: the timer resends the first segment.
    d.a_timeout();
    let rtx = d.out_a();
    assert_eq!(data_seqs(&rtx), vec![1]);
    assert_eq!(rtx[0].ecn, Ecn::NotEct, "RFC 3168 §6.1.5");
}

// ---------------------------------------------------------------------------
// ECN-capable SYN-ACK (RFC 5562, ECN+, ns-2's ecn_syn_wait_)
// ---------------------------------------------------------------------------

fn synack_mode(mode: EcnSynAck) -> TcpConfig {
    TcpConfig { ecn_synack: mode, initial_window: InitialWindow::Segments(3), ..cfg() }
}

#[test]
fn synack_is_ect_only_with_the_option() {
    for (mode, ect) in [(EcnSynAck::Off, false), (EcnSynAck::Rfc5562, true), (EcnSynAck::Ecnplus, true)] {
        let mut d = Dialogue::new(synack_mode(mode), synack_mode(mode));
        d.a.connect(t(0));
        let syn = d.out_a();
        let synack = d.deliver_to_b(&syn, &[]);
        assert_eq!(synack[0].ecn == Ecn::Ect0, ect, "{mode:?}");
    }
    // Never in answer to a SYN that is not ECN-setup.
    let off = TcpConfig { ecn: EcnPolicy::Off, ..synack_mode(EcnSynAck::Rfc5562) };
    let mut d = Dialogue::new(off, synack_mode(EcnSynAck::Rfc5562));
    d.a.connect(t(0));
    let syn = d.out_a();
    assert_eq!(d.deliver_to_b(&syn, &[])[0].ecn, Ecn::NotEct);
}

#[test]
fn rfc5562_marked_synack_is_resent_not_ect_and_iw_is_one() {
    let mode = synack_mode(EcnSynAck::Rfc5562);
    let mut d = Dialogue::new(mode, mode);
    d.a.connect(t(0));
    let syn = d.out_a();
    let synack = d.deliver_to_b(&syn, &[]);
    // The initiator answers the CE-marked SYN-ACK with an ECE ACK and stays in SYN-SENT.
    let ack = d.deliver_to_a(&synack, &[0]);
    assert_eq!(d.a.state(), TcpState::SynSent);
    assert_eq!(ack.len(), 1);
    assert!(has(&ack[0], TcpFlags::ECE) && !has(&ack[0], TcpFlags::SYN));
    let synack2 = d.deliver_to_b(&ack, &[]);
    assert_eq!(d.b.state(), TcpState::SynReceived);
    assert_eq!(synack2.len(), 1);
    assert!(has(&synack2[0], TcpFlags::SYN | TcpFlags::ACK));
    assert_eq!(synack2[0].ecn, Ecn::NotEct, "the resent SYN-ACK is not ECN-capable");
    let ack2 = d.deliver_to_a(&synack2, &[]);
    assert_eq!(d.a.state(), TcpState::Established);
    d.deliver_to_b(&ack2, &[]);
    assert_eq!(d.b.state(), TcpState::Established);
    // The responder starts with an initial window of one segment.
    d.b.send(10 * MSS);
    assert_eq!(d.out_b().len(), 1);
    assert_eq!(d.b.cwnd(), MSS);
}

#[test]
fn ecnplus_marked_synack_proceeds_with_iw_one() {
    let mode = synack_mode(EcnSynAck::Ecnplus);
    let mut d = Dialogue::new(mode, mode);
    d.a.connect(t(0));
    let syn = d.out_a();
    let synack = d.deliver_to_b(&syn, &[]);
    let ack = d.deliver_to_a(&synack, &[0]);
    assert_eq!(d.a.state(), TcpState::Established, "ECN+: the client proceeds");
    assert!(has(&ack[0], TcpFlags::ECE));
    d.deliver_to_b(&ack, &[]);
    assert_eq!(d.b.state(), TcpState::Established);
    d.b.send(10 * MSS);
    let data = d.out_b();
    assert_eq!(data.len(), 1, "initial window of one segment");
    assert!(has(&data[0], TcpFlags::CWR), "CWR answers the echo");
    assert_eq!(d.b.counters.ecn_reductions, 0, "the handshake echo is not a second reduction");
    // The CWR ends the initiator's echo.
    let acks = d.deliver_to_a(&data, &[]);
    assert!(acks.iter().all(|s| !has(s, TcpFlags::ECE)));
}

#[test]
fn ecnplus_wait_marked_synack_waits_one_rto_before_data() {
    let mode = synack_mode(EcnSynAck::EcnplusWait);
    let mut d = Dialogue::new(mode, mode);
    d.a.connect(t(0));
    let syn = d.out_a();
    let synack = d.deliver_to_b(&syn, &[]);
    let ack = d.deliver_to_a(&synack, &[0]);
    d.deliver_to_b(&ack, &[]);
    d.b.send(10 * MSS);
    assert!(d.out_b().is_empty(), "waits for the timer");
    let deadline = d.b.next_deadline().unwrap();
    d.now = deadline.as_nanos() / 1_000_000;
    d.b.on_timer(deadline);
    assert_eq!(d.out_b().len(), 1);
    assert_eq!(d.b.counters.rto_count, 0);
}

#[test]
fn unmarked_ect_synack_leaves_the_initial_window_alone() {
    let mode = synack_mode(EcnSynAck::Rfc5562);
    let mut d = Dialogue::established(mode, mode);
    d.b.send(10 * MSS);
    assert_eq!(d.out_b().len(), 3);
}

// ---------------------------------------------------------------------------
// Handshake retransmission counters: what `syn_retransmits` counts at each end
// ---------------------------------------------------------------------------

/// Fire every timer due at `ms` at the responder, then at the initiator, and
/// return what each sends (the responder's first).
fn fire_both(d: &mut Dialogue, ms: u64) -> (Vec<Segment>, Vec<Segment>) {
    d.now = ms;
    let now = t(ms);
    if d.b.next_deadline().is_some_and(|x| x <= now) {
        d.b.on_timer(now);
    }
    let from_b = d.out_b();
    if d.a.next_deadline().is_some_and(|x| x <= now) {
        d.a.on_timer(now);
    }
    (from_b, d.out_a())
}

fn synacks(segs: &[Segment]) -> usize {
    segs.iter().filter(|s| has(s, TcpFlags::SYN | TcpFlags::ACK)).count()
}

#[test]
fn handshake_lost_syn_is_counted_by_the_initiator_only() {
    let mut d = Dialogue::new(cfg(), cfg());
    d.a.connect(t(0));
    assert_eq!(d.out_a().len(), 1); // the SYN is lost
    d.a_timeout();
    let syn = d.out_a();
    assert_eq!(syn.len(), 1);
    assert!(has(&syn[0], TcpFlags::SYN) && !has(&syn[0], TcpFlags::ACK));
    let synack = d.deliver_to_b(&syn, &[]);
    let ack = d.deliver_to_a(&synack, &[]);
    d.deliver_to_b(&ack, &[]);
    assert_eq!((d.a.state(), d.b.state()), (TcpState::Established, TcpState::Established));
    assert_eq!(d.a.counters.syn_retransmits, 1, "the initiator resent its SYN once");
    assert_eq!(d.b.counters.syn_retransmits, 0, "the responder never saw the first SYN: nothing to resend");
}

#[test]
fn handshake_lost_synack_is_counted_by_both_ends() {
    // Both ends arm the same initial RTO: the initiator when it sends the SYN (t = 0), the
    // responder one OWD later when it sends the SYN-ACK (t = 50). The initiator's resent SYN
    // reaches the responder at 1000 + 50 = 1050, the instant the responder's own timer expires.
    // So a lost SYN-ACK costs one SYN retransmission (the initiator cannot tell a lost SYN-ACK
    // from a lost SYN) and one SYN-ACK retransmission on the responder's timer: the two
    // counters come out nearly equal wherever SYN-ACKs are lost and SYNs are not.
    let mut d = Dialogue::new(cfg(), cfg());
    d.a.connect(t(0));
    let syn = d.out_a();
    let lost = d.deliver_to_b(&syn, &[]);
    assert_eq!(synacks(&lost), 1);
    let (from_b, resent_syn) = fire_both(&mut d, 1000);
    assert!(from_b.is_empty(), "the responder's timer runs to 1050");
    assert_eq!(resent_syn.len(), 1);
    assert_eq!(d.a.counters.syn_retransmits, 1);
    // At 1050 the resent SYN arrives (answered at once with SYN-ACK #2, as Linux answers a
    // retransmitted SYN in SYN-RECEIVED) and the responder's timer fires (SYN-ACK #3).
    let answer = d.deliver_to_b(&resent_syn, &[]);
    assert_eq!(synacks(&answer), 1);
    let (on_timer, _) = fire_both(&mut d, 1050);
    assert_eq!(synacks(&on_timer), 1);
    assert_eq!(d.b.counters.syn_retransmits, 1, "only the timer's SYN-ACK counts as a retransmission");
    assert_eq!(d.b.counters.rto_count, 0, "handshake timeouts are not data RTOs");
    let acks = d.deliver_to_a(&[answer[0], on_timer[0]], &[]);
    assert_eq!(d.a.state(), TcpState::Established);
    d.deliver_to_b(&acks, &[]);
    assert_eq!(d.b.state(), TcpState::Established);
    assert_eq!((d.a.counters.syn_retransmits, d.b.counters.syn_retransmits), (1, 1));
}

#[test]
fn handshake_lost_third_ack_is_counted_by_the_responder_only() {
    let mut d = Dialogue::new(cfg(), cfg());
    d.a.connect(t(0));
    let syn = d.out_a();
    let synack = d.deliver_to_b(&syn, &[]);
    assert_eq!(d.deliver_to_a(&synack, &[]).len(), 1); // the ACK is lost
    assert_eq!(d.a.state(), TcpState::Established);
    let (resent, from_a) = fire_both(&mut d, 1050);
    assert!(from_a.is_empty());
    assert_eq!(synacks(&resent), 1);
    let ack = d.deliver_to_a(&resent, &[]);
    d.deliver_to_b(&ack, &[]);
    assert_eq!(d.b.state(), TcpState::Established);
    assert_eq!((d.a.counters.syn_retransmits, d.b.counters.syn_retransmits), (0, 1));
}

#[test]
fn handshake_ce_marked_synack_is_no_retransmission_in_any_mode() {
    // A mark is not a loss: no end's timer fires, whatever the SYN-ACK mode does with the mark.
    // RFC 5562 answers it with a second, non-ECT SYN-ACK sent at once (not on the timer).
    for (mode, second_synack) in
        [(EcnSynAck::Rfc5562, true), (EcnSynAck::Ecnplus, false), (EcnSynAck::EcnplusWait, false)]
    {
        let c = synack_mode(mode);
        let mut d = Dialogue::new(c, c);
        d.a.connect(t(0));
        let syn = d.out_a();
        let synack = d.deliver_to_b(&syn, &[]);
        assert_eq!(synack[0].ecn, Ecn::Ect0, "{mode:?}");
        let ack = d.deliver_to_a(&synack, &[0]);
        let reply = d.deliver_to_b(&ack, &[]);
        assert_eq!(synacks(&reply) == 1, second_synack, "{mode:?}: {reply:?}");
        if second_synack {
            let ack2 = d.deliver_to_a(&reply, &[]);
            d.deliver_to_b(&ack2, &[]);
        }
        assert_eq!((d.a.state(), d.b.state()), (TcpState::Established, TcpState::Established), "{mode:?}");
        assert_eq!(d.a.counters.syn_retransmits, 0, "{mode:?}");
        assert_eq!(d.b.counters.syn_retransmits, 0, "{mode:?}: the mark's answer is not a retransmission");
        assert_eq!(d.a.counters.ce_received, 1, "{mode:?}");
    }
}

// ---------------------------------------------------------------------------
// Loss recovery variants: three losses in one window
// ---------------------------------------------------------------------------

fn variant(cc: CcKind, iw: u32) -> TcpConfig {
    TcpConfig { cc, ecn: EcnPolicy::Off, initial_window: InitialWindow::Segments(iw), ..cfg() }
}

/// Send one window of 10 segments, lose those at indices 2, 4 and 6, then
/// exchange round trips (firing the timer when nothing moves) until all is
/// acknowledged. Returns the dialogue and the retransmitted sequence numbers
/// with the round trip each was sent in.
fn three_losses(cc: CcKind) -> (Dialogue, Vec<(usize, u64)>) {
    let n = 10;
    let mut d = Dialogue::established(variant(cc, n), variant(cc, n));
    d.a.send(u64::from(n) * MSS);
    let w = d.out_a();
    assert_eq!(w.len(), 10);
    let delivered: Vec<Segment> =
        w.iter().enumerate().filter(|(i, _)| ![2, 4, 6].contains(i)).map(|(_, s)| *s).collect();
    let mut acks = d.deliver_to_b(&delivered, &[]);
    let mut rtx = Vec::new();
    for round in 1..40 {
        let mut segs = d.deliver_to_a(&acks, &[]);
        if segs.is_empty() {
            if d.a.snd_una() > u64::from(n) * MSS {
                break;
            }
            d.a_timeout();
            segs = d.out_a();
        }
        rtx.extend(data_seqs(&segs).into_iter().map(|s| (round, s)));
        acks = d.deliver_to_b(&segs, &[]);
    }
    assert_eq!(d.b.counters.bytes_delivered, u64::from(n) * MSS, "{cc:?} delivers everything");
    (d, rtx)
}

#[test]
fn newreno_recovers_three_losses_with_partial_acks_and_no_timeout() {
    let (d, rtx) = three_losses(CcKind::Newreno);
    assert_eq!(d.a.counters.rto_count, 0);
    assert_eq!(d.a.counters.fast_retransmits, 1);
    // One retransmission per round trip, each triggered by a partial ACK.
    assert_eq!(rtx, vec![(1, 2001), (2, 4001), (3, 6001)]);
}

#[test]
fn sack_retransmits_all_three_losses_within_one_round_trip() {
    let (d, rtx) = three_losses(CcKind::Sack);
    assert!(d.a.sack_negotiated() && d.b.sack_negotiated());
    assert_eq!(d.a.counters.rto_count, 0);
    assert_eq!(rtx, vec![(1, 2001), (1, 4001), (1, 6001)]);
}

#[test]
fn reno_three_losses_end_in_repeated_halvings_or_a_timeout() {
    let (d, _) = three_losses(CcKind::Reno);
    let c = d.a.counters;
    assert!(c.rto_count >= 1 || c.fast_retransmits >= 2, "{c:?}");
}

#[test]
fn tahoe_three_losses_restart_slow_start() {
    let (d, rtx) = three_losses(CcKind::Tahoe);
    let c = d.a.counters;
    assert_eq!(c.fast_retransmits, 1);
    // Go-back-N from the first loss, in slow start from one segment.
    assert_eq!(rtx[0], (1, 2001));
    assert!(rtx.len() >= 3);
}

/// The ACKs of duplicate segments (a spurious retransmission's copies reaching the receiver
/// again): duplicate ACKs for RFC 5681, which NewReno counts toward a fast retransmit; not for
/// RFC 6675 §2 (they SACK nothing new), so a SACK sender waits for ACKs that do. Issue 13 item
/// 10: ecnsim counted them and started a spurious recovery where ns-3 did not (`random 39` of
/// `validation/ns3/sack_dialogue.py --sweep 200`).
/// Returns the dialogue, the first window and what `a` sent on the three ACKs.
fn acks_of_duplicates(cc: CcKind) -> (Dialogue, Vec<Segment>, Vec<Segment>) {
    let mut d = Dialogue::established(variant(cc, 10), variant(cc, 10));
    d.a.send(20 * MSS);
    let w = d.out_a();
    assert_eq!(w.len(), 10);
    // The first five arrive; their ACKs let `a` send ten more (slow start).
    let acks = d.deliver_to_b(&w[..5], &[]);
    let more = d.deliver_to_a(&acks, &[]);
    assert_eq!(data_seqs(&more).len(), 10);
    assert_eq!(d.a.snd_una(), 5 * MSS + 1);
    // Copies of segments 0..=2 arrive again: three ACKs of SND.UNA, no SACK block.
    let dup_acks = d.deliver_to_b(&w[..3], &[]);
    assert_eq!(dup_acks.len(), 3);
    assert!(dup_acks.iter().all(|s| s.header.ack == 5 * MSS + 1 && s.header.sack_blocks().is_empty()));
    let reply = d.deliver_to_a(&dup_acks, &[]);
    (d, w, reply)
}

#[test]
fn newreno_counts_the_acks_of_duplicate_segments_as_duplicate_acks() {
    let (d, _, reply) = acks_of_duplicates(CcKind::Newreno);
    // RFC 5681 §3.2: the third duplicate ACK starts a fast retransmit of SND.UNA.
    assert_eq!(d.a.counters.fast_retransmits, 1);
    assert_eq!(data_seqs(&reply)[0], 5 * MSS + 1);
}

#[test]
fn sack_does_not_count_acks_that_sack_nothing_new() {
    let (mut d, w, reply) = acks_of_duplicates(CcKind::Sack);
    assert!(d.a.sack_negotiated());
    assert_eq!(d.a.counters.fast_retransmits, 0, "RFC 6675 §2: no duplicate ACK without new SACK information");
    assert!(!d.a.in_recovery() && data_seqs(&reply).is_empty());
    // Segment 5 is lost, 6..=8 arrive: three ACKs that SACK new data start the recovery.
    let acks = d.deliver_to_b(&w[6..9], &[]);
    assert!(acks.iter().all(|s| !s.header.sack_blocks().is_empty()));
    let reply = d.deliver_to_a(&acks, &[]);
    assert_eq!(d.a.counters.fast_retransmits, 1);
    assert_eq!(data_seqs(&reply)[0], 5 * MSS + 1);
}

/// A timeout in SACK recovery with two holes (segments 0 and 5, both lost twice): returns what
/// `a` sends on the timer and on each of the next two ACK rounds.
fn timeout_with_sacked_data(keep: SackAfterTimeout) -> (Dialogue, Vec<Vec<u64>>) {
    let c = TcpConfig { sack_after_timeout: keep, ..variant(CcKind::Sack, 10) };
    let mut d = Dialogue::established(c, c);
    d.a.send(10 * MSS);
    let w = d.out_a();
    assert_eq!(w.len(), 10);
    let held: Vec<Segment> = w.iter().enumerate().filter(|(i, _)| ![0, 5].contains(i)).map(|(_, s)| *s).collect();
    let acks = d.deliver_to_b(&held, &[]);
    // RFC 6675 §5: the third duplicate ACK starts recovery; 0 and 5 are resent, and lost again.
    let resent = d.deliver_to_a(&acks, &[]);
    assert_eq!(data_seqs(&resent), [1, 5 * MSS + 1]);
    assert!(d.a.in_recovery());
    d.a_timeout();
    let mut segs = d.out_a();
    let mut sent = vec![data_seqs(&segs)];
    for _ in 0..2 {
        let acks = d.deliver_to_b(&segs, &[]);
        segs = d.deliver_to_a(&acks, &[]);
        sent.push(data_seqs(&segs));
    }
    (d, sent)
}

#[test]
fn sack_timeout_clearing_the_scoreboard_resends_what_the_receiver_holds() {
    // RFC 2018 §8: the SACKed bits are turned off; go-back-N from SND.UNA, one segment, then two.
    let (d, sent) = timeout_with_sacked_data(SackAfterTimeout::Clear);
    assert_eq!(sent[0], [1]);
    assert_eq!(sent[1], [5 * MSS + 1, 6 * MSS + 1], "segment 6 is resent though the receiver holds it");
    assert_eq!(d.a.counters.rto_count, 1);
}

#[test]
fn sack_timeout_keeping_the_scoreboard_resends_only_the_holes() {
    // RFC 6675 §5.1 / Linux tcp_timeout_mark_lost(): the SACKed segments stay SACKed; after SND.UNA
    // only the other hole (5) is resent, and its ACK ends the transfer.
    let (d, sent) = timeout_with_sacked_data(SackAfterTimeout::Keep);
    assert_eq!(sent[0], [1]);
    assert_eq!(sent[1], [5 * MSS + 1]);
    assert!(sent[2].is_empty());
    assert_eq!(d.a.snd_una(), 10 * MSS + 1);
    assert_eq!(d.b.counters.bytes_delivered, 10 * MSS);
    assert_eq!((d.a.counters.rto_count, d.a.counters.fast_retransmits), (1, 1));
    assert_eq!(d.a.counters.retransmitted_packets, 4, "0 and 5 twice each, nothing the receiver held");
}

#[test]
fn sack_timeout_keeping_the_scoreboard_starts_no_recovery_before_the_recovery_point() {
    // RFC 6675 §5.1: after a timeout, no new recovery until HighACK >= RecoveryPoint, whatever
    // `newreno_careful` says (here "off": no `recover` guard at all, so "clear" shows the difference).
    for (keep, recoveries) in [(SackAfterTimeout::Keep, 1), (SackAfterTimeout::Clear, 2)] {
        let c =
            TcpConfig { sack_after_timeout: keep, newreno_careful: NewrenoCareful::Off, ..variant(CcKind::Sack, 10) };
        let mut d = Dialogue::established(c, c);
        d.a.send(30 * MSS);
        let w = d.out_a();
        assert_eq!(w.len(), 10);
        // Segments 1..=4 arrive: their ACKs are duplicate ACKs of 0 SACKing new data.
        let acks = d.deliver_to_b(&w[1..5], &[]);
        let _ = d.deliver_to_a(&acks, &[]);
        assert_eq!(d.a.counters.fast_retransmits, 1, "the third duplicate ACK");
        d.a_timeout();
        assert!(!d.a.in_recovery());
        assert_eq!(data_seqs(&d.out_a()), [1], "{keep:?}: SND.UNA first, one segment");
        // Copies of 6..=9 delayed in the network arrive after the timeout: duplicate ACKs that SACK
        // new data, IsLost(SND.UNA) holds.
        let acks = d.deliver_to_b(&w[6..10], &[]);
        let _ = d.deliver_to_a(&acks, &[]);
        assert_eq!(d.a.counters.fast_retransmits, recoveries, "{keep:?}");
        assert_eq!(d.a.in_recovery(), recoveries == 2, "{keep:?}");
    }
}

#[test]
fn sack_is_not_used_unless_both_ends_offer_it() {
    let d = Dialogue::established(variant(CcKind::Sack, 2), variant(CcKind::Newreno, 2));
    assert!(!d.a.sack_negotiated());
    assert!(!d.b.sack_negotiated());
}

// ---------------------------------------------------------------------------
// Windows
// ---------------------------------------------------------------------------

#[test]
fn rfc3390_initial_window_depends_on_mss() {
    assert_eq!(InitialWindow::Rfc3390.bytes(1460), 4380);
    assert_eq!(InitialWindow::Rfc3390.bytes(1000), 4000);
    assert_eq!(InitialWindow::Rfc3390.bytes(536), 2144);
    assert_eq!(InitialWindow::Rfc3390.bytes(2190), 4380);
    assert_eq!(InitialWindow::Rfc3390.bytes(3000), 6000);
}

#[test]
fn restart_after_idle_returns_to_the_initial_window() {
    for restart in [true, false] {
        let c = TcpConfig { restart_after_idle: restart, ..variant(CcKind::Reno, 2) };
        let mut d = Dialogue::established(c, c);
        d.a.send(14 * MSS);
        let mut segs = d.out_a();
        while !segs.is_empty() {
            let acks = d.deliver_to_b(&segs, &[]);
            segs = d.deliver_to_a(&acks, &[]);
        }
        let grown = d.a.cwnd();
        assert!(grown >= 8 * MSS, "{grown}");
        // Idle for 10 s, far more than one RTO.
        d.now += 10_000;
        d.a.send(100 * MSS);
        let burst = d.out_a();
        let expect = if restart { 2 } else { usize::try_from(grown / MSS).unwrap() };
        assert_eq!(burst.len(), expect, "restart_after_idle = {restart}");
    }
}

#[test]
fn receiver_window_limits_the_sender() {
    let c = TcpConfig { rcv_window: 3 * MSS, ..variant(CcKind::Reno, 10) };
    let mut d = Dialogue::established(c, c);
    d.a.send(20 * MSS);
    assert_eq!(d.out_a().len(), 3);
}

#[test]
fn carried_rtt_hint_is_srtt_in_ms_on_data_only() {
    let c = TcpConfig { carry_rtt: CarryRtt::Smoothed, ..variant(CcKind::Reno, 2) };
    let mut d = Dialogue::established(c, c);
    d.a.send(2 * MSS);
    let data = d.out_a();
    assert!(data.iter().all(|s| s.header.rtt_hint_ms == 100), "{data:?}");
    let acks = d.deliver_to_b(&data, &[]);
    assert!(acks.iter().all(|s| s.header.rtt_hint_ms == 0));
}

#[test]
fn carried_base_rtt_stays_at_the_minimum_while_queueing_inflates_the_rtt() {
    let c = TcpConfig { carry_rtt: CarryRtt::Base, ..variant(CcKind::Reno, 2) };
    let sm = TcpConfig { carry_rtt: CarryRtt::Smoothed, ..c };
    for (cfg, smoothed) in [(c, false), (sm, true)] {
        let mut d = Dialogue::established(cfg, cfg);
        d.a.send(200 * MSS);
        let mut segs = d.out_a();
        // Each round trip the ACKs come back 50 ms later than the one before (a growing queue).
        for round in 1..=6u64 {
            let acks = d.deliver_to_b(&segs, &[]);
            d.now += 50 * round;
            segs = d.deliver_to_a(&acks, &[]);
        }
        let hint = segs.iter().find(|s| s.header.payload > 0).unwrap().header.rtt_hint_ms;
        if smoothed {
            assert!(hint > 150, "SRTT follows the queue: {hint} ms");
        } else {
            // The handshake's 100 ms, the smallest RTT measured.
            assert_eq!(hint, 100);
        }
    }
}

#[test]
fn a_sub_millisecond_rtt_is_carried_as_one_ms_not_as_no_sample() {
    let c = TcpConfig { carry_rtt: CarryRtt::Base, ..variant(CcKind::Reno, 2) };
    let mut a = TcpSocket::new(c);
    let mut b = TcpSocket::new(c);
    b.listen();
    let us = |v: u64| SimTime::from_nanos(v * 1000);
    a.connect(us(0));
    let syn: Vec<Segment> = std::iter::from_fn(|| a.poll_transmit(us(0))).collect();
    b.on_segment(us(200), &syn[0].header, syn[0].ecn);
    let synack: Vec<Segment> = std::iter::from_fn(|| b.poll_transmit(us(200))).collect();
    a.on_segment(us(400), &synack[0].header, synack[0].ecn);
    a.send(MSS);
    let data: Vec<Segment> = std::iter::from_fn(|| a.poll_transmit(us(400))).collect();
    let seg = data.iter().find(|s| s.header.payload > 0).unwrap();
    // A 0.4 ms RTT: 1 ms, so AECN puts the flow in its shortest-RTT class, not "no sample".
    assert_eq!(seg.header.rtt_hint_ms, 1);
}

// ---------------------------------------------------------------------------
// ECN-Echo and window growth (`ecn_ece_growth`)
// ---------------------------------------------------------------------------

/// After a timeout the receiver still echoes a mark (our retransmissions cannot carry CWR
/// under RFC 3168); whether those ACKs open the window is the profile's choice.
fn ece_acks_after_a_timeout(growth: EceGrowth, cwr_on_retransmit: bool) -> u64 {
    let c = TcpConfig {
        initial_window: InitialWindow::Segments(8),
        ecn_ece_growth: growth,
        ecn_cwr_on_retransmit: cwr_on_retransmit,
        ..cfg()
    };
    let mut d = Dialogue::established(c, c);
    d.a.send(1000 * MSS);
    let w1 = d.out_a();
    // The first segment is CE-marked; its ECE reduces the window once.
    let acks = d.deliver_to_b(&w1[..1], &[0]);
    d.deliver_to_a(&acks, &[]);
    assert_eq!(d.a.counters.ecn_reductions, 1);
    // Everything else of the window is lost, and so is the CWR segment sent after the reduction.
    d.a_timeout();
    let mut segs = d.out_a();
    for _ in 0..4 {
        let acks = d.deliver_to_b(&segs, &[]);
        segs = d.deliver_to_a(&acks, &[]);
    }
    d.a.cwnd() / MSS
}

#[test]
fn ece_after_a_timeout_blocks_growth_only_with_never_and_no_cwr_on_retransmissions() {
    // RFC 3168 read literally: every ACK still carries ECE, cwnd stays at one segment.
    assert_eq!(ece_acks_after_a_timeout(EceGrowth::Never, false), 1);
    // ns-2 2001: the retransmission carries CWR, the echo stops, slow start resumes.
    assert!(ece_acks_after_a_timeout(EceGrowth::Never, true) >= 4);
    // Linux: ECE does not stop slow start.
    assert!(ece_acks_after_a_timeout(EceGrowth::SlowStart, false) >= 4);
    // rfc: the timeout answered the mark whose echoes these are.
    assert!(ece_acks_after_a_timeout(EceGrowth::AfterLoss, false) >= 4);
}

#[test]
fn after_an_ecn_reduction_ece_still_blocks_growth_with_after_loss() {
    let c = TcpConfig { initial_window: InitialWindow::Segments(10), ecn_ece_growth: EceGrowth::AfterLoss, ..cfg() };
    let mut d = Dialogue::established(c, c);
    d.a.send(1000 * MSS);
    let w1 = d.out_a();
    let acks = d.deliver_to_b(&w1, &[0]);
    d.deliver_to_a(&acks, &[]);
    // One reduction, 10 -> 5 segments, and the nine later ECE ACKs did not grow it.
    assert_eq!(d.a.counters.ecn_reductions, 1);
    assert_eq!(d.a.cwnd(), 5 * MSS);
}

// ---------------------------------------------------------------------------
// Limited Transmit (RFC 3042)
// ---------------------------------------------------------------------------

#[test]
fn limited_transmit_sends_one_new_segment_per_early_dupack_and_is_not_counted_in_ssthresh() {
    for lt in [true, false] {
        let c = TcpConfig { limited_transmit: lt, ..variant(CcKind::Reno, 8) };
        let mut d = Dialogue::established(c, c);
        d.a.send(100 * MSS);
        let w = d.out_a();
        assert_eq!(w.len(), 8);
        // The first segment is lost; the next three arrive and each is duplicate-ACKed.
        let dupacks = d.deliver_to_b(&w[1..4], &[]);
        assert_eq!(dupacks.len(), 3);
        d.now += OWD;
        let now = t(d.now);
        let mut sent = Vec::new();
        for (i, ack) in dupacks.iter().enumerate() {
            d.a.on_segment(now, &ack.header, ack.ecn);
            let out: Vec<Segment> = std::iter::from_fn(|| d.a.poll_transmit(now)).collect();
            sent.push(data_seqs(&out));
            if i < 2 {
                assert!(!d.a.in_recovery());
            }
        }
        if lt {
            // RFC 3042 §2: segments 9 and 10 on the first two duplicate ACKs, cwnd unchanged;
            // then fast retransmit, with ssthresh from the 8 segments in flight before them.
            assert_eq!(sent, vec![vec![1 + 8 * MSS], vec![1 + 9 * MSS], vec![1]]);
        } else {
            assert_eq!(sent, vec![vec![], vec![], vec![1]]);
        }
        // RFC 5681 §3.2 step 2: ssthresh = FlightSize / 2 without the Limited Transmit segments.
        assert_eq!(d.a.ssthresh(), 4 * MSS, "limited_transmit = {lt}");
    }
}

// ---------------------------------------------------------------------------
// Duplicate ACKs during the go-back-N after a timeout (RFC 5681 §3.2, RFC 6582 §4)
// ---------------------------------------------------------------------------

/// A window of 30 segments of which 1-4 and 11 are lost and every ACK of the rest too, so the
/// timer fires with the receiver holding 5-10 and 12-30. The go-back-N resends 1, then 2-3, then
/// 4-7: the fourth fills the first hole (ACK of 11) and 5-7, already held, bring three duplicate
/// ACKs of 11, which cover no more than the highest segment sent before the timeout. Returns the
/// dialogue and the data sent after each of the four ACKs of that last round trip.
fn dupacks_after_a_timeout(c: TcpConfig) -> (Dialogue, Vec<Vec<u64>>) {
    let mut d = Dialogue::established(c, c);
    d.a.send(100 * MSS);
    let w = d.out_a();
    assert_eq!(w.len(), 30);
    let lost = [0, 1, 2, 3, 10];
    let held: Vec<Segment> = w.iter().enumerate().filter(|(i, _)| !lost.contains(i)).map(|(_, s)| *s).collect();
    // The receiver's duplicate ACKs are lost too: no fast retransmit, the timer fires.
    let _ = d.deliver_to_b(&held, &[]);
    d.a_timeout();
    assert_eq!(d.a.counters.rto_count, 1);
    let resent = d.out_a();
    assert_eq!(data_seqs(&resent), vec![1]);
    let acks = d.deliver_to_b(&resent, &[]);
    let segs = d.deliver_to_a(&acks, &[]);
    assert_eq!(data_seqs(&segs), vec![1001, 2001]);
    let acks = d.deliver_to_b(&segs, &[]);
    let segs = d.deliver_to_a(&acks, &[]);
    assert_eq!(data_seqs(&segs), vec![3001, 4001, 5001, 6001]);
    let acks = d.deliver_to_b(&segs, &[]);
    assert_eq!(acks.iter().map(|s| s.header.ack).collect::<Vec<_>>(), vec![10_001; 4]);
    d.now += OWD;
    let now = t(d.now);
    let mut sent = Vec::new();
    for ack in &acks {
        d.a.on_segment(now, &ack.header, ack.ecn);
        let out: Vec<Segment> = std::iter::from_fn(|| d.a.poll_transmit(now)).collect();
        sent.push(data_seqs(&out));
    }
    (d, sent)
}

#[test]
fn reno_dupacks_in_a_go_back_n_halve_the_resent_flight_not_the_one_before_the_timeout() {
    let c = TcpConfig { reno_bugfix: false, ..variant(CcKind::Reno, 30) };
    let (d, sent) = dupacks_after_a_timeout(c);
    // The ACK of 11 opens slow start to 5 segments: 11-15 leave.
    assert_eq!(sent[0], (10..15).map(|k| 1 + k * MSS).collect::<Vec<_>>());
    // RFC 5681 §3.2: the third duplicate ACK is a fast retransmit (no `recover` check in Reno) ...
    assert_eq!(d.a.counters.fast_retransmits, 1);
    assert_eq!(sent[1..], [Vec::<u64>::new(), vec![], vec![10_001]]);
    // ... and ssthresh halves the FlightSize up to SND.NXT (11-15, 5 segments), not the 20 segments
    // sent before the timeout beyond SND.UNA: those are being resent. Halving them gave ssthresh 10
    // and cwnd 13 segments, and a burst of eight new segments behind the retransmission.
    assert_eq!(d.a.ssthresh(), 5 * MSS / 2);
    assert_eq!(d.a.cwnd(), 5 * MSS / 2 + 3 * MSS);
}

#[test]
fn reno_bugfix_ignores_dupacks_that_cover_no_more_than_the_data_sent_before_the_timeout() {
    let c = TcpConfig { reno_bugfix: true, ..variant(CcKind::Reno, 30) };
    let (d, sent) = dupacks_after_a_timeout(c);
    // RFC 6582 §3.2 step 2 / §4: the duplicate ACKs do not cover more than `recover` (set at the
    // timeout): no fast retransmit, ssthresh stays at the timeout's 15 segments.
    assert_eq!(d.a.counters.fast_retransmits, 0);
    assert_eq!(sent[1..], [Vec::<u64>::new(), vec![], vec![]]);
    assert_eq!(d.a.ssthresh(), 15 * MSS);
    assert_eq!(d.a.cwnd(), 5 * MSS);
}

// ---------------------------------------------------------------------------
// RFC 6582 §3.2 step 2 with the §4.1 ACK heuristic (`newreno_careful = "careful_ack_heuristic"`)
// ---------------------------------------------------------------------------

fn heuristic(cc: CcKind, careful: NewrenoCareful) -> TcpConfig {
    TcpConfig { newreno_careful: careful, reno_bugfix: false, ..variant(cc, 30) }
}

/// RFC 6582 §4.1: the three duplicate ACKs after the ACK that jumped from segment 4 to 11 (seven
/// segments, more than 4*SMSS) come from segments the receiver held: no fast retransmit.
#[test]
fn newreno_rfc6582_4_1_dupacks_after_a_large_cumulative_ack_start_no_fast_retransmit() {
    assert_eq!(cfg().newreno_careful, NewrenoCareful::CarefulAckHeuristic, "the rfc profile's rule");
    for cc in [CcKind::Newreno, CcKind::Tahoe] {
        let (d, sent) = dupacks_after_a_timeout(heuristic(cc, NewrenoCareful::CarefulAckHeuristic));
        assert_eq!(d.a.counters.fast_retransmits, 0, "{cc:?}");
        assert!(sent[1..].iter().all(|s| !s.contains(&10_001)), "{cc:?}: {sent:?}");
    }
}

/// Ten segments and all their ACKs lost: the timeout's go-back-N resends them, each ACK
/// advancing by one or two segments, and the first new segment past `recover` is lost.
/// Returns the sender's fast retransmits and when segment 11 was resent (ms).
fn first_new_segment_lost_after_a_timeout(c: TcpConfig) -> (u64, Option<u64>) {
    let c = TcpConfig { initial_window: InitialWindow::Segments(10), ..c };
    let mut d = Dialogue::established(c, c);
    d.a.send(40 * MSS);
    assert_eq!(d.out_a().len(), 10);
    d.a_timeout();
    let mut segs = d.out_a();
    let mut resent = None;
    for _ in 0..12 {
        // Segment 11 (seq 10 001) is lost the first time it is sent.
        let first_11 = segs.iter().position(|s| s.header.seq == 10_001 && s.header.payload > 0);
        if let Some(i) = first_11 {
            if d.a.counters.retransmitted_packets < 11 {
                segs.remove(i);
            } else {
                resent.get_or_insert(d.now);
            }
        }
        let acks = d.deliver_to_b(&segs, &[]);
        segs = d.deliver_to_a(&acks, &[]);
        if segs.is_empty() {
            if d.a.next_deadline().is_none() {
                break;
            }
            d.a_timeout();
            segs = d.out_a();
        }
    }
    assert_eq!(d.b.counters.bytes_delivered, 40 * MSS);
    (d.a.counters.fast_retransmits, resent)
}

/// RFC 6582 §4.1: after a timeout, duplicate ACKs of exactly `recover` whose last cumulative ACK
/// advanced by at most 4*SMSS, with cwnd above one SMSS, indicate a lost segment: a fast
/// retransmit, where §3.2 step 2 alone waits for the timer.
#[test]
fn newreno_rfc6582_4_1_a_lost_segment_past_recover_is_fast_retransmitted() {
    for cc in [CcKind::Newreno, CcKind::Sack, CcKind::Tahoe] {
        let (fr, heuristic_at) =
            first_new_segment_lost_after_a_timeout(heuristic(cc, NewrenoCareful::CarefulAckHeuristic));
        assert_eq!(fr, 1, "{cc:?}");
        let careful = first_new_segment_lost_after_a_timeout(heuristic(cc, NewrenoCareful::Careful));
        if cc != CcKind::Tahoe {
            // RFC 6582 §3.2 step 2 alone: no fast retransmit; the timer resends 11, later.
            assert_eq!(careful.0, 0, "{cc:?}");
            let (careful_at, heuristic_at) = (careful.1.expect("resent by the timer"), heuristic_at.expect("resent"));
            assert!(careful_at > heuristic_at, "{cc:?}: {careful_at} ms vs {heuristic_at} ms");
        }
    }
}

/// Ten segments and all their ACKs lost: the timeout's go-back-N resends them, and the segment
/// at `lost_seq` is lost the first time it is sent after the timeout. Returns the sender's fast
/// retransmits and timeouts once all 40 segments are delivered.
fn one_loss_after_a_timeout(c: TcpConfig, lost_seq: u64) -> (u64, u64) {
    let c = TcpConfig { initial_window: InitialWindow::Segments(10), ..c };
    let mut d = Dialogue::established(c, c);
    d.a.send(40 * MSS);
    assert_eq!(d.out_a().len(), 10);
    d.a_timeout();
    let mut segs = d.out_a();
    let mut dropped = false;
    for _ in 0..30 {
        if !dropped {
            if let Some(i) = segs.iter().position(|s| s.header.seq == lost_seq && s.header.payload > 0) {
                segs.remove(i);
                dropped = true;
            }
        }
        let acks = d.deliver_to_b(&segs, &[]);
        segs = d.deliver_to_a(&acks, &[]);
        if segs.is_empty() {
            if d.a.next_deadline().is_none() {
                break;
            }
            d.a_timeout();
            segs = d.out_a();
        }
    }
    assert!(dropped);
    assert_eq!(d.b.counters.bytes_delivered, 40 * MSS);
    (d.a.counters.fast_retransmits, d.a.counters.rto_count)
}

/// RFC 6675 §5.1 (`sack_recovery_guard = "rfc6675"`): after an RTO a SACK sender MUST NOT start a
/// new recovery until HighACK >= RecoveryPoint. Segment 5 (below the timeout's recovery point,
/// segment 10) is lost again in the go-back-N: its duplicate ACKs pass RFC 6582 §4.1's heuristic
/// (cwnd above one SMSS, the last cumulative ACK one segment), so NewReno and, under the `rfc`
/// profile's default (`"newreno_careful"`), SACK fast-retransmit it; with `"rfc6675"` a SACK
/// sender waits for the timer, whatever `newreno_careful` says, and NewReno is unaffected.
/// Past the recovery point (segment 11) `"rfc6675"` lets a new recovery start.
#[test]
fn sack_rfc6675_5_1_no_new_recovery_after_a_timeout_before_the_recovery_point() {
    use crate::spec::SackRecoveryGuard;
    assert_eq!(cfg().sack_recovery_guard, SackRecoveryGuard::NewrenoCareful, "the rfc profile's rule");
    let rfc6675 = |c: TcpConfig| TcpConfig { sack_recovery_guard: SackRecoveryGuard::Rfc6675, ..c };
    let newreno = heuristic(CcKind::Newreno, NewrenoCareful::CarefulAckHeuristic);
    assert_eq!(one_loss_after_a_timeout(newreno, 4001), (1, 1), "NewReno: the heuristic's fast retransmit");
    assert_eq!(one_loss_after_a_timeout(rfc6675(newreno), 4001), (1, 1), "NewReno: no SACK, no change");
    let sack_cubic =
        TcpConfig { recovery: Recovery::Sack, ..heuristic(CcKind::Cubic, NewrenoCareful::CarefulAckHeuristic) };
    for c in [heuristic(CcKind::Sack, NewrenoCareful::CarefulAckHeuristic), sack_cubic] {
        assert_eq!(one_loss_after_a_timeout(c, 4001), (1, 1), "{:?}: the heuristic, as released", c.cc);
        for careful in [NewrenoCareful::CarefulAckHeuristic, NewrenoCareful::LessCareful, NewrenoCareful::Off] {
            let g = rfc6675(TcpConfig { newreno_careful: careful, ..c });
            assert_eq!(
                one_loss_after_a_timeout(g, 4001),
                (0, 2),
                "{:?} {careful:?}: the timer, no fast retransmit",
                c.cc
            );
        }
        // RFC 6675 §5.1: SND.UNA == recover is HighACK == RecoveryPoint: a new recovery may start.
        let careful = rfc6675(TcpConfig { newreno_careful: NewrenoCareful::Careful, ..c });
        assert_eq!(first_new_segment_lost_after_a_timeout(careful).0, 1, "{:?}: past the recovery point", c.cc);
    }
}

// ---------------------------------------------------------------------------
// CUBIC (RFC 9438) on NewReno or SACK recovery
// ---------------------------------------------------------------------------

fn cubic(recovery: Recovery, ecn: EcnPolicy) -> TcpConfig {
    TcpConfig { cc: CcKind::Cubic, recovery, ecn, initial_window: InitialWindow::Segments(10), ..cfg() }
}

/// Ten segments, the third lost: the sender's state after the duplicate ACKs of the others.
fn cubic_one_loss(c: TcpConfig) -> Dialogue {
    let mut d = Dialogue::established(c, c);
    d.a.send(1000 * MSS);
    let w = d.out_a();
    assert_eq!(w.len(), 10);
    let delivered: Vec<Segment> = w.iter().enumerate().filter(|&(i, _)| i != 2).map(|(_, s)| *s).collect();
    let acks = d.deliver_to_b(&delivered, &[]);
    d.deliver_to_a(&acks, &[]);
    assert_eq!(d.a.counters.fast_retransmits, 1);
    d
}

#[test]
fn cubic_rfc9438_4_6_loss_sets_ssthresh_to_beta_flight_and_newreno_inflates() {
    let d = cubic_one_loss(cubic(Recovery::Newreno, EcnPolicy::Off));
    // Two ACKs of new data open cwnd to 12 segments (slow start), which are all sent: FlightSize
    // 12 000 at the third duplicate ACK. RFC 9438 §4.6: ssthresh = 12 000 * 0.7 = 8400; RFC 6582 §3.2
    // step 2: cwnd = ssthresh + 3 SMSS, then + SMSS per further duplicate ACK (7 in all: 4 more).
    assert_eq!(d.a.ssthresh(), 8400);
    assert_eq!(d.a.cwnd(), 8400 + 3 * MSS + 4 * MSS);
    assert!(d.a.in_recovery());
}

#[test]
fn cubic_rfc9438_4_6_on_sack_recovery_cwnd_is_ssthresh() {
    let d = cubic_one_loss(cubic(Recovery::Sack, EcnPolicy::Off));
    assert!(d.a.sack_negotiated(), "tcp.recovery = \"sack\" offers SACK");
    // RFC 6675 §5 step 4.2: cwnd = ssthresh, no inflation; RFC 9438 §4.6: ssthresh = 0.7 * FlightSize.
    assert_eq!((d.a.ssthresh(), d.a.cwnd()), (8400, 8400));
}

#[test]
fn cubic_linux_profile_beta_is_717_over_1024() {
    let c = TcpConfig { cubic_beta: 717_000_000, cubic_c: 410_000_000, ..cubic(Recovery::Sack, EcnPolicy::Off) };
    let d = cubic_one_loss(c);
    // Linux tcp_cubic.c bictcp_recalc_ssthresh(): * 717 / 1024: 12 000 * 717 / 1024 = 8402.3.
    assert_eq!(d.a.ssthresh(), 8402);
}

#[test]
fn cubic_rfc9438_4_6_ecn_echo_reduces_cwnd_to_beta_once_per_window() {
    let c = cubic(Recovery::Newreno, EcnPolicy::Request);
    let mut d = Dialogue::established(c, c);
    d.a.send(1000 * MSS);
    let w = d.out_a();
    // The first segment CE-marked: every ACK echoes it (RFC 3168 §6.1.3) until CWR.
    let acks = d.deliver_to_b(&w, &[0]);
    assert!(acks.iter().all(|s| has(s, TcpFlags::ECE)));
    d.deliver_to_a(&acks, &[]);
    // RFC 9438 §4.6: ssthresh = cwnd * 0.7 = 7000, cwnd = ssthresh; once per window (RFC 3168 §6.1.2).
    assert_eq!(d.a.counters.ecn_reductions, 1);
    assert_eq!((d.a.ssthresh(), d.a.cwnd()), (7000, 7000));
}

/// RFC 9438 §4.8 with RFC 5681 §3.1 eq. 4 (`tcp.cubic_timeout = "flight_size"`, `rfc`): a timeout
/// inside a SACK recovery sets ssthresh = FlightSize * beta_cubic, FlightSize counting what the
/// receiver SACKed, so it can exceed the recovery's own ssthresh.
#[test]
fn cubic_rfc9438_4_8_timeout_in_sack_recovery_takes_beta_flight_size() {
    let mut d = cubic_one_loss(cubic(Recovery::Sack, EcnPolicy::Off));
    assert!(d.a.in_recovery());
    assert_eq!(d.a.ssthresh(), 8400);
    let flight = d.a.flight_size();
    assert!(flight * 7 / 10 > 8400, "FlightSize {flight} swollen by SACKed and new data");
    d.a_timeout();
    assert_eq!((d.a.ssthresh(), d.a.cwnd()), (flight * 7 / 10, MSS));
}

/// Linux `tcp_enter_loss()` (`tcp.cubic_timeout = "linux"`): a timeout while a fast recovery is
/// in progress (Recovery, `high_seq` after `snd_una`) keeps that recovery's ssthresh; cwnd is
/// one segment (RFC 5681 §3.1's loss window; Linux: packets in flight + 1, none after marking all lost).
#[test]
fn cubic_linux_timeout_in_recovery_keeps_ssthresh() {
    let c = TcpConfig { cubic_timeout: CubicTimeout::Linux, ..cubic(Recovery::Sack, EcnPolicy::Off) };
    let mut d = cubic_one_loss(c);
    assert!(d.a.in_recovery());
    d.a_timeout();
    assert_eq!((d.a.ssthresh(), d.a.cwnd()), (8400, MSS));
    // A repeated timeout holds it too.
    d.a_timeout();
    assert_eq!(d.a.ssthresh(), 8400);
}

/// Linux `tcp_enter_loss()` calls the algorithm's `ssthresh()`, which for CUBIC reads `snd_cwnd`
/// (`cubictcp_recalc_ssthresh()`), where RFC 9438 §4.6 / §4.8 take FlightSize: an
/// application-limited sender's first timeout outside recovery tells them apart.
#[test]
fn cubic_timeout_basis_is_cwnd_under_linux_and_flight_size_under_rfc() {
    // RFC: max(3000 * 0.7, 2 SMSS) = 2100; Linux: 10 000 * 0.7 = 7000.
    for (rule, expect) in [(CubicTimeout::FlightSize, 2100), (CubicTimeout::Linux, 7000)] {
        let c = TcpConfig { cubic_timeout: rule, ..cubic(Recovery::Sack, EcnPolicy::Off) };
        let mut d = Dialogue::established(c, c);
        // Three segments sent with a window of ten: FlightSize 3000, cwnd 10 000, none answered.
        d.a.send(3 * MSS);
        assert_eq!(d.out_a().len(), 3);
        assert_eq!(d.a.cwnd(), 10 * MSS);
        d.a_timeout();
        assert_eq!((d.a.ssthresh(), d.a.cwnd()), (expect, MSS), "{rule:?}");
    }
}

/// RFC 9438 §4.2: t does not include application-limited periods such as idle ones; Linux
/// `cubictcp_cwnd_event(CA_EVENT_TX_START)`: data sent with nothing in flight moves t_epoch later
/// by the time since the last data was sent.
#[test]
fn cubic_rfc9438_4_2_idle_time_is_not_part_of_t() {
    let c = TcpConfig { restart_after_idle: false, ..cubic(Recovery::Sack, EcnPolicy::Off) };
    let mut d = Dialogue::established(c, c);
    // One loss puts CUBIC in congestion avoidance; let the recovery finish.
    d.a.send(10 * MSS);
    let w = d.out_a();
    let delivered: Vec<Segment> = w.iter().enumerate().filter(|&(i, _)| i != 2).map(|(_, s)| *s).collect();
    let acks = d.deliver_to_b(&delivered, &[]);
    let resent = d.deliver_to_a(&acks, &[]);
    let acks = d.deliver_to_b(&resent, &[]);
    d.deliver_to_a(&acks, &[]);
    assert!(!d.a.in_recovery());
    // Two more segments, acknowledged in congestion avoidance: t_epoch is set.
    d.a.send(2 * MSS);
    let w = d.out_a();
    assert_eq!(w.len(), 2);
    let last_sent = t(d.now);
    let acks = d.deliver_to_b(&w, &[]);
    d.deliver_to_a(&acks, &[]);
    assert_eq!(d.a.flight_size(), 0, "all acknowledged");
    let epoch = d.a.cubic_epoch().expect("congestion avoidance is running");
    // Idle for 5 s, then new data.
    d.now += 5000;
    d.a.send(MSS);
    assert_eq!(d.out_a().len(), 1);
    let idle = t(d.now).saturating_since(last_sent);
    assert_eq!(d.a.cubic_epoch(), Some((epoch + idle).min(t(d.now))));
    assert!(d.a.cubic_epoch() > Some(epoch));
}

// ---------------------------------------------------------------------------
// DCTCP (RFC 8257)
// ---------------------------------------------------------------------------

pub(super) fn dctcp(delayed_ack: bool) -> TcpConfig {
    TcpConfig {
        cc: CcKind::Dctcp,
        ecn: EcnPolicy::Request,
        initial_window: InitialWindow::Segments(10),
        delayed_ack,
        ..cfg()
    }
}

fn eces(acks: &[Segment]) -> Vec<(u64, bool)> {
    acks.iter().map(|s| (s.header.ack, has(s, TcpFlags::ECE))).collect()
}

#[test]
fn dctcp_rfc8257_3_2_receiver_echoes_the_ce_state_ack_for_ack() {
    let mut d = Dialogue::established(dctcp(false), dctcp(false));
    d.a.send(1000 * MSS);
    let w = d.out_a();
    let acks = d.deliver_to_b(&w, &[3, 4, 7]);
    // RFC 8257 §3.2: ECE exactly on the ACKs of CE-marked segments, not latched until CWR.
    let expect: Vec<(u64, bool)> = (1..=10).map(|i| (i * MSS + 1, [4, 5, 8].contains(&i))).collect();
    assert_eq!(eces(&acks), expect);
}

#[test]
fn dctcp_rfc8257_3_2_delayed_ack_goes_out_with_the_old_state_when_the_ce_state_changes() {
    let mut d = Dialogue::established(dctcp(true), dctcp(true));
    d.a.send(1000 * MSS);
    let w = d.out_a();
    let acks = d.deliver_to_b(&w[..7], &[3]);
    // Segments 0-1: one ACK (every second segment). Segment 2 is held (delayed); segment 3 is CE:
    // the held ACK goes out with ECE = 0, then segment 3's at once with ECE = 1. Segment 4 is not
    // CE: the state changes back, an immediate ACK with ECE = 0 (nothing held). 5-6: one ACK.
    assert_eq!(eces(&acks), vec![(2001, false), (3001, false), (4001, true), (5001, false), (7001, false)]);
}

#[test]
fn dctcp_rfc8257_3_3_sender_cuts_by_alpha_over_two_once_per_window() {
    let mut d = Dialogue::established(dctcp(false), dctcp(false));
    assert_eq!(d.a.dctcp_alpha(), Some(1024), "RFC 8257 §3.3: alpha starts at 1");
    d.a.send(1000 * MSS);
    let w = d.out_a();
    let acks = d.deliver_to_b(&w, &[1, 3, 5, 7, 9]);
    d.deliver_to_a(&acks, &[]);
    // The first ACK ends the (empty) first observation window: alpha = 1024 - 1024/16 = 960, and
    // opens cwnd to 11 segments. The second carries ECE: cwnd = 11 000 - (11 000 * 960 >> 11) = 5844
    // (RFC 8257 §3.3 step 8, Linux dctcp_ssthresh()). One reduction for the window; no growth in it.
    assert_eq!(d.a.counters.ecn_reductions, 1);
    assert_eq!(d.a.cwnd(), 11_000 - ((11_000 * 960) >> 11));
    // The tenth ACK ends the next window: 5 of its 9 packets marked:
    // alpha = 960 - 960/16 + (5 << 6) / 9 = 900 + 35 (RFC 8257 §3.3 steps 5-6, g = 1/16).
    assert_eq!(d.a.dctcp_alpha(), Some(935));
}

#[test]
fn dctcp_rfc8257_3_5_ect_on_syn_synack_and_pure_acks_as_an_option() {
    for ect_control in [true, false] {
        let c = TcpConfig { dctcp_ect_control: ect_control, ..dctcp(false) };
        let mut d = Dialogue::new(c, c);
        d.a.connect(t(0));
        let syn = d.out_a();
        let synack = d.deliver_to_b(&syn, &[]);
        let ack = d.deliver_to_a(&synack, &[]);
        let want = if ect_control { Ecn::Ect0 } else { Ecn::NotEct };
        assert_eq!((syn[0].ecn, synack[0].ecn, ack[0].ecn), (want, want, want), "ect_control {ect_control}");
        d.deliver_to_b(&ack, &[]);
        d.a.send(2 * MSS);
        let data = d.out_a();
        let acks = d.deliver_to_b(&data, &[]);
        assert!(data.iter().all(|s| s.ecn == Ecn::Ect0));
        assert!(acks.iter().all(|s| s.ecn == want));
    }
}
