//! Simulated time, rates and sizes as integer newtypes.
//!
//! Guarantees:
//! - Time is a `u64` count of nanoseconds since the start of the run
//!   (about 584 years of range). There is no floating-point time inside
//!   the core; floats appear only at the scenario boundary ([`crate::spec`]),
//!   converted by [`SimDuration::from_secs_f64`].
//! - Time arithmetic never wraps. `SimTime + SimDuration` saturates at
//!   [`SimTime::MAX`], which means "never": an instant that far out is past
//!   the end of every run, so an event there is simply never run (a think
//!   time of 1e12 s, a heavy-tailed draw of 1e30 s). Differences saturate at
//!   zero. Checked arithmetic is in the operators themselves, so no call site
//!   can forget it.
//! - Serialisation time is defined in one place,
//!   [`BitRate::tx_time`], in exact integer arithmetic rounded *up*
//!   to the next nanosecond, so a link never sends faster than its rate.
//!   A port computes the same value with one multiplication where its rate
//!   allows (`TxRate`; tested against it).

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant of simulated time, in nanoseconds since the run started.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimTime(u64);

/// A span of simulated time, in nanoseconds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimDuration(u64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);
    /// The largest representable instant; used as "never".
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// The instant `nanos` nanoseconds after the start.
    #[must_use]
    pub const fn from_nanos(nanos: u64) -> Self {
        SimTime(nanos)
    }
    /// The instant `secs` seconds after the start.
    #[must_use]
    pub const fn from_secs(secs: u64) -> Self {
        SimTime(secs.saturating_mul(1_000_000_000))
    }
    /// The instant `ms` milliseconds after the start.
    #[must_use]
    pub const fn from_millis(ms: u64) -> Self {
        SimTime(ms.saturating_mul(1_000_000))
    }
    /// Nanoseconds since the start.
    #[must_use]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds since the start, as a float (for reporting only).
    #[must_use]
    #[allow(clippy::cast_precision_loss)]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// Time elapsed since `earlier`; zero if `earlier` is later.
    #[must_use]
    pub const fn saturating_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
    /// `self + d`, saturating at [`SimTime::MAX`].
    #[must_use]
    pub const fn saturating_add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}

impl SimDuration {
    /// No time at all.
    pub const ZERO: SimDuration = SimDuration(0);
    /// The largest representable span.
    pub const MAX: SimDuration = SimDuration(u64::MAX);

    /// `nanos` nanoseconds.
    #[must_use]
    pub const fn from_nanos(nanos: u64) -> Self {
        SimDuration(nanos)
    }
    /// `us` microseconds.
    #[must_use]
    pub const fn from_micros(us: u64) -> Self {
        SimDuration(us.saturating_mul(1_000))
    }
    /// `ms` milliseconds.
    #[must_use]
    pub const fn from_millis(ms: u64) -> Self {
        SimDuration(ms.saturating_mul(1_000_000))
    }
    /// `secs` seconds.
    #[must_use]
    pub const fn from_secs(secs: u64) -> Self {
        SimDuration(secs.saturating_mul(1_000_000_000))
    }
    /// The one checked float-to-time conversion: `secs` seconds rounded to
    /// the nearest nanosecond. `None` if negative, not finite or too large.
    #[must_use]
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    pub fn from_secs_f64(secs: f64) -> Option<Self> {
        let ns = (secs * 1e9).round();
        if !ns.is_finite() || !(0.0..1.8e19).contains(&ns) {
            return None;
        }
        Some(SimDuration(ns as u64))
    }
    /// `secs` seconds (a random draw), rounded to the nearest nanosecond;
    /// saturating at [`SimDuration::MAX`] for huge or infinite values, zero
    /// for negative values and NaN. For model draws, where "longer than any
    /// run" is a legitimate value (a Pareto think time of 1e30 s).
    #[must_use]
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    pub fn from_secs_f64_saturating(secs: f64) -> Self {
        // `as` saturates float-to-integer casts (NaN becomes 0).
        SimDuration((secs.max(0.0) * 1e9).round() as u64)
    }
    /// Nanoseconds.
    #[must_use]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds as a float (for reporting and for RFC formulas that are
    /// defined on reals; never fed back into time without rounding).
    #[must_use]
    #[allow(clippy::cast_precision_loss)]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// `self * k`, saturating.
    #[must_use]
    pub const fn saturating_mul(self, k: u64) -> SimDuration {
        SimDuration(self.0.saturating_mul(k))
    }
    /// The larger of two spans.
    #[must_use]
    pub fn max(self, other: SimDuration) -> SimDuration {
        SimDuration(self.0.max(other.0))
    }
    /// The smaller of two spans.
    #[must_use]
    pub fn min(self, other: SimDuration) -> SimDuration {
        SimDuration(self.0.min(other.0))
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    /// Saturates at [`SimTime::MAX`] ("never").
    fn add(self, d: SimDuration) -> SimTime {
        self.saturating_add(d)
    }
}
impl AddAssign<SimDuration> for SimTime {
    /// Saturates at [`SimTime::MAX`] ("never").
    fn add_assign(&mut self, d: SimDuration) {
        *self = self.saturating_add(d);
    }
}
impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    /// Zero if `rhs` is later than `self` (a debug build asserts that it is not).
    fn sub(self, rhs: SimTime) -> SimDuration {
        debug_assert!(rhs <= self, "time went backwards: {self:?} - {rhs:?}");
        self.saturating_since(rhs)
    }
}
impl Add for SimDuration {
    type Output = SimDuration;
    /// Saturates at [`SimDuration::MAX`].
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(d.0))
    }
}
impl Sub for SimDuration {
    type Output = SimDuration;
    /// Zero if `d` is longer than `self` (a debug build asserts that it is not).
    fn sub(self, d: SimDuration) -> SimDuration {
        debug_assert!(d <= self, "negative duration: {self:?} - {d:?}");
        SimDuration(self.0.saturating_sub(d.0))
    }
}

impl fmt::Debug for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:09}s", self.0 / 1_000_000_000, self.0 % 1_000_000_000)
    }
}
impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
impl fmt::Debug for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:09}s", self.0 / 1_000_000_000, self.0 % 1_000_000_000)
    }
}
impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A link rate in bits per second.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct BitRate(u64);

impl BitRate {
    /// `bps` bits per second. Must be positive (checked by the scenario
    /// validator; the constructor itself accepts any value).
    #[must_use]
    pub const fn from_bps(bps: u64) -> Self {
        BitRate(bps)
    }
    /// Bits per second.
    #[must_use]
    pub const fn as_bps(self) -> u64 {
        self.0
    }

    /// Serialisation time of `bytes` bytes: `ceil(bytes * 8 * 1e9 / rate)`
    /// nanoseconds, computed exactly in 128-bit integers. This defines every transmission
    /// time in the simulator (a port computes the same value by `TxRate`).
    #[must_use]
    #[allow(clippy::cast_possible_truncation)]
    pub const fn tx_time(self, bytes: u32) -> SimDuration {
        // Packets up to 2 GB: `bytes * 8e9` fits in 64 bits, and the 64-bit division
        // gives the same quotient as the 128-bit one (a few instructions instead of a call).
        if bytes <= Self::BYTES_FOR_64_BIT_TX {
            let bits_ns = bytes as u64 * 8 * 1_000_000_000;
            return SimDuration(bits_ns.div_ceil(self.0));
        }
        let bits_ns = bytes as u128 * 8 * 1_000_000_000;
        let rate = self.0 as u128;
        SimDuration(bits_ns.div_ceil(rate) as u64)
    }

    /// The largest packet whose `bytes * 8 * 1e9` fits in a `u64`.
    const BYTES_FOR_64_BIT_TX: u32 = (u64::MAX / 8_000_000_000) as u32;

    /// Bytes that can be sent in `d` at this rate (rounded down); used by
    /// the AQMs that convert an idle period into a packet count.
    #[must_use]
    #[allow(clippy::cast_possible_truncation)]
    pub const fn bytes_in(self, d: SimDuration) -> u64 {
        (d.0 as u128 * self.0 as u128 / 8_000_000_000) as u64
    }
}

/// A link rate prepared for serialisation times without a division per packet: where
/// the rate divides 8e9 bit-ns per byte (10 Mb/s, 100 Mb/s, 1 Gb/s, every `2^a 5^b` bit/s
/// with `a <= 12`, `b <= 9`), a byte takes a whole number of nanoseconds and
/// [`BitRate::tx_time`] is one multiplication, exactly: `ceil(bytes * 8e9 / d) =
/// bytes * (8e9 / d)`. Other rates (10 Gb/s, 1.5 Mb/s) keep the division.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TxRate {
    /// `8e9 / d` when that is a whole number below 2^32 (every such rate but 1 bit/s; so
    /// `u32::MAX` bytes times it fits in 64 bits); 0 otherwise. 32 bits, since it sits in
    /// the port's line that every packet reads.
    ns_per_byte: u32,
}

impl TxRate {
    /// `rate`, prepared.
    #[must_use]
    pub(crate) const fn new(rate: BitRate) -> Self {
        let d = rate.0;
        let exact = d != 0 && 8_000_000_000 % d == 0 && 8_000_000_000 / d <= u32::MAX as u64;
        #[allow(clippy::cast_possible_truncation)] // checked just above
        TxRate { ns_per_byte: if exact { (8_000_000_000 / d) as u32 } else { 0 } }
    }

    /// [`BitRate::tx_time`] of `bytes` bytes, or `None` where the caller must divide.
    #[inline(always)]
    #[must_use]
    pub(crate) const fn tx_time(self, bytes: u32) -> Option<SimDuration> {
        self.tx_time_of_bytes(bytes as u64)
    }

    /// The serialisation time of `bytes` bytes sent as packets of any sizes (the sum of their
    /// [`TxRate::tx_time`]s, exact since each is a whole number of ns per byte), or `None`
    /// where each packet's time is rounded apart. `bytes` is at most what a link sent in the
    /// run, so the product is at most the run's length in ns.
    #[inline(always)]
    #[must_use]
    pub(crate) const fn tx_time_of_bytes(self, bytes: u64) -> Option<SimDuration> {
        if self.ns_per_byte == 0 {
            return None;
        }
        Some(SimDuration(bytes * self.ns_per_byte as u64))
    }
}

/// Nanoseconds as seconds for a result column: `ns / 1e9`, one correctly rounded
/// division (not `ns * 1e-9`, which rounds twice), so 300 ms reads back as
/// exactly the float `0.3` and `df.loc[0.3]` finds it.
#[allow(clippy::cast_precision_loss)]
pub(crate) fn ns_to_secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_is_exact_for_round_numbers() {
        // 1500 B at 100 Mb/s = 12000 bit / 1e8 bit/s = 120 us.
        assert_eq!(BitRate::from_bps(100_000_000).tx_time(1500), SimDuration::from_micros(120));
        // 1500 B at 1.5 Mb/s = 8 ms.
        assert_eq!(BitRate::from_bps(1_500_000).tx_time(1500), SimDuration::from_millis(8));
        // 40 B at 10 Gb/s = 32 ns.
        assert_eq!(BitRate::from_bps(10_000_000_000).tx_time(40), SimDuration::from_nanos(32));
    }

    #[test]
    fn tx_time_rounds_up() {
        // 1 B at 3 bit/s = 8/3 s = 2.666..s -> rounds up to ...667 ns.
        assert_eq!(BitRate::from_bps(3).tx_time(1).as_nanos(), 2_666_666_667);
        // 1000 B at 1.544 Mb/s (T1): 8e12 / 1.544e6 = 5181347.15.. -> 5181348 ns.
        assert_eq!(BitRate::from_bps(1_544_000).tx_time(1000).as_nanos(), 5_181_348);
    }

    #[test]
    fn tx_time_has_no_overflow_at_extremes() {
        // 64 KiB at 1 bit/s: 524288 s, fits comfortably.
        assert_eq!(BitRate::from_bps(1).tx_time(65536).as_nanos(), 65536 * 8 * 1_000_000_000);
        assert_eq!(BitRate::from_bps(u64::MAX).tx_time(1500).as_nanos(), 1);
    }

    #[test]
    fn tx_time_is_the_same_on_both_sides_of_the_64_bit_bound() {
        let wide = |r: BitRate, bytes: u32| (u128::from(bytes) * 8_000_000_000).div_ceil(u128::from(r.0)) as u64;
        for rate in [1, 3, 1_544_000, 10_000_000, 100_000_000, 999_999_937, 10_000_000_000, u64::MAX] {
            let r = BitRate::from_bps(rate);
            let edge = BitRate::BYTES_FOR_64_BIT_TX;
            for bytes in [0, 1, 40, 1500, 65_535, edge - 1, edge, edge + 1, u32::MAX] {
                assert_eq!(r.tx_time(bytes).as_nanos(), wide(r, bytes), "{rate} bit/s, {bytes} B");
            }
        }
    }

    /// Every rate that divides 8e9 (`2^a 5^b`), their neighbours, the usual link rates and
    /// the extremes: the per-byte time is exact where it is used, and used where it exists.
    #[test]
    fn tx_rate_is_exactly_tx_time() {
        let mut rates = vec![1, 3, 1_544_000, 45_000_000, 155_520_000, 10_000_000_000, u64::MAX];
        for a in 0..=12 {
            for b in 0..=9 {
                let d = (1u64 << a) * 5u64.pow(b);
                rates.extend([d - 1, d, d + 1]);
            }
        }
        rates.sort_unstable();
        rates.dedup();
        let edge = BitRate::BYTES_FOR_64_BIT_TX;
        let sizes = [0, 1, 40, 52, 1000, 1040, 1500, 9000, 65_535, 1 << 20, edge, edge + 1, u32::MAX];
        let mut exact = 0;
        for d in rates.into_iter().filter(|&d| d > 0) {
            let rate = BitRate::from_bps(d);
            let r = TxRate::new(rate);
            assert_eq!(r.tx_time(0).is_some(), d > 1 && 8_000_000_000 % d == 0, "{d} bit/s");
            exact += usize::from(r.tx_time(0).is_some());
            for bytes in sizes {
                if let Some(t) = r.tx_time(bytes) {
                    assert_eq!(t, rate.tx_time(bytes), "{bytes} B at {d} bit/s");
                }
            }
        }
        // 13 x 10 divisors of 8e9, less 1 bit/s.
        assert_eq!(exact, 129);
    }

    proptest::proptest! {
        /// Any rate, any size: the serialisation time of [`BitRate::tx_time`] where it gives one.
        #[test]
        fn tx_rate_gives_tx_time(a in 0..=12u32, b in 0..=9u32, d: u64, bytes: u32, mtu in 0..70_000u32) {
            for d in [(1u64 << a) * 5u64.pow(b), d.max(1)] {
                let rate = BitRate::from_bps(d);
                for bytes in [bytes, mtu] {
                    if let Some(t) = TxRate::new(rate).tx_time(bytes) {
                        proptest::prop_assert_eq!(t, rate.tx_time(bytes));
                    }
                }
            }
        }
    }

    #[test]
    fn bytes_in_inverts_tx_time() {
        let r = BitRate::from_bps(10_000_000);
        assert_eq!(r.bytes_in(r.tx_time(1500)), 1500);
        assert_eq!(r.bytes_in(SimDuration::from_secs(1)), 1_250_000);
    }

    #[test]
    fn time_addition_saturates_at_never_instead_of_wrapping() {
        let late = SimTime::from_nanos(u64::MAX - 5);
        assert_eq!(late + SimDuration::from_nanos(10), SimTime::MAX);
        assert_eq!(SimTime::from_secs(1) + SimDuration::MAX, SimTime::MAX);
        let mut t = SimTime::from_secs(3);
        t += SimDuration::MAX;
        assert_eq!(t, SimTime::MAX);
        assert_eq!(SimDuration::MAX + SimDuration::from_nanos(1), SimDuration::MAX);
        assert_eq!(SimTime::from_secs(u64::MAX), SimTime::MAX);
        assert_eq!(SimDuration::from_millis(u64::MAX), SimDuration::MAX);
        // Ordinary values are exact.
        assert_eq!(SimTime::from_secs(1) + SimDuration::from_millis(5), SimTime::from_nanos(1_005_000_000));
    }

    #[test]
    fn saturating_float_conversion_of_draws() {
        assert_eq!(SimDuration::from_secs_f64_saturating(1e12), SimDuration::MAX);
        assert_eq!(SimDuration::from_secs_f64_saturating(f64::INFINITY), SimDuration::MAX);
        assert_eq!(SimDuration::from_secs_f64_saturating(1e300), SimDuration::MAX);
        assert_eq!(SimDuration::from_secs_f64_saturating(-3.0), SimDuration::ZERO);
        assert_eq!(SimDuration::from_secs_f64_saturating(f64::NAN), SimDuration::ZERO);
        assert_eq!(SimDuration::from_secs_f64_saturating(0.25), SimDuration::from_millis(250));
    }

    #[test]
    fn float_conversion_is_checked() {
        assert_eq!(SimDuration::from_secs_f64(0.001), Some(SimDuration::from_millis(1)));
        assert_eq!(SimDuration::from_secs_f64(-1.0), None);
        assert_eq!(SimDuration::from_secs_f64(f64::NAN), None);
        assert_eq!(SimDuration::from_secs_f64(1e30), None);
    }
}
