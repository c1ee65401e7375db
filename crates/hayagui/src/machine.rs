//! The machine both access paths run on: the SSD (the project's FTL device behind an NVMe
//! front end) and one instance of the shared file system, on one `sim::Sim` loop.
//!
//! What differs between the paths is where the file system and the NVMe queues live, which
//! the caller says by the configs it hands in:
//! - **direct** (Hayagui): the queues are in the VE's HBM (peer memory reached across the
//!   VE's PCIe link), completions are polled by a VE core, the one queue holds 256 entries,
//!   and the file system — AccelFS's metadata engine — runs on the VE's scalar core. File
//!   data moves between AccelFS's chunk cache and the SSD as block commands the caller
//!   issues itself ([`Machine::block_io`]).
//! - **redirected** (the baseline): the host's NVMe driver (host DRAM, interrupts) and the
//!   host's file system with its page cache; every byte goes through [`Machine::fs_run`].
//!
//! Every block request — the file system's and the caller's — takes a slot of the one I/O
//! queue; requests beyond its depth wait in a FIFO here (bounded by the file system's
//! `io_depth_max` plus the caller's batch). The device is wrapped in [`Shadowed`], so a
//! timing-fidelity SSD still answers reads with the bytes written (a file system and a
//! LevelDB above it must read back what they wrote); in functional fidelity the bytes are on
//! the simulated flash.

use nearflash_blockdev::shadow::Shadowed;
use nearflash_blockdev::{BlockCompletion, BlockDevice, BlockOp, BlockRequest, IoError};
use nearflash_flash::{FlashConfig, PageStore};
use nearflash_fs::{Caller, Fs, FsCompletion, FsConfig, FsError, FsOp, FsReply, FsStats, OpId};
use nearflash_ftl::{Device, Event, FtlConfig};
use nearflash_nvme::{EndpointId, Nvme, NvmeCommand, NvmeConfig, NvmeError, NvmeEvent, NvmeStats};
use nearflash_sim::{
    EventQueue, Model, Progress, Schedule, Sim, SimDuration, SimRng, SimTime, Stall, TraceEvent,
    Watchdog,
};
use std::collections::{BTreeMap, HashMap, VecDeque};
use thiserror::Error;

/// The SSD as either path reaches it.
pub type Drive = Nvme<Shadowed<Device>>;

/// The machine's events: the SSD's (NVMe front end, FTL, flash) and the file system's CPU
/// timer.
#[derive(Clone, Copy, Debug)]
pub enum Ev {
    Dev(NvmeEvent<Event>),
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

/// Simulated time an operation may go without any completion before it is declared stuck.
pub const WATCHDOG_LIMIT: SimDuration = SimDuration(10_000_000_000);

/// Who submitted a block request (its own id inside).
#[derive(Clone, Copy, Debug)]
enum Owner {
    Fs(u64),
    Caller(u64),
}

/// The machine's state: the `sim::Model`.
pub struct State {
    drive: Drive,
    fs: Fs,
    fs_timer: Option<SimTime>,
    fs_done: BTreeMap<OpId, FsCompletion>,
    owners: HashMap<u64, Owner>,
    caller_done: BTreeMap<u64, BlockCompletion>,
    /// Requests waiting for a queue slot, with their machine ids.
    held: VecDeque<BlockRequest>,
    next_id: u64,
    /// The caller's own ids for its block commands.
    next_caller_id: u64,
    scratch: Vec<BlockCompletion>,
    /// Block commands the drive completed (the file system's and the caller's): progress
    /// for the watchdog even while one file-system operation (a sync of a large file on a
    /// slow drive) runs for longer than its limit.
    blocks_completed: u64,
}

impl State {
    fn submit_block(&mut self, owner: Owner, mut req: BlockRequest, q: &mut EventQueue<Ev>) {
        let id = self.next_id;
        self.next_id += 1;
        let reused = self.owners.insert(id, owner);
        assert!(reused.is_none(), "machine request id {id} in use twice");
        req.id = id;
        self.held.push_back(req);
        self.start_held(q);
    }

    fn start_held(&mut self, q: &mut EventQueue<Ev>) {
        let depth_max = self.drive.config().depth_max();
        while self.drive.in_flight(0) < depth_max {
            let Some(req) = self.held.pop_front() else {
                break;
            };
            let cmd = NvmeCommand {
                qid: 0,
                req,
                target: EndpointId::HOST,
                fua: false,
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
            while let Some(r) = self.fs.poll_block_request() {
                moved = true;
                self.submit_block(Owner::Fs(r.id), r, q);
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

    /// What the watchdog watches: a completed file-system operation or block command is
    /// progress.
    ///
    /// Story: on the 970 EVO with its SLC cache off, a genome run's `sync` of the reference
    /// (4 KiB writes, each a read-modify-write of a 256 KiB page group at TLC program
    /// latency) took longer than the watchdog's 10 s while the drive completed thousands of
    /// block commands; only file-system operations counted, so the run was declared stalled.
    fn progress(&self) -> Progress {
        let s = self.fs.stats();
        Progress {
            completed: s.ops_completed + s.ops_failed + self.blocks_completed,
            outstanding: self.fs.outstanding() + self.owners.len() as u64,
        }
    }
}

impl Model for State {
    type Event = Ev;

    fn handle(&mut self, ev: Ev, q: &mut EventQueue<Ev>, rng: &mut SimRng) {
        match ev {
            Ev::Dev(e) => self.drive.handle_event(e, &mut q.map(Ev::Dev), rng),
            Ev::FsTimer => {
                self.fs_timer = None;
                self.fs.handle_timeout(q.now());
            }
        }
        self.pump(q);
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

/// The SSD and the file system on their simulation loop: a synchronous driver for the
/// program running on the VE (each call runs the loop until its work is done).
pub struct Machine {
    sim: Sim<Ev>,
    st: State,
}

fn dev_event(e: Event) -> Ev {
    Ev::Dev(NvmeEvent::Device(e))
}

impl Machine {
    /// A fresh SSD of `flash`/`ftl` over `store` (no data kept: `NoStore`; functional: a
    /// memory or image store), its NVMe front end, and the file system, formatted.
    pub fn format(
        flash: &FlashConfig,
        ftl: &FtlConfig,
        store: Box<dyn PageStore>,
        nvme: &NvmeConfig,
        fs: FsConfig,
        seed: u64,
    ) -> Result<Machine, MachineError> {
        let mut sim = Sim::new(seed);
        let dev = Device::format(flash, ftl, store, &mut sim.queue().map(dev_event))?;
        Self::over(sim, dev, nvme, fs, Start::Format)
    }

    /// The machine over a device already built on `sim` (e.g. recovered from an image).
    pub fn over(
        sim: Sim<Ev>,
        dev: Device,
        nvme: &NvmeConfig,
        fs: FsConfig,
        start: Start,
    ) -> Result<Machine, MachineError> {
        let drive = Nvme::new(nvme.clone(), Shadowed::new(dev))?;
        let fs = Fs::new(fs, drive.device().capacity_bytes(), true)?;
        let mut m = Machine {
            sim,
            st: State {
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
            },
        };
        let op = match start {
            Start::Format => FsOp::Format(nearflash_fs::FormatOptions::default()),
            Start::Mount => FsOp::Mount,
        };
        m.fs_run(Caller::ROOT, op)?;
        if start == Start::Format {
            m.fs_run(Caller::ROOT, FsOp::Sync)?;
        }
        Ok(m)
    }

    pub fn now(&self) -> SimTime {
        self.sim.now()
    }

    pub fn events(&self) -> u64 {
        self.sim.events()
    }

    pub fn trace_hash(&self) -> String {
        self.sim.trace_hash().hex()
    }

    pub fn drive(&self) -> &Drive {
        &self.st.drive
    }

    pub fn device(&self) -> &Device {
        self.st.drive.device().device()
    }

    /// Gives the device up (to close an image: its store is inside).
    pub fn into_device(self) -> Device {
        self.st.drive.into_device().into_device()
    }

    pub fn nvme_stats(&self) -> NvmeStats {
        self.st.drive.stats()
    }

    pub fn fs_stats(&self) -> FsStats {
        self.st.fs.stats()
    }

    /// Lets simulated time pass (a core computing, a call crossing PCIe): the SSD's events
    /// due meanwhile run.
    pub fn advance(&mut self, d: SimDuration) {
        let t = self.sim.now() + d;
        self.sim.advance_to(t, &mut self.st);
    }

    fn watchdog(&self) -> Watchdog {
        Watchdog::starting_at(WATCHDOG_LIMIT, self.sim.now())
    }

    /// Runs one file-system operation to completion.
    pub fn fs_run(&mut self, caller: Caller, op: FsOp) -> Result<FsReply, MachineError> {
        let id = self.st.fs.submit(self.sim.now(), caller, op)?;
        self.st.pump(self.sim.queue());
        let mut dog = self.watchdog();
        self.sim
            .run_until(&mut self.st, &mut dog, State::progress, |s| {
                s.fs_done.contains_key(&id)
            })?;
        let c = self
            .st
            .fs_done
            .remove(&id)
            .expect("run_until returns once the call is done");
        Ok(c.result?)
    }

    /// Issues `reqs` at once (the caller's own block commands, ids ignored) and waits for all
    /// of them; returns their completions in the order given. A failed command is an error
    /// naming its range.
    pub fn block_io(
        &mut self,
        reqs: Vec<BlockRequest>,
    ) -> Result<Vec<BlockCompletion>, MachineError> {
        let n = reqs.len();
        let first = self.st.next_caller_id;
        self.st.next_caller_id += n as u64;
        let ids: Vec<u64> = (0..n as u64).map(|i| first + i).collect();
        for (req, &id) in reqs.into_iter().zip(&ids) {
            self.st
                .submit_block(Owner::Caller(id), req, self.sim.queue());
        }
        self.st.pump(self.sim.queue());
        let mut dog = self.watchdog();
        self.sim
            .run_until(&mut self.st, &mut dog, State::progress, |s| {
                ids.iter().all(|id| s.caller_done.contains_key(id))
            })?;
        let mut out = Vec::with_capacity(n);
        for id in ids {
            let c = self
                .st
                .caller_done
                .remove(&id)
                .expect("run_until returns once every request is done");
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

    /// A flush of the drive (NVMe FLUSH), waited for.
    pub fn flush(&mut self) -> Result<(), MachineError> {
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
