//! The scheduler: a priority queue of events keyed by `(time, seq)`.
//!
//! ## Guarantees
//! - Events run in increasing time; events due at the same nanosecond run in
//!   the order they were scheduled (FIFO), because `seq` is a counter
//!   incremented by every `schedule` call.
//! - Cancellation is lazy: a component that wants to cancel a pending event
//!   bumps a generation number it owns; the event carries the generation it
//!   was scheduled with, and the simulation skips it when popped if the two
//!   differ. The scheduler itself never searches its queue.
//!
//! | operation  | cost (binary heap) |
//! |------------|--------------------|
//! | `schedule` | O(log n)           |
//! | `pop`      | O(log n)           |
//! | cancel     | O(1) (lazy)        |

mod heap;

pub use heap::HeapQueue;

use crate::ids::{AppId, PortId};
use crate::time::SimTime;

/// Something that happens at an instant. Small and `Copy`; the state an
/// event acts on lives in the simulation's arenas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A port's transmitter finished serialising; it may start the next packet.
    TxDone(PortId),
    /// The packet at the head of a port's wire reaches the far end.
    WireArrival(PortId),
    /// A TCP endpoint's earliest deadline; stale if `gen` is not current.
    Timer {
        /// The endpoint (`2 * slot` the initiator, `2 * slot + 1` the responder).
        endpoint: u32,
        /// Generation at scheduling time.
        gen: u32,
    },
    /// An application starts.
    AppStart(AppId),
    /// An application's earliest deadline; stale if `gen` is not current.
    AppTimer {
        /// The application.
        app: AppId,
        /// Generation at scheduling time.
        gen: u32,
    },
    /// Counters are snapshotted: statistics count from here on.
    WarmupEnd,
    /// Periodic sample of the time series.
    Sample,
}

/// The key that orders events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct EventKey {
    /// When the event is due.
    pub time: SimTime,
    /// Schedule-call counter: the same-time FIFO tie-break.
    pub seq: u64,
}

/// A priority queue of events. Any implementation must pop in exactly
/// `(time, seq)` order, so swapping implementations cannot change results.
pub trait EventQueue {
    /// Insert `event` under `key`.
    fn push(&mut self, key: EventKey, event: Event);
    /// Remove and return the event with the smallest key.
    fn pop(&mut self) -> Option<(EventKey, Event)>;
    /// The smallest key, without removing it.
    fn peek_key(&self) -> Option<EventKey>;
    /// Number of queued events (stale ones included).
    fn len(&self) -> usize;
    /// True if no event is queued.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Owns the clock, the sequence counter and the queue.
#[derive(Debug, Default)]
pub struct Scheduler {
    now: SimTime,
    next_seq: u64,
    queue: HeapQueue,
}

impl Scheduler {
    /// An empty scheduler at time zero.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }
    /// The current time: the time of the event being run.
    #[must_use]
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// Schedule `event` at `time`.
    ///
    /// # Panics
    /// In debug builds, if `time` is in the past.
    pub fn schedule(&mut self, time: SimTime, event: Event) {
        debug_assert!(time >= self.now, "event scheduled in the past: {time:?} < {:?}", self.now);
        let key = EventKey { time, seq: self.next_seq };
        self.next_seq += 1;
        self.queue.push(key, event);
    }
    /// Pop the next event due at or before `limit`, advancing the clock to it.
    pub fn pop_until(&mut self, limit: SimTime) -> Option<Event> {
        match self.queue.peek_key() {
            Some(k) if k.time <= limit => {
                let (key, ev) = self.queue.pop().expect("peeked");
                self.now = key.time;
                Some(ev)
            }
            _ => None,
        }
    }
    /// Move the clock forward to `t` (no event may be pending before `t`).
    pub fn advance_to(&mut self, t: SimTime) {
        debug_assert!(self.queue.peek_key().is_none_or(|k| k.time >= t));
        if t > self.now {
            self.now = t;
        }
    }
    /// The time of the earliest queued event (stale ones included), if any.
    #[must_use]
    pub fn next_time(&self) -> Option<SimTime> {
        self.queue.peek_key().map(|k| k.time)
    }
    /// Number of queued events.
    #[must_use]
    pub fn pending(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::PortId;

    fn tx(i: u32) -> Event {
        Event::TxDone(PortId(i))
    }

    #[test]
    fn events_run_in_time_order() {
        let mut s = Scheduler::new();
        s.schedule(SimTime::from_nanos(30), tx(3));
        s.schedule(SimTime::from_nanos(10), tx(1));
        s.schedule(SimTime::from_nanos(20), tx(2));
        let order: Vec<_> = std::iter::from_fn(|| s.pop_until(SimTime::MAX)).collect();
        assert_eq!(order, vec![tx(1), tx(2), tx(3)]);
        assert_eq!(s.now(), SimTime::from_nanos(30));
    }

    #[test]
    fn same_time_events_run_fifo() {
        let mut s = Scheduler::new();
        for i in 0..1000 {
            s.schedule(SimTime::from_nanos(5), tx(i));
        }
        s.schedule(SimTime::from_nanos(1), tx(9999));
        assert_eq!(s.pop_until(SimTime::MAX), Some(tx(9999)));
        for i in 0..1000 {
            assert_eq!(s.pop_until(SimTime::MAX), Some(tx(i)));
        }
        assert_eq!(s.pop_until(SimTime::MAX), None);
    }

    #[test]
    fn fifo_holds_for_events_scheduled_while_running() {
        let mut s = Scheduler::new();
        s.schedule(SimTime::from_nanos(5), tx(0));
        assert_eq!(s.pop_until(SimTime::MAX), Some(tx(0)));
        // Scheduled "now" from inside an event: runs after already-queued same-time events.
        s.schedule(SimTime::from_nanos(7), tx(1));
        s.schedule(SimTime::from_nanos(5), tx(2));
        s.schedule(SimTime::from_nanos(7), tx(3));
        let order: Vec<_> = std::iter::from_fn(|| s.pop_until(SimTime::MAX)).collect();
        assert_eq!(order, vec![tx(2), tx(1), tx(3)]);
    }

    #[test]
    fn pop_until_respects_the_limit() {
        let mut s = Scheduler::new();
        s.schedule(SimTime::from_nanos(10), tx(1));
        assert_eq!(s.pop_until(SimTime::from_nanos(9)), None);
        assert_eq!(s.now(), SimTime::ZERO);
        assert_eq!(s.pop_until(SimTime::from_nanos(10)), Some(tx(1)));
    }
}
