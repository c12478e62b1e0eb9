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
//!
//! ## Two heaps
//! Link events ([`Event::TxDone`], [`Event::WireArrival`]) and everything
//! else (connection and application timers, application starts, warm-up,
//! samples) wait in two binary heaps, and `pop` takes the smaller of the two
//! tops. The order is exactly the one a single heap gives (keys are unique),
//! so the split cannot change results. It keeps the per-packet heap as small
//! as the number of busy links: a TCP endpoint keeps one timer entry for as
//! long as it lives, and a timer moves rarely (a retransmission timer pushed
//! later by each ACK keeps its early entry, see `Simulation::flush_endpoint`),
//! while link events come and go with every packet. With one heap, 9,600
//! connections put 10,000 timers under every link event (about 13 levels to
//! sift through, each a likely cache miss); apart, the link events' heap holds
//! a few hundred (docs/performance.md, "Cost per hop as flows grow").
//!
//! ## Replacing the top
//! Most link events schedule another link event while they run: a wire
//! arrival schedules the next packet's arrival on the same wire, a `TxDone`
//! the next packet's. So a link event is not removed when it is popped: it
//! stays at the top of its heap, spent, and the first link event scheduled
//! while it runs takes its place with one sift down from the top, where a pop
//! and a push would sift twice. A spent top nobody replaced is removed before
//! the next pop ([`Scheduler::settle`]). The queue holds the same keys either
//! way, so the order is unchanged.
//!
//! An endpoint's timer event ([`Event::Timer`]) is left spent at the top of the
//! timers' heap in the same way: a paced sender's departure event arms the next
//! departure, which takes its place with one sift down instead of a pop and a push.
//! Unlike the link events' spent top, it is settled where the timer event runs
//! ([`Scheduler::settle_timer`], called by the simulation at the end of that
//! event), not before every pop: only the timers' own paths test for it, so
//! senders that do not pace (a timer event per RTO or delayed ACK) pay nothing
//! on the per-packet path (the same change with a test before every pop cost
//! every run about 1 % and was reverted, docs/performance.md, "a fourth pass").
//!
//! ## Stale timer events
//! A cancelled timer's event stays in the timers' heap until its time, as the
//! lazy cancellation above has it. An endpoint's timer event displaced by an
//! earlier deadline (a paced sender's departure armed while its retransmission
//! timer's event, seconds ahead, is pending) would wait there for seconds: a
//! BBR sender on `dumbbell-100` left eight times as many events in the heap as
//! were live, and every pop sifted through more levels. The simulation counts
//! the events it makes stale and, once they may be half the heap, drops them
//! all in one pass ([`Scheduler::retain_timers`], O(n)); keys are unique, so
//! the events kept pop in the same order as before, and no `seq` changes.
//!
//! | operation  | cost (binary heaps; `n` events of the kind, `m` of the other) |
//! |------------|--------------------|
//! | `schedule` | O(log n)           |
//! | `pop`      | O(log n), plus one comparison with the other heap's top |
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

impl Event {
    /// True for the events of links (a transmitter done, a packet reaching the
    /// far end), which wait in the per-packet heap; the others wait in the timers' heap.
    #[must_use]
    pub fn is_link_event(&self) -> bool {
        matches!(self, Event::TxDone(_) | Event::WireArrival(_))
    }
}

/// Owns the clock, the sequence counter and the two queues (see "Two heaps").
#[derive(Debug, Default)]
pub struct Scheduler {
    now: SimTime,
    next_seq: u64,
    /// Link events.
    links: HeapQueue,
    /// Every other event: timers, application starts, warm-up, samples.
    timers: HeapQueue,
    /// The top of `links` is the event popped last, spent (see "Replacing the top").
    links_top_spent: bool,
    /// The top of `timers` is the endpoint timer event running now, spent (see "Replacing the
    /// top"); settled by [`Scheduler::settle_timer`].
    timers_top_spent: bool,
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
    // Inlined at its few call sites (a handful of link events per hop): as a call, its
    // prologue and argument passing cost as much as the sift of a shallow heap.
    #[inline(always)]
    pub fn schedule(&mut self, time: SimTime, event: Event) {
        debug_assert!(time >= self.now, "event scheduled in the past: {time:?} < {:?}", self.now);
        let key = EventKey { time, seq: self.next_seq };
        self.next_seq += 1;
        if event.is_link_event() {
            if self.links_top_spent {
                self.links_top_spent = false;
                self.links.replace_top(key, event);
            } else {
                self.links.push(key, event);
            }
        } else if self.timers_top_spent {
            self.timers_top_spent = false;
            self.timers.replace_top(key, event);
        } else {
            self.timers.push(key, event);
        }
    }
    /// Remove the spent top of the timers' heap, if nothing replaced it: called once an
    /// [`Event::Timer`] popped by [`Scheduler::pop_event`] has run (see "Replacing the top").
    #[inline]
    pub fn settle_timer(&mut self) {
        if self.timers_top_spent {
            self.timers_top_spent = false;
            self.timers.remove_top();
        }
    }
    /// Remove the spent tops of both heaps, if nothing replaced them (see "Replacing the
    /// top"). The other accessors assume it was called after the last pop.
    #[inline]
    pub fn settle(&mut self) {
        self.settle_links();
        self.settle_timer();
    }
    /// Remove the spent top of the link events' heap, if nothing replaced it.
    #[inline]
    fn settle_links(&mut self) {
        if self.links_top_spent {
            self.links_top_spent = false;
            self.links.remove_top();
        }
    }
    /// Pop the next event due at or before `limit`, advancing the clock to it.
    #[inline]
    pub fn pop_until(&mut self, limit: SimTime) -> Option<Event> {
        self.settle_timer();
        let ev = self.pop_event(limit);
        self.settle_timer();
        ev
    }
    /// [`Scheduler::pop_until`] for the event loop: an [`Event::Timer`] it returns stays at the
    /// top of the timers' heap, spent, until a timer event scheduled while it runs replaces it
    /// or [`Scheduler::settle_timer`] removes it, which the caller must do before the next pop
    /// (see "Replacing the top").
    #[inline]
    pub fn pop_event(&mut self, limit: SimTime) -> Option<Event> {
        debug_assert!(!self.timers_top_spent, "settle_timer after a timer event");
        self.settle_links();
        match (self.links.peek(), self.timers.peek_key()) {
            (Some((l, ev)), t) if t.is_none_or(|t| l < t) => {
                if l.time > limit {
                    return None;
                }
                // Left in place, spent: the next link event scheduled replaces it.
                self.links_top_spent = true;
                self.now = l.time;
                Some(ev)
            }
            (_, Some(t)) if t.time <= limit => {
                let (key, ev) = self.timers.peek().expect("peeked");
                if let Event::Timer { .. } = ev {
                    // Left in place, spent, until `settle_timer`: the departure it arms replaces it.
                    self.timers_top_spent = true;
                } else {
                    self.timers.remove_top();
                }
                self.now = key.time;
                Some(ev)
            }
            _ => None,
        }
    }
    /// Move the clock forward to `t` (no event may be pending before `t`).
    pub fn advance_to(&mut self, t: SimTime) {
        self.settle();
        debug_assert!(self.next_time().is_none_or(|n| n >= t));
        if t > self.now {
            self.now = t;
        }
    }
    /// The time of the earliest queued event (stale ones included), if any.
    /// While a popped link event runs (until the next link event is scheduled, or
    /// [`Scheduler::settle`]), that spent event's time: a lower bound.
    #[must_use]
    pub fn next_time(&self) -> Option<SimTime> {
        match (self.links.peek_key(), self.timers.peek_key()) {
            (Some(l), Some(t)) => Some(l.min(t).time),
            (l, t) => l.or(t).map(|k| k.time),
        }
    }
    /// Drop the timers' heap's events for which `keep` is false (stale ones, see "Stale timer
    /// events"); the others pop in the same order as before.
    pub fn retain_timers(&mut self, keep: &mut dyn FnMut(&Event) -> bool) {
        self.settle_timer();
        self.timers.retain(keep);
    }
    /// Number of events in the timers' heap (stale ones included).
    #[must_use]
    #[inline]
    pub fn pending_timers(&self) -> usize {
        self.timers.len() - usize::from(self.timers_top_spent)
    }
    /// Number of queued events (link events, other events).
    #[must_use]
    pub fn pending_by_heap(&self) -> (usize, usize) {
        (self.links.len() - usize::from(self.links_top_spent), self.pending_timers())
    }
    /// Number of queued events.
    #[must_use]
    pub fn pending(&self) -> usize {
        let (links, timers) = self.pending_by_heap();
        links + timers
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

    /// A schedule as a simulation makes it: pushes at or after the current time (ties at
    /// one instant, near link events, far timers, both kinds), pops bounded by a horizon
    /// that may be narrower than the next event (`pop_until` then returns nothing and the
    /// clock stays), idle gaps, and link events scheduled while a popped link event is
    /// still spent at the top of its heap or after it was removed; checked against a
    /// sorted reference at every step.
    fn check_against_reference(ops: &[(u8, u64)]) {
        let mut s = Scheduler::new();
        // Sorted largest first: the next event due is at the end.
        let mut reference: Vec<(EventKey, Event)> = Vec::new();
        let mut seq = 0u64;
        for &(op, x) in ops {
            let now = s.now().as_nanos();
            match op % 8 {
                0..=4 => {
                    // Due now (a tie), a little ahead, or far ahead.
                    let ahead = match op % 8 {
                        0 => 0,
                        1 | 2 => x % 16,
                        3 => x % 1_000_000,
                        _ => x % (1 << 42),
                    };
                    let time = SimTime::from_nanos(now + ahead);
                    let i = u32::try_from(seq % 1000).unwrap();
                    let ev = match (x >> 32) % 4 {
                        0 | 1 => tx(i),
                        2 => Event::WireArrival(PortId(i)),
                        _ => Event::Timer { endpoint: i, gen: 0 },
                    };
                    s.schedule(time, ev);
                    reference.push((EventKey { time, seq }, ev));
                    seq += 1;
                    reference.sort_by_key(|&(k, _)| std::cmp::Reverse(k));
                }
                5 | 6 => {
                    let want = reference.pop();
                    if x % 2 == 0 {
                        // Between runs: the spent top removed, the next time exact.
                        s.settle();
                        assert_eq!(s.next_time(), want.map(|(k, _)| k.time));
                    }
                    // As the event loop pops: a timer event stays spent at the top of its heap
                    // through the next operations (a schedule replaces it) until settled.
                    s.settle_timer();
                    assert_eq!(s.pop_event(SimTime::MAX), want.map(|(_, e)| e));
                    if let Some((k, _)) = want {
                        assert_eq!(s.now(), k.time);
                    }
                }
                _ => {
                    // A horizon, often before the next event: nothing runs past it.
                    let limit = SimTime::from_nanos(now + x % 64);
                    match reference.last() {
                        Some(&(k, e)) if k.time <= limit => {
                            assert_eq!(s.pop_until(limit), Some(e));
                            reference.pop();
                        }
                        _ => {
                            assert_eq!(s.pop_until(limit), None);
                            assert_eq!(s.now().as_nanos(), now);
                            s.advance_to(limit);
                            assert_eq!(s.now(), limit);
                        }
                    }
                }
            }
            assert_eq!(s.pending(), reference.len());
        }
        while let Some((k, want)) = reference.pop() {
            assert_eq!(s.pop_until(SimTime::MAX), Some(want));
            assert_eq!(s.now(), k.time);
        }
        assert_eq!(s.pop_until(SimTime::MAX), None);
        s.settle();
        assert_eq!((s.pending(), s.next_time()), (0, None));
    }

    /// Link events and timers go to different heaps; the pops interleave them in exact
    /// `(time, seq)` order, as one heap would, ties included.
    #[test]
    fn the_two_heaps_pop_in_exact_key_order_against_a_sorted_reference() {
        use crate::rng::SimRng;
        let mut rng = SimRng::for_component(11, "scheduler-test");
        for round in 0..10u64 {
            // Even rounds: mostly ties and near events; odd rounds: every kind.
            let ops: Vec<(u8, u64)> = (0..3000)
                .map(|_| {
                    let op = u8::try_from(rng.below(8)).unwrap();
                    let op = if round % 2 == 0 && (3..=4).contains(&op) { 1 } else { op };
                    (op, rng.below(u64::MAX))
                })
                .collect();
            check_against_reference(&ops);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]
        #[test]
        fn random_schedules_pop_in_exact_key_order(
            ops in proptest::collection::vec((0u8..8, proptest::num::u64::ANY), 1..400),
        ) {
            check_against_reference(&ops);
        }
    }

    #[test]
    fn link_events_and_timers_wait_apart() {
        let mut s = Scheduler::new();
        s.schedule(SimTime::from_nanos(9), Event::Timer { endpoint: 0, gen: 0 });
        s.schedule(SimTime::from_nanos(9), tx(1));
        s.schedule(SimTime::from_nanos(3), Event::Sample);
        assert_eq!(s.pending_by_heap(), (1, 2));
        assert_eq!(s.pop_until(SimTime::MAX), Some(Event::Sample));
        // Same instant: the timer was scheduled first, so it runs first.
        assert_eq!(s.pop_until(SimTime::MAX), Some(Event::Timer { endpoint: 0, gen: 0 }));
        assert_eq!(s.pop_until(SimTime::MAX), Some(tx(1)));
    }

    #[test]
    fn a_spent_link_event_is_replaced_or_removed_and_never_runs_twice() {
        let mut s = Scheduler::new();
        for i in 0..4 {
            s.schedule(SimTime::from_nanos(10 * u64::from(i)), tx(i));
        }
        assert_eq!(s.pop_until(SimTime::MAX), Some(tx(0)));
        // Spent, not counted; the next link event takes its place.
        assert_eq!(s.pending_by_heap(), (3, 0));
        s.schedule(SimTime::from_nanos(15), tx(9));
        assert_eq!(s.pending_by_heap(), (4, 0));
        assert_eq!(s.pop_until(SimTime::MAX), Some(tx(1)));
        // A timer does not replace it; the spent entry goes before the next pop.
        s.schedule(SimTime::from_nanos(12), Event::Sample);
        assert_eq!(s.pending_by_heap(), (3, 1));
        let order: Vec<_> = std::iter::from_fn(|| s.pop_until(SimTime::MAX)).collect();
        assert_eq!(order, vec![Event::Sample, tx(9), tx(2), tx(3)]);
        assert_eq!(s.pending(), 0);
        s.settle();
        assert_eq!(s.next_time(), None);
    }

    /// Dropping stale timer events (here: odd generations) leaves the others, and every link
    /// event, to pop in exactly the order they had, ties included.
    #[test]
    fn dropping_timer_events_keeps_the_order_of_the_rest() {
        use crate::rng::SimRng;
        let mut rng = SimRng::for_component(17, "retain-test");
        let mut s = Scheduler::new();
        let mut reference: Vec<(EventKey, Event)> = Vec::new();
        for seq in 0..2000u64 {
            let time = SimTime::from_nanos(rng.below(64));
            let i = u32::try_from(seq % 100).unwrap();
            let ev = match rng.below(4) {
                0 => tx(i),
                1 => Event::Sample,
                _ => Event::Timer { endpoint: i, gen: u32::try_from(rng.below(4)).unwrap() },
            };
            s.schedule(time, ev);
            reference.push((EventKey { time, seq }, ev));
        }
        let stale = |ev: &Event| matches!(ev, Event::Timer { gen, .. } if gen % 2 == 1);
        s.retain_timers(&mut |ev| !stale(ev));
        reference.retain(|(_, ev)| !stale(ev));
        reference.sort_by_key(|&(k, _)| k);
        assert_eq!(s.pending(), reference.len());
        let order: Vec<_> = std::iter::from_fn(|| s.pop_until(SimTime::MAX)).collect();
        assert_eq!(order, reference.iter().map(|&(_, e)| e).collect::<Vec<_>>());
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
