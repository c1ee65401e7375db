//! Runs a job file on the simulated drive: each job section becomes `numjobs` paced
//! submitters, jobs up to the next `stonewall` form a group that runs concurrently, and the
//! groups run one after another, all through the I/O benchmark's driver and host interface
//! (the NVMe front end and its link, or bare) — the very path `nearflash io` takes. Reading
//! jobs find their region written first (fio lays out a file before reading it), as
//! `nearflash io` preconditions a read pattern. A job replaying an iolog (`read_iolog`)
//! reads if its log holds reads; its region is `offset`/`size` when given, else from
//! `offset` to the end of the log's highest request (the log's offsets are device offsets).
//!
//! Here the run and its result; `place` puts the jobs' clones on the device, `notes` writes
//! what the run prints before its report.

use crate::error::{FioError, Location};
use crate::job::{Disk, JobRun, IOLOG_REQUESTS_MAX};
use crate::jobfile::JobFile;
use crate::options::JobSpec;
use crate::stats::JobStats;
use nearflash_ftl::Device;
use nearflash_iobench::bench::FUNCTIONAL_MEMORY_BYTES_MAX;
use nearflash_iobench::driver::{Driver, PacedSource, PhaseResult, StoreSpec};
use nearflash_iobench::interface::FrontEnd;
use nearflash_iobench::report::{IoReport, Measured};
use nearflash_iobench::{capacity_bytes, precondition, Interface, Stage};
use nearflash_preset::Preset;
use nearflash_sim::Fidelity;
use nearflash_ssd::Ssd;
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

mod notes;
mod place;

use notes::{host_notes, ignored_options, raise_queue_pairs, replay_notes};
pub(crate) use place::Placed;
use place::{check_fdp, load_logs, place};

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
        Interface::Nvme => run_on::<Ssd>(&preset, &placed, groups, opts, progress)?,
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
pub(crate) mod tests;
