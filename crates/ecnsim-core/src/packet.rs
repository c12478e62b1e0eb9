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

/// The AccECN TCP option (RFC 9768 §3.2.3) as on the wire: its kind says the field order, its
/// length how many 24-bit fields it carries. Absent when `kind` is 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct AccEcnOption {
    /// 0 (absent), 172 (AccECN0: EE0B, ECEB, EE1B) or 174 (AccECN1: EE1B, ECEB, EE0B).
    pub kind: u8,
    /// The option's length byte: 2, 5, 8 or 11 (RFC 9768 §3.2.3 Table 5).
    pub len: u8,
    /// The fields in wire order, each the 24 least significant bits of a byte counter; the
    /// first `(len - 2) / 3` are valid.
    pub fields: [u32; 3],
}

impl AccEcnOption {
    /// RFC 9768 §3.2.3: the option kind of field order 0 (AccECN0).
    pub const KIND_ORDER_0: u8 = 172;
    /// RFC 9768 §3.2.3: the option kind of field order 1 (AccECN1).
    pub const KIND_ORDER_1: u8 = 174;

    /// True if the segment carries the option.
    #[must_use]
    pub fn is_present(&self) -> bool {
        self.kind != 0
    }
}

/// The TCP header of a segment.
///
/// 72 bytes: the window is 32 bits and the SACK blocks are 32-bit offsets from `ack`
/// (a receiver reports only data above its cumulative ACK and within its window, and
/// windows are below 2^32 bytes). In declaration order (`repr(C)`): the fields every
/// segment's processing reads take its first 32 bytes, the SACK blocks and the AccECN
/// option the rest (see [`Packet`]'s layout).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(C)]
pub struct TcpHeader {
    /// Sequence number of the first byte (or of the SYN / FIN).
    pub seq: u64,
    /// Next sequence number expected from the peer (valid with ACK).
    pub ack: u64,
    /// Advertised receive window, in bytes (unscaled: no window-scale limits here).
    pub window: u32,
    /// Payload bytes.
    pub payload: u32,
    /// The sender's current RTT estimate in whole milliseconds, carried for
    /// routers that classify packets by RTT (Adaptive ECN, STUDIES.md §4); 0 if
    /// the sender has no sample yet or the scenario does not ask for it.
    pub rtt_hint_ms: u32,
    /// Flags.
    pub flags: TcpFlags,
    /// Number of valid SACK blocks.
    pub(crate) sack_len: u8,
    /// The SACK-permitted option (RFC 2018 §2), on SYN and SYN-ACK only.
    pub sack_permitted: bool,
    /// The AE flag (RFC 9768 §3.1.1, the bit that was the ECN nonce sum, NS), in byte 12 of
    /// the header beside the data offset, apart from the eight flags of byte 13.
    pub ae: bool,
    /// SACK blocks as `[left, right)` offsets from `ack`; the first `sack_len` are valid.
    pub(crate) sack: [(u32, u32); MAX_SACK_BLOCKS],
    /// The AccECN option (RFC 9768 §3.2.3), on AccECN connections only.
    pub accecn: AccEcnOption,
}

/// The SACK blocks of a segment, by value (see [`TcpHeader::sack_blocks`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SackBlocks {
    blocks: [SackBlock; MAX_SACK_BLOCKS],
    len: u8,
}

impl std::ops::Deref for SackBlocks {
    type Target = [SackBlock];
    fn deref(&self) -> &[SackBlock] {
        &self.blocks[..usize::from(self.len)]
    }
}

impl TcpHeader {
    /// The valid SACK blocks.
    #[must_use]
    pub fn sack_blocks(&self) -> SackBlocks {
        let mut out = SackBlocks { len: self.sack_len, ..SackBlocks::default() };
        for i in 0..usize::from(self.sack_len) {
            out.blocks[i] = self.sack_block(i);
        }
        out
    }

    /// Number of valid SACK blocks.
    #[must_use]
    pub fn sack_len(&self) -> usize {
        usize::from(self.sack_len)
    }

    /// SACK block `i`, or `[0, 0)` if the segment carries fewer than `i + 1`.
    #[must_use]
    pub fn sack_block(&self, i: usize) -> SackBlock {
        if i >= usize::from(self.sack_len) {
            return SackBlock::default();
        }
        let (l, r) = self.sack[i];
        SackBlock { left: self.ack + u64::from(l), right: self.ack + u64::from(r) }
    }

    /// Carry `blocks` (at most [`MAX_SACK_BLOCKS`]), which lie above `ack` (set first) and
    /// within 2^32 bytes of it.
    ///
    /// # Panics
    /// If a block lies below `ack` or 2^32 bytes or more above it (a receiver never
    /// reports such a block: it holds only data above RCV.NXT and within its window).
    pub fn set_sack(&mut self, blocks: &[SackBlock]) {
        assert!(blocks.len() <= MAX_SACK_BLOCKS, "at most {MAX_SACK_BLOCKS} SACK blocks");
        let offset = |x: u64| u32::try_from(x - self.ack).expect("a SACK edge within 2^32 bytes above the ACK");
        for (i, b) in blocks.iter().enumerate() {
            assert!(b.left >= self.ack && b.right >= b.left, "a SACK block above the ACK");
            self.sack[i] = (offset(b.left), offset(b.right));
        }
        self.sack[blocks.len()..].fill((0, 0));
        self.sack_len = u8::try_from(blocks.len()).expect("at most MAX_SACK_BLOCKS");
    }

    /// Bytes of TCP options on the wire, padded as real stacks do: SACK-permitted
    /// as NOP, NOP, kind, length (4 B, RFC 2018 §2); SACK as NOP, NOP, kind, length,
    /// then 8 B per block (RFC 2018 §3); the AccECN option's 2 + 3n bytes padded with NOPs
    /// to a multiple of 4 (RFC 9768 §3.2.3). Timestamps are not modelled on the wire.
    #[must_use]
    pub fn options_len(&self) -> u32 {
        let permitted = if self.sack_permitted { 4 } else { 0 };
        let blocks = if self.sack_len > 0 { 4 + 8 * u32::from(self.sack_len) } else { 0 };
        let accecn = if self.accecn.is_present() { u32::from(self.accecn.len).next_multiple_of(4) } else { 0 };
        permitted + blocks + accecn
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
///
/// In declaration order (`repr(C)`, 112 bytes, at the start of a 64-byte aligned pool
/// slot): what a router reads to forward or queue the packet and what its delivery
/// reads (the IP fields, the destination endpoint, the send time, and the TCP header up
/// to its flags) fill the first cache line; the SACK blocks, the AccECN option and the uid
/// follow, read only by a segment that carries SACK blocks or the option, and by traces. With thousands of
/// connections a packet's slot has gone cold by the time the next node or its endpoint
/// reads it: a visit reads one line of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Packet {
    /// When the sending host emitted it (for one-way delay).
    pub sent_at: SimTime,
    /// The connection (or UDP flow, see `proto`) the packet belongs to.
    pub flow: FlowId,
    /// Destination host.
    pub dst: NodeId,
    /// A TCP segment's destination endpoint in the simulation's endpoint arena, stamped
    /// when it is sent, so that delivery reaches the socket straight from the packet
    /// instead of through the connection's row (one dependent cold read fewer with
    /// thousands of connections). Checked on delivery against the endpoint's connection:
    /// the pair may have been released and reused since. 0 for other packets.
    pub(crate) to_endpoint: u32,
    /// Size on the wire in bytes, all headers included.
    pub size: u32,
    /// TCP or UDP.
    pub proto: Transport,
    /// The IP ECN field.
    pub ecn: Ecn,
    /// True if sent by the connection's initiator (active opener).
    pub from_initiator: bool,
    /// Sending host.
    pub src: NodeId,
    /// The TCP header (its first 32 bytes in the first line, its SACK blocks in the second).
    pub tcp: TcpHeader,
    /// Unique per run, in order of creation.
    pub uid: u64,
}

impl Default for Packet {
    /// An empty TCP packet from node 0 to node 0 (a placeholder to write over).
    fn default() -> Self {
        Packet {
            uid: 0,
            src: NodeId(0),
            dst: NodeId(0),
            flow: FlowId(0),
            proto: Transport::Tcp,
            from_initiator: false,
            size: 0,
            ecn: Ecn::NotEct,
            tcp: TcpHeader::default(),
            sent_at: SimTime::ZERO,
            to_endpoint: 0,
        }
    }
}

/// The packet behind another on the same wire, and when it reaches the far end: a wire
/// threads its packets through their pool slots ([`crate::link::Wire`]), so that it needs
/// no buffer of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NextOnWire {
    /// When the packet behind arrives at the far end.
    pub(crate) at: SimTime,
    /// The packet behind.
    pub(crate) id: PacketId,
}

/// One slot of the pool: a packet and, while it is on a wire with packets behind it, the
/// next of them. 128 bytes, 64-byte aligned: the packet's first line, then its SACK blocks,
/// AccECN option and uid with the wire's link, which only a wire holding two packets or more reads.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Slot {
    pkt: Packet,
    next_on_wire: NextOnWire,
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
    slots: Vec<Slot>,
    free: Vec<PacketId>,
    /// Where [`PacketPool::next_slot`] writes when no slot is free.
    spare: Packet,
}

impl PacketPool {
    /// Put `pkt` in a free slot (a new one if none is free); returns its id.
    #[inline]
    pub fn insert(&mut self, pkt: Packet) -> PacketId {
        *self.next_slot() = pkt;
        self.commit()
    }
    /// The slot the next [`PacketPool::commit`] takes, to build a packet in place
    /// instead of building it elsewhere and copying it in: the free slot `insert` would
    /// take, or (when none is free) a spare that `commit` moves into a new slot. Writing
    /// here without committing holds nothing (the next packet overwrites it).
    #[inline]
    pub fn next_slot(&mut self) -> &mut Packet {
        match self.free.last() {
            Some(&id) => &mut self.slots[id.index()].pkt,
            None => &mut self.spare,
        }
    }
    /// Take the slot [`PacketPool::next_slot`] returned, holding what was written there;
    /// the same slot [`PacketPool::insert`] would have taken.
    #[inline]
    pub fn commit(&mut self) -> PacketId {
        if let Some(id) = self.free.pop() {
            id
        } else {
            // No packet behind it yet: a wire writes the link before it reads it.
            self.slots.push(Slot { pkt: self.spare, next_on_wire: NextOnWire { at: SimTime::ZERO, id: PacketId(0) } });
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
        self.slots.capacity() * std::mem::size_of::<Slot>() + self.free.capacity() * std::mem::size_of::<PacketId>()
    }
    /// The packet behind `id` on its wire ([`PacketPool::set_next_on_wire`]).
    #[inline]
    pub(crate) fn next_on_wire(&self, id: PacketId) -> NextOnWire {
        self.slots[id.index()].next_on_wire
    }
    /// Packet `next`, arriving at `at`, follows `id` on its wire.
    #[inline]
    pub(crate) fn set_next_on_wire(&mut self, id: PacketId, next: NextOnWire) {
        self.slots[id.index()].next_on_wire = next;
    }
}

impl std::ops::Index<PacketId> for PacketPool {
    type Output = Packet;
    #[inline]
    fn index(&self, id: PacketId) -> &Packet {
        &self.slots[id.index()].pkt
    }
}

impl std::ops::IndexMut<PacketId> for PacketPool {
    #[inline]
    fn index_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id.index()].pkt
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
            to_endpoint: 0,
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

    /// What routers and delivery read sits in a packet's first cache line; the SACK
    /// blocks, the uid and the wire's link to the packet behind in its second.
    #[test]
    fn a_packets_forwarding_and_delivery_fields_sit_in_its_first_line() {
        use std::mem::{align_of, size_of};

        use crate::memory::field;
        assert_eq!((size_of::<Packet>(), size_of::<Slot>(), align_of::<Slot>()), (112, 128, 64));
        assert_eq!(std::mem::offset_of!(Slot, pkt), 0);
        let line_0 = [
            field!(Packet, sent_at),
            field!(Packet, flow),
            field!(Packet, dst),
            field!(Packet, to_endpoint),
            field!(Packet, size),
            field!(Packet, proto),
            field!(Packet, ecn),
            field!(Packet, from_initiator),
            field!(Packet, tcp.seq),
            field!(Packet, tcp.ack),
            field!(Packet, tcp.window),
            field!(Packet, tcp.payload),
            field!(Packet, tcp.rtt_hint_ms),
            field!(Packet, tcp.flags),
            field!(Packet, tcp.sack_len),
            field!(Packet, tcp.sack_permitted),
            field!(Packet, tcp.ae),
        ];
        crate::memory::assert_in_line(&line_0, 0);
        let line_1 = [
            field!(Slot, pkt.tcp.sack),
            field!(Slot, pkt.tcp.accecn),
            field!(Slot, pkt.uid),
            field!(Slot, next_on_wire),
        ];
        crate::memory::assert_in_line(&line_1, 1);
    }

    #[test]
    fn sack_blocks_round_trip_as_offsets_from_the_ack_and_a_tcp_header_is_72_bytes() {
        assert_eq!(std::mem::size_of::<TcpHeader>(), 72);
        let mut h = TcpHeader { ack: (1 << 40) + 1, ..TcpHeader::default() };
        let blocks = [
            SackBlock { left: (1 << 40) + 5_001, right: (1 << 40) + 6_001 },
            SackBlock { left: (1 << 40) + 1_001, right: (1 << 40) + 3_001 },
        ];
        h.set_sack(&blocks);
        assert_eq!((h.sack_len(), &*h.sack_blocks()), (2, &blocks[..]));
        assert_eq!(h.sack_block(1), blocks[1]);
        // Past the valid ones: [0, 0), as traces show them.
        assert_eq!(h.sack_block(2), SackBlock::default());
        assert_eq!(h.options_len(), 4 + 2 * 8);
        h.set_sack(&[]);
        assert!(h.sack_blocks().is_empty() && h == TcpHeader { ack: (1 << 40) + 1, ..TcpHeader::default() });
    }
}
