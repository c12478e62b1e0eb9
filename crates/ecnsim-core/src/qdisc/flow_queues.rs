//! Flow queueing: what FQ-CoDel and FQ-PIE share.
//!
//! Read first:
//! - RFC 8290 §4.1.1 (classification by a hash of the flow identity), §4.1 (overflow:
//!   drop from the head of the queue with the largest backlog), §4.2 (the deficit round
//!   robin over the lists of new and old queues, with a quantum of bytes).
//! - Linux `net/sched/sch_fq_codel.c` and `sch_fq_pie.c`, ns-3 `fq-codel-queue-disc.cc`
//!   and `fq-pie-queue-disc.cc`: the same scheduler around a different AQM per queue.
//!
//! [`FlowQueues`] holds `flows` FIFOs, each with the AQM state `V` of its discipline
//! (CoDel's or PIE's variables), the two lists linked through the queues themselves (no
//! allocation after construction), and the totals of all queues. The discipline decides
//! when a packet is admitted, dropped or marked; the scheduler serves queues through a
//! closure the discipline passes to [`FlowQueues::dequeue`] (monomorphised: no dynamic
//! dispatch on the per-packet path).

use super::QueuedPacket;
use super::{DropReason, Fifo, Limit, QdiscCx};
use crate::packet::Transport;
use crate::rng::SimRng;

/// Which list a flow queue is on (RFC 8290 §4.2; ns-3 `FqCoDelFlow` status).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Inactive,
    New,
    Old,
}

/// "No flow": the end of a list.
const NIL: u32 = u32::MAX;

/// One flow queue: its packets, its AQM state, its deficit and its link in a list.
#[derive(Debug)]
pub(crate) struct FlowQueue<V> {
    /// The queue's packets.
    pub(crate) fifo: Fifo,
    /// The discipline's AQM state for this queue.
    pub(crate) vars: V,
    deficit: i64,
    status: Status,
    next: u32,
}

/// Packets and bytes in all flow queues together.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Totals {
    pub(crate) packets: u64,
    pub(crate) bytes: u64,
}

impl Totals {
    /// `p` left a flow queue (sent or dropped).
    pub(crate) fn remove(&mut self, p: &QueuedPacket) {
        self.packets -= 1;
        self.bytes -= u64::from(p.size);
    }
}

/// A FIFO list of flow queues, linked through [`FlowQueue::next`].
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ListId {
    New,
    Old,
}

/// `flows` flow queues served by deficit round robin.
#[derive(Debug)]
pub(crate) struct FlowQueues<V> {
    flows: Vec<FlowQueue<V>>,
    new_flows: List,
    old_flows: List,
    /// All queues together.
    pub(crate) totals: Totals,
    perturbation: Option<u32>,
    quantum: u32,
}

/// The [`super::QueueDisc`] accessors of a discipline that keeps its packets in a
/// [`FlowQueues`] field (`$q`): packets and bytes of all queues together, and giving back
/// their spare slots. Expanded inside each discipline's `impl QueueDisc` (FQ-CoDel, FQ-PIE),
/// so the calls stay static.
macro_rules! flow_queue_accessors {
    ($q:ident) => {
        fn len_packets(&self) -> u64 {
            self.$q.totals.packets
        }

        fn len_bytes(&self) -> u64 {
            self.$q.totals.bytes
        }

        fn give_back_memory(&mut self) {
            self.$q.give_back_memory();
        }
    };
}
pub(crate) use flow_queue_accessors;

/// splitmix64's finaliser (Steele, Lea, Flood 2014): a bijective integer mix.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl<V> FlowQueues<V> {
    /// `flows` empty queues, each with the AQM state `vars()`, a DRR quantum of `quantum`
    /// bytes and the hash's `perturbation` (`None`: drawn at the first packet).
    pub(crate) fn new(flows: u32, quantum: u32, perturbation: Option<u32>, mut vars: impl FnMut() -> V) -> Self {
        let flows = (0..flows)
            .map(|_| FlowQueue {
                // The discipline bounds what all queues hold together.
                fifo: Fifo::new(Limit::Packets(u64::MAX)),
                vars: vars(),
                deficit: 0,
                status: Status::Inactive,
                next: NIL,
            })
            .collect();
        FlowQueues {
            flows,
            new_flows: List::EMPTY,
            old_flows: List::EMPTY,
            totals: Totals::default(),
            perturbation,
            quantum,
        }
    }

    /// The flow queue of `pkt` (RFC 8290 §4.1.1: a hash of the 5-tuple), drawing the
    /// perturbation from the queue's stream the first time (Linux `fq_codel_init`,
    /// `fq_pie`'s `skb_get_hash`: `get_random_u32()` at init).
    pub(crate) fn classify(&mut self, pkt: &QueuedPacket, rng: &mut SimRng) -> u32 {
        let perturbation = match self.perturbation {
            Some(p) => p,
            None => {
                let p = u32::try_from(rng.next_u64() >> 32).expect("32 bits");
                self.perturbation = Some(p);
                p
            }
        };
        self.bucket(pkt, perturbation)
    }

    /// The flow queue of `pkt` under `perturbation`: RFC 8290 §4.1.1, a hash of its flow
    /// identity (transport and flow id) and the perturbation, reduced to `flows` (Linux
    /// `reciprocal_scale`).
    pub(crate) fn bucket(&self, pkt: &QueuedPacket, perturbation: u32) -> u32 {
        let proto: u64 = match pkt.proto {
            Transport::Tcp => 1,
            Transport::Udp => 2,
            Transport::External => 3,
        };
        let key = mix64(u64::from(perturbation)) ^ ((proto << 32) | u64::from(pkt.flow.0));
        let h = mix64(key) >> 32;
        let flows = u64::try_from(self.flows.len()).expect("flows fit u64");
        // Linux fq_codel_hash / fq_pie_hash: reciprocal_scale(hash, flows_cnt) = (hash * flows) >> 32.
        u32::try_from((h * flows) >> 32).expect("below flows")
    }

    /// Flow queue `idx`.
    #[cfg(test)]
    pub(crate) fn flow(&self, idx: u32) -> &FlowQueue<V> {
        &self.flows[idx as usize]
    }

    /// Flow queue `idx`, mutably.
    pub(crate) fn flow_mut(&mut self, idx: u32) -> &mut FlowQueue<V> {
        &mut self.flows[idx as usize]
    }

    /// Append `pkt` to flow queue `idx`; a queue on neither list joins the new list with a
    /// full quantum (RFC 8290 §4.1).
    pub(crate) fn push(&mut self, idx: u32, pkt: QueuedPacket) {
        let size = u64::from(pkt.size);
        let quantum = self.quantum;
        let flow = &mut self.flows[idx as usize];
        flow.fifo.push_back(pkt);
        self.totals.packets += 1;
        self.totals.bytes += size;
        if flow.status == Status::Inactive {
            // RFC 8290 §4.1: a queue not on either list joins the new list with a full quantum.
            flow.status = Status::New;
            flow.deficit = i64::from(quantum);
            self.push_back(ListId::New, idx);
        }
    }

    /// The queue with the largest backlog in bytes, and that backlog (the first such queue;
    /// queue 0 when all are empty).
    pub(crate) fn fattest(&self) -> (u32, u64) {
        // RFC 8290 §4.1: "the packet is dropped from the head of the queue with the largest backlog".
        let mut fattest = 0u32;
        let mut max_backlog = 0u64;
        for (i, f) in self.flows.iter().enumerate() {
            if f.fifo.bytes() > max_backlog {
                max_backlog = f.fifo.bytes();
                fattest = u32::try_from(i).expect("flows fit u32");
            }
        }
        (fattest, max_backlog)
    }

    /// Linux `fq_codel_drop`, ns-3 `FqCoDelDrop` / `FqPieDrop`: drop from the head of queue
    /// `idx`, whose backlog is `backlog`, until half of it is gone, at most `batch` packets
    /// (and at least one). Returns how many were dropped.
    pub(crate) fn drop_head_batch(&mut self, idx: u32, backlog: u64, batch: u32, cx: &mut QdiscCx<'_>) -> u32 {
        // Linux fq_codel_drop: threshold = maxbacklog >> 1; do { drop head } while (++i < max_packets && len < threshold).
        let threshold = backlog >> 1;
        let flow = &mut self.flows[idx as usize];
        let (mut len, mut dropped) = (0u64, 0u32);
        while let Some(p) = flow.fifo.pop_front() {
            len += u64::from(p.size);
            dropped += 1;
            self.totals.remove(&p);
            cx.drop_packet(p, DropReason::Overflow);
            if dropped >= batch || len >= threshold {
                break;
            }
        }
        dropped
    }

    /// RFC 8290 §4.2: the next packet by deficit round robin over the new, then the old
    /// queues; `serve` takes the next packet of a queue (its AQM may drop or mark on the way)
    /// and keeps `totals` for what it removes.
    pub(crate) fn dequeue(
        &mut self,
        cx: &mut QdiscCx<'_>,
        mut serve: impl FnMut(&mut FlowQueue<V>, &mut Totals, &mut QdiscCx<'_>) -> Option<QueuedPacket>,
    ) -> Option<QueuedPacket> {
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
                flow.deficit += i64::from(self.quantum);
                flow.status = Status::Old;
                self.push_back(ListId::Old, idx);
                continue;
            }
            if let Some(p) = serve(&mut self.flows[idx as usize], &mut self.totals, cx) {
                // RFC 8290 §4.2: the deficit is decreased by the size of the packet sent.
                self.flows[idx as usize].deficit -= i64::from(p.size);
                return Some(p);
            }
            self.pop_front(list);
            // RFC 8290 §4.2: an empty new queue moves to the end of the old list (so it cannot starve
            // the old ones by coming back as new); an empty old queue leaves the lists. Linux
            // removes an empty new queue when the old list is empty; ns-3 moves it to the old
            // list, where the same dequeue finds it empty and removes it: the same outcome.
            if list == ListId::New && !self.old_flows.is_empty() {
                self.flows[idx as usize].status = Status::Old;
                self.push_back(ListId::Old, idx);
            } else {
                self.flows[idx as usize].status = Status::Inactive;
            }
        }
    }

    /// Give back every queue's spare buffer slots.
    pub(crate) fn give_back_memory(&mut self) {
        for f in &mut self.flows {
            f.fifo.give_back_memory();
        }
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
}
