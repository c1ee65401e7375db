//! Host-visible commands and their completions, the contract between a host (or a workload
//! driver) and the device.
//!
//! Durability promise of a device without a volatile write cache (the FTL): a write's
//! completion is sent only after every page it touched has been programmed, so **every
//! acknowledged write survives a power cut** and reads back exactly. A flush completes once
//! every write submitted before it has been acknowledged (there is no volatile write cache to
//! drain, so it is an ordering barrier); FUA is implied. A device with a volatile write cache
//! (`crates/wcache`) promises less: see [`crate::BlockDevice`].
//! Trims are advisory: a trimmed range reads as zeros until a power cut, after which it may
//! read as zeros or as data the same logical page held before — never another page's data.

use nearflash_sim::SimTime;
use thiserror::Error;

/// Host sectors: requests are aligned to and sized in multiples of this.
pub const SECTOR_BYTES: u64 = 512;

/// A write's Data Placement directive (NVMe Flexible Data Placement, TP4146 in NVMe Base
/// 2.1+): directive type DTYPE 2 with the Placement Identifier in DSPEC. The identifier is
/// the namespace's placement handle (with RGIF > 0 its top bits name the reclaim group); the
/// drive decides what it means ([`crate::BlockDevice::submit_placed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PlacementDirective(pub u16);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BlockOp {
    Read,
    Write,
    Trim,
    Flush,
}

#[derive(Clone, Debug)]
pub struct BlockRequest {
    pub id: u64,
    pub op: BlockOp,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    /// Write payload in functional fidelity (`len_bytes` long); empty otherwise.
    pub data: Vec<u8>,
}

#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum IoError {
    #[error("request {offset_bytes}+{len_bytes} lies beyond the device's {capacity_bytes} logical bytes")]
    OutOfRange {
        offset_bytes: u64,
        len_bytes: u64,
        capacity_bytes: u64,
    },
    #[error("request {offset_bytes}+{len_bytes} is not aligned to {SECTOR_BYTES}-byte sectors or is empty")]
    Misaligned { offset_bytes: u64, len_bytes: u64 },
    #[error("write payload is {got} bytes, expected {expected}")]
    PayloadSize { got: u64, expected: u64 },
    #[error("device out of space: no superblock can be reclaimed")]
    NoSpace,
    #[error("integrity error: physical data failed its checksum or belongs to another page")]
    Integrity,
    /// A flash page of the request held more bit errors than the ECC corrects, after every
    /// read-retry step: the device returns this instead of the wrong data.
    #[error(
        "uncorrectable read: a flash page held more bit errors than ECC and read-retry correct"
    )]
    Uncorrectable,
    /// A zoned namespace refused the command (NVMe ZNS command-specific status).
    #[error(transparent)]
    Zone(#[from] ZoneStatus),
}

/// Why a zoned namespace refused a command: the command-specific status codes of NVMe ZNS
/// (TP4053; codes as FEMU's `hw/femu/nvme.h` spells them, `NVME_ZONE_*`, status code type 1).
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq, Hash)]
pub enum ZoneStatus {
    /// The write or append would cross the end of the zone's writable capacity (0xB8).
    #[error("zone boundary error: the write crosses the end of zone {zone}'s capacity")]
    BoundaryError { zone: u32 },
    /// The zone is Full (0xB9).
    #[error("zone {zone} is full")]
    ZoneIsFull { zone: u32 },
    /// The zone is Read Only (0xBA).
    #[error("zone {zone} is read-only")]
    ZoneIsReadOnly { zone: u32 },
    /// The zone is Offline (0xBB).
    #[error("zone {zone} is offline")]
    ZoneIsOffline { zone: u32 },
    /// A write not at the zone's write pointer, or an append not addressed to the zone's
    /// first LBA (0xBC).
    #[error("zone invalid write: zone {zone}'s write pointer is at sector {wp_sector}, the write starts at sector {sector}")]
    InvalidWrite {
        zone: u32,
        sector: u64,
        wp_sector: u64,
    },
    /// Opening the zone would exceed the maximum active resources (MAR) (0xBD).
    #[error("too many active zones: {active_max} already active")]
    TooManyActiveZones { active_max: u32 },
    /// Opening the zone would exceed the maximum open resources (MOR) and no implicitly
    /// open zone can be closed to admit it (0xBE).
    #[error("too many open zones: {open_max} already open")]
    TooManyOpenZones { open_max: u32 },
    /// The Zone Management Send action is not allowed from the zone's state (0xBF).
    #[error(
        "invalid zone state transition: {action} is not allowed on zone {zone}, which is {state}"
    )]
    InvalidStateTransition {
        zone: u32,
        action: &'static str,
        state: &'static str,
    },
    /// A Zone Append larger than the zone append size limit (ZASL): Invalid Field in Command
    /// (0x02), as FEMU answers it.
    #[error(
        "zone append of {len_bytes} bytes exceeds the zone append size limit of {zasl_bytes} bytes"
    )]
    AppendTooLarge { len_bytes: u64, zasl_bytes: u64 },
    /// A program failed on the zone's media; the zone turned Read Only (Write Fault).
    #[error("write fault: a program in zone {zone} failed and the zone is now read-only")]
    WriteFault { zone: u32 },
    /// Dataset Management (deallocate) on a zoned namespace: zoned data is freed by Zone
    /// Reset, not by trims (Invalid Field in Command).
    #[error("deallocate (trim) is not supported on a zoned namespace: reset the zone instead")]
    DeallocateUnsupported,
    /// The command addresses no zone of the namespace, or a zone command was sent to a
    /// conventional namespace.
    #[error("invalid zone: sector {sector} is not the first sector of a zone of this namespace")]
    InvalidZone { sector: u64 },
    /// A zone command (opcode 0x79, 0x7A or 0x7D) reached a namespace that is not zoned:
    /// Invalid Command Opcode (generic status 0x01), as a controller answers an opcode outside
    /// the namespace's command set.
    #[error("invalid command opcode {opcode:#04x}: the namespace is not zoned")]
    InvalidOpcode { opcode: u8 },
}

impl ZoneStatus {
    /// The NVMe status code: command specific (status code type 1) for the zone errors,
    /// generic 0x02 (Invalid Field in Command) for the rest, 0x80 (Write Fault, media
    /// errors) for a failed program.
    pub fn code(self) -> u8 {
        match self {
            ZoneStatus::BoundaryError { .. } => 0xB8,
            ZoneStatus::ZoneIsFull { .. } => 0xB9,
            ZoneStatus::ZoneIsReadOnly { .. } => 0xBA,
            ZoneStatus::WriteFault { .. } => 0x80,
            ZoneStatus::ZoneIsOffline { .. } => 0xBB,
            ZoneStatus::InvalidWrite { .. } => 0xBC,
            ZoneStatus::TooManyActiveZones { .. } => 0xBD,
            ZoneStatus::TooManyOpenZones { .. } => 0xBE,
            ZoneStatus::InvalidStateTransition { .. } => 0xBF,
            ZoneStatus::AppendTooLarge { .. }
            | ZoneStatus::InvalidZone { .. }
            | ZoneStatus::DeallocateUnsupported => 0x02,
            ZoneStatus::InvalidOpcode { .. } => 0x01,
        }
    }
}

#[derive(Clone, Debug)]
pub struct BlockCompletion {
    pub id: u64,
    pub op: BlockOp,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    pub submitted: SimTime,
    pub completed: SimTime,
    pub result: Result<(), IoError>,
    /// Read payload in functional fidelity.
    pub data: Vec<u8>,
}
