//! The receiver's out-of-order data (RFC 793 §3.9: segments beyond RCV.NXT are held until the
//! gap before them fills; RFC 2018 §4 reports them as SACK blocks).
//!
//! Held as sorted, disjoint, non-adjacent `[start, end)` ranges in a ring buffer: a
//! retransmission that fills the first gap removes ranges from the front, which a `Vec` would
//! pay for by moving every range behind them (under heavy loss the list holds hundreds).

use std::collections::VecDeque;

/// Out-of-order data held by a receiver.
///
/// Out of line and allocated at the first out-of-order arrival; the number of ranges and the
/// end of the highest are kept beside the pointer (24 bytes, the `Vec` this replaced), so that
/// a segment in order reads no heap to find that nothing is held.
#[derive(Clone, Debug, Default)]
pub(crate) struct OooQueue {
    /// The ranges, sorted by start (none until the first out-of-order arrival). Boxed: a
    /// `VecDeque` in place is 32 bytes, 8 more than the socket's line has for this field.
    #[allow(clippy::box_collection)]
    ranges: Option<Box<VecDeque<(u64, u64)>>>,
    /// One past the highest octet held (0 if none): the ranges' ends increase, so this is the
    /// last one's.
    end: u64,
    /// How many ranges are held (`ranges`' length).
    len: u32,
}

impl OooQueue {
    /// True if no out-of-order data is held.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The ranges held (empty before the first out-of-order arrival).
    fn ranges(&self) -> Option<&VecDeque<(u64, u64)>> {
        self.ranges.as_deref().filter(|q| !q.is_empty())
    }

    /// Record the queue's length and highest end after a change.
    fn sync(&mut self) {
        let q = self.ranges.as_deref();
        let len = q.map_or(0, VecDeque::len);
        self.len = u32::try_from(len).expect("fewer than 2^32 out-of-order ranges");
        self.end = q.and_then(VecDeque::back).map_or(0, |&(_, e)| e);
    }

    /// Add `[start, end)`, merged with every range it overlaps or touches.
    pub(crate) fn insert(&mut self, start: u64, end: u64) {
        let q = self.ranges.get_or_insert_with(Box::default);
        // Most arrivals out of order extend the highest range or start a new one above it: the
        // binary search's answer (and the merge's) for a range starting at or after the highest
        // one's start, found at the back.
        if let Some(last) = q.back_mut() {
            if start >= last.0 {
                if start > last.1 {
                    q.push_back((start, end));
                    self.len += 1;
                    self.end = end;
                } else {
                    last.1 = last.1.max(end);
                    self.end = last.1;
                }
                return;
            }
        }
        let i = q.partition_point(|&(_, e)| e < start);
        let (mut s, mut e) = (start, end);
        let mut j = i;
        while j < q.len() && q[j].0 <= e {
            s = s.min(q[j].0);
            e = e.max(q[j].1);
            j += 1;
        }
        if i == j {
            q.insert(i, (s, e));
        } else {
            q[i] = (s, e);
            if j > i + 1 {
                q.drain(i + 1..j);
            }
        }
        self.sync();
    }

    /// RCV.NXT advanced to `rcv_nxt`: remove the ranges that start at or before it and return
    /// where in-order data now ends (`rcv_nxt`, or the end of the last range removed).
    #[inline]
    pub(crate) fn pull(&mut self, rcv_nxt: u64) -> u64 {
        if self.len == 0 {
            return rcv_nxt;
        }
        let Some(q) = self.ranges.as_deref_mut() else { return rcv_nxt };
        // Usually no range or only the first one is now contiguous: the binary search's answer,
        // read at the front.
        let merged = match (q.front(), q.get(1)) {
            (Some(&(s0, _)), _) if s0 > rcv_nxt => 0,
            (Some(_), None) => 1,
            (Some(_), Some(&(s1, _))) if s1 > rcv_nxt => 1,
            _ => q.partition_point(|&(s, _)| s <= rcv_nxt),
        };
        if merged == 0 {
            return rcv_nxt;
        }
        let next = rcv_nxt.max(q[merged - 1].1);
        if merged == 1 {
            q.pop_front();
        } else {
            q.drain(..merged);
        }
        self.sync();
        next
    }

    /// Bytes of `[start, end)` already held.
    pub(crate) fn held_within(&self, start: u64, end: u64) -> u64 {
        // The ranges' ends increase: nothing is held at or above the highest one's end; and if the
        // first one ends after `start`, the search below would find it.
        if self.end <= start {
            return 0;
        }
        let Some(q) = self.ranges() else { return 0 };
        let first =
            if q.front().is_some_and(|&(_, e)| e > start) { 0 } else { q.partition_point(|&(_, e)| e <= start) };
        q.range(first..).take_while(|&&(s, _)| s < end).map(|&(s, e)| e.min(end) - s.max(start)).sum()
    }

    /// The range holding octet `seq`, if one does.
    pub(crate) fn containing(&self, seq: u64) -> Option<(u64, u64)> {
        let q = self.ranges()?;
        // The most recent arrival is usually in the highest range: the only one that can hold an
        // octet at or above its start.
        if let Some(&(s, e)) = q.back() {
            if seq >= s {
                return (seq < e).then_some((s, e));
            }
        }
        // Sorted and disjoint: the first range ending after `seq` is the only one that can hold it.
        let i = q.partition_point(|&(_, e)| e <= seq);
        q.get(i).copied().filter(|&(s, _)| s <= seq)
    }

    /// The ranges, highest first.
    pub(crate) fn iter_rev(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.ranges().into_iter().flat_map(|q| q.iter().rev().copied())
    }

    /// The ranges held, lowest first (tests).
    #[cfg(test)]
    pub(crate) fn to_vec(&self) -> Vec<(u64, u64)> {
        self.ranges().map_or_else(Vec::new, |q| q.iter().copied().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: a sorted `Vec`, merged and drained as the receiver did before.
    fn reference_insert(v: &mut Vec<(u64, u64)>, start: u64, end: u64) {
        crate::tcp::socket::merge_range(v, start, end);
    }

    #[test]
    fn merges_and_pulls_as_a_sorted_vec_does() {
        let mut rng = crate::rng::SimRng::for_component(7, "ooo");
        for _ in 0..200 {
            let mut q = OooQueue::default();
            let mut v: Vec<(u64, u64)> = Vec::new();
            let mut rcv_nxt = 1_u64;
            for _ in 0..60 {
                let start = rcv_nxt + rng.below(40) * 10 + 10;
                let end = start + (1 + rng.below(3)) * 10;
                q.insert(start, end);
                reference_insert(&mut v, start, end);
                assert_eq!(q.to_vec(), v);
                assert_eq!(q.is_empty(), v.is_empty());
                assert_eq!(q.end, v.last().map_or(0, |r| r.1));
                let probe = rcv_nxt + rng.below(450);
                let want = v.iter().find(|&&(s, e)| s <= probe && probe < e).copied();
                assert_eq!(q.containing(probe), want);
                let (a, b) = (probe, probe + rng.below(100));
                let held: u64 = v.iter().map(|&(s, e)| e.min(b).saturating_sub(s.max(a))).sum();
                assert_eq!(q.held_within(a, b), held);
                if rng.below(4) == 0 {
                    // A retransmission fills the first gap.
                    rcv_nxt = v[0].0;
                    let merged = v.partition_point(|&(s, _)| s <= rcv_nxt);
                    let want = rcv_nxt.max(v[merged - 1].1);
                    v.drain(..merged);
                    rcv_nxt = q.pull(rcv_nxt);
                    assert_eq!(rcv_nxt, want);
                    assert_eq!(q.to_vec(), v);
                    assert_eq!(q.end, v.last().map_or(0, |r| r.1));
                }
            }
            let rev: Vec<_> = q.iter_rev().collect();
            assert_eq!(rev, v.iter().rev().copied().collect::<Vec<_>>());
        }
    }

    #[test]
    fn nothing_held_reads_no_heap_and_pulls_nothing() {
        let mut q = OooQueue::default();
        assert!(q.is_empty());
        assert_eq!(q.pull(100), 100);
        assert_eq!(q.held_within(0, 1000), 0);
        assert_eq!(q.containing(5), None);
        assert!(q.ranges.is_none(), "no allocation before the first out-of-order arrival");
        // The size of the `Vec` it replaced in the socket's line 1.
        assert_eq!(std::mem::size_of::<OooQueue>(), 24);
    }
}
