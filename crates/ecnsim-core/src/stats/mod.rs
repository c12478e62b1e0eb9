//! Statistics kept while a simulation runs: per-flow facts, the warm-up
//! snapshot, per-app totals and the sampled time series (data only; the
//! simulation fills them, [`crate::collect`] turns them into tables).
//!
//! Counters always count from the start of the run; at the end of warm-up a
//! [`Snapshot`] is taken and every reported counter is `now - snapshot`.

use crate::qdisc::QueueCounters;
use crate::tcp::Opt;
use crate::tcp::TcpCounters;
use crate::time::SimTime;

/// Per-flow facts kept by the simulation (the sockets keep the rest).
///
/// In declaration order (`repr(C)`): the four counters a packet may touch come
/// first, next to [`crate::flow::Flow`]'s `in_flight`, in one cache line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct FlowExtra {
    /// Packets of this flow (either direction) dropped by any queue.
    pub drops: u64,
    /// Packets of this flow CE-marked by any queue.
    pub marks: u64,
    /// Sum of the one-way delays of delivered data segments (both directions), ns.
    pub owd_sum_ns: u64,
    /// Delivered data segments counted in `owd_sum_ns`.
    pub owd_count: u64,
    /// When the handshake completed at the initiator (one word: `Opt`, not `Option`).
    pub(crate) connected_at: Opt<SimTime>,
    /// When the receiver had every byte of a finite transfer, in order.
    pub(crate) completed_at: Opt<SimTime>,
    /// The connection was abandoned (SYN retries exhausted).
    pub failed: bool,
}

/// A connection's counters at the end of warm-up.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WarmFlow {
    /// The connection (slots are reused: the serial tells whose counters these are).
    pub(crate) serial: u64,
    /// Initiator's and responder's counters.
    pub(crate) counters: [TcpCounters; 2],
    pub(crate) extra: FlowExtra,
}

/// What a workload connection's `flows` row counts from.
#[derive(Clone, Debug)]
pub(crate) enum WarmBase {
    /// It started after the warm-up (or there is none): from zero.
    Zero,
    /// It was alive at the end of warm-up: from its counters then.
    At(Box<WarmFlow>),
    /// Its slot was freed before the end of warm-up: nothing of it counts once warm-up is over.
    EndedBefore,
}

/// Counters summed over connections (an app's, in the `apps` table).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ConnTotals {
    /// Connections opened at or after the end of warm-up.
    pub(crate) connections: u64,
    /// Of these, abandoned (SYN retries exhausted).
    pub(crate) failed: u64,
    /// Of these, with ECN negotiated.
    pub(crate) ecn: u64,
    /// Initiators' and responders' counters, summed.
    pub(crate) counters: [TcpCounters; 2],
    pub(crate) drops: u64,
    pub(crate) marks: u64,
    pub(crate) owd_sum_ns: u64,
    pub(crate) owd_count: u64,
}

/// `a += b` (`sign` 1) or `a -= b` (`sign` -1, saturating), field by field.
fn merge(a: &mut TcpCounters, b: &TcpCounters, add: bool) {
    let f = |x: &mut u64, y: u64| *x = if add { *x + y } else { x.saturating_sub(y) };
    // Every field named: a counter added to `TcpCounters` does not compile until it is summed here.
    let TcpCounters {
        segments_sent,
        data_packets_sent,
        data_bytes_sent,
        retransmitted_packets,
        retransmitted_bytes,
        bytes_delivered,
        bytes_received,
        rto_count,
        rto_after_ecn,
        fast_retransmits,
        syn_retransmits,
        acks_sent,
        ce_received,
        ecn_reductions,
        cwr_sent,
    } = *b;
    f(&mut a.segments_sent, segments_sent);
    f(&mut a.data_packets_sent, data_packets_sent);
    f(&mut a.data_bytes_sent, data_bytes_sent);
    f(&mut a.retransmitted_packets, retransmitted_packets);
    f(&mut a.retransmitted_bytes, retransmitted_bytes);
    f(&mut a.bytes_delivered, bytes_delivered);
    f(&mut a.bytes_received, bytes_received);
    f(&mut a.rto_count, rto_count);
    f(&mut a.rto_after_ecn, rto_after_ecn);
    f(&mut a.fast_retransmits, fast_retransmits);
    f(&mut a.syn_retransmits, syn_retransmits);
    f(&mut a.acks_sent, acks_sent);
    f(&mut a.ce_received, ce_received);
    f(&mut a.ecn_reductions, ecn_reductions);
    f(&mut a.cwr_sent, cwr_sent);
}

impl ConnTotals {
    /// Add one connection's counters; `opened_after_warmup` counts it among the connections.
    pub(crate) fn add(&mut self, counters: [TcpCounters; 2], extra: &FlowExtra, ecn: bool, opened_after_warmup: bool) {
        if opened_after_warmup {
            self.connections += 1;
            self.failed += u64::from(extra.failed);
            self.ecn += u64::from(ecn);
        }
        merge(&mut self.counters[0], &counters[0], true);
        merge(&mut self.counters[1], &counters[1], true);
        self.drops += extra.drops;
        self.marks += extra.marks;
        self.owd_sum_ns += extra.owd_sum_ns;
        self.owd_count += extra.owd_count;
    }

    /// `self - earlier`: the counters added since `earlier` (both cumulative); the
    /// connection counts are already those opened after the warm-up.
    pub(crate) fn since(&self, earlier: &ConnTotals) -> ConnTotals {
        let mut out = *self;
        merge(&mut out.counters[0], &earlier.counters[0], false);
        merge(&mut out.counters[1], &earlier.counters[1], false);
        out.drops = self.drops.saturating_sub(earlier.drops);
        out.marks = self.marks.saturating_sub(earlier.marks);
        out.owd_sum_ns = self.owd_sum_ns.saturating_sub(earlier.owd_sum_ns);
        out.owd_count = self.owd_count.saturating_sub(earlier.owd_count);
        out
    }
}

/// Counters at the end of warm-up.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub(crate) time: SimTime,
    /// Per connection slot: the connection in it then, if any.
    pub(crate) flows: Vec<Option<WarmFlow>>,
    /// Per app: its totals then.
    pub(crate) apps: Vec<ConnTotals>,
    pub(crate) queues: Vec<QueueCounters>,
    /// Transmitter busy time of each port up to the snapshot, ns.
    pub(crate) busy: Vec<u64>,
    /// Packets queued at each port at the snapshot.
    pub(crate) backlog: Vec<u64>,
}

impl Snapshot {
    /// The warm-up counters of connection `serial` in slot `slot`, if it was alive then.
    pub(crate) fn flow(&self, slot: usize, serial: u64) -> Option<WarmBase> {
        match self.flows.get(slot) {
            Some(Some(w)) if w.serial == serial => Some(WarmBase::At(Box::new(*w))),
            _ => None,
        }
    }
}

mod series;
pub(crate) use series::FlowSample;
pub use series::{Rows, Series, SeriesTable, SeriesValues};
