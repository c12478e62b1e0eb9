//! A fixed-size latency histogram (log-linear buckets, no allocation after
//! construction) for the driver's scheduling error.

/// Sub-buckets per power of two: quantiles are exact to within 1/16 (6 %).
const SUB: u64 = 16;
const SUB_BITS: u32 = 4;
/// Buckets: values below 16 get one each, then 16 per power of two up to 2^64.
const BUCKETS: usize = (SUB as usize) * (64 - SUB_BITS as usize + 1);

/// Counts of nanosecond values, with the exact maximum and sum.
#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Box<[u64]>,
    count: u64,
    sum: u128,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self { counts: vec![0; BUCKETS].into_boxed_slice(), count: 0, sum: 0, max: 0 }
    }
}

fn bucket_of(v: u64) -> usize {
    if v < SUB {
        return usize::try_from(v).expect("small");
    }
    let msb = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = msb - SUB_BITS;
    let sub = (v >> shift) & (SUB - 1);
    usize::try_from(u64::from(shift + 1) * SUB + sub).expect("fits")
}

/// The largest value that falls into bucket `b`.
fn bucket_upper(b: usize) -> u64 {
    let b = b as u64;
    if b < SUB {
        return b;
    }
    let shift = b / SUB - 1;
    let sub = b % SUB;
    let low = (SUB + sub) << shift;
    low + ((1u64 << shift) - 1)
}

impl Histogram {
    /// Count one value.
    pub fn record(&mut self, v: u64) {
        self.counts[bucket_of(v)] += 1;
        self.count += 1;
        self.sum += u128::from(v);
        self.max = self.max.max(v);
    }
    /// Values counted.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.count
    }
    /// The largest value (0 if none).
    #[must_use]
    pub fn max(&self) -> u64 {
        self.max
    }
    /// The mean (0 if none).
    #[must_use]
    #[allow(clippy::cast_precision_loss)]
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }
    /// The `q`-quantile (0 < q <= 1), as the upper end of its bucket (never above the maximum); 0 if empty.
    #[must_use]
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return bucket_upper(b).min(self.max);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotone_and_contain_their_values() {
        let mut last = 0;
        for v in (0..100_000u64).chain([1 << 40, u64::MAX]) {
            let b = bucket_of(v);
            assert!(b >= last || v >= 100_000);
            assert!(v <= bucket_upper(b), "{v} in bucket {b} up to {}", bucket_upper(b));
            if b > 0 {
                assert!(v > bucket_upper(b - 1), "{v}");
            }
            last = b;
        }
    }

    #[test]
    fn quantiles_are_within_a_sixteenth() {
        let mut h = Histogram::default();
        for v in 1..=10_000u64 {
            h.record(v * 1000);
        }
        let p50 = h.quantile(0.5) as f64;
        let p99 = h.quantile(0.99) as f64;
        assert!((p50 / 5_000_000.0 - 1.0).abs() < 1.0 / 16.0, "{p50}");
        assert!((p99 / 9_900_000.0 - 1.0).abs() < 1.0 / 16.0, "{p99}");
        assert_eq!(h.max(), 10_000_000);
        assert_eq!(h.quantile(1.0), 10_000_000);
        assert_eq!(h.count(), 10_000);
        assert!((h.mean() - 5_000_500.0).abs() < 1e-6);
        assert_eq!(Histogram::default().quantile(0.5), 0);
    }
}
