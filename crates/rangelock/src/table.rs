//! The range lock table: held locks and the FIFO wait queue, each indexed twice — by id in
//! an ordered map (lookup, and FIFO order, since ids are assigned in request order) and by
//! start page in an interval tree (conflict search). The grant rule is the crate header's.
//!
//! Costs, n held and q queued: `acquire` O(log(n + q)); `release` and `cancel`
//! O(log n + q log(n + q)), since they rescan the whole queue — any waiter may have been
//! blocked only by the lock that left, or only by waiters ahead that are now granted;
//! `conflicts` O(min(n, (k + 1) log n)) for k results.
//!
//! Faults tolerated: every misuse (see the crate header) returns an error before anything
//! changes. The table never holds more than `max_locks` requests, held and queued together.

use crate::interval::IntervalTree;
use crate::{Access, Acquire, LockId, PageRange, RangeLockError};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug)]
struct Request {
    range: PageRange,
    access: Access,
}

#[derive(Clone, Debug)]
pub struct RangeLockTable {
    max_locks: usize,
    next_id: u64,
    held: BTreeMap<LockId, Request>,
    /// Waiting requests; ascending id order is arrival order, so this map is the FIFO.
    queued: BTreeMap<LockId, Request>,
    held_tree: IntervalTree,
    queued_tree: IntervalTree,
}

impl RangeLockTable {
    /// A table that holds at most `max_locks` requests, granted and queued together.
    pub fn new(max_locks: usize) -> Self {
        RangeLockTable {
            max_locks,
            next_id: 0,
            held: BTreeMap::new(),
            queued: BTreeMap::new(),
            held_tree: IntervalTree::default(),
            queued_tree: IntervalTree::default(),
        }
    }

    /// Requests `range` for `access`. Granted at once if it conflicts with no held lock and
    /// no waiting request; otherwise queued, to be granted by a later `release` or `cancel`.
    pub fn acquire(&mut self, range: PageRange, access: Access) -> Result<Acquire, RangeLockError> {
        // The fields are public, so a range may not have come through `PageRange::new`.
        PageRange::new(range.start_page, range.end_page)?;
        if self.held.len() + self.queued.len() >= self.max_locks {
            return Err(RangeLockError::TableFull {
                max_locks: self.max_locks,
            });
        }
        let id = LockId(self.next_id);
        self.next_id += 1;
        let request = Request { range, access };
        // Checking the queue too is what keeps a waiting writer from being starved.
        let blocked = self.held_tree.any_conflict(range, access)
            || self.queued_tree.any_conflict(range, access);
        let outcome = if blocked {
            self.queued.insert(id, request);
            self.queued_tree.insert(range, id, access);
            Acquire::Queued(id)
        } else {
            self.held.insert(id, request);
            self.held_tree.insert(range, id, access);
            Acquire::Granted(id)
        };
        self.check_invariants();
        Ok(outcome)
    }

    /// Releases a granted lock. Returns the waiting requests this granted, in grant (FIFO)
    /// order.
    pub fn release(&mut self, id: LockId) -> Result<Vec<LockId>, RangeLockError> {
        let Some(request) = self.held.remove(&id) else {
            return Err(if self.queued.contains_key(&id) {
                RangeLockError::StillQueued(id)
            } else {
                RangeLockError::UnknownLock(id)
            });
        };
        let removed = self.held_tree.remove(request.range.start_page, id);
        debug_assert!(removed, "held lock missing from the held tree");
        let granted = self.grant_waiters();
        self.check_invariants();
        Ok(granted)
    }

    /// Withdraws a waiting request. Returns the waiting requests this granted (ones that
    /// were blocked only by it), in grant (FIFO) order.
    pub fn cancel(&mut self, id: LockId) -> Result<Vec<LockId>, RangeLockError> {
        if self.queued.remove(&id).is_none() {
            return Err(if self.held.contains_key(&id) {
                RangeLockError::AlreadyGranted(id)
            } else {
                RangeLockError::UnknownLock(id)
            });
        }
        // `grant_waiters` rebuilds the queued tree from `queued`, which drops this request.
        let granted = self.grant_waiters();
        self.check_invariants();
        Ok(granted)
    }

    pub fn is_granted(&self, id: LockId) -> bool {
        self.held.contains_key(&id)
    }

    pub fn is_queued(&self, id: LockId) -> bool {
        self.queued.contains_key(&id)
    }

    pub fn held_count(&self) -> usize {
        self.held.len()
    }

    pub fn queued_count(&self) -> usize {
        self.queued.len()
    }

    pub fn max_locks(&self) -> usize {
        self.max_locks
    }

    /// The held locks a request for `range` with `access` would conflict with, in order of
    /// start page (then id). Waiting requests are not included. An inverted range covers no
    /// pages, so it conflicts with nothing.
    pub fn conflicts(&self, range: PageRange, access: Access) -> Vec<LockId> {
        if range.is_inverted() {
            return Vec::new();
        }
        self.held_tree.conflicting(range, access)
    }

    /// Scans the queue in FIFO order, granting each request that conflicts with no held
    /// lock and no request still waiting ahead of it. The queued tree is rebuilt on the way
    /// to hold exactly the requests still waiting ahead of the one being examined, so each
    /// test is a single O(log) search. One pass reaches the fixed point: a grant only adds
    /// to the held set, which cannot unblock anyone already passed over.
    fn grant_waiters(&mut self) -> Vec<LockId> {
        let mut granted = Vec::new();
        let (held, held_tree, ahead) = (&mut self.held, &mut self.held_tree, &mut self.queued_tree);
        ahead.clear();
        // `retain` visits in ascending id order, which is arrival order.
        self.queued.retain(|&id, request| {
            let (range, access) = (request.range, request.access);
            let blocked =
                held_tree.any_conflict(range, access) || ahead.any_conflict(range, access);
            if blocked {
                ahead.insert(range, id, access);
            } else {
                held.insert(id, *request);
                held_tree.insert(range, id, access);
                granted.push(id);
            }
            blocked
        });
        granted
    }

    /// Debug builds only: no two granted locks conflict, every waiting request is blocked
    /// by a held lock or by a request waiting ahead of it, and trees agree with the maps.
    fn check_invariants(&self) {
        if !cfg!(debug_assertions) {
            return;
        }
        assert!(self.held.len() + self.queued.len() <= self.max_locks);
        assert_eq!(self.held_tree.check(), self.held.len());
        assert_eq!(self.queued_tree.check(), self.queued.len());
        for (&id, r) in &self.held {
            assert!(id.0 < self.next_id && !self.queued.contains_key(&id));
            // A held write finds itself; anything else found is a conflicting grant.
            let others = self.held_tree.conflicting(r.range, r.access);
            assert!(
                others.iter().all(|&other| other == id),
                "granted {id} conflicts with granted {others:?}"
            );
        }
        for (&id, r) in &self.queued {
            assert!(id.0 < self.next_id);
            let blocked_by_held = self.held_tree.any_conflict(r.range, r.access);
            let blocked_ahead = self
                .queued_tree
                .conflicting(r.range, r.access)
                .iter()
                .any(|&other| other < id);
            assert!(
                blocked_by_held || blocked_ahead,
                "queued {id} is blocked by nothing"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use Access::{Read, Write};

    fn range(start: u64, end: u64) -> PageRange {
        PageRange::new(start, end).unwrap()
    }

    fn granted(outcome: Result<Acquire, RangeLockError>) -> LockId {
        match outcome {
            Ok(Acquire::Granted(id)) => id,
            other => panic!("expected a grant, got {other:?}"),
        }
    }

    fn queued(outcome: Result<Acquire, RangeLockError>) -> LockId {
        match outcome {
            Ok(Acquire::Queued(id)) => id,
            other => panic!("expected to queue, got {other:?}"),
        }
    }

    #[test]
    fn readers_share_overlapping_range() {
        let mut t = RangeLockTable::new(8);
        let a = granted(t.acquire(range(0, 9), Read));
        let b = granted(t.acquire(range(5, 14), Read));
        assert!(t.is_granted(a) && t.is_granted(b));
        assert_eq!((t.held_count(), t.queued_count()), (2, 0));
    }

    #[test]
    fn writer_waits_for_overlapping_reader() {
        let mut t = RangeLockTable::new(8);
        let r = granted(t.acquire(range(0, 9), Read));
        let w = queued(t.acquire(range(9, 20), Write));
        assert!(!t.is_granted(w) && t.is_queued(w));
        assert_eq!(t.release(r), Ok(vec![w]));
        assert!(t.is_granted(w));
    }

    #[test]
    fn reader_waits_for_overlapping_writer() {
        let mut t = RangeLockTable::new(8);
        let w = granted(t.acquire(range(10, 19), Write));
        let r = queued(t.acquire(range(0, 10), Read));
        assert_eq!(t.release(w), Ok(vec![r]));
    }

    #[test]
    fn write_write_overlap_conflicts() {
        let mut t = RangeLockTable::new(8);
        let a = granted(t.acquire(range(0, 9), Write));
        let b = queued(t.acquire(range(3, 3), Write));
        assert_eq!(t.conflicts(range(3, 3), Write), [a]);
        assert_eq!(t.release(a), Ok(vec![b]));
    }

    #[test]
    fn adjacent_ranges_do_not_conflict() {
        let mut t = RangeLockTable::new(8);
        granted(t.acquire(range(0, 9), Write));
        granted(t.acquire(range(10, 19), Write));
        granted(t.acquire(range(20, 20), Read));
        assert!(t.conflicts(range(21, 30), Write).is_empty());
    }

    #[test]
    fn unrelated_range_is_granted_while_others_wait() {
        let mut t = RangeLockTable::new(8);
        granted(t.acquire(range(0, 9), Write));
        queued(t.acquire(range(0, 9), Read));
        granted(t.acquire(range(50, 59), Write));
    }

    #[test]
    fn release_grants_waiters_in_fifo_order() {
        let mut t = RangeLockTable::new(8);
        let w = granted(t.acquire(range(0, 99), Write));
        // Disjoint waiters, all blocked only by `w`, arriving out of page order.
        let c = queued(t.acquire(range(60, 69), Write));
        let a = queued(t.acquire(range(0, 9), Read));
        let b = queued(t.acquire(range(30, 39), Write));
        assert_eq!(t.release(w), Ok(vec![c, a, b]));
        assert_eq!((t.held_count(), t.queued_count()), (3, 0));
    }

    #[test]
    fn release_grants_only_up_to_the_next_conflicting_waiter() {
        let mut t = RangeLockTable::new(8);
        let w = granted(t.acquire(range(0, 9), Write));
        let r1 = queued(t.acquire(range(0, 9), Read));
        let r2 = queued(t.acquire(range(5, 9), Read));
        let w2 = queued(t.acquire(range(5, 5), Write));
        let r3 = queued(t.acquire(range(0, 9), Read));
        // Both readers go together; the writer waits for them, and the reader behind it
        // waits for the writer.
        assert_eq!(t.release(w), Ok(vec![r1, r2]));
        assert!(t.is_queued(w2) && t.is_queued(r3));
        assert_eq!(t.release(r1), Ok(vec![]));
        assert_eq!(t.release(r2), Ok(vec![w2]));
        assert_eq!(t.release(w2), Ok(vec![r3]));
    }

    #[test]
    fn waiting_writer_is_not_starved_by_stream_of_readers() {
        let mut t = RangeLockTable::new(64);
        let early: Vec<LockId> = (0..4)
            .map(|i| granted(t.acquire(range(i, i + 10), Read)))
            .collect();
        let writer = queued(t.acquire(range(0, 20), Write));
        // Readers keep arriving, overlapping the held readers; each queues behind the writer.
        let mut late = Vec::new();
        for (i, &old) in early.iter().enumerate() {
            late.push(queued(t.acquire(range(i as u64, i as u64 + 10), Read)));
            late.push(queued(t.acquire(range(15, 15), Read)));
            let expected = if i + 1 == early.len() {
                vec![writer]
            } else {
                vec![]
            };
            assert_eq!(t.release(old), Ok(expected));
        }
        assert!(t.is_granted(writer));
        assert!(late.iter().all(|&r| t.is_queued(r)));
        assert_eq!(t.release(writer), Ok(late));
    }

    #[test]
    fn cancel_unblocks_requests_behind_it() {
        let mut t = RangeLockTable::new(8);
        let r = granted(t.acquire(range(0, 9), Read));
        let w = queued(t.acquire(range(5, 14), Write));
        // Overlaps only the waiting writer, so it waits behind it.
        let r2 = queued(t.acquire(range(12, 20), Read));
        let r3 = queued(t.acquire(range(0, 5), Read));
        assert_eq!(t.cancel(w), Ok(vec![r2, r3]));
        assert!(t.is_granted(r) && !t.is_queued(w) && !t.is_granted(w));
        assert_eq!(t.release(w), Err(RangeLockError::UnknownLock(w)));
    }

    #[test]
    fn unknown_id_is_an_error() {
        let mut t = RangeLockTable::new(8);
        assert_eq!(
            t.release(LockId(0)),
            Err(RangeLockError::UnknownLock(LockId(0)))
        );
        let a = granted(t.acquire(range(0, 0), Write));
        assert_eq!(t.release(a), Ok(vec![]));
        assert_eq!(t.release(a), Err(RangeLockError::UnknownLock(a)));
        assert_eq!(
            t.cancel(LockId(99)),
            Err(RangeLockError::UnknownLock(LockId(99)))
        );
        assert!(!t.is_granted(LockId(99)));
    }

    #[test]
    fn releasing_a_queued_request_is_an_error() {
        let mut t = RangeLockTable::new(8);
        granted(t.acquire(range(0, 9), Write));
        let w = queued(t.acquire(range(0, 9), Write));
        assert_eq!(t.release(w), Err(RangeLockError::StillQueued(w)));
        assert!(t.is_queued(w));
    }

    #[test]
    fn cancelling_a_granted_lock_is_an_error() {
        let mut t = RangeLockTable::new(8);
        let a = granted(t.acquire(range(0, 9), Write));
        assert_eq!(t.cancel(a), Err(RangeLockError::AlreadyGranted(a)));
        assert!(t.is_granted(a));
    }

    #[test]
    fn full_table_is_an_error() {
        let mut t = RangeLockTable::new(2);
        let a = granted(t.acquire(range(0, 9), Write));
        queued(t.acquire(range(0, 9), Read));
        // Queued requests count against the limit too.
        assert_eq!(
            t.acquire(range(50, 59), Read),
            Err(RangeLockError::TableFull { max_locks: 2 })
        );
        assert_eq!(t.release(a).map(|g| g.len()), Ok(1));
        granted(t.acquire(range(50, 59), Read));
        assert_eq!(
            RangeLockTable::new(0).acquire(range(0, 0), Read),
            Err(RangeLockError::TableFull { max_locks: 0 })
        );
    }

    #[test]
    fn inverted_range_is_an_error() {
        let inverted = RangeLockError::InvertedRange {
            start_page: 10,
            end_page: 9,
        };
        assert_eq!(PageRange::new(10, 9), Err(inverted.clone()));
        // A range built through the public fields is checked again on acquire.
        let mut t = RangeLockTable::new(8);
        let forged = PageRange {
            start_page: 10,
            end_page: 9,
        };
        assert_eq!(t.acquire(forged, Write), Err(inverted));
        granted(t.acquire(range(0, 20), Write));
        assert!(t.conflicts(forged, Write).is_empty());
        assert_eq!(t.held_count(), 1);
    }

    #[test]
    fn conflicts_lists_only_held_locks_that_conflict() {
        let mut t = RangeLockTable::new(8);
        let r = granted(t.acquire(range(0, 9), Read));
        let w = granted(t.acquire(range(20, 29), Write));
        queued(t.acquire(range(0, 29), Write));
        assert_eq!(t.conflicts(range(5, 25), Read), [w]);
        assert_eq!(t.conflicts(range(5, 25), Write), [r, w]);
        assert!(t.conflicts(range(10, 19), Write).is_empty());
    }

    #[test]
    fn ids_are_assigned_in_request_order() {
        let mut t = RangeLockTable::new(8);
        let ids: Vec<LockId> = (0..4)
            .map(|_| t.acquire(range(0, 0), Write).unwrap().id())
            .collect();
        assert_eq!(ids, [LockId(0), LockId(1), LockId(2), LockId(3)]);
        // A failed request consumes no id.
        let inverted = PageRange {
            start_page: 1,
            end_page: 0,
        };
        t.acquire(inverted, Read).unwrap_err();
        assert_eq!(t.acquire(range(1, 1), Read).map(Acquire::id), Ok(LockId(4)));
    }

    /// The naive reference: vectors in arrival order, every check a linear scan.
    struct Model {
        max_locks: usize,
        next_id: u64,
        held: Vec<(LockId, PageRange, Access)>,
        queued: Vec<(LockId, PageRange, Access)>,
    }

    fn model_conflict(a: &(LockId, PageRange, Access), range: PageRange, access: Access) -> bool {
        a.1.start_page <= range.end_page
            && range.start_page <= a.1.end_page
            && (a.2 == Write || access == Write)
    }

    impl Model {
        fn acquire(&mut self, range: PageRange, access: Access) -> Result<Acquire, RangeLockError> {
            if range.end_page < range.start_page {
                return Err(RangeLockError::InvertedRange {
                    start_page: range.start_page,
                    end_page: range.end_page,
                });
            }
            if self.held.len() + self.queued.len() >= self.max_locks {
                return Err(RangeLockError::TableFull {
                    max_locks: self.max_locks,
                });
            }
            let id = LockId(self.next_id);
            self.next_id += 1;
            let blocked = self
                .held
                .iter()
                .chain(&self.queued)
                .any(|e| model_conflict(e, range, access));
            if blocked {
                self.queued.push((id, range, access));
                Ok(Acquire::Queued(id))
            } else {
                self.held.push((id, range, access));
                Ok(Acquire::Granted(id))
            }
        }

        fn release(&mut self, id: LockId) -> Result<Vec<LockId>, RangeLockError> {
            match self.held.iter().position(|e| e.0 == id) {
                Some(i) => {
                    self.held.remove(i);
                    Ok(self.regrant())
                }
                None if self.queued.iter().any(|e| e.0 == id) => {
                    Err(RangeLockError::StillQueued(id))
                }
                None => Err(RangeLockError::UnknownLock(id)),
            }
        }

        fn cancel(&mut self, id: LockId) -> Result<Vec<LockId>, RangeLockError> {
            match self.queued.iter().position(|e| e.0 == id) {
                Some(i) => {
                    self.queued.remove(i);
                    Ok(self.regrant())
                }
                None if self.held.iter().any(|e| e.0 == id) => {
                    Err(RangeLockError::AlreadyGranted(id))
                }
                None => Err(RangeLockError::UnknownLock(id)),
            }
        }

        fn regrant(&mut self) -> Vec<LockId> {
            let mut still_queued = Vec::new();
            let mut granted = Vec::new();
            for e in std::mem::take(&mut self.queued) {
                let blocked = self
                    .held
                    .iter()
                    .chain(&still_queued)
                    .any(|h| model_conflict(h, e.1, e.2));
                if blocked {
                    still_queued.push(e);
                } else {
                    granted.push(e.0);
                    self.held.push(e);
                }
            }
            self.queued = still_queued;
            granted
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Acquire(PageRange, Access),
        Release(prop::sample::Index),
        Cancel(prop::sample::Index),
    }

    fn op_strategy() -> impl Strategy<Value = Op> {
        // Small page space and short ranges so that requests collide often; now and then an
        // inverted range, built through the public fields.
        let ranges =
            (0u64..32, 0u64..8, prop::bool::weighted(0.05)).prop_map(|(start, span, inverted)| {
                if inverted {
                    PageRange {
                        start_page: start + 1,
                        end_page: start,
                    }
                } else {
                    range(start, start + span)
                }
            });
        let access = prop_oneof![Just(Read), Just(Write)];
        prop_oneof![
            4 => (ranges, access).prop_map(|(r, a)| Op::Acquire(r, a)),
            3 => any::<prop::sample::Index>().prop_map(Op::Release),
            1 => any::<prop::sample::Index>().prop_map(Op::Cancel),
        ]
    }

    proptest! {
        /// Random acquire/release/cancel sequences make the same decisions as the naive
        /// model — outcomes, errors and grant lists — and leave the same granted and queued
        /// sets, in which no two granted locks conflict.
        #[test]
        fn table_matches_reference_model(
            max_locks in 1usize..12,
            ops in proptest::collection::vec(op_strategy(), 1..80),
        ) {
            let mut table = RangeLockTable::new(max_locks);
            let mut model = Model { max_locks, next_id: 0, held: Vec::new(), queued: Vec::new() };
            for op in ops {
                match op {
                    Op::Acquire(r, a) => prop_assert_eq!(table.acquire(r, a), model.acquire(r, a)),
                    // Picks any id issued so far, or the next one (never issued).
                    Op::Release(pick) => {
                        let id = LockId(pick.index(model.next_id as usize + 1) as u64);
                        prop_assert_eq!(table.release(id), model.release(id));
                    }
                    Op::Cancel(pick) => {
                        let id = LockId(pick.index(model.next_id as usize + 1) as u64);
                        prop_assert_eq!(table.cancel(id), model.cancel(id));
                    }
                }
                prop_assert_eq!(table.held_count(), model.held.len());
                prop_assert_eq!(table.queued_count(), model.queued.len());
                for e in &model.held {
                    prop_assert!(table.is_granted(e.0));
                    let found = table.conflicts(e.1, e.2);
                    prop_assert!(found.iter().all(|&other| other == e.0), "{:?} conflicts with {:?}", e.0, found);
                }
                for e in &model.queued {
                    prop_assert!(table.is_queued(e.0));
                }
                for (i, a) in model.held.iter().enumerate() {
                    for b in &model.held[i + 1..] {
                        prop_assert!(!model_conflict(a, b.1, b.2), "{:?} and {:?} both granted", a, b);
                    }
                }
            }
        }
    }
}
