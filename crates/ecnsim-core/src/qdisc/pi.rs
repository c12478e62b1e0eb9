//! PI: the proportional-integral AQM controller.
//!
//! Read first:
//! - [HMTG01] C. V. Hollot, V. Misra, D. Towsley, W. Gong, "On Designing
//!   Improved Controllers for AQM Routers Supporting TCP Flows", INFOCOM 2001,
//!   §IV (the discrete controller and its example gains).
//! - [ns-2] ns-2 `queue/pi.cc` (`PIQueue::calculate_p`, `enque`,
//!   `drop_early`), the authors' code: `a_`, `b_`, `w_` (sampling frequency,
//!   Hz), `qref_`, `setbit_`, `bytes_`, `queue_in_bytes_`.
//!
//! Every `1 / w` seconds:
//! `p <- a (q - q_ref) - b (q_old - q_ref) + p`, clamped to [0, 1], `q_old <- q`.
//! Each arrival is then dropped (or, with ECN, marked if ECT) with
//! probability `p`, or `p * size / mean_pktsize` in byte mode.
//! The periodic update runs lazily (see [`super::Ticker`]), first at `1 / w`.

use super::QueuedPacket;
use super::{
    clamp01, is_markable, AqmState, DropReason, Fifo, Limit, MarkReason, Measure, NonEct, QdiscCx, QueueDisc, Ticker,
};
use crate::time::{SimDuration, SimTime};

/// Resolved PI parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PiConfig {
    /// Buffer limit.
    pub limit: Limit,
    /// Queue measure of `q` (bytes are divided by `mean_pktsize`, as ns-2 `qib_`).
    pub measure: Measure,
    /// Mean packet size, bytes (byte measure and byte mode).
    pub mean_pktsize: u32,
    /// Gain on the current error (HMTG01 `a`).
    pub a: f64,
    /// Gain on the previous error (HMTG01 `b`).
    pub b: f64,
    /// The update period, `1 / w`.
    pub period: SimDuration,
    /// Target queue length, packets (HMTG01 `q_ref`).
    pub qref: f64,
    /// Mark ECT packets instead of dropping them (ns-2 `setbit_`).
    pub ecn: bool,
    /// Not-ECT packets on a marking decision.
    pub non_ect: NonEct,
    /// Scale the probability by `size / mean_pktsize` (ns-2 `bytes_`).
    pub byte_mode: bool,
}

/// The controller's state.
#[derive(Clone, Copy, Debug, PartialEq)]
struct PiState {
    /// The drop/mark probability (ns-2 `v_prob`).
    p: f64,
    /// The queue at the previous update, in the measure's raw unit (ns-2 `qold`).
    q_old: f64,
}

/// A PI queue.
#[derive(Debug)]
pub struct Pi {
    cfg: PiConfig,
    fifo: Fifo,
    state: PiState,
    ticker: Ticker,
}

impl Pi {
    /// An empty PI queue.
    #[must_use]
    pub fn new(cfg: PiConfig) -> Self {
        Pi { cfg, fifo: Fifo::new(cfg.limit), state: PiState { p: 0.0, q_old: 0.0 }, ticker: Ticker::new(cfg.period) }
    }

    /// The current probability.
    #[must_use]
    pub fn probability(&self) -> f64 {
        self.state.p
    }

    /// Run the updates due by `now`.
    fn catch_up(&mut self, now: SimTime) {
        let q = self.fifo.measured(self.cfg.measure);
        let (cfg, state) = (&self.cfg, &mut self.state);
        self.ticker.run_until(now, || {
            let before = *state;
            let scale = match cfg.measure {
                Measure::Packets => 1.0,
                Measure::Bytes => f64::from(cfg.mean_pktsize),
            };
            // HMTG01 §IV / ns-2 calculate_p: p = a (q - qref) - b (qold - qref) + p.
            let p = cfg.a * (q / scale - cfg.qref) - cfg.b * (state.q_old / scale - cfg.qref) + state.p;
            // ns-2 calculate_p: if (p < 0) p = 0; if (p > 1) p = 1.
            state.p = clamp01(p);
            state.q_old = q;
            *state != before
        });
    }
}

impl QueueDisc for Pi {
    fn enqueue(&mut self, mut pkt: QueuedPacket, cx: &mut QdiscCx<'_>) {
        self.catch_up(cx.now);
        // ns-2 enque: if (qlen >= qlim) droptype = DTYPE_FORCED.
        if !self.fifo.fits(self.cfg.limit, &pkt) {
            cx.drop_packet(pkt, DropReason::Overflow);
            return;
        }
        let mut p = self.state.p;
        if self.cfg.byte_mode {
            // ns-2 drop_early: p = p * size / mean_pktsize, at most 1.
            p = (p * f64::from(pkt.size) / f64::from(self.cfg.mean_pktsize)).min(1.0);
        }
        if cx.bernoulli(p) {
            if self.cfg.ecn && is_markable(pkt.ecn) {
                // ns-2 drop_early: if (setbit_ && ect) mark Congestion Experienced, no drop.
                cx.mark(&mut pkt, MarkReason::Early);
            } else if !(self.cfg.ecn && self.cfg.non_ect == NonEct::Pass) {
                cx.drop_packet(pkt, DropReason::Early);
                return;
            }
        }
        self.fifo.push_back(pkt);
    }

    fn dequeue(&mut self, cx: &mut QdiscCx<'_>) -> Option<QueuedPacket> {
        self.catch_up(cx.now);
        self.fifo.pop_front()
    }

    fn len_packets(&self) -> u64 {
        self.fifo.len() as u64
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }
    fn give_back_memory(&mut self) {
        self.fifo.give_back_memory();
    }

    fn aqm_state(&mut self, now: SimTime) -> AqmState {
        self.catch_up(now);
        AqmState { avg: f64::NAN, prob: self.state.p, max_p: f64::NAN }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{pkt, random_workout, Driver};
    use super::super::AnyQdisc;
    use super::*;
    use crate::packet::Ecn;

    fn cfg() -> PiConfig {
        PiConfig {
            limit: Limit::Packets(800),
            measure: Measure::Packets,
            mean_pktsize: 500,
            a: 1.822e-5,
            b: 1.816e-5,
            period: SimDuration::from_nanos(1_000_000_000 / 160),
            qref: 200.0,
            ecn: false,
            non_ect: NonEct::Drop,
            byte_mode: false,
        }
    }

    /// The controller, step by step, as HMTG01 writes it.
    fn reference(steps: &[f64], c: &PiConfig) -> Vec<f64> {
        let (mut p, mut q_old) = (0.0f64, 0.0f64);
        steps
            .iter()
            .map(|&q| {
                p = (c.a * (q - c.qref) - c.b * (q_old - c.qref) + p).clamp(0.0, 1.0);
                q_old = q;
                p
            })
            .collect()
    }

    #[test]
    fn updates_follow_the_difference_equation_at_each_sample() {
        let c = cfg();
        let mut d = Driver::new(Pi::new(c), 10_000_000, 1);
        // Hold the queue at 300 packets for 5 periods, then at 250 for 3, then drain to 0 for 4.
        let mut script = Vec::new();
        let mut now = SimTime::ZERO;
        for _ in 0..300 {
            d.q.fifo.push_back(pkt(0, 500, Ecn::NotEct));
        }
        for k in 1..=5u64 {
            now = SimTime::ZERO + c.period.saturating_mul(k);
            script.push(300.0);
        }
        d.q.catch_up(now);
        assert!((d.q.probability() - reference(&script, &c)[4]).abs() < 1e-15);
        for _ in 0..50 {
            d.q.fifo.pop_front();
        }
        for k in 6..=8u64 {
            now = SimTime::ZERO + c.period.saturating_mul(k);
            script.push(250.0);
        }
        d.q.catch_up(now + SimDuration::from_nanos(1)); // between samples: nothing more
        assert!((d.q.probability() - reference(&script, &c)[7]).abs() < 1e-15);
        while d.q.fifo.pop_front().is_some() {}
        for k in 9..=12u64 {
            now = SimTime::ZERO + c.period.saturating_mul(k);
            script.push(0.0);
        }
        d.q.catch_up(now);
        let want = reference(&script, &c);
        assert!((d.q.probability() - want[11]).abs() < 1e-15, "{} vs {}", d.q.probability(), want[11]);
        assert!(want[4] > 0.0 && want[11] < want[7]);
    }

    #[test]
    fn idle_catch_up_stops_at_the_fixed_point() {
        let mut d = Driver::new(Pi::new(cfg()), 10_000_000, 1);
        d.q.state.p = 0.3;
        // An empty queue for 1000 s: p decreases to 0 and stays.
        d.q.catch_up(SimTime::from_secs(1000));
        assert_eq!(d.q.probability(), 0.0);
        assert!(d.q.ticker.next() > SimTime::from_secs(1000));
        assert!(d.q.ticker.next() <= SimTime::from_secs(1000) + cfg().period);
    }

    #[test]
    fn arrivals_are_dropped_or_marked_with_probability_p() {
        for ecn in [false, true] {
            let mut c = cfg();
            c.ecn = ecn;
            c.period = SimDuration::from_secs(1_000_000); // freeze p
            let mut d = Driver::new(Pi::new(c), 10_000_000, 3);
            d.q.state.p = 0.2;
            let (mut drops, mut marks) = (0u32, 0u32);
            for i in 0..50_000u32 {
                let out = d.enqueue(pkt(u64::from(i), 500, Ecn::Ect0), SimTime::ZERO);
                drops += u32::try_from(out.drops.len()).unwrap();
                marks += u32::try_from(out.marks.len()).unwrap();
                d.dequeue(SimTime::ZERO);
            }
            let (signal, other) = if ecn { (marks, drops) } else { (drops, marks) };
            assert_eq!(other, 0);
            assert!((f64::from(signal) / 50_000.0 - 0.2).abs() < 0.01);
        }
    }

    #[test]
    fn invariants_hold_over_random_workouts() {
        for seed in 0..10 {
            let mut c = cfg();
            c.limit = Limit::Packets(30);
            c.qref = 5.0;
            c.a = 0.002;
            c.b = 0.0019;
            c.ecn = seed % 2 == 0;
            c.byte_mode = seed % 3 == 0;
            c.non_ect = if seed % 4 == 0 { NonEct::Pass } else { NonEct::Drop };
            random_workout(AnyQdisc::Pi(Pi::new(c)), seed, 3000, 2_000_000);
        }
    }
}
