//! Soak cases that once failed (`nearflash soak` printed their seeds), replayed exactly.

use nearflash_ftl::testing::{draw_case, run_case};

/// Story: the soak stopped at this seed with "stalled" — a 4-die device whose program
/// failures had remapped a dozen superblocks spent over a second of simulated time moving
/// data off failing blocks with writes waiting, and the crash test's 1 s watchdog called it
/// stuck. It finishes; the watchdog limit is now the load generators' 60 s.
#[test]
fn a_long_gc_drain_on_failing_flash_is_not_a_stall() {
    let case = draw_case(10596384212491562533);
    assert!(case.faults.program_fail_probability > 0.0);
    let out = run_case(&case);
    assert_eq!(out.failure, None);
    assert!(out.power_cuts >= 1);
}

#[test]
fn the_same_seed_draws_the_same_case() {
    let (a, b) = (draw_case(42), draw_case(42));
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    assert_ne!(format!("{a:?}"), format!("{:?}", draw_case(43)));
}

/// Story: the release-build soak from seed 1 stopped at this seed — after a power cut, writes
/// to healthy flash failed with NoSpace, with 0 lost and 0 wrong. The cut fell inside a GC
/// rescue run that had opened the last free superblock; a checkpoint taken during the run
/// already pointed some groups at their copies, so recovery (which did not scan the unchanged
/// victim) kept those copies in the rescue destination, and no superblock was empty or free.
/// Recovery now scans the checkpoint's GC victim, the source wins the tie, the destination
/// holds nothing valid and is erased first (the same bug as
/// `crashtest::tests::a_cut_with_the_crash_reserve_in_use_leaves_room_to_collect`).
#[test]
fn a_cut_inside_a_rescue_gc_run_leaves_room_to_write() {
    let case = draw_case(14713518769006782602);
    assert_eq!(case.faults.program_fail_probability, 0.0);
    assert_eq!(case.faults.erase_fail_probability, 0.0);
    let out = run_case(&case);
    assert_eq!(out.failure, None);
    assert!(out.power_cuts >= 1);
}

/// Story: the first soak that drew media errors stopped with an *integrity* error on a worn,
/// aged device with failing programs: GC had moved a page whose read was uncorrectable,
/// marked the copy lost, and a later read of the copy called it garbage. A page lost to the
/// media now stays a media loss (`LossCause::Media` in its spare area) and reads as
/// `Uncorrectable`, which the soak expects on such media. (The seed drew that case before
/// media errors were drawn last; it still draws a worn device with failing programs.)
#[test]
fn a_page_moved_while_uncorrectable_reads_as_uncorrectable_not_as_garbage() {
    let case = draw_case(1021219803524665661);
    let out = run_case(&case);
    assert_eq!(out.failure, None);
}

/// Story: the soak stopped at this seed with wrong reads after a cut, on a worn (5,384 P/E),
/// two-year-old device with failing programs. A trimmed group came back after the cut (trims
/// are not durable: legal), but the post-cut read of it failed uncorrectable, so the checker
/// still expected the trim; when a later read got through the retries it returned the old
/// version and was called wrong. The checker now keeps such a sector unknown until a read
/// returns it.
#[test]
fn a_sector_unreadable_after_a_cut_is_judged_when_a_read_gets_through() {
    let case = draw_case(8165699750677537138);
    assert!(case.faults.media.is_some());
    let out = run_case(&case);
    assert_eq!(out.failure, None);
    assert!(out.uncorrectable_errors > 0);
}

/// Story: `nearflash soak --seconds 600 --seed 1` stopped at this seed with 13 wrong reads,
/// 0 lost, on a worn (5,227 P/E), 229-day-old device with failing programs and erases and
/// checkpoints off. A write (version 65) failed with NoSpace after part of it reached the
/// flash; a trim of those sectors was acknowledged; the cut undid the trim (trims are not
/// durable) and the post-cut read failed uncorrectable, leaving the sector unknown. Two
/// reads were then issued; the first returned version 65, legal, and settled the sector,
/// and the second, returning the same version, was judged against the trim. The device was
/// right and the checker wrong: a read issued while a sector was unknown is now judged by
/// the post-cut rule (`verify::tests::reads_issued_while_a_sector_was_unread_are_judged_by_the_cut_rule`).
#[test]
fn a_trimmed_sector_on_worn_failing_media_reads_zeros_or_what_the_cut_left() {
    let case = draw_case(17833791936357139258);
    assert!(case.faults.media.is_some());
    let out = run_case(&case);
    assert_eq!(out.failure, None);
    assert!(out.uncorrectable_errors > 0);
}
