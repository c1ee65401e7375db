//! The one least-recently-used order every cache of the simulator keeps: FlashAbacus's DDR3L
//! page-group cache (`accel::ddr_cache`), the FTL's cached mapping table (`ftl` `cmt.rs`),
//! the file system's buffer cache and Hayagui's AccelFS caches. What a cache holds and when
//! it evicts (its capacity, dirtiness, pins) stays with the cache; this crate keeps only the
//! order of use.
//!
//! [`Recency`] orders keys `0..keys` (a cache numbers what it may hold densely: page groups,
//! translation units, blocks, chunks) on a circular doubly linked list threaded through one
//! table of links per key: O(1) to touch, remove or take the oldest, no allocation per
//! access, and no ordered map of stamps. Slot 0 of the table is the list's sentinel — its
//! `newer` neighbour is the least recently used key's slot, its `older` one the most recently
//! used's — so splicing needs no test for the ends; key `k` lives in slot `k + 1`. A table
//! allocated zeroed costs no memory for the pages of keys never touched.
//!
//! [`Keyed`] is the same order over sparse keys (block numbers of a large device, file
//! offsets): each key on the list holds a slot of a `Recency` whose slots are recycled, found
//! through a hash map, so memory follows the keys held, not the key space.
//!
//! The order is exactly that of last-use stamps (a key's stamp being the count of touches
//! when it was last touched): the property test below checks it against that reference.

/// A key's place on the list: the slots towards the least and the most recently used end.
#[derive(Clone, Copy, Debug, Default)]
struct Links {
    older: u32,
    newer: u32,
}

/// The sentinel's slot.
const SENTINEL: u32 = 0;

/// Keys `0..keys()` in the order of their last use.
#[derive(Clone, Debug)]
pub struct Recency {
    /// Slot 0: the sentinel; slot `k + 1`: key `k`.
    links: Vec<Links>,
    /// Bit `k` set ⇔ key `k` is on the list (a lone key's links equal an absent one's).
    present: Vec<u64>,
    len: u32,
}

impl Recency {
    /// An empty order over keys `0..keys`.
    pub fn new(keys: u32) -> Recency {
        let mut r = Recency {
            links: Vec::new(),
            present: Vec::new(),
            len: 0,
        };
        r.grow(keys);
        r
    }

    /// Number of keys the order can hold (`0..keys()`).
    pub fn keys(&self) -> u32 {
        (self.links.len() - 1) as u32
    }

    /// Makes room for keys `0..keys` (never shrinks).
    pub fn grow(&mut self, keys: u32) {
        let slots = keys as usize + 1;
        if slots > self.links.len() {
            self.links.resize(slots, Links::default());
            self.present.resize((keys as usize).div_ceil(64), 0);
        }
    }

    /// Keys on the list.
    pub fn len(&self) -> u32 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn contains(&self, key: u32) -> bool {
        self.present
            .get(key as usize / 64)
            .is_some_and(|w| w & (1 << (key % 64)) != 0)
    }

    /// Makes `key` the most recently used (putting it on the list if absent); whether it was
    /// on the list.
    #[inline]
    pub fn touch(&mut self, key: u32) -> bool {
        assert!(key < self.keys(), "key {key} outside 0..{}", self.keys());
        let slot = key + 1;
        let was = self.contains(key);
        if was {
            if self.links[SENTINEL as usize].older == slot {
                return true;
            }
            self.unlink(slot);
        } else {
            self.present[key as usize / 64] |= 1 << (key % 64);
            self.len += 1;
        }
        self.push_newest(slot);
        was
    }

    /// Takes `key` off the list; whether it was on it.
    pub fn remove(&mut self, key: u32) -> bool {
        if !self.contains(key) {
            return false;
        }
        self.unlink(key + 1);
        self.present[key as usize / 64] &= !(1 << (key % 64));
        self.len -= 1;
        true
    }

    /// The least recently used key.
    #[inline]
    pub fn oldest(&self) -> Option<u32> {
        match self.links[SENTINEL as usize].newer {
            SENTINEL => None,
            slot => Some(slot - 1),
        }
    }

    /// The most recently used key.
    pub fn newest(&self) -> Option<u32> {
        match self.links[SENTINEL as usize].older {
            SENTINEL => None,
            slot => Some(slot - 1),
        }
    }

    /// Takes the least recently used key off the list.
    pub fn pop_oldest(&mut self) -> Option<u32> {
        let key = self.oldest()?;
        self.remove(key);
        Some(key)
    }

    /// The keys from the least to the most recently used.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let mut slot = self.links[SENTINEL as usize].newer;
        std::iter::from_fn(move || {
            if slot == SENTINEL {
                return None;
            }
            let key = slot - 1;
            slot = self.links[slot as usize].newer;
            Some(key)
        })
    }

    /// Takes every key off the list.
    pub fn clear(&mut self) {
        self.links.fill(Links::default());
        self.present.fill(0);
        self.len = 0;
    }

    fn unlink(&mut self, slot: u32) {
        let Links { older, newer } = self.links[slot as usize];
        self.links[older as usize].newer = newer;
        self.links[newer as usize].older = older;
    }

    fn push_newest(&mut self, slot: u32) {
        let prev = self.links[SENTINEL as usize].older;
        self.links[slot as usize] = Links {
            older: prev,
            newer: SENTINEL,
        };
        self.links[prev as usize].newer = slot;
        self.links[SENTINEL as usize].older = slot;
    }

    /// Checks the list against the presence bits (tests and `check_invariants`; O(keys)).
    pub fn check(&self) {
        let listed: Vec<u32> = self.iter().take(self.len as usize + 1).collect();
        assert_eq!(listed.len() as u32, self.len, "the list holds len keys");
        let mut seen = vec![false; self.keys() as usize];
        for &k in &listed {
            assert!(self.contains(k), "a listed key {k} is marked present");
            assert!(!seen[k as usize], "key {k} listed once");
            seen[k as usize] = true;
        }
        let marked: u32 = self.present.iter().map(|w| w.count_ones()).sum();
        assert_eq!(marked, self.len, "every present key is listed");
        // Backwards, the same keys in reverse.
        let mut back = Vec::new();
        let mut slot = self.links[SENTINEL as usize].older;
        while slot != SENTINEL && back.len() <= listed.len() {
            back.push(slot - 1);
            slot = self.links[slot as usize].older;
        }
        back.reverse();
        assert_eq!(back, listed, "the links agree both ways");
    }
}

/// [`Recency`] over sparse keys: each key on the list holds a recycled slot.
#[derive(Clone, Debug)]
pub struct Keyed<K> {
    slot_of: std::collections::HashMap<K, u32>,
    /// Per slot: its key (meaningful while on the list).
    keys: Vec<K>,
    free: Vec<u32>,
    order: Recency,
}

impl<K: Copy + Eq + std::hash::Hash> Default for Keyed<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Copy + Eq + std::hash::Hash> Keyed<K> {
    pub fn new() -> Self {
        Keyed {
            slot_of: std::collections::HashMap::new(),
            keys: Vec::new(),
            free: Vec::new(),
            order: Recency::new(0),
        }
    }

    pub fn len(&self) -> usize {
        self.slot_of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slot_of.is_empty()
    }

    pub fn contains(&self, key: K) -> bool {
        self.slot_of.contains_key(&key)
    }

    /// Makes `key` the most recently used (putting it on the list if absent); whether it was
    /// on the list.
    pub fn touch(&mut self, key: K) -> bool {
        if let Some(&slot) = self.slot_of.get(&key) {
            self.order.touch(slot);
            return true;
        }
        let slot = match self.free.pop() {
            Some(slot) => {
                self.keys[slot as usize] = key;
                slot
            }
            None => {
                let slot = u32::try_from(self.keys.len()).expect("fewer keys than u32::MAX");
                self.keys.push(key);
                self.order.grow(slot + 1);
                slot
            }
        };
        self.slot_of.insert(key, slot);
        self.order.touch(slot);
        false
    }

    /// Takes `key` off the list; whether it was on it.
    pub fn remove(&mut self, key: K) -> bool {
        let Some(slot) = self.slot_of.remove(&key) else {
            return false;
        };
        self.order.remove(slot);
        self.free.push(slot);
        true
    }

    /// The least recently used key.
    pub fn oldest(&self) -> Option<K> {
        self.order.oldest().map(|slot| self.keys[slot as usize])
    }

    /// The keys from the least to the most recently used.
    pub fn iter(&self) -> impl Iterator<Item = K> + '_ {
        self.order.iter().map(|slot| self.keys[slot as usize])
    }

    /// Takes every key off the list.
    pub fn clear(&mut self) {
        self.slot_of.clear();
        self.keys.clear();
        self.free.clear();
        self.order = Recency::new(0);
    }

    /// Checks the list against the index (tests and `check_invariants`; O(keys held)).
    pub fn check(&self) {
        self.order.check();
        assert_eq!(
            self.order.len() as usize,
            self.slot_of.len(),
            "one slot per key"
        );
        for (&k, &slot) in &self.slot_of {
            assert!(self.order.contains(slot), "a key's slot is listed");
            assert!(self.keys[slot as usize] == k, "a slot names its key");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[test]
    fn the_least_recently_touched_key_comes_out_first() {
        let mut r = Recency::new(4);
        assert!(!r.touch(1));
        assert!(!r.touch(2));
        assert!(r.touch(1), "already listed");
        assert_eq!(r.oldest(), Some(2));
        assert_eq!(r.newest(), Some(1));
        assert_eq!(r.iter().collect::<Vec<_>>(), [2, 1]);
        assert_eq!(r.pop_oldest(), Some(2));
        assert_eq!(r.pop_oldest(), Some(1));
        assert_eq!(r.pop_oldest(), None);
        assert!(r.is_empty());
        r.check();
    }

    #[test]
    fn a_lone_key_removed_is_absent_and_the_list_grows_on_demand() {
        let mut r = Recency::new(1);
        r.touch(0);
        assert!(r.contains(0));
        assert!(r.remove(0));
        assert!(!r.contains(0) && !r.remove(0));
        r.grow(130);
        r.touch(129);
        r.touch(0);
        assert_eq!(r.iter().collect::<Vec<_>>(), [129, 0]);
        r.check();
        r.clear();
        assert!(r.is_empty() && r.oldest().is_none());
        r.check();
    }

    #[test]
    #[should_panic(expected = "outside")]
    fn a_key_outside_the_table_is_refused() {
        Recency::new(3).touch(3);
    }

    #[derive(Clone, Debug)]
    enum Op {
        Touch(u32),
        Remove(u32),
        Pop,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0u32..40).prop_map(Op::Touch),
            1 => (0u32..40).prop_map(Op::Remove),
            1 => Just(Op::Pop),
        ]
    }

    proptest! {
        /// Against last-use stamps in an ordered map (what the caches kept before): the same
        /// order after every operation.
        #[test]
        fn orders_keys_as_last_use_stamps_do(ops in proptest::collection::vec(op(), 0..400)) {
            let mut r = Recency::new(40);
            let mut by_stamp: BTreeMap<u64, u32> = BTreeMap::new();
            let mut stamp_of: BTreeMap<u32, u64> = BTreeMap::new();
            let mut clock = 0u64;
            for op in ops {
                match op {
                    Op::Touch(k) => {
                        let was = stamp_of.contains_key(&k);
                        if let Some(s) = stamp_of.remove(&k) {
                            by_stamp.remove(&s);
                        }
                        clock += 1;
                        by_stamp.insert(clock, k);
                        stamp_of.insert(k, clock);
                        prop_assert_eq!(r.touch(k), was);
                    }
                    Op::Remove(k) => {
                        let was = stamp_of.remove(&k).map(|s| by_stamp.remove(&s));
                        prop_assert_eq!(r.remove(k), was.is_some());
                    }
                    Op::Pop => {
                        let want = by_stamp.pop_first().map(|(_, k)| k);
                        if let Some(k) = want {
                            stamp_of.remove(&k);
                        }
                        prop_assert_eq!(r.pop_oldest(), want);
                    }
                }
                let order: Vec<u32> = by_stamp.values().copied().collect();
                prop_assert_eq!(r.iter().collect::<Vec<_>>(), order);
                prop_assert_eq!(r.len() as usize, stamp_of.len());
            }
            r.check();
        }

        /// `Keyed` over sparse keys orders them as `Recency` over dense ones does.
        #[test]
        fn keyed_orders_sparse_keys_as_recency_orders_dense_ones(ops in proptest::collection::vec(op(), 0..400)) {
            let mut dense = Recency::new(40);
            let mut sparse: Keyed<u64> = Keyed::new();
            let far = |k: u32| u64::from(k) * 1_000_003 + (1 << 40);
            for op in ops {
                match op {
                    Op::Touch(k) => prop_assert_eq!(sparse.touch(far(k)), dense.touch(k)),
                    Op::Remove(k) => prop_assert_eq!(sparse.remove(far(k)), dense.remove(k)),
                    Op::Pop => {
                        let want = dense.pop_oldest();
                        let got = sparse.oldest();
                        if let Some(k) = got {
                            sparse.remove(k);
                        }
                        prop_assert_eq!(got, want.map(far));
                    }
                }
                prop_assert_eq!(sparse.iter().collect::<Vec<_>>(), dense.iter().map(far).collect::<Vec<_>>());
            }
            sparse.check();
        }
    }
}
