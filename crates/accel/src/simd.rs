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
//! An instance whose input and output exceed DDR3L is cut into chunks that fit; each chunk:
//!
//! `ssd_read` (a buffered `read` of the input file: the host's stack, page cache and its copy
//! page cache → user buffer, over NVMe to the SSD) → `copy_in` (host CPU copies user buffer →
//! the accelerator driver's buffer) → `pcie_in` (DMA over PCIe into DDR3L; the first chunk
//! also carries the kernel description) → `compute` (every microblock, its units' data
//! crossing DDR3L) → `pcie_out` → `copy_out` (driver buffer → user buffer) → `ssd_write` (a
//! buffered `write` of the output file, its copy user buffer → page cache, then `fsync`).
//!
//! No phase overlaps another. Every cost is a request served by a resource: the host CPU,
//! PCIe, DDR3L and each worker are FIFO servers, the host's storage path is the host model
//! over NVMe over the FTL device on the event queue; the clock only advances through the
//! queue. Deterministic: one queue, one seeded
//! RNG, the trace hash covers every event.

use crate::config::AccelConfig;
use crate::energy::{Category, EnergyMeter};
use crate::error::AccelError;
use crate::openmp::{self, Share};
use crate::plan::{KernelPlan, DDR_LINE_BYTES};
use crate::report::{InstanceReport, LatencySummaryMs, PhaseInterval, RunReport};
use crate::series::{series_points, Busy, TimeBins};
use crate::server::{transfer, FifoServer};
use crate::ssd::{FileOp, Ssd};
use crate::workload::instances;
use nearflash_flash::FlashConfig;
use nearflash_ftl::FtlConfig;
use nearflash_host::{FileId, HostConfig, PAGE_BYTES};
use nearflash_kernels::{build, Access, Dataset, KernelDesc, ScreenPlan};
use nearflash_nvme::NvmeConfig;
use nearflash_sim::{SimDuration, SimTime};
use std::collections::BTreeMap;

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

/// Bytes an instance reads from its input file and writes to its output file.
fn file_bytes(d: &KernelDesc) -> (u64, u64) {
    let sum = |f: fn(Access) -> bool| -> u64 {
        d.sections
            .iter()
            .filter(|s| f(s.access))
            .map(|s| s.bytes)
            .sum()
    };
    (
        sum(|a| matches!(a, Access::Input | Access::InOut)),
        sum(|a| matches!(a, Access::Output | Access::InOut)),
    )
}

/// Part `c` of `x` split into `n` near-equal parts (the parts sum to `x`).
fn part(x: u64, n: u64, c: u64) -> u64 {
    let at = |k: u64| (u128::from(x) * u128::from(k) / u128::from(n)) as u64;
    at(c + 1) - at(c)
}

fn round_up(x: u64, to: u64) -> u64 {
    x.div_ceil(to) * to
}

pub fn run_simd(spec: &SimdSpec, workload: &str) -> Result<RunReport, AccelError> {
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
    let mut plans: BTreeMap<&'static str, KernelPlan> = BTreeMap::new();
    for s in &specs {
        if !plans.contains_key(s.kernel) {
            let k = build(
                s.kernel,
                spec.dataset,
                ScreenPlan::new(spec.accel.screens_per_microblock),
            )?;
            plans.insert(
                s.kernel,
                KernelPlan::new(k.as_ref(), spec.accel, DDR_LINE_BYTES)?,
            );
        }
    }
    let sim = Simd::new(spec)?;
    let order: Vec<(&KernelPlan, usize)> =
        specs.iter().map(|s| (&plans[s.kernel], s.app)).collect();
    sim.run(&order, workload)
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
}

impl<'a> Simd<'a> {
    fn new(spec: &SimdSpec<'a>) -> Result<Self, AccelError> {
        Ok(Simd {
            cfg: spec.accel,
            host: spec.host,
            ssd: Ssd::format(
                spec.ssd_flash,
                spec.ssd_ftl,
                spec.ssd_nvme,
                spec.host,
                spec.seed,
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
        })
    }

    fn run(
        mut self,
        order: &[(&KernelPlan, usize)],
        workload: &str,
    ) -> Result<RunReport, AccelError> {
        // Each instance's files: input then output, in a slot of the largest instance's size.
        // Instances run one after another, so when the SSD cannot hold every slot later
        // instances reuse earlier slots.
        let group = self.ssd.dev().layout().group_bytes();
        let slot = order
            .iter()
            .map(|(p, _)| {
                let (i, o) = file_bytes(&p.desc);
                round_up(i, group) + round_up(o, group)
            })
            .max()
            .unwrap_or(group)
            .max(group);
        let capacity = self.ssd.dev().logical_bytes();
        let slots = capacity / slot;
        if slots == 0 {
            return Err(AccelError::DoesNotFit {
                needed_bytes: slot,
                capacity_bytes: capacity,
            });
        }
        let preload: Vec<(u64, u64)> = order
            .iter()
            .enumerate()
            .take(slots as usize)
            .map(|(i, (p, _))| (i as u64 * slot, round_up(file_bytes(&p.desc).0, PAGE_BYTES)))
            .collect();
        self.ssd.preload(&preload, self.host.io_request_bytes)?;
        self.start = self.ssd.now();
        self.start_series();
        let events_start = self.ssd.events();
        let ssd_busy_start = self.ssd.device_busy();
        let ftl_start = self.ssd.dev().stats().clone();
        let mut reports = Vec::with_capacity(order.len());
        for (i, (plan, app)) in order.iter().enumerate() {
            let base = (i as u64 % slots) * slot;
            let started = self.ssd.now().since(self.start).as_ns();
            let chunks = self.instance(i, plan, base)?;
            reports.push(InstanceReport {
                kernel: plan.desc.name,
                app: *app,
                latency_ns: self.ssd.now().since(self.start).as_ns(),
                started_ns: started,
                lock_wait_ns: 0,
                input_bytes: plan.desc.input_bytes(),
                chunks,
            });
        }
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
        Ok(RunReport {
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
            flash_die_busy_ns: ssd_busy_end.0 - ssd_busy_start.0,
            flash_channel_busy_ns: ssd_busy_end.1 - ssd_busy_start.1,
            flash_read_bytes: ftl_end.host_read_bytes - ftl_start.host_read_bytes,
            flash_write_bytes: ftl_end.host_write_bytes - ftl_start.host_write_bytes,
            ddr_hit_groups: 0,
            ddr_miss_groups: 0,
            flashvisor_messages: 0,
            reused_instances: order.len().saturating_sub(slots as usize),
            flash_needed_bytes: slot * order.len() as u64,
            flash_capacity_bytes: capacity,
            host_cpu_busy_ns: self.host_cpu.busy_ns(),
            host_dram_busy_ns: self.dram.ns(),
            ssd_busy_ns: self.ssd_busy.ns(),
            phases: self.phases,
            energy_j,
            series,
            events: self.ssd.events() - events_start,
            trace_hash: self.ssd.trace_hash(),
        })
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

    /// One instance, chunk by chunk; returns the chunk count.
    fn instance(&mut self, i: usize, plan: &KernelPlan, base: u64) -> Result<u32, AccelError> {
        let (in_bytes, out_bytes) = file_bytes(&plan.desc);
        let n = (in_bytes + out_bytes).div_ceil(self.cfg.ddr_bytes).max(1);
        let out_base = base + round_up(in_bytes, self.ssd.dev().layout().group_bytes());
        // Each instance has its own files (a slot reused for lack of space holds new files).
        let file = |ssd: &mut Ssd, at: u64, bytes: u64| -> Result<Option<FileId>, AccelError> {
            (bytes > 0).then(|| ssd.add_file(at, bytes)).transpose()
        };
        let input = file(&mut self.ssd, base, in_bytes)?;
        let output = file(&mut self.ssd, out_base, out_bytes)?;
        for c in 0..n {
            let chunk = c as u32;
            let (in_off, in_c) = (in_bytes * c / n, part(in_bytes, n, c));
            let (out_off, out_c) = (out_bytes * c / n, part(out_bytes, n, c));
            self.ssd_phase(i, chunk, "ssd_read", FileOp::Read, input, in_off, in_c)?;
            self.copy_phase(i, chunk, "copy_in", in_c);
            let desc = if c == 0 {
                self.cfg.kernel_description_bytes
            } else {
                0
            };
            self.dma_phase(i, chunk, "pcie_in", in_c + desc);
            self.compute_phase(i, chunk, plan, n, c);
            self.dma_phase(i, chunk, "pcie_out", out_c);
            self.copy_phase(i, chunk, "copy_out", out_c);
            self.ssd_phase(
                i,
                chunk,
                "ssd_write",
                FileOp::WriteSync,
                output,
                out_off,
                out_c,
            )?;
        }
        Ok(n as u32)
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

    /// The kernel over the workers, OpenMP-style (`openmp`), on this chunk's share (1/n of
    /// every unit's data and compute).
    fn compute_phase(&mut self, i: usize, chunk: u32, plan: &KernelPlan, n: u64, c: u64) {
        let from = self.ssd.now();
        let end = openmp::run(
            &plan.units,
            |u| Share {
                read_bytes: part(u.read_line_bytes, n, c),
                compute_ns: part(u.compute_ns, n, c),
                write_bytes: part(u.write_line_bytes, n, c),
            },
            &mut self.workers,
            &mut self.occupied_ns,
            &mut self.ddr,
            self.cfg.ddr_bandwidth_mb_s,
            from,
        );
        self.ssd.advance_to(end);
        self.record(i, chunk, "compute", from);
    }

    /// The host model's buffered `read` (or `write` + `fsync`) of `bytes` of `file` at
    /// `offset` over NVMe to the SSD: every CPU cost of the stack (system calls, per request
    /// and per page, the page cache ↔ user copy) is the host model's, from `HostConfig`; it
    /// is charged to the host CPU spread over the phase. Nothing to move, nothing to call.
    #[allow(clippy::too_many_arguments)]
    fn ssd_phase(
        &mut self,
        i: usize,
        chunk: u32,
        phase: &'static str,
        op: FileOp,
        file: Option<FileId>,
        offset: u64,
        bytes: u64,
    ) -> Result<(), AccelError> {
        let from = self.ssd.now();
        if bytes > 0 {
            let file = file.expect("a file with bytes to move exists");
            let cpu_before = self.ssd.host_stats().cpu_busy_ns;
            self.ssd.file_io(op, file, offset, bytes)?;
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
