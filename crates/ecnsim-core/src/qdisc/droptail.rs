//! DropTail: first in, first out; an arrival that would exceed the limit is
//! dropped. The limit is in packets or in bytes (as ns-3's `MaxSize`
//! "100p" / "150000B"), read by one of two rules ([`LimitRule`]).
//!
//! Read first:
//! - ns-3 `src/network/utils/drop-tail-queue.h` and `queue.cc` (`Queue::Enqueue`:
//!   the limit counts the packets waiting; the one being sent has left the queue).
//! - ns-2.35 `queue/drop-tail.cc` (`DropTail::enque`: drop if
//!   `q_->length() + 1 >= qlim_`, or `byteLength() + size >= qlim_ * mean_pktsize_`).

use super::QueuedPacket;
use super::{DropReason, Fifo, QdiscCx, QueueDisc};

pub use super::{Limit, LimitRule};

/// A tail-drop FIFO.
#[derive(Debug)]
pub struct DropTail {
    limit: Limit,
    rule: LimitRule,
    fifo: Fifo,
}

impl DropTail {
    /// An empty queue with `limit`, read by `rule`.
    #[must_use]
    pub fn new(limit: Limit, rule: LimitRule) -> Self {
        DropTail { limit, rule, fifo: Fifo::new(limit) }
    }
}

impl QueueDisc for DropTail {
    #[inline]
    fn enqueue(&mut self, pkt: QueuedPacket, cx: &mut QdiscCx<'_>) {
        if self.fifo.admits(self.limit, self.rule, &pkt) {
            self.fifo.push_back(pkt);
        } else {
            cx.drop_packet(pkt, DropReason::Overflow);
        }
    }

    #[inline]
    fn dequeue(&mut self, _cx: &mut QdiscCx<'_>) -> Option<QueuedPacket> {
        self.fifo.pop_front()
    }

    fn len_packets(&self) -> u64 {
        self.fifo.len() as u64
    }

    fn any_queued(&self, f: &mut dyn FnMut(&QueuedPacket) -> bool) -> bool {
        self.fifo.any(f)
    }

    /// An admitted packet joins an empty FIFO and leaves it at once: nothing else changes. The
    /// bound is `admits` on an empty FIFO.
    #[inline]
    fn idle_pass_below(&self) -> u32 {
        let below = |bytes: u64| u32::try_from(bytes).unwrap_or(u32::MAX);
        match (self.rule, self.limit) {
            (LimitRule::Waiting, Limit::Packets(n)) => below(if n > 0 { u64::MAX } else { 0 }),
            (LimitRule::Waiting, Limit::Bytes(b)) => below(b.saturating_add(1)),
            (LimitRule::Ns2, Limit::Packets(n)) => below(if n > 1 { u64::MAX } else { 0 }),
            (LimitRule::Ns2, Limit::Bytes(b)) => below(b),
        }
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }
    fn give_back_memory(&mut self) {
        self.fifo.give_back_memory();
    }
}

#[cfg(test)]
mod tests {
    use super::super::{AnyQdisc, Queue};
    use super::*;
    use crate::packet::Ecn;
    use crate::rng::SimRng;
    use crate::time::{BitRate, SimTime};

    fn pkt(uid: u64, size: u32) -> QueuedPacket {
        super::super::test_support::pkt(uid, size, Ecn::NotEct)
    }

    fn queue(limit: Limit) -> Queue {
        queue_with(limit, LimitRule::Waiting)
    }

    fn queue_with(limit: Limit, rule: LimitRule) -> Queue {
        Queue::new(
            AnyQdisc::DropTail(DropTail::new(limit, rule)),
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
        assert_eq!(q.outcome().drops[0].0.uid(), 2);
        assert_eq!(q.outcome().drops[0].1, DropReason::Overflow);
        assert_eq!(q.counters().drops[DropReason::Overflow as usize], 1);
        assert_eq!(q.dequeue(SimTime::ZERO).map(|p| p.uid()), Some(0));
        assert_eq!(q.dequeue(SimTime::ZERO).map(|p| p.uid()), Some(1));
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
        assert_eq!(q.counters().area_packets, 10 + 40 + 10);
        assert_eq!(q.counters().area_bytes, 6000);
        assert_eq!(q.max_packets(), 2);
    }

    #[test]
    fn ns2_rule_holds_one_packet_less_than_the_limit() {
        // ns-2 limit_ 3: two packets wait (the third would make the queue reach the limit).
        let mut q = queue_with(Limit::Packets(3), LimitRule::Ns2);
        for uid in 0..3 {
            q.enqueue(pkt(uid, 100), SimTime::ZERO);
        }
        assert_eq!(q.len_packets(), 2);
        assert_eq!(q.counters().drops[DropReason::Overflow as usize], 1);
        // The waiting rule with the same number holds three.
        let mut w = queue_with(Limit::Packets(3), LimitRule::Waiting);
        for uid in 0..4 {
            w.enqueue(pkt(uid, 100), SimTime::ZERO);
        }
        assert_eq!(w.len_packets(), 3);
    }

    #[test]
    fn ns2_rule_byte_limit_is_strict() {
        let mut q = queue_with(Limit::Bytes(1000), LimitRule::Ns2);
        q.enqueue(pkt(0, 500), SimTime::ZERO);
        q.enqueue(pkt(1, 500), SimTime::ZERO); // 1000 >= 1000: dropped
        assert_eq!(q.len_bytes(), 500);
        q.enqueue(pkt(2, 499), SimTime::ZERO);
        assert_eq!(q.len_bytes(), 999);
    }
}
