//! Threshold (step) marker: an arrival that finds more than K packets (or
//! bytes) queued is marked if it is ECN-capable; or, at departure, a packet
//! whose sojourn time exceeds K (or that leaves more than K behind). No
//! averaging, no randomness.
//!
//! Read first:
//! - Kuzmanovic, "The Power of Explicit Congestion Notification", SIGCOMM
//!   2005, §4 (the "threshold" AQM: instantaneous queue above K, mark).
//! - Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, §3.1 (the same
//!   marker: "mark arriving packets if the queue occupancy is greater than K"),
//!   and RFC 8257 §3.1. In ns-2 it is RED with `q_weight_ 1`, `thresh_ =
//!   maxthresh_ = K` and `mark_p_ 1`.
//! - RFC 9332 §A.2 (the L4S queue's native step AQM on sojourn time) and
//!   Linux `sch_dualpi2.c` (`do_step_aqm`: at dequeue, the sojourn time, or
//!   the packets left in the queue, above `step_thresh`; Not-ECT dropped).
//!
//! The queue compared with K is the one the arrival finds, not counting
//! itself (as RED's average samples it). What happens to a Not-ECT packet
//! above K is a parameter: dropped (the marker's congestion signal for
//! non-ECN traffic) or queued (the marker only ever marks).

use serde::{Deserialize, Serialize};

use super::QueuedPacket;
use super::{is_markable, AqmState, DropReason, Fifo, Limit, MarkReason, Measure, NonEct, QdiscCx, QueueDisc};
use crate::time::{SimDuration, SimTime};

/// Where the step marker compares the queue with its threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkAt {
    /// At enqueue, the queue the arrival finds (DCTCP §3.1: "mark arriving packets").
    Arrival,
    /// At dequeue: the departing packet's sojourn time, or the queue it leaves behind
    /// (Linux `sch_dualpi2.c` `do_step_aqm`).
    Departure,
}

/// The threshold the marker compares with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StepThreshold {
    /// A queue length in the marker's [`Measure`] (packets or bytes).
    Queue(f64),
    /// A sojourn time (only at departure, where it is known).
    Sojourn(SimDuration),
}

/// Resolved threshold-marker parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThresholdConfig {
    /// Buffer limit.
    pub limit: Limit,
    /// Unit of `k`.
    pub measure: Measure,
    /// The threshold K: mark when the queue (packets or bytes) or the sojourn time exceeds it.
    pub k: StepThreshold,
    /// Where the comparison is made.
    pub mark_at: MarkAt,
    /// Not-ECT packets above K.
    pub non_ect: NonEct,
}

/// A threshold-marking FIFO.
#[derive(Debug)]
pub struct ThresholdMarker {
    cfg: ThresholdConfig,
    fifo: Fifo,
}

impl ThresholdMarker {
    /// An empty queue.
    #[must_use]
    pub fn new(cfg: ThresholdConfig) -> Self {
        ThresholdMarker { cfg, fifo: Fifo::new(cfg.limit) }
    }

    /// True if `pkt`, at `now`, is above the threshold: the queue it finds (at arrival) or
    /// leaves behind (at departure), or its sojourn time.
    fn above(&self, pkt: &QueuedPacket, now: SimTime) -> bool {
        match self.cfg.k {
            StepThreshold::Queue(k) => self.fifo.measured(self.cfg.measure) > k,
            StepThreshold::Sojourn(k) => now.saturating_since(pkt.enqueued_at) > k,
        }
    }

    /// Mark `pkt` above the threshold; returns false if it is a Not-ECT packet to drop.
    fn signal(&self, pkt: &mut QueuedPacket, cx: &mut QdiscCx<'_>) -> bool {
        if is_markable(pkt.ecn) {
            cx.mark(pkt, MarkReason::CeThreshold);
            true
        } else {
            self.cfg.non_ect == NonEct::Pass
        }
    }
}

impl QueueDisc for ThresholdMarker {
    fn enqueue(&mut self, mut pkt: QueuedPacket, cx: &mut QdiscCx<'_>) {
        if !self.fifo.fits(self.cfg.limit, &pkt) {
            cx.drop_packet(pkt, DropReason::Overflow);
            return;
        }
        // Kuzmanovic 2005 §4 / DCTCP §3.1: mark if the instantaneous queue is above K.
        if self.cfg.mark_at == MarkAt::Arrival && self.above(&pkt, cx.now) && !self.signal(&mut pkt, cx) {
            cx.drop_packet(pkt, DropReason::Early);
            return;
        }
        self.fifo.push_back(pkt);
    }

    fn dequeue(&mut self, cx: &mut QdiscCx<'_>) -> Option<QueuedPacket> {
        loop {
            let mut pkt = self.fifo.pop_front()?;
            // Linux sch_dualpi2.c do_step_aqm: at dequeue, sojourn (or qlen left) > step_thresh: mark; Not-ECT: drop.
            if self.cfg.mark_at == MarkAt::Departure && self.above(&pkt, cx.now) && !self.signal(&mut pkt, cx) {
                cx.drop_packet(pkt, DropReason::Early);
                continue;
            }
            return Some(pkt);
        }
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

    fn cfg(non_ect: NonEct) -> ThresholdConfig {
        ThresholdConfig {
            limit: Limit::Packets(10),
            measure: Measure::Packets,
            k: StepThreshold::Queue(3.0),
            mark_at: MarkAt::Arrival,
            non_ect,
        }
    }

    /// A sojourn-time step at departure, K = `k_ms`.
    fn sojourn_cfg(k_ms: u64, non_ect: NonEct) -> ThresholdConfig {
        ThresholdConfig {
            k: StepThreshold::Sojourn(SimDuration::from_millis(k_ms)),
            mark_at: MarkAt::Departure,
            ..cfg(non_ect)
        }
    }

    #[test]
    fn marks_every_ect_arrival_above_k_and_none_at_or_below() {
        let mut d = Driver::new(ThresholdMarker::new(cfg(NonEct::Drop)), 1_000_000, 1);
        let mut marked = Vec::new();
        for uid in 0..8 {
            let out = d.enqueue(pkt(uid, 1000, Ecn::Ect0), SimTime::ZERO);
            marked.push(!out.marks.is_empty());
        }
        // Arrivals find 0, 1, 2, 3 packets (not above K = 3), then 4, 5, 6, 7.
        assert_eq!(marked, vec![false, false, false, false, true, true, true, true]);
        assert!(d.out.marks.iter().all(|m| m.2 == MarkReason::CeThreshold));
    }

    #[test]
    fn not_ect_above_k_is_dropped_or_passed() {
        for (non_ect, queued) in [(NonEct::Drop, 4), (NonEct::Pass, 5)] {
            let mut d = Driver::new(ThresholdMarker::new(cfg(non_ect)), 1_000_000, 1);
            for uid in 0..5 {
                d.enqueue(pkt(uid, 1000, Ecn::NotEct), SimTime::ZERO);
            }
            assert_eq!(d.q.len_packets(), queued);
            assert!(d.out.marks.is_empty());
        }
    }

    #[test]
    fn byte_threshold() {
        let mut c = cfg(NonEct::Drop);
        c.measure = Measure::Bytes;
        c.k = StepThreshold::Queue(2500.0);
        c.limit = Limit::Bytes(100_000);
        let mut d = Driver::new(ThresholdMarker::new(c), 1_000_000, 1);
        let marks: Vec<usize> = (0..5).map(|i| d.enqueue(pkt(i, 1000, Ecn::Ect1), SimTime::ZERO).marks.len()).collect();
        assert_eq!(marks, vec![0, 0, 0, 1, 1]);
    }

    // ---- step marking at departure (RFC 9332 §A.2, Linux sch_dualpi2.c do_step_aqm) ----

    #[test]
    fn departure_marks_every_ect_packet_whose_sojourn_exceeds_k_and_none_at_k() {
        let mut d = Driver::new(ThresholdMarker::new(sojourn_cfg(1, NonEct::Drop)), 1_000_000, 1);
        for uid in 0..3 {
            // Nothing is marked on arrival, whatever the queue.
            assert!(d.enqueue(pkt(uid, 1000, Ecn::Ect1), SimTime::ZERO).marks.is_empty());
        }
        let us = |x: u64| SimTime::ZERO + SimDuration::from_micros(x);
        // Sojourn 1 ms exactly: not above K; then 1.001 ms and 5 ms: above.
        assert_eq!(d.dequeue(us(1000)).unwrap().ecn, Ecn::Ect1);
        assert!(d.out.marks.is_empty());
        assert_eq!(d.dequeue(us(1001)).unwrap().ecn, Ecn::Ce);
        assert_eq!(d.out.marks[0].2, MarkReason::CeThreshold);
        assert_eq!(d.dequeue(us(5000)).unwrap().ecn, Ecn::Ce);
    }

    #[test]
    fn departure_drops_not_ect_above_k_and_hands_out_the_next_packet() {
        // Linux do_step_aqm: a Not-ECT packet above the step is dropped; the dequeue goes on.
        let mut d = Driver::new(ThresholdMarker::new(sojourn_cfg(1, NonEct::Drop)), 1_000_000, 1);
        d.enqueue(pkt(0, 1000, Ecn::NotEct), SimTime::ZERO);
        d.enqueue(pkt(1, 1000, Ecn::NotEct), SimTime::from_millis(4));
        let got = d.dequeue(SimTime::from_millis(4)).unwrap();
        assert_eq!((got.uid(), got.ecn), (1, Ecn::NotEct));
        assert_eq!(d.out.drops.len(), 1);
        assert_eq!((d.out.drops[0].0.uid(), d.out.drops[0].1), (0, DropReason::Early));
        // With non_ect = "pass" it leaves unmarked.
        let mut d = Driver::new(ThresholdMarker::new(sojourn_cfg(1, NonEct::Pass)), 1_000_000, 1);
        d.enqueue(pkt(0, 1000, Ecn::NotEct), SimTime::ZERO);
        assert_eq!(d.dequeue(SimTime::from_millis(4)).unwrap().ecn, Ecn::NotEct);
        assert!(d.out.drops.is_empty() && d.out.marks.is_empty());
    }

    #[test]
    fn departure_in_packets_compares_the_queue_left_behind() {
        // Linux do_step_aqm with step_in_packets: qlen of the queue after the dequeue > step_thresh.
        let c = ThresholdConfig { mark_at: MarkAt::Departure, ..cfg(NonEct::Drop) };
        let mut d = Driver::new(ThresholdMarker::new(c), 1_000_000, 1);
        for uid in 0..6 {
            assert!(d.enqueue(pkt(uid, 1000, Ecn::Ect0), SimTime::ZERO).marks.is_empty());
        }
        // Leaving 5, 4 behind (> 3): marked; leaving 3, 2, 1, 0: not.
        let marked: Vec<bool> = (0..6).map(|_| d.dequeue(SimTime::ZERO).unwrap().ecn == Ecn::Ce).collect();
        assert_eq!(marked, vec![true, true, false, false, false, false]);
    }

    // ---- RED with min_th = max_th = K and w_q = 1 ----

    /// RED marking above max_th with an instantaneous average (w_q = 1) and min_th = max_th
    /// = K marks or drops an arrival exactly when the queue it finds is >= K; the
    /// threshold marker with k = K - 1 ("above K - 1") must decide the same for every
    /// packet, in packets and in bytes, with any ECN mix and any arrival/departure order.
    #[test]
    fn arrival_step_equals_red_with_equal_thresholds_and_unit_weight_packet_by_packet() {
        use super::super::red::{Adaptive, DropSpacing, IdleStart, MarkTarget, Red, RedConfig, RedEcn};
        use super::super::{Queue, Victim};
        use crate::rng::SimRng;
        for (seed, measure) in (0..8).map(|s| (s, if s % 2 == 0 { Measure::Packets } else { Measure::Bytes })) {
            let big_k = 5.0;
            let (limit, step_k) = match measure {
                Measure::Packets => (Limit::Packets(12), big_k - 1.0),
                Measure::Bytes => (Limit::Bytes(12_000), big_k * 1000.0 - 1.0),
            };
            let non_ect = if seed % 4 < 2 { NonEct::Drop } else { NonEct::Pass };
            let red = RedConfig {
                limit,
                measure,
                mean_pktsize: 1000,
                min_th: big_k,
                max_th: big_k,
                w_q: 1.0,
                max_p: 1.0,
                wait: false,
                gentle: false,
                byte_mode: false,
                drop_spacing: DropSpacing::Uniform,
                backlog_gate: false,
                idle_start: IdleStart::TxEnd,
                victim: Victim::Tail,
                ecn: RedEcn::MarkAboveMax,
                mark_p: 1.0,
                non_ect,
                mark_target: MarkTarget::Arriving,
                adaptive: Adaptive::None,
            };
            let step =
                ThresholdConfig { limit, measure, k: StepThreshold::Queue(step_k), mark_at: MarkAt::Arrival, non_ect };
            let rate = crate::time::BitRate::from_bps(10_000_000);
            let mut a = Queue::new(AnyQdisc::Red(Red::new(red)), rate, SimRng::for_component(seed, "a"));
            let mut b =
                Queue::new(AnyQdisc::Threshold(ThresholdMarker::new(step)), rate, SimRng::for_component(seed, "b"));
            let mut rng = SimRng::for_component(seed, "workout");
            let mut now = SimTime::ZERO;
            let (mut marks, mut drops) = (0, 0);
            for uid in 0..5000u64 {
                now += SimDuration::from_micros(rng.below(1500));
                if rng.uniform() < 0.55 {
                    let ecn = [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce][usize::try_from(rng.below(4)).unwrap()];
                    let size = [40, 576, 1000, 1500][usize::try_from(rng.below(4)).unwrap()];
                    let p = pkt(uid, size, ecn);
                    let ra = a.enqueue(p, now);
                    let (ma, da) = (
                        ra.marks.iter().map(|m| m.3).collect::<Vec<_>>(),
                        ra.drops.iter().map(|d| d.0.id).collect::<Vec<_>>(),
                    );
                    let rb = b.enqueue(p, now);
                    let (mb, db) = (
                        rb.marks.iter().map(|m| m.3).collect::<Vec<_>>(),
                        rb.drops.iter().map(|d| d.0.id).collect::<Vec<_>>(),
                    );
                    assert_eq!((&ma, &da), (&mb, &db), "seed {seed}, packet {uid}: RED and the step marker differ");
                    marks += ma.len();
                    drops += da.len();
                } else {
                    assert_eq!(a.dequeue(now), b.dequeue(now), "seed {seed}: departures differ");
                }
            }
            assert!(
                marks > 100 && drops > 10,
                "seed {seed}: the workout reached the threshold ({marks} marks, {drops} drops)"
            );
        }
    }

    #[test]
    fn invariants_hold_over_random_workouts() {
        for seed in 0..10 {
            let non_ect = if seed % 2 == 0 { NonEct::Drop } else { NonEct::Pass };
            random_workout(AnyQdisc::Threshold(ThresholdMarker::new(cfg(non_ect))), seed, 3000, 2_000_000);
            random_workout(AnyQdisc::Threshold(ThresholdMarker::new(sojourn_cfg(3, non_ect))), seed, 3000, 2_000_000);
        }
    }
}
