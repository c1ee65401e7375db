//! Limits emerge from the events, never exceeded: at paper size on the FlashAbacus preset,
//! the flash read rate stays under the backbone's 3.2 GB/s (Table 1), DDR3L and every LWP
//! are busy at most 100% of the run, and the I/O-bound ATAX keeps the dies busier than the
//! workers.

mod common;

use common::flashabacus;
use nearflash_accel::{run_workload, RunSpec, SchedulerKind};
use nearflash_kernels::Dataset;

#[test]
fn paper_atax_respects_backbone_ddr_and_lwp_limits() {
    let (flash, ftl, accel) = flashabacus();
    for kind in [SchedulerKind::InterDy, SchedulerKind::IntraO3] {
        let r = run_workload(
            &RunSpec {
                accel: &accel,
                flash: &flash,
                ftl: &ftl,
                scheduler: kind,
                dataset: Dataset::Paper,
                seed: 1,
            },
            "atax",
        )
        .unwrap();
        let secs = r.sim_time_ns as f64 / 1e9;
        let read_rate = r.flash_read_bytes as f64 / secs;
        assert!(read_rate < 3.2e9, "{kind}: {read_rate} B/s");
        assert!(r.ddr_busy_ns <= r.sim_time_ns);
        assert!(r.lwp_utilization.iter().all(|&u| u <= 1.0), "{kind}");
        let dies = 32.0;
        let die_util = r.flash_die_busy_ns as f64 / dies / r.sim_time_ns as f64;
        let worker_util: f64 = r.lwp_utilization[2..].iter().sum::<f64>() / 6.0;
        assert!(
            die_util > worker_util,
            "{kind}: dies {die_util} workers {worker_util}"
        );
    }
}

/// Heavier (seconds per run in release): a paper-size heterogeneous mix under every scheduler
/// completes all 24 instances and replays identically.
#[test]
#[ignore]
fn paper_mix_runs_under_every_scheduler_and_replays() {
    let (flash, ftl, accel) = flashabacus();
    for kind in SchedulerKind::ALL {
        let spec = RunSpec {
            accel: &accel,
            flash: &flash,
            ftl: &ftl,
            scheduler: kind,
            dataset: Dataset::Paper,
            seed: 1,
        };
        let a = run_workload(&spec, "mx2").unwrap();
        assert_eq!(a.instances.len(), 24);
        if kind == SchedulerKind::IntraO3 {
            assert_eq!(a, run_workload(&spec, "mx2").unwrap());
        }
    }
}
