//! REM: Random Exponential Marking.
//!
//! Read first:
//! - [ALLY01] S. Athuraliya, V. H. Li, S. H. Low, Q. Yin, "REM: Active Queue
//!   Management", IEEE Network 15(3), 2001, §2 (price update and marking law).
//! - [ns-2] ns-2 `queue/rem.cc` (`REMQueue::run_updaterule`, `enque`,
//!   `deque`), the authors' code: `gamma_`, `phi_`, `inw_`, `mean_pktsize_`,
//!   `pupdtime_`, `pbo_`, `markpkts_`, `qib_`; the backlog weight alpha is
//!   hard-coded 0.1 there. `enque` adds the arrival, then drops it if the
//!   queue has reached `limit_` ([`LimitRule::Ns2`]).
//!
//! Every update period `T`:
//! `x <- (1 - inw) x + inw * in` (arrivals in the period, packets),
//! `price <- max(0, price + gamma (x + alpha (b - b_ref) - c))` with `b` the
//! backlog and `c = T * C / mean_pktsize` the packets the link can send in
//! `T`; the probability is `1 - phi^-price`. Arrivals are counted whether
//! or not they are then dropped (ns-2 counts before the drop decisions).
//! The update runs lazily (see [`super::Ticker`]), first at `T`.

use serde::{Deserialize, Serialize};

use super::QueuedPacket;
use super::{
    clamp01, is_markable, AqmState, DropReason, Fifo, Limit, LimitRule, MarkReason, Measure, NonEct, QdiscCx,
    QueueDisc, Ticker,
};
use crate::time::{BitRate, SimDuration, SimTime};

/// Where REM takes its marking decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DecideAt {
    /// On arrival (ns-2's drop mode; every other AQM here).
    Enqueue,
    /// On departure (ns-2's `markpkts_` mode marks the departing packet).
    Dequeue,
}

/// Resolved REM parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RemConfig {
    /// Buffer limit.
    pub limit: Limit,
    /// How the limit is read (ns-2's REM: [`LimitRule::Ns2`]).
    pub limit_rule: LimitRule,
    /// Queue measure (bytes are divided by `mean_pktsize`, as ns-2 `qib_`).
    pub measure: Measure,
    /// Mean packet size, bytes.
    pub mean_pktsize: u32,
    /// Price step size (ALLY01 `gamma`).
    pub gamma: f64,
    /// Marking base (ALLY01 `phi` > 1).
    pub phi: f64,
    /// Weight of the backlog term (ALLY01 `alpha`).
    pub alpha: f64,
    /// Target backlog, packets (ALLY01 `b*`, ns-2 `pbo_`).
    pub b_ref: f64,
    /// Update period (ns-2 `pupdtime_`).
    pub period: SimDuration,
    /// Input-rate filter weight (ns-2 `inw_`; 1 = no filtering).
    pub inw: f64,
    /// The outgoing link's rate (the capacity term `c`).
    pub link_rate: BitRate,
    /// Mark ECT packets instead of dropping them (ns-2 `markpkts_`).
    pub ecn: bool,
    /// Where decisions are taken.
    pub decide_at: DecideAt,
    /// Not-ECT packets on a marking decision.
    pub non_ect: NonEct,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct RemState {
    /// Link price (ns-2 `v_pl`).
    price: f64,
    /// Filtered input, packets per period (ns-2 `v_ave`).
    x: f64,
    /// Arrivals in the current period, in the measure's raw unit (ns-2 `v_count`).
    arrivals: f64,
    /// `1 - phi^-price` (ns-2 `v_prob`).
    prob: f64,
}

/// A REM queue.
#[derive(Debug)]
pub struct Rem {
    cfg: RemConfig,
    fifo: Fifo,
    state: RemState,
    ticker: Ticker,
}

impl Rem {
    /// An empty REM queue.
    #[must_use]
    pub fn new(cfg: RemConfig) -> Self {
        Rem {
            cfg,
            fifo: Fifo::new(cfg.limit),
            state: RemState { price: 0.0, x: 0.0, arrivals: 0.0, prob: 0.0 },
            ticker: Ticker::new(cfg.period),
        }
    }

    /// The current marking probability.
    #[must_use]
    pub fn probability(&self) -> f64 {
        self.state.prob
    }

    /// The current price.
    #[must_use]
    pub fn price(&self) -> f64 {
        self.state.price
    }

    fn catch_up(&mut self, now: SimTime) {
        let backlog = self.fifo.measured(self.cfg.measure);
        let (cfg, state) = (&self.cfg, &mut self.state);
        let scale = match cfg.measure {
            Measure::Packets => 1.0,
            Measure::Bytes => f64::from(cfg.mean_pktsize),
        };
        // ns-2 run_updaterule: c = p_updtime * ptc, ptc = bandwidth / (8 mean_pktsize).
        #[allow(clippy::cast_precision_loss)]
        let c = cfg.period.as_secs_f64() * cfg.link_rate.as_bps() as f64 / (8.0 * f64::from(cfg.mean_pktsize));
        self.ticker.run_until(now, || {
            let before = *state;
            // ns-2 run_updaterule: in_avg *= 1 - inw; in_avg += inw * in (in / pktsize with qib_).
            state.x *= 1.0 - cfg.inw;
            state.x += cfg.inw * state.arrivals / scale;
            // ALLY01 §2 / ns-2: pl = max(0, pl + gamma (in_avg + alpha (nqueued - bo) - c)).
            let price = state.price + cfg.gamma * (state.x + cfg.alpha * (backlog / scale - cfg.b_ref) - c);
            state.price = price.max(0.0);
            // ALLY01 §2: marking probability 1 - phi^-price.
            state.prob = clamp01(1.0 - cfg.phi.powf(-state.price));
            state.arrivals = 0.0;
            *state != before
        });
    }

    fn probability_for(&self, pkt: &QueuedPacket) -> f64 {
        match self.cfg.measure {
            Measure::Packets => self.state.prob,
            // ns-2: with qib_, pro = v_prob * size / pktsize.
            Measure::Bytes => (self.state.prob * f64::from(pkt.size) / f64::from(self.cfg.mean_pktsize)).min(1.0),
        }
    }
}

impl QueueDisc for Rem {
    fn enqueue(&mut self, mut pkt: QueuedPacket, cx: &mut QdiscCx<'_>) {
        self.catch_up(cx.now);
        // ns-2 enque: v_count += size (qib_) or ++v_count, before any drop.
        self.state.arrivals += match self.cfg.measure {
            Measure::Packets => 1.0,
            Measure::Bytes => f64::from(pkt.size),
        };
        // ns-2 rem.cc REMQueue::enque: q_->enque(pkt), then drop it if qlen >= qlim (LimitRule::Ns2).
        if !self.fifo.admits(self.cfg.limit, self.cfg.limit_rule, &pkt) {
            cx.drop_packet(pkt, DropReason::Overflow);
            return;
        }
        let decide_here = !self.cfg.ecn || self.cfg.decide_at == DecideAt::Enqueue;
        if decide_here && cx.bernoulli(self.probability_for(&pkt)) {
            if self.cfg.ecn && is_markable(pkt.ecn) {
                cx.mark(&mut pkt, MarkReason::Early);
            } else if !(self.cfg.ecn && self.cfg.non_ect == NonEct::Pass) {
                // ns-2 enque (drop mode): if (u <= pro) drop.
                cx.drop_packet(pkt, DropReason::Early);
                return;
            }
        }
        self.fifo.push_back(pkt);
    }

    fn dequeue(&mut self, cx: &mut QdiscCx<'_>) -> Option<QueuedPacket> {
        self.catch_up(cx.now);
        loop {
            let mut pkt = self.fifo.pop_front()?;
            if self.cfg.ecn && self.cfg.decide_at == DecideAt::Dequeue && cx.bernoulli(self.probability_for(&pkt)) {
                if is_markable(pkt.ecn) {
                    // ns-2 deque (markpkts_): if (u <= pro && ect) set CE.
                    cx.mark(&mut pkt, MarkReason::Early);
                } else if self.cfg.non_ect == NonEct::Drop {
                    // DEVIATION(ns-2): ns-2's markpkts_ lets Not-ECT packets through; `non_ect = "pass"` does that.
                    cx.drop_packet(pkt, DropReason::Early);
                    continue;
                }
            }
            return Some(pkt);
        }
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
        AqmState { avg: f64::NAN, prob: self.state.prob, max_p: f64::NAN }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{pkt, random_workout, Driver};
    use super::super::AnyQdisc;
    use super::*;
    use crate::packet::Ecn;

    fn cfg() -> RemConfig {
        RemConfig {
            limit: Limit::Packets(200),
            limit_rule: LimitRule::Waiting,
            measure: Measure::Packets,
            mean_pktsize: 1000,
            gamma: 0.001,
            phi: 1.001,
            alpha: 0.1,
            b_ref: 20.0,
            period: SimDuration::from_millis(2),
            inw: 1.0,
            link_rate: BitRate::from_bps(8_000_000), // 1000 packets/s: c = 2 per period
            ecn: false,
            decide_at: DecideAt::Enqueue,
            non_ect: NonEct::Drop,
        }
    }

    #[test]
    fn price_follows_the_update_law() {
        let c = cfg();
        let mut d = Driver::new(Rem::new(c), 8_000_000, 1);
        // Period 1: 5 arrivals into an empty queue, no departures; the update at 2 ms sees b = 5.
        for i in 0..5 {
            d.enqueue(pkt(i, 1000, Ecn::NotEct), SimTime::from_nanos(100_000 * i));
        }
        d.q.catch_up(SimTime::from_millis(2));
        let price1: f64 = 0.001 * (5.0 + 0.1 * (5.0 - 20.0) - 2.0);
        assert!((d.q.price() - price1).abs() < 1e-15);
        assert!((d.q.probability() - (1.0 - 1.001f64.powf(-price1))).abs() < 1e-15);
        // Period 2: no arrivals, b = 5: x = 0, price += 0.001 (0 + 0.1 (5 - 20) - 2) < 0 -> clamped at 0.
        d.q.catch_up(SimTime::from_millis(4));
        assert_eq!(d.q.price(), 0.0);
        assert_eq!(d.q.probability(), 0.0);
    }

    #[test]
    fn filtered_input_with_inw() {
        let mut c = cfg();
        c.inw = 0.5;
        let mut d = Driver::new(Rem::new(c), 8_000_000, 1);
        for i in 0..8 {
            d.enqueue(pkt(i, 1000, Ecn::NotEct), SimTime::from_nanos(10_000 * i));
        }
        d.q.catch_up(SimTime::from_millis(2));
        assert!((d.q.state.x - 4.0).abs() < 1e-15);
        d.q.catch_up(SimTime::from_millis(4));
        assert!((d.q.state.x - 2.0).abs() < 1e-15);
    }

    #[test]
    fn marks_at_dequeue_in_ns2_mode() {
        let mut c = cfg();
        c.ecn = true;
        c.decide_at = DecideAt::Dequeue;
        c.non_ect = NonEct::Pass;
        c.period = SimDuration::from_secs(1_000_000);
        let mut d = Driver::new(Rem::new(c), 8_000_000, 1);
        d.q.state.prob = 1.0;
        let out = d.enqueue(pkt(0, 1000, Ecn::Ect0), SimTime::ZERO);
        assert!(out.marks.is_empty() && out.drops.is_empty());
        d.enqueue(pkt(1, 1000, Ecn::NotEct), SimTime::ZERO);
        assert_eq!(d.dequeue(SimTime::ZERO).unwrap().ecn, Ecn::Ce);
        assert_eq!(d.out.marks.len(), 1);
        assert_eq!(d.dequeue(SimTime::ZERO).unwrap().ecn, Ecn::NotEct);
        // With non_ect = drop, the Not-ECT packet is dropped at the head and the next one leaves.
        c.non_ect = NonEct::Drop;
        let mut d = Driver::new(Rem::new(c), 8_000_000, 1);
        d.q.state.prob = 1.0;
        d.enqueue(pkt(0, 1000, Ecn::NotEct), SimTime::ZERO);
        d.enqueue(pkt(1, 1000, Ecn::Ect1), SimTime::ZERO);
        assert_eq!(d.dequeue(SimTime::ZERO).map(|p| p.uid()), Some(1));
        assert_eq!(d.out.drops.len(), 1);
    }

    #[test]
    fn ns2_limit_rule_keeps_one_packet_fewer() {
        // ns-2 limit_ 3: the third arrival makes the queue reach 3 and is dropped; two wait.
        let mut c = cfg();
        c.limit = Limit::Packets(3);
        c.limit_rule = LimitRule::Ns2;
        let mut d = Driver::new(Rem::new(c), 8_000_000, 1);
        for i in 0..3 {
            d.enqueue(pkt(i, 1000, Ecn::NotEct), SimTime::ZERO);
        }
        assert_eq!((d.q.len_packets(), d.out.drops.len()), (2, 1));
        assert_eq!(d.out.drops[0].1, DropReason::Overflow);
        // The arrival still counts as input (ns-2 increments v_count before the drop).
        assert!((d.q.state.arrivals - 3.0).abs() < 1e-15);
        // The waiting rule with the same limit keeps three.
        c.limit_rule = LimitRule::Waiting;
        let mut w = Driver::new(Rem::new(c), 8_000_000, 1);
        for i in 0..4 {
            w.enqueue(pkt(i, 1000, Ecn::NotEct), SimTime::ZERO);
        }
        assert_eq!(w.q.len_packets(), 3);
        // In bytes (qib_): dropped when the waiting bytes with the arrival reach the limit.
        c.limit = Limit::Bytes(2000);
        c.limit_rule = LimitRule::Ns2;
        let mut b = Driver::new(Rem::new(c), 8_000_000, 1);
        b.enqueue(pkt(0, 1000, Ecn::NotEct), SimTime::ZERO);
        b.enqueue(pkt(1, 1000, Ecn::NotEct), SimTime::ZERO);
        b.enqueue(pkt(2, 999, Ecn::NotEct), SimTime::ZERO);
        assert_eq!(b.q.len_bytes(), 1999);
    }

    #[test]
    fn invariants_hold_over_random_workouts() {
        for seed in 0..10 {
            let mut c = cfg();
            c.limit = Limit::Packets(30);
            c.b_ref = 5.0;
            c.gamma = 0.01;
            c.link_rate = BitRate::from_bps(2_000_000);
            c.ecn = seed % 2 == 0;
            c.decide_at = if seed % 3 == 0 { DecideAt::Dequeue } else { DecideAt::Enqueue };
            c.measure = if seed % 5 == 0 { Measure::Bytes } else { Measure::Packets };
            c.limit_rule = if seed % 4 == 1 { LimitRule::Ns2 } else { LimitRule::Waiting };
            random_workout(AnyQdisc::Rem(Rem::new(c)), seed, 3000, 2_000_000);
        }
    }
}
