//! HyStart (Linux `tcp_cubic.c`) and HyStart++ (RFC 9406) through a socket: a sender and a
//! receiver over a path with one bottleneck whose queue never drops, so slow start can end only
//! by the exit rules. The path measures every segment's RTT itself (send time to ACK arrival), an
//! oracle independent of the socket's send-time record.

use super::dialogues::{cfg, MSS};
use crate::packet::Ecn;
use crate::spec::{CcKind, EcnPolicy, SlowStartExit};
use crate::tcp::hystart::INITIAL_SSTHRESH;
use crate::tcp::{InitialWindow, Segment, TcpConfig, TcpSocket};
use crate::time::SimTime;

/// One-way propagation delay, ns.
const OWD: u64 = 50_000_000;
/// Bottleneck serialization time of a data segment (1000 B + 40 B headers at 10 Mb/s), ns.
const TX: u64 = 832_000;
/// Bandwidth-delay product in segments: 100 ms / 0.832 ms.
const BDP: u64 = 120;

/// What the sender saw on each ACK.
#[derive(Clone, Copy, Debug)]
struct AckSeen {
    now: u64,
    ack: u64,
    /// SND.NXT when the ACK arrived (the highest sequence number sent: nothing is lost).
    snd_nxt: u64,
    /// The path's RTT of the newest segment this ACK acknowledges in full (none: no segment, or
    /// a retransmitted one).
    rtt: Option<u64>,
    cwnd: u64,
    ssthresh: u64,
    /// HyStart++ is in CSS after the ACK.
    css: bool,
    /// Linux HyStart has found its exit after the ACK.
    found: bool,
}

/// Run `sender` over the path for `until` ns, the application writing without end.
fn run(sender: TcpConfig, until: u64) -> (TcpSocket, Vec<AckSeen>) {
    let receiver = TcpConfig { ecn: EcnPolicy::Off, delayed_ack: false, rcv_window: 1 << 30, ..cfg() };
    let mut a = TcpSocket::new(sender);
    let mut b = TcpSocket::new(receiver);
    b.listen();
    a.connect(SimTime::ZERO);
    a.send(u64::MAX / 4);
    // In-flight segments: (arrival time, order, to the receiver?, segment).
    let mut wire: Vec<(u64, u64, bool, Segment)> = Vec::new();
    let (mut order, mut link_free, mut now) = (0u64, 0u64, 0u64);
    let mut sent_at: Vec<(u64, u64, bool)> = Vec::new(); // (end, time, retransmitted)
    let mut seen = Vec::new();
    loop {
        let t = SimTime::from_nanos(now);
        while let Some(s) = a.poll_transmit(t) {
            let len = u64::from(s.header.payload);
            if len > 0 {
                let end = s.header.seq + len;
                match sent_at.iter_mut().find(|e| e.0 == end) {
                    Some(e) => e.2 = true,
                    None => sent_at.push((end, now, false)),
                }
            }
            // The bottleneck: FIFO at 10 Mb/s, no limit.
            link_free = link_free.max(now) + if len > 0 { TX } else { 32_000 };
            wire.push((link_free + OWD, order, true, s));
            order += 1;
        }
        while let Some(s) = b.poll_transmit(t) {
            wire.push((now + OWD, order, false, s));
            order += 1;
        }
        let next_wire = wire.iter().map(|w| (w.0, w.1)).min();
        let next_timer = [a.next_deadline(), b.next_deadline()].into_iter().flatten().map(SimTime::as_nanos).min();
        let next = match (next_wire, next_timer) {
            (Some((w, _)), Some(d)) => w.min(d),
            (Some((w, _)), None) => w,
            (None, Some(d)) => d,
            (None, None) => break,
        };
        if next > until {
            break;
        }
        now = next;
        let t = SimTime::from_nanos(now);
        if let Some(i) = wire.iter().position(|w| (w.0, w.1) == next_wire.unwrap_or((u64::MAX, 0))) {
            if wire[i].0 == now {
                let (_, _, to_b, s) = wire.remove(i);
                if to_b {
                    b.on_segment(t, &s.header, Ecn::NotEct);
                } else {
                    let before = a.snd_una();
                    let snd_nxt = sent_at.last().map_or(1, |e| e.0);
                    a.on_segment(t, &s.header, Ecn::NotEct);
                    let ack = s.header.ack;
                    let newest = sent_at.iter().rfind(|e| e.0 <= ack && e.0 > before).copied();
                    let any_rxt = sent_at.iter().any(|e| e.0 <= ack && e.0 > before && e.2);
                    let rtt = newest.filter(|_| !any_rxt).map(|e| now - e.1);
                    let (css, found) = a.ss_exit().map_or((false, false), |s| (s.state().1, s.state().0));
                    seen.push(AckSeen { now, ack, snd_nxt, rtt, cwnd: a.cwnd(), ssthresh: a.ssthresh(), css, found });
                    continue;
                }
            }
        }
        a.on_timer(t);
        b.on_timer(t);
    }
    (a, seen)
}

fn sender(cc: CcKind, exit: SlowStartExit) -> TcpConfig {
    TcpConfig {
        cc,
        slow_start_exit: exit,
        initial_window: InitialWindow::Segments(10),
        ecn: EcnPolicy::Off,
        rcv_window: 1 << 30,
        ..cfg()
    }
}

/// RFC 9406 §4.2 through a socket, against the path's own RTTs: the first round (windowEnd =
/// SND.NXT when it began) whose minimum over >= 8 samples reaches the previous round's minimum
/// plus clamp(min / 8, 4 ms, 16 ms) enters CSS at its 8th-or-later sample; CSS ends CSS_ROUNDS = 5
/// round ends later with ssthresh = cwnd; nothing is lost. Without HyStart++ the same path
/// keeps slow start going.
#[test]
fn rfc9406_4_2_rtt_rise_enters_css_and_five_rounds_end_it() {
    let (a, seen) = run(sender(CcKind::Newreno, SlowStartExit::HystartPp), 3_000_000_000);
    assert_eq!(a.counters.retransmitted_packets, 0);
    // The oracle: rounds (windowEnd = SND.NXT when the round began, initially the first byte)
    // and their minima, from the path's RTTs.
    let mut window_end = 1u64;
    let (mut last_min, mut cur_min, mut count) = (u64::MAX, u64::MAX, 0u32);
    let mut expect_css = None;
    for (k, s) in seen.iter().enumerate() {
        if s.ack > window_end {
            last_min = cur_min;
            cur_min = u64::MAX;
            count = 0;
            window_end = s.snd_nxt;
        }
        if let Some(r) = s.rtt {
            cur_min = cur_min.min(r);
            count += 1;
        }
        if count >= 8 && last_min != u64::MAX && cur_min != u64::MAX {
            let thresh = (last_min / 8).clamp(4_000_000, 16_000_000);
            if cur_min >= last_min + thresh {
                expect_css = Some(k);
                break;
            }
        }
    }
    let entered = seen.iter().position(|s| s.css).expect("HyStart++ enters CSS");
    assert_eq!(Some(entered), expect_css, "CSS entry at the ACK the rule names");
    assert_eq!(seen[entered].ssthresh, INITIAL_SSTHRESH, "CSS is still slow start");
    let cwnd_entry = seen[entered].cwnd / MSS;
    assert!((BDP..=3 * BDP).contains(&cwnd_entry), "cwnd {cwnd_entry} segments at CSS entry");
    // CSS_ROUNDS: ssthresh is set at the 5th round end after entry, to cwnd.
    let exit = seen.iter().position(|s| s.ssthresh != INITIAL_SSTHRESH).expect("CSS ends");
    assert_eq!(seen[exit].ssthresh, seen[exit - 1].cwnd, "ssthresh = cwnd");
    assert!(seen[entered..exit].iter().all(|s| s.css), "the RTT stays up: no return to slow start");
    // Growth in CSS is a quarter of slow start's: about 1.25x per round over 5 rounds.
    let growth = seen[exit - 1].cwnd as f64 / seen[entered].cwnd as f64;
    assert!(growth > 1.5 && growth < 1.25f64.powi(6), "CSS growth {growth}");
    // Without HyStart++ the flow is still in slow start at the same time.
    let (_, plain) = run(sender(CcKind::Newreno, SlowStartExit::None), seen[exit].now);
    assert!(plain.iter().all(|s| s.ssthresh == INITIAL_SSTHRESH));
    assert!(plain.last().expect("ACKs").cwnd > seen[exit].cwnd);
}

/// Linux HyStart through a socket (CUBIC, `linux-6.x`'s default): on this path the ACKs of a
/// round arrive back to back at the bottleneck's spacing (0.83 ms <= hystart_ack_delta_us 2 ms),
/// so the ack train spans delay_min / 2 = 50 ms once about 60 ACKs of one round have arrived
/// (Linux hystart_update() HYSTART_ACK_TRAIN): slow start ends with ssthresh = cwnd near the
/// bandwidth-delay product, before any loss.
#[test]
fn linux_hystart_ack_train_ends_slow_start_near_the_bdp() {
    let (a, seen) = run(sender(CcKind::Cubic, SlowStartExit::Hystart), 3_000_000_000);
    assert_eq!(a.counters.retransmitted_packets, 0);
    let exit = seen.iter().position(|s| s.found).expect("HyStart finds an exit");
    // Linux: pkts_acked (HyStart) runs before cong_avoid: ssthresh is the cwnd this ACK found, and
    // the same ACK then grows it as congestion avoidance does.
    assert_eq!(seen[exit].ssthresh, seen[exit - 1].cwnd, "ssthresh = cwnd");
    assert!(seen[exit].cwnd - seen[exit].ssthresh < MSS);
    let cwnd = seen[exit].ssthresh / MSS;
    assert!((BDP / 2..=2 * BDP).contains(&cwnd), "exit at {cwnd} segments, BDP {BDP}");
    // The exit ACK is more than delay_min / 2 after the first ACK of its round, every ACK between
    // them at most 2 ms apart.
    let mut start = exit;
    while start > 0 && seen[start].now - seen[start - 1].now <= 2_000_000 {
        start -= 1;
    }
    assert!(seen[exit].now - seen[start].now > 50_000_000, "train {} ns", seen[exit].now - seen[start].now);
    // Congestion avoidance from there: the window grows slowly, never back to slow start.
    assert!(seen[exit..].iter().all(|s| s.cwnd >= s.ssthresh));
}

/// A flow without a slow-start exit allocates nothing for it and records no send times.
#[test]
fn no_state_without_a_slow_start_exit() {
    let a = TcpSocket::new(sender(CcKind::Newreno, SlowStartExit::None));
    assert!(a.ss_exit().is_none());
    let a = TcpSocket::new(sender(CcKind::Cubic, SlowStartExit::None));
    assert!(a.ss_exit().is_none());
    let (a, _) = run(sender(CcKind::Newreno, SlowStartExit::HystartPp), 1_000_000_000);
    assert!(a.ss_exit().is_some_and(|s| s.times().len() > 0), "outstanding segments recorded");
}
