//! The event queue: a 4-ary min-heap ordered by (time, sequence number). The sequence number
//! makes ties deterministic: two events at the same instant pop in the order they were
//! scheduled, so a run depends only on its seed and config.
//!
//! Why 4-ary and not `std`'s binary heap: popping is the simulator's single hottest call (a
//! tenth of a FlashAbacus reproduction's samples). A 4-ary heap is half as deep, so a pop
//! moves half as many entries, and the four children of a node share a cache line or two.
//! The order is a total one on (time, sequence), so any correct heap pops the same events
//! in the same order; a property test checks it against `BinaryHeap`.

use crate::time::{SimDuration, SimTime};

/// Children per heap node.
const ARITY: usize = 4;

struct Entry<E> {
    at: SimTime,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    /// Whether `self` pops before `other`: earlier, or as early and scheduled first.
    #[inline]
    fn before(&self, other: &Self) -> bool {
        (self.at, self.seq) < (other.at, other.seq)
    }
}

/// Pending events of type `E` plus the current simulated time.
pub struct EventQueue<E> {
    /// A 4-ary min-heap: the children of entry `i` are `4i + 1 ..= 4i + 4`.
    heap: Vec<Entry<E>>,
    now: SimTime,
    next_seq: u64,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: Vec::new(),
            now: SimTime::ZERO,
            next_seq: 0,
            popped: 0,
        }
    }

    /// The time of the event being processed (or of the last one processed).
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Schedules `event` at absolute time `at`, which must not be in the past.
    pub fn schedule_at(&mut self, at: SimTime, event: E) {
        assert!(
            at >= self.now,
            "event scheduled in the past: {at:?} < {:?}",
            self.now
        );
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { at, seq, event });
        self.sift_up(self.heap.len() - 1);
    }

    /// Schedules `event` `delay` after now.
    pub fn schedule_in(&mut self, delay: SimDuration, event: E) {
        self.schedule_at(self.now + delay, event);
    }

    /// Removes the earliest event and advances `now` to its time.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let last = self.heap.pop()?;
        let entry = if self.heap.is_empty() {
            last
        } else {
            let top = std::mem::replace(&mut self.heap[0], last);
            self.sift_down(0);
            top
        };
        debug_assert!(entry.at >= self.now);
        debug_assert!(self.heap.first().is_none_or(|e| entry.before(e)));
        self.now = entry.at;
        self.popped += 1;
        Some((entry.at, entry.event))
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.first().map(|e| e.at)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Number of events popped so far (the run's `sim_events`).
    pub fn events_processed(&self) -> u64 {
        self.popped
    }

    /// Moves the clock to `t` with nothing happening in between: `t` must not be in the past
    /// nor past a pending event (those must be processed first).
    pub fn advance_clock(&mut self, t: SimTime) {
        assert!(
            t >= self.now,
            "clock moved backwards: {t:?} < {:?}",
            self.now
        );
        if let Some(at) = self.peek_time() {
            assert!(at >= t, "advancing to {t:?} would skip an event at {at:?}");
        }
        self.now = t;
    }

    /// Drops every pending event (a power cut).
    pub fn clear(&mut self) {
        self.heap.clear();
    }

    /// Moves entry `i` up while it pops before its parent.
    #[inline]
    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if !self.heap[i].before(&self.heap[parent]) {
                break;
            }
            self.heap.swap(i, parent);
            i = parent;
        }
    }

    /// Moves entry `i` down while one of its children pops before it.
    #[inline]
    fn sift_down(&mut self, mut i: usize) {
        let len = self.heap.len();
        loop {
            let first = ARITY * i + 1;
            if first >= len {
                return;
            }
            let mut min = first;
            for child in first + 1..(first + ARITY).min(len) {
                if self.heap[child].before(&self.heap[min]) {
                    min = child;
                }
            }
            if !self.heap[min].before(&self.heap[i]) {
                return;
            }
            self.heap.swap(i, min);
            i = min;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn same_time_events_pop_in_schedule_order() {
        let mut q = EventQueue::new();
        q.schedule_at(SimTime(10), 'b');
        q.schedule_at(SimTime(5), 'a');
        q.schedule_at(SimTime(10), 'c');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'c']);
        assert_eq!(q.now(), SimTime(10));
        assert_eq!(q.events_processed(), 3);
    }

    #[test]
    #[should_panic(expected = "in the past")]
    fn scheduling_in_the_past_is_a_bug() {
        let mut q = EventQueue::new();
        q.schedule_at(SimTime(10), ());
        q.pop();
        q.schedule_at(SimTime(9), ());
    }

    proptest! {
        /// The heap against a reference model, `std`'s binary heap on (time, sequence),
        /// through interleaved schedules and pops: every pop must give the same event at the
        /// same time. Small delays force many ties.
        #[test]
        fn pops_match_a_binary_heap_model(
            ops in proptest::collection::vec((any::<bool>(), 0u64..8), 1..400)
        ) {
            use std::cmp::Reverse;
            use std::collections::BinaryHeap;
            let mut q = EventQueue::new();
            let mut model = BinaryHeap::new();
            let mut seq = 0u64;
            for (pop, delay) in ops {
                if pop {
                    let got = q.pop();
                    let want = model.pop().map(|Reverse((t, _, e))| (t, e));
                    prop_assert_eq!(got, want);
                } else {
                    let at = q.now() + SimDuration(delay);
                    q.schedule_at(at, seq);
                    model.push(Reverse((at, seq, seq)));
                    seq += 1;
                }
                prop_assert_eq!(q.len(), model.len());
                prop_assert_eq!(q.peek_time(), model.peek().map(|Reverse((t, _, _))| *t));
            }
            while let Some(Reverse((t, _, e))) = model.pop() {
                prop_assert_eq!(q.pop(), Some((t, e)));
            }
            prop_assert!(q.pop().is_none());
        }

        #[test]
        fn pops_are_sorted_by_time_then_seq(times in proptest::collection::vec(0u64..50, 1..200)) {
            let mut q = EventQueue::new();
            for (i, t) in times.iter().enumerate() {
                q.schedule_at(SimTime(*t), i);
            }
            let mut last: Option<(SimTime, usize)> = None;
            while let Some((t, i)) = q.pop() {
                if let Some((lt, li)) = last {
                    prop_assert!(lt < t || (lt == t && li < i));
                }
                last = Some((t, i));
            }
        }
    }
}
