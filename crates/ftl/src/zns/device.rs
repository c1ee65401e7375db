//! The drive in zoned mode: a sans-IO state machine like `Device`, over the same flash
//! backbone and layout, with zones in place of the mapping table. Zone `z` is superblock `z`
//! (one block per channel × plane on way `z % ways`); zone-relative data fills its page rows
//! in order, one page group per row, so a zone needs no mapping entries, no GC and no
//! checkpoint: a Reset erases its blocks on their dies, and a power cut is recovered by
//! reading the zone's rows (`recovery.rs`).
//!
//! Writes are acknowledged only once programmed (no volatile cache, as `Device`): data
//! gathers in the zone's open row buffer; a full row is programmed at once, a partial one at
//! the end of the instant in which it began (`ZnsEvent::Seal`), padded — each row records in
//! its spare area which zone-relative sectors it holds, so a padded row costs flash but never
//! misplaces data. When padding has used up a zone's rows before its capacity, the controller
//! finishes the zone (ZFC). A program that fails turns the zone Read Only; an erase that
//! fails takes it Offline. Reads of unwritten sectors return zeros; reads of sectors still
//! in a row buffer are served from it.
//!
//! Host commands arrive by two faces: `BlockDevice` (Read, Write at the write pointer,
//! Flush; a Trim is refused — zoned data is freed by Reset) and `submit_zone` (Zone Append,
//! Zone Management Send and Receive), whose answers leave through `take_zone_completions`.

use super::config::ZnsConfig;
use super::zone::{ZoneAction, ZoneState, ZoneTable};
use crate::config::FtlConfig;
use crate::layout::{Layout, SbId};
use crate::oob::{OobRecord, PageKind};
pub use nearflash_blockdev::zone::{ZoneCommand, ZoneCompletion, ZoneReply, ZoneRequest};
use nearflash_blockdev::{
    BlockCompletion, BlockOp, BlockRequest, IoError, ZoneStatus, SECTOR_BYTES,
};
use nearflash_flash::backbone::PLANES_MAX;
use nearflash_flash::{
    Backbone, ConfigError, FlashCompletion, FlashConfig, FlashEvent, FlashOp, Geometry, OpKind,
    OpStatus, PageStore,
};
use nearflash_sim::{Schedule, SimDuration, SimRng, SimTime, TraceEvent};
use std::collections::{BTreeSet, VecDeque};

/// A read of one row on one channel: (row, the row's first sector, channel, its
/// (request sector, row sector) pairs).
type RowRead = (u32, u32, u32, Vec<(u32, u32)>);

/// Most descriptors one Report Zones returns (a report is bounded like any answer).
pub const REPORT_ZONES_MAX: usize = 4096;

/// The zoned device's events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZnsEvent {
    Flash(FlashEvent),
    /// The end of the instant in which a partial row buffer began: program it, padded.
    Seal,
}

impl From<FlashEvent> for ZnsEvent {
    fn from(e: FlashEvent) -> Self {
        ZnsEvent::Flash(e)
    }
}

impl TraceEvent for ZnsEvent {
    fn hash_word(&self) -> u64 {
        match *self {
            ZnsEvent::Flash(f) => f.hash_word(),
            ZnsEvent::Seal => 0x5A << 48,
        }
    }
}

/// Counters of the zoned device.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ZnsStats {
    /// Sectors the host wrote (writes and appends).
    pub host_sectors_written: u64,
    /// Page rows programmed with data (full or padded), and the padded ones among them.
    pub rows_programmed: u64,
    pub rows_padded: u64,
    pub finish_marks: u64,
    pub resets: u64,
    pub zone_erases: u64,
    pub implicit_closes: u64,
    pub finished_by_controller: u64,
    pub program_failures: u64,
    pub erase_failures: u64,
}

/// A page row of a zone holding data (programmed, or its program in flight).
#[derive(Clone, Debug)]
struct Row {
    row: u32,
    /// Zone-relative first sector and sector count.
    start: u32,
    sectors: u32,
    /// Its program has not completed: reads are served from `buf`, the row's data
    /// (functional fidelity; empty otherwise), dropped once programmed.
    in_flight: bool,
    buf: Vec<u8>,
}

/// The row buffer a zone's writes are gathering in.
#[derive(Clone, Debug)]
struct Fill {
    start: u32,
    sectors: u32,
    buf: Vec<u8>,
    waiters: Vec<u32>,
}

#[derive(Clone, Debug, Default)]
struct ZoneMedia {
    /// Next page row to program.
    next_row: u32,
    rows: Vec<Row>,
    fill: Option<Fill>,
    /// Bumped by each Reset and Offline: flash work of an older generation finds its rows gone.
    generation: u64,
    /// The zone's blocks hold something (torn rows found by recovery) and must be erased
    /// before its next program.
    needs_erase: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Face {
    Block(BlockOp),
    Append,
    Zone,
}

struct Req {
    id: u64,
    face: Face,
    offset_bytes: u64,
    len_bytes: u64,
    submitted: SimTime,
    /// Flash operations (reads) or rows (writes) still to finish.
    remaining: u32,
    result: Result<(), IoError>,
    data: Vec<u8>,
    appended_sector: u64,
    /// Write order, for flushes.
    write_seq: u64,
}

enum Job {
    Program {
        zone: u32,
        generation: u64,
        row: u32,
        remaining: u32,
        failed: bool,
        waiters: Vec<u32>,
    },
    Read {
        req: u32,
        /// The zone generation and the row's first sector when the read was issued: what
        /// the page's spare area must say (a Reset may have come since).
        generation: u64,
        start: u32,
        channel: u32,
        /// (sector index within the request, sector index within the row) pairs.
        sectors: Vec<(u32, u32)>,
    },
    Erase {
        zone: u32,
        remaining: u32,
        failed: bool,
        req: Option<u32>,
        offline: bool,
    },
}

/// A slab with a free list; ids are reused.
struct Slab<T> {
    items: Vec<Option<T>>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            items: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slab<T> {
    fn insert(&mut self, v: T) -> u32 {
        if let Some(i) = self.free.pop() {
            assert!(self.items[i as usize].is_none());
            self.items[i as usize] = Some(v);
            i
        } else {
            self.items.push(Some(v));
            self.items.len() as u32 - 1
        }
    }
    fn get(&mut self, i: u32) -> &mut T {
        self.items[i as usize].as_mut().expect("live slab entry")
    }
    fn remove(&mut self, i: u32) -> T {
        let v = self.items[i as usize].take().expect("live slab entry");
        self.free.push(i);
        v
    }
    fn live(&self) -> usize {
        self.items.len() - self.free.len()
    }
}

pub struct ZonedDevice {
    pub(super) layout: Layout,
    pub(super) cfg: ZnsConfig,
    pub(super) bb: Backbone,
    pub(super) table: ZoneTable,
    media: Vec<ZoneMedia>,
    functional: bool,
    reqs: Slab<Req>,
    jobs: Slab<Job>,
    seal_due: Vec<u32>,
    seal_scheduled: bool,
    next_write_seq: u64,
    outstanding_writes: BTreeSet<u64>,
    flushes: VecDeque<(u64, u32)>,
    completions: Vec<BlockCompletion>,
    zone_completions: Vec<ZoneCompletion>,
    flash_done: Vec<FlashCompletion>,
    stats: ZnsStats,
}

impl ZonedDevice {
    /// A freshly formatted zoned drive (every block erased) over `store`.
    pub fn format(
        flash: &FlashConfig,
        ftl: &FtlConfig,
        zns: &ZnsConfig,
        store: Box<dyn PageStore>,
    ) -> Result<ZonedDevice, ConfigError> {
        flash.validate()?;
        ftl.validate(flash)?;
        zns.validate(flash)?;
        let bb = Backbone::new(flash, store);
        Ok(Self::assemble(bb, ftl, zns))
    }

    pub(super) fn assemble(bb: Backbone, ftl: &FtlConfig, zns: &ZnsConfig) -> ZonedDevice {
        let layout = Layout::new(&Geometry::from_config(bb.config()), ftl);
        let zone_sectors =
            u64::from(layout.groups_per_superblock()) * layout.group_bytes() / SECTOR_BYTES;
        let zones = layout.superblocks();
        let open_max = zns.max_open_zones.min(zones);
        let active_max = zns.max_active_zones.min(zones);
        ZonedDevice {
            table: ZoneTable::new(zones, zone_sectors, zone_sectors, open_max, active_max),
            media: vec![ZoneMedia::default(); zones as usize],
            functional: bb.store().holds_data(),
            reqs: Slab::default(),
            jobs: Slab::default(),
            seal_due: Vec::new(),
            seal_scheduled: false,
            next_write_seq: 1,
            outstanding_writes: BTreeSet::new(),
            flushes: VecDeque::new(),
            completions: Vec::new(),
            zone_completions: Vec::new(),
            flash_done: Vec::new(),
            stats: ZnsStats::default(),
            layout,
            cfg: zns.clone(),
            bb,
        }
    }

    pub fn zones(&self) -> &ZoneTable {
        &self.table
    }

    pub fn stats(&self) -> &ZnsStats {
        &self.stats
    }

    pub fn backbone(&self) -> &Backbone {
        &self.bb
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    pub fn config(&self) -> &ZnsConfig {
        &self.cfg
    }

    /// Bytes of a zone (= its capacity).
    pub fn zone_bytes(&self) -> u64 {
        self.table.zone_sectors() * SECTOR_BYTES
    }

    /// Sectors of one page row (a page group's data).
    fn row_sectors(&self) -> u32 {
        (self.layout.group_bytes() / SECTOR_BYTES) as u32
    }

    /// Nothing in flight and no row buffer waiting to be sealed.
    pub fn is_quiescent(&self) -> bool {
        self.reqs.live() == 0 && self.jobs.live() == 0 && self.bb.in_flight() == 0
    }

    /// Host commands accepted and not yet completed.
    pub fn requests_in_flight(&self) -> usize {
        self.reqs.live()
    }

    /// Gives up the device for a power cut: only the flash remains.
    pub fn into_backbone(self) -> Backbone {
        self.bb
    }

    pub fn take_zone_completions(&mut self, out: &mut Vec<ZoneCompletion>) {
        out.append(&mut self.zone_completions);
    }

    /// Flash work executing on the dies now: (programs, erases), for crash-test labels.
    pub fn executing(&self) -> (bool, bool) {
        (
            self.bb.executing(OpKind::Program),
            self.bb.executing(OpKind::Erase),
        )
    }

    fn new_req(
        &mut self,
        id: u64,
        face: Face,
        offset_bytes: u64,
        len_bytes: u64,
        now: SimTime,
    ) -> u32 {
        self.reqs.insert(Req {
            id,
            face,
            offset_bytes,
            len_bytes,
            submitted: now,
            remaining: 0,
            result: Ok(()),
            data: Vec::new(),
            appended_sector: 0,
            write_seq: 0,
        })
    }

    /// Submits a block command (Read, Write, Flush; Trim is refused) at `q.now()`.
    pub fn submit(&mut self, req: BlockRequest, q: &mut impl Schedule<ZnsEvent>) {
        let now = q.now();
        let r = self.new_req(
            req.id,
            Face::Block(req.op),
            req.offset_bytes,
            req.len_bytes,
            now,
        );
        let checked = match req.op {
            BlockOp::Flush => {
                let seq = self.next_write_seq;
                self.flushes.push_back((seq, r));
                self.drain_flushes(now);
                return;
            }
            BlockOp::Trim => Err(IoError::Zone(ZoneStatus::DeallocateUnsupported)),
            BlockOp::Read | BlockOp::Write => self.check_range(req.offset_bytes, req.len_bytes),
        };
        if let Err(e) = checked {
            return self.fail(r, e, now);
        }
        match req.op {
            BlockOp::Read => self.start_read(r, q),
            BlockOp::Write => {
                let sector = req.offset_bytes / SECTOR_BYTES;
                let zone = self.table.zone_of(sector).expect("range checked");
                self.start_write(r, zone, sector, false, req.data, q);
            }
            BlockOp::Flush | BlockOp::Trim => unreachable!("answered above"),
        }
    }

    /// Submits a zone command at `q.now()`.
    pub fn submit_zone(&mut self, req: ZoneRequest, q: &mut impl Schedule<ZnsEvent>) {
        let now = q.now();
        match req.cmd {
            ZoneCommand::Append {
                zone_start_sector,
                len_bytes,
                data,
            } => {
                let r = self.new_req(
                    req.id,
                    Face::Append,
                    zone_start_sector * SECTOR_BYTES,
                    len_bytes,
                    now,
                );
                let zasl = self.cfg.zone_append_size_limit_bytes;
                let checked = self
                    .check_range(zone_start_sector * SECTOR_BYTES, len_bytes)
                    .and_then(|()| {
                        if len_bytes > zasl {
                            Err(ZoneStatus::AppendTooLarge {
                                len_bytes,
                                zasl_bytes: zasl,
                            }
                            .into())
                        } else {
                            self.zone_at_start(zone_start_sector)
                        }
                    });
                match checked {
                    Ok(zone) => self.start_write(r, zone, zone_start_sector, true, data, q),
                    Err(e) => self.fail(r, e, now),
                }
            }
            ZoneCommand::Send {
                zone_start_sector,
                action,
            } => {
                let r = self.new_req(req.id, Face::Zone, zone_start_sector * SECTOR_BYTES, 0, now);
                match self.zone_at_start(zone_start_sector) {
                    Ok(zone) => self.start_send(r, zone, action, q),
                    Err(e) => self.fail(r, e, now),
                }
            }
            ZoneCommand::Report {
                from_sector,
                filter,
                limit,
            } => {
                let list = self
                    .table
                    .report(from_sector, filter, limit.min(REPORT_ZONES_MAX));
                self.zone_completions.push(ZoneCompletion {
                    id: req.id,
                    submitted: now,
                    completed: now,
                    result: Ok(ZoneReply::Report(list)),
                });
            }
        }
    }

    fn check_range(&self, offset_bytes: u64, len_bytes: u64) -> Result<(), IoError> {
        let capacity_bytes = u64::from(self.table.count()) * self.zone_bytes();
        if len_bytes == 0
            || !offset_bytes.is_multiple_of(SECTOR_BYTES)
            || !len_bytes.is_multiple_of(SECTOR_BYTES)
        {
            return Err(IoError::Misaligned {
                offset_bytes,
                len_bytes,
            });
        }
        if offset_bytes
            .checked_add(len_bytes)
            .is_none_or(|e| e > capacity_bytes)
        {
            return Err(IoError::OutOfRange {
                offset_bytes,
                len_bytes,
                capacity_bytes,
            });
        }
        Ok(())
    }

    fn zone_at_start(&self, sector: u64) -> Result<u32, IoError> {
        match self.table.zone_of(sector) {
            Some(z) if self.table.start_sector(z) == sector => Ok(z),
            _ => Err(ZoneStatus::InvalidZone { sector }.into()),
        }
    }

    fn fail(&mut self, r: u32, e: IoError, now: SimTime) {
        self.reqs.get(r).result = Err(e);
        self.complete(r, now);
    }

    /// Sends request `r`'s completion out by its face.
    fn complete(&mut self, r: u32, now: SimTime) {
        let req = self.reqs.remove(r);
        debug_assert_eq!(req.remaining, 0, "request completed with work outstanding");
        if req.write_seq != 0 {
            assert!(self.outstanding_writes.remove(&req.write_seq));
        }
        match req.face {
            Face::Block(op) => self.completions.push(BlockCompletion {
                id: req.id,
                op,
                offset_bytes: req.offset_bytes,
                len_bytes: req.len_bytes,
                submitted: req.submitted,
                completed: now,
                result: req.result,
                data: req.data,
            }),
            Face::Append => self.zone_completions.push(ZoneCompletion {
                id: req.id,
                submitted: req.submitted,
                completed: now,
                result: req.result.map(|()| ZoneReply::Appended {
                    sector: req.appended_sector,
                }),
            }),
            Face::Zone => self.zone_completions.push(ZoneCompletion {
                id: req.id,
                submitted: req.submitted,
                completed: now,
                result: req.result.map(|()| ZoneReply::Done),
            }),
        }
        if req.write_seq != 0 {
            self.drain_flushes(now);
        }
    }

    /// Completes the flushes every write submitted before which has completed.
    fn drain_flushes(&mut self, now: SimTime) {
        while let Some(&(seq, r)) = self.flushes.front() {
            if self.outstanding_writes.first().is_some_and(|&w| w < seq) {
                break;
            }
            self.flushes.pop_front();
            self.complete(r, now);
        }
    }

    /// A write (or an append, addressed to the zone's start) of request `r`.
    fn start_write(
        &mut self,
        r: u32,
        zone: u32,
        sector: u64,
        append: bool,
        data: Vec<u8>,
        q: &mut impl Schedule<ZnsEvent>,
    ) {
        let now = q.now();
        let len = self.reqs.get(r).len_bytes;
        if self.functional && data.len() as u64 != len {
            let got = data.len() as u64;
            return self.fail(r, IoError::PayloadSize { got, expected: len }, now);
        }
        let n = len / SECTOR_BYTES;
        let at = match self.table.check_write(zone, sector, n, append) {
            Ok(at) => at,
            Err(e) => return self.fail(r, e.into(), now),
        };
        let rel = (at - self.table.start_sector(zone)) as u32;
        if u64::from(self.room_sectors(zone)) < n {
            // Padding used up rows: the data would not fit the zone's remaining media.
            return self.fail(r, ZoneStatus::BoundaryError { zone }.into(), now);
        }
        match self.table.write(zone, n) {
            Ok(t) => self.stats.implicit_closes += t.closed_implicitly.len() as u64,
            Err(e) => return self.fail(r, e.into(), now),
        }
        self.stats.host_sectors_written += n;
        let seq = self.next_write_seq;
        self.next_write_seq += 1;
        self.outstanding_writes.insert(seq);
        let req = self.reqs.get(r);
        req.write_seq = seq;
        req.appended_sector = at;
        let rs = self.row_sectors();
        let sb = self.layout.sector_buf_offset(0);
        debug_assert_eq!(sb, 0);
        let mut done = 0u32;
        let n = n as u32;
        while done < n {
            let fill = self.media[zone as usize].fill.get_or_insert_with(|| Fill {
                start: rel + done,
                sectors: 0,
                buf: Vec::new(),
                waiters: Vec::new(),
            });
            let take = (rs - fill.sectors).min(n - done);
            if self.functional {
                if fill.buf.is_empty() {
                    fill.buf = vec![0; self.layout.group_buf_bytes() as usize];
                }
                for i in 0..take {
                    let off = self.layout.sector_buf_offset(fill.sectors + i);
                    let src = ((done + i) as u64 * SECTOR_BYTES) as usize;
                    fill.buf[off..off + SECTOR_BYTES as usize]
                        .copy_from_slice(&data[src..src + SECTOR_BYTES as usize]);
                }
            }
            fill.sectors += take;
            fill.waiters.push(r);
            self.reqs.get(r).remaining += 1;
            done += take;
            if self.media[zone as usize]
                .fill
                .as_ref()
                .is_some_and(|f| f.sectors == rs)
            {
                self.program_fill(zone, q);
            }
        }
        if self.media[zone as usize].fill.is_some() && !self.seal_due.contains(&zone) {
            self.seal_due.push(zone);
            if !self.seal_scheduled {
                self.seal_scheduled = true;
                q.schedule_in(SimDuration::ZERO, ZnsEvent::Seal);
            }
        }
    }

    /// Sectors the zone's media can still take: its unprogrammed rows plus the open row
    /// buffer's room.
    fn room_sectors(&self, zone: u32) -> u32 {
        let m = &self.media[zone as usize];
        let rows_left = self.layout.groups_per_superblock() - m.next_row;
        let fill_room = m
            .fill
            .as_ref()
            .map_or(0, |f| self.row_sectors() - f.sectors);
        // A fill is programmed into the next row, which `rows_left` already counts.
        rows_left * self.row_sectors() - m.fill.as_ref().map_or(0, |_| self.row_sectors())
            + fill_room
    }

    /// Programs the zone's row buffer into its next row (padded if partial).
    fn program_fill(&mut self, zone: u32, q: &mut impl Schedule<ZnsEvent>) {
        let rs = self.row_sectors();
        let rows_max = self.layout.groups_per_superblock();
        let m = &mut self.media[zone as usize];
        let Some(fill) = m.fill.take() else {
            return;
        };
        let row = m.next_row;
        assert!(row < rows_max, "zone {zone} has no row left");
        m.next_row += 1;
        let media_full = m.next_row == rows_max;
        self.stats.rows_programmed += 1;
        if fill.sectors < rs {
            self.stats.rows_padded += 1;
        }
        let record = OobRecord {
            lpn: u64::from(fill.start),
            seq: u64::from(fill.sectors),
            epoch: m.generation,
            kind: PageKind::Data,
            slc: false,
            placement: None,
        };
        m.rows.push(Row {
            row,
            start: fill.start,
            sectors: fill.sectors,
            in_flight: true,
            buf: fill.buf.clone(),
        });
        let generation = m.generation;
        if media_full && self.table.state(zone).is_active() {
            // Padding used up the zone's rows before its capacity: the controller finishes
            // it (ZFC) whichever way its last row went out — sealed at the end of an
            // instant, or filled by a write — so that it does not stay active with no room.
            self.table.finish_by_controller(zone);
            self.stats.finished_by_controller += 1;
        }
        self.issue_program(zone, generation, row, record, &fill.buf, fill.waiters, q);
    }

    /// Programs `buf` (a row's data; empty in timing fidelity) into `row` of `zone`, one
    /// multi-plane program per channel; `waiters` finish one row each when it completes.
    #[allow(clippy::too_many_arguments)]
    fn issue_program(
        &mut self,
        zone: u32,
        generation: u64,
        row: u32,
        record: OobRecord,
        buf: &[u8],
        waiters: Vec<u32>,
        q: &mut impl Schedule<ZnsEvent>,
    ) {
        if self.media[zone as usize].needs_erase {
            // Recovery found torn rows in the zone's blocks: erase them first (each die
            // runs the erase before the program queued behind it).
            self.issue_erase(zone, None, false, q);
        }
        let geo = &self.layout.geo;
        let (channels, planes) = (geo.channels, geo.planes_per_die);
        let job = self.jobs.insert(Job::Program {
            zone,
            generation,
            row,
            remaining: channels,
            failed: false,
            waiters,
        });
        let sb = SbId(zone);
        let ps = geo.page_size_bytes as usize;
        let os = geo.oob_size_bytes as usize;
        for c in 0..channels {
            let (mut data, mut oob) = (Vec::new(), Vec::new());
            if self.functional {
                data.reserve(planes as usize * ps);
                oob = vec![0u8; planes as usize * os];
                for p in 0..planes {
                    let k = self.layout.page_index(c, p) as usize;
                    let page = &buf[k * ps..(k + 1) * ps];
                    data.extend_from_slice(page);
                    record.encode(page, &mut oob[p as usize * os..(p as usize + 1) * os]);
                }
            }
            let op = self.flash_op(OpKind::Program, sb, c, row, job, data, oob);
            self.bb.submit(op, &mut q.map(ZnsEvent::Flash));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn flash_op(
        &self,
        kind: OpKind,
        sb: SbId,
        channel: u32,
        row: u32,
        job: u32,
        data: Vec<u8>,
        oob: Vec<u8>,
    ) -> FlashOp {
        let planes = self.layout.geo.planes_per_die;
        let mut plane_blocks = [0u32; PLANES_MAX];
        for b in plane_blocks.iter_mut().take(planes as usize) {
            *b = self.layout.row_of(sb);
        }
        FlashOp {
            kind,
            die: self.layout.die_of(sb, channel),
            page: row,
            pages: 1,
            plane_mask: ((1u16 << planes) - 1) as u8,
            plane_blocks,
            tag: u64::from(job),
            data,
            oob,
            slc: false,
        }
    }

    /// Erases the zone's blocks: one multi-plane erase per channel, on its dies.
    fn issue_erase(
        &mut self,
        zone: u32,
        req: Option<u32>,
        offline: bool,
        q: &mut impl Schedule<ZnsEvent>,
    ) {
        self.media[zone as usize].needs_erase = false;
        self.stats.zone_erases += 1;
        let channels = self.layout.geo.channels;
        let job = self.jobs.insert(Job::Erase {
            zone,
            remaining: channels,
            failed: false,
            req,
            offline,
        });
        if let Some(r) = req {
            self.reqs.get(r).remaining += 1;
        }
        for c in 0..channels {
            let op = self.flash_op(OpKind::Erase, SbId(zone), c, 0, job, Vec::new(), Vec::new());
            self.bb.submit(op, &mut q.map(ZnsEvent::Flash));
        }
    }

    /// Zone Management Send.
    fn start_send(
        &mut self,
        r: u32,
        zone: u32,
        action: ZoneAction,
        q: &mut impl Schedule<ZnsEvent>,
    ) {
        let now = q.now();
        let before = self.table.state(zone);
        let wp_before = self.table.wp_sector(zone);
        match self.table.apply(zone, action) {
            Ok(t) => self.stats.implicit_closes += t.closed_implicitly.len() as u64,
            Err(e) => return self.fail(r, e.into(), now),
        }
        match action {
            ZoneAction::Reset if before != ZoneState::Empty => {
                self.stats.resets += 1;
                // The row buffer is programmed before the erase (each die runs its work in
                // order), so writes gathered in it complete; the erase then clears them.
                self.program_fill(zone, q);
                let m = &mut self.media[zone as usize];
                m.generation += 1;
                m.rows.clear();
                m.next_row = 0;
                self.issue_erase(zone, Some(r), false, q);
            }
            ZoneAction::Offline if before == ZoneState::ReadOnly => {
                let m = &mut self.media[zone as usize];
                m.generation += 1;
                m.rows.clear();
                self.issue_erase(zone, Some(r), true, q);
            }
            ZoneAction::Finish if before != ZoneState::Full && wp_before < self.zone_end(zone) => {
                self.program_fill(zone, q);
                let m = &mut self.media[zone as usize];
                if m.next_row < self.layout.groups_per_superblock() {
                    // A mark row, so that the zone comes back Full after a power cut.
                    let row = m.next_row;
                    m.next_row += 1;
                    self.stats.finish_marks += 1;
                    let record = OobRecord {
                        lpn: wp_before - self.table.start_sector(zone),
                        seq: 0,
                        epoch: m.generation,
                        kind: PageKind::ZoneFinish,
                        slc: false,
                        placement: None,
                    };
                    let generation = m.generation;
                    let buf = if self.functional {
                        vec![0u8; self.layout.group_buf_bytes() as usize]
                    } else {
                        Vec::new()
                    };
                    self.reqs.get(r).remaining += 1;
                    self.issue_program(zone, generation, row, record, &buf, vec![r], q);
                }
            }
            _ => {}
        }
        if self.reqs.get(r).remaining == 0 {
            self.complete(r, now);
        }
    }

    fn zone_end(&self, zone: u32) -> u64 {
        self.table.start_sector(zone) + self.table.capacity_sectors()
    }

    /// A read: unwritten sectors read as zeros, sectors in a row buffer or a row being
    /// programmed come from controller memory, the rest from flash.
    fn start_read(&mut self, r: u32, q: &mut impl Schedule<ZnsEvent>) {
        let now = q.now();
        let (off, len) = {
            let req = self.reqs.get(r);
            (
                req.offset_bytes / SECTOR_BYTES,
                req.len_bytes / SECTOR_BYTES,
            )
        };
        if self.functional {
            self.reqs.get(r).data = vec![0u8; (len * SECTOR_BYTES) as usize];
        }
        let zs = self.table.zone_sectors();
        let mut s = off;
        while s < off + len {
            let zone = (s / zs) as u32;
            let zone_end = (u64::from(zone) + 1) * zs;
            let end = (off + len).min(zone_end);
            if self.table.state(zone) == ZoneState::Offline {
                return self.fail_read(r, ZoneStatus::ZoneIsOffline { zone }.into(), now);
            }
            self.read_zone_part(r, zone, s - off, (s % zs) as u32, (end - s) as u32, q);
            s = end;
        }
        if self.reqs.get(r).remaining == 0 {
            self.complete(r, now);
        }
    }

    fn fail_read(&mut self, r: u32, e: IoError, now: SimTime) {
        self.reqs.get(r).result = Err(e);
        if self.reqs.get(r).remaining == 0 {
            self.complete(r, now);
        }
    }

    /// Reads `n` sectors of `zone` from zone-relative sector `rel` into request `r`'s buffer
    /// at sector `at`.
    fn read_zone_part(
        &mut self,
        r: u32,
        zone: u32,
        at: u64,
        rel: u32,
        n: u32,
        q: &mut impl Schedule<ZnsEvent>,
    ) {
        let spp = self.layout.sectors_per_page();
        let channels = self.layout.geo.channels;
        let layout = &self.layout;
        let m = &self.media[zone as usize];
        let mut out = std::mem::take(&mut self.reqs.get(r).data);
        // Copies sectors lo..hi of a row buffer starting at zone-relative `start`.
        let mut copy = |buf: &[u8], start: u32, lo: u32, hi: u32| {
            for s in lo..hi {
                let src = layout.sector_buf_offset(s - start);
                let dst = ((at + u64::from(s - rel)) * SECTOR_BYTES) as usize;
                out[dst..dst + SECTOR_BYTES as usize]
                    .copy_from_slice(&buf[src..src + SECTOR_BYTES as usize]);
            }
        };
        let mut ops: Vec<RowRead> = Vec::new();
        let rows_from = m.rows.partition_point(|row| row.start + row.sectors <= rel);
        for row in &m.rows[rows_from..] {
            if row.start >= rel + n {
                break;
            }
            let lo = row.start.max(rel);
            let hi = (row.start + row.sectors).min(rel + n);
            if row.in_flight {
                if self.functional {
                    copy(&row.buf, row.start, lo, hi);
                }
                continue;
            }
            for c in 0..channels {
                let sectors: Vec<(u32, u32)> = (lo..hi)
                    .filter(|s| layout.page_position((s - row.start) / spp).0 == c)
                    .map(|s| ((at + u64::from(s - rel)) as u32, s - row.start))
                    .collect();
                if !sectors.is_empty() {
                    ops.push((row.row, row.start, c, sectors));
                }
            }
        }
        if let Some(f) = &m.fill {
            let lo = f.start.max(rel);
            let hi = (f.start + f.sectors).min(rel + n);
            if self.functional && lo < hi {
                copy(&f.buf, f.start, lo, hi);
            }
        }
        self.reqs.get(r).data = out;
        let generation = m.generation;
        for (row, start, channel, sectors) in ops {
            let job = self.jobs.insert(Job::Read {
                req: r,
                generation,
                start,
                channel,
                sectors,
            });
            self.reqs.get(r).remaining += 1;
            let op = self.flash_op(
                OpKind::Read,
                SbId(zone),
                channel,
                row,
                job,
                Vec::new(),
                Vec::new(),
            );
            self.bb.submit(op, &mut q.map(ZnsEvent::Flash));
        }
    }

    /// Handles one of the device's events.
    pub fn handle(&mut self, ev: ZnsEvent, q: &mut impl Schedule<ZnsEvent>, rng: &mut SimRng) {
        match ev {
            ZnsEvent::Flash(fe) => {
                let mut done = std::mem::take(&mut self.flash_done);
                self.bb
                    .handle(fe, &mut q.map(ZnsEvent::Flash), rng, &mut done);
                for c in done.drain(..) {
                    self.on_flash_done(c, q);
                }
                self.flash_done = done;
            }
            ZnsEvent::Seal => {
                self.seal_scheduled = false;
                for zone in std::mem::take(&mut self.seal_due) {
                    self.program_fill(zone, q);
                    let rows = self.layout.groups_per_superblock();
                    if self.media[zone as usize].next_row == rows
                        && self.table.state(zone).is_active()
                    {
                        self.table.finish_by_controller(zone);
                        self.stats.finished_by_controller += 1;
                    }
                }
            }
        }
    }

    fn on_flash_done(&mut self, c: FlashCompletion, q: &mut impl Schedule<ZnsEvent>) {
        let now = q.now();
        let id = c.op.tag as u32;
        match self.jobs.get(id) {
            Job::Program {
                remaining, failed, ..
            } => {
                *remaining -= 1;
                if matches!(c.status, OpStatus::Failed { .. }) {
                    *failed = true;
                }
                if *remaining > 0 {
                    return;
                }
                let Job::Program {
                    zone,
                    generation,
                    row,
                    failed,
                    waiters,
                    ..
                } = self.jobs.remove(id)
                else {
                    unreachable!("matched above")
                };
                let m = &mut self.media[zone as usize];
                if m.generation == generation {
                    if failed {
                        m.rows.retain(|x| x.row != row);
                    } else if let Some(x) = m.rows.iter_mut().find(|x| x.row == row) {
                        x.in_flight = false;
                        x.buf = Vec::new();
                    }
                }
                if failed {
                    self.stats.program_failures += 1;
                    self.table.make_read_only(zone);
                }
                for w in waiters {
                    if failed {
                        self.reqs.get(w).result = Err(ZoneStatus::WriteFault { zone }.into());
                    }
                    let req = self.reqs.get(w);
                    req.remaining -= 1;
                    if req.remaining == 0 {
                        self.complete(w, now);
                    }
                }
            }
            Job::Read { .. } => {
                let Job::Read {
                    req,
                    generation,
                    start,
                    channel,
                    sectors,
                } = self.jobs.remove(id)
                else {
                    unreachable!("matched above")
                };
                let result = self.copy_read(&c, (generation, start), channel, req, &sectors);
                let r = self.reqs.get(req);
                if let Err(e) = result {
                    r.result = Err(e);
                }
                r.remaining -= 1;
                if r.remaining == 0 {
                    self.complete(req, now);
                }
            }
            Job::Erase {
                remaining, failed, ..
            } => {
                *remaining -= 1;
                if matches!(c.status, OpStatus::Failed { .. }) {
                    *failed = true;
                }
                if *remaining > 0 {
                    return;
                }
                let Job::Erase {
                    zone,
                    failed,
                    req,
                    offline,
                    ..
                } = self.jobs.remove(id)
                else {
                    unreachable!("matched above")
                };
                if failed && !offline {
                    self.stats.erase_failures += 1;
                    self.table.make_offline(zone);
                    if let Some(r) = req {
                        self.reqs.get(r).result = Err(ZoneStatus::ZoneIsOffline { zone }.into());
                    }
                }
                if let Some(r) = req {
                    let rq = self.reqs.get(r);
                    rq.remaining -= 1;
                    if rq.remaining == 0 {
                        self.complete(r, now);
                    }
                }
            }
        }
    }

    /// Copies a flash read's sectors into the request (functional fidelity), checking each
    /// page's spare-area record names the zone row's data the read was issued for.
    fn copy_read(
        &mut self,
        c: &FlashCompletion,
        (generation, start): (u64, u32),
        channel: u32,
        req: u32,
        sectors: &[(u32, u32)],
    ) -> Result<(), IoError> {
        if let OpStatus::Uncorrectable { .. } = c.status {
            return Err(IoError::Uncorrectable);
        }
        if !self.functional {
            return Ok(());
        }
        let geo = &self.layout.geo;
        let (ps, os) = (geo.page_size_bytes as usize, geo.oob_size_bytes as usize);
        let spp = self.layout.sectors_per_page();
        let mut out = std::mem::take(&mut self.reqs.get(req).data);
        let mut result = Ok(());
        for &(dst_sector, in_row) in sectors {
            let k = in_row / spp;
            let plane = self.layout.page_position(k).1 as usize;
            debug_assert_eq!(self.layout.page_position(k).0, channel);
            let page = &c.op.data[plane * ps..(plane + 1) * ps];
            let oob = &c.op.oob[plane * os..(plane + 1) * os];
            let ok = OobRecord::decode(page, oob).is_some_and(|rec| {
                rec.kind == PageKind::Data && rec.lpn == u64::from(start) && rec.epoch == generation
            });
            if !ok {
                result = Err(IoError::Integrity);
                continue;
            }
            let src = (in_row % spp) as usize * SECTOR_BYTES as usize;
            let dst = (u64::from(dst_sector) * SECTOR_BYTES) as usize;
            out[dst..dst + SECTOR_BYTES as usize]
                .copy_from_slice(&page[src..src + SECTOR_BYTES as usize]);
        }
        self.reqs.get(req).data = out;
        result
    }

    /// Recovery: zone `zone`'s media as its rows were read back.
    pub(super) fn restore_media(
        &mut self,
        zone: u32,
        rows: &[(u32, u32, u32)],
        next_row: u32,
        generation: u64,
        state: ZoneState,
    ) {
        let m = &mut self.media[zone as usize];
        m.generation = generation;
        if state == ZoneState::Empty {
            m.needs_erase = next_row > 0;
            return;
        }
        m.next_row = next_row;
        m.rows = rows
            .iter()
            .map(|&(row, start, sectors)| Row {
                row,
                start,
                sectors,
                in_flight: false,
                buf: Vec::new(),
            })
            .collect();
    }

    /// Checks the internal invariants (tests call it between steps).
    pub fn check_invariants(&self) {
        self.table.check();
        let rs = self.row_sectors();
        for (z, m) in self.media.iter().enumerate() {
            let mut end = 0;
            for row in &m.rows {
                assert!(row.start >= end, "zone {z}'s rows overlap");
                assert!(row.sectors <= rs && row.row < m.next_row);
                end = row.start + row.sectors;
            }
            let wp = self.table.wp_sector(z as u32) - self.table.start_sector(z as u32);
            let data_end = m.fill.as_ref().map_or(end, |f| f.start + f.sectors);
            let state = self.table.state(z as u32);
            if !matches!(
                state,
                ZoneState::Full | ZoneState::ReadOnly | ZoneState::Offline
            ) {
                assert_eq!(
                    u64::from(data_end),
                    wp,
                    "zone {z}'s data and write pointer differ"
                );
            }
        }
    }
}

impl nearflash_blockdev::BlockDevice for ZonedDevice {
    type Event = ZnsEvent;

    fn capacity_bytes(&self) -> u64 {
        u64::from(self.table.count()) * self.zone_bytes()
    }

    fn is_functional(&self) -> bool {
        self.functional
    }

    fn submit<S: Schedule<ZnsEvent>>(&mut self, req: BlockRequest, q: &mut S) {
        ZonedDevice::submit(self, req, q);
    }

    fn check_invariants(&self) {
        ZonedDevice::check_invariants(self);
    }

    fn is_zoned(&self) -> bool {
        true
    }

    fn submit_zone<S: Schedule<ZnsEvent>>(
        &mut self,
        req: ZoneRequest,
        q: &mut S,
    ) -> Result<(), ZoneRequest> {
        ZonedDevice::submit_zone(self, req, q);
        Ok(())
    }

    fn take_zone_completions(&mut self, out: &mut Vec<ZoneCompletion>) {
        ZonedDevice::take_zone_completions(self, out);
    }

    fn handle<S: Schedule<ZnsEvent>>(&mut self, ev: ZnsEvent, q: &mut S, rng: &mut SimRng) {
        ZonedDevice::handle(self, ev, q, rng);
    }

    fn take_completions(&mut self, out: &mut Vec<BlockCompletion>) {
        out.append(&mut self.completions);
    }

    fn outstanding(&self) -> u64 {
        self.reqs.live() as u64 + self.completions.len() as u64 + self.zone_completions.len() as u64
    }
}

impl nearflash_sim::Model for ZonedDevice {
    type Event = ZnsEvent;

    fn handle(
        &mut self,
        ev: ZnsEvent,
        q: &mut nearflash_sim::EventQueue<ZnsEvent>,
        rng: &mut SimRng,
    ) {
        ZonedDevice::handle(self, ev, q, rng);
    }
}

#[cfg(test)]
mod tests;
