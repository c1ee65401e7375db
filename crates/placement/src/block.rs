//! The conventional and the FDP runs: the two streams written straight into the page-mapped
//! drive (`nearflash_ftl::Device`), closed loop at the queue depth, through the one event
//! loop under its watchdog. With FDP each stream's writes carry its own placement handle
//! (`Device::submit_placed`: hot on handle 0, cold on handle 1); the conventional drive gets
//! plain writes. Then every unit written is read back and checked against the reference map.

use crate::workload::{Load, UserWrite, UNIT_BYTES};
use crate::{Mode, ModeReport, PlacementError, STALL_LIMIT};
use nearflash_flash::{FlashConfig, Geometry, MemoryStore};
use nearflash_ftl::{BlockOp, BlockRequest, Device, Event, FtlConfig};
use nearflash_sim::{EventQueue, Model, Progress, Sim, SimRng, Watchdog};
use std::collections::BTreeMap;

/// What a request in flight is.
enum Pending {
    Write(UserWrite),
    Read { unit: u64 },
}

/// The host side of a block run: the load, the requests in flight, and the read-back.
struct BlockHost {
    dev: Device,
    placed: bool,
    load: Load,
    queue_depth: u64,
    pending: BTreeMap<u64, Pending>,
    next_id: u64,
    /// Phase 2: units still to read back, in order, and checks passed.
    to_read: std::vec::IntoIter<u64>,
    reading: bool,
    verified: u64,
    failure: Option<PlacementError>,
    completions: u64,
}

impl BlockHost {
    fn progress(&self) -> Progress {
        Progress {
            completed: self.completions,
            outstanding: self.pending.len() as u64,
        }
    }

    fn finished(&self) -> bool {
        self.failure.is_some() || (self.pending.is_empty() && self.phase_done())
    }

    fn phase_done(&self) -> bool {
        if self.reading {
            self.to_read.len() == 0
        } else {
            self.load.finished()
        }
    }

    /// Tops the queue up to its depth from the current phase.
    fn refill(&mut self, q: &mut EventQueue<Event>, rng: &mut SimRng) {
        while (self.pending.len() as u64) < self.queue_depth && self.failure.is_none() {
            let id = self.next_id;
            let (p, offset_bytes, len_bytes, data) = if self.reading {
                let Some(unit) = self.to_read.next() else {
                    return;
                };
                (
                    Pending::Read { unit },
                    unit * UNIT_BYTES,
                    UNIT_BYTES,
                    Vec::new(),
                )
            } else {
                let Some(w) = self.load.next(rng, q.now()) else {
                    return;
                };
                let data = self.load.payload(&w);
                (
                    Pending::Write(w),
                    w.first_unit * UNIT_BYTES,
                    w.units * UNIT_BYTES,
                    data,
                )
            };
            let req = BlockRequest {
                id,
                op: match p {
                    Pending::Read { .. } => BlockOp::Read,
                    Pending::Write(_) => BlockOp::Write,
                },
                offset_bytes,
                len_bytes,
                data,
            };
            let handle = match &p {
                Pending::Write(w) if self.placed => Some(w.stream as u16),
                _ => None,
            };
            self.pending.insert(id, p);
            self.next_id += 1;
            match handle {
                Some(pid) => self.dev.submit_placed(req, pid, q),
                None => self.dev.submit(req, q),
            }
        }
    }

    /// Takes completions and submits what follows until nothing more completes: the drive
    /// refuses a bad request at submission, with no event to follow.
    fn pump(&mut self, q: &mut EventQueue<Event>, rng: &mut SimRng) {
        while self.complete(q) > 0 {
            self.refill(q, rng);
        }
    }

    /// Handles the drive's completions; how many.
    fn complete(&mut self, q: &mut EventQueue<Event>) -> usize {
        let mut done = Vec::new();
        self.dev.take_completions(&mut done);
        let count = done.len();
        for c in done {
            let p = self
                .pending
                .remove(&c.id)
                .expect("a request this host submitted");
            self.completions += 1;
            if let Err(e) = c.result {
                self.failure.get_or_insert(PlacementError::Device(e));
                continue;
            }
            match p {
                Pending::Write(w) => self.load.done(&w, q.now()),
                Pending::Read { unit } => match self.load.check(unit, &c.data) {
                    Ok(()) => self.verified += 1,
                    Err(m) => {
                        self.failure.get_or_insert(PlacementError::Verification(m));
                    }
                },
            }
        }
        count
    }
}

impl Model for BlockHost {
    type Event = Event;

    fn handle(&mut self, ev: Event, q: &mut EventQueue<Event>, rng: &mut SimRng) {
        self.dev.handle(ev, q, rng);
        self.refill(q, rng);
        self.pump(q, rng);
    }
}

/// Runs `load` on a drive of `flash`/`ftl` (FDP on or off as `ftl.fdp.enabled` says) with
/// the streams placed on their handles when `placed`.
pub(crate) fn run(
    mode: Mode,
    flash: &FlashConfig,
    ftl: &FtlConfig,
    load: Load,
    queue_depth: u32,
    seed: u64,
) -> Result<ModeReport, PlacementError> {
    let mut sim: Sim<Event> = Sim::new(seed);
    let store = MemoryStore::new(
        Geometry::from_config(flash).page_count(),
        flash.page_size_bytes,
    );
    let dev = Device::format(flash, ftl, Box::new(store), sim.queue())?;
    let mut host = BlockHost {
        dev,
        placed: mode == Mode::Fdp,
        load,
        queue_depth: u64::from(queue_depth),
        pending: BTreeMap::new(),
        next_id: 0,
        to_read: Vec::new().into_iter(),
        reading: false,
        verified: 0,
        failure: None,
        completions: 0,
    };
    let mut dog = Watchdog::new(STALL_LIMIT);
    let (q, rng) = sim.parts();
    host.refill(q, rng);
    host.pump(q, rng);
    sim.run_until(
        &mut host,
        &mut dog,
        BlockHost::progress,
        BlockHost::finished,
    )?;
    if let Some(e) = host.failure.take() {
        return Err(e);
    }
    let written_at = host.load.last_write_done;
    let stats = host.dev.stats().clone();
    let flash_stats = host.dev.backbone().stats().clone();
    host.to_read = host.load.written_units().collect::<Vec<_>>().into_iter();
    host.reading = true;
    let (q, rng) = sim.parts();
    host.refill(q, rng);
    host.pump(q, rng);
    sim.run_until(
        &mut host,
        &mut dog,
        BlockHost::progress,
        BlockHost::finished,
    )?;
    if let Some(e) = host.failure.take() {
        return Err(e);
    }
    host.dev.check_invariants();
    let pm = stats
        .page_map
        .as_ref()
        .expect("the study runs page mapping");
    let page_bytes = u64::from(flash.page_size_bytes);
    Ok(ModeReport::new(
        mode,
        &host.load,
        crate::Counts {
            user_bytes: stats.host_write_bytes,
            host_copy_bytes: 0,
            device_write_bytes: stats.host_write_bytes,
            media_bytes: flash_stats.page_programs * page_bytes,
            copies_units: pm.gc_units_copied,
            erases: flash_stats.block_erases,
            zone_resets: 0,
            appends_retried: 0,
            zones_cleaned: 0,
            written_at,
            units_verified: host.verified,
        },
    ))
}
