//! The result tables, built from a simulation's state (complete once it finished).
//!
//! Rates are over `[max(warmup, flow start), now]`; queue averages are
//! time-weighted over `[warmup, now]`. Tables (column names carry their unit):
//! - `flows`: one row per `[[flows]]` connection (and, with
//!   `simulation.connection_rows`, per workload connection).
//! - `apps`: one row per workload (`[[apps]]`): its connections' counters summed.
//! - `queues`: one row per link direction.
//! - `flow_series`, `queue_series`: one row per sample (if sampling is on).

use std::mem::size_of;

use crate::app::Record;
use crate::flow::Flow;
use crate::ids::{FlowId, NodeId};
use crate::qdisc::{DropReason, MarkReason, MarkedCodepoint, QueueCounters};
use crate::results::{Column, ColumnData, Results, Table};
use crate::sim::Simulation;
use crate::stats::{ConnTotals, FlowExtra, WarmBase};
use crate::stats::{Series, SeriesTable, SeriesValues};
use crate::tcp::{TcpCounters, TcpState};
use crate::time::{ns_to_secs, SimDuration, SimTime};

impl Simulation {
    /// The results so far: complete once finished; partial otherwise, with
    /// meta `finished = "false"`.
    #[must_use]
    pub fn results(&self) -> Results {
        collect(self, true)
    }

    /// [`Simulation::results`] without the series' rows: the `flow_series` and
    /// `queue_series` tables are there, in their places, without columns;
    /// [`Simulation::series`] reads their columns in place, and
    /// [`Results::digest_with_series`] gives the digest of the whole. For a caller that
    /// converts the columns itself (the Python layer): the series are not copied.
    #[must_use]
    pub fn results_without_series(&self) -> Results {
        collect(self, false)
    }

    /// The `flow_series` and `queue_series` tables so far, read in place from the
    /// simulation's compact store (the columns [`Simulation::results`] copies out).
    #[must_use]
    pub fn series(&self) -> [SeriesTable<'_>; 2] {
        self.series.tables()
    }

    /// Move the time series out, leaving an empty store: [`Simulation::results`] and
    /// [`Simulation::series`] then have no series rows, and a later sample starts a new
    /// store. For a caller that keeps a finished run's series itself ([`Series::hand_over`]).
    pub fn take_series(&mut self) -> Series {
        std::mem::take(&mut self.series)
    }

    /// Heap bytes the simulation holds for its time series.
    #[must_use]
    pub fn series_bytes(&self) -> u64 {
        self.series.heap_bytes()
    }

    /// How many finished records wait for [`Simulation::drain_records`].
    #[must_use]
    pub fn finished_records(&self) -> usize {
        self.records.len()
    }

    /// The `records` rows of the transactions, pages and objects that finished (completed or
    /// failed) since the last drain, in the order they finished, with the `records` table's
    /// columns; the core then holds only the records of items still open.
    ///
    /// [`Simulation::results`] lists the records not yet drained, so the drained tables,
    /// appended in order ([`Table::append`]) and followed by the `records` table of
    /// [`Simulation::results`], are that table of a run never drained, bit for bit, whenever
    /// and however often this is called. Their bytes still count against `max_memory`.
    pub fn drain_records(&mut self) -> Table {
        let t = finished_records_table(self, &self.records);
        self.records.clear();
        self.records_drained_bytes += t.value_bytes();
        t
    }

    /// Move the finished records (those [`Simulation::drain_records`] would give) to the end
    /// of `into`, as rows of the core's own (96 bytes a record, where a table row takes 144):
    /// [`Simulation::finished_table`] makes the table of them when it is wanted. Their bytes
    /// still count against `max_memory`.
    pub fn drain_finished_into(&mut self, into: &mut FinishedRecords) {
        self.records_drained_bytes += (self.records.len() * size_of::<Record>()) as u64;
        into.rows.append(&mut self.records);
    }

    /// The `records` rows of `finished` (drained from this simulation by
    /// [`Simulation::drain_finished_into`]): the table [`Simulation::drain_records`] would have
    /// given at those drains, appended, bit for bit.
    #[must_use]
    pub fn finished_table(&self, finished: &FinishedRecords) -> Table {
        finished_records_table(self, &finished.rows)
    }
}

/// Finished records moved out of a simulation ([`Simulation::drain_finished_into`]), in the
/// order they finished, kept compact until [`Simulation::finished_table`] lists them.
#[derive(Clone, Debug, Default)]
pub struct FinishedRecords {
    rows: Vec<Record>,
}

impl FinishedRecords {
    /// How many records.
    #[must_use]
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True if there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// A series column read in place, as a table column (a copy, one value per row).
pub(crate) fn series_column(values: &SeriesValues<'_>) -> ColumnData {
    let mut bits = Vec::with_capacity(values.len());
    values.for_each_bits(|b| bits.push(b));
    if values.is_real() {
        ColumnData::F64(bits.into_iter().map(f64::from_bits).collect())
    } else {
        ColumnData::U64(bits)
    }
}

fn secs(t: SimTime) -> f64 {
    ns_to_secs(t.as_nanos())
}

fn dur_secs(d: SimDuration) -> f64 {
    ns_to_secs(d.as_nanos())
}

/// Bytes a `[[flows]]` connection's bulk application sends (infinity: without end; NaN: a
/// workload connection).
#[allow(clippy::cast_precision_loss)]
fn app_bytes(sim: &Simulation, flow: &crate::flow::Flow) -> f64 {
    match &sim.apps[flow.app.index()].app {
        crate::app::AnyApp::Bulk(b) if sim.is_spec_flow(flow.app) => b.bytes.map_or(f64::INFINITY, |b| b as f64),
        _ => f64::NAN,
    }
}

/// Build the result tables from the simulation's current state.
#[allow(clippy::cast_precision_loss, clippy::too_many_lines)]
fn collect(sim: &Simulation, with_series: bool) -> Results {
    let now = sim.now();
    let warm = sim.warm.as_ref();
    let since = warm.map_or(SimTime::ZERO, |w| w.time);

    // --- flows ---
    let mut t = Table::new("flows");
    let rows = flow_rows(sim);
    let n = rows.len();
    let mut cols_u: Vec<(&str, Vec<u64>)> = [
        "packets_sent",
        "bytes_sent",
        "packets_retransmitted",
        "bytes_retransmitted",
        "bytes_delivered",
        "bytes_received",
        "rto_count",
        "rto_after_ecn",
        "fast_retransmits",
        "syn_retransmits",
        "synack_retransmits",
        "acks_sent",
        "drops",
        "marks",
        "ce_received",
        "ecn_reductions",
        "cwr_sent",
    ]
    .into_iter()
    .map(|c| (c, Vec::with_capacity(n)))
    .collect();
    let mut goodput = Vec::with_capacity(n);
    let mut rx_goodput = Vec::with_capacity(n);
    let mut throughput = Vec::with_capacity(n);
    let mut completion = Vec::with_capacity(n);
    let mut connect = Vec::with_capacity(n);
    let mut cwnd = Vec::with_capacity(n);
    let mut srtt = Vec::with_capacity(n);
    let mut state = Vec::with_capacity(n);
    let mut reverse = Vec::with_capacity(n);
    let mut reverse_packets = Vec::with_capacity(n);
    let mut reverse_bytes = Vec::with_capacity(n);
    let mut ecn = Vec::with_capacity(n);
    let mut sack = Vec::with_capacity(n);
    let mut owd = Vec::with_capacity(n);
    // Payload the rows' flows delivered in order in the window, per link direction that is the
    // bottleneck of their path, and the most that can have left it before the window and arrived in it.
    let mut carried = vec![0u64; sim.ports.len()];
    let mut slack = vec![0u64; sim.ports.len()];
    let mut hops = Vec::new();
    for r in &rows {
        let f = r.flow;
        let [sc, rc] = r.counters;
        // Counters count from the end of warm-up, or from zero for a connection opened after it.
        let (s0, r0, x0) = match &r.warm {
            WarmBase::At(w) => (w.counters[0], w.counters[1], w.extra),
            WarmBase::EndedBefore if warm.is_some() => (sc, rc, r.extra),
            _ => (TcpCounters::default(), TcpCounters::default(), FlowExtra::default()),
        };
        let (f_cwnd, f_srtt, f_state, f_ecn, f_sack) = r.fin;
        reverse.push(sc.bytes_delivered - s0.bytes_delivered);
        // The responder's data segments (a workload's responses), retransmissions included.
        reverse_packets.push(rc.data_packets_sent - r0.data_packets_sent);
        reverse_bytes.push(rc.data_bytes_sent - r0.data_bytes_sent);
        ecn.push(u64::from(f_ecn));
        sack.push(u64::from(f_sack));
        let delivered = rc.bytes_delivered - r0.bytes_delivered;
        let received = rc.bytes_received - r0.bytes_received;
        for (from, to, bytes) in [(f.src, f.dst, delivered), (f.dst, f.src, sc.bytes_delivered - s0.bytes_delivered)] {
            path(sim, from, to, &mut hops);
            // The path's bottleneck (its slowest link directions) carried all of it; the bytes on the
            // wires from there on (a bandwidth-delay product per link) may have left it before the window.
            let slowest = hops.iter().map(|&i| sim.ports[i].rate()).min();
            let mut beyond = 0u64;
            for &i in hops.iter().rev() {
                let p = &sim.ports[i];
                let pipe = u128::from(p.rate().as_bps()) * u128::from(p.delay.as_nanos()) / 8_000_000_000;
                beyond += u64::try_from(pipe).unwrap_or(u64::MAX / 4);
                if Some(p.rate()) == slowest {
                    carried[i] += bytes;
                    slack[i] = slack[i].max(beyond);
                }
            }
        }
        let vals = [
            sc.data_packets_sent - s0.data_packets_sent,
            sc.data_bytes_sent - s0.data_bytes_sent,
            sc.retransmitted_packets - s0.retransmitted_packets,
            sc.retransmitted_bytes - s0.retransmitted_bytes,
            delivered,
            received,
            sc.rto_count - s0.rto_count,
            sc.rto_after_ecn - s0.rto_after_ecn,
            sc.fast_retransmits - s0.fast_retransmits,
            sc.syn_retransmits - s0.syn_retransmits,
            rc.syn_retransmits - r0.syn_retransmits,
            rc.acks_sent - r0.acks_sent,
            r.extra.drops - x0.drops,
            r.extra.marks - x0.marks,
            rc.ce_received - r0.ce_received,
            sc.ecn_reductions - s0.ecn_reductions,
            sc.cwr_sent - s0.cwr_sent,
        ];
        for (col, v) in cols_u.iter_mut().zip(vals) {
            col.1.push(v);
        }
        let from = since.max(f.start);
        let span = dur_secs(now.saturating_since(from));
        let rate = |bytes: u64| if span > 0.0 { bytes as f64 * 8.0 / span } else { f64::NAN };
        goodput.push(rate(delivered));
        rx_goodput.push(rate(received));
        throughput.push(rate(vals[1]));
        completion.push(r.extra.completed_at.get().map_or(f64::NAN, |c| dur_secs(c.saturating_since(f.start))));
        connect.push(r.extra.connected_at.get().map_or(f64::NAN, |c| dur_secs(c.saturating_since(f.start))));
        let owd_count = r.extra.owd_count - x0.owd_count;
        owd.push(if owd_count > 0 {
            ns_to_secs(r.extra.owd_sum_ns - x0.owd_sum_ns) / owd_count as f64
        } else {
            f64::NAN
        });
        cwnd.push(f_cwnd);
        srtt.push(f_srtt.map_or(f64::NAN, dur_secs));
        state.push(if r.extra.failed { "FAILED".to_owned() } else { f_state.to_string() });
    }
    t.push_u64("flow_id", rows.iter().map(|r| r.flow.serial).collect());
    t.push_str(
        "flow",
        rows.iter()
            .map(|r| {
                let app = &sim.apps[r.flow.app.index()].name;
                // A `[[flows]]` connection is its own app, named as the flow.
                if sim.is_spec_flow(r.flow.app) {
                    app.clone()
                } else {
                    format!("{app}#{}", r.flow.serial)
                }
            })
            .collect(),
    );
    t.push_str("group", rows.iter().map(|r| sim.groups[sim.apps[r.flow.app.index()].group as usize].clone()).collect());
    t.push_str("src", rows.iter().map(|r| sim.nodes[r.flow.src.index()].name.clone()).collect());
    t.push_str("dst", rows.iter().map(|r| sim.nodes[r.flow.dst.index()].name.clone()).collect());
    t.push_f64("start_s", rows.iter().map(|r| secs(r.flow.start)).collect());
    t.push_f64("app_bytes", rows.iter().map(|r| app_bytes(sim, r.flow)).collect());
    for (name, v) in cols_u {
        t.push_u64(name, v);
    }
    t.push_f64("goodput_bps", goodput);
    t.push_f64("rx_goodput_bps", rx_goodput);
    t.push_f64("throughput_bps", throughput);
    t.push_f64("connect_time_s", connect);
    t.push_f64("completion_time_s", completion);
    t.push_f64("mean_owd_s", owd);
    t.push_u64("ecn_negotiated", ecn);
    t.push_u64("sack_negotiated", sack);
    t.push_str("cc", rows.iter().map(|r| format!("{:?}", r.flow.cc).to_lowercase()).collect());
    t.push_u64("final_cwnd_bytes", cwnd);
    t.push_f64("final_srtt_s", srtt);
    t.push_str("final_state", state);
    t.push_u64("reverse_bytes_delivered", reverse);
    t.push_u64("reverse_packets_sent", reverse_packets);
    t.push_u64("reverse_bytes_sent", reverse_bytes);
    t.push_str("app", rows.iter().map(|r| sim.apps[r.flow.app.index()].name.clone()).collect());
    // RFC 9331 §4.3 (detect a Classic ECN bottleneck), as tcp_prague.c 0.6 scores it (`tp->classic_ecn`):
    // Prague's score in units of 1 (0 to 17; above 8 a Classic ECN bottleneck; 0 while the
    // detection is off); NaN for a flow that does not run Prague.
    t.push_f64(
        "prague_classic_ecn",
        rows.iter().map(|r| r.classic_ecn.map_or(f64::NAN, |s| s as f64 / f64::from(1u32 << 20))).collect(),
    );

    let apps = apps_table(sim, warm.map(|w| w.apps.as_slice()), since, now);

    // --- queues ---
    let mut q = Table::new("queues");
    let span_ns = now.saturating_since(since).as_nanos();
    let zero = QueueCounters::default();
    let deltas: Vec<QueueCounters> = sim
        .ports
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut c = p.counters();
            // Bring the occupancy integral up to `now` without mutating the queue.
            let dt = u128::from(now.saturating_since(p.queue.last_change()).as_nanos());
            c.area_packets += u128::from(p.queue.len_packets()) * dt;
            c.area_bytes += u128::from(p.queue.len_bytes()) * dt;
            c.since(warm.map_or(&zero, |w| &w.queues[i]))
        })
        .collect();
    let avg = |area: u128| if span_ns > 0 { area as f64 / span_ns as f64 } else { f64::NAN };
    q.push_u64("queue_id", (0..sim.ports.len() as u64).collect());
    q.push_str("queue", sim.ports.iter().map(|p| p.name.clone()).collect());
    q.push_u64("link", sim.ports.iter().map(|p| p.link_index as u64).collect());
    q.push_str("from", sim.ports.iter().map(|p| sim.nodes[p.from.index()].name.clone()).collect());
    q.push_str("to", sim.ports.iter().map(|p| sim.nodes[p.to.index()].name.clone()).collect());
    q.push_u64("rate_bps", sim.ports.iter().map(|p| p.rate().as_bps()).collect());
    q.push_u64("arrivals", deltas.iter().map(|c| c.arrivals).collect());
    q.push_u64("arrival_bytes", deltas.iter().map(|c| c.arrival_bytes).collect());
    q.push_u64("departures", deltas.iter().map(|c| c.departures).collect());
    q.push_u64("departure_bytes", deltas.iter().map(|c| c.departure_bytes).collect());
    q.push_u64("drops", deltas.iter().map(QueueCounters::total_drops).collect());
    for r in DropReason::ALL {
        q.push_u64(&format!("drops_{}", r.name()), deltas.iter().map(|c| c.drops[r as usize]).collect());
    }
    q.push_u64("marks", deltas.iter().map(|c| c.marks.iter().sum()).collect());
    for r in MarkReason::ALL {
        q.push_u64(&format!("marks_{}", r.name()), deltas.iter().map(|c| c.marks[r as usize]).collect());
    }
    // The same marks by the codepoint the packet carried (RFC 9331 §4.1: ECT(1) is L4S traffic).
    for e in MarkedCodepoint::ALL {
        q.push_u64(&format!("marks_of_{}", e.name()), deltas.iter().map(|c| c.marks_of[e as usize]).collect());
    }
    q.push_f64("avg_packets", deltas.iter().map(|c| avg(c.area_packets)).collect());
    q.push_f64("avg_bytes", deltas.iter().map(|c| avg(c.area_bytes)).collect());
    // RED's / AECN's idle periods as its average saw them (`QueueCounters::aqm_idle`).
    q.push_u64("aqm_idle_periods", deltas.iter().map(|c| c.aqm_idle.periods).collect());
    q.push_u64("aqm_idle_decays", deltas.iter().map(|c| c.aqm_idle.decays).collect());
    q.push_f64("aqm_idle_s", deltas.iter().map(|c| ns_to_secs(c.aqm_idle.idle_ns)).collect());
    q.push_u64("max_packets", sim.ports.iter().map(|p| p.max_packets()).collect());
    q.push_u64("max_bytes", sim.ports.iter().map(|p| p.max_bytes()).collect());
    // arrivals + backlog_start = departures + drops + backlog_end, exactly.
    q.push_u64("backlog_start_packets", (0..sim.ports.len()).map(|i| warm.map_or(0, |w| w.backlog[i])).collect());
    q.push_u64("backlog_end_packets", sim.ports.iter().map(|p| p.queue.len_packets()).collect());
    // Utilization: the share of [warmup, now] the transmitter spent sending
    // (bits actually serialised in the interval, so never above 1).
    q.push_f64(
        "utilization",
        sim.ports
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let busy = p.busy_until_time(now) - warm.map_or(0, |w| w.busy[i]);
                if span_ns > 0 {
                    busy as f64 / span_ns as f64
                } else {
                    f64::NAN
                }
            })
            .collect(),
    );

    // --- series --- (their columns in place when `with_series` is false: [`Simulation::series`])
    let [fs, qs] = sim.series.tables().map(|view| {
        let mut t = Table::new(view.name);
        if with_series {
            t.columns = view
                .columns
                .iter()
                .map(|(name, v)| Column { name: (*name).to_owned(), data: series_column(v) })
                .collect();
        }
        t
    });

    let mut meta = vec![
        ("seed".to_owned(), sim.seed.to_string()),
        ("profile".to_owned(), sim.profile.to_owned()),
        ("duration_s".to_owned(), secs(sim.end).to_string()),
        ("end_time_s".to_owned(), secs(now).to_string()),
        ("warmup_s".to_owned(), secs(sim.warmup).to_string()),
        ("finished".to_owned(), sim.is_finished().to_string()),
        ("resolved_spec".to_owned(), sim.resolved_spec.clone()),
        ("ecnsim_version".to_owned(), crate::VERSION.to_owned()),
    ];
    let warnings = delivery_warnings(sim, &carried, &slack, &deltas, since, now);
    if !warnings.is_empty() {
        meta.push(("warnings".to_owned(), serde_json::to_string(&warnings).expect("strings serialise")));
    }
    if let Some(e) = &sim.fault {
        // Why an unfinished run stopped for good.
        meta.push(("stopped".to_owned(), e.to_string()));
    }
    let rec = records_table(sim);
    Results { tables: vec![t, apps, q, fs, qs, rec], meta }
}

/// The link directions a packet from `src` to `dst` crosses, in order, into `out` (as port indices).
fn path(sim: &Simulation, src: NodeId, dst: NodeId, out: &mut Vec<usize>) {
    out.clear();
    let mut node = src;
    while node != dst && out.len() < sim.ports.len() {
        let Some(port) = sim.routes.get(node, dst) else { return };
        out.push(port.index());
        node = sim.ports[port.index()].to;
    }
}

/// One warning per bottleneck link direction (the slowest on a flow's path) across which the `flows`
/// rows delivered more payload in order during the measurement window than the direction sent in it,
/// headers included, plus what the wires from it on held (`slack`). Only data that reached the
/// receiver before the window, held there behind a hole, can do that: in-order goodput then
/// overstates the window's own transfer.
#[allow(clippy::cast_precision_loss)]
fn delivery_warnings(
    sim: &Simulation,
    carried: &[u64],
    slack: &[u64],
    deltas: &[QueueCounters],
    since: SimTime,
    now: SimTime,
) -> Vec<String> {
    let mb = |b: u64| b as f64 / 1e6;
    sim.ports
        .iter()
        .enumerate()
        .filter(|&(i, _)| carried[i] > deltas[i].departure_bytes + slack[i])
        .map(|(i, p)| {
            format!(
                "links[{}] {}: the flows crossing it delivered {:.3} MB of payload in order in [{} s, {} s], more than \
                 the {:.3} MB (headers included) it sent then: data that arrived before the window, held behind \
                 a hole, was delivered in it; rx_goodput_bps counts arrivals in the window (docs/measurement.md)",
                p.link_index,
                p.name,
                mb(carried[i]),
                secs(since),
                secs(now),
                mb(deltas[i].departure_bytes),
            )
        })
        .collect()
}

/// One row of the `flows` table: a connection, its counters now and what they count from.
struct FlowRow<'a> {
    flow: &'a Flow,
    /// The row's facts, with what a live connection's endpoints counted ([`Simulation::flow_extra`]).
    extra: FlowExtra,
    counters: [TcpCounters; 2],
    /// Final (or current) cwnd, SRTT, state, ECN and SACK negotiated.
    fin: (u64, Option<SimDuration>, TcpState, bool, bool),
    /// The sender's Prague Classic-ECN-bottleneck score (2^-20), final or current, if it runs Prague.
    classic_ecn: Option<u64>,
    warm: WarmBase,
}

/// The `flows` table's rows: every `[[flows]]` connection, then (with `connection_rows`)
/// every workload connection, ended or alive, in order of opening.
fn flow_rows(sim: &Simulation) -> Vec<FlowRow<'_>> {
    let fin_of = |f: &Flow, i: Option<usize>| match (&f.last, i.and_then(|i| sim.initiator(i))) {
        (Some(l), _) => (l.cwnd, l.srtt, l.state, l.ecn, l.sack),
        (None, Some(s)) => (s.cwnd(), s.rtt().srtt(), s.state(), s.ecn_negotiated(), s.sack_negotiated()),
        (None, None) => unreachable!("a connection is live or has its final state"),
    };
    let classic_of = |f: &Flow, i: Option<usize>| match (&f.last, i.and_then(|i| sim.initiator(i))) {
        (Some(l), _) => l.classic_ecn,
        (None, Some(s)) => s.prague().map(crate::tcp::cc::Prague::classic_ecn),
        (None, None) => None,
    };
    let warm_of = |i: usize, serial: u64| sim.warm.as_ref().and_then(|w| w.flow(i, serial)).unwrap_or(WarmBase::Zero);
    let live = |i: usize| {
        let (a, b) = sim.flow_counters(FlowId::from_index(i));
        [a, b]
    };
    let mut rows: Vec<FlowRow<'_>> = sim.flows[..sim.n_static]
        .iter()
        .enumerate()
        .map(|(i, f)| FlowRow {
            flow: f,
            extra: sim.flow_extra(i),
            counters: live(i),
            fin: fin_of(f, Some(i)),
            classic_ecn: classic_of(f, Some(i)),
            warm: warm_of(i, f.serial),
        })
        .collect();
    if sim.connection_rows {
        let mut app_rows: Vec<FlowRow<'_>> = sim
            .ended
            .iter()
            .map(|e| {
                let last = e.flow.last.as_ref().expect("an ended connection has its final state");
                FlowRow {
                    flow: &e.flow,
                    extra: e.flow.extra,
                    counters: last.counters,
                    fin: fin_of(&e.flow, None),
                    classic_ecn: classic_of(&e.flow, None),
                    warm: e.warm.clone(),
                }
            })
            .collect();
        for (i, f) in sim.flows.iter().enumerate().skip(sim.n_static) {
            if !f.free {
                app_rows.push(FlowRow {
                    flow: f,
                    extra: sim.flow_extra(i),
                    counters: live(i),
                    fin: fin_of(f, Some(i)),
                    classic_ecn: classic_of(f, Some(i)),
                    warm: warm_of(i, f.serial),
                });
            }
        }
        app_rows.sort_by_key(|r| r.flow.serial);
        rows.extend(app_rows);
    }
    rows
}

/// The `apps` table: one row per workload, its connections' counters summed over
/// `[warm-up, now]` (those opened before and still alive count from the warm-up).
#[allow(clippy::cast_precision_loss)]
fn apps_table(sim: &Simulation, warm: Option<&[ConnTotals]>, since: SimTime, now: SimTime) -> Table {
    let mut t = Table::new("apps");
    let totals = sim.app_totals_now();
    let first = sim.n_static; // `[[flows]]` entries are apps 0..n_static, one connection each
    let idx: Vec<usize> = (first..sim.apps.len()).collect();
    let d: Vec<ConnTotals> = idx.iter().map(|&a| warm.map_or(totals[a], |w| totals[a].since(&w[a]))).collect();
    let mut live = vec![0u64; sim.apps.len()];
    for f in sim.flows.iter().skip(sim.n_static).filter(|f| !f.free) {
        live[f.app.index()] += 1;
    }
    let span = now.saturating_since(since).as_secs_f64();
    let rate = |bytes: u64| if span > 0.0 { bytes as f64 * 8.0 / span } else { f64::NAN };
    let col = |f: &dyn Fn(&ConnTotals) -> u64| d.iter().map(f).collect::<Vec<u64>>();
    t.push_str("app", idx.iter().map(|&a| sim.apps[a].name.clone()).collect());
    t.push_str("group", idx.iter().map(|&a| sim.groups[sim.apps[a].group as usize].clone()).collect());
    t.push_u64("connections", col(&|c| c.connections));
    t.push_u64("live_connections", idx.iter().map(|&a| live[a]).collect());
    t.push_u64("failed_connections", col(&|c| c.failed));
    t.push_u64("ecn_negotiated", col(&|c| c.ecn));
    t.push_u64("packets_sent", col(&|c| c.counters[0].data_packets_sent));
    t.push_u64("bytes_sent", col(&|c| c.counters[0].data_bytes_sent));
    t.push_u64("packets_retransmitted", col(&|c| c.counters[0].retransmitted_packets));
    t.push_u64("bytes_retransmitted", col(&|c| c.counters[0].retransmitted_bytes));
    t.push_u64("bytes_delivered", col(&|c| c.counters[1].bytes_delivered));
    t.push_u64("reverse_packets_sent", col(&|c| c.counters[1].data_packets_sent));
    t.push_u64("reverse_bytes_sent", col(&|c| c.counters[1].data_bytes_sent));
    t.push_u64("reverse_packets_retransmitted", col(&|c| c.counters[1].retransmitted_packets));
    t.push_u64("reverse_bytes_retransmitted", col(&|c| c.counters[1].retransmitted_bytes));
    t.push_u64("reverse_bytes_delivered", col(&|c| c.counters[0].bytes_delivered));
    t.push_u64("rto_count", col(&|c| c.counters[0].rto_count + c.counters[1].rto_count));
    t.push_u64("rto_after_ecn", col(&|c| c.counters[0].rto_after_ecn + c.counters[1].rto_after_ecn));
    t.push_u64("fast_retransmits", col(&|c| c.counters[0].fast_retransmits + c.counters[1].fast_retransmits));
    t.push_u64("syn_retransmits", col(&|c| c.counters[0].syn_retransmits));
    t.push_u64("synack_retransmits", col(&|c| c.counters[1].syn_retransmits));
    t.push_u64("drops", col(&|c| c.drops));
    t.push_u64("marks", col(&|c| c.marks));
    t.push_u64("ce_received", col(&|c| c.counters[0].ce_received + c.counters[1].ce_received));
    t.push_u64("ecn_reductions", col(&|c| c.counters[0].ecn_reductions + c.counters[1].ecn_reductions));
    t.push_f64("goodput_bps", d.iter().map(|c| rate(c.counters[1].bytes_delivered)).collect());
    t.push_f64("reverse_goodput_bps", d.iter().map(|c| rate(c.counters[0].bytes_delivered)).collect());
    t.push_f64(
        "mean_owd_s",
        d.iter()
            .map(|c| if c.owd_count > 0 { c.owd_sum_ns as f64 * 1e-9 / c.owd_count as f64 } else { f64::NAN })
            .collect(),
    );
    t
}

/// The `records` table: one row per finished transaction, page or object
/// (completed or failed, in the order they finished; those handed over by
/// [`Simulation::drain_records`] are not here), then one per item still under
/// way (state `in_progress`, end = now: its response time is censored), app by
/// app, then one per UDP flow. Built in one linear pass.
fn records_table(sim: &Simulation) -> Table {
    let mut open = Vec::new();
    let view = crate::app::ConnView { flows: &sim.flows, endpoints: &sim.endpoints };
    for (i, a) in sim.apps.iter().enumerate() {
        crate::app::App::open_records(&a.app, crate::ids::AppId::from_index(i), &view, sim.now(), &mut open);
    }
    let mut cols = RecordColumns::with_capacity(sim.records.len() + open.len() + sim.udp.len());
    for r in sim.records.iter().chain(&open) {
        cols.push(sim, r);
    }
    for u in &sim.udp {
        cols.push_udp(sim, u);
    }
    cols.into_table(sim)
}

/// The `records` rows of the finished (completed or failed) records `records`,
/// with the columns of the `records` table: what [`Simulation::drain_records`]
/// hands over.
fn finished_records_table(sim: &Simulation, records: &[crate::app::Record]) -> Table {
    let mut cols = RecordColumns::with_capacity(records.len());
    for r in records {
        cols.push(sim, r);
    }
    cols.into_table(sim)
}

/// The columns of the `records` table, filled row by row.
struct RecordColumns {
    // Name columns are dictionary-coded: a code per row, each name once.
    kind: Vec<u32>,
    state: Vec<u32>,
    app: Vec<u32>,
    group: Vec<u32>,
    client: Vec<u32>,
    server: Vec<u32>,
    start: Vec<f64>,
    end: Vec<f64>,
    response_time: Vec<f64>,
    req: Vec<u64>,
    resp: Vec<u64>,
    objects: Vec<u64>,
    conns: Vec<u64>,
    setup: Vec<f64>,
    syn: Vec<u64>,
    synack: Vec<u64>,
    rtos: Vec<u64>,
    ecn: Vec<u64>,
    packets_sent: Vec<u64>,
    packets_received: Vec<u64>,
    drops: Vec<u64>,
}

fn node_code(id: crate::ids::NodeId) -> u32 {
    u32::try_from(id.index()).expect("node ids fit in u32")
}

fn app_code(id: crate::ids::AppId) -> u32 {
    u32::try_from(id.index()).expect("app ids fit in u32")
}

impl RecordColumns {
    fn with_capacity(n: usize) -> Self {
        let u32s = || Vec::with_capacity(n);
        let u64s = || Vec::with_capacity(n);
        let f64s = || Vec::with_capacity(n);
        RecordColumns {
            kind: u32s(),
            state: u32s(),
            app: u32s(),
            group: u32s(),
            client: u32s(),
            server: u32s(),
            start: f64s(),
            end: f64s(),
            response_time: f64s(),
            req: u64s(),
            resp: u64s(),
            objects: u64s(),
            conns: u64s(),
            setup: f64s(),
            syn: u64s(),
            synack: u64s(),
            rtos: u64s(),
            ecn: u64s(),
            packets_sent: u64s(),
            packets_received: u64s(),
            drops: u64s(),
        }
    }

    /// A transaction, page or object.
    fn push(&mut self, sim: &Simulation, r: &crate::app::Record) {
        self.kind.push(r.kind as u32);
        self.state.push(r.state as u32);
        self.app.push(app_code(r.app));
        self.group.push(sim.apps[r.app.index()].group);
        self.client.push(node_code(r.client));
        self.server.push(node_code(r.server));
        self.start.push(secs(r.start));
        self.end.push(secs(r.end));
        self.response_time.push(dur_secs(r.end.saturating_since(r.start)));
        self.req.push(r.request_bytes);
        self.resp.push(r.response_bytes);
        self.objects.push(u64::from(r.objects));
        self.conns.push(u64::from(r.facts.conns));
        self.setup.push(r.facts.setup.get().map_or(f64::NAN, dur_secs));
        self.syn.push(r.facts.syn_retransmits);
        self.synack.push(r.facts.synack_retransmits);
        self.rtos.push(r.facts.rtos);
        self.ecn.push(u64::from(r.facts.ecn));
        self.packets_sent.push(0);
        self.packets_received.push(0);
        self.drops.push(0);
    }

    /// A UDP flow, which sends until the end of the run.
    #[allow(clippy::cast_precision_loss)]
    fn push_udp(&mut self, sim: &Simulation, u: &crate::flow::UdpFlow) {
        self.kind.push(crate::app::RecordKind::Udp as u32);
        self.state.push(crate::app::RecordState::InProgress as u32);
        self.app.push(app_code(u.app));
        self.group.push(sim.apps[u.app.index()].group);
        self.client.push(node_code(u.src));
        self.server.push(node_code(u.dst));
        self.start.push(secs(u.start));
        self.end.push(secs(sim.now()));
        // For UDP: the mean one-way delay of received datagrams.
        self.response_time.push(if u.received_packets > 0 {
            ns_to_secs(u.delay_sum_ns) / u.received_packets as f64
        } else {
            f64::NAN
        });
        self.req.push(u.sent_bytes);
        self.resp.push(u.received_bytes);
        self.objects.push(0);
        self.conns.push(0);
        self.setup.push(f64::NAN);
        self.syn.push(0);
        self.synack.push(0);
        self.rtos.push(0);
        self.ecn.push(0);
        self.packets_sent.push(u.sent_packets);
        self.packets_received.push(u.received_packets);
        self.drops.push(u.drops);
    }

    fn into_table(self, sim: &Simulation) -> Table {
        let mut t = Table::new("records");
        let node_names: Vec<String> = sim.nodes.iter().map(|n| n.name.clone()).collect();
        t.push_dict("kind", self.kind, crate::app::RecordKind::ALL.iter().map(|k| k.name().to_owned()).collect());
        t.push_dict("state", self.state, crate::app::RecordState::ALL.iter().map(|k| k.name().to_owned()).collect());
        t.push_dict("app", self.app, sim.apps.iter().map(|a| a.name.clone()).collect());
        t.push_dict("group", self.group, sim.groups.clone());
        t.push_dict("client", self.client, node_names.clone());
        t.push_dict("server", self.server, node_names);
        t.push_f64("start_s", self.start);
        t.push_f64("end_s", self.end);
        t.push_f64("response_time_s", self.response_time);
        t.push_u64("request_bytes", self.req);
        t.push_u64("response_bytes", self.resp);
        t.push_u64("objects", self.objects);
        t.push_u64("connections", self.conns);
        t.push_f64("connect_time_s", self.setup);
        t.push_u64("syn_retransmits", self.syn);
        t.push_u64("synack_retransmits", self.synack);
        t.push_u64("rto_count", self.rtos);
        t.push_u64("ecn_negotiated", self.ecn);
        t.push_u64("packets_sent", self.packets_sent);
        t.push_u64("packets_received", self.packets_received);
        t.push_u64("drops", self.drops);
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_columns_are_the_nearest_float_to_the_exact_time() {
        // 300 ms * 1e-9 rounds twice and gives 0.30000000000000004.
        assert_eq!(ns_to_secs(300_000_000), 0.3);
        assert_eq!(secs(SimTime::from_millis(100)), 0.1);
        assert_eq!(dur_secs(SimDuration::from_micros(1_700)), 0.0017);
        for ns in [1u64, 7, 123_456_789, 999_999_999_999, 20_000_000_000] {
            let exact = format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000).parse::<f64>().unwrap();
            assert_eq!(ns_to_secs(ns), exact, "{ns} ns");
        }
    }
}
