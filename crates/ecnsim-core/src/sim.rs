//! The simulation: owns every arena, the scheduler and the random streams,
//! and holds the one `match` that routes events to components.
//!
//! The per-packet path (`on_wire_arrival` -> `arrive` -> `forward` /
//! endpoint -> `send_on` -> `try_transmit`) indexes arenas directly: no
//! allocation, no hashing, no dynamic dispatch.

use crate::error::SimError;
use crate::ids::{FlowId, NodeId, PortId};
use crate::link::Port;
use crate::packet::Packet;
use crate::qdisc::QueueCounters;
use crate::results::Results;
use crate::sched::{Event, Scheduler};
use crate::spec::ScenarioSpec;
use crate::stats::{FlowExtra, Series, Snapshot};
use crate::tcp::{TcpConfig, TcpCounters, TcpSocket};
use crate::time::{SimDuration, SimTime};

/// Engine work counters, for the benchmark harness.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerfCounters {
    /// Events popped and run (stale timer events included).
    pub events: u64,
    /// Packets that crossed one link (one per link traversal).
    pub packet_hops: u64,
}

/// Packet accounting: `sent == delivered + dropped + in_flight` always holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Conservation {
    /// Packets created by hosts.
    pub sent: u64,
    /// Packets that reached their destination host.
    pub delivered: u64,
    /// Packets dropped by a queue.
    pub dropped: u64,
    /// Packets queued, being serialised or propagating.
    pub in_flight: u64,
}

impl Conservation {
    /// True if every packet sent is accounted for.
    #[must_use]
    pub fn holds(&self) -> bool {
        self.sent == self.delivered + self.dropped + self.in_flight
    }
}

/// A node of the network.
#[derive(Debug)]
pub(crate) struct Node {
    pub(crate) name: String,
    pub(crate) is_host: bool,
}

/// A TCP connection and its application.
#[derive(Debug)]
pub(crate) struct Flow {
    pub(crate) name: String,
    pub(crate) src: NodeId,
    pub(crate) dst: NodeId,
    pub(crate) start: SimTime,
    /// Bytes the bulk application sends; `None` for unlimited.
    pub(crate) app_bytes: Option<u64>,
    pub(crate) cfg: TcpConfig,
    /// Drops, marks, completion of this flow.
    pub(crate) extra: FlowExtra,
}

/// One end of a connection, with its place in the network and its timer.
#[derive(Debug)]
pub(crate) struct Endpoint {
    pub(crate) sock: TcpSocket,
    pub(crate) node: NodeId,
    pub(crate) peer: NodeId,
    /// The port this host sends the connection's packets on (precomputed route).
    pub(crate) egress: PortId,
    /// Generation of the current timer event; older ones are stale.
    pub(crate) timer_gen: u32,
    /// When the current-generation timer event fires, if one is pending.
    pub(crate) timer_at: Option<SimTime>,
}

/// A running simulation.
#[derive(Debug)]
pub struct Simulation {
    pub(crate) sched: Scheduler,
    pub(crate) end: SimTime,
    pub(crate) warmup: SimTime,
    pub(crate) seed: u64,
    pub(crate) nodes: Vec<Node>,
    pub(crate) ports: Vec<Port>,
    /// `routes[node * n_nodes + dst]`: the egress port from `node` towards host `dst`.
    pub(crate) routes: Vec<u32>,
    pub(crate) flows: Vec<Flow>,
    /// `endpoints[2 * flow]` is the initiator, `endpoints[2 * flow + 1]` the responder.
    pub(crate) endpoints: Vec<Endpoint>,
    pub(crate) next_uid: u64,
    pub(crate) cons: Conservation,
    pub(crate) perf: PerfCounters,
    pub(crate) sample_interval: Option<SimDuration>,
    pub(crate) series: Series,
    pub(crate) warm: Option<Snapshot>,
    pub(crate) resolved_spec: String,
    pub(crate) profile: &'static str,
    /// Every packet hosts send, if recording was asked for (tests, traces).
    pub(crate) tap: Option<Vec<Packet>>,
}

/// Sentinel in the route table: no route.
pub(crate) const NO_ROUTE: u32 = u32::MAX;

impl Simulation {
    /// Validate `spec` and build the simulation; `seed` overrides the spec's seed.
    ///
    /// # Errors
    /// [`SimError::InvalidSpec`] for a scenario that breaks a rule,
    /// [`SimError::Topology`] for one whose flows have no route.
    pub fn new(spec: &ScenarioSpec, seed: Option<u64>) -> Result<Self, SimError> {
        crate::builder::build(spec, seed)
    }

    /// Current simulated time.
    #[must_use]
    pub fn now(&self) -> SimTime {
        self.sched.now()
    }
    /// The end of the run (the scenario's duration).
    #[must_use]
    pub fn end_time(&self) -> SimTime {
        self.end
    }
    /// True once the run reached its end time.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.sched.now() >= self.end
    }
    /// The seed of this run.
    #[must_use]
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Run every event due at or before `min(t, end_time)`, then set the clock there.
    pub fn run_until(&mut self, t: SimTime) {
        let limit = t.min(self.end);
        while let Some(ev) = self.sched.pop_until(limit) {
            self.perf.events += 1;
            self.dispatch(ev);
        }
        self.sched.advance_to(limit);
    }

    /// Run to the end.
    pub fn run(&mut self) {
        self.run_until(self.end);
    }

    /// Record every packet hosts send from now on (for tests and traces; it
    /// costs memory proportional to the run).
    pub fn record_sent_packets(&mut self) {
        self.tap.get_or_insert_with(Vec::new);
    }

    /// The packets recorded since [`Simulation::record_sent_packets`], in sending order.
    #[must_use]
    pub fn sent_packets(&self) -> &[Packet] {
        self.tap.as_deref().unwrap_or(&[])
    }

    /// Engine work counters.
    #[must_use]
    pub fn perf(&self) -> PerfCounters {
        self.perf
    }

    /// Packet accounting at the current instant.
    #[must_use]
    pub fn conservation(&self) -> Conservation {
        let in_flight = self.ports.iter().map(|p| p.queue.len_packets() + p.wire.len() as u64).sum();
        Conservation { in_flight, ..self.cons }
    }

    /// The results so far: complete once finished; partial otherwise, with
    /// meta `finished = "false"`.
    #[must_use]
    pub fn results(&self) -> Results {
        crate::stats::collect(self)
    }

    /// The counters of flow `f`'s initiator and responder (since the start of the run).
    #[must_use]
    pub fn flow_counters(&self, f: FlowId) -> (TcpCounters, TcpCounters) {
        (self.endpoints[2 * f.index()].sock.counters, self.endpoints[2 * f.index() + 1].sock.counters)
    }

    /// Counters of every queue (since the start of the run), by port.
    #[must_use]
    pub fn queue_counters(&self) -> Vec<QueueCounters> {
        self.ports.iter().map(|p| p.queue.counters).collect()
    }

    // ------------------------------------------------------------------
    // Event routing
    // ------------------------------------------------------------------

    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::TxDone(p) => {
                self.ports[p.index()].tx_event_pending = false;
                self.try_transmit(p);
            }
            Event::WireArrival(p) => self.on_wire_arrival(p),
            Event::Timer { flow, initiator, gen } => {
                let e = endpoint_index(flow, initiator);
                let ep = &mut self.endpoints[e];
                if ep.timer_gen != gen {
                    return; // stale: cancelled lazily
                }
                ep.timer_at = None;
                let now = self.sched.now();
                ep.sock.on_timer(now);
                self.service_endpoint(e);
            }
            Event::AppStart(f) => self.on_app_start(f),
            Event::WarmupEnd => {
                let now = self.sched.now();
                for p in &mut self.ports {
                    p.queue.integrate(now);
                    p.queue.reset_max();
                }
                self.warm = Some(Snapshot::take(self));
            }
            Event::Sample => {
                crate::stats::sample(self);
                if let Some(dt) = self.sample_interval {
                    let next = self.sched.now() + dt;
                    if next <= self.end {
                        self.sched.schedule(next, Event::Sample);
                    }
                }
            }
        }
    }

    // ------------------------------------------------------------------
    // Network
    // ------------------------------------------------------------------

    fn on_wire_arrival(&mut self, p: PortId) {
        let port = &mut self.ports[p.index()];
        let (_, pkt) = port.wire.pop_front().expect("a wire event has a packet");
        let to = port.to;
        if let Some(&(next, _)) = port.wire.front() {
            self.sched.schedule(next, Event::WireArrival(p));
        }
        self.perf.packet_hops += 1;
        self.arrive(to, pkt);
    }

    fn arrive(&mut self, node: NodeId, pkt: Packet) {
        if pkt.dst == node {
            self.cons.delivered += 1;
            let e = endpoint_index(pkt.flow, !pkt.from_initiator);
            let now = self.sched.now();
            self.endpoints[e].sock.on_segment(now, &pkt.tcp, pkt.ecn);
            self.service_endpoint(e);
        } else {
            let route = self.routes[node.index() * self.nodes.len() + pkt.dst.index()];
            debug_assert_ne!(route, NO_ROUTE, "validated at build time");
            self.send_on(PortId(route), pkt);
        }
    }

    /// Offer `pkt` to port `p`'s queue and start the transmitter if it is idle.
    fn send_on(&mut self, p: PortId, pkt: Packet) {
        let now = self.sched.now();
        let port = &mut self.ports[p.index()];
        let outcome = port.queue.enqueue(pkt, now);
        for (dropped, _) in &outcome.drops {
            self.cons.dropped += 1;
            self.flows[dropped.flow.index()].extra.drops += 1;
        }
        for (flow, _) in &outcome.marks {
            self.flows[flow.index()].extra.marks += 1;
        }
        if !port.tx_event_pending {
            self.try_transmit(p);
        }
    }

    /// If port `p`'s transmitter is free, start the next packet; otherwise make
    /// sure a `TxDone` event is pending.
    fn try_transmit(&mut self, p: PortId) {
        let now = self.sched.now();
        let port = &mut self.ports[p.index()];
        if port.busy_until > now {
            if !port.tx_event_pending {
                port.tx_event_pending = true;
                self.sched.schedule(port.busy_until, Event::TxDone(p));
            }
            return;
        }
        let next = port.queue.dequeue(now);
        for (dropped, _) in &port.queue.outcome().drops {
            self.cons.dropped += 1;
            self.flows[dropped.flow.index()].extra.drops += 1;
        }
        for (flow, _) in &port.queue.outcome().marks {
            self.flows[flow.index()].extra.marks += 1;
        }
        let Some(pkt) = next else { return };
        let wire_was_empty = port.wire.is_empty();
        let arrival = port.start_tx(pkt, now);
        if wire_was_empty {
            self.sched.schedule(arrival, Event::WireArrival(p));
        }
        if port.queue.len_packets() > 0 {
            port.tx_event_pending = true;
            self.sched.schedule(port.busy_until, Event::TxDone(p));
        }
    }

    // ------------------------------------------------------------------
    // Endpoints and applications
    // ------------------------------------------------------------------

    fn on_app_start(&mut self, f: FlowId) {
        let now = self.sched.now();
        let bytes = self.flows[f.index()].app_bytes;
        let sock = &mut self.endpoints[endpoint_index(f, true)].sock;
        sock.connect(now);
        // The bulk application writes everything at once, then closes.
        match bytes {
            Some(b) => {
                sock.send(b);
                sock.close();
            }
            None => sock.send_unlimited(),
        }
        self.service_endpoint(endpoint_index(f, true));
    }

    /// After any input to endpoint `e`: let the application react, send what
    /// the socket has to send, and keep its timer event current.
    fn service_endpoint(&mut self, e: usize) {
        let now = self.sched.now();
        let flow_index = e / 2;
        let is_initiator = e % 2 == 0;
        let ev = self.endpoints[e].sock.take_events();
        if !is_initiator {
            // The bulk sink closes its direction once the sender has closed its own.
            if ev.peer_closed {
                self.endpoints[e].sock.close();
            }
            if ev.received {
                let flow = &mut self.flows[flow_index];
                let got = self.endpoints[e].sock.counters.bytes_delivered;
                if flow.extra.completed_at.is_none() && flow.app_bytes.is_some_and(|b| got >= b) {
                    flow.extra.completed_at = Some(now);
                }
            }
        } else {
            let flow = &mut self.flows[flow_index];
            if ev.connected {
                flow.extra.connected_at = Some(now);
            }
            if ev.failed {
                flow.extra.failed = true;
            }
        }
        let header_bytes = self.flows[flow_index].cfg.header_bytes;
        loop {
            let ep = &mut self.endpoints[e];
            let Some(seg) = ep.sock.poll_transmit(now) else { break };
            let pkt = Packet {
                uid: self.next_uid,
                src: ep.node,
                dst: ep.peer,
                flow: FlowId::from_index(flow_index),
                from_initiator: is_initiator,
                size: seg.header.payload + header_bytes + seg.header.options_len(),
                ecn: seg.ecn,
                tcp: seg.header,
                sent_at: now,
                enqueued_at: now,
            };
            let egress = ep.egress;
            self.next_uid += 1;
            self.cons.sent += 1;
            if let Some(tap) = &mut self.tap {
                tap.push(pkt);
            }
            self.send_on(egress, pkt);
        }
        let ep = &mut self.endpoints[e];
        if let Some(d) = ep.sock.next_deadline() {
            // Reschedule only if the deadline moved earlier; a later deadline is
            // caught when the pending (early) event fires and finds nothing due.
            if ep.timer_at.is_none_or(|t| t > d) {
                ep.timer_gen = ep.timer_gen.wrapping_add(1);
                ep.timer_at = Some(d);
                self.sched.schedule(
                    d.max(now),
                    Event::Timer { flow: FlowId::from_index(flow_index), initiator: is_initiator, gen: ep.timer_gen },
                );
            }
        }
    }
}

/// The arena index of a flow's endpoint.
pub(crate) fn endpoint_index(flow: FlowId, initiator: bool) -> usize {
    2 * flow.index() + usize::from(!initiator)
}
