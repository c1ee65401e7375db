//! A compute engine — the SSD controller's core or the host CPU — as a server with two
//! queues. FTL work (one `ftl_ns` item per host command: parse, translate, queue) has
//! priority; offloaded work (compression) runs only when no FTL work waits, in
//! non-preemptive slices of one page each, so a command that arrives mid-slice waits at most
//! one slice. Busy time is accumulated per kind of work (energy is Δpower × busy time, the
//! paper's accounting).

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
    slices_left: u32,
    slice_ns: u64,
}

#[derive(Debug)]
enum Running {
    Command(u64),
    Slice,
}

#[derive(Debug)]
pub struct Engine {
    spec: EngineSpec,
    command_ns: u64,
    commands: VecDeque<u64>,
    offload: VecDeque<Offload>,
    running: Option<Running>,
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
            busy_ftl_ns: 0,
            busy_offload_ns: 0,
        }
    }

    /// Time the FTL spends on one command.
    pub fn command_ns(&self) -> u64 {
        self.command_ns
    }

    pub fn push_command(&mut self, id: u64) {
        self.commands.push_back(id);
    }

    /// Queues `instructions` of offloaded work for `extent`, run as `slices` equal slices.
    pub fn push_offload(&mut self, extent: u64, instructions: f64, slices: u32) {
        assert!(slices > 0);
        let total_ns = self.spec.time_ns(instructions);
        self.offload.push_back(Offload {
            extent,
            slices_left: slices,
            slice_ns: (total_ns / f64::from(slices)).round() as u64,
        });
    }

    /// Starts the next item if the engine is free and work waits; returns when it ends.
    pub fn start(&mut self, now: SimTime) -> Option<SimTime> {
        if self.running.is_some() {
            return None;
        }
        if let Some(id) = self.commands.pop_front() {
            self.running = Some(Running::Command(id));
            self.busy_ftl_ns += self.command_ns;
            return Some(now + SimDuration::from_ns(self.command_ns));
        }
        let slice_ns = self.offload.front()?.slice_ns;
        self.running = Some(Running::Slice);
        self.busy_offload_ns += slice_ns;
        Some(now + SimDuration::from_ns(slice_ns))
    }

    /// The running item has ended: what it completed, if anything (a slice that is not the
    /// last of its job completes nothing).
    pub fn finish(&mut self) -> Option<Owner> {
        match self
            .running
            .take()
            .expect("an engine event for a running item")
        {
            Running::Command(id) => Some(Owner::Command(id)),
            Running::Slice => {
                let front = self.offload.front_mut().expect("a slice belongs to a job");
                front.slices_left -= 1;
                if front.slices_left > 0 {
                    return None;
                }
                let extent = front.extent;
                self.offload.pop_front();
                Some(Owner::Compress { extent })
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
    fn commands_overtake_queued_offload_slices_but_never_preempt_one() {
        let mut e = Engine::new(spec(), 4000.0); // 4000 × 0.5 / 800 MHz = 2.5 us
        e.push_offload(9, 3200.0, 2); // 2 us in two 1 us slices
        let t0 = SimTime::ZERO;
        let t1 = e.start(t0).unwrap();
        assert_eq!(t1.as_ns(), 1000);
        e.push_command(5);
        assert_eq!(e.start(t1), None, "busy");
        assert_eq!(e.finish(), None, "first slice of two");
        let t2 = e.start(t1).unwrap();
        assert_eq!(t2.since(t1).as_ns(), 2500);
        assert_eq!(e.finish(), Some(Owner::Command(5)));
        let t3 = e.start(t2).unwrap();
        assert_eq!(e.finish(), Some(Owner::Compress { extent: 9 }));
        assert_eq!(e.start(t3), None);
        assert_eq!((e.busy_ftl_ns, e.busy_offload_ns), (2500, 2000));
    }
}
