//! Far link events, kept in buckets by due time until their bucket comes due.
//!
//! A link event due [`FAR_NS`] or more after the instant it is scheduled (a data
//! segment's `TxDone` on a slow access link, its arrival after a long propagation
//! delay, an ACK's arrival back at its sender) is appended to the bucket of its due
//! time, 2^[`BUCKET_SHIFT`] ns wide, in a ring of [`RING`] buckets. Before the scheduler pops
//! an event due at `t`, every bucket that starts at or before `t` is moved into the
//! link events' heap ([`FarLinks::release`]); the events of later buckets are all due
//! after `t`. So the heap pops in exactly the `(time, seq)` order it would if every
//! event had been pushed into it, and the far events no longer sink through, and are
//! popped from, a heap of a thousand link events at 9,600 flows (docs/performance.md,
//! "Issue 35 item 6: far link events in buckets").
//!
//! An event that does not fit the ring (due past its end, or, after the ring was
//! re-based, before its start) goes to the heap as before: the buckets are an
//! optimisation the order never depends on.

use super::heap::{Entry, HeapQueue, NO_KEY};

/// A link event due this far ahead of the instant it is scheduled waits in a bucket
/// (2^23 ns, 8.4 ms: the bottleneck's own events, within 1 ms, stay in the heap).
pub(super) const FAR_NS: u64 = 1 << FAR_SHIFT;
const FAR_SHIFT: u32 = 23;
/// Each bucket holds the events due in one interval of 2^20 ns (1.05 ms).
pub(super) const BUCKET_SHIFT: u32 = 20;
/// Buckets in the ring: 1,024 of 1.05 ms, 1.07 s ahead of the first.
const RING: u64 = 1 << 10;
/// The bucket an instant falls in.
#[inline]
const fn bucket_of(ns: u64) -> u64 {
    ns >> BUCKET_SHIFT
}
/// Where bucket `b` sits in the ring.
#[inline]
#[allow(clippy::cast_possible_truncation)]
const fn slot(b: u64) -> usize {
    (b % RING) as usize
}
/// The time of a packed key.
#[inline]
#[allow(clippy::cast_possible_truncation)]
const fn time_of(key: u128) -> u64 {
    (key >> 64) as u64
}

/// The ring of buckets of far link events.
#[derive(Debug)]
pub(super) struct FarLinks {
    /// Bucket `b` is `buckets[b % RING]`; buckets `base` to `base + RING - 1` are in use.
    buckets: Box<[Vec<Entry>]>,
    /// The first bucket not yet moved into the heap.
    base: u64,
    /// Events in the buckets.
    count: usize,
    /// The packed key `(start of bucket base, 0)` while any event waits here, else
    /// [`NO_KEY`]: an event with a key at or past it may be due after a far one.
    pub(super) due: u128,
}

impl Default for FarLinks {
    fn default() -> Self {
        FarLinks { buckets: vec![Vec::new(); RING as usize].into_boxed_slice(), base: 0, count: 0, due: NO_KEY }
    }
}

impl FarLinks {
    /// Keep `entry`, due at `time` (at least [`FAR_NS`] after `now`), if its bucket is in
    /// the ring; false if it is not (the caller pushes it into the heap).
    #[inline]
    pub(super) fn try_push(&mut self, now: u64, time: u64, entry: Entry) -> bool {
        let b = bucket_of(time);
        if self.count == 0 {
            // Every bucket is empty: start the ring at the first bucket a far event can fall
            // in from now on (`time >= now + FAR_NS`), so that the ones that follow fit.
            self.base = bucket_of(now + FAR_NS);
        }
        if b.wrapping_sub(self.base) >= RING {
            return false;
        }
        self.buckets[slot(b)].push(entry);
        if self.count == 0 {
            self.due = u128::from(self.base << BUCKET_SHIFT) << 64;
        }
        self.count += 1;
        true
    }

    /// Move into `heap` every bucket that starts at or before the time of `first` (the
    /// smaller of the two heaps' top keys; [`NO_KEY`] if both are empty, which moves the
    /// first bucket that holds anything), so that no event left here is due before the
    /// heaps' next one.
    #[inline(never)]
    pub(super) fn release(&mut self, first: u128, heap: &mut HeapQueue) {
        let mut t = time_of(first);
        while self.count > 0 && self.base << BUCKET_SHIFT <= t {
            let bucket = &mut self.buckets[slot(self.base)];
            if !bucket.is_empty() {
                self.count -= bucket.len();
                for e in bucket.drain(..) {
                    heap.push_entry(e);
                }
                t = t.min(time_of(heap.top_key()));
            }
            self.base += 1;
        }
        self.due = if self.count > 0 { u128::from(self.base << BUCKET_SHIFT) << 64 } else { NO_KEY };
    }

    /// The smallest key waiting here ([`NO_KEY`] if none): a scan of the first bucket that
    /// holds anything (not on the per-packet path).
    pub(super) fn min_key(&self) -> u128 {
        if self.count == 0 {
            return NO_KEY;
        }
        (self.base..self.base + RING).find_map(|b| self.buckets[slot(b)].iter().map(|e| e.key).min()).unwrap_or(NO_KEY)
    }

    /// Events waiting here.
    pub(super) fn len(&self) -> usize {
        self.count
    }
}
