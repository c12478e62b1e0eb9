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
use super::QueuedPacket;
use super::{AqmState, DropReason, Fifo, Limit, QdiscCx, QueueDisc};
use crate::packet::{Ecn, Transport};
use crate::time::{SimDuration, SimTime};

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

/// Which list a flow queue is on (RFC 8290 §4.2; ns-3 `FqCoDelFlow` status).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Inactive,
    New,
    Old,
}

/// "No flow": the end of a list.
const NIL: u32 = u32::MAX;

/// One flow queue: its packets, its CoDel state, its deficit and its link in a list.
#[derive(Debug)]
struct Flow {
    fifo: Fifo,
    vars: CodelVars,
    deficit: i64,
    status: Status,
    next: u32,
}

/// A FIFO list of flow queues, linked through [`Flow::next`] (no allocation).
#[derive(Clone, Copy, Debug)]
struct List {
    head: u32,
    tail: u32,
}

impl List {
    const EMPTY: List = List { head: NIL, tail: NIL };

    fn is_empty(self) -> bool {
        self.head == NIL
    }
}

/// An FQ-CoDel queue.
#[derive(Debug)]
pub struct FqCodel {
    cfg: FqCodelConfig,
    flows: Vec<Flow>,
    new_flows: List,
    old_flows: List,
    packets: u64,
    bytes: u64,
    perturbation: Option<u32>,
}

/// A flow queue as its CoDel sees it, keeping the queue's totals.
struct FlowSource<'a> {
    fifo: &'a mut Fifo,
    packets: &'a mut u64,
    bytes: &'a mut u64,
    max_packet: u64,
    backlog: FqSource,
}

impl CodelSource for FlowSource<'_> {
    fn pop(&mut self) -> Option<QueuedPacket> {
        let p = self.fifo.pop_front()?;
        *self.packets -= 1;
        *self.bytes -= u64::from(p.size);
        Some(p)
    }
    fn at_most_one_mtu(&self) -> bool {
        match self.backlog {
            // Linux fq_codel_dequeue: codel_dequeue(sch, &sch->qstats.backlog, ...): backlog <= mtu.
            FqSource::Linux => *self.bytes <= self.max_packet,
            // ns-3 CoDelQueueDisc::OkToDrop: GetInternalQueue(0)->GetNBytes() < m_minBytes.
            FqSource::Ns3 => self.fifo.bytes() < self.max_packet,
        }
    }
}

/// splitmix64's finaliser (Steele, Lea, Flood 2014): a bijective integer mix.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl FqCodel {
    /// An empty FQ-CoDel queue.
    #[must_use]
    pub fn new(cfg: FqCodelConfig) -> Self {
        let flows = (0..cfg.flows)
            .map(|_| Flow {
                fifo: Fifo::new(Limit::Packets(cfg.limit_packets)),
                vars: CodelVars::default(),
                deficit: 0,
                status: Status::Inactive,
                next: NIL,
            })
            .collect();
        FqCodel {
            cfg,
            flows,
            new_flows: List::EMPTY,
            old_flows: List::EMPTY,
            packets: 0,
            bytes: 0,
            perturbation: cfg.perturbation,
        }
    }

    /// The flow queue of `pkt`: RFC 8290 §4.1.1, a hash of its
    /// flow identity (transport and flow id) and the perturbation, reduced to `flows` (Linux
    /// `reciprocal_scale`).
    fn bucket(&self, pkt: &QueuedPacket, perturbation: u32) -> u32 {
        let proto: u64 = match pkt.proto {
            Transport::Tcp => 1,
            Transport::Udp => 2,
            Transport::External => 3,
        };
        let key = mix64(u64::from(perturbation)) ^ ((proto << 32) | u64::from(pkt.flow.0));
        let h = mix64(key) >> 32;
        // Linux fq_codel_hash: reciprocal_scale(hash, flows_cnt) = (hash * flows) >> 32.
        u32::try_from((h * u64::from(self.cfg.flows)) >> 32).expect("below flows")
    }

    fn push_back(&mut self, list: ListId, idx: u32) {
        self.flows[idx as usize].next = NIL;
        let l = self.list_mut(list);
        let tail = l.tail;
        if tail == NIL {
            *l = List { head: idx, tail: idx };
        } else {
            l.tail = idx;
            self.flows[tail as usize].next = idx;
        }
    }

    fn pop_front(&mut self, list: ListId) -> u32 {
        let head = self.list_mut(list).head;
        let next = self.flows[head as usize].next;
        let l = self.list_mut(list);
        l.head = next;
        if next == NIL {
            l.tail = NIL;
        }
        head
    }

    fn list_mut(&mut self, list: ListId) -> &mut List {
        match list {
            ListId::New => &mut self.new_flows,
            ListId::Old => &mut self.old_flows,
        }
    }

    /// Linux `fq_codel_drop`, ns-3 `FqCoDelDrop`: drop from the head of the queue with the
    /// largest backlog until half of it is gone, at most `drop_batch` packets. Returns the queue.
    fn drop_from_fattest(&mut self, cx: &mut QdiscCx<'_>) -> u32 {
        // RFC 8290 §4.1: "the packet is dropped from the head of the queue with the largest backlog".
        let mut fattest = 0u32;
        let mut max_backlog = 0u64;
        for (i, f) in self.flows.iter().enumerate() {
            if f.fifo.bytes() > max_backlog {
                max_backlog = f.fifo.bytes();
                fattest = u32::try_from(i).expect("flows fit u32");
            }
        }
        // Linux fq_codel_drop: threshold = maxbacklog >> 1; do { drop head } while (++i < max_packets && len < threshold).
        let threshold = max_backlog >> 1;
        let flow = &mut self.flows[fattest as usize];
        let (mut len, mut dropped) = (0u64, 0u32);
        while let Some(p) = flow.fifo.pop_front() {
            len += u64::from(p.size);
            dropped += 1;
            self.packets -= 1;
            self.bytes -= u64::from(p.size);
            cx.drop_packet(p, DropReason::Overflow);
            if dropped >= self.cfg.drop_batch || len >= threshold {
                break;
            }
        }
        if self.cfg.overflow_count == FqSource::Linux {
            // Linux fq_codel_drop: flow->cvars.count += i ("tell codel to increase its signal strength").
            flow.vars.count = flow.vars.count.saturating_add(dropped);
        }
        fattest
    }

    /// The CoDel law of every flow queue.
    fn law(&self) -> CodelLaw {
        CodelLaw { target: self.cfg.target, interval: self.cfg.interval, ecn: self.cfg.ecn }
    }

    /// The next packet of flow queue `idx`: CoDel's, or in ns-3's L4S mode an ECT(1) or CE
    /// head packet straight away with only the threshold applied.
    fn flow_dequeue(&mut self, idx: u32, cx: &mut QdiscCx<'_>) -> Option<QueuedPacket> {
        let (law, cfg) = (self.law(), self.cfg);
        let flow = &mut self.flows[idx as usize];
        let l4s = cfg.ce_threshold_ect1 && cfg.ce_threshold.is_some();
        if l4s && cfg.l4s_mode == FqSource::Ns3 {
            // ns-3 CoDelQueueDisc::DoDequeue (UseL4s): an ECT(1) or CE packet skips the control law.
            if flow.fifo.front().is_some_and(|p| matches!(p.ecn, Ecn::Ect1 | Ecn::Ce)) {
                let mut p = flow.fifo.pop_front().expect("a head");
                self.packets -= 1;
                self.bytes -= u64::from(p.size);
                if let Some(ce) = cfg.ce_threshold {
                    ce_threshold_mark(&mut p, ce, cx);
                }
                return Some(p);
            }
        }
        let mut src = FlowSource {
            fifo: &mut flow.fifo,
            packets: &mut self.packets,
            bytes: &mut self.bytes,
            max_packet: cfg.max_packet,
            backlog: cfg.max_packet_backlog,
        };
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ListId {
    New,
    Old,
}

impl QueueDisc for FqCodel {
    fn enqueue(&mut self, pkt: QueuedPacket, cx: &mut QdiscCx<'_>) {
        let perturbation = match self.perturbation {
            Some(p) => p,
            None => {
                // Linux fq_codel_init: q->perturbation = get_random_u32(); here from the queue's own stream.
                let p = u32::try_from(cx.rng.next_u64() >> 32).expect("32 bits");
                self.perturbation = Some(p);
                p
            }
        };
        // RFC 8290 §4.1.1: classify into a flow queue by hashing the 5-tuple.
        let idx = self.bucket(&pkt, perturbation);
        let size = u64::from(pkt.size);
        let flow = &mut self.flows[idx as usize];
        flow.fifo.push_back(pkt);
        self.packets += 1;
        self.bytes += size;
        if flow.status == Status::Inactive {
            // RFC 8290 §4.1: a queue not on either list joins the new list with a full quantum.
            flow.status = Status::New;
            flow.deficit = i64::from(self.cfg.quantum);
            self.push_back(ListId::New, idx);
        }
        // Linux fq_codel_enqueue: if (++qlen <= limit && !memory_limited) return; else fq_codel_drop.
        if self.packets > self.cfg.limit_packets || self.bytes > self.cfg.memory_limit {
            self.drop_from_fattest(cx);
        }
    }

    fn dequeue(&mut self, cx: &mut QdiscCx<'_>) -> Option<QueuedPacket> {
        loop {
            // RFC 8290 §4.2: serve the new list first, then the old list.
            let list = if !self.new_flows.is_empty() {
                ListId::New
            } else if !self.old_flows.is_empty() {
                ListId::Old
            } else {
                return None;
            };
            let idx = match list {
                ListId::New => self.new_flows.head,
                ListId::Old => self.old_flows.head,
            };
            if self.flows[idx as usize].deficit <= 0 {
                // RFC 8290 §4.2: a queue out of deficit gets another quantum and goes to the end of the old list.
                self.pop_front(list);
                let flow = &mut self.flows[idx as usize];
                flow.deficit += i64::from(self.cfg.quantum);
                flow.status = Status::Old;
                self.push_back(ListId::Old, idx);
                continue;
            }
            if let Some(p) = self.flow_dequeue(idx, cx) {
                // RFC 8290 §4.2: the deficit is decreased by the size of the packet sent.
                self.flows[idx as usize].deficit -= i64::from(p.size);
                return Some(p);
            }
            self.pop_front(list);
            // RFC 8290 §4.2: an empty new queue moves to the end of the old list (so it cannot starve
            // the old ones by coming back as new); an empty old queue leaves the lists. Linux
            // fq_codel_dequeue removes an empty new queue when the old list is empty; ns-3 moves it to
            // the old list, where the same dequeue finds it empty and removes it: the same outcome.
            if list == ListId::New && !self.old_flows.is_empty() {
                self.flows[idx as usize].status = Status::Old;
                self.push_back(ListId::Old, idx);
            } else {
                self.flows[idx as usize].status = Status::Inactive;
            }
        }
    }

    fn len_packets(&self) -> u64 {
        self.packets
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn give_back_memory(&mut self) {
        for f in &mut self.flows {
            f.fifo.give_back_memory();
        }
    }

    fn aqm_state(&mut self, _now: SimTime) -> AqmState {
        AqmState::NONE
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{pkt, random_workout_flows, Driver};
    use super::super::{AnyQdisc, MarkReason};
    use super::*;
    use crate::ids::FlowId;

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
            (0..1000).filter(|&f| seen.insert(q.bucket(&fp(0, f, 100, Ecn::NotEct), 7))).take(n as usize).collect();
        assert_eq!(flows.len(), n as usize);
        flows
    }

    // ---- RFC 8290 §4.1.1: classification ----

    #[test]
    fn hashing_is_deterministic_spreads_flows_and_depends_on_the_perturbation() {
        let q = FqCodel::new(cfg());
        let buckets: Vec<u32> = (0..4096).map(|f| q.bucket(&fp(0, f, 100, Ecn::NotEct), 7)).collect();
        assert!(buckets.iter().all(|&b| b < 1024));
        let again: Vec<u32> = (0..4096).map(|f| q.bucket(&fp(0, f, 100, Ecn::NotEct), 7)).collect();
        assert_eq!(buckets, again);
        let mut per_bucket = vec![0u32; 1024];
        for &b in &buckets {
            per_bucket[b as usize] += 1;
        }
        // 4 flows per queue on average: no queue holds more than 16.
        assert!(per_bucket.iter().all(|&n| n <= 16), "{:?}", per_bucket.iter().max());
        let other: Vec<u32> = (0..4096).map(|f| q.bucket(&fp(0, f, 100, Ecn::NotEct), 8)).collect();
        assert!(buckets.iter().zip(&other).filter(|(a, b)| a != b).count() > 3900);
        // The transport is part of the identity: TCP flow 5 and UDP flow 5 are different flows.
        let tcp_udp_same = (0..64)
            .filter(|&f| {
                let mut u = fp(0, f, 100, Ecn::NotEct);
                u.proto = Transport::Udp;
                q.bucket(&u, 7) == q.bucket(&fp(0, f, 100, Ecn::NotEct), 7)
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
        let idx = d.q.bucket(&fp(0, f[0], 1, Ecn::NotEct), 7) as usize;
        assert_eq!(d.q.flows[idx].vars.count, 40);
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
        assert_eq!(d.q.flows[idx].vars.count, 0, "ns-3 leaves the count alone");
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
