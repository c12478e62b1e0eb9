//! RED: Random Early Detection, with the variants and the ECN policies the
//! studies of STUDIES.md §1, §3 and §5 depend on. Every detail where the
//! anchors disagree is a named option of [`RedConfig`].
//!
//! Read first:
//! - [FJ93] S. Floyd, V. Jacobson, "Random Early Detection Gateways for
//!   Congestion Avoidance", IEEE/ACM ToN 1(4), 1993 (Fig. 2 is the algorithm).
//! - [ns-2] ns-2.35 `queue/red.cc`: `REDQueue::enque`, `estimator`,
//!   `calculate_p_new`, `modify_p`, `drop_early`, `initialize_params`,
//!   `updateMaxP`, `updateMaxPFeng`; the executable reference for the
//!   count, `wait`, gentle, byte mode and the `qlen > 1` gate.
//! - [Floyd00] S. Floyd, "Recommendation on using the gentle_ variant of RED", 2000.
//! - [FGS01] S. Floyd, R. Gummadi, S. Shenker, "Adaptive RED: An Algorithm for
//!   Increasing the Robustness of RED's Active Queue Management", 2001 (Fig. 5).
//! - [Feng99] W. Feng, D. Kandlur, D. Saha, K. Shin, "A Self-Configuring RED
//!   Gateway", INFOCOM 1999.
//! - RFC 3168 §5 and §7: a router marks ECT packets where it would drop them
//!   for incipient congestion; with RED, above max_th it drops.
//! - [Linux] `include/net/red.h`, `net/sched/sch_red.c` (`red_action`,
//!   `red_mark_probability`, `ecn`, `harddrop`, `nodrop`).
//! - [ns-3] `src/traffic-control/model/red-queue-disc.cc` (`UseEcn`,
//!   `UseHardDrop`; `UNFORCED_DROP`, `FORCED_DROP`, `UNFORCED_MARK`, `FORCED_MARK`).
//!
//! Units: `avg`, `th_min` and `th_max` are in the queue's [`Measure`]
//! (packets, or bytes with thresholds given in packets and scaled by
//! `mean_pktsize`, as ns-2's `queue_in_bytes_`). [`RedConfig`] holds the
//! thresholds in packets (of `mean_pktsize` in byte measure); a scenario's
//! `min_th_bytes` / `max_th_bytes` arrive divided by `mean_pktsize`, so the
//! byte thresholds are exact.

use serde::{Deserialize, Serialize};

use super::QueuedPacket;
use super::{
    drop_victims, is_markable, AqmState, DropReason, Fifo, Limit, MarkReason, Measure, NonEct, QdiscCx, QueueDisc,
    Ticker, Victim,
};
use crate::time::{BitRate, SimDuration, SimTime};

/// What RED does with ECN-capable packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RedEcn {
    /// No ECN: every congestion decision drops (ns-2 `setbit_ false`, ns-3 `UseEcn false`).
    None,
    /// RFC 3168 §5 and §7: mark ECT packets on early decisions (between the
    /// thresholds, and in the gentle region); drop every packet on forced
    /// decisions (average above max_th, or 2 max_th when gentle): "during
    /// periods where the average queue size exceeds an upper threshold ...
    /// routers drop packets rather than set the CE codepoint" (§7). ns-3
    /// `UseEcn true, UseHardDrop true`; Linux `ecn harddrop`; ns-2 `setbit_ true`
    /// before `use_mark_p_`. "ECN" in Zheng's thesis, "RED" with ECN in Kuzmanovic 2005.
    Rfc3168,
    /// ns-2's `use_mark_p_` rule: no forced region at all (above max_th the
    /// early probability is 1, or the gentle ramp); an ECT packet selected
    /// by an early decision is marked only if the unmodified probability
    /// `p_b < mark_p`, and dropped otherwise.
    Ns2MarkP,
    /// Mark ECT packets on forced decisions too: drops come only from the
    /// buffer limit (and Not-ECT packets). Linux `ecn` without `harddrop`,
    /// ns-3 `UseHardDrop false`, RED* (Kuzmanovic 2005), ECNM (Zheng's thesis).
    MarkAboveMax,
}

/// Which packet a mark goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkTarget {
    /// The arriving packet (ns-2, ns-3, Linux).
    Arriving,
    /// Mark-front (Liu & Jain 1998): the first ECT packet in the queue not yet
    /// marked, so the signal leaves with the next departure; the arrival
    /// itself if no queued packet qualifies. Drops still take the arrival.
    Front,
}

/// How the drop probability is spread over arrivals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropSpacing {
    /// FJ93 §7: `p_a = p_b / (1 - count p_b)` (or with `wait`, `p_b / (2 - count p_b)`
    /// and nothing while `count p_b < 1`), so inter-drop gaps are uniform (ns-2, ns-3).
    Uniform,
    /// `p_a = p_b`: geometric inter-drop gaps (FJ93 §7's "Method 1").
    Geometric,
    /// Linux `red_mark_probability`: after each mark draw `R ~ U[0, 1)`; mark
    /// when `p_b * qcount >= R`, where `qcount` counts arrivals since the mark.
    Linux,
}

/// When the queue's idle period starts, for the idle-time decay of `avg`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IdleStart {
    /// When the link finishes sending the last queued packet (ns-2 and ns-3:
    /// the transmitter asks for a packet and finds the queue empty).
    TxEnd,
    /// When the last packet is dequeued (Linux: the driver takes packets
    /// from the qdisc ahead of the wire).
    Dequeue,
}

/// When Adaptive RED's `max_p` updates run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AdaptTiming {
    /// Every `interval` (FGS01 Fig. 5, Linux `red_adaptative_algo` on a timer).
    Periodic,
    /// ns-2 `estimator`: at an arrival, if more than `interval` has passed
    /// since `max_p` last changed (ns-2 `lastset`), with the new average.
    /// As in ns-2, the gentle ramp keeps the slope of the initial `max_p`
    /// (`reset` computes `v_c`, `v_d` once), so the adapted `max_p` acts only
    /// between the thresholds.
    Ns2,
}

/// Adaptive `max_p`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Adaptive {
    /// `max_p` is fixed.
    None,
    /// FGS01 (ns-2 `adaptive_ 1`, Linux `adaptive`): AIMD on `max_p` to keep
    /// `avg` within `[min_th + 0.4 (max_th - min_th), min_th + 0.6 (max_th - min_th)]`.
    Floyd {
        /// Update interval (FGS01: 0.5 s).
        interval: SimDuration,
        /// Additive increase cap (FGS01: `min(0.01, max_p / 4)`).
        alpha: f64,
        /// Multiplicative decrease factor (FGS01: 0.9).
        beta: f64,
        /// Largest `max_p` (FGS01: 0.5).
        top: f64,
        /// Smallest `max_p` (FGS01: 0.01).
        bottom: f64,
        /// When updates run.
        timing: AdaptTiming,
    },
    /// Feng99 (ns-2 `feng_adaptive_ 1`): divide `max_p` by `alpha` when `avg`
    /// falls below min_th, multiply by `beta` when it rises above max_th.
    Feng {
        /// Decrease divisor (Feng99: 3).
        alpha: f64,
        /// Increase factor (Feng99: 2).
        beta: f64,
    },
}

/// Resolved RED parameters (see `docs/models/red.md` for each default's source).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedConfig {
    /// Buffer limit.
    pub limit: Limit,
    /// Queue measure for `avg` and the thresholds.
    pub measure: Measure,
    /// Mean packet size in bytes: idle-time decay, byte-mode scaling, threshold scaling.
    pub mean_pktsize: u32,
    /// Minimum threshold, packets (FJ93 `min_th`).
    pub min_th: f64,
    /// Maximum threshold, packets (FJ93 `max_th`).
    pub max_th: f64,
    /// EWMA weight (FJ93 `w_q`).
    pub w_q: f64,
    /// Initial maximum early-drop probability (FJ93 `max_p`, ns-2 `1 / linterm_`).
    pub max_p: f64,
    /// ns-2 `wait_`: leave a gap of about `1 / p_b` arrivals between drops.
    pub wait: bool,
    /// Floyd00: between max_th and 2 max_th the probability rises from max_p to 1.
    pub gentle: bool,
    /// ns-2 `bytes_`: probability scaled by `size / mean_pktsize` and the count in bytes.
    pub byte_mode: bool,
    /// How drops are spread over arrivals.
    pub drop_spacing: DropSpacing,
    /// ns-2 and ns-3: no RED decision unless the queue the arrival finds holds more than one packet (or byte).
    pub backlog_gate: bool,
    /// When an idle period starts.
    pub idle_start: IdleStart,
    /// Which packet a forced or overflow drop removes.
    pub victim: Victim,
    /// ECN policy.
    pub ecn: RedEcn,
    /// ns-2 `mark_p_` for [`RedEcn::Ns2MarkP`].
    pub mark_p: f64,
    /// Not-ECT packets where an ECT one would be marked (Linux `nodrop` = [`NonEct::Pass`]).
    pub non_ect: NonEct,
    /// Which packet a mark goes to.
    pub mark_target: MarkTarget,
    /// Adaptive `max_p`.
    pub adaptive: Adaptive,
}

// ---------------------------------------------------------------------------
// Pieces shared with AECN
// ---------------------------------------------------------------------------

/// RED's averaged queue: the EWMA of the queue length at arrivals, decayed
/// over idle periods as if `m` empty-queue arrivals had happened.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Average {
    /// The average, in the queue's measure.
    pub(crate) avg: f64,
    w_q: f64,
    mean_pktsize: u32,
    idle_start: IdleStart,
    /// Start of the current idle period; `None` while the link is busy.
    idle_since: Option<SimTime>,
}

impl Average {
    pub(crate) fn new(w_q: f64, mean_pktsize: u32, idle_start: IdleStart) -> Self {
        // ns-2 REDQueue::reset: idle_ = 1, idletime_ = now.
        Average { avg: 0.0, w_q, mean_pktsize, idle_start, idle_since: Some(SimTime::ZERO) }
    }

    /// Packets of the mean size the link could have sent in `idle`: ns-2
    /// `m = int(ptc * (now - idletime_))`, `ptc = bandwidth / (8 mean_pktsize)`.
    pub(crate) fn idle_packets(rate: BitRate, idle: SimDuration, mean_pktsize: u32) -> u64 {
        rate.bytes_in(idle) / u64::from(mean_pktsize)
    }

    /// Update at an arrival that finds `q` queued; returns the new average.
    pub(crate) fn on_arrival(&mut self, q: f64, cx: &mut QdiscCx<'_>) -> f64 {
        if let Some(since) = self.idle_since.take() {
            let idle = cx.now.saturating_since(since);
            let m = Self::idle_packets(cx.link_rate, idle, self.mean_pktsize);
            if idle > SimDuration::ZERO {
                cx.note_idle(idle, m);
            }
            if m > 0 {
                // FJ93 Fig. 2: m <- f(time - q_time); avg <- (1 - w_q)^m avg (ns-2 estimator's loop).
                #[allow(clippy::cast_precision_loss)]
                let m = m as f64;
                self.avg *= (1.0 - self.w_q).powf(m);
            }
        }
        // FJ93 Fig. 2: avg <- (1 - w_q) avg + w_q q (ns-2: new_ave *= 1 - q_w; new_ave += q_w * nqueued).
        self.avg *= 1.0 - self.w_q;
        self.avg += self.w_q * q;
        self.avg
    }

    /// After a dequeue at `now` that returned a packet of `departed` bytes and left the
    /// queue empty (`emptied`), or returned nothing. (The size alone: passing the packet by
    /// reference kept it in memory, and the copy returned after this call waited for it.)
    #[inline]
    pub(crate) fn on_dequeue(&mut self, now: SimTime, departed: Option<u32>, emptied: bool, rate: BitRate) {
        match departed {
            Some(size) if emptied => {
                self.idle_since = Some(match self.idle_start {
                    IdleStart::TxEnd => now + rate.tx_time(size),
                    IdleStart::Dequeue => now,
                });
            }
            Some(_) => {}
            // ns-2 REDQueue::deque: a dequeue that finds nothing starts an idle period.
            None => {
                if self.idle_since.is_none() {
                    self.idle_since = Some(now);
                }
            }
        }
    }
}

/// FJ93 §7 / ns-2 `calculate_p_new`: the initial probability `p_b` for
/// `avg` (ns-2 `v_prob1`). Gentle: from `max_p` at `th_max` to 1 at `2 th_max`;
/// otherwise 1 at or above `th_max`.
pub(crate) fn probability_b(avg: f64, th_min: f64, th_max: f64, max_p: f64, gentle: bool) -> f64 {
    Ramp::new(th_min, th_max).p_b(avg, th_max, max_p, gentle)
}

/// [`probability_b`] for fixed thresholds, with the ramp's two coefficients computed once
/// (ns-2 `REDQueue::reset`: `v_a = 1 / (th_max - th_min)`, `v_b = -th_min / (th_max - th_min)`),
/// so that an arrival multiplies instead of dividing twice. The same operations on the same
/// values: the same probabilities, bit for bit.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ramp {
    /// `1 / (th_max - th_min)` (ns-2 `v_a`).
    v_a: f64,
    /// `th_min / (th_max - th_min)` (ns-2 `-v_b`).
    minus_v_b: f64,
}

impl Ramp {
    pub(crate) fn new(th_min: f64, th_max: f64) -> Self {
        let diff = th_max - th_min;
        Ramp { v_a: 1.0 / diff, minus_v_b: th_min / diff }
    }

    /// [`probability_b`] at `avg`, for the thresholds this ramp was made for.
    #[inline]
    pub(crate) fn p_b(&self, avg: f64, th_max: f64, max_p: f64, gentle: bool) -> f64 {
        let p = if avg >= th_max {
            if gentle {
                // Floyd00 / ns-2: v_c = (1 - max_p) / th_max, v_d = 2 max_p - 1, p = v_c avg + v_d.
                (1.0 - max_p) / th_max * avg + (2.0 * max_p - 1.0)
            } else {
                1.0
            }
        } else {
            // FJ93 Fig. 2: p_b <- max_p (avg - min_th) / (max_th - min_th) (ns-2: (v_a avg + v_b) max_p).
            (self.v_a * avg - self.minus_v_b) * max_p
        };
        p.min(1.0)
    }
}

/// ns-2 `modify_p`: the probability `p_a` for an arrival of `size` bytes,
/// `count` arrivals (or `count_bytes` bytes) after the last drop.
pub(crate) fn probability_a(
    p_b: f64,
    count: i64,
    count_bytes: u64,
    byte_mode: bool,
    mean_pktsize: u32,
    wait: bool,
    size: u32,
) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let count1 = if byte_mode {
        // ns-2: (double)(count_bytes / mean_pktsize), an integer division.
        (count_bytes / u64::from(mean_pktsize)) as f64
    } else {
        count as f64
    };
    let mut p = p_b;
    if wait {
        // ns-2 wait_: no drop until count p_b >= 1, then p_b / (2 - count p_b).
        if count1 * p < 1.0 {
            p = 0.0;
        } else if count1 * p < 2.0 {
            p /= 2.0 - count1 * p;
        } else {
            p = 1.0;
        }
    } else if count1 * p < 1.0 {
        // FJ93 Fig. 2: p_a <- p_b / (1 - count p_b).
        p /= 1.0 - count1 * p;
    } else {
        p = 1.0;
    }
    if byte_mode && p < 1.0 {
        // FJ93 §7 / ns-2 bytes_: p_b <- p_b PacketSize / MaximumPacketSize (ns-2 uses mean_pktsize).
        p = p * f64::from(size) / f64::from(mean_pktsize);
    }
    p.min(1.0)
}

// ---------------------------------------------------------------------------
// RED
// ---------------------------------------------------------------------------

/// The decision RED takes for an arrival before the buffer limit is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Decision {
    Accept,
    /// ns-3 `DTYPE_UNFORCED`.
    Early,
    /// ns-3 `DTYPE_FORCED` (average above the forced threshold).
    Forced,
}

/// Where Feng99's controller last saw the average.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FengStatus {
    Below,
    Between,
    Above,
}

/// A RED queue.
#[derive(Debug)]
pub struct Red {
    cfg: RedConfig,
    fifo: Fifo,
    avg: Average,
    /// Thresholds in the queue's measure.
    th_min: f64,
    th_max: f64,
    /// The probability's ramp between them.
    ramp: Ramp,
    /// Current `max_p` (adaptive variants change it).
    max_p: f64,
    /// Arrivals since the last early or forced drop (ns-2 `count`).
    count: i64,
    /// Bytes since the last drop (ns-2 `count_bytes`).
    count_bytes: u64,
    /// ns-2 `old`: the average was at or above min_th at the previous arrival.
    old: bool,
    /// Linux `qcount` (-1 outside the early region).
    qcount: i64,
    /// Linux `qR`, as a fraction in `[0, 1)`.
    q_r: f64,
    /// The last `p_b` (ns-2 `prob1_`), 0 below min_th.
    prob1: f64,
    /// ns-2 Adaptive RED `lastset`.
    lastset: SimTime,
    adapt_ticker: Option<Ticker>,
    feng_status: FengStatus,
}

impl Red {
    /// An empty RED queue.
    #[must_use]
    pub fn new(cfg: RedConfig) -> Self {
        let scale = match cfg.measure {
            Measure::Packets => 1.0,
            // ns-2 REDQueue::reset: if qib_, th_min = th_min_pkts * mean_pktsize.
            Measure::Bytes => f64::from(cfg.mean_pktsize),
        };
        let adapt_ticker = match cfg.adaptive {
            Adaptive::Floyd { interval, timing: AdaptTiming::Periodic, .. } => Some(Ticker::new(interval)),
            _ => None,
        };
        Red {
            cfg,
            fifo: Fifo::new(cfg.limit),
            avg: Average::new(cfg.w_q, cfg.mean_pktsize, cfg.idle_start),
            th_min: cfg.min_th * scale,
            th_max: cfg.max_th * scale,
            ramp: Ramp::new(cfg.min_th * scale, cfg.max_th * scale),
            max_p: cfg.max_p,
            count: 0,
            count_bytes: 0,
            old: false,
            qcount: -1,
            q_r: 0.0,
            prob1: 0.0,
            lastset: SimTime::ZERO,
            adapt_ticker,
            feng_status: FengStatus::Between,
        }
    }

    /// The parameters.
    #[must_use]
    pub fn config(&self) -> &RedConfig {
        &self.cfg
    }

    /// The current average, in the queue's measure.
    #[must_use]
    pub fn avg(&self) -> f64 {
        self.avg.avg
    }

    /// The current `max_p`.
    #[must_use]
    pub fn max_p(&self) -> f64 {
        self.max_p
    }

    /// The `max_p` the gentle ramp (max_th to 2 max_th) starts from.
    fn gentle_max_p(&self) -> f64 {
        match self.cfg.adaptive {
            // ns-2 red.cc reset: v_c = (1 - cur_max_p) / th_max, v_d = 2 cur_max_p - 1, once; updateMaxP leaves them.
            // DEVIATION(FGS01): followed with ns-2's timing (profile ns2-2001): max_p then acts below max_th only.
            Adaptive::Floyd { timing: AdaptTiming::Ns2, .. } => self.cfg.max_p,
            // Floyd00 / FGS01: the ramp runs from the current max_p to 1.
            _ => self.max_p,
        }
    }

    /// True if `avg` is in the forced region of this configuration.
    fn is_forced(&self, avg: f64) -> bool {
        // ns-2 use_mark_p_ removes the forced region entirely.
        self.cfg.ecn != RedEcn::Ns2MarkP
            // ns-2 enque: (!gentle && qavg >= th_max) || (gentle && qavg >= 2 th_max).
            && ((!self.cfg.gentle && avg >= self.th_max) || (self.cfg.gentle && avg >= 2.0 * self.th_max))
    }

    fn decide(&mut self, avg: f64, qlen: f64, size: u32, cx: &mut QdiscCx<'_>) -> Decision {
        // ns-2 enque: ++count; count_bytes += size, at every arrival.
        self.count += 1;
        self.count_bytes += u64::from(size);
        // ns-2 enque: if (qavg >= th_min && qlen > 1) ... else { v_prob = 0; old = 0 }.
        if avg < self.th_min || (self.cfg.backlog_gate && qlen <= 1.0) {
            self.prob1 = 0.0;
            self.old = false;
            // Linux red_action: RED_BELOW_MIN_THRESH sets qcount = -1.
            self.qcount = -1;
            return Decision::Accept;
        }
        if self.is_forced(avg) {
            self.prob1 = 1.0;
            // Linux red_action: RED_ABOVE_MAX_TRESH sets qcount = -1.
            self.qcount = -1;
            return Decision::Forced;
        }
        let max_p = if avg >= self.th_max { self.gentle_max_p() } else { self.max_p };
        let p_b = self.ramp.p_b(avg, self.th_max, max_p, self.cfg.gentle);
        self.prob1 = p_b;
        match self.cfg.drop_spacing {
            DropSpacing::Linux => {
                // Linux red_action, RED_BETWEEN_TRESH: if (++qcount) { if mark_probability ... } else qR = random.
                self.qcount += 1;
                if self.qcount == 0 {
                    self.q_r = cx.uniform();
                    return Decision::Accept;
                }
                // Linux red_mark_probability: max_P (qavg - qth_min) / (qth_max - qth_min) >= qR / qcount.
                #[allow(clippy::cast_precision_loss)]
                if p_b * self.qcount as f64 >= self.q_r {
                    self.qcount = 0;
                    self.q_r = cx.uniform();
                    return Decision::Early;
                }
                Decision::Accept
            }
            DropSpacing::Uniform | DropSpacing::Geometric => {
                if !self.old {
                    // ns-2 enque: the average just crossed min_th: count = 1, no drop.
                    self.count = 1;
                    self.count_bytes = u64::from(size);
                    self.old = true;
                    return Decision::Accept;
                }
                let p_a = if self.cfg.drop_spacing == DropSpacing::Uniform {
                    probability_a(
                        p_b,
                        self.count,
                        self.count_bytes,
                        self.cfg.byte_mode,
                        self.cfg.mean_pktsize,
                        self.cfg.wait,
                        size,
                    )
                } else if self.cfg.byte_mode {
                    (p_b * f64::from(size) / f64::from(self.cfg.mean_pktsize)).min(1.0)
                } else {
                    p_b
                };
                if cx.bernoulli(p_a) {
                    // ns-2 drop_early: count = 0; count_bytes = 0 on a drop or a mark.
                    self.count = 0;
                    self.count_bytes = 0;
                    return Decision::Early;
                }
                Decision::Accept
            }
        }
    }

    /// Deliver a congestion signal for `pkt`: mark (per the target) if the
    /// policy allows it and the packet is ECN-capable, otherwise drop (the
    /// arrival for early signals, the configured victim for forced ones) or,
    /// for Not-ECT packets under [`NonEct::Pass`], queue it unmarked.
    fn signal(&mut self, mut pkt: QueuedPacket, may_mark: bool, forced: bool, cx: &mut QdiscCx<'_>) {
        let (mark_reason, drop_reason) =
            if forced { (MarkReason::Forced, DropReason::Forced) } else { (MarkReason::Early, DropReason::Early) };
        if may_mark && is_markable(pkt.ecn) {
            match self.cfg.mark_target {
                MarkTarget::Arriving => {
                    cx.mark(&mut pkt, mark_reason);
                }
                MarkTarget::Front => {
                    if !self.fifo.mark_first_unmarked(cx, mark_reason) {
                        cx.mark(&mut pkt, mark_reason);
                    }
                }
            }
            self.fifo.push_back(pkt);
        } else if may_mark && self.cfg.non_ect == NonEct::Pass {
            // Linux sch_red nodrop: a Not-ECT packet in ECN nodrop mode is queued.
            self.fifo.push_back(pkt);
        } else if forced {
            // ns-2 enque: forced drop: enqueue, then pickPacketToDrop (tail, front or random).
            drop_victims(&mut self.fifo, self.cfg.limit, pkt, self.cfg.victim, drop_reason, cx);
        } else {
            // ns-2 enque: for unforced drops, the arriving packet is always the victim.
            cx.drop_packet(pkt, drop_reason);
        }
    }

    /// FGS01 Fig. 5 (timing periodic) or ns-2 `updateMaxP` (timing ns2). Returns true if max_p changed.
    fn floyd_update(&mut self, avg: f64, alpha: f64, beta: f64, top: f64, bottom: f64, timing: AdaptTiming) -> bool {
        let part = 0.4 * (self.th_max - self.th_min);
        let before = self.max_p;
        match timing {
            AdaptTiming::Periodic => {
                // FGS01 Fig. 5: target = [min_th + 0.4 (max_th - min_th), min_th + 0.6 (max_th - min_th)].
                if avg > self.th_max - part && self.max_p <= top {
                    // FGS01 Fig. 5: alpha <- min(0.01, max_p / 4); max_p <- max_p + alpha.
                    self.max_p += alpha.min(0.25 * self.max_p);
                } else if avg < self.th_min + part && self.max_p >= bottom {
                    // FGS01 Fig. 5: max_p <- max_p * beta.
                    self.max_p *= beta;
                }
            }
            AdaptTiming::Ns2 => {
                // ns-2 updateMaxP: if (new_ave < th_min + part && cur_max_p > bottom) cur_max_p *= beta.
                if avg < self.th_min + part && self.max_p > bottom {
                    self.max_p *= beta;
                } else if avg > self.th_max - part && top > self.max_p {
                    // ns-2 updateMaxP: alpha = min(alpha, 0.25 cur_max_p); cur_max_p += alpha.
                    self.max_p += alpha.min(0.25 * self.max_p);
                }
            }
        }
        self.max_p != before
    }

    /// ns-2 `updateMaxPFeng` (Feng99 Fig. 4).
    fn feng_update(&mut self, avg: f64, alpha: f64, beta: f64) {
        if self.th_min < avg && avg < self.th_max {
            self.feng_status = FengStatus::Between;
        }
        if avg < self.th_min && self.feng_status != FengStatus::Below {
            self.feng_status = FengStatus::Below;
            self.max_p /= alpha;
        }
        if avg > self.th_max && self.feng_status != FengStatus::Above {
            self.feng_status = FengStatus::Above;
            // DEVIATION(ns-2): ns-2 lets max_p grow beyond 1; a probability is capped at 1 here.
            self.max_p = (self.max_p * beta).min(1.0);
        }
    }

    /// Adaptive updates due before an arrival at `now` (periodic timing).
    fn adapt_before_arrival(&mut self, now: SimTime) {
        if let (Some(mut ticker), Adaptive::Floyd { alpha, beta, top, bottom, timing, .. }) =
            (self.adapt_ticker, self.cfg.adaptive)
        {
            // Linux red_adaptative_algo runs on the average as it stands at the timer.
            ticker.run_until(now, || {
                let avg = self.avg.avg;
                self.floyd_update(avg, alpha, beta, top, bottom, timing)
            });
            self.adapt_ticker = Some(ticker);
        }
    }

    /// Adaptive updates driven by the new average (ns-2 `estimator`).
    fn adapt_after_average(&mut self, avg: f64, now: SimTime) {
        let adaptive = self.cfg.adaptive;
        match adaptive {
            // ns-2 estimator: else if (now > edv_.lastset + edp_.interval) updateMaxP(new_ave, now).
            Adaptive::Floyd { interval, alpha, beta, top, bottom, timing: AdaptTiming::Ns2 }
                if now > self.lastset + interval
                    && self.floyd_update(avg, alpha, beta, top, bottom, AdaptTiming::Ns2) =>
            {
                self.lastset = now;
            }
            Adaptive::Feng { alpha, beta } => self.feng_update(avg, alpha, beta),
            _ => {}
        }
    }
}

impl QueueDisc for Red {
    fn enqueue(&mut self, pkt: QueuedPacket, cx: &mut QdiscCx<'_>) {
        let now = cx.now;
        // ns-2 enque: the average samples the queue the arrival finds (before it is added).
        let qlen = self.fifo.measured(self.cfg.measure);
        self.adapt_before_arrival(now);
        let avg = self.avg.on_arrival(qlen, cx);
        self.adapt_after_average(avg, now);
        let decision = self.decide(avg, qlen, pkt.size, cx);
        if !self.fifo.fits(self.cfg.limit, &pkt) {
            // ns-2 enque: if (qlen >= qlim) droptype = DTYPE_FORCED; the overflow overrides an early decision.
            // DEVIATION(ns-2): an early decision taken for the same arrival does not mark first.
            self.count = 0;
            self.count_bytes = 0;
            drop_victims(&mut self.fifo, self.cfg.limit, pkt, self.cfg.victim, DropReason::Overflow, cx);
            return;
        }
        match decision {
            Decision::Accept => self.fifo.push_back(pkt),
            Decision::Early => {
                let may_mark = match self.cfg.ecn {
                    RedEcn::None => false,
                    // ns-2 drop_early: mark if setbit_ && ect && (!use_mark_p_ || v_prob1 < mark_p_).
                    RedEcn::Ns2MarkP => self.prob1 < self.cfg.mark_p,
                    RedEcn::Rfc3168 | RedEcn::MarkAboveMax => true,
                };
                self.signal(pkt, may_mark, false, cx);
            }
            Decision::Forced => {
                // ns-2 enque (not ns1_compat_): count = 0; count_bytes = 0 after a forced drop.
                self.count = 0;
                self.count_bytes = 0;
                // RFC 3168 §7: above the upper threshold routers drop rather than mark (ns-3 UseHardDrop, Linux harddrop).
                let may_mark = self.cfg.ecn == RedEcn::MarkAboveMax;
                self.signal(pkt, may_mark, true, cx);
            }
        }
    }

    fn dequeue(&mut self, cx: &mut QdiscCx<'_>) -> Option<QueuedPacket> {
        let pkt = self.fifo.pop_front();
        self.avg.on_dequeue(cx.now, pkt.map(|p| p.size), self.fifo.is_empty(), cx.link_rate);
        pkt
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

    fn aqm_state(&mut self, _now: SimTime) -> AqmState {
        AqmState { avg: self.avg.avg, prob: self.prob1, max_p: self.max_p }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{pkt, random_workout, Driver};
    use super::super::{AnyQdisc, AqmIdle};
    use super::*;
    use crate::packet::Ecn;

    const RATE: u64 = 10_000_000;

    /// ns-2-like defaults: packets, no gate surprises, tail victim.
    fn cfg() -> RedConfig {
        RedConfig {
            limit: Limit::Packets(100),
            measure: Measure::Packets,
            mean_pktsize: 1000,
            min_th: 5.0,
            max_th: 15.0,
            w_q: 0.002,
            max_p: 0.1,
            wait: false,
            gentle: false,
            byte_mode: false,
            drop_spacing: DropSpacing::Uniform,
            backlog_gate: true,
            idle_start: IdleStart::TxEnd,
            victim: Victim::Tail,
            ecn: RedEcn::None,
            mark_p: 0.1,
            non_ect: NonEct::Drop,
            mark_target: MarkTarget::Arriving,
            adaptive: Adaptive::None,
        }
    }

    fn t(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    /// Offer `n` non-ECT arrivals to `d`, removing each accepted one again so
    /// the queue length (and so the average) stays put; returns (drops, n).
    fn drops_at_constant_queue(d: &mut Driver<Red>, n: u32) -> (u32, u32) {
        let mut drops = 0u32;
        for i in 0..n {
            let out = d.enqueue(pkt(u64::from(i) + 100, 1000, Ecn::NotEct), t(1));
            drops += u32::try_from(out.drops.len()).unwrap();
            if out.drops.is_empty() {
                d.q.fifo.pop_back();
            }
        }
        (drops, n)
    }

    /// A RED queue whose average is pinned at `avg` (w_q = 1 would make it the
    /// instantaneous queue; here we set it directly) and whose queue holds `n` packets.
    fn red_at(cfg: RedConfig, avg: f64, n: u64) -> Driver<Red> {
        let mut d = Driver::new(Red::new(cfg), RATE, 1);
        for i in 0..n {
            d.q.fifo.push_back(pkt(i, 1000, Ecn::NotEct));
        }
        d.q.avg.avg = avg;
        d.q.avg.idle_since = None;
        d
    }

    // --- Probabilities against the closed forms ----------------------------

    #[test]
    fn p_b_is_linear_between_thresholds_and_one_above() {
        // FJ93: p_b = max_p (avg - min_th) / (max_th - min_th).
        for (avg, want) in [(5.0, 0.0), (7.5, 0.025), (10.0, 0.05), (14.0, 0.09)] {
            let p = probability_b(avg, 5.0, 15.0, 0.1, false);
            assert!((p - want).abs() < 1e-12, "avg {avg}: {p} vs {want}");
        }
        assert_eq!(probability_b(15.0, 5.0, 15.0, 0.1, false), 1.0);
        assert_eq!(probability_b(100.0, 5.0, 15.0, 0.1, false), 1.0);
    }

    #[test]
    fn p_b_gentle_ramps_from_max_p_to_one_between_max_th_and_twice_it() {
        // Floyd00: p_b = max_p + (1 - max_p) (avg - max_th) / max_th.
        for (avg, want) in [(15.0, 0.1), (22.5, 0.55), (29.0, 0.1 + 0.9 * 14.0 / 15.0), (30.0, 1.0), (40.0, 1.0)] {
            let p = probability_b(avg, 5.0, 15.0, 0.1, true);
            assert!((p - want).abs() < 1e-12, "avg {avg}: {p} vs {want}");
        }
    }

    #[test]
    fn p_a_grows_with_count_as_fj93() {
        // FJ93: p_a = p_b / (1 - count p_b).
        let p_b = 0.05;
        for count in [0, 1, 5, 10, 19] {
            let want = p_b / (1.0 - f64::from(count) * p_b);
            let got = probability_a(p_b, i64::from(count), 0, false, 1000, false, 1000);
            assert!((got - want).abs() < 1e-12, "count {count}");
        }
        // count p_b >= 1: certain drop.
        assert_eq!(probability_a(p_b, 20, 0, false, 1000, false, 1000), 1.0);
    }

    #[test]
    fn p_a_with_wait_is_zero_until_one_over_p_b_then_p_b_over_two_minus_count_p_b() {
        let p_b = 0.05;
        assert_eq!(probability_a(p_b, 19, 0, false, 1000, true, 1000), 0.0);
        for count in [20, 25, 39] {
            let c = f64::from(count);
            let want = p_b / (2.0 - c * p_b);
            let got = probability_a(p_b, i64::from(count), 0, false, 1000, true, 1000);
            assert!((got - want).abs() < 1e-12, "count {count}: {got} vs {want}");
        }
        assert_eq!(probability_a(p_b, 40, 0, false, 1000, true, 1000), 1.0);
    }

    #[test]
    fn p_a_in_byte_mode_counts_bytes_and_scales_by_size() {
        // count1 = floor(count_bytes / mean_pktsize); p = p_b / (1 - count1 p_b) * size / mean_pktsize.
        let p_b = 0.02;
        let got = probability_a(p_b, 999, 10_999, true, 1000, false, 500);
        let want = p_b / (1.0 - 10.0 * p_b) * 500.0 / 1000.0;
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        // Small packets are dropped less often, large ones more, capped at 1.
        assert!(probability_a(p_b, 0, 0, true, 1000, false, 40) < probability_a(p_b, 0, 0, true, 1000, false, 1500));
        assert_eq!(probability_a(0.9, 0, 0, true, 100, false, 1500), 1.0);
    }

    #[test]
    fn measured_drop_rate_matches_uniform_spacing() {
        // With avg pinned (w_q tiny, queue held at avg), FJ93 Fig. 2's count (incremented
        // before p_a = p_b / (1 - count p_b)) gives P(X > n) = (1 - (n + 1) p_b) / (1 - p_b):
        // the gap X is uniform on {1, ..., 1/p_b - 1}, mean 1 / (2 p_b).
        let mut c = cfg();
        c.w_q = 1e-12;
        c.limit = Limit::Packets(1_000_000);
        let mut d = red_at(c, 10.0, 10); // p_b = 0.05: gaps uniform on 1..=19, mean 10
        let (drops, n) = drops_at_constant_queue(&mut d, 200_000);
        let gap = f64::from(n) / f64::from(drops);
        assert!((gap - 10.0).abs() < 0.15, "mean gap {gap}");
    }

    #[test]
    fn measured_drop_rate_matches_geometric_spacing() {
        let mut c = cfg();
        c.w_q = 1e-12;
        c.drop_spacing = DropSpacing::Geometric;
        let mut d = red_at(c, 10.0, 10); // p_b = 0.05
        let (drops, n) = drops_at_constant_queue(&mut d, 200_000);
        let rate = f64::from(drops) / f64::from(n);
        assert!((rate - 0.05).abs() < 0.002, "drop rate {rate}");
    }

    #[test]
    fn linux_spacing_marks_when_p_b_times_qcount_reaches_r() {
        let mut c = cfg();
        c.w_q = 1e-12;
        c.drop_spacing = DropSpacing::Linux;
        let mut d = red_at(c, 10.0, 10); // p_b = 0.05
        let (drops, n) = drops_at_constant_queue(&mut d, 200_000);
        // Gaps after the first: qcount = ceil(R / p_b) with R uniform: mean 1/(2 p_b) + 1/2 = 10.5.
        let gap = f64::from(n) / f64::from(drops);
        assert!((gap - 10.5).abs() < 0.15, "mean gap {gap}");
    }

    // --- Regions ----------------------------------------------------------

    #[test]
    fn nothing_early_below_min_th() {
        let mut c = cfg();
        c.w_q = 1e-12;
        let mut d = red_at(c, 4.999, 10);
        for i in 0..10_000 {
            let out = d.enqueue(pkt(100 + i, 1000, Ecn::NotEct), t(1));
            assert!(out.drops.is_empty() && out.marks.is_empty());
            d.q.fifo.pop_back();
        }
    }

    #[test]
    fn first_arrival_after_crossing_min_th_is_never_dropped() {
        let mut c = cfg();
        c.w_q = 1e-12;
        let mut d = red_at(c, 14.9, 10);
        assert!(!d.q.old);
        let out = d.enqueue(pkt(100, 1000, Ecn::NotEct), t(1));
        assert!(out.drops.is_empty());
        assert!(d.q.old);
        assert_eq!(d.q.count, 1);
    }

    #[test]
    fn backlog_gate_suppresses_decisions_with_one_packet_queued() {
        let mut c = cfg();
        c.w_q = 1e-12;
        let mut d = red_at(c, 20.0, 1); // forced region, but qlen = 1
        let out = d.enqueue(pkt(100, 1000, Ecn::NotEct), t(1));
        assert!(out.drops.is_empty());
        c.backlog_gate = false;
        let mut d = red_at(c, 20.0, 1);
        let out = d.enqueue(pkt(100, 1000, Ecn::NotEct), t(1));
        assert_eq!(out.drops[0].1, DropReason::Forced);
    }

    #[test]
    fn forced_region_drops_every_arrival_without_gentle() {
        let mut c = cfg();
        c.w_q = 1e-12;
        let mut d = red_at(c, 15.0, 20);
        for i in 0..100 {
            let out = d.enqueue(pkt(100 + i, 1000, Ecn::Ect0), t(1));
            assert_eq!(out.drops.len(), 1);
            assert_eq!(out.drops[0].1, DropReason::Forced);
        }
    }

    #[test]
    fn gentle_region_is_early_and_forced_starts_at_twice_max_th() {
        let mut c = cfg();
        c.w_q = 1e-12;
        c.gentle = true;
        c.ecn = RedEcn::Rfc3168;
        let mut d = red_at(c, 22.5, 30);
        d.q.old = true;
        let (mut marks, mut drops) = (0, 0);
        for i in 0..1000 {
            let out = d.enqueue(pkt(100 + i, 1000, Ecn::Ect0), t(1));
            marks += out.marks.len();
            drops += out.drops.len();
            assert!(out.marks.iter().all(|m| m.2 == MarkReason::Early));
            if out.drops.is_empty() {
                d.q.fifo.pop_back();
            }
        }
        assert!(marks > 400 && drops == 0, "gentle region marks ECT: {marks} marks, {drops} drops");
        let mut d = red_at(c, 30.0, 30);
        let out = d.enqueue(pkt(100, 1000, Ecn::Ect0), t(1));
        assert_eq!(out.drops[0].1, DropReason::Forced);
    }

    // --- ECN policies -----------------------------------------------------

    fn one(c: RedConfig, avg: f64, ecn: Ecn, early: bool) -> (Vec<DropReason>, Vec<MarkReason>, u64) {
        let mut d = red_at(c, avg, 20);
        d.q.old = true;
        if early {
            // Force an early decision: count large enough for p_a = 1.
            d.q.count = 1_000_000;
        }
        let out = d.enqueue(pkt(100, 1000, ecn), t(1));
        let drops = out.drops.iter().map(|x| x.1).collect();
        let marks = out.marks.iter().map(|x| x.2).collect();
        (drops, marks, d.q.len_packets())
    }

    #[test]
    fn rfc3168_marks_between_thresholds_and_drops_above_max_th() {
        let mut c = cfg();
        c.w_q = 1e-12;
        c.ecn = RedEcn::Rfc3168;
        assert_eq!(one(c, 10.0, Ecn::Ect0, true), (vec![], vec![MarkReason::Early], 21));
        assert_eq!(one(c, 10.0, Ecn::NotEct, true), (vec![DropReason::Early], vec![], 20));
        assert_eq!(one(c, 16.0, Ecn::Ect1, false), (vec![DropReason::Forced], vec![], 20));
    }

    #[test]
    fn mark_above_max_marks_ect_in_the_forced_region() {
        let mut c = cfg();
        c.w_q = 1e-12;
        c.ecn = RedEcn::MarkAboveMax;
        assert_eq!(one(c, 16.0, Ecn::Ect0, false), (vec![], vec![MarkReason::Forced], 21));
        assert_eq!(one(c, 16.0, Ecn::NotEct, false), (vec![DropReason::Forced], vec![], 20));
        // Linux nodrop: Not-ECT packets are queued instead.
        c.non_ect = NonEct::Pass;
        assert_eq!(one(c, 16.0, Ecn::NotEct, false), (vec![], vec![], 21));
        assert_eq!(one(c, 10.0, Ecn::NotEct, true), (vec![], vec![], 21));
    }

    #[test]
    fn ns2_mark_p_marks_below_mark_p_and_drops_ect_at_or_above_it() {
        let mut c = cfg();
        c.w_q = 1e-12;
        c.ecn = RedEcn::Ns2MarkP;
        c.mark_p = 0.06;
        // p_b = 0.05 < mark_p: mark.
        assert_eq!(one(c, 10.0, Ecn::Ect0, true), (vec![], vec![MarkReason::Early], 21));
        // p_b = 0.07 >= mark_p: an ECT packet is dropped (early).
        assert_eq!(one(c, 12.0, Ecn::Ect0, true), (vec![DropReason::Early], vec![], 20));
        // Above max_th there is no forced region: p = 1, early drop of ECT (p_b = 1 >= mark_p).
        assert_eq!(one(c, 16.0, Ecn::Ect0, false), (vec![DropReason::Early], vec![], 20));
        // mark_p = 1 marks even there? p_b = 1 is not < 1: still a drop (ns-2's strict <).
        c.mark_p = 1.0;
        assert_eq!(one(c, 16.0, Ecn::Ect0, false), (vec![DropReason::Early], vec![], 20));
    }

    #[test]
    fn none_drops_ect_packets_too() {
        let mut c = cfg();
        c.w_q = 1e-12;
        assert_eq!(one(c, 10.0, Ecn::Ect0, true), (vec![DropReason::Early], vec![], 20));
    }

    #[test]
    fn ce_arrivals_count_as_marked_and_are_not_dropped() {
        let mut c = cfg();
        c.w_q = 1e-12;
        c.ecn = RedEcn::Rfc3168;
        assert_eq!(one(c, 10.0, Ecn::Ce, true), (vec![], vec![MarkReason::Early], 21));
    }

    #[test]
    fn mark_front_marks_the_first_unmarked_ect_packet_already_queued() {
        let mut c = cfg();
        c.w_q = 1e-12;
        c.ecn = RedEcn::Rfc3168;
        c.mark_target = MarkTarget::Front;
        let mut d = Driver::new(Red::new(c), RATE, 1);
        d.q.fifo.push_back(pkt(0, 1000, Ecn::NotEct));
        d.q.fifo.push_back(pkt(1, 1000, Ecn::Ce));
        d.q.fifo.push_back(pkt(2, 1000, Ecn::Ect0));
        d.q.fifo.push_back(pkt(3, 1000, Ecn::Ect0));
        d.q.avg.avg = 10.0;
        d.q.avg.idle_since = None;
        d.q.old = true;
        d.q.count = 1_000_000;
        let out = d.enqueue(pkt(9, 1000, Ecn::Ect0), t(1));
        assert_eq!(out.marks.len(), 1);
        let ecn: Vec<Ecn> = (0..5).map(|i| d.q.fifo.get(i).unwrap().ecn).collect();
        assert_eq!(ecn, vec![Ecn::NotEct, Ecn::Ce, Ecn::Ce, Ecn::Ect0, Ecn::Ect0]);
        // With no unmarked ECT packet queued, the arrival itself is marked.
        let mut d = Driver::new(Red::new(c), RATE, 1);
        d.q.fifo.push_back(pkt(0, 1000, Ecn::NotEct));
        d.q.fifo.push_back(pkt(1, 1000, Ecn::NotEct));
        d.q.avg.avg = 10.0;
        d.q.avg.idle_since = None;
        d.q.old = true;
        d.q.count = 1_000_000;
        d.enqueue(pkt(9, 1000, Ecn::Ect1), t(1));
        assert_eq!(d.q.fifo.get(2).unwrap().ecn, Ecn::Ce);
    }

    // --- Buffer limit and victims -----------------------------------------

    #[test]
    fn overflow_drops_the_victim_of_choice() {
        for (victim, dropped_uid) in [(Victim::Tail, 9), (Victim::Front, 0)] {
            let mut c = cfg();
            c.limit = Limit::Packets(3);
            c.victim = victim;
            let mut d = Driver::new(Red::new(c), RATE, 1);
            for uid in [0, 1, 2] {
                d.enqueue(pkt(uid, 1000, Ecn::NotEct), t(0));
            }
            let out = d.enqueue(pkt(9, 1000, Ecn::NotEct), t(0));
            assert_eq!(out.drops.len(), 1);
            assert_eq!((out.drops[0].0.uid(), out.drops[0].1), (dropped_uid, DropReason::Overflow));
            assert_eq!(d.q.len_packets(), 3);
        }
        let mut c = cfg();
        c.limit = Limit::Bytes(3000);
        c.victim = Victim::Random;
        let mut d = Driver::new(Red::new(c), RATE, 1);
        for uid in [0, 1, 2] {
            d.enqueue(pkt(uid, 1000, Ecn::NotEct), t(0));
        }
        let out = d.enqueue(pkt(9, 1500, Ecn::NotEct), t(0));
        assert!(!out.drops.is_empty());
        assert!(d.q.len_bytes() <= 3000);
    }

    // --- The average -------------------------------------------------------

    #[test]
    fn ewma_follows_fj93() {
        let mut c = cfg();
        c.w_q = 0.25;
        let mut d = Driver::new(Red::new(c), RATE, 1);
        // Arrivals at t = 0 find 0, 1, 2, 3 packets (link never drains: no dequeues).
        let mut want = 0.0;
        for (i, q) in [0.0, 1.0, 2.0, 3.0].into_iter().enumerate() {
            d.enqueue(pkt(i as u64, 1000, Ecn::NotEct), t(0));
            want = want * 0.75 + 0.25 * q;
            assert!((d.q.avg() - want).abs() < 1e-12);
        }
    }

    #[test]
    fn idle_decay_is_one_minus_w_q_to_the_m() {
        // m = idle time / transmission time of a mean packet at the link rate, counted from
        // the end of the last transmission (ns-2: when the transmitter finds the queue empty).
        let mut c = cfg();
        c.w_q = 0.01;
        c.mean_pktsize = 500;
        let mut d = Driver::new(Red::new(c), RATE, 1);
        d.q.avg.avg = 8.0;
        d.q.avg.idle_since = None;
        d.q.fifo.push_back(pkt(0, 1000, Ecn::NotEct));
        // Dequeue the last packet at 10 ms: 1000 B at 10 Mb/s is 0.8 ms on the wire.
        d.dequeue(t(10));
        let idle_from = t(10) + BitRate::from_bps(RATE).tx_time(1000);
        // Arrive 30 ms after that: 30 ms / (500 B at 10 Mb/s = 0.4 ms) = 75 packet times.
        let at = idle_from + SimDuration::from_millis(30);
        d.enqueue(pkt(1, 1000, Ecn::NotEct), at);
        let want = 8.0 * 0.99f64.powi(75) * 0.99; // decay, then one sample of an empty queue
        assert!((d.q.avg() - want).abs() < 1e-12, "{} vs {want}", d.q.avg());
        // Counted once, with its length (the queues table's aqm_idle_* columns).
        assert_eq!((d.idle.periods, d.idle.decays, d.idle.idle_ns), (1, 1, 30_000_000));
        // A 0.39 ms idle gap is not a whole packet time: no decay beyond the sample.
        let mut d = Driver::new(Red::new(c), RATE, 1);
        d.q.avg.avg = 8.0;
        d.q.avg.idle_since = None;
        d.q.fifo.push_back(pkt(0, 1000, Ecn::NotEct));
        d.dequeue(t(10));
        d.enqueue(pkt(1, 1000, Ecn::NotEct), idle_from + SimDuration::from_micros(390));
        assert!((d.q.avg() - 8.0 * 0.99).abs() < 1e-12);
        // An idle period, but no decay.
        assert_eq!((d.idle.periods, d.idle.decays, d.idle.idle_ns), (1, 0, 390_000));
    }

    #[test]
    fn arrival_while_the_last_packet_is_on_the_wire_is_not_idle() {
        let mut c = cfg();
        c.w_q = 0.5;
        let mut d = Driver::new(Red::new(c), RATE, 1);
        d.q.avg.avg = 8.0;
        d.q.avg.idle_since = None;
        d.q.fifo.push_back(pkt(0, 1000, Ecn::NotEct));
        d.dequeue(t(10)); // on the wire until 10.8 ms
        d.enqueue(pkt(1, 1000, Ecn::NotEct), t(10) + SimDuration::from_micros(700));
        assert!((d.q.avg() - 4.0).abs() < 1e-12);
        assert_eq!(d.idle, AqmIdle::default(), "the link was busy: no idle period");
        // With Linux's idle start (at the dequeue), the same arrival sees 1 packet time of idle.
        c.idle_start = IdleStart::Dequeue;
        let mut d = Driver::new(Red::new(c), RATE, 1);
        d.q.avg.avg = 8.0;
        d.q.avg.idle_since = None;
        d.q.fifo.push_back(pkt(0, 1000, Ecn::NotEct));
        d.dequeue(t(10));
        d.enqueue(pkt(1, 1000, Ecn::NotEct), t(10) + SimDuration::from_micros(800));
        assert!((d.q.avg() - 2.0).abs() < 1e-12, "{}", d.q.avg());
        assert_eq!((d.idle.periods, d.idle.decays, d.idle.idle_ns), (1, 1, 800_000));
    }

    // --- Adaptive RED -------------------------------------------------------

    fn floyd(timing: AdaptTiming) -> Adaptive {
        Adaptive::Floyd {
            interval: SimDuration::from_millis(500),
            alpha: 0.01,
            beta: 0.9,
            top: 0.5,
            bottom: 0.01,
            timing,
        }
    }

    #[test]
    fn adaptive_red_raises_max_p_above_target_and_lowers_it_below() {
        let mut c = cfg();
        c.w_q = 1e-12;
        c.adaptive = floyd(AdaptTiming::Periodic);
        // Above the target band (> 11): +min(0.01, max_p/4) per interval.
        let mut d = red_at(c, 12.0, 12);
        d.enqueue(pkt(100, 1000, Ecn::NotEct), SimTime::from_millis(1600)); // 3 intervals elapsed
        assert!((d.q.max_p() - 0.13).abs() < 1e-12, "{}", d.q.max_p());
        // Below it (< 9): times beta per interval, not below bottom.
        let mut d = red_at(c, 6.0, 6);
        d.enqueue(pkt(100, 1000, Ecn::NotEct), SimTime::from_millis(1000));
        assert!((d.q.max_p() - 0.1 * 0.81).abs() < 1e-12);
        let mut d = red_at(c, 6.0, 6);
        d.enqueue(pkt(100, 1000, Ecn::NotEct), SimTime::from_secs(1000));
        assert!(d.q.max_p() < 0.01 && d.q.max_p() >= 0.009, "{}", d.q.max_p());
    }

    #[test]
    fn adaptive_red_ns2_timing_waits_an_interval_after_each_change() {
        let mut c = cfg();
        c.w_q = 1e-12;
        c.adaptive = floyd(AdaptTiming::Ns2);
        let mut d = red_at(c, 12.0, 12);
        d.enqueue(pkt(100, 1000, Ecn::NotEct), SimTime::from_millis(400));
        assert_eq!(d.q.max_p(), 0.1);
        d.enqueue(pkt(101, 1000, Ecn::NotEct), SimTime::from_millis(600));
        assert!((d.q.max_p() - 0.11).abs() < 1e-12);
        d.enqueue(pkt(102, 1000, Ecn::NotEct), SimTime::from_millis(1000));
        assert!((d.q.max_p() - 0.11).abs() < 1e-12);
        d.enqueue(pkt(103, 1000, Ecn::NotEct), SimTime::from_millis(1101));
        assert!((d.q.max_p() - 0.12).abs() < 1e-12);
    }

    #[test]
    fn adaptive_red_gentle_ramp_starts_from_initial_max_p_with_ns2_timing_only() {
        // avg 20 in the gentle region of 5 / 15; max_p adapted from 0.1 to 0.4.
        for (timing, want) in [
            // ns-2 reset's v_c, v_d: (1 - 0.1) / 15 * 20 + 2 * 0.1 - 1 = 0.4.
            (AdaptTiming::Ns2, 0.4),
            // Floyd00 with the current max_p: (1 - 0.4) / 15 * 20 + 2 * 0.4 - 1 = 0.6.
            (AdaptTiming::Periodic, 0.6),
        ] {
            let mut c = cfg();
            c.gentle = true;
            c.w_q = 1e-12;
            c.adaptive = floyd(timing);
            let mut d = red_at(c, 20.0, 20);
            d.q.max_p = 0.4;
            // The first arrival above min_th only sets `old`; the second computes p_b.
            d.enqueue(pkt(100, 1000, Ecn::NotEct), SimTime::from_millis(1));
            d.enqueue(pkt(101, 1000, Ecn::NotEct), SimTime::from_millis(2));
            assert_eq!(d.q.max_p(), 0.4, "{timing:?}: no update within the first interval");
            assert!((d.q.prob1 - want).abs() < 1e-9, "{timing:?}: p_b {} want {want}", d.q.prob1);
            // Between the thresholds both use the adapted max_p: (10 - 5) / 10 * 0.4 = 0.2.
            d.q.avg.avg = 10.0;
            d.enqueue(pkt(102, 1000, Ecn::NotEct), SimTime::from_millis(3));
            assert!((d.q.prob1 - 0.2).abs() < 1e-9, "{timing:?}: p_b {}", d.q.prob1);
        }
    }

    #[test]
    fn feng_divides_below_min_th_and_multiplies_above_max_th_once_per_crossing() {
        let mut c = cfg();
        c.w_q = 1.0; // the average is the queue the arrival finds
        c.limit = Limit::Packets(1000);
        c.adaptive = Adaptive::Feng { alpha: 3.0, beta: 2.0 };
        let mut d = Driver::new(Red::new(c), RATE, 1);
        d.q.avg.idle_since = None;
        // Arrivals find 0 packets: below min_th once -> max_p / 3.
        d.enqueue(pkt(0, 1000, Ecn::NotEct), t(1));
        d.q.fifo.pop_back();
        d.enqueue(pkt(1, 1000, Ecn::NotEct), t(1));
        assert!((d.q.max_p() - 0.1 / 3.0).abs() < 1e-12);
        for i in 0..20 {
            d.q.fifo.push_back(pkt(100 + i, 1000, Ecn::NotEct));
        }
        d.enqueue(pkt(2, 1000, Ecn::NotEct), t(1));
        d.enqueue(pkt(3, 1000, Ecn::NotEct), t(1));
        assert!((d.q.max_p() - 0.2 / 3.0).abs() < 1e-12);
    }

    // --- Properties ---------------------------------------------------------

    #[test]
    fn invariants_hold_over_random_workouts() {
        let mut variants = Vec::new();
        for ecn in [RedEcn::None, RedEcn::Rfc3168, RedEcn::Ns2MarkP, RedEcn::MarkAboveMax] {
            for (gentle, spacing) in
                [(false, DropSpacing::Uniform), (true, DropSpacing::Geometric), (true, DropSpacing::Linux)]
            {
                for target in [MarkTarget::Arriving, MarkTarget::Front] {
                    let mut c = cfg();
                    c.limit = Limit::Packets(30);
                    c.min_th = 3.0;
                    c.max_th = 9.0;
                    c.w_q = 0.05;
                    c.ecn = ecn;
                    c.gentle = gentle;
                    c.drop_spacing = spacing;
                    c.mark_target = target;
                    c.wait = gentle;
                    c.adaptive = if gentle { floyd(AdaptTiming::Periodic) } else { Adaptive::None };
                    variants.push(c);
                }
            }
        }
        let mut bytes = cfg();
        bytes.measure = Measure::Bytes;
        bytes.byte_mode = true;
        bytes.limit = Limit::Bytes(30_000);
        bytes.ecn = RedEcn::Rfc3168;
        bytes.non_ect = NonEct::Pass;
        variants.push(bytes);
        for (i, c) in variants.into_iter().enumerate() {
            for seed in 0..6 {
                random_workout(AnyQdisc::Red(Red::new(c)), 1000 * i as u64 + seed, 3000, 2_000_000);
            }
        }
    }
}
