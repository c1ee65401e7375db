//! The event queue: pending events popped in (time, scheduling order). The order of ties
//! makes a run depend only on its seed and config: two events at the same instant pop in the
//! order they were scheduled.
//!
//! It is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for the shortest
//! path problem", JACM 1990), which the simulator's clock allows because it never goes back:
//! nothing is scheduled before the last event popped. A pending event sits in the bucket
//! named by the highest bit in which its time differs from that last time (bucket 0: the
//! same time). Popping takes bucket 0 in order; when it is empty, the least non-empty bucket
//! is split by its earliest time, and each of its events moves to a lower bucket. An event
//! moves at most 64 times, and in practice once or twice, so a pop costs a few word
//! operations instead of a binary heap's log n compare-and-swaps of whole entries.
//!
//! Ties keep their scheduling order without a sequence number: events of equal time are
//! always in the same bucket, every bucket keeps the order events entered it, and a split
//! moves a bucket's events in that order.

use crate::time::{SimDuration, SimTime};
use std::collections::VecDeque;

/// Buckets 1..=64: the highest differing bit of the time from `last`, plus one.
const BUCKETS: usize = 65;

/// Pending events of type `E` plus the current simulated time.
#[derive(Clone)]
pub struct EventQueue<E> {
    /// Events at exactly `last`, in scheduling order.
    ready: VecDeque<E>,
    /// Bucket `b` (1..=64) holds the events whose time differs from `last` first in bit
    /// `b − 1`, in the order they entered it. `buckets[0]` stays empty (see `ready`).
    buckets: Vec<Vec<(SimTime, E)>>,
    /// Bit `b − 1` set ⇔ `buckets[b]` is not empty.
    occupied: u64,
    /// The time of the last split or pop: every pending event is at or after it.
    last: SimTime,
    now: SimTime,
    len: usize,
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
            ready: VecDeque::new(),
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            occupied: 0,
            last: SimTime::ZERO,
            now: SimTime::ZERO,
            len: 0,
            popped: 0,
        }
    }

    /// The time of the event being processed (or of the last one processed).
    pub fn now(&self) -> SimTime {
        self.now
    }

    #[inline]
    fn bucket(&self, at: SimTime) -> usize {
        let diff = at.as_ns() ^ self.last.as_ns();
        (u64::BITS - diff.leading_zeros()) as usize
    }

    #[inline]
    fn place(&mut self, at: SimTime, event: E) {
        debug_assert!(at >= self.last);
        match self.bucket(at) {
            0 => self.ready.push_back(event),
            b => {
                self.buckets[b].push((at, event));
                self.occupied |= 1 << (b - 1);
            }
        }
    }

    /// Schedules `event` at absolute time `at`, which must not be in the past.
    pub fn schedule_at(&mut self, at: SimTime, event: E) {
        assert!(
            at >= self.now,
            "event scheduled in the past: {at:?} < {:?}",
            self.now
        );
        self.place(at, event);
        self.len += 1;
    }

    /// Schedules `event` `delay` after now.
    pub fn schedule_in(&mut self, delay: SimDuration, event: E) {
        self.schedule_at(self.now + delay, event);
    }

    /// Splits the least non-empty bucket by its earliest time, which becomes `last`: its
    /// events at that time go to `ready` (in order), the others to lower buckets.
    fn split(&mut self) {
        debug_assert!(self.ready.is_empty() && self.occupied != 0);
        let b = self.occupied.trailing_zeros() as usize + 1;
        let mut moving = std::mem::take(&mut self.buckets[b]);
        self.occupied &= !(1 << (b - 1));
        self.last = moving
            .iter()
            .map(|&(at, _)| at)
            .min()
            .expect("an occupied bucket holds an event");
        for (at, event) in moving.drain(..) {
            self.place(at, event);
        }
        // Hand the emptied vector back so that the bucket keeps its capacity.
        self.buckets[b] = moving;
    }

    /// Removes the earliest event and advances `now` to its time.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        if self.ready.is_empty() {
            if self.occupied == 0 {
                return None;
            }
            self.split();
        }
        let event = self.ready.pop_front().expect("a split fills ready");
        let at = self.last;
        debug_assert!(at >= self.now);
        self.now = at;
        self.len -= 1;
        self.popped += 1;
        Some((at, event))
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<SimTime> {
        if !self.ready.is_empty() {
            return Some(self.last);
        }
        let b = self.occupied.trailing_zeros() as usize + 1;
        self.buckets.get(b)?.iter().map(|&(at, _)| at).min()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Events pending at the current instant (scheduled for `now`, not yet popped): a model
    /// that must act only once everything due now has happened (a timer that waits behind
    /// the instant's other events) asks whether anything besides its own is still due.
    pub fn pending_now(&self) -> usize {
        if self.last == self.now {
            // Every pending event at `last` sits in `ready`; the buckets hold later ones.
            self.ready.len()
        } else {
            // The clock was moved past the last split (`advance_clock`): nothing is due at
            // `last`, and events scheduled at `now` since sit in the buckets.
            debug_assert!(self.ready.is_empty(), "nothing pending in the past");
            self.buckets
                .iter()
                .flatten()
                .filter(|&&(at, _)| at == self.now)
                .count()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
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
        self.ready.clear();
        for b in &mut self.buckets {
            b.clear();
        }
        self.occupied = 0;
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn pending_now_counts_what_is_still_due_at_the_current_instant() {
        let mut q = EventQueue::new();
        q.schedule_at(SimTime(10), 'a');
        q.schedule_at(SimTime(10), 'b');
        q.schedule_at(SimTime(20), 'c');
        assert_eq!(q.pending_now(), 0, "nothing is due at time zero");
        q.pop();
        assert_eq!(q.pending_now(), 1, "b is still due at 10");
        q.schedule_at(SimTime(10), 'd');
        assert_eq!(q.pending_now(), 2);
        q.pop();
        q.pop();
        assert_eq!(q.pending_now(), 0, "only c, at 20, is left");
        // The clock moved by hand: what is scheduled at the new instant counts.
        q.advance_clock(SimTime(15));
        q.schedule_at(SimTime(15), 'e');
        assert_eq!(q.pending_now(), 1);
    }

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
        /// Story: the radix heap replaced a binary heap ordered by (time, sequence number);
        /// whatever is scheduled, also from inside events, at whatever times (wide apart or
        /// equal), it pops exactly what the reference pops.
        #[test]
        fn pops_match_a_reference_ordered_by_time_then_schedule_order(
            first in proptest::collection::vec(0u64..1 << 40, 1..100),
            later in proptest::collection::vec((0u64..4, 0u64..1 << 36), 0..300),
        ) {
            use std::collections::BTreeSet;
            let mut q = EventQueue::new();
            let mut reference: BTreeSet<(u64, u64)> = BTreeSet::new();
            let mut seq = 0u64;
            for t in first {
                q.schedule_at(SimTime(t), seq);
                reference.insert((t, seq));
                seq += 1;
            }
            let mut later = later.into_iter();
            while let Some(&(t, id)) = reference.iter().next() {
                reference.remove(&(t, id));
                prop_assert_eq!(q.peek_time(), Some(SimTime(t)));
                prop_assert_eq!(q.pop(), Some((SimTime(t), id)));
                prop_assert_eq!(q.len(), reference.len());
                // Each event may schedule more at now or later (0: at now, a tie).
                if let Some((kind, delta)) = later.next() {
                    let at = t + if kind == 0 { 0 } else { delta >> (kind * 8) };
                    q.schedule_at(SimTime(at), seq);
                    reference.insert((at, seq));
                    seq += 1;
                }
            }
            prop_assert!(q.pop().is_none());
            prop_assert!(q.is_empty());
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
