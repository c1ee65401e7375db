//! A DRAM write buffer (volatile write cache) in front of any [`BlockDevice`] — MQSim's Data
//! Cache Manager between the host interface and the FTL — as a sans-IO component that is
//! itself a `BlockDevice` (see `docs/design.md`, "The DRAM write buffer").
//!
//! - A write completes once its data is in the buffer (its transfer through the DRAM port),
//!   not after a flash program. The buffer is `capacity_bytes` of units of `unit_bytes`, each
//!   with per-sector validity: a 512-byte write buffers just its sector. When no unit is free
//!   a write waits, in arrival order, until destaging frees one (backpressure).
//! - Reads take the sectors the buffer holds from it and the rest from the device, merged.
//! - Destaging writes dirty units back: above the high watermark until the low one, after
//!   `idle_destage_us` of host idleness, and whenever a FLUSH, a FUA write, a trim or a waiting
//!   write needs it. A job starts at the next dirty unit in LBA order (an elevator) and takes
//!   the contiguous dirty units after it, up to `destage_bytes_max`; each run of valid sectors
//!   is one device write (the device does its own read-modify-write). At most
//!   `destage_inflight_max` jobs run, and a unit is in at most one: a write that lands on a
//!   unit being destaged keeps it dirty (the job carries the version it copied), so the newer
//!   data is destaged after, never overtaken.
//! - FLUSH completes once every unit dirty at its arrival is durable and the device has
//!   flushed; a FUA write once every unit it wrote is durable; a trim is passed down once the
//!   writes before it have left the buffer for its range, and writes after it wait for it.
//! - Power loss ([`WriteCache::power_loss`]): without PLP the buffer is simply gone; with PLP
//!   the host stops and the buffer is destaged within the hold-up budget, after which the
//!   caller cuts the flash.
//!
//! - Flexible Data Placement: a write's Data Placement directive
//!   ([`BlockDevice::submit_placed`]) is kept with each sector it buffers, and destaged with
//!   it. A destage write never spans sectors of different directives (nor a sector with one
//!   and a sector without), so each handle's data reaches the FTL under its own directive:
//!   an FDP drive's DRAM buffer keeps each handle's data apart until it is programmed into
//!   the handle's reclaim units (what makes its writes to one handle fill whole program
//!   units: `docs/fdp.md`). A later write to a sector replaces its directive with its own.
//!
//! With `enabled = false` the layer is a pass-through (requests, completions and events go
//! straight to and from the device, under their own ids), so a machine can wrap its device
//! unconditionally: `WriteCache::new(preset.write_cache.clone(), dev)`.
//!
//! Tolerates: requests out of range or misaligned (completed with the typed error, never
//! buffered); a device completing in any order; device write errors while destaging (the
//! unit is dropped and the error is reported by the next FLUSH, as Linux reports writeback
//! errors on fsync).

mod admit;
pub mod config;
pub mod crashtest;
mod destage;

pub use config::{ConfigError, DestageBound, WriteCacheConfig};

use nearflash_blockdev::{
    BlockCompletion, BlockDevice, BlockOp, BlockRequest, IoError, PlacementDirective, SECTOR_BYTES,
};
use nearflash_hw::dram::DramPort;
use nearflash_sim::{EventQueue, Model, Schedule, SimDuration, SimRng, SimTime, TraceEvent};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

const SECTOR: usize = SECTOR_BYTES as usize;

/// Host requests the layer holds at once. The [`BlockDevice`] contract accepts every
/// request, so the bound is the caller's own outstanding count; more is a caller bug.
pub const HOST_MAX: usize = 1 << 16;

/// The layer's events, with the device's own wrapped in `Device`. Host events carry the
/// request's tag (its slot in the layer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WcEvent<E> {
    Device(E),
    /// A write's data has crossed the DRAM port into the buffer.
    Inserted(u32),
    /// A read served wholly from the buffer has crossed the DRAM port.
    ReadHit(u32),
    /// A destage job's data has crossed the DRAM port on its way to the device.
    DestageOut(u32),
    /// The host has been idle for `idle_destage_us` (stale unless the generation matches).
    Idle(u64),
}

impl<E: TraceEvent> TraceEvent for WcEvent<E> {
    fn hash_word(&self) -> u64 {
        const WC: u64 = 0x57 << 56;
        match *self {
            WcEvent::Device(ref e) => e.hash_word(),
            WcEvent::Inserted(t) => WC | 1 << 48 | u64::from(t),
            WcEvent::ReadHit(t) => WC | 2 << 48 | u64::from(t),
            WcEvent::DestageOut(j) => WC | 3 << 48 | u64::from(j),
            WcEvent::Idle(g) => WC | 4 << 48 ^ g,
        }
    }
}

/// Counters of the buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct WriteCacheStats {
    pub writes: u64,
    pub write_bytes: u64,
    pub fua_writes: u64,
    /// Reads served wholly from the buffer.
    pub read_hits: u64,
    /// Reads that took some sectors from the buffer and the rest from the device.
    pub read_partial_hits: u64,
    pub read_misses: u64,
    /// Sectors reads took from the buffer.
    pub read_hit_sectors: u64,
    pub destage_jobs: u64,
    pub destage_writes: u64,
    pub destaged_bytes: u64,
    /// Destage writes the device failed (their data is lost; the next FLUSH reports it).
    pub destage_errors: u64,
    pub flushes: u64,
    pub trims: u64,
    /// The most units occupied at once.
    pub occupancy_peak_units: u64,
    /// Writes that found the buffer full and waited for a unit.
    pub writes_waited: u64,
    /// Total time writes waited for space.
    pub write_wait_ns: u64,
}

/// One buffered unit. Every unit in the buffer holds data not yet durable (a unit whose
/// newest version reaches the device leaves the buffer).
struct Unit {
    /// Payload of the unit's sectors (functional fidelity); empty in timing fidelity.
    data: Vec<u8>,
    /// Sectors holding buffered data (bit i: sector i of the unit).
    valid: u64,
    /// Sequence number of the newest write into the unit.
    version: u64,
    /// Sequence number of the oldest write into the unit not yet durable.
    dirty_since: u64,
    destaging: Option<Destaging>,
    /// The Data Placement directive of each sector's newest write; empty (no allocation)
    /// while no write into the unit carried one.
    placement: Vec<Option<PlacementDirective>>,
}

/// A unit's part in a destage job in flight.
struct Destaging {
    /// The version the job copied.
    snapshot: u64,
    /// The first write after the copy (the unit stays dirty from it when the job ends).
    since_after: Option<u64>,
}

struct Job {
    /// Units and the versions copied.
    units: Vec<(u64, u64)>,
    /// Device writes (with their sectors' placement directive) waiting for the DRAM
    /// transfer, then the count still in flight.
    writes: Vec<(BlockRequest, Option<PlacementDirective>)>,
    writes_left: u32,
    error: Option<IoError>,
}

/// What a request sent to the device is for (encoded in its id).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DevTag {
    Destage { job: u32, part: u32 },
    Read(u32),
    Flush(u32),
    Trim(u32),
}

impl DevTag {
    fn encode(self) -> u64 {
        let (kind, a, b) = match self {
            DevTag::Destage { job, part } => (1u64, job, part),
            DevTag::Read(t) => (2, t, 0),
            DevTag::Flush(t) => (3, t, 0),
            DevTag::Trim(t) => (4, t, 0),
        };
        assert!(b < 1 << 24, "destage job parts fit 24 bits");
        kind << 56 | u64::from(a) << 24 | u64::from(b)
    }

    fn decode(id: u64) -> DevTag {
        let a = (id >> 24) as u32;
        let b = (id & ((1 << 24) - 1)) as u32;
        match id >> 56 {
            1 => DevTag::Destage { job: a, part: b },
            2 => DevTag::Read(a),
            3 => DevTag::Flush(a),
            4 => DevTag::Trim(a),
            k => panic!("device completed an id of unknown kind {k}"),
        }
    }
}

/// A host request the layer holds.
struct HostReq {
    req: BlockRequest,
    submitted: SimTime,
    /// Its place among writes, flushes and trims (arrival order).
    seq: u64,
    fua: bool,
    /// Writes: the Data Placement directive it carried.
    placement: Option<PlacementDirective>,
    /// Writes: bytes of the request admitted into the buffer so far.
    admitted_bytes: u64,
    /// Writes: when it first found the buffer full.
    waiting_since: Option<SimTime>,
    /// Trims: sent to the device.
    sent: bool,
    /// Reads: sectors taken from the buffer at arrival (and their data, functional).
    hit: Vec<bool>,
    /// Reads: the merged payload.
    data: Vec<u8>,
}

/// The write buffer in front of the block device `D`.
pub struct WriteCache<D> {
    cfg: WriteCacheConfig,
    dev: D,
    functional: bool,
    sectors_per_unit: u64,
    dram: DramPort,
    units: BTreeMap<u64, Unit>,
    /// Units of `units` that a destage job holds (the rest are free to destage).
    destaging_units: u64,
    /// (dirty_since, unit) of every buffered unit: the oldest non-durable write first.
    dirty: BTreeSet<(u64, u64)>,
    /// The elevator: the next destage starts at the first unit at or after it.
    cursor: u64,
    /// Watermark destaging in progress (between the high and the low watermark).
    draining: bool,
    /// The host has been idle for `idle_destage_us`: destage everything.
    idle_drain: bool,
    idle_gen: u64,
    /// The front write waits for a free unit.
    space_blocked: bool,
    jobs: Vec<Option<Job>>,
    free_jobs: Vec<u32>,
    host: Vec<Option<HostReq>>,
    free_tags: Vec<u32>,
    host_live: usize,
    next_seq: u64,
    /// Writes not yet wholly in the buffer, in arrival order.
    admit: VecDeque<u32>,
    fua_waiting: Vec<u32>,
    /// Flushes draining the buffer (not yet passed to the device).
    flush_waiting: Vec<u32>,
    /// Trims not yet completed (sent to the device or waiting to be).
    trims: Vec<u32>,
    /// A destage write failed: the next FLUSH completes with this error.
    destage_error: Option<IoError>,
    /// After a power loss with PLP: the host is gone, the buffer drains.
    holdup: bool,
    stats: WriteCacheStats,
    dev_done: Vec<BlockCompletion>,
    completions: Vec<BlockCompletion>,
}

impl<D: BlockDevice> WriteCache<D> {
    pub fn new(cfg: WriteCacheConfig, dev: D) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let jobs = cfg.destage_inflight_max;
        Ok(WriteCache {
            sectors_per_unit: cfg.unit_bytes / SECTOR_BYTES,
            functional: dev.is_functional(),
            dram: DramPort::new(cfg.dram_rate_mb_s),
            cfg,
            dev,
            units: BTreeMap::new(),
            destaging_units: 0,
            dirty: BTreeSet::new(),
            cursor: 0,
            draining: false,
            idle_drain: false,
            idle_gen: 0,
            space_blocked: false,
            jobs: (0..jobs).map(|_| None).collect(),
            free_jobs: (0..jobs).rev().collect(),
            host: Vec::new(),
            free_tags: Vec::new(),
            host_live: 0,
            next_seq: 1,
            admit: VecDeque::new(),
            fua_waiting: Vec::new(),
            flush_waiting: Vec::new(),
            trims: Vec::new(),
            destage_error: None,
            holdup: false,
            stats: WriteCacheStats::default(),
            dev_done: Vec::new(),
            completions: Vec::new(),
        })
    }

    pub fn config(&self) -> &WriteCacheConfig {
        &self.cfg
    }

    pub fn stats(&self) -> WriteCacheStats {
        self.stats
    }

    pub fn device(&self) -> &D {
        &self.dev
    }

    pub fn device_mut(&mut self) -> &mut D {
        &mut self.dev
    }

    /// Gives the device up; whatever the buffer holds is lost (a power cut without PLP).
    pub fn into_device(self) -> D {
        self.dev
    }

    /// Units occupied now (every one holds data not yet durable).
    pub fn occupied_units(&self) -> u64 {
        self.units.len() as u64
    }

    /// Destage jobs in flight.
    pub fn destages_in_flight(&self) -> u32 {
        self.cfg.destage_inflight_max - self.free_jobs.len() as u32
    }

    /// Power fails at `q.now()`. Without PLP nothing more happens here: the caller cuts the
    /// device (the buffer is lost with [`WriteCache::into_device`]) and gets `None`. With PLP
    /// the host is gone — requests not completed never will be, writes not yet in the buffer
    /// are dropped — and the buffer is destaged; returns the time the capacitors run out, at
    /// which the caller cuts the device whether or not [`WriteCache::holdup_done`].
    pub fn power_loss<S: Schedule<WcEvent<D::Event>>>(&mut self, q: &mut S) -> Option<SimTime> {
        if !self.cfg.plp || !self.cfg.enabled {
            return None;
        }
        self.holdup = true;
        self.admit.clear();
        self.fua_waiting.clear();
        self.flush_waiting.clear();
        self.trims.clear();
        self.space_blocked = false;
        self.completions.clear();
        self.settle(q);
        Some(q.now() + SimDuration::from_us_f64(self.cfg.plp_holdup_us))
    }

    /// After [`WriteCache::power_loss`] with PLP: the whole buffer is durable.
    pub fn holdup_done(&self) -> bool {
        assert!(self.holdup, "asked about a hold-up that never started");
        self.units.is_empty() && self.destages_in_flight() == 0
    }

    /// Checks the buffer's invariants (tests call it between steps; O(buffer)).
    pub fn check_invariants(&self) {
        assert!(self.occupied_units() <= self.cfg.capacity_units());
        assert_eq!(self.dirty.len(), self.units.len(), "dirty index drifted");
        for (&u, unit) in &self.units {
            assert!(self.dirty.contains(&(unit.dirty_since, u)));
            assert!(unit.dirty_since <= unit.version);
            assert_ne!(unit.valid, 0, "a buffered unit holds a sector");
            assert!(
                unit.placement.is_empty() || unit.placement.len() as u64 == self.sectors_per_unit,
                "a unit's placements are none or one per sector"
            );
            if let Some(d) = &unit.destaging {
                assert!(d.snapshot <= unit.version);
                assert_eq!(d.since_after.is_some(), d.snapshot < unit.version);
            }
        }
        let live = self.host.iter().filter(|h| h.is_some()).count();
        assert_eq!(live, self.host_live);
        let in_jobs: usize = self.jobs.iter().flatten().map(|j| j.units.len()).sum();
        let destaging = self
            .units
            .values()
            .filter(|u| u.destaging.is_some())
            .count();
        assert_eq!(
            in_jobs, destaging,
            "every destaging unit belongs to one job"
        );
        assert_eq!(
            destaging as u64, self.destaging_units,
            "destaging count drifted"
        );
    }

    // ---- host requests ----

    fn alloc_tag(&mut self, h: HostReq) -> u32 {
        assert!(
            self.host_live < HOST_MAX,
            "the caller keeps more than {HOST_MAX} requests outstanding"
        );
        self.host_live += 1;
        match self.free_tags.pop() {
            Some(t) => {
                assert!(self.host[t as usize].is_none());
                self.host[t as usize] = Some(h);
                t
            }
            None => {
                self.host.push(Some(h));
                (self.host.len() - 1) as u32
            }
        }
    }

    fn host_req(&mut self, tag: u32) -> &mut HostReq {
        self.host[tag as usize]
            .as_mut()
            .expect("a tag in flight names a live request")
    }

    fn accept<S: Schedule<WcEvent<D::Event>>>(
        &mut self,
        req: BlockRequest,
        fua: bool,
        placement: Option<PlacementDirective>,
        q: &mut S,
    ) {
        let now = q.now();
        assert!(!self.holdup, "no host request after a power loss");
        let placement = placement.filter(|_| req.op == BlockOp::Write);
        if !self.cfg.enabled {
            let dq = &mut q.map(WcEvent::Device);
            match placement {
                Some(p) => self.dev.submit_placed(None, req, fua, p, dq),
                None if fua => self.dev.submit_fua(req, dq),
                None => self.dev.submit(req, dq),
            }
            return self.settle(q);
        }
        self.idle_gen += 1;
        self.idle_drain = false;
        if let Err(e) = self.check_request(&req) {
            self.completions.push(BlockCompletion {
                id: req.id,
                op: req.op,
                offset_bytes: req.offset_bytes,
                len_bytes: req.len_bytes,
                submitted: now,
                completed: now,
                result: Err(e),
                data: Vec::new(),
            });
            self.arm_idle_timer(q);
            return;
        }
        let op = req.op;
        let seq = self.next_seq;
        self.next_seq += 1;
        let tag = self.alloc_tag(HostReq {
            req,
            submitted: now,
            seq,
            fua: fua && op == BlockOp::Write,
            placement,
            admitted_bytes: 0,
            waiting_since: None,
            sent: false,
            hit: Vec::new(),
            data: Vec::new(),
        });
        match op {
            BlockOp::Write => {
                self.stats.writes += 1;
                self.stats.write_bytes += self.host_req(tag).req.len_bytes;
                self.stats.fua_writes += u64::from(fua);
                self.admit.push_back(tag);
            }
            BlockOp::Read => self.start_read(tag, q),
            BlockOp::Flush => {
                self.stats.flushes += 1;
                self.flush_waiting.push(tag);
            }
            BlockOp::Trim => {
                self.stats.trims += 1;
                self.trims.push(tag);
            }
        }
        self.settle(q);
    }

    /// The checks a device makes before buffering anything.
    fn check_request(&self, req: &BlockRequest) -> Result<(), IoError> {
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
        let capacity_bytes = self.dev.capacity_bytes();
        if req
            .offset_bytes
            .checked_add(req.len_bytes)
            .is_none_or(|end| end > capacity_bytes)
        {
            return Err(IoError::OutOfRange {
                offset_bytes: req.offset_bytes,
                len_bytes: req.len_bytes,
                capacity_bytes,
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

    /// Completes host request `tag` (dropped silently during a hold-up: the host is gone).
    fn complete<S: Schedule<WcEvent<D::Event>>>(
        &mut self,
        tag: u32,
        result: Result<(), IoError>,
        q: &mut S,
    ) {
        let h = self.host[tag as usize]
            .take()
            .expect("a request completes once");
        self.free_tags.push(tag);
        self.host_live -= 1;
        if self.holdup {
            return;
        }
        let now = q.now();
        self.completions.push(BlockCompletion {
            id: h.req.id,
            op: h.req.op,
            offset_bytes: h.req.offset_bytes,
            len_bytes: h.req.len_bytes,
            submitted: h.submitted,
            completed: now,
            result,
            data: h.data,
        });
        self.arm_idle_timer(q);
    }

    /// With no host request left, idle destaging starts after `idle_destage_us` unless a
    /// request arrives first (it moves the generation on).
    fn arm_idle_timer<S: Schedule<WcEvent<D::Event>>>(&mut self, q: &mut S) {
        if self.host_live == 0 {
            self.idle_gen += 1;
            q.schedule_in(
                SimDuration::from_us_f64(self.cfg.idle_destage_us),
                WcEvent::Idle(self.idle_gen),
            );
        }
    }

    // ---- the state machine's progress ----

    /// Moves everything that can move: waiting writes into the buffer, finished FUA writes,
    /// drained flushes and ready trims to the device, then destaging.
    fn advance<S: Schedule<WcEvent<D::Event>>>(&mut self, q: &mut S) {
        if !self.holdup {
            self.pump_admit(q);
            self.check_fua(q);
            self.check_flushes(q);
            self.check_trims(q);
        }
        self.pump_destage(q);
    }

    fn on_device_completion<S: Schedule<WcEvent<D::Event>>>(
        &mut self,
        c: BlockCompletion,
        q: &mut S,
    ) {
        match DevTag::decode(c.id) {
            DevTag::Destage { job, .. } => self.destage_write_done(job, c.result),
            DevTag::Read(tag) => self.finish_read(tag, c, q),
            DevTag::Flush(tag) => {
                if !self.holdup {
                    let result = match self.destage_error.take() {
                        Some(e) => Err(e),
                        None => c.result,
                    };
                    self.complete(tag, result, q);
                }
            }
            DevTag::Trim(tag) => {
                if !self.holdup {
                    self.trims.retain(|&t| t != tag);
                    self.complete(tag, c.result, q);
                }
            }
        }
    }

    /// Handles one of the layer's events at `q.now()`.
    pub fn handle_event<S: Schedule<WcEvent<D::Event>>>(
        &mut self,
        ev: WcEvent<D::Event>,
        q: &mut S,
        rng: &mut SimRng,
    ) {
        match ev {
            WcEvent::Device(e) => self.dev.handle(e, &mut q.map(WcEvent::Device), rng),
            WcEvent::Inserted(tag) => {
                if !self.holdup {
                    if self.host_req(tag).fua {
                        self.fua_waiting.push(tag);
                    } else {
                        self.complete(tag, Ok(()), q);
                    }
                }
            }
            WcEvent::ReadHit(tag) => {
                if !self.holdup {
                    self.complete(tag, Ok(()), q);
                }
            }
            WcEvent::DestageOut(job) => self.destage_out(job, q),
            WcEvent::Idle(generation) => {
                if generation == self.idle_gen && self.host_live == 0 {
                    self.idle_drain = true;
                }
            }
        }
        self.settle(q);
    }

    /// Advances, then takes the device's completions (some come back at submission, such as
    /// a request the device refuses) and advances again, until nothing moves.
    fn settle<S: Schedule<WcEvent<D::Event>>>(&mut self, q: &mut S) {
        /// Rounds of completions one call may see: each round needs a completion that the
        /// previous round's submissions produced at once; far more is a device bug.
        const ROUNDS_MAX: u32 = 1 << 16;
        if !self.cfg.enabled {
            self.dev.take_completions(&mut self.completions);
            return;
        }
        for _ in 0..ROUNDS_MAX {
            self.advance(q);
            self.dev.take_completions(&mut self.dev_done);
            if self.dev_done.is_empty() {
                return;
            }
            let mut done = std::mem::take(&mut self.dev_done);
            for c in done.drain(..) {
                self.on_device_completion(c, q);
            }
            self.dev_done = done;
        }
        panic!("the device kept completing requests at submission for {ROUNDS_MAX} rounds");
    }
}

fn overlaps(a: &BlockRequest, b: &BlockRequest) -> bool {
    a.offset_bytes < b.offset_bytes + b.len_bytes && b.offset_bytes < a.offset_bytes + a.len_bytes
}

impl<D: BlockDevice> BlockDevice for WriteCache<D> {
    type Event = WcEvent<D::Event>;

    fn capacity_bytes(&self) -> u64 {
        self.dev.capacity_bytes()
    }

    fn is_functional(&self) -> bool {
        self.functional
    }

    fn submit<S: Schedule<Self::Event>>(&mut self, req: BlockRequest, q: &mut S) {
        self.accept(req, false, None, q);
    }

    fn submit_fua<S: Schedule<Self::Event>>(&mut self, req: BlockRequest, q: &mut S) {
        self.accept(req, true, None, q);
    }

    /// The directive is kept with the write's sectors and destaged with them (one queue
    /// here: the stream changes nothing).
    fn submit_placed<S: Schedule<Self::Event>>(
        &mut self,
        _stream: Option<u32>,
        req: BlockRequest,
        fua: bool,
        placement: PlacementDirective,
        q: &mut S,
    ) {
        self.accept(req, fua, Some(placement), q);
    }

    /// Without PLP completed writes may be lost at a cut; with PLP they survive, as NVMe
    /// drives with power-loss protection report no volatile write cache.
    fn volatile_write_cache(&self) -> bool {
        if self.cfg.enabled {
            !self.cfg.plp
        } else {
            self.dev.volatile_write_cache()
        }
    }

    fn handle<S: Schedule<Self::Event>>(&mut self, ev: Self::Event, q: &mut S, rng: &mut SimRng) {
        self.handle_event(ev, q, rng);
    }

    fn take_completions(&mut self, out: &mut Vec<BlockCompletion>) {
        out.append(&mut self.completions);
    }

    /// Management commands go to the device below (they read and steer its placement;
    /// writes still in the buffer are not yet the device's).
    fn submit_mgmt<S: Schedule<Self::Event>>(
        &mut self,
        req: nearflash_blockdev::MgmtRequest,
        q: &mut S,
    ) -> Result<(), nearflash_blockdev::MgmtRequest> {
        self.dev.submit_mgmt(req, &mut q.map(WcEvent::Device))
    }

    fn take_mgmt_completions(&mut self, out: &mut Vec<nearflash_blockdev::MgmtCompletion>) {
        self.dev.take_mgmt_completions(out);
    }

    fn outstanding(&self) -> u64 {
        if !self.cfg.enabled {
            return self.dev.outstanding();
        }
        (self.host_live + self.completions.len()) as u64
    }

    fn check_invariants(&self) {
        WriteCache::check_invariants(self);
        self.dev.check_invariants();
    }
}

impl<D: BlockDevice> Model for WriteCache<D> {
    type Event = WcEvent<D::Event>;

    fn handle(&mut self, ev: Self::Event, q: &mut EventQueue<Self::Event>, rng: &mut SimRng) {
        self.handle_event(ev, q, rng);
    }

    fn check_invariants(&self) {
        BlockDevice::check_invariants(self);
    }
}

#[cfg(test)]
mod tests;
