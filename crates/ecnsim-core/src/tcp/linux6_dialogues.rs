//! Packet dialogues for the behaviours of the `linux-6.x` profile, each an option of its own:
//! PRR in SACK recovery (RFC 6937, `recovery_rate`), Linux's quick-ACK mode (`quickack`) and
//! Linux's RTO (`rto_estimator = "linux"`).

use super::dialogues::{cfg, t, Dialogue, MSS};
use crate::packet::TcpFlags;
use crate::profile::Profile;
use crate::spec::{CcKind, EcnPolicy, Quickack, RecoveryRate, RtoEstimator, SlowStartIncrease};
use crate::tcp::{InitialWindow, RttEstimator, Segment, TcpConfig};
use crate::time::SimDuration;

/// RFC 6937 §3.1's sender: 20 segments in flight (cwnd = FlightSize = 20), SACK, Limited
/// Transmit, ssthresh = FlightSize / 2 = 10 at the loss.
fn prr_sender(rate: RecoveryRate) -> TcpConfig {
    TcpConfig {
        cc: CcKind::Sack,
        initial_window: InitialWindow::Segments(20),
        ecn: EcnPolicy::Off,
        limited_transmit: true,
        recovery_rate: rate,
        ..cfg()
    }
}

/// Segment 0 of a 20-segment flight is lost; the receiver ACKs (and SACKs) segments 1..19 one
/// by one. Returns, per ACK, the segments the sender sends on it.
fn one_loss_in_twenty(rate: RecoveryRate) -> Vec<Vec<Segment>> {
    let c = prr_sender(rate);
    // The receiver offers SACK too (RFC 2018 §2: both ends must).
    let mut d = Dialogue::established(c, TcpConfig { cc: CcKind::Sack, ecn: EcnPolicy::Off, ..cfg() });
    assert!(d.a.sack_negotiated());
    d.a.send(100 * MSS);
    let flight = d.out_a();
    assert_eq!(flight.len(), 20);
    let acks = d.deliver_to_b(&flight[1..], &[]);
    assert_eq!(acks.len(), 19, "the receiver ACKs every segment at once (no delayed ACKs)");
    d.now += 50;
    let now = t(d.now);
    acks.iter()
        .map(|ack| {
            d.a.on_segment(now, &ack.header, ack.ecn);
            std::iter::from_fn(|| d.a.poll_transmit(now)).collect()
        })
        .collect()
}

/// RFC 6937 §3.1, single loss, through a socket: Limited Transmit sends one new segment on each
/// of the first two duplicate ACKs, the third brings the fast retransmission, and then PRR sends
/// one new segment on every other ACK (ssthresh / RecoverFS = 10 / 20), where RFC 6675 §5 is
/// silent until pipe falls below cwnd (its "half RTT of silence").
#[test]
fn prr_spreads_the_reduction_over_the_round_trip() {
    let sent = one_loss_in_twenty(RecoveryRate::Rfc6937Ssrb);
    let per_ack: Vec<usize> = sent.iter().map(Vec::len).collect();
    // ACKs 1, 2: Limited Transmit; 3: the retransmission of segment 0 (sequence number 1).
    assert_eq!(per_ack[..3], [1, 1, 1], "{per_ack:?}");
    assert_eq!(sent[2][0].header.seq, 1, "the fast retransmission");
    // ACKs 4..=19: one new segment on ACKs 5, 7, ..., 17 (RFC 6937 §3: CEIL(prr_delivered *
    // ssthresh / RecoverFS) - prr_out), none once pipe is down to ssthresh.
    let on: Vec<usize> = (4..=19).filter(|&k| per_ack[k - 1] > 0).collect();
    assert_eq!(on, [5, 7, 9, 11, 13, 15, 17], "{per_ack:?}");
    assert!(per_ack.iter().all(|&n| n <= 1), "{per_ack:?}");
    assert!(sent[3..].iter().flatten().all(|s| s.header.seq > 20 * MSS), "only new data after the retransmission");

    // RFC 6675 §5 step (C) with cwnd = ssthresh = 10: nothing until pipe is below 10.
    let rfc6675 = one_loss_in_twenty(RecoveryRate::Rfc6675);
    let per_ack: Vec<usize> = rfc6675.iter().map(Vec::len).collect();
    let first_new = (4..=19).find(|&k| per_ack[k - 1] > 0).expect("sends before the round trip ends");
    assert!(first_new >= 11, "RFC 6675 is silent for half a window: {per_ack:?}");
    // Both send the same amount over the round trip (RFC 6937 §3.1: "the same total amount of data").
    let total = |v: &[Vec<Segment>]| v[3..].iter().map(Vec::len).sum::<usize>();
    assert_eq!(total(&sent), total(&rfc6675), "{per_ack:?}");
}

/// Linux's quick-ACK mode (tcp_event_data_recv() -> tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)):
/// a delayed-ACK receiver ACKs each of the first 16 data segments at once, then every second one.
#[test]
fn quickack_acks_the_first_sixteen_segments_at_once() {
    for (mode, acks) in [(Quickack::Linux, 16 + 2), (Quickack::Off, 10)] {
        let sender = TcpConfig { initial_window: InitialWindow::Segments(20), ecn: EcnPolicy::Off, ..cfg() };
        let receiver = TcpConfig { delayed_ack: true, quickack: mode, ecn: EcnPolicy::Off, ..cfg() };
        let mut d = Dialogue::established(sender, receiver);
        d.a.send(20 * MSS);
        let flight = d.out_a();
        assert_eq!(flight.len(), 20);
        let out = d.deliver_to_b(&flight, &[]);
        // Linux: quick = min(rcv_wnd / (2 * rcv_mss), 16) = min(65535 / 2000, 16) = 16.
        assert_eq!(out.len(), acks, "{mode:?}");
        if mode == Quickack::Linux {
            let acked: Vec<u64> = out.iter().map(|s| s.header.ack).collect();
            assert_eq!(acked[..16], (1..=16).map(|k| 1 + k * MSS).collect::<Vec<_>>()[..]);
            assert_eq!(acked[16..], [1 + 18 * MSS, 1 + 20 * MSS], "then every second segment");
        }
    }
}

/// Linux tcp_data_ecn_check(): a CE mark with no ECN-Echo pending enters quick-ACK mode for 2 ACKs
/// ("Better not delay acks, sender can have a very low cwnd"); tcp_ecn_accept_cwr(): data with CWR
/// is ACKed at once.
#[test]
fn quickack_two_acks_after_a_ce_mark_and_one_for_cwr() {
    let sender = TcpConfig { initial_window: InitialWindow::Segments(40), ..cfg() };
    let receiver = TcpConfig { delayed_ack: true, quickack: Quickack::Linux, ..cfg() };
    let mut d = Dialogue::established(sender, receiver);
    assert!(d.a.ecn_negotiated());
    d.a.send(40 * MSS);
    let flight = d.out_a();
    assert_eq!(flight.len(), 40);
    // The first 16 use up the initial quick-ACK count (and 17..=20 go two per ACK).
    let out = d.deliver_to_b(&flight[..20], &[]);
    assert_eq!(out.len(), 18);
    // Segment 21 is CE: it and the next are ACKed at once (2 quick ACKs), then every second one.
    d.now -= 50;
    let out = d.deliver_to_b(&flight[20..26], &[0]);
    let acked: Vec<u64> = out.iter().map(|s| s.header.ack).collect();
    assert_eq!(acked, [1 + 21 * MSS, 1 + 22 * MSS, 1 + 24 * MSS, 1 + 26 * MSS]);
    assert!(out.iter().all(|s| s.header.flags.contains(TcpFlags::ECE)));

    // With the mode off, the CE mark changes nothing in the ACK timing.
    let receiver = TcpConfig { delayed_ack: true, quickack: Quickack::Off, ..cfg() };
    let mut d = Dialogue::established(TcpConfig { initial_window: InitialWindow::Segments(40), ..cfg() }, receiver);
    d.a.send(40 * MSS);
    let flight = d.out_a();
    d.deliver_to_b(&flight[..20], &[]);
    d.now -= 50;
    let out = d.deliver_to_b(&flight[20..26], &[0]);
    assert_eq!(out.len(), 3);

    // A data segment carrying CWR is ACKed at once, even with no quick ACKs left.
    let receiver = TcpConfig { delayed_ack: true, quickack: Quickack::Linux, ..cfg() };
    let mut d = Dialogue::established(TcpConfig { initial_window: InitialWindow::Segments(40), ..cfg() }, receiver);
    d.a.send(40 * MSS);
    let mut flight = d.out_a();
    d.deliver_to_b(&flight[..20], &[]);
    d.now -= 50;
    flight[20].header.flags.insert(TcpFlags::CWR);
    let out = d.deliver_to_b(&flight[20..23], &[]);
    let acked: Vec<u64> = out.iter().map(|s| s.header.ack).collect();
    assert_eq!(acked, [1 + 21 * MSS, 1 + 23 * MSS], "CWR at once, then every second segment");
}

/// Linux tcp_send_dupack(): duplicate data means a delayed ACK was lost; 16 quick ACKs follow.
#[test]
fn quickack_sixteen_more_after_duplicate_data() {
    let sender = TcpConfig { initial_window: InitialWindow::Segments(60), ecn: EcnPolicy::Off, ..cfg() };
    let receiver = TcpConfig { delayed_ack: true, quickack: Quickack::Linux, ecn: EcnPolicy::Off, ..cfg() };
    let mut d = Dialogue::established(sender, receiver);
    d.a.send(60 * MSS);
    let flight = d.out_a();
    d.deliver_to_b(&flight[..20], &[]);
    d.now -= 50;
    // A copy of segment 1 arrives again: ACKed at once, and quick-ACK mode restarts.
    let out = d.deliver_to_b(&flight[..1], &[]);
    assert_eq!(out.len(), 1);
    d.now -= 50;
    let out = d.deliver_to_b(&flight[20..40], &[]);
    // The duplicate's ACK used one of the 16: 15 at once, then every second of the last 5.
    assert_eq!(out.len(), 15 + 2, "{:?}", out.iter().map(|s| s.header.ack).collect::<Vec<_>>());
}

/// Linux tcp_rtt_estimator() / __tcp_set_rto(): RTO = SRTT + max(4 RTTVAR, tcp_rto_min), where
/// RFC 6298 §2.4 takes max(SRTT + 4 RTTVAR, min_rto).
#[test]
fn linux_rto_adds_the_minimum_to_srtt() {
    let base = Profile::from_name("linux-6.x").unwrap().tcp();
    assert_eq!(base.rto_estimator, RtoEstimator::Linux);
    for (estimator, want_ms) in [(RtoEstimator::Linux, 300), (RtoEstimator::Rfc6298, 200)] {
        let c = TcpConfig { rto_estimator: estimator, ..base };
        let mut rtt = RttEstimator::for_config(&c, SimDuration::ZERO);
        // Steady 100 ms samples: SRTT 100 ms, RTTVAR decays towards 0.
        for k in 0..40u64 {
            rtt.on_sample(t(1000 * k), t(1000 * k + 100));
        }
        let rto = rtt.rto().as_nanos() / 1_000_000;
        assert!(rto.abs_diff(want_ms) <= 1, "{estimator:?}: {rto} ms");
    }
    // A large RTTVAR is not doubled up: SRTT 100 ms, RTTVAR 50 ms -> 100 + max(200, 200) = 300 ms.
    let c = TcpConfig { rto_estimator: RtoEstimator::Linux, ..base };
    let mut rtt = RttEstimator::for_config(&c, SimDuration::ZERO);
    rtt.on_sample(t(0), t(100));
    assert_eq!(rtt.rto(), SimDuration::from_millis(300));
}

/// The `linux-6.x` profile sets each behaviour; no other profile does.
#[test]
fn only_linux6_sets_the_new_options() {
    for &name in Profile::NAMES {
        let c = Profile::from_name(name).unwrap().tcp();
        let modern = name == "linux-6.x";
        assert_eq!(c.recovery_rate == RecoveryRate::Rfc6937Ssrb, modern, "{name}");
        assert_eq!(c.quickack == Quickack::Linux, modern, "{name}");
        assert_eq!(c.rto_estimator == RtoEstimator::Linux, modern, "{name}");
    }
    let c = Profile::Linux6.tcp();
    assert_eq!((c.cc, c.initial_window, c.mss, c.header_bytes), (CcKind::Cubic, InitialWindow::Segments(10), 1448, 52));
    assert_eq!((c.min_rto, c.initial_rto), (SimDuration::from_millis(200), SimDuration::from_secs(1)));
    assert_eq!(c.rcv_window, 16 << 20);
    assert!(c.offers_sack() && c.delayed_ack);
}

/// Slow start with delayed ACKs (every ACK covers two segments), under every profile: RFC 5681
/// §3.1 eq. (2) adds min(N, SMSS), one segment per ACK (1.5x per round trip); Linux
/// tcp_slow_start() adds N, two (2x per round trip): `linux-6.x` only, `linux` being frozen
/// (docs/profiles.md). The receiver's quick-ACK mode is off so that every ACK is a delayed one.
#[test]
fn slow_start_per_delayed_ack_under_each_profile() {
    for &name in Profile::NAMES {
        let p = Profile::from_name(name).expect("a profile");
        let c = TcpConfig {
            delayed_ack: true,
            quickack: Quickack::Off,
            handshake: true,
            initial_window: InitialWindow::Segments(10),
            max_cwnd: 1_000_000,
            rcv_window: 1 << 30,
            ecn: EcnPolicy::Off,
            ..p.tcp()
        };
        let mss = u64::from(c.mss);
        let mut d = Dialogue::established(c, c);
        d.a.send(1000 * mss);
        let flight = d.out_a();
        assert_eq!(flight.len(), 10, "{name}");
        let acks = d.deliver_to_b(&flight, &[]);
        assert_eq!(acks.len(), 5, "{name}: one ACK per two segments");
        d.now += 50;
        let now = t(d.now);
        let per_ack = if name == "linux-6.x" { 2 } else { 1 };
        for (k, ack) in acks.iter().enumerate() {
            let before = d.a.cwnd();
            d.a.on_segment(now, &ack.header, ack.ecn);
            assert_eq!(d.a.cwnd() - before, per_ack * mss, "{name}: ACK {k}");
        }
        assert_eq!(d.a.cwnd(), (10 + 5 * per_ack) * mss, "{name}");
        let linux = c.slow_start_increase == SlowStartIncrease::Linux;
        assert_eq!(linux, name == "linux-6.x", "{name}");
    }
}

/// Linux's slow start counts what an ACK newly delivers (tcp_cong_control(): acked_sacked), not
/// data the receiver held from before. Ten segments, the first lost and every ACK too: after the
/// timeout the resent first segment brings an ACK of all ten; the nine the receiver held were
/// delivered before (Linux had SACKed them), so cwnd grows by one segment, from 1 to 2, as under
/// RFC 5681, not to ssthresh at once (a burst of ssthresh segments into the queue that just
/// overflowed).
#[test]
fn linux_slow_start_counts_only_newly_delivered_data_after_a_timeout() {
    for ss in [SlowStartIncrease::Rfc5681, SlowStartIncrease::Linux] {
        let c = TcpConfig {
            initial_window: InitialWindow::Segments(10),
            ecn: EcnPolicy::Off,
            slow_start_increase: ss,
            ..cfg()
        };
        let mut d = Dialogue::established(c, c);
        d.a.send(40 * MSS);
        let flight = d.out_a();
        assert_eq!(flight.len(), 10);
        let _ = d.deliver_to_b(&flight[1..], &[]);
        let deadline = d.a.next_deadline().expect("the timer");
        d.now = deadline.as_nanos() / 1_000_000;
        d.a.on_timer(deadline);
        let resent = d.out_a();
        assert_eq!(resent.len(), 1, "{ss:?}");
        assert_eq!(d.a.cwnd(), MSS, "{ss:?}");
        let acks = d.deliver_to_b(&resent, &[]);
        assert_eq!(acks.last().map(|a| a.header.ack), Some(1 + 10 * MSS), "{ss:?}");
        let _ = d.deliver_to_a(&acks, &[]);
        assert_eq!(d.a.cwnd(), 2 * MSS, "{ss:?}: one segment newly delivered");
    }
}
