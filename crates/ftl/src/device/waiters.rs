//! Host writes waiting for a free page group: one arrival-ordered queue over every host lane,
//! with each entry's lane beside it and a count per lane, so "does lane `l` wait?" and "which
//! lanes wait?" are answered without walking the queue or looking jobs up.

use super::jobs::{SpaceWaiter, WriteJob};
use std::collections::VecDeque;

/// Waiting host writes (a whole-group write on lane 0, or a host fill), in arrival order.
#[derive(Clone, Debug)]
pub(super) struct AllocWaiters {
    queue: VecDeque<Waiter>,
    /// Entries of `queue` per host lane.
    per_lane: Vec<u32>,
}

/// One waiting job and the host lane it waits on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Waiter {
    pub job: SpaceWaiter<WriteJob>,
    pub lane: u16,
}

impl AllocWaiters {
    pub(super) fn new(host_lanes: usize) -> AllocWaiters {
        assert!(host_lanes > 0, "a device has at least one host lane");
        AllocWaiters {
            queue: VecDeque::new(),
            per_lane: vec![0; host_lanes],
        }
    }

    pub(super) fn push_back(&mut self, job: SpaceWaiter<WriteJob>, lane: u16) {
        debug_assert!(
            usize::from(lane) < self.per_lane.len(),
            "lane {lane} exists"
        );
        self.per_lane[usize::from(lane)] += 1;
        self.queue.push_back(Waiter { job, lane });
    }

    pub(super) fn pop_front(&mut self) -> Option<Waiter> {
        let w = self.queue.pop_front()?;
        self.uncount(w.lane);
        Some(w)
    }

    /// The `i`-th waiter in arrival order.
    pub(super) fn get(&self, i: usize) -> Option<Waiter> {
        self.queue.get(i).copied()
    }

    /// Takes the `i`-th waiter out of the queue.
    pub(super) fn remove(&mut self, i: usize) -> Waiter {
        let w = self
            .queue
            .remove(i)
            .expect("a waiter at a position below len()");
        self.uncount(w.lane);
        w
    }

    fn uncount(&mut self, lane: u16) {
        let n = &mut self.per_lane[usize::from(lane)];
        assert!(
            *n > 0,
            "lane {lane}'s waiter count matches its queue entries"
        );
        *n -= 1;
    }

    pub(super) fn len(&self) -> usize {
        self.queue.len()
    }

    /// Host lanes (with or without waiters).
    pub(super) fn lanes(&self) -> usize {
        self.per_lane.len()
    }

    pub(super) fn lane_has_waiters(&self, lane: u16) -> bool {
        self.per_lane[usize::from(lane)] > 0
    }

    /// Lanes with at least one waiter, in lane order.
    pub(super) fn waiting_lanes(&self) -> impl Iterator<Item = u16> + '_ {
        self.per_lane
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(l, _)| u16::try_from(l).expect("host lanes fit a u16"))
    }

    pub(super) fn contains(&self, job: SpaceWaiter<WriteJob>) -> bool {
        self.queue.iter().any(|w| w.job == job)
    }

    /// The per-lane counts agree with the queue.
    pub(super) fn check(&self) {
        let mut counted = vec![0u32; self.per_lane.len()];
        for w in &self.queue {
            counted[usize::from(w.lane)] += 1;
        }
        assert_eq!(counted, self.per_lane, "per-lane waiter counts");
    }
}

#[cfg(test)]
mod tests {
    use super::super::jobs::{FillJob, FillPhase, FillStream, Slab};
    use super::*;

    fn waiting_fill(fills: &mut Slab<FillJob>, lane: u16) -> SpaceWaiter<WriteJob> {
        SpaceWaiter::Fill(fills.insert(FillJob {
            stream: FillStream::Host(lane),
            phase: FillPhase::WaitAlloc,
            units: Vec::new(),
            rows: 1,
            buf: Vec::new(),
            dest: None,
        }))
    }

    #[test]
    fn counts_follow_pushes_and_removals_in_arrival_order() {
        let mut fills = Slab::default();
        let (a, b, c) = (
            waiting_fill(&mut fills, 0),
            waiting_fill(&mut fills, 2),
            waiting_fill(&mut fills, 2),
        );
        let mut w = AllocWaiters::new(3);
        w.push_back(a, 0);
        w.push_back(b, 2);
        w.push_back(c, 2);
        assert!(w.lane_has_waiters(2) && !w.lane_has_waiters(1));
        assert_eq!(w.waiting_lanes().collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!(w.remove(1), Waiter { job: b, lane: 2 });
        assert!(w.lane_has_waiters(2), "fill c still waits on lane 2");
        assert_eq!(w.pop_front(), Some(Waiter { job: a, lane: 0 }));
        assert!(!w.lane_has_waiters(0));
        assert!(w.contains(c) && !w.contains(a));
        assert_eq!(w.len(), 1);
        w.check();
    }
}
