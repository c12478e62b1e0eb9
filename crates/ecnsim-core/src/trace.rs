//! Packet trace capture, sans-IO: the simulation appends one record per
//! packet event on a traced link direction, and the caller drains them
//! (between run chunks) into files. `ecnsim.trace` writes the records as
//! ns-2 trace lines or pcap; the column names here are its record format.
//!
//! Events, as in ns-2's link traces: `+` a packet is offered to a queue
//! (drops on arrival follow as `d`), `-` it leaves the queue and starts
//! serialisation, `r` it arrives at the far end, `d` a queue dropped it.
//!
//! Off by default and free when off: one branch per event.

use crate::error::SimError;
use crate::ids::PortId;
use crate::packet::{Packet, Transport, MAX_SACK_BLOCKS};
use crate::results::Table;
use crate::time::SimTime;

/// Which events to record. Every field narrows the selection; `None` keeps all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceFilter {
    /// Link indices (`links[i]` of the scenario), both directions.
    pub links: Option<Vec<usize>>,
    /// Node names: link directions that start or end at one of them.
    pub nodes: Option<Vec<String>>,
    /// Flow or application names (`flows[i].name`, `apps[i].name`): their TCP
    /// connections only (UDP packets are kept only when no flow filter is given).
    pub flows: Option<Vec<String>>,
}

/// A packet event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TraceEvent {
    /// Offered to a queue.
    Enqueue,
    /// Left the queue; serialisation starts.
    Dequeue,
    /// Arrived at the far end of the link.
    Receive,
    /// Dropped by the queue.
    Drop,
}

impl TraceEvent {
    fn symbol(self) -> &'static str {
        match self {
            TraceEvent::Enqueue => "+",
            TraceEvent::Dequeue => "-",
            TraceEvent::Receive => "r",
            TraceEvent::Drop => "d",
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct TraceRecord {
    time: SimTime,
    event: TraceEvent,
    port: PortId,
    /// The connection's serial (TCP) or the UDP flow's index.
    flow_id: u64,
    pkt: Packet,
}

/// The recorder: masks resolved once from the filter, and the buffer.
#[derive(Debug)]
pub(crate) struct Tracer {
    /// Per port: traced?
    ports: Vec<bool>,
    /// Per application: are its connections traced? `None`: all.
    apps: Option<Vec<bool>>,
    records: Vec<TraceRecord>,
}

impl Tracer {
    /// Resolve `filter` against the network. `links`, `nodes` and `apps` are
    /// the scenario's link count, node names and application names; `ports`
    /// gives each port's link index and end nodes.
    pub(crate) fn new(
        filter: &TraceFilter,
        n_links: usize,
        node_names: &[&str],
        app_names: &[&str],
        ports: impl Iterator<Item = (usize, usize, usize)>,
    ) -> Result<Self, SimError> {
        let mut link_on = vec![true; n_links];
        if let Some(links) = &filter.links {
            link_on.fill(false);
            for (k, &l) in links.iter().enumerate() {
                if l >= n_links {
                    return Err(SimError::spec(
                        format!("trace.links[{k}]"),
                        format!("no link {l}; the scenario has links 0 to {}", n_links.saturating_sub(1)),
                    ));
                }
                link_on[l] = true;
            }
        }
        let mut node_on = vec![true; node_names.len()];
        if let Some(nodes) = &filter.nodes {
            node_on.fill(false);
            for (k, name) in nodes.iter().enumerate() {
                let i = node_names
                    .iter()
                    .position(|n| n == name)
                    .ok_or_else(|| SimError::spec(format!("trace.nodes[{k}]"), format!("no node named {name:?}")))?;
                node_on[i] = true;
            }
        }
        let apps = match &filter.flows {
            None => None,
            Some(names) => {
                let mut on = vec![false; app_names.len()];
                for (k, name) in names.iter().enumerate() {
                    let i = app_names.iter().position(|n| n == name).ok_or_else(|| {
                        SimError::spec(format!("trace.flows[{k}]"), format!("no flow or app named {name:?}"))
                    })?;
                    on[i] = true;
                }
                Some(on)
            }
        };
        let ports = ports
            .map(|(link, from, to)| link_on[link] && (filter.nodes.is_none() || node_on[from] || node_on[to]))
            .collect();
        Ok(Tracer { ports, apps, records: Vec::new() })
    }

    /// Record `event` of `pkt` on `port` at `time`, if the filter keeps it.
    /// `app_of` maps a TCP flow to its application.
    #[inline(never)]
    pub(crate) fn record(
        &mut self,
        time: SimTime,
        event: TraceEvent,
        port: PortId,
        pkt: &Packet,
        conn_of: impl FnOnce(usize) -> (usize, u64),
    ) {
        if !self.ports[port.index()] {
            return;
        }
        // A TCP packet's connection: its app and its serial (the `flow_id` of the results).
        let (app, flow_id) =
            if pkt.proto == Transport::Tcp { conn_of(pkt.flow.index()) } else { (usize::MAX, u64::from(pkt.flow.0)) };
        if let Some(apps) = &self.apps {
            if pkt.proto != Transport::Tcp || !apps[app] {
                return;
            }
        }
        self.records.push(TraceRecord { time, event, port, flow_id, pkt: *pkt });
    }

    /// Take the records so far as a column table (see `ecnsim.trace` for the columns).
    pub(crate) fn drain(&mut self, port_ends: &[(u32, u32)]) -> Table {
        let r = std::mem::take(&mut self.records);
        let col = |f: &dyn Fn(&TraceRecord) -> u64| r.iter().map(f).collect::<Vec<u64>>();
        let mut t = Table::new("trace");
        t.push_u64("time_ns", col(&|x| x.time.as_nanos()));
        let events = [TraceEvent::Enqueue, TraceEvent::Dequeue, TraceEvent::Receive, TraceEvent::Drop];
        t.push_dict(
            "event",
            r.iter().map(|x| x.event as u32).collect(),
            events.iter().map(|e| e.symbol().to_owned()).collect(),
        );
        t.push_u64("from_node", col(&|x| u64::from(port_ends[x.port.index()].0)));
        t.push_u64("to_node", col(&|x| u64::from(port_ends[x.port.index()].1)));
        t.push_u64("flow_id", col(&|x| x.flow_id));
        t.push_u64("uid", col(&|x| x.pkt.uid));
        t.push_u64("size", col(&|x| u64::from(x.pkt.size)));
        t.push_u64("src_node", col(&|x| u64::from(x.pkt.src.0)));
        t.push_u64("dst_node", col(&|x| u64::from(x.pkt.dst.0)));
        // IP protocol numbers (RFC 790); 0 for a real host's packet, whose protocol the core does not read.
        t.push_u64(
            "proto",
            col(&|x| match x.pkt.proto {
                Transport::Tcp => 6,
                Transport::Udp => 17,
                Transport::External => 0,
            }),
        );
        t.push_u64("ecn", col(&|x| x.pkt.ecn as u64));
        t.push_u64("tcp_flags", col(&|x| u64::from(x.pkt.tcp.flags.bits())));
        t.push_u64("seq", col(&|x| x.pkt.tcp.seq));
        t.push_u64("ack", col(&|x| x.pkt.tcp.ack));
        t.push_u64("payload", col(&|x| u64::from(x.pkt.tcp.payload)));
        t.push_u64("window", col(&|x| u64::from(x.pkt.tcp.window)));
        t.push_u64("sack_permitted", col(&|x| u64::from(x.pkt.tcp.sack_permitted)));
        t.push_u64("sack_blocks", col(&|x| x.pkt.tcp.sack_len() as u64));
        for i in 0..MAX_SACK_BLOCKS {
            t.push_u64(&format!("sack_left_{}", i + 1), col(&|x| x.pkt.tcp.sack_block(i).left));
            t.push_u64(&format!("sack_right_{}", i + 1), col(&|x| x.pkt.tcp.sack_block(i).right));
        }
        t
    }

    /// Records waiting to be drained.
    pub(crate) fn pending(&self) -> usize {
        self.records.len()
    }
}
