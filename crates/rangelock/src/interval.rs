//! An interval tree of lock requests: an AVL tree keyed by (start page, lock id) whose nodes
//! also hold the last page and access type (the paper's augmented red-black tree). Each node
//! records the largest last page in its subtree, over all entries and over write entries
//! only, so a search skips any subtree that cannot reach the queried range's first page.
//!
//! Costs, n entries: insert and remove O(log n); `any_conflict` O(log n) (the CLRS interval
//! search, which follows a single root-to-leaf path); `conflicting` O(min(n, (k + 1) log n))
//! for k results. Nodes live in an arena with a free list, so memory is bounded by the most
//! entries ever held at once; the caller (the lock table) enforces that bound.
//!
//! Faults tolerated: none of its own; the table validates ranges and ids before they get
//! here. `check` re-derives every height, balance and augmentation so debug builds catch a
//! broken rebalance at once.

use crate::{conflict, Access, LockId, PageRange};
use std::cmp::Ordering;

type Link = Option<usize>;
type Key = (u64, LockId);

#[derive(Clone, Debug)]
struct Node {
    range: PageRange,
    id: LockId,
    access: Access,
    left: Link,
    right: Link,
    height: u32,
    /// Largest `end_page` of any entry in this subtree.
    max_end: u64,
    /// Largest `end_page` of a write entry in this subtree: a read query only conflicts
    /// with writes, so it prunes on this instead.
    max_write_end: Option<u64>,
}

impl Node {
    fn key(&self) -> Key {
        (self.range.start_page, self.id)
    }

    /// The furthest page reached by an entry in this subtree that a query with `access`
    /// could conflict with.
    fn reach(&self, access: Access) -> Option<u64> {
        match access {
            Access::Write => Some(self.max_end),
            Access::Read => self.max_write_end,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct IntervalTree {
    nodes: Vec<Node>,
    free: Vec<usize>,
    root: Link,
    len: usize,
}

impl IntervalTree {
    pub(crate) fn insert(&mut self, range: PageRange, id: LockId, access: Access) {
        let node = Node {
            range,
            id,
            access,
            left: None,
            right: None,
            height: 1,
            max_end: range.end_page,
            max_write_end: (access == Access::Write).then_some(range.end_page),
        };
        let slot = match self.free.pop() {
            Some(slot) => {
                self.nodes[slot] = node;
                slot
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() - 1
            }
        };
        self.root = Some(self.insert_at(self.root, slot));
        self.len += 1;
    }

    /// Removes the entry with this start page and id; false if there is none.
    pub(crate) fn remove(&mut self, start_page: u64, id: LockId) -> bool {
        let (root, removed) = self.remove_at(self.root, (start_page, id));
        self.root = root;
        match removed {
            Some(slot) => {
                self.free.push(slot);
                self.len -= 1;
                true
            }
            None => false,
        }
    }

    /// Empties the tree but keeps the arena's capacity for reuse.
    pub(crate) fn clear(&mut self) {
        self.nodes.clear();
        self.free.clear();
        self.root = None;
        self.len = 0;
    }

    /// Whether any entry conflicts with a request for `range` with `access`.
    pub(crate) fn any_conflict(&self, range: PageRange, access: Access) -> bool {
        let mut cur = self.root;
        while let Some(n) = cur {
            let node = &self.nodes[n];
            if conflict((node.range, node.access), (range, access)) {
                return true;
            }
            // If the left subtree reaches the query's first page, a conflict, if any, is
            // there: were there none, the entry reaching furthest must start after the
            // query's last page, and everything to its right starts later still.
            cur = if self.reach(node.left, access) >= Some(range.start_page) {
                node.left
            } else {
                node.right
            };
        }
        false
    }

    /// Ids of the entries that conflict with a request for `range` with `access`, in order
    /// of (start page, id).
    pub(crate) fn conflicting(&self, range: PageRange, access: Access) -> Vec<LockId> {
        let mut out = Vec::new();
        self.collect(self.root, range, access, &mut out);
        out
    }

    /// Verifies order, AVL balance, heights and augmentations; returns the entry count.
    pub(crate) fn check(&self) -> usize {
        let (_, count) = self.check_at(self.root, None, None);
        assert_eq!(count, self.len, "interval tree length is stale");
        assert_eq!(
            self.nodes.len() - self.free.len(),
            self.len,
            "interval tree arena leaks slots"
        );
        count
    }

    fn reach(&self, link: Link, access: Access) -> Option<u64> {
        link.and_then(|n| self.nodes[n].reach(access))
    }

    fn collect(&self, link: Link, range: PageRange, access: Access, out: &mut Vec<LockId>) {
        let Some(n) = link else { return };
        let node = &self.nodes[n];
        if node.reach(access) < Some(range.start_page) {
            return;
        }
        self.collect(node.left, range, access, out);
        if conflict((node.range, node.access), (range, access)) {
            out.push(node.id);
        }
        // Entries to the right start no earlier than this one.
        if node.range.start_page <= range.end_page {
            self.collect(node.right, range, access, out);
        }
    }

    fn insert_at(&mut self, link: Link, new: usize) -> usize {
        let Some(n) = link else { return new };
        let key = self.nodes[new].key();
        debug_assert_ne!(key, self.nodes[n].key(), "duplicate interval tree key");
        if key < self.nodes[n].key() {
            let left = self.insert_at(self.nodes[n].left, new);
            self.nodes[n].left = Some(left);
        } else {
            let right = self.insert_at(self.nodes[n].right, new);
            self.nodes[n].right = Some(right);
        }
        self.rebalance(n)
    }

    /// Returns the subtree's new root and the slot of the removed node, if found.
    fn remove_at(&mut self, link: Link, key: Key) -> (Link, Option<usize>) {
        let Some(n) = link else {
            return (None, None);
        };
        match key.cmp(&self.nodes[n].key()) {
            Ordering::Less => {
                let (left, removed) = self.remove_at(self.nodes[n].left, key);
                self.nodes[n].left = left;
                (Some(self.rebalance(n)), removed)
            }
            Ordering::Greater => {
                let (right, removed) = self.remove_at(self.nodes[n].right, key);
                self.nodes[n].right = right;
                (Some(self.rebalance(n)), removed)
            }
            Ordering::Equal => {
                let Node { left, right, .. } = self.nodes[n];
                let replacement = match (left, right) {
                    (None, only) | (only, None) => only,
                    (Some(_), Some(right)) => {
                        // Splice the in-order successor into this node's place.
                        let (rest, succ) = self.detach_min(right);
                        self.nodes[succ].left = left;
                        self.nodes[succ].right = rest;
                        Some(self.rebalance(succ))
                    }
                };
                (replacement, Some(n))
            }
        }
    }

    /// Unlinks the leftmost node of the subtree at `n`; returns the rest and that node.
    fn detach_min(&mut self, n: usize) -> (Link, usize) {
        match self.nodes[n].left {
            None => (self.nodes[n].right, n),
            Some(left) => {
                let (rest, min) = self.detach_min(left);
                self.nodes[n].left = rest;
                (Some(self.rebalance(n)), min)
            }
        }
    }

    fn height(&self, link: Link) -> u32 {
        link.map_or(0, |n| self.nodes[n].height)
    }

    /// Recomputes `n`'s height and augmentations from its children.
    fn update(&mut self, n: usize) {
        let Node { left, right, .. } = self.nodes[n];
        let height = 1 + self.height(left).max(self.height(right));
        let mut max_end = self.nodes[n].range.end_page;
        let mut max_write_end =
            (self.nodes[n].access == Access::Write).then_some(self.nodes[n].range.end_page);
        for child in [left, right].into_iter().flatten() {
            max_end = max_end.max(self.nodes[child].max_end);
            max_write_end = max_write_end.max(self.nodes[child].max_write_end);
        }
        let node = &mut self.nodes[n];
        node.height = height;
        node.max_end = max_end;
        node.max_write_end = max_write_end;
    }

    fn rotate_right(&mut self, n: usize) -> usize {
        let l = self.nodes[n].left.expect("rotate_right needs a left child");
        self.nodes[n].left = self.nodes[l].right;
        self.nodes[l].right = Some(n);
        self.update(n);
        self.update(l);
        l
    }

    fn rotate_left(&mut self, n: usize) -> usize {
        let r = self.nodes[n]
            .right
            .expect("rotate_left needs a right child");
        self.nodes[n].right = self.nodes[r].left;
        self.nodes[r].left = Some(n);
        self.update(n);
        self.update(r);
        r
    }

    /// Restores the AVL balance at `n` (children already balanced); returns the new root.
    fn rebalance(&mut self, n: usize) -> usize {
        self.update(n);
        let Node { left, right, .. } = self.nodes[n];
        let (hl, hr) = (self.height(left), self.height(right));
        if hl > hr + 1 {
            let l = left.expect("taller side exists");
            if self.height(self.nodes[l].left) < self.height(self.nodes[l].right) {
                self.nodes[n].left = Some(self.rotate_left(l));
            }
            self.rotate_right(n)
        } else if hr > hl + 1 {
            let r = right.expect("taller side exists");
            if self.height(self.nodes[r].right) < self.height(self.nodes[r].left) {
                self.nodes[n].right = Some(self.rotate_right(r));
            }
            self.rotate_left(n)
        } else {
            n
        }
    }

    /// Returns (height, entry count) of the subtree, asserting every key lies in (lo, hi).
    fn check_at(&self, link: Link, lo: Option<Key>, hi: Option<Key>) -> (u32, usize) {
        let Some(n) = link else { return (0, 0) };
        let node = &self.nodes[n];
        let key = node.key();
        assert!(lo.is_none_or(|lo| lo < key), "interval tree out of order");
        assert!(hi.is_none_or(|hi| key < hi), "interval tree out of order");
        assert!(!node.range.is_inverted(), "inverted range in interval tree");
        let (hl, cl) = self.check_at(node.left, lo, Some(key));
        let (hr, cr) = self.check_at(node.right, Some(key), hi);
        assert!(hl.abs_diff(hr) <= 1, "interval tree unbalanced");
        assert_eq!(node.height, 1 + hl.max(hr), "stale height");
        let children = [node.left, node.right].into_iter().flatten();
        let max_end = children
            .clone()
            .map(|c| self.nodes[c].max_end)
            .fold(node.range.end_page, u64::max);
        let own_write = (node.access == Access::Write).then_some(node.range.end_page);
        let max_write_end = children
            .map(|c| self.nodes[c].max_write_end)
            .fold(own_write, Option::max);
        assert_eq!(node.max_end, max_end, "stale max_end");
        assert_eq!(node.max_write_end, max_write_end, "stale max_write_end");
        (node.height, cl + cr + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn range(start: u64, end: u64) -> PageRange {
        PageRange::new(start, end).unwrap()
    }

    #[test]
    fn read_query_ignores_overlapping_reads_but_finds_writes() {
        let mut tree = IntervalTree::default();
        tree.insert(range(0, 9), LockId(0), Access::Read);
        tree.insert(range(5, 14), LockId(1), Access::Read);
        tree.insert(range(20, 29), LockId(2), Access::Write);
        assert!(!tree.any_conflict(range(0, 19), Access::Read));
        assert!(tree.any_conflict(range(0, 20), Access::Read));
        assert_eq!(tree.conflicting(range(0, 29), Access::Read), [LockId(2)]);
        assert_eq!(
            tree.conflicting(range(9, 20), Access::Write),
            [LockId(0), LockId(1), LockId(2)]
        );
    }

    #[test]
    fn ascending_inserts_and_removes_stay_balanced() {
        let mut tree = IntervalTree::default();
        for i in 0..200 {
            tree.insert(range(i, i), LockId(i), Access::Write);
        }
        assert_eq!(tree.check(), 200);
        // AVL height bound for 200 nodes is 1.44 log2(202) ≈ 11.
        assert!(tree.height(tree.root) <= 11);
        for i in (0..200).step_by(2) {
            assert!(tree.remove(i, LockId(i)));
        }
        assert!(!tree.remove(0, LockId(0)), "already removed");
        assert_eq!(tree.check(), 100);
        assert_eq!(
            tree.conflicting(range(0, 5), Access::Read),
            [LockId(1), LockId(3), LockId(5)]
        );
    }

    proptest! {
        /// Inserts and removes in random order; after every step both queries agree with a
        /// linear scan and the tree's own invariants hold.
        #[test]
        fn tree_queries_match_linear_scan(
            ops in proptest::collection::vec(
                (0u64..64, 0u64..12, any::<bool>(), any::<bool>(), any::<prop::sample::Index>()),
                1..200,
            ),
            queries in proptest::collection::vec((0u64..70, 0u64..16, any::<bool>()), 1..8),
        ) {
            let mut tree = IntervalTree::default();
            let mut reference: Vec<(PageRange, LockId, Access)> = Vec::new();
            for (next_id, (start, span, write, remove, pick)) in ops.into_iter().enumerate() {
                if remove && !reference.is_empty() {
                    let (r, id, _) = reference.remove(pick.index(reference.len()));
                    prop_assert!(tree.remove(r.start_page, id));
                } else {
                    let access = if write { Access::Write } else { Access::Read };
                    let entry = (range(start, start + span), LockId(next_id as u64), access);
                    tree.insert(entry.0, entry.1, entry.2);
                    reference.push(entry);
                }
                prop_assert_eq!(tree.check(), reference.len());
                for &(start, span, write) in &queries {
                    let access = if write { Access::Write } else { Access::Read };
                    let q = range(start, start + span);
                    let mut expected: Vec<_> = reference
                        .iter()
                        .filter(|e| conflict((e.0, e.2), (q, access)))
                        .map(|e| (e.0.start_page, e.1))
                        .collect();
                    expected.sort();
                    let expected: Vec<LockId> = expected.into_iter().map(|(_, id)| id).collect();
                    prop_assert_eq!(tree.any_conflict(q, access), !expected.is_empty());
                    prop_assert_eq!(tree.conflicting(q, access), expected);
                }
            }
        }
    }
}
