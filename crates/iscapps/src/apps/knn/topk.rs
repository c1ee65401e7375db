//! KNN's microblock 2 on the host: per query, a bounded max-heap keeps the K nearest
//! records (ties broken by record order: an equal distance never evicts an earlier
//! record), then the majority label (ties to the smallest label, as INSIDER's ordered
//! frequency map).

use std::collections::{BTreeMap, BinaryHeap};

/// Heap entries order by (distance, record index); the label rides along.
type Entry = (u32, u64, u32);

/// One query's K nearest, fed record by record.
pub struct TopK {
    k: usize,
    heap: BinaryHeap<Entry>,
}

impl TopK {
    pub fn new(k: usize) -> TopK {
        TopK {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    pub fn offer(&mut self, distance: u32, record_index: u64, label: u32) {
        let e = (distance, record_index, label);
        if self.heap.len() < self.k {
            self.heap.push(e);
        } else if self.heap.peek().is_some_and(|top| e < *top) {
            self.heap.pop();
            self.heap.push(e);
        }
    }

    /// The majority label of the K nearest.
    pub fn vote(&self) -> Option<u32> {
        let mut freq: BTreeMap<u32, u32> = BTreeMap::new();
        for &(_, _, label) in self.heap.iter() {
            *freq.entry(label).or_default() += 1;
        }
        let mut best: Option<(u32, u32)> = None;
        for (label, n) in freq {
            if best.is_none_or(|(_, m)| n > m) {
                best = Some((label, n));
            }
        }
        best.map(|(label, _)| label)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_distances_keep_the_earlier_record_and_vote_ties_go_to_the_smaller_label() {
        let mut t = TopK::new(2);
        t.offer(5, 0, 7);
        t.offer(3, 1, 9);
        t.offer(5, 2, 1); // ties the kept (5, record 0): does not evict it
        assert_eq!(t.vote(), Some(7));
        t.offer(1, 3, 7); // evicts (5, 0): kept labels 9 and 7, one vote each
        assert_eq!(t.vote(), Some(7));
        assert_eq!(TopK::new(3).vote(), None);
    }
}
