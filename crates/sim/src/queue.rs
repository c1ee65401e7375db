//! The event queue: a min-heap ordered by (time, sequence number). The sequence number makes
//! ties deterministic: two events at the same instant pop in the order they were scheduled,
//! so a run depends only on its seed and config.
//!
//! Popping is the simulator's hottest call (a tenth of a FlashAbacus reproduction's
//! samples with `std`'s `BinaryHeap` of whole events), so the heap holds only keys: one
//! `u128` per event, `time << 64 | seq << SLOT_BITS | slot`, compared in one go and copied
//! cheaply, while the events wait in a slab at `slot`. The heap is 4-ary (half as deep as
//! a binary one; four 16-byte keys share a cache line) and sifts with a hole, one copy per
//! level. The order is the total order on (time, sequence) — the slot below the sequence
//! number never decides — so the same events pop in the same order as from any correct
//! heap; a property test checks it against `BinaryHeap`. Measured so far (docs/design.md,
//! "Performance"): no cheaper per pop than `std`'s heap of whole events; the next thing to
//! try is a binary heap of these keys.

use crate::time::{SimDuration, SimTime};

/// Children per heap node.
const ARITY: usize = 4;

/// Low bits of a key that name the event's slot: at most 2^24 events pending at once.
const SLOT_BITS: u32 = 24;
const SLOT_MASK: u64 = (1 << SLOT_BITS) - 1;

/// Events one queue can schedule over its life: the sequence number's 40 bits (a million
/// million; a full FlashAbacus reproduction schedules two thousand million in all).
const SEQ_LIMIT: u64 = 1 << (64 - SLOT_BITS);

/// Pending events of type `E` plus the current simulated time.
pub struct EventQueue<E> {
    /// A 4-ary min-heap of keys (`time << 64 | seq << SLOT_BITS | slot`): the children of
    /// entry `i` are `4i + 1 ..= 4i + 4`.
    heap: Vec<u128>,
    /// The pending events, at the slot their key names; `free` lists the empty slots.
    events: Vec<Option<E>>,
    free: Vec<u32>,
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
            events: Vec::new(),
            free: Vec::new(),
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
        assert!(seq < SEQ_LIMIT, "more than {SEQ_LIMIT} events scheduled");
        self.next_seq += 1;
        let slot = match self.free.pop() {
            Some(slot) => {
                debug_assert!(self.events[slot as usize].is_none());
                self.events[slot as usize] = Some(event);
                slot
            }
            None => {
                assert!(
                    (self.events.len() as u64) < 1 << SLOT_BITS,
                    "more than 2^{SLOT_BITS} events pending"
                );
                self.events.push(Some(event));
                (self.events.len() - 1) as u32
            }
        };
        let key = u128::from(at.0) << 64 | u128::from(seq << SLOT_BITS | u64::from(slot));
        self.heap.push(key);
        self.sift_up(self.heap.len() - 1);
    }

    /// Schedules `event` `delay` after now.
    pub fn schedule_in(&mut self, delay: SimDuration, event: E) {
        self.schedule_at(self.now + delay, event);
    }

    /// Removes the earliest event and advances `now` to its time.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let last = self.heap.pop()?;
        let top = match self.heap.first() {
            Some(&top) => {
                self.sift_down(last);
                top
            }
            None => last,
        };
        debug_assert!(self.heap.first().is_none_or(|&k| top < k));
        let at = SimTime((top >> 64) as u64);
        debug_assert!(at >= self.now);
        let slot = (top as u64 & SLOT_MASK) as u32;
        let event = self.events[slot as usize]
            .take()
            .expect("a pending key's slot holds its event");
        self.free.push(slot);
        self.now = at;
        self.popped += 1;
        Some((at, event))
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.first().map(|&k| SimTime((k >> 64) as u64))
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
        self.events.clear();
        self.free.clear();
    }

    /// Moves the key at `i` up past every parent it pops before (a hole moves up; the key is
    /// written once, where it stops).
    #[inline]
    fn sift_up(&mut self, mut i: usize) {
        let key = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent] < key {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = key;
    }

    /// Puts `key` in the root's place and moves it down past every child that pops before it.
    #[inline]
    fn sift_down(&mut self, key: u128) {
        let len = self.heap.len();
        let mut i = 0;
        loop {
            let first = ARITY * i + 1;
            if first >= len {
                break;
            }
            let children = &self.heap[first..(first + ARITY).min(len)];
            let (mut min, mut min_key) = (0, children[0]);
            for (j, &k) in children.iter().enumerate().skip(1) {
                if k < min_key {
                    (min, min_key) = (j, k);
                }
            }
            if key < min_key {
                break;
            }
            self.heap[i] = min_key;
            i = first + min;
        }
        self.heap[i] = key;
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
        /// through interleaved schedules, pops and the odd power cut (`clear`): every pop must
        /// give the same event at the same time. Small delays force many ties; pops free
        /// slots that later events reuse.
        #[test]
        fn pops_match_a_binary_heap_model(
            ops in proptest::collection::vec((0u8..32, 0u64..8), 1..400)
        ) {
            use std::cmp::Reverse;
            use std::collections::BinaryHeap;
            let mut q = EventQueue::new();
            let mut model = BinaryHeap::new();
            let mut seq = 0u64;
            for (op, delay) in ops {
                if op == 0 {
                    q.clear();
                    model.clear();
                } else if op % 2 == 1 {
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
