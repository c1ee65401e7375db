//! Configurations for tests and quick runs: a tiny device (2 channels × 2 dies × 2 planes ×
//! 24 blocks × 16 pages of 4 KiB, 16 KiB page groups) on which a few thousand requests fill
//! and overwrite the whole logical space, so GC, wear-leveling, checkpoints and recovery all
//! run within milliseconds of host time.

use crate::config::{FtlConfig, GcPolicy};
use nearflash_blockdev::IoError;
use nearflash_flash::FlashConfig;

pub fn tiny_flash() -> FlashConfig {
    FlashConfig {
        channels: 2,
        packages_per_channel: 1,
        dies_per_package: 2,
        planes_per_die: 2,
        blocks_per_plane: 24,
        pages_per_block: 16,
        page_size_bytes: 4096,
        oob_size_bytes: 64,
        read_latency_us: 20.0,
        program_latency_us: 200.0,
        erase_latency_us: 1000.0,
        read_latency_by_page_type_us: None,
        program_latency_by_page_type_us: None,
        channel_rate_mb_s: 400.0,
        command_overhead_ns: 100,
        endurance_pe_cycles: 100_000,
        program_fail_probability: 0.0,
        erase_fail_probability: 0.0,
        media: Default::default(),
        one_shot_pages: 1,
    }
}

pub fn tiny_ftl() -> FtlConfig {
    FtlConfig {
        over_provisioning_percent: 10.0,
        gc_policy: GcPolicy::Greedy,
        gc_foreground_free_superblocks: 2,
        gc_idle_threshold_us: 500.0,
        gc_background_free_superblocks: 6,
        gc_parallel_copies: 4,
        wear_leveling_spread_pe: 8,
        spare_blocks_per_plane: 2,
        checkpoint_interval_us: 3000.0,
        scratchpad_bytes: 1 << 20,
        mapping_cache_bytes: None,
        mapping: Default::default(),
        slc_cache: Default::default(),
        fdp: Default::default(),
    }
}

/// The tiny device with TLC-like timing for the SLC write cache: 24 page rows per block
/// (8 in SLC mode), native program 600 us and read 50 us.
pub fn tiny_slc_flash() -> FlashConfig {
    FlashConfig {
        pages_per_block: 24,
        read_latency_us: 50.0,
        program_latency_us: 600.0,
        ..tiny_flash()
    }
}

/// Bytes an SLC-mode superblock of `tiny_slc_flash` holds: 8 groups of 16 KiB.
pub const TINY_SLC_SB_BYTES: u64 = 8 * 16 * 1024;

/// `tiny_ftl` with the SLC write cache on: 4 static + up to 4 dynamic SLC superblocks
/// (1 MiB on an empty device), SLC mode at 20 us read / 200 us program.
pub fn tiny_slc_ftl() -> FtlConfig {
    FtlConfig {
        over_provisioning_percent: 30.0,
        mapping: Default::default(),
        slc_cache: crate::config::SlcCacheConfig {
            enabled: true,
            bits_per_cell: 3,
            static_capacity_bytes: 4 * TINY_SLC_SB_BYTES,
            dynamic_capacity_max_bytes: 4 * TINY_SLC_SB_BYTES,
            slc_read_latency_us: 20.0,
            slc_program_latency_us: 200.0,
        },
        ..tiny_ftl()
    }
}

/// A random mixed workload, run functionally and checked against the reference model:
/// what a fuzzer, a channel sweep or a soak runs over one configuration.
#[derive(Clone, Debug)]
pub struct CheckedIo {
    /// Random requests after the sequential fill of the span.
    pub requests: u64,
    pub queue_depth: u32,
    /// Largest request, in 512-byte sectors.
    pub max_request_sectors: u64,
    /// Sectors the workload touches (from offset 0), clipped to the capacity.
    pub span_sectors: u64,
    /// Share of writes among the random requests, percent.
    pub write_percent: u64,
    /// Check the drive's invariants after every event (the soak's small drives: the checks
    /// walk the tables, so a large drive's run would take far longer).
    pub check_every_event: bool,
}

/// What a checked run saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckedIoOutcome {
    pub completed: u64,
    /// Failed requests by error (a device whose blocks fail may run out of space).
    pub failed: std::collections::BTreeMap<String, u64>,
    pub reads_verified: u64,
    /// Sectors read back wrong: another sector's data, garbage, or an illegal version.
    pub wrong_reads: u64,
    pub first_violation: Option<String>,
}

/// Why a checked run could not finish.
#[derive(Debug, thiserror::Error)]
pub enum CheckedIoError {
    #[error(transparent)]
    Config(#[from] nearflash_flash::ConfigError),
    #[error("stalled: {stall}; stuck requests: {requests}")]
    Stalled {
        stall: nearflash_sim::Stall,
        requests: String,
    },
}

/// Formats a functional device of `flash`/`ftl`, fills the span sequentially, runs
/// `io.requests` random reads and writes, then reads the whole span back; every read is
/// checked against `verify::Reference`. Never hangs: the run is watched (no completion for
/// `STALL_LIMIT_MS` of simulated time is a stall).
pub fn run_checked_io(
    flash: &FlashConfig,
    ftl: &FtlConfig,
    io: &CheckedIo,
    seed: u64,
) -> Result<CheckedIoOutcome, CheckedIoError> {
    use crate::verify::Reference;
    use crate::{BlockOp, BlockRequest, Device, SECTOR_BYTES};
    use nearflash_blockdev::load::{self, LoadError, Rig, RigEvent};
    use nearflash_flash::{Geometry, MemoryStore};
    use nearflash_sim::{Schedule, Sim, SimDuration, Watchdog};
    use std::cell::RefCell;

    let mut sim: Sim<RigEvent<crate::Event>> = Sim::new(seed);
    // The soak's runs check the drive after every event: a broken invariant panics at the
    // event that broke it (`run_case` reports the panic as the case's failure).
    sim.check_invariants_after_every_event(io.check_every_event);
    let store = MemoryStore::new(
        Geometry::from_config(flash).page_count(),
        flash.page_size_bytes,
    );
    let dev = Device::format(
        flash,
        ftl,
        Box::new(store),
        &mut sim.queue().map(RigEvent::Device),
    )?;
    let span = io
        .span_sectors
        .min(dev.logical_bytes() / SECTOR_BYTES)
        .max(1);
    let group_sectors = u64::from(dev.layout().unit_sectors());
    let max_sectors = io.max_request_sectors.clamp(1, span);
    let mut rig = Rig::new(PlacedWorkload(dev));
    let state = RefCell::new((
        Reference::new(span, group_sectors),
        std::collections::BTreeMap::new(),
        CheckedIoOutcome::default(),
    ));
    let mut next_id = 0u64;
    let mut fill_at = 0u64;
    let mut random_left = io.requests;
    let mut check_at = 0u64;
    // Phase 0: fill; phase 1: random; phase 2: read everything back.
    let mut phase = 0;
    let mut dog = Watchdog::new(SimDuration::from_ms(STALL_LIMIT_MS));
    let result = load::run_closed(
        &mut sim,
        &mut rig,
        io.queue_depth.max(1),
        &mut dog,
        |rng| {
            let (op, lsn, count) = loop {
                match phase {
                    0 if fill_at < span => {
                        let n = max_sectors.min(span - fill_at);
                        fill_at += n;
                        break (BlockOp::Write, fill_at - n, n);
                    }
                    1 if random_left > 0 => {
                        random_left -= 1;
                        let n = 1 + rng.below(max_sectors);
                        let lsn = rng.below(span - n + 1);
                        let op = if rng.below(100) < io.write_percent {
                            BlockOp::Write
                        } else {
                            BlockOp::Read
                        };
                        break (op, lsn, n);
                    }
                    2 if check_at < span => {
                        let n = max_sectors.min(span - check_at);
                        check_at += n;
                        break (BlockOp::Read, check_at - n, n);
                    }
                    0 | 1 => phase += 1,
                    _ => return None,
                }
            };
            let mut st = state.borrow_mut();
            let (reference, pending, _) = &mut *st;
            let id = next_id;
            next_id += 1;
            let data = match op {
                BlockOp::Write => {
                    let (data, stamp) = reference.issue_write(lsn, count);
                    pending.insert(id, (lsn, count, Some(stamp), Vec::new()));
                    data
                }
                _ => {
                    pending.insert(id, (lsn, count, None, reference.acked_at(lsn, count)));
                    Vec::new()
                }
            };
            Some(BlockRequest {
                id,
                op,
                offset_bytes: lsn * SECTOR_BYTES,
                len_bytes: count * SECTOR_BYTES,
                data,
            })
        },
        |_, c| {
            let mut st = state.borrow_mut();
            let (reference, pending, out) = &mut *st;
            let (lsn, count, stamp, before) = pending.remove(&c.id).expect("known request");
            match (&c.result, stamp) {
                (Err(e), _) => *out.failed.entry(e.to_string()).or_default() += 1,
                (Ok(()), Some(stamp)) => {
                    out.completed += 1;
                    reference.ack_write(lsn, count, stamp);
                }
                (Ok(()), None) => {
                    out.completed += 1;
                    out.reads_verified += 1;
                    if let Err(v) = reference.check_read(lsn, &before, &c.data) {
                        out.wrong_reads += 1;
                        out.first_violation.get_or_insert_with(|| format!("{v:?}"));
                    }
                }
            }
            Ok::<(), std::convert::Infallible>(())
        },
    );
    match result {
        Ok(()) => Ok(state.into_inner().2),
        Err(LoadError::Stall(stall)) => Err(CheckedIoError::Stalled {
            stall,
            requests: rig.dev.0.describe_inflight(8),
        }),
        Err(LoadError::Handler(never)) => match never {},
    }
}

/// How the checked workloads and the crash test place writes on a drive with Flexible Data
/// Placement (`None` without): 256 KiB address regions take the entries of the Reclaim Unit
/// Handle Status list in turn (`FdpConfig::status_pids`: every handle, and with several
/// reclaim groups every (handle, group) pair, so each group holds its share), so that each
/// handle carries a stream of its own, and every 61st request names a placement handle the
/// namespace does not have (the drive places it by handle 0 and logs an Invalid Placement
/// Identifier event).
pub fn workload_pid(dev: &crate::Device, offset_bytes: u64, id: u64) -> Option<u16> {
    let cfg = &dev.config().fdp;
    if !cfg.enabled {
        return None;
    }
    if id % 61 == 60 {
        // One past the last handle, in group 0: invalid.
        return Some(cfg.handles as u16);
    }
    Some(valid_workload_pid(cfg, offset_bytes))
}

/// The status-list entry of `offset_bytes`'s 256 KiB region.
fn valid_workload_pid(cfg: &crate::fdp::FdpConfig, offset_bytes: u64) -> u16 {
    let groups = u64::from(cfg.reclaim_groups);
    let entry = (offset_bytes / (256 << 10)) % (u64::from(cfg.handles) * groups);
    crate::fdp::PlacementId {
        handle: (entry / groups) as u16,
        group: (entry % groups) as u16,
    }
    .encode(cfg.rgif_bits())
}

/// Every 97th request also moves its handle on to new reclaim units (a Reclaim Unit Handle
/// Update), so that part-written units are closed under load.
pub fn workload_ruh_update(id: u64) -> bool {
    id % 97 == 96
}

/// Submits `req` as the checked workloads do: through `workload_pid`'s placement handle on
/// a drive with FDP, with the occasional handle update (of the region's valid identifier);
/// a plain submit otherwise.
pub fn submit_placed_workload(
    dev: &mut crate::Device,
    req: nearflash_blockdev::BlockRequest,
    q: &mut impl nearflash_sim::Schedule<crate::Event>,
) {
    match workload_pid(dev, req.offset_bytes, req.id) {
        Some(pid) if req.op == nearflash_blockdev::BlockOp::Write => {
            if workload_ruh_update(req.id) {
                let cfg = &dev.config().fdp;
                let valid = if pid == cfg.handles as u16 {
                    valid_workload_pid(cfg, 0)
                } else {
                    pid
                };
                dev.ruh_update(&[valid], q.now())
                    .expect("a placement handle of the namespace");
            }
            dev.submit_placed(req, pid, q);
        }
        _ => dev.submit(req, q),
    }
}

/// The device as the checked workloads drive it (`submit_placed_workload`).
pub struct PlacedWorkload(pub crate::Device);

impl nearflash_blockdev::BlockDevice for PlacedWorkload {
    type Event = crate::Event;

    fn capacity_bytes(&self) -> u64 {
        self.0.logical_bytes()
    }

    fn is_functional(&self) -> bool {
        self.0.is_functional()
    }

    fn submit<S: nearflash_sim::Schedule<crate::Event>>(
        &mut self,
        req: nearflash_blockdev::BlockRequest,
        q: &mut S,
    ) {
        submit_placed_workload(&mut self.0, req, q);
    }

    fn handle<S: nearflash_sim::Schedule<crate::Event>>(
        &mut self,
        ev: crate::Event,
        q: &mut S,
        rng: &mut nearflash_sim::SimRng,
    ) {
        self.0.handle(ev, q, rng);
    }

    fn take_completions(&mut self, out: &mut Vec<nearflash_blockdev::BlockCompletion>) {
        self.0.take_completions(out);
    }

    fn outstanding(&self) -> u64 {
        nearflash_blockdev::BlockDevice::outstanding(&self.0)
    }

    fn check_invariants(&self) {
        self.0.check_invariants();
    }
}

/// The watchdog limit of checked runs: the load generators' default (a stall with no event
/// pending is caught at once).
pub const STALL_LIMIT_MS: u64 = nearflash_blockdev::load::DEFAULT_STALL_LIMIT.0 / 1_000_000;

/// The faults a drawn case injects besides its power cuts: program and erase failures, and
/// media bit errors (`flash.media`).
#[derive(Clone, Debug, PartialEq)]
pub struct Faults {
    pub program_fail_probability: f64,
    pub erase_fail_probability: f64,
    /// Flash media errors (`flash.media`): bit errors growing with wear, retention and read
    /// disturb, ECC and read-retry; `None` for media without bit errors.
    pub media: Option<MediaFaults>,
}

/// How worn and how old the media of a case starts (the rest of `flash.media` keeps its
/// cited defaults).
#[derive(Clone, Debug, PartialEq)]
pub struct MediaFaults {
    pub initial_pe_cycles: u32,
    pub retention_offset_days: f64,
}

impl Faults {
    pub fn apply(&self, flash: &mut FlashConfig) {
        flash.program_fail_probability = self.program_fail_probability;
        flash.erase_fail_probability = self.erase_fail_probability;
        if let Some(m) = &self.media {
            flash.media.enabled = true;
            flash.media.initial_pe_cycles = m.initial_pe_cycles;
            flash.media.retention_offset_days = m.retention_offset_days;
        }
    }

    /// Whether blocks may be taken out of service — failed programs or erases, or weak blocks
    /// retired for their read errors — so that a device whose spares are used up may run out
    /// of space.
    pub fn blocks_may_retire(&self) -> bool {
        self.program_fail_probability > 0.0
            || self.erase_fail_probability > 0.0
            || self.media.is_some()
    }
}

/// Half the cases run on healthy flash; the others fail programs and erases at up to 1%.
/// (Media errors are drawn apart, by [`draw_media`].)
pub fn draw_faults(rng: &mut nearflash_sim::SimRng) -> Faults {
    let p = |rng: &mut nearflash_sim::SimRng| {
        if rng.chance(0.5) {
            0.0
        } else {
            rng.below(1000) as f64 * 1e-5
        }
    };
    Faults {
        program_fail_probability: p(rng),
        erase_fail_probability: p(rng),
        media: None,
    }
}

/// A third of the cases have media bit errors, from a new device to one twice past the
/// 3000-cycle rating the default error model is calibrated at (`flash::media`), aged up to
/// two years: from clean reads through read retries to uncorrectable pages.
pub fn draw_media(rng: &mut nearflash_sim::SimRng) -> Option<MediaFaults> {
    rng.chance(1.0 / 3.0).then(|| MediaFaults {
        initial_pe_cycles: rng.below(6001) as u32,
        retention_offset_days: rng.below(731) as f64,
    })
}

/// One case of a seeded soak: a configuration, a workload and a fault schedule, all drawn
/// from one seed (the same seed draws the same case).
#[derive(Clone, Debug)]
pub struct SoakCase {
    pub seed: u64,
    pub flash: FlashConfig,
    pub ftl: FtlConfig,
    pub faults: Faults,
    pub io: CheckedIo,
    pub crash: crate::CrashTestConfig,
}

/// Largest device a soak case builds (its crash test fills it and holds it in RAM).
pub const SOAK_DEVICE_BYTES_MAX: u64 = 16 << 20;

/// Draws a case that validation accepts (draws again, from the same stream, until one is).
pub fn draw_case(seed: u64) -> SoakCase {
    let mut rng = nearflash_sim::SimRng::seed_from_u64(seed);
    let r = &mut rng;
    loop {
        let between = |r: &mut nearflash_sim::SimRng, lo: u64, hi: u64| lo + r.below(hi - lo + 1);
        let unit = |r: &mut nearflash_sim::SimRng| r.below(1 << 20) as f64 / f64::from(1 << 20);
        let mut flash = FlashConfig {
            channels: between(r, 1, 8) as u32,
            packages_per_channel: between(r, 1, 2) as u32,
            dies_per_package: between(r, 1, 2) as u32,
            planes_per_die: between(r, 1, 4) as u32,
            blocks_per_plane: between(r, 8, 32) as u32,
            pages_per_block: between(r, 4, 32) as u32,
            // Any size: sector multiples and not.
            page_size_bytes: between(r, 512, 8192) as u32,
            oob_size_bytes: between(r, 40, 512) as u32,
            read_latency_us: 1.0 + 99.0 * unit(r),
            program_latency_us: 10.0 + 2990.0 * unit(r),
            erase_latency_us: 100.0 + 4900.0 * unit(r),
            read_latency_by_page_type_us: None,
            program_latency_by_page_type_us: None,
            channel_rate_mb_s: 20.0 + 980.0 * unit(r),
            command_overhead_ns: r.below(500),
            endurance_pe_cycles: 100_000,
            program_fail_probability: 0.0,
            erase_fail_probability: 0.0,
            media: Default::default(),
            one_shot_pages: 1,
        };
        let geometry_bytes = [
            flash.channels,
            flash.packages_per_channel,
            flash.dies_per_package,
            flash.planes_per_die,
            flash.blocks_per_plane,
            flash.pages_per_block,
            flash.page_size_bytes,
        ]
        .iter()
        .map(|&x| u64::from(x))
        .product::<u64>();
        let ftl = FtlConfig {
            over_provisioning_percent: 40.0 * unit(r),
            gc_policy: [
                GcPolicy::RoundRobin,
                GcPolicy::Greedy,
                GcPolicy::CostBenefit,
            ][r.below(3) as usize],
            gc_foreground_free_superblocks: between(r, 1, 3) as u32,
            gc_idle_threshold_us: 2000.0 * unit(r),
            gc_background_free_superblocks: r.below(7) as u32,
            gc_parallel_copies: between(r, 1, 8) as u32,
            wear_leveling_spread_pe: between(r, 1, 20) as u32,
            spare_blocks_per_plane: r.below(4) as u32,
            checkpoint_interval_us: if r.chance(0.2) {
                0.0
            } else {
                200.0 + 9800.0 * unit(r)
            },
            scratchpad_bytes: 1 << 20,
            mapping_cache_bytes: None,
            mapping: Default::default(),
            slc_cache: Default::default(),
            fdp: Default::default(),
        };
        let faults = draw_faults(r);
        faults.apply(&mut flash);
        let queue_depth = between(r, 1, 32) as u32;
        let io = CheckedIo {
            requests: between(r, 100, 600),
            queue_depth,
            max_request_sectors: between(r, 1, 128),
            span_sectors: u64::MAX,
            write_percent: between(r, 20, 90),
            check_every_event: true,
        };
        let crash = crate::CrashTestConfig {
            ops_per_seed: between(r, 100, 400) as usize,
            queue_depth: queue_depth as usize,
            max_request_sectors: between(r, 1, 128),
            prefill: r.chance(0.8),
            ops_after_recovery: between(r, 20, 150) as usize,
            second_cut: r.chance(0.7),
        };
        if geometry_bytes <= SOAK_DEVICE_BYTES_MAX
            && flash.validate().is_ok()
            && ftl.validate(&flash).is_ok()
        {
            // Drawn last, so that adding media errors left every earlier seed's case as it
            // was (the seeds pinned in tests/soak_cases.rs).
            let mut faults = faults;
            faults.media = draw_media(r);
            faults.apply(&mut flash);
            flash
                .validate()
                .expect("media errors at their defaults keep a valid flash config valid");
            return SoakCase {
                seed,
                flash,
                ftl,
                faults,
                io,
                crash,
            };
        }
    }
}

/// What one soak case did.
#[derive(Clone, Debug, Default)]
pub struct SoakOutcome {
    pub power_cuts: u64,
    pub requests: u64,
    /// Reads the crash test's device reported uncorrectable (media errors; expected only
    /// in cases that draw them).
    pub uncorrectable_errors: u64,
    /// Why the case failed, if it did.
    pub failure: Option<String>,
}

/// Runs a case: the checked workload, then a power-cut crash test (one or two cuts), both
/// against the reference model. Expected failures (running out of space on failing flash,
/// uncorrectable reads on media with bit errors) are not violations; lost or wrong data,
/// stalls, other I/O errors and panics are.
pub fn run_case(case: &SoakCase) -> SoakOutcome {
    let mut out = SoakOutcome::default();
    let failing = case.faults.blocks_may_retire();
    let media = case.faults.media.is_some();
    // `CheckedOutcome::failed` is keyed by the error's message.
    let expected = |kind: &String| {
        (failing && *kind == IoError::NoSpace.to_string())
            || (media && *kind == IoError::Uncorrectable.to_string())
    };
    let io =
        std::panic::catch_unwind(|| run_checked_io(&case.flash, &case.ftl, &case.io, case.seed));
    match io {
        Err(_) => {
            out.failure = Some("io: the firmware panicked".into());
            return out;
        }
        Ok(Err(e)) => {
            out.failure = Some(format!("io: {e}"));
            return out;
        }
        Ok(Ok(o)) => {
            out.requests += o.completed + o.failed.values().sum::<u64>();
            out.uncorrectable_errors += o
                .failed
                .get(&IoError::Uncorrectable.to_string())
                .copied()
                .unwrap_or(0);
            if o.wrong_reads > 0 {
                out.failure = Some(format!(
                    "io: {} wrong reads, first {:?}",
                    o.wrong_reads, o.first_violation
                ));
                return out;
            }
            if let Some(kind) = o.failed.keys().find(|k| !expected(k)) {
                out.failure = Some(format!("io: requests failed: {kind}"));
                return out;
            }
        }
    }
    let c = crate::run_seed(&case.flash, &case.ftl, &case.crash, case.seed);
    out.power_cuts += 1 + u64::from(c.second_cut_phase.is_some());
    out.requests += c.ops_completed;
    out.uncorrectable_errors += c.uncorrectable_errors;
    if !c.passed() || (!failing && c.no_space_errors > 0) || (!media && c.uncorrectable_errors > 0)
    {
        out.failure = Some(format!(
            "crash test: lost {} wrong {} io errors {} no-space {} uncorrectable {} error {:?} \
             first {:?}",
            c.lost_flushed_writes,
            c.wrong_data_reads,
            c.io_errors,
            c.no_space_errors,
            c.uncorrectable_errors,
            c.error,
            c.first_violation
        ));
    }
    out
}
