//! One run from names: workload + scheduler + dataset + seed on a device config ⇒ a report.
//! Builds each distinct kernel's plan once, places the instances' sections, and runs the
//! machine.

use crate::config::AccelConfig;
use crate::error::AccelError;
use crate::layout::Layout;
use crate::machine::{Instance, Machine};
use crate::plan::KernelPlan;
use crate::report::RunReport;
use crate::sched::SchedulerKind;
use crate::workload::instances;
use nearflash_flash::{FlashConfig, Geometry};
use nearflash_ftl::layout::Layout as FtlLayout;
use nearflash_ftl::FtlConfig;
use nearflash_kernels::{build, Dataset, ScreenPlan};

/// Everything a run needs besides the workload.
pub struct RunSpec<'a> {
    pub accel: &'a AccelConfig,
    pub flash: &'a FlashConfig,
    pub ftl: &'a FtlConfig,
    pub scheduler: SchedulerKind,
    pub dataset: Dataset,
    pub seed: u64,
}

pub fn run_workload(spec: &RunSpec, workload: &str) -> Result<RunReport, AccelError> {
    spec.accel.validate()?;
    let specs = instances(workload)?;
    let ftl_layout = FtlLayout::new(&Geometry::from_config(spec.flash), spec.ftl);
    let group_bytes = ftl_layout.group_bytes();
    let mut names: Vec<&'static str> = Vec::new();
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
                names.push(s.kernel);
                names.len() - 1
            }
        };
        insts.push(Instance { plan, app: s.app });
    }
    let capacity = ftl_layout.logical_bytes();
    let instance_plans: Vec<usize> = insts.iter().map(|i| i.plan).collect();
    let layout = Layout::place(&plans, &instance_plans, group_bytes, capacity)?;
    let m = Machine::new(
        spec.accel,
        spec.flash,
        spec.ftl,
        spec.scheduler,
        plans,
        insts,
        layout,
        spec.seed,
    )?;
    m.run(workload)
}
