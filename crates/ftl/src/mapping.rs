//! The mapping: logical entry → physical entry (the table Flashvisor keeps in scratchpad),
//! the reverse map GC uses to find valid entries, each entry's write sequence number, and
//! per-superblock valid counts. An entry is a page group under page-group mapping and a
//! 4 KiB unit under page-level mapping (`Lun` → `Pun`). Invariant: `l2p[g] = p ⇔ p2l[p] =
//! g`, and a superblock's valid count is the number of its entries that some logical entry
//! maps to.
//!
//! The tables store `index + 1`, so that an unmapped entry is a zero. All three are
//! `LazyTable`s: a few random writes over a large device allocate leaves near them only,
//! instead of making the kernel zero nearly every page of a dense table, and a drive written
//! in order keeps each 16-entry leaf as one arithmetic run (consecutive units fill
//! consecutive slots of a slice, with consecutive sequence numbers), so a fully written 1 TB
//! page-mapped drive's tables take about 1 GB instead of 4.

use crate::layout::{Lgn, Lun, Pgn, Pun, SbId};
use nearflash_sim::LazyTable;

/// How checkpoints spell "unmapped".
pub const UNMAPPED: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub struct Mapping {
    /// Physical entry + 1, or 0.
    l2p: LazyTable<u32>,
    seq: LazyTable<u64>,
    /// Logical entry + 1, or 0.
    p2l: LazyTable<u32>,
    valid: Vec<u32>,
    groups_per_sb: u32,
    /// Logical groups mapped (holding data).
    mapped: u64,
}

impl Mapping {
    pub fn new(logical_groups: u64, total_pgns: u32, superblocks: u32, groups_per_sb: u32) -> Self {
        Mapping {
            l2p: LazyTable::new(logical_groups as usize),
            seq: LazyTable::new(logical_groups as usize),
            p2l: LazyTable::new(total_pgns as usize),
            valid: vec![0; superblocks as usize],
            groups_per_sb,
            mapped: 0,
        }
    }

    pub fn logical_groups(&self) -> u64 {
        self.l2p.len() as u64
    }

    /// Logical groups that hold data (mapped to a physical group).
    pub fn mapped_groups(&self) -> u64 {
        self.mapped
    }

    pub fn lookup(&self, g: Lgn) -> Option<Pgn> {
        let p = self.l2p.get(g.0 as usize);
        (p != 0).then(|| Pgn(p - 1))
    }

    /// Page-level mapping: where unit `u` lives.
    pub fn lookup_unit(&self, u: Lun) -> Option<Pun> {
        self.lookup(Lgn(u.0)).map(|p| Pun(p.0))
    }

    /// Page-level mapping: the unit physical unit `p` holds, if it is the live copy.
    pub fn unit_owner(&self, p: Pun) -> Option<Lun> {
        self.owner(Pgn(p.0)).map(|g| Lun(g.0))
    }

    /// Page-level mapping: points unit `u` at `p` (version `seq`).
    pub fn map_unit(&mut self, u: Lun, p: Pun, seq: u64) {
        self.map(Lgn(u.0), Pgn(p.0), seq);
    }

    /// Sequence number of the mapped version of `g` (0 if never written).
    pub fn seq(&self, g: Lgn) -> u64 {
        self.seq.get(g.0 as usize)
    }

    /// The logical group physical group `p` holds, if it is the live copy.
    pub fn owner(&self, p: Pgn) -> Option<Lgn> {
        let g = self.p2l.get(p.0 as usize);
        (g != 0).then(|| Lgn(g - 1))
    }

    pub fn valid_count(&self, sb: SbId) -> u32 {
        self.valid[sb.0 as usize]
    }

    fn sb(&self, p: u32) -> usize {
        (p / self.groups_per_sb) as usize
    }

    /// Points `g` at `p` (version `seq`), invalidating the copy it pointed at before.
    pub fn map(&mut self, g: Lgn, p: Pgn, seq: u64) {
        assert_eq!(self.p2l.get(p.0 as usize), 0, "physical entry mapped twice");
        self.unmap(g);
        self.mapped += 1;
        self.l2p.set(g.0 as usize, p.0 + 1);
        self.seq.set(g.0 as usize, seq);
        self.p2l.set(p.0 as usize, g.0 + 1);
        let sb = self.sb(p.0);
        self.valid[sb] += 1;
        debug_assert!(self.valid[sb] <= self.groups_per_sb);
    }

    /// Forgets `g` (trim, or before remapping).
    pub fn unmap(&mut self, g: Lgn) {
        let old = self.l2p.get(g.0 as usize);
        if old != 0 {
            let old = old - 1;
            debug_assert_eq!(self.p2l.get(old as usize), g.0 + 1);
            self.p2l.set(old as usize, 0);
            let sb = self.sb(old);
            self.valid[sb] -= 1;
            self.mapped -= 1;
            self.l2p.set(g.0 as usize, 0);
        }
    }

    /// Records that `g`, unmapped, was trimmed after its version `seq` (recovery restores
    /// this from a checkpoint, so the next checkpoint keeps it).
    pub fn set_trimmed(&mut self, g: Lgn, seq: u64) {
        assert_eq!(
            self.l2p.get(g.0 as usize),
            0,
            "only an unmapped entry is trimmed"
        );
        self.seq.set(g.0 as usize, seq);
    }

    /// The logical → physical table as checkpoints spell it (`UNMAPPED` for none).
    pub fn l2p_snapshot(&self) -> Vec<u32> {
        self.l2p
            .iter()
            .map(|p| if p == 0 { UNMAPPED } else { p - 1 })
            .collect()
    }

    /// Every logical entry's sequence number (0 if never written), in order.
    pub fn seq_snapshot(&self) -> Vec<u64> {
        self.seq.iter().collect()
    }

    /// Bytes the logical→physical table occupies in scratchpad.
    pub fn table_bytes(&self) -> u64 {
        self.l2p.len() as u64 * crate::config::MAP_ENTRY_BYTES
    }

    /// Checks every invariant (tests and recovery call it; O(size)).
    pub fn check(&self) {
        let mut valid = vec![0u32; self.valid.len()];
        for (g, p) in self.l2p.iter().enumerate() {
            if p != 0 {
                assert_eq!(
                    self.p2l.get(p as usize - 1),
                    g as u32 + 1,
                    "p2l disagrees for entry {g}"
                );
                valid[self.sb(p - 1)] += 1;
            }
        }
        for (p, g) in self.p2l.iter().enumerate() {
            if g != 0 {
                assert_eq!(
                    self.l2p.get(g as usize - 1),
                    p as u32 + 1,
                    "l2p disagrees for physical entry {p}"
                );
            }
        }
        assert_eq!(valid, self.valid, "valid counts drifted");
        assert_eq!(
            self.l2p.count_nonzero() as u64,
            self.mapped,
            "mapped count drifted"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        /// Against a reference BTreeMap: any sequence of map/unmap keeps l2p, p2l and the valid
        /// counts consistent and agrees with the reference.
        #[test]
        fn mapping_agrees_with_reference_map(ops in proptest::collection::vec((0u32..16, 0u32..64, any::<bool>()), 1..300)) {
            let mut m = Mapping::new(16, 64, 8, 8);
            let mut reference: BTreeMap<u32, u32> = BTreeMap::new();
            let mut used: BTreeMap<u32, u32> = BTreeMap::new();
            for (seq, (g, p, trim)) in ops.into_iter().enumerate() {
                if trim {
                    m.unmap(Lgn(g));
                    if let Some(old) = reference.remove(&g) { used.remove(&old); }
                } else if !used.contains_key(&p) {
                    m.map(Lgn(g), Pgn(p), seq as u64);
                    if let Some(old) = reference.insert(g, p) { used.remove(&old); }
                    used.insert(p, g);
                }
                m.check();
                for g in 0..16 {
                    prop_assert_eq!(m.lookup(Lgn(g)).map(|p| p.0), reference.get(&g).copied());
                }
            }
        }
    }
}
