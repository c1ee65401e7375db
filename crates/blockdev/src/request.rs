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
