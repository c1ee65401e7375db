//! The device firmware as a sans-IO state machine: host commands come in through `submit`,
//! simulation events through `handle`, and finished commands go out through
//! `take_completions`. Flashvisor's part (translation, group locks, allocation) is in
//! `host.rs` and `alloc.rs`; Storengine's part (GC, wear-leveling, bad blocks, checkpoints)
//! in `gc.rs` and `ckpt.rs`. Every flash access goes through the timed backbone, tagged with
//! the job it belongs to.

mod alloc;
mod ckpt;
mod cmt;
mod fdp;
mod gc;
mod host;
mod inflight;
mod jobs;
mod page;
mod pageset;
mod peek;
mod slc;
mod stats;
mod waiters;

pub use cmt::MappingCacheStats;
pub use fdp::{FdpStats, HandleStats, EVENT_DESCRIPTOR_BYTES, EVENT_TYPES};
pub use inflight::{InflightRequest, RequestPhase};
pub use page::PageMapStats;
pub use slc::SlcOccupancy;
pub use stats::{FtlStats, SlcStats};

use crate::config::FtlConfig;
use crate::layout::{Layout, RemapTable, SbId};
use crate::mapping::Mapping;
use crate::superblock::{SbState, SbTable};
use alloc::Lane;
use gc::GcRun;
use jobs::{FlashJob, Jobs, ReqState, Slab};
use nearflash_blockdev::{BlockCompletion, BlockRequest};
use nearflash_flash::{
    Backbone, ConfigError, FlashCompletion, FlashConfig, FlashEvent, Geometry, OpKind, PageStore,
};
use nearflash_sim::{Schedule, SimDuration, SimRng, SimTime, TraceEvent};
use pageset::PageSet;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Host requests the firmware admits at once unless set otherwise
/// ([`Device::set_admission_limit`]): 65,536, the most one NVMe submission queue holds
/// (NVM Express Base Specification 2.0, §3.1.3.1, CAP.MQES is a 16-bit count of entries) —
/// the same bound as the NVMe front end's `HELD_MAX` and Active Flash's
/// `foreground_waiting_max`. Every reproduction stays far below it (an NVMe front end admits
/// `queue_pairs × (queue_entries − 1)` at most: 1,023 on the presets).
pub const HOST_REQUESTS_MAX: u32 = 1 << 16;

/// Every event of the simulated device (and a slot for the host driver's own events).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Flash(FlashEvent),
    CheckpointTimer,
    /// Fires `gc_idle_threshold_us` after the device went idle; stale if the generation moved.
    IdleTimer(u64),
    /// Page-level mapping: the end of the instant in which the open host fill took its
    /// first unit — seal it.
    SealFill,
    /// A cached mapping table's translation unit came from the write buffer, or was never
    /// written: it is in DRAM.
    TranslationLoaded(u32),
}

impl From<FlashEvent> for Event {
    fn from(e: FlashEvent) -> Self {
        Event::Flash(e)
    }
}

impl TraceEvent for Event {
    fn hash_word(&self) -> u64 {
        match *self {
            Event::Flash(f) => f.hash_word(),
            Event::CheckpointTimer => 3 << 32,
            Event::IdleTimer(g) => 4 << 32 ^ g,
            Event::SealFill => 5 << 32,
            Event::TranslationLoaded(t) => 6 << 32 ^ u64::from(t),
        }
    }
}

/// Kinds of flash work, by the firmware job a flash operation belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FlashWork {
    /// A host read, or the read half of a partial-group write.
    HostRead,
    HostProgram,
    GcRead,
    GcProgram,
    /// A GC or checkpoint-slot erase.
    Erase,
    CheckpointProgram,
}

pub struct Device {
    pub(crate) layout: Layout,
    pub(crate) cfg: FtlConfig,
    pub(crate) bb: Backbone,
    pub(crate) map: Mapping,
    pub(crate) remap: RemapTable,
    pub(crate) sbs: SbTable,
    /// Unused spare blocks, per (die × planes + plane).
    pub(crate) spares: Vec<Vec<u32>>,
    pub(crate) functional: bool,
    /// Timing fidelity (no page data, so no spare-area markers): for each physical page group
    /// programmed with pages lost to an uncorrectable read (GC or a merge moved them), those
    /// pages. Reads of them fail as the marker makes them fail in functional fidelity. At
    /// most one entry per physical group; an erase of its superblock clears it.
    media_lost: BTreeMap<u32, PageSet>,
    reqs: Slab<ReqState>,
    jobs: Jobs,
    pub(crate) write_seq: u64,
    pub(crate) next_epoch: u64,
    /// Write points of the host lanes and of the GC lanes (`alloc.rs`: one of each, or
    /// with Flexible Data Placement one host lane per placement handle).
    host_lanes: Vec<Lane>,
    gc_lanes: Vec<Lane>,
    /// Host write points in SLC mode (the SLC write cache; unused while it is off).
    slc_lane: Lane,
    /// Logical groups with a write or trim in progress, and the jobs queued behind it.
    locks: BTreeMap<u32, VecDeque<jobs::LockedJob>>,
    /// Write jobs waiting for a free page group (foreground GC is running for them).
    alloc_waiters: waiters::AllocWaiters,
    /// GC copies waiting for a destination group.
    gc_alloc_waiters: VecDeque<jobs::SpaceWaiter<jobs::CopyJob>>,
    gc: Option<GcRun>,
    /// GC runs started so far (each run's serial).
    gc_serial: u64,
    gc_rr_cursor: u32,
    pub(crate) ckpt: ckpt::CkptState,
    outstanding_writes: BTreeSet<u64>,
    flushes: VecDeque<(u64, jobs::ReqId)>,
    host_inflight: u32,
    /// Host requests admitted at once (`HOST_REQUESTS_MAX` unless set): `try_submit` refuses
    /// beyond it, and `submit` asserts it.
    admission_limit: u32,
    idle_gen: u64,
    /// An idle timer of the current generation is pending: idle-time work (background GC,
    /// SLC folding) is still due, so the device is not quiescent.
    idle_timer_pending: bool,
    background_allowed: bool,
    pub(crate) stats: FtlStats,
    flash_done: Vec<FlashCompletion>,
    completions: Vec<BlockCompletion>,
    /// Answered management commands (FDP's), not yet taken.
    mgmt_completions: Vec<nearflash_blockdev::MgmtCompletion>,
    /// Page-level mapping's fills and write buffer (empty under page-group mapping).
    page: page::PageState,
    /// The cached mapping table (`ftl.mapping_cache_bytes` smaller than the table).
    cmt: Option<cmt::Cmt>,
    /// Flexible Data Placement's state: handles of units, logs (`fdp.rs`; `None` while off).
    pub(crate) fdp: Option<fdp::FdpState>,
}

impl Device {
    /// A copy in the same state — mapping, blocks, jobs and requests in flight, GC, counters —
    /// over a copy of its flash (`Backbone::try_clone`); `None` when the page store cannot be
    /// copied (a file). With a copy of the run's `Sim`, the copy continues exactly as this
    /// device would: several runs can start from one preconditioned device.
    pub fn try_clone(&self) -> Option<Device> {
        Some(Device {
            layout: self.layout.clone(),
            cfg: self.cfg.clone(),
            bb: self.bb.try_clone()?,
            map: self.map.clone(),
            remap: self.remap.clone(),
            sbs: self.sbs.clone(),
            spares: self.spares.clone(),
            functional: self.functional,
            media_lost: self.media_lost.clone(),
            reqs: self.reqs.clone(),
            jobs: self.jobs.clone(),
            write_seq: self.write_seq,
            next_epoch: self.next_epoch,
            host_lanes: self.host_lanes.clone(),
            gc_lanes: self.gc_lanes.clone(),
            slc_lane: self.slc_lane.clone(),
            locks: self.locks.clone(),
            alloc_waiters: self.alloc_waiters.clone(),
            gc_alloc_waiters: self.gc_alloc_waiters.clone(),
            gc: self.gc.clone(),
            gc_serial: self.gc_serial,
            gc_rr_cursor: self.gc_rr_cursor,
            ckpt: self.ckpt.clone(),
            outstanding_writes: self.outstanding_writes.clone(),
            flushes: self.flushes.clone(),
            host_inflight: self.host_inflight,
            admission_limit: self.admission_limit,
            idle_gen: self.idle_gen,
            idle_timer_pending: self.idle_timer_pending,
            background_allowed: self.background_allowed,
            stats: self.stats.clone(),
            flash_done: self.flash_done.clone(),
            completions: self.completions.clone(),
            page: self.page.clone(),
            cmt: self.cmt.clone(),
            fdp: self.fdp.clone(),
            mgmt_completions: self.mgmt_completions.clone(),
        })
    }

    /// A freshly formatted device (every block erased) over `store`.
    pub fn format(
        flash: &FlashConfig,
        ftl: &FtlConfig,
        store: Box<dyn PageStore>,
        q: &mut impl Schedule<Event>,
    ) -> Result<Device, ConfigError> {
        flash.validate()?;
        ftl.validate(flash)?;
        let bb = Backbone::new(flash, store);
        let layout = Layout::new(&Geometry::from_config(flash), ftl);
        let remap = RemapTable::identity(&layout);
        let mut dev = Device::assemble(bb, layout, ftl.clone(), remap, false);
        for s in 0..dev.layout.data_superblocks() {
            dev.sbs.release(SbId(s));
        }
        dev.arm_checkpoint_timer(q);
        Ok(dev)
    }

    /// Shared constructor for `format` and recovery (`recovered`): empty mapping, all spares
    /// unused except those the remap table already uses, an empty mapping cache.
    pub(crate) fn assemble(
        mut bb: Backbone,
        layout: Layout,
        cfg: FtlConfig,
        remap: RemapTable,
        recovered: bool,
    ) -> Device {
        let geo = layout.geo.clone();
        let mut sbs = SbTable::new(layout.superblocks(), geo.ways_per_channel);
        for slot in 0..2 {
            for sb in layout.ckpt_slot(slot) {
                sbs.get_mut(sb).state = SbState::Checkpoint;
            }
        }
        let mut spares = vec![Vec::new(); (geo.die_count() * geo.planes_per_die) as usize];
        let used: BTreeSet<(u32, u32, u32)> = (0..layout.superblocks())
            .flat_map(|s| {
                let sb = SbId(s);
                let l = &layout;
                let r = &remap;
                (0..geo.channels).flat_map(move |c| {
                    (0..geo.planes_per_die).map(move |p| (l.die_of(sb, c).0, p, r.block(sb, c, p)))
                })
            })
            .collect();
        for die in 0..geo.die_count() {
            for plane in 0..geo.planes_per_die {
                for row in layout.spare_rows() {
                    let b = geo.block_id(nearflash_flash::DieId(die), plane, row);
                    if !used.contains(&(die, plane, row)) && !bb.nand().is_bad(b) {
                        spares[(die * geo.planes_per_die + plane) as usize].push(row);
                    }
                }
            }
        }
        let map = Mapping::new(
            layout.logical_entries(),
            layout.physical_entries(),
            layout.superblocks(),
            layout.entries_per_superblock(),
        );
        let points = layout.write_points();
        let lanes = |n: u32| -> Vec<Lane> {
            // Lane `handle × groups + group` writes on its reclaim group's ways.
            let groups = cfg.fdp.groups();
            (0..n)
                .map(|l| Lane::new(points, (l % groups) * points))
                .collect()
        };
        let slc = &cfg.slc_cache;
        if slc.enabled {
            bb.set_slc_mode_latencies(
                SimDuration::from_us_f64(slc.slc_read_latency_us),
                SimDuration::from_us_f64(slc.slc_program_latency_us),
            );
        }
        let (cmt, mapping_cache) = match cfg.mapping_cache_bytes {
            Some(bytes) if layout.translation_units() > 0 => {
                let (c, s) = cmt::Cmt::new(bytes, layout.translation_units(), recovered);
                (Some(c), Some(s))
            }
            _ => (None, None),
        };
        let stats = FtlStats {
            slc: slc.enabled.then(SlcStats::default),
            page_map: layout.page_mapped().then(PageMapStats::default),
            mapping_cache,
            fdp: cfg.fdp.enabled.then(|| fdp::initial_stats(&cfg.fdp)),
            ..FtlStats::default()
        };
        Device {
            functional: bb.store().holds_data(),
            media_lost: BTreeMap::new(),
            map,
            remap,
            sbs,
            spares,
            reqs: Slab::default(),
            jobs: Jobs::default(),
            write_seq: 1,
            next_epoch: 1,
            host_lanes: lanes(layout.host_lanes()),
            gc_lanes: lanes(layout.gc_lanes()),
            slc_lane: Lane::new(points, 0),
            locks: BTreeMap::new(),
            alloc_waiters: waiters::AllocWaiters::new(layout.host_lanes() as usize),
            gc_alloc_waiters: VecDeque::new(),
            gc: None,
            gc_serial: 0,
            gc_rr_cursor: 0,
            ckpt: ckpt::CkptState::default(),
            outstanding_writes: BTreeSet::new(),
            flushes: VecDeque::new(),
            host_inflight: 0,
            admission_limit: HOST_REQUESTS_MAX,
            idle_gen: 0,
            idle_timer_pending: false,
            background_allowed: false,
            stats,
            flash_done: Vec::new(),
            completions: Vec::new(),
            mgmt_completions: Vec::new(),
            page: page::PageState::new(layout.host_lanes(), layout.gc_lanes()),
            fdp: cfg
                .fdp
                .enabled
                .then(|| fdp::FdpState::new(&cfg.fdp, &layout)),
            cmt,
            layout,
            cfg,
            bb,
        }
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    pub fn backbone(&self) -> &Backbone {
        &self.bb
    }

    pub fn config(&self) -> &FtlConfig {
        &self.cfg
    }

    pub fn mapping(&self) -> &Mapping {
        &self.map
    }

    pub fn stats(&self) -> &FtlStats {
        &self.stats
    }

    pub fn logical_bytes(&self) -> u64 {
        self.layout.logical_bytes()
    }

    pub fn is_functional(&self) -> bool {
        self.functional
    }

    /// Host commands in flight.
    pub fn host_inflight(&self) -> u32 {
        self.host_inflight
    }

    /// Admits at most `limit` host requests at once (requests in flight plus completions not
    /// yet taken) instead of [`HOST_REQUESTS_MAX`]. A limit below what is outstanding now
    /// refuses new requests until enough complete.
    pub fn set_admission_limit(&mut self, limit: u32) {
        assert!(limit > 0, "a device admits at least one request");
        self.admission_limit = limit;
    }

    /// True when nothing is in flight — no host command, GC step, checkpoint or flash op —
    /// and no idle-time work is still due (the idle timer that starts background GC and SLC
    /// folding has fired since the last host command).
    pub fn is_quiescent(&self) -> bool {
        self.host_inflight == 0
            && self.jobs.is_empty()
            && self.bb.in_flight() == 0
            && !self.idle_timer_pending
    }

    /// Whether GC is collecting / a checkpoint is being written (for crash-test labels).
    pub fn gc_active(&self) -> bool {
        self.gc.is_some()
    }

    pub fn checkpoint_active(&self) -> bool {
        self.ckpt.active.is_some()
    }

    /// What the flash operations executing on the dies are doing, by the job that issued
    /// them (crash tests label where a power cut landed with it).
    pub fn flash_work(&self) -> BTreeSet<FlashWork> {
        self.bb
            .executing_ops()
            .map(|(kind, tag)| match (FlashJob::from_tag(tag), kind) {
                (FlashJob::Write(_), OpKind::Program) => FlashWork::HostProgram,
                (FlashJob::Read(_) | FlashJob::Write(_), _) => FlashWork::HostRead,
                (FlashJob::Copy(_), OpKind::Program) => FlashWork::GcProgram,
                (FlashJob::Copy(_), _) => FlashWork::GcRead,
                (FlashJob::Erase(_), _) => FlashWork::Erase,
                (FlashJob::CkptProgram(_), _) => FlashWork::CheckpointProgram,
                (
                    FlashJob::UnitRead(_) | FlashJob::UnitWrite(_) | FlashJob::TranslationRead(_),
                    _,
                ) => FlashWork::HostRead,
                (FlashJob::Fill(f), _) if self.jobs.fills.get(f).stream.is_host() => {
                    FlashWork::HostProgram
                }
                (FlashJob::Fill(_), _) => FlashWork::GcProgram,
                (FlashJob::UnitCopy(_), _) => FlashWork::GcRead,
            })
            .collect()
    }

    /// Gives up the device for a power cut: the firmware's state (its RAM) is dropped and
    /// only the flash remains, for `Backbone::power_cut` and `recovery::recover`.
    pub fn into_backbone(self) -> Backbone {
        self.bb
    }

    /// Host completions produced since the last call.
    pub fn take_completions(&mut self, out: &mut Vec<BlockCompletion>) {
        out.append(&mut self.completions);
    }

    fn arm_checkpoint_timer(&mut self, q: &mut impl Schedule<Event>) {
        if self.cfg.checkpoint_interval_us > 0.0 {
            q.schedule_in(
                SimDuration::from_us_f64(self.cfg.checkpoint_interval_us),
                Event::CheckpointTimer,
            );
        }
    }

    /// After recovery: restart the checkpoint timer and write a checkpoint of the recovered
    /// state right away.
    pub(crate) fn arm_and_checkpoint(&mut self, q: &mut impl Schedule<Event>) {
        self.arm_checkpoint_timer(q);
        self.request_checkpoint(q);
    }

    /// Handles one event addressed to the device.
    pub fn handle(&mut self, ev: Event, q: &mut impl Schedule<Event>, rng: &mut SimRng) {
        match ev {
            Event::Flash(fe) => {
                let mut done = std::mem::take(&mut self.flash_done);
                self.bb.handle(fe, &mut q.map(Event::Flash), rng, &mut done);
                for c in done.drain(..) {
                    self.on_flash_done(c, q);
                }
                self.flash_done = done;
            }
            Event::CheckpointTimer => {
                if self.ckpt.dirty {
                    self.start_checkpoint(q);
                }
                self.arm_checkpoint_timer(q);
            }
            Event::SealFill => self.on_seal_timer(q),
            Event::TranslationLoaded(t) => self.on_translation_loaded(t, None, q),
            Event::IdleTimer(generation) => {
                if generation == self.idle_gen {
                    self.idle_timer_pending = false;
                }
                if generation == self.idle_gen && self.host_inflight == 0 {
                    self.background_allowed = true;
                    self.close_idle_slc_points();
                    self.pump_gc(q);
                }
            }
        }
    }

    fn on_flash_done(&mut self, c: FlashCompletion, q: &mut impl Schedule<Event>) {
        match FlashJob::from_tag(c.op.tag) {
            FlashJob::Read(id) => self.on_read_done(id, c, q),
            FlashJob::Write(id) => self.on_write_flash_done(id, c, q),
            FlashJob::Copy(id) => self.on_copy_flash_done(id, c, q),
            FlashJob::Erase(id) => self.on_erase_done(id, c, q),
            FlashJob::CkptProgram(id) => self.on_ckpt_program_done(id, c, q),
            FlashJob::UnitRead(id) => self.on_unit_read_done(id, c, q),
            FlashJob::UnitWrite(id) => self.on_unit_write_read_done(id, c, q),
            FlashJob::Fill(id) => self.on_fill_done(id, c, q),
            FlashJob::UnitCopy(id) => self.on_unit_copy_read_done(id, c, q),
            FlashJob::TranslationRead(id) => self.on_translation_read_done(id, c, q),
        }
    }

    /// Flash channel/die busy time for reports.
    pub fn die_busy_ns(&self, now: SimTime) -> Vec<u64> {
        self.bb.die_busy_ns(now)
    }

    pub fn channel_busy_ns(&self, now: SimTime) -> Vec<u64> {
        self.bb.channel_busy_ns(now)
    }

    /// Erase counts of the member blocks of every data superblock (min, mean, max over
    /// blocks); spares not yet in use and the checkpoint slots are left out.
    pub fn erase_count_summary(&self) -> (u32, f64, u32) {
        let nand = self.bb.nand();
        let geo = &self.layout.geo;
        let mut min = u32::MAX;
        let mut max = 0;
        let mut sum = 0u64;
        let mut count = 0u64;
        for s in 0..self.layout.data_superblocks() {
            for c in 0..geo.channels {
                for l in 0..geo.planes_per_die {
                    let pe = nand.pe_cycles(self.remap.block_id(&self.layout, SbId(s), c, l));
                    min = min.min(pe);
                    max = max.max(pe);
                    sum += u64::from(pe);
                    count += 1;
                }
            }
        }
        (min, sum as f64 / count as f64, max)
    }

    /// Submits a host command at the current time (a write without a placement directive:
    /// with Flexible Data Placement on, placement handle 0's; see `submit_placed`).
    pub fn submit(&mut self, req: BlockRequest, q: &mut impl Schedule<Event>) {
        self.submit_on(req, 0, q);
    }

    /// Submits a host command whose write goes to host lane `lane`.
    fn submit_on(&mut self, req: BlockRequest, lane: u16, q: &mut impl Schedule<Event>) {
        debug_assert!((lane as usize) < self.host_lanes.len());
        assert!(
            self.admitted() < u64::from(self.admission_limit),
            "request {} past the admission limit of {}: a caller not bounded by construction \
             submits with `try_submit`",
            req.id,
            self.admission_limit
        );
        self.host_inflight += 1;
        self.idle_gen += 1;
        self.idle_timer_pending = false;
        self.background_allowed = false;
        self.submit_host(req, lane, q);
    }

    /// Requests counted against the admission limit: in flight, or completed and not taken.
    fn admitted(&self) -> u64 {
        u64::from(self.host_inflight)
            + self.completions.len() as u64
            + self.mgmt_completions.len() as u64
    }

    /// Called when a host command finishes: tracks idleness for background GC.
    fn host_request_finished(&mut self, q: &mut impl Schedule<Event>) {
        debug_assert!(self.host_inflight > 0, "a host command finishes once");
        self.host_inflight -= 1;
        if self.host_inflight == 0
            && (self.cfg.gc_background_free_superblocks > 0 || self.cfg.slc_cache.enabled)
        {
            self.idle_gen += 1;
            self.idle_timer_pending = true;
            q.schedule_in(
                SimDuration::from_us_f64(self.cfg.gc_idle_threshold_us),
                Event::IdleTimer(self.idle_gen),
            );
        }
    }

    /// Checks the internal invariants (tests call it between steps; O(device)).
    pub fn check_invariants(&self) {
        self.map.check();
        self.alloc_waiters.check();
        if let Some(cmt) = &self.cmt {
            cmt.check();
        }
        let slc: Vec<u32> = (0..self.layout.superblocks())
            .filter(|&s| self.sbs.get(SbId(s)).slc)
            .collect();
        assert_eq!(slc.len() as u32, self.sbs.slc_count(), "SLC count drifted");
        for s in slc {
            assert!(
                self.map.valid_count(SbId(s))
                    <= self.sb_capacity(SbId(s)) * self.layout.units_per_group(),
                "SLC superblock {s} holds more groups than SLC mode allows"
            );
        }
        for s in 0..self.layout.superblocks() {
            let sb = SbId(s);
            let info = self.sbs.get(sb);
            if matches!(info.state, SbState::Free | SbState::Held | SbState::Retired) {
                assert_eq!(
                    self.map.valid_count(sb),
                    0,
                    "free superblock {s} holds data"
                );
            }
        }
        self.check_fdp_invariants();
    }
}

#[cfg(test)]
mod tests;

impl nearflash_blockdev::BlockDevice for Device {
    type Event = Event;

    fn capacity_bytes(&self) -> u64 {
        self.logical_bytes()
    }

    fn is_functional(&self) -> bool {
        self.functional
    }

    fn submit<S: Schedule<Event>>(&mut self, req: BlockRequest, q: &mut S) {
        Device::submit(self, req, q);
    }

    fn check_invariants(&self) {
        Device::check_invariants(self);
    }

    /// The directive's Placement Identifier places the write (`Device::submit_placed`); the
    /// FTL has no volatile cache and no queues, so FUA and the stream change nothing.
    fn submit_placed<S: Schedule<Event>>(
        &mut self,
        _stream: Option<u32>,
        req: BlockRequest,
        _fua: bool,
        placement: nearflash_blockdev::PlacementDirective,
        q: &mut S,
    ) {
        Device::submit_placed(self, req, placement.0, q);
    }

    fn handle<S: Schedule<Event>>(&mut self, ev: Event, q: &mut S, rng: &mut SimRng) {
        Device::handle(self, ev, q, rng);
    }

    fn take_completions(&mut self, out: &mut Vec<BlockCompletion>) {
        Device::take_completions(self, out);
    }

    /// FDP's management commands, answered at once from the firmware's state
    /// (`Device::answer_mgmt`).
    fn submit_mgmt<S: Schedule<Event>>(
        &mut self,
        req: nearflash_blockdev::MgmtRequest,
        q: &mut S,
    ) -> Result<(), nearflash_blockdev::MgmtRequest> {
        let now = q.now();
        let result = self.answer_mgmt(&req.cmd, now);
        let dword0 = Device::mgmt_dword0(&req.cmd, &result);
        self.mgmt_completions
            .push(nearflash_blockdev::MgmtCompletion {
                id: req.id,
                submitted: now,
                completed: now,
                result,
                dword0,
            });
        Ok(())
    }

    fn take_mgmt_completions(&mut self, out: &mut Vec<nearflash_blockdev::MgmtCompletion>) {
        out.append(&mut self.mgmt_completions);
    }

    fn outstanding(&self) -> u64 {
        self.admitted()
    }

    fn admission_limit(&self) -> u64 {
        u64::from(self.admission_limit)
    }
}

impl nearflash_sim::Model for Device {
    type Event = Event;

    fn handle(&mut self, ev: Event, q: &mut nearflash_sim::EventQueue<Event>, rng: &mut SimRng) {
        Device::handle(self, ev, q, rng);
    }
}
