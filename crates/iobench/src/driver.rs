//! The discrete-event driver of the I/O benchmark (`nearflash io`, `nearflash fio`): it owns
//! the clock (the event queue), the one seeded RNG and the trace hash, hands each event to
//! the device, and feeds host requests — closed-loop at a queue depth for synthetic
//! workloads, open-loop at recorded arrival times for traces, paced for several jobs at once
//! (fio's jobs: each its own depth, think time, rate and start delay). Requests reach the FTL through the host interface `D` (`interface`: the NVMe
//! front end and its link, or bare). In functional fidelity every write carries
//! self-describing sectors and every read is checked against the independent
//! `verify::Reference` model, whatever path the data took.

use crate::error::IoBenchError;
use crate::interface::{FrontEnd, FrontSnapshot};
use crate::placement::PlacementSpread;
use crate::workload::Draw;
use nearflash_blockdev::load::{
    self, LoadError, Pace, Rig, RigEvent, Submission, DEFAULT_STALL_LIMIT,
};
use nearflash_blockdev::PlacementDirective;
use nearflash_flash::{MemoryStore, NoStore, PageStore, SparseFileStore};
use nearflash_ftl::verify::{AckedAt, Reference};
use nearflash_ftl::{BlockCompletion, BlockOp, BlockRequest, Device, FtlStats, SECTOR_BYTES};
use nearflash_sim::{LatencyHistogram, Schedule, Sim, SimDuration, SimRng, SimTime, Watchdog};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Where programmed pages are kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreSpec {
    /// Timing fidelity: no data.
    None,
    /// Functional fidelity, pages in RAM.
    Memory,
    /// Functional fidelity, pages in a sparse file (devices larger than RAM).
    File(PathBuf),
}

/// Something that hands out requests one at a time.
pub trait RequestSource {
    fn next_request(&mut self, rng: &mut SimRng) -> Option<Draw>;
    /// Requests this source will issue in all, for progress reports.
    fn total(&self) -> u64;
}

impl RequestSource for crate::workload::Generator {
    fn next_request(&mut self, rng: &mut SimRng) -> Option<Draw> {
        self.next(rng)
    }
    fn total(&self) -> u64 {
        crate::workload::Generator::total(self)
    }
}

/// What a paced job does next (see [`PacedSource`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Submit this request now, with Force Unit Access when `fua` and, for a write, the
    /// Data Placement directive `placement` (`None`: the driver's spread, if any, decides).
    Submit {
        draw: Draw,
        fua: bool,
        placement: Option<PlacementDirective>,
    },
    /// Nothing before this time; asked again then.
    Until(SimTime),
    /// Nothing until one of its requests completes.
    Blocked,
    /// Finished.
    Done,
}

/// One job of a paced run: it decides when to submit (its own queue depth, think time, rate,
/// start delay, its own RNG stream) and sees its own requests and completions.
pub trait PacedSource {
    /// What the job does at `now`.
    fn step(&mut self, now: SimTime) -> Step;
    /// The request built from its last `Step::Submit` (with its payload in functional
    /// fidelity), as it goes to the device.
    fn submitted(&mut self, req: &BlockRequest);
    /// One of its requests completed (already checked against the reference model in
    /// functional fidelity; a read's payload is in `c.data`).
    fn completed(&mut self, c: &BlockCompletion);
}

/// A fixed list of requests (preconditioning passes).
pub struct ListSource {
    items: std::vec::IntoIter<Draw>,
    total: u64,
}

impl ListSource {
    pub fn new(items: Vec<Draw>) -> Self {
        ListSource {
            total: items.len() as u64,
            items: items.into_iter(),
        }
    }
}

impl RequestSource for ListSource {
    fn next_request(&mut self, _: &mut SimRng) -> Option<Draw> {
        self.items.next()
    }
    fn total(&self) -> u64 {
        self.total
    }
}

/// What one phase (preconditioning or measurement) of a run observed.
#[derive(Clone, Debug)]
pub struct PhaseResult {
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Trims (over NVMe, Dataset Management deallocates) that succeeded, and the bytes
    /// they deallocated.
    pub trims: u64,
    pub trim_bytes: u64,
    /// Flushes (NVMe Flush) that succeeded.
    pub flushes: u64,
    /// Requests that completed with an error: counted here by kind, and left out of every
    /// throughput and latency figure (a failed request is not a fast completion).
    pub failed: u64,
    pub failed_by_kind: BTreeMap<String, u64>,
    pub first_failure: Option<String>,
    /// Latency of the requests that succeeded.
    pub latency: LatencyHistogram,
    pub start: SimTime,
    pub end: SimTime,
    pub reads_verified: u64,
}

impl PhaseResult {
    /// Adds a later phase of the same run (a later group of jobs): counts add up, latencies
    /// merge, and the phase spans from this one's start to the later one's end.
    pub fn append(&mut self, later: PhaseResult) {
        assert!(later.start >= self.end, "phases are appended in time order");
        self.requests += later.requests;
        self.reads += later.reads;
        self.writes += later.writes;
        self.read_bytes += later.read_bytes;
        self.write_bytes += later.write_bytes;
        self.trims += later.trims;
        self.trim_bytes += later.trim_bytes;
        self.flushes += later.flushes;
        self.failed += later.failed;
        for (k, n) in later.failed_by_kind {
            *self.failed_by_kind.entry(k).or_default() += n;
        }
        self.first_failure = self.first_failure.take().or(later.first_failure);
        self.latency.merge(&later.latency);
        self.end = later.end;
        self.reads_verified += later.reads_verified;
    }

    fn new(start: SimTime) -> Self {
        PhaseResult {
            requests: 0,
            reads: 0,
            writes: 0,
            read_bytes: 0,
            write_bytes: 0,
            trims: 0,
            trim_bytes: 0,
            flushes: 0,
            failed: 0,
            failed_by_kind: BTreeMap::new(),
            first_failure: None,
            latency: LatencyHistogram::default(),
            start,
            end: start,
            reads_verified: 0,
        }
    }

    fn record(&mut self, c: &BlockCompletion) {
        self.requests += 1;
        self.end = self.end.max(c.completed);
        match &c.result {
            Ok(()) => {
                self.latency.record(c.completed.since(c.submitted).as_ns());
                match c.op {
                    BlockOp::Read => {
                        self.reads += 1;
                        self.read_bytes += c.len_bytes;
                    }
                    BlockOp::Write => {
                        self.writes += 1;
                        self.write_bytes += c.len_bytes;
                    }
                    BlockOp::Trim => {
                        self.trims += 1;
                        self.trim_bytes += c.len_bytes;
                    }
                    BlockOp::Flush => self.flushes += 1,
                }
            }
            Err(e) => {
                self.failed += 1;
                *self.failed_by_kind.entry(error_kind(e)).or_default() += 1;
                if self.first_failure.is_none() {
                    self.first_failure =
                        Some(format!("{:?} at offset {}: {e}", c.op, c.offset_bytes));
                }
            }
        }
    }
}

/// The kind of an I/O error, for counting failures by kind: the variant's name
/// (`NoSpace`, `Integrity`...). Taken from `Debug` so a variant added to `IoError` is counted
/// under its own name without a table to keep in step.
pub fn error_kind(e: &nearflash_ftl::IoError) -> String {
    let debug = format!("{e:?}");
    debug
        .split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Functional fidelity: what each in-flight request must read back or acknowledge.
enum Expect {
    Read { lsn: u64, before: Vec<AckedAt> },
    Write { lsn: u64, count: u64, stamp: u32 },
    Trim { lsn: u64, count: u64, stamp: u32 },
    Flush,
}

struct Checker {
    reference: Reference,
    pending: BTreeMap<u64, Expect>,
}

/// Counters at the start of a phase, to report the phase alone.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub ftl: FtlStats,
    pub page_reads: u64,
    pub page_programs: u64,
    pub block_erases: u64,
    pub die_ops: u64,
    /// Events processed so far.
    pub events: u64,
    pub die_busy_ns: Vec<u64>,
    pub channel_busy_ns: Vec<u64>,
    /// The front end's counters (none when bare).
    pub front: Option<FrontSnapshot>,
}

/// The driver of the FTL device behind the host interface `D`.
pub struct Driver<D: FrontEnd> {
    sim: Sim<RigEvent<D::Event>>,
    rig: Rig<D>,
    next_id: u64,
    checker: Option<Checker>,
    /// Writes carry placement handles by this rule (`--placement-handles`).
    placement: Option<PlacementSpread>,
}

/// Completions between progress callbacks.
const PROGRESS_EVERY: u64 = 4096;

impl<D: FrontEnd> Driver<D> {
    /// Formats a device of `preset` over the chosen store and puts the interface `D` in front
    /// of it. In functional fidelity the reference model covers the first `checked_bytes` of
    /// the device.
    pub fn new(
        preset: &nearflash_preset::Preset,
        store: &StoreSpec,
        seed: u64,
        checked_bytes: u64,
    ) -> Result<Driver<D>, IoBenchError> {
        let geo = nearflash_flash::Geometry::from_config(&preset.flash);
        let store: Box<dyn PageStore> = match store {
            StoreSpec::None => Box::new(NoStore),
            StoreSpec::Memory => Box::new(MemoryStore::new(
                geo.page_count(),
                preset.flash.page_size_bytes,
            )),
            StoreSpec::File(path) => Box::new(SparseFileStore::create(
                path,
                geo.page_count(),
                preset.flash.page_size_bytes,
                preset.flash.oob_size_bytes,
            )?),
        };
        let mut sim = Sim::new(seed);
        let dev = Device::format(
            &preset.flash,
            &preset.ftl,
            store,
            &mut sim.queue().map(|e| RigEvent::Device(D::wrap(e))),
        )
        .map_err(|e| IoBenchError::Format {
            preset: preset.name.clone(),
            source: e,
        })?;
        let checker = dev.is_functional().then(|| Checker {
            reference: Reference::new(
                checked_bytes / SECTOR_BYTES,
                u64::from(dev.layout().unit_sectors()),
            ),
            pending: BTreeMap::new(),
        });
        Ok(Driver {
            sim,
            rig: Rig::new(D::attach(dev, preset)?),
            next_id: 0,
            checker,
            placement: None,
        })
    }

    /// Tags every write from now on with a placement handle by `spread`'s rule (`None`: no
    /// directive), unless a paced job names its own.
    pub fn set_placement(&mut self, spread: Option<PlacementSpread>) {
        self.placement = spread;
    }

    /// The FTL device behind the interface.
    pub fn device(&self) -> &Device {
        self.rig.dev.ftl()
    }

    /// The interface in front of the device.
    pub fn front_end(&self) -> &D {
        &self.rig.dev
    }

    pub fn events(&self) -> u64 {
        self.sim.events()
    }

    /// Declares that up to `requests` may be outstanding at once (paced jobs whose depths
    /// add up past what the front end holds back by default).
    pub fn expect_outstanding(&mut self, requests: u64) {
        self.rig.dev.expect_outstanding(requests);
    }

    /// The simulated time now.
    pub fn now(&self) -> SimTime {
        self.sim.now()
    }

    pub fn trace_hash(&self) -> String {
        self.sim.trace_hash().hex()
    }

    pub fn snapshot(&self) -> Snapshot {
        let now = self.sim.now();
        let dev = self.rig.dev.ftl();
        let fs = dev.backbone().stats();
        Snapshot {
            ftl: dev.stats().clone(),
            page_reads: fs.page_reads,
            page_programs: fs.page_programs,
            block_erases: fs.block_erases,
            die_ops: fs.die_ops,
            events: self.sim.events(),
            die_busy_ns: dev.die_busy_ns(now),
            channel_busy_ns: dev.channel_busy_ns(now),
            front: self.rig.dev.front(),
        }
    }

    /// Runs `source` closed-loop at `queue_depth` until every request has completed.
    pub fn run_closed(
        &mut self,
        source: &mut dyn RequestSource,
        queue_depth: u32,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<PhaseResult, IoBenchError> {
        let checker = RefCell::new(self.checker.take());
        let mut seen = Completions::new(self.sim.now(), source.total(), &checker, progress);
        let mut next_id = self.next_id;
        let mut watchdog = Watchdog::starting_at(DEFAULT_STALL_LIMIT, self.sim.now());
        let spread = self.placement;
        let result = load::run_closed(
            &mut self.sim,
            &mut self.rig,
            queue_depth,
            &mut watchdog,
            |rng| {
                let d = source.next_request(rng)?;
                let req = request(&mut next_id, d, checker.borrow_mut().as_mut());
                Some(placed(req, None, spread, 0))
            },
            |dev, c| seen.record(dev.ftl(), &c),
        );
        self.next_id = next_id;
        self.finish_phase(result, seen, &checker)
    }

    /// Runs the paced `jobs` together until each is done and every request has completed.
    /// `total` is the number of requests expected (for progress reports; `u64::MAX` when
    /// unknown, a time-based run).
    pub fn run_paced(
        &mut self,
        jobs: &mut [&mut dyn PacedSource],
        total: u64,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<PhaseResult, IoBenchError> {
        let checker = RefCell::new(self.checker.take());
        let mut seen = Completions::new(self.sim.now(), total, &checker, progress);
        let mut next_id = self.next_id;
        let mut watchdog = Watchdog::starting_at(DEFAULT_STALL_LIMIT, self.sim.now());
        // Which job each request in flight belongs to (bounded by the requests in flight).
        let owners = RefCell::new(BTreeMap::<u64, usize>::new());
        let count = jobs.len();
        let spread = self.placement;
        let jobs_cell = RefCell::new(jobs);
        let result = load::run_paced(
            &mut self.sim,
            &mut self.rig,
            count,
            &mut watchdog,
            |i, now| {
                let mut jobs = jobs_cell.borrow_mut();
                match jobs[i].step(now) {
                    Step::Submit {
                        draw,
                        fua,
                        placement,
                    } => {
                        let req = request(&mut next_id, draw, checker.borrow_mut().as_mut());
                        jobs[i].submitted(&req);
                        owners.borrow_mut().insert(req.id, i);
                        let Submission { req, placement } = placed(req, placement, spread, 0);
                        Pace::Submit {
                            req,
                            fua,
                            placement,
                        }
                    }
                    Step::Until(at) => Pace::Until(at),
                    Step::Blocked => Pace::Blocked,
                    Step::Done => Pace::Done,
                }
            },
            |dev, c| {
                seen.record(dev.ftl(), &c)?;
                let owner = owners
                    .borrow_mut()
                    .remove(&c.id)
                    .expect("a completion of a request a job submitted");
                jobs_cell.borrow_mut()[owner].completed(&c);
                Ok(())
            },
        );
        assert!(
            result.is_err() || owners.borrow().is_empty(),
            "a finished paced run has nothing in flight"
        );
        self.next_id = next_id;
        self.finish_phase(result, seen, &checker)
    }

    /// Lets the device run with no host traffic for `idle` and then until it is quiescent, so
    /// that the background work a preconditioning pass leaves behind (a mapping checkpoint,
    /// idle-time GC) finishes before measurement starts. Returns the simulated time spent.
    pub fn settle(&mut self, idle: SimDuration) -> Result<SimDuration, IoBenchError> {
        let until = self.sim.now() + idle;
        load::settle(&mut self.sim, &mut self.rig, until, D::is_quiescent)
            .map_err(|e| load_error(LoadError::Stall(e), self.rig.dev.ftl()))
    }

    /// Replays `requests` open-loop: each is submitted at its arrival time (relative to now),
    /// request `i` from trace stream `streams[i]` (the streams placement rule's input).
    pub fn run_open(
        &mut self,
        requests: &[Draw],
        arrivals_ns: &[u64],
        streams: &[u64],
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<PhaseResult, IoBenchError> {
        assert_eq!(requests.len(), arrivals_ns.len());
        assert_eq!(requests.len(), streams.len());
        let total = requests.len() as u64;
        self.rig.dev.expect_outstanding(total);
        let checker = RefCell::new(self.checker.take());
        let mut seen = Completions::new(self.sim.now(), total, &checker, progress);
        let mut next_id = self.next_id;
        let mut watchdog = Watchdog::starting_at(DEFAULT_STALL_LIMIT, self.sim.now());
        let spread = self.placement;
        let arrivals = arrivals_ns
            .iter()
            .zip(requests)
            .zip(streams)
            .map(|((&a, &d), &s)| {
                let req = request(&mut next_id, d, checker.borrow_mut().as_mut());
                (a, placed(req, None, spread, s))
            });
        let result = load::run_open(
            &mut self.sim,
            &mut self.rig,
            &mut watchdog,
            arrivals,
            |dev, c| seen.record(dev.ftl(), &c),
        );
        self.next_id += total;
        self.finish_phase(result, seen, &checker)
    }

    /// Ends a phase of either loop: gives the checker back, turns a stall into an error
    /// naming the stuck requests, reports the final progress and checks the store.
    fn finish_phase(
        &mut self,
        result: Result<(), LoadError<IoBenchError>>,
        seen: Completions,
        checker: &RefCell<Option<Checker>>,
    ) -> Result<PhaseResult, IoBenchError> {
        let phase = seen.finish();
        self.checker = checker.take();
        result.map_err(|e| load_error(e, self.rig.dev.ftl()))?;
        assert!(
            phase.requests <= self.next_id,
            "a phase completes only requests it issued"
        );
        check_store(self.rig.dev.ftl())?;
        Ok(phase)
    }
}

/// What both loops do with each completion: record it in the phase (verifying it in
/// functional fidelity), count it, report progress every `PROGRESS_EVERY` completions and
/// check the store's health then.
struct Completions<'a> {
    phase: PhaseResult,
    checker: &'a RefCell<Option<Checker>>,
    done: u64,
    total: u64,
    next_report: u64,
    progress: &'a mut dyn FnMut(u64, u64),
}

impl<'a> Completions<'a> {
    fn new(
        start: SimTime,
        total: u64,
        checker: &'a RefCell<Option<Checker>>,
        progress: &'a mut dyn FnMut(u64, u64),
    ) -> Self {
        Completions {
            phase: PhaseResult::new(start),
            checker,
            done: 0,
            total,
            next_report: PROGRESS_EVERY,
            progress,
        }
    }

    fn record(&mut self, dev: &Device, c: &BlockCompletion) -> Result<(), IoBenchError> {
        record(c, &mut self.phase, self.checker.borrow_mut().as_mut())?;
        self.done += 1;
        assert!(
            self.done <= self.total,
            "more completions than requests issued"
        );
        if self.done >= self.next_report {
            (self.progress)(self.done, self.total);
            self.next_report = self.done + PROGRESS_EVERY;
            check_store(dev)?;
        }
        Ok(())
    }

    /// The phase's result, after reporting the final count.
    fn finish(self) -> PhaseResult {
        (self.progress)(self.done, self.total);
        self.phase
    }
}

fn check_store(dev: &Device) -> Result<(), IoBenchError> {
    dev.backbone()
        .store()
        .health()
        .map_err(|e| IoBenchError::StoreFailed(e.to_string()))
}

/// Stuck requests a stall report names (the rest are counted).
const STALL_REQUESTS_NAMED: usize = 8;

fn load_error(e: LoadError<IoBenchError>, dev: &Device) -> IoBenchError {
    match e {
        LoadError::Stall(s) => IoBenchError::Stalled(format!(
            "{s}; stuck requests: {}",
            dev.describe_inflight(STALL_REQUESTS_NAMED)
        )),
        LoadError::Handler(e) => e,
    }
}

/// Turns a drawn request into a block request; in functional fidelity it gets a payload of
/// self-describing sectors and the checker notes what it must read back or acknowledge.
/// A request with its placement directive: a write's own, else the spread's for its
/// address; none for other commands.
fn placed(
    req: BlockRequest,
    own: Option<PlacementDirective>,
    spread: Option<PlacementSpread>,
    stream: u64,
) -> Submission {
    let placement = match req.op {
        BlockOp::Write => own.or_else(|| spread.map(|s| s.directive(req.offset_bytes, stream))),
        _ => None,
    };
    Submission { req, placement }
}

fn request(next_id: &mut u64, d: Draw, checker: Option<&mut Checker>) -> BlockRequest {
    let id = *next_id;
    *next_id += 1;
    let mut data = Vec::new();
    if let Some(ch) = checker {
        let lsn = d.offset_bytes / SECTOR_BYTES;
        let count = d.len_bytes / SECTOR_BYTES;
        let expect = match d.op {
            BlockOp::Read => Expect::Read {
                lsn,
                before: ch.reference.acked_at(lsn, count),
            },
            BlockOp::Write => {
                let (payload, stamp) = ch.reference.issue_write(lsn, count);
                data = payload;
                Expect::Write { lsn, count, stamp }
            }
            BlockOp::Trim => Expect::Trim {
                lsn,
                count,
                stamp: ch.reference.issue_trim(lsn, count),
            },
            BlockOp::Flush => Expect::Flush,
        };
        ch.pending.insert(id, expect);
    }
    BlockRequest {
        id,
        op: d.op,
        offset_bytes: d.offset_bytes,
        len_bytes: d.len_bytes,
        data,
    }
}

/// Records a finished command in `phase`, verifying it in functional fidelity.
fn record(
    c: &BlockCompletion,
    phase: &mut PhaseResult,
    checker: Option<&mut Checker>,
) -> Result<(), IoBenchError> {
    phase.record(c);
    let Some(ch) = checker else {
        return Ok(());
    };
    match ch
        .pending
        .remove(&c.id)
        .expect("completion of a known request")
    {
        Expect::Read { lsn, before } => {
            if c.result.is_ok() {
                ch.reference
                    .check_read(lsn, &before, &c.data)
                    .map_err(|v| IoBenchError::Verification(format!("{v:?}")))?;
                phase.reads_verified += 1;
            }
        }
        Expect::Write { lsn, count, stamp } => {
            if c.result.is_ok() {
                ch.reference.ack_write(lsn, count, stamp);
            }
        }
        Expect::Trim { lsn, count, stamp } => {
            if c.result.is_ok() {
                ch.reference.ack_trim(lsn, count, stamp);
            }
        }
        Expect::Flush => {}
    }
    Ok(())
}
