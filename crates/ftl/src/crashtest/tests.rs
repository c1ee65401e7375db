//! Crash-test scenarios on the tiny geometry.

use super::*;
use crate::testing::{tiny_flash, tiny_ftl};

fn cfg() -> CrashTestConfig {
    CrashTestConfig {
        ops_per_seed: 400,
        ops_after_recovery: 150,
        ..CrashTestConfig::default()
    }
}

fn run_seeds(seeds: std::ops::Range<u64>, cfg: &CrashTestConfig) -> Vec<CrashOutcome> {
    seeds
        .map(|s| run_seed(&tiny_flash(), &tiny_ftl(), cfg, s))
        .collect()
}

fn assert_clean(outcomes: &[CrashOutcome]) -> CrashSummary {
    let summary = summarize(outcomes);
    for o in outcomes.iter().filter(|o| !o.passed()) {
        eprintln!(
            "seed {} ({:?}): lost {} wrong {} io {} error {:?} first {:?}",
            o.seed,
            o.cut_phase,
            o.lost_flushed_writes,
            o.wrong_data_reads,
            o.io_errors,
            o.error,
            o.first_violation
        );
    }
    assert_eq!(summary.failed, 0, "{summary:?}");
    summary
}

#[test]
fn same_seed_same_outcome() {
    let a = run_seed(&tiny_flash(), &tiny_ftl(), &cfg(), 5);
    let b = run_seed(&tiny_flash(), &tiny_ftl(), &cfg(), 5);
    assert_eq!(a, b);
}

#[test]
fn cuts_in_every_phase_lose_no_acknowledged_write() {
    let outcomes = run_seeds(0..200, &cfg());
    let summary = assert_clean(&outcomes);
    for phase in TARGETED_PHASES {
        let n = summary.cuts_by_phase.get(&phase).copied().unwrap_or(0);
        assert!(n >= 10, "only {n} cuts during {phase:?}: {summary:?}");
    }
    assert!(summary.flushed_writes_checked > 0);
}

/// The long run: `cargo test -p nearflash-ftl --release -- --ignored crash_1000`.
#[test]
#[ignore]
fn crash_1000_seeds() {
    let outcomes = run_seeds(0..1000, &CrashTestConfig::default());
    let summary = assert_clean(&outcomes);
    eprintln!("{summary:?}");
}
