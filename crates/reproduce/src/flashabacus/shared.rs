//! Preconditioning made once per workload: every accelerator run of a workload (four
//! schedulers × two cost models) writes the same inputs to the same device before its timed
//! part — the preconditioning depends on the seed, the device and the workload's inputs only
//! (`nearflash_accel::Preconditioned`). The first run to ask makes it; the others, on any
//! worker thread, start from copies (`run_workload_from`), and each report is the one a run
//! that wrote its own inputs gives. A workload's device is dropped when its last run has
//! taken it, so memory holds only the workloads in progress.

use nearflash_accel::Preconditioned;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

/// One workload's device: made by the first run that asks (`None` if making it failed: each
/// run then preconditions itself and reports the error), and the runs still to ask.
struct Slot {
    device: Arc<OnceLock<Option<Arc<Preconditioned>>>>,
    runs_left: usize,
}

/// The preconditioned devices of a reproduction's workloads.
pub struct SharedPreconditioning {
    slots: Mutex<BTreeMap<String, Slot>>,
}

impl SharedPreconditioning {
    /// For runs of `workloads` (one entry per run that will ask).
    pub fn new<'a>(workloads: impl IntoIterator<Item = &'a str>) -> Self {
        let mut slots: BTreeMap<String, Slot> = BTreeMap::new();
        for w in workloads {
            slots
                .entry(w.to_string())
                .or_insert_with(|| Slot {
                    device: Arc::default(),
                    runs_left: 0,
                })
                .runs_left += 1;
        }
        SharedPreconditioning {
            slots: Mutex::new(slots),
        }
    }

    /// `workload`'s device, made by `make` if no run has made it yet (another thread asking
    /// meanwhile waits for it). `None` if it could not be made, or if more runs ask than
    /// `new` was told of (they precondition themselves).
    pub fn take(
        &self,
        workload: &str,
        make: impl FnOnce() -> Option<Preconditioned>,
    ) -> Option<Arc<Preconditioned>> {
        let device = {
            let mut slots = self
                .slots
                .lock()
                .expect("no thread panics holding the lock");
            let slot = slots.get_mut(workload)?;
            assert!(slot.runs_left > 0, "an exhausted slot is removed");
            slot.runs_left -= 1;
            let device = Arc::clone(&slot.device);
            if slot.runs_left == 0 {
                slots.remove(workload);
            }
            device
        };
        device.get_or_init(|| make().map(Arc::new)).clone()
    }

    /// Workloads whose runs have not all taken their device.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.slots.lock().unwrap().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearflash_accel::{precondition, RunSpec, SchedulerKind};
    use nearflash_kernels::Dataset;
    use nearflash_preset::Preset;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn made(workload: &str) -> Option<Preconditioned> {
        let p = Preset::load("test-min", &[]).unwrap();
        let accel = p.require().unwrap();
        precondition(
            &RunSpec {
                accel: &accel,
                flash: &p.flash,
                ftl: &p.ftl,
                scheduler: SchedulerKind::InterDy,
                dataset: Dataset::Mini,
                seed: 1,
            },
            workload,
        )
        .ok()
    }

    #[test]
    fn each_workload_is_preconditioned_once_and_dropped_after_its_last_run() {
        let shared = SharedPreconditioning::new(["atax", "atax", "atax", "mx2"]);
        let makes = AtomicUsize::new(0);
        let make = |w: &str| {
            makes.fetch_add(1, Ordering::Relaxed);
            made(w)
        };
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| assert!(shared.take("atax", || make("atax")).is_some()));
            }
        });
        assert_eq!(
            makes.load(Ordering::Relaxed),
            1,
            "one preconditioning per workload"
        );
        assert_eq!(
            shared.held(),
            1,
            "atax's device dropped after its third run"
        );
        assert!(shared.take("mx2", || make("mx2")).is_some());
        assert_eq!(shared.held(), 0);
        assert_eq!(makes.load(Ordering::Relaxed), 2);
        // A run nobody announced preconditions itself.
        assert!(shared.take("atax", || make("atax")).is_none());
        assert_eq!(makes.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn a_preconditioning_that_fails_leaves_each_run_to_its_own() {
        let shared = SharedPreconditioning::new(["nope", "nope"]);
        assert!(shared.take("nope", || made("nope")).is_none());
        assert!(shared.take("nope", || unreachable!("made once")).is_none());
    }
}
