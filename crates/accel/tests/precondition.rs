//! Story: a reproduction preconditions a workload's device once and starts each of the
//! workload's accelerator runs (four schedulers × two cost models) from a copy. Every such
//! run must report exactly what a run that wrote its own inputs reports — trace hash and
//! event count included — and a copy made for other inputs must be refused, naming them.

mod common;

use common::test_min;
use nearflash_accel::{
    precondition, run_workload, run_workload_from, AccelError, RunSpec, SchedulerKind,
};
use nearflash_flash::FlashConfig;
use nearflash_ftl::FtlConfig;
use nearflash_kernels::Dataset;

fn spec<'a>(
    accel: &'a nearflash_accel::AccelConfig,
    (flash, ftl): (&'a FlashConfig, &'a FtlConfig),
    scheduler: SchedulerKind,
    seed: u64,
) -> RunSpec<'a> {
    RunSpec {
        accel,
        flash,
        ftl,
        scheduler,
        dataset: Dataset::Mini,
        seed,
    }
}

#[test]
fn every_scheduler_and_cost_model_run_from_one_preconditioning_reports_what_a_fresh_run_does() {
    let (flash, ftl, accel) = test_min();
    for workload in ["atax", "mx2"] {
        let start = precondition(
            &spec(&accel, (&flash, &ftl), SchedulerKind::IntraO3, 7),
            workload,
        )
        .unwrap();
        for model in [accel.cost_model, accel.cost_model.other()] {
            let modelled = nearflash_accel::AccelConfig {
                cost_model: model,
                ..accel.clone()
            };
            for kind in SchedulerKind::ALL {
                let fresh =
                    run_workload(&spec(&modelled, (&flash, &ftl), kind, 7), workload).unwrap();
                let shared =
                    run_workload_from(&spec(&modelled, (&flash, &ftl), kind, 7), workload, &start)
                        .unwrap();
                assert_eq!(shared, fresh, "{workload} {kind} {model:?}");
            }
        }
    }
}

#[test]
fn a_preconditioning_of_other_inputs_is_refused_naming_what_differs() {
    let (flash, ftl, accel) = test_min();
    let spec = |seed| spec(&accel, (&flash, &ftl), SchedulerKind::InterDy, seed);
    let start = precondition(&spec(7), "atax").unwrap();
    for (workload, seed, differs) in [
        ("atax", 8, "seed"),
        ("mx2", 7, "the workload's input sections"),
    ] {
        match run_workload_from(&spec(seed), workload, &start) {
            Err(AccelError::NotPreconditionedFor { differs: d }) => assert_eq!(d, differs),
            other => panic!("{workload} seed {seed}: {other:?}"),
        }
    }
    let mut other_ftl = ftl.clone();
    other_ftl.gc_idle_threshold_us += 1.0;
    let e = run_workload_from(
        &RunSpec {
            ftl: &other_ftl,
            ..spec(7)
        },
        "atax",
        &start,
    )
    .unwrap_err();
    assert!(e.to_string().contains("FTL configuration"), "{e}");
}

/// A reproduction's worker threads share one preconditioned device per workload.
#[test]
fn a_preconditioned_device_can_be_shared_between_threads() {
    fn is_send<T: Send + Sync>() {}
    is_send::<nearflash_accel::Preconditioned>();
}
