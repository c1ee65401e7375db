//! An abstract executor for the schedulers: every unit takes a given number of time units,
//! nothing else costs time. It runs the same `Chain` + `Scheduler` the machine runs, so the
//! paper's own timeline examples (Figs. 5 and 7) and the dependency property can be checked
//! on the decisions alone, apart from flash, DDR3L and message costs. It runs on the one
//! simulation loop (`sim::Sim`) like every machine.

use crate::chain::{Chain, Shape, Unit};
use crate::sched::{Scheduler, SchedulerKind};
use nearflash_sim::{EventQueue, Model, Sim, SimDuration, SimRng, SimTime, TraceEvent};

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

/// A worker finished its unit.
#[derive(Clone, Copy, Debug)]
struct UnitEnd(usize);

impl TraceEvent for UnitEnd {
    fn hash_word(&self) -> u64 {
        self.0 as u64
    }
}

/// The abstract machine: the chain, the workers' running units and what ran.
struct Executor {
    chain: Chain,
    running: Vec<Option<Slot>>,
    slots: Vec<Slot>,
    kernel_end: Vec<u64>,
}

impl Model for Executor {
    type Event = UnitEnd;

    fn handle(&mut self, UnitEnd(w): UnitEnd, _: &mut EventQueue<UnitEnd>, _: &mut SimRng) {
        let slot = self.running[w].take().expect("a running worker finished");
        if self.chain.complete(slot.unit) {
            self.kernel_end[slot.unit.kernel] = slot.end;
        }
        self.slots.push(slot);
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
    let mut m = Executor {
        chain: Chain::new(shapes),
        running: vec![None; workers],
        slots: Vec::new(),
        kernel_end: vec![0; kernels.len()],
    };
    let mut sched = Scheduler::new(kind, workers);
    for k in 0..kernels.len() {
        m.chain.admit(k);
        sched.admitted(&m.chain, k);
    }
    // Nothing is random here; the seed only fills the RNG slot of the loop.
    let mut sim: Sim<UnitEnd> = Sim::new(0);
    loop {
        let free: Vec<bool> = m.running.iter().map(Option::is_none).collect();
        let now = sim.now().as_ns();
        for (w, unit) in sched.pick(&mut m.chain, &free) {
            let d = kernels[unit.kernel].durations[unit.mb][unit.screen as usize];
            m.running[w] = Some(Slot {
                unit,
                worker: w,
                start: now,
                end: now + d,
            });
            sim.queue()
                .schedule_at(SimTime::ZERO + SimDuration::from_ns(now + d), UnitEnd(w));
        }
        // Every unit ending at the next instant completes before the next decision, as in
        // the figures' time steps. The loop ends: each turn completes at least one of the
        // finitely many units, and a free worker is given one while any is left.
        let Some(next) = sim.next_deadline() else {
            break;
        };
        sim.advance_to(next, &mut m);
    }
    assert!(m.chain.all_finished(), "every kernel ran to completion");
    Timeline {
        slots: m.slots,
        kernel_end: m.kernel_end,
    }
}
