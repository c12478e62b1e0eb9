//! Queue disciplines: the egress queue of each link direction.
//!
//! A discipline implements [`QueueDisc`] in its own file and is dispatched by
//! the closed enum [`AnyQdisc`] (no `dyn` on the per-packet path). It is
//! sans-IO: `now`, the link rate and its own random stream come in through
//! [`QdiscCx`], and it reports every drop and mark through the same context
//! with a reason enum. Shared bookkeeping (counters by reason, time-weighted
//! occupancy, per-flow attribution) lives in [`Queue`], the wrapper that calls
//! the trait, so a discipline holds only its algorithm's state.

pub mod droptail;

pub use droptail::DropTail;

use crate::ids::FlowId;
use crate::packet::{Ecn, Packet};
use crate::rng::SimRng;
use crate::time::{BitRate, SimTime};

/// Why a packet was dropped. Maps onto ns-3's queue-disc drop reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum DropReason {
    /// The buffer was full (ns-3: "Queue disc limit exceeded"; DropTail's only reason).
    Overflow = 0,
    /// An AQM's probabilistic early drop (ns-3 RED: `UNFORCED_DROP`).
    Early = 1,
    /// An AQM's forced drop, e.g. RED above max_th (ns-3 RED: `FORCED_DROP`).
    Forced = 2,
}

impl DropReason {
    /// Every reason, in discriminant order.
    pub const ALL: [DropReason; 3] = [DropReason::Overflow, DropReason::Early, DropReason::Forced];
    /// Column-name form.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Overflow => "overflow",
            DropReason::Early => "early",
            DropReason::Forced => "forced",
        }
    }
}

/// Why a packet was CE-marked. Maps onto ns-3's queue-disc mark reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum MarkReason {
    /// An AQM's probabilistic early mark (ns-3 RED: `UNFORCED_MARK`).
    Early = 0,
    /// A mark where the AQM would otherwise force a drop (ns-3 RED: `FORCED_MARK`).
    Forced = 1,
}

impl MarkReason {
    /// Every reason, in discriminant order.
    pub const ALL: [MarkReason; 2] = [MarkReason::Early, MarkReason::Forced];
    /// Column-name form.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            MarkReason::Early => "early",
            MarkReason::Forced => "forced",
        }
    }
}

/// What a discipline did besides queueing and dequeueing, collected per call.
/// The buffers are reused, so recording a drop does not allocate once warm.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Packets dropped, with their reasons.
    pub drops: Vec<(Packet, DropReason)>,
    /// Flows whose packets were marked, with the reasons.
    pub marks: Vec<(FlowId, MarkReason)>,
}

impl Outcome {
    fn clear(&mut self) {
        self.drops.clear();
        self.marks.clear();
    }
}

/// Everything a discipline may use besides its own state.
#[derive(Debug)]
pub struct QdiscCx<'a> {
    /// The current time.
    pub now: SimTime,
    /// The rate of the link this queue feeds (for idle-time corrections).
    pub link_rate: BitRate,
    /// This queue's own random stream.
    pub rng: &'a mut SimRng,
    outcome: &'a mut Outcome,
}

impl QdiscCx<'_> {
    /// Drop `pkt` for `reason`.
    pub fn drop_packet(&mut self, pkt: Packet, reason: DropReason) {
        self.outcome.drops.push((pkt, reason));
    }
    /// CE-mark `pkt` for `reason` if it is ECN-capable (RFC 3168 §5: only ECT
    /// packets may be marked). Returns false, changing nothing, otherwise.
    pub fn mark(&mut self, pkt: &mut Packet, reason: MarkReason) -> bool {
        if !pkt.ecn.is_ect() {
            return false;
        }
        pkt.ecn = Ecn::Ce;
        self.outcome.marks.push((pkt.flow, reason));
        true
    }
}

/// A queue discipline.
pub trait QueueDisc {
    /// Accept `pkt`, or drop it (or another packet) through `cx`.
    fn enqueue(&mut self, pkt: Packet, cx: &mut QdiscCx<'_>);
    /// The next packet to transmit, if any (dropping or marking on the way is allowed).
    fn dequeue(&mut self, cx: &mut QdiscCx<'_>) -> Option<Packet>;
    /// Packets queued.
    fn len_packets(&self) -> u64;
    /// Bytes queued.
    fn len_bytes(&self) -> u64;
}

/// The closed set of disciplines.
#[derive(Debug)]
pub enum AnyQdisc {
    /// First in, first out with a tail-drop limit.
    DropTail(DropTail),
}

macro_rules! dispatch {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            AnyQdisc::DropTail($q) => $e,
        }
    };
}

impl QueueDisc for AnyQdisc {
    fn enqueue(&mut self, pkt: Packet, cx: &mut QdiscCx<'_>) {
        dispatch!(self, q => q.enqueue(pkt, cx));
    }
    fn dequeue(&mut self, cx: &mut QdiscCx<'_>) -> Option<Packet> {
        dispatch!(self, q => q.dequeue(cx))
    }
    fn len_packets(&self) -> u64 {
        dispatch!(self, q => q.len_packets())
    }
    fn len_bytes(&self) -> u64 {
        dispatch!(self, q => q.len_bytes())
    }
}

/// Counters of one queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueCounters {
    /// Packets offered to the queue.
    pub arrivals: u64,
    /// Bytes offered to the queue.
    pub arrival_bytes: u64,
    /// Packets handed to the transmitter.
    pub departures: u64,
    /// Bytes handed to the transmitter.
    pub departure_bytes: u64,
    /// Packets dropped, by [`DropReason`] discriminant.
    pub drops: [u64; 3],
    /// Bytes dropped, by [`DropReason`] discriminant.
    pub drop_bytes: [u64; 3],
    /// Packets marked, by [`MarkReason`] discriminant.
    pub marks: [u64; 2],
    /// Integral of occupancy in packets over time, packet-nanoseconds.
    pub area_packets: u128,
    /// Integral of occupancy in bytes over time, byte-nanoseconds.
    pub area_bytes: u128,
}

impl QueueCounters {
    /// Counters accumulated since `earlier` (a snapshot of the same queue).
    #[must_use]
    pub fn since(&self, earlier: &QueueCounters) -> QueueCounters {
        let mut d = *self;
        d.arrivals -= earlier.arrivals;
        d.arrival_bytes -= earlier.arrival_bytes;
        d.departures -= earlier.departures;
        d.departure_bytes -= earlier.departure_bytes;
        for i in 0..3 {
            d.drops[i] -= earlier.drops[i];
            d.drop_bytes[i] -= earlier.drop_bytes[i];
        }
        for i in 0..2 {
            d.marks[i] -= earlier.marks[i];
        }
        d.area_packets -= earlier.area_packets;
        d.area_bytes -= earlier.area_bytes;
        d
    }
    /// Packets dropped for any reason.
    #[must_use]
    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }
}

/// A discipline with its bookkeeping: counters, time-weighted occupancy,
/// the maximum, and the per-call [`Outcome`] the simulation reads.
#[derive(Debug)]
pub struct Queue {
    qdisc: AnyQdisc,
    rng: SimRng,
    link_rate: BitRate,
    outcome: Outcome,
    /// Counters since the start of the run.
    pub counters: QueueCounters,
    /// Largest occupancy seen since the last reset, packets.
    pub max_packets: u64,
    /// Largest occupancy seen since the last reset, bytes.
    pub max_bytes: u64,
    last_change: SimTime,
}

impl Queue {
    /// Wrap `qdisc`, feeding a link of `link_rate`, drawing from `rng`.
    #[must_use]
    pub fn new(qdisc: AnyQdisc, link_rate: BitRate, rng: SimRng) -> Self {
        Queue {
            qdisc,
            rng,
            link_rate,
            outcome: Outcome::default(),
            counters: QueueCounters::default(),
            max_packets: 0,
            max_bytes: 0,
            last_change: SimTime::ZERO,
        }
    }

    /// Packets queued.
    #[must_use]
    pub fn len_packets(&self) -> u64 {
        self.qdisc.len_packets()
    }
    /// Bytes queued.
    #[must_use]
    pub fn len_bytes(&self) -> u64 {
        self.qdisc.len_bytes()
    }

    /// Bring the occupancy integrals up to `now`.
    pub fn integrate(&mut self, now: SimTime) {
        let dt = u128::from(now.saturating_since(self.last_change).as_nanos());
        self.counters.area_packets += u128::from(self.qdisc.len_packets()) * dt;
        self.counters.area_bytes += u128::from(self.qdisc.len_bytes()) * dt;
        self.last_change = now;
    }

    /// When the occupancy integrals were last brought up to date.
    #[must_use]
    pub fn last_change(&self) -> SimTime {
        self.last_change
    }

    /// Restart the maximum from the current occupancy (at the end of warm-up).
    pub fn reset_max(&mut self) {
        self.max_packets = self.len_packets();
        self.max_bytes = self.len_bytes();
    }

    /// Offer `pkt`; the returned [`Outcome`] lists what was dropped or marked.
    pub fn enqueue(&mut self, mut pkt: Packet, now: SimTime) -> &Outcome {
        self.integrate(now);
        self.outcome.clear();
        self.counters.arrivals += 1;
        self.counters.arrival_bytes += u64::from(pkt.size);
        pkt.enqueued_at = now;
        let mut cx = QdiscCx { now, link_rate: self.link_rate, rng: &mut self.rng, outcome: &mut self.outcome };
        self.qdisc.enqueue(pkt, &mut cx);
        self.account();
        &self.outcome
    }

    /// The next packet to transmit; see [`Queue::outcome`] for drops on the way.
    pub fn dequeue(&mut self, now: SimTime) -> Option<Packet> {
        self.integrate(now);
        self.outcome.clear();
        let mut cx = QdiscCx { now, link_rate: self.link_rate, rng: &mut self.rng, outcome: &mut self.outcome };
        let pkt = self.qdisc.dequeue(&mut cx);
        if let Some(p) = &pkt {
            self.counters.departures += 1;
            self.counters.departure_bytes += u64::from(p.size);
        }
        self.account();
        pkt
    }

    /// What the last enqueue or dequeue dropped or marked.
    #[must_use]
    pub fn outcome(&self) -> &Outcome {
        &self.outcome
    }

    fn account(&mut self) {
        for (p, reason) in &self.outcome.drops {
            self.counters.drops[*reason as usize] += 1;
            self.counters.drop_bytes[*reason as usize] += u64::from(p.size);
        }
        for (_, reason) in &self.outcome.marks {
            self.counters.marks[*reason as usize] += 1;
        }
        self.max_packets = self.max_packets.max(self.qdisc.len_packets());
        self.max_bytes = self.max_bytes.max(self.qdisc.len_bytes());
    }
}
