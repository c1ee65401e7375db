//! The host's zone layer between fio's zbd jobs and the zoned drive ([`ZbdDrive`]): it
//! issues each reset the jobs decide once the zone has nothing in flight, holds the zone's
//! later requests behind it, and keeps one write in flight per zone when the path reorders
//! (see the parent module's docs); [`ZonedPath`] is the drive bare or behind NVMe.

use crate::zbd::ZbdState;
use nearflash_blockdev::{BlockCompletion, BlockDevice, BlockOp, BlockRequest, SECTOR_BYTES};
use nearflash_ftl::zns::{ZoneAction, ZoneCommand, ZoneRequest, ZonedDevice};
use nearflash_hw::link::Direction;
use nearflash_nvme::Nvme;
use nearflash_sim::{Schedule, SimRng};
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
    /// The zoned drive behind its path.
    pub(super) dev: D,
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
