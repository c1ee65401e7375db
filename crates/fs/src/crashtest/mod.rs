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

pub mod reference;

use crate::config::FsConfig;
use crate::error::FsError;
use crate::exec::{Fs, IoKind};
use crate::fsck::FsckReport;
use crate::host::{FsHost, HostError, HostEvent, Machine};
use crate::ops::{FsOp, FsReply};
use crate::types::{Caller, FileKind, OpenFlags};
use crate::FormatOptions;
use nearflash_flash::{FlashConfig, Geometry, MemoryStore};
use nearflash_ftl::recovery::{recover, RecoveryError};
use nearflash_ftl::{Device, Event, FlashWork, FtlConfig};
use nearflash_sim::{EventQueue, Model, Schedule, Sim, SimDuration, SimRng, SimTime};
use nearflash_wcache::{WcEvent, WriteCache, WriteCacheConfig};
use reference::{FileState, Reference, Tree};
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

    fn fresh_name(&mut self, prefix: &str) -> String {
        self.names += 1;
        format!("{prefix}{}", self.names)
    }

    fn pick<'t>(&mut self, items: &'t [String]) -> Option<&'t String> {
        (!items.is_empty()).then(|| &items[self.rng.below(items.len() as u64) as usize])
    }

    fn random_bytes(&mut self, n: u64) -> Vec<u8> {
        let mut v = vec![0u8; n as usize];
        self.rng.fill_bytes(&mut v);
        v
    }

    /// Counts an operation's result; true if it succeeded.
    fn settle_result(
        &mut self,
        out: &mut CrashOutcome,
        what: &str,
        r: &Result<FsReply, FsError>,
    ) -> bool {
        match r {
            Ok(_) => {
                out.ops_completed += 1;
                true
            }
            Err(FsError::NoSpace(_)) => {
                out.no_space_errors += 1;
                false
            }
            Err(e) => {
                out.unexpected_errors += 1;
                out.note(|| format!("{what}: {e}"));
                false
            }
        }
    }

    /// One random action. Returns `Some(state after the operation in flight)` if power was
    /// cut during it.
    fn action(
        &mut self,
        out: &mut CrashOutcome,
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let files: Vec<String> = self.r.current.files.keys().cloned().collect();
        let mut dirs: Vec<String> = self.r.current.dirs.iter().cloned().collect();
        dirs.push(String::new());
        let free = self.host.fs().free_counts().map_or(0, |(b, _)| b);
        let crowded = free < 700;
        let roll = self.rng.below(100);
        let dir = self.pick(&dirs).cloned().unwrap_or_default();
        match roll {
            _ if crowded && roll < 40 && !files.is_empty() => {
                let f = self.pick(&files).cloned().expect("files");
                self.unlink(out, &f, armed)
            }
            0..=19 => {
                let path = format!("{dir}/{}", self.fresh_name("f"));
                self.create(out, &path, armed)
            }
            20..=49 if !files.is_empty() => {
                let f = self.pick(&files).cloned().expect("files");
                let append = roll >= 42;
                self.write(out, &f, append, armed)
            }
            50..=57 if !files.is_empty() => {
                let f = self.pick(&files).cloned().expect("files");
                self.truncate(out, f, armed)
            }
            58..=65 if !files.is_empty() => {
                let f = self.pick(&files).cloned().expect("files");
                self.rename_file(out, f, &files, &dir, armed)
            }
            66..=69 if dirs.len() > 1 => self.rename_dir(out, &dirs, armed),
            70..=75 if !files.is_empty() => {
                let f = self.pick(&files).cloned().expect("files");
                self.unlink(out, &f, armed)
            }
            76..=80 if dirs.len() < 12 => {
                let path = format!("{dir}/{}", self.fresh_name("d"));
                let mut after = self.r.current.clone();
                after.dirs.insert(path.clone());
                self.simple(out, FsOp::Mkdir { path, perm: 0o755 }, after, armed)
            }
            81..=83 if dirs.len() > 1 => self.rmdir(out, &dirs, armed),
            84..=95 if !files.is_empty() => {
                let f = self.pick(&files).cloned().expect("files");
                self.fsync(out, &f, armed)
            }
            _ => {
                let after = self.r.current.clone();
                self.simple(out, FsOp::Sync, after, armed)
            }
        }
    }

    /// Truncates (or extends) file `f` to a random size up to 8 KiB past its end.
    fn truncate(
        &mut self,
        out: &mut CrashOutcome,
        f: String,
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let size = self.r.current.files[&f].data.len() as u64;
        let to = self.rng.below(size + 8192);
        let after = {
            let mut t = self.r.current.clone();
            t.files
                .get_mut(&f)
                .expect("file")
                .data
                .resize(to as usize, 0);
            t
        };
        self.simple(
            out,
            FsOp::Truncate {
                path: f,
                size_bytes: to,
            },
            after,
            armed,
        )
    }

    /// Renames file `f` over another of `files` (40% of the time) or to a fresh name in
    /// `dir`.
    fn rename_file(
        &mut self,
        out: &mut CrashOutcome,
        f: String,
        files: &[String],
        dir: &str,
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let to = if self.rng.chance(0.4) {
            self.pick(files).cloned().expect("files")
        } else {
            format!("{dir}/{}", self.fresh_name("r"))
        };
        let mut after = self.r.current.clone();
        after.rename(&f, &to);
        self.simple(out, FsOp::Rename { from: f, to }, after, armed)
    }

    /// Renames a random directory of `dirs` (the last is the root) under one that is not
    /// below itself.
    fn rename_dir(
        &mut self,
        out: &mut CrashOutcome,
        dirs: &[String],
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let from = self.pick(&dirs[..dirs.len() - 1]).cloned().expect("dirs");
        let parent = dirs
            .iter()
            .filter(|d| **d != from && !d.starts_with(&format!("{from}/")))
            .cloned()
            .collect::<Vec<_>>();
        let parent = self.pick(&parent).cloned().unwrap_or_default();
        let to = format!("{parent}/{}", self.fresh_name("m"));
        let mut after = self.r.current.clone();
        after.rename(&from, &to);
        self.simple(out, FsOp::Rename { from, to }, after, armed)
    }

    /// Removes a random directory of `dirs` (the last is the root), if it is empty.
    fn rmdir(
        &mut self,
        out: &mut CrashOutcome,
        dirs: &[String],
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let d = self.pick(&dirs[..dirs.len() - 1]).cloned().expect("dirs");
        if self.r.current.children(&d) > 0 {
            return Ok(None);
        }
        let mut after = self.r.current.clone();
        after.dirs.remove(&d);
        self.simple(out, FsOp::Rmdir(d), after, armed)
    }

    /// A single operation whose success turns the current state into `after`.
    fn simple(
        &mut self,
        out: &mut CrashOutcome,
        op: FsOp,
        after: Tree,
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let what = format!("{op:?}");
        match self.op(op, armed)? {
            Flow::Cut => Ok(Some(after)),
            Flow::Done(r) => {
                if self.settle_result(out, &what, &r) {
                    self.r.current = after;
                }
                self.r.settle_commit();
                Ok(None)
            }
        }
    }

    fn open(
        &mut self,
        out: &mut CrashOutcome,
        path: &str,
        flags: OpenFlags,
        armed: Option<CutPhase>,
        after: Tree,
    ) -> Result<Result<Option<crate::Fh>, Tree>, CrashError> {
        let op = FsOp::Open {
            path: path.to_string(),
            flags,
            perm: 0o644,
        };
        match self.op(op, armed)? {
            Flow::Cut => Ok(Err(after)),
            Flow::Done(r) => {
                let ok = self.settle_result(out, &format!("open {path}"), &r);
                if ok {
                    self.r.current = after;
                }
                self.r.settle_commit();
                Ok(Ok(match r {
                    Ok(FsReply::Opened(fh)) => Some(fh),
                    _ => None,
                }))
            }
        }
    }

    fn close(
        &mut self,
        out: &mut CrashOutcome,
        fh: crate::Fh,
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let after = self.r.current.clone();
        self.simple(out, FsOp::Close(fh), after, armed)
    }

    fn create(
        &mut self,
        out: &mut CrashOutcome,
        path: &str,
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let id = self.r.new_id();
        let mut after = self.r.current.clone();
        after.files.insert(
            path.to_string(),
            FileState {
                id,
                data: Vec::new(),
            },
        );
        let flags = OpenFlags {
            write: true,
            create: true,
            excl: true,
            ..OpenFlags::default()
        };
        let fh = match self.open(out, path, flags, armed, after)? {
            Err(after) => return Ok(Some(after)),
            Ok(None) => return Ok(None),
            Ok(Some(fh)) => fh,
        };
        if let Some(t) = self.write_at(out, fh, path, 0, armed)? {
            return Ok(Some(t));
        }
        self.close(out, fh, armed)
    }

    fn write(
        &mut self,
        out: &mut CrashOutcome,
        path: &str,
        append: bool,
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let flags = OpenFlags {
            write: true,
            append,
            ..OpenFlags::default()
        };
        let after = self.r.current.clone();
        let fh = match self.open(out, path, flags, armed, after)? {
            Err(after) => return Ok(Some(after)),
            Ok(None) => return Ok(None),
            Ok(Some(fh)) => fh,
        };
        let size = self.r.current.files[path].data.len() as u64;
        let at = if append {
            size
        } else {
            self.rng.below(size + 4096)
        };
        if let Some(t) = self.write_at(out, fh, path, at, armed)? {
            return Ok(Some(t));
        }
        self.close(out, fh, armed)
    }

    fn write_at(
        &mut self,
        out: &mut CrashOutcome,
        fh: crate::Fh,
        path: &str,
        at: u64,
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let len = if self.rng.chance(0.1) {
            self.cfg.big_write_bytes
        } else {
            1 + self.rng.below(self.cfg.write_bytes_max)
        };
        let data = self.random_bytes(len);
        let id = self.r.current.files[path].id;
        self.r.note_write(id, at, &data);
        let mut after = self.r.current.clone();
        after.write(path, at, &data);
        let op = FsOp::Write {
            fh,
            offset_bytes: at,
            data: data.clone(),
        };
        match self.op(op, armed)? {
            Flow::Cut => Ok(Some(after)),
            Flow::Done(r) => {
                if self.settle_result(out, &format!("write {path}"), &r) {
                    let Ok(FsReply::Written(n)) = r else {
                        unreachable!("a write answers Written")
                    };
                    self.r.current.write(path, at, &data[..n as usize]);
                }
                self.r.settle_commit();
                Ok(None)
            }
        }
    }

    fn unlink(
        &mut self,
        out: &mut CrashOutcome,
        path: &str,
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let mut after = self.r.current.clone();
        after.files.remove(path);
        self.simple(out, FsOp::Unlink(path.to_string()), after, armed)
    }

    fn fsync(
        &mut self,
        out: &mut CrashOutcome,
        path: &str,
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let after = self.r.current.clone();
        let fh = match self.open(out, path, OpenFlags::WRITE, armed, after.clone())? {
            Err(after) => return Ok(Some(after)),
            Ok(None) => return Ok(None),
            Ok(Some(fh)) => fh,
        };
        if let Some(t) = self.simple(out, FsOp::Fsync(fh), after, armed)? {
            return Ok(Some(t));
        }
        self.close(out, fh, armed)
    }

    /// Power is cut now: the FS's memory is dropped; the write buffer's contents are lost
    /// (with power-loss protection it first destages for at most its hold-up); every pending
    /// event is dropped, the flash tears what it was doing, the FTL recovers from the flash
    /// behind a fresh, empty buffer, and the FS is mounted.
    fn crash(self, ftl: &FtlConfig, out: &mut CrashOutcome) -> Result<Self, CrashError> {
        let Driver {
            cfg,
            host,
            mut rng,
            r,
            names,
            ..
        } = self;
        let stats = host.fs().stats();
        out.fs_flushes += stats.block_flushes;
        out.fs_fua_writes += stats.block_fua_writes;
        let (mut sim, mut drive) = host.into_parts();
        let buffered = drive.occupied_units();
        out.cuts_with_buffered_data += u64::from(buffered > 0);
        out.buffered_units_at_cuts += buffered;
        if let Some(deadline) = drive.power_loss(&mut sim.queue().map(HostEvent::Dev)) {
            let mut holdup = Holdup(&mut drive);
            sim.run_until_by(deadline, &mut holdup, |h| h.0.holdup_done());
        }
        let mut bb = drive.into_device().into_backbone();
        bb.power_cut(&mut rng);
        let mut sim = Sim::new(rng.next_u64());
        let (dev, _) = recover(bb, ftl, &mut sim.queue().map(drive_event))?;
        let drive = WriteCache::new(cfg.write_cache.clone(), dev)?;
        let mut host = FsHost::new(sim, drive, cfg.fs.clone())?;
        host.run(Caller::ROOT, FsOp::Mount)?;
        match host.run(Caller::ROOT, FsOp::Fsck)? {
            FsReply::Fsck(FsckReport { problems, .. }) if !problems.is_empty() => {
                out.fsck_problems += problems.len() as u64;
                out.note(|| {
                    let shown: Vec<String> = problems
                        .iter()
                        .take(FSCK_PROBLEMS_SHOWN)
                        .map(|p| format!("{}: {}", p.code, p.detail))
                        .collect();
                    let more = problems.len().saturating_sub(FSCK_PROBLEMS_SHOWN);
                    let tail = if more > 0 {
                        format!("; and {more} more")
                    } else {
                        String::new()
                    };
                    format!(
                        "fsck after a cut: {} problem(s): {}{tail}",
                        problems.len(),
                        shown.join("; ")
                    )
                });
            }
            _ => {}
        }
        Ok(Driver {
            cfg,
            host,
            rng,
            r,
            names,
            cut_skip: 0,
        })
    }

    /// Reads the whole tree back and checks it; false if the seed failed.
    fn verify(&mut self, out: &mut CrashOutcome, after: Option<Tree>) -> Result<bool, CrashError> {
        let got = self.read_tree()?;
        let committed = self.r.committed.clone();
        let v = self.r.check(&committed, &got);
        if v.ok() {
            out.durable_files_checked += v.durable_files_checked;
            self.r.settle(&committed, &got);
            return Ok(true);
        }
        if let Some(after) = &after {
            let v2 = self.r.check(after, &got);
            if v2.ok() {
                out.durable_files_checked += v2.durable_files_checked;
                self.r.settle(after, &got);
                return Ok(true);
            }
        }
        out.lost += v.lost;
        out.wrong += v.wrong;
        out.note(|| v.first.clone().unwrap_or_default());
        Ok(false)
    }

    fn read_tree(&mut self) -> Result<Tree, CrashError> {
        let mut t = Tree::default();
        let mut queue = vec![String::new()];
        while let Some(dir) = queue.pop() {
            let listing = if dir.is_empty() {
                "/".to_string()
            } else {
                dir.clone()
            };
            let FsReply::Entries(entries) = self.host.run(Caller::ROOT, FsOp::Readdir(listing))?
            else {
                unreachable!("readdir answers Entries")
            };
            for e in entries.into_iter().skip(2) {
                let path = format!("{dir}/{}", e.name);
                match e.kind {
                    FileKind::Dir => {
                        t.dirs.insert(path.clone());
                        queue.push(path);
                    }
                    FileKind::File => {
                        let data = self.read_file(&path)?;
                        t.files.insert(path, FileState { id: 0, data });
                    }
                }
            }
        }
        Ok(t)
    }

    fn read_file(&mut self, path: &str) -> Result<Vec<u8>, CrashError> {
        let FsReply::Opened(fh) = self.host.run(
            Caller::ROOT,
            FsOp::Open {
                path: path.to_string(),
                flags: OpenFlags::READ,
                perm: 0,
            },
        )?
        else {
            unreachable!("open answers Opened")
        };
        let mut data = Vec::new();
        loop {
            let FsReply::Data(d) = self.host.run(
                Caller::ROOT,
                FsOp::Read {
                    fh,
                    offset_bytes: data.len() as u64,
                    len_bytes: u64::MAX,
                },
            )?
            else {
                unreachable!("read answers Data")
            };
            if d.is_empty() {
                break;
            }
            data.extend_from_slice(&d);
        }
        self.host.run(Caller::ROOT, FsOp::Close(fh))?;
        Ok(data)
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
