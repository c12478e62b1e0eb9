//! Nodes and static routes.
//!
//! Routes are fewest-hop paths on which packets transit routers only. Among
//! equal-length paths the egress port with the lowest id wins (ports are
//! numbered in link order, `a -> b` before `b -> a`), so routes depend only on
//! the scenario.
//!
//! The table is linear in the links. Most hosts are *stubs*: one link, to a
//! router. A stub sends everything on its one port, and is reached through
//! its router, so only the *core* (routers, and hosts with several links or
//! a link to another host) needs a table: `core × core` egress ports, built
//! by one breadth-first search per core node over the core alone. A dumbbell
//! of 10,000 flows has a core of two routers and a table of four entries.
//!
//! Why this is the same routing as a table over every pair of nodes: a path
//! to a stub `d` behind router `g` is a path to `g` and then `g -> d`, since
//! `d` has no other link, so the hop counts towards `d` are those towards `g`
//! plus one everywhere but at `d` itself, and the lowest-id tie-break picks
//! the same port. The unit tests check this against the dense table on
//! random topologies.

use std::collections::VecDeque;

use crate::ids::{NodeId, PortId};

/// A host or router.
#[derive(Debug)]
pub(crate) struct Node {
    pub(crate) name: String,
    pub(crate) is_host: bool,
}

/// Sentinel: no route (or no port).
pub(crate) const NO_ROUTE: u32 = u32::MAX;

/// How one node is routed to and from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// A host with one link, to a router: it sends on `up`, is reached from
    /// core node `router` (a core index) on `down`.
    Stub { up: u32, down: u32, router: u32 },
    /// A router, or a host with several links or a link to a host: row and
    /// column `index` of the core table.
    Core { index: u32, host: bool },
}

/// Static routes: the egress port from any node towards any host.
#[derive(Debug, Default)]
pub(crate) struct Routes {
    place: Vec<Place>,
    /// The core nodes, by core index.
    core: Vec<NodeId>,
    /// `table[from * core.len() + to]`: the egress port from core node `from`
    /// towards core node `to` (a router, or a host that is not a stub).
    table: Vec<u32>,
    /// `last_hop[to]`: for a stub host, its router's node id and the port from that router
    /// down to it; `(NO_ROUTE, NO_ROUTE)` for other nodes. The last hop of most paths (a
    /// router forwarding to one of its stubs) is read here in one load and one comparison.
    last_hop: Vec<(u32, u32)>,
}

/// One direction of a link, as routing sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Arc {
    pub(crate) from: NodeId,
    pub(crate) to: NodeId,
}

impl Routes {
    /// The routes of `nodes` joined by `arcs` (indexed by port id). `check`
    /// is called every few searches and may stop the computation.
    ///
    /// # Errors
    /// What `check` returns, or `alloc_error(entries)` if the core table
    /// cannot be allocated.
    pub(crate) fn compute<E>(
        nodes: &[Node],
        arcs: &[Arc],
        mut check: impl FnMut() -> Result<(), E>,
        alloc_error: impl Fn(usize) -> E,
    ) -> Result<Self, E> {
        let n = nodes.len();
        let mut out_ports: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, a) in arcs.iter().enumerate() {
            out_ports[a.from.index()].push(u32::try_from(i).expect("port ids fit in u32"));
        }
        // Stubs: hosts with exactly one link (one port out), to a router.
        let is_stub = |v: usize| {
            nodes[v].is_host && out_ports[v].len() == 1 && !nodes[arcs[out_ports[v][0] as usize].to.index()].is_host
        };
        let mut place = Vec::with_capacity(n);
        let mut core = Vec::new();
        for v in 0..n {
            if is_stub(v) {
                place.push(Place::Stub { up: out_ports[v][0], down: NO_ROUTE, router: NO_ROUTE });
            } else {
                let index = u32::try_from(core.len()).expect("nodes fit in u32");
                place.push(Place::Core { index, host: nodes[v].is_host });
                core.push(NodeId::from_index(v));
            }
        }
        let core_index: Vec<Option<usize>> = place
            .iter()
            .map(|p| match *p {
                Place::Core { index, .. } => Some(index as usize),
                Place::Stub { .. } => None,
            })
            .collect();
        let core_of = |v: usize| core_index[v];
        // The stubs' way in, and the core's own arcs (port-id order kept).
        let k = core.len();
        let mut core_out: Vec<Vec<(u32, usize)>> = vec![Vec::new(); k];
        let mut core_in: Vec<Vec<usize>> = vec![Vec::new(); k];
        for (i, a) in arcs.iter().enumerate() {
            let port = u32::try_from(i).expect("port ids fit in u32");
            match (core_of(a.from.index()), core_of(a.to.index())) {
                (Some(f), Some(t)) => {
                    core_out[f].push((port, t));
                    core_in[t].push(f);
                }
                (Some(f), None) => {
                    if let Place::Stub { down, router, .. } = &mut place[a.to.index()] {
                        *down = port;
                        *router = u32::try_from(f).expect("nodes fit in u32");
                    }
                }
                _ => {}
            }
        }
        let cells = k.checked_mul(k).ok_or_else(|| alloc_error(usize::MAX))?;
        let mut table: Vec<u32> = Vec::new();
        table.try_reserve_exact(cells).map_err(|_| alloc_error(cells))?;
        table.resize(cells, NO_ROUTE);
        let host = |c: usize| nodes[core[c].index()].is_host;
        let mut dist = vec![u32::MAX; k];
        let mut queue = VecDeque::new();
        for t in 0..k {
            if t % 64 == 0 {
                check()?;
            }
            // Hop counts towards t, searching backwards; only t itself or a router is crossed.
            dist.fill(u32::MAX);
            dist[t] = 0;
            queue.clear();
            queue.push_back(t);
            while let Some(v) = queue.pop_front() {
                if v != t && host(v) {
                    continue;
                }
                for &u in &core_in[v] {
                    if dist[u] == u32::MAX {
                        dist[u] = dist[v] + 1;
                        queue.push_back(u);
                    }
                }
            }
            for u in 0..k {
                if u == t || dist[u] == u32::MAX {
                    continue;
                }
                let best = core_out[u]
                    .iter()
                    .find(|&&(_, v)| dist[v] != u32::MAX && dist[v] + 1 == dist[u] && (v == t || !host(v)));
                if let Some(&(port, _)) = best {
                    table[u * k + t] = port;
                }
            }
        }
        let last_hop = place
            .iter()
            .map(|p| match *p {
                Place::Stub { down, router, .. } if router != NO_ROUTE => (core[router as usize].0, down),
                _ => (NO_ROUTE, NO_ROUTE),
            })
            .collect();
        Ok(Routes { place, core, table, last_hop })
    }

    /// The egress port from `from` towards host `to`, if there is a route
    /// (none to a router, and none from a node to itself).
    #[inline]
    pub(crate) fn get(&self, from: NodeId, to: NodeId) -> Option<PortId> {
        let port = self.port(from, to);
        (port != NO_ROUTE).then_some(PortId(port))
    }

    /// The egress port from `from` towards host `to`, for a packet a router forwards: as
    /// [`Routes::get`], as a raw port id or [`NO_ROUTE`]. Inlined on the per-packet path
    /// for the last hop (a router to one of its stubs); other hops take the general look-up.
    #[inline(always)]
    pub(crate) fn forward(&self, from: NodeId, to: NodeId) -> u32 {
        let (router, down) = self.last_hop[to.index()];
        if router == from.0 {
            return down;
        }
        self.port(from, to)
    }

    /// [`Routes::get`] as a raw port id or [`NO_ROUTE`].
    #[inline(never)]
    fn port(&self, from: NodeId, to: NodeId) -> u32 {
        if from == to {
            return NO_ROUTE;
        }
        let k = self.core.len();
        // Where `to` is reached from: its router (then its own port), or itself.
        let (target, last) = match self.place[to.index()] {
            Place::Stub { down, router, .. } => (router as usize, down),
            Place::Core { index, host: true } => (index as usize, NO_ROUTE),
            // Routes lead to hosts only.
            Place::Core { host: false, .. } => return NO_ROUTE,
        };
        match self.place[from.index()] {
            Place::Core { index, .. } if index as usize == target => last,
            Place::Core { index, .. } => self.table[index as usize * k + target],
            Place::Stub { up, router, .. } => {
                // A stub's one port, if its router can reach `to`.
                let reachable = router as usize == target || self.table[router as usize * k + target] != NO_ROUTE;
                if reachable {
                    up
                } else {
                    NO_ROUTE
                }
            }
        }
    }

    /// Entries in the core table (the part that grows with the square of the core).
    #[cfg(test)]
    #[must_use]
    pub(crate) fn table_len(&self) -> usize {
        self.table.len()
    }

    /// Heap bytes held.
    #[must_use]
    pub(crate) fn heap_bytes(&self) -> u64 {
        (self.place.capacity() * std::mem::size_of::<Place>()
            + self.core.capacity() * std::mem::size_of::<NodeId>()
            + self.table.capacity() * std::mem::size_of::<u32>()
            + self.last_hop.capacity() * std::mem::size_of::<(u32, u32)>()) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SimRng;

    /// The reference: a dense table over every pair of nodes, one backward
    /// breadth-first search per host, lowest port id among the shortest.
    fn dense(nodes: &[Node], arcs: &[Arc]) -> Vec<u32> {
        let n = nodes.len();
        let mut routes = vec![NO_ROUTE; n * n];
        let mut incoming: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut outgoing: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, a) in arcs.iter().enumerate() {
            incoming[a.to.index()].push(i);
            outgoing[a.from.index()].push(i);
        }
        for d in (0..n).filter(|&d| nodes[d].is_host) {
            let mut dist = vec![u32::MAX; n];
            dist[d] = 0;
            let mut queue = VecDeque::from([d]);
            while let Some(v) = queue.pop_front() {
                if v != d && nodes[v].is_host {
                    continue;
                }
                for &pi in &incoming[v] {
                    let u = arcs[pi].from.index();
                    if dist[u] == u32::MAX {
                        dist[u] = dist[v] + 1;
                        queue.push_back(u);
                    }
                }
            }
            for u in (0..n).filter(|&u| u != d && dist[u] != u32::MAX) {
                let best = outgoing[u].iter().copied().find(|&pi| {
                    let v = arcs[pi].to.index();
                    dist[v] != u32::MAX && dist[v] + 1 == dist[u] && (v == d || !nodes[v].is_host)
                });
                if let Some(pi) = best {
                    routes[u * n + d] = u32::try_from(pi).unwrap();
                }
            }
        }
        routes
    }

    fn routes(nodes: &[Node], arcs: &[Arc]) -> Routes {
        Routes::compute(nodes, arcs, || Ok::<(), ()>(()), |_| ()).unwrap()
    }

    fn node(name: &str, is_host: bool) -> Node {
        Node { name: name.to_owned(), is_host }
    }

    /// Links `(a, b)` as arcs: port 2i is a -> b, 2i + 1 is b -> a.
    fn arcs(links: &[(usize, usize)]) -> Vec<Arc> {
        links
            .iter()
            .flat_map(|&(a, b)| {
                let (a, b) = (NodeId::from_index(a), NodeId::from_index(b));
                [Arc { from: a, to: b }, Arc { from: b, to: a }]
            })
            .collect()
    }

    fn assert_same_as_dense(nodes: &[Node], arcs: &[Arc]) {
        let r = routes(nodes, arcs);
        let reference = dense(nodes, arcs);
        let n = nodes.len();
        for u in 0..n {
            for d in 0..n {
                let got = r.get(NodeId::from_index(u), NodeId::from_index(d)).map_or(NO_ROUTE, |p| p.0);
                assert_eq!(got, reference[u * n + d], "route {u} -> {d}");
                if u != d {
                    let forwarded = r.forward(NodeId::from_index(u), NodeId::from_index(d));
                    assert_eq!(forwarded, reference[u * n + d], "forward {u} -> {d}");
                }
            }
        }
    }

    #[test]
    fn a_dumbbell_has_a_core_of_two_routers() {
        // h0..h3 -- r0 == r1 -- h4..h7: 8 stubs.
        let mut nodes = vec![node("r0", false), node("r1", false)];
        let mut links = vec![(0, 1)];
        for i in 0..8 {
            nodes.push(node(&format!("h{i}"), true));
            links.push((2 + i, if i < 4 { 0 } else { 1 }));
        }
        let a = arcs(&links);
        let r = routes(&nodes, &a);
        assert_eq!(r.table_len(), 4);
        assert_same_as_dense(&nodes, &a);
        // h0 -> h5: up its own link (port 2), across the bottleneck (port 0), down h5's (port 13).
        let id = NodeId::from_index;
        assert_eq!(r.get(id(2), id(7)), Some(PortId(2)));
        assert_eq!(r.get(id(0), id(7)), Some(PortId(0)));
        assert_eq!(r.get(id(1), id(7)), Some(PortId(13)));
        // No route to a router, nor to oneself.
        assert_eq!(r.get(id(2), id(1)), None);
        assert_eq!(r.get(id(2), id(2)), None);
    }

    #[test]
    fn the_table_grows_with_the_core_not_the_hosts() {
        for hosts in [10, 1000, 10_000] {
            let mut nodes = vec![node("r", false), node("sink", true)];
            let mut links = vec![(0, 1)];
            for i in 0..hosts {
                nodes.push(node(&format!("s{i}"), true));
                links.push((2 + i, 0));
            }
            assert_eq!(routes(&nodes, &arcs(&links)).table_len(), 1, "{hosts} hosts");
        }
    }

    #[test]
    fn hosts_are_never_crossed_and_host_links_are_routed() {
        // a -- b (two hosts), b -- r -- c: a reaches b only; b is in the core (two links).
        let nodes = [node("a", true), node("b", true), node("r", false), node("c", true)];
        let a = arcs(&[(0, 1), (1, 2), (2, 3)]);
        assert_same_as_dense(&nodes, &a);
        let r = routes(&nodes, &a);
        let id = NodeId::from_index;
        assert_eq!(r.get(id(0), id(1)), Some(PortId(0)));
        assert_eq!(r.get(id(0), id(3)), None, "a would cross host b");
        assert_eq!(r.get(id(3), id(1)), Some(PortId(5)));
    }

    #[test]
    fn random_topologies_route_as_the_dense_table() {
        let mut rng = SimRng::for_component(7, "routes");
        for case in 0..400 {
            let n = 2 + usize::try_from(rng.below(14)).unwrap();
            let nodes: Vec<Node> = (0..n).map(|i| node(&format!("n{i}"), rng.uniform() < 0.6)).collect();
            let mut links = Vec::new();
            let density = rng.uniform() * 0.5;
            for a in 0..n {
                for b in a + 1..n {
                    if rng.uniform() < density {
                        links.push(if rng.uniform() < 0.5 { (a, b) } else { (b, a) });
                    }
                }
            }
            // Shuffle the link order (it decides port ids and so the tie-breaks).
            for i in (1..links.len()).rev() {
                let j = usize::try_from(rng.below(i as u64 + 1)).unwrap();
                links.swap(i, j);
            }
            let a = arcs(&links);
            let r = routes(&nodes, &a);
            let reference = dense(&nodes, &a);
            for u in 0..n {
                for d in 0..n {
                    let got = r.get(NodeId::from_index(u), NodeId::from_index(d)).map_or(NO_ROUTE, |p| p.0);
                    assert_eq!(got, reference[u * n + d], "case {case}: route {u} -> {d} with links {links:?}");
                }
            }
        }
    }

    #[test]
    fn a_stop_request_is_returned() {
        let nodes = [node("r", false), node("h", true)];
        let a = arcs(&[(0, 1)]);
        let e = Routes::compute(&nodes, &a, || Err::<(), &str>("stop"), |_| "alloc").unwrap_err();
        assert_eq!(e, "stop");
    }
}
