//! A buffer shared by the egress queues of one router, with dynamic thresholds.
//!
//! Read first: A. K. Choudhury, E. L. Hahne, "Dynamic queue length thresholds for
//! shared-memory packet switches", IEEE/ACM Transactions on Networking 6(2), 1998
//! (CH98). A shared-memory switch keeps every port's queue in one memory; a queue may
//! grow only while it is shorter than a threshold proportional to the memory still free,
//! `T(t) = alpha (B - Q(t))`, so one busy port cannot take the whole buffer and the
//! share of each shrinks as more ports get busy. Commodity switch chips work this way
//! (the DCTCP paper's switches: 4 MB shared, up to about 700 KB to one busy port;
//! `docs/models/shared_buffer.md` derives the alpha that gives this).
//!
//! Here the buffer counts the bytes *waiting* in its queues: a packet being serialised
//! has left its queue (as every queue in ecnsim counts), and a packet passed straight
//! through an idle port never waits. The check comes before the queue's discipline, as
//! a switch's memory manager admits a packet before the egress queue sees it; a refused
//! packet is an overflow drop of that queue. The queue's own limit applies as well.

/// No shared buffer: the port's queue has only its own limit.
pub(crate) const NO_BUFFER: u32 = u32::MAX;

/// One shared buffer: its size, its threshold factor and the bytes its queues hold.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SharedBuffer {
    /// `B`, bytes.
    capacity: u64,
    /// CH98's `alpha`.
    alpha: f64,
    /// `Q(t)`: the bytes waiting in all the buffer's queues.
    used: u64,
    /// The most `used` has been since the last reset.
    max_used: u64,
    /// Arrivals refused by the threshold or for want of free space.
    refused: u64,
}

impl SharedBuffer {
    /// An empty buffer of `capacity` bytes with threshold factor `alpha` (> 0).
    #[must_use]
    pub fn new(capacity: u64, alpha: f64) -> Self {
        debug_assert!(alpha > 0.0 && alpha.is_finite());
        SharedBuffer { capacity, alpha, used: 0, max_used: 0, refused: 0 }
    }

    /// The dynamic threshold now, bytes: `alpha (B - Q(t))`.
    #[must_use]
    #[allow(clippy::cast_precision_loss)] // exact below 2^53 bytes; validation caps B at 10^12
    pub fn threshold(&self) -> f64 {
        // CH98 §2: T(t) = alpha (B - Q(t)).
        self.alpha * (self.capacity - self.used) as f64
    }

    /// True if an arrival of `size` bytes to a queue holding `queued` bytes may enter.
    #[must_use]
    #[allow(clippy::cast_precision_loss)] // exact below 2^53 bytes
    pub fn admits(&self, queued: u64, size: u32) -> bool {
        // CH98 §2: an arrival to queue i is refused while Q_i(t) >= T(t).
        (queued as f64) < self.threshold()
            // and, in any case, when the free memory cannot hold it.
            && self.used + u64::from(size) <= self.capacity
    }

    /// A queue of this buffer went from `before` to `after` bytes.
    #[inline]
    pub(crate) fn moved(&mut self, before: u64, after: u64) {
        self.used = self.used + after - before;
        debug_assert!(self.used <= self.capacity, "a shared buffer holds at most its size");
        self.max_used = self.max_used.max(self.used);
    }

    /// Count a refused arrival.
    pub(crate) fn refuse(&mut self) {
        self.refused += 1;
    }

    /// Restart the maximum from the current occupancy (at the end of warm-up).
    pub(crate) fn reset_max(&mut self) {
        self.max_used = self.used;
    }

    /// `B`, bytes.
    #[must_use]
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    /// The threshold factor.
    #[must_use]
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    /// Bytes waiting in the buffer's queues now.
    #[must_use]
    pub fn used(&self) -> u64 {
        self.used
    }
    /// The most bytes held at once since the last reset.
    #[must_use]
    pub fn max_used(&self) -> u64 {
        self.max_used
    }
    /// Arrivals refused since the start of the run.
    #[must_use]
    pub fn refused(&self) -> u64 {
        self.refused
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 150,000 bytes (a hundred 1500-byte packets), alpha = 1.
    fn buffer() -> SharedBuffer {
        SharedBuffer::new(150_000, 1.0)
    }

    // --- one queue ------------------------------------------------------------

    #[test]
    fn empty_buffer_threshold_is_alpha_times_all_of_it() {
        let b = SharedBuffer::new(4_000_000, 0.25);
        assert_eq!(b.threshold(), 1_000_000.0);
        assert!(b.admits(0, 1500));
        assert!(b.admits(999_999, 1500));
        // CH98: refused once the queue is at the threshold.
        assert!(!b.admits(1_000_000, 1500));
    }

    #[test]
    fn one_busy_queue_stops_at_alpha_over_one_plus_alpha() {
        // A lone queue fills while q < alpha (B - q): with alpha = 1 it stops at B / 2.
        let mut b = buffer();
        let mut q = 0;
        while b.admits(q, 1500) {
            b.moved(q, q + 1500);
            q += 1500;
        }
        // 50 packets: the 50th finds 73,500 < 1 x (150,000 - 73,500); the 51st finds
        // 75,000, not below 75,000. CH98: alpha B / (1 + alpha) = 75,000.
        assert_eq!(q, 75_000);
        assert_eq!(b.used(), 75_000);
        assert_eq!(b.threshold(), 75_000.0);
    }

    // --- two queues -------------------------------------------------------------

    #[test]
    fn second_queue_filling_shrinks_the_first_ones_limit() {
        let mut b = buffer();
        let (mut q1, mut q2) = (0, 0);
        while b.admits(q1, 1500) {
            b.moved(q1, q1 + 1500);
            q1 += 1500;
        }
        assert_eq!(q1, 75_000);
        // Queue 2 starts: the free buffer is 75,000, so it may take up to 37,500 bytes...
        while b.admits(q2, 1500) {
            b.moved(q2, q2 + 1500);
            q2 += 1500;
        }
        // ...it stops once q2 >= B - q1 - q2: 25 packets (37,500 >= 37,500).
        assert_eq!(q2, 37_500);
        // Queue 1 is now far above its threshold (37,500) and refused, though it was at its
        // limit with the buffer to itself: the limit shrank as the buffer filled.
        assert_eq!(b.threshold(), 37_500.0);
        assert!(!b.admits(q1, 1500));
        // Queue 1 drains to 49,500 (17 packets sent); the free buffer grows back and queue 2
        // fills while 2 q2 < 150,000 - 49,500: up to 51,000.
        while q1 > 50_000 {
            b.moved(q1, q1 - 1500);
            q1 -= 1500;
        }
        while b.admits(q2, 1500) {
            b.moved(q2, q2 + 1500);
            q2 += 1500;
        }
        assert_eq!((q1, q2), (49_500, 51_000));
        // Both are now refused: T = 150,000 - 100,500 = 49,500. CH98: S busy queues settle
        // within a packet of alpha B / (1 + S alpha) each, here 150,000 / 3 = 50,000.
        assert_eq!(b.threshold(), 49_500.0);
        assert!(!b.admits(q1, 1500));
        assert!(!b.admits(q2, 1500));
    }

    #[test]
    fn full_buffer_refuses_even_an_empty_queue() {
        // alpha large: the threshold never binds, the free space does.
        let mut b = SharedBuffer::new(3000, 1000.0);
        b.moved(0, 3000);
        assert!(!b.admits(0, 1));
        b.moved(3000, 1600);
        assert!(b.admits(0, 1400));
        assert!(!b.admits(0, 1401));
    }

    #[test]
    fn counters() {
        let mut b = buffer();
        b.moved(0, 3000);
        b.moved(3000, 1500);
        assert_eq!((b.used(), b.max_used()), (1500, 3000));
        b.reset_max();
        assert_eq!(b.max_used(), 1500);
        b.refuse();
        assert_eq!(b.refused(), 1);
        assert_eq!((b.capacity(), b.alpha()), (150_000, 1.0));
    }
}
