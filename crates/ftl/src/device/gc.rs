//! Storengine's garbage collection. One victim superblock is copied at a time: its valid
//! page groups are read and programmed to the GC write points (keeping each group's write
//! sequence number, so a copy never outranks a newer host write), the mapping switches only
//! if the group was not overwritten meanwhile, and once nothing valid remains and no read
//! pins it, the victim's blocks are erased while the next victim's copies already run.
//! Blocks found bad are replaced by spares (the superblock waits for a checkpoint to record
//! the remap) or, with no spare left, the superblock retires.
//!
//! Triggers: *foreground* when free superblocks fall to `gc_foreground_free_superblocks` or
//! a host write waits for space; *background* after the device has been idle for
//! `gc_idle_threshold_us`, up to `gc_background_free_superblocks` free, yielding to host
//! commands between copies. Victims: superblocks with a failed program first, then the
//! coldest superblock when the erase-count spread exceeds the wear-leveling threshold, then
//! the configured policy. With several FDP reclaim groups each is counted and collected on
//! its own (its free superblocks, its victims, its GC lane), neediest group first.

use super::alloc::Stream;
use super::jobs::{
    CopyId, CopyJob, CopyPhase, EraseId, EraseJob, ErasePurpose, FlashJob, GroupProgram,
    SpaceWaiter,
};
use super::pageset::PageSet;
use super::{Device, Event};
use crate::config::GcPolicy;
use crate::layout::{Lgn, Pgn, SbId};
use crate::superblock::SbState;
use nearflash_flash::{FlashCompletion, FlashOp, OpKind, OpStatus};
use nearflash_sim::{Schedule, SimTime};

#[derive(Clone)]
pub struct GcRun {
    victim: SbId,
    cursor: u32,
    copies: u32,
    /// The run may open the last free superblock (see `gc_room`).
    rescue: bool,
    /// Which run this is (counted from 1): a step that places a GC fill can abandon the
    /// run and start another, possibly on the same victim, before it returns.
    serial: u64,
    /// The GC lane its copies go to (the victim's: `Device::gc_lane_of`).
    lane: u16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reason {
    Retiring,
    /// Idle time folds an SLC superblock into native ones (`slc.rs`).
    Fold,
    WearLeveling,
    Policy,
}

impl GcRun {
    pub(super) fn victim(&self) -> SbId {
        self.victim
    }
}

/// The GC run, if it is still run `serial`.
fn run_if(gc: &mut Option<GcRun>, serial: u64) -> Option<&mut GcRun> {
    gc.as_mut().filter(|r| r.serial == serial)
}

impl Device {
    /// The superblock GC is collecting, if any.
    #[cfg(test)]
    pub(super) fn gc_victim(&self) -> Option<SbId> {
        self.gc.as_ref().map(|r| r.victim)
    }

    fn foreground_needed(&self) -> bool {
        (0..self.groups()).any(|g| self.group_needs_foreground(g))
    }

    /// Reclaim group `g` needs foreground GC: a host write of one of its lanes waits for
    /// space, or its free superblocks fell to `gc_foreground_free_superblocks`. Each group
    /// keeps its own free superblocks (a handle writes, and GC copies, only on its group's
    /// dies), so each is collected as a drive of its own would be — FEMU's FDP (WARP) keeps a
    /// free RU list and GC per reclaim group (`ftl-fdp.c`).
    fn group_needs_foreground(&self, g: u32) -> bool {
        self.free_in_group(g) <= self.cfg.gc_foreground_free_superblocks
            || self.alloc_waiters.waiting_lanes().any(|lane| {
                self.stream_group(Stream::Host(lane)) == g && !self.host_points_have_room(lane)
            })
    }

    /// Reclaim groups in the order GC looks at them: those needing foreground GC first, then
    /// by fewest free superblocks, then by index (one group: just group 0).
    fn gc_group_order(&self) -> Vec<(u32, bool)> {
        let mut order: Vec<(u32, bool)> = (0..self.groups())
            .map(|g| (g, self.group_needs_foreground(g)))
            .collect();
        order.sort_by_key(|&(g, fg)| (!fg, self.free_in_group(g), g));
        order
    }

    /// Starts or advances garbage collection as far as it can go now. A victim whose last
    /// copy is done is handed to its erase and the next victim starts at once, so the dies
    /// keep copying while the erase runs instead of idling for tBERS between victims.
    pub(super) fn pump_gc(&mut self, q: &mut impl Schedule<Event>) {
        while self.pump_gc_once(q) {}
    }

    /// One step of `pump_gc`; true if it handed a victim to its erase (another may start).
    fn pump_gc_once(&mut self, q: &mut impl Schedule<Event>) -> bool {
        let now = q.now();
        // The run's last copies may have finished while the others wait for room that
        // nothing will free.
        if self.gc_stuck() {
            self.abandon_gc();
        }
        let foreground = self.foreground_needed();
        if self.gc.is_none() {
            // The first group (in `gc_group_order`) with a victim; a group's rescue run only
            // when it needs foreground GC and nothing else fits there.
            let mut pick = None;
            for (g, fg) in self.gc_group_order() {
                let free = self.free_in_group(g);
                let background = self.background_allowed
                    && (free < self.cfg.gc_background_free_superblocks || self.fold_pending());
                let wanted = fg || background;
                let normal = self.select_victim(now, wanted, false, g);
                let rescue = normal.is_none() && fg && free > 0;
                let found = if rescue {
                    self.select_victim(now, wanted, true, g)
                } else {
                    normal
                };
                if let Some((victim, reason)) = found {
                    pick = Some((victim, reason, rescue, fg));
                    break;
                }
            }
            let Some((victim, reason, rescue, foreground)) = pick else {
                // Nothing can be reclaimed (every candidate is full of valid data, or holds
                // more than GC has room to copy): the device is out of space — unless a
                // victim's erase or a checkpoint about to release held superblocks is still
                // running; its completion wakes the waiting writes and asks again.
                if self.has_alloc_waiters() && !self.space_on_the_way() {
                    self.fail_alloc_waiters(q);
                }
                return false;
            };
            self.sbs.get_mut(victim).state = SbState::Victim;
            self.stats.gc_runs += 1;
            if self.sbs.get(victim).slc {
                if let Some(s) = self.stats.slc.as_mut() {
                    s.fold_runs += 1;
                }
            }
            match reason {
                Reason::WearLeveling => self.stats.wear_leveling_runs += 1,
                Reason::Fold => {}
                _ if foreground => self.stats.gc_foreground_runs += 1,
                _ => self.stats.gc_background_runs += 1,
            }
            if rescue {
                self.stats.gc_rescue_runs += 1;
            }
            self.gc_serial += 1;
            self.gc = Some(GcRun {
                victim,
                cursor: 0,
                copies: 0,
                rescue,
                serial: self.gc_serial,
                lane: self.gc_lane_of(victim),
            });
        }
        let Some(run) = self.gc.as_mut() else {
            return false;
        };
        let victim = run.victim;
        let serial = run.serial;
        let pages = self.layout.groups_per_superblock();
        let yield_to_host = !foreground && self.host_inflight > 0;
        loop {
            // Placing a GC fill that finds no room abandons the run; the `pump_gc` inside the
            // abandonment already went as far as the next run can.
            let Some(run) = run_if(&mut self.gc, serial) else {
                return false;
            };
            if run.copies >= self.cfg.gc_parallel_copies || run.cursor >= pages || yield_to_host {
                break;
            }
            let pgn = self.layout.pgn(victim, run.cursor);
            run.cursor += 1;
            if self.layout.page_mapped() {
                if self.start_unit_copy(pgn, q) {
                    if let Some(run) = run_if(&mut self.gc, serial) {
                        run.copies += 1;
                    }
                }
            } else if let Some(lgn) = self.map.owner(pgn) {
                run.copies += 1;
                self.start_copy(pgn, lgn, q);
            }
        }
        let Some(run) = run_if(&mut self.gc, serial) else {
            return false;
        };
        if self.layout.page_mapped() && run.cursor >= pages && run.copies == 0 {
            // Every valid unit was read: program the last partial GC fill.
            self.seal_gc_tail(q);
        }
        // (Sealing the tail can abandon the run as above.)
        let Some(run) = run_if(&mut self.gc, serial) else {
            return false;
        };
        if run.cursor >= pages && run.copies == 0 && self.sbs.get(victim).pins == 0 {
            assert_eq!(
                self.map.valid_count(victim),
                0,
                "victim still holds valid groups"
            );
            // The victim stays in state `Victim` until its erase is done.
            let rescue = self.gc.as_ref().is_some_and(|r| r.rescue);
            self.gc = None;
            if rescue && self.layout.page_mapped() {
                self.erase_after_checkpoint(victim, q);
            } else {
                self.start_erase(victim, ErasePurpose::Gc, q);
            }
            return true;
        }
        false
    }

    /// Page groups GC can be sure to find for its copies: what is left in its open write
    /// points, plus free superblocks host writes may not take (they stop opening superblocks
    /// at `gc_foreground_free_superblocks`) — but never the last free superblock, unless
    /// `rescue`.
    ///
    /// The last free superblock is the crash reserve. A power cut loses the unwritten rest of
    /// every open superblock (recovery closes them), so a device cut with no free superblock
    /// would have nowhere to copy a victim to and could never write again. Only a *rescue*
    /// run, started when nothing fits otherwise, may open it, and only for its one victim:
    /// if power is cut before that victim is erased, recovery keeps the victim's copies of
    /// the data (the source wins ties, see `recovery`), the rescue destination holds nothing
    /// valid and is erased first, and the reserve comes back.
    fn gc_room(&self, lane: u16, rescue: bool) -> u32 {
        let pages = self.layout.groups_per_superblock();
        let usable = self
            .free_in_group(self.stream_group(Stream::Gc(lane)))
            .min(self.cfg.gc_foreground_free_superblocks);
        let free = if rescue {
            usable.min(1)
        } else {
            usable.saturating_sub(1)
        };
        self.gc_points_room(lane) + free * pages
    }

    /// The GC lane of the run in progress (GC copies' fills go there).
    pub(super) fn gc_run_lane(&self) -> u16 {
        self.gc.as_ref().expect("GC copies belong to a run").lane
    }

    /// Adds `delta` to the GC run's copies in flight (page-level mapping counts its copy
    /// reads and its sealed fills).
    pub(super) fn gc_run_copies_add(&mut self, delta: i32) {
        let run = self.gc.as_mut().expect("GC copies belong to a run");
        run.copies = run
            .copies
            .checked_add_signed(delta)
            .expect("GC copy count stays non-negative");
    }

    /// Whether GC may open the last free superblock now.
    pub(super) fn gc_rescuing(&self) -> bool {
        self.gc.as_ref().is_some_and(|r| r.rescue)
    }

    /// Picks the next victim in reclaim group `group` (every superblock without FDP), or
    /// `None` if nothing is worth collecting (`wanted` false means only forced victims —
    /// failed programs, wear-leveling — are considered). `rescue`: GC may count the last
    /// free superblock as room (see `gc_room`).
    fn select_victim(
        &mut self,
        now: SimTime,
        wanted: bool,
        rescue: bool,
        group: u32,
    ) -> Option<(SbId, Reason)> {
        let n = self.layout.data_superblocks();
        let full = self.layout.entries_per_superblock();
        // The room of each GC lane (a victim's copies go to its own lane's).
        let rooms: Vec<u32> = (0..self.gc_lanes.len() as u16)
            .map(|lane| self.gc_room(lane, rescue))
            .collect();
        // A victim whose valid entries do not fit in GC's room could never be erased: its
        // copies would wait for space forever.
        let candidate = |d: &Device, s: u32| {
            let info = d.sbs.get(SbId(s));
            d.sb_group(SbId(s)) == group
                && info.state == SbState::Closed
                && info.programs_inflight == 0
                && d.groups_for_entries(d.map.valid_count(SbId(s)))
                    <= rooms[d.gc_lane_of(SbId(s)) as usize]
        };
        if let Some(sb) = self.sbs.retiring().find(|sb| candidate(self, sb.0)) {
            return Some((sb, Reason::Retiring));
        }
        if !wanted {
            return None;
        }
        // Idle time folds the SLC cache before anything else (foreground GC, when space runs
        // short, goes by the policy, which may pick an SLC superblock too).
        if self.background_allowed && !self.foreground_needed() {
            if let Some(sb) = self.fold_victim(rooms[0]) {
                return Some((sb, Reason::Fold));
            }
        }
        if self.cfg.wear_leveling_spread_pe > 0 {
            let max_pe = (0..n)
                .filter(|&s| self.sbs.get(SbId(s)).state != SbState::Retired)
                .map(|s| self.sbs.get(SbId(s)).pe)
                .max()
                .unwrap_or(0);
            let coldest = (0..n)
                .filter(|&s| candidate(self, s))
                .min_by_key(|&s| (self.sbs.get(SbId(s)).pe, s));
            if let Some(s) = coldest {
                if max_pe - self.sbs.get(SbId(s)).pe > self.cfg.wear_leveling_spread_pe {
                    return Some((SbId(s), Reason::WearLeveling));
                }
            }
        }
        let reclaimable =
            |d: &Device, s: u32| candidate(d, s) && d.reclaim_gain(d.map.valid_count(SbId(s))) > 0;
        let pick = match self.cfg.gc_policy {
            GcPolicy::RoundRobin => {
                // Address order from the cursor on, wrapping (Storengine reclaims "from the
                // beginning of flash address space to the end"). A superblock whose groups
                // are all valid is passed over: collecting it would free nothing.
                let start = self.gc_rr_cursor;
                let found = (0..n)
                    .map(|i| (start + i) % n)
                    .find(|&s| reclaimable(self, s));
                if let Some(s) = found {
                    self.gc_rr_cursor = (s + 1) % n;
                }
                found
            }
            GcPolicy::Greedy => (0..n)
                .filter(|&s| reclaimable(self, s))
                .min_by_key(|&s| (self.map.valid_count(SbId(s)), s)),
            GcPolicy::CostBenefit => {
                let mut best: Option<(f64, u32)> = None;
                for s in (0..n).filter(|&s| reclaimable(self, s)) {
                    let u = f64::from(self.map.valid_count(SbId(s))) / f64::from(full);
                    let age = now.since(self.sbs.get(SbId(s)).last_write.min(now)).as_ns() + 1;
                    let score = if u == 0.0 {
                        f64::INFINITY
                    } else {
                        (1.0 - u) / (2.0 * u) * age as f64
                    };
                    if best.is_none_or(|(b, _)| score > b) {
                        best = Some((score, s));
                    }
                }
                best.map(|(_, s)| s)
            }
        };
        pick.map(|s| (SbId(s), Reason::Policy))
    }

    fn start_copy(&mut self, src: Pgn, lgn: Lgn, q: &mut impl Schedule<Event>) {
        let seq = self.map.seq(lgn);
        let group_bytes = self.layout.group_buf_bytes() as usize;
        let job = self.jobs.copies.insert(CopyJob {
            src,
            lgn,
            seq,
            phase: CopyPhase::Read,
            pending: 0,
            failed: false,
            lost: PageSet::default(),
            lost_to_media: PageSet::default(),
            dest: None,
            buf: if self.functional {
                vec![0u8; group_bytes]
            } else {
                Vec::new()
            },
        });
        self.sbs.get_mut(self.layout.sb_of(src)).pins += 1;
        let all = self.all_pages();
        let n = self.submit_group_read(FlashJob::Copy(job), src, &all, q);
        debug_assert_eq!(
            n, self.layout.geo.channels,
            "a copy reads every channel's pages"
        );
        let cp = self.jobs.copies.get_mut(job);
        cp.pending = n;
    }

    pub(super) fn on_copy_flash_done(
        &mut self,
        id: CopyId,
        c: FlashCompletion,
        q: &mut impl Schedule<Event>,
    ) {
        let cp = self.jobs.copies.get(id);
        match cp.phase {
            CopyPhase::Read => {
                let (lgn, src) = (cp.lgn, cp.src);
                self.on_media_read(&c, src);
                let failed = if self.functional {
                    let ps = self.layout.geo.page_size_bytes as usize;
                    let cp = self.jobs.copies.get_mut(id);
                    let mut buf = std::mem::take(&mut cp.buf);
                    let failed = self.for_each_read_page(&c, lgn, |k, page| {
                        buf[k as usize * ps..(k as usize + 1) * ps].copy_from_slice(page);
                    });
                    let cp = self.jobs.copies.get_mut(id);
                    cp.buf = buf;
                    failed
                } else {
                    self.timing_read_failures(&c, src)
                };
                if !failed.pages.minus(&failed.media).is_empty() {
                    self.stats.integrity_errors += 1;
                }
                let cp = self.jobs.copies.get_mut(id);
                cp.lost.union_with(&failed.pages);
                cp.lost_to_media.union_with(&failed.media);
                let cp = self.jobs.copies.get_mut(id);
                debug_assert!(cp.pending > 0, "a completion of an operation in flight");
                cp.pending -= 1;
                if cp.pending == 0 {
                    let src = cp.src;
                    self.unpin_quiet(src);
                    self.copy_alloc(id, q);
                }
            }
            CopyPhase::Program => {
                let failed = matches!(c.status, OpStatus::Failed { .. });
                if failed {
                    self.on_program_failure(cp.dest.expect("dest"));
                }
                let cp = self.jobs.copies.get_mut(id);
                cp.failed |= failed;
                debug_assert!(cp.pending > 0, "a completion of an operation in flight");
                cp.pending -= 1;
                if cp.pending > 0 {
                    return;
                }
                let (src, dest, lgn, seq, failed) =
                    (cp.src, cp.dest.expect("dest"), cp.lgn, cp.seq, cp.failed);
                self.program_done(dest);
                if failed {
                    self.copy_alloc(id, q);
                    return;
                }
                let cp = self.jobs.copies.remove(id);
                self.set_media_lost(dest, cp.lost_to_media);
                if self.map.lookup(lgn) == Some(src) {
                    self.note_copy(src);
                    self.map.map(lgn, dest, seq);
                    self.ckpt.dirty = true;
                    self.stats.gc_groups_copied += 1;
                    self.stats.gc_pages_copied += u64::from(self.layout.group_pages());
                } else {
                    self.stats.gc_copies_discarded += 1;
                }
                self.gc.as_mut().expect("gc run").copies -= 1;
                self.pump_gc(q);
            }
            CopyPhase::WaitAlloc => unreachable!("no flash op in flight"),
        }
    }

    /// Unpins without re-entering GC (the caller continues the GC state machine itself).
    fn unpin_quiet(&mut self, pgn: Pgn) {
        let info = self.sbs.get_mut(self.layout.sb_of(pgn));
        assert!(info.pins > 0);
        info.pins -= 1;
    }

    fn copy_alloc(&mut self, id: CopyId, q: &mut impl Schedule<Event>) {
        let now = q.now();
        if self.gc_alloc_waiters.is_empty() {
            if let Some(dest) = self.alloc_group(Stream::Gc(0), now) {
                self.copy_program(id, dest, q);
                return;
            }
        }
        // GC's room ran out under it (a destination failed a program and was closed early):
        // the copy waits for a superblock to come free.
        self.jobs.copies.get_mut(id).phase = CopyPhase::WaitAlloc;
        self.gc_alloc_waiters.push_back(SpaceWaiter::Group(id));
        self.abort_gc_if_stuck(q);
    }

    fn copy_program(&mut self, id: CopyId, dest: Pgn, q: &mut impl Schedule<Event>) {
        let cp = self.jobs.copies.get_mut(id);
        cp.phase = CopyPhase::Program;
        cp.dest = Some(dest);
        cp.failed = false;
        let n = self.submit_group_program(GroupProgram::Copy(id), dest, q);
        let cp = self.jobs.copies.get_mut(id);
        cp.pending = n;
    }

    /// If every copy of the GC run waits for a destination and nothing else can free a
    /// superblock (only the run's own erase or a checkpoint releasing held superblocks
    /// could), the run can never finish: give it up. Groups not yet copied stay valid in the
    /// victim, which can be chosen again later. This happens only when program failures
    /// shrank GC's room below what the victim was chosen for, so choosing again cannot loop
    /// without more failures.
    pub(super) fn abort_gc_if_stuck(&mut self, q: &mut impl Schedule<Event>) {
        if self.gc_stuck() {
            self.abandon_gc();
            // Choose again with the room as it is now: a smaller victim, or a rescue run, may
            // still fit; if nothing does, waiting host writes fail with `NoSpace`.
            self.pump_gc(q);
        }
    }

    /// Whether a superblock will come free without GC choosing another victim: a drained
    /// victim is being erased, or the checkpoint being written releases held superblocks —
    /// or a victim may appear: a closed superblock still being programmed is no candidate
    /// until its programs finish, and their completions ask GC again.
    /// (Stories, found by the configuration fuzzer: on tiny geometries writes failed with
    /// `NoSpace` while the erase that would have freed a superblock was still running; with
    /// one-shot programs on blocks of two word lines, while every closed superblock was
    /// still being programmed.)
    fn space_on_the_way(&self) -> bool {
        self.ckpt_releases_held()
            || (0..self.layout.data_superblocks()).any(|s| {
                let info = self.sbs.get(SbId(s));
                info.state == SbState::Victim
                    || (info.state == SbState::Closed && info.programs_inflight > 0)
            })
    }

    fn gc_stuck(&self) -> bool {
        let Some(run) = self.gc.as_ref() else {
            return false;
        };
        let waiting = self.gc_alloc_waiters.len() as u32;
        waiting > 0 && run.copies == waiting && !self.ckpt_releases_held()
    }

    fn abandon_gc(&mut self) {
        let run = self.gc.take().expect("gc run");
        while let Some(waiter) = self.gc_alloc_waiters.pop_front() {
            match waiter {
                SpaceWaiter::Group(id) => {
                    self.jobs.copies.remove(id);
                }
                SpaceWaiter::Fill(id) => {
                    self.jobs.fills.remove(id);
                }
            }
        }
        self.drop_gc_fill();
        self.sbs.get_mut(run.victim).state = SbState::Closed;
        self.stats.gc_runs_abandoned += 1;
    }

    /// Erases every good member block of `sb` (one multi-plane erase per die).
    pub(super) fn start_erase(
        &mut self,
        sb: SbId,
        purpose: ErasePurpose,
        q: &mut impl Schedule<Event>,
    ) {
        let job = self.jobs.erases.insert(EraseJob {
            sb,
            pending: 0,
            purpose,
        });
        let mut n = 0;
        for c in 0..self.layout.geo.channels {
            let mut plane_mask = 0u8;
            let mut plane_blocks = [0u32; nearflash_flash::backbone::PLANES_MAX];
            for l in 0..self.layout.geo.planes_per_die {
                let b = self.remap.block_id(&self.layout, sb, c, l);
                if !self.bb.nand().is_bad(b) {
                    plane_mask |= 1 << l;
                    plane_blocks[l as usize] = self.remap.block(sb, c, l);
                }
            }
            if plane_mask != 0 {
                self.bb.submit(
                    FlashOp {
                        kind: OpKind::Erase,
                        die: self.layout.die_of(sb, c),
                        page: 0,
                        pages: 1,
                        plane_mask,
                        plane_blocks,
                        tag: FlashJob::Erase(job).tag(),
                        data: Vec::new(),
                        oob: Vec::new(),
                        slc: false,
                    },
                    &mut q.map(Event::Flash),
                );
                n += 1;
            }
        }
        if n == 0 {
            self.finish_erase(job, q);
        } else {
            self.jobs.erases.get_mut(job).pending = n;
        }
    }

    pub(super) fn on_erase_done(
        &mut self,
        id: EraseId,
        c: FlashCompletion,
        q: &mut impl Schedule<Event>,
    ) {
        if let OpStatus::Failed { plane_mask } = c.status {
            self.stats.erase_failures += u64::from(plane_mask.count_ones());
        }
        let geo = &self.layout.geo;
        let block_bytes = u64::from(geo.pages_per_block) * u64::from(geo.page_size_bytes);
        self.fdp_note_media(0, u64::from(c.op.plane_mask.count_ones()) * block_bytes);
        let e = self.jobs.erases.get_mut(id);
        debug_assert!(e.pending > 0, "a completion of an operation in flight");
        e.pending -= 1;
        if e.pending == 0 {
            self.finish_erase(id, q);
        }
    }

    /// Replaces bad members of `sb` with spares. Returns (remapped any, out of spares).
    pub(crate) fn remap_bad_members(&mut self, sb: SbId) -> (bool, bool) {
        let (mut remapped, mut exhausted) = (false, false);
        let planes = self.layout.geo.planes_per_die;
        for c in 0..self.layout.geo.channels {
            for l in 0..planes {
                let b = self.remap.block_id(&self.layout, sb, c, l);
                if !self.bb.nand().is_bad(b) {
                    continue;
                }
                let die = self.layout.die_of(sb, c);
                let pool = &mut self.spares[(die.0 * planes + l) as usize];
                match pool.pop() {
                    Some(row) => {
                        self.remap.set(sb, c, l, row);
                        self.stats.blocks_remapped += 1;
                        remapped = true;
                    }
                    None => exhausted = true,
                }
            }
        }
        (remapped, exhausted)
    }

    /// Largest erase count over the members of `sb`.
    pub(crate) fn sb_pe(&self, sb: SbId) -> u32 {
        let mut pe = 0;
        for c in 0..self.layout.geo.channels {
            for l in 0..self.layout.geo.planes_per_die {
                let b = self.remap.block_id(&self.layout, sb, c, l);
                pe = pe.max(self.bb.nand().pe_cycles(b));
            }
        }
        pe
    }

    fn finish_erase(&mut self, id: EraseId, q: &mut impl Schedule<Event>) {
        let e = self.jobs.erases.remove(id);
        let sb = e.sb;
        match e.purpose {
            ErasePurpose::Checkpoint => self.on_ckpt_erase_done(sb, q),
            ErasePurpose::Gc => {
                self.forget_media_lost(sb);
                self.sbs.set_slc(sb, false);
                let (remapped, exhausted) = self.remap_bad_members(sb);
                if remapped {
                    let owner = self.sbs.get(sb).ruh;
                    self.note_media_reallocated(sb, owner, q.now());
                }
                self.sbs.set_retiring(sb, false);
                let pe = self.sb_pe(sb);
                let info = self.sbs.get_mut(sb);
                info.pe = pe;
                if exhausted {
                    info.state = SbState::Retired;
                    self.stats.superblocks_retired += 1;
                } else if remapped {
                    info.state = SbState::Held;
                    self.request_checkpoint(q);
                } else {
                    self.sbs.release(sb);
                }
                self.wake_gc_waiters(q);
                self.wake_alloc_waiters(q);
                self.pump_gc(q);
            }
        }
    }

    /// GC copies that were waiting for a destination, in arrival order.
    pub(super) fn wake_gc_waiters(&mut self, q: &mut impl Schedule<Event>) {
        let now = q.now();
        while let Some(&waiter) = self.gc_alloc_waiters.front() {
            match waiter {
                SpaceWaiter::Fill(id) => {
                    let stream = self.jobs.fills.get(id).stream;
                    debug_assert!(!stream.is_host(), "GC's waiters are GC fills");
                    let Some((pgn, c)) = self.next_slice(stream, now) else {
                        break;
                    };
                    self.gc_alloc_waiters.pop_front();
                    self.program_fill(id, pgn, c, q);
                }
                SpaceWaiter::Group(id) => {
                    let Some(dest) = self.alloc_group(Stream::Gc(0), now) else {
                        break;
                    };
                    self.gc_alloc_waiters.pop_front();
                    self.copy_program(id, dest, q);
                }
            }
        }
        self.abort_gc_if_stuck(q);
    }
}
