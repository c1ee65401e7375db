//! The flash translation layer every simulated SSD uses: a sans-IO block device made of
//! flash (`Device`, driven by the simulation's event queue), with two mapping modes
//! (`ftl.mapping`) — page-level mapping of 4 KiB units with a cached mapping table (DFTL), the
//! mode of the real-drive presets, and FlashAbacus's page-group log-structured mapping held in
//! a bounded scratchpad (Flashvisor, seed 000 §4.3) — garbage collection, wear-leveling,
//! bad-block remapping and mapping checkpoints (FlashAbacus's Storengine, seed 000 "Storage
//! management"), a hybrid SLC write cache, and power-cut recovery from the checkpoint plus a
//! scan of what was written after it. Beside it: NVMe Flexible Data Placement on the
//! page-mapped drive (`fdp`, `[fdp]`) and the zoned namespace mode (`zns`, `[zns]`).

pub mod checkpoint;
pub mod config;
pub mod crashtest;
pub mod device;
pub mod fdp;
pub mod layout;
pub mod mapping;
pub mod oob;
pub mod recovery;
pub mod superblock;
pub mod testing;
pub mod zns;
pub use nearflash_blockdev::verify;

pub use config::{FtlConfig, GcPolicy, MappingMode, SlcCacheConfig};
pub use crashtest::{run_seed, summarize, CrashOutcome, CrashSummary, CrashTestConfig, CutPhase};
pub use device::{
    Device, Event, FlashWork, FtlStats, InflightRequest, MappingCacheStats, PageMapStats,
    RequestPhase, SlcOccupancy, SlcStats, EVENT_DESCRIPTOR_BYTES, EVENT_TYPES,
};
pub use layout::{Layout, Lgn, Lun, Pgn, Pun, SbId};
pub use nearflash_blockdev::{BlockCompletion, BlockOp, BlockRequest, IoError, SECTOR_BYTES};
