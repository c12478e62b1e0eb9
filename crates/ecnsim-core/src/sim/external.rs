//! Real hosts outside the simulation: the sans-IO hook an emulation driver
//! (`ecnsim-emu`) uses to put real packets through the simulated links and
//! queues.
//!
//! A driver reads a packet from a real host, stores its bytes in a buffer it
//! owns and calls [`Simulation::inject`] with the packet's size, ECN field and
//! an opaque `handle` for the bytes. The packet then crosses the scenario's
//! links and queues like any other (serialisation, propagation, queueing,
//! drops and CE marks), carrying only its handle. When it reaches its
//! destination host it is handed back as a [`Departure`] (with the ECN field
//! the queues left it with); when a queue marks it, its handle is reported as
//! marked at that instant (as the simulator charges marks to flows); when a
//! queue drops it, its handle is reported as dropped so the driver can reuse
//! the buffer. [`Simulation::drain_external`] hands these over; its buffers
//! are reused, so a warm run does not allocate.
//!
//! The core still reads no clock: the driver decides what `now` is by calling
//! [`Simulation::run_until`] before it injects, and asks
//! [`Simulation::next_event_time`] when to come back.

use super::Simulation;
use crate::error::SimError;
use crate::ids::{FlowId, NodeId};
use crate::packet::{Ecn, Packet, TcpHeader, Transport};
use crate::time::SimTime;

/// A real host's packet that reached its destination host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Departure {
    /// When it arrived at the destination host (the end of the last link's propagation).
    pub time: SimTime,
    /// The handle it was injected with.
    pub handle: u32,
    /// The destination host.
    pub host: NodeId,
    /// Its ECN field now (CE if a queue marked it).
    pub ecn: Ecn,
}

/// What became of injected packets, as [`Simulation::drain_external`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExternalEvent {
    /// The packet reached its destination host.
    Departed(Departure),
    /// A queue CE-marked the packet with this handle (reported when the queue
    /// decides, as the simulator charges marks to flows; the packet itself
    /// departs later with [`Ecn::Ce`]).
    Marked(u32),
    /// A queue dropped the packet with this handle.
    Dropped(u32),
}

/// The outboxes of injected packets, drained by the driver.
#[derive(Debug, Default)]
pub(crate) struct External {
    marked: Vec<u32>,
    departures: Vec<Departure>,
    dropped: Vec<u32>,
}

impl External {
    /// Packet `pkt` reached its destination host at `now`.
    pub(crate) fn depart(&mut self, now: SimTime, pkt: &Packet) {
        self.departures.push(Departure { time: now, handle: pkt.flow.0, host: pkt.dst, ecn: pkt.ecn });
    }

    /// A queue dropped the packet whose handle is `handle`.
    pub(crate) fn dropped(&mut self, handle: FlowId) {
        self.dropped.push(handle.0);
    }

    /// A queue CE-marked the packet whose handle is `handle`.
    pub(crate) fn marked(&mut self, handle: FlowId) {
        self.marked.push(handle.0);
    }
}

impl Simulation {
    /// The node named `name`, if the scenario has one.
    #[must_use]
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.nodes.iter().position(|n| n.name == name).map(NodeId::from_index)
    }

    /// The time of the earliest pending event, if any (it may be a cancelled
    /// timer, so waking then may find nothing to do).
    #[must_use]
    pub fn next_event_time(&self) -> Option<SimTime> {
        self.sched.next_time()
    }

    /// Check that hosts `src` and `dst` can exchange injected packets: both
    /// exist, are hosts, and have a route to each other.
    ///
    /// # Errors
    /// [`SimError::Topology`] saying which condition fails.
    pub fn check_external_pair(&self, src: NodeId, dst: NodeId) -> Result<(), SimError> {
        let n = self.nodes.len();
        for id in [src, dst] {
            let Some(node) = self.nodes.get(id.index()) else {
                return Err(SimError::topology("nodes", format!("node id {} does not exist ({n} nodes)", id.0)));
            };
            if !node.is_host {
                return Err(SimError::topology("nodes", format!("node {:?} is a router, not a host", node.name)));
            }
        }
        for (a, b) in [(src, dst), (dst, src)] {
            if a != b && self.routes.get(a, b).is_none() {
                let name = |x: NodeId| &self.nodes[x.index()].name;
                return Err(SimError::topology("links", format!("no route from {:?} to {:?}", name(a), name(b))));
            }
        }
        Ok(())
    }

    /// Put a real host's packet of `size` bytes (the IP total length) with ECN
    /// field `ecn` onto `src`'s egress towards `dst`, now. `handle` is the
    /// driver's; it comes back in the packet's [`ExternalEvent`].
    ///
    /// The pair must have passed [`Simulation::check_external_pair`]; a packet
    /// to its own host is handed back at once.
    ///
    /// # Panics
    /// In debug builds, if there is no route from `src` to `dst`.
    pub fn inject(&mut self, src: NodeId, dst: NodeId, size: u32, ecn: Ecn, handle: u32) {
        let now = self.sched.now();
        let pkt = Packet {
            uid: self.next_uid,
            src,
            dst,
            flow: FlowId(handle),
            proto: Transport::External,
            from_initiator: true,
            size,
            ecn,
            tcp: TcpHeader::default(),
            sent_at: now,
            to_endpoint: 0,
        };
        self.next_uid += 1;
        self.cons.sent += 1;
        if let Some(tap) = &mut self.tap {
            tap.push(pkt);
        }
        if src == dst {
            self.cons.delivered += 1;
            self.external.depart(now, &pkt);
            return;
        }
        let route = self.routes.get(src, dst).expect("check_external_pair first");
        self.send_new(route, pkt);
    }

    /// Hand every mark, departure and drop of injected packets since the
    /// last drain to `on`: marks first, then departures in order of time, then
    /// drops (so a handle is never reported after the event that frees it).
    pub fn drain_external(&mut self, mut on: impl FnMut(ExternalEvent)) {
        for h in self.external.marked.drain(..) {
            on(ExternalEvent::Marked(h));
        }
        for d in self.external.departures.drain(..) {
            on(ExternalEvent::Departed(d));
        }
        for h in self.external.dropped.drain(..) {
            on(ExternalEvent::Dropped(h));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::ScenarioSpec;
    use crate::time::SimDuration;

    /// a --100 Mb/s, 1 ms-- r ==10 Mb/s, 10 ms, RED or threshold== b, no flows.
    fn sim(queue: &str) -> Simulation {
        let spec = ScenarioSpec::from_toml_str(&format!(
            r#"
            simulation = {{ duration = "10s" }}
            nodes = [ {{ name = "a", kind = "host" }}, {{ name = "r", kind = "router" }}, {{ name = "b", kind = "host" }} ]
            links = [
              {{ a = "a", b = "r", rate = "100Mbps", delay = "1ms" }},
              {{ a = "r", b = "b", rate = "10Mbps", delay = "10ms", queue = {queue} }},
            ]
            "#
        ))
        .unwrap();
        Simulation::new(&spec, Some(1)).unwrap()
    }

    fn drain(s: &mut Simulation) -> Vec<ExternalEvent> {
        let mut v = Vec::new();
        s.drain_external(|e| v.push(e));
        v
    }

    // ---- delivery ----------------------------------------------------

    #[test]
    fn injected_packet_departs_after_both_links() {
        let mut s = sim(r#"{ type = "droptail", limit_packets = 10 }"#);
        let (a, b) = (s.node_id("a").unwrap(), s.node_id("b").unwrap());
        s.check_external_pair(a, b).unwrap();
        s.inject(a, b, 1500, Ecn::Ect0, 7);
        s.run_until(SimTime::from_nanos(50_000_000)).unwrap();
        // 1500 B: 120 us at 100 Mb/s + 1 ms, then 1.2 ms at 10 Mb/s + 10 ms.
        let t = SimTime::ZERO + SimDuration::from_micros(120 + 1000 + 1200 + 10_000);
        assert_eq!(
            drain(&mut s),
            vec![ExternalEvent::Departed(Departure { time: t, handle: 7, host: b, ecn: Ecn::Ect0 })]
        );
        assert!(s.conservation().holds());
        assert_eq!(s.conservation().delivered, 1);
        assert!(drain(&mut s).is_empty(), "a drain empties the outboxes");
    }

    #[test]
    fn reverse_direction_and_next_event_time() {
        let mut s = sim(r#"{ type = "droptail", limit_packets = 10 }"#);
        let (a, b) = (s.node_id("a").unwrap(), s.node_id("b").unwrap());
        assert_eq!(s.next_event_time(), None);
        s.inject(b, a, 40, Ecn::NotEct, 1);
        // 40 B at 10 Mb/s is 32 us: the wire arrival at r is the next event.
        assert_eq!(s.next_event_time(), Some(SimTime::from_nanos(32_000 + 10_000_000)));
        s.run_until(SimTime::from_nanos(20_000_000)).unwrap();
        let ev = drain(&mut s);
        assert!(matches!(ev[..], [ExternalEvent::Departed(Departure { handle: 1, host, .. })] if host == a));
    }

    // ---- queues act on injected packets ---------------------------------

    #[test]
    fn overflow_reports_dropped_handles_and_conserves() {
        let mut s = sim(r#"{ type = "droptail", limit_packets = 3 }"#);
        let (a, b) = (s.node_id("a").unwrap(), s.node_id("b").unwrap());
        // A burst of 10 at 100 Mb/s into a 10 Mb/s link with 3 packets of buffer.
        for h in 0..10 {
            s.inject(a, b, 1500, Ecn::NotEct, h);
        }
        s.run_until(SimTime::from_nanos(100_000_000)).unwrap();
        let ev = drain(&mut s);
        let departed: Vec<u32> =
            ev.iter().filter_map(|e| if let ExternalEvent::Departed(d) = e { Some(d.handle) } else { None }).collect();
        let dropped: Vec<u32> =
            ev.iter().filter_map(|e| if let ExternalEvent::Dropped(h) = e { Some(*h) } else { None }).collect();
        assert_eq!(departed.len() + dropped.len(), 10, "every handle comes back once: {ev:?}");
        assert!(!dropped.is_empty());
        assert_eq!(departed, {
            let mut d = departed.clone();
            d.sort_unstable();
            d
        });
        let c = s.conservation();
        assert!(c.holds() && c.in_flight == 0 && c.dropped == dropped.len() as u64);
        let q = s.queue_counters()[2]; // r->b
        assert_eq!(q.total_drops(), dropped.len() as u64);
    }

    #[test]
    fn threshold_marker_marks_ect_and_counts_no_tcp_flow() {
        let mut s = sim(r#"{ type = "threshold", limit_packets = 100, k = 2 }"#);
        let (a, b) = (s.node_id("a").unwrap(), s.node_id("b").unwrap());
        for h in 0..10 {
            s.inject(a, b, 1500, Ecn::Ect0, h);
        }
        s.run_until(SimTime::from_nanos(100_000_000)).unwrap();
        let events = drain(&mut s);
        let ecn: Vec<Ecn> =
            events.iter().filter_map(|e| if let ExternalEvent::Departed(d) = e { Some(d.ecn) } else { None }).collect();
        assert_eq!(ecn.len(), 10);
        // Packet 0 goes straight to the 10 Mb/s transmitter; packet k finds k - 1 queued
        // (arrivals every 120 us, departures every 1.2 ms), so K = 2 marks packets 4 to 9.
        let marked: Vec<u32> =
            events.iter().filter_map(|e| if let ExternalEvent::Marked(h) = e { Some(*h) } else { None }).collect();
        assert_eq!(marked, (4..10).collect::<Vec<u32>>(), "marks name their packets' handles");
        assert!(matches!(events[0], ExternalEvent::Marked(4)), "marks come first");
        let ce: Vec<bool> = ecn.iter().map(|&e| e == Ecn::Ce).collect();
        assert_eq!(ce, (0..10).map(|k| k >= 4).collect::<Vec<bool>>(), "{ecn:?}");
        assert_eq!(s.queue_counters()[2].total_marks(), 6);
    }

    #[test]
    fn routers_are_refused_as_external_hosts() {
        let s = sim(r#"{ type = "droptail", limit_packets = 3 }"#);
        let (a, r) = (s.node_id("a").unwrap(), s.node_id("r").unwrap());
        let err = s.check_external_pair(a, r).unwrap_err().to_string();
        assert!(err.contains("\"r\" is a router"), "{err}");
        assert!(s.check_external_pair(a, NodeId(99)).is_err());
    }

    #[test]
    fn same_injections_give_same_results() {
        let run = || {
            let mut s =
                sim(r#"{ type = "red", limit_packets = 30, min_th = 3, max_th = 9, max_p = 0.5, ecn = "rfc3168" }"#);
            let (a, b) = (s.node_id("a").unwrap(), s.node_id("b").unwrap());
            for h in 0..200 {
                s.run_until(SimTime::from_nanos(u64::from(h) * 500_000)).unwrap();
                s.inject(a, b, 1500, if h % 2 == 0 { Ecn::Ect0 } else { Ecn::NotEct }, h);
            }
            s.run_until(SimTime::from_nanos(1_000_000_000)).unwrap();
            (drain(&mut s), s.results().digest())
        };
        assert_eq!(run(), run());
    }
}
