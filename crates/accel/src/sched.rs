//! The four kernel schedulers of FlashAbacus (seed 000 §4.1–4.2), as decisions Flashvisor
//! takes whenever a worker frees up or a kernel is admitted:
//!
//! - **InterSt** (static inter-kernel): every kernel of application `a` runs on worker
//!   `a mod workers`, whole (all its microblocks and screens serially), in arrival order.
//! - **InterDy** (dynamic inter-kernel): the next admitted kernel goes, whole, to the next
//!   free worker in round-robin order.
//! - **IntraIo** (in-order intra-kernel): one microblock at a time in the whole machine —
//!   the current microblock of the oldest unfinished kernel — its screens spread over the
//!   free workers.
//! - **IntraO3** (out-of-order intra-kernel): as IntraIo, but free workers left over borrow
//!   ready screens of the current microblocks of later kernels and applications, walking the
//!   multi-app execution chain in order. The chain forbids a screen before its previous
//!   microblock has finished.
//!
//! Workers are numbered 0..n here (the machine maps them onto LWP2..); among free workers the
//! intra-kernel schedulers pick the lowest-numbered first.

use crate::chain::{Chain, Unit};
use crate::error::AccelError;
use serde::Serialize;
use std::collections::VecDeque;
use std::fmt;
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum SchedulerKind {
    InterSt,
    InterDy,
    IntraIo,
    IntraO3,
}

impl SchedulerKind {
    pub const ALL: [SchedulerKind; 4] = [
        SchedulerKind::InterSt,
        SchedulerKind::InterDy,
        SchedulerKind::IntraIo,
        SchedulerKind::IntraO3,
    ];

    /// Inter-kernel schedulers run a whole kernel on one worker.
    pub fn is_inter(self) -> bool {
        matches!(self, SchedulerKind::InterSt | SchedulerKind::InterDy)
    }

    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::InterSt => "inter-st",
            SchedulerKind::InterDy => "inter-dy",
            SchedulerKind::IntraIo => "intra-io",
            SchedulerKind::IntraO3 => "intra-o3",
        }
    }
}

impl fmt::Display for SchedulerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SchedulerKind {
    type Err = AccelError;
    fn from_str(s: &str) -> Result<Self, AccelError> {
        SchedulerKind::ALL
            .into_iter()
            .find(|k| k.name() == s.to_ascii_lowercase())
            .ok_or_else(|| AccelError::UnknownScheduler { name: s.into() })
    }
}

pub struct Scheduler {
    kind: SchedulerKind,
    /// Inter-kernel: the kernel each worker is running.
    pinned: Vec<Option<usize>>,
    /// InterSt: admitted kernels waiting for their worker; InterDy: for any worker.
    queues: Vec<VecDeque<usize>>,
    /// InterDy: the worker the round robin looks at first.
    rr_cursor: usize,
}

impl Scheduler {
    pub fn new(kind: SchedulerKind, workers: usize) -> Scheduler {
        assert!(workers > 0, "at least one worker is validated");
        let queues = if kind == SchedulerKind::InterSt {
            workers
        } else {
            1
        };
        Scheduler {
            kind,
            pinned: vec![None; workers],
            queues: vec![VecDeque::new(); queues],
            rr_cursor: 0,
        }
    }

    pub fn kind(&self) -> SchedulerKind {
        self.kind
    }

    pub fn workers(&self) -> usize {
        self.pinned.len()
    }

    /// Tell the scheduler a kernel was admitted into `chain` (call after `Chain::admit`).
    pub fn admitted(&mut self, chain: &Chain, kernel: usize) {
        match self.kind {
            SchedulerKind::InterSt => {
                let w = chain.app(kernel) % self.workers();
                self.queues[w].push_back(kernel);
            }
            SchedulerKind::InterDy => self.queues[0].push_back(kernel),
            SchedulerKind::IntraIo | SchedulerKind::IntraO3 => {}
        }
    }

    /// Decide what the free workers (`free[w]`) run now; marks the units issued in `chain`.
    pub fn pick(&mut self, chain: &mut Chain, free: &[bool]) -> Vec<(usize, Unit)> {
        assert_eq!(free.len(), self.workers());
        match self.kind {
            SchedulerKind::InterSt | SchedulerKind::InterDy => self.pick_inter(chain, free),
            SchedulerKind::IntraIo => pick_intra(chain, free, 1),
            SchedulerKind::IntraO3 => pick_intra(chain, free, usize::MAX),
        }
    }

    fn pick_inter(&mut self, chain: &mut Chain, free: &[bool]) -> Vec<(usize, Unit)> {
        let n = self.workers();
        let mut out = Vec::new();
        let start = if self.kind == SchedulerKind::InterDy {
            self.rr_cursor
        } else {
            0
        };
        for i in 0..n {
            let w = (start + i) % n;
            if !free[w] {
                continue;
            }
            if self.pinned[w].is_some_and(|k| chain.is_finished(k)) {
                self.pinned[w] = None;
            }
            if self.pinned[w].is_none() {
                let q = if self.kind == SchedulerKind::InterSt {
                    w
                } else {
                    0
                };
                self.pinned[w] = self.queues[q].pop_front();
                if self.pinned[w].is_some() && self.kind == SchedulerKind::InterDy {
                    self.rr_cursor = (w + 1) % n;
                }
            }
            if let Some(k) = self.pinned[w] {
                // A whole kernel on one worker: its units follow one another, so the next
                // one is ready exactly when this worker has finished the previous one.
                out.push((w, chain.issue(k)));
            }
        }
        out
    }
}

/// Intra-kernel: fill free workers, lowest first, with ready units of the first
/// `kernels_max` active kernels in chain order (1 = in-order, all = out-of-order).
fn pick_intra(chain: &mut Chain, free: &[bool], kernels_max: usize) -> Vec<(usize, Unit)> {
    let mut workers = free
        .iter()
        .enumerate()
        .filter(|(_, &f)| f)
        .map(|(w, _)| w)
        .peekable();
    let mut out = Vec::new();
    let active: Vec<usize> = chain.active().iter().copied().take(kernels_max).collect();
    for k in active {
        while workers.peek().is_some() && chain.ready(k).is_some() {
            let w = workers.next().expect("peeked");
            out.push((w, chain.issue(k)));
        }
    }
    out
}
