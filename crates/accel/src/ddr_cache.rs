//! Flashvisor's DDR3L page-group cache (§4.3): data sections are brought from flash into
//! DDR3L, where the workers compute on them. A page group read by one microblock stays in
//! DDR3L for the next (ADI's time steps, bfs levels, nw diagonals read the same arrays again
//! and again), and a group written by a screen stays dirty in DDR3L until it is evicted or
//! its kernel finishes — then Flashvisor writes it back, so a kernel is reported complete
//! only once its results are on flash.
//!
//! Capacity is DDR3L's size in page groups less what the kernel descriptions occupy;
//! eviction is least-recently-used. Groups are not pinned while a unit uses them: a unit
//! whose footprint exceeds DDR3L streams through it.
//!
//! O(1) per access: the recency order is the shared LRU list (`nearflash_lru::Recency`) over
//! the groups' dense keys (the caller numbers the groups it may cache:
//! `dataflow::CacheKeys`), and each key's group state (dirtiness, owner) sits in a table
//! beside it. A hit on the newest group leaves the list as it is.

use nearflash_lru::Recency;

/// A resident group's state.
#[derive(Clone, Copy, Debug, Default)]
struct Group {
    dirty: bool,
    /// The kernel instance whose writes made the group dirty.
    owner: usize,
}

/// A group pushed out of DDR3L; `dirty` groups must be written back to flash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Evicted {
    pub key: u32,
    pub dirty: bool,
    pub owner: usize,
}

#[derive(Clone, Debug)]
pub struct DdrCache {
    capacity_groups: u64,
    /// The resident groups, least recently used first.
    order: Recency,
    /// Per key: its group's state (meaningful while resident).
    groups: Vec<Group>,
    hits: u64,
    misses: u64,
}

impl DdrCache {
    /// A cache of `capacity_groups` groups named by keys `0..keys`.
    pub fn new(capacity_groups: u64, keys: u32) -> DdrCache {
        assert!(capacity_groups > 0, "DDR3L holds at least one group");
        DdrCache {
            capacity_groups,
            order: Recency::new(keys),
            groups: vec![Group::default(); keys as usize],
            hits: 0,
            misses: 0,
        }
    }

    pub fn resident_groups(&self) -> u64 {
        u64::from(self.order.len())
    }

    /// (hits, misses) of reads so far.
    pub fn hit_counts(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }

    /// A unit reads group `key`: true when it is resident (no flash read needed). A miss
    /// makes room (evictions go to `out`) and installs the group clean; the caller reads it.
    #[inline]
    pub fn read(&mut self, key: u32, owner: usize, out: &mut Vec<Evicted>) -> bool {
        let hit = self.access(key, owner, false, out);
        if hit {
            self.hits += 1;
        } else {
            self.misses += 1;
        }
        hit
    }

    /// A unit writes group `key` for `owner`: it becomes resident and dirty. Returns whether
    /// it was resident before.
    #[inline]
    pub fn write(&mut self, key: u32, owner: usize, out: &mut Vec<Evicted>) -> bool {
        self.access(key, owner, true, out)
    }

    #[inline]
    fn access(&mut self, key: u32, owner: usize, wrote: bool, out: &mut Vec<Evicted>) -> bool {
        if !self.order.contains(key) {
            self.install(key, owner, wrote, out);
            return false;
        }
        self.order.touch(key);
        if wrote {
            self.groups[key as usize] = Group { dirty: true, owner };
        }
        true
    }

    /// A miss: evicts least recently used groups while DDR3L is full, then makes `key` the
    /// newest.
    #[inline(never)]
    fn install(&mut self, key: u32, owner: usize, wrote: bool, out: &mut Vec<Evicted>) {
        while self.resident_groups() >= self.capacity_groups {
            let victim = self.order.pop_oldest().expect("a full DDR3L holds groups");
            let v = self.groups[victim as usize];
            out.push(Evicted {
                key: victim,
                dirty: v.dirty,
                owner: v.owner,
            });
        }
        self.groups[key as usize] = Group {
            dirty: wrote,
            owner,
        };
        let was = self.order.touch(key);
        debug_assert!(!was, "installed only on a miss");
        debug_assert!(self.resident_groups() <= self.capacity_groups);
    }

    /// The dirty groups `owner` left in DDR3L, ascending by key, now marked clean (the
    /// caller writes them back).
    pub fn take_dirty(&mut self, owner: usize) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .order
            .iter()
            .filter(|&k| {
                let g = &self.groups[k as usize];
                g.dirty && g.owner == owner
            })
            .collect();
        for &k in &v {
            self.groups[k as usize].dirty = false;
        }
        v.sort_unstable();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[test]
    fn a_second_read_hits_and_the_least_recent_group_is_evicted() {
        let mut c = DdrCache::new(2, 4);
        let mut ev = Vec::new();
        assert!(!c.read(1, 0, &mut ev));
        assert!(!c.write(2, 0, &mut ev));
        assert!(c.read(1, 0, &mut ev), "resident");
        // 2 is now least recent; it is dirty, so its eviction asks for a write-back.
        assert!(!c.read(3, 0, &mut ev));
        assert_eq!(
            ev,
            [Evicted {
                key: 2,
                dirty: true,
                owner: 0
            }]
        );
        assert_eq!(c.hit_counts(), (1, 2));
        assert_eq!(c.resident_groups(), 2);
    }

    #[test]
    fn take_dirty_returns_each_owners_groups_once_in_order() {
        let mut c = DdrCache::new(8, 4);
        let mut ev = Vec::new();
        for g in [3u32, 0, 2, 1] {
            c.write(g, (g % 2) as usize, &mut ev);
        }
        assert_eq!(c.take_dirty(1), [1, 3]);
        assert!(c.take_dirty(1).is_empty());
        assert_eq!(c.take_dirty(0), [0, 2]);
    }

    /// Against a reference LRU (a map of last-use stamps): same hits, same evictions.
    #[test]
    fn matches_a_reference_lru_on_a_pseudo_random_sequence() {
        let mut c = DdrCache::new(16, 40);
        let mut stamps: BTreeMap<u32, (u64, bool)> = BTreeMap::new();
        let mut x = 12345u64;
        for t in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let g = ((x >> 33) % 40) as u32;
            let wrote = (x >> 20).is_multiple_of(3);
            let mut ev = Vec::new();
            let hit = if wrote {
                c.write(g, 0, &mut ev)
            } else {
                c.read(g, 0, &mut ev)
            };
            let ref_hit = stamps.contains_key(&g);
            let mut ref_ev = Vec::new();
            if !ref_hit && stamps.len() == 16 {
                let (&old, &(_, d)) = stamps.iter().min_by_key(|(_, (s, _))| *s).unwrap();
                stamps.remove(&old);
                ref_ev.push(Evicted {
                    key: old,
                    dirty: d,
                    owner: 0,
                });
            }
            let dirty = stamps.get(&g).is_some_and(|e| e.1) || wrote;
            stamps.insert(g, (t, dirty));
            assert_eq!(hit, ref_hit, "step {t}");
            assert_eq!(ev, ref_ev, "step {t}");
        }
    }

    /// The simplest LRU: resident groups in a `Vec` with their last-use stamps; a miss when
    /// full evicts the one with the least stamp.
    #[derive(Default)]
    struct ReferenceLru {
        /// (key, last use, dirty, owner)
        groups: Vec<(u32, u64, bool, usize)>,
        now: u64,
    }

    impl ReferenceLru {
        fn access(
            &mut self,
            capacity: usize,
            key: u32,
            owner: usize,
            wrote: bool,
        ) -> (bool, Vec<Evicted>) {
            self.now += 1;
            let mut ev = Vec::new();
            if let Some(e) = self.groups.iter_mut().find(|e| e.0 == key) {
                e.1 = self.now;
                if wrote {
                    (e.2, e.3) = (true, owner);
                }
                return (true, ev);
            }
            if self.groups.len() == capacity {
                let (at, _) = self
                    .groups
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, e)| e.1)
                    .unwrap();
                let (key, _, dirty, owner) = self.groups.remove(at);
                ev.push(Evicted { key, dirty, owner });
            }
            self.groups.push((key, self.now, wrote, owner));
            (false, ev)
        }

        fn take_dirty(&mut self, owner: usize) -> Vec<u32> {
            let mut v: Vec<u32> = Vec::new();
            for e in self.groups.iter_mut().filter(|e| e.2 && e.3 == owner) {
                e.2 = false;
                v.push(e.0);
            }
            v.sort_unstable();
            v
        }
    }

    #[derive(Clone, Copy, Debug)]
    enum Op {
        Read(u32, usize),
        Write(u32, usize),
        TakeDirty(usize),
    }

    fn op(keys: u32) -> impl Strategy<Value = Op> {
        prop_oneof![
            8 => (0..keys, 0..3usize).prop_map(|(k, o)| Op::Read(k, o)),
            4 => (0..keys, 0..3usize).prop_map(|(k, o)| Op::Write(k, o)),
            1 => (0..3usize).prop_map(Op::TakeDirty),
        ]
    }

    proptest! {
        /// Hits, evictions (their order, dirtiness and owner), take_dirty and the counts
        /// agree with the reference on random sequences, repeats of the newest group
        /// included.
        #[test]
        fn matches_a_vec_scanned_reference_lru(
            capacity in 1usize..12,
            ops in prop::collection::vec(op(24), 0..400),
        ) {
            let mut c = DdrCache::new(capacity as u64, 24);
            let mut r = ReferenceLru::default();
            let (mut hits, mut misses) = (0, 0);
            for (t, op) in ops.into_iter().enumerate() {
                let mut ev = Vec::new();
                match op {
                    Op::Read(k, o) => {
                        let hit = c.read(k, o, &mut ev);
                        let (ref_hit, ref_ev) = r.access(capacity, k, o, false);
                        prop_assert_eq!(hit, ref_hit, "step {}", t);
                        prop_assert_eq!(ev, ref_ev, "step {}", t);
                        if hit { hits += 1 } else { misses += 1 }
                    }
                    Op::Write(k, o) => {
                        let hit = c.write(k, o, &mut ev);
                        let (ref_hit, ref_ev) = r.access(capacity, k, o, true);
                        prop_assert_eq!(hit, ref_hit, "step {}", t);
                        prop_assert_eq!(ev, ref_ev, "step {}", t);
                    }
                    Op::TakeDirty(o) => {
                        prop_assert_eq!(c.take_dirty(o), r.take_dirty(o), "step {}", t);
                    }
                }
                prop_assert_eq!(c.resident_groups(), r.groups.len() as u64);
            }
            prop_assert_eq!(c.hit_counts(), (hits, misses));
        }
    }
}
