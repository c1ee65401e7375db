//! Superblock bookkeeping: each superblock's life-cycle state, its open epoch (bumped each
//! time it is opened for writing and recorded in every page's OOB, so recovery can tell a
//! superblock rewritten since the last checkpoint), the time of its last write (cost-benefit
//! age) and the free pools, one per way, ordered by erase count (dynamic wear-leveling takes
//! the least-worn superblock).

use crate::layout::SbId;
use nearflash_sim::SimTime;
use std::collections::BTreeSet;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SbState {
    /// Erased, in a free pool.
    Free,
    /// A write point is filling it.
    Open,
    /// Full (or closed early); holds data.
    Closed,
    /// Chosen by GC; its valid groups are being copied out.
    Victim,
    /// Erased after a block remap; kept out of the free pools until a checkpoint records the
    /// new remap table (recovery could not find the spare otherwise).
    Held,
    /// A member turned bad with no spare left: never used again.
    Retired,
    /// Belongs to a checkpoint slot.
    Checkpoint,
}

impl SbState {
    pub fn code(self) -> u8 {
        match self {
            SbState::Free => 0,
            SbState::Open => 1,
            SbState::Closed => 2,
            SbState::Victim => 3,
            SbState::Held => 4,
            SbState::Retired => 5,
            SbState::Checkpoint => 6,
        }
    }

    pub fn from_code(c: u8) -> Option<Self> {
        Some(match c {
            0 => SbState::Free,
            1 => SbState::Open,
            2 => SbState::Closed,
            3 => SbState::Victim,
            4 => SbState::Held,
            5 => SbState::Retired,
            6 => SbState::Checkpoint,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug)]
pub struct SbInfo {
    pub state: SbState,
    pub epoch: u64,
    pub last_write: SimTime,
    /// Erase count (max over member blocks), mirrored from the NAND after each erase.
    pub pe: u32,
    /// Operations in flight that read this superblock; it may not be erased until zero.
    pub pins: u32,
    /// Page groups allocated in it whose programs have not completed; GC may not pick it.
    pub programs_inflight: u32,
    /// Opened in SLC mode (the SLC write cache) and not erased since; set with
    /// `SbTable::set_slc`, which keeps the count.
    pub slc: bool,
    /// Flexible Data Placement: the reclaim unit handle whose data alone the superblock
    /// holds (set when a handle's host lane, or a persistently isolated handle's GC lane,
    /// opens it); `None` without FDP or for a GC superblock shared by initially isolated
    /// handles.
    pub ruh: Option<u8>,
}

#[derive(Clone)]
pub struct SbTable {
    pub info: Vec<SbInfo>,
    /// Free superblocks per way, keyed by (erase count, id).
    free: Vec<BTreeSet<(u32, u32)>>,
    free_count: u32,
    ways: u32,
    /// Superblocks a member of which failed a program: GC collects them first and remaps
    /// the bad block. A set, so the common case (none) costs GC nothing to check.
    retiring: BTreeSet<u32>,
    /// Superblocks in SLC mode (open, closed or being folded).
    slc_count: u32,
}

impl SbTable {
    pub fn new(superblocks: u32, ways: u32) -> Self {
        SbTable {
            info: vec![
                SbInfo {
                    state: SbState::Free,
                    epoch: 0,
                    last_write: SimTime::ZERO,
                    pe: 0,
                    pins: 0,
                    programs_inflight: 0,
                    slc: false,
                    ruh: None,
                };
                superblocks as usize
            ],
            free: vec![BTreeSet::new(); ways as usize],
            free_count: 0,
            ways,
            retiring: BTreeSet::new(),
            slc_count: 0,
        }
    }

    /// Marks `sb` as used in SLC mode (or no longer, after its erase).
    pub fn set_slc(&mut self, sb: SbId, slc: bool) {
        let info = &mut self.info[sb.0 as usize];
        if info.slc != slc {
            info.slc = slc;
            if slc {
                self.slc_count += 1;
            } else {
                self.slc_count -= 1;
            }
        }
    }

    /// Superblocks in SLC mode that are not free (the SLC cache's occupancy in superblocks).
    pub fn slc_count(&self) -> u32 {
        self.slc_count
    }

    pub fn get(&self, sb: SbId) -> &SbInfo {
        &self.info[sb.0 as usize]
    }

    pub fn get_mut(&mut self, sb: SbId) -> &mut SbInfo {
        &mut self.info[sb.0 as usize]
    }

    pub fn set_retiring(&mut self, sb: SbId, retiring: bool) {
        if retiring {
            self.retiring.insert(sb.0);
        } else {
            self.retiring.remove(&sb.0);
        }
    }

    /// Retiring superblocks in address order.
    pub fn retiring(&self) -> impl Iterator<Item = SbId> + '_ {
        self.retiring.iter().map(|&s| SbId(s))
    }

    pub fn free_count(&self) -> u32 {
        self.free_count
    }

    /// Puts an erased superblock into its way's free pool.
    pub fn release(&mut self, sb: SbId) {
        let ways = self.ways;
        let info = &mut self.info[sb.0 as usize];
        debug_assert!(
            !info.slc,
            "an SLC superblock is released only after its erase"
        );
        info.state = SbState::Free;
        let inserted = self.free[(sb.0 % ways) as usize].insert((info.pe, sb.0));
        assert!(inserted, "superblock {} freed twice", sb.0);
        self.free_count += 1;
    }

    /// Free superblocks on ways `ways` (a reclaim group's).
    pub fn free_in(&self, ways: std::ops::Range<u32>) -> u32 {
        let n: usize = ways.map(|w| self.free[w as usize].len()).sum();
        n as u32
    }

    /// Takes the least-worn free superblock, from `way` if it has one, else from the way of
    /// `ways` (the reclaim group of `way`: every way without FDP) with the most free
    /// superblocks.
    pub fn take(&mut self, way: u32, ways: std::ops::Range<u32>) -> Option<SbId> {
        assert!(ways.contains(&way) && ways.end <= self.ways);
        let w = if self.free[way as usize].is_empty() {
            ways.max_by_key(|&w| (self.free[w as usize].len(), u32::MAX - w))?
        } else {
            way
        };
        let (_, sb) = self.free[w as usize].pop_first()?;
        self.free_count -= 1;
        Some(SbId(sb))
    }

    /// Smallest erase count in the free pools (for the wear-leveling check).
    pub fn min_free_pe(&self) -> Option<u32> {
        self.free
            .iter()
            .filter_map(|f| f.first().map(|&(pe, _)| pe))
            .min()
    }
}
