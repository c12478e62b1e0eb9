//! Packets: IP-level fields and a TCP header, moved by value (`Copy`, no
//! heap pointer), so forwarding a packet never allocates.
//!
//! Sequence numbers are absolute byte offsets in a `u64` sequence space that
//! starts at 0 (the SYN) for each direction, so they never wrap. Traces that
//! need 32-bit wire values take them modulo 2^32.

use crate::ids::{FlowId, NodeId};
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
    /// When it entered its current queue (for sojourn time).
    pub enqueued_at: SimTime,
}
