//! Media errors through the FTL: worn and aged flash returns typed errors, never wrong data;
//! weak blocks are retired through the bad-block remap; runs are deterministic per seed.

use super::*;
use nearflash_flash::MediaConfig;

/// The tiny device with media errors on, every block starting with `pe_cycles` of wear and
/// its data a year old.
fn worn_flash(pe_cycles: u32, retire_error_reads: u32) -> FlashConfig {
    let mut f = tiny_flash();
    f.media = MediaConfig {
        enabled: true,
        initial_pe_cycles: pe_cycles,
        retention_offset_days: 365.0,
        retire_error_reads,
        ..MediaConfig::default()
    };
    f.validate().unwrap();
    f
}

#[test]
fn past_end_of_life_reads_fail_with_uncorrectable_and_never_return_wrong_data() {
    // 5500 P/E: the model loses ~3% of codewords whatever the retries (4 per 4 KiB page).
    let mut h = Harness::new(worn_flash(5500, u32::MAX), tiny_ftl(), 7);
    h.random_ops(3000, 8, 64);
    h.verify_all(); // the harness panics on any read that returns wrong data
    let errors = &h.errors;
    assert!(errors.contains(&(BlockOp::Read, IoError::Uncorrectable)));
    // Every failure is the media's, and says so: a read of a lost page (directly, or of a
    // page GC or a merge had to move while it was unreadable), or a partial write whose merge
    // could not read the rest of a page it touches (the write fails and changes nothing).
    // None is an integrity error: nothing read back as garbage or another page's data.
    let other: Vec<_> = errors
        .iter()
        .filter(|(_, e)| *e != IoError::Uncorrectable)
        .collect();
    assert!(other.is_empty(), "{other:?}");
    let m = h.dev.backbone().media_stats().unwrap();
    assert!(m.uncorrectable_page_reads > 0 && m.bits_corrected > 0);
    assert!(h.dev.stats().uncorrectable_reads > 0);
    h.dev.check_invariants();
}

#[test]
fn blocks_whose_reads_keep_needing_retries_are_retired_and_replaced_by_spares() {
    // Rated wear and a year of retention: most first reads fail and retries recover them.
    let mut h = Harness::new(worn_flash(3000, 3), tiny_ftl(), 3);
    h.random_ops(2000, 8, 64);
    h.verify_all();
    let s = h.dev.stats();
    assert!(s.media_blocks_retired > 0, "{s:?}");
    assert!(s.blocks_remapped > 0, "{s:?}");
    let m = h.dev.backbone().media_stats().unwrap();
    assert!(
        m.read_retries_by_step[0] > 0 && m.uncorrectable_page_reads == 0,
        "{m:?}"
    );
    // Retries recovered every read: no read failed, whatever GC moved.
    assert!(
        h.errors.iter().all(|(op, _)| *op == BlockOp::Write),
        "{:?}",
        h.errors
    );
    h.dev.check_invariants();
}

#[test]
fn same_seed_same_media_errors() {
    let run = |seed: u64| {
        let mut h = Harness::new(worn_flash(5500, 8), tiny_ftl(), seed);
        h.random_ops(800, 8, 64);
        (
            h.dev.backbone().media_stats().unwrap().clone(),
            h.dev.stats().clone(),
            h.errors.clone(),
        )
    };
    assert_eq!(run(11), run(11));
    assert_ne!(run(11).0, run(12).0);
}

/// Timing fidelity keeps no page data, so no spare-area marker remembers a page that GC or a
/// merge moved while it was uncorrectable; the device's `media_lost` table does instead. The
/// same worn device under the same seed fails the same requests, with the same errors, in
/// both fidelities (before the table, timing fidelity read such pages as good).
#[test]
fn timing_fidelity_fails_the_same_requests_as_functional_on_worn_media() {
    let run = |functional: bool| {
        let mut h = Harness::with_fidelity(worn_flash(5500, u32::MAX), tiny_ftl(), 7, functional);
        h.random_ops(3000, 8, 64);
        h.run_until_done();
        h.errors.clone()
    };
    let functional = run(true);
    assert!(functional.contains(&(BlockOp::Read, IoError::Uncorrectable)));
    assert_eq!(functional, run(false));
}
