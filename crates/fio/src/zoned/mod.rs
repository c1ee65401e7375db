//! `zonemode=zbd` jobs on the zoned drive (`--set zns.enabled=true`,
//! `nearflash_ftl::zns::ZonedDevice`): the jobs place their requests on the zones they share
//! (`zbd.rs`), and [`ZbdDrive`] — the host's zone layer between the jobs and the drive —
//! issues each reset they decide before the zone's next request and keeps one write in
//! flight per zone. The drive sits behind the NVMe front end and its link
//! (`--interface nvme`, the default, as `nearflash io` on a zoned drive) or bare
//! (`--interface bare`), in timing fidelity, driven by the same paced load loop as every
//! other fio run (`nearflash_blockdev::load::run_paced`).
//!
//! **One write in flight per zone** (through NVMe). NVMe does not order commands: two writes
//! in flight to one zone may reach the drive out of order, and the second would fail with
//! Zone Invalid Write. A host keeps a zone's writes in order by issuing them one at a time:
//! fio's `zbd_adjust_block` returns with the target zone's lock held, and `zbd_put_io` drops
//! it when the I/O completes (fio `zbd.c`: "The zone will be unlocked if io_u offset is
//! changed or when io_u completes and zbd_put_io() executed"); the lock is recursive
//! (`PTHREAD_MUTEX_RECURSIVE`), so it keeps *other* jobs out of the zone while the owner's
//! I/O is in flight, and the owner's own writes to the zone are kept one at a time below
//! fio by Linux's block layer (mq-deadline's per-zone write lock; zone write plugging since
//! Linux 6.10), which holds a zone's next write until the previous one completes. Zone
//! Appends are exempt from both (the drive picks their place), but fio's `zonemode=zbd`
//! issues none. Here a zone's writes wait in the zone's queue, in the order they were
//! placed, until the previous write to the zone has completed; reads queued behind a waiting
//! write wait for it too (they were placed after it). Not modelled: fio's job that finds the
//! zone locked by another job first waits for all its own I/O (`io_u_quiesce`) and then
//! blocks; here only the request waits, and the job goes on with others. The bare drive
//! takes requests in the order they were submitted, so bare runs keep no such queue (as
//! before the front end was added).
//!
//! A reset waits until nothing is in flight to its zone, and the zone's later requests wait
//! behind it in order: a write still in flight could land after the reset (docs/zns.md's
//! crash-test finding). fio waits for the job's own I/O (`io_u_quiesce`) and resets
//! synchronously; waiting for the zone's is the same for one job and narrower for several.

use crate::error::FioError;
use crate::job::{Disk, JobRun};
use crate::options::JobSpec;
use crate::runner::{FioRun, Placed, RunOptions};
use crate::zbd::{ZbdState, ZoneSpan};
use nearflash_blockdev::load::{self, Pace, Rig, RigEvent, DEFAULT_STALL_LIMIT};
use nearflash_blockdev::{BlockRequest, SECTOR_BYTES};
use nearflash_flash::NoStore;
use nearflash_ftl::zns::ZonedDevice;
use nearflash_iobench::driver::{PacedSource, Step};
use nearflash_iobench::{Interface, IoBenchError, Stage};
use nearflash_nvme::Nvme;
use nearflash_preset::Preset;
use nearflash_sim::{Sim, Watchdog};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

mod drive;

pub use drive::{ZbdCounts, ZbdDrive, ZonedPath};

/// The zoned drive of `preset`, freshly formatted (timing fidelity: no data).
pub fn format(preset: &Preset) -> Result<ZonedDevice, FioError> {
    ZonedDevice::format(&preset.flash, &preset.ftl, &preset.zns, Box::new(NoStore)).map_err(|e| {
        FioError::Run(IoBenchError::Format {
            preset: preset.name.clone(),
            source: e,
        })
    })
}

/// Checks that zbd jobs and the drive fit each other: `zonemode=zbd` needs a zoned drive and
/// a zoned drive needs `zonemode=zbd`.
pub fn check_modes(specs: &[Rc<JobSpec>], preset: &Preset) -> Result<(), FioError> {
    let zoned = preset.zns.enabled;
    for spec in specs {
        let bad = |reason: String| FioError::Job {
            job: spec.name.clone(),
            reason,
        };
        if spec.zbd && !zoned {
            return Err(bad(format!(
                "zonemode=zbd needs a zoned drive: preset {} has zns.enabled=false \
                 (--set zns.enabled=true)",
                preset.name
            )));
        }
        if zoned && !spec.zbd {
            return Err(bad(format!(
                "the drive is zoned (zns.enabled=true on preset {}): its writes must land at \
                 write pointers, so every job needs zonemode=zbd",
                preset.name
            )));
        }
    }
    Ok(())
}

/// fio's `zbd_zone_align_file_sizes`: a writing job's region starts at the next zone boundary
/// and ends at the last one within it; a reading job's end is rounded down. Returns each
/// job's zones; a note for each region changed.
fn align(
    placed: &mut [Placed],
    zone_bytes: u64,
    notes: &mut Vec<String>,
) -> Result<Vec<ZoneSpan>, FioError> {
    let mut spans = Vec::with_capacity(placed.len());
    for p in placed.iter_mut() {
        let writes = p.spec.rw.directions()[1];
        let end = p.start + p.len;
        let start = if writes {
            p.start.div_ceil(zone_bytes) * zone_bytes
        } else {
            p.start
        };
        let aligned_end = end / zone_bytes * zone_bytes;
        if aligned_end <= start {
            return Err(FioError::Job {
                job: p.spec.name.clone(),
                reason: format!(
                    "zonemode=zbd: region {}+{} holds no whole zone of {zone_bytes} bytes \
                     (io_size must be at least one zone)",
                    p.start, p.len
                ),
            });
        }
        if (start, aligned_end) != (p.start, end) {
            notes.push(format!(
                "{}: zonemode=zbd: region {}+{} aligned to zones as fio does: {start}+{}",
                p.spec.name,
                p.start,
                p.len,
                aligned_end - start
            ));
        }
        p.start = start;
        p.len = aligned_end - start;
        spans.push(ZoneSpan {
            first: (start / zone_bytes) as u32,
            end: aligned_end.div_ceil(zone_bytes) as u32,
        });
    }
    Ok(spans)
}

/// The write target limit: the smallest `max_open_zones` a job sets (0 or unset: the
/// drive's), never above the drive's max open zones; and each job's sizes fitting the zones.
fn check_against_drive(placed: &[Placed], dev: &ZonedDevice) -> Result<u32, FioError> {
    let zone_bytes = dev.zone_bytes();
    let open_max = dev.zones().open_max();
    let mut limit = open_max;
    for p in placed {
        let spec = &p.spec;
        let bad = |reason: String| FioError::Job {
            job: spec.name.clone(),
            reason,
        };
        if let Some(z) = spec.zonesize.filter(|&z| z != zone_bytes) {
            return Err(bad(format!(
                "zonesize {z} does not match the drive's zone size {zone_bytes} \
                 (fio: \"zonesize does not match the device zone size\")"
            )));
        }
        match spec.max_open_zones {
            Some(m) if m > open_max => {
                return Err(bad(format!(
                    "max_open_zones {m} is larger than the drive's max open zones {open_max} \
                     (zns.max_open_zones)"
                )))
            }
            Some(m) if m > 0 => limit = limit.min(m),
            _ => {}
        }
        if spec.rw.directions()[1] {
            let sizes = match &spec.bs[1] {
                crate::options::BlockSizes::Fixed(b) => vec![*b],
                crate::options::BlockSizes::Range(a, b) => vec![*a, *b],
                crate::options::BlockSizes::Split(v) => v.iter().map(|&(b, _)| b).collect(),
            };
            let min = spec.bs[1].min();
            if !zone_bytes.is_multiple_of(min) || sizes.iter().any(|b| b % min != 0) {
                return Err(bad(format!(
                    "zonemode=zbd here needs write block sizes that are multiples of the \
                     smallest ({min}), which divides the zone size {zone_bytes}: a zone then \
                     never keeps a remainder smaller than a block"
                )));
            }
        }
    }
    Ok(limit)
}

/// Runs the placed jobs (every one `zonemode=zbd`) on the zoned drive of `preset`.
pub(crate) fn run(
    preset: &Preset,
    placed: &mut [Placed],
    groups: u32,
    opts: &RunOptions,
    progress: &mut dyn FnMut(Stage, u64, u64),
) -> Result<FioRun, FioError> {
    let job = placed[0].spec.name.clone();
    let refuse = |reason: &str| FioError::Job {
        job: job.clone(),
        reason: format!("zonemode=zbd: {reason}"),
    };
    if opts.fidelity == nearflash_sim::Fidelity::Functional {
        return Err(refuse(
            "the zoned drive runs in timing fidelity only (--fidelity timing)",
        ));
    }
    if opts.precondition == Some(true) {
        return Err(refuse(
            "--precondition: reads find data only below write pointers; write it in an \
             earlier group (stonewall)",
        ));
    }
    let dev = format(preset)?;
    match opts.interface {
        Interface::Nvme => {
            let nvme = Nvme::new(preset.nvme.clone(), dev).map_err(|source| {
                FioError::Run(IoBenchError::Nvme {
                    preset: preset.name.clone(),
                    source,
                })
            })?;
            run_on(nvme, preset, placed, groups, opts, progress)
        }
        Interface::Bare => run_on(dev, preset, placed, groups, opts, progress),
    }
}

/// Runs the placed jobs on `dev`, the zoned drive behind its path.
fn run_on<D: ZonedPath>(
    dev: D,
    preset: &Preset,
    placed: &mut [Placed],
    groups: u32,
    opts: &RunOptions,
    progress: &mut dyn FnMut(Stage, u64, u64),
) -> Result<FioRun, FioError> {
    let zone_bytes = dev.zoned().zone_bytes();
    let mut notes = Vec::new();
    let spans = align(placed, zone_bytes, &mut notes)?;
    let write_zones_max = check_against_drive(placed, dev.zoned())?;
    let state = Rc::new(RefCell::new(zbd_state(
        placed,
        dev.zoned(),
        write_zones_max,
    )));
    let open_max = dev.zoned().zones().open_max();
    let zones = dev.zoned().zones().count();
    let mut sim: Sim<RigEvent<D::Event>> = Sim::new(opts.seed);
    let mut rig = Rig::new(ZbdDrive::new(dev, state.clone()));
    let disk = Rc::new(RefCell::new(Disk::default()));
    let mut finished: Vec<JobRun> = Vec::new();
    let mut counts = Counts::default();
    let run_start = sim.now();
    for g in 0..groups {
        let group_start = sim.now();
        let mut runs: Vec<JobRun> = placed
            .iter()
            .zip(&spans)
            .filter(|(p, _)| p.groupid == g)
            .map(|(p, &span)| {
                // zbd jobs replay no log (refused with read_iolog).
                p.job_run(g, opts.seed, group_start, &disk)
                    .with_zbd(state.clone(), span)
            })
            .collect();
        run_group(&mut sim, &mut rig, &mut runs, &mut counts, progress)?;
        for mut r in runs {
            r.finish();
            finished.push(r);
        }
    }
    progress(Stage::Measure, counts.done_total, counts.done_total);
    let end = sim.now();
    let drive = &rig.dev;
    drive.dev.check_invariants();
    assert!(
        drive.dev.quiescent(),
        "a finished run leaves the path and the drive idle"
    );
    check_write_pointers(drive, &state.borrow(), zones, zone_bytes);
    let nearflash = report(
        preset,
        opts.seed,
        drive,
        &state.borrow(),
        open_max,
        zones,
        &sim,
    );
    FioRun::of_jobs(
        finished,
        groups,
        &disk,
        end.since(run_start).as_ns(),
        nearflash,
        notes,
    )
}

/// The host's zone state the jobs share on `zoned`, resetting zones early as the first job
/// with a `zone_reset_frequency` above 0 says (never when none has one).
fn zbd_state(placed: &[Placed], zoned: &ZonedDevice, write_zones_max: u32) -> ZbdState {
    let (threshold, frequency) = placed
        .iter()
        .map(|p| (p.spec.zone_reset_threshold, p.spec.zone_reset_frequency))
        .find(|&(_, f)| f > 0.0)
        .unwrap_or((0.0, 0.0));
    ZbdState::new(
        zoned.zones().count(),
        zoned.zone_bytes(),
        write_zones_max,
        threshold,
        frequency,
    )
}

/// Request numbering and completions counted across a run's groups.
#[derive(Default)]
struct Counts {
    /// The id the next request takes.
    next_id: u64,
    /// Requests completed so far, in every group.
    done_total: u64,
}

/// Runs one group's jobs (`runs`) to their end through the paced load loop, reporting
/// progress every 4096 completions.
fn run_group<D: ZonedPath>(
    sim: &mut Sim<RigEvent<D::Event>>,
    rig: &mut Rig<ZbdDrive<D>>,
    runs: &mut Vec<JobRun>,
    counts: &mut Counts,
    progress: &mut dyn FnMut(Stage, u64, u64),
) -> Result<(), FioError> {
    let owners = RefCell::new(BTreeMap::<u64, usize>::new());
    let jobs = RefCell::new(runs);
    let mut watchdog = Watchdog::starting_at(DEFAULT_STALL_LIMIT, sim.now());
    let count = jobs.borrow().len();
    let next_id = &mut counts.next_id;
    let done_total = &mut counts.done_total;
    let result = load::run_paced(
        sim,
        rig,
        count,
        &mut watchdog,
        |i, now| {
            let mut jobs = jobs.borrow_mut();
            match jobs[i].step(now) {
                Step::Submit { draw, fua, .. } => {
                    let req = BlockRequest {
                        id: *next_id,
                        op: draw.op,
                        offset_bytes: draw.offset_bytes,
                        len_bytes: draw.len_bytes,
                        data: Vec::new(),
                    };
                    *next_id += 1;
                    jobs[i].submitted(&req);
                    owners.borrow_mut().insert(req.id, i);
                    Pace::Submit {
                        req,
                        fua,
                        placement: None,
                    }
                }
                Step::Until(at) => Pace::Until(at),
                Step::Blocked => Pace::Blocked,
                Step::Done => Pace::Done,
            }
        },
        |_, c| {
            let owner = owners
                .borrow_mut()
                .remove(&c.id)
                .expect("a completion of a request a job submitted");
            jobs.borrow_mut()[owner].completed(&c);
            *done_total += 1;
            if done_total.is_multiple_of(4096) {
                progress(Stage::Measure, *done_total, u64::MAX);
            }
            Ok::<(), FioError>(())
        },
    );
    result.map_err(|e| match e {
        load::LoadError::Stall(s) => FioError::Run(IoBenchError::Stalled(s.to_string())),
        load::LoadError::Handler(e) => e,
    })?;
    assert!(
        owners.borrow().is_empty(),
        "a finished group has nothing in flight"
    );
    Ok(())
}

/// Asserts that the jobs' write pointers are the drive's (its zone report), zone by zone.
fn check_write_pointers<D: ZonedPath>(
    drive: &ZbdDrive<D>,
    state: &ZbdState,
    zones: u32,
    zone_bytes: u64,
) {
    for z in 0..zones {
        assert_eq!(
            state.wp_bytes(z),
            drive.device().zones().descriptor(z).wp_sector * SECTOR_BYTES
                - u64::from(z) * zone_bytes,
            "zone {z}: the host's write pointer is the drive's"
        );
    }
}

/// nearflash's own figures of a zoned run (the top-level `nearflash` object).
fn report<D: ZonedPath>(
    preset: &Preset,
    seed: u64,
    drive: &ZbdDrive<D>,
    state: &ZbdState,
    open_max: u32,
    zones: u32,
    sim: &Sim<RigEvent<D::Event>>,
) -> serde_json::Value {
    let dev = drive.device();
    let stats = dev.stats();
    let flash = dev.backbone().stats();
    let host = stats.host_sectors_written * SECTOR_BYTES;
    let media = stats.rows_programmed * dev.layout().group_bytes();
    let mut by_state = BTreeMap::<&str, u32>::new();
    for z in 0..zones {
        *by_state.entry(dev.zones().state(z).name()).or_default() += 1;
    }
    let mut out = serde_json::json!({
        "preset": preset.name,
        "seed": seed,
        "fidelity": "timing",
        "interface": D::INTERFACE,
        "zoned": {
            "zones": zones,
            "zone_bytes": dev.zone_bytes(),
            "max_open_zones": open_max,
            "write_zones_max": state.write_zones_max(),
            "zones_by_state": by_state,
            "zone_resets": drive.counts.resets,
            "zone_reset_failures": drive.counts.reset_failures,
            "reads": drive.counts.reads,
            "reads_past_write_pointer": drive.counts.reads_past_wp,
            "active_zones_peak": drive.counts.active_zones_peak,
            "rows_padded": stats.rows_padded,
            "implicit_closes": stats.implicit_closes,
        },
        "host_bytes_written": host,
        "media_bytes_written": media,
        "waf": if host == 0 { 0.0 } else { media as f64 / host as f64 },
        "gc_runs": 0,
        "gc_pages_copied": 0,
        "flash_page_reads": flash.page_reads,
        "flash_page_programs": flash.page_programs,
        "flash_block_erases": flash.block_erases,
        "trace_hash": sim.trace_hash().hex(),
    });
    // Only a path that reorders keeps a zone's writes one at a time (a bare run's figures
    // are as they were before the front end).
    if let Some(front) = drive.dev.front_figures() {
        out["nvme"] = front;
    }
    if D::REORDERS {
        out["zoned"]["writes_serialised"] = drive.counts.writes_serialised.into();
        out["zoned"]["zone_writes_in_flight_peak"] = drive.counts.zone_writes_in_flight_peak.into();
    }
    out
}

#[cfg(test)]
mod tests;
