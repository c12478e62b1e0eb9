//! What a running simulation records on its own schedule: the warm-up
//! snapshot and the sampled time series.

use super::Simulation;
use crate::ids::FlowId;
use crate::stats::{ConnTotals, FlowSample, Snapshot, WarmFlow};

impl Simulation {
    pub(crate) fn snapshot(&self) -> Snapshot {
        let sim = self;
        Snapshot {
            time: sim.now(),
            flows: sim
                .flows
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    (!f.free).then(|| {
                        let (a, b) = sim.flow_counters(FlowId::from_index(i));
                        WarmFlow { serial: f.serial, counters: [a, b], extra: sim.flow_extra(i) }
                    })
                })
                .collect(),
            apps: sim.app_totals_now(),
            queues: sim.ports.iter().map(|p| p.counters()).collect(),
            busy: sim.ports.iter().map(|p| p.busy_until_time(sim.now())).collect(),
            backlog: sim.ports.iter().map(|p| p.queue.len_packets()).collect(),
        }
    }

    /// Every app's totals now: those of its freed connections plus its live ones'.
    pub(crate) fn app_totals_now(&self) -> Vec<ConnTotals> {
        let sim = self;
        let mut totals = sim.app_totals.clone();
        for (i, f) in sim.flows.iter().enumerate().skip(sim.n_static) {
            if f.free {
                continue;
            }
            let (a, b) = sim.flow_counters(FlowId::from_index(i));
            let ecn = f.last.as_ref().map_or_else(|| sim.initiator(i).is_some_and(|s| s.ecn_negotiated()), |l| l.ecn);
            totals[f.app.index()].add([a, b], &sim.flow_extra(i), ecn, f.start >= sim.warmup);
        }
        totals
    }

    /// Record one sample of every flow and queue. If the columns cannot grow,
    /// the run stops with [`crate::SimError::Resource`] instead.
    ///
    /// After the rows are written, the columns are reserved for every sample still
    /// to come at this sample's row counts (the build's memory estimate counts them
    /// all), so a run whose connections stay open fills them without growing again;
    /// they grow (doubling) only when a sample has more rows than that.
    pub(crate) fn sample(&mut self) {
        let sim = self;
        let live = sim.endpoints.len() / 2;
        if sim.series.try_reserve(1, live, sim.ports.len(), sim.ports.len()).is_err() {
            let e = crate::SimError::resource(
                "simulation.sample_interval",
                format!(
                    "stopped at t = {}: the time series ({}) could not grow further; use a longer sample_interval",
                    sim.now(),
                    crate::error::fmt_bytes(sim.series.heap_bytes())
                ),
            );
            sim.stop(e);
            return;
        }
        let (flow_rows, queue_rows, aqm_rows) =
            (sim.series.flow_rows(), sim.series.queue_rows(), sim.series.aqm_rows());
        // The ports are fixed once built, and so is which are sampled: every sample lists these.
        let (n_ports, sampled_ports) = (sim.ports.len(), &sim.sampled_ports);
        let port_ids = || {
            (0..n_ports)
                .filter(|&i| sampled_ports.as_ref().is_none_or(|m| m[i]))
                .map(|i| u32::try_from(i).expect("port indices fit in u32, as PortId's"))
                .collect()
        };
        sim.series.begin_sample(sim.now().as_nanos(), port_ids);
        // Live connections only, in slot order (the `[[flows]]` connections hold the first slots).
        for pair in sim.endpoints.chunks_exact(2) {
            let (ep, responder) = (&pair[0], &pair[1]);
            let i = ep.flow.index();
            if !ep.live || sim.now() < sim.flows[i].start {
                continue;
            }
            if sim.sampled_apps.as_ref().is_some_and(|m| !m[sim.flows[i].app.index()]) {
                continue;
            }
            let s = &ep.sock;
            let x = sim.flow_extra(i);
            sim.series.push_flow(&FlowSample {
                flow_id: sim.flows[i].serial,
                cwnd: s.cwnd(),
                ssthresh: ssthresh_f64(s.ssthresh()),
                bytes_sent: s.counters.data_bytes_sent,
                bytes_delivered: responder.sock.counters.bytes_delivered,
                drops: x.drops,
                marks: x.marks,
                owd_sum_ns: x.owd_sum_ns,
                owd_count: x.owd_count,
            });
        }
        let at = sim.now();
        let (series, ports) = (&mut sim.series, &mut sim.ports);
        for k in 0..series.queue_ids().len() {
            let p = &mut ports[series.queue_ids()[k] as usize];
            let (packets, bytes) = (p.queue.len_packets(), p.queue.len_bytes());
            series.push_queue(packets, bytes, p.queue.aqm_state(at));
        }
        if let Some(dt) = sim.sample_interval {
            // Samples after this one: at now + k * dt up to the end (as `Event::Sample` schedules).
            let later = sim.end.as_nanos().saturating_sub(sim.now().as_nanos()) / dt.as_nanos().max(1);
            let later = usize::try_from(later).unwrap_or(usize::MAX);
            let flow_rows = sim.series.flow_rows() - flow_rows;
            let queue_rows = sim.series.queue_rows() - queue_rows;
            let aqm_rows = sim.series.aqm_rows() - aqm_rows;
            // Only room ahead: if the allocator refuses, the next sample's own check decides.
            let _ = sim.series.try_reserve(
                later,
                flow_rows.saturating_mul(later),
                queue_rows.saturating_mul(later),
                aqm_rows.saturating_mul(later),
            );
        }
    }
}

/// ssthresh as a real; the "arbitrarily high" initial value becomes infinity.
#[allow(clippy::cast_precision_loss)]
fn ssthresh_f64(v: u64) -> f64 {
    if v >= u64::MAX / 4 {
        f64::INFINITY
    } else {
        v as f64
    }
}
