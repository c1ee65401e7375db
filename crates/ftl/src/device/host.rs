//! Flashvisor's host path: a command is split into per-page-group segments; reads translate
//! through the mapping and read only the pages they need (a never-written group costs no
//! flash access); writes take the group's lock (writes and trims to one group are applied in
//! arrival order), read the old pages a partial write does not cover (read-modify-write:
//! the mapping unit is the 64 KiB page group), take a new group and program it on every
//! channel at once, and only then switch the mapping and acknowledge.

use super::jobs::{
    FlashJob, GroupProgram, LockedJob, ReadId, ReadJob, ReqId, ReqState, Segment, SpaceWaiter,
    TrimJob, WriteId, WriteJob, WritePhase,
};
use super::pageset::PageSet;
use super::waiters::Waiter;
use super::Device;
use super::Event;
use crate::layout::{Lgn, Pgn, SbId};
use crate::oob::{LossCause, OobRecord, PageKind};
use nearflash_blockdev::{BlockCompletion, BlockOp, BlockRequest, IoError, SECTOR_BYTES};
use nearflash_flash::{FlashCompletion, FlashOp, OpKind, OpStatus};
use nearflash_sim::Schedule;

/// Pages of a read that could not be handed on (functional fidelity).
#[derive(Default)]
pub(super) struct ReadFailures {
    /// Every page that failed.
    pub pages: PageSet,
    /// The failed pages that are media losses: uncorrectable now, or recorded as lost to an
    /// uncorrectable read when they were moved.
    pub media: PageSet,
}

impl Device {
    fn validate(&self, req: &BlockRequest) -> Result<(), IoError> {
        if req.op == BlockOp::Flush {
            return Ok(());
        }
        if req.len_bytes == 0
            || !req.offset_bytes.is_multiple_of(SECTOR_BYTES)
            || !req.len_bytes.is_multiple_of(SECTOR_BYTES)
        {
            return Err(IoError::Misaligned {
                offset_bytes: req.offset_bytes,
                len_bytes: req.len_bytes,
            });
        }
        let cap = self.logical_bytes();
        if req
            .offset_bytes
            .checked_add(req.len_bytes)
            .is_none_or(|end| end > cap)
        {
            return Err(IoError::OutOfRange {
                offset_bytes: req.offset_bytes,
                len_bytes: req.len_bytes,
                capacity_bytes: cap,
            });
        }
        if req.op == BlockOp::Write && self.functional && req.data.len() as u64 != req.len_bytes {
            return Err(IoError::PayloadSize {
                got: req.data.len() as u64,
                expected: req.len_bytes,
            });
        }
        Ok(())
    }

    /// Accepts a host command; a write's units go to host lane `lane` (0 unless Flexible
    /// Data Placement directed it elsewhere).
    pub(super) fn submit_host(
        &mut self,
        req: BlockRequest,
        lane: u16,
        q: &mut impl Schedule<Event>,
    ) {
        let now = q.now();
        let result = self.validate(&req);
        let data = match (req.op, self.functional) {
            (BlockOp::Read, true) => vec![0u8; req.len_bytes as usize],
            (BlockOp::Write, true) => req.data,
            _ => Vec::new(),
        };
        let slot = self.reqs.insert(ReqState {
            id: req.id,
            op: req.op,
            offset_bytes: req.offset_bytes,
            len_bytes: req.len_bytes,
            submitted: now,
            pending: 1, // released at the end of this function
            result,
            data,
            lane,
        });
        if self.reqs.get(slot).result.is_ok() {
            self.count_request(req.op, req.len_bytes);
            if req.op == BlockOp::Write {
                self.fdp_note_host_write(lane, req.len_bytes);
            }
            match req.op {
                BlockOp::Flush => {
                    self.reqs.get_mut(slot).pending += 1;
                    self.flushes.push_back((req.id, slot));
                }
                BlockOp::Write if self.layout.page_mapped() => {
                    self.outstanding_writes.insert(req.id);
                    self.spawn_unit_segments(slot, req.offset_bytes, req.len_bytes, q);
                }
                BlockOp::Read | BlockOp::Trim if self.layout.page_mapped() => {
                    self.spawn_unit_segments(slot, req.offset_bytes, req.len_bytes, q)
                }
                BlockOp::Write => {
                    self.outstanding_writes.insert(req.id);
                    self.spawn_segments(slot, req.offset_bytes, req.len_bytes, q);
                }
                BlockOp::Read | BlockOp::Trim => {
                    self.spawn_segments(slot, req.offset_bytes, req.len_bytes, q)
                }
            }
        } else {
            self.stats.requests_failed += 1;
        }
        self.finish_segment(slot, q);
        self.release_flushes(q);
    }

    fn count_request(&mut self, op: BlockOp, len: u64) {
        let s = &mut self.stats;
        match op {
            BlockOp::Read => {
                s.host_reads += 1;
                s.host_read_bytes += len;
            }
            BlockOp::Write => {
                s.host_writes += 1;
                s.host_write_bytes += len;
            }
            BlockOp::Trim => s.host_trims += 1,
            BlockOp::Flush => s.host_flushes += 1,
        }
    }

    fn spawn_segments(&mut self, slot: ReqId, offset: u64, len: u64, q: &mut impl Schedule<Event>) {
        let gb = self.layout.group_bytes();
        let op = self.reqs.get(slot).op;
        let end = offset + len;
        let mut at = offset;
        while at < end {
            let in_group = at % gb;
            let n = (end - at).min(gb - in_group);
            let seg = Segment {
                req: slot,
                lgn: Lgn((at / gb) as u32),
                first_sector: (in_group / SECTOR_BYTES) as u32,
                sectors: (n / SECTOR_BYTES) as u32,
                payload_offset: at - offset,
            };
            self.reqs.get_mut(slot).pending += 1;
            match op {
                BlockOp::Read => self.start_read(seg, q),
                BlockOp::Write => {
                    let job = self.jobs.writes.insert(WriteJob {
                        seg,
                        phase: WritePhase::WaitLock,
                        pending: 0,
                        failed: false,
                        lost: PageSet::default(),
                        lost_to_media: PageSet::default(),
                        merge_error: None,
                        old: None,
                        dest: None,
                        seq: 0,
                        buf: Vec::new(),
                    });
                    self.acquire_lock(seg.lgn, LockedJob::Write(job), q);
                }
                BlockOp::Trim => {
                    if seg.sectors == self.group_sectors() {
                        let job = self.jobs.trims.insert(TrimJob { seg });
                        self.acquire_lock(seg.lgn, LockedJob::Trim(job), q);
                    } else {
                        // Trims are advisory: a partial group is left as it is.
                        self.finish_segment(slot, q);
                    }
                }
                BlockOp::Flush => unreachable!("a flush has no segments (`submit_host` queues it)"),
            }
            at += n;
        }
    }

    fn group_sectors(&self) -> u32 {
        (self.layout.group_bytes() / SECTOR_BYTES) as u32
    }

    fn sectors_per_page(&self) -> u32 {
        self.layout.sectors_per_page()
    }

    /// The group's pages that sectors [first, first + n) touch.
    fn touched_pages(&self, first: u32, n: u32) -> PageSet {
        let spp = self.sectors_per_page();
        PageSet::range(first / spp, (first + n - 1) / spp)
    }

    /// The pages that sectors [first, first + n) cover completely.
    fn covered_pages(&self, first: u32, n: u32) -> PageSet {
        let spp = self.sectors_per_page();
        let a = first.div_ceil(spp);
        let end = (first + n) / spp; // exclusive
        if end <= a {
            PageSet::default()
        } else {
            PageSet::range(a, end - 1)
        }
    }

    pub(super) fn all_pages(&self) -> PageSet {
        PageSet::range(0, self.layout.group_pages() - 1)
    }

    /// Submits one flash read per channel for the pages of `pgn` in `mask`; returns the count.
    pub(super) fn submit_group_read(
        &mut self,
        job: FlashJob,
        pgn: Pgn,
        mask: &PageSet,
        q: &mut impl Schedule<Event>,
    ) -> u32 {
        let n = self.submit_group(job.tag(), None, pgn, mask, q);
        // No operation would leave the job waiting for a completion that never comes.
        debug_assert!(n > 0, "{job:?} reads at least one page of {pgn:?}");
        n
    }

    /// Programs every page of `pgn` with `job`'s group buffer (one program per channel);
    /// returns the count.
    pub(super) fn submit_group_program(
        &mut self,
        job: GroupProgram,
        pgn: Pgn,
        q: &mut impl Schedule<Event>,
    ) -> u32 {
        let all = self.all_pages();
        let n = self.submit_group(FlashJob::from(job).tag(), Some(job), pgn, &all, q);
        debug_assert_eq!(
            n, self.layout.geo.channels,
            "a group program covers every channel"
        );
        n
    }

    /// One flash op per channel for the pages of `pgn` in `mask`: reads, or with `program`
    /// the programs of that job's data.
    fn submit_group(
        &mut self,
        tag: u64,
        program: Option<GroupProgram>,
        pgn: Pgn,
        mask: &PageSet,
        q: &mut impl Schedule<Event>,
    ) -> u32 {
        let kind = if program.is_some() {
            OpKind::Program
        } else {
            OpKind::Read
        };
        let sb = self.layout.sb_of(pgn);
        let page = self.layout.page_of(pgn);
        let channels = self.layout.geo.channels;
        let planes = self.layout.geo.planes_per_die;
        let slc = self.sbs.get(sb).slc;
        let mut ops = 0;
        for c in 0..channels {
            let mut plane_mask = 0u8;
            let mut plane_blocks = [0u32; nearflash_flash::backbone::PLANES_MAX];
            for l in 0..planes {
                if mask.contains(self.layout.page_index(c, l)) {
                    plane_mask |= 1 << l;
                    plane_blocks[l as usize] = self.remap.block(sb, c, l);
                }
            }
            if plane_mask == 0 {
                continue;
            }
            let (data, oob) = match program {
                Some(job) if self.functional => self.program_payload(job, pgn, c, plane_mask),
                _ => (Vec::new(), Vec::new()),
            };
            self.bb.submit(
                FlashOp {
                    kind,
                    die: self.layout.die_of(sb, c),
                    page,
                    pages: 1,
                    plane_mask,
                    plane_blocks,
                    tag,
                    data,
                    oob,
                    slc,
                },
                &mut q.map(Event::Flash),
            );
            ops += 1;
        }
        ops
    }

    /// Page data and OOB records of channel `c`'s pages of a group being programmed.
    fn program_payload(
        &self,
        job: GroupProgram,
        pgn: Pgn,
        c: u32,
        plane_mask: u8,
    ) -> (Vec<u8>, Vec<u8>) {
        let ps = self.layout.geo.page_size_bytes as usize;
        let os = self.layout.geo.oob_size_bytes as usize;
        let gp = u64::from(self.layout.group_pages());
        let info = self.sbs.get(self.layout.sb_of(pgn));
        let (epoch, slc) = (info.epoch, info.slc);
        let (buf, lgn, seq, lost, lost_to_media) = match job {
            GroupProgram::Write(id) => {
                let w = self.jobs.writes.get(id);
                (&w.buf, w.seg.lgn, w.seq, &w.lost, &w.lost_to_media)
            }
            GroupProgram::Copy(id) => {
                let cp = self.jobs.copies.get(id);
                (&cp.buf, cp.lgn, cp.seq, &cp.lost, &cp.lost_to_media)
            }
        };
        debug_assert_eq!(buf.len(), self.layout.group_buf_bytes() as usize);
        let planes = plane_mask.count_ones() as usize;
        let mut data = Vec::with_capacity(planes * ps);
        let mut oob = vec![0u8; planes * os];
        for (i, l) in (0..8u32).filter(|l| plane_mask & (1 << l) != 0).enumerate() {
            let k = self.layout.page_index(c, l) as usize;
            let page = &buf[k * ps..(k + 1) * ps];
            data.extend_from_slice(page);
            OobRecord {
                lpn: u64::from(lgn.0) * gp + k as u64,
                seq,
                epoch,
                kind: if lost_to_media.contains(k as u32) {
                    PageKind::Lost(LossCause::Media)
                } else if lost.contains(k as u32) {
                    PageKind::Lost(LossCause::Integrity)
                } else {
                    PageKind::Data
                },
                slc,
                placement: None,
            }
            .encode(page, &mut oob[i * os..(i + 1) * os]);
        }
        (data, oob)
    }

    /// Functional fidelity: checks each page of a read completion belongs to `lgn` and hands
    /// (page index, page data) to `sink`. Returns the pages that failed: garbage, a page of
    /// another group, one recorded as lost, or one the ECC could not correct (never handed
    /// on, whatever its spare area says).
    pub(super) fn for_each_read_page(
        &self,
        c: &FlashCompletion,
        lgn: Lgn,
        mut sink: impl FnMut(u32, &[u8]),
    ) -> ReadFailures {
        let ps = self.layout.geo.page_size_bytes as usize;
        let os = self.layout.geo.oob_size_bytes as usize;
        let channel = self.layout.geo.channel_of(c.op.die);
        let gp = u64::from(self.layout.group_pages());
        let mut failed = ReadFailures::default();
        let uncorrectable = match c.status {
            OpStatus::Uncorrectable { plane_mask } => plane_mask,
            _ => 0,
        };
        for (i, l) in c.op.plane_iter().enumerate() {
            let k = self.layout.page_index(channel, l);
            if uncorrectable & (1 << l) != 0 {
                failed.pages.insert(k);
                failed.media.insert(k);
                continue;
            }
            let data = &c.op.data[i * ps..(i + 1) * ps];
            let rec = OobRecord::decode(data, &c.op.oob[i * os..(i + 1) * os]);
            let lpn = u64::from(lgn.0) * gp + u64::from(k);
            match rec {
                Some(r) if r.kind == PageKind::Data && r.lpn == lpn => sink(k, data),
                Some(r) if r.kind == PageKind::Lost(LossCause::Media) && r.lpn == lpn => {
                    failed.pages.insert(k);
                    failed.media.insert(k);
                }
                _ => failed.pages.insert(k),
            }
        }
        failed
    }

    fn start_read(&mut self, seg: Segment, q: &mut impl Schedule<Event>) {
        let Some(pgn) = self.map.lookup(seg.lgn) else {
            // Never written (or trimmed): zeros, no flash access.
            self.finish_segment(seg.req, q);
            return;
        };
        let sb = self.layout.sb_of(pgn);
        self.sbs.get_mut(sb).pins += 1;
        let job = self.jobs.reads.insert(ReadJob {
            seg,
            pgn,
            pending: 0,
        });
        let mask = self.touched_pages(seg.first_sector, seg.sectors);
        let n = self.submit_group_read(FlashJob::Read(job), pgn, &mask, q);
        debug_assert!(n > 0, "a read of a mapped group touches at least one page");
        let r = self.jobs.reads.get_mut(job);
        r.pending = n;
    }

    pub(super) fn on_read_done(
        &mut self,
        id: ReadId,
        c: FlashCompletion,
        q: &mut impl Schedule<Event>,
    ) {
        let r = self.jobs.reads.get(id);
        let (seg, pgn) = (r.seg, r.pgn);
        self.on_media_read(&c, pgn);
        // Timing fidelity's common case, a read of a group with no lost page that decoded:
        // nothing failed, and no page set needs building (this is every flash read's path).
        let failed = if self.functional {
            let spp = self.sectors_per_page();
            let mut out = std::mem::take(&mut self.reqs.get_mut(seg.req).data);
            let failed = self.for_each_read_page(&c, seg.lgn, |k, page| {
                copy_overlap(k, spp, page, seg, &mut out);
            });
            self.reqs.get_mut(seg.req).data = out;
            Some(failed)
        } else if self.timing_read_may_fail(&c, pgn) {
            Some(self.timing_read_failures(&c, pgn))
        } else {
            None
        };
        if let Some(failed) = failed {
            if !failed.pages.minus(&failed.media).is_empty() {
                self.stats.integrity_errors += 1;
                self.reqs.get_mut(seg.req).result = Err(IoError::Integrity);
            } else if !failed.media.is_empty() {
                // Uncorrectable now, or a page lost to an uncorrectable read when it was
                // moved: the ECC, not the checksum, knows the page is wrong.
                self.reqs.get_mut(seg.req).result = Err(IoError::Uncorrectable);
            }
        }
        if matches!(c.status, OpStatus::Uncorrectable { .. }) {
            self.stats.uncorrectable_reads += 1;
        }
        let r = self.jobs.reads.get_mut(id);
        debug_assert!(r.pending > 0, "a completion of an operation in flight");
        r.pending -= 1;
        if r.pending == 0 {
            let pgn = r.pgn;
            self.jobs.reads.remove(id);
            self.unpin(pgn, q);
            self.finish_segment(seg.req, q);
        }
    }

    pub(super) fn unpin(&mut self, pgn: Pgn, q: &mut impl Schedule<Event>) {
        let sb = self.layout.sb_of(pgn);
        let info = self.sbs.get_mut(sb);
        assert!(info.pins > 0);
        info.pins -= 1;
        if info.pins == 0 {
            self.pump_gc(q);
        }
    }

    pub(super) fn acquire_lock(&mut self, lgn: Lgn, job: LockedJob, q: &mut impl Schedule<Event>) {
        match self.locks.get_mut(&lgn.0) {
            Some(waiters) => waiters.push_back(job),
            None => {
                self.locks.insert(lgn.0, Default::default());
                self.run_locked(job, q);
            }
        }
    }

    pub(super) fn release_lock(&mut self, lgn: Lgn, q: &mut impl Schedule<Event>) {
        let waiters = self.locks.get_mut(&lgn.0).expect("lock held");
        match waiters.pop_front() {
            Some(next) => self.run_locked(next, q),
            None => {
                self.locks.remove(&lgn.0);
            }
        }
    }

    fn run_locked(&mut self, job: LockedJob, q: &mut impl Schedule<Event>) {
        match job {
            LockedJob::Trim(id) => {
                let seg = self.jobs.trims.remove(id).seg;
                debug_assert!(
                    self.locks.contains_key(&seg.lgn.0),
                    "a trim runs under its lock"
                );
                self.map.unmap(seg.lgn);
                self.ckpt.dirty = true;
                self.release_lock(seg.lgn, q);
                self.finish_segment(seg.req, q);
            }
            LockedJob::Write(id) => self.start_write(id, q),
            LockedJob::UnitWrite(id) => self.start_unit_write(id, q),
        }
    }

    fn start_write(&mut self, job: WriteId, q: &mut impl Schedule<Event>) {
        let group_bytes = self.layout.group_buf_bytes() as usize;
        let w = self.jobs.writes.get(job);
        let seg = w.seg;
        let old = self.map.lookup(seg.lgn);
        let keep = self
            .all_pages()
            .minus(&self.covered_pages(seg.first_sector, seg.sectors));
        let functional = self.functional;
        let w = self.jobs.writes.get_mut(job);
        if functional {
            w.buf = vec![0u8; group_bytes];
        }
        match old {
            Some(old) if !keep.is_empty() => {
                w.phase = WritePhase::ReadOld;
                w.old = Some(old);
                self.sbs.get_mut(self.layout.sb_of(old)).pins += 1;
                self.stats.rmw_page_reads += u64::from(keep.count());
                let n = self.submit_group_read(FlashJob::Write(job), old, &keep, q);
                let w = self.jobs.writes.get_mut(job);
                w.pending = n;
            }
            _ => self.write_alloc(job, q),
        }
    }

    pub(super) fn write_alloc(&mut self, job: WriteId, q: &mut impl Schedule<Event>) {
        let now = q.now();
        self.jobs.writes.get_mut(job).phase = WritePhase::WaitAlloc;
        match self.alloc_host(0, now) {
            Some(pgn) => self.write_program(job, pgn, q),
            None => {
                self.alloc_waiters.push_back(SpaceWaiter::Group(job), 0);
                self.pump_gc(q);
            }
        }
    }

    pub(super) fn write_program(&mut self, job: WriteId, pgn: Pgn, q: &mut impl Schedule<Event>) {
        let seq = self.write_seq;
        self.write_seq += 1;
        let sector = SECTOR_BYTES as usize;
        let w = self.jobs.writes.get_mut(job);
        w.phase = WritePhase::Program;
        w.dest = Some(pgn);
        w.seq = seq;
        w.failed = false;
        let seg = w.seg;
        if self.functional {
            let mut buf = std::mem::take(&mut w.buf);
            let src = &self.reqs.get(seg.req).data;
            let spp = self.sectors_per_page();
            // Page by page: a page's sectors are contiguous in the buffer, but a page size
            // that is not a multiple of the sector leaves a gap after each page's sectors.
            let mut s = seg.first_sector;
            let end = seg.first_sector + seg.sectors;
            while s < end {
                let run = (end - s).min(spp - s % spp);
                let from = seg.payload_offset as usize + (s - seg.first_sector) as usize * sector;
                let at = self.layout.sector_buf_offset(s);
                let n = run as usize * sector;
                buf[at..at + n].copy_from_slice(&src[from..from + n]);
                s += run;
            }
            let w = self.jobs.writes.get_mut(job);
            w.buf = buf;
        }
        let n = self.submit_group_program(GroupProgram::Write(job), pgn, q);
        let w = self.jobs.writes.get_mut(job);
        w.pending = n;
    }

    pub(super) fn on_write_flash_done(
        &mut self,
        id: WriteId,
        c: FlashCompletion,
        q: &mut impl Schedule<Event>,
    ) {
        let w = self.jobs.writes.get(id);
        match w.phase {
            WritePhase::ReadOld => {
                let (lgn, old) = (w.seg.lgn, w.old.expect("old group"));
                let (first_sector, sectors) = (w.seg.first_sector, w.seg.sectors);
                self.on_media_read(&c, old);
                // As in `on_read_done`: a clean timing read fails no page, and the merge then
                // changes nothing of the write's lost pages or its error.
                let failed = if self.functional {
                    let ps = self.layout.geo.page_size_bytes as usize;
                    let w = self.jobs.writes.get_mut(id);
                    let mut buf = std::mem::take(&mut w.buf);
                    let failed = self.for_each_read_page(&c, lgn, |k, page| {
                        buf[k as usize * ps..(k as usize + 1) * ps].copy_from_slice(page);
                    });
                    let w = self.jobs.writes.get_mut(id);
                    w.buf = buf;
                    Some(failed)
                } else if self.timing_read_may_fail(&c, old) {
                    Some(self.timing_read_failures(&c, old))
                } else {
                    None
                };
                if let Some(failed) = failed {
                    let touched = self.touched_pages(first_sector, sectors);
                    self.merge_read_failures(id, &failed, &touched);
                }
                let w = self.jobs.writes.get_mut(id);
                debug_assert!(w.pending > 0, "a completion of an operation in flight");
                w.pending -= 1;
                if w.pending == 0 {
                    let old = w.old.expect("old group");
                    self.unpin(old, q);
                    let w = self.jobs.writes.get(id);
                    match w.merge_error.clone() {
                        Some(e) => self.fail_write(id, e, q),
                        None => self.write_alloc(id, q),
                    }
                }
            }
            WritePhase::Program => {
                let failed = matches!(c.status, OpStatus::Failed { .. });
                if failed {
                    self.on_program_failure(w.dest.expect("dest"));
                }
                let w = self.jobs.writes.get_mut(id);
                w.failed |= failed;
                debug_assert!(w.pending > 0, "a completion of an operation in flight");
                w.pending -= 1;
                if w.pending > 0 {
                    return;
                }
                let (dest, seg, seq, failed) = (w.dest.expect("dest"), w.seg, w.seq, w.failed);
                self.program_done(dest);
                if failed {
                    // The data is still in the controller's buffer: write it elsewhere.
                    self.write_alloc(id, q);
                    return;
                }
                self.map.map(seg.lgn, dest, seq);
                self.ckpt.dirty = true;
                self.stats.host_group_programs += 1;
                self.note_host_program(dest);
                let w = self.jobs.writes.remove(id);
                self.set_media_lost(dest, w.lost_to_media);
                self.release_lock(seg.lgn, q);
                self.finish_segment(seg.req, q);
                self.wake_alloc_waiters(q);
            }
            WritePhase::WaitLock | WritePhase::WaitAlloc => unreachable!("no flash op in flight"),
        }
    }

    /// A member of the superblock holding `pgn` failed a program: stop writing there and let
    /// GC move its data and remap the bad block.
    pub(super) fn on_program_failure(&mut self, pgn: Pgn) {
        let sb = self.layout.sb_of(pgn);
        self.stats.program_failures += 1;
        self.sbs.set_retiring(sb, true);
        self.close_superblock(sb);
    }

    /// Timing fidelity: whether `timing_read_failures` can find a failed page — the read was
    /// uncorrectable, or the group holds pages lost to the media. When not, it finds none.
    fn timing_read_may_fail(&self, c: &FlashCompletion, pgn: Pgn) -> bool {
        debug_assert!(!self.functional);
        matches!(c.status, OpStatus::Uncorrectable { .. }) || self.media_lost.contains_key(&pgn.0)
    }

    /// Timing fidelity (no page data): the pages of a read of the group at `pgn` that fail —
    /// those the ECC could not correct, and those programmed as lost to the media
    /// (`media_lost`). All are media losses.
    pub(super) fn timing_read_failures(&self, c: &FlashCompletion, pgn: Pgn) -> ReadFailures {
        debug_assert!(!self.functional);
        let uncorrectable = match c.status {
            OpStatus::Uncorrectable { plane_mask } => plane_mask,
            _ => 0,
        };
        let lost = self.media_lost.get(&pgn.0);
        let channel = self.layout.geo.channel_of(c.op.die);
        let mut failed = ReadFailures::default();
        for l in c.op.plane_iter() {
            let k = self.layout.page_index(channel, l);
            if uncorrectable & (1 << l) != 0 || lost.is_some_and(|p| p.contains(k)) {
                failed.pages.insert(k);
                failed.media.insert(k);
            }
        }
        failed
    }

    /// A partial-group write's read of the old group failed `failed`: a page the write leaves
    /// alone stays lost; a page it touches but does not cover needs its other sectors, so the
    /// write fails and changes nothing, rather than fill them with zeros.
    fn merge_read_failures(&mut self, id: WriteId, failed: &ReadFailures, touched: &PageSet) {
        if !failed.pages.minus(&failed.media).is_empty() {
            self.stats.integrity_errors += 1;
        }
        let untouched = failed.pages.minus(touched);
        let touched_failed = failed.pages.intersect(touched);
        let w = self.jobs.writes.get_mut(id);
        w.lost.union_with(&untouched);
        w.lost_to_media
            .union_with(&untouched.intersect(&failed.media));
        if w.merge_error.is_none() && !touched_failed.is_empty() {
            w.merge_error = Some(if touched_failed.minus(&failed.media).is_empty() {
                IoError::Uncorrectable
            } else {
                IoError::Integrity
            });
        }
    }

    /// Timing fidelity: the group just programmed at `pgn` holds `lost` as lost to the media
    /// (functional fidelity writes the marker into the pages' spare areas instead).
    pub(super) fn set_media_lost(&mut self, pgn: Pgn, lost: PageSet) {
        if self.functional || lost.is_empty() {
            return;
        }
        let stale = self.media_lost.insert(pgn.0, lost);
        debug_assert!(stale.is_none(), "a programmed group was erased first");
    }

    /// Timing fidelity: `sb` was erased, and its lost-page records with it.
    pub(super) fn forget_media_lost(&mut self, sb: SbId) {
        let first = self.layout.pgn(sb, 0).0;
        let end = first + self.layout.groups_per_superblock();
        let gone: Vec<u32> = self.media_lost.range(first..end).map(|(&p, _)| p).collect();
        for p in gone {
            self.media_lost.remove(&p);
        }
    }

    /// Ends a write segment with `e` before it programmed anything: the group keeps its old
    /// version.
    fn fail_write(&mut self, id: WriteId, e: IoError, q: &mut impl Schedule<Event>) {
        let w = self.jobs.writes.remove(id);
        if e == IoError::Uncorrectable {
            self.stats.uncorrectable_reads += 1;
        }
        self.reqs.get_mut(w.seg.req).result = Err(e);
        self.release_lock(w.seg.lgn, q);
        self.finish_segment(w.seg.req, q);
    }

    /// A data read completed: a block it found weak (too many reads needed read-retry or
    /// failed) is retired like a block that failed a program — marked bad, its superblock
    /// closed and collected first, the block replaced by a spare at the erase.
    pub(super) fn on_media_read(&mut self, c: &FlashCompletion, pgn: Pgn) {
        if c.weak_planes == 0 {
            return;
        }
        let sb = self.layout.sb_of(pgn);
        for p in (0..8u32).filter(|p| c.weak_planes & (1 << p) != 0) {
            let b = self
                .layout
                .geo
                .block_id(c.op.die, p, c.op.plane_blocks[p as usize]);
            debug_assert_eq!(
                self.remap
                    .block_id(&self.layout, sb, self.layout.geo.channel_of(c.op.die), p),
                b,
                "a data read addresses its superblock's member"
            );
            if !self.bb.nand().is_bad(b) {
                self.bb.nand_mut().mark_bad(b);
                self.stats.media_blocks_retired += 1;
            }
        }
        self.sbs.set_retiring(sb, true);
        self.close_superblock(sb);
    }

    /// Fails every host write waiting for space (GC found nothing to reclaim).
    pub(super) fn fail_alloc_waiters(&mut self, q: &mut impl Schedule<Event>) {
        while let Some(Waiter { job, .. }) = self.alloc_waiters.pop_front() {
            let job = match job {
                SpaceWaiter::Fill(fill) => {
                    self.fail_fill(fill, q);
                    continue;
                }
                SpaceWaiter::Group(job) => job,
            };
            let w = self.jobs.writes.remove(job);
            self.reqs.get_mut(w.seg.req).result = Err(IoError::NoSpace);
            self.release_lock(w.seg.lgn, q);
            self.finish_segment(w.seg.req, q);
        }
    }

    /// Hands free groups to waiting host writes, in arrival order.
    ///
    /// Story (found by the configuration fuzzer): writes that queued while a host write
    /// point still had room (its programs busy) did not count as waiting for space, so GC was
    /// not asked for them; when that point then filled up, nothing asked again, and on a
    /// device whose program failures had used up the spare superblocks the writes waited
    /// forever. Once the points are full, GC is asked — and fails the writes with `NoSpace`
    /// when nothing can be reclaimed.
    pub(super) fn wake_alloc_waiters(&mut self, q: &mut impl Schedule<Event>) {
        let now = q.now();
        // Waiters are served in arrival order within their lane; a lane whose first waiter
        // finds no room holds the rest of that lane back, not the other lanes'. Once every
        // lane is held back, nothing further down the queue can be served.
        let lanes = self.alloc_waiters.lanes();
        let mut blocked = vec![false; lanes];
        let mut blocked_count = 0;
        let mut i = 0;
        while let Some(Waiter { job, lane }) = self.alloc_waiters.get(i) {
            if blocked_count == lanes {
                break;
            }
            if blocked[usize::from(lane)] {
                i += 1;
                continue;
            }
            match job {
                SpaceWaiter::Fill(fill) => {
                    let stream = super::jobs::FillStream::Host(lane);
                    if let Some((pgn, c)) = self.next_slice(stream, now) {
                        self.alloc_waiters.remove(i);
                        self.program_fill(fill, pgn, c, q);
                        continue;
                    }
                }
                SpaceWaiter::Group(write) => {
                    if let Some(pgn) = self.alloc_host(lane, now) {
                        self.alloc_waiters.remove(i);
                        self.write_program(write, pgn, q);
                        continue;
                    }
                }
            }
            blocked[usize::from(lane)] = true;
            blocked_count += 1;
            i += 1;
        }
        if blocked_count > 0 && self.has_alloc_waiters() {
            self.pump_gc(q);
        }
    }

    /// Whether writes of host lane `lane` are waiting (a new one queues behind them).
    pub(super) fn lane_has_waiters(&self, lane: u16) -> bool {
        self.alloc_waiters.lane_has_waiters(lane)
    }

    /// Whether host writes wait for space (not merely for a busy write point to drain).
    pub(super) fn has_alloc_waiters(&self) -> bool {
        self.alloc_waiters
            .waiting_lanes()
            .any(|lane| !self.host_points_have_room(lane))
    }

    /// One segment (or the submission itself) of request `slot` is done.
    pub(super) fn finish_segment(&mut self, slot: ReqId, q: &mut impl Schedule<Event>) {
        let r = self.reqs.get_mut(slot);
        debug_assert!(r.pending > 0, "a completion of an operation in flight");
        r.pending -= 1;
        if r.pending > 0 {
            return;
        }
        let r = self.reqs.remove(slot);
        if r.result.is_err() {
            self.stats.requests_failed += u64::from(r.op != BlockOp::Flush);
        }
        if r.op == BlockOp::Write {
            self.outstanding_writes.remove(&r.id);
        }
        self.completions.push(BlockCompletion {
            id: r.id,
            op: r.op,
            offset_bytes: r.offset_bytes,
            len_bytes: r.len_bytes,
            submitted: r.submitted,
            completed: q.now(),
            result: r.result,
            data: if r.op == BlockOp::Read {
                r.data
            } else {
                Vec::new()
            },
        });
        self.host_request_finished(q);
        if r.op == BlockOp::Write {
            self.release_flushes(q);
        }
    }

    /// Completes flushes whose earlier writes have all been acknowledged.
    fn release_flushes(&mut self, q: &mut impl Schedule<Event>) {
        while let Some(&(fid, slot)) = self.flushes.front() {
            if self.outstanding_writes.first().is_some_and(|&w| w < fid) {
                break;
            }
            self.flushes.pop_front();
            self.finish_segment(slot, q);
        }
    }
}

/// Copies the sectors of page `k` that the segment asked for into the request payload.
fn copy_overlap(k: u32, spp: u32, page: &[u8], seg: Segment, out: &mut [u8]) {
    let sector = SECTOR_BYTES as usize;
    let page_first = k * spp;
    let lo = seg.first_sector.max(page_first);
    let hi = (seg.first_sector + seg.sectors).min(page_first + spp);
    if lo >= hi {
        return;
    }
    let src = (lo - page_first) as usize * sector;
    let dst = seg.payload_offset as usize + (lo - seg.first_sector) as usize * sector;
    let n = (hi - lo) as usize * sector;
    out[dst..dst + n].copy_from_slice(&page[src..src + n]);
}
