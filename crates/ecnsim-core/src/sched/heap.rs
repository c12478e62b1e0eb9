//! The default event queue: a binary min-heap on `(time, seq)`.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::{Event, EventKey, EventQueue};

#[derive(Debug)]
struct Entry {
    key: EventKey,
    event: Event,
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
}

impl EventQueue for HeapQueue {
    fn push(&mut self, key: EventKey, event: Event) {
        self.heap.push(Entry { key, event });
    }
    fn pop(&mut self) -> Option<(EventKey, Event)> {
        self.heap.pop().map(|e| (e.key, e.event))
    }
    fn peek_key(&self) -> Option<EventKey> {
        self.heap.peek().map(|e| e.key)
    }
    fn len(&self) -> usize {
        self.heap.len()
    }
}
