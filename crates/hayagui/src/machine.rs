//! The machine both access paths run on: the SSD (the project's FTL device behind an NVMe
//! front end) and one instance of the shared file system. [`Machine`] is a `sim::Model`:
//! handed an event, it passes it to the drive or the file system and moves what they hand
//! each other; it never runs the loop. The program on the VE holds it in a [`Run`] (a
//! `sim::Driver`: the loop, the RNG, the trace hash) and makes blocking calls on it
//! ([`Calls`]): each submits its work and waits with `Sim::run_until`, under the watchdog.
//!
//! What differs between the paths is where the file system and the NVMe queues live, which
//! the caller says by the configs it hands in:
//! - **direct** (Hayagui): the queues are in the VE's HBM (peer memory reached across the
//!   VE's PCIe link), completions are polled by a VE core, the one queue holds 256 entries,
//!   and the file system — AccelFS's metadata engine — runs on the VE's scalar core. File
//!   data moves between AccelFS's chunk cache and the SSD as block commands the caller
//!   issues itself ([`Calls::block_io`]).
//! - **redirected** (the baseline): the host's NVMe driver (host DRAM, interrupts) and the
//!   host's file system with its page cache; every byte goes through [`Calls::fs_run`].
//!
//! The SSD is the FTL behind its DRAM write buffer (`crates/wcache`, the preset's
//! `[write_cache]`): a volatile cache, so the drive reports one (NVMe VWC) and the host's
//! file system sends FLUSH and FUA where ext4's journal does (`Fs::for_device`, barriers);
//! AccelFS sends its own FLUSH at the end of a sync (`Calls::flush`).
//!
//! Every block request — the file system's and the caller's — takes a slot of the one I/O
//! queue; requests beyond its depth wait in a FIFO here (bounded by the file system's
//! `io_depth_max` plus the caller's batch). The FTL is wrapped in [`Shadowed`] under the
//! write buffer, so a timing-fidelity SSD still answers reads with the bytes written (a file system and a
//! LevelDB above it must read back what they wrote); in functional fidelity the bytes are on
//! the simulated flash.

use nearflash_blockdev::shadow::Shadowed;
use nearflash_blockdev::{BlockCompletion, BlockDevice, BlockOp, BlockRequest, IoError};
use nearflash_flash::{FlashConfig, PageStore};
use nearflash_fs::{Caller, Fs, FsCompletion, FsConfig, FsError, FsOp, FsReply, FsStats, OpId};
use nearflash_ftl::{Device, Event, FtlConfig};
use nearflash_nvme::{EndpointId, NvmeCommand, NvmeConfig, NvmeError, NvmeEvent, NvmeStats};
use nearflash_sim::{
    Driver, EventQueue, Model, Progress, Schedule, Sim, SimRng, SimTime, Stall, TraceEvent,
};
use nearflash_ssd::{Layers, Ssd};
use nearflash_wcache::{WcEvent, WriteCache, WriteCacheConfig};
use std::collections::{BTreeMap, HashMap, VecDeque};
use thiserror::Error;

/// The SSD as either path reaches it: the shared assembly (`nearflash_ssd`, the FTL behind its
/// DRAM write buffer, behind NVMe), with the shadow between the buffer and the FTL.
pub type Drive = Ssd<Shadowed<Device>>;

/// An event of the FTL device, as the machine's loop carries it.
pub fn device_event(e: Event) -> Ev {
    Ev::Dev(NvmeEvent::Device(WcEvent::Device(e)))
}

/// The machine's events: the SSD's (NVMe front end, FTL, flash) and the file system's CPU
/// timer.
#[derive(Clone, Copy, Debug)]
pub enum Ev {
    Dev(NvmeEvent<WcEvent<Event>>),
    FsTimer,
}

impl TraceEvent for Ev {
    fn hash_word(&self) -> u64 {
        match self {
            Ev::Dev(e) => e.hash_word(),
            Ev::FsTimer => 0x4653_0000_0000_0001,
        }
    }
}

#[derive(Debug, Error)]
pub enum MachineError {
    #[error("SSD configuration: {0}")]
    DeviceConfig(#[from] nearflash_flash::ConfigError),
    #[error("NVMe front end: {0}")]
    Nvme(#[from] NvmeError),
    #[error("file system: {0}")]
    Fs(#[from] FsError),
    #[error("file-system configuration: {0}")]
    FsConfig(#[from] nearflash_fs::ConfigError),
    #[error("SSD: {0}")]
    Ssd(#[from] nearflash_ssd::SsdError),
    #[error("block I/O at {offset_bytes}+{len_bytes}: {source}")]
    Io {
        offset_bytes: u64,
        len_bytes: u64,
        #[source]
        source: IoError,
    },
    #[error("the machine stopped making progress: {0}")]
    Stall(#[from] Stall),
}

/// Who submitted a block request (its own id inside).
#[derive(Clone, Copy, Debug)]
enum Owner {
    Fs(u64),
    Caller(u64),
}

/// The SSD and the file system: the `sim::Model` both paths run on.
pub struct Machine {
    drive: Drive,
    fs: Fs,
    fs_timer: Option<SimTime>,
    fs_done: BTreeMap<OpId, FsCompletion>,
    owners: HashMap<u64, Owner>,
    caller_done: BTreeMap<u64, BlockCompletion>,
    /// Requests waiting for a queue slot, with their machine ids and whether each is a FUA
    /// write.
    held: VecDeque<(BlockRequest, bool)>,
    next_id: u64,
    /// The caller's own ids for its block commands.
    next_caller_id: u64,
    scratch: Vec<BlockCompletion>,
    /// Block commands the drive completed (the file system's and the caller's): progress
    /// for the watchdog even while one file-system operation (a sync of a large file on a
    /// slow drive) runs for longer than its limit.
    blocks_completed: u64,
}

impl Machine {
    /// The machine over `dev` (formatted, or recovered from an image), behind the write
    /// buffer of `write_cache` and an NVMe front end of `nvme`, with the file system of `fs`
    /// — not yet formatted or mounted ([`Calls::start`]).
    pub fn new(
        dev: Device,
        write_cache: &WriteCacheConfig,
        nvme: &NvmeConfig,
        fs: FsConfig,
    ) -> Result<Machine, MachineError> {
        let drive = nearflash_ssd::attach(Shadowed::new(dev), write_cache, nvme)?;
        assert!(
            drive.config().depth_max() > 0,
            "queue 0 takes at least one command, or held requests never start"
        );
        let fs = Fs::for_device(fs, &drive)?;
        assert!(
            nearflash_blockdev::BlockDevice::is_functional(&drive),
            "the shadow answers reads with the bytes written"
        );
        Ok(Machine {
            drive,
            fs,
            fs_timer: None,
            fs_done: BTreeMap::new(),
            owners: HashMap::new(),
            caller_done: BTreeMap::new(),
            held: VecDeque::new(),
            next_id: 0,
            next_caller_id: 0,
            scratch: Vec::new(),
            blocks_completed: 0,
        })
    }

    pub fn drive(&self) -> &Drive {
        &self.drive
    }

    pub fn device(&self) -> &Device {
        self.drive.inner().device()
    }

    /// The drive's DRAM write buffer.
    pub fn write_cache(&self) -> &WriteCache<Shadowed<Device>> {
        self.drive.buffer()
    }

    /// Gives the device up (to close an image: its store is inside).
    pub fn into_device(self) -> Device {
        assert!(
            self.owners.is_empty(),
            "the device is given up with {} block requests unanswered",
            self.owners.len()
        );
        self.drive.into_device().into_device().into_device()
    }

    pub fn nvme_stats(&self) -> NvmeStats {
        self.drive.stats()
    }

    pub fn fs_stats(&self) -> FsStats {
        self.fs.stats()
    }

    /// Submits one file-system operation at `q.now()`; its completion waits in `fs_done`.
    fn submit_fs(
        &mut self,
        q: &mut EventQueue<Ev>,
        caller: Caller,
        op: FsOp,
    ) -> Result<OpId, FsError> {
        let id = self.fs.submit(q.now(), caller, op)?;
        debug_assert!(
            !self.fs_done.contains_key(&id),
            "file-system operation {id:?} submitted while its id's completion waits"
        );
        self.pump(q);
        Ok(id)
    }

    /// Submits the caller's block commands at once (ids ignored); returns the caller's ids
    /// for them, in order. Their completions wait in `caller_done`.
    fn submit_blocks(&mut self, q: &mut EventQueue<Ev>, reqs: Vec<BlockRequest>) -> Vec<u64> {
        let n = reqs.len() as u64;
        let first = self.next_caller_id;
        self.next_caller_id += n;
        let ids: Vec<u64> = (first..first + n).collect();
        for (req, &id) in reqs.into_iter().zip(&ids) {
            self.submit_block(Owner::Caller(id), req, false, q);
        }
        self.pump(q);
        assert_eq!(ids.len() as u64, n, "one id per command");
        ids
    }

    fn submit_block(
        &mut self,
        owner: Owner,
        mut req: BlockRequest,
        fua: bool,
        q: &mut EventQueue<Ev>,
    ) {
        let id = self.next_id;
        self.next_id += 1;
        let reused = self.owners.insert(id, owner);
        assert!(reused.is_none(), "machine request id {id} in use twice");
        req.id = id;
        self.held.push_back((req, fua));
        self.start_held(q);
    }

    fn start_held(&mut self, q: &mut EventQueue<Ev>) {
        let depth_max = self.drive.config().depth_max();
        while self.drive.in_flight(0) < depth_max {
            let Some((req, fua)) = self.held.pop_front() else {
                break;
            };
            let cmd = NvmeCommand {
                qid: 0,
                req,
                target: EndpointId::HOST,
                fua,
                placement: None,
            };
            self.drive
                .try_submit(cmd, &mut q.map(Ev::Dev))
                .expect("queue 0 exists, its memory exists and it has room");
        }
        assert!(
            self.held.is_empty() || self.drive.in_flight(0) >= depth_max,
            "requests held back while the queue has room"
        );
    }

    /// Moves completions and requests between the drive, the file system and the caller
    /// until none has anything to hand over; then arms the file system's timer.
    fn pump(&mut self, q: &mut EventQueue<Ev>) {
        loop {
            let mut moved = false;
            self.drive.take_completions_into(&mut self.scratch);
            let mut done = std::mem::take(&mut self.scratch);
            for mut c in done.drain(..) {
                moved = true;
                self.blocks_completed += 1;
                match self
                    .owners
                    .remove(&c.id)
                    .expect("every completion has its submitter")
                {
                    Owner::Fs(id) => {
                        debug_assert!(
                            c.submitted <= c.completed && c.completed <= q.now(),
                            "block completion {id} is not from the future"
                        );
                        c.id = id;
                        self.fs.handle_block_completion(q.now(), c);
                    }
                    Owner::Caller(id) => {
                        c.id = id;
                        let again = self.caller_done.insert(id, c);
                        assert!(again.is_none(), "caller request {id} completed twice");
                    }
                }
            }
            self.scratch = done;
            while let Some(io) = self.fs.poll_io() {
                moved = true;
                self.submit_block(Owner::Fs(io.req.id), io.req, io.fua, q);
            }
            self.start_held(q);
            if !moved {
                break;
            }
        }
        if let Some(t) = self.fs.poll_timeout() {
            if self.fs_timer != Some(t) {
                q.schedule_at(t, Ev::FsTimer);
                self.fs_timer = Some(t);
            }
        }
        while let Some(c) = self.fs.poll_completion() {
            let id = c.id;
            let again = self.fs_done.insert(id, c);
            assert!(
                again.is_none(),
                "file-system operation {id:?} completed twice"
            );
        }
        assert!(
            self.owners.len() >= self.held.len(),
            "a held request without its submitter"
        );
    }
}

impl Model for Machine {
    type Event = Ev;

    fn handle(&mut self, ev: Ev, q: &mut EventQueue<Ev>, rng: &mut SimRng) {
        debug_assert!(
            self.fs_timer.is_none_or(|t| t >= q.now()),
            "the file system's armed timer lies in the past"
        );
        match ev {
            Ev::Dev(e) => self.drive.handle_event(e, &mut q.map(Ev::Dev), rng),
            Ev::FsTimer => {
                self.fs_timer = None;
                self.fs.handle_timeout(q.now());
            }
        }
        self.pump(q);
        debug_assert!(
            self.drive.in_flight(0) <= self.drive.config().depth_max(),
            "queue 0 holds more commands than its depth"
        );
    }

    /// The drive's invariants (the NVMe front end's, the FTL's below it) and the machine's
    /// own: a request is held only while queue 0 is full, and every held or in-flight request
    /// has its submitter.
    fn check_invariants(&self) {
        self.drive.check_invariants();
        let depth_max = self.drive.config().depth_max();
        let in_flight = self.drive.in_flight(0);
        assert!(in_flight <= depth_max, "queue 0 over its depth");
        assert!(
            self.held.is_empty() || in_flight == depth_max,
            "requests held back while queue 0 has room"
        );
        assert!(
            self.owners.len() >= self.held.len() + in_flight as usize,
            "a request in flight or held without its submitter"
        );
    }

    /// What the watchdog watches: a completed file-system operation or block command is
    /// progress.
    ///
    /// Story: on the 970 EVO with its SLC cache off, a genome run's `sync` of the reference
    /// (4 KiB writes, each a read-modify-write of a 256 KiB page group at TLC program
    /// latency) took longer than the watchdog's then 10 s while the drive completed thousands of
    /// block commands; only file-system operations counted, so the run was declared stalled.
    fn progress(&self) -> Progress {
        let s = self.fs.stats();
        debug_assert!(
            self.owners.len() >= self.held.len(),
            "a held request without its submitter"
        );
        Progress {
            completed: s.ops_completed + s.ops_failed + self.blocks_completed,
            outstanding: self.fs.outstanding() + self.owners.len() as u64,
        }
    }
}

/// How the machine's file system starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// mkfs on the (fresh) device.
    Format,
    /// Mount what the device holds (an image reopened after its FTL recovered).
    Mount,
}

/// The machine on its simulation loop, as the program on the VE drives it.
pub type Run = Driver<Machine>;

/// A fresh SSD of `flash`/`ftl` over `store` (no data kept: `NoStore`; functional: a memory
/// or image store) behind its write buffer, its NVMe front end, and the file system,
/// formatted.
pub fn format(
    flash: &FlashConfig,
    ftl: &FtlConfig,
    write_cache: &WriteCacheConfig,
    store: Box<dyn PageStore>,
    nvme: &NvmeConfig,
    fs: FsConfig,
    seed: u64,
) -> Result<Run, MachineError> {
    let mut run = Run::build(Sim::new(seed), |q| {
        let dev = Device::format(flash, ftl, store, &mut q.map(device_event))?;
        Machine::new(dev, write_cache, nvme, fs)
    })?;
    run.start(Start::Format)?;
    assert!(
        run.model().fs_done.is_empty() && run.model().caller_done.is_empty(),
        "formatting leaves no completion behind"
    );
    Ok(run)
}

/// The program's blocking calls on the machine: each submits its work, then waits for it
/// with `Sim::run_until` under a watchdog armed at the call (the limit of every driver,
/// `sim::STALL_LIMIT`), watching the machine's progress.
pub trait Calls {
    /// Starts the file system: mkfs and a sync on a fresh device, or a mount of what it holds.
    fn start(&mut self, start: Start) -> Result<(), MachineError>;

    /// Runs one file-system operation to completion.
    fn fs_run(&mut self, caller: Caller, op: FsOp) -> Result<FsReply, MachineError>;

    /// Issues `reqs` at once (the caller's own block commands, ids ignored) and waits for all
    /// of them; returns their completions in the order given. A failed command is an error
    /// naming its range.
    fn block_io(&mut self, reqs: Vec<BlockRequest>) -> Result<Vec<BlockCompletion>, MachineError>;

    /// A flush of the drive (NVMe FLUSH), waited for.
    fn flush(&mut self) -> Result<(), MachineError> {
        self.block_io(vec![BlockRequest {
            id: 0,
            op: BlockOp::Flush,
            offset_bytes: 0,
            len_bytes: 0,
            data: Vec::new(),
        }])
        .map(drop)
    }
}

impl Calls for Run {
    fn start(&mut self, start: Start) -> Result<(), MachineError> {
        let op = match start {
            Start::Format => FsOp::Format(nearflash_fs::FormatOptions::default()),
            Start::Mount => FsOp::Mount,
        };
        self.fs_run(Caller::ROOT, op)?;
        if start == Start::Format {
            self.fs_run(Caller::ROOT, FsOp::Sync)?;
        }
        debug_assert!(
            self.model().fs_done.is_empty(),
            "starting leaves no file-system completion behind"
        );
        Ok(())
    }

    fn fs_run(&mut self, caller: Caller, op: FsOp) -> Result<FsReply, MachineError> {
        let (m, q, _) = self.parts();
        let id = m.submit_fs(q, caller, op)?;
        self.run_until(|m| m.fs_done.contains_key(&id))?;
        let c = self
            .model_mut()
            .fs_done
            .remove(&id)
            .expect("run_until returns once the call is done");
        debug_assert_eq!(c.id, id, "the completion is the call's own");
        debug_assert!(
            c.submitted <= c.finished,
            "an operation finishes after it starts"
        );
        Ok(c.result?)
    }

    fn block_io(&mut self, reqs: Vec<BlockRequest>) -> Result<Vec<BlockCompletion>, MachineError> {
        let (m, q, _) = self.parts();
        let ids = m.submit_blocks(q, reqs);
        self.run_until(|m| ids.iter().all(|id| m.caller_done.contains_key(id)))?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let c = self
                .model_mut()
                .caller_done
                .remove(&id)
                .expect("run_until returns once every request is done");
            debug_assert_eq!(c.id, id, "the completion carries the caller's id back");
            if let Err(source) = &c.result {
                return Err(MachineError::Io {
                    offset_bytes: c.offset_bytes,
                    len_bytes: c.len_bytes,
                    source: source.clone(),
                });
            }
            out.push(c);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::HayaguiConfig;
    use crate::files::{fs_for, nvme_for, Access};
    use nearflash_flash::NoStore;

    /// A batch of block commands deeper than the one I/O queue, checked after every event:
    /// the machine holds what does not fit, in order, only while the queue is full, and
    /// every command in flight or held keeps its submitter until its completion.
    #[test]
    fn a_batch_deeper_than_the_queue_waits_in_order_with_invariants_after_every_event() {
        let doc: toml::Table = include_str!("../../../configs/test-min.toml")
            .parse()
            .unwrap();
        let flash: FlashConfig = doc["flash"].clone().try_into().unwrap();
        let ftl: FtlConfig = doc["ftl"].clone().try_into().unwrap();
        let cfg = HayaguiConfig::default();
        let nvme = nvme_for(Access::Direct, &cfg);
        let fs = fs_for(Access::Direct, &cfg);
        let wc = WriteCacheConfig::default();
        let mut run = format(&flash, &ftl, &wc, Box::new(NoStore), &nvme, fs, 3).unwrap();
        run.check_invariants_after_every_event(true);
        let depth_max = nvme.depth_max() as u64;
        // Writes at the top of the device, away from the freshly formatted file system's.
        let top = run.model().drive().device().capacity_bytes() - (depth_max + 40) * 4096;
        let reqs: Vec<BlockRequest> = (0..depth_max + 40)
            .map(|i| BlockRequest {
                id: 0,
                op: BlockOp::Write,
                offset_bytes: top + i * 4096,
                len_bytes: 4096,
                data: vec![i as u8; 4096],
            })
            .collect();
        let done = run.block_io(reqs).unwrap();
        assert_eq!(done.len() as u64, depth_max + 40);
        assert!(done.iter().all(|c| c.result.is_ok()));
        assert!(run.model().held.is_empty() && run.model().owners.is_empty());
        run.fs_run(Caller::ROOT, FsOp::Sync).unwrap();
    }
}
