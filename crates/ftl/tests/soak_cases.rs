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
