//! CoDel: Controlled Delay active queue management.
//!
//! Read first:
//! - RFC 8289 (Nichols, Jacobson, McGregor, Iyengar), §4 (the algorithm),
//!   §5 (the pseudocode implemented here line by line: `dodequeue`,
//!   `dequeue`, `control_law`).
//! - Linux `include/net/codel_impl.h` (`codel_dequeue`): ECN marking in place
//!   of drops and `ce_threshold`.
//! - ns-3 `codel-queue-disc.cc` (`TARGET_EXCEEDED_DROP`, `TARGET_EXCEEDED_MARK`,
//!   `CE_THRESHOLD_EXCEEDED_MARK`).
//!
//! CoDel acts at dequeue: it tracks whether the sojourn time of departing
//! packets has stayed at or above `target` for at least `interval`; if so it
//! enters the dropping state and drops (or, with ECN, marks) at times spaced
//! by the control law `interval / sqrt(count)`.

use super::QueuedPacket;
use super::{is_markable, AqmState, DropReason, Fifo, Limit, MarkReason, QdiscCx, QueueDisc};
use crate::time::{SimDuration, SimTime};

/// Resolved CoDel parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodelConfig {
    /// Buffer limit.
    pub limit: Limit,
    /// Acceptable standing queue delay (RFC 8289 §4.3: TARGET, 5 ms).
    pub target: SimDuration,
    /// Sliding-minimum window (RFC 8289 §4.2: INTERVAL, 100 ms).
    pub interval: SimDuration,
    /// A queue holding at most this many bytes is never "above target"
    /// (RFC 8289 §5: MAXPACKET, one MTU).
    pub max_packet: u64,
    /// Mark ECT packets instead of dropping them (RFC 8289 §5.? / Linux `ecn`).
    pub ecn: bool,
    /// Mark every ECT packet whose sojourn exceeds this (Linux and ns-3
    /// `ce_threshold`); `None` = off.
    pub ce_threshold: Option<SimDuration>,
}

/// What the control law reads of its parameters (shared with FQ-CoDel's per-flow instances).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CodelLaw {
    /// RFC 8289 TARGET.
    pub(crate) target: SimDuration,
    /// RFC 8289 INTERVAL.
    pub(crate) interval: SimDuration,
    /// Mark ECT packets instead of dropping them.
    pub(crate) ecn: bool,
}

/// The packets a CoDel state machine dequeues from: one FIFO, and the MAXPACKET rule
/// (RFC 8289 §5: a queue of at most one MTU is never "above target"), which FQ-CoDel
/// reads over the whole queue (Linux) or the flow's own (ns-3).
pub(crate) trait CodelSource {
    /// Remove the head packet.
    fn pop(&mut self) -> Option<QueuedPacket>;
    /// True if what is left after a pop is too little to be above target.
    fn at_most_one_mtu(&self) -> bool;
}

/// The CoDel state machine of one queue (RFC 8289 §5's variables) and its dequeue:
/// [`Codel`] runs one over its FIFO, FQ-CoDel one per flow queue.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CodelVars {
    /// RFC 8289 `first_above_time` (None = 0).
    first_above_time: Option<SimTime>,
    /// RFC 8289 `drop_next`.
    drop_next: SimTime,
    /// RFC 8289 `count`.
    pub(crate) count: u32,
    /// RFC 8289 `lastcount`.
    lastcount: u32,
    /// RFC 8289 `dropping`.
    dropping: bool,
}

impl CodelVars {
    /// RFC 8289 §5: `control_law(t, count) = t + interval / sqrt(count)`.
    fn control_law(law: CodelLaw, t: SimTime, count: u32) -> SimTime {
        // DEVIATION(Linux): Linux approximates 1/sqrt(count) by Newton steps in fixed point; exact here, floored to ns.
        #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let step = (law.interval.as_nanos() as f64 / f64::from(count.max(1)).sqrt()) as u64;
        t + SimDuration::from_nanos(step)
    }

    /// RFC 8289 §5 `dodequeue`: the head packet and whether it is ok to drop.
    fn dodequeue(&mut self, law: CodelLaw, src: &mut impl CodelSource, now: SimTime) -> (Option<QueuedPacket>, bool) {
        let Some(p) = src.pop() else {
            // RFC 8289 §5: queue is empty - we can't be above TARGET.
            self.first_above_time = None;
            return (None, false);
        };
        let sojourn = now.saturating_since(p.enqueued_at);
        let mut ok_to_drop = false;
        // RFC 8289 §5: if (sojourn_time < TARGET || bytes() <= MAXPACKET) first_above_time = 0.
        if sojourn < law.target || src.at_most_one_mtu() {
            self.first_above_time = None;
        } else {
            match self.first_above_time {
                // RFC 8289 §5: just went above from below: first_above_time = now + INTERVAL.
                None => self.first_above_time = Some(now + law.interval),
                // RFC 8289 §5: else if (now >= first_above_time) ok_to_drop = true.
                Some(t) if now >= t => ok_to_drop = true,
                Some(_) => {}
            }
        }
        (Some(p), ok_to_drop)
    }

    /// Drop `p`, or mark it if ECN allows; returns the packet if it was marked (and so still leaves).
    fn signal(law: CodelLaw, mut p: QueuedPacket, cx: &mut QdiscCx<'_>) -> Option<QueuedPacket> {
        // Linux codel_dequeue: if (params->ecn && INET_ECN_set_ce(skb)) mark instead of drop.
        if law.ecn && is_markable(p.ecn) {
            cx.mark(&mut p, MarkReason::Early);
            Some(p)
        } else {
            cx.drop_packet(p, DropReason::Early);
            None
        }
    }

    /// RFC 8289 §5 `dequeue`: the next packet of `src` to send, dropping (or marking) on the way.
    pub(crate) fn dequeue(
        &mut self,
        law: CodelLaw,
        src: &mut impl CodelSource,
        cx: &mut QdiscCx<'_>,
    ) -> Option<QueuedPacket> {
        let now = cx.now;
        let (mut p, mut ok_to_drop) = self.dodequeue(law, src, now);
        if self.dropping {
            if !ok_to_drop {
                // RFC 8289 §5: sojourn time below TARGET - leave drop state.
                self.dropping = false;
            }
            // RFC 8289 §5: while (now >= drop_next && dropping) { drop(r.p); ++count; r = dodequeue(now); ... }
            while self.dropping && now >= self.drop_next {
                let pkt = p.take().expect("ok_to_drop implies a packet");
                self.count += 1;
                if let Some(marked) = Self::signal(law, pkt, cx) {
                    // Linux codel_dequeue: a marked packet is sent; drop_next advances by the control law.
                    self.drop_next = Self::control_law(law, self.drop_next, self.count);
                    p = Some(marked);
                    break;
                }
                (p, ok_to_drop) = self.dodequeue(law, src, now);
                if ok_to_drop {
                    // RFC 8289 §5: drop_next = control_law(drop_next, count).
                    self.drop_next = Self::control_law(law, self.drop_next, self.count);
                } else {
                    self.dropping = false;
                }
            }
        } else if ok_to_drop {
            // RFC 8289 §5: not in drop state, but sojourn above TARGET for INTERVAL: drop and enter drop state.
            let pkt = p.take().expect("ok_to_drop implies a packet");
            p = Self::signal(law, pkt, cx);
            if p.is_none() {
                (p, _) = self.dodequeue(law, src, now);
            }
            self.dropping = true;
            // RFC 8289 §5: delta = count - lastcount; count = 1;
            // if ((delta > 1) && (now - drop_next < 16 * INTERVAL)) count = delta.
            let delta = self.count.wrapping_sub(self.lastcount);
            let since_drop_next = i128::from(now.as_nanos()) - i128::from(self.drop_next.as_nanos());
            self.count =
                if delta > 1 && delta < u32::MAX / 2 && since_drop_next < 16 * i128::from(law.interval.as_nanos()) {
                    delta
                } else {
                    1
                };
            // RFC 8289 §5: drop_next = control_law(now, count); lastcount = count.
            self.drop_next = Self::control_law(law, now, self.count);
            self.lastcount = self.count;
        }
        p
    }
}

/// [`Codel`]'s FIFO as the state machine sees it: RFC 8289's `bytes()` is its own.
struct FifoSource<'a> {
    fifo: &'a mut Fifo,
    max_packet: u64,
}

impl CodelSource for FifoSource<'_> {
    fn pop(&mut self) -> Option<QueuedPacket> {
        self.fifo.pop_front()
    }
    fn at_most_one_mtu(&self) -> bool {
        self.fifo.bytes() <= self.max_packet
    }
}

/// Linux `codel_dequeue`, ns-3 `CoDelQueueDisc::DoDequeue`: CE-mark an ECT packet whose sojourn exceeds `ce`.
pub(crate) fn ce_threshold_mark(pkt: &mut QueuedPacket, ce: SimDuration, cx: &mut QdiscCx<'_>) {
    // Linux codel_dequeue: if (skb && ldelay > ce_threshold) INET_ECN_set_ce.
    if cx.now.saturating_since(pkt.enqueued_at) > ce && pkt.ecn.is_ect() {
        cx.mark(pkt, MarkReason::CeThreshold);
    }
}

/// A CoDel queue.
#[derive(Debug)]
pub struct Codel {
    cfg: CodelConfig,
    fifo: Fifo,
    vars: CodelVars,
}

impl Codel {
    /// An empty CoDel queue.
    #[must_use]
    pub fn new(cfg: CodelConfig) -> Self {
        Codel { cfg, fifo: Fifo::new(cfg.limit), vars: CodelVars::default() }
    }

    /// True while in the dropping state.
    #[must_use]
    pub fn is_dropping(&self) -> bool {
        self.vars.dropping
    }

    /// RFC 8289 `count`.
    #[must_use]
    pub fn count(&self) -> u32 {
        self.vars.count
    }

    fn law(&self) -> CodelLaw {
        CodelLaw { target: self.cfg.target, interval: self.cfg.interval, ecn: self.cfg.ecn }
    }
}

impl QueueDisc for Codel {
    fn enqueue(&mut self, pkt: QueuedPacket, cx: &mut QdiscCx<'_>) {
        if self.fifo.fits(self.cfg.limit, &pkt) {
            self.fifo.push_back(pkt);
        } else {
            cx.drop_packet(pkt, DropReason::Overflow);
        }
    }

    fn dequeue(&mut self, cx: &mut QdiscCx<'_>) -> Option<QueuedPacket> {
        let law = self.law();
        let mut src = FifoSource { fifo: &mut self.fifo, max_packet: self.cfg.max_packet };
        let mut p = self.vars.dequeue(law, &mut src, cx);
        if let (Some(pkt), Some(ce)) = (p.as_mut(), self.cfg.ce_threshold) {
            ce_threshold_mark(pkt, ce, cx);
        }
        p
    }

    fn len_packets(&self) -> u64 {
        self.fifo.len() as u64
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }
    fn give_back_memory(&mut self) {
        self.fifo.give_back_memory();
    }

    fn aqm_state(&mut self, _now: SimTime) -> AqmState {
        AqmState::NONE
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{pkt, random_workout, Driver};
    use super::super::AnyQdisc;
    use super::*;
    use crate::packet::Ecn;

    fn cfg(ecn: bool) -> CodelConfig {
        CodelConfig {
            limit: Limit::Packets(1000),
            target: SimDuration::from_millis(5),
            interval: SimDuration::from_millis(100),
            max_packet: 1500,
            ecn,
            ce_threshold: None,
        }
    }

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    /// A standing queue: 50 packets enqueued at 0, then one arrival per dequeue so the
    /// queue never drains; dequeues every `gap_ms` from `start_ms`. Returns, per dequeue,
    /// (time ms, packets dropped at that dequeue, marks).
    fn standing(ecn: bool, gap_ms: u64, start_ms: u64, n: u64) -> (Driver<Codel>, Vec<(u64, usize, usize)>) {
        let mut d = Driver::new(Codel::new(cfg(ecn)), 10_000_000, 1);
        for i in 0..50 {
            d.enqueue(pkt(i, 1000, if ecn { Ecn::Ect0 } else { Ecn::NotEct }), SimTime::ZERO);
        }
        let mut log = Vec::new();
        for k in 0..n {
            let now = ms(start_ms + k * gap_ms);
            d.enqueue(pkt(1000 + k, 1000, if ecn { Ecn::Ect0 } else { Ecn::NotEct }), now);
            d.dequeue(now);
            log.push((start_ms + k * gap_ms, d.out.drops.len(), d.out.marks.len()));
        }
        (d, log)
    }

    #[test]
    fn no_drop_until_sojourn_has_been_above_target_for_an_interval() {
        // First dequeue at 10 ms: sojourn 10 ms >= 5 ms: first_above_time = 110 ms.
        let (_, log) = standing(false, 1, 10, 200);
        let first = log.iter().find(|e| e.1 > 0).unwrap();
        assert_eq!(first.0, 110, "first drop at first_above_time: {log:?}");
        assert_eq!(first.1, 1);
    }

    #[test]
    fn drops_follow_the_control_law() {
        // In the dropping state the k-th drop after entering is due interval / sqrt(k) after the previous.
        let (d, log) = standing(false, 1, 10, 400);
        let drops: Vec<u64> = log.iter().filter(|e| e.1 > 0).map(|e| e.0).collect();
        assert!(d.q.is_dropping());
        // Entering at 110 ms (count = 1): next due 110 + 100 = 210, then + 100/sqrt(2) = 280.71 -> 281,
        // then + 100/sqrt(3) = 338.44 -> 339 (dequeues happen each whole ms).
        assert_eq!(&drops[..4], &[110, 210, 281, 339]);
    }

    #[test]
    fn leaves_dropping_state_when_sojourn_falls_below_target() {
        let (mut d, _) = standing(false, 1, 10, 150);
        assert!(d.q.is_dropping());
        // Drain to a short queue: sojourn of a freshly queued packet is 0 < target.
        while d.q.fifo.len() > 1 {
            d.q.fifo.pop_front();
        }
        d.enqueue(pkt(9999, 1000, Ecn::NotEct), ms(160));
        d.dequeue(ms(160));
        d.dequeue(ms(160));
        assert!(!d.q.is_dropping());
        assert!(d.out.drops.is_empty());
    }

    #[test]
    fn reentering_soon_resumes_the_previous_drop_rate() {
        let (mut d, _) = standing(false, 1, 10, 400);
        let count_before = d.q.count();
        assert!(count_before > 2);
        // Leave the dropping state briefly (the last dequeue was at 409 ms)...
        d.q.vars.dropping = false;
        d.q.vars.first_above_time = Some(ms(415));
        // ...and re-enter within 16 intervals: count resumes at count - lastcount.
        let delta = d.q.vars.count - d.q.vars.lastcount;
        d.enqueue(pkt(5000, 1000, Ecn::NotEct), ms(420));
        d.dequeue(ms(420));
        assert!(d.q.is_dropping());
        assert_eq!(d.q.count(), if delta > 1 { delta } else { 1 });
    }

    #[test]
    fn ecn_marks_instead_of_dropping() {
        let (_, log) = standing(true, 1, 10, 400);
        assert!(log.iter().all(|e| e.1 == 0), "ECT packets are never dropped by the control law");
        let marks: Vec<u64> = log.iter().filter(|e| e.2 > 0).map(|e| e.0).collect();
        assert_eq!(&marks[..4], &[110, 210, 281, 339]);
    }

    #[test]
    fn ce_threshold_marks_every_ect_packet_above_it() {
        let mut c = cfg(false);
        c.ce_threshold = Some(SimDuration::from_millis(1));
        let mut d = Driver::new(Codel::new(c), 10_000_000, 1);
        d.enqueue(pkt(0, 1000, Ecn::Ect0), ms(0));
        d.enqueue(pkt(1, 1000, Ecn::NotEct), ms(0));
        d.enqueue(pkt(2, 1000, Ecn::Ect1), ms(10));
        assert_eq!(d.dequeue(ms(2)).unwrap().ecn, Ecn::Ce);
        assert_eq!(d.out.marks[0].2, MarkReason::CeThreshold);
        assert_eq!(d.dequeue(ms(2)).unwrap().ecn, Ecn::NotEct);
        assert_eq!(d.dequeue(ms(10)).unwrap().ecn, Ecn::Ect1);
    }

    #[test]
    fn a_queue_of_at_most_one_mtu_is_never_above_target() {
        let mut d = Driver::new(Codel::new(cfg(false)), 10_000_000, 1);
        // Two MTU-sized packets wait 50 ms (far above target), again and again: after the
        // first leaves, one MTU remains, so first_above_time is reset and nothing is ever dropped.
        for k in 0..1000u64 {
            d.enqueue(pkt(k, 1500, Ecn::NotEct), ms(100 * k));
            d.enqueue(pkt(10_000 + k, 1500, Ecn::NotEct), ms(100 * k));
            d.dequeue(ms(100 * k + 50));
            assert!(d.out.drops.is_empty());
            d.dequeue(ms(100 * k + 50));
            assert!(d.out.drops.is_empty());
        }
    }

    #[test]
    fn invariants_hold_over_random_workouts() {
        for seed in 0..10 {
            let mut c = cfg(seed % 2 == 0);
            c.limit = Limit::Packets(60);
            c.target = SimDuration::from_millis(2);
            c.interval = SimDuration::from_millis(20);
            if seed % 3 == 0 {
                c.ce_threshold = Some(SimDuration::from_millis(1));
            }
            random_workout(AnyQdisc::Codel(Codel::new(c)), seed, 4000, 2_000_000);
        }
    }
}
