//! One run from names: workload + scheduler + dataset + seed on a device config ⇒ a report.
//! Builds each distinct kernel's plan once, places the instances' sections, and runs the
//! machine — in timing fidelity (`run_workload`) or in functional fidelity
//! (`run_workload_functional`: real data through flash, every instance verified).

use crate::config::AccelConfig;
use crate::error::AccelError;
use crate::functional::InstanceCheck;
use crate::layout::Layout;
use crate::machine::{Instance, Machine, Preconditioned};
use crate::plan::KernelPlan;
use crate::report::RunReport;
use crate::sched::SchedulerKind;
use crate::workload::instances;
use nearflash_flash::{FlashConfig, Geometry};
use nearflash_ftl::layout::Layout as FtlLayout;
use nearflash_ftl::FtlConfig;
use nearflash_kernels::{build, Dataset, Kernel, ScreenPlan};

/// Everything a run needs besides the workload.
pub struct RunSpec<'a> {
    pub accel: &'a AccelConfig,
    pub flash: &'a FlashConfig,
    pub ftl: &'a FtlConfig,
    pub scheduler: SchedulerKind,
    pub dataset: Dataset,
    pub seed: u64,
}

/// How much of the device a run models (`timing`: no data, paper-scale runs; `functional`:
/// real data through the simulated flash, every instance verified) — the one `Fidelity`.
pub use nearflash_sim::Fidelity;

/// Default memory limit of a functional run (`run_workload_functional`'s `max_bytes`).
pub const FUNCTIONAL_MAX_BYTES_DEFAULT: u64 = 2048 << 20;

/// A functional run that verified: the timing report (identical to the timing run's) and
/// every instance's verdict (all passed).
#[derive(Clone, Debug)]
pub struct FunctionalRun {
    pub report: RunReport,
    pub checks: Vec<InstanceCheck>,
}

/// Everything `Machine::new` needs, built from names.
struct Prepared {
    plans: Vec<KernelPlan>,
    kernels: Vec<Box<dyn Kernel>>,
    instances: Vec<Instance>,
    layout: Layout,
}

fn prepare(spec: &RunSpec, workload: &str) -> Result<Prepared, AccelError> {
    spec.accel.validate()?;
    let specs = instances(workload)?;
    let ftl_layout = FtlLayout::new(&Geometry::from_config(spec.flash), spec.ftl);
    let group_bytes = ftl_layout.group_bytes();
    let mut names: Vec<&'static str> = Vec::new();
    let mut kernels: Vec<Box<dyn Kernel>> = Vec::new();
    let mut plans = Vec::new();
    let mut insts = Vec::with_capacity(specs.len());
    for s in &specs {
        let plan = match names.iter().position(|n| *n == s.kernel) {
            Some(p) => p,
            None => {
                let k = build(
                    s.kernel,
                    spec.dataset,
                    ScreenPlan::new(spec.accel.screens_per_microblock),
                )?;
                plans.push(KernelPlan::new(k.as_ref(), spec.accel, group_bytes)?);
                kernels.push(k);
                names.push(s.kernel);
                names.len() - 1
            }
        };
        insts.push(Instance { plan, app: s.app });
    }
    let capacity = ftl_layout.logical_bytes();
    let instance_plans: Vec<usize> = insts.iter().map(|i| i.plan).collect();
    let layout = Layout::place(&plans, &instance_plans, group_bytes, capacity)?;
    Ok(Prepared {
        plans,
        kernels,
        instances: insts,
        layout,
    })
}

/// The workload's device after its untimed preconditioning, for `run_workload_from`: the
/// same for every scheduler and cost model of `spec` (only the seed, the device and the
/// workload's inputs decide it).
pub fn precondition(spec: &RunSpec, workload: &str) -> Result<Preconditioned, AccelError> {
    let p = prepare(spec, workload)?;
    Machine::new(
        spec.accel,
        spec.flash,
        spec.ftl,
        spec.scheduler,
        p.plans,
        p.instances,
        p.layout,
        spec.seed,
    )?
    .precondition()
}

/// `run_workload`, started from a copy of `start` (`precondition` of the same workload,
/// seed and device under any scheduler and cost model): the same report, without writing
/// the inputs again. Errors if `start` was preconditioned for other inputs.
pub fn run_workload_from(
    spec: &RunSpec,
    workload: &str,
    start: &Preconditioned,
) -> Result<RunReport, AccelError> {
    let p = prepare(spec, workload)?;
    let m = Machine::from_preconditioned(
        start,
        spec.accel,
        spec.flash,
        spec.ftl,
        spec.scheduler,
        p.plans,
        p.instances,
        p.layout,
        spec.seed,
    )?;
    m.run(workload)
}

pub fn run_workload(spec: &RunSpec, workload: &str) -> Result<RunReport, AccelError> {
    let p = prepare(spec, workload)?;
    let m = Machine::new(
        spec.accel,
        spec.flash,
        spec.ftl,
        spec.scheduler,
        p.plans,
        p.instances,
        p.layout,
        spec.seed,
    )?;
    m.run(workload)
}

/// Bytes a functional run holds in memory, roughly: each kernel's generated input and
/// reference, each instance's DDR3L image and write-back copies, and the flash pages the
/// run programs (the page store keeps every programmed page until GC erases it: preloaded
/// inputs plus every unit's page-group writes, at most the device's raw capacity) and the
/// store's page table.
fn functional_bytes(p: &Prepared, geometry: &Geometry) -> u64 {
    let raw_bytes = geometry.capacity_bytes();
    let page_table = geometry.page_count() * std::mem::size_of::<Option<Box<[u8]>>>() as u64;
    let section_bytes =
        |plan: &KernelPlan| -> u64 { plan.desc.sections.iter().map(|s| s.bytes).sum() };
    let per_kernel: u64 = p.plans.iter().map(|plan| 2 * section_bytes(plan)).sum();
    let per_instance: u64 = p
        .instances
        .iter()
        .map(|i| 2 * section_bytes(&p.plans[i.plan]))
        .sum();
    let preload: u64 = p.layout.preload.iter().map(|r| r.end - r.start).sum();
    let written: u64 = p
        .instances
        .iter()
        .flat_map(|i| p.plans[i.plan].units.iter().flatten())
        .map(|u| u.writes.groups() * p.layout.group_bytes)
        .sum();
    per_kernel + per_instance + (preload + written).min(raw_bytes) + page_table
}

/// The workload in functional fidelity: kernels compute real data that travel through the
/// simulated flash, and every instance's live-out arrays are read back from flash and
/// verified against the kernel's reference. Refuses (before running) a workload whose data
/// would take more than `max_bytes` of memory; any wrong output is
/// `AccelError::Verification` carrying every instance's verdict.
pub fn run_workload_functional(
    spec: &RunSpec,
    workload: &str,
    max_bytes: u64,
) -> Result<FunctionalRun, AccelError> {
    let p = prepare(spec, workload)?;
    let needed = functional_bytes(&p, &Geometry::from_config(spec.flash));
    if needed > max_bytes {
        return Err(AccelError::FunctionalTooLarge {
            needed_mib: needed.div_ceil(1 << 20),
            max_mib: max_bytes >> 20,
        });
    }
    let m = Machine::new_functional(
        spec.accel,
        spec.flash,
        spec.ftl,
        spec.scheduler,
        p.plans,
        p.kernels,
        p.instances,
        p.layout,
        spec.seed,
    )?;
    let (report, checks) = m.run_functional(workload)?;
    verified(report, checks)
}

/// `Ok` when every check passed, else the typed error naming the first failure.
pub fn verified(
    report: RunReport,
    checks: Vec<InstanceCheck>,
) -> Result<FunctionalRun, AccelError> {
    let failed: Vec<&InstanceCheck> = checks.iter().filter(|c| c.result.is_err()).collect();
    match failed.first() {
        None => Ok(FunctionalRun { report, checks }),
        Some(first) => Err(AccelError::Verification {
            failed: failed.len(),
            instance: first.instance,
            first: first.result.clone().expect_err("a failed check"),
            checks: checks.clone(),
        }),
    }
}
