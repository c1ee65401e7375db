//! Every clone of every job placed on the device: its group, its number, its region (from
//! `offset`, `size` and the log it replays) checked to fit and to hold what the job tracks,
//! and the iologs the jobs replay, read once per job.

use crate::error::FioError;
use crate::job::{Disk, JobRun, VERIFY_BLOCKS_MAX};
use crate::options::JobSpec;
use crate::replay::ReplayLog;
use crate::value::SizeOrShare;
use nearflash_ftl::SECTOR_BYTES;
use nearflash_preset::Preset;
use std::cell::RefCell;
use std::rc::Rc;

/// Most jobs (clones counted) in one file.
const JOBS_MAX: usize = 4096;

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

    pub(super) fn reads(&self) -> bool {
        match &self.replay {
            Some(log) => log.reads(),
            None => self.spec.rw.directions()[0],
        }
    }
}

/// Each job's iologs (none for a job that draws its requests), read once per job: its
/// clones share them (a job's replay options decide how a file reads).
pub(super) fn load_logs(
    specs: &[Rc<JobSpec>],
    capacity: u64,
) -> Result<Vec<Vec<Rc<ReplayLog>>>, FioError> {
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

/// `fdp=1` needs a drive with Flexible Data Placement, and `fdp_pli` indices into its handle
/// list (fio fails a job whose index is past the list, `init_ruh_info`).
pub(super) fn check_fdp(specs: &[Rc<JobSpec>], preset: &Preset) -> Result<(), FioError> {
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
pub(super) fn place(
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
