//! The ZNS run: a host-side log-structured placement layer over the zoned drive
//! (`nearflash_ftl::zns::ZonedDevice`), what dm-zoned, f2fs or a ZNS-aware key-value store do.
//!
//! - Each stream appends (Zone Append) into an open zone of its own; the host reserves room in
//!   the zone before it submits, so an append never crosses the zone's end, and records where
//!   each 4 KiB block landed (the completion's assigned LBA) in its own logical→zone map.
//! - Free zones are a FIFO. A user write may take a new zone only while more than
//!   [`RESERVE_ZONES`] are free; the reserve is for cleaning copies.
//! - When free zones fall to [`CLEAN_TRIGGER_ZONES`], the host cleans one zone: the full zone
//!   (no append in flight) with the fewest live blocks (greedy), ties to the lowest index. It
//!   reads each live block (at most [`CLEAN_READS_MAX`] reads in flight), appends it to the
//!   victim's stream's *copy zone* if the map still points at it (a newer user write makes
//!   the copy needless), and when nothing of the victim is live resets it (the drive erases
//!   its blocks). One cleaning at a time; user writes that find no room wait in a FIFO no
//!   longer than the queue depth.
//! - Padding, and why the host cannot run out of zones: the drive pads an append alone in
//!   its instant to a whole page row, so a zone of small lone user appends holds far less
//!   than the units reserved in it (its later appends fail and are placed again). Copies
//!   never share a zone with user appends, and a cleaning's copies go out together, in one
//!   instant, filling their rows; the host counts the last, padded row whole. So a copy
//!   zone's reserved units are its media's use, a copy never fails, and a cleaning (fewer
//!   copies than a zone: its victim is never all live) needs at most one new zone — the
//!   reserve, which the victim's reset gives back. Before, copies went to the stream's user
//!   zone, whose padded appends used up the zone a cleaning had opened from the reserve
//!   (seed 964 of the property test: `HostOutOfSpace`); and with copy zones counted in units
//!   only, each cleaning's padded last row turned the next copy into a boundary error that
//!   closed the zone out, wasting it, so cleanings freed nothing and user writes starved
//!   (seed 539: a livelock the watchdog saw).
//!
//! Faults: a device error fails the run with that error; a livelock (no user write
//! completing) is the watchdog's stall.

use crate::workload::{Load, Stream, UserWrite, STREAMS, UNIT_BYTES};
use crate::{Counts, Mode, ModeReport, PlacementError, STALL_LIMIT};
use nearflash_blockdev::BlockDevice;
use nearflash_blockdev::ZoneStatus;
use nearflash_flash::{FlashConfig, Geometry, MemoryStore};
use nearflash_ftl::zns::{
    ZnsConfig, ZnsEvent, ZoneAction, ZoneCommand, ZoneReply, ZoneRequest, ZonedDevice,
};
use nearflash_ftl::{BlockOp, BlockRequest, FtlConfig, IoError, SECTOR_BYTES};
use nearflash_sim::{EventQueue, Model, Progress, Sim, SimRng, SimTime, Watchdog};
use std::collections::{BTreeMap, VecDeque};

/// Free zones held back for cleaning copies: one cleaning at a time copies less than one
/// zone (its victim is never all live, `crate::Params::shape` checks the spare room), so one
/// zone beyond the stream's open one always takes its copies.
pub const RESERVE_ZONES: usize = 1;

/// Cleaning starts when this many zones or fewer are free: the reserve plus one per stream,
/// so that each stream can still open a zone while the cleaning runs. (dm-zoned starts
/// reclaim at a low-water mark of free zones too; the figure here is this layer's choice.)
pub const CLEAN_TRIGGER_ZONES: usize = RESERVE_ZONES + STREAMS.len();

/// Cleaning reads in flight at most: the study's default queue depth (docs/fdp.md's 8).
pub const CLEAN_READS_MAX: u32 = 8;

/// A slot holding no live block.
const NO_UNIT: u64 = u64::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ZoneUse {
    Free,
    Open(Stream),
    Full(Stream),
    Cleaning(Stream),
}

#[derive(Clone, Debug)]
struct Zone {
    use_: ZoneUse,
    /// Slots handed out to appends (submitted or completed).
    reserved: u32,
    appends_in_flight: u32,
    /// A Finish is in flight (after an append found the zone's padded rows used up).
    finishing: bool,
    live: u32,
    /// Each slot's unit, or `NO_UNIT`.
    owner: Vec<u64>,
}

enum Pending {
    User {
        w: UserWrite,
        zone: u32,
    },
    CopyRead {
        unit: u64,
        slot: u32,
    },
    /// Live blocks of the victim (unit, slot), appended together.
    CopyWrite {
        blocks: Vec<(u64, u32)>,
        zone: u32,
        data: Vec<u8>,
    },
    Reset {
        zone: u32,
    },
    Finish {
        zone: u32,
    },
    Read {
        unit: u64,
    },
}

struct Cleaning {
    zone: u32,
    stream: Stream,
    to_read: VecDeque<u32>,
    reads_in_flight: u32,
    copies_in_flight: u32,
    /// Blocks read and waiting for a destination: at most a zone's worth.
    copy_queue: VecDeque<(u64, u32, Vec<u8>)>,
    reset_sent: bool,
}

struct ZnsHost {
    dev: ZonedDevice,
    load: Load,
    queue_depth: u64,
    zone_units: u32,
    zone_sectors: u64,
    zones: Vec<Zone>,
    map: Vec<Option<(u32, u32)>>,
    free: VecDeque<u32>,
    /// Each stream's zone for user appends, and its zone for cleaning copies: apart, so that
    /// padded user appends never eat the room a cleaning counted on.
    open: [Option<u32>; 2],
    copy_open: [Option<u32>; 2],
    waiting: VecDeque<UserWrite>,
    cleaning: Option<Cleaning>,
    pending: BTreeMap<u64, Pending>,
    next_id: u64,
    failure: Option<PlacementError>,
    reading: bool,
    to_read: std::vec::IntoIter<u64>,
    verified: u64,
    copy_units: u64,
    cleanings: u64,
    /// Appends placed again after their zone turned out full.
    retries: u64,
    /// The zone append size limit in units.
    append_units_max: u32,
    /// Units of one page row, the drive's program unit (a partial one is padded).
    row_units: u32,
}

impl ZnsHost {
    fn progress(&self) -> Progress {
        Progress {
            completed: self.load.completed() + self.verified,
            outstanding: self.load.in_flight() + self.to_read.len() as u64,
        }
    }

    fn finished(&self) -> bool {
        if self.failure.is_some() {
            return true;
        }
        let phase_done = if self.reading {
            self.to_read.len() == 0
        } else {
            self.load.finished() && self.cleaning.is_none()
        };
        phase_done && self.pending.is_empty()
    }

    fn zone_start(&self, zone: u32) -> u64 {
        u64::from(zone) * self.zone_sectors
    }

    /// Room for `units` in `stream`'s open zone (its user zone, or its copy zone
    /// `for_cleaning`), opening a free zone when it is full; user writes leave the reserve
    /// alone.
    fn take_space(&mut self, stream: Stream, units: u32, for_cleaning: bool) -> Option<u32> {
        let s = stream as usize;
        let open = if for_cleaning {
            self.copy_open[s]
        } else {
            self.open[s]
        };
        if let Some(z) = open {
            let zone = &mut self.zones[z as usize];
            if self.zone_units - zone.reserved >= units {
                zone.reserved += units;
                return Some(z);
            }
            zone.use_ = ZoneUse::Full(stream);
            self.set_open(stream, for_cleaning, None);
        }
        let floor = if for_cleaning { 0 } else { RESERVE_ZONES };
        if self.free.len() <= floor {
            return None;
        }
        let z = self.free.pop_front().expect("a free zone");
        let zone = &mut self.zones[z as usize];
        assert_eq!(zone.use_, ZoneUse::Free);
        assert!(zone.reserved == 0 && zone.live == 0);
        zone.use_ = ZoneUse::Open(stream);
        zone.reserved = units;
        self.set_open(stream, for_cleaning, Some(z));
        Some(z)
    }

    fn set_open(&mut self, stream: Stream, for_cleaning: bool, zone: Option<u32>) {
        if for_cleaning {
            self.copy_open[stream as usize] = zone;
        } else {
            self.open[stream as usize] = zone;
        }
    }

    fn append(&mut self, p: Pending, zone: u32, data: Vec<u8>, q: &mut EventQueue<ZnsEvent>) {
        let id = self.next_id;
        self.next_id += 1;
        self.zones[zone as usize].appends_in_flight += 1;
        self.pending.insert(id, p);
        let cmd = ZoneCommand::Append {
            zone_start_sector: self.zone_start(zone),
            len_bytes: data.len() as u64,
            data,
        };
        self.dev.submit_zone(ZoneRequest { id, cmd }, q);
    }

    fn read(&mut self, p: Pending, zone: u32, slot: u32, q: &mut EventQueue<ZnsEvent>) {
        let id = self.next_id;
        self.next_id += 1;
        self.pending.insert(id, p);
        let sector = self.zone_start(zone) + u64::from(slot) * (UNIT_BYTES / SECTOR_BYTES);
        let req = BlockRequest {
            id,
            op: BlockOp::Read,
            offset_bytes: sector * SECTOR_BYTES,
            len_bytes: UNIT_BYTES,
            data: Vec::new(),
        };
        self.dev.submit(req, q);
    }

    /// Room for up to `want` units (at least one) in `stream`'s copy zone or a new one, for
    /// cleaning copies, which may take the reserve.
    fn take_room(&mut self, stream: Stream, want: u32) -> Option<(u32, u32)> {
        assert!(want > 0);
        let room = match self.copy_open[stream as usize] {
            Some(z) => self.zone_units - self.zones[z as usize].reserved,
            None => 0,
        };
        let units = if room > 0 {
            want.min(room)
        } else {
            want.min(self.zone_units)
        };
        self.take_space(stream, units, true).map(|z| (z, units))
    }

    /// Places `w` now if its stream has room, else queues it.
    fn place(&mut self, w: UserWrite, q: &mut EventQueue<ZnsEvent>) -> bool {
        let units = w.units as u32;
        let Some(zone) = self.take_space(w.stream, units, false) else {
            return false;
        };
        let data = self.load.payload(&w);
        self.append(Pending::User { w, zone }, zone, data, q);
        true
    }

    fn refill(&mut self, q: &mut EventQueue<ZnsEvent>, rng: &mut SimRng) {
        if self.failure.is_some() {
            return;
        }
        while let Some(&w) = self.waiting.front() {
            if !self.place(w, q) {
                break;
            }
            self.waiting.pop_front();
        }
        if self.reading {
            while (self.pending.len() as u64) < self.queue_depth {
                let Some(unit) = self.to_read.next() else {
                    break;
                };
                let Some((zone, slot)) = self.map[unit as usize] else {
                    self.failure.get_or_insert(PlacementError::Verification(
                        self.load.check(unit, &[]).expect_err("a written unit"),
                    ));
                    return;
                };
                self.read(Pending::Read { unit }, zone, slot, q);
            }
            return;
        }
        while self.load.in_flight() < self.queue_depth {
            let Some(w) = self.load.next(rng, q.now()) else {
                break;
            };
            if !self.waiting.is_empty() || !self.place(w, q) {
                self.waiting.push_back(w);
            }
        }
        assert!(self.waiting.len() as u64 <= self.queue_depth);
        self.maybe_clean(q);
    }

    fn remap(&mut self, unit: u64, zone: u32, slot: u32) {
        if let Some((oz, os)) = self.map[unit as usize] {
            let old = &mut self.zones[oz as usize];
            assert_eq!(old.owner[os as usize], unit);
            old.owner[os as usize] = NO_UNIT;
            old.live -= 1;
        }
        let z = &mut self.zones[zone as usize];
        assert_eq!(
            z.owner[slot as usize], NO_UNIT,
            "slot {slot} of zone {zone} reused"
        );
        z.owner[slot as usize] = unit;
        z.live += 1;
        self.map[unit as usize] = Some((zone, slot));
    }

    /// Starts a cleaning if free zones are low and none runs.
    fn maybe_clean(&mut self, q: &mut EventQueue<ZnsEvent>) {
        if self.cleaning.is_some() || self.free.len() > CLEAN_TRIGGER_ZONES || self.load.finished()
        {
            return;
        }
        let victim = (0..self.zones.len() as u32)
            .filter(|&z| {
                let zone = &self.zones[z as usize];
                matches!(zone.use_, ZoneUse::Full(_))
                    && zone.appends_in_flight == 0
                    && !zone.finishing
            })
            .min_by_key(|&z| (self.zones[z as usize].live, z));
        let Some(v) = victim else {
            return;
        };
        let zone = &mut self.zones[v as usize];
        let ZoneUse::Full(stream) = zone.use_ else {
            unreachable!("filtered on Full")
        };
        assert!(zone.live < self.zone_units, "victim {v} is all live");
        zone.use_ = ZoneUse::Cleaning(stream);
        let to_read = (0..self.zone_units)
            .filter(|&s| zone.owner[s as usize] != NO_UNIT)
            .collect();
        self.cleanings += 1;
        self.cleaning = Some(Cleaning {
            zone: v,
            stream,
            to_read,
            reads_in_flight: 0,
            copies_in_flight: 0,
            copy_queue: VecDeque::new(),
            reset_sent: false,
        });
        self.pump_cleaning(q);
    }

    /// Issues the cleaning's reads and copies; resets the victim once nothing of it is live.
    fn pump_cleaning(&mut self, q: &mut EventQueue<ZnsEvent>) {
        let Some(mut c) = self.cleaning.take() else {
            return;
        };
        while c.reads_in_flight < CLEAN_READS_MAX {
            let Some(slot) = c.to_read.pop_front() else {
                break;
            };
            let unit = self.zones[c.zone as usize].owner[slot as usize];
            if unit == NO_UNIT {
                continue;
            }
            c.reads_in_flight += 1;
            self.read(Pending::CopyRead { unit, slot }, c.zone, slot, q);
        }
        // Copies go out once every live block is read, in appends as large as the zone's
        // room and the append limit allow, so that they fill whole rows (a lone 4 KiB
        // append is padded to a row).
        let victim = c.zone;
        c.copy_queue
            .retain(|&(unit, slot, _)| self.map[unit as usize] == Some((victim, slot)));
        let mut copied = false;
        while c.to_read.is_empty() && c.reads_in_flight == 0 && !c.copy_queue.is_empty() {
            let want = (c.copy_queue.len() as u32).min(self.append_units_max);
            let Some((zone, units)) = self.take_room(c.stream, want) else {
                break;
            };
            let mut blocks = Vec::with_capacity(units as usize);
            let mut data = Vec::with_capacity((u64::from(units) * UNIT_BYTES) as usize);
            for (unit, slot, d) in c.copy_queue.drain(..units as usize) {
                blocks.push((unit, slot));
                data.extend_from_slice(&d);
            }
            c.copies_in_flight += 1;
            copied = true;
            self.append(
                Pending::CopyWrite {
                    blocks,
                    zone,
                    data: data.clone(),
                },
                zone,
                data,
                q,
            );
        }
        if copied {
            // The copies just issued share their rows, but the last one's partial row is
            // padded at the end of this instant: count it whole, so the copy zone's room is
            // its media's room and a later copy never meets a boundary error.
            if let Some(z) = self.copy_open[c.stream as usize] {
                let zone = &mut self.zones[z as usize];
                zone.reserved = zone.reserved.div_ceil(self.row_units) * self.row_units;
                assert!(zone.reserved <= self.zone_units);
            }
        }
        assert!(c.copy_queue.len() <= self.zone_units as usize);
        let idle = c.to_read.is_empty()
            && c.reads_in_flight == 0
            && c.copies_in_flight == 0
            && c.copy_queue.is_empty();
        if idle && !c.reset_sent {
            c.reset_sent = true;
            assert_eq!(
                self.zones[c.zone as usize].live, 0,
                "cleaned zone still live"
            );
            let id = self.next_id;
            self.next_id += 1;
            self.pending.insert(id, Pending::Reset { zone: c.zone });
            let cmd = ZoneCommand::Send {
                zone_start_sector: self.zone_start(c.zone),
                action: ZoneAction::Reset,
            };
            self.dev.submit_zone(ZoneRequest { id, cmd }, q);
        }
        self.cleaning = Some(c);
    }

    fn fail(&mut self, e: IoError) {
        self.failure.get_or_insert(PlacementError::Device(e));
    }

    /// Takes completions and submits what follows until nothing more completes: the drive
    /// answers some commands (a refused append) at submission, with no event to follow.
    fn pump(&mut self, q: &mut EventQueue<ZnsEvent>, rng: &mut SimRng) {
        while self.complete(q) > 0 {
            self.refill(q, rng);
        }
    }

    /// Handles the drive's completions; how many.
    fn complete(&mut self, q: &mut EventQueue<ZnsEvent>) -> usize {
        let now = q.now();
        let mut blocks = Vec::new();
        self.dev.take_completions(&mut blocks);
        let blocks_count = blocks.len();
        for c in blocks {
            let p = self
                .pending
                .remove(&c.id)
                .expect("a read this host submitted");
            if let Err(e) = c.result {
                self.fail(e);
                continue;
            }
            match p {
                Pending::Read { unit } => match self.load.check(unit, &c.data) {
                    Ok(()) => self.verified += 1,
                    Err(m) => {
                        self.failure.get_or_insert(PlacementError::Verification(m));
                    }
                },
                Pending::CopyRead { unit, slot } => {
                    let cl = self.cleaning.as_mut().expect("a cleaning reads");
                    cl.reads_in_flight -= 1;
                    cl.copy_queue.push_back((unit, slot, c.data));
                }
                _ => unreachable!("block completions are reads"),
            }
        }
        let mut zoned = Vec::new();
        self.dev.take_zone_completions(&mut zoned);
        let count = blocks_count + zoned.len();
        for c in zoned {
            let p = self
                .pending
                .remove(&c.id)
                .expect("a command this host submitted");
            let reply = match c.result {
                Ok(r) => r,
                Err(IoError::Zone(
                    status @ (ZoneStatus::ZoneIsFull { .. } | ZoneStatus::BoundaryError { .. }),
                )) => {
                    self.retry(p, status, q);
                    continue;
                }
                Err(e) => {
                    self.fail(e);
                    continue;
                }
            };
            match (p, reply) {
                (Pending::User { w, zone }, ZoneReply::Appended { sector }) => {
                    let slot0 = self.slot_of(zone, sector);
                    self.zones[zone as usize].appends_in_flight -= 1;
                    for i in 0..w.units {
                        self.remap(w.first_unit + i, zone, slot0 + i as u32);
                    }
                    self.load.done(&w, now);
                }
                (Pending::CopyWrite { blocks, zone, .. }, ZoneReply::Appended { sector }) => {
                    let slot0 = self.slot_of(zone, sector);
                    self.zones[zone as usize].appends_in_flight -= 1;
                    self.copy_units += blocks.len() as u64;
                    let cl = self.cleaning.as_mut().expect("a cleaning copies");
                    cl.copies_in_flight -= 1;
                    let victim = cl.zone;
                    for (i, (unit, from_slot)) in blocks.into_iter().enumerate() {
                        // A user write that completed meanwhile made the copy needless.
                        if self.map[unit as usize] == Some((victim, from_slot)) {
                            self.remap(unit, zone, slot0 + i as u32);
                        }
                    }
                }
                (Pending::Reset { zone }, ZoneReply::Done) => {
                    let z = &mut self.zones[zone as usize];
                    assert!(matches!(z.use_, ZoneUse::Cleaning(_)) && z.live == 0);
                    z.use_ = ZoneUse::Free;
                    z.reserved = 0;
                    z.owner.fill(NO_UNIT);
                    self.free.push_back(zone);
                    self.cleaning = None;
                }
                (Pending::Finish { zone }, ZoneReply::Done) => {
                    self.zones[zone as usize].finishing = false;
                }
                _ => unreachable!("a reply of the command's kind"),
            }
        }
        self.pump_cleaning(q);
        count
    }

    /// An append found its zone's rows used up by padding: the drive finished the zone
    /// (full), or too little is left for it (boundary). The host closes the zone out — a
    /// Finish for the boundary case, so it does not stay active — and places the data again.
    fn retry(&mut self, p: Pending, status: ZoneStatus, q: &mut EventQueue<ZnsEvent>) {
        let zone = match &p {
            Pending::User { zone, .. } | Pending::CopyWrite { zone, .. } => *zone,
            _ => unreachable!("only appends are retried"),
        };
        let z = &mut self.zones[zone as usize];
        z.appends_in_flight -= 1;
        if let ZoneUse::Open(stream) = z.use_ {
            z.use_ = ZoneUse::Full(stream);
            for open in [&mut self.open, &mut self.copy_open] {
                if open[stream as usize] == Some(zone) {
                    open[stream as usize] = None;
                }
            }
        }
        if matches!(status, ZoneStatus::BoundaryError { .. }) && !z.finishing {
            z.finishing = true;
            let id = self.next_id;
            self.next_id += 1;
            self.pending.insert(id, Pending::Finish { zone });
            let cmd = ZoneCommand::Send {
                zone_start_sector: self.zone_start(zone),
                action: ZoneAction::Finish,
            };
            self.dev.submit_zone(ZoneRequest { id, cmd }, q);
        }
        self.retries += 1;
        match p {
            Pending::User { w, .. } => self.waiting.push_front(w),
            Pending::CopyWrite { blocks, data, .. } => {
                let c = self.cleaning.as_mut().expect("a cleaning copies");
                c.copies_in_flight -= 1;
                let chunks = data.chunks(UNIT_BYTES as usize).map(<[u8]>::to_vec);
                let back: Vec<_> = blocks.into_iter().zip(chunks).collect();
                for ((unit, slot), d) in back.into_iter().rev() {
                    c.copy_queue.push_front((unit, slot, d));
                }
            }
            _ => unreachable!("only appends are retried"),
        }
    }

    /// Why a stalled run stopped, when it is for want of zones: none free, and the cleaning
    /// (if any) unable to place its copies. Padding makes a zone hold less than its capacity,
    /// so the span may not fit the zones at all.
    fn out_of_space(&self) -> Option<PlacementError> {
        if !self.free.is_empty() {
            return None;
        }
        let live: u64 = self.zones.iter().map(|z| u64::from(z.live)).sum();
        Some(PlacementError::HostOutOfSpace {
            zones: self.zones.len() as u32,
            live_units: live,
            zone_units: self.zone_units,
        })
    }

    fn slot_of(&self, zone: u32, sector: u64) -> u32 {
        let start = self.zone_start(zone);
        assert!(sector >= start && sector < start + self.zone_sectors);
        ((sector - start) / (UNIT_BYTES / SECTOR_BYTES)) as u32
    }

    #[cfg(test)]
    fn check_invariants(&self) {
        for (z, zone) in self.zones.iter().enumerate() {
            let live = zone.owner.iter().filter(|&&u| u != NO_UNIT).count() as u32;
            assert_eq!(live, zone.live, "zone {z}");
            for (s, &u) in zone.owner.iter().enumerate() {
                if u != NO_UNIT {
                    assert_eq!(self.map[u as usize], Some((z as u32, s as u32)));
                }
            }
        }
    }
}

impl Model for ZnsHost {
    type Event = ZnsEvent;

    fn handle(&mut self, ev: ZnsEvent, q: &mut EventQueue<ZnsEvent>, rng: &mut SimRng) {
        self.dev.handle(ev, q, rng);
        self.refill(q, rng);
        self.pump(q, rng);
    }
}

/// Runs `load` through the host layer on a zoned drive of `flash`/`ftl`/`zns`.
pub(crate) fn run(
    flash: &FlashConfig,
    ftl: &FtlConfig,
    zns: &ZnsConfig,
    load: Load,
    queue_depth: u32,
    seed: u64,
) -> Result<ModeReport, PlacementError> {
    let mut sim: Sim<ZnsEvent> = Sim::new(seed);
    let store = MemoryStore::new(
        Geometry::from_config(flash).page_count(),
        flash.page_size_bytes,
    );
    let dev = ZonedDevice::format(flash, ftl, zns, Box::new(store))?;
    let zone_sectors = dev.zones().zone_sectors();
    let zone_units = (zone_sectors * SECTOR_BYTES / UNIT_BYTES) as u32;
    let zone_count = dev.zones().count();
    let row_units = (dev.layout().group_bytes() / UNIT_BYTES) as u32;
    assert!(row_units > 0 && zone_units.is_multiple_of(row_units));
    let span = load.shape().span_units;
    let mut host = ZnsHost {
        dev,
        queue_depth: u64::from(queue_depth),
        zone_units,
        zone_sectors,
        zones: vec![
            Zone {
                use_: ZoneUse::Free,
                reserved: 0,
                appends_in_flight: 0,
                finishing: false,
                live: 0,
                owner: vec![NO_UNIT; zone_units as usize],
            };
            zone_count as usize
        ],
        map: vec![None; span as usize],
        free: (0..zone_count).collect(),
        open: [None; 2],
        copy_open: [None; 2],
        waiting: VecDeque::new(),
        cleaning: None,
        pending: BTreeMap::new(),
        next_id: 0,
        failure: None,
        reading: false,
        to_read: Vec::new().into_iter(),
        verified: 0,
        copy_units: 0,
        cleanings: 0,
        retries: 0,
        append_units_max: (zns.zone_append_size_limit_bytes / UNIT_BYTES) as u32,
        row_units,
        load,
    };
    let mut dog = Watchdog::new(STALL_LIMIT);
    let (q, rng) = sim.parts();
    host.refill(q, rng);
    host.pump(q, rng);
    if let Err(stall) = sim.run_until(&mut host, &mut dog, ZnsHost::progress, ZnsHost::finished) {
        return Err(host.out_of_space().unwrap_or(PlacementError::Stall(stall)));
    }
    if let Some(e) = host.failure.take() {
        return Err(e);
    }
    #[cfg(test)]
    host.check_invariants();
    let written_at: SimTime = host.load.last_write_done;
    let stats = host.dev.stats().clone();
    let flash_stats = host.dev.backbone().stats().clone();
    host.to_read = host.load.written_units().collect::<Vec<_>>().into_iter();
    host.reading = true;
    let (q, rng) = sim.parts();
    host.refill(q, rng);
    host.pump(q, rng);
    sim.run_until(&mut host, &mut dog, ZnsHost::progress, ZnsHost::finished)?;
    if let Some(e) = host.failure.take() {
        return Err(e);
    }
    host.dev.check_invariants();
    let device_write_bytes = stats.host_sectors_written * SECTOR_BYTES;
    let host_copy_bytes = host.copy_units * UNIT_BYTES;
    Ok(ModeReport::new(
        Mode::Zns,
        &host.load,
        Counts {
            user_bytes: device_write_bytes - host_copy_bytes,
            host_copy_bytes,
            device_write_bytes,
            media_bytes: flash_stats.page_programs * u64::from(flash.page_size_bytes),
            copies_units: host.copy_units,
            erases: flash_stats.block_erases,
            zone_resets: stats.resets,
            appends_retried: host.retries,
            zones_cleaned: host.cleanings,
            written_at,
            units_verified: host.verified,
        },
    ))
}
