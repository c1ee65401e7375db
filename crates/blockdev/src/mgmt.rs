//! Flexible Data Placement's management commands as a host sends them (NVMe TP4146, in NVMe
//! Base 2.1+; STANDARDS §3.3): I/O Management Receive (Reclaim Unit Handle Status), I/O
//! Management Send (Reclaim Unit Handle Update) and Get Log Page for the FDP logs (0x20
//! configurations, 0x21 reclaim unit handle usage, 0x22 statistics, 0x23 events). They live
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

/// The Management Operation of both I/O Management commands that FDP defines: Reclaim Unit
/// Handle Status (Receive) and Reclaim Unit Handle Update (Send) (STANDARDS §3.3; FEMU's
/// `NVME_IOMR_MO_RUH_STATUS`, `NVME_IOMS_MO_RUH_UPDATE`).
pub const MO_RUH: u8 = 0x01;

/// Bytes of one Placement Identifier in a Reclaim Unit Handle Update's data (16 bits).
pub const PID_BYTES: u64 = 2;

/// A management command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MgmtCommand {
    /// Get Log Page of log `lid`; `lsp` is its log specific field (for the events log 0x23:
    /// 1 = the controller's events, 0 = the host's).
    GetLogPage { lid: u8, lsp: u8 },
    /// I/O Management Receive with management operation `mo`.
    IoManagementReceive { mo: u8 },
    /// I/O Management Send with management operation `mo` and its Placement Identifiers.
    IoManagementSend { mo: u8, pids: Vec<u16> },
}

impl MgmtCommand {
    pub fn opcode(&self) -> u8 {
        match self {
            MgmtCommand::GetLogPage { .. } => OPCODE_GET_LOG_PAGE,
            MgmtCommand::IoManagementReceive { .. } => OPCODE_IO_MANAGEMENT_RECEIVE,
            MgmtCommand::IoManagementSend { .. } => OPCODE_IO_MANAGEMENT_SEND,
        }
    }

    /// Host data the controller moves in before the command runs (an update's identifiers).
    pub fn inbound_bytes(&self) -> u64 {
        match self {
            MgmtCommand::IoManagementSend { pids, .. } => PID_BYTES * pids.len() as u64,
            MgmtCommand::GetLogPage { .. } | MgmtCommand::IoManagementReceive { .. } => 0,
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
}

impl MgmtStatus {
    /// The NVMe status code.
    pub fn code(&self) -> u8 {
        match self {
            MgmtStatus::InvalidOpcode { .. } => 0x01,
            MgmtStatus::InvalidField { .. } => 0x02,
            MgmtStatus::InvalidLogPage { .. } => 0x09,
        }
    }
}

/// A management command's answer: the bytes it returns (a log page, the status
/// descriptors; none for an update).
#[derive(Clone, Debug)]
pub struct MgmtCompletion {
    pub id: u64,
    pub submitted: SimTime,
    pub completed: SimTime,
    pub result: Result<Vec<u8>, MgmtStatus>,
}
