//! One direction of a link: an egress [`Queue`], a transmitter and a wire.
//!
//! The transmitter serialises one packet at a time at the link rate; a packet
//! whose serialisation starts at `t` arrives at the far end at
//! `t + tx_time + delay`. Packets on the wire are kept in a FIFO (arrival
//! times are non-decreasing because the delay is fixed), so a port needs at
//! most one pending wire event and one pending transmitter event.
//!
//! The ports are stored apart from their queues ([`Ports`]): every port's first line (the
//! transmitter and the wire) in one dense array, the rest in another.

use crate::ids::{NodeId, PacketId, PortId};
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
}

/// Every port of the network, by [`PortId`], kept as two dense arrays of the same length:
/// each port's [`PortLine`] (64 bytes: all that a packet passing an idle port reads and
/// writes) in one, the rest of it ([`PortRest`]: the egress queue, and what the results
/// read) in the other.
///
/// With one array of whole ports (704 bytes each), the 38,400 ports of the hetero star at
/// N = 9,600 spread their hot lines over some 27 MB, one line in eleven, each on its own
/// 4 KiB page; split, the lines sit side by side in 2.4 MB (600 pages, within the
/// processor's second-level TLB), and both directions of a link, ports `2i` and `2i + 1`,
/// share a 128-byte pair of lines, so that a neighbouring line fetched with one is the
/// other direction's rather than a queue line nobody reads. The cache holds the same lines
/// either way: the split changes the pages and the neighbours, not the lines a visit reads.
#[derive(Debug, Default)]
pub(crate) struct Ports {
    /// Line 0 of every port, in `PortId` order.
    pub(crate) lines: Vec<PortLine>,
    /// The rest of every port, in the same order.
    pub(crate) rest: Vec<PortRest>,
}

impl Ports {
    /// Room for `n` ports.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Ports { lines: Vec::with_capacity(n), rest: Vec::with_capacity(n) }
    }

    /// Add link `link_index`'s port from `from` to `to` (a router if `to_router`), named
    /// `name`, idle, with `queue` as its egress queue; its id is the number of ports before it.
    pub(crate) fn push(
        &mut self,
        (from, to, to_router): (NodeId, NodeId, bool),
        link: LinkInfo,
        queue: Queue,
        link_index: usize,
        name: String,
    ) {
        self.lines.push(PortLine {
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
        });
        self.rest.push(PortRest { queue, rounded_sent_ns: 0, from, link_index, name, _spread: [0; 8] });
    }

    /// Number of ports.
    pub(crate) fn len(&self) -> usize {
        self.lines.len()
    }

    /// Port `i`, to read.
    pub(crate) fn get(&self, i: usize) -> Port<'_> {
        Port { line: &self.lines[i], rest: &self.rest[i] }
    }

    /// Every port, to read, in `PortId` order.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = Port<'_>> + '_ {
        self.lines.iter().zip(&self.rest).map(|(line, rest)| Port { line, rest })
    }

    /// Port `p`'s two parts, to change.
    #[inline(always)]
    pub(crate) fn parts_mut(&mut self, p: PortId) -> (&mut PortLine, &mut PortRest) {
        (&mut self.lines[p.index()], &mut self.rest[p.index()])
    }

    /// Free the queues' slots beyond what they hold now (a wire holds none).
    pub(crate) fn give_back_memory(&mut self) {
        for rest in &mut self.rest {
            rest.queue.give_back_memory();
        }
    }

    /// At the end of warm-up: bring every queue's occupancy integrals up to `now` and restart
    /// the maxima from the current occupancy.
    pub(crate) fn end_warmup(&mut self, now: SimTime) {
        for (line, rest) in self.lines.iter_mut().zip(&mut self.rest) {
            rest.queue.integrate(now);
            rest.queue.reset_max();
            line.largest_passed = 0;
        }
    }
}

/// A port's line 0: the transmitter, the wire, the far end, and the count of packets passed
/// straight through the empty queue. A packet's passage through an idle port (in the hetero
/// star at N = 9,600, every ACK on its way to its sender's host) reads and writes this line
/// alone, to leave and to arrive; a queued packet reads it and the queue ([`PortRest`]).
#[derive(Debug)]
#[repr(C, align(64))]
pub(crate) struct PortLine {
    /// When the packet being serialised is fully sent (idle if `<= now`).
    pub(crate) busy_until: SimTime,
    /// Propagation delay.
    pub(crate) delay: SimDuration,
    /// Packets passed straight through the empty queue ([`PortLine::passes_idle`]): counted
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
}

/// The rest of a port: its egress queue, whose own first line is what every queued packet
/// touches (see [`Queue`]), then what the results read.
#[derive(Debug)]
#[repr(C, align(64))]
pub(crate) struct PortRest {
    /// Egress queue.
    pub(crate) queue: Queue,
    /// Serialisation time of every packet sent, ns, where `tx_rate` leaves it to
    /// [`BitRate::tx_time`] (a rate that does not divide 8e9); otherwise 0, and the busy time
    /// is the bytes sent times the whole ns per byte ([`Port::busy_until_time`]).
    rounded_sent_ns: u64,
    /// Transmitting node.
    pub(crate) from: NodeId,
    /// Index of the link in the scenario.
    pub(crate) link_index: usize,
    /// Display name, `"a->b"`.
    pub(crate) name: String,
    /// Unused: makes the rest of a port 11 lines rather than 10. An odd stride puts the
    /// queues' first lines, which every queued packet reads, in every set of the caches;
    /// with 10 lines, the queues of the hetero star's access links (every other port,
    /// 20 lines apart) would share a quarter of the sets and evict the other hot lines there.
    _spread: [u64; 8],
}

impl PortLine {
    /// True if a packet of `size` bytes offered now goes straight through: the transmitter
    /// is idle with no `TxDone` pending, so the queue is empty (a queue holding a packet
    /// always has its transmitter busy or a `TxDone` pending, which dequeues it), and the
    /// discipline passes a packet of this size through an empty queue unchanged
    /// ([`QueueDisc::idle_pass_below`]).
    #[inline(always)]
    pub(crate) fn passes_idle(&self, size: u32, now: SimTime) -> bool {
        !self.tx_event_pending && self.busy_until <= now && size < self.idle_pass_below
    }

    /// Count a packet of `size` bytes passed straight through ([`PortLine::passes_idle`]) as
    /// the queue's enqueue then dequeue would count it: one arrival and one departure, and an
    /// occupancy of one packet for no time (so the integrals do not change, and the maxima
    /// are at least one packet and its size: [`Port::max_packets`]).
    #[inline(always)]
    pub(crate) fn count_passed(&mut self, size: u32) {
        self.passed += 1;
        self.passed_bytes += u64::from(size);
        self.largest_passed = self.largest_passed.max(size);
    }

    /// Start serialising packet `pkt` of `size` bytes at `now`; returns its arrival time at
    /// the far end if the wire was empty (otherwise the arrival of the packet ahead of it
    /// names it, [`PortLine::take_arrival`]). `rest` is read only at a rate whose
    /// serialisation times are rounded ([`PortRest::rounded_tx_time`]).
    #[inline]
    pub(crate) fn start_tx(
        &mut self,
        rest: &mut PortRest,
        pool: &mut PacketPool,
        pkt: PacketId,
        size: u32,
        now: SimTime,
    ) -> Option<SimTime> {
        debug_assert!(self.busy_until <= now);
        let tx = match self.tx_rate.tx_time(size) {
            Some(tx) => tx,
            None => rest.rounded_tx_time(size),
        };
        self.busy_until = now + tx;
        let arrival = self.busy_until + self.delay;
        self.wire.push(pool, pkt, arrival).then_some(arrival)
    }

    /// The packet at the head of the wire, which has arrived at the far end, and the arrival
    /// time of the packet behind it, if any.
    #[inline]
    pub(crate) fn take_arrival(&mut self, pool: &PacketPool) -> (PacketId, Option<SimTime>) {
        self.wire.pop(pool)
    }
}

impl PortRest {
    /// [`BitRate::tx_time`] where [`TxRate`] leaves it (a rate that does not divide 8e9),
    /// added to the busy time.
    #[inline]
    fn rounded_tx_time(&mut self, size: u32) -> SimDuration {
        let tx = self.queue.link_rate().tx_time(size);
        self.rounded_sent_ns += tx.as_nanos();
        tx
    }
}

/// One direction of a point-to-point link, to read: its line 0 and the rest
/// ([`Ports::get`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Port<'a> {
    /// Transmitter, wire, far end and the packets passed straight through.
    pub(crate) line: &'a PortLine,
    /// Queue, name and the link's place in the scenario.
    pub(crate) rest: &'a PortRest,
}

impl<'a> Port<'a> {
    /// The egress queue.
    pub(crate) fn queue(self) -> &'a Queue {
        &self.rest.queue
    }

    /// Display name, `"a->b"`.
    pub(crate) fn name(self) -> &'a str {
        &self.rest.name
    }

    /// Index of the link in the scenario.
    pub(crate) fn link_index(self) -> usize {
        self.rest.link_index
    }

    /// Transmitting node.
    pub(crate) fn from(self) -> NodeId {
        self.rest.from
    }

    /// Receiving node.
    pub(crate) fn to(self) -> NodeId {
        self.line.to
    }

    /// Propagation delay.
    pub(crate) fn delay(self) -> SimDuration {
        self.line.delay
    }

    /// The link rate (kept once, by the queue, whose disciplines read it).
    pub(crate) fn rate(self) -> BitRate {
        self.rest.queue.link_rate()
    }

    /// The queue's counters since the start of the run, the packets passed straight
    /// through included.
    pub(crate) fn counters(self) -> QueueCounters {
        let mut c = self.rest.queue.counters();
        c.arrivals += self.line.passed;
        c.arrival_bytes += self.line.passed_bytes;
        c.departures += self.line.passed;
        c.departure_bytes += self.line.passed_bytes;
        c
    }

    /// Largest occupancy seen since the last reset, packets.
    pub(crate) fn max_packets(self) -> u64 {
        self.rest.queue.max_packets().max(u64::from(self.line.largest_passed > 0))
    }

    /// Largest occupancy seen since the last reset, bytes.
    pub(crate) fn max_bytes(self) -> u64 {
        self.rest.queue.max_bytes().max(u64::from(self.line.largest_passed))
    }

    /// Time the transmitter has spent sending up to `t` (not beyond), ns.
    pub(crate) fn busy_until_time(self, t: SimTime) -> u64 {
        let sent_ns = match self.line.tx_rate.tx_time_of_bytes(self.counters().departure_bytes) {
            Some(sent) => sent.as_nanos(),
            None => self.rest.rounded_sent_ns,
        };
        sent_ns - self.line.busy_until.saturating_since(t).as_nanos()
    }
}

#[cfg(test)]
mod tests {
    use std::mem::{align_of, offset_of, size_of};

    use super::{PortLine, PortRest, Ports, Wire};
    use crate::ids::{NodeId, PacketId, PortId};
    use crate::memory::field;
    use crate::packet::{Ecn, Packet, PacketPool};
    use crate::qdisc::droptail::{Limit, LimitRule};
    use crate::qdisc::test_support::pkt;
    use crate::qdisc::{AnyQdisc, DropTail, Queue};
    use crate::queue_resolve::LinkInfo;
    use crate::rng::SimRng;
    use crate::time::{BitRate, SimDuration, SimTime};

    /// One port, id 0, with a DropTail queue.
    fn port_with(limit: Limit, rule: LimitRule, rate: BitRate) -> Ports {
        let queue = Queue::new(AnyQdisc::DropTail(DropTail::new(limit, rule)), rate, SimRng::for_component(1, "q"));
        let link = LinkInfo { rate, delay: SimDuration::from_millis(10) };
        let mut ports = Ports::with_capacity(1);
        ports.push((NodeId(0), NodeId(1), true), link, queue, 0, "a->r".into());
        ports
    }

    /// A packet's passage through an idle port, leaving and arriving, reads and writes its
    /// line alone: one line, line-aligned, one after another in the array of lines; the
    /// queue's per-packet line is the first of the rest.
    #[test]
    fn what_a_packet_passing_an_idle_port_touches_is_one_line_of_a_dense_array() {
        assert_eq!((size_of::<PortLine>(), align_of::<PortLine>()), (64, 64));
        let line_0 = [
            field!(PortLine, busy_until),
            field!(PortLine, delay),
            field!(PortLine, passed),
            field!(PortLine, passed_bytes),
            field!(PortLine, wire),
            field!(PortLine, tx_rate),
            field!(PortLine, to),
            field!(PortLine, idle_pass_below),
            field!(PortLine, largest_passed),
            field!(PortLine, tx_event_pending),
            field!(PortLine, to_router),
        ];
        crate::memory::assert_in_line(&line_0, 0);
        assert_eq!(align_of::<PortRest>(), 64);
        assert_eq!(offset_of!(PortRest, queue), 0);
        // Both directions of a link, ports 2i and 2i + 1, in neighbouring lines.
        let rate = BitRate::from_bps(1_000_000);
        let mut ports = port_with(Limit::Packets(3), LimitRule::Waiting, rate);
        let queue = Queue::new(
            AnyQdisc::DropTail(DropTail::new(Limit::Packets(3), LimitRule::Waiting)),
            rate,
            SimRng::for_component(1, "q"),
        );
        ports.push((NodeId(1), NodeId(0), false), LinkInfo { rate, delay: SimDuration::ZERO }, queue, 0, "r->a".into());
        let at = |p: &PortLine| std::ptr::from_ref(p) as usize;
        assert_eq!(at(&ports.lines[1]) - at(&ports.lines[0]), 64);
        assert_eq!(ports.len(), 2);
        assert_eq!((ports.get(1).name(), ports.get(1).to(), ports.get(1).from()), ("r->a", NodeId(0), NodeId(1)));
    }

    /// A port takes no more memory than before it was laid out by lines (752 bytes).
    #[test]
    fn a_port_takes_at_most_11_cache_lines() {
        let bytes = size_of::<PortLine>() + size_of::<PortRest>();
        assert!(bytes <= 768, "{bytes} bytes");
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
            let mut ports = port_with(limit, rule, rate);
            let (fast, fast_queue) = ports.parts_mut(PortId(0));
            let mut slow = port_with(limit, rule, rate).rest.remove(0).queue;
            for i in 0..40u64 {
                let now = SimTime::from_nanos(10 * i);
                let p = pkt(i, 100 + 50 * u32::try_from(i % 14).unwrap(), Ecn::NotEct);
                if fast_queue.queue.len_packets() == 0 && i % 3 != 2 {
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
                        fast_queue.queue.enqueue(p, now);
                        assert_eq!(fast_queue.queue.outcome().drops, slow.outcome().drops);
                    }
                } else {
                    if i % 5 == 0 {
                        assert_eq!(fast_queue.queue.dequeue(now), slow.dequeue(now));
                    } else {
                        // A busy transmitter: the packet waits.
                        fast_queue.queue.enqueue(p, now);
                        slow.enqueue(p, now);
                    }
                    assert_eq!(fast_queue.queue.outcome().drops, slow.outcome().drops);
                }
            }
            passes_and_drops.0 += fast.passed;
            fast_queue.queue.integrate(SimTime::from_nanos(500));
            slow.integrate(SimTime::from_nanos(500));
            let fast = ports.get(0);
            assert_eq!(fast.counters(), slow.counters(), "{limit:?} {rule:?}");
            assert_eq!((fast.max_packets(), fast.max_bytes()), (slow.max_packets(), slow.max_bytes()));
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
            let mut ports = port_with(Limit::Packets(100), LimitRule::Waiting, rate);
            let mut pool = PacketPool::default();
            let (mut now, mut expected) = (SimTime::ZERO, 0);
            for i in 0..20u64 {
                let size = 40 + 97 * u32::try_from(i).unwrap();
                let id = pool.insert(Packet { size, ..Packet::default() });
                let q = crate::qdisc::QueuedPacket::new(id, &pool[id]);
                let (line, rest) = ports.parts_mut(PortId(0));
                if line.passes_idle(size, now) && i % 2 == 0 {
                    line.count_passed(size);
                } else {
                    rest.queue.enqueue(q, now);
                    assert_eq!(rest.queue.dequeue(now).map(|q| q.id), Some(id));
                }
                line.start_tx(rest, &mut pool, id, size, now);
                expected += rate.tx_time(size).as_nanos();
                let port = ports.get(0);
                let busy_until = port.line.busy_until;
                assert_eq!(port.busy_until_time(busy_until), expected, "{bps} bit/s, packet {i}");
                // Half way through this packet's serialisation, half of it is counted.
                let half = rate.tx_time(size).as_nanos() / 2;
                let mid = SimTime::from_nanos(busy_until.as_nanos() - half);
                assert_eq!(port.busy_until_time(mid), expected - half);
                now = busy_until + SimDuration::from_nanos(1);
            }
        }
    }
}
