//! A scripted loss and marking element: a FIFO that drops or CE-marks
//! chosen packets, so scenario tests read like packetdrill scripts ("drop the
//! 5th, 6th and 8th data segments of flow f0; mark the SYN-ACK").
//!
//! Each rule counts the packets that match its kind (and flow, if given) as
//! they arrive at this queue, from 1, and acts on the listed ordinals. A mark
//! only changes ECN-capable packets (RFC 3168 §5); a packet that is not ECT is
//! left alone and the rule is still counted as used. Packets not acted on are
//! queued first in, first out up to `limit_packets`, beyond which they are
//! dropped like DropTail's.

use super::QueuedPacket;
use super::{DropReason, Fifo, Limit, MarkReason, QdiscCx, QueueDisc};
use crate::ids::FlowId;
use crate::packet::{TcpFlags, Transport};

/// Which packets a rule counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Match {
    /// Segments carrying payload (retransmissions included, in arrival order).
    Data,
    /// SYN without ACK.
    Syn,
    /// SYN with ACK.
    SynAck,
    /// Segments without payload, SYN or FIN.
    PureAck,
    /// Every packet.
    Any,
}

impl Match {
    fn matches(self, p: &QueuedPacket) -> bool {
        let f = p.flags;
        let syn = f.contains(TcpFlags::SYN);
        match self {
            Match::Data => p.has_payload,
            Match::Syn => syn && !f.contains(TcpFlags::ACK),
            Match::SynAck => syn && f.contains(TcpFlags::ACK),
            Match::PureAck => !p.has_payload && !syn && !f.contains(TcpFlags::FIN),
            Match::Any => true,
        }
    }
}

/// What a rule does to the packets it selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Drop the packet.
    Drop,
    /// Set CE if the packet is ECN-capable.
    Mark,
}

/// One scripted rule.
#[derive(Clone, Debug)]
pub struct Rule {
    /// Drop or mark.
    pub action: Action,
    /// Which packets are counted.
    pub kind: Match,
    /// Only packets of this flow (any flow if `None`).
    pub flow: Option<FlowId>,
    /// 1-based ordinals, among the counted packets, to act on (sorted).
    pub nth: Vec<u64>,
    /// Packets counted so far.
    seen: u64,
}

impl Rule {
    /// A rule acting on the `nth` matching packets.
    #[must_use]
    pub fn new(action: Action, kind: Match, flow: Option<FlowId>, mut nth: Vec<u64>) -> Self {
        nth.sort_unstable();
        Rule { action, kind, flow, nth, seen: 0 }
    }

    /// Count `p` if it matches; true if it is one of the chosen ordinals.
    fn selects(&mut self, p: &QueuedPacket) -> bool {
        // A rule naming a flow names a TCP connection: UDP flows have their own ids.
        let other_flow = self.flow.is_some_and(|f| f != p.flow || p.proto != Transport::Tcp);
        if !self.kind.matches(p) || other_flow {
            return false;
        }
        self.seen += 1;
        self.nth.binary_search(&self.seen).is_ok()
    }
}

/// The scripted queue.
#[derive(Debug)]
pub struct Script {
    rules: Vec<Rule>,
    limit: Limit,
    fifo: Fifo,
}

impl Script {
    /// A FIFO of `limit_packets` applying `rules`.
    #[must_use]
    pub fn new(rules: Vec<Rule>, limit_packets: u64) -> Self {
        let limit = Limit::Packets(limit_packets);
        Script { rules, limit, fifo: Fifo::new(limit) }
    }
}

impl QueueDisc for Script {
    fn enqueue(&mut self, mut pkt: QueuedPacket, cx: &mut QdiscCx<'_>) {
        let mut drop = false;
        for rule in &mut self.rules {
            if rule.selects(&pkt) {
                match rule.action {
                    // A scripted loss is a forced drop: the script, not the buffer, decided.
                    Action::Drop => drop = true,
                    Action::Mark => {
                        cx.mark(&mut pkt, MarkReason::Forced);
                    }
                }
            }
        }
        if drop {
            cx.drop_packet(pkt, DropReason::Forced);
        } else if self.fifo.fits(self.limit, &pkt) {
            self.fifo.push_back(pkt);
        } else {
            cx.drop_packet(pkt, DropReason::Overflow);
        }
    }

    fn dequeue(&mut self, _cx: &mut QdiscCx<'_>) -> Option<QueuedPacket> {
        self.fifo.pop_front()
    }

    fn len_packets(&self) -> u64 {
        self.fifo.len() as u64
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }
    fn give_back_memory(&mut self) {
        self.fifo.give_back_memory();
    }
}
