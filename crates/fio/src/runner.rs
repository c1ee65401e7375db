//! Runs a job file on the simulated drive: each job section becomes `numjobs` paced
//! submitters, jobs up to the next `stonewall` form a group that runs concurrently, and the
//! groups run one after another, all through the I/O benchmark's driver and host interface
//! (the NVMe front end and its link, or bare) — the very path `nearflash io` takes. Reading
//! jobs find their region written first (fio lays out a file before reading it), as
//! `nearflash io` preconditions a read pattern. A job replaying an iolog (`read_iolog`)
//! reads if its log holds reads; its region is `offset`/`size` when given, else from
//! `offset` to the end of the log's highest request (the log's offsets are device offsets).

use crate::error::{FioError, Location};
use crate::job::{Disk, JobRun, IOLOG_REQUESTS_MAX, VERIFY_BLOCKS_MAX};
use crate::jobfile::JobFile;
use crate::options::JobSpec;
use crate::replay::ReplayLog;
use crate::stats::JobStats;
use crate::value::SizeOrShare;
use nearflash_ftl::{Device, SECTOR_BYTES};
use nearflash_iobench::bench::FUNCTIONAL_MEMORY_BYTES_MAX;
use nearflash_iobench::driver::{Driver, PacedSource, PhaseResult, StoreSpec};
use nearflash_iobench::interface::{Drive, FrontEnd};
use nearflash_iobench::report::{IoReport, Measured};
use nearflash_iobench::{capacity_bytes, precondition, Interface, Stage};
use nearflash_nvme::Nvme;
use nearflash_preset::Preset;
use nearflash_sim::Fidelity;
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

/// Most queue pairs the runner gives the front end (one per concurrent job).
const QUEUE_PAIRS_MAX: u16 = 256;
/// Most jobs (clones counted) in one file.
const JOBS_MAX: usize = 4096;

/// How to run a job file.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub preset: String,
    pub overrides: Vec<String>,
    pub seed: u64,
    pub fidelity: Fidelity,
    pub interface: Interface,
    /// Fill the regions of reading jobs first; `None`: when some job reads.
    pub precondition: Option<bool>,
}

/// One job's (or one group's, with group reporting) result.
#[derive(Clone, Debug)]
pub struct JobReport {
    pub spec: Rc<JobSpec>,
    pub groupid: u32,
    /// Jobs the report covers.
    pub members: u32,
    /// fio's error number: 0, EIO (5) when requests failed, EILSEQ (84) on a verify
    /// mismatch.
    pub error: i32,
    pub stats: JobStats,
}

/// A finished run.
#[derive(Debug)]
pub struct FioRun {
    pub global_options: Vec<(String, String)>,
    /// Each job section with its group, in file order.
    pub sections: Vec<(Rc<JobSpec>, u32)>,
    /// Jobs run, clones counted.
    pub job_count: usize,
    pub jobs: Vec<JobReport>,
    pub groups: u32,
    pub disk: Disk,
    /// Simulated time from the first group's start to the last completion.
    pub sim_time_ns: u64,
    /// nearflash's own figures over the whole run (WAF, GC, flash ops, link, energy...).
    pub nearflash: serde_json::Value,
    pub notes: Vec<String>,
    /// Host-only options accepted and ignored, once each, with where first seen.
    pub ignored: Vec<(String, Location)>,
    /// `write_iolog` files and their text, for the caller to write.
    pub iologs: Vec<(PathBuf, String)>,
}

impl FioRun {
    /// A run of the `finished` jobs (`run` fills in the file's sections, options and job
    /// count).
    pub(crate) fn of_jobs(
        finished: Vec<JobRun>,
        groups: u32,
        disk: &Rc<RefCell<Disk>>,
        sim_time_ns: u64,
        nearflash: serde_json::Value,
        notes: Vec<String>,
    ) -> Result<FioRun, FioError> {
        let iologs = iologs(&finished)?;
        let disk = disk.borrow().clone();
        Ok(FioRun {
            global_options: Vec::new(),
            sections: Vec::new(),
            job_count: 0,
            jobs: reports(finished),
            groups,
            disk,
            sim_time_ns,
            nearflash,
            notes,
            ignored: Vec::new(),
            iologs,
        })
    }

    /// True when any job saw failed requests or verify mismatches.
    pub fn failed(&self) -> bool {
        self.jobs.iter().any(|j| j.error != 0)
    }
}

/// A job clone placed on the device.
pub(crate) struct Placed {
    pub(crate) spec: Rc<JobSpec>,
    pub(crate) groupid: u32,
    pub(crate) number: u64,
    pub(crate) start: u64,
    pub(crate) len: u64,
    /// The iolog the clone replays.
    pub(crate) replay: Option<Rc<ReplayLog>>,
}

impl Placed {
    /// The clone as a running job of group `g`, starting no earlier than `group_start`.
    pub(crate) fn job_run(
        &self,
        g: u32,
        seed: u64,
        group_start: nearflash_sim::SimTime,
        disk: &Rc<RefCell<Disk>>,
    ) -> JobRun {
        JobRun::new(
            self.spec.clone(),
            g,
            self.number,
            seed,
            self.start,
            self.len,
            group_start,
            disk.clone(),
            self.replay.clone(),
        )
    }

    fn reads(&self) -> bool {
        match &self.replay {
            Some(log) => log.reads(),
            None => self.spec.rw.directions()[0],
        }
    }
}

/// Each job's iologs (none for a job that draws its requests), read once per job: its
/// clones share them (a job's replay options decide how a file reads).
fn load_logs(specs: &[Rc<JobSpec>], capacity: u64) -> Result<Vec<Vec<Rc<ReplayLog>>>, FioError> {
    specs
        .iter()
        .map(|spec| {
            spec.read_iolog
                .iter()
                .map(|name| {
                    ReplayLog::load(std::path::Path::new(name), spec, capacity).map(Rc::new)
                })
                .collect()
        })
        .collect()
}

/// Runs `file` (read from `path`) as `opts` say; `progress(stage, done, total)` as
/// requests complete (`total` is `u64::MAX` when unknown).
pub fn run(
    file: &JobFile,
    path: &std::path::Path,
    opts: &RunOptions,
    progress: &mut dyn FnMut(Stage, u64, u64),
) -> Result<FioRun, FioError> {
    if file.jobs.is_empty() {
        return Err(FioError::Syntax {
            at: Location {
                file: path.to_path_buf(),
                line: 1,
            },
            reason: "no job section ([jobname]) in the file".into(),
        });
    }
    let specs: Vec<Rc<JobSpec>> = file
        .jobs
        .iter()
        .map(|s| JobSpec::from_section(s).map(Rc::new))
        .collect::<Result<_, _>>()?;
    let mut preset = Preset::load(&opts.preset, &opts.overrides)?;
    crate::zoned::check_modes(&specs, &preset)?;
    let zoned = preset.zns.enabled;
    let capacity = if zoned {
        nearflash_blockdev::BlockDevice::capacity_bytes(&crate::zoned::format(&preset)?)
    } else {
        capacity_bytes(&preset)
    };
    let logs = load_logs(&specs, capacity)?;
    let mut placed = place(&specs, &logs, capacity)?;
    check_fdp(&specs, &preset)?;
    let groups = placed.last().map_or(0, |p| p.groupid + 1);
    let mut notes = replay_notes(&specs, &logs);
    raise_queue_pairs(&placed, groups, opts, &mut preset, &mut notes);
    host_notes(&specs, opts, &mut notes);
    let ignored = ignored_options(&specs);
    let mut out = match opts.interface {
        _ if zoned => crate::zoned::run(&preset, &mut placed, groups, opts, progress)?,
        Interface::Nvme => run_on::<Nvme<Drive>>(&preset, &placed, groups, opts, progress)?,
        Interface::Bare => run_on::<Device>(&preset, &placed, groups, opts, progress)?,
    };
    out.notes.splice(0..0, notes);
    out.job_count = placed.len();
    for p in &placed {
        if !out.sections.iter().any(|(s, _)| Rc::ptr_eq(s, &p.spec)) {
            out.sections.push((p.spec.clone(), p.groupid));
        }
    }
    out.ignored = ignored;
    out.global_options = file
        .global
        .iter()
        .map(|e| (e.key.clone(), e.value.clone().unwrap_or_default()))
        .collect();
    Ok(out)
}

/// The notes on each job's replayed logs: what each log replays and at what pace, and that a
/// replay overrides `write_iolog`.
fn replay_notes(specs: &[Rc<JobSpec>], logs: &[Vec<Rc<ReplayLog>>]) -> Vec<String> {
    let mut notes = Vec::new();
    for (spec, logs) in specs.iter().zip(logs) {
        if !logs.is_empty() && spec.write_iolog.is_some() {
            // fio: "read iolog overrides write_iolog" (init.c).
            notes.push(format!(
                "{}: read_iolog overrides write_iolog (as in fio): no log is written",
                spec.name
            ));
        }
        for log in logs {
            let ignored: u64 = log.summary.ignored.values().sum();
            notes.push(format!(
                "{}: read_iolog {}: {} requests replayed{}{}{}",
                spec.name,
                log.path.display(),
                log.requests.len(),
                if spec.replay_no_stall {
                    " as fast as iodepth allows (replay_no_stall)"
                } else {
                    " at the log's timing"
                },
                if log.skipped > 0 {
                    format!(", {} left out (replay_skip)", log.skipped)
                } else {
                    String::new()
                },
                if ignored > 0 {
                    format!(", {ignored} sync/wait entries not replayed")
                } else {
                    String::new()
                },
            ));
        }
    }
    notes
}

/// Gives each concurrent job of the widest group a queue pair of its own on the NVMe path
/// (up to `QUEUE_PAIRS_MAX`), noting when that raises the preset's count.
fn raise_queue_pairs(
    placed: &[Placed],
    groups: u32,
    opts: &RunOptions,
    preset: &mut Preset,
    notes: &mut Vec<String>,
) {
    let widest = (0..groups)
        .map(|g| placed.iter().filter(|p| p.groupid == g).count())
        .max()
        .unwrap_or(1);
    let pairs = u16::try_from(widest)
        .unwrap_or(u16::MAX)
        .min(QUEUE_PAIRS_MAX);
    if opts.interface == Interface::Nvme && pairs > preset.nvme.queue_pairs {
        notes.push(format!(
            "nvme.queue_pairs raised from {} to {pairs}: each concurrent job submits on a \
             queue pair of its own",
            preset.nvme.queue_pairs
        ));
        preset.nvme.queue_pairs = pairs;
    }
}

/// Notes on host options run differently than on a real host: buffered I/O, and verify
/// without data to compare.
fn host_notes(specs: &[Rc<JobSpec>], opts: &RunOptions, notes: &mut Vec<String>) {
    if specs.iter().any(|s| !s.direct) {
        notes.push("direct=0 is run as direct=1: there is no host page cache on this path".into());
    }
    if specs.iter().any(|s| s.verify.is_some()) && opts.fidelity == Fidelity::Timing {
        notes.push(
            "verify: the read-back pass runs, but timing fidelity carries no data to compare; \
             use --fidelity functional"
                .into(),
        );
    }
}

/// The host-only options the jobs set, each once, where it first stands.
fn ignored_options(specs: &[Rc<JobSpec>]) -> Vec<(String, Location)> {
    let mut ignored: Vec<(String, Location)> = Vec::new();
    for s in specs {
        for (k, at) in &s.ignored {
            if !ignored.iter().any(|(i, _)| i == k) {
                ignored.push((k.clone(), at.clone()));
            }
        }
    }
    ignored
}

/// `fdp=1` needs a drive with Flexible Data Placement, and `fdp_pli` indices into its handle
/// list (fio fails a job whose index is past the list, `init_ruh_info`).
fn check_fdp(specs: &[Rc<JobSpec>], preset: &Preset) -> Result<(), FioError> {
    let fdp = &preset.ftl.fdp;
    for spec in specs.iter().filter(|s| s.fdp) {
        let bad = |reason: String| FioError::Job {
            job: spec.name.clone(),
            reason,
        };
        if !fdp.enabled {
            return Err(bad(format!(
                "fdp=1 needs Flexible Data Placement: preset {} has fdp.enabled=false \
                 (--set fdp.enabled=true)",
                preset.name
            )));
        }
        let entries = fdp.handles * fdp.reclaim_groups;
        if let Some(&i) = spec.fdp_pli.iter().find(|&&i| u32::from(i) >= entries) {
            return Err(bad(format!(
                "fdp_pli index {i}: the drive's reclaim unit handle status lists {entries} \
                 placement identifiers (fdp.handles × fdp.reclaim_groups)"
            )));
        }
    }
    Ok(())
}

/// Places every clone of every job on the device and numbers the groups.
fn place(
    specs: &[Rc<JobSpec>],
    logs: &[Vec<Rc<ReplayLog>>],
    capacity: u64,
) -> Result<Vec<Placed>, FioError> {
    let mut out = Vec::new();
    let mut groupid = 0u32;
    for (i, spec) in specs.iter().enumerate() {
        let logs = &logs[i];
        if spec.stonewall && i > 0 {
            groupid += 1;
        }
        for clone in 0..spec.numjobs {
            if out.len() == JOBS_MAX {
                return Err(FioError::Job {
                    job: spec.name.clone(),
                    reason: format!("more than {JOBS_MAX} jobs in the file"),
                });
            }
            // fio: log files "are sequentially assigned to job clones" (index mod count).
            let replay = (!logs.is_empty()).then(|| logs[clone as usize % logs.len()].clone());
            let (start, len) = clone_region(spec, clone, capacity, replay.as_deref())?;
            out.push(Placed {
                spec: spec.clone(),
                groupid,
                number: out.len() as u64,
                start,
                len,
                replay,
            });
        }
    }
    Ok(out)
}

/// The region (start, length in bytes) of clone `clone` of `spec` on a device of `capacity`
/// logical bytes: its offset, and its size (to the end of the log's highest request when it
/// replays `replay` and sets none) in whole grains, checked to fit and to hold what the job
/// tracks.
fn clone_region(
    spec: &JobSpec,
    clone: u32,
    capacity: u64,
    replay: Option<&ReplayLog>,
) -> Result<(u64, u64), FioError> {
    let bad = |reason: String| FioError::Job {
        job: spec.name.clone(),
        reason,
    };
    let share = |v: SizeOrShare| match v {
        SizeOrShare::Bytes(b) => b,
        SizeOrShare::Percent(p) => (capacity as f64 * p / 100.0) as u64,
    };
    let (grain, bs_max) = grain_and_bs_max(spec);
    let offset = share(spec.offset)
        .checked_add(u64::from(clone).saturating_mul(spec.offset_increment))
        .ok_or_else(|| bad("offset overflows".into()))?
        / SECTOR_BYTES
        * SECTOR_BYTES;
    if offset >= capacity {
        return Err(bad(format!(
            "offset {offset} lies beyond the device's {capacity} logical bytes"
        )));
    }
    let size = match (spec.size, replay) {
        (Some(v), _) => share(v),
        // To the end of the log's highest request, in whole grains.
        (None, Some(log)) => log
            .end_bytes
            .saturating_sub(offset)
            .max(bs_max)
            .div_ceil(grain)
            .saturating_mul(grain)
            .min(capacity - offset),
        (None, None) => capacity - offset,
    };
    if offset + size > capacity {
        return Err(bad(format!(
            "region {offset}+{size} lies beyond the device's {capacity} logical bytes \
             (lower size or offset)"
        )));
    }
    let len = size / grain * grain;
    if len < bs_max {
        return Err(bad(format!(
            "region of {size} bytes is smaller than one {bs_max}-byte request"
        )));
    }
    if spec.verify.is_some() && len / grain > VERIFY_BLOCKS_MAX {
        return Err(bad(format!(
            "verify would track {} blocks, more than {VERIFY_BLOCKS_MAX}; lower size",
            len / grain
        )));
    }
    if spec.rw.random() && !spec.norandommap && len / grain > crate::dist::RANDOM_MAP_BLOCKS_MAX {
        return Err(bad(format!(
            "the random map would track {} blocks; set norandommap",
            len / grain
        )));
    }
    Ok((offset, len))
}

/// The job's grain (the smallest alignment of the directions it issues in: offsets and
/// lengths are whole grains) and its largest request, bytes.
fn grain_and_bs_max(spec: &JobSpec) -> (u64, u64) {
    let dirs = spec.rw.directions();
    let grain = (0..3)
        .filter(|&d| dirs[d])
        .map(|d| spec.blockalign[d].unwrap_or_else(|| spec.bs[d].min()))
        .min()
        .expect("a job issues in some direction");
    let bs_max = (0..3)
        .filter(|&d| dirs[d])
        .map(|d| spec.bs[d].max())
        .max()
        .expect("some direction");
    (grain, bs_max)
}

/// Runs the placed jobs, group after group, on the drive behind the front end `D`, after
/// preconditioning what they read.
fn run_on<D: FrontEnd>(
    preset: &Preset,
    placed: &[Placed],
    groups: u32,
    opts: &RunOptions,
    progress: &mut dyn FnMut(Stage, u64, u64),
) -> Result<FioRun, FioError> {
    let read_span = placed
        .iter()
        .filter(|p| p.reads())
        .map(|p| p.start + p.len)
        .max();
    let span = placed.iter().map(|p| p.start + p.len).max().unwrap_or(0);
    let store = store_spec(placed, opts.fidelity, span)?;
    let mut driver = Driver::<D>::new(preset, &store, opts.seed, span)?;
    let fill = match (opts.precondition, read_span) {
        (Some(false), _) | (None, None) => None,
        (Some(true), r) => Some(r.unwrap_or(span)),
        (None, Some(r)) => Some(r),
    };
    let pre = match fill {
        Some(s) => Some(precondition(&mut driver, preset, s, progress)?),
        None => None,
    };
    driver.expect_outstanding(outstanding_max(placed, groups));
    let start = driver.snapshot();
    let run_start = driver.now();
    let disk = Rc::new(RefCell::new(Disk::default()));
    let (phase, finished) = run_groups(&mut driver, preset, placed, groups, opts, &disk, progress)?;
    let end = driver.snapshot();
    let report = IoReport::build(Measured {
        preset,
        seed: opts.seed,
        fidelity: opts.fidelity.name(),
        interface: D::INTERFACE,
        nvme: (D::INTERFACE == Interface::Nvme).then_some(&preset.nvme),
        workload: serde_json::json!({
            "jobs": placed.len(),
            "groups": groups,
        }),
        precondition: pre,
        phase: &phase,
        start: &start,
        end: &end,
        device: driver.device(),
        trace_hash: driver.trace_hash(),
        wall_s: 0.0,
        measured_wall_s: 0.0,
        total_events: driver.events(),
        peak_rss_mb: 0.0,
        placement: placed
            .iter()
            .any(|p| p.spec.fdp)
            .then(|| "fio fdp=1: each job's writes over its fdp_pli list".to_string()),
    });
    FioRun::of_jobs(
        finished,
        groups,
        &disk,
        phase.end.since(run_start).as_ns(),
        deterministic(report),
        Vec::new(),
    )
}

/// Where the run keeps page data: nowhere in timing fidelity, in memory in functional
/// fidelity (refused past `FUNCTIONAL_MEMORY_BYTES_MAX` of `span`).
fn store_spec(placed: &[Placed], fidelity: Fidelity, span: u64) -> Result<StoreSpec, FioError> {
    Ok(match fidelity {
        Fidelity::Timing => StoreSpec::None,
        Fidelity::Functional => {
            if span > FUNCTIONAL_MEMORY_BYTES_MAX {
                return Err(FioError::Job {
                    job: placed[0].spec.name.clone(),
                    reason: format!(
                        "functional fidelity would hold up to {span} bytes of pages in RAM \
                         (more than {FUNCTIONAL_MEMORY_BYTES_MAX}); lower size"
                    ),
                });
            }
            StoreSpec::Memory
        }
    })
}

/// The most requests a group keeps outstanding: every job of a group may keep its whole
/// depth outstanding at once (and a flush).
fn outstanding_max(placed: &[Placed], groups: u32) -> u64 {
    (0..groups)
        .map(|g| {
            placed
                .iter()
                .filter(|p| p.groupid == g)
                .map(|p| u64::from(p.spec.iodepth) + 1)
                .sum::<u64>()
        })
        .max()
        .unwrap_or(1)
}

/// Runs the groups one after the other on `driver`: the measured phase of them all and the
/// finished jobs, in order.
fn run_groups<D: FrontEnd>(
    driver: &mut Driver<D>,
    preset: &Preset,
    placed: &[Placed],
    groups: u32,
    opts: &RunOptions,
    disk: &Rc<RefCell<Disk>>,
    progress: &mut dyn FnMut(Stage, u64, u64),
) -> Result<(PhaseResult, Vec<JobRun>), FioError> {
    let mut phase: Option<PhaseResult> = None;
    let mut finished: Vec<JobRun> = Vec::new();
    let mut done_before = 0u64;
    for g in 0..groups {
        let group_start = driver.now();
        let mut runs: Vec<JobRun> = placed
            .iter()
            .filter(|p| p.groupid == g)
            .map(|p| {
                p.job_run(g, opts.seed, group_start, disk).with_fdp_pids(
                    if preset.ftl.fdp.enabled {
                        preset.ftl.fdp.status_pids()
                    } else {
                        Vec::new()
                    },
                )
            })
            .collect();
        let mut refs: Vec<&mut dyn PacedSource> =
            runs.iter_mut().map(|r| r as &mut dyn PacedSource).collect();
        let p = driver.run_paced(&mut refs, u64::MAX, &mut |d, t| {
            progress(Stage::Measure, done_before + d, t)
        })?;
        done_before += p.requests;
        match &mut phase {
            None => phase = Some(p),
            Some(all) => all.append(p),
        }
        for mut r in runs {
            r.finish();
            finished.push(r);
        }
    }
    Ok((phase.expect("a file has a group"), finished))
}

/// The `write_iolog` files of the finished jobs and their text.
fn iologs(finished: &[JobRun]) -> Result<Vec<(PathBuf, String)>, FioError> {
    let mut out = Vec::new();
    for r in finished {
        if let (Some(p), Some(lines)) = (&r.spec.write_iolog, &r.iolog) {
            if r.iolog_truncated {
                return Err(FioError::Job {
                    job: r.spec.name.clone(),
                    reason: format!(
                        "write_iolog: more than {IOLOG_REQUESTS_MAX} requests; lower the job's \
                         size or runtime"
                    ),
                });
            }
            out.push((PathBuf::from(p), lines.join("\n") + "\n"));
        }
    }
    Ok(out)
}

/// The jobs' reports, merged per group where a job of the group asks for group reporting.
fn reports(runs: Vec<JobRun>) -> Vec<JobReport> {
    let one = |r: &JobRun| JobReport {
        spec: r.spec.clone(),
        groupid: r.groupid,
        members: 1,
        error: error_number(&r.stats),
        stats: r.stats.clone(),
    };
    let mut out: Vec<JobReport> = Vec::new();
    for r in &runs {
        let grouped = runs
            .iter()
            .any(|o| o.groupid == r.groupid && o.spec.group_reporting);
        match out.iter_mut().find(|j| grouped && j.groupid == r.groupid) {
            Some(j) => {
                j.stats.merge(&r.stats);
                j.members += 1;
                j.error = error_number(&j.stats);
            }
            None => out.push(one(r)),
        }
    }
    out
}

fn error_number(s: &JobStats) -> i32 {
    // Linux errno values fio reports: EILSEQ for a verify mismatch, EIO for a failed request.
    if s.verify_errors > 0 {
        84
    } else if s.errors > 0 {
        5
    } else {
        0
    }
}

/// nearflash's report without the figures that depend on the machine running it (wall
/// time, speed, memory), so that the same seed gives byte-identical output.
fn deterministic(report: IoReport) -> serde_json::Value {
    let mut v = serde_json::to_value(report).expect("serialisable");
    let obj = v.as_object_mut().expect("a report is an object");
    for k in ["wall_s", "events_per_wall_s", "speed", "peak_rss_mb"] {
        obj.remove(k);
    }
    if let Some(p) = obj.get_mut("precondition").and_then(|p| p.as_object_mut()) {
        p.remove("wall_s");
    }
    v
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::jobfile::tests::one;

    fn run_text(text: &str, seed: u64) -> FioRun {
        let file = one(text).unwrap();
        run(
            &file,
            std::path::Path::new("job.fio"),
            &RunOptions {
                preset: "test-min".into(),
                overrides: Vec::new(),
                seed,
                fidelity: Fidelity::Timing,
                interface: Interface::Nvme,
                precondition: None,
            },
            &mut |_, _, _| {},
        )
        .unwrap()
    }

    /// `text` run on test-min with `overrides`, seed 1, over NVMe.
    pub(crate) fn run_test_min(
        text: &str,
        overrides: &[&str],
        fidelity: Fidelity,
    ) -> Result<FioRun, FioError> {
        run(
            &one(text).unwrap(),
            std::path::Path::new("job.fio"),
            &RunOptions {
                preset: "test-min".into(),
                overrides: overrides.iter().map(|o| o.to_string()).collect(),
                seed: 1,
                fidelity,
                interface: Interface::Nvme,
                precondition: None,
            },
            &mut |_, _, _| {},
        )
    }

    fn run_fdp(text: &str, overrides: &[&str]) -> Result<FioRun, FioError> {
        run_test_min(text, overrides, Fidelity::Timing)
    }

    const FDP_DRIVE: &[&str] = &["ftl.mapping=\"page\"", "fdp.enabled=true", "fdp.handles=4"];

    fn host_bytes_by_handle(r: &FioRun) -> Vec<u64> {
        r.nearflash["fdp"]["handles"]
            .as_array()
            .expect("the FDP report")
            .iter()
            .map(|h| h["host_bytes_written"].as_u64().unwrap())
            .collect()
    }

    /// examples/fio/fdp.fio: the hot job's 800 writes go to placement ID index 0, the cold
    /// job's 400 alternate between indices 1 and 2 (fio's round robin), and handle 3 gets
    /// nothing — the bytes per handle are exact.
    #[test]
    fn fdp_jobs_write_on_their_fdp_pli_handles_in_turn() {
        let text = include_str!("../../../examples/fio/fdp.fio");
        let r = run_fdp(text, FDP_DRIVE).unwrap();
        let k = 4096;
        assert_eq!(host_bytes_by_handle(&r), [800 * k, 200 * k, 200 * k, 0]);
    }

    /// `fdp_pli_select=random` draws from the listed indices only; without `fdp_pli` a job
    /// cycles over every handle; a drive without FDP refuses `fdp=1`, and an index past the
    /// drive's handles is refused, naming what the drive has.
    #[test]
    fn fdp_random_selection_stays_on_the_list_and_bad_setups_are_refused() {
        let random = "[j]\nrw=randwrite\nsize=1m\nnumber_ios=400\nfdp=1\nfdp_pli=1,3\nfdp_pli_select=random\n";
        let host = host_bytes_by_handle(&run_fdp(random, FDP_DRIVE).unwrap());
        assert!(host[1] > 0 && host[3] > 0, "{host:?}");
        assert_eq!((host[0], host[2], host[1] + host[3]), (0, 0, 400 * 4096));
        let all = "[j]\nrw=randwrite\nsize=1m\nnumber_ios=400\nfdp=1\n";
        let host = host_bytes_by_handle(&run_fdp(all, FDP_DRIVE).unwrap());
        assert_eq!(host, [100 * 4096; 4]);
        let e = run_fdp(all, &[]).unwrap_err().to_string();
        assert!(e.contains("fdp.enabled=false"), "{e}");
        let past = all.replace("fdp=1\n", "fdp=1\nfdp_pli=4\n");
        let e = run_fdp(&past, FDP_DRIVE).unwrap_err().to_string();
        assert!(e.contains("fdp_pli index 4"), "{e}");
    }

    /// With two reclaim groups the drive's Reclaim Unit Handle Status lists (handle, group)
    /// pairs — PIDs 0, 0x8000, 1, 0x8001 for two handles — and `fdp_pli` indexes that list
    /// as fio's `init_ruh_info` does: indices 1 and 2 are handle 0 in group 1 and handle 1 in
    /// group 0, so both handles take half the writes; index 4 is past the list.
    #[test]
    fn with_two_reclaim_groups_fdp_pli_indexes_the_status_lists_group_and_handle_pairs() {
        let drive = &[
            "ftl.mapping=\"page\"",
            "fdp.enabled=true",
            "fdp.handles=2",
            "fdp.reclaim_groups=2",
        ];
        let job = "[j]\nrw=randwrite\nsize=1m\nnumber_ios=400\nfdp=1\nfdp_pli=1,2\n";
        let host = host_bytes_by_handle(&run_fdp(job, drive).unwrap());
        assert_eq!(host, [200 * 4096, 200 * 4096]);
        let past = job.replace("fdp_pli=1,2", "fdp_pli=4");
        let e = run_fdp(&past, drive).unwrap_err().to_string();
        assert!(e.contains("lists 4 placement identifiers"), "{e}");
    }

    fn ms(ns: u64) -> f64 {
        ns as f64 / 1e6
    }

    #[test]
    fn a_start_delay_and_think_times_stretch_the_run_in_simulated_time() {
        let plain = run_text("[j]\nrw=randread\nsize=1m\nnumber_ios=64\n", 1);
        let delayed = run_text(
            "[j]\nrw=randread\nsize=1m\nnumber_ios=64\nstartdelay=3ms\n",
            1,
        );
        let gap = delayed.sim_time_ns - plain.sim_time_ns;
        assert!((2_900_000..3_100_000).contains(&gap), "{}", ms(gap));
        let thinking = run_text(
            "[j]\nrw=randread\nsize=1m\nnumber_ios=64\nthinktime=100us\nthinktime_blocks=8\n",
            1,
        );
        // A think time of 100 µs after every 8 requests, once they have completed: 7 of them
        // lie before the last completion (a read after an idle gap may run a little faster).
        let gap = thinking.sim_time_ns - plain.sim_time_ns;
        assert!((650_000..800_000).contains(&gap), "{}", ms(gap));
        assert_eq!(thinking.jobs[0].stats.dirs[0].total_ios, 64);
    }

    #[test]
    fn rate_iops_caps_the_jobs_rate_in_simulated_time() {
        let r = run_text(
            "[j]\nrw=randread\nsize=1m\nnumber_ios=200\nrate_iops=10000\n",
            1,
        );
        let s = &r.jobs[0].stats;
        let iops = s.dirs[0].total_ios as f64 * 1e9 / s.runtime_ns as f64;
        assert!((9_000.0..=10_100.0).contains(&iops), "{iops}");
    }

    #[test]
    fn ramp_time_is_run_but_left_out_of_the_figures() {
        let r = run_text(
            "[j]\nrw=randread\nsize=1m\nruntime=2ms\nramp_time=1ms\ntime_based\niodepth=4\n",
            1,
        );
        let s = &r.jobs[0].stats;
        let ios = s.dirs[0].total_ios;
        assert!(
            ios > 0 && s.submitted > ios,
            "ramp requests run but are not counted"
        );
        assert!(
            (2.0..2.5).contains(&ms(s.runtime_ns)),
            "{}",
            ms(s.runtime_ns)
        );
    }

    #[test]
    fn randseed_fixes_the_offsets_whatever_the_run_seed_and_clones_differ() {
        let text = "[j]\nrw=randwrite\nsize=1m\nnumber_ios=50\nnorandommap\nrandseed=5\n\
                    write_iolog=x\nnumjobs=2\n";
        let (a, b) = (run_text(text, 1), run_text(text, 2));
        let log = |r: &FioRun, i: usize| r.iologs[i].1.clone();
        assert_eq!(log(&a, 0), log(&b, 0));
        assert_ne!(log(&a, 0), log(&a, 1), "each clone has its own stream");
        let c = run_text(&text.replace("randseed=5\n", ""), 1);
        let d = run_text(&text.replace("randseed=5\n", ""), 2);
        assert_ne!(log(&c, 0), log(&d, 0), "without randseed, --seed decides");
    }

    #[test]
    fn jobs_without_a_stonewall_run_together_and_a_stonewall_waits() {
        let together = run_text(
            "[a]\nrw=randread\nsize=1m\nnumber_ios=500\n[b]\nrw=randread\nsize=1m\n\
             number_ios=500\n",
            1,
        );
        let apart = run_text(
            "[a]\nrw=randread\nsize=1m\nnumber_ios=500\n[b]\nstonewall\nrw=randread\n\
             size=1m\nnumber_ios=500\n",
            1,
        );
        assert_eq!(together.groups, 1);
        assert_eq!(apart.groups, 2);
        assert_eq!(
            together.jobs.len(),
            2,
            "no group reporting: a report per job"
        );
        assert!(
            apart.sim_time_ns > together.sim_time_ns,
            "{} vs {}",
            ms(apart.sim_time_ns),
            ms(together.sim_time_ns)
        );
    }

    /// The log in a temporary file.
    fn log_file(text: &str) -> tempfile::TempPath {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
        f.into_temp_path()
    }

    /// The log a job writes (v3, with the simulated issue times), replayed without stalls
    /// at the same depth, issues the same requests in the same order at the same times: the
    /// whole run is the same — its trace hash, IOPS and latencies.
    #[test]
    fn a_log_a_job_wrote_replays_without_stalls_as_the_same_run() {
        for rw in ["randread", "randwrite"] {
            let writer = run_text(
                &format!(
                    "[w]\nrw={rw}\nsize=1m\nnumber_ios=400\niodepth=8\nnorandommap\n\
                     write_iolog=unused\n"
                ),
                3,
            );
            let text = &writer.iologs[0].1;
            assert!(
                text.starts_with("fio version 3 iolog\n0 nearflash0n1 add\n"),
                "{text}"
            );
            let path = log_file(text);
            let replay = run_text(
                &format!(
                    "[r]\nread_iolog={}\nreplay_no_stall=1\niodepth=8\nsize=1m\n",
                    path.display()
                ),
                3,
            );
            assert_eq!(
                replay.nearflash["trace_hash"], writer.nearflash["trace_hash"],
                "{rw}"
            );
            let (a, b) = (&writer.jobs[0].stats, &replay.jobs[0].stats);
            for d in 0..2 {
                assert_eq!(a.dirs[d].total_ios, b.dirs[d].total_ios, "{rw}");
                assert_eq!(
                    a.dirs[d].clat.hist.mean_ns(),
                    b.dirs[d].clat.hist.mean_ns(),
                    "{rw}"
                );
            }
            assert_eq!(a.runtime_ns, b.runtime_ns, "{rw}");
        }
    }

    /// Timed, the requests keep the log's gaps (µs) in simulated time, scaled by
    /// replay_time_scale (a percentage of the rate); without stalls they go back to back.
    #[test]
    fn a_timed_replay_keeps_the_logs_gaps_and_replay_time_scale_scales_them() {
        let path = log_file(
            "fio version 3 iolog\n0 /dev/sdb add\n0 /dev/sdb open\n100 /dev/sdb read 0 4096\n\
             1100 /dev/sdb read 4096 4096\n3100 /dev/sdb write 8192 4096\n\
             3200 /dev/sdb close\n",
        );
        let run = |extra: &str| {
            run_text(
                &format!("[r]\nread_iolog={}\nsize=1m\n{extra}", path.display()),
                1,
            )
        };
        let timed = run("");
        let s = &timed.jobs[0].stats;
        assert_eq!((s.dirs[0].total_ios, s.dirs[1].total_ios), (2, 1));
        // The last request goes 3 ms after the first; the run ends one write later.
        assert!(
            (3.0..3.5).contains(&ms(s.runtime_ns)),
            "{}",
            ms(s.runtime_ns)
        );
        let fast = run("replay_time_scale=200\n");
        let f = ms(fast.jobs[0].stats.runtime_ns);
        assert!((1.5..2.0).contains(&f), "twice the rate: {f}");
        let no_stall = run("replay_no_stall=1\n");
        assert!(ms(no_stall.jobs[0].stats.runtime_ns) < 0.5);
        assert!(
            timed
                .notes
                .iter()
                .any(|n| n.contains("3 requests replayed at the log's timing")),
            "{:?}",
            timed.notes
        );
    }

    #[test]
    fn a_job_past_the_device_is_refused_before_anything_runs() {
        let file = one("[j]\nrw=read\noffset=8m\nsize=1m\n").unwrap();
        let e = run(
            &file,
            std::path::Path::new("job.fio"),
            &RunOptions {
                preset: "test-min".into(),
                overrides: Vec::new(),
                seed: 1,
                fidelity: Fidelity::Timing,
                interface: Interface::Nvme,
                precondition: None,
            },
            &mut |_, _, _| {},
        )
        .unwrap_err();
        assert!(e.to_string().contains("beyond the device"), "{e}");
    }
}
