//! Functional fidelity end to end: kernels compute real data through the simulated flash and
//! every instance is verified against its reference; timing is identical to a timing run;
//! injected faults (a flipped input byte, a lost write-back) fail verification; two kernels
//! whose output sections overlap are serialized by the range lock and both verify.

mod common;

use common::{flashabacus, test_min};
use nearflash_accel::machine::{Instance, Machine};
use nearflash_accel::plan::KernelPlan;
use nearflash_accel::{
    layout::Layout, run_workload, run_workload_functional, verified, AccelError, Fault,
    FunctionalRun, RunSpec, SchedulerKind, FUNCTIONAL_MAX_BYTES_DEFAULT,
};
use nearflash_flash::{FlashConfig, Geometry};
use nearflash_ftl::layout::Layout as FtlLayout;
use nearflash_ftl::FtlConfig;
use nearflash_kernels::{build, Dataset, Kernel, ScreenPlan};

type Device = (FlashConfig, FtlConfig, nearflash_accel::AccelConfig);

fn spec(dev: &Device, kind: SchedulerKind, dataset: Dataset) -> RunSpec<'_> {
    RunSpec {
        accel: &dev.2,
        flash: &dev.0,
        ftl: &dev.1,
        scheduler: kind,
        dataset,
        seed: 5,
    }
}

fn functional(
    dev: &Device,
    kind: SchedulerKind,
    workload: &str,
    dataset: Dataset,
) -> Result<FunctionalRun, AccelError> {
    run_workload_functional(
        &spec(dev, kind, dataset),
        workload,
        FUNCTIONAL_MAX_BYTES_DEFAULT,
    )
}

fn assert_verifies(dev: &Device, kind: SchedulerKind, workload: &str) {
    let r = functional(dev, kind, workload, Dataset::Mini)
        .unwrap_or_else(|e| panic!("{workload} under {kind}: {e}"));
    assert_eq!(r.checks.len(), r.report.instances.len());
    assert!(r.checks.iter().all(|c| c.result.is_ok()));
}

#[test]
fn scratch() {
    let dev = flashabacus();
    for w in ["atax", "bfs", "wordcount", "gemm"] {
        for kind in SchedulerKind::ALL {
            let t = std::time::Instant::now();
            assert_verifies(&dev, kind, w);
            eprintln!("{w} {kind} {:?}", t.elapsed());
        }
    }
}
