//! The notes a run prints before its report: what each replayed log replays, queue pairs
//! raised for concurrent jobs, host options run otherwise than on a host, and the
//! host-only options ignored.

use super::{Placed, RunOptions};
use crate::error::Location;
use crate::options::JobSpec;
use crate::replay::ReplayLog;
use nearflash_iobench::Interface;
use nearflash_preset::Preset;
use nearflash_sim::Fidelity;
use std::rc::Rc;

/// Most queue pairs the runner gives the front end (one per concurrent job).
const QUEUE_PAIRS_MAX: u16 = 256;

/// The notes on each job's replayed logs: what each log replays and at what pace, and that a
/// replay overrides `write_iolog`.
pub(super) fn replay_notes(specs: &[Rc<JobSpec>], logs: &[Vec<Rc<ReplayLog>>]) -> Vec<String> {
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
pub(super) fn raise_queue_pairs(
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
pub(super) fn host_notes(specs: &[Rc<JobSpec>], opts: &RunOptions, notes: &mut Vec<String>) {
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
pub(super) fn ignored_options(specs: &[Rc<JobSpec>]) -> Vec<(String, Location)> {
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
