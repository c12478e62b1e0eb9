//! One direction of a link: an egress [`Queue`], a transmitter and a wire.
//!
//! The transmitter serialises one packet at a time at the link rate; a packet
//! whose serialisation starts at `t` arrives at the far end at
//! `t + tx_time + delay`. Packets on the wire are kept in a FIFO (arrival
//! times are non-decreasing because the delay is fixed), so a port needs at
//! most one pending wire event and one pending transmitter event.

use crate::ids::{NodeId, PacketId};
use crate::packet::{NextOnWire, PacketPool};
use crate::qdisc::{Queue, QueueCounters, QueueDisc};
use crate::queue_resolve::LinkInfo;
use crate::time::{BitRate, SimDuration, SimTime, TxRate};

/// The packets on a wire (being serialised or propagating), first sent first.
///
/// The wire names its first and last packet; each packet with another behind it names
/// that one, and its arrival time, in its pool slot ([`PacketPool::set_next_on_wire`]).
/// So a wire owns no buffer: with thousands of links most wires hold one packet at a
/// time, and its arrival then reads the port's line 0 and the packet's slot, where a
/// buffer of its own was one more cold line per packet sent and per packet arrived.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wire {
    /// The packet that arrives next (meaningless while the wire is empty).
    first: PacketId,
    /// The packet sent last (meaningless while the wire is empty).
    last: PacketId,
    /// Packets on the wire.
    len: u32,
}

impl Wire {
    /// A wire with no packet on it.
    pub(crate) const EMPTY: Wire = Wire { first: PacketId(0), last: PacketId(0), len: 0 };

    /// Put `id`, arriving at `at`, behind the packets on the wire; returns true if the
    /// wire was empty (so no arrival event is pending for it).
    #[inline]
    fn push(&mut self, pool: &mut PacketPool, id: PacketId, at: SimTime) -> bool {
        let was_empty = self.len == 0;
        if was_empty {
            self.first = id;
        } else {
            pool.set_next_on_wire(self.last, NextOnWire { at, id });
        }
        self.last = id;
        self.len += 1;
        was_empty
    }

    /// Take the packet at the head of the wire; with it, the arrival time of the next one,
    /// if any.
    #[inline]
    fn pop(&mut self, pool: &PacketPool) -> (PacketId, Option<SimTime>) {
        assert!(self.len > 0, "a wire event has a packet");
        let id = self.first;
        self.len -= 1;
        if self.len == 0 {
            return (id, None);
        }
        let next = pool.next_on_wire(id);
        self.first = next.id;
        (id, Some(next.at))
    }

    /// Packets on the wire.
    pub(crate) fn len(&self) -> u32 {
        self.len
    }

    /// The packet sent last, if any (the one being serialised while the transmitter is busy).
    pub(crate) fn last(&self) -> Option<PacketId> {
        (self.len > 0).then_some(self.last)
    }
}

/// One direction of a point-to-point link.
///
/// Laid out by who touches it (`repr(C)`, 64-byte aligned), since with thousands of
/// links each packet finds its ports cold. Line 0 holds everything a packet's passage
/// through an idle port reads and writes: the transmitter, the wire, the far end, and the
/// count of packets passed straight through the empty queue, so that such a packet
/// (in the hetero star at N = 9,600, every ACK on its way to its sender's host) touches
/// one line of its port to leave and the same line to arrive. The queue follows, its own
/// first line what every queued packet touches (see [`Queue`]); then what the results
/// read.
#[derive(Debug)]
#[repr(C, align(64))]
pub(crate) struct Port {
    // ---- line 0: transmitter, wire and packets passed straight through ----
    /// When the packet being serialised is fully sent (idle if `<= now`).
    pub(crate) busy_until: SimTime,
    /// Propagation delay.
    pub(crate) delay: SimDuration,
    /// Packets passed straight through the empty queue ([`Port::passes_idle`]): counted
    /// here, not by the queue, which they do not touch.
    passed: u64,
    /// Their bytes.
    passed_bytes: u64,
    /// Packets being serialised or propagating.
    pub(crate) wire: Wire,
    /// The link rate, prepared for serialisation times.
    pub(crate) tx_rate: TxRate,
    /// Receiving node.
    pub(crate) to: NodeId,
    /// The queue's [`QueueDisc::idle_pass_below`], asked once.
    idle_pass_below: u32,
    /// The largest packet passed straight through since the maximum was last reset (0: none).
    largest_passed: u32,
    /// A `TxDone` event is pending.
    pub(crate) tx_event_pending: bool,
    /// The receiving node is a router, so every packet arriving there is forwarded (flows
    /// end at hosts): known from this line, before the packet is read.
    pub(crate) to_router: bool,
    /// The queue draws on its router's shared buffer (`buffer` names it).
    pub(crate) shared: bool,
    // ---- line 1 on: the egress queue ----
    /// Egress queue.
    pub(crate) queue: Queue,
    // ---- what the results read ----
    /// Serialisation time of every packet sent, ns, where `tx_rate` leaves it to
    /// [`BitRate::tx_time`] (a rate that does not divide 8e9); otherwise 0, and the busy time
    /// is the bytes sent times the whole ns per byte ([`Port::busy_until_time`]).
    rounded_sent_ns: u64,
    /// The shared buffer the queue draws on ([`crate::buffer::NO_BUFFER`]: none).
    pub(crate) buffer: u32,
    /// Transmitting node.
    pub(crate) from: NodeId,
    /// Index of the link in the scenario.
    pub(crate) link_index: usize,
    /// Display name, `"a->b"`.
    pub(crate) name: String,
}

impl Port {
    /// Link `link_index`'s port from `from` to `to` (a router if `to_router`), named `name`,
    /// idle, with `queue` as its egress queue.
    pub(crate) fn new(
        (from, to, to_router): (NodeId, NodeId, bool),
        link: LinkInfo,
        queue: Queue,
        link_index: usize,
        name: String,
    ) -> Self {
        Port {
            busy_until: SimTime::ZERO,
            delay: link.delay,
            passed: 0,
            passed_bytes: 0,
            wire: Wire::EMPTY,
            tx_rate: TxRate::new(link.rate),
            to,
            idle_pass_below: queue.qdisc().idle_pass_below(),
            largest_passed: 0,
            tx_event_pending: false,
            to_router,
            shared: false,
            queue,
            rounded_sent_ns: 0,
            buffer: crate::buffer::NO_BUFFER,
            from,
            link_index,
            name,
        }
    }

    /// True if a packet of `size` bytes offered now goes straight through: the transmitter
    /// is idle with no `TxDone` pending, so the queue is empty (a queue holding a packet
    /// always has its transmitter busy or a `TxDone` pending, which dequeues it), and the
    /// discipline passes a packet of this size through an empty queue unchanged
    /// ([`QueueDisc::idle_pass_below`]). Reads line 0 alone.
    #[inline(always)]
    pub(crate) fn passes_idle(&self, size: u32, now: SimTime) -> bool {
        !self.tx_event_pending && self.busy_until <= now && size < self.idle_pass_below
    }

    /// Count a packet of `size` bytes passed straight through ([`Port::passes_idle`]) as the
    /// queue's enqueue then dequeue would count it: one arrival and one departure, and an
    /// occupancy of one packet for no time (so the integrals do not change, and the maxima
    /// are at least one packet and its size: [`Port::max_packets`]). Writes line 0 alone.
    #[inline(always)]
    pub(crate) fn count_passed(&mut self, size: u32) {
        debug_assert_eq!(self.queue.len_packets(), 0, "a queue holding packets has its transmitter busy");
        self.passed += 1;
        self.passed_bytes += u64::from(size);
        self.largest_passed = self.largest_passed.max(size);
    }

    /// Make the queue draw on shared buffer `buffer` (an index into the simulation's buffers).
    pub(crate) fn join_buffer(&mut self, buffer: u32) {
        self.shared = true;
        self.buffer = buffer;
    }

    /// Start serialising packet `pkt` of `size` bytes at `now`; returns its arrival time at
    /// the far end if the wire was empty (otherwise the arrival of the packet ahead of it
    /// names it, [`Port::take_arrival`]).
    #[inline]
    pub(crate) fn start_tx(
        &mut self,
        pool: &mut PacketPool,
        pkt: PacketId,
        size: u32,
        now: SimTime,
    ) -> Option<SimTime> {
        debug_assert!(self.busy_until <= now);
        let tx = match self.tx_rate.tx_time(size) {
            Some(tx) => tx,
            None => self.rounded_tx_time(size),
        };
        self.busy_until = now + tx;
        let arrival = self.busy_until + self.delay;
        self.wire.push(pool, pkt, arrival).then_some(arrival)
    }

    /// [`BitRate::tx_time`] where [`TxRate`] leaves it (a rate that does not divide 8e9),
    /// added to the busy time.
    #[inline]
    fn rounded_tx_time(&mut self, size: u32) -> SimDuration {
        let tx = self.rate().tx_time(size);
        self.rounded_sent_ns += tx.as_nanos();
        tx
    }

    /// The link rate (kept once, by the queue, whose disciplines read it).
    pub(crate) fn rate(&self) -> BitRate {
        self.queue.link_rate()
    }

    /// The packet at the head of the wire, which has arrived at the far end, and the arrival
    /// time of the packet behind it, if any.
    #[inline]
    pub(crate) fn take_arrival(&mut self, pool: &PacketPool) -> (PacketId, Option<SimTime>) {
        self.wire.pop(pool)
    }

    /// Free the queue's slots beyond what it holds now (a wire holds none).
    pub(crate) fn give_back_memory(&mut self) {
        self.queue.give_back_memory();
    }

    /// The queue's counters since the start of the run, the packets passed straight
    /// through included.
    pub(crate) fn counters(&self) -> QueueCounters {
        let mut c = self.queue.counters();
        c.arrivals += self.passed;
        c.arrival_bytes += self.passed_bytes;
        c.departures += self.passed;
        c.departure_bytes += self.passed_bytes;
        c
    }

    /// Largest occupancy seen since the last reset, packets.
    pub(crate) fn max_packets(&self) -> u64 {
        self.queue.max_packets().max(u64::from(self.largest_passed > 0))
    }

    /// Largest occupancy seen since the last reset, bytes.
    pub(crate) fn max_bytes(&self) -> u64 {
        self.queue.max_bytes().max(u64::from(self.largest_passed))
    }

    /// Restart the maxima from the current occupancy (at the end of warm-up).
    pub(crate) fn reset_max(&mut self) {
        self.queue.reset_max();
        self.largest_passed = 0;
    }

    /// Time the transmitter has spent sending up to `t` (not beyond), ns.
    pub(crate) fn busy_until_time(&self, t: SimTime) -> u64 {
        let sent_ns = match self.tx_rate.tx_time_of_bytes(self.counters().departure_bytes) {
            Some(sent) => sent.as_nanos(),
            None => self.rounded_sent_ns,
        };
        sent_ns - self.busy_until.saturating_since(t).as_nanos()
    }
}

#[cfg(test)]
mod tests {
    use std::mem::{align_of, offset_of, size_of};

    use super::{Port, Wire};
    use crate::ids::{NodeId, PacketId};
    use crate::memory::field;
    use crate::packet::{Ecn, Packet, PacketPool};
    use crate::qdisc::droptail::{Limit, LimitRule};
    use crate::qdisc::test_support::pkt;
    use crate::qdisc::{AnyQdisc, DropTail, Queue};
    use crate::queue_resolve::LinkInfo;
    use crate::rng::SimRng;
    use crate::time::{BitRate, SimDuration, SimTime};

    fn port_with(limit: Limit, rule: LimitRule, rate: BitRate) -> Port {
        let queue = Queue::new(AnyQdisc::DropTail(DropTail::new(limit, rule)), rate, SimRng::for_component(1, "q"));
        let link = LinkInfo { rate, delay: SimDuration::from_millis(10) };
        Port::new((NodeId(0), NodeId(1), true), link, queue, 0, "a->r".into())
    }

    /// A packet's passage through an idle port, leaving and arriving, reads and writes line 0
    /// alone; the queue's per-packet line is the next one.
    #[test]
    fn port_line_0_holds_the_per_packet_fields() {
        // Everything a packet passing an idle port reads, and the shared-buffer flag every
        // enqueue reads, fit in the first cache line; the queue starts on the second.
        assert_eq!(std::mem::offset_of!(Port, queue), 64);
        assert!(std::mem::offset_of!(Port, shared) < 64);
    }

    #[test]
    fn what_a_packet_passing_an_idle_port_touches_fills_line_0_and_its_queue_starts_line_1() {
        assert_eq!(align_of::<Port>(), 64);
        let line_0 = [
            field!(Port, busy_until),
            field!(Port, delay),
            field!(Port, passed),
            field!(Port, passed_bytes),
            field!(Port, wire),
            field!(Port, tx_rate),
            field!(Port, to),
            field!(Port, idle_pass_below),
            field!(Port, largest_passed),
            field!(Port, tx_event_pending),
            field!(Port, to_router),
        ];
        crate::memory::assert_in_line(&line_0, 0);
        assert_eq!(offset_of!(Port, queue), 64);
    }

    /// A port takes no more memory than before it was laid out by lines (752 bytes).
    #[test]
    fn a_port_takes_at_most_11_cache_lines() {
        assert!(size_of::<Port>() <= 704, "{} bytes", size_of::<Port>());
    }

    /// A wire hands its packets back first sent first, each with the arrival time of the one
    /// behind it, whether it held one packet or many.
    #[test]
    fn a_wire_threaded_through_the_pool_is_first_in_first_out() {
        let mut pool = PacketPool::default();
        let ids: Vec<PacketId> = (0..4).map(|_| pool.insert(Packet::default())).collect();
        let at = |i: u64| SimTime::from_nanos(100 * (i + 1));
        let mut wire = Wire::EMPTY;
        assert!(wire.push(&mut pool, ids[0], at(0)), "an empty wire: its arrival is to be scheduled");
        assert_eq!(wire.pop(&pool), (ids[0], None));
        for (i, &id) in ids.iter().enumerate() {
            assert_eq!(wire.push(&mut pool, id, at(i as u64)), i == 0);
        }
        assert_eq!(wire.len(), 4);
        assert_eq!(wire.pop(&pool), (ids[0], Some(at(1))));
        assert_eq!(wire.pop(&pool), (ids[1], Some(at(2))));
        // A packet sent while two are on the wire goes behind them.
        assert!(!wire.push(&mut pool, ids[0], at(4)));
        assert_eq!(wire.pop(&pool), (ids[2], Some(at(3))));
        assert_eq!(wire.pop(&pool), (ids[3], Some(at(4))));
        assert_eq!(wire.pop(&pool), (ids[0], None));
        assert_eq!(wire.len(), 0);
    }

    /// A packet passed straight through an idle port counts as its queue's enqueue then
    /// dequeue would count it: counters, maxima and occupancy integrals, over a run of idle
    /// and busy periods.
    #[test]
    fn passing_an_idle_port_counts_as_enqueue_then_dequeue() {
        let mut passes_and_drops = (0, 0);
        for (limit, rule) in [
            (Limit::Packets(3), LimitRule::Waiting),
            (Limit::Packets(1), LimitRule::Ns2),
            (Limit::Bytes(700), LimitRule::Ns2),
            (Limit::Bytes(700), LimitRule::Waiting),
            (Limit::Packets(0), LimitRule::Waiting),
        ] {
            let rate = BitRate::from_bps(1_000_000);
            let mut fast = port_with(limit, rule, rate);
            let mut slow = port_with(limit, rule, rate).queue;
            for i in 0..40u64 {
                let now = SimTime::from_nanos(10 * i);
                let p = pkt(i, 100 + 50 * u32::try_from(i % 14).unwrap(), Ecn::NotEct);
                if fast.queue.len_packets() == 0 && i % 3 != 2 {
                    // An idle transmitter: the packet goes straight through, or the normal way.
                    let passed = fast.passes_idle(p.size, now);
                    slow.enqueue(p, now);
                    let admitted = slow.outcome().drops.is_empty();
                    assert_eq!(passed, admitted, "{limit:?} {rule:?} packet {i}");
                    if passed {
                        fast.count_passed(p.size);
                        assert_eq!(slow.dequeue(now).map(|q| q.id), Some(p.id));
                    } else {
                        // Not passed: the normal way, which drops it.
                        fast.queue.enqueue(p, now);
                        assert_eq!(fast.queue.outcome().drops, slow.outcome().drops);
                    }
                } else {
                    if i % 5 == 0 {
                        assert_eq!(fast.queue.dequeue(now), slow.dequeue(now));
                    } else {
                        // A busy transmitter: the packet waits.
                        fast.queue.enqueue(p, now);
                        slow.enqueue(p, now);
                    }
                    assert_eq!(fast.queue.outcome().drops, slow.outcome().drops);
                }
            }
            fast.queue.integrate(SimTime::from_nanos(500));
            slow.integrate(SimTime::from_nanos(500));
            assert_eq!(fast.counters(), slow.counters(), "{limit:?} {rule:?}");
            assert_eq!((fast.max_packets(), fast.max_bytes()), (slow.max_packets(), slow.max_bytes()));
            passes_and_drops.0 += fast.passed;
            passes_and_drops.1 += fast.counters().total_drops();
        }
        assert!(passes_and_drops.0 >= 5 && passes_and_drops.1 > 10, "{passes_and_drops:?}");
    }

    /// The busy time is the sum of the packets' serialisation times, both where a byte takes
    /// a whole number of nanoseconds (so the busy time follows from the bytes sent) and where
    /// each packet's time is rounded apart, for packets passed straight through and queued.
    #[test]
    fn the_busy_time_sums_every_packets_serialisation_time() {
        for bps in [1_000_000, 31_250, 1_544_000, 10_000_000_000] {
            let rate = BitRate::from_bps(bps);
            let mut port = port_with(Limit::Packets(100), LimitRule::Waiting, rate);
            let mut pool = PacketPool::default();
            let (mut now, mut expected) = (SimTime::ZERO, 0);
            for i in 0..20u64 {
                let size = 40 + 97 * u32::try_from(i).unwrap();
                let id = pool.insert(Packet { size, ..Packet::default() });
                let q = crate::qdisc::QueuedPacket::new(id, &pool[id]);
                if port.passes_idle(size, now) && i % 2 == 0 {
                    port.count_passed(size);
                } else {
                    port.queue.enqueue(q, now);
                    assert_eq!(port.queue.dequeue(now).map(|q| q.id), Some(id));
                }
                port.start_tx(&mut pool, id, size, now);
                expected += rate.tx_time(size).as_nanos();
                assert_eq!(port.busy_until_time(port.busy_until), expected, "{bps} bit/s, packet {i}");
                // Half way through this packet's serialisation, half of it is counted.
                let half = rate.tx_time(size).as_nanos() / 2;
                let mid = SimTime::from_nanos(port.busy_until.as_nanos() - half);
                assert_eq!(port.busy_until_time(mid), expected - half);
                now = port.busy_until + SimDuration::from_nanos(1);
            }
        }
    }
}
