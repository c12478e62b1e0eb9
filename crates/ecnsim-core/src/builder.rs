//! Scenario -> simulation: validates the spec, resolves defaults, wires
//! ports, computes static routes and derives every random stream.

use std::collections::HashMap;
use std::collections::VecDeque;

use crate::error::SimError;
use crate::ids::{FlowId, NodeId, PortId};
use crate::link::Port;
use crate::profile::Profile;
use crate::qdisc::resolve::{resolve, LinkInfo};
use crate::qdisc::{droptail::Limit, script, AnyQdisc, DropTail, Queue};
use crate::rng::SimRng;
use crate::sched::{Event, Scheduler};
use crate::sim::{endpoint_index, Conservation, Endpoint, Flow, Node, PerfCounters, Simulation, NO_ROUTE};
use crate::spec::{
    AppSpec, ByteSize, InitialWindowSpec, IwFormula, NodeKind, QueueSpec, ScenarioSpec, ScriptAction, ScriptMatch,
    TcpOverrides, TimeValue,
};
use crate::stats::{FlowExtra, Series};
use crate::tcp::{InitialWindow, TcpConfig, TcpSocket};
use crate::time::{BitRate, SimDuration, SimTime};

/// Default seed when neither the scenario nor the caller gives one.
const DEFAULT_SEED: u64 = 1;

/// A validated, non-negative time value as a duration.
fn dur(v: TimeValue) -> SimDuration {
    SimDuration::from_nanos(u64::try_from(v.0).expect("validated: non-negative and bounded"))
}

fn to_u64(v: i128) -> u64 {
    u64::try_from(v).expect("validated: non-negative and bounded")
}

pub(crate) fn build(spec: &ScenarioSpec, seed: Option<u64>) -> Result<Simulation, SimError> {
    spec.validate()?;
    let profile = spec.profile();
    let seed = seed.or(spec.simulation.seed).unwrap_or(DEFAULT_SEED);
    let end = SimTime::ZERO + dur(spec.simulation.duration);
    let warmup = SimTime::ZERO + spec.simulation.warmup.map_or(SimDuration::ZERO, dur);

    // Nodes.
    let nodes: Vec<Node> =
        spec.nodes.iter().map(|n| Node { name: n.name.clone(), is_host: n.kind == NodeKind::Host }).collect();
    let id: HashMap<&str, NodeId> =
        spec.nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), NodeId::from_index(i))).collect();

    // Flow names (scripted queues refer to flows by name).
    let flow_ids: HashMap<String, FlowId> = spec
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.clone().unwrap_or_else(|| format!("flow{i}")), FlowId::from_index(i)))
        .collect();

    // Ports: link i gives port 2i (a -> b) and 2i + 1 (b -> a).
    let mut resolved = spec.clone();
    resolved.simulation.profile = Some(profile.name().to_owned());
    resolved.simulation.seed = Some(seed);
    let mut ports = Vec::with_capacity(2 * spec.links.len());
    for (i, l) in spec.links.iter().enumerate() {
        let rate = BitRate::from_bps(to_u64(l.rate.0));
        let delay = dur(l.delay);
        let shared = l.queue.clone().unwrap_or_else(|| profile.default_queue());
        let q_ab = l.queue_ab.clone().unwrap_or_else(|| shared.clone());
        let q_ba = l.queue_ba.clone().unwrap_or_else(|| shared.clone());
        let mut written = [q_ab.clone(), q_ba.clone()];
        for (dir, (from, to, q)) in [(&l.a, &l.b, &q_ab), (&l.b, &l.a, &q_ba)].into_iter().enumerate() {
            let name = format!("{from}->{to}");
            // AQM tables are filled from the profile and their rules evaluated for this link;
            // the run records the resolved table.
            let (qdisc, resolved_queue) = make_qdisc(q, &flow_ids, profile, LinkInfo { rate, delay });
            written[dir] = resolved_queue;
            // RNG stream named by the queue's place, not its index: adding a link
            // elsewhere never changes this queue's stream.
            let rng = SimRng::for_component(seed, &format!("queue/{name}"));
            ports.push(Port {
                from: id[from.as_str()],
                to: id[to.as_str()],
                rate,
                delay,
                queue: Queue::new(qdisc, rate, rng),
                busy_until: SimTime::ZERO,
                tx_event_pending: false,
                wire: VecDeque::new(),
                name,
                link_index: i,
                busy_ns: 0,
            });
        }
        let rl = &mut resolved.links[i];
        let [w_ab, w_ba] = written;
        rl.queue_ab = Some(w_ab);
        rl.queue_ba = Some(w_ba);
        rl.queue = None;
    }

    let routes = compute_routes(&nodes, &ports);

    // Flows.
    let mut sched = Scheduler::new();
    let mut flows = Vec::with_capacity(spec.flows.len());
    let mut endpoints = Vec::with_capacity(2 * spec.flows.len());
    for (i, f) in spec.flows.iter().enumerate() {
        let cfg = spec.resolved_tcp(i);
        let src = id[f.src.as_str()];
        let dst = id[f.dst.as_str()];
        let route = |a: NodeId, b: NodeId| routes[a.index() * nodes.len() + b.index()];
        for (a, b, field) in [(src, dst, "dst"), (dst, src, "src")] {
            if route(a, b) == NO_ROUTE {
                return Err(SimError::topology(
                    format!("flows[{i}].{field}"),
                    format!(
                        "no route from \"{}\" to \"{}\" (packets may cross routers only, not hosts)",
                        nodes[a.index()].name,
                        nodes[b.index()].name
                    ),
                ));
            }
        }
        let name = f.name.clone().unwrap_or_else(|| format!("flow{i}"));
        let app_bytes = match f.app {
            AppSpec::Bulk { bytes } => bytes.map(|b| to_u64(b.0)),
        };
        let mut start = SimTime::ZERO + f.start.map_or(SimDuration::ZERO, dur);
        if let Some(j) = f.start_jitter.map(dur).filter(|j| *j > SimDuration::ZERO) {
            let mut rng = SimRng::for_component(seed, &format!("flow/{name}/start"));
            start += SimDuration::from_nanos(rng.below(j.as_nanos()));
        }
        flows.push(Flow { name: name.clone(), src, dst, start, app_bytes, cfg, extra: FlowExtra::default() });
        // A host's own ECN policy overrides the flow's for the end on that host.
        let host_ecn = |n: NodeId| spec.nodes[n.index()].ecn;
        let initiator = TcpSocket::new(TcpConfig { ecn: host_ecn(src).unwrap_or(cfg.ecn), ..cfg });
        let mut responder = TcpSocket::new(TcpConfig { ecn: host_ecn(dst).unwrap_or(cfg.ecn), ..cfg });
        responder.listen();
        for (sock, node, peer) in [(initiator, src, dst), (responder, dst, src)] {
            endpoints.push(Endpoint {
                sock,
                node,
                peer,
                egress: PortId(route(node, peer)),
                timer_gen: 0,
                timer_at: None,
            });
        }
        debug_assert_eq!(endpoints.len(), endpoint_index(FlowId::from_index(i), false) + 1);
        let rf = &mut resolved.flows[i];
        rf.name = Some(name);
        rf.tcp = overrides_from(&cfg);
        rf.start = Some(TimeValue(i128::from(start.as_nanos())));
        rf.start_jitter = None;
        if start < end {
            sched.schedule(start, Event::AppStart(FlowId::from_index(i)));
        }
    }
    resolved.tcp = TcpOverrides::default();

    if warmup > SimTime::ZERO && warmup < end {
        sched.schedule(warmup, Event::WarmupEnd);
    }
    let sample_interval = spec.simulation.sample_interval.map(dur);
    if sample_interval.is_some() {
        sched.schedule(SimTime::ZERO, Event::Sample);
    }

    Ok(Simulation {
        sched,
        end,
        warmup,
        seed,
        nodes,
        ports,
        routes,
        flows,
        endpoints,
        next_uid: 0,
        cons: Conservation::default(),
        perf: PerfCounters::default(),
        sample_interval,
        series: Series::default(),
        warm: None,
        resolved_spec: resolved.to_json(),
        profile: profile.name(),
        tap: None,
    })
}

/// The discipline for queue table `q` on a link described by `link`, and the
/// table as the run records it (AQM tables filled from `profile`, rules evaluated).
fn make_qdisc(
    q: &QueueSpec,
    flow_ids: &HashMap<String, FlowId>,
    profile: Profile,
    link: LinkInfo,
) -> (AnyQdisc, QueueSpec) {
    if let Some((cfg, resolved)) = resolve(q, profile, link).expect("validated: queue rules resolve") {
        return (cfg.build(), resolved);
    }
    let qdisc = match q {
        QueueSpec::Script { limit_packets, rules } => {
            let rules = rules
                .iter()
                .map(|r| {
                    let action = match r.action {
                        ScriptAction::Drop => script::Action::Drop,
                        ScriptAction::Mark => script::Action::Mark,
                    };
                    let kind = match r.packets {
                        ScriptMatch::Data => script::Match::Data,
                        ScriptMatch::Syn => script::Match::Syn,
                        ScriptMatch::Synack => script::Match::SynAck,
                        ScriptMatch::Ack => script::Match::PureAck,
                        ScriptMatch::Any => script::Match::Any,
                    };
                    let flow = r.flow.as_ref().map(|n| flow_ids[n]);
                    let nth = r.nth.iter().map(|&n| u64::try_from(n).expect("validated >= 1")).collect();
                    script::Rule::new(action, kind, flow, nth)
                })
                .collect();
            let limit = limit_packets.map_or(1000, |n| u64::try_from(n).expect("validated > 0"));
            AnyQdisc::Script(script::Script::new(rules, limit))
        }
        QueueSpec::Droptail { limit_packets, limit_bytes } => {
            let limit = match (limit_packets, limit_bytes) {
                (_, Some(b)) => Limit::Bytes(to_u64(b.0)),
                (Some(p), None) => Limit::Packets(u64::try_from(*p).expect("validated > 0")),
                (None, None) => Limit::Packets(100),
            };
            AnyQdisc::DropTail(DropTail::new(limit))
        }
        QueueSpec::Red(_)
        | QueueSpec::Aecn(_)
        | QueueSpec::Threshold(_)
        | QueueSpec::Pi(_)
        | QueueSpec::Rem(_)
        | QueueSpec::Codel(_)
        | QueueSpec::Pie(_) => unreachable!("AQM tables are resolved above"),
    };
    (qdisc, q.clone())
}

/// Static shortest-path routes (fewest hops) from every node to every host,
/// as `routes[node * n + dst] = egress port` (or [`NO_ROUTE`]).
///
/// Packets may transit routers only. Among equal-length paths the egress
/// port with the lowest id wins (ports are numbered in link order, `a -> b`
/// before `b -> a`), so routes depend only on the scenario.
fn compute_routes(nodes: &[Node], ports: &[Port]) -> Vec<u32> {
    let n = nodes.len();
    let mut routes = vec![NO_ROUTE; n * n];
    let mut incoming: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut outgoing: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, p) in ports.iter().enumerate() {
        incoming[p.to.index()].push(i);
        outgoing[p.from.index()].push(i);
    }
    let mut dist = vec![u32::MAX; n];
    let mut queue = VecDeque::new();
    for d in (0..n).filter(|&d| nodes[d].is_host) {
        dist.fill(u32::MAX);
        dist[d] = 0;
        queue.clear();
        queue.push_back(d);
        while let Some(v) = queue.pop_front() {
            // Only the destination itself or a router can be crossed.
            if v != d && nodes[v].is_host {
                continue;
            }
            for &pi in &incoming[v] {
                let u = ports[pi].from.index();
                if dist[u] == u32::MAX {
                    dist[u] = dist[v] + 1;
                    queue.push_back(u);
                }
            }
        }
        for u in 0..n {
            if u == d || dist[u] == u32::MAX {
                continue;
            }
            let best = outgoing[u].iter().copied().find(|&pi| {
                let v = ports[pi].to.index();
                dist[v] != u32::MAX && dist[v] + 1 == dist[u] && (v == d || !nodes[v].is_host)
            });
            if let Some(pi) = best {
                routes[u * n + d] = u32::try_from(pi).expect("port ids fit in u32");
            }
        }
    }
    routes
}

/// A resolved configuration written back as scenario fields.
fn overrides_from(c: &TcpConfig) -> TcpOverrides {
    let t = |d: SimDuration| Some(TimeValue(i128::from(d.as_nanos())));
    TcpOverrides {
        cc: Some(c.cc),
        mss: Some(i64::from(c.mss)),
        header_bytes: Some(i64::from(c.header_bytes)),
        initial_window: Some(match c.initial_window {
            InitialWindow::Segments(n) => InitialWindowSpec::Segments(i64::from(n)),
            InitialWindow::Rfc3390 => InitialWindowSpec::Formula(IwFormula::Rfc3390),
        }),
        max_cwnd: Some(i64::from(c.max_cwnd)),
        rcv_window: Some(ByteSize(i128::from(c.rcv_window))),
        initial_rto: t(c.initial_rto),
        min_rto: t(c.min_rto),
        max_rto: t(c.max_rto),
        clock_granularity: t(c.clock_granularity),
        syn_retries: Some(i64::from(c.syn_retries)),
        dupack_threshold: Some(i64::from(c.dupack_threshold)),
        delayed_ack: Some(c.delayed_ack),
        delayed_ack_timeout: t(c.delayed_ack_timeout),
        ecn: Some(c.ecn),
        ecn_synack: Some(c.ecn_synack),
        restart_after_idle: Some(c.restart_after_idle),
        newreno_careful: Some(c.newreno_careful),
        carry_rtt: Some(c.carry_rtt),
    }
}
