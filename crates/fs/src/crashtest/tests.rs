use super::*;
use nearflash_ftl::MappingMode;

fn test_min_doc() -> toml::Table {
    include_str!("../../../../configs/test-min.toml")
        .parse()
        .expect("test-min.toml parses")
}

/// The `test-min` preset's flash and FTL, read from `configs/test-min.toml`.
pub(crate) fn test_min() -> (FlashConfig, FtlConfig) {
    let doc = test_min_doc();
    let flash = doc["flash"].clone().try_into().expect("[flash]");
    let ftl = doc["ftl"].clone().try_into().expect("[ftl]");
    (flash, ftl)
}

/// The `test-min` preset's `[write_cache]` (a 256 KiB buffer), enabled, with or without PLP.
fn test_min_write_cache(plp: bool) -> WriteCacheConfig {
    let wc: WriteCacheConfig = test_min_doc()["write_cache"]
        .clone()
        .try_into()
        .expect("[write_cache]");
    WriteCacheConfig {
        enabled: true,
        plp,
        ..wc
    }
}

fn run_with(ftl: &FtlConfig, cfg: &CrashTestConfig, seeds: std::ops::Range<u64>) -> CrashSummary {
    let (flash, _) = test_min();
    let outcomes: Vec<CrashOutcome> = seeds.map(|s| run_seed(&flash, ftl, cfg, s)).collect();
    for o in outcomes.iter().filter(|o| !o.passed()) {
        eprintln!("seed {}: {:?} / {:?}", o.seed, o.first_violation, o.error);
    }
    summarize(&outcomes)
}

fn run(seeds: std::ops::Range<u64>) -> CrashSummary {
    run_with(&test_min().1, &CrashTestConfig::default(), seeds)
}

fn over_write_cache(plp: bool) -> CrashTestConfig {
    CrashTestConfig {
        write_cache: test_min_write_cache(plp),
        ..CrashTestConfig::default()
    }
}

#[test]
fn power_cuts_at_fs_and_ftl_writes_lose_no_committed_file_on_fifty_seeds() {
    let s = run(0..50);
    eprintln!("{s}");
    assert_eq!(s.failed, 0, "{s}");
    assert!(s.durable_files_checked > 100, "{s}");
    for p in TARGETED_PHASES {
        assert!(
            s.cuts_by_phase.get(&p).copied().unwrap_or(0) > 0,
            "no cut at {p:?}: {s}"
        );
    }
}

#[test]
fn a_seed_replays_exactly() {
    let (flash, ftl) = test_min();
    let cfg = CrashTestConfig::default();
    assert_eq!(
        run_seed(&flash, &ftl, &cfg, 7),
        run_seed(&flash, &ftl, &cfg, 7)
    );
}

/// A drive with a DRAM write buffer and no power-loss protection acknowledges writes it has
/// not made durable, and a cut loses what it holds. The FS keeps its promise only through the
/// FLUSHes and the FUA commit records its journal sends: every cut here finds committed
/// files intact, fsck clean, although the buffer held data at many of them.
#[test]
fn power_cuts_behind_a_volatile_write_buffer_lose_no_committed_file_thanks_to_flush_and_fua() {
    let s = run_with(&test_min().1, &over_write_cache(false), 0..8);
    eprintln!("{s}");
    assert_eq!(s.failed, 0, "{s}");
    assert_eq!(s.write_buffer_seeds, 8);
    assert!(s.durable_files_checked > 10, "{s}");
    assert!(
        s.cuts_with_buffered_data > 0,
        "no cut found the buffer holding data: {s}"
    );
    assert!(s.fs_flushes > 0 && s.fs_fua_writes > 0, "{s}");
}

/// The same over page-level mapping, whose FTL packs the buffer's destaged units into fills.
#[test]
fn power_cuts_behind_a_volatile_write_buffer_over_page_mapping_lose_no_committed_file() {
    let ftl = FtlConfig {
        mapping: MappingMode::Page,
        ..test_min().1
    };
    let s = run_with(&ftl, &over_write_cache(false), 0..4);
    eprintln!("{s}");
    assert_eq!(s.failed, 0, "{s}");
}

/// ext4's `barrier=0` over the same drive: the FS sends no FLUSH or FUA, so a cut finds
/// committed transactions (their commit records acknowledged from DRAM) missing from the
/// flash, and the check reports them — the barriers above are what keeps those seeds clean.
#[test]
fn without_barriers_a_volatile_write_buffer_loses_committed_files_and_the_check_sees_it() {
    let mut cfg = over_write_cache(false);
    cfg.fs.barriers = false;
    let s = run_with(&test_min().1, &cfg, 0..8);
    eprintln!("{s}");
    assert_eq!((s.fs_flushes, s.fs_fua_writes), (0, 0), "{s}");
    assert!(s.failed > 0, "no seed lost anything without barriers: {s}");
}

/// With power-loss protection the drive reports no volatile cache, so the FS sends no
/// barrier; the capacitors' hold-up destages the buffer after the cut instead.
#[test]
fn power_cuts_behind_a_write_buffer_with_plp_need_no_barrier() {
    let s = run_with(&test_min().1, &over_write_cache(true), 0..4);
    eprintln!("{s}");
    assert_eq!(s.failed, 0, "{s}");
    assert_eq!((s.fs_flushes, s.fs_fua_writes), (0, 0), "{s}");
}

#[test]
fn a_seed_over_a_write_buffer_replays_exactly() {
    let (flash, ftl) = test_min();
    let cfg = over_write_cache(false);
    assert_eq!(
        run_seed(&flash, &ftl, &cfg, 3),
        run_seed(&flash, &ftl, &cfg, 3)
    );
}

#[test]
#[ignore = "1000 seeds; run with --ignored (about a minute in release)"]
fn power_cuts_on_a_thousand_seeds() {
    let s = run(0..1000);
    eprintln!("{s}");
    assert_eq!(s.failed, 0, "{s}");
}
