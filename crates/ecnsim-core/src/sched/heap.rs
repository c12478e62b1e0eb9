//! The default event queue: a binary min-heap on `(time, seq)`.
//!
//! Why binary: a 4-ary heap (half the depth) was measured and costs more
//! instructions per event on `dumbbell-100` (a heap of a few hundred events)
//! and as many first-level cache misses per hop at 9,600 flows (README,
//! "Where the instructions go"). Why a heap at all: radix heaps and timing
//! wheels (keys are monotone, so both pop in exact order) were measured and
//! cost more CPU at 30 flows and at 9,600 (docs/performance.md, "An event
//! queue for monotone keys"): a link event replacing the spent top sifts
//! through a heap of a few dozen events in the first-level cache.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::{Event, EventKey, EventQueue};

/// A queued event. The key `(time, seq)` is held as one 128-bit number
/// (time in the high half), so comparing two entries is one wide comparison
/// rather than two in turn: the same order, fewer instructions per sift step.
#[derive(Debug)]
struct Entry {
    key: u128,
    event: Event,
}

#[inline]
fn pack(k: EventKey) -> u128 {
    (u128::from(k.time.as_nanos()) << 64) | u128::from(k.seq)
}

#[inline]
#[allow(clippy::cast_possible_truncation)]
fn unpack(x: u128) -> EventKey {
    EventKey { time: crate::time::SimTime::from_nanos((x >> 64) as u64), seq: x as u64 }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we want the smallest key first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// Binary-heap event queue. Keys are unique (`seq` is), so the order is total.
#[derive(Debug, Default)]
pub struct HeapQueue {
    heap: BinaryHeap<Entry>,
    /// [`HeapQueue::retain`]'s buffer (empty between calls).
    scratch: Vec<Entry>,
}

impl EventQueue for HeapQueue {
    fn push(&mut self, key: EventKey, event: Event) {
        self.heap.push(Entry { key: pack(key), event });
    }
    fn pop(&mut self) -> Option<(EventKey, Event)> {
        self.heap.pop().map(|e| (unpack(e.key), e.event))
    }
    fn peek_key(&self) -> Option<EventKey> {
        self.heap.peek().map(|e| unpack(e.key))
    }
    fn len(&self) -> usize {
        self.heap.len()
    }
}

impl HeapQueue {
    /// The first event and its key, without removing it.
    #[inline]
    pub fn peek(&self) -> Option<(EventKey, Event)> {
        self.heap.peek().map(|e| (unpack(e.key), e.event))
    }
    /// Remove the first event (a spent one: nothing is returned).
    #[inline]
    pub fn remove_top(&mut self) {
        self.heap.pop();
    }
    /// Keep only the events for which `keep` is true. Keys are unique, so those kept pop in
    /// the order they would have. The kept events are pushed again in the order the heap's
    /// array holds them (near its own order, so each push sifts up a level or two), through a
    /// buffer kept for the next call. Out of line and not generic, and not
    /// `BinaryHeap::retain` (whose rebuild is a second caller of the sift that the link
    /// events' `replace_top` runs once per hop): either moved that sift out of the event loop
    /// in the `release-test` build, about 27 instructions per hop on `dumbbell-100`.
    #[inline(never)]
    pub fn retain(&mut self, keep: &mut dyn FnMut(&Event) -> bool) {
        let mut kept = std::mem::take(&mut self.scratch);
        kept.extend(self.heap.drain().filter(|e| keep(&e.event)));
        for e in kept.drain(..) {
            self.heap.push(e);
        }
        self.scratch = kept;
    }
    /// Put `event` under `key` in place of the first event: one sift down from the top,
    /// the same queue as `pop` then `push` leave. Pushes if the queue is empty.
    #[inline]
    pub fn replace_top(&mut self, key: EventKey, event: Event) {
        let entry = Entry { key: pack(key), event };
        if let Some(mut top) = self.heap.peek_mut() {
            // Dropping the guard sifts the new entry down to its place.
            *top = entry;
            return;
        }
        self.heap.push(entry);
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

    /// Every entry's key is larger than its parent's (`std`'s max-heap on the reversed order).
    fn assert_heap_order(q: &HeapQueue) {
        let entries = q.heap.as_slice();
        for i in 1..entries.len() {
            assert!(entries[(i - 1) / 2].key < entries[i].key, "entry {i}'s key is smaller than its parent's");
        }
    }

    /// The operations the scheduler makes on the link events' heap (a spent top replaced by
    /// a later key, or removed; pushes; pops), at every size from empty to a few hundred,
    /// against a sorted reference, with the heap's order checked after every step.
    #[test]
    fn replacing_and_removing_the_top_keep_exact_key_order_against_a_sorted_reference() {
        let mut rng = SimRng::for_component(13, "heap-replace-test");
        for round in 0..12u64 {
            let mut q = HeapQueue::default();
            // Sorted largest first: the next event due is at the end.
            let mut reference: Vec<(EventKey, Event)> = Vec::new();
            let (mut now, mut seq) = (0u64, 0u64);
            // Rounds differ in how far ahead keys fall (ties when near) and in how fast the
            // heap grows (shrinking, steady, growing), so that it is sifted at every depth.
            let spread = [4, 64, 1_000_000][usize::try_from(round % 3).unwrap()];
            let grow = 2 + (round / 3) % 3;
            for _ in 0..3000 {
                let ev = Event::TxDone(PortId(u32::try_from(seq % 1000).unwrap()));
                match rng.below(6) {
                    // The link event that just ran is replaced by one due at or after it.
                    0 | 1 => {
                        let top = reference.pop();
                        assert_eq!(q.peek(), top);
                        now = top.map_or(now, |(k, _)| k.time.as_nanos());
                        let key = EventKey { time: SimTime::from_nanos(now + rng.below(spread)), seq };
                        q.replace_top(key, ev);
                        reference.push((key, ev));
                        seq += 1;
                    }
                    // A spent top nobody replaced.
                    2 => {
                        let top = reference.pop();
                        assert_eq!(q.peek(), top);
                        q.remove_top();
                        now = top.map_or(now, |(k, _)| k.time.as_nanos());
                    }
                    3 => {
                        let want = reference.pop();
                        assert_eq!(q.pop(), want);
                        now = want.map_or(now, |(k, _)| k.time.as_nanos());
                    }
                    _ => {
                        for _ in 0..rng.below(grow) {
                            let key = EventKey { time: SimTime::from_nanos(now + rng.below(spread)), seq };
                            q.push(key, ev);
                            reference.push((key, ev));
                            seq += 1;
                        }
                    }
                }
                reference.sort_by_key(|&(k, _)| std::cmp::Reverse(k));
                assert_eq!(q.len(), reference.len());
                assert_eq!(q.peek_key(), reference.last().map(|&(k, _)| k));
                assert_heap_order(&q);
            }
            while let Some(want) = reference.pop() {
                assert_eq!(q.pop(), Some(want));
                assert_heap_order(&q);
            }
            assert!(q.is_empty() && q.pop().is_none() && q.peek().is_none());
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
