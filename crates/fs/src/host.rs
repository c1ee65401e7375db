//! `FsHost`: the synchronous convenience driver for tools and tests. It holds a block device
//! and an `Fs` as one `sim::Model` ([`Machine`]: wires the FS's block requests to the device
//! and the device's completions back, arms the FS's CPU timer, reports its progress) on a
//! `sim::Driver`, and runs one operation to completion with `Driver::run_until` under the
//! driver's watchdog — an operation that stops making progress is the one `sim::Stall`, never
//! a spin.
//!
//! Beside the FS, the machine takes raw block reads from a second initiator (`submit_raw`:
//! live mode's computational drive reading a file's extents through the same device): their
//! completions are kept apart from the FS's, by id.

use crate::config::FsConfig;
use crate::error::{ConfigError, FsError};
use crate::exec::{Fs, FsCompletion, OpId};
use crate::ops::{FsOp, FsReply};
use crate::types::Caller;
use nearflash_blockdev::{BlockCompletion, BlockDevice, BlockOp, BlockRequest};
use nearflash_sim::{
    Driver, EventQueue, Model, Progress, Schedule, Sim, SimDuration, SimRng, SimTime, Stall,
    TraceEvent,
};
use std::collections::{BTreeMap, BTreeSet};
use thiserror::Error;

/// The machine's events: the device's own, and the FS's CPU timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostEvent<E> {
    Dev(E),
    FsTimer,
}

impl<E: TraceEvent> TraceEvent for HostEvent<E> {
    fn hash_word(&self) -> u64 {
        match self {
            HostEvent::Dev(e) => e.hash_word(),
            HostEvent::FsTimer => 0x4653_0000_0000_0001,
        }
    }
}

#[derive(Debug, Error)]
pub enum HostError {
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error("configuration: {0}")]
    Config(#[from] ConfigError),
    #[error("file-system operation stuck: {0}")]
    Stall(#[from] Stall),
}

/// The device and the FS as one `Model`.
pub struct Machine<D: BlockDevice> {
    pub dev: D,
    pub fs: Fs,
    timer_armed: Option<SimTime>,
    finished: BTreeMap<OpId, FsCompletion>,
    block_done: Vec<BlockCompletion>,
    /// Block requests the device completed (watchdog progress).
    blocks_completed: u64,
    /// The clock as of the last event handled or advance (a driver's goal may name a time).
    now: SimTime,
    /// Raw reads submitted (`FsHost::submit_raw`) and not yet completed, by id.
    raw: BTreeSet<u64>,
    /// Raw reads completed, not yet taken.
    raw_done: Vec<BlockCompletion>,
}

/// The bit every raw request's id carries: the FS numbers its own requests from 0 and never
/// reaches it.
pub const RAW_ID_BIT: u64 = 1 << 62;

impl<D: BlockDevice> Machine<D> {
    /// The clock as of the last event handled (or advance).
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Whether operation `id` has finished (its completion waits to be taken).
    pub fn is_finished(&self, id: OpId) -> bool {
        self.finished.contains_key(&id)
    }

    /// Moves completions and requests between the device and the FS until neither has
    /// anything to hand over, then arms the FS timer.
    fn pump(&mut self, q: &mut EventQueue<HostEvent<D::Event>>) {
        loop {
            let mut moved = false;
            self.dev.take_completions(&mut self.block_done);
            for c in self.block_done.drain(..) {
                self.blocks_completed += 1;
                moved = true;
                if self.raw.remove(&c.id) {
                    self.raw_done.push(c);
                    continue;
                }
                self.fs.handle_block_completion(q.now(), c);
            }
            while let Some(io) = self.fs.poll_io() {
                if io.fua {
                    self.dev.submit_fua(io.req, &mut q.map(HostEvent::Dev));
                } else {
                    self.dev.submit(io.req, &mut q.map(HostEvent::Dev));
                }
                moved = true;
            }
            if !moved {
                break;
            }
        }
        if let Some(t) = self.fs.poll_timeout() {
            if self.timer_armed != Some(t) {
                q.schedule_at(t, HostEvent::FsTimer);
                self.timer_armed = Some(t);
            }
        }
        while let Some(c) = self.fs.poll_completion() {
            self.finished.insert(c.id, c);
        }
    }
}

impl<D: BlockDevice> Model for Machine<D> {
    type Event = HostEvent<D::Event>;

    fn handle(&mut self, ev: Self::Event, q: &mut EventQueue<Self::Event>, rng: &mut SimRng) {
        match ev {
            HostEvent::Dev(e) => self.dev.handle(e, &mut q.map(HostEvent::Dev), rng),
            HostEvent::FsTimer => {
                self.timer_armed = None;
                self.fs.handle_timeout(q.now());
            }
        }
        self.now = q.now();
        self.pump(q);
    }

    fn progress(&self) -> Progress {
        let s = self.fs.stats();
        // A block completion is progress too: one operation (a large sync on a slow device)
        // may rightly take longer than the watchdog's limit while the device keeps completing.
        Progress {
            completed: s.ops_completed + s.ops_failed + self.blocks_completed,
            outstanding: self.fs.outstanding() + self.raw.len() as u64,
        }
    }
}

pub struct FsHost<D: BlockDevice> {
    run: Driver<Machine<D>>,
}

/// Simulated time an operation may go without a block or an operation completing before it
/// is declared stuck: the driver's stall limit, tighter than `sim::STALL_LIMIT` — a file
/// system's waits are a few block requests, so a deadlock is reported sooner.
pub const WATCHDOG_LIMIT_DEFAULT: SimDuration = SimDuration(10_000_000_000);

impl<D: BlockDevice> FsHost<D> {
    /// A host over `dev`, whose pending events (if any) are already on `sim`'s queue. Over a
    /// device with a volatile write cache the FS sends FLUSH and FUA where its journal needs
    /// them (`Fs::for_device`).
    pub fn new(sim: Sim<HostEvent<D::Event>>, dev: D, cfg: FsConfig) -> Result<Self, HostError> {
        let fs = Fs::for_device(cfg, &dev)?;
        let now = sim.now();
        let m = Machine {
            dev,
            fs,
            timer_armed: None,
            finished: BTreeMap::new(),
            block_done: Vec::new(),
            blocks_completed: 0,
            now,
            raw: BTreeSet::new(),
            raw_done: Vec::new(),
        };
        Ok(FsHost {
            run: Driver::new(sim, m).with_stall_limit(WATCHDOG_LIMIT_DEFAULT),
        })
    }

    pub fn now(&self) -> SimTime {
        self.run.now()
    }

    pub fn fs(&self) -> &Fs {
        &self.run.model().fs
    }

    pub fn dev(&self) -> &D {
        &self.run.model().dev
    }

    /// Gives up the device (for a power cut: the FS's memory is dropped with the host).
    pub fn into_device(self) -> D {
        self.into_parts().1
    }

    /// Gives up the loop and the device, the device's pending events still on the queue (a
    /// power cut during which the device keeps running, e.g. a write buffer's hold-up; the
    /// FS's memory is dropped with the host).
    pub fn into_parts(self) -> (Sim<HostEvent<D::Event>>, D) {
        let (sim, m) = self.run.into_parts();
        (sim, m.dev)
    }

    /// Queues an operation now.
    pub fn submit(&mut self, caller: Caller, op: FsOp) -> Result<OpId, FsError> {
        let (m, q, _) = self.run.parts();
        let id = m.fs.submit(q.now(), caller, op)?;
        m.pump(q);
        Ok(id)
    }

    /// Processes every event due at or before `t` (background device work: GC, checkpoints)
    /// and moves the clock to `t` — for a driver whose clock follows another one (live mode's
    /// wall clock). `t` must not be in the past.
    pub fn advance_to(&mut self, t: SimTime) {
        assert!(t >= self.run.now(), "advance_to({t:?}) is in the past");
        self.run.advance_to(t);
        self.run.model_mut().now = t;
    }

    /// Runs events until `done(machine)` holds — checked at the start and after every event
    /// — (true), or no event is pending (false): `Driver::run_until_by` with no time limit,
    /// for a driver that decides at every event (a crash test cutting power the moment a
    /// phase executes).
    pub fn run_until_either(&mut self, done: impl FnMut(&Machine<D>) -> bool) -> bool {
        let reached = self.run.run_until_by(SimTime(u64::MAX), done);
        assert_eq!(
            self.run.model().now,
            self.run.now(),
            "the model's clock is the loop's"
        );
        reached
    }

    /// The completion of `id`, once it finished.
    pub fn take_completion(&mut self, id: OpId) -> Option<FsCompletion> {
        self.run.model_mut().finished.remove(&id)
    }

    /// Submits a raw block read now, straight to the device (the FS never sees it); `req.id`
    /// carries [`RAW_ID_BIT`]. Its completion: [`FsHost::take_raw_completions`].
    pub fn submit_raw(&mut self, req: BlockRequest) {
        assert!(
            req.id & RAW_ID_BIT != 0,
            "a raw request's id carries RAW_ID_BIT"
        );
        assert_eq!(req.op, BlockOp::Read, "raw requests read");
        let (m, q, _) = self.run.parts();
        let fresh = m.raw.insert(req.id);
        assert!(fresh, "raw request {} is in flight once", req.id);
        m.dev.submit(req, &mut q.map(HostEvent::Dev));
        m.pump(q);
    }

    /// Raw reads submitted and not yet completed.
    pub fn raw_outstanding(&self) -> u64 {
        self.run.model().raw.len() as u64
    }

    /// Moves the completed raw reads into `out`, in completion order.
    pub fn take_raw_completions(&mut self, out: &mut Vec<BlockCompletion>) {
        out.append(&mut self.run.model_mut().raw_done);
    }

    /// Runs events until a raw read has completed: with a `limit`, not past an event after it
    /// (false when the next event lies past it first); without one, under the watchdog.
    pub fn run_until_raw_done(&mut self, limit: Option<SimTime>) -> Result<bool, Stall> {
        let done = |m: &Machine<D>| !m.raw_done.is_empty();
        match limit {
            Some(t) => Ok(self.run.run_until_by(t, done)),
            None => self.run.run_until(done).map(|()| true),
        }
    }

    /// Runs events until `id` completes (or the watchdog fires).
    pub fn wait(&mut self, id: OpId) -> Result<FsCompletion, HostError> {
        self.run.run_until(|m| m.finished.contains_key(&id))?;
        Ok(self
            .take_completion(id)
            .expect("run_until returns once the operation is done"))
    }

    /// Runs one operation to completion.
    pub fn run(&mut self, caller: Caller, op: FsOp) -> Result<FsReply, HostError> {
        let id = self.submit(caller, op)?;
        Ok(self.wait(id)?.result?)
    }
}
