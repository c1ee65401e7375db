//! The evictable chunks by the last use of their oldest evictable page: an ordered map whose
//! least entry is kept apart. A stream evicting page after page from the oldest chunk moves
//! that chunk's key forward by a little each time; while it stays the least, the move is a
//! compare with the map's first key instead of a remove and an insert.

use super::ChunkKey;
use std::collections::BTreeMap;

/// Invariant: `head` is `None` only when `rest` is empty, and its stamp is below every stamp
/// in `rest`. Stamps are never reused, so no two chunks share one.
#[derive(Default)]
pub(super) struct LruIndex {
    head: Option<(u64, ChunkKey)>,
    rest: BTreeMap<u64, ChunkKey>,
}

impl LruIndex {
    /// The chunk with the least recently used evictable page, and that page's stamp.
    pub(super) fn first(&self) -> Option<(u64, ChunkKey)> {
        self.head
    }

    /// The stamp of the second least entry: the least of every chunk but the first's.
    pub(super) fn second_stamp(&self) -> Option<u64> {
        self.rest.first_key_value().map(|(&k, _)| k)
    }

    /// Moves chunk `ck` from stamp `old` to stamp `new` (`None`: not in the index).
    pub(super) fn reindex(&mut self, ck: ChunkKey, old: Option<u64>, new: Option<u64>) {
        match (old, new) {
            (Some(old), Some(new)) if self.head == Some((old, ck)) && self.stays_first(new) => {
                self.head = Some((new, ck));
            }
            _ => {
                if let Some(old) = old {
                    self.remove(old, ck);
                }
                if let Some(new) = new {
                    self.insert(new, ck);
                }
            }
        }
        debug_assert!(self.head.is_some() || self.rest.is_empty());
        debug_assert!(self
            .head
            .is_none_or(|(h, _)| self.rest.first_key_value().is_none_or(|(&k, _)| h < k)));
    }

    fn stays_first(&self, stamp: u64) -> bool {
        self.rest.first_key_value().is_none_or(|(&k, _)| stamp < k)
    }

    fn remove(&mut self, stamp: u64, ck: ChunkKey) {
        if self.head == Some((stamp, ck)) {
            self.head = self.rest.pop_first();
        } else {
            let was = self.rest.remove(&stamp);
            assert_eq!(was, Some(ck), "a chunk is indexed under its stamp");
        }
    }

    fn insert(&mut self, stamp: u64, ck: ChunkKey) {
        match self.head {
            Some((h, hk)) if stamp < h => {
                self.rest.insert(h, hk);
                self.head = Some((stamp, ck));
            }
            Some(_) => {
                let was = self.rest.insert(stamp, ck);
                assert!(was.is_none(), "stamps are never reused");
            }
            None => self.head = Some((stamp, ck)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ck(chunk: u64) -> ChunkKey {
        ChunkKey { file: 0, chunk }
    }

    proptest! {
        /// Story: whatever the moves, the index's first entry is the least stamp of a plain
        /// map of chunk → stamp.
        #[test]
        fn the_first_entry_is_the_least_stamp(moves in proptest::collection::vec((0u64..6, proptest::option::of(0u64..1000)), 1..300)) {
            let mut idx = LruIndex::default();
            let mut model: BTreeMap<u64, u64> = BTreeMap::new(); // chunk -> stamp
            let mut used = std::collections::BTreeSet::new();
            for (chunk, new) in moves {
                if new.is_some_and(|s| used.contains(&s)) {
                    continue; // stamps are never reused
                }
                let old = model.get(&chunk).copied();
                idx.reindex(ck(chunk), old, new);
                match new {
                    Some(s) => {
                        used.insert(s);
                        model.insert(chunk, s);
                    }
                    None => {
                        model.remove(&chunk);
                    }
                }
                let want = model.iter().map(|(&c, &s)| (s, ck(c))).min();
                prop_assert_eq!(idx.first(), want);
            }
        }
    }
}
