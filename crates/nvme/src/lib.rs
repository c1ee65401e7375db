//! An NVMe front end over any [`BlockDevice`]: the path a command takes from the host's
//! submission queue to the completion the host sees, as a sans-IO component. Each step
//! occupies the hardware it crosses (see `docs/design.md`, "The NVMe path"):
//!
//! 1. the host writes the 64-byte SQE into its memory and the SQ tail **doorbell** (a posted
//!    4-byte MMIO write down the link);
//! 2. the controller **fetches** the SQE (a DMA read: request up, 64 bytes down);
//! 3. the controller **processes** the command (a FIFO of per-command firmware cost);
//! 4. for a write, it DMAs the data from the source memory; it hands the request to the
//!    block device (the FTL and its flash);
//! 5. for a read, it DMAs the data up into the target memory — host DRAM or a peer device's
//!    memory (peer-to-peer);
//! 6. it posts the 16-byte **CQE** into host memory and signals it by an **MSI-X** interrupt,
//!    or a spinning host core **polls** it (its busy time is charged); the host then writes
//!    the CQ head doorbell.
//!
//! A queue never holds more than `queue_entries − 1` commands: [`Nvme::try_submit`] refuses
//! beyond that, and the [`BlockDevice`] face holds the host's requests back (as the block
//! layer waits for a tag) until a slot frees. Tolerates: requests out of range or misaligned
//! (completed with the block layer's typed error after the fetch, as a controller answers
//! "LBA out of range"); any child device completing in any order.

pub mod config;
pub mod directive;
pub mod error;
mod ext;
pub mod memory;
mod mgmt;
pub mod testing;
mod zoned;

pub use config::{CompletionMode, MemoryPortConfig, NvmeConfig};
pub use directive::DirectiveDwords;
pub use error::NvmeError;
pub use ext::{ExtCommand, ExtCompletion, ExtReady, INTERNAL_ID_BIT};
pub use memory::EndpointId;
pub use mgmt::NvmeMgmtCommand;
pub use zoned::NvmeZoneCommand;

use config::{CQE_BYTES, DOORBELL_BYTES, DSM_RANGE_BYTES, MSIX_BYTES, SQE_BYTES};
use memory::{dma_from_memory, dma_to_memory, MemoryPort};
use nearflash_blockdev::{
    BlockCompletion, BlockDevice, BlockOp, BlockRequest, IoError, MgmtCompletion, MgmtRequest,
    PlacementDirective, ZoneCompletion, ZoneRequest, SECTOR_BYTES,
};
use nearflash_hw::link::{Direction, Link};
use nearflash_sim::{Schedule, SimDuration, SimRng, SimTime, TraceEvent};
use std::collections::VecDeque;

/// The front end's events, with the child device's own wrapped in `Device`. Command events
/// carry the command's tag (its slot in the controller).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NvmeEvent<E> {
    Device(E),
    /// An SQ tail doorbell write reached the controller: entries up to `tail` (a running
    /// count of entries written to queue `qid`) may be fetched.
    Doorbell {
        qid: u16,
        tail: u64,
    },
    /// The SQE is in the controller.
    Fetched(u32),
    /// The controller has processed the command.
    Processed(u32),
    /// A write's data (or a trim's range list) is in the device.
    DataIn(u32),
    /// A read's data is in the target memory.
    DataOut(u32),
    /// The host has seen the completion (interrupt handler ran, or the poller saw the CQE).
    Completed(u32),
}

impl<E: TraceEvent> TraceEvent for NvmeEvent<E> {
    fn hash_word(&self) -> u64 {
        const NVME: u64 = 0x4E << 56;
        match *self {
            NvmeEvent::Device(ref e) => e.hash_word(),
            NvmeEvent::Doorbell { qid, tail } => NVME | 1 << 48 | u64::from(qid) << 32 ^ tail,
            NvmeEvent::Fetched(t) => NVME | 2 << 48 | u64::from(t),
            NvmeEvent::Processed(t) => NVME | 3 << 48 | u64::from(t),
            NvmeEvent::DataIn(t) => NVME | 4 << 48 | u64::from(t),
            NvmeEvent::DataOut(t) => NVME | 5 << 48 | u64::from(t),
            NvmeEvent::Completed(t) => NVME | 6 << 48 | u64::from(t),
        }
    }
}

/// A command as the host submits it.
#[derive(Clone, Debug)]
pub struct NvmeCommand {
    pub qid: u16,
    pub req: BlockRequest,
    /// Where a read's data goes and a write's data comes from.
    pub target: EndpointId,
    /// Force Unit Access: the write completes only once durable. It is passed down to the
    /// block device ([`BlockDevice::submit_fua`]); one without a volatile write cache makes
    /// every write durable anyway. Counted.
    pub fua: bool,
    /// A write's Data Placement directive (Flexible Data Placement): written into the SQE's
    /// CDW12/CDW13 ([`DirectiveDwords`]), decoded by the controller and handed to the block
    /// device with the write ([`BlockDevice::submit_placed`]). Ignored on other commands.
    pub placement: Option<PlacementDirective>,
}

/// Counters of the front end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NvmeStats {
    pub commands: u64,
    pub doorbells: u64,
    pub sqe_fetches: u64,
    pub cqes: u64,
    pub interrupts: u64,
    pub fua_writes: u64,
    pub flushes: u64,
    pub peer_dma_bytes: u64,
    /// Writes whose SQE carried a Data Placement directive.
    pub placed_writes: u64,
    /// Commands of the zoned command set: Zone Append (0x7D), Zone Management Send (0x79)
    /// and Receive (0x7A).
    pub zone_appends: u64,
    pub zone_sends: u64,
    pub zone_receives: u64,
    /// FDP's management commands: I/O Management Send (0x1D) and Receive (0x12), Get Log
    /// Page (0x02).
    pub mgmt_commands: u64,
    /// Host core time spent spinning on completion queues (poll mode).
    pub poll_cpu_ns: u64,
    /// Time the controller's firmware spent processing commands (step 3): over a span of
    /// simulated time, its utilization.
    pub controller_busy_ns: u64,
    /// The most commands any queue held at once.
    pub in_flight_max: u32,
}

struct Cmd {
    qid: u16,
    req: BlockRequest,
    target: EndpointId,
    fua: bool,
    /// The SQE's directive fields (zero without a directive).
    directive: DirectiveDwords,
    submitted: SimTime,
    result: Result<(), IoError>,
    data: Vec<u8>,
    /// A command of another command set (`ext`): its host data moved in before the layer
    /// above runs it; `None` for block I/O.
    ext: Option<ext::ExtState>,
    /// A command of the zoned command set (`zoned`); `None` for block I/O.
    zone: Option<zoned::ZoneCmdState>,
    /// An FDP management command (`mgmt`); `None` otherwise.
    mgmt: Option<mgmt::MgmtCmdState>,
}

impl Cmd {
    /// A command that moves no block data of its own (an extension, zone or management
    /// command: its bytes travel by its own fields). Its `req` is a placeholder with the
    /// command's id that is never handed to the device; the caller sets its state.
    fn without_block_data(qid: u16, id: u64, now: SimTime) -> Cmd {
        Cmd {
            qid,
            req: BlockRequest {
                id,
                op: BlockOp::Flush,
                offset_bytes: 0,
                len_bytes: 0,
                data: Vec::new(),
            },
            target: EndpointId::HOST,
            fua: false,
            directive: DirectiveDwords::default(),
            submitted: now,
            result: Ok(()),
            data: Vec::new(),
            ext: None,
            zone: None,
            mgmt: None,
        }
    }
}

struct Queue {
    /// Commands holding a slot of this queue (submitted, completion not yet seen).
    in_flight: u32,
    /// Entries written by the host and not yet fetched, with their running index.
    unfetched: VecDeque<(u64, u32)>,
    /// Running count of entries written (the tail, unwrapped).
    tail: u64,
    /// Requests the block-device face holds back while the queue is full.
    held: VecDeque<Held>,
}

/// A request the block-device face holds back for a free slot: a block request with its FUA
/// flag and placement directive, or a zone command.
enum Held {
    Block(BlockRequest, bool, Option<PlacementDirective>),
    Zone(ZoneRequest),
    Mgmt(MgmtRequest),
}

/// Requests the block-device face may hold back per queue, unless the caller sets its own
/// bound ([`Nvme::set_held_max`]). The [`BlockDevice`] contract accepts every request, so the
/// bound is the caller's own outstanding count; more than this is a caller bug.
pub const HELD_MAX: usize = 1 << 16;

/// An NVMe controller and its link in front of the block device `D`.
pub struct Nvme<D> {
    cfg: NvmeConfig,
    dev: D,
    link: Link,
    ports: Vec<MemoryPort>,
    queues: Vec<Queue>,
    cmds: Vec<Option<Cmd>>,
    free_tags: Vec<u32>,
    controller_free_at: SimTime,
    held_max: usize,
    next_qid: u16,
    polled: u32,
    poll_since: SimTime,
    stats: NvmeStats,
    dev_done: Vec<BlockCompletion>,
    completions: Vec<BlockCompletion>,
    ext: ext::ExtQueues,
    zone_dev_done: Vec<ZoneCompletion>,
    zone_completions: Vec<ZoneCompletion>,
    mgmt_dev_done: Vec<MgmtCompletion>,
    mgmt_completions: Vec<MgmtCompletion>,
}

impl<D: BlockDevice> Nvme<D> {
    pub fn new(cfg: NvmeConfig, dev: D) -> Result<Self, NvmeError> {
        cfg.validate()?;
        let link = Link::new(cfg.link.clone())?;
        let slots = u32::from(cfg.queue_pairs) * cfg.depth_max();
        // Every command the queues admit goes straight to the device: it must admit them all.
        if u64::from(slots) > dev.admission_limit() {
            return Err(NvmeError::SlotsOverAdmission {
                slots: u64::from(slots),
                limit: dev.admission_limit(),
            });
        }
        let queues = (0..cfg.queue_pairs)
            .map(|_| Queue {
                in_flight: 0,
                unfetched: VecDeque::new(),
                tail: 0,
                held: VecDeque::new(),
            })
            .collect();
        Ok(Nvme {
            ports: vec![MemoryPort::new(cfg.host_memory.clone())],
            cfg,
            dev,
            link,
            queues,
            cmds: (0..slots).map(|_| None).collect(),
            free_tags: (0..slots).rev().collect(),
            controller_free_at: SimTime::ZERO,
            held_max: HELD_MAX,
            next_qid: 0,
            polled: 0,
            poll_since: SimTime::ZERO,
            stats: NvmeStats::default(),
            dev_done: Vec::new(),
            completions: Vec::new(),
            ext: ext::ExtQueues::default(),
            zone_dev_done: Vec::new(),
            zone_completions: Vec::new(),
            mgmt_dev_done: Vec::new(),
            mgmt_completions: Vec::new(),
        })
    }

    /// Bounds the requests the block-device face holds back per queue at `held_max` instead
    /// of [`HELD_MAX`]: a caller that may have more outstanding (an open-loop trace replay
    /// overloading the drive, whose requests wait in the host's block layer) states its own
    /// bound, which the face asserts.
    pub fn set_held_max(&mut self, held_max: usize) {
        assert!(held_max > 0, "a queue holds back at least one request");
        self.held_max = held_max;
    }

    /// Adds a peer memory (a device's BAR or DRAM) that DMAs can target.
    pub fn add_endpoint(&mut self, port: MemoryPortConfig) -> Result<EndpointId, NvmeError> {
        port.validate("endpoint")?;
        let id = u16::try_from(self.ports.len()).map_err(|_| NvmeError::Config {
            field: "endpoint",
            reason: "at most 65535 peer endpoints".into(),
        })?;
        self.ports.push(MemoryPort::new(port));
        Ok(EndpointId(id))
    }

    pub fn device(&self) -> &D {
        &self.dev
    }

    /// Gives the device up (the front end's state goes with it).
    pub fn into_device(self) -> D {
        self.dev
    }

    pub fn device_mut(&mut self) -> &mut D {
        &mut self.dev
    }

    pub fn config(&self) -> &NvmeConfig {
        &self.cfg
    }

    pub fn link(&self) -> &Link {
        &self.link
    }

    /// The front end's link, for a drive whose own engines DMA across it besides the
    /// controller (INSIDER's ISC unit streams its output up the same link its commands'
    /// doorbells, SQEs, data and completions cross): one link, one occupancy.
    pub fn link_mut(&mut self) -> &mut Link {
        &mut self.link
    }

    pub fn stats(&self) -> NvmeStats {
        self.stats
    }

    /// Bytes a memory endpoint's port has served.
    pub fn endpoint_bytes(&self, id: EndpointId) -> Option<u64> {
        self.ports.get(usize::from(id.0)).map(MemoryPort::bytes)
    }

    /// Commands queue `qid` holds now.
    pub fn in_flight(&self, qid: u16) -> u32 {
        self.queues[usize::from(qid)].in_flight
    }

    /// Submits a command at `q.now()`: the SQE goes into host memory and the tail doorbell
    /// is rung. Refused when the queue is full.
    pub fn try_submit<S: Schedule<NvmeEvent<D::Event>>>(
        &mut self,
        cmd: NvmeCommand,
        q: &mut S,
    ) -> Result<(), NvmeError> {
        let target = cmd.target;
        self.admit(
            cmd.qid,
            q,
            |nvme| {
                if usize::from(target.0) >= nvme.ports.len() {
                    return Err(NvmeError::NoSuchEndpoint(target.0));
                }
                Ok(())
            },
            |nvme, now| {
                let fua = cmd.fua && cmd.req.op == BlockOp::Write;
                nvme.stats.fua_writes += u64::from(fua);
                if cmd.target != EndpointId::HOST {
                    nvme.stats.peer_dma_bytes += cmd.req.len_bytes;
                }
                let placement = cmd.placement.filter(|_| cmd.req.op == BlockOp::Write);
                nvme.stats.placed_writes += u64::from(placement.is_some());
                Cmd {
                    qid: cmd.qid,
                    req: cmd.req,
                    target: cmd.target,
                    fua,
                    directive: DirectiveDwords::encode(placement),
                    submitted: now,
                    result: Ok(()),
                    data: Vec::new(),
                    ext: None,
                    zone: None,
                    mgmt: None,
                }
            },
        )
    }

    /// Step 1 of every command set's submission: admits a command to queue `qid` — refused
    /// when there is no such queue, when `check` refuses it, or when the queue is full, in
    /// that order — gives it a tag, puts its SQE behind the tail, counts it (and, polled, the
    /// spinning core's start), stores what `make` builds under the tag and rings the tail
    /// doorbell, a posted MMIO write down the link.
    fn admit<S: Schedule<NvmeEvent<D::Event>>>(
        &mut self,
        qid: u16,
        q: &mut S,
        check: impl FnOnce(&Self) -> Result<(), NvmeError>,
        make: impl FnOnce(&mut Self, SimTime) -> Cmd,
    ) -> Result<(), NvmeError> {
        let depth_max = self.cfg.depth_max();
        if usize::from(qid) >= self.queues.len() {
            return Err(NvmeError::NoSuchQueue {
                qid,
                queue_pairs: self.cfg.queue_pairs,
            });
        }
        check(self)?;
        let queue = &mut self.queues[usize::from(qid)];
        if queue.in_flight >= depth_max {
            return Err(NvmeError::QueueFull { qid, depth_max });
        }
        let now = q.now();
        let tag = self
            .free_tags
            .pop()
            .expect("a queue with room has a free tag");
        queue.in_flight += 1;
        assert!(queue.in_flight <= depth_max);
        self.stats.in_flight_max = self.stats.in_flight_max.max(queue.in_flight);
        queue.unfetched.push_back((queue.tail, tag));
        queue.tail += 1;
        let tail = queue.tail;
        self.stats.commands += 1;
        if self.cfg.completion == CompletionMode::Poll {
            if self.polled == 0 {
                self.poll_since = now;
            }
            self.polled += 1;
        }
        let cmd = make(self, now);
        assert_eq!(
            cmd.qid, qid,
            "a command is stored on the queue it was admitted to"
        );
        assert!(
            self.cmds[tag as usize].is_none(),
            "a free tag holds no command"
        );
        self.cmds[tag as usize] = Some(cmd);
        let ring = self.link.transfer(now, Direction::Down, DOORBELL_BYTES);
        self.stats.doorbells += 1;
        q.schedule_at(ring.arrives, NvmeEvent::Doorbell { qid, tail });
        Ok(())
    }

    /// Handles one of the front end's events at `q.now()`.
    pub fn handle_event<S: Schedule<NvmeEvent<D::Event>>>(
        &mut self,
        ev: NvmeEvent<D::Event>,
        q: &mut S,
        rng: &mut SimRng,
    ) {
        let now = q.now();
        match ev {
            NvmeEvent::Device(e) => {
                self.dev.handle(e, &mut q.map(NvmeEvent::Device), rng);
            }
            NvmeEvent::Doorbell { qid, tail } => self.fetch(qid, tail, now, q),
            NvmeEvent::Fetched(tag) => {
                // Step 3: the controller's firmware, one command at a time.
                let start = self.controller_free_at.max(now);
                self.controller_free_at = start + SimDuration::from_ns(self.cfg.controller_ns);
                self.stats.controller_busy_ns += self.cfg.controller_ns;
                q.schedule_at(self.controller_free_at, NvmeEvent::Processed(tag));
            }
            NvmeEvent::Processed(tag) => self.processed(tag, now, q),
            NvmeEvent::DataIn(tag) => self.data_in(tag, q),
            NvmeEvent::DataOut(tag) => self.post_completion(tag, now, q),
            NvmeEvent::Completed(tag) => self.completed(tag, now, q),
        }
        self.drain_device(now, q);
    }

    /// Step 2: fetch every entry the doorbell exposed (a DMA read of 64 bytes each).
    fn fetch<S: Schedule<NvmeEvent<D::Event>>>(
        &mut self,
        qid: u16,
        tail: u64,
        now: SimTime,
        q: &mut S,
    ) {
        let queue = &mut self.queues[usize::from(qid)];
        while queue
            .unfetched
            .front()
            .is_some_and(|&(index, _)| index < tail)
        {
            let (_, tag) = queue.unfetched.pop_front().expect("front checked");
            let host = &mut self.ports[0];
            let at = dma_from_memory(&mut self.link, host, now, SQE_BYTES);
            self.stats.sqe_fetches += 1;
            q.schedule_at(at, NvmeEvent::Fetched(tag));
        }
    }

    fn processed<S: Schedule<NvmeEvent<D::Event>>>(&mut self, tag: u32, now: SimTime, q: &mut S) {
        let capacity = self.dev.capacity_bytes();
        let cmd = self.cmds[tag as usize]
            .as_mut()
            .expect("a processed command is live");
        if let Some(ext) = cmd.ext {
            self.ext_processed(tag, ext, now, q);
            return;
        }
        if cmd.zone.is_some() {
            self.zone_processed(tag, now, q);
            return;
        }
        if cmd.mgmt.is_some() {
            self.mgmt_processed(tag, now, q);
            return;
        }
        if let Err(e) = check_range(&cmd.req, capacity) {
            cmd.result = Err(e);
            self.post_completion(tag, now, q);
            return;
        }
        // Step 4: a write's data (a trim's range descriptor) comes from memory first.
        let inbound = match cmd.req.op {
            BlockOp::Write => cmd.req.len_bytes,
            BlockOp::Trim => DSM_RANGE_BYTES,
            BlockOp::Read | BlockOp::Flush => 0,
        };
        if inbound > 0 {
            let port = &mut self.ports[usize::from(cmd.target.0)];
            let at = dma_from_memory(&mut self.link, port, now, inbound);
            q.schedule_at(at, NvmeEvent::DataIn(tag));
        } else {
            self.submit_to_device(tag, q);
        }
    }

    /// Step 4 done: a block command goes to the device, another command set's to the layer
    /// above.
    fn data_in<S: Schedule<NvmeEvent<D::Event>>>(&mut self, tag: u32, q: &mut S) {
        let cmd = self.cmds[tag as usize]
            .as_ref()
            .expect("a command in flight is live");
        if cmd.ext.is_some() {
            self.ext_ready(tag);
        } else if cmd.zone.is_some() {
            self.submit_zone_to_device(tag, q.now(), q);
        } else if cmd.mgmt.is_some() {
            self.submit_mgmt_to_device(tag, q.now(), q);
        } else {
            self.submit_to_device(tag, q);
        }
    }

    fn submit_to_device<S: Schedule<NvmeEvent<D::Event>>>(&mut self, tag: u32, q: &mut S) {
        let cmd = self.cmds[tag as usize]
            .as_mut()
            .expect("a command in flight is live");
        if cmd.req.op == BlockOp::Flush {
            self.stats.flushes += 1;
        }
        let req = BlockRequest {
            id: u64::from(tag),
            op: cmd.req.op,
            offset_bytes: cmd.req.offset_bytes,
            len_bytes: cmd.req.len_bytes,
            data: std::mem::take(&mut cmd.req.data),
        };
        // The controller reads the directive from the SQE it fetched.
        let q = &mut q.map(NvmeEvent::Device);
        match cmd.directive.placement() {
            Some(p) => {
                debug_assert_eq!(req.op, BlockOp::Write, "only writes carry a placement");
                self.dev.submit_placed(None, req, cmd.fua, p, q);
            }
            None if cmd.fua => self.dev.submit_fua(req, q),
            None => self.dev.submit(req, q),
        }
    }

    /// The Volatile Write Cache field of Identify Controller (NVMe 1.4 §5.15.2.2, VWC): set
    /// when the device below buffers completed writes in volatile memory.
    pub fn volatile_write_cache(&self) -> bool {
        self.dev.volatile_write_cache()
    }

    /// Moves the device's finished requests on: a read's data DMA, or straight to the CQE.
    fn drain_device<S: Schedule<NvmeEvent<D::Event>>>(&mut self, now: SimTime, q: &mut S) {
        self.dev.take_completions(&mut self.dev_done);
        let mut done = std::mem::take(&mut self.dev_done);
        for c in done.drain(..) {
            if c.id & INTERNAL_ID_BIT != 0 {
                self.ext.internal_done(c);
                continue;
            }
            let tag = u32::try_from(c.id).expect("the device echoes our tag");
            let cmd = self.cmds[tag as usize]
                .as_mut()
                .expect("the device completes a live command");
            assert_eq!(
                c.op, cmd.req.op,
                "the device completes the command we gave it"
            );
            let ok = c.result.is_ok();
            cmd.result = c.result;
            cmd.data = c.data;
            if cmd.req.op == BlockOp::Read && ok {
                // Step 5: the read data goes up into the target memory.
                let port = &mut self.ports[usize::from(cmd.target.0)];
                let at = dma_to_memory(&mut self.link, port, now, cmd.req.len_bytes);
                q.schedule_at(at, NvmeEvent::DataOut(tag));
            } else {
                self.post_completion(tag, now, q);
            }
        }
        self.dev_done = done;
        self.drain_zone_device(now, q);
        self.drain_mgmt_device(now, q);
    }

    /// Step 6: the CQE into host memory, then the interrupt (or the poller sees it).
    fn post_completion<S: Schedule<NvmeEvent<D::Event>>>(
        &mut self,
        tag: u32,
        now: SimTime,
        q: &mut S,
    ) {
        let host = &mut self.ports[0];
        let cqe_in_memory = dma_to_memory(&mut self.link, host, now, CQE_BYTES);
        self.stats.cqes += 1;
        let seen = match self.cfg.completion {
            CompletionMode::Interrupt => {
                let msi = self.link.transfer(now, Direction::Up, MSIX_BYTES);
                self.stats.interrupts += 1;
                // The MSI-X write queues behind the CQE on the same direction (PCIe orders
                // posted writes), so the handler never runs before the entry is visible.
                msi.arrives.max(cqe_in_memory) + SimDuration::from_ns(self.cfg.msix_latency_ns)
            }
            CompletionMode::Poll => cqe_in_memory + SimDuration::from_ns(self.cfg.poll_detect_ns),
        };
        q.schedule_at(seen, NvmeEvent::Completed(tag));
    }

    fn completed<S: Schedule<NvmeEvent<D::Event>>>(&mut self, tag: u32, now: SimTime, q: &mut S) {
        let cmd = self.cmds[tag as usize]
            .take()
            .expect("a command completes once");
        self.free_tags.push(tag);
        // The host consumes the entry and writes the CQ head doorbell (posted; nothing waits).
        self.link.transfer(now, Direction::Down, DOORBELL_BYTES);
        self.stats.doorbells += 1;
        if self.cfg.completion == CompletionMode::Poll {
            assert!(self.polled > 0);
            self.polled -= 1;
            if self.polled == 0 {
                self.stats.poll_cpu_ns += now.since(self.poll_since).as_ns();
            }
        }
        let queue = &mut self.queues[usize::from(cmd.qid)];
        assert!(queue.in_flight > 0, "a completing command held a slot");
        queue.in_flight -= 1;
        if let Some(ext) = cmd.ext {
            self.ext.completed(ExtCompletion {
                id: ext.id,
                submitted: cmd.submitted,
                completed: now,
            });
        } else if let Some(zone) = cmd.zone {
            self.zone_completions
                .push(zone.completion(cmd.submitted, now));
        } else if let Some(m) = cmd.mgmt {
            self.mgmt_completions.push(m.completion(cmd.submitted, now));
        } else {
            self.completions.push(BlockCompletion {
                id: cmd.req.id,
                op: cmd.req.op,
                offset_bytes: cmd.req.offset_bytes,
                len_bytes: cmd.req.len_bytes,
                submitted: cmd.submitted,
                completed: now,
                result: cmd.result,
                data: cmd.data,
            });
        }
        // A slot freed: a request the block-device face held back may go now.
        match queue.held.pop_front() {
            Some(Held::Block(req, fua, placement)) => {
                let cmd = NvmeCommand {
                    qid: cmd.qid,
                    req,
                    target: EndpointId::HOST,
                    fua,
                    placement,
                };
                self.try_submit(cmd, q).expect("a slot just freed");
            }
            Some(Held::Zone(req)) => {
                let cmd = NvmeZoneCommand { qid: cmd.qid, req };
                self.try_submit_zone(cmd, q).expect("a slot just freed");
            }
            Some(Held::Mgmt(req)) => {
                let cmd = NvmeMgmtCommand { qid: cmd.qid, req };
                self.try_submit_mgmt(cmd, q).expect("a slot just freed");
            }
            None => {}
        }
    }

    /// Moves finished commands (completions the host has seen) into `out`.
    pub fn take_completions_into(&mut self, out: &mut Vec<BlockCompletion>) {
        out.append(&mut self.completions);
    }
}

/// The controller's own checks of a command's range (NVMe "LBA Out of Range", "Invalid
/// Field"), so that a bad request never starts a DMA of its claimed length.
fn check_range(req: &BlockRequest, capacity_bytes: u64) -> Result<(), IoError> {
    if req.op == BlockOp::Flush {
        return Ok(());
    }
    if req.len_bytes == 0
        || !req.offset_bytes.is_multiple_of(SECTOR_BYTES)
        || !req.len_bytes.is_multiple_of(SECTOR_BYTES)
    {
        return Err(IoError::Misaligned {
            offset_bytes: req.offset_bytes,
            len_bytes: req.len_bytes,
        });
    }
    if req
        .offset_bytes
        .checked_add(req.len_bytes)
        .is_none_or(|end| end > capacity_bytes)
    {
        return Err(IoError::OutOfRange {
            offset_bytes: req.offset_bytes,
            len_bytes: req.len_bytes,
            capacity_bytes,
        });
    }
    Ok(())
}

impl<D: BlockDevice> BlockDevice for Nvme<D> {
    type Event = NvmeEvent<D::Event>;

    fn capacity_bytes(&self) -> u64 {
        self.dev.capacity_bytes()
    }

    fn is_functional(&self) -> bool {
        self.dev.is_functional()
    }

    /// Submits on the queues in turn; a full queue holds the request until a slot frees.
    fn submit<S: Schedule<Self::Event>>(&mut self, req: BlockRequest, q: &mut S) {
        self.submit_on_next_queue(req, false, None, q);
    }

    fn submit_fua<S: Schedule<Self::Event>>(&mut self, req: BlockRequest, q: &mut S) {
        self.submit_on_next_queue(req, true, None, q);
    }

    /// The directive goes into the write's SQE (on submitter `stream`'s queue, or the next).
    fn submit_placed<S: Schedule<Self::Event>>(
        &mut self,
        stream: Option<u32>,
        req: BlockRequest,
        fua: bool,
        placement: PlacementDirective,
        q: &mut S,
    ) {
        match stream {
            Some(s) => {
                let qid = self.stream_queue(s);
                self.submit_on_queue(qid, req, fua, Some(placement), q);
            }
            None => self.submit_on_next_queue(req, fua, Some(placement), q),
        }
    }

    /// Submitter `stream` gets queue `stream` modulo the queue count: with at least as many
    /// queue pairs as submitters, each has its own.
    fn submit_from<S: Schedule<Self::Event>>(
        &mut self,
        stream: u32,
        req: BlockRequest,
        fua: bool,
        q: &mut S,
    ) {
        let qid = self.stream_queue(stream);
        self.submit_on_queue(qid, req, fua, None, q);
    }

    fn volatile_write_cache(&self) -> bool {
        Nvme::volatile_write_cache(self)
    }

    fn is_zoned(&self) -> bool {
        self.dev.is_zoned()
    }

    /// On the queues in turn, as `submit`; a namespace that is not zoned answers with
    /// Invalid Command Opcode, so the command is always taken.
    fn submit_zone<S: Schedule<Self::Event>>(
        &mut self,
        req: ZoneRequest,
        q: &mut S,
    ) -> Result<(), ZoneRequest> {
        let qid = self.next_qid;
        self.next_qid = (self.next_qid + 1) % self.cfg.queue_pairs;
        self.hold_or_submit(qid, Held::Zone(req), q);
        Ok(())
    }

    fn take_zone_completions(&mut self, out: &mut Vec<ZoneCompletion>) {
        out.append(&mut self.zone_completions);
    }

    /// On the queues in turn, as `submit`; a device without management commands gets
    /// Invalid Command Opcode, so the command is always taken.
    fn submit_mgmt<S: Schedule<Self::Event>>(
        &mut self,
        req: MgmtRequest,
        q: &mut S,
    ) -> Result<(), MgmtRequest> {
        let qid = self.next_qid;
        self.next_qid = (self.next_qid + 1) % self.cfg.queue_pairs;
        self.hold_or_submit(qid, Held::Mgmt(req), q);
        Ok(())
    }

    fn take_mgmt_completions(&mut self, out: &mut Vec<MgmtCompletion>) {
        out.append(&mut self.mgmt_completions);
    }

    fn handle<S: Schedule<Self::Event>>(&mut self, ev: Self::Event, q: &mut S, rng: &mut SimRng) {
        self.handle_event(ev, q, rng);
    }

    fn check_invariants(&self) {
        self.dev.check_invariants();
    }

    fn take_completions(&mut self, out: &mut Vec<BlockCompletion>) {
        self.take_completions_into(out);
    }

    fn outstanding(&self) -> u64 {
        let held: usize = self.queues.iter().map(|q| q.held.len()).sum();
        // A slot is live exactly when its tag is not free (a tag is taken with its command
        // and freed when the command's completion is seen).
        let live = self.cmds.len() - self.free_tags.len();
        debug_assert_eq!(live, self.cmds.iter().filter(|c| c.is_some()).count());
        (held
            + live
            + self.completions.len()
            + self.zone_completions.len()
            + self.mgmt_completions.len()) as u64
    }
}

impl<D: BlockDevice> Nvme<D> {
    /// Submitter `stream`'s queue: `stream` modulo the queue count.
    fn stream_queue(&self, stream: u32) -> u16 {
        u16::try_from(stream % u32::from(self.cfg.queue_pairs))
            .expect("a queue id below the queue count")
    }

    /// The block-device face: submits on the queues in turn.
    fn submit_on_next_queue<S: Schedule<NvmeEvent<D::Event>>>(
        &mut self,
        req: BlockRequest,
        fua: bool,
        placement: Option<PlacementDirective>,
        q: &mut S,
    ) {
        let qid = self.next_qid;
        self.next_qid = (self.next_qid + 1) % self.cfg.queue_pairs;
        self.submit_on_queue(qid, req, fua, placement, q);
    }

    /// Submits on queue `qid`; a full queue holds the request (with its FUA flag and
    /// placement directive) until a slot frees.
    fn submit_on_queue<S: Schedule<NvmeEvent<D::Event>>>(
        &mut self,
        qid: u16,
        req: BlockRequest,
        fua: bool,
        placement: Option<PlacementDirective>,
        q: &mut S,
    ) {
        self.hold_or_submit(qid, Held::Block(req, fua, placement), q);
    }

    /// Submits on queue `qid`, or holds the request until a slot frees.
    fn hold_or_submit<S: Schedule<NvmeEvent<D::Event>>>(
        &mut self,
        qid: u16,
        held: Held,
        q: &mut S,
    ) {
        assert!(qid < self.cfg.queue_pairs, "queue {qid} exists");
        let queue = &mut self.queues[usize::from(qid)];
        if queue.in_flight >= self.cfg.depth_max() {
            assert!(
                queue.held.len() < self.held_max,
                "the caller keeps more than {} requests outstanding",
                self.held_max
            );
            queue.held.push_back(held);
            return;
        }
        match held {
            Held::Block(req, fua, placement) => {
                let cmd = NvmeCommand {
                    qid,
                    req,
                    target: EndpointId::HOST,
                    fua,
                    placement,
                };
                self.try_submit(cmd, q).expect("the queue has room");
            }
            Held::Zone(req) => {
                let cmd = NvmeZoneCommand { qid, req };
                self.try_submit_zone(cmd, q).expect("the queue has room");
            }
            Held::Mgmt(req) => {
                let cmd = NvmeMgmtCommand { qid, req };
                self.try_submit_mgmt(cmd, q).expect("the queue has room");
            }
        }
    }
}

#[cfg(test)]
mod tests;
