use super::*;

/// The `test-min` preset's flash and FTL, read from `configs/test-min.toml`.
pub(crate) fn test_min() -> (FlashConfig, FtlConfig) {
    let doc: toml::Table = include_str!("../../../../configs/test-min.toml")
        .parse()
        .expect("test-min.toml parses");
    let flash = doc["flash"].clone().try_into().expect("[flash]");
    let ftl = doc["ftl"].clone().try_into().expect("[ftl]");
    (flash, ftl)
}

fn run(seeds: std::ops::Range<u64>) -> CrashSummary {
    let (flash, ftl) = test_min();
    let cfg = CrashTestConfig::default();
    let outcomes: Vec<CrashOutcome> = seeds.map(|s| run_seed(&flash, &ftl, &cfg, s)).collect();
    for o in outcomes.iter().filter(|o| !o.passed()) {
        eprintln!("seed {}: {:?} / {:?}", o.seed, o.first_violation, o.error);
    }
    summarize(&outcomes)
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

#[test]
#[ignore = "1000 seeds; run with --ignored (about a minute in release)"]
fn power_cuts_on_a_thousand_seeds() {
    let s = run(0..1000);
    eprintln!("{s}");
    assert_eq!(s.failed, 0, "{s}");
}
