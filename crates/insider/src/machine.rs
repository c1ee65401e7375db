//! The drive and its link as one event-driven machine over the backing storage: the ISC unit
//! and multiplexer (`isc`), the engines (`engine`), the drive's NVMe front end and its PCIe
//! link (`nearflash_nvme::Nvme`, whose one link the ISC unit's DMA crosses too), the open
//! virtual files (`stream`) and the ordinary firmware path.
//!
//! Read path of a virtual file: the ISC unit issues C-sized requests while the program has
//! credit → storage → SIF → dispatcher → the slot's input FIFO → the slot (engine time) → its
//! output FIFO → DMA into the host-side buffer while the buffer has room (per-file flow
//! control) → `vread`. Each stage is a queue with a bound, so a slow reader backs up into
//! the output FIFO, the slot stops, the input FIFO fills, and credits stop coming back.
//!
//! Firmware path (ordinary host requests, through the drive's NVMe front end, the shared
//! `Nvme` component with the firmware path as its block device, `driveport::DrivePort`):
//! doorbell and SQE fetch → the controller (one command at a time) → storage → SIF (slot 0)
//! → pass-through slot → the front end's DMA to host memory → CQE + MSI-X. Writes: doorbell,
//! fetch, controller → the front end's DMA to the drive → storage → CQE + MSI-X.
//!
//! The host's ordinary file I/O (`pread`, `O_DIRECT` `pwrite`) is the shared host model
//! (`nearflash_host::Host`: system calls, the storage stack per request and per page, the
//! bounded page cache with read-ahead, the copies, on the host's cores), one component of
//! this machine: its events are `MachineEvent::Host`, and its block device is the firmware
//! path above (`hostport::FirmwarePort`).
//!
//! The drive is a `sim::Model` ([`State`]); [`Machine`] holds it on its `sim::Driver`, whose
//! only wait is `Sim::run_until` under the one watchdog, kept across waits (watching the
//! storage requests and the NVMe commands: a drive whose work stops completing is a `Stall`,
//! even while the runtime's timers keep the loop turning). The runtime's deadlines — its calls'
//! sleeps and CPU time, the file system's CPU timer — are events on the same queue
//! (`MachineEvent::Timer`, `wake`), and the drive notes what each event changed (`wake`) so
//! the runtime resumes only the calls it concerns.
//!
//! Deterministic: one event queue, ties in scheduling order, one seeded RNG, ordered maps.
//! Timing fidelity moves byte counts only; functional fidelity moves the bytes and runs the
//! programs on them, flit by flit.

use crate::backing::{Backing, BackingStats};
use crate::config::InsiderConfig;
use crate::driveport::{DriveDone, DrivePort};
use crate::error::InsiderError;
use crate::hostport::{FirmwarePort, PortEvent};
use crate::isc::{Mux, Origin, SifEntry, Unit};
use crate::stream::{Chunk, Direction, Stream};
use nearflash_blockdev::{BlockDevice, IoError};
use nearflash_ftl::{BlockCompletion, BlockOp, BlockRequest, Event, SECTOR_BYTES};
use nearflash_host::{
    Extent as HostExtent, FileId, Host, HostCompletion, HostConfig, HostError, HostEvent, OpFlags,
    OpId as HostOpId,
};
use nearflash_hw::link::Direction as Wire;
use nearflash_nvme::{Nvme, NvmeEvent};
use nearflash_sim::{Driver, EventQueue, Model, Progress, Schedule, Sim, SimRng, SimTime, Stall};
use std::collections::BTreeMap;

mod event;
mod host_side;
mod isc_unit;
mod runtime_api;
#[cfg(test)]
mod tests;
mod wake;

pub use event::{Ev, MachineEvent};
pub(crate) use wake::Wake;

/// An ordinary (non-ISC) host request: one NVMe command of the whole sectors it covers.
#[derive(Debug)]
pub struct FwRequest {
    pub op: BlockOp,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    /// The host's handler saw the completion.
    pub done: Option<Result<Vec<u8>, IoError>>,
    /// The shared host model's block request this is (its completion goes to the host).
    host: Option<u64>,
    /// When the host handed it to the drive.
    submitted: SimTime,
}

/// What a storage write was for.
#[derive(Clone, Copy, Debug)]
enum WritePurpose {
    /// The NVMe command of this tag (the front end's id of it in the drive).
    Firmware(u64),
    /// Untimed preconditioning: firmware request `0`, outside the front end.
    Preload(u64),
    Stream(u32),
}

type Q = EventQueue<MachineEvent>;

/// The drive on the one simulation loop: `run` holds the drive's state (a `sim::Model`) on
/// its loop (the clock, the RNG and the trace hash).
pub struct Machine {
    run: Driver<State>,
}

/// The drive as a `sim::Model`.
pub(crate) struct State {
    cfg: InsiderConfig,
    backing: Backing,
    backing_stats: BackingStats,
    /// The multiplexer and its Slots Index FIFO.
    mux: Mux,
    /// The ISC unit's compute side: the open virtual files (streams), their credits, input
    /// and output FIFOs, and the slots or cores.
    unit: Unit,
    /// The NVMe front end of ordinary host requests (the shared component: queue, doorbells,
    /// SQE fetch, the controller, data DMA, CQE and MSI-X), the firmware path its block
    /// device. Its link is the host–drive PCIe link (the one link model): `Up` carries
    /// virtual files' output, firmware reads' data and completions to the host, `Down`
    /// virtual writes, firmware writes' data, doorbells and SQEs.
    nvme: Nvme<DrivePort>,
    /// Commands the front end completed, until the machine hands them on.
    nvme_done: Vec<BlockCompletion>,
    next_req: u64,
    writes: BTreeMap<u64, WritePurpose>,
    fw: BTreeMap<u64, FwRequest>,
    next_fw: u64,
    /// Firmware requests completed so far (a waiter scans its requests only when it grew).
    fw_completed: u64,
    completions: Vec<BlockCompletion>,
    /// The shared host model over the firmware path, and its operations that ended.
    host: Host<FirmwarePort>,
    host_done: Vec<HostCompletion>,
    /// Storage requests submitted and completed so far.
    backing_submitted: u64,
    backing_completed: u64,
    /// NVMe commands submitted and completed (seen by the host's handler) so far.
    commands_submitted: u64,
    commands_completed: u64,
    /// What the runtime's loop waits for: deadlines and what each event changed.
    pub(crate) wake: Wake,
}

/// Stream `fd` for a change, noted for the runtime (its calls waiting on the stream may move).
fn touch<'a>(wake: &mut Wake, unit: &'a mut Unit, fd: u32) -> Option<&'a mut Stream> {
    wake.touched.insert(fd);
    unit.stream_mut(fd)
}

/// Aligns `[off, off+len)` out to whole sectors: (aligned offset, aligned length, skip).
fn sector_span(off: u64, len: u64) -> (u64, u64, u64) {
    let a = off / SECTOR_BYTES * SECTOR_BYTES;
    let b = (off + len).div_ceil(SECTOR_BYTES) * SECTOR_BYTES;
    assert!(
        a <= off && off + len <= b,
        "the span covers [{off}, {off} + {len})"
    );
    (a, b - a, off - a)
}

impl Model for State {
    type Event = MachineEvent;

    fn handle(&mut self, ev: MachineEvent, q: &mut Q, rng: &mut SimRng) {
        let timer = matches!(ev, MachineEvent::Timer);
        match ev {
            MachineEvent::Timer => {}
            MachineEvent::Insider(e) => self.on_event(q, e),
            MachineEvent::Dev(e) => self.backing.handle(e, &mut q.map(MachineEvent::Dev), rng),
            MachineEvent::Nvme(e) => {
                self.nvme
                    .handle_event(e, &mut q.map(MachineEvent::Nvme), rng);
                self.nvme_io(q);
            }
            MachineEvent::Host(e) => {
                self.host
                    .handle_event(e, &mut q.map(MachineEvent::Host), rng);
                self.host_io(q);
            }
        }
        self.backing.take_completions(&mut self.completions);
        for c in std::mem::take(&mut self.completions) {
            self.on_backing_done(q, c);
        }
        assert!(
            self.backing_completed <= self.backing_submitted,
            "a storage request completes once"
        );
        self.wake.after_event(timer, q.now(), q.pending_now());
    }

    /// The storage requests and the NVMe commands: one of either completing is progress (a
    /// command wedged in the front end, outside the storage, is outstanding too).
    fn progress(&self) -> Progress {
        assert!(self.backing_completed <= self.backing_submitted);
        assert!(self.commands_completed <= self.commands_submitted);
        Progress {
            completed: self.backing_completed + self.commands_completed,
            outstanding: (self.backing_submitted - self.backing_completed)
                + (self.commands_submitted - self.commands_completed),
        }
    }

    /// The drive's counts and buffers agree with what they count; the host's and the
    /// storage's invariants (the FTL's walk its tables: small drives only).
    fn check_invariants(&self) {
        assert!(self.backing_completed <= self.backing_submitted);
        assert!(
            self.commands_submitted - self.commands_completed <= self.nvme.outstanding(),
            "a command not yet completed is held by the front end"
        );
        assert!(
            self.fw_completed <= self.next_fw,
            "completions of requests made"
        );
        assert!(self.fw.keys().all(|&id| id < self.next_fw));
        assert!(
            self.nvme_done.is_empty(),
            "the front end's completions are handed on at the event that ends them"
        );
        let firmware_writes = self
            .writes
            .values()
            .filter(|w| matches!(w, WritePurpose::Firmware(_)))
            .count();
        assert!(
            firmware_writes as u64 <= self.nvme.outstanding(),
            "a firmware write in the storage is a command in the front end"
        );
        for (fd, s) in self.unit.streams() {
            assert_eq!(
                s.h2d_inflight_bytes,
                s.h2d.iter().map(|c| c.bytes).sum::<u64>(),
                "stream {fd}: bytes crossing PCIe towards the FIFO"
            );
            assert!(
                s.issued_in_bytes <= s.total_in_bytes,
                "stream {fd} over-issued"
            );
        }
        let stream_writes = self
            .writes
            .values()
            .filter(|w| matches!(w, WritePurpose::Stream(_)))
            .count();
        let open_writes: u64 = self
            .unit
            .streams()
            .map(|(_, s)| u64::from(s.writes_inflight))
            .sum();
        assert!(
            open_writes <= stream_writes as u64,
            "a stream's writes in flight are storage writes of ours"
        );
        assert!(
            self.wake.touched.iter().all(|fd| *fd >= 3),
            "a stream's descriptor follows stdin, stdout and stderr"
        );
        self.unit.check_invariants();
        self.wake.check_invariants();
        self.host.check_invariants();
        self.nvme.check_invariants();
        self.backing.check_invariants();
    }
}

impl Machine {
    /// The drive over `backing` and the host reaching it, on `sim` (whose queue may already
    /// hold the backing device's events from formatting).
    /// The drive of `cfg` with the host of `host`, its loop seeded with `seed`; `backing`
    /// makes the storage on the loop's queue (an FTL formats itself by scheduling events).
    pub fn new(
        cfg: &InsiderConfig,
        host: &HostConfig,
        seed: u64,
        backing: impl FnOnce(&mut Q) -> Result<Backing, InsiderError>,
    ) -> Result<Machine, InsiderError> {
        // The runtime's waits are many and short (a call's timer can keep turning the loop
        // while the drive's work is stuck): one watchdog across them all.
        let run = Driver::build(Sim::new(seed), |q| State::new(cfg, host, backing(q)?))?
            .watching_across_waits();
        Ok(Machine { run })
    }

    fn st(&self) -> &State {
        self.run.model()
    }

    fn st_mut(&mut self) -> &mut State {
        self.run.model_mut()
    }

    /// The drive's state and the queue, for a request of the runtime.
    fn parts(&mut self) -> (&mut State, &mut Q) {
        let (st, q, _) = self.run.parts();
        (st, q)
    }

    pub fn now(&self) -> SimTime {
        self.run.now()
    }

    pub fn config(&self) -> &InsiderConfig {
        &self.st().cfg
    }

    pub fn is_functional(&self) -> bool {
        self.st().backing.is_functional()
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.st().backing.capacity_bytes()
    }

    pub fn events(&self) -> u64 {
        self.run.sim().events()
    }

    /// Checks the drive's invariants after every event from now on (tests; the FTL's checks
    /// walk its tables, so small drives only).
    pub fn check_invariants_after_every_event(&mut self, on: bool) {
        self.run.check_invariants_after_every_event(on);
    }

    pub fn trace_hash(&self) -> String {
        self.run.sim().trace_hash().hex()
    }

    pub fn backing_stats(&self) -> &BackingStats {
        &self.st().backing_stats
    }

    /// Requests the ISC unit and the firmware forwarded through the multiplexer.
    pub fn mux_requests(&self) -> (u64, u64) {
        (self.st().mux.isc_requests, self.st().mux.firmware_requests)
    }

    pub fn engine_busy_ns(&self) -> Vec<u64> {
        self.st().unit.engines().busy_ns()
    }

    /// Busy time of the link's two directions: (drive to host, host to drive).
    pub fn pcie_busy_ns(&self) -> (u64, u64) {
        let link = self.st().nvme.link();
        (link.stats(Wire::Up).busy_ns, link.stats(Wire::Down).busy_ns)
    }

    // ---- the loop ---------------------------------------------------------------------------

    /// Anything is left to happen (an event is pending).
    pub fn has_events(&self) -> bool {
        self.run.sim().next_deadline().is_some()
    }

    /// Runs the loop until a turn (a drive event, or a deadline's tick with nothing else due
    /// at its instant) after which `work` holds: `Sim::run_until` under the one watchdog kept
    /// across every wait (`Driver::watching_across_waits`), so the queue emptying first, or
    /// storage requests or NVMe commands that stop completing for the stall limit — in one
    /// wait or over many short ones — is the one `Stall`.
    pub(crate) fn wait(&mut self, mut work: impl FnMut(&State) -> bool) -> Result<(), Stall> {
        self.st_mut().wake.begin_wait();
        self.run.run_until(|st| st.wake.turned && work(st))
    }

    /// What the drive noted for the runtime (deadlines, changed streams, ended host
    /// operations).
    pub(crate) fn wake(&self) -> &Wake {
        &self.st().wake
    }

    pub(crate) fn wake_mut(&mut self) -> &mut Wake {
        &mut self.st_mut().wake
    }

    /// Call `op` waits until `at`: a timer on the queue.
    pub(crate) fn arm_timer(&mut self, at: SimTime, op: u64) {
        let (st, q) = self.parts();
        st.wake.arm(q, at, op);
    }

    /// The file system's CPU timer is now `at`: a timer on the queue.
    pub(crate) fn set_fs_timer(&mut self, at: Option<SimTime>) {
        let (st, q) = self.parts();
        st.wake.set_fs_timer(q, at);
    }

    /// Every drive event due by `t` has happened.
    pub(crate) fn reached(&self, t: SimTime) -> bool {
        self.wake()
            .reached(t, self.run.now(), self.run.sim().pending_now())
    }

    /// The calls whose deadlines are reached, into `out`.
    pub(crate) fn reached_calls(&self, out: &mut Vec<u64>) {
        let (now, pending) = (self.run.now(), self.run.sim().pending_now());
        self.wake().reached_calls(now, pending, out);
    }

    // ---- the runtime's interface -----------------------------------------------------------

    /// Opens a stream: a read starts issuing at once when pipelined (§3.5 pre-issue).
    pub fn open(&mut self, s: Stream) {
        let (st, q) = self.parts();
        st.open(q, s);
    }

    pub fn stream(&self, fd: u32) -> Option<&Stream> {
        self.st().unit.stream(fd)
    }

    pub fn stream_mut(&mut self, fd: u32) -> Option<&mut Stream> {
        let st = self.st_mut();
        st.wake.touched.insert(fd);
        st.unit.stream_mut(fd)
    }

    /// Closes a stream, dropping whatever is in flight (late data is discarded).
    pub fn close(&mut self, fd: u32) -> Option<Stream> {
        let st = self.st_mut();
        st.wake.touched.insert(fd);
        st.unit.close(fd)
    }

    /// The program may start (its parameters are in, or the host began reading/writing).
    pub fn arm(&mut self, fd: u32) {
        let (st, q) = self.parts();
        st.arm(q, fd);
    }

    /// Non-pipelined: a vread waits for the host buffer to hold `bytes`.
    pub fn want(&mut self, fd: u32, bytes: u64) {
        let (st, q) = self.parts();
        st.want(q, fd, bytes);
    }

    /// Takes up to `max` bytes from the host-side buffer.
    pub fn take(&mut self, fd: u32, max: u64) -> (u64, Vec<u8>) {
        let (st, q) = self.parts();
        st.take(q, fd, max)
    }

    /// Virtual write: sends `bytes` (functional: `data`) over PCIe to the program's FIFO.
    pub fn push_write(&mut self, fd: u32, bytes: u64, data: Vec<u8>, last: bool) {
        let (st, q) = self.parts();
        st.push_write(q, fd, bytes, data, last);
    }

    /// An ordinary request of the drive's file system, handed to the drive now.
    pub fn firmware(
        &mut self,
        op: BlockOp,
        offset_bytes: u64,
        len_bytes: u64,
        data: Vec<u8>,
    ) -> u64 {
        let (st, q) = self.parts();
        st.firmware(q, op, offset_bytes, len_bytes, data)
    }

    /// The result of firmware request `id` once done (removing it).
    pub fn firmware_done(&mut self, id: u64) -> Option<Result<Vec<u8>, IoError>> {
        let fw = &mut self.st_mut().fw;
        if fw.get(&id)?.done.is_some() {
            return fw.remove(&id).and_then(|r| r.done);
        }
        None
    }

    /// Commands submitted to the NVMe front end (ordinary host requests).
    pub fn nvme_commands(&self) -> u64 {
        self.st().nvme.stats().commands
    }

    /// The NVMe front end's counters (doorbells, SQE fetches, CQEs, interrupts, controller
    /// busy time).
    pub fn nvme_stats(&self) -> nearflash_nvme::NvmeStats {
        self.st().nvme.stats()
    }

    /// Firmware requests completed so far: while it stays the same, no request turned done.
    pub fn firmware_completed(&self) -> u64 {
        self.st().fw_completed
    }

    pub fn firmware_is_done(&self, id: u64) -> bool {
        self.st().firmware_is_done(id)
    }

    /// Untimed preconditioning: writes `data` (or, in timing fidelity, `len` bytes) straight
    /// into the storage, as if it had been written long before the run.
    pub fn preload(&mut self, offset: u64, len: u64, data: Vec<u8>) -> Result<(), InsiderError> {
        let (a, alen, skip) = sector_span(offset, len);
        assert_eq!(skip, 0, "preloaded extents start on sector boundaries");
        let mut data = data;
        if !data.is_empty() {
            data.resize(alen as usize, 0);
        }
        let (st, q) = self.parts();
        let fw = st.next_fw;
        st.next_fw += 1;
        st.fw.insert(
            fw,
            FwRequest {
                op: BlockOp::Write,
                offset_bytes: a,
                len_bytes: alen,
                done: None,
                host: None,
                submitted: q.now(),
            },
        );
        let id = st.submit_backing(q, BlockOp::Write, a, alen, data);
        st.writes.insert(id, WritePurpose::Preload(fw));
        self.run.run_until(|st| st.firmware_is_done(fw))?;
        match self.firmware_done(fw) {
            Some(Ok(_)) => Ok(()),
            Some(Err(e)) => Err(InsiderError::FirmwareWrite(e)),
            None => unreachable!("waited for it"),
        }
    }
}

impl State {
    fn new(
        cfg: &InsiderConfig,
        host: &HostConfig,
        backing: Backing,
    ) -> Result<State, InsiderError> {
        let port = FirmwarePort::new(backing.capacity_bytes());
        let host = Host::new(host.clone(), port)?;
        let nvme_cfg = cfg.nvme();
        let slots = u64::from(nvme_cfg.queue_pairs) * u64::from(nvme_cfg.depth_max());
        let nvme = Nvme::new(nvme_cfg, DrivePort::new(backing.capacity_bytes(), slots))?;
        Ok(State {
            cfg: cfg.clone(),
            backing,
            backing_stats: BackingStats::default(),
            mux: Mux::default(),
            unit: Unit::new(cfg),
            nvme,
            nvme_done: Vec::new(),
            next_req: 0,
            writes: BTreeMap::new(),
            fw: BTreeMap::new(),
            next_fw: 0,
            fw_completed: 0,
            completions: Vec::new(),
            host,
            host_done: Vec::new(),
            backing_submitted: 0,
            backing_completed: 0,
            commands_submitted: 0,
            commands_completed: 0,
            wake: Wake::default(),
        })
    }

    /// Firmware requests completed so far.
    pub(crate) fn fw_completed(&self) -> u64 {
        self.fw_completed
    }

    pub(crate) fn firmware_is_done(&self, id: u64) -> bool {
        self.fw.get(&id).is_some_and(|r| r.done.is_some())
    }

    fn schedule(&mut self, q: &mut Q, at: SimTime, ev: Ev) {
        q.schedule_at(at, MachineEvent::Insider(ev));
    }

    /// Puts `bytes` on the link in direction `dir` now; when they arrive at the far end.
    fn dma(&mut self, now: SimTime, dir: Wire, bytes: u64) -> SimTime {
        let t = self.nvme.link_mut().transfer(now, dir, bytes);
        debug_assert!(t.arrives >= now, "a DMA arrives after it starts");
        t.arrives
    }

    fn submit_backing(
        &mut self,
        q: &mut Q,
        op: BlockOp,
        offset: u64,
        len: u64,
        data: Vec<u8>,
    ) -> u64 {
        assert!(
            len > 0 && offset.is_multiple_of(SECTOR_BYTES) && len.is_multiple_of(SECTOR_BYTES),
            "storage requests are whole sectors: {len} bytes at {offset}"
        );
        assert!(
            offset + len <= self.backing.capacity_bytes(),
            "a storage request within the drive: {len} bytes at {offset}"
        );
        let id = self.next_req;
        self.next_req += 1;
        self.backing_submitted += 1;
        let now = q.now();
        let req = BlockRequest {
            id,
            op,
            offset_bytes: offset,
            len_bytes: len,
            data,
        };
        if let Some(at) = self.backing.submit(
            req,
            now,
            &mut q.map(MachineEvent::Dev),
            &mut self.backing_stats,
        ) {
            self.schedule(q, at, Ev::BackingDone(id));
        }
        id
    }

    fn on_event(&mut self, q: &mut Q, ev: Ev) {
        match ev {
            Ev::BackingDone(id) => {
                let c = self.backing.finish(id);
                self.on_backing_done(q, c);
            }
            Ev::SlotDone(fd) => self.slot_done(q, fd),
            Ev::DmaDone(fd) => self.dma_done(q, fd),
            Ev::H2dDone(fd) => {
                if let Some(s) = touch(&mut self.wake, &mut self.unit, fd) {
                    let c = s.h2d.pop_front().expect("a chunk in transit");
                    assert!(
                        s.h2d_inflight_bytes >= c.bytes,
                        "stream {fd}: bytes in transit"
                    );
                    s.h2d_inflight_bytes -= c.bytes;
                    s.fifo.push_back(c);
                    self.try_slot(q, fd);
                }
            }
        }
    }

    fn on_backing_done(&mut self, q: &mut Q, c: BlockCompletion) {
        self.backing_completed += 1;
        match c.op {
            BlockOp::Read => {
                self.mux.complete(c);
                self.dispatch(q);
            }
            _ => {
                let purpose = self.writes.remove(&c.id).expect("a write of ours");
                match purpose {
                    WritePurpose::Firmware(tag) => {
                        self.drive_done(q, tag, q.now(), c.result.map(|()| Vec::new()));
                    }
                    WritePurpose::Preload(id) => {
                        let r = self.fw.get_mut(&id).expect("a preload request");
                        assert!(r.done.is_none(), "a preload completes once");
                        r.done = Some(c.result.map(|()| Vec::new()));
                        self.fw_completed += 1;
                    }
                    WritePurpose::Stream(fd) => {
                        if let Some(s) = touch(&mut self.wake, &mut self.unit, fd) {
                            assert!(s.writes_inflight > 0, "stream {fd}: a write in flight");
                            s.writes_inflight -= 1;
                            if let Err(e) = c.result {
                                s.fault.get_or_insert(e.to_string());
                            }
                        }
                    }
                }
            }
        }
    }

    /// The dispatcher: pops SIF entries whose data is back, in order.
    fn dispatch(&mut self, q: &mut Q) {
        let now = q.now();
        while let Some(e) = self.mux.pop_ready() {
            let c = e.done.expect("popped only when done");
            assert!(
                c.data.is_empty() || e.skip_bytes + e.take_bytes <= c.data.len() as u64,
                "the bytes taken lie in the request's data"
            );
            let data = if c.data.is_empty() {
                Vec::new()
            } else {
                c.data[e.skip_bytes as usize..(e.skip_bytes + e.take_bytes) as usize].to_vec()
            };
            match e.origin {
                Origin::Firmware(tag) => {
                    if let Err(err) = c.result {
                        self.drive_done(q, tag, now, Err(err));
                        continue;
                    }
                    let at = self.unit.pass_through(e.take_bytes, now);
                    self.drive_done(q, tag, at, Ok(data));
                }
                Origin::Isc(fd) => {
                    self.wake.touched.insert(fd);
                    let read = c.result.map(|()| data).map_err(|err| err.to_string());
                    if self.unit.arrived(fd, e.take_bytes, read) {
                        self.try_slot(q, fd);
                    }
                }
            }
        }
    }
}
