//! CUBIC: the window grows as a cubic function of the time since the last congestion
//! event, centred on the window at which that event happened.
//!
//! Read first: RFC 9438 §4 (§4.2 the window increase function, §4.3 the Reno-friendly
//! region, §4.4-4.5 concave and convex regions, §4.6 multiplicative decrease, §4.7 fast
//! convergence, §4.8 timeout, §4.10 slow start); Linux `net/ipv4/tcp_cubic.c` for the
//! `linux` profile's constants (beta 717/1024, C 410/1024).
//!
//! Arithmetic is integer throughout, so every machine computes the same windows: windows in
//! bytes (W_est with 32 fractional bits), times in microseconds inside the cubic, the cube
//! root of K by bisection on `u128` (exact floor). Linux also avoids floating point, with a
//! table-seeded Newton step for the cube root and time in units of 1/1024 s; this file
//! follows the RFC's formulas, not Linux's approximations of them (see docs/models/cubic.md).

use super::Window;
use crate::spec::{CubicInitialGrowth, SlowStartIncrease};
use crate::tcp::{Opt, RttEstimator, FRACTION_SCALE};
use crate::time::SimTime;

/// Fractional bits of `w_est`.
const EST_FRACTION_BITS: u32 = 32;
/// Microseconds per second, cubed: W_cubic's time unit is 1 µs, the RFC's 1 s.
const US_PER_S_CUBED: u128 = 1_000_000_000_000_000_000;
/// Linux tcp_cubic.c bictcp_update(): `cnt` (segments acknowledged per segment of growth) at most
/// 20 while there is no W_max ("increase cwnd 5% per RTT").
const LINUX_NO_WMAX_CNT: u128 = 20;
/// The largest |t - K| the cubic term is evaluated at (2^31 µs, 36 min); beyond it the
/// target is clamped to [cwnd, 1.5 cwnd] anyway (RFC 9438 §4.2).
const MAX_OFFSET_US: i128 = 1 << 31;

/// CUBIC's parameters and per-connection state (held behind a pointer by [`super::AnyCc`]).
#[derive(Clone, Debug)]
pub struct Cubic {
    /// beta_cubic in 1/[`FRACTION_SCALE`] (RFC 9438 §4.6: 0.7).
    beta: u64,
    /// C in segments/s^3, in 1/[`FRACTION_SCALE`] (RFC 9438 §5: 0.4).
    c: u64,
    /// RFC 9438 §4.7 fast convergence.
    fast_convergence: bool,
    /// Linux's floor of 5 % per round trip while `w_max` is 0 (`tcp.cubic_initial_growth`).
    linux_floor: bool,
    /// W_max, bytes: the window before the last reduction (less under fast convergence); 0 = none
    /// (before the first congestion event and after a timeout, RFC 9438 §4.8 / §4.10).
    w_max: u64,
    /// cwnd_prior, bytes: cwnd when the last reduction began (RFC 9438 §4.6).
    cwnd_prior: u64,
    /// t_epoch: when the current congestion-avoidance stage began; none until its first ACK.
    epoch: Opt<SimTime>,
    /// K, µs (RFC 9438 eq. 2).
    k_us: u64,
    /// W_max as used by this epoch's curve (cwnd_epoch when cwnd_epoch >= W_max), bytes.
    origin: u64,
    /// W_est, bytes with 32 fractional bits (RFC 9438 §4.3).
    w_est: u128,
}

impl Cubic {
    /// CUBIC with beta and C in units of 1/[`FRACTION_SCALE`].
    #[must_use]
    pub fn new(beta: u32, c: u32, fast_convergence: bool) -> Self {
        Cubic {
            beta: u64::from(beta),
            c: u64::from(c).max(1),
            fast_convergence,
            linux_floor: false,
            w_max: 0,
            cwnd_prior: 0,
            epoch: Opt::NONE,
            k_us: 0,
            origin: 0,
            w_est: 0,
        }
    }

    /// The same CUBIC with `tcp.cubic_initial_growth` = `growth`.
    #[must_use]
    pub fn with_initial_growth(self, growth: CubicInitialGrowth) -> Self {
        Cubic { linux_floor: growth == CubicInitialGrowth::Linux, ..self }
    }

    /// RFC 9438 §4.6 and §4.7, on a congestion event: W_max (with fast convergence) and cwnd_prior
    /// from `w.cwnd`, then ssthresh = max(basis * beta_cubic, 2 SMSS). Returns basis * beta_cubic.
    fn reduce(&mut self, w: &mut Window, basis: u64) -> u64 {
        let cwnd = w.cwnd;
        // RFC 9438 §4.7: W_max = cwnd * (1 + beta_cubic) / 2 if cwnd < W_max (fast convergence), else cwnd.
        self.w_max = if self.fast_convergence && cwnd < self.w_max {
            mul_div(cwnd, FRACTION_SCALE + self.beta, 2 * FRACTION_SCALE)
        } else {
            cwnd
        };
        // RFC 9438 §4.6: cwnd_prior = cwnd (the window before the reduction).
        self.cwnd_prior = cwnd;
        // RFC 9438 §4.6: ssthresh = flight_size * beta_cubic; ssthresh = max(ssthresh, 2) segments.
        let reduced = mul_div(basis, self.beta, FRACTION_SCALE);
        w.ssthresh = reduced.max(2 * w.mss);
        // RFC 9438 §4.2: a congestion event ends the congestion-avoidance stage.
        self.epoch = Opt::NONE;
        reduced
    }

    /// The duplicate-ACK threshold: RFC 9438 §4.6's decrease of ssthresh (cwnd is the recovery's).
    pub(crate) fn on_loss(&mut self, w: &mut Window, flight: u64) {
        self.reduce(w, flight);
    }

    /// RFC 9438 §4.8: a timeout reduces cwnd as RFC 5681 does but sets ssthresh with beta_cubic;
    /// the next congestion-avoidance stage starts with K = 0 and W_max = its initial cwnd.
    pub(crate) fn on_rto(&mut self, w: &mut Window, flight: u64, first: bool) {
        if first {
            self.reduce(w, flight);
        }
        // RFC 9438 §4.8: W_max is the cwnd at the beginning of the next congestion avoidance (K = 0).
        self.w_max = 0;
        self.epoch = Opt::NONE;
        // RFC 5681 §3.1: cwnd is set to the loss window, one segment.
        w.cwnd = w.mss;
    }

    /// Data sent with nothing in flight, the last data having left at `last_sent`: the idle
    /// time is not part of t (RFC 9438 §4.2, §5.8), so t_epoch moves later by it, never past `now`
    /// (Linux `cubictcp_cwnd_event()` on `CA_EVENT_TX_START`, since 4.3: the curve keeps its
    /// shape, shifted by the idle period).
    pub(crate) fn on_tx_start(&mut self, now: SimTime, last_sent: SimTime) {
        if let Some(epoch) = self.epoch.get() {
            // RFC 9438 §4.2: t MUST NOT include periods in which cwnd was not updated for application limits.
            let idle = now.saturating_since(last_sent);
            self.epoch = Opt::some((epoch + idle).min(now));
        }
    }

    /// t_epoch, if a congestion-avoidance stage is running.
    pub(crate) fn epoch(&self) -> Option<SimTime> {
        self.epoch.get()
    }

    /// RFC 9438 §4.6: an ECN-Echo is a congestion event as a loss is: ssthresh = cwnd * beta_cubic,
    /// cwnd = ssthresh. Returns true if the reduced window is below one segment (RFC 3168 §6.1.2).
    pub(crate) fn on_ecn_echo(&mut self, w: &mut Window, basis: u64) -> bool {
        let reduced = self.reduce(w, basis);
        // RFC 9438 §4.6: cwnd = ssthresh (the reduction).
        w.cwnd = w.ssthresh;
        reduced < w.mss
    }

    /// An ACK of new data outside recovery: slow start (RFC 9438 §4.10: RFC 5681's), or the
    /// cubic / Reno-friendly growth of congestion avoidance.
    pub(crate) fn on_ack(&mut self, w: &mut Window, acked: u64, now: SimTime, rtt: &RttEstimator) {
        let mut acked = acked;
        if w.in_slow_start() {
            if w.ss == SlowStartIncrease::Rfc5681 {
                // RFC 9438 §4.10: CUBIC MAY use the slow start of RFC 5681.
                super::grow(w, acked);
                return;
            }
            // Linux cubictcp_cong_avoid(): acked = tcp_slow_start(tp, acked); if (!acked) return; the rest
            // goes to bictcp_update() and tcp_cong_avoid_ai() on the same ACK.
            acked = super::linux_slow_start(w, acked);
            if acked == 0 {
                w.cwnd = w.cwnd.min(w.max_cwnd);
                return;
            }
        }
        let cwnd = w.cwnd.max(1);
        let mss = w.mss;
        let epoch = match self.epoch.get() {
            Some(e) => e,
            None => {
                self.start_epoch(w, now);
                now
            }
        };
        // RFC 9438 §4.3 eq. 4: W_est += alpha_cubic * segments_acked / cwnd (in bytes: * SMSS), with
        // alpha_cubic = 3 (1 - beta) / (1 + beta), or 1 once W_est >= cwnd_prior.
        let (a_num, a_den) = if (self.w_est >> EST_FRACTION_BITS) >= u128::from(self.cwnd_prior) {
            // RFC 9438 §4.3: alpha_cubic SHOULD be set to 1 once W_est reaches cwnd_prior.
            (1, 1)
        } else {
            (3 * u128::from(FRACTION_SCALE - self.beta), u128::from(FRACTION_SCALE + self.beta))
        };
        self.w_est += ((a_num * u128::from(mss) * u128::from(acked)) << EST_FRACTION_BITS) / (a_den * u128::from(cwnd));
        let t_us = i128::from(now.saturating_since(epoch).as_nanos() / 1000);
        let w_est = u64::try_from(self.w_est >> EST_FRACTION_BITS).unwrap_or(u64::MAX / 2);
        // Linux bictcp_update(): if (last_max_cwnd == 0 && cnt > 20) cnt = 20: while there is no W_max,
        // cwnd grows at least 1/20 of what is acknowledged (in 2^-32 byte); none under RFC 9438.
        let floor = if self.linux_floor && self.w_max == 0 { (u128::from(acked) << 32) / LINUX_NO_WMAX_CNT } else { 0 };
        if self.w_cubic(t_us, mss) < i128::from(w_est) {
            if floor > 0 {
                // Linux bictcp_update(): the floor's cnt, lowered further by tcp_friendliness() if W_est is ahead.
                add_step(w, floor);
            }
            // RFC 9438 §4.3: in the Reno-friendly region cwnd SHOULD be set to W_est.
            // DEVIATION(RFC 9438): never below cwnd (Linux bictcp_update(): only a faster increase).
            w.cwnd = w.cwnd.max(w_est);
        } else {
            // RFC 9438 §4.2: target = W_cubic(t + RTT), RTT the smoothed round-trip time, bounded to
            // [cwnd, 1.5 cwnd].
            let rtt_us = rtt.srtt().map_or(0, |d| i128::from(d.as_nanos() / 1000));
            let target = self.w_cubic(t_us + rtt_us, mss).clamp(i128::from(cwnd), i128::from(cwnd + cwnd / 2));
            let target = u64::try_from(target).expect("within [cwnd, 1.5 cwnd]");
            // RFC 9438 §4.4-4.5: cwnd += (target - cwnd) / cwnd per ACK of one segment (here per byte
            // acknowledged, in bytes: (target - cwnd) * acked / cwnd), the fraction kept in `w.acc` (2^-32 byte).
            let step = ((u128::from(target - cwnd) * u128::from(acked)) << 32) / u128::from(cwnd);
            add_step(w, step.max(floor));
        }
        w.cwnd = w.cwnd.min(w.max_cwnd);
    }

    /// RFC 9438 §4.2: the first ACK of a congestion-avoidance stage sets t_epoch, cwnd_epoch,
    /// K (eq. 2) and W_est = cwnd_epoch (§4.3).
    fn start_epoch(&mut self, w: &Window, now: SimTime) {
        self.epoch = Opt::some(now);
        let cwnd = w.cwnd;
        // RFC 9438 §4.3: W_est is set equal to cwnd at the start of the congestion avoidance stage.
        self.w_est = u128::from(cwnd) << EST_FRACTION_BITS;
        if self.w_max <= cwnd {
            // RFC 9438 §4.2: if cwnd_epoch is greater than W_max, K = 0; §4.8 / §4.10: with no W_max,
            // W_max is the window at the start of congestion avoidance (Linux: bic_origin_point = cwnd).
            self.k_us = 0;
            self.origin = cwnd;
            if self.cwnd_prior == 0 {
                self.cwnd_prior = cwnd;
            }
        } else {
            // RFC 9438 eq. 2: K = cubic_root((W_max - cwnd_epoch) / C), segments and seconds; in bytes
            // and µs: K^3 = (W_max - cwnd) * 10^18 / (C * SMSS).
            self.k_us = k_micros(self.w_max - cwnd, self.c, w.mss);
            self.origin = self.w_max;
        }
    }

    /// RFC 9438 eq. 1: W_cubic(t) = C (t - K)^3 + W_max, in bytes, `t_us` in µs since t_epoch.
    fn w_cubic(&self, t_us: i128, mss: u64) -> i128 {
        let d = (t_us - i128::from(self.k_us)).clamp(-MAX_OFFSET_US, MAX_OFFSET_US);
        // C * SMSS * d^3 / (FRACTION_SCALE * 10^18): |d^3| < 2^93, C * SMSS < 2^53; the product may
        // pass i128 only far outside [cwnd, 1.5 cwnd], where saturating changes no decision.
        let cube = d * d * d;
        let scaled = cube.saturating_mul(i128::from(self.c) * i128::from(mss));
        i128::from(self.origin) + div_by_scale(scaled)
    }
}

/// FRACTION_SCALE * 10^18 (`w_cubic`'s divisor) = 2^34 * 5^24.
const SCALE_TWOS: u32 = 34;
/// 5^24: the odd part of `w_cubic`'s divisor.
const SCALE_FIVES: u128 = 59_604_644_775_390_625;
const _: () = assert!((SCALE_FIVES << SCALE_TWOS) == FRACTION_SCALE as u128 * US_PER_S_CUBED);

/// `x / (FRACTION_SCALE * 10^18)`, truncated toward zero as `/` is: floor(floor(|x| / 2^34) / 5^24)
/// (nested floor divisions are exact) with x's sign. The same quotient as the 128-bit division by
/// the whole divisor, which exceeds 64 bits and takes the slow path of the division routine; this
/// one divides by a 64-bit number (twice per ACK in congestion avoidance).
fn div_by_scale(x: i128) -> i128 {
    let q = (x.unsigned_abs() >> SCALE_TWOS) / SCALE_FIVES;
    // |x| < 2^128, so q < 2^94 / 5^24 < 2^39: it fits i128 either way.
    let q = i128::try_from(q).expect("below 2^39");
    if x < 0 {
        -q
    } else {
        q
    }
}

/// cwnd += `step` (2^-32 byte), the fraction kept in `w.acc`.
fn add_step(w: &mut Window, step: u128) {
    let total = u128::from(w.acc) + step;
    w.cwnd += u64::try_from(total >> 32).unwrap_or(u64::MAX / 4);
    w.acc = u64::try_from(total & 0xffff_ffff).expect("below 2^32");
}

/// a * b / c without overflow (a window times a fraction).
fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    u64::try_from(u128::from(a) * u128::from(b) / u128::from(c.max(1))).unwrap_or(u64::MAX / 2)
}

/// RFC 9438 eq. 2 in µs: the floor of cbrt(delta_bytes * 10^18 * FRACTION_SCALE / (c * mss)).
fn k_micros(delta_bytes: u64, c: u64, mss: u64) -> u64 {
    let num = u128::from(delta_bytes) * u128::from(FRACTION_SCALE);
    let den = u128::from(c) * u128::from(mss.max(1));
    // (num / den) * 10^18 + (num % den) * 10^18 / den: no overflow for windows below 2^64 bytes.
    let k3 = (num / den).saturating_mul(US_PER_S_CUBED).saturating_add((num % den) * US_PER_S_CUBED / den);
    u64::try_from(icbrt(k3)).expect("below 2^43")
}

/// The floor of the cube root of `x` (bisection: exact, and the same on every machine).
fn icbrt(x: u128) -> u128 {
    let (mut lo, mut hi) = (0u128, 1u128 << 42);
    if hi * hi * hi <= x {
        return hi;
    }
    // Invariant: lo^3 <= x < hi^3.
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if mid * mid * mid <= x {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::CaIncrease;
    use crate::time::SimDuration;

    const MSS: u64 = 1000;
    /// RFC 9438: beta 0.7, C 0.4.
    fn rfc() -> Cubic {
        Cubic::new(716_800_000, 409_600_000, true)
    }
    fn win(cwnd_segments: u64, ssthresh_segments: u64) -> Window {
        Window::new(cwnd_segments * MSS, ssthresh_segments * MSS, MSS, u64::MAX / 4, CaIncrease::PerAck)
    }
    fn rtt(ms: u64) -> RttEstimator {
        let cfg = crate::profile::Profile::Rfc.tcp();
        let mut r = RttEstimator::for_config(&cfg, SimDuration::ZERO);
        r.on_sample(SimTime::ZERO, SimTime::from_millis(ms));
        r
    }

    /// Growth in segments over one window of ACKs (one segment each, spread over `span_ms` from
    /// `start_ms`), SRTT 100 ms.
    fn one_round(c: &mut Cubic, w: &mut Window, span_ms: u64, start_ms: u64) -> f64 {
        let r = rtt(100);
        let before = w.cwnd;
        let acks = w.cwnd / MSS;
        for k in 0..acks {
            c.on_ack(w, MSS, SimTime::from_millis(start_ms + k * span_ms / acks.max(1)), &r);
        }
        (w.cwnd - before) as f64 / MSS as f64
    }

    /// Linux bictcp_update(): while last_max_cwnd == 0 (no congestion event yet, e.g. after a
    /// HyStart exit), cnt <= 20: at least 5 % per round trip. RFC 9438 has no floor: from K = 0 the
    /// curve and W_est give a fraction of a segment in the first 100 ms at 1000 segments.
    #[test]
    fn linux_initial_growth_floor_is_five_percent_per_rtt_without_w_max() {
        let mut linux = rfc().with_initial_growth(CubicInitialGrowth::Linux);
        let mut plain = rfc();
        let (mut wl, mut wr) = (win(1000, 1000), win(1000, 1000));
        let gl = one_round(&mut linux, &mut wl, 100, 0);
        let gr = one_round(&mut plain, &mut wr, 100, 0);
        // 1000 ACKs of 1/20 segment each, compounding within the round (cnt is per ACK): 50 segments.
        assert!((gl - 50.0).abs() < 0.01, "Linux floor: {gl} segments");
        assert!(gr < 2.0, "RFC 9438 from K = 0: {gr} segments");
        // Once there is a W_max (a congestion event), no floor: both follow the same curve.
        let (mut wl, mut wr) = (win(1000, 2000), win(1000, 2000));
        linux.on_loss(&mut wl, 1000 * MSS);
        plain.on_loss(&mut wr, 1000 * MSS);
        wl.cwnd = wl.ssthresh;
        wr.cwnd = wr.ssthresh;
        let gl = one_round(&mut linux, &mut wl, 100, 10_000);
        let gr = one_round(&mut plain, &mut wr, 100, 10_000);
        assert_eq!(wl.cwnd, wr.cwnd, "{gl} vs {gr}");
        // A timeout forgets W_max (RFC 9438 §4.8; Linux bictcp_reset() in cubictcp_state(TCP_CA_Loss)):
        // the floor is back.
        let flight = wl.cwnd;
        linux.on_rto(&mut wl, flight, true);
        wl.cwnd = wl.ssthresh;
        let start = (wl.cwnd / MSS) as f64;
        let g = one_round(&mut linux, &mut wl, 100, 20_000);
        assert!(g >= 0.05 * start, "after a timeout: {g} segments from {start}");
    }

    /// Linux cubictcp_cong_avoid(): tcp_slow_start() to ssthresh, the rest of the ACK to the cubic
    /// update on the same ACK; RFC 5681's slow start under CUBIC adds min(N, SMSS).
    #[test]
    fn linux_slow_start_under_cubic_carries_the_rest_into_avoidance() {
        let r = rtt(100);
        let mut c = rfc();
        let mut w = win(99, 100).with_slow_start(SlowStartIncrease::Linux);
        c.on_ack(&mut w, 4 * MSS, SimTime::ZERO, &r);
        assert!(w.cwnd >= 100 * MSS && w.cwnd < 101 * MSS, "{}", w.cwnd);
        assert!(c.epoch().is_some(), "the rest started congestion avoidance on the same ACK");
        let mut c = rfc();
        let mut w = win(10, 100).with_slow_start(SlowStartIncrease::Linux);
        c.on_ack(&mut w, 2 * MSS, SimTime::ZERO, &r);
        assert_eq!((w.cwnd, c.epoch()), (12 * MSS, None));
        let mut w = win(10, 100);
        c.on_ack(&mut w, 2 * MSS, SimTime::ZERO, &r);
        assert_eq!(w.cwnd, 11 * MSS);
    }

    #[test]
    fn the_scale_division_is_the_128_bit_quotient() {
        let whole = i128::from(FRACTION_SCALE) * US_PER_S_CUBED as i128;
        let mut rng = crate::rng::SimRng::for_component(9, "cubic-scale");
        let mut xs =
            vec![0, 1, -1, whole, -whole, whole - 1, 1 - whole, whole + 1, i128::MAX, i128::MIN + 1, i128::MIN];
        for _ in 0..20_000 {
            let bits = rng.below(127);
            let hi = i128::from(rng.next_u64() >> 1) << 63;
            let x = (hi | i128::from(rng.next_u64() >> 1)) >> (126 - bits);
            xs.push(if rng.below(2) == 0 { x } else { -x });
        }
        for x in xs {
            assert_eq!(div_by_scale(x), x / whole, "x = {x}");
        }
    }

    #[test]
    fn integer_cube_root_is_the_floor() {
        for x in [0u128, 1, 7, 8, 9, 26, 27, 28, 999, 1000, 1001, 1 << 60, 3_375_000_000_000_000_000] {
            let r = icbrt(x);
            assert!(r * r * r <= x && (r + 1) * (r + 1) * (r + 1) > x, "cbrt({x}) = {r}");
        }
    }

    #[test]
    fn k_is_the_rfc_cube_root() {
        // RFC 9438 eq. 2: W_max = 100, cwnd_epoch = 70 segments, C = 0.4: K = cbrt(30 / 0.4) = cbrt(75)
        // = 4.217163 s (hand-computed: 4.217163^3 = 74.99999).
        let k = k_micros(30 * MSS, 409_600_000, MSS);
        assert_eq!(k, 4_217_163);
        // Linux's C = 410/1024: cbrt(30 / 0.400390625) = 4.215791 s.
        assert_eq!(k_micros(30 * MSS, 410_000_000, MSS), 4_215_791);
    }

    #[test]
    fn reduction_sets_w_max_and_ssthresh_with_beta() {
        let mut c = rfc();
        let mut w = win(100, 1000);
        c.on_loss(&mut w, 100 * MSS);
        // RFC 9438 §4.6: ssthresh = 100 * 0.7 = 70 segments; §4.7: W_max = cwnd (first event).
        assert_eq!((w.ssthresh, c.w_max, c.cwnd_prior), (70 * MSS, 100 * MSS, 100 * MSS));
        // A second event below W_max: fast convergence, W_max = 80 * (1 + 0.7) / 2 = 68.
        w.cwnd = 80 * MSS;
        c.on_loss(&mut w, 80 * MSS);
        assert_eq!((w.ssthresh, c.w_max), (56 * MSS, 68 * MSS));
        // Without fast convergence W_max is the cwnd.
        let mut c = Cubic::new(716_800_000, 409_600_000, false);
        c.w_max = 100 * MSS;
        c.on_loss(&mut w, 80 * MSS);
        assert_eq!(c.w_max, 80 * MSS);
        // Linux's beta 717/1024: 100 segments -> 70.02 segments, 70019 bytes.
        let mut c = Cubic::new(717_000_000, 410_000_000, true);
        let mut w = win(100, 1000);
        c.on_loss(&mut w, 100 * MSS);
        assert_eq!(w.ssthresh, 70_019);
        // Never below 2 segments.
        let mut w = win(2, 1000);
        rfc().on_loss(&mut w, 2 * MSS);
        assert_eq!(w.ssthresh, 2 * MSS);
    }

    /// cwnd after congestion avoidance from a reduction at `w_max` segments, one ACK per segment
    /// per round trip of `rtt_ms`, until `until_s`.
    fn grow_after_loss(w_max: u64, rtt_ms: u64, until_s: u64) -> (Cubic, Window) {
        let mut c = rfc();
        let mut w = win(w_max, 1_000_000);
        c.on_loss(&mut w, w_max * MSS);
        w.cwnd = w.ssthresh;
        let est = rtt(rtt_ms);
        let mut now = SimTime::from_secs(10);
        let end = now + SimDuration::from_secs(until_s);
        while now < end {
            let n = w.cwnd / MSS;
            for i in 0..n {
                c.on_ack(&mut w, MSS, now + SimDuration::from_nanos(i * rtt_ms * 1_000_000 / n), &est);
            }
            now += SimDuration::from_millis(rtt_ms);
        }
        (c, w)
    }

    #[test]
    fn concave_growth_follows_the_cubic_and_plateaus_at_w_max() {
        // W_max 1000 segments, 100 ms: cwnd_epoch = 700, K = cbrt(300 / 0.4) = 9.0856 s. A round trip of
        // ACKs takes cwnd to the target W_cubic(t + RTT) set at its start, so at t cwnd is W_cubic(t):
        // W_cubic(5) = 0.4 (5 - 9.0856)^3 + 1000 = 972.7 (hand-computed). The Reno-friendly
        // W_est = 700 + 0.529 * 50 = 726 is far below.
        let (c, w) = grow_after_loss(1000, 100, 5);
        assert_eq!(c.k_us, 9_085_602);
        let seg = w.cwnd as f64 / MSS as f64;
        assert!((seg - 972.7).abs() < 1.0, "cwnd {seg} segments at 5 s");
        // Around K the window stays within a few segments of W_max (the plateau).
        let (_, w) = grow_after_loss(1000, 100, 9);
        let seg = w.cwnd as f64 / MSS as f64;
        assert!((seg - 1000.0).abs() < 1.0, "cwnd {seg} segments at K");
        // Past K, the convex region: W_cubic(12) = 0.4 * 2.9144^3 + 1000 = 1009.90.
        let (_, w) = grow_after_loss(1000, 100, 12);
        let seg = w.cwnd as f64 / MSS as f64;
        assert!((seg - 1009.9).abs() < 0.5, "cwnd {seg} segments at 12 s");
    }

    #[test]
    fn small_windows_grow_in_the_reno_friendly_region() {
        // W_max 20 segments, 10 ms: K = cbrt(6 / 0.4) = 2.466 s, so for the first second the cubic gives
        // ~14 + a few segments while W_est grows 0.529 segments per RTT: 100 RTTs -> 14 + 52.9, capped by
        // alpha = 1 once W_est >= cwnd_prior = 20: 14 + 6 / 0.529 = 11.3 RTTs to 20, then +1 per RTT:
        // 20 + (100 - 11.3) = 108.7 segments (hand-computed from RFC 9438 §4.3 eq. 4).
        let (_, w) = grow_after_loss(20, 10, 1);
        let seg = w.cwnd as f64 / MSS as f64;
        assert!((seg - 108.7).abs() < 2.0, "cwnd {seg} segments after 1 s");
    }

    #[test]
    fn timeout_sets_beta_ssthresh_one_segment_and_restarts_the_curve_at_k_zero() {
        let mut c = rfc();
        let mut w = win(100, 1000);
        c.on_rto(&mut w, 100 * MSS, true);
        assert_eq!((w.cwnd, w.ssthresh, c.w_max), (MSS, 70 * MSS, 0));
        // A repeated timeout holds ssthresh (RFC 5681 §3.1).
        w.cwnd = 10 * MSS;
        c.on_rto(&mut w, 10 * MSS, false);
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 70 * MSS));
        // The next congestion avoidance: K = 0, W_max = its first cwnd (RFC 9438 §4.8).
        w.cwnd = 70 * MSS;
        c.on_ack(&mut w, MSS, SimTime::from_secs(1), &rtt(100));
        assert_eq!((c.k_us, c.origin), (0, 70 * MSS));
    }

    #[test]
    fn idle_time_is_left_out_of_t() {
        // RFC 9438 §4.2 / Linux CA_EVENT_TX_START: t_epoch moves later by the idle time.
        let mut c = rfc();
        let mut w = win(70, 70);
        c.on_tx_start(SimTime::from_secs(5), SimTime::from_secs(4));
        assert_eq!(c.epoch(), None, "no congestion-avoidance stage, nothing to shift");
        c.on_ack(&mut w, MSS, SimTime::from_secs(1), &rtt(100));
        assert_eq!(c.epoch(), Some(SimTime::from_secs(1)));
        // Last data at 2 s, sending again at 5 s: 3 s idle, t_epoch 1 s -> 4 s.
        c.on_tx_start(SimTime::from_secs(5), SimTime::from_secs(2));
        assert_eq!(c.epoch(), Some(SimTime::from_secs(4)));
        // Never past now (Linux: epoch_start = now if after it).
        c.on_tx_start(SimTime::from_secs(6), SimTime::from_secs(1));
        assert_eq!(c.epoch(), Some(SimTime::from_secs(6)));
    }

    #[test]
    fn ecn_echo_reduces_as_a_loss_does() {
        let mut c = rfc();
        let mut w = win(100, 1000);
        assert!(!c.on_ecn_echo(&mut w, 100 * MSS));
        assert_eq!((w.cwnd, w.ssthresh, c.w_max), (70 * MSS, 70 * MSS, 100 * MSS));
    }
}
