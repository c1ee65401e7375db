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
//! O(1) per access: a hash index into a slab of nodes threaded on a doubly linked recency
//! list. The index is a `KeyMap` (one folded multiply per key; std's SipHash was over half
//! of this cache's time in a FlashAbacus profile). It is never iterated, so its hash decides
//! no result.

use nearflash_sim::KeyMap;

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Node {
    key: u64,
    dirty: bool,
    /// The kernel instance whose writes made the group dirty.
    owner: usize,
    /// Towards the least / most recently used end.
    older: u32,
    newer: u32,
}

/// A group pushed out of DDR3L; `dirty` groups must be written back to flash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Evicted {
    pub group: u64,
    pub dirty: bool,
    pub owner: usize,
}

#[derive(Clone, Debug)]
pub struct DdrCache {
    capacity_groups: u64,
    index: KeyMap<u64, u32>,
    nodes: Vec<Node>,
    free: Vec<u32>,
    /// Least and most recently used nodes.
    oldest: u32,
    newest: u32,
    hits: u64,
    misses: u64,
}

impl DdrCache {
    pub fn new(capacity_groups: u64) -> DdrCache {
        assert!(capacity_groups > 0, "DDR3L holds at least one group");
        DdrCache {
            capacity_groups,
            index: KeyMap::default(),
            nodes: Vec::new(),
            free: Vec::new(),
            oldest: NIL,
            newest: NIL,
            hits: 0,
            misses: 0,
        }
    }

    pub fn resident_groups(&self) -> u64 {
        self.index.len() as u64
    }

    /// (hits, misses) of reads so far.
    pub fn hit_counts(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }

    /// A unit reads `group`: true when it is resident (no flash read needed). A miss makes
    /// room (evictions go to `out`) and installs the group clean; the caller reads it.
    pub fn read(&mut self, group: u64, owner: usize, out: &mut Vec<Evicted>) -> bool {
        let hit = self.access(group, owner, false, out);
        if hit {
            self.hits += 1;
        } else {
            self.misses += 1;
        }
        hit
    }

    /// A unit writes `group` for `owner`: it becomes resident and dirty. Returns whether it
    /// was resident before.
    pub fn write(&mut self, group: u64, owner: usize, out: &mut Vec<Evicted>) -> bool {
        self.access(group, owner, true, out)
    }

    fn access(&mut self, group: u64, owner: usize, wrote: bool, out: &mut Vec<Evicted>) -> bool {
        if let Some(&n) = self.index.get(&group) {
            self.unlink(n);
            self.push_newest(n);
            let node = &mut self.nodes[n as usize];
            if wrote {
                node.dirty = true;
                node.owner = owner;
            }
            return true;
        }
        while self.index.len() as u64 >= self.capacity_groups {
            let victim = self.oldest;
            self.unlink(victim);
            let v = self.nodes[victim as usize];
            self.index.remove(&v.key);
            self.free.push(victim);
            out.push(Evicted {
                group: v.key,
                dirty: v.dirty,
                owner: v.owner,
            });
        }
        let node = Node {
            key: group,
            dirty: wrote,
            owner,
            older: NIL,
            newer: NIL,
        };
        let n = match self.free.pop() {
            Some(n) => {
                self.nodes[n as usize] = node;
                n
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        self.index.insert(group, n);
        self.push_newest(n);
        false
    }

    fn unlink(&mut self, n: u32) {
        let Node { older, newer, .. } = self.nodes[n as usize];
        match older {
            NIL => self.oldest = newer,
            o => self.nodes[o as usize].newer = newer,
        }
        match newer {
            NIL => self.newest = older,
            w => self.nodes[w as usize].older = older,
        }
    }

    fn push_newest(&mut self, n: u32) {
        let prev = self.newest;
        {
            let node = &mut self.nodes[n as usize];
            node.older = prev;
            node.newer = NIL;
        }
        match prev {
            NIL => self.oldest = n,
            p => self.nodes[p as usize].newer = n,
        }
        self.newest = n;
    }

    /// The dirty groups `owner` left in DDR3L, ascending, now marked clean (the caller writes
    /// them back).
    pub fn take_dirty(&mut self, owner: usize) -> Vec<u64> {
        let mut v = Vec::new();
        let mut n = self.oldest;
        while n != NIL {
            let node = &mut self.nodes[n as usize];
            if node.dirty && node.owner == owner {
                node.dirty = false;
                v.push(node.key);
            }
            n = node.newer;
        }
        v.sort_unstable();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn a_second_read_hits_and_the_least_recent_group_is_evicted() {
        let mut c = DdrCache::new(2);
        let mut ev = Vec::new();
        assert!(!c.read(1, 0, &mut ev));
        assert!(!c.write(2, 0, &mut ev));
        assert!(c.read(1, 0, &mut ev), "resident");
        // 2 is now least recent; it is dirty, so its eviction asks for a write-back.
        assert!(!c.read(3, 0, &mut ev));
        assert_eq!(
            ev,
            [Evicted {
                group: 2,
                dirty: true,
                owner: 0
            }]
        );
        assert_eq!(c.hit_counts(), (1, 2));
        assert_eq!(c.resident_groups(), 2);
    }

    #[test]
    fn take_dirty_returns_each_owners_groups_once_in_order() {
        let mut c = DdrCache::new(8);
        let mut ev = Vec::new();
        for g in [3u64, 0, 2, 1] {
            c.write(g, (g % 2) as usize, &mut ev);
        }
        assert_eq!(c.take_dirty(1), [1, 3]);
        assert!(c.take_dirty(1).is_empty());
        assert_eq!(c.take_dirty(0), [0, 2]);
    }

    /// Against a reference LRU (a map of last-use stamps): same hits, same evictions.
    #[test]
    fn matches_a_reference_lru_on_a_pseudo_random_sequence() {
        let mut c = DdrCache::new(16);
        let mut stamps: BTreeMap<u64, (u64, bool)> = BTreeMap::new();
        let mut x = 12345u64;
        for t in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let g = (x >> 33) % 40;
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
                    group: old,
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
}
