//! The machine end to end on the tiny `test-min` device: same seed ⇒ same report; two kernels
//! whose output sections overlap are serialized by the range lock; a dataset larger than the
//! device and a kernel with a zero-screen microblock are clear errors.

mod common;

use common::test_min;
use nearflash_accel::machine::{Instance, Machine};
use nearflash_accel::plan::KernelPlan;
use nearflash_accel::{layout::Layout, run_workload, AccelError, RunSpec};
use nearflash_accel::{RunReport, SchedulerKind};
use nearflash_flash::Geometry;
use nearflash_ftl::layout::Layout as FtlLayout;
use nearflash_kernels::{build, Dataset, ScreenPlan};

fn run(kind: SchedulerKind, workload: &str, dataset: Dataset) -> Result<RunReport, AccelError> {
    let (flash, ftl, accel) = test_min();
    run_workload(
        &RunSpec {
            accel: &accel,
            flash: &flash,
            ftl: &ftl,
            scheduler: kind,
            dataset,
            seed: 7,
        },
        workload,
    )
}

#[test]
fn same_seed_gives_the_same_report_under_every_scheduler() {
    for kind in SchedulerKind::ALL {
        let a = run(kind, "atax", Dataset::Mini).unwrap();
        let b = run(kind, "atax", Dataset::Mini).unwrap();
        assert_eq!(a, b, "{kind}");
        assert_eq!(a.instances.len(), 6);
        assert!(a.throughput_mb_s > 0.0);
        assert!(a.flash_read_bytes > 0 && a.flash_write_bytes > 0);
    }
}

#[test]
fn a_heterogeneous_mix_runs_24_instances() {
    let r = run(SchedulerKind::IntraO3, "mx2", Dataset::Mini).unwrap();
    assert_eq!(r.instances.len(), 24);
    assert!(r.lwp_utilization[2..].iter().all(|&u| u > 0.0 && u <= 1.0));
}

/// Two GEMM instances at `mini` (A, B inputs shared, C in-out private) under IntraO3 on
/// `layout`; returns (instance 0's latency, instance 1's start).
fn two_gemm(overlap: bool) -> (u64, u64) {
    let (flash, ftl, accel) = test_min();
    let ftl_layout = FtlLayout::new(&Geometry::from_config(&flash), &ftl);
    let group = ftl_layout.group_bytes();
    let k = build("gemm", Dataset::Mini, ScreenPlan::new(2)).unwrap();
    let plans = vec![KernelPlan::new(k.as_ref(), &accel, group).unwrap()];
    let mut layout = Layout::place(&plans, &[0, 0], group, ftl_layout.logical_bytes()).unwrap();
    assert_eq!(layout.offsets[0][1], layout.offsets[1][1], "A is shared");
    assert_ne!(layout.offsets[0][0], layout.offsets[1][0], "C is private");
    if overlap {
        layout.offsets[1][0] = layout.offsets[0][0];
    }
    let instances = vec![Instance { plan: 0, app: 0 }, Instance { plan: 0, app: 1 }];
    let m = Machine::new(
        &accel,
        &flash,
        &ftl,
        SchedulerKind::IntraO3,
        plans,
        instances,
        layout,
        1,
    )
    .unwrap();
    let r = m.run("gemm x2").unwrap();
    (r.instances[0].latency_ns, r.instances[1].started_ns)
}

#[test]
fn overlapping_output_sections_are_serialized_by_the_range_lock() {
    let (end0, start1) = two_gemm(false);
    assert!(start1 < end0, "disjoint outputs run concurrently");
    let (end0, start1) = two_gemm(true);
    assert!(
        start1 >= end0,
        "the second kernel's write lock waits for the first to finish: {start1} < {end0}"
    );
}

#[test]
fn a_dataset_larger_than_the_device_is_an_error() {
    let e = run(SchedulerKind::InterDy, "atax", Dataset::Paper).unwrap_err();
    assert!(matches!(e, AccelError::DoesNotFit { .. }), "{e}");
    assert!(e.to_string().contains("logical bytes"), "{e}");
}

#[test]
fn unknown_workload_and_scheduler_are_named() {
    let e = run(SchedulerKind::InterDy, "nosuch", Dataset::Mini).unwrap_err();
    assert!(e.to_string().contains("nosuch"), "{e}");
    let e = "fifo".parse::<SchedulerKind>().unwrap_err();
    assert!(e.to_string().contains("fifo") && e.to_string().contains("intra-o3"));
}
