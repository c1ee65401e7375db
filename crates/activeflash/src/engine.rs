//! A compute engine — the SSD controller's core or the host CPU — as a server with two
//! queues. FTL work (one `command_ns` item per host command: parse, translate, queue) has
//! priority and preempts offloaded work (compression), as an interrupt-driven firmware's
//! command path preempts its background task; the preempted job resumes where it stopped
//! once no command waits (the context switch itself is not charged). Busy time is
//! accumulated per kind of work (energy is Δpower × busy time, the paper's accounting).
//!
//! Each start hands out a generation number; the driver's completion event carries it, and a
//! completion whose generation is not the engine's current one belongs to a preempted item
//! and is ignored.

use crate::config::EngineSpec;
use nearflash_sim::{SimDuration, SimTime};
use std::collections::VecDeque;

/// Who is waiting for an engine's work item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// A host command (request id) to hand to the FTL once processed.
    Command(u64),
    /// The compression of extent `extent`.
    Compress { extent: u64 },
}

#[derive(Debug)]
struct Offload {
    extent: u64,
    remaining_ns: u64,
}

#[derive(Debug)]
enum Running {
    Command(u64),
    Offload { since: SimTime },
}

#[derive(Debug)]
pub struct Engine {
    spec: EngineSpec,
    command_ns: u64,
    commands: VecDeque<u64>,
    offload: VecDeque<Offload>,
    running: Option<Running>,
    generation: u64,
    pub busy_ftl_ns: u64,
    pub busy_offload_ns: u64,
}

impl Engine {
    /// An engine that spends `ftl_instructions_per_command` on every command.
    pub fn new(spec: EngineSpec, ftl_instructions_per_command: f64) -> Engine {
        Engine {
            spec,
            command_ns: spec.time_ns(ftl_instructions_per_command).round() as u64,
            commands: VecDeque::new(),
            offload: VecDeque::new(),
            running: None,
            generation: 0,
            busy_ftl_ns: 0,
            busy_offload_ns: 0,
        }
    }

    /// Time the FTL spends on one command.
    pub fn command_ns(&self) -> u64 {
        self.command_ns
    }

    /// Queues a command; it preempts running offloaded work at `now`.
    pub fn push_command(&mut self, id: u64, now: SimTime) {
        self.commands.push_back(id);
        if let Some(Running::Offload { since }) = self.running {
            let ran = now.since(since).as_ns();
            let job = self.offload.front_mut().expect("running offload has a job");
            job.remaining_ns -= ran.min(job.remaining_ns);
            self.busy_offload_ns += ran;
            self.running = None;
        }
    }

    /// Queues `instructions` of offloaded work for `extent`.
    pub fn push_offload(&mut self, extent: u64, instructions: f64) {
        self.offload.push_back(Offload {
            extent,
            remaining_ns: self.spec.time_ns(instructions).round() as u64,
        });
    }

    /// Starts the next item if the engine is free and work waits; returns when it ends and
    /// the generation its completion must carry.
    pub fn start(&mut self, now: SimTime) -> Option<(SimTime, u64)> {
        if self.running.is_some() {
            return None;
        }
        let ns = if let Some(id) = self.commands.pop_front() {
            self.running = Some(Running::Command(id));
            self.busy_ftl_ns += self.command_ns;
            self.command_ns
        } else {
            let ns = self.offload.front()?.remaining_ns;
            self.running = Some(Running::Offload { since: now });
            ns
        };
        self.generation += 1;
        Some((now + SimDuration::from_ns(ns), self.generation))
    }

    /// The item of `generation` has ended at `now`: what it completed (nothing if it was
    /// preempted meanwhile).
    pub fn finish(&mut self, generation: u64, now: SimTime) -> Option<Owner> {
        if generation != self.generation {
            return None;
        }
        match self.running.take()? {
            Running::Command(id) => Some(Owner::Command(id)),
            Running::Offload { since } => {
                self.busy_offload_ns += now.since(since).as_ns();
                let job = self.offload.pop_front().expect("running offload has a job");
                Some(Owner::Compress { extent: job.extent })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> EngineSpec {
        EngineSpec {
            clock_mhz: 800.0,
            dmips: 1600.0,
            active_power_w: 0.3,
            idle_power_w: 0.03,
        }
    }

    #[test]
    fn a_command_preempts_compression_which_resumes_where_it_stopped() {
        let mut e = Engine::new(spec(), 4000.0); // 4000 × 0.5 / 800 MHz = 2.5 us
        e.push_offload(9, 3200.0); // 2 us
        let t0 = SimTime::ZERO;
        let (end, g1) = e.start(t0).unwrap();
        assert_eq!(end.as_ns(), 2000);
        let t1 = t0 + SimDuration::from_ns(500);
        e.push_command(5, t1);
        let (t2, g2) = e.start(t1).unwrap();
        assert_eq!(t2.since(t1).as_ns(), 2500);
        assert_eq!(
            e.finish(g1, end),
            None,
            "the preempted job's completion is stale"
        );
        assert_eq!(e.finish(g2, t2), Some(Owner::Command(5)));
        let (t3, g3) = e.start(t2).unwrap();
        assert_eq!(t3.since(t2).as_ns(), 1500, "the remaining 1.5 us");
        assert_eq!(e.finish(g3, t3), Some(Owner::Compress { extent: 9 }));
        assert_eq!(e.start(t3), None);
        assert_eq!((e.busy_ftl_ns, e.busy_offload_ns), (2500, 2000));
    }
}
