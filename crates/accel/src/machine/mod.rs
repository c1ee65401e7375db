//! The FlashAbacus device as an event-driven machine over the simulated flash device.
//!
//! Offload (§4): the host downloads each kernel description over PCIe (a FIFO bandwidth
//! server) into DDR3L (through the PCIe BAR; another FIFO bandwidth server) and raises an
//! interrupt that reaches Flashvisor through a hardware queue. From
//! then on the host is not involved. Flashvisor (LWP0, a FIFO server charging
//! `flashvisor_message_cycles` per message) maps the kernel's data sections under range locks
//! (§4.3: inputs for reads, outputs and in-outs for writes, in page groups), admits it into
//! the multi-app execution chain and schedules units on the workers (LWP2..) with the chosen
//! policy. A unit (a screen, or a serial microblock) on worker w:
//!
//! 1. w asks Flashvisor (queue message) to bring its input footprint into DDR3L: groups
//!    already there cost nothing, the others are read from flash through the FTL device
//!    (`nearflash-ftl`, which occupies dies and channels) — see `dataflow`;
//! 2. the data cross the DDR3L port (a FIFO bandwidth server);
//! 3. w computes for instructions × CPI ÷ clock;
//! 4. the outputs cross the DDR3L port and stay there, dirty, until evicted or until the
//!    kernel ends, when Flashvisor writes them back (the kernel completes once they are on
//!    flash);
//! 5. w reports completion to Flashvisor (queue message), which updates the chain and
//!    schedules again. Under the inter-kernel schedulers a worker owns its whole kernel and
//!    goes on to the kernel's next unit without asking; it reports only the kernel's end.
//!
//! Storengine (LWP1) is the FTL device's background work: its LWP is counted busy while the
//! device runs GC or writes a checkpoint (measured between events). DDR3L holds 1 GiB less
//! the kernel descriptions, as a least-recently-used page-group cache; a unit whose
//! footprint exceeds it streams through it (its groups are not pinned). Not modelled: the
//! scratchpad's capacity.
//!
//! Two fidelities, same events: `new` formats a timing device (`NoStore`, no data);
//! `new_functional` formats one over a `MemoryStore` and lets `functional` move real data
//! at the events above (preload payloads, groups entering DDR3L, `Computed`, write-backs,
//! kernel end) and verify every instance's live-out arrays from flash.
//!
//! The machine is a `sim::Model` (`State`, handed `now` and events, answering with events)
//! and never sees the loop: [`Machine`] holds it on a `sim::Driver`, and a run is one
//! `Driver::run_until` — every instance finished — under the driver's watchdog, to which the
//! model reports flash requests and units completed. A run that stops progressing is
//! `AccelError::Stalled`, never a hang. Preconditioning is a phase of the same loop
//! (`crate::preload`).
//!
//! Files: this one holds the machine's events and state; `drive` the driver's side
//! (building, preconditioning, running), `precondition` the shared preconditioned device,
//! `flashvisor` the offload and Flashvisor's messages, `dataflow` the data between flash and
//! DDR3L, `measure` what a run reports.
//!
//! Deterministic: the one simulation loop (`sim::Sim` inside the driver: one event queue, one
//! seeded RNG), ordered maps; the trace hash covers every event of the timed run.

use crate::chain::{Chain, Unit};
use crate::config::AccelConfig;
use crate::ddr_cache::DdrCache;
use crate::error::AccelError;
use crate::functional::Functional;
use crate::layout::Layout;
use crate::plan::KernelPlan;
use crate::sched::{Scheduler, SchedulerKind};
use crate::series::{Busy, TimeBins};
use crate::server::FifoServer;
use dataflow::{ddr_capacity_groups, CacheKeys, GroupIo, IoReq};
use nearflash_flash::FlashConfig;
use nearflash_ftl::{BlockCompletion, Device, Event, FtlConfig};
use nearflash_hw::DramPort;
use nearflash_rangelock::{LockId, RangeLockTable};
use nearflash_sim::{EventQueue, KeyMap, Model, Progress, Schedule, SimRng, SimTime, TraceEvent};
use std::collections::VecDeque;

mod dataflow;
mod drive;
mod flashvisor;
mod measure;
mod precondition;

pub use drive::Machine;
pub use precondition::Preconditioned;

/// Range locks the table holds at most (sections × instances is far below).
const RANGE_LOCKS_MAX: usize = 1 << 16;

/// One kernel instance of a run.
#[derive(Clone, Debug)]
pub struct Instance {
    /// Index into the run's plans.
    pub plan: usize,
    pub app: usize,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum FvMsg {
    /// The host's interrupt for a downloaded kernel: map its sections.
    Arrive(usize),
    /// Worker asks for its unit's inputs.
    Read(usize),
    /// Worker reports its unit (inter-kernel: its kernel) done.
    Done(usize),
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Ev {
    /// A kernel description crossed PCIe; it is now written into DDR3L.
    Downloaded(usize),
    /// The description is in DDR3L: the host's interrupt goes to Flashvisor.
    Interrupt(usize),
    Fv(FvMsg),
    Start(usize),
    DdrIn(usize),
    Computed(usize),
    DdrOut(usize),
}

/// The machine's events: the flash device's own, and the accelerator's.
#[derive(Clone, Copy, Debug)]
pub(crate) enum MachineEvent {
    Dev(Event),
    Accel(Ev),
}

impl TraceEvent for MachineEvent {
    fn hash_word(&self) -> u64 {
        match *self {
            MachineEvent::Dev(e) => e.hash_word(),
            MachineEvent::Accel(e) => {
                let (kind, arg) = match e {
                    Ev::Downloaded(i) => (1, i),
                    Ev::Interrupt(i) => (2, i),
                    Ev::Fv(FvMsg::Arrive(i)) => (3, i),
                    Ev::Fv(FvMsg::Read(i)) => (4, i),
                    Ev::Fv(FvMsg::Done(i)) => (5, i),
                    Ev::Start(w) => (6, w),
                    Ev::DdrIn(w) => (7, w),
                    Ev::Computed(w) => (8, w),
                    Ev::DdrOut(w) => (9, w),
                };
                6 << 56 | kind << 48 | arg as u64
            }
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Worker {
    unit: Option<Unit>,
    io_pending: u32,
    /// Inter-kernel: the unit was already completed in the chain by the worker itself.
    completed_locally: bool,
    busy: FifoServer,
    /// Since when the worker holds its unit (inter-kernel: its kernel), and for how long it
    /// has held units in all (§5.4's execution time, stalls included).
    held_since: Option<SimTime>,
    occupied_ns: u64,
}

type Q = EventQueue<MachineEvent>;

impl Model for State {
    type Event = MachineEvent;

    fn handle(&mut self, ev: MachineEvent, q: &mut Q, rng: &mut SimRng) {
        let at = q.now();
        if self.dev.gc_active() || self.dev.checkpoint_active() {
            self.storengine.add(self.last_event, at);
        }
        self.last_event = at;
        self.sample_dies(at, false);
        match ev {
            MachineEvent::Accel(e) => self.on_event(q, e),
            MachineEvent::Dev(e) => self.dev.handle(e, &mut q.map(MachineEvent::Dev), rng),
        }
        if let Err(e) = self.drain_completions(q) {
            self.failure.get_or_insert(e);
        }
        if let Some(e) = self.func.as_mut().and_then(Functional::take_failure) {
            self.failure.get_or_insert(e);
        }
    }

    /// Flash requests and units completed, against instances not yet finished: events that
    /// keep coming with neither growing is a livelock.
    fn progress(&self) -> Progress {
        Progress {
            completed: self.ios_completed + self.units_finished,
            outstanding: self.unfinished as u64,
        }
    }
}

struct State {
    cfg: AccelConfig,
    dev: Device,
    seed: u64,
    plans: Vec<KernelPlan>,
    instances: Vec<Instance>,
    layout: Layout,
    chain: Chain,
    sched: Scheduler,
    flashvisor: FifoServer,
    /// DDR3L's port.
    ddr: DramPort,
    pcie: FifoServer,
    storengine: Busy,
    /// The backbone's summed die busy time over the run, sampled between events.
    die_bins: TimeBins,
    die_sample: (SimTime, u64),
    last_event: SimTime,
    workers: Vec<Worker>,
    /// Flash requests at the FTL by request id. This and the other `KeyMap`s below are
    /// only looked up by key, never walked, so their order decides nothing.
    io_owner: KeyMap<u64, IoReq>,
    /// Flash requests waiting for a free slot at the FTL, per worker: (op, offset, length,
    /// section of the worker's kernel).
    io_waiting: Vec<VecDeque<IoReq>>,
    /// Flash requests outstanding at the FTL (at most `flash_queue_depth`).
    io_outstanding: u32,
    /// Dense keys of the (instance, group) pairs, which index `cache`, `group_io` and
    /// `waiters`.
    keys: CacheKeys,
    /// Flashvisor's DDR3L page-group cache.
    cache: DdrCache,
    /// Per key: whether the group is being read from flash, and how many write-backs of it
    /// are in flight (a read of it is then served from DDR3L). A table, not a map: the
    /// flash completions of a large mix probe it per group, and a hash table's probes
    /// missed the cache.
    group_io: Vec<GroupIo>,
    /// Groups being read from flash → workers waiting for them besides the reader.
    waiters: KeyMap<u32, Vec<usize>>,
    /// Per instance: write-back requests in flight, and whether its last unit is done
    /// (it completes once its dirty groups are on flash).
    flush_pending: Vec<u32>,
    finishing: Vec<bool>,
    /// Instances not yet complete.
    unfinished: usize,
    /// The worker whose waiting request goes next (round robin).
    io_turn: usize,
    next_request: u64,
    locks: RangeLockTable,
    lock_owner: KeyMap<LockId, usize>,
    held: Vec<Vec<LockId>>,
    locks_waiting: Vec<u32>,
    start: SimTime,
    /// Per instance: when Flashvisor asked for its range locks, and when it got the last.
    mapped_at: Vec<Option<SimTime>>,
    admitted_at: Vec<Option<SimTime>>,
    done_at: Vec<Option<SimTime>>,
    started_at: Vec<Option<SimTime>>,
    /// Completions taken from the device, a buffer kept across events.
    completions: Vec<BlockCompletion>,
    /// Flash requests and units completed so far: what the run's watchdog counts as
    /// progress.
    ios_completed: u64,
    units_finished: u64,
    flash_read_bytes: u64,
    flash_write_bytes: u64,
    events_start: u64,
    /// Summed die / channel busy time when the timed run started.
    flash_busy_start_ns: (u64, u64),
    /// Functional fidelity's data path (`None` in timing fidelity).
    func: Option<Functional>,
    /// The first error a handled event raised (the loop stops on it).
    failure: Option<AccelError>,
    /// The device's configurations (what a `Preconditioned` copy of it records).
    flash_cfg: FlashConfig,
    ftl_cfg: FtlConfig,
}

impl State {
    /// The machine's state around `dev` (fresh, or a copy of a preconditioned one); the
    /// run's clock starts when `Machine::run` starts it. One line per field: the length is the
    /// state's, not the logic's.
    #[allow(clippy::too_many_arguments)]
    fn new(
        cfg: &AccelConfig,
        dev: Device,
        (flash, ftl): (&FlashConfig, &FtlConfig),
        kind: SchedulerKind,
        plans: Vec<KernelPlan>,
        instances: Vec<Instance>,
        layout: Layout,
        seed: u64,
        func: Option<Functional>,
    ) -> Result<State, AccelError> {
        cfg.validate()?;
        assert_eq!(layout.group_bytes, dev.layout().group_bytes());
        assert_eq!(layout.offsets.len(), instances.len());
        if layout.end_bytes > dev.logical_bytes() {
            // `Layout::place` was given another capacity than this device's.
            return Err(AccelError::DoesNotFit {
                needed_bytes: layout.end_bytes,
                capacity_bytes: dev.logical_bytes(),
            });
        }
        let chain = Chain::new(
            instances
                .iter()
                .map(|i| plans[i.plan].shape(i.app))
                .collect(),
        );
        let n = instances.len();
        let layout_group_bytes = layout.group_bytes;
        let section_bytes: Vec<Vec<u64>> = instances
            .iter()
            .map(|i| {
                plans[i.plan]
                    .desc
                    .sections
                    .iter()
                    .map(|s| s.bytes)
                    .collect()
            })
            .collect();
        let keys = CacheKeys::new(&layout, &section_bytes);
        let key_count = keys.count() as usize;
        Ok(State {
            cfg: cfg.clone(),
            dev,
            seed,
            plans,
            instances,
            layout,
            chain,
            sched: Scheduler::new(kind, cfg.worker_count()),
            flashvisor: FifoServer::default(),
            ddr: DramPort::new(cfg.ddr_bandwidth_mb_s),
            pcie: FifoServer::default(),
            storengine: Busy::default(),
            die_bins: TimeBins::default(),
            die_sample: (SimTime::ZERO, 0),
            last_event: SimTime::ZERO,
            workers: vec![Worker::default(); cfg.worker_count()],
            io_owner: KeyMap::default(),
            // One queue per worker, and Flashvisor's own for write-backs.
            io_waiting: vec![VecDeque::new(); cfg.worker_count() + 1],
            cache: DdrCache::new(
                ddr_capacity_groups(cfg, n, layout_group_bytes),
                keys.count(),
            ),
            keys,
            group_io: vec![GroupIo::default(); key_count],
            waiters: KeyMap::default(),
            flush_pending: vec![0; n],
            finishing: vec![false; n],
            unfinished: n,
            io_outstanding: 0,
            io_turn: 0,
            next_request: 0,
            locks: RangeLockTable::new(RANGE_LOCKS_MAX),
            lock_owner: KeyMap::default(),
            held: vec![Vec::new(); n],
            locks_waiting: vec![0; n],
            start: SimTime::ZERO,
            mapped_at: vec![None; n],
            admitted_at: vec![None; n],
            done_at: vec![None; n],
            started_at: vec![None; n],
            completions: Vec::new(),
            ios_completed: 0,
            units_finished: 0,
            flash_read_bytes: 0,
            flash_write_bytes: 0,
            events_start: 0,
            flash_busy_start_ns: (0, 0),
            func,
            failure: None,
            flash_cfg: flash.clone(),
            ftl_cfg: ftl.clone(),
        })
    }
}
