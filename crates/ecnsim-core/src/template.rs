//! Topology templates (`[topology]`) and flow groups (`[[flow_groups]]`):
//! a scenario with many flows written in a few lines, expanded here into the
//! plain `nodes`, `links` and `flows` every other part of the core reads.
//!
//! The expansion is the first step of [`ScenarioSpec::validate`] and of
//! building a simulation, so TOML, JSON and the Python builder all get it;
//! [`ScenarioSpec::expanded`] returns it (what `ecnsim run --print-resolved`
//! prints). Rules:
//!
//! - Expanded items come first, in the order topology, then flow groups;
//!   the `[[nodes]]`, `[[links]]` and `[[flows]]` written out follow. A
//!   written-out flow or link without a name is given the default name of
//!   its place in the file (`flow0`, `link0`), so adding a template never
//!   renames it.
//! - Names are fixed by the template (`docs/scenario.md` draws each one):
//!   the bottleneck link is `bottleneck` (`bottleneck0`, `bottleneck1`, ...
//!   in a parking lot) and every access link is named after its host.
//! - A flow group's flows are `{name}{i}`, in group `name` (or `group`), and
//!   their `src`/`dst` patterns replace `{i}` by the flow's index.
//! - Errors name the template's field (`topology.delays[3]`,
//!   `flow_groups[1].dst`): an error found in an expanded link or flow is
//!   reported at the field of the template it came from.
//!
//! Expansion draws no random numbers: a flow group's `start_jitter` is
//! copied to each flow, which draws from its own stream when built.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use crate::error::SimError;
use crate::spec::{
    DumbbellSpec, FlowGroupSpec, FlowSpec, HeteroRttSpec, LinkSpec, NodeKind, NodeSpec, ParkingLotSpec, QueueSpec,
    RateValue, ScenarioSpec, TimeValue, TopologySpec,
};

/// Most hosts, groups or flows one count of a template may ask for.
const MAX_COUNT: i64 = 100_000;
/// Most flows all `[[flow_groups]]` together may expand into.
const MAX_GROUP_FLOWS: i64 = 1_000_000;

/// Where an expanded link's fields came from: `(field of the template, index in its list)`.
#[derive(Clone, Copy, Debug)]
struct LinkOrigin {
    rate: (&'static str, Option<usize>),
    delay: (&'static str, Option<usize>),
    queue: &'static str,
}

/// What the expansion made, to report an error in an expanded item at its template's field.
#[derive(Debug, Default)]
pub(crate) struct Origins {
    /// Nodes made by the topology (the first ones).
    nodes: usize,
    /// Links made by the topology (the first ones), in order.
    links: Vec<LinkOrigin>,
    /// Flows made by flow groups (the first ones): `(group index, flow name)`.
    flows: Vec<(usize, String)>,
}

impl Origins {
    /// `e`, with a path into an expanded item moved to the template field it came from.
    pub(crate) fn remap(&self, e: SimError) -> SimError {
        let (path, msg, topology) = match e {
            SimError::InvalidSpec { path, msg } => (path, msg, false),
            SimError::Topology { path, msg } => (path, msg, true),
            other => return other,
        };
        let (path, msg) = self.remap_path(&path, &msg).unwrap_or((path, msg));
        if topology {
            SimError::topology(path, msg)
        } else {
            SimError::spec(path, msg)
        }
    }

    fn remap_path(&self, path: &str, msg: &str) -> Option<(String, String)> {
        let (list, rest) = path.split_once('[')?;
        let (index, rest) = rest.split_once(']')?;
        let index: usize = index.parse().ok()?;
        let field = rest.strip_prefix('.').map(|r| r.split(['.', '[']).next().unwrap_or(r));
        let tail = field.map_or("", |f| &rest[1 + f.len()..]);
        match list {
            "nodes" if index < self.nodes => {
                Some(("topology".to_owned(), format!("{msg} (in nodes[{index}], made by the topology)")))
            }
            "links" if index < self.links.len() => {
                let o = self.links[index];
                let at = |(name, i): (&str, Option<usize>)| match i {
                    Some(i) => format!("topology.{name}[{i}]"),
                    None => format!("topology.{name}"),
                };
                let base = match field {
                    Some("rate") => at(o.rate),
                    Some("delay") => at(o.delay),
                    Some("queue" | "queue_ab" | "queue_ba") => format!("topology.{}", o.queue),
                    _ => "topology".to_owned(),
                };
                Some((format!("{base}{tail}"), format!("{msg} (in links[{index}], made by the topology)")))
            }
            "flows" if index < self.flows.len() => {
                let (j, name) = &self.flows[index];
                let field = match field {
                    Some("name" | "group") if tail.is_empty() => format!(".{}", field.unwrap_or_default()),
                    Some(f) => format!(".{f}{tail}"),
                    None => String::new(),
                };
                Some((format!("flow_groups[{j}]{field}"), format!("{msg} (in flow {name:?}, flows[{index}])")))
            }
            "nodes" | "links" | "flows" => {
                // A written-out item: its index in the file.
                let made = match list {
                    "nodes" => self.nodes,
                    "links" => self.links.len(),
                    _ => self.flows.len(),
                };
                (made > 0).then(|| (format!("{list}[{}]{rest}", index - made), msg.to_owned()))
            }
            _ => None,
        }
    }
}

impl ScenarioSpec {
    /// Whether the scenario has a `[topology]` or `[[flow_groups]]` to expand.
    #[must_use]
    pub fn has_templates(&self) -> bool {
        self.topology.is_some() || !self.flow_groups.is_empty()
    }

    /// The scenario with its `[topology]` and `[[flow_groups]]` expanded into
    /// plain `nodes`, `links` and `flows` (itself, cloned, if it has neither).
    /// The result is not validated: [`ScenarioSpec::validate`] does both.
    ///
    /// # Errors
    /// [`SimError::InvalidSpec`] naming the template's field: a count out of
    /// range, a list whose length does not fit, a pattern naming no node.
    pub fn expanded(&self) -> Result<ScenarioSpec, SimError> {
        Ok(self.expand()?.0)
    }

    /// [`ScenarioSpec::expanded`], and where each expanded item came from.
    pub(crate) fn expand(&self) -> Result<(ScenarioSpec, Origins), SimError> {
        let mut out = self.clone();
        let mut origins = Origins::default();
        if !self.has_templates() {
            return Ok((out, origins));
        }
        out.topology = None;
        out.flow_groups = Vec::new();
        let mut nodes = Vec::new();
        let mut links = Vec::new();
        if let Some(t) = &self.topology {
            match t {
                TopologySpec::Dumbbell(d) => dumbbell(d, &mut nodes, &mut links, &mut origins.links)?,
                TopologySpec::HeteroRtt(h) => hetero_rtt(h, &mut nodes, &mut links, &mut origins.links)?,
                TopologySpec::ParkingLot(p) => parking_lot(p, &mut nodes, &mut links, &mut origins.links)?,
            }
        }
        origins.nodes = nodes.len();
        nodes.extend(self.nodes.iter().cloned());
        links.extend(self.links.iter().enumerate().map(|(i, l)| {
            let mut l = l.clone();
            l.name.get_or_insert_with(|| format!("link{i}"));
            l
        }));
        let mut flows = Vec::new();
        let total: i64 = self.flow_groups.iter().map(|g| g.count.clamp(0, MAX_COUNT)).sum();
        if total > MAX_GROUP_FLOWS {
            return Err(SimError::spec(
                "flow_groups",
                format!("the groups' counts add up to {total} flows; at most {MAX_GROUP_FLOWS} are allowed"),
            ));
        }
        let node_names: HashSet<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        for (j, g) in self.flow_groups.iter().enumerate() {
            flow_group(j, g, &node_names, &nodes, &mut flows, &mut origins.flows)?;
        }
        flows.extend(self.flows.iter().enumerate().map(|(i, f)| {
            let mut f = f.clone();
            f.name.get_or_insert_with(|| format!("flow{i}"));
            f
        }));
        out.nodes = nodes;
        out.links = links;
        out.flows = flows;
        Ok((out, origins))
    }
}

// ---------------------------------------------------------------------------
// Checks of template fields
// ---------------------------------------------------------------------------

/// A count of the template: an integer in `lo..=MAX_COUNT`.
fn count(path: &str, n: i64, lo: i64) -> Result<usize, SimError> {
    if (lo..=MAX_COUNT).contains(&n) {
        return Ok(usize::try_from(n).expect("in range"));
    }
    Err(SimError::spec(path, format!("must be an integer >= {lo} and <= {MAX_COUNT}, got {n}")))
}

/// A per-item list must have `n` entries (`what`: of what, for the message).
fn list_len<T>(path: &str, list: &[T], n: usize, what: &str) -> Result<(), SimError> {
    if list.len() == n {
        return Ok(());
    }
    Err(SimError::spec(path, format!("must have one entry per {what} ({n}), got {}", list.len())))
}

/// Exactly one of two alternative fields must be given.
fn one_of(path: &str, (a, has_a): (&str, bool), (b, has_b): (&str, bool)) -> Result<(), SimError> {
    match (has_a, has_b) {
        (true, true) => Err(SimError::spec(format!("{path}.{b}"), format!("give {a} or {b}, not both"))),
        (false, false) => Err(SimError::spec(path, format!("missing field: give {a} or {b}"))),
        _ => Ok(()),
    }
}

fn host(name: String) -> NodeSpec {
    NodeSpec { name, kind: NodeKind::Host, ecn: None, shared_buffer: None }
}

fn router(name: String) -> NodeSpec {
    NodeSpec { name, kind: NodeKind::Router, ecn: None, shared_buffer: None }
}

/// A link whose fields are all given, and its origin.
struct NewLink<'a> {
    name: String,
    a: String,
    b: String,
    rate: RateValue,
    delay: TimeValue,
    /// `(field, queue)`: `queue` for both directions or `queue_ab` for `a -> b` only.
    queue: (&'static str, Option<&'a QueueSpec>),
    origin: LinkOrigin,
}

fn push_link(l: NewLink<'_>, links: &mut Vec<LinkSpec>, origins: &mut Vec<LinkOrigin>) {
    let (field, queue) = l.queue;
    let queue = queue.cloned();
    let (queue, queue_ab) = if field == "queue_ab" { (None, queue) } else { (queue, None) };
    links.push(LinkSpec {
        name: Some(l.name),
        a: l.a,
        b: l.b,
        rate: l.rate,
        delay: l.delay,
        queue,
        queue_ab,
        queue_ba: None,
    });
    origins.push(l.origin);
}

// ---------------------------------------------------------------------------
// The templates
// ---------------------------------------------------------------------------

/// Senders `s{i}` - `r1` = bottleneck = `r2` - receivers `c{i}` (hosts first, then routers;
/// links: `bottleneck`, the senders' access links, the receivers').
fn dumbbell(
    d: &DumbbellSpec,
    nodes: &mut Vec<NodeSpec>,
    links: &mut Vec<LinkSpec>,
    origins: &mut Vec<LinkOrigin>,
) -> Result<(), SimError> {
    let senders = count("topology.senders", d.senders, 1)?;
    let receivers = count("topology.receivers", d.receivers.unwrap_or(d.senders), 1)?;
    let side_delay = |list: &Option<Vec<TimeValue>>, field: &'static str, n: usize, what| match list {
        Some(v) => list_len(&format!("topology.{field}"), v, n, what).map(|()| (field, true)),
        None if d.access_delay.is_some() => Ok(("access_delay", false)),
        None => Err(SimError::spec("topology", format!("missing field: give access_delay or {field}"))),
    };
    let (s_field, s_list) = side_delay(&d.sender_delays, "sender_delays", senders, "sender")?;
    let (c_field, c_list) = side_delay(&d.receiver_delays, "receiver_delays", receivers, "receiver")?;
    nodes.extend((0..senders).map(|i| host(format!("s{i}"))));
    nodes.extend((0..receivers).map(|i| host(format!("c{i}"))));
    nodes.extend([router("r1".into()), router("r2".into())]);
    push_link(
        NewLink {
            name: "bottleneck".into(),
            a: "r1".into(),
            b: "r2".into(),
            rate: d.bottleneck_rate,
            delay: d.bottleneck_delay,
            queue: ("queue", d.queue.as_ref()),
            origin: LinkOrigin { rate: ("bottleneck_rate", None), delay: ("bottleneck_delay", None), queue: "queue" },
        },
        links,
        origins,
    );
    let access = d.access_queue.as_ref();
    for (side, n, field, listed, router, delays) in [
        ("s", senders, s_field, s_list, "r1", &d.sender_delays),
        ("c", receivers, c_field, c_list, "r2", &d.receiver_delays),
    ] {
        for i in 0..n {
            let name = format!("{side}{i}");
            let delay = delays.as_ref().map_or_else(|| d.access_delay.expect("checked above"), |v| v[i]);
            // Senders' links run host -> router, receivers' router -> host (as `ecnsim.dumbbell` always did).
            let (a, b) =
                if side == "s" { (name.clone(), router.to_owned()) } else { (router.to_owned(), name.clone()) };
            push_link(
                NewLink {
                    name,
                    a,
                    b,
                    rate: d.access_rate,
                    delay,
                    queue: ("queue", access),
                    origin: LinkOrigin {
                        rate: ("access_rate", None),
                        delay: (field, listed.then_some(i)),
                        queue: "access_queue",
                    },
                },
                links,
                origins,
            );
        }
    }
    Ok(())
}

/// `n` split into `groups` counts as equally as possible (earlier groups get the remainder).
fn split(n: usize, groups: usize) -> Vec<usize> {
    (0..groups).map(|g| n / groups + usize::from(g < n % groups)).collect()
}

/// `a / b` rounded to the nearest integer, ties to even (as Python's `round`).
fn div_round_half_even(a: i128, b: i128) -> i128 {
    let (q, r) = (a / b, a % b);
    match (2 * r).cmp(&b) {
        std::cmp::Ordering::Less => q,
        std::cmp::Ordering::Greater => q + 1,
        std::cmp::Ordering::Equal => q + (q & 1),
    }
}

/// Sources `{group}{i}` -> `r` = bottleneck => `sink` (sources group by group, `sink`, `r`;
/// links: `bottleneck`, then the access links in source order).
fn hetero_rtt(
    h: &HeteroRttSpec,
    nodes: &mut Vec<NodeSpec>,
    links: &mut Vec<LinkSpec>,
    origins: &mut Vec<LinkOrigin>,
) -> Result<(), SimError> {
    let n_groups = h.groups.len();
    if n_groups == 0 || n_groups > 1000 {
        return Err(SimError::spec("topology.groups", format!("must hold 1 to 1000 group names, got {n_groups}")));
    }
    let mut seen = HashMap::new();
    for (g, name) in h.groups.iter().enumerate() {
        let p = format!("topology.groups[{g}]");
        crate::validate::check_name(&p, name)?;
        if name.ends_with(|c: char| c.is_ascii_digit()) {
            return Err(SimError::spec(
                p,
                format!("must not end in a digit (its sources are {name}0, {name}1, ...), got {name:?}"),
            ));
        }
        if let Some(first) = seen.insert(name.as_str(), g) {
            return Err(SimError::spec(
                p,
                format!("duplicate group name {name:?} (first at topology.groups[{first}])"),
            ));
        }
    }
    list_len("topology.delays", &h.delays, n_groups, "group")?;
    one_of("topology", ("sources", h.sources.is_some()), ("counts", h.counts.is_some()))?;
    let counts = match (&h.counts, h.sources) {
        (Some(c), _) => {
            list_len("topology.counts", c, n_groups, "group")?;
            let counts = c
                .iter()
                .enumerate()
                .map(|(g, &n)| count(&format!("topology.counts[{g}]"), n, 0))
                .collect::<Result<Vec<_>, _>>()?;
            if counts.iter().sum::<usize>() == 0 {
                return Err(SimError::spec("topology.counts", "must add up to at least 1 source, got 0"));
            }
            counts
        }
        (None, Some(n)) => split(count("topology.sources", n, 1)?, n_groups),
        (None, None) => unreachable!("one_of checked"),
    };
    let total: usize = counts.iter().sum();
    if total > usize::try_from(MAX_COUNT).expect("fits") {
        return Err(SimError::spec("topology.counts", format!("must add up to at most {MAX_COUNT}, got {total}")));
    }
    one_of(
        "topology",
        ("access_rate", h.access_rate.is_some()),
        ("aggregate_access_rate", h.aggregate_access_rate.is_some()),
    )?;
    let (rate, rate_field) = match (h.access_rate, h.aggregate_access_rate) {
        (Some(r), _) => (r, "access_rate"),
        (None, Some(agg)) => {
            let n = i128::try_from(total).expect("fits");
            (RateValue(div_round_half_even(agg.0, n)), "aggregate_access_rate")
        }
        (None, None) => unreachable!("one_of checked"),
    };
    for (g, name) in h.groups.iter().enumerate() {
        nodes.extend((0..counts[g]).map(|i| host(format!("{name}{i}"))));
    }
    nodes.extend([host("sink".into()), router("r".into())]);
    push_link(
        NewLink {
            name: "bottleneck".into(),
            a: "r".into(),
            b: "sink".into(),
            rate: h.bottleneck_rate,
            delay: h.bottleneck_delay,
            queue: ("queue_ab", h.queue.as_ref()),
            origin: LinkOrigin { rate: ("bottleneck_rate", None), delay: ("bottleneck_delay", None), queue: "queue" },
        },
        links,
        origins,
    );
    for (g, name) in h.groups.iter().enumerate() {
        for i in 0..counts[g] {
            let source = format!("{name}{i}");
            push_link(
                NewLink {
                    name: source.clone(),
                    a: source,
                    b: "r".into(),
                    rate,
                    delay: h.delays[g],
                    queue: ("queue", h.access_queue.as_ref()),
                    origin: LinkOrigin { rate: (rate_field, None), delay: ("delays", Some(g)), queue: "access_queue" },
                },
                links,
                origins,
            );
        }
    }
    Ok(())
}

/// Routers `r0 .. r{hops}` chained by `bottleneck{h}`; long-path hosts `s{i}` on `r0`
/// and `c{i}` on the last router; cross hosts `xs{k}` on `r{h}`, `xc{k}` on `r{h+1}`.
/// Nodes: `s*`, `c*`, `xs*`, `xc*`, routers; links: bottlenecks, then access links
/// in the same order as the hosts.
fn parking_lot(
    p: &ParkingLotSpec,
    nodes: &mut Vec<NodeSpec>,
    links: &mut Vec<LinkSpec>,
    origins: &mut Vec<LinkOrigin>,
) -> Result<(), SimError> {
    let hops = count("topology.hops", p.hops, 1)?;
    let senders = count("topology.senders", p.senders.unwrap_or(1), 0)?;
    let cross = count("topology.cross", p.cross.unwrap_or(1), 0)?;
    if hops * cross > usize::try_from(MAX_COUNT).expect("fits") {
        return Err(SimError::spec(
            "topology.cross",
            format!("hops * cross must be at most {MAX_COUNT}, got {hops} * {cross}"),
        ));
    }
    one_of("topology", ("bottleneck_rate", p.bottleneck_rate.is_some()), ("hop_rates", p.hop_rates.is_some()))?;
    one_of("topology", ("bottleneck_delay", p.bottleneck_delay.is_some()), ("hop_delays", p.hop_delays.is_some()))?;
    if let Some(v) = &p.hop_rates {
        list_len("topology.hop_rates", v, hops, "hop")?;
    }
    if let Some(v) = &p.hop_delays {
        list_len("topology.hop_delays", v, hops, "hop")?;
    }
    nodes.extend((0..senders).map(|i| host(format!("s{i}"))));
    nodes.extend((0..senders).map(|i| host(format!("c{i}"))));
    nodes.extend((0..hops * cross).map(|k| host(format!("xs{k}"))));
    nodes.extend((0..hops * cross).map(|k| host(format!("xc{k}"))));
    nodes.extend((0..=hops).map(|h| router(format!("r{h}"))));
    for h in 0..hops {
        let (rate, rate_at) = match &p.hop_rates {
            Some(v) => (v[h], ("hop_rates", Some(h))),
            None => (p.bottleneck_rate.expect("one_of checked"), ("bottleneck_rate", None)),
        };
        let (delay, delay_at) = match &p.hop_delays {
            Some(v) => (v[h], ("hop_delays", Some(h))),
            None => (p.bottleneck_delay.expect("one_of checked"), ("bottleneck_delay", None)),
        };
        push_link(
            NewLink {
                name: format!("bottleneck{h}"),
                a: format!("r{h}"),
                b: format!("r{}", h + 1),
                rate,
                delay,
                queue: ("queue", p.queue.as_ref()),
                origin: LinkOrigin { rate: rate_at, delay: delay_at, queue: "queue" },
            },
            links,
            origins,
        );
    }
    let origin = LinkOrigin { rate: ("access_rate", None), delay: ("access_delay", None), queue: "access_queue" };
    let mut access = |host: String, router: String, host_first: bool| {
        let (a, b) = if host_first { (host.clone(), router) } else { (router, host.clone()) };
        push_link(
            NewLink {
                name: host,
                a,
                b,
                rate: p.access_rate,
                delay: p.access_delay,
                queue: ("queue", p.access_queue.as_ref()),
                origin,
            },
            links,
            origins,
        );
    };
    for i in 0..senders {
        access(format!("s{i}"), "r0".into(), true);
    }
    for i in 0..senders {
        access(format!("c{i}"), format!("r{hops}"), false);
    }
    for k in 0..hops * cross {
        access(format!("xs{k}"), format!("r{}", k / cross), true);
    }
    for k in 0..hops * cross {
        access(format!("xc{k}"), format!("r{}", k / cross + 1), false);
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Flow groups
// ---------------------------------------------------------------------------

pub use crate::spec::default_group;

/// A node-name pattern: literal text and `{i}`.
enum Piece<'a> {
    Text(&'a str),
    Index,
}

/// `pattern` cut at each `{i}`; anything else in braces is an error at `path`.
fn parse_pattern<'a>(path: &str, pattern: &'a str) -> Result<Vec<Piece<'a>>, SimError> {
    let mut pieces = Vec::new();
    let mut rest = pattern;
    while let Some(open) = rest.find(['{', '}']) {
        if rest[open..].starts_with("{i}") {
            if open > 0 {
                pieces.push(Piece::Text(&rest[..open]));
            }
            pieces.push(Piece::Index);
            rest = &rest[open + 3..];
        } else {
            let bad: String = rest[open..].chars().take_while(|&c| c != '}').chain(Some('}')).collect();
            let bad = if rest[open..].starts_with('}') { "}".to_owned() } else { bad };
            return Err(SimError::spec(
                path,
                format!("{bad:?} in {pattern:?} is not a placeholder; the only one is {{i}} (the flow's index)"),
            ));
        }
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest));
    }
    Ok(pieces)
}

fn fill(pieces: &[Piece<'_>], i: usize) -> String {
    let mut s = String::new();
    for p in pieces {
        match p {
            Piece::Text(t) => s.push_str(t),
            Piece::Index => {
                let _ = write!(s, "{i}");
            }
        }
    }
    s
}

/// Flow group `j` expanded onto `flows`.
fn flow_group(
    j: usize,
    g: &FlowGroupSpec,
    node_names: &HashSet<&str>,
    nodes: &[NodeSpec],
    flows: &mut Vec<FlowSpec>,
    origins: &mut Vec<(usize, String)>,
) -> Result<(), SimError> {
    let p = format!("flow_groups[{j}]");
    crate::validate::check_name(&format!("{p}.name"), &g.name)?;
    if let Some(group) = &g.group {
        crate::validate::check_name(&format!("{p}.group"), group)?;
    }
    let n = count(&format!("{p}.count"), g.count, 0)?;
    let first = count(&format!("{p}.first"), g.first.unwrap_or(0), 0)?;
    let src = parse_pattern(&format!("{p}.src"), &g.src)?;
    let dst = parse_pattern(&format!("{p}.dst"), &g.dst)?;
    let start = g.start.unwrap_or(TimeValue(0));
    let spacing = g.start_spacing.unwrap_or(TimeValue(0));
    if spacing.0 < 0 {
        return Err(SimError::spec(format!("{p}.start_spacing"), format!("must be >= 0, got {spacing}")));
    }
    let group = g.group.clone().unwrap_or_else(|| g.name.clone());
    for k in 0..n {
        let i = first + k;
        let name = format!("{}{i}", g.name);
        let ends = [("src", &src, &g.src), ("dst", &dst, &g.dst)].map(|(field, pieces, pattern)| {
            let node = fill(pieces, i);
            if node_names.contains(node.as_str()) {
                return Ok(node);
            }
            let listed: Vec<&str> = nodes.iter().take(10).map(|n| n.name.as_str()).collect();
            let more = if nodes.len() > 10 { format!(", ... ({} more)", nodes.len() - 10) } else { String::new() };
            Err(SimError::spec(
                format!("{p}.{field}"),
                format!(
                    "{pattern:?} gives {node:?} for flow {name:?} (i = {i}), which is not a node; nodes are: {}{more}",
                    listed.join(", ")
                ),
            ))
        });
        let [src_node, dst_node] = ends;
        let k128 = i128::try_from(k).expect("fits");
        flows.push(FlowSpec {
            name: Some(name.clone()),
            group: Some(group.clone()),
            src: src_node?,
            dst: dst_node?,
            start: (g.start.is_some() || spacing.0 > 0)
                .then(|| TimeValue(start.0.saturating_add(spacing.0.saturating_mul(k128)))),
            start_jitter: g.start_jitter,
            stop: g.stop,
            app: g.app.clone(),
            tcp: g.tcp.clone(),
        });
        origins.push((j, name));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> ScenarioSpec {
        ScenarioSpec::from_toml_str(text).unwrap()
    }

    const DUMBBELL: &str = r#"
simulation = { duration = "10s" }
[topology]
type = "dumbbell"
senders = 3
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
access_rate = "100Mbps"
access_delay = "1ms"
sender_delays = ["1ms", "10ms", "100ms"]
queue = { type = "red", max_p = 0.1 }
#T
[[flow_groups]]
name = "bulk"
count = 3
src = "s{i}"
dst = "c{i}"
start_spacing = "1s"
#G
"#;

    fn names<T>(items: &[T], f: impl Fn(&T) -> String) -> Vec<String> {
        items.iter().map(f).collect()
    }

    // --- Dumbbell --------------------------------------------------------------

    #[test]
    fn dumbbell_expands_to_named_nodes_links_and_flows() {
        let x = parse(DUMBBELL).expanded().unwrap();
        assert!(!x.has_templates());
        assert_eq!(names(&x.nodes, |n| n.name.clone()), ["s0", "s1", "s2", "c0", "c1", "c2", "r1", "r2"]);
        assert_eq!(x.nodes[6].kind, NodeKind::Router);
        let l = names(&x.links, |l| format!("{}:{}-{}", l.name.clone().unwrap(), l.a, l.b));
        assert_eq!(l, ["bottleneck:r1-r2", "s0:s0-r1", "s1:s1-r1", "s2:s2-r1", "c0:r2-c0", "c1:r2-c1", "c2:r2-c2"]);
        let delays: Vec<String> = x.links.iter().map(|l| l.delay.to_string()).collect();
        assert_eq!(delays, ["20ms", "1ms", "10ms", "100ms", "1ms", "1ms", "1ms"]);
        assert!(matches!(x.links[0].queue, Some(QueueSpec::Red(_))));
        assert!(x.links[1].queue.is_none());
        let f = names(&x.flows, |f| {
            format!("{}/{}:{}>{}@{}", f.name.clone().unwrap(), f.group.clone().unwrap(), f.src, f.dst, f.start.unwrap())
        });
        assert_eq!(f, ["bulk0/bulk:s0>c0@0ns", "bulk1/bulk:s1>c1@1s", "bulk2/bulk:s2>c2@2s"]);
        x.validate().unwrap();
    }

    #[test]
    fn a_groups_stop_is_every_flows() {
        let x = parse(&DUMBBELL.replace("#G", "stop = \"5s\"")).expanded().unwrap();
        let stops: Vec<String> = x.flows.iter().map(|f| f.stop.unwrap().to_string()).collect();
        assert_eq!(stops, ["5s", "5s", "5s"]);
        x.validate().unwrap();
        assert!(parse(DUMBBELL).expanded().unwrap().flows.iter().all(|f| f.stop.is_none()));
    }

    #[test]
    fn written_out_items_follow_the_expanded_ones_and_keep_their_default_names() {
        let text = DUMBBELL.replace(
            "#G",
            "[[nodes]]\nname = \"x\"\nkind = \"host\"\n[[links]]\na = \"x\"\nb = \"r1\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
             [[flows]]\nsrc = \"x\"\ndst = \"c0\"\n",
        );
        let x = parse(&text).expanded().unwrap();
        assert_eq!(x.nodes.last().unwrap().name, "x");
        assert_eq!(x.links.last().unwrap().name.as_deref(), Some("link0"));
        assert_eq!(x.flows.last().unwrap().name.as_deref(), Some("flow0"));
        assert_eq!(x.flows.len(), 4);
        x.validate().unwrap();
    }

    #[test]
    fn a_spec_without_templates_expands_to_itself() {
        let spec = parse(crate::spec::tests::BASE);
        assert!(!spec.has_templates());
        assert_eq!(spec.expanded().unwrap().to_json(), spec.to_json());
    }

    // --- Hetero RTT ----------------------------------------------------------------

    const HETERO: &str = r#"
simulation = { duration = "10s" }
[topology]
type = "hetero_rtt"
groups = ["fragile", "average", "robust"]
sources = 7
delays = ["145ms", "45ms", "5ms"]
bottleneck_rate = "10Mbps"
bottleneck_delay = "5ms"
aggregate_access_rate = "300Mbps"
queue = { type = "red" }
"#;

    #[test]
    fn hetero_rtt_splits_sources_over_groups_with_their_delays() {
        let x = parse(HETERO).expanded().unwrap();
        let n = names(&x.nodes, |n| n.name.clone());
        assert_eq!(n, ["fragile0", "fragile1", "fragile2", "average0", "average1", "robust0", "robust1", "sink", "r"]);
        assert_eq!(x.links[0].name.as_deref(), Some("bottleneck"));
        assert_eq!((x.links[0].a.as_str(), x.links[0].b.as_str()), ("r", "sink"));
        // The queue is the data direction's only.
        assert!(x.links[0].queue.is_none() && matches!(x.links[0].queue_ab, Some(QueueSpec::Red(_))));
        let d: Vec<String> = x.links[1..].iter().map(|l| format!("{}:{}", l.a, l.delay)).collect();
        assert_eq!(
            d,
            [
                "fragile0:145ms",
                "fragile1:145ms",
                "fragile2:145ms",
                "average0:45ms",
                "average1:45ms",
                "robust0:5ms",
                "robust1:5ms"
            ]
        );
        // 300 Mb/s / 7 = 42857142.86 bit/s, rounded.
        assert_eq!(x.links[1].rate, RateValue(42_857_143));
        assert!(x.flows.is_empty());
    }

    #[test]
    fn rounding_of_the_aggregate_rate_is_half_to_even() {
        assert_eq!(div_round_half_even(5, 2), 2);
        assert_eq!(div_round_half_even(7, 2), 4);
        assert_eq!(div_round_half_even(10, 4), 2);
        assert_eq!(div_round_half_even(11, 4), 3);
        assert_eq!(div_round_half_even(9, 4), 2);
    }

    // --- Parking lot -----------------------------------------------------------------

    #[test]
    fn parking_lot_chains_routers_and_puts_cross_traffic_on_each_hop() {
        let x = parse(
            r#"
simulation = { duration = "10s" }
[topology]
type = "parking_lot"
hops = 3
senders = 2
cross = 2
bottleneck_rate = "10Mbps"
hop_delays = ["10ms", "20ms", "30ms"]
access_rate = "100Mbps"
access_delay = "1ms"
[[flow_groups]]
name = "long"
count = 2
src = "s{i}"
dst = "c{i}"
[[flow_groups]]
name = "cross"
count = 6
src = "xs{i}"
dst = "xc{i}"
"#,
        )
        .expanded()
        .unwrap();
        assert_eq!(x.nodes.len(), 2 + 2 + 6 + 6 + 4);
        let b: Vec<String> =
            x.links[..3].iter().map(|l| format!("{}:{}-{}:{}", l.name.clone().unwrap(), l.a, l.b, l.delay)).collect();
        assert_eq!(b, ["bottleneck0:r0-r1:10ms", "bottleneck1:r1-r2:20ms", "bottleneck2:r2-r3:30ms"]);
        let at =
            |name: &str| x.links.iter().find(|l| l.name.as_deref() == Some(name)).map(|l| format!("{}-{}", l.a, l.b));
        assert_eq!(at("s1").unwrap(), "s1-r0");
        assert_eq!(at("c1").unwrap(), "r3-c1");
        // Cross pair k = h * cross + j crosses hop h only.
        assert_eq!(at("xs3").unwrap(), "xs3-r1");
        assert_eq!(at("xc3").unwrap(), "r2-xc3");
        assert_eq!(at("xc5").unwrap(), "r3-xc5");
        assert_eq!(x.flows.len(), 8);
        x.validate().unwrap();
    }

    // --- Errors name the template's field -------------------------------------------

    /// `(change to DUMBBELL, path, fragment of the message)`.
    #[rustfmt::skip]
    const ERRORS: &[(&str, &str, &str, &str)] = &[
        ("senders = 3", "senders = 0", "topology.senders", "must be an integer >= 1 and <= 100000, got 0"),
        ("senders = 3", "senders = -2", "topology.senders", "must be an integer >= 1"),
        ("#T", "receivers = 1000000", "topology.receivers", "<= 100000, got 1000000"),
        ("[\"1ms\", \"10ms\", \"100ms\"]", "[\"1ms\", \"10ms\"]", "topology.sender_delays", "must have one entry per sender (3), got 2"),
        ("access_delay = \"1ms\"", "", "topology", "missing field: give access_delay or receiver_delays"),
        ("type = \"dumbbell\"", "type = \"star\"", "topology.type", "unknown variant `star`, expected one of `dumbbell`, `hetero_rtt`, `parking_lot`"),
        ("#T", "sendrs = 1", "topology.sendrs", "unknown field `sendrs`"),
        ("count = 3", "count = -1", "flow_groups[0].count", "must be an integer >= 0"),
        ("dst = \"c{i}\"", "dst = \"d{i}\"", "flow_groups[0].dst", "\"d{i}\" gives \"d0\" for flow \"bulk0\" (i = 0), which is not a node; nodes are: s0, s1, s2, c0"),
        ("count = 3", "count = 4", "flow_groups[0].src", "\"s{i}\" gives \"s3\" for flow \"bulk3\" (i = 3), which is not a node"),
        ("src = \"s{i}\"", "src = \"s{j}\"", "flow_groups[0].src", "\"{j}\" in \"s{j}\" is not a placeholder; the only one is {i}"),
        ("src = \"s{i}\"", "src = \"s{i}}\"", "flow_groups[0].src", "\"}\" in \"s{i}}\" is not a placeholder"),
        ("name = \"bulk\"", "name = \"a,b\"", "flow_groups[0].name", "must not contain a comma"),
        // Found in the expanded scenario, reported at the template's field.
        ("max_p = 0.1", "max_p = 2.0", "topology.queue.max_p", "(in links[0], made by the topology)"),
        ("\"100ms\"]", "\"-1ms\"]", "topology.sender_delays[2]", "must be >= 0"),
        ("access_rate = \"100Mbps\"", "access_rate = \"0bps\"", "topology.access_rate", "must be > 0"),
        ("start_spacing = \"1s\"", "start_spacing = \"6s\"", "flow_groups[0].start", "(in flow \"bulk2\", flows[2])"),
        ("#G", "tcp = { mss = 0 }", "flow_groups[0].tcp.mss", "(in flow \"bulk0\", flows[0])"),
        ("#G", "stop = \"1500ms\"", "flow_groups[0].stop", "(in flow \"bulk2\", flows[2])"),
        ("dst = \"c{i}\"", "dst = \"r1\"", "flow_groups[0].dst", "\"r1\" is a router"),
        ("#G", "[[flows]]\nname = \"bulk1\"\nsrc = \"s0\"\ndst = \"c0\"", "flows[0].name", "duplicate flow name \"bulk1\""),
    ];

    #[test]
    fn template_errors_name_the_field_and_what_is_allowed() {
        for &(from, to, path, fragment) in ERRORS {
            assert!(DUMBBELL.contains(from), "{from:?} not in DUMBBELL");
            let text = DUMBBELL.replacen(from, to, 1);
            let Err(err) = ScenarioSpec::from_toml_str(&text).and_then(|s| s.validate()) else {
                panic!("{from:?} -> {to:?}: accepted");
            };
            assert_eq!(err.path(), path, "{from:?} -> {to:?}: {err}");
            assert!(err.to_string().contains(fragment), "{from:?} -> {to:?}: {err}");
        }
    }

    #[rustfmt::skip]
    const HETERO_ERRORS: &[(&str, &str, &str, &str)] = &[
        ("[\"145ms\", \"45ms\", \"5ms\"]", "[\"145ms\", \"45ms\"]", "topology.delays", "must have one entry per group (3), got 2"),
        ("sources = 7", "counts = [1, 2]", "topology.counts", "must have one entry per group (3), got 2"),
        ("sources = 7", "counts = [0, 0, 0]", "topology.counts", "must add up to at least 1 source"),
        ("sources = 7", "", "topology", "missing field: give sources or counts"),
        ("sources = 7", "sources = 7\ncounts = [1, 1, 1]", "topology.counts", "give sources or counts, not both"),
        ("\"robust\"]", "\"robust2\"]", "topology.groups[2]", "must not end in a digit"),
        ("\"robust\"]", "\"fragile\"]", "topology.groups[2]", "duplicate group name \"fragile\""),
        ("aggregate_access_rate = \"300Mbps\"", "", "topology", "missing field: give access_rate or aggregate_access_rate"),
        ("\"5ms\"]", "\"5000s\"]", "topology.delays[2]", "must be >= 0 and <= 1000s"),
    ];

    #[test]
    fn hetero_rtt_errors_name_the_field() {
        for &(from, to, path, fragment) in HETERO_ERRORS {
            assert!(HETERO.contains(from), "{from:?} not in HETERO");
            let text = HETERO.replacen(from, to, 1);
            let Err(err) = ScenarioSpec::from_toml_str(&text).and_then(|s| s.validate()) else {
                panic!("{from:?} -> {to:?}: accepted");
            };
            assert_eq!(err.path(), path, "{from:?} -> {to:?}: {err}");
            assert!(err.to_string().contains(fragment), "{from:?} -> {to:?}: {err}");
        }
    }

    #[test]
    fn memory_is_estimated_on_the_expansion() {
        let spec = parse(DUMBBELL);
        let plain = spec.expanded().unwrap();
        assert_eq!(format!("{:?}", spec.memory_estimate()), format!("{:?}", plain.memory_estimate()));
    }

    #[test]
    fn default_group_strips_a_trailing_index() {
        for (name, group) in [
            ("fragile12", "fragile"),
            ("fragile-12", "fragile"),
            ("flow0", "flow"),
            ("a_b.3", "a_b"),
            ("ECN-ON", "ECN-ON"),
            ("42", "42"),
            ("-7", "-7"),
            ("x1y", "x1y"),
        ] {
            assert_eq!(default_group(name), group, "{name}");
        }
    }

    #[test]
    fn too_many_group_flows_are_refused_before_any_is_made() {
        let mut text =
            String::from("simulation = { duration = \"1s\" }\nnodes = [{ name = \"a\", kind = \"host\" }]\n");
        for _ in 0..11 {
            text.push_str("[[flow_groups]]\nname = \"f\"\ncount = 100000\nsrc = \"a\"\ndst = \"a\"\n");
        }
        let err = parse(&text).expanded().unwrap_err();
        assert_eq!(err.path(), "flow_groups");
        assert!(err.to_string().contains("add up to 1100000 flows; at most 1000000"), "{err}");
    }
}
