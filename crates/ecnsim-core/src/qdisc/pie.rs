//! PIE: Proportional Integral controller Enhanced.
//!
//! Read first:
//! - RFC 8033 (Pan, Natarajan, Baker, White), §4.1 (random dropping and its
//!   work-conserving safeguards), §4.2 (drop probability calculation with
//!   auto-tuned alpha and beta, decay), §4.3 (latency: departure-rate
//!   estimation or timestamps), §4.4 (burst tolerance), §5.1 (ECN: mark
//!   below `mark_ecn_threshold`), §5.4-5.5 (de-randomization, cap on the
//!   drop adjustment); Appendix A pseudocode.
//! - ns-3 `pie-queue-disc.cc` and Linux `net/sched/sch_pie.c`, the reference
//!   implementations compared in `docs/models/pie.md`.
//!
//! The drop probability is updated every `t_update` (lazily, see
//! [`super::Ticker`]; first at `t_update`). With timestamps, the latency
//! used by an update is the sojourn time of the last departed packet, 0 if
//! that departure emptied the queue (ns-3, Linux).

use serde::{Deserialize, Serialize};

use super::QueuedPacket;
use super::{clamp01, is_markable, AqmState, DropReason, Fifo, Limit, MarkReason, QdiscCx, QueueDisc, Ticker};
use crate::time::{SimDuration, SimTime};

/// How PIE measures the queueing latency.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DelayEstimator {
    /// The sojourn time of departing packets (RFC 8033 §4.3; ns-3 and Linux default).
    Timestamp,
    /// Little's law: queue bytes / estimated departure rate (RFC 8033 §4.3,
    /// measured over cycles of `dq_threshold` bytes).
    DequeueRate,
}

/// Whose `drop_early` PIE follows where RFC 8033 and Linux differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PieDropEarly {
    /// RFC 8033 §4.1 and Appendix B `drop_early`: the safeguard on `qdelay_old` and `backlog
    /// <= 2 mean_pktsize`; `accu_prob` accumulates `drop_prob` (byte mode scales only the draw).
    Rfc,
    /// Linux `sch_pie.c` `pie_drop_early`: the safeguard on the latest latency sample and
    /// `backlog < 2 mtu`; byte mode scales the probability of packets of at most `mean_pktsize`
    /// bytes, and `accu_prob` accumulates that scaled probability.
    Linux,
}

/// Resolved PIE parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieConfig {
    /// Buffer limit.
    pub limit: Limit,
    /// Target latency (RFC 8033: QDELAY_REF, 15 ms).
    pub target: SimDuration,
    /// Update period (RFC 8033: T_UPDATE, 15 ms).
    pub t_update: SimDuration,
    /// Gain on the latency error, Hz (RFC 8033: alpha 0.125).
    pub alpha: f64,
    /// Gain on the latency trend, Hz (RFC 8033: beta 1.25).
    pub beta: f64,
    /// Burst allowance (RFC 8033: MAX_BURST, 150 ms).
    pub max_burst: SimDuration,
    /// Mark ECT packets instead of dropping them while `drop_prob <= mark_ecn_threshold`.
    pub ecn: bool,
    /// RFC 8033 §5.1: MAX_ECNTH (0.1).
    pub mark_ecn_threshold: f64,
    /// Scale the probability by `size / mean_pktsize` (RFC 8033 §5.2).
    pub byte_mode: bool,
    /// Mean packet size, bytes (byte mode and the "2 packets" safeguard).
    pub mean_pktsize: u32,
    /// Latency estimator.
    pub delay_estimator: DelayEstimator,
    /// Departure-rate measurement cycle, bytes (RFC 8033: DQ_THRESHOLD, 16 KB).
    pub dq_threshold: u64,
    /// RFC 8033 §5.5: cap the adjustment at 2% once `drop_prob >= 10%`.
    pub cap_drop_adjustment: bool,
    /// RFC 8033 §5.4: de-randomize drops with an accumulated probability.
    pub derandomize: bool,
    /// Whose `drop_early` (RFC 8033's or Linux's) where they differ.
    pub drop_early: PieDropEarly,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct PieState {
    drop_prob: f64,
    /// Latency from the last departure, seconds (timestamp estimator).
    qdelay_last: f64,
    /// Latency at the previous update, seconds (RFC 8033 `qdelay_old`).
    qdelay_old: f64,
    /// Remaining burst allowance, ns.
    burst_allowance: u64,
    /// RFC 8033 `accu_prob`.
    accu_prob: f64,
    /// Departure-rate estimation (RFC 8033 `dq_count`, `dq_tstamp`, `avg_dq_rate`).
    in_measurement: bool,
    dq_count: u64,
    dq_start: SimTime,
    /// Bytes per second; 0 = no estimate.
    avg_dq_rate: f64,
}

/// PIE's controller for one queue: its state and its update clock. [`Pie`] runs one over
/// its FIFO; FQ-PIE one per flow queue, all on the same clock (`t_update`, `2 t_update`, ...).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PieVars {
    state: PieState,
    ticker: Ticker,
}

impl PieVars {
    /// A controller at rest (RFC 8033 §4.4: the full burst allowance).
    pub(crate) fn new(cfg: &PieConfig) -> Self {
        PieVars {
            state: PieState {
                drop_prob: 0.0,
                qdelay_last: 0.0,
                qdelay_old: 0.0,
                // RFC 8033 §4.4: burst_allowance starts at MAX_BURST.
                burst_allowance: cfg.max_burst.as_nanos(),
                accu_prob: 0.0,
                in_measurement: false,
                dq_count: 0,
                dq_start: SimTime::ZERO,
                avg_dq_rate: 0.0,
            },
            ticker: Ticker::new(cfg.t_update),
        }
    }

    /// The current drop probability.
    pub(crate) fn drop_prob(&self) -> f64 {
        self.state.drop_prob
    }

    /// RFC 8033 §4.2 `calculate_drop_prob`, for every update due by `now`, with `backlog`
    /// bytes queued (constant since the last packet event of this queue).
    pub(crate) fn catch_up(&mut self, cfg: &PieConfig, backlog: u64, now: SimTime) {
        #[allow(clippy::cast_precision_loss)]
        let bytes = backlog as f64;
        let st = &mut self.state;
        let target = cfg.target.as_secs_f64();
        self.ticker.run_until(now, || {
            let before = *st;
            let qdelay = match cfg.delay_estimator {
                DelayEstimator::Timestamp => st.qdelay_last,
                // RFC 8033 §4.3: current_qdelay = queue_.byte_length() / dq_rate.
                DelayEstimator::DequeueRate if st.avg_dq_rate > 0.0 => bytes / st.avg_dq_rate,
                DelayEstimator::DequeueRate => 0.0,
            };
            // RFC 8033 §4.2: p = alpha * (current_qdelay - QDELAY_REF) + beta * (current_qdelay - qdelay_old).
            let mut p = cfg.alpha * (qdelay - target) + cfg.beta * (qdelay - st.qdelay_old);
            // RFC 8033 §4.2: auto-tune alpha and beta by the range drop_prob is in.
            p /= if st.drop_prob < 0.000_001 {
                2048.0
            } else if st.drop_prob < 0.000_01 {
                512.0
            } else if st.drop_prob < 0.000_1 {
                128.0
            } else if st.drop_prob < 0.001 {
                32.0
            } else if st.drop_prob < 0.01 {
                8.0
            } else if st.drop_prob < 0.1 {
                2.0
            } else {
                1.0
            };
            // RFC 8033 §5.5: if (drop_prob >= 0.1 && p > 0.02) p = 0.02.
            if cfg.cap_drop_adjustment && st.drop_prob >= 0.1 && p > 0.02 {
                p = 0.02;
            }
            let mut prob = st.drop_prob + p;
            // RFC 8033 §4.2: decay the probability when the queue is idle: if both latencies are 0, *= 0.98.
            if qdelay == 0.0 && st.qdelay_old == 0.0 {
                prob *= 0.98;
            }
            st.drop_prob = clamp01(prob);
            // RFC 8033 §4.4: reset the burst allowance when the queue is calm, then age it by T_UPDATE.
            if st.drop_prob == 0.0 && qdelay < target / 2.0 && st.qdelay_old < target / 2.0 {
                st.burst_allowance = cfg.max_burst.as_nanos();
                if cfg.delay_estimator == DelayEstimator::DequeueRate {
                    // RFC 8033 Appendix A: the departure-rate estimate restarts with the burst allowance.
                    st.in_measurement = false;
                    st.avg_dq_rate = 0.0;
                }
            }
            st.burst_allowance = st.burst_allowance.saturating_sub(cfg.t_update.as_nanos());
            st.qdelay_old = qdelay;
            *st != before
        });
    }

    /// RFC 8033 §4.1 `drop_early`, for an arrival at a queue holding `backlog` bytes.
    fn drop_early(&mut self, cfg: &PieConfig, backlog: u64, pkt: &QueuedPacket, cx: &mut QdiscCx<'_>) -> bool {
        let st = &mut self.state;
        let linux = cfg.drop_early == PieDropEarly::Linux;
        // RFC 8033 §4.4: no random drop while burst_allowance > 0.
        if st.burst_allowance > 0 {
            return false;
        }
        // RFC 8033 §4.1: safeguard: if (qdelay_old < QDELAY_REF/2 && drop_prob < 0.2) ||
        // (queue.byte_length() <= 2 * MEAN_PKTSIZE) return ENQUE.
        // DEVIATION(RFC 8033) with drop_early = "linux": Linux pie_drop_early tests vars->qdelay (with timestamps the latest departure's sample) and "backlog < 2 * mtu".
        let qdelay =
            if linux && cfg.delay_estimator == DelayEstimator::Timestamp { st.qdelay_last } else { st.qdelay_old };
        let small = 2 * u64::from(cfg.mean_pktsize);
        if (qdelay < cfg.target.as_secs_f64() / 2.0 && st.drop_prob < 0.2)
            || (if linux { backlog < small } else { backlog <= small })
        {
            return false;
        }
        let mut p = st.drop_prob;
        if cfg.byte_mode {
            if !linux {
                // RFC 8033 §5.2: p = p * packet_size / MEAN_PKTSIZE.
                p = (p * f64::from(pkt.size) / f64::from(cfg.mean_pktsize)).min(1.0);
            } else if pkt.size <= cfg.mean_pktsize {
                // Linux pie_drop_early: if (bytemode && packet_size <= mtu) local_prob = packet_size * (prob / mtu).
                p = p * f64::from(pkt.size) / f64::from(cfg.mean_pktsize);
            }
        }
        if cfg.derandomize {
            // RFC 8033 §5.4: if (drop_prob == 0) accu_prob = 0; accu_prob += drop_prob.
            // Linux pie_drop_early: the same with local_prob, the byte-scaled probability.
            let add = if linux { p } else { st.drop_prob };
            if add == 0.0 {
                st.accu_prob = 0.0;
            }
            st.accu_prob += add;
            // RFC 8033 §5.4: if (accu_prob < 0.85) return ENQUE; if (accu_prob >= 8.5) return DROP.
            if st.accu_prob < 0.85 {
                return false;
            }
            if st.accu_prob >= 8.5 {
                return true;
            }
        }
        let hit = cx.bernoulli(p);
        if hit && cfg.derandomize {
            // RFC 8033 Appendix B drop_early: if (u < drop_prob) { accu_prob = 0; return DROP; }
            // (Linux pie_drop_early: the same), whether the packet is then marked or dropped.
            st.accu_prob = 0.0;
        }
        hit
    }

    /// RFC 8033 §4.1 and §5.1: the decision on an arrival at a queue holding `backlog`
    /// bytes, with room for it. `Some`: it joins the queue (CE-marked if PIE marked it);
    /// `None`: PIE dropped it (`DropReason::Early`, reported through `cx`).
    pub(crate) fn admit(
        &mut self,
        cfg: &PieConfig,
        backlog: u64,
        mut pkt: QueuedPacket,
        cx: &mut QdiscCx<'_>,
    ) -> Option<QueuedPacket> {
        if self.drop_early(cfg, backlog, &pkt, cx) {
            // RFC 8033 §5.1: mark ECT packets instead while drop_prob <= MAX_ECNTH.
            if cfg.ecn && self.state.drop_prob <= cfg.mark_ecn_threshold && is_markable(pkt.ecn) {
                cx.mark(&mut pkt, MarkReason::Early);
            } else {
                // RFC 8033 §5.4: accu_prob = 0 after a drop.
                self.state.accu_prob = 0.0;
                cx.drop_packet(pkt, DropReason::Early);
                return None;
            }
        }
        Some(pkt)
    }

    /// Set the state a test starts from: `drop_prob`, `qdelay_old` (seconds) and the burst allowance.
    #[cfg(test)]
    pub(crate) fn force(&mut self, drop_prob: f64, qdelay_old: f64, burst: SimDuration) {
        self.state.drop_prob = drop_prob;
        self.state.qdelay_old = qdelay_old;
        self.state.burst_allowance = burst.as_nanos();
    }

    /// When the next update is due.
    #[cfg(test)]
    pub(crate) fn next_update(&self) -> SimTime {
        self.ticker.next()
    }

    /// The arrival was refused for lack of room: ns-3 and Linux reset `accu_prob`.
    pub(crate) fn on_overflow(&mut self) {
        self.state.accu_prob = 0.0;
    }

    /// `pkt` left at `now`, leaving `remaining` bytes in its queue: the latency sample
    /// (timestamps) or the departure-rate measurement (RFC 8033 §4.3).
    pub(crate) fn on_dequeue(&mut self, cfg: &PieConfig, pkt: &QueuedPacket, remaining: u64, now: SimTime) {
        let st = &mut self.state;
        match cfg.delay_estimator {
            DelayEstimator::Timestamp => {
                // ns-3 DoDequeue / Linux pie_process_dequeue: qdelay = now - enqueue time; 0 if the queue is now empty.
                st.qdelay_last = if remaining == 0 { 0.0 } else { now.saturating_since(pkt.enqueued_at).as_secs_f64() };
            }
            DelayEstimator::DequeueRate => {
                // RFC 8033 §4.3: start a measurement cycle once the queue holds DQ_THRESHOLD bytes.
                if remaining >= cfg.dq_threshold && !st.in_measurement {
                    st.dq_start = now;
                    st.dq_count = 0;
                    st.in_measurement = true;
                }
                if st.in_measurement {
                    st.dq_count += u64::from(pkt.size);
                    if st.dq_count >= cfg.dq_threshold {
                        let dt = now.saturating_since(st.dq_start).as_secs_f64();
                        if dt > 0.0 {
                            #[allow(clippy::cast_precision_loss)]
                            let rate = st.dq_count as f64 / dt;
                            // RFC 8033 §4.3: avg_dq_rate = (1 - epsilon) avg_dq_rate + epsilon dq_rate, epsilon 0.5 (ns-3, Linux).
                            st.avg_dq_rate =
                                if st.avg_dq_rate == 0.0 { rate } else { 0.5 * st.avg_dq_rate + 0.5 * rate };
                        }
                        if remaining > cfg.dq_threshold {
                            st.dq_start = now;
                            st.dq_count = 0;
                        } else {
                            st.in_measurement = false;
                        }
                    }
                }
            }
        }
    }
}

/// A PIE queue.
#[derive(Debug)]
pub struct Pie {
    cfg: PieConfig,
    fifo: Fifo,
    vars: PieVars,
}

impl Pie {
    /// An empty PIE queue.
    #[must_use]
    pub fn new(cfg: PieConfig) -> Self {
        Pie { cfg, fifo: Fifo::new(cfg.limit), vars: PieVars::new(&cfg) }
    }

    /// The current drop probability.
    #[must_use]
    pub fn drop_prob(&self) -> f64 {
        self.vars.drop_prob()
    }

    /// The remaining burst allowance.
    #[must_use]
    pub fn burst_allowance(&self) -> SimDuration {
        SimDuration::from_nanos(self.vars.state.burst_allowance)
    }

    /// RFC 8033 §4.2 `calculate_drop_prob`, for every update due by `now`.
    fn catch_up(&mut self, now: SimTime) {
        self.vars.catch_up(&self.cfg, self.fifo.bytes(), now);
    }
}

impl QueueDisc for Pie {
    fn enqueue(&mut self, pkt: QueuedPacket, cx: &mut QdiscCx<'_>) {
        self.catch_up(cx.now);
        if !self.fifo.fits(self.cfg.limit, &pkt) {
            // RFC 8033 §4.1: tail drop when the buffer is full; ns-3 resets accu_prob.
            self.vars.on_overflow();
            cx.drop_packet(pkt, DropReason::Overflow);
            return;
        }
        if let Some(pkt) = self.vars.admit(&self.cfg, self.fifo.bytes(), pkt, cx) {
            self.fifo.push_back(pkt);
        }
    }

    fn dequeue(&mut self, cx: &mut QdiscCx<'_>) -> Option<QueuedPacket> {
        self.catch_up(cx.now);
        let pkt = self.fifo.pop_front()?;
        self.vars.on_dequeue(&self.cfg, &pkt, self.fifo.bytes(), cx.now);
        Some(pkt)
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
        AqmState { avg: f64::NAN, prob: self.vars.drop_prob(), max_p: f64::NAN }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{pkt, random_workout, Driver};
    use super::super::AnyQdisc;
    use super::*;
    use crate::packet::Ecn;

    fn cfg() -> PieConfig {
        PieConfig {
            limit: Limit::Packets(1000),
            target: SimDuration::from_millis(15),
            t_update: SimDuration::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: SimDuration::from_millis(150),
            ecn: false,
            mark_ecn_threshold: 0.1,
            byte_mode: false,
            mean_pktsize: 1000,
            delay_estimator: DelayEstimator::Timestamp,
            dq_threshold: 16_384,
            cap_drop_adjustment: true,
            derandomize: false,
            drop_early: PieDropEarly::Rfc,
        }
    }

    /// RFC 8033 §4.2's update, written out for one step.
    fn reference_step(drop_prob: f64, qdelay: f64, qdelay_old: f64, c: &PieConfig) -> f64 {
        let target = c.target.as_secs_f64();
        let mut p = c.alpha * (qdelay - target) + c.beta * (qdelay - qdelay_old);
        let div = [(0.000_001, 2048.0), (0.000_01, 512.0), (0.000_1, 128.0), (0.001, 32.0), (0.01, 8.0), (0.1, 2.0)]
            .iter()
            .find(|(lim, _)| drop_prob < *lim)
            .map_or(1.0, |x| x.1);
        p /= div;
        if drop_prob >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        let mut d = drop_prob + p;
        if qdelay == 0.0 && qdelay_old == 0.0 {
            d *= 0.98;
        }
        d.clamp(0.0, 1.0)
    }

    #[test]
    fn drop_probability_update_matches_rfc_8033_with_auto_tuning() {
        let c = cfg();
        let mut d = Driver::new(Pie::new(c), 10_000_000, 1);
        // A constant 40 ms latency for many updates: the probability climbs, with the
        // divisor stepping down as it crosses each decade.
        d.q.vars.state.qdelay_last = 0.040;
        let (mut want, mut old) = (0.0, 0.0);
        for k in 1..=150u64 {
            d.q.catch_up(SimTime::ZERO + c.t_update.saturating_mul(k));
            want = reference_step(want, 0.040, old, &c);
            old = 0.040;
            assert!((d.q.drop_prob() - want).abs() < 1e-15, "update {k}: {} vs {want}", d.q.drop_prob());
        }
        assert!(want > 0.1, "reached the uncapped range: {want}");
        // First step: p = 0.125 * 0.025 + 1.25 * 0.040 = 0.053125, / 2048.
        assert!((reference_step(0.0, 0.040, 0.0, &c) - 0.053_125 / 2048.0).abs() < 1e-18);
    }

    #[test]
    fn cap_limits_the_adjustment_above_ten_percent() {
        let c = cfg();
        // A jump from 0 to 200 ms latency at drop_prob 0.3: p = 0.125 * 0.185 + 1.25 * 0.2 = 0.273 -> 0.02.
        assert!((reference_step(0.3, 0.2, 0.0, &c) - 0.32).abs() < 1e-12);
        let mut d = Driver::new(Pie::new(c), 10_000_000, 1);
        d.q.vars.state.drop_prob = 0.3;
        d.q.vars.state.qdelay_last = 0.2;
        d.q.catch_up(SimTime::ZERO + c.t_update);
        assert!((d.q.drop_prob() - 0.32).abs() < 1e-12);
    }

    #[test]
    fn idle_queue_decays_the_probability_by_two_percent_per_update() {
        let c = cfg();
        let mut d = Driver::new(Pie::new(c), 10_000_000, 1);
        d.q.vars.state.drop_prob = 0.5;
        d.q.catch_up(SimTime::ZERO + c.t_update);
        // qdelay 0, qdelay_old 0: p = 0.125 * (0 - 0.015) = -0.001875 (no divisor at 0.5), then * 0.98.
        let want = (0.5 - 0.001_875) * 0.98;
        assert!((d.q.drop_prob() - want).abs() < 1e-15);
    }

    #[test]
    fn burst_allowance_shields_new_bursts_for_max_burst() {
        let c = cfg();
        let mut d = Driver::new(Pie::new(c), 10_000_000, 1);
        assert_eq!(d.q.burst_allowance(), SimDuration::from_millis(150));
        // Congested from the start: the allowance ages by T_UPDATE per update and drops are off meanwhile.
        d.q.vars.state.qdelay_last = 0.1;
        d.q.vars.state.drop_prob = 0.5;
        for _ in 0..10 {
            d.q.fifo.push_back(pkt(0, 1000, Ecn::NotEct));
        }
        d.q.catch_up(SimTime::from_millis(15 * 9));
        assert_eq!(d.q.burst_allowance(), SimDuration::from_millis(15));
        let out = d.enqueue(pkt(1, 1000, Ecn::NotEct), SimTime::from_millis(15 * 9));
        assert!(out.drops.is_empty(), "still within the allowance");
        d.q.catch_up(SimTime::from_millis(150));
        assert_eq!(d.q.burst_allowance(), SimDuration::ZERO);
        let drops: usize =
            (0..100).map(|i| d.enqueue(pkt(10 + i, 1000, Ecn::NotEct), SimTime::from_millis(150)).drops.len()).sum();
        assert!(drops > 20, "drops resume once the allowance is spent: {drops}");
        // A calm queue (probability decayed to 0, latencies low) restores it.
        d.q.vars.state.drop_prob = 0.0;
        d.q.vars.state.qdelay_last = 0.0;
        d.q.vars.state.qdelay_old = 0.0;
        d.q.catch_up(SimTime::from_millis(165));
        assert_eq!(d.q.burst_allowance(), SimDuration::from_millis(135));
    }

    #[test]
    fn safeguards_keep_pie_work_conserving() {
        let c = cfg();
        let mut d = Driver::new(Pie::new(c), 10_000_000, 1);
        d.q.vars.state.burst_allowance = 0;
        // Low latency and drop_prob < 0.2: never drop.
        d.q.vars.state.drop_prob = 0.19;
        d.q.vars.state.qdelay_old = 0.007;
        for i in 0..5 {
            d.q.fifo.push_back(pkt(i, 1000, Ecn::NotEct));
        }
        for i in 0..1000 {
            assert!(d.enqueue(pkt(100 + i, 1000, Ecn::NotEct), SimTime::ZERO).drops.is_empty());
            d.q.fifo.pop_back();
        }
        // Two packets or less queued: never drop, whatever the probability.
        let mut d = Driver::new(Pie::new(c), 10_000_000, 1);
        d.q.vars.state.burst_allowance = 0;
        d.q.vars.state.drop_prob = 1.0;
        d.q.vars.state.qdelay_old = 1.0;
        d.q.fifo.push_back(pkt(0, 1000, Ecn::NotEct));
        d.q.fifo.push_back(pkt(1, 1000, Ecn::NotEct));
        assert!(d.enqueue(pkt(2, 1000, Ecn::NotEct), SimTime::ZERO).drops.is_empty());
        assert_eq!(d.enqueue(pkt(3, 1000, Ecn::NotEct), SimTime::ZERO).drops.len(), 1);
    }

    #[test]
    fn ecn_marks_below_the_threshold_and_drops_above() {
        let mut c = cfg();
        c.ecn = true;
        let mut d = Driver::new(Pie::new(c), 10_000_000, 1);
        d.q.vars.state.burst_allowance = 0;
        d.q.vars.state.qdelay_old = 1.0;
        for i in 0..5 {
            d.q.fifo.push_back(pkt(i, 1000, Ecn::NotEct));
        }
        d.q.vars.state.drop_prob = 0.1;
        let (mut marks, mut drops) = (0, 0);
        for i in 0..2000 {
            let out = d.enqueue(pkt(100 + i, 1000, Ecn::Ect0), SimTime::ZERO);
            marks += out.marks.len();
            drops += out.drops.len();
            d.q.fifo.pop_back();
        }
        assert!(drops == 0 && marks > 100);
        d.q.vars.state.drop_prob = 0.100_001;
        let out =
            (0..2000).map(|i| d.enqueue(pkt(9000 + i, 1000, Ecn::Ect0), SimTime::ZERO).marks.len()).sum::<usize>();
        assert_eq!(out, 0);
    }

    #[test]
    fn derandomization_spaces_drops() {
        let mut c = cfg();
        c.derandomize = true;
        let mut d = Driver::new(Pie::new(c), 10_000_000, 1);
        d.q.vars.state.burst_allowance = 0;
        d.q.vars.state.qdelay_old = 1.0;
        d.q.vars.state.drop_prob = 0.5;
        for i in 0..5 {
            d.q.fifo.push_back(pkt(i, 1000, Ecn::NotEct));
        }
        // accu_prob 0.5 (< 0.85: enqueue), 1.0 (random), ...: never two drops in a row... and no gap over 17.
        let mut gap = 0;
        for i in 0..10_000 {
            if d.enqueue(pkt(100 + i, 1000, Ecn::NotEct), SimTime::ZERO).drops.is_empty() {
                gap += 1;
                d.q.fifo.pop_back();
            } else {
                assert!(gap >= 1, "a drop right after a drop");
                gap = 0;
            }
            assert!(gap <= 17);
        }
    }

    /// A PIE queue of `c` holding `n` packets of 1000 bytes, no burst allowance, far above
    /// target, at probability `p`.
    fn congested(c: PieConfig, n: u64, p: f64, seed: u64) -> Driver<Pie> {
        let mut d = Driver::new(Pie::new(c), 10_000_000, seed);
        d.q.vars.state.burst_allowance = 0;
        d.q.vars.state.qdelay_old = 1.0;
        d.q.vars.state.qdelay_last = 1.0;
        d.q.vars.state.drop_prob = p;
        for i in 0..n {
            d.q.fifo.push_back(pkt(i, 1000, Ecn::NotEct));
        }
        d
    }

    #[test]
    fn derandomization_restarts_the_accumulator_when_the_draw_hits_even_if_the_packet_is_marked() {
        // RFC 8033 Appendix B drop_early: if (u < drop_prob) { accu_prob = 0; return DROP; },
        // and enque() then marks an ECN-capable packet; Linux pie_drop_early resets accu_prob the
        // same way. So marks are spaced as drops are: never within 0.85 / p arrivals of each other.
        for drop_early in [PieDropEarly::Rfc, PieDropEarly::Linux] {
            let mut c = cfg();
            c.derandomize = true;
            c.ecn = true;
            c.drop_early = drop_early;
            let mut d = congested(c, 5, 0.1, 1);
            let (mut gap, mut marks) = (0, 0);
            for i in 0..5000 {
                let out = d.enqueue(pkt(100 + i, 1000, Ecn::Ect0), SimTime::ZERO);
                assert!(out.drops.is_empty(), "p = 0.1 <= MAX_ECNTH: marks, no drops");
                let marked = !out.marks.is_empty();
                d.q.fifo.pop_back();
                if !marked {
                    gap += 1;
                } else {
                    // accu_prob from 0 reaches 0.85 on the 9th arrival (9 x 0.1).
                    assert!(gap >= 8, "{drop_early:?}: a mark {gap} arrivals after the last");
                    gap = 0;
                    marks += 1;
                }
            }
            assert!((200..400).contains(&marks), "{drop_early:?}: {marks} marks");
        }
    }

    #[test]
    fn linux_drop_early_uses_backlog_below_two_mtu_and_accumulates_the_byte_scaled_probability() {
        // RFC 8033 §4.1: no drop while queue.byte_length() <= 2 * MEAN_PKTSIZE; Linux
        // pie_drop_early: while backlog < 2 * mtu. A queue of exactly 2 x 1500 bytes, p = 1.
        for (drop_early, drops) in [(PieDropEarly::Rfc, false), (PieDropEarly::Linux, true)] {
            let mut c = cfg();
            c.mean_pktsize = 1500;
            c.drop_early = drop_early;
            let mut d = congested(c, 0, 1.0, 1);
            d.q.fifo.push_back(pkt(0, 1500, Ecn::NotEct));
            d.q.fifo.push_back(pkt(1, 1500, Ecn::NotEct));
            let out = d.enqueue(pkt(2, 1500, Ecn::NotEct), SimTime::ZERO);
            assert_eq!(!out.drops.is_empty(), drops, "{drop_early:?}");
        }
        // Byte mode, de-randomized, packets of half the mean size at p = 0.1: RFC 8033 adds
        // drop_prob (0.1) to accu_prob, so a drop may come on the 9th arrival; Linux adds the
        // scaled local_prob (0.05), so none comes before the 17th.
        let mut first = [u64::MAX; 2];
        for (k, drop_early) in [PieDropEarly::Rfc, PieDropEarly::Linux].into_iter().enumerate() {
            for seed in 1..=200 {
                let mut c = cfg();
                c.mean_pktsize = 1000;
                c.byte_mode = true;
                c.derandomize = true;
                c.drop_early = drop_early;
                let mut d = congested(c, 5, 0.1, seed);
                for i in 1..=40 {
                    if !d.enqueue(pkt(100 + i, 500, Ecn::NotEct), SimTime::ZERO).drops.is_empty() {
                        first[k] = first[k].min(i);
                        break;
                    }
                    d.q.fifo.pop_back();
                }
            }
        }
        assert!(first[0] < 17, "RFC: the earliest first drop {}", first[0]);
        assert!((17..=40).contains(&first[1]), "Linux: the earliest first drop {}", first[1]);
    }

    #[test]
    fn dequeue_rate_estimator_measures_the_drain_rate() {
        let mut c = cfg();
        c.delay_estimator = DelayEstimator::DequeueRate;
        let mut d = Driver::new(Pie::new(c), 10_000_000, 1);
        for i in 0..100 {
            d.q.fifo.push_back(pkt(i, 1000, Ecn::NotEct));
        }
        // Drain 1000 B every 0.8 ms (10 Mb/s).
        let mut now = SimTime::ZERO;
        for _ in 0..60 {
            now += SimDuration::from_micros(800);
            d.dequeue(now);
        }
        assert!((d.q.vars.state.avg_dq_rate - 1.25e6).abs() / 1.25e6 < 0.07, "{}", d.q.vars.state.avg_dq_rate);
    }

    #[test]
    fn invariants_hold_over_random_workouts() {
        for seed in 0..10 {
            let mut c = cfg();
            c.limit = Limit::Packets(60);
            c.target = SimDuration::from_millis(3);
            c.max_burst = SimDuration::from_millis(30);
            c.ecn = seed % 2 == 0;
            c.byte_mode = seed % 3 == 0;
            c.derandomize = seed % 4 == 0;
            c.delay_estimator = if seed % 5 == 0 { DelayEstimator::DequeueRate } else { DelayEstimator::Timestamp };
            random_workout(AnyQdisc::Pie(Pie::new(c)), seed, 4000, 2_000_000);
        }
    }
}
