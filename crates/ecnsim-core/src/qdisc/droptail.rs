//! DropTail: first in, first out; an arrival that would exceed the limit is
//! dropped. The limit is in packets or in bytes (as ns-3's `MaxSize`
//! "100p" / "150000B").

use super::{DropReason, Fifo, QdiscCx, QueueDisc};
use crate::packet::Packet;

pub use super::Limit;

/// A tail-drop FIFO.
#[derive(Debug)]
pub struct DropTail {
    limit: Limit,
    fifo: Fifo,
}

impl DropTail {
    /// An empty queue with `limit`.
    #[must_use]
    pub fn new(limit: Limit) -> Self {
        DropTail { limit, fifo: Fifo::new(limit) }
    }
}

impl QueueDisc for DropTail {
    fn enqueue(&mut self, pkt: Packet, cx: &mut QdiscCx<'_>) {
        if self.fifo.fits(self.limit, &pkt) {
            self.fifo.push_back(pkt);
        } else {
            cx.drop_packet(pkt, DropReason::Overflow);
        }
    }

    fn dequeue(&mut self, _cx: &mut QdiscCx<'_>) -> Option<Packet> {
        self.fifo.pop_front()
    }

    fn len_packets(&self) -> u64 {
        self.fifo.len() as u64
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{AnyQdisc, Queue};
    use super::*;
    use crate::ids::{FlowId, NodeId};
    use crate::packet::{Ecn, TcpHeader};
    use crate::rng::SimRng;
    use crate::time::{BitRate, SimTime};

    fn pkt(uid: u64, size: u32) -> Packet {
        Packet {
            uid,
            src: NodeId(0),
            dst: NodeId(1),
            flow: FlowId(0),
            proto: crate::packet::Transport::Tcp,
            from_initiator: true,
            size,
            ecn: Ecn::NotEct,
            tcp: TcpHeader::default(),
            sent_at: SimTime::ZERO,
            enqueued_at: SimTime::ZERO,
        }
    }

    fn queue(limit: Limit) -> Queue {
        Queue::new(
            AnyQdisc::DropTail(DropTail::new(limit)),
            BitRate::from_bps(1_000_000),
            SimRng::for_component(1, "q"),
        )
    }

    #[test]
    fn packet_limit_drops_the_arrival_beyond_it() {
        let mut q = queue(Limit::Packets(2));
        for uid in 0..3 {
            q.enqueue(pkt(uid, 100), SimTime::ZERO);
        }
        assert_eq!(q.outcome().drops.len(), 1);
        assert_eq!(q.outcome().drops[0].0.uid, 2);
        assert_eq!(q.outcome().drops[0].1, DropReason::Overflow);
        assert_eq!(q.counters.drops[DropReason::Overflow as usize], 1);
        assert_eq!(q.dequeue(SimTime::ZERO).map(|p| p.uid), Some(0));
        assert_eq!(q.dequeue(SimTime::ZERO).map(|p| p.uid), Some(1));
        assert_eq!(q.dequeue(SimTime::ZERO), None);
    }

    #[test]
    fn byte_limit_counts_sizes() {
        let mut q = queue(Limit::Bytes(1000));
        q.enqueue(pkt(0, 600), SimTime::ZERO);
        q.enqueue(pkt(1, 500), SimTime::ZERO);
        assert_eq!(q.outcome().drops.len(), 1);
        q.enqueue(pkt(2, 400), SimTime::ZERO);
        assert!(q.outcome().drops.is_empty());
        assert_eq!(q.len_bytes(), 1000);
        assert_eq!(q.len_packets(), 2);
    }

    #[test]
    fn time_weighted_occupancy_integrates_exactly() {
        let mut q = queue(Limit::Packets(10));
        q.enqueue(pkt(0, 100), SimTime::from_nanos(0));
        q.enqueue(pkt(1, 100), SimTime::from_nanos(10)); // 1 packet for 10 ns
        q.dequeue(SimTime::from_nanos(30)); // 2 packets for 20 ns
        q.integrate(SimTime::from_nanos(40)); // 1 packet for 10 ns
        assert_eq!(q.counters.area_packets, 10 + 40 + 10);
        assert_eq!(q.counters.area_bytes, 6000);
        assert_eq!(q.max_packets, 2);
    }
}
