//! What a running simulation records on its own schedule: the warm-up
//! snapshot and the sampled time series.

use super::Simulation;
use crate::ids::FlowId;
use crate::stats::{ConnTotals, FlowSample, LazyWarm, Snapshot, WarmFlow, WarmPort, WARM_ABSENT, WARM_PENDING};

impl Simulation {
    /// The counters at the end of warm-up as one sweep then would have read them: those
    /// copied since, and the rest read now (nothing has changed them since).
    pub(crate) fn warm_snapshot(&self) -> Option<Snapshot> {
        let w = self.warm.as_deref()?;
        let mut apps = w.apps.clone();
        let flows = w
            .flow_at
            .iter()
            .enumerate()
            .map(|(i, &k)| match k {
                WARM_ABSENT => None,
                WARM_PENDING => Some(self.warm_flow_now(i, &mut apps)),
                k => Some(w.flows[k as usize]),
            })
            .collect();
        let ports: Vec<WarmPort> = (0..self.ports.len())
            .map(|i| match w.port_at[i] {
                WARM_PENDING => {
                    let p = &self.ports[i];
                    let mut counters = p.counters();
                    // As `Queue::integrate` to the end of warm-up would bring them, without mutating.
                    let dt = u128::from(w.time.saturating_since(p.queue.last_change()).as_nanos());
                    counters.area_packets += u128::from(p.queue.len_packets()) * dt;
                    counters.area_bytes += u128::from(p.queue.len_bytes()) * dt;
                    WarmPort { counters, busy: p.busy_until_time(w.time), backlog: p.queue.len_packets() }
                }
                k => w.ports[k as usize],
            })
            .collect();
        Some(Snapshot {
            time: w.time,
            flows,
            apps,
            queues: ports.iter().map(|p| p.counters).collect(),
            busy: ports.iter().map(|p| p.busy).collect(),
            backlog: ports.iter().map(|p| p.backlog).collect(),
        })
    }

    /// True if port `i`'s warm-up copy is still to be taken (the maxima not yet restarted).
    pub(crate) fn warm_port_pending(&self, i: usize) -> bool {
        self.warm.as_deref().is_some_and(|w| w.port_at[i] == WARM_PENDING)
    }

    /// Connection slot `i`'s counters now, as its warm-up copy; a workload connection's are
    /// added to its app's totals in `apps` as `app_totals_now` would add them.
    fn warm_flow_now(&self, i: usize, apps: &mut [ConnTotals]) -> WarmFlow {
        let f = &self.flows[i];
        let (a, b) = self.flow_counters(FlowId::from_index(i));
        let extra = self.flow_extra(i);
        if i >= self.n_static {
            let ecn = f.last.as_ref().map_or_else(|| self.initiator(i).is_some_and(|s| s.ecn_negotiated()), |l| l.ecn);
            apps[f.app.index()].add([a, b], &extra, ecn, f.start >= self.warmup);
        }
        WarmFlow { serial: f.serial, counters: [a, b], extra }
    }

    /// The end of warm-up: every live connection and every port marked to be copied before
    /// its first change ([`LazyWarm`]); the shared buffers, a few per router, restart their
    /// maxima now.
    pub(crate) fn begin_warm(&mut self) {
        for b in &mut self.buffers {
            b.reset_max();
        }
        let mut flow_at = vec![WARM_PENDING; self.flows.len()];
        for &i in &self.free_flows {
            flow_at[i as usize] = WARM_ABSENT;
        }
        let pending = self.flows.len() - self.free_flows.len() + self.ports.len();
        self.warm = Some(Box::new(LazyWarm {
            time: self.now(),
            flows: Vec::with_capacity(self.flows.len() - self.free_flows.len()),
            flow_at,
            port_at: vec![WARM_PENDING; self.ports.len()],
            ports: Vec::with_capacity(self.ports.len()),
            pending,
            apps: self.app_totals.clone(),
        }));
        self.warm_pending = pending > 0;
    }

    /// Copy connection slot `i`'s warm-up counters (it is pending: unchanged since).
    #[cold]
    #[inline(never)]
    pub(crate) fn capture_flow(&mut self, i: usize) {
        let mut w = self.warm.take().expect("pending only while there is a lazy snapshot");
        debug_assert_eq!(w.flow_at[i], WARM_PENDING);
        let copy = self.warm_flow_now(i, &mut w.apps);
        w.flow_at[i] = u32::try_from(w.flows.len()).expect("flow ids fit in u32");
        w.flows.push(copy);
        w.pending -= 1;
        self.warm_pending = w.pending > 0;
        self.warm = Some(w);
    }

    /// Copy port `i`'s warm-up counters (it is pending: unchanged since), after the changes the
    /// end of warm-up makes: the occupancy integrals brought up to it, the maxima restarted.
    #[cold]
    #[inline(never)]
    pub(crate) fn capture_port(&mut self, i: usize) {
        let w = self.warm.as_deref_mut().expect("pending only while there is a lazy snapshot");
        debug_assert_eq!(w.port_at[i], WARM_PENDING);
        let p = &mut self.ports[i];
        p.queue.integrate(w.time);
        p.reset_max();
        w.port_at[i] = u32::try_from(w.ports.len()).expect("ports fit in u32");
        w.ports.push(WarmPort {
            counters: p.counters(),
            busy: p.busy_until_time(w.time),
            backlog: p.queue.len_packets(),
        });
        w.pending -= 1;
        self.warm_pending = w.pending > 0;
    }

    /// The eager snapshot: every counter read at once, now (tests compare it with the lazy one).
    #[cfg(test)]
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

#[cfg(test)]
mod tests {
    use crate::stats::WARM_PENDING;
    use crate::{ScenarioSpec, SimTime, Simulation};

    impl Simulation {
        /// Take every pending warm-up copy now, as one sweep would.
        fn capture_all(&mut self) {
            let Some(w) = self.warm.as_deref() else { return };
            let pending =
                |at: &[u32]| at.iter().enumerate().filter(|(_, k)| **k == WARM_PENDING).map(|(i, _)| i).collect();
            let (flows, ports): (Vec<usize>, Vec<usize>) = (pending(&w.flow_at), pending(&w.port_at));
            for i in flows {
                self.capture_flow(i);
            }
            for i in ports {
                self.capture_port(i);
            }
            assert!(!self.warm_pending);
        }
    }

    /// Web sessions and pages over RED with ECN at 120 % of a 10 Mb/s link, with a warm-up and
    /// a row per connection: connections open, end and free their slots across the warm-up.
    const WEB: &str = r#"
simulation = { duration = "10s", warmup = "3s", connection_rows = true }
tcp = { mss = 1460, delayed_ack = false, ecn = "request" }
nodes = [{ name = "r1", kind = "router" }, { name = "r2", kind = "router" }, { name = "c0", kind = "host" },
  { name = "c1", kind = "host" }, { name = "s0", kind = "host" }, { name = "s1", kind = "host" }]
links = [
  { a = "r1", b = "r2", rate = "10Mbps", delay = "5ms", queue = { type = "red", limit_packets = 60, min_th = 5, max_th = 15, ecn = "rfc3168" } },
  { a = "c0", b = "r1", rate = "1Gbps", delay = "5ms" }, { a = "c1", b = "r1", rate = "1Gbps", delay = "5ms" },
  { a = "s0", b = "r2", rate = "1Gbps", delay = "5ms" }, { a = "s1", b = "r2", rate = "1Gbps", delay = "5ms" },
]
[[apps]]
name = "web"
clients = ["c0"]
servers = ["s0", "s1"]
model = { type = "websessions", offered_load = { link = 0, percent = 120 } }
[[apps]]
name = "browse"
clients = ["c1"]
servers = ["s0"]
start_jitter = "1s"
model = { type = "http" }
"#;

    fn sim(name: &str) -> Simulation {
        let text = if name == "web" {
            WEB.to_owned()
        } else {
            std::fs::read_to_string(format!("{}/../../examples/{name}.toml", env!("CARGO_MANIFEST_DIR"))).unwrap()
        };
        Simulation::new(&ScenarioSpec::from_toml_str(&text).unwrap(), None).unwrap()
    }

    #[test]
    fn the_lazy_warm_up_snapshot_is_what_one_sweep_at_the_end_of_warm_up_reads() {
        // Every copy taken at its connection's or port's first change after the warm-up (the
        // run as it is) gives the results of every copy taken at the warm-up's instant, which
        // is what the sweep there read (`snapshot`, after the ports' integrals and maxima).
        for name in
            ["dumbbell", "hetero_rtt", "parking_lot", "dctcp_cubic_fq_codel", "dualpi2_l4s", "prague_classic", "web"]
        {
            let mut lazy = sim(name);
            let warmup = lazy.warmup;
            assert!(warmup > SimTime::ZERO, "{name} has a warm-up");
            lazy.run().unwrap();
            let mut eager = sim(name);
            eager.run_until(warmup).unwrap();
            let read_now = eager.warm_snapshot().expect("the warm-up ended");
            eager.capture_all();
            let swept = eager.snapshot();
            assert_eq!(eager.warm_snapshot().as_ref(), Some(&swept), "{name}: copies taken at the warm-up");
            assert_eq!(read_now, swept, "{name}: pending copies read at the warm-up");
            eager.run().unwrap();
            assert_eq!(lazy.results().digest(), eager.results().digest(), "{name}");
            let w = lazy.warm.as_deref().unwrap();
            assert!(!w.flows.is_empty() && !w.ports.is_empty(), "{name}: copies were taken lazily");
            if name == "web" {
                assert!(!lazy.ended.is_empty() && !lazy.free_flows.is_empty(), "connections ended and freed slots");
            }
        }
    }
}
