//! The conventional baseline "SIMD" (seed 000 §3.1 Fig. 3a, §5 "Accelerators"): the same
//! low-power accelerator (LWPs, DDR3L, PCIe) without its flash, fed by a host that reads files
//! from a discrete NVMe SSD (Intel 750 class: the project's own `nearflash-ftl` device behind
//! the `nearflash-nvme` front end) through its storage stack (the `nearflash-host` model,
//! buffered I/O through its page cache; `ssd` says why). Each kernel runs OpenMP-style over all worker LWPs: the screens
//! of a parallel microblock are split across the workers, a serial microblock runs on one
//! worker while the others wait at the barrier.
//!
//! Instances run one after another (SIMD executes one data-processing instance at a time
//! across all LWPs; §5.2: it "cannot process data before the data are brought by the host").
//! An instance runs in passes (`passes`): one when its input and output fit DDR3L, else
//! one per group of screens of each microblock that fits. Each pass:
//!
//! `ssd_read` (buffered `read`s of the input file pages the pass is first to need: the
//! host's stack, page cache and its copy page cache → user buffer, over NVMe to the SSD) →
//! `copy_in` (host CPU copies user buffer → the accelerator driver's buffer) → `pcie_in`
//! (DMA over PCIe into DDR3L; the first pass also carries the kernel description) →
//! `compute` (the pass's units, their data crossing DDR3L) → `pcie_out` → `copy_out`
//! (driver buffer → user buffer) → `ssd_write` (buffered `write`s of the output file pages
//! the pass is last to write, their copy user buffer → page cache, then one `fsync`).
//!
//! No phase overlaps another. Every cost is a request served by a resource: the host CPU,
//! PCIe, DDR3L and each worker are FIFO servers, the host's storage path is the host model
//! over NVMe over the FTL device on the event queue; the clock only advances through the
//! queue. Deterministic: one queue, one seeded RNG, the trace hash covers every event.
//!
//! Two fidelities, same events: in functional fidelity (`run_simd_functional`) the SSD
//! stores data and `data` moves real bytes at the phases above — through the SSD, host
//! memory, DDR3L and the kernels' own code — and verifies every instance's outputs as read
//! back from the SSD.

mod data;
mod passes;

pub(crate) use passes::part;

use crate::config::AccelConfig;
use crate::energy::{Category, EnergyMeter};
use crate::error::AccelError;
use crate::functional::{Fault, InstanceCheck};
use crate::openmp;
use crate::report::{InstanceReport, LatencySummaryMs, PhaseInterval, RunReport};
use crate::run::{verified, FunctionalRun};
use crate::series::{series_points, Busy, TimeBins};
use crate::server::{transfer, FifoServer};
use crate::ssd::{FileOp, Ssd};
use crate::workload::instances;
use data::SimdData;
use nearflash_blockdev::SECTOR_BYTES;
use nearflash_flash::FlashConfig;
use nearflash_ftl::FtlConfig;
use nearflash_host::{FileId, HostConfig, PAGE_BYTES};
use nearflash_kernels::Dataset;
use nearflash_nvme::NvmeConfig;
use nearflash_sim::{SimDuration, SimTime};
use passes::{Pass, SimdKernel};
use std::collections::BTreeMap;
use std::ops::Range;

/// Everything a SIMD run needs besides the workload.
pub struct SimdSpec<'a> {
    pub accel: &'a AccelConfig,
    pub host: &'a HostConfig,
    /// The SSD's NVMe front end and PCIe link.
    pub ssd_nvme: &'a NvmeConfig,
    pub ssd_flash: &'a FlashConfig,
    pub ssd_ftl: &'a FtlConfig,
    pub dataset: Dataset,
    pub seed: u64,
}

fn round_up(x: u64, to: u64) -> u64 {
    x.div_ceil(to) * to
}

/// The workload on the SIMD baseline in timing fidelity.
pub fn run_simd(spec: &SimdSpec, workload: &str) -> Result<RunReport, AccelError> {
    let (kernels, specs) = prepare(spec, workload)?;
    let order: Vec<(&SimdKernel, usize)> =
        specs.iter().map(|(k, app)| (&kernels[k], *app)).collect();
    Simd::new(spec, None)?.run(&order, workload)
}

/// The workload on the SIMD baseline in functional fidelity: real data through the SSD, host
/// memory and DDR3L, every instance verified; timing identical to `run_simd`'s. Refuses
/// (before running) a workload whose data would take more than `max_bytes` of memory; any
/// wrong output is `AccelError::Verification` carrying every instance's verdict.
pub fn run_simd_functional(
    spec: &SimdSpec,
    workload: &str,
    max_bytes: u64,
) -> Result<FunctionalRun, AccelError> {
    let (report, checks) = run_simd_checked(spec, workload, max_bytes, None)?;
    verified(report, checks)
}

/// `run_simd_functional` with an injected fault (tests show verification catches it): the
/// report and every instance's verdict, passed or not.
pub fn run_simd_checked(
    spec: &SimdSpec,
    workload: &str,
    max_bytes: u64,
    fault: Option<Fault>,
) -> Result<(RunReport, Vec<InstanceCheck>), AccelError> {
    let (kernels, specs) = prepare(spec, workload)?;
    let order: Vec<(&SimdKernel, usize)> =
        specs.iter().map(|(k, app)| (&kernels[k], *app)).collect();
    let needed = functional_bytes(&kernels, &order);
    if needed > max_bytes {
        return Err(AccelError::FunctionalTooLarge {
            needed_mib: needed.div_ceil(1 << 20),
            max_mib: max_bytes >> 20,
        });
    }
    let mut data = SimdData::new(&kernels)?;
    if let Some(f) = fault {
        data.inject(f);
    }
    let mut sim = Simd::new(spec, Some(data))?;
    let ran = sim.run_instances(&order)?;
    let checks = sim.data.take().expect("functional").into_checks();
    assert_eq!(checks.len(), order.len(), "every instance verified");
    Ok((sim.report(ran, &order, workload), checks))
}

/// Each distinct kernel as SIMD runs it, and the instances as (kernel, application).
#[allow(clippy::type_complexity)]
fn prepare(
    spec: &SimdSpec,
    workload: &str,
) -> Result<
    (
        BTreeMap<&'static str, SimdKernel>,
        Vec<(&'static str, usize)>,
    ),
    AccelError,
> {
    spec.accel.validate()?;
    spec.host.validate()?;
    if spec.host.copies_per_direction == 0 {
        return Err(AccelError::Config {
            field: "host.copies_per_direction",
            reason: "SIMD's buffered file I/O copies every byte between the page cache and \
                     the user buffer at least once"
                .into(),
        });
    }
    let specs = instances(workload)?;
    let mut kernels = BTreeMap::new();
    for s in &specs {
        if !kernels.contains_key(s.kernel) {
            kernels.insert(
                s.kernel,
                SimdKernel::new(s.kernel, spec.dataset, spec.accel)?,
            );
        }
    }
    Ok((kernels, specs.iter().map(|s| (s.kernel, s.app)).collect()))
}

/// Bytes a functional run holds in memory, roughly: each kernel's generated input and
/// reference; the running instance's arrays in host memory and in DDR3L, and its files in
/// host memory's pages; every instance's files on the SSD (each page once, twice for
/// the flash pages a rewrite leaves until GC).
fn functional_bytes(
    kernels: &BTreeMap<&'static str, SimdKernel>,
    order: &[(&SimdKernel, usize)],
) -> u64 {
    let sections = |k: &SimdKernel| -> u64 { k.desc().sections.iter().map(|s| s.bytes).sum() };
    let files = |k: &SimdKernel| k.files.input_bytes + k.files.output_bytes;
    let per_kernel: u64 = kernels.values().map(|k| 2 * sections(k)).sum();
    let running = order
        .iter()
        .map(|(k, _)| 2 * sections(k) + files(k))
        .max()
        .unwrap_or(0);
    let stored: u64 = order.iter().map(|(k, _)| 2 * files(k)).sum();
    per_kernel + running + stored
}

struct Simd<'a> {
    cfg: &'a AccelConfig,
    host: &'a HostConfig,
    ssd: Ssd,
    seed: u64,
    host_cpu: FifoServer,
    pcie: FifoServer,
    ddr: FifoServer,
    workers: Vec<FifoServer>,
    /// Per worker: time occupied by its share of a microblock (`openmp::run`).
    occupied_ns: Vec<u64>,
    dram: Busy,
    ssd_busy: Busy,
    phases: Vec<PhaseInterval>,
    start: SimTime,
    /// Functional fidelity's data path (`None` in timing fidelity).
    data: Option<SimdData>,
}

/// The instances run: what the report needs besides the machine's own tallies.
struct Ran {
    instances: Vec<InstanceReport>,
    slots: u64,
    slot_bytes: u64,
    capacity_bytes: u64,
    events_start: u64,
    ssd_busy_start: (u64, u64),
    ftl_start: nearflash_ftl::FtlStats,
}

impl<'a> Simd<'a> {
    fn new(spec: &SimdSpec<'a>, data: Option<SimdData>) -> Result<Self, AccelError> {
        Ok(Simd {
            cfg: spec.accel,
            host: spec.host,
            ssd: Ssd::format(
                spec.ssd_flash,
                spec.ssd_ftl,
                spec.ssd_nvme,
                spec.host,
                spec.seed,
                data.is_some(),
            )?,
            seed: spec.seed,
            host_cpu: FifoServer::default(),
            pcie: FifoServer::default(),
            ddr: FifoServer::default(),
            workers: vec![FifoServer::default(); spec.accel.worker_count()],
            occupied_ns: vec![0; spec.accel.worker_count()],
            dram: Busy::default(),
            ssd_busy: Busy::default(),
            phases: Vec::new(),
            start: SimTime::ZERO,
            data,
        })
    }

    fn run(
        mut self,
        order: &[(&SimdKernel, usize)],
        workload: &str,
    ) -> Result<RunReport, AccelError> {
        let ran = self.run_instances(order)?;
        Ok(self.report(ran, order, workload))
    }

    /// Preconditions the input files, then runs the instances one after another.
    fn run_instances(&mut self, order: &[(&SimdKernel, usize)]) -> Result<Ran, AccelError> {
        // Each instance's files: input then output, in a slot of the largest instance's size.
        // Instances run one after another, so when the SSD cannot hold every slot later
        // instances reuse earlier slots (timing fidelity only: their inputs would be gone).
        let group = self.ssd.dev().layout().group_bytes();
        let slot_bytes = order
            .iter()
            .map(|(k, _)| {
                round_up(k.files.input_bytes, group) + round_up(k.files.output_bytes, group)
            })
            .max()
            .unwrap_or(group)
            .max(group);
        let capacity_bytes = self.ssd.dev().logical_bytes();
        let slots = capacity_bytes / slot_bytes;
        if slots == 0 {
            return Err(AccelError::DoesNotFit {
                needed_bytes: slot_bytes,
                capacity_bytes,
            });
        }
        let reused = order.len().saturating_sub(slots as usize);
        if self.data.is_some() && reused > 0 {
            return Err(AccelError::FunctionalReuse { instances: reused });
        }
        let preload: Vec<(u64, u64)> = order
            .iter()
            .enumerate()
            .take(slots as usize)
            .map(|(i, (k, _))| {
                (
                    i as u64 * slot_bytes,
                    round_up(k.files.input_bytes, PAGE_BYTES),
                )
            })
            .collect();
        let data = self.data.as_ref();
        self.ssd
            .preload(&preload, self.host.io_request_bytes, |offset, len| {
                let Some(d) = data else { return Vec::new() };
                let i = (offset / slot_bytes) as usize;
                let mut out = vec![0u8; len as usize];
                d.input_file_bytes(i, order[i].0, offset - i as u64 * slot_bytes, &mut out);
                out
            })?;
        self.start = self.ssd.now();
        self.start_series();
        let events_start = self.ssd.events();
        let ssd_busy_start = self.ssd.device_busy();
        let ftl_start = self.ssd.dev().stats().clone();
        let mut instances = Vec::with_capacity(order.len());
        for (i, (k, app)) in order.iter().enumerate() {
            let base = (i as u64 % slots) * slot_bytes;
            let started = self.ssd.now().since(self.start).as_ns();
            let chunks = self.instance(i, k, *app, base)?;
            instances.push(InstanceReport {
                kernel: k.desc().name,
                app: *app,
                latency_ns: self.ssd.now().since(self.start).as_ns(),
                started_ns: started,
                lock_wait_ns: 0,
                input_bytes: k.desc().input_bytes(),
                chunks,
            });
        }
        Ok(Ran {
            instances,
            slots,
            slot_bytes,
            capacity_bytes,
            events_start,
            ssd_busy_start,
            ftl_start,
        })
    }

    fn report(self, ran: Ran, order: &[(&SimdKernel, usize)], workload: &str) -> RunReport {
        let reports = ran.instances;
        let ssd_busy_end = self.ssd.device_busy();
        let ftl_end = self.ssd.dev().stats();
        let makespan = self.ssd.now().since(self.start).as_ns().max(1);
        let input_bytes: u64 = reports.iter().map(|r| r.input_bytes).sum();
        let latencies: Vec<u64> = reports.iter().map(|r| r.latency_ns).collect();
        let mut lwp_busy_ns = vec![0, 0];
        lwp_busy_ns.extend(self.workers.iter().map(FifoServer::busy_ns));
        let meter = self.energy_meter(&lwp_busy_ns);
        let workers: Vec<&TimeBins> = self.workers.iter().map(FifoServer::bins).collect();
        let series = series_points(&workers, meter.power_series(makespan), makespan);
        let energy_j = meter.report(makespan);
        RunReport {
            scheduler: "simd",
            workload: workload.to_string(),
            seed: self.seed,
            sim_time_ns: makespan,
            input_bytes,
            throughput_mb_s: input_bytes as f64 / (makespan as f64 / 1e9) / 1e6,
            latency_ms: LatencySummaryMs::of(&latencies),
            instances: reports,
            lwp_utilization: lwp_busy_ns
                .iter()
                .map(|&b| b as f64 / makespan as f64)
                .collect(),
            lwp_busy_ns,
            worker_occupied_ns: self.occupied_ns,
            ddr_busy_ns: self.ddr.busy_ns(),
            pcie_busy_ns: self.pcie.busy_ns(),
            flash_die_busy_ns: ssd_busy_end.0 - ran.ssd_busy_start.0,
            flash_channel_busy_ns: ssd_busy_end.1 - ran.ssd_busy_start.1,
            flash_read_bytes: ftl_end.host_read_bytes - ran.ftl_start.host_read_bytes,
            flash_write_bytes: ftl_end.host_write_bytes - ran.ftl_start.host_write_bytes,
            ddr_hit_groups: 0,
            ddr_miss_groups: 0,
            flashvisor_messages: 0,
            reused_instances: order.len().saturating_sub(ran.slots as usize),
            flash_needed_bytes: ran.slot_bytes * order.len() as u64,
            flash_capacity_bytes: ran.capacity_bytes,
            host_cpu_busy_ns: self.host_cpu.busy_ns(),
            host_dram_busy_ns: self.dram.ns(),
            ssd_busy_ns: self.ssd_busy.ns(),
            phases: self.phases,
            energy_j,
            series,
            events: self.ssd.events() - ran.events_start,
            trace_hash: self.ssd.trace_hash(),
        }
    }

    /// Fig. 13 for SIMD: the host CPU and DRAM and PCIe move data, the LWPs (no Flashvisor
    /// or Storengine: all eight are the OpenMP machine, LWP0/1 idle) and DDR3L compute, the
    /// SSD serves storage.
    fn energy_meter(&self, lwp_busy_ns: &[u64]) -> EnergyMeter {
        let (c, h) = (self.cfg, self.host);
        let mut m = EnergyMeter::default();
        let idle = TimeBins::default();
        let mut lwp_bins = vec![&idle, &idle];
        lwp_bins.extend(self.workers.iter().map(FifoServer::bins));
        for (i, (&b, bins)) in lwp_busy_ns.iter().zip(lwp_bins).enumerate() {
            m.add(
                format!("lwp{i}"),
                Category::Computation,
                c.lwp_active_power_w,
                c.lwp_idle_power_w,
                b,
                (bins, 1),
            );
        }
        m.add(
            "ddr3l",
            Category::Computation,
            c.ddr_power_w,
            c.ddr_idle_power_w,
            self.ddr.busy_ns(),
            (self.ddr.bins(), 1),
        );
        m.add(
            "pcie",
            Category::DataMovement,
            c.pcie_power_w,
            c.pcie_idle_power_w,
            self.pcie.busy_ns(),
            (self.pcie.bins(), 1),
        );
        m.add(
            "host_cpu",
            Category::DataMovement,
            h.cpu_active_power_w,
            h.cpu_idle_power_w,
            self.host_cpu.busy_ns(),
            (self.host_cpu.bins(), 1),
        );
        m.add(
            "host_dram",
            Category::DataMovement,
            h.dram_active_power_w,
            h.dram_idle_power_w,
            self.dram.ns(),
            (self.dram.bins(), 1),
        );
        m.add(
            "ssd",
            Category::StorageAccess,
            h.ssd_active_power_w,
            h.ssd_idle_power_w,
            self.ssd_busy.ns(),
            (self.ssd_busy.bins(), 1),
        );
        m
    }

    fn start_series(&mut self) {
        let t = self.start;
        for s in [&mut self.host_cpu, &mut self.pcie, &mut self.ddr] {
            s.start_series(t);
        }
        for w in &mut self.workers {
            w.start_series(t);
        }
        self.dram.start_series(t);
        self.ssd_busy.start_series(t);
    }

    /// One instance, pass by pass; returns the pass count (the report's chunks). In
    /// functional fidelity its outputs are then read back from the SSD and verified.
    fn instance(
        &mut self,
        i: usize,
        k: &SimdKernel,
        app: usize,
        base: u64,
    ) -> Result<u32, AccelError> {
        let files = &k.files;
        let out_base = base + round_up(files.input_bytes, self.ssd.dev().layout().group_bytes());
        // Each instance has its own files (a slot reused for lack of space holds new files).
        let file = |ssd: &mut Ssd, at: u64, bytes: u64| -> Result<Option<FileId>, AccelError> {
            (bytes > 0).then(|| ssd.add_file(at, bytes)).transpose()
        };
        let input = file(&mut self.ssd, base, files.input_bytes)?;
        let output = file(&mut self.ssd, out_base, files.output_bytes)?;
        if let Some(d) = self.data.as_mut() {
            d.begin(i, k);
        }
        for (j, pass) in k.passes.iter().enumerate() {
            let chunk = u32::try_from(j).expect("passes fit in u32");
            self.ssd_phase(i, chunk, FileOp::Read, (input, base), &pass.ssd_read, k)?;
            self.copy_phase(i, chunk, "copy_in", pass.in_bytes);
            let desc = if j == 0 {
                self.cfg.kernel_description_bytes
            } else {
                0
            };
            if let Some(d) = self.data.as_mut() {
                d.copy_in(k, pass);
            }
            self.dma_phase(i, chunk, "pcie_in", pass.in_bytes + desc);
            self.compute_phase(i, chunk, k, pass);
            self.dma_phase(i, chunk, "pcie_out", pass.out_bytes);
            if let Some(d) = self.data.as_mut() {
                d.copy_out(k, pass);
            }
            self.copy_phase(i, chunk, "copy_out", pass.out_bytes);
            self.ssd_phase(
                i,
                chunk,
                FileOp::Write,
                (output, out_base),
                &pass.ssd_write,
                k,
            )?;
        }
        if self.data.is_some() {
            self.verify(k, app, (base, out_base))?;
        }
        Ok(k.passes.len() as u32)
    }

    /// Functional fidelity, untimed: the instance's files as the SSD holds them now (the
    /// output file; the input file too when a live-out array is an input), verified.
    fn verify(
        &mut self,
        k: &SimdKernel,
        app: usize,
        (base, out_base): (u64, u64),
    ) -> Result<(), AccelError> {
        let files = &k.files;
        let sectors = |bytes: u64| round_up(bytes, SECTOR_BYTES);
        let mut peek = |at: u64, bytes: u64| -> Result<Vec<u8>, AccelError> {
            if bytes == 0 {
                return Ok(Vec::new());
            }
            self.ssd.peek(at, sectors(bytes))
        };
        let output = peek(out_base, files.output_bytes)?;
        let live_input = (k.desc().live_out.iter())
            .filter_map(|n| k.desc().sections.iter().position(|s| s.name == *n))
            .any(|s| files.output_at[s].is_none());
        let input = if live_input {
            peek(base, files.input_bytes)?
        } else {
            Vec::new()
        };
        self.data
            .as_mut()
            .expect("functional")
            .verify(app, k, &output, &input);
        // Nothing reads these files again: host memory lets their pages go.
        self.ssd
            .forget(base, round_up(files.input_bytes, PAGE_BYTES));
        self.ssd
            .forget(out_base, round_up(files.output_bytes, PAGE_BYTES));
        Ok(())
    }

    fn record(&mut self, instance: usize, chunk: u32, phase: &'static str, from: SimTime) {
        let rel = |t: SimTime| t.since(self.start).as_ns();
        let iv = PhaseInterval {
            instance,
            chunk,
            phase,
            start_ns: rel(from),
            end_ns: rel(self.ssd.now()),
        };
        self.phases.push(iv);
    }

    /// Host CPU: one system call (into the accelerator's driver), then the copies of every
    /// byte besides the page cache ↔ user buffer one the host model makes in `ssd_phase`
    /// (`copies_per_direction` counts both; `run_simd` checks it is at least 1).
    fn copy_phase(&mut self, i: usize, chunk: u32, phase: &'static str, bytes: u64) {
        let from = self.ssd.now();
        let ns = self.host.syscall_ns
            + u64::from(self.host.copies_per_direction - 1) * self.host.copy_ns(bytes);
        let end = self.host_cpu.serve(from, SimDuration::from_ns(ns));
        self.ssd.advance_to(end);
        self.dram.add(from, end);
        self.record(i, chunk, phase, from);
    }

    /// A DMA between host DRAM and DDR3L over PCIe: the link and the DDR3L port each serve
    /// the bytes; the phase ends when both have.
    fn dma_phase(&mut self, i: usize, chunk: u32, phase: &'static str, bytes: u64) {
        let from = self.ssd.now();
        let from_cpu = self
            .host_cpu
            .serve(from, SimDuration::from_ns(self.host.syscall_ns));
        let link = self
            .pcie
            .serve(from_cpu, transfer(bytes, self.cfg.pcie_bandwidth_mb_s));
        let port = self
            .ddr
            .serve(from_cpu, transfer(bytes, self.cfg.ddr_bandwidth_mb_s));
        let end = link.max(port);
        self.ssd.advance_to(end);
        self.dram.add(from_cpu, end);
        self.record(i, chunk, phase, from);
    }

    /// The pass's units over the workers, OpenMP-style (`openmp`); in functional fidelity
    /// they compute on the DDR3L image.
    fn compute_phase(&mut self, i: usize, chunk: u32, k: &SimdKernel, pass: &Pass) {
        let from = self.ssd.now();
        let end = openmp::run(
            &pass.unit_plans(&k.plan),
            pass.share(),
            &mut self.workers,
            &mut self.occupied_ns,
            &mut self.ddr,
            self.cfg.ddr_bandwidth_mb_s,
            from,
        );
        if let Some(d) = self.data.as_mut() {
            d.compute(k, pass);
        }
        self.ssd.advance_to(end);
        self.record(i, chunk, "compute", from);
    }

    /// The host model's buffered `read`s of `runs` of `file` (at device offset `base`), or
    /// its `write`s of them then one `fsync`, over NVMe to the SSD: every CPU cost of the
    /// stack (system calls, per request and per page, the page cache ↔ user copy) is the
    /// host model's, from `HostConfig`; it is charged to the host CPU spread over the phase.
    /// Nothing to move, nothing to call. In functional fidelity the bytes read land in the
    /// host's copy of the instance and the bytes written come from it.
    fn ssd_phase(
        &mut self,
        i: usize,
        chunk: u32,
        op: FileOp,
        (file, base): (Option<FileId>, u64),
        runs: &[Range<u64>],
        k: &SimdKernel,
    ) -> Result<(), AccelError> {
        let phase = match op {
            FileOp::Read => "ssd_read",
            FileOp::Write => "ssd_write",
        };
        let from = self.ssd.now();
        if !runs.is_empty() {
            let file = file.expect("a file with bytes to move exists");
            let cpu_before = self.ssd.host_stats().cpu_busy_ns;
            for r in runs {
                assert!(r.start < r.end, "runs are not empty");
                let len = r.end - r.start;
                if op == FileOp::Write {
                    if let Some(d) = self.data.as_ref() {
                        let mut bytes = vec![0u8; len as usize];
                        d.output_file_bytes(k, r.start, &mut bytes);
                        self.ssd.stage(base + r.start, &bytes);
                    }
                }
                self.ssd.file_io(op, file, r.start, len)?;
                if op == FileOp::Read {
                    if let Some(d) = self.data.as_mut() {
                        let mut bytes = vec![0u8; len as usize];
                        self.ssd.host_bytes(base + r.start, &mut bytes);
                        d.landed(k, r.start, &bytes);
                    }
                }
            }
            if op == FileOp::Write {
                self.ssd.fsync(file)?;
            }
            let cpu_ns = self.ssd.host_stats().cpu_busy_ns - cpu_before;
            self.host_cpu.account_spread(from, self.ssd.now(), cpu_ns);
        }
        let end = self.ssd.now();
        self.ssd_busy.add(from, end);
        self.dram.add(from, end);
        self.record(i, chunk, phase, from);
        Ok(())
    }
}
