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
use crate::time::{BitRate, SimDuration, SimTime};

/// Slots a wire keeps when it empties.
const WIRE_MIN_SLOTS: usize = 8;

/// One direction of a point-to-point link.
#[derive(Debug)]
pub(crate) struct Port {
    /// Transmitting node.
    pub(crate) from: NodeId,
    /// Receiving node.
    pub(crate) to: NodeId,
    /// Link rate.
    pub(crate) rate: BitRate,
    /// Propagation delay.
    pub(crate) delay: SimDuration,
    /// Egress queue.
    pub(crate) queue: Queue,
    /// When the packet being serialised is fully sent (idle if `<= now`).
    pub(crate) busy_until: SimTime,
    /// A `TxDone` event is pending.
    pub(crate) tx_event_pending: bool,
    /// Packets being serialised or propagating (their pool ids), with their arrival times.
    pub(crate) wire: VecDeque<(SimTime, PacketId)>,
    /// Display name, `"a->b"`.
    pub(crate) name: String,
    /// Index of the link in the scenario.
    pub(crate) link_index: usize,
    /// Serialisation time of every packet started so far, ns.
    pub(crate) busy_ns: u64,
}

impl Port {
    /// Start serialising packet `pkt` of `size` bytes at `now`; returns its arrival time at the far end.
    #[inline]
    pub(crate) fn start_tx(&mut self, pkt: PacketId, size: u32, now: SimTime) -> SimTime {
        debug_assert!(self.busy_until <= now);
        let tx = self.rate.tx_time(size);
        self.busy_until = now + tx;
        self.busy_ns += tx.as_nanos();
        let arrival = self.busy_until + self.delay;
        self.wire.push_back((arrival, pkt));
        arrival
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
        self.busy_ns - self.busy_until.saturating_since(t).as_nanos()
    }
}
