//! The computational storage device as one sans-IO model: the NVMe front end and the drive
//! behind it (`Nvme<D>`: by default [`Drive`], `WriteCache<ftl::Device>`, the same assembly
//! `nearflash io` drives; or a [`crate::port::Port`] whose reads another loop serves), the
//! memory namespace in the drive's DRAM ([`DramPort`]), one compute engine per compute
//! namespace, the program slots and the range sets.
//!
//! Every command is timed by the model, as events on the one queue:
//! * submission and completion take the NVMe path of any command (doorbell, SQE fetch,
//!   firmware, host data DMA in, data DMA up, CQE, interrupt: `nearflash_nvme::ext`) on the
//!   same queue pairs, link and controller as ordinary I/O, which it contends with;
//! * Load Program is the chunk's DMA over the link plus its write into DRAM;
//! * Memory Copy from the NVM namespace is flash reads through the write cache and the FTL
//!   (`copy_reads_max` in flight, `copy_chunk_bytes` each), each followed by its DRAM write;
//!   SLM to SLM is a DRAM read and write;
//! * Memory Read and Write are the DRAM access plus the data's DMA;
//! * Execute Program is the program's work on its engine — instructions × CPI ÷ clock on a
//!   core of a core engine, or its bytes through a slot's pipeline — overlapped with its
//!   DRAM traffic; the command completes when both are done.
//!
//! Commands are bounded by the NVMe queues (a full queue refuses a submission); a Memory
//! Copy's reads by `copy_reads_max`.

use crate::config::{CsConfig, EngineKind};
use crate::error::CommandError;
use crate::program::{Chunk, Programs, Work};
use crate::rangeset::{RangeDescriptor, RangeSets, DESCRIPTOR_BYTES};
use nearflash_blockdev::{BlockCompletion, BlockDevice, BlockOp, BlockRequest};
use nearflash_ftl::Device;
use nearflash_hw::compute::{CoreSpec, SlotSpec, TimeSharedCores};
use nearflash_hw::dram::DramPort;
use nearflash_nvme::{
    ExtCommand, ExtCompletion, ExtReady, Nvme, NvmeError, NvmeEvent, INTERNAL_ID_BIT,
};
use nearflash_sim::{EventQueue, Model, Schedule, SimRng, SimTime, TraceEvent};
use nearflash_wcache::{WcEvent, WriteCache};
use std::collections::{BTreeMap, VecDeque};

/// The drive behind the front end: the shared SSD assembly's (`nearflash_ssd::Ssd` is
/// `Nvme<Drive>`).
pub type Drive = WriteCache<Device>;

/// Bytes of an LBA of the NVM namespace: the namespace is formatted with 4 KiB LBAs (the
/// LBA format drives ship for performance; the drive's sectors are 512 bytes).
pub const LBA_BYTES: u64 = 4096;
/// Bytes of the Identify data structure (NVMe Base: every Identify returns 4 KiB).
pub const IDENTIFY_BYTES: u64 = 4096;

/// The device's events: the front end's (and the drive's inside them), and "the layer's work
/// for the command in controller slot `tag` is done".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsEvent<E = WcEvent<nearflash_ftl::Event>> {
    Nvme(NvmeEvent<E>),
    Done(u32),
}

impl<E: TraceEvent> TraceEvent for CsEvent<E> {
    fn hash_word(&self) -> u64 {
        match self {
            CsEvent::Nvme(e) => e.hash_word(),
            CsEvent::Done(tag) => 0xC5 << 56 | u64::from(*tag),
        }
    }
}

/// A command of the two command sets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Identify (the CP and SLM fields: [`Identify`]).
    Identify,
    LoadProgram(Chunk),
    UnloadProgram {
        pind: u16,
    },
    /// Program Activation Management: SEL activate (`true`) or deactivate.
    ActivateProgram {
        pind: u16,
        activate: bool,
    },
    /// Memory Range Set Management, create: for compute namespace `nsid`.
    CreateRangeSet {
        nsid: u32,
        ranges: Vec<RangeDescriptor>,
    },
    DeleteRangeSet {
        rsid: u16,
    },
    /// Execute Program on compute namespace `nsid`.
    Execute {
        nsid: u32,
        pind: u16,
        rsid: u16,
        cparam: [u64; 2],
    },
    /// Memory Read: SLM → host.
    MemoryRead {
        offset_bytes: u64,
        len_bytes: u64,
    },
    /// Memory Write: host → SLM.
    MemoryWrite {
        offset_bytes: u64,
        data: Vec<u8>,
    },
    /// Memory Copy, descriptor format 2h: NVM LBA ranges `(slba, nlb)` → SLM at `dest_bytes`.
    CopyFromNvm {
        dest_bytes: u64,
        sources: Vec<(u64, u64)>,
    },
    /// Memory Copy, descriptor format 4h: SLM ranges `(offset, len)` → SLM at `dest_bytes`.
    CopyWithinSlm {
        dest_bytes: u64,
        sources: Vec<(u64, u64)>,
    },
}

impl Command {
    pub fn name(&self) -> &'static str {
        use crate::opcodes as o;
        match self {
            Command::Identify => o::IDENTIFY.name,
            Command::LoadProgram(_) | Command::UnloadProgram { .. } => o::LOAD_PROGRAM.name,
            Command::ActivateProgram { .. } => o::PROGRAM_ACTIVATION.name,
            Command::CreateRangeSet { .. } | Command::DeleteRangeSet { .. } => {
                o::MEMORY_RANGE_SET.name
            }
            Command::Execute { .. } => o::EXECUTE_PROGRAM.name,
            Command::MemoryRead { .. } => o::MEMORY_READ.name,
            Command::MemoryWrite { .. } => o::MEMORY_WRITE.name,
            Command::CopyFromNvm { .. } | Command::CopyWithinSlm { .. } => o::MEMORY_COPY.name,
        }
    }

    /// Host data the controller DMAs in before the command runs.
    fn inbound_bytes(&self) -> u64 {
        match self {
            Command::LoadProgram(c) => c.data.len() as u64,
            Command::CreateRangeSet { ranges, .. } => DESCRIPTOR_BYTES * ranges.len() as u64,
            Command::MemoryWrite { data, .. } => data.len() as u64,
            // Memory Copy's source descriptors: 16 bytes each (SLBA, NLB and the namespace).
            Command::CopyFromNvm { sources, .. } | Command::CopyWithinSlm { sources, .. } => {
                16 * sources.len() as u64
            }
            _ => 0,
        }
    }
}

/// What a command completed with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub id: u64,
    pub name: &'static str,
    /// DW0/DW1 of the completion (Execute's 64-bit return, a new RSID), or the error.
    pub result: Result<u64, CommandError>,
    /// Data moved to the host (Memory Read, Identify).
    pub data: Vec<u8>,
    /// A program's log or diagnostics.
    pub log: Vec<u8>,
    /// The work an Execute did.
    pub work: Work,
    pub submitted: SimTime,
    pub completed: SimTime,
}

/// The CP and SLM Identify fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identify {
    pub maxact: u16,
    pub maxmemrs: u16,
    pub maxmemr: u16,
    pub mrsg_bytes: u64,
    pub maxpb_mib: u32,
    pub lpg_bytes: u32,
    pub slm_bytes: u64,
    pub compute_namespaces: u32,
    pub nvm_lbas: u64,
}

impl Identify {
    /// The fields in the first bytes of the 4 KiB page, little-endian, in declaration order.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(IDENTIFY_BYTES as usize);
        b.extend(self.maxact.to_le_bytes());
        b.extend(self.maxmemrs.to_le_bytes());
        b.extend(self.maxmemr.to_le_bytes());
        b.extend(self.mrsg_bytes.to_le_bytes());
        b.extend(self.maxpb_mib.to_le_bytes());
        b.extend(self.lpg_bytes.to_le_bytes());
        b.extend(self.slm_bytes.to_le_bytes());
        b.extend(self.compute_namespaces.to_le_bytes());
        b.extend(self.nvm_lbas.to_le_bytes());
        b.resize(IDENTIFY_BYTES as usize, 0);
        b
    }

    /// Reads the page [`Identify::encode`] wrote; `None` when it is too short.
    pub fn decode(b: &[u8]) -> Option<Identify> {
        let mut at = 0;
        let mut take = |n: usize| {
            let s = b.get(at..at + n)?;
            at += n;
            let mut w = [0u8; 8];
            w[..n].copy_from_slice(s);
            Some(u64::from_le_bytes(w))
        };
        Some(Identify {
            maxact: take(2)? as u16,
            maxmemrs: take(2)? as u16,
            maxmemr: take(2)? as u16,
            mrsg_bytes: take(8)?,
            maxpb_mib: take(4)? as u32,
            lpg_bytes: take(4)? as u32,
            slm_bytes: take(8)?,
            compute_namespaces: take(4)? as u32,
            nvm_lbas: take(8)?,
        })
    }
}

enum Engine {
    Cores {
        spec: CoreSpec,
        pool: TimeSharedCores,
    },
    Slots {
        spec: SlotSpec,
        bytes_per_cycle: f64,
        pool: TimeSharedCores,
    },
}

impl Engine {
    /// Runs `work` from `now` on the unit that frees first; returns when it ends.
    fn charge(&mut self, now: SimTime, work: Work) -> SimTime {
        match self {
            // One fuel unit or one eBPF instruction is one core instruction
            // (`nearflash_wasm::cost::INSTRUCTIONS_PER_FUEL`).
            Engine::Cores { spec, pool } => pool.run(
                now,
                spec.duration(
                    work.instructions as f64 * nearflash_wasm::cost::INSTRUCTIONS_PER_FUEL,
                ),
            ),
            Engine::Slots {
                spec,
                bytes_per_cycle,
                pool,
            } => pool.run(now, spec.duration(work.slm_bytes, *bytes_per_cycle)),
        }
    }

    fn busy_ns(&self) -> u64 {
        match self {
            Engine::Cores { pool, .. } | Engine::Slots { pool, .. } => pool.busy_ns().iter().sum(),
        }
    }
}

/// A command between its submission and its completion.
struct InFlight {
    cmd: Option<Command>,
    name: &'static str,
    outcome: Option<Outcome>,
}

/// What a command's work produced, waiting for its completion to be seen.
#[derive(Default)]
struct Outcome {
    result: Option<Result<u64, CommandError>>,
    data: Vec<u8>,
    log: Vec<u8>,
    work: Work,
    outbound_bytes: u64,
}

/// A Memory Copy from the NVM namespace in progress.
struct CopyJob {
    id: u64,
    /// (device byte offset, bytes, SLM destination) of reads not yet issued.
    pending: VecDeque<(u64, u64, u64)>,
    outstanding: u32,
    done_at: SimTime,
    error: Option<CommandError>,
}

/// Errors of a submission (the command never reached the device).
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    #[error(transparent)]
    Nvme(#[from] NvmeError),
}

/// Errors building the device.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Config(#[from] crate::config::CsConfigError),
    #[error("the NVM namespace of {capacity_bytes} bytes is not a whole number of {LBA_BYTES}-byte LBAs")]
    Lbas { capacity_bytes: u64 },
}

/// Counters of the device.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CsStats {
    pub commands: u64,
    pub copy_reads: u64,
    pub copy_bytes: u64,
    pub slm_dram_busy_ns: u64,
    /// Busy time of each engine (the sum over its units).
    pub engine_busy_ns: Vec<u64>,
}

pub struct CsDevice<D: BlockDevice = Drive> {
    cfg: CsConfig,
    nvme: Nvme<D>,
    slm: Vec<u8>,
    dram: DramPort,
    engines: Vec<Engine>,
    programs: Programs,
    range_sets: RangeSets,
    inflight: BTreeMap<u64, InFlight>,
    /// Slot tag → command id, for the commands whose work is running.
    running: BTreeMap<u32, u64>,
    copies: BTreeMap<u32, CopyJob>,
    /// Internal read id → (copy's tag, SLM destination, bytes).
    reads: BTreeMap<u64, (u32, u64, u64)>,
    next_id: u64,
    next_read: u64,
    completions: Vec<Completion>,
    block_done: Vec<BlockCompletion>,
    completed_count: u64,
    stats: CsStats,
    scratch_ready: Vec<ExtReady>,
    scratch_ext: Vec<ExtCompletion>,
    scratch_reads: Vec<BlockCompletion>,
}

impl<D: BlockDevice> CsDevice<D> {
    /// The device around `nvme` (its drive freshly formatted).
    pub fn new(cfg: CsConfig, nvme: Nvme<D>) -> Result<CsDevice<D>, BuildError> {
        cfg.validate()?;
        let capacity_bytes = nvme.capacity_bytes();
        if !capacity_bytes.is_multiple_of(LBA_BYTES) {
            return Err(BuildError::Lbas { capacity_bytes });
        }
        let engines = cfg
            .engines
            .iter()
            .map(|e| match e.kind {
                EngineKind::Cores {
                    count,
                    clock_mhz,
                    cpi,
                } => Engine::Cores {
                    spec: CoreSpec::new(clock_mhz, cpi),
                    pool: TimeSharedCores::new(count as usize),
                },
                EngineKind::Slots {
                    count,
                    clock_mhz,
                    bytes_per_cycle,
                } => Engine::Slots {
                    spec: SlotSpec::new(clock_mhz),
                    bytes_per_cycle,
                    pool: TimeSharedCores::new(count as usize),
                },
            })
            .collect();
        Ok(CsDevice {
            programs: Programs::new(
                cfg.programs_max,
                cfg.activated_max,
                cfg.program_bytes_max(),
                u64::from(cfg.load_granularity_bytes),
            ),
            range_sets: RangeSets::new(
                cfg.range_sets_max,
                cfg.ranges_per_set_max,
                cfg.range_granularity_bytes,
                cfg.slm_bytes,
                cfg.engines.len() as u32,
            ),
            dram: DramPort::new(cfg.slm_bandwidth_mb_s),
            engines,
            cfg,
            nvme,
            slm: Vec::new(),
            inflight: BTreeMap::new(),
            running: BTreeMap::new(),
            copies: BTreeMap::new(),
            reads: BTreeMap::new(),
            next_id: 0,
            next_read: 0,
            completions: Vec::new(),
            block_done: Vec::new(),
            completed_count: 0,
            stats: CsStats::default(),
            scratch_ready: Vec::new(),
            scratch_ext: Vec::new(),
            scratch_reads: Vec::new(),
        })
    }

    /// Offers a run computed outside the device to the next Execute (`Programs::expect`).
    pub fn expect_run(&mut self, k: crate::program::KnownRun) {
        self.programs.expect(k);
    }

    pub fn config(&self) -> &CsConfig {
        &self.cfg
    }

    pub fn nvme(&self) -> &Nvme<D> {
        &self.nvme
    }

    /// The drive behind the front end (a [`crate::port::Port`]'s requests are handed out
    /// and answered through it).
    pub fn drive_mut(&mut self) -> &mut D {
        self.nvme.device_mut()
    }

    /// LBAs of the NVM namespace.
    pub fn nvm_lbas(&self) -> u64 {
        self.nvme.capacity_bytes() / LBA_BYTES
    }

    pub fn identify(&self) -> Identify {
        Identify {
            maxact: self.cfg.activated_max,
            maxmemrs: self.cfg.range_sets_max,
            maxmemr: self.cfg.ranges_per_set_max,
            mrsg_bytes: self.cfg.range_granularity_bytes,
            maxpb_mib: self.cfg.program_mib_max,
            lpg_bytes: self.cfg.load_granularity_bytes,
            slm_bytes: self.cfg.slm_bytes,
            compute_namespaces: self.cfg.engines.len() as u32,
            nvm_lbas: self.nvm_lbas(),
        }
    }

    pub fn stats(&self) -> CsStats {
        CsStats {
            slm_dram_busy_ns: self.dram.busy_ns(),
            engine_busy_ns: self.engines.iter().map(Engine::busy_ns).collect(),
            ..self.stats.clone()
        }
    }

    /// Commands and block requests not yet completed, and completions not yet taken.
    pub fn outstanding(&self) -> u64 {
        self.inflight.len() as u64 + self.nvme.outstanding()
    }

    /// Completions seen so far, taken or not (the watchdog's progress).
    pub fn completed_count(&self) -> u64 {
        self.completed_count
    }

    /// Submits `cmd` at `q.now()` on queue pair 0; its id comes back in its [`Completion`].
    pub fn submit(
        &mut self,
        cmd: Command,
        q: &mut impl Schedule<CsEvent<D::Event>>,
    ) -> Result<u64, SubmitError> {
        let id = self.next_id;
        let ext = ExtCommand {
            qid: 0,
            id,
            inbound_bytes: cmd.inbound_bytes(),
        };
        self.nvme.try_submit_ext(ext, &mut q.map(CsEvent::Nvme))?;
        self.next_id += 1;
        self.stats.commands += 1;
        self.inflight.insert(
            id,
            InFlight {
                name: cmd.name(),
                cmd: Some(cmd),
                outcome: None,
            },
        );
        Ok(id)
    }

    /// Ordinary I/O on the NVM namespace, through the same front end (held back while the
    /// queues are full).
    pub fn submit_block(&mut self, req: BlockRequest, q: &mut impl Schedule<CsEvent<D::Event>>) {
        assert!(
            req.id & INTERNAL_ID_BIT == 0,
            "host ids leave the internal bit clear"
        );
        self.nvme.submit(req, &mut q.map(CsEvent::Nvme));
    }

    /// Whether command `id` has completed (its completion not yet taken).
    pub fn has_completed(&self, id: u64) -> bool {
        self.completions.iter().any(|c| c.id == id)
    }

    /// Block requests completed and not yet taken.
    pub fn block_completions_waiting(&self) -> usize {
        self.block_done.len()
    }

    /// Moves the completed commands into `out`.
    pub fn take_completions(&mut self, out: &mut Vec<Completion>) {
        out.append(&mut self.completions);
    }

    /// Moves the completed block requests into `out`.
    pub fn take_block_completions(&mut self, out: &mut Vec<BlockCompletion>) {
        out.append(&mut self.block_done);
    }

    fn slm_reserve(&mut self, end_bytes: u64) {
        assert!(
            end_bytes <= self.cfg.slm_bytes,
            "accesses are checked against the SLM size"
        );
        if (self.slm.len() as u64) < end_bytes {
            self.slm.resize(end_bytes as usize, 0);
        }
    }

    fn check_slm(&self, offset_bytes: u64, len_bytes: u64) -> Result<(), CommandError> {
        let bad = |reason: String| {
            Err(CommandError::BadMemoryAccess {
                offset_bytes,
                len_bytes,
                reason,
            })
        };
        // Host accesses to a memory namespace are dword-granular (STANDARDS.md §3.1).
        if !offset_bytes.is_multiple_of(4) || !len_bytes.is_multiple_of(4) || len_bytes == 0 {
            return bad("host accesses are whole dwords (4-byte aligned, non-empty)".into());
        }
        if offset_bytes
            .checked_add(len_bytes)
            .is_none_or(|e| e > self.cfg.slm_bytes)
        {
            return bad(format!(
                "past the end of the memory namespace ({} bytes)",
                self.cfg.slm_bytes
            ));
        }
        Ok(())
    }

    /// The layer's work for command `id` in slot `tag` ends at `at` with `outcome`.
    fn done_at(
        &mut self,
        tag: u32,
        id: u64,
        at: SimTime,
        outcome: Outcome,
        q: &mut impl Schedule<CsEvent<D::Event>>,
    ) {
        let f = self
            .inflight
            .get_mut(&id)
            .expect("a running command is in flight");
        assert!(f.outcome.is_none(), "a command finishes once");
        f.outcome = Some(outcome);
        self.running.insert(tag, id);
        q.schedule_at(at, CsEvent::Done(tag));
    }

    /// Starts the work of a command whose SQE and data are in the controller.
    fn start(&mut self, ready: ExtReady, q: &mut impl Schedule<CsEvent<D::Event>>) {
        let now = q.now();
        let id = ready.id;
        let cmd = self
            .inflight
            .get_mut(&id)
            .and_then(|f| f.cmd.take())
            .expect("a ready command is in flight with its command");
        let mut out = Outcome::default();
        let mut at = now;
        let result = match cmd {
            Command::Identify => {
                out.data = self.identify().encode();
                out.outbound_bytes = IDENTIFY_BYTES;
                Ok(0)
            }
            Command::LoadProgram(chunk) => {
                let bytes = chunk.data.len() as u64;
                let r = self.programs.load(chunk);
                if r.is_ok() {
                    at = self.dram.access(now, bytes);
                }
                r.map(|()| 0)
            }
            Command::UnloadProgram { pind } => self.programs.unload(pind).map(|()| 0),
            Command::ActivateProgram { pind, activate } => {
                self.programs.activate(pind, activate).map(|()| 0)
            }
            Command::CreateRangeSet { nsid, ranges } => {
                self.range_sets.create(nsid, &ranges).map(u64::from)
            }
            Command::DeleteRangeSet { rsid } => self.range_sets.delete(rsid).map(|()| 0),
            Command::Execute {
                nsid,
                pind,
                rsid,
                cparam,
            } => match self.execute(nsid, pind, rsid, cparam, now) {
                Ok((result, work, log, end)) => {
                    out.work = work;
                    out.log = log;
                    at = end;
                    Ok(result)
                }
                Err((e, end)) => {
                    at = end;
                    Err(e)
                }
            },
            Command::MemoryRead {
                offset_bytes,
                len_bytes,
            } => self.check_slm(offset_bytes, len_bytes).map(|()| {
                let from = (offset_bytes as usize).min(self.slm.len());
                let to = ((offset_bytes + len_bytes) as usize).min(self.slm.len());
                out.data = self.slm[from..to].to_vec();
                out.data.resize(len_bytes as usize, 0);
                out.outbound_bytes = len_bytes;
                at = self.dram.access(now, len_bytes);
                0
            }),
            Command::MemoryWrite { offset_bytes, data } => {
                let len = data.len() as u64;
                self.check_slm(offset_bytes, len).map(|()| {
                    self.slm_reserve(offset_bytes + len);
                    self.slm[offset_bytes as usize..(offset_bytes + len) as usize]
                        .copy_from_slice(&data);
                    at = self.dram.access(now, len);
                    0
                })
            }
            Command::CopyWithinSlm {
                dest_bytes,
                sources,
            } => self.copy_within(dest_bytes, &sources).map(|total| {
                // A DRAM read and a DRAM write of every byte.
                at = self.dram.access(now, 2 * total);
                0
            }),
            Command::CopyFromNvm {
                dest_bytes,
                sources,
            } => match self.copy_from_nvm(ready.tag, id, dest_bytes, &sources, q) {
                // The copy finishes when its last read's DRAM write does (`read_done`).
                Ok(()) => return,
                Err(e) => Err(e),
            },
        };
        out.result = Some(result);
        self.done_at(ready.tag, id, at, out, q);
    }

    /// Runs a program; its result, work, log and when the engine and DRAM are done — or the
    /// error and when the engine gave up.
    #[allow(clippy::type_complexity)]
    fn execute(
        &mut self,
        nsid: u32,
        pind: u16,
        rsid: u16,
        cparam: [u64; 2],
        now: SimTime,
    ) -> Result<(u64, Work, Vec<u8>, SimTime), (CommandError, SimTime)> {
        let engine = self.range_sets.engine_of(nsid).map_err(|e| (e, now))?;
        let windows = self
            .range_sets
            .windows(rsid, nsid)
            .map_err(|e| (e, now))?
            .to_vec();
        let end = windows
            .iter()
            .map(|w| w.start_bytes + w.len_bytes)
            .max()
            .unwrap_or(0);
        let range_bytes: u64 = windows.iter().map(|w| w.len_bytes).sum();
        let budget = self.cfg.instructions_base.saturating_add(
            self.cfg
                .instructions_per_range_byte
                .saturating_mul(range_bytes),
        );
        self.slm_reserve(end);
        match self
            .programs
            .run(pind, &mut self.slm, &windows, cparam, budget)
        {
            Ok(ran) => {
                let engine_end = self.engines[engine].charge(now, ran.work);
                let dram_end = self.dram.access(now, ran.work.slm_bytes);
                Ok((ran.result, ran.work, ran.log, engine_end.max(dram_end)))
            }
            Err(e) => {
                // A program stopped at its budget used the engine for all of it.
                let spent = match e.status() {
                    crate::Status::ProgramTimeExceeded => Work {
                        instructions: budget,
                        slm_bytes: 0,
                    },
                    _ => Work::default(),
                };
                let end = self.engines[engine].charge(now, spent);
                Err((e, end))
            }
        }
    }

    fn copy_within(
        &mut self,
        dest_bytes: u64,
        sources: &[(u64, u64)],
    ) -> Result<u64, CommandError> {
        let total: u64 = sources.iter().map(|s| s.1).sum();
        self.check_slm(dest_bytes, total)?;
        for &(o, l) in sources {
            self.check_slm(o, l)?;
        }
        self.slm_reserve(dest_bytes + total);
        let mut at = dest_bytes as usize;
        for &(o, l) in sources {
            self.slm_reserve(o + l);
            self.slm.copy_within(o as usize..(o + l) as usize, at);
            at += l as usize;
        }
        Ok(total)
    }

    fn copy_from_nvm(
        &mut self,
        tag: u32,
        id: u64,
        dest_bytes: u64,
        sources: &[(u64, u64)],
        q: &mut impl Schedule<CsEvent<D::Event>>,
    ) -> Result<(), CommandError> {
        let lbas = self.nvm_lbas();
        let mut total = 0u64;
        let mut pending = VecDeque::new();
        for &(slba, nlb) in sources {
            if nlb == 0 || slba.checked_add(nlb).is_none_or(|e| e > lbas) {
                return Err(CommandError::LbaOutOfRange { slba, nlb, lbas });
            }
            let mut off = slba * LBA_BYTES;
            let end = (slba + nlb) * LBA_BYTES;
            while off < end {
                let len = (end - off).min(self.cfg.copy_chunk_bytes);
                pending.push_back((off, len, dest_bytes + total));
                total += len;
                off += len;
            }
        }
        self.check_slm(dest_bytes, total)?;
        if pending.is_empty() {
            return Err(CommandError::LbaOutOfRange {
                slba: 0,
                nlb: 0,
                lbas,
            });
        }
        self.slm_reserve(dest_bytes + total);
        self.copies.insert(
            tag,
            CopyJob {
                id,
                pending,
                outstanding: 0,
                done_at: q.now(),
                error: None,
            },
        );
        self.issue_reads(tag, q);
        Ok(())
    }

    /// Issues a copy's reads up to `copy_reads_max` in flight.
    fn issue_reads(&mut self, tag: u32, q: &mut impl Schedule<CsEvent<D::Event>>) {
        let job = self.copies.get_mut(&tag).expect("a live copy");
        while job.outstanding < self.cfg.copy_reads_max {
            let Some((offset_bytes, len_bytes, dest)) = job.pending.pop_front() else {
                break;
            };
            let rid = INTERNAL_ID_BIT | self.next_read;
            self.next_read += 1;
            job.outstanding += 1;
            self.reads.insert(rid, (tag, dest, len_bytes));
            self.stats.copy_reads += 1;
            self.nvme.submit_internal(
                BlockRequest {
                    id: rid,
                    op: BlockOp::Read,
                    offset_bytes,
                    len_bytes,
                    data: Vec::new(),
                },
                &mut q.map(CsEvent::Nvme),
            );
        }
        assert!(job.outstanding <= self.cfg.copy_reads_max);
    }

    /// One of a copy's reads is done: its data goes into DRAM.
    fn read_done(&mut self, c: BlockCompletion, q: &mut impl Schedule<CsEvent<D::Event>>) {
        let now = q.now();
        let (tag, dest, len) = self.reads.remove(&c.id).expect("a read we issued");
        let job = self.copies.get_mut(&tag).expect("the read's copy is live");
        assert!(job.outstanding > 0);
        job.outstanding -= 1;
        match c.result {
            Ok(()) => {
                let d = dest as usize;
                let n = c.data.len().min(len as usize);
                self.slm[d..d + n].copy_from_slice(&c.data[..n]);
                // Bytes the store never held (never written) read as zeros.
                self.slm[d + n..d + len as usize].fill(0);
                let end = self.dram.access(now, len);
                job.done_at = job.done_at.max(end);
                self.stats.copy_bytes += len;
            }
            Err(e) => {
                job.pending.clear();
                job.error.get_or_insert(CommandError::Media(e.to_string()));
            }
        }
        if job.outstanding > 0 || !job.pending.is_empty() {
            self.issue_reads(tag, q);
            return;
        }
        let job = self.copies.remove(&tag).expect("checked above");
        let outcome = Outcome {
            result: Some(job.error.map_or(Ok(0), Err)),
            ..Outcome::default()
        };
        self.done_at(tag, job.id, job.done_at.max(now), outcome, q);
    }

    /// Moves everything the front end finished on: ready commands start, copies' reads land,
    /// completions are recorded.
    fn pump(&mut self, q: &mut impl Schedule<CsEvent<D::Event>>) {
        let mut ready = std::mem::take(&mut self.scratch_ready);
        self.nvme.take_ext_ready(&mut ready);
        for r in ready.drain(..) {
            self.start(r, q);
        }
        self.scratch_ready = ready;
        let mut reads = std::mem::take(&mut self.scratch_reads);
        self.nvme.take_internal_completions(&mut reads);
        for c in reads.drain(..) {
            self.read_done(c, q);
        }
        self.scratch_reads = reads;
        let mut done = std::mem::take(&mut self.scratch_ext);
        self.nvme.take_ext_completions(&mut done);
        for c in done.drain(..) {
            let f = self
                .inflight
                .remove(&c.id)
                .expect("a completed command was in flight");
            let o = f.outcome.expect("a command completes after its work");
            self.completed_count += 1;
            self.completions.push(Completion {
                id: c.id,
                name: f.name,
                result: o.result.expect("the work set a result"),
                data: o.data,
                log: o.log,
                work: o.work,
                submitted: c.submitted,
                completed: c.completed,
            });
        }
        self.scratch_ext = done;
        let before = self.block_done.len();
        self.nvme.take_completions_into(&mut self.block_done);
        self.completed_count += (self.block_done.len() - before) as u64;
    }
}

impl<D: BlockDevice> Model for CsDevice<D> {
    type Event = CsEvent<D::Event>;

    fn handle(
        &mut self,
        ev: CsEvent<D::Event>,
        q: &mut EventQueue<CsEvent<D::Event>>,
        rng: &mut SimRng,
    ) {
        match ev {
            CsEvent::Nvme(e) => self.nvme.handle_event(e, &mut q.map(CsEvent::Nvme), rng),
            CsEvent::Done(tag) => {
                let id = self.running.remove(&tag).expect("a running slot");
                let outbound = self.inflight[&id]
                    .outcome
                    .as_ref()
                    .expect("a finished command has its outcome")
                    .outbound_bytes;
                self.nvme
                    .finish_ext(tag, outbound, &mut q.map(CsEvent::Nvme));
            }
        }
        self.pump(q);
    }
}
