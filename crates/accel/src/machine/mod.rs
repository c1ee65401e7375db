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
//! Deterministic: the one simulation loop (`sim::Sim`: one event queue, one seeded RNG),
//! ordered maps; the trace hash covers every event of the timed run.

use crate::chain::{Chain, Unit};
use crate::config::AccelConfig;
use crate::ddr_cache::DdrCache;
use crate::energy::{Category, EnergyMeter};
use crate::error::AccelError;
use crate::functional::{Fault, Functional, InstanceCheck};
use crate::layout::Layout;
use crate::plan::KernelPlan;
use crate::report::{InstanceReport, LatencySummaryMs, RunReport};
use crate::sched::{Scheduler, SchedulerKind};
use crate::series::{series_points, Busy, TimeBins};
use crate::server::{transfer, FifoServer};
use dataflow::{ddr_capacity_groups, CacheKeys, GroupIo, IoReq};
use nearflash_blockdev::load::DEFAULT_STALL_LIMIT;
use nearflash_flash::{FlashConfig, Geometry, MemoryStore, NoStore, PageStore};
use nearflash_ftl::{BlockCompletion, BlockOp, BlockRequest, Device, Event, FtlConfig};
use nearflash_hw::DramPort;
use nearflash_kernels::{Access, Kernel};
use nearflash_rangelock::{Acquire, LockId, PageRange, RangeLockTable};
use nearflash_sim::{
    EventQueue, KeyMap, Model, Progress, Schedule, Sim, SimDuration, SimRng, SimTime, TraceEvent,
    Watchdog,
};

mod dataflow;
use std::collections::VecDeque;

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

/// The accelerator on the one simulation loop: `sim` owns the clock, the RNG and the trace
/// hash; `st` is the machine's state, a `sim::Model`.
pub struct Machine {
    sim: Sim<MachineEvent>,
    st: State,
    /// The inputs are on flash already (built from a [`Preconditioned`] device).
    preconditioned: bool,
}

/// A workload's device right after its untimed preconditioning — inputs written, every
/// write complete — with the run's clock, RNG and pending events. It depends on the seed,
/// the flash and FTL configurations, the request size and where the inputs lie, not on the
/// scheduler or the cost model, so the accelerator runs of one workload can start from
/// copies of one (`run::precondition`, `run::run_workload_from`) instead of each writing the
/// same inputs again. Timing fidelity (the device keeps no data).
pub struct Preconditioned {
    sim: Sim<MachineEvent>,
    dev: Device,
    next_request: u64,
    seed: u64,
    flash: FlashConfig,
    ftl: FtlConfig,
    request_bytes_max: u64,
    preload: Vec<std::ops::Range<u64>>,
}

impl Preconditioned {
    /// Why a run of `seed`, `flash`, `ftl`, `cfg` and `layout` cannot start from this
    /// device (the first input that differs), or `None` when it can.
    fn mismatch(
        &self,
        cfg: &AccelConfig,
        flash: &FlashConfig,
        ftl: &FtlConfig,
        layout: &Layout,
        seed: u64,
    ) -> Option<&'static str> {
        if self.seed != seed {
            Some("seed")
        } else if self.flash != *flash {
            Some("flash configuration")
        } else if self.ftl != *ftl {
            Some("FTL configuration")
        } else if self.request_bytes_max != cfg.flash_request_bytes_max {
            Some("accel.flash_request_bytes_max")
        } else if self.preload != layout.preload {
            Some("the workload's input sections")
        } else {
            None
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
}

impl Machine {
    /// Formats a timing-fidelity device, places nothing yet: `layout` says where each
    /// instance's sections live; their inputs are written (untimed) before `run`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        cfg: &AccelConfig,
        flash: &FlashConfig,
        ftl: &FtlConfig,
        kind: SchedulerKind,
        plans: Vec<KernelPlan>,
        instances: Vec<Instance>,
        layout: Layout,
        seed: u64,
    ) -> Result<Machine, AccelError> {
        Machine::build(cfg, flash, ftl, kind, plans, instances, layout, seed, None)
    }

    /// As `new`, in functional fidelity: `kernels[p]` is the kernel `plans[p]` was built
    /// from; run with `run_functional`.
    #[allow(clippy::too_many_arguments)]
    pub fn new_functional(
        cfg: &AccelConfig,
        flash: &FlashConfig,
        ftl: &FtlConfig,
        kind: SchedulerKind,
        plans: Vec<KernelPlan>,
        kernels: Vec<Box<dyn Kernel>>,
        instances: Vec<Instance>,
        layout: Layout,
        seed: u64,
    ) -> Result<Machine, AccelError> {
        let func = Functional::new(
            kernels,
            &plans,
            instances.iter().map(|i| i.plan).collect(),
            instances.iter().map(|i| i.app).collect(),
            &layout,
        )?;
        Machine::build(
            cfg,
            flash,
            ftl,
            kind,
            plans,
            instances,
            layout,
            seed,
            Some(func),
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        cfg: &AccelConfig,
        flash: &FlashConfig,
        ftl: &FtlConfig,
        kind: SchedulerKind,
        plans: Vec<KernelPlan>,
        instances: Vec<Instance>,
        layout: Layout,
        seed: u64,
        func: Option<Functional>,
    ) -> Result<Machine, AccelError> {
        cfg.validate()?;
        let mut sim = Sim::new(seed);
        let store: Box<dyn PageStore> = match func {
            Some(_) => Box::new(MemoryStore::new(
                Geometry::from_config(flash).page_count(),
                flash.page_size_bytes,
            )),
            None => Box::new(NoStore),
        };
        let dev = Device::format(flash, ftl, store, &mut sim.queue().map(MachineEvent::Dev))?;
        Machine::assemble(
            cfg,
            (sim, dev),
            (flash, ftl),
            kind,
            plans,
            instances,
            layout,
            seed,
            func,
        )
    }

    /// The machine around a device (fresh, or a copy of a preconditioned one) on its `sim`.
    #[allow(clippy::too_many_arguments)]
    fn assemble(
        cfg: &AccelConfig,
        (sim, dev): (Sim<MachineEvent>, Device),
        (flash, ftl): (&FlashConfig, &FtlConfig),
        kind: SchedulerKind,
        plans: Vec<KernelPlan>,
        instances: Vec<Instance>,
        layout: Layout,
        seed: u64,
        func: Option<Functional>,
    ) -> Result<Machine, AccelError> {
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
        let st = State {
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
        };
        Ok(Machine {
            sim,
            st,
            preconditioned: false,
        })
    }

    /// Functional fidelity: injects `fault` (tests show verification catches it).
    pub fn inject(&mut self, fault: Fault) {
        let st = &mut self.st;
        st.func
            .as_mut()
            .expect("faults need functional fidelity")
            .inject(fault, &st.layout);
    }

    /// Preconditions the inputs, then runs every instance to completion.
    pub fn run(mut self, workload: &str) -> Result<RunReport, AccelError> {
        self.execute(workload)
    }

    /// Preconditions the inputs and hands back the device at that point (the machine's
    /// scheduler and plans are left behind: any run of the workload can start from it).
    pub fn precondition(mut self) -> Result<Preconditioned, AccelError> {
        assert!(
            self.st.func.is_none(),
            "preconditioned devices are shared by timing runs"
        );
        self.preload()?;
        let st = self.st;
        Ok(Preconditioned {
            sim: self.sim,
            dev: st.dev,
            next_request: st.next_request,
            seed: st.seed,
            flash: st.flash_cfg,
            ftl: st.ftl_cfg,
            request_bytes_max: st.cfg.flash_request_bytes_max,
            preload: st.layout.preload,
        })
    }

    /// As `new`, on a copy of `start` (the workload's device after preconditioning): `run`
    /// then skips the preconditioning it already holds. The report is the one `new` + `run`
    /// would give. Errors if `start` was preconditioned for other inputs, naming the first
    /// that differs.
    #[allow(clippy::too_many_arguments)]
    pub fn from_preconditioned(
        start: &Preconditioned,
        cfg: &AccelConfig,
        flash: &FlashConfig,
        ftl: &FtlConfig,
        kind: SchedulerKind,
        plans: Vec<KernelPlan>,
        instances: Vec<Instance>,
        layout: Layout,
        seed: u64,
    ) -> Result<Machine, AccelError> {
        if let Some(differs) = start.mismatch(cfg, flash, ftl, &layout, seed) {
            return Err(AccelError::NotPreconditionedFor { differs });
        }
        let dev = start
            .dev
            .try_clone()
            .expect("a timing device keeps no page data, so it can be copied");
        let mut m = Machine::assemble(
            cfg,
            (start.sim.clone(), dev),
            (flash, ftl),
            kind,
            plans,
            instances,
            layout,
            seed,
            None,
        )?;
        m.st.next_request = start.next_request;
        m.preconditioned = true;
        Ok(m)
    }

    /// Functional fidelity: `run`, and every instance's verdict (live-out arrays read back
    /// from flash when it finished, against the kernel's reference).
    pub fn run_functional(
        mut self,
        workload: &str,
    ) -> Result<(RunReport, Vec<InstanceCheck>), AccelError> {
        assert!(self.st.func.is_some(), "built with new_functional");
        let report = self.execute(workload)?;
        let checks = self.st.func.take().expect("functional").into_checks();
        Ok((report, checks))
    }

    fn execute(&mut self, workload: &str) -> Result<RunReport, AccelError> {
        if !self.preconditioned {
            self.preload()?;
        }
        let (sim, st) = (&mut self.sim, &mut self.st);
        // The trace hash covers the timed run only, as it always has.
        sim.restart_trace();
        st.start = sim.now();
        st.last_event = st.start;
        st.events_start = sim.events();
        st.flash_busy_start_ns = st.flash_busy_ns(st.start);
        st.start_series();
        for i in 0..st.instances.len() {
            let at = st.pcie.serve(
                st.start,
                transfer(st.cfg.kernel_description_bytes, st.cfg.pcie_bandwidth_mb_s),
            );
            st.schedule(sim.queue(), at, Ev::Downloaded(i));
        }
        // Unfinished kernels always have events pending; the watchdog stops a run in which
        // events keep coming but no flash request or unit completes (a livelock). One unit
        // may compute for its whole planned time with nothing else to do, so the limit
        // covers the longest one.
        let longest_unit_ns = st
            .plans
            .iter()
            .flat_map(|p| p.units.iter().flatten())
            .map(|u| u.compute_ns)
            .max()
            .unwrap_or(0);
        let limit = DEFAULT_STALL_LIMIT + SimDuration::from_ns(longest_unit_ns);
        let mut watchdog = Watchdog::starting_at(limit, sim.now());
        let progress = |st: &State| Progress {
            completed: st.ios_completed + st.units_finished,
            outstanding: st.unfinished as u64,
        };
        while st.unfinished > 0 {
            sim.step_watched(st, &mut watchdog, progress)
                .map_err(|stall| AccelError::Stalled {
                    what: "the FlashAbacus machine",
                    stall,
                })?;
            if let Some(e) = st.failure.take() {
                return Err(e);
            }
        }
        let end = sim.now();
        st.sample_dies(end, true);
        Ok(st.report(workload, end, sim.events(), sim.trace_hash().hex()))
    }

    /// Writes every input range (untimed preconditioning) and waits for the writes.
    fn preload(&mut self) -> Result<(), AccelError> {
        let st = &mut self.st;
        let chunk = st.cfg.flash_request_bytes_max;
        let mut todo: Vec<(u64, u64)> = Vec::new();
        for r in &st.layout.preload {
            let mut at = r.start;
            while at < r.end {
                let len = chunk.min(r.end - at);
                todo.push((at, len));
                at += len;
            }
        }
        let func = st.func.as_ref();
        crate::preload::write_extents(
            &mut self.sim,
            &mut st.dev,
            MachineEvent::Dev,
            |e| match e {
                MachineEvent::Dev(d) => d,
                MachineEvent::Accel(a) => unreachable!("accelerator event {a:?} before the run"),
            },
            &mut st.next_request,
            todo.into_iter(),
            |offset, len| func.map_or_else(Vec::new, |f| f.preload_payload(offset, len)),
            "preconditioning",
        )
    }
}

impl State {
    fn start_series(&mut self) {
        let t = self.start;
        self.flashvisor.start_series(t);
        self.ddr.start_series(t);
        self.pcie.start_series(t);
        for w in &mut self.workers {
            w.busy.start_series(t);
        }
        self.storengine.start_series(t);
        self.die_bins.reset(t);
        self.die_sample = (t, self.flash_busy_start_ns.0);
    }

    /// Spreads the dies' busy time since the last sample over the time since then; sampled
    /// at least twice per bin (`force`: now, at the end of the run).
    fn sample_dies(&mut self, now: SimTime, force: bool) {
        let (t0, busy0) = self.die_sample;
        if !force && now.since(t0).as_ns() < self.die_bins.bin_ns() / 2 {
            return;
        }
        let busy = self.flash_busy_ns(now).0;
        self.die_bins.add_spread(t0, now, busy - busy0);
        self.die_sample = (now, busy);
    }

    fn submit(
        &mut self,
        q: &mut Q,
        op: BlockOp,
        offset_bytes: u64,
        len_bytes: u64,
        data: Vec<u8>,
    ) -> u64 {
        let id = self.next_request;
        self.next_request += 1;
        self.dev.submit(
            BlockRequest {
                id,
                op,
                offset_bytes,
                len_bytes,
                data,
            },
            &mut q.map(MachineEvent::Dev),
        );
        id
    }

    fn schedule(&mut self, q: &mut Q, at: SimTime, ev: Ev) {
        q.schedule_at(at, MachineEvent::Accel(ev));
    }

    /// A message through a hardware queue to Flashvisor, handled in arrival order on LWP0.
    fn send_flashvisor(&mut self, q: &mut Q, msg: FvMsg) {
        let arrival = q.now() + SimDuration::from_ns(self.cfg.queue_message_ns);
        let done = self.flashvisor.serve(
            arrival,
            SimDuration::from_ns(self.cfg.flashvisor_message_ns()),
        );
        self.schedule(q, done, Ev::Fv(msg));
    }

    fn on_event(&mut self, q: &mut Q, ev: Ev) {
        let now = q.now();
        match ev {
            Ev::Downloaded(i) => {
                let bytes = self.cfg.kernel_description_bytes;
                let at = self.ddr.access(now, bytes);
                self.schedule(q, at, Ev::Interrupt(i));
            }
            Ev::Interrupt(i) => self.send_flashvisor(q, FvMsg::Arrive(i)),
            Ev::Fv(msg) => self.on_flashvisor(q, msg),
            Ev::Start(w) => {
                if self.unit_plan(w).reads.runs.is_empty() {
                    self.on_event(q, Ev::DdrIn(w));
                } else {
                    self.send_flashvisor(q, FvMsg::Read(w));
                }
            }
            Ev::DdrIn(w) => {
                let ns = self.unit_plan(w).compute_ns;
                self.workers[w].busy.account(now, ns);
                self.schedule(q, now + SimDuration::from_ns(ns), Ev::Computed(w));
            }
            Ev::Computed(w) => {
                if let Some(f) = self.func.as_mut() {
                    let u = self.workers[w].unit.expect("running");
                    f.compute(u.kernel, u.mb, u.screen);
                }
                let bytes = self.unit_plan(w).write_line_bytes;
                if bytes == 0 {
                    self.unit_finished(q, w);
                } else {
                    let at = self.ddr.access(now, bytes);
                    self.schedule(q, at, Ev::DdrOut(w));
                }
            }
            Ev::DdrOut(w) => {
                self.write_to_cache(q, w);
                self.unit_finished(q, w);
            }
        }
    }

    fn on_flashvisor(&mut self, q: &mut Q, msg: FvMsg) {
        match msg {
            FvMsg::Arrive(i) => self.map_sections(q, i),
            FvMsg::Read(w) => self.read_through_cache(q, w),
            FvMsg::Done(w) => {
                let now = q.now();
                let worker = &mut self.workers[w];
                let u = worker.unit.take().expect("a worker reports its unit");
                let since = worker.held_since.take().expect("a held unit has a start");
                worker.occupied_ns += now.since(since).as_ns();
                let finished = if std::mem::take(&mut worker.completed_locally) {
                    true
                } else {
                    self.chain.complete(u)
                };
                if finished {
                    self.flush(q, u.kernel);
                }
                self.dispatch(q);
            }
        }
    }

    /// §4.3: range locks on every data section; the kernel is admitted once all are held.
    fn map_sections(&mut self, q: &mut Q, i: usize) {
        assert!(self.mapped_at[i].is_none(), "an instance is mapped once");
        self.mapped_at[i] = Some(q.now());
        let sections = self.plans[self.instances[i].plan].desc.sections.clone();
        for (s, sec) in sections.iter().enumerate() {
            let g = self.layout.section_groups(i, s, sec.bytes);
            if g.is_empty() {
                continue;
            }
            let access = match sec.access {
                Access::Input => nearflash_rangelock::Access::Read,
                Access::Output | Access::InOut => nearflash_rangelock::Access::Write,
            };
            let range = PageRange::new(g.start, g.end - 1).expect("non-empty range");
            let a = self
                .locks
                .acquire(range, access)
                .expect("ranges are valid and the table is sized for every section");
            if let Acquire::Queued(_) = a {
                self.locks_waiting[i] += 1;
            }
            self.lock_owner.insert(a.id(), i);
            self.held[i].push(a.id());
        }
        if self.locks_waiting[i] == 0 {
            self.admit(q, i);
        }
    }

    fn admit(&mut self, q: &mut Q, i: usize) {
        assert!(self.mapped_at[i].is_some() && self.admitted_at[i].is_none());
        self.admitted_at[i] = Some(q.now());
        if let Some(f) = self.func.as_mut() {
            f.admit(i, &mut self.dev, &self.layout, &self.plans);
        }
        self.chain.admit(i);
        self.sched.admitted(&self.chain, i);
        self.dispatch(q);
    }

    fn dispatch(&mut self, q: &mut Q) {
        let free: Vec<bool> = self.workers.iter().map(|w| w.unit.is_none()).collect();
        let at = q.now() + SimDuration::from_ns(self.cfg.queue_message_ns);
        for (w, u) in self.sched.pick(&mut self.chain, &free) {
            self.started_at[u.kernel].get_or_insert(at);
            assert!(
                self.workers[w].held_since.is_none(),
                "a free worker holds nothing"
            );
            self.workers[w].held_since = Some(q.now());
            self.workers[w].unit = Some(u);
            self.schedule(q, at, Ev::Start(w));
        }
    }

    fn unit_plan(&self, w: usize) -> &crate::plan::UnitPlan {
        let u = self.workers[w].unit.expect("the worker runs a unit");
        self.plans[self.instances[u.kernel].plan].unit(u.mb, u.screen)
    }

    fn unit_finished(&mut self, q: &mut Q, w: usize) {
        self.units_finished += 1;
        let u = self.workers[w].unit.expect("running");
        if self.sched.kind().is_inter() {
            // The worker owns the whole kernel: it goes on by itself and reports the end.
            if !self.chain.complete(u) {
                let next = self.chain.issue(u.kernel);
                self.workers[w].unit = Some(next);
                self.schedule(q, q.now(), Ev::Start(w));
                return;
            }
            self.workers[w].completed_locally = true;
        }
        self.send_flashvisor(q, FvMsg::Done(w));
    }

    fn kernel_finished(&mut self, q: &mut Q, i: usize) {
        self.done_at[i] = Some(q.now());
        self.unfinished -= 1;
        if let Some(f) = self.func.as_mut() {
            f.verify(i, &mut self.dev, &self.layout);
        }
        for id in std::mem::take(&mut self.held[i]) {
            self.lock_owner.remove(&id);
            let granted = self
                .locks
                .release(id)
                .expect("a finished kernel holds its locks");
            for g in granted {
                let j = self.lock_owner[&g];
                self.locks_waiting[j] -= 1;
                if self.locks_waiting[j] == 0 {
                    self.admit(q, j);
                }
            }
        }
    }

    fn flash_busy_ns(&self, now: SimTime) -> (u64, u64) {
        (
            self.dev.die_busy_ns(now).iter().sum(),
            self.dev.channel_busy_ns(now).iter().sum(),
        )
    }

    /// Fig. 13 for FlashAbacus: workers and DDR3L compute, Flashvisor, Storengine and the
    /// backbone serve storage, PCIe moves data. The backbone's busy time is its dies' summed
    /// busy time over the die count (the mean fraction of dies busy). The host is not
    /// counted: after the offload it takes no part in the run (§4).
    fn energy_meter(
        &self,
        now: SimTime,
        lwp_busy_ns: &[u64],
        die_busy_ns: u64,
        makespan: u64,
    ) -> EnergyMeter {
        let c = &self.cfg;
        let mut m = EnergyMeter::default();
        let mut lwp_bins = vec![self.flashvisor.bins(), self.storengine.bins()];
        lwp_bins.extend(self.workers.iter().map(|w| w.busy.bins()));
        for (i, (&b, bins)) in lwp_busy_ns.iter().zip(lwp_bins).enumerate() {
            let cat = if i < 2 {
                Category::StorageAccess
            } else {
                Category::Computation
            };
            m.add(
                format!("lwp{i}"),
                cat,
                c.lwp_active_power_w,
                c.lwp_idle_power_w,
                b.min(makespan),
                (bins, 1),
            );
        }
        m.add(
            "ddr3l",
            Category::Computation,
            c.ddr_power_w,
            c.ddr_idle_power_w,
            self.ddr.busy_ns().min(makespan),
            (self.ddr.bins(), 1),
        );
        m.add(
            "pcie",
            Category::DataMovement,
            c.pcie_power_w,
            c.pcie_idle_power_w,
            self.pcie.busy_ns().min(makespan),
            (self.pcie.bins(), 1),
        );
        let dies = self.dev.die_busy_ns(now).len().max(1) as u64;
        m.add(
            "flash_backbone",
            Category::StorageAccess,
            c.backbone_active_power_w,
            c.backbone_idle_power_w,
            (die_busy_ns / dies).min(makespan),
            (&self.die_bins, dies),
        );
        m
    }

    fn report(&self, workload: &str, end: SimTime, events: u64, trace_hash: String) -> RunReport {
        let flash_busy = self.flash_busy_ns(end);
        let makespan = end.since(self.start).as_ns().max(1);
        let instances: Vec<InstanceReport> = self
            .instances
            .iter()
            .enumerate()
            .map(|(i, inst)| {
                let desc = &self.plans[inst.plan].desc;
                InstanceReport {
                    kernel: desc.name,
                    app: inst.app,
                    latency_ns: self.done_at[i].expect("finished").since(self.start).as_ns(),
                    started_ns: self.started_at[i]
                        .expect("started")
                        .since(self.start)
                        .as_ns(),
                    input_bytes: desc.input_bytes(),
                    lock_wait_ns: self.admitted_at[i]
                        .expect("admitted")
                        .since(self.mapped_at[i].expect("mapped"))
                        .as_ns(),
                    chunks: 1,
                }
            })
            .collect();
        let input_bytes: u64 = instances.iter().map(|i| i.input_bytes).sum();
        let latencies: Vec<u64> = instances.iter().map(|i| i.latency_ns).collect();
        let mut lwp_busy_ns = vec![self.flashvisor.busy_ns(), self.storengine.ns()];
        lwp_busy_ns.extend(self.workers.iter().map(|w| w.busy.busy_ns()));
        let die_busy_ns = flash_busy.0 - self.flash_busy_start_ns.0;
        let meter = self.energy_meter(end, &lwp_busy_ns, die_busy_ns, makespan);
        let workers: Vec<&TimeBins> = self.workers.iter().map(|w| w.busy.bins()).collect();
        let series = series_points(&workers, meter.power_series(makespan), makespan);
        let energy_j = meter.report(makespan);
        RunReport {
            scheduler: self.sched.kind().name(),
            workload: workload.to_string(),
            seed: self.seed,
            sim_time_ns: makespan,
            input_bytes,
            throughput_mb_s: input_bytes as f64 / (makespan as f64 / 1e9) / 1e6,
            latency_ms: LatencySummaryMs::of(&latencies),
            instances,
            lwp_utilization: lwp_busy_ns
                .iter()
                .map(|&b| b as f64 / makespan as f64)
                .collect(),
            lwp_busy_ns,
            worker_occupied_ns: self.workers.iter().map(|w| w.occupied_ns).collect(),
            ddr_busy_ns: self.ddr.busy_ns(),
            pcie_busy_ns: self.pcie.busy_ns(),
            flash_die_busy_ns: die_busy_ns,
            flash_channel_busy_ns: flash_busy.1 - self.flash_busy_start_ns.1,
            flash_read_bytes: self.flash_read_bytes,
            flash_write_bytes: self.flash_write_bytes,
            ddr_hit_groups: self.cache.hit_counts().0,
            ddr_miss_groups: self.cache.hit_counts().1,
            flashvisor_messages: self.flashvisor.served(),
            reused_instances: self.layout.reused_instances,
            flash_needed_bytes: self.layout.own_flash_bytes,
            flash_capacity_bytes: self.layout.capacity_bytes,
            host_cpu_busy_ns: 0,
            host_dram_busy_ns: 0,
            ssd_busy_ns: 0,
            phases: Vec::new(),
            energy_j,
            series,
            events: events - self.events_start,
            trace_hash,
        }
    }
}
