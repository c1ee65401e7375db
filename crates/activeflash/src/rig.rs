//! The simulated machine of §III: the FTL device with its controller as a compute engine,
//! and the host CPU. The machine ([`Machine`]) is a `sim::Model`: handed an event, it passes
//! it to the component it addresses, collects the FTL's completions and keeps its engines,
//! workers and foreground fed, scheduling what follows; it never runs the loop. The
//! experiments hold it in a [`Rig`], their synchronous driver: a `sim::Driver` (the loop, the
//! one seeded RNG, the trace hash) whose only wait is `Sim::run_until`, watched over the
//! commands at the FTL (what the machine reports as its progress).
//!
//! Every command — a foreground write, a page the compression task reads or writes, a trim,
//! a page the host re-reads — first takes `ftl_instructions_per_command` of the controller's
//! time and is then submitted to the FTL device, where it occupies its die and the bus like
//! any other. The logical space is split in two: the user area, which the foreground writes,
//! and the compressed log at its top, where compressed extents (or a program's output) are
//! appended. A host file for the controller's program task is written at the bottom of the
//! user area (`Rig::write_file`); a foreground beside a program writes above it.

use crate::config::ActiveFlashConfig;
use crate::corpus::{Codec, Corpus, RatioTable, PAGE_BYTES};
use crate::engine::{Engine, Finished, Offload};
use crate::error::ActiveFlashError;
use crate::program::ProgramTask;
use crate::worker::{ExtentJob, ExtentRecord, Side, Worker};
use nearflash_blockdev::{BlockDevice, Full};
use nearflash_flash::{Backbone, FlashConfig, MemoryStore, NoStore, PageStore};
use nearflash_ftl::{BlockCompletion, BlockOp, BlockRequest, Device, Event, FtlConfig};
use nearflash_sim::{
    Driver, EventQueue, LatencyHistogram, LazyTable, Model, Progress, Schedule, Sim, SimDuration,
    SimRng, SimTime, TraceEvent,
};
use std::collections::{BTreeMap, VecDeque};

/// Timing fidelity keeps no data (compressed sizes come from a table of real compressions);
/// functional fidelity stores every page and compresses the bytes read back from flash.
pub use nearflash_sim::Fidelity;

/// Events of the rig: the FTL device's own, foreground arrivals, and an engine finishing
/// the item it started in the given generation.
#[derive(Clone, Copy, Debug)]
pub(crate) enum RigEvent {
    Dev(Event),
    Arrival,
    EngineDone(Side, u64),
}

impl TraceEvent for RigEvent {
    fn hash_word(&self) -> u64 {
        // The kind in the low two bits, an engine's generation above them.
        let code = match *self {
            RigEvent::Dev(e) => return e.hash_word(),
            RigEvent::Arrival => 0,
            RigEvent::EngineDone(Side::Controller, generation) => generation << 2 | 1,
            RigEvent::EngineDone(Side::Host, generation) => generation << 2 | 2,
        };
        5 << 56 ^ code
    }
}

/// Extents sampled for the compressed-size table of timing fidelity.
const RATIO_TABLE_EXTENTS: u32 = 64;

/// Why a command was issued, to route its completion.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Origin {
    /// A foreground write; its latency runs from `arrived`, before the controller's FTL work.
    Foreground {
        page: u64,
        version: u32,
        arrived: SimTime,
    },
    Read {
        extent: u64,
        index: usize,
    },
    Write {
        extent: u64,
    },
    Trim,
    Oracle {
        index: usize,
    },
    /// A page of a host file being written onto the device (`Rig::write_file`).
    Load,
    /// A page of the program task's input file, the `index`-th of the file.
    ProgramRead {
        index: u64,
    },
    /// A page of the program task's output.
    ProgramWrite,
}

/// The open-loop (fixed rate) or closed-loop (queue depth) foreground writer.
#[derive(Debug)]
pub(crate) struct Foreground {
    /// The user pages it writes at random: `first_page..first_page + pages`.
    pub first_page: u64,
    pub pages: u64,
    pub interval_ns: Option<u64>,
    pub queue_depth: u32,
    pub total: u64,
    pub issued: u64,
    pub completed: u64,
    pub inflight: u32,
    pub start: SimTime,
    pub end: SimTime,
    pub latency: LatencyHistogram,
}

pub(crate) type Q = EventQueue<RigEvent>;

/// The experiments' synchronous driver: the machine on its loop (`sim::Driver` owns the clock,
/// the RNG and the trace hash). Between waits an experiment submits work to the machine;
/// a wait is `Sim::run_until`.
pub struct Rig {
    run: Driver<Machine>,
}

/// The machine of §III, a `sim::Model`.
pub(crate) struct Machine {
    pub(crate) dev: Device,
    completions: Vec<BlockCompletion>,
    next_id: u64,
    pub(crate) cfg: ActiveFlashConfig,
    pub(crate) fidelity: Fidelity,
    pub(crate) corpus: Corpus,
    pub(crate) codec: Codec,
    pub(crate) table: RatioTable,
    pub(crate) controller: Engine,
    pub(crate) host: Engine,
    /// Commands waiting for (or in) the controller's FTL processing.
    pending: BTreeMap<u64, (BlockRequest, Origin)>,
    /// Commands in the FTL device, or refused by it and waiting in `refused`.
    inflight: BTreeMap<u64, Origin>,
    /// Commands the controller has processed that the FTL device refused (it held its
    /// admission limit): submitted in order as completions make room. They came out of
    /// `pending`, so its bound bounds them too.
    refused: VecDeque<BlockRequest>,
    /// Submissions the FTL device refused (each later submitted from `refused`).
    device_refusals: u64,
    /// Per user page: its latest foreground version (0 = never written)...
    pub(crate) versions: LazyTable<u32>,
    /// ...and where that version lives: 0 = raw in the user area, n = extent n − 1. Lazy
    /// tables: a foreground writing a few pages at random over a large device allocates
    /// little (`nearflash_sim::lazy_table`).
    pub(crate) location: LazyTable<u32>,
    pub(crate) user_pages: u64,
    pub(crate) log_next: u64,
    pub(crate) log_end: u64,
    pub(crate) workers: [Worker; 2],
    pub(crate) jobs: BTreeMap<u64, ExtentJob>,
    pub(crate) extents_started: u64,
    pub(crate) extents: Vec<ExtentRecord>,
    pub(crate) fg: Option<Foreground>,
    /// Pages whose latest version lives compressed.
    pub(crate) pages_compressed_live: u64,
    oracle: Vec<Option<Vec<u8>>>,
    oracle_left: usize,
    /// The first error a handled event raised (a wait stops on it).
    failure: Option<ActiveFlashError>,
    /// Commands the FTL device completed (what the watchdog watches).
    commands_completed: u64,
    /// Pages of a host file in flight to the device (`Rig::write_file`).
    load_inflight: u32,
    /// The controller's program task, while one runs.
    pub(crate) program: Option<ProgramTask>,
}

impl Model for Machine {
    type Event = RigEvent;

    fn handle(&mut self, ev: RigEvent, q: &mut Q, rng: &mut SimRng) {
        match ev {
            RigEvent::Arrival => self.on_arrival(q, rng),
            RigEvent::EngineDone(side, generation) => self.on_engine_done(q, side, generation),
            RigEvent::Dev(e) => self.dev.handle(e, &mut q.map(RigEvent::Dev), rng),
        }
        if let Err(e) = self.collect(q) {
            self.failure.get_or_insert(e);
        }
        self.pump(q, rng);
    }

    /// The commands at the FTL: a command completing is progress.
    fn progress(&self) -> Progress {
        Progress {
            completed: self.commands_completed,
            outstanding: self.inflight.len() as u64,
        }
    }
}

impl Rig {
    /// Formats a device and reserves `log_pages` logical pages at the top for compressed
    /// extents.
    pub fn new(
        flash: &FlashConfig,
        ftl: &FtlConfig,
        cfg: &ActiveFlashConfig,
        fidelity: Fidelity,
        log_pages: u64,
        seed: u64,
    ) -> Result<Rig, ActiveFlashError> {
        cfg.validate()?;
        if flash.page_size_bytes as usize != PAGE_BYTES
            || flash.channels * flash.planes_per_die != 1
        {
            return Err(ActiveFlashError::Geometry {
                channels: flash.channels,
                planes_per_die: flash.planes_per_die,
                page_size_bytes: flash.page_size_bytes,
            });
        }
        let geo = nearflash_flash::Geometry::from_config(flash);
        let store: Box<dyn PageStore> = match fidelity {
            Fidelity::Timing => Box::new(NoStore),
            Fidelity::Functional => {
                Box::new(MemoryStore::new(geo.page_count(), flash.page_size_bytes))
            }
        };
        let mut sim = Sim::new(seed);
        let dev = Device::format(flash, ftl, store, &mut sim.queue().map(RigEvent::Dev))?;
        let st = Machine::new(dev, cfg, fidelity, log_pages, seed)?;
        Ok(Rig {
            run: Driver::new(sim, st),
        })
    }

    /// The machine, for reading its figures between waits.
    pub(crate) fn machine(&self) -> &Machine {
        self.run.model()
    }

    /// The machine, for a change between waits that schedules nothing (a phase's settings).
    pub(crate) fn machine_mut(&mut self) -> &mut Machine {
        self.run.model_mut()
    }

    pub fn now(&self) -> SimTime {
        self.run.now()
    }

    /// Submissions the FTL device refused for its admission limit (each held and submitted
    /// again once a completion made room): backpressure, kept apart from the figures.
    pub fn device_refusals(&self) -> u64 {
        self.machine().device_refusals
    }

    pub fn device(&self) -> &Device {
        &self.machine().dev
    }

    pub fn trace_hash(&self) -> String {
        self.run.sim().trace_hash().hex()
    }

    pub fn user_pages(&self) -> u64 {
        self.machine().user_pages
    }

    /// Logical pages of the compressed log written so far.
    pub fn log_written(&self) -> std::ops::Range<u64> {
        self.machine().user_pages..self.machine().log_next
    }

    /// The device's 4 KiB random-write ceiling (see [`write_ceiling_mb_s`]).
    pub fn write_ceiling_mb_s(&self) -> f64 {
        ceiling_of(self.machine().dev.backbone())
    }

    /// Waits until `done` holds (checked at the start and after every event): first the
    /// machine takes up what the experiment changed since the last wait (a foreground
    /// started, workers handed pages), then `Sim::run_until` under the watchdog. An error an
    /// event raised ends the wait, and wins over a stall seen at the same event.
    pub(crate) fn run_until(
        &mut self,
        mut done: impl FnMut(&Machine) -> bool,
    ) -> Result<(), ActiveFlashError> {
        let (m, q, rng) = self.run.parts();
        m.pump(q, rng);
        let waited = self.run.run_until(|m| m.failure.is_some() || done(m));
        if let Some(e) = self.machine_mut().failure.take() {
            return Err(e);
        }
        waited?;
        assert!(done(self.machine()), "a wait returns once its goal holds");
        Ok(())
    }

    /// Starts a foreground of `total` page writes over the whole user area (see
    /// `Machine::start_foreground`).
    pub(crate) fn start_foreground(
        &mut self,
        total: u64,
        rate_mb_s: Option<f64>,
        queue_depth: u32,
    ) {
        let pages = 0..self.machine().user_pages;
        self.start_foreground_over(pages, total, rate_mb_s, queue_depth);
    }

    /// Starts a foreground of `total` page writes over the user pages `pages`.
    pub(crate) fn start_foreground_over(
        &mut self,
        pages: std::ops::Range<u64>,
        total: u64,
        rate_mb_s: Option<f64>,
        queue_depth: u32,
    ) {
        let (m, q, _) = self.run.parts();
        m.start_foreground(q, pages, total, rate_mb_s, queue_depth);
    }

    /// Ends a running foreground after the writes it has issued (an open-loop foreground of
    /// unbounded length, e.g. beside a program run).
    pub(crate) fn stop_foreground(&mut self) {
        if let Some(fg) = &mut self.machine_mut().fg {
            fg.total = fg.issued;
        }
    }

    /// Writes `bytes` as a host file onto logical pages `0..` of the user area, through the
    /// controller's command path and the FTL like any host write, `host_io_depth` pages in
    /// flight; the last page is padded with zeros. Returns the first page after the file.
    pub(crate) fn write_file(&mut self, bytes: &[u8]) -> Result<u64, ActiveFlashError> {
        let pages = bytes.len().div_ceil(PAGE_BYTES) as u64;
        if pages > self.user_pages() {
            return Err(ActiveFlashError::VolumeTooLarge {
                volume_bytes: bytes.len() as u64,
                user_bytes: self.user_pages() * PAGE_BYTES as u64,
            });
        }
        let depth = self.machine().cfg.host_io_depth;
        let mut chunks = bytes.chunks(PAGE_BYTES).enumerate();
        loop {
            let (m, q, _) = self.run.parts();
            while m.load_inflight < depth {
                let Some((page, chunk)) = chunks.next() else {
                    break;
                };
                m.load_page(q, page as u64, chunk);
            }
            if m.load_inflight == 0 {
                assert_eq!(chunks.len(), 0, "pages are issued while any slot is free");
                return Ok(pages);
            }
            // Wait for a free slot, or for the last pages once every page is issued.
            let left = if chunks.len() == 0 { 0 } else { depth - 1 };
            self.run_until(|r| r.load_inflight <= left)?;
        }
    }

    /// Overwrites `writes` random user pages (closed loop, queue depth 8) with no new
    /// compression started, e.g. to make GC move what is on flash; then drains.
    pub fn rewrite(&mut self, writes: u64) -> Result<(), ActiveFlashError> {
        for w in &mut self.machine_mut().workers {
            w.stopped = true;
        }
        self.start_foreground(writes, None, 8);
        self.drain()
    }

    /// Reads `pages` straight from the FTL device (no controller time: this is the checker,
    /// not the simulated system), in order.
    pub(crate) fn oracle_read(&mut self, pages: &[u64]) -> Result<Vec<Vec<u8>>, ActiveFlashError> {
        let (m, q, _) = self.run.parts();
        m.oracle_submit(q, pages);
        self.run_until(|r| r.oracle_left == 0)?;
        Ok(std::mem::take(&mut self.machine_mut().oracle)
            .into_iter()
            .map(|d| d.expect("every oracle read completed"))
            .collect())
    }

    /// Runs until nothing is left to do: no foreground, no extent in flight, no command.
    pub(crate) fn drain(&mut self) -> Result<(), ActiveFlashError> {
        self.run_until(|r| {
            r.foreground_done()
                && r.jobs.is_empty()
                && r.pending.is_empty()
                && r.inflight.is_empty()
                && r.workers.iter().all(|w| w.source.is_empty() || w.stopped)
        })?;
        // Every page recorded as compressed is counted, and lives in a committed extent.
        let m = self.machine();
        let located = m.location.count_nonzero() as u64;
        assert_eq!(located, m.pages_compressed_live);
        assert!(m
            .location
            .nonzero_indexes()
            .into_iter()
            .all(|i| (m.location.get(i) as usize) <= m.extents.len()));
        assert!(m.workers.iter().all(|w| w.io_inflight == 0));
        Ok(())
    }
}

impl Machine {
    /// The machine over a formatted `dev`, `log_pages` logical pages reserved at the top for
    /// compressed extents.
    fn new(
        dev: Device,
        cfg: &ActiveFlashConfig,
        fidelity: Fidelity,
        log_pages: u64,
        seed: u64,
    ) -> Result<Machine, ActiveFlashError> {
        let logical_pages = dev.logical_bytes() / PAGE_BYTES as u64;
        if log_pages >= logical_pages {
            return Err(ActiveFlashError::VolumeTooLarge {
                volume_bytes: log_pages * PAGE_BYTES as u64,
                user_bytes: dev.logical_bytes(),
            });
        }
        let user_pages = logical_pages - log_pages;
        let corpus = Corpus::new(seed);
        let codec = Codec::new(cfg.compress_level);
        let table = codec.shared_ratio_table(&corpus, RATIO_TABLE_EXTENTS, cfg.extent_pages);
        let st = Machine {
            dev,
            completions: Vec::new(),
            next_id: 0,
            controller: Engine::new(cfg.controller().core(), cfg.ftl_instructions_per_command),
            host: Engine::new(cfg.host().core(), 0.0),
            cfg: cfg.clone(),
            fidelity,
            corpus,
            codec,
            table,
            pending: BTreeMap::new(),
            inflight: BTreeMap::new(),
            refused: VecDeque::new(),
            device_refusals: 0,
            versions: LazyTable::new(user_pages as usize),
            location: LazyTable::new(user_pages as usize),
            user_pages,
            log_next: user_pages,
            log_end: logical_pages,
            workers: [
                Worker::new(Side::Controller, cfg),
                Worker::new(Side::Host, cfg),
            ],
            jobs: BTreeMap::new(),
            extents_started: 0,
            extents: Vec::new(),
            fg: None,
            pages_compressed_live: 0,
            oracle: Vec::new(),
            oracle_left: 0,
            failure: None,
            commands_completed: 0,
            load_inflight: 0,
            program: None,
        };
        assert!(st.log_next < st.log_end, "the log has room");
        Ok(st)
    }

    /// Takes up what is waiting to start: the closed-loop foreground's next writes, the
    /// workers' and the program task's next commands. Runs after every event and at the
    /// start of every wait.
    fn pump(&mut self, q: &mut Q, rng: &mut SimRng) {
        self.pump_closed_loop(q, rng);
        self.pump_workers(q);
        self.pump_program(q);
    }

    /// Queues page `page` of a host file (`chunk`, padded with zeros) for writing through the
    /// controller's command path (`Rig::write_file`).
    fn load_page(&mut self, q: &mut Q, page: u64, chunk: &[u8]) {
        assert!(chunk.len() <= PAGE_BYTES, "a chunk is at most a page");
        let data = match self.fidelity {
            Fidelity::Functional => {
                let mut d = chunk.to_vec();
                d.resize(PAGE_BYTES, 0);
                d
            }
            Fidelity::Timing => Vec::new(),
        };
        self.load_inflight += 1;
        self.command(q, BlockOp::Write, page, data, Origin::Load);
    }

    /// Submits the checker's reads of `pages` straight to the FTL device (no controller
    /// time); their data lands in `oracle`, in order.
    fn oracle_submit(&mut self, q: &mut Q, pages: &[u64]) {
        assert_eq!(self.oracle_left, 0, "one oracle read at a time");
        self.oracle = vec![None; pages.len()];
        self.oracle_left = pages.len();
        for (index, &page) in pages.iter().enumerate() {
            let id = self.next_id;
            self.next_id += 1;
            self.inflight.insert(id, Origin::Oracle { index });
            let req = BlockRequest {
                id,
                op: BlockOp::Read,
                offset_bytes: page * PAGE_BYTES as u64,
                len_bytes: PAGE_BYTES as u64,
                data: Vec::new(),
            };
            self.submit_to_device(q, req);
        }
    }

    /// Queues a command for the controller's FTL processing.
    pub(crate) fn command(
        &mut self,
        q: &mut Q,
        op: BlockOp,
        page: u64,
        data: Vec<u8>,
        origin: Origin,
    ) {
        let id = self.next_id;
        self.next_id += 1;
        let req = BlockRequest {
            id,
            op,
            offset_bytes: page * PAGE_BYTES as u64,
            len_bytes: PAGE_BYTES as u64,
            data,
        };
        self.pending.insert(id, (req, origin));
        self.controller.push_foreground(id, q.now());
        self.kick(q, Side::Controller);
    }

    /// Starts an engine's next item if it is free.
    pub(crate) fn kick(&mut self, q: &mut Q, side: Side) {
        let now = q.now();
        let engine = match side {
            Side::Controller => &mut self.controller,
            Side::Host => &mut self.host,
        };
        if let Some((at, generation)) = engine.start(now) {
            q.schedule_at(at, RigEvent::EngineDone(side, generation));
        }
    }

    /// A foreground write of the next page: a random user page, its next version.
    fn issue_foreground(&mut self, q: &mut Q, rng: &mut SimRng) {
        let fg = self.fg.as_ref().expect("a foreground is running");
        let page = fg.first_page + rng.below(fg.pages);
        let i = page as usize;
        let version = self.versions.get(i) + 1;
        self.versions.set(i, version);
        if self.location.get(i) != 0 {
            self.location.set(i, 0);
            self.pages_compressed_live -= 1;
        }
        let data = match self.fidelity {
            Fidelity::Functional => self.corpus.page(page, version),
            Fidelity::Timing => Vec::new(),
        };
        let fg = self.fg.as_mut().expect("a foreground is running");
        fg.issued += 1;
        fg.inflight += 1;
        self.command(
            q,
            BlockOp::Write,
            page,
            data,
            Origin::Foreground {
                page,
                version,
                arrived: q.now(),
            },
        );
    }

    /// Starts a foreground of `total` 4 KiB writes: open loop at `rate_mb_s`, or closed loop
    /// at `queue_depth` when no rate is given.
    pub(crate) fn start_foreground(
        &mut self,
        q: &mut Q,
        pages: std::ops::Range<u64>,
        total: u64,
        rate_mb_s: Option<f64>,
        queue_depth: u32,
    ) {
        assert!(
            !pages.is_empty() && pages.end <= self.user_pages,
            "a foreground writes user pages: {pages:?} of {}",
            self.user_pages
        );
        let now = q.now();
        let interval_ns = rate_mb_s.map(|r| (PAGE_BYTES as f64 / r * 1e3).round() as u64);
        self.fg = Some(Foreground {
            first_page: pages.start,
            pages: pages.end - pages.start,
            interval_ns,
            queue_depth,
            total,
            issued: 0,
            completed: 0,
            inflight: 0,
            start: now,
            end: now,
            latency: LatencyHistogram::default(),
        });
        if interval_ns.is_some() && total > 0 {
            q.schedule_at(now, RigEvent::Arrival);
        }
    }

    pub(crate) fn foreground_done(&self) -> bool {
        self.fg.as_ref().is_none_or(|f| f.completed == f.total)
    }

    fn pump_closed_loop(&mut self, q: &mut Q, rng: &mut SimRng) {
        while let Some(fg) = &self.fg {
            if fg.interval_ns.is_some() || fg.issued == fg.total || fg.inflight >= fg.queue_depth {
                return;
            }
            self.issue_foreground(q, rng);
        }
    }

    fn on_arrival(&mut self, q: &mut Q, rng: &mut SimRng) {
        let fg = self.fg.as_ref().expect("arrivals belong to a foreground");
        if fg.issued == fg.total {
            return; // stopped (`Rig::stop_foreground`) after this arrival was scheduled
        }
        let waiting = self.pending.len() + self.refused.len();
        if waiting >= self.cfg.foreground_waiting_max as usize {
            // The bound on what waits (the host's submission queue): the run stops with
            // the overload named instead of queueing without limit.
            self.failure.get_or_insert(ActiveFlashError::Overloaded {
                waiting,
                at_ms: q.now().as_ns() as f64 / 1e6,
            });
            return;
        }
        self.issue_foreground(q, rng);
        let fg = self.fg.as_ref().expect("arrivals belong to a foreground");
        if fg.issued < fg.total {
            let interval = fg.interval_ns.expect("open loop");
            let at = fg.start + SimDuration::from_ns(interval * fg.issued);
            q.schedule_at(at, RigEvent::Arrival);
        }
    }

    fn on_engine_done(&mut self, q: &mut Q, side: Side, generation: u64) {
        let now = q.now();
        let engine = match side {
            Side::Controller => &mut self.controller,
            Side::Host => &mut self.host,
        };
        match engine.finish(generation, now) {
            Some(Finished::Foreground(id)) => {
                let (req, origin) = self.pending.remove(&id).expect("a queued command");
                self.inflight.insert(id, origin);
                self.submit_to_device(q, req);
            }
            Some(Finished::Background(Offload::Extent(extent))) => self.compressed(extent),
            Some(Finished::Background(Offload::Chunk(chunk))) => self.chunk_computed(q, chunk),
            None => {}
        }
        self.kick(q, side);
    }

    /// Hands a processed command to the FTL device, or queues it behind those it refused.
    fn submit_to_device(&mut self, q: &mut Q, req: BlockRequest) {
        debug_assert!(
            self.inflight.contains_key(&req.id),
            "{} has its origin",
            req.id
        );
        if !self.refused.is_empty() {
            self.device_refusals += 1;
            self.refused.push_back(req);
            return;
        }
        if let Err(Full { req, .. }) = self.dev.try_submit(req, &mut q.map(RigEvent::Dev)) {
            self.device_refusals += 1;
            self.refused.push_back(req);
        }
    }

    /// Submits the refused commands, in order, while the device admits them.
    fn resubmit_refused(&mut self, q: &mut Q) {
        while let Some(req) = self.refused.pop_front() {
            if let Err(Full { req, .. }) = self.dev.try_submit(req, &mut q.map(RigEvent::Dev)) {
                self.refused.push_front(req);
                break;
            }
        }
        debug_assert!(
            self.refused.is_empty() || self.dev.outstanding() >= self.dev.admission_limit(),
            "commands refused while the device has room"
        );
    }

    fn collect(&mut self, q: &mut Q) -> Result<(), ActiveFlashError> {
        self.dev.take_completions(&mut self.completions);
        self.resubmit_refused(q);
        let done = std::mem::take(&mut self.completions);
        for c in done {
            let origin = self.inflight.remove(&c.id).expect("a known command");
            self.commands_completed += 1;
            c.result.as_ref().map_err(|e| ActiveFlashError::Io {
                offset_bytes: c.offset_bytes,
                source: e.clone(),
            })?;
            match origin {
                Origin::Foreground {
                    page,
                    version,
                    arrived,
                } => {
                    let fg = self.fg.as_mut().expect("a foreground is running");
                    fg.completed += 1;
                    fg.inflight -= 1;
                    fg.end = c.completed;
                    fg.latency.record(c.completed.since(arrived).as_ns());
                    if self.versions.get(page as usize) == version {
                        self.queue_for_compression(page, version);
                    }
                }
                Origin::Read { extent, index } => self.page_read(q, extent, index, c.data),
                Origin::Write { extent } => self.page_written(q, extent),
                Origin::Trim => {}
                Origin::Oracle { index } => {
                    self.oracle[index] = Some(c.data);
                    self.oracle_left -= 1;
                }
                Origin::Load => {
                    assert!(
                        self.load_inflight > 0,
                        "a load completion has a load in flight"
                    );
                    self.load_inflight -= 1;
                }
                Origin::ProgramRead { index } => self.program_page_read(index, c.data),
                Origin::ProgramWrite => self.program_page_written(c.completed),
            }
        }
        Ok(())
    }

    /// Queues a page's latest version for compression on the controller's worker. A page
    /// written again leaves its older entry behind, stale (skipped when taken), so a long
    /// run of rewrites would grow the queue without end: past twice the user area, the stale
    /// entries are dropped — the live ones keep their order — so the queue holds at most
    /// `2 × user_pages` entries.
    fn queue_for_compression(&mut self, page: u64, version: u32) {
        let limit = usize::try_from(2 * self.user_pages).unwrap_or(usize::MAX);
        let (versions, location) = (&self.versions, &self.location);
        let source = &mut self.workers[Side::Controller.index()].source;
        source.push_back((page, version));
        if source.len() > limit {
            source.retain(|&(p, v)| versions.get(p as usize) == v && location.get(p as usize) == 0);
        }
        assert!(
            source.len() <= limit.max(1),
            "the compression queue holds at most one live entry per user page"
        );
    }

    /// Hands the live pages in the user area, in the order they were last written, to the
    /// workers: every page whose index in that order falls in the controller's share goes
    /// to the controller, the rest to the host (an even interleave).
    pub(crate) fn assign_split(&mut self, controller_share: f64) {
        let live: VecDeque<(u64, u32)> =
            std::mem::take(&mut self.workers[Side::Controller.index()].source);
        for (i, entry) in live.into_iter().enumerate() {
            let i = i as f64;
            let to_controller =
                ((i + 1.0) * controller_share).floor() > (i * controller_share).floor();
            let side = if to_controller {
                Side::Controller
            } else {
                Side::Host
            };
            self.workers[side.index()].source.push_back(entry);
        }
    }

    /// The compressed log's next `pages` logical pages. The log is sized by the caller for
    /// the worst case (every extent one page longer than its input), so running out is a
    /// programmer error.
    pub(crate) fn log_alloc(&mut self, pages: u64) -> u64 {
        assert!(
            self.log_next + pages <= self.log_end,
            "compressed log overflow: sized for the worst case"
        );
        let at = self.log_next;
        self.log_next += pages;
        at
    }
}

/// The 4 KiB random-write ceiling of a device built from `flash`, from its bus and die
/// timing (closed form, for rejecting a foreground it could never sustain and for stating
/// the device in a report).
pub fn write_ceiling_mb_s(flash: &FlashConfig) -> f64 {
    ceiling_of(&Backbone::new(flash, Box::new(NoStore)))
}

fn ceiling_of(bb: &Backbone) -> f64 {
    let g = bb.geometry();
    let xfer_ns = bb.transfer_time(1).as_ns() as f64;
    let page = f64::from(g.page_size_bytes);
    let bus = f64::from(g.channels) * page / xfer_ns * 1e3;
    let prog_ns = bb.program_latency(0).as_ns() as f64;
    let dies = f64::from(g.die_count()) * page / (xfer_ns + prog_ns) * 1e3;
    bus.min(dies)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `active-flash` preset shrunk to a 10 MiB device (as the scenario tests' `tiny`).
    fn tiny() -> (FlashConfig, FtlConfig, ActiveFlashConfig) {
        #[derive(serde::Deserialize)]
        struct Doc {
            flash: FlashConfig,
            ftl: FtlConfig,
            active_flash: ActiveFlashConfig,
        }
        let mut doc: toml::Table = include_str!("../../../configs/active-flash.toml")
            .parse()
            .unwrap();
        doc.remove("name");
        doc.remove("description");
        let mut d: Doc = toml::Value::Table(doc).try_into().unwrap();
        d.flash.packages_per_channel = 1;
        d.flash.dies_per_package = 4;
        d.flash.blocks_per_plane = 40;
        d.flash.pages_per_block = 16;
        d.ftl.spare_blocks_per_plane = 2;
        d.ftl.scratchpad_bytes = 1 << 20;
        (d.flash, d.ftl, d.active_flash)
    }

    /// Story: the rig handed every command the controller had processed straight to the FTL
    /// device, which admitted any number. Now the device admits a bounded number at once and
    /// refuses the rest; the rig holds what was refused, in order, and submits it as
    /// completions make room — so a foreground deeper than the device's limit still
    /// completes every write.
    #[test]
    fn writes_past_the_devices_admission_limit_wait_for_room_and_all_complete() {
        let (flash, ftl, cfg) = tiny();
        let mut rig = Rig::new(&flash, &ftl, &cfg, Fidelity::Timing, 64, 7).unwrap();
        rig.machine_mut().dev.set_admission_limit(2);
        rig.start_foreground(400, None, 32);
        rig.drain().unwrap();
        let m = rig.machine();
        let fg = m.fg.as_ref().unwrap();
        assert_eq!((fg.completed, fg.inflight), (400, 0));
        assert!(m.refused.is_empty() && m.inflight.is_empty());
        assert!(rig.device_refusals() > 0, "the device refused some writes");
        assert_eq!(m.dev.stats().host_writes, 400);
    }

    /// Story: every foreground write queued its page for compression, and a rewritten page's
    /// older entry stayed in the queue, stale; rewrites of a small area with no compression
    /// running grew the queue by one entry per write. Now stale entries are dropped past
    /// twice the user area, and the live entries keep their write order.
    #[test]
    fn rewrites_with_no_compression_running_keep_the_queue_within_twice_the_user_area() {
        let (flash, ftl, cfg) = tiny();
        let mut rig = Rig::new(&flash, &ftl, &cfg, Fidelity::Timing, 64, 7).unwrap();
        let user_pages = rig.user_pages();
        let writes = 8 * user_pages;
        rig.start_foreground(writes, None, 8);
        rig.drain().unwrap();
        let m = rig.machine();
        assert_eq!(m.fg.as_ref().unwrap().completed, writes);
        let source = &m.workers[Side::Controller.index()].source;
        assert!(
            source.len() as u64 <= 2 * user_pages,
            "{} entries for {user_pages} user pages",
            source.len()
        );
        let live: Vec<u64> = source
            .iter()
            .filter(|&&(p, v)| m.versions.get(p as usize) == v)
            .map(|&(p, _)| p)
            .collect();
        let written = (0..user_pages as usize)
            .filter(|&p| m.versions.get(p) > 0)
            .count();
        assert_eq!(
            live.len(),
            written,
            "every written page has its one live entry"
        );
    }
}
