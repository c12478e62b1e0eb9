//! Connections and their endpoints: the per-flow state the simulation keeps,
//! below the applications (which see it through [`crate::app::ConnView`])
//! and the statistics.

use crate::ids::{AppId, FlowId, NodeId, PortId};
use crate::spec::CcKind;
use crate::stats::{ConnTotals, FlowExtra, WarmBase};
use crate::tcp::{Opt, TcpCounters, TcpSocket, TcpState};
use crate::time::{SimDuration, SimTime};

/// Sentinel in [`Flow::slot`]: the connection has no endpoints (released, or a free row).
pub(crate) const NO_SLOT: u32 = u32::MAX;

/// A TCP connection: who opened it, for which app, and its counters once
/// its endpoints are released.
///
/// A `[[flows]]` connection keeps its slot (its `FlowId`) for the whole run.
/// A workload connection's slot is freed once its endpoints are released and
/// none of its packets is left in the network (so no packet can reach a slot
/// reused by a newer connection): its counters are added to its app's totals
/// (the `apps` table), and with `simulation.connection_rows` its row is kept.
///
/// In declaration order (`repr(C)`): what a packet of the connection touches
/// (`in_flight`, its endpoint pair `slot`, and the drop, mark and delay counters
/// that open `extra`) comes first, in one cache line, so that with thousands of
/// connections a packet costs one miss here rather than two or three.
#[derive(Debug)]
#[repr(C)]
pub(crate) struct Flow {
    /// Packets of this connection in the network (queued, being sent or propagating), once
    /// its endpoints are released. While they are live, its endpoints count what they sent
    /// less what was delivered to them or dropped ([`Endpoint::in_network`], on the line a
    /// segment touches anyway) and this stays 0, so that neither sending, delivering nor
    /// dropping reads the row; [`Flow::fold_endpoints`] adds the endpoints' counts at the
    /// release.
    pub(crate) in_flight: u32,
    /// The app that drives both ends.
    pub(crate) app: AppId,
    /// The app's token for this connection.
    pub(crate) tag: u32,
    /// The endpoint pair of the live connection (`endpoints[2 * slot]` is the initiator,
    /// `2 * slot + 1` the responder), or [`NO_SLOT`] once its endpoints are released.
    pub(crate) slot: u32,
    /// The slot holds no connection (freed, waiting for reuse).
    pub(crate) free: bool,
    pub(crate) cc: CcKind,
    /// Drops, marks, completion of this flow.
    pub(crate) extra: FlowExtra,
    /// The connection's number, in order of opening and never reused: its
    /// `flow_id` in the results and the name of its random streams.
    pub(crate) serial: u64,
    /// The initiator's host.
    pub(crate) src: NodeId,
    /// The responder's host.
    pub(crate) dst: NodeId,
    /// When the app opens (or opened) the connection.
    pub(crate) start: SimTime,
    /// The endpoints' final state, once they are released.
    pub(crate) last: Option<Box<FlowFinal>>,
}

impl Flow {
    /// A free slot.
    pub(crate) fn vacant() -> Self {
        Flow {
            serial: u64::MAX,
            in_flight: 0,
            slot: NO_SLOT,
            free: true,
            app: AppId(0),
            tag: 0,
            src: NodeId(0),
            dst: NodeId(0),
            start: SimTime::ZERO,
            cc: CcKind::Reno,
            extra: FlowExtra::default(),
            last: None,
        }
    }
}

/// What the `flows` table needs of a connection whose endpoints were released.
#[derive(Clone, Debug)]
pub(crate) struct FlowFinal {
    /// Initiator's and responder's counters.
    pub(crate) counters: [TcpCounters; 2],
    pub(crate) cwnd: u64,
    pub(crate) srtt: Option<SimDuration>,
    pub(crate) state: TcpState,
    pub(crate) ecn: bool,
    pub(crate) sack: bool,
    /// The initiator's AccECN feedback (RFC 9768), if negotiated.
    pub(crate) accecn: Option<crate::tcp::AccEcnCounts>,
    /// The initiator's Prague Classic-ECN-bottleneck score (2^-20), if it ran Prague.
    pub(crate) classic_ecn: Option<u64>,
}

/// A UDP flow: a source app's datagrams to one sink.
#[derive(Debug)]
pub(crate) struct UdpFlow {
    pub(crate) app: AppId,
    pub(crate) src: NodeId,
    pub(crate) dst: NodeId,
    pub(crate) egress: PortId,
    pub(crate) start: SimTime,
    pub(crate) sent_packets: u64,
    pub(crate) sent_bytes: u64,
    pub(crate) received_packets: u64,
    pub(crate) received_bytes: u64,
    /// Sum of one-way delays of received datagrams, ns.
    pub(crate) delay_sum_ns: u64,
    pub(crate) drops: u64,
    pub(crate) marks: u64,
}

/// One end of a live connection, with its place in the network and its timer.
///
/// In declaration order (`repr(C)`, 64-byte aligned): these fields, read for every
/// segment and every timer event, fill the first cache line, and the socket's own
/// lines follow (see [`TcpSocket`]). A timer event that fires early (the socket's
/// deadline moved later since it was scheduled) reads only this line. What a segment
/// adds to its connection's row is counted here while the connection is live (the
/// packets in the network, the one-way delay of data segments), so that sending and
/// delivering a segment never touch the row; [`Flow::fold_endpoints`] moves it there
/// at the release, and [`crate::Simulation`] adds it to the row's when it reports a live
/// connection.
#[derive(Debug)]
#[repr(C, align(64))]
pub(crate) struct Endpoint {
    /// When the current-generation timer event fires, if one is pending.
    pub(crate) timer_at: Opt<SimTime>,
    /// The socket's [`TcpSocket::next_deadline`] as of the last time it was served: the
    /// socket changes only when it is served, so a timer event before it has nothing to do.
    pub(crate) deadline: Opt<SimTime>,
    /// In-order bytes this end must have received before a delivery alone calls the
    /// app (see [`crate::app::Command::NotifyDelivered`]; 0: every delivery does).
    pub(crate) notify_from: u64,
    /// Sum of the one-way delays of the data segments delivered to this end while live, ns
    /// (its share of [`crate::stats::FlowExtra::owd_sum_ns`]).
    pub(crate) owd_sum_ns: u64,
    /// The connection this slot serves (meaningful while `live`).
    pub(crate) flow: FlowId,
    pub(crate) node: NodeId,
    pub(crate) peer: NodeId,
    /// The port this host sends the connection's packets on (precomputed route).
    pub(crate) egress: PortId,
    /// Generation of the current timer event; older ones are stale.
    pub(crate) timer_gen: u32,
    /// Packets this end sent less those delivered to it and those of its own a queue dropped
    /// (wrapping): the two ends' sum is the connection's packets in the network (see
    /// [`Flow::in_flight`]).
    pub(crate) in_network: u32,
    /// Data segments counted in `owd_sum_ns` (moved to the row before it would overflow).
    pub(crate) owd_count: u32,
    /// Packets this end sent that a queue dropped while the connection was live, not yet
    /// moved to the row (its share of [`crate::stats::FlowExtra::drops`]; moved there when
    /// full, and at the release). A drop at the sender's own access queue happens while the
    /// sender is sending, with this line in cache: counting it here, not in the row, saves
    /// the row's cold line (or two) per drop.
    pub(crate) drops: u8,
    /// IP + TCP header bytes of every segment (`tcp.header_bytes`, validated to at most 120).
    pub(crate) header_bytes: u8,
    /// Header bytes on a segment that carries data (0 with ns-2's `useHeaders_ false`).
    pub(crate) data_header_bytes: u8,
    pub(crate) live: bool,
    pub(crate) sock: TcpSocket,
}

/// The row of a workload connection whose slot was freed (kept with `simulation.connection_rows`).
#[derive(Debug)]
pub(crate) struct EndedFlow {
    pub(crate) flow: Flow,
    pub(crate) warm: WarmBase,
}

impl Flow {
    /// At the release of this connection's endpoints `a` and `b`: add what they counted
    /// for the row. [`Flow::in_flight`] then counts every packet of the connection left in
    /// the network, and `extra` every one-way delay.
    pub(crate) fn fold_endpoints(&mut self, a: &Endpoint, b: &Endpoint) {
        self.in_flight = self.in_flight.wrapping_add(a.in_network).wrapping_add(b.in_network);
        debug_assert!(self.in_flight < 1 << 31, "a connection's packets in flight fold to {}", self.in_flight as i32);
        for ep in [a, b] {
            self.extra.owd_sum_ns += ep.owd_sum_ns;
            self.extra.owd_count += u64::from(ep.owd_count);
            self.extra.drops += u64::from(ep.drops);
        }
    }

    /// Add this connection, whose endpoints were released, to `totals`.
    ///
    /// # Panics
    /// If its endpoints are not released (no final state).
    pub(crate) fn add_to(&self, totals: &mut ConnTotals, warmup: SimTime) {
        let fin = self.last.as_ref().expect("a released connection has its final state");
        totals.add(fin.counters, &self.extra, fin.ecn, self.start >= warmup);
    }
}

/// UDP (RFC 768) and IPv4 (RFC 791) header bytes of a datagram.
pub(crate) const UDP_HEADER_BYTES: u32 = 28;

#[cfg(test)]
mod tests {
    use std::mem::offset_of;

    use crate::memory::field;

    use super::*;

    /// The fields a packet of a connection touches fit one cache line (they start the row).
    #[test]
    fn a_connections_per_packet_fields_span_at_most_64_bytes() {
        let extra = offset_of!(Flow, extra);
        let end = extra + offset_of!(FlowExtra, owd_count) + 8;
        assert_eq!(offset_of!(Flow, in_flight), 0);
        assert!(offset_of!(Flow, slot) + 4 <= 64);
        assert!(end <= 64, "per-packet fields end at byte {end}");
    }

    /// An endpoint's own fields fill its first cache line and its socket starts the next:
    /// an early timer event reads that line alone.
    #[test]
    fn an_endpoints_fields_fill_its_first_line_and_the_socket_follows() {
        assert_eq!(std::mem::align_of::<Endpoint>(), 64);
        assert_eq!(offset_of!(Endpoint, sock), 64);
        assert!(offset_of!(Endpoint, live) < 64 && offset_of!(Endpoint, notify_from) + 8 <= 64);
        let line_0 = [
            field!(Endpoint, timer_at),
            field!(Endpoint, deadline),
            field!(Endpoint, notify_from),
            field!(Endpoint, owd_sum_ns),
            field!(Endpoint, flow),
            field!(Endpoint, node),
            field!(Endpoint, peer),
            field!(Endpoint, egress),
            field!(Endpoint, timer_gen),
            field!(Endpoint, in_network),
            field!(Endpoint, owd_count),
            field!(Endpoint, drops),
            field!(Endpoint, header_bytes),
            field!(Endpoint, data_header_bytes),
            field!(Endpoint, live),
        ];
        crate::memory::assert_in_line(&line_0, 0);
    }

    /// What an idle connection holds in the core (issue 16 goal 4): its row (no name nor
    /// application bytes, which its app has) and two endpoints of nine cache lines each.
    #[test]
    fn an_idle_connection_is_a_112_byte_row_and_two_576_byte_endpoints() {
        use std::mem::size_of;
        assert_eq!(size_of::<FlowExtra>(), 56);
        assert_eq!(size_of::<Flow>(), 112);
        assert_eq!(size_of::<Endpoint>(), 9 * 64);
    }

    /// The counters every segment updates fit one cache line (they start the counters).
    #[test]
    fn the_per_segment_counters_span_at_most_64_bytes() {
        let end = [
            offset_of!(TcpCounters, segments_sent),
            offset_of!(TcpCounters, data_packets_sent),
            offset_of!(TcpCounters, data_bytes_sent),
            offset_of!(TcpCounters, acks_sent),
            offset_of!(TcpCounters, bytes_received),
            offset_of!(TcpCounters, bytes_delivered),
            offset_of!(TcpCounters, ce_received),
        ]
        .into_iter()
        .max()
        .unwrap()
            + 8;
        assert!(end <= 64, "per-segment counters end at byte {end}");
    }
}
