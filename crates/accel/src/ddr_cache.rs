//! Flashvisor's DDR3L page-group cache (§4.3): data sections are brought from flash into
//! DDR3L, where the workers compute on them. A page group read by one microblock stays in
//! DDR3L for the next (ADI's time steps, bfs levels, nw diagonals read the same arrays again
//! and again), and a group written by a screen stays dirty in DDR3L until it is evicted or
//! its kernel finishes — then Flashvisor writes it back, so a kernel is reported complete
//! only once its results are on flash.
//!
//! Capacity is DDR3L's size in page groups less what the kernel descriptions occupy;
//! eviction is least-recently-used among groups not pinned by a unit that is reading or
//! computing on them. Ordered maps only: deterministic.

use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    stamp: u64,
    dirty: bool,
    /// The kernel instance whose writes made the group dirty.
    owner: usize,
    pins: u32,
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
    entries: BTreeMap<u64, Entry>,
    /// (stamp, group) of every unpinned entry: the eviction order.
    lru: BTreeSet<(u64, u64)>,
    clock: u64,
    hits: u64,
    misses: u64,
}

impl DdrCache {
    pub fn new(capacity_groups: u64) -> DdrCache {
        DdrCache {
            capacity_groups,
            entries: BTreeMap::new(),
            lru: BTreeSet::new(),
            clock: 0,
            hits: 0,
            misses: 0,
        }
    }

    pub fn capacity_groups(&self) -> u64 {
        self.capacity_groups
    }

    pub fn resident_groups(&self) -> u64 {
        self.entries.len() as u64
    }

    /// (hits, misses) of `pin_for_read` so far.
    pub fn hit_counts(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Pins `group` for a unit that will read it; returns true when it is already resident
    /// (no flash read needed). A miss makes room (evicting as needed, returned in `out`)
    /// and installs the group clean and pinned; the caller reads it from flash.
    pub fn pin_for_read(&mut self, group: u64, owner: usize, out: &mut Vec<Evicted>) -> bool {
        let hit = self.pin(group, owner, false, out);
        if hit {
            self.hits += 1;
        } else {
            self.misses += 1;
        }
        hit
    }

    /// Pins `group` for a unit that will write it (resident or not: a write needs no read
    /// of the old contents when the unit writes whole groups; partial writes of a
    /// non-resident group were read by `pin_for_read` first).
    pub fn pin_for_write(&mut self, group: u64, owner: usize, out: &mut Vec<Evicted>) {
        self.pin(group, owner, false, out);
    }

    fn pin(&mut self, group: u64, owner: usize, dirty: bool, out: &mut Vec<Evicted>) -> bool {
        let stamp = self.tick();
        if let Some(e) = self.entries.get_mut(&group) {
            if e.pins == 0 {
                self.lru.remove(&(e.stamp, group));
            }
            e.pins += 1;
            e.stamp = stamp;
            return true;
        }
        while self.entries.len() as u64 >= self.capacity_groups {
            let Some(&(s, victim)) = self.lru.iter().next() else {
                break; // everything resident is pinned: run over capacity rather than deadlock
            };
            self.lru.remove(&(s, victim));
            let e = self.entries.remove(&victim).expect("lru lists resident groups");
            out.push(Evicted {
                group: victim,
                dirty: e.dirty,
                owner: e.owner,
            });
        }
        self.entries.insert(
            group,
            Entry {
                stamp,
                dirty,
                owner,
                pins: 1,
            },
        );
        false
    }

    /// Releases a pin; `wrote` marks the group dirty for `owner`.
    pub fn unpin(&mut self, group: u64, owner: usize, wrote: bool) {
        let e = self.entries.get_mut(&group).expect("unpin of a pinned group");
        assert!(e.pins > 0, "unpin of an unpinned group");
        e.pins -= 1;
        if wrote {
            e.dirty = true;
            e.owner = owner;
        }
        if e.pins == 0 {
            self.lru.insert((e.stamp, group));
        }
    }

    /// The dirty groups `owner` left in DDR3L, now marked clean (the caller writes them back).
    pub fn take_dirty(&mut self, owner: usize) -> Vec<u64> {
        let mut v = Vec::new();
        for (&g, e) in self.entries.iter_mut() {
            if e.dirty && e.owner == owner {
                e.dirty = false;
                v.push(g);
            }
        }
        v
    }

    /// True when `group` is resident.
    pub fn contains(&self, group: u64) -> bool {
        self.entries.contains_key(&group)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_read_hits_and_the_least_recent_unpinned_group_is_evicted() {
        let mut c = DdrCache::new(2);
        let mut ev = Vec::new();
        assert!(!c.pin_for_read(1, 0, &mut ev));
        c.unpin(1, 0, false);
        assert!(!c.pin_for_read(2, 0, &mut ev));
        c.unpin(2, 0, true);
        assert!(c.pin_for_read(1, 0, &mut ev), "resident");
        c.unpin(1, 0, false);
        // 2 is now least recent; it is dirty, so its eviction asks for a write-back.
        assert!(!c.pin_for_read(3, 0, &mut ev));
        assert_eq!(
            ev,
            [Evicted {
                group: 2,
                dirty: true,
                owner: 0
            }]
        );
        assert_eq!(c.hit_counts(), (1, 3));
    }

    #[test]
    fn pinned_groups_are_never_evicted() {
        let mut c = DdrCache::new(1);
        let mut ev = Vec::new();
        c.pin_for_read(1, 0, &mut ev);
        c.pin_for_read(2, 0, &mut ev);
        assert!(ev.is_empty(), "1 is pinned: the cache runs over instead");
        assert_eq!(c.resident_groups(), 2);
        c.unpin(1, 0, false);
        c.unpin(2, 0, false);
        c.pin_for_read(3, 0, &mut ev);
        assert_eq!(ev.len(), 2, "back under capacity once unpinned");
    }

    #[test]
    fn take_dirty_returns_each_owners_groups_once() {
        let mut c = DdrCache::new(8);
        let mut ev = Vec::new();
        for g in 0..4 {
            c.pin_for_write(g, (g % 2) as usize, &mut ev);
            c.unpin(g, (g % 2) as usize, true);
        }
        assert_eq!(c.take_dirty(1), [1, 3]);
        assert!(c.take_dirty(1).is_empty());
        assert_eq!(c.take_dirty(0), [0, 2]);
    }
}
