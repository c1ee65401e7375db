//! Why a command completed with an error status: one variant per cause, each naming what was
//! wrong, each mapped to its NVMe status (`opcodes::Status`). A command error is that
//! command's alone — the device carries on.

use crate::ebpf::elf::ElfError;
use crate::ebpf::vm::Fault;
use crate::opcodes::Status;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("namespace {nsid} does not exist or is not a {wanted} namespace")]
    InvalidNamespace { nsid: u32, wanted: &'static str },
    #[error("program index {pind} is not a slot (the device has {slots})")]
    BadProgramIndex { pind: u16, slots: u16 },
    #[error("program slot {pind} holds no complete program")]
    NoProgram { pind: u16 },
    #[error("program slot {pind} is activated; deactivate it first")]
    ProgramInUse { pind: u16 },
    #[error("program of {bytes} bytes is over the device's MAXPB of {bytes_max} bytes")]
    ProgramTooBig { bytes: u64, bytes_max: u64 },
    #[error("Load Program chunk: {reason}")]
    BadChunk { reason: String },
    #[error("program {pind}: not a {ptype} program: {reason}")]
    InvalidProgram {
        pind: u16,
        ptype: &'static str,
        reason: String,
    },
    #[error("program {pind} ({ptype}): {source}")]
    BadObject {
        pind: u16,
        ptype: &'static str,
        source: ElfError,
    },
    #[error("{active} programs are activated, the device's MAXACT")]
    TooManyActive { active: u16 },
    #[error("program {pind} is not activated")]
    NotActivated { pind: u16 },
    #[error("memory range set {rsid} does not exist")]
    NoRangeSet { rsid: u16 },
    #[error("memory range set {rsid} was made for compute namespace {owner}, not {nsid}")]
    RangeSetOwner { rsid: u16, owner: u32, nsid: u32 },
    #[error("{ranges} ranges are over the device's MAXMEMR of {ranges_max}")]
    TooManyRanges { ranges: usize, ranges_max: u16 },
    #[error("{sets} range sets exist, the device's MAXMEMRS")]
    TooManyRangeSets { sets: u16 },
    #[error("range {index}: namespace {nsid} is not reachable from compute namespace {compute} (only memory namespaces are)")]
    Unreachable {
        index: usize,
        nsid: u32,
        compute: u32,
    },
    #[error("range {index}: {len_bytes} bytes at {start_bytes}: {reason}")]
    BadRange {
        index: usize,
        start_bytes: u64,
        len_bytes: u64,
        reason: String,
    },
    #[error("memory namespace access of {len_bytes} bytes at {offset_bytes}: {reason}")]
    BadMemoryAccess {
        offset_bytes: u64,
        len_bytes: u64,
        reason: String,
    },
    #[error("LBAs {slba}+{nlb} are outside the NVM namespace of {lbas} LBAs")]
    LbaOutOfRange { slba: u64, nlb: u64, lbas: u64 },
    #[error("the drive failed a Memory Copy read: {0}")]
    Media(String),
    #[error("program {pind} stopped: {fault}")]
    EbpfFault { pind: u16, fault: Fault },
    #[error("program {pind} stopped: {source}")]
    WasmFault {
        pind: u16,
        source: nearflash_wasm::RunError,
    },
    #[error("program {pind} exited with code {code}: {diagnostics}")]
    WasmExit {
        pind: u16,
        code: i32,
        diagnostics: String,
    },
    #[error("program {pind} wrote {bytes} bytes of output, over range 1's {bytes_max}")]
    OutputOverflow {
        pind: u16,
        bytes: u64,
        bytes_max: u64,
    },
}

impl CommandError {
    /// The status the command completes with.
    pub fn status(&self) -> Status {
        use nearflash_wasm::RunError as W;
        match self {
            CommandError::InvalidNamespace { .. } => Status::InvalidNamespace,
            CommandError::BadProgramIndex { .. } => Status::InvalidProgramIndex,
            CommandError::NoProgram { .. } => Status::NoProgram,
            CommandError::ProgramInUse { .. } => Status::ProgramInUse,
            CommandError::ProgramTooBig { .. } => Status::ProgramTooBig,
            CommandError::BadChunk { .. } => Status::InvalidField,
            CommandError::InvalidProgram { .. } | CommandError::BadObject { .. } => {
                Status::InvalidProgramData
            }
            CommandError::TooManyActive { .. } => Status::MaxProgramsActivated,
            CommandError::NotActivated { .. } => Status::ProgramNotActivated,
            CommandError::NoRangeSet { .. } | CommandError::RangeSetOwner { .. } => {
                Status::InvalidMemoryRangeSetId
            }
            CommandError::TooManyRanges { .. } => Status::MaxMemoryRangesExceeded,
            CommandError::TooManyRangeSets { .. } => Status::MaxMemoryRangeSetsExceeded,
            CommandError::Unreachable { .. } => Status::MemoryRangeNotReachable,
            CommandError::BadRange { .. } | CommandError::BadMemoryAccess { .. } => {
                Status::InvalidField
            }
            CommandError::LbaOutOfRange { .. } => Status::LbaOutOfRange,
            CommandError::Media(_) => Status::InternalError,
            CommandError::EbpfFault { fault, .. } => match fault {
                Fault::OutOfBudget { .. } => Status::ProgramTimeExceeded,
                Fault::OutOfBounds { .. } | Fault::HelperArgument { .. } => {
                    Status::ProgramMemoryViolation
                }
                _ => Status::ProgramFault,
            },
            CommandError::WasmFault { source, .. } => match source {
                W::OutOfFuel { .. } => Status::ProgramTimeExceeded,
                W::OutOfBounds { .. } | W::MemoryLimit { .. } | W::OutputLimit { .. } => {
                    Status::ProgramMemoryViolation
                }
                _ => Status::ProgramFault,
            },
            CommandError::WasmExit { .. } => Status::ProgramFault,
            CommandError::OutputOverflow { .. } => Status::ProgramMemoryViolation,
        }
    }
}
