//! Compute engines and the one cost model that turns work into time.
//!
//! * A **core** ([`CoreSpec`]) executes instructions: time = instructions × CPI ÷ clock
//!   (`CoreSpec::time_ns`), and a program costing `instructions_per_byte` streams at
//!   clock ÷ (instructions_per_byte × CPI) bytes per µs (`CoreSpec::rate_mb_s`) — the same
//!   formula solved for the rate. Work is charged in whole nanoseconds, rounded up
//!   (`CoreSpec::duration`): a core is busy until the nanosecond its last cycle ends in.
//!   FlashAbacus's LWPs, INSIDER's drive cores, ARM drive and host cores, and Active Flash's
//!   SSD controller and host CPU are all `CoreSpec`s; each machine's config says where its
//!   clock and CPI come from.
//! * An **FPGA-like slot** ([`SlotSpec`]) is a pipeline: it accepts `bytes_per_cycle` input
//!   bytes per clock cycle, so it streams bytes_per_cycle × clock bytes per µs.
//!
//! Sharing: [`TimeSharedCores`] runs each item on the core that frees first (chunk-level time
//! sharing, FIFO per core); [`PreemptiveCore`] gives foreground work (a firmware's command
//! path) priority over background work, which it preempts and later resumes where it
//! stopped. Both are sans-IO: they are handed `now` and answer with end times; the caller
//! schedules the completion events.

use crate::server::{transfer, FifoServer};
use nearflash_sim::{SimDuration, SimTime};
use std::collections::VecDeque;

/// A core's speed: its clock and its cycles per instruction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CoreSpec {
    pub clock_mhz: f64,
    pub cpi: f64,
}

impl CoreSpec {
    /// Configs validate clock and CPI at the edge; a bad one here is a programmer error.
    pub fn new(clock_mhz: f64, cpi: f64) -> CoreSpec {
        assert!(
            clock_mhz.is_finite() && clock_mhz > 0.0,
            "a core's clock is validated positive, got {clock_mhz} MHz"
        );
        assert!(
            cpi.is_finite() && cpi > 0.0,
            "a core's CPI is validated positive, got {cpi}"
        );
        CoreSpec { clock_mhz, cpi }
    }

    /// Nanoseconds to execute `instructions`: instructions × CPI ÷ clock (exact).
    pub fn time_ns(&self, instructions: f64) -> f64 {
        instructions * self.cpi * 1e3 / self.clock_mhz
    }

    /// Time to execute `instructions`, in whole nanoseconds rounded up.
    pub fn duration(&self, instructions: f64) -> SimDuration {
        let ns = self.time_ns(instructions);
        assert!(
            ns >= 0.0,
            "work is never negative, got {instructions} instructions"
        );
        SimDuration::from_ns(ns.ceil() as u64)
    }

    /// Bytes per µs (MB/s) one core streams a program that costs `instructions_per_byte`:
    /// clock ÷ (instructions_per_byte × CPI).
    pub fn rate_mb_s(&self, instructions_per_byte: f64) -> f64 {
        self.clock_mhz / (instructions_per_byte * self.cpi)
    }
}

/// An FPGA-like slot's clock; a program's pipeline width (bytes per cycle) sets its rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlotSpec {
    pub clock_mhz: f64,
}

impl SlotSpec {
    pub fn new(clock_mhz: f64) -> SlotSpec {
        assert!(
            clock_mhz.is_finite() && clock_mhz > 0.0,
            "a slot's clock is validated positive, got {clock_mhz} MHz"
        );
        SlotSpec { clock_mhz }
    }

    /// Bytes per µs (MB/s) of a pipeline accepting `bytes_per_cycle` per cycle.
    pub fn rate_mb_s(&self, bytes_per_cycle: f64) -> f64 {
        bytes_per_cycle * self.clock_mhz
    }

    /// Time to stream `bytes` through a pipeline of `bytes_per_cycle`, rounded up.
    pub fn duration(&self, bytes: u64, bytes_per_cycle: f64) -> SimDuration {
        transfer(bytes, self.rate_mb_s(bytes_per_cycle))
    }
}

/// A pool of identical cores shared by time slices: each item runs, whole, on the core that
/// frees first (the lowest index among equals), after whatever that core already queued.
#[derive(Clone, Debug)]
pub struct TimeSharedCores {
    cores: Vec<FifoServer>,
}

impl TimeSharedCores {
    pub fn new(count: usize) -> TimeSharedCores {
        assert!(count > 0, "a pool has at least one core");
        TimeSharedCores {
            cores: vec![FifoServer::default(); count],
        }
    }

    /// Runs an item of `service` from `now`; returns when it ends.
    pub fn run(&mut self, now: SimTime, service: SimDuration) -> SimTime {
        let core = self
            .cores
            .iter_mut()
            .min_by_key(|c| c.free_at())
            .expect("at least one core");
        core.serve(now, service)
    }

    /// Busy time of each core.
    pub fn busy_ns(&self) -> Vec<u64> {
        self.cores.iter().map(FifoServer::busy_ns).collect()
    }
}

/// What a [`PreemptiveCore`] finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finished<F, B> {
    Foreground(F),
    Background(B),
}

#[derive(Debug)]
struct Job<B> {
    tag: B,
    remaining_ns: u64,
}

#[derive(Debug)]
enum Running<F> {
    Foreground(F),
    Background { since: SimTime },
}

/// One core with two queues: foreground items (each a fixed `foreground_ns`) have priority and
/// preempt background jobs, which resume where they stopped once no foreground item waits
/// (the context switch is not charged). Each start hands out a generation; the completion
/// event carries it, and a completion of a stale generation (a preempted job's) is ignored.
/// Busy time is kept per queue. Queues are bounded by the callers (one foreground item per
/// outstanding command, one background job per pending work unit).
#[derive(Debug)]
pub struct PreemptiveCore<F, B> {
    foreground_ns: u64,
    foreground: VecDeque<F>,
    background: VecDeque<Job<B>>,
    running: Option<Running<F>>,
    generation: u64,
    core: CoreSpec,
    pub busy_foreground_ns: u64,
    pub busy_background_ns: u64,
}

impl<F: Copy, B: Copy> PreemptiveCore<F, B> {
    /// A core spending `foreground_instructions` on every foreground item.
    pub fn new(core: CoreSpec, foreground_instructions: f64) -> Self {
        PreemptiveCore {
            foreground_ns: core.duration(foreground_instructions).as_ns(),
            foreground: VecDeque::new(),
            background: VecDeque::new(),
            running: None,
            generation: 0,
            core,
            busy_foreground_ns: 0,
            busy_background_ns: 0,
        }
    }

    /// Time one foreground item takes.
    pub fn foreground_ns(&self) -> u64 {
        self.foreground_ns
    }

    /// Queues a foreground item; it preempts a running background job at `now`.
    pub fn push_foreground(&mut self, tag: F, now: SimTime) {
        self.foreground.push_back(tag);
        if let Some(Running::Background { since }) = self.running {
            let ran = now.since(since).as_ns();
            let job = self
                .background
                .front_mut()
                .expect("a running background job is queued");
            job.remaining_ns -= ran.min(job.remaining_ns);
            self.busy_background_ns += ran;
            self.running = None;
        }
    }

    /// Queues `instructions` of background work.
    pub fn push_background(&mut self, tag: B, instructions: f64) {
        self.background.push_back(Job {
            tag,
            remaining_ns: self.core.duration(instructions).as_ns(),
        });
    }

    /// Starts the next item if the core is free and work waits; returns when it ends and
    /// the generation its completion must carry.
    pub fn start(&mut self, now: SimTime) -> Option<(SimTime, u64)> {
        if self.running.is_some() {
            return None;
        }
        let ns = if let Some(tag) = self.foreground.pop_front() {
            self.running = Some(Running::Foreground(tag));
            self.busy_foreground_ns += self.foreground_ns;
            self.foreground_ns
        } else {
            let ns = self.background.front()?.remaining_ns;
            self.running = Some(Running::Background { since: now });
            ns
        };
        self.generation += 1;
        Some((now + SimDuration::from_ns(ns), self.generation))
    }

    /// The item of `generation` ended at `now`: what it finished (nothing if it was
    /// preempted meanwhile).
    pub fn finish(&mut self, generation: u64, now: SimTime) -> Option<Finished<F, B>> {
        if generation != self.generation {
            return None;
        }
        match self.running.take()? {
            Running::Foreground(tag) => Some(Finished::Foreground(tag)),
            Running::Background { since } => {
                self.busy_background_ns += now.since(since).as_ns();
                let job = self
                    .background
                    .pop_front()
                    .expect("a running background job is queued");
                Some(Finished::Background(job.tag))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_core_takes_instructions_times_cpi_over_clock_rounded_up() {
        let lwp = CoreSpec::new(1000.0, 1.0);
        assert_eq!(lwp.duration(1000.0).as_ns(), 1000);
        assert_eq!(
            lwp.duration(3.0).as_ns(),
            3,
            "exact values are not bumped up"
        );
        let arm = CoreSpec::new(800.0, 0.5);
        assert_eq!(arm.time_ns(4000.0), 2500.0);
        assert_eq!(
            CoreSpec::new(3000.0, 1.0).duration(1.0).as_ns(),
            1,
            "1/3 ns rounds up"
        );
    }

    #[test]
    fn rate_and_time_are_one_formula() {
        let c = CoreSpec::new(2000.0, 1.0 / 3.0);
        // 6 bytes per ns at one instruction per byte.
        assert!((c.rate_mb_s(1.0) - 6000.0).abs() < 1e-9);
        let ipb = 7.5;
        let bytes = 1e6;
        let via_rate = bytes * 1e3 / c.rate_mb_s(ipb);
        assert!((via_rate - c.time_ns(bytes * ipb)).abs() < 1e-6 * via_rate);
    }

    #[test]
    fn a_slot_streams_bytes_per_cycle_times_clock() {
        let s = SlotSpec::new(250.0);
        assert_eq!(s.rate_mb_s(64.0), 16_000.0);
        assert_eq!(s.duration(16_000, 64.0).as_ns(), 1000);
    }

    #[test]
    fn time_shared_cores_run_items_side_by_side_then_queue() {
        let mut p = TimeSharedCores::new(2);
        let d = SimDuration::from_ns(1000);
        let ends: Vec<u64> = (0..3).map(|_| p.run(SimTime::ZERO, d).as_ns()).collect();
        assert_eq!(ends, vec![1000, 1000, 2000]);
        assert_eq!(p.busy_ns(), vec![2000, 1000]);
    }

    #[test]
    fn foreground_work_preempts_background_which_resumes_where_it_stopped() {
        let mut e: PreemptiveCore<u64, u64> =
            PreemptiveCore::new(CoreSpec::new(800.0, 0.5), 4000.0);
        assert_eq!(e.foreground_ns(), 2500);
        e.push_background(9, 3200.0); // 2 us
        let t0 = SimTime::ZERO;
        let (end, g1) = e.start(t0).unwrap();
        assert_eq!(end.as_ns(), 2000);
        let t1 = t0 + SimDuration::from_ns(500);
        e.push_foreground(5, t1);
        let (t2, g2) = e.start(t1).unwrap();
        assert_eq!(t2.since(t1).as_ns(), 2500);
        assert_eq!(
            e.finish(g1, end),
            None,
            "the preempted job's completion is stale"
        );
        assert_eq!(e.finish(g2, t2), Some(Finished::Foreground(5)));
        let (t3, g3) = e.start(t2).unwrap();
        assert_eq!(t3.since(t2).as_ns(), 1500, "the remaining 1.5 us");
        assert_eq!(e.finish(g3, t3), Some(Finished::Background(9)));
        assert_eq!(e.start(t3), None);
        assert_eq!((e.busy_foreground_ns, e.busy_background_ns), (2500, 2000));
    }
}
