//! `zonemode=zbd` jobs on the zoned drive (`--set zns.enabled=true`,
//! `nearflash_ftl::zns::ZonedDevice`): the jobs place their requests on the zones they share
//! (`zbd.rs`), and [`ZbdDrive`] — the host's zone layer between the jobs and the drive —
//! issues each reset they decide before the zone's next request and keeps one write in
//! flight per zone. The drive sits behind the NVMe front end and its link
//! (`--interface nvme`, the default, as `nearflash io` on a zoned drive) or bare
//! (`--interface bare`), in timing fidelity, driven by the same paced load loop as every
//! other fio run (`nearflash_blockdev::load::run_paced`).
//!
//! **One write in flight per zone** (through NVMe). NVMe does not order commands: two writes
//! in flight to one zone may reach the drive out of order, and the second would fail with
//! Zone Invalid Write. A host keeps a zone's writes in order by issuing them one at a time:
//! fio's `zbd_adjust_block` returns with the target zone's lock held, and `zbd_put_io` drops
//! it when the I/O completes (fio `zbd.c`: "The zone will be unlocked if io_u offset is
//! changed or when io_u completes and zbd_put_io() executed"); the lock is recursive
//! (`PTHREAD_MUTEX_RECURSIVE`), so it keeps *other* jobs out of the zone while the owner's
//! I/O is in flight, and the owner's own writes to the zone are kept one at a time below
//! fio by Linux's block layer (mq-deadline's per-zone write lock; zone write plugging since
//! Linux 6.10), which holds a zone's next write until the previous one completes. Zone
//! Appends are exempt from both (the drive picks their place), but fio's `zonemode=zbd`
//! issues none. Here a zone's writes wait in the zone's queue, in the order they were
//! placed, until the previous write to the zone has completed; reads queued behind a waiting
//! write wait for it too (they were placed after it). Not modelled: fio's job that finds the
//! zone locked by another job first waits for all its own I/O (`io_u_quiesce`) and then
//! blocks; here only the request waits, and the job goes on with others. The bare drive
//! takes requests in the order they were submitted, so bare runs keep no such queue (as
//! before the front end was added).
//!
//! A reset waits until nothing is in flight to its zone, and the zone's later requests wait
//! behind it in order: a write still in flight could land after the reset (docs/zns.md's
//! crash-test finding). fio waits for the job's own I/O (`io_u_quiesce`) and resets
//! synchronously; waiting for the zone's is the same for one job and narrower for several.

use crate::error::FioError;
use crate::job::{Disk, JobRun};
use crate::options::JobSpec;
use crate::runner::{FioRun, Placed, RunOptions};
use crate::zbd::{ZbdState, ZoneSpan};
use nearflash_blockdev::load::{self, Pace, Rig, RigEvent, DEFAULT_STALL_LIMIT};
use nearflash_blockdev::{BlockCompletion, BlockDevice, BlockOp, BlockRequest, SECTOR_BYTES};
use nearflash_flash::NoStore;
use nearflash_ftl::zns::{ZoneAction, ZoneCommand, ZoneRequest, ZonedDevice};
use nearflash_hw::link::Direction;
use nearflash_iobench::driver::{PacedSource, Step};
use nearflash_iobench::{Interface, IoBenchError, Stage};
use nearflash_nvme::Nvme;
use nearflash_preset::Preset;
use nearflash_sim::{Schedule, Sim, SimRng, Watchdog};
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

/// The zoned drive with the path in front of it: bare, or behind the NVMe front end.
pub trait ZonedPath: BlockDevice {
    /// `nvme` or `bare` (the report's `interface`).
    const INTERFACE: &'static str;
    /// The path may reorder commands in flight, so the host keeps one write per zone.
    const REORDERS: bool;

    fn zoned(&self) -> &ZonedDevice;

    /// Nothing in flight on the path or in the drive.
    fn quiescent(&self) -> bool;

    /// The front end's figures (none when bare).
    fn front_figures(&self) -> Option<serde_json::Value> {
        None
    }
}

impl ZonedPath for ZonedDevice {
    const INTERFACE: &'static str = "bare";
    const REORDERS: bool = false;

    fn zoned(&self) -> &ZonedDevice {
        self
    }

    fn quiescent(&self) -> bool {
        self.is_quiescent()
    }
}

impl ZonedPath for Nvme<ZonedDevice> {
    const INTERFACE: &'static str = "nvme";
    const REORDERS: bool = true;

    fn zoned(&self) -> &ZonedDevice {
        self.device()
    }

    fn quiescent(&self) -> bool {
        self.outstanding() == 0 && self.device().is_quiescent()
    }

    fn front_figures(&self) -> Option<serde_json::Value> {
        let s = self.stats();
        Some(serde_json::json!({
            "commands": s.commands,
            "zone_commands": s.zone_appends + s.zone_sends + s.zone_receives,
            "link_down_bytes": self.link().stats(Direction::Down).payload_bytes,
            "link_up_bytes": self.link().stats(Direction::Up).payload_bytes,
        }))
    }
}

/// A request waiting in its zone's queue, or a reset.
#[derive(Debug)]
enum Held {
    Reset,
    Request {
        stream: u32,
        req: BlockRequest,
        fua: bool,
    },
}

/// One zone as the host's zone layer sees it.
#[derive(Debug, Default)]
struct ZoneLane {
    /// Block requests to the zone on the path or the drive.
    in_flight: u32,
    /// Writes among them (at most one when the path reorders).
    writes_in_flight: u32,
    /// A reset is on the drive.
    resetting: bool,
    held: VecDeque<Held>,
}

/// What the zone layer counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZbdCounts {
    pub resets: u64,
    pub reset_failures: u64,
    /// Reads that reached past their zone's write pointer on the drive when issued.
    pub reads_past_wp: u64,
    pub reads: u64,
    /// Most zones active (open or closed) on the drive at once, after each submission.
    pub active_zones_peak: u32,
    /// Writes that waited for the zone's previous write to complete.
    pub writes_serialised: u64,
    /// Most writes in flight to one zone at once.
    pub zone_writes_in_flight_peak: u32,
}

/// The zoned drive behind the host's zone layer: a block device whose requests to a zone
/// with a reset decided (in the shared [`ZbdState`]) wait for the reset, which waits for the
/// zone's requests in flight, and whose writes to a zone go one at a time when the path
/// reorders.
pub struct ZbdDrive<D: ZonedPath> {
    dev: D,
    state: Rc<RefCell<ZbdState>>,
    lanes: Vec<ZoneLane>,
    /// Request id → its zone and whether it writes, for block requests on the path
    /// (flushes have none).
    owner: BTreeMap<u64, (u32, bool)>,
    /// Reset id → its zone.
    resets: BTreeMap<u64, u32>,
    next_reset_id: u64,
    held_count: u64,
    done: Vec<BlockCompletion>,
    pub counts: ZbdCounts,
}

impl<D: ZonedPath> ZbdDrive<D> {
    pub fn new(dev: D, state: Rc<RefCell<ZbdState>>) -> ZbdDrive<D> {
        let zones = dev.zoned().zones().count();
        assert_eq!(
            zones,
            state.borrow().zones(),
            "the state covers the drive's zones"
        );
        ZbdDrive {
            lanes: (0..zones).map(|_| ZoneLane::default()).collect(),
            dev,
            state,
            owner: BTreeMap::new(),
            resets: BTreeMap::new(),
            next_reset_id: 0,
            held_count: 0,
            done: Vec::new(),
            counts: ZbdCounts::default(),
        }
    }

    pub fn device(&self) -> &ZonedDevice {
        self.dev.zoned()
    }

    fn zone_of(&self, offset_bytes: u64) -> u32 {
        (offset_bytes / self.dev.zoned().zone_bytes()) as u32
    }

    /// Whether the head of zone `zone`'s queue may go now.
    fn may_go(&self, zone: u32, held: &Held) -> bool {
        let lane = &self.lanes[zone as usize];
        match held {
            Held::Reset => lane.in_flight == 0,
            Held::Request { req, .. } => {
                !(D::REORDERS && req.op == BlockOp::Write && lane.writes_in_flight > 0)
            }
        }
    }

    fn issue<S: Schedule<D::Event>>(
        &mut self,
        zone: u32,
        stream: u32,
        req: BlockRequest,
        fua: bool,
        q: &mut S,
    ) {
        if req.op == BlockOp::Read {
            let wp = self.dev.zoned().zones().wp_sector(zone) * SECTOR_BYTES;
            self.counts.reads += 1;
            if req.offset_bytes + req.len_bytes > wp {
                self.counts.reads_past_wp += 1;
            }
        }
        let writes = req.op == BlockOp::Write;
        let lane = &mut self.lanes[zone as usize];
        lane.in_flight += 1;
        if writes {
            lane.writes_in_flight += 1;
            assert!(
                !D::REORDERS || lane.writes_in_flight == 1,
                "one write in flight per zone on a path that reorders"
            );
            self.counts.zone_writes_in_flight_peak = self
                .counts
                .zone_writes_in_flight_peak
                .max(lane.writes_in_flight);
        }
        self.owner.insert(req.id, (zone, writes));
        self.dev.submit_from(stream, req, fua, q);
        let active = self.dev.zoned().zones().active_count();
        self.counts.active_zones_peak = self.counts.active_zones_peak.max(active);
    }

    /// Starts what zone `zone` holds back, in order: a reset once nothing is in flight to
    /// the zone, a write once the zone's previous write is done (a path that reorders), the
    /// requests behind them once they went.
    fn release<S: Schedule<D::Event>>(&mut self, zone: u32, q: &mut S) {
        loop {
            let lane = &self.lanes[zone as usize];
            if lane.resetting {
                return;
            }
            match lane.held.front() {
                None => return,
                Some(h) if !self.may_go(zone, h) => return,
                Some(_) => {}
            }
            let lane = &mut self.lanes[zone as usize];
            match lane.held.pop_front().expect("looked at above") {
                Held::Reset => {
                    lane.resetting = true;
                    let id = self.next_reset_id;
                    self.next_reset_id += 1;
                    self.resets.insert(id, zone);
                    let cmd = ZoneCommand::Send {
                        zone_start_sector: self.dev.zoned().zones().start_sector(zone),
                        action: ZoneAction::Reset,
                    };
                    self.dev
                        .submit_zone(ZoneRequest { id, cmd }, q)
                        .expect("a zoned drive takes zone commands");
                }
                Held::Request { stream, req, fua } => {
                    self.held_count -= 1;
                    self.issue(zone, stream, req, fua, q);
                }
            }
        }
    }

    /// Takes the drive's completions and lets the zones they free go on, until nothing more
    /// moves.
    fn settle<S: Schedule<D::Event>>(&mut self, q: &mut S) {
        // Each pass either finds completions or ends; completions are bounded by the
        // requests in flight.
        loop {
            let mut blocks = Vec::new();
            let mut zone_done = Vec::new();
            self.dev.take_completions(&mut blocks);
            self.dev.take_zone_completions(&mut zone_done);
            if blocks.is_empty() && zone_done.is_empty() {
                return;
            }
            let mut touched = Vec::new();
            for c in blocks {
                if let Some((zone, writes)) = self.owner.remove(&c.id) {
                    let lane = &mut self.lanes[zone as usize];
                    assert!(lane.in_flight > 0, "a completion of a request in flight");
                    lane.in_flight -= 1;
                    if writes {
                        assert!(lane.writes_in_flight > 0, "a write in flight completes");
                        lane.writes_in_flight -= 1;
                        // fio's `zbd_put_io` → `zbd_end_zone_io`: a filled zone leaves the
                        // write targets once its last write completes.
                        self.state
                            .borrow_mut()
                            .end_write(c.offset_bytes + c.len_bytes);
                    }
                    touched.push(zone);
                }
                self.done.push(c);
            }
            for c in zone_done {
                let zone = self
                    .resets
                    .remove(&c.id)
                    .expect("a reset this layer issued");
                let lane = &mut self.lanes[zone as usize];
                assert!(lane.resetting, "a reset completes once");
                lane.resetting = false;
                match c.result {
                    Ok(_) => self.counts.resets += 1,
                    // The zone's writes then fail on the drive and are counted by their jobs.
                    Err(_) => self.counts.reset_failures += 1,
                }
                touched.push(zone);
            }
            for zone in touched {
                self.release(zone, q);
            }
        }
    }
}

impl<D: ZonedPath> BlockDevice for ZbdDrive<D> {
    type Event = D::Event;

    fn capacity_bytes(&self) -> u64 {
        self.dev.capacity_bytes()
    }

    fn is_functional(&self) -> bool {
        false
    }

    fn submit<S: Schedule<D::Event>>(&mut self, req: BlockRequest, q: &mut S) {
        self.submit_from(0, req, false, q);
    }

    fn submit_fua<S: Schedule<D::Event>>(&mut self, req: BlockRequest, q: &mut S) {
        self.submit_from(0, req, true, q);
    }

    /// Submitter `stream` keeps its queue on the front end (a queue pair per job).
    fn submit_from<S: Schedule<D::Event>>(
        &mut self,
        stream: u32,
        req: BlockRequest,
        fua: bool,
        q: &mut S,
    ) {
        if req.op == BlockOp::Flush {
            self.dev.submit_from(stream, req, fua, q);
        } else {
            let zone = self.zone_of(req.offset_bytes);
            assert_eq!(
                zone,
                self.zone_of(req.offset_bytes + req.len_bytes - 1),
                "placed requests stay in one zone"
            );
            if self.state.borrow_mut().take_reset(zone) {
                self.lanes[zone as usize].held.push_back(Held::Reset);
            }
            let held = Held::Request { stream, req, fua };
            let lane = &self.lanes[zone as usize];
            if lane.held.is_empty() && !lane.resetting && self.may_go(zone, &held) {
                let Held::Request { stream, req, fua } = held else {
                    unreachable!("built above")
                };
                self.issue(zone, stream, req, fua, q);
            } else {
                if matches!(&held, Held::Request { req, .. } if req.op == BlockOp::Write)
                    && lane.writes_in_flight > 0
                {
                    self.counts.writes_serialised += 1;
                }
                self.lanes[zone as usize].held.push_back(held);
                self.held_count += 1;
                self.release(zone, q);
            }
        }
        self.settle(q);
    }

    fn handle<S: Schedule<D::Event>>(&mut self, ev: D::Event, q: &mut S, rng: &mut SimRng) {
        self.dev.handle(ev, q, rng);
        self.settle(q);
    }

    fn check_invariants(&self) {
        self.dev.check_invariants();
    }

    fn take_completions(&mut self, out: &mut Vec<BlockCompletion>) {
        out.append(&mut self.done);
    }

    fn outstanding(&self) -> u64 {
        self.dev.outstanding() + self.held_count + self.done.len() as u64
    }
}

/// The zoned drive of `preset`, freshly formatted (timing fidelity: no data).
pub fn format(preset: &Preset) -> Result<ZonedDevice, FioError> {
    ZonedDevice::format(&preset.flash, &preset.ftl, &preset.zns, Box::new(NoStore)).map_err(|e| {
        FioError::Run(IoBenchError::Format {
            preset: preset.name.clone(),
            source: e,
        })
    })
}

/// Checks that zbd jobs and the drive fit each other: `zonemode=zbd` needs a zoned drive and
/// a zoned drive needs `zonemode=zbd`.
pub fn check_modes(specs: &[Rc<JobSpec>], preset: &Preset) -> Result<(), FioError> {
    let zoned = preset.zns.enabled;
    for spec in specs {
        let bad = |reason: String| FioError::Job {
            job: spec.name.clone(),
            reason,
        };
        if spec.zbd && !zoned {
            return Err(bad(format!(
                "zonemode=zbd needs a zoned drive: preset {} has zns.enabled=false \
                 (--set zns.enabled=true)",
                preset.name
            )));
        }
        if zoned && !spec.zbd {
            return Err(bad(format!(
                "the drive is zoned (zns.enabled=true on preset {}): its writes must land at \
                 write pointers, so every job needs zonemode=zbd",
                preset.name
            )));
        }
    }
    Ok(())
}

/// fio's `zbd_zone_align_file_sizes`: a writing job's region starts at the next zone boundary
/// and ends at the last one within it; a reading job's end is rounded down. Returns each
/// job's zones; a note for each region changed.
fn align(
    placed: &mut [Placed],
    zone_bytes: u64,
    notes: &mut Vec<String>,
) -> Result<Vec<ZoneSpan>, FioError> {
    let mut spans = Vec::with_capacity(placed.len());
    for p in placed.iter_mut() {
        let writes = p.spec.rw.directions()[1];
        let end = p.start + p.len;
        let start = if writes {
            p.start.div_ceil(zone_bytes) * zone_bytes
        } else {
            p.start
        };
        let aligned_end = end / zone_bytes * zone_bytes;
        if aligned_end <= start {
            return Err(FioError::Job {
                job: p.spec.name.clone(),
                reason: format!(
                    "zonemode=zbd: region {}+{} holds no whole zone of {zone_bytes} bytes \
                     (io_size must be at least one zone)",
                    p.start, p.len
                ),
            });
        }
        if (start, aligned_end) != (p.start, end) {
            notes.push(format!(
                "{}: zonemode=zbd: region {}+{} aligned to zones as fio does: {start}+{}",
                p.spec.name,
                p.start,
                p.len,
                aligned_end - start
            ));
        }
        p.start = start;
        p.len = aligned_end - start;
        spans.push(ZoneSpan {
            first: (start / zone_bytes) as u32,
            end: aligned_end.div_ceil(zone_bytes) as u32,
        });
    }
    Ok(spans)
}

/// The write target limit: the smallest `max_open_zones` a job sets (0 or unset: the
/// drive's), never above the drive's max open zones; and each job's sizes fitting the zones.
fn check_against_drive(placed: &[Placed], dev: &ZonedDevice) -> Result<u32, FioError> {
    let zone_bytes = dev.zone_bytes();
    let open_max = dev.zones().open_max();
    let mut limit = open_max;
    for p in placed {
        let spec = &p.spec;
        let bad = |reason: String| FioError::Job {
            job: spec.name.clone(),
            reason,
        };
        if let Some(z) = spec.zonesize.filter(|&z| z != zone_bytes) {
            return Err(bad(format!(
                "zonesize {z} does not match the drive's zone size {zone_bytes} \
                 (fio: \"zonesize does not match the device zone size\")"
            )));
        }
        match spec.max_open_zones {
            Some(m) if m > open_max => {
                return Err(bad(format!(
                    "max_open_zones {m} is larger than the drive's max open zones {open_max} \
                     (zns.max_open_zones)"
                )))
            }
            Some(m) if m > 0 => limit = limit.min(m),
            _ => {}
        }
        if spec.rw.directions()[1] {
            let sizes = match &spec.bs[1] {
                crate::options::BlockSizes::Fixed(b) => vec![*b],
                crate::options::BlockSizes::Range(a, b) => vec![*a, *b],
                crate::options::BlockSizes::Split(v) => v.iter().map(|&(b, _)| b).collect(),
            };
            let min = spec.bs[1].min();
            if !zone_bytes.is_multiple_of(min) || sizes.iter().any(|b| b % min != 0) {
                return Err(bad(format!(
                    "zonemode=zbd here needs write block sizes that are multiples of the \
                     smallest ({min}), which divides the zone size {zone_bytes}: a zone then \
                     never keeps a remainder smaller than a block"
                )));
            }
        }
    }
    Ok(limit)
}

/// Runs the placed jobs (every one `zonemode=zbd`) on the zoned drive of `preset`.
pub(crate) fn run(
    preset: &Preset,
    placed: &mut [Placed],
    groups: u32,
    opts: &RunOptions,
    progress: &mut dyn FnMut(Stage, u64, u64),
) -> Result<FioRun, FioError> {
    let job = placed[0].spec.name.clone();
    let refuse = |reason: &str| FioError::Job {
        job: job.clone(),
        reason: format!("zonemode=zbd: {reason}"),
    };
    if opts.fidelity == nearflash_sim::Fidelity::Functional {
        return Err(refuse(
            "the zoned drive runs in timing fidelity only (--fidelity timing)",
        ));
    }
    if opts.precondition == Some(true) {
        return Err(refuse(
            "--precondition: reads find data only below write pointers; write it in an \
             earlier group (stonewall)",
        ));
    }
    let dev = format(preset)?;
    match opts.interface {
        Interface::Nvme => {
            let nvme = Nvme::new(preset.nvme.clone(), dev).map_err(|source| {
                FioError::Run(IoBenchError::Nvme {
                    preset: preset.name.clone(),
                    source,
                })
            })?;
            run_on(nvme, preset, placed, groups, opts, progress)
        }
        Interface::Bare => run_on(dev, preset, placed, groups, opts, progress),
    }
}

/// Runs the placed jobs on `dev`, the zoned drive behind its path.
fn run_on<D: ZonedPath>(
    dev: D,
    preset: &Preset,
    placed: &mut [Placed],
    groups: u32,
    opts: &RunOptions,
    progress: &mut dyn FnMut(Stage, u64, u64),
) -> Result<FioRun, FioError> {
    let zone_bytes = dev.zoned().zone_bytes();
    let mut notes = Vec::new();
    let spans = align(placed, zone_bytes, &mut notes)?;
    let write_zones_max = check_against_drive(placed, dev.zoned())?;
    let state = Rc::new(RefCell::new(zbd_state(
        placed,
        dev.zoned(),
        write_zones_max,
    )));
    let open_max = dev.zoned().zones().open_max();
    let zones = dev.zoned().zones().count();
    let mut sim: Sim<RigEvent<D::Event>> = Sim::new(opts.seed);
    let mut rig = Rig::new(ZbdDrive::new(dev, state.clone()));
    let disk = Rc::new(RefCell::new(Disk::default()));
    let mut finished: Vec<JobRun> = Vec::new();
    let mut counts = Counts::default();
    let run_start = sim.now();
    for g in 0..groups {
        let group_start = sim.now();
        let mut runs: Vec<JobRun> = placed
            .iter()
            .zip(&spans)
            .filter(|(p, _)| p.groupid == g)
            .map(|(p, &span)| {
                // zbd jobs replay no log (refused with read_iolog).
                p.job_run(g, opts.seed, group_start, &disk)
                    .with_zbd(state.clone(), span)
            })
            .collect();
        run_group(&mut sim, &mut rig, &mut runs, &mut counts, progress)?;
        for mut r in runs {
            r.finish();
            finished.push(r);
        }
    }
    progress(Stage::Measure, counts.done_total, counts.done_total);
    let end = sim.now();
    let drive = &rig.dev;
    drive.dev.check_invariants();
    assert!(
        drive.dev.quiescent(),
        "a finished run leaves the path and the drive idle"
    );
    check_write_pointers(drive, &state.borrow(), zones, zone_bytes);
    let nearflash = report(
        preset,
        opts.seed,
        drive,
        &state.borrow(),
        open_max,
        zones,
        &sim,
    );
    FioRun::of_jobs(
        finished,
        groups,
        &disk,
        end.since(run_start).as_ns(),
        nearflash,
        notes,
    )
}

/// The host's zone state the jobs share on `zoned`, resetting zones early as the first job
/// with a `zone_reset_frequency` above 0 says (never when none has one).
fn zbd_state(placed: &[Placed], zoned: &ZonedDevice, write_zones_max: u32) -> ZbdState {
    let (threshold, frequency) = placed
        .iter()
        .map(|p| (p.spec.zone_reset_threshold, p.spec.zone_reset_frequency))
        .find(|&(_, f)| f > 0.0)
        .unwrap_or((0.0, 0.0));
    ZbdState::new(
        zoned.zones().count(),
        zoned.zone_bytes(),
        write_zones_max,
        threshold,
        frequency,
    )
}

/// Request numbering and completions counted across a run's groups.
#[derive(Default)]
struct Counts {
    /// The id the next request takes.
    next_id: u64,
    /// Requests completed so far, in every group.
    done_total: u64,
}

/// Runs one group's jobs (`runs`) to their end through the paced load loop, reporting
/// progress every 4096 completions.
fn run_group<D: ZonedPath>(
    sim: &mut Sim<RigEvent<D::Event>>,
    rig: &mut Rig<ZbdDrive<D>>,
    runs: &mut Vec<JobRun>,
    counts: &mut Counts,
    progress: &mut dyn FnMut(Stage, u64, u64),
) -> Result<(), FioError> {
    let owners = RefCell::new(BTreeMap::<u64, usize>::new());
    let jobs = RefCell::new(runs);
    let mut watchdog = Watchdog::starting_at(DEFAULT_STALL_LIMIT, sim.now());
    let count = jobs.borrow().len();
    let next_id = &mut counts.next_id;
    let done_total = &mut counts.done_total;
    let result = load::run_paced(
        sim,
        rig,
        count,
        &mut watchdog,
        |i, now| {
            let mut jobs = jobs.borrow_mut();
            match jobs[i].step(now) {
                Step::Submit { draw, fua, .. } => {
                    let req = BlockRequest {
                        id: *next_id,
                        op: draw.op,
                        offset_bytes: draw.offset_bytes,
                        len_bytes: draw.len_bytes,
                        data: Vec::new(),
                    };
                    *next_id += 1;
                    jobs[i].submitted(&req);
                    owners.borrow_mut().insert(req.id, i);
                    Pace::Submit {
                        req,
                        fua,
                        placement: None,
                    }
                }
                Step::Until(at) => Pace::Until(at),
                Step::Blocked => Pace::Blocked,
                Step::Done => Pace::Done,
            }
        },
        |_, c| {
            let owner = owners
                .borrow_mut()
                .remove(&c.id)
                .expect("a completion of a request a job submitted");
            jobs.borrow_mut()[owner].completed(&c);
            *done_total += 1;
            if done_total.is_multiple_of(4096) {
                progress(Stage::Measure, *done_total, u64::MAX);
            }
            Ok::<(), FioError>(())
        },
    );
    result.map_err(|e| match e {
        load::LoadError::Stall(s) => FioError::Run(IoBenchError::Stalled(s.to_string())),
        load::LoadError::Handler(e) => e,
    })?;
    assert!(
        owners.borrow().is_empty(),
        "a finished group has nothing in flight"
    );
    Ok(())
}

/// Asserts that the jobs' write pointers are the drive's (its zone report), zone by zone.
fn check_write_pointers<D: ZonedPath>(
    drive: &ZbdDrive<D>,
    state: &ZbdState,
    zones: u32,
    zone_bytes: u64,
) {
    for z in 0..zones {
        assert_eq!(
            state.wp_bytes(z),
            drive.device().zones().descriptor(z).wp_sector * SECTOR_BYTES
                - u64::from(z) * zone_bytes,
            "zone {z}: the host's write pointer is the drive's"
        );
    }
}

/// nearflash's own figures of a zoned run (the top-level `nearflash` object).
fn report<D: ZonedPath>(
    preset: &Preset,
    seed: u64,
    drive: &ZbdDrive<D>,
    state: &ZbdState,
    open_max: u32,
    zones: u32,
    sim: &Sim<RigEvent<D::Event>>,
) -> serde_json::Value {
    let dev = drive.device();
    let stats = dev.stats();
    let flash = dev.backbone().stats();
    let host = stats.host_sectors_written * SECTOR_BYTES;
    let media = stats.rows_programmed * dev.layout().group_bytes();
    let mut by_state = BTreeMap::<&str, u32>::new();
    for z in 0..zones {
        *by_state.entry(dev.zones().state(z).name()).or_default() += 1;
    }
    let mut out = serde_json::json!({
        "preset": preset.name,
        "seed": seed,
        "fidelity": "timing",
        "interface": D::INTERFACE,
        "zoned": {
            "zones": zones,
            "zone_bytes": dev.zone_bytes(),
            "max_open_zones": open_max,
            "write_zones_max": state.write_zones_max(),
            "zones_by_state": by_state,
            "zone_resets": drive.counts.resets,
            "zone_reset_failures": drive.counts.reset_failures,
            "reads": drive.counts.reads,
            "reads_past_write_pointer": drive.counts.reads_past_wp,
            "active_zones_peak": drive.counts.active_zones_peak,
            "rows_padded": stats.rows_padded,
            "implicit_closes": stats.implicit_closes,
        },
        "host_bytes_written": host,
        "media_bytes_written": media,
        "waf": if host == 0 { 0.0 } else { media as f64 / host as f64 },
        "gc_runs": 0,
        "gc_pages_copied": 0,
        "flash_page_reads": flash.page_reads,
        "flash_page_programs": flash.page_programs,
        "flash_block_erases": flash.block_erases,
        "trace_hash": sim.trace_hash().hex(),
    });
    // Only a path that reorders keeps a zone's writes one at a time (a bare run's figures
    // are as they were before the front end).
    if let Some(front) = drive.dev.front_figures() {
        out["nvme"] = front;
    }
    if D::REORDERS {
        out["zoned"]["writes_serialised"] = drive.counts.writes_serialised.into();
        out["zoned"]["zone_writes_in_flight_peak"] = drive.counts.zone_writes_in_flight_peak.into();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearflash_sim::Fidelity;

    const ZONED: &[&str] = &["zns.enabled=true"];

    use crate::runner::tests::run_test_min as run_on;

    fn zoned(text: &str) -> FioRun {
        run_on(text, ZONED, Fidelity::Timing).unwrap()
    }

    fn zone_kib() -> u64 {
        let p = Preset::load("test-min", &["zns.enabled=true".to_string()]).unwrap();
        format(&p).unwrap().zone_bytes() / 1024
    }

    fn figure(r: &FioRun, key: &str) -> u64 {
        r.nearflash["zoned"][key].as_u64().unwrap()
    }

    /// A sequential job over four zones fills them in order at their write pointers (the
    /// drive refuses a write anywhere else); its second loop wraps to the first zone and
    /// resets each full zone before writing it again.
    #[test]
    fn a_sequential_zbd_write_job_fills_zones_and_resets_them_when_it_wraps() {
        let z = zone_kib();
        let one_pass = zoned(&format!(
            "[w]\nzonemode=zbd\nrw=write\nbs=16k\nsize={}k\niodepth=4\n",
            4 * z
        ));
        let s = &one_pass.jobs[0].stats;
        assert_eq!((s.errors, s.zone_resets), (0, 0));
        assert_eq!(s.dirs[1].io_bytes, 4 * z * 1024);
        assert_eq!(one_pass.nearflash["zoned"]["zones_by_state"]["full"], 4);
        let two = zoned(&format!(
            "[w]\nzonemode=zbd\nrw=write\nbs=16k\nsize={}k\nloops=2\niodepth=4\n",
            4 * z
        ));
        let s = &two.jobs[0].stats;
        assert_eq!((s.errors, s.zone_resets), (0, 4), "each zone reset once");
        assert_eq!(
            figure(&two, "zone_resets"),
            4,
            "the drive ran the four resets"
        );
        let waf = two.nearflash["waf"].as_f64().unwrap();
        assert!((0.99..1.01).contains(&waf), "whole rows, no GC: WAF {waf}");
    }

    /// examples/fio/zbd.fio's random writer: writes drawn over 8 zones at random go to at
    /// most 4 open zones at their write pointers; it writes the region three times over, so
    /// full zones are drawn again and reset. No write fails (a write off a write pointer
    /// would), and the drive never holds more than 4 open zones.
    #[test]
    fn a_random_write_job_on_four_open_zones_wraps_and_resets_full_zones() {
        let z = zone_kib();
        let r = zoned(&format!(
            "[w]\nzonemode=zbd\nmax_open_zones=4\nrw=randwrite\nbs=16k\nsize={}k\n\
             io_size={}k\niodepth=8\n",
            8 * z,
            24 * z
        ));
        let s = &r.jobs[0].stats;
        assert_eq!(s.errors, 0, "{:?}", s.first_error);
        assert_eq!(s.dirs[1].io_bytes, 24 * z * 1024);
        assert!(s.zone_resets >= 8, "{} resets", s.zone_resets);
        assert_eq!(figure(&r, "zone_resets"), s.zone_resets);
        assert_eq!(r.nearflash["zoned"]["write_zones_max"], 4);
        let by_state = &r.nearflash["zoned"]["zones_by_state"];
        let open = by_state["implicitly open"].as_u64().unwrap_or(0)
            + by_state["closed"].as_u64().unwrap_or(0);
        assert!(open <= 4, "{by_state}");
        assert_eq!(
            figure(&r, "active_zones_peak"),
            4,
            "the drive held the 4 targets at once"
        );
    }

    /// A writer leaves zones partly written; a random reader after it (stonewall) reads only
    /// below the write pointers — every read checked against the drive's zone table when
    /// issued. The same reader with read_beyond_wp=1 does read past them: the check can fail.
    #[test]
    fn a_random_read_job_never_reads_past_a_write_pointer() {
        let z = zone_kib();
        let text = |beyond: u32| {
            format!(
                "[global]\nzonemode=zbd\nsize={}k\nbs=16k\n\
                 [w]\nmax_open_zones=4\nrw=randwrite\nnumber_ios=40\n\
                 [r]\nstonewall\nrw=randread\nnumber_ios=400\niodepth=8\nread_beyond_wp={beyond}\n",
                8 * z
            )
        };
        let r = zoned(&text(0));
        let reads = r.jobs[1].stats.dirs[0].total_ios;
        assert_eq!(reads, 400);
        assert_eq!(figure(&r, "reads"), 400);
        assert_eq!(figure(&r, "reads_past_write_pointer"), 0);
        let beyond = zoned(&text(1));
        assert!(figure(&beyond, "reads_past_write_pointer") > 0);
    }

    #[test]
    fn a_sequential_reader_reads_only_what_was_written_and_stops() {
        let z = zone_kib();
        let r = zoned(&format!(
            "[global]\nzonemode=zbd\nsize={}k\nbs=16k\n[w]\nrw=write\nnumber_ios=20\n\
             [r]\nstonewall\nrw=read\n",
            4 * z
        ));
        // 20 writes of 16 KiB: the reader reads those 320 KiB and finds nothing more.
        assert_eq!(r.jobs[1].stats.dirs[0].io_bytes, 20 * 16 * 1024);
        assert_eq!(figure(&r, "reads_past_write_pointer"), 0);
    }

    /// fio's zone_reset_threshold / zone_reset_frequency: once half the region lies below
    /// write pointers, every 4th write resets its zone first — long before zones fill, so
    /// the run resets many times more often than the same job without them, and the drive
    /// erased each reset zone.
    #[test]
    fn zone_reset_threshold_and_frequency_reset_zones_before_they_fill() {
        let z = zone_kib();
        let job = |extra: &str| {
            zoned(&format!(
                "[w]\nzonemode=zbd\nmax_open_zones=4\nrw=randwrite\nbs=16k\nsize={}k\n\
                 io_size={}k\niodepth=4\n{extra}",
                8 * z,
                16 * z
            ))
        };
        let plain = job("");
        let early = job("zone_reset_threshold=0.5\nzone_reset_frequency=0.25\n");
        let (a, b) = (&plain.jobs[0].stats, &early.jobs[0].stats);
        assert_eq!((a.errors, b.errors), (0, 0));
        assert!(
            b.zone_resets > 2 * a.zone_resets,
            "{} vs {}",
            b.zone_resets,
            a.zone_resets
        );
        assert_eq!(figure(&early, "zone_resets"), b.zone_resets);
        let erases = early.nearflash["flash_block_erases"].as_u64().unwrap();
        assert!(
            erases >= b.zone_resets,
            "each reset erased its zone's blocks"
        );
    }

    /// Two writers (numjobs=2) share the write target zones, as fio's jobs share
    /// `zbd_info`: together they keep at most max_open_zones zones open and every write lands
    /// at a write pointer.
    #[test]
    fn clones_share_the_open_zone_limit() {
        let z = zone_kib();
        let r = zoned(&format!(
            "[w]\nzonemode=zbd\nmax_open_zones=3\nrw=randwrite\nbs=16k\nsize={}k\n\
             io_size={}k\niodepth=4\nnumjobs=2\n",
            8 * z,
            12 * z
        ));
        assert_eq!(r.jobs.len(), 2);
        for j in &r.jobs {
            assert_eq!(j.stats.errors, 0, "{:?}", j.stats.first_error);
            assert_eq!(j.stats.dirs[1].io_bytes, 12 * z * 1024);
        }
        assert_eq!(
            figure(&r, "active_zones_peak"),
            3,
            "both jobs together, 3 zones at once"
        );
        let resets: u64 = r.jobs.iter().map(|j| j.stats.zone_resets).sum();
        assert_eq!(figure(&r, "zone_resets"), resets);
    }

    /// Through the NVMe front end (the default) two writers share four zones at depth 8:
    /// NVMe does not order commands, so the host keeps one write in flight per zone (fio's
    /// zone lock across jobs, the block layer's zone write plug within one) and the rest wait
    /// in the zone's queue. No write lands off its write pointer, every command crossed the
    /// front end, and the bare drive, which takes requests in order, runs the same jobs with
    /// several writes in flight to a zone.
    #[test]
    fn through_nvme_a_zones_writes_go_one_at_a_time_and_none_fails() {
        let z = zone_kib();
        let text = format!(
            "[w]\nzonemode=zbd\nmax_open_zones=2\nrw=randwrite\nbs=16k\nsize={}k\n\
             io_size={}k\niodepth=8\nnumjobs=2\n",
            4 * z,
            8 * z
        );
        let r = zoned(&text);
        assert_eq!(r.nearflash["interface"], "nvme");
        for j in &r.jobs {
            assert_eq!(j.stats.errors, 0, "{:?}", j.stats.first_error);
            assert_eq!(j.stats.dirs[1].io_bytes, 8 * z * 1024);
        }
        assert_eq!(figure(&r, "zone_writes_in_flight_peak"), 1);
        assert!(
            figure(&r, "writes_serialised") > 0,
            "depth 8 on 2 zones: writes waited for their zone's previous one"
        );
        let writes: u64 = r.jobs.iter().map(|j| j.stats.dirs[1].total_ios).sum();
        let resets = figure(&r, "zone_resets");
        let commands = r.nearflash["nvme"]["commands"].as_u64().unwrap();
        assert!(
            commands >= writes + resets,
            "{commands} commands for {writes} writes and {resets} resets"
        );
        assert_eq!(
            r.nearflash["nvme"]["zone_commands"].as_u64().unwrap(),
            resets,
            "each reset a Zone Management Send"
        );
        let bare = crate::runner::run(
            &crate::jobfile::tests::one(&text).unwrap(),
            std::path::Path::new("job.fio"),
            &RunOptions {
                preset: "test-min".into(),
                overrides: vec!["zns.enabled=true".into()],
                seed: 1,
                fidelity: Fidelity::Timing,
                interface: Interface::Bare,
                precondition: None,
            },
            &mut |_, _, _| {},
        )
        .unwrap();
        assert_eq!(bare.nearflash["interface"], "bare");
        assert!(bare.nearflash["zoned"].get("writes_serialised").is_none());
        for j in &bare.jobs {
            assert_eq!(j.stats.errors, 0, "{:?}", j.stats.first_error);
        }
    }

    #[test]
    fn zonemode_zbd_and_the_drive_must_agree() {
        let job = "[j]\nzonemode=zbd\nrw=write\nsize=1m\n";
        let e = run_on(job, &[], Fidelity::Timing).unwrap_err().to_string();
        assert!(
            e.contains("zonemode=zbd needs a zoned drive") && e.contains("zns.enabled"),
            "{e}"
        );
        let e = run_on("[j]\nrw=write\nsize=1m\n", ZONED, Fidelity::Timing)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the drive is zoned") && e.contains("zonemode=zbd"),
            "{e}"
        );
    }

    #[test]
    fn zone_geometry_and_limits_that_do_not_fit_the_drive_are_refused_naming_both() {
        let z = zone_kib() * 1024;
        for (extra, want) in [
            (
                "zonesize=64k\n".to_string(),
                format!("zonesize 65536 does not match the drive's zone size {z}"),
            ),
            (
                "max_open_zones=15\n".to_string(),
                "max_open_zones 15 is larger than the drive's max open zones 14".to_string(),
            ),
            ("bs=12k\n".to_string(), "divides the zone size".to_string()),
            ("size=64k\n".to_string(), "holds no whole zone".to_string()),
        ] {
            let text = format!("[j]\nzonemode=zbd\nrw=randwrite\nsize=2m\n{extra}");
            let e = run_on(&text, ZONED, Fidelity::Timing)
                .unwrap_err()
                .to_string();
            assert!(e.contains(&want), "{extra}: {e}");
        }
        let e = run_on(
            "[j]\nzonemode=zbd\nrw=write\nsize=2m\n",
            ZONED,
            Fidelity::Functional,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("timing fidelity"), "{e}");
    }

    #[test]
    fn a_region_off_zone_boundaries_is_aligned_as_fio_aligns_it() {
        let z = zone_kib();
        let r = zoned(&format!(
            "[w]\nzonemode=zbd\nrw=write\nbs=16k\noffset=16k\nsize={}k\n",
            3 * z
        ));
        // [16k, 3 zones + 16k) holds zones 1 and 2 whole: fio rounds the start up and the
        // end down, and says so.
        assert_eq!(r.jobs[0].stats.dirs[1].io_bytes, 2 * z * 1024);
        assert!(
            r.notes.iter().any(|n| n.contains("aligned to zones")),
            "{:?}",
            r.notes
        );
    }
}
