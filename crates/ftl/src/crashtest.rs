//! Power-cut crash testing. For one seed: format a device over a `MemoryStore`, drive a
//! random mixed workload of self-describing sectors (`verify::Reference`) that fills the
//! device and overwrites it until GC, checkpoints and erases run, cut power at an event
//! chosen from the seed, recover, and read every sector back. An acknowledged write that
//! does not read back (or reads back older) is a *lost* write; any read that returns another
//! sector's data, garbage, or a version that was never written is a *wrong* read. The
//! recovered device then runs more of the workload (checked the same way), optionally with
//! a second cut.
//!
//! Cuts are aimed: seed `s` targets phase `s % 4` (host write, GC copy, checkpoint write,
//! erase) and cuts at the first event after a random point of the workload at which the
//! dies are executing that kind of work, so that over many seeds every kind of torn state
//! is exercised. Everything is driven by one `SimRng` seeded from the seed, so the same seed
//! gives the same outcome. Violations are counted, not panicked on; a panic inside the
//! firmware is caught and reported as the seed's error.

use crate::config::FtlConfig;
use crate::device::{Device, Event, FlashWork};
use crate::recovery::{recover, RecoveryReport};
use crate::verify::{AckedAt, Reference, SectorContent};
use nearflash_blockdev::{BlockCompletion, BlockOp, BlockRequest, IoError, SECTOR_BYTES};
use nearflash_flash::backbone::PowerCutReport;
use nearflash_flash::{ConfigError, FlashConfig, Geometry, MemoryStore};
use nearflash_sim::{
    EventQueue, Model, Progress, Sim, SimDuration, SimRng, SimTime, Stall, StallReason, Watchdog,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use thiserror::Error;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CrashTestConfig {
    /// Random operations after the prefill; the first cut lands somewhere in the run.
    pub ops_per_seed: usize,
    /// Host commands kept in flight.
    pub queue_depth: usize,
    /// Largest request, in 512-byte sectors.
    pub max_request_sectors: u64,
    /// Write the whole logical space once before the random operations, so the device is
    /// full and GC starts early.
    pub prefill: bool,
    /// Random operations run (and checked) on the recovered device.
    pub ops_after_recovery: usize,
    /// Cut power a second time during the operations after recovery, and check again.
    pub second_cut: bool,
}

impl Default for CrashTestConfig {
    fn default() -> Self {
        CrashTestConfig {
            ops_per_seed: 600,
            queue_depth: 8,
            max_request_sectors: 64,
            prefill: true,
            ops_after_recovery: 200,
            second_cut: true,
        }
    }
}

impl CrashTestConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |field: &str| {
            Err(ConfigError::Invalid {
                field: field.to_string(),
                reason: "must be greater than zero".into(),
            })
        };
        if self.queue_depth == 0 {
            return bad("crashtest.queue_depth");
        }
        if self.max_request_sectors == 0 {
            return bad("crashtest.max_request_sectors");
        }
        Ok(())
    }
}

/// Why a seed could not be run to the end (its outcome's `error`).
#[derive(Debug, Error)]
enum CrashError {
    #[error("configuration: {0}")]
    Config(#[from] ConfigError),
    #[error("recovery failed: {0}")]
    Recovery(#[from] crate::recovery::RecoveryError),
    /// The watchdog saw no request complete for `STALL_MS` (or no event left to complete
    /// them); `requests` names the stuck ones and what they wait for.
    #[error("stalled: {stall}; stuck requests: {requests}")]
    Stalled { stall: Stall, requests: String },
}

/// What the dies were doing when power was cut.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CutPhase {
    /// A page-group program of a host write.
    HostWrite,
    /// A GC copy's program.
    GcCopy,
    /// A checkpoint page program.
    Checkpoint,
    /// A GC or checkpoint-slot erase.
    Erase,
    /// No program or erase (reads only, or nothing).
    #[default]
    Idle,
}

/// The phases a cut is aimed at, in the order seeds rotate through them.
pub const TARGETED_PHASES: [CutPhase; 4] = [
    CutPhase::HostWrite,
    CutPhase::GcCopy,
    CutPhase::Checkpoint,
    CutPhase::Erase,
];

impl CutPhase {
    fn active(self, work: &BTreeSet<FlashWork>) -> bool {
        match self {
            CutPhase::HostWrite => work.contains(&FlashWork::HostProgram),
            CutPhase::GcCopy => work.contains(&FlashWork::GcProgram),
            CutPhase::Checkpoint => work.contains(&FlashWork::CheckpointProgram),
            CutPhase::Erase => work.contains(&FlashWork::Erase),
            CutPhase::Idle => false,
        }
    }

    /// Labels a cut: the targeted phase if it is executing, else the most destructive kind
    /// of work in progress.
    fn classify(work: &BTreeSet<FlashWork>, target: Option<CutPhase>) -> CutPhase {
        if let Some(t) = target.filter(|t| t.active(work)) {
            return t;
        }
        [
            CutPhase::Erase,
            CutPhase::Checkpoint,
            CutPhase::GcCopy,
            CutPhase::HostWrite,
        ]
        .into_iter()
        .find(|p| p.active(work))
        .unwrap_or(CutPhase::Idle)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CrashOutcome {
    pub seed: u64,
    /// Where the first cut landed.
    pub cut_phase: CutPhase,
    /// Events processed before the first cut.
    pub cut_at_event: u64,
    pub power_cut: PowerCutReport,
    /// Where the second cut landed, if there was one.
    pub second_cut_phase: Option<CutPhase>,
    /// Sectors holding an acknowledged write, checked after each cut.
    pub flushed_writes_checked: u64,
    /// Acknowledged sectors that read back as zeros or an older version after a cut.
    pub lost_flushed_writes: u64,
    /// Sectors read (during a run or after a cut) with another sector's data, garbage, or a
    /// version that is not legal at that point.
    pub wrong_data_reads: u64,
    /// Host commands that failed, other than for lack of space (none should).
    pub io_errors: u64,
    /// Writes that failed with `NoSpace` (none should unless blocks fail: a device whose
    /// spares and checkpoint slots are used up can legitimately run out of space).
    pub no_space_errors: u64,
    /// Commands that failed with `Uncorrectable`: flash media errors beyond the ECC and its
    /// read retries (none should unless `flash.media` is enabled). Not a durability
    /// violation — the device reports the loss instead of returning wrong data — but counted
    /// apart; the sectors such a post-cut read covered are not checked.
    pub uncorrectable_errors: u64,
    /// Host commands acknowledged, over the whole seed.
    pub ops_completed: u64,
    pub recovery: RecoveryReport,
    pub second_recovery: Option<RecoveryReport>,
    /// Recoveries whose FDP counters (the statistics log's and each handle's) were not
    /// those the newest checkpoint saved (`fdp` drives only; never expected).
    #[serde(skip_serializing_if = "is_zero")]
    pub fdp_logs_lost: u64,
    /// The first violation seen, for diagnosis.
    pub first_violation: Option<String>,
    /// A configuration error, a recovery failure or a firmware panic.
    pub error: Option<String>,
}

impl CrashOutcome {
    /// No acknowledged write lost, no wrong data, no error. Running out of space is not a
    /// failure here (see `no_space_errors`); callers that run without failing blocks should
    /// check it too.
    pub fn passed(&self) -> bool {
        self.lost_flushed_writes == 0
            && self.fdp_logs_lost == 0
            && self.wrong_data_reads == 0
            && self.io_errors == 0
            && self.error.is_none()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CrashSummary {
    pub seeds: u64,
    pub passed: u64,
    pub failed: u64,
    /// First cuts per phase.
    pub cuts_by_phase: BTreeMap<CutPhase, u64>,
    pub second_cuts_by_phase: BTreeMap<CutPhase, u64>,
    pub flushed_writes_checked: u64,
    pub lost_flushed_writes: u64,
    pub wrong_data_reads: u64,
    pub io_errors: u64,
    pub no_space_errors: u64,
    pub uncorrectable_errors: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub fdp_logs_lost: u64,
    /// Seeds that ended in an error (recovery failure, panic).
    pub errors: u64,
    pub failed_seeds: Vec<u64>,
}

pub fn summarize(outcomes: &[CrashOutcome]) -> CrashSummary {
    let mut s = CrashSummary::default();
    for o in outcomes {
        s.seeds += 1;
        if o.passed() {
            s.passed += 1;
        } else {
            s.failed += 1;
            s.failed_seeds.push(o.seed);
        }
        *s.cuts_by_phase.entry(o.cut_phase).or_default() += 1;
        if let Some(p) = o.second_cut_phase {
            *s.second_cuts_by_phase.entry(p).or_default() += 1;
        }
        s.flushed_writes_checked += o.flushed_writes_checked;
        s.lost_flushed_writes += o.lost_flushed_writes;
        s.wrong_data_reads += o.wrong_data_reads;
        s.io_errors += o.io_errors;
        s.no_space_errors += o.no_space_errors;
        s.uncorrectable_errors += o.uncorrectable_errors;
        s.fdp_logs_lost += o.fdp_logs_lost;
        s.errors += u64::from(o.error.is_some());
    }
    s
}

/// Runs one seed; never panics (a firmware panic becomes the outcome's `error`).
pub fn run_seed(
    flash: &FlashConfig,
    ftl: &FtlConfig,
    cfg: &CrashTestConfig,
    seed: u64,
) -> CrashOutcome {
    let mut outcome = CrashOutcome {
        seed,
        ..CrashOutcome::default()
    };
    let run = catch_unwind(AssertUnwindSafe(|| {
        run_seed_inner(flash, ftl, cfg, seed, &mut outcome)
    }));
    match run {
        Ok(Ok(())) => {}
        Ok(Err(e)) => outcome.error = Some(e.to_string()),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "non-string panic".into());
            outcome.error = Some(format!("panic: {msg}"));
        }
    }
    outcome
}

/// How long (ms) the workload's tail may run (background GC, checkpoints) before a cut
/// that never found its target phase is taken anyway.
const TAIL_MS: u64 = 20;

/// Simulated time without any request completing, with requests in flight, after which the
/// firmware is declared stuck (a stall with no event pending is caught at once). Story: at
/// 1 s, the soak declared a device with failing blocks stuck while its GC was still moving
/// data off them (it finished after a few seconds); the limit is now the load generators'.
const STALL_MS: u64 = nearflash_blockdev::load::DEFAULT_STALL_LIMIT.0 / 1_000_000;

fn run_seed_inner(
    flash: &FlashConfig,
    ftl: &FtlConfig,
    cfg: &CrashTestConfig,
    seed: u64,
    out: &mut CrashOutcome,
) -> Result<(), CrashError> {
    cfg.validate()?;
    let mut sim = Sim::new(seed);
    // Under debug assertions the device's invariants are checked after every event (before
    // and after each recovery), so a broken one panics at the event that broke it; release
    // builds skip the check (O(device) per event).
    sim.check_invariants_after_every_event(cfg!(debug_assertions));
    let pages = Geometry::from_config(flash).page_count();
    let store = Box::new(MemoryStore::new(pages, flash.page_size_bytes));
    let dev = Device::format(flash, ftl, store, sim.queue())?;
    let sectors = dev.logical_bytes() / SECTOR_BYTES;
    let group_sectors = u64::from(dev.layout().unit_sectors());
    let mut d = Driver {
        cfg,
        m: UnderTest::new(dev, 0),
        sim,
        reference: Reference::new(sectors, group_sectors),
        inflight: BTreeMap::new(),
        next_id: 0,
        prefill_next: 0,
        watchdog: Watchdog::new(SimDuration::from_ms(STALL_MS)),
    };

    let prefill_ops = if cfg.prefill {
        sectors.div_ceil(cfg.max_request_sectors) as usize
    } else {
        0
    };
    let total = prefill_ops + cfg.ops_per_seed;
    let target = TARGETED_PHASES[(seed % TARGETED_PHASES.len() as u64) as usize];
    let cut_after = d.sim.rng().below(total.max(1) as u64) as usize;
    let (phase, event) = d.run(out, prefill_ops, total, Some((cut_after, target)))?;
    out.cut_phase = phase;
    out.cut_at_event = event;
    let (mut d, report, cut) = d.crash(ftl, out)?;
    out.recovery = report;
    out.power_cut = cut;
    d.verify_after_crash(out)?;

    let ops = cfg.ops_after_recovery;
    let second = (cfg.second_cut && ops > 0).then(|| {
        let rng = d.sim.rng();
        let at = rng.below(ops as u64) as usize;
        let target = TARGETED_PHASES[rng.below(TARGETED_PHASES.len() as u64) as usize];
        (at, target)
    });
    let (phase, _) = d.run(out, 0, ops, second)?;
    if second.is_some() {
        out.second_cut_phase = Some(phase);
        let (mut d, report, _) = d.crash(ftl, out)?;
        out.second_recovery = Some(report);
        d.verify_after_crash(out)?;
    }
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
    },
    Trim {
        lsn: u64,
        count: u64,
        stamp: u32,
    },
    Flush,
    /// A read of the whole-device check after a cut.
    CrashRead {
        lsn: u64,
        count: u64,
    },
}

/// The device under test as the loop's model: after every event it takes what the device
/// completed (so a wait can end at a completion) and notes the time (so a wait can end at a
/// deadline); it counts requests for the watchdog.
struct UnderTest {
    dev: Device,
    done: Vec<BlockCompletion>,
    now: SimTime,
    /// Requests submitted and completed, counted from the run's first id across cuts (a
    /// cut forgets what was in flight: both restart at the next id).
    submitted: u64,
    completed: u64,
}

impl UnderTest {
    fn new(dev: Device, next_id: u64) -> UnderTest {
        UnderTest {
            dev,
            done: Vec::new(),
            now: SimTime::ZERO,
            submitted: next_id,
            completed: next_id,
        }
    }

    /// Moves what the device completed (in order) into `done`.
    fn collect(&mut self) {
        let before = self.done.len();
        self.dev.take_completions(&mut self.done);
        self.completed += (self.done.len() - before) as u64;
        assert!(
            self.completed <= self.submitted,
            "a completion has its request"
        );
    }
}

impl Model for UnderTest {
    type Event = Event;

    fn handle(&mut self, ev: Event, q: &mut EventQueue<Event>, rng: &mut SimRng) {
        self.dev.handle(ev, q, rng);
        self.now = q.now();
        self.collect();
    }

    fn check_invariants(&self) {
        self.dev.check_invariants();
    }

    /// Every completion counts (failed ones too — they are progress, and counted as
    /// violations elsewhere).
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
    sim: Sim<Event>,
    reference: Reference,
    inflight: BTreeMap<u64, Pending>,
    next_id: u64,
    prefill_next: u64,
    /// No request completing for `STALL_MS` while some are in flight is a stall.
    watchdog: Watchdog,
}

impl Driver<'_> {
    /// Issues `total` operations (the first `prefill` of them sequential writes). With
    /// `cut = Some((after, target))`, returns at the first moment after operation `after`
    /// was issued at which `target` work is executing — or at the end of the workload's tail
    /// if that never happens — with the phase and the event count; the device is left
    /// mid-flight for the cut. Without a cut, returns once every operation completed.
    fn run(
        &mut self,
        out: &mut CrashOutcome,
        prefill: usize,
        total: usize,
        cut: Option<(usize, CutPhase)>,
    ) -> Result<(CutPhase, u64), CrashError> {
        let mut issued = 0;
        let mut idle_since: Option<SimTime> = None;
        loop {
            if let Some((after, target)) = cut {
                if issued >= after {
                    let work = self.m.dev.flash_work();
                    if target.active(&work) {
                        return Ok((target, self.sim.events()));
                    }
                }
            }
            let armed = cut.filter(|&(after, _)| issued >= after).map(|(_, t)| t);
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
            if issued == total && self.inflight.is_empty() {
                let Some((_, target)) = cut else {
                    return Ok((CutPhase::Idle, self.sim.events()));
                };
                let since = *idle_since.get_or_insert(self.sim.now());
                let end = since + SimDuration::from_ms(TAIL_MS);
                if self.sim.now() > end {
                    let phase = CutPhase::classify(&self.m.dev.flash_work(), Some(target));
                    return Ok((phase, self.sim.events()));
                }
                // The tail: background work only, until the target runs or the tail ends; a
                // queue that runs dry here is a device at rest, not a stall.
                match self
                    .wait(|m| armed.is_some_and(|t| t.active(&m.dev.flash_work())) || m.now > end)
                {
                    Err(CrashError::Stalled { stall, .. })
                        if stall.reason == StallReason::NoEventPending
                            && stall.progress.outstanding == 0 =>
                    {
                        return Ok((CutPhase::Idle, self.sim.events()));
                    }
                    waited => waited?,
                }
                continue;
            }
            // Requests are in flight: wait for one to complete, or for the armed cut.
            self.wait(|m| {
                !m.done.is_empty() || armed.is_some_and(|t| t.active(&m.dev.flash_work()))
            })?;
            self.drain(out);
        }
    }

    /// Runs events until `done` holds, under the watchdog (`Sim::run_until`).
    fn wait(&mut self, done: impl FnMut(&UnderTest) -> bool) -> Result<(), CrashError> {
        self.sim
            .run_until(&mut self.m, &mut self.watchdog, UnderTest::progress, done)
            .map_err(|stall| self.stalled(stall))
    }

    fn stalled(&self, stall: Stall) -> CrashError {
        CrashError::Stalled {
            stall,
            requests: self.m.dev.describe_inflight(8),
        }
    }

    fn prefill_write(&mut self) {
        let sectors = self.reference.sectors();
        let lsn = self.prefill_next;
        let count = self.cfg.max_request_sectors.min(sectors - lsn);
        self.prefill_next += count;
        self.submit(BlockOp::Write, lsn, count);
    }

    fn random_op(&mut self) {
        let rng = self.sim.rng();
        let sectors = self.reference.sectors();
        let count = 1 + rng.below(self.cfg.max_request_sectors.min(sectors));
        let lsn = rng.below(sectors - count + 1);
        let op = match rng.below(100) {
            0..=59 => BlockOp::Write,
            60..=89 => BlockOp::Read,
            90..=94 => BlockOp::Trim,
            _ => BlockOp::Flush,
        };
        self.submit(op, lsn, count);
    }

    fn submit(&mut self, op: BlockOp, lsn: u64, count: u64) {
        let id = self.next_id;
        self.next_id += 1;
        let mut data = Vec::new();
        let pending = match op {
            BlockOp::Read => Pending::Read {
                lsn,
                before: self.reference.acked_at(lsn, count),
            },
            BlockOp::Write => {
                let (d, stamp) = self.reference.issue_write(lsn, count);
                data = d;
                Pending::Write { lsn, count, stamp }
            }
            BlockOp::Trim => Pending::Trim {
                lsn,
                count,
                stamp: self.reference.issue_trim(lsn, count),
            },
            BlockOp::Flush => Pending::Flush,
        };
        self.inflight.insert(id, pending);
        self.m.submitted += 1;
        // With Flexible Data Placement, writes spread over the placement handles.
        crate::testing::submit_placed_workload(
            &mut self.m.dev,
            BlockRequest {
                id,
                op,
                offset_bytes: lsn * SECTOR_BYTES,
                len_bytes: if op == BlockOp::Flush {
                    0
                } else {
                    count * SECTOR_BYTES
                },
                data,
            },
            self.sim.queue(),
        );
    }

    fn drain(&mut self, out: &mut CrashOutcome) {
        self.m.collect();
        let done = std::mem::take(&mut self.m.done);
        let sector = SECTOR_BYTES as usize;
        for c in done {
            let p = self
                .inflight
                .remove(&c.id)
                .expect("completion of a known request");
            if let Err(e) = &c.result {
                if *e == IoError::NoSpace {
                    // Not a durability violation, but on a device without failing blocks it
                    // means GC could not reclaim space that exists.
                    out.no_space_errors += 1;
                    continue;
                }
                if *e == IoError::Uncorrectable {
                    out.uncorrectable_errors += 1;
                    if let Pending::CrashRead { lsn, count } = p {
                        for s in lsn..lsn + count {
                            self.reference.unreadable_after_crash(s);
                        }
                    }
                    continue;
                }
                out.io_errors += 1;
                note(out, || format!("{:?} {}: {e}", c.op, c.id));
                if let Pending::CrashRead { count, .. } = p {
                    // Sectors a post-cut read could not return count as wrong reads too.
                    if *e == IoError::Integrity {
                        out.wrong_data_reads += count;
                    }
                }
                continue;
            }
            out.ops_completed += 1;
            match p {
                Pending::Read { lsn, before } => {
                    for (i, at) in before.iter().enumerate() {
                        let s = lsn + i as u64;
                        let data = &c.data[i * sector..(i + 1) * sector];
                        if let Err(v) = self.reference.check_read(s, std::slice::from_ref(at), data)
                        {
                            out.wrong_data_reads += 1;
                            note(out, || format!("read {}: {v:?}", c.id));
                        } else {
                            self.reference.settle_unread(s, data);
                        }
                    }
                }
                Pending::Write { lsn, count, stamp } => self.reference.ack_write(lsn, count, stamp),
                Pending::Trim { lsn, count, stamp } => self.reference.ack_trim(lsn, count, stamp),
                Pending::Flush => {}
                Pending::CrashRead { lsn, count } => {
                    for i in 0..count {
                        let s = lsn + i;
                        let data = &c.data[i as usize * sector..(i as usize + 1) * sector];
                        let acked = self.reference.is_acked_write(s);
                        out.flushed_writes_checked += u64::from(acked);
                        if let Err(v) = self.reference.check_after_crash(s, data) {
                            // Zeros or an older version of the sector: the write was lost.
                            // Anything else is data that should never be read.
                            let lost = acked
                                && match v.got {
                                    SectorContent::Zeros => true,
                                    SectorContent::Version { lsn, stamp } => {
                                        lsn == s && stamp < self.reference.acked_stamp(s)
                                    }
                                    SectorContent::Garbage => false,
                                };
                            if lost {
                                out.lost_flushed_writes += 1;
                            } else {
                                out.wrong_data_reads += 1;
                            }
                            note(out, || format!("after cut: {v:?}"));
                        }
                        self.reference.settle_after_crash(s, data);
                    }
                }
            }
        }
    }

    /// Power is cut now: the firmware and every event are dropped, the flash tears what it
    /// was doing, and the device is recovered from what the flash holds.
    fn crash(
        self,
        ftl: &FtlConfig,
        out: &mut CrashOutcome,
    ) -> Result<(Self, RecoveryReport, PowerCutReport), CrashError> {
        let Driver {
            cfg,
            m: UnderTest { dev, .. },
            sim,
            reference,
            next_id,
            ..
        } = self;
        // What FDP's counters may come back as: those the newest checkpoint holds.
        let (saved, started) = dev.fdp_stats_durable();
        let durable = (saved.cloned(), started.to_vec());
        let fdp_on = dev.config().fdp.enabled;
        let mut bb = dev.into_backbone();
        // The queue dies with the power; the RNG (the run's one stream) carries on.
        let mut rng = sim.into_rng();
        let cut = bb.power_cut(&mut rng);
        let mut sim = Sim::with_rng(rng);
        let (dev, report) = recover(bb, ftl, sim.queue())?;
        if fdp_on && !fdp_logs_survived(&dev, &durable) {
            out.fdp_logs_lost += 1;
            note(out, || {
                format!(
                    "FDP counters after recovery {:?}, checkpointed {durable:?}",
                    dev.stats().fdp
                )
            });
        }
        let d = Driver {
            cfg,
            m: UnderTest::new(dev, next_id),
            sim,
            reference,
            // Requests in flight at the cut were never acknowledged: forgotten.
            inflight: BTreeMap::new(),
            next_id,
            prefill_next: 0,
            watchdog: Watchdog::new(SimDuration::from_ms(STALL_MS)),
        };
        Ok((d, report, cut))
    }

    /// Reads every sector of the recovered device and checks it against what was
    /// acknowledged before the cut.
    fn verify_after_crash(&mut self, out: &mut CrashOutcome) -> Result<(), CrashError> {
        let sectors = self.reference.sectors();
        let chunk = self.cfg.max_request_sectors.max(1);
        let mut lsn = 0;
        while lsn < sectors || !self.inflight.is_empty() {
            if lsn < sectors && self.inflight.len() < self.cfg.queue_depth {
                let count = chunk.min(sectors - lsn);
                let id = self.next_id;
                self.next_id += 1;
                self.inflight.insert(id, Pending::CrashRead { lsn, count });
                self.m.submitted += 1;
                self.m.dev.submit(
                    BlockRequest {
                        id,
                        op: BlockOp::Read,
                        offset_bytes: lsn * SECTOR_BYTES,
                        len_bytes: count * SECTOR_BYTES,
                        data: Vec::new(),
                    },
                    self.sim.queue(),
                );
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

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Whether the recovered device's FDP counters are those a checkpoint saved (the newest
/// complete one, or the one being written if the cut found it whole; the initial ones if
/// none was). Events dropped from a full log may differ: recovery logs its own events.
fn fdp_logs_survived(
    dev: &Device,
    durable: &(
        Option<crate::device::FdpStats>,
        Vec<crate::device::FdpStats>,
    ),
) -> bool {
    let Some(now) = dev.stats().fdp.clone() else {
        return false;
    };
    let comparable = |s: &crate::device::FdpStats| crate::device::FdpStats {
        events_dropped: 0,
        ..s.clone()
    };
    let initial = crate::device::FdpStats {
        handles: vec![Default::default(); now.handles.len()],
        ..Default::default()
    };
    let saved = durable.0.clone().unwrap_or(initial);
    std::iter::once(&saved)
        .chain(&durable.1)
        .any(|s| comparable(&now) == comparable(s))
}

fn note(out: &mut CrashOutcome, msg: impl FnOnce() -> String) {
    if out.first_violation.is_none() {
        out.first_violation = Some(msg());
    }
}

#[cfg(test)]
mod tests;
