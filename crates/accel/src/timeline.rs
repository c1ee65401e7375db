//! An abstract executor for the schedulers: every unit takes a given number of time units,
//! nothing else costs time. It runs the same `Chain` + `Scheduler` the machine runs, so the
//! paper's own timeline examples (Figs. 5 and 7) and the dependency property can be checked
//! on the decisions alone, apart from flash, DDR3L and message costs.

use crate::chain::{Chain, Shape, Unit};
use crate::sched::{Scheduler, SchedulerKind};
use nearflash_sim::{EventQueue, SimDuration, SimTime};

/// A kernel of the abstract model: its application and each unit's duration, per microblock.
#[derive(Clone, Debug)]
pub struct AbstractKernel {
    pub app: usize,
    pub durations: Vec<Vec<u64>>,
}

/// One executed unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub unit: Unit,
    pub worker: usize,
    pub start: u64,
    pub end: u64,
}

#[derive(Clone, Debug)]
pub struct Timeline {
    pub slots: Vec<Slot>,
    /// Completion time of each kernel (all are issued at time 0, so this is its latency).
    pub kernel_end: Vec<u64>,
}

impl Timeline {
    /// The worker(s) that ran any unit of `kernel`.
    pub fn workers_of(&self, kernel: usize) -> Vec<usize> {
        let mut w: Vec<usize> = self
            .slots
            .iter()
            .filter(|s| s.unit.kernel == kernel)
            .map(|s| s.worker)
            .collect();
        w.sort_unstable();
        w.dedup();
        w
    }

    /// When the first unit of `kernel`'s microblock `mb` started.
    pub fn mb_start(&self, kernel: usize, mb: usize) -> u64 {
        self.slots
            .iter()
            .filter(|s| s.unit.kernel == kernel && s.unit.mb == mb)
            .map(|s| s.start)
            .min()
            .expect("microblock ran")
    }
}

/// Runs `kernels`, all arriving at time 0 in index order, on `workers` under `kind`.
pub fn run(kernels: &[AbstractKernel], kind: SchedulerKind, workers: usize) -> Timeline {
    let shapes = kernels
        .iter()
        .map(|k| Shape {
            app: k.app,
            units_per_mb: k.durations.iter().map(|m| m.len() as u32).collect(),
        })
        .collect();
    let mut chain = Chain::new(shapes);
    let mut sched = Scheduler::new(kind, workers);
    for k in 0..kernels.len() {
        chain.admit(k);
        sched.admitted(&chain, k);
    }
    let mut q: EventQueue<usize> = EventQueue::new();
    let mut running: Vec<Option<Slot>> = vec![None; workers];
    let mut slots = Vec::new();
    let mut kernel_end = vec![0; kernels.len()];
    loop {
        let free: Vec<bool> = running.iter().map(Option::is_none).collect();
        let now = q.now().as_ns();
        for (w, unit) in sched.pick(&mut chain, &free) {
            let d = kernels[unit.kernel].durations[unit.mb][unit.screen as usize];
            running[w] = Some(Slot {
                unit,
                worker: w,
                start: now,
                end: now + d,
            });
            q.schedule_at(SimTime::ZERO + SimDuration::from_ns(now + d), w);
        }
        let Some((at, w)) = q.pop() else { break };
        // Every unit ending at this instant completes before the next decision, as in the
        // figures' time steps.
        let mut done = vec![w];
        while q.peek_time() == Some(at) {
            done.push(q.pop().expect("peeked").1);
        }
        for w in done {
            let slot = running[w].take().expect("a running worker finished");
            if chain.complete(slot.unit) {
                kernel_end[slot.unit.kernel] = slot.end;
            }
            slots.push(slot);
        }
    }
    assert!(chain.all_finished(), "every kernel ran to completion");
    Timeline { slots, kernel_end }
}
