//! The controller's program task (issue 14): a user's program run by the SSD controller as a
//! background task over a file resident on flash, as Active Flash runs compression (`worker`).
//!
//! The host first writes the file onto the device (`Rig::write_file`: host writes through the
//! controller's command path and the FTL, in functional fidelity so the bytes are real). Then
//! the task
//!
//! 1. **reads** the file's pages in order through the FTL, its dies and the bus, at most
//!    `controller_io_depth` page operations of the task in flight (reads and writes
//!    together, as the compression task) and at most `READAHEAD_CHUNKS` chunks ahead of the
//!    program (the input the controller's memory holds);
//! 2. **feeds** each chunk of `extent_pages` pages, in file order, to the program, and
//!    charges the instructions it reports for that chunk (a self-metering program's — a
//!    WebAssembly program's fuel — else its per-byte cost) as background work on the
//!    controller's preemptive core: the FTL work of every command, the task's own and a
//!    foreground's, preempts it. The chunk's output exists once its compute ends;
//! 3. **writes** the output in whole pages to the output region at the top of the logical
//!    space (where compression appends its log). Flash, not controller memory, holds it: a
//!    filter's output may be several times its input, while the controller's DRAM is sized
//!    for its mapping table. The program is fed no further chunk while
//!    `OUTPUT_BACKLOG_BYTES` of its output wait to be written.
//!
//! A program's fault (a WebAssembly trap, out of fuel, a limit, a non-zero exit, or output
//! beyond the region) stops the reading and ends the run with `ActiveFlashError::Program`,
//! which carries the figures and the output written up to the fault. The rig's watchdog
//! watches the task's commands like any other, and every bound above keeps a run finite.

use crate::background::{check_foreground_mb_s, check_write_ceiling};
use crate::corpus::PAGE_BYTES;
use crate::engine::Offload;
use crate::error::{ActiveFlashError, ProgramFault};
use crate::rig::{Fidelity, Machine, Origin, Rig, Q};
use crate::worker::Side;
use crate::ActiveFlashConfig;
use nearflash_flash::FlashConfig;
use nearflash_ftl::{BlockOp, FtlConfig};
use nearflash_sim::SimTime;
use nearflash_stream::{Flit, FlitWriter, ProgramError, StreamProgram, FLIT_BYTES};
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};

/// Chunks of input read ahead of the program (the chunk being fed next and the one after).
pub const READAHEAD_CHUNKS: u64 = 2;

/// Output waiting in controller memory beyond which the program is fed no further chunk.
pub const OUTPUT_BACKLOG_BYTES: usize = 256 << 10;

/// Oracle reads of the output in flight at once when it is read back.
const READ_BACK_PAGES: usize = 256;

/// How a program run is set up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProgramParams {
    /// A foreground of 4 KiB random writes at this rate (open loop, MB/s) over the user area
    /// above the file while the program runs, as in Fig. 2; `None`: the program runs alone.
    pub foreground_mb_s: Option<f64>,
    /// The output region's size: output beyond it is the program's fault.
    pub output_bytes_max: u64,
}

/// A foreground that ran beside the program.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ForegroundRun {
    pub requested_mb_s: f64,
    /// Bytes written over its first arrival to its last completion.
    pub achieved_mb_s: f64,
    pub writes: u64,
    /// From arrival at the controller to completion.
    pub latency_us_mean: f64,
    pub latency_us_max: f64,
}

/// What a program run on the controller did, from the simulation's events.
#[derive(Clone, PartialEq, Serialize)]
pub struct ProgramRun {
    /// Input bytes fed to the program.
    pub bytes_in: u64,
    /// Output bytes, as read back from the output region.
    pub bytes_out: u64,
    #[serde(skip)]
    pub output: Vec<u8>,
    pub chunks: u64,
    /// Instructions charged on the controller (the program's own count per chunk).
    pub instructions: f64,
    /// From the task's first read to its last output on flash (or its last compute).
    pub time_ns: u64,
    /// Input bytes over `time_ns`.
    pub throughput_mb_s: f64,
    /// The controller's time computing the program (background, preemptible).
    pub compute_busy_ns: u64,
    /// The controller's FTL work for the task's own commands.
    pub ftl_busy_ns: u64,
    pub flash_page_reads: u64,
    pub flash_page_writes: u64,
    /// The host writing the file onto the device, before the run (not in `time_ns`).
    pub file_write_ns: u64,
    pub foreground: Option<ForegroundRun>,
    pub trace_hash: String,
}

impl std::fmt::Debug for ProgramRun {
    /// Every figure; the output by its length.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgramRun")
            .field("bytes_in", &self.bytes_in)
            .field("bytes_out", &self.bytes_out)
            .field("chunks", &self.chunks)
            .field("instructions", &self.instructions)
            .field("time_ns", &self.time_ns)
            .field("throughput_mb_s", &self.throughput_mb_s)
            .field("compute_busy_ns", &self.compute_busy_ns)
            .field("ftl_busy_ns", &self.ftl_busy_ns)
            .field("flash_page_reads", &self.flash_page_reads)
            .field("flash_page_writes", &self.flash_page_writes)
            .field("file_write_ns", &self.file_write_ns)
            .field("foreground", &self.foreground)
            .field("trace_hash", &self.trace_hash)
            .finish_non_exhaustive()
    }
}

impl ProgramRun {
    /// The controller's busy time for the run: compute and the FTL work of its commands.
    pub fn busy_ns(&self) -> u64 {
        self.compute_busy_ns + self.ftl_busy_ns
    }
}

/// The task's state inside the rig.
pub(crate) struct ProgramTask {
    program: Box<dyn StreamProgram>,
    writer: FlitWriter,
    len_bytes: u64,
    pages: u64,
    chunk_pages: u64,
    chunks: u64,
    io_depth: u32,
    io_inflight: u32,
    next_read: u64,
    /// Pages read and not yet fed, by index in the file (at most `READAHEAD_CHUNKS` chunks).
    arrived: BTreeMap<u64, Vec<u8>>,
    next_chunk: u64,
    /// The chunk on the controller's core and the output it released when fed.
    computing: Option<(u64, Vec<u8>)>,
    chunks_computed: u64,
    backlog: VecDeque<u8>,
    out_first: u64,
    out_next: u64,
    out_end: u64,
    bytes_in: u64,
    bytes_written: u64,
    instructions: f64,
    commands: u64,
    reads: u64,
    writes: u64,
    fault: Option<ProgramFault>,
    started: SimTime,
    last_at: SimTime,
}

impl ProgramTask {
    /// Every chunk computed (or the run faulted), all output written, no I/O in flight.
    fn finished(&self) -> bool {
        self.computing.is_none()
            && self.io_inflight == 0
            && self.backlog.is_empty()
            && (self.chunks_computed == self.chunks || self.fault.is_some())
    }

    /// Whether chunk `k` may be fed: all its pages have arrived.
    fn chunk_ready(&self, k: u64) -> bool {
        let lo = k * self.chunk_pages;
        let hi = (lo + self.chunk_pages).min(self.pages);
        self.arrived.range(lo..hi).count() as u64 == hi - lo
    }
}

impl std::fmt::Debug for ProgramTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgramTask")
            .field("program", &self.program.name())
            .field("next_chunk", &self.next_chunk)
            .field("chunks", &self.chunks)
            .finish_non_exhaustive()
    }
}

/// Feeds `bytes` to `program` as flits; `last` puts `eop` on the last flit.
fn feed(
    program: &mut dyn StreamProgram,
    bytes: &[u8],
    last: bool,
    out: &mut FlitWriter,
) -> Result<(), ProgramError> {
    if bytes.is_empty() {
        assert!(last, "only the last chunk (of an empty file) is empty");
        return program.on_flit(&Flit::new(&[], true), out);
    }
    assert!(
        last || bytes.len().is_multiple_of(FLIT_BYTES),
        "a chunk is whole pages"
    );
    let n = bytes.len().div_ceil(FLIT_BYTES);
    for (i, piece) in bytes.chunks(FLIT_BYTES).enumerate() {
        program.on_flit(&Flit::new(piece, last && i + 1 == n), out)?;
    }
    if last && !out.ended() {
        return Err(ProgramError::Framing(
            "the program did not end its output at the end of its input",
        ));
    }
    Ok(())
}

impl Machine {
    /// Feeds a chunk and issues the task's I/O, whatever can go now.
    pub(crate) fn pump_program(&mut self, q: &mut Q) {
        let Some(mut t) = self.program.take() else {
            return;
        };
        self.feed_chunk(q, &mut t);
        self.issue_program_io(q, &mut t);
        self.program = Some(t);
    }

    fn feed_chunk(&mut self, q: &mut Q, t: &mut ProgramTask) {
        let k = t.next_chunk;
        if t.fault.is_some()
            || t.computing.is_some()
            || k == t.chunks
            || t.backlog.len() >= OUTPUT_BACKLOG_BYTES
            || !t.chunk_ready(k)
        {
            return;
        }
        let lo = k * t.chunk_pages;
        let hi = (lo + t.chunk_pages).min(t.pages);
        let mut bytes = Vec::with_capacity(((hi - lo) as usize) * PAGE_BYTES);
        for i in lo..hi {
            bytes.extend(t.arrived.remove(&i).expect("a ready chunk's page"));
        }
        bytes.truncate((t.len_bytes - lo * PAGE_BYTES as u64) as usize);
        let last = k + 1 == t.chunks;
        t.next_chunk += 1;
        t.program.set_now_ns(q.now().as_ns());
        let fed = feed(&mut *t.program, &bytes, last, &mut t.writer);
        let instructions = t
            .program
            .take_metered_instructions()
            .unwrap_or_else(|| t.program.cost().instructions_per_byte * bytes.len() as f64);
        assert!(
            instructions.is_finite() && instructions >= 0.0,
            "a program reports a count of instructions, got {instructions}"
        );
        let out: Vec<u8> = t
            .writer
            .drain()
            .iter()
            .flat_map(|f| f.payload().iter().copied())
            .collect();
        if let Err(e) = fed {
            t.fault = Some(e.into());
            t.arrived.clear();
        }
        t.bytes_in += bytes.len() as u64;
        t.instructions += instructions;
        t.computing = Some((k, out));
        self.controller
            .push_background(Offload::Chunk(k), instructions);
        self.kick(q, Side::Controller);
    }

    fn issue_program_io(&mut self, q: &mut Q, t: &mut ProgramTask) {
        while t.io_inflight < t.io_depth {
            let produced_all =
                t.computing.is_none() && (t.chunks_computed == t.chunks || t.fault.is_some());
            if t.backlog.len() >= PAGE_BYTES || (produced_all && !t.backlog.is_empty()) {
                if t.out_next == t.out_end {
                    let bytes_max = (t.out_end - t.out_first) * PAGE_BYTES as u64;
                    t.fault
                        .get_or_insert(ProgramFault::OutputFull { bytes_max });
                    t.backlog.clear();
                    t.arrived.clear();
                    return;
                }
                let n = t.backlog.len().min(PAGE_BYTES);
                let mut data: Vec<u8> = t.backlog.drain(..n).collect();
                data.resize(PAGE_BYTES, 0);
                let page = t.out_next;
                t.out_next += 1;
                t.bytes_written += n as u64;
                t.io_inflight += 1;
                t.commands += 1;
                self.command(q, BlockOp::Write, page, data, Origin::ProgramWrite);
            } else if t.fault.is_none()
                && t.next_read < t.pages
                && t.next_read < (t.next_chunk + READAHEAD_CHUNKS) * t.chunk_pages
            {
                // The file starts at logical page 0 (`Rig::write_file`): page = index.
                let index = t.next_read;
                t.next_read += 1;
                t.io_inflight += 1;
                t.commands += 1;
                self.command(
                    q,
                    BlockOp::Read,
                    index,
                    Vec::new(),
                    Origin::ProgramRead { index },
                );
            } else {
                return;
            }
        }
    }

    /// A page of the input arrived from flash (dropped after a fault: no chunk is fed).
    pub(crate) fn program_page_read(&mut self, index: u64, data: Vec<u8>) {
        let t = self.program.as_mut().expect("a program task reads");
        assert!(
            t.io_inflight > 0 && index < t.next_read,
            "a read the task issued"
        );
        t.io_inflight -= 1;
        t.reads += 1;
        if t.fault.is_none() {
            assert_eq!(
                data.len(),
                PAGE_BYTES,
                "functional fidelity reads real pages"
            );
            t.arrived.insert(index, data);
        }
    }

    /// A page of output is on flash.
    pub(crate) fn program_page_written(&mut self, at: SimTime) {
        let t = self.program.as_mut().expect("a program task writes");
        assert!(t.io_inflight > 0, "a write the task issued");
        t.io_inflight -= 1;
        t.writes += 1;
        t.last_at = t.last_at.max(at);
    }

    /// The controller finished computing chunk `k`: its output joins the backlog.
    pub(crate) fn chunk_computed(&mut self, q: &mut Q, k: u64) {
        let now = q.now();
        let t = self.program.as_mut().expect("a program task computes");
        let (chunk, out) = t.computing.take().expect("a chunk was computing");
        assert_eq!(chunk, k, "chunks are computed one at a time, in order");
        t.chunks_computed += 1;
        t.backlog.extend(out);
        t.last_at = t.last_at.max(now);
    }
}

impl Rig {
    /// Reads `bytes` of output back from the region's first pages (the checker's reads: no
    /// controller time).
    fn read_back(&mut self, first_page: u64, bytes: u64) -> Result<Vec<u8>, ActiveFlashError> {
        let pages: Vec<u64> =
            (first_page..first_page + bytes.div_ceil(PAGE_BYTES as u64)).collect();
        let mut out = Vec::with_capacity(bytes as usize);
        for chunk in pages.chunks(READ_BACK_PAGES) {
            for page in self.oracle_read(chunk)? {
                out.extend(page);
            }
        }
        out.truncate(bytes as usize);
        Ok(out)
    }
}

/// Runs `program` on the controller of a freshly formatted device over `input`, written there
/// first by the host: see the module docs. The program's output is read back from flash.
pub fn run_program(
    flash: &FlashConfig,
    ftl: &FtlConfig,
    cfg: &ActiveFlashConfig,
    input: &[u8],
    program: Box<dyn StreamProgram>,
    params: ProgramParams,
    seed: u64,
) -> Result<ProgramRun, ActiveFlashError> {
    if let Some(f) = params.foreground_mb_s {
        check_foreground_mb_s(f)?;
    }
    let out_pages = params.output_bytes_max.div_ceil(PAGE_BYTES as u64).max(1);
    let mut rig = Rig::new(flash, ftl, cfg, Fidelity::Functional, out_pages, seed)?;
    let t0 = rig.now();
    let file_pages = rig.write_file(input)?;
    let file_write_ns = rig.now().since(t0).as_ns();
    if let Some(f) = params.foreground_mb_s {
        start_foreground_beside(&mut rig, f, file_pages, input.len() as u64)?;
    }
    let busy_background0 = rig.machine().controller.busy_background_ns;
    let task = ProgramTask::new(&rig, cfg, program, input.len() as u64, file_pages);
    rig.machine_mut().program = Some(task);
    rig.run_until(|st| st.program.as_ref().is_some_and(ProgramTask::finished))?;
    let t = rig.machine_mut().program.take().expect("the task ran");
    let compute_busy_ns = rig.machine().controller.busy_background_ns - busy_background0;
    rig.machine_mut().log_next = t.out_next;
    rig.stop_foreground();
    rig.drain()?;
    let foreground = params
        .foreground_mb_s
        .map(|f| foreground_run(rig.machine(), f));
    let output = rig.read_back(t.out_first, t.bytes_written)?;
    let time_ns = t.last_at.since(t.started).as_ns();
    assert!(t.fault.is_some() || t.bytes_in == input.len() as u64);
    assert_eq!(t.writes, t.out_next - t.out_first);
    let run = ProgramRun {
        bytes_in: t.bytes_in,
        bytes_out: output.len() as u64,
        output,
        chunks: t.chunks_computed,
        instructions: t.instructions,
        time_ns,
        throughput_mb_s: if time_ns == 0 {
            0.0
        } else {
            t.bytes_in as f64 * 1e3 / time_ns as f64
        },
        compute_busy_ns,
        ftl_busy_ns: t.commands * rig.machine().controller.foreground_ns(),
        flash_page_reads: t.reads,
        flash_page_writes: t.writes,
        file_write_ns,
        foreground,
        trace_hash: rig.trace_hash(),
    };
    match t.fault {
        None => Ok(run),
        Some(fault) => Err(ActiveFlashError::Program {
            fault,
            run: Box::new(run),
        }),
    }
}

/// Starts the foreground writing at `f` MB/s over the pages after the program's input
/// (`file_pages` of a `volume_bytes` file), if the device can write that fast and has room.
fn start_foreground_beside(
    rig: &mut Rig,
    f: f64,
    file_pages: u64,
    volume_bytes: u64,
) -> Result<(), ActiveFlashError> {
    check_write_ceiling(rig, f)?;
    if file_pages >= rig.user_pages() {
        return Err(ActiveFlashError::VolumeTooLarge {
            volume_bytes,
            user_bytes: (rig.user_pages() - 1) * PAGE_BYTES as u64,
        });
    }
    rig.start_foreground_over(file_pages..rig.user_pages(), u64::MAX, Some(f), 0);
    Ok(())
}

/// What the foreground writing at `requested_mb_s` beside the program achieved.
fn foreground_run(machine: &Machine, requested_mb_s: f64) -> ForegroundRun {
    let fg = machine.fg.as_ref().expect("a foreground ran");
    let span_ns = fg.end.since(fg.start).as_ns().max(1);
    ForegroundRun {
        requested_mb_s,
        achieved_mb_s: (fg.completed * PAGE_BYTES as u64) as f64 * 1e3 / span_ns as f64,
        writes: fg.completed,
        latency_us_mean: fg.latency.mean_ns() / 1e3,
        latency_us_max: fg.latency.max_ns() as f64 / 1e3,
    }
}

impl ProgramTask {
    /// The task of `program` over the `pages` of a `len_bytes` file, starting now, its output
    /// appended at the rig's log.
    fn new(
        rig: &Rig,
        cfg: &ActiveFlashConfig,
        program: Box<dyn StreamProgram>,
        len_bytes: u64,
        pages: u64,
    ) -> ProgramTask {
        let now = rig.now();
        let chunk_pages = u64::from(cfg.extent_pages);
        ProgramTask {
            program,
            writer: FlitWriter::new(),
            len_bytes,
            pages,
            chunk_pages,
            chunks: pages.div_ceil(chunk_pages).max(1),
            io_depth: cfg.controller_io_depth,
            io_inflight: 0,
            next_read: 0,
            arrived: BTreeMap::new(),
            next_chunk: 0,
            computing: None,
            chunks_computed: 0,
            backlog: VecDeque::new(),
            out_first: rig.machine().log_next,
            out_next: rig.machine().log_next,
            out_end: rig.machine().log_end,
            bytes_in: 0,
            bytes_written: 0,
            instructions: 0.0,
            commands: 0,
            reads: 0,
            writes: 0,
            fault: None,
            started: now,
            last_at: now,
        }
    }
}
