//! Power-cut crash test of the write buffer over the FTL. For one seed: format the device over
//! a `MemoryStore`, put a [`WriteCache`] in front, fill the device once and drive a random
//! mix of writes (aligned 4 KiB and partial), FUA writes, reads, trims and FLUSHes, then lose
//! power at a random point: without PLP the buffer is dropped at once; with PLP the host stops
//! and the buffer destages for at most the hold-up budget. Then the flash is cut, the FTL
//! recovers, and every sector is read back against the promise that applies:
//! - **without PLP** every write completed before a completed FLUSH was submitted, and every
//!   FUA write, reads back (or something newer); other sectors read a version of themselves
//!   no newer than the newest issued — never garbage, never another sector's data;
//! - **with PLP** every completed write reads back, as on a drive without a cache.
//!
//! Two [`Reference`] models run side by side with the same stamps: `acked` (every completed
//! write; reads during the run are checked against it) and `durable` (a write enters it when
//! a FLUSH submitted after its completion completes, or when it completes with FUA). A sector
//! that is durable-legal but older than its acked version is counted as `volatile_lost`: what
//! the cache lost, as the promise allows. The recovered device then runs more of the workload,
//! checked the same way. One `SimRng` drives everything, so a seed replays exactly; a panic
//! is caught and reported as the seed's error.

use crate::{WcEvent, WriteCache, WriteCacheConfig};
use nearflash_blockdev::verify::{AckedAt, Reference, SectorContent};
use nearflash_blockdev::{BlockCompletion, BlockDevice, BlockOp, BlockRequest, SECTOR_BYTES};
use nearflash_flash::{FlashConfig, Geometry, MemoryStore};
use nearflash_ftl::recovery::recover;
use nearflash_ftl::{Device, Event, FtlConfig};
use nearflash_sim::{
    EventQueue, Model, Progress, Schedule, Sim, SimDuration, SimRng, SimTime, Stall, StallReason,
    Watchdog,
};
use serde::Serialize;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

#[derive(Clone, Debug)]
pub struct CrashTestConfig {
    /// Random operations after the prefill; the cut lands somewhere in them.
    pub ops_per_seed: usize,
    /// Host commands kept in flight.
    pub queue_depth: usize,
    /// Largest request, in 512-byte sectors.
    pub max_request_sectors: u64,
    /// Write the whole logical space once first, so GC runs during the random operations.
    pub prefill: bool,
    /// Random operations run (and checked) on the recovered device.
    pub ops_after_recovery: usize,
}

impl Default for CrashTestConfig {
    fn default() -> Self {
        CrashTestConfig {
            ops_per_seed: 600,
            queue_depth: 8,
            max_request_sectors: 64,
            prefill: true,
            ops_after_recovery: 200,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CrashOutcome {
    pub seed: u64,
    /// The buffer had power-loss protection.
    pub plp: bool,
    /// Events processed before power was lost.
    pub cut_at_event: u64,
    /// Units the buffer held when power was lost.
    pub buffered_units_at_cut: u64,
    /// With PLP: simulated time the hold-up destage took (or the whole budget, if it did not
    /// finish), and whether it finished.
    pub holdup_used_ns: u64,
    pub holdup_finished: bool,
    /// Sectors the applicable promise says must survive, checked after the cut.
    pub durable_sectors_checked: u64,
    /// Of those, sectors that read back as zeros or older: a broken promise.
    pub lost_writes: u64,
    /// Sectors read (during a run or after the cut) with another sector's data, garbage, or
    /// a version not legal at that point.
    pub wrong_data_reads: u64,
    /// Acknowledged (not durable) sectors that read back older after the cut: what the
    /// volatile cache lost, as the promise allows.
    pub volatile_lost: u64,
    /// Host commands that failed.
    pub io_errors: u64,
    pub ops_completed: u64,
    pub first_violation: Option<String>,
    /// A configuration error, a recovery failure, a stall or a panic.
    pub error: Option<String>,
}

impl CrashOutcome {
    pub fn passed(&self) -> bool {
        self.lost_writes == 0
            && self.wrong_data_reads == 0
            && self.io_errors == 0
            && self.error.is_none()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CrashSummary {
    pub seeds: u64,
    pub passed: u64,
    pub durable_sectors_checked: u64,
    pub lost_writes: u64,
    pub wrong_data_reads: u64,
    pub volatile_lost: u64,
    pub io_errors: u64,
    pub errors: u64,
    /// With PLP: the longest hold-up destage, and seeds whose destage did not finish.
    pub holdup_used_ns_max: u64,
    pub holdup_unfinished: u64,
    pub failed_seeds: Vec<u64>,
}

pub fn summarize(outcomes: &[CrashOutcome]) -> CrashSummary {
    let mut s = CrashSummary::default();
    for o in outcomes {
        s.seeds += 1;
        if o.passed() {
            s.passed += 1;
        } else {
            s.failed_seeds.push(o.seed);
        }
        s.durable_sectors_checked += o.durable_sectors_checked;
        s.lost_writes += o.lost_writes;
        s.wrong_data_reads += o.wrong_data_reads;
        s.volatile_lost += o.volatile_lost;
        s.io_errors += o.io_errors;
        s.errors += u64::from(o.error.is_some());
        s.holdup_used_ns_max = s.holdup_used_ns_max.max(o.holdup_used_ns);
        s.holdup_unfinished += u64::from(o.plp && !o.holdup_finished);
    }
    s
}

/// Simulated time without a completion, with requests in flight, after which the run is
/// declared stuck (the load generators' limit).
const STALL: SimDuration = nearflash_blockdev::load::DEFAULT_STALL_LIMIT;

/// Runs one seed; never panics (a panic becomes the outcome's `error`).
pub fn run_seed(
    flash: &FlashConfig,
    ftl: &FtlConfig,
    wc: &WriteCacheConfig,
    cfg: &CrashTestConfig,
    seed: u64,
) -> CrashOutcome {
    let mut out = CrashOutcome {
        seed,
        plp: wc.plp,
        ..CrashOutcome::default()
    };
    let run = catch_unwind(AssertUnwindSafe(|| {
        run_seed_inner(flash, ftl, wc, cfg, seed, &mut out)
    }));
    match run {
        Ok(Ok(())) => {}
        Ok(Err(e)) => out.error = Some(e.to_string()),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "non-string panic".into());
            out.error = Some(format!("panic: {msg}"));
        }
    }
    out
}

/// Why a seed's run could not finish (reported as the seed's `error`).
#[derive(Debug, thiserror::Error)]
enum CrashError {
    #[error("flash configuration: {0}")]
    Flash(#[from] nearflash_flash::ConfigError),
    #[error("write-buffer configuration: {0}")]
    Cache(#[from] crate::ConfigError),
    #[error("recovery failed: {0}")]
    Recovery(#[from] nearflash_ftl::recovery::RecoveryError),
    #[error("stalled: {0}")]
    Stalled(#[from] Stall),
}

fn run_seed_inner(
    flash: &FlashConfig,
    ftl: &FtlConfig,
    wc: &WriteCacheConfig,
    cfg: &CrashTestConfig,
    seed: u64,
    out: &mut CrashOutcome,
) -> Result<(), CrashError> {
    assert!(cfg.queue_depth > 0 && cfg.max_request_sectors > 0);
    let mut sim: Sim<WcEvent<Event>> = Sim::new(seed);
    let pages = Geometry::from_config(flash).page_count();
    let store = Box::new(MemoryStore::new(pages, flash.page_size_bytes));
    let dev = Device::format(flash, ftl, store, &mut sim.queue().map(WcEvent::Device))?;
    let sectors = dev.logical_bytes() / SECTOR_BYTES;
    let group_sectors = u64::from(dev.layout().unit_sectors());
    let mut d = Driver {
        cfg,
        m: UnderTest::new(WriteCache::new(wc.clone(), dev)?, 0),
        sim,
        acked: Reference::new(sectors, group_sectors),
        durable: Reference::new(sectors, group_sectors),
        acked_log: Vec::new(),
        durable_upto: 0,
        inflight: BTreeMap::new(),
        next_id: 0,
        prefill_next: 0,
        watchdog: Watchdog::new(STALL),
    };
    let prefill = if cfg.prefill {
        sectors.div_ceil(cfg.max_request_sectors) as usize
    } else {
        0
    };
    let total = prefill + cfg.ops_per_seed;
    let cut_after = prefill + d.sim.rng().below(cfg.ops_per_seed.max(1) as u64) as usize;
    d.run(out, prefill, total, Some(cut_after))?;
    out.cut_at_event = d.sim.events();
    out.buffered_units_at_cut = d.m.wc.occupied_units();
    let mut d = d.power_loss(out, ftl, wc)?;
    d.verify_after_crash(out)?;
    d.run(out, 0, cfg.ops_after_recovery, None)?;
    Ok(())
}

enum Pending {
    Read {
        lsn: u64,
        before: Vec<AckedAt>,
    },
    Write {
        lsn: u64,
        count: u64,
        stamp: u32,
        fua: bool,
    },
    Trim {
        lsn: u64,
        count: u64,
        stamp: u32,
    },
    /// Makes durable the acked writes logged before it was submitted.
    Flush {
        log_len: usize,
    },
    CrashRead {
        lsn: u64,
        count: u64,
    },
}

/// The buffer and its FTL as the loop's model: after every event it takes what the buffer
/// completed (so a wait can end at a completion) and counts requests for the watchdog.
struct UnderTest {
    wc: WriteCache<Device>,
    done: Vec<BlockCompletion>,
    /// Requests submitted and completed, counted from the run's first id across the cut (a
    /// cut forgets what was in flight: both restart at the next id).
    submitted: u64,
    completed: u64,
}

impl UnderTest {
    fn new(wc: WriteCache<Device>, next_id: u64) -> UnderTest {
        UnderTest {
            wc,
            done: Vec::new(),
            submitted: next_id,
            completed: next_id,
        }
    }

    /// Moves what the buffer completed (in order) into `done`.
    fn collect(&mut self) {
        let before = self.done.len();
        self.wc.take_completions(&mut self.done);
        self.completed += (self.done.len() - before) as u64;
        assert!(
            self.completed <= self.submitted,
            "a completion has its request"
        );
    }
}

impl Model for UnderTest {
    type Event = WcEvent<Event>;

    fn handle(&mut self, ev: Self::Event, q: &mut EventQueue<Self::Event>, rng: &mut SimRng) {
        Model::handle(&mut self.wc, ev, q, rng);
        self.collect();
    }

    fn check_invariants(&self) {
        self.wc.check_invariants();
    }

    /// Every completion counts (failed ones too).
    fn progress(&self) -> Progress {
        Progress {
            completed: self.completed,
            outstanding: self.submitted - self.completed,
        }
    }
}

struct Driver<'a> {
    cfg: &'a CrashTestConfig,
    m: UnderTest,
    sim: Sim<WcEvent<Event>>,
    acked: Reference,
    durable: Reference,
    /// Completed non-FUA writes in completion order (a FLUSH makes a prefix durable).
    acked_log: Vec<(u64, u64, u32)>,
    durable_upto: usize,
    inflight: BTreeMap<u64, Pending>,
    next_id: u64,
    prefill_next: u64,
    watchdog: Watchdog,
}

impl Driver<'_> {
    /// Issues `total` operations (the first `prefill` sequential writes). With
    /// `cut = Some(after)`, returns a random number of events after operation `after` was
    /// issued, mid-flight; otherwise once every operation completed.
    fn run(
        &mut self,
        out: &mut CrashOutcome,
        prefill: usize,
        total: usize,
        cut: Option<usize>,
    ) -> Result<(), CrashError> {
        let mut issued = 0;
        let mut cut_in: Option<u64> = None;
        loop {
            if let Some(after) = cut {
                if issued > after || issued == total {
                    let left = cut_in.get_or_insert_with(|| self.sim.rng().below(400));
                    if *left == 0 {
                        return Ok(());
                    }
                    *left -= 1;
                }
            }
            if issued < total && self.inflight.len() < self.cfg.queue_depth {
                if issued < prefill {
                    self.prefill_write();
                } else {
                    self.random_op();
                }
                issued += 1;
                self.drain(out);
                continue;
            }
            if issued == total && self.inflight.is_empty() && cut.is_none() {
                return Ok(());
            }
            // Wait for a completion; while the cut is armed, every event counts down to it.
            let armed = cut_in.is_some();
            let mut first = true;
            let waited = self.wait(|m| {
                if std::mem::take(&mut first) {
                    return false; // nothing has run since the countdown's last tick
                }
                if !m.done.is_empty() {
                    return true;
                }
                if armed {
                    let left = cut_in.as_mut().expect("an armed cut counts down");
                    if *left == 0 {
                        return true;
                    }
                    *left -= 1;
                }
                false
            });
            match waited {
                // Nothing in flight and nothing scheduled: the device rests, the cut finds it
                // idle.
                Err(stall)
                    if stall.reason == StallReason::NoEventPending
                        && stall.progress.outstanding == 0 =>
                {
                    return Ok(());
                }
                waited => waited?,
            }
            self.drain(out);
        }
    }

    /// Runs events until `done` holds, under the watchdog (`Sim::run_until`).
    fn wait(&mut self, done: impl FnMut(&UnderTest) -> bool) -> Result<(), Stall> {
        self.sim
            .run_until(&mut self.m, &mut self.watchdog, UnderTest::progress, done)
    }

    fn prefill_write(&mut self) {
        let sectors = self.acked.sectors();
        let lsn = self.prefill_next;
        let count = self.cfg.max_request_sectors.min(sectors - lsn);
        self.prefill_next += count;
        self.submit(BlockOp::Write, lsn, count, false);
    }

    fn random_op(&mut self) {
        let sectors = self.acked.sectors();
        let rng = self.sim.rng();
        let (op, fua) = match rng.below(100) {
            0..=49 => (BlockOp::Write, false),
            50..=57 => (BlockOp::Write, true),
            58..=87 => (BlockOp::Read, false),
            88..=93 => (BlockOp::Trim, false),
            _ => (BlockOp::Flush, false),
        };
        let (lsn, count) = match rng.below(3) {
            // An aligned 4 KiB unit.
            0 => (rng.below(sectors / 8) * 8, 8),
            // A partial unit: a few sectors anywhere.
            1 => {
                let count = 1 + rng.below(7);
                (rng.below(sectors - count + 1), count)
            }
            _ => {
                let count = 1 + rng.below(self.cfg.max_request_sectors.min(sectors));
                (rng.below(sectors - count + 1), count)
            }
        };
        self.submit(op, lsn, count, fua);
    }

    fn submit(&mut self, op: BlockOp, lsn: u64, count: u64, fua: bool) {
        let id = self.next_id;
        self.next_id += 1;
        let mut data = Vec::new();
        let pending = match op {
            BlockOp::Read => Pending::Read {
                lsn,
                before: self.acked.acked_at(lsn, count),
            },
            BlockOp::Write => {
                let (d, stamp) = self.acked.issue_write(lsn, count);
                let (_, twin) = self.durable.issue_write(lsn, count);
                assert_eq!(stamp, twin, "the two references stamp alike");
                data = d;
                Pending::Write {
                    lsn,
                    count,
                    stamp,
                    fua,
                }
            }
            BlockOp::Trim => {
                let stamp = self.acked.issue_trim(lsn, count);
                assert_eq!(stamp, self.durable.issue_trim(lsn, count));
                Pending::Trim { lsn, count, stamp }
            }
            BlockOp::Flush => Pending::Flush {
                log_len: self.acked_log.len(),
            },
        };
        self.inflight.insert(id, pending);
        self.m.submitted += 1;
        let req = BlockRequest {
            id,
            op,
            offset_bytes: lsn * SECTOR_BYTES,
            len_bytes: if op == BlockOp::Flush {
                0
            } else {
                count * SECTOR_BYTES
            },
            data,
        };
        if fua {
            self.m.wc.submit_fua(req, self.sim.queue());
        } else {
            self.m.wc.submit(req, self.sim.queue());
        }
    }

    fn drain(&mut self, out: &mut CrashOutcome) {
        self.m.collect();
        for c in std::mem::take(&mut self.m.done) {
            let p = self.inflight.remove(&c.id).expect("a known request");
            if let Err(e) = &c.result {
                out.io_errors += 1;
                note(out, || format!("{:?} {}: {e}", c.op, c.id));
                continue;
            }
            out.ops_completed += 1;
            match p {
                Pending::Read { lsn, before } => self.check_read(out, c.id, lsn, &before, &c.data),
                Pending::Write {
                    lsn,
                    count,
                    stamp,
                    fua,
                } => {
                    self.acked.ack_write(lsn, count, stamp);
                    if fua {
                        self.durable.ack_write(lsn, count, stamp);
                    } else {
                        self.acked_log.push((lsn, count, stamp));
                    }
                }
                Pending::Trim { lsn, count, stamp } => {
                    self.acked.ack_trim(lsn, count, stamp);
                    self.durable.ack_trim(lsn, count, stamp);
                }
                Pending::Flush { log_len } => {
                    for &(lsn, count, stamp) in
                        &self.acked_log[self.durable_upto.min(log_len)..log_len]
                    {
                        self.durable.ack_write(lsn, count, stamp);
                    }
                    self.durable_upto = self.durable_upto.max(log_len);
                }
                Pending::CrashRead { lsn, count } => {
                    self.check_crash_read(out, lsn, count, &c.data)
                }
            }
        }
    }

    fn check_read(
        &mut self,
        out: &mut CrashOutcome,
        id: u64,
        lsn: u64,
        before: &[AckedAt],
        data: &[u8],
    ) {
        let sector = SECTOR_BYTES as usize;
        for (i, at) in before.iter().enumerate() {
            let s = lsn + i as u64;
            let d = &data[i * sector..(i + 1) * sector];
            if let Err(v) = self.acked.check_read(s, std::slice::from_ref(at), d) {
                out.wrong_data_reads += 1;
                note(out, || format!("read {id}: {v:?}"));
            }
        }
    }

    /// A post-cut read: judged by the durable model without PLP, the acked one with it.
    fn check_crash_read(&mut self, out: &mut CrashOutcome, lsn: u64, count: u64, data: &[u8]) {
        let sector = SECTOR_BYTES as usize;
        let plp = self.m.wc.config().plp;
        for i in 0..count {
            let s = lsn + i;
            let d = &data[i as usize * sector..(i as usize + 1) * sector];
            let promise = if plp { &self.acked } else { &self.durable };
            let must_survive = promise.is_acked_write(s);
            out.durable_sectors_checked += u64::from(must_survive);
            match promise.check_after_crash(s, d) {
                Ok(()) => {
                    if !plp && self.acked.check_after_crash(s, d).is_err() {
                        out.volatile_lost += 1;
                    }
                }
                Err(v) => {
                    let lost = must_survive
                        && match v.got {
                            SectorContent::Zeros => true,
                            SectorContent::Version { lsn, stamp } => {
                                lsn == s && stamp < promise.acked_stamp(s)
                            }
                            SectorContent::Garbage => false,
                        };
                    if lost {
                        out.lost_writes += 1;
                    } else {
                        out.wrong_data_reads += 1;
                    }
                    note(out, || format!("after cut: {v:?}"));
                }
            }
            self.acked.settle_after_crash(s, d);
            self.durable.settle_after_crash(s, d);
        }
    }

    /// Power fails: with PLP the buffer destages for at most the hold-up budget; then the
    /// flash is cut, every event dropped, and the FTL recovered behind a fresh, empty buffer.
    fn power_loss(
        mut self,
        out: &mut CrashOutcome,
        ftl: &FtlConfig,
        wc: &WriteCacheConfig,
    ) -> Result<Self, CrashError> {
        let lost_at = self.sim.now();
        if let Some(deadline) = self.m.wc.power_loss(self.sim.queue()) {
            self.sim
                .run_until_by(deadline, &mut self.m, |m| m.wc.holdup_done());
            out.holdup_finished = self.m.wc.holdup_done();
            let end: SimTime = if out.holdup_finished {
                self.sim.now()
            } else {
                deadline
            };
            out.holdup_used_ns = end.since(lost_at).as_ns();
        }
        let Driver {
            cfg,
            m: UnderTest { wc: cache, .. },
            sim,
            acked,
            durable,
            next_id,
            ..
        } = self;
        let mut bb = cache.into_device().into_backbone();
        let mut rng = sim.into_rng();
        bb.power_cut(&mut rng);
        let mut sim: Sim<WcEvent<Event>> = Sim::with_rng(rng);
        let (dev, _) = recover(bb, ftl, &mut sim.queue().map(WcEvent::Device))?;
        // The durable model now holds what the flash holds (settled sector by sector by the
        // check); writes acked before the cut are forgotten with the log.
        Ok(Driver {
            cfg,
            m: UnderTest::new(WriteCache::new(wc.clone(), dev)?, next_id),
            sim,
            acked,
            durable,
            acked_log: Vec::new(),
            durable_upto: 0,
            inflight: BTreeMap::new(),
            next_id,
            prefill_next: 0,
            watchdog: Watchdog::new(STALL),
        })
    }

    fn verify_after_crash(&mut self, out: &mut CrashOutcome) -> Result<(), CrashError> {
        let sectors = self.acked.sectors();
        let chunk = self.cfg.max_request_sectors;
        let mut lsn = 0;
        while lsn < sectors || !self.inflight.is_empty() {
            if lsn < sectors && self.inflight.len() < self.cfg.queue_depth {
                let count = chunk.min(sectors - lsn);
                let id = self.next_id;
                self.next_id += 1;
                self.inflight.insert(id, Pending::CrashRead { lsn, count });
                self.m.submitted += 1;
                let req = BlockRequest {
                    id,
                    op: BlockOp::Read,
                    offset_bytes: lsn * SECTOR_BYTES,
                    len_bytes: count * SECTOR_BYTES,
                    data: Vec::new(),
                };
                self.m.wc.submit(req, self.sim.queue());
                lsn += count;
                self.drain(out);
                continue;
            }
            self.wait(|m| !m.done.is_empty())?;
            self.drain(out);
        }
        Ok(())
    }
}

fn note(out: &mut CrashOutcome, msg: impl FnOnce() -> String) {
    if out.first_violation.is_none() {
        out.first_violation = Some(msg());
    }
}

#[cfg(test)]
mod tests;
