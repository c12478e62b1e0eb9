//! Memory: an estimate of what a scenario needs before it runs, and an
//! account of what a running simulation holds, so that a run that would not
//! fit is refused with a message instead of being killed by the allocator.
//!
//! The estimate ([`ScenarioSpec::memory_estimate`]) counts what grows with
//! the scenario: the route table (one entry per pair of nodes), the ports,
//! the `[[flows]]` connections, the sampled time series and the connections
//! an open-loop workload (web sessions) opens at its rate. It is a lower
//! bound of the core's own heap, within a small factor; what the model does
//! at run time (queues filling, closed-loop workloads) is watched by the
//! running account instead ([`Simulation::memory_in_use`]), which the run
//! loop compares with the limit every few thousand events, including the
//! largest single reallocation the next growth step could ask for.

use std::fmt::Write as _;
use std::mem::size_of;

use crate::app::dist::Dist;
use crate::app::websessions::WebParams;
use crate::app::Record;
use crate::error::SimError;
use crate::flow::{Endpoint, Flow, FlowFinal, UdpFlow};
use crate::link::Port;
use crate::qdisc::QueuedPacket;
use crate::sim::Simulation;
use crate::spec::{ModelSpec, ScenarioSpec};
use crate::tcp::TcpCounters;
use crate::trace::TraceRecord;

/// Bytes of one entry of the routers' route table.
const ROUTE_BYTES: u64 = size_of::<u32>() as u64;
/// Bytes of routing state per node (where it is reached from).
const NODE_ROUTE_BYTES: u64 = 16;
/// Bytes one connection keeps for the whole run (its `Flow`, final counters,
/// warm-up snapshot), plus its endpoint pair while it is open.
pub(crate) const CONNECTION_BYTES: u64 = (size_of::<Flow>()
    + size_of::<FlowFinal>()
    + 2 * size_of::<TcpCounters>()
    + 2 * size_of::<Endpoint>()
    + size_of::<Record>()) as u64;
/// Bytes a workload connection keeps for the whole run without
/// `simulation.connection_rows`: its record (its state is reused once it ends).
pub(crate) const RECORD_BYTES: u64 = size_of::<Record>() as u64;
/// Bytes the core's series store holds per flow row (9 columns of 8 bytes; the sample's
/// time is stored once per sample: `stats/series.rs`).
pub(crate) const FLOW_SAMPLE_BYTES: u64 = 9 * 8;
/// Bytes the core's series store holds per queue row (packets and bytes; the port's id is
/// stored once, the AQM estimates only for the rows that have them: not counted here).
pub(crate) const QUEUE_SAMPLE_BYTES: u64 = 2 * 8;
/// Bytes of one flow row of the result table, a column of 8 bytes per row each (10).
pub(crate) const FLOW_ROW_BYTES: u64 = 10 * 8;
/// Bytes of one queue row of the result table (7 columns of 8 bytes).
pub(crate) const QUEUE_ROW_BYTES: u64 = 7 * 8;

/// One part of a [`MemoryEstimate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryPart {
    /// The scenario field that makes this part grow (`nodes`, `simulation.sample_interval`, ...).
    pub path: String,
    /// What it is, in words.
    pub what: String,
    /// Bytes.
    pub bytes: u64,
}

/// What a scenario needs, by part, largest first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// The parts, largest first.
    pub parts: Vec<MemoryPart>,
}

impl MemoryEstimate {
    /// Total bytes.
    #[must_use]
    pub fn total_bytes(&self) -> u64 {
        self.parts.iter().fold(0u64, |a, p| a.saturating_add(p.bytes))
    }

    /// The error for a run that needs more than `limit` bytes, naming the
    /// largest part's field; `None` if it fits.
    #[must_use]
    pub fn check(&self, limit: u64) -> Option<SimError> {
        let total = self.total_bytes();
        if total <= limit {
            return None;
        }
        let mut msg = format!(
            "the run would need about {} of memory, more than the {} allowed (max_memory): ",
            fmt_bytes(total),
            fmt_bytes(limit)
        );
        for (i, p) in self.parts.iter().take(3).enumerate() {
            let sep = if i == 0 { "" } else { "; " };
            let _ = write!(msg, "{sep}{} {} ({})", p.what, fmt_bytes(p.bytes), p.path);
        }
        Some(SimError::resource(self.parts[0].path.clone(), msg))
    }
}

pub use crate::error::fmt_bytes;

#[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn f64_to_bytes(x: f64) -> u64 {
    if x.is_finite() && x > 0.0 {
        x.min(u64::MAX as f64) as u64
    } else if x.is_infinite() && x > 0.0 {
        u64::MAX
    } else {
        0
    }
}

/// A typical value of a count distribution (its mean, else its lower bound, at least 1).
fn typical(d: &Dist) -> f64 {
    d.mean().filter(|m| m.is_finite()).unwrap_or_else(|| d.lower_bound()).max(1.0)
}

impl ScenarioSpec {
    /// What this scenario needs in memory, by part, largest first (of what its
    /// templates expand into, if it has any). The spec must have passed
    /// [`ScenarioSpec::validate`].
    #[must_use]
    #[allow(clippy::cast_precision_loss)]
    pub fn memory_estimate(&self) -> MemoryEstimate {
        if self.has_templates() {
            // What the templates expand into is what runs (validated, so expansion succeeds).
            if let Ok(plain) = self.expanded() {
                return plain.memory_estimate();
            }
        }
        let mut parts = Vec::new();
        let mut add = |path: String, what: String, bytes: u64| {
            if bytes > 0 {
                parts.push(MemoryPart { path, what, bytes });
            }
        };
        let n = self.nodes.len() as u64;
        let core = self.route_core_size();
        add(
            "nodes".into(),
            format!("routes of {n} nodes ({core} routers and multi-link hosts)"),
            core.saturating_mul(core).saturating_mul(ROUTE_BYTES).saturating_add(n * NODE_ROUTE_BYTES),
        );
        let ports = 2 * self.links.len() as u64;
        add("links".into(), format!("{ports} link directions"), ports * size_of::<Port>() as u64);
        let conns = self.flows.len() as u64;
        add("flows".into(), format!("{conns} flows"), conns.saturating_mul(CONNECTION_BYTES));

        let duration_s = self.simulation.duration.0 as f64 * 1e-9;
        // Connections open at once, for the series: the flows, and one per workload client.
        let mut live = self.flows.len() as u64;
        for (j, app) in self.apps.iter().enumerate() {
            live += app.clients.len() as u64;
            let start_s = app.start.map_or(0.0, |s| s.0 as f64 * 1e-9);
            let active_s = (duration_s - start_s).max(0.0);
            let path = format!("apps[{j}].model");
            match &app.model {
                ModelSpec::Websessions { session_rate, offered_load, pages, objects, .. } => {
                    let pages = pages.as_ref().map_or(5.0, |d| typical(&Dist::from_spec(d)));
                    let objects = objects.as_ref().map_or(4.0, |d| typical(&Dist::from_spec(d)));
                    let (rate, field) = match (session_rate, offered_load) {
                        (Some(r), _) => (*r, "session_rate"),
                        (None, Some(_)) => (self.offered_session_rate(j), "offered_load"),
                        (None, None) => (0.0, "session_rate"),
                    };
                    let sessions = rate * active_s;
                    let conns = sessions * pages * objects;
                    // Without connection rows an ended connection leaves only its record.
                    let per_conn =
                        if self.simulation.connection_rows == Some(true) { CONNECTION_BYTES } else { RECORD_BYTES };
                    add(
                        format!("{path}.{field}"),
                        format!("about {} web connections", fmt_count(conns)),
                        f64_to_bytes(conns * per_conn as f64),
                    );
                }
                ModelSpec::Cbr { .. } | ModelSpec::Onoff { .. } => {
                    add(path, "UDP sources".into(), app.clients.len() as u64 * size_of::<UdpFlow>() as u64);
                }
                _ => add(
                    path,
                    "workload connections".into(),
                    ((app.clients.len() * per_client(&app.model, app.servers.len())) as u64)
                        .saturating_mul(CONNECTION_BYTES),
                ),
            }
        }
        if let Some(interval) = self.simulation.sample_interval {
            let samples = (self.simulation.duration.0 / interval.0.max(1)) as u64 + 1;
            // The core's store, and the result tables written from it at the end (one value
            // per row and column).
            let row = live
                .saturating_mul(FLOW_SAMPLE_BYTES + FLOW_ROW_BYTES)
                .saturating_add(ports * (QUEUE_SAMPLE_BYTES + QUEUE_ROW_BYTES));
            add(
                "simulation.sample_interval".into(),
                format!("time series of {samples} samples"),
                samples.saturating_mul(row),
            );
        }
        parts.sort_by_key(|p| std::cmp::Reverse(p.bytes));
        MemoryEstimate { parts }
    }

    /// The TCP connections open at once as [`ScenarioSpec::memory_estimate`] counts them: the
    /// `[[flows]]`, and one per client of a closed-loop workload (not web sessions, whose
    /// connections follow their arrival rate, nor UDP sources). The build reserves room for them.
    pub(crate) fn connections_open_at_once(&self) -> usize {
        let clients: usize = self.apps.iter().map(|a| a.clients.len() * per_client(&a.model, a.servers.len())).sum();
        self.flows.len() + clients
    }

    /// Nodes in the core of the route table ([`crate::node`]): routers, and
    /// hosts that do not have exactly one link, to a router.
    fn route_core_size(&self) -> u64 {
        use crate::spec::NodeKind;
        use std::collections::HashMap;
        let mut degree: HashMap<&str, (bool, u32, bool)> =
            self.nodes.iter().map(|n| (n.name.as_str(), (n.kind == NodeKind::Host, 0, false))).collect();
        let is_host = |d: &HashMap<&str, (bool, u32, bool)>, name: &str| d.get(name).is_some_and(|x| x.0);
        for l in &self.links {
            for (me, peer) in [(&l.a, &l.b), (&l.b, &l.a)] {
                let peer_is_host = is_host(&degree, peer);
                if let Some(x) = degree.get_mut(me.as_str()) {
                    x.1 += 1;
                    x.2 |= peer_is_host;
                }
            }
        }
        degree.values().filter(|&&(host, links, to_host)| !(host && links == 1 && !to_host)).count() as u64
    }

    /// The session rate an `offered_load` web-session workload runs at.
    fn offered_session_rate(&self, j: usize) -> f64 {
        let app = &self.apps[j];
        let ModelSpec::Websessions { offered_load: Some(load), .. } = &app.model else { return 0.0 };
        let cfg = self.resolved_app_tcp(j);
        let Ok(link) = usize::try_from(load.link) else { return 0.0 };
        let Some(link) = self.links.get(link) else { return 0.0 };
        #[allow(clippy::cast_precision_loss)]
        let rate = link.rate.0 as f64;
        let params = WebParams::from_model(&app.model);
        params.offered_session_rate(load.percent, rate, &cfg)
    }
}

#[allow(clippy::cast_precision_loss)]
fn fmt_count(x: f64) -> String {
    if x >= 1e6 {
        format!("{x:.1e}")
    } else {
        format!("{}", f64_to_bytes(x.round()))
    }
}

/// Heap bytes of a vector's allocation.
fn vec_bytes<T>(v: &Vec<T>) -> u64 {
    (v.capacity() * size_of::<T>()) as u64
}

/// What a running simulation holds, and the part that grows most.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct InUse {
    /// Bytes held now.
    pub(crate) bytes: u64,
    /// The largest single allocation the next growth step may ask for.
    pub(crate) next_growth: u64,
    /// The scenario field of the largest part.
    pub(crate) path: &'static str,
    /// What the largest part is.
    pub(crate) what: &'static str,
}

impl Simulation {
    /// Bytes held by the simulation's growing state (connections, records,
    /// time series, packets in flight, traces), and the part that holds most.
    pub(crate) fn memory_in_use(&self) -> InUse {
        let in_flight = self.cons.sent.saturating_sub(self.cons.delivered + self.cons.dropped);
        let parts: [(&'static str, &'static str, u64); 8] = [
            ("nodes", "route table", self.routes.heap_bytes()),
            (
                self.connection_path,
                "connections",
                vec_bytes(&self.flows)
                    + vec_bytes(&self.endpoints)
                    + self.flows.len() as u64 * (size_of::<FlowFinal>() + 2 * size_of::<TcpCounters>()) as u64
                    // With `connection_rows`: the rows of ended workload connections.
                    + vec_bytes(&self.ended)
                    + self.ended.len() as u64 * size_of::<FlowFinal>() as u64,
            ),
            (self.connection_path, "records", vec_bytes(&self.records) + vec_bytes(&self.udp)),
            // Handed over by `drain_records`: the caller keeps them, so they still count.
            (self.connection_path, "records handed over", self.records_drained_bytes),
            ("simulation.sample_interval", "time series", self.series.heap_bytes()),
            // Queued and propagating packets. The pool keeps a slot per packet of the largest
            // flight so far; queue deques hold a 32-byte entry per packet, and may hold twice as
            // many slots (wires hold none: their packets are threaded through the pool), so this
            // counts a queue entry per packet on a wire too: a bound, not the exact figure.
            (
                "links",
                "packets in flight",
                self.packets.heap_bytes() as u64 + in_flight * 2 * size_of::<QueuedPacket>() as u64,
            ),
            ("record_sent_packets", "packet tap", self.tap.as_ref().map_or(0, vec_bytes)),
            ("trace", "trace records", self.trace_pending() as u64 * size_of::<TraceRecord>() as u64),
        ];
        let biggest = parts.iter().max_by_key(|p| p.2).expect("parts");
        InUse {
            bytes: parts.iter().map(|p| p.2).sum(),
            // A vector that is full doubles: the biggest part may ask for as much again.
            next_growth: biggest.2,
            path: biggest.0,
            what: biggest.1,
        }
    }

    /// The error for a simulation whose memory outgrew `limit`, if it did.
    pub(crate) fn memory_error(&self, limit: u64) -> Option<SimError> {
        let m = self.memory_in_use();
        if m.bytes.saturating_add(m.next_growth) <= limit {
            return None;
        }
        Some(SimError::resource(
            m.path,
            format!(
                "stopped at t = {}: the run holds {} ({} {}), and growing further would pass the {} allowed \
                 (max_memory); results up to here are kept",
                self.now(),
                fmt_bytes(m.bytes),
                m.what,
                fmt_bytes(m.next_growth),
                fmt_bytes(limit)
            ),
        ))
    }
}

/// `(name, byte offset, length)` of the field `$t.$path` (a path such as `tcp.seq` reaches
/// into a nested struct), for [`assert_in_line`]; the length is the size of the field's type,
/// so a field whose type grows is checked as it is now.
/// Connections a client of a closed-loop workload keeps open at once: one (an incast client:
/// one per server but itself, counted as `servers` here, an upper bound); none for web
/// sessions (their connections follow their arrival rate) and UDP sources.
fn per_client(m: &ModelSpec, servers: usize) -> usize {
    match m {
        ModelSpec::Websessions { .. } | ModelSpec::Cbr { .. } | ModelSpec::Onoff { .. } => 0,
        ModelSpec::Incast { .. } => servers,
        _ => 1,
    }
}

#[cfg(test)]
macro_rules! field {
    ($t:ty, $($f:ident).+) => {
        (
            stringify!($($f).+),
            ::std::mem::offset_of!($t, $($f).+),
            $crate::memory::size_of_field(|s: &$t| &s.$($f).+),
        )
    };
}
#[cfg(test)]
pub(crate) use field;

/// The size of the field `at` reads (a closure `|s| &s.field`), without a value of `S`.
#[cfg(test)]
pub(crate) fn size_of_field<S, F>(_at: fn(&S) -> &F) -> usize {
    std::mem::size_of::<F>()
}

/// Layout tests' one rule: each field `(name, byte offset, length)` lies within cache line
/// `line` (64 bytes from the start of its struct, which is line-aligned) and straddles none.
#[cfg(test)]
pub(crate) fn assert_in_line(fields: &[(&str, usize, usize)], line: usize) {
    for &(name, start, len) in fields {
        let (first, last) = (start / 64, (start + len - 1) / 64);
        assert_eq!(first, last, "{name} (bytes {start}..{}) straddles two cache lines", start + len);
        assert_eq!(first, line, "{name} (bytes {start}..{}) is not in line {line}", start + len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::tests::{edit, BASE};

    fn estimate(text: &str) -> MemoryEstimate {
        let spec = ScenarioSpec::from_toml_str(text).unwrap();
        spec.validate().unwrap();
        spec.memory_estimate()
    }

    /// `field!` names a field path, its offset (nested paths add up) and its type's size;
    /// `assert_in_line` rejects a field that straddles two lines or sits in another.
    #[test]
    fn field_gives_path_offset_and_size_and_the_line_rule_holds_them() {
        #[repr(C)]
        struct Inner {
            a: u32,
            b: [u64; 2],
        }
        #[repr(C, align(64))]
        struct Outer {
            x: u8,
            inner: Inner,
            y: [u8; 40],
            z: u64,
        }
        assert_eq!(field!(Outer, x), ("x", 0, 1));
        assert_eq!(field!(Outer, inner.b), ("inner.b", 16, 16));
        assert_eq!(field!(Outer, z), ("z", 72, 8));
        assert_in_line(&[field!(Outer, x), field!(Outer, inner.a), field!(Outer, inner.b)], 0);
        assert_in_line(&[field!(Outer, z)], 1);
        let straddles = std::panic::catch_unwind(|| assert_in_line(&[field!(Outer, y)], 0));
        assert!(straddles.is_err(), "y is bytes 32..72");
        assert!(std::panic::catch_unwind(|| assert_in_line(&[field!(Outer, z)], 0)).is_err());
    }

    #[test]
    fn bytes_are_written_with_decimal_units() {
        assert_eq!(fmt_bytes(999), "999 B");
        assert_eq!(fmt_bytes(10_200_000_000), "10.2 GB");
        assert_eq!(fmt_bytes(1_500), "1.5 kB");
    }

    #[test]
    fn the_route_table_is_quadratic_in_routers_only() {
        let base = estimate(BASE);
        let route = base.parts.iter().find(|p| p.path == "nodes").unwrap();
        // BASE: one router, three hosts each with one link to it.
        assert_eq!(route.bytes, ROUTE_BYTES + 4 * NODE_ROUTE_BYTES);
        // 50,000 routers in a chain: 10 GB of routes.
        let mut spec = ScenarioSpec::from_toml_str(BASE).unwrap();
        let node = spec.nodes[2].clone();
        assert_eq!(node.kind, crate::spec::NodeKind::Router);
        spec.nodes = (0..50_000).map(|i| crate::spec::NodeSpec { name: format!("n{i}"), ..node.clone() }).collect();
        spec.links.clear();
        spec.flows.clear();
        let e = spec.memory_estimate();
        assert_eq!(e.parts[0].path, "nodes");
        assert_eq!(e.parts[0].bytes, 50_000 * 50_000 * 4 + 50_000 * NODE_ROUTE_BYTES);
        let err = e.check(4_000_000_000).unwrap();
        assert_eq!(err.path(), "nodes");
        assert!(err.to_string().contains("about 10.0 GB"), "{err}");
        assert!(err.to_string().contains("more than the 4.0 GB allowed"), "{err}");
        assert!(e.check(20_000_000_000).is_none());
        // 50,000 hosts on one router: linear.
        let host = spec.nodes[0].clone();
        let mut hosts = vec![crate::spec::NodeSpec { name: "r".into(), ..node.clone() }];
        hosts.extend((0..50_000).map(|i| crate::spec::NodeSpec {
            name: format!("h{i}"),
            kind: crate::spec::NodeKind::Host,
            ..host.clone()
        }));
        spec.nodes = hosts;
        let link = ScenarioSpec::from_toml_str(BASE).unwrap().links[0].clone();
        spec.links =
            (0..50_000).map(|i| crate::spec::LinkSpec { a: format!("h{i}"), b: "r".into(), ..link.clone() }).collect();
        let e = spec.memory_estimate();
        let route = e.parts.iter().find(|p| p.path == "nodes").unwrap();
        assert_eq!(route.bytes, ROUTE_BYTES + 50_001 * NODE_ROUTE_BYTES);
    }

    #[test]
    fn the_series_counts_every_sample() {
        // 10 s at 1 us: 10^7 samples of 3 flows... and 6 queue rows.
        let e = estimate(&edit(&[("sample_interval = \"10ms\"", "sample_interval = \"1us\"")]));
        let p = &e.parts[0];
        assert_eq!(p.path, "simulation.sample_interval");
        // Per flow row 72 B in the store and 80 in the table; per queue row 16 and 56.
        assert_eq!(p.bytes, (10_000_000 + 1) * (2 * (72 + 80) + 6 * (16 + 56)));
    }

    #[test]
    fn open_loop_web_sessions_count_their_connections() {
        let e = estimate(&edit(&[(
            "#F1",
            "[[apps]]\nclients = [\"h1\"]\nservers = [\"h3\"]\nmodel = { type = \"websessions\", session_rate = 1e7 }",
        )]));
        let p = &e.parts[0];
        assert_eq!(p.path, "apps[0].model.session_rate");
        // 1e7/s x 10 s x 5 pages x 4 objects = 2e9 connections, each leaving its record.
        assert!(p.what.contains("2.0e9"), "{}", p.what);
        assert_eq!(p.bytes, 2_000_000_000 * RECORD_BYTES);
        // With a `flows` row per connection, each keeps its state too.
        let rows = estimate(&edit(&[
            (
                "#F1",
                "[[apps]]\nclients = [\"h1\"]\nservers = [\"h3\"]\nmodel = { type = \"websessions\", session_rate = 1e7 }",
            ),
            ("#SIM", "connection_rows = true"),
        ]));
        assert_eq!(rows.parts[0].bytes, 2_000_000_000 * CONNECTION_BYTES);
    }
}
