//! Scenario -> simulation: validates the spec, resolves defaults, wires
//! ports, computes static routes and derives every random stream.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use crate::app::bulk::{Bulk, Ftp};
use crate::app::dist::Dist;
use crate::app::http::{Http, HttpMode, HttpParams};
use crate::app::incast::Incast;
use crate::app::transactions::Transactions;
use crate::app::udp::UdpSources;
use crate::app::websessions::{WebParams, WebSessions};
use crate::app::AnyApp;
use crate::buffer::SharedBuffer;
use crate::error::SimError;
use crate::flow::Flow;
use crate::ids::AppId;
use crate::ids::{FlowId, NodeId};
use crate::link::Port;
use crate::node::{Arc, Routes};
use crate::profile::Profile;
use crate::qdisc::{droptail::Limit, script, AnyQdisc, DropTail, Queue};
use crate::queue_resolve::{resolve, LinkInfo};
use crate::rng::SimRng;
use crate::sched::{Event, Scheduler};
use crate::sim::{AppSlot, Conservation, Node, PerfCounters, SimOptions, Simulation};
use crate::spec::{
    AppSpec, ByteSize, CcKind, DistSpec, EcnFeedback, HttpVersion, InitialWindowSpec, IwFormula, LossDetection,
    ModelSpec, NodeKind, PragueEcnFallback, QueueSpec, Quickack, RecoveryRate, RtoRearm, SackAfterTimeout, SackVariant,
    ScenarioSpec, ScriptAction, ScriptMatch, SlowStartExit, SlowStartIncrease, TcpOverrides, TimeValue,
};
use crate::spec::{CubicInitialGrowth, SackRecoveryGuard};
use crate::stats::{FlowExtra, Series};
use crate::tcp::{InitialWindow, TcpConfig};
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

/// Work items (flows, route rows, ...) between two looks at the cancellation flag.
const CANCEL_CHECK_EVERY: usize = 1024;

/// `Err(Cancelled)` if `options` carries a raised cancellation flag.
fn check_cancel(options: &SimOptions) -> Result<(), SimError> {
    match &options.cancel {
        Some(flag) if flag.load(Ordering::Relaxed) => Err(SimError::Cancelled),
        _ => Ok(()),
    }
}

pub(crate) fn build(spec: &ScenarioSpec, options: &SimOptions) -> Result<Simulation, SimError> {
    if spec.has_templates() {
        // `[topology]` and `[[flow_groups]]` become plain nodes, links and flows first;
        // an error in what they made is reported at the template's field.
        let (plain, origins) = spec.expand()?;
        return build(&plain, options).map_err(|e| origins.remap(e));
    }
    spec.validate()?;
    if let Some(limit) = options.max_memory {
        if let Some(e) = spec.memory_estimate().check(limit) {
            return Err(e);
        }
    }
    check_cancel(options)?;
    let profile = spec.profile();
    let seed = options.seed.or(spec.simulation.seed).unwrap_or(DEFAULT_SEED);
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
        if i % CANCEL_CHECK_EVERY == 0 {
            check_cancel(options)?;
        }
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
            let ends = (id[from.as_str()], id[to.as_str()], !nodes[id[to.as_str()].index()].is_host);
            ports.push(Port::new(ends, LinkInfo { rate, delay }, Queue::new(qdisc, rate, rng), i, name));
        }
        let rl = &mut resolved.links[i];
        let [w_ab, w_ba] = written;
        rl.queue_ab = Some(w_ab);
        rl.queue_ba = Some(w_ba);
        rl.queue = None;
    }

    // Shared buffers: every egress queue of a router with one draws on it.
    let mut buffers = Vec::new();
    for (i, n) in spec.nodes.iter().enumerate() {
        if let Some(b) = &n.shared_buffer {
            let index = u32::try_from(buffers.len()).expect("fewer than 2^32 buffers");
            buffers.push(SharedBuffer::new(to_u64(b.bytes.0), b.alpha));
            for port in ports.iter_mut().filter(|p| p.from == NodeId::from_index(i)) {
                port.join_buffer(index);
            }
        }
    }

    let routes = compute_routes(&nodes, &ports, options)?;

    // Flows.
    let mut sched = Scheduler::new();
    if warmup > SimTime::ZERO && warmup < end {
        sched.schedule(warmup, Event::WarmupEnd);
    }
    let sample_interval = spec.simulation.sample_interval.map(dur);
    if sample_interval.is_some() {
        sched.schedule(SimTime::ZERO, Event::Sample);
    }
    // Connections made at run time grow the `[[apps]]`' share of memory; the `[[flows]]` are fixed.
    let connection_path = if spec.apps.is_empty() { "flows" } else { "apps" };
    let open_at_once = spec.connections_open_at_once();
    let mut sim = Simulation {
        sched,
        end,
        warmup,
        seed,
        host_ecn: spec.nodes.iter().map(|n| n.ecn).collect(),
        nodes,
        packets: crate::packet::PacketPool::default(),
        ports,
        buffers,
        routes,
        flows: reserved(open_at_once),
        n_static: spec.flows.len(),
        free_flows: Vec::new(),
        next_serial: spec.flows.len() as u64,
        connection_rows: spec.simulation.connection_rows.unwrap_or(false),
        ended: Vec::new(),
        app_totals: Vec::new(),
        // Room for the connections open at once as the memory estimate counts them, so that
        // the endpoints (64-byte aligned: a reallocation copies) need not grow while they open.
        // The room is address space: pages are resident only once an endpoint is written.
        endpoints: reserved(open_at_once.saturating_mul(2)),
        free_slots: Vec::new(),
        tcp_configs: Vec::new(),
        udp: Vec::new(),
        apps: Vec::with_capacity(spec.flows.len() + spec.apps.len()),
        groups: Vec::new(),
        records: Vec::new(),
        records_drained_bytes: 0,
        cmds: Vec::new(),
        next_uid: 0,
        cons: Conservation::default(),
        perf: PerfCounters::default(),
        sample_interval,
        sampled_apps: None,
        sampled_ports: None,
        series: Series::default(),
        warm: None,
        resolved_spec: String::new(),
        profile: profile.name(),
        tap: None,
        tracer: None,
        external: crate::external::External::default(),
        spec_flows: spec.flows.len(),
        connection_path,
        fault: None,
        since_give_back: 0,
        until_check: 0,
        instant: SimTime::ZERO,
        instant_events: 0,
        stale_timers: 0,
        memory_limit: options.max_memory,
        cancel: options.cancel.clone(),
    };
    let mut groups: HashMap<String, u32> = HashMap::with_capacity(spec.flows.len() + spec.apps.len());
    for (i, f) in spec.flows.iter().enumerate() {
        if i % CANCEL_CHECK_EVERY == 0 {
            check_cancel(options)?;
        }
        let cfg = spec.resolved_tcp(i);
        let src = id[f.src.as_str()];
        let dst = id[f.dst.as_str()];
        for (a, b, field) in [(src, dst, "dst"), (dst, src, "src")] {
            if sim.routes.get(a, b).is_none() {
                return Err(SimError::topology(
                    format!("flows[{i}].{field}"),
                    format!(
                        "no route from \"{}\" to \"{}\" (packets may cross routers only, not hosts)",
                        sim.nodes[a.index()].name,
                        sim.nodes[b.index()].name
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
        // Each `[[flows]]` entry is a bulk app of its own: AppId i drives FlowId i.
        let fid = FlowId::from_index(i);
        let app = AppId::from_index(i);
        let group = f.group.as_deref().unwrap_or_else(|| crate::spec::default_group(&name));
        let group = group_index(&mut sim.groups, &mut groups, group);
        sim.apps.push(AppSlot {
            app: AnyApp::Bulk(Bulk { flow: fid, bytes: app_bytes, stop: f.stop.map(|t| SimTime::ZERO + dur(t)) }),
            name: name.clone(),
            group,
            tcp: cfg,
            timer_gen: 0,
            timer_at: None,
        });
        sim.flows.push(Flow {
            serial: i as u64,
            in_flight: 0,
            slot: crate::flow::NO_SLOT,
            free: false,
            app,
            tag: 0,
            src,
            dst,
            start,
            cc: cfg.cc,
            extra: FlowExtra::default(),
            last: None,
        });
        let slot = sim.install(fid, src, dst, cfg, cfg);
        sim.flows[fid.index()].slot = slot;
        let rf = &mut resolved.flows[i];
        rf.name = Some(name);
        rf.tcp = overrides_from(&cfg, profile);
        rf.start = Some(TimeValue(i128::from(start.as_nanos())));
        rf.start_jitter = None;
        if start < end {
            sim.sched.schedule(start, Event::AppStart(app));
        }
    }

    // Workloads.
    for (j, w) in spec.apps.iter().enumerate() {
        check_cancel(options)?;
        let p = format!("apps[{j}]");
        let cfg = spec.resolved_app_tcp(j);
        let name = w.name.clone().unwrap_or_else(|| format!("app{j}"));
        let clients: Vec<NodeId> = w.clients.iter().map(|c| id[c.as_str()]).collect();
        let servers: Vec<NodeId> = w.servers.iter().map(|c| id[c.as_str()]).collect();
        // Every client may meet every server (web sessions pick at random): all pairs need routes.
        // An incast client queries every server but itself (all-to-all: the same hosts).
        let skip_self = matches!(w.model, ModelSpec::Incast { .. });
        for (ci, &c) in clients.iter().enumerate() {
            for &sv in servers.iter().filter(|&&sv| !(skip_self && sv == c)) {
                for (a, b) in [(c, sv), (sv, c)] {
                    if sim.routes.get(a, b).is_none() {
                        return Err(SimError::topology(
                            format!("{p}.clients[{ci}]"),
                            format!(
                                "no route from \"{}\" to \"{}\" (packets may cross routers only, not hosts)",
                                sim.nodes[a.index()].name,
                                sim.nodes[b.index()].name
                            ),
                        ));
                    }
                }
            }
        }
        let pairs: Vec<(NodeId, NodeId)> =
            clients.iter().enumerate().map(|(i, &c)| (c, servers[i % servers.len()])).collect();
        let start = SimTime::ZERO + w.start.map_or(SimDuration::ZERO, dur);
        let jitter = w.start_jitter.map_or(0, |j| dur(j).as_nanos());
        let rng = SimRng::for_component(seed, &format!("app/{name}"));
        let app = make_app(spec, &w.model, &pairs, &clients, &servers, start, jitter, &cfg, rng);
        let group = group_index(&mut sim.groups, &mut groups, w.group.as_deref().unwrap_or(&name));
        let id = AppId::from_index(sim.apps.len());
        sim.apps.push(AppSlot { app, name: name.clone(), group, tcp: cfg, timer_gen: 0, timer_at: None });
        let ra = &mut resolved.apps[j];
        ra.name = Some(name);
        ra.tcp = overrides_from(&cfg, profile);
        if start < end {
            sim.sched.schedule(start, Event::AppStart(id));
        }
    }
    sim.app_totals = vec![crate::stats::ConnTotals::default(); sim.apps.len()];
    // Sampling limited to queues of the named links (validated: every index exists).
    sim.sampled_ports = spec
        .simulation
        .sample_queues
        .as_ref()
        .map(|links| sim.ports.iter().map(|p| links.contains(&p.link_index)).collect());
    // Sampling limited to named flows and apps, or their groups (validated: every name exists).
    sim.sampled_apps = spec.simulation.sample_flows.as_ref().map(|names| {
        sim.apps.iter().map(|a| names.contains(&a.name) || names.contains(&sim.groups[a.group as usize])).collect()
    });
    resolved.tcp = TcpOverrides::default();
    sim.resolved_spec = resolved.to_json();
    Ok(sim)
}

/// An empty vector with room for `n` items if the allocator grants it, else with none (it then
/// grows as items come, as any vector; the room is an optimization, never a failure).
fn reserved<T>(n: usize) -> Vec<T> {
    let mut v = Vec::new();
    let _ = v.try_reserve_exact(n);
    v
}

/// The index of group `name` in `names`, added if new; `index` maps names to indices.
fn group_index(names: &mut Vec<String>, index: &mut HashMap<String, u32>, name: &str) -> u32 {
    if let Some(&i) = index.get(name) {
        return i;
    }
    let i = u32::try_from(names.len()).expect("groups fit in u32");
    names.push(name.to_owned());
    index.insert(name.to_owned(), i);
    i
}

/// The distribution `d`, or `default`.
fn dist_or(d: Option<&DistSpec>, default: Dist) -> Dist {
    d.map_or(default, Dist::from_spec)
}

/// The app a validated workload model describes.
#[allow(clippy::too_many_arguments, clippy::too_many_lines)]
fn make_app(
    spec: &ScenarioSpec,
    model: &ModelSpec,
    pairs: &[(NodeId, NodeId)],
    clients: &[NodeId],
    servers: &[NodeId],
    start: SimTime,
    jitter: u64,
    cfg: &TcpConfig,
    rng: SimRng,
) -> AnyApp {
    let size = |b: Option<ByteSize>, default: u64| b.map_or(default, |b| to_u64(b.0));
    match model {
        // STUDIES.md §2 (RFC 2415 §3): FTP clients fetch 1 MB files.
        ModelSpec::Ftp { file_size } => AnyApp::Ftp(Ftp::new(pairs, start, jitter, size(*file_size, 1_000_000), rng)),
        ModelSpec::Crr { request, response, think_time } | ModelSpec::Rr { request, response, think_time } => {
            AnyApp::Transactions(Transactions::new(
                pairs,
                start,
                jitter,
                matches!(model, ModelSpec::Crr { .. }),
                // netperf manual §6.2: `-r 1,1` (request and response of 1 byte) by default.
                size(*request, 1),
                size(*response, 1),
                dist_or(think_time.as_ref(), Dist::Constant(0.0)),
                rng,
            ))
        }
        ModelSpec::Incast { request, response, think_time, queries } => AnyApp::Incast(Incast::new(
            clients,
            servers,
            start,
            jitter,
            size(*request, 1),
            to_u64(response.0),
            dist_or(think_time.as_ref(), Dist::Constant(0.0)),
            queries.map(|n| u64::try_from(n).expect("validated")),
            rng,
        )),
        ModelSpec::Http { version, embedded, parallel, primary_size, embedded_size, request_size, think_time } => {
            let mode = match version.unwrap_or(HttpVersion::Http10) {
                // ecnsim default: 4 parallel connections (any value >= 3 fetches RFC 2415's 3 objects at once).
                HttpVersion::Http10 => {
                    HttpMode::Http10 { parallel: parallel.map_or(4, |n| u32::try_from(n).expect("validated")) }
                }
                HttpVersion::Http11Persistent => HttpMode::Http11Persistent,
                HttpVersion::Http11Rfc2415 => HttpMode::Http11Rfc2415,
            };
            let d = |given: &Option<DistSpec>, name: &str| dist_or(given.as_ref(), crate::app::http::default(name));
            let p = HttpParams {
                mode,
                embedded: d(embedded, "embedded"),
                primary_size: d(primary_size, "primary_size"),
                embedded_size: d(embedded_size, "embedded_size"),
                request_size: d(request_size, "request_size"),
                think_time: d(think_time, "think_time"),
            };
            AnyApp::Http(Http::new(pairs, start, jitter, p, rng))
        }
        ModelSpec::Websessions { offered_load, .. } => {
            let mut p = WebParams::from_model(model);
            if let Some(load) = offered_load {
                let link = &spec.links[usize::try_from(load.link).expect("validated")];
                #[allow(clippy::cast_precision_loss)]
                let rate = link.rate.0 as f64;
                p.session_rate = p.offered_session_rate(load.percent, rate, cfg);
            }
            AnyApp::WebSessions(WebSessions::new(clients.to_vec(), servers.to_vec(), start, p, rng))
        }
        ModelSpec::Cbr { rate, packet_size } | ModelSpec::Onoff { rate, packet_size, .. } => {
            let on_off = match model {
                ModelSpec::Onoff { on, off, .. } => Some((
                    // ecnsim default: Pareto shape 1.5 (Willinger et al. 1997 use 1 < shape < 2), mean 0.5 s.
                    dist_or(on.as_ref(), Dist::Pareto { shape: 1.5, scale: 0.5 / 3.0 }),
                    dist_or(off.as_ref(), Dist::Pareto { shape: 1.5, scale: 0.5 / 3.0 }),
                )),
                _ => None,
            };
            AnyApp::Udp(UdpSources::new(
                pairs,
                start,
                jitter,
                BitRate::from_bps(to_u64(rate.0)),
                u32::try_from(size(*packet_size, 1000)).expect("validated"),
                on_off,
                rng,
            ))
        }
    }
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
        QueueSpec::Droptail { limit_packets, limit_bytes, limit_rule } => {
            let limit = match (limit_packets, limit_bytes) {
                (_, Some(b)) => Limit::Bytes(to_u64(b.0)),
                (Some(p), None) => Limit::Packets(u64::try_from(*p).expect("validated > 0")),
                (None, None) => Limit::Packets(100),
            };
            let rule = limit_rule.unwrap_or_else(|| profile.droptail_limit_rule());
            let resolved = QueueSpec::Droptail {
                limit_packets: match limit {
                    Limit::Packets(n) => Some(i64::try_from(n).expect("validated")),
                    Limit::Bytes(_) => None,
                },
                limit_bytes: *limit_bytes,
                limit_rule: Some(rule),
            };
            return (AnyQdisc::DropTail(DropTail::new(limit, rule)), resolved);
        }
        QueueSpec::Red(_)
        | QueueSpec::Aecn(_)
        | QueueSpec::Threshold(_)
        | QueueSpec::Pi(_)
        | QueueSpec::Rem(_)
        | QueueSpec::Codel(_)
        | QueueSpec::Pie(_)
        | QueueSpec::FqCodel(_)
        | QueueSpec::FqPie(_)
        | QueueSpec::Dualpi2(_) => unreachable!("AQM tables are resolved above"),
    };
    (qdisc, q.clone())
}

/// The static routes of the network (see [`Routes`]).
///
/// The core table is allocated with `try_reserve`, so a table too large for
/// the machine is an error, never an abort.
fn compute_routes(nodes: &[Node], ports: &[Port], options: &SimOptions) -> Result<Routes, SimError> {
    let arcs: Vec<Arc> = ports.iter().map(|p| Arc { from: p.from, to: p.to }).collect();
    Routes::compute(
        nodes,
        &arcs,
        || check_cancel(options),
        |cells| {
            SimError::resource(
                "nodes",
                format!(
                    "the route table of {} routers and multi-link hosts needs {} of memory, which could not be \
                     allocated",
                    cells.isqrt(),
                    crate::error::fmt_bytes((cells as u64).saturating_mul(4))
                ),
            )
        },
    )
}

/// A resolved configuration written back as scenario fields.
pub(crate) fn overrides_from(c: &TcpConfig, profile: Profile) -> TcpOverrides {
    let (cubic, dctcp) = (c.cc == CcKind::Cubic, c.cc == CcKind::Dctcp);
    // `sack_variant` appears for a SACK flow whose variant, or whose profile's default, is not
    // RFC 6675: the resolved spec of every other flow is what it was before the option existed,
    // and the printed spec still reruns to the same variant under its profile.
    let rfc6675 = SackVariant::Rfc6675;
    let sack_variant_shown = c.offers_sack() && (c.sack_variant != rfc6675 || profile.tcp().sack_variant != rfc6675);
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
        ect_codepoint: Some(c.ect_codepoint),
        // Shown for AccECN flows only, so that a classic flow's resolved spec is what it was before.
        ecn_feedback: (c.ecn_feedback != EcnFeedback::Classic).then_some(c.ecn_feedback),
        accecn_option: (c.ecn_feedback == EcnFeedback::Accecn).then_some(c.accecn_option),
        restart_after_idle: Some(c.restart_after_idle),
        newreno_careful: Some(c.newreno_careful),
        newreno_partial_ack: Some(c.newreno_partial_ack),
        carry_rtt: Some(c.carry_rtt),
        rto_estimator: Some(c.rto_estimator),
        ecn_cwr_on_retransmit: Some(c.ecn_cwr_on_retransmit),
        ecn_ect_on_retransmit: Some(c.ecn_ect_on_retransmit),
        ecn_first_segment_not_ect: Some(c.ecn_first_segment_not_ect),
        ecn_ece_growth: Some(c.ecn_ece_growth),
        ecn_one_segment: Some(c.ecn_one_segment),
        ecn_after_timeout: Some(c.ecn_after_timeout),
        timeout_after_ecn: Some(c.timeout_after_ecn),
        ecn_keeps_recover: Some(c.ecn_keeps_recover),
        ecn_echo_before_dupack: Some(c.ecn_echo_before_dupack),
        reno_bugfix: Some(c.reno_bugfix),
        ca_increase: Some(c.ca_increase),
        reduction_basis: Some(c.reduction_basis),
        limited_transmit: Some(c.limited_transmit),
        handshake: Some(c.handshake),
        headers_on_data: Some(c.headers_on_data),
        // The parameters of CUBIC and DCTCP appear only where they apply, so the resolved spec of
        // a Tahoe, Reno, NewReno or SACK flow is what it was before they existed.
        recovery: c.cc.takes_recovery().then_some(c.recovery),
        sack_variant: sack_variant_shown.then_some(c.sack_variant),
        // Shown where they are not the pre-existing behaviour (RFC 6675's rate, no quick-ACK
        // mode) or their profile's default is not, so every other resolved spec is unchanged.
        recovery_rate: (c.offers_sack()
            && (c.recovery_rate != RecoveryRate::Rfc6675 || profile.tcp().recovery_rate != RecoveryRate::Rfc6675))
            .then_some(c.recovery_rate),
        sack_after_timeout: (c.offers_sack()
            && (c.sack_after_timeout != SackAfterTimeout::Clear
                || profile.tcp().sack_after_timeout != SackAfterTimeout::Clear))
            .then_some(c.sack_after_timeout),
        // Shown where it, or the profile's default, is RACK, so every other resolved spec is unchanged.
        loss_detection: (c.offers_sack()
            && (c.loss_detection != LossDetection::Dupack || profile.tcp().loss_detection != LossDetection::Dupack))
            .then_some(c.loss_detection),
        quickack: (c.quickack != Quickack::Off || profile.tcp().quickack != Quickack::Off).then_some(c.quickack),
        // Shown where it, or the profile's default, is Linux's, so every other resolved spec is unchanged.
        rto_rearm: (c.rto_rearm != RtoRearm::Rfc6298 || profile.tcp().rto_rearm != RtoRearm::Rfc6298)
            .then_some(c.rto_rearm),
        cubic_beta: cubic.then(|| unfraction(c.cubic_beta)),
        cubic_c: cubic.then(|| unfraction(c.cubic_c)),
        cubic_fast_convergence: cubic.then_some(c.cubic_fast_convergence),
        cubic_timeout: cubic.then_some(c.cubic_timeout),
        // Shown where it, or the default for the flow's algorithm, is not RFC 5681's slow start, so
        // every other resolved spec is unchanged.
        slow_start_exit: (c.slow_start_exit != SlowStartExit::None
            || profile.slow_start_exit(c.cc) != SlowStartExit::None)
            .then_some(c.slow_start_exit),
        // Shown where it, or the profile's default, is not RFC 5681's, and only for the algorithms
        // whose window grows by slow start (not BBR or Prague), so every other resolved spec is unchanged.
        slow_start_increase: (!matches!(c.cc, CcKind::Bbr | CcKind::Prague)
            && (c.slow_start_increase != SlowStartIncrease::Rfc5681
                || profile.tcp().slow_start_increase != SlowStartIncrease::Rfc5681))
            .then_some(c.slow_start_increase),
        // Shown for SACK flows where it, or the profile's default, is not `newreno_careful`'s rule.
        sack_recovery_guard: (c.offers_sack()
            && (c.sack_recovery_guard != SackRecoveryGuard::NewrenoCareful
                || profile.tcp().sack_recovery_guard != SackRecoveryGuard::NewrenoCareful))
            .then_some(c.sack_recovery_guard),
        // Shown for CUBIC where it, or the profile's default, is not RFC 9438's.
        cubic_initial_growth: (cubic
            && (c.cubic_initial_growth != CubicInitialGrowth::Rfc9438
                || profile.tcp().cubic_initial_growth != CubicInitialGrowth::Rfc9438))
            .then_some(c.cubic_initial_growth),
        dctcp_shift_g: dctcp.then_some(i64::from(c.dctcp_shift_g)),
        dctcp_fraction: dctcp.then_some(c.dctcp_fraction),
        dctcp_ect_control: dctcp.then_some(c.dctcp_ect_control),
        prague_rtt_target: (c.cc == CcKind::Prague).then(|| TimeValue(i128::from(c.prague_rtt_target.as_nanos()))),
        prague_rtt_transition: (c.cc == CcKind::Prague).then_some(i64::from(c.prague_rtt_transition)),
        // Shown where it is on, so that every existing resolved spec is unchanged.
        prague_ecn_fallback: (c.cc == CcKind::Prague
            && (c.prague_ecn_fallback != PragueEcnFallback::None
                || profile.tcp().prague_ecn_fallback != PragueEcnFallback::None))
            .then_some(c.prague_ecn_fallback),
        // Shown when on, so that every resolved spec without offload is what it was before.
        tso_segments: (c.tso_segments != 1).then_some(i64::from(c.tso_segments)),
    }
}

/// A fraction of [`TcpConfig`] as the spec writes it (the inverse of `validate::fraction`).
#[allow(clippy::cast_precision_loss)]
fn unfraction(v: u32) -> f64 {
    f64::from(v) / crate::tcp::FRACTION_SCALE as f64
}

impl Simulation {
    /// Validate `spec` and build the simulation; `seed` overrides the spec's seed.
    ///
    /// # Errors
    /// [`SimError::InvalidSpec`] for a scenario that breaks a rule,
    /// [`SimError::Topology`] for one whose flows have no route.
    pub fn new(spec: &ScenarioSpec, seed: Option<u64>) -> Result<Self, SimError> {
        build(spec, &SimOptions { seed, ..SimOptions::default() })
    }

    /// Validate `spec` and build the simulation with `options` (seed,
    /// memory limit, cancellation).
    ///
    /// # Errors
    /// As [`Simulation::new`]; also [`SimError::Resource`] if the scenario's
    /// memory estimate exceeds `options.max_memory` (or its route table cannot
    /// be allocated), and [`SimError::Cancelled`] if `options.cancel` is raised.
    pub fn with_options(spec: &ScenarioSpec, options: &SimOptions) -> Result<Self, SimError> {
        build(spec, options)
    }
}
