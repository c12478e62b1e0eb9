//! ns-2's retransmission-timer estimator: BSD's integer-tick estimator as
//! ns-2's one-way `TcpAgent` runs it.
//!
//! Read first: ns-2 `tcp/tcp.cc` `rtt_init()`, `rtt_update()`,
//! `rtt_timeout()` and `rtt_backoff()` (the code of 2001-05-21, v1.122,
//! and of ns-2.35, v1.182, which adds `rfc2988_`); Jacobson & Karels,
//! "Congestion Avoidance and Control" (1988), appendix A, for the scaled
//! fixed-point sums.
//!
//! Everything is counted in clock ticks (`tcpTick_`, here the connection's
//! `clock_granularity`): a sample is the difference of two readings of a
//! tick counter, SRTT is kept scaled by 8 and RTTVAR by 4, and the RTO is
//! `(SRTT + 4 RTTVAR)` truncated to whole ticks. Because the variance term
//! only decays while `|delta| >= RTTVAR`, it never falls below about one
//! tick, so with a 0.1 s tick the RTO of a path whose RTT is below a tick
//! settles at 0.3 s, not at the 0.2 s floor of `rtt_timeout()`.

use crate::time::{SimDuration, SimTime};

/// ns-2 `T_SRTT_BITS` 3: SRTT is kept scaled by 2^3.
const T_SRTT_BITS: u32 = 3;
/// ns-2 `T_RTTVAR_BITS` 2: RTTVAR is kept scaled by 2^2.
const T_RTTVAR_BITS: u32 = 2;
/// ns-2 `rttvar_exp_` 2: the RTO is SRTT + 2^2 RTTVAR.
const RTTVAR_EXP: u32 = 2;
/// ns-2 `rtt_backoff()`: the backoff multiplier doubles while below 64.
const MAX_BACKOFF: u64 = 64;
/// ns-2 `rtt_backoff()`: past a multiplier of 8, SRTT is folded into RTTVAR and cleared.
const CLOBBER_BACKOFF: u64 = 8;

/// The tick-based SRTT / RTTVAR / RTO state of one connection.
///
/// In declaration order (`repr(C)`): the flags first, so that [`crate::tcp::RttEstimator`] keeps
/// its variant tag in their spare values at its byte 0, then everything a timeout reads (the
/// backoff, `rto()`'s terms) in the first 64 bytes; `phase`, which only a sample reads, last. A
/// socket's timeout then reads one line of the estimator, not two (`tests::layout`).
#[derive(Clone, Debug)]
#[repr(C)]
pub struct Ns2Estimator {
    /// A sample has been taken.
    sampled: bool,
    /// `rfc2988_`: ns-2.35's ordering of the bounds and its uncapped backoff.
    rfc2988: bool,
    /// `t_srtt_`: smoothed RTT in ticks, scaled by 2^`T_SRTT_BITS`; 0 = no estimate.
    t_srtt: i64,
    /// `t_rttvar_`: RTT variation in ticks, scaled by 2^`T_RTTVAR_BITS`.
    t_rttvar: i64,
    /// `t_rtxcur_`: the RTO before backoff and bounds.
    rtxcur: SimDuration,
    /// `t_backoff_`: the backoff multiplier, 1 after a sample.
    backoff: u64,
    /// `tcpTick_`, > 0.
    tick: u64,
    /// `minrto_`.
    min_rto: SimDuration,
    /// `maxrto_`.
    max_rto: SimDuration,
    /// `boot_time_`: where this connection's tick counter stands at time 0, in [0, tick).
    phase: u64,
}

impl Ns2Estimator {
    /// ns-2 `rtt_init()`: no estimate, `t_rtxcur_ = rtxcur_init_`, `t_backoff_ = 1`.
    /// `tick` must be > 0; `phase` is reduced modulo `tick`.
    #[must_use]
    pub fn new(
        initial_rto: SimDuration,
        min_rto: SimDuration,
        max_rto: SimDuration,
        tick: SimDuration,
        phase: SimDuration,
        rfc2988: bool,
    ) -> Self {
        let tick = tick.as_nanos().max(1);
        Ns2Estimator {
            // ns-2 srtt_init_ 0: the first sample sets both terms, so rttvar_init_ never shows.
            t_srtt: 0,
            t_rttvar: 0,
            rtxcur: initial_rto,
            backoff: 1,
            sampled: false,
            tick,
            phase: phase.as_nanos() % tick,
            min_rto,
            max_rto,
            rfc2988,
        }
    }

    fn ticks(&self, n: i64) -> SimDuration {
        SimDuration::from_nanos(u64::try_from(n.max(0)).unwrap_or(0).saturating_mul(self.tick))
    }

    /// ns-2 `rtt_update()`: the segment sent at `sent` was acknowledged at `now`.
    pub fn on_sample(&mut self, sent: SimTime, now: SimTime) {
        let tao = now.saturating_since(sent).as_nanos();
        // ns-2 rtt_update(): tickoff = fmod(sendtime + boot_time_, tcpTick_) ...
        let tickoff = (sent.as_nanos() % self.tick + self.phase) % self.tick;
        // ... t_rtt_ = int((tao + tickoff) / tcpTick_): the ticks the counter advanced; at least 1.
        let t_rtt = i64::try_from((tao + tickoff) / self.tick).unwrap_or(i64::MAX / 64).max(1);
        if self.t_srtt != 0 {
            // ns-2 rtt_update(): delta = t_rtt_ - (t_srtt_ >> T_SRTT_BITS); t_srtt_ += delta (a1 = 7/8 a0 + 1/8 m).
            let mut delta = t_rtt - (self.t_srtt >> T_SRTT_BITS);
            self.t_srtt += delta;
            if self.t_srtt <= 0 {
                self.t_srtt = 1;
            }
            // ns-2 rtt_update(): t_rttvar_ += |delta| - (t_rttvar_ >> T_RTTVAR_BITS) (var1 = 3/4 var0 + 1/4 |d|).
            delta = delta.abs() - (self.t_rttvar >> T_RTTVAR_BITS);
            self.t_rttvar += delta;
            if self.t_rttvar <= 0 {
                self.t_rttvar = 1;
            }
        } else {
            // ns-2 rtt_update(): srtt = rtt, rttvar = rtt / 2.
            self.t_srtt = t_rtt << T_SRTT_BITS;
            self.t_rttvar = t_rtt << (T_RTTVAR_BITS - 1);
        }
        // ns-2 rtt_update(): t_rtxcur_ = (((t_rttvar_ << (rttvar_exp_ + T_SRTT_BITS - T_RTTVAR_BITS))
        // + t_srtt_) >> T_SRTT_BITS) * tcpTick_.
        let scaled = (self.t_rttvar << (RTTVAR_EXP + T_SRTT_BITS - T_RTTVAR_BITS)) + self.t_srtt;
        self.rtxcur = self.ticks(scaled >> T_SRTT_BITS);
        // ns-2 newack(): a timed segment's ACK ends the backoff (t_backoff_ = 1).
        self.backoff = 1;
        self.sampled = true;
    }

    /// ns-2 `rtt_update()` from `newack()` on an ACK with ECN-Echo while `ecn_backoff_` is
    /// set: the estimate is updated, `t_backoff_` is kept.
    pub fn on_sample_keeping_backoff(&mut self, sent: SimTime, now: SimTime) {
        let b = self.backoff;
        self.on_sample(sent, now);
        self.backoff = b;
    }

    /// ns-2 `rtt_backoff()`.
    pub fn on_backoff(&mut self) {
        // ns-2 rtt_backoff(): if (t_backoff_ < 64 || (rfc2988_ && rtt_timeout() < maxrto_)) t_backoff_ <<= 1.
        if self.backoff < MAX_BACKOFF || (self.rfc2988 && self.rto() < self.max_rto) {
            self.backoff = self.backoff.saturating_mul(2);
        }
        if self.backoff > CLOBBER_BACKOFF {
            // ns-2 rtt_backoff(): backed off this far, fold SRTT into RTTVAR and clear it.
            self.t_rttvar += self.t_srtt >> T_SRTT_BITS;
            self.t_srtt = 0;
        }
    }

    /// Replace `t_rtxcur_` by `rto` and end the backoff.
    pub fn reset_rto(&mut self, rto: SimDuration) {
        self.rtxcur = rto;
        self.backoff = 1;
    }

    /// ns-2 `rtt_timeout()`.
    #[must_use]
    pub fn rto(&self) -> SimDuration {
        let mut timeout = if self.rfc2988 {
            // ns-2.35 rtt_timeout(), rfc2988_ true: minrto_ bounds t_rtxcur_ before the backoff applies.
            self.rtxcur.max(self.min_rto).saturating_mul(self.backoff)
        } else {
            // ns-2 rtt_timeout() (2001): t_rtxcur_ * t_backoff_, then minrto_.
            self.rtxcur.saturating_mul(self.backoff).max(self.min_rto)
        };
        // ns-2 rtt_timeout(): at most maxrto_ ...
        timeout = timeout.min(self.max_rto);
        // ... and at least two ticks.
        timeout.max(SimDuration::from_nanos(self.tick.saturating_mul(2)))
    }

    /// SRTT (`t_srtt_ / 8` ticks), once a sample has been taken.
    #[must_use]
    pub fn srtt(&self) -> Option<SimDuration> {
        let ns = u64::try_from(self.t_srtt).unwrap_or(0).saturating_mul(self.tick) >> T_SRTT_BITS;
        self.sampled.then_some(SimDuration::from_nanos(ns))
    }

    /// RTTVAR (`t_rttvar_ / 4` ticks).
    #[must_use]
    pub fn rttvar(&self) -> SimDuration {
        SimDuration::from_nanos(u64::try_from(self.t_rttvar).unwrap_or(0).saturating_mul(self.tick) >> T_RTTVAR_BITS)
    }

    /// `t_backoff_`: the backoff multiplier (1 = not backed off).
    #[must_use]
    pub fn backoff(&self) -> u64 {
        self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimDuration {
        SimDuration::from_millis(v)
    }

    /// What a timeout reads (`on_backoff`, `rto`, the backoff) sits in the first 64 bytes, the
    /// flags (whose spare values hold `RttEstimator`'s tag) first; `phase`, read by samples only, last.
    #[test]
    fn layout() {
        use std::mem::{offset_of, size_of};
        assert_eq!((offset_of!(Ns2Estimator, sampled), offset_of!(Ns2Estimator, rfc2988)), (0, 1));
        for end in [
            offset_of!(Ns2Estimator, t_srtt),
            offset_of!(Ns2Estimator, t_rttvar),
            offset_of!(Ns2Estimator, rtxcur),
            offset_of!(Ns2Estimator, backoff),
            offset_of!(Ns2Estimator, tick),
            offset_of!(Ns2Estimator, min_rto),
            offset_of!(Ns2Estimator, max_rto),
        ] {
            assert!(end + 8 <= 64);
        }
        assert_eq!((offset_of!(Ns2Estimator, phase), size_of::<Ns2Estimator>()), (64, 72));
    }

    /// The ns2-2001 profile's estimator: tick 0.1 s, minrto_ 0, maxrto_ 100000 s, rtxcur_init_ 6 s.
    fn est2001() -> Ns2Estimator {
        Ns2Estimator::new(ms(6000), ms(0), SimDuration::from_secs(100_000), ms(100), ms(0), false)
    }

    /// Send at `sent_ms`, acknowledged `rtt_ms` later.
    fn sample(e: &mut Ns2Estimator, sent_ms: u64, rtt_ms: u64) {
        e.on_sample(SimTime::from_millis(sent_ms), SimTime::from_millis(sent_ms + rtt_ms));
    }

    #[test]
    fn before_any_sample_the_rto_is_rtxcur_init() {
        assert_eq!(est2001().rto(), ms(6000));
        assert_eq!(est2001().srtt(), None);
    }

    #[test]
    fn a_sample_is_the_number_of_tick_boundaries_crossed() {
        // 250 ms sent at 0 crosses 2 boundaries (0.1, 0.2); sent at 60 ms it crosses 3 (0.1, 0.2, 0.3).
        let mut e = est2001();
        sample(&mut e, 0, 250);
        assert_eq!(e.srtt(), Some(ms(200)));
        let mut e = est2001();
        sample(&mut e, 60, 250);
        assert_eq!(e.srtt(), Some(ms(300)));
        // The phase (boot_time_) shifts the counter: 40 ms of phase turns the first case into 3 ticks.
        let mut e = Ns2Estimator::new(ms(6000), ms(0), SimDuration::from_secs(100_000), ms(100), ms(60), false);
        sample(&mut e, 0, 250);
        assert_eq!(e.srtt(), Some(ms(300)));
    }

    #[test]
    fn rto_of_a_short_path_settles_at_three_ticks_not_two() {
        // RTT 20 ms, well under a tick: every sample is 1 tick (the minimum). srtt = 8, rttvar = 2
        // (scaled); delta is always 0 and 0 - (2 >> 2) = 0, so rttvar never decays:
        // rtxcur = ((2 << 3) + 8) >> 3 = 3 ticks = 0.3 s, above rtt_timeout()'s 2-tick floor.
        let mut e = est2001();
        for i in 0..200 {
            sample(&mut e, i * 1000, 20);
        }
        assert_eq!(e.rto(), ms(300));
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rttvar(), ms(50));
    }

    #[test]
    fn the_first_sample_sets_rto_to_three_times_the_sample() {
        // srtt = m, rttvar = m/2: rtxcur = m + 4 m/2 = 3 m.
        let mut e = est2001();
        sample(&mut e, 0, 500);
        assert_eq!(e.rto(), ms(1500));
    }

    #[test]
    fn later_samples_use_the_scaled_integer_sums() {
        // Samples of 5 then 9 ticks: t_srtt 40 -> 44, delta 4: t_rttvar 10 -> 10 + 4 - 2 = 12.
        // rtxcur = ((12 << 3) + 44) >> 3 = (96 + 44) >> 3 = 17 ticks.
        let mut e = est2001();
        sample(&mut e, 0, 500);
        sample(&mut e, 1000, 900);
        assert_eq!(e.srtt(), Some(ms(550)));
        assert_eq!(e.rttvar(), ms(300));
        assert_eq!(e.rto(), ms(1700));
    }

    #[test]
    fn backoff_multiplier_stops_at_64_and_clobbers_srtt_past_8() {
        let mut e = est2001();
        sample(&mut e, 0, 500);
        assert_eq!(e.rto(), ms(1500));
        for (n, mult) in [(1, 2), (2, 4), (3, 8)] {
            e.on_backoff();
            assert_eq!(e.backoff(), mult, "after {n}");
            assert_eq!(e.rto(), ms(1500).saturating_mul(mult));
        }
        e.on_backoff();
        assert_eq!(e.backoff(), 16);
        // SRTT (5 ticks) folded into RTTVAR (10 + 5 = 15 scaled), SRTT cleared; rtxcur unchanged.
        assert_eq!(e.rttvar(), SimDuration::from_micros(375_000));
        for _ in 0..10 {
            e.on_backoff();
        }
        // The multiplier, not the RTO, is capped: 64 * 1.5 s = 96 s (maxrto_ 100000 s in 2001).
        assert_eq!(e.backoff(), 64);
        assert_eq!(e.rto(), SimDuration::from_secs(96));
        // The next sample starts afresh (t_srtt_ was cleared) and ends the backoff.
        sample(&mut e, 10_000, 200);
        assert_eq!(e.srtt(), Some(ms(200)));
        assert_eq!(e.rto(), ms(600));
    }

    #[test]
    fn bounds_minrto_maxrto_and_two_ticks() {
        // minrto_ 1 s (2001-05-14 on): a 3-tick RTO is raised to 1 s, then backed off from there.
        let mut e = Ns2Estimator::new(ms(3000), ms(1000), ms(60_000), ms(100), ms(0), false);
        sample(&mut e, 0, 20);
        assert_eq!(e.rto(), ms(1000));
        e.on_backoff();
        // 2001 ordering: (0.3 s * 2) then minrto_: 1 s.
        assert_eq!(e.rto(), ms(1000));
        // ns-2.35 (rfc2988_ true): minrto_ first, then the backoff: 2 s.
        let mut e = Ns2Estimator::new(ms(3000), ms(1000), ms(60_000), ms(100), ms(0), true);
        sample(&mut e, 0, 20);
        e.on_backoff();
        assert_eq!(e.rto(), ms(2000));
        // rfc2988_: the multiplier keeps doubling while the RTO is below maxrto_, which caps it.
        for _ in 0..10 {
            e.on_backoff();
        }
        assert_eq!(e.rto(), ms(60_000));
        // Never below two ticks.
        let mut e = Ns2Estimator::new(ms(3000), ms(0), ms(60_000), ms(10), ms(0), false);
        sample(&mut e, 0, 1);
        assert_eq!(e.rto(), ms(30));
    }
}
