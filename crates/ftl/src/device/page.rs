//! Page-level mapping (`ftl.mapping = "page"`): the host path and GC copies in 4 KiB units.
//!
//! A request is split into 4 KiB logical units. A read of a unit reads the one page holding
//! it (a single-plane read on one die) — or, if a newer version still sits in the firmware's
//! write buffer, takes it from there. A write puts its units into a *fill*: the buffer of one
//! die's multi-plane program (planes × page, 8 units on a 16 KiB two-plane die), filled with
//! units from any addresses. A fill is sealed when it is full, or at the end of the instant
//! in which its first unit arrived (so the writes of one instant share programs and a lone
//! write is programmed at once, padded with filler), and programmed into the next *slice* of
//! its stream's page group: the group's channels in turn, so consecutive programs land on
//! different channels. A write completes when every fill holding its units is programmed;
//! then each unit's mapping switches to its new place unless a newer version (a higher write
//! sequence number) or a trim got there first. A write covering part of a unit reads the
//! unit first (a 4 KiB read-modify-write, not a whole group's).
//!
//! GC collects a victim superblock group by group: it reads the pages holding a group's
//! valid units and puts the units still valid into the GC stream's fill (keeping their
//! sequence numbers), which is programmed into GC's own page groups; the mapping of a unit
//! switches only if it still points at the source. The victim's last partial fill is sealed
//! padded, so the victim can be erased.
//!
//! One-shot programs (`flash.one_shot_pages` = k > 1, 3D TLC): a program into a native
//! superblock covers a word line, k consecutive page rows of one channel's blocks, so a
//! fill bound there holds k slices' units (unit `i` lands in row `i / units_per_slice`),
//! streams take k groups at a time and write points advance by word lines. A fill bound for
//! an SLC-mode superblock (one page per word line) holds one slice; a host fill is sized for
//! where its stream's next program is expected to go, padded if it lands in a word line,
//! split if a word line's worth of units lands in SLC mode.

use super::cmt::CmtWaiter;
use super::jobs::{
    FillId, FillJob, FillPhase, FillStream, FillUnit, FlashJob, LockedJob, ReqId, Segment,
    SpaceWaiter, UnitCopyId, UnitCopyJob, UnitReadId, UnitReadJob, UnitWriteId, UnitWriteJob,
};
use super::pageset::PageSet;
use super::{Device, Event};
use crate::config::PAGE_MAP_UNIT_BYTES;
use crate::layout::{Lgn, Lun, Pgn, Pun};
use crate::oob::{OobRecord, PageKind, OOB_RECORD_BYTES};
use crate::superblock::SbState;
use nearflash_blockdev::{BlockOp, IoError, SECTOR_BYTES};
use nearflash_flash::{FlashCompletion, FlashOp, OpKind, OpStatus};
use nearflash_sim::Schedule;
use serde::Serialize;

const UNIT: usize = PAGE_MAP_UNIT_BYTES as usize;

/// What page-level mapping did (`FtlStats::page_map`; absent under page-group mapping).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PageMapStats {
    /// Units host writes put into fills.
    pub host_units: u64,
    /// Units GC moved (the mapping switched to the copy).
    pub gc_units_copied: u64,
    /// Units GC read but dropped: the host overwrote or trimmed them meanwhile.
    pub gc_units_discarded: u64,
    /// Host and GC programs (one die's multi-plane program each).
    pub host_programs: u64,
    pub gc_programs: u64,
    /// Filler units programmed to seal partly filled programs.
    pub pad_units: u64,
    /// Units read to merge writes that covered part of a unit.
    pub rmw_unit_reads: u64,
    /// Unit reads served from the write buffer (a fill not yet programmed).
    pub buffer_read_hits: u64,
}

/// The group a lane is programming slice by slice: the group, its next channel and its
/// superblock's epoch (a superblock erased and reopened meanwhile is a new one).
type GroupCursor = Option<(Pgn, u32, u64)>;

/// The state page-level mapping adds to the device.
#[derive(Clone)]
pub(crate) struct PageState {
    /// The fill each host lane is putting units into, and GC's (a GC run's copies go to
    /// one GC lane: its victim's).
    open_host: Vec<Option<FillId>>,
    open_gc: Option<FillId>,
    /// The group each host lane and each GC lane is programming.
    group_host: Vec<GroupCursor>,
    group_gc: Vec<GroupCursor>,
    /// Newest version of each unit still in a fill: (fill job, index in fill, sequence).
    buffered: std::collections::BTreeMap<u32, (FillId, u32, u64)>,
    /// A seal event is queued for this instant.
    seal_armed: bool,
    /// Host fills programming now, per host lane.
    host_programs: Vec<u32>,
    /// GC copy reads in flight (the GC run's `copies` also counts sealed GC fills).
    pub gc_reads: u32,
    /// A rescue run's drained victim, erased once checkpoint `.1` is on flash.
    erase_after_ckpt: Option<(crate::layout::SbId, u64)>,
}

impl PageState {
    pub(super) fn new(host_lanes: u32, gc_lanes: u32) -> PageState {
        PageState {
            open_host: vec![None; host_lanes as usize],
            open_gc: None,
            group_host: vec![None; host_lanes as usize],
            group_gc: vec![None; gc_lanes as usize],
            buffered: Default::default(),
            seal_armed: false,
            host_programs: vec![0; host_lanes as usize],
            gc_reads: 0,
            erase_after_ckpt: None,
        }
    }

    /// Whether unit `lun`'s newest version is still in a fill (the write buffer).
    pub(super) fn is_buffered(&self, lun: Lun) -> bool {
        self.buffered.contains_key(&lun.0)
    }
}

impl Device {
    fn unit_bytes(&self) -> u64 {
        PAGE_MAP_UNIT_BYTES
    }

    /// Splits a request into unit segments and starts each (page-level mapping).
    pub(super) fn spawn_unit_segments(
        &mut self,
        slot: ReqId,
        offset: u64,
        len: u64,
        q: &mut impl Schedule<Event>,
    ) {
        let ub = self.unit_bytes();
        let op = self.reqs.get(slot).op;
        let end = offset + len;
        let mut at = offset;
        // Reads of units in one page group go to flash together.
        let mut flash_reads: std::collections::BTreeMap<u32, Vec<(Segment, Pun)>> =
            std::collections::BTreeMap::new();
        while at < end {
            let within = at % ub;
            let n = (end - at).min(ub - within);
            let seg = Segment {
                req: slot,
                lgn: Lgn((at / ub) as u32),
                first_sector: (within / SECTOR_BYTES) as u32,
                sectors: (n / SECTOR_BYTES) as u32,
                payload_offset: at - offset,
            };
            self.reqs.get_mut(slot).pending += 1;
            match op {
                BlockOp::Read => {
                    if let Some(pun) = self.start_unit_read(seg, q) {
                        let pgn = self.layout.split_pun(pun).0;
                        flash_reads.entry(pgn.0).or_default().push((seg, pun));
                    }
                }
                BlockOp::Write | BlockOp::Trim => {
                    let job = self.jobs.unit_writes.insert(UnitWriteJob {
                        seg,
                        trim: op == BlockOp::Trim,
                        old: None,
                    });
                    self.acquire_lock(seg.lgn, LockedJob::UnitWrite(job), q);
                }
                BlockOp::Flush => unreachable!("a flush has no segments (`submit_host` queues it)"),
            }
            at += n;
        }
        for (pgn, reads) in flash_reads {
            self.submit_unit_reads(Pgn(pgn), reads, q);
        }
    }

    /// Copies the segment's sectors out of a unit's 4 KiB into the request's payload.
    fn copy_unit_out(&mut self, seg: Segment, unit: &[u8]) {
        let from = seg.first_sector as usize * SECTOR_BYTES as usize;
        let n = seg.sectors as usize * SECTOR_BYTES as usize;
        let to = seg.payload_offset as usize;
        let out = &mut self.reqs.get_mut(seg.req).data;
        out[to..to + n].copy_from_slice(&unit[from..from + n]);
    }

    /// A buffered unit's bytes (functional fidelity).
    fn buffered_bytes(&self, job: FillId, idx: u32) -> &[u8] {
        let f = self.jobs.fills.get(job);
        &f.buf[idx as usize * UNIT..(idx as usize + 1) * UNIT]
    }

    /// Serves a unit read from the write buffer or as zeros; `Some(place)` if it needs flash.
    /// With a cached mapping table whose lookup misses, the read waits for the translation
    /// unit (`None`) and resumes in `unit_read_translated`.
    fn start_unit_read(&mut self, seg: Segment, q: &mut impl Schedule<Event>) -> Option<Pun> {
        if !self.cmt_lookup(Lun(seg.lgn.0), CmtWaiter::Read(seg), q) {
            return None;
        }
        self.unit_read_lookup(seg, q)
    }

    /// A unit read whose translation was loaded: its flash read goes alone.
    pub(super) fn unit_read_translated(&mut self, seg: Segment, q: &mut impl Schedule<Event>) {
        if let Some(pun) = self.unit_read_lookup(seg, q) {
            let pgn = self.layout.split_pun(pun).0;
            self.submit_unit_reads(pgn, vec![(seg, pun)], q);
        }
    }

    /// `start_unit_read` once the translation is in DRAM.
    fn unit_read_lookup(&mut self, seg: Segment, q: &mut impl Schedule<Event>) -> Option<Pun> {
        let lun = Lun(seg.lgn.0);
        if let Some(&(job, idx, _)) = self.page.buffered.get(&lun.0) {
            self.stats_page().buffer_read_hits += 1;
            if self.functional {
                let unit = self.buffered_bytes(job, idx).to_vec();
                self.copy_unit_out(seg, &unit);
            }
            self.finish_segment(seg.req, q);
            return None;
        }
        let Some(pun) = self.map.lookup_unit(lun) else {
            // Never written (or trimmed): zeros, no flash access.
            self.finish_segment(seg.req, q);
            return None;
        };
        Some(pun)
    }

    /// Reads the pages of group `pgn` holding `reads`' units: one multi-plane read per
    /// channel, each page once however many of its units are asked for.
    fn submit_unit_reads(
        &mut self,
        pgn: Pgn,
        reads: Vec<(Segment, Pun)>,
        q: &mut impl Schedule<Event>,
    ) {
        let mut mask = PageSet::default();
        for &(_, pun) in &reads {
            mask.insert(self.layout.slot_pos(self.layout.split_pun(pun).1).page);
        }
        self.sbs.get_mut(self.layout.sb_of(pgn)).pins += 1;
        debug_assert!(!reads.is_empty(), "a unit read reads at least one unit");
        let job = self
            .jobs
            .unit_reads
            .insert(UnitReadJob { reads, pending: 0 });
        let n = self.submit_group_read(FlashJob::UnitRead(job), pgn, &mask, q);
        let r = self.jobs.unit_reads.get_mut(job);
        r.pending = n;
    }

    /// One single-plane read of the page holding `pun`.
    pub(super) fn submit_unit_read(
        &mut self,
        job: FlashJob,
        pun: Pun,
        q: &mut impl Schedule<Event>,
    ) {
        let (pgn, slot) = self.layout.split_pun(pun);
        let sb = self.layout.sb_of(pgn);
        self.sbs.get_mut(sb).pins += 1;
        let pos = self.layout.slot_pos(slot);
        let mut mask = PageSet::default();
        mask.insert(pos.page);
        let n = self.submit_group_read(job, pgn, &mask, q);
        debug_assert_eq!(n, 1, "a unit lies in one page");
    }

    /// Functional fidelity: the unit `pun` out of a read of its page, checked against its
    /// spare-area record: `Ok(bytes)`, or the error a read of it returns.
    pub(super) fn unit_from_read(
        &self,
        c: &FlashCompletion,
        pun: Pun,
        lun: Lun,
    ) -> Result<Vec<u8>, IoError> {
        let (_, slot) = self.layout.split_pun(pun);
        let pos = self.layout.slot_pos(slot);
        let plane =
            c.op.plane_iter()
                .position(|l| l == pos.plane)
                .expect("the read covers the unit's plane");
        let ps = self.layout.geo.page_size_bytes as usize;
        let os = self.layout.geo.oob_size_bytes as usize;
        let i = pos.unit_in_page as usize;
        let at = plane * ps + i * UNIT;
        let r = plane * os + i * OOB_RECORD_BYTES;
        let data = &c.op.data[at..at + UNIT];
        let rec = &c.op.oob[r..r + OOB_RECORD_BYTES];
        match OobRecord::decode(data, rec) {
            Some(r) if r.kind == PageKind::Data && r.lpn == u64::from(lun.0) => Ok(data.to_vec()),
            _ => Err(IoError::Integrity),
        }
    }

    pub(super) fn on_unit_read_done(
        &mut self,
        id: UnitReadId,
        c: FlashCompletion,
        q: &mut impl Schedule<Event>,
    ) {
        let channel = self.layout.geo.channel_of(c.op.die);
        let r = self.jobs.unit_reads.get_mut(id);
        debug_assert!(r.pending > 0, "a completion of an operation in flight");
        r.pending -= 1;
        let done = r.pending == 0;
        let pgn = self.layout.split_pun(r.reads[0].1).0;
        let here: Vec<(Segment, Pun)> = r
            .reads
            .iter()
            .copied()
            .filter(|&(_, pun)| {
                self.layout.slot_pos(self.layout.split_pun(pun).1).channel == channel
            })
            .collect();
        self.on_media_read(&c, pgn);
        if self.functional {
            for (seg, pun) in here {
                match self.unit_from_read(&c, pun, Lun(seg.lgn.0)) {
                    Ok(unit) => self.copy_unit_out(seg, &unit),
                    Err(e) => {
                        self.stats.integrity_errors += 1;
                        self.reqs.get_mut(seg.req).result = Err(e);
                    }
                }
            }
        }
        if !done {
            return;
        }
        let r = self.jobs.unit_reads.remove(id);
        self.unpin(pgn, q);
        for (seg, _) in r.reads {
            self.finish_segment(seg.req, q);
        }
    }

    /// A unit write or trim holds its unit's lock: apply it (once its translation is in
    /// DRAM: with a cached mapping table a miss waits, and resumes in
    /// `unit_write_translated`).
    pub(super) fn start_unit_write(&mut self, job: UnitWriteId, q: &mut impl Schedule<Event>) {
        let w = self.jobs.unit_writes.get(job);
        if self.cmt_lookup(Lun(w.seg.lgn.0), CmtWaiter::Write(job), q) {
            self.unit_write_translated(job, q);
        }
    }

    /// `start_unit_write` once the translation is in DRAM.
    pub(super) fn unit_write_translated(&mut self, job: UnitWriteId, q: &mut impl Schedule<Event>) {
        let w = self.jobs.unit_writes.get(job);
        let (seg, trim) = (w.seg, w.trim);
        let lun = Lun(seg.lgn.0);
        let whole = seg.sectors == self.layout.unit_sectors();
        if trim {
            self.jobs.unit_writes.remove(job);
            if whole {
                // Trims are advisory: only whole units are unmapped.
                let seq = self.write_seq;
                self.write_seq += 1;
                self.map.unmap(Lgn(lun.0));
                self.map.set_trimmed(Lgn(lun.0), seq);
                self.page.buffered.remove(&lun.0);
                self.ckpt.dirty = true;
                self.cmt_note_update(lun, q);
            }
            self.release_lock(seg.lgn, q);
            self.finish_segment(seg.req, q);
            return;
        }
        let functional = self.functional;
        if whole {
            let data = functional.then(|| {
                let from = seg.payload_offset as usize;
                self.reqs.get(seg.req).data[from..from + UNIT].to_vec()
            });
            self.jobs.unit_writes.remove(job);
            self.append_unit(lun, data, Some(seg.req), q);
            self.release_lock(seg.lgn, q);
            return;
        }
        // Part of a unit: its other sectors come from the newest version.
        if let Some(&(fill, idx, _)) = self.page.buffered.get(&lun.0) {
            let base = functional.then(|| self.buffered_bytes(fill, idx).to_vec());
            self.merge_and_append(job, base, q);
            return;
        }
        match self.map.lookup_unit(lun) {
            None => {
                let base = functional.then(|| vec![0u8; UNIT]);
                self.merge_and_append(job, base, q);
            }
            Some(old) => {
                self.stats_page().rmw_unit_reads += 1;
                let w = self.jobs.unit_writes.get_mut(job);
                w.old = Some(old);
                self.submit_unit_read(FlashJob::UnitWrite(job), old, q);
            }
        }
    }

    /// The old version of a partly written unit was read.
    pub(super) fn on_unit_write_read_done(
        &mut self,
        id: UnitWriteId,
        c: FlashCompletion,
        q: &mut impl Schedule<Event>,
    ) {
        let w = self.jobs.unit_writes.get(id);
        let (seg, old) = (w.seg, w.old.expect("old copy"));
        let (pgn, _) = self.layout.split_pun(old);
        self.on_media_read(&c, pgn);
        self.unpin(pgn, q);
        if !self.functional {
            self.merge_and_append(id, None, q);
            return;
        }
        match self.unit_from_read(&c, old, Lun(seg.lgn.0)) {
            Ok(base) => self.merge_and_append(id, Some(base), q),
            Err(e) => {
                // The sectors the write leaves alone cannot be read: the write fails and
                // changes nothing, rather than fill them with zeros.
                self.stats.integrity_errors += 1;
                self.jobs.unit_writes.remove(id);
                self.reqs.get_mut(seg.req).result = Err(e);
                self.release_lock(seg.lgn, q);
                self.finish_segment(seg.req, q);
            }
        }
    }

    /// Writes the segment's sectors over `base` (the unit's old bytes) and buffers the unit.
    fn merge_and_append(
        &mut self,
        job: UnitWriteId,
        base: Option<Vec<u8>>,
        q: &mut impl Schedule<Event>,
    ) {
        let w = self.jobs.unit_writes.remove(job);
        let seg = w.seg;
        let data = base.map(|mut unit| {
            let at = seg.first_sector as usize * SECTOR_BYTES as usize;
            let n = seg.sectors as usize * SECTOR_BYTES as usize;
            let from = seg.payload_offset as usize;
            unit[at..at + n].copy_from_slice(&self.reqs.get(seg.req).data[from..from + n]);
            unit
        });
        self.append_unit(Lun(seg.lgn.0), data, Some(seg.req), q);
        self.release_lock(seg.lgn, q);
    }

    /// Puts a unit into the open host fill (opening one), sealing it when full: a host
    /// write's (`req`), or a translation unit written back by the mapping cache (`None`).
    pub(super) fn append_unit(
        &mut self,
        lun: Lun,
        data: Option<Vec<u8>>,
        req: Option<ReqId>,
        q: &mut impl Schedule<Event>,
    ) {
        let seq = self.write_seq;
        self.write_seq += 1;
        if req.is_some() {
            self.stats_page().host_units += 1;
        }
        // (A translation unit written back goes to lane 0, the default placement handle's.)
        let lane = req.map_or(0, |r| self.reqs.get(r).lane);
        let ruh = self.host_lane_ruh(lane);
        let job = match self.page.open_host[lane as usize] {
            Some(j) => j,
            None => {
                let j = self.new_fill(FillStream::Host(lane));
                self.page.open_host[lane as usize] = Some(j);
                if !self.page.seal_armed {
                    self.page.seal_armed = true;
                    q.schedule_in(nearflash_sim::SimDuration::ZERO, Event::SealFill);
                }
                j
            }
        };
        let idx = self.push_unit(
            job,
            FillUnit {
                lun,
                seq,
                src: None,
                req,
                lost: false,
                ruh,
            },
            data.as_deref(),
        );
        self.page.buffered.insert(lun.0, (job, idx, seq));
        if self.fill_full(job) {
            self.page.open_host[lane as usize] = None;
            self.seal_fill(job, q);
        }
    }

    fn new_fill(&mut self, stream: FillStream) -> FillId {
        let rows = match stream {
            FillStream::Host(lane) => self.host_fill_rows(lane),
            // GC writes into native superblocks only.
            FillStream::Gc(_) => self.bb.config().one_shot_pages,
        };
        let cap = (self.layout.units_per_slice() * rows) as usize;
        self.jobs.fills.insert(FillJob {
            stream,
            phase: FillPhase::Open,
            units: Vec::with_capacity(cap),
            rows,
            buf: if self.functional {
                vec![0u8; cap * UNIT]
            } else {
                Vec::new()
            },
            dest: None,
        })
    }

    /// Page rows a new host fill is sized for: those of the superblock the host stream's
    /// next program is expected to go to — the group it is programming while that has
    /// channels left, else an SLC-mode one while the cache takes host writes, else a native
    /// one. A guess: `program_fill` pads or splits a fill that lands elsewhere.
    fn host_fill_rows(&self, lane: u16) -> u32 {
        let k = self.bb.config().one_shot_pages;
        if k == 1 {
            return 1;
        }
        if let Some((pgn, c, epoch)) = self.page.group_host[lane as usize] {
            let sb = self.layout.sb_of(pgn);
            let info = self.sbs.get(sb);
            if c < self.layout.geo.channels && info.state == SbState::Open && info.epoch == epoch {
                return self.word_line_rows(sb);
            }
        }
        let slc = self.cfg.slc_cache.enabled
            && (self.points_have_room(super::alloc::Stream::Slc)
                || self.can_open(super::alloc::Stream::Slc));
        if slc {
            1
        } else {
            k
        }
    }

    /// Appends a unit to fill `job`; returns its index.
    fn push_unit(&mut self, job: FillId, unit: FillUnit, data: Option<&[u8]>) -> u32 {
        let ups = self.layout.units_per_slice();
        let f = self.jobs.fills.get_mut(job);
        debug_assert_eq!(f.phase, FillPhase::Open);
        let idx = f.units.len();
        assert!(
            (idx as u32) < ups * f.rows,
            "a fill holds one program's units"
        );
        f.units.push(unit);
        if let Some(d) = data {
            f.buf[idx * UNIT..(idx + 1) * UNIT].copy_from_slice(d);
        }
        idx as u32
    }

    fn fill_full(&self, job: FillId) -> bool {
        let f = self.jobs.fills.get(job);
        f.units.len() as u32 == self.layout.units_per_slice() * f.rows
    }

    /// The end of the instant in which the open host fill took its first unit: seal it —
    /// unless a host program is running, in which case the fill keeps taking units until one
    /// finishes (the die time of the last program is the window in which the next one fills:
    /// writes arriving one by one, e.g. a write buffer destaging at the pace of its DRAM,
    /// share programs instead of each padding its own).
    pub(super) fn on_seal_timer(&mut self, q: &mut impl Schedule<Event>) {
        self.page.seal_armed = false;
        for lane in 0..self.page.open_host.len() {
            if self.page.host_programs[lane] == 0 {
                if let Some(job) = self.page.open_host[lane].take() {
                    self.seal_fill(job, q);
                }
            }
        }
    }

    /// A fill takes no more units: it waits for its program slot (in order behind the fills
    /// of its stream already waiting).
    fn seal_fill(&mut self, job: FillId, q: &mut impl Schedule<Event>) {
        let f = self.jobs.fills.get_mut(job);
        f.phase = FillPhase::WaitAlloc;
        let stream = f.stream;
        if !stream.is_host() {
            self.gc_run_copies_add(1);
        }
        self.place_fill(job, q);
    }

    /// Gives fill `job` its program slot now, or queues it for one.
    pub(super) fn place_fill(&mut self, job: FillId, q: &mut impl Schedule<Event>) {
        let f = self.jobs.fills.get(job);
        let stream = f.stream;
        let queued = match stream {
            FillStream::Host(lane) => self.lane_has_waiters(lane),
            FillStream::Gc(_) => !self.gc_alloc_waiters.is_empty(),
        };
        if !queued {
            if let Some((pgn, c)) = self.next_slice(stream, q.now()) {
                self.program_fill(job, pgn, c, q);
                return;
            }
        }
        match stream {
            FillStream::Host(lane) => {
                self.alloc_waiters.push_back(SpaceWaiter::Fill(job), lane);
                self.pump_gc(q);
            }
            FillStream::Gc(_) => {
                self.gc_alloc_waiters.push_back(SpaceWaiter::Fill(job));
                self.abort_gc_if_stuck(q);
            }
        }
    }

    /// The next channel slice of `stream`'s page group, taking a new group when the current
    /// one is used up (or its superblock was closed early). `None`: wait for GC.
    pub(super) fn next_slice(
        &mut self,
        stream: FillStream,
        now: nearflash_sim::SimTime,
    ) -> Option<(Pgn, u32)> {
        let channels = self.layout.geo.channels;
        let current = match stream {
            FillStream::Host(l) => self.page.group_host[l as usize],
            FillStream::Gc(l) => self.page.group_gc[l as usize],
        };
        let usable = |d: &Device, pgn: Pgn, epoch: u64| {
            let info = d.sbs.get(d.layout.sb_of(pgn));
            info.state == SbState::Open && info.epoch == epoch
        };
        let slice = match current {
            Some((pgn, c, epoch)) if c < channels && usable(self, pgn, epoch) => {
                // The group's first slice pinned the superblock; each further one does too.
                let info = self.sbs.get_mut(self.layout.sb_of(pgn));
                info.programs_inflight += 1;
                info.last_write = now;
                (pgn, c)
            }
            _ => {
                let pgn = match stream {
                    FillStream::Host(l) => self.alloc_host(l, now)?,
                    FillStream::Gc(_) => self.alloc_group(stream.points(), now)?,
                };
                (pgn, 0)
            }
        };
        let epoch = self.sbs.get(self.layout.sb_of(slice.0)).epoch;
        let next = Some((slice.0, slice.1 + 1, epoch));
        match stream {
            FillStream::Host(l) => self.page.group_host[l as usize] = next,
            FillStream::Gc(l) => self.page.group_gc[l as usize] = next,
        }
        Some(slice)
    }

    /// A host fill sized for a word line got a one-row slot (SLC mode): its units beyond
    /// the first `keep` go into a fill of their own, sealed, which is placed after it.
    fn split_fill(&mut self, job: FillId, keep: usize) -> FillId {
        let ups = self.layout.units_per_slice();
        let f = self.jobs.fills.get_mut(job);
        assert!(f.stream.is_host(), "GC fills go to native superblocks only");
        let stream = f.stream;
        let units = f.units.split_off(keep);
        let buf = if f.buf.is_empty() {
            Vec::new()
        } else {
            f.buf.split_off(keep * UNIT)
        };
        let rows = (units.len() as u32).div_ceil(ups);
        let moved: Vec<(u32, u64)> = units.iter().map(|u| (u.lun.0, u.seq)).collect();
        let rest = self.jobs.fills.insert(FillJob {
            stream,
            phase: FillPhase::WaitAlloc,
            units,
            rows,
            buf,
            dest: None,
        });
        for (i, (lun, seq)) in moved.into_iter().enumerate() {
            if let Some(b) = self.page.buffered.get_mut(&lun) {
                if b.0 == job && b.2 == seq {
                    *b = (rest, i as u32, seq);
                }
            }
        }
        rest
    }

    /// Programs fill `job` into channel `c`'s pages of group `pgn`: one multi-plane program —
    /// with one-shot programs into a native superblock, of the word line's rows from `pgn` on.
    pub(super) fn program_fill(
        &mut self,
        job: FillId,
        pgn: Pgn,
        c: u32,
        q: &mut impl Schedule<Event>,
    ) {
        let sb = self.layout.sb_of(pgn);
        let rows = self.word_line_rows(sb);
        let cap = (self.layout.units_per_slice() * rows) as usize;
        let rest = (self.jobs.fills.get(job).units.len() > cap).then(|| self.split_fill(job, cap));
        let info = self.sbs.get(sb);
        let (epoch, slc, info_ruh) = (info.epoch, info.slc, info.ruh);
        let planes = self.layout.geo.planes_per_die;
        let upp = self.layout.units_per_page() as usize;
        let ps = self.layout.geo.page_size_bytes as usize;
        let os = self.layout.geo.oob_size_bytes as usize;
        let functional = self.functional;
        let f = self.jobs.fills.get_mut(job);
        f.phase = FillPhase::Program;
        f.dest = Some((pgn, c));
        let pads = cap as u64 - f.units.len() as u64;
        let stream = f.stream;
        // FDP: each record names its unit's handle; filler names the superblock's.
        let fdp_on = self.fdp.is_some();
        let pad_ruh = info_ruh.unwrap_or(0);
        let placement = |ruh: u8| {
            fdp_on.then_some(crate::oob::Placement {
                ruh,
                by_gc: !stream.is_host(),
            })
        };
        let mut plane_blocks = [0u32; nearflash_flash::backbone::PLANES_MAX];
        let mut plane_mask = 0u8;
        for l in 0..planes {
            plane_mask |= 1 << l;
            plane_blocks[l as usize] = self.remap.block(sb, c, l);
        }
        let (mut data, mut oob) = (Vec::new(), Vec::new());
        if functional {
            // Page `r × planes + l` of the op is row `r`'s page on plane `l`, and holds the
            // fill's units from `(r × planes + l) × units per page` on.
            let pages = (rows * planes) as usize;
            data = vec![0u8; pages * ps];
            oob = vec![0u8; pages * os];
            for page in 0..pages {
                for i in 0..upp {
                    let idx = page * upp + i;
                    let at = page * ps + i * UNIT;
                    let (rec, bytes) = match f.units.get(idx) {
                        Some(u) => (
                            OobRecord {
                                lpn: u64::from(u.lun.0),
                                seq: u.seq,
                                epoch,
                                kind: if u.lost {
                                    PageKind::Lost(crate::oob::LossCause::Integrity)
                                } else {
                                    PageKind::Data
                                },
                                slc,
                                placement: placement(u.ruh),
                            },
                            &f.buf[idx * UNIT..(idx + 1) * UNIT],
                        ),
                        None => (
                            OobRecord {
                                lpn: u64::MAX,
                                seq: 0,
                                epoch,
                                kind: PageKind::Pad,
                                slc,
                                placement: placement(pad_ruh),
                            },
                            &f.buf[..0],
                        ),
                    };
                    data[at..at + bytes.len()].copy_from_slice(bytes);
                    let r = page * os + i * OOB_RECORD_BYTES;
                    rec.encode(&data[at..at + UNIT], &mut oob[r..r + OOB_RECORD_BYTES]);
                }
            }
        }
        if let FillStream::Host(l) = stream {
            self.page.host_programs[l as usize] += 1;
        }
        let ps_stats = self.stats_page();
        ps_stats.pad_units += pads;
        match stream {
            FillStream::Host(_) => ps_stats.host_programs += 1,
            FillStream::Gc(_) => ps_stats.gc_programs += 1,
        }
        self.bb.submit(
            FlashOp {
                kind: OpKind::Program,
                die: self.layout.die_of(sb, c),
                page: self.layout.page_of(pgn),
                pages: rows,
                plane_mask,
                plane_blocks,
                tag: FlashJob::Fill(job).tag(),
                data,
                oob,
                slc,
            },
            &mut q.map(Event::Flash),
        );
        if let Some(rest) = rest {
            self.place_fill(rest, q);
        }
    }

    /// A fill's program finished: switch the mapping of its units (unless a newer version or
    /// a trim got there first, or — for GC — the unit moved on), and finish host writes.
    pub(super) fn on_fill_done(
        &mut self,
        id: FillId,
        c: FlashCompletion,
        q: &mut impl Schedule<Event>,
    ) {
        let f = self.jobs.fills.get(id);
        let (pgn, channel) = f.dest.expect("a programmed fill has a slot");
        let stream = f.stream;
        self.program_done(pgn);
        if let FillStream::Host(l) = stream {
            self.page.host_programs[l as usize] -= 1;
        }
        if matches!(c.status, OpStatus::Failed { .. }) {
            // The units are still in the buffer: program them elsewhere.
            self.on_program_failure(pgn);
            let f = self.jobs.fills.get_mut(id);
            f.phase = FillPhase::WaitAlloc;
            f.dest = None;
            self.place_fill(id, q);
            self.seal_open_hosts_if_idle(q);
            return;
        }
        let f = self.jobs.fills.remove(id);
        let ups = self.layout.units_per_slice();
        let rows = self.word_line_rows(self.layout.sb_of(pgn));
        let mut finished = Vec::new();
        for (i, u) in f.units.iter().enumerate() {
            // Unit `i` lies in row `i / ups` of the word line, at its slice's slot.
            let i = i as u32;
            let pun = self
                .layout
                .pun(Pgn(pgn.0 + i / ups), channel * ups + i % ups);
            let lgn = Lgn(u.lun.0);
            match u.src {
                None => {
                    if u.seq > self.map.seq(lgn) {
                        self.map.map_unit(u.lun, pun, u.seq);
                        self.fdp_note_mapped(u.lun, u.ruh);
                        self.ckpt.dirty = true;
                        self.cmt_note_update(u.lun, q);
                    }
                    if self
                        .page
                        .buffered
                        .get(&u.lun.0)
                        .is_some_and(|&(_, _, s)| s == u.seq)
                    {
                        self.page.buffered.remove(&u.lun.0);
                    }
                    // (A translation unit written back has no request.)
                    finished.extend(u.req);
                }
                Some(src) => {
                    if self.map.lookup_unit(u.lun) == Some(src) {
                        self.note_copy(self.layout.split_pun(src).0);
                        self.fdp_note_gc_copied(u.ruh);
                        self.map.map_unit(u.lun, pun, u.seq);
                        self.ckpt.dirty = true;
                        self.cmt_note_update(u.lun, q);
                        self.stats_page().gc_units_copied += 1;
                    } else {
                        self.stats_page().gc_units_discarded += 1;
                    }
                }
            }
        }
        self.fdp_note_fill_programmed(pgn, &f.units, ups * rows);
        match stream {
            FillStream::Host(_) => {
                self.stats.host_group_programs += 1;
                self.note_host_program_bytes(pgn, f.units.len() as u64 * PAGE_MAP_UNIT_BYTES);
                for req in finished {
                    self.finish_segment(req, q);
                }
                self.wake_alloc_waiters(q);
                self.seal_open_hosts_if_idle(q);
            }
            FillStream::Gc(_) => {
                self.stats.gc_pages_copied += u64::from(self.layout.geo.planes_per_die * rows);
                self.gc_run_copies_add(-1);
                self.pump_gc(q);
            }
        }
    }

    /// An open host fill waited for a host program of its lane to finish (see
    /// `on_seal_timer`): once none is running — one finished, or failed and waits for a new
    /// slot, or its fill failed for want of space — it takes no more units and goes to its
    /// slot.
    fn seal_open_hosts_if_idle(&mut self, q: &mut impl Schedule<Event>) {
        if self.page.seal_armed {
            return;
        }
        for lane in 0..self.page.open_host.len() {
            if self.page.host_programs[lane] == 0 {
                if let Some(job) = self.page.open_host[lane].take() {
                    self.seal_fill(job, q);
                }
            }
        }
    }

    /// Fails a sealed host fill that found no space: its units' writes fail with `NoSpace`.
    pub(super) fn fail_fill(&mut self, job: FillId, q: &mut impl Schedule<Event>) {
        let f = self.jobs.fills.remove(job);
        for u in &f.units {
            if self
                .page
                .buffered
                .get(&u.lun.0)
                .is_some_and(|&(_, _, s)| s == u.seq)
            {
                self.page.buffered.remove(&u.lun.0);
            }
            if let Some(req) = u.req {
                self.reqs.get_mut(req).result = Err(IoError::NoSpace);
                self.finish_segment(req, q);
            }
        }
        self.seal_open_hosts_if_idle(q);
    }

    /// GC: starts reading the valid units of victim group `pgn`; false if it holds none.
    pub(super) fn start_unit_copy(&mut self, pgn: Pgn, q: &mut impl Schedule<Event>) -> bool {
        let upg = self.layout.units_per_group();
        let slots: Vec<(u32, Lun)> = (0..upg)
            .filter_map(|s| {
                self.map
                    .unit_owner(self.layout.pun(pgn, s))
                    .map(|lun| (s, lun))
            })
            .collect();
        if slots.is_empty() {
            return false;
        }
        let mut mask = PageSet::default();
        for &(s, _) in &slots {
            mask.insert(self.layout.slot_pos(s).page);
        }
        let buf = if self.functional {
            vec![0u8; self.layout.group_buf_bytes() as usize]
        } else {
            Vec::new()
        };
        let job = self.jobs.unit_copies.insert(UnitCopyJob {
            src: pgn,
            slots,
            pending: 0,
            buf,
            bad_pages: PageSet::default(),
        });
        self.sbs.get_mut(self.layout.sb_of(pgn)).pins += 1;
        self.page.gc_reads += 1;
        let n = self.submit_group_read(FlashJob::UnitCopy(job), pgn, &mask, q);
        let cp = self.jobs.unit_copies.get_mut(job);
        cp.pending = n;
        true
    }

    pub(super) fn on_unit_copy_read_done(
        &mut self,
        id: UnitCopyId,
        c: FlashCompletion,
        q: &mut impl Schedule<Event>,
    ) {
        let ps = self.layout.geo.page_size_bytes as usize;
        let channel = self.layout.geo.channel_of(c.op.die);
        let functional = self.functional;
        let page_index: Vec<u32> =
            c.op.plane_iter()
                .map(|l| self.layout.page_index(channel, l))
                .collect();
        let cp = self.jobs.unit_copies.get_mut(id);
        if functional {
            let os = self.layout.geo.oob_size_bytes as usize;
            for (i, &k) in page_index.iter().enumerate() {
                let page = &c.op.data[i * ps..(i + 1) * ps];
                cp.buf[k as usize * ps..(k as usize + 1) * ps].copy_from_slice(page);
                // The records are checked per unit when the units are taken; keep the
                // spare area beside the data by checking here.
                let oob = &c.op.oob[i * os..(i + 1) * os];
                let upp = self.layout.units_per_page() as usize;
                for u in 0..upp {
                    let rec = &oob[u * OOB_RECORD_BYTES..(u + 1) * OOB_RECORD_BYTES];
                    let ok = OobRecord::decode(&page[u * UNIT..(u + 1) * UNIT], rec)
                        .is_some_and(|r| matches!(r.kind, PageKind::Data | PageKind::Pad));
                    if !ok {
                        cp.bad_pages.insert(k * upp as u32 + u as u32);
                    }
                }
            }
        }
        debug_assert!(cp.pending > 0, "a completion of an operation in flight");
        cp.pending -= 1;
        if cp.pending > 0 {
            return;
        }
        let cp = self.jobs.unit_copies.remove(id);
        let src_sb = self.layout.sb_of(cp.src);
        let info = self.sbs.get_mut(src_sb);
        assert!(info.pins > 0);
        info.pins -= 1;
        self.page.gc_reads -= 1;
        let upp = self.layout.units_per_page();
        for &(slot, lun) in &cp.slots {
            let src = self.layout.pun(cp.src, slot);
            if self.map.lookup_unit(lun) != Some(src) {
                self.stats_page().gc_units_discarded += 1;
                continue;
            }
            let pos = self.layout.slot_pos(slot);
            let lost = cp.bad_pages.contains(pos.page * upp + pos.unit_in_page);
            if lost {
                self.stats.integrity_errors += 1;
            }
            let data = functional.then(|| {
                let at = self.layout.slot_buf_offset(slot);
                cp.buf[at..at + UNIT].to_vec()
            });
            let seq = self.map.seq(Lgn(lun.0));
            let ruh = self.unit_ruh(lun);
            self.append_gc_unit(
                FillUnit {
                    lun,
                    seq,
                    src: Some(src),
                    req: None,
                    lost,
                    ruh,
                },
                data.as_deref(),
                q,
            );
        }
        self.gc_run_copies_add(-1);
        self.pump_gc(q);
    }

    fn append_gc_unit(
        &mut self,
        unit: FillUnit,
        data: Option<&[u8]>,
        q: &mut impl Schedule<Event>,
    ) {
        let job = match self.page.open_gc {
            Some(j) => j,
            None => {
                let j = self.new_fill(FillStream::Gc(self.gc_run_lane()));
                self.page.open_gc = Some(j);
                j
            }
        };
        self.push_unit(job, unit, data);
        if self.fill_full(job) {
            self.page.open_gc = None;
            self.seal_fill(job, q);
        }
    }

    /// GC: no copy read is in flight and the victim's groups are all visited — seal the
    /// partial GC fill so the victim can be erased. True if it sealed one.
    pub(super) fn seal_gc_tail(&mut self, q: &mut impl Schedule<Event>) -> bool {
        if self.page.gc_reads > 0 {
            return false;
        }
        match self.page.open_gc.take() {
            Some(job) => {
                self.seal_fill(job, q);
                true
            }
            None => false,
        }
    }

    /// A rescue run (which took the last free superblock) drained its victim. Under
    /// page-level mapping a cut that tears the victim's erase on some dies leaves units on the
    /// others, and a unit trimmed since it was copied would come back there: the victim would
    /// hold data with no superblock free to move it to. A checkpoint first records the trims
    /// and the copies, so recovery finds nothing valid in the victim whatever the cut leaves.
    pub(super) fn erase_after_checkpoint(
        &mut self,
        victim: crate::layout::SbId,
        q: &mut impl Schedule<Event>,
    ) {
        if let Some((earlier, _)) = self.page.erase_after_ckpt.take() {
            // Only one rescue run can wait at a time (it holds the last free superblock);
            // should another drain first, the earlier victim goes now.
            self.start_erase(earlier, super::jobs::ErasePurpose::Gc, q);
        }
        let need = self.ckpt.seq + 1;
        self.request_checkpoint(q);
        if self.ckpt.active.is_some() {
            self.page.erase_after_ckpt = Some((victim, need));
        } else {
            // No checkpoint can be written (no slot room): erase anyway.
            self.start_erase(victim, super::jobs::ErasePurpose::Gc, q);
        }
    }

    /// A checkpoint finished (or none could start): erase the victim that waited for it.
    pub(super) fn erase_waiting_victim(&mut self, q: &mut impl Schedule<Event>) {
        if let Some((victim, need)) = self.page.erase_after_ckpt {
            if self.ckpt.active.is_none() || self.ckpt.seq > need {
                self.page.erase_after_ckpt = None;
                self.start_erase(victim, super::jobs::ErasePurpose::Gc, q);
            }
        }
    }

    /// GC gave up its run: the units of its open fill stay valid in the victim.
    pub(super) fn drop_gc_fill(&mut self) {
        if let Some(job) = self.page.open_gc.take() {
            self.jobs.fills.remove(job);
        }
    }

    pub(super) fn stats_page(&mut self) -> &mut PageMapStats {
        self.stats
            .page_map
            .get_or_insert_with(PageMapStats::default)
    }

    /// Groups a victim's `valid` entries need at their destination: its units fill
    /// ⌈valid / units per slice⌉ slices, which whole groups of GC's room hold
    /// (⌈⌈v / s⌉ / c⌉ = ⌈v / (s c)⌉), besides what is left of the group GC is filling. With
    /// one-shot programs (k rows a program) GC takes groups k at a time: ⌈v / (s c k)⌉ × k.
    pub(super) fn groups_for_entries(&self, valid: u32) -> u32 {
        let k = self.bb.config().one_shot_pages;
        valid.div_ceil(self.layout.units_per_group() * k) * k
    }

    /// Entries collecting a superblock with `valid` valid entries frees: its whole capacity
    /// less what its copies take — under page-level mapping whole GC fills (a slice, or a
    /// word line's slices with one-shot programs), since the run's last fill is sealed
    /// padded so that the victim can be erased.
    pub(super) fn reclaim_gain(&self, valid: u32) -> u32 {
        let full = self.layout.entries_per_superblock();
        if !self.layout.page_mapped() {
            return full.saturating_sub(valid);
        }
        let ups = self.layout.units_per_slice() * self.bb.config().one_shot_pages;
        full.saturating_sub(valid.div_ceil(ups) * ups)
    }

    /// Units buffered (in fills not yet programmed) now.
    pub fn buffered_units(&self) -> usize {
        self.page.buffered.len()
    }

    /// Page-level mapping: the mapped bytes of unit `lun` (peek; untimed).
    pub(super) fn peek_unit(&mut self, lun: Lun) -> Result<Option<Vec<u8>>, IoError> {
        let Some(pun) = self.map.lookup_unit(lun) else {
            return Ok(None);
        };
        let geo = self.layout.geo.clone();
        let (pgn, slot) = self.layout.split_pun(pun);
        let pos = self.layout.slot_pos(slot);
        let sb = self.layout.sb_of(pgn);
        let block = geo.block_id(
            self.layout.die_of(sb, pos.channel),
            pos.plane,
            self.remap.block(sb, pos.channel, pos.plane),
        );
        let mut page = vec![0u8; geo.page_size_bytes as usize];
        let mut oob = vec![0u8; geo.oob_size_bytes as usize];
        self.bb.store_mut().read(
            geo.page_id(block, self.layout.page_of(pgn)),
            &mut page,
            &mut oob,
        );
        let i = pos.unit_in_page as usize;
        let data = &page[i * UNIT..(i + 1) * UNIT];
        match OobRecord::decode(data, &oob[i * OOB_RECORD_BYTES..(i + 1) * OOB_RECORD_BYTES]) {
            Some(r) if r.kind == PageKind::Data && r.lpn == u64::from(lun.0) => {
                Ok(Some(data.to_vec()))
            }
            _ => Err(IoError::Integrity),
        }
    }
}
