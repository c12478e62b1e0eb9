//! The default event queue: a 4-ary min-heap on `(time, seq)`.
//!
//! Four children per node halve the depth of a binary heap, so a `pop`
//! (the operation every event pays) moves an entry through half as many
//! levels, and the four children of a node share two cache lines. Entries
//! move into a hole instead of being swapped, and a key compares as one
//! 128-bit integer (`time` above `seq`). Keys are unique (`seq` is), so
//! the order is total and any correct priority queue pops the same sequence:
//! the unit tests check it against a sorted reference.

use super::{Event, EventKey, EventQueue};

/// Children per node.
const ARITY: usize = 4;

#[derive(Clone, Copy, Debug)]
struct Entry {
    /// `time << 64 | seq`: the order of [`EventKey`] as one integer.
    rank: u128,
    event: Event,
}

impl Entry {
    fn new(key: EventKey, event: Event) -> Self {
        Entry { rank: (u128::from(key.time.as_nanos()) << 64) | u128::from(key.seq), event }
    }
    #[allow(clippy::cast_possible_truncation)]
    fn key(&self) -> EventKey {
        EventKey { time: crate::time::SimTime::from_nanos((self.rank >> 64) as u64), seq: self.rank as u64 }
    }
}

/// 4-ary min-heap event queue.
#[derive(Debug, Default)]
pub struct HeapQueue {
    heap: Vec<Entry>,
}

impl HeapQueue {
    /// Move `e` up from the hole at `i` to its place.
    fn sift_up(&mut self, mut i: usize, e: Entry) {
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].rank <= e.rank {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = e;
    }

    /// Move `e` down from the hole at `i` to its place.
    fn sift_down(&mut self, mut i: usize, e: Entry) {
        let n = self.heap.len();
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let last = (first + ARITY).min(n);
            let mut best = first;
            let mut best_rank = self.heap[first].rank;
            for c in first + 1..last {
                let r = self.heap[c].rank;
                if r < best_rank {
                    best = c;
                    best_rank = r;
                }
            }
            if e.rank <= best_rank {
                break;
            }
            self.heap[i] = self.heap[best];
            i = best;
        }
        self.heap[i] = e;
    }
}

impl EventQueue for HeapQueue {
    fn push(&mut self, key: EventKey, event: Event) {
        let e = Entry::new(key, event);
        self.heap.push(e);
        let i = self.heap.len() - 1;
        self.sift_up(i, e);
    }
    fn pop(&mut self) -> Option<(EventKey, Event)> {
        let last = self.heap.pop()?;
        let top = if self.heap.is_empty() {
            last
        } else {
            let top = self.heap[0];
            self.sift_down(0, last);
            top
        };
        Some((top.key(), top.event))
    }
    fn peek_key(&self) -> Option<EventKey> {
        self.heap.first().map(Entry::key)
    }
    fn len(&self) -> usize {
        self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::PortId;
    use crate::rng::SimRng;
    use crate::time::SimTime;

    /// Random pushes and pops, interleaved as a simulation does them (times never
    /// before the last pop), against a sorted reference: the same sequence, always.
    #[test]
    fn pops_in_exact_key_order_against_a_sorted_reference() {
        let mut rng = SimRng::for_component(7, "heap-test");
        for round in 0..20 {
            let mut q = HeapQueue::default();
            let mut reference: Vec<(EventKey, Event)> = Vec::new();
            let (mut now, mut seq) = (0u64, 0u64);
            for _ in 0..3000 {
                if rng.below(3) < 2 || reference.is_empty() {
                    // Many ties: times on a coarse grid so that seq decides often.
                    let time = SimTime::from_nanos(now + rng.below(if round % 2 == 0 { 8 } else { 1_000_000 }));
                    let key = EventKey { time, seq };
                    let ev = Event::TxDone(PortId(u32::try_from(seq % 1000).unwrap()));
                    seq += 1;
                    q.push(key, ev);
                    reference.push((key, ev));
                    reference.sort_by_key(|&(k, _)| std::cmp::Reverse(k));
                } else {
                    let want = reference.pop();
                    assert_eq!(q.peek_key(), want.map(|(k, _)| k));
                    let got = q.pop();
                    assert_eq!(got, want);
                    now = got.unwrap().0.time.as_nanos();
                }
                assert_eq!(q.len(), reference.len());
            }
            while let Some(want) = reference.pop() {
                assert_eq!(q.pop(), Some(want));
            }
            assert!(q.is_empty() && q.pop().is_none() && q.peek_key().is_none());
        }
    }

    #[test]
    fn keys_round_trip_at_the_extremes() {
        let mut q = HeapQueue::default();
        let big = EventKey { time: SimTime::MAX, seq: u64::MAX };
        let small = EventKey { time: SimTime::ZERO, seq: 0 };
        q.push(big, Event::Sample);
        q.push(small, Event::WarmupEnd);
        assert_eq!(q.pop(), Some((small, Event::WarmupEnd)));
        assert_eq!(q.pop(), Some((big, Event::Sample)));
    }
}
