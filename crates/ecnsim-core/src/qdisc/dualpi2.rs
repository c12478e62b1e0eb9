//! DualPI2: the DualQ Coupled AQM with a PI2 base AQM.
//!
//! Read first:
//! - RFC 9332 (De Schepper, Briscoe, White), §2.1 (the coupling: p_C = (p_CL / k)^2,
//!   here p_C = p'^2 and p_CL = k p'), §2.2-2.3 (two queues; ECT(1) and CE classified
//!   into the L queue), §2.4 (the scheduler, and why k = 2 balances window-fair rates),
//!   §2.5.1.1 (overload: switch to drop), Appendix A (the example DualPI2: the PI2
//!   controller, the L queue's native ramp, the 2-MTU safeguard, parameters derived
//!   from RTT_max).
//! - Linux `net/sched/sch_dualpi2.c` (mainline since 6.18), whose differences from the
//!   RFC's example are options named after it (`docs/models/dualpi2.md`).
//!
//! The base probability p' is a `u32` fraction of `u32::MAX`, updated every `t_update` with
//! Linux's integer arithmetic (gains quantised to its internal units); the update is applied
//! lazily before the next packet event, at the tick times a timer would have used. AQM
//! decisions are taken at dequeue (Linux's default `drop_dequeue`).

use serde::{Deserialize, Serialize};

use super::{AqmState, DropReason, Fifo, Limit, MarkReason, QdiscCx, QueueDisc, QueuedPacket};
use crate::packet::Ecn;
use crate::time::{SimDuration, SimTime};

/// The largest probability: p = 1 (Linux `MAX_PROB`, `U32_MAX`).
pub const MAX_PROB: u32 = u32::MAX;
/// Linux `ALPHA_BETA_GRANULARITY`: internal gains are in units of 64 ns of delay error.
const GAIN_SHIFT: u32 = 6;

/// Which delay the PI2 controller regulates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pi2Delay {
    /// The Classic queue's head-of-line sojourn time (RFC 9332 Appendix A.1, `cq.time()`).
    Classic,
    /// The larger of the two queues' head-of-line sojourn times (Linux `calculate_probability()`).
    Max,
}

/// What happens when the coupled L4S probability k p' would exceed 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Overload {
    /// RFC 9332 §2.5.1.1 / Linux `drop_on_overload`: drop ECN-capable packets too, with p'^2.
    Drop,
    /// Linux `overflow`: cap p' at 1/k and keep marking; the buffer limit drops.
    Overflow,
}

/// How the link is shared between the two queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DualScheduler {
    /// Time-shifted FIFO (RFC 9332 §2.4, Appendix A.2): serve L while its head has waited
    /// at least as long as the Classic head less `tshift`.
    TsFifo,
    /// Linux's weighted credit scheduler (`dequeue_packet()`): the Classic queue gets
    /// `classic_weight` per cent of the bytes whenever both queues are backlogged.
    Wrr,
}

/// How a probability becomes a mark or a drop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DualMarking {
    /// Linux `dualpi2_roll()`: a random draw per packet (p_C as two draws of p').
    Random,
    /// RFC 9332 Appendix A (Figure 4) `recur()`: a deterministic accumulator per queue, count +=
    /// p, a mark (or drop) when count > 1, then count -= 1.
    Recur,
}

/// Resolved DualPI2 parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DualPi2Config {
    /// Buffer limit, both queues together.
    pub limit: Limit,
    /// PI2 target queuing delay (RFC 9332 Appendix A: 15 ms).
    pub target: SimDuration,
    /// PI2 update interval.
    pub t_update: SimDuration,
    /// Integral gain, Hz.
    pub alpha: f64,
    /// Proportional gain, Hz.
    pub beta: f64,
    /// Coupling factor k (RFC 9332 §2.1: 2).
    pub coupling: u32,
    /// The L queue's native marking threshold on sojourn time (the ramp's start).
    pub l_threshold: SimDuration,
    /// The ramp's width; 0 = a step at `l_threshold`.
    pub l_range: SimDuration,
    /// No native L marking while the L queue holds `th_len` packets or fewer (the dequeued one included).
    pub th_len: u32,
    /// No coupled or Classic mark or drop while both queues hold less than `2 * mtu` bytes.
    pub mtu: u32,
    /// The delay the PI2 controller regulates.
    pub pi2_delay: Pi2Delay,
    /// Overload behaviour.
    pub overload: Overload,
    /// The scheduler between the queues.
    pub scheduler: DualScheduler,
    /// Time shift of the time-shifted FIFO.
    pub tshift: SimDuration,
    /// The Classic queue's weight in per cent (Linux `classic_protection`), for `Wrr`.
    pub classic_weight: u32,
    /// Random draws (Linux) or `recur()` (RFC 9332 Appendix A) for the Classic and coupled decisions.
    pub marking: DualMarking,
}

impl DualPi2Config {
    /// The integer gain per ns of delay error, in Linux's internal units (`dualpi2_scale_alpha_beta()`:
    /// `MAX_PROB` per second, times 64).
    pub(crate) fn gain(hz: f64) -> u64 {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let g = (hz * f64::from(MAX_PROB) / 1e9 * f64::from(1u32 << GAIN_SHIFT)).round() as u64;
        g
    }
}

/// A histogram of sojourn times, in fixed-width bins (no allocation per packet).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SojournHistogram {
    width_ns: u64,
    counts: [u64; Self::BINS],
    /// The sum of every sojourn recorded, ns (exact, for the mean).
    sum_ns: u64,
}

impl SojournHistogram {
    /// Number of bins; the last one holds everything beyond.
    pub const BINS: usize = 400;

    fn new(width: SimDuration) -> Self {
        SojournHistogram { width_ns: width.as_nanos().max(1), counts: [0; Self::BINS], sum_ns: 0 }
    }
    fn record(&mut self, sojourn: SimDuration) {
        self.sum_ns = self.sum_ns.saturating_add(sojourn.as_nanos());
        let bin = usize::try_from(sojourn.as_nanos() / self.width_ns).unwrap_or(usize::MAX).min(Self::BINS - 1);
        self.counts[bin] += 1;
    }
    /// The sojourn times recorded since `earlier` (a copy of this histogram taken before).
    #[must_use]
    pub fn since(&self, earlier: &SojournHistogram) -> SojournHistogram {
        let mut d = self.clone();
        for (c, e) in d.counts.iter_mut().zip(earlier.counts.iter()) {
            *c -= e;
        }
        d.sum_ns -= earlier.sum_ns;
        d
    }
    /// The mean sojourn, exact (not from the bins); `None` if empty.
    #[must_use]
    pub fn mean(&self) -> Option<SimDuration> {
        let n = self.count();
        (n > 0).then(|| SimDuration::from_nanos(self.sum_ns / n))
    }
    /// Sojourn times recorded.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }
    /// The upper edge of the bin holding the `q`-quantile (0 < q <= 1); `None` if empty.
    #[must_use]
    pub fn quantile_upper(&self, q: f64) -> Option<SimDuration> {
        let n = self.count();
        if n == 0 {
            return None;
        }
        #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(SimDuration::from_nanos((i as u64 + 1) * self.width_ns));
            }
        }
        None
    }
}

/// Per-queue sojourn times and counts of a DualPI2, for the checks of RFC 9332's properties.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DualPi2Stats {
    /// Sojourn times of packets sent from the L queue (10 µs bins, to 4 ms).
    pub l_sojourn: SojournHistogram,
    /// Sojourn times of packets sent from the Classic queue (250 µs bins, to 100 ms).
    pub c_sojourn: SojournHistogram,
    /// Packets classified into the L queue.
    pub l_arrivals: u64,
    /// Packets classified into the Classic queue.
    pub c_arrivals: u64,
}

/// A DualPI2 queue.
#[derive(Debug)]
pub struct DualPi2 {
    cfg: DualPi2Config,
    l: Fifo,
    c: Fifo,
    /// p', a fraction of `MAX_PROB`.
    prob: u32,
    /// The controlled delay at the last update, ns.
    last_qdelay: u64,
    next_update: SimTime,
    alpha: u64,
    beta: u64,
    /// Linux `c_protection_credit` (the sign says which queue is next).
    credit: i64,
    credit_init: i64,
    /// RFC 9332 Appendix A `recur()`'s `lq.count` and `cq.count`, fractions of `MAX_PROB`.
    recur_count: [u64; 2],
    stats: Box<DualPi2Stats>,
}

impl DualPi2 {
    /// An empty DualPI2 queue.
    #[must_use]
    pub fn new(cfg: DualPi2Config) -> Self {
        let wc = i64::from(cfg.classic_weight);
        // Linux dualpi2_calculate_c_protection(): init = MTU * (wc - wl); starts with L when wl > wc.
        let credit_init = i64::from(cfg.mtu) * (wc - (100 - wc));
        DualPi2 {
            cfg,
            l: Fifo::new(cfg.limit),
            c: Fifo::new(cfg.limit),
            prob: 0,
            last_qdelay: 0,
            next_update: SimTime::ZERO + cfg.t_update,
            alpha: DualPi2Config::gain(cfg.alpha),
            beta: DualPi2Config::gain(cfg.beta),
            credit: credit_init,
            credit_init,
            recur_count: [0; 2],
            stats: Box::new(DualPi2Stats {
                l_sojourn: SojournHistogram::new(SimDuration::from_micros(10)),
                c_sojourn: SojournHistogram::new(SimDuration::from_micros(250)),
                l_arrivals: 0,
                c_arrivals: 0,
            }),
        }
    }

    /// The base probability p' (0 to 1).
    #[must_use]
    pub fn base_prob(&self) -> f64 {
        f64::from(self.prob) / f64::from(MAX_PROB)
    }

    /// Per-queue sojourn times and arrivals.
    #[must_use]
    pub fn stats(&self) -> &DualPi2Stats {
        &self.stats
    }

    /// Packets in the L queue and in the Classic queue.
    #[must_use]
    pub fn lens(&self) -> (usize, usize) {
        (self.l.len(), self.c.len())
    }

    /// RFC 9332 §2.3: ECT(1) and CE go to the L queue; Not-ECT and ECT(0) to the Classic queue.
    #[must_use]
    pub fn is_l4s(ecn: Ecn) -> bool {
        matches!(ecn, Ecn::Ect1 | Ecn::Ce)
    }

    fn head_sojourn(fifo: &Fifo, at: SimTime) -> u64 {
        fifo.front().map_or(0, |p| at.saturating_since(p.enqueued_at).as_nanos())
    }

    /// RFC 9332 Appendix A.1 `dualpi2_update()` (Linux `calculate_probability()`), for every
    /// tick due by `now`. Between packet events the heads do not change, so each tick's delay
    /// is its head's sojourn at the tick's time, as a timer would have seen it.
    fn catch_up(&mut self, now: SimTime) {
        while self.next_update <= now {
            let at = self.next_update;
            self.next_update += self.cfg.t_update;
            let c = Self::head_sojourn(&self.c, at);
            let qdelay = match self.cfg.pi2_delay {
                Pi2Delay::Classic => c,
                Pi2Delay::Max => c.max(Self::head_sojourn(&self.l, at)),
            };
            if qdelay == 0 && self.last_qdelay == 0 && self.prob == 0 {
                // Idle and at rest: every further tick to `now` would change nothing.
                let behind = now.saturating_since(self.next_update).as_nanos() / self.cfg.t_update.as_nanos();
                self.next_update += self.cfg.t_update.saturating_mul(behind + 1);
                break;
            }
            self.update(qdelay);
        }
    }

    /// One PI2 update with controlled delay `qdelay` ns.
    fn update(&mut self, qdelay: u64) {
        let target = self.cfg.target.as_nanos();
        // RFC 9332 Appendix A.1: p' += alpha * (curq - target) + beta * (curq - prevq), clamped to [0, 1];
        // Linux: in units of MAX_PROB / (64 ns), then divided by 64.
        #[allow(clippy::cast_possible_wrap)]
        let delta = (i128::from(qdelay) - i128::from(target)) * i128::from(self.alpha)
            + (i128::from(qdelay) - i128::from(self.last_qdelay)) * i128::from(self.beta);
        self.last_qdelay = qdelay;
        // Linux __scale_delta(): the magnitude divided by 64, rounded towards zero.
        let step = delta.abs() >> GAIN_SHIFT;
        let p = if delta > 0 {
            (i128::from(self.prob) + step).min(i128::from(MAX_PROB))
        } else {
            (i128::from(self.prob) - step).max(0)
        };
        let mut p = u32::try_from(p).expect("clamped to [0, MAX_PROB]");
        if self.cfg.overload == Overload::Overflow {
            // Linux calculate_probability(): without drop on overload, cap p' at 1/k (p_CL <= 1).
            p = p.min(MAX_PROB / self.cfg.coupling);
        }
        self.prob = p;
    }

    /// True with probability `p / MAX_PROB` (Linux `dualpi2_roll()`: `random <= p`); no draw at 0.
    fn roll(p: u32, cx: &mut QdiscCx<'_>) -> bool {
        if p == 0 {
            return false;
        }
        let r = u32::try_from(cx.rng.below(1u64 << 32)).expect("below 2^32");
        r <= p
    }

    /// RFC 9332 Appendix A (Figure 4) `recur(q, likelihood)`: count += likelihood; if count > 1,
    /// count -= 1 and TRUE. `queue` 0 is L, 1 Classic.
    fn recur(&mut self, queue: usize, p: u32) -> bool {
        let c = &mut self.recur_count[queue];
        *c += u64::from(p);
        if *c > u64::from(MAX_PROB) {
            *c -= u64::from(MAX_PROB);
            return true;
        }
        false
    }

    /// The native L4S AQM's probability for sojourn `s` (RFC 9332 Appendix A.1 `laqm()`: a ramp
    /// from `l_threshold` over `l_range`; a step when the range is 0, as Linux `step_thresh`).
    fn native_prob(&self, s: SimDuration) -> u32 {
        let (min, range) = (self.cfg.l_threshold.as_nanos(), self.cfg.l_range.as_nanos());
        let s = s.as_nanos();
        if range == 0 {
            // Linux do_step_aqm(): mark if qdelay > step_thresh.
            return if s > min { MAX_PROB } else { 0 };
        }
        if s <= min {
            0
        } else if s >= min + range {
            MAX_PROB
        } else {
            // RFC 9332 Appendix A.1 laqm(): (qdelay - minTh) / range.
            u32::try_from(u128::from(s - min) * u128::from(MAX_PROB) / u128::from(range)).expect("below MAX_PROB")
        }
    }

    /// Which queue the scheduler serves next: true for L.
    fn pick_l(&self) -> bool {
        match (self.l.front(), self.c.front()) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(l), Some(c)) => match self.cfg.scheduler {
                // RFC 9332 §2.4 / Appendix A.2: serve L if lq.time() + tshift >= cq.time(), i.e. if the
                // Classic head arrived no more than tshift before the L head.
                DualScheduler::TsFifo => c.enqueued_at + self.cfg.tshift >= l.enqueued_at,
                // Linux dequeue_packet(): L if the credit is <= 0.
                DualScheduler::Wrr => self.credit <= 0,
            },
        }
    }

    /// The AQM of a packet leaving: `Some(pkt)` to send it (perhaps marked), `None` if dropped.
    fn aqm(&mut self, mut pkt: QueuedPacket, from_l: bool, cx: &mut QdiscCx<'_>) -> Option<QueuedPacket> {
        let k = u64::from(self.cfg.coupling);
        let p = self.prob;
        let p_cl = u64::from(p) * k;
        // RFC 9332 §2.5.1.1 (Linux must_drop()): saturation once p_CL = k p' exceeds 1.
        let overload = p_cl > u64::from(MAX_PROB);
        // RFC 9332 Appendix A.2 / Linux must_drop(): no Classic or coupled mark or drop while the
        // queues hold less than 2 MTU (the departing packet not counted, as in Linux).
        let busy = self.l.bytes() + self.c.bytes() >= 2 * u64::from(self.cfg.mtu);
        if !from_l {
            // RFC 9332 §2.1: p_C = p'^2, drawn as two rolls of p' (Linux dualpi2_classic_marking()),
            // or RFC 9332 Appendix A Figure 4: recur(cq, p_C).
            let hit = busy
                && match self.cfg.marking {
                    DualMarking::Random => Self::roll(p, cx) && Self::roll(p, cx),
                    DualMarking::Recur => {
                        let p_c = u32::try_from(u64::from(p) * u64::from(p) / u64::from(MAX_PROB)).expect("<= p");
                        self.recur(1, p_c)
                    }
                };
            if hit {
                // RFC 9332 §2.5.1.1: in overload ECN-capable Classic packets are dropped too.
                if overload || !cx.mark(&mut pkt, MarkReason::Early) {
                    cx.drop_packet(pkt, DropReason::Early);
                    return None;
                }
            }
            return Some(pkt);
        }
        if busy && overload {
            // RFC 9332 §2.5.1.1 / Linux dualpi2_scalable_marking(): on overload L4S packets are dropped
            // with the Classic p'^2 (drop_on_overload); those not dropped are marked (p_CL >= 1).
            if self.cfg.overload == Overload::Drop && Self::roll(p, cx) && Self::roll(p, cx) {
                cx.drop_packet(pkt, DropReason::Forced);
                return None;
            }
            if !cx.mark(&mut pkt, MarkReason::Forced) {
                cx.drop_packet(pkt, DropReason::Forced);
                return None;
            }
            return Some(pkt);
        }
        // RFC 9332 Appendix A.1: p_L = max(p'_L, p_CL), the native ramp on the packet's sojourn time,
        // applied only above Th_len packets (Linux min_qlen_step).
        let sojourn = cx.now.saturating_since(pkt.enqueued_at);
        let native = if self.l.len() + 1 > self.cfg.th_len as usize { self.native_prob(sojourn) } else { 0 };
        let coupled = if busy { u32::try_from(p_cl).expect("not in overload") } else { 0 };
        let (p_l, reason) =
            if native >= coupled { (native, MarkReason::CeThreshold) } else { (coupled, MarkReason::Early) };
        // A step (p'_L 0 or 1) needs no draw; otherwise one roll of max(p'_L, p_CL), or RFC 9332
        // Appendix A Figure 4's recur(lq, p_L).
        let hit = p_l == MAX_PROB
            || match self.cfg.marking {
                DualMarking::Random => Self::roll(p_l, cx),
                DualMarking::Recur => self.recur(0, p_l),
            };
        if hit && !cx.mark(&mut pkt, reason) {
            // Linux: a Not-ECT packet classified as L4S (it cannot be, by codepoint) is dropped.
            cx.drop_packet(pkt, DropReason::Early);
            return None;
        }
        Some(pkt)
    }
}

impl QueueDisc for DualPi2 {
    fn enqueue(&mut self, pkt: QueuedPacket, cx: &mut QdiscCx<'_>) {
        self.catch_up(cx.now);
        let (n, bytes) = ((self.l.len() + self.c.len()) as u64, self.l.bytes() + self.c.bytes());
        // Linux dualpi2_enqueue_skb(): tail drop at the shared limit (RFC 9332 Appendix A.1: one limit for both).
        let fits = match self.cfg.limit {
            Limit::Packets(max) => n < max,
            Limit::Bytes(max) => bytes + u64::from(pkt.size) <= max,
        };
        if !fits {
            cx.drop_packet(pkt, DropReason::Overflow);
            return;
        }
        // RFC 9332 §2.3: classify by the ECN field.
        if Self::is_l4s(pkt.ecn) {
            self.stats.l_arrivals += 1;
            self.l.push_back(pkt);
        } else {
            self.stats.c_arrivals += 1;
            self.c.push_back(pkt);
        }
    }

    fn dequeue(&mut self, cx: &mut QdiscCx<'_>) -> Option<QueuedPacket> {
        self.catch_up(cx.now);
        loop {
            let from_l = self.pick_l();
            let both = !self.l.is_empty() && !self.c.is_empty();
            let pkt = if from_l { self.l.pop_front() } else { self.c.pop_front() };
            let Some(pkt) = pkt else {
                // Linux dequeue_packet(): both empty resets the credit.
                self.credit = self.credit_init;
                return None;
            };
            let Some(pkt) = self.aqm(pkt, from_l, cx) else { continue };
            if both {
                // Linux dequeue_packet(): the credit moves by the weight of the other queue
                // times the packet's size, only while both queues are backlogged.
                let wc = i64::from(self.cfg.classic_weight);
                self.credit += i64::from(pkt.size) * if from_l { wc } else { -(100 - wc) };
            }
            let sojourn = cx.now.saturating_since(pkt.enqueued_at);
            if from_l {
                self.stats.l_sojourn.record(sojourn);
            } else {
                self.stats.c_sojourn.record(sojourn);
            }
            return Some(pkt);
        }
    }

    fn len_packets(&self) -> u64 {
        (self.l.len() + self.c.len()) as u64
    }

    fn len_bytes(&self) -> u64 {
        self.l.bytes() + self.c.bytes()
    }

    fn give_back_memory(&mut self) {
        self.l.give_back_memory();
        self.c.give_back_memory();
    }

    fn aqm_state(&mut self, now: SimTime) -> AqmState {
        self.catch_up(now);
        AqmState { prob: self.base_prob(), ..AqmState::NONE }
    }
}

#[cfg(test)]
mod tests {
    //! Dialogue tests: each builds a queue state, enqueues and dequeues, and checks the
    //! marks, drops and order against the rule of RFC 9332 (or Linux) it names.

    use super::*;
    use crate::packet::Ecn;
    use crate::qdisc::test_support::{pkt, random_workout, Driver};
    use crate::qdisc::{AnyQdisc, DropReason, MarkReason};

    fn ms(v: u64) -> SimTime {
        SimTime::from_millis(v)
    }
    fn us(v: u64) -> SimTime {
        SimTime::from_nanos(v * 1000)
    }

    /// Linux's defaults (`dualpi2_reset_default()`).
    fn linux() -> DualPi2Config {
        DualPi2Config {
            limit: Limit::Packets(10_000),
            target: SimDuration::from_millis(15),
            t_update: SimDuration::from_millis(16),
            alpha: 41.0 / 256.0,
            beta: 819.0 / 256.0,
            coupling: 2,
            l_threshold: SimDuration::from_millis(1),
            l_range: SimDuration::ZERO,
            th_len: 0,
            mtu: 1500,
            pi2_delay: Pi2Delay::Max,
            overload: Overload::Drop,
            scheduler: DualScheduler::Wrr,
            tshift: SimDuration::from_millis(50),
            classic_weight: 10,
            marking: DualMarking::Random,
        }
    }

    /// RFC 9332 Appendix A.1's example parameters (RTT_max 100 ms: Tupdate 15 ms, alpha 0.15, beta 3).
    fn rfc() -> DualPi2Config {
        DualPi2Config {
            t_update: SimDuration::from_millis(15),
            alpha: 0.15,
            beta: 3.0,
            l_threshold: SimDuration::from_micros(800),
            l_range: SimDuration::from_micros(400),
            th_len: 1,
            pi2_delay: Pi2Delay::Classic,
            scheduler: DualScheduler::TsFifo,
            ..linux()
        }
    }

    fn prob(p: f64) -> u32 {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let v = (p * f64::from(MAX_PROB)) as u32;
        v
    }

    /// Offer `n` packets of `ecn` at `at` (uids from `first`).
    fn offer(d: &mut Driver<DualPi2>, first: u64, n: u64, ecn: Ecn, at: SimTime) {
        for i in 0..n {
            d.enqueue(pkt(first + i, 1500, ecn), at);
        }
    }

    /// Counts of (sent unmarked, marked, dropped early/forced) over `n` dequeues at `at` with p' fixed.
    fn fates(d: &mut Driver<DualPi2>, n: usize, at: SimTime) -> (u32, u32, u32) {
        let (mut clean, mut marked, mut dropped) = (0, 0, 0);
        for _ in 0..n {
            let p = d.q.prob;
            let got = d.dequeue(at);
            d.q.prob = p;
            dropped += u32::try_from(d.out.drops.len()).unwrap();
            match got {
                Some(x) if x.ecn == Ecn::Ce => marked += 1,
                Some(_) => clean += 1,
                None => break,
            }
        }
        (clean, marked, dropped)
    }

    /// RFC 9332 §2.3: ECT(1) and CE are classified into the L queue, Not-ECT and ECT(0) into the Classic one.
    #[test]
    fn classifier_puts_ect1_and_ce_in_the_l_queue() {
        let mut d = Driver::new(DualPi2::new(linux()), 10_000_000, 1);
        for (i, e) in [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce, Ecn::Ect1].into_iter().enumerate() {
            d.enqueue(pkt(i as u64, 1000, e), ms(0));
        }
        assert_eq!(d.q.lens(), (3, 2));
        assert_eq!((d.q.stats().l_arrivals, d.q.stats().c_arrivals), (3, 2));
    }

    /// RFC 9332 Appendix A.1 dualpi2_update(): p' += alpha (curq - target) + beta (curq - prevq), with
    /// Linux's gains (0.16 Hz, 3.2 Hz) on the Classic head's sojourn at the tick (16 ms).
    #[test]
    fn pi2_update_follows_the_proportional_integral_law() {
        let mut d = Driver::new(DualPi2::new(linux()), 10_000_000, 1);
        offer(&mut d, 0, 2, Ecn::Ect0, ms(0));
        let _ = d.q.aqm_state(ms(16));
        let want = 0.16 * (0.016 - 0.015) + 3.2 * 0.016;
        assert!((d.q.base_prob() - want).abs() < 1e-3 * want, "{} vs {want}", d.q.base_prob());
        // Second tick at 32 ms: the head has waited 32 ms.
        let _ = d.q.aqm_state(ms(32));
        let want2 = want + 0.16 * (0.032 - 0.015) + 3.2 * (0.032 - 0.016);
        assert!((d.q.base_prob() - want2).abs() < 1e-3 * want2, "{} vs {want2}", d.q.base_prob());
        // Below target and falling, p' decreases, and is clamped at 0 (RFC 9332 Appendix A.1).
        while d.dequeue(ms(33)).is_some() {}
        let _ = d.q.aqm_state(ms(2000));
        assert_eq!(d.q.prob, 0);
    }

    /// RFC 9332 Appendix A.1: the controlled delay is the Classic queue's (`cq.time()`); Linux takes the
    /// larger of the two queues' (`pi2_delay = "max"`).
    #[test]
    fn pi2_delay_is_the_classic_queues_or_the_larger_one() {
        for (cfg, rises) in [(rfc(), false), (linux(), true)] {
            let mut d = Driver::new(
                DualPi2::new(DualPi2Config { t_update: SimDuration::from_millis(16), ..cfg }),
                10_000_000,
                1,
            );
            offer(&mut d, 0, 2, Ecn::Ect1, ms(0));
            let _ = d.q.aqm_state(ms(16));
            assert_eq!(d.q.prob > 0, rises, "{:?}", cfg.pi2_delay);
        }
    }

    /// RFC 9332 §2.1: Classic packets are marked (or dropped) with p_C = p'^2, L4S packets marked with
    /// p_CL = k p' (k = 2), from the same base probability p'.
    #[test]
    fn coupling_squares_p_for_classic_and_multiplies_by_k_for_l4s() {
        let n = 9_000;
        let mut d =
            Driver::new(DualPi2::new(DualPi2Config { scheduler: DualScheduler::Wrr, ..linux() }), 10_000_000, 7);
        offer(&mut d, 0, n as u64 + 10, Ecn::Ect0, ms(0));
        d.q.prob = prob(0.3);
        let (clean, marked, dropped) = fates(&mut d, n, ms(0));
        assert_eq!(dropped, 0, "ECT(0) is marked, not dropped");
        let f = f64::from(marked) / f64::from(clean + marked);
        assert!((f - 0.09).abs() < 0.01, "Classic mark fraction {f} vs p'^2 = 0.09");

        let mut d = Driver::new(DualPi2::new(linux()), 10_000_000, 8);
        // Sojourn 0 (below the step): only the coupled probability marks.
        offer(&mut d, 0, n as u64 + 10, Ecn::Ect1, ms(0));
        d.q.prob = prob(0.3);
        let (clean, marked, dropped) = fates(&mut d, n, ms(0));
        assert_eq!(dropped, 0);
        let f = f64::from(marked) / f64::from(clean + marked);
        assert!((f - 0.6).abs() < 0.015, "L4S mark fraction {f} vs k p' = 0.6");

        // Not-ECT Classic packets are dropped with p'^2 (RFC 9332 §2.1).
        let mut d = Driver::new(DualPi2::new(linux()), 10_000_000, 9);
        offer(&mut d, 0, n as u64 + 10, Ecn::NotEct, ms(0));
        d.q.prob = prob(0.3);
        let (clean, marked, dropped) = fates(&mut d, n, ms(0));
        assert_eq!(marked, 0);
        let f = f64::from(dropped) / f64::from(clean + dropped);
        assert!((f - 0.09).abs() < 0.01, "Classic drop fraction {f}");
    }

    /// RFC 9332 Appendix A Figure 4 `recur()`: with `marking = "recur"` the marks are
    /// deterministic: at p_CL = k p' = 0.25 exactly every fourth L packet, at p_C = p'^2 = 0.0625
    /// (p' = 0.25) exactly every sixteenth Classic one; no draw is taken.
    #[test]
    fn recur_marks_deterministically_at_the_probability() {
        let recur = DualPi2Config { marking: DualMarking::Recur, scheduler: DualScheduler::Wrr, ..linux() };
        let mut d = Driver::new(DualPi2::new(recur), 10_000_000, 1);
        offer(&mut d, 0, 410, Ecn::Ect1, ms(0));
        d.q.prob = MAX_PROB / 8 + 1;
        let mut seq = Vec::new();
        for _ in 0..400 {
            let p = d.q.prob;
            seq.push(d.dequeue(ms(0)).unwrap().ecn == Ecn::Ce);
            d.q.prob = p;
        }
        let marked: Vec<usize> = seq.iter().enumerate().filter(|(_, m)| **m).map(|(i, _)| i).collect();
        assert_eq!(marked.len(), 100);
        assert!(marked.windows(2).all(|w| w[1] - w[0] == 4), "{marked:?}");
        let mut d = Driver::new(DualPi2::new(recur), 10_000_000, 1);
        offer(&mut d, 0, 1610, Ecn::Ect0, ms(0));
        d.q.prob = MAX_PROB / 4 + 1;
        let (clean, marked, dropped) = fates(&mut d, 1600, ms(0));
        assert_eq!((clean, marked, dropped), (1500, 100, 0));
    }

    /// RFC 9332 §2.5.1.1 (Linux dualpi2_scalable_marking()): once k p' > 1, ECN-capable packets are
    /// dropped too: Classic ECT(0) ones with p'^2 instead of being marked, L4S ones with p'^2 and the
    /// rest marked. With `overload = "overflow"` (Linux) p' stops at 1/k and nothing is dropped early.
    #[test]
    fn overload_drops_ecn_capable_packets() {
        let n = 4_000;
        let mut d = Driver::new(DualPi2::new(linux()), 10_000_000, 3);
        offer(&mut d, 0, 2 * n as u64, Ecn::Ect0, ms(0));
        d.q.prob = prob(0.6);
        let (clean, marked, dropped) = fates(&mut d, n, ms(0));
        assert_eq!(marked, 0, "no Classic marks in overload");
        let f = f64::from(dropped) / f64::from(clean + dropped);
        assert!((f - 0.36).abs() < 0.03, "{f}");

        let mut d = Driver::new(DualPi2::new(linux()), 10_000_000, 4);
        offer(&mut d, 0, 2 * n as u64, Ecn::Ect1, ms(0));
        d.q.prob = prob(0.6);
        let (clean, marked, dropped) = fates(&mut d, n, ms(0));
        assert_eq!(clean, 0, "every L4S packet not dropped is marked");
        let f = f64::from(dropped) / f64::from(marked + dropped);
        assert!((f - 0.36).abs() < 0.03, "{f}");

        // Overflow: the update caps p' at 1/k, so k p' <= 1: no overload drop.
        let mut q = DualPi2::new(DualPi2Config { overload: Overload::Overflow, ..linux() });
        q.update(2_000_000_000);
        assert_eq!(q.prob, MAX_PROB / 2);
        let mut q = DualPi2::new(linux());
        q.update(2_000_000_000);
        assert_eq!(q.prob, MAX_PROB);
    }

    /// RFC 9332 Appendix A.2 / Linux must_drop(): no Classic or coupled mark or drop while the queues
    /// hold less than 2 MTU; the native L marking still applies.
    #[test]
    fn no_coupled_marks_below_two_mtu() {
        let mut d = Driver::new(DualPi2::new(linux()), 10_000_000, 5);
        offer(&mut d, 0, 2, Ecn::Ect0, ms(0));
        offer(&mut d, 10, 1, Ecn::Ect1, ms(0));
        d.q.prob = MAX_PROB / 2;
        // Three packets of 1500 B: the first to leave finds 3000 B behind it, the next ones less.
        let got: Vec<Ecn> = std::iter::from_fn(|| {
            let p = d.q.prob;
            let x = d.dequeue(ms(0));
            d.q.prob = p;
            x
        })
        .map(|p| p.ecn)
        .collect();
        assert_eq!(got, [Ecn::Ce, Ecn::Ect0, Ecn::Ect0], "the L packet is marked with k p' = 1 while 2 MTU wait");
        let mut d = Driver::new(DualPi2::new(linux()), 10_000_000, 5);
        offer(&mut d, 0, 1, Ecn::Ect1, ms(0));
        // Alone in the queue, 2 ms old: below 2 MTU, but the native step still marks it.
        assert_eq!(d.dequeue(ms(2)).unwrap().ecn, Ecn::Ce);
        assert_eq!(d.out.marks[0].2, MarkReason::CeThreshold);
    }

    /// Linux do_step_aqm(): a step on sojourn time, marking above (not at) `step_thresh` (1 ms).
    #[test]
    fn native_step_marks_above_the_threshold() {
        for (dt, want) in [(1000, Ecn::Ect1), (1001, Ecn::Ce)] {
            let mut d = Driver::new(DualPi2::new(linux()), 10_000_000, 5);
            offer(&mut d, 0, 1, Ecn::Ect1, ms(0));
            let got = d.dequeue(SimTime::from_nanos(dt * 1000)).unwrap();
            assert_eq!(got.ecn, want, "sojourn {dt} us");
        }
    }

    /// RFC 9332 Appendix A.1 laqm(): a ramp from minTh (800 us) over range (400 us): half the
    /// packets marked at 1 ms, none at or below 800 us, all from 1.2 ms; p_L = max(p'_L, p_CL).
    #[test]
    fn native_ramp_and_max_with_the_coupled_probability() {
        let q = DualPi2::new(rfc());
        assert_eq!(q.native_prob(SimDuration::from_micros(800)), 0);
        assert_eq!(q.native_prob(SimDuration::from_micros(1200)), MAX_PROB);
        assert_eq!(q.native_prob(SimDuration::from_micros(1000)), MAX_PROB / 2);
        let n = 10_000;
        let mut d = Driver::new(DualPi2::new(DualPi2Config { scheduler: DualScheduler::Wrr, ..rfc() }), 10_000_000, 6);
        offer(&mut d, 0, n + 10, Ecn::Ect1, ms(0));
        let (clean, marked, _) = fates(&mut d, n as usize, us(1000));
        let f = f64::from(marked) / f64::from(clean + marked);
        assert!((f - 0.5).abs() < 0.02, "{f}");
        // With p_CL = 0.8 above the ramp's 0.5, the coupled probability rules.
        let mut d = Driver::new(DualPi2::new(DualPi2Config { scheduler: DualScheduler::Wrr, ..rfc() }), 10_000_000, 6);
        offer(&mut d, 0, n + 10, Ecn::Ect1, ms(0));
        d.q.prob = prob(0.4);
        let (clean, marked, _) = fates(&mut d, n as usize, us(1000));
        let f = f64::from(marked) / f64::from(clean + marked);
        assert!((f - 0.8).abs() < 0.02, "{f}");
    }

    /// RFC 9332 Appendix A.1: Th_len: no native mark while the L queue holds Th_len (1) packets or fewer.
    #[test]
    fn native_marking_needs_more_than_th_len_packets() {
        let mut d = Driver::new(DualPi2::new(rfc()), 10_000_000, 5);
        offer(&mut d, 0, 1, Ecn::Ect1, ms(0));
        assert_eq!(d.dequeue(ms(5)).unwrap().ecn, Ecn::Ect1, "a lone packet is not marked");
        offer(&mut d, 1, 2, Ecn::Ect1, ms(5));
        assert_eq!(d.dequeue(ms(10)).unwrap().ecn, Ecn::Ce, "the head of two is");
    }

    /// RFC 9332 §2.4 / Appendix A.2: the time-shifted FIFO serves L unless the Classic head is
    /// older than the L head by more than tshift (50 ms here).
    #[test]
    fn time_shifted_fifo_compares_head_ages_with_a_shift() {
        for (l_at, first_l) in [(40, true), (50, true), (60, false)] {
            let mut d = Driver::new(DualPi2::new(rfc()), 10_000_000, 5);
            d.enqueue(pkt(0, 100, Ecn::Ect0), ms(0));
            d.enqueue(pkt(1, 100, Ecn::Ect1), ms(l_at));
            assert_eq!(d.dequeue(ms(l_at)).unwrap().uid() == 1, first_l, "L head {l_at} ms after the Classic head");
        }
    }

    /// Linux dequeue_packet(): the weighted credit scheduler gives the Classic queue wc = 10% of the
    /// bytes when both are backlogged, starting with L (credit MTU (wc - wl) < 0).
    #[test]
    fn wrr_gives_the_classic_queue_its_weight() {
        let mut d = Driver::new(DualPi2::new(linux()), 10_000_000, 5);
        offer(&mut d, 0, 100, Ecn::Ect0, ms(0));
        offer(&mut d, 1000, 100, Ecn::Ect1, ms(0));
        let order: String = (0..20).map(|_| if d.dequeue(ms(0)).unwrap().uid() >= 1000 { 'L' } else { 'C' }).collect();
        assert_eq!(order, "LLLLLLLLLCLLLLLLLLLC");
    }

    /// Linux dualpi2_enqueue_skb(): one limit for both queues; the arrival is dropped at it.
    #[test]
    fn one_limit_for_both_queues() {
        let mut d = Driver::new(DualPi2::new(DualPi2Config { limit: Limit::Packets(3), ..linux() }), 10_000_000, 5);
        offer(&mut d, 0, 2, Ecn::Ect0, ms(0));
        offer(&mut d, 2, 1, Ecn::Ect1, ms(0));
        let out = d.enqueue(pkt(3, 1500, Ecn::Ect1), ms(0));
        assert_eq!(out.drops.len(), 1);
        assert_eq!(out.drops[0].1, DropReason::Overflow);
    }

    #[test]
    fn random_workouts_keep_the_invariants() {
        for seed in 0..4 {
            for cfg in [linux(), rfc()] {
                random_workout(AnyQdisc::DualPi2(DualPi2::new(cfg)), seed, 4000, 2_000_000);
            }
        }
    }

    #[test]
    fn sojourn_histogram_quantiles() {
        let mut h = SojournHistogram::new(SimDuration::from_micros(10));
        for v in 0..100 {
            h.record(SimDuration::from_micros(v * 10 + 5));
        }
        assert_eq!(h.count(), 100);
        assert_eq!(h.quantile_upper(0.99), Some(SimDuration::from_micros(990)));
        assert_eq!(h.quantile_upper(1.0), Some(SimDuration::from_micros(1000)));
    }
}
