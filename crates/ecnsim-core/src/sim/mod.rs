//! The simulation: owns every arena, the scheduler and the random streams,
//! and holds the one `match` that routes events to components.
//!
//! The per-packet path (`on_wire_arrival` -> `arrive` -> `send_on` or the
//! endpoint -> `send_on` -> `start_tx`, straight through an empty queue in
//! front of an idle link, or by way of `try_transmit` when the link frees)
//! indexes arenas directly: no allocation, no hashing, no dynamic dispatch. A packet is written once into
//! the packet pool when a host sends it ([`Simulation::send_new`]); from there
//! on only its [`PacketId`] moves (through queues as a [`QueuedPacket`]), and
//! its slot is freed when it is delivered or dropped.

pub mod external;
mod sample;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::app::{AnyApp, App, Command, ConnEvent, ConnView, Cx, Record, Side};
use crate::buffer::SharedBuffer;
use crate::error::SimError;
use crate::flow::{EndedFlow, Endpoint, Flow, FlowFinal, UdpFlow, NO_SLOT, UDP_HEADER_BYTES};
use crate::ids::{AppId, FlowId, NodeId, PacketId, PortId};
use crate::link::Port;
pub(crate) use crate::node::Node;
use crate::node::Routes;
use crate::packet::{Ecn, Packet, PacketPool, TcpHeader, Transport};
use crate::qdisc::{QueueCounters, QueuedPacket};
use crate::results::Table;
use crate::rng::SimRng;
use crate::sched::{Event, Scheduler};
use crate::spec::{CcKind, EcnPolicy, RtoEstimator};
use crate::stats::{FlowExtra, Series, Snapshot};
use crate::tcp::{Opt, SocketEvents, TcpConfig, TcpCounters, TcpSocket, TcpState};
use crate::time::{SimDuration, SimTime};
use crate::trace::{TraceEvent, TraceFilter, Tracer};

/// Engine work counters, for the benchmark harness.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerfCounters {
    /// Events popped and run (stale timer events included).
    pub events: u64,
    /// Packets that crossed one link (one per link traversal).
    pub packet_hops: u64,
}

/// What a running simulation holds for the connections alive now (as opposed to
/// its output: flow rows and records, which grow with the connections ever opened).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveState {
    /// TCP connections whose endpoints are allocated now.
    pub live_connections: u64,
    /// Endpoint pairs allocated (live or free for reuse): the high-water mark of live connections.
    pub endpoint_slots: u64,
    /// Per-connection and per-session slots the applications hold (live or free for reuse).
    pub app_slots: u64,
    /// Events waiting in the scheduler.
    pub pending_events: u64,
    /// Connection slots (live, draining their last packets, or free for reuse).
    pub connection_slots: u64,
    /// Finished records (objects, pages, transactions) the core has room for until they are
    /// handed over by [`Simulation::drain_records`]: the most held between two drains (rounded
    /// up as a vector grows). Without draining, it grows with the records ever finished.
    pub record_slots: u64,
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

/// How a simulation is built and run, beyond its scenario.
#[derive(Clone, Debug, Default)]
pub struct SimOptions {
    /// Overrides the scenario's seed.
    pub seed: Option<u64>,
    /// Largest memory, in bytes, the simulation may use: a scenario whose
    /// estimate ([`ScenarioSpec::memory_estimate`]) is larger is refused
    /// when built, and a run whose state grows past it stops with
    /// [`SimError::Resource`], its results so far kept. `None`: no limit.
    pub max_memory: Option<u64>,
    /// Raised (by another thread, e.g. on Ctrl-C), it makes the build and
    /// [`Simulation::run_until`] return [`SimError::Cancelled`] within a few
    /// thousand events or flows. A cancelled run may be resumed.
    pub cancel: Option<Arc<AtomicBool>>,
}

/// Fewest stale timer events dropped in one pass ([`Simulation::maybe_drop_stale_timers`]):
/// a small heap is not worth a pass.
const STALE_TIMERS_MIN: usize = 64;
/// Events between two looks at the cancellation flag and the memory limit.
const CHECK_EVERY: u32 = 4096;
/// Events between two passes that give back the memory of queues that have
/// drained ([`crate::qdisc::Fifo::give_back_memory`]): rare
/// enough to cost nothing per packet (a pass visits every link direction),
/// frequent enough that a burst's buffers go back within a fraction of a
/// second of wall time.
pub(crate) const GIVE_BACK_EVERY: u32 = 1 << 20;

/// An application instance and its timer.
#[derive(Debug)]
pub(crate) struct AppSlot {
    pub(crate) app: AnyApp,
    pub(crate) name: String,
    /// Index into `Simulation::groups`.
    pub(crate) group: u32,
    /// TCP settings of the connections it opens.
    pub(crate) tcp: TcpConfig,
    pub(crate) timer_gen: u32,
    pub(crate) timer_at: Option<SimTime>,
}

/// What an app is called for.
#[derive(Clone, Copy, Debug)]
enum Call {
    Start,
    Timer,
    Conn(ConnEvent),
}

/// A running simulation.
#[derive(Debug)]
pub struct Simulation {
    pub(crate) sched: Scheduler,
    pub(crate) end: SimTime,
    pub(crate) warmup: SimTime,
    pub(crate) seed: u64,
    pub(crate) nodes: Vec<Node>,
    /// The packets in the network (queued, being serialised or propagating), by [`PacketId`].
    pub(crate) packets: PacketPool,
    /// Each host's own ECN policy, if it has one.
    pub(crate) host_ecn: Vec<Option<EcnPolicy>>,
    pub(crate) ports: Vec<Port>,
    /// The routers' shared buffers, named by their ports' `buffer`.
    pub(crate) buffers: Vec<SharedBuffer>,
    /// The egress port from any node towards any host.
    pub(crate) routes: Routes,
    /// The TCP connections by `FlowId`: every `[[flows]]` connection (the first
    /// `n_static` slots), then the workload connections alive or with packets in
    /// the network, in slots reused once free.
    pub(crate) flows: Vec<Flow>,
    /// `[[flows]]` connections: their slots are never freed.
    pub(crate) n_static: usize,
    /// Free workload-connection slots, reused last-freed first.
    pub(crate) free_flows: Vec<u32>,
    /// The serial the next connection gets.
    pub(crate) next_serial: u64,
    /// Keep a `flows` row for every workload connection (`simulation.connection_rows`).
    pub(crate) connection_rows: bool,
    /// With `connection_rows`: the rows of workload connections whose slots were freed.
    pub(crate) ended: Vec<EndedFlow>,
    /// Per app: the sums over its connections whose slots were freed.
    pub(crate) app_totals: Vec<crate::stats::ConnTotals>,
    /// Endpoint pairs: `endpoints[2 * slot]` is the initiator, `2 * slot + 1` the responder.
    pub(crate) endpoints: Vec<Endpoint>,
    /// Released endpoint pairs, reused by new connections.
    pub(crate) free_slots: Vec<u32>,
    /// The TCP parameter sets endpoints share (see [`Simulation::shared_config`]).
    pub(crate) tcp_configs: Vec<Arc<TcpConfig>>,
    /// UDP flows, by the index UDP packets carry in `flow`.
    pub(crate) udp: Vec<UdpFlow>,
    pub(crate) apps: Vec<AppSlot>,
    /// Group names (records).
    pub(crate) groups: Vec<String>,
    /// Finished (completed or failed) transactions, pages, objects not yet handed over by
    /// [`Simulation::drain_records`].
    pub(crate) records: Vec<Record>,
    /// Bytes of the `records` rows handed over by [`Simulation::drain_records`]: they still
    /// count against `max_memory`, since the caller keeps them (the Python layer does).
    pub(crate) records_drained_bytes: u64,
    /// Reused command buffer.
    pub(crate) cmds: Vec<Command>,
    pub(crate) next_uid: u64,
    pub(crate) cons: Conservation,
    pub(crate) perf: PerfCounters,
    pub(crate) sample_interval: Option<SimDuration>,
    /// `sampled_apps[app]`: the flow series samples this app's connections (`None`: every app's).
    pub(crate) sampled_apps: Option<Vec<bool>>,
    /// `sampled_ports[port]`: the queue series samples this port's queue (`None`: every port's).
    pub(crate) sampled_ports: Option<Vec<bool>>,
    pub(crate) series: Series,
    pub(crate) warm: Option<Snapshot>,
    pub(crate) resolved_spec: String,
    pub(crate) profile: &'static str,
    /// Every packet hosts send, if recording was asked for (tests, traces).
    pub(crate) tap: Option<Vec<Packet>>,
    /// Link-event trace, if enabled.
    pub(crate) tracer: Option<Tracer>,
    /// Packets of real hosts leaving the simulation ([`crate::external`]).
    pub(crate) external: crate::external::External,
    /// How many `[[flows]]` the scenario has: `AppId`s below this are
    /// `flows[i]`, the others `apps[i - spec_flows]`.
    pub(crate) spec_flows: usize,
    /// The scenario field whose connections grow at run time (`apps` or `flows`).
    pub(crate) connection_path: &'static str,
    /// Why the run stopped for good, if it did.
    pub(crate) fault: Option<SimError>,
    /// Events since the last [`Simulation::give_back_memory`] pass (counted in
    /// steps of [`CHECK_EVERY`]).
    pub(crate) since_give_back: u32,
    /// Events the loop runs before it next looks at the fault, the cancellation flag and
    /// the memory limit ([`CHECK_EVERY`] at most; 1 once [`Simulation::stop`] was called).
    pub(crate) until_check: u32,
    /// The instant of the last event run, and how many events ran at it.
    pub(crate) instant: SimTime,
    pub(crate) instant_events: u64,
    /// Endpoint timer events this simulation made stale (displaced by an earlier deadline,
    /// or of a released connection) since the timers' heap was last rid of its stale events:
    /// an upper bound on those still there (some have popped since, not counted here so that
    /// the event loop's code is left as it was). Once they may be half the heap, they are
    /// dropped (see `drop_stale_timers`).
    pub(crate) stale_timers: u32,
    /// [`SimOptions::max_memory`].
    pub(crate) memory_limit: Option<u64>,
    /// [`SimOptions::cancel`].
    pub(crate) cancel: Option<Arc<AtomicBool>>,
}

/// Most distinct TCP parameter sets kept for sharing; endpoints with others get their own copy.
const SHARED_CONFIGS: usize = 64;

impl Simulation {
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
    ///
    /// # Errors
    /// - [`SimError::Runtime`] if a component makes no progress in simulated
    ///   time (an unbounded number of events at one instant); the path names it.
    /// - [`SimError::Resource`] if the run's state grows past
    ///   [`SimOptions::max_memory`].
    ///
    /// After either, the simulation stays stopped at that instant (every later
    /// call returns the same error); [`Simulation::results`] gives the results
    /// so far, marked unfinished.
    /// - [`SimError::Cancelled`] if [`SimOptions::cancel`] was raised; the
    ///   clock stays at the last event run, and a later call resumes the run.
    pub fn run_until(&mut self, t: SimTime) -> Result<(), SimError> {
        let result = self.run_events(t);
        // The last event's spent heap entry goes, so that the scheduler reads right between runs.
        self.sched.settle();
        result
    }

    /// [`Simulation::run_until`]'s loop, in the copy without trace points when neither a
    /// trace nor the packet tap is on (neither can be switched on while it runs).
    fn run_events(&mut self, t: SimTime) -> Result<(), SimError> {
        if self.tracer.is_some() || self.tap.is_some() {
            self.run_events_with::<true>(t)
        } else {
            self.run_events_with::<false>(t)
        }
    }

    /// [`Simulation::run_events`]; `TRACE`: the trace points on the per-packet path test
    /// whether a trace or the packet tap is on (false: they are compiled out).
    fn run_events_with<const TRACE: bool>(&mut self, t: SimTime) -> Result<(), SimError> {
        if let Some(e) = &self.fault {
            return Err(e.clone());
        }
        let limit = t.min(self.end);
        self.until_check = CHECK_EVERY;
        while let Some(ev) = self.sched.pop_event(limit) {
            self.perf.events += 1;
            let now = self.sched.now();
            if now == self.instant {
                self.instant_events += 1;
                if self.instant_events > crate::app::TIMER_POPS_PER_INSTANT
                    && self.instant_events > self.instant_budget()
                {
                    self.sched.settle_timer();
                    return Err(self.stop(self.stalled_event(ev)));
                }
            } else {
                self.instant = now;
                self.instant_events = 1;
            }
            self.dispatch::<TRACE>(ev);
            // One countdown for the periodic checks and the fault: `stop` brings it to the end.
            self.until_check -= 1;
            if self.until_check == 0 {
                if let Some(e) = &self.fault {
                    return Err(e.clone());
                }
                self.until_check = CHECK_EVERY;
                self.check_limits()?;
                self.since_give_back += CHECK_EVERY;
                if self.since_give_back >= GIVE_BACK_EVERY {
                    self.since_give_back = 0;
                    self.give_back_memory();
                }
            }
        }
        self.check_limits()?;
        self.sched.advance_to(limit);
        Ok(())
    }

    /// Run to the end.
    ///
    /// # Errors
    /// As [`Simulation::run_until`].
    pub fn run(&mut self) -> Result<(), SimError> {
        self.run_until(self.end)
    }

    /// Why the run stopped for good ([`SimError::Runtime`] or
    /// [`SimError::Resource`]), if it did.
    #[must_use]
    pub fn fault(&self) -> Option<&SimError> {
        self.fault.as_ref()
    }

    /// Stop the run for good with `e`; returns `e`. The event loop stops after the event
    /// that called it.
    #[cold]
    #[inline(never)]
    fn stop(&mut self, e: SimError) -> SimError {
        self.fault = Some(e.clone());
        self.until_check = 1;
        e
    }

    /// Give back the slots of queues beyond what they hold now.
    #[cold]
    #[inline(never)]
    pub(crate) fn give_back_memory(&mut self) {
        for port in &mut self.ports {
            port.give_back_memory();
        }
    }

    /// The cancellation flag and the memory limit.
    #[cold]
    #[inline(never)]
    fn check_limits(&mut self) -> Result<(), SimError> {
        if self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(SimError::Cancelled);
        }
        if let Some(e) = self.memory_limit.and_then(|limit| self.memory_error(limit)) {
            return Err(self.stop(e));
        }
        Ok(())
    }

    /// Events one instant may hold (see [`instant_event_budget`]).
    fn instant_budget(&self) -> u64 {
        instant_event_budget(self.ports.len() + self.endpoints.len() + self.apps.len() + self.udp.len())
    }

    /// True if app `a` is one of the scenario's `[[flows]]` (each its own bulk app, named as
    /// the flow), false for an `[[apps]]` entry.
    pub(crate) fn is_spec_flow(&self, a: AppId) -> bool {
        a.index() < self.spec_flows
    }

    /// The scenario path of app `a`: `flows[i]` or `apps[j]`.
    pub(crate) fn app_path(&self, a: AppId) -> String {
        let i = a.index();
        if self.is_spec_flow(a) {
            format!("flows[{i}]")
        } else {
            format!("apps[{}]", i - self.spec_flows)
        }
    }

    /// The error for a run stopped at an instant that holds too many events,
    /// naming the component of the event that went over.
    #[cold]
    #[inline(never)]
    fn stalled_event(&self, ev: Event) -> SimError {
        let (path, what) = match ev {
            Event::TxDone(p) | Event::WireArrival(p) => {
                (format!("links[{}]", self.ports[p.index()].link_index), "link events")
            }
            Event::Timer { endpoint, .. } => {
                let flow = self.endpoints[endpoint as usize].flow;
                (self.app_path(self.flows[flow.index()].app), "TCP timer events")
            }
            Event::AppStart(a) | Event::AppTimer { app: a, .. } => (self.app_path(a), "application events"),
            Event::WarmupEnd => ("simulation.warmup".to_owned(), "events"),
            Event::Sample => ("simulation.sample_interval".to_owned(), "events"),
        };
        SimError::runtime(
            path,
            format!(
                "makes no progress in simulated time: more than {} events at t = {} ({what}); zero-length \
                 periods or intervals keep it at one instant",
                self.instant_events - 1,
                self.now()
            ),
        )
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

    /// Record link events (`+ - r d`) from now on, for the links, nodes and
    /// flows `filter` selects; take them with [`Simulation::drain_trace`].
    ///
    /// # Errors
    /// [`SimError::InvalidSpec`] naming `trace.<field>[i]` for a link, node or
    /// flow the scenario does not have.
    pub fn enable_trace(&mut self, filter: &TraceFilter) -> Result<(), SimError> {
        let nodes: Vec<&str> = self.nodes.iter().map(|n| n.name.as_str()).collect();
        let apps: Vec<&str> = self.apps.iter().map(|a| a.name.as_str()).collect();
        let n_links = self.ports.len() / 2;
        let ports = self.ports.iter().map(|p| (p.link_index, p.from.index(), p.to.index()));
        self.tracer = Some(Tracer::new(filter, n_links, &nodes, &apps, ports)?);
        Ok(())
    }

    /// The trace records since the last drain, as a `trace` table (empty if
    /// tracing is off). Columns are those `ecnsim.trace` writes from.
    pub fn drain_trace(&mut self) -> Table {
        let ends: Vec<(u32, u32)> = self.ports.iter().map(|p| (p.from.0, p.to.0)).collect();
        match &mut self.tracer {
            Some(t) => t.drain(&ends),
            None => Tracer::new(&TraceFilter::default(), 0, &[], &[], std::iter::empty())
                .expect("an empty filter is valid")
                .drain(&ends),
        }
    }

    /// Trace records waiting to be drained.
    #[must_use]
    pub fn trace_pending(&self) -> usize {
        self.tracer.as_ref().map_or(0, Tracer::pending)
    }

    /// Engine work counters.
    #[must_use]
    pub fn perf(&self) -> PerfCounters {
        self.perf
    }

    /// What the simulation holds for live connections now; see [`LiveState`].
    #[must_use]
    pub fn live_state(&self) -> LiveState {
        LiveState {
            live_connections: self.flows.iter().filter(|f| f.slot != NO_SLOT).count() as u64,
            endpoint_slots: (self.endpoints.len() / 2) as u64,
            app_slots: self.apps.iter().map(|a| a.app.slots() as u64).sum(),
            pending_events: self.sched.pending() as u64,
            connection_slots: self.flows.len() as u64,
            record_slots: self.records.capacity() as u64,
        }
    }

    /// The routers' shared buffers, in the order of the nodes that have one.
    #[must_use]
    pub fn shared_buffers(&self) -> &[SharedBuffer] {
        &self.buffers
    }

    /// Packet accounting at the current instant.
    #[must_use]
    pub fn conservation(&self) -> Conservation {
        let in_flight = self.ports.iter().map(|p| p.queue.len_packets() + u64::from(p.wire.len())).sum();
        debug_assert_eq!(self.packets.len() as u64, in_flight, "the pool holds exactly the packets in flight");
        Conservation { in_flight, ..self.cons }
    }

    /// The counters of flow `f`'s initiator and responder (since the start of the run).
    ///
    /// # Panics
    /// If `f` is a free workload-connection slot (its connection ended and left the network).
    #[must_use]
    pub fn flow_counters(&self, f: FlowId) -> (TcpCounters, TcpCounters) {
        match &self.flows[f.index()].last {
            Some(fin) => (fin.counters[0], fin.counters[1]),
            None => {
                let slot = self.flows[f.index()].slot as usize;
                (self.endpoints[2 * slot].sock.counters, self.endpoints[2 * slot + 1].sock.counters)
            }
        }
    }

    /// The AccECN feedback flow `f`'s initiator has received as its Data Sender (RFC 9768: the
    /// CE-marked packets and bytes its peer reported), if AccECN was negotiated.
    #[must_use]
    pub fn flow_accecn(&self, f: FlowId) -> Option<crate::tcp::AccEcnCounts> {
        match &self.flows[f.index()].last {
            Some(fin) => fin.accecn,
            None => self.initiator(f.index()).and_then(TcpSocket::accecn_counts),
        }
    }

    /// TCP Prague's state of flow `f`'s sender (its alpha, window and Classic-ECN-bottleneck
    /// score), while the flow's endpoints are live and it runs Prague.
    #[must_use]
    pub fn flow_prague(&self, f: FlowId) -> Option<&crate::tcp::cc::Prague> {
        self.initiator(f.index()).and_then(TcpSocket::prague)
    }

    /// The live initiator socket of flow `f`, if its endpoints are not released.
    pub(crate) fn initiator(&self, f: usize) -> Option<&TcpSocket> {
        let slot = self.flows[f].slot;
        (slot != NO_SLOT).then(|| &self.endpoints[2 * slot as usize].sock)
    }

    /// The discipline of queue `queue_id` (the queues table's row), to read its own statistics
    /// (e.g. [`crate::qdisc::dualpi2::DualPi2::stats`]); `None` past the last queue.
    #[must_use]
    pub fn qdisc(&self, queue_id: usize) -> Option<&crate::qdisc::AnyQdisc> {
        self.ports.get(queue_id).map(|p| p.queue.qdisc())
    }

    /// Counters of every queue (since the start of the run), by port.
    #[must_use]
    pub fn queue_counters(&self) -> Vec<QueueCounters> {
        self.ports.iter().map(Port::counters).collect()
    }

    // ------------------------------------------------------------------
    // Event routing
    // ------------------------------------------------------------------

    fn dispatch<const TRACE: bool>(&mut self, ev: Event) {
        match ev {
            Event::TxDone(p) => {
                self.ports[p.index()].tx_event_pending = false;
                self.try_transmit::<TRACE>(p);
            }
            Event::WireArrival(p) => self.on_wire_arrival::<TRACE>(p),
            Event::Timer { endpoint, gen } => {
                self.on_endpoint_timer::<TRACE>(endpoint, gen);
                // The event's spent entry goes unless the timer it armed took its place.
                self.sched.settle_timer();
            }
            Event::AppStart(a) => self.call_app(a, Call::Start),
            Event::AppTimer { app, gen } => {
                let slot = &mut self.apps[app.index()];
                if slot.timer_gen != gen {
                    return;
                }
                slot.timer_at = None;
                self.call_app(app, Call::Timer);
            }
            Event::WarmupEnd => {
                let now = self.sched.now();
                for p in &mut self.ports {
                    p.queue.integrate(now);
                    p.reset_max();
                }
                for b in &mut self.buffers {
                    b.reset_max();
                }
                self.warm = Some(self.snapshot());
            }
            Event::Sample => {
                self.sample();
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

    fn on_wire_arrival<const TRACE: bool>(&mut self, p: PortId) {
        let port = &mut self.ports[p.index()];
        let (id, next) = port.take_arrival(&self.packets);
        let (to, to_router) = (port.to, port.to_router);
        if let Some(next) = next {
            self.sched.schedule(next, Event::WireArrival(p));
        }
        self.perf.packet_hops += 1;
        trace::<TRACE>(&mut self.tracer, &self.flows, self.sched.now(), TraceEvent::Receive, p, &self.packets[id]);
        // Forwarded or delivered, decided from the port: this branch, unpredictable on a
        // mixed workload, then resolves without waiting for the packet to be read.
        if to_router {
            self.forward::<TRACE>(to, id);
        } else {
            self.arrive::<TRACE>(to, id);
        }
    }

    /// Packet `id` reached `node`, not its destination: send it on towards it.
    #[inline(always)]
    fn forward<const TRACE: bool>(&mut self, node: NodeId, id: PacketId) {
        let dst = self.packets[id].dst;
        debug_assert!(dst != node, "a packet reached a router as its destination");
        let route = self.routes.forward(node, dst);
        assert!(route != crate::node::NO_ROUTE, "routes are validated at build time");
        self.send_on::<TRACE>(PortId(route), id);
    }

    /// Packet `id` reached host `node`: deliver it (and free its slot), or forward it.
    fn arrive<const TRACE: bool>(&mut self, node: NodeId, id: PacketId) {
        let pkt = &self.packets[id];
        if pkt.dst != node {
            self.forward::<TRACE>(node, id);
            return;
        }
        self.cons.delivered += 1;
        let now = self.sched.now();
        let (flow, sent_at, payload) = (pkt.flow, pkt.sent_at, pkt.tcp.payload);
        match pkt.proto {
            Transport::Tcp => {}
            Transport::Udp => {
                self.packets.remove(id);
                let u = &mut self.udp[flow.index()];
                u.received_packets += 1;
                u.received_bytes += u64::from(payload);
                u.delay_sum_ns += now.saturating_since(sent_at).as_nanos();
                return;
            }
            Transport::External => {
                self.external.depart(now, pkt);
                self.packets.remove(id);
                return;
            }
        }
        // The endpoint the packet was sent to, straight from the packet: its address does not
        // wait for the connection's row. Its pair still serves this connection if it is live
        // and names it (a connection's id is not reused while a packet of it is in the network).
        let e = pkt.to_endpoint as usize;
        let ep = &mut self.endpoints[e];
        let live = ep.live && ep.flow == flow;
        debug_assert!(!self.flows[flow.index()].free, "a packet reached a free connection slot");
        debug_assert_eq!(
            live,
            self.flows[flow.index()].slot != NO_SLOT,
            "endpoint {e} serves flow {flow:?} exactly while the flow has its slot"
        );
        // One-way delay of data segments, host to host, either direction.
        let owd = now.saturating_since(sent_at).as_nanos();
        if !live {
            // A late segment of a released connection; it may have been the last one out.
            let f = &mut self.flows[flow.index()];
            debug_assert!(f.in_flight > 0, "a late packet of flow {flow:?} is counted in flight");
            f.in_flight -= 1;
            if payload > 0 {
                f.extra.owd_sum_ns += owd;
                f.extra.owd_count += 1;
            }
            self.packets.remove(id);
            self.maybe_free_flow(flow);
            return;
        }
        // Counted on the endpoint's line, which the service reads anyway (see `Endpoint`).
        ep.in_network = ep.in_network.wrapping_sub(1);
        if payload > 0 {
            if ep.owd_count == u32::MAX {
                spill_owd(ep, &mut self.flows);
            }
            ep.owd_sum_ns += owd;
            ep.owd_count += 1;
        }
        self.endpoints[e].sock.on_segment(now, &pkt.tcp, pkt.ecn);
        self.packets.remove(id);
        self.service_endpoint::<TRACE>(e);
    }

    /// Flow `i`'s facts now: its row's, plus what its endpoints counted while live.
    pub(crate) fn flow_extra(&self, i: usize) -> FlowExtra {
        let f = &self.flows[i];
        let mut x = f.extra;
        if f.slot != NO_SLOT {
            let slot = f.slot as usize;
            for ep in &self.endpoints[2 * slot..2 * slot + 2] {
                x.owd_sum_ns += ep.owd_sum_ns;
                x.owd_count += u64::from(ep.owd_count);
                x.drops += u64::from(ep.drops);
            }
        }
        x
    }

    /// Count a queue's drop of a TCP packet against endpoint `e`, which sent it, if `e` still
    /// serves `flow` (else the row counts it, [`Simulation::charge`]); returns true if it did.
    /// A drop at the sender's own access queue happens while it sends, with the endpoint's
    /// line in cache, where the row's is cold (see [`Endpoint::drops`]).
    #[inline]
    fn charge_sender(&mut self, flow: FlowId, e: usize) -> bool {
        let Some(ep) = self.endpoints.get_mut(e) else { return false };
        if !(ep.live && ep.flow == flow) {
            return false;
        }
        ep.in_network = ep.in_network.wrapping_sub(1);
        if ep.drops == u8::MAX {
            spill_drops(ep, &mut self.flows);
        }
        ep.drops += 1;
        true
    }

    /// Count a queue's drop or mark against the packet's flow.
    fn charge(&mut self, flow: FlowId, proto: Transport, drop: bool) {
        match (proto, drop) {
            (Transport::Tcp, true) => {
                let f = &mut self.flows[flow.index()];
                debug_assert!(!f.free, "a dropped packet names a free connection slot");
                f.extra.drops += 1;
                // Wrapping: while the endpoints are live they count the packets in flight.
                f.in_flight = f.in_flight.wrapping_sub(1);
                if f.slot == NO_SLOT {
                    self.maybe_free_flow(flow);
                }
            }
            (Transport::Tcp, false) => self.flows[flow.index()].extra.marks += 1,
            (Transport::Udp, true) => self.udp[flow.index()].drops += 1,
            (Transport::Udp, false) => self.udp[flow.index()].marks += 1,
            // A real host's packet: the driver frees its bytes, or counts the mark.
            (Transport::External, true) => self.external.dropped(flow),
            (Transport::External, false) => self.external.marked(flow),
        }
    }

    /// Put `pkt`, just sent by a host, into the packet pool (its only copy) and
    /// offer it to port `p`'s queue.
    pub(crate) fn send_new(&mut self, p: PortId, pkt: Packet) {
        let id = self.packets.insert(pkt);
        self.send_on::<true>(p, id);
    }

    /// Offer packet `id` to port `p`'s queue and start the transmitter if it is idle.
    // Inlined into its two callers (a router forwarding, a host sending): once per hop, a
    // call's prologue, spills and argument passing cost about 30 instructions.
    #[inline(always)]
    pub(crate) fn send_on<const TRACE: bool>(&mut self, p: PortId, id: PacketId) {
        let now = self.sched.now();
        let pkt = &self.packets[id];
        trace::<TRACE>(&mut self.tracer, &self.flows, now, TraceEvent::Enqueue, p, pkt);
        let port = &mut self.ports[p.index()];
        // An empty queue in front of an idle transmitter: a packet the discipline passes
        // straight through is sent now, as enqueue then dequeue would send it (by its size
        // and id alone: the queue's copy of the packet is built only when it queues).
        let size = pkt.size;
        if port.passes_idle(size, now) {
            // Passed straight through, its ECN field untouched: the pool's copy is current.
            port.count_passed(size);
            trace::<TRACE>(&mut self.tracer, &self.flows, now, TraceEvent::Dequeue, p, pkt);
            start_tx(port, &mut self.packets, &mut self.sched, p, id, size, now);
            return;
        }
        if port.shared {
            self.send_shared::<TRACE>(p, id);
            return;
        }
        port.queue.enqueue(QueuedPacket::new(id, pkt), now);
        if port.queue.has_outcome() {
            self.account_outcome(p);
        }
        self.start_if_idle::<TRACE>(p);
    }

    /// [`Simulation::send_on`] for a queue in a shared buffer (not inlined: a queue with a
    /// static limit, every queue unless a router has a `shared_buffer`, does not pay for it):
    /// the buffer admits the packet or refuses it, an overflow drop, before the discipline
    /// sees it (`buffer.rs`), and follows the queue's bytes through the enqueue.
    #[inline(never)]
    fn send_shared<const TRACE: bool>(&mut self, p: PortId, id: PacketId) {
        let now = self.sched.now();
        let pkt = &self.packets[id];
        let port = &mut self.ports[p.index()];
        let buffer = &mut self.buffers[port.buffer as usize];
        let before = port.queue.len_bytes();
        if !buffer.admits(before, pkt.size) {
            buffer.refuse();
            port.queue.refuse(QueuedPacket::new(id, pkt), now);
            // Dropped: the transmitter's state is unchanged (a refused packet never found
            // the queue empty and the transmitter idle unless nothing waits to be sent).
            self.account_outcome(p);
            return;
        }
        port.queue.enqueue(QueuedPacket::new(id, pkt), now);
        buffer.moved(before, port.queue.len_bytes());
        if port.queue.has_outcome() {
            self.account_outcome(p);
        }
        self.start_if_idle::<TRACE>(p);
    }

    /// After an enqueue to port `p`: start its transmitter if it is idle, or make sure a
    /// `TxDone` is pending.
    #[inline(always)]
    fn start_if_idle<const TRACE: bool>(&mut self, p: PortId) {
        let now = self.sched.now();
        let port = &mut self.ports[p.index()];
        if !port.tx_event_pending {
            if port.busy_until > now {
                // `try_transmit` on a busy transmitter (the usual case here), without the call.
                port.tx_event_pending = true;
                self.sched.schedule(port.busy_until, Event::TxDone(p));
            } else {
                self.try_transmit::<TRACE>(p);
            }
        }
    }

    /// Charge the drops and marks of port `p`'s last queue operation to their
    /// flows and to the packet accounting, and trace the drops. Out of line: a drop or a
    /// mark is the exception on the per-packet path.
    #[cold]
    #[inline(never)]
    fn account_outcome(&mut self, p: PortId) {
        let now = self.sched.now();
        let (n_drops, n_marks) = {
            let o = self.ports[p.index()].queue.outcome();
            (o.drops.len(), o.marks.len())
        };
        // A mark's CE codepoint goes into the pool now (the slot is written nowhere else
        // on the way out of the queue), before any drop below frees a slot.
        for i in 0..n_marks {
            let (_, _, _, id, _) = self.ports[p.index()].queue.outcome().marks[i];
            self.packets[id].ecn = Ecn::Ce;
        }
        for i in 0..n_drops {
            let (d, _) = self.ports[p.index()].queue.outcome().drops[i];
            self.cons.dropped += 1;
            // A packet marked, then dropped, leaves with its mark.
            self.packets[d.id].ecn = d.ecn;
            // Traced before it is charged: charging the last packet of a released connection frees its slot.
            trace::<true>(&mut self.tracer, &self.flows, now, TraceEvent::Drop, p, &self.packets[d.id]);
            // The endpoint that sent it (a TCP packet names its receiver; the pair is `e ^ 1`).
            let sender = self.packets[d.id].to_endpoint ^ 1;
            self.packets.remove(d.id);
            if d.proto == Transport::Tcp && self.charge_sender(d.flow, sender as usize) {
                continue;
            }
            self.charge(d.flow, d.proto, true);
        }
        for i in 0..n_marks {
            let (f, proto, _, _, _) = self.ports[p.index()].queue.outcome().marks[i];
            self.charge(f, proto, false);
        }
    }

    /// If port `p`'s transmitter is free, start the next packet; otherwise make
    /// sure a `TxDone` event is pending.
    fn try_transmit<const TRACE: bool>(&mut self, p: PortId) {
        let now = self.sched.now();
        let port = &mut self.ports[p.index()];
        if port.busy_until > now {
            if !port.tx_event_pending {
                port.tx_event_pending = true;
                self.sched.schedule(port.busy_until, Event::TxDone(p));
            }
            return;
        }
        // Only a queue in a shared buffer carries its occupancy across the dequeue.
        let before = port.shared.then(|| port.queue.len_bytes());
        let next = port.queue.dequeue(now);
        if let Some(before) = before {
            self.buffers[port.buffer as usize].moved(before, port.queue.len_bytes());
        }
        if port.queue.has_outcome() {
            self.account_outcome(p);
        }
        let Some(q) = next else { return };
        // A mark was written to the pool as the queue reported it (`account_outcome`): the
        // slot, cold after the packet's wait in the queue, is not touched here.
        debug_assert_eq!(self.packets[q.id].ecn, q.ecn, "the pool holds the queue's ECN field");
        trace::<TRACE>(&mut self.tracer, &self.flows, now, TraceEvent::Dequeue, p, &self.packets[q.id]);
        let port = &mut self.ports[p.index()];
        start_tx(port, &mut self.packets, &mut self.sched, p, q.id, q.size, now);
        // Packets wait: the next leaves when this one is sent (a packet passed straight
        // through found the queue empty, so only this path schedules a `TxDone`).
        if port.queue.len_packets() > 0 {
            port.tx_event_pending = true;
            self.sched.schedule(port.busy_until, Event::TxDone(p));
        }
    }

    // ------------------------------------------------------------------
    // Endpoints and applications
    // ------------------------------------------------------------------

    /// Call app `a` and carry out the commands it issued.
    fn call_app(&mut self, a: AppId, call: Call) {
        let mut cmds = std::mem::take(&mut self.cmds);
        cmds.clear();
        {
            let Simulation { apps, flows, free_flows, endpoints, records, udp, sched, .. } = self;
            let mut cx = Cx {
                now: sched.now(),
                app: a,
                cmds: &mut cmds,
                records,
                free_flows,
                flows_len: u32::try_from(flows.len()).expect("flow ids fit in u32"),
                new_flows: 0,
                next_udp: u32::try_from(udp.len()).expect("UDP flow ids fit in u32"),
                view: ConnView { flows, endpoints },
            };
            let app = &mut apps[a.index()].app;
            match call {
                Call::Start => app.on_start(&mut cx),
                Call::Timer => app.on_timer(&mut cx),
                Call::Conn(ev) => app.on_conn(&mut cx, ev),
            }
        }
        for &c in &cmds {
            self.execute(a, c);
        }
        self.cmds = cmds;
        // Keep the app's timer event current (reschedule only if the deadline moved earlier).
        let now = self.sched.now();
        if matches!(call, Call::Timer) && self.apps[a.index()].app.next_deadline().is_some_and(|d| d <= now) {
            // `on_timer` handles everything due; a deadline still due means the
            // app's timers used up their budget at this instant (Timers::pop_due).
            let e = SimError::runtime(
                self.app_path(a),
                format!(
                    "makes no progress in simulated time: more than {} timer expirations at t = {now}; \
                     zero-length periods or intervals keep it at one instant",
                    crate::app::TIMER_POPS_PER_INSTANT
                ),
            );
            self.stop(e);
            return;
        }
        let slot = &mut self.apps[a.index()];
        // A deadline past the end of the run (or "never", SimTime::MAX) is not scheduled.
        if let Some(d) = slot.app.next_deadline().filter(|&d| d <= self.end) {
            if slot.timer_at.is_none_or(|t| t > d) {
                slot.timer_gen = slot.timer_gen.wrapping_add(1);
                slot.timer_at = Some(d);
                self.sched.schedule(d.max(now), Event::AppTimer { app: a, gen: slot.timer_gen });
            }
        }
    }

    /// A packet endpoint `e` sent waits in its host's egress queue or is being serialised there
    /// (Linux tcp_rate_check_app_limited()'s `sk_wmem_alloc_get(sk) < SKB_TRUESIZE(1)` test,
    /// negated: an skb of the socket in the qdisc or NIC, not yet freed by TX completion). Asked
    /// only as a BBR application writes, so nothing is counted on the packet path: the packet
    /// in service is read, and the queue is scanned (exactly for DropTail, the hosts' usual
    /// queue; see [`QueueDisc::any_queued`]).
    fn queued_at_host(&self, e: usize) -> bool {
        let now = self.sched.now();
        let ep = &self.endpoints[e];
        let port = &self.ports[ep.egress.index()];
        // The other end of the pair is the packets' destination endpoint.
        #[allow(clippy::cast_possible_truncation)]
        let to = (e ^ 1) as u32;
        let flow = ep.flow;
        let packets = &self.packets;
        let mut mine = |id: PacketId| {
            let p = &packets[id];
            p.flow == flow && p.to_endpoint == to
        };
        let in_service = port.busy_until > now && port.wire.last().is_some_and(&mut mine);
        in_service || port.queue.any_queued(&mut |q| mine(q.id))
    }

    /// The endpoint index of one end of live flow `f`.
    fn end_of(&self, f: FlowId, side: Side) -> Option<usize> {
        let slot = self.flows[f.index()].slot;
        (slot != NO_SLOT).then(|| 2 * slot as usize + usize::from(side == Side::Server))
    }

    fn execute(&mut self, a: AppId, c: Command) {
        let now = self.sched.now();
        match c {
            Command::Open { flow, client, server, rcv_window, tag } => {
                let f = self.open_flow(flow, a, client, server, rcv_window, tag, now);
                let e = self.end_of(f, Side::Client).expect("just opened");
                self.endpoints[e].sock.connect(now);
                self.flush_endpoint(e);
            }
            Command::Connect { flow } => {
                if let Some(e) = self.end_of(flow, Side::Client) {
                    self.endpoints[e].sock.connect(now);
                    self.flush_endpoint(e);
                }
            }
            Command::Send { flow, side, bytes } => {
                if let Some(e) = self.end_of(flow, side) {
                    let queued = self.endpoints[e].sock.checks_app_limited() && self.queued_at_host(e);
                    self.endpoints[e].sock.send_from_host(now, bytes, queued);
                    self.flush_endpoint(e);
                }
            }
            Command::SendUnlimited { flow } => {
                if let Some(e) = self.end_of(flow, Side::Client) {
                    let queued = self.endpoints[e].sock.checks_app_limited() && self.queued_at_host(e);
                    self.endpoints[e].sock.send_unlimited_from_host(now, queued);
                    self.flush_endpoint(e);
                }
            }
            Command::StopWriting { flow } => {
                if let Some(e) = self.end_of(flow, Side::Client) {
                    self.endpoints[e].sock.stop_writing();
                    self.flush_endpoint(e);
                }
            }
            Command::Close { flow, side } => {
                if let Some(e) = self.end_of(flow, side) {
                    self.endpoints[e].sock.close();
                    self.flush_endpoint(e);
                }
            }
            Command::NotifyDelivered { flow, side, from } => {
                if let Some(e) = self.end_of(flow, side) {
                    self.endpoints[e].notify_from = from;
                }
            }
            Command::Completed { flow } => {
                let x = &mut self.flows[flow.index()].extra;
                if x.completed_at.is_none() {
                    x.completed_at = Opt::some(now);
                }
            }
            Command::OpenUdp { src, dst } => {
                let route = self.routes.get(src, dst).expect("routes are validated at build time");
                self.udp.push(UdpFlow {
                    app: a,
                    src,
                    dst,
                    egress: route,
                    start: now,
                    sent_packets: 0,
                    sent_bytes: 0,
                    received_packets: 0,
                    received_bytes: 0,
                    delay_sum_ns: 0,
                    drops: 0,
                    marks: 0,
                });
            }
            Command::UdpSend { flow, payload } => {
                let u = &mut self.udp[flow as usize];
                u.sent_packets += 1;
                u.sent_bytes += u64::from(payload);
                let tcp = TcpHeader { payload, ..TcpHeader::default() };
                let pkt = Packet {
                    uid: self.next_uid,
                    src: u.src,
                    dst: u.dst,
                    flow: FlowId(flow),
                    proto: Transport::Udp,
                    from_initiator: true,
                    // RFC 768 + RFC 791: 8 bytes of UDP header and 20 of IPv4 header.
                    size: payload + UDP_HEADER_BYTES,
                    ecn: Ecn::NotEct,
                    tcp,
                    sent_at: now,
                    to_endpoint: 0,
                };
                let egress = u.egress;
                self.next_uid += 1;
                self.cons.sent += 1;
                if let Some(tap) = &mut self.tap {
                    tap.push(pkt);
                }
                self.send_new(egress, pkt);
            }
        }
    }

    /// Create connection `f` of app `a` at run time in the slot [`Cx::open`] reserved for it,
    /// reusing a released endpoint pair if any.
    #[allow(clippy::too_many_arguments)]
    fn open_flow(
        &mut self,
        f: FlowId,
        a: AppId,
        client: NodeId,
        server: NodeId,
        rcv_window: Option<u64>,
        tag: u32,
        now: SimTime,
    ) -> FlowId {
        let mut cfg = self.apps[a.index()].tcp;
        if let Some(w) = rcv_window {
            cfg.rcv_window = w;
        }
        let flow = Flow {
            serial: self.next_serial,
            in_flight: 0,
            slot: NO_SLOT,
            free: false,
            app: a,
            tag,
            src: client,
            dst: server,
            start: now,
            cc: cfg.cc,
            extra: FlowExtra::default(),
            last: None,
        };
        self.next_serial += 1;
        if f.index() == self.flows.len() {
            self.flows.push(flow);
        } else {
            debug_assert!(self.flows[f.index()].free, "Cx::open reserved a free slot");
            self.flows[f.index()] = flow;
        }
        let server_cfg = TcpConfig { rcv_window: self.apps[a.index()].tcp.rcv_window, ..cfg };
        let slot = self.install(f, client, server, cfg, server_cfg);
        self.flows[f.index()].slot = slot;
        f
    }

    /// Put a new endpoint pair for flow `f` into a free slot (or a new one); returns the slot.
    pub(crate) fn install(
        &mut self,
        f: FlowId,
        client: NodeId,
        server: NodeId,
        client_cfg: TcpConfig,
        server_cfg: TcpConfig,
    ) -> u32 {
        let ecn = |p: Option<EcnPolicy>, c: &TcpConfig| TcpConfig { ecn: p.unwrap_or(c.ecn), ..*c };
        let (client_cfg, server_cfg) =
            (ecn(self.host_ecn[client.index()], &client_cfg), ecn(self.host_ecn[server.index()], &server_cfg));
        let (client_phase, server_phase) =
            if matches!(client_cfg.rto_estimator, RtoEstimator::Rfc6298 | RtoEstimator::Linux) {
                (SimDuration::ZERO, SimDuration::ZERO)
            } else {
                // ns-2 tcp.cc reset(): boot_time_ = Random::uniform(tcpTick_), one per agent.
                // The stream is named after the flow (so adding a flow shifts no other flow's phase);
                // application connections, which have no name, after their connection number.
                let flow = &self.flows[f.index()];
                let path = if self.is_spec_flow(flow.app) {
                    // A `[[flows]]` connection is its own app, named as the flow.
                    format!("flow/{}/tcp_tick", self.apps[flow.app.index()].name)
                } else {
                    format!("connection/{}/tcp_tick", flow.serial)
                };
                let mut rng = SimRng::for_component(self.seed, &path);
                let mut phase =
                    |c: &TcpConfig| SimDuration::from_nanos(rng.below(c.clock_granularity.as_nanos().max(1)));
                (phase(&client_cfg), phase(&server_cfg))
            };
        let mut initiator = TcpSocket::with_tick_phase(self.shared_config(client_cfg), client_phase);
        let mut responder = TcpSocket::with_tick_phase(self.shared_config(server_cfg), server_phase);
        if client_cfg.cc == CcKind::Bbr {
            // Linux bbr_reset_probe_bw_mode(): a random first gain phase, from the connection's own
            // stream (named as the tick phase's, so adding a flow shifts no other flow's draws).
            let flow = &self.flows[f.index()];
            let path = if self.is_spec_flow(flow.app) {
                format!("flow/{}/bbr", self.apps[flow.app.index()].name)
            } else {
                format!("connection/{}/bbr", flow.serial)
            };
            let mut rng = SimRng::for_component(self.seed, &path);
            let server_rng = SimRng::for_component(rng.next_u64(), "responder");
            initiator.set_cc_rng(rng);
            responder.set_cc_rng(server_rng);
        }
        responder.listen();
        if !client_cfg.handshake {
            // No SYN exchange (ns-2 one-way TCP, syn_ false): what the handshake would have negotiated.
            // RFC 3168 §6.1.1: ECN if the initiator requests it and the responder does not refuse.
            let ecn_ok = client_cfg.ecn == EcnPolicy::Request && server_cfg.ecn != EcnPolicy::Off;
            // RFC 2018 §2: SACK if both ends offer it.
            let sack_ok = client_cfg.offers_sack() && server_cfg.offers_sack();
            initiator.assume_negotiated(ecn_ok, sack_ok, server_cfg.rcv_window);
            responder.assume_negotiated(ecn_ok, sack_ok, client_cfg.rcv_window);
        }
        let mk = |sock, node: NodeId, peer: NodeId, c: &TcpConfig| {
            let header_bytes = u8::try_from(c.header_bytes).expect("tcp.header_bytes is validated to at most 120");
            Endpoint {
                sock,
                flow: f,
                live: true,
                node,
                peer,
                egress: self.routes.get(node, peer).expect("routes are validated at build time"),
                header_bytes,
                data_header_bytes: if c.headers_on_data { header_bytes } else { 0 },
                timer_gen: 0,
                in_network: 0,
                owd_sum_ns: 0,
                owd_count: 0,
                drops: 0,
                timer_at: Opt::NONE,
                deadline: Opt::NONE,
                notify_from: 0,
            }
        };
        let a = mk(initiator, client, server, &client_cfg);
        let b = mk(responder, server, client, &server_cfg);
        if let Some(slot) = self.free_slots.pop() {
            let i = 2 * slot as usize;
            // Keep the generations moving so that no old event can look current.
            let (ga, gb) = (self.endpoints[i].timer_gen, self.endpoints[i + 1].timer_gen);
            self.endpoints[i] = Endpoint { timer_gen: ga.wrapping_add(1), ..a };
            self.endpoints[i + 1] = Endpoint { timer_gen: gb.wrapping_add(1), ..b };
            slot
        } else {
            self.endpoints.push(a);
            self.endpoints.push(b);
            // Endpoint indices fit in u32 (packets and timer events carry them as such).
            assert!(u32::try_from(self.endpoints.len()).is_ok(), "endpoints fit in u32");
            u32::try_from(self.endpoints.len() / 2 - 1).expect("slots fit in u32")
        }
    }

    /// The shared copy of `cfg`: endpoints with the same parameters share one (a few per
    /// application: its settings, with each host's ECN policy and each connection's
    /// receive window), so that parameters read on every segment stay in cache.
    fn shared_config(&mut self, cfg: TcpConfig) -> Arc<TcpConfig> {
        if let Some(c) = self.tcp_configs.iter().find(|c| ***c == cfg) {
            return Arc::clone(c);
        }
        let c = Arc::new(cfg);
        // A bounded list keeps the search short when connections vary their receive windows.
        if self.tcp_configs.len() < SHARED_CONFIGS {
            self.tcp_configs.push(Arc::clone(&c));
        }
        c
    }

    /// An endpoint's timer event (generation `gen`); its entry stays at the top of the timers'
    /// heap, spent, while it runs, so that the timer it arms (a paced sender's next departure)
    /// takes its place (sched, "Replacing the top").
    #[inline(always)]
    fn on_endpoint_timer<const TRACE: bool>(&mut self, endpoint: u32, gen: u32) {
        let e = endpoint as usize;
        let ep = &mut self.endpoints[e];
        if !ep.live || ep.timer_gen != gen {
            return; // stale: cancelled lazily, or the connection was released
        }
        ep.timer_at = Opt::NONE;
        let now = self.sched.now();
        if ep.deadline.get().is_none_or(|d| d > now) {
            // Early: the socket's deadline moved later since this event was scheduled.
            // The socket has not changed since it was last served (when nothing was
            // left to send), so serving it now would only reschedule: do just that,
            // without touching the socket.
            self.schedule_endpoint_timer(e);
            return;
        }
        ep.sock.on_timer(now);
        self.service_endpoint::<TRACE>(e);
    }

    /// After any input to endpoint `e`: let the application react, send what
    /// the socket has to send, keep its timer event current, and release the
    /// connection's endpoints once both ends are done.
    fn service_endpoint<const TRACE: bool>(&mut self, e: usize) {
        let ep = &mut self.endpoints[e];
        debug_assert!(ep.live, "only a live endpoint is served");
        let flow = ep.flow;
        if ep.sock.has_events() {
            let ev = ep.sock.take_events();
            // A delivery alone reaches the app only from the byte count it asked for.
            if ev != SocketEvents::RECEIVED || ep.sock.counters.bytes_delivered >= ep.notify_from {
                self.notify_app(e, flow, ev);
                // The app may have closed or aborted the connection (releasing the pair).
                if !(self.endpoints[e].live && self.endpoints[e].flow == flow) {
                    return;
                }
            }
        }
        if self.flush_endpoint_inline::<TRACE>(e) {
            self.maybe_release(flow, e);
        }
    }

    /// Hand endpoint `e`'s socket events `ev` to its connection's app.
    #[inline(never)]
    fn notify_app(&mut self, e: usize, flow: FlowId, ev: SocketEvents) {
        let now = self.sched.now();
        let is_initiator = e % 2 == 0;
        let x = &mut self.flows[flow.index()].extra;
        if is_initiator && ev.connected {
            x.connected_at = Opt::some(now);
        }
        if is_initiator && ev.failed {
            x.failed = true;
        }
        let f = &self.flows[flow.index()];
        let conn = ConnEvent {
            flow,
            tag: f.tag,
            side: if is_initiator { Side::Client } else { Side::Server },
            ev,
            delivered: self.endpoints[e].sock.counters.bytes_delivered,
        };
        self.call_app(f.app, Call::Conn(conn));
    }

    /// Send what endpoint `e` may send now and keep its timer event current.
    #[inline(never)]
    fn flush_endpoint(&mut self, e: usize) {
        self.flush_endpoint_inline::<true>(e);
    }

    /// [`Simulation::flush_endpoint`], inlined into [`Simulation::service_endpoint`] (once per
    /// hop: one call's prologue and epilogue fewer). Returns false if the endpoint's state
    /// rules out its release (not CLOSED, TIME-WAIT or LISTEN), read while it is at hand.
    #[inline(always)]
    fn flush_endpoint_inline<const TRACE: bool>(&mut self, e: usize) -> bool {
        let now = self.sched.now();
        let is_initiator = e % 2 == 0;
        loop {
            // The socket writes the segment's header straight into the packet's pool slot.
            let ep = &mut self.endpoints[e];
            let pkt = self.packets.next_slot();
            let Some(tx) = ep.sock.poll_transmit_into(now, &mut pkt.tcp) else { break };
            let payload = pkt.tcp.payload;
            pkt.uid = self.next_uid;
            pkt.src = ep.node;
            pkt.dst = ep.peer;
            pkt.flow = ep.flow;
            pkt.proto = Transport::Tcp;
            pkt.from_initiator = is_initiator;
            // The other end of the pair; endpoint indices fit in u32 (`install` checks).
            #[allow(clippy::cast_possible_truncation)]
            let to = (e ^ 1) as u32;
            pkt.to_endpoint = to;
            pkt.size = payload
                + u32::from(if payload > 0 { ep.data_header_bytes } else { ep.header_bytes })
                + pkt.tcp.options_len();
            pkt.ecn = tx.ecn;
            pkt.sent_at = now;
            let egress = ep.egress;
            ep.in_network = ep.in_network.wrapping_add(1);
            self.next_uid += 1;
            self.cons.sent += 1;
            let id = self.packets.commit();
            if TRACE {
                if let Some(tap) = &mut self.tap {
                    tap.push(self.packets[id]);
                }
            }
            self.send_on::<TRACE>(egress, id);
            if tx.last {
                break;
            }
        }
        let ep = &mut self.endpoints[e];
        ep.deadline = ep.sock.next_deadline_opt();
        // `schedule_endpoint_timer`'s test, on the endpoint in hand.
        let reschedule = ep.deadline.is_before(ep.timer_at);
        // CLOSED, TIME-WAIT or LISTEN: an end `maybe_release` may find done.
        let may_be_done = matches!(ep.sock.state(), TcpState::Closed | TcpState::TimeWait | TcpState::Listen);
        if reschedule {
            self.reschedule_endpoint_timer(e);
        }
        may_be_done
    }

    /// Keep endpoint `e`'s timer event current with its socket's deadline, as of the
    /// last time the socket was served.
    #[inline]
    fn schedule_endpoint_timer(&mut self, e: usize) {
        let ep = &self.endpoints[e];
        // Reschedule only if the deadline moved earlier; a later deadline is caught when
        // the pending (early) event fires and finds nothing due. A deadline past the end of
        // the run is not scheduled at all. (None is the largest word: an absent deadline is
        // never earlier, and any deadline is earlier than an absent event.)
        if !ep.deadline.is_before(ep.timer_at) {
            return;
        }
        self.reschedule_endpoint_timer(e);
    }

    /// [`Simulation::schedule_endpoint_timer`]'s rescheduling: the deadline is earlier than
    /// the pending event (or there is none).
    #[inline(never)]
    fn reschedule_endpoint_timer(&mut self, e: usize) {
        let now = self.sched.now();
        let ep = &mut self.endpoints[e];
        if let Some(d) = ep.deadline.get().filter(|&d| d <= self.end) {
            debug_assert!(ep.timer_at.get().is_none_or(|t| t > d));
            // The pending event, if any, is displaced: stale from here on.
            let displaced = ep.timer_at.is_some();
            ep.timer_gen = ep.timer_gen.wrapping_add(1);
            ep.timer_at = Opt::some(d);
            let endpoint = u32::try_from(e).expect("endpoints fit in u32");
            self.sched.schedule(d.max(now), Event::Timer { endpoint, gen: ep.timer_gen });
            if displaced {
                self.stale_timers += 1;
                self.maybe_drop_stale_timers();
            }
        }
    }

    /// Drop the stale events from the timers' heap once they may be half of it (and at least
    /// [`STALE_TIMERS_MIN`]): a displaced event would otherwise wait there until its time
    /// (seconds, for a retransmission timer's), deepening every pop (sched, "Stale timer
    /// events"). Each pass is O(heap) and comes after as many displacements as it removes.
    #[inline]
    fn maybe_drop_stale_timers(&mut self) {
        let stale = self.stale_timers as usize;
        if stale >= STALE_TIMERS_MIN && 2 * stale >= self.sched.pending_timers() {
            self.drop_stale_timers();
        }
    }

    /// Remove every stale endpoint and application timer event from the timers' heap: those
    /// [`Simulation::dispatch`] would skip when popped, by the same tests (a generation only
    /// moves forward and a released endpoint's slot comes back with a new one, so an event
    /// stale now is stale when its time comes). The events kept pop in the same order.
    #[cold]
    #[inline(never)]
    fn drop_stale_timers(&mut self) {
        let (endpoints, apps) = (&self.endpoints, &self.apps);
        self.sched.retain_timers(&mut |ev: &Event| match *ev {
            Event::Timer { endpoint, gen } => {
                let ep = &endpoints[endpoint as usize];
                ep.live && ep.timer_gen == gen
            }
            Event::AppTimer { app, gen } => apps[app.index()].timer_gen == gen,
            _ => true,
        });
        self.stale_timers = 0;
    }

    /// Release flow `f`'s endpoint pair, after input to its endpoint `e`, if both
    /// ends are done: each end CLOSED or TIME-WAIT (the responder may also still
    /// be LISTENing when the initiator gave up). Its counters move to the flow.
    // The test inlined into the endpoint's service (once per hop), the release out of line.
    #[inline(always)]
    fn maybe_release(&mut self, f: FlowId, e: usize) {
        debug_assert_eq!(self.flows[f.index()].slot as usize, e / 2, "endpoint {e} serves flow {f:?}");
        let done = |j: usize| {
            let state = self.endpoints[j].sock.state();
            if j % 2 == 0 {
                // The initiator is CLOSED only after LAST-ACK (the server closed first) or when it gave up.
                matches!(state, TcpState::TimeWait | TcpState::Closed)
            } else {
                matches!(state, TcpState::Closed | TcpState::TimeWait)
                    || (state == TcpState::Listen && self.flows[f.index()].extra.failed)
            }
        };
        // End `e` first: while it is not done the other end, cold with thousands of
        // connections, is not read.
        if !(done(e) && done(e ^ 1)) {
            return;
        }
        self.release(f, e);
    }

    /// Release flow `f`'s endpoint pair (both ends are done; `e` is one of them).
    #[inline(never)]
    fn release(&mut self, f: FlowId, e: usize) {
        let i = e & !1;
        let (a, b) = (&self.endpoints[i].sock, &self.endpoints[i + 1].sock);
        self.flows[f.index()].last = Some(Box::new(FlowFinal {
            counters: [a.counters, b.counters],
            cwnd: a.cwnd(),
            srtt: a.rtt().srtt(),
            state: a.state(),
            ecn: a.ecn_negotiated(),
            sack: a.sack_negotiated(),
            accecn: a.accecn_counts(),
            classic_ecn: a.prague().map(crate::tcp::cc::Prague::classic_ecn),
        }));
        // A pending timer event of either end is stale from here on.
        self.stale_timers += u32::from(self.endpoints[i].timer_at.is_some());
        self.stale_timers += u32::from(self.endpoints[i + 1].timer_at.is_some());
        self.endpoints[i].live = false;
        self.endpoints[i + 1].live = false;
        let flow = &mut self.flows[f.index()];
        flow.fold_endpoints(&self.endpoints[i], &self.endpoints[i + 1]);
        flow.slot = NO_SLOT;
        self.free_slots.push(u32::try_from(e / 2).expect("slots fit in u32"));
        self.maybe_free_flow(f);
    }

    /// Free workload connection `f`'s slot once its endpoints are released and none of its
    /// packets is left in the network: its counters go to its app's totals (and, with
    /// `connection_rows`, its row to the ended rows), and the slot waits for reuse.
    fn maybe_free_flow(&mut self, f: FlowId) {
        let i = f.index();
        let flow = &self.flows[i];
        if i < self.n_static || flow.free || flow.in_flight > 0 || flow.slot != NO_SLOT {
            return;
        }
        flow.add_to(&mut self.app_totals[flow.app.index()], self.warmup);
        let ended = std::mem::replace(&mut self.flows[i], Flow::vacant());
        if self.connection_rows {
            let warm = match &self.warm {
                Some(w) => w.flow(i, ended.serial).unwrap_or(crate::stats::WarmBase::Zero),
                None if self.warmup > SimTime::ZERO => crate::stats::WarmBase::EndedBefore,
                None => crate::stats::WarmBase::Zero,
            };
            self.ended.push(EndedFlow { flow: ended, warm });
        }
        self.free_flows.push(u32::try_from(i).expect("flow ids fit in u32"));
    }
}

/// Move endpoint `ep`'s one-way delays to its connection's row in `flows` (its count is full).
#[cold]
#[inline(never)]
fn spill_owd(ep: &mut Endpoint, flows: &mut [Flow]) {
    let x = &mut flows[ep.flow.index()].extra;
    x.owd_sum_ns += std::mem::take(&mut ep.owd_sum_ns);
    x.owd_count += u64::from(std::mem::take(&mut ep.owd_count));
}

/// Move endpoint `ep`'s drops to its connection's row in `flows` (its count is full).
#[cold]
#[inline(never)]
fn spill_drops(ep: &mut Endpoint, flows: &mut [Flow]) {
    flows[ep.flow.index()].extra.drops += u64::from(std::mem::take(&mut ep.drops));
}

/// Record `event` of `pkt` on port `p` if a trace is on; the trace names a connection by
/// its app and serial. Inlined: with no trace, one test of the option; with `TRACE` false
/// (a run with neither trace nor tap, see [`Simulation::run_events`]), nothing.
#[inline(always)]
fn trace<const TRACE: bool>(
    tracer: &mut Option<Tracer>,
    flows: &[Flow],
    now: SimTime,
    event: TraceEvent,
    p: PortId,
    pkt: &Packet,
) {
    if !TRACE {
        return;
    }
    if let Some(t) = tracer {
        t.record(now, event, p, pkt, |f| (flows[f].app.index(), flows[f].serial));
    }
}

/// Start serialising packet `id` of `size` bytes, just taken from port `p`'s queue (or passed
/// straight through it), on the idle transmitter; schedule its wire arrival if the wire was
/// empty. A function of the port, the pool and the scheduler, so that its callers, which hold
/// the port, need not look it up again.
// Inlined into both callers (once per hop).
#[inline(always)]
fn start_tx(
    port: &mut Port,
    pool: &mut PacketPool,
    sched: &mut Scheduler,
    p: PortId,
    id: PacketId,
    size: u32,
    now: SimTime,
) {
    if let Some(arrival) = port.start_tx(pool, id, size, now) {
        sched.schedule(arrival, Event::WireArrival(p));
    }
}

/// Events one instant may hold before the run is stopped as making no
/// progress: a large constant, and many per component.
pub(crate) fn instant_event_budget(components: usize) -> u64 {
    crate::app::TIMER_POPS_PER_INSTANT + 64 * components as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::dist::Dist;
    use crate::app::udp::UdpSources;
    use crate::rng::SimRng;
    use crate::spec::ScenarioSpec;
    use crate::time::BitRate;

    fn onoff_sim() -> Simulation {
        let spec = ScenarioSpec::from_toml_str(
            r#"
simulation = { duration = "10s" }
nodes = [ { name = "a", kind = "host" }, { name = "b", kind = "host" } ]
links = [ { a = "a", b = "b", rate = "10Mbps", delay = "1ms" } ]
flows = [ { src = "a", dst = "b", app = { type = "bulk", bytes = 1000 } } ]
[[apps]]
clients = ["a"]
servers = ["b"]
model = { type = "onoff", rate = "1Mbps" }
"#,
        )
        .unwrap();
        Simulation::new(&spec, Some(1)).unwrap()
    }

    #[test]
    fn an_app_stuck_at_one_instant_stops_the_run_with_an_error_naming_it() {
        // Validation refuses zero-length periods; put such a source in behind its back.
        let mut sim = onoff_sim();
        let pairs = [(NodeId(0), NodeId(1))];
        let zero = || Dist::Constant(0.0);
        let source = UdpSources::new(
            &pairs,
            SimTime::from_millis(5),
            0,
            BitRate::from_bps(1_000_000),
            1000,
            Some((zero(), zero())),
            SimRng::for_component(1, "test"),
        );
        sim.apps[1].app = AnyApp::Udp(source);
        let e = sim.run().unwrap_err();
        assert!(matches!(e, SimError::Runtime { .. }), "{e}");
        assert_eq!(e.path(), "apps[0]");
        assert!(e.to_string().contains("makes no progress in simulated time"), "{e}");
        assert!(e.to_string().contains("t = 0.005000000s"), "{e}");
        assert_eq!(sim.now(), SimTime::from_millis(5));
        assert_eq!(sim.fault(), Some(&e));
        assert!(sim.conservation().holds());
        // The flow before it completed; the results so far are readable.
        let r = sim.results();
        assert!(r.meta.iter().any(|(k, v)| k == "stopped" && v.starts_with("apps[0]:")));
    }

    #[test]
    fn too_many_events_at_one_instant_stop_the_run() {
        let mut sim = onoff_sim();
        for _ in 0..1_100_000 {
            sim.sched.schedule(SimTime::from_millis(1), Event::AppTimer { app: AppId(1), gen: u32::MAX });
        }
        let e = sim.run().unwrap_err();
        assert!(matches!(e, SimError::Runtime { .. }), "{e}");
        assert_eq!(e.path(), "apps[0]");
        assert!(e.to_string().contains("application events"), "{e}");
    }

    #[test]
    fn what_the_endpoints_count_for_the_row_is_reported_and_folded_exactly() {
        // A live connection's one-way delays and packets in flight sit on its endpoints:
        // the row's facts include them while live, a full count spills to the row unchanged,
        // and at the release the row holds them all (nothing left in flight at the end).
        let text = r#"
simulation = { duration = "3s" }
nodes = [ { name = "a", kind = "host" }, { name = "b", kind = "host" } ]
links = [ { a = "a", b = "b", rate = "10Mbps", delay = "10ms" } ]
flows = [ { src = "a", dst = "b", app = { type = "bulk", bytes = 200000 } } ]
"#;
        let spec = ScenarioSpec::from_toml_str(text).unwrap();
        let mut sim = Simulation::new(&spec, Some(1)).unwrap();
        sim.run_until(SimTime::from_millis(60)).unwrap();
        let slot = sim.flows[0].slot as usize;
        assert_ne!(slot, NO_SLOT as usize, "the transfer is under way");
        let x = sim.flow_extra(0);
        assert!(x.owd_count > 0 && sim.flows[0].extra.owd_count == 0, "counted on the endpoints while live");
        let (a, b) = (&sim.endpoints[2 * slot], &sim.endpoints[2 * slot + 1]);
        let in_network = a.in_network.wrapping_add(b.in_network);
        assert_eq!(u64::from(in_network), sim.conservation().in_flight, "the endpoints count the packets in flight");
        spill_owd(&mut sim.endpoints[2 * slot + 1], &mut sim.flows);
        assert_eq!(sim.flow_extra(0), x, "a spill moves the delays to the row unchanged");
        assert!(sim.flows[0].extra.owd_count > 0 && sim.endpoints[2 * slot + 1].owd_count == 0);
        sim.run().unwrap();
        let f = &sim.flows[0];
        assert_eq!((f.slot, f.in_flight), (NO_SLOT, 0), "released, nothing left in flight");
        assert_eq!(sim.flow_extra(0), f.extra, "after the release the row holds everything");
        let mut plain = Simulation::new(&spec, Some(1)).unwrap();
        plain.run().unwrap();
        assert_eq!(sim.results().digest(), plain.results().digest());
    }

    #[test]
    fn drops_counted_on_the_sending_endpoint_are_reported_spilled_and_folded_exactly() {
        // A drop of a live connection's packet is counted on the endpoint that sent it (its
        // line is in cache when its own access queue drops): the row's facts include it while
        // live, a full count spills to the row unchanged, the endpoints' in-network counts
        // are the packets in flight, and at the release the row holds every drop.
        let text = r#"
simulation = { duration = "20s" }
nodes = [ { name = "a", kind = "host" }, { name = "r", kind = "router" }, { name = "b", kind = "host" } ]
links = [
  { a = "a", b = "r", rate = "1Mbps", delay = "10ms", queue = { type = "droptail", limit_packets = 4 } },
  { a = "r", b = "b", rate = "10Mbps", delay = "10ms" },
]
flows = [ { src = "a", dst = "b", app = { type = "bulk", bytes = 400000 } } ]
"#;
        let spec = ScenarioSpec::from_toml_str(text).unwrap();
        let mut sim = Simulation::new(&spec, Some(1)).unwrap();
        sim.run_until(SimTime::from_millis(1500)).unwrap();
        let slot = sim.flows[0].slot as usize;
        assert_ne!(slot, NO_SLOT as usize, "the transfer is under way");
        let x = sim.flow_extra(0);
        assert!(x.drops > 0, "the 4-packet access queue drops");
        assert_eq!((sim.flows[0].extra.drops, sim.flows[0].in_flight), (0, 0), "counted on the endpoints while live");
        assert_eq!(u64::from(sim.endpoints[2 * slot].drops), x.drops, "the sender counts its packets' drops");
        let (a, b) = (&sim.endpoints[2 * slot], &sim.endpoints[2 * slot + 1]);
        let in_network = a.in_network.wrapping_add(b.in_network);
        assert_eq!(u64::from(in_network), sim.conservation().in_flight, "the endpoints count the packets in flight");
        spill_drops(&mut sim.endpoints[2 * slot], &mut sim.flows);
        assert_eq!(sim.flow_extra(0), x, "a spill moves the drops to the row unchanged");
        assert!(sim.flows[0].extra.drops > 0 && sim.endpoints[2 * slot].drops == 0);
        sim.run().unwrap();
        assert!(sim.conservation().holds());
        let f = &sim.flows[0];
        assert_eq!((f.slot, f.in_flight), (NO_SLOT, 0), "released, nothing left in flight");
        assert_eq!(sim.flow_extra(0), f.extra, "after the release the row holds everything");
        assert_eq!(f.extra.drops, sim.conservation().dropped, "every drop was this connection's");
        let mut plain = Simulation::new(&spec, Some(1)).unwrap();
        plain.run().unwrap();
        assert_eq!(sim.results().digest(), plain.results().digest());
    }

    #[test]
    fn a_wire_threads_hundreds_of_packets_through_the_pool_and_the_run_is_unchanged() {
        // Hundreds of packets in flight on a long fat link, then nothing: the wire holds
        // them through their pool slots, in order, and the give-back pass changes no result.
        let text = r#"
simulation = { duration = "5s" }
tcp = { rcv_window = "16MiB" }
nodes = [ { name = "a", kind = "host" }, { name = "b", kind = "host" } ]
links = [ { a = "a", b = "b", rate = "1Gbps", delay = "100ms", queue = { type = "droptail", limit_packets = 10000 } } ]
flows = [ { src = "a", dst = "b", app = { type = "bulk", bytes = 3000000 } } ]
"#;
        let spec = ScenarioSpec::from_toml_str(text).unwrap();
        let mut sim = Simulation::new(&spec, Some(1)).unwrap();
        sim.run_until(SimTime::from_millis(1500)).unwrap();
        let widest = sim.ports.iter().map(|p| p.wire.len()).max().unwrap() as usize;
        assert!(widest >= 64, "the wire held {widest} packets");
        assert_eq!(sim.packets.len() as u64, sim.conservation().in_flight);
        sim.give_back_memory();
        sim.run().unwrap();
        sim.give_back_memory();
        assert!(sim.ports.iter().all(|p| p.wire.len() == 0));
        // The packet pool kept a slot per packet of the largest flight, and holds what is still queued.
        let in_flight = sim.conservation().in_flight;
        assert_eq!(sim.packets.len() as u64, in_flight);
        assert!(sim.packets.slots() >= widest, "pool {} slots, wire {widest}", sim.packets.slots());
        let mut plain = Simulation::new(&spec, Some(1)).unwrap();
        plain.run().unwrap();
        assert_eq!(sim.results().digest(), plain.results().digest());
    }

    /// Paced senders (BBR) displace their pending retransmission-timer events with departures
    /// over and over; the stale events are dropped from the timers' heap once they may be half
    /// of it, so that it holds at most about twice the live timer events (plus
    /// `STALE_TIMERS_MIN`), and the results are those of a run in one go.
    #[test]
    fn stale_timer_events_are_dropped_from_the_timers_heap() {
        let flows: Vec<String> = (0..30).map(|_| r#"{ src = "a", dst = "b" }"#.to_owned()).collect();
        let text = format!(
            r#"
simulation = {{ duration = "10s" }}
tcp = {{ cc = "bbr", rcv_window = "16MiB" }}
nodes = [ {{ name = "a", kind = "host" }}, {{ name = "b", kind = "host" }} ]
links = [ {{ a = "a", b = "b", rate = "10Mbps", delay = "10ms", queue = {{ type = "droptail", limit_packets = 30 }} }} ]
flows = [ {} ]
"#,
            flows.join(", ")
        );
        let spec = ScenarioSpec::from_toml_str(&text).unwrap();
        let mut sim = Simulation::new(&spec, Some(1)).unwrap();
        let (mut purges, mut counted) = (0, 0);
        let mut t = SimTime::ZERO;
        while t < SimTime::from_secs(10) {
            t += SimDuration::from_millis(50);
            let before = sim.stale_timers;
            sim.run_until(t).unwrap();
            purges += usize::from(sim.stale_timers < before);
            counted = counted.max(sim.stale_timers);
            // One live event per endpoint with a pending timer, and the run's own (samples, ...).
            let live = sim.endpoints.iter().filter(|ep| ep.live && ep.timer_at.is_some()).count() + 2;
            let timers = sim.sched.pending_by_heap().1;
            assert!(
                timers <= (2 * live).max(live + STALE_TIMERS_MIN) + live / 2,
                "at {t:?}: {timers} timer events, {live} live"
            );
        }
        assert!(purges >= 3 && counted > 0, "{purges} passes, at most {counted} stale counted");
        let mut plain = Simulation::new(&spec, Some(1)).unwrap();
        plain.run().unwrap();
        assert_eq!(sim.results().digest(), plain.results().digest());
    }
}
