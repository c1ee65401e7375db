//! The file system's power-cut crash test. For one seed: format an FTL device (functional,
//! in memory) behind the drive's DRAM write buffer (`CrashTestConfig::write_cache`; disabled,
//! it passes everything through), mkfs, run a random mix of file-system operations (create,
//! write, append, truncate, rename, unlink, mkdir, rmdir, fsync, sync; files large enough
//! that the FTL's GC and checkpoints run), cut power at an event chosen from the seed — the
//! buffer's contents are lost with it, or with power-loss protection destaged within the
//! hold-up — recover the FTL, mount (journal replay), run fsck (must be clean), and compare
//! every directory and every byte with the reference model (`reference.rs`); then keep
//! running on the recovered device and cut again.
//!
//! Cut `k` of seed `s` is aimed at phase `(s + k) % 4` — FS data writes, FS journal or
//! metadata writes, FTL GC, FTL checkpoint — and lands at the first event after a random
//! operation at which that work is executing on the flash (or at the end of the run if it
//! never does; the cut is then labelled with what was executing). Behind an enabled write
//! buffer the FS's writes complete in DRAM, so the FS phases aim at the FS's writes and
//! FLUSHes themselves rather than at programs, and such a cut lands at a random one (up to
//! `CUT_SKIP_MAX` later) of the events at which its phase executes, so that cuts fall
//! inside commits and flushes, not only at their first write. One `SimRng` seeded from the
//! seed drives everything, so a seed replays exactly. Violations are counted; a panic is
//! caught and reported as the seed's error.
//!
//! Here the configuration, the outcome and the run of one seed; `actions` holds the random
//! operations, `check` the cut, the recovery and the comparison with `reference`.

mod actions;
mod check;
pub mod reference;

use crate::config::FsConfig;
use crate::error::FsError;
use crate::exec::{Fs, IoKind};
use crate::host::{FsHost, HostError, HostEvent, Machine};
use crate::ops::{FsOp, FsReply};
use crate::types::Caller;
use crate::FormatOptions;
use nearflash_flash::{FlashConfig, Geometry, MemoryStore};
use nearflash_ftl::recovery::RecoveryError;
use nearflash_ftl::{Device, Event, FlashWork, FtlConfig};
use nearflash_sim::{EventQueue, Model, Schedule, Sim, SimDuration, SimRng, SimTime};
use nearflash_wcache::{WcEvent, WriteCache, WriteCacheConfig};
use reference::{Reference, Tree};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use thiserror::Error;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CrashTestConfig {
    /// File-system actions between two cuts (each one to three operations).
    pub actions_per_cut: usize,
    pub cuts_per_seed: usize,
    /// Largest ordinary write.
    pub write_bytes_max: u64,
    /// One write in ten is this large (drives the FTL into GC).
    pub big_write_bytes: u64,
    /// The file system's configuration (a small cache, so that evictions happen).
    pub fs: FsConfig,
    /// The drive's DRAM write buffer in front of the FTL (a preset's `[write_cache]`);
    /// disabled by default: the FS writes to the FTL directly.
    pub write_cache: WriteCacheConfig,
}

impl Default for CrashTestConfig {
    fn default() -> Self {
        CrashTestConfig {
            actions_per_cut: 80,
            cuts_per_seed: 2,
            write_bytes_max: 48 << 10,
            big_write_bytes: 384 << 10,
            fs: FsConfig {
                cache_bytes: 512 << 10,
                ..FsConfig::default()
            },
            write_cache: WriteCacheConfig::default(),
        }
    }
}

/// The drive the FS runs on: the FTL behind its write buffer.
pub type Drive = WriteCache<Device>;

/// fsck problems a violation message names (the count says how many more there were).
const FSCK_PROBLEMS_SHOWN: usize = 3;

/// Behind an enabled write buffer, a cut lands at a random one of the first `CUT_SKIP_MAX`
/// events at which its phase executes (a commit's journal writes and FLUSH span dozens).
const CUT_SKIP_MAX: u64 = 64;

fn drive_event(e: Event) -> HostEvent<WcEvent<Event>> {
    HostEvent::Dev(WcEvent::Device(e))
}

/// What was executing when power was cut.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CutPhase {
    /// A file-data block write of the FS being programmed.
    FsData,
    /// A journal record or a checkpointed metadata block being programmed.
    FsMetadata,
    /// FTL garbage collection (a copy or an erase).
    FtlGc,
    /// An FTL mapping checkpoint being programmed.
    FtlCheckpoint,
    /// None of the above.
    #[default]
    Idle,
}

pub const TARGETED_PHASES: [CutPhase; 4] = [
    CutPhase::FsData,
    CutPhase::FsMetadata,
    CutPhase::FtlGc,
    CutPhase::FtlCheckpoint,
];

impl CutPhase {
    fn active(self, fs: &Fs, drive: &Drive) -> bool {
        let io = fs.io_in_flight();
        let ftl = drive.device();
        let work = ftl.flash_work();
        // The FS's writes reach the flash while the FTL programs them; behind a write buffer
        // they complete in DRAM, and what the buffer holds is at stake whenever they (or a
        // FLUSH) are in flight.
        let landing = drive.config().enabled || work.contains(&FlashWork::HostProgram);
        match self {
            CutPhase::FsData => landing && io.contains(&IoKind::DataWrite),
            CutPhase::FsMetadata => {
                landing
                    && (io.contains(&IoKind::JournalWrite)
                        || io.contains(&IoKind::MetaWrite)
                        || io.contains(&IoKind::Flush))
            }
            CutPhase::FtlGc => {
                work.contains(&FlashWork::GcProgram)
                    || work.contains(&FlashWork::GcRead)
                    || (ftl.gc_active() && work.contains(&FlashWork::Erase))
            }
            CutPhase::FtlCheckpoint => work.contains(&FlashWork::CheckpointProgram),
            CutPhase::Idle => false,
        }
    }

    fn classify(host: &FsHost<Drive>, target: CutPhase) -> CutPhase {
        let (fs, drive) = (host.fs(), host.dev());
        if target.active(fs, drive) {
            return target;
        }
        [
            CutPhase::FtlCheckpoint,
            CutPhase::FtlGc,
            CutPhase::FsMetadata,
            CutPhase::FsData,
        ]
        .into_iter()
        .find(|p| p.active(fs, drive))
        .unwrap_or(CutPhase::Idle)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CrashOutcome {
    pub seed: u64,
    /// Where each cut landed.
    pub cuts: Vec<CutPhase>,
    /// Files whose content was durable (not written since a commit) checked after cuts.
    pub durable_files_checked: u64,
    /// Committed files or directories missing, or with other sizes or bytes.
    pub lost: u64,
    /// Bytes never written there, or names that should not exist.
    pub wrong: u64,
    /// Problems fsck found after recovery.
    pub fsck_problems: u64,
    /// Operations that failed with anything but `NoSpace`.
    pub unexpected_errors: u64,
    pub no_space_errors: u64,
    pub ops_completed: u64,
    /// The drive had an enabled write buffer.
    pub write_buffer: bool,
    /// Cuts that found the write buffer holding data, and the units it held (without PLP
    /// they are lost with the power).
    pub cuts_with_buffered_data: u64,
    pub buffered_units_at_cuts: u64,
    /// FLUSH requests and FUA writes the FS sent before the cuts.
    pub fs_flushes: u64,
    pub fs_fua_writes: u64,
    pub first_violation: Option<String>,
    pub error: Option<String>,
}

impl CrashOutcome {
    pub fn passed(&self) -> bool {
        self.lost == 0
            && self.wrong == 0
            && self.fsck_problems == 0
            && self.unexpected_errors == 0
            && self.error.is_none()
    }

    fn note(&mut self, msg: impl FnOnce() -> String) {
        if self.first_violation.is_none() {
            self.first_violation = Some(msg());
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CrashSummary {
    pub seeds: u64,
    pub passed: u64,
    pub failed: u64,
    pub cuts_by_phase: BTreeMap<CutPhase, u64>,
    pub durable_files_checked: u64,
    pub lost: u64,
    pub wrong: u64,
    pub fsck_problems: u64,
    pub unexpected_errors: u64,
    pub no_space_errors: u64,
    pub ops_completed: u64,
    /// Seeds run over an enabled write buffer, and what its cuts found (see `CrashOutcome`).
    pub write_buffer_seeds: u64,
    pub cuts_with_buffered_data: u64,
    pub buffered_units_at_cuts: u64,
    pub fs_flushes: u64,
    pub fs_fua_writes: u64,
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
        for p in &o.cuts {
            *s.cuts_by_phase.entry(*p).or_default() += 1;
        }
        s.durable_files_checked += o.durable_files_checked;
        s.lost += o.lost;
        s.wrong += o.wrong;
        s.fsck_problems += o.fsck_problems;
        s.unexpected_errors += o.unexpected_errors;
        s.no_space_errors += o.no_space_errors;
        s.ops_completed += o.ops_completed;
        s.write_buffer_seeds += u64::from(o.write_buffer);
        s.cuts_with_buffered_data += o.cuts_with_buffered_data;
        s.buffered_units_at_cuts += o.buffered_units_at_cuts;
        s.fs_flushes += o.fs_flushes;
        s.fs_fua_writes += o.fs_fua_writes;
    }
    s
}

impl fmt::Display for CrashSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "cuts by phase:")?;
        for (p, n) in &self.cuts_by_phase {
            writeln!(f, "  {p:?}: {n}")?;
        }
        writeln!(
            f,
            "operations completed: {}; durable files checked: {}; lost: {}; wrong: {}; fsck problems: {}; unexpected errors: {}; no-space errors: {}",
            self.ops_completed,
            self.durable_files_checked,
            self.lost,
            self.wrong,
            self.fsck_problems,
            self.unexpected_errors,
            self.no_space_errors
        )?;
        if self.write_buffer_seeds > 0 {
            let cuts: u64 = self.cuts_by_phase.values().sum();
            writeln!(
                f,
                "write buffer: {} of {cuts} cuts found it holding data ({} units); the FS sent {} FLUSHes and {} FUA writes",
                self.cuts_with_buffered_data,
                self.buffered_units_at_cuts,
                self.fs_flushes,
                self.fs_fua_writes
            )?;
        }
        if !self.failed_seeds.is_empty() {
            writeln!(f, "failed seeds: {:?}", self.failed_seeds)?;
        }
        write!(f, "{} passed, {} failed", self.passed, self.failed)
    }
}

#[derive(Debug, Error)]
enum CrashError {
    #[error("configuration: {0}")]
    Config(#[from] nearflash_flash::ConfigError),
    #[error("configuration: {0}")]
    WriteCache(#[from] nearflash_wcache::ConfigError),
    #[error("FTL recovery failed: {0}")]
    Recovery(#[from] RecoveryError),
    #[error("{0}")]
    Host(#[from] HostError),
    #[error("the event queue ran dry with an operation in flight")]
    RanDry,
    #[error("an operation made no progress for {STALL_S} s of simulated time (at {0})")]
    Stalled(SimTime),
}

impl From<FsError> for CrashError {
    fn from(e: FsError) -> Self {
        CrashError::Host(HostError::Fs(e))
    }
}

/// Simulated time an operation may take before the seed is declared stuck.
const STALL_S: u64 = 10;
/// How long the background (GC, checkpoints) may run after the actions before a cut that
/// never found its target is taken anyway.
const TAIL_MS: u64 = 30;

/// Runs one seed; never panics (a panic becomes the outcome's `error`).
pub fn run_seed(
    flash: &FlashConfig,
    ftl: &FtlConfig,
    cfg: &CrashTestConfig,
    seed: u64,
) -> CrashOutcome {
    let mut out = CrashOutcome {
        seed,
        ..CrashOutcome::default()
    };
    let run = catch_unwind(AssertUnwindSafe(|| {
        run_seed_inner(flash, ftl, cfg, seed, &mut out)
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

fn run_seed_inner(
    flash: &FlashConfig,
    ftl: &FtlConfig,
    cfg: &CrashTestConfig,
    seed: u64,
    out: &mut CrashOutcome,
) -> Result<(), CrashError> {
    let mut rng = SimRng::seed_from_u64(seed);
    let mut sim = Sim::new(rng.next_u64());
    let pages = Geometry::from_config(flash).page_count();
    let store = Box::new(MemoryStore::new(pages, flash.page_size_bytes));
    let dev = Device::format(flash, ftl, store, &mut sim.queue().map(drive_event))?;
    let drive = WriteCache::new(cfg.write_cache.clone(), dev)?;
    let mut host = FsHost::new(sim, drive, cfg.fs.clone())?;
    host.run(Caller::ROOT, FsOp::Format(FormatOptions::default()))?;
    out.write_buffer = cfg.write_cache.enabled;
    let mut d = Driver {
        cfg,
        host,
        rng,
        r: Reference::default(),
        names: 0,
        cut_skip: 0,
    };
    for k in 0..cfg.cuts_per_seed {
        let target = TARGETED_PHASES[((seed + k as u64) % 4) as usize];
        let cut_after = d.rng.below(cfg.actions_per_cut.max(1) as u64) as usize;
        let (phase, after) = d.run_until_cut(out, target, cut_after)?;
        out.cuts.push(phase);
        d = d.crash(ftl, out)?;
        if !d.verify(out, after)? {
            return Ok(());
        }
    }
    Ok(())
}

/// How an operation ended.
enum Flow {
    Done(Result<FsReply, FsError>),
    Cut,
}

struct Driver<'a> {
    cfg: &'a CrashTestConfig,
    host: FsHost<Drive>,
    rng: SimRng,
    r: Reference,
    names: u64,
    /// Events at which the armed phase executes still to let pass before the cut.
    cut_skip: u64,
}

/// A cut was taken: the phase, and the state if the operation in flight had completed.
type CutAt = (CutPhase, Option<Tree>);

/// Whether power is cut now: the armed phase executes, and no more of its events are to be
/// let pass (`cut_skip` counts down the events of the phase still let through).
fn cut_now(cut_skip: &mut u64, armed: Option<CutPhase>, m: &Machine<Drive>) -> bool {
    if !armed.is_some_and(|t| t.active(&m.fs, &m.dev)) {
        return false;
    }
    if *cut_skip == 0 {
        return true;
    }
    *cut_skip -= 1;
    false
}

impl Driver<'_> {
    fn run_until_cut(
        &mut self,
        out: &mut CrashOutcome,
        target: CutPhase,
        cut_after: usize,
    ) -> Result<CutAt, CrashError> {
        let fs_phase = matches!(target, CutPhase::FsData | CutPhase::FsMetadata);
        self.cut_skip = if self.cfg.write_cache.enabled && fs_phase {
            self.rng.below(CUT_SKIP_MAX)
        } else {
            0
        };
        for i in 0..self.cfg.actions_per_cut {
            let armed = (i >= cut_after).then_some(target);
            if let Some(after) = self.action(out, armed)? {
                return Ok((target, Some(after)));
            }
        }
        // The target never ran during the actions: let the background run a while.
        let until = self.host.now() + SimDuration::from_ms(TAIL_MS);
        let (cut_skip, mut cut) = (&mut self.cut_skip, false);
        self.host.run_until_either(|m| {
            m.now() >= until || {
                cut = cut_now(cut_skip, Some(target), m);
                cut
            }
        });
        if cut {
            return Ok((target, None));
        }
        Ok((CutPhase::classify(&self.host, target), None))
    }

    /// Runs one operation; with `armed`, returns `Cut` at the first event at which the
    /// target phase executes. The reference's `current` is updated by the caller.
    fn op(&mut self, op: FsOp, armed: Option<CutPhase>) -> Result<Flow, CrashError> {
        let syncs = self.host.fs().stats().syncs;
        let start = self.host.now();
        let id = self.host.submit(Caller::ROOT, op)?;
        let stall_at = start + SimDuration::from_ns(STALL_S * 1_000_000_000);
        let (cut_skip, mut cut) = (&mut self.cut_skip, false);
        // Until the operation finishes, the armed phase executes, or too long passed.
        let reached = self.host.run_until_either(|m| {
            m.is_finished(id)
                || {
                    cut = cut_now(cut_skip, armed, m);
                    cut
                }
                || m.now() > stall_at
        });
        if let Some(c) = self.host.take_completion(id) {
            if self.host.fs().stats().syncs != syncs {
                self.r.commit_pending = true;
            }
            return Ok(Flow::Done(c.result));
        }
        if cut {
            return Ok(Flow::Cut);
        }
        if !reached {
            return Err(CrashError::RanDry);
        }
        Err(CrashError::Stalled(self.host.now()))
    }
}

/// The drive alone after a power loss with PLP: the host is gone (its CPU timer never fires
/// again), the buffer destages.
struct Holdup<'a>(&'a mut Drive);

impl Model for Holdup<'_> {
    type Event = HostEvent<WcEvent<Event>>;

    fn handle(&mut self, ev: Self::Event, q: &mut EventQueue<Self::Event>, rng: &mut SimRng) {
        if let HostEvent::Dev(e) = ev {
            self.0.handle_event(e, &mut q.map(HostEvent::Dev), rng);
        }
    }
}

#[cfg(test)]
mod tests;
