//! Crash-test scenarios on the tiny geometry.

use super::*;
use crate::testing::{tiny_flash, tiny_ftl};
use crate::FtlConfig;
use nearflash_flash::FlashConfig;

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

/// On flash without failing blocks the device never runs out of space.
fn assert_clean_and_spacious(outcomes: &[CrashOutcome]) -> CrashSummary {
    let summary = assert_clean(outcomes);
    assert_eq!(summary.no_space_errors, 0, "{summary:?}");
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
    let summary = assert_clean_and_spacious(&outcomes);
    for phase in TARGETED_PHASES {
        let n = summary.cuts_by_phase.get(&phase).copied().unwrap_or(0);
        assert!(n >= 10, "only {n} cuts during {phase:?}: {summary:?}");
    }
    assert!(summary.flushed_writes_checked > 0);
}

#[test]
fn invalid_config_is_an_error_not_a_hang() {
    let cfg = CrashTestConfig {
        queue_depth: 0,
        ..cfg()
    };
    let o = run_seed(&tiny_flash(), &tiny_ftl(), &cfg, 1);
    assert!(
        o.error
            .as_deref()
            .is_some_and(|e| e.contains("queue_depth")),
        "{o:?}"
    );
    assert!(!o.passed());
}

#[test]
fn summary_serializes_phases_in_kebab_case() {
    let outcomes = run_seeds(0..2, &cfg());
    let json = serde_json::to_string(&summarize(&outcomes)).unwrap();
    assert!(json.contains("\"host-write\""), "{json}");
}

/// The long run: `cargo test -p nearflash-ftl --release -- --ignored crash_1000`.
#[test]
#[ignore]
fn crash_1000_seeds() {
    let outcomes = run_seeds(0..1000, &CrashTestConfig::default());
    let summary = assert_clean_and_spacious(&outcomes);
    eprintln!("{summary:?}");
}

/// Other workloads, firmware settings and faults, 300 seeds each:
/// `cargo test -p nearflash-ftl --release -- --ignored crash_variants`.
#[test]
#[ignore]
fn crash_variants() {
    let base = CrashTestConfig::default();
    let flash = tiny_flash();
    let faulty = FlashConfig {
        program_fail_probability: 0.0001,
        erase_fail_probability: 0.001,
        ..tiny_flash()
    };
    // Other shapes: one plane and four channels; one channel, four ways, short blocks;
    // four planes.
    let wide = FlashConfig {
        channels: 4,
        dies_per_package: 1,
        planes_per_die: 1,
        blocks_per_plane: 32,
        ..tiny_flash()
    };
    let deep = FlashConfig {
        channels: 1,
        dies_per_package: 4,
        blocks_per_plane: 20,
        pages_per_block: 8,
        ..tiny_flash()
    };
    let planes4 = FlashConfig {
        packages_per_channel: 2,
        dies_per_package: 1,
        planes_per_die: 4,
        blocks_per_plane: 16,
        ..tiny_flash()
    };
    let variants: Vec<(&str, &FlashConfig, FtlConfig, CrashTestConfig)> = vec![
        ("4-channels-1-plane", &wide, tiny_ftl(), base.clone()),
        ("1-channel-4-ways", &deep, tiny_ftl(), base.clone()),
        ("4-planes", &planes4, tiny_ftl(), base.clone()),
        (
            "round-robin",
            &flash,
            ftl_with(|f| f.gc_policy = crate::GcPolicy::RoundRobin),
            base.clone(),
        ),
        (
            "cost-benefit",
            &flash,
            ftl_with(|f| f.gc_policy = crate::GcPolicy::CostBenefit),
            base.clone(),
        ),
        (
            "small-requests",
            &flash,
            tiny_ftl(),
            CrashTestConfig {
                max_request_sectors: 8,
                ops_per_seed: 1500,
                ..base.clone()
            },
        ),
        (
            "no-prefill",
            &flash,
            tiny_ftl(),
            CrashTestConfig {
                prefill: false,
                ..base.clone()
            },
        ),
        (
            "qd1",
            &flash,
            tiny_ftl(),
            CrashTestConfig {
                queue_depth: 1,
                ..base.clone()
            },
        ),
        (
            "qd32",
            &flash,
            tiny_ftl(),
            CrashTestConfig {
                queue_depth: 32,
                ..base.clone()
            },
        ),
        (
            "frequent-checkpoints",
            &flash,
            ftl_with(|f| f.checkpoint_interval_us = 400.0),
            base.clone(),
        ),
        (
            "no-checkpoints",
            &flash,
            ftl_with(|f| f.checkpoint_interval_us = 0.0),
            base.clone(),
        ),
        (
            "no-background-gc",
            &flash,
            ftl_with(|f| f.gc_background_free_superblocks = 0),
            base.clone(),
        ),
        (
            "program-and-erase-failures",
            &faulty,
            ftl_with(|f| f.spare_blocks_per_plane = 4),
            base.clone(),
        ),
    ];
    let mut failed = Vec::new();
    for (name, flash, ftl, cfg) in &variants {
        let outcomes: Vec<CrashOutcome> = (0..300).map(|s| run_seed(flash, ftl, cfg, s)).collect();
        let summary = summarize(&outcomes);
        eprintln!("{name}: {summary:?}");
        for o in outcomes
            .iter()
            .filter(|o| !o.passed() || o.no_space_errors > 0)
            .take(3)
        {
            eprintln!(
                "  seed {} {:?}: error {:?} first {:?}",
                o.seed, o.cut_phase, o.error, o.first_violation
            );
        }
        let faults = flash.program_fail_probability > 0.0 || flash.erase_fail_probability > 0.0;
        if summary.failed > 0 || (!faults && summary.no_space_errors > 0) {
            failed.push(*name);
        }
    }
    assert!(failed.is_empty(), "failing variants: {failed:?}");
}

fn ftl_with(f: impl FnOnce(&mut FtlConfig)) -> FtlConfig {
    let mut c = tiny_ftl();
    f(&mut c);
    c
}

/// Story: `crashtest --set flash.page_size_bytes=4097` lost acknowledged writes and read
/// garbage. The host addresses 512-byte sectors; the write path copied sector `s` to byte
/// `s × 512` of the group buffer while reads looked for it in page `s / 8` — with 4097-byte
/// pages those differ from the second page on. A page now holds its whole sectors and
/// leaves the tail byte unused.
#[test]
fn page_sizes_that_are_not_a_multiple_of_the_sector_keep_every_acknowledged_write() {
    for page_size_bytes in [4097, 1000, 513] {
        let flash = FlashConfig {
            page_size_bytes,
            ..tiny_flash()
        };
        let outcomes: Vec<_> = (0..8)
            .map(|s| run_seed(&flash, &tiny_ftl(), &cfg(), s))
            .collect();
        let summary = assert_clean_and_spacious(&outcomes);
        assert!(summary.flushed_writes_checked > 0, "{page_size_bytes}");
    }
}

#[test]
fn a_page_smaller_than_one_sector_is_refused_naming_the_field() {
    let flash = FlashConfig {
        page_size_bytes: 511,
        ..tiny_flash()
    };
    let o = run_seed(&flash, &tiny_ftl(), &cfg(), 1);
    let e = o.error.expect("refused");
    assert!(
        e.contains("flash.page_size_bytes") && e.contains("512"),
        "{e}"
    );
}

/// Found by the configuration fuzzer: a tiny device with 1% program failures retires
/// superblocks until the free ones reach the foreground threshold; writes then waited for a
/// free superblock with nothing left that could free one, and the run stalled (the watchdog
/// caught it) instead of failing them with `NoSpace`.
#[test]
fn a_device_shrunk_by_program_failures_fails_writes_instead_of_stalling() {
    let flash = FlashConfig {
        channels: 1,
        packages_per_channel: 2,
        dies_per_package: 1,
        planes_per_die: 3,
        blocks_per_plane: 11,
        pages_per_block: 5,
        page_size_bytes: 1229,
        oob_size_bytes: 188,
        read_latency_us: 42.504980327762084,
        program_latency_us: 869.0645959937211,
        erase_latency_us: 1828.5770151962495,
        channel_rate_mb_s: 754.4951281096543,
        command_overhead_ns: 0,
        program_fail_probability: 0.009817890479690951,
        ..tiny_flash()
    };
    let ftl = FtlConfig {
        over_provisioning_percent: 15.652061096431218,
        gc_policy: crate::GcPolicy::CostBenefit,
        gc_foreground_free_superblocks: 3,
        gc_background_free_superblocks: 0,
        gc_parallel_copies: 8,
        wear_leveling_spread_pe: 3,
        spare_blocks_per_plane: 3,
        checkpoint_interval_us: 0.0,
        gc_idle_threshold_us: 1429.1327330582694,
        ..tiny_ftl()
    };
    let crash = CrashTestConfig {
        ops_per_seed: 150,
        ops_after_recovery: 60,
        queue_depth: 5,
        ..CrashTestConfig::default()
    };
    let o = run_seed(&flash, &ftl, &crash, 9862518920095624078);
    assert!(o.passed(), "{o:?}");
}

/// Found by the configuration fuzzer: on a tiny device of 512-byte one-page groups, the
/// crash test reported lost writes — a sector read back after the cut older than its last
/// acknowledged write. Every such sector had a trim in flight at the cut: the device had
/// applied it, GC had erased the trimmed copy, and recovery found an older one, which the
/// durability promise allows (a trimmed sector may read as data it held before). The
/// reference model now allows it for a trim in flight too (`check_after_crash`).
#[test]
fn erase_failures_on_a_tiny_device_keep_every_acknowledged_write_across_two_cuts() {
    let (flash, ftl) = fuzzer_erase_failure_case(0.006312479301130422);
    let crash = CrashTestConfig {
        ops_per_seed: 150,
        ops_after_recovery: 60,
        queue_depth: 6,
        ..CrashTestConfig::default()
    };
    let o = run_seed(&flash, &ftl, &crash, 850564781103352204);
    assert!(o.passed(), "{o:?}");
}

fn fuzzer_erase_failure_case(erase_fail_probability: f64) -> (FlashConfig, FtlConfig) {
    let flash = FlashConfig {
        channels: 1,
        packages_per_channel: 2,
        dies_per_package: 2,
        planes_per_die: 1,
        blocks_per_plane: 8,
        pages_per_block: 8,
        page_size_bytes: 512,
        oob_size_bytes: 40,
        read_latency_us: 65.45545686676586,
        program_latency_us: 338.9501023098146,
        erase_latency_us: 1772.8126498830388,
        channel_rate_mb_s: 978.554400565171,
        command_overhead_ns: 0,
        erase_fail_probability,
        ..tiny_flash()
    };
    let ftl = FtlConfig {
        over_provisioning_percent: 14.201580907760995,
        gc_policy: crate::GcPolicy::Greedy,
        gc_foreground_free_superblocks: 2,
        gc_idle_threshold_us: 0.0,
        gc_background_free_superblocks: 0,
        gc_parallel_copies: 2,
        wear_leveling_spread_pe: 1,
        spare_blocks_per_plane: 1,
        checkpoint_interval_us: 5402.746451127938,
        ..tiny_ftl()
    };
    (flash, ftl)
}

/// The same tiny device on healthy flash (4 of these 40 seeds tripped the same check).
#[test]
fn the_tiny_fuzzer_device_on_healthy_flash_keeps_every_acknowledged_write() {
    let (flash, ftl) = fuzzer_erase_failure_case(0.0);
    let crash = CrashTestConfig {
        ops_per_seed: 150,
        ops_after_recovery: 60,
        queue_depth: 6,
        ..CrashTestConfig::default()
    };
    let outcomes: Vec<_> = (0..40).map(|s| run_seed(&flash, &ftl, &crash, s)).collect();
    assert_clean_and_spacious(&outcomes);
}

/// Found by the configuration fuzzer: one way per channel (one write point of each kind) with
/// `gc_foreground_free_superblocks = 1`. The cut fell inside a rescue GC run, which had opened
/// the last free superblock; a checkpoint taken during the run already pointed some of the
/// victim's groups at their copies. Recovery trusted the unchanged victim without scanning
/// it, so those copies had no rival and stayed valid in the rescue destination: every data
/// superblock came back closed with valid data, none free, and writes failed with `NoSpace`
/// on healthy flash (nothing lost). Recovery now scans the checkpoint's GC victim, the source
/// wins the tie, and the destination is empty and erased first.
#[test]
fn a_cut_with_the_crash_reserve_in_use_leaves_room_to_collect() {
    let flash = FlashConfig {
        channels: 6,
        packages_per_channel: 1,
        dies_per_package: 1,
        planes_per_die: 1,
        blocks_per_plane: 23,
        pages_per_block: 11,
        page_size_bytes: 512,
        oob_size_bytes: 40,
        read_latency_us: 1.0,
        program_latency_us: 688.7283165123968,
        erase_latency_us: 836.5012162806174,
        channel_rate_mb_s: 20.0,
        command_overhead_ns: 0,
        ..tiny_flash()
    };
    let ftl = FtlConfig {
        over_provisioning_percent: 13.143817085769978,
        gc_policy: crate::GcPolicy::RoundRobin,
        gc_foreground_free_superblocks: 1,
        gc_idle_threshold_us: 0.0,
        gc_background_free_superblocks: 0,
        gc_parallel_copies: 2,
        wear_leveling_spread_pe: 3,
        spare_blocks_per_plane: 3,
        checkpoint_interval_us: 200.0,
        ..tiny_ftl()
    };
    let crash = CrashTestConfig {
        ops_per_seed: 150,
        ops_after_recovery: 60,
        queue_depth: 14,
        ..CrashTestConfig::default()
    };
    let o = run_seed(&flash, &ftl, &crash, 15465475002329844853);
    assert_clean_and_spacious(&[o]);
}

/// Found by the configuration fuzzer once recovery scanned GC victims: a sector trimmed and
/// read back as zeros after the first cut came back with its pre-trim data after the second.
/// The checkpoint recorded the group unmapped, but the unchanged victim still held the old
/// version, and scanning it brought that version back. Recovery now drops scanned versions no
/// newer than the trim the checkpoint records, and keeps that record for the next checkpoint.
#[test]
fn a_trim_seen_after_one_cut_stays_in_effect_after_the_next() {
    let flash = FlashConfig {
        channels: 2,
        packages_per_channel: 1,
        dies_per_package: 1,
        planes_per_die: 1,
        blocks_per_plane: 24,
        pages_per_block: 12,
        page_size_bytes: 3730,
        oob_size_bytes: 143,
        read_latency_us: 57.632375114098586,
        program_latency_us: 775.5593691008492,
        erase_latency_us: 100.0,
        channel_rate_mb_s: 20.0,
        command_overhead_ns: 0,
        ..tiny_flash()
    };
    let ftl = FtlConfig {
        over_provisioning_percent: 2.7297992203078456,
        gc_policy: crate::GcPolicy::Greedy,
        gc_foreground_free_superblocks: 1,
        gc_idle_threshold_us: 0.0,
        gc_background_free_superblocks: 0,
        gc_parallel_copies: 1,
        wear_leveling_spread_pe: 1,
        spare_blocks_per_plane: 3,
        checkpoint_interval_us: 200.0,
        ..tiny_ftl()
    };
    let crash = CrashTestConfig {
        ops_per_seed: 150,
        ops_after_recovery: 60,
        queue_depth: 16,
        ..CrashTestConfig::default()
    };
    let o = run_seed(&flash, &ftl, &crash, 15575372498606895743);
    assert!(o.second_cut_phase.is_some());
    let trims_dropped = o.recovery.trimmed_versions_dropped
        + o.second_recovery
            .as_ref()
            .map_or(0, |r| r.trimmed_versions_dropped);
    assert!(trims_dropped > 0, "{o:?}");
    assert_clean_and_spacious(&[o]);
}

/// The SLC write cache on: host writes land in SLC-mode superblocks, foreground GC folds
/// them, and cuts land in SLC programs, folds and their erases. Recovery finds the SLC
/// superblocks' data through their spare-area records like any other: no acknowledged
/// write is lost, no read is wrong, across two cuts per seed.
#[test]
fn slc_cache_on_keeps_every_acknowledged_write_across_two_cuts() {
    let flash = crate::testing::tiny_slc_flash();
    let ftl = crate::testing::tiny_slc_ftl();
    let outcomes: Vec<CrashOutcome> = (0..12).map(|s| run_seed(&flash, &ftl, &cfg(), s)).collect();
    let summary = assert_clean(&outcomes);
    assert!(summary.seeds == 12, "{summary:?}");
}
