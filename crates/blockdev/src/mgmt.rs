//! Flexible Data Placement's management commands as a host sends them (NVMe TP4146, in NVMe
//! Base 2.1+; STANDARDS §3.3): I/O Management Receive (Reclaim Unit Handle Status), I/O
//! Management Send (Reclaim Unit Handle Update) and Get Log Page for the FDP logs (0x20
//! configurations, 0x21 reclaim unit handle usage, 0x22 statistics, 0x23 events), and Set /
//! Get Features for the Flexible Data Placement (0x1D) and FDP Events (0x1E) features. They live
//! here, beside [`crate::BlockRequest`], so that the layers between a host and the drive (the
//! NVMe front end, the DRAM write buffer) carry them without depending on the FTL, which
//! answers them.

use nearflash_sim::SimTime;
use thiserror::Error;

/// Opcodes (STANDARDS §3.3 for the two I/O Management commands, from FEMU's `nvme.h`; Get Log
/// Page is the admin command set's 0x02, `NVME_ADM_CMD_GET_LOG_PAGE` in the same header).
pub const OPCODE_GET_LOG_PAGE: u8 = 0x02;
pub const OPCODE_IO_MANAGEMENT_RECEIVE: u8 = 0x12;
pub const OPCODE_IO_MANAGEMENT_SEND: u8 = 0x1D;
/// Set Features and Get Features, admin opcodes 0x09 and 0x0A (confirmed: QEMU's and Linux's
/// `nvme_admin_set_features` / `nvme_admin_get_features`).
pub const OPCODE_SET_FEATURES: u8 = 0x09;
pub const OPCODE_GET_FEATURES: u8 = 0x0A;

/// Feature Identifiers FDP defines (STANDARDS §3.3 from FEMU's `nvme.h`; confirmed by Linux's
/// `NVME_FEAT_FDP` = 0x1d, `NVME_FEAT_FDP_EVENTS` = 0x1e and QEMU's `NVME_FDP_MODE`,
/// `NVME_FDP_EVENTS`): Flexible Data Placement (endurance group scope: FDP Enable and the FDP
/// Configuration Index) and FDP Events (per placement handle: which event types are logged).
pub const FID_FDP: u8 = 0x1D;
pub const FID_FDP_EVENTS: u8 = 0x1E;

/// Bytes of one event type in a Set Features FDP Events' data (NOET of them; QEMU's
/// `nvme_set_feature_fdp_events` reads one byte per type).
pub const EVENT_TYPE_BYTES: u64 = 1;

/// The Management Operation of both I/O Management commands that FDP defines: Reclaim Unit
/// Handle Status (Receive) and Reclaim Unit Handle Update (Send) (STANDARDS §3.3; FEMU's
/// `NVME_IOMR_MO_RUH_STATUS`, `NVME_IOMS_MO_RUH_UPDATE`).
pub const MO_RUH: u8 = 0x01;

/// Bytes of one Placement Identifier in a Reclaim Unit Handle Update's data (16 bits).
pub const PID_BYTES: u64 = 2;

/// A management command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MgmtCommand {
    /// Get Log Page of log `lid`; `lsp` is its log specific field (for the events log 0x23,
    /// bit 0 Host Events, as QEMU's `nvme_fdp_events` (`host_events = lsp & 0x1`) and libnvme's
    /// `nvme_get_log_fdp_events` (`host_events ? 0x1 : 0x0`) write it: 1 = the host's events,
    /// 0 = the controller's).
    GetLogPage { lid: u8, lsp: u8 },
    /// I/O Management Receive with management operation `mo`.
    IoManagementReceive { mo: u8 },
    /// I/O Management Send with management operation `mo` and its Placement Identifiers.
    IoManagementSend { mo: u8, pids: Vec<u16> },
    /// Set Features, Flexible Data Placement (FID 0x1D): CDW12 bit 0 FDP Enable (FDPE), bits
    /// 15:8 FDP Configuration Index (FDPCIDX) (field positions assumed, from nvme-cli's `fdp`
    /// plugin and QEMU's `nvme_get_feature_fdp`, not from the specification's text).
    SetFdp { enable: bool, config_index: u8 },
    /// Get Features, Flexible Data Placement: the current state in the completion's Dword 0
    /// (bit 0 FDPE, bits 15:8 FDPCIDX; [`MgmtCommand::answer_in_cqe`]).
    GetFdp,
    /// Set Features, FDP Events (FID 0x1E): CDW11 bits 15:0 the placement handle (PHNDL), bits
    /// 23:16 the number of event types (NOET); CDW12 bit 0 enables (FDPEE) or disables the
    /// event types the data lists, one byte each (QEMU's `nvme_set_feature_fdp_events`).
    SetFdpEvents {
        handle: u16,
        enable: bool,
        types: Vec<u8>,
    },
    /// Get Features, FDP Events (CDW11 bits 15:0 the placement handle, bits 23:16 the Number
    /// of Event Types, NOET, as Set Features' — QEMU's `nvme_get_feature_fdp_events`): a
    /// 2-byte descriptor (the type, then its attributes: bit 0 = enabled) for each of the
    /// first NOET event types the drive supports, in type order, the buffer's NOET
    /// descriptors zero past them; the completion's Dword 0 holds how many it returned. NOET 0
    /// is Invalid Field.
    GetFdpEvents { handle: u16, noet: u8 },
}

impl MgmtCommand {
    pub fn opcode(&self) -> u8 {
        match self {
            MgmtCommand::GetLogPage { .. } => OPCODE_GET_LOG_PAGE,
            MgmtCommand::IoManagementReceive { .. } => OPCODE_IO_MANAGEMENT_RECEIVE,
            MgmtCommand::IoManagementSend { .. } => OPCODE_IO_MANAGEMENT_SEND,
            MgmtCommand::SetFdp { .. } | MgmtCommand::SetFdpEvents { .. } => OPCODE_SET_FEATURES,
            MgmtCommand::GetFdp | MgmtCommand::GetFdpEvents { .. } => OPCODE_GET_FEATURES,
        }
    }

    /// The answer is the completion's Dword 0, not data moved into host memory (Get Features of
    /// a feature whose value fits in it).
    pub fn answer_in_cqe(&self) -> bool {
        matches!(self, MgmtCommand::GetFdp)
    }

    /// Host data the controller moves in before the command runs (an update's identifiers).
    pub fn inbound_bytes(&self) -> u64 {
        match self {
            MgmtCommand::IoManagementSend { pids, .. } => PID_BYTES * pids.len() as u64,
            MgmtCommand::SetFdpEvents { types, .. } => EVENT_TYPE_BYTES * types.len() as u64,
            MgmtCommand::GetLogPage { .. }
            | MgmtCommand::IoManagementReceive { .. }
            | MgmtCommand::SetFdp { .. }
            | MgmtCommand::GetFdp
            | MgmtCommand::GetFdpEvents { .. } => 0,
        }
    }
}

#[derive(Clone, Debug)]
pub struct MgmtRequest {
    pub id: u64,
    pub cmd: MgmtCommand,
}

/// Why a management command was refused: the NVMe status it completes with.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum MgmtStatus {
    /// The namespace does not take the opcode (generic status 0x01).
    #[error("invalid command opcode {opcode:#04x}: the drive does not offer it")]
    InvalidOpcode { opcode: u8 },
    /// Invalid Field in Command (generic status 0x02): FDP not enabled, an unknown
    /// management operation, a Placement Identifier that names no placement handle.
    #[error("invalid field in command: {reason}")]
    InvalidField { reason: String },
    /// Invalid Log Page (command specific status 0x09): a log the drive does not offer.
    #[error("invalid log page {lid:#04x}")]
    InvalidLogPage { lid: u8 },
    /// Command Sequence Error (generic status 0x0C): Set Features FDP while a namespace exists
    /// in the endurance group (the specification's rule as QEMU's `nvme_set_feature_fdp`
    /// applies it; here namespace 1 always exists).
    #[error("command sequence error: {reason}")]
    CommandSequenceError { reason: String },
    /// FDP Disabled (command specific status 0x29, QEMU's `NVME_FDP_DISABLED`): a command that
    /// needs FDP enabled on a drive without it — the FDP Events feature, I/O Management Send
    /// and Receive (Reclaim Unit Handle Update and Status), and the RUH Usage, Statistics and
    /// Events logs (0x21–0x23); the Configurations log (0x20) is answered either way, as
    /// QEMU's `nvme_fdp_confs` does, so a host can read what enabling would give.
    #[error("flexible data placement is disabled")]
    FdpDisabled,
}

impl MgmtStatus {
    /// The NVMe status code.
    pub fn code(&self) -> u8 {
        match self {
            MgmtStatus::InvalidOpcode { .. } => 0x01,
            MgmtStatus::InvalidField { .. } => 0x02,
            MgmtStatus::InvalidLogPage { .. } => 0x09,
            MgmtStatus::CommandSequenceError { .. } => 0x0C,
            MgmtStatus::FdpDisabled => 0x29,
        }
    }
}

/// A management command's answer: the bytes it returns (a log page, the status
/// descriptors, a Get Features' data or its completion Dword 0 as 4 little-endian bytes; none
/// for an update or a Set Features), and the completion entry's Dword 0.
#[derive(Clone, Debug)]
pub struct MgmtCompletion {
    pub id: u64,
    pub submitted: SimTime,
    pub completed: SimTime,
    pub result: Result<Vec<u8>, MgmtStatus>,
    /// The completion queue entry's Dword 0 (command specific): Get Features FDP's value, Get
    /// Features FDP Events' number of descriptors returned; 0 otherwise and on an error.
    pub dword0: u32,
}
