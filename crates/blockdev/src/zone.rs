//! The zoned command set's host-visible types (NVMe ZNS, TP4053; STANDARDS §3.2): zone
//! states, Report Zones filters, Zone Management Send actions, zone descriptors, and the zone
//! commands with their replies. They live here, beside [`crate::BlockRequest`], so that every
//! layer between a host and a zoned drive (the NVMe front end, a host-side mapping) can carry
//! them without depending on the drive; the zone state machine itself is the FTL's
//! (`nearflash_ftl::zns`).

use crate::IoError;
use nearflash_sim::SimTime;

/// A zone's state (ZNS "Zone State" field, upper nibble of ZS).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ZoneState {
    Empty,
    ImplicitlyOpen,
    ExplicitlyOpen,
    Closed,
    ReadOnly,
    Full,
    Offline,
}

impl ZoneState {
    /// The spec's state code (STANDARDS §3.2).
    pub fn code(self) -> u8 {
        match self {
            ZoneState::Empty => 0x1,
            ZoneState::ImplicitlyOpen => 0x2,
            ZoneState::ExplicitlyOpen => 0x3,
            ZoneState::Closed => 0x4,
            ZoneState::ReadOnly => 0xD,
            ZoneState::Full => 0xE,
            ZoneState::Offline => 0xF,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ZoneState::Empty => "empty",
            ZoneState::ImplicitlyOpen => "implicitly open",
            ZoneState::ExplicitlyOpen => "explicitly open",
            ZoneState::Closed => "closed",
            ZoneState::ReadOnly => "read-only",
            ZoneState::Full => "full",
            ZoneState::Offline => "offline",
        }
    }

    pub fn is_open(self) -> bool {
        matches!(self, ZoneState::ImplicitlyOpen | ZoneState::ExplicitlyOpen)
    }

    /// Open or Closed: the zone holds an active resource.
    pub fn is_active(self) -> bool {
        self.is_open() || self == ZoneState::Closed
    }
}

/// The Report Zones filter (Zone Receive Action Specific field: 0 all, 1 Empty, 2
/// Implicitly Open, 3 Explicitly Open, 4 Closed, 5 Full, 6 Read Only, 7 Offline).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneFilter {
    All,
    Only(ZoneState),
}

impl ZoneFilter {
    pub fn matches(self, s: ZoneState) -> bool {
        match self {
            ZoneFilter::All => true,
            ZoneFilter::Only(want) => want == s,
        }
    }

    /// The filter for a Report Zones filter value, `None` for a reserved value.
    pub fn from_code(c: u8) -> Option<ZoneFilter> {
        Some(match c {
            0 => ZoneFilter::All,
            1 => ZoneFilter::Only(ZoneState::Empty),
            2 => ZoneFilter::Only(ZoneState::ImplicitlyOpen),
            3 => ZoneFilter::Only(ZoneState::ExplicitlyOpen),
            4 => ZoneFilter::Only(ZoneState::Closed),
            5 => ZoneFilter::Only(ZoneState::Full),
            6 => ZoneFilter::Only(ZoneState::ReadOnly),
            7 => ZoneFilter::Only(ZoneState::Offline),
            _ => return None,
        })
    }
}

/// A Zone Management Send action (STANDARDS §3.2: Close 1, Finish 2, Open 3, Reset 4,
/// Offline 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneAction {
    Close,
    Finish,
    Open,
    Reset,
    Offline,
}

impl ZoneAction {
    pub fn code(self) -> u8 {
        match self {
            ZoneAction::Close => 1,
            ZoneAction::Finish => 2,
            ZoneAction::Open => 3,
            ZoneAction::Reset => 4,
            ZoneAction::Offline => 5,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ZoneAction::Close => "close",
            ZoneAction::Finish => "finish",
            ZoneAction::Open => "open",
            ZoneAction::Reset => "reset",
            ZoneAction::Offline => "offline",
        }
    }
}

/// One zone as Report Zones describes it (the 64-byte descriptor's fields; sectors are
/// 512-byte LBAs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoneDescriptor {
    pub zone: u32,
    pub state: ZoneState,
    /// ZSLBA.
    pub start_sector: u64,
    /// ZCAP.
    pub capacity_sectors: u64,
    /// WP (the zone's end once Full, as FEMU reports it).
    pub wp_sector: u64,
    /// ZA bit ZFC: the controller finished the zone (its media ran out before the capacity).
    pub finished_by_controller: bool,
}

/// A command of the zoned command set.
#[derive(Clone, Debug)]
pub enum ZoneCommand {
    /// Zone Append to the zone starting at `zone_start_sector`; the completion says where
    /// the data landed. `data` is the payload in functional fidelity (empty otherwise).
    Append {
        zone_start_sector: u64,
        len_bytes: u64,
        data: Vec<u8>,
    },
    /// Zone Management Send: `action` on the zone starting at `zone_start_sector`.
    Send {
        zone_start_sector: u64,
        action: ZoneAction,
    },
    /// Zone Management Receive, Report Zones: at most `limit` descriptors of the zones from
    /// the one holding `from_sector` on that match `filter`.
    Report {
        from_sector: u64,
        filter: ZoneFilter,
        limit: usize,
    },
}

/// Opcodes of the zoned command set (STANDARDS §3.2, from FEMU's `hw/femu/nvme.h`).
pub const OPCODE_ZONE_MANAGEMENT_SEND: u8 = 0x79;
pub const OPCODE_ZONE_MANAGEMENT_RECEIVE: u8 = 0x7A;
pub const OPCODE_ZONE_APPEND: u8 = 0x7D;

/// Bytes of one zone descriptor in a Report Zones answer, and of the report's header (the
/// zone count, padded): 64 each (ZNS; FEMU's `NvmeZoneDescr` and `NvmeZoneReportHeader`).
pub const ZONE_DESCRIPTOR_BYTES: u64 = 64;
pub const ZONE_REPORT_HEADER_BYTES: u64 = 64;

impl ZoneCommand {
    /// The command's NVMe opcode.
    pub fn opcode(&self) -> u8 {
        match self {
            ZoneCommand::Append { .. } => OPCODE_ZONE_APPEND,
            ZoneCommand::Send { .. } => OPCODE_ZONE_MANAGEMENT_SEND,
            ZoneCommand::Report { .. } => OPCODE_ZONE_MANAGEMENT_RECEIVE,
        }
    }

    /// Host data the controller moves in before the command runs (an append's payload).
    pub fn inbound_bytes(&self) -> u64 {
        match self {
            ZoneCommand::Append { len_bytes, .. } => *len_bytes,
            ZoneCommand::Send { .. } | ZoneCommand::Report { .. } => 0,
        }
    }
}

impl ZoneReply {
    /// Data the controller moves up to the host with the answer: a report's header and
    /// descriptors (an append's assigned LBA rides in the completion entry itself).
    pub fn outbound_bytes(&self) -> u64 {
        match self {
            ZoneReply::Report(list) => {
                ZONE_REPORT_HEADER_BYTES + ZONE_DESCRIPTOR_BYTES * list.len() as u64
            }
            ZoneReply::Done | ZoneReply::Appended { .. } => 0,
        }
    }
}

#[derive(Clone, Debug)]
pub struct ZoneRequest {
    pub id: u64,
    pub cmd: ZoneCommand,
}

/// What a zone command answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZoneReply {
    Done,
    /// The first sector the append was written to (the CQE's assigned LBA).
    Appended {
        sector: u64,
    },
    Report(Vec<ZoneDescriptor>),
}

#[derive(Clone, Debug)]
pub struct ZoneCompletion {
    pub id: u64,
    pub submitted: SimTime,
    pub completed: SimTime,
    pub result: Result<ZoneReply, IoError>,
}
