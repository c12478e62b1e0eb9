//! One direction of a link: an egress [`Queue`], a transmitter and a wire.
//!
//! The transmitter serialises one packet at a time at the link rate; a packet
//! whose serialisation starts at `t` arrives at the far end at
//! `t + tx_time + delay`. Packets on the wire are kept in a FIFO (arrival
//! times are non-decreasing because the delay is fixed), so a port needs at
//! most one pending wire event and one pending transmitter event.

use std::collections::VecDeque;

use crate::ids::{NodeId, PacketId};
use crate::qdisc::Queue;
use crate::time::{BitRate, SimDuration, SimTime, TxRate};

/// Slots a wire keeps when it empties.
const WIRE_MIN_SLOTS: usize = 8;

/// One direction of a point-to-point link.
///
/// Laid out by who touches it (`repr(C)`, 64-byte aligned), since with thousands of
/// links each packet finds its ports cold: line 0 holds what starting a packet and
/// its arrival at the far end read (transmitter, wire, far end); the queue follows,
/// its own first line what every packet touches (see [`Queue`]); names last.
#[derive(Debug)]
#[repr(C, align(64))]
pub(crate) struct Port {
    // ---- line 0: transmitter and wire ----
    /// When the packet being serialised is fully sent (idle if `<= now`).
    pub(crate) busy_until: SimTime,
    /// Propagation delay.
    pub(crate) delay: SimDuration,
    /// Packets being serialised or propagating (their pool ids), with their arrival times.
    pub(crate) wire: VecDeque<(SimTime, PacketId)>,
    /// Receiving node.
    pub(crate) to: NodeId,
    /// A `TxDone` event is pending.
    pub(crate) tx_event_pending: bool,
    /// The receiving node is a router, so every packet arriving there is forwarded (flows
    /// end at hosts): known from this line, before the packet is read.
    pub(crate) to_router: bool,
    /// The link rate, prepared for serialisation times.
    pub(crate) tx_rate: TxRate,
    // ---- line 1 on: the egress queue ----
    /// Egress queue.
    pub(crate) queue: Queue,
    // ---- what the results read ----
    /// Transmitting node.
    pub(crate) from: NodeId,
    /// Index of the link in the scenario.
    pub(crate) link_index: usize,
    /// Display name, `"a->b"`.
    pub(crate) name: String,
}

impl Port {
    /// Start serialising packet `pkt` of `size` bytes at `now`; returns its arrival time at the far end.
    #[inline]
    pub(crate) fn start_tx(&mut self, pkt: PacketId, size: u32, now: SimTime) -> SimTime {
        debug_assert!(self.busy_until <= now);
        let tx = match self.tx_rate.tx_time(size) {
            Some(tx) => tx,
            None => self.exact_tx_time(size),
        };
        self.busy_until = now + tx;
        self.queue.add_sent(tx);
        let arrival = self.busy_until + self.delay;
        self.wire.push_back((arrival, pkt));
        arrival
    }

    /// [`BitRate::tx_time`] where [`TxRate`] leaves it (a rate that does not divide 8e9).
    #[inline]
    fn exact_tx_time(&self, size: u32) -> SimDuration {
        self.rate().tx_time(size)
    }

    /// The link rate (kept once, by the queue, whose disciplines read it).
    pub(crate) fn rate(&self) -> BitRate {
        self.queue.link_rate()
    }

    /// The packet at the head of the wire, which has arrived at the far end.
    #[inline]
    pub(crate) fn take_arrival(&mut self) -> Option<PacketId> {
        self.wire.pop_front().map(|(_, pkt)| pkt)
    }

    /// Free the queue's and the wire's slots beyond what they hold now.
    pub(crate) fn give_back_memory(&mut self) {
        self.queue.give_back_memory();
        crate::qdisc::give_back(&mut self.wire, WIRE_MIN_SLOTS);
    }

    /// Time the transmitter has spent sending up to `t` (not beyond), ns.
    pub(crate) fn busy_until_time(&self, t: SimTime) -> u64 {
        self.queue.sent_ns() - self.busy_until.saturating_since(t).as_nanos()
    }
}

#[cfg(test)]
mod tests {
    use std::mem::{align_of, offset_of, size_of};

    use super::Port;
    use crate::memory::field;

    /// Starting a packet and its arrival at the far end read line 0 alone; the queue's
    /// per-packet line is the next one.
    #[test]
    fn a_ports_transmitter_and_wire_fill_line_0_and_its_queue_starts_line_1() {
        assert_eq!(align_of::<Port>(), 64);
        let line_0 = [
            field!(Port, busy_until),
            field!(Port, delay),
            field!(Port, wire),
            field!(Port, to),
            field!(Port, tx_event_pending),
            field!(Port, to_router),
            field!(Port, tx_rate),
        ];
        crate::memory::assert_in_line(&line_0, 0);
        assert_eq!(offset_of!(Port, queue), 64);
    }

    /// A port takes no more memory than before it was laid out by lines (752 bytes).
    #[test]
    fn a_port_takes_at_most_11_cache_lines() {
        assert!(size_of::<Port>() <= 704, "{} bytes", size_of::<Port>());
    }
}
