//! Adaptive ECN (AECN, AECN2, AECN3, AECN4): RED whose marking favours
//! flows with long round-trip times, exactly as STUDIES.md §4 specifies.
//!
//! Read first:
//! - STUDIES.md §4 (the specification implemented here) and Zheng's WPI
//!   thesis, ch. 5.
//! - `red.rs` (the average, `p_b`, the count and `wait` are RED's, from ns-2 `red.cc`).
//! - Liu & Jain, "Improving explicit congestion notification with the
//!   mark-front strategy", Computer Networks 2001 (mark-front).
//!
//! Each arriving packet is classified by the RTT its sender carries
//! (`TcpHeader::rtt_hint_ms`, whole milliseconds, 0 = no sample):
//! robust `[0.5, 75)` ms, average `[75, 150)` ms and 0, fragile `[150, inf)` ms.
//! The router keeps one virtual FIFO per group ("flow queue") of that
//! group's packets now queued: entries are the packets' sequence numbers in
//! the real FIFO, added on enqueue and removed on dequeue (drops only ever
//! take the arrival, which is never added), so a group entry finds its
//! packet in O(1).
//!
//! - `avg >= max_th` (of the arrival's group): drop the arrival (forced), as
//!   standard ECN does.
//! - `min_th <= avg < max_th`: RED's probability with the group's max_p:
//!   fragile `base_max_p / a`, average `base_max_p`, robust
//!   `min(1, base_max_p * b)`. On a decision, an ECT arrival causes a mark
//!   on the first unmarked ECT packet in its group's flow queue (itself if
//!   there is none ahead of it); a Not-ECT arrival is dropped.
//! - AECN2: `a = len(average fq) / len(fragile fq)`,
//!   `b = len(robust fq) / len(average fq)`, where a zero-length average fq
//!   counts as the router queue length. Lengths include the arrival (so the
//!   arrival's own group is never empty, which is why only the average
//!   queue needs the zero rule).
//! - AECN3: the robust group's min_th is `robust_min_th`.
//! - AECN4: AECN3, and every group's max_th is `wide_max_th`.
//!
//! Choices where §4 is silent, each a parameter: the count and RED's
//! "just crossed min_th" state are kept per group (`count_scope`), since
//! each group has its own probability; a group max_p is capped at 1 (so
//! `a = 0`, an empty average fq with a fragile arrival, gives 1).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::red::{probability_a, probability_b, Average, DropSpacing, IdleStart};
use super::QueuedPacket;
use super::{is_markable, is_unmarked_ect, AqmState, DropReason, Fifo, Limit, MarkReason, NonEct, QdiscCx, QueueDisc};
use crate::time::SimTime;

/// Which AECN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AecnVariant {
    /// Fixed `a` and `b`.
    Aecn,
    /// Population-balanced `a` and `b` from the flow queue lengths.
    Aecn2,
    /// AECN with a lower min_th for the robust group.
    Aecn3,
    /// AECN3 with a larger max_th.
    Aecn4,
}

/// Where the RED count lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CountScope {
    /// One count (and crossing state) per group.
    Group,
    /// One count for the whole queue, as a plain ns-2 REDQueue subclass would keep.
    Queue,
}

/// An RTT group. The discriminant indexes per-group arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum RttGroup {
    /// Short RTT: `[0.5, robust_below_ms)` ms.
    Robust = 0,
    /// `[robust_below_ms, fragile_from_ms)` ms, or no sample (0).
    Average = 1,
    /// Long RTT: `[fragile_from_ms, inf)` ms.
    Fragile = 2,
}

/// Resolved AECN parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AecnConfig {
    /// Which variant.
    pub variant: AecnVariant,
    /// Buffer limit.
    pub limit: Limit,
    /// Mean packet size (idle decay), bytes.
    pub mean_pktsize: u32,
    /// EWMA weight.
    pub w_q: f64,
    /// min_th, packets.
    pub min_th: f64,
    /// max_th, packets.
    pub max_th: f64,
    /// The average group's max_p.
    pub base_max_p: f64,
    /// Fragile divisor (AECN, AECN3, AECN4).
    pub a: f64,
    /// Robust multiplier (AECN, AECN3, AECN4).
    pub b: f64,
    /// The robust group's min_th in AECN3 and AECN4, packets.
    pub robust_min_th: f64,
    /// Every group's max_th in AECN4, packets.
    pub wide_max_th: f64,
    /// Hints below this (and at least 1 ms) are robust.
    pub robust_below_ms: u32,
    /// Hints at or above this are fragile.
    pub fragile_from_ms: u32,
    /// ns-2 `wait_`.
    pub wait: bool,
    /// Uniform or geometric spacing (Linux spacing is not offered here).
    pub drop_spacing: DropSpacing,
    /// ns-2's `qlen > 1` gate.
    pub backlog_gate: bool,
    /// When an idle period starts.
    pub idle_start: IdleStart,
    /// Where the count lives.
    pub count_scope: CountScope,
    /// Not-ECT packets on a marking decision.
    pub non_ect: NonEct,
}

impl AecnConfig {
    /// The group of a packet carrying `rtt_ms` (0 = no sample).
    #[must_use]
    pub fn classify(&self, rtt_ms: u32) -> RttGroup {
        match rtt_ms {
            // STUDIES.md §4: average [75, 150) ms (and 0).
            0 => RttGroup::Average,
            // STUDIES.md §4: robust [0.5, 75) ms; whole-ms hints >= 1 are >= 0.5.
            r if r < self.robust_below_ms => RttGroup::Robust,
            r if r < self.fragile_from_ms => RttGroup::Average,
            // STUDIES.md §4: fragile [150, inf) ms.
            _ => RttGroup::Fragile,
        }
    }

    /// `(min_th, max_th)` of `group`, packets.
    #[must_use]
    pub fn thresholds(&self, group: RttGroup) -> (f64, f64) {
        let min_th = match (self.variant, group) {
            // STUDIES.md §4: AECN3: the robust group uses a lower min_th.
            (AecnVariant::Aecn3 | AecnVariant::Aecn4, RttGroup::Robust) => self.robust_min_th,
            _ => self.min_th,
        };
        let max_th = match self.variant {
            // STUDIES.md §4: AECN4: AECN3 plus a larger max_th.
            AecnVariant::Aecn4 => self.wide_max_th,
            _ => self.max_th,
        };
        (min_th, max_th)
    }
}

/// An AECN queue.
#[derive(Debug)]
pub struct Aecn {
    cfg: AecnConfig,
    fifo: Fifo,
    avg: Average,
    /// Per-group flow queues: sequence numbers of the group's queued packets, oldest first.
    fq: [VecDeque<u64>; 3],
    /// Sequence number of the FIFO's head.
    head_seq: u64,
    /// ns-2 count, count_bytes and old, per group or (index 0) for the queue.
    count: [i64; 3],
    count_bytes: [u64; 3],
    old: [bool; 3],
    prob1: f64,
}

impl Aecn {
    /// An empty AECN queue.
    #[must_use]
    pub fn new(cfg: AecnConfig) -> Self {
        Aecn {
            cfg,
            fifo: Fifo::new(cfg.limit),
            avg: Average::new(cfg.w_q, cfg.mean_pktsize, cfg.idle_start),
            fq: [VecDeque::new(), VecDeque::new(), VecDeque::new()],
            head_seq: 0,
            count: [0; 3],
            count_bytes: [0; 3],
            old: [false; 3],
            prob1: 0.0,
        }
    }

    /// The parameters.
    #[must_use]
    pub fn config(&self) -> &AecnConfig {
        &self.cfg
    }

    /// Packets of `group` now queued.
    #[must_use]
    pub fn group_len(&self, group: RttGroup) -> usize {
        self.fq[group as usize].len()
    }

    /// The max_p of `group` given the flow queue lengths `len` (arrival included)
    /// and the router queue length `total` (arrival included).
    #[must_use]
    pub fn group_max_p(&self, group: RttGroup, len: [usize; 3], total: usize) -> f64 {
        let base = self.cfg.base_max_p;
        #[allow(clippy::cast_precision_loss)]
        let (a, b) = match self.cfg.variant {
            AecnVariant::Aecn2 => {
                let fragile = len[RttGroup::Fragile as usize] as f64;
                let average = len[RttGroup::Average as usize] as f64;
                let robust = len[RttGroup::Robust as usize] as f64;
                // STUDIES.md §4: a zero-length average fq counts as the router queue length.
                let average_or_total = if average == 0.0 { total as f64 } else { average };
                // STUDIES.md §4: a = len(average fq) / len(fragile fq), b = len(robust fq) / len(average fq).
                (average / fragile, robust / average_or_total)
            }
            _ => (self.cfg.a, self.cfg.b),
        };
        match group {
            // STUDIES.md §4: fragile base_max_p / a (capped at 1: a = 0 means "no brake").
            RttGroup::Fragile => (base / a).min(1.0),
            RttGroup::Average => base,
            // STUDIES.md §4: robust min(1, base_max_p * b).
            RttGroup::Robust => (base * b).min(1.0),
        }
    }

    /// Mark-front within `group`: the first unmarked ECT packet of the group's
    /// flow queue. Returns false if the group has none queued.
    fn mark_front_in_group(&mut self, group: RttGroup, cx: &mut QdiscCx<'_>) -> bool {
        let head = self.head_seq;
        for &seq in &self.fq[group as usize] {
            let index = usize::try_from(seq - head).expect("queued index fits usize");
            let p = self.fifo.get_mut(index).expect("a flow-queue entry names a queued packet");
            if is_unmarked_ect(p.ecn) {
                return cx.mark(p, MarkReason::Early);
            }
        }
        false
    }
}

impl QueueDisc for Aecn {
    fn enqueue(&mut self, mut pkt: QueuedPacket, cx: &mut QdiscCx<'_>) {
        let qlen = self.fifo.measured(super::Measure::Packets);
        let avg = self.avg.on_arrival(qlen, cx);
        let group = self.cfg.classify(pkt.rtt_hint_ms);
        let ci = match self.cfg.count_scope {
            CountScope::Group => group as usize,
            CountScope::Queue => 0,
        };
        self.count[ci] += 1;
        self.count_bytes[ci] += u64::from(pkt.size);
        if !self.fifo.fits(self.cfg.limit, &pkt) {
            self.count[ci] = 0;
            self.count_bytes[ci] = 0;
            cx.drop_packet(pkt, DropReason::Overflow);
            return;
        }
        let (min_th, max_th) = self.cfg.thresholds(group);
        let early = if avg < min_th || (self.cfg.backlog_gate && qlen <= 1.0) {
            self.old[ci] = false;
            self.prob1 = 0.0;
            false
        } else if avg >= max_th {
            // STUDIES.md §4: avg >= max_th: drop the arriving packet, as standard ECN does.
            self.count[ci] = 0;
            self.count_bytes[ci] = 0;
            self.prob1 = 1.0;
            cx.drop_packet(pkt, DropReason::Forced);
            return;
        } else if !self.old[ci] {
            // ns-2 enque: the average just crossed min_th: count = 1, no drop.
            self.old[ci] = true;
            self.count[ci] = 1;
            self.count_bytes[ci] = u64::from(pkt.size);
            false
        } else {
            let mut len = [self.fq[0].len(), self.fq[1].len(), self.fq[2].len()];
            len[group as usize] += 1;
            let max_p = self.group_max_p(group, len, self.fifo.len() + 1);
            // STUDIES.md §4: the RED probability with a group max_p.
            let p_b = probability_b(avg, min_th, max_th, max_p, false);
            self.prob1 = p_b;
            let p_a = match self.cfg.drop_spacing {
                DropSpacing::Geometric => p_b,
                _ => probability_a(
                    p_b,
                    self.count[ci],
                    self.count_bytes[ci],
                    false,
                    self.cfg.mean_pktsize,
                    self.cfg.wait,
                    pkt.size,
                ),
            };
            cx.bernoulli(p_a)
        };
        if early {
            self.count[ci] = 0;
            self.count_bytes[ci] = 0;
            if is_markable(pkt.ecn) {
                // STUDIES.md §4: mark the first unmarked ECT packet in that group's flow queue.
                if !self.mark_front_in_group(group, cx) {
                    cx.mark(&mut pkt, MarkReason::Early);
                }
            } else if self.cfg.non_ect == NonEct::Drop {
                cx.drop_packet(pkt, DropReason::Early);
                return;
            }
        }
        let seq = self.head_seq + self.fifo.len() as u64;
        self.fq[group as usize].push_back(seq);
        self.fifo.push_back(pkt);
    }

    fn dequeue(&mut self, cx: &mut QdiscCx<'_>) -> Option<QueuedPacket> {
        let pkt = self.fifo.pop_front();
        if let Some(p) = &pkt {
            let group = self.cfg.classify(p.rtt_hint_ms);
            let seq = self.fq[group as usize].pop_front();
            debug_assert_eq!(seq, Some(self.head_seq), "the departing packet heads its group's flow queue");
            self.head_seq += 1;
        }
        self.avg.on_dequeue(cx.now, pkt.map(|p| p.size), self.fifo.is_empty(), cx.link_rate);
        pkt
    }

    fn len_packets(&self) -> u64 {
        self.fifo.len() as u64
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }
    fn give_back_memory(&mut self) {
        self.fifo.give_back_memory();
        for fq in &mut self.fq {
            super::give_back(fq, Fifo::MIN_SLOTS);
        }
    }

    fn aqm_state(&mut self, _now: SimTime) -> AqmState {
        AqmState { avg: self.avg.avg, prob: self.prob1, max_p: self.cfg.base_max_p }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{pkt_rtt, random_workout, Driver};
    use super::super::AnyQdisc;
    use super::*;
    use crate::packet::Ecn;

    fn cfg(variant: AecnVariant) -> AecnConfig {
        AecnConfig {
            variant,
            limit: Limit::Packets(120),
            mean_pktsize: 1000,
            w_q: 0.002,
            min_th: 10.0,
            max_th: 30.0,
            base_max_p: 0.5,
            a: 2.5,
            b: 2.5,
            robust_min_th: 5.0,
            wide_max_th: 60.0,
            robust_below_ms: 75,
            fragile_from_ms: 150,
            wait: false,
            drop_spacing: DropSpacing::Uniform,
            backlog_gate: true,
            idle_start: IdleStart::TxEnd,
            count_scope: CountScope::Group,
            non_ect: NonEct::Drop,
        }
    }

    #[test]
    fn classification_follows_the_rtt_hint() {
        let c = cfg(AecnVariant::Aecn);
        assert_eq!(c.classify(0), RttGroup::Average);
        assert_eq!(c.classify(1), RttGroup::Robust);
        assert_eq!(c.classify(74), RttGroup::Robust);
        assert_eq!(c.classify(75), RttGroup::Average);
        assert_eq!(c.classify(149), RttGroup::Average);
        assert_eq!(c.classify(150), RttGroup::Fragile);
        assert_eq!(c.classify(5000), RttGroup::Fragile);
    }

    #[test]
    fn group_max_p_uses_a_and_b() {
        let q = Aecn::new(cfg(AecnVariant::Aecn));
        let len = [1, 1, 1];
        assert!((q.group_max_p(RttGroup::Fragile, len, 3) - 0.2).abs() < 1e-12);
        assert!((q.group_max_p(RttGroup::Average, len, 3) - 0.5).abs() < 1e-12);
        assert_eq!(q.group_max_p(RttGroup::Robust, len, 3), 1.0); // min(1, 0.5 * 2.5)
        let mut c = cfg(AecnVariant::Aecn);
        c.base_max_p = 0.2;
        let q = Aecn::new(c);
        assert!((q.group_max_p(RttGroup::Robust, len, 3) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn aecn2_balances_by_flow_queue_lengths() {
        let q = Aecn::new(cfg(AecnVariant::Aecn2));
        // [robust, average, fragile] = [6, 4, 2]: a = 4 / 2 = 2, b = 6 / 4 = 1.5.
        let len = [6, 4, 2];
        assert!((q.group_max_p(RttGroup::Fragile, len, 12) - 0.25).abs() < 1e-12);
        assert!((q.group_max_p(RttGroup::Robust, len, 12) - 0.75).abs() < 1e-12);
        // An empty average fq counts as the router queue length: b = 6 / 8.
        let len = [6, 0, 2];
        assert!((q.group_max_p(RttGroup::Robust, len, 8) - 0.5 * 0.75).abs() < 1e-12);
        // a = 0 (no average packets) leaves the fragile group at max_p 1.
        assert_eq!(q.group_max_p(RttGroup::Fragile, len, 8), 1.0);
    }

    #[test]
    fn aecn3_and_aecn4_thresholds() {
        let c = cfg(AecnVariant::Aecn3);
        assert_eq!(c.thresholds(RttGroup::Robust), (5.0, 30.0));
        assert_eq!(c.thresholds(RttGroup::Fragile), (10.0, 30.0));
        let c = cfg(AecnVariant::Aecn4);
        assert_eq!(c.thresholds(RttGroup::Robust), (5.0, 60.0));
        assert_eq!(c.thresholds(RttGroup::Average), (10.0, 60.0));
        let c = cfg(AecnVariant::Aecn);
        assert_eq!(c.thresholds(RttGroup::Robust), (10.0, 30.0));
    }

    /// A queue holding `rtts` (ECT), with the average pinned at `avg` and every group past its crossing.
    fn loaded(c: AecnConfig, avg: f64, rtts: &[u32]) -> Driver<Aecn> {
        let mut c = c;
        c.w_q = 1e-12;
        let mut d = Driver::new(Aecn::new(c), 10_000_000, 1);
        for (i, &r) in rtts.iter().enumerate() {
            d.enqueue(pkt_rtt(i as u64, r, Ecn::Ect0), SimTime::ZERO);
        }
        d.q.avg.avg = avg;
        d.q.old = [true; 3];
        d
    }

    #[test]
    fn mark_front_marks_the_oldest_unmarked_packet_of_the_arrivals_group() {
        // Queue: robust, fragile, robust, fragile. A fragile arrival marks the first fragile packet.
        let mut d = loaded(cfg(AecnVariant::Aecn), 20.0, &[10, 200, 10, 200]);
        d.q.count = [1_000_000; 3];
        let out = d.enqueue(pkt_rtt(9, 300, Ecn::Ect0), SimTime::ZERO);
        assert_eq!(out.marks.len(), 1);
        let ecn: Vec<Ecn> = (0..5).map(|i| d.q.fifo.get(i).unwrap().ecn).collect();
        assert_eq!(ecn, vec![Ecn::Ect0, Ecn::Ce, Ecn::Ect0, Ecn::Ect0, Ecn::Ect0]);
        // The next fragile decision skips the marked one.
        d.q.count = [1_000_000; 3];
        d.enqueue(pkt_rtt(10, 300, Ecn::Ect0), SimTime::ZERO);
        let ecn: Vec<Ecn> = (0..6).map(|i| d.q.fifo.get(i).unwrap().ecn).collect();
        assert_eq!(ecn, vec![Ecn::Ect0, Ecn::Ce, Ecn::Ect0, Ecn::Ce, Ecn::Ect0, Ecn::Ect0]);
        // Flow queues are maintained through departures.
        assert_eq!(d.q.group_len(RttGroup::Fragile), 4);
        d.dequeue(SimTime::ZERO);
        d.dequeue(SimTime::ZERO);
        assert_eq!((d.q.group_len(RttGroup::Robust), d.q.group_len(RttGroup::Fragile)), (1, 3));
    }

    #[test]
    fn not_ect_arrival_is_dropped_on_a_decision_and_above_max_th() {
        let mut d = loaded(cfg(AecnVariant::Aecn), 20.0, &[10, 200]);
        d.q.count = [1_000_000; 3];
        let out = d.enqueue(pkt_rtt(9, 100, Ecn::NotEct), SimTime::ZERO);
        assert_eq!(out.drops[0].1, DropReason::Early);
        let mut d = loaded(cfg(AecnVariant::Aecn), 31.0, &[10, 200]);
        let out = d.enqueue(pkt_rtt(9, 100, Ecn::Ect0), SimTime::ZERO);
        assert_eq!(out.drops[0].1, DropReason::Forced);
        assert!(out.marks.is_empty());
    }

    #[test]
    fn measured_mark_rates_follow_group_max_p() {
        // avg pinned at 20 (midway): p_b = max_p / 2: fragile 0.1, average 0.25, robust 0.5 (b = 2.5, capped 1 -> 0.5).
        let mut c = cfg(AecnVariant::Aecn);
        c.drop_spacing = DropSpacing::Geometric;
        c.limit = Limit::Packets(100_000);
        let mut d = loaded(c, 20.0, &[10, 100, 200]);
        let mut marks = [0u32; 3];
        let n = 40_000u32;
        for i in 0..n {
            for (g, rtt) in [(0usize, 10u32), (1, 100), (2, 200)] {
                let out = d.enqueue(pkt_rtt(1000 + u64::from(i) * 3 + g as u64, rtt, Ecn::Ect0), SimTime::ZERO);
                marks[g] += u32::try_from(out.marks.len()).unwrap();
                d.dequeue(SimTime::ZERO);
            }
        }
        let rate = |g: usize| f64::from(marks[g]) / f64::from(n);
        assert!((rate(0) - 0.5).abs() < 0.01, "robust {}", rate(0));
        assert!((rate(1) - 0.25).abs() < 0.01, "average {}", rate(1));
        assert!((rate(2) - 0.1).abs() < 0.01, "fragile {}", rate(2));
    }

    #[test]
    fn invariants_hold_over_random_workouts() {
        for (i, variant) in
            [AecnVariant::Aecn, AecnVariant::Aecn2, AecnVariant::Aecn3, AecnVariant::Aecn4].into_iter().enumerate()
        {
            let mut c = cfg(variant);
            c.limit = Limit::Packets(40);
            c.min_th = 3.0;
            c.max_th = 12.0;
            c.robust_min_th = 1.0;
            c.wide_max_th = 30.0;
            c.w_q = 0.05;
            c.count_scope = if i % 2 == 0 { CountScope::Group } else { CountScope::Queue };
            for seed in 0..8 {
                random_workout(AnyQdisc::Aecn(Aecn::new(c)), 77 * i as u64 + seed, 3000, 2_000_000);
            }
        }
    }
}
