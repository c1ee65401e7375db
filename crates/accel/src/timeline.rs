//! An abstract executor for the schedulers: every unit takes a given number of time units,
//! nothing else costs time. It runs the same `Chain` + `Scheduler` the machine runs, so the
//! paper's own timeline examples (Figs. 5 and 7) and the dependency property can be checked
//! on the decisions alone, apart from flash, DDR3L and message costs. It is a `sim::Model`
//! on a `sim::Driver`, waited on with `Driver::run_until`, like every machine.

use crate::chain::{Chain, Shape, Unit};
use crate::sched::{Scheduler, SchedulerKind};
use nearflash_sim::{
    Driver, EventQueue, Model, Progress, Sim, SimDuration, SimRng, SimTime, TraceEvent,
};

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

/// The abstract machine: the chain and its scheduler, the workers' running units and what
/// ran. It decides once every unit ending at an instant has ended, as in the figures' time
/// steps.
struct Executor<'k> {
    kernels: &'k [AbstractKernel],
    chain: Chain,
    sched: Scheduler,
    running: Vec<Option<Slot>>,
    slots: Vec<Slot>,
    kernel_end: Vec<u64>,
}

impl Model for Executor<'_> {
    type Event = UnitEnd;

    fn handle(&mut self, UnitEnd(w): UnitEnd, q: &mut EventQueue<UnitEnd>, _: &mut SimRng) {
        let slot = self.running[w].take().expect("a running worker finished");
        assert_eq!(slot.end, q.now().as_ns(), "a unit ends when it was due");
        if self.chain.complete(slot.unit) {
            self.kernel_end[slot.unit.kernel] = slot.end;
        }
        self.slots.push(slot);
        if q.pending_now() == 0 {
            self.dispatch(q);
        }
    }

    fn progress(&self) -> Progress {
        Progress {
            completed: self.slots.len() as u64,
            outstanding: self.running.iter().flatten().count() as u64,
        }
    }
}

impl Executor<'_> {
    /// Gives the free workers units now; each ends after its duration.
    fn dispatch(&mut self, q: &mut EventQueue<UnitEnd>) {
        let free: Vec<bool> = self.running.iter().map(Option::is_none).collect();
        let now = q.now().as_ns();
        for (w, unit) in self.sched.pick(&mut self.chain, &free) {
            assert!(self.running[w].is_none(), "units go to free workers");
            let d = self.kernels[unit.kernel].durations[unit.mb][unit.screen as usize];
            self.running[w] = Some(Slot {
                unit,
                worker: w,
                start: now,
                end: now + d,
            });
            q.schedule_at(SimTime::ZERO + SimDuration::from_ns(now + d), UnitEnd(w));
        }
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
        kernels,
        chain: Chain::new(shapes),
        sched: Scheduler::new(kind, workers),
        running: vec![None; workers],
        slots: Vec::new(),
        kernel_end: vec![0; kernels.len()],
    };
    for k in 0..kernels.len() {
        m.chain.admit(k);
        m.sched.admitted(&m.chain, k);
    }
    // Nothing is random here; the seed only fills the RNG slot of the loop.
    let mut run = Driver::new(Sim::new(0), m);
    let (m, q, _) = run.parts();
    m.dispatch(q);
    // Each instant completes at least one of the finitely many units, and a free worker is
    // given one while any is left: the run ends, or a scheduler that strands a unit is the
    // one stall.
    run.run_until(|m| m.chain.all_finished())
        .expect("every kernel runs to completion");
    let (_, m) = run.into_parts();
    Timeline {
        slots: m.slots,
        kernel_end: m.kernel_end,
    }
}
