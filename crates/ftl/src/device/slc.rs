//! The hybrid SLC write cache (`[ftl.slc_cache]`, off by default). Host writes take a page
//! group of a superblock opened in SLC mode (one bit per cell: it holds
//! `1 / bits_per_cell` of its page rows, programmed and read at the SLC-mode latencies)
//! while the cache has room, and a native (TLC) superblock otherwise. The cache's size in
//! superblocks is
//!
//! ```text
//! static + min(dynamic_max, ⌊(logical groups − groups holding data) / groups per superblock⌋)
//! ```
//!
//! — the static part always (it comes out of over-provisioning; validation checks it fits),
//! the dynamic part only while the free user capacity could hold it in native mode, so it
//! shrinks as the drive fills (Samsung's TurboWrite keeps its "Intelligent TurboWrite" region
//! in the free user capacity). A superblock counts against the cache from its opening in SLC
//! mode until its erase.
//!
//! Folding is garbage collection with an SLC superblock as the victim: its valid groups are
//! copied to GC's native write points (real backbone reads and programs) and it is erased.
//! It runs in idle time through the background-GC machinery (the idle timer, yielding to
//! host commands): after `gc_idle_threshold_us` of host silence the SLC host write points
//! are closed and every closed SLC superblock is folded, oldest first. Foreground GC may
//! also pick an SLC superblock when space runs short. Each page's spare-area record carries
//! the SLC flag (`oob.rs`), so recovery knows which superblocks are in SLC mode.

use super::alloc::Stream;
use super::Device;
use crate::layout::{Pgn, SbId};
use crate::superblock::SbState;
use nearflash_sim::SimTime;
use serde::Serialize;

/// The SLC cache's state at one moment (for reports).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SlcOccupancy {
    /// Superblocks in SLC mode (open, closed or being folded).
    pub superblocks: u32,
    /// The cache's size now, in superblocks and in host bytes (static + dynamic).
    pub budget_superblocks: u32,
    pub capacity_bytes: u64,
    /// Host data held in SLC superblocks (valid groups × group size).
    pub valid_bytes: u64,
}

impl Device {
    /// The cache's size now, in SLC-mode superblocks (see the module comment).
    pub(super) fn slc_budget_superblocks(&self) -> u32 {
        let c = &self.cfg.slc_cache;
        if !c.enabled {
            return 0;
        }
        let bits = c.bits_per_cell;
        let static_sbs = self
            .layout
            .slc_superblocks_for(c.static_capacity_bytes, bits);
        let dynamic_max = self
            .layout
            .slc_superblocks_for(c.dynamic_capacity_max_bytes, bits);
        let free_entries = self
            .layout
            .logical_entries()
            .saturating_sub(self.map.mapped_groups());
        let free_sbs = free_entries / u64::from(self.layout.entries_per_superblock());
        let dynamic = u64::from(dynamic_max).min(free_sbs) as u32;
        static_sbs.saturating_add(dynamic)
    }

    /// A page group for a host write: from the SLC cache while it has room, else native.
    /// `None` means wait (for a busy SLC point's program, or for GC).
    pub(super) fn alloc_host(&mut self, lane: u16, now: SimTime) -> Option<Pgn> {
        if self.cfg.slc_cache.enabled {
            if let Some(p) = self.alloc_group(Stream::Slc, now) {
                return Some(p);
            }
            if self.points_have_room(Stream::Slc) {
                // Its points are busy programming: wait for one rather than write natively.
                return None;
            }
        }
        self.alloc_group(Stream::Host(lane), now)
    }

    pub(super) fn note_slc_opened(&mut self) {
        let count = self.sbs.slc_count();
        if let Some(s) = self.stats.slc.as_mut() {
            s.superblocks_opened += 1;
            s.superblocks_peak = s.superblocks_peak.max(count);
        }
    }

    /// Counts a host group program that completed into `dest`.
    pub(super) fn note_host_program(&mut self, dest: Pgn) {
        self.note_host_program_bytes(dest, self.layout.group_bytes());
    }

    /// Counts a host program of `bytes` of host data that completed into `dest`.
    pub(super) fn note_host_program_bytes(&mut self, dest: Pgn, bytes: u64) {
        let slc = self.sbs.get(self.layout.sb_of(dest)).slc;
        if let Some(s) = self.stats.slc.as_mut() {
            if slc {
                s.slc_group_programs += 1;
                s.slc_write_bytes += bytes;
            } else {
                s.tlc_direct_group_programs += 1;
                s.tlc_direct_write_bytes += bytes;
            }
        }
    }

    /// Counts a GC copy out of `src` that took effect (a fold if `src` is in SLC mode).
    pub(super) fn note_copy(&mut self, src: Pgn) {
        if self.sbs.get(self.layout.sb_of(src)).slc {
            let pages = u64::from(self.layout.group_pages());
            if let Some(s) = self.stats.slc.as_mut() {
                s.fold_groups += 1;
                s.fold_pages += pages;
            }
        }
    }

    /// Idle: closes the SLC host write points with nothing in flight, so that their
    /// superblocks can be folded too (their unwritten rows stay erased until the erase).
    pub(super) fn close_idle_slc_points(&mut self) {
        if !self.cfg.slc_cache.enabled {
            return;
        }
        for i in 0..self.slc_lane.points.len() {
            if let Some(wp) = self.slc_lane.points[i] {
                if self.sbs.get(wp.sb).programs_inflight == 0 {
                    self.close_point(Stream::Slc, i, wp.sb);
                }
            }
        }
    }

    /// Whether idle time has folding to do: a closed SLC superblock.
    pub(super) fn fold_pending(&self) -> bool {
        self.cfg.slc_cache.enabled
            && self.sbs.slc_count() > 0
            && self.fold_victim(u32::MAX).is_some()
    }

    /// The oldest closed SLC superblock whose valid groups fit in `room`.
    pub(super) fn fold_victim(&self, room: u32) -> Option<SbId> {
        if self.sbs.slc_count() == 0 {
            return None;
        }
        (0..self.layout.data_superblocks())
            .map(SbId)
            .filter(|&sb| {
                let info = self.sbs.get(sb);
                info.slc
                    && info.state == SbState::Closed
                    && info.programs_inflight == 0
                    && self.groups_for_entries(self.map.valid_count(sb)) <= room
            })
            .min_by_key(|&sb| (self.sbs.get(sb).epoch, sb.0))
    }

    /// The SLC cache now; `None` when it is off.
    pub fn slc_occupancy(&self) -> Option<SlcOccupancy> {
        if !self.cfg.slc_cache.enabled {
            return None;
        }
        let mut valid = 0u64;
        for s in 0..self.layout.data_superblocks() {
            if self.sbs.get(SbId(s)).slc {
                valid += u64::from(self.map.valid_count(SbId(s)));
            }
        }
        let budget = self.slc_budget_superblocks();
        let per_sb = u64::from(
            self.layout
                .slc_groups_per_superblock(self.cfg.slc_cache.bits_per_cell),
        ) * self.layout.group_bytes();
        Some(SlcOccupancy {
            superblocks: self.sbs.slc_count(),
            budget_superblocks: budget,
            capacity_bytes: u64::from(budget) * per_sb,
            valid_bytes: valid * self.layout.unit_bytes(),
        })
    }
}
