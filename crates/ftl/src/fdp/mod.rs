//! Flexible Data Placement (NVMe TP4146, in NVMe Base 2.1+; STANDARDS §3.3), switched on by
//! the preset's `[fdp]` table: the host tags writes with a placement handle, and the drive
//! keeps each handle's data in reclaim units of its own, so that data with one lifetime is
//! erased together and GC copies less.
//!
//! How the specification's terms land on the modelled drive (`crates/ftl/src/layout.rs`):
//!
//! - **Reclaim unit (RU)**: a superblock — one block on every channel × plane of one way,
//!   what GC erases at once. Its nominal size (RUNS) is its host data: pages per block ×
//!   page group bytes.
//! - **Reclaim group (RG)**: a set of whole ways (`fdp.reclaim_groups`), a disjoint set of
//!   dies with its own free superblocks, GC reserve and GC (`device/gc.rs`, as FEMU's
//!   `NvmeReclaimGroup` keeps a free RU list and GC thresholds per group).
//! - **Reclaim unit handle (RUH)**: a host lane of write points (`device/alloc.rs`). The
//!   specification has a handle reference one RU per reclaim group; here a handle has one
//!   open RU *per way* of the group, written in rotation. A superblock spans one way, and a
//!   handle confined to one way would program at 1/ways of the drive's bandwidth, which FDP
//!   drives, whose RUs span every die, do not. Isolation — no RU holds two handles' host
//!   data — is exact.
//! - **Placement handle**: placement handle `i` of the namespace is handle `i`. A write
//!   without a directive uses placement handle 0; one whose Placement Identifier names no
//!   handle too, and logs an Invalid Placement Identifier event.
//! - **Isolation**: GC copies an initially isolated handle's data into GC superblocks shared
//!   by all such handles; a persistently isolated handle's only into GC superblocks of its
//!   own (a GC lane per handle).
//!
//! The device side is in `device/fdp.rs`; the logs' layouts in `log.rs`.

pub mod config;
pub mod log;

pub use config::{FdpConfig, HandleType, HANDLES_MAX};
pub use log::{
    FdpConfiguration, FdpError, FdpEvent, FdpEventType, FdpStatisticsLog, HandleUsage, PlacementId,
    RuhStatus, EVENTS_MAX,
};

/// Which FDP log page to read (Get Log Page 0x20–0x23; the events log comes as the host's
/// events or the controller's, chosen by its log specific field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FdpLog {
    Configurations,
    RuhUsage,
    Statistics,
    HostEvents,
    ControllerEvents,
}

impl FdpLog {
    /// The log a Get Log Page of `lid` reads (the events log: the controller's events when
    /// its log specific field asks for them).
    pub fn from_lid(lid: u8, controller_events: bool) -> Option<FdpLog> {
        Some(match lid {
            log::LOG_CONFIGURATIONS => FdpLog::Configurations,
            log::LOG_RUH_USAGE => FdpLog::RuhUsage,
            log::LOG_STATISTICS => FdpLog::Statistics,
            log::LOG_EVENTS if controller_events => FdpLog::ControllerEvents,
            log::LOG_EVENTS => FdpLog::HostEvents,
            _ => return None,
        })
    }

    /// The log page identifier.
    pub fn lid(self) -> u8 {
        match self {
            FdpLog::Configurations => log::LOG_CONFIGURATIONS,
            FdpLog::RuhUsage => log::LOG_RUH_USAGE,
            FdpLog::Statistics => log::LOG_STATISTICS,
            FdpLog::HostEvents | FdpLog::ControllerEvents => log::LOG_EVENTS,
        }
    }
}

/// Bytes FDP adds to every mapping checkpoint (0 while off): each logical unit's handle,
/// the counters, and both event logs — what must survive a power cut.
pub fn checkpoint_bytes(cfg: &FdpConfig, logical_entries: u64) -> u64 {
    if !cfg.enabled {
        return 0;
    }
    logical_entries
        + COUNTERS_BYTES
        + u64::from(cfg.handles) * HANDLE_COUNTERS_BYTES
        + 2 * EVENT_RING_BYTES
}

/// The persisted counters: 8 of 8 bytes (see `device/fdp.rs`, `FdpStats`).
pub(crate) const COUNTERS_BYTES: u64 = 64;
/// Per handle: host bytes, media bytes, GC bytes copied.
pub(crate) const HANDLE_COUNTERS_BYTES: u64 = 24;
/// One persisted event.
pub(crate) const EVENT_BYTES: u64 = 16;
/// An event log: its count, then `EVENTS_MAX` events.
pub(crate) const EVENT_RING_BYTES: u64 = 4 + EVENTS_MAX as u64 * EVENT_BYTES;
