//! FQ-PIE: flow queueing with PIE on each flow queue.
//!
//! Read first:
//! - Linux `net/sched/sch_fq_pie.c` (`fq_pie_qdisc_enqueue`, `fq_pie_qdisc_dequeue`,
//!   `fq_pie_timer`, `fq_pie_init`) and `net/sched/pie.c` (`pie_drop_early`,
//!   `pie_process_dequeue`, `pie_calculate_probability`): FQ-PIE is defined by this code
//!   (Ramakrishnan et al., "FQ-PIE queue discipline in the Linux kernel", 2019).
//! - RFC 8290 §4 (the flow queueing it shares with FQ-CoDel: [`super::flow_queues`]) and
//!   RFC 8033 (the PIE controller each flow queue runs: [`super::pie::PieVars`]).
//! - ns-3 `fq-pie-queue-disc.cc` (`FqPieQueueDisc`: a `PieQueueDisc` per flow queue and
//!   FQ-CoDel's overflow drop): where ns-3 and Linux differ, an option named after both.
//!
//! Unlike FQ-CoDel, the AQM acts at enqueue: an arriving packet is dropped or CE-marked by
//! its flow queue's PIE, with that queue's probability and backlog (Linux
//! `pie_drop_early(..., sel_flow->backlog, ...)`). One timer updates every flow's
//! probability each `t_update` (Linux `fq_pie_timer`). Here each flow's updates run lazily
//! on the same clock (`t_update`, `2 t_update`, ...; [`super::Ticker`]) when the flow next
//! sees a packet: a flow's inputs do not change between its own packet events, so this is
//! the shared timer exactly, and an idle flow costs nothing while it is idle.

use serde::{Deserialize, Serialize};

use super::codel::ce_threshold_mark;
use super::flow_queues::{flow_queue_accessors, FlowQueues};
use super::pie::{PieConfig, PieVars};
use super::QueuedPacket;
use super::{DropReason, QdiscCx, QueueDisc};
use crate::packet::Ecn;
use crate::time::{SimDuration, SimTime};

/// What happens when the flow queues together hold `limit_packets`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FqPieOverflow {
    /// Linux `fq_pie_qdisc_enqueue`: the arriving packet is dropped (`qdisc_qlen >= limit`).
    Linux,
    /// ns-3 `FqPieQueueDisc::FqPieDrop`: the arrival joins its queue, then packets are dropped
    /// from the head of the fattest queue until half its backlog is gone, at most `drop_batch`.
    Ns3,
}

/// Resolved FQ-PIE parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FqPieConfig {
    /// Linux `limit`, ns-3 `MaxSize`: packets held in all queues together.
    pub limit_packets: u64,
    /// Linux `flows`, ns-3 `Flows`: the number of flow queues.
    pub flows: u32,
    /// Linux `quantum`, ns-3 quantum: DRR bytes per round.
    pub quantum: u32,
    /// The PIE controller of each flow queue (its `limit` is not used: `limit_packets` bounds
    /// all queues together); `mark_ecn_threshold` is Linux's `ecn_prob` / 100.
    pub pie: PieConfig,
    /// The overflow rule.
    pub overflow: FqPieOverflow,
    /// ns-3 `DropBatchSize`: most packets one overflow drops from the fattest queue.
    pub drop_batch: u32,
    /// The hash's perturbation; `None`: drawn from the queue's stream.
    pub perturbation: Option<u32>,
    /// ns-3 `CeThreshold`: ECT(1) and CE packets whose sojourn exceeds it are marked (with
    /// `ce_threshold_ect1` only).
    pub ce_threshold: Option<SimDuration>,
    /// ns-3 `UseL4s`: ECT(1) and CE packets skip their queue's PIE (at enqueue and dequeue) and
    /// meet only `ce_threshold`.
    pub ce_threshold_ect1: bool,
}

impl FqPieConfig {
    /// ns-3 `PieQueueDisc` with `UseL4s`: is `pkt` one that skips PIE?
    fn skips_pie(&self, ecn: Ecn) -> bool {
        // ns-3 PieQueueDisc::DoEnqueue/DoDequeue: (tos & 0x3) == 1 (ECT(1)) or 3 (CE), with UseL4s.
        self.ce_threshold_ect1 && self.ce_threshold.is_some() && matches!(ecn, Ecn::Ect1 | Ecn::Ce)
    }
}

/// An FQ-PIE queue: the shared flow queues ([`FlowQueues`]) with PIE's state per queue.
#[derive(Debug)]
pub struct FqPie {
    cfg: FqPieConfig,
    q: FlowQueues<PieVars>,
}

impl FqPie {
    /// An empty FQ-PIE queue.
    #[must_use]
    pub fn new(cfg: FqPieConfig) -> Self {
        let vars = PieVars::new(&cfg.pie);
        FqPie { cfg, q: FlowQueues::new(cfg.flows, cfg.quantum, cfg.perturbation, || vars) }
    }

    /// Bring flow queue `idx`'s probability up to `now` (Linux `fq_pie_timer`: every flow, each `tupdate`).
    fn catch_up(&mut self, idx: u32, now: SimTime) {
        let flow = self.q.flow_mut(idx);
        flow.vars.catch_up(&self.cfg.pie, flow.fifo.bytes(), now);
    }
}

impl QueueDisc for FqPie {
    fn enqueue(&mut self, pkt: QueuedPacket, cx: &mut QdiscCx<'_>) {
        // RFC 8290 §4.1.1 (Linux fq_pie_classify): classify into a flow queue by hashing the 5-tuple.
        let idx = self.q.classify(&pkt, cx.rng);
        self.catch_up(idx, cx.now);
        if self.cfg.overflow == FqPieOverflow::Linux && self.q.totals.packets >= self.cfg.limit_packets {
            // Linux fq_pie_qdisc_enqueue: if (qdisc_qlen(sch) >= sch->limit) goto out (drop, accu_prob = 0).
            self.q.flow_mut(idx).vars.on_overflow();
            cx.drop_packet(pkt, DropReason::Overflow);
            return;
        }
        let flow = self.q.flow_mut(idx);
        let pkt = if self.cfg.skips_pie(pkt.ecn) {
            // ns-3 PieQueueDisc::DoEnqueue (UseL4s): an ECT(1) or CE packet is enqueued without DropEarly.
            pkt
        } else {
            // Linux fq_pie_qdisc_enqueue: pie_drop_early(..., sel_flow->backlog, skb->len), then mark
            // if ecn && prob <= ecn_prob, else drop: the flow queue's own PIE decides at arrival.
            let Some(pkt) = flow.vars.admit(&self.cfg.pie, flow.fifo.bytes(), pkt, cx) else { return };
            pkt
        };
        self.q.push(idx, pkt);
        if self.cfg.overflow == FqPieOverflow::Ns3 && self.q.totals.packets > self.cfg.limit_packets {
            // ns-3 FqPieQueueDisc::DoEnqueue: if (GetCurrentSize() > GetMaxSize()) FqPieDrop().
            let (fattest, backlog) = self.q.fattest();
            self.catch_up(fattest, cx.now);
            self.q.drop_head_batch(fattest, backlog, self.cfg.drop_batch, cx);
        }
    }

    fn dequeue(&mut self, cx: &mut QdiscCx<'_>) -> Option<QueuedPacket> {
        let cfg = self.cfg;
        self.q.dequeue(cx, |flow, totals, cx| {
            flow.vars.catch_up(&cfg.pie, flow.fifo.bytes(), cx.now);
            let mut p = flow.fifo.pop_front()?;
            totals.remove(&p);
            if cfg.skips_pie(p.ecn) {
                // ns-3 PieQueueDisc::DoDequeue (UseL4s): an ECT(1) or CE packet is marked if its
                // sojourn exceeds CeThreshold, and skips PIE's latency sample.
                if let Some(ce) = cfg.ce_threshold {
                    ce_threshold_mark(&mut p, ce, cx);
                }
                return Some(p);
            }
            // Linux fq_pie_qdisc_dequeue: pie_process_dequeue(skb, ..., &flow->vars, flow->backlog).
            flow.vars.on_dequeue(&cfg.pie, &p, flow.fifo.bytes(), cx.now);
            Some(p)
        })
    }

    flow_queue_accessors!(q);

    // `aqm_state`: the default (none): one probability per flow queue, none stands for the
    // whole queue.
}

#[cfg(test)]
mod tests {
    use super::super::pie::{DelayEstimator, PieDropEarly};
    use super::super::test_support::{pkt, random_workout_flows, Driver};
    use super::super::{AnyQdisc, Limit, MarkReason};
    use super::*;
    use crate::ids::FlowId;
    use crate::packet::Ecn;
    use crate::time::SimDuration;

    /// Linux `fq_pie_init` / `pie_params_init` defaults, ECN on, perturbation fixed.
    fn cfg() -> FqPieConfig {
        FqPieConfig {
            limit_packets: 10_240,
            flows: 1024,
            quantum: 1514,
            pie: PieConfig {
                limit: Limit::Packets(10_240),
                target: SimDuration::from_millis(15),
                t_update: SimDuration::from_millis(15),
                alpha: 0.125,
                beta: 1.25,
                max_burst: SimDuration::from_millis(150),
                ecn: true,
                mark_ecn_threshold: 0.1,
                byte_mode: false,
                mean_pktsize: 1500,
                delay_estimator: DelayEstimator::Timestamp,
                dq_threshold: 16_384,
                cap_drop_adjustment: true,
                derandomize: false,
                drop_early: PieDropEarly::Rfc,
            },
            overflow: FqPieOverflow::Linux,
            drop_batch: 64,
            perturbation: Some(7),
            ce_threshold: None,
            ce_threshold_ect1: false,
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

    /// Flows that hash to distinct queues under `cfg()`, with their queues.
    fn distinct_flows(q: &FqPie, n: usize) -> Vec<(u32, u32)> {
        let mut seen = std::collections::BTreeSet::new();
        let flows: Vec<(u32, u32)> = (0..1000)
            .map(|f| (f, q.q.bucket(&fp(0, f, 100, Ecn::NotEct), 7)))
            .filter(|&(_, b)| seen.insert(b))
            .take(n)
            .collect();
        assert_eq!(flows.len(), n);
        flows
    }

    /// Flow queue `idx` congested: no burst allowance left, `drop_prob` = `p`, latency far above target.
    fn congest(q: &mut FqPie, idx: u32, p: f64) {
        q.q.flow_mut(idx).vars.force(p, 1.0, SimDuration::ZERO);
    }

    // ---- Linux fq_pie_qdisc_enqueue: the decision at enqueue, per flow ----

    #[test]
    fn a_congested_flow_is_dropped_on_arrival_and_a_sparse_flow_is_not() {
        let mut c = cfg();
        c.pie.ecn = false;
        let mut d = Driver::new(FqPie::new(c), 10_000_000, 1);
        let f = distinct_flows(&d.q, 2);
        // Flow A holds a standing queue (above the 2-MTU safeguard) and probability 0.5;
        // flow B's queue is at rest. Nothing is dequeued and no update falls due (t = 1 ms).
        for i in 0..10 {
            d.enqueue(fp(i, f[0].0, 1500, Ecn::NotEct), ms(0));
        }
        congest(&mut d.q, f[0].1, 0.5);
        let (mut drops_a, mut drops_b) = (0, 0);
        for i in 0..400 {
            drops_a += d.enqueue(fp(100 + i, f[0].0, 1500, Ecn::NotEct), ms(1)).drops.len();
            drops_b += d.enqueue(fp(1000 + i, f[1].0, 1500, Ecn::NotEct), ms(1)).drops.len();
        }
        // RFC 8033 §4.1 with p = 0.5: about half of A's arrivals; B's PIE never drops.
        assert!((150..250).contains(&drops_a), "{drops_a}");
        assert_eq!(drops_b, 0);
        assert!(d.out.drops.iter().all(|(_, r)| *r == DropReason::Early));
        // The dropped packets never joined the queue: the decision is at enqueue.
        assert_eq!(d.q.len_packets(), 10 + 800 - drops_a as u64);
    }

    #[test]
    fn ecn_marks_below_mark_ecn_threshold_and_drops_above() {
        // Linux fq_pie_qdisc_enqueue: mark if ecn && prob <= ecn_prob (10 %), else drop.
        for (p, ecn, want_marks, want_drops) in [
            (0.1, Ecn::Ect0, true, false),
            (0.1, Ecn::Ect1, true, false),
            (0.1, Ecn::NotEct, false, true),
            (0.11, Ecn::Ect0, false, true),
        ] {
            let mut d = Driver::new(FqPie::new(cfg()), 10_000_000, 1);
            let f = distinct_flows(&d.q, 1);
            for i in 0..10 {
                d.enqueue(fp(i, f[0].0, 1500, Ecn::NotEct), ms(0));
            }
            congest(&mut d.q, f[0].1, p);
            let (mut marks, mut drops) = (0, 0);
            for i in 0..2000 {
                let out = d.enqueue(fp(100 + i, f[0].0, 1500, ecn), ms(1));
                marks += out.marks.len();
                drops += out.drops.len();
                assert!(out.marks.iter().all(|m| m.2 == MarkReason::Early));
            }
            assert_eq!(marks > 100, want_marks, "p {p}, {ecn:?}: {marks} marks");
            assert_eq!(drops > 100, want_drops, "p {p}, {ecn:?}: {drops} drops");
            assert!(marks == 0 || drops == 0);
        }
    }

    // ---- ns-3 PieQueueDisc UseL4s / CeThreshold (FqPieQueueDisc passes them to each flow's PIE) ----

    #[test]
    fn with_use_l4s_ect1_and_ce_skip_pie_and_are_marked_above_ce_threshold_only() {
        let mut c = cfg();
        c.pie.ecn = false;
        c.ce_threshold = Some(SimDuration::from_millis(1));
        c.ce_threshold_ect1 = true;
        let mut d = Driver::new(FqPie::new(c), 10_000_000, 1);
        let f = distinct_flows(&d.q, 1);
        for i in 0..10 {
            d.enqueue(fp(i, f[0].0, 1500, Ecn::NotEct), ms(0));
        }
        congest(&mut d.q, f[0].1, 0.5);
        // ns-3 PieQueueDisc::DoEnqueue: ECT(1) and CE skip DropEarly; Not-ECT and ECT(0) meet it.
        let mut drops = [0usize; 4];
        for i in 0..400u64 {
            for (k, ecn) in [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce].into_iter().enumerate() {
                drops[k] += d.enqueue(fp(1000 + 4 * i + k as u64, f[0].0, 100, ecn), ms(1)).drops.len();
            }
        }
        assert!(drops[0] > 100 && drops[1] > 100, "{drops:?}");
        assert_eq!((drops[2], drops[3]), (0, 0), "{drops:?}");
        // ns-3 PieQueueDisc::DoDequeue: an ECT(1) packet whose sojourn exceeds CeThreshold is
        // marked (CE_THRESHOLD_EXCEEDED_MARK); at or below it, or ECT(0), it is not.
        let mut d = Driver::new(FqPie::new(c), 10_000_000, 1);
        let f = distinct_flows(&d.q, 1);
        d.enqueue(fp(0, f[0].0, 1500, Ecn::Ect1), ms(0));
        d.enqueue(fp(1, f[0].0, 1500, Ecn::Ect0), ms(0));
        d.enqueue(fp(2, f[0].0, 1500, Ecn::Ect1), ms(0));
        d.enqueue(fp(3, f[0].0, 1500, Ecn::Ect1), ms(0));
        let at = |x_us: u64| SimTime::from_nanos(x_us * 1000);
        assert_eq!(d.dequeue(at(1000)).unwrap().ecn, Ecn::Ect1, "sojourn 1 ms: not above the threshold");
        assert!(d.out.marks.is_empty());
        assert_eq!(d.dequeue(at(1001)).unwrap().ecn, Ecn::Ect0, "ECT(0) meets PIE, not the threshold");
        assert!(d.out.marks.is_empty());
        assert_eq!(d.dequeue(at(1001)).unwrap().ecn, Ecn::Ce);
        assert!(d.out.marks.iter().all(|m| m.2 == MarkReason::CeThreshold) && d.out.marks.len() == 1);
        // Without UseL4s the same packets are PIE's alone: no CeThreshold mark.
        let mut d = Driver::new(FqPie::new(cfg()), 10_000_000, 1);
        d.enqueue(fp(0, f[0].0, 1500, Ecn::Ect1), ms(0));
        d.enqueue(fp(1, f[0].0, 1500, Ecn::Ect1), ms(0));
        d.dequeue(ms(5));
        assert_eq!(d.dequeue(ms(5)).unwrap().ecn, Ecn::Ect1);
        assert!(d.out.marks.is_empty());
    }

    // ---- Linux fq_pie_timer: one clock for every flow ----

    #[test]
    fn every_flow_is_updated_each_t_update_on_one_clock_even_while_idle() {
        let mut d = Driver::new(FqPie::new(cfg()), 10_000_000, 1);
        let f = distinct_flows(&d.q, 2);
        // Flow A active from 0, flow B's first packet at 22 ms: both are on the grid 15, 30, ... ms.
        d.enqueue(fp(0, f[0].0, 1500, Ecn::NotEct), ms(0));
        d.enqueue(fp(1, f[1].0, 1500, Ecn::NotEct), ms(22));
        assert_eq!(d.q.q.flow(f[1].1).vars.next_update(), ms(30));
        d.enqueue(fp(2, f[0].0, 1500, Ecn::NotEct), ms(22));
        assert_eq!(d.q.q.flow(f[0].1).vars.next_update(), ms(30));
        // An idle flow with probability 0.5 and no latency: by 150 ms, ten updates of RFC 8033
        // §4.2 have applied (p = alpha (0 - target) each, then the idle decay x 0.98), though
        // the flow saw no packet in between.
        let idle = distinct_flows(&d.q, 3)[2];
        d.q.q.flow_mut(idle.1).vars.force(0.5, 0.0, SimDuration::ZERO);
        let mut want = 0.5f64;
        for _ in 0..10 {
            want = ((want - 0.125 * 0.015) * 0.98).clamp(0.0, 1.0);
        }
        d.enqueue(fp(3, idle.0, 100, Ecn::NotEct), ms(150));
        let got = d.q.q.flow(idle.1).vars.drop_prob();
        assert!((got - want).abs() < 1e-15, "{got} vs {want}");
        // Flow A's probability stayed its own (the flows share the clock, not the state).
        assert_eq!(d.q.q.flow(f[0].1).vars.drop_prob(), 0.0);
    }

    #[test]
    fn a_standing_queue_raises_only_its_own_flows_probability() {
        let mut d = Driver::new(FqPie::new(cfg()), 10_000_000, 1);
        let f = distinct_flows(&d.q, 2);
        // Flow A: two arrivals per ms, flow B: one every 10 ms; the link takes one packet per ms
        // (DRR serves B whenever it has a packet), so A's queue and its sojourn grow.
        let mut uid = 0;
        for t in 0..600u64 {
            d.enqueue(fp(uid, f[0].0, 1000, Ecn::Ect0), ms(t));
            d.enqueue(fp(uid + 1, f[0].0, 1000, Ecn::Ect0), ms(t));
            uid += 2;
            if t % 10 == 0 {
                d.enqueue(fp(uid, f[1].0, 1000, Ecn::Ect0), ms(t));
                uid += 1;
            }
            d.dequeue(ms(t));
        }
        d.dequeue(ms(600));
        let (pa, pb) = (d.q.q.flow(f[0].1).vars.drop_prob(), d.q.q.flow(f[1].1).vars.drop_prob());
        assert!(pa > 0.01, "the standing flow's probability rose: {pa}");
        assert_eq!(pb, 0.0, "the sparse flow's did not");
    }

    // ---- RFC 8290 §4.2: deficit round robin (the scheduler FQ-CoDel uses) ----

    #[test]
    fn drr_gives_each_backlogged_flow_a_quantum_of_bytes_per_round() {
        let mut d = Driver::new(FqPie::new(cfg()), 10_000_000, 1);
        let f = distinct_flows(&d.q, 2);
        for i in 0..40 {
            d.enqueue(fp(i, f[0].0, 1500, Ecn::NotEct), ms(0));
            d.enqueue(fp(1000 + i, f[1].0, 300, Ecn::NotEct), ms(0));
        }
        let mut bytes = [0u64; 2];
        for _ in 0..30 {
            let p = d.dequeue(ms(1)).unwrap();
            bytes[usize::from(p.flow.0 == f[1].0)] += u64::from(p.size);
        }
        assert!(bytes[0].abs_diff(bytes[1]) <= 1514 + 1500, "{bytes:?}");
        // A new flow is served before the old ones.
        let new = distinct_flows(&d.q, 3)[2].0;
        d.enqueue(fp(5000, new, 100, Ecn::NotEct), ms(1));
        assert_eq!(d.dequeue(ms(1)).unwrap().flow.0, new);
    }

    // ---- Overflow: Linux drops the arrival, ns-3 the fattest queue's head ----

    #[test]
    fn overflow_linux_drops_the_arrival_ns3_half_the_fattest_queue() {
        let mut c = cfg();
        c.limit_packets = 100;
        let mut d = Driver::new(FqPie::new(c), 10_000_000, 1);
        let f = distinct_flows(&d.q, 2);
        for i in 0..80 {
            d.enqueue(fp(i, f[0].0, 1000, Ecn::NotEct), ms(0));
        }
        for i in 0..20 {
            assert!(d.enqueue(fp(100 + i, f[1].0, 1000, Ecn::NotEct), ms(0)).drops.is_empty());
        }
        // Linux: the 101st packet, the sparse flow's, is dropped itself.
        let out = d.enqueue(fp(500, f[1].0, 1000, Ecn::NotEct), ms(0));
        assert_eq!(out.drops.iter().map(|(p, r)| (p.uid(), *r)).collect::<Vec<_>>(), vec![(500, DropReason::Overflow)]);
        assert_eq!(d.q.len_packets(), 100);
        // ns-3: it joins its queue; half of the fat flow's 80 000 bytes go, from its head.
        c.overflow = FqPieOverflow::Ns3;
        let mut d = Driver::new(FqPie::new(c), 10_000_000, 1);
        for i in 0..80 {
            d.enqueue(fp(i, f[0].0, 1000, Ecn::NotEct), ms(0));
        }
        for i in 0..20 {
            d.enqueue(fp(100 + i, f[1].0, 1000, Ecn::NotEct), ms(0));
        }
        let out = d.enqueue(fp(500, f[1].0, 1000, Ecn::NotEct), ms(0));
        assert_eq!(out.drops.iter().map(|(p, _)| p.uid()).collect::<Vec<_>>(), (0..40).collect::<Vec<_>>());
        assert!(out.drops.iter().all(|(_, r)| *r == DropReason::Overflow));
        assert_eq!(d.q.len_packets(), 61);
        // At most drop_batch.
        c.drop_batch = 8;
        let mut d = Driver::new(FqPie::new(c), 10_000_000, 1);
        for i in 0..101 {
            d.enqueue(fp(i, f[0].0, 1000, Ecn::NotEct), ms(0));
        }
        assert_eq!(d.q.len_packets(), 93);
    }

    #[test]
    fn invariants_hold_over_random_workouts() {
        for seed in 0..8 {
            let mut c = cfg();
            c.flows = 4;
            c.limit_packets = 40;
            c.pie.target = SimDuration::from_millis(3);
            c.pie.max_burst = SimDuration::from_millis(30);
            c.pie.ecn = seed % 2 == 0;
            c.pie.byte_mode = seed % 3 == 0;
            c.pie.derandomize = seed % 4 < 2;
            c.pie.delay_estimator = if seed % 5 == 0 { DelayEstimator::DequeueRate } else { DelayEstimator::Timestamp };
            c.overflow = if seed >= 4 { FqPieOverflow::Ns3 } else { FqPieOverflow::Linux };
            c.perturbation = None;
            random_workout_flows(AnyQdisc::FqPie(FqPie::new(c)), seed, 4000, 2_000_000, 6);
        }
    }
}
