//! Threshold marker: an arrival that finds more than K packets (or bytes)
//! queued is marked if it is ECN-capable; no averaging, no randomness.
//!
//! Read first:
//! - Kuzmanovic, "The Power of Explicit Congestion Notification", SIGCOMM
//!   2005, §4 (the "threshold" AQM: instantaneous queue above K, mark).
//! - Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, §3.1 (the same
//!   marker: "mark arriving packets if the queue occupancy is greater than K"),
//!   and RFC 8257 §3.1. In ns-2 it is RED with `q_weight_ 1`, `thresh_ =
//!   maxthresh_ = K` and `mark_p_ 1`.
//!
//! The queue compared with K is the one the arrival finds, not counting
//! itself (as RED's average samples it). What happens to a Not-ECT packet
//! above K is a parameter: dropped (the marker's congestion signal for
//! non-ECN traffic) or queued (the marker only ever marks).

use super::QueuedPacket;
use super::{is_markable, AqmState, DropReason, Fifo, Limit, MarkReason, Measure, NonEct, QdiscCx, QueueDisc};
use crate::time::SimTime;

/// Resolved threshold-marker parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThresholdConfig {
    /// Buffer limit.
    pub limit: Limit,
    /// Unit of `k`.
    pub measure: Measure,
    /// The threshold K: mark when the queue found exceeds it (packets or bytes).
    pub k: f64,
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
}

impl QueueDisc for ThresholdMarker {
    fn enqueue(&mut self, mut pkt: QueuedPacket, cx: &mut QdiscCx<'_>) {
        if !self.fifo.fits(self.cfg.limit, &pkt) {
            cx.drop_packet(pkt, DropReason::Overflow);
            return;
        }
        // Kuzmanovic 2005 §4 / DCTCP §3.1: mark if the instantaneous queue is above K.
        if self.fifo.measured(self.cfg.measure) > self.cfg.k {
            if is_markable(pkt.ecn) {
                cx.mark(&mut pkt, MarkReason::CeThreshold);
            } else if self.cfg.non_ect == NonEct::Drop {
                cx.drop_packet(pkt, DropReason::Early);
                return;
            }
        }
        self.fifo.push_back(pkt);
    }

    fn dequeue(&mut self, _cx: &mut QdiscCx<'_>) -> Option<QueuedPacket> {
        self.fifo.pop_front()
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
        ThresholdConfig { limit: Limit::Packets(10), measure: Measure::Packets, k: 3.0, non_ect }
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
        c.k = 2500.0;
        c.limit = Limit::Bytes(100_000);
        let mut d = Driver::new(ThresholdMarker::new(c), 1_000_000, 1);
        let marks: Vec<usize> = (0..5).map(|i| d.enqueue(pkt(i, 1000, Ecn::Ect1), SimTime::ZERO).marks.len()).collect();
        assert_eq!(marks, vec![0, 0, 0, 1, 1]);
    }

    #[test]
    fn invariants_hold_over_random_workouts() {
        for seed in 0..10 {
            let non_ect = if seed % 2 == 0 { NonEct::Drop } else { NonEct::Pass };
            random_workout(AnyQdisc::Threshold(ThresholdMarker::new(cfg(non_ect))), seed, 3000, 2_000_000);
        }
    }
}
