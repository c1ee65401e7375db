//! The one dependency rule of FlashAbacus (§4.2): no screen of microblock m+1 of a kernel
//! starts before every screen of microblock m has finished — under every scheduler, for random
//! kernels, apps and screen durations. Also: every unit runs exactly once, a worker runs one
//! unit at a time, and inter-kernel schedulers keep a kernel on one worker.

use nearflash_accel::timeline::{run, AbstractKernel};
use nearflash_accel::SchedulerKind;
use proptest::prelude::*;

fn kernel() -> impl Strategy<Value = AbstractKernel> {
    (
        0usize..4,
        prop::collection::vec(prop::collection::vec(1u64..5, 1..5), 1..5),
    )
        .prop_map(|(app, durations)| AbstractKernel { app, durations })
}

proptest! {
    #[test]
    fn no_screen_starts_before_its_previous_microblock_finishes(
        kernels in prop::collection::vec(kernel(), 1..7),
        workers in 1usize..7,
    ) {
        for kind in SchedulerKind::ALL {
            let t = run(&kernels, kind, workers);
            let units: usize = kernels.iter().flat_map(|k| &k.durations).map(Vec::len).sum();
            prop_assert_eq!(t.slots.len(), units);
            for s in &t.slots {
                if s.unit.mb > 0 {
                    let prev_end = t.slots.iter()
                        .filter(|p| p.unit.kernel == s.unit.kernel && p.unit.mb == s.unit.mb - 1)
                        .map(|p| p.end).max().unwrap();
                    prop_assert!(s.start >= prev_end, "{kind}: {:?} before {prev_end}", s);
                }
                for o in &t.slots {
                    if o != s && o.worker == s.worker {
                        prop_assert!(o.end <= s.start || s.end <= o.start, "{kind}: overlap");
                    }
                }
            }
            if kind.is_inter() {
                for k in 0..kernels.len() {
                    prop_assert_eq!(t.workers_of(k).len(), 1);
                }
            }
        }
    }
}
