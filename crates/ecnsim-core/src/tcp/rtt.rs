//! The retransmission timer's estimators: RFC 6298 (here) and ns-2's
//! integer-tick estimator (`rtt_ns2.rs`), chosen by `TcpConfig::rto_estimator`
//! and dispatched by the closed enum [`RttEstimator`].
//!
//! Read first: RFC 6298 "Computing TCP's Retransmission Timer" §2 (the
//! estimator), §3 (Karn's algorithm: the caller never feeds a sample taken
//! from a retransmitted segment) and §5 (managing the timer, backoff).
//!
//! Arithmetic is in integer nanoseconds; the RFC's real-valued gains
//! alpha = 1/8 and beta = 1/4 become exact shifts of scaled sums.

use crate::spec::RtoEstimator;
use crate::tcp::rtt_ns2::Ns2Estimator;
use crate::tcp::TcpConfig;
use crate::time::{SimDuration, SimTime};

/// The retransmission-timer estimator of one connection.
#[derive(Clone, Debug)]
pub enum RttEstimator {
    /// RFC 6298, in nanoseconds.
    Rfc6298(Rfc6298Estimator),
    /// ns-2's `TcpAgent` estimator, in clock ticks.
    Ns2(Ns2Estimator),
}

impl RttEstimator {
    /// The estimator `cfg.rto_estimator` names; `tick_phase` is the offset of
    /// this connection's tick clock (ns-2's `boot_time_`, used by the ns-2 estimator only).
    #[must_use]
    pub fn for_config(cfg: &TcpConfig, tick_phase: SimDuration) -> Self {
        match cfg.rto_estimator {
            RtoEstimator::Rfc6298 => RttEstimator::Rfc6298(Rfc6298Estimator::new(
                cfg.initial_rto,
                cfg.min_rto,
                cfg.max_rto,
                cfg.clock_granularity,
            )),
            RtoEstimator::Linux => RttEstimator::Rfc6298(Rfc6298Estimator {
                min_on_variance: true,
                ..Rfc6298Estimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto, cfg.clock_granularity)
            }),
            RtoEstimator::Ns2 | RtoEstimator::Ns2Rfc2988 => RttEstimator::Ns2(Ns2Estimator::new(
                cfg.initial_rto,
                cfg.min_rto,
                cfg.max_rto,
                cfg.clock_granularity,
                tick_phase,
                cfg.rto_estimator == RtoEstimator::Ns2Rfc2988,
            )),
        }
    }

    /// A segment sent at `sent` was acknowledged at `now` (never a
    /// retransmitted one: RFC 6298 §3, Karn). Clears the backoff.
    pub fn on_sample(&mut self, sent: SimTime, now: SimTime) {
        match self {
            RttEstimator::Rfc6298(e) => e.on_sample(now.saturating_since(sent)),
            RttEstimator::Ns2(e) => e.on_sample(sent, now),
        }
    }

    /// A sample that leaves the backoff in place: ns-2 `newack()` does not end the backoff
    /// (`t_backoff_ = 1`) on an ACK carrying ECN-Echo while `ecn_backoff_` is set, "if still
    /// in ECN-Echo with a congestion window of 1 packet" (`tcp.ecn_one_segment = "ns2"`).
    pub fn on_sample_keeping_backoff(&mut self, sent: SimTime, now: SimTime) {
        match self {
            RttEstimator::Rfc6298(e) => {
                let b = e.backoffs;
                e.on_sample(now.saturating_since(sent));
                e.backoffs = b;
            }
            RttEstimator::Ns2(e) => e.on_sample_keeping_backoff(sent, now),
        }
    }

    /// The timer expired: back off.
    pub fn on_backoff(&mut self) {
        match self {
            RttEstimator::Rfc6298(e) => e.on_backoff(),
            RttEstimator::Ns2(e) => e.on_backoff(),
        }
    }

    /// Replace the RTO by `rto`, keeping any samples, and clear the backoff.
    pub fn reset_rto(&mut self, rto: SimDuration) {
        match self {
            RttEstimator::Rfc6298(e) => e.reset_rto(rto),
            RttEstimator::Ns2(e) => e.reset_rto(rto),
        }
    }

    /// The current RTO, backoff applied.
    #[must_use]
    pub fn rto(&self) -> SimDuration {
        match self {
            RttEstimator::Rfc6298(e) => e.rto(),
            RttEstimator::Ns2(e) => e.rto(),
        }
    }

    /// SRTT, if any sample has been taken.
    #[must_use]
    pub fn srtt(&self) -> Option<SimDuration> {
        match self {
            RttEstimator::Rfc6298(e) => e.srtt(),
            RttEstimator::Ns2(e) => e.srtt(),
        }
    }

    /// RTTVAR.
    #[must_use]
    pub fn rttvar(&self) -> SimDuration {
        match self {
            RttEstimator::Rfc6298(e) => e.rttvar(),
            RttEstimator::Ns2(e) => e.rttvar(),
        }
    }

    /// True if the timer has expired since the last sample (a repeated timeout follows).
    #[must_use]
    pub fn is_backed_off(&self) -> bool {
        match self {
            RttEstimator::Rfc6298(e) => e.backoffs() > 0,
            RttEstimator::Ns2(e) => e.backoff() > 1,
        }
    }
}

/// SRTT / RTTVAR / RTO state of one connection, per RFC 6298.
///
/// In declaration order (`repr(C)`): what a timeout reads (the backoffs, `rto()`'s terms) first,
/// the clock granularity, which only a sample reads, last: inside [`RttEstimator`] (after the
/// 8 bytes that hold its tag) a timeout then reads one cache line of it.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct Rfc6298Estimator {
    /// Number of consecutive backoffs applied (RFC 6298 §5.5).
    backoffs: u32,
    /// Linux `tcp_set_rto()`: `min_rto` bounds the variance term (`rto_estimator = "linux"`).
    min_on_variance: bool,
    /// The RTO before backoff, already clamped to `[min_rto, max_rto]`.
    base_rto: SimDuration,
    max_rto: SimDuration,
    min_rto: SimDuration,
    /// Smoothed round-trip time (SRTT); `None` until the first sample.
    srtt: Option<SimDuration>,
    /// Round-trip time variation (RTTVAR).
    rttvar: SimDuration,
    /// Clock granularity G.
    granularity: SimDuration,
}

impl Rfc6298Estimator {
    /// A fresh estimator: RFC 6298 §2.1, RTO <- the initial RTO until a sample is made.
    #[must_use]
    pub fn new(initial_rto: SimDuration, min_rto: SimDuration, max_rto: SimDuration, granularity: SimDuration) -> Self {
        Rfc6298Estimator {
            srtt: None,
            rttvar: SimDuration::ZERO,
            base_rto: initial_rto.min(max_rto),
            backoffs: 0,
            min_rto,
            max_rto,
            granularity,
            min_on_variance: false,
        }
    }

    /// Feed one round-trip measurement `r` (never from a retransmitted
    /// segment: RFC 6298 §3, Karn). Clears the backoff (§5.7 note: a new
    /// sample gives a fresh RTO).
    pub fn on_sample(&mut self, r: SimDuration) {
        let r_ns = r.as_nanos();
        match self.srtt {
            None => {
                // RFC 6298 §2.2: SRTT <- R, RTTVAR <- R/2.
                self.srtt = Some(r);
                self.rttvar = SimDuration::from_nanos(r_ns / 2);
            }
            Some(srtt) => {
                let s = srtt.as_nanos();
                let diff = s.abs_diff(r_ns);
                // RFC 6298 §2.3: RTTVAR <- (1 - beta) * RTTVAR + beta * |SRTT - R'|, beta = 1/4.
                self.rttvar = SimDuration::from_nanos((3 * self.rttvar.as_nanos() + diff) / 4);
                // RFC 6298 §2.3: SRTT <- (1 - alpha) * SRTT + alpha * R', alpha = 1/8.
                self.srtt = Some(SimDuration::from_nanos((7 * s + r_ns) / 8));
            }
        }
        let srtt = self.srtt.expect("set above");
        // RFC 6298 §2.2-2.3: RTO <- SRTT + max (G, K*RTTVAR), K = 4.
        let mut variance = self.granularity.max(self.rttvar.saturating_mul(4));
        if self.min_on_variance {
            // Linux tcp_rtt_estimator(): rttvar_us = max(mdev_max_us, tcp_rto_min_us(sk)), and
            // __tcp_set_rto(): RTO = srtt + rttvar, so the RTO is at least SRTT + tcp_rto_min.
            // DEVIATION(Linux): RFC 6298's RTTVAR stands for Linux's mdev_max (the largest mdev of
            // the last round trip, decayed once per round trip).
            variance = variance.max(self.min_rto);
        }
        let rto = srtt + variance;
        // RFC 6298 §2.4: if RTO is less than the minimum it SHOULD be rounded up.
        // RFC 6298 §2.5: a maximum value MAY be placed on RTO.
        self.base_rto = rto.max(self.min_rto).min(self.max_rto);
        self.backoffs = 0;
    }

    /// The timer expired: RFC 6298 §5.5, RTO <- RTO * 2, up to the maximum.
    pub fn on_backoff(&mut self) {
        self.backoffs = self.backoffs.saturating_add(1);
    }

    /// Replace the RTO by `rto` (RFC 6298 §5.7: re-initialise to 3 s after a
    /// retransmitted SYN), keeping any samples.
    pub fn reset_rto(&mut self, rto: SimDuration) {
        self.base_rto = rto.max(self.min_rto).min(self.max_rto);
        self.backoffs = 0;
    }

    /// The current RTO, backoff applied and capped at the maximum.
    #[must_use]
    pub fn rto(&self) -> SimDuration {
        let shift = self.backoffs.min(63);
        let factor = 1u64.checked_shl(shift).unwrap_or(u64::MAX);
        self.base_rto.saturating_mul(factor).min(self.max_rto)
    }

    /// SRTT, if any sample has been taken.
    #[must_use]
    pub fn srtt(&self) -> Option<SimDuration> {
        self.srtt
    }

    /// RTTVAR.
    #[must_use]
    pub fn rttvar(&self) -> SimDuration {
        self.rttvar
    }

    /// Consecutive backoffs since the last sample.
    #[must_use]
    pub fn backoffs(&self) -> u32 {
        self.backoffs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimDuration {
        SimDuration::from_millis(v)
    }

    fn est() -> Rfc6298Estimator {
        Rfc6298Estimator::new(ms(1000), ms(200), ms(60_000), ms(1))
    }

    /// A timeout reads one cache line of the estimator: the enum keeps its tag in the first 8
    /// bytes (in the spare values of the ns-2 estimator's first flag) and each variant's fields
    /// start there, what `on_backoff`, `is_backed_off` and `rto` read inside the first 64 bytes;
    /// the 72-byte estimator's last 8 hold what only a sample reads (see `TcpSocket`'s lines).
    #[test]
    fn a_timeout_reads_the_estimators_first_line_only() {
        use std::mem::{offset_of, size_of};
        assert_eq!(size_of::<RttEstimator>(), 72);
        let start = |e: &RttEstimator| match e {
            RttEstimator::Rfc6298(v) => std::ptr::from_ref(v).addr() - std::ptr::from_ref(e).addr(),
            RttEstimator::Ns2(v) => std::ptr::from_ref(v).addr() - std::ptr::from_ref(e).addr(),
        };
        let rfc = RttEstimator::Rfc6298(est());
        let ns2 = RttEstimator::Ns2(Ns2Estimator::new(ms(6000), ms(0), ms(100_000), ms(100), ms(0), false));
        assert_eq!((start(&rfc), start(&ns2)), (8, 0));
        // RFC 6298's: backoffs, base_rto, max_rto (and min_rto) before byte 64; granularity after.
        let last_read = offset_of!(Rfc6298Estimator, min_rto) + 8;
        assert!(8 + last_read <= 64 && 8 + offset_of!(Rfc6298Estimator, granularity) == 64);
        // The ns-2 one's layout is checked in its module; its tag is in `sampled` or `rfc2988`.
        assert_eq!(size_of::<Ns2Estimator>(), 72);
    }

    #[test]
    fn before_any_sample_rto_is_initial() {
        assert_eq!(est().rto(), ms(1000));
        assert_eq!(Rfc6298Estimator::new(ms(3000), ms(200), ms(60_000), ms(1)).rto(), ms(3000));
    }

    #[test]
    fn first_sample_sets_srtt_and_half_rttvar() {
        let mut e = est();
        e.on_sample(ms(100));
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rttvar(), ms(50));
        // RTO = 100 + max(1, 4*50) = 300 ms.
        assert_eq!(e.rto(), ms(300));
    }

    #[test]
    fn later_samples_use_alpha_one_eighth_beta_one_quarter() {
        let mut e = est();
        e.on_sample(ms(100));
        e.on_sample(ms(200));
        // RTTVAR = 3/4*50 + 1/4*|100-200| = 37.5 + 25 = 62.5 ms
        assert_eq!(e.rttvar(), SimDuration::from_micros(62_500));
        // SRTT = 7/8*100 + 1/8*200 = 112.5 ms
        assert_eq!(e.srtt(), Some(SimDuration::from_micros(112_500)));
        // RTO = 112.5 + 4*62.5 = 362.5 ms
        assert_eq!(e.rto(), SimDuration::from_micros(362_500));
    }

    #[test]
    fn granularity_bounds_the_variance_term() {
        let mut e = Rfc6298Estimator::new(ms(1000), ms(0), ms(60_000), ms(500));
        for _ in 0..50 {
            e.on_sample(ms(100));
        }
        // RTTVAR decays towards 0, so RTO -> SRTT + G.
        assert_eq!(e.rto(), ms(600));
    }

    #[test]
    fn rto_is_rounded_up_to_the_minimum() {
        let mut e = Rfc6298Estimator::new(ms(1000), ms(1000), ms(60_000), ms(1));
        e.on_sample(ms(10));
        assert_eq!(e.rto(), ms(1000));
    }

    #[test]
    fn backoff_doubles_up_to_the_maximum_and_a_sample_clears_it() {
        let mut e = Rfc6298Estimator::new(ms(1000), ms(200), ms(5000), ms(1));
        e.on_backoff();
        assert_eq!(e.rto(), ms(2000));
        e.on_backoff();
        assert_eq!(e.rto(), ms(4000));
        e.on_backoff();
        assert_eq!(e.rto(), ms(5000));
        for _ in 0..100 {
            e.on_backoff();
        }
        assert_eq!(e.rto(), ms(5000));
        e.on_sample(ms(100));
        assert_eq!(e.rto(), ms(300));
    }
}
