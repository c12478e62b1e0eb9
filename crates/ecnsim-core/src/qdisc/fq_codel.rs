//! FQ-CoDel: flow queueing with CoDel on each flow queue.
//!
//! Read first:
//! - RFC 8290 (Hoeiland-Joergensen, McKenney, Taht, Gettys, Dumazet): §4 (the
//!   algorithm), §4.1 (enqueue: classify, timestamp, overflow from the fattest
//!   queue), §4.2 (dequeue: the deficit round robin over new and old queues),
//!   §5 (parameters: `flows` 1024, `quantum` 1514, `limit` 10240 packets, ...).
//! - Linux `net/sched/sch_fq_codel.c` (`fq_codel_enqueue`, `fq_codel_drop`,
//!   `fq_codel_dequeue`) for what the RFC leaves open: `memory_limit`,
//!   `drop_batch_size`, `ce_threshold` and `ce_threshold_ect1`.
//! - ns-3 `fq-codel-queue-disc.cc` and `codel-queue-disc.cc` (`UseL4s`,
//!   `CeThreshold`, `DropBatchSize`): where ns-3 and Linux differ, an option
//!   whose values are named after the two sources.
//!
//! Each flow queue runs the same CoDel state machine as the `codel` queue
//! ([`super::codel::CodelVars`]). Packets are sorted into `flows` queues by an
//! integer hash of their flow identity (transport and flow id, which name the
//! connection as its 5-tuple does) and a per-queue perturbation, so flows may
//! share a queue as they do by hash collision in Linux.

use serde::{Deserialize, Serialize};

use super::codel::{ce_threshold_mark, CodelLaw, CodelSource, CodelVars};
use super::flow_queues::{flow_queue_accessors, FlowQueue, FlowQueues, Totals};
use super::QueuedPacket;
use super::{Fifo, QdiscCx, QueueDisc};
use crate::packet::Ecn;
use crate::time::SimDuration;

/// The two references, for the options where they differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FqSource {
    /// Linux `sch_fq_codel.c` / `codel_impl.h`.
    Linux,
    /// ns-3 `FqCoDelQueueDisc` / `CoDelQueueDisc`.
    Ns3,
}

/// Resolved FQ-CoDel parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FqCodelConfig {
    /// RFC 8290 §5.2.4 `limit`: packets held in all queues together.
    pub limit_packets: u64,
    /// Linux `memory_limit`: bytes held in all queues together (packet sizes, see the docs).
    pub memory_limit: u64,
    /// RFC 8290 §5.2.3 `flows`: the number of flow queues.
    pub flows: u32,
    /// RFC 8290 §5.2.2 `quantum`, bytes.
    pub quantum: u32,
    /// CoDel TARGET (RFC 8290 §5.2.1 / RFC 8289 §4.4).
    pub target: SimDuration,
    /// CoDel INTERVAL.
    pub interval: SimDuration,
    /// CoDel MAXPACKET: a backlog of at most this many bytes is never above target.
    pub max_packet: u64,
    /// RFC 8290 §5.2.7 `ecn`: CoDel marks ECT packets instead of dropping them.
    pub ecn: bool,
    /// Mark packets whose sojourn exceeds this (Linux `ce_threshold`, ns-3 `CeThreshold`).
    pub ce_threshold: Option<SimDuration>,
    /// `ce_threshold` applies to ECT(1) packets only (Linux `ce_threshold_ect1`, ns-3 `UseL4s`).
    pub ce_threshold_ect1: bool,
    /// Linux `drop_batch_size`: most packets one overflow drops from the fattest queue.
    pub drop_batch: u32,
    /// The hash's perturbation (Linux `q->perturbation`); `None`: drawn from the queue's stream.
    pub perturbation: Option<u32>,
    /// MAXPACKET compares the whole queue's backlog, `<=` (Linux) or the flow queue's, `<` (ns-3).
    pub max_packet_backlog: FqSource,
    /// An overflow adds the packets it dropped to the fat queue's CoDel count (Linux) or not (ns-3).
    pub overflow_count: FqSource,
    /// With `ce_threshold_ect1`: ECT(1) packets also go through CoDel's control law (Linux),
    /// or ECT(1) and CE packets see only the threshold (ns-3 `UseL4s`).
    pub l4s_mode: FqSource,
}

/// An FQ-CoDel queue: the shared flow queues ([`FlowQueues`]) with CoDel's state per queue.
#[derive(Debug)]
pub struct FqCodel {
    cfg: FqCodelConfig,
    q: FlowQueues<CodelVars>,
}

/// A flow queue as its CoDel sees it, keeping the queue's totals.
struct FlowSource<'a> {
    fifo: &'a mut Fifo,
    totals: &'a mut Totals,
    max_packet: u64,
    backlog: FqSource,
}

impl CodelSource for FlowSource<'_> {
    fn pop(&mut self) -> Option<QueuedPacket> {
        let p = self.fifo.pop_front()?;
        self.totals.remove(&p);
        Some(p)
    }
    fn at_most_one_mtu(&self) -> bool {
        match self.backlog {
            // Linux fq_codel_dequeue: codel_dequeue(sch, &sch->qstats.backlog, ...): backlog <= mtu.
            FqSource::Linux => self.totals.bytes <= self.max_packet,
            // ns-3 CoDelQueueDisc::OkToDrop: GetInternalQueue(0)->GetNBytes() < m_minBytes.
            FqSource::Ns3 => self.fifo.bytes() < self.max_packet,
        }
    }
}

impl FqCodel {
    /// An empty FQ-CoDel queue.
    #[must_use]
    pub fn new(cfg: FqCodelConfig) -> Self {
        FqCodel { cfg, q: FlowQueues::new(cfg.flows, cfg.quantum, cfg.perturbation, CodelVars::default) }
    }

    /// The CoDel law of every flow queue.
    fn law(&self) -> CodelLaw {
        CodelLaw { target: self.cfg.target, interval: self.cfg.interval, ecn: self.cfg.ecn }
    }

    /// The next packet of `flow`: CoDel's, or in ns-3's L4S mode an ECT(1) or CE head
    /// packet straight away with only the threshold applied.
    fn flow_dequeue(
        cfg: FqCodelConfig,
        law: CodelLaw,
        flow: &mut FlowQueue<CodelVars>,
        totals: &mut Totals,
        cx: &mut QdiscCx<'_>,
    ) -> Option<QueuedPacket> {
        let l4s = cfg.ce_threshold_ect1 && cfg.ce_threshold.is_some();
        if l4s && cfg.l4s_mode == FqSource::Ns3 {
            // ns-3 CoDelQueueDisc::DoDequeue (UseL4s): an ECT(1) or CE packet skips the control law.
            if flow.fifo.front().is_some_and(|p| matches!(p.ecn, Ecn::Ect1 | Ecn::Ce)) {
                let mut p = flow.fifo.pop_front().expect("a head");
                totals.remove(&p);
                if let Some(ce) = cfg.ce_threshold {
                    ce_threshold_mark(&mut p, ce, cx);
                }
                return Some(p);
            }
        }
        let mut src =
            FlowSource { fifo: &mut flow.fifo, totals, max_packet: cfg.max_packet, backlog: cfg.max_packet_backlog };
        let mut p = flow.vars.dequeue(law, &mut src, cx)?;
        if let Some(ce) = cfg.ce_threshold {
            // Linux codel_dequeue: ce_threshold_mask/selector = 1/1 with ce_threshold_ect1 (ECT(1) only).
            if !cfg.ce_threshold_ect1 || p.ecn == Ecn::Ect1 {
                ce_threshold_mark(&mut p, ce, cx);
            }
        }
        Some(p)
    }
}

impl QueueDisc for FqCodel {
    fn enqueue(&mut self, pkt: QueuedPacket, cx: &mut QdiscCx<'_>) {
        // RFC 8290 §4.1.1: classify into a flow queue by hashing the 5-tuple.
        let idx = self.q.classify(&pkt, cx.rng);
        self.q.push(idx, pkt);
        // Linux fq_codel_enqueue: if (++qlen <= limit && !memory_limited) return; else fq_codel_drop.
        if self.q.totals.packets > self.cfg.limit_packets || self.q.totals.bytes > self.cfg.memory_limit {
            // Linux fq_codel_drop, ns-3 FqCoDelDrop: half of the fattest queue, at most drop_batch.
            let (fattest, backlog) = self.q.fattest();
            let dropped = self.q.drop_head_batch(fattest, backlog, self.cfg.drop_batch, cx);
            if self.cfg.overflow_count == FqSource::Linux {
                // Linux fq_codel_drop: flow->cvars.count += i ("tell codel to increase its signal strength").
                let vars = &mut self.q.flow_mut(fattest).vars;
                vars.count = vars.count.saturating_add(dropped);
            }
        }
    }

    fn dequeue(&mut self, cx: &mut QdiscCx<'_>) -> Option<QueuedPacket> {
        let (cfg, law) = (self.cfg, self.law());
        self.q.dequeue(cx, |flow, totals, cx| Self::flow_dequeue(cfg, law, flow, totals, cx))
    }

    flow_queue_accessors!(q);

    // `aqm_state`: the default (none): one CoDel state per flow queue, none stands for the
    // whole queue.
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{pkt, random_workout_flows, Driver};
    use super::super::{AnyQdisc, DropReason, MarkReason};
    use super::*;
    use crate::ids::FlowId;
    use crate::packet::Transport;
    use crate::time::SimTime;

    fn cfg() -> FqCodelConfig {
        FqCodelConfig {
            limit_packets: 10_240,
            memory_limit: 32 << 20,
            flows: 1024,
            quantum: 1514,
            target: SimDuration::from_millis(5),
            interval: SimDuration::from_millis(100),
            max_packet: 1500,
            ecn: true,
            ce_threshold: None,
            ce_threshold_ect1: false,
            drop_batch: 64,
            perturbation: Some(7),
            max_packet_backlog: FqSource::Linux,
            overflow_count: FqSource::Linux,
            l4s_mode: FqSource::Linux,
        }
    }

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    /// A packet of `flow` (TCP), `size` bytes.
    fn fp(uid: u64, flow: u32, size: u32, ecn: Ecn) -> QueuedPacket {
        let mut p = pkt(uid, size, ecn);
        p.flow = FlowId(flow);
        p
    }

    /// Flows 0..n that hash to distinct queues under `cfg()` (checked).
    fn distinct_flows(q: &FqCodel, n: u32) -> Vec<u32> {
        let mut seen = std::collections::BTreeSet::new();
        let flows: Vec<u32> =
            (0..1000).filter(|&f| seen.insert(q.q.bucket(&fp(0, f, 100, Ecn::NotEct), 7))).take(n as usize).collect();
        assert_eq!(flows.len(), n as usize);
        flows
    }

    // ---- RFC 8290 §4.1.1: classification ----

    #[test]
    fn hashing_is_deterministic_spreads_flows_and_depends_on_the_perturbation() {
        let q = FqCodel::new(cfg());
        let buckets: Vec<u32> = (0..4096).map(|f| q.q.bucket(&fp(0, f, 100, Ecn::NotEct), 7)).collect();
        assert!(buckets.iter().all(|&b| b < 1024));
        let again: Vec<u32> = (0..4096).map(|f| q.q.bucket(&fp(0, f, 100, Ecn::NotEct), 7)).collect();
        assert_eq!(buckets, again);
        let mut per_bucket = vec![0u32; 1024];
        for &b in &buckets {
            per_bucket[b as usize] += 1;
        }
        // 4 flows per queue on average: no queue holds more than 16.
        assert!(per_bucket.iter().all(|&n| n <= 16), "{:?}", per_bucket.iter().max());
        let other: Vec<u32> = (0..4096).map(|f| q.q.bucket(&fp(0, f, 100, Ecn::NotEct), 8)).collect();
        assert!(buckets.iter().zip(&other).filter(|(a, b)| a != b).count() > 3900);
        // The transport is part of the identity: TCP flow 5 and UDP flow 5 are different flows.
        let tcp_udp_same = (0..64)
            .filter(|&f| {
                let mut u = fp(0, f, 100, Ecn::NotEct);
                u.proto = Transport::Udp;
                q.q.bucket(&u, 7) == q.q.bucket(&fp(0, f, 100, Ecn::NotEct), 7)
            })
            .count();
        assert!(tcp_udp_same <= 2, "{tcp_udp_same}");
    }

    // ---- RFC 8290 §4.2: deficit round robin ----

    #[test]
    fn drr_gives_each_backlogged_flow_a_quantum_of_bytes_per_round() {
        let mut d = Driver::new(FqCodel::new(cfg()), 10_000_000, 1);
        let f = distinct_flows(&d.q, 2);
        // Flow A sends 1500-byte packets, flow B 300-byte packets: per round of 1514 bytes
        // A sends 2 packets, then 1, ... (deficit carries), B sends 6 packets (1800 > 1514).
        for i in 0..40 {
            d.enqueue(fp(i, f[0], 1500, Ecn::NotEct), ms(0));
            d.enqueue(fp(1000 + i, f[1], 300, Ecn::NotEct), ms(0));
        }
        let mut bytes = [0u64; 2];
        for _ in 0..30 {
            let p = d.dequeue(ms(1)).unwrap();
            bytes[usize::from(p.flow.0 == f[1])] += u64::from(p.size);
        }
        // Byte shares stay within one quantum of each other.
        assert!(bytes[0].abs_diff(bytes[1]) <= 1514 + 1500, "{bytes:?}");
    }

    #[test]
    fn a_new_flow_is_served_before_the_old_ones() {
        let mut d = Driver::new(FqCodel::new(cfg()), 10_000_000, 1);
        let f = distinct_flows(&d.q, 2);
        for i in 0..10 {
            d.enqueue(fp(i, f[0], 1500, Ecn::NotEct), ms(0));
        }
        // Flow 0 uses its first quantum (two packets: 1514 - 1500 > 0) and goes to the old list.
        assert_eq!(d.dequeue(ms(1)).unwrap().flow.0, f[0]);
        assert_eq!(d.dequeue(ms(1)).unwrap().flow.0, f[0]);
        d.enqueue(fp(100, f[1], 100, Ecn::NotEct), ms(1));
        // RFC 8290 §4.2: new queues are served first: the sparse flow's packet leaves next.
        assert_eq!(d.dequeue(ms(1)).unwrap().flow.0, f[1]);
    }

    #[test]
    fn an_emptied_new_flow_goes_to_the_end_of_the_old_list_and_cannot_jump_the_queue_again() {
        let mut d = Driver::new(FqCodel::new(cfg()), 10_000_000, 1);
        let f = distinct_flows(&d.q, 3);
        for i in 0..10 {
            d.enqueue(fp(i, f[0], 1500, Ecn::NotEct), ms(0));
            d.enqueue(fp(100 + i, f[1], 1500, Ecn::NotEct), ms(0));
        }
        // Flows 0 and 1 spend their first quanta and become old.
        for _ in 0..4 {
            d.dequeue(ms(0));
        }
        // A sparse flow's packet: new, served first; its queue is then empty.
        d.enqueue(fp(200, f[2], 100, Ecn::NotEct), ms(0));
        assert_eq!(d.dequeue(ms(0)).unwrap().flow.0, f[2]);
        // The next dequeue finds its queue empty: RFC 8290 §4.2 moves it to the end of the old
        // list (behind flows 0 and 1, Linux and ns-3 alike), and serves flow 0.
        assert_eq!(d.dequeue(ms(0)).unwrap().flow.0, f[0]);
        // Its next packet finds the queue on the old list: it is not new again, so it waits for
        // flow 1's turn instead of jumping ahead.
        d.enqueue(fp(201, f[2], 100, Ecn::NotEct), ms(0));
        let order: Vec<u32> = (0..2).map(|_| d.dequeue(ms(0)).unwrap().flow.0).collect();
        assert_eq!(order, vec![f[1], f[2]]);
    }

    // ---- RFC 8290 §4.1: overflow drops from the fattest queue ----

    #[test]
    fn overflow_drops_half_the_fattest_queue_from_its_head_at_most_drop_batch() {
        let mut c = cfg();
        c.limit_packets = 100;
        c.drop_batch = 64;
        let mut d = Driver::new(FqCodel::new(c), 10_000_000, 1);
        let f = distinct_flows(&d.q, 2);
        for i in 0..80 {
            d.enqueue(fp(i, f[0], 1000, Ecn::NotEct), ms(0));
        }
        for i in 0..20 {
            assert!(d.enqueue(fp(100 + i, f[1], 1000, Ecn::NotEct), ms(0)).drops.is_empty());
        }
        // The 101st packet (a sparse flow's) overflows: half of the fat flow's 80 000 bytes go, from its head.
        let out = d.enqueue(fp(500, f[1], 1000, Ecn::NotEct), ms(0));
        let dropped: Vec<u64> = out.drops.iter().map(|(p, _)| p.uid()).collect();
        assert_eq!(dropped, (0..40).collect::<Vec<_>>());
        assert!(out.drops.iter().all(|(_, r)| *r == DropReason::Overflow));
        assert_eq!(d.q.len_packets(), 61);
        // Linux fq_codel_drop: the fat flow's CoDel count grows by the packets dropped.
        let idx = d.q.q.bucket(&fp(0, f[0], 1, Ecn::NotEct), 7);
        assert_eq!(d.q.q.flow(idx).vars.count, 40);
        // A drop batch of 8 stops there.
        let mut c = cfg();
        c.limit_packets = 100;
        c.drop_batch = 8;
        c.overflow_count = FqSource::Ns3;
        let mut d = Driver::new(FqCodel::new(c), 10_000_000, 1);
        for i in 0..100 {
            d.enqueue(fp(i, f[0], 1000, Ecn::NotEct), ms(0));
        }
        assert_eq!(d.enqueue(fp(500, f[1], 1000, Ecn::NotEct), ms(0)).drops.len(), 8);
        assert_eq!(d.q.q.flow(idx).vars.count, 0, "ns-3 leaves the count alone");
    }

    #[test]
    fn the_memory_limit_drops_too() {
        let mut c = cfg();
        c.memory_limit = 10_000;
        let mut d = Driver::new(FqCodel::new(c), 10_000_000, 1);
        let f = distinct_flows(&d.q, 1);
        for i in 0..10 {
            assert!(d.enqueue(fp(i, f[0], 1000, Ecn::NotEct), ms(0)).drops.is_empty());
        }
        assert_eq!(d.enqueue(fp(10, f[0], 1000, Ecn::NotEct), ms(0)).drops.len(), 6);
    }

    // ---- RFC 8290 §4.2 / §5.2.7: CoDel per queue, ECN ----

    #[test]
    fn codel_acts_per_flow_a_sparse_flow_is_not_marked() {
        let mut d = Driver::new(FqCodel::new(cfg()), 10_000_000, 1);
        let f = distinct_flows(&d.q, 2);
        // A standing queue in flow 0 (ECT), one packet per ms in and out, and a sparse flow 1.
        for i in 0..50 {
            d.enqueue(fp(i, f[0], 1000, Ecn::Ect0), ms(0));
        }
        let (mut marks0, mut marks1) = (0, 0);
        for k in 0..400u64 {
            d.enqueue(fp(1000 + k, f[0], 1000, Ecn::Ect0), ms(10 + k));
            if k % 20 == 0 {
                d.enqueue(fp(5000 + k, f[1], 100, Ecn::Ect0), ms(10 + k));
            }
            while let Some(p) = d.dequeue(ms(10 + k)) {
                if p.ecn == Ecn::Ce {
                    if p.flow.0 == f[0] {
                        marks0 += 1;
                    } else {
                        marks1 += 1;
                    }
                }
                if p.flow.0 == f[0] {
                    break;
                }
            }
        }
        assert!(marks0 >= 4, "the standing flow is marked ({marks0})");
        assert_eq!(marks1, 0, "the sparse flow never is");
        assert!(d.out.drops.is_empty());
    }

    // ---- L4S mode: ce_threshold for ECT(1) (Linux ce_threshold_ect1, ns-3 UseL4s) ----

    #[test]
    fn ce_threshold_ect1_marks_only_ect1_above_the_threshold() {
        let mut c = cfg();
        c.ce_threshold = Some(SimDuration::from_millis(1));
        c.ce_threshold_ect1 = true;
        for mode in [FqSource::Linux, FqSource::Ns3] {
            let mut d = Driver::new(FqCodel::new(FqCodelConfig { l4s_mode: mode, ..c }), 10_000_000, 1);
            let f = distinct_flows(&d.q, 1);
            d.enqueue(fp(0, f[0], 1000, Ecn::Ect1), ms(0));
            d.enqueue(fp(1, f[0], 1000, Ecn::Ect0), ms(0));
            d.enqueue(fp(2, f[0], 1000, Ecn::Ect1), ms(2));
            assert_eq!(d.dequeue(ms(2)).unwrap().ecn, Ecn::Ce);
            assert_eq!(d.out.marks[0].2, MarkReason::CeThreshold);
            assert_eq!(d.dequeue(ms(2)).unwrap().ecn, Ecn::Ect0, "ECT(0) is not marked by the threshold");
            assert_eq!(d.dequeue(ms(3)).unwrap().ecn, Ecn::Ect1, "1 ms is not above 1 ms");
        }
    }

    #[test]
    fn l4s_mode_ns3_keeps_ect1_out_of_codels_control_law_linux_does_not() {
        // A standing ECT(1) queue far above target for long: under Linux CoDel's law also marks
        // (MarkReason::Early), under ns-3 only the threshold does (MarkReason::CeThreshold).
        for (mode, expect_early) in [(FqSource::Linux, true), (FqSource::Ns3, false)] {
            let mut c = cfg();
            c.ce_threshold = Some(SimDuration::from_millis(50));
            c.ce_threshold_ect1 = true;
            c.l4s_mode = mode;
            let mut d = Driver::new(FqCodel::new(c), 10_000_000, 1);
            let f = distinct_flows(&d.q, 1);
            for i in 0..30 {
                d.enqueue(fp(i, f[0], 1000, Ecn::Ect1), ms(0));
            }
            let mut early = 0;
            for k in 0..300u64 {
                d.enqueue(fp(100 + k, f[0], 1000, Ecn::Ect1), ms(10 + k));
                d.dequeue(ms(10 + k));
                early += d.out.marks.iter().filter(|m| m.2 == MarkReason::Early).count();
            }
            assert_eq!(early > 0, expect_early, "{mode:?}: {early} control-law marks");
        }
    }

    #[test]
    fn invariants_hold_over_random_workouts() {
        for seed in 0..8 {
            let mut c = cfg();
            c.flows = 4;
            c.limit_packets = 40;
            c.target = SimDuration::from_millis(2);
            c.interval = SimDuration::from_millis(20);
            c.ecn = seed % 2 == 0;
            c.perturbation = None;
            if seed % 3 == 0 {
                c.ce_threshold = Some(SimDuration::from_millis(1));
                c.ce_threshold_ect1 = seed % 2 == 1;
            }
            if seed >= 4 {
                (c.max_packet_backlog, c.overflow_count, c.l4s_mode) = (FqSource::Ns3, FqSource::Ns3, FqSource::Ns3);
            }
            random_workout_flows(AnyQdisc::FqCodel(FqCodel::new(c)), seed, 4000, 2_000_000, 6);
        }
    }
}
