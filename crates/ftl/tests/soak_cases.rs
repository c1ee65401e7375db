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
/// to healthy flash failed with NoSpace (the open crash-reserve bug pinned in
/// `crashtest::tests::a_cut_with_the_crash_reserve_in_use_leaves_room_to_collect`), with 0
/// lost and 0 wrong. The case is flagged as that bug, so `soak --allow-no-space-after-cut`
/// can count it apart; when the bug is fixed this test fails and should become a passing
/// replay like the one above.
#[test]
fn a_no_space_after_a_cut_is_flagged_as_the_open_crash_reserve_bug() {
    let out = run_case(&draw_case(14713518769006782602));
    let failure = out.failure.expect("the open bug still reproduces");
    assert!(out.no_space_after_cut, "{failure}");
    assert!(failure.contains("lost 0 wrong 0"), "{failure}");
}
