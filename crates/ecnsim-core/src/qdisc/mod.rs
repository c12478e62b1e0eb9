//! Queue disciplines: the egress queue of each link direction.
//!
//! A discipline implements [`QueueDisc`] in its own file and is dispatched by
//! the closed enum [`AnyQdisc`] (no `dyn` on the per-packet path). It is
//! sans-IO: `now`, the link rate and its own random stream come in through
//! [`QdiscCx`], and it reports every drop and mark through the same context
//! with a reason enum. Shared bookkeeping (counters by reason, time-weighted
//! occupancy, per-flow attribution) lives in [`Queue`], the wrapper that calls
//! the trait, so a discipline holds only its algorithm's state.
//!
//! A queue holds [`QueuedPacket`]s: a packet's id in the simulation's packet
//! pool with the fields disciplines read (32 bytes), not the packet itself,
//! as ns-3's `QueueDiscItem` holds a pointer with the header fields it needs.

pub mod aecn;
pub mod codel;
pub mod droptail;
pub mod dualpi2;
pub(crate) mod flow_queues;
pub mod fq_codel;
pub mod fq_pie;
pub mod pi;
pub mod pie;
pub mod red;
pub mod rem;
pub mod script;
pub mod threshold;

pub use aecn::Aecn;
pub use codel::Codel;
pub use droptail::DropTail;
pub use dualpi2::DualPi2;
pub use fq_codel::FqCodel;
pub use fq_pie::FqPie;
pub use pi::Pi;
pub use pie::Pie;
pub use red::Red;
pub use rem::Rem;
pub use threshold::ThresholdMarker;

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::ids::{FlowId, PacketId};
use crate::packet::{Ecn, Packet, TcpFlags, Transport};
use crate::rng::SimRng;
use crate::time::{BitRate, SimDuration, SimTime};

/// Why a packet was dropped. Maps onto ns-3's queue-disc drop reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum DropReason {
    /// The buffer was full (ns-3: "Queue disc limit exceeded"; DropTail's only reason).
    Overflow = 0,
    /// An AQM's early (unforced) congestion drop while the buffer still had
    /// room: RED's and PI's probabilistic drop (ns-3 `UNFORCED_DROP`), CoDel's
    /// control-law drop (ns-3 `TARGET_EXCEEDED_DROP`), PIE's random drop
    /// (ns-3 `UNFORCED_DROP`), REM's drop, the threshold marker's drop of a
    /// packet it cannot mark.
    Early = 1,
    /// An AQM's forced drop, e.g. RED with the average above max_th (ns-3 RED: `FORCED_DROP`).
    Forced = 2,
}

impl DropReason {
    /// Number of reasons (the length of the per-reason counter arrays).
    pub const COUNT: usize = 3;
    /// Every reason, in discriminant order.
    pub const ALL: [DropReason; Self::COUNT] = [DropReason::Overflow, DropReason::Early, DropReason::Forced];
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
    /// An AQM's early (unforced) mark in place of an early drop: RED, PI, REM
    /// (ns-3 `UNFORCED_MARK`), CoDel's control law (ns-3 `TARGET_EXCEEDED_MARK`),
    /// PIE (ns-3 `UNFORCED_MARK`).
    Early = 0,
    /// A mark where the AQM would otherwise force a drop (ns-3 RED: `FORCED_MARK`).
    Forced = 1,
    /// A deterministic mark because an instantaneous measure exceeded a fixed
    /// threshold: the threshold marker (queue > K), CoDel's and PIE's
    /// `ce_threshold` (ns-3 `CE_THRESHOLD_EXCEEDED_MARK`).
    CeThreshold = 2,
}

impl MarkReason {
    /// Number of reasons (the length of the per-reason counter arrays).
    pub const COUNT: usize = 3;
    /// Every reason, in discriminant order.
    pub const ALL: [MarkReason; Self::COUNT] = [MarkReason::Early, MarkReason::Forced, MarkReason::CeThreshold];
    /// Column-name form.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            MarkReason::Early => "early",
            MarkReason::Forced => "forced",
            MarkReason::CeThreshold => "ce_threshold",
        }
    }
}

/// The codepoint a packet carried when a queue marked it (only ECN-capable packets are marked).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum MarkedCodepoint {
    /// ECT(0): a Classic ECN sender's packet (RFC 3168).
    Ect0 = 0,
    /// ECT(1): an L4S sender's packet (RFC 9331 §4.1).
    Ect1 = 1,
    /// Already CE: counted as a mark, left unchanged (RFC 3168 §5).
    Ce = 2,
}

impl MarkedCodepoint {
    /// Number of codepoints (the length of the per-codepoint counter arrays).
    pub const COUNT: usize = 3;
    /// Every codepoint, in discriminant order.
    pub const ALL: [MarkedCodepoint; Self::COUNT] = [MarkedCodepoint::Ect0, MarkedCodepoint::Ect1, MarkedCodepoint::Ce];
    /// Column-name form.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            MarkedCodepoint::Ect0 => "ect0",
            MarkedCodepoint::Ect1 => "ect1",
            MarkedCodepoint::Ce => "ce",
        }
    }
    /// The counter a mark of a packet that carried `ecn` goes to.
    ///
    /// # Panics
    /// On Not-ECT, which [`QdiscCx::mark`] never marks.
    #[must_use]
    pub fn of(ecn: Ecn) -> Self {
        match ecn {
            Ecn::Ect0 => MarkedCodepoint::Ect0,
            Ecn::Ect1 => MarkedCodepoint::Ect1,
            Ecn::Ce => MarkedCodepoint::Ce,
            Ecn::NotEct => unreachable!("a Not-ECT packet is never marked"),
        }
    }
}

/// A packet as a queue holds it: its id in the packet pool and the fields
/// disciplines read, copied when it is offered to the queue. While it is
/// queued, its `ecn` here is the packet's: [`QdiscCx::mark`], the only way a
/// discipline changes it, reports the mark in the [`Outcome`], and the
/// simulation writes the CE codepoint into the pool then, so a packet leaving
/// the queue unmarked does not touch its pool slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueuedPacket {
    /// The packet's slot in the pool.
    pub id: PacketId,
    /// Size on the wire in bytes, all headers included.
    pub size: u32,
    /// The connection (or UDP flow, see `proto`) the packet belongs to.
    pub flow: FlowId,
    /// The sender's RTT estimate carried for RTT-aware AQMs (Adaptive ECN), ms; 0 if none.
    pub rtt_hint_ms: u32,
    /// When it entered this queue (for sojourn time).
    pub enqueued_at: SimTime,
    /// The IP ECN field.
    pub ecn: Ecn,
    /// TCP, UDP or external.
    pub proto: Transport,
    /// The TCP flags (scripted queues select packets by them).
    pub flags: TcpFlags,
    /// True if the segment carries payload.
    pub has_payload: bool,
}

impl QueuedPacket {
    /// Packet `pkt`, whose slot is `id`, as offered to a queue ([`Queue::enqueue`] sets `enqueued_at`).
    #[inline]
    #[must_use]
    pub fn new(id: PacketId, pkt: &Packet) -> Self {
        QueuedPacket {
            id,
            size: pkt.size,
            flow: pkt.flow,
            rtt_hint_ms: pkt.tcp.rtt_hint_ms,
            enqueued_at: SimTime::ZERO,
            ecn: pkt.ecn,
            proto: pkt.proto,
            flags: pkt.tcp.flags,
            has_payload: pkt.tcp.payload > 0,
        }
    }
}

/// What a discipline did besides queueing and dequeueing, collected per call.
/// The buffers are reused, so recording a drop does not allocate once warm.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Packets dropped, with their reasons.
    pub drops: Vec<(QueuedPacket, DropReason)>,
    /// Flows whose packets were marked (the flow's arena is named by the
    /// packet's transport), with the reasons, the packets' pool slots and the
    /// codepoints they carried before the mark (ECT(0), ECT(1) or already CE).
    pub marks: Vec<(FlowId, Transport, MarkReason, PacketId, Ecn)>,
    /// Marks since the queue was built, by the codepoint the packet carried (not cleared
    /// between calls: kept here, allocated with the first drop or mark, so that a queue
    /// that never marks spends no memory on it).
    marks_of: [u64; MarkedCodepoint::COUNT],
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
    /// Allocated at the queue's first drop or mark.
    outcome: &'a mut Option<Box<Outcome>>,
    /// Set when anything is added to `outcome`.
    noted: &'a mut bool,
    idle: &'a mut AqmIdle,
}

impl QdiscCx<'_> {
    /// An AQM's averaged queue saw an idle period of `idle` end at this arrival, and decayed by
    /// `m` mean-packet times (`m` = 0: shorter than one, no decay beyond the sample).
    pub(crate) fn note_idle(&mut self, idle: SimDuration, m: u64) {
        self.idle.periods += 1;
        self.idle.decays += u64::from(m > 0);
        self.idle.idle_ns += idle.as_nanos();
    }

    /// Drop `pkt` for `reason`.
    pub fn drop_packet(&mut self, pkt: QueuedPacket, reason: DropReason) {
        self.outcome.get_or_insert_default().drops.push((pkt, reason));
        *self.noted = true;
    }
    /// CE-mark `pkt` for `reason` in place of a drop, if it is ECN-capable.
    /// Returns false, changing nothing, for a Not-ECT packet (RFC 3168 §5:
    /// only ECT packets may be marked); the caller then drops it or lets it pass.
    ///
    /// A packet that is already CE counts as marked and is left unchanged
    /// (RFC 3168 §5: "When a CE packet ... is received by a router, the CE
    /// codepoint is left unchanged"), as in ns-3 (`QueueDiscItem::Mark`) and
    /// Linux (`INET_ECN_set_ce` returns true): it is not dropped, and the mark
    /// is counted, so queue mark counts are decisions, not newly set CE bits.
    pub fn mark(&mut self, pkt: &mut QueuedPacket, reason: MarkReason) -> bool {
        if !is_markable(pkt.ecn) {
            return false;
        }
        let before = pkt.ecn;
        pkt.ecn = Ecn::Ce;
        self.outcome.get_or_insert_default().marks.push((pkt.flow, pkt.proto, reason, pkt.id, before));
        *self.noted = true;
        true
    }

    /// A uniform draw in `[0, 1)` from this queue's stream.
    pub fn uniform(&mut self) -> f64 {
        self.rng.uniform()
    }

    /// True with probability `p`: `U < p` for `U` uniform on `[0, 1)`, so the
    /// probability is exactly `p`. No random number is drawn when `p <= 0`
    /// (never) or `p >= 1` (always), so a discipline's stream advances only
    /// on genuinely random decisions.
    pub fn bernoulli(&mut self, p: f64) -> bool {
        if p <= 0.0 {
            false
        } else if p >= 1.0 {
            true
        } else {
            self.rng.uniform() < p
        }
    }
}

/// True if a router may mark `ecn` instead of dropping (ECT(0), ECT(1), or
/// already CE; see [`QdiscCx::mark`]).
#[must_use]
pub fn is_markable(ecn: Ecn) -> bool {
    ecn != Ecn::NotEct
}

/// True for an ECT packet that does not yet carry a mark (the packets
/// mark-front looks for).
#[must_use]
pub fn is_unmarked_ect(ecn: Ecn) -> bool {
    ecn.is_ect()
}

/// A queue discipline.
pub trait QueueDisc {
    /// Accept `pkt`, or drop it (or another packet) through `cx`.
    fn enqueue(&mut self, pkt: QueuedPacket, cx: &mut QdiscCx<'_>);
    /// The next packet to transmit, if any (dropping or marking on the way is allowed).
    fn dequeue(&mut self, cx: &mut QdiscCx<'_>) -> Option<QueuedPacket>;
    /// Packets queued.
    fn len_packets(&self) -> u64;
    /// Bytes queued.
    fn len_bytes(&self) -> u64;
    /// Packets and bytes queued (one dispatch where both are needed).
    fn occupancy(&self) -> (u64, u64) {
        (self.len_packets(), self.len_bytes())
    }
    /// Whether a queued packet satisfies `f` (asked off the packet path: as an application
    /// writes). The default cannot look and answers "yes" whenever anything is queued; a
    /// discipline that can look answers exactly.
    fn any_queued(&self, f: &mut dyn FnMut(&QueuedPacket) -> bool) -> bool {
        // DEVIATION(Linux tcp_rate_check_app_limited()): a host queue other than DropTail is taken to
        // hold the writer's packets whenever it holds any (fewer app-limited marks, never more).
        let _ = f;
        self.len_packets() > 0
    }
    /// Free buffer slots beyond what the queue holds now ([`Fifo::give_back_memory`]).
    fn give_back_memory(&mut self) {}
    /// A size in bytes such that a packet smaller than it, offered while this queue is empty
    /// and its transmitter idle, would be accepted by `enqueue` and handed straight back by the
    /// `dequeue` that follows, with no other effect: no drop or mark, no random draw, no change
    /// to the discipline's state. Asked once, when the queue is built, so it must not change;
    /// the port then makes neither call for such a packet (`Port::passes_idle`). A bound
    /// below the true one only costs the two calls. The default, 0, always takes them; only a
    /// discipline without per-packet state may give more.
    fn idle_pass_below(&self) -> u32 {
        0
    }
    /// The discipline's internal estimates at `now`, for time series. A
    /// discipline with periodic updates first applies those due by `now`
    /// (which changes nothing observable: the same updates would be applied,
    /// with the same inputs, at its next packet event).
    fn aqm_state(&mut self, _now: SimTime) -> AqmState {
        AqmState::NONE
    }
}

/// An AQM's internal estimates, sampled into `queue_series`; NaN where a
/// discipline has no such quantity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AqmState {
    /// The averaged queue (RED, AECN: the EWMA `avg`), in the discipline's
    /// measure (packets or bytes).
    pub avg: f64,
    /// The current drop/mark probability: RED's `p_b`, PI's `p`, REM's
    /// `1 - phi^-price`, PIE's `drop_prob`.
    pub prob: f64,
    /// RED's current `max_p` (changes under Adaptive RED).
    pub max_p: f64,
}

impl AqmState {
    /// No estimates (DropTail, CoDel).
    pub const NONE: AqmState = AqmState { avg: f64::NAN, prob: f64::NAN, max_p: f64::NAN };
}

/// The closed set of disciplines.
#[derive(Debug)]
pub enum AnyQdisc {
    /// First in, first out with a tail-drop limit.
    DropTail(DropTail),
    /// Random Early Detection and its variants (gentle, adaptive, ECN policies).
    Red(Red),
    /// Adaptive ECN (RED with per-RTT-group max_p and mark-front).
    Aecn(Aecn),
    /// Instantaneous-queue threshold marker.
    Threshold(ThresholdMarker),
    /// The PI controller.
    Pi(Pi),
    /// Random Exponential Marking.
    Rem(Rem),
    /// Controlled Delay.
    Codel(Codel),
    /// Proportional Integral controller Enhanced.
    Pie(Pie),
    /// Flow queueing with CoDel per queue (RFC 8290).
    FqCodel(FqCodel),
    /// Scripted drops and marks of chosen packets (tests).
    Script(script::Script),
    /// The DualQ Coupled AQM with PI2 (RFC 9332).
    DualPi2(DualPi2),
    /// Flow queueing with PIE per queue (Linux `sch_fq_pie`).
    FqPie(FqPie),
}

macro_rules! dispatch {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            AnyQdisc::DropTail($q) => $e,
            AnyQdisc::Red($q) => $e,
            AnyQdisc::Aecn($q) => $e,
            AnyQdisc::Threshold($q) => $e,
            AnyQdisc::Pi($q) => $e,
            AnyQdisc::Rem($q) => $e,
            AnyQdisc::Codel($q) => $e,
            AnyQdisc::Pie($q) => $e,
            AnyQdisc::FqCodel($q) => $e,
            AnyQdisc::Script($q) => $e,
            AnyQdisc::DualPi2($q) => $e,
            AnyQdisc::FqPie($q) => $e,
        }
    };
}

impl QueueDisc for AnyQdisc {
    #[inline]
    fn enqueue(&mut self, pkt: QueuedPacket, cx: &mut QdiscCx<'_>) {
        dispatch!(self, q => q.enqueue(pkt, cx));
    }
    #[inline]
    fn dequeue(&mut self, cx: &mut QdiscCx<'_>) -> Option<QueuedPacket> {
        dispatch!(self, q => q.dequeue(cx))
    }
    fn len_packets(&self) -> u64 {
        dispatch!(self, q => q.len_packets())
    }
    fn len_bytes(&self) -> u64 {
        dispatch!(self, q => q.len_bytes())
    }
    #[inline]
    fn occupancy(&self) -> (u64, u64) {
        dispatch!(self, q => (q.len_packets(), q.len_bytes()))
    }
    fn any_queued(&self, f: &mut dyn FnMut(&QueuedPacket) -> bool) -> bool {
        dispatch!(self, q => q.any_queued(f))
    }
    fn idle_pass_below(&self) -> u32 {
        dispatch!(self, q => q.idle_pass_below())
    }
    fn aqm_state(&mut self, now: SimTime) -> AqmState {
        dispatch!(self, q => q.aqm_state(now))
    }
    fn give_back_memory(&mut self) {
        dispatch!(self, q => q.give_back_memory());
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
    pub drops: [u64; DropReason::COUNT],
    /// Bytes dropped, by [`DropReason`] discriminant.
    pub drop_bytes: [u64; DropReason::COUNT],
    /// Packets marked, by [`MarkReason`] discriminant.
    pub marks: [u64; MarkReason::COUNT],
    /// Packets marked, by the codepoint they carried ([`MarkedCodepoint`] discriminant): the
    /// L4S ECT(1) marks apart from the Classic ECT(0) ones (RFC 9331 §4.1).
    pub marks_of: [u64; MarkedCodepoint::COUNT],
    /// Integral of occupancy in packets over time, packet-nanoseconds.
    pub area_packets: u128,
    /// Integral of occupancy in bytes over time, byte-nanoseconds.
    pub area_bytes: u128,
    /// Idle periods of an averaging AQM (RED, AECN); zero for the others.
    pub aqm_idle: AqmIdle,
}

/// The idle periods an averaging AQM's estimator saw end at an arrival (FJ93 Fig. 2:
/// `m <- f(time - q_time)`, `avg <- (1 - w_q)^m avg`): counted where the average is updated,
/// never on the dequeue path, so a period still running at the end is not counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AqmIdle {
    /// Arrivals that found the queue idle for a positive time (the link idle, or, with
    /// `idle_start = "dequeue"`, the queue empty since its last dequeue).
    pub periods: u64,
    /// Of which long enough for at least one mean-packet time (`m >= 1`): `avg` decayed.
    pub decays: u64,
    /// Total length of the counted periods, ns.
    pub idle_ns: u64,
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
        for i in 0..DropReason::COUNT {
            d.drops[i] -= earlier.drops[i];
            d.drop_bytes[i] -= earlier.drop_bytes[i];
        }
        for i in 0..MarkReason::COUNT {
            d.marks[i] -= earlier.marks[i];
        }
        for i in 0..MarkedCodepoint::COUNT {
            d.marks_of[i] -= earlier.marks_of[i];
        }
        d.area_packets -= earlier.area_packets;
        d.area_bytes -= earlier.area_bytes;
        d.aqm_idle.periods -= earlier.aqm_idle.periods;
        d.aqm_idle.decays -= earlier.aqm_idle.decays;
        d.aqm_idle.idle_ns -= earlier.aqm_idle.idle_ns;
        d
    }
    /// Packets dropped for any reason.
    #[must_use]
    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }
    /// Packets marked for any reason.
    #[must_use]
    pub fn total_marks(&self) -> u64 {
        self.marks.iter().sum()
    }
}

/// A discipline with its bookkeeping: counters, time-weighted occupancy,
/// the maximum, and the per-call [`Outcome`] the simulation reads.
///
/// Laid out by who touches it (`repr(C)`; its port puts it on a cache-line boundary),
/// since with thousands of queues each packet finds its queue cold: the first line holds what every
/// arrival and departure reads or writes (occupancy, arrival counts, maximum); the second the
/// occupancy integrals and the discipline's context; then the discipline; then what changes
/// only on a drop or a mark. A packet its port passes straight through an empty queue
/// touches none of it (the port counts it: `Port::counters`). Departures are not counted:
/// they are arrivals less drops less what is queued.
#[derive(Debug)]
#[repr(C)]
pub struct Queue {
    // ---- line 0: every packet ----
    last_change: SimTime,
    arrivals: u64,
    arrival_bytes: u64,
    /// Bytes queued now: arrivals less departures and drops, kept here so the
    /// per-packet path reads the occupancy without a call into the discipline.
    bytes: u64,
    max_bytes: u64,
    /// Packets queued now, likewise (the packet pool holds at most 2^32 packets).
    packets: u32,
    max_packets: u32,
    /// The last enqueue or dequeue dropped or marked: `outcome` lists what. While
    /// false the outcome is empty and is not read.
    has_outcome: bool,
    // ---- line 1: queueing ----
    area_packets: u128,
    area_bytes: u128,
    link_rate: BitRate,
    // ---- the discipline, then what changes on drops and marks ----
    qdisc: AnyQdisc,
    rng: SimRng,
    /// Allocated at the first drop or mark.
    outcome: Option<Box<Outcome>>,
    drops: [u64; DropReason::COUNT],
    drop_bytes: [u64; DropReason::COUNT],
    marks: [u64; MarkReason::COUNT],
    aqm_idle: AqmIdle,
}

impl Queue {
    /// Wrap `qdisc`, feeding a link of `link_rate`, drawing from `rng`.
    #[must_use]
    pub fn new(qdisc: AnyQdisc, link_rate: BitRate, rng: SimRng) -> Self {
        Queue {
            last_change: SimTime::ZERO,
            arrivals: 0,
            arrival_bytes: 0,
            bytes: 0,
            max_bytes: 0,
            packets: 0,
            max_packets: 0,
            has_outcome: false,
            area_packets: 0,
            area_bytes: 0,
            link_rate,
            qdisc,
            rng,
            outcome: None,
            drops: [0; DropReason::COUNT],
            drop_bytes: [0; DropReason::COUNT],
            marks: [0; MarkReason::COUNT],
            aqm_idle: AqmIdle::default(),
        }
    }

    /// Counters since the start of the run (the occupancy integrals up to [`Queue::last_change`]).
    #[must_use]
    pub fn counters(&self) -> QueueCounters {
        let drops: u64 = self.drops.iter().sum();
        let drop_bytes: u64 = self.drop_bytes.iter().sum();
        QueueCounters {
            arrivals: self.arrivals,
            arrival_bytes: self.arrival_bytes,
            // Every arrival departed, was dropped, or is queued.
            departures: self.arrivals - drops - u64::from(self.packets),
            departure_bytes: self.arrival_bytes - drop_bytes - self.bytes,
            drops: self.drops,
            drop_bytes: self.drop_bytes,
            marks: self.marks,
            marks_of: self.outcome.as_ref().map_or([0; MarkedCodepoint::COUNT], |o| o.marks_of),
            area_packets: self.area_packets,
            area_bytes: self.area_bytes,
            aqm_idle: self.aqm_idle,
        }
    }

    /// Packets queued.
    #[inline]
    #[must_use]
    pub fn len_packets(&self) -> u64 {
        u64::from(self.packets)
    }
    /// Bytes queued.
    #[inline]
    #[must_use]
    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }
    /// Whether a queued packet satisfies `f` ([`QueueDisc::any_queued`]: exact where the
    /// discipline can look, else "yes" whenever anything is queued).
    #[must_use]
    pub fn any_queued(&self, f: &mut dyn FnMut(&QueuedPacket) -> bool) -> bool {
        self.packets > 0 && self.qdisc.any_queued(f)
    }
    /// Largest occupancy seen since the last reset, packets.
    #[must_use]
    pub fn max_packets(&self) -> u64 {
        u64::from(self.max_packets)
    }
    /// Largest occupancy seen since the last reset, bytes.
    #[must_use]
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// The rate of the link this queue feeds.
    #[must_use]
    pub(crate) fn link_rate(&self) -> BitRate {
        self.link_rate
    }

    /// Bring the occupancy integrals up to `now`.
    #[inline]
    pub fn integrate(&mut self, now: SimTime) {
        let dt = u128::from(now.saturating_since(self.last_change).as_nanos());
        self.area_packets += u128::from(self.packets) * dt;
        self.area_bytes += u128::from(self.bytes) * dt;
        self.last_change = now;
    }

    /// When the occupancy integrals were last brought up to date.
    #[must_use]
    pub fn last_change(&self) -> SimTime {
        self.last_change
    }

    /// Free buffer slots beyond what the queue holds now ([`Fifo::give_back_memory`]).
    pub fn give_back_memory(&mut self) {
        self.qdisc.give_back_memory();
    }

    /// Restart the maximum from the current occupancy (at the end of warm-up).
    pub fn reset_max(&mut self) {
        self.max_packets = self.packets;
        self.max_bytes = self.bytes;
    }

    /// Empty the outcome of the last operation, if it holds anything.
    #[inline]
    fn clear_outcome(&mut self) {
        if self.has_outcome {
            if let Some(o) = &mut self.outcome {
                o.clear();
            }
            self.has_outcome = false;
        }
    }

    /// The discipline and the context it works in at `now`, borrowed apart.
    #[inline]
    fn qdisc_and_cx(&mut self, now: SimTime) -> (&mut AnyQdisc, QdiscCx<'_>) {
        let cx = QdiscCx {
            now,
            link_rate: self.link_rate,
            rng: &mut self.rng,
            outcome: &mut self.outcome,
            noted: &mut self.has_outcome,
            idle: &mut self.aqm_idle,
        };
        (&mut self.qdisc, cx)
    }

    /// Offer `pkt`; the returned [`Outcome`] lists what was dropped or marked
    /// ([`Queue::has_outcome`] tells without reading it).
    pub fn enqueue(&mut self, mut pkt: QueuedPacket, now: SimTime) -> &Outcome {
        self.integrate(now);
        self.clear_outcome();
        self.arrivals += 1;
        self.arrival_bytes += u64::from(pkt.size);
        self.packets += 1;
        self.bytes += u64::from(pkt.size);
        pkt.enqueued_at = now;
        let (qdisc, mut cx) = self.qdisc_and_cx(now);
        qdisc.enqueue(pkt, &mut cx);
        self.account::<true>();
        self.outcome()
    }

    /// Count `pkt` as an arrival dropped for overflow without offering it to the discipline
    /// (a shared buffer refused it); the returned [`Outcome`] lists the drop.
    pub fn refuse(&mut self, mut pkt: QueuedPacket, now: SimTime) -> &Outcome {
        self.integrate(now);
        self.clear_outcome();
        self.arrivals += 1;
        self.arrival_bytes += u64::from(pkt.size);
        // Counted in, then out again by the drop (`account_outcome`).
        self.packets += 1;
        self.bytes += u64::from(pkt.size);
        pkt.enqueued_at = now;
        self.outcome.get_or_insert_default().drops.push((pkt, DropReason::Overflow));
        self.has_outcome = true;
        self.account::<false>();
        self.outcome()
    }

    /// The next packet to transmit; see [`Queue::outcome`] for drops on the way.
    // Inlined where a transmitter starts the next packet (a quarter of the hops).
    #[inline(always)]
    pub fn dequeue(&mut self, now: SimTime) -> Option<QueuedPacket> {
        self.integrate(now);
        self.clear_outcome();
        let (qdisc, mut cx) = self.qdisc_and_cx(now);
        let pkt = qdisc.dequeue(&mut cx);
        if let Some(p) = &pkt {
            self.packets -= 1;
            self.bytes -= u64::from(p.size);
        }
        // A dequeue only takes packets away: the maximum stands.
        self.account::<false>();
        pkt
    }

    /// True if the last enqueue or dequeue dropped or marked a packet ([`Queue::outcome`] lists them).
    #[inline]
    #[must_use]
    pub fn has_outcome(&self) -> bool {
        self.has_outcome
    }

    /// What the last enqueue or dequeue dropped or marked.
    #[must_use]
    pub fn outcome(&self) -> &Outcome {
        static NOTHING: Outcome =
            Outcome { drops: Vec::new(), marks: Vec::new(), marks_of: [0; MarkedCodepoint::COUNT] };
        self.outcome.as_deref().unwrap_or(&NOTHING)
    }

    /// The discipline's internal estimates at `now` (see [`QueueDisc::aqm_state`]).
    pub fn aqm_state(&mut self, now: SimTime) -> AqmState {
        self.qdisc.aqm_state(now)
    }

    /// The wrapped discipline.
    #[must_use]
    pub fn qdisc(&self) -> &AnyQdisc {
        &self.qdisc
    }

    /// Count the last operation's drops and marks; `GREW`: it was an enqueue, which may
    /// have raised the occupancy above its maximum (a dequeue never does).
    #[inline]
    fn account<const GREW: bool>(&mut self) {
        if self.has_outcome {
            self.account_outcome();
        }
        debug_assert_eq!(
            (self.len_packets(), self.bytes),
            self.qdisc.occupancy(),
            "a discipline holds what arrived less what departed or was dropped"
        );
        if GREW {
            self.max_packets = self.max_packets.max(self.packets);
            self.max_bytes = self.max_bytes.max(self.bytes);
        } else {
            debug_assert!(self.packets <= self.max_packets && self.bytes <= self.max_bytes);
        }
    }

    /// Count the drops and marks of the last operation.
    fn account_outcome(&mut self) {
        let Some(outcome) = &mut self.outcome else { return };
        for (_, _, _, _, before) in &outcome.marks {
            outcome.marks_of[MarkedCodepoint::of(*before) as usize] += 1;
        }
        for (p, reason) in &outcome.drops {
            self.drops[*reason as usize] += 1;
            self.drop_bytes[*reason as usize] += u64::from(p.size);
            self.packets -= 1;
            self.bytes -= u64::from(p.size);
        }
        for (_, _, reason, _, _) in &outcome.marks {
            self.marks[*reason as usize] += 1;
        }
    }
}

// ---------------------------------------------------------------------------
// Building blocks shared by the disciplines
// ---------------------------------------------------------------------------

/// The unit of a queue limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// At most this many packets.
    Packets(u64),
    /// At most this many bytes (headers included).
    Bytes(u64),
}

/// How a queue limit is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitRule {
    /// The limit is the number of packets (or bytes) that may wait; the packet
    /// being serialised is not counted (ns-3 queues and queue discs, Linux
    /// qdiscs; ns-2's RED and PI in packets, which drop when the queue found
    /// is at the limit).
    Waiting,
    /// ns-2's `limit_` in DropTail and REM: the arrival joins the queue first
    /// and is dropped when the queue, with it, reaches the limit, so at most
    /// `limit - 1` packets wait while one is on the wire. A byte limit drops
    /// when the waiting bytes with the arrival would reach it.
    Ns2,
}

/// What an AQM measures the queue in (ns-2 `queue_in_bytes_`, ns-3 `MaxSize`
/// unit, Linux RED: bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// Queue length in packets; thresholds in packets.
    Packets,
    /// Queue length in bytes; thresholds given in packets are scaled by the
    /// mean packet size (ns-2 `qib_`: `th_min = thresh_ * mean_pktsize_`).
    Bytes,
}

/// What an ECN-enabled AQM does with a Not-ECT packet where it would mark an
/// ECT one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NonEct {
    /// Drop it (RFC 3168 §5: the router drops what it cannot mark; ns-2, ns-3, Linux default).
    Drop,
    /// Let it in unmarked (Linux RED's and CHOKe's `nodrop` flag); only the
    /// buffer limit drops Not-ECT packets.
    Pass,
}

/// A FIFO of packets with its byte count: the buffer every discipline here uses.
///
/// It starts empty and grows on demand (doubling, so a queue that has reached
/// its working size does not allocate again). Memory goes back only in
/// [`Fifo::give_back_memory`], which the simulation calls on every queue once
/// per [`crate::sim::GIVE_BACK_EVERY`] events: shrinking on the packet path
/// would make a queue that fills and drains every cycle reallocate every
/// cycle. The order of packets never depends on either.
#[derive(Debug)]
pub struct Fifo {
    packets: VecDeque<QueuedPacket>,
    bytes: u64,
}

impl Fifo {
    /// Slots a FIFO keeps when it is idle (an idle queue holds no more than this).
    pub const MIN_SLOTS: usize = 8;

    /// An empty FIFO. It allocates on its first packet; the discipline's
    /// `limit` bounds how far it grows.
    #[must_use]
    pub fn new(limit: Limit) -> Self {
        let _ = limit;
        Fifo { packets: VecDeque::new(), bytes: 0 }
    }
    /// Packet slots allocated now.
    #[must_use]
    pub fn slots(&self) -> usize {
        self.packets.capacity()
    }
    /// Give back the slots beyond twice the packets held now (at least
    /// [`Fifo::MIN_SLOTS`] stay), if that frees at least half of them.
    pub fn give_back_memory(&mut self) {
        give_back(&mut self.packets, Self::MIN_SLOTS);
    }
    /// Packets queued.
    #[must_use]
    pub fn len(&self) -> usize {
        self.packets.len()
    }
    /// True if nothing is queued.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }
    /// Bytes queued.
    #[must_use]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    /// The queue length in `measure`.
    #[must_use]
    #[allow(clippy::cast_precision_loss)]
    pub fn measured(&self, measure: Measure) -> f64 {
        match measure {
            Measure::Packets => self.packets.len() as f64,
            Measure::Bytes => self.bytes as f64,
        }
    }
    /// True if `pkt` can be added without exceeding `limit` (the DropTail rule:
    /// packets `< n` before the arrival; bytes `+ size <= b`).
    #[must_use]
    pub fn fits(&self, limit: Limit, pkt: &QueuedPacket) -> bool {
        match limit {
            Limit::Packets(n) => (self.packets.len() as u64) < n,
            Limit::Bytes(b) => self.bytes + u64::from(pkt.size) <= b,
        }
    }
    /// True if `pkt` may join the queue under `limit` read by `rule`.
    #[inline]
    #[must_use]
    pub fn admits(&self, limit: Limit, rule: LimitRule, pkt: &QueuedPacket) -> bool {
        match (rule, limit) {
            (LimitRule::Waiting, limit) => self.fits(limit, pkt),
            // ns-2 drop-tail.cc DropTail::enque, rem.cc REMQueue::enque: drop if the length with the arrival >= qlim_.
            (LimitRule::Ns2, Limit::Packets(n)) => (self.packets.len() as u64) + 1 < n,
            // ns-2 drop-tail.cc, rem.cc (qib_): drop if the waiting bytes with the arrival >= the byte limit.
            (LimitRule::Ns2, Limit::Bytes(b)) => self.bytes + u64::from(pkt.size) < b,
        }
    }
    /// True if the queue now holds more than `limit` allows.
    #[must_use]
    pub fn exceeds(&self, limit: Limit) -> bool {
        match limit {
            Limit::Packets(n) => self.packets.len() as u64 > n,
            Limit::Bytes(b) => self.bytes > b,
        }
    }
    /// Append `pkt`.
    #[inline]
    pub fn push_back(&mut self, pkt: QueuedPacket) {
        self.bytes += u64::from(pkt.size);
        self.packets.push_back(pkt);
    }
    /// Remove the head.
    #[inline]
    pub fn pop_front(&mut self) -> Option<QueuedPacket> {
        let pkt = self.packets.pop_front()?;
        self.bytes -= u64::from(pkt.size);
        Some(pkt)
    }
    /// Remove the tail.
    pub fn pop_back(&mut self) -> Option<QueuedPacket> {
        let pkt = self.packets.pop_back()?;
        self.bytes -= u64::from(pkt.size);
        Some(pkt)
    }
    /// Remove the packet at `index` (0 = head).
    pub fn remove(&mut self, index: usize) -> Option<QueuedPacket> {
        let pkt = self.packets.remove(index)?;
        self.bytes -= u64::from(pkt.size);
        Some(pkt)
    }
    /// Whether a queued packet satisfies `f`.
    pub fn any(&self, f: &mut dyn FnMut(&QueuedPacket) -> bool) -> bool {
        self.packets.iter().any(f)
    }
    /// The head.
    #[must_use]
    pub fn front(&self) -> Option<&QueuedPacket> {
        self.packets.front()
    }
    /// The packet at `index` (0 = head).
    #[must_use]
    pub fn get(&self, index: usize) -> Option<&QueuedPacket> {
        self.packets.get(index)
    }
    /// The packet at `index` (0 = head), mutably (to mark it).
    pub fn get_mut(&mut self, index: usize) -> Option<&mut QueuedPacket> {
        self.packets.get_mut(index)
    }
    /// Mark-front (Liu & Jain 1998; Zheng's thesis ch. 5): CE-mark the first
    /// ECT packet not yet marked, scanning from the head. Returns false if
    /// there is none.
    pub fn mark_first_unmarked(&mut self, cx: &mut QdiscCx<'_>, reason: MarkReason) -> bool {
        match self.packets.iter_mut().find(|p| is_unmarked_ect(p.ecn)) {
            Some(p) => cx.mark(p, reason),
            None => false,
        }
    }
}

/// Which packet a forced drop removes (ns-2 RED `drop_tail_` / `drop_front_` / `drop_rand_`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Victim {
    /// The arriving packet (ns-2 `drop_tail_`, the default; ns-3; Linux).
    Tail,
    /// The packet at the head of the queue (drop-front, Lakshman, Neidhardt & Ott 1996).
    Front,
    /// A packet chosen uniformly among the queued ones and the arrival (ns-2 `drop_rand_`).
    Random,
}

/// Drop for `reason` until the queue fits `limit` again, after `pkt` was
/// offered: the arrival itself for [`Victim::Tail`], otherwise the arrival is
/// queued and queued packets are dropped (head first, or chosen at random)
/// until the limit holds.
pub fn drop_victims(
    fifo: &mut Fifo,
    limit: Limit,
    pkt: QueuedPacket,
    victim: Victim,
    reason: DropReason,
    cx: &mut QdiscCx<'_>,
) {
    if victim == Victim::Tail {
        cx.drop_packet(pkt, reason);
        return;
    }
    fifo.push_back(pkt);
    // ns-2 red.cc pickPacketToDrop: one victim after enqueueing the arrival; with a byte limit
    // one victim may not make room, so drop until the limit holds.
    loop {
        let index = match victim {
            // DEVIATION(ns-2): ns-2's drop_front_ removes index min(1, len - 1), the second
            // packet; drop-front as published (and as named) removes the head.
            Victim::Front => 0,
            Victim::Random => usize::try_from(cx.rng.below(fifo.len() as u64)).expect("index fits usize"),
            Victim::Tail => fifo.len() - 1,
        };
        let dropped = fifo.remove(index).expect("victim index is in range");
        cx.drop_packet(dropped, reason);
        if !fifo.exceeds(limit) {
            break;
        }
    }
}

/// A periodic update clock, applied lazily: the updates due at `period`,
/// `2 * period`, ... are run when the discipline next sees a packet event (or
/// is sampled), in order, before that event. Between events the inputs of an
/// update (queue length, sojourn of the last departure, arrival counts) are
/// constant, so this is exactly a timer firing at each multiple of `period`;
/// an update due at the same nanosecond as a packet event runs first.
/// No event is scheduled, so an idle queue costs nothing.
#[derive(Clone, Copy, Debug)]
pub struct Ticker {
    period: SimDuration,
    next: SimTime,
}

impl Ticker {
    /// Updates at `period`, `2 * period`, ...
    #[must_use]
    pub fn new(period: SimDuration) -> Self {
        Ticker { period, next: SimTime::ZERO + period }
    }
    /// The time of the next update.
    #[must_use]
    pub fn next(&self) -> SimTime {
        self.next
    }
    /// Run `update` for every tick at or before `now`. `update` returns false
    /// when it changed nothing; with constant inputs every later tick would
    /// change nothing either, so the remaining ticks up to `now` are skipped.
    pub fn run_until(&mut self, now: SimTime, mut update: impl FnMut() -> bool) {
        while self.next <= now {
            self.next += self.period;
            if !update() {
                let behind = now.saturating_since(self.next).as_nanos() / self.period.as_nanos().max(1);
                self.next += self.period.saturating_mul(behind);
                if self.next <= now {
                    self.next += self.period;
                }
                break;
            }
        }
    }
}

/// Shrink `deque` to twice its length (at least `min_slots`) if that frees
/// at least half of its slots (queues and link wires between packets).
pub(crate) fn give_back<T>(deque: &mut VecDeque<T>, min_slots: usize) {
    let want = (deque.len() * 2).max(min_slots);
    if deque.capacity() >= 2 * want {
        deque.shrink_to(want);
    }
}

/// A probability from the scenario as a value the algorithms can trust.
#[must_use]
pub(crate) fn clamp01(p: f64) -> f64 {
    p.clamp(0.0, 1.0)
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Helpers for the disciplines' unit tests: packets, a driver that holds a
    //! discipline with its RNG, and a scripted clock.

    use super::{AnyQdisc, AqmIdle, Outcome, QdiscCx, Queue, QueueDisc, QueuedPacket};
    use crate::ids::{FlowId, NodeId, PacketId};
    use crate::packet::{Ecn, Packet, TcpHeader};
    use crate::rng::SimRng;
    use crate::time::{BitRate, SimTime};

    /// A packet of `size` bytes of flow 0 with ECN field `ecn`.
    pub(crate) fn packet(uid: u64, size: u32, ecn: Ecn) -> Packet {
        Packet {
            uid,
            src: NodeId(0),
            dst: NodeId(1),
            flow: FlowId(0),
            proto: crate::packet::Transport::Tcp,
            from_initiator: true,
            size,
            ecn,
            tcp: TcpHeader::default(),
            sent_at: SimTime::ZERO,
            to_endpoint: 0,
        }
    }

    /// [`packet`] as a queue holds it, its pool slot numbered `uid`.
    pub(crate) fn pkt(uid: u64, size: u32, ecn: Ecn) -> QueuedPacket {
        queued(uid, &packet(uid, size, ecn))
    }

    /// `p` as a queue holds it, its pool slot numbered `slot`.
    pub(crate) fn queued(slot: u64, p: &Packet) -> QueuedPacket {
        QueuedPacket::new(PacketId(u32::try_from(slot).expect("test slots fit in u32")), p)
    }

    impl QueuedPacket {
        /// In these tests a packet's pool slot is its uid ([`pkt`]).
        pub(crate) fn uid(&self) -> u64 {
            u64::from(self.id.0)
        }
    }

    /// A packet carrying an RTT hint (for AECN).
    pub(crate) fn pkt_rtt(uid: u64, rtt_ms: u32, ecn: Ecn) -> QueuedPacket {
        let mut p = pkt(uid, 1000, ecn);
        p.rtt_hint_ms = rtt_ms;
        p
    }

    /// A discipline driven directly through the trait, with its own stream
    /// and outcome buffer (what `Queue` does, without the counters).
    pub(crate) struct Driver<Q> {
        pub(crate) q: Q,
        pub(crate) rng: SimRng,
        pub(crate) rate: BitRate,
        /// What the last call dropped or marked.
        pub(crate) out: Outcome,
        pub(crate) idle: AqmIdle,
    }

    impl<Q: QueueDisc> Driver<Q> {
        pub(crate) fn new(q: Q, rate_bps: u64, seed: u64) -> Self {
            Driver {
                q,
                rng: SimRng::for_component(seed, "test"),
                rate: BitRate::from_bps(rate_bps),
                out: Outcome::default(),
                idle: AqmIdle::default(),
            }
        }
        /// Run `call` with a context at `now`, and keep what it dropped or marked in `out`.
        fn with_cx<R>(&mut self, now: SimTime, call: impl FnOnce(&mut Q, &mut QdiscCx<'_>) -> R) -> R {
            let (mut outcome, mut noted) = (None, false);
            let mut cx = QdiscCx {
                now,
                link_rate: self.rate,
                rng: &mut self.rng,
                outcome: &mut outcome,
                noted: &mut noted,
                idle: &mut self.idle,
            };
            let r = call(&mut self.q, &mut cx);
            assert_eq!(noted, outcome.is_some(), "the context notes every drop and mark");
            self.out = outcome.map(|o| *o).unwrap_or_default();
            r
        }
        /// Offer `p` at `now`; returns the outcome of this call.
        pub(crate) fn enqueue(&mut self, p: QueuedPacket, now: SimTime) -> &Outcome {
            let mut p = p;
            p.enqueued_at = now;
            self.with_cx(now, |q, cx| q.enqueue(p, cx));
            &self.out
        }
        /// Dequeue at `now`.
        pub(crate) fn dequeue(&mut self, now: SimTime) -> Option<QueuedPacket> {
            self.with_cx(now, |q, cx| q.dequeue(cx))
        }
    }

    /// A `Queue` (with counters) around `q`.
    pub(crate) fn queue(q: AnyQdisc, rate_bps: u64, seed: u64) -> Queue {
        Queue::new(q, BitRate::from_bps(rate_bps), SimRng::for_component(seed, "q"))
    }

    /// Drive `q` with a random arrival/departure sequence from `seed`
    /// (`n` events, a mix of ECT and Not-ECT packets of varied sizes),
    /// checking the invariants every discipline must keep:
    /// marks only on ECT packets, `drops + marks <= arrivals` (each packet
    /// is marked or dropped at most once), and conservation of packets.
    pub(crate) fn random_workout(q: AnyQdisc, seed: u64, n: usize, rate_bps: u64) {
        random_workout_flows(q, seed, n, rate_bps, 1);
    }

    /// [`random_workout`] with packets of `flows` flows (TCP and UDP alike), for disciplines that sort by flow.
    pub(crate) fn random_workout_flows(q: AnyQdisc, seed: u64, n: usize, rate_bps: u64, flows: u32) {
        use crate::packet::Ecn;
        let mut queue = queue(q, rate_bps, seed);
        let mut rng = SimRng::for_component(seed, "workout");
        let mut now = SimTime::ZERO;
        let (mut offered, mut departed, mut dropped, mut marked) = (0u64, 0u64, 0u64, 0u64);
        let mut ect_offered = 0u64;
        let mut original = Vec::with_capacity(n);
        // Bursts of arrivals against steadier departures drive any AQM through all its regions.
        let arrival_bias = 0.5 + 0.3 * rng.uniform();
        for i in 0..n {
            now += crate::time::SimDuration::from_micros(rng.below(3000));
            if rng.uniform() < arrival_bias {
                let ecn = match rng.below(4) {
                    0 => Ecn::NotEct,
                    1 => Ecn::Ect1,
                    _ => Ecn::Ect0,
                };
                let size = [40, 576, 1000, 1500][usize::try_from(rng.below(4)).unwrap()];
                let mut p = pkt(original.len() as u64, size, ecn);
                if flows > 1 {
                    p.flow = FlowId(u32::try_from(rng.below(u64::from(flows))).unwrap());
                    if rng.below(2) == 1 {
                        p.proto = crate::packet::Transport::Udp;
                    }
                }
                original.push(ecn);
                p.rtt_hint_ms = u32::try_from(rng.below(300)).unwrap();
                if ecn.is_ect() {
                    ect_offered += 1;
                }
                offered += 1;
                let out = queue.enqueue(p, now);
                dropped += out.drops.len() as u64;
                marked += out.marks.len() as u64;
            } else {
                let got = queue.dequeue(now);
                let out = queue.outcome();
                dropped += out.drops.len() as u64;
                marked += out.marks.len() as u64;
                if let Some(p) = got {
                    departed += 1;
                    let before = original[usize::try_from(p.uid()).unwrap()];
                    if p.ecn == Ecn::Ce {
                        assert!(before.is_ect(), "packet {} was {before:?} and left marked", p.uid());
                    } else {
                        assert_eq!(p.ecn, before, "packet {} changed its ECN field", p.uid());
                    }
                }
            }
            assert_eq!(offered, departed + dropped + queue.len_packets(), "conservation at event {i}");
        }
        assert!(dropped + marked <= offered, "drops {dropped} + marks {marked} > arrivals {offered}");
        assert!(marked <= ect_offered, "marks {marked} > ECT arrivals {ect_offered}");
        assert_eq!(queue.counters().total_drops(), dropped);
        assert_eq!(queue.counters().total_marks(), marked);
        assert_eq!(queue.counters().departures, departed, "departures are arrivals less drops less the queued");
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::pkt;
    use super::{Fifo, Limit, Queue};
    use crate::packet::Ecn;

    // ---- Queue: layout ---------------------------------------------------------------

    /// What every packet's arrival and departure touches fills the queue's first 64 bytes;
    /// the integrals that queueing updates, and the discipline's context, the next 64.
    #[test]
    fn a_queues_per_packet_fields_fill_its_first_line_and_the_integrals_the_second() {
        use crate::memory::field;
        let line_0 = [
            field!(Queue, last_change),
            field!(Queue, arrivals),
            field!(Queue, arrival_bytes),
            field!(Queue, bytes),
            field!(Queue, max_bytes),
            field!(Queue, packets),
            field!(Queue, max_packets),
            field!(Queue, has_outcome),
        ];
        crate::memory::assert_in_line(&line_0, 0);
        let line_1 = [field!(Queue, area_packets), field!(Queue, area_bytes), field!(Queue, link_rate)];
        crate::memory::assert_in_line(&line_1, 1);
    }

    // ---- Queue: marks by codepoint ---------------------------------------------------

    /// RFC 3168 §5: ECT(0) and ECT(1) are both ECN-capable, and a CE packet stays CE; the
    /// queue counts each mark by the codepoint it replaced (RFC 9331 §4.1: ECT(1) is L4S).
    #[test]
    fn marks_are_counted_by_the_codepoint_they_replaced() {
        use super::script::{Action, Match, Rule, Script};
        use super::{AnyQdisc, MarkedCodepoint};
        let rules = vec![Rule::new(Action::Mark, Match::Any, None, (1..=8).collect())];
        let mut q = super::test_support::queue(AnyQdisc::Script(Script::new(rules, 100)), 10_000_000, 1);
        let codepoints = [Ecn::Ect0, Ecn::Ect1, Ecn::Ect1, Ecn::Ce, Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ect1];
        for (i, ecn) in codepoints.into_iter().enumerate() {
            q.enqueue(pkt(i as u64, 1000, ecn), crate::time::SimTime::ZERO);
        }
        let c = q.counters();
        assert_eq!(c.total_marks(), 7, "the Not-ECT packet is not marked");
        assert_eq!(c.marks_of, [2, 4, 1]);
        assert_eq!(MarkedCodepoint::ALL.map(MarkedCodepoint::name), ["ect0", "ect1", "ce"]);
        let departed: Vec<Ecn> = std::iter::from_fn(|| q.dequeue(crate::time::SimTime::ZERO)).map(|p| p.ecn).collect();
        assert_eq!(departed.iter().filter(|&&e| e == Ecn::Ce).count(), 7);
        assert_eq!(departed[4], Ecn::NotEct);
    }

    // ---- Fifo: memory on demand ---------------------------------------------------

    #[test]
    fn fifo_new_allocates_nothing_whatever_the_limit() {
        assert_eq!(Fifo::new(Limit::Packets(100_000)).slots(), 0);
        assert_eq!(Fifo::new(Limit::Bytes(1 << 30)).slots(), 0);
    }

    #[test]
    fn fifo_burst_grows_then_gives_back_what_it_no_longer_holds() {
        let mut q = Fifo::new(Limit::Packets(10_000));
        for uid in 0..5000 {
            q.push_back(pkt(uid, 100, Ecn::NotEct));
        }
        let grown = q.slots();
        assert!((5000..2 * 5000).contains(&grown), "slots {grown}");
        assert_eq!(q.bytes(), 500_000);
        q.give_back_memory(); // full: nothing to give back
        assert_eq!(q.slots(), grown);
        for uid in 0..4990 {
            assert_eq!(q.pop_front().map(|p| p.uid()), Some(uid));
        }
        // Draining does not reallocate (a queue that fills every cycle keeps its slots) ...
        assert_eq!(q.slots(), grown);
        // ... the periodic pass gives them back, keeping twice what is held.
        q.give_back_memory();
        assert_eq!(q.slots(), 20);
        assert_eq!((0..10).map(|_| q.pop_front().unwrap().uid()).collect::<Vec<_>>(), (4990..5000).collect::<Vec<_>>());
        q.give_back_memory();
        assert_eq!(q.slots(), Fifo::MIN_SLOTS);
        assert_eq!(q.bytes(), 0);
    }

    #[test]
    fn fifo_give_back_keeps_order_after_pop_back_and_remove() {
        let mut q = Fifo::new(Limit::Packets(1000));
        for uid in 0..512 {
            q.push_back(pkt(uid, 10, Ecn::NotEct));
        }
        while q.len() > 3 {
            let _ = if q.len() % 2 == 0 { q.pop_back() } else { q.remove(q.len() / 2) };
        }
        let before: Vec<u64> = (0..3).map(|i| q.get(i).unwrap().uid()).collect();
        q.give_back_memory();
        assert_eq!(q.slots(), Fifo::MIN_SLOTS);
        let after: Vec<u64> = (0..3).map(|i| q.get(i).unwrap().uid()).collect();
        assert_eq!(before, after);
        assert_eq!(q.bytes(), 30);
    }

    #[test]
    fn give_back_only_when_it_frees_half() {
        let mut d: std::collections::VecDeque<u8> = std::collections::VecDeque::with_capacity(64);
        d.extend(0..20);
        super::give_back(&mut d, 8); // wants 40 of 64: not worth a reallocation
        assert!(d.capacity() >= 64);
        d.truncate(10);
        super::give_back(&mut d, 8);
        assert!(d.capacity() >= 20 && d.capacity() < 64, "capacity {}", d.capacity());
    }
}
