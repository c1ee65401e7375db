//! The standard offload sequence, timed command by command, and the host-only path it is
//! compared with (`nearflash cs run`).
//!
//! Offload: Load Program (in chunks), activate, create a range set of two ranges (input,
//! output), Memory Copy the input's LBAs into range 0, Execute, Memory Read the output.
//! The input is already on the drive (written before, not counted).
//!
//! Host-only: the host reads the input through its storage stack — NVMe reads of
//! `io_request_bytes`, `io_queue_depth` in flight, each costing its host core
//! `io_stack_request_ns` plus `copies_per_direction` copies (`crates/host`'s `HostConfig`) as
//! it completes — then runs the same program on its core (instructions × CPI ÷ clock).

use crate::config::CsConfig;
use crate::device::{Command, LBA_BYTES};
use crate::error::CommandError;
use crate::opcodes::{ProgramType, Status};
use crate::program::{run_detached, Chunk, Detached, KnownRun, Work};
use crate::rangeset::{RangeDescriptor, NSID_COMPUTE_FIRST, NSID_SLM};
use crate::session::{Session, SessionError};
use nearflash_host::HostConfig;
use nearflash_hw::compute::CoreSpec;
use nearflash_sim::{SimDuration, SimTime};

/// What to offload.
#[derive(Clone, Debug)]
pub struct Offload {
    pub ptype: ProgramType,
    pub program: Vec<u8>,
    /// Bytes of input on the NVM namespace, from LBA 0.
    pub input_bytes: u64,
    pub params: [u64; 2],
    /// The engine (compute namespace `NSID_COMPUTE_FIRST + engine`).
    pub engine: usize,
    /// Size of the output range (range 1).
    pub output_bytes: u64,
    /// Load Program chunk size.
    pub chunk_bytes: u64,
}

/// One command of the sequence.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub name: &'static str,
    pub detail: String,
    pub latency: SimDuration,
    pub status: Status,
}

#[derive(Clone, Debug, PartialEq)]
pub struct OffloadOutcome {
    pub steps: Vec<Step>,
    /// Execute Program's 64-bit return.
    pub result: u64,
    /// Memory Read of the output range's first `result` bytes (the examples' convention), at
    /// most the range.
    pub output: Vec<u8>,
    pub work: Work,
    pub log: Vec<u8>,
    pub total: SimDuration,
}

#[derive(Debug, thiserror::Error)]
pub enum OffloadError {
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("an input of {input_bytes} bytes is over the 4 GiB a memory range describes (its length is 32 bits)")]
    TooLarge { input_bytes: u64 },
    #[error("{step} failed with {status}: {source}")]
    Command {
        step: &'static str,
        status: Status,
        source: CommandError,
        /// The commands before it, and it.
        steps: Vec<Step>,
    },
}

fn lbas(bytes: u64) -> u64 {
    bytes.div_ceil(LBA_BYTES)
}

/// Runs the offload sequence on `s`.
pub fn offload(s: &mut Session, o: &Offload) -> Result<OffloadOutcome, OffloadError> {
    offload_with(s, o, &mut |_| {})
}

/// Runs the offload sequence on `s`, calling `before_execute` between Memory Copy and Execute
/// (`nearflash cs run` offers there the host's run computed ahead: [`known_run`]).
pub fn offload_with(
    s: &mut Session,
    o: &Offload,
    before_execute: &mut dyn FnMut(&mut Session),
) -> Result<OffloadOutcome, OffloadError> {
    let start = s.now();
    let mut steps = Vec::new();
    let mut call = |s: &mut Session, cmd: Command, detail: String| {
        let c = s.call(cmd)?;
        let step = Step {
            name: c.name,
            detail,
            latency: c.completed.since(c.submitted),
            status: c
                .result
                .as_ref()
                .map_or_else(CommandError::status, |_| Status::Success),
        };
        steps.push(step);
        match c.result.clone() {
            Ok(v) => Ok((v, c)),
            Err(source) => Err(OffloadError::Command {
                step: c.name,
                status: source.status(),
                source,
                steps: steps.clone(),
            }),
        }
    };
    let pind = 0;
    let chunk = o.chunk_bytes.max(4) as usize;
    let total = o.program.len() as u64;
    for (i, part) in o.program.chunks(chunk).enumerate() {
        let offset_bytes = (i * chunk) as u64;
        call(
            s,
            Command::LoadProgram(Chunk {
                pind,
                ptype: o.ptype,
                puid: 0x6e66_6373,
                size_bytes: total,
                offset_bytes,
                data: part.to_vec(),
            }),
            format!("{} bytes at {offset_bytes} of {total}", part.len()),
        )?;
    }
    call(
        s,
        Command::ActivateProgram {
            pind,
            activate: true,
        },
        format!("program {pind} ({})", o.ptype.name()),
    )?;
    let input_len = lbas(o.input_bytes) * LBA_BYTES;
    let input_range_bytes = u32::try_from(o.input_bytes).map_err(|_| OffloadError::TooLarge {
        input_bytes: o.input_bytes,
    })?;
    let out_len = o.output_bytes.div_ceil(4) * 4;
    let nsid = NSID_COMPUTE_FIRST + o.engine as u32;
    let (rsid, _) = call(
        s,
        Command::CreateRangeSet {
            nsid,
            ranges: vec![
                RangeDescriptor {
                    nsid: NSID_SLM,
                    len_bytes: input_range_bytes,
                    start_bytes: 0,
                },
                RangeDescriptor {
                    nsid: NSID_SLM,
                    len_bytes: out_len as u32,
                    start_bytes: input_len,
                },
            ],
        },
        format!("input {} bytes, output {out_len} bytes", o.input_bytes),
    )?;
    call(
        s,
        Command::CopyFromNvm {
            dest_bytes: 0,
            sources: vec![(0, lbas(o.input_bytes))],
        },
        format!("LBAs 0+{} -> SLM 0", lbas(o.input_bytes)),
    )?;
    before_execute(s);
    let (result, exec) = call(
        s,
        Command::Execute {
            nsid,
            pind,
            rsid: rsid as u16,
            cparam: o.params,
        },
        format!("engine {} (namespace {nsid})", o.engine),
    )?;
    let read = result.min(out_len).div_ceil(4).max(1) * 4;
    let (_, got) = call(
        s,
        Command::MemoryRead {
            offset_bytes: input_len,
            len_bytes: read,
        },
        format!("{read} bytes"),
    )?;
    let mut output = got.data;
    output.truncate(result.min(out_len) as usize);
    Ok(OffloadOutcome {
        total: s.now().since(start),
        steps,
        result,
        output,
        work: exec.work,
        log: exec.log,
    })
}

/// The host-only path's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct HostOutcome {
    /// From the first read's submission to the last request's stack work on the host core.
    pub read: SimDuration,
    /// The program on the host core.
    pub compute: SimDuration,
    pub total: SimDuration,
    pub result: u64,
    pub output: Vec<u8>,
    pub work: Work,
}

/// The host's run of the program: its return, work and output range.
pub type HostRun = Result<Detached, CommandError>;

/// The host's run over `input` (computed by [`host_run`]) as a run the device may answer its
/// Execute with instead of running the program again (`Programs::expect`: used only if the
/// device's run is this very run — same program, parameters, budget, range lengths and bytes).
/// None for a run that failed or changed its input.
pub fn known_run(
    cfg: &CsConfig,
    o: &Offload,
    input: &std::sync::Arc<Vec<u8>>,
    run: &HostRun,
) -> Option<KnownRun> {
    let d = run.as_ref().ok().filter(|d| d.input_unchanged)?;
    Some(KnownRun {
        ptype: o.ptype,
        program: o.program.clone(),
        params: o.params,
        instructions_max: host_budget(cfg, o),
        input: std::sync::Arc::clone(input),
        output: d.output.clone(),
        ran: d.ran.clone(),
    })
}

/// The budget the device gives a run over the input and an output range of `output_bytes`.
fn host_budget(cfg: &CsConfig, o: &Offload) -> u64 {
    cfg.instructions_base.saturating_add(
        cfg.instructions_per_range_byte
            .saturating_mul(o.input_bytes + o.output_bytes),
    )
}

/// The host-only path's program run over `input`, under the budget the device would give it.
/// Pure — no simulation — so a caller may compute it ahead, on another thread, while the
/// offload runs (`nearflash cs run` does), and hand it to [`host_only`].
pub fn host_run(cfg: &CsConfig, o: &Offload, input: &[u8]) -> HostRun {
    run_detached(
        o.ptype,
        &o.program,
        input,
        o.output_bytes,
        o.params,
        host_budget(cfg, o),
    )
}

/// Runs the host-only path on `s` for the same program and input: the host reads the input
/// through its stack, then runs the program on a host core. `ahead` is the run computed
/// beforehand over the bytes `ahead.0`; it is used only if the host read exactly those bytes,
/// and computed here otherwise.
pub fn host_only(
    s: &mut Session,
    o: &Offload,
    host: &HostConfig,
    ahead: Option<(&[u8], HostRun)>,
) -> Result<HostOutcome, OffloadError> {
    let cfg = s.device().config().clone();
    let core = CoreSpec::new(cfg.host_clock_mhz, cfg.host_cpi);
    let start = s.now();
    let (data, times) = s.read_nvm(
        0,
        lbas(o.input_bytes) * LBA_BYTES,
        host.io_request_bytes,
        host.io_queue_depth,
    )?;
    // Each completion costs the host core its stack work and its copies, in the order the
    // requests complete.
    let pages = host.io_request_bytes.div_ceil(4096);
    let per_request = SimDuration::from_ns(
        host.io_stack_request_ns
            + u64::from(host.copies_per_direction) * pages * host.copy_ns_per_4kib,
    );
    let core_free = times
        .iter()
        .fold(start, |free: SimTime, &t| free.max(t) + per_request);
    let input = &data[..o.input_bytes as usize];
    let run = match ahead {
        Some((over, run)) if over == input => run,
        _ => host_run(&cfg, o, input),
    };
    let Detached {
        ran, output: out, ..
    } = run.map_err(|source| OffloadError::Command {
        step: "host run",
        status: source.status(),
        source,
        steps: Vec::new(),
    })?;
    let compute = core.duration(ran.work.instructions as f64);
    let mut output = out;
    output.truncate(ran.result.min(o.output_bytes) as usize);
    Ok(HostOutcome {
        read: core_free.since(start),
        compute,
        total: core_free.since(start) + compute,
        result: ran.result,
        output,
        work: ran.work,
    })
}
