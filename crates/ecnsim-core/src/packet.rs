//! Packets: IP-level fields and a TCP header, and the pool that holds the
//! packets in the network.
//!
//! A packet is written once into the simulation's [`PacketPool`] when a host
//! sends it and freed when it is delivered or dropped; queues, link wires and
//! events carry its [`PacketId`] (4 bytes) and the few fields queue
//! disciplines read ([`crate::qdisc::QueuedPacket`]), never the packet itself.
//!
//! Sequence numbers are absolute byte offsets in a `u64` sequence space that
//! starts at 0 (the SYN) for each direction, so they never wrap. Traces that
//! need 32-bit wire values take them modulo 2^32.

use crate::ids::{FlowId, NodeId, PacketId};
use crate::time::SimTime;

/// The 2-bit ECN field of the IP header (RFC 3168 §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Ecn {
    /// 00: not ECN-capable transport.
    #[default]
    NotEct = 0b00,
    /// 01: ECN-capable transport, ECT(1).
    Ect1 = 0b01,
    /// 10: ECN-capable transport, ECT(0).
    Ect0 = 0b10,
    /// 11: congestion experienced.
    Ce = 0b11,
}

impl Ecn {
    /// True for ECT(0) and ECT(1) (a router may mark the packet instead of dropping it).
    #[must_use]
    pub fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1)
    }
}

/// TCP header flags (RFC 793 §3.1, RFC 3168 §6.1 for ECE and CWR).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TcpFlags(u8);

impl TcpFlags {
    /// No more data from sender.
    pub const FIN: TcpFlags = TcpFlags(0x01);
    /// Synchronise sequence numbers.
    pub const SYN: TcpFlags = TcpFlags(0x02);
    /// Reset the connection.
    pub const RST: TcpFlags = TcpFlags(0x04);
    /// Push function.
    pub const PSH: TcpFlags = TcpFlags(0x08);
    /// The acknowledgement field is significant.
    pub const ACK: TcpFlags = TcpFlags(0x10);
    /// ECN-Echo (RFC 3168 §6.1).
    pub const ECE: TcpFlags = TcpFlags(0x40);
    /// Congestion Window Reduced (RFC 3168 §6.1).
    pub const CWR: TcpFlags = TcpFlags(0x80);

    /// No flags.
    #[must_use]
    pub const fn empty() -> Self {
        TcpFlags(0)
    }
    /// The raw bits as on the wire.
    #[must_use]
    pub const fn bits(self) -> u8 {
        self.0
    }
    /// True if every flag of `other` is set.
    #[must_use]
    pub const fn contains(self, other: TcpFlags) -> bool {
        self.0 & other.0 == other.0
    }
    /// Set the flags of `other`.
    pub fn insert(&mut self, other: TcpFlags) {
        self.0 |= other.0;
    }
    /// These flags less those of `other`.
    #[must_use]
    pub const fn without(self, other: TcpFlags) -> Self {
        TcpFlags(self.0 & !other.0)
    }
}

impl std::ops::BitOr for TcpFlags {
    type Output = TcpFlags;
    fn bitor(self, rhs: TcpFlags) -> TcpFlags {
        TcpFlags(self.0 | rhs.0)
    }
}

/// One SACK block (RFC 2018 §3): bytes `[left, right)` received.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SackBlock {
    /// First byte of the block.
    pub left: u64,
    /// One past the last byte of the block.
    pub right: u64,
}

/// Most SACK blocks a segment carries (RFC 2018 §3: three with timestamps).
pub const MAX_SACK_BLOCKS: usize = 3;

/// The TCP header of a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TcpHeader {
    /// Sequence number of the first byte (or of the SYN / FIN).
    pub seq: u64,
    /// Next sequence number expected from the peer (valid with ACK).
    pub ack: u64,
    /// Flags.
    pub flags: TcpFlags,
    /// Advertised receive window, in bytes (unscaled: no window-scale limits here).
    pub window: u64,
    /// Payload bytes.
    pub payload: u32,
    /// SACK blocks, the first `sack_len` are valid.
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
    /// Number of valid SACK blocks.
    pub sack_len: u8,
    /// The SACK-permitted option (RFC 2018 §2), on SYN and SYN-ACK only.
    pub sack_permitted: bool,
    /// Timestamp value (RFC 7323 TSval), in ns; 0 if the option is absent.
    pub ts_val: u64,
    /// Timestamp echo reply (RFC 7323 TSecr), in ns.
    pub ts_ecr: u64,
    /// The sender's current RTT estimate in whole milliseconds, carried for
    /// routers that classify packets by RTT (Adaptive ECN, STUDIES.md §4); 0 if
    /// the sender has no sample yet or the scenario does not ask for it.
    pub rtt_hint_ms: u32,
}

impl TcpHeader {
    /// The valid SACK blocks.
    #[must_use]
    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sack[..usize::from(self.sack_len)]
    }

    /// Bytes of TCP options on the wire, padded as real stacks do: SACK-permitted
    /// as NOP, NOP, kind, length (4 B, RFC 2018 §2); SACK as NOP, NOP, kind, length,
    /// then 8 B per block (RFC 2018 §3). Timestamps are not modelled on the wire.
    #[must_use]
    pub fn options_len(&self) -> u32 {
        let permitted = if self.sack_permitted { 4 } else { 0 };
        let blocks = if self.sack_len > 0 { 4 + 8 * u32::from(self.sack_len) } else { 0 };
        permitted + blocks
    }
}

/// The transport protocol of a packet, which says which arena `Packet::flow` indexes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Transport {
    /// TCP: `flow` is a connection, `tcp` its header.
    #[default]
    Tcp,
    /// UDP: `flow` is a UDP flow; `tcp` is unused except `payload` (the datagram's payload bytes).
    Udp,
    /// A packet from outside the simulation (a real host, see [`crate::external`]):
    /// `flow` is the driver's opaque handle for its bytes; `tcp` is unused.
    External,
}

/// A packet on the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Unique per run, in order of creation.
    pub uid: u64,
    /// Sending host.
    pub src: NodeId,
    /// Destination host.
    pub dst: NodeId,
    /// The connection (or UDP flow, see `proto`) the packet belongs to.
    pub flow: FlowId,
    /// TCP or UDP.
    pub proto: Transport,
    /// True if sent by the connection's initiator (active opener).
    pub from_initiator: bool,
    /// Size on the wire in bytes, all headers included.
    pub size: u32,
    /// The IP ECN field.
    pub ecn: Ecn,
    /// The TCP header.
    pub tcp: TcpHeader,
    /// When the sending host emitted it (for one-way delay).
    pub sent_at: SimTime,
}

/// The packets in the network, by [`PacketId`]: a slab of slots and a free list.
///
/// A packet takes a slot when it is sent and gives it back when it is
/// delivered or dropped; the next packet sent takes the slot freed last. The
/// slab grows only when the packets in flight reach a new maximum, so once a
/// run has reached its largest flight the per-packet path never allocates;
/// it keeps that many slots until the simulation is dropped (a slot cannot
/// move while its id is held by a queue, a wire or an event). Which slot a
/// packet gets never changes a result: ids are not compared or ordered.
#[derive(Debug, Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
}

impl PacketPool {
    /// Put `pkt` in a free slot (a new one if none is free); returns its id.
    #[inline]
    pub fn insert(&mut self, pkt: Packet) -> PacketId {
        if let Some(id) = self.free.pop() {
            self.slots[id.index()] = pkt;
            id
        } else {
            self.slots.push(pkt);
            PacketId::from_index(self.slots.len() - 1)
        }
    }
    /// Free `id`'s slot (its packet was delivered or dropped).
    #[inline]
    pub fn remove(&mut self, id: PacketId) {
        debug_assert!(id.index() < self.slots.len() && self.free.len() < self.slots.len(), "packet {id:?} freed twice");
        self.free.push(id);
    }
    /// Packets held now (sent and not yet delivered or dropped).
    #[must_use]
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }
    /// True if no packet is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Slots allocated: the most packets held at once so far.
    #[must_use]
    pub fn slots(&self) -> usize {
        self.slots.len()
    }
    /// Bytes of heap the pool holds.
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Packet>() + self.free.capacity() * std::mem::size_of::<PacketId>()
    }
}

impl std::ops::Index<PacketId> for PacketPool {
    type Output = Packet;
    #[inline]
    fn index(&self, id: PacketId) -> &Packet {
        &self.slots[id.index()]
    }
}

impl std::ops::IndexMut<PacketId> for PacketPool {
    #[inline]
    fn index_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(uid: u64) -> Packet {
        Packet {
            uid,
            src: NodeId(0),
            dst: NodeId(1),
            flow: FlowId(0),
            proto: Transport::Tcp,
            from_initiator: true,
            size: 1000,
            ecn: Ecn::NotEct,
            tcp: TcpHeader::default(),
            sent_at: SimTime::ZERO,
        }
    }

    #[test]
    fn pool_reuses_freed_slots_and_grows_only_at_a_new_maximum() {
        let mut pool = PacketPool::default();
        let ids: Vec<PacketId> = (0..4).map(|uid| pool.insert(packet(uid))).collect();
        assert_eq!((pool.len(), pool.slots()), (4, 4));
        assert_eq!(pool[ids[2]].uid, 2);
        pool.remove(ids[1]);
        pool.remove(ids[3]);
        assert_eq!((pool.len(), pool.slots()), (2, 4));
        // The slot freed last is taken first; the others keep their packets.
        assert_eq!(pool.insert(packet(10)), ids[3]);
        assert_eq!(pool.insert(packet(11)), ids[1]);
        assert_eq!(pool.slots(), 4);
        assert_eq!(pool.insert(packet(12)), PacketId(4));
        assert_eq!((pool.len(), pool.slots()), (5, 5));
        assert_eq!([ids[0], ids[1], ids[2], ids[3]].map(|id| pool[id].uid), [0, 11, 2, 10]);
        pool[ids[0]].ecn = Ecn::Ce;
        assert_eq!(pool[ids[0]].ecn, Ecn::Ce);
        for id in [ids[0], ids[1], ids[2], ids[3], PacketId(4)] {
            pool.remove(id);
        }
        assert!(pool.is_empty());
        assert!(pool.heap_bytes() >= 5 * std::mem::size_of::<Packet>());
    }
}
